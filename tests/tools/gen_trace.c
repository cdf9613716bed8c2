/* tests/tools/gen_trace.c - synthetic traces for the benchmarks: writes
 * about MB MiB of one format to stdout, the same bytes on every run (a
 * fixed-seed PRNG, no clock, no environment).
 *
 *   gen_trace proto|proto2|json|systrace MB     (or KBk: "16k" for 16 KiB)
 *
 * proto: a Perfetto Trace whose packets look like a real capture: a
 *   ClockSnapshot (BOOTTIME, MONOTONIC, REALTIME) every ~10 ms of trace
 *   time; TrackEvent slices (begin/end with interned names, new names
 *   interned as they appear) and counters on several sequences, each
 *   opened with a cleared incremental state, a thread TrackDescriptor and
 *   a counter TrackDescriptor; ftrace bundles from one sequence rotating
 *   over 8 CPUs, alternately full FtraceEvent sched_switch/sched_waking
 *   events and CompactSched columns.
 * proto2: the same packets as a trace of two buffers, written one after
 *   the other as the tracing service writes them at the end: the ftrace
 *   bundles (the kernel's buffer) come after every other packet, so half
 *   the trace is out of order by the whole trace's length.
 * json: Chrome JSON, object form {"traceEvents":[...]} with M, X, B/E, i
 *   and C events over a few processes and threads.
 * systrace: atrace text: sched_switch, sched_waking and
 *   tracing_mark_write B/E/C lines.
 *
 * Field numbers are Perfetto's, written by their names in protos/trace.proto
 * (the subset): F_<Message>_<field> of trace_fields.h. */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../unit/pb_write.h"
#include "trace_fields.h"
#include "util/pb.h"

/* ---- deterministic randomness -------------------------------------------- */

static uint64_t rng_state = 0x9e3779b97f4a7c15ULL;

static uint64_t rnd(void)
{
	uint64_t x = rng_state;
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return rng_state = x;
}

static uint32_t rnd_below(uint32_t n) { return (uint32_t)(rnd() % n); }

/* ---- output ----------------------------------------------------------------- */

static uint64_t written;
static FILE *sink; /* where out() writes: stdout, or proto2's second buffer */

static void out(const void *p, size_t n)
{
	if (fwrite(p, 1, n, sink ? sink : stdout) != n) {
		perror("gen_trace: write");
		exit(1);
	}
	written += n;
}

/* ---- protobuf writing ------------------------------------------------------- */

typedef struct pb {
	uint8_t *p;
	size_t n, cap;
} pb;

static void pb_raw(pb *b, const void *p, size_t n)
{
	if (b->n + n > b->cap) {
		while (b->n + n > b->cap)
			b->cap = b->cap ? b->cap * 2 : 256;
		b->p = realloc(b->p, b->cap);
		if (!b->p)
			abort();
	}
	memcpy(b->p + b->n, p, n);
	b->n += n;
}

static void pb_uv(pb *b, uint64_t v)
{
	uint8_t t[10];
	pb_raw(b, t, pb_varint_encode(t, v));
}

static void pb_varint(pb *b, uint32_t field, uint64_t v)
{
	pb_uv(b, TM_PB_TAG(field, TM_PB_VARINT));
	pb_uv(b, v);
}

static void pb_bytes(pb *b, uint32_t field, const void *p, size_t n)
{
	pb_uv(b, TM_PB_TAG(field, TM_PB_LEN));
	pb_uv(b, n);
	pb_raw(b, p, n);
}

static void pb_str(pb *b, uint32_t field, const char *s) { pb_bytes(b, field, s, strlen(s)); }

static void pb_msg(pb *b, uint32_t field, const pb *m) { pb_bytes(b, field, m->p, m->n); }

