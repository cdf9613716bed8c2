/* core/util/tm.c - error carrier and allocation helpers. */
#include "util/tm.h"
#include "util/hash.h"
#include "util/per_thread.h"

#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int tm_err(tm_error *err, tm_code code, const char *fmt, ...)
{
	if (!err)
		return -1;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
	err->code = code;
	return -1;
}

void tm_err_clear(tm_error *err)
{
	if (!err)
		return;
	err->code = TM_OK;
	err->msg[0] = '\0';
}

static void oom(size_t n)
{
	fprintf(stderr, "tracemount: out of memory allocating %zu bytes\n", n);
	abort();
}

void *tm_xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p)
		oom(n);
	return p;
}

void *tm_xcalloc_aligned(size_t align, size_t n)
{
	n = (n + align - 1) / align * align;
	void *p = aligned_alloc(align, n);
	if (!p)
		oom(n);
	memset(p, 0, n);
	return p;
}

void *tm_xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);
	if (!p)
		oom(n * size);
	return p;
}

void *tm_xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);
	if (!q)
		oom(n);
	return q;
}

char *tm_xstrdup(const char *s)
{
	return tm_xstrndup(s, strlen(s));
}

char *tm_xstrndup(const char *s, size_t n)
{
	char *p = tm_xmalloc(n + 1);
	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

/* pthread_once takes no argument: the keys are made under one lock. */
static pthread_mutex_t per_thread_mu = PTHREAD_MUTEX_INITIALIZER;

void *tm_per_thread_get(tm_per_thread *t)
{
	if (!__atomic_load_n(&t->ready, __ATOMIC_ACQUIRE)) {
		pthread_mutex_lock(&per_thread_mu);
		if (!t->ready) {
			if (pthread_key_create(&t->key, t->destroy) != 0) {
				fputs("tracemount: out of thread-specific keys\n", stderr);
				abort();
			}
			__atomic_store_n(&t->ready, 1, __ATOMIC_RELEASE);
		}
		pthread_mutex_unlock(&per_thread_mu);
	}
	void *p = pthread_getspecific(t->key);
	if (!p) {
		p = tm_xcalloc(1, t->size);
		if (pthread_setspecific(t->key, p) != 0)
			oom(t->size);
	}
	return p;
}

void tm_grow_zero(void **arr, size_t *cap, size_t need, size_t elem)
{
	size_t old = *cap;
	tm_grow(arr, cap, need, elem);
	if (*cap > old)
		memset((char *)*arr + old * elem, 0, (*cap - old) * elem);
}

void tm_reserve(void **arr, size_t *cap, size_t need, size_t elem)
{
	if (need <= *cap)
		return;
	*arr = tm_xrealloc(*arr, need * elem);
	*cap = need;
}

void tm_grow(void **arr, size_t *cap, size_t need, size_t elem)
{
	if (need <= *cap)
		return;
	size_t c = *cap ? *cap : 8;
	while (c < need)
		c *= 2;
	*arr = tm_xrealloc(*arr, c * elem);
	*cap = c;
}

void tm_buf_json_string(tm_buf *b, const char *s, size_t n)
{
	tm_buf_put(b, "\"", 1);
	size_t start = 0;
	for (size_t i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)s[i];
		if (ch >= 0x20 && ch != '"' && ch != '\\')
			continue;
		tm_buf_put(b, s + start, i - start);
		start = i + 1;
		switch (ch) {
		case '"': tm_buf_puts(b, "\\\""); break;
		case '\\': tm_buf_puts(b, "\\\\"); break;
		case '\n': tm_buf_puts(b, "\\n"); break;
		case '\r': tm_buf_puts(b, "\\r"); break;
		case '\t': tm_buf_puts(b, "\\t"); break;
		default: tm_buf_printf(b, "\\u%04x", ch);
		}
	}
	tm_buf_put(b, s + start, n - start);
	tm_buf_put(b, "\"", 1);
}

