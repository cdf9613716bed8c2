/* core/formats/gecko/gecko.h - a Gecko profile read as the reference's
 * GeckoTraceTokenizer reads it, handed to a sink: each frame as the
 * thread's tables name it, each callsite (parent, frame, depth from 0 at
 * the root), each sample the reference would push (its time in ns of the
 * file's clock: the ms times 1000 twice, a raw profile's cut to whole ms),
 * then each marker of the thread (a processed profile's). */
#ifndef TM_GECKO_H
#define TM_GECKO_H

#include <stddef.h>
#include <stdint.h>

#include "util/tm.h"

typedef struct gecko_thread {
	uint32_t tid, pid;
	const char *name;      /* "" for none */
	size_t name_n;
	int first;             /* no sample of the thread was taken yet */
} gecko_thread;

/* A marker (ProcessMarkers): its phase as the file gives it (0 instant,
 * 1 interval, 2 interval start, 3 interval end; another makes no slice),
 * its time (an end's endTime, else its startTime, in ns of the file's
 * clock), an interval's duration (ns, not below 0; 0 for the others), its
 * name, its category's name (NULL for none: an index meta.categories does
 * not have), its data (an object or array, or NULL). */
typedef struct gecko_marker {
	int phase;
	int64_t raw_ts, dur;
	const char *name;
	size_t name_n;
	const char *cat;
	size_t cat_n;
	const struct tj_value *data;
} gecko_marker;

typedef struct gecko_sink {
	void *ctx;
	/* the id the sink gives the frame of this name (InternFrame) */
	uint32_t (*frame)(void *ctx, const char *name, size_t n);
	/* the id it gives the callsite (InternCallsite); parent UINT32_MAX
	 * for a root */
	uint32_t (*callsite)(void *ctx, uint32_t parent, uint32_t frame, uint32_t depth);
	/* a sample at raw_ts: 1 when the sink took it (placed in time), 0
	 * when it dropped it (the thread's first is then still to come) */
	int (*sample)(void *ctx, const gecko_thread *t, int64_t raw_ts, uint32_t callsite);
	/* a marker of thread t (t->first: the thread's first marker the sink
	 * takes, which makes the thread): 1 when the sink took it, 0 when it
	 * dropped it */
	int (*marker)(void *ctx, const gecko_thread *t, const gecko_marker *m);
} gecko_sink;

/* Read the profile doc[0..n) into the sink: 0, or -1 with the reference's
 * error (GECKO_ERR_SYNTAX) when the document is not JSON. */
int gecko_read(const char *doc, size_t n, const gecko_sink *sink, tm_error *err);

/* The reference's error for a document it cannot parse: the parser's
 * words for the container it was in, then its reason. */
#define GECKO_ERR_SYNTAX                                                                                   \
	"Syntactic error while parsing Gecko trace: %s%s; please use an external JSON tool (e.g. jq) to "    \
	"understand the source of the error."

#endif
