/* tests/fuzz/fuzz_export.c - the export tier on any input: the input as a
 * whole archive (or a bare trace) is merged (tm_merge_open on a memfd
 * path, tm_scan_run), then the generation pass builds merged.pftrace,
 * timeline.tsv and the per-machine tables, and the merged trace is merged
 * again on its own. Checked on the way: each output's size is what its
 * file holds; the machines' timelines add up to the whole one; a
 * re-import of merged.pftrace never fails when the input did not; the
 * pass that is the scan too makes the same merged.pftrace. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fuzz_input.h"
#include "pass/gen.h"
#include "input/merge.h"
#include "formats/registry.h"
#include "scan/scan.h"

static void check_size(int fd, uint64_t size)
{
	struct stat st;
	if (fstat(fd, &st) != 0 || (uint64_t)st.st_size != size) {
		fprintf(stderr, "spooled size %llu, file holds %lld\n", (unsigned long long)size,
			(long long)st.st_size);
		abort();
	}
}

/* The machines' streams: extents end to end in stream order, their sum
 * the stream's size, each inside its file (the streams' or, for a
 * `whole` one, the whole merge's; a `list` one's places in the streams'),
 * and few: at most one per 4 KiB of the stream past the first two, where
 * they refer to the whole file. */
static void check_parts(const tm_spooled *sp)
{
	struct stat st, whole = {0};
	if (sp->src.read) /* made when read: no extents */
		return;
	if (sp->n_mach && fstat(sp->mach_fd, &st) != 0)
		abort();
	if (sp->fd >= 0 && fstat(sp->fd, &whole) != 0)
		abort();
	for (size_t i = 0; i < sp->n_mach; i++) {
		const tm_part *pt = &sp->mach[i];
		uint64_t off = 0;
		size_t refs = 0;
		for (size_t k = 0; k < pt->n_ext; k++) {
			const tm_ext *e = &pt->ext[k];
			refs += e->whole != 0;
			if (e->whole && sp->fd < 0) {
				fprintf(stderr, "machine %zu: extent %zu refers to no file\n", i, k);
				abort();
			}
			/* a list's places lie in the streams' file, its bytes in the whole */
			uint64_t file = (uint64_t)(e->whole == TM_EXT_WHOLE ? whole.st_size : st.st_size);
			uint64_t in_file = e->whole == TM_EXT_LIST ? e->enc : e->len;
			if (e->off != off || e->at + in_file > file) {
				fprintf(stderr, "machine %zu: extent %zu out of place\n", i, k);
				abort();
			}
			off += e->len;
		}
		if (refs && pt->n_ext > 2 + pt->size / 4096) {
			fprintf(stderr, "machine %zu: %zu extents for %llu bytes\n", i, pt->n_ext,
				(unsigned long long)pt->size);
			abort();
		}
		if (off != pt->size) {
			fprintf(stderr, "machine %zu: extents hold %llu of %llu bytes\n", i, (unsigned long long)off,
				(unsigned long long)pt->size);
			abort();
		}
	}
}

/* Lines of a view (row TM_SPOOLED_ALL: the whole merge's). */
static uint64_t count_lines(const tm_spooled *sp, size_t row)
{
	char buf[1 << 14];
	uint64_t n = 0, off = 0, size = tm_spooled_size(sp, row);
	while (off < size) {
		ssize_t r = tm_spooled_pread(sp, row, buf, sizeof buf, off);
		if (r <= 0)
			abort();
		for (ssize_t i = 0; i < r; i++)
			n += buf[i] == '\n';
		off += (uint64_t)r;
	}
	return n;
}

/* Whether view `row` of a and of b hold the same bytes. */
static int same_view(const tm_spooled *a, const tm_spooled *b, size_t row)
{
	char x[1 << 14], y[1 << 14];
	uint64_t off = 0, size = tm_spooled_size(a, row);
	if (size != tm_spooled_size(b, row))
		return 0;
	while (off < size) {
		ssize_t r = tm_spooled_pread(a, row, x, sizeof x, off);
		if (r <= 0 || tm_spooled_pread(b, row, y, (size_t)r, off) != r || memcmp(x, y, (size_t)r) != 0)
			return 0;
		off += (uint64_t)r;
	}
	return 1;
}

static void take_scan(void *ctx, tm_scan *s)
{
	*(tm_scan **)ctx = s;
}

/* The pass that is the scan too (it holds proto packets back until the
 * scan's results give the header) makes the same merged.pftrace as the
 * pass after a scan, the whole merge's and each machine's. */
static void check_one_read(tm_merge *m, const tm_spooled *want)
{
	tm_error err;
	tm_err_clear(&err);
	tm_scan *s = NULL;
	tm_gen_scanned sc = {&s, take_scan, NULL};
	tm_gen *g = tm_gen_build_scanning(m, TM_GEN_PFTRACE, 64, -1, &sc, NULL, &err);
	if (!g || !s || s->failed) {
		fprintf(stderr, "the one-read pass failed where the scan did not: %s\n", err.msg);
		abort();
	}
	int same = same_view(want, g->pftrace, TM_SPOOLED_ALL) && want->n_mach == g->pftrace->n_mach;
	for (size_t i = 0; same && i < want->n_mach; i++)
		same = same_view(want, g->pftrace, i);
	if (!same) {
		fprintf(stderr, "the one-read pass made another merged.pftrace\n");
		abort();
	}
	tm_gen_free(g);
	tm_scan_free(s);
}