void tm_buf_puts(tm_buf *b, const char *s)
{
	tm_buf_put(b, s, strlen(s));
}

/* The length of the well-formed UTF-8 sequence at p[0..n) (n >= 1, p[0]
 * >= 0x80), or -(the length of its maximal ill-formed part). Unicode
 * table 3-7: the second byte's range depends on the first. */
static long utf8_seq(const unsigned char *p, size_t n)
{
	unsigned c = p[0], lo = 0x80, hi = 0xbf;
	size_t len;
	if (c >= 0xc2 && c <= 0xdf)
		len = 2;
	else if (c >= 0xe0 && c <= 0xef)
		len = 3, lo = c == 0xe0 ? 0xa0 : 0x80, hi = c == 0xed ? 0x9f : 0xbf;
	else if (c >= 0xf0 && c <= 0xf4)
		len = 4, lo = c == 0xf0 ? 0x90 : 0x80, hi = c == 0xf4 ? 0x8f : 0xbf;
	else
		return -1;
	for (size_t i = 1; i < len; i++) {
		if (i >= n || p[i] < lo || p[i] > hi)
			return -(long)i;
		lo = 0x80, hi = 0xbf;
	}
	return (long)len;
}

void tm_buf_put_utf8(tm_buf *b, const void *s, size_t n)
{
	if (!n) { /* s may be NULL then */
		tm_buf_put(b, s, 0);
		return;
	}
	const unsigned char *p = s, *end = p + n, *run = p;
	while (p < end) {
		/* ASCII eight bytes at a time: the rendered metadata.json of
		 * 100,000 files is tens of MB of it */
		uint64_t w;
		while (end - p >= 8 && (memcpy(&w, p, 8), !(w & 0x8080808080808080ull)))
			p += 8;
		if (p == end)
			break;
		if (*p < 0x80) {
			p++;
			continue;
		}
		long k = utf8_seq(p, (size_t)(end - p));
		if (k > 0) {
			p += k;
			continue;
		}
		tm_buf_put(b, run, (size_t)(p - run));
		tm_buf_put(b, "\xef\xbf\xbd", 3); /* U+FFFD */
		p += -k;
		run = p;
	}
	tm_buf_put(b, run, (size_t)(p - run));
}

void tm_buf_printf(tm_buf *b, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n <= 0)
		return;
	tm_grow((void **)&b->data, &b->cap, b->len + (size_t)n + 1, 1);
	va_start(ap, fmt);
	vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
}

void tm_buf_free(tm_buf *b)
{
	free(b->data);
	b->data = NULL;
	b->len = b->cap = 0;
}

char *tm_buf_detach(tm_buf *b, size_t *len)
{
	char *p = b->data ? b->data : tm_xstrdup("");
	if (len)
		*len = b->data ? b->len : 0;
	b->data = NULL;
	b->len = b->cap = 0;
	return p;
}

/* ---- tm_u64map --------------------------------------------------------------- */

static size_t u64_hash(uint64_t x)
{
	return (size_t)tm_khash_u64(x);
}

const uint32_t *tm_u64map_get(const tm_u64map *m, uint64_t key)
{
	if (!m->cap)
		return NULL;
	for (size_t i = u64_hash(key) & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
		const tm_u64slot *sl = &m->slots[i];
		if (!sl->val)
			return NULL;
		if (sl->key == key)
			return &sl->val;
	}
}

static void u64map_grow(tm_u64map *m)
{
	tm_u64map old = *m;
	m->cap = old.cap ? old.cap * 2 : 16;
	m->n = 0;
	m->slots = tm_xcalloc(m->cap, sizeof(*m->slots));
	for (size_t i = 0; i < old.cap; i++)
		if (old.slots[i].val)
			tm_u64map_put(m, old.slots[i].key, old.slots[i].val - 1);
	free(old.slots);
}

