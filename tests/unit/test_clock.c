/* tests/unit/test_clock.c - the clock model against spec/clocks.md (every
 * verified example), machines.md §8 and the clock scenarios of
 * conformance.md. Cases drive the API the way the readers do: a tracker
 * per (file, machine), snapshots with their claims, conversions in
 * tokenization order, proto packets set aside and retried at end of file. */
#include "tt.h"

#include <stdlib.h>
#include <unistd.h>

#include "clock/clock.h"

#define RT TM_CLOCK_REALTIME
#define MONO TM_CLOCK_MONOTONIC
#define MONO_COARSE TM_CLOCK_MONOTONIC_COARSE
#define BT TM_CLOCK_BOOTTIME
#define TF TM_CLOCK_TRACE_FILE
#define G INT64_C(1000000000)

/* Failure values of the helpers: -1000 - tm_conv. */
#define UNKNOWN_SOURCE (-1000 - TM_CONV_UNKNOWN_SOURCE)
#define UNKNOWN_TARGET (-1000 - TM_CONV_UNKNOWN_TARGET)
#define NO_PATH (-1000 - TM_CONV_NO_PATH)

#define NODE(c, s, f, m) ((tm_clock_node){(c), (s), (f), (m)})
#define N(c) NODE((c), 0, 0, 0)
#define NM(c, m) NODE((c), 0, 0, (m))

static tm_clocks *c;
static tm_error err;

static void fresh(void)
{
	tm_clocks_free(c);
	c = tm_clocks_new();
	tm_err_clear(&err);
}

static tm_clock_stats totals(void)
{
	tm_clock_stats s;
	tm_clocks_stats(c, &s);
	return s;
}

static tm_clock_stats tstats(const tm_clock_tracker *t)
{
	tm_clock_stats s;
	tm_tracker_stats(t, &s);
	return s;
}

/* ---- how the readers drive the API --------------------------------------- */

/* A proto reader's tracker (§6: D = BOOTTIME, no default until a snapshot). */
static tm_clock_tracker *proto_tracker(uint32_t file, uint32_t row, int primary)
{
	tm_clock_tracker *t = tm_clocks_open_tracker(c, file, row, primary);
	tm_tracker_set_sync_clock(t, BT);
	return t;
}

/* A text reader's tracker (§6): default clock = D = the format clock, and
 * the claim at file start. */
static tm_clock_tracker *text_tracker(uint32_t file, uint32_t row, int primary, uint32_t clock)
{
	tm_clock_tracker *t = tm_clocks_open_tracker(c, file, row, primary);
	tm_tracker_set_default_clock(t, clock);
	tm_tracker_claim(t, clock);
	tm_tracker_set_sync_clock(t, clock);
	return t;
}

/* A proto ClockSnapshot packet (§5.2 table): the default clock is set and
 * trace time claimed (primary_trace_clock, else BOOTTIME if present and
 * TRACE_FILE absent) before the snapshot is inserted. */
static int64_t proto_snap(tm_clock_tracker *t, uint32_t primary_clock, uint32_t seq, const tm_raw_reading *r,
			  size_t n)
{
	uint32_t clock = primary_clock;
	if (!clock) {
		int boot = 0, tf = 0;
		for (size_t i = 0; i < n; i++) {
			boot |= r[i].clock_id == BT;
			tf |= r[i].clock_id == TF;
		}
		clock = boot && !tf ? BT : 0;
	}
	if (clock) {
		tm_tracker_set_default_clock(t, clock);
		tm_tracker_claim(t, clock);
	}
	return tm_tracker_insert_snapshot(t, r, n, seq, TM_CLOCK_ORIGIN_SNAPSHOT, &err);
}

/* A reading as a reader passes it: raw clock id and value (unit 1), or
 * with unit and incremental flag. */
#define R(clock, ts) {(clock), (uint64_t)(ts), 0, 0}
#define RU(clock, ts, unit, incr) {(clock), (uint64_t)(ts), (unit), (incr)}
#define READINGS(...) ((const tm_raw_reading[]){__VA_ARGS__})
#define COUNT(...) (sizeof((const tm_raw_reading[]){__VA_ARGS__}) / sizeof(tm_raw_reading))
#define SNAP(t, ...) proto_snap((t), 0, 0, READINGS(__VA_ARGS__), COUNT(__VA_ARGS__))
#define SNAP_PRIMARY(t, clock, ...) proto_snap((t), (clock), 0, READINGS(__VA_ARGS__), COUNT(__VA_ARGS__))
#define SNAP_SEQ(t, seq, ...) proto_snap((t), 0, (seq), READINGS(__VA_ARGS__), COUNT(__VA_ARGS__))

/* One conversion to trace time; clock 0 = the tracker's default clock. */
static int64_t conv_q(tm_clock_tracker *t, uint32_t clock, uint32_t seq, int64_t v, int quiet)
{
	int64_t out = 0;
	tm_conv rc = clock ? tm_tracker_to_trace_time(t, clock, seq, v, quiet, &out)
			   : tm_tracker_default_to_trace_time(t, v, quiet, &out);
	return rc == TM_CONV_OK ? out : -1000 - (int64_t)rc;
}

/* A text event (or a packet converted at the end of the file): failures
 * count. */
static int64_t conv(tm_clock_tracker *t, uint32_t clock, int64_t v)
{
	return conv_q(t, clock, 0, v, 0);
}

/* §6.1: a proto packet is first tried quietly; on failure it is set aside
 * and retried (counting) when the file ends. */
static int64_t packet_first_try(tm_clock_tracker *t, uint32_t clock, int64_t v)
{
	return conv_q(t, clock, 0, v, 1);
}

/* A graph-level snapshot of qualified nodes (manifest edges, tests). */
static int64_t raw_snap(const tm_clock_reading *r, size_t n, tm_clock_origin origin)
{
	return tm_clocks_add_snapshot(c, r, n, origin, 0, 0, &err);
}
#define RAW(origin, ...)                                                                                           \
	raw_snap((const tm_clock_reading[]){__VA_ARGS__},                                                          \
		 sizeof((const tm_clock_reading[]){__VA_ARGS__}) / sizeof(tm_clock_reading), (origin))

/* §9.2: the manifest edge for `offset_ns`: reference = source + offset. */
static int64_t manifest_edge(tm_clock_node source, tm_clock_node reference, int64_t offset_ns)
{
	uint64_t s = offset_ns < 0 ? (uint64_t)-offset_ns : 0, r = offset_ns > 0 ? (uint64_t)offset_ns : 0;
	return RAW(TM_CLOCK_ORIGIN_MANIFEST, {source, s, 1, 0}, {reference, r, 1, 0});
}

static int64_t node_conv(tm_clock_node src, int64_t v, tm_clock_node dst)
{
	int64_t out = 0;
	tm_conv rc = tm_clocks_convert(c, src, v, dst, &out);
	return rc == TM_CONV_OK ? out : -1000 - (int64_t)rc;
}

static int trace_time_is(tm_clock_node n)
{
	return tm_clock_node_cmp(tm_clocks_trace_time(c), n) == 0;
}

/* ---- §2, §3.2 ---------------------------------------------------------- */

static void test_hash_check_values(void)
{
	tm_clock_node a[] = {N(BT), N(MONO)}, b[] = {N(MONO), N(BT)}, d[] = {N(BT), N(RT), N(MONO)};
	CHECK_INT(tm_clock_snapshot_hash(a, 2), 0x83d7ea3c);
	CHECK_INT(tm_clock_snapshot_hash(b, 2), 0x88052b94);
	CHECK_INT(tm_clock_snapshot_hash(d, 3), 0xd38a13bf);
	tm_clock_node e[] = {N(BT), N(MONO), N(MONO_COARSE)}, f[] = {N(BT), N(MONO), N(129)},
		      h[] = {N(BT), N(MONO), N(128)};
	CHECK_INT(tm_clock_snapshot_hash(e, 3), 0x0c68b161);
	CHECK_INT(tm_clock_snapshot_hash(f, 3), 0xdd973bfa);
	CHECK_INT(tm_clock_snapshot_hash(h, 3), 0x4f78ea78);
}

static void test_node_printing_and_order(void)
{
	char buf[64];
	CHECK_STR(tm_clock_node_str(N(6), buf), "6");
	CHECK_STR(tm_clock_node_str(NODE(11, 0, 2, 0), buf), "11(seq=0,tf=2,m=0)");
	CHECK_STR(tm_clock_node_str(NODE(64, 3, 1, 2), buf), "64(seq=3,tf=1,m=2)");
	CHECK(tm_clock_node_cmp(N(3), NM(1, 5)) > 0);
	CHECK(tm_clock_node_cmp(NODE(6, 0, 1, 0), NODE(6, 0, 0, 9)) > 0);
	CHECK(tm_clock_node_cmp(NODE(6, 0, 0, 1), NODE(6, 0, 0, 2)) < 0);
	CHECK_INT(tm_clock_node_cmp(NODE(6, 1, 2, 3), NODE(6, 1, 2, 3)), 0);
	CHECK_STR(tm_clock_origin_name(TM_CLOCK_ORIGIN_REALTIME), "realtime_rendezvous");
	CHECK_STR(tm_clock_stat_names[TM_CLOCK_STAT_NO_PATH], "clock_sync_failure_no_path");
}

/* ---- §4.2 tie-breaks: S42, S43, S49 ------------------------------------------ */

static void test_s42_smaller_hash_wins(void)
{
	fresh();
	tm_clock_tracker *t = proto_tracker(0, 0, 1);
	SNAP(t, R(BT, 1000), R(MONO, 0));
	SNAP(t, R(BT, 5000), R(MONO, 0), R(MONO_COARSE, 0));
	CHECK_INT(conv(t, MONO, 10), 5010);
}

static void test_s43_order_dependent_hash(void)
{
	fresh();
	tm_clock_tracker *t = proto_tracker(0, 0, 1);
	SNAP(t, R(BT, 1000), R(MONO, 0));
	SNAP(t, R(MONO, 0), R(BT, 5000));
	CHECK_INT(conv(t, MONO, 10), 1010);
}

static void test_s49_hash_tie_break_swapped(void)
{
	for (int swap = 0; swap < 2; swap++) {
		fresh();
		tm_clock_tracker *t = proto_tracker(0, 0, 1);
		SNAP(t, R(BT, 1000), R(MONO, 0), R(swap ? 128 : 129, 0));
		SNAP(t, R(BT, 5000), R(MONO, 0), R(swap ? 129 : 128, 0));
		CHECK_INT(conv(t, MONO, 10), swap ? 1010 : 5010);
	}
}

/* ---- §4.3, §4.6: S46, S47 -------------------------------------------------- */

static void test_s46_nearest_neighbour(void)
{
	fresh();
	tm_clock_tracker *t = proto_tracker(0, 0, 1);
	SNAP(t, R(MONO, 1000), R(BT, 2000));
	SNAP(t, R(MONO, 1100), R(BT, 2100));
	SNAP(t, R(MONO, 1900), R(BT, 2900));
	SNAP(t, R(MONO, 2000), R(BT, 3500));
	CHECK_INT(conv(t, MONO, 900), 1900);
	CHECK_INT(conv(t, MONO, 1104), 2104);
	CHECK_INT(conv(t, MONO, 1999), 2999);
	CHECK_INT(conv(t, MONO, 2000), 3500);
	CHECK_INT(conv(t, MONO, 9000), 10500);
}

/* Several equal values: the last of them is used. */
static void test_nearest_equal_values(void)
{
	fresh();
	RAW(TM_CLOCK_ORIGIN_SNAPSHOT, {N(MONO), 100, 1, 0}, {N(BT), 1000, 1, 0});
	RAW(TM_CLOCK_ORIGIN_SNAPSHOT, {N(MONO), 100, 1, 0}, {N(BT), 5000, 1, 0});
	CHECK_INT(node_conv(N(MONO), 100, N(BT)), 5000);
	CHECK_INT(node_conv(N(MONO), 99, N(BT)), 999);
}

static void test_s47_converted_at_tokenization(void)
{
	fresh();
	tm_clock_tracker *t = proto_tracker(0, 0, 1);
	SNAP(t, R(MONO, 1000), R(BT, 2000));
	CHECK_INT(conv(t, MONO, 1500), 2500);
	SNAP(t, R(MONO, 1400), R(BT, 5000));
	CHECK_INT(conv(t, MONO, 1500), 5100);
}

/* ---- §4.1: S48 ---------------------------------------------------------------- */

