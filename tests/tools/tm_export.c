/* tests/tools/tm_export.c - write the merge's merged.pftrace (or one
 * machine's, or timeline.tsv) to a file, through the same core code the
 * tree serves. Tests decode the result; the benchmark times it.
 *
 *   tm_export ARCHIVE OUT [ROW]        merged.pftrace (of machine row ROW)
 *   tm_export -t ARCHIVE OUT [ROW]     timeline.tsv
 *
 * Exit status 0, 1 when the archive does not merge (the error on stderr).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "export.h"
#include "merge.h"
#include "scan.h"
#include "timeline.h"

static int copy_fd(int fd, uint64_t size, const char *path)
{
	FILE *o = fopen(path, "wb");
	if (!o) {
		perror(path);
		return 1;
	}
	char buf[1 << 16];
	uint64_t off = 0;
	while (off < size) {
		ssize_t n = pread(fd, buf, sizeof buf, (off_t)off);
		if (n <= 0)
			break;
		fwrite(buf, 1, (size_t)n, o);
		off += (uint64_t)n;
	}
	return fclose(o) != 0 || off != size;
}

int main(int argc, char **argv)
{
	int tsv = argc > 1 && strcmp(argv[1], "-t") == 0;
	argv += tsv;
	argc -= tsv;
	if (argc < 3 || argc > 4) {
		fprintf(stderr, "usage: tm_export [-t] ARCHIVE OUT [ROW]\n");
		return 2;
	}
	long row = argc == 4 ? strtol(argv[3], NULL, 10) : -1;
	tm_error err = {0};
	tm_merge *m = tm_merge_open(argv[1], &err);
	if (!m) {
		fprintf(stderr, "%s\n", err.msg);
		return 1;
	}
	tm_scan *s = tm_scan_run(m, NULL);
	int rc = 1;
	if (s->failed) {
		fprintf(stderr, "%s\n", s->err.msg);
	} else if (tsv) {
		tm_timeline *t = tm_timeline_build(m, s, 0, &err);
		if (!t)
			fprintf(stderr, "%s\n", err.msg);
		else if (row >= 0 && (size_t)row >= t->n_mach)
			fprintf(stderr, "no machine row %ld\n", row);
		else
			rc = row >= 0 ? copy_fd(t->mach_fd[row], t->mach_size[row], argv[2])
				      : copy_fd(t->fd, t->size, argv[2]);
		tm_timeline_free(t);
	} else {
		tm_export *x = tm_export_build(m, s, &err);
		if (!x)
			fprintf(stderr, "%s\n", err.msg);
		else if (row >= 0 && (size_t)row >= x->n_mach)
			fprintf(stderr, "no machine row %ld\n", row);
		else
			rc = row >= 0 ? copy_fd(x->mach_fd[row], x->mach_size[row], argv[2])
				      : copy_fd(x->fd, x->size, argv[2]);
		tm_export_free(x);
	}
	tm_scan_free(s);
	tm_merge_free(m);
	return rc;
}
