/* tests/unit/test_ahead.c - files read ahead on a second thread
 * (core/util/ahead.h): each item is read once, by one thread or the other, its
 * log reaches the caller in order, the budget bounds what is held, and a
 * stop in the middle leaves nothing behind (ASan in `make check`). */
#include <dirent.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "util/ahead.h"
#include "util/relay.h"
#include "tt.h"

#define N_ITEMS 40

typedef struct items {
	pthread_mutex_t mu;
	int reads[N_ITEMS];      /* times each item was read into a log */
	int held, max_held;      /* read ahead and not yet done with */
	int slow;                /* 1: the caller lingers over each item, so the
				  * helper gets ahead; 2: reads are slow, so the
				  * caller catches up and reads ahead itself */
} items;

static void pause_a_little(void)
{
	struct timespec ts = {0, 300000};
	nanosleep(&ts, NULL);
}

static void read_item(void *ctx, size_t i, tm_buf *log)
{
	items *it = ctx;
	pthread_mutex_lock(&it->mu);
	it->reads[i]++;
	if (++it->held > it->max_held)
		it->max_held = it->held;
	pthread_mutex_unlock(&it->mu);
	if (it->slow == 2)
		pause_a_little();
	size_t at = tm_log_begin(log, 1, (uint8_t)i, 0, 0);
	tm_log_put_s(log, "item", 4);
	tm_log_end(log, at);
}

/* Until the helper has read something (it has the first items to itself
 * until the caller takes them), at most 10 s. */
static void wait_first_read(items *it)
{
	for (int k = 0; k < 30000; k++) {
		pthread_mutex_lock(&it->mu);
		int any = 0;
		for (size_t i = 0; i < N_ITEMS; i++)
			any |= it->reads[i];
		pthread_mutex_unlock(&it->mu);
		if (any)
			return;
		pause_a_little();
	}
}

/* Take every item in order as the scan does. Returns how many came as
 * logs (read ahead), or -1 when a log is not its item's. */
static int take_all(tm_ahead *a, items *it, const uint64_t *cost)
{
	int logged = 0;
	for (size_t i = 0; i < N_ITEMS; i++) {
		if (it->slow == 1)
			pause_a_little();
		tm_buf *log = tm_ahead_take(a, i);
		if (log) {
			const char *p = log->data + TM_LOG_FIRST;
			tm_log_head h;
			size_t n;
			tm_log_get(&p, &h, sizeof h);
			const char *s = tm_log_get_s(&p, &n);
			if (!cost[i] || h.tag != 1 || h.a != (uint8_t)i || n != 4 || strcmp(s, "item") != 0)
				return -1;
			logged++;
			pthread_mutex_lock(&it->mu);
			it->held--;
			pthread_mutex_unlock(&it->mu);
		} else if (cost[i]) {
			pause_a_little(); /* as reading it in place would */
		}
		tm_ahead_done(a, i);
	}
	return logged;
}

static void ahead_reads_each_item_once(void)
{
	if (!tm_relay_useful())
		SKIP("one CPU: nothing is read ahead");
	for (int slow = 1; slow <= 2; slow++) {
		items it = {PTHREAD_MUTEX_INITIALIZER, {0}, 0, 0, slow};
		uint64_t cost[N_ITEMS];
		for (size_t i = 0; i < N_ITEMS; i++)
			cost[i] = i % 5 == 3 ? 0 : 100; /* some are never read ahead */
		tm_ahead *a = tm_ahead_start(N_ITEMS, cost, read_item, &it);
		CHECK(a != NULL);
		wait_first_read(&it);
		int logged = take_all(a, &it, cost);
		tm_ahead_stop(a);
		CHECK(logged > 0);
		for (size_t i = 0; i < N_ITEMS; i++) {
			CHECK(it.reads[i] <= 1);
			if (!cost[i])
				CHECK_INT(it.reads[i], 0);
		}
	}
}

static void ahead_keeps_to_budget(void)
{
	if (!tm_relay_useful())
		SKIP("one CPU: nothing is read ahead");
	items it = {PTHREAD_MUTEX_INITIALIZER, {0}, 0, 0, 1};
	uint64_t cost[N_ITEMS];
	for (size_t i = 0; i < N_ITEMS; i++)
		cost[i] = TM_AHEAD_BUDGET / 2 + 1; /* two never fit at once */
	tm_ahead *a = tm_ahead_start(N_ITEMS, cost, read_item, &it);
	CHECK(a != NULL);
	CHECK(take_all(a, &it, cost) >= 0);
	tm_ahead_stop(a);
	CHECK_INT(it.max_held, 1);
}

