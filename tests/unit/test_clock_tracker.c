/* tests/unit/test_clock_tracker.c - trace time, trackers and bridging
 * against spec/clocks.md §5, §7, §8, §11 (E1-E7), machines.md §8 (examples
 * A and B) and conformance.md S57-S59. Each case makes the calls the
 * readers would make, in processing order. */
#include "tt.h"

#include "clock_tracker.h"

#define BT TM_CLOCK_BOOTTIME
#define MONO TM_CLOCK_MONOTONIC
#define RT TM_CLOCK_REALTIME
#define TF TM_CLOCK_TRACE_FILE
#define RT_COARSE TM_CLOCK_REALTIME_COARSE
#define G 1000000000LL

static tm_clocks *c;
static tm_error err;

static void fresh(void)
{
	tm_clocks_free(c);
	c = tm_clocks_new();
	tm_err_clear(&err);
}

/* A snapshot of up to three clocks (clock id 0 ends the list). */
static int64_t snap(tm_clock_tracker *t, uint32_t c1, uint64_t v1, uint32_t c2, uint64_t v2, uint32_t c3, uint64_t v3)
{
	tm_clock_sample s[] = {{c1, v1, 1, 0}, {c2, v2, 1, 0}, {c3, v3, 1, 0}};
	size_t n = c3 ? 3 : c2 ? 2 : 1;
	return tm_tracker_add_snapshot(t, s, n, 0, &err);
}

/* A proto reader's snapshot: insert, then claim per §5.2 (primary clock,
 * else BOOTTIME when present and TRACE_FILE absent) and set the default
 * clock even when the claim is refused. */
static int proto_snapshot(tm_clock_tracker *t, uint32_t primary_clock, uint32_t c1, uint64_t v1, uint32_t c2,
			  uint64_t v2, uint32_t c3, uint64_t v3)
{
	if (snap(t, c1, v1, c2, v2, c3, v3) < 0)
		return -1;
	uint32_t clock = primary_clock;
	if (!clock && (c1 == BT || c2 == BT || c3 == BT) && c1 != TF && c2 != TF && c3 != TF)
		clock = BT;
	if (!clock)
		return 0;
	tm_tracker_set_default_clock(t, clock);
	return tm_tracker_claim(t, clock);
}

/* Convert or return a recognisable failure value. */
static int64_t conv(tm_clock_tracker *t, uint32_t clock, int64_t v)
{
	int64_t out = 0;
	tm_conv rc = tm_tracker_convert(t, clock, 0, v, &out);
	return rc == TM_CONV_OK ? out : -1000 - (int64_t)rc;
}

/* A proto packet: first attempt set aside on failure, retried at the end
 * of the file (§6.1); this helper does both and counts the loss. */
static int64_t proto_packet_at_end(tm_clock_tracker *t, uint32_t clock, int64_t v)
{
	int64_t out = 0;
	if (tm_tracker_try_convert(t, clock, 0, v, &out) == TM_CONV_OK)
		return out;
	if (tm_tracker_convert(t, clock, 0, v, &out) == TM_CONV_OK)
		return out;
	tm_tracker_count(t, TM_CSTAT_UNDEFERRABLE_LOSS);
	return -1;
}

static uint32_t tt_clock_id(void)
{
	uint32_t id = 999;
	return tm_clocks_trace_time_clock_id(c, &id) ? id : 999;
}

static void test_initial_trace_time(void)
{
	fresh();
	tm_clock_node n = tm_clocks_trace_time(c);
	CHECK_INT(n.clock_id, TF);
	CHECK_INT(n.seq_id + n.file_id + n.machine_row, 0);
	CHECK(!tm_clocks_owner(c, NULL));
	CHECK_INT(tt_clock_id(), 999);
}

/* §5.2: the same file may re-claim, a different file never can. */
static void test_claim_rules(void)
{
	fresh();
	CHECK(tm_clocks_claim(c, (tm_clock_node){BT, 0, 0, 0}, 3));
	CHECK(tm_clocks_claim(c, (tm_clock_node){BT, 0, 0, 1}, 3));
	CHECK(!tm_clocks_claim(c, (tm_clock_node){MONO, 0, 0, 0}, 4));
	tm_clock_node n = tm_clocks_trace_time(c);
	CHECK_INT(n.clock_id, BT);
	CHECK_INT(n.machine_row, 1);
	uint32_t owner = 0;
	CHECK(tm_clocks_owner(c, &owner));
	CHECK_INT(owner, 3);
	CHECK_INT(tt_clock_id(), BT);
	/* the graph applies its trace-clock checks to the new node */
	CHECK_INT(tm_clock_graph_trace_time(tm_clocks_graph(c)).machine_row, 1);
}

