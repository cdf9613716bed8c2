/* core/container/decompress.c - blobs whose bytes are decoded: a deflated ZIP member
 * (raw inflate from its data offset) and a decompressed stream (gzip/zlib
 * with zlib; zstd, bzip2 and xz through libarchive's "raw" format).
 *
 * Every cursor has its own decoder. Reading at the decoder's position
 * continues; a forward seek decodes and discards; a backward seek restarts
 * the decoder. Deflate data (ZIP members, gzip/zlib streams) resumes
 * instead from the nearest checkpoint of its blob's index (built by
 * whichever cursor decodes a region first, after zlib's examples/zran.c),
 * also on a forward seek that passes a checkpoint.
 */
#include "container/archive_internal.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "container/la.h"

/* formats.md §2.3 texts. */
static const char ERR_CORRUPT[] = "Failed to decompress trace chunk (ERR:tp-corrupt)";
static const char ERR_INCOMPLETE[] = "Compressed stream incomplete, trace is likely corrupt (ERR:tp-corrupt)";

/* ---- the decoding read shared by every decoded kind ----------------------- */

typedef struct decoder {
	uint64_t out;    /* decoded bytes produced so far: the decoder's position */
	int broken;      /* decoding failed at `out`; `fail` says why */
	tm_error *fail;  /* allocated then: a cursor is opened per member to
			  * sniff it, and zeroing a message's room for each of
			  * 100,000 members was a fifth of the instructions of
			  * listing them (if little of the time) */
	unsigned char *scratch; /* where skipped bytes are decoded to */
	/* Make the decoder ready to produce at some position <= target
	 * (restart, resume from a checkpoint, or keep going). */
	int (*seek)(tm_cursor *c, uint64_t target, tm_error *err);
	/* Decode up to n bytes at `out` (advancing it): >0, 0 at the end, -1. */
	ssize_t (*produce)(tm_cursor *c, unsigned char *buf, size_t n, tm_error *err);
} decoder;

static ssize_t dec_fail(decoder *d, const tm_error *e, tm_error *err)
{
	d->broken = 1;
	if (!d->fail)
		d->fail = tm_xmalloc(sizeof(*d->fail));
	*d->fail = *e;
	if (err)
		*err = *d->fail;
	return -1;
}

static ssize_t dec_pread(tm_cursor *c, void *buf, size_t n, uint64_t off, tm_error *err)
{
	decoder *d = c->state;
	tm_error e; /* only its head: the message is written when it fails */
	tm_err_clear(&e);
	ssize_t r;
	if (d->broken && off >= d->out) {
		if (err)
			*err = *d->fail;
		return -1;
	}
	if (d->seek(c, off, &e) != 0)
		return dec_fail(d, &e, err);
	while (d->out < off) {
		if (!d->scratch)
			d->scratch = tm_xmalloc(TM_IO_CHUNK);
		uint64_t gap = off - d->out;
		r = d->produce(c, d->scratch, gap < TM_IO_CHUNK ? (size_t)gap : TM_IO_CHUNK, &e);
		if (r < 0)
			return dec_fail(d, &e, err);
		if (r == 0)
			return 0;
	}
	size_t got = 0;
	while (got < n) {
		r = d->produce(c, (unsigned char *)buf + got, n - got, &e);
		if (r < 0)
			return dec_fail(d, &e, err);
		if (r == 0)
			break;
		got += (size_t)r;
	}
	return (ssize_t)got;
}

static void dec_reset(decoder *d)
{
	d->out = 0;
	d->broken = 0;
}

/* zlib takes uInt counts. */
static uInt clamp_uint(size_t n)
{
	return n > UINT_MAX ? UINT_MAX : (uInt)n;
}

/* ---- checkpoint indexes (zlib's examples/zran.c) ---------------------------- */

/* One checkpoint every CKPT_SPAN bytes of output at first; when there are
 * CKPT_MAX points, every other one is dropped and the span doubles, so an
 * index never exceeds CKPT_MAX * 32 KiB (8 MiB) per blob. Each member of a
 * tar.gz opens its own cursor and decodes from the point before it: with
 * points 8 MiB apart, 100 members of 0.7 MB decoded their stream seven
 * times over (the scan 2.6 s where zcat takes 0.4 s). */
#define CKPT_WINDOW 32768u
#define CKPT_SPAN ((uint64_t)256 << 10)
#define CKPT_MAX 256

