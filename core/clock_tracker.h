/* core/clock_tracker.h - trace time, per-(file, machine) clock trackers
 * and the one-shot bridge to trace time (spec/clocks.md §5-§8, §10) plus
 * remote_clock_sync offsets (spec/machines.md §8), on top of the clock
 * graph of core/clock.h.
 *
 * One tm_clocks context exists per mount: it owns the graph, the trace-time
 * node and its owner, the trackers and the global stats. Readers hold a
 * tm_clock_tracker (owned by the context) and speak in raw clock ids; the
 * tracker qualifies them into graph nodes (§2.2, §8.1).
 */
#ifndef TM_CLOCK_TRACKER_H
#define TM_CLOCK_TRACKER_H

#include <stddef.h>
#include <stdint.h>

#include "clock.h"
#include "clockid.h"
#include "tm.h"

typedef struct tm_clocks tm_clocks;
typedef struct tm_clock_tracker tm_clock_tracker;

/* clocks.md §10. All but INVALID_SNAPSHOTS are attributed to a tracker
 * (file, machine); INVALID_SNAPSHOTS is global only: every rejected
 * insertion of any origin (reader snapshot, bridge, remote edge) counts,
 * as in the reference where the graph itself reports it. */
typedef enum tm_clock_stat {
	TM_CSTAT_UNRELATABLE = 0,   /* clock_sync_unrelatable_clock_domains */
	TM_CSTAT_UNKNOWN_SOURCE,    /* clock_sync_failure_unknown_source_clock */
	TM_CSTAT_UNKNOWN_TARGET,    /* clock_sync_failure_unknown_target_clock */
	TM_CSTAT_NO_PATH,           /* clock_sync_failure_no_path */
	TM_CSTAT_UNDEFERRABLE_LOSS, /* clock_sync_failure_undeferrable_packet_loss */
	TM_CSTAT_MIXED_SOURCES,     /* clock_sync_mixed_clock_sources */
	TM_CSTAT_INVALID_SNAPSHOTS, /* invalid_clock_snapshots */
	TM_CSTAT_COUNT
} tm_clock_stat;

/* The stat's name as trace processor prints it (static storage). */
const char *tm_clock_stat_name(tm_clock_stat s);

/* One clock of a snapshot as a reader sees it: a raw clock id, not yet a
 * node. unit_ns 0 means 1 (§3.3). */
typedef struct tm_clock_sample {
	uint32_t clock_id;
	uint64_t ts;
	uint64_t unit_ns;
	int incremental;
} tm_clock_sample;

/* ---- the context ---------------------------------------------------- */

/* A fresh context: empty graph, trace time (11,0,0,0) with no owner,
 * trace_time_clock_id unset (§5.1). Never NULL. */
tm_clocks *tm_clocks_new(void);
/* Frees the context, its graph and all its trackers. NULL is fine. */
void tm_clocks_free(tm_clocks *c);

/* The graph (owned by the context), for manifest edges (§9) and tests. */
tm_clock_graph *tm_clocks_graph(tm_clocks *c);

/* The current trace-time node (§5). */
tm_clock_node tm_clocks_trace_time(const tm_clocks *c);
/* 1 and *owner_file set when trace time has an owner, else 0. */
int tm_clocks_owner(const tm_clocks *c, uint32_t *owner_file);
/* Metadata trace_time_clock_id: 1 and *clock_id set once a claim
 * succeeded, else 0 (unset). */
int tm_clocks_trace_time_clock_id(const tm_clocks *c, uint32_t *clock_id);

/* §5.2: claim trace time for `node` on behalf of `owner_file`. Succeeds
 * (returns 1) iff there is no owner yet or the owner is the same file; then
 * stores node and owner, sets trace_time_clock_id and tells the graph
 * (§3.3 checks). Otherwise returns 0 and changes nothing. Used directly by
 * the manifest's trace_time; readers use tm_tracker_claim. */
int tm_clocks_claim(tm_clocks *c, tm_clock_node node, uint32_t owner_file);

/* The global total of a stat over all trackers (plus global-only counts). */
uint64_t tm_clocks_stat(const tm_clocks *c, tm_clock_stat s);

/* ---- trackers ------------------------------------------------------- */

/* The tracker of (file_id, machine_row), created on first call with the
 * given primary flag (§8.1: the caller knows whether this is the first file
 * on the raw machine) and deferred sync clock D (§6, e.g. BOOTTIME for
 * proto, TRACE_FILE for JSON, MONOTONIC for systrace). Later calls return
 * the existing tracker and ignore the flags. Owned by the context. */
tm_clock_tracker *tm_clocks_tracker(tm_clocks *c, uint32_t file_id, uint32_t machine_row, int primary,
				    uint32_t sync_clock);
/* The existing tracker of (file_id, machine_row), or NULL. */
tm_clock_tracker *tm_clocks_find_tracker(tm_clocks *c, uint32_t file_id, uint32_t machine_row);

