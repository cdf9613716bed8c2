/* core/formats/gecko/gecko_format.h - a Firefox (Gecko) profile as a
 * format module: what the registry (core/formats/registry.c) lists of it.
 *
 * The reference (GeckoTraceTokenizer) reads the whole JSON document, then
 * per top-level thread (`threads`; the `processes` of other processes are
 * not read) its frames (a "name (in lib)" frame in a dummy mapping of that
 * lib, any other in the file's dummy mapping "gecko"), its stacks (callsites
 * from the root at depth 0) and its samples, on the file's own clock (ms,
 * times 1000 twice). Both shapes: the raw profile Firefox writes (schema
 * and data tables; a sample's time is read as an unsigned integer first,
 * so it is cut to whole ms) and the processed one (flat arrays); a
 * `shared` block's strings and tables serve every thread. A thread's
 * first sample makes it (UpdateThread(tid, pid), named kOther), each
 * sample a stack sample of source "gecko" on GetOrCreateThread(tid).
 * A processed thread's markers (its `markers` table) follow its samples:
 * each at its time on the same clock (an interval end's endTime, else its
 * startTime), its thread made (UpdateThread, named) with its first, a
 * slice of its category and name on a track of (thread, category, name):
 * an instant or interval a whole slice, a start and an end a begin and an
 * end matched by name; its data flattened into args under `data`. */
#ifndef TM_GECKO_FORMAT_H
#define TM_GECKO_FORMAT_H

#include "export/export.h"
#include "formats/kinds.h"
#include "model/model.h"
#include "scan/scan_internal.h"

/* A Gecko profile's tokenizer (tokenize.c). */
extern const tm_tokenizer tm_gecko_tokenizer;

/* As perf script's (perf_text_format.h), the tokenizer interns the file's
 * frames and callsites and hands each new one to the model in a side
 * record. TM_MREC_GECKO records: sub 0, a sample: tm_gecko_rec, then, for
 * a thread's first, its name (a uint32 length, its bytes). Side records:
 * sub 1, a frame: its id (uint32), its name, and its mapping (each a
 * uint32 length and its bytes; a length of UINT32_MAX: the file's
 * mapping "gecko"); sub 2, a callsite: tm_gecko_callsite. */
typedef struct tm_gecko_rec {
	uint32_t tid, pid;
	uint8_t first;       /* the thread's first sample: it is made, and named */
	uint32_t callsite;   /* the file's id of its leaf */
} tm_gecko_rec;

typedef struct tm_gecko_callsite {
	uint32_t id, parent; /* the file's ids; parent UINT32_MAX for a root */
	uint32_t frame;
	uint32_t depth;      /* from 0 at the root */
} tm_gecko_callsite;

/* sub 3, a marker: tm_gecko_marker_rec, then its name, its category
 * (UINT32_MAX for none), for a thread's first its thread's name, and its
 * args as compact JSON members without braces: GECKO_DATA_ARG, then the
 * data's JSON (UINT32_MAX for none), each a uint32 length and its bytes. */
#define GECKO_DATA_ARG "\"data\":"
typedef struct tm_gecko_marker_rec {
	uint32_t tid, pid;
	int64_t dur;
	uint8_t phase;
	uint8_t first;
} tm_gecko_marker_rec;

enum { GECKO_SAMPLE, GECKO_FRAME_DEF, GECKO_CALLSITE_DEF, GECKO_MARKER };

/* TM_MREC_GECKO records into the tables (model_gecko.c). */
extern const tm_parser tm_gecko_parser;

/* What the parser hands the encoder of a sample or a marker
 * (tm_mobserved.event; a marker's track is tm_mobserved.track). */
typedef struct gecko_observed {
	int first;           /* the thread's first sample: its pid goes with it */
	uint32_t pid, tid;
	uint32_t callsite;
	int marker;          /* a marker: the rest */
	int phase;
	int64_t dur;
	const char *name, *cat; /* NUL-terminated; cat NULL for none */
	const char *args;    /* its args (GECKO_DATA_ARG and the data's JSON), or NULL */
	size_t args_n;
} gecko_observed;

/* Its samples into merged.pftrace (encode.c). */
extern const tm_encoder tm_gecko_encoder;

#endif
