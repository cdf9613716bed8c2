/* core/scan/scan_internal.h - what the scan gives the formats' tokenizers
 * (core/formats/<format>/), and what a tokenizer is to the scan
 * (tm_tokenizer). Not for front ends.
 */
#ifndef TM_SCAN_INTERNAL_H
#define TM_SCAN_INTERNAL_H

#include "manifest/manifest.h"
#include "scan/scan.h"

struct scan_ctx;
struct scan_file;

/* A format's tokenizer, as the scan calls it for a file of its type. */
typedef struct tm_tokenizer {
	/* clocks.md §6: the clock a format's events are on, the default,
	 * sync and claimed clock of its file from the start; 0: none */
	uint32_t clock;
	/* without `clock`: the clock its clock snapshots sync on */
	uint32_t sync_clock;
	/* The file's events into the scan: from its cursor c, or replayed from
	 * `log` at `from` where it was read ahead (the same callbacks either
	 * way). 0, or -1 with err set (the exact text: the merge fails).
	 * NULL: its events are not read (claims and bridges only). */
	int (*read)(struct scan_file *sf, tm_clock_tracker *t, tm_cursor *c, tm_buf *log, size_t from,
		    tm_error *err);
	/* What reading a file of `size` ahead costs (core/util/ahead.h), 0 to
	 * read it in place; may be NULL (never ahead). */
	uint64_t (*ahead_cost)(const struct scan_ctx *sc, int64_t size);
	/* The file's bytes onto `log`, on either thread, reading nothing but
	 * c and what nobody changes during the scan; nonzero when the log was
	 * abandoned (too big: the file is read in place). */
	int (*log)(const struct scan_ctx *sc, tm_cursor *c, int64_t size, tm_buf *log);
} tm_tokenizer;

typedef struct scan_ctx {
	const tm_tokenizer *(*tok)(tm_type t); /* NULL: not a trace format */
	tm_merge *m;
	tm_scan *s;
	const tm_scan_sink *sink;
	const tm_mf_plan *plan;       /* NULL without a manifest */
	tm_u64map raw_with_context;   /* raw machine ids some tracker exists for */
	int64_t max_pushed;           /* the sorter's largest timestamp so far */
	tm_scan_progress progress;    /* tm_scan_sink.progress */
	struct tm_ahead *ahead;       /* files read ahead (core/util/ahead.h), or NULL */
	/* config_write_into_file_no_flush: the files whose last TraceConfig
	 * asks for it (file_id, machine_row in a statlist), decided at the
	 * end of the scan by the tracing service version a SystemInfo gave
	 * that machine (the reference reads the version, a per-machine
	 * metadata, once every file is parsed): by row, the major version
	 * + 1, 0 while unknown */
	tm_statlist no_flush;
	uint64_t *svc_major;
	size_t n_svc_major;
} scan_ctx;

/* A SystemInfo gave machine `row` this tracing service version (major, or
 * -1 when it cannot be read). */
void scan_service_version(scan_ctx *sc, uint32_t row, int64_t major);

/* One trace file being read. */
typedef struct scan_file {
	scan_ctx *sc;
	const tm_file *f;
	tm_scan_file *out;
	int32_t entry;                /* manifest files[] index, or -1 */
	int64_t base_raw;             /* machines.md §2 */
	uint32_t base_row;
} scan_file;

/* The row for raw id `raw`, created at the end of the table if missing. */
uint32_t scan_row_for_raw(scan_ctx *sc, int64_t raw);

/* Has some file opened a tracker for this raw id? (machines.md §4: "no
 * context exists yet for raw id m") */
int scan_raw_has_context(const scan_ctx *sc, int64_t raw);
/* Record that a context exists for raw id `raw`. */
void scan_raw_mark(scan_ctx *sc, int64_t raw);

/* The tracker of (this file, row), created on first use: primary when it
 * is the first tracker of the row's raw id (clocks.md §8.1). Records the
 * row in the file's machines and marks the raw id. */
tm_clock_tracker *scan_tracker(scan_file *sf, uint32_t row);

/* Count one occurrence of a stat the scan itself detects (not the clock
 * module's per-conversion ones): the global total and the file's. When
 * `is_drop`, the file's dropped count goes up too. */
void scan_count(scan_file *sf, tm_stat st, int is_drop);

/* A conversion failed and the event is lost; its stat was counted by the
 * tracker. */
void scan_lost(scan_file *sf);