/* Packed repeated varints. */
static void pb_packed(pb *b, uint32_t field, const uint64_t *v, size_t n, pb *tmp)
{
	tmp->n = 0;
	for (size_t i = 0; i < n; i++)
		pb_uv(tmp, v[i]);
	pb_msg(b, field, tmp);
}

/* One TracePacket as Trace.packet. */
static void emit_packet(const pb *pkt)
{
	pb hdr = {0};
	pb_uv(&hdr, TM_PB_TAG(F_Trace_packet, TM_PB_LEN));
	pb_uv(&hdr, pkt->n);
	out(hdr.p, hdr.n);
	out(pkt->p, pkt->n);
	free(hdr.p);
}

/* ---- proto ------------------------------------------------------------------ */

enum {
	SEQ_CLEARED = 1, SEQ_NEEDS = 2,
	CLK_REALTIME = 1, CLK_MONOTONIC = 3, CLK_BOOTTIME = 6,
	N_SEQ = 6, N_CPU = 8, SEQ_FTRACE = 100, SEQ_SNAP = 101,
};

static const char *const comms[] = {
	"swapper/0", "surfaceflinger", "RenderThread", "binder:1234_2", "kworker/u16:3",
	"HeapTaskDaemon", "android.bg", "composer@2.4", "traced_probes", "ksoftirqd/1",
	"com.example.app", "mali-cmar-backe", "logd.writer", "audioserver", "crtc_commit:131",
};
#define N_COMMS (sizeof comms / sizeof comms[0])

static const char *const slice_words[] = {
	"Choreographer#doFrame", "traversal", "draw", "measure", "layout", "inflate",
	"RV OnBindView", "Lock contention on a monitor lock", "binder transaction",
	"DrawFrame", "queueBuffer", "dequeueBuffer", "eglSwapBuffersWithDamageKHR",
	"postFramebuffer", "onMessageReceived", "handleMessageRefresh", "GC: Wait For Completion",
	"decodeBitmap", "Input event", "deliverInputEvent",
};
#define N_WORDS (sizeof slice_words / sizeof slice_words[0])

typedef struct seq {
	uint32_t id;
	uint64_t thread_uuid, counter_uuid;
	int pid, tid;
	uint32_t next_iid;     /* names interned so far: 1..next_iid-1 */
	uint32_t depth;        /* open slices */
} seq;

static void clock_snapshot(uint64_t boot)
{
	pb pkt = {0}, snap = {0}, clk = {0};
	static const struct { uint32_t id; int64_t off; } clocks[] = {
		{CLK_BOOTTIME, 0}, {CLK_MONOTONIC, -500000000}, {CLK_REALTIME, 1700000000000000000LL},
	};
	for (size_t i = 0; i < 3; i++) {
		clk.n = 0;
		pb_varint(&clk, F_ClockSnapshot_Clock_clock_id, clocks[i].id);
		pb_varint(&clk, F_ClockSnapshot_Clock_timestamp, (uint64_t)((int64_t)boot + clocks[i].off));
		pb_msg(&snap, F_ClockSnapshot_clocks, &clk);
	}
	pb_varint(&snap, F_ClockSnapshot_primary_trace_clock, CLK_BOOTTIME);
	pb_varint(&pkt, F_TracePacket_timestamp, boot);
	pb_varint(&pkt, F_TracePacket_trusted_packet_sequence_id, SEQ_SNAP);
	pb_msg(&pkt, F_TracePacket_clock_snapshot, &snap);
	emit_packet(&pkt);
	free(pkt.p);
	free(snap.p);
	free(clk.p);
}

