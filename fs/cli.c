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

/* Follow symbolic links the way the kernel would for `cat MOUNT/PATH`
 * (relative targets, at most 40 hops). Returns the final node. */
static int resolve(tm_vtree *t, const char *path, vt_ino *ino, tm_error *err)
{
	char cur[8192];
	snprintf(cur, sizeof cur, "%s", path);
	for (int hops = 0; hops <= 40; hops++) {
		vt_stat st;
		if (vtree_lookup(t, cur, ino, err) != 0 || vtree_stat(t, *ino, &st, err) != 0)
			return -1;
		if (st.kind != VT_LNK)
			return 0;
		char target[4096], next[8192];
		if (vtree_readlink(t, *ino, target, sizeof target, err) != 0)
			return -1;
		if (target[0] == '/')
			return tm_err(err, TM_ENOENT, "%s: link leaves the tree", path);
		char *slash = strrchr(cur, '/');
		int dirlen = slash ? (int)(slash - cur) : 0;
		snprintf(next, sizeof next, "%.*s/%s", dirlen, cur, target);
		/* fold "dir/../" pairs so the tree sees plain paths */
		char *out = cur, *p = next;
		*out = '\0';
		while (*p) {
			while (*p == '/')
				p++;
			char *e = strchr(p, '/');
			size_t n = e ? (size_t)(e - p) : strlen(p);
			if (n == 2 && p[0] == '.' && p[1] == '.') {
				char *up = strrchr(cur, '/');
				if (!up)
					return tm_err(err, TM_ENOENT, "%s: link leaves the tree", path);
				*up = '\0';
			} else if (n && !(n == 1 && p[0] == '.')) {
				size_t l = strlen(cur);
				snprintf(cur + l, sizeof cur - l, "/%.*s", (int)n, p);
			}
			p += n;
		}
	}
	return tm_err(err, TM_ENOENT, "%s: too many levels of symbolic links", path);
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
	if (resolve(t, path, &ino, &err) != 0 || !(f = vtree_file_open(t, ino, &err))) {
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
