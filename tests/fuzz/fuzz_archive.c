/* tests/fuzz/fuzz_archive.c - the input as a top-level file, walked the way
 * the merge walks it (spec/formats.md §2): sniff it; list a ZIP or TAR and
 * read every member fully through a cursor (plus a few random reads), then
 * walk each member; decompress a gzip/zstd/bzip2/xz/ctrace stream and walk
 * what comes out. Decompressed output is capped so that a small bomb stays
 * a small test; nesting stops at depth 3. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "container/archive.h"
#include "detect/detect.h"

#define MAX_DEPTH 3
#define MAX_OUTPUT ((uint64_t)16 << 20)

static void walk(tm_blob *b, int depth, uint64_t *budget);

/* Read the whole blob through one cursor; 1 when the end was reached
 * within the budget. Also checks that a read repeated after a backward
 * seek gives the same bytes. */
static int read_all(tm_blob *b, uint64_t *budget)
{
	tm_error err;
	tm_cursor *c = tm_cursor_open(b, &err);
	if (!c)
		return 0;
	unsigned char buf[65536], first[64], again[64];
	ssize_t first_n = -1, r;
	uint64_t off = 0;
	int done = 0;
	while (*budget > 0) {
		size_t want = *budget < sizeof buf ? (size_t)*budget : sizeof buf;
		r = tm_cursor_read(c, buf, want, &err);
		if (r <= 0) {
			done = r == 0;
			break;
		}
		if (off == 0) {
			first_n = r < (ssize_t)sizeof first ? r : (ssize_t)sizeof first;
			memcpy(first, buf, (size_t)first_n);
		}
		off += (uint64_t)r;
		*budget -= (uint64_t)r;
	}
	if (first_n > 0) {
		r = tm_cursor_pread(c, again, (size_t)first_n, 0, &err);
		if (r != first_n || memcmp(first, again, (size_t)first_n) != 0)
			abort(); /* a backward seek must give the same bytes */
	}
	/* a read far past the end is 0 or an error, never a crash */
	tm_cursor_pread(c, buf, 16, off + 1000, &err);
	tm_cursor_close(c);
	return done;
}

static void walk_listing(tm_listing *l, int depth, uint64_t *budget)
{
	for (size_t i = 0; i < l->n; i++) {
		tm_entry *e = &l->entries[i];
		tm_member_name_is_hidden(e->name);
		if (!e->blob)
			continue;
		if (read_all(e->blob, budget) && tm_blob_size(e->blob) != (int64_t)e->size)
			abort(); /* a member read to its end has the listed size */
		walk(e->blob, depth + 1, budget);
	}
}

static void walk(tm_blob *b, int depth, uint64_t *budget)
{
	if (depth > MAX_DEPTH || *budget == 0)
		return;
	unsigned char head[TM_SNIFF_BYTES];
	tm_error err;
	ssize_t n = tm_blob_head(b, head, sizeof head, &err);
	if (n < 0)
		return;
	tm_type t = tm_detect(head, (size_t)n);
	tm_listing l;
	switch (t) {
	case TM_TYPE_ZIP:
		if (tm_zip_list(b, &l, &err) == 0) {
			walk_listing(&l, depth, budget);
			tm_listing_free(&l);
		}
		return;
	case TM_TYPE_TAR:
		if (tm_tar_list(b, &l, &err) == 0) {
			walk_listing(&l, depth, budget);
			tm_listing_free(&l);
		}
		return;
	case TM_TYPE_GZIP:
	case TM_TYPE_ZSTD:
	case TM_TYPE_BZIP2:
	case TM_TYPE_XZ:
	case TM_TYPE_CTRACE: {
		static const tm_codec codec_of[TM_TYPE_COUNT] = {
			[TM_TYPE_GZIP] = TM_CODEC_GZIP,   [TM_TYPE_ZSTD] = TM_CODEC_ZSTD,
			[TM_TYPE_BZIP2] = TM_CODEC_BZIP2, [TM_TYPE_XZ] = TM_CODEC_XZ,
			[TM_TYPE_CTRACE] = TM_CODEC_CTRACE,
		};
		tm_blob *d = tm_blob_decompress(b, codec_of[t], &err);
		if (!d)
			return;
		/* only a stream that ends within the budget is walked further
		 * (listing a TAR decodes its stream to the end) */
		if (read_all(d, budget) && tm_blob_measure(d, &err) >= 0)
			walk(d, depth + 1, budget);
		tm_blob_unref(d);
		return;
	}
	default:
		return;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint64_t budget = MAX_OUTPUT;
	tm_blob *b = tm_blob_open_memory(data, size);
	walk(b, 0, &budget);
	tm_blob_unref(b);
	return 0;
}
