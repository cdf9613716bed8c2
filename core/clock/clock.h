/* core/clock/clock.h - the clock model of spec/clocks.md: the global clock graph
 * (§3-§4), trace time (§5), per-(file, machine) trackers with their
 * one-shot bridge to trace time (§6-§8), remote_clock_sync offsets
 * (machines.md §8), the clock stats (§10) and the clocks/ views.
 *
 * Two layers:
 *   tm_clock_graph    nodes, snapshots, edges, path search, conversion.
 *                     Knows nothing of files or trackers (core/clock/clock_graph.c).
 *   tm_clocks         one per import session: owns the graph, trace time and
 *                     its owner, the trackers and the stats (core/clock/clock.c).
 * Readers hold a tm_clock_tracker and speak in raw clock ids; the tracker
 * qualifies them into nodes (§2.2) and attributes failures to its file and
 * machine. The manifest inserts its edges and claims trace time on the
 * context directly.
 *
 * Nothing here is thread-safe: the session serialises the scan, and the
 * views run after it (or under the session's lock).
 */
#ifndef TM_CLOCK_H
#define TM_CLOCK_H

#include <stddef.h>
#include <stdint.h>

#include "clock/clockid.h"
#include "util/tm.h"

/* ==== nodes, readings, origins ========================================= */

/* One clock of a snapshot, already qualified into a node. ts is the raw
 * value (uint64 as in the protos; it is read as int64 after scaling);
 * unit_ns 0 means 1 (§3.3). */
typedef struct tm_clock_reading {
	tm_clock_node node;
	uint64_t ts;
	uint64_t unit_ns;
	int incremental;
} tm_clock_reading;

/* Result of a conversion (§4.5). */
typedef enum tm_conv {
	TM_CONV_OK = 0,
	TM_CONV_UNKNOWN_SOURCE, /* clock_sync_failure_unknown_source_clock */
	TM_CONV_UNKNOWN_TARGET, /* clock_sync_failure_unknown_target_clock */
	TM_CONV_NO_PATH,        /* clock_sync_failure_no_path */
} tm_conv;

/* Where a snapshot came from (§3.1); only the views care. */
typedef enum tm_clock_origin {
	TM_CLOCK_ORIGIN_SNAPSHOT = 0,   /* proto ClockSnapshot */
	TM_CLOCK_ORIGIN_FTRACE,         /* ftrace bundle {bundle clock, BOOTTIME} */
	TM_CLOCK_ORIGIN_REMOTE_CLIENT,  /* remote_clock_sync client round */
	TM_CLOCK_ORIGIN_REMOTE_OFFSET,  /* remote_clock_sync cross-machine edge */
	TM_CLOCK_ORIGIN_MANIFEST,       /* manifest `clocks` override (§9) */
	TM_CLOCK_ORIGIN_FILE_TAG,       /* §7 file-tag identity bridge */
	TM_CLOCK_ORIGIN_REALTIME,       /* §7 REALTIME rendezvous bridge */
	TM_CLOCK_ORIGIN_ASSUMED,        /* §7 step 3 same-domain / private assumption */
	TM_CLOCK_ORIGIN_COUNT
} tm_clock_origin;

/* Stable lower-case name of an origin ("clock_snapshot", "manifest", ...),
 * static storage; "unknown" for an out-of-range value. */
const char *tm_clock_origin_name(tm_clock_origin o);

/* §2.2 order: lexicographic on (clock_id, seq_id, file_id, machine_row). */
int tm_clock_node_cmp(tm_clock_node a, tm_clock_node b);

/* §2.3: print a node as the error messages do ("6", or
 * "11(seq=0,tf=2,m=0)"); buf of at least 64 bytes, returned. */
const char *tm_clock_node_str(tm_clock_node n, char *buf);

/* §3.2: the 32-bit, order-dependent hash of a snapshot's nodes. */
uint32_t tm_clock_snapshot_hash(const tm_clock_node *nodes, size_t n);

/* A snapshot with more readings than this is rejected (counted like any
 * invalid snapshot). Not a reference rule: it bounds the quadratic edge set
 * on hostile input; real snapshots list a handful of clocks. */
#define TM_CLOCK_SNAPSHOT_MAX 128

/* ==== the graph (§3, §4) =============================================== */

typedef struct tm_clock_graph tm_clock_graph;