typedef struct ckpt {
	uint64_t out;     /* output offset */
	uint64_t in;      /* offset of the first compressed byte not consumed */
	unsigned bits;    /* unused bits of the byte at in - 1 still to be decoded */
	unsigned trailer; /* gzip: 8 (gzip) or 4 (zlib), the member's trailer after its deflate data */
	unsigned wlen;
	unsigned char *window;
} ckpt;

/* Shared by every cursor of one blob; built by whichever cursor decodes a
 * region first. */
typedef struct ckpt_index {
	pthread_mutex_t lock; /* guards everything but next_out */
	ckpt *pts;
	size_t n, cap;
	uint64_t span;
	_Atomic uint64_t next_out; /* output offset from which a new point is wanted */
} ckpt_index;

static void index_init(ckpt_index *ix)
{
	ix->pts = NULL;
	ix->n = ix->cap = 0;
	pthread_mutex_init(&ix->lock, NULL);
	ix->span = CKPT_SPAN;
	atomic_init(&ix->next_out, CKPT_SPAN);
}

static void index_fini(ckpt_index *ix)
{
	for (size_t i = 0; i < ix->n; i++)
		free(ix->pts[i].window);
	free(ix->pts);
	pthread_mutex_destroy(&ix->lock);
}

/* A cursor's CKPT_WINDOW scratch buffer, allocated the first time a point
 * is taken or made: most members of an archive of many small ones never
 * need one. */
static unsigned char *window_of(unsigned char **window)
{
	if (!*window)
		*window = tm_xmalloc(CKPT_WINDOW);
	return *window;
}

/* How a cursor at output offset `at` (-1: not started) reaches `target`:
 * when a point at or before the target lies beyond `at`, copy it (its
 * window into *window, see window_of) to *p and return 1; else 0. */
static int index_pick(ckpt_index *ix, int64_t at, uint64_t target, ckpt *p, unsigned char **window)
{
	int use = 0;
	pthread_mutex_lock(&ix->lock);
	size_t lo = 0, hi = ix->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (ix->pts[mid].out <= target)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo > 0 && (at < 0 || ix->pts[lo - 1].out > (uint64_t)at)) {
		*p = ix->pts[lo - 1];
		memcpy(window_of(window), p->window, p->wlen);
		p->window = *window;
		use = 1;
	}
	pthread_mutex_unlock(&ix->lock);
	return use;
}

static void index_add(ckpt_index *ix, const ckpt *p)
{
	pthread_mutex_lock(&ix->lock);
	uint64_t last = ix->n ? ix->pts[ix->n - 1].out : 0;
	if (p->out >= last + ix->span) {
		if (ix->n == CKPT_MAX) {
			size_t k = 0;
			for (size_t i = 0; i < ix->n; i++) {
				if (i % 2 == 0)
					ix->pts[k++] = ix->pts[i];
				else
					free(ix->pts[i].window);
			}
			ix->n = k;
			ix->span *= 2;
		}
		TM_GROW(ix->pts, ix->cap, ix->n + 1);
		ckpt *q = &ix->pts[ix->n++];
		*q = *p;
		q->window = tm_xmalloc(p->wlen ? p->wlen : 1);
		memcpy(q->window, p->window, p->wlen);
	}
	atomic_store(&ix->next_out, ix->pts[ix->n - 1].out + ix->span);
	pthread_mutex_unlock(&ix->lock);
}

static uint64_t index_last(ckpt_index *ix)
{
	pthread_mutex_lock(&ix->lock);
	uint64_t out = ix->n ? ix->pts[ix->n - 1].out : 0;
	pthread_mutex_unlock(&ix->lock);
	return out;
}

/* Whether inflate should stop at block boundaries (Z_BLOCK) in the next
 * call: only worth it when the output may reach the next wanted point. */
static int index_wants(ckpt_index *ix, uint64_t out, size_t room)
{
	return out + room >= atomic_load_explicit(&ix->next_out, memory_order_relaxed);
}

/* After an inflate(Z_BLOCK) call: at a block boundary past the next wanted
 * point, record where the decoder is. `in` is the offset of the next
 * unconsumed compressed byte; *window the cursor's scratch (window_of). */
