/* core/formats/systrace/systrace.h - a streaming reader for systrace / ftrace text
 * (spec/formats.md §4): plain atrace output, `trace-cmd report` text,
 * `TRACE:`-prefixed adb dumps and HTML-wrapped systrace.
 *
 * The reader pulls bytes from a tm_cursor in chunks and hands one event per
 * parsed line to a callback, in file order. It holds at most one chunk plus
 * the current line (a line is capped at SYSTRACE_LINE_MAX bytes). Times are
 * the file's own (formats.md §4.2: MONOTONIC for a systrace file, the JSON
 * file's private clock for embedded text); clock conversion is the caller's
 * business.
 */
#ifndef TM_SYSTRACE_H
#define TM_SYSTRACE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "container/archive.h"
#include "util/tm.h"

#define SYSTRACE_CHUNK (256u * 1024u)
/* A longer line is not parsed: it counts as one systrace_parse_failure. */
#define SYSTRACE_LINE_MAX (64u * 1024u * 1024u)
#define SYSTRACE_ARGS_SUMMARY_MAX 200

typedef struct systrace_stats {
	int64_t systrace_parse_failure; /* line not matching §4.2, or a bad §4.4 print payload */
} systrace_stats;

/* One parsed line. Strings point into reader memory and are valid only
 * during the callback; all are NUL-terminated and never NULL. */
typedef struct systrace_event {
	int64_t ts;             /* ns: (int64)(strtod(secs) * 1e9), truncated (§4.2) */
	int64_t pid;            /* the thread id of the line */
	int64_t tgid;           /* the optional tgid column; -1 when absent or "-----" */
	uint32_t cpu;
	const char *task;       /* text before the match, trimmed; "<...>" means unknown */
	const char *event_name; /* e.g. "sched_switch", "tracing_mark_write" */
	const char *args;       /* everything after "event_name:", trimmed */
	char args_summary[SYSTRACE_ARGS_SUMMARY_MAX + 1]; /* args cut to 200 bytes */
	int json_embedded;      /* from a JSON file's systemTraceEvents (§3.1) */
	int bad_print;          /* a print-family line whose payload does not parse
				 * (§4.4): delivered for its thread, already counted
				 * as a systrace_parse_failure, print_phase 0 */

	/* The print family (tracing_mark_write, print, 0; §4.4). print_phase is
	 * 0 for every other event. */
	char print_phase;       /* B E C S F I N G H */
	int print_has_tgid;     /* E may lack it; every other phase has one */
	uint32_t print_tgid;
	const char *print_name;  /* B/C/S/F/I/N/G; "" for E and H */
	const char *print_track; /* N/G/H track name, else "" */
	int64_t print_value;     /* C: counter value; S/F/G/H: cookie; else 0 */
} systrace_event;

/* Return 0 to go on, non-zero to stop the read (systrace_read then returns
 * -1 and keeps whatever the callback put in err). */
typedef int (*systrace_event_fn)(void *ctx, const systrace_event *ev, tm_error *err);

/* Read a whole systrace file from `c` (from its current position).
 * Pre-processing, HTML sections and line skipping follow §4.1; lines that
 * do not match §4.2 or carry a bad print payload add to
 * st->systrace_parse_failure and are skipped; `trace_event_clock_sync:`
 * print payloads are skipped silently. A line whose print payload is bad is
 * counted and still delivered with bad_print set (the reference makes its
 * thread before it rejects the payload). Returns 0, or -1 with err set by
 * the cursor or the callback. */
int systrace_read(tm_cursor *c, systrace_event_fn fn, void *ctx, systrace_stats *st,
		  tm_error *err);

/* As systrace_read, reading `chunk` bytes at a time (tests; results do
 * not depend on the chunk size). */
int systrace_read_chunked(tm_cursor *c, size_t chunk, systrace_event_fn fn, void *ctx,
			  systrace_stats *st, tm_error *err);

/* A file read ahead (core/util/ahead.h): systrace_log reads like systrace_read,
 * keeping every line, the counts and the outcome in `log`;
 * systrace_replay then calls fn with them, in order, and returns what
 * systrace_read would have returned with that fn (st counted on from what
 * it holds, as the read would). The log's entries start at `from`.
 * With times_only, a line keeps only its ts and bad_print: replayed, its
 * strings are "", its numbers 0 and its tgid -1 (for a reader that looks
 * at nothing else, such as the scan alone). */
void systrace_log(tm_cursor *c, int times_only, tm_buf *log);
/* An event of nothing: strings "", numbers 0, tgid -1, the summary ""
 * (its other bytes left as they were). What a times-only line is
 * replayed with besides its ts and bad_print, and where a line's parse
 * and a record's unpacking start. */
void systrace_event_empty(systrace_event *ev);
int systrace_replay(tm_buf *log, size_t from, systrace_event_fn fn, void *ctx, systrace_stats *st,
		    tm_error *err);

/* A line's fields into a log entry; systrace_event_get reads them back
 * at *p (moved past them), the strings left in the log. */
