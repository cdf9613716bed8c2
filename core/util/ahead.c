/* core/util/ahead.c - trace files read ahead on a second thread (ahead.h). */
#include "util/ahead.h"

#include <pthread.h>
#include <stdlib.h>

#include "util/relay.h"

/* Logs of a few MB each, grown from nothing and freed, cost a page fault
 * per page every time: more than the reading they spare. Buffers are
 * kept for the next items instead. */
#define AHEAD_POOL 4

typedef enum item_state {
	ITEM_FREE,  /* nobody has started it */
	ITEM_HERE,  /* the caller reads it in place */
	ITEM_BUSY,  /* being read into its log */
	ITEM_READY, /* its log is complete */
	ITEM_GONE,  /* replayed and freed */
} item_state;

struct tm_ahead {
	pthread_mutex_t mu;
	pthread_cond_t cv;   /* an item became ready or gone, or stop */
	pthread_t thread;
	int stop;
	size_t n;
	uint64_t *cost;
	unsigned char *state;
	tm_buf *logs;
	uint64_t held;       /* cost of the BUSY and READY items */
	tm_buf pool[AHEAD_POOL]; /* logs replayed, kept for the next items */
	size_t n_pool;
	size_t from;         /* no FREE item to read ahead below this */
	tm_ahead_fn fn;
	void *ctx;
};

/* The first item above `after` (or from the start when after is SIZE_MAX)
 * that is to be read ahead and that the budget allows now, claimed; or
 * SIZE_MAX. Only the first free one is considered: reading past it would
 * hold memory for files far from the scan. */
static size_t claim(tm_ahead *a, size_t after)
{
	size_t k = after == SIZE_MAX ? a->from : after + 1;
	if (k < a->from)
		k = a->from;
	while (k < a->n && (a->state[k] != ITEM_FREE || !a->cost[k]))
		k++;
	if (after == SIZE_MAX)
		a->from = k;
	if (k >= a->n || (a->held && a->held + a->cost[k] > TM_AHEAD_BUDGET))
		return SIZE_MAX;
	a->state[k] = ITEM_BUSY;
	a->held += a->cost[k];
	if (a->n_pool)
		a->logs[k] = a->pool[--a->n_pool];
	return k;
}

/* Read item k, claimed, with the lock held on entry and on return. */
static void read_item(tm_ahead *a, size_t k)
{
	/* The log is grown in a copy of its tm_buf on this thread's stack:
	 * neighbouring logs[] entries share a cache line, and the other
	 * thread writing its own entry's len on every event while this one
	 * writes k's made each put a trip between the cores (a third of the
	 * JSON scan's time). */
	tm_buf log = a->logs[k];
	pthread_mutex_unlock(&a->mu);
	a->fn(a->ctx, k, &log);
	pthread_mutex_lock(&a->mu);
	a->logs[k] = log;
	a->state[k] = ITEM_READY;
	pthread_cond_broadcast(&a->cv);
}

/* Is any item left that the helper may still read? */
static int work_left(const tm_ahead *a)
{
	for (size_t k = a->from; k < a->n; k++)
		if (a->state[k] == ITEM_FREE && a->cost[k])
			return 1;
	return 0;
}

static void *helper_main(void *arg)
{
	tm_ahead *a = arg;
	pthread_mutex_lock(&a->mu);
	while (!a->stop) {
		size_t k = claim(a, SIZE_MAX);
		if (k != SIZE_MAX) {
			read_item(a, k);
			continue;
		}
		if (!work_left(a))
			break;
		pthread_cond_wait(&a->cv, &a->mu); /* for the budget */
	}
	pthread_mutex_unlock(&a->mu);
	return NULL;
}

tm_ahead *tm_ahead_start(size_t n, const uint64_t *cost, tm_ahead_fn fn, void *ctx)
{
	size_t ahead = 0;
	for (size_t i = 0; i < n; i++)
		ahead += cost[i] != 0;
	if (ahead < 2 || !tm_relay_useful())
		return NULL;
	tm_ahead *a = tm_xcalloc(1, sizeof(*a));
	a->n = n;
	a->cost = tm_xmalloc(n * sizeof(*a->cost));
	memcpy(a->cost, cost, n * sizeof(*a->cost));
	a->state = tm_xcalloc(n, 1);
	a->logs = tm_xcalloc(n, sizeof(*a->logs));
	a->fn = fn;
	a->ctx = ctx;
	pthread_mutex_init(&a->mu, NULL);
	pthread_cond_init(&a->cv, NULL);
	if (pthread_create(&a->thread, NULL, helper_main, a) != 0) {
		pthread_cond_destroy(&a->cv);
		pthread_mutex_destroy(&a->mu);
		free(a->logs);
		free(a->state);
		free(a->cost);
		free(a);
		return NULL;
	}
	pthread_setname_np(a->thread, "tm-ahead"); /* joined in tm_ahead_stop */
	return a;
}

tm_buf *tm_ahead_take(tm_ahead *a, size_t i)
{
	if (!a || i >= a->n)
		return NULL;
	pthread_mutex_lock(&a->mu);
	for (;;) {
		if (a->state[i] == ITEM_FREE) {
			a->state[i] = ITEM_HERE;
			break;
		}
		if (a->state[i] == ITEM_READY) {
			pthread_mutex_unlock(&a->mu);
			return &a->logs[i];
		}
		/* the helper is reading it: read a later one meanwhile */
		size_t k = claim(a, i);
		if (k != SIZE_MAX)
			read_item(a, k);
		else
			pthread_cond_wait(&a->cv, &a->mu);
	}
	pthread_mutex_unlock(&a->mu);
	return NULL;
}

void tm_ahead_done(tm_ahead *a, size_t i)
{
	if (!a || i >= a->n)
		return;
	pthread_mutex_lock(&a->mu);
	if (a->state[i] == ITEM_READY) {
		if (a->n_pool < AHEAD_POOL) {
			a->logs[i].len = 0;
			a->pool[a->n_pool++] = a->logs[i];
			a->logs[i] = (tm_buf){0};
		} else {
			tm_buf_free(&a->logs[i]);
		}
		a->held -= a->cost[i];
		pthread_cond_broadcast(&a->cv);
	}
	a->state[i] = ITEM_GONE;
	pthread_mutex_unlock(&a->mu);
}

void tm_ahead_stop(tm_ahead *a)
{
	if (!a)
		return;
	pthread_mutex_lock(&a->mu);
	a->stop = 1;
	pthread_cond_broadcast(&a->cv);
	pthread_mutex_unlock(&a->mu);
	pthread_join(a->thread, NULL);
	for (size_t i = 0; i < a->n; i++)
		tm_buf_free(&a->logs[i]);
	for (size_t i = 0; i < a->n_pool; i++)
		tm_buf_free(&a->pool[i]);
	pthread_cond_destroy(&a->cv);
	pthread_mutex_destroy(&a->mu);
	free(a->logs);
	free(a->state);
	free(a->cost);
	free(a);
}