void tm_u64map_put(tm_u64map *m, uint64_t key, uint32_t val)
{
	if ((m->n + 1) * 4 > m->cap * 3)
		u64map_grow(m);
	for (size_t i = u64_hash(key) & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
		tm_u64slot *sl = &m->slots[i];
		if (!sl->val) {
			sl->key = key;
			sl->val = val + 1;
			m->n++;
			return;
		}
		if (sl->key == key) {
			sl->val = val + 1;
			return;
		}
	}
}

void tm_u64map_clear(tm_u64map *m)
{
	if (m->cap)
		memset(m->slots, 0, m->cap * sizeof(*m->slots));
	m->n = 0;
}

void tm_u64map_free(tm_u64map *m)
{
	free(m->slots);
	memset(m, 0, sizeof(*m));
}

/* ---- stopping ------------------------------------------------------------------- */

static atomic_int stop_asked;

void tm_stop_request(void)
{
	atomic_store_explicit(&stop_asked, 1, memory_order_relaxed);
}

int tm_stopped(tm_error *err)
{
	if (!atomic_load_explicit(&stop_asked, memory_order_relaxed))
		return 0;
	return tm_err(err, TM_EIO, "interrupted");
}

/* ---- two threads ------------------------------------------------------------- */

void tm_run_halves(void *(*fn)(void *), void *a, void *b)
{
	pthread_t helper;
	int threaded = pthread_create(&helper, NULL, fn, b) == 0;
	if (threaded)
		pthread_setname_np(helper, "tm-inputs"); /* joined below */
	fn(a);
	if (threaded)
		pthread_join(helper, NULL);
	else
		fn(b);
}

/* ---- the allocator -------------------------------------------------------------- */

/* A pass allocates and frees blocks of up to a few MB all along (pile
 * tails, relay batches, sort runs, logs read ahead). With glibc's
 * defaults the heap is trimmed as soon as 128 kB are free at its top and
 * a block over the sliding mmap threshold is unmapped when freed, so the
 * next block faults its pages in again, zeroed: in this VM a fault costs
 * microseconds. Blocks up to 4 MB come from the heap now, and up to 8 MB
 * of free heap stays mapped. On bench_import's inputs (median of five
 * runs, interleaved) the systrace timeline went from 0.82 s to 0.74 s,
 * the proto one from 3.51 s to 3.21 s, the JSON merged.pftrace from
 * 0.47 s to 0.43 s; peak RSS moved by at most 6 MB (the proto timeline's
 * stayed 63 MB). */
void tm_memory_tune(void)
{
#ifdef __GLIBC__
	mallopt(M_MMAP_THRESHOLD, 4 << 20);
	mallopt(M_TRIM_THRESHOLD, 8 << 20);
#endif
}

void tm_memory_release(void)
{
#ifdef __GLIBC__
	malloc_trim(0);
#endif
}

/* ---- numbers as text (timeline.tsv, the tables, compact JSON) -------------------- */

/* The eight decimal digits of x (< 1e8, leading zeros kept), the first
 * in the lowest byte, all at once in the lanes of one word: x split into
 * its two halves of four digits (32-bit lanes), each into two of two
 * (16-bit lanes), each into its two digits (bytes), by multiplying with a
 * reciprocal and shifting. Each reciprocal is exact for its lane's range:
 * x * 5243 >> 19 is x / 100 below 43,699, x * 103 >> 10 is x / 10 below
 * 179. */
static inline uint64_t digits8(uint32_t x)
{
	uint64_t halves = x / 10000 | (uint64_t)(x % 10000) << 32;
	uint64_t hi = (halves * 5243 >> 19) & 0x0000007f0000007full;
	uint64_t quarters = hi | (halves - hi * 100) << 16;
	uint64_t tens = (quarters * 103 >> 10) & 0x000f000f000f000full;
	return (tens | (quarters - tens * 10) << 8) + 0x3030303030303030ull;
}

/* A word of digits8 to p, its first byte first. */
static inline void store8(char *p, uint64_t w)
{
	w = tm_le64(w);
	memcpy(p, &w, 8);
}