static void index_offer(ckpt_index *ix, z_stream *z, uint64_t out, uint64_t in, unsigned trailer,
			unsigned char **window)
{
	int at_boundary = (z->data_type & 128) && !(z->data_type & 64);
	if (!at_boundary || out < atomic_load(&ix->next_out))
		return;
	uInt wlen = CKPT_WINDOW;
	if (inflateGetDictionary(z, window_of(window), &wlen) != Z_OK)
		return;
	ckpt p = {.out = out, .in = in, .bits = (unsigned)z->data_type & 7, .trailer = trailer,
		  .wlen = wlen, .window = *window};
	index_add(ix, &p);
}

/* Resume a raw inflate at a point: primed with the bits left in the
 * previous byte (`prev`) and the window that preceded the point. */
static int index_resume(z_stream *z, const ckpt *p, unsigned char prev)
{
	inflateReset2(z, -15);
	if (p->bits)
		inflatePrime(z, (int)p->bits, prev >> (8 - p->bits));
	return inflateSetDictionary(z, p->window, p->wlen) == Z_OK ? 0 : -1;
}

/* ---- deflated ZIP members ------------------------------------------------- */

typedef struct zip_member {
	uint64_t clen, usize;
	uint32_t crc;
	uint64_t header;   /* its local header, where messages read its name */
	ckpt_index *index; /* a large member is read at random through FUSE; NULL
	                      for one shorter than the checkpoint span, which never
	                      gets a point (an archive may hold 100,000 members) */
} zip_member;

typedef struct zip_cursor {
	decoder d;
	z_stream z;
	int z_ready;
	int started;
	unsigned char *in;
	size_t in_cap, in_len, in_pos;
	uint64_t in_off; /* compressed bytes fetched so far */
	uint32_t crc;    /* of the output so far, when decoding started at 0 */
	int crc_valid;
	int ended;       /* the deflate stream ended */
	unsigned char *window;
} zip_cursor;

/* The reference's Decompress() result codes, printed in its message. */
enum { ZIP_RC_OK = 0, ZIP_RC_ERROR = 2 };

/* The member's name for a message, read back from its local header: the
 * blob keeps no copy (an archive may hold 100,000 members). */
static const char *member_name(tm_cursor *c, char *buf, size_t cap)
{
	const zip_member *m = c->blob->priv;
	unsigned char h[30];
	tm_error e;
	tm_err_clear(&e);
	if (tm_read_full_(c->src, h, sizeof h, m->header, &e) == (ssize_t)sizeof h) {
		size_t n = tm_le16_(h + 26) < cap ? tm_le16_(h + 26) : cap - 1;
		if (tm_read_full_(c->src, buf, n, m->header + sizeof h, &e) == (ssize_t)n) {
			buf[n] = '\0'; /* a name ends at a NUL, as the listing reads it */
			return buf;
		}
	}
	snprintf(buf, cap, "the member at offset 0x%llx", (unsigned long long)m->header);
	return buf;
}

static int zip_decomp_err(tm_cursor *c, int rc, tm_error *err)
{
	const zip_member *m = c->blob->priv;
	char name[TM_ERR_MAX];
	return tm_err(err, TM_EINPUT, "Zip decompression error (%d) on %s (c=%llu, u=%llu) (ERR:tp-corrupt)", rc,
		      member_name(c, name, sizeof name), (unsigned long long)m->clen, (unsigned long long)m->usize);
}

static int zip_restore(tm_cursor *c, const ckpt *p, tm_error *err)
{
	zip_cursor *s = c->state;
	unsigned char prev = 0;
	if (p->bits) {
		ssize_t r = tm_read_full_(c->src, &prev, 1, c->blob->off + p->in - 1, err);
		if (r < 0)
			return -1;
		if (r == 0)
			return zip_decomp_err(c, ZIP_RC_OK, err);
	}
	dec_reset(&s->d);
	if (index_resume(&s->z, p, prev) != 0)
		return zip_decomp_err(c, ZIP_RC_ERROR, err);
	s->d.out = p->out;
	s->started = 1;
	s->in_len = s->in_pos = 0;
	s->in_off = p->in;
	s->crc_valid = 0; /* a pass from the start checks it (archive.h) */
	s->ended = 0;
	return 0;
}