/* The first packet of a sequence: cleared state, descriptors, first names. */
static void seq_start(seq *s, uint64_t ts)
{
	pb pkt = {0}, td = {0}, th = {0}, ctr = {0};
	pb_varint(&pkt, F_TracePacket_timestamp, ts);
	pb_varint(&pkt, F_TracePacket_trusted_packet_sequence_id, s->id);
	pb_varint(&pkt, F_TracePacket_sequence_flags, SEQ_CLEARED);
	pb_varint(&pkt, F_TracePacket_first_packet_on_sequence, 1);
	pb_varint(&td, F_TrackDescriptor_uuid, s->thread_uuid);
	pb_varint(&th, F_ThreadDescriptor_pid, (uint64_t)s->pid);
	pb_varint(&th, F_ThreadDescriptor_tid, (uint64_t)s->tid);
	pb_str(&th, F_ThreadDescriptor_thread_name, comms[s->tid % N_COMMS]);
	pb_msg(&td, F_TrackDescriptor_thread, &th);
	pb_msg(&pkt, F_TracePacket_track_descriptor, &td);
	static const char *const cats[] = {"view", "input", "gfx"};
	for (uint64_t i = 0; i < 3; i++) {
		th.n = 0;
		pb_varint(&th, F_EventCategory_iid, i + 1);
		pb_str(&th, F_EventCategory_name, cats[i]);
		pb_msg(&ctr, F_InternedData_event_categories, &th);
	}
	pb_msg(&pkt, F_TracePacket_interned_data, &ctr);
	emit_packet(&pkt);

	/* A counter track for this thread's process. */
	pkt.n = td.n = 0;
	pb_varint(&pkt, F_TracePacket_timestamp, ts);
	pb_varint(&pkt, F_TracePacket_trusted_packet_sequence_id, s->id);
	pb_varint(&pkt, F_TracePacket_sequence_flags, SEQ_NEEDS);
	pb_varint(&td, F_TrackDescriptor_uuid, s->counter_uuid);
	pb_str(&td, F_TrackDescriptor_name, "mem.rss");
	pb_bytes(&td, F_TrackDescriptor_counter, "", 0); /* counter {} */
	pb_msg(&pkt, F_TracePacket_track_descriptor, &td);
	emit_packet(&pkt);
	free(pkt.p);
	free(td.p);
	free(th.p);
	free(ctr.p);
}

/* A run of track events on one sequence: slices nest up to 4 deep, a
 * counter now and then, and a name interned the first time it is used. */
static uint64_t track_events(seq *s, uint64_t ts, int n)
{
	pb pkt = {0}, te = {0}, in = {0}, en = {0};
	char name[96];
	for (int i = 0; i < n; i++) {
		ts += 1000 + rnd_below(20000);
		pkt.n = te.n = in.n = 0;
		pb_varint(&pkt, F_TracePacket_timestamp, ts);
		pb_varint(&pkt, F_TracePacket_trusted_packet_sequence_id, s->id);
		pb_varint(&pkt, F_TracePacket_sequence_flags, SEQ_NEEDS);
		uint32_t r = rnd_below(16);
		if (r == 0) {
			pb_varint(&te, F_TrackEvent_type, 4); /* TYPE_COUNTER */
			pb_varint(&te, F_TrackEvent_track_uuid, s->counter_uuid);
			pb_varint(&te, F_TrackEvent_counter_value, 100000000 + rnd_below(50000000));
		} else if (s->depth > 0 && (s->depth >= 4 || r < 8)) {
			pb_varint(&te, F_TrackEvent_type, 2); /* TYPE_SLICE_END */
			pb_varint(&te, F_TrackEvent_track_uuid, s->thread_uuid);
			s->depth--;
		} else {
			/* names: a word and a number; most are reused, some new */
			uint32_t want = s->next_iid > 1 && rnd_below(64) ? 1 + rnd_below(s->next_iid - 1)
									 : s->next_iid;
			if (want == s->next_iid) {
				snprintf(name, sizeof name, "%s %u", slice_words[want % N_WORDS], want);
				en.n = 0;
				pb_varint(&en, F_EventName_iid, want);
				pb_str(&en, F_EventName_name, name);
				pb_msg(&in, F_InternedData_event_names, &en);
				pb_msg(&pkt, F_TracePacket_interned_data, &in);
				s->next_iid++;
			}
			pb_varint(&te, F_TrackEvent_type, r == 15 ? 3 : 1); /* INSTANT or SLICE_BEGIN */
			pb_varint(&te, F_TrackEvent_track_uuid, s->thread_uuid);
			pb_varint(&te, F_TrackEvent_category_iids, 1 + rnd_below(3));
			pb_varint(&te, F_TrackEvent_name_iid, want);
			if (r != 15)
				s->depth++;
		}
		pb_msg(&pkt, F_TracePacket_track_event, &te);
		emit_packet(&pkt);
	}
	free(pkt.p);
	free(te.p);
	free(in.p);
	free(en.p);
	return ts;
}