static void test_s48_four_edge_limit(void)
{
	fresh();
	tm_clock_tracker *t = proto_tracker(0, 0, 1);
	SNAP(t, R(BT, 1000), R(128, 0));
	SNAP(t, R(128, 0), R(129, 100));
	SNAP(t, R(129, 100), R(130, 200));
	SNAP(t, R(130, 200), R(131, 300));
	SNAP(t, R(131, 300), R(132, 400));
	CHECK_INT(conv(t, 130, 1300), 2100);
	CHECK_INT(conv(t, 131, 1300), 2000);
	CHECK_INT(packet_first_try(t, 132, 1400), NO_PATH);
	CHECK_INT(tstats(t).n[TM_CLOCK_STAT_NO_PATH], 0); /* set aside, not counted yet */
	CHECK_INT(conv(t, 132, 1400), NO_PATH);           /* the retry at end of file */
	CHECK_INT(tstats(t).n[TM_CLOCK_STAT_NO_PATH], 1);
}

/* ---- §3.5: S50 --------------------------------------------------------------- */

static void test_s50_realtime_jumps_back(void)
{
	fresh();
	tm_clock_tracker *t = proto_tracker(0, 0, 1);
	SNAP(t, R(BT, 1000), R(RT, 5000));
	CHECK_INT(conv(t, RT, 6000), 2000);
	SNAP(t, R(BT, 2000), R(RT, 4000));
	CHECK_INT(packet_first_try(t, RT, 6000), NO_PATH);
	CHECK_INT(conv(t, RT, 6000), NO_PATH);
	CHECK_INT(conv(t, BT, 3000), 3000);
	CHECK_INT(tstats(t).n[TM_CLOCK_STAT_NO_PATH], 1);
	CHECK_INT(totals().n[TM_CLOCK_STAT_INVALID_SNAPSHOTS], 0);
	/* Still a target: BOOTTIME -> REALTIME works, and the node says why. */
	CHECK_INT(node_conv(N(BT), 2500, N(RT)), 4500);
	const tm_clock_graph *g = tm_clocks_view(c);
	int seen = 0;
	for (size_t i = 0; i < tm_clock_graph_node_count(g); i++) {
		tm_clock_node_info ni;
		tm_clock_graph_node_info(g, i, &ni);
		if (!tm_clock_node_cmp(ni.node, N(RT))) {
			CHECK(ni.non_monotonic);
			seen = 1;
		}
	}
	CHECK(seen);
	tm_clock_edge_iter it = {0};
	tm_clock_edge e;
	while (tm_clock_graph_next_edge(g, &it, &e))
		CHECK(tm_clock_node_cmp(e.from, N(RT)) != 0);
	CHECK(tm_clock_graph_has_edge(g, N(BT), N(RT), tm_clock_snapshot_hash((tm_clock_node[]){N(BT), N(RT)}, 2)));
}

/* §3.5: equal values are allowed. */
static void test_equal_values_are_monotonic(void)
{
	fresh();
	RAW(TM_CLOCK_ORIGIN_SNAPSHOT, {N(BT), 1000, 1, 0}, {N(RT), 5000, 1, 0});
	RAW(TM_CLOCK_ORIGIN_SNAPSHOT, {N(BT), 1000, 1, 0}, {N(RT), 5000, 1, 0});
	CHECK_INT(node_conv(N(RT), 5500, N(BT)), 1500);
}

/* ---- §3.3: S51, S53, the messages --------------------------------------------- */

static void test_s51_partial_rejection(void)
{
	fresh();
	tm_clock_tracker *t = proto_tracker(0, 0, 1);
	CHECK_INT(SNAP(t, R(MONO, 100), R(BT, 2000)), 0);
	CHECK_INT(SNAP(t, R(MONO, 200), R(BT, 1000)), -1);
	CHECK_STR(err.msg, "Clock sync error: the trace clock (id=6) is not monotonic at snapshot 1. 1000 not >= 2000.");
	CHECK_INT(totals().n[TM_CLOCK_STAT_INVALID_SNAPSHOTS], 1);
	CHECK_INT(conv(t, MONO, 50), 1950);
	CHECK_INT(conv(t, MONO, 150), 2050);
	CHECK_INT(conv(t, MONO, 300), 300); /* the orphan entry 200: the hop is skipped */
	/* The rejected snapshot is recorded, not accepted, with its readings. */
	tm_clock_snapshot_info si;
	CHECK(tm_clock_graph_snapshot(tm_clocks_view(c), 1, &si));
	CHECK(!si.accepted);
	CHECK_INT(si.n_readings, 2);
}

static void test_s53_global_clock_incremental(void)
{
	fresh();
	tm_clock_tracker *t = proto_tracker(0, 0, 1);
	CHECK_INT(SNAP(t, R(BT, 1000), RU(128, 10, 1000, 1)), -1);
	CHECK_STR(err.msg, "Clock sync error: the global clock with id=128 cannot use incremental encoding; this is "
			   "only supported for sequence-scoped clocks.");
	CHECK_INT(totals().n[TM_CLOCK_STAT_INVALID_SNAPSHOTS], 1);
	/* Registered by the rejected snapshot: no_path, not unknown_source. */
	CHECK(tm_clock_graph_knows(tm_clocks_view(c), N(128)));
	CHECK_INT(conv(t, 128, 12), NO_PATH);
	CHECK_INT(conv(t, 128, 13), NO_PATH);
	CHECK_INT(tstats(t).n[TM_CLOCK_STAT_NO_PATH], 2);
	CHECK_INT(tstats(t).n[TM_CLOCK_STAT_UNKNOWN_SOURCE], 0);
}

static void test_rejection_messages(void)
{
	fresh();
	/* Unit differs from the first sighting. */
	CHECK(RAW(TM_CLOCK_ORIGIN_SNAPSHOT, {N(BT), 1, 1, 0}, {N(128), 10, 1000, 0}) >= 0);
	CHECK_INT(RAW(TM_CLOCK_ORIGIN_SNAPSHOT, {N(BT), 2, 1, 0}, {N(128), 11, 0, 0}), -1);
	CHECK_STR(err.msg, "Clock sync error: the clock domain with id=128 (unit=1, incremental=0), was previously "
			   "registered with different properties (unit=1000, incremental=0).");
	/* Incremental flag differs (a sequence clock on machine 1). */
	CHECK(RAW(TM_CLOCK_ORIGIN_SNAPSHOT, {NODE(64, 1, 1, 1), 5, 1, 1}, {NM(BT, 1), 1, 1, 0}) >= 0);
	CHECK_INT(RAW(TM_CLOCK_ORIGIN_SNAPSHOT, {NODE(64, 1, 1, 1), 6, 1, 0}), -1);
	CHECK_STR(err.msg, "Clock sync error: the clock domain with id=64(seq=1,tf=1,m=1) (unit=1, incremental=0), was "
			   "previously registered with different properties (unit=1, incremental=1).");
	/* Duplicate node; S14's text with a PIN of a file to itself. */
	uint64_t next = tm_clock_graph_snapshot_count(tm_clocks_view(c));
	CHECK_INT(RAW(TM_CLOCK_ORIGIN_MANIFEST, {NODE(TF, 0, 2, 0), 0, 1, 0}, {NODE(TF, 0, 2, 0), 0, 1, 0}), -1);
	CHECK_STR(err.msg, next == 4 ? "Clock sync error: duplicate clock domain with id=11(seq=0,tf=2,m=0) at snapshot 4."
				     : "wrong snapshot id");
	/* Trace clock with a unit. */
	tm_clocks_claim(c, N(129), 0);
	CHECK_INT(RAW(TM_CLOCK_ORIGIN_SNAPSHOT, {N(BT), 3, 1, 0}, {N(129), 1, 1000, 0}), -1);
	CHECK_STR(err.msg, "Clock sync error: the trace clock (id=129) must always use nanoseconds as unit multiplier.");
	/* Every insertion consumed an id; every rejection was counted. */
	CHECK_INT(tm_clock_graph_snapshot_count(tm_clocks_view(c)), 6);
	CHECK_INT(tm_clock_graph_rejected(tm_clocks_view(c)), 4);
	CHECK_INT(totals().n[TM_CLOCK_STAT_INVALID_SNAPSHOTS], 4);
}

/* S15: two files on one machine RELATE BOOTTIME to BOOTTIME. */
static void test_s15_duplicate_at_snapshot_0(void)
{
	fresh();
	CHECK_INT(manifest_edge(N(BT), N(BT), 0), -1);
	CHECK_STR(err.msg, "Clock sync error: duplicate clock domain with id=6 at snapshot 0.");
}

static void test_snapshot_size_limit(void)
{
	fresh();
	tm_clock_reading r[TM_CLOCK_SNAPSHOT_MAX + 1];
	for (int i = 0; i <= TM_CLOCK_SNAPSHOT_MAX; i++)
		r[i] = (tm_clock_reading){N(128 + (uint32_t)i), (uint64_t)i, 1, 0};
	CHECK_INT(tm_clocks_add_snapshot(c, r, TM_CLOCK_SNAPSHOT_MAX + 1, TM_CLOCK_ORIGIN_SNAPSHOT, 0, 0, &err), -1);
	CHECK_STR(err.msg, "Clock sync error: snapshot 0 lists 129 clocks; at most 128 are supported.");
	CHECK_INT(totals().n[TM_CLOCK_STAT_INVALID_SNAPSHOTS], 1);
	CHECK(!tm_clock_graph_knows(tm_clocks_view(c), N(128)));
	/* At the limit it is accepted, and a search over the complete graph of
	 * 128 nodes (degree 127: 127^4 paths for a path-enumerating search)
	 * stays cheap. */
	CHECK_INT(tm_clocks_add_snapshot(c, r, TM_CLOCK_SNAPSHOT_MAX, TM_CLOCK_ORIGIN_SNAPSHOT, 0, 0, &err), 1);
	CHECK(RAW(TM_CLOCK_ORIGIN_SNAPSHOT, {N(BT), 0, 1, 0}, {N(MONO), 0, 1, 0}) >= 0);
	CHECK_INT(node_conv(N(128), 5, N(BT)), NO_PATH);
	CHECK_INT(node_conv(N(200), 5, N(255)), 5 - 72 + 127);
}

/* ---- §4.4: S52 and the unit examples ------------------------------------------ */

static void test_incremental_seq_clock_66(void)
{
	fresh();
	tm_clock_node seq66 = NODE(66, 1, 1, 0);
	RAW(TM_CLOCK_ORIGIN_SNAPSHOT, {N(MONO), 10000, 1, 0}, {seq66, 10, 1000, 1});
	int64_t want[] = {11000, 12000, 13000, 15000}, delta[] = {1, 1, 1, 2};
	for (int i = 0; i < 4; i++)
		CHECK_INT(node_conv(seq66, delta[i], N(MONO)), want[i]);
}

static void test_s52_chromium_sequence_clock(void)
{
	fresh();
	tm_clock_tracker *t = proto_tracker(1, 0, 1);
	SNAP_SEQ(t, 1, R(BT, 1000000000), RU(64, 500000, 1000, 1));
	int64_t begin = conv_q(t, 64, 1, 5, 0), end = conv_q(t, 64, 1, 3, 0), instant = conv_q(t, 64, 1, 10, 0);
	CHECK_INT(begin, 1000005000);
	CHECK_INT(end - begin, 3000);
	CHECK_INT(instant, 1000018000);
	SNAP_SEQ(t, 1, R(BT, 3000000000), RU(64, 600000, 1000, 1));
	CHECK_INT(conv_q(t, 64, 1, 1, 0), 3000001000);
	/* Scope: clock 64 of sequence 1 is unknown on sequence 2. */
	CHECK_INT(conv_q(t, 64, 2, 1, 0), UNKNOWN_SOURCE);
	CHECK_INT(tstats(t).n[TM_CLOCK_STAT_UNKNOWN_SOURCE], 1);
	/* A failed search does not consume the delta (§4.4). */
	fresh();
	RAW(TM_CLOCK_ORIGIN_SNAPSHOT, {NODE(64, 1, 1, 0), 100, 1, 1}, {N(MONO), 1000, 1, 0});
	CHECK_INT(node_conv(NODE(64, 1, 1, 0), 7, N(BT)), UNKNOWN_TARGET);
	CHECK_INT(node_conv(NODE(64, 1, 1, 0), 5, N(MONO)), 1005);
}

static void test_global_clock_unit_scales(void)
{
	fresh();
	tm_clock_tracker *t = proto_tracker(0, 0, 1);
	SNAP(t, R(BT, 1000), RU(128, 10, 1000, 0));
	CHECK_INT(conv(t, 128, 12), 3000);
	CHECK_INT(conv(t, 128, 12), 3000); /* not incremental: no accumulation */
}