/* An empty graph whose trace-time node is (11,0,0,0) (§5.1). Never NULL. */
tm_clock_graph *tm_clock_graph_new(void);
/* Room for about n more nodes and snapshots of two readings each. */
void tm_clock_graph_reserve(tm_clock_graph *g, size_t n);
/* Frees the graph and everything it recorded. NULL is fine. */
void tm_clock_graph_free(tm_clock_graph *g);
/* Give back what only speeds conversions up (the paths found, the
 * searches' scratch): a scan's graph once its files are read. A later
 * conversion finds its path again. */
void tm_clock_graph_trim(tm_clock_graph *g);

/* The node the §3.3 trace-clock checks apply to. The context keeps it in
 * step with trace time; only tests call the setter directly. */
void tm_clock_graph_set_trace_time(tm_clock_graph *g, tm_clock_node n);
const tm_clock_node *tm_clock_graph_trace_time(const tm_clock_graph *g);

/* Who inserted a snapshot, for the views. */
typedef struct tm_clock_provenance {
	tm_clock_origin origin;
	uint32_t file_id;
	uint32_t machine_row;
} tm_clock_provenance;

/* Insert a snapshot of n readings, in order (§3.3-§3.5). It always
 * consumes the next snapshot id (from 0) and is always recorded for the
 * views. Returns the id, or -1 with the exact §3.3 message in err when it
 * is rejected; then the rejection counter goes up (it backs
 * invalid_clock_snapshots) and the rejection is not atomic: readings
 * before the offending one stay in their series and the offending node is
 * registered. `prov` NULL means {SNAPSHOT, file 0, row 0}. */
int64_t tm_clock_graph_insert(tm_clock_graph *g, const tm_clock_reading *r, size_t n,
			      const tm_clock_provenance *prov, tm_error *err);
/* tm_clock_graph_insert with prov NULL. */
int64_t tm_clock_graph_add_snapshot(tm_clock_graph *g, const tm_clock_reading *r, size_t n, tm_error *err);

/* The number of snapshot ids consumed so far (= snapshots recorded). */
uint64_t tm_clock_graph_snapshot_count(const tm_clock_graph *g);
/* How many insertions were rejected. */
uint64_t tm_clock_graph_rejected(const tm_clock_graph *g);

/* Did any snapshot, even a rejected one, register this node? (§4.5) */
int tm_clock_graph_knows(const tm_clock_graph *g, tm_clock_node n);

/* §4.1: does a path of at most 4 edges lead from src to dst right now?
 * src == dst counts; an unknown endpoint does not. Uses and fills the path
 * cache. */
int tm_clock_graph_has_path(tm_clock_graph *g, tm_clock_node src, tm_clock_node dst);
/* The same answer without touching the cache (for the views). */
int tm_clock_graph_reaches(const tm_clock_graph *g, tm_clock_node src, tm_clock_node dst);
/* tm_clock_graph_reaches(g, node, dst) for every node at once, by
 * registration index (reach holds node_count bytes): one pass over the
 * edges per hop, where asking node by node would cost the graph's size for
 * each node. */
void tm_clock_graph_reaching(const tm_clock_graph *g, tm_clock_node dst, unsigned char *reach);

/* One edge of a conversion path: the snapshots of `hash` relate from and
 * to; `origin` is the first accepted one's. */
typedef struct tm_clock_hop {
	tm_clock_node from, to;
	uint32_t hash;
	tm_clock_origin origin;
} tm_clock_hop;

/* The path a conversion from src to dst takes on the graph as it is now
 * (§4.1; without touching the cache): fills hops[0..4) and returns their
 * number, 0 when src == dst, -1 when there is none. */
int tm_clock_graph_path(const tm_clock_graph *g, tm_clock_node src, tm_clock_node dst, tm_clock_hop *hops);

/* The origin of the first accepted snapshot with `hash` (clock_snapshot
 * when none). */
tm_clock_origin tm_clock_graph_hash_origin(const tm_clock_graph *g, uint32_t hash);

/* §4: convert `value` read on src into dst. src == dst returns the value
 * unchanged. An incremental source advances its running value only when a
 * path exists (§4.4). Sums wrap like the reference's int64 arithmetic. */