/* One ftrace bundle of `n` sched events on `cpu` from ts on; full
 * FtraceEvent messages or CompactSched columns. Returns the last ts. */
static uint64_t ftrace_bundle(uint32_t cpu, uint64_t ts, int n, int compact)
{
	pb pkt = {0}, bundle = {0}, ev = {0}, body = {0}, cs = {0}, tmp = {0};
	pb_varint(&bundle, F_FtraceEventBundle_cpu, cpu);
	if (!compact) {
		for (int i = 0; i < n; i++) {
			ts += 500 + rnd_below(30000);
			ev.n = body.n = 0;
			pb_varint(&ev, F_FtraceEvent_timestamp, ts);
			uint32_t a = rnd_below(N_COMMS), b = rnd_below(N_COMMS);
			pb_varint(&ev, F_FtraceEvent_pid, 1000 + a);
			if (rnd_below(4)) {
				pb_str(&body, F_SchedSwitchFtraceEvent_prev_comm, comms[a]);
				pb_varint(&body, F_SchedSwitchFtraceEvent_prev_pid, 1000 + a);
				pb_varint(&body, F_SchedSwitchFtraceEvent_prev_prio, 120);
				pb_varint(&body, F_SchedSwitchFtraceEvent_prev_state, rnd_below(3));
				pb_str(&body, F_SchedSwitchFtraceEvent_next_comm, comms[b]);
				pb_varint(&body, F_SchedSwitchFtraceEvent_next_pid, 1000 + b);
				pb_varint(&body, F_SchedSwitchFtraceEvent_next_prio, 100 + rnd_below(40));
				pb_msg(&ev, F_FtraceEvent_sched_switch, &body);
			} else {
				pb_str(&body, F_SchedWakingFtraceEvent_comm, comms[b]);
				pb_varint(&body, F_SchedWakingFtraceEvent_pid, 1000 + b);
				pb_varint(&body, F_SchedWakingFtraceEvent_prio, 120);
				pb_varint(&body, F_SchedWakingFtraceEvent_target_cpu, rnd_below(N_CPU));
				pb_msg(&ev, F_FtraceEvent_sched_waking, &body);
			}
			pb_msg(&bundle, F_FtraceEventBundle_event, &ev);
		}
	} else {
		uint64_t *sw_ts = calloc((size_t)n, sizeof(uint64_t)), *sw_state = calloc((size_t)n, 8),
			 *sw_pid = calloc((size_t)n, 8), *sw_prio = calloc((size_t)n, 8),
			 *sw_comm = calloc((size_t)n, 8), *wk_ts = calloc((size_t)n, 8),
			 *wk_pid = calloc((size_t)n, 8), *wk_cpu = calloc((size_t)n, 8),
			 *wk_prio = calloc((size_t)n, 8), *wk_comm = calloc((size_t)n, 8),
			 *wk_flags = calloc((size_t)n, 8);
		size_t nsw = 0, nwk = 0;
		uint64_t last_sw = 0, last_wk = 0;
		for (int i = 0; i < n; i++) {
			ts += 500 + rnd_below(30000);
			uint32_t c = rnd_below(N_COMMS);
			if (rnd_below(4)) {
				sw_ts[nsw] = ts - last_sw; /* delta-encoded */
				last_sw = ts;
				sw_state[nsw] = rnd_below(3);
				sw_pid[nsw] = 1000 + c;
				sw_prio[nsw] = 120;
				sw_comm[nsw] = c;
				nsw++;
			} else {
				wk_ts[nwk] = ts - last_wk;
				last_wk = ts;
				wk_pid[nwk] = 1000 + c;
				wk_cpu[nwk] = rnd_below(N_CPU);
				wk_prio[nwk] = 120;
				wk_comm[nwk] = c;
				wk_flags[nwk] = 1;
				nwk++;
			}
		}
		for (size_t i = 0; i < N_COMMS; i++)
			pb_str(&cs, F_FtraceEventBundle_CompactSched_intern_table, comms[i]);
		pb_packed(&cs, F_FtraceEventBundle_CompactSched_switch_timestamp, sw_ts, nsw, &tmp);
		pb_packed(&cs, F_FtraceEventBundle_CompactSched_switch_prev_state, sw_state, nsw, &tmp);
		pb_packed(&cs, F_FtraceEventBundle_CompactSched_switch_next_pid, sw_pid, nsw, &tmp);
		pb_packed(&cs, F_FtraceEventBundle_CompactSched_switch_next_prio, sw_prio, nsw, &tmp);
		pb_packed(&cs, F_FtraceEventBundle_CompactSched_switch_next_comm_index, sw_comm, nsw, &tmp);
		pb_packed(&cs, F_FtraceEventBundle_CompactSched_waking_timestamp, wk_ts, nwk, &tmp);
		pb_packed(&cs, F_FtraceEventBundle_CompactSched_waking_pid, wk_pid, nwk, &tmp);
		pb_packed(&cs, F_FtraceEventBundle_CompactSched_waking_target_cpu, wk_cpu, nwk, &tmp);
		pb_packed(&cs, F_FtraceEventBundle_CompactSched_waking_prio, wk_prio, nwk, &tmp);
		pb_packed(&cs, F_FtraceEventBundle_CompactSched_waking_comm_index, wk_comm, nwk, &tmp);
		pb_packed(&cs, F_FtraceEventBundle_CompactSched_waking_common_flags, wk_flags, nwk, &tmp);
		pb_msg(&bundle, F_FtraceEventBundle_compact_sched, &cs);
		free(sw_ts), free(sw_state), free(sw_pid), free(sw_prio), free(sw_comm);
		free(wk_ts), free(wk_pid), free(wk_cpu), free(wk_prio), free(wk_comm), free(wk_flags);
	}
	pb_varint(&pkt, F_TracePacket_trusted_packet_sequence_id, SEQ_FTRACE);
	pb_msg(&pkt, F_TracePacket_ftrace_events, &bundle);
	emit_packet(&pkt);
	free(pkt.p), free(bundle.p), free(ev.p), free(body.p), free(cs.p), free(tmp.p);
	return ts;
}

