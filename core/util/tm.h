/* core/util/tm.h - things every core module shares: the error carrier and
 * allocation helpers.
 *
 * One error type inside the core (STYLE.md, after squashfuse): a code plus
 * the exact user-facing message. Front ends turn the code into an errno or
 * an exit status and print the message as is.
 */
#ifndef TM_TM_H
#define TM_TM_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef enum tm_code {
	TM_OK = 0,
	TM_EINPUT,   /* bad input: manifest, archive or trace data; the message is the contract */
	TM_EIO,      /* the operating system failed us (open, read) */
	TM_ENOENT,   /* no such path in the virtual tree */
	TM_ENOTDIR,
	TM_EISDIR,
	TM_ENOMEM,
	TM_EUNSUP,   /* recognised but not supported by tracemount */
	TM_EARGS,    /* the inputs cannot be used as given (two with one member name, a
	                -o manifest file that is no manifest): tracemount's own text */
} tm_code;

#define TM_ERR_MAX 4096

typedef struct tm_error {
	tm_code code;
	char msg[TM_ERR_MAX];
} tm_error;

/* Record an error. printf-style; the message is truncated to TM_ERR_MAX-1
 * bytes. Returns -1 so callers can write `return tm_err(err, ...)`.
 * `err` may be NULL (the error is then dropped). */
int tm_err(tm_error *err, tm_code code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* A stop asked for from outside the pass (a mount's SIGINT, SIGTERM or
 * SIGHUP): the scan, the model's replay and the timeline's lines then end
 * early, so that the daemon can go. Async-signal safe to ask. */
void tm_stop_request(void);
/* -1 with err set to TM_EIO "interrupted" once a stop is asked, else 0. */
int tm_stopped(tm_error *err);

/* Work split in two halves: fn(a) on this thread while fn(b) runs on a
 * second one, or both in turn here when no thread can be made. */
void tm_run_halves(void *(*fn)(void *), void *a, void *b);

/* The allocator's policy for a process that runs generation passes
 * (fs/main.c, once at start): freed blocks of a pass stay for its next
 * allocations instead of going back to the kernel (tm.c says why), and
 * tm_memory_release gives them back once a pass is over. No-ops outside
 * glibc. */
void tm_memory_tune(void);
void tm_memory_release(void);

/* Clear an error to TM_OK / "". */
void tm_err_clear(tm_error *err);

/* Allocation that never returns NULL: on exhaustion it prints one line and
 * aborts (a daemon that cannot allocate a few bytes cannot serve anyway). */
void *tm_xmalloc(size_t n);
void *tm_xcalloc(size_t n, size_t size);
/* n zeroed bytes at a multiple of `align` (a power of two): for data two
 * threads write, kept on cache lines of their own. Freed with free(). */
void *tm_xcalloc_aligned(size_t align, size_t n);
void *tm_xrealloc(void *p, size_t n);
char *tm_xstrdup(const char *s);
char *tm_xstrndup(const char *s, size_t n);
/* Grow-array helper: ensure *cap >= need, reallocating *arr of elements of
 * size `elem`. */
void tm_grow(void **arr, size_t *cap, size_t need, size_t elem);
/* The capacity checked here first: most calls find room (a call each cost
 * tens of millions of instructions on the bench exports). `need` is
 * evaluated twice. */
#define TM_GROW(arr, cap, need)                                                          \
	do {                                                                             \
		if ((size_t)(need) > (cap))                                              \
			tm_grow((void **)&(arr), &(cap), (need), sizeof(*(arr)));        \
	} while (0)
/* tm_grow, the new elements zeroed: a table indexed by id that grows to
 * cover the ids it is asked for. */
void tm_grow_zero(void **arr, size_t *cap, size_t need, size_t elem);
#define TM_GROW_ZERO(arr, cap, need) tm_grow_zero((void **)&(arr), &(cap), (need), sizeof(*(arr)))
/* Room for exactly `need` elements when *cap is short: for a count known
 * in advance and large (doubling past 100,000 rows wastes megabytes). */
void tm_reserve(void **arr, size_t *cap, size_t need, size_t elem);
#define TM_RESERVE(arr, cap, need) tm_reserve((void **)&(arr), &(cap), (need), sizeof(*(arr)))

/* A hash map from 64-bit keys to uint32 values (at most UINT32_MAX - 1),
 * open addressing with key and value side by side, so a lookup touches
 * one cache line. Zeroed is empty. */
typedef struct tm_u64slot {
	uint64_t key;
	uint32_t val; /* value + 1; 0 marks an empty slot */
} tm_u64slot;

typedef struct tm_u64map {
	tm_u64slot *slots;
	size_t cap, n; /* cap is 0 or a power of two */
} tm_u64map;

/* Where key's value is kept, as value + 1 (valid until the next put), or
 * NULL. */
const uint32_t *tm_u64map_get(const tm_u64map *m, uint64_t key);
/* Set key's value. */
void tm_u64map_put(tm_u64map *m, uint64_t key, uint32_t val);
/* Empty it, keeping its room. */
void tm_u64map_clear(tm_u64map *m);
void tm_u64map_free(tm_u64map *m);

/* Chains of indices by a 64-bit key (a hash: the caller compares what it
 * finds): heads maps a key to its chain's first index, and each element
 * has a link (in an array, or a field of its own) to the next one. Both
 * hold an index + 1, 0 ending a chain, as tm_u64map gives values back. */
static inline uint32_t tm_chain_first(const tm_u64map *heads, uint64_t key)
{
	const uint32_t *v = tm_u64map_get(heads, key);
	return v ? *v : 0;
}

/* Element i put first in key's chain, its *link the one first before. */
static inline void tm_chain_push(tm_u64map *heads, uint64_t key, uint32_t i, uint32_t *link)
{
	*link = tm_chain_first(heads, key);
	tm_u64map_put(heads, key, i);
}

/* A growable byte buffer (owned memory, always NUL-terminated). */
typedef struct tm_buf {
	char *data;
	size_t len, cap;
} tm_buf;

/* A word loaded from memory (or to be stored) with its first byte lowest. */
static inline uint64_t tm_le64(uint64_t w)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	return __builtin_bswap64(w);
#else
	return w;
#endif
}

