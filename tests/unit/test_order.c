/* tests/unit/test_order.c - core/order: the reference sorter's order.
 *
 * The oracle below is a literal transcription of TraceSorter (v58.2):
 * Queue::Append, Queue::Sort (lower_bound of the first out-of-order
 * timestamp, then std::sort of the rest with the fast or slow comparator)
 * and SortAndExtractEventsUntilAllocId, on arrays. tm_order must hand out
 * the same sequence for random inputs, also when its sort spills to disk.
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tt.h"

#include "sort/order.h"
#include "sort/xsort.h"

typedef struct ev {
	int64_t ts;
	uint64_t alloc;
	int json;
	char phase;
	int64_t dur;
	uint32_t queue;
} ev;

typedef struct rq {
	ev *e;
	size_t n, cap;
	size_t head;
	int64_t min_ts, max_ts;
	size_t sort_start_idx;
	int64_t sort_min_ts;
} rq;

static int g_slow;

static int64_t key_for(const ev *e)
{
	if (!e->json)
		return INT64_MAX;
	if (e->phase == 'E')
		return INT64_MIN;
	if (e->phase == 'X')
		return INT64_MAX - (e->dur < 0 ? INT64_MAX : e->dur);
	return INT64_MAX;
}

static int cmp_fast(const void *a, const void *b)
{
	const ev *x = a, *y = b;
	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return x->alloc < y->alloc ? -1 : x->alloc > y->alloc;
}

static int cmp_slow(const void *a, const void *b)
{
	const ev *x = a, *y = b;
	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	int64_t kx = key_for(x), ky = key_for(y);
	if (kx != ky)
		return kx < ky ? -1 : 1;
	return x->alloc < y->alloc ? -1 : x->alloc > y->alloc;
}

static void ref_append(rq *q, ev e)
{
	if (q->n == q->cap) {
		q->cap = q->cap ? q->cap * 2 : 16;
		q->e = realloc(q->e, q->cap * sizeof(ev));
	}
	q->e[q->n++] = e;
	if (e.ts > q->max_ts || (!g_slow && e.ts == q->max_ts)) {
		q->max_ts = e.ts;
	} else {
		if (q->sort_start_idx == 0) {
			q->sort_start_idx = q->n - 1;
			q->sort_min_ts = e.ts;
		} else if (e.ts < q->sort_min_ts) {
			q->sort_min_ts = e.ts;
		}
	}
	if (e.ts < q->min_ts)
		q->min_ts = e.ts;
}

static void ref_sort(rq *q)
{
	size_t lb = 0;
	while (lb < q->sort_start_idx && q->e[lb].ts < q->sort_min_ts)
		lb++;
	qsort(q->e + lb, q->n - lb, sizeof(ev), g_slow ? cmp_slow : cmp_fast);
	q->sort_start_idx = 0;
}

/* SortAndExtractEventsUntilAllocId over everything. */
static size_t ref_extract(rq *qs, size_t nq, ev *out)
{
	size_t k = 0;
	for (;;) {
		size_t min_i = 0;
		int64_t m0 = INT64_MAX, m1 = INT64_MAX;
		int all_empty = 1;
		for (size_t i = 0; i < nq; i++) {
			rq *q = &qs[i];
			if (q->head >= q->n)
				continue;
			if (all_empty || q->min_ts < m0) {
				m1 = m0;
				m0 = q->min_ts;
				min_i = i;
			} else if (q->min_ts < m1) {
				m1 = q->min_ts;
			}
			all_empty = 0;
		}
		if (all_empty)
			break;
		rq *q = &qs[min_i];
		if (q->sort_start_idx != 0)
			ref_sort(q);
		while (q->head < q->n && q->e[q->head].ts <= m1)
			out[k++] = q->e[q->head++];
		q->min_ts = q->head < q->n ? q->e[q->head].ts : INT64_MAX;
	}
	return k;
}

static unsigned rnd_state = 12345;
static unsigned rnd(void)
{
	rnd_state = rnd_state * 1103515245u + 12345u;
	return (rnd_state >> 8) & 0xffffff;
}