/* ---- §9: manifest edges -------------------------------------------------------- */

static void test_manifest_edge_offsets(void)
{
	int64_t offsets[] = {500, -500, 0};
	for (int i = 0; i < 3; i++) {
		fresh();
		tm_clock_node src = NODE(TF, 0, 2, 1), ref = N(BT);
		CHECK_INT(manifest_edge(src, ref, offsets[i]), 0);
		tm_clock_snapshot_info si;
		CHECK(tm_clock_graph_snapshot(tm_clocks_view(c), 0, &si));
		CHECK_INT(si.readings[0].ts, offsets[i] < 0 ? 500 : 0);
		CHECK_INT(si.readings[1].ts, offsets[i] > 0 ? 500 : 0);
		for (int64_t v = 0; v <= 2000000; v += 1000000) {
			CHECK_INT(node_conv(src, v, ref), v + offsets[i]);
			CHECK_INT(node_conv(ref, v, src), v - offsets[i]);
		}
	}
}

/* §4.2 bullet 3 and S38: a RELATE of systrace MONOTONIC to the spine's
 * BOOTTIME (+500) beats the spine's own snapshot by hash; S37: a PIN of the
 * same systrace has no effect. */
static void test_relate_competes_by_hash(void)
{
	for (int pin = 0; pin < 2; pin++) {
		fresh();
		if (pin)
			manifest_edge(NODE(TF, 0, 1, 0), N(BT), 500);
		else
			manifest_edge(N(MONO), N(BT), 500);
		tm_clock_tracker *spine = proto_tracker(2, 0, 1);
		SNAP(spine, R(BT, 1000000000), R(RT, 1700000001000000000), R(MONO, 500000000));
		CHECK_INT(conv(spine, 0, 1100000000), 1100000000);
		tm_clock_tracker *sys = text_tracker(1, 0, 0, MONO);
		CHECK_INT(conv(sys, 0, 1000000000), pin ? 1500000000 : 1000000500);
	}
	CHECK_INT(tm_clock_snapshot_hash((tm_clock_node[]){N(MONO), N(BT)}, 2), 0x88052b94);
	/* S38 on another machine: the RELATE names the systrace's machine. */
	fresh();
	manifest_edge(NM(MONO, 1), N(BT), 500);
	tm_clock_tracker *spine = proto_tracker(2, 0, 1);
	SNAP(spine, R(BT, 1000000000), R(RT, 1700000001000000000), R(MONO, 500000000));
	tm_clock_tracker *sys = text_tracker(1, 1, 1, MONO);
	CHECK_INT(conv(sys, 0, 1000000000), 1000000500);
}

/* ---- §11 worked examples -------------------------------------------------------- */

/* E1 / scenario 12: systrace on the spine's machine shares its snapshot. */
static void test_e1_systrace_via_proto(void)
{
	fresh();
	tm_clock_tracker *spine = proto_tracker(2, 0, 1); /* processed first */
	SNAP(spine, R(BT, 1000000000), R(RT, 1700000001000000000), R(MONO, 500000000));
	CHECK(trace_time_is(N(BT)));
	tm_clock_tracker *sys = text_tracker(1, 0, 0, MONO);
	CHECK(trace_time_is(N(BT))); /* the systrace claim was refused */
	int64_t b = conv(sys, 0, 1000000000), e = conv(sys, 0, 1500000000);
	CHECK_INT(b, 1500000000);
	CHECK_INT(e, 2000000000);
	CHECK_INT(e - b, 500000000);
	uint32_t id = 0;
	CHECK(tm_clocks_trace_time_clock_id(c, &id));
	CHECK_INT(id, BT);
}

/* E2 / scenarios 26, 27: the REALTIME rendezvous. */
static void test_e2_realtime_rendezvous(void)
{
	fresh();
	tm_clock_tracker *a = proto_tracker(1, 0, 1), *b = proto_tracker(2, 1, 1), *w = proto_tracker(3, 2, 1);
	SNAP(a, R(BT, G), R(RT, 1700000001 * G));
	CHECK_INT(conv(a, 0, 1100000000), 1100000000);
	SNAP(b, R(BT, G), R(RT, 1700000002 * G));
	CHECK_INT(conv(b, 0, 1100000000), 2100000000);
	SNAP(w, R(BT, G), R(RT, 1700000003 * G));
	CHECK_INT(conv(w, 0, 1100000000), 3100000000);
	CHECK(tm_clocks_has_path(c, NM(RT, 1), NM(RT, 0)));
	tm_clock_snapshot_info si;
	CHECK(tm_clock_graph_snapshot(tm_clocks_view(c), 2, &si));
	CHECK_INT(si.prov.origin, TM_CLOCK_ORIGIN_REALTIME);
	CHECK_INT(si.prov.file_id, 2);
	CHECK_INT(si.prov.machine_row, 1);
	CHECK(!tm_clock_node_cmp(si.readings[0].node, NM(RT, 1)));
	CHECK(!tm_clock_node_cmp(si.readings[1].node, NM(RT, 0)));
	tm_clock_stats s = totals();
	for (int k = 0; k < TM_CLOCK_STAT_COUNT; k++)
		CHECK_INT(s.n[k], 0);
}

/* Scenario 28: REALTIME beats the BOOTTIME overlay. */
static void test_28_realtime_beats_boottime(void)
{
	fresh();
	tm_clock_tracker *a = proto_tracker(1, 0, 1), *b = proto_tracker(2, 1, 1);
	SNAP(a, R(BT, G), R(RT, 1700000001 * G));
	CHECK_INT(conv(a, 0, 1100000000), 1100000000);
	SNAP(b, R(BT, 5 * G), R(RT, 1700000001 * G));
	CHECK_INT(conv(b, 0, 5100000000), 1100000000);
}

/* Scenarios 29, 30, 38: the same-domain overlay. */
static void test_29_30_38_same_domain_overlay(void)
{
	for (int k = 0; k < 3; k++) {
		fresh();
		tm_clock_tracker *a = proto_tracker(1, 0, 1), *b = proto_tracker(2, 1, 1);
		if (k == 0)
			SNAP(a, R(BT, G), R(RT, 1700000001 * G));
		else
			SNAP(a, R(BT, G));
		CHECK_INT(conv(a, 0, 1100000000), 1100000000);
		if (k == 1)
			SNAP(b, R(BT, G), R(RT, 1700000002 * G));
		else
			SNAP(b, R(BT, G));
		int64_t at = k == 1 ? 1100000000 : 3000000000;
		CHECK_INT(conv(b, 0, at), at);
		tm_clock_snapshot_info si;
		CHECK(tm_clock_graph_snapshot(tm_clocks_view(c), 2, &si));
		CHECK_INT(si.prov.origin, TM_CLOCK_ORIGIN_ASSUMED);
		CHECK_INT(totals().n[TM_CLOCK_STAT_UNRELATABLE], 0);
	}
}

/* E3 / scenario 36: trace time on the server, RELATE server = phone + 500. */
static void test_e3_trace_time_file(void)
{
	fresh();
	manifest_edge(NM(BT, 1), NM(BT, 0), 500);
	CHECK(tm_clocks_claim(c, NM(BT, 1), 0));
	tm_clock_tracker *phone = proto_tracker(1, 0, 1), *server = proto_tracker(2, 1, 1);
	SNAP(phone, R(BT, G));
	CHECK_INT(conv(phone, 0, 1100000000), 1099999500);
	SNAP(server, R(BT, G));
	CHECK_INT(conv(server, 0, 1100000000), 1100000000);
	uint32_t owner = 99;
	CHECK(tm_clocks_owner(c, &owner));
	CHECK_INT(owner, 0);
	/* Scenario 33: trace time on the phone instead. */
	fresh();
	manifest_edge(NM(BT, 1), NM(BT, 0), 500);
	phone = proto_tracker(1, 0, 1);
	server = proto_tracker(2, 1, 1);
	SNAP(phone, R(BT, G));
	CHECK_INT(conv(phone, 0, 1100000000), 1100000000);
	SNAP(server, R(BT, G));
	CHECK_INT(conv(server, 0, 1100000000), 1100000500);
}

/* E4 / scenario 48: a PIN of a clockless JSON onto another machine. */
static void test_e4_pin_cross_machine(void)
{
	fresh();
	manifest_edge(NODE(TF, 0, 2, 1), NM(BT, 0), 500); /* app.json is file 2 on row 1 */
	tm_clock_tracker *phone = proto_tracker(1, 0, 1);
	SNAP(phone, R(BT, G));
	CHECK_INT(conv(phone, 0, 1100000000), 1100000000);
	tm_clock_tracker *app = text_tracker(2, 1, 1, TM_CLOCK_THIS_FILE);
	CHECK(trace_time_is(NM(BT, 0)));
	CHECK_INT(conv(app, 0, 2000000), 2000500);
}

/* E6 / scenarios 31, 32: unrelatable domains are dropped. */
static void test_e6_unrelatable_domains(void)
{
	fresh();
	CHECK(tm_clocks_claim(c, NM(RT, 0), 0));
	tm_clock_tracker *a = proto_tracker(1, 0, 1), *b = proto_tracker(2, 1, 1);
	SNAP(a, R(BT, G), R(RT, 1700000001500000000));
	CHECK_INT(conv(a, 0, 1100000000), 1700000001600000000);
	SNAP(b, R(BT, G));
	CHECK_INT(packet_first_try(b, 0, 1100000000), NO_PATH); /* begin, set aside */
	CHECK_INT(packet_first_try(b, 0, 1200000000), NO_PATH); /* end */
	CHECK_INT(conv(b, 0, 1100000000), NO_PATH);             /* retried at end of file */
	CHECK_INT(conv(b, 0, 1200000000), NO_PATH);
	tm_clock_stats s = tstats(b);
	CHECK_INT(s.n[TM_CLOCK_STAT_UNRELATABLE], 1);
	CHECK_INT(s.n[TM_CLOCK_STAT_NO_PATH], 2);
	CHECK_INT(totals().n[TM_CLOCK_STAT_UNRELATABLE], 1);
	CHECK_INT(tstats(a).n[TM_CLOCK_STAT_UNRELATABLE], 0);
	uint32_t src = 0, dst = 0;
	CHECK(tm_tracker_unrelatable(b, &src, &dst));
	CHECK_INT(src, BT);
	CHECK_INT(dst, RT);
	CHECK(!tm_tracker_unrelatable(a, NULL, NULL));
	CHECK_INT(tm_tracker_conversions(b), 4);
}

/* E7 / scenario 3: manifest trace time REALTIME on a single proto. */
static void test_e7_realtime_trace_time(void)
{
	fresh();
	CHECK(tm_clocks_claim(c, NM(RT, 0), 1));
	tm_clock_tracker *spine = proto_tracker(2, 0, 1);
	SNAP(spine, R(BT, 1000000000), R(RT, 1700000001000000000), R(MONO, 500000000));
	CHECK_INT(conv(spine, 0, 1100000000), 1700000001100000000);
	uint32_t id = 0;
	CHECK(tm_clocks_trace_time_clock_id(c, &id));
	CHECK_INT(id, RT);
}

/* ---- §5: claims ------------------------------------------------------------------ */

static void test_initial_trace_time(void)
{
	fresh();
	CHECK(trace_time_is(NODE(TF, 0, 0, 0)));
	CHECK(!tm_clocks_owner(c, NULL));
	CHECK(!tm_clocks_trace_time_clock_id(c, NULL));
	/* A standalone JSON (file 0) runs on its own private clock (S31). */
	tm_clock_tracker *j = text_tracker(0, 0, 1, TM_CLOCK_THIS_FILE);
	CHECK(trace_time_is(NODE(TF, 0, 0, 0)));
	uint32_t id = 0;
	CHECK(tm_clocks_trace_time_clock_id(c, &id));
	CHECK_INT(id, TF);
	CHECK_INT(conv(j, 0, 2000000), 2000000);
	/* S32: a standalone systrace claims MONOTONIC. */
	fresh();
	tm_clock_tracker *s = text_tracker(0, 0, 1, MONO);
	CHECK(tm_clocks_trace_time_clock_id(c, &id));
	CHECK_INT(id, MONO);
	CHECK_INT(conv(s, 0, 1000000000), 1000000000);
}

