/* core/scan/scan.h - the scan tier (DESIGN.md "cost tiers"): one streaming pass
 * over every trace file in processing order that runs the whole merge of
 * spec/clocks.md and spec/machines.md: the machine table, the clock graph,
 * trace time, every timestamp converted, every drop counted.
 *
 * The scan keeps no events. It reports each one to an optional sink as it
 * is placed, so the same pass serves metadata.json (no sink), the test
 * tool tm_events, and the exporters (issue 4) that stream the merge.
 * Memory is bounded by what the merge must remember (clock samples,
 * machines, per-sequence state, packets set aside for their retry), never
 * by trace size.
 */
#ifndef TM_SCAN_H
#define TM_SCAN_H

#include <stddef.h>
#include <stdint.h>

#include "clock/clock.h"
#include "scan/machine.h"
#include "input/merge.h"
#include "util/statlist.h"
#include "util/tm.h"

/* ---- stats -------------------------------------------------------------- */

/* Every stat the spec names, in the order metadata.json prints them. The
 * names are trace processor's. */
typedef enum tm_stat {
	TM_STAT_NEGATIVE_TS = 0,            /* trace_sorter_negative_timestamp_dropped */
	TM_STAT_TRACK_EVENT_INVALID_TS,     /* track_event_invalid_timestamp */
	TM_STAT_UNRELATABLE,                /* clock_sync_unrelatable_clock_domains */
	TM_STAT_UNKNOWN_SOURCE,             /* clock_sync_failure_unknown_source_clock */
	TM_STAT_UNKNOWN_TARGET,             /* clock_sync_failure_unknown_target_clock */
	TM_STAT_NO_PATH,                    /* clock_sync_failure_no_path */
	TM_STAT_UNDEFERRABLE_LOSS,          /* clock_sync_failure_undeferrable_packet_loss */
	TM_STAT_MIXED_SOURCES,              /* clock_sync_mixed_clock_sources */
	TM_STAT_INVALID_SNAPSHOTS,          /* invalid_clock_snapshots */
	TM_STAT_JSON_TOKENIZER_FAILURE,     /* json_tokenizer_failure */
	TM_STAT_JSON_PARSER_FAILURE,        /* json_parser_failure */
	TM_STAT_JSON_DISPLAY_TIME_UNIT,     /* json_display_time_unit */
	TM_STAT_SYSTRACE_PARSE_FAILURE,     /* systrace_parse_failure */
	TM_STAT_SEQ_NEEDS_INCREMENTAL,      /* packet_skipped_seq_needs_incremental_state_invalid */
	TM_STAT_DEFAULTS_NO_SEQ,            /* trace_packet_defaults_missing_sequence_id */
	TM_STAT_INTERNED_NO_SEQ,            /* interned_data_missing_sequence_id */
	TM_STAT_FTRACE_BUNDLE_ERRORS,       /* ftrace_bundle_tokenizer_errors */
	TM_STAT_FTRACE_MISSING_EVENT_ID,    /* ftrace_missing_event_id */
	TM_STAT_COMPACT_SCHED_ERRORS,       /* compact_sched_has_parse_errors */
	TM_STAT_TRACK_EVENT_NO_SEQ,         /* track_event_missing_sequence_id */
	TM_STAT_THREAD_DESCRIPTOR_NO_SEQ,   /* thread_descriptor_missing_sequence_id */
	TM_STAT_CLEARED_NO_SEQ,             /* incremental_state_cleared_missing_sequence_id */
	TM_STAT_DROPPED_NO_SEQ,             /* previous_packet_dropped_missing_sequence_id */
	TM_STAT_COUNT
} tm_stat;

extern const char *const tm_stat_names[TM_STAT_COUNT];

/* ---- events ------------------------------------------------------------- */