/* 0: random timestamps; else each queue's events come from g_streams
 * streams, each in time order by itself, interleaved (how a proto file's
 * sequences reach one queue). */
static unsigned g_streams;

/* Records of event k: "ev<k>", and when g_big some longer ones, now and
 * then longer than a pile reader's buffer, filled with bytes of k. */
static int g_big;
#define PAYLOAD_MAX 9000

static int payload_of(uint64_t k, char *buf)
{
	int n = snprintf(buf, 24, "ev%llu", (unsigned long long)k);
	if (!g_big)
		return n;
	size_t len = k % 37 == 0 ? 3000 + (size_t)(k * 131 % 6000) : k % 5 == 0 ? 200 + (size_t)(k % 900) : (size_t)n;
	for (size_t i = (size_t)n; i < len; i++)
		buf[i] = (char)(k * 7 + i);
	return (int)len;
}

static int run_case(size_t n_events, size_t n_queues, int ts_range, int json_mix, size_t run_bytes)
{
	tm_order *o = tm_order_new(run_bytes);
	rq *qs = calloc(n_queues, sizeof(rq));
	int *is_json = calloc(n_queues, sizeof(int));
	for (size_t i = 0; i < n_queues; i++) {
		is_json[i] = json_mix && rnd() % 2;
		qs[i].min_ts = INT64_MAX;
		qs[i].sort_min_ts = INT64_MAX;
		tm_order_queue(o, is_json[i]);
	}
	g_slow = 0;
	tm_error err = {0};
	int ok = 1;
	int64_t clock[8][64] = {{0}};
	for (size_t k = 0; k < n_events; k++) {
		uint32_t qi = (uint32_t)(rnd() % n_queues);
		static const char phases[] = "BEXiXbeM";
		int64_t ts = (int64_t)(rnd() % (unsigned)ts_range);
		if (g_streams) {
			int64_t *c = &clock[qi % 8][rnd() % g_streams];
			ts = *c += (int64_t)(rnd() % (unsigned)ts_range);
		}
		ev e = {ts, k, is_json[qi],
			is_json[qi] ? phases[rnd() % 8] : 0, (int64_t)(rnd() % 7) - 1, qi};
		if (e.json && e.phase == 'X')
			g_slow = 1;
		ref_append(&qs[qi], e);
		static char payload[PAYLOAD_MAX];
		int pl = payload_of(k, payload);
		if (tm_order_push(o, qi, e.ts, e.phase, e.dur, payload, (uint32_t)pl, &err) != 0)
			ok = 0;
	}
	if (tm_order_finish(o, &err) != 0)
		ok = 0;
	ev *want = calloc(n_events ? n_events : 1, sizeof(ev));
	size_t nw = ref_extract(qs, n_queues, want);
	tm_order_rec r;
	size_t i = 0;
	int rc;
	while (ok && (rc = tm_order_next(o, &r, &err)) == 1) {
		static char payload[PAYLOAD_MAX];
		int pl = i < nw ? payload_of(want[i].alloc, payload) : 0;
		if (i >= nw || r.seq != want[i].alloc || r.ts != want[i].ts || r.queue != want[i].queue ||
		    r.len != (uint32_t)pl || memcmp(r.data, payload, (size_t)pl) != 0)
			ok = 0;
		i++;
	}
	if (i != nw)
		ok = 0;
	for (size_t q = 0; q < n_queues; q++)
		free(qs[q].e);
	free(qs);
	free(is_json);
	free(want);
	tm_order_free(o);
	return ok;
}

static void test_random_in_memory(void)
{
	for (int c = 0; c < 300; c++)
		if (!run_case(1 + rnd() % 400, 1 + rnd() % 6, 1 + (int)(rnd() % 50), c % 3 != 0, 0))
			TT_FAIL_("case %d differs from the reference's order", c);
}

static void test_random_spilled(void)
{
	/* tiny runs: many spills and a grouped store in a file */
	for (int c = 0; c < 60; c++)
		if (!run_case(2000 + rnd() % 3000, 1 + rnd() % 9, 1 + (int)(rnd() % 300), c % 2, 4096))
			TT_FAIL_("case %d differs from the reference's order", c);
}