tm_conv tm_clock_graph_convert(tm_clock_graph *g, tm_clock_node src, int64_t value, tm_clock_node dst,
			       int64_t *out);

/* A conversion remembered by its caller, who converts long runs from one
 * source (a tracker: each file's packets mostly name one or two clocks):
 * tm_clock_graph_convert_memo converts as tm_clock_graph_convert does and
 * fills *m; tm_clock_graph_convert_again then answers a later value of
 * the same (src, dst) in one add while the graph has not changed since
 * and the value takes every hop through the same gap as the last (1, *out
 * set), else returns 0 and the caller converts again. Answers are those of
 * tm_clock_graph_convert. */
typedef struct tm_conv_memo {
	uint64_t key, version;
	size_t slot, cap;
	uint32_t s;
	int valid;
} tm_conv_memo;
tm_conv tm_clock_graph_convert_memo(tm_clock_graph *g, tm_clock_node src, int64_t value, tm_clock_node dst,
				    int64_t *out, tm_conv_memo *m);
int tm_clock_graph_convert_again(tm_clock_graph *g, const tm_conv_memo *m, int64_t value, int64_t *out);

/* How many path searches actually ran (cache misses); tests use it to
 * prove the cache works. The cache is keyed by (src, dst) and is dropped
 * whenever the edge set changes. */
uint64_t tm_clock_graph_searches(const tm_clock_graph *g);

/* ---- introspection, for metadata.json and clocks/ -------------------- */

typedef struct tm_clock_node_info {
	tm_clock_node node;
	uint64_t unit_ns;     /* fixed by the first sighting (§3.3) */
	int incremental;
	int non_monotonic;    /* §3.5: never a conversion source again */
	int is_trace_time;
	size_t n_values;      /* readings stored, over all its series */
} tm_clock_node_info;

/* Nodes in registration order: index 0 .. count-1. */
size_t tm_clock_graph_node_count(const tm_clock_graph *g);
/* Fills *out for node `index` (< count). */
void tm_clock_graph_node_info(const tm_clock_graph *g, size_t index, tm_clock_node_info *out);

typedef struct tm_clock_edge {
	tm_clock_node from, to;
	uint32_t hash;
} tm_clock_edge;

/* Edge iteration: zero an iterator, then call next until it returns 0.
 * Order: nodes in registration order, each node's edges in edge-set order
 * (to-node per §2.2, then hash). A step costs the node's degree (for the
 * views and tests). */
typedef struct tm_clock_edge_iter {
	size_t node, k, last;
} tm_clock_edge_iter;
int tm_clock_graph_next_edge(const tm_clock_graph *g, tm_clock_edge_iter *it, tm_clock_edge *out);
/* Is the directed edge (from, to, hash) in the edge set? */
int tm_clock_graph_has_edge(const tm_clock_graph *g, tm_clock_node from, tm_clock_node to, uint32_t hash);

typedef struct tm_clock_snapshot_info {
	uint32_t id;
	tm_clock_provenance prov;
	uint32_t hash;
	int accepted;
	const tm_clock_reading *readings; /* as offered (none when oversize); valid
					     while this info lives, until the next insert */
	size_t n_readings;
	tm_clock_reading buf[TM_CLOCK_SNAPSHOT_MAX]; /* where `readings` may point */
} tm_clock_snapshot_info;

/* Snapshot `id` (< snapshot_count), in insertion order. Returns 0 when out
 * of range. */
int tm_clock_graph_snapshot(const tm_clock_graph *g, uint64_t id, tm_clock_snapshot_info *out);

/* ---- the index cache (core/session/index.h) ----------------------------------- */

struct tm_ser_rd;
struct tm_ser_out;

/* The graph as bytes (core/util/ser.h), and back. A graph read back answers
 * every question of this header as the saved one did; its path cache
 * starts empty. tm_clock_graph_load returns NULL, with the reader bad,
 * for bytes that are not a graph this code wrote. */
void tm_clock_graph_save(const tm_clock_graph *g, struct tm_ser_out *out);
/* One clock node, as the graph saves its nodes (for the other savers). */
void tm_clock_node_save(struct tm_ser_out *out, tm_clock_node k);
tm_clock_node tm_clock_node_load(struct tm_ser_rd *r);
tm_clock_graph *tm_clock_graph_load(struct tm_ser_rd *r);

/* ==== the context: trace time and stats (§5, §10) ===================== */