static int zip_seek(tm_cursor *c, uint64_t target, tm_error *err)
{
	zip_cursor *s = c->state;
	zip_member *m = c->blob->priv;
	if (!s->z_ready) {
		if (inflateInit2(&s->z, -15) != Z_OK)
			return tm_err(err, TM_ENOMEM, "zlib: cannot initialise inflate");
		s->z_ready = 1;
	}
	int usable = s->started && !s->d.broken && s->d.out <= target;
	ckpt p;
	if (m->index && index_pick(m->index, usable ? (int64_t)s->d.out : -1, target, &p, &s->window))
		return zip_restore(c, &p, err);
	if (usable)
		return 0;
	inflateReset2(&s->z, -15);
	dec_reset(&s->d);
	s->started = 1;
	s->in_len = s->in_pos = 0;
	s->in_off = 0;
	s->crc = 0;
	s->crc_valid = 1;
	s->ended = 0;
	return 0;
}

/* One inflate step into buf; returns bytes produced or -1. */
static ssize_t zip_step(tm_cursor *c, unsigned char *buf, size_t n, tm_error *err)
{
	zip_cursor *s = c->state;
	zip_member *m = c->blob->priv;
	uint64_t left = m->clen - s->in_off;
	if (s->in_pos == s->in_len && left > 0) {
		ssize_t r = tm_read_full_(c->src, s->in, left < s->in_cap ? (size_t)left : s->in_cap,
					  c->blob->off + s->in_off, err);
		if (r < 0)
			return -1;
		if (r == 0) {
			char name[TM_ERR_MAX];
			return tm_err(err, TM_EINPUT, "%s: compressed data extends past the end of the archive",
				      member_name(c, name, sizeof name));
		}
		s->in_len = (size_t)r;
		s->in_pos = 0;
		s->in_off += (uint64_t)r;
	}
	s->z.next_in = s->in + s->in_pos;
	s->z.avail_in = clamp_uint(s->in_len - s->in_pos);
	s->z.next_out = buf;
	s->z.avail_out = clamp_uint(n);
	int want_point = m->index && index_wants(m->index, s->d.out, s->z.avail_out);
	int ret = inflate(&s->z, want_point ? Z_BLOCK : Z_NO_FLUSH);
	size_t produced = clamp_uint(n) - s->z.avail_out;
	/* With every compressed byte given, inflate may still hold bits of
	 * the last block (a Z_BLOCK stop took them in): only when it can make
	 * no progress has it run out of input, the reference's Z_OK, kOk. */
	if (ret == Z_BUF_ERROR && s->in_pos == s->in_len && left == 0)
		return zip_decomp_err(c, ZIP_RC_OK, err);
	s->in_pos = (size_t)(s->z.next_in - s->in);
	if (s->crc_valid)
		s->crc = (uint32_t)crc32(s->crc, buf, (uInt)produced);
	if (ret == Z_STREAM_END)
		s->ended = 1;
	else if (ret != Z_OK)
		return zip_decomp_err(c, ZIP_RC_ERROR, err);
	else if (want_point)
		index_offer(m->index, &s->z, s->d.out + produced, s->in_off - (s->in_len - s->in_pos), 0,
			    &s->window);
	return (ssize_t)produced;
}

/* After the last byte: the reference inflates into a buffer of exactly
 * `usize` bytes and requires Z_STREAM_END there, then compares CRC-32. */
static int zip_check_end(tm_cursor *c, tm_error *err)
{
	zip_cursor *s = c->state;
	const zip_member *m = c->blob->priv;
	unsigned char extra;
	while (!s->ended) {
		ssize_t r = zip_step(c, &extra, 1, err);
		if (r < 0)
			return -1;
		if (r > 0) /* more data than the header says: the reference's buffer fills, kOk */
			return zip_decomp_err(c, ZIP_RC_OK, err);
	}
	if (s->crc_valid && s->crc != m->crc) {
		char name[TM_ERR_MAX];
		return tm_err(err, TM_EINPUT, "Zip CRC32 failure on %s (actual: %x, expected: %x) (ERR:tp-corrupt)",
			      member_name(c, name, sizeof name), s->crc, m->crc);
	}
	return 0;
}

static ssize_t zip_produce(tm_cursor *c, unsigned char *buf, size_t n, tm_error *err)
{
	zip_cursor *s = c->state;
	const zip_member *m = c->blob->priv;
	uint64_t left = m->usize - s->d.out;
	if (left == 0)
		return 0;
	if (n > left)
		n = (size_t)left;
	size_t got = 0;
	while (got < n) {
		if (s->ended) { /* shorter than the stored size: a size we promised cannot be kept */
			char name[TM_ERR_MAX];
			return tm_err(err, TM_EINPUT,
				      "%s: deflate data ends after %llu of %llu bytes (ERR:tp-corrupt)",
				      member_name(c, name, sizeof name), (unsigned long long)s->d.out,
				      (unsigned long long)m->usize);
		}
		ssize_t r = zip_step(c, buf + got, n - got, err);
		if (r < 0)
			return -1;
		got += (size_t)r;
		s->d.out += (uint64_t)r;
	}
	if (s->d.out == m->usize && zip_check_end(c, err) != 0)
		return -1;
	return (ssize_t)got;
}

