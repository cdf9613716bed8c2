/* tests/fuzz/fuzz_export.c - the export tier on any input: the input as a
 * whole archive (or a bare trace) is merged (tm_merge_open on a memfd
 * path, tm_scan_run), then the generation pass builds merged.pftrace,
 * timeline.tsv and the per-machine tables, and the merged trace is merged
 * again on its own. Checked on the way: each output's size is what its
 * file holds; the machines' timelines add up to the whole one; a
 * re-import of merged.pftrace never fails when the input did not. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fuzz_input.h"
#include "gen.h"
#include "merge.h"
#include "scan.h"

static void check_size(int fd, uint64_t size)
{
	struct stat st;
	if (fstat(fd, &st) != 0 || (uint64_t)st.st_size != size) {
		fprintf(stderr, "spooled size %llu, file holds %lld\n", (unsigned long long)size,
			(long long)st.st_size);
		abort();
	}
}

static uint64_t count_lines(int fd, uint64_t size)
{
	char buf[1 << 14];
	uint64_t n = 0, off = 0;
	while (off < size) {
		ssize_t r = pread(fd, buf, sizeof buf, (off_t)off);
		if (r <= 0)
			abort();
		for (ssize_t i = 0; i < r; i++)
			n += buf[i] == '\n';
		off += (uint64_t)r;
	}
	return n;
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
			tm_gen *g = tm_gen_build(m, s, TM_GEN_ALL, 64, &err);
			if (g) {
				const tm_spooled *all[] = {g->pftrace, g->timeline, g->tables->processes,
							   g->tables->threads, g->tables->slices};
				for (size_t k = 0; k < sizeof all / sizeof *all; k++) {
					if (all[k]->fd >= 0)
						check_size(all[k]->fd, all[k]->size);
					for (size_t i = 0; i < all[k]->n_mach; i++)
						check_size(all[k]->mach_fd[i], all[k]->mach_size[i]);
				}
				if (g->pftrace->size && remerge(g->pftrace->fd, g->pftrace->size))
					abort();
				/* every per-machine line is in the whole timeline */
				uint64_t lines = 0;
				for (size_t i = 0; i < g->timeline->n_mach; i++)
					lines += count_lines(g->timeline->mach_fd[i], g->timeline->mach_size[i]) - 1;
				if (lines + 1 != count_lines(g->timeline->fd, g->timeline->size)) {
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