typedef struct tm_clocks tm_clocks;
typedef struct tm_clock_tracker tm_clock_tracker;

/* Clock stats. INVALID_SNAPSHOTS is global (a tracker's copy is 0); the
 * others are attributed to the tracker's (file, machine). */
enum {
	TM_CLOCK_STAT_INVALID_SNAPSHOTS = 0, /* invalid_clock_snapshots */
	TM_CLOCK_STAT_UNKNOWN_SOURCE,        /* clock_sync_failure_unknown_source_clock */
	TM_CLOCK_STAT_UNKNOWN_TARGET,        /* clock_sync_failure_unknown_target_clock */
	TM_CLOCK_STAT_NO_PATH,               /* clock_sync_failure_no_path */
	TM_CLOCK_STAT_UNRELATABLE,           /* clock_sync_unrelatable_clock_domains */
	TM_CLOCK_STAT_MIXED_SOURCES,         /* clock_sync_mixed_clock_sources */
	TM_CLOCK_STAT_COUNT
};
/* The stat names exactly as trace processor prints them, by index. */
extern const char *const tm_clock_stat_names[TM_CLOCK_STAT_COUNT];

typedef struct tm_clock_stats {
	uint64_t n[TM_CLOCK_STAT_COUNT];
} tm_clock_stats;

/* A fresh context: empty graph, trace time (11,0,0,0) without owner,
 * trace_time_clock_id unset (§5.1). Never NULL. */
tm_clocks *tm_clocks_new(void);
/* Frees the context, its graph and its trackers. NULL is fine. */
void tm_clocks_free(tm_clocks *c);
/* tm_clock_graph_trim of c's graph. */
void tm_clocks_trim(tm_clocks *c);
/* A hint: about `n_files` files will each open a tracker and bring a
 * clock of their own (an archive of 100,000 small files). Makes room for
 * that many exactly, where doubling would leave a third unused. */
void tm_clocks_reserve(tm_clocks *c, size_t n_files);

/* The graph, read-only, for the views. */
const tm_clock_graph *tm_clocks_view(const tm_clocks *c);

/* Insert a snapshot of already-qualified nodes (manifest edges, §9; tests).
 * Same contract as tm_clock_graph_insert; a rejection is counted in
 * invalid_clock_snapshots whoever the caller is (the reference does too);
 * the caller decides whether it is fatal (the manifest's are). */
int64_t tm_clocks_add_snapshot(tm_clocks *c, const tm_clock_reading *r, size_t n, tm_clock_origin origin,
			       uint32_t file_id, uint32_t machine_row, tm_error *err);

/* Node-to-node conversion and path test on the graph, no stats. */
tm_conv tm_clocks_convert(tm_clocks *c, tm_clock_node src, int64_t value, tm_clock_node dst, int64_t *out);
int tm_clocks_has_path(tm_clocks *c, tm_clock_node src, tm_clock_node dst);

/* The current trace-time node (§5). */
tm_clock_node tm_clocks_trace_time(const tm_clocks *c);
/* 1 and *owner_file set when trace time has an owner, else 0. */
int tm_clocks_owner(const tm_clocks *c, uint32_t *owner_file);
/* Metadata trace_time_clock_id: 1 and *clock_id set once a claim
 * succeeded, else 0 (unset). */
int tm_clocks_trace_time_clock_id(const tm_clocks *c, uint32_t *clock_id);

/* §5.2: claim trace time for `node` on behalf of `owner_file`. Succeeds
 * (returns 1) iff there is no owner yet or the owner is the same file; then
 * trace time, its owner and trace_time_clock_id (= node.clock_id) are set.
 * Otherwise returns 0 and changes nothing. The manifest's trace_time uses
 * this directly; readers use tm_tracker_claim. */
int tm_clocks_claim(tm_clocks *c, tm_clock_node node, uint32_t owner_file);

/* The context as bytes, and back: the graph, trace time's owner and its
 * clock id. Trackers are not kept (save once they are ended); a context
 * read back has none. NULL with the reader bad, as tm_clock_graph_load. */
void tm_clocks_save(const tm_clocks *c, struct tm_ser_out *out);
tm_clocks *tm_clocks_load(struct tm_ser_rd *r);