static int zip_open(tm_cursor *c, tm_error *err)
{
	zip_cursor *s = tm_xcalloc(1, sizeof(*s));
	s->d.seek = zip_seek;
	s->d.produce = zip_produce;
	/* A small member needs no more than its compressed bytes. */
	const zip_member *m = c->blob->priv;
	s->in_cap = m->clen < TM_IO_CHUNK ? (size_t)m->clen + 1 : TM_IO_CHUNK;
	s->in = tm_xmalloc(s->in_cap);
	c->state = s;
	return 0;
}

static void zip_close(tm_cursor *c)
{
	zip_cursor *s = c->state;
	if (!s)
		return;
	if (s->z_ready)
		inflateEnd(&s->z);
	free(s->in);
	free(s->window);
	free(s->d.scratch);
	free(s->d.fail);
	free(s);
}

static void zip_free(tm_blob *b)
{
	zip_member *m = b->priv;
	if (m->index) {
		index_fini(m->index);
		free(m->index);
	}
	free(m);
}

static const blob_ops zip_ops = {
	.open = zip_open,
	.pread = dec_pread,
	.close = zip_close,
	.free = zip_free,
};

tm_blob *tm_blob_inflate_(tm_blob *src, uint64_t header, uint64_t off, uint64_t clen, uint64_t usize,
			  uint32_t crc)
{
	zip_member *m = tm_xcalloc(1, sizeof(*m));
	m->clen = clen;
	m->usize = usize > INT64_MAX ? INT64_MAX : usize;
	m->crc = crc;
	m->header = header;
	if (m->usize >= CKPT_SPAN) {
		m->index = tm_xmalloc(sizeof(*m->index));
		index_init(m->index);
	}
	return tm_blob_new_(&zip_ops, src, off, (int64_t)m->usize, m);
}

/* ---- decompressed streams -------------------------------------------------- */

/* formats.md §2.3: "TRACE:\n" is searched for in the first compressed
 * chunk; the reference reads a top-level file in 1 MiB chunks. */
#define TRACE_SEARCH_WINDOW ((size_t)1 << 20)

typedef struct stream_blob {
	tm_codec codec;
	ckpt_index index; /* gzip; its lock also guards the two fields below */
	int start_known;
	uint64_t start;   /* gzip: source offset where decoding starts (after "TRACE:\n") */
} stream_blob;

static void stream_free(tm_blob *b)
{
	stream_blob *sb = b->priv;
	index_fini(&sb->index);
	free(sb);
}

static uint64_t gz_resume_hint(tm_blob *b)
{
	stream_blob *sb = b->priv;
	return index_last(&sb->index);
}

/* ---- gzip / zlib streams -------------------------------------------------- */

typedef struct gz_cursor {
	decoder d;
	z_stream z;
	int z_ready;
	gz_header head;   /* tells gzip (done = 1) from zlib (done = -1) framing */
	unsigned char *in;
	size_t in_cap, in_len, in_pos;
	uint64_t in_off;  /* source offset of in[in_len] */
	int started;
	int raw;          /* resumed from a checkpoint: raw deflate, the trailer is skipped by hand */
	unsigned trailer; /* raw: trailer length of the current member */
	uint64_t skip;    /* raw: trailer bytes still to skip */
	int mid;          /* inside a member (the reference's kMidStream) */
	int at_end;
	unsigned char *window; /* CKPT_WINDOW bytes */
} gz_cursor;

/* Back to automatic gzip/zlib header detection for the next member
 * (windowBits 15 + 32: both framings are accepted, formats.md §2.3). */
static void gz_member_reset(gz_cursor *s)
{
	inflateReset2(&s->z, 15 + 32);
	memset(&s->head, 0, sizeof(s->head));
	inflateGetHeader(&s->z, &s->head);
	s->raw = 0;
	s->mid = 0;
	s->skip = 0;
}

