/* core/sort/order.h - the order in which the reference hands events to its
 * parsers (Perfetto's TraceSorter at v58.2, src/trace_processor/sorter),
 * reproduced for records of our own.
 *
 * The reference keeps one queue per stream its readers create (a JSON file
 * makes a queue for its events and one for its embedded systrace lines, a
 * systrace file one, a proto reader one for packets, one for track events
 * and, lazily, one per CPU for ftrace events), in creation order. Every
 * event is pushed on its queue with its trace-time timestamp. At the end of
 * the input:
 *
 *   - each queue is put in order: by timestamp, ties in push order; once
 *     any JSON `X` event has been pushed ("slow sorting"), ties at or after
 *     the queue's first out-of-order timestamp are ordered JSON `E` first,
 *     then `X` by decreasing duration, then the rest, each in push order;
 *   - queues are drained together: repeatedly take the queue whose first
 *     event is earliest (the lower queue on a tie) and hand out its events
 *     while they are no later than the first event of the next earliest
 *     queue. So at equal timestamps a queue that started earlier can go
 *     first even when its index is higher.
 *
 * Records are opaque bytes to this module. Each queue keeps them as the
 * few runs in which they arrive in order, merged when read; only what is
 * out of order beyond that is sorted (core/sort/xsort.h). Past a memory budget
 * they go to a temporary file, so memory does not grow with their number.
 */
#ifndef TM_ORDER_H
#define TM_ORDER_H

#include <stddef.h>
#include <stdint.h>

#include "util/tm.h"

typedef struct tm_order tm_order;

/* A record handed out by tm_order_next. `data` is valid until the next
 * call. */
typedef struct tm_order_rec {
	uint32_t queue;
	int64_t ts;
	uint64_t seq;        /* push order over all queues */
	const void *data;
	uint32_t len;
} tm_order_rec;

/* `run_bytes`: the memory budget (0: the default; small values are for
 * tests). */
tm_order *tm_order_new(size_t run_bytes);

/* A new queue; ids count from 0 in creation order. A JSON queue (its
 * events take part in slow sorting) is marked by `json`. */
uint32_t tm_order_queue(tm_order *o, int json);

/* Push one record on queue `q` at trace time `ts` (>= 0). For a JSON
 * queue, `phase` is the event's "ph" character and `dur` its duration in
 * ns (-1 when absent); both are ignored on other queues. Returns 0, or -1
 * with err set when a temporary file cannot be written. */
int tm_order_push(tm_order *o, uint32_t q, int64_t ts, char phase, int64_t dur, const void *data,
		  uint32_t len, tm_error *err);

/* No more pushes. Returns 0 or -1 with err set. */
int tm_order_finish(tm_order *o, tm_error *err);

/* The next record in the reference's order: 1, 0 at the end, -1 with err
 * set. */
int tm_order_next(tm_order *o, tm_order_rec *out, tm_error *err);

/* Records pushed. */
uint64_t tm_order_count(const tm_order *o);

void tm_order_free(tm_order *o);

#endif
