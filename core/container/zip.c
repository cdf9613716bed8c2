/* core/container/zip.c - listing a ZIP container (spec/formats.md §2.1).
 *
 * The reference walks local file headers from offset 0 and stops at the
 * first central-directory header; so do we, validating every local header
 * in order with the reference's checks and texts. The central directory is
 * read first, but only as an index from local-header offset to sizes: a
 * member written in streaming fashion (general-purpose bit 3) has zero
 * sizes in its local header, and the index gives its end without inflating
 * it. Where the index has no usable answer (no central directory, a
 * truncated or inconsistent one), the member is inflated once to find the
 * end of its deflate data, as the reference does.
 */
#include "container/archive_internal.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zlib.h>

#include "util/ser.h"

enum {
	SIG_LOCAL = 0x04034b50,
	SIG_CENTRAL = 0x02014b50,
	SIG_DESCRIPTOR = 0x08074b50,
	SIG_EOCD = 0x06054b50,
	SIG_ZIP64_LOCATOR = 0x07064b50,
	SIG_ZIP64_EOCD = 0x06064b50,
};

enum {
	LOCAL_SIZE = 30,
	CENTRAL_SIZE = 46,
	EOCD_SIZE = 22,
	ZIP64_LOCATOR_SIZE = 20,
	ZIP64_EOCD_SIZE = 56,
	DESCRIPTOR_SIZE = 16,       /* signature, crc, 32-bit sizes */
	ZIP64_DESCRIPTOR_SIZE = 24, /* signature, crc, 64-bit sizes */
	MAX_COMMENT = 65535,
	/* the largest header with its variable parts: 3 x 16-bit lengths */
	MAX_HEADER = CENTRAL_SIZE + 3 * 65535,
};

/* formats.md §2.1: "version needed" <= 4.5 (zip64); flags limited to bits
 * 1, 2, 3 (data descriptor) and 11 (UTF-8); bit 0 is encryption. */
enum {
	MAX_VERSION = 45,
	FLAG_ENCRYPTED = 1u << 0,
	FLAG_DESCRIPTOR = 1u << 3,
	FLAGS_KNOWN = 1u << 0 | 1u << 1 | 1u << 2 | 1u << 3 | 1u << 11,
	METHOD_STORED = 0,
	METHOD_DEFLATE = 8,
	EXTRA_ZIP64 = 0x0001,
};
#define SENTINEL32 0xffffffffu

/* A central directory this large is not believed: entries beyond it are
 * found by walking (bounded memory for hostile input). */
#define MAX_INDEX (1u << 20)

/* ---- a buffered forward reader over a cursor ------------------------------ */

typedef struct breader {
	tm_cursor *c;
	uint64_t off; /* blob offset of buf[0] */
	unsigned char *buf;
	size_t len;
	size_t ahead; /* bytes to read at least: large for the central
	                 directory, small for local headers far apart */
} breader;

#define BREADER_CAP ((size_t)512 << 10) /* > MAX_HEADER */
#define AHEAD_CENTRAL ((size_t)256 << 10)
#define AHEAD_LOCAL ((size_t)1 << 10)

/* n contiguous bytes at blob offset `at` (n <= BREADER_CAP), or NULL at
 * the end of the blob (a short tail) or on error (err->code set). */
static const unsigned char *breader_get(breader *r, uint64_t at, size_t n, tm_error *err)
{
	if (at >= r->off && at - r->off + n <= r->len)
		return r->buf + (at - r->off);
	ssize_t got = tm_read_full_(r->c, r->buf, n > r->ahead ? n : r->ahead, at, err);
	if (got < 0)
		return NULL;
	r->off = at;
	r->len = (size_t)got;
	return (size_t)got >= n ? r->buf : NULL;
}

/* ---- the central directory as an index ------------------------------------ */

typedef struct cd_entry {
	uint64_t local; /* local header offset */
	uint64_t csize, usize;
	uint32_t mode;  /* unix permission bits when made on unix, else 0 */
} cd_entry;

typedef struct cd_index {
	cd_entry *e;
	size_t n, cap;
} cd_index;

static int cmp_cd(const void *a, const void *b)
{
	uint64_t x = ((const cd_entry *)a)->local, y = ((const cd_entry *)b)->local;
	return x < y ? -1 : x > y;
}

