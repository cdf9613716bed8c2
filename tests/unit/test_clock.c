/* tests/unit/test_clock.c - the clock graph against the verified examples
 * of spec/clocks.md §3-§4 and conformance.md S42-S53. */
#include "tt.h"

#include "clock.h"

#define N(c) ((tm_clock_node){(c), 0, 0, 0})
#define BT N(6)
#define MONO N(3)
#define RT N(1)

static tm_clock_graph *g;
static tm_error err;

static void snap2(tm_clock_node a, uint64_t va, tm_clock_node b, uint64_t vb)
{
	tm_clock_reading r[] = {{a, va, 1, 0}, {b, vb, 1, 0}};
	tm_clock_graph_add_snapshot(g, r, 2, &err);
}

static int64_t conv(tm_clock_node src, int64_t v, tm_clock_node dst)
{
	int64_t out = 0;
	tm_conv c = tm_clock_graph_convert(g, src, v, dst, &out);
	return c == TM_CONV_OK ? out : -1000 - (int64_t)c;
}

static void fresh(void)
{
	tm_clock_graph_free(g);
	g = tm_clock_graph_new();
	tm_err_clear(&err);
}

static void test_hash_check_values(void)
{
	tm_clock_node a[] = {BT, MONO}, b[] = {MONO, BT}, c[] = {BT, RT, MONO};
	CHECK_INT(tm_clock_snapshot_hash(a, 2), 0x83d7ea3c);
	CHECK_INT(tm_clock_snapshot_hash(b, 2), 0x88052b94);
	CHECK_INT(tm_clock_snapshot_hash(c, 3), 0xd38a13bf);
	tm_clock_node d[] = {BT, MONO, N(129)}, e[] = {BT, MONO, N(128)};
	CHECK_INT(tm_clock_snapshot_hash(d, 3), 0xdd973bfa);
	CHECK_INT(tm_clock_snapshot_hash(e, 3), 0x4f78ea78);
}

/* S42, S43, S49: among parallel edges the smaller hash wins. */
static void test_hash_tie_breaks(void)
{
	fresh();
	snap2(BT, 1000, MONO, 0);
	tm_clock_reading r[] = {{BT, 5000, 1, 0}, {MONO, 0, 1, 0}, {N(4), 0, 1, 0}};
	tm_clock_graph_add_snapshot(g, r, 3, &err);
	CHECK_INT(conv(MONO, 10, BT), 5010);
	fresh();
	snap2(BT, 1000, MONO, 0);
	snap2(MONO, 0, BT, 5000);
	CHECK_INT(conv(MONO, 10, BT), 1010);
	for (int swap = 0; swap < 2; swap++) {
		fresh();
		tm_clock_reading a[] = {{BT, 1000, 1, 0}, {MONO, 0, 1, 0}, {N(swap ? 128 : 129), 0, 1, 0}};
		tm_clock_reading b[] = {{BT, 5000, 1, 0}, {MONO, 0, 1, 0}, {N(swap ? 129 : 128), 0, 1, 0}};
		tm_clock_graph_add_snapshot(g, a, 3, &err);
		tm_clock_graph_add_snapshot(g, b, 3, &err);
		CHECK_INT(conv(MONO, 10, BT), swap ? 1010 : 5010);
	}
}

/* S46: nearest neighbour within one hop (§4.3). */
static void test_nearest_neighbour(void)
{
	fresh();
	snap2(MONO, 1000, BT, 2000);
	snap2(MONO, 1100, BT, 2100);
	snap2(MONO, 1900, BT, 2900);
	snap2(MONO, 2000, BT, 3500);
	CHECK_INT(conv(MONO, 900, BT), 1900);
	CHECK_INT(conv(MONO, 1104, BT), 2104);
	CHECK_INT(conv(MONO, 1999, BT), 2999);
	CHECK_INT(conv(MONO, 2000, BT), 3500);
	CHECK_INT(conv(MONO, 9000, BT), 10500);
}