static void test_claim_ownership(void)
{
	fresh();
	CHECK(tm_clocks_claim(c, N(BT), 3));
	CHECK(!tm_clocks_claim(c, N(MONO), 4));
	CHECK(trace_time_is(N(BT)));
	CHECK(tm_clocks_claim(c, NM(RT, 1), 3)); /* the same file may re-claim */
	CHECK(trace_time_is(NM(RT, 1)));
	uint32_t id = 0, owner = 0;
	CHECK(tm_clocks_trace_time_clock_id(c, &id));
	CHECK(tm_clocks_owner(c, &owner));
	CHECK_INT(id, RT);
	CHECK_INT(owner, 3);
	/* A reader's claim names the canonical node of its machine, even from a
	 * non-primary tracker on its own tag. */
	fresh();
	tm_clock_tracker *t = proto_tracker(5, 2, 0);
	SNAP(t, R(MONO, 1));
	CHECK_INT(tm_tracker_file_tag(t), 5);
	CHECK(tm_tracker_claim(t, BT));
	CHECK(trace_time_is(NM(BT, 2)));
	CHECK(tm_tracker_claim(t, TM_CLOCK_THIS_FILE));
	CHECK(trace_time_is(NODE(TF, 0, 5, 2)));
}

/* §5.2 verified example and S55: an early packet blocks the claim. */
static void test_s55_early_packet_blocks_claim(void)
{
	fresh();
	tm_clock_tracker *p = proto_tracker(1, 0, 1);
	CHECK_INT(packet_first_try(p, MONO, 600000000), UNKNOWN_SOURCE); /* bridge ran first */
	CHECK(tm_clocks_has_path(c, N(BT), NODE(TF, 0, 0, 0)));
	SNAP(p, R(BT, 1000000000), R(MONO, 500000000));
	CHECK(!tm_clocks_owner(c, NULL));
	CHECK(!tm_clocks_trace_time_clock_id(c, NULL));
	CHECK(trace_time_is(NODE(TF, 0, 0, 0)));
	uint32_t d = 0;
	CHECK(tm_tracker_default_clock(p, &d)); /* set even though the claim was refused */
	CHECK_INT(d, BT);
	CHECK_INT(conv(p, MONO, 600000000), 1100000000); /* the retry at end of file */
	CHECK_INT(conv(p, 0, 1300000000), 1300000000);   /* no clock id: BOOTTIME, zero offset */
	CHECK_INT(tstats(p).n[TM_CLOCK_STAT_UNKNOWN_SOURCE], 0);
	/* A JSON later in the archive can still claim the private trace time. */
	tm_clock_tracker *j = text_tracker(2, 0, 0, TM_CLOCK_THIS_FILE);
	uint32_t id = 0;
	CHECK(tm_clocks_trace_time_clock_id(c, &id));
	CHECK_INT(id, TF);
	CHECK(trace_time_is(NODE(TF, 0, 2, 0)));
	CHECK_INT(conv(j, 0, 2000000), 2000000);
}

/* S29, S30, S33: protos without snapshots. */
static void test_s29_s30_snapshotless_proto(void)
{
	fresh();
	tm_clock_tracker *p = proto_tracker(0, 0, 1);
	CHECK_INT(packet_first_try(p, BT, 1100000000), 1100000000);
	CHECK(!tm_clocks_trace_time_clock_id(c, NULL));
	fresh();
	p = proto_tracker(0, 0, 1);
	CHECK_INT(packet_first_try(p, MONO, 1100000000), UNKNOWN_SOURCE);
	CHECK_INT(packet_first_try(p, MONO, 1200000000), UNKNOWN_SOURCE);
	CHECK_INT(conv(p, MONO, 1100000000), UNKNOWN_SOURCE);
	CHECK_INT(conv(p, MONO, 1200000000), UNKNOWN_SOURCE);
	CHECK_INT(tstats(p).n[TM_CLOCK_STAT_UNKNOWN_SOURCE], 2);
	/* S33: zip{SOLO proto, JSON}: the JSON claims; both keep their values. */
	fresh();
	p = proto_tracker(1, 0, 1);
	CHECK_INT(packet_first_try(p, BT, 1100000000), 1100000000);
	tm_clock_tracker *j = text_tracker(2, 0, 0, TM_CLOCK_THIS_FILE);
	uint32_t id = 0;
	CHECK(tm_clocks_trace_time_clock_id(c, &id));
	CHECK_INT(id, TF);
	CHECK_INT(conv(j, 0, 2000000), 2000000);
}

/* The re-claim trap (S27) and its remote-first variant (S56). */
static void test_s27_reclaim_trap(void)
{
	fresh();
	tm_clock_tracker *host = proto_tracker(1, 0, 1);
	SNAP(host, R(BT, 1000000000), R(RT, 1700000001000000000), R(MONO, 500000000));
	CHECK_INT(packet_first_try(host, 0, 1100000000), 1100000000);
	tm_clock_tracker *m7 = proto_tracker(1, 1, 1);
	tm_tracker_set_default_clock(m7, BT); /* copied from the host reader */
	SNAP(m7, R(BT, 50000000000));
	CHECK(trace_time_is(NM(BT, 1))); /* same owner file, fresh tracker */
	CHECK_INT(packet_first_try(m7, 0, 50100000000), 50100000000);
	CHECK_INT(packet_first_try(host, 0, 1500000000), NO_PATH);
	CHECK_INT(packet_first_try(host, 0, 1600000000), NO_PATH);
	CHECK_INT(conv(host, 0, 1500000000), NO_PATH);
	CHECK_INT(conv(host, 0, 1600000000), NO_PATH);
	CHECK_INT(tstats(host).n[TM_CLOCK_STAT_NO_PATH], 2);
	CHECK_INT(totals().n[TM_CLOCK_STAT_UNRELATABLE], 0);
}

static void test_s56_remote_first(void)
{
	for (int realtime = 0; realtime < 2; realtime++) {
		fresh();
		tm_clock_tracker *host = proto_tracker(1, 0, 1);
		tm_clock_tracker *m7 = proto_tracker(1, 1, 1);
		if (realtime)
			SNAP(m7, R(BT, 50000000000), R(RT, 1700000050000000000));
		else
			SNAP(m7, R(BT, 50000000000));
		CHECK_INT(packet_first_try(m7, 0, 50100000000), 50100000000);
		if (realtime)
			SNAP(host, R(BT, 1000000000), R(RT, 1700000001000000000));
		else
			SNAP(host, R(BT, 1000000000));
		CHECK(trace_time_is(NM(BT, 0))); /* re-claimed: the host made no conversion */
		CHECK_INT(packet_first_try(host, 0, 1100000000), 1100000000);
		CHECK_INT(packet_first_try(m7, 0, 50300000000), NO_PATH);
		CHECK_INT(packet_first_try(m7, 0, 50400000000), NO_PATH);
		CHECK_INT(conv(m7, 0, 50300000000), NO_PATH);
		CHECK_INT(conv(m7, 0, 50400000000), NO_PATH);
		CHECK_INT(tstats(m7).n[TM_CLOCK_STAT_NO_PATH], 2);
	}
}

/* ---- §8: several files on one machine ---------------------------------------------- */

/* S57: a.pb claims MONOTONIC; b.pb (non-primary) is isolated on its tag and
 * reaches trace time through the file-tag identity edge. */
static void test_s57_file_tags(void)
{
	fresh();
	tm_clock_tracker *a = proto_tracker(2, 0, 1);
	SNAP_PRIMARY(a, MONO, R(BT, 1000000000), R(MONO, 500000000));
	CHECK_INT(packet_first_try(a, 0, 600000000), 600000000);
	tm_clock_tracker *b = proto_tracker(1, 0, 0);
	CHECK_INT(tm_tracker_file_tag(b), 0);
	SNAP(b, R(BT, 1000000000), R(MONO, 400000000));
	CHECK_INT(tm_tracker_file_tag(b), 1);
	CHECK(tm_clock_graph_knows(tm_clocks_view(c), NODE(MONO, 0, 1, 0)));
	CHECK_INT(packet_first_try(b, 0, 1100000000), 600000000);
	uint32_t id = 0;
	CHECK(tm_clocks_trace_time_clock_id(c, &id));
	CHECK_INT(id, MONO);
	CHECK_INT(tstats(b).n[TM_CLOCK_STAT_MIXED_SOURCES], 0);
	tm_clock_snapshot_info si;
	CHECK(tm_clock_graph_snapshot(tm_clocks_view(c), 2, &si));
	CHECK_INT(si.prov.origin, TM_CLOCK_ORIGIN_FILE_TAG);
	CHECK(!tm_clock_node_cmp(si.readings[0].node, NODE(BT, 0, 1, 0)));
	CHECK(!tm_clock_node_cmp(si.readings[1].node, N(BT)));
	/* §8.1 example: a non-primary systrace that never snapshots shares the
	 * canonical MONOTONIC of the spine. */
	CHECK_INT(tm_tracker_node(text_tracker(3, 0, 0, MONO), MONO, 0).file_id, 0);
}

static void test_mixed_clock_sources(void)
{
	fresh();
	tm_clock_tracker *a = proto_tracker(1, 0, 1);
	SNAP(a, R(BT, G), R(MONO, G / 2));
	tm_clock_tracker *b = proto_tracker(2, 0, 0);
	CHECK_INT(conv(b, MONO, G), G / 2 * 3);
	CHECK_INT(conv(b, MONO, G), G / 2 * 3);
	SNAP(b, R(BT, G), R(MONO, G / 4));
	CHECK_INT(tstats(b).n[TM_CLOCK_STAT_MIXED_SOURCES], 1);
	CHECK_INT(tm_tracker_mixed_conversions(b), 2);
	CHECK_INT(tm_tracker_file_tag(b), 2);
	/* Its MONOTONIC now is its own node, which has no way to trace time
	 * (the bridge already ran with tag 0). */
	CHECK_INT(conv(b, MONO, G), NO_PATH);
	/* A primary tracker never switches. */
	SNAP(a, R(BT, 2 * G), R(MONO, G));
	CHECK_INT(tm_tracker_file_tag(a), 0);
}

/* §8.2: REALTIME twins for a non-primary tracker off the trace-time machine. */
static void test_realtime_twins(void)
{
	fresh();
	tm_clock_tracker *a = proto_tracker(1, 0, 1);
	SNAP(a, R(BT, G), R(RT, 1700000001 * G));
	tm_clock_tracker *s1 = proto_tracker(2, 1, 1);
	SNAP(s1, R(BT, 7 * G));
	tm_clock_tracker *s2 = proto_tracker(3, 1, 0);
	CHECK(SNAP(s2, R(BT, G), R(RT, 1700000002 * G), R(TM_CLOCK_REALTIME_COARSE, 5)) >= 0);
	tm_clock_snapshot_info si;
	CHECK(tm_clock_graph_snapshot(tm_clocks_view(c), 2, &si));
	CHECK_INT(si.n_readings, 5);
	CHECK(!tm_clock_node_cmp(si.readings[1].node, NODE(RT, 0, 3, 1)));
	CHECK(!tm_clock_node_cmp(si.readings[3].node, NODE(RT, 0, 0, 1)));
	CHECK_INT(si.readings[3].ts, 1700000002 * G);
	CHECK(!tm_clock_node_cmp(si.readings[4].node, NODE(TM_CLOCK_REALTIME_COARSE, 0, 0, 1)));
	/* s2's BOOTTIME -> canonical BOOTTIME of row 1 exists? no: it reaches
	 * trace time by the rendezvous through its twin. */
	CHECK_INT(conv(s2, 0, 1100000000), 2100000000);
	/* No twins on the trace-time machine (S59's c.pb). */
	tm_clock_tracker *p2 = proto_tracker(4, 0, 0);
	SNAP(p2, R(BT, G), R(RT, 1700000009 * G));
	uint64_t last = tm_clock_graph_snapshot_count(tm_clocks_view(c)) - 1;
	CHECK(tm_clock_graph_snapshot(tm_clocks_view(c), last, &si));
	CHECK_INT(si.n_readings, 2);
}

/* S58: the rendezvous is inserted although the full path has 5 edges. */
static void test_s58_five_edge_path(void)
{
	for (int three = 0; three < 2; three++) {
		fresh();
		tm_clock_tracker *a = proto_tracker(1, 0, 1), *b = proto_tracker(2, 1, 1);
		SNAP(a, R(BT, G), R(MONO, G / 2));
		SNAP(a, R(MONO, G / 2), R(RT, 1700000001 * G));
		CHECK_INT(conv(a, 0, 1100000000), 1100000000);
		if (three) {
			SNAP(b, R(BT, G), R(MONO, G / 2), R(RT, 1700000002 * G));
		} else {
			SNAP(b, R(BT, G), R(MONO, G / 2));
			SNAP(b, R(MONO, G / 2), R(RT, 1700000002 * G));
		}
		CHECK_INT(packet_first_try(b, 0, 1100000000), three ? 2100000000 : NO_PATH);
		CHECK(tm_clocks_has_path(c, NM(RT, 1), NM(RT, 0)));
		CHECK_INT(tstats(b).n[TM_CLOCK_STAT_UNRELATABLE], 0);
	}
}