static const uint64_t pow10[20] = {1ull,
				   10ull,
				   100ull,
				   1000ull,
				   10000ull,
				   100000ull,
				   1000000ull,
				   10000000ull,
				   100000000ull,
				   1000000000ull,
				   10000000000ull,
				   100000000000ull,
				   1000000000000ull,
				   10000000000000ull,
				   100000000000000ull,
				   1000000000000000ull,
				   10000000000000000ull,
				   100000000000000000ull,
				   1000000000000000000ull,
				   10000000000000000000ull};

/* The decimal digits of u (1 for 0): log10 from the bit length, then one
 * comparison. */
static inline size_t u64_digits(uint64_t u)
{
	unsigned t = (unsigned)(64 - __builtin_clzll(u | 1)) * 1233 >> 12;
	size_t n = t + 1 - (u < pow10[t]);
	return n ? n : 1;
}

size_t tm_i64_len(int64_t v)
{
	return (v < 0) + u64_digits(v < 0 ? 0 - (uint64_t)v : (uint64_t)v);
}

void tm_buf_put_i64(tm_buf *b, int64_t v)
{
	/* A timeline row has a few numbers, its ts of a dozen digits or more:
	 * made two digits a step from the last, they were a fifth of the
	 * formatters' time at the end of the proto bench's cat timeline.tsv
	 * (perf). Eight digits are made at once now (digits8), at most three
	 * times for 20 digits, each put with one store of eight bytes: the
	 * first word without its leading zeros (shifted out), then the others
	 * in their places after it. Stores may reach 8 bytes past the number,
	 * inside the room asked for. */
	uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
	size_t n = u64_digits(u);
	size_t sign = v < 0;
	if (b->len + sign + 24 + 1 > b->cap)
		tm_grow((void **)&b->data, &b->cap, b->len + sign + 24 + 1, 1);
	char *d = b->data + b->len;
	if (sign)
		*d++ = '-';
	if (n <= 8) {
		store8(d, digits8((uint32_t)u) >> 8 * (8 - n));
	} else {
		uint64_t high = u / 100000000;
		if (n <= 16) {
			store8(d, digits8((uint32_t)high) >> 8 * (16 - n));
		} else {
			store8(d, digits8((uint32_t)(high / 100000000)) >> 8 * (24 - n));
			store8(d + n - 16, digits8((uint32_t)(high % 100000000)));
		}
		store8(d + n - 8, digits8((uint32_t)(u % 100000000)));
	}
	d[n] = '\0';
	b->len += sign + n;
}

/* Whether put_whole writes v. */
static int is_whole(double v)
{
	return v > -1e15 && v < 1e15 && (double)(int64_t)v == v;
}

/* A whole number below 1e15 in magnitude as %.15g writes it (its digits,
 * "-0" for negative zero; that text reads back as v): 1, or 0 and nothing
 * written for any other v. Counter values mostly are such, and snprintf
 * and strtod cost a hundred times as much. */
static int put_whole(tm_buf *b, double v)
{
	if (!is_whole(v))
		return 0;
	if (v == 0 && signbit(v))
		tm_buf_put(b, "-0", 2);
	else
		tm_buf_put_i64(b, (int64_t)v);
	return 1;
}

/* v as tm_buf_put_double writes it when it is not whole: t. */
static void shortest(char t[40], double v)
{
	for (int prec = 15; prec <= 17; prec++) {
		snprintf(t, 40, "%.*g", prec, v);
		if (strtod(t, NULL) == v)
			break;
	}
}

void tm_buf_put_double(tm_buf *b, double v)
{
	if (put_whole(b, v))
		return;
	char t[40];
	shortest(t, v);
	tm_buf_puts(b, t);
}

size_t tm_double_len(double v)
{
	if (is_whole(v))
		return v == 0 && signbit(v) ? 2 : tm_i64_len((int64_t)v);
	char t[40];
	shortest(t, v);
	return strlen(t);
}