static void test_interleaved_streams(void)
{
	/* in order or nearly: piles, in memory and in a file, past the pile
	 * limit (more streams than piles) into the sort */
	static const unsigned streams[] = {1, 2, 5, 40, 64};
	for (int c = 0; c < 40; c++) {
		g_streams = streams[c % 5];
		if (!run_case(3000 + rnd() % 3000, 1 + rnd() % 5, 1 + (int)(rnd() % 4), c % 2, c % 4 < 2 ? 0 : 4096))
			TT_FAIL_("case %d (%u streams) differs from the reference's order", c, g_streams);
	}
	g_streams = 0;
}

static void test_spilled_long_records(void)
{
	/* records now and then longer than a pile reader's buffer (which
	 * grows for one and shrinks back after it), read back whole and in
	 * the reference's order, with piles in order and in disorder */
	g_big = 1;
	for (int c = 0; c < 24; c++) {
		g_streams = c % 3 ? 3 : 0;
		if (!run_case(2000 + rnd() % 2000, 1 + rnd() % 40, 1 + (int)(rnd() % 100), c % 2, 16384))
			TT_FAIL_("case %d differs from the reference's order", c);
	}
	g_streams = 0;
	g_big = 0;
}

static void test_spilled_given_back(void)
{
	/* a file of several slabs (TM_GIVEBACK_SLAB), its space given back
	 * as it is read: piles in order, piles past the limit into the
	 * queue's sort, and random disorder; the same order and payloads */
	static const unsigned streams[] = {3, 64, 0};
	for (int c = 0; c < 3; c++) {
		g_streams = streams[c];
		if (!run_case(90000, 1 + c, 1 + (int)(rnd() % 40), c == 2, 65536))
			TT_FAIL_("case %d (%u streams) differs from the reference's order", c, g_streams);
	}
	g_streams = 0;
}

/* n bytes of `byte` in the middle of every temporary file this process
 * has open; how many. */
typedef struct junk_at {
	size_t n;
	int byte;
} junk_at;

static int put_junk(int fd, const struct stat *st, void *ctx)
{
	const junk_at *j = ctx;
	if ((size_t)st->st_size < 2 * j->n)
		return 0;
	char *junk = malloc(j->n);
	memset(junk, j->byte, j->n);
	int ok = pwrite(fd, junk, j->n, st->st_size / 2) == (ssize_t)j->n;
	free(junk);
	return ok;
}

static int damage_temporary_files_with(size_t n, int byte)
{
	junk_at j = {n, byte};
	return tt_each_temp_file(0, put_junk, &j);
}

static int damage_temporary_files(size_t n)
{
	return damage_temporary_files_with(n, 0);
}

static int by_first_u32(const void *a, const void *b)
{
	uint32_t x, y;
	memcpy(&x, a, 4);
	memcpy(&y, b, 4);
	return x < y ? -1 : x > y;
}

/* A temporary file damaged under a sort or the order (the files are
 * ours, but a disk may fail silently) fails the read with EIO; a record
 * of a length none had never reaches a comparator (a zeroed sort run
 * read 25 bytes of keys from a record of none: a crash under ASan). */
