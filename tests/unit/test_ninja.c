/* tests/unit/test_ninja.c - a ninja log read as the reference's
 * NinjaLogParser reads it (core/formats/ninja/ninja.c). */
#include "tt.h"

#include "formats/ninja/ninja.h"

static int feed_all(ninja_log *lg, const char *text, size_t n, size_t chunk, tm_error *err)
{
	for (size_t at = 0; at < n; at += chunk) {
		size_t k = n - at < chunk ? n - at : chunk;
		if (ninja_feed(lg, text + at, k, err) != 0)
			return -1;
	}
	return 0;
}

static const char *name_of(const ninja_log *lg, size_t i, char *buf, size_t cap)
{
	const ninja_job *j = &lg->jobs[i];
	snprintf(buf, cap, "%.*s", (int)j->names_len, lg->names.data + j->names_off);
	return buf;
}

/* Lines and fields: one rule's several outputs are one job; a line
 * without the fields counts; empty lines and fields are skipped; a CR
 * spoils the hash; the unended last line is never read. The same at
 * every chunk size. */
static void ninja_lines(void)
{
	static const char text[] = "# ninja log v5\n"
				   "1\t10\t0\ta.o\tff\n"
				   "1\t10\t0\tb.o\tff\n"     /* a.o's rule: one job */
				   "1\t10\t0\tc.o\tfe\n"     /* another hash */
				   "\n\n2\t\t\t5\t0\td.o\t1\n" /* empty lines, doubled tabs */
				   "not a job\n"
				   "3\t4\t0\te.o\t1\r\n"     /* a CR in the hash */
				   "x\t4\t0\tf.o\t1\n"
				   "7\t8\t0\tg.o\t0x2a\n"    /* strtoull takes 0x */
				   "9\t12\t0\tlast.o\t1";    /* no newline */
	size_t chunks[] = {1, 2, 7, 64, sizeof text};
	for (size_t c = 0; c < sizeof chunks / sizeof chunks[0]; c++) {
		ninja_log lg = {0};
		tm_error err = {0};
		CHECK(feed_all(&lg, text, sizeof text - 1, chunks[c], &err) == 0);
		CHECK_INT(lg.n, 4);
		CHECK_INT(lg.parse_errors, 3);
		char b[64];
		CHECK_STR(name_of(&lg, 0, b, sizeof b), "a.o b.o");
		CHECK_STR(name_of(&lg, 1, b, sizeof b), "c.o");
		CHECK_STR(name_of(&lg, 2, b, sizeof b), "d.o");
		CHECK_INT(lg.jobs[2].start_ms, 2);
		CHECK_INT(lg.jobs[2].end_ms, 5);
		CHECK_STR(name_of(&lg, 3, b, sizeof b), "g.o");
		CHECK_INT(lg.jobs[3].hash, 0x2a);
		ninja_free(&lg);
	}
}

/* The reference's two errors, with its texts; a NUL byte ends the text. */
static void ninja_header(void)
{
	struct {
		const char *text;
		const char *err;
	} cases[] = {
		{"# ninja log v4\n1\t2\t0\ta\t1\n", NINJA_ERR_VERSION},
		{"# ninja log v\n", NINJA_ERR_VERSION},
		{"# ninja log v5 \n", NINJA_ERR_VERSION},
		{"# ninja logs\n", NINJA_ERR_HEADER},
		{"\n\n# ninja log v4294967301\n1\t2\t0\ta\t1\n", NULL}, /* a uint32 cast: 5 */
		{"# ninja log v5", NULL}, /* no line ended: nothing read */
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		ninja_log lg = {0};
		tm_error err = {0};
		int rc = feed_all(&lg, cases[i].text, strlen(cases[i].text), 3, &err);
		if (cases[i].err) {
			CHECK_INT(rc, -1);
			CHECK_STR(err.msg, cases[i].err);
		} else {
			CHECK_INT(rc, 0);
		}
		ninja_free(&lg);
	}
	static const char nul[] = "# ninja log v5\n1\t2\t0\ta\t1\n3\t4\0\t0\tb\t1\n5\t6\t0\tc\t1\n";
	ninja_log lg = {0};
	tm_error err = {0};
	CHECK(ninja_feed(&lg, nul, sizeof nul - 1, &err) == 0);
	CHECK_INT(lg.n, 1);            /* "3\t4" ends the text */
	CHECK_INT(lg.parse_errors, 1);
	ninja_free(&lg);
}

/* Equal starts in the order libstdc++'s std::sort leaves them: starts
 * (srand(5), rand() % 3 of glibc) and the indexes std::sort of g++ 12
 * gave, recorded. */
static void ninja_sort_ties(void)
{
	static const int start[40] = {1, 2, 0, 0, 2, 1, 2, 0, 0, 1, 0, 2, 0, 0, 1, 2, 1, 0, 1, 2,
				      2, 1, 0, 0, 0, 2, 1, 1, 2, 1, 0, 0, 1, 1, 0, 1, 2, 0, 1, 0};
	static const int want[40] = {39, 31, 30, 24, 23, 22, 34, 17, 13, 12, 10, 2, 3, 37, 7, 8, 35, 16, 14, 18,
				     0,  21, 5,  38, 9,  33, 26, 27, 32, 29, 20, 36, 28, 25, 19, 15, 11, 6, 4, 1};
	ninja_job j[40];
	memset(j, 0, sizeof j);
	for (int i = 0; i < 40; i++) {
		j[i].start_ms = start[i];
		j[i].hash = (uint64_t)i;
	}
	ninja_sort_jobs(j, 40);
	for (int i = 0; i < 40; i++)
		CHECK_INT(j[i].hash, want[i]);
}

/* Workers as the reference's scan over every worker picks them, against
 * that scan itself on random logs (the treap must agree). */
static void ninja_workers(void)
{
	uint64_t rng = 12345;
	for (int round = 0; round < 200; round++) {
		size_t n = (size_t)(round * 7 % 300) + 1;
		ninja_log lg = {0};
		for (size_t i = 0; i < n; i++) {
			rng = rng * 6364136223846793005ull + 1442695040888963407ull;
			int64_t s = (int64_t)(rng >> 33) % (round % 5 == 0 ? 3 : 500);
			int64_t d = (int64_t)(rng >> 20) % 80 - (round % 7 == 0 ? 10 : 0);
			TM_GROW(lg.jobs, lg.cap, lg.n + 1);
			memset(&lg.jobs[lg.n], 0, sizeof lg.jobs[0]);
			lg.jobs[lg.n].start_ms = s;
			lg.jobs[lg.n].end_ms = s + d;
			lg.jobs[lg.n].hash = i;
			lg.n++;
		}
		ninja_finish(&lg);
		int64_t busy[300];
		size_t nw = 0;
		for (size_t i = 0; i < lg.n; i++) {
			const ninja_job *j = &lg.jobs[i];
			if (i)
				CHECK(lg.jobs[i - 1].start_ms <= j->start_ms);
			size_t w = SIZE_MAX;
			for (size_t k = 0; k < nw; k++)
				if (busy[k] <= j->start_ms && (w == SIZE_MAX || busy[w] < busy[k]))
					w = k;
			int made = w == SIZE_MAX;
			if (made)
				w = nw++;
			CHECK_INT(j->new_worker, made);
			CHECK_INT(j->worker, w + 1);
			busy[w] = j->end_ms;
		}
		ninja_free(&lg);
	}
}

int main(void)
{
	TT_RUN(ninja_lines);
	TT_RUN(ninja_header);
	TT_RUN(ninja_sort_ties);
	TT_RUN(ninja_workers);
	TT_DONE();
}