static void gz_input_reset(gz_cursor *s, uint64_t in_off)
{
	if (s->in_cap != TM_IO_CHUNK) {
		free(s->in);
		s->in = tm_xmalloc(TM_IO_CHUNK);
		s->in_cap = TM_IO_CHUNK;
	}
	s->in_len = s->in_pos = 0;
	s->in_off = in_off;
}

/* Start from the beginning of the stream. The first cursor to start also
 * finds where decoding begins (after "TRACE:\n") and keeps the bytes it
 * read as its first input. */
static int gz_fresh_start(tm_cursor *c, tm_error *err)
{
	gz_cursor *s = c->state;
	stream_blob *sb = c->blob->priv;
	gz_member_reset(s);
	dec_reset(&s->d);
	s->at_end = 0;
	s->started = 1;

	pthread_mutex_lock(&sb->index.lock);
	int known = sb->start_known;
	uint64_t start = sb->start;
	pthread_mutex_unlock(&sb->index.lock);
	if (known) {
		gz_input_reset(s, start);
		return 0;
	}
	unsigned char *first = tm_xmalloc(TRACE_SEARCH_WINDOW);
	ssize_t r = tm_read_full_(c->src, first, TRACE_SEARCH_WINDOW, 0, err);
	if (r < 0) {
		free(first);
		s->started = 0;
		return -1;
	}
	static const char marker[] = "TRACE:\n";
	const unsigned char *hit = memmem(first, (size_t)r, marker, sizeof(marker) - 1);
	start = hit ? (uint64_t)(hit - first) + sizeof(marker) - 1 : 0;
	pthread_mutex_lock(&sb->index.lock);
	sb->start = start;
	sb->start_known = 1;
	pthread_mutex_unlock(&sb->index.lock);
	free(s->in);
	s->in = first;
	s->in_cap = TRACE_SEARCH_WINDOW;
	s->in_len = (size_t)r;
	s->in_pos = (size_t)start;
	s->in_off = (uint64_t)r;
	return 0;
}

/* Resume at a checkpoint: raw deflate inside the member, whose trailer
 * is then skipped by hand before automatic framing resumes. */
static int gz_restore(tm_cursor *c, const ckpt *p, tm_error *err)
{
	gz_cursor *s = c->state;
	s->started = 0; /* until the restore has succeeded */
	uint64_t from = p->bits ? p->in - 1 : p->in;
	gz_input_reset(s, from);
	ssize_t r = tm_cursor_pread(c->src, s->in, s->in_cap, from, err);
	if (r < 0)
		return -1;
	if (p->bits && r == 0)
		return tm_err(err, TM_EINPUT, "%s", ERR_INCOMPLETE);
	s->in_len = (size_t)r;
	s->in_pos = p->bits ? 1 : 0;
	s->in_off = from + (uint64_t)r;
	dec_reset(&s->d);
	if (index_resume(&s->z, p, p->bits ? s->in[0] : 0) != 0)
		return tm_err(err, TM_EINPUT, "%s", ERR_CORRUPT);
	s->d.out = p->out;
	s->at_end = 0;
	s->started = 1;
	s->raw = 1;
	s->trailer = p->trailer;
	s->skip = 0;
	s->mid = 1;
	return 0;
}

static int gz_seek(tm_cursor *c, uint64_t target, tm_error *err)
{
	gz_cursor *s = c->state;
	stream_blob *sb = c->blob->priv;
	if (!s->z_ready) {
		if (inflateInit2(&s->z, 15 + 32) != Z_OK)
			return tm_err(err, TM_ENOMEM, "zlib: cannot initialise inflate");
		s->z_ready = 1;
	}
	int usable = s->started && !s->d.broken && s->d.out <= target;
	ckpt p;
	if (index_pick(&sb->index, usable ? (int64_t)s->d.out : -1, target, &p, &s->window))
		return gz_restore(c, &p, err);
	return usable ? 0 : gz_fresh_start(c, err);
}