/* S59: c.pb's REALTIME on the trace-time machine is not canonical, so z.pb
 * falls back to the BOOTTIME overlay. */
static void test_s59_non_canonical_realtime(void)
{
	fresh();
	tm_clock_tracker *a = proto_tracker(1, 0, 1);
	SNAP(a, R(BT, G));
	CHECK_INT(conv(a, 0, 1100000000), 1100000000);
	tm_clock_tracker *cc = proto_tracker(2, 0, 0);
	SNAP(cc, R(BT, G), R(RT, 1700000001 * G));
	CHECK_INT(conv(cc, 0, 1100000000), 1100000000);
	tm_clock_tracker *z = proto_tracker(3, 1, 1);
	SNAP(z, R(BT, G), R(RT, 1700000002 * G));
	CHECK_INT(conv(z, 0, 1100000000), 1100000000);
	CHECK(!tm_clock_graph_knows(tm_clocks_view(c), NM(RT, 0)));
}

/* S28: manifest trace time BOOTTIME on row 0 (phone); a.pb (server) is
 * processed first and falls back to the overlay. */
static void test_s28_order_dependence(void)
{
	fresh();
	CHECK(tm_clocks_claim(c, NM(BT, 0), 1));
	tm_clock_tracker *a = proto_tracker(2, 1, 1), *z = proto_tracker(3, 0, 1);
	SNAP(a, R(BT, G), R(RT, 1700000001 * G));
	CHECK_INT(conv(a, 0, 1100000000), 1100000000);
	SNAP(z, R(BT, G), R(RT, 1700000002 * G));
	CHECK_INT(conv(z, 0, 1100000000), 1100000000);
}

/* S35, S36: a clockless-or-not file on a machine without snapshots. */
static void test_s35_s36_other_machine(void)
{
	fresh();
	tm_clock_tracker *spine = proto_tracker(2, 0, 1);
	SNAP(spine, R(BT, 1000000000), R(RT, 1700000001000000000), R(MONO, 500000000));
	tm_clock_tracker *sys = text_tracker(1, 1, 1, MONO);
	CHECK_INT(conv(sys, 0, 1000000000), UNKNOWN_SOURCE);
	CHECK_INT(conv(sys, 0, 1500000000), UNKNOWN_SOURCE);
	tm_clock_stats s = tstats(sys);
	CHECK_INT(s.n[TM_CLOCK_STAT_UNRELATABLE], 1);
	CHECK_INT(s.n[TM_CLOCK_STAT_UNKNOWN_SOURCE], 2);
	tm_clock_tracker *json = text_tracker(3, 2, 1, TM_CLOCK_THIS_FILE);
	CHECK_INT(conv(json, 0, 2000000), 2000000);
	CHECK_INT(tstats(json).n[TM_CLOCK_STAT_UNRELATABLE], 0);
}

/* S11, S12, S13: PIN chains between clockless files. */
static void test_s11_s12_s13_pins(void)
{
	/* a.json file 1, b.json file 2, both on row 0; a owns trace time. */
	int64_t offsets[] = {-3000000, -1000};
	int64_t want[] = {-1000000, 1999000};
	for (int i = 0; i < 2; i++) {
		fresh();
		manifest_edge(NODE(TF, 0, 2, 0), NODE(TF, 0, 1, 0), offsets[i]);
		tm_clock_tracker *a = text_tracker(1, 0, 1, TM_CLOCK_THIS_FILE);
		tm_clock_tracker *b = text_tracker(2, 0, 0, TM_CLOCK_THIS_FILE);
		CHECK_INT(conv(a, 0, 2000000), 2000000);
		CHECK_INT(conv(b, 0, 2000000), want[i]); /* S11: negative, the caller drops it */
	}
	/* S13: b (file 2) processed first owns trace time; z (file 1). */
	fresh();
	manifest_edge(NODE(TF, 0, 2, 0), NODE(TF, 0, 1, 0), 500);
	tm_clock_tracker *b = text_tracker(2, 0, 1, TM_CLOCK_THIS_FILE);
	tm_clock_tracker *z = text_tracker(1, 0, 0, TM_CLOCK_THIS_FILE);
	CHECK_INT(conv(b, 0, 2000000), 2000000);
	CHECK_INT(conv(z, 0, 1000000), 999500);
	uint32_t id = 0;
	CHECK(tm_clocks_trace_time_clock_id(c, &id));
	CHECK_INT(id, TF);
	/* Scenario 49-style chain: a.json PINned to sys BOOTTIME +1000, b.json
	 * PINned to a.json +7. */
	fresh();
	manifest_edge(NODE(TF, 0, 2, 0), N(BT), 1000);
	manifest_edge(NODE(TF, 0, 3, 0), NODE(TF, 0, 2, 0), 7);
	tm_clock_tracker *sys = proto_tracker(1, 0, 1);
	SNAP(sys, R(BT, G));
	tm_clock_tracker *ja = text_tracker(2, 0, 0, TM_CLOCK_THIS_FILE);
	tm_clock_tracker *jb = text_tracker(3, 0, 0, TM_CLOCK_THIS_FILE);
	CHECK_INT(conv(ja, 0, 2000000), 2001000);
	CHECK_INT(conv(jb, 0, 2000000), 2001007);
}

/* Scenarios 47 and 50: RELATE edges to and from an embedded machine. */
static void test_47_50_multi_machine_relate(void)
{
	/* 47: rows phone 0, vm 1, server 2; trace time vm BOOTTIME. */
	fresh();
	manifest_edge(NM(BT, 2), NM(BT, 1), 500);
	CHECK(tm_clocks_claim(c, NM(BT, 1), 0));
	tm_clock_tracker *host = proto_tracker(1, 0, 1);
	SNAP(host, R(BT, 1000000000), R(RT, 1700000001000000000), R(MONO, 500000000));
	CHECK_INT(packet_first_try(host, 0, 1100000000), 1100000000);
	tm_clock_tracker *vm = proto_tracker(1, 1, 1);
	tm_tracker_set_default_clock(vm, BT);
	SNAP(vm, R(BT, 50000000000));
	CHECK_INT(packet_first_try(vm, 0, 50100000000), 50100000000);
	tm_clock_tracker *server = proto_tracker(2, 2, 1);
	SNAP(server, R(BT, 50000000000));
	CHECK_INT(packet_first_try(server, 0, 50100000000), 50100000500);
	/* 50: trace time server BOOTTIME; RELATE vm = server + 500. */
	fresh();
	manifest_edge(NM(BT, 1), NM(BT, 2), 500);
	CHECK(tm_clocks_claim(c, NM(BT, 2), 0));
	host = proto_tracker(1, 0, 1);
	SNAP(host, R(BT, 1000000000), R(RT, 1700000001000000000), R(MONO, 500000000));
	CHECK_INT(packet_first_try(host, 0, 1100000000), 1100000000);
	vm = proto_tracker(1, 1, 1);
	tm_tracker_set_default_clock(vm, BT);
	SNAP(vm, R(BT, 50000000000));
	CHECK_INT(packet_first_try(vm, 0, 50100000000), 50100000500);
	server = proto_tracker(2, 2, 1);
	SNAP(server, R(BT, 50000000000));
	CHECK_INT(packet_first_try(server, 0, 50100000000), 50100000000);
}

/* S62: a RELATE of -2e9: the conversion succeeds with a negative value;
 * dropping it is the caller's (track_event_invalid_timestamp). */
static void test_s62_negative_result(void)
{
	fresh();
	manifest_edge(NM(BT, 1), NM(BT, 0), -2000000000);
	tm_clock_tracker *phone = proto_tracker(1, 0, 1), *server = proto_tracker(2, 1, 1);
	SNAP(phone, R(BT, G));
	SNAP(server, R(BT, G));
	CHECK_INT(conv(server, 0, 1100000000), -900000000);
}

/* ---- remote_clock_sync (machines.md §8) ------------------------------------------- */

#define SR(...) ((const tm_sync_reading[]){__VA_ARGS__})
#define ROUND(cv, hv) {SR({BT, (cv)}), 1, SR({BT, (hv)}), 1}

static void test_remote_sync_example_a(void)
{
	fresh();
	tm_clock_tracker *host = proto_tracker(1, 0, 1);
	SNAP(host, R(BT, G));
	CHECK_INT(packet_first_try(host, BT, 1100000000), 1100000000);
	tm_clock_tracker *vm = proto_tracker(1, 1, 1);
	tm_tracker_set_default_clock(vm, BT);
	tm_remote_sync_round r[] = {ROUND(50 * G, 2 * G), ROUND(50 * G, 2 * G)};
	CHECK_INT(tm_tracker_remote_clock_sync(vm, r, 2), 1);
	uint64_t last = tm_clock_graph_snapshot_count(tm_clocks_view(c)) - 1;
	tm_clock_snapshot_info si;
	CHECK(tm_clock_graph_snapshot(tm_clocks_view(c), last, &si));
	CHECK_INT(si.prov.origin, TM_CLOCK_ORIGIN_REMOTE_OFFSET);
	CHECK(!tm_clock_node_cmp(si.readings[0].node, NM(BT, 0)));
	CHECK_INT(si.readings[0].ts, 2 * G);
	CHECK(!tm_clock_node_cmp(si.readings[1].node, NM(BT, 1)));
	CHECK_INT(si.readings[1].ts, 50 * G);
	CHECK(tm_clock_graph_snapshot(tm_clocks_view(c), 1, &si));
	CHECK_INT(si.prov.origin, TM_CLOCK_ORIGIN_REMOTE_CLIENT);
	CHECK_INT(packet_first_try(vm, BT, 50100000000), 2100000000);
	CHECK_INT(totals().n[TM_CLOCK_STAT_UNRELATABLE], 0);
}

static void test_remote_sync_example_b(void)
{
	fresh();
	tm_clock_tracker *host = proto_tracker(1, 0, 1);
	SNAP(host, R(BT, G));
	tm_clock_tracker *vm = proto_tracker(1, 1, 1);
	tm_remote_sync_round r[] = {
		ROUND(100 * G, 10 * G),
		ROUND(100 * G + 2000, 10 * G + 1000),
		ROUND(140 * G, 50 * G + 7),
		ROUND(140 * G + 10, 50 * G + 12),
	};
	CHECK_INT(tm_tracker_remote_clock_sync(vm, r, 4), 1);
	tm_clock_snapshot_info si;
	CHECK(tm_clock_graph_snapshot(tm_clocks_view(c), tm_clock_graph_snapshot_count(tm_clocks_view(c)) - 1, &si));
	CHECK_INT(si.readings[0].ts, 50000000012);
	CHECK_INT(si.readings[1].ts, 50000000012 + 90000000624);
	CHECK_INT(conv(vm, BT, 140000001000), 50000000376);
}

/* S64: two packets, one series; the nearest neighbour picks the edge. */
static void test_s64_two_packets(void)
{
	fresh();
	tm_clock_tracker *host = proto_tracker(1, 0, 1);
	SNAP(host, R(BT, G));
	tm_clock_tracker *vm = proto_tracker(1, 1, 1);
	tm_remote_sync_round p1[] = {ROUND(50 * G, 2 * G), ROUND(50 * G, 2 * G)};
	tm_remote_sync_round p2[] = {ROUND(52 * G, 3 * G), ROUND(52 * G, 3 * G)};
	CHECK_INT(tm_tracker_remote_clock_sync(vm, p1, 2), 1);
	CHECK_INT(tm_tracker_remote_clock_sync(vm, p2, 2), 1);
	CHECK_INT(conv(vm, BT, 49 * G), 1 * G);
	CHECK_INT(conv(vm, BT, 51 * G), 3 * G);
	CHECK_INT(conv(vm, BT, 52500000000), 3500000000);
}

/* S65: the client BOOTTIME decreases: non-monotonic, no offset, every
 * client event dropped, no unrelatable stat. */
static void test_s65_client_goes_back(void)
{
	fresh();
	tm_clock_tracker *host = proto_tracker(1, 0, 1);
	SNAP(host, R(BT, G));
	tm_clock_tracker *vm = proto_tracker(1, 1, 1);
	tm_remote_sync_round r[] = {ROUND(100 * G, 10 * G), ROUND(99 * G, 10 * G + 1000)};
	CHECK_INT(tm_tracker_remote_clock_sync(vm, r, 2), 0);
	CHECK_INT(packet_first_try(vm, BT, 100 * G), NO_PATH);
	CHECK_INT(conv(vm, BT, 100 * G), NO_PATH);
	tm_clock_stats s = tstats(vm);
	CHECK_INT(s.n[TM_CLOCK_STAT_NO_PATH], 1);
	CHECK_INT(s.n[TM_CLOCK_STAT_UNRELATABLE], 0);
	CHECK_INT(totals().n[TM_CLOCK_STAT_INVALID_SNAPSHOTS], 0);
}

