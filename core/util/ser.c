/* core/util/ser.c - little-endian writing and checked reading for the index
 * cache, and its hash. */
#include "util/ser.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <zlib.h>

#define FLUSH_AT ((size_t)64 << 10)

void tm_ser_out_init(tm_ser_out *o, int fd)
{
	memset(o, 0, sizeof(*o));
	o->fd = fd;
	o->crc = (uint32_t)crc32(0, NULL, 0);
}

void tm_ser_flush(tm_ser_out *o)
{
	if (o->fd == TM_SER_MEMORY || !o->buf.len)
		return;
	for (size_t off = 0; o->fd >= 0 && !o->error && off < o->buf.len;) {
		ssize_t w = write(o->fd, o->buf.data + off, o->buf.len - off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			o->error = w < 0 ? errno : EIO;
		else
			off += (size_t)w;
	}
	o->crc = (uint32_t)crc32(o->crc, (const Bytef *)o->buf.data, (uInt)o->buf.len);
	o->total += o->buf.len;
	o->buf.len = 0;
}

void tm_ser_out_free(tm_ser_out *o)
{
	tm_buf_free(&o->buf);
}

static void put(tm_ser_out *o, const void *p, size_t n)
{
	if (o->fd == TM_SER_MEMORY) {
		tm_buf_put(&o->buf, p, n);
		o->total += n;
		return;
	}
	if (o->buf.len + n > FLUSH_AT)
		tm_ser_flush(o);
	if (n > FLUSH_AT) { /* a large piece goes out as it is */
		tm_buf big = o->buf;
		o->buf = (tm_buf){(char *)p, n, n};
		tm_ser_flush(o);
		o->buf = big;
		return;
	}
	tm_buf_put(&o->buf, p, n);
}

void tm_ser_u8(tm_ser_out *o, uint8_t v)
{
	put(o, &v, 1);
}

void tm_ser_u64(tm_ser_out *o, uint64_t v)
{
	unsigned char x[10];
	size_t n = 0;
	do {
		x[n++] = (unsigned char)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
		v >>= 7;
	} while (v);
	put(o, x, n);
}

void tm_ser_u32(tm_ser_out *o, uint32_t v)
{
	tm_ser_u64(o, v);
}

void tm_ser_i64(tm_ser_out *o, int64_t v)
{
	tm_ser_u64(o, ((uint64_t)v << 1) ^ (uint64_t)(v >> 63));
}

void tm_ser_bytes(tm_ser_out *o, const void *p, size_t n)
{
	tm_ser_u64(o, n);
	put(o, p, n);
}

void tm_ser_str(tm_ser_out *o, const char *s)
{
	tm_ser_u8(o, s != NULL);
	if (s)
		tm_ser_bytes(o, s, strlen(s));
}

int tm_ser_fail(tm_ser_rd *r, const char *why)
{
	if (!r->bad)
		r->why = why;
	r->bad = 1;
	r->left = 0;
	return 0;
}

/* Give back the whole pages from r->spent up to `keep`, the first byte
 * still wanted (take() hands out a pointer to bytes it has passed). */
static void give_back(tm_ser_rd *r, const unsigned char *keep)
{
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t from = ((uintptr_t)r->spent + page - 1) & ~(page - 1);
	uintptr_t to = (uintptr_t)keep & ~(page - 1);
	if (to > from) { /* a failure only keeps the pages */
		(void)madvise((void *)from, to - from, MADV_DONTNEED);
		r->spent = (const unsigned char *)to;
	}
}

/* The next n bytes, or NULL (and the reader bad). */
static const unsigned char *take(tm_ser_rd *r, size_t n)
{
	if (r->bad || n > r->left) {
		tm_ser_fail(r, "truncated");
		return NULL;
	}
	const unsigned char *p = r->p;
	r->p += n;
	r->left -= n;
	if (r->spent && (size_t)(p - r->spent) >= TM_SER_SPEND_STEP)
		give_back(r, p);
	return p;
}

uint8_t tm_ser_get_u8(tm_ser_rd *r)
{
	const unsigned char *p = take(r, 1);
	return p ? p[0] : 0;
}

uint64_t tm_ser_get_u64(tm_ser_rd *r)
{
	uint64_t v = 0;
	for (unsigned shift = 0;; shift += 7) {
		const unsigned char *p = take(r, 1);
		if (!p)
			return 0;
		if (shift == 63 && *p > 1)
			return tm_ser_fail(r, "a number too large");
		v |= (uint64_t)(*p & 0x7f) << shift;
		if (!(*p & 0x80))
			return v;
		if (shift == 63)
			return tm_ser_fail(r, "a number too long");
	}
}

uint32_t tm_ser_get_u32(tm_ser_rd *r)
{
	uint64_t v = tm_ser_get_u64(r);
	if (v > UINT32_MAX)
		return (uint32_t)tm_ser_fail(r, "a number too large");
	return (uint32_t)v;
}

int64_t tm_ser_get_i64(tm_ser_rd *r)
{
	uint64_t v = tm_ser_get_u64(r);
	return (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
}

const void *tm_ser_get_bytes(tm_ser_rd *r, size_t *n)
{
	uint64_t len = tm_ser_get_u64(r);
	if (len > r->left) {
		tm_ser_fail(r, "truncated");
		*n = 0;
		return NULL;
	}
	*n = (size_t)len;
	return take(r, (size_t)len);
}

char *tm_ser_get_str(tm_ser_rd *r)
{
	uint8_t present = tm_ser_get_u8(r);
	if (present > 1)
		tm_ser_fail(r, "bad string marker");
	if (!present || r->bad)
		return NULL;
	size_t n;
	const char *p = tm_ser_get_bytes(r, &n);
	if (!p)
		return NULL;
	if (memchr(p, '\0', n)) {
		tm_ser_fail(r, "NUL inside a string");
		return NULL;
	}
	return tm_xstrndup(p, n);
}

size_t tm_ser_count(tm_ser_rd *r, size_t min_bytes, size_t max)
{
	uint64_t n = tm_ser_get_u64(r);
	if (r->bad)
		return 0;
	if (n > max || (min_bytes && n > r->left / min_bytes)) {
		tm_ser_fail(r, "impossible count");
		return 0;
	}
	return (size_t)n;
}

/* FNV-1a over 8-byte words (then the tail byte by byte), finished with a
 * 64-bit mix so that every input bit reaches every output bit. */
uint64_t tm_hash(uint64_t h, const void *p, size_t n)
{
	const unsigned char *s = p;
	const uint64_t prime = UINT64_C(0x100000001b3);
	for (; n >= 8; s += 8, n -= 8) {
		uint64_t w;
		memcpy(&w, s, 8);
		h = (h ^ w) * prime;
		h ^= h >> 29;
	}
	for (; n; s++, n--)
		h = (h ^ *s) * prime;
	h ^= h >> 33;
	h *= UINT64_C(0xff51afd7ed558ccd);
	h ^= h >> 33;
	return h;
}