static void test_damaged_temporary_file(void)
{
	tm_error err = {0};
	tm_xsort *x = tm_xsort_new(by_first_u32, 4096);
	for (uint32_t i = 0; i < 5000; i++) {
		uint32_t rec[4] = {(i * 7919u) % 5000u, i, i, i};
		CHECK_INT(tm_xsort_add(x, rec, sizeof rec, &err), 0);
	}
	CHECK_INT(tm_xsort_finish(x, &err), 0);
	CHECK_INT(damage_temporary_files(4096), 1);
	const void *r;
	uint32_t len;
	int rc;
	while ((rc = tm_xsort_next(x, &r, &len, &err)) == 1)
		CHECK_INT(len, sizeof(uint32_t[4]));
	CHECK_INT(rc, -1);
	CHECK_STR(err.msg, "a temporary file is damaged");
	tm_xsort_free(x);

	/* bytes of 0xff: a length whose varint never ends */
	x = tm_xsort_new(by_first_u32, 4096);
	for (uint32_t i = 0; i < 5000; i++) {
		uint32_t rec[4] = {(i * 7919u) % 5000u, i, i, i};
		CHECK_INT(tm_xsort_add(x, rec, sizeof rec, &err), 0);
	}
	CHECK_INT(tm_xsort_finish(x, &err), 0);
	CHECK_INT(damage_temporary_files_with(4096, 0xff), 1);
	while ((rc = tm_xsort_next(x, &r, &len, &err)) == 1)
		CHECK_INT(len, sizeof(uint32_t[4]));
	CHECK_INT(rc, -1);
	CHECK_STR(err.msg, "a temporary file is damaged");
	tm_xsort_free(x);

	tm_order *o = tm_order_new(4096);
	tm_order_queue(o, 0);
	tm_order_queue(o, 0);
	for (uint32_t i = 0; i < 20000; i++)
		CHECK_INT(tm_order_push(o, i % 2, (int64_t)i, 0, 0, "payload", 7, &err), 0);
	CHECK_INT(tm_order_finish(o, &err), 0);
	CHECK(damage_temporary_files(4096) >= 1);
	tm_order_rec orec;
	while ((rc = tm_order_next(o, &orec, &err)) == 1)
		CHECK_INT(orec.len, 7);
	CHECK_INT(rc, -1);
	CHECK_STR(err.msg, "a temporary file is damaged");
	tm_order_free(o);
}

/* A record the caller's check refuses, read back from a run's file, fails
 * the read as damage before a comparator sees it; merge passes check what
 * they read too. A sort that never spilled checks nothing. */
static int g_checked;
static int refuse_4242(const void *rec, uint32_t len)
{
	uint32_t k;
	memcpy(&k, rec, 4);
	g_checked++;
	return len == sizeof(uint32_t[4]) && k != 4242;
}

static void test_record_check(void)
{
	for (int spill = 0; spill < 2; spill++) {
		tm_error err = {0};
		tm_xsort *x = tm_xsort_new(by_first_u32, spill ? 4096 : 0);
		tm_xsort_set_check(x, refuse_4242);
		g_checked = 0;
		for (uint32_t i = 0; i < 40000; i++) {
			uint32_t rec[4] = {(i * 7919u) % 40000u, i, i, i};
			CHECK_INT(tm_xsort_add(x, rec, sizeof rec, &err), 0);
		}
		/* 40,000 records in runs of 4 KiB take merge passes in
		 * tm_xsort_finish: the record may be met there */
		int rc = tm_xsort_finish(x, &err);
		const void *r;
		uint32_t len, got = 0;
		if (rc == 0)
			while ((rc = tm_xsort_next(x, &r, &len, &err)) == 1)
				got++;
		if (spill) {
			CHECK_INT(rc, -1);
			CHECK_STR(err.msg, "a temporary file is damaged");
			CHECK(got < 4242);
			CHECK(g_checked > 0);
		} else {
			CHECK_INT(rc, 0);
			CHECK_INT(got, 40000);
			CHECK_INT(g_checked, 0);
		}
		tm_xsort_free(x);
	}
}

/* A temporary file that cannot grow (a full TMPDIR; here RLIMIT_FSIZE,
 * which needs no root: writes past it fail with EFBIG) fails a sort and
 * the order store with one message, whether the writer's failure is found
 * while records are added or when they are finished (that one said
 * "sort: " first). The limit is lifted before anything is checked: it
 * holds for every file of the process, the test's log too. */