/* Totals over the whole session: the global stat plus every tracker's. */
void tm_clocks_stats(const tm_clocks *c, tm_clock_stats *out);

/* ==== trackers (§6-§8) ================================================ */

/* The pseudo clock id naming the tracker's file's own private clock,
 * TRACE_FILE scoped to the file: (11, 0, file id, machine row) (§2.2).
 * A raw TRACE_FILE (11) read from trace data is a builtin like any other
 * (qualified with the file tag), as in the reference. Consequently a raw
 * clock id 0xFFFFFFFF in trace data cannot be expressed (negligible). */
#define TM_CLOCK_THIS_FILE UINT32_MAX

/* Returned by tm_tracker_insert_snapshot for the §9.3 override error. */
#define TM_CLOCK_SNAPSHOT_FATAL (-2)

/* The tracker of (file_id, machine_row), created on first use (owned by the
 * context, pointer stable until tm_clocks_free). `primary` (§8.1: the first
 * tracker created for its raw machine id; the caller knows) is used only at
 * creation. */
tm_clock_tracker *tm_clocks_open_tracker(tm_clocks *c, uint32_t file_id, uint32_t machine_row, int primary);
/* The existing tracker of (file_id, machine_row), or NULL. */
tm_clock_tracker *tm_clocks_find_tracker(tm_clocks *c, uint32_t file_id, uint32_t machine_row);
/* Trackers in creation order, for the views. */
size_t tm_clocks_tracker_count(const tm_clocks *c);
/* The trackers' stats are read and no tracker is wanted again (a file is
 * read, or the import is over): free them (a tracker per file adds up in
 * an archive of many files). Afterwards there are none; the graph, trace
 * time and its owner stay, and what the views read of each tracker that
 * read a clock (tm_clocks_ended_at). */
void tm_clocks_end_trackers(tm_clocks *c);
tm_clock_tracker *tm_clocks_tracker_at(const tm_clocks *c, size_t i);

uint32_t tm_tracker_file(const tm_clock_tracker *t);
uint32_t tm_tracker_machine(const tm_clock_tracker *t);
int tm_tracker_is_primary(const tm_clock_tracker *t);
/* The current file tag: 0 (machine-canonical) or the file id (§8.1). */
uint32_t tm_tracker_file_tag(const tm_clock_tracker *t);

/* §6 default clock: what events without a clock id are expressed in (a raw
 * id or TM_CLOCK_THIS_FILE). Remote-machine readers copy the host reader's
 * at creation. */
void tm_tracker_set_default_clock(tm_clock_tracker *t, uint32_t clock_id);
/* 1 and *clock_id set when a default clock is set, else 0. */
int tm_tracker_default_clock(const tm_clock_tracker *t, uint32_t *clock_id);

/* §6/§7: arm the one-shot bridge with the deferred sync clock D (raw id or
 * TM_CLOCK_THIS_FILE), run at the next conversion request. Readers arm it
 * once at file start (proto and remote readers: BOOTTIME). A tracker never
 * armed is never bridged. */
void tm_tracker_set_sync_clock(tm_clock_tracker *t, uint32_t clock_id);

/* The file has a manifest PIN: from now on every snapshot through this
 * tracker fails with the §9.3 message (clocks.md §9.3). */
void tm_tracker_set_clock_override(tm_clock_tracker *t);

/* §2.2/§8.1: the node a raw clock id denotes for this tracker now:
 * TM_CLOCK_THIS_FILE -> (11, 0, file, row); 64-127 with seq_id != 0 ->
 * (id, seq, file, row); anything else -> (id, 0, file tag, row). The caller
 * rejects sequence clocks on sequence 0 first (§6.1 message). */
tm_clock_node tm_tracker_node(const tm_clock_tracker *t, uint32_t clock_id, uint32_t seq_id);

/* §5.2 claim by a reader: `clock_id` (raw or TM_CLOCK_THIS_FILE) on this
 * tracker's machine with file tag 0, owned by this tracker's file. Refused
 * silently (returns 0) once this tracker has attempted any conversion, or
 * when another file owns trace time. Returns 1 on success. */
int tm_tracker_claim(tm_clock_tracker *t, uint32_t clock_id);

/* One clock of a snapshot as a reader sees it: a raw clock id (or
 * TM_CLOCK_THIS_FILE), not yet a node. */