/* A single round (or only skipped pairs) yields no edge: the overlay
 * places the client. Several clocks: one edge each, ascending ids;
 * a clock the host never reports gets none. */
static void test_remote_sync_rounds_and_clocks(void)
{
	fresh();
	tm_clock_tracker *host = proto_tracker(1, 0, 1);
	SNAP(host, R(BT, G));
	tm_clock_tracker *vm = proto_tracker(1, 1, 1);
	tm_remote_sync_round one[] = {ROUND(50 * G, 2 * G)};
	CHECK_INT(tm_tracker_remote_clock_sync(vm, one, 1), 0);
	CHECK_INT(conv(vm, BT, 50100000000), 50100000000);

	fresh();
	host = proto_tracker(1, 0, 1);
	SNAP(host, R(BT, G));
	vm = proto_tracker(1, 1, 1);
	const tm_sync_reading c0[] = {{MONO, 20 * G}, {BT, 50 * G}, {129, 7}};
	const tm_sync_reading h0[] = {{BT, 2 * G}, {MONO, 3 * G}, {MONO, 4 * G}}; /* last wins */
	const tm_sync_reading c1[] = {{BT, 50 * G + 100}, {MONO, 20 * G + 100}, {129, 8}};
	const tm_sync_reading h1[] = {{MONO, 4 * G + 100}, {BT, 2 * G + 100}};
	tm_remote_sync_round r[] = {{c0, 3, h0, 3}, {c1, 3, h1, 2}};
	CHECK_INT(tm_tracker_remote_clock_sync(vm, r, 2), 2);
	uint64_t n = tm_clock_graph_snapshot_count(tm_clocks_view(c));
	tm_clock_snapshot_info a, b;
	CHECK(tm_clock_graph_snapshot(tm_clocks_view(c), n - 2, &a));
	CHECK(tm_clock_graph_snapshot(tm_clocks_view(c), n - 1, &b));
	CHECK_INT(a.readings[0].node.clock_id, MONO); /* 3 before 6 */
	CHECK_INT(a.readings[0].ts, 4 * G + 100);       /* anchor: last non-zero host */
	CHECK_INT(a.readings[1].ts, 4 * G + 100 + 16 * G + 50);
	CHECK_INT(b.readings[0].node.clock_id, BT);
	CHECK_INT(b.readings[1].ts, 2 * G + 100 + 48 * G + 50);
}

/* ---- stats and introspection ---------------------------------------------------------- */

static void test_stats_per_tracker(void)
{
	fresh();
	tm_clock_tracker *a = proto_tracker(1, 0, 1), *b = proto_tracker(2, 1, 1);
	SNAP(a, R(BT, G));
	CHECK_INT(conv(a, 200, 5), UNKNOWN_SOURCE);
	CHECK_INT(conv(a, 200, 5), UNKNOWN_SOURCE);
	CHECK_INT(conv_q(a, 200, 0, 5, 1), UNKNOWN_SOURCE); /* quiet: not counted */
	CHECK_INT(conv(b, 300, 5), UNKNOWN_SOURCE);
	CHECK_INT(SNAP(b, R(MONO, 1), R(MONO, 2)), -1);
	/* Unknown target: converting to a trace time never seen in a snapshot
	 * (only possible between nodes). */
	CHECK_INT(node_conv(N(BT), 1, N(250)), UNKNOWN_TARGET);
	CHECK_INT(tstats(a).n[TM_CLOCK_STAT_UNKNOWN_SOURCE], 2);
	CHECK_INT(tstats(b).n[TM_CLOCK_STAT_UNKNOWN_SOURCE], 1);
	CHECK_INT(tstats(b).n[TM_CLOCK_STAT_INVALID_SNAPSHOTS], 0);
	tm_clock_stats s = totals();
	CHECK_INT(s.n[TM_CLOCK_STAT_UNKNOWN_SOURCE], 3);
	CHECK_INT(s.n[TM_CLOCK_STAT_INVALID_SNAPSHOTS], 1);
	CHECK_INT(tm_clocks_tracker_count(c), 2);
	CHECK(tm_clocks_tracker_at(c, 1) == b);
	CHECK(tm_clocks_find_tracker(c, 2, 1) == b);
	CHECK(tm_clocks_find_tracker(c, 2, 0) == NULL);
	CHECK(tm_clocks_open_tracker(c, 1, 0, 0) == a);
	CHECK(tm_tracker_is_primary(a));
	CHECK_INT(tm_tracker_file(b), 2);
	CHECK_INT(tm_tracker_machine(b), 1);
	/* Unknown target through a tracker: trace time named by a claim but
	 * never seen in a snapshot. */
	fresh();
	tm_clocks_claim(c, NM(RT, 4), 0);
	a = proto_tracker(1, 0, 1);
	SNAP(a, R(BT, G));
	CHECK(tm_clocks_open_tracker(c, 1, 0, 1) == a);
	CHECK_INT(conv(a, BT, 5), UNKNOWN_TARGET); /* the bridge declined: RT[4] stays unknown */
	CHECK_INT(tstats(a).n[TM_CLOCK_STAT_UNKNOWN_TARGET], 1);
	CHECK_INT(tstats(a).n[TM_CLOCK_STAT_UNRELATABLE], 1);
	fresh();
	tm_clocks_claim(c, NM(RT, 4), 0);
	tm_clock_tracker *nb = tm_clocks_open_tracker(c, 1, 0, 1); /* never armed: no bridge */
	SNAP(nb, R(BT, G));
	CHECK_INT(conv(nb, BT, 5), UNKNOWN_TARGET);
	CHECK_INT(tstats(nb).n[TM_CLOCK_STAT_UNKNOWN_TARGET], 1);
	CHECK_INT(tm_tracker_default_to_trace_time(tm_clocks_open_tracker(c, 9, 0, 1), 5, 0, &(int64_t){0}),
		  TM_CONV_UNKNOWN_SOURCE);
}

static void test_clock_override_is_fatal(void)
{
	fresh();
	tm_clock_tracker *t = proto_tracker(1, 0, 1);
	tm_tracker_set_clock_override(t);
	CHECK_INT(SNAP(t, R(BT, G), R(MONO, 1)), TM_CLOCK_SNAPSHOT_FATAL);
	CHECK_STR(err.msg, "perfetto_manifest: clock overrides require the trace to use a single clock");
	CHECK_INT(tm_clock_graph_snapshot_count(tm_clocks_view(c)), 0);
	CHECK_INT(totals().n[TM_CLOCK_STAT_INVALID_SNAPSHOTS], 0);
}

static void test_introspection(void)
{
	fresh();
	tm_clock_tracker *a = proto_tracker(1, 0, 1);
	SNAP(a, R(BT, G), R(MONO, G / 2));
	tm_clock_tracker *s = text_tracker(2, 1, 1, MONO);
	conv(s, 0, 5); /* assumed MONOTONIC[1] -> BOOTTIME[0]? no: 3 != 6, unrelatable */
	const tm_clock_graph *g = tm_clocks_view(c);
	CHECK_INT(tm_clock_graph_node_count(g), 2);
	tm_clock_node_info ni;
	tm_clock_graph_node_info(g, 0, &ni);
	CHECK(!tm_clock_node_cmp(ni.node, N(BT)));
	CHECK(ni.is_trace_time);
	CHECK_INT(ni.unit_ns, 1);
	CHECK_INT(ni.n_values, 1);
	tm_clock_graph_node_info(g, 1, &ni);
	CHECK(!ni.is_trace_time && !ni.non_monotonic && !ni.incremental);
	tm_clock_edge_iter it = {0};
	tm_clock_edge e;
	int n = 0;
	while (tm_clock_graph_next_edge(g, &it, &e))
		n++;
	CHECK_INT(n, 2);
	CHECK_INT(tm_clock_graph_snapshot_count(g), 1);
	tm_clock_snapshot_info si;
	CHECK(tm_clock_graph_snapshot(g, 0, &si));
	CHECK_INT(si.id, 0);
	CHECK_INT(si.prov.file_id, 1);
	CHECK_INT(si.hash, 0x83d7ea3c);
	CHECK(si.accepted);
	CHECK(!tm_clock_graph_snapshot(g, 1, &si));
	CHECK_INT(tstats(s).n[TM_CLOCK_STAT_UNRELATABLE], 1);
}

/* ---- the views ---------------------------------------------------------------------- */

static const char *label(void *ctx, uint32_t row)
{
	const char *const *names = ctx;
	return row < 2 ? names[row] : NULL;
}

static void build_e2(void)
{
	fresh();
	tm_clock_tracker *a = proto_tracker(1, 0, 1), *b = proto_tracker(2, 1, 1);
	SNAP(a, R(BT, G), R(RT, 1700000001 * G));
	conv(a, 0, 1100000000);
	SNAP(b, R(BT, G), R(RT, 1700000002 * G));
	conv(b, 0, 1100000000);
}

static void test_render_csv(void)
{
	build_e2();
	const char *names[] = {"phone", "server"};
	tm_clock_labels l = {(void *)names, label, NULL};
	tm_buf out = {0};
	tm_clocks_render_csv(c, &l, &out);
	CHECK_STR(out.data, "from_clock,to_clock,from_ts,to_ts,origin,file,machine\n"
			    "BOOTTIME@phone,REALTIME@phone,1000000000,1700000001000000000,clock_snapshot,1,phone\n"
			    "BOOTTIME@server,REALTIME@server,1000000000,1700000002000000000,clock_snapshot,2,server\n"
			    "REALTIME@server,REALTIME@phone,0,0,realtime_rendezvous,2,server\n");
	/* Quoting, default labels, scoped nodes. */
	tm_buf_free(&out);
	fresh();
	RAW(TM_CLOCK_ORIGIN_MANIFEST, {NODE(TF, 0, 2, 1), 0, 1, 0}, {NODE(64, 3, 2, 5), 7, 1000, 0});
	const char *odd[] = {"a,\"b\"", "x"};
	l.ctx = (void *)odd;
	tm_clocks_render_csv(c, &l, &out);
	CHECK_STR(out.data, "from_clock,to_clock,from_ts,to_ts,origin,file,machine\n"
			    "TRACE_FILE@x/file=2,SEQ_CLOCK_64@machine 5/file=2/seq=3,0,7000,manifest,0,\"a,\"\"b\"\"\"\n");
	tm_buf_free(&out);
}

static int run_dot(const tm_buf *b)
{
	char path[] = "/tmp/tm_clock_dot_XXXXXX";
	int fd = mkstemp(path);
	if (fd < 0)
		return -1;
	int ok = write(fd, b->data, b->len) == (ssize_t)b->len;
	close(fd);
	char cmd[128];
	snprintf(cmd, sizeof cmd, "dot -Tsvg %s > /dev/null 2>&1", path);
	int rc = ok ? system(cmd) : -1;
	unlink(path);
	return rc;
}

static const char *file_label(void *ctx, uint32_t file_id)
{
	(void)ctx;
	return file_id == 1 ? "a.pftrace" : file_id == 2 ? "dir/b.pftrace" : NULL;
}