/* Our own records' integers (the order store's piles, the records the
 * formats hand the model, the views' lists): unsigned LEB128 varints of
 * at most 10 bytes, signed ones zigzagged first. tm_uv_put writes v at p
 * and returns the end; tm_uv_get reads one from [p, end) and returns what
 * follows it, or NULL when there is none (cut short, or too long). */
#define TM_UV_MAX 10
static inline uint8_t *tm_uv_put(uint8_t *p, uint64_t v)
{
	while (v >= 0x80) {
		*p++ = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	*p++ = (uint8_t)v;
	return p;
}
static inline const uint8_t *tm_uv_get(const uint8_t *p, const uint8_t *end, uint64_t *v)
{
	uint64_t r = 0;
	for (unsigned sh = 0; p < end && sh < 7 * TM_UV_MAX; sh += 7) {
		uint8_t b = *p++;
		r |= (uint64_t)(b & 0x7f) << sh;
		if (!(b & 0x80)) {
			*v = r;
			return p;
		}
	}
	return NULL;
}
static inline uint64_t tm_zz(int64_t v) { return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63); }
static inline int64_t tm_unzz(uint64_t u) { return (int64_t)(u >> 1) ^ -(int64_t)(u & 1); }

/* n bytes (inline: the packet rewriter and the tsv writers put a few
 * bytes at a time, millions of times). */
static inline void tm_buf_put(tm_buf *b, const void *p, size_t n)
{
	if (b->len + n + 1 > b->cap)
		tm_grow((void **)&b->data, &b->cap, b->len + n + 1, 1);
	if (n) /* p may be NULL then */
		memcpy(b->data + b->len, p, n);
	b->len += n;
	b->data[b->len] = '\0';
}
/* One byte (inline: the tsv writers put a separator per field). */
static inline void tm_buf_putc(tm_buf *b, char c)
{
	if (b->len + 2 > b->cap)
		tm_grow((void **)&b->data, &b->cap, b->len + 2, 1);
	b->data[b->len++] = c;
	b->data[b->len] = '\0';
}
void tm_buf_puts(tm_buf *b, const char *s);
/* n bytes of text that should be UTF-8, each maximal ill-formed part
 * (Unicode 3.9, "U+FFFD substitution of maximal subparts", as Python and
 * browsers decode) replaced by U+FFFD: for JSON, which must be UTF-8, and
 * Graphviz, of names that are bytes (archive members, loose files). */
void tm_buf_put_utf8(tm_buf *b, const void *s, size_t n);
void tm_buf_printf(tm_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void tm_buf_free(tm_buf *b);
/* The n bytes of s as a JSON string, quotes included: '"' and '\\'
 * escaped, \n \r \t by name, every other control byte as \u00XX (so the
 * text holds no raw tab or newline); other bytes as they are. */
void tm_buf_json_string(tm_buf *b, const char *s, size_t n);
/* v in decimal. */
void tm_buf_put_i64(tm_buf *b, int64_t v);
/* The length of that text (a measure of a line not made: timeline.tsv's). */
size_t tm_i64_len(int64_t v);
/* v as the first of printf's %.15g, %.16g and %.17g that reads back as
 * v ("nan" or "inf" where v is one): the numbers of the timeline's and
 * the args' JSON. */
void tm_buf_put_double(tm_buf *b, double v);
/* The length of that text. */
size_t tm_double_len(double v);
/* Give up ownership of the bytes (caller frees); the buffer is reset. */
char *tm_buf_detach(tm_buf *b, size_t *len);

#endif