typedef struct tm_raw_reading {
	uint32_t clock_id;
	uint64_t ts;
	uint64_t unit_ns; /* 0 means 1 */
	int incremental;
} tm_raw_reading;

/* Insert a snapshot read by this tracker on packet sequence `seq_id`
 * (§3.1): a non-primary tracker first switches to its own file tag (§8.1,
 * counting clock_sync_mixed_clock_sources if it had converted), every
 * clock is qualified (tm_tracker_node), REALTIME twins are appended for a
 * non-primary tracker off the trace-time machine (§8.2), then the snapshot
 * is inserted. Returns the snapshot id; -1 when rejected (err holds the
 * §3.3 message, invalid_clock_snapshots counted, import continues); or
 * TM_CLOCK_SNAPSHOT_FATAL with the §9.3 message when the file has a clock
 * override (nothing inserted or counted). */
int64_t tm_tracker_insert_snapshot(tm_clock_tracker *t, const tm_raw_reading *r, size_t n, uint32_t seq_id,
				   tm_clock_origin origin, tm_error *err);

/* Convert `value` on raw clock `clock_id` (sequence `seq_id` for clocks
 * 64-127) to trace time. The first request after the bridge was armed
 * runs it (§7). Every call counts as a conversion attempt (§5.2), also
 * failed ones. A failure is counted on this tracker (§4.5) unless `quiet`
 * (a proto packet set aside for its retry at end of file, §6.1, or a value
 * kept raw on failure). Clock 0 means "already trace time" and is the
 * caller's to handle (§6.1 step 4). Returns TM_CONV_OK with *out set, or
 * the failure kind. */
tm_conv tm_tracker_to_trace_time(tm_clock_tracker *t, uint32_t clock_id, uint32_t seq_id, int64_t value,
				 int quiet, int64_t *out);
/* The same from the tracker's default clock. Without a default clock it
 * returns TM_CONV_UNKNOWN_SOURCE and counts nothing. */
tm_conv tm_tracker_default_to_trace_time(tm_clock_tracker *t, int64_t value, int quiet, int64_t *out);

/* How many conversions this tracker has attempted. */
uint64_t tm_tracker_conversions(const tm_clock_tracker *t);
/* This tracker's stats (INVALID_SNAPSHOTS is always 0 here). */
void tm_tracker_stats(const tm_clock_tracker *t, tm_clock_stats *out);
/* The clocks this tracker converted from, in first-use order: each source
 * node with its conversions that succeeded and failed (and how the last
 * failure failed). For the placement views (metadata.json, graph.dot). */
typedef struct tm_clock_source {
	tm_clock_node node;
	uint64_t ok, failed;
	tm_conv failure;
} tm_clock_source;
size_t tm_tracker_source_count(const tm_clock_tracker *t);
const tm_clock_source *tm_tracker_source(const tm_clock_tracker *t, size_t i);

/* What an ended tracker that read a clock leaves for the views: its file,
 * machine and sources (tm_tracker_source). */
typedef struct tm_clock_ended {
	uint32_t file_id, machine_row;
	const tm_clock_source *src;
	size_t n_src;
} tm_clock_ended;
/* Ended trackers in creation order (all created before the live ones). */
size_t tm_clocks_ended_count(const tm_clocks *c);
void tm_clocks_ended_at(const tm_clocks *c, size_t i, tm_clock_ended *out);
/* The indexes (for tm_clocks_ended_at) of file_id's, in creation order,
 * and *n of them; NULL when none. Caller frees. */
size_t *tm_clocks_ended_of(const tm_clocks *c, uint32_t file_id, size_t *n);

/* Args of clock_sync_unrelatable_clock_domains: 1 and the source and target
 * clock ids when it was recorded, else 0. */
int tm_tracker_unrelatable(const tm_clock_tracker *t, uint32_t *source_clock_id, uint32_t *target_clock_id);
/* Arg num_conversions_using_primary of clock_sync_mixed_clock_sources (0
 * when not recorded). */
uint64_t tm_tracker_mixed_conversions(const tm_clock_tracker *t);

/* ==== remote_clock_sync (machines.md §8) ============================== */

typedef struct tm_sync_reading {
	uint32_t clock_id;
	uint64_t ts;
} tm_sync_reading;

/* One SyncedClocks round: the client and host ClockSnapshots' clocks, in
 * message order. */