static const cd_entry *cd_find(const cd_index *ix, uint64_t local)
{
	size_t lo = 0, hi = ix->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (ix->e[mid].local < local)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < ix->n && ix->e[lo].local == local ? &ix->e[lo] : NULL;
}

/* Zip64 extended information: the 64-bit values follow in a fixed order,
 * each present only when its 32-bit field holds the sentinel. */
static void cd_zip64(const unsigned char *x, size_t xlen, cd_entry *e, uint32_t usize32, uint32_t csize32,
		     uint32_t local32)
{
	for (size_t i = 0; i + 4 <= xlen;) {
		uint16_t id = tm_le16_(x + i), sz = tm_le16_(x + i + 2);
		i += 4;
		if (sz > xlen - i)
			return;
		if (id == EXTRA_ZIP64) {
			const unsigned char *f = x + i, *end = x + i + sz;
			if (usize32 == SENTINEL32 && end - f >= 8)
				e->usize = tm_le64_(f), f += 8;
			if (csize32 == SENTINEL32 && end - f >= 8)
				e->csize = tm_le64_(f), f += 8;
			if (local32 == SENTINEL32 && end - f >= 8)
				e->local = tm_le64_(f);
			return;
		}
		i += sz;
	}
}

/* Where the central directory is, from the (zip64) end record. 0 when
 * found, -1 when there is none or it does not fit in the file. */
static int cd_locate(breader *r, uint64_t size, uint64_t *cd_off, uint64_t *cd_len, tm_error *err)
{
	uint64_t tail = size < (uint64_t)EOCD_SIZE + MAX_COMMENT ? size : (uint64_t)EOCD_SIZE + MAX_COMMENT;
	if (tail < EOCD_SIZE)
		return -1;
	const unsigned char *t = breader_get(r, size - tail, (size_t)tail, err);
	if (!t)
		return -1;
	size_t i = (size_t)tail - EOCD_SIZE;
	for (;; i--) {
		if (tm_le32_(t + i) == SIG_EOCD && i + EOCD_SIZE + tm_le16_(t + i + 20) <= tail)
			break;
		if (i == 0)
			return -1;
	}
	uint64_t eocd = size - tail + i;
	*cd_len = tm_le32_(t + i + 12);
	*cd_off = tm_le32_(t + i + 16);
	if (eocd >= ZIP64_LOCATOR_SIZE) {
		const unsigned char *loc = breader_get(r, eocd - ZIP64_LOCATOR_SIZE, ZIP64_LOCATOR_SIZE, err);
		if (loc && tm_le32_(loc) == SIG_ZIP64_LOCATOR) {
			uint64_t z = tm_le64_(loc + 8);
			const unsigned char *z64 = z < size ? breader_get(r, z, ZIP64_EOCD_SIZE, err) : NULL;
			if (z64 && tm_le32_(z64) == SIG_ZIP64_EOCD) {
				*cd_len = tm_le64_(z64 + 40);
				*cd_off = tm_le64_(z64 + 48);
			}
		}
	}
	if (*cd_off > eocd || *cd_len > eocd - *cd_off)
		return -1;
	return 0;
}

/* Read the central directory into an index sorted by local-header offset.
 * Damage only shortens the index (the walk then inflates to find ends);
 * only an I/O error fails. */
static int cd_read(breader *r, uint64_t size, cd_index *ix, tm_error *err)
{
	uint64_t off, len;
	if (cd_locate(r, size, &off, &len, err) != 0)
		return err && err->code != TM_OK ? -1 : 0;
	for (uint64_t at = off, end = off + len; at + CENTRAL_SIZE <= end && ix->n < MAX_INDEX;) {
		const unsigned char *h = breader_get(r, at, CENTRAL_SIZE, err);
		if (!h || tm_le32_(h) != SIG_CENTRAL)
			break;
		size_t nlen = tm_le16_(h + 28), xlen = tm_le16_(h + 30), clen = tm_le16_(h + 32);
		uint64_t total = (uint64_t)CENTRAL_SIZE + nlen + xlen + clen;
		if (total > end - at || !(h = breader_get(r, at, (size_t)total, err)))
			break;
		cd_entry e = {
			.local = tm_le32_(h + 42),
			.csize = tm_le32_(h + 20),
			.usize = tm_le32_(h + 24),
			.mode = h[5] == 3 ? (tm_le32_(h + 38) >> 16) & 07777 : 0,
		};
		cd_zip64(h + CENTRAL_SIZE + nlen, xlen, &e, (uint32_t)e.usize, (uint32_t)e.csize, (uint32_t)e.local);
		TM_GROW(ix->e, ix->cap, ix->n + 1);
		ix->e[ix->n++] = e;
		at += total;
	}
	if (err && err->code != TM_OK)
		return -1;
	if (ix->n)
		qsort(ix->e, ix->n, sizeof(*ix->e), cmp_cd);
	return 0;
}

