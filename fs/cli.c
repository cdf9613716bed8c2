/* fs/cli.c - `tracemount ls|cat|check`: the tree without FUSE, byte for
 * byte what a mount shows. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "front.h"

static tm_vtree *open_or_report(const char *archive)
{
	tm_error err = {0};
	tm_vtree *t = vtree_open(archive, &err);
	if (!t)
		fprintf(stderr, "%s\n", err.msg); /* the exact message is the contract */
	return t;
}

static int usage_error(const char *msg)
{
	fprintf(stderr, "tracemount: %s\n", msg);
	front_usage(stderr);
	return EXIT_USAGE;
}

static int print_entry(void *ctx, const char *name, vt_ino ino, const vt_stat *st)
{
	(void)ino;
	(void)st;
	(void)ctx;
	printf("%s\n", name);
	return 0;
}

int cli_ls(int argc, char **argv)
{
	if (argc < 2 || argc > 3)
		return usage_error("ls: expected ARCHIVE [PATH]");
	const char *path = argc == 3 ? argv[2] : "/";
	tm_vtree *t = open_or_report(argv[1]);
	if (!t)
		return EXIT_MERGE;
	tm_error err = {0};
	vt_ino ino;
	vt_stat st;
	int rc = EXIT_OK;
	if (vtree_lookup(t, path, &ino, &err) != 0 || vtree_stat(t, ino, &st, &err) != 0) {
		fprintf(stderr, "tracemount: ls: %s: %s\n", path, strerror(front_errno(err.code)));
		rc = EXIT_MERGE;
	} else if (st.kind != VT_DIR) {
		printf("%s\n", path);
	} else if (vtree_readdir(t, ino, print_entry, NULL, &err) != 0) {
		fprintf(stderr, "tracemount: ls: %s: %s\n", path, err.msg);
		rc = EXIT_MERGE;
	}
	vtree_free(t);
	return rc;
}

int cli_cat(int argc, char **argv)
{
	if (argc != 3)
		return usage_error("cat: expected ARCHIVE PATH");
	const char *path = argv[2];
	tm_vtree *t = open_or_report(argv[1]);
	if (!t)
		return EXIT_MERGE;
	tm_error err = {0};
	vt_ino ino;
	int rc = EXIT_OK;
	vt_file *f = NULL;
	if (vtree_lookup(t, path, &ino, &err) != 0 || !(f = vtree_file_open(t, ino, &err))) {
		fprintf(stderr, "tracemount: cat: %s: %s\n", path, strerror(front_errno(err.code)));
		vtree_free(t);
		return EXIT_MERGE;
	}
	size_t cap = 1 << 20;
	char *buf = malloc(cap);
	uint64_t off = 0;
	for (;;) {
		ssize_t n = vtree_file_read(f, buf, cap, off, &err);
		if (n < 0) {
			fprintf(stderr, "tracemount: cat: %s: %s\n", path, err.msg);
			rc = EXIT_MERGE;
			break;
		}
		if (n == 0)
			break;
		if (fwrite(buf, 1, (size_t)n, stdout) != (size_t)n) {
			perror("tracemount: cat: write");
			rc = EXIT_MERGE;
			break;
		}
		off += (uint64_t)n;
	}
	free(buf);
	vtree_file_close(f);
	vtree_free(t);
	if (fflush(stdout) != 0)
		rc = EXIT_MERGE;
	return rc;
}

int cli_check(int argc, char **argv)
{
	if (argc != 2)
		return usage_error("check: expected ARCHIVE");
	tm_vtree *t = open_or_report(argv[1]);
	if (!t)
		return EXIT_MERGE;
	tm_buf sum = {0};
	tm_error err = {0};
	int rc = EXIT_OK;
	if (vtree_check(t, &sum, &err) != 0) {
		fprintf(stderr, "%s\n", err.msg);
		rc = EXIT_MERGE;
	} else {
		fputs(sum.data ? sum.data : "", stdout);
	}
	tm_buf_free(&sum);
	vtree_free(t);
	return rc;
}
