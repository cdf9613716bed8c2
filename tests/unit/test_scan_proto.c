/* tests/unit/test_scan_proto.c - the proto reader of the scan tier
 * (core/formats/proto/scan_proto.c) on traces built here byte by byte: ftrace bundles
 * and compact sched, sequence rules and interning, legacy TrackEvent
 * timestamps, Chrome and service packets, fatal texts, and damaged input.
 * The clock and machine scenarios of spec/conformance.md run through
 * tests/t_conformance.sh. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "input/merge.h"
#include "pb_write.h"
#include "formats/registry.h"
#include "scan/scan.h"
#include "trace.pb-c.h"
#include "trace_fields.h"
#include "tt.h"
#include "util/pb.h"

/* Field numbers protos/trace.proto has no name for (no F_ in trace_fields.h). */
/* Perfetto's TracePacket.for_testing (trace/trace_packet.proto): a field
 * no reader here knows. */
#define TRACE_PACKET_FOR_TESTING 900
/* Perfetto's ChromeEventBundle.trace_events (trace/chrome/
 * chrome_trace_event.proto), inside TracePacket.chrome_events; written as a
 * varint, as the scan places the packet and never reads inside it. */
#define CHROME_EVENT_BUNDLE_TRACE_EVENTS 1
/* An FtraceEvent field that neither protos/trace.proto nor Perfetto's
 * ftrace/ftrace_event.proto declares: the scan names the event ftrace_999. */
#define FTRACE_EVENT_UNDECLARED 999
/* A field of that event's body, which has no schema. */
#define UNDECLARED_BODY_FIELD 1

/* ---- a tiny protobuf writer (f_var, f_bytes, f_msg, f_packed: pb_write.h) --- */

static void f_str(tm_buf *b, uint32_t id, const char *s)
{
	f_bytes(b, id, s, strlen(s));
}

/* Append a TracePacket as Trace.packet and free it. */
static void packet(tm_buf *trace, tm_buf *p)
{
	f_msg(trace, F_Trace_packet, p);
}

static void clock(tm_buf *snap, uint32_t id, uint64_t ts)
{
	tm_buf c = {0};
	f_var(&c, F_ClockSnapshot_Clock_clock_id, id);
	f_var(&c, F_ClockSnapshot_Clock_timestamp, ts);
	f_msg(snap, F_ClockSnapshot_clocks, &c);
}

/* ---- running the scan ------------------------------------------------------ */

typedef struct ev {
	tm_ev_kind kind;
	int64_t ts, raw_ts, tid;
	char name[64];
	char args[64];
} ev;

typedef struct evs {
	ev v[64];
	size_t n;
} evs;

static void on_event(void *ctx, const tm_event *e)
{
	evs *r = ctx;
	if (r->n >= sizeof(r->v) / sizeof(r->v[0]))
		return;
	ev *x = &r->v[r->n++];
	memset(x, 0, sizeof(*x));
	x->kind = e->kind;
	x->ts = e->ts;
	x->raw_ts = e->raw_ts;
	x->tid = e->tid;
	if (e->name)
		snprintf(x->name, sizeof(x->name), "%.*s", (int)e->name_len, e->name);
	if (e->args)
		snprintf(x->args, sizeof(x->args), "%s", e->args);
}

static void on_packet_count(void *ctx, const tm_packet_out *po)
{
	(void)ctx;
	(void)po;
}

/* Write the trace to a file, mount it and scan it. Returns the scan (the
 * caller frees it with its merge via done()) or NULL. */
static tm_merge *g_merge;

static tm_scan *scan(tm_buf *trace, evs *out)
{
	char path[] = "/tmp/tm_scan_proto_XXXXXX";
	int fd = mkstemp(path);
	if (fd < 0)
		return NULL;
	ssize_t w = trace->len ? write(fd, trace->data, trace->len) : 0;
	close(fd);
	tm_buf_free(trace);
	if (w < 0) {
		unlink(path);
		return NULL;
	}
	tm_error err = {0};
	g_merge = tm_merge_open(path, &err);
	unlink(path);
	if (!g_merge)
		return NULL;
	memset(out, 0, sizeof(*out));
	tm_scan_sink sink = {.ctx = out, .event = on_event};
	return tm_scan_run(g_merge, &sink);
}

static void done(tm_scan *s)
{
	tm_scan_free(s);
	tm_merge_free(g_merge);
	g_merge = NULL;
}

/* A packet holding a BOOTTIME-only ClockSnapshot at `boot` (claims). */
static void boot_snapshot(tm_buf *t, uint64_t boot)
{
	tm_buf p = {0}, s = {0};
	clock(&s, 6, boot);
	f_msg(&p, F_TracePacket_clock_snapshot, &s);
	packet(t, &p);
}