/* ---- the local-header walk ------------------------------------------------- */

typedef struct local_hdr {
	uint64_t off; /* of the signature */
	uint16_t version, flags, method, mtime, mdate;
	uint32_t crc;
	uint64_t csize, usize;
	int zip64; /* a zip64 extra field is present: 64-bit data descriptor */
	char *name;
	uint64_t data; /* where the member's data starts */
} local_hdr;

/* DOS date and time, read as UTC as the reference does. */
static int64_t dos_time(uint16_t date, uint16_t time)
{
	struct tm t = {
		.tm_year = 80 + (date >> 9),
		.tm_mon = ((date >> 5) & 0x0f) - 1,
		.tm_mday = date & 0x1f,
		.tm_hour = time >> 11,
		.tm_min = (time >> 5) & 0x3f,
		.tm_sec = (time & 0x1f) * 2,
	};
	return (int64_t)timegm(&t);
}

/* Find where a streamed member's deflate data ends by inflating it.
 * Returns 1 with *clen set, 0 when the blob ends first (the reference then
 * never completes the member), -1 on error. */
static int deflate_extent(tm_cursor *c, uint64_t data, uint64_t *clen, tm_error *err)
{
	z_stream z = {0};
	if (inflateInit2(&z, -15) != Z_OK)
		return tm_err(err, TM_ENOMEM, "zlib: cannot initialise inflate");
	unsigned char *in = tm_xmalloc(TM_IO_CHUNK), *out = tm_xmalloc(TM_IO_CHUNK);
	uint64_t at = data;
	int rc = 0;
	for (;;) {
		ssize_t r = tm_cursor_pread(c, in, TM_IO_CHUNK, at, err);
		if (r <= 0) {
			rc = r < 0 ? -1 : 0;
			break;
		}
		z.next_in = in;
		z.avail_in = (uInt)r;
		int ret;
		do {
			z.next_out = out;
			z.avail_out = (uInt)TM_IO_CHUNK;
			ret = inflate(&z, Z_NO_FLUSH);
		} while (ret == Z_OK && z.avail_in > 0);
		at += (uint64_t)r - z.avail_in;
		if (ret == Z_STREAM_END) {
			*clen = at - data;
			rc = 1;
			break;
		}
		if (ret != Z_OK && ret != Z_BUF_ERROR) {
			rc = tm_err(err, TM_EINPUT, "Failed decompressing stream in ZIP file at offset 0x%llx",
				    (unsigned long long)data);
			break;
		}
	}
	inflateEnd(&z);
	free(in);
	free(out);
	return rc;
}

/* Read and check one local header at h->off. Returns 1 when a member
 * follows (h filled), 0 at the end of the walk, -1 on error. */