static void test_full_temporary_file(void)
{
	struct rlimit was;
	CHECK_INT(getrlimit(RLIMIT_FSIZE, &was), 0);
	struct rlimit small = {64 * 1024, was.rlim_max};
	void (*sig)(int) = signal(SIGXFSZ, SIG_IGN);
	tm_error x_err = {0}, o_err = {0};
	int x_rc = 0, o_rc = 0;
	CHECK_INT(setrlimit(RLIMIT_FSIZE, &small), 0);
	tm_xsort *x = tm_xsort_new(by_first_u32, 4096);
	for (uint32_t i = 0; i < 50000 && x_rc == 0; i++) {
		uint32_t rec[4] = {(i * 7919u) % 50000u, i, i, i};
		x_rc = tm_xsort_add(x, rec, sizeof rec, &x_err);
	}
	if (x_rc == 0)
		x_rc = tm_xsort_finish(x, &x_err);
	tm_order *o = tm_order_new(4096);
	tm_order_queue(o, 0);
	for (uint32_t i = 0; i < 50000 && o_rc == 0; i++)
		o_rc = tm_order_push(o, 0, (int64_t)i, 0, 0, "payload", 7, &o_err);
	if (o_rc == 0)
		o_rc = tm_order_finish(o, &o_err);
	setrlimit(RLIMIT_FSIZE, &was);
	signal(SIGXFSZ, sig);
	CHECK_INT(x_rc, -1);
	CHECK_STR(x_err.msg, "cannot write a temporary file: File too large");
	CHECK_INT(o_rc, -1);
	CHECK_STR(o_err.msg, "cannot write a temporary file: File too large");
	tm_xsort_free(x);
	tm_order_free(o);
}

/* Open file descriptors of this process. */
static int open_fds(void)
{
	int n = 0;
	DIR *d = opendir("/proc/self/fd");
	for (struct dirent *e; d && (e = readdir(d)) != NULL;)
		n += e->d_name[0] != '.';
	if (d)
		closedir(d);
	return n;
}

/* A sort of more runs than it merges at once (16 for its budget) merges
 * them in passes, here two: every record comes out once and in order,
 * records longer than a read buffer too, and the passes' files are closed
 * behind them. */
static void test_merge_passes(void)
{
	tm_error err = {0};
	int fds = open_fds();
	tm_xsort *x = tm_xsort_new(by_first_u32, 4096);
	const uint32_t n = 40000;
	uint64_t sum_in = 0;
	static uint32_t big[20000]; /* 80 KB: more than a reader's buffer */
	for (uint32_t i = 0; i < n; i++) {
		uint32_t rec[4] = {(i * 7919u) % n, i, i ^ 0x5a5a5a5au, i * 3u};
		sum_in += rec[1] + (uint64_t)rec[2] + rec[3];
		if (i % 10000 == 5) {
			big[0] = rec[0];
			big[1] = i;
			CHECK_INT(tm_xsort_add(x, big, sizeof big, &err), 0);
		} else {
			CHECK_INT(tm_xsort_add(x, rec, sizeof rec, &err), 0);
		}
	}
	CHECK_INT(tm_xsort_finish(x, &err), 0);
	CHECK_INT(open_fds(), fds + 1); /* the last pass's file alone */
	const void *r;
	uint32_t len, prev = 0, got = 0;
	uint64_t sum_out = 0;
	int rc, in_order = 1;
	size_t most = 0;
	while ((rc = tm_xsort_next(x, &r, &len, &err)) == 1) {
		uint32_t rec[4];
		memcpy(rec, r, sizeof rec);
		if (tm_xsort_mem(x) > most)
			most = tm_xsort_mem(x);
		in_order &= !got || rec[0] >= prev;
		prev = rec[0];
		if (len == sizeof big) {
			uint32_t i = rec[1];
			sum_out += i + (uint64_t)(i ^ 0x5a5a5a5au) + i * 3u;
		} else {
			CHECK_INT(len, sizeof rec);
			sum_out += rec[1] + (uint64_t)rec[2] + rec[3];
		}
		got++;
	}
	CHECK_INT(rc, 0);
	CHECK_INT(got, n);
	CHECK(in_order);
	CHECK(sum_out == sum_in);
	/* 16 read buffers of 64 KiB and the long record: not one per run
	 * (about 550 of them) */
	CHECK(most > 0 && most <= 16 * 65536 + sizeof big + 4);
	tm_xsort_free(x);
	CHECK_INT(open_fds(), fds);
}

/* A sort's runs hold each record's length as a varint: records of 1 to 3
 * bytes of length (127, 128, 16,383, 16,384 bytes and about) come back
 * whole and in order through spills and a merge pass. */
