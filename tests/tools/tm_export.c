/* tests/tools/tm_export.c - write one generated file of the merge
 * (merged.pftrace, timeline.tsv, or a machine's processes.tsv, threads.tsv
 * or slices.tsv) to a file, through the same core code the tree serves.
 * Tests decode the result; the benchmark times it.
 *
 *   tm_export [-f FILE] [-r RUN_BYTES] ARCHIVE OUT [ROW]
 *     FILE: pftrace (default), timeline, processes, threads, slices;
 *     ROW: the machine row (required for the per-machine tables);
 *     RUN_BYTES: the external sorts' run size (small: many runs)
 *   tm_export -t ...   is -f timeline
 *
 * Exit status 0, 1 when the archive does not merge (the error on stderr).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pass/gen.h"
#include "input/merge.h"
#include "formats/registry.h"
#include "scan/scan.h"

/* View `row` of sp (TM_SPOOLED_ALL: the whole merge's) into path. */
static int copy_view(const tm_spooled *sp, size_t row, const char *path)
{
	FILE *o = fopen(path, "wb");
	if (!o) {
		perror(path);
		return 1;
	}
	char buf[1 << 16];
	uint64_t off = 0, size = tm_spooled_size(sp, row);
	while (off < size) {
		ssize_t n = tm_spooled_pread(sp, row, buf, sizeof buf, off);
		if (n <= 0)
			break;
		fwrite(buf, 1, (size_t)n, o);
		off += (uint64_t)n;
	}
	return fclose(o) != 0 || off != size;
}

int main(int argc, char **argv)
{
	const char *what = "pftrace";
	size_t run = 0;
	int c;
	while ((c = getopt(argc, argv, "tf:r:")) != -1) {
		switch (c) {
		case 't': what = "timeline"; break;
		case 'f': what = optarg; break;
		case 'r': run = strtoul(optarg, NULL, 10); break;
		default: return 2;
		}
	}
	argc -= optind;
	argv += optind;
	if (argc < 2 || argc > 3) {
		fprintf(stderr, "usage: tm_export [-f pftrace|timeline|processes|threads|slices] [-r RUN_BYTES] "
				"ARCHIVE OUT [ROW]\n");
		return 2;
	}
	long row = argc == 3 ? strtol(argv[2], NULL, 10) : -1;
	tm_error err = {0};
	tm_merge *m = tm_merge_open(argv[0], &err);
	if (!m) {
		fprintf(stderr, "%s\n", err.msg);
		return 1;
	}
	tm_scan *s = tm_scan_run(m, NULL);
	int rc = 1;
	tm_gen *g = NULL;
	if (s->failed) {
		fprintf(stderr, "%s\n", s->err.msg);
	} else if (!(g = tm_gen_build(m, s, TM_GEN_ALL, run, -1, NULL, &err))) {
		fprintf(stderr, "%s\n", err.msg);
	} else {
		const tm_spooled *sp = !strcmp(what, "timeline")    ? g->timeline
				       : !strcmp(what, "processes") ? g->tables->processes
				       : !strcmp(what, "threads")   ? g->tables->threads
				       : !strcmp(what, "slices")    ? g->tables->slices
								    : g->pftrace;
		if (row >= 0 && (size_t)row >= sp->n_mach)
			fprintf(stderr, "no machine row %ld\n", row);
		else if (row < 0 && !tm_spooled_has(sp, TM_SPOOLED_ALL))
			fprintf(stderr, "%s: per machine only (give a ROW)\n", what);
		else
			rc = copy_view(sp, row >= 0 ? (size_t)row : TM_SPOOLED_ALL, argv[1]);
	}
	tm_gen_free(g);
	tm_scan_free(s);
	tm_merge_free(m);
	return rc;
}