static int local_read(breader *r, uint64_t size, local_hdr *h, tm_error *err)
{
	uint64_t off = h->off;
	if (off > size || size - off < LOCAL_SIZE)
		return 0; /* a partial header: the reference waits for more data */
	const unsigned char *p = breader_get(r, off, LOCAL_SIZE, err);
	if (!p)
		return err && err->code != TM_OK ? -1 : 0;
	uint32_t sig = tm_le32_(p);
	/* The reference reports offsets after consuming the 30-byte header. */
	unsigned long long at = (unsigned long long)(off + LOCAL_SIZE);
	if (sig == SIG_CENTRAL)
		return 0;
	if (sig != SIG_LOCAL)
		return tm_err(err, TM_EINPUT, "Invalid signature found at offset 0x%llx. Actual=0x%x, expected=0x%x", at,
			      sig, SIG_LOCAL);
	h->version = tm_le16_(p + 4);
	h->flags = tm_le16_(p + 6);
	h->method = tm_le16_(p + 8);
	h->mtime = tm_le16_(p + 10);
	h->mdate = tm_le16_(p + 12);
	h->crc = tm_le32_(p + 14);
	h->csize = tm_le32_(p + 18);
	h->usize = tm_le32_(p + 22);
	size_t nlen = tm_le16_(p + 26), xlen = tm_le16_(p + 28);
	if (h->version > MAX_VERSION || (h->flags & FLAG_ENCRYPTED) || (h->flags & ~FLAGS_KNOWN))
		return tm_err(err, TM_EINPUT, "Unsupported zip features at offset 0x%llx. version=%x, flags=%x", at,
			      h->version, h->flags);
	if (h->method != METHOD_STORED && h->method != METHOD_DEFLATE)
		return tm_err(err, TM_EINPUT,
			      "Unsupported compression type at offset 0x%llx. type=%x. Only deflate and no "
			      "compression are supported.",
			      at, h->method);
	if ((h->flags & FLAG_DESCRIPTOR) && h->method != METHOD_DEFLATE)
		return tm_err(err, TM_EINPUT,
			      "Unsupported compression type at offset 0x%llx. type=%x. Only deflate supported for "
			      "ZIPs compressed in a streaming fashion.",
			      at, h->method);
	if (size - off - LOCAL_SIZE < nlen + xlen)
		return 0;
	p = breader_get(r, off, LOCAL_SIZE + nlen + xlen, err);
	if (!p)
		return err && err->code != TM_OK ? -1 : 0;
	h->name = tm_xstrndup((const char *)p + LOCAL_SIZE, nlen);
	h->data = off + LOCAL_SIZE + nlen + xlen;

	/* Zip64: 64-bit sizes replace the sentinels, uncompressed first. */
	const unsigned char *x = p + LOCAL_SIZE + nlen, *xend = x + xlen;
	while (xend - x >= 4) {
		uint16_t id = tm_le16_(x), sz = tm_le16_(x + 2);
		x += 4;
		if (xend - x < sz)
			break;
		if (id == EXTRA_ZIP64) {
			const unsigned char *f = x, *fend = x + sz;
			h->zip64 = 1;
			static const char *const which[] = {"uncompressed", "compressed"};
			uint64_t *field[] = {&h->usize, &h->csize};
			for (int k = 0; k < 2; k++) {
				if (*field[k] != SENTINEL32)
					continue;
				if (fend - f < 8)
					return tm_err(err, TM_EINPUT,
						      "Malformed ZIP at offset 0x%llx. Zip64 extra field is too short "
						      "to hold the %s size.",
						      (unsigned long long)h->data, which[k]);
				*field[k] = tm_le64_(f);
				f += 8;
			}
		}
		x += sz;
	}
	return 1;
}

/* Sizes of a streamed member from its data descriptor (formats.md §2.1:
 * descriptors carry a signature; 64-bit sizes when the local header had a
 * zip64 field). Fast path: the central directory's compressed size,
 * accepted when a descriptor with the same size sits right after it. */