/* `second`: a file for the ftrace bundles (proto2), else NULL. */
static void gen_proto(uint64_t limit, FILE *second)
{
	seq seqs[N_SEQ];
	uint64_t now = 1000000000ULL; /* BOOTTIME, ns */
	clock_snapshot(now);
	for (uint32_t i = 0; i < N_SEQ; i++) {
		seqs[i] = (seq){.id = i + 1, .thread_uuid = 0x1000 + i, .counter_uuid = 0x2000 + i,
				.pid = 200 + (int)(i / 2), .tid = 300 + (int)i, .next_iid = 1};
		seq_start(&seqs[i], now);
	}
	uint64_t last_snap = now, round = 0;
	while (written < limit) {
		/* Each round covers ~1 ms: every CPU's bundle, every sequence's
		 * events, each starting at the round's start. */
		uint64_t end = now;
		sink = second;
		for (uint32_t cpu = 0; cpu < N_CPU; cpu++) {
			uint64_t t = ftrace_bundle(cpu, now, 48, (round + cpu) % 2 == 0);
			if (t > end)
				end = t;
		}
		sink = NULL;
		for (uint32_t i = 0; i < N_SEQ; i++) {
			uint64_t t = track_events(&seqs[i], now, 40);
			if (t > end)
				end = t;
		}
		now = end;
		if (now - last_snap >= 10000000ULL) {
			clock_snapshot(now);
			last_snap = now;
		}
		round++;
	}
	if (second) { /* the second buffer after the first */
		char b[65536];
		size_t n;
		rewind(second);
		while ((n = fread(b, 1, sizeof b, second)) > 0)
			if (fwrite(b, 1, n, stdout) != n) {
				perror("gen_trace: write");
				exit(1);
			}
		fclose(second);
	}
}