/* §2.2 qualification and the §8.1 tag switch. */
static void test_qualification(void)
{
	fresh();
	tm_clock_tracker *t = tm_clocks_tracker(c, 5, 2, 0, MONO);
	CHECK(tm_clocks_tracker(c, 5, 2, 1, BT) == t);
	CHECK(tm_clocks_find_tracker(c, 5, 2) == t);
	CHECK(tm_clocks_find_tracker(c, 5, 3) == NULL);
	tm_clock_node n = tm_tracker_node(t, BT, 9);
	CHECK_INT(n.seq_id, 0);
	CHECK_INT(n.file_id, 0);
	CHECK_INT(n.machine_row, 2);
	n = tm_tracker_node(t, 70, 9);
	CHECK_INT(n.seq_id, 9);
	CHECK_INT(n.file_id, 5);
	n = tm_tracker_node(t, TF, 9);
	CHECK_INT(n.seq_id, 0);
	CHECK_INT(n.file_id, 5);
	n = tm_tracker_node(t, 200, 9);
	CHECK_INT(n.file_id, 0);
	CHECK(snap(t, BT, 1, 200, 2, 0, 0) >= 0);
	CHECK_INT(tm_tracker_file_tag(t), 5);
	CHECK_INT(tm_tracker_node(t, 200, 0).file_id, 5);
	CHECK(tm_clock_graph_knows(tm_clocks_graph(c), (tm_clock_node){BT, 0, 5, 2}));
	CHECK(!tm_clock_graph_knows(tm_clocks_graph(c), (tm_clock_node){BT, 0, 0, 2}));
}

/* §11 E1: the systrace (non-primary, never snapshots) shares the canonical
 * MONOTONIC related by the spine. */
static void test_e1_systrace_via_proto(void)
{
	fresh();
	tm_clock_tracker *spine = tm_clocks_tracker(c, 2, 0, 1, BT);
	CHECK_INT(proto_snapshot(spine, 0, BT, 1 * G, RT, 1700000001000000000ULL, MONO, 500000000), 1);
	tm_clock_tracker *sys = tm_clocks_tracker(c, 1, 0, 0, MONO);
	CHECK(!tm_tracker_claim(sys, MONO)); /* the spine owns trace time */
	CHECK_INT(conv(sys, MONO, 1 * G), 1500000000);
	CHECK_INT(conv(sys, MONO, 1500000000), 2000000000);
	CHECK_INT(tt_clock_id(), BT);
	CHECK_INT(tm_clocks_stat(c, TM_CSTAT_MIXED_SOURCES), 0);
}

/* §11 E2: REALTIME rendezvous between two machines. */
static void test_e2_realtime_rendezvous(void)
{
	fresh();
	tm_clock_tracker *a = tm_clocks_tracker(c, 1, 0, 1, BT);
	CHECK_INT(proto_snapshot(a, 0, BT, 1 * G, RT, 1700000001000000000ULL, 0, 0), 1);
	CHECK_INT(conv(a, BT, 1100000000), 1100000000);
	tm_clock_tracker *b = tm_clocks_tracker(c, 2, 1, 1, BT);
	CHECK_INT(proto_snapshot(b, 0, BT, 1 * G, RT, 1700000002000000000ULL, 0, 0), 0);
	uint64_t before = tm_clock_graph_snapshot_count(tm_clocks_graph(c));
	CHECK_INT(conv(b, BT, 1100000000), 2100000000);
	/* exactly one rendezvous edge was inserted */
	CHECK_INT(tm_clock_graph_snapshot_count(tm_clocks_graph(c)), before + 1);
	CHECK_INT(tm_clocks_stat(c, TM_CSTAT_UNRELATABLE), 0);
}