/* ---- cases ----------------------------------------------------------------- */

static tm_buf ftrace_event(uint64_t ts, uint32_t pid, uint32_t kind, tm_buf *body)
{
	tm_buf e = {0};
	f_var(&e, F_FtraceEvent_timestamp, ts);
	f_var(&e, F_FtraceEvent_pid, pid);
	if (body)
		f_msg(&e, kind, body);
	return e;
}

static void test_ftrace_bundle(void)
{
	tm_buf t = {0};
	boot_snapshot(&t, 1000);
	/* Bundle 1: MONO_RAW with {MONO_RAW 500, BOOTTIME 1500}. */
	tm_buf p = {0}, b = {0}, body = {0}, e;
	f_var(&b, F_FtraceEventBundle_cpu, 0);
	f_var(&b, F_FtraceEventBundle_ftrace_clock, 4); /* MONO_RAW */
	f_var(&b, F_FtraceEventBundle_ftrace_timestamp, 500);
	f_var(&b, F_FtraceEventBundle_boot_timestamp, 1500);
	f_var(&body, F_SchedSwitchFtraceEvent_prev_pid, 41);
	f_var(&body, F_SchedSwitchFtraceEvent_next_pid, 42);
	e = ftrace_event(600, 41, F_FtraceEvent_sched_switch, &body);
	f_msg(&b, F_FtraceEventBundle_event, &e);
	f_str(&body, F_PrintFtraceEvent_buf, "I|43|hello"); /* an instant payload */
	e = ftrace_event(700, 43, F_FtraceEvent_print, &body);
	f_msg(&b, F_FtraceEventBundle_event, &e);
	f_var(&body, UNDECLARED_BODY_FIELD, 1);
	e = ftrace_event(800, 44, FTRACE_EVENT_UNDECLARED, &body);
	f_msg(&b, F_FtraceEventBundle_event, &e);
	e = (tm_buf){0};
	f_var(&e, F_FtraceEvent_pid, 45); /* no timestamp */
	f_msg(&b, F_FtraceEventBundle_event, &e);
	e = ftrace_event(900, 46, 0, NULL); /* no event field; fieldnum-ok: no body, kind 0 is never written */
	f_msg(&b, F_FtraceEventBundle_event, &e);
	f_msg(&p, F_TracePacket_ftrace_events, &b);
	packet(&t, &p);
	/* Bundle 2: no cpu. */
	f_var(&b, F_FtraceEventBundle_ftrace_clock, 4);
	f_msg(&p, F_TracePacket_ftrace_events, &b);
	packet(&t, &p);
	/* Bundle 3: compact sched on the same clock (same ftrace_timestamp:
	 * no second snapshot). Switch deltas 100, 50; waking columns of
	 * different lengths (one timestamp, two of the rest). */
	uint64_t ts[] = {100, 50}, zero[] = {0, 0}, pids[] = {7, 8}, one[] = {5};
	tm_buf cs = {0};
	f_packed(&cs, F_FtraceEventBundle_CompactSched_switch_timestamp, ts, 2);
	f_packed(&cs, F_FtraceEventBundle_CompactSched_switch_prev_state, zero, 2);
	f_packed(&cs, F_FtraceEventBundle_CompactSched_switch_next_pid, pids, 2);
	f_packed(&cs, F_FtraceEventBundle_CompactSched_switch_next_prio, zero, 2);
	f_str(&cs, F_FtraceEventBundle_CompactSched_intern_table, "comm");
	f_packed(&cs, F_FtraceEventBundle_CompactSched_switch_next_comm_index, zero, 2);
	f_packed(&cs, F_FtraceEventBundle_CompactSched_waking_timestamp, one, 1);
	f_packed(&cs, F_FtraceEventBundle_CompactSched_waking_pid, pids, 2);
	f_packed(&cs, F_FtraceEventBundle_CompactSched_waking_target_cpu, zero, 2);
	f_packed(&cs, F_FtraceEventBundle_CompactSched_waking_prio, zero, 2);
	f_packed(&cs, F_FtraceEventBundle_CompactSched_waking_comm_index, zero, 2);
	f_var(&b, F_FtraceEventBundle_cpu, 1);
	f_var(&b, F_FtraceEventBundle_ftrace_clock, 4);
	f_var(&b, F_FtraceEventBundle_ftrace_timestamp, 500);
	f_var(&b, F_FtraceEventBundle_boot_timestamp, 1500);
	f_msg(&b, F_FtraceEventBundle_compact_sched, &cs);
	f_msg(&p, F_TracePacket_ftrace_events, &b);
	packet(&t, &p);

	evs r;
	tm_scan *s = scan(&t, &r);
	CHECK(s);
	CHECK_INT(s->failed, 0);
	CHECK_INT(r.n, 6);
	CHECK_INT(r.v[0].kind, TM_EV_SCHED);
	CHECK_STR(r.v[0].name, "sched_switch");
	CHECK_INT(r.v[0].ts, 1600);
	CHECK_INT(r.v[0].raw_ts, 600);
	CHECK_INT(r.v[0].tid, 41);
	/* a print is placed as the text line with its payload would be */
	CHECK_INT(r.v[1].kind, TM_EV_INSTANT);
	CHECK_STR(r.v[1].name, "hello");
	CHECK_INT(r.v[1].ts, 1700);
	CHECK_STR(r.v[2].name, "ftrace_999");
	CHECK_INT(r.v[2].ts, 1800);
	/* compact: absolute 100 and 150 on MONO_RAW */
	CHECK_INT(r.v[3].kind, TM_EV_SCHED);
	CHECK_STR(r.v[3].name, "sched_switch");
	CHECK_INT(r.v[3].ts, 1100);
	CHECK_INT(r.v[4].ts, 1150);
	/* waking: the columns walk in step up to the shortest (one entry),
	 * then the length mismatch counts one parse error */
	CHECK_STR(r.v[5].name, "sched_waking");
	CHECK_INT(r.v[5].ts, 1005);
	CHECK_INT(s->stats[TM_STAT_FTRACE_BUNDLE_ERRORS], 2);
	CHECK_INT(s->stats[TM_STAT_FTRACE_MISSING_EVENT_ID], 1);
	CHECK_INT(s->stats[TM_STAT_COMPACT_SCHED_ERRORS], 1);
	CHECK_INT(s->stats[TM_STAT_INVALID_SNAPSHOTS], 0);
	done(s);
}

