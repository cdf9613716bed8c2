/* core/util/per_thread.h - state kept per thread, given back when it ends.
 * (Its own header: pthread.h brings time.h's names where tm.h goes.) */
#ifndef TM_PER_THREAD_H
#define TM_PER_THREAD_H

#include <pthread.h>
#include <stddef.h>

/* State kept per thread (FUSE serves, and may build two merges, on
 * several threads): made zeroed on a thread's first tm_per_thread call,
 * given to `destroy` (which frees it whole) when that thread ends.
 * Define one with TM_PER_THREAD(type, destroy) at file scope. */
typedef struct tm_per_thread {
	int ready;           /* the key is made (read atomically) */
	pthread_key_t key;
	size_t size;
	void (*destroy)(void *);
} tm_per_thread;
#define TM_PER_THREAD(type, destroy) {0, 0, sizeof(type), (destroy)}
/* This thread's state of t. Never NULL: like tm_xmalloc, it prints one
 * line and aborts when no key or memory can be had. */
void *tm_per_thread_get(tm_per_thread *t);

#endif