/* §11 E3: trace_time.file = server, RELATE edge server = phone - 500. */
static void test_e3_trace_time_file_relate(void)
{
	fresh();
	tm_clock_reading edge[] = {{{BT, 0, 0, 1}, 0, 1, 0}, {{BT, 0, 0, 0}, 500, 1, 0}};
	CHECK(tm_clock_graph_add_snapshot(tm_clocks_graph(c), edge, 2, &err) >= 0);
	CHECK(tm_clocks_claim(c, (tm_clock_node){BT, 0, 0, 1}, 0));
	tm_clock_tracker *phone = tm_clocks_tracker(c, 1, 0, 1, BT);
	CHECK_INT(proto_snapshot(phone, 0, BT, 1 * G, 0, 0, 0, 0), 0);
	CHECK_INT(conv(phone, BT, 1100000000), 1099999500);
	tm_clock_tracker *server = tm_clocks_tracker(c, 2, 1, 1, BT);
	CHECK_INT(proto_snapshot(server, 0, BT, 1 * G, 0, 0, 0, 0), 0);
	CHECK_INT(conv(server, BT, 1100000000), 1100000000);
	CHECK_INT(tt_clock_id(), BT);
}

/* §11 E4: a JSON PINned onto the phone's BOOTTIME +500. */
static void test_e4_pin_cross_machine(void)
{
	fresh();
	tm_clock_reading edge[] = {{{TF, 0, 2, 1}, 0, 1, 0}, {{BT, 0, 0, 0}, 500, 1, 0}};
	CHECK(tm_clock_graph_add_snapshot(tm_clocks_graph(c), edge, 2, &err) >= 0);
	tm_clock_tracker *phone = tm_clocks_tracker(c, 1, 0, 1, BT);
	CHECK_INT(proto_snapshot(phone, 0, BT, 1 * G, MONO, 500000000, 0, 0), 1);
	tm_clock_tracker *app = tm_clocks_tracker(c, 2, 1, 1, TF);
	CHECK(!tm_tracker_claim(app, TF));
	CHECK_INT(conv(app, TF, 2000000), 2000500);
	CHECK_INT(tt_clock_id(), BT);
}

/* §11 E6: BOOTTIME-only server cannot reach REALTIME trace time. */
static void test_e6_unrelatable(void)
{
	fresh();
	CHECK(tm_clocks_claim(c, (tm_clock_node){RT, 0, 0, 0}, 0));
	tm_clock_tracker *a = tm_clocks_tracker(c, 1, 0, 1, BT);
	CHECK_INT(proto_snapshot(a, 0, BT, 1 * G, RT, 1700000001500000000ULL, 0, 0), 0);
	CHECK_INT(proto_packet_at_end(a, BT, 1100000000), 1700000001600000000LL);
	tm_clock_tracker *b = tm_clocks_tracker(c, 2, 1, 1, BT);
	CHECK_INT(proto_snapshot(b, 0, BT, 1 * G, 0, 0, 0, 0), 0);
	/* begin and end packets: set aside, retried at end of file, dropped */
	int64_t out = 0;
	CHECK_INT(tm_tracker_try_convert(b, BT, 0, 1100000000, &out), TM_CONV_NO_PATH);
	CHECK_INT(tm_tracker_try_convert(b, BT, 0, 1200000000, &out), TM_CONV_NO_PATH);
	CHECK_INT(conv(b, BT, 1100000000), -1000 - TM_CONV_NO_PATH);
	tm_tracker_count(b, TM_CSTAT_UNDEFERRABLE_LOSS);
	CHECK_INT(conv(b, BT, 1200000000), -1000 - TM_CONV_NO_PATH);
	tm_tracker_count(b, TM_CSTAT_UNDEFERRABLE_LOSS);
	CHECK_INT(tm_tracker_stat(b, TM_CSTAT_UNRELATABLE), 1);
	CHECK_INT(tm_tracker_stat(b, TM_CSTAT_NO_PATH), 2);
	CHECK_INT(tm_tracker_stat(b, TM_CSTAT_UNDEFERRABLE_LOSS), 2);
	CHECK_INT(tm_clocks_stat(c, TM_CSTAT_UNRELATABLE), 1);
	CHECK_INT(tm_clocks_stat(c, TM_CSTAT_NO_PATH), 2);
	CHECK_INT(tm_clocks_stat(c, TM_CSTAT_UNDEFERRABLE_LOSS), 2);
	uint32_t src = 0, dst = 0;
	CHECK(tm_tracker_unrelatable_args(b, &src, &dst));
	CHECK_INT(src, BT);
	CHECK_INT(dst, RT);
	CHECK(!tm_tracker_unrelatable_args(a, NULL, NULL));
	CHECK_STR(tm_clock_stat_name(TM_CSTAT_UNRELATABLE), "clock_sync_unrelatable_clock_domains");
}