/* S47: conversion uses the graph as it is at that moment (§4.6). */
static void test_conversion_at_tokenization(void)
{
	fresh();
	snap2(MONO, 1000, BT, 2000);
	CHECK_INT(conv(MONO, 1500, BT), 2500);
	snap2(MONO, 1400, BT, 5000);
	CHECK_INT(conv(MONO, 1500, BT), 5100);
}

/* S48: the longest usable path has 4 edges (§4.1). */
static void test_four_edge_limit(void)
{
	fresh();
	snap2(BT, 1000, N(128), 0);
	snap2(N(128), 0, N(129), 100);
	snap2(N(129), 100, N(130), 200);
	snap2(N(130), 200, N(131), 300);
	snap2(N(131), 300, N(132), 400);
	CHECK_INT(conv(N(130), 1300, BT), 2100);
	CHECK_INT(conv(N(131), 1300, BT), 2000);
	CHECK_INT(conv(N(132), 1400, BT), -1000 - TM_CONV_NO_PATH);
	CHECK_INT(conv(N(133), 1400, BT), -1000 - TM_CONV_UNKNOWN_SOURCE);
	CHECK_INT(conv(BT, 1400, N(133)), -1000 - TM_CONV_UNKNOWN_TARGET);
}

/* S50 and §3.5: REALTIME jumping back becomes non-monotonic forever. */
static void test_non_monotonic(void)
{
	fresh();
	tm_clock_graph_set_trace_time(g, BT);
	snap2(BT, 1000, RT, 5000);
	CHECK_INT(conv(RT, 6000, BT), 2000);
	snap2(BT, 2000, RT, 4000);
	CHECK_INT(err.code, TM_OK);
	CHECK_INT(conv(RT, 6000, BT), -1000 - TM_CONV_NO_PATH);
	CHECK_INT(conv(BT, 3000, BT), 3000);
	/* Edges into it remain; the later snapshot is nearest (§4.3). */
	CHECK_INT(conv(BT, 3000, RT), 5000);
}

/* S51 and §3.3: a rejection is not atomic. */
static void test_partial_rejection(void)
{
	fresh();
	tm_clock_graph_set_trace_time(g, BT);
	snap2(MONO, 100, BT, 2000);
	tm_clock_reading r[] = {{MONO, 200, 1, 0}, {BT, 1000, 1, 0}};
	CHECK_INT(tm_clock_graph_add_snapshot(g, r, 2, &err), -1);
	CHECK_STR(err.msg, "Clock sync error: the trace clock (id=6) is not monotonic at snapshot 1. 1000 not >= 2000.");
	CHECK_INT(conv(MONO, 50, BT), 1950);
	CHECK_INT(conv(MONO, 150, BT), 2050);
	CHECK_INT(conv(MONO, 300, BT), 300);
}

/* §4.4 and S52: units, incremental sequence clocks, resets; S53. */
static void test_units_and_incremental(void)
{
	fresh();
	tm_clock_node seq = {66, 1, 2, 0};
	tm_clock_reading r[] = {{MONO, 10000, 1, 0}, {seq, 10, 1000, 1}};
	CHECK(tm_clock_graph_add_snapshot(g, r, 2, &err) >= 0);
	CHECK_INT(conv(seq, 1, MONO), 11000);
	CHECK_INT(conv(seq, 1, MONO), 12000);
	CHECK_INT(conv(seq, 1, MONO), 13000);
	CHECK_INT(conv(seq, 2, MONO), 15000);
	/* A failed search does not consume the delta. */
	CHECK_INT(conv(seq, 5, N(200)), -1000 - TM_CONV_UNKNOWN_TARGET);
	tm_clock_reading r2[] = {{MONO, 3000000000, 1, 0}, {seq, 600000, 1000, 1}};
	CHECK(tm_clock_graph_add_snapshot(g, r2, 2, &err) >= 0);
	CHECK_INT(conv(seq, 1, MONO), 3000001000);

	fresh();
	tm_clock_reading u[] = {{BT, 1000, 1, 0}, {N(128), 10, 1000, 0}};
	tm_clock_graph_add_snapshot(g, u, 2, &err);
	CHECK_INT(conv(N(128), 12, BT), 3000);

	fresh();
	tm_clock_reading bad[] = {{BT, 1000, 1, 0}, {N(128), 10, 1000, 1}};
	CHECK_INT(tm_clock_graph_add_snapshot(g, bad, 2, &err), -1);
	CHECK_STR(err.msg, "Clock sync error: the global clock with id=128 cannot use incremental encoding; this is only "
			   "supported for sequence-scoped clocks.");
	CHECK(tm_clock_graph_knows(g, N(128)));
	CHECK_INT(conv(N(128), 12, BT), -1000 - TM_CONV_NO_PATH);
}