static void test_ftrace_unknown_clock_is_fatal(void)
{
	tm_buf t = {0}, p = {0}, b = {0};
	f_var(&b, F_FtraceEventBundle_cpu, 0);
	f_var(&b, F_FtraceEventBundle_ftrace_clock, 1); /* FTRACE_CLOCK_UNKNOWN */
	f_msg(&p, F_TracePacket_ftrace_events, &b);
	packet(&t, &p);
	evs r;
	tm_scan *s = scan(&t, &r);
	CHECK(s);
	CHECK_INT(s->failed, 1);
	CHECK_STR(s->err.msg, "Unable to parse ftrace packets with unknown clock");
	done(s);
}

/* A TrackEvent instant packet on a sequence. */
static void instant(tm_buf *t, uint32_t seq, uint64_t ts, uint32_t flags, const char *name, uint64_t name_iid)
{
	tm_buf p = {0}, e = {0};
	f_var(&p, F_TracePacket_timestamp, ts);
	f_var(&p, F_TracePacket_trusted_packet_sequence_id, seq);
	if (flags)
		f_var(&p, F_TracePacket_sequence_flags, flags);
	f_var(&e, F_TrackEvent_type, 3);
	if (name)
		f_str(&e, F_TrackEvent_name, name);
	else
		f_var(&e, F_TrackEvent_name_iid, name_iid);
	f_msg(&p, F_TracePacket_track_event, &e);
	packet(t, &p);
}

static void test_sequences_and_interning(void)
{
	tm_buf t = {0}, p = {0}, m = {0}, n = {0};
	/* Needs incremental state on a sequence never cleared: skipped. */
	instant(&t, 5, 100, 2, "skipped", 0);
	/* Clear + interned name iid 1 on sequence 5. */
	f_var(&p, F_TracePacket_trusted_packet_sequence_id, 5);
	f_var(&p, F_TracePacket_incremental_state_cleared, 1);
	f_var(&n, F_EventName_iid, 1);
	f_str(&n, F_EventName_name, "interned");
	f_msg(&m, F_InternedData_event_names, &n);
	f_msg(&p, F_TracePacket_interned_data, &m);
	packet(&t, &p);
	instant(&t, 5, 200, 2, NULL, 1);
	/* Defaults and interned data without a sequence id. */
	f_var(&m, F_TracePacketDefaults_timestamp_clock_id, 6);
	f_msg(&p, F_TracePacket_trace_packet_defaults, &m);
	packet(&t, &p);
	f_var(&n, F_EventName_iid, 2);
	f_str(&n, F_EventName_name, "lost");
	f_msg(&m, F_InternedData_event_names, &n);
	f_msg(&p, F_TracePacket_interned_data, &m);
	packet(&t, &p);
	/* previous_packet_dropped invalidates sequence 5 again. */
	f_var(&p, F_TracePacket_trusted_packet_sequence_id, 5);
	f_var(&p, F_TracePacket_previous_packet_dropped, 1);
	packet(&t, &p);
	instant(&t, 5, 300, 2, NULL, 1);
	/* The same iid on another sequence is unknown there. */
	instant(&t, 6, 400, 0, NULL, 1);

	evs r;
	tm_scan *s = scan(&t, &r);
	CHECK(s);
	CHECK_INT(s->failed, 0);
	CHECK_INT(r.n, 2);
	CHECK_STR(r.v[0].name, "interned");
	CHECK_INT(r.v[0].ts, 200);
	CHECK_INT(r.v[1].ts, 400);
	CHECK_STR(r.v[1].name, "");
	CHECK_INT(s->stats[TM_STAT_SEQ_NEEDS_INCREMENTAL], 2);
	CHECK_INT(s->stats[TM_STAT_DEFAULTS_NO_SEQ], 1);
	CHECK_INT(s->stats[TM_STAT_INTERNED_NO_SEQ], 1);
	done(s);
}

