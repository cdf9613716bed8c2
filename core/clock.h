/* core/clock.h - the clock graph of spec/clocks.md §3-§4: snapshots,
 * their order-dependent hash, per-node series, edges, the monotonicity
 * rule, path search and conversion.
 *
 * Trackers, trace-time claiming and bridging (§5-§8) build on this; the
 * graph itself knows only nodes, snapshots and the current trace-time node
 * (which two of the §3.3 checks need).
 */
#ifndef TM_CLOCK_H
#define TM_CLOCK_H

#include <stddef.h>
#include <stdint.h>

#include "clockid.h"
#include "tm.h"

typedef struct tm_clock_graph tm_clock_graph;

/* One clock of a snapshot. unit_ns 0 means 1 (§3.3). */
typedef struct tm_clock_reading {
	tm_clock_node node;
	uint64_t ts;
	uint64_t unit_ns;
	int incremental;
} tm_clock_reading;

typedef enum tm_conv {
	TM_CONV_OK = 0,
	TM_CONV_UNKNOWN_SOURCE, /* clock_sync_failure_unknown_source_clock */
	TM_CONV_UNKNOWN_TARGET, /* clock_sync_failure_unknown_target_clock */
	TM_CONV_NO_PATH,        /* clock_sync_failure_no_path */
} tm_conv;

tm_clock_graph *tm_clock_graph_new(void);
void tm_clock_graph_free(tm_clock_graph *g);

/* The node the §3.3 trace-clock checks apply to (initially (11,0,0,0)). */
void tm_clock_graph_set_trace_time(tm_clock_graph *g, tm_clock_node n);
tm_clock_node tm_clock_graph_trace_time(const tm_clock_graph *g);

/* §3.2: the 32-bit hash of a snapshot's nodes, in order. */
uint32_t tm_clock_snapshot_hash(const tm_clock_node *nodes, size_t n);

/* Insert a snapshot (it always consumes the next snapshot id, from 0).
 * Returns the id, or -1 with the exact §3.3 message when rejected; a
 * rejection is not atomic (§3.3): readings before the offending one stay
 * in their series and the offending node is registered. */
int64_t tm_clock_graph_add_snapshot(tm_clock_graph *g, const tm_clock_reading *r, size_t n, tm_error *err);

/* The number of snapshot ids consumed so far. */
uint64_t tm_clock_graph_snapshot_count(const tm_clock_graph *g);

/* Did any snapshot (even a rejected one) register this node? */
int tm_clock_graph_knows(const tm_clock_graph *g, tm_clock_node n);

/* §4.1: is there a path of at most 4 edges? (src == dst counts.) */
int tm_clock_graph_has_path(tm_clock_graph *g, tm_clock_node src, tm_clock_node dst);

/* §4: convert `value` read on src into dst. src == dst returns the value
 * unchanged. An incremental source advances its running value only when
 * a path exists (§4.4). */
tm_conv tm_clock_graph_convert(tm_clock_graph *g, tm_clock_node src, int64_t value, tm_clock_node dst,
			       int64_t *out);

/* Print a node as the error messages do (§2.3); buf of at least 64 bytes. */
const char *tm_clock_node_str(tm_clock_node n, char *buf);

/* How many breadth-first searches ran (the path cache makes repeated
 * conversions cheap; tests check it). */
uint64_t tm_clock_graph_searches(const tm_clock_graph *g);

#endif
