/* core/formats/json/json_trace.h - a streaming reader for Chrome JSON traces
 * (spec/formats.md §3): the object form {"traceEvents": [...], ...} and the
 * bare array form [{...}, ...], embedded systrace text
 * ("systemTraceEvents", parsed with the §4 grammar) and the "metadata"
 * object.
 *
 * The reader pulls bytes from a tm_cursor in chunks and hands one record
 * per event to a callback, in file order. It holds at most one chunk plus
 * the event object (or metadata value, or systrace line) being read, each
 * capped at JSON_TRACE_EVENT_MAX bytes. Times are ns on the JSON file's
 * private clock (clocks.md §6.2), embedded systrace lines included; clock
 * conversion and slice stacks are the caller's business.
 *
 */
#ifndef TM_JSON_TRACE_H
#define TM_JSON_TRACE_H

#include <stddef.h>
#include <stdint.h>

#include "container/archive.h"
#include "util/json.h"
#include "formats/systrace/systrace.h"
#include "util/tm.h"

#define JSON_TRACE_CHUNK (256u * 1024u)
/* A longer event object is an error, not a reason to grow without bound. */
#define JSON_TRACE_EVENT_MAX (64u * 1024u * 1024u)
#define JSON_TRACE_ARGS_SUMMARY_MAX 200
/* formats.md §3.4: a string pid/tid becomes an id unique per distinct
 * string of the file; ours start here, above every numeric pid/tid. */
#define JSON_TRACE_STRING_ID_BASE (INT64_C(1) << 32)

typedef enum json_event_kind {
	JSON_EV_TRACE,    /* an element of traceEvents */
	JSON_EV_SYSTRACE, /* a line of systemTraceEvents (systrace is set) */
	JSON_EV_METADATA, /* a non-null member of the outer "metadata" object */
} json_event_kind;

/* One record. Pointers are valid only during the callback. Absent
 * durations and ids are -1. */
typedef struct json_event {
	json_event_kind kind;
	const tj_value *object;   /* TRACE: the whole event object, or NULL when
				   * the reader did not build it (most events:
				   * read the fields below) */
	const tj_value *id;       /* TRACE: the "id" member, or NULL (a container
				   * without its items unless `object` is set) */
	const char *raw;          /* TRACE: the object's bytes as in the file
				   * (NULL in a replayed log) */
	size_t raw_len;
	const char *rec;          /* TRACE: the model's record of it
				   * (core/formats/json/json_rec.h), with JSON_TRACE_REC; NULL
				   * for a V8 sample (P) */
	size_t rec_len;
	char phase;               /* first character of "ph"; SYSTRACE: the print phase or 0 */
	int has_ts;
	int64_t ts;               /* ns (§3.3); 0 for an M event without ts */
	int64_t dur, tts, tdur;   /* ns, or -1 when absent */
	int has_pid, has_tid;
	int64_t pid, tid;         /* after §3.4 coercion and the tid = pid rule */
	int pid_is_string, tid_is_string;
	const char *pid_name;     /* the string a string pid was (names the process) */
	const char *tid_name;     /* idem for the thread */
	const char *name;         /* NULL when absent or empty */
	const char *category;     /* "cat"; NULL when absent or empty */
	const tj_value *args;     /* the "args" object, or NULL; without
				   * JSON_TRACE_SUMMARIES given only to C and M
				   * events */
	char args_summary[JSON_TRACE_ARGS_SUMMARY_MAX + 1]; /* "k=v k2=v2", cut */
	double counter_value;     /* first numeric arg (C), or the print value */
	const systrace_event *systrace; /* SYSTRACE: the parsed line, json_embedded set */
	const char *metadata_key;       /* METADATA: records json_metadata.<key> */
	const tj_value *metadata_value; /* METADATA: never TJ_NULL */
} json_event;

/* Return 0 to go on, non-zero to stop the read (json_trace_read then
 * returns -1 and keeps whatever the callback put in err). */
