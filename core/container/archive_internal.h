/* core/container/archive_internal.h - what archive.c, zip.c, tar.c and decompress.c
 * share: the blob and cursor structs and the per-kind operations. Nothing
 * outside those four files includes this header.
 *
 * A blob is one of a few kinds (file, memory, byte range, deflated ZIP
 * member, decompressed stream), each a table of operations (libarchive
 * style: one file per format, one private header). A blob that reads
 * another blob (its `src`) holds a reference to it; a cursor on such a blob
 * owns a cursor on `src`, so every reader has its own decoder state all the
 * way down and blobs stay immutable. The only mutable blob state is the
 * size of a stream (atomic, learnt at its end) and a gzip checkpoint index
 * (under its own mutex).
 */
#ifndef TM_ARCHIVE_INTERNAL_H
#define TM_ARCHIVE_INTERNAL_H

#include <stdatomic.h>
#include <stdint.h>
#include <sys/types.h>

#include "container/archive.h"

/* Internal read size: large reads keep throughput near `cat`/`unzip -p`. */
#define TM_IO_CHUNK ((size_t)256 << 10)

typedef struct blob_ops {
	/* Set up c->state (may be left NULL). 0 or -1 with err. */
	int (*open)(tm_cursor *c, tm_error *err);
	/* Read exactly min(n, size - off) bytes when the size is known (n > 0,
	 * off < size), fewer only at the end of a stream; -1 with err. */
	ssize_t (*pread)(tm_cursor *c, void *buf, size_t n, uint64_t off, tm_error *err);
	void (*close)(tm_cursor *c);
	void (*free)(tm_blob *b);
	/* Optional: an offset up to which the blob is known to decode without
	 * error and from which decoding can resume cheaply (gzip checkpoints). */
	uint64_t (*resume_hint)(tm_blob *b);
} blob_ops;

struct tm_blob {
	atomic_long refs;
	const blob_ops *ops;
	_Atomic int64_t size; /* -1 while unknown */
	tm_blob *src;         /* the blob this one reads from, or NULL */
	uint64_t off;         /* range / deflated member: where its bytes start in src */
	void *priv;           /* kind-specific, immutable after creation (or self-locking) */
};

struct tm_cursor {
	tm_blob *blob;  /* one reference */
	tm_cursor *src; /* a cursor on blob->src, or NULL */
	uint64_t pos;   /* where tm_cursor_read continues */
	void *state;    /* kind-specific decoder state */
	void (*observe)(void *ctx, size_t n); /* tm_cursor_observe */
	void *observe_ctx;
};

/* A new blob with one reference; takes a reference to `src` (may be NULL). */
tm_blob *tm_blob_new_(const blob_ops *ops, tm_blob *src, uint64_t off, int64_t size, void *priv);

/* The same, without a source, with a zeroed kind-specific part of
 * priv_size bytes as its priv, in the blob's own allocation and freed with
 * it: for kinds made by the hundred thousand (loose files). */
tm_blob *tm_blob_new_inline_(const blob_ops *ops, int64_t size, size_t priv_size);

/* Record the size of a stream once its end is reached (thread-safe). */
void tm_blob_set_size_(tm_blob *b, int64_t size);

/* The bytes [off, off+len) of `src` (a stored ZIP member, a TAR member).
 * A range of a range reads the underlying blob directly. The caller has
 * checked the bounds against src's size when it is known. */
tm_blob *tm_blob_range_(tm_blob *src, uint64_t off, uint64_t len);

/* A deflated ZIP member: raw deflate data at [off, off+clen) of `src`
 * inflating to exactly `usize` bytes with CRC-32 `crc`; its local header
 * at `header` gives the name error messages use. */
tm_blob *tm_blob_inflate_(tm_blob *src, uint64_t header, uint64_t off, uint64_t clen, uint64_t usize,
			  uint32_t crc);

/* Read exactly n bytes at off, or fewer only at the end of the blob. */
ssize_t tm_read_full_(tm_cursor *c, void *buf, size_t n, uint64_t off, tm_error *err);

/* Little-endian field access for the container parsers. */
static inline uint16_t tm_le16_(const unsigned char *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}
static inline uint32_t tm_le32_(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static inline uint64_t tm_le64_(const unsigned char *p)
{
	return (uint64_t)tm_le32_(p) | (uint64_t)tm_le32_(p + 4) << 32;
}

/* Grow a listing by one zeroed entry and return it. */
tm_entry *tm_listing_add_(tm_listing *l, size_t *cap);

#endif