typedef struct tm_remote_sync_round {
	const tm_sync_reading *client;
	size_t n_client;
	const tm_sync_reading *host;
	size_t n_host;
} tm_remote_sync_round;

/* Process one RemoteClockSync message read by `client`, the client
 * machine's tracker: inserts each round's client snapshot through the
 * tracker (unit 1, not incremental; a rejection is counted, not fatal),
 * then, in ascending clock id order, one cross-machine edge
 * {(c, 0, 0, host row): anchor, (c, 0, 0, client row): anchor + offset}
 * per clock with an offset (host row = trace time's machine, §5.4).
 * Returns the number of edges inserted. The single-machine checks of
 * step 0 are the caller's. */
size_t tm_tracker_remote_clock_sync(tm_clock_tracker *client, const tm_remote_sync_round *rounds,
				    size_t n_rounds);

/* ==== views (core/clock/clock_view.c) ====================================== */

/* How the views name machines and files; either function may be NULL or
 * return NULL ("machine N", "file N"); a file named "" is the input
 * itself. */
typedef struct tm_clock_labels {
	void *ctx;
	const char *(*machine)(void *ctx, uint32_t row);
	const char *(*file)(void *ctx, uint32_t file_id);
} tm_clock_labels;

/* Where one group of a file's timestamps went: the clock they were read
 * on (the first of n_sources: a file's sequence clocks with one route are
 * one group), how many converted and how many were dropped (and why), and
 * the path to trace time on the final graph (n_hops -1: none; 0: the
 * clock is trace time). */
typedef struct tm_placement {
	tm_clock_node from;
	uint32_t n_sources;
	uint64_t ok, failed;
	tm_conv failure;
	int n_hops;
	tm_clock_hop hops[4];
} tm_placement;

/* The placement groups of `file_id`, over its trackers in creation order
 * and their sources in first-use order. Caller frees; NULL when none. */
tm_placement *tm_clocks_placement(const tm_clocks *c, uint32_t file_id, size_t *n);

/* Clock `i` of a placement's path (0: where it started, then each hop's
 * end) as one line: "BOOTTIME@host", "TRACE_FILE@host (app.json)",
 * "SEQ_CLOCK_64@host (chrome.pftrace, 186 sequences)". Appends to out. */
void tm_clocks_placement_clock(const tm_placement *p, int i, const tm_clock_labels *l, tm_buf *out);

/* How a hop was made: the origin's name, a manifest edge told apart as
 * "manifest_pin" or "manifest_relate". Static storage. */
const char *tm_clock_hop_name(const tm_clock_hop *h);

/* Graphviz digraph of the clock graph drawn for a person (DESIGN.md
 * clocks/graph.dot): one cluster per machine holding its clocks and its
 * files; a file's sequence clocks folded into one node; the snapshots of
 * one origin that relate the same drawn clocks drawn once, as an edge
 * between two or a hub joining more, labelled with origin and count; each
 * file a note with an edge to the clocks its timestamps were read on and
 * its path to trace time drawn in crimson (dropped ones dashed red); trace
 * time gold; clocks without a path to it dashed red. Deterministic.
 * Appends to *out. */
void tm_clocks_render_dot(const tm_clocks *c, const tm_clock_labels *l, tm_buf *out);

/* clocks/edges.csv: header "from_clock,to_clock,from_ts,to_ts,origin,file,
 * machine", then one row per pair of readings of each accepted snapshot, in
 * snapshot order. Timestamps in ns (raw x unit). Fields are quoted per
 * RFC 4180 when needed. Appends to *out. */
void tm_clocks_render_csv(const tm_clocks *c, const tm_clock_labels *l, tm_buf *out);
/* The same, given away as it is made: fn takes the bytes of `out` (and
 * leaves it empty) each time it holds more than `at` of them; what is
 * left at the end stays in `out`. The rows grow with the snapshots: 41 KB
 * a Chrome proto file, 121 MB for 2,850 of them. */
typedef struct tm_clock_spill {
	void (*fn)(void *ctx, tm_buf *out);
	void *ctx;
	size_t at;
} tm_clock_spill;
void tm_clocks_render_csv_spill(const tm_clocks *c, const tm_clock_labels *l, tm_buf *out,
				const tm_clock_spill *spill);

#endif