void systrace_event_put(tm_buf *log, const systrace_event *ev);
void systrace_event_get(const char **p, systrace_event *ev);

/* The CPUs a machine may have: the reference's kMaxCpusPerMachine. Its
 * import aborts on a line of a CPU beyond (PERFETTO_CHECK in its CPU
 * tracker); the per-CPU state of ours would grow to the CPU's number (a
 * line naming CPU 4294967295 overflowed it). */
#define SYSTRACE_MAX_CPUS 4096u

typedef enum systrace_line_result {
	SYSTRACE_LINE_EVENT,    /* *ev is filled */
	SYSTRACE_LINE_SKIP,     /* empty, '#' comment, or trace_event_clock_sync payload */
	SYSTRACE_LINE_NO_MATCH, /* not the §4.2 grammar */
	SYSTRACE_LINE_BAD_PRINT, /* matched, but the §4.4 payload is malformed */
	SYSTRACE_LINE_BAD_CPU   /* matched, but of a CPU of SYSTRACE_MAX_CPUS or more:
				   no event (both callers count a systrace_parse_failure) */
} systrace_line_result;

/* Parse one line (without its '\n'; line[len] must be writable). The line is modified in place (fields
 * are NUL-terminated inside it) and ev's strings point into it. Counts
 * nothing: the caller decides what a failure means (a stat here, fatal in
 * JSON's systemTraceEvents). */
systrace_line_result systrace_parse_line(char *line, size_t len, systrace_event *ev);

/* Parse a print payload alone (§4.4), as the reference reads the buf of a
 * proto print FtraceEvent: `payload` is cut up in place and ev's print
 * fields point into it; the other fields are empty. Returns
 * SYSTRACE_LINE_EVENT, SYSTRACE_LINE_BAD_PRINT, or SYSTRACE_LINE_SKIP for
 * a trace_event_clock_sync payload. */
systrace_line_result systrace_parse_print(char *payload, systrace_event *ev);

/* The value of `key` in a key=value argument string (§4.3: tokens split at
 * spaces; a token without '=' is stored under "name"; the first occurrence
 * wins). Copies it NUL-terminated into out[0..n) (truncating) and returns
 * 1, or returns 0 when absent. */
int systrace_arg(const char *args, const char *key, char *out, size_t n);

/* An argument string's tokens, split once: the model and the exporter
 * each look up several keys of every line, and each systrace_arg walks
 * the text again (on the systrace bench's export, 38% of the model
 * thread). The split happens at the first lookup: most lines are of
 * events nobody looks up a key of. Lookups give what systrace_arg
 * gives. */
#define SYSTRACE_ARGS_KEPT 16
typedef struct systrace_args {
	const char *text;
	int split; /* the tokens below are read */
	size_t n;
	int more; /* tokens past the kept ones: a key not kept is looked up in the text */
	struct {
		const char *k, *v;
		size_t kn, vn;
	} kv[SYSTRACE_ARGS_KEPT];
} systrace_args;
/* Whether an event name of n bytes is the literal `lit`: the lengths
 * first, so a line of an event nobody reads (most) is turned away with no
 * call. */
#define SYSTRACE_EVENT_IS(name, n, lit) ((n) == sizeof(lit) - 1 && memcmp((name), (lit), sizeof(lit) - 1) == 0)

/* formats.md §4.3: whether an event name of n bytes is one of the events
 * whose arguments are a print payload. */
static inline int systrace_is_print_event(const char *name, size_t n)
{
	return SYSTRACE_EVENT_IS(name, n, "tracing_mark_write") || SYSTRACE_EVENT_IS(name, n, "print") ||
	       SYSTRACE_EVENT_IS(name, n, "0");
}

/* Up to nine digits and nothing else (a pid, a prio, a cpu): their value,
 * which strtoll and strtoull would give too, without their call; -1 for
 * any other text (the callers then ask those). */
static inline int64_t systrace_few_digits(const char *s)
{
	int64_t v = 0;
	size_t i = 0;
	for (; i < 10 && s[i] >= '0' && s[i] <= '9'; i++)
		v = v * 10 + (s[i] - '0');
	return i && i < 10 && !s[i] ? v : -1;
}

void systrace_args_init(systrace_args *a, const char *args);
/* Split now what the first lookup would (nothing when split already). */
void systrace_args_split(systrace_args *a);
int systrace_args_get_n(systrace_args *a, const char *key, size_t klen, char *out, size_t n);
/* Inline so that a literal key's length is known where it is asked. */
static inline int systrace_args_get(systrace_args *a, const char *key, char *out, size_t n)
{
	return systrace_args_get_n(a, key, strlen(key), out, n);
}

/* An argument's value as the reference's base::StringToUInt32,
 * StringToInt32 and StringToDouble read it: the whole string, not empty;
 * 1 and *out set, or 0. */
int systrace_to_u32(const char *s, uint32_t *out);
int systrace_to_i32(const char *s, int32_t *out);
int systrace_to_double(const char *s, double *out);

#endif