/* §11 E7: manifest-chosen REALTIME on a single proto. */
static void test_e7_realtime_trace_time(void)
{
	fresh();
	CHECK(tm_clocks_claim(c, (tm_clock_node){RT, 0, 0, 0}, 0));
	tm_clock_tracker *spine = tm_clocks_tracker(c, 1, 0, 1, BT);
	CHECK_INT(proto_snapshot(spine, 0, BT, 1 * G, RT, 1700000001000000000ULL, MONO, 500000000), 0);
	CHECK_INT(conv(spine, BT, 1100000000), 1700000001100000000LL);
	CHECK_INT(tt_clock_id(), RT);
}

/* §5.2 verified: an early packet blocks the proto's own claim. */
static void test_early_packet_blocks_claim(void)
{
	fresh();
	tm_clock_tracker *p = tm_clocks_tracker(c, 0, 0, 1, BT);
	int64_t out = 0;
	CHECK_INT(tm_tracker_try_convert(p, MONO, 0, 600000000, &out), TM_CONV_UNKNOWN_SOURCE);
	/* the bridge tied BOOTTIME to the private trace time */
	CHECK(tm_clock_graph_has_path(tm_clocks_graph(c), (tm_clock_node){BT, 0, 0, 0},
				      (tm_clock_node){TF, 0, 0, 0}));
	CHECK_INT(proto_snapshot(p, 0, BT, 1 * G, MONO, 500000000, 0, 0), 0);
	CHECK_INT(tt_clock_id(), 999);
	CHECK(!tm_clocks_owner(c, NULL));
	uint32_t def = 0;
	CHECK(tm_tracker_default_clock(p, &def));
	CHECK_INT(def, BT);
	CHECK_INT(conv(p, MONO, 600000000), 1100000000); /* the retry */
	CHECK_INT(conv(p, def, 2 * G), 2 * G);
	CHECK_INT(tm_tracker_stat(p, TM_CSTAT_UNKNOWN_SOURCE), 0);
	/* a JSON later in the archive may still take the private clock */
	tm_clock_tracker *j = tm_clocks_tracker(c, 1, 0, 0, TF);
	CHECK(tm_tracker_claim(j, TF));
	CHECK_INT(tt_clock_id(), TF);
}

/* §5.2 remote-first variant: a same-file re-claim strands machine 7. */
static void test_reclaim_trap_remote_first(void)
{
	fresh();
	tm_clock_tracker *host = tm_clocks_tracker(c, 1, 0, 1, BT);
	tm_clock_tracker *m7 = tm_clocks_tracker(c, 1, 1, 1, BT);
	CHECK_INT(proto_snapshot(m7, 0, BT, 50 * G, 0, 0, 0, 0), 1);
	CHECK_INT(conv(m7, BT, 50100000000LL), 50100000000LL);
	CHECK_INT(proto_snapshot(host, 0, BT, 1 * G, 0, 0, 0, 0), 1);
	CHECK_INT(conv(host, BT, 1100000000), 1100000000);
	CHECK_INT(proto_packet_at_end(m7, BT, 50200000000LL), -1);
	CHECK_INT(proto_packet_at_end(m7, BT, 50300000000LL), -1);
	CHECK_INT(tm_tracker_stat(m7, TM_CSTAT_NO_PATH), 2);
	CHECK_INT(tm_tracker_stat(m7, TM_CSTAT_UNDEFERRABLE_LOSS), 2);
	CHECK_INT(tm_clocks_stat(c, TM_CSTAT_UNRELATABLE), 0);
}