/* What needs a sequence and has none: each counts its stat and is read no
 * further, as the reference's ProtoTraceReader and TrackEventTokenizer do
 * (testdata/conformance/proto_missing_seq.textproto holds the same against
 * the reference). A clear that is also a loss counts as a clear only. */
static void test_packets_without_sequence(void)
{
	tm_buf t = {0}, p = {0}, m = {0};
	f_var(&p, F_TracePacket_timestamp, 100);
	f_var(&p, F_TracePacket_incremental_state_cleared, 1);
	packet(&t, &p);
	f_var(&p, F_TracePacket_timestamp, 110);
	f_var(&p, F_TracePacket_incremental_state_cleared, 1);
	f_var(&p, F_TracePacket_previous_packet_dropped, 1);
	packet(&t, &p);
	f_var(&p, F_TracePacket_timestamp, 120);
	f_var(&p, F_TracePacket_previous_packet_dropped, 1);
	packet(&t, &p);
	f_var(&m, F_ThreadDescriptor_pid, 7);
	f_var(&m, F_ThreadDescriptor_tid, 8);
	f_var(&p, F_TracePacket_timestamp, 130);
	f_msg(&p, F_TracePacket_thread_descriptor, &m);
	packet(&t, &p);
	f_var(&m, F_TrackEvent_type, PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_INSTANT);
	f_str(&m, F_TrackEvent_name, "lost");
	f_var(&p, F_TracePacket_timestamp, 140);
	f_msg(&p, F_TracePacket_track_event, &m);
	packet(&t, &p);
	instant(&t, 5, 150, 0, "kept", 0);

	evs r;
	tm_scan *s = scan(&t, &r);
	CHECK(s);
	CHECK_INT(s->failed, 0);
	/* the other packets are placed as packets; the TrackEvent is not */
	int lost = 0;
	for (size_t i = 0; i < r.n; i++)
		lost += strcmp(r.v[i].name, "lost") == 0;
	CHECK_INT(lost, 0);
	CHECK(r.n > 0);
	CHECK_STR(r.v[r.n - 1].name, "kept");
	CHECK_INT(s->stats[TM_STAT_CLEARED_NO_SEQ], 2);
	CHECK_INT(s->stats[TM_STAT_DROPPED_NO_SEQ], 1);
	CHECK_INT(s->stats[TM_STAT_THREAD_DESCRIPTOR_NO_SEQ], 1);
	CHECK_INT(s->stats[TM_STAT_TRACK_EVENT_NO_SEQ], 1);
	CHECK_INT(s->files[0].dropped, 1); /* the TrackEvent; the rest are no events */
	done(s);
}

static void test_needs_incremental_on_sequence_zero_is_fatal(void)
{
	tm_buf t = {0}, p = {0};
	f_var(&p, F_TracePacket_timestamp, 5);
	f_var(&p, F_TracePacket_sequence_flags, 2);
	packet(&t, &p);
	evs r;
	tm_scan *s = scan(&t, &r);
	CHECK(s);
	CHECK_INT(s->failed, 1);
	CHECK_STR(s->err.msg, "TracePacket specified SEQ_NEEDS_INCREMENTAL_STATE but the TraceWriter's "
			      "sequence_id is zero (the service is probably too old)");
	done(s);
}