/* ---- Chrome JSON ------------------------------------------------------------ */

static void outs(const char *s) { out(s, strlen(s)); }

static void gen_json(uint64_t limit)
{
	char line[512];
	outs("{\"traceEvents\":[\n");
	int first = 1;
	for (int p = 0; p < 4; p++) {
		snprintf(line, sizeof line,
			 "%s{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":%d,\"tid\":%d,\"args\":{\"name\":\"%s\"}}",
			 first ? "" : ",\n", 100 + p, 100 + p, comms[p + 1]);
		outs(line);
		first = 0;
		for (int t = 0; t < 4; t++) {
			snprintf(line, sizeof line,
				 ",\n{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":%d,\"tid\":%d,\"args\":{\"name\":\"%s\"}}",
				 100 + p, 1000 + p * 10 + t, comms[(p * 4 + t) % N_COMMS]);
			outs(line);
		}
	}
	double ts = 1000.0; /* us */
	int depth[16] = {0};
	while (written < limit) {
		ts += (double)(1 + rnd_below(5000)) / 1000.0;
		uint32_t th = rnd_below(16), p = th / 4;
		int pid = 100 + (int)p, tid = 1000 + (int)p * 10 + (int)(th % 4);
		const char *w = slice_words[rnd_below(N_WORDS)];
		uint32_t r = rnd_below(16);
		if (r < 6)
			snprintf(line, sizeof line,
				 ",\n{\"name\":\"%s\",\"cat\":\"view,input\",\"ph\":\"X\",\"ts\":%.3f,\"dur\":%.3f,"
				 "\"pid\":%d,\"tid\":%d,\"args\":{\"frame\":%u}}",
				 w, ts, (double)rnd_below(200000) / 1000.0, pid, tid, rnd_below(100000));
		else if (r < 9 && depth[th] < 8) {
			snprintf(line, sizeof line,
				 ",\n{\"name\":\"%s\",\"cat\":\"toplevel\",\"ph\":\"B\",\"ts\":%.3f,\"pid\":%d,\"tid\":%d}",
				 w, ts, pid, tid);
			depth[th]++;
		} else if (r < 12 && depth[th] > 0) {
			snprintf(line, sizeof line, ",\n{\"ph\":\"E\",\"ts\":%.3f,\"pid\":%d,\"tid\":%d}", ts, pid,
				 tid);
			depth[th]--;
		} else if (r < 14)
			snprintf(line, sizeof line,
				 ",\n{\"name\":\"%s\",\"cat\":\"input\",\"ph\":\"i\",\"s\":\"t\",\"ts\":%.3f,\"pid\":%d,\"tid\":%d}",
				 w, ts, pid, tid);
		else
			snprintf(line, sizeof line,
				 ",\n{\"name\":\"heap\",\"ph\":\"C\",\"ts\":%.3f,\"pid\":%d,\"args\":{\"allocated\":%u,\"used\":%u}}",
				 ts, pid, 1000000 + rnd_below(9000000), rnd_below(1000000));
		outs(line);
	}
	outs("\n]}\n");
}