static int local_descriptor(breader *r, tm_cursor *c, uint64_t size, const cd_index *ix, local_hdr *h,
			    uint64_t *next, tm_error *err)
{
	size_t dlen = h->zip64 ? ZIP64_DESCRIPTOR_SIZE : DESCRIPTOR_SIZE;
	const cd_entry *e = cd_find(ix, h->off);
	uint64_t clen = 0;
	int known = 0;
	if (e && e->csize <= size - h->data && dlen <= size - h->data - e->csize) {
		const unsigned char *d = breader_get(r, h->data + e->csize, dlen, err);
		if (!d && err && err->code != TM_OK)
			return -1;
		uint64_t dcsize = d ? (h->zip64 ? tm_le64_(d + 8) : tm_le32_(d + 8)) : 0;
		if (d && tm_le32_(d) == SIG_DESCRIPTOR && dcsize == e->csize) {
			clen = e->csize;
			known = 1;
		}
	}
	if (!known) {
		int rc = deflate_extent(c, h->data, &clen, err);
		if (rc <= 0)
			return rc;
	}
	if (dlen > size - h->data - clen)
		return 0; /* descriptor cut off: the member never completes */
	const unsigned char *d = breader_get(r, h->data + clen, dlen, err);
	if (!d)
		return err && err->code != TM_OK ? -1 : 0;
	if (tm_le32_(d) != SIG_DESCRIPTOR)
		return tm_err(err, TM_EINPUT, "Invalid signature found at offset 0x%llx. Actual=0x%x, expected=0x%x",
			      (unsigned long long)(h->data + clen + dlen), tm_le32_(d), SIG_DESCRIPTOR);
	h->crc = tm_le32_(d + 4);
	h->csize = clen;
	h->usize = h->zip64 ? tm_le64_(d + 16) : tm_le32_(d + 12);
	*next = h->data + clen + dlen;
	return 1;
}

int tm_zip_list(tm_blob *zip, tm_listing *out, tm_error *err)
{
	tm_error local_err = {0};
	if (!err) /* internal checks below read err->code */
		err = &local_err;
	tm_err_clear(err);
	memset(out, 0, sizeof(*out));
	out->dir_hash = TM_HASH_INIT;
	int64_t ssize = tm_blob_size(zip);
	if (ssize < 0 && (ssize = tm_blob_measure(zip, err)) < 0)
		return -1;
	uint64_t size = (uint64_t)ssize;
	tm_cursor *c = tm_cursor_open(zip, err);
	if (!c)
		return -1;
	breader r = {.c = c, .buf = tm_xmalloc(BREADER_CAP), .ahead = AHEAD_CENTRAL};
	cd_index ix = {0};
	size_t cap = 0;
	int rc = cd_read(&r, size, &ix, err);
	r.len = 0;
	r.ahead = AHEAD_LOCAL;
	/* Offsets strictly increase (every header has 30 bytes or more), so the
	 * walk ends whatever the input. */
	for (uint64_t off = 0; rc == 0;) {
		local_hdr h = {.off = off};
		int k = local_read(&r, size, &h, err);
		uint64_t next = 0;
		if (k > 0 && (h.flags & FLAG_DESCRIPTOR)) {
			k = local_descriptor(&r, c, size, &ix, &h, &next, err);
		} else if (k > 0) {
			if (h.csize > size - h.data)
				k = 0; /* data cut off: the member never completes */
			next = h.data + h.csize;
		}
		if (k <= 0) {
			free(h.name);
			rc = k;
			break;
		}
		/* What the walk read of the member: its local header's fields,
		 * sizes and CRC-32 (from a data descriptor where it had one). */
		uint64_t fields[] = {off, h.version, h.flags, h.method, h.mtime, h.mdate, h.crc, h.csize, h.usize, h.data};
		out->dir_hash = tm_hash(out->dir_hash, fields, sizeof fields);
		out->dir_hash = tm_hash(out->dir_hash, h.name, strlen(h.name));
		tm_entry *e = tm_listing_add_(out, &cap);
		const cd_entry *ce = cd_find(&ix, off);
		e->name = h.name;
		e->kind = TM_ENTRY_FILE;
		e->offset = off;
		e->mode = ce ? ce->mode : 0;
		e->mtime = dos_time(h.mdate, h.mtime);
		if (h.method == METHOD_STORED) {
			/* the reference takes a stored member's bytes as they are */
			e->size = h.csize;
			e->blob = tm_blob_range_(zip, h.data, h.csize);
		} else if (h.usize == 0) {
			/* the reference does not inflate an empty member */
			e->size = 0;
			e->blob = tm_blob_range_(zip, h.data, 0);
		} else {
			e->size = h.usize > INT64_MAX ? INT64_MAX : h.usize;
			e->blob = tm_blob_inflate_(zip, off, h.data, h.csize, h.usize, h.crc);
		}
		off = next;
	}
	free(ix.e);
	free(r.buf);
	tm_cursor_close(c);
	if (rc != 0) {
		tm_listing_free(out);
		return -1;
	}
	tm_err_clear(err);
	return 0;
}