static void test_legacy_track_event_timestamps(void)
{
	tm_buf t = {0}, p = {0}, td = {0}, e = {0};
	/* ThreadDescriptor reference 1000 us on a cleared sequence 3. */
	f_var(&p, F_TracePacket_trusted_packet_sequence_id, 3);
	f_var(&p, F_TracePacket_incremental_state_cleared, 1);
	f_var(&td, F_ThreadDescriptor_pid, 10);
	f_var(&td, F_ThreadDescriptor_tid, 11);
	f_var(&td, F_ThreadDescriptor_reference_timestamp_us, 1000);
	f_msg(&p, F_TracePacket_thread_descriptor, &td);
	packet(&t, &p);
	/* Deltas 5 us then 2 us; an absolute 2000 us; a negative absolute. */
	int64_t fields[][2] = {
		{F_TrackEvent_timestamp_delta_us, 5},
		{F_TrackEvent_timestamp_delta_us, 2},
		{F_TrackEvent_timestamp_absolute_us, 2000},
		{F_TrackEvent_timestamp_absolute_us, -1},
	};
	for (size_t i = 0; i < 4; i++) {
		f_var(&p, F_TracePacket_trusted_packet_sequence_id, 3);
		f_var(&e, F_TrackEvent_type, 3);
		f_str(&e, F_TrackEvent_name, "legacy");
		f_var(&e, (uint32_t)fields[i][0], (uint64_t)fields[i][1]);
		f_msg(&p, F_TracePacket_track_event, &e);
		packet(&t, &p);
	}
	evs r;
	tm_scan *s = scan(&t, &r);
	CHECK(s);
	CHECK_INT(s->failed, 0);
	/* No snapshot: MONOTONIC cannot be converted, the raw value is kept. */
	CHECK_INT(r.n, 3);
	CHECK_INT(r.v[0].ts, 1005000);
	CHECK_INT(r.v[1].ts, 1007000);
	CHECK_INT(r.v[2].ts, 2000000);
	CHECK_INT(s->stats[TM_STAT_TRACK_EVENT_INVALID_TS], 1);
	CHECK_INT(s->stats[TM_STAT_UNDEFERRABLE_LOSS], 0);
	done(s);
}

static void test_chrome_service_and_plain_packets(void)
{
	tm_buf t = {0}, p = {0}, x = {0}, c = {0};
	/* {BOOTTIME 1000, MONOTONIC 100}: claims BOOTTIME. */
	clock(&c, 6, 1000);
	clock(&c, 3, 100);
	f_msg(&p, F_TracePacket_clock_snapshot, &c);
	packet(&t, &p);
	/* chrome_events on MONOTONIC 150 -> 1050, converted at once. (Without
	 * a clock id the default clock, BOOTTIME here, would apply first.) */
	f_var(&p, F_TracePacket_timestamp, 150);
	f_var(&p, F_TracePacket_timestamp_clock_id, 3);
	f_var(&x, CHROME_EVENT_BUNDLE_TRACE_EVENTS, 1);
	f_msg(&p, F_TracePacket_chrome_events, &x);
	packet(&t, &p);
	/* service_event on BOOTTIME 2000. */
	f_var(&p, F_TracePacket_timestamp, 2000);
	f_var(&x, F_TracingServiceEvent_all_data_sources_started, 1);
	f_msg(&p, F_TracePacket_service_event, &x);
	packet(&t, &p);
	/* A process tree with a timestamp on MONOTONIC 300 -> 1200. */
	f_var(&p, F_TracePacket_timestamp, 300);
	f_var(&p, F_TracePacket_timestamp_clock_id, 3);
	f_var(&x, F_ProcessTree_collection_end_timestamp, 1);
	f_msg(&p, F_TracePacket_process_tree, &x);
	packet(&t, &p);
	/* A process tree without clock id is on the default clock (BOOTTIME,
	 * trace time): 2^63 + 1 is negative as int64 and dropped. */
	f_var(&p, F_TracePacket_timestamp, (UINT64_C(1) << 63) + 1);
	f_var(&x, F_ProcessTree_collection_end_timestamp, 1);
	f_msg(&p, F_TracePacket_process_tree, &x);
	packet(&t, &p);
	evs r;
	tm_scan *s = scan(&t, &r);
	CHECK(s);
	CHECK_INT(s->failed, 0);
	CHECK_INT(r.n, 3);
	CHECK_INT(r.v[0].kind, TM_EV_PACKET);
	CHECK_STR(r.v[0].name, "chrome_events");
	CHECK_INT(r.v[0].ts, 1050);
	CHECK_STR(r.v[1].name, "service_event");
	CHECK_INT(r.v[1].ts, 2000);
	CHECK_STR(r.v[2].name, "process_tree");
	CHECK_INT(r.v[2].ts, 1200);
	CHECK_INT(r.v[2].raw_ts, 300);
	CHECK_INT(s->stats[TM_STAT_NEGATIVE_TS], 1);
	CHECK_INT(s->files[0].packets, 5);
	done(s);
}