static void test_render_dot(void)
{
	/* E2: file 2 on the server reaches trace time (BOOTTIME@phone) through
	 * its snapshot, the REALTIME rendezvous and file 1's snapshot. */
	build_e2();
	const char *names[] = {"phone", "ser\"ver"};
	tm_clock_labels l = {(void *)names, label, file_label};
	tm_buf a = {0}, b = {0};
	tm_clocks_render_dot(c, &l, &a);
	tm_clocks_render_dot(c, &l, &b);
	CHECK_STR(a.data, b.data); /* deterministic */
	CHECK(strstr(a.data, "digraph clocks {"));
	CHECK(strstr(a.data, "subgraph \"cluster_m1\" {\n    label=\"ser\\\"ver\";"));
	CHECK(strstr(a.data, " [label=\"BOOTTIME\\ntrace time\", style=\"rounded,filled,bold\""));
	CHECK(strstr(a.data, " [shape=note, label=\"a.pftrace\\n1 timestamp placed\"];"));
	CHECK(strstr(a.data, " [shape=note, label=\"dir/b.pftrace\\n1 timestamp placed\"];"));
	/* every hop of file 2's path in crimson, file ids never shown */
	CHECK(strstr(a.data, "[dir=none, label=\"realtime_rendezvous\\noffset +0 ns\", color=\"crimson\", "
			     "style=dashed, penwidth=3]"));
	/* drawn from the lower clock id: BOOTTIME - REALTIME */
	CHECK(strstr(a.data, "[dir=none, label=\"clock_snapshot\\noffset -1700000000000000000 ns\", "
			     "color=\"crimson\", style=solid, penwidth=3]"));
	CHECK(strstr(a.data, "[dir=none, label=\"clock_snapshot\\noffset -1700000001000000000 ns\", "
			     "color=\"crimson\", style=solid, penwidth=3]"));
	CHECK(strstr(a.data, "f2 -> n") && strstr(a.data, "f1 -> n"));
	CHECK(!strstr(a.data, "file 1") && !strstr(a.data, "file 2"));
	CHECK(!strstr(a.data, "color=\"red\""));
	tm_buf_free(&a);
	tm_buf_free(&b);

	/* E6 plus a non-monotonic node and sequence clocks: unreachable nodes
	 * dashed red, a file's sequence clocks folded into one node, repeated
	 * snapshots drawn once with their count, a snapshot of three clocks as
	 * a hub, trace time drawn before any snapshot names it, a dropped
	 * conversion. */
	fresh();
	tm_clocks_claim(c, NM(RT, 0), 0);
	tm_clock_tracker *t = proto_tracker(1, 0, 1), *u = proto_tracker(2, 1, 1);
	SNAP(t, R(BT, G), R(MONO, 5));
	SNAP(t, R(BT, 2 * G), R(MONO, 4));
	SNAP_SEQ(t, 3, RU(64, 1, 1000, 1), R(BT, 3 * G));
	SNAP_SEQ(t, 4, RU(64, 1, 1000, 1), R(BT, 3 * G));
	SNAP(t, R(BT, 4 * G), R(RT, 5 * G), R(MONO_COARSE, 6));
	conv_q(t, 64, 3, 1, 0);
	conv_q(t, 64, 4, 1, 0);
	SNAP(u, R(BT, G));
	conv(u, 0, 5);
	tm_clocks_render_dot(c, NULL, &a);
	CHECK(strstr(a.data, "[label=\"REALTIME\\ntrace time\""));
	CHECK(strstr(a.data, "[label=\"BOOTTIME\", style=\"rounded,dashed\", color=\"red\""));
	CHECK(strstr(a.data, "[label=\"SEQ_CLOCK_64\\nfile 1\\n2 sequence clocks\\nunit 1000 ns\\nincremental\"]"));
	CHECK(strstr(a.data, "[label=\"MONOTONIC\\nnon-monotonic\", style=\"rounded,dashed\""));
	CHECK(strstr(a.data, "label=\"clock_snapshot x2\""));
	CHECK(strstr(a.data, "h") && strstr(a.data, "[shape=circle"));
	CHECK(strstr(a.data, " [shape=note, label=\"file 2\\n0 timestamps placed\\n1 dropped\", color=\"red\""));
	CHECK(strstr(a.data, "label=\"dropped: no path\""));
	if (system("command -v dot > /dev/null 2>&1") != 0) {
		tm_buf_free(&a);
		SKIP("graphviz dot not installed");
	}
	CHECK_INT(run_dot(&a), 0);
	build_e2();
	const char *plain[] = {"phone", "server"};
	l.ctx = (void *)plain;
	tm_clocks_render_dot(c, &l, &b);
	CHECK_INT(run_dot(&b), 0);
	tm_buf_free(&a);
	tm_buf_free(&b);
}

/* metadata.json `placement`: a file's sequence clocks with one route are
 * one group; a PIN and a RELATE are told apart; a drop carries its
 * reason. */
static void test_placement(void)
{
	fresh();
	tm_clock_tracker *t = proto_tracker(1, 0, 1);
	SNAP(t, R(BT, G), R(MONO, 5));
	for (uint32_t seq = 1; seq <= 3; seq++) {
		SNAP_SEQ(t, seq, RU(64, 0, 1000, 1), R(BT, 2 * G));
		conv_q(t, 64, seq, 7, 0);
	}
	conv(t, BT, 3 * G);
	conv(t, 128, 1); /* a clock no snapshot named: dropped */
	size_t n;
	tm_placement *p = tm_clocks_placement(c, 1, &n);
	CHECK_INT(n, 3);
	CHECK_INT(p[0].from.clock_id, 64);
	CHECK_INT(p[0].n_sources, 3);
	CHECK_INT(p[0].ok, 3);
	CHECK_INT(p[0].n_hops, 1);
	CHECK_STR(tm_clock_hop_name(&p[0].hops[0]), "clock_snapshot");
	CHECK_INT(p[1].from.clock_id, BT);
	CHECK_INT(p[1].n_hops, 0); /* BOOTTIME is trace time */
	CHECK_INT(p[2].from.clock_id, 128);
	CHECK_INT(p[2].failed, 1);
	CHECK_INT(p[2].n_hops, -1);
	CHECK_INT(p[2].failure, TM_CONV_UNKNOWN_SOURCE);
	const char *names[] = {"phone", "server"};
	tm_clock_labels l = {(void *)names, label, file_label};
	tm_buf b = {0};
	tm_clocks_placement_clock(&p[0], 0, &l, &b);
	tm_buf_puts(&b, " | ");
	tm_clocks_placement_clock(&p[0], 1, &l, &b);
	CHECK_STR(b.data, "SEQ_CLOCK_64@phone (a.pftrace, 3 sequences) | BOOTTIME@phone");
	tm_buf_free(&b);
	free(p);
	CHECK(tm_clocks_placement(c, 9, &n) == NULL && n == 0);

	tm_clock_hop pin = {NODE(TF, 0, 2, 0), NM(BT, 0), 0, TM_CLOCK_ORIGIN_MANIFEST};
	tm_clock_hop relate = {NM(MONO, 1), NM(BT, 0), 0, TM_CLOCK_ORIGIN_MANIFEST};
	CHECK_STR(tm_clock_hop_name(&pin), "manifest_pin");
	CHECK_STR(tm_clock_hop_name(&relate), "manifest_relate");
}

/* ---- cost ---------------------------------------------------------------------------- */

/* 1e6 conversions over ~10 snapshots: the path cache answers all but the
 * first search per (src, dst). */
static void test_conversion_stress_uses_cache(void)
{
	fresh();
	tm_clock_tracker *t = proto_tracker(1, 0, 1);
	SNAP(t, R(BT, G), R(MONO, G / 2), R(RT, 1700000001 * G));
	for (int i = 1; i <= 6; i++)
		SNAP(t, R(BT, G + i * G), R(MONO, G / 2 + i * G));
	SNAP(t, R(MONO, 0), R(128, 0));
	SNAP(t, R(128, 0), R(129, 100));
	const tm_clock_graph *g = tm_clocks_view(c);
	uint64_t before = tm_clock_graph_searches(g);
	int failed = 0;
	for (int i = 0; i < 1000000; i++) {
		uint32_t clock = i % 3 == 0 ? MONO : i % 3 == 1 ? 129 : RT;
		int64_t v = conv(t, clock, 1000000 + i);
		failed += v >= NO_PATH && v <= UNKNOWN_SOURCE;
	}
	CHECK_INT(failed, 0);
	CHECK(tm_clock_graph_searches(g) - before <= 3);
	CHECK_INT(conv(t, MONO, G / 2 + 3 * G + 5), G + 3 * G + 5);
	CHECK_INT(tm_tracker_conversions(t), 1000001);
	/* A new edge invalidates the cache: the next conversion searches again. */
	before = tm_clock_graph_searches(g);
	SNAP(t, R(129, 100), R(130, 0));
	conv(t, MONO, 5);
	CHECK_INT(tm_clock_graph_searches(g) - before, 1);
}

/* §4.3 done literally: the last reading of `a` <= v, else the first. */
static int64_t literal_hop(const int64_t *a, const int64_t *b, size_t n, int64_t v)
{
	size_t i = 0;
	for (size_t k = 0; k < n; k++)
		if (a[k] <= v)
			i = k;
	return (int64_t)((uint64_t)v - (uint64_t)a[i] + (uint64_t)b[i]);
}

/* A value of `a` that literal_hop takes to w, else w. */
static int64_t literal_inverse(const int64_t *a, const int64_t *b, size_t n, int64_t w)
{
	for (size_t k = n; k-- > 0;) {
		int64_t v = (int64_t)((uint64_t)w - (uint64_t)b[k] + (uint64_t)a[k]);
		if (a[k] <= v && (k + 1 == n || a[k + 1] > v))
			return v;
	}
	return w;
}

/* Each hop keeps its last answer while the value stays between the same
 * two readings, and a path its sum while no reading is added: runs of
 * nearby values, jumps, values before the first reading and after the
 * last, values whose sums wrap, and readings added between conversions
 * must all give what the literal search gives, along one hop and along
 * two. */
static void test_conversion_memo_matches_literal(void)
{
	fresh();
	enum { MAXN = 64 };
	int64_t mono[MAXN], bt1[MAXN], bt2[MAXN], rt[MAXN];
	size_t n1 = 0, n2 = 0;
	uint64_t seed = 12345;
	int bad = 0, checked = 0;
	int64_t v = 0, now = 10000;
	for (int round = 0; round < 4000; round++) {
		seed = seed * 6364136223846793005ull + 1442695040888963407ull;
		uint32_t r = (uint32_t)(seed >> 33);
		/* every node's readings increase in the order they are made
		 * (§3.5), across both hashes */
		if (round % 64 == 0 && n1 < MAXN) { /* MONO <-> BT */
			now += 3000 + r % 500;
			mono[n1] = now - (int64_t)(r % 2000);
			bt1[n1] = now;
			RAW(TM_CLOCK_ORIGIN_SNAPSHOT, {N(MONO), (uint64_t)mono[n1], 1, 0}, {N(BT), (uint64_t)bt1[n1], 1, 0});
			n1++;
		}
		if (round % 96 == 0 && n2 < MAXN) { /* BT <-> RT */
			now += 3000 + r % 500;
			bt2[n2] = now;
			rt[n2] = now + 1000000 + (int64_t)(r % 300);
			RAW(TM_CLOCK_ORIGIN_SNAPSHOT, {N(BT), (uint64_t)bt2[n2], 1, 0}, {N(RT), (uint64_t)rt[n2], 1, 0});
			n2++;
		}
		/* mostly small steps, sometimes a jump anywhere (also below the
		 * first reading) */
		v = r % 8 ? (int64_t)((uint64_t)v + r % 301 - 100) : (int64_t)(r % 500000) - 2000;
		/* now and then at the ends of int64, where a hop's sum wraps */
		if (r % 89 == 0)
			v = r % 2 ? INT64_MAX - (int64_t)(r % 3000) : INT64_MIN + (int64_t)(r % 3000);
		/* a gap's ends: a reading of the first hop, then a value the
		 * first hop takes to a reading of the second, each from just
		 * below it */
		if (r % 13 == 0 && n1 && n2) {
			int64_t ends[2] = {mono[r % n1], literal_inverse(mono, bt1, n1, bt2[r % n2])};
			for (int e = 0; e < 2; e++)
				for (int64_t w = ends[e] - 1; w <= ends[e]; w++) {
					int64_t b1 = literal_hop(mono, bt1, n1, w);
					bad += node_conv(N(MONO), w, N(BT)) != b1;
					bad += node_conv(N(MONO), w, N(RT)) != literal_hop(bt2, rt, n2, b1);
					checked += 2;
				}
		}
		int64_t want1 = literal_hop(mono, bt1, n1, v);
		checked++;
		bad += node_conv(N(MONO), v, N(BT)) != want1;
		if (n2) {
			bad += node_conv(N(MONO), v, N(RT)) != literal_hop(bt2, rt, n2, want1);
			checked++;
		}
	}
	CHECK(checked > 7000);
	CHECK_INT(bad, 0);
}

/* A tracker answers a run of one clock from its last path
 * (tm_clock_graph_convert_again): the answers must be the graph's, also
 * with several sequence clocks interleaved (one incremental, its running
 * value advanced by each answer), snapshots added in between (every memo
 * voided) and values leaving the gap. Two clock sets are fed the same
 * snapshots; one converts through its tracker, the other through the
 * graph alone. */