typedef enum tm_ev_kind {
	TM_EV_SLICE,        /* a complete slice: ts and dur (JSON X) */
	TM_EV_BEGIN,        /* slice begin (JSON B, systrace B, TrackEvent SLICE_BEGIN) */
	TM_EV_END,          /* slice end */
	TM_EV_INSTANT,
	TM_EV_COUNTER,
	TM_EV_ASYNC_BEGIN,
	TM_EV_ASYNC_END,
	TM_EV_SCHED,        /* sched_switch / sched_waking, text or proto, compact too */
	TM_EV_FTRACE,       /* any other kernel event */
	TM_EV_METADATA,     /* JSON M, process/thread names */
	TM_EV_PACKET,       /* a proto packet with a timestamp and no event above */
	TM_EV_SAMPLE,       /* a stack sample (perf script): name is its leaf frame */
	TM_EV_KIND_COUNT
} tm_ev_kind;

/* Lower-case kind names as timeline.tsv and tm_events print them. */
extern const char *const tm_ev_kind_names[TM_EV_KIND_COUNT];

/* One placed event. Strings are valid only during the callback and may be
 * NULL; name_len counts the bytes of name (it may hold NULs). */
typedef struct tm_event {
	uint32_t file_id;
	uint32_t machine_row;
	tm_ev_kind kind;
	int64_t ts;        /* trace time, ns, >= 0 */
	int64_t raw_ts;    /* the same instant in the file's own clock */
	int64_t dur;       /* ns, -1 when the kind has none */
	int64_t pid, tid;  /* -1 when unknown */
	const char *name;
	size_t name_len;
	double value;      /* counters */
	const char *args;  /* short summary, may be NULL */
	int32_t cpu;       /* systrace lines: the CPU column; else -1 or 0 */
} tm_event;

/* A proto packet as the merge kept it, for the exporter (issue 4): every
 * packet of a proto file that is not dropped, in the order the merge
 * handles it (a packet set aside for its retry comes at the end of its
 * file). Arrays hold, per FtraceEvent / compact-sched switch / waking of
 * the bundle in order, the trace-time timestamp or -1 when that event was
 * dropped. Pointers are valid only during the callback. */
typedef struct tm_packet_out {
	uint32_t file_id;
	uint32_t machine_row;     /* the reader the packet was routed to */
	uint32_t seq_id;          /* trusted_packet_sequence_id as in the file */
	const uint8_t *data;      /* the TracePacket bytes as read */
	size_t len;
	int has_ts;               /* the packet was placed in time */
	int64_t ts;               /* its trace-time timestamp */
	const int64_t *ftrace_ts;
	size_t n_ftrace;
	const int64_t *switch_ts;
	size_t n_switch;
	const int64_t *waking_ts;
	size_t n_waking;
	/* a StreamingProfilePacket's samples: each one's trace time, or
	 * INT64_MIN where the reference pushed none, or -1 - its time where
	 * its stack does not resolve (it makes no row, only stats); its
	 * sequence's thread; the logs its tokenization counted */
	const int64_t *sample_ts;
	size_t n_sample;
	int64_t sample_pid, sample_tid;
	unsigned sample_logs;
} tm_packet_out;

enum { TM_SAMPLE_LOG_PARSER_ERROR = 1, TM_SAMPLE_LOG_BAD_TIME = 2 };

/* A process or thread name a file gives (Chrome JSON M events
 * process_name / thread_name, a systrace line's task when it changes).
 * tid is -1 for a process name. Strings as in tm_event. */
typedef struct tm_name_out {
	uint32_t file_id;
	uint32_t machine_row;
	int64_t pid, tid;
	const char *name;
	size_t name_len;
} tm_name_out;

/* A record for the model (core/model/model.h): one item the reference's
 * tokenizers push to its sorter, in push order. `queue` is the sorter queue
 * it goes to, numbered in the order the reference creates them (per JSON
 * file its events and its embedded systrace lines, per systrace file one,
 * ...); `ts` is trace time (>= 0: negative ones are dropped and counted
 * before). For a JSON event, json_phase / json_dur feed the sorter's tie
 * rule (core/sort/order.h); both are 0 / -1 otherwise. `data` is a
 * tm_mrec_head followed by the payload; valid only during the callback. */