static void test_sequence_clock_without_sequence_is_fatal(void)
{
	tm_buf t = {0}, p = {0};
	f_var(&p, F_TracePacket_timestamp, 5);
	f_var(&p, F_TracePacket_timestamp_clock_id, 70);
	packet(&t, &p);
	evs r;
	tm_scan *s = scan(&t, &r);
	CHECK(s);
	CHECK_INT(s->failed, 1);
	CHECK_STR(s->err.msg, "TracePacket specified a sequence-local clock id (70) but the TraceWriter's "
			      "sequence_id is zero (the service is probably too old)");
	done(s);
}

/* Damaged input: flip bytes of a trace mixing every packet kind above and
 * make sure the scan survives (ASan/UBSan watch the build/san run). */
static void test_damaged_input_survives(void)
{
	tm_buf base = {0}, p = {0}, b = {0}, e, body = {0}, c = {0};
	boot_snapshot(&base, 1000);
	clock(&c, 64, 10);
	clock(&c, 6, 5000);
	f_msg(&p, F_TracePacket_clock_snapshot, &c);
	f_var(&p, F_TracePacket_trusted_packet_sequence_id, 9);
	packet(&base, &p);
	f_var(&b, F_FtraceEventBundle_cpu, 3);
	f_var(&b, F_FtraceEventBundle_ftrace_clock, 2);
	f_var(&b, F_FtraceEventBundle_ftrace_timestamp, 10);
	f_var(&b, F_FtraceEventBundle_boot_timestamp, 20);
	f_var(&body, F_SchedSwitchFtraceEvent_next_pid, 1);
	e = ftrace_event(30, 1, F_FtraceEvent_sched_switch, &body);
	f_msg(&b, F_FtraceEventBundle_event, &e);
	f_msg(&p, F_TracePacket_ftrace_events, &b);
	f_var(&p, F_TracePacket_trusted_packet_sequence_id, 9);
	packet(&base, &p);
	instant(&base, 9, 50, 0, "x", 0);
	instant(&base, 9, 60, 2, NULL, 3);
	f_var(&p, F_TracePacket_machine_id, 7);
	f_var(&p, F_TracePacket_timestamp, 70);
	f_var(&p, F_TracePacket_timestamp_clock_id, 3);
	packet(&base, &p);
	uint64_t seed = 12345;
	int ran = 0;
	for (int round = 0; round < 200; round++) {
		tm_buf t = {0};
		tm_buf_put(&t, base.data, base.len);
		for (int k = 0; k < 3; k++) {
			seed = seed * 6364136223846793005u + 1442695040888963407u;
			size_t at = (size_t)(seed >> 33) % t.len;
			t.data[at] = (char)(seed >> 20);
		}
		evs r;
		tm_scan *s = scan(&t, &r);
		if (s) {
			ran++;
			done(s);
		} else if (g_merge) {
			tm_merge_free(g_merge);
			g_merge = NULL;
		}
	}
	tm_buf_free(&base);
	CHECK(ran > 0);
}

/* The scan alone (no sink: metadata.json) reads proto files ahead, with
 * each TrackEvent's times decoded on the read-ahead thread
 * (te_times_put), and places events without making them; a sink of
 * events reads them from logs too, but decodes them in full; a packet
 * sink reads in place. All three give the same results, on TrackEvents
 * of every type and legacy phase (some out of range), with and without a
 * legacy duration, with delta and absolute microsecond timestamps, and
 * without a timestamp. Each event is a file of its own in a TAR, so that
 * the files' ranges and counts show it (read-ahead needs two files or
 * more, and most are taken from their logs). */
static uint64_t result_digest(const tm_scan *s)
{
	uint64_t h = 14695981039346656037ull;
#define MIX(v) (h = (h ^ (uint64_t)(v)) * 1099511628211ull)
	MIX(s->failed);
	for (int i = 0; i < TM_STAT_COUNT; i++)
		MIX(s->stats[i]);
	for (size_t i = 0; i < s->n_files; i++) {
		const tm_scan_file *f = &s->files[i];
		MIX(f->packets);
		MIX(f->events);
		MIX(f->dropped);
		MIX(f->has_range);
		if (f->has_range) {
			MIX(f->first_own);
			MIX(f->last_own);
			MIX(f->first_trace);
			MIX(f->last_trace);
		}
	}
	MIX(s->events);
	MIX(s->has_bounds);
	if (s->has_bounds) {
		MIX(s->start_ns);
		MIX(s->end_ns);
	}
#undef MIX
	return h;
}