static void test_rejection_texts(void)
{
	fresh();
	tm_clock_node pin = {11, 0, 2, 0};
	tm_clock_reading d[] = {{pin, 0, 1, 0}, {pin, 0, 1, 0}};
	CHECK_INT(tm_clock_graph_add_snapshot(g, d, 2, &err), -1);
	CHECK_STR(err.msg, "Clock sync error: duplicate clock domain with id=11(seq=0,tf=2,m=0) at snapshot 0.");
	snap2(MONO, 1, RT, 1);
	tm_clock_reading u[] = {{MONO, 5, 1000, 0}, {RT, 5, 1, 0}};
	CHECK_INT(tm_clock_graph_add_snapshot(g, u, 2, &err), -1);
	CHECK_STR(err.msg, "Clock sync error: the clock domain with id=3 (unit=1000, incremental=0), was previously "
			   "registered with different properties (unit=1, incremental=0).");
	tm_clock_graph_set_trace_time(g, BT);
	tm_clock_reading t[] = {{BT, 5, 1000, 0}};
	CHECK_INT(tm_clock_graph_add_snapshot(g, t, 1, &err), -1);
	CHECK_STR(err.msg, "Clock sync error: the trace clock (id=6) must always use nanoseconds as unit multiplier.");
	CHECK_INT(tm_clock_graph_snapshot_count(g), 4);
}

/* clocks.md §9.2: a manifest edge {source max(0,-off), reference
 * max(0,off)} is a constant offset in both directions. */
static void test_offset_edges(void)
{
	fresh();
	tm_clock_node src = {6, 0, 0, 1}, ref = {6, 0, 0, 0};
	snap2(src, 0, ref, 500);
	CHECK_INT(conv(src, 1100000000, ref), 1100000500);
	CHECK_INT(conv(ref, 1100000000, src), 1099999500);
	fresh();
	snap2(src, 500, ref, 0);
	CHECK_INT(conv(src, 1100000000, ref), 1099999500);
}

/* The path is searched once per (src, dst) while the graph is unchanged. */
static void test_path_cache(void)
{
	fresh();
	snap2(BT, 1000, MONO, 0);
	snap2(MONO, 0, N(128), 7);
	uint64_t before = tm_clock_graph_searches(g);
	int64_t sum = 0;
	for (int i = 0; i < 1000000; i++)
		sum += conv(N(128), 10, BT) == 1003;
	CHECK_INT(sum, 1000000);
	CHECK(tm_clock_graph_searches(g) - before <= 1);
}

int main(void)
{
	TT_RUN(test_hash_check_values);
	TT_RUN(test_hash_tie_breaks);
	TT_RUN(test_nearest_neighbour);
	TT_RUN(test_conversion_at_tokenization);
	TT_RUN(test_four_edge_limit);
	TT_RUN(test_non_monotonic);
	TT_RUN(test_partial_rejection);
	TT_RUN(test_units_and_incremental);
	TT_RUN(test_rejection_texts);
	TT_RUN(test_offset_edges);
	TT_RUN(test_path_cache);
	tm_clock_graph_free(g);
	TT_DONE();
}