uint32_t tm_tracker_file(const tm_clock_tracker *t);
uint32_t tm_tracker_machine(const tm_clock_tracker *t);
/* The current file tag: 0 (canonical) or the file id (§8.1). */
uint32_t tm_tracker_file_tag(const tm_clock_tracker *t);

/* §6 default clock: what events without a clock id are expressed in. */
void tm_tracker_set_default_clock(tm_clock_tracker *t, uint32_t clock_id);
/* 1 and *clock_id set when a default clock is set, else 0. */
int tm_tracker_default_clock(const tm_clock_tracker *t, uint32_t *clock_id);

/* Mark the file as having a manifest `clocks` override: from then on every
 * snapshot fails (clocks.md §9.3, PIN; the manifest decides when). */
void tm_tracker_set_clock_override(tm_clock_tracker *t);

/* §2.2/§8.1: the node a raw clock id denotes for this tracker now.
 * seq_id matters only for sequence clocks 64-127 (the caller rejects
 * sequence id 0 with the §6.1 message before asking). Clock 0 is treated
 * like a builtin; a proto timestamp on clock 0 is trace time as is (§6.1
 * step 4) and must not be converted at all. */
tm_clock_node tm_tracker_node(const tm_clock_tracker *t, uint32_t clock_id, uint32_t seq_id);

/* §5.2 claim by a reader: the canonical node of `clock_id` on this
 * tracker's machine (file tag 0; TRACE_FILE: the file's own private clock)
 * owned by this tracker's file. Silently refused (returns 0) once this
 * tracker has attempted any conversion. Returns 1 on success. */
int tm_tracker_claim(tm_clock_tracker *t, uint32_t clock_id);

/* Insert a snapshot read by this tracker (§3.1): switches a non-primary
 * tracker to its own file tag first (§8.1, recording
 * clock_sync_mixed_clock_sources if it had converted), qualifies every
 * clock, appends REALTIME twins (§8.2), and inserts. Returns the snapshot
 * id, or -1 with err set: the §3.3 message (invalid_clock_snapshots is
 * counted; import may continue) or, with a clock override, the §9.3
 * message (TM_EINPUT, fatal for the file, nothing counted). */
int64_t tm_tracker_add_snapshot(tm_clock_tracker *t, const tm_clock_sample *s, size_t n, uint32_t seq_id,
				tm_error *err);

/* Convert `value` on raw clock `clock_id` (sequence `seq_id`) to trace
 * time. The first call on a tracker runs the one-shot bridge (§7). Every
 * call counts as an attempt (§5.2). A failure counts its §4.5 stat on the
 * tracker. Returns TM_CONV_OK with *out set, or the failure kind. */
tm_conv tm_tracker_convert(tm_clock_tracker *t, uint32_t clock_id, uint32_t seq_id, int64_t value, int64_t *out);
/* The same, but a failure is not counted (a proto packet set aside for a
 * retry at end of file, §6.1, or a conversion whose failure keeps the raw
 * value silently). It still runs the bridge and counts as an attempt. */
tm_conv tm_tracker_try_convert(tm_clock_tracker *t, uint32_t clock_id, uint32_t seq_id, int64_t value,
			       int64_t *out);

/* How many conversions this tracker has attempted. */
uint64_t tm_tracker_conversions(const tm_clock_tracker *t);

/* Count one occurrence of a stat the caller detects itself (e.g.
 * TM_CSTAT_UNDEFERRABLE_LOSS when a retried packet is dropped). */
void tm_tracker_count(tm_clock_tracker *t, tm_clock_stat s);
/* This tracker's count of a stat. */
uint64_t tm_tracker_stat(const tm_clock_tracker *t, tm_clock_stat s);
/* Args of clock_sync_unrelatable_clock_domains: 1 and the clock ids when it
 * was recorded, else 0. */
int tm_tracker_unrelatable_args(const tm_clock_tracker *t, uint32_t *source_clock_id, uint32_t *target_clock_id);
/* Arg num_conversions_using_primary of clock_sync_mixed_clock_sources (0
 * when not recorded). */
uint64_t tm_tracker_mixed_conversions(const tm_clock_tracker *t);

/* ---- remote_clock_sync (machines.md §8) ----------------------------- */

typedef struct tm_clock_value {
	uint32_t clock_id;
	uint64_t ts;
} tm_clock_value;

/* One SyncedClocks round: the client and host ClockSnapshots' clocks. */
typedef struct tm_sync_round {
	const tm_clock_value *client;
	size_t n_client;
	const tm_clock_value *host;
	size_t n_host;
} tm_sync_round;

/* Process one RemoteClockSync message read by `client` (the client
 * machine's tracker): inserts each round's client snapshot through the
 * tracker (a rejection is counted, not fatal), then one cross-machine edge
 * {(c, host row, 0): anchor, (c, client row, 0): anchor + offset} per
 * clock with an offset, host row = trace time's machine (clocks.md §5.4),
 * in ascending clock id order. Returns the number of edges inserted. The
 * single-machine checks of step 0 are the caller's. */
size_t tm_clocks_remote_sync(tm_clock_tracker *client, const tm_sync_round *rounds, size_t n_rounds);

#endif