static void test_scan_alone_reads_ahead_the_same(void)
{
	char dir[] = "/tmp/tm_scan_alone_XXXXXX";
	CHECK(mkdtemp(dir) != NULL);
	int64_t types[] = {-1, 0, 1, 4, 7, 300};
	int64_t phases[] = {0, 'B', 'X', 'i', 's', 'M', 'Q', 256 + 'M', -5};
	int64_t durs[] = {0, 7};
	int n_files = 0;
	char path[256], cmd[1024];
	for (size_t a = 0; a < sizeof types / sizeof *types; a++)
		for (size_t b = 0; b < sizeof phases / sizeof *phases; b++)
			for (size_t c = 0; c < sizeof durs / sizeof *durs; c++)
				for (int when = 0; when < 4; when++) {
					tm_buf t = {0}, p = {0}, td = {0}, e = {0}, l = {0};
					/* a cleared sequence 3 whose thread starts at 1000 us */
					f_var(&p, F_TracePacket_trusted_packet_sequence_id, 3);
					f_var(&p, F_TracePacket_incremental_state_cleared, 1);
					f_var(&td, F_ThreadDescriptor_pid, 10);
					f_var(&td, F_ThreadDescriptor_tid, 11);
					f_var(&td, F_ThreadDescriptor_reference_timestamp_us, 1000);
					f_msg(&p, F_TracePacket_thread_descriptor, &td);
					packet(&t, &p);
					/* the one event of the file */
					f_var(&p, F_TracePacket_trusted_packet_sequence_id, 3);
					if (when != 3) /* 3: no packet timestamp */
						f_var(&p, F_TracePacket_timestamp, 5000000 + a * 1000);
					if (types[a] >= 0)
						f_var(&e, F_TrackEvent_type, (uint64_t)types[a]);
					f_str(&e, F_TrackEvent_name, "ev");
					if (types[a] == 4)
						f_var(&e, F_TrackEvent_counter_value, 42);
					if (when == 1) /* delta us */
						f_var(&e, F_TrackEvent_timestamp_delta_us, 3 + b);
					if (when == 2) /* absolute us, or 0 (the packet's) */
						f_var(&e, F_TrackEvent_timestamp_absolute_us, c ? 6000 + a : 0);
					if (phases[b]) {
						f_var(&l, F_TrackEvent_LegacyEvent_phase, (uint64_t)phases[b]);
						if (durs[c])
							f_var(&l, F_TrackEvent_LegacyEvent_duration_us,
							      (uint64_t)durs[c]);
						f_msg(&e, F_TrackEvent_legacy_event, &l);
					}
					f_msg(&p, F_TracePacket_track_event, &e);
					packet(&t, &p);
					snprintf(path, sizeof path, "%s/t%d.pftrace", dir, n_files++);
					FILE *f = fopen(path, "wb");
					CHECK(f != NULL);
					CHECK_INT(fwrite(t.data, 1, t.len, f), t.len);
					fclose(f);
					tm_buf_free(&t);
				}
	snprintf(cmd, sizeof cmd, "cd '%s' && ls t*.pftrace | sort -t t -k2 -n | tar -cf all.tar -T -", dir);
	CHECK_INT(system(cmd), 0);
	snprintf(path, sizeof path, "%s/all.tar", dir);
	tm_error err = {0};
	tm_merge *m = tm_merge_open(path, &err);
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	CHECK_INT(system(cmd), 0);
	CHECK(m != NULL);
	evs r;
	memset(&r, 0, sizeof r);
	tm_scan_sink with_events = {.ctx = &r, .event = on_event};
	tm_scan *a = tm_scan_run(m, &with_events);
	tm_scan *alone = tm_scan_run(m, NULL);
	tm_scan_sink packets = {.ctx = NULL, .packet = on_packet_count};
	tm_scan *in_place = tm_scan_run(m, &packets);
	CHECK_INT(a->failed, 0);
	CHECK(a->events > (uint64_t)n_files / 2); /* most are placed */
	CHECK(result_digest(alone) == result_digest(a));
	CHECK(result_digest(in_place) == result_digest(a));
	tm_scan_free(a);
	tm_scan_free(alone);
	tm_scan_free(in_place);
	tm_merge_free(m);
}

/* ---- a stop inside one file ------------------------------------------------ */

/* The progress sink asks for a stop after the first read of the file. */
static void stop_on_read(void *ctx, const tm_scan_progress *p)
{
	uint64_t *done = ctx;
	if (p->file && p->done > 0 && !*done) {
		*done = p->done;
		tm_stop_request();
	}
}

/* Scan `path` (one trace file of `size` bytes once decompressed, larger
 * than a read-ahead) in a child process, since a stop is for the whole
 * process and stays: the child's exit status says what went wrong, 0 for
 * nothing. */