static ssize_t gz_produce(tm_cursor *c, unsigned char *buf, size_t n, tm_error *err)
{
	gz_cursor *s = c->state;
	stream_blob *sb = c->blob->priv;
	size_t got = 0;
	while (got < n && !s->at_end) {
		if (s->in_pos == s->in_len) {
			gz_input_reset(s, s->in_off);
			ssize_t r = tm_cursor_pread(c->src, s->in, s->in_cap, s->in_off, err);
			if (r < 0)
				return -1;
			if (r == 0) {
				/* formats.md §2.3: input ending inside a member */
				if (s->mid)
					return tm_err(err, TM_EINPUT, "%s", ERR_INCOMPLETE);
				s->at_end = 1;
				tm_blob_set_size_(c->blob, (int64_t)s->d.out);
				break;
			}
			s->in_len = (size_t)r;
			s->in_off += (uint64_t)r;
		}
		if (s->skip) {
			size_t k = s->in_len - s->in_pos;
			if (k > s->skip)
				k = (size_t)s->skip;
			s->in_pos += k;
			s->skip -= k;
			if (!s->skip)
				gz_member_reset(s);
			continue;
		}
		s->z.next_in = s->in + s->in_pos;
		s->z.avail_in = clamp_uint(s->in_len - s->in_pos);
		s->z.next_out = buf + got;
		s->z.avail_out = clamp_uint(n - got);
		int want_point = index_wants(&sb->index, s->d.out, s->z.avail_out);
		int ret = inflate(&s->z, want_point ? Z_BLOCK : Z_NO_FLUSH);
		size_t produced = clamp_uint(n - got) - s->z.avail_out;
		size_t consumed = (size_t)(s->z.next_in - (s->in + s->in_pos));
		got += produced;
		s->d.out += produced;
		s->in_pos += consumed;
		if (ret == Z_STREAM_END) {
			/* RFC 1952 multi-member: the next member continues the same
			 * output. A resumed (raw) decoder still has the trailer to
			 * pass before the member is over. */
			if (s->raw)
				s->skip = s->trailer;
			else
				gz_member_reset(s);
			continue;
		}
		if (ret != Z_OK || (produced == 0 && consumed == 0))
			return tm_err(err, TM_EINPUT, "%s", ERR_CORRUPT);
		s->mid = 1;
		/* in automatic mode, a point only once the header is done */
		if (want_point && (s->raw || s->head.done != 0))
			index_offer(&sb->index, &s->z, s->d.out, s->in_off - (s->in_len - s->in_pos),
				    s->raw ? s->trailer : s->head.done == 1 ? 8 : 4, &s->window);
	}
	return (ssize_t)got;
}

static int gz_open(tm_cursor *c, tm_error *err)
{
	gz_cursor *s = tm_xcalloc(1, sizeof(*s));
	s->d.seek = gz_seek;
	s->d.produce = gz_produce;
	c->state = s;
	return 0;
}

static void gz_close(tm_cursor *c)
{
	gz_cursor *s = c->state;
	if (!s)
		return;
	if (s->z_ready)
		inflateEnd(&s->z);
	free(s->in);
	free(s->window);
	free(s->d.scratch);
	free(s->d.fail);
	free(s);
}

static const blob_ops gz_ops = {
	.open = gz_open,
	.pread = dec_pread,
	.close = gz_close,
	.free = stream_free,
	.resume_hint = gz_resume_hint,
};

/* ---- zstd, bzip2, xz through libarchive ----------------------------------- */

typedef struct la_cursor {
	decoder d;
	const tm_la *la; /* libarchive, loaded by the first such cursor */
	struct archive *a;
	tm_cursor *src;
	unsigned char *in;
	uint64_t in_off;
	int src_failed;
	tm_error src_err;
	int at_end;
} la_cursor;

static la_ssize_t la_read(struct archive *a, void *ctx, const void **buf)
{
	la_cursor *s = ctx;
	ssize_t r = tm_cursor_pread(s->src, s->in, TM_IO_CHUNK, s->in_off, &s->src_err);
	if (r < 0) {
		s->src_failed = 1;
		s->la->archive_set_error(a, EIO, "%s", s->src_err.msg);
		return -1;
	}
	s->in_off += (uint64_t)r;
	*buf = s->in;
	return r;
}

/* libarchive reports a stream cut short with these words; everything else
 * is corrupt data. The reference's two texts (formats.md §2.3) follow. */
static int la_error(la_cursor *s, tm_error *err)
{
	if (s->src_failed) {
		if (err)
			*err = s->src_err;
		return -1;
	}
	const char *msg = s->la->archive_error_string(s->a);
	static const char *const truncated[] = {"runcated", "remature", "nexpected end", "EOF",
						"No progress is possible" /* liblzma's LZMA_BUF_ERROR */};
	for (size_t i = 0; msg && i < sizeof(truncated) / sizeof(truncated[0]); i++)
		if (strstr(msg, truncated[i]))
			return tm_err(err, TM_EINPUT, "%s", ERR_INCOMPLETE);
	return tm_err(err, TM_EINPUT, "%s", ERR_CORRUPT);
}