/* ---- systrace --------------------------------------------------------------- */

static void gen_systrace(uint64_t limit)
{
	char line[512];
	outs("# tracer: nop\n#\n# entries-in-buffer/entries-written: 0/0   #P:8\n#\n"
	     "#                                      _-----=> irqs-off\n"
	     "#           TASK-PID    TGID   CPU#  ||||    TIMESTAMP  FUNCTION\n"
	     "#              | |        |      |   ||||       |         |\n");
	uint64_t ts = 1000000000ULL; /* ns */
	int depth[N_COMMS] = {0};
	while (written < limit) {
		ts += 200 + rnd_below(20000);
		uint32_t a = rnd_below(N_COMMS), b = rnd_below(N_COMMS), cpu = rnd_below(N_CPU);
		uint32_t r = rnd_below(8);
		int pid = 1000 + (int)a, tgid = 1000 + (int)(a & ~3u);
		unsigned long long sec = ts / 1000000000ULL, usec = ts % 1000000000ULL / 1000ULL;
		int n = snprintf(line, sizeof line, "%16s-%-5d (%5d) [%03u] d..2 %5llu.%06llu: ", comms[a], pid,
				 tgid, cpu, sec, usec);
		const char *w = slice_words[rnd_below(N_WORDS)];
		if (r < 3)
			snprintf(line + n, sizeof line - (size_t)n,
				 "sched_switch: prev_comm=%s prev_pid=%d prev_prio=120 prev_state=%s ==> "
				 "next_comm=%s next_pid=%d next_prio=%u\n",
				 comms[a], pid, rnd_below(2) ? "S" : "R+", comms[b], 1000 + (int)b, 100 + rnd_below(40));
		else if (r < 4)
			snprintf(line + n, sizeof line - (size_t)n,
				 "sched_waking: comm=%s pid=%d prio=120 target_cpu=%03u\n", comms[b], 1000 + (int)b,
				 rnd_below(N_CPU));
		else if (r < 6 && depth[a] < 8) {
			snprintf(line + n, sizeof line - (size_t)n, "tracing_mark_write: B|%d|%s\n", tgid, w);
			depth[a]++;
		} else if (r < 7 && depth[a] > 0) {
			snprintf(line + n, sizeof line - (size_t)n, "tracing_mark_write: E|%d\n", tgid);
			depth[a]--;
		} else
			snprintf(line + n, sizeof line - (size_t)n, "tracing_mark_write: C|%d|queued|%u\n", tgid,
				 rnd_below(64));
		outs(line);
	}
}

int main(int argc, char **argv)
{
	char *end = NULL;
	unsigned long long size = argc == 3 ? strtoull(argv[2], &end, 10) : 0;
	int kib = end && *end == 'k';
	if (argc != 3 || *(end + kib) || size == 0) {
		fprintf(stderr, "usage: gen_trace proto|proto2|json|systrace MB|KBk\n");
		return 2;
	}
	static char buf[1 << 20];
	setvbuf(stdout, buf, _IOFBF, sizeof buf);
	uint64_t limit = (uint64_t)size << (kib ? 10 : 20);
	if (strcmp(argv[1], "proto") == 0)
		gen_proto(limit, NULL);
	else if (strcmp(argv[1], "proto2") == 0) {
		FILE *second = tmpfile();
		if (!second) {
			perror("gen_trace: tmpfile");
			return 1;
		}
		gen_proto(limit, second);
	}
	else if (strcmp(argv[1], "json") == 0)
		gen_json(limit);
	else if (strcmp(argv[1], "systrace") == 0)
		gen_systrace(limit);
	else {
		fprintf(stderr, "gen_trace: unknown format %s\n", argv[1]);
		return 2;
	}
	if (fflush(stdout) != 0) {
		perror("gen_trace: write");
		return 1;
	}
	return 0;
}