/* machines.md §8 example A (= clocks.md E5). */
static void test_remote_sync_example_a(void)
{
	fresh();
	tm_clock_tracker *host = tm_clocks_tracker(c, 1, 0, 1, BT);
	CHECK_INT(proto_snapshot(host, 0, BT, 1 * G, 0, 0, 0, 0), 1);
	tm_clock_tracker *vm = tm_clocks_tracker(c, 1, 1, 1, BT);
	tm_clock_value cl[] = {{BT, 50 * G}}, ho[] = {{BT, 2 * G}};
	tm_sync_round r[] = {{cl, 1, ho, 1}, {cl, 1, ho, 1}};
	CHECK_INT(tm_clocks_remote_sync(vm, r, 2), 1);
	CHECK_INT(conv(vm, BT, 50100000000LL), 2100000000);
	/* a single round gives no edge: the same-domain overlay applies */
	fresh();
	host = tm_clocks_tracker(c, 1, 0, 1, BT);
	CHECK_INT(proto_snapshot(host, 0, BT, 1 * G, 0, 0, 0, 0), 1);
	vm = tm_clocks_tracker(c, 1, 1, 1, BT);
	CHECK_INT(tm_clocks_remote_sync(vm, r, 1), 0);
	CHECK_INT(conv(vm, BT, 50100000000LL), 50100000000LL);
}

/* machines.md §8 example B: skipped pair, truncating average, anchor. */
static void test_remote_sync_example_b(void)
{
	fresh();
	tm_clock_tracker *host = tm_clocks_tracker(c, 1, 0, 1, BT);
	CHECK_INT(proto_snapshot(host, 0, BT, 1 * G, 0, 0, 0, 0), 1);
	tm_clock_tracker *vm = tm_clocks_tracker(c, 1, 1, 1, BT);
	tm_clock_value c0[] = {{BT, 100 * G}}, h0[] = {{BT, 10 * G}};
	tm_clock_value c1[] = {{BT, 100 * G + 2000}}, h1[] = {{BT, 10 * G + 1000}};
	tm_clock_value c2[] = {{BT, 140 * G}}, h2[] = {{BT, 50 * G + 7}};
	tm_clock_value c3[] = {{BT, 140 * G + 10}}, h3[] = {{BT, 50 * G + 12}};
	tm_sync_round r[] = {{c0, 1, h0, 1}, {c1, 1, h1, 1}, {c2, 1, h2, 1}, {c3, 1, h3, 1}};
	CHECK_INT(tm_clocks_remote_sync(vm, r, 4), 1);
	/* the edge: host 50 000 000 012 <-> client 140 000 000 636 */
	CHECK_INT(conv(vm, BT, 140000000636LL), 50000000012LL);
	CHECK_INT(conv(vm, BT, 140000001000LL), 50000000376LL);
	CHECK_INT(tm_clocks_stat(c, TM_CSTAT_INVALID_SNAPSHOTS), 0);
}

/* machines.md §8 trap: a decreasing client BOOTTIME skips the pair. */
static void test_remote_sync_decreasing_client(void)
{
	fresh();
	tm_clock_tracker *host = tm_clocks_tracker(c, 1, 0, 1, BT);
	CHECK_INT(proto_snapshot(host, 0, BT, 1 * G, 0, 0, 0, 0), 1);
	tm_clock_tracker *vm = tm_clocks_tracker(c, 1, 1, 1, BT);
	tm_clock_value c0[] = {{BT, 100 * G}}, c1[] = {{BT, 99 * G}}, h[] = {{BT, 2 * G}};
	tm_sync_round r[] = {{c0, 1, h, 1}, {c1, 1, h, 1}};
	CHECK_INT(tm_clocks_remote_sync(vm, r, 2), 0);
	CHECK_INT(proto_packet_at_end(vm, BT, 100 * G), -1);
	CHECK_INT(tm_tracker_stat(vm, TM_CSTAT_NO_PATH), 1);
	CHECK_INT(tm_tracker_stat(vm, TM_CSTAT_UNRELATABLE), 0);
}

/* machines.md §8 step 1: a clock listed twice keeps its last value; a
 * side without the clock reads 0 and is skipped; extreme values wrap
 * without undefined behaviour (run under UBSan). */
