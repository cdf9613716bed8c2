/* core/util/relay.c - batches of work relayed to a thread (relay.h). */
#include "util/relay.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>

#define RELAY_MAX_DEPTH 16

/* Each thread's own fields on cache lines of their own: in the exporter,
 * sharing a line with what the other thread writes doubled the CPU time
 * of a proto export. */
struct tm_relay {
	_Alignas(64) tm_buf fill; /* the producer's: the batch it is filling */
	_Alignas(64) pthread_mutex_t mu;
	pthread_cond_t more;      /* a batch is queued, or stop */
	pthread_cond_t room;      /* a batch was taken */
	tm_buf q[RELAY_MAX_DEPTH]; /* the queue, a ring from `head` */
	size_t depth, head, n;
	atomic_size_t queued;     /* n, for tm_relay_queued without the lock */
	int stop;
	pthread_t thread;
	_Alignas(64) tm_buf cur;  /* the relay thread's: the batch fn runs on */
	void (*fn)(void *ctx, const tm_buf *batch);
	void *ctx;
};

static void *relay_main(void *arg)
{
	tm_relay *r = arg;
	pthread_mutex_lock(&r->mu);
	for (;;) {
		while (!r->n && !r->stop)
			pthread_cond_wait(&r->more, &r->mu);
		if (!r->n)
			break;
		tm_buf t = r->cur; /* take the batch, leave an empty buffer */
		r->cur = r->q[r->head];
		r->q[r->head] = t;
		r->head = (r->head + 1) % r->depth;
		r->n--;
		atomic_store_explicit(&r->queued, r->n, memory_order_relaxed);
		pthread_cond_signal(&r->room);
		pthread_mutex_unlock(&r->mu);
		r->fn(r->ctx, &r->cur);
		r->cur.len = 0;
		pthread_mutex_lock(&r->mu);
	}
	pthread_mutex_unlock(&r->mu);
	return NULL;
}

int tm_relay_useful(void)
{
	cpu_set_t cpus;
	return sched_getaffinity(0, sizeof cpus, &cpus) == 0 && CPU_COUNT(&cpus) >= 2;
}

tm_relay *tm_relay_start(const char *name, void (*fn)(void *ctx, const tm_buf *batch), void *ctx, size_t depth)
{
	tm_relay *r = tm_xcalloc_aligned(_Alignof(tm_relay), sizeof(tm_relay));
	r->fn = fn;
	r->ctx = ctx;
	r->depth = depth < 1 ? 1 : depth > RELAY_MAX_DEPTH ? RELAY_MAX_DEPTH : depth;
	pthread_mutex_init(&r->mu, NULL);
	pthread_cond_init(&r->more, NULL);
	pthread_cond_init(&r->room, NULL);
	if (pthread_create(&r->thread, NULL, relay_main, r) != 0) {
		pthread_mutex_destroy(&r->mu);
		pthread_cond_destroy(&r->more);
		pthread_cond_destroy(&r->room);
		free(r);
		return NULL;
	}
	pthread_setname_np(r->thread, name); /* joined in tm_relay_finish: the handle stays valid */
	return r;
}

size_t tm_relay_queued(tm_relay *r)
{
	return atomic_load_explicit(&r->queued, memory_order_relaxed);
}

tm_buf *tm_relay_buf(tm_relay *r)
{
	return &r->fill;
}

void tm_relay_hand(tm_relay *r)
{
	pthread_mutex_lock(&r->mu);
	while (r->n == r->depth)
		pthread_cond_wait(&r->room, &r->mu);
	size_t slot = (r->head + r->n) % r->depth;
	tm_buf t = r->q[slot];
	r->q[slot] = r->fill;
	r->fill = t;
	r->fill.len = 0;
	r->n++;
	atomic_store_explicit(&r->queued, r->n, memory_order_relaxed);
	pthread_cond_signal(&r->more);
	pthread_mutex_unlock(&r->mu);
}

void tm_relay_finish(tm_relay *r)
{
	if (!r)
		return;
	if (r->fill.len)
		tm_relay_hand(r);
	pthread_mutex_lock(&r->mu);
	r->stop = 1;
	pthread_cond_signal(&r->more);
	pthread_mutex_unlock(&r->mu);
	pthread_join(r->thread, NULL); /* the thread empties the queue first */
	pthread_mutex_destroy(&r->mu);
	pthread_cond_destroy(&r->more);
	pthread_cond_destroy(&r->room);
	for (size_t i = 0; i < RELAY_MAX_DEPTH; i++)
		tm_buf_free(&r->q[i]);
	tm_buf_free(&r->fill);
	tm_buf_free(&r->cur);
	free(r);
}