typedef int (*json_event_fn)(void *ctx, const json_event *ev, tm_error *err);

typedef struct json_trace_stats {
	int64_t json_tokenizer_failure; /* bad ts/dur/tts/tdur, missing ph: event skipped */
	int64_t json_parser_failure;    /* X without dur */
	int64_t json_display_time_unit; /* each displayTimeUnit key (§3.1) */
	int64_t systrace_parse_failure; /* embedded print payloads that do not parse */
} json_trace_stats;

/* Read a whole JSON trace from `c`. Returns 0, or -1 with err set:
 * TM_EINPUT "JSON trace file is incomplete (ERR:tp-corrupt)" for an object
 * form cut short, "Not a known systrace event format (line: ...)" for a
 * bad embedded line, "Failure parsing JSON: ..." for malformed JSON; or the
 * cursor's or the callback's error. */
int json_trace_read(tm_cursor *c, json_event_fn fn, void *ctx, json_trace_stats *st,
		    tm_error *err);

/* As json_trace_read, reading `chunk` bytes at a time (tests; results do
 * not depend on the chunk size). */
int json_trace_read_chunked(tm_cursor *c, size_t chunk, json_event_fn fn, void *ctx,
			    json_trace_stats *st, tm_error *err);

/* What json_trace_read_opt makes beyond the events' fields. */
enum {
	JSON_TRACE_SUMMARIES = 1, /* args_summary, and args for every event */
	JSON_TRACE_METADATA = 2,  /* JSON_EV_METADATA records */
	JSON_TRACE_REC = 4,       /* json_event.rec, the model's record */
	JSON_TRACE_REC_ANNOT = 8, /* ... with its args as debug annotations */
	JSON_TRACE_REC_TEXT = 16, /* ... and as the slices' args text */
	JSON_TRACE_TIMES = 32,    /* only what the scan alone reads (below) */
};

/* As json_trace_read (which makes both), making only what `flags` ask:
 * building args summaries, and the tree of a large "metadata" value, is a
 * good part of the cost when nobody reads them. With JSON_TRACE_TIMES
 * (alone), an event's kind, phase, has_ts, ts, dur, tts and tdur are the
 * read's, and a C event's args; its ids, names, category, id and other
 * args are left empty (-1, NULL), and the counts are the read's. */
int json_trace_read_opt(tm_cursor *c, unsigned flags, json_event_fn fn, void *ctx, json_trace_stats *st,
			tm_error *err);

/* A file read ahead (core/util/ahead.h): json_trace_log reads like
 * json_trace_read_opt with `flags` (never JSON_TRACE_METADATA), keeping
 * every record, the counts and the outcome in `log`; json_trace_replay then
 * calls fn with the records, in order, and returns what the read would
 * have returned with that fn (st counted on from what it holds, as the
 * read would). The log's entries start at `from`. The records are the
 * read's, except that `object` and `raw` are NULL and `args` is given
 * to C and M events only (what the scan reads).
 * With JSON_TRACE_TIMES (for a reader of nothing else, such as the scan
 * alone), an event keeps only its kind, phase, has_ts, ts and dur, and a
 * C event its args as that many numbers (keys "", values 0); an embedded
 * systrace line keeps what systrace_log keeps with times_only. The rest
 * is replayed empty: NULL, 0, or -1 for the other durations and ids. */
void json_trace_log(tm_cursor *c, unsigned flags, tm_buf *log);
int json_trace_replay(tm_buf *log, size_t from, json_event_fn fn, void *ctx, json_trace_stats *st,
		      tm_error *err);

/* formats.md §3.3: a JSON time value in µs to ns. Returns 1 and sets *ns,
 * or 0 for anything that is not a time (the caller counts
 * json_tokenizer_failure). */
int json_trace_time_ns(const tj_value *v, int64_t *ns);

#endif