static void ahead_stops_midway(void)
{
	items it = {PTHREAD_MUTEX_INITIALIZER, {0}, 0, 0, 0};
	uint64_t cost[N_ITEMS];
	for (size_t i = 0; i < N_ITEMS; i++)
		cost[i] = 10;
	tm_ahead *a = tm_ahead_start(N_ITEMS, cost, read_item, &it);
	for (size_t i = 0; i < 3; i++) {
		tm_ahead_take(a, i);
		tm_ahead_done(a, i);
	}
	tm_ahead_stop(a); /* logs read ahead and never taken are freed */
	for (size_t i = 0; i < N_ITEMS; i++)
		CHECK(it.reads[i] <= 1);
}

static void ahead_nothing_to_gain(void)
{
	uint64_t one[3] = {0, 5, 0}, none[2] = {0, 0};
	items it = {PTHREAD_MUTEX_INITIALIZER, {0}, 0, 0, 0};
	CHECK(tm_ahead_start(3, one, read_item, &it) == NULL);
	CHECK(tm_ahead_start(2, none, read_item, &it) == NULL);
	CHECK(tm_ahead_take(NULL, 0) == NULL); /* the caller reads in place */
	tm_ahead_done(NULL, 0);
	tm_ahead_stop(NULL);
}

static void log_fields_round_trip(void)
{
	tm_buf b = {0};
	size_t at = tm_log_begin(&b, 7, 1, 2, 3);
	CHECK_INT(at, TM_LOG_FIRST);
	int64_t v = -42;
	tm_buf_put(&b, &v, sizeof v);
	tm_log_put_s(&b, "a\0b", 3); /* a NUL inside is kept */
	tm_log_put_s(&b, NULL, 0);
	tm_log_put_s(&b, "", 0);
	tm_log_end(&b, at);
	const char *p = b.data + at;
	tm_log_head h;
	size_t n;
	tm_log_get(&p, &h, sizeof h);
	CHECK_INT(h.next, b.len - at);
	CHECK_INT(h.tag, 7);
	CHECK_INT(h.c, 3);
	int64_t w;
	tm_log_get(&p, &w, sizeof w);
	CHECK_INT(w, -42);
	const char *s = tm_log_get_s(&p, &n);
	CHECK(n == 3 && memcmp(s, "a\0b", 4) == 0);
	CHECK(tm_log_get_s(&p, &n) == NULL);
	s = tm_log_get_s(&p, &n);
	CHECK(s && n == 0 && *s == '\0');
	CHECK(p == b.data + b.len);
	tm_buf_free(&b);
}

/* A relay whose thread is held in its first batch: the batches handed
 * after it wait, and tm_relay_queued counts them. */
typedef struct held_relay {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int started, release, batches;
} held_relay;

static void held_batch(void *ctx, const tm_buf *batch)
{
	(void)batch;
	held_relay *h = ctx;
	pthread_mutex_lock(&h->mu);
	h->started = 1;
	h->batches++;
	pthread_cond_broadcast(&h->cv);
	while (!h->release)
		pthread_cond_wait(&h->cv, &h->mu);
	pthread_mutex_unlock(&h->mu);
}

/* Whether a thread of this process is named `name` (/proc/self/task). */
static int thread_named(const char *name)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	int found = 0;
	while (d && !found && (e = readdir(d)) != NULL) {
		char path[300], comm[32] = "";
		snprintf(path, sizeof path, "/proc/self/task/%s/comm", e->d_name);
		FILE *f = fopen(path, "r");
		if (!f)
			continue;
		if (fgets(comm, sizeof comm, f))
			comm[strcspn(comm, "\n")] = '\0';
		fclose(f);
		found = strcmp(comm, name) == 0;
	}
	if (d)
		closedir(d);
	return found;
}

static void relay_counts_what_waits(void)
{
	held_relay h = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0, 0};
	tm_relay *r = tm_relay_start("tm-test", held_batch, &h, 4);
	CHECK(r != NULL);
	CHECK(thread_named("tm-test")); /* as top -H shows it */
	CHECK_INT(tm_relay_queued(r), 0);
	tm_buf_puts(tm_relay_buf(r), "one");
	tm_relay_hand(r);
	pthread_mutex_lock(&h.mu);
	while (!h.started)
		pthread_cond_wait(&h.cv, &h.mu);
	pthread_mutex_unlock(&h.mu);
	CHECK_INT(tm_relay_queued(r), 0); /* taken: it is the one held */
	for (int i = 0; i < 3; i++) {
		tm_buf_puts(tm_relay_buf(r), "more");
		tm_relay_hand(r);
	}
	CHECK_INT(tm_relay_queued(r), 3);
	pthread_mutex_lock(&h.mu);
	h.release = 1;
	pthread_cond_broadcast(&h.cv);
	pthread_mutex_unlock(&h.mu);
	tm_relay_finish(r);
	CHECK_INT(h.batches, 4);
}

int main(void)
{
	TT_RUN(ahead_reads_each_item_once);
	TT_RUN(ahead_keeps_to_budget);
	TT_RUN(ahead_stops_midway);
	TT_RUN(ahead_nothing_to_gain);
	TT_RUN(log_fields_round_trip);
	TT_RUN(relay_counts_what_waits);
	TT_DONE();
}