static void test_remote_sync_odd_rounds(void)
{
	fresh();
	tm_clock_tracker *host = tm_clocks_tracker(c, 1, 0, 1, BT);
	CHECK_INT(proto_snapshot(host, 0, BT, 1 * G, 0, 0, 0, 0), 1);
	tm_clock_tracker *vm = tm_clocks_tracker(c, 1, 1, 1, BT);
	/* the first BOOTTIME (7) is overridden by the second (50e9) */
	tm_clock_value cl[] = {{BT, 7}, {BT, 50 * G}, {MONO, 9}}, ho[] = {{BT, 2 * G}};
	tm_sync_round r[] = {{cl + 1, 1, ho, 1}, {cl, 3, ho, 1}};
	/* the duplicate client snapshot is rejected, MONOTONIC has no host
	 * reading: one edge, BOOTTIME, offset 48e9 */
	CHECK_INT(tm_clocks_remote_sync(vm, r, 2), 1);
	CHECK_INT(tm_clocks_stat(c, TM_CSTAT_INVALID_SNAPSHOTS), 1);
	CHECK_INT(conv(vm, BT, 50100000000LL), 2100000000);
	CHECK_INT(tm_clocks_remote_sync(vm, NULL, 0), 0);
	tm_clock_value empty_c[] = {{200, 0}};
	tm_sync_round e[] = {{NULL, 0, NULL, 0}, {empty_c, 1, NULL, 0}};
	CHECK_INT(tm_clocks_remote_sync(vm, e, 2), 0);
	fresh();
	vm = tm_clocks_tracker(c, 1, 1, 1, BT);
	tm_clock_value hc[] = {{BT, UINT64_MAX - 1}, {300, UINT64_MAX}},
		       hh[] = {{BT, UINT64_MAX}, {300, 1}};
	tm_sync_round big[] = {{hc, 2, hh, 2}, {hc, 2, hh, 2}, {hc, 2, hh, 2}};
	CHECK(tm_clocks_remote_sync(vm, big, 3) <= 2);
}

/* conformance S57: a non-primary proto isolates its own snapshot. */
static void test_s57_non_primary_isolated(void)
{
	fresh();
	tm_clock_tracker *a = tm_clocks_tracker(c, 2, 0, 1, BT);
	CHECK_INT(proto_snapshot(a, MONO, BT, 1 * G, MONO, 500000000, 0, 0), 1);
	CHECK_INT(tt_clock_id(), MONO);
	uint32_t def = 0;
	CHECK(tm_tracker_default_clock(a, &def));
	CHECK_INT(conv(a, def, 600000000), 600000000);
	tm_clock_tracker *b = tm_clocks_tracker(c, 1, 0, 0, BT);
	CHECK_INT(proto_snapshot(b, 0, BT, 1 * G, MONO, 400000000, 0, 0), 0);
	CHECK_INT(tm_tracker_file_tag(b), 1);
	CHECK(tm_tracker_default_clock(b, &def));
	CHECK_INT(conv(b, def, 1100000000), 600000000);
	CHECK_INT(tm_clocks_stat(c, TM_CSTAT_MIXED_SOURCES), 0);
}

/* conformance S58: the rendezvous is inserted although the full path has
 * 5 edges; with one three-clock snapshot it has 4 and works. */
static void test_s58_five_edge_rendezvous(void)
{
	for (int three = 0; three < 2; three++) {
		fresh();
		tm_clock_tracker *a = tm_clocks_tracker(c, 1, 0, 1, BT);
		CHECK_INT(proto_snapshot(a, 0, BT, 1 * G, MONO, 500000000, 0, 0), 1);
		CHECK(snap(a, MONO, 500000000, RT, 1700000001000000000ULL, 0, 0) >= 0);
		CHECK_INT(conv(a, BT, 1100000000), 1100000000);
		tm_clock_tracker *b = tm_clocks_tracker(c, 2, 1, 1, BT);
		if (three) {
			CHECK_INT(proto_snapshot(b, 0, BT, 1 * G, MONO, 500000000, RT, 1700000002000000000ULL), 0);
			CHECK_INT(proto_packet_at_end(b, BT, 1100000000), 2100000000);
		} else {
			CHECK_INT(proto_snapshot(b, 0, BT, 1 * G, MONO, 500000000, 0, 0), 0);
			CHECK(snap(b, MONO, 500000000, RT, 1700000002000000000ULL, 0, 0) >= 0);
			CHECK_INT(proto_packet_at_end(b, BT, 1100000000), -1);
			CHECK_INT(tm_tracker_stat(b, TM_CSTAT_NO_PATH), 1);
			CHECK_INT(tm_tracker_stat(b, TM_CSTAT_UNDEFERRABLE_LOSS), 1);
			/* the rendezvous edge exists: REALTIME[1] reaches REALTIME[0] */
			CHECK(tm_clock_graph_has_path(tm_clocks_graph(c), (tm_clock_node){RT, 0, 0, 1},
						      (tm_clock_node){RT, 0, 0, 0}));
		}
		CHECK_INT(tm_clocks_stat(c, TM_CSTAT_UNRELATABLE), 0);
	}
}