/* The filter libarchive must find for each codec (xz also takes lzma). */
static const int la_filter[] = {
	[TM_CODEC_ZSTD] = ARCHIVE_FILTER_ZSTD,
	[TM_CODEC_BZIP2] = ARCHIVE_FILTER_BZIP2,
	[TM_CODEC_XZ] = ARCHIVE_FILTER_XZ,
};

static int la_seek(tm_cursor *c, uint64_t target, tm_error *err)
{
	la_cursor *s = c->state;
	const stream_blob *sb = c->blob->priv;
	if (s->a && !s->d.broken && target >= s->d.out)
		return 0;
	const tm_la *la = s->la;
	if (s->a)
		la->archive_read_free(s->a);
	dec_reset(&s->d);
	s->at_end = 0;
	s->src_failed = 0;
	s->in_off = 0;
	s->a = la->archive_read_new();
	if (!s->a)
		return tm_err(err, TM_ENOMEM, "libarchive: out of memory");
	switch (sb->codec) {
	case TM_CODEC_ZSTD: la->archive_read_support_filter_zstd(s->a); break;
	case TM_CODEC_BZIP2: la->archive_read_support_filter_bzip2(s->a); break;
	default:
		la->archive_read_support_filter_xz(s->a);
		la->archive_read_support_filter_lzma(s->a);
		break;
	}
	la->archive_read_support_format_raw(s->a);
	if (la->archive_read_open2(s->a, s, NULL, la_read, NULL, NULL) != ARCHIVE_OK)
		return la_error(s, err);
	struct archive_entry *entry;
	int r = la->archive_read_next_header(s->a, &entry);
	if (r == ARCHIVE_EOF && s->in_off == 0) { /* no input at all: nothing to decode */
		s->at_end = 1;
		return 0;
	}
	if (r != ARCHIVE_OK && r != ARCHIVE_WARN)
		return la_error(s, err);
	/* Without a matching filter the raw format would pass bytes through. */
	int code = la->archive_filter_code(s->a, 0);
	if (la->archive_filter_count(s->a) < 2 ||
	    (code != la_filter[sb->codec] && !(sb->codec == TM_CODEC_XZ && code == ARCHIVE_FILTER_LZMA)))
		return tm_err(err, TM_EINPUT, "%s", ERR_CORRUPT);
	return 0;
}

static ssize_t la_produce(tm_cursor *c, unsigned char *buf, size_t n, tm_error *err)
{
	la_cursor *s = c->state;
	size_t got = 0;
	while (got < n && !s->at_end) {
		la_ssize_t r = s->la->archive_read_data(s->a, buf + got, n - got);
		if (r < 0)
			return la_error(s, err);
		if (r == 0) {
			s->at_end = 1;
			tm_blob_set_size_(c->blob, (int64_t)(s->d.out + got));
		}
		got += (size_t)r;
	}
	s->d.out += got;
	return (ssize_t)got;
}

static int la_open(tm_cursor *c, tm_error *err)
{
	const tm_la *la = tm_la_get(err);
	if (!la)
		return -1;
	la_cursor *s = tm_xcalloc(1, sizeof(*s));
	s->la = la;
	s->d.seek = la_seek;
	s->d.produce = la_produce;
	s->src = c->src;
	s->in = tm_xmalloc(TM_IO_CHUNK);
	c->state = s;
	return 0;
}

static void la_close(tm_cursor *c)
{
	la_cursor *s = c->state;
	if (!s)
		return;
	if (s->a)
		s->la->archive_read_free(s->a);
	free(s->in);
	free(s->d.scratch);
	free(s->d.fail);
	free(s);
}

static const blob_ops la_ops = {
	.open = la_open,
	.pread = dec_pread,
	.close = la_close,
	.free = stream_free,
};

tm_blob *tm_blob_decompress(tm_blob *compressed, tm_codec codec, tm_error *err)
{
	stream_blob *sb = tm_xcalloc(1, sizeof(*sb));
	sb->codec = codec;
	index_init(&sb->index);
	int zlib = codec == TM_CODEC_GZIP || codec == TM_CODEC_CTRACE;
	return tm_blob_new_(zlib ? &gz_ops : &la_ops, compressed, 0, -1, sb);
}
