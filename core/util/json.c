/* core/util/json.c - recursive-descent JSON parser that accepts what the
 * reference's iterator accepts and fails with its texts (see json.h).
 *
 * The structure follows the reference's control flow on purpose, because
 * the wrapper of an error message ("Failed to parse object/array") is the
 * container whose element-reading step failed: reading one element of a
 * container (next_element) covers its key, its value if primitive, and the
 * ',' or bracket after it; closing a nested container also checks what
 * follows it in the parent, inside the nested container's own step. */
#include "util/json.h"

#include "util/ahead.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef __SSE2__
#include <emmintrin.h>
#endif

typedef enum step {
	STEP_OK,         /* an element was read */
	STEP_NESTED,     /* an element opens a nested container, not read yet */
	STEP_END,        /* the container's closing bracket was consumed */
	STEP_ERROR,      /* detail holds the reason */
	STEP_INCOMPLETE, /* input ended early */
} step;

/* An element of a container not closed yet (json.c "containers"). */
typedef struct pending {
	tj_value v;
	tj_key k; /* in an object */
} pending;

typedef struct parser {
	const char *p, *end;
	int depth;
	/* The most recently read key of the whole document: the reference keeps
	 * a single one and names it in "after value for key" errors. */
	const char *last_key;
	size_t last_key_len;
	/* The last integer literal that overflowed int64 (re-read as a double):
	 * the reference reports it when the input later ends early. */
	const char *overflow;
	size_t overflow_len;
	struct tree *t;  /* where the tree's memory comes from */
	/* The elements of the open containers that have no block of their
	 * own, innermost last: in inline_stack, which holds those of a
	 * Chrome JSON event's args, or in a malloc'd copy once that is full
	 * (freed when the parse ends). */
	pending *stack;
	size_t top, cap;
	pending inline_stack[32];
	char detail[TM_ERR_MAX];
} parser;

/* Field by field: the 4 KiB detail buffer needs no clearing, and a
 * Chrome JSON trace parses one document per event. */
static void parser_init(parser *ps, const char *buf, size_t len)
{
	ps->p = buf;
	ps->end = buf + len;
	ps->depth = 0;
	ps->last_key = NULL;
	ps->last_key_len = 0;
	ps->overflow = NULL;
	ps->overflow_len = 0;
	ps->t = NULL;
	ps->stack = ps->inline_stack;
	ps->top = 0;
	ps->cap = sizeof ps->inline_stack / sizeof ps->inline_stack[0];
}

/* ---- the tree's memory --------------------------------------------------- */

/* A tree lives in one arena, freed whole by tj_free: a Chrome JSON trace
 * parses one small document per event, and a malloc per string and per
 * container array was most of its cost. The root is the first member of
 * the tree header, so tj_free finds the header from the root. Nothing in
 * a tree needs more than 8-byte alignment, and a small container's block
 * (24 bytes an item) would round up to 16. */
typedef struct arena_blk {
	struct arena_blk *next;
} arena_blk;

typedef struct tree {
	tj_value root;
	arena_blk *blocks;   /* the blocks after the first, newest first */
	unsigned char *cur;  /* free space in the newest block */
	size_t left;
} tree;

#define ARENA_ALIGN 8
#define TREE_FIRST 2048       /* the header and the first block, one malloc */
#define ARENA_BLOCK 8192      /* later blocks (bigger requests get their own) */

_Static_assert(sizeof(arena_blk) % ARENA_ALIGN == 0, "block data stays aligned");

static size_t round_up(size_t n)
{
	return (n + ARENA_ALIGN - 1) & ~(size_t)(ARENA_ALIGN - 1);
}

static tree *tree_new(void)
{
	tree *t = tm_xmalloc(TREE_FIRST);
	memset(t, 0, sizeof(*t));
	size_t head = round_up(sizeof(*t));
	t->cur = (unsigned char *)t + head;
	t->left = TREE_FIRST - head;
	return t;
}

static void *arena_alloc(tree *t, size_t n)
{
	n = round_up(n ? n : 1);
	if (n > t->left) {
		size_t want = n > ARENA_BLOCK / 4 ? n : ARENA_BLOCK - sizeof(arena_blk);
		arena_blk *b = tm_xmalloc(sizeof(arena_blk) + want);
		b->next = t->blocks;
		t->blocks = b;
		if (want == n) /* a big request: keep the current block's room */
			return b + 1;
		t->cur = (unsigned char *)(b + 1);
		t->left = want;
	}
	void *p = t->cur;
	t->cur += n;
	t->left -= n;
	return p;
}

