/* core/util/relay.h - batches of work relayed to a thread of their own, in
 * order: the producer fills a buffer, hands it over when it is full, and
 * goes on filling another while a second thread runs `fn` on each batch
 * (issue 10: both cores). At most `depth` full batches wait between the
 * two, so memory stays bounded; buffers go round, none is allocated per
 * batch. Used by the timeline's line formatter (core/export/timeline.c) and the
 * exporter's packet rewriter (core/export/export.c) and the model's replay
 * (core/model/model.c).
 *
 * One producer thread; fn runs on the relay's thread only, and nothing
 * it touches may be used by the producer until tm_relay_finish returns. */
#ifndef TM_RELAY_H
#define TM_RELAY_H

#include <stddef.h>

#include "util/tm.h"

typedef struct tm_relay tm_relay;

/* n rounded up to 8: a record in a batch starts 8-aligned after the one
 * before it, so its head can hold int64 fields. */
#define TM_RELAY_PAD8(n) (((n) + 7) & ~(size_t)7)

/* Whether this process may run on two CPUs or more (not so under taskset
 * or a container's cpuset of one): on one, a relay only adds hand-overs. */
int tm_relay_useful(void);

/* Start the thread, named `name` (at most 15 bytes: what top -H and perf
 * show). NULL when it cannot start (the caller does the work itself
 * then). */
tm_relay *tm_relay_start(const char *name, void (*fn)(void *ctx, const tm_buf *batch), void *ctx, size_t depth);
/* The buffer the producer fills (its len only grows until tm_relay_hand). */
tm_buf *tm_relay_buf(tm_relay *r);
/* Hand the filled buffer over, waiting while `depth` batches wait; the
 * producer's buffer is an empty one after. */
void tm_relay_hand(tm_relay *r);
/* The batches handed over that the relay's thread has not taken yet, as
 * of a moment ago: 0 when it is idle or on its last one (the producer is
 * the slower), up to `depth` when the producer waits for it. For a
 * producer that can do part of the work of either side. */
size_t tm_relay_queued(tm_relay *r);
/* Hand over what was filled, wait until fn has run on every batch, end
 * the thread and free (NULL is fine). */
void tm_relay_finish(tm_relay *r);

#endif