static int stop_child(const char *path, int64_t size)
{
	tm_error err = {0};
	tm_merge *m = tm_merge_open(path, &err);
	if (!m)
		return 2;
	uint64_t done = 0;
	tm_scan_sink sink = {.ctx = &done, .progress = stop_on_read};
	tm_scan *s = tm_scan_run(m, &sink);
	int rc = !s->failed                          ? 3
		 : s->err.code != TM_EIO              ? 4 /* EINPUT would be kept in an index */
		 : strcmp(s->err.msg, "interrupted") ? 5
		 : done == 0 || done >= (uint64_t)size / 2 ? 6 /* not stopped early */
							       : 0;
	if (rc)
		fprintf(stderr, "  %s: failed %d, code %d, \"%s\", %llu of %lld bytes read at the stop\n", path,
			s->failed, (int)s->err.code, s->err.msg, (unsigned long long)done, (long long)size);
	tm_scan_free(s);
	tm_merge_free(m);
	return rc;
}

/* A signal that ends the daemon stops the scan at its next read, also
 * inside one large file (not at that file's end), for each kind of file
 * and through a decompressor; the failure is "interrupted" (TM_EIO), not
 * the input's fault, whatever the file's reader made of the failed read. */
static void test_stop_inside_a_file(void)
{
	char dir[] = "/tmp/tm_scan_stop_XXXXXX";
	CHECK(mkdtemp(dir) != NULL);
	char path[256], cmd[512];
	const char *names[] = {"t.pftrace", "t.json", "t.systrace", "tj.json.gz"};
	/* 12 MB each: past TM_AHEAD_MAX_FILE, so read in place */
	snprintf(path, sizeof path, "%s/%s", dir, names[0]);
	FILE *f = fopen(path, "wb");
	CHECK(f != NULL);
	char pad[200];
	memset(pad, 'x', sizeof pad);
	for (uint64_t i = 0; f && i < 60000; i++) {
		tm_buf t = {0}, p = {0};
		f_var(&p, F_TracePacket_timestamp, 1000000 + i * 1000);
		f_var(&p, F_TracePacket_trusted_packet_sequence_id, 1);
		f_bytes(&p, TRACE_PACKET_FOR_TESTING, pad, sizeof pad); /* a field no reader knows */
		packet(&t, &p);
		fwrite(t.data, 1, t.len, f);
		tm_buf_free(&t);
	}
	if (f)
		fclose(f);
	snprintf(path, sizeof path, "%s/%s", dir, names[1]);
	f = fopen(path, "w");
	CHECK(f != NULL);
	for (int i = 0; f && i < 200000; i++)
		fprintf(f, "%s{\"ph\":\"i\",\"ts\":%d,\"pid\":1,\"tid\":1,\"name\":\"e\",\"s\":\"t\"}",
			i ? "," : "{\"traceEvents\":[", 1000 + i);
	if (f) {
		fputs("]}\n", f);
		fclose(f);
	}
	snprintf(path, sizeof path, "%s/%s", dir, names[2]);
	f = fopen(path, "w");
	CHECK(f != NULL);
	if (f)
		fputs("# tracer: nop\n", f);
	for (int i = 0; f && i < 200000; i++)
		fprintf(f, "          <...>-1     (    1) [000] .... %d.%06d: tracing_mark_write: B|1|e\n", 1 + i / 1000000,
			i % 1000000);
	if (f)
		fclose(f);
	snprintf(cmd, sizeof cmd, "gzip -c '%s/t.json' >'%s/%s'", dir, dir, names[3]);
	CHECK_INT(system(cmd), 0);
	for (size_t k = 0; k < sizeof names / sizeof *names; k++) {
		struct stat plain;
		snprintf(path, sizeof path, "%s/%s", dir, k == 3 ? names[1] : names[k]);
		CHECK_INT(stat(path, &plain), 0);
		snprintf(path, sizeof path, "%s/%s", dir, names[k]);
		fflush(NULL);
		pid_t pid = fork();
		if (pid == 0)
			_exit(stop_child(path, (int64_t)plain.st_size));
		int st = -1;
		CHECK(pid > 0 && waitpid(pid, &st, 0) == pid);
		if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
			TT_FAIL_("%s: the stop inside the file (child status %d)", names[k], st);
	}
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	CHECK_INT(system(cmd), 0);
}

int main(void)
{
	TT_RUN(test_ftrace_bundle);
	TT_RUN(test_ftrace_unknown_clock_is_fatal);
	TT_RUN(test_sequences_and_interning);
	TT_RUN(test_packets_without_sequence);
	TT_RUN(test_needs_incremental_on_sequence_zero_is_fatal);
	TT_RUN(test_legacy_track_event_timestamps);
	TT_RUN(test_chrome_service_and_plain_packets);
	TT_RUN(test_sequence_clock_without_sequence_is_fatal);
	TT_RUN(test_damaged_input_survives);
	TT_RUN(test_scan_alone_reads_ahead_the_same);
	TT_RUN(test_stop_inside_a_file);
	TT_DONE();
}
