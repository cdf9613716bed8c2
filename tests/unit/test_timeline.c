/* tests/unit/test_timeline.c - timeline.tsv: ordering across sorted runs,
 * per-machine files, escaping, sizes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tt.h"

#include "merge.h"
#include "scan.h"
#include "timeline.h"

static char tmpdir[512];

static const char *write_tmp(const char *name, const char *text)
{
	static char p[1024];
	snprintf(p, sizeof p, "%s/%s", tmpdir, name);
	FILE *f = fopen(p, "wb");
	if (f) {
		fputs(text, f);
		fclose(f);
	}
	return p;
}

/* All of fd's bytes (size n), NUL-terminated. */
static char *slurp(int fd, uint64_t n)
{
	char *b = malloc(n + 1);
	ssize_t got = pread(fd, b, n, 0);
	b[got > 0 ? got : 0] = 0;
	return b;
}

static size_t count_lines(const char *s)
{
	size_t n = 0;
	for (; *s; s++)
		n += *s == '\n';
	return n;
}

/* Events given out of order come out sorted by ts, ties in input order,
 * whatever the run size. */
static void test_sorted_across_runs(void)
{
	const char *path = write_tmp(
		"t.json",
		"{\"traceEvents\":["
		"{\"ph\":\"i\",\"pid\":1,\"tid\":2,\"ts\":30,\"name\":\"c\"},"
		"{\"ph\":\"X\",\"pid\":1,\"tid\":2,\"ts\":10,\"dur\":5,\"name\":\"a\\tb\"},"
		"{\"ph\":\"i\",\"pid\":1,\"tid\":2,\"ts\":20,\"name\":\"b1\"},"
		"{\"ph\":\"i\",\"pid\":1,\"tid\":2,\"ts\":20,\"name\":\"b2\"},"
		"{\"ph\":\"C\",\"pid\":1,\"ts\":5,\"name\":\"ctr\",\"args\":{\"v\":3}},"
		"{\"ph\":\"i\",\"pid\":1,\"tid\":2,\"ts\":-7,\"name\":\"neg\"}"
		"]}");
	size_t runs[] = {1, 2, 3, 0};
	char *first = NULL;
	for (size_t k = 0; k < sizeof runs / sizeof runs[0]; k++) {
		tm_error err = {0};
		tm_merge *m = tm_merge_open(path, &err);
		CHECK(m != NULL);
		if (!m)
			return;
		tm_scan *s = tm_scan_run(m, NULL);
		CHECK(!s->failed);
		tm_timeline *t = tm_timeline_build(m, s, runs[k], &err);
		CHECK(t != NULL);
		if (t) {
			char *all = slurp(t->fd, t->size);
			CHECK_INT(strlen(all), t->size);
			CHECK_INT(count_lines(all), 6); /* header + 5 (the negative one is dropped) */
			CHECK(strncmp(all, TM_TIMELINE_HEADER, strlen(TM_TIMELINE_HEADER)) == 0);
			const char *body = all + strlen(TM_TIMELINE_HEADER);
			/* a JSON counter sample is named "{name} {arg}" (formats.md §3.5) */
			const char *first_line = "5000\t\tmachine0\t\tcounter\tctr v\t1\t1\tv=3\n";
			CHECK(strncmp(body, first_line, strlen(first_line)) == 0);
			CHECK(strstr(body, "10000\t5000\tmachine0\t\tslice\ta\\tb\t1\t2\t") != NULL);
			CHECK(strstr(body, "\tb1\t") < strstr(body, "\tb2\t"));
			CHECK(strstr(body, "\tb2\t") < strstr(body, "\tc\t"));
			CHECK_INT(t->n_mach, 1);
			char *m0 = slurp(t->mach_fd[0], t->mach_size[0]);
			CHECK_STR(m0, all);
			free(m0);
			if (!first)
				first = all;
			else {
				CHECK_STR(all, first);
				free(all);
			}
		}
		tm_timeline_free(t);
		tm_scan_free(s);
		tm_merge_free(m);
	}
	free(first);
}

int main(void)
{
	snprintf(tmpdir, sizeof tmpdir, "%s/tm_timeline.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(tmpdir))
		return 1;
	TT_RUN(test_sorted_across_runs);
	char cmd[600];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", tmpdir);
	TT_DONE();
}
