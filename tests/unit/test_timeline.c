/* tests/unit/test_timeline.c - timeline.tsv and the per-machine tables
 * from the generation pass: slices joined from begin/end, ordering across
 * sorted runs, escaping, kernel args, and the statistics of slices.tsv. */
#include <dirent.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tt.h"

#include "pass/gen.h"
#include "input/merge.h"
#include "formats/registry.h"
#include "scan/scan.h"
#include "sort/spool.h"

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

/* All of a view's bytes (row TM_SPOOLED_ALL: the whole merge's),
 * NUL-terminated. */
static char *slurp(const tm_spooled *sp, size_t row)
{
	uint64_t n = tm_spooled_size(sp, row);
	char *b = malloc(n + 1);
	ssize_t got = tm_spooled_pread(sp, row, b, n, 0);
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

/* The generation pass over one file; NULL (and a failed check) when it
 * does not merge. */
static tm_gen *gen_of(const char *path, size_t run, tm_merge **mp, tm_scan **sp)
{
	tm_error err = {0};
	*mp = tm_merge_open(path, &err);
	*sp = NULL;
	if (!*mp)
		return NULL;
	*sp = tm_scan_run(*mp, NULL);
	if ((*sp)->failed)
		return NULL;
	return tm_gen_build(*mp, *sp, TM_GEN_ALL, run, -1, NULL, &err);
}

static void gen_done(tm_gen *g, tm_merge *m, tm_scan *s)
{
	tm_gen_free(g);
	tm_scan_free(s);
	tm_merge_free(m);
}

#define TL(l) l "\n"

/* Events given out of order come out (the file column is empty: a bare
 * trace is the archive itself, not a member) sorted by ts, ties in the order the
 * reference processes them, whatever the run size; a B/E pair is one row
 * with its duration; the machine's file equals the whole. */
static void test_sorted_across_runs(void)
{
	const char *path = write_tmp(
		"t.json",
		"{\"traceEvents\":["
		"{\"ph\":\"i\",\"pid\":1,\"tid\":2,\"ts\":30,\"name\":\"c\",\"s\":\"t\"},"
		"{\"ph\":\"X\",\"pid\":1,\"tid\":2,\"ts\":10,\"dur\":5,\"name\":\"a\\tb\",\"cat\":\"k\","
		"\"args\":{\"n\":{\"x\":[1,\"y\"]}}},"
		"{\"ph\":\"B\",\"pid\":1,\"tid\":2,\"ts\":20,\"name\":\"b1\"},"
		"{\"ph\":\"i\",\"pid\":1,\"tid\":2,\"ts\":20,\"name\":\"b2\",\"s\":\"t\"},"
		"{\"ph\":\"E\",\"pid\":1,\"tid\":2,\"ts\":25},"
		"{\"ph\":\"C\",\"pid\":1,\"ts\":5,\"name\":\"ctr\",\"args\":{\"v\":3}},"
		"{\"ph\":\"B\",\"pid\":1,\"tid\":2,\"ts\":40,\"name\":\"open\"},"
		"{\"ph\":\"i\",\"pid\":1,\"tid\":2,\"ts\":-7,\"name\":\"neg\"}"
		"]}");
	const char *want = TM_TIMELINE_HEADER
		TL("5000\t\tmachine0\t\tcounter\t\tctr v\t\t1\t\tprocess:ctr v\t{\"value\":3}")
		TL("10000\t5000\tmachine0\t\tslice\tk\ta\\tb\t0\t1\t2\tthread\t{\"n\":{\"x\":[1,\"y\"]}}")
		TL("20000\t5000\tmachine0\t\tslice\t\tb1\t0\t1\t2\tthread\t{}")
		TL("20000\t0\tmachine0\t\tinstant\t\tb2\t1\t1\t2\tthread\t{}")
		TL("30000\t0\tmachine0\t\tinstant\t\tc\t0\t1\t2\tthread\t{}")
		TL("40000\t-1\tmachine0\t\tslice\t\topen\t0\t1\t2\tthread\t{}");
	size_t runs[] = {1, 64, 300, 0};
	for (size_t k = 0; k < sizeof runs / sizeof runs[0]; k++) {
		tm_merge *m;
		tm_scan *s;
		tm_gen *g = gen_of(path, runs[k], &m, &s);
		CHECK(g != NULL);
		char *all = slurp(g->timeline, TM_SPOOLED_ALL);
		CHECK_INT(strlen(all), g->timeline->size);
		CHECK_STR(all, want);
		CHECK_INT(g->timeline->n_mach, 1);
		char *m0 = slurp(g->timeline, 0);
		CHECK_STR(m0, all);
		free(m0);
		free(all);
		gen_done(g, m, s);
	}
}

/* A counter's value goes through the sort as a varint when it is a whole
 * number a double holds exactly, else as its 8 bytes: each comes back as
 * the number it was (-0, fractions, whole numbers past 2^53, the edges of
 * 2^53), whatever the run size. */
static void test_counter_values(void)
{
	static const char *const lits[] = {"0", "-0.0", "3", "-5", "127", "128", "-129", "2.5", "0.1", "1e-7",
					   "-123456789012", "9007199254740992", "-9007199254740992",
					   "9007199254740994", "1e300", "-1e300", "4503599627370495.5"};
	const size_t n = sizeof lits / sizeof lits[0];
	tm_buf j = {0}, want = {0};
	tm_buf_puts(&j, "{\"traceEvents\":[");
	for (size_t i = 0; i < n; i++)
		tm_buf_printf(&j, "%s{\"ph\":\"C\",\"pid\":1,\"ts\":%zu,\"name\":\"c\",\"args\":{\"v\":%s}}", i ? "," : "",
			      i + 1, lits[i]);
	tm_buf_puts(&j, "]}");
	tm_buf_put(&j, "", 1);
	for (size_t i = 0; i < n; i++) {
		tm_buf_printf(&want, "%zu\t\tmachine0\t\tcounter\t\tc v\t\t1\t\tprocess:c v\t{\"value\":", (i + 1) * 1000);
		tm_timeline_number(&want, strtod(lits[i], NULL));
		tm_buf_puts(&want, "}\n");
	}
	tm_buf_put(&want, "", 1);
	const char *path = write_tmp("values.json", j.data);
	size_t runs[] = {1, 200, 0};
	for (size_t k = 0; k < sizeof runs / sizeof runs[0]; k++) {
		tm_merge *m;
		tm_scan *s;
		tm_gen *g = gen_of(path, runs[k], &m, &s);
		CHECK(g != NULL);
		if (!g)
			break;
		char *all = slurp(g->timeline, TM_SPOOLED_ALL);
		CHECK(strncmp(all, TM_TIMELINE_HEADER, strlen(TM_TIMELINE_HEADER)) == 0);
		CHECK_STR(all + strlen(TM_TIMELINE_HEADER), want.data);
		free(all);
		gen_done(g, m, s);
	}
	tm_buf_free(&j);
	tm_buf_free(&want);
}

/* timeline.tsv written to a descriptor as it is made (`tracemount cat`):
 * the bytes the spooled pass gives, in order, on a descriptor the pass
 * neither closes nor reads; the result names their size and holds no
 * file. A descriptor that cannot be written fails the pass with the
 * write's reason. */
static void test_streamed(void)
{
	static char text[40000];
	size_t n = (size_t)snprintf(text, sizeof text, "[");
	for (int i = 0; i < 500; i++) /* about 30 KB of lines: several buffers */
		n += (size_t)snprintf(text + n, sizeof text - n,
				      "%s{\"ph\":\"X\",\"pid\":1,\"tid\":%d,\"ts\":%d,\"dur\":2,\"name\":\"s%d\"}",
				      i ? "," : "", 1 + i % 7, (i * 37) % 1000, i);
	snprintf(text + n, sizeof text - n, "]");
	const char *path = write_tmp("streamed.json", text);
	tm_merge *m;
	tm_scan *s;
	tm_gen *spooled = gen_of(path, 0, &m, &s);
	CHECK(spooled != NULL);
	char *want = spooled ? slurp(spooled->timeline, TM_SPOOLED_ALL) : NULL;
	char out[600];
	snprintf(out, sizeof out, "%s/streamed.out", tmpdir);
	int fd = open(out, O_RDWR | O_CREAT | O_TRUNC, 0600);
	CHECK(fd >= 0);
	tm_error err = {0};
	tm_gen *g = tm_gen_build(m, s, TM_GEN_TIMELINE | TM_GEN_TOP, 0, fd, NULL, &err);
	CHECK(g != NULL && g->timeline != NULL);
	if (g && g->timeline && want) {
		CHECK(g->timeline->streamed);
		CHECK_INT(g->timeline->fd, -1);
		CHECK_INT(g->timeline->size, strlen(want));
		CHECK_INT(lseek(fd, 0, SEEK_END), strlen(want));
		char *got = calloc(1, strlen(want) + 1);
		CHECK_INT(pread(fd, got, strlen(want), 0), strlen(want));
		CHECK_STR(got, want);
		free(got);
	}
	tm_gen_free(g);
	CHECK_INT(fcntl(fd, F_GETFD) >= 0, 1); /* still the caller's */
	close(fd);
	/* a machine's copy, or the tables, are never streamed */
	fd = open(out, O_RDWR | O_TRUNC);
	g = tm_gen_build(m, s, TM_GEN_TIMELINE, 0, fd, NULL, &err);
	CHECK(g != NULL && !g->timeline->streamed && tm_spooled_has(g->timeline, TM_SPOOLED_ALL));
	CHECK_INT(lseek(fd, 0, SEEK_END), 0);
	tm_gen_free(g);
	close(fd);
	fd = open("/dev/full", O_WRONLY);
	if (fd >= 0) {
		tm_err_clear(&err);
		g = tm_gen_build(m, s, TM_GEN_TIMELINE | TM_GEN_TOP, 0, fd, NULL, &err);
		CHECK(g == NULL);
		CHECK_STR(err.msg, "write error: No space left on device");
		close(fd);
	}
	free(want);
	gen_done(spooled, m, s);
}

/* Per machine: each timeline holds its machine's rows only. */
static void test_per_machine(void)
{
	const char *a = write_tmp("a.json", "[{\"ph\":\"X\",\"pid\":1,\"tid\":1,\"ts\":1,\"dur\":1,\"name\":\"on_a\"}]");
	(void)a;
	const char *b = write_tmp("b.json", "[{\"ph\":\"X\",\"pid\":1,\"tid\":1,\"ts\":2,\"dur\":1,\"name\":\"on_b\"}]");
	(void)b;
	const char *man = write_tmp("perfetto_manifest.json",
				    "{\"perfetto_manifest\":{\"version\":1,"
				    "\"files\":[{\"path\":\"b.json\",\"machine\":{\"name\":\"phone\"}}]}}");
	(void)man;
	char cmd[2048];
	snprintf(cmd, sizeof cmd, "cd '%s' && tar cf two.tar perfetto_manifest.json a.json b.json", tmpdir);
	CHECK(system(cmd) == 0);
	char path[1024];
	snprintf(path, sizeof path, "%s/two.tar", tmpdir);
	tm_merge *m;
	tm_scan *s;
	tm_gen *g = gen_of(path, 0, &m, &s);
	CHECK(g != NULL);
	CHECK_INT(g->timeline->n_mach, 2);
	char *all = slurp(g->timeline, TM_SPOOLED_ALL);
	CHECK_INT(count_lines(all), 3);
	int saw_a = 0, saw_b = 0;
	for (size_t r = 0; r < 2; r++) {
		char *t = slurp(g->timeline, r);
		CHECK_INT(count_lines(t), 2);
		saw_a += strstr(t, "\ton_a\t") != NULL;
		saw_b += strstr(t, "\ton_b\t") != NULL && strstr(t, "\tphone\t") != NULL;
		free(t);
	}
	CHECK_INT(saw_a, 1);
	CHECK_INT(saw_b, 1);
	free(all);
	gen_done(g, m, s);
}

/* ---- views made when read ---------------------------------------------------- */

/* Two machines' JSON traces, in time together, of `n` events each: slices
 * with names and args that need escaping, instants, and counters with
 * whole and fractional values and one not finite. */
static const char *served_archive(int n)
{
	size_t cap = (size_t)n * 400 + 4096;
	char *text = malloc(cap);
	for (int f = 0; f < 2; f++) {
		size_t k = (size_t)snprintf(text, cap, "[");
		for (int i = 0; i < n; i++) {
			const char *sep = i ? "," : "";
			int ts = i * 10 + f * 3, tid = 1 + i % 5;
			switch (i % 4) {
			case 0:
				k += (size_t)snprintf(text + k, cap - k,
						      "%s{\"ph\":\"X\",\"pid\":%d,\"tid\":%d,\"ts\":%d,\"dur\":4,"
						      "\"cat\":\"c\\\\%d\",\"name\":\"slice\\t%d\",\"args\":{\"i\":%d}}",
						      sep, 10 + f, tid, ts, i % 3, i, i);
				break;
			case 1:
				k += (size_t)snprintf(text + k, cap - k,
						      "%s{\"ph\":\"i\",\"pid\":%d,\"tid\":%d,\"ts\":%d,\"s\":\"t\","
						      "\"name\":\"mark %d\"}",
						      sep, 10 + f, tid, ts, i % 17);
				break;
			case 2:
				k += (size_t)snprintf(text + k, cap - k,
						      "%s{\"ph\":\"C\",\"pid\":%d,\"ts\":%d,\"name\":\"load\","
						      "\"args\":{\"v\":%d.%d}}",
						      sep, 10 + f, ts, i, i % 10);
				break;
			default:
				k += (size_t)snprintf(text + k, cap - k,
						      "%s{\"ph\":\"C\",\"pid\":%d,\"ts\":%d,\"name\":\"big\","
						      "\"args\":{\"v\":%s}}",
						      sep, 10 + f, ts,
						      i % 400 == 3 ? "1e308" : i % 2 ? "-0.0" : "123456789012345678");
			}
		}
		snprintf(text + k, cap - k, "]");
		write_tmp(f ? "served_b.json" : "served_a.json", text);
	}
	free(text);
	write_tmp("perfetto_manifest.json",
		  "{\"perfetto_manifest\":{\"version\":1,\"files\":["
		  "{\"path\":\"served_a.json\",\"machine\":{\"name\":\"host\"}},"
		  "{\"path\":\"served_b.json\",\"machine\":{\"name\":\"phone\"}}]}}");
	static char path[1024];
	char cmd[2048];
	snprintf(cmd, sizeof cmd, "cd '%s' && tar cf served.tar perfetto_manifest.json served_a.json served_b.json",
		 tmpdir);
	if (system(cmd) != 0)
		return NULL;
	snprintf(path, sizeof path, "%s/served.tar", tmpdir);
	return path;
}

/* The lines of `all` (header first) whose machine column is `mach`. */
static char *lines_of(const char *all, const char *mach)
{
	char *out = calloc(1, strlen(all) + 1), *o = out;
	size_t ml = strlen(mach);
	const char *p = all, *nl = strchr(p, '\n');
	memcpy(o, p, (size_t)(nl + 1 - p)); /* the header */
	o += nl + 1 - p;
	for (p = nl + 1; *p; p = nl + 1) {
		nl = strchr(p, '\n');
		const char *col = strchr(strchr(p, '\t') + 1, '\t') + 1; /* after ts and dur */
		if (strncmp(col, mach, ml) == 0 && col[ml] == '\t') {
			memcpy(o, p, (size_t)(nl + 1 - p));
			o += nl + 1 - p;
		}
	}
	return out;
}

/* Read view `row` of sp in pieces of `step` bytes from `from` on, and
 * compare them with want. */
static int pieces_match(const tm_spooled *sp, size_t row, const char *want, uint64_t from, size_t step)
{
	size_t n = strlen(want);
	char *buf = malloc(step);
	int ok = 1;
	for (uint64_t off = from; ok && off < n; off += step) {
		size_t k = n - off < step ? (size_t)(n - off) : step;
		ok = tm_spooled_pread(sp, row, buf, step, off) == (ssize_t)k && memcmp(buf, want + off, k) == 0;
	}
	free(buf);
	return ok;
}

typedef struct reader_arg {
	const tm_spooled *sp;
	const char *want[3]; /* the whole view, then row 0's and row 1's */
	unsigned seed;
	int bad;
} reader_arg;

static void *random_reads(void *p)
{
	reader_arg *a = p;
	char *buf = malloc(300000);
	for (int i = 0; i < 300; i++) {
		int v = (int)(rand_r(&a->seed) % 3);
		size_t row = v == 0 ? TM_SPOOLED_ALL : (size_t)v - 1, n = strlen(a->want[v]);
		uint64_t off = (uint64_t)rand_r(&a->seed) % (n + 10);
		size_t len = 1 + (size_t)rand_r(&a->seed) % 300000;
		ssize_t got = tm_spooled_pread(a->sp, row, buf, len, off);
		size_t k = off >= n ? 0 : n - off < len ? (size_t)(n - off) : len;
		if (got != (ssize_t)k || memcmp(buf, a->want[v] + (off < n ? off : n), k) != 0)
			a->bad++;
	}
	free(buf);
	return NULL;
}

/* A view read later is made when read, from its records: the same bytes
 * as the lines streamed, for the whole merge and each machine, read in
 * one piece, in pieces of any size from any offset, and by several
 * threads at once at random places (the blocks made ahead on threads of
 * their own); several blocks of lines, of many sorted runs. */
static void test_served(void)
{
	const char *path = served_archive(40000);
	CHECK(path != NULL);
	tm_merge *m;
	tm_scan *s;
	tm_gen *g = gen_of(path, 256 * 1024, &m, &s);
	CHECK(g != NULL);
	if (!g)
		return;
	const tm_spooled *sp = g->timeline;
	CHECK(sp->src.read != NULL);
	CHECK_INT(sp->fd, -1);
	CHECK_INT(sp->n_mach, 2);
	char out[600];
	snprintf(out, sizeof out, "%s/served.out", tmpdir);
	int fd = open(out, O_RDWR | O_CREAT | O_TRUNC, 0600);
	tm_error err = {0};
	tm_gen *st = tm_gen_build(m, s, TM_GEN_TIMELINE | TM_GEN_TOP, 256 * 1024, fd, NULL, &err);
	CHECK(st != NULL && st->timeline->streamed);
	off_t size = lseek(fd, 0, SEEK_END);
	CHECK(size > 4 * 512 * 1024); /* several blocks */
	char *want = calloc(1, (size_t)size + 1);
	CHECK_INT(pread(fd, want, (size_t)size, 0), size);
	close(fd);
	tm_gen_free(st);
	CHECK_INT(tm_spooled_size(sp, TM_SPOOLED_ALL), size);
	char *all = slurp(sp, TM_SPOOLED_ALL);
	CHECK_STR(all, want);
	free(all);
	CHECK(pieces_match(sp, TM_SPOOLED_ALL, want, 0, 7 * 1024 + 3));
	CHECK(pieces_match(sp, TM_SPOOLED_ALL, want, 5, 131072));
	CHECK(pieces_match(sp, TM_SPOOLED_ALL, want, 0, 1 << 20));
	char buf[8];
	CHECK_INT(tm_spooled_pread(sp, TM_SPOOLED_ALL, buf, sizeof buf, (uint64_t)size), 0);
	CHECK_INT(tm_spooled_pread(sp, 2, buf, sizeof buf, 0), 0); /* no such row */
	reader_arg ra[4];
	for (size_t r = 0; r < 2; r++) {
		char *view = slurp(sp, r);
		/* the machine column of its first line names it */
		const char *l = strchr(view, '\n') + 1, *c = strchr(strchr(l, '\t') + 1, '\t') + 1;
		char mach[64];
		snprintf(mach, sizeof mach, "%.*s", (int)(strchr(c, '\t') - c), c);
		char *mine = lines_of(want, mach);
		CHECK_STR(view, mine);
		CHECK_INT(tm_spooled_size(sp, r), strlen(mine));
		CHECK(strlen(mine) > 2 * 512 * 1024);
		CHECK(pieces_match(sp, r, mine, 3, 4093));
		for (int i = 0; i < 4; i++)
			ra[i].want[1 + r] = r ? mine : view;
		if (r)
			free(view);
		else
			free(mine);
	}
	pthread_t th[4];
	for (int i = 0; i < 4; i++) {
		ra[i].sp = sp;
		ra[i].want[0] = want;
		ra[i].seed = 7u + (unsigned)i;
		ra[i].bad = 0;
		CHECK(pthread_create(&th[i], NULL, random_reads, &ra[i]) == 0);
	}
	for (int i = 0; i < 4; i++) {
		pthread_join(th[i], NULL);
		CHECK_INT(ra[i].bad, 0);
	}
	free((char *)ra[0].want[1]);
	free((char *)ra[0].want[2]);
	free(want);
	gen_done(g, m, s);
}

/* A records file that fails a read of a view made when read: EIO and
 * the reason, never bytes that are not the lines. */
static void test_served_damaged(void)
{
	const char *path = served_archive(2000);
	CHECK(path != NULL);
	tm_merge *m;
	tm_scan *s;
	tm_gen *g = gen_of(path, 0, &m, &s);
	CHECK(g != NULL);
	if (!g)
		return;
	/* the pass's temporary files, the records among them, cut short */
	int cut = 0;
	char link[64], target[1024];
	for (int fd = 3; fd < 1024; fd++) {
		snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
		ssize_t n = readlink(link, target, sizeof target - 1);
		if (n > 0 && (target[n] = 0, strstr(target, "(deleted)")) && ftruncate(fd, 100) == 0)
			cut++;
	}
	CHECK(cut > 0);
	/* the header is no record: a read gives it, and the next one fails */
	char buf[4096];
	size_t h = strlen("ts\tdur\tmachine\tfile\tkind\tcategory\tname\tdepth\tpid\ttid\ttrack\targs\n");
	tm_error err = {0};
	CHECK_INT(tm_spooled_read(g->timeline, TM_SPOOLED_ALL, buf, sizeof buf, 0, &err), h);
	CHECK_INT(tm_spooled_read(g->timeline, TM_SPOOLED_ALL, buf, sizeof buf, h, &err), -1);
	CHECK_STR(err.msg, "timeline.tsv: a temporary file is damaged");
	CHECK_INT(tm_spooled_pread(g->timeline, 0, buf, sizeof buf, h), -1);
	gen_done(g, m, s);
}

static void kargs(const char *text, const char *want)
{
	tm_buf b = {0};
	tm_timeline_kernel_args(&b, text);
	tm_buf_put(&b, "", 1);
	if (strcmp(b.data, want) != 0)
		fprintf(stderr, "kernel args of \"%s\": %s, expected %s\n", text, b.data, want);
	tt_case_failed |= strcmp(b.data, want) != 0;
	tm_buf_free(&b);
}

static void test_kernel_args(void)
{
	kargs("comm=kworker/0:1 pid=12 prio=120 target_cpu=001",
	      "{\"comm\":\"kworker/0:1\",\"pid\":12,\"prio\":120,\"target_cpu\":\"001\"}");
	kargs("comm=Chrome_IO thread pid=-5", "{\"comm\":\"Chrome_IO thread\",\"pid\":-5}");
	kargs("", "{}");
	kargs("  a=  b=\"q\"", "{\"a\":\"\",\"b\":\"\\\"q\\\"\"}");
	kargs("free text here", "{\"text\":\"free text here\"}");
	kargs("x=1\t2 y=-0", "{\"x\":\"1\\t2\",\"y\":\"-0\"}");
	kargs("=odd k=v", "{\"text\":\"=odd k=v\"}");
	tm_buf b = {0};
	tm_timeline_number(&b, 0.1);
	tm_buf_puts(&b, " ");
	tm_timeline_number(&b, 3);
	tm_buf_puts(&b, " ");
	tm_timeline_number(&b, 1e300 * 1e300);
	tm_buf_put(&b, "", 1);
	CHECK_STR(b.data, "0.1 3 null");
	tm_buf_free(&b);
}

/* The text of a number, of an integer and of an escaped field are the
 * ones their plain definitions give: the %.15g..%.17g that reads back
 * (whole numbers take a shortcut), printf's %lld, and field_escape byte by
 * byte (words are skipped eight bytes at a time). */
static void number_as_printf(tm_buf *b, double v)
{
	char t[40];
	for (int prec = 15; prec <= 17; prec++) {
		snprintf(t, sizeof t, "%.*g", prec, v);
		if (strtod(t, NULL) == v)
			break;
	}
	tm_buf_puts(b, t);
}

/* tm_buf_put_i64 against printf where its eight-digit chunks meet: every
 * value up to 2,000,000, every power of ten and its neighbours, both
 * signs, and values made of zero chunks (1e8, 1e16, 1e8 + 1, ...). */
static void integer_as_printf(int64_t v, tm_buf *got, tm_buf *want)
{
	got->len = want->len = 0;
	tm_buf_put_i64(got, v);
	tm_buf_printf(want, "%" PRId64, v);
	if (got->len != want->len || strcmp(got->data, want->data) != 0) {
		fprintf(stderr, "integer: %s, expected %s\n", got->data, want->data);
		tt_case_failed = 1;
	}
}

static void test_integer_texts(void)
{
	tm_buf got = {0}, want = {0};
	for (int64_t v = -2000000; v <= 2000000 && !tt_case_failed; v++)
		integer_as_printf(v, &got, &want);
	uint64_t p = 1; /* 10^k; 10^19 is past int64 */
	for (int k = 0; k <= 18; k++) {
		for (int64_t d = -1; d <= 1; d++) {
			integer_as_printf((int64_t)p + d, &got, &want);
			integer_as_printf(-((int64_t)p + d), &got, &want);
		}
		p *= 10;
	}
	const int64_t more[] = {INT64_MAX,        INT64_MIN,           INT64_MIN + 1,     100000001,
				10000000100000001, 9999999999999999,    1000000000000000000, 1234567890123456789,
				100000000000000000, 99999999};
	for (size_t i = 0; i < sizeof more / sizeof more[0]; i++)
		integer_as_printf(more[i], &got, &want);
	tm_buf_free(&got);
	tm_buf_free(&want);
}

static void test_number_texts(void)
{
	uint64_t x = 0x9e3779b97f4a7c15ull;
	tm_buf got = {0}, want = {0};
	for (int i = 0; i < 200000; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		double v;
		switch (i % 6) {
		case 0: v = (double)(int64_t)(x >> (x & 63)) * ((x & 64) ? -1 : 1); break; /* whole, any size */
		case 1: v = (double)(int64_t)(x % 2000000000000000ull) - 1e15; break;     /* around +-1e15 */
		case 2: v = (double)(x >> 11) / (double)(1ull << (x & 31)); break;      /* binary fractions */
		case 3: memcpy(&v, &x, sizeof v); break;                                 /* any bits */
		case 4: v = (double)(int64_t)(x % 20001) / 100.0 - 100.0; break;          /* two decimals */
		default: v = ((x & 1) ? -1 : 1) * ((x & 2) ? 0.0 : 1e15 - (double)(x % 3)); break;
		}
		if (!isfinite(v))
			continue;
		got.len = want.len = 0;
		tm_timeline_number(&got, v);
		number_as_printf(&want, v);
		tm_buf_put(&got, "", 1);
		tm_buf_put(&want, "", 1);
		if (strcmp(got.data, want.data) != 0) {
			fprintf(stderr, "number %a: %s, expected %s\n", v, got.data, want.data);
			tt_case_failed = 1;
			break;
		}
		int64_t n = (int64_t)x;
		got.len = want.len = 0;
		tm_buf_put_i64(&got, i % 3 == 0 ? n : i % 3 == 1 ? n >> (x & 63) : INT64_MIN + (int64_t)(x & 3));
		tm_buf_printf(&want, "%" PRId64, i % 3 == 0 ? n : i % 3 == 1 ? n >> (x & 63) : INT64_MIN + (int64_t)(x & 3));
		if (strcmp(got.data, want.data) != 0) {
			fprintf(stderr, "integer: %s, expected %s\n", got.data, want.data);
			tt_case_failed = 1;
			break;
		}
	}
	/* every byte at every place of fields up to 40 bytes long */
	char f[40];
	for (int len = 0; len <= 40 && !tt_case_failed; len++)
		for (int at = 0; at < len && !tt_case_failed; at++)
			for (int c = 0; c < 256; c++) {
				memset(f, 'a' + at % 26, sizeof f);
				f[at] = (char)c;
				if (len > 2)
					f[len - 1] = (char)(c ^ 0x5c);
				got.len = want.len = 0;
				tm_buf_put_field(&got, f, (size_t)len);
				for (int k = 0; k < len; k++) {
					unsigned char ch = (unsigned char)f[k];
					const char *e = ch == '\\' ? "\\\\" : ch == '\t' ? "\\t" : ch == '\n' ? "\\n"
						      : ch == '\r' ? "\\r" : ch == 0 ? "\\0" : NULL;
					if (e)
						tm_buf_puts(&want, e);
					else
						tm_buf_put(&want, &f[k], 1);
				}
				if (got.len != want.len || memcmp(got.data, want.data, got.len) != 0) {
					fprintf(stderr, "field of %d bytes, byte %d at %d: escaped wrong\n", len, c, at);
					tt_case_failed = 1;
					break;
				}
			}
	tm_buf_free(&got);
	tm_buf_free(&want);
}

/* slices.tsv: ten "a" of 1..10 us and one that never ends; ranks as the
 * header documents. threads.tsv and processes.tsv name what M events
 * name. */
static void test_tables(void)
{
	tm_buf j = {0};
	tm_buf_puts(&j, "[{\"ph\":\"M\",\"pid\":7,\"name\":\"process_name\",\"args\":{\"name\":\"app\"}},"
			"{\"ph\":\"M\",\"pid\":7,\"tid\":8,\"name\":\"thread_name\",\"args\":{\"name\":\"main\\tx\"}}");
	for (int i = 10; i >= 1; i--)
		tm_buf_printf(&j, ",{\"ph\":\"X\",\"pid\":7,\"tid\":8,\"ts\":%d,\"dur\":%d,\"name\":\"a\"}", i * 100, i);
	tm_buf_puts(&j, ",{\"ph\":\"X\",\"pid\":7,\"tid\":8,\"ts\":50,\"dur\":100,\"name\":\"big\"}"
			",{\"ph\":\"B\",\"pid\":7,\"tid\":8,\"ts\":2000,\"name\":\"a\"}]");
	tm_buf_put(&j, "", 1);
	const char *path = write_tmp("tables.json", j.data);
	tm_buf_free(&j);
	size_t runs[] = {1, 0};
	for (size_t k = 0; k < 2; k++) {
		tm_merge *m;
		tm_scan *s;
		tm_gen *g = gen_of(path, runs[k], &m, &s);
		CHECK(g != NULL);
		CHECK_INT(g->tables->slices->fd, -1);
		CHECK_INT(g->tables->slices->n_mach, 1);
		char *sl = slurp(g->tables->slices, 0);
		CHECK_STR(sl, TM_SLICES_HEADER
			  TL("big\t1\t100000\t100000\t100000\t100000\t100000\t0")
			  TL("a\t11\t55000\t1000\t5000\t9000\t10000\t1"));
		free(sl);
		char *th = slurp(g->tables->threads, 0);
		/* "big" (50..150 us) holds the a at 100 us, so depth-0 time is big's
		 * 100 us plus the nine a's after it */
		CHECK(strstr(th, TL("8\tmain\\tx\t7\t\t\t12\t154000")) != NULL);
		free(th);
		char *pr = slurp(g->tables->processes, 0);
		CHECK(strstr(pr, TL("7\tapp\t\t\t")) != NULL);
		CHECK(strncmp(pr, TM_PROCESSES_HEADER, strlen(TM_PROCESSES_HEADER)) == 0);
		free(pr);
		gen_done(g, m, s);
	}
}

/* The bytes of a view, or NULL when they do not read back whole. */
static char *read_view(const tm_spooled *sp, size_t row)
{
	uint64_t size = tm_spooled_size(sp, row);
	char *b = calloc(1, (size_t)size + 1);
	if (b && size && tm_spooled_pread(sp, row, b, (size_t)size, 0) != (ssize_t)size) {
		free(b);
		return NULL;
	}
	return b;
}

/* tm_views: one machine shares the whole view's file until a put names no
 * machine; from then each holds its own bytes, and big puts go through
 * the writer thread in order. */
static void test_views_shared_then_split(void)
{
	tm_error err = {0};
	tm_views v;
	CHECK_INT(tm_views_open(&v, 1, &err), 0);
	CHECK(v.shared);
	tm_views_put_all(&v, "h\n", 2);
	static char big[200000];
	for (size_t i = 0; i < sizeof big; i++)
		big[i] = (char)('a' + i % 26);
	tm_views_put(&v, 0, big, sizeof big);
	tm_views_put(&v, 0, "m\n", 2);
	tm_views_put(&v, 1, "x\n", 2); /* no such machine: the whole view only */
	CHECK(!v.shared);
	tm_views_put(&v, 0, "n\n", 2);
	tm_spooled *s = tm_views_take(&v, "test", &err);
	tm_views_close(&v);
	CHECK(s != NULL);
	CHECK_INT(s->size, 2 + sizeof big + 6);
	CHECK_INT(tm_spooled_size(s, 0), 2 + sizeof big + 4);
	char *all = read_view(s, TM_SPOOLED_ALL), *one = read_view(s, 0);
	CHECK(all && one);
	CHECK(memcmp(all, "h\n", 2) == 0 && memcmp(one, "h\n", 2) == 0);
	CHECK(memcmp(all + 2, big, sizeof big) == 0 && memcmp(one + 2, big, sizeof big) == 0);
	CHECK_STR(all + 2 + sizeof big, "m\nx\nn\n");
	CHECK_STR(one + 2 + sizeof big, "m\nn\n");
	free(all);
	free(one);
	tm_spooled_free(s);
	/* never split: both names stand for one file's bytes */
	CHECK_INT(tm_views_open(&v, 1, &err), 0);
	tm_views_put_all(&v, "h\n", 2);
	tm_views_put(&v, 0, big, sizeof big);
	s = tm_views_take(&v, "test", &err);
	tm_views_close(&v);
	CHECK(s != NULL);
	CHECK_INT(tm_spooled_size(s, 0), s->size);
	all = read_view(s, 0);
	CHECK(all && memcmp(all + 2, big, sizeof big) == 0);
	free(all);
	tm_spooled_free(s);
}

/* Open descriptors of this process. */
static int open_fds(void)
{
	int n = 0;
	for (int fd = 0; fd < 65536; fd++)
		if (fcntl(fd, F_GETFD) != -1)
			n++;
	return n;
}

/* tm_parts: 20,000 machines' views in one file (a descriptor each ran
 * out at 1024), written interleaved and past the buffers' bound, each
 * read back whole and in pieces that cross its extents. */
static void test_parts_many_machines(void)
{
	enum { N = 20000, ROUNDS = 12 };
	tm_error err = {0};
	int before = open_fds();
	tm_views v;
	CHECK_INT(tm_views_open(&v, N, &err), 0);
	CHECK(open_fds() <= before + 2);
	tm_views_put_all(&v, "h\n", 2);
	char line[128];
	for (int r = 0; r < ROUNDS; r++)
		for (uint32_t m = 0; m < N; m++) {
			int k = snprintf(line, sizeof line, "%u:%d:%.*s\n", m, r, (int)(m * 7 + (uint32_t)r) % 90,
					 "abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyz");
			tm_views_put(&v, m, line, (size_t)k);
		}
	tm_spooled *s = tm_views_take(&v, "test", &err);
	tm_views_close(&v);
	CHECK(s != NULL);
	if (!s)
		return;
	CHECK(open_fds() <= before + 2);
	CHECK_INT(s->n_mach, N);
	int bad = 0;
	uint64_t total = 2;
	for (uint32_t m = 0; m < N && !bad; m += 97) {
		char want[ROUNDS * 128 + 4], *w = want;
		w += sprintf(w, "h\n");
		for (int r = 0; r < ROUNDS; r++)
			w += sprintf(w, "%u:%d:%.*s\n", m, r, (int)(m * 7 + (uint32_t)r) % 90,
				     "abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyz");
		size_t n = (size_t)(w - want);
		bad |= tm_spooled_size(s, m) != n;
		char *got = read_view(s, m);
		bad |= !got || memcmp(got, want, n) != 0;
		free(got);
		/* pieces of 5 bytes at every offset: each crosses extents */
		for (size_t off = 0; off < n && !bad; off += 3) {
			char piece[5];
			ssize_t k = tm_spooled_pread(s, m, piece, sizeof piece, off);
			size_t exp = n - off < sizeof piece ? n - off : sizeof piece;
			bad |= k != (ssize_t)exp || memcmp(piece, want + off, exp) != 0;
		}
	}
	CHECK(!bad);
	/* the streams were flushed early: some are in pieces */
	size_t pieces = 0;
	for (uint32_t m = 0; m < N; m++) {
		pieces += s->mach[m].n_ext > 1;
		total += s->mach[m].size - 2;
	}
	CHECK(pieces > 0);
	CHECK_INT(total, s->size);
	tm_spooled_free(s);
	CHECK_INT(open_fds(), before);
}

/* The views of v taken into *out (and v closed): 1 when every view (n
 * machines, then the whole one) reads back as want[] says (freed here),
 * whole and in pieces from every `step` bytes, and each machine's
 * extents stay few. Counts the machines' extents by kind into per[],
 * their bytes into *in_views, and fstat's the streams' file into *st. */
static int views_take_read_back(tm_views *v, tm_buf *want, size_t n, size_t step, size_t per[3],
				uint64_t *in_views, struct stat *st, tm_spooled **out)
{
	tm_error err = {0};
	tm_spooled *s = *out = tm_views_take(v, "test", &err);
	tm_views_close(v);
	int bad = !s || fstat(s->mach_fd, st) != 0;
	for (size_t m = 0; m <= n; m++) {
		size_t row_m = m == n ? TM_SPOOLED_ALL : m;
		if (!bad) {
			bad |= tm_spooled_size(s, row_m) != want[m].len;
			char *got = read_view(s, row_m);
			bad |= !got || memcmp(got, want[m].data, want[m].len) != 0;
			free(got);
		}
		for (size_t off = 0; off < want[m].len && !bad; off += step) {
			char piece[2500];
			size_t len = step * 2 < sizeof piece ? step * 2 : sizeof piece;
			ssize_t k = tm_spooled_pread(s, row_m, piece, len, off);
			size_t exp = want[m].len - off < len ? want[m].len - off : len;
			bad |= k != (ssize_t)exp || memcmp(piece, want[m].data + off, exp) != 0;
		}
		if (m < n && !bad) {
			*in_views += want[m].len;
			for (size_t e = 0; e < s->mach[m].n_ext; e++)
				per[s->mach[m].ext[e].whole]++;
			bad |= s->mach[m].n_ext > 2 + s->mach[m].size / 4096;
		}
		tm_buf_free(&want[m]);
	}
	return !bad;
}

/* A machine's stream refers to the whole view's bytes where they run in
 * order there, and copies them where they do not: random runs of puts
 * (one machine at a time for a while, or interleaved; some through
 * tm_views_reserve, some larger than its buffer), headers to one view and
 * to all, puts for no machine. Every view reads back as it was put, whole
 * and in pieces; the extents stay few; and a machine written in long
 * runs costs the streams' file far fewer bytes than its view holds. */
static void test_views_refer_to_whole(void)
{
	enum { N = 5, PUTS = 40000 };
	tm_error err = {0};
	tm_views v;
	CHECK_INT(tm_views_open(&v, N, &err), 0);
	tm_buf want[N + 1] = {{0}}; /* [N]: the whole view */
	uint64_t seed = 42;
	uint32_t row = 0;
	char bytes[700];
	int reserve_refused = 0;
	for (int i = 0; i < PUTS; i++) {
		seed = seed * 6364136223846793005ull + 1442695040888963407ull;
		uint32_t r = (uint32_t)(seed >> 33);
		/* long runs on one machine in the first half, then mixed */
		if (i < PUTS / 2 ? r % 500 == 0 : r % 3 == 0)
			row = r / 7 % (N + 1); /* N: a row with no machine */
		size_t n = 1 + r / 11 % (r % 50 ? 120 : sizeof bytes);
		for (size_t k = 0; k < n; k++)
			bytes[k] = (char)('a' + (i + (int)k) % 26);
		if (r % 997 == 0) { /* a header for one machine alone */
			tm_views_put_one(&v, 1 + row % N, bytes, n);
			tm_buf_put(&want[row % N], bytes, n);
			continue;
		}
		if (r % 1499 == 0) { /* a header for every view */
			tm_views_put_all(&v, bytes, n);
			for (size_t m = 0; m <= N; m++)
				tm_buf_put(&want[m], bytes, n);
			continue;
		}
		if (r % 2003 == 0) { /* larger than a buffer: no room, put whole */
			static char big[100000];
			for (size_t k = 0; k < sizeof big; k++)
				big[k] = (char)('A' + (i + (int)k) % 26);
			reserve_refused += tm_views_reserve(&v, row, sizeof big) == NULL;
			tm_views_put(&v, row, big, sizeof big);
			tm_buf_put(&want[N], big, sizeof big);
			if (row < N)
				tm_buf_put(&want[row], big, sizeof big);
			continue;
		}
		void *room = r % 5 == 0 ? tm_views_reserve(&v, row, n) : NULL;
		if (room) { /* the copy-free way, mixed with puts */
			memcpy(room, bytes, n);
			tm_views_commit(&v, row, n);
		} else {
			tm_views_put(&v, row, bytes, n);
		}
		tm_buf_put(&want[N], bytes, n);
		if (row < N)
			tm_buf_put(&want[row], bytes, n);
	}
	CHECK(reserve_refused > 0);
	size_t per[3] = {0};
	uint64_t in_views = 0;
	struct stat st;
	tm_spooled *s;
	int ok = views_take_read_back(&v, want, N, 613, per, &in_views, &st, &s);
	if (!ok)
		tm_spooled_free(s);
	CHECK(ok);
	CHECK(per[TM_EXT_WHOLE] + per[TM_EXT_LIST] > 0);
	/* the long runs were not copied: the streams' file holds under half */
	CHECK((uint64_t)st.st_size < in_views / 2);
	tm_spooled_free(s);
}

/* Many machines whose rows interleave one at a time (the timeline of an
 * archive of one trace per device): a machine's stream lists where its
 * rows lie in the whole view instead of copying them, so the streams'
 * file holds a small part of what the views hold, and every view still
 * reads back as it was put, whole and in pieces of every alignment. */
static void test_views_list_interleaved_rows(void)
{
	enum { N = 40, ROWS = 30000 };
	tm_error err = {0};
	tm_views v;
	CHECK_INT(tm_views_open(&v, N, &err), 0);
	tm_buf want[N + 1] = {{0}};
	uint64_t seed = 7;
	char bytes[300];
	const char head[] = "header\n";
	tm_views_put_all(&v, head, sizeof head - 1);
	for (size_t m = 0; m <= N; m++)
		tm_buf_put(&want[m], head, sizeof head - 1);
	for (int i = 0; i < ROWS; i++) {
		seed = seed * 6364136223846793005ull + 1442695040888963407ull;
		uint32_t r = (uint32_t)(seed >> 33);
		uint32_t row = r % N;
		size_t n = 1 + r / 13 % sizeof bytes; /* some shorter than a list's least */
		for (size_t k = 0; k < n; k++)
			bytes[k] = (char)('a' + (i * 7 + (int)k) % 26);
		tm_views_put(&v, row, bytes, n);
		tm_buf_put(&want[N], bytes, n);
		tm_buf_put(&want[row], bytes, n);
		if (r % 4999 == 0) { /* now and then a machine's own bytes */
			tm_views_put_one(&v, 1 + row, "own", 3);
			tm_buf_put(&want[row], "own", 3);
		}
	}
	size_t per[3] = {0};
	uint64_t in_views = 0;
	struct stat st;
	tm_spooled *s;
	int ok = views_take_read_back(&v, want, N, 977, per, &in_views, &st, &s);
	if (!ok)
		tm_spooled_free(s);
	CHECK(ok);
	CHECK(per[TM_EXT_LIST] > 0);
	/* the rows are listed, not copied: a few bytes each of ~150 */
	CHECK((uint64_t)st.st_size < in_views / 10);
	tm_spooled_free(s);
}

/* A header given last (tm_views_head): bytes put to the views first, then
 * headers to the front of each (several pieces, to all and to one, each
 * machine's in turn and interleaved), then more bytes at the end. Every
 * view reads back as header, then its bytes, whole and in pieces. With
 * one machine: shared to the end, split before the header, and split by
 * a header to one view alone. */
static void views_head_case(size_t n_mach, int split)
{
	tm_error err = {0};
	tm_views v;
	CHECK_INT(tm_views_open(&v, n_mach, &err), 0);
	tm_buf head[9] = {{0}}, body[9] = {{0}}; /* [n_mach]: the whole view */
	uint64_t seed = 7 + n_mach * 31 + (uint64_t)split;
	char bytes[300];
	for (int phase = 0; phase < 3; phase++) {
		if (phase == 1)
			tm_views_head(&v);
		int puts = phase == 1 ? 40 : 3000;
		for (int i = 0; i < puts; i++) {
			seed = seed * 6364136223846793005ull + 1442695040888963407ull;
			uint32_t r = (uint32_t)(seed >> 33);
			size_t n = 1 + r / 11 % (r % 40 ? 60 : sizeof bytes);
			for (size_t k = 0; k < n; k++)
				bytes[k] = (char)('a' + (phase * 7 + i + (int)k) % 26);
			uint32_t row = r / 7 % (uint32_t)(n_mach + 1);
			if (phase == 1) { /* headers: to all, or to one view */
				if (r % 3 == 0 || (n_mach == 1 && !split)) {
					tm_views_put_all(&v, bytes, n);
					for (size_t m = 0; m <= n_mach; m++)
						tm_buf_put(&head[m], bytes, n);
				} else if (r % 3 == 1 || split == 2) {
					size_t one = row == n_mach ? 0 : 1 + row;
					tm_views_put_one(&v, one, bytes, n);
					tm_buf_put(&head[one ? row : n_mach], bytes, n);
				}
				continue;
			}
			if (split == 1 && phase == 0 && i == puts / 2)
				row = (uint32_t)n_mach; /* for no machine: splits a shared view */
			else if (n_mach == 1)
				row = 0;
			tm_views_put(&v, row, bytes, n);
			tm_buf_put(&body[n_mach], bytes, n);
			if (row < n_mach)
				tm_buf_put(&body[row], bytes, n);
		}
		if (phase == 1)
			tm_views_head_end(&v);
	}
	tm_spooled *s = tm_views_take(&v, "test", &err);
	tm_views_close(&v);
	CHECK(s != NULL);
	if (!s)
		return;
	int bad = 0;
	for (size_t m = 0; m <= n_mach; m++) {
		size_t row_m = m == n_mach ? TM_SPOOLED_ALL : m;
		tm_buf want = {0};
		tm_buf_put(&want, head[m].data, head[m].len);
		tm_buf_put(&want, body[m].data, body[m].len);
		bad |= tm_spooled_size(s, row_m) != want.len;
		char *got = read_view(s, row_m);
		bad |= !got || memcmp(got, want.data, want.len) != 0;
		free(got);
		for (size_t off = 0; off < want.len && !bad; off += 211) {
			char piece[500];
			ssize_t k = tm_spooled_pread(s, row_m, piece, sizeof piece, off);
			size_t exp = want.len - off < sizeof piece ? want.len - off : sizeof piece;
			bad |= k != (ssize_t)exp || memcmp(piece, want.data + off, exp) != 0;
		}
		tm_buf_free(&want);
		tm_buf_free(&head[m]);
		tm_buf_free(&body[m]);
	}
	CHECK(!bad);
	tm_spooled_free(s);
}

static void test_views_head_given_last(void)
{
	for (size_t n = 1; n <= 8 && !tt_case_failed; n += 7)
		views_head_case(n, 0);
	for (int split = 1; split <= 2 && !tt_case_failed; split++)
		views_head_case(1, split);
}

/* A timeline whose sort runs fill several slabs of their file, given
 * back as the runs are merged: the lines of a sort held in memory. The
 * events are in time order, so the merge reads the runs one after the
 * other and a slab given back too early would be read as zeros. */
static void test_sort_given_back(void)
{
	size_t cap = 6u << 20, n = 0;
	char *text = malloc(cap);
	n += (size_t)snprintf(text + n, cap - n, "[");
	for (int i = 0; i < 60000; i++) /* 7.7 MB of sort runs */
		n += (size_t)snprintf(text + n, cap - n,
				      "%s{\"ph\":\"X\",\"pid\":1,\"tid\":%d,\"ts\":%d,\"dur\":1,\"name\":\"slice %d\","
				      "\"args\":{\"i\":%d}}",
				      i ? "," : "", 1 + i % 13, i * 3, i, i);
	snprintf(text + n, cap - n, "]");
	const char *path = write_tmp("sorted.json", text);
	free(text);
	tm_merge *m1, *m2;
	tm_scan *s1, *s2;
	tm_gen *held = gen_of(path, 0, &m1, &s1), *spilled = gen_of(path, 512 * 1024, &m2, &s2);
	CHECK(held && spilled);
	if (held && spilled) {
		char *a = slurp(held->timeline, TM_SPOOLED_ALL), *b = slurp(spilled->timeline, TM_SPOOLED_ALL);
		CHECK_INT(count_lines(a), 60001);
		CHECK_INT(strlen(a), strlen(b));
		CHECK(strcmp(a, b) == 0);
		free(a);
		free(b);
	}
	gen_done(held, m1, s1);
	gen_done(spilled, m2, s2);
}

/* Records of the timeline's sort, as its runs' file holds them: a varint
 * length, then the record. 1 when the file parses so up to a record its
 * writer has not finished, every record between 21 and 1000 bytes (a text
 * file does not: a tab or a newline is read as a length soon). */
static int parse_runs(const uint8_t *b, size_t n, size_t *offs, size_t *lens, size_t cap, size_t *count)
{
	size_t at = 0, k = 0;
	while (at < n) {
		uint64_t len = 0;
		unsigned sh = 0;
		while (at < n && sh < 35) {
			uint8_t c = b[at++];
			len |= (uint64_t)(c & 0x7f) << sh;
			sh += 7;
			if (!(c & 0x80))
				break;
		}
		if (len >= 21 && len <= 1000 && at + len > n)
			break; /* still being written */
		if (len < 21 || len > 1000)
			return 0;
		if (k < cap) {
			offs[k] = at;
			lens[k] = (size_t)len;
		}
		k++;
		at += (size_t)len;
	}
	*count = k;
	return k > 0 && k <= cap;
}

/* The watch of test_damaged_record: when the model has made every row (the
 * sort's runs are written, none read yet), every record in the second
 * half of its runs' file gets the damage in ctx, within a length the
 * sort accepts. */
typedef struct damage {
	size_t at;             /* where in a record */
	const uint8_t *bytes;  /* what goes there */
	size_t n;
} damage;
static int damaged_records;
static int damage_records_in(int fd, const struct stat *st, void *ctx)
{
	const damage *dm = ctx;
	size_t n = (size_t)st->st_size, cap = n / 21 + 1, count = 0;
	uint8_t *b = malloc(n);
	size_t *offs = malloc(cap * sizeof *offs), *lens = malloc(cap * sizeof *lens);
	if (pread(fd, b, n, 0) == (ssize_t)n && parse_runs(b, n, offs, lens, cap, &count))
		for (size_t i = count / 2; i < count; i++)
			if (lens[i] >= dm->at + dm->n &&
			    pwrite(fd, dm->bytes, dm->n, (off_t)(offs[i] + dm->at)) == (ssize_t)dm->n)
				damaged_records++;
	free(b);
	free(offs);
	free(lens);
	return 0;
}

static void damage_sort_records(void *ctx, const tm_gen_progress *p)
{
	if (p->phase == TM_GEN_ORDERING && p->done == p->total && !damaged_records)
		tt_each_temp_file(4096, damage_records_in, ctx);
}

/* The events of test_damaged_record, 150,000 slices of 13 threads. */
static const char *many_slices(const char *name)
{
	size_t cap = 16u << 20, n = 0;
	char *text = malloc(cap);
	n += (size_t)snprintf(text + n, cap - n, "[");
	for (int i = 0; i < 150000; i++)
		n += (size_t)snprintf(text + n, cap - n,
				      "%s{\"ph\":\"X\",\"pid\":1,\"tid\":%d,\"ts\":%d,\"dur\":1,\"name\":\"slice %d\","
				      "\"args\":{\"i\":%d}}",
				      i ? "," : "", 1 + i % 13, i * 3, i, i);
	snprintf(text + n, cap - n, "]");
	const char *path = write_tmp(name, text);
	free(text);
	return path;
}

/* A record of a sort damaged in its temporary file, within a length the
 * sort accepts, fails the pass with the sort's words for it; nothing reads
 * past it. The timeline's: a name of 2^32 - 1 bytes (after the 19-byte
 * key: flags HAS_NAME, fields P_NAME, machine 0, file 0, no track, the
 * name's length). slices.tsv's: the name_len of its key (its comparator
 * and its statistics trusted it). The builds before the checks die of
 * SIGSEGV on both. */
static void test_damaged_record(void)
{
	static const uint8_t timeline_bad[] = {2, 16, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0x0f};
	static const uint8_t slices_bad[] = {0xff, 0xff, 0xff, 0xff};
	const damage dm[2] = {{19, timeline_bad, sizeof timeline_bad}, {8, slices_bad, sizeof slices_bad}};
	const unsigned wants[2] = {TM_GEN_TIMELINE | TM_GEN_TOP, TM_GEN_TABLES};
	const char *path = many_slices("damaged.json");
	for (int k = 0; k < 2; k++) {
		tm_error err = {0};
		tm_merge *m = tm_merge_open(path, &err);
		CHECK(m != NULL);
		if (!m)
			return;
		tm_scan *s = tm_scan_run(m, NULL);
		CHECK(!s->failed);
		tm_gen_watch watch = {(void *)&dm[k], damage_sort_records};
		damaged_records = 0;
		tm_gen *g = tm_gen_build(m, s, wants[k], 512 * 1024, -1, &watch, &err);
		CHECK(damaged_records > 1000);
		CHECK(g == NULL);
		CHECK(strstr(err.msg, "a temporary file is damaged") != NULL);
		gen_done(g, m, s);
	}
}

/* profile.folded's texts go through an external sort: a Gecko profile of
 * stacks chained 1,500 deep (a sample on each, and the deepest sampled
 * twice more) gives 2.3 MB of texts, the same file whether its runs stay
 * in memory or spill in 512 KB runs, one line a stack, the deepest's
 * count 3, in byte order (held all at once, 32,000 such stacks took
 * 1.25 GB). */
static void test_profile_sorted_across_runs(void)
{
	const int depth = 1500;
	size_t cap = 1u << 20, n = 0;
	char *text = malloc(cap);
	n += (size_t)snprintf(text + n, cap - n,
			      "{\"meta\":{\"version\":27,\"interval\":1,\"categories\":[{\"name\":\"Other\"}]},"
			      "\"threads\":[{\"name\":\"T\",\"tid\":1,\"pid\":1,\"stringArray\":[\"f\",\"g\"],"
			      "\"frameTable\":{\"func\":[0,1]},\"funcTable\":{\"name\":[0,1]},\"stackTable\":{\"prefix\":[null");
	for (int i = 0; i + 1 < depth; i++)
		n += (size_t)snprintf(text + n, cap - n, ",%d", i);
	n += (size_t)snprintf(text + n, cap - n, "],\"frame\":[0");
	for (int i = 1; i < depth; i++)
		n += (size_t)snprintf(text + n, cap - n, ",%d", i % 3 == 0);
	n += (size_t)snprintf(text + n, cap - n, "]},\"samples\":{\"stack\":[0");
	for (int i = 1; i < depth + 2; i++)
		n += (size_t)snprintf(text + n, cap - n, ",%d", i < depth ? i : depth - 1);
	n += (size_t)snprintf(text + n, cap - n, "],\"time\":[0");
	for (int i = 1; i < depth + 2; i++)
		n += (size_t)snprintf(text + n, cap - n, ",%d", i);
	snprintf(text + n, cap - n, "]}}]}");
	const char *path = write_tmp("chain.json", text);
	free(text);
	tm_merge *m1, *m2;
	tm_scan *s1, *s2;
	tm_gen *held = gen_of(path, 0, &m1, &s1), *spilled = gen_of(path, 512 * 1024, &m2, &s2);
	CHECK(held && spilled);
	if (held && spilled) {
		char *a = slurp(held->tables->profile, 0), *b = slurp(spilled->tables->profile, 0);
		CHECK_INT(count_lines(a), depth);
		CHECK(strlen(a) > 2000000);
		CHECK(strcmp(a, b) == 0);
		/* byte order, and the deepest stack (the longest line) 3 times */
		int ordered = 1;
		size_t longest = 0;
		const char *longest_at = a;
		for (const char *l = a, *next; *l; l = next) {
			next = strchr(l, '\n') + 1;
			const char *after = *next ? next : NULL;
			if (after) {
				size_t la = (size_t)(strrchr(l, ' ') - l), lb = (size_t)(strchr(after, '\n') - after);
				lb = (size_t)(memrchr(after, ' ', lb) - (const void *)after);
				int c = memcmp(l, after, la < lb ? la : lb);
				ordered &= c < 0 || (c == 0 && la < lb);
			}
			if ((size_t)(next - l) > longest) {
				longest = (size_t)(next - l);
				longest_at = l;
			}
		}
		CHECK(ordered);
		CHECK(strncmp(strchr(longest_at, '\n') - 2, " 3", 2) == 0);
		free(a);
		free(b);
	}
	gen_done(held, m1, s1);
	gen_done(spilled, m2, s2);
}

/* tm_giveback: a slab whose bytes have all been read leaves the file's
 * disk (fewer blocks) once its batch is punched, the others keep their
 * bytes. */
static void test_giveback(void)
{
	char path[600];
	snprintf(path, sizeof path, "%s/giveback", tmpdir);
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	CHECK(fd >= 0);
	const size_t slab = TM_GIVEBACK_SLAB, size = 3 * slab + slab / 2;
	char *data = malloc(size);
	for (size_t i = 0; i < size; i++)
		data[i] = (char)(i * 7 + i / 4099);
	CHECK_INT(write(fd, data, size), size);
	CHECK_INT(fsync(fd), 0);
	struct stat st0, st1, st2;
	CHECK_INT(fstat(fd, &st0), 0);
	tm_giveback g;
	tm_giveback_start(&g, fd, size);
	/* slab 1 read whole in two pieces, slab 0 but its last byte */
	tm_giveback_read(&g, slab, slab / 3);
	tm_giveback_read(&g, slab + slab / 3, slab - slab / 3);
	tm_giveback_read(&g, 0, slab - 1);
	/* slab 1 waits for a batch (TM_GIVEBACK_BATCH): nothing punched yet */
	CHECK_INT(fstat(fd, &st1), 0);
	CHECK(st1.st_blocks == st0.st_blocks);
	CHECK_INT(g.n_ready, 1);
	tm_giveback_flush(&g);
	CHECK_INT(g.n_ready, 0);
	CHECK_INT(fstat(fd, &st1), 0);
	int holes = g.fd >= 0 && st1.st_blocks < st0.st_blocks;
	if (holes) {
		CHECK(st1.st_blocks <= st0.st_blocks - (blkcnt_t)(slab / 512) + 8);
		char *back = malloc(size);
		CHECK_INT(pread(fd, back, size, 0), size);
		CHECK(memcmp(back, data, slab) == 0);                    /* slab 0 stays */
		CHECK(memcmp(back + 2 * slab, data + 2 * slab, size - 2 * slab) == 0);
		for (size_t i = slab; i < 2 * slab; i++)                  /* slab 1: a hole */
			if (back[i]) {
				CHECK(!back[i]);
				break;
			}
		tm_giveback_read(&g, slab - 1, 1);
		tm_giveback_read(&g, 2 * slab, size - 2 * slab);
		tm_giveback_flush(&g); /* slabs 0, 2 and 3: two runs, two punches */
		CHECK_INT(fstat(fd, &st2), 0);
		CHECK(st2.st_blocks <= 8);
		free(back);
	}
	tm_giveback_free(&g);
	close(fd);
	free(data);
	if (!holes)
		SKIP("this file system does not punch holes");
}

/* tm_giveback: a full batch of slabs read whole is punched without a
 * flush, neighbours together whatever order they were read in. */
static void test_giveback_batch(void)
{
	char path[600];
	snprintf(path, sizeof path, "%s/giveback_batch", tmpdir);
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	CHECK(fd >= 0);
	const size_t slab = TM_GIVEBACK_SLAB, n = TM_GIVEBACK_BATCH, size = (n + 1) * slab;
	char *data = malloc(size);
	memset(data, 0x5a, size);
	CHECK_INT(write(fd, data, size), size);
	CHECK_INT(fsync(fd), 0);
	struct stat st0, st1;
	CHECK_INT(fstat(fd, &st0), 0);
	tm_giveback g;
	tm_giveback_start(&g, fd, size);
	/* the even slabs from the last down, then the odd ones */
	for (size_t k = 0; k < 2; k++)
		for (size_t i = n; i-- > 0;)
			if (i % 2 == k) {
				CHECK_INT(g.n_ready, k * (n / 2) + (n / 2 - 1 - i / 2));
				tm_giveback_read(&g, i * slab, slab);
			}
	CHECK_INT(g.n_ready, 0);
	CHECK_INT(fstat(fd, &st1), 0);
	int holes = g.fd >= 0 && st1.st_blocks < st0.st_blocks;
	if (holes) {
		CHECK(st1.st_blocks <= st0.st_blocks - (blkcnt_t)(n * slab / 512) + 8);
		char last[64];
		CHECK_INT(pread(fd, last, sizeof last, (off_t)(n * slab)), sizeof last);
		CHECK(last[0] == 0x5a && last[63] == 0x5a); /* the last slab stays */
	}
	tm_giveback_free(&g);
	close(fd);
	free(data);
	if (!holes)
		SKIP("this file system does not punch holes");
}

int main(void)
{
	snprintf(tmpdir, sizeof tmpdir, "%s/tm_timeline.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(tmpdir))
		return 1;
	TT_RUN(test_sorted_across_runs);
	TT_RUN(test_counter_values);
	TT_RUN(test_streamed);
	TT_RUN(test_giveback);
	TT_RUN(test_giveback_batch);
	TT_RUN(test_sort_given_back);
	TT_RUN(test_damaged_record);
	TT_RUN(test_profile_sorted_across_runs);
	TT_RUN(test_per_machine);
	TT_RUN(test_served);
	TT_RUN(test_served_damaged);
	TT_RUN(test_kernel_args);
	TT_RUN(test_integer_texts);
	TT_RUN(test_number_texts);
	TT_RUN(test_tables);
	TT_RUN(test_views_shared_then_split);
	TT_RUN(test_parts_many_machines);
	TT_RUN(test_views_refer_to_whole);
	TT_RUN(test_views_list_interleaved_rows);
	TT_RUN(test_views_head_given_last);
	char cmd[600];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", tmpdir);
	TT_DONE();
}