static step fail(parser *ps, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static step fail(parser *ps, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(ps->detail, sizeof(ps->detail), fmt, ap);
	va_end(ap);
	return STEP_ERROR;
}

/* A precision for quoting n input bytes with %.*s: more than a message can
 * hold is never shown, so vsnprintf need not scan further. */
static int clip(size_t n)
{
	return n > TM_ERR_MAX ? TM_ERR_MAX : (int)n;
}

/* The reference quotes "the rest of the input" in number errors. */
static int rest_len(const parser *ps, const char *from)
{
	return clip((size_t)(ps->end - from));
}

static inline int is_ws(char c)
{
	unsigned char u = (unsigned char)c; /* most bytes fail the first test */
	return u <= ' ' && (u == ' ' || u == '\t' || u == '\n' || u == '\r');
}

/* Skip JSON whitespace; nonzero when a byte remains. */
static inline int skip_ws(parser *ps)
{
	while (ps->p < ps->end && is_ws(*ps->p))
		ps->p++;
	return ps->p < ps->end;
}

static int is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* The first '"' or '\\' in [p, end), or end. String bodies are most of a
 * Chrome JSON trace's bytes, and a loop over bytes was the parsers' largest
 * cost. With SSE2 (every x86-64), sixteen bytes at a time: compare each with
 * both characters, and the lowest set bit of the mask is the first hit.
 * Without it, eight at a time: a byte of the word XORed with the character
 * is zero where it is one, and (x - 0x01..) & ~x & 0x80.. marks the lowest
 * zero byte exactly (a borrow can only mark bytes above it). */
static inline const char *find_quote_or_backslash(const char *p, const char *end)
{
#ifdef __SSE2__
	const __m128i quotes = _mm_set1_epi8('"'), slashes = _mm_set1_epi8('\\');
	while (end - p >= 16) {
		__m128i w = _mm_loadu_si128((const __m128i *)(const void *)p);
		unsigned hit = (unsigned)_mm_movemask_epi8(
			_mm_or_si128(_mm_cmpeq_epi8(w, quotes), _mm_cmpeq_epi8(w, slashes)));
		if (hit)
			return p + __builtin_ctz(hit);
		p += 16;
	}
#endif
	const uint64_t ones = 0x0101010101010101ull, highs = 0x8080808080808080ull;
	const uint64_t quotes64 = ones * '"', slashes64 = ones * '\\';
	while (end - p >= 8) {
		uint64_t w;
		memcpy(&w, p, sizeof w);
		w = tm_le64(w);
		uint64_t a = w ^ quotes64, b = w ^ slashes64;
		uint64_t hit = ((a - ones) & ~a & highs) | ((b - ones) & ~b & highs);
		if (hit)
			return p + (__builtin_ctzll(hit) >> 3);
		p += 8;
	}
	while (p < end && *p != '"' && *p != '\\')
		p++;
	return p;
}

static int hex_value(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* ---- strings ------------------------------------------------------------ */

/* Decode the body of a string (between its quotes). `body` points into the
 * input, which always holds the opening quote and the closing one, so the
 * bytes quoted by the \u error (up to three before the bad digit) and the
 * digit reads (which stop at the closing quote, never a hex digit) stay in
 * bounds. */
static step unescape(parser *ps, const char *body, const char *body_end, char *out, size_t *out_len)
{
	char *o = out;
#define PUT(src, n) (memcpy(o, (src), (n)), o += (n))
	const char *run = body;
	for (const char *it = body; it < body_end; it++) {
		it = memchr(it, '\\', (size_t)(body_end - it));
		if (!it)
			break;
		PUT(run, (size_t)(it - run));
		char e = *++it;
		static const char simple_from[] = "\"\\/bfnrt", simple_to[] = "\"\\/\b\f\n\r\t";
		const char *k = e ? strchr(simple_from, e) : NULL;
		if (k) {
			PUT(&simple_to[k - simple_from], 1);
		} else if (e == 'u') {
			uint32_t cp = 0;
			for (int j = 0; j < 4; j++) {
				int h = hex_value(*++it);
				if (h < 0)
					return fail(ps, "Invalid escape sequence: \\u%c%c%c%c", it[-3], it[-2], it[-1], *it);
				cp = cp << 4 | (uint32_t)h;
			}
			if (cp >= 0xd800 && cp <= 0xdfff)
				return fail(ps,
					    "Invalid escape sequence: \\u%c%c%c%c (code point %u is reserved for "
					    "surrogate pairs)",
					    it[-3], it[-2], it[-1], *it, cp);
			unsigned char u[3];
			size_t n;
			if (cp <= 0x7f) {
				u[0] = (unsigned char)cp;
				n = 1;
			} else if (cp <= 0x7ff) {
				u[0] = (unsigned char)(0xc0 | cp >> 6);
				u[1] = (unsigned char)(0x80 | (cp & 0x3f));
				n = 2;
			} else {
				u[0] = (unsigned char)(0xe0 | cp >> 12);
				u[1] = (unsigned char)(0x80 | (cp >> 6 & 0x3f));
				u[2] = (unsigned char)(0x80 | (cp & 0x3f));
				n = 3;
			}
			PUT(u, n);
		}
		/* Any other escaped byte is dropped with its backslash, as the
		 * reference does. */
		run = it + 1;
	}
	PUT(run, (size_t)(body_end - run));
#undef PUT
	*o = '\0';
	*out_len = (size_t)(o - out);
	return STEP_OK;
}

/* Read a string at ps->p (which is '"'). The closing quote is found first
 * (a quote preceded by an odd run of backslashes is escaped); only then is
 * the body decoded, so an unterminated string is "incomplete" whatever its
 * escapes. */
static step parse_string(parser *ps, char **out, size_t *out_len)
{
	const char *body = ps->p + 1, *q = body;
	/* Most strings are short and hold no escape: copy those at once. */
	const char *f = find_quote_or_backslash(body, ps->end);
	if (f < ps->end && *f == '"') {
		size_t n = (size_t)(f - body);
		char *dst = arena_alloc(ps->t, n + 1);
		memcpy(dst, body, n);
		dst[n] = '\0';
		ps->p = f + 1;
		*out = dst;
		*out_len = n;
		return STEP_OK;
	}
	for (;;) {
		q = memchr(q, '"', (size_t)(ps->end - q));
		if (!q)
			return STEP_INCOMPLETE;
		size_t backslashes = 0;
		for (const char *b = q; b > body && b[-1] == '\\'; b--)
			backslashes++;
		if (backslashes % 2 == 0)
			break;
		q++;
	}
	/* Decoding never lengthens: an escape is at least as long as what
	 * it stands for (\uXXXX, 6 bytes, gives at most 3). */
	char *dst = arena_alloc(ps->t, (size_t)(q - body) + 1);
	step rc = unescape(ps, body, q, dst, out_len);
	if (rc != STEP_OK)
		return rc;
	ps->p = q + 1;
	*out = dst;
	return STEP_OK;
}

/* ---- numbers ------------------------------------------------------------ */

/* The reference's integer reading, overflow test included. Its one hole is
 * reproduced too: a negative literal whose first 19 digits are
 * 9223372036854775808 reaches INT64_MIN, which no later test catches, so
 * further digits wrap ("-922337203685477580812" reads as -12). */
static int to_int64(const char *s, const char *e, int64_t *out)
{
	const int64_t max_div10 = INT64_MAX / 10;
	const int max_mod10 = (int)(INT64_MAX % 10);
	int neg = *s == '-';
	int64_t v = 0;
	for (const char *c = s + neg; c < e; c++) {
		int d = *c - '0';
		if ((v > max_div10 || (v == max_div10 && d > max_mod10)) &&
		    !(neg && v == max_div10 && d == max_mod10 + 1))
			return -1;
		v = (int64_t)((uint64_t)v * 10 + (uint64_t)d);
	}
	*out = neg ? (int64_t)(0 - (uint64_t)v) : v;
	return 0;
}

/* The reference's double reading, reproduced so that values (and which
 * literals fail) match: integer part, fraction digits and exponent are
 * accumulated in 64-bit integers that wrap, the fraction is divided by a
 * wrapping power of ten, and the exponent is applied with pow(). */
static int to_double(const char *s, const char *e, double *out)
{
	const char *c = s;
	int neg = *c == '-';
	c += neg;
	uint64_t int_part = 0;
	for (; c < e && is_digit(*c); c++)
		int_part = int_part * 10 + (uint64_t)(*c - '0');
	double fraction = 0;
	if (c < e && *c == '.') {
		uint64_t digits = 0, divisor = 1;
		for (c++; c < e && is_digit(*c); c++) {
			digits = digits * 10 + (uint64_t)(*c - '0');
			divisor *= 10;
		}
		/* 64 or more fraction digits wrap the divisor to 0: the
		 * reference divides by zero and reports the inf/NaN. */
		if (divisor == 0)
			return -1;
		fraction = (double)(int64_t)digits / (double)divisor;
	}
	uint64_t exponent = 0;
	int exp_neg = 0;
	if (c < e && (*c == 'e' || *c == 'E')) {
		c++;
		if (c < e && (*c == '+' || *c == '-'))
			exp_neg = *c++ == '-';
		for (; c < e && is_digit(*c); c++)
			exponent = exponent * 10 + (uint64_t)(*c - '0');
	}
	double v = (double)(int64_t)int_part + fraction;
	if (exp_neg)
		v /= pow(10, (double)(int64_t)exponent);
	else if ((int64_t)exponent > 0)
		v *= pow(10, (double)(int64_t)exponent);
	if (isinf(v) || isnan(v))
		return -1;
	*out = neg ? -v : v;
	return 0;
}

static step parse_number(parser *ps, tj_value *v)
{
	const char *start = ps->p, *cur = ps->p, *end = ps->end;
	int int_like = 1;
	int neg = *cur == '-';
	cur += neg;
	/* The integer part's value is kept as it is read: a literal of at
	 * most 18 digits without . e E fits int64, so to_int64 (which reads
	 * it again, testing overflow at each digit) is only needed beyond. */
	uint64_t acc = 0;
	const char *digits0 = cur;
	if (cur < end && *cur == '0') {
		cur++;
		if (cur < end && is_digit(*cur))
			return fail(ps, "Invalid number: leading zero in '%.*s'", rest_len(ps, start), start);
	} else if (cur < end && *cur >= '1' && *cur <= '9') {
		/* up to eight digits at a time (a Chrome JSON ts has ten, a
		 * pid five): a byte is a digit when it is 0x3_ before and after
		 * adding 6; the digits of a word, moved to its top, are joined
		 * in pairs, fours and eights by multiplying (the first byte is
		 * the most significant) */
		const uint64_t ones = 0x0101010101010101ull, f0 = 0xf0 * ones, d0 = 0x30 * ones;
		while (end - cur >= 8) {
			uint64_t w;
			memcpy(&w, cur, sizeof w);
			w = tm_le64(w);
			/* a byte that is no digit leaves a mark in its nibbles */
			uint64_t stray = ((w & f0) ^ d0) | (((w + 6 * ones) & f0) ^ d0);
			unsigned n = stray ? (unsigned)__builtin_ctzll(stray) / 8 : 8;
			if (!n)
				break;
			/* the n digits to the top of the word, zeros below them */
			w -= d0;
			if (n < 8)
				w <<= 8 * (8 - n);
			w = (w * 10 + (w >> 8)) & 0x00ff00ff00ff00ffull;
			w = (w * 100 + (w >> 16)) & 0x0000ffff0000ffffull;
			w = (w * 10000 + (w >> 32)) & 0xffffffffull;
			static const uint64_t scale[9] = {1, 10, 100, 1000, 10000, 100000, 1000000, 10000000,
							  100000000};
			acc = acc * scale[n] + w;
			cur += n;
			if (n < 8)
				break;
		}
		while (cur < end && is_digit(*cur))
			acc = acc * 10 + (uint64_t)(*cur++ - '0');
		if (cur < end && *cur != '.' && *cur != 'e' && *cur != 'E' && cur - digits0 <= 18) {
			v->type = TJ_INT;
			v->i = neg ? -(int64_t)acc : (int64_t)acc;
			ps->p = cur;
			return STEP_OK;
		}
	} else if (cur < end) {
		return fail(ps, "Invalid number: expected digit in '%.*s'", rest_len(ps, start), start);
	}
	if (cur < end && *cur == '.') {
		int_like = 0;
		const char *digits = ++cur;
		while (cur < end && is_digit(*cur))
			cur++;
		if (cur < end && cur == digits)
			return fail(ps, "Invalid number: expected digit after '.' in '%.*s'", rest_len(ps, start),
				    start);
	}
	if (cur < end && (*cur == 'e' || *cur == 'E')) {
		int_like = 0;
		cur++;
		cur += cur < end && (*cur == '+' || *cur == '-');
		const char *digits = cur;
		while (cur < end && is_digit(*cur))
			cur++;
		if (cur < end && cur == digits)
			return fail(ps, "Invalid number: expected digit after 'e' in '%.*s'", rest_len(ps, start),
				    start);
	}
	/* A number is only complete once a byte follows it. */
	if (cur >= end)
		return STEP_INCOMPLETE;
	if (int_like) {
		if (to_int64(start, cur, &v->i) == 0) {
			v->type = TJ_INT;
			ps->p = cur;
			return STEP_OK;
		}
		/* manifest.md §4: an integer literal beyond int64 is a double. */
		ps->overflow = start;
		ps->overflow_len = (size_t)(cur - start);
	}
	if (to_double(start, cur, &v->d) != 0)
		return fail(ps, "Double overflow/underflow parsing '%.*s'", clip((size_t)(cur - start)), start);
	v->type = TJ_DOUBLE;
	ps->p = cur;
	return STEP_OK;
}

/* ---- values ------------------------------------------------------------- */

static const struct literal {
	const char *word;
	size_t n;
	tj_type type;
	int b;
} literals[] = {
	{"true", 4, TJ_BOOL, 1},
	{"false", 5, TJ_BOOL, 0},
	{"null", 4, TJ_NULL, 0},
};

static step parse_primitive(parser *ps, tj_value *v)
{
	if (*ps->p == '"') {
		v->type = TJ_STRING;
		return parse_string(ps, &v->s, &v->len);
	}
	for (size_t k = 0; k < sizeof(literals) / sizeof(literals[0]); k++) {
		const struct literal *l = &literals[k];
		size_t n = l->n;
		if (*ps->p != l->word[0])
			continue;
		if ((size_t)(ps->end - ps->p) < n)
			return STEP_INCOMPLETE;
		if (memcmp(ps->p, l->word, n) != 0)
			return fail(ps, "Invalid token: expected '%s' but got '%.*s'", l->word, (int)n, ps->p);
		ps->p += n;
		v->type = l->type;
		v->b = l->b;
		return STEP_OK;
	}
	return parse_number(ps, v);
}

/* After an element of a container of type `in`: a ',' (then more input) or
 * the container's own closing bracket, which is left for the next step. */
static step after_value(parser *ps, tj_type in)
{
	char close = in == TJ_OBJECT ? '}' : ']';
	if (!skip_ws(ps))
		return STEP_INCOMPLETE;
	if (*ps->p == ',') {
		ps->p++;
		return skip_ws(ps) ? STEP_OK : STEP_INCOMPLETE;
	}
	if (*ps->p == close)
		return STEP_OK;
	if (in == TJ_OBJECT && ps->last_key_len > 0)
		return fail(ps, "Expected ',' or '%c' after value for key '%.*s'. Got '%c'", close,
			    clip(ps->last_key_len), ps->last_key, *ps->p);
	return fail(ps, "Expected ',' or '%c' after value. Got '%c'", close, *ps->p);
}

/* ---- containers -------------------------------------------------------- */

/* A container's items get one block of their exact size when it closes,
 * so that a small one holds no spare room (`[0]` is one value, not room
 * for eight) and no outgrown block stays in the arena. Until then its
 * elements wait on the parser's stack, where they are always the last
 * ones (a nested container's leave when it closes). Past SPILL of them,
 * in a block of their own instead, grown as they come and shrunk to size
 * as the container closes, when it becomes the tree's: copied off the
 * stack at the end, a large container would be held twice. */
#define SPILL 256

typedef struct frame {
	tj_type type;
	size_t n;       /* elements so far */
	size_t base;    /* the first one's place on the stack, while blk is NULL */
	arena_blk *blk; /* the items after the header, once past SPILL */
	tj_key *keys;   /* an object's keys then */
	size_t cap;     /* the room of blk and keys */
} frame;

static tj_value *element(parser *ps, const frame *f, size_t i)
{
	return f->blk ? (tj_value *)(void *)(f->blk + 1) + i : &ps->stack[f->base + i].v;
}

static void stack_grow(parser *ps)
{
	size_t cap = 2 * ps->cap;
	if (ps->stack == ps->inline_stack) {
		ps->stack = tm_xmalloc(cap * sizeof(*ps->stack));
		memcpy(ps->stack, ps->inline_stack, ps->top * sizeof(*ps->stack));
	} else {
		ps->stack = tm_xrealloc(ps->stack, cap * sizeof(*ps->stack));
	}
	ps->cap = cap;
}

/* f's elements, the last ones on the stack, to a block of f's own. */
static void spill(parser *ps, frame *f)
{
	f->cap = 2 * f->n;
	f->blk = tm_xmalloc(sizeof(arena_blk) + f->cap * sizeof(tj_value));
	tj_value *items = element(ps, f, 0);
	if (f->type == TJ_OBJECT)
		f->keys = tm_xmalloc(f->cap * sizeof(tj_key));
	for (size_t i = 0; i < f->n; i++) {
		items[i] = ps->stack[f->base + i].v;
		if (f->keys)
			f->keys[i] = ps->stack[f->base + i].k;
	}
	ps->top = f->base;
}

/* A new element of f, a null value with the key given (objects), valid
 * until the next element of any container. */
static tj_value *push(parser *ps, frame *f, char *key, size_t key_len)
{
	if (!f->blk && f->n == SPILL)
		spill(ps, f);
	tj_value *v;
	if (f->blk) {
		if (f->n == f->cap) {
			f->cap *= 2;
			f->blk = tm_xrealloc(f->blk, sizeof(arena_blk) + f->cap * sizeof(tj_value));
			if (f->keys)
				f->keys = tm_xrealloc(f->keys, f->cap * sizeof(tj_key));
		}
		v = element(ps, f, f->n);
		if (f->keys)
			f->keys[f->n] = (tj_key){key, key_len};
	} else {
		if (ps->top == ps->cap)
			stack_grow(ps);
		pending *e = &ps->stack[ps->top++];
		e->k = (tj_key){key, key_len};
		v = &e->v;
	}
	f->n++;
	*v = (tj_value){.type = TJ_NULL};
	return v;
}

/* The closed f's items (NULL when it has none) in the tree, an object's
 * keys after them (tj_keys). */
static tj_value *close_frame(parser *ps, frame *f)
{
	size_t n = f->n;
	if (!n)
		return NULL;
	size_t room = n * (sizeof(tj_value) + (f->type == TJ_OBJECT ? sizeof(tj_key) : 0));
	tj_value *items;
	if (f->blk) {
		arena_blk *b = tm_xrealloc(f->blk, sizeof(arena_blk) + room);
		f->blk = NULL;
		b->next = ps->t->blocks;
		ps->t->blocks = b;
		items = (tj_value *)(void *)(b + 1);
		if (f->keys) {
			memcpy(items + n, f->keys, n * sizeof(tj_key));
			free(f->keys);
			f->keys = NULL;
		}
		return items;
	}
	items = arena_alloc(ps->t, room);
	const pending *e = &ps->stack[f->base];
	if (f->type == TJ_OBJECT) {
		tj_key *keys = (tj_key *)(void *)(items + n);
		for (size_t i = 0; i < n; i++) {
			items[i] = e[i].v;
			keys[i] = e[i].k;
		}
	} else {
		for (size_t i = 0; i < n; i++)
			items[i] = e[i].v;
	}
	ps->top = f->base;
	return items;
}

/* f given up (a parse error): what it holds outside the tree. */
static void drop_frame(frame *f)
{
	free(f->blk);
	free(f->keys);
}

/* Read one element of container f (ps->p is at a non-space byte). A
 * nested container is left for the caller with its type set. */
static step next_element(parser *ps, frame *f)
{
	/* Either bracket ends either container here (hence trailing commas). */
	if (*ps->p == '}' || *ps->p == ']') {
		ps->p++;
		return STEP_END;
	}
	tj_value *v;
	if (f->type == TJ_OBJECT) {
		if (*ps->p != '"')
			return fail(ps, "Expected '\"' at the start of key. Got '%c'", *ps->p);
		char *key;
		size_t key_len;
		step rc = parse_string(ps, &key, &key_len);
		if (rc != STEP_OK)
			return rc;
		/* The slot owns the key from now on (a failure frees the whole
		 * tree), so last_key stays valid until the error is reported. */
		v = push(ps, f, key, key_len);
		ps->last_key = key;
		ps->last_key_len = key_len;
		if (!skip_ws(ps))
			return STEP_INCOMPLETE;
		if (*ps->p != ':')
			return fail(ps, "Expected ':' after key '%.*s'. Got '%c'", clip(key_len), key, *ps->p);
		ps->p++;
		if (!skip_ws(ps))
			return STEP_INCOMPLETE;
	} else {
		v = push(ps, f, NULL, 0);
	}
	if (*ps->p == '{' || *ps->p == '[') {
		if (ps->depth >= TJ_MAX_DEPTH)
			return fail(ps, "Nesting deeper than %d levels", TJ_MAX_DEPTH);
		v->type = *ps->p == '{' ? TJ_OBJECT : TJ_ARRAY;
		ps->p++;
		/* Input ending right after the bracket is the parent's failure. */
		if (!skip_ws(ps))
			return STEP_INCOMPLETE;
		return STEP_NESTED;
	}
	step rc = parse_primitive(ps, v);
	if (rc != STEP_OK)
		return rc;
	return after_value(ps, f->type);
}

/* Record the failure of a step of a container of `type` as the final error. */
static void report(parser *ps, tj_type type, step rc, tm_error *err)
{
	const char *what = type == TJ_OBJECT ? "object" : "array";
	if (rc == STEP_ERROR)
		tm_err(err, TM_EINPUT, "Failed to parse %s: %s", what, ps->detail);
	else if (ps->overflow)
		tm_err(err, TM_EINPUT, "Failed to parse %s: Integer overflow parsing '%.*s'", what,
		       clip(ps->overflow_len), ps->overflow);
	else
		tm_err(err, TM_EINPUT, "Failed to parse %s: ", what);
}

/* Read the elements of a container of `type` (its opening bracket
 * consumed, ps->p at a non-space byte) up to and including its closing
 * bracket into *items and *n; `parent` is the enclosing container's type,
 * TJ_NULL for the root. */
static int parse_container(parser *ps, tj_type type, tj_type parent, tj_value **items, size_t *n, tm_error *err)
{
	frame f = {type, 0, ps->top, NULL, NULL, 0};
	ps->depth++;
	for (;;) {
		step rc = next_element(ps, &f);
		if (rc == STEP_END) {
			*n = f.n;
			*items = close_frame(ps, &f);
			/* Closing a nested container also reads what follows
			 * it in the parent; a failure there is still this
			 * container's (its items are the tree's by now). */
			if (parent != TJ_NULL)
				rc = after_value(ps, parent);
			if (rc == STEP_END || rc == STEP_OK)
				break;
			report(ps, type, rc, err);
			return -1;
		}
		if (rc == STEP_NESTED) {
			tj_value *sub_items;
			size_t sub_n;
			if (parse_container(ps, element(ps, &f, f.n - 1)->type, type, &sub_items, &sub_n, err) != 0) {
				drop_frame(&f);
				return -1;
			}
			/* found again: the stack may have moved */
			tj_value *sub = element(ps, &f, f.n - 1);
			sub->items = sub_items;
			sub->len = sub_n;
			continue;
		}
		if (rc != STEP_OK) {
			report(ps, type, rc, err);
			drop_frame(&f);
			return -1;
		}
	}
	ps->depth--;
	return 0;
}

/* tj_parse, also telling how many bytes of buf the root took (through its
 * closing bracket). Declared where it is used (json_trace.c: a Chrome JSON
 * event parsed straight from the read buffer). */
int tj_parse_prefix(const char *buf, size_t len, tj_value **out, size_t *used, tm_error *err);

int tj_parse(const char *buf, size_t len, tj_value **out, tm_error *err)
{
	size_t used;
	return tj_parse_prefix(buf, len, out, &used, err);
}

int tj_parse_prefix(const char *buf, size_t len, tj_value **out, size_t *used, tm_error *err)
{
	*out = NULL;
	*used = 0;
	if (len == 0)
		return tm_err(err, TM_EINPUT, "Empty JSON input");
	parser ps;
	parser_init(&ps, buf, len);
	if (!skip_ws(&ps))
		return tm_err(err, TM_EINPUT,
			      "Failed to start parsing: Expected '{' or '[' at the start. Input is empty or whitespace only.");
	if (*ps.p != '{' && *ps.p != '[')
		return tm_err(err, TM_EINPUT, "Failed to start parsing: Expected '{' or '[' at the start. Got '%c'",
			      *ps.p);
	tree *t = tree_new();
	ps.t = t;
	tj_value *root = &t->root;
	root->type = *ps.p == '{' ? TJ_OBJECT : TJ_ARRAY;
	ps.p++;
	if (!skip_ws(&ps)) {
		tj_free(root);
		return tm_err(err, TM_EINPUT, "Failed to start parsing: ");
	}
	int rc = parse_container(&ps, root->type, TJ_NULL, &root->items, &root->len, err);
	if (ps.stack != ps.inline_stack)
		free(ps.stack);
	if (rc != 0) {
		tj_free(root);
		return -1;
	}
	*out = root;
	*used = (size_t)(ps.p - buf);
	return 0;
}

/* ---- an object read without its tree ------------------------------------- */

/* Deeper nesting is left to tj_parse_prefix (which allows TJ_MAX_DEPTH). */
#define SHALLOW_MAX_DEPTH 64

/* shallow_string from q, a backslash or the end: the escapes checked. */
static const char *shallow_string_rest(const char *q, const char *end, int *escaped)
{
	for (;;) {
		if (q >= end)
			return NULL;
		if (*q == '"')
			return q;
		*escaped = 1;
		if (++q >= end)
			return NULL;
		if (*q == 'u') {
			uint32_t cp = 0;
			for (int j = 0; j < 4; j++) {
				if (++q >= end)
					return NULL;
				int h = hex_value(*q);
				if (h < 0)
					return NULL;
				cp = cp << 4 | (uint32_t)h;
			}
			if (cp >= 0xd800 && cp <= 0xdfff)
				return NULL;
		}
		q = find_quote_or_backslash(q + 1, end);
	}
}

/* The closing quote of the string whose body starts at p, found as
 * parse_string finds it; NULL when the input ends first or when an escape
 * is one unescape() rejects (a \u without four hex digits, or naming a
 * surrogate). *escaped tells whether the body holds a backslash. Inlined
 * for a string without escapes (nearly every one, a dozen per event):
 * the call was a tenth of the instructions it took. */
static inline __attribute__((always_inline)) const char *shallow_string(const char *p, const char *end,
									 int *escaped)
{
	const char *q = find_quote_or_backslash(p, end);
	*escaped = 0;
	if (q < end && *q == '"')
		return q;
	return shallow_string_rest(q, end, escaped);
}

static int shallow_container(parser *ps, int depth);

/* The shallow reader's whitespace, quicker where there is none (a Chrome
 * JSON trace has none inside its events, and checking for it around
 * every key and value was a fifteenth of the JSON scan): the same
 * outcome as skip_ws at each place. */

/* After a key: skip_ws, ':', skip_ws. 0 when that is not what follows. */
static inline int colon(parser *ps)
{
	if (ps->end - ps->p >= 2 && ps->p[0] == ':' && (unsigned char)ps->p[1] > ' ') {
		ps->p++;
		return 1;
	}
	if (!skip_ws(ps) || *ps->p != ':')
		return 0;
	ps->p++;
	return skip_ws(ps);
}

/* After a value: skip_ws. */
static inline int skip_ws_to_punct(parser *ps)
{
	if (ps->p < ps->end && (*ps->p == ',' || *ps->p == '}' || *ps->p == ']'))
		return 1;
	return skip_ws(ps);
}

/* After a comma between members: skip_ws. */
static inline int skip_ws_to_quote(parser *ps)
{
	if (ps->p < ps->end && *ps->p == '"')
		return 1;
	return skip_ws(ps);
}

/* A number nobody reads (the pid and tid of a Chrome JSON event when only
 * its times are wanted, the numbers of its args) passed by: parse_number's
 * checks without the value. Only for a literal that cannot overflow or
 * underflow (no exponent; at most 18 bytes of digits and point, as an
 * integer of 19 digits may be beyond int64, which parse_number notes in
 * ps->overflow) and that a byte follows. 0 passed by, -1 not a number,
 * 1 for parse_number to read (which then says what it always says). */
static int skip_plain_number(parser *ps)
{
	const char *cur = ps->p, *end = ps->end;
	cur += cur < end && *cur == '-';
	const char *digits0 = cur;
	if (cur < end && *cur == '0') {
		cur++;
		if (cur < end && is_digit(*cur))
			return -1; /* a leading zero */
	} else if (cur < end && *cur >= '1' && *cur <= '9') {
		while (cur < end && is_digit(*cur))
			cur++;
	} else {
		return 1;
	}
	if (cur < end && *cur == '.') {
		const char *frac = ++cur;
		while (cur < end && is_digit(*cur))
			cur++;
		if (cur == frac)
			return 1;
	}
	if (cur >= end || *cur == 'e' || *cur == 'E' || cur - digits0 > 18)
		return 1;
	ps->p = cur;
	return 0;
}

/* A string value at ps->p (its '"'), into m when m is not NULL: 0, or -1
 * as shallow_value. Inlined where a value is read, since most values are
 * strings and the call to shallow_value cost more than the string. */
static inline __attribute__((always_inline)) int shallow_string_value(parser *ps, tj_member *m)
{
	int escaped;
	const char *q = shallow_string(ps->p + 1, ps->end, &escaped);
	if (!q)
		return -1;
	if (m) {
		m->v.type = TJ_STRING;
		m->v.s = (char *)ps->p + 1;
		m->v.len = (size_t)(q - ps->p - 1);
		m->escaped = escaped;
	}
	ps->p = q + 1;
	return 0;
}

/* One value at ps->p (a non-space byte); into m when m is not NULL. 0, or
 * -1 where tj_parse_prefix may read it otherwise or not at all. */
static int shallow_value(parser *ps, int depth, tj_member *m)
{
	char c = *ps->p;
	if (c == '{' || c == '[') {
		if (m)
			m->v.type = c == '{' ? TJ_OBJECT : TJ_ARRAY;
		return shallow_container(ps, depth + 1);
	}
	if (c == '"')
		return shallow_string_value(ps, m);
	for (size_t k = 0; k < sizeof(literals) / sizeof(literals[0]); k++) {
		const struct literal *l = &literals[k];
		size_t n = l->n;
		if (c != l->word[0])
			continue;
		if ((size_t)(ps->end - ps->p) < n || memcmp(ps->p, l->word, n) != 0)
			return -1;
		ps->p += n;
		if (m) {
			m->v.type = l->type;
			m->v.b = l->b;
		}
		return 0;
	}
	if (!m) { /* nobody reads it: checked, and made only where that is needed */
		int r = skip_plain_number(ps);
		if (r <= 0)
			return r;
	}
	tj_value v;
	if (parse_number(ps, &v) != STEP_OK)
		return -1;
	if (m && v.type == TJ_INT) {
		m->v.type = TJ_INT;
		m->v.i = v.i;
	} else if (m) {
		m->v.type = TJ_DOUBLE;
		m->v.d = v.d;
	}
	return 0;
}

/* A nested container at ps->p, checked and passed by. Only the strict
 * JSON subset of what tj_parse_prefix takes (no trailing comma, no `[}`):
 * anything else is -1. */
static int shallow_container(parser *ps, int depth)
{
	if (depth > SHALLOW_MAX_DEPTH)
		return -1;
	char close = *ps->p == '{' ? '}' : ']';
	int object = close == '}';
	ps->p++;
	if (!skip_ws(ps))
		return -1;
	if (*ps->p == close) {
		ps->p++;
		return 0;
	}
	for (;;) {
		if (object) {
			int escaped;
			const char *q = *ps->p == '"' ? shallow_string(ps->p + 1, ps->end, &escaped) : NULL;
			if (!q)
				return -1;
			ps->p = q + 1;
			if (!colon(ps))
				return -1;
		}
		if ((*ps->p == '"' ? shallow_string_value(ps, NULL) : shallow_value(ps, depth, NULL)) != 0 ||
		    !skip_ws_to_punct(ps))
			return -1;
		if (*ps->p == close) {
			ps->p++;
			return 0;
		}
		if (*ps->p != ',')
			return -1;
		ps->p++;
		if (!skip_ws(ps) || *ps->p == '}' || *ps->p == ']')
			return -1;
	}
}

int tj_read_shallow(const char *buf, size_t len, tj_member_fn fn, void *ctx, size_t *used)
{
	return tj_read_shallow_keys(buf, len, NULL, fn, ctx, used);
}

int tj_read_shallow_keys(const char *buf, size_t len, tj_key_fn keep, tj_member_fn fn, void *ctx, size_t *used)
{
	parser ps;
	parser_init(&ps, buf, len);
	if (!len || *ps.p != '{')
		return 0;
	ps.p++;
	if (!skip_ws(&ps))
		return 0;
	if (*ps.p == '}') {
		*used = (size_t)(ps.p + 1 - buf);
		return 1;
	}
	for (;;) {
		int escaped;
		const char *q = *ps.p == '"' ? shallow_string(ps.p + 1, ps.end, &escaped) : NULL;
		if (!q || escaped)
			return 0;
		tj_member m;
		/* what shallow_value does not set for every type */
		m.v.items = NULL;
		m.v.len = 0;
		m.escaped = 0;
		m.key = ps.p + 1;
		m.key_len = (size_t)(q - m.key);
		ps.p = q + 1;
		if (!colon(&ps))
			return 0;
		m.raw = ps.p;
		int wanted = !keep || keep(ctx, m.key, m.key_len);
		/* a string is filled in whether wanted or not: cheaper than asking */
		if ((*ps.p == '"' ? shallow_string_value(&ps, &m) : shallow_value(&ps, 0, wanted ? &m : NULL)) != 0)
			return 0;
		m.raw_len = (size_t)(ps.p - m.raw);
		if ((wanted && fn(ctx, &m) != 0) || !skip_ws_to_punct(&ps))
			return 0;
		if (*ps.p == '}') {
			*used = (size_t)(ps.p + 1 - buf);
			return 1;
		}
		if (*ps.p != ',')
			return 0;
		ps.p++;
		if (!skip_ws_to_quote(&ps))
			return 0;
	}
}

const tj_value *tj_get(const tj_value *obj, const char *key)
{
	if (!obj || obj->type != TJ_OBJECT)
		return NULL;
	size_t n = strlen(key);
	const tj_key *keys = tj_keys(obj);
	for (size_t i = obj->len; i-- > 0;)
		if (keys[i].len == n && memcmp(keys[i].s, key, n) == 0)
			return &obj->items[i];
	return NULL;
}

int tj_is_number(const tj_value *v)
{
	return v && (v->type == TJ_INT || v->type == TJ_DOUBLE);
}

void tj_free(tj_value *v)
{
	if (!v)
		return;
	tree *t = (tree *)v; /* v is a root: the header's first member */
	for (arena_blk *b = t->blocks, *next; b; b = next) {
		next = b->next;
		free(b);
	}
	free(t);
}

/* ---- a tree copied through a buffer ------------------------------------- */

/* Offsets stand where pointers go until tj_copy_in. */
static void *as_ptr(size_t off)
{
	return (void *)(uintptr_t)off;
}

static size_t as_off(const void *p)
{
	return (size_t)(uintptr_t)p;
}

/* v's copy into the node reserved at `at` (b->data moves as b grows:
 * everything is addressed by offset). */
static void copy_node(const tj_value *v, tm_buf *b, size_t at)
{
	tj_value n = *v;
	if (v->type == TJ_STRING && v->s) {
		size_t s = tm_log_reserve(b, v->len + 1);
		memcpy(b->data + s, v->s, v->len + 1); /* its NUL too */
		n.s = as_ptr(s);
	} else if ((v->type == TJ_ARRAY || v->type == TJ_OBJECT) && v->items && v->len) {
		int object = v->type == TJ_OBJECT;
		size_t items = tm_log_reserve(b, v->len * (sizeof(tj_value) + (object ? sizeof(tj_key) : 0)));
		n.items = as_ptr(items);
		if (object) {
			const tj_key *keys = tj_keys(v);
			size_t at_keys = items + v->len * sizeof(tj_value);
			for (size_t i = 0; i < v->len; i++) {
				tj_key k = {as_ptr(tm_log_reserve(b, keys[i].len + 1)), keys[i].len};
				memcpy(b->data + as_off(k.s), keys[i].s, keys[i].len + 1);
				memcpy(b->data + at_keys + i * sizeof(tj_key), &k, sizeof k);
			}
		}
		for (size_t i = 0; i < v->len; i++)
			copy_node(&v->items[i], b, items + i * sizeof(tj_value));
	} else if (v->type == TJ_ARRAY || v->type == TJ_OBJECT) {
		n.items = NULL;
		n.len = 0; /* a container given without its items */
	}
	memcpy(b->data + at, &n, sizeof n);
}

size_t tj_copy_out(const tj_value *v, tm_buf *b)
{
	size_t root = tm_log_reserve(b, sizeof(tj_value));
	copy_node(v, b, root);
	return root;
}

static void copy_in(tj_value *v, char *base)
{
	if (v->type == TJ_STRING && v->s)
		v->s = base + as_off(v->s);
	if ((v->type != TJ_ARRAY && v->type != TJ_OBJECT) || !v->items)
		return;
	v->items = (tj_value *)(void *)(base + as_off(v->items));
	if (v->type == TJ_OBJECT) {
		tj_key *keys = tj_keys(v);
		for (size_t i = 0; i < v->len; i++)
			keys[i].s = base + as_off(keys[i].s);
	}
	for (size_t i = 0; i < v->len; i++)
		copy_in(&v->items[i], base);
}

tj_value *tj_copy_in(char *base, size_t root)
{
	tj_value *v = (tj_value *)(void *)(base + root);
	copy_in(v, base);
	return v;
}

/* ---- writing ------------------------------------------------------------------ */

void tj_write_double(tm_buf *b, double d)
{
	size_t at = b->len;
	tm_buf_put_double(b, d);
	/* a double stays one when read back: "3" becomes "3.0" */
	const char *t = b->data + at;
	size_t n = b->len - at;
	if (!memchr(t, '.', n) && !memchr(t, 'e', n) && !memchr(t, 'n', n) && !memchr(t, 'i', n))
		tm_buf_put(b, ".0", 2);
}

void tj_write(tm_buf *b, const tj_value *v)
{
	switch (v->type) {
	case TJ_NULL: tm_buf_puts(b, "null"); break;
	case TJ_BOOL: tm_buf_puts(b, v->b ? "true" : "false"); break;
	case TJ_INT: tm_buf_put_i64(b, v->i); break;
	case TJ_DOUBLE: tj_write_double(b, v->d); break;
	case TJ_STRING: tm_buf_json_string(b, v->s, v->len); break;
	case TJ_ARRAY:
		tm_buf_put(b, "[", 1);
		for (size_t i = 0; i < v->len; i++) {
			if (i)
				tm_buf_put(b, ",", 1);
			tj_write(b, &v->items[i]);
		}
		tm_buf_put(b, "]", 1);
		break;
	case TJ_OBJECT:
		tm_buf_put(b, "{", 1);
		tj_write_members(b, v);
		tm_buf_put(b, "}", 1);
		break;
	}
}

void tj_write_members(tm_buf *b, const tj_value *v)
{
	const tj_key *keys = tj_keys(v);
	for (size_t i = 0; i < v->len; i++) {
		if (i)
			tm_buf_put(b, ",", 1);
		tm_buf_json_string(b, keys[i].s, keys[i].len);
		tm_buf_put(b, ":", 1);
		tj_write(b, &v->items[i]);
	}
}
