/* core/util/ser.h - the byte layout of the index cache (core/session/index.h): integers
 * as varints, strings and arrays length-prefixed, written to memory or a
 * file and read back by a reader that checks every length against the
 * bytes left. A file on disk is never trusted: a reader that runs short or meets
 * an impossible value turns `bad` on and from then on yields zeros, so a
 * decoder checks `bad` once at the end (and bounds its allocations with
 * tm_ser_count, never with a raw count).
 *
 * Also the hash the index uses to notice a changed archive: 64 bits,
 * streaming, not cryptographic (it tells an edited file from the one the
 * index was made from; the cache directory is the user's own).
 */
#ifndef TM_SER_H
#define TM_SER_H

#include <stddef.h>
#include <stdint.h>

#include "util/tm.h"

/* Where written bytes go: kept in memory (TM_SER_MEMORY, in `buf`), only
 * counted (TM_SER_COUNT: how long a section will be), or written to a file
 * descriptor as they gather (a large index never sits whole in memory).
 * `total` and `crc` (CRC-32) cover every byte passed on. */
enum { TM_SER_MEMORY = -1, TM_SER_COUNT = -2 };
typedef struct tm_ser_out {
	tm_buf buf;
	int fd;          /* >= 0, or TM_SER_MEMORY, TM_SER_COUNT */
	uint64_t total;
	uint32_t crc;
	int error;       /* errno of a failed write (sticky; later writes are dropped) */
} tm_ser_out;

void tm_ser_out_init(tm_ser_out *o, int fd);
/* Pass on what has gathered (a file: write it). */
void tm_ser_flush(tm_ser_out *o);
void tm_ser_out_free(tm_ser_out *o);

/* Unsigned integers as LEB128 varints, signed ones zigzagged first. */
void tm_ser_u8(tm_ser_out *o, uint8_t v);
void tm_ser_u32(tm_ser_out *o, uint32_t v);
void tm_ser_u64(tm_ser_out *o, uint64_t v);
void tm_ser_i64(tm_ser_out *o, int64_t v);
/* A string, or NULL (told apart from ""). */
void tm_ser_str(tm_ser_out *o, const char *s);
/* n bytes, length first. */
void tm_ser_bytes(tm_ser_out *o, const void *p, size_t n);

typedef struct tm_ser_rd {
	const unsigned char *p;
	size_t left;
	int bad;          /* ran short or met an impossible value */
	const char *why;  /* a static reason once bad */
	const unsigned char *spent; /* a spending reader: where the pages not
				       given back yet begin; else NULL */
} tm_ser_rd;

static inline tm_ser_rd tm_ser_reader(const void *p, size_t n)
{
	return (tm_ser_rd){(const unsigned char *)p, n, 0, NULL, NULL};
}

/* A reader that gives back to the system, every TM_SER_SPEND_STEP bytes,
 * the whole pages it has passed (those before what it hands out): their
 * contents are lost. For bytes in an anonymous
 * mapping of their own (tm_index_read's) that nobody reads again once
 * decoded, so that a large index is not held twice, as bytes and as what
 * they decode to, while it loads. */
#define TM_SER_SPEND_STEP ((size_t)4 << 20)
static inline tm_ser_rd tm_ser_reader_spending(const void *p, size_t n)
{
	return (tm_ser_rd){(const unsigned char *)p, n, 0, NULL, (const unsigned char *)p};
}

/* Mark the reader bad with a static reason (the first one sticks). Returns 0. */
int tm_ser_fail(tm_ser_rd *r, const char *why);

uint8_t tm_ser_get_u8(tm_ser_rd *r);
uint32_t tm_ser_get_u32(tm_ser_rd *r);
uint64_t tm_ser_get_u64(tm_ser_rd *r);
int64_t tm_ser_get_i64(tm_ser_rd *r);
/* A string written by tm_ser_str: a new allocation, or NULL (also when the
 * reader is bad; check r->bad). A string holding a NUL is bad. */
char *tm_ser_get_str(tm_ser_rd *r);
/* Bytes written by tm_ser_bytes: a pointer into the input and *n. */
const void *tm_ser_get_bytes(tm_ser_rd *r, size_t *n);
/* A count of elements that take at least `min_bytes` each when written
 * (a varint takes one at least):
 * larger than what is left, or than `max`, makes the reader bad (so the
 * caller may allocate count elements). */
size_t tm_ser_count(tm_ser_rd *r, size_t min_bytes, size_t max);

/* The hash: start with TM_HASH_INIT, feed bytes, read the value. */
#define TM_HASH_INIT UINT64_C(0xcbf29ce484222325)
uint64_t tm_hash(uint64_t h, const void *p, size_t n);

#endif