/* Place one event: ev->ts is trace time. A negative ts is dropped with
 * `neg_stat` (TM_STAT_NEGATIVE_TS or TM_STAT_TRACK_EVENT_INVALID_TS) and
 * returns 0; otherwise updates counts and ranges, calls the sink and
 * returns 1. ev->file_id is filled in here. */
int scan_place(scan_file *sf, tm_event *ev, tm_stat neg_stat);
/* What scan_place counts, without an event: for a pass whose sink reads
 * none (scan_wants_events is 0: every pass but the tests'), where making
 * the event (its name, its thread) cost more than placing it. */
int scan_place_times(scan_file *sf, uint32_t machine_row, int64_t ts, int64_t dur, int64_t raw_ts, tm_stat neg_stat);
/* A stack sample placed (TM_EV_SAMPLE: its leaf's name, pid -1 for none,
 * cpu -1 for none), or only counted when no sink reads events. */
void scan_place_sample(scan_file *sf, int64_t ts, int64_t raw_ts, int64_t pid, int64_t tid, int32_t cpu,
		       const char *name, size_t name_n);
/* Does the sink read the placed events (tm_scan_sink.event)? */
int scan_wants_events(const scan_file *sf);

/* Is an exporter listening for packets (tm_scan_sink.packet)? The proto
 * reader only builds tm_packet_out when it is. */
int scan_wants_packets(const scan_file *sf);
/* Does the sink read tm_event.args? */
int scan_wants_args(const scan_file *sf);
/* Hand a kept packet to the exporter (po->file_id is filled in here). */
void scan_emit_packet(scan_file *sf, tm_packet_out *po);

/* A thread's or process's name (tm_scan_sink.name), when it is wanted. */
void scan_emit_name(scan_file *sf, int64_t pid, int64_t tid, const char *name);

/* Convert a file's own timestamp to trace time for an item the reference
 * pushes to its sorter: 1 with *out (>= 0); 0 when the conversion failed
 * (the tracker counted it) or the result is negative (counted here), so
 * the item is dropped before sorting. */
/* scan_push_time's three outcomes: placed; converted but negative (the
 * reference's tokenizer pushed it, its sorter drops it: counted
 * trace_sorter_negative_timestamp_dropped); not converted (lost, its stat
 * counted). */
enum { SCAN_TIME_OK, SCAN_TIME_NEGATIVE, SCAN_TIME_LOST };
int scan_convert_time(scan_file *sf, tm_clock_tracker *t, uint32_t clock, int64_t ts, int64_t *out);
int scan_push_time(scan_file *sf, tm_clock_tracker *t, uint32_t clock, int64_t ts, int64_t *out);

/* The cursor's bytes to their end as lines, for the text formats: fn(ctx,
 * line, n) for each line ended by '\n' (without it), in order, until fn
 * returns nonzero, which is returned. What follows the last '\n' is left
 * in *rest (the formats differ on an unended last line). 0 at the end, -1
 * with err set when the cursor fails. */
int scan_read_lines(tm_cursor *c, int (*fn)(void *ctx, const char *p, size_t n), void *ctx, tm_buf *rest,
		    tm_error *err);

/* The cursor's bytes to their end appended to *doc, for the formats read
 * whole (a Gecko profile, a heap dump): 0, or -1 with err set when the
 * cursor fails. */
int scan_read_whole(tm_cursor *c, tm_buf *doc, tm_error *err);

/* Whether the scan reads nothing of a systrace line but its time and
 * bad_print, nor of a JSON event but its times: no records, names or
 * events are wanted, as in the scan alone. */
int scan_reads_times_only(const scan_ctx *sc);

/* The row's dense machine bookkeeping is grown to the table's size. */
void scan_sync_machines(scan_ctx *sc);

/* Records for the model (tm_scan_sink.record). */
int scan_wants_records(const scan_file *sf);
/* The string pool id of s for a record (tm_scan_sink.intern), 0 when the
 * record must carry the text. */
uint32_t scan_intern(scan_file *sf, const char *s, size_t n);
/* A new sorter queue, numbered in creation order. */
uint32_t scan_new_queue(scan_file *sf);
/* Push one record (a tm_mrec_head then its payload) on `queue` at trace
 * time `ts` (>= 0); JSON events give their phase and dur, others 0, -1. */
void scan_record(scan_file *sf, uint32_t queue, int64_t ts, char phase, int64_t dur, const void *data, size_t len);
/* A record applied before the sorted ones (tm_rec.side). */
void scan_record_side(scan_file *sf, const void *data, size_t len);
/* The sorter's largest timestamp so far (the reference gives it to a
 * packet without a timestamp). */
int64_t scan_max_pushed(const scan_file *sf);

#endif