/* conformance S59: a non-primary REALTIME on the trace-time machine is not
 * canonical, so the server falls back to the BOOTTIME overlay. */
static void test_s59_non_canonical_realtime(void)
{
	fresh();
	tm_clock_tracker *a = tm_clocks_tracker(c, 1, 0, 1, BT);
	CHECK_INT(proto_snapshot(a, 0, BT, 1 * G, 0, 0, 0, 0), 1);
	tm_clock_tracker *cc = tm_clocks_tracker(c, 3, 0, 0, BT);
	CHECK_INT(proto_snapshot(cc, 0, BT, 1 * G, RT, 1700000001000000000ULL, 0, 0), 0);
	CHECK(!tm_clock_graph_knows(tm_clocks_graph(c), (tm_clock_node){RT, 0, 0, 0}));
	tm_clock_tracker *z = tm_clocks_tracker(c, 2, 1, 1, BT);
	CHECK_INT(proto_snapshot(z, 0, BT, 1 * G, RT, 1700000002000000000ULL, 0, 0), 0);
	CHECK_INT(conv(z, BT, 1100000000), 1100000000);
}

/* §8.2: a non-primary file on another machine twins its REALTIME onto the
 * canonical node and so joins the rendezvous (E2's numbers). */
static void test_realtime_twins(void)
{
	fresh();
	tm_clock_tracker *a = tm_clocks_tracker(c, 1, 0, 1, BT);
	CHECK_INT(proto_snapshot(a, 0, BT, 1 * G, RT, 1700000001000000000ULL, 0, 0), 1);
	/* file 3 is non-primary on machine 1 (file 2 came first there) */
	tm_clock_tracker *s2 = tm_clocks_tracker(c, 3, 1, 0, BT);
	CHECK_INT(proto_snapshot(s2, 0, BT, 1 * G, RT, 1700000002000000000ULL, 0, 0), 0);
	CHECK(tm_clock_graph_knows(tm_clocks_graph(c), (tm_clock_node){RT, 0, 0, 1}));
	CHECK(tm_clock_graph_knows(tm_clocks_graph(c), (tm_clock_node){RT, 0, 3, 1}));
	CHECK(!tm_clock_graph_knows(tm_clocks_graph(c), (tm_clock_node){BT, 0, 0, 1}));
	/* identity BOOTTIME(tag 3) <-> BOOTTIME[1], then the twin lets
	 * BOOTTIME[1] reach REALTIME[1]: rendezvous, 2 100 000 000 */
	CHECK_INT(conv(s2, BT, 1100000000), 2100000000);
	CHECK_INT(tm_clocks_stat(c, TM_CSTAT_UNRELATABLE), 0);
	/* without the twin (same machine as trace time) nothing is twinned */
	tm_clock_tracker *s3 = tm_clocks_tracker(c, 4, 0, 0, BT);
	CHECK(snap(s3, RT_COARSE, 5, 0, 0, 0, 0) >= 0);
	CHECK(!tm_clock_graph_knows(tm_clocks_graph(c), (tm_clock_node){RT_COARSE, 0, 0, 0}));
	tm_clock_tracker *s4 = tm_clocks_tracker(c, 5, 1, 0, BT);
	CHECK(snap(s4, RT_COARSE, 5, 0, 0, 0, 0) >= 0);
	CHECK(tm_clock_graph_knows(tm_clocks_graph(c), (tm_clock_node){RT_COARSE, 0, 0, 1}));
}

/* §8.1: a non-primary file that converted with tag 0 and then snapshots
 * records clock_sync_mixed_clock_sources. */