typedef struct tm_rec {
	uint32_t queue;
	int64_t ts;
	char json_phase;
	int64_t json_dur;
	const void *data;
	size_t len;
	int side;     /* not sorted: applied before every sorted record, in
		       * push order (what the reference's tokenizers do at once,
		       * such as reserving a proto track descriptor) */
} tm_rec;

/* How far the scan is, for a front end's progress display. */
typedef struct tm_scan_progress {
	uint64_t done;     /* bytes of trace files read */
	uint64_t total;    /* bytes of every trace file to read (one whose size
	                      is not known yet, a stream, counts 0) */
	const char *file;  /* the file being read (its member name, or the
	                      input's path), NULL once the scan is over */
} tm_scan_progress;

/* Who reads the records, beyond the model's own rules (tm_scan_sink.rec_for). */
enum {
	TM_REC_FOR_ENCODERS = 1, /* merged.pftrace's encoders (tm_model_sink.observed) */
	TM_REC_FOR_ROWS = 2,     /* the rows' own texts (tm_model_sink.slice: the args column) */
};

typedef struct tm_scan_sink {
	void *ctx;
	void (*event)(void *ctx, const tm_event *ev); /* may be NULL */
	void (*packet)(void *ctx, const tm_packet_out *p); /* may be NULL */
	int want_args;   /* fill tm_event.args (else it may be NULL) */
	void (*name)(void *ctx, const tm_name_out *n); /* may be NULL */
	void (*record)(void *ctx, const tm_rec *r); /* may be NULL */
	unsigned rec_for;  /* with `record`: who reads the records' events
			      (TM_REC_FOR_*), so that a format leaves out
			      what no reader wants */
	/* with `record`, may be NULL: the id of a string in the string pool of
	 * the tables the records go to (tm_model_intern), which a record may
	 * carry instead of the text; 0: put the text */
	uint32_t (*intern)(void *ctx, const char *s, size_t n);
	/* may be NULL: when a file starts, after each read of it, and once at
	 * the end */
	void (*progress)(void *ctx, const tm_scan_progress *p);
} tm_scan_sink;

/* ---- results ------------------------------------------------------------ */

/* Per trace file (indexed by file id; containers and manifests stay
 * unscanned). "own" times are in the file's own clock, "trace" ones in
 * trace time; both only over events that were placed. */
typedef struct tm_scan_file {
	/* Ordered widest first: an archive may hold 100,000 of these. */
	uint32_t *machines;       /* rows this file put data on, in first-use order */
	uint64_t *drops;          /* the stats this file added to, by tm_stat; NULL
				     while it added to none (an archive may hold
				     100,000 files): read with tm_scan_file_drops */
	uint64_t packets;         /* proto packets read (compressed ones expanded) */
	uint64_t events;          /* events placed */
	uint64_t dropped;         /* events or packets dropped, all reasons */
	int64_t first_own, last_own, first_trace, last_trace;
	uint32_t n_machines;
	uint32_t machine0;        /* `machines` points here while it holds one row
				     (the usual case, in an archive of 100,000 files) */
	int has_range;
	uint8_t scanned;          /* a trace file the scan read */
	uint8_t clock_override;   /* 0 none, 1 RELATE, 2 PIN (manifest clocks block) */
} tm_scan_file;

/* How much file `f` added to stat `st`. */
static inline uint64_t tm_scan_file_drops(const tm_scan_file *f, tm_stat st)
{
	return f->drops ? f->drops[st] : 0;
}

/* Per machine row. */
typedef struct tm_scan_machine {
	uint64_t events;
	int has_range;
	int64_t first_trace, last_trace;
} tm_scan_machine;