/* A pass for the whole merge's files alone (TM_GEN_TOP, what `tracemount
 * cat` of one makes) gives the bytes the pass for every machine's gives;
 * so does timeline.tsv streamed as its lines are made (`tracemount cat`'s),
 * where the others' lines are made when read from lengths measured
 * before (measure_row, core/export/timeline.c). */
static void check_top_only(tm_merge *m, const tm_scan *s, const tm_gen *want)
{
	tm_error err;
	tm_err_clear(&err);
	tm_gen *g = tm_gen_build(m, s, TM_GEN_PFTRACE | TM_GEN_TIMELINE | TM_GEN_TOP, 64, -1, NULL, &err);
	if (!g || !same_view(want->pftrace, g->pftrace, TM_SPOOLED_ALL) ||
	    !same_view(want->timeline, g->timeline, TM_SPOOLED_ALL) || g->pftrace->n_mach || g->timeline->n_mach) {
		fprintf(stderr, "the whole merge's files alone differ: %s\n", err.msg);
		abort();
	}
	tm_gen_free(g);
	int out = fuzz_memfd("fuzz_export_streamed", "", 0);
	if (out < 0)
		return;
	g = tm_gen_build(m, s, TM_GEN_TIMELINE | TM_GEN_TOP, 64, out, NULL, &err);
	uint64_t size = tm_spooled_size(want->timeline, TM_SPOOLED_ALL);
	char x[1 << 14], y[1 << 14];
	int same = g && g->timeline->streamed && (uint64_t)lseek(out, 0, SEEK_END) == size;
	for (uint64_t off = 0; same && off < size;) {
		ssize_t r = tm_spooled_pread(want->timeline, TM_SPOOLED_ALL, x, sizeof x, off);
		same = r > 0 && pread(out, y, (size_t)r, (off_t)off) == r && memcmp(x, y, (size_t)r) == 0;
		off += r > 0 ? (uint64_t)r : 0;
	}
	if (!same) {
		fprintf(stderr, "timeline.tsv streamed differs from the one made when read: %s\n", err.msg);
		abort();
	}
	tm_gen_free(g);
	close(out);
}

/* Merge the bytes at fd again, alone; returns whether it failed. */
static int remerge(int src, uint64_t size)
{
	char *b = malloc(size ? size : 1);
	if (size && pread(src, b, size, 0) != (ssize_t)size)
		abort();
	int fd = fuzz_memfd("fuzz_export", b, size);
	free(b);
	if (fd < 0)
		return 0;
	char path[64];
	fuzz_fd_path(fd, path);
	tm_error err;
	tm_err_clear(&err);
	int failed = 0;
	tm_merge *m = tm_merge_open(path, &err);
	if (m) {
		tm_scan *s = tm_scan_run(m, NULL);
		failed = s->failed;
		if (failed)
			fprintf(stderr, "re-import failed: %s\n", s->err.msg);
		tm_scan_free(s);
		tm_merge_free(m);
	}
	close(fd);
	return failed;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int fd = fuzz_memfd("fuzz_export", data, size);
	if (fd < 0)
		return 0;
	char path[64];
	fuzz_fd_path(fd, path);
	tm_error err;
	tm_err_clear(&err);
	tm_merge *m = tm_merge_open(path, &err);
	if (m) {
		tm_scan *s = tm_scan_run(m, NULL);
		if (!s->failed) {
			tm_gen *g = tm_gen_build(m, s, TM_GEN_ALL, 64, -1, NULL, &err);
			if (g) {
				const tm_spooled *all[] = {g->pftrace, g->timeline, g->tables->processes,
							   g->tables->threads, g->tables->slices};
				for (size_t k = 0; k < sizeof all / sizeof *all; k++) {
					if (all[k]->fd >= 0)
						check_size(all[k]->fd, all[k]->size);
					check_parts(all[k]);
				}
				if (g->pftrace->size && remerge(g->pftrace->fd, g->pftrace->size))
					abort();
				check_one_read(m, g->pftrace);
				check_top_only(m, s, g);
				/* every per-machine line is in the whole timeline */
				uint64_t lines = 0;
				for (size_t i = 0; i < g->timeline->n_mach; i++)
					lines += count_lines(g->timeline, i) - 1;
				if (lines + 1 != count_lines(g->timeline, TM_SPOOLED_ALL)) {
					fprintf(stderr, "machine timelines do not add up to the whole\n");
					abort();
				}
			}
			tm_gen_free(g);
		}
		tm_scan_free(s);
		tm_merge_free(m);
	}
	close(fd);
	return 0;
}