static void test_mixed_clock_sources(void)
{
	fresh();
	tm_clock_tracker *spine = tm_clocks_tracker(c, 1, 0, 1, BT);
	CHECK_INT(proto_snapshot(spine, 0, BT, 1 * G, MONO, 500000000, 0, 0), 1);
	tm_clock_tracker *p = tm_clocks_tracker(c, 2, 0, 0, BT);
	CHECK_INT(conv(p, MONO, 600000000), 1100000000);
	CHECK_INT(conv(p, MONO, 700000000), 1200000000);
	CHECK_INT(proto_snapshot(p, 0, BT, 2 * G, MONO, 0, 0, 0), 0);
	CHECK_INT(tm_tracker_stat(p, TM_CSTAT_MIXED_SOURCES), 1);
	CHECK_INT(tm_tracker_mixed_conversions(p), 2);
	/* its own snapshot no longer disturbs the canonical nodes */
	CHECK_INT(conv(spine, MONO, 600000000), 1100000000);
	CHECK_INT(tm_tracker_conversions(p), 2);
}

/* §7 step 3 refusal: MONOTONIC of a snapshot-less machine vs BOOTTIME. */
static void test_bridge_refuses_other_domain(void)
{
	fresh();
	tm_clock_tracker *a = tm_clocks_tracker(c, 1, 0, 1, BT);
	CHECK_INT(proto_snapshot(a, 0, BT, 1 * G, 0, 0, 0, 0), 1);
	tm_clock_tracker *sys = tm_clocks_tracker(c, 2, 1, 1, MONO);
	CHECK_INT(conv(sys, MONO, 5), -1000 - TM_CONV_UNKNOWN_SOURCE);
	CHECK_INT(conv(sys, MONO, 6), -1000 - TM_CONV_UNKNOWN_SOURCE);
	CHECK_INT(tm_tracker_stat(sys, TM_CSTAT_UNRELATABLE), 1);
	CHECK_INT(tm_tracker_stat(sys, TM_CSTAT_UNKNOWN_SOURCE), 2);
}

/* Rejections are counted globally; a clock override forbids snapshots. */
static void test_invalid_and_override(void)
{
	fresh();
	tm_clock_tracker *a = tm_clocks_tracker(c, 1, 0, 1, BT);
	CHECK(snap(a, BT, 1, BT, 2, 0, 0) < 0);
	CHECK(strstr(err.msg, "duplicate clock domain") != NULL);
	CHECK_INT(tm_clocks_stat(c, TM_CSTAT_INVALID_SNAPSHOTS), 1);
	tm_clock_tracker *b = tm_clocks_tracker(c, 2, 0, 0, BT);
	tm_tracker_set_clock_override(b);
	tm_err_clear(&err);
	CHECK(snap(b, BT, 1, 0, 0, 0, 0) < 0);
	CHECK_STR(err.msg, "perfetto_manifest: clock overrides require the trace to use a single clock");
	CHECK_INT(tm_clocks_stat(c, TM_CSTAT_INVALID_SNAPSHOTS), 1);
}

int main(void)
{
	TT_RUN(test_initial_trace_time);
	TT_RUN(test_claim_rules);
	TT_RUN(test_qualification);
	TT_RUN(test_e1_systrace_via_proto);
	TT_RUN(test_e2_realtime_rendezvous);
	TT_RUN(test_e3_trace_time_file_relate);
	TT_RUN(test_e4_pin_cross_machine);
	TT_RUN(test_e6_unrelatable);
	TT_RUN(test_e7_realtime_trace_time);
	TT_RUN(test_early_packet_blocks_claim);
	TT_RUN(test_reclaim_trap_remote_first);
	TT_RUN(test_remote_sync_example_a);
	TT_RUN(test_remote_sync_example_b);
	TT_RUN(test_remote_sync_decreasing_client);
	TT_RUN(test_remote_sync_odd_rounds);
	TT_RUN(test_s57_non_primary_isolated);
	TT_RUN(test_s58_five_edge_rendezvous);
	TT_RUN(test_s59_non_canonical_realtime);
	TT_RUN(test_realtime_twins);
	TT_RUN(test_mixed_clock_sources);
	TT_RUN(test_bridge_refuses_other_domain);
	TT_RUN(test_invalid_and_override);
	tm_clocks_free(c);
	TT_DONE();
}