static void test_tracker_again_matches_graph(void)
{
	tm_clocks *sets[2] = {tm_clocks_new(), tm_clocks_new()};
	tm_clock_tracker *t[2];
	for (int k = 0; k < 2; k++) {
		t[k] = tm_clocks_open_tracker(sets[k], 0, 0, 1);
		tm_tracker_set_sync_clock(t[k], BT);
	}
	uint64_t seed = 777;
	int bad = 0, fast = 0;
	int64_t now = 1000000;
	for (int round = 0; round < 20000; round++) {
		seed = seed * 6364136223846793005ull + 1442695040888963407ull;
		uint32_t r = (uint32_t)(seed >> 33);
		if (round % 500 == 0) {
			now += 100000 + r % 5000;
			const tm_raw_reading snap[] = {
				R(BT, now), R(MONO, now - 7000), RU(64, now / 1000 + 3, 1000, 1), R(65, now + 50), R(66, now - 9)};
			for (int k = 0; k < 2; k++) {
				tm_error e;
				tm_tracker_set_default_clock(t[k], BT);
				tm_tracker_claim(t[k], BT);
				for (uint32_t seq = 1; seq <= 3; seq++)
					CHECK(tm_tracker_insert_snapshot(t[k], snap, 5, seq, TM_CLOCK_ORIGIN_SNAPSHOT, &e) >= 0);
			}
		}
		uint32_t clock = (uint32_t[]){MONO, 64, 65, 66}[r % 4];
		uint32_t seq = 1 + (r >> 4) % 3;
		/* runs of small steps, now and then a jump outside the gap */
		int64_t v = clock == 64 ? (int64_t)(r % 7) : now - 200000 + (int64_t)((r >> 8) % 400000);
		int64_t a = 0, b = 0;
		tm_conv ra = tm_tracker_to_trace_time(t[0], clock, seq, v, 1, &a);
		tm_clock_graph *g = (tm_clock_graph *)tm_clocks_view(sets[1]);
		tm_conv rb = tm_clock_graph_convert(g, tm_tracker_node(t[1], clock, seq), v, *tm_clock_graph_trace_time(g), &b);
		bad += ra != rb || (ra == TM_CONV_OK && a != b);
		fast += ra == TM_CONV_OK;
	}
	tm_clocks_free(sets[0]);
	tm_clocks_free(sets[1]);
	CHECK(fast > 15000);
	CHECK_INT(bad, 0);
}

/* tm_clocks_trim drops the paths found and the searches' scratch: the
 * conversions after it, through the trackers' memos of the paths it threw
 * away too, are the ones an untrimmed twin gives. */
static void test_trim_keeps_answers(void)
{
	tm_clocks *sets[2] = {tm_clocks_new(), tm_clocks_new()};
	tm_clock_tracker *t[2];
	for (int k = 0; k < 2; k++) {
		t[k] = tm_clocks_open_tracker(sets[k], 0, 0, 1);
		tm_tracker_set_sync_clock(t[k], BT);
	}
	tm_clocks_trim(sets[0]); /* nothing found yet */
	uint64_t seed = 4242;
	int bad = 0, ok = 0;
	int64_t now = 1000000;
	for (int round = 0; round < 6000; round++) {
		seed = seed * 6364136223846793005ull + 1442695040888963407ull;
		uint32_t r = (uint32_t)(seed >> 33);
		if (round % 500 == 0) {
			now += 100000 + r % 5000;
			const tm_raw_reading snap[] = {R(BT, now), R(MONO, now - 7000), R(65, now + 50), R(66, now - 9)};
			for (int k = 0; k < 2; k++) {
				tm_error e;
				tm_tracker_set_default_clock(t[k], BT);
				tm_tracker_claim(t[k], BT);
				for (uint32_t seq = 1; seq <= 3; seq++)
					CHECK(tm_tracker_insert_snapshot(t[k], snap, 4, seq, TM_CLOCK_ORIGIN_SNAPSHOT, &e) >= 0);
			}
		}
		if (round % 37 == 36)
			tm_clocks_trim(sets[0]);
		uint32_t clock = (uint32_t[]){MONO, 65, 66}[r % 3];
		uint32_t seq = 1 + (r >> 4) % 3;
		int64_t v = now - 200000 + (int64_t)((r >> 8) % 400000);
		int64_t a = 0, b = 0;
		tm_conv ra = tm_tracker_to_trace_time(t[0], clock, seq, v, 1, &a);
		tm_conv rb = tm_tracker_to_trace_time(t[1], clock, seq, v, 1, &b);
		bad += ra != rb || (ra == TM_CONV_OK && a != b);
		ok += ra == TM_CONV_OK;
	}
	tm_clocks_free(sets[0]);
	tm_clocks_free(sets[1]);
	CHECK(ok > 5000);
	CHECK_INT(bad, 0);
}

/* The path search must give exactly the reference's answer: breadth-first
 * over paths in FIFO order, edges in edge-set order, first edge reaching
 * dst, paths of 4 edges never expanded, no visited set. That search is
 * rebuilt here literally over the edge set the graph exposes, and
 * compared on random graphs (conversion values included). */
typedef struct tpath {
	int len;
	tm_clock_edge e[4];
} tpath;

static uint64_t rng = 88172645463325252ULL;
static uint32_t next_rand(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)rng;
}

static int literal_bfs(const tm_clock_graph *g, tm_clock_node src, tm_clock_node dst, tpath *found)
{
	tm_clock_edge edges[4096];
	int ne = 0;
	tm_clock_edge_iter it = {0};
	while (ne < 4096 && tm_clock_graph_next_edge(g, &it, &edges[ne]))
		ne++;
	size_t cap = 1 << 16, head = 0, tail = 0;
	tpath *q = malloc(cap * sizeof(*q));
	q[tail++] = (tpath){0};
	int ok = 0;
	while (head < tail && !ok) {
		tpath p = q[head++];
		if (p.len == 4)
			continue;
		tm_clock_node last = p.len ? p.e[p.len - 1].to : src;
		for (int i = 0; i < ne && !ok; i++) {
			if (tm_clock_node_cmp(edges[i].from, last))
				continue;
			tpath np = p;
			np.e[np.len++] = edges[i];
			if (!tm_clock_node_cmp(edges[i].to, dst)) {
				*found = np;
				ok = 1;
			} else if (tail < cap) {
				q[tail++] = np;
			}
		}
	}
	free(q);
	return ok;
}

/* Convert along a path with values read back from the snapshot records
 * (no rejections in these graphs, so every snapshot is accepted). */
static int64_t along(const tm_clock_graph *g, const tpath *p, int64_t ns)
{
	for (int h = 0; h < p->len; h++) {
		int64_t best_a = 0, best_b = 0, first_a = 0, first_b = 0;
		int have = 0, have_first = 0;
		uint64_t n = tm_clock_graph_snapshot_count(g);
		for (uint64_t id = 0; id < n; id++) {
			tm_clock_snapshot_info si;
			tm_clock_graph_snapshot(g, id, &si);
			if (si.hash != p->e[h].hash)
				continue;
			int64_t va = 0, vb = 0;
			int fa = 0, fb = 0;
			for (size_t k = 0; k < si.n_readings; k++) {
				if (!tm_clock_node_cmp(si.readings[k].node, p->e[h].from))
					va = (int64_t)si.readings[k].ts, fa = 1;
				if (!tm_clock_node_cmp(si.readings[k].node, p->e[h].to))
					vb = (int64_t)si.readings[k].ts, fb = 1;
			}
			if (!fa || !fb)
				continue;
			if (!have_first)
				first_a = va, first_b = vb, have_first = 1;
			if (va <= ns)
				best_a = va, best_b = vb, have = 1;
		}
		if (!have)
			best_a = first_a, best_b = first_b;
		ns = ns - best_a + best_b;
	}
	return ns;
}

static void test_search_matches_literal_bfs(void)
{
	int compared = 0, with_path = 0;
	for (int round = 0; round < 150; round++) {
		fresh();
		int64_t last[8] = {0};
		int n_snaps = 4 + (int)(next_rand() % 10);
		for (int s = 0; s < n_snaps; s++) {
			int k = 2 + (int)(next_rand() % 2);
			tm_clock_reading r[3];
			int used = 0;
			while (used < k) {
				uint32_t id = next_rand() % 8;
				int dup = 0;
				for (int j = 0; j < used; j++)
					dup |= r[j].node.clock_id == 128 + id;
				if (dup)
					continue;
				last[id] += 1 + next_rand() % 1000;
				r[used++] = (tm_clock_reading){N(128 + id), (uint64_t)last[id], 1, 0};
			}
			CHECK(tm_clocks_add_snapshot(c, r, (size_t)k, TM_CLOCK_ORIGIN_SNAPSHOT, 0, 0, &err) >= 0);
		}
		const tm_clock_graph *g = tm_clocks_view(c);
		for (uint32_t a = 0; a < 8; a++)
			for (uint32_t b = 0; b < 8; b++) {
				if (a == b || !tm_clock_graph_knows(g, N(128 + a)) || !tm_clock_graph_knows(g, N(128 + b)))
					continue;
				tpath p;
				int ok = literal_bfs(g, N(128 + a), N(128 + b), &p);
				CHECK_INT(tm_clock_graph_reaches(g, N(128 + a), N(128 + b)), ok);
				int64_t v = (int64_t)(next_rand() % 20000);
				CHECK_INT(node_conv(N(128 + a), v, N(128 + b)), ok ? along(g, &p, v) : NO_PATH);
				compared++;
				with_path += ok;
			}
	}
	CHECK(compared > 1000 && with_path > 500);
}

int main(void)
{
	TT_RUN(test_hash_check_values);
	TT_RUN(test_node_printing_and_order);
	TT_RUN(test_s42_smaller_hash_wins);
	TT_RUN(test_s43_order_dependent_hash);
	TT_RUN(test_s49_hash_tie_break_swapped);
	TT_RUN(test_s46_nearest_neighbour);
	TT_RUN(test_nearest_equal_values);
	TT_RUN(test_s47_converted_at_tokenization);
	TT_RUN(test_s48_four_edge_limit);
	TT_RUN(test_s50_realtime_jumps_back);
	TT_RUN(test_equal_values_are_monotonic);
	TT_RUN(test_s51_partial_rejection);
	TT_RUN(test_s53_global_clock_incremental);
	TT_RUN(test_rejection_messages);
	TT_RUN(test_s15_duplicate_at_snapshot_0);
	TT_RUN(test_snapshot_size_limit);
	TT_RUN(test_incremental_seq_clock_66);
	TT_RUN(test_s52_chromium_sequence_clock);
	TT_RUN(test_global_clock_unit_scales);
	TT_RUN(test_manifest_edge_offsets);
	TT_RUN(test_relate_competes_by_hash);
	TT_RUN(test_e1_systrace_via_proto);
	TT_RUN(test_e2_realtime_rendezvous);
	TT_RUN(test_28_realtime_beats_boottime);
	TT_RUN(test_29_30_38_same_domain_overlay);
	TT_RUN(test_e3_trace_time_file);
	TT_RUN(test_e4_pin_cross_machine);
	TT_RUN(test_e6_unrelatable_domains);
	TT_RUN(test_e7_realtime_trace_time);
	TT_RUN(test_initial_trace_time);
	TT_RUN(test_claim_ownership);
	TT_RUN(test_s55_early_packet_blocks_claim);
	TT_RUN(test_s29_s30_snapshotless_proto);
	TT_RUN(test_s27_reclaim_trap);
	TT_RUN(test_s56_remote_first);
	TT_RUN(test_s57_file_tags);
	TT_RUN(test_mixed_clock_sources);
	TT_RUN(test_realtime_twins);
	TT_RUN(test_s58_five_edge_path);
	TT_RUN(test_s59_non_canonical_realtime);
	TT_RUN(test_s28_order_dependence);
	TT_RUN(test_s35_s36_other_machine);
	TT_RUN(test_s11_s12_s13_pins);
	TT_RUN(test_47_50_multi_machine_relate);
	TT_RUN(test_s62_negative_result);
	TT_RUN(test_remote_sync_example_a);
	TT_RUN(test_remote_sync_example_b);
	TT_RUN(test_s64_two_packets);
	TT_RUN(test_s65_client_goes_back);
	TT_RUN(test_remote_sync_rounds_and_clocks);
	TT_RUN(test_stats_per_tracker);
	TT_RUN(test_clock_override_is_fatal);
	TT_RUN(test_introspection);
	TT_RUN(test_render_csv);
	TT_RUN(test_render_dot);
	TT_RUN(test_placement);
	TT_RUN(test_conversion_stress_uses_cache);
	TT_RUN(test_conversion_memo_matches_literal);
	TT_RUN(test_tracker_again_matches_graph);
	TT_RUN(test_trim_keeps_answers);
	TT_RUN(test_search_matches_literal_bfs);
	tm_clocks_free(c);
	TT_DONE();
}