static void test_record_lengths(void)
{
	tm_error err = {0};
	tm_xsort *x = tm_xsort_new(by_first_u32, 4096);
	static const uint32_t lens[] = {4, 5, 126, 127, 128, 129, 300, 16383, 16384, 16385, 40000};
	const size_t nl = sizeof lens / sizeof lens[0];
	static uint8_t buf[40000];
	const uint32_t n = 3000;
	for (uint32_t i = 0; i < n; i++) {
		uint32_t key = (i * 7919u) % n, l = lens[i % nl];
		memcpy(buf, &key, 4);
		for (uint32_t k = 4; k < l; k++)
			buf[k] = (uint8_t)(key + k);
		CHECK_INT(tm_xsort_add(x, buf, l, &err), 0);
	}
	CHECK_INT(tm_xsort_finish(x, &err), 0);
	const void *r;
	uint32_t len, got = 0, prev = 0;
	int rc, ok = 1;
	while ((rc = tm_xsort_next(x, &r, &len, &err)) == 1) {
		uint32_t key;
		memcpy(&key, r, 4);
		ok &= !got || key >= prev;
		/* the key says which record it is: its length and its bytes */
		uint32_t i = 0;
		while ((i * 7919u) % n != key)
			i++;
		ok &= len == lens[i % nl];
		for (uint32_t k = 4; k < len && ok; k++)
			ok &= ((const uint8_t *)r)[k] == (uint8_t)(key + k);
		prev = key;
		got++;
	}
	CHECK_INT(rc, 0);
	CHECK_INT(got, n);
	CHECK(ok);
	tm_xsort_free(x);
}

/* The worked example of order.h: a queue that starts earlier drains its
 * ties first even when its index is higher. */
static void test_earlier_queue_drains_ties(void)
{
	tm_order *o = tm_order_new(0);
	uint32_t q0 = tm_order_queue(o, 0), q1 = tm_order_queue(o, 0);
	tm_error err;
	tm_order_push(o, q0, 10, 0, -1, "a", 1, &err);
	tm_order_push(o, q0, 20, 0, -1, "b", 1, &err);
	tm_order_push(o, q1, 5, 0, -1, "c", 1, &err);
	tm_order_push(o, q1, 10, 0, -1, "d", 1, &err);
	CHECK(tm_order_finish(o, &err) == 0);
	char got[8] = {0};
	tm_order_rec r;
	for (int i = 0; i < 4 && tm_order_next(o, &r, &err) == 1; i++)
		got[i] = *(const char *)r.data;
	CHECK_STR(got, "cdab");
	tm_order_free(o);
}

/* Slow sorting: at a tie, JSON E first, then X by decreasing duration. */
static void test_slow_ties(void)
{
	tm_order *o = tm_order_new(0);
	uint32_t q = tm_order_queue(o, 1);
	tm_error err;
	tm_order_push(o, q, 1, 'X', 5, "x", 1, &err);   /* turns slow sorting on */
	tm_order_push(o, q, 7, 'B', -1, "b", 1, &err);
	tm_order_push(o, q, 7, 'X', 2, "s", 1, &err);   /* tie: sorting needed from here */
	tm_order_push(o, q, 7, 'X', 9, "l", 1, &err);
	tm_order_push(o, q, 7, 'E', -1, "e", 1, &err);
	CHECK(tm_order_finish(o, &err) == 0);
	char got[8] = {0};
	tm_order_rec r;
	for (int i = 0; i < 5 && tm_order_next(o, &r, &err) == 1; i++)
		got[i] = *(const char *)r.data;
	CHECK_STR(got, "xelsb");
	tm_order_free(o);
}

int main(void)
{
	TT_RUN(test_earlier_queue_drains_ties);
	TT_RUN(test_slow_ties);
	TT_RUN(test_random_in_memory);
	TT_RUN(test_random_spilled);
	TT_RUN(test_interleaved_streams);
	TT_RUN(test_spilled_long_records);
	TT_RUN(test_spilled_given_back);
	TT_RUN(test_damaged_temporary_file);
	TT_RUN(test_full_temporary_file);
	TT_RUN(test_record_check);
	TT_RUN(test_merge_passes);
	TT_RUN(test_record_lengths);
	TT_DONE();
}