typedef struct tm_scan {
	int failed;               /* the merge failed: err has the exact text */
	tm_error err;
	int64_t err_file;         /* file id being read when it failed, or -1 */
	tm_clocks *clocks;        /* the graph and trace time, for clocks/ */
	tm_machines machines;
	uint64_t stats[TM_STAT_COUNT];
	tm_scan_file *files;      /* n_files = merge->n_files */
	size_t n_files;
	tm_scan_machine *mach;    /* by row; n_mach grows with the machine table */
	size_t n_mach;
	int has_bounds;
	int64_t start_ns, end_ns; /* trace-time bounds of the placed events */
	uint64_t events;          /* all events placed */
	int has_tt_clock_id;      /* metadata trace_time_clock_id was set */
	uint32_t tt_clock_id;
	tm_clock_node tt_node;    /* trace time at the end of the scan */
	int has_tt_owner;
	uint32_t tt_owner_file;
	uint32_t next_queue;      /* sorter queues created (tm_rec.queue) */
	tm_statlist named;        /* the reference's stats read from a file's
				     own records rather than counted per event
				     (config_*: the TraceConfig), per file and
				     machine */
} tm_scan;

/* Run the scan over the mount tier's session, each file read by the
 * tokenizer tokenizer_of gives for its type (core/scan/scan_internal.h;
 * NULL: not a trace format). Never NULL: a failure of the merge is recorded in ->failed /
 * ->err (TM_EINPUT with the exact text, or TM_EIO), with everything found
 * up to that point kept. `sink` may be NULL. tm_scan_run
 * (core/formats/registry.h) runs it with every format's tokenizer. */
struct tm_tokenizer;
tm_scan *tm_scan_run_with(tm_merge *m, const tm_scan_sink *sink,
			  const struct tm_tokenizer *(*tokenizer_of)(tm_type t));
void tm_scan_free(tm_scan *s);

/* The raw ids of the machine rows the scan of m will end with, in row
 * order, when they are known before it runs (else NULL): every trace file
 * it reads has a manifest entry that names its base machine
 * (machines.md §2). Then no file starts on the host or adopts a machine
 * (§4), a packet's embedded machine_id is an error or goes to a row the
 * manifest names (§5), and the rows are the manifest's (§3 steps 1-2).
 * A scan that fails may stop with fewer. The array is m's. */
const struct tm_mf_row *tm_scan_fixed_rows(const tm_merge *m, size_t *n);

/* Did file `fid` put data on machine `row` (is the row in its machines)? */
int tm_scan_file_on_row(const tm_scan *s, size_t fid, uint32_t row);

/* The files on each machine row at once (asking tm_scan_file_on_row of
 * every file for every row takes files x rows): the ids of row r's files
 * are files[first[r]] .. files[first[r + 1] - 1], ascending, each once. */
typedef struct tm_row_files {
	size_t *first;  /* n_rows + 1 */
	uint32_t *files;
} tm_row_files;
void tm_scan_row_files(const tm_scan *s, tm_row_files *out);
void tm_row_files_free(tm_row_files *rf);

/* The events recorded (sum over files) of one stat: s->stats[i]. */

/* ---- the index cache (core/session/index.h, core/scan/scan_index.c) ------------------ */

/* The results as bytes, and back. Every field of tm_scan, tm_scan_file and
 * tm_scan_machine is kept: a new field must be added to both (and
 * TM_INDEX_FORMAT bumped), or a scan read back from the index would show
 * it empty. A scan read back renders every view as the saved one did; its
 * clocks have no trackers. tm_scan_load returns NULL with *why (a static
 * reason) for bytes that are not the results of a scan over `n_files`
 * files that this code wrote. With `spend`, the bytes are a section of an
 * index just read (tm_index_read), read by nobody after this: their pages
 * are given back as the load passes them (tm_ser_reader_spending), so
 * that they and the results are not held whole at once. */
struct tm_ser_out;
void tm_scan_save(const tm_scan *s, struct tm_ser_out *out);
tm_scan *tm_scan_load(const void *data, size_t len, size_t n_files, int spend, const char **why);

#endif
