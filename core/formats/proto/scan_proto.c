/* core/formats/proto/scan_proto.c - the proto half of the scan tier: one Perfetto
 * protobuf file read packet by packet, routed to per-machine readers
 * (spec/machines.md §4), with per-sequence state (formats.md §5.2), clock
 * snapshots and claims (clocks.md §3.1, §5.2, §6), timestamp conversion
 * with the end-of-file retry (§6.1), ftrace bundles, track events,
 * SystemInfo (machines.md §7) and remote_clock_sync (machines.md §8).
 *
 * Memory stays bounded by what the merge must remember: per-sequence state
 * (interned event names capped per file), and copies of the packets set
 * aside for their retry (capped; beyond the cap a packet is lost at once).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/ahead.h"
#include "wire/proto.h"
#include "model/model.h"
#include "scan/scan_internal.h"
#include "formats/proto/proto_format.h"
#include "formats/proto/samples.h"
#include "formats/systrace/systrace_format.h"
#include "trace.pb-c.h"

/* Total bytes of packets set aside for the end-of-file retry, per file.
 * The reference keeps them all; a cap keeps hostile input from holding the
 * whole trace in memory. Beyond it a packet counts as undeferrable loss. */
#define ASIDE_MAX_BYTES ((size_t)64 << 20)
/* Interned event-name bytes kept per file; names beyond it read as absent
 * (names only label events, they never change a timestamp). */
#define NAMES_MAX_BYTES ((size_t)64 << 20)
/* The interned stack profiles (samples.h) the file's sequences hold at
 * once (a clear gives its sequence's back); a budget of their own, so
 * that they never starve the names. */
#define STACKS_MAX_BYTES ((size_t)64 << 20)

/* ---- a small uint64 -> uint32 hash map ------------------------------------ */


/* ---- per-reader state ------------------------------------------------------ */

typedef struct name_ref {
	size_t off, len;
	uint32_t pool_id; /* its id in the model's string pool, once asked (0: not yet) */
} name_ref;

/* One trusted_packet_sequence_id of one reader (formats.md §5.2). */
typedef struct seq_state {
	int valid;                /* incremental state valid (starts invalid) */
	int has_clock_default;    /* TracePacketDefaults.timestamp_clock_id */
	uint32_t clock_default;
	tm_u64map names;             /* interned strings: iid * 4 + kind -> names_at index
				   * (kind: IK_NAME, IK_CATEGORY, IK_ANNOTATION) */
	name_ref *names_at;
	size_t n_names, cap_names;
	tm_buf pool;              /* the name bytes */
	int ts_valid;             /* legacy TrackEvent reference timestamp set */
	int64_t ts_ns;            /* running legacy timestamp, ns (MONOTONIC) */
	int has_default_track;    /* TrackEventDefaults.track_uuid */
	uint64_t default_track;
	int has_thread;           /* a ThreadDescriptor packet named the thread */
	int64_t pid, tid;
	/* TrackEventDefaults' extra counter track uuids, as TrackEvent fields
	 * 31 and 45 for the model's records (resolve_track_event) */
	tm_buf extra_uuids, extra_double_uuids;
	uint32_t generation;      /* incremental state clears and losses */
	/* the stack samples' interned data and StackSampleDefaults.source,
	 * when the model wants records (samples.h) */
	pr_stacks *stacks;
	int has_stack_source;
	tm_buf stack_source;
	int has_stack_defaults;   /* StackSampleDefaults (its counters) */
	tm_buf stack_defaults;
	/* PerfSampleDefaults' counter names (samples.h), when the model
	 * wants records */
	pr_perf_names perf;       /* pointing into perf_names */
	tm_buf perf_names;
	/* for the stats a TraceStats packet sets (on_trace_stats): the
	 * reference's SequenceScopedState counts */
	int seen;                 /* a packet of the sequence came before */
	uint32_t dropped;         /* packets after a loss (previous_packet_dropped) */
	uint32_t loss[8];         /* of those, per DataLossReason bit 1..8 */
	uint32_t ni_total, ni_skipped; /* SEQ_NEEDS_INCREMENTAL_STATE packets, skipped ones */
} seq_state;

/* The pid and tid a track descriptor gave its uuid (-1 when none), for
 * the events' pid/tid; bounded per reader. */
typedef struct track_ids {
	int64_t pid, tid;
} track_ids;
#define MAX_TRACKS (1u << 20)

/* The reader of one machine of the file: its row, tracker and sequences
 * (machines.md §4: everything is scoped per (file, machine)). */
typedef struct reader {
	uint32_t row;
	tm_clock_tracker *t;
	tm_u64map seq_index;         /* sequence id -> seqs index */
	seq_state *seqs;
	size_t n_seqs, cap_seqs;
	int64_t last_ftrace_ts;   /* clocks.md §3.1 dedup; the reference starts at 0 */
	uint8_t cpu_seen[TM_FTRACE_MAX_CPUS / 8];
	tm_u64map tracks;            /* track uuid -> track_at index */
	track_ids *track_at;
	size_t n_tracks, cap_tracks;
	size_t aside_head, aside_tail; /* set-aside packets, index + 1, 0 = none */
	/* The last lookups (packets of a sequence, events of a track come
	 * in runs): index + 1, 0 = none. Indices are stable. */
	uint32_t last_seq;
	size_t last_seq_ix;
	uint64_t last_track;
	uint32_t last_track_ix;
	/* The sorter queues the reference's reader for this machine makes:
	 * packets and track events at once, then per CPU as first used
	 * (ftrace events, compact switches, compact wakings; index + 1). */
	uint32_t q_packets, q_events, q_streaming;
	uint32_t *q_ftrace, *q_switch, *q_waking;
	int64_t latest_ts;        /* the reference's latest_timestamp_ */
} reader;

/* A packet set aside for its retry at end of file (clocks.md §6.1). */
typedef struct aside {
	uint8_t *bytes;
	size_t n;
	size_t next;              /* index + 1 of the reader's next one */
} aside;

typedef struct pscan {
	scan_file *sf;
	scan_ctx *sc;
	const tm_manifest *man;
	int machine_override;     /* manifest `machine` on this file */
	int pin;                  /* manifest PIN `clocks` on this file */
	int multi;                /* manifest `machines` on this file */
	reader *readers;          /* [0] is the base reader */
	size_t n_readers, cap_readers;
	tm_u64map by_machine;        /* embedded machine_id -> readers index */
	int keep_ts;              /* a packet sink: keep ft / sw / wk below */
	int records;              /* the model's records are made (scan_wants_records) */
	int events;               /* the sink reads placed events (scan_wants_events) */
	/* The packet being handled came from a log with its TrackEvent's
	 * times decoded (te_times_put): they are here. */
	int has_te_logged;
	struct te_head *te_logged;
	int host_used, adopted_set;
	uint32_t adopted;
	int eof;                  /* retrying set-aside packets */
	aside *aside;
	size_t n_aside, cap_aside, aside_bytes;
	size_t name_bytes;
	size_t stack_bytes;       /* the sequences' interned stacks kept now */
	/* The file's last TraceConfig as far as config_write_into_file_no_flush
	 * needs it (decided at the end of the scan: scan_ctx.no_flush). */
	int cfg_seen, cfg_no_flush;
	uint32_t cfg_row;
	/* decoders, reused */
	tm_clock_snapshot snap;
	tm_remote_clock_sync rcs;
	tm_interned_data idata;
	tm_ftrace_bundle bundle;
	tm_packet retry;
	tm_packet logged;         /* the packet read from a log (read_logged) */
	tm_raw_reading *rr;
	size_t cap_rr;
	tm_sync_reading *sr;
	size_t cap_sr;
	tm_remote_sync_round *rounds;
	size_t cap_rounds;
	tm_buf rec, te;           /* a model record being built; a resolved TrackEvent */
	tm_buf sample;            /* a sample's record after its head (samples.h) */
	/* the packet being handled, for the exporter (tm_packet_out) */
	int po_drop;              /* dropped, or set aside: not handed out now */
	int po_has_ts;
	int64_t po_ts;
	TM_VEC(int64_t) ft, sw, wk;
	/* a StreamingProfilePacket's samples' trace times (INT64_MIN: not
	 * pushed) and its sequence's thread, for the exporter */
	TM_VEC(int64_t) smp;
	int64_t smp_pid, smp_tid;
	unsigned smp_logs;        /* TM_SAMPLE_LOG_* */
} pscan;

static void vec_push(int64_t **v, size_t *n, size_t *cap, int64_t x)
{
	TM_GROW(*v, *cap, *n + 1);
	(*v)[(*n)++] = x;
}
/* The per-event trace times are kept for the exporter only (po_emit). */
#define PUSH(vec, x)                                                            \
	do {                                                                    \
		int64_t x_ = (x);                                               \
		if (ps->keep_ts)                                                \
			vec_push(&(vec).v, &(vec).n, &(vec).cap, x_);           \
	} while (0)

static const char msg_machine_override[] =
	"perfetto_manifest: a `machine` override attributes the file to one machine, but the file contains "
	"packets from multiple machines. Replace `machine` with a `machines` block that maps each embedded "
	"machine_id to a named machine, e.g. \"machines\": [{\"id\": 0, \"name\": \"phone\"}, {\"id\": 7, "
	"\"name\": \"vm\"}].";
static const char msg_pin_multi_machine[] =
	"perfetto_manifest: a `clocks` override applies only to a single-machine file, but the file contains "
	"packets from multiple machines. Remove the `clocks` override and let the trace's own remote clock "
	"snapshots align the machines; if you need to anchor a specific embedded machine, split it into its "
	"own file and override that.";
static const char msg_pin_snapshot[] = "perfetto_manifest: clock overrides require the trace to use a single clock";

/* ---- small helpers --------------------------------------------------------- */

static int64_t sat_mul_1000(int64_t v)
{
	if (v > INT64_MAX / 1000)
		return INT64_MAX;
	if (v < INT64_MIN / 1000)
		return INT64_MIN;
	return v * 1000;
}

static int64_t sat_add(int64_t a, int64_t b)
{
	if (b > 0 && a > INT64_MAX - b)
		return INT64_MAX;
	if (b < 0 && a < INT64_MIN - b)
		return INT64_MIN;
	return a + b;
}

static int is_seq_clock(uint32_t id)
{
	return id >= TM_CLOCK_SEQ_FIRST && id <= TM_CLOCK_SEQ_LAST;
}

static void seq_reset_interned(seq_state *s)
{
	tm_u64map_clear(&s->names);
	s->n_names = 0;
	s->pool.len = 0;
}

static seq_state *seq_find(reader *rd, uint32_t id);

/* Twice a packet: the last sequence's answer without a call. */
static inline seq_state *seq_get(reader *rd, uint32_t id)
{
	if (rd->last_seq_ix && rd->last_seq == id)
		return &rd->seqs[rd->last_seq_ix - 1];
	return seq_find(rd, id);
}

static __attribute__((noinline)) seq_state *seq_find(reader *rd, uint32_t id)
{
	const uint32_t *ix = tm_u64map_get(&rd->seq_index, id);
	if (ix) {
		rd->last_seq = id;
		rd->last_seq_ix = *ix;
		return &rd->seqs[*ix - 1];
	}
	TM_GROW(rd->seqs, rd->cap_seqs, rd->n_seqs + 1);
	seq_state *s = &rd->seqs[rd->n_seqs];
	memset(s, 0, sizeof(*s));
	tm_u64map_put(&rd->seq_index, id, (uint32_t)rd->n_seqs);
	rd->n_seqs++;
	rd->last_seq = id;
	rd->last_seq_ix = rd->n_seqs;
	return s;
}

static void seq_free(seq_state *s)
{
	tm_buf_free(&s->extra_uuids);
	tm_buf_free(&s->extra_double_uuids);
	tm_u64map_free(&s->names);
	free(s->names_at);
	tm_buf_free(&s->pool);
	pr_stacks_free(s->stacks);
	tm_buf_free(&s->stack_source);
	tm_buf_free(&s->stack_defaults);
	tm_buf_free(&s->perf_names);
}

/* InternedData tables the scan keeps: event names always; categories and
 * debug annotation names when the model wants records. */
enum { IK_NAME, IK_CATEGORY, IK_ANNOTATION };

/* The interned string of kind `kind` named iid in the sequence, or NULL;
 * its text in *name and *len. */
static name_ref *seq_ref(const seq_state *s, int kind, uint64_t iid, const char **name, size_t *len)
{
	const uint32_t *ix = tm_u64map_get(&s->names, iid * 4 + (uint64_t)kind);
	if (!ix)
		return NULL;
	name_ref *r = &s->names_at[*ix - 1];
	*name = s->pool.data ? s->pool.data + r->off : "";
	*len = r->len;
	return r;
}

static int seq_interned(const seq_state *s, int kind, uint64_t iid, const char **name, size_t *len)
{
	return seq_ref(s, kind, iid, name, len) != NULL;
}

static int seq_name(const seq_state *s, uint64_t iid, const char **name, size_t *len)
{
	return seq_interned(s, IK_NAME, iid, name, len);
}

/* seq_interned, and with `pool` the string's id in the model's string
 * pool (scan_intern; 0 without a pool, or when the pass keeps none),
 * asked once per interned string: a Chrome trace names a few hundred
 * strings and refers to them in every event, and hashing each again was
 * a twelfth of the proto timeline's scan, which runs on one core. The id
 * of a string never changes; an iid defined again starts over
 * (intern_table). */
static int seq_pooled(scan_file *sf, const seq_state *s, int kind, uint64_t iid, int pool, const char **name,
		      size_t *len, uint32_t *id)
{
	name_ref *r = seq_ref(s, kind, iid, name, len);
	if (!r)
		return 0;
	if (pool && !r->pool_id)
		r->pool_id = scan_intern(sf, *name, *len);
	*id = pool ? r->pool_id : 0;
	return 1;
}

static inline __attribute__((always_inline)) tm_event event_init(const reader *rd, tm_ev_kind kind)
{
	return (tm_event){.machine_row = rd->row, .kind = kind, .dur = -1, .pid = -1, .tid = -1, .cpu = -1};
}

/* ---- machines (machines.md §4) ---------------------------------------------- */

/* manifest.md §8.3/§8.4: a single-machine override met a second machine. */
static int check_single_machine(const pscan *ps, tm_error *err)
{
	if (ps->machine_override)
		return tm_err(err, TM_EINPUT, "%s", msg_machine_override);
	if (ps->pin)
		return tm_err(err, TM_EINPUT, "%s", msg_pin_multi_machine);
	return 0;
}

static size_t reader_add(pscan *ps, uint32_t row, tm_clock_tracker *t)
{
	TM_GROW(ps->readers, ps->cap_readers, ps->n_readers + 1);
	reader *rd = &ps->readers[ps->n_readers];
	memset(rd, 0, sizeof(*rd));
	rd->row = row;
	rd->t = t;
	rd->q_packets = scan_new_queue(ps->sf);
	rd->q_events = scan_new_queue(ps->sf);
	/* ProfileModule's stream of Chrome's samples, made with the reader */
	rd->q_streaming = scan_new_queue(ps->sf);
	return ps->n_readers++;
}

/* The reader a packet with machine_id m != 0 goes to: 0 (base) or a remote
 * one, created on first use. Returns -1 with err on a manifest error. */
static int64_t route(pscan *ps, uint32_t m, tm_error *err)
{
	scan_ctx *sc = ps->sc;
	scan_file *sf = ps->sf;
	if (!ps->adopted_set) {
		if (check_single_machine(ps, err))
			return -1;
		ps->adopted_set = 1;
		ps->adopted = 0;
		if (!ps->host_used && sc->s->machines.rows[sf->base_row].raw_id == TM_RAW_HOST && !ps->multi &&
		    !scan_raw_has_context(sc, m)) {
			/* Adoption: the base row becomes machine m. */
			tm_machines_set_raw(&sc->s->machines, sf->base_row, m);
			sf->base_raw = m;
			scan_raw_mark(sc, m);
			ps->adopted = m;
		}
	}
	if (m == ps->adopted)
		return 0;
	const uint32_t *ix = tm_u64map_get(&ps->by_machine, m);
	if (ix)
		return *ix - 1;
	int64_t raw = m;
	if (ps->multi) {
		raw = tm_manifest_entry_remap(ps->man, (size_t)sf->entry, m);
		if (raw < 0) {
			tm_err(err, TM_EINPUT, "perfetto_manifest: machines: trace has a packet from undeclared machine id %u",
			       m);
			return -1;
		}
	}
	uint32_t row = scan_row_for_raw(sc, raw);
	tm_clock_tracker *t = scan_tracker(sf, row);
	uint32_t dc;
	if (tm_tracker_default_clock(ps->readers[0].t, &dc))
		tm_tracker_set_default_clock(t, dc);
	tm_tracker_set_sync_clock(t, TM_CLOCK_BOOTTIME);
	size_t ri = reader_add(ps, row, t);
	tm_u64map_put(&ps->by_machine, m, (uint32_t)ri);
	return (int64_t)ri;
}

/* ---- clock snapshots (clocks.md §3.1, §5.2, §6) ------------------------------- */

static int on_clock_snapshot(pscan *ps, reader *rd, const tm_packet *p, tm_error *err)
{
	/* The reference refuses the snapshot of a PINned file before reading it. */
	if (ps->pin)
		return tm_err(err, TM_EINPUT, "%s", msg_pin_snapshot);
	uint32_t seq = p->trusted_packet_sequence_id;
	tm_clock_snapshot *s = &ps->snap;
	tm_clock_snapshot_decode(p->clock_snapshot, s);
	int has_boot = 0, has_file = 0;
	for (size_t i = 0; i < s->n; i++) {
		uint32_t id = s->clocks[i].clock_id;
		/* formats.md §5.3: the number printed is always 0 (reference quirk). */
		if (is_seq_clock(id) && !seq)
			return tm_err(err, TM_EINPUT,
				      "ClockSnapshot packet is specifying a sequence-scoped clock id (0) but the "
				      "TracePacket sequence_id is zero");
		has_boot |= id == TM_CLOCK_BOOTTIME;
		has_file |= id == TM_CLOCK_TRACE_FILE;
	}
	/* §5.2/§6: the default clock is set even when the claim is refused. */
	uint32_t claim = 0;
	if (s->primary_trace_clock)
		claim = s->primary_trace_clock;
	else if (has_boot && !has_file)
		claim = TM_CLOCK_BOOTTIME;
	if (claim) {
		tm_tracker_set_default_clock(rd->t, claim);
		tm_tracker_claim(rd->t, claim);
	}
	TM_GROW(ps->rr, ps->cap_rr, s->n + 1);
	for (size_t i = 0; i < s->n; i++) {
		ps->rr[i].clock_id = s->clocks[i].clock_id;
		ps->rr[i].ts = s->clocks[i].timestamp;
		ps->rr[i].unit_ns = s->clocks[i].unit_multiplier_ns;
		ps->rr[i].incremental = s->clocks[i].is_incremental;
	}
	tm_error serr; /* cleared, not zeroed (4 KiB): once a packet */
	tm_err_clear(&serr);
	int64_t id = tm_tracker_insert_snapshot(rd->t, ps->rr, s->n, seq, TM_CLOCK_ORIGIN_SNAPSHOT, &serr);
	if (id == TM_CLOCK_SNAPSHOT_FATAL) {
		*err = serr;
		return -1;
	}
	/* A rejection (-1) is counted by the clock module and not fatal. */
	return 0;
}

/* machines.md §8. */
static int on_remote_clock_sync(pscan *ps, reader *rd, const tm_packet *p, tm_error *err)
{
	if (check_single_machine(ps, err))
		return -1;
	tm_remote_clock_sync *r = &ps->rcs;
	tm_remote_clock_sync_decode(p->remote_clock_sync, r);
	TM_GROW(ps->sr, ps->cap_sr, r->n_clocks + 1);
	TM_GROW(ps->rounds, ps->cap_rounds, r->n_rounds + 1);
	for (size_t i = 0; i < r->n_clocks; i++) {
		ps->sr[i].clock_id = r->clocks[i].clock_id;
		ps->sr[i].ts = r->clocks[i].timestamp;
	}
	for (size_t i = 0; i < r->n_rounds; i++) {
		const tm_sync_round *src = &r->rounds[i];
		ps->rounds[i].client = ps->sr + src->client_off;
		ps->rounds[i].n_client = src->client_n;
		ps->rounds[i].host = ps->sr + src->host_off;
		ps->rounds[i].n_host = src->host_n;
	}
	tm_tracker_remote_clock_sync(rd->t, ps->rounds, r->n_rounds);
	return 0;
}

/* ---- packets set aside (clocks.md §6.1) ------------------------------------- */

/* Keep a copy of the packet for its retry; 0 when the cap refuses it. */
static int set_aside(pscan *ps, size_t ri, const tm_packet *p)
{
	if (p->raw.n > ASIDE_MAX_BYTES - ps->aside_bytes)
		return 0;
	TM_GROW(ps->aside, ps->cap_aside, ps->n_aside + 1);
	aside *a = &ps->aside[ps->n_aside];
	a->n = p->raw.n;
	a->bytes = tm_xmalloc(a->n ? a->n : 1);
	if (a->n)
		memcpy(a->bytes, p->raw.p, a->n);
	a->next = 0;
	ps->aside_bytes += a->n;
	ps->n_aside++;
	reader *rd = &ps->readers[ri];
	if (rd->aside_tail)
		ps->aside[rd->aside_tail - 1].next = ps->n_aside;
	else
		rd->aside_head = ps->n_aside;
	rd->aside_tail = ps->n_aside;
	return 1;
}

/* ---- the two hot messages, read in one pass ---------------------------------- */

/* The scan reads only a few fields of each TrackEvent and FtraceEvent, so
 * it takes them in one pass of its own instead of the full decoders in
 * proto_msg.c / proto_ftrace.c, field by field with the iterator's own
 * step (tm_pb_field_at, protozero's ParseOneField): a message ends at its
 * first malformed field, a field with an id above TM_PB_MAX_FIELD_ID or a
 * length above TM_PB_MAX_LEN is skipped, a scalar given twice is the last
 * one unless noted. */

/* What the scan takes from a TrackEvent (the same values as
 * tm_track_event_decode gives for these fields). */
typedef struct te_head {
	bool has_type, has_track_uuid, has_name_iid, has_counter_value, has_double_counter_value;
	bool has_timestamp_delta_us, has_timestamp_absolute_us;
	int32_t type;
	uint64_t track_uuid, name_iid;
	tm_span name;
	int64_t counter_value;
	double double_counter_value;
	int64_t timestamp_delta_us, timestamp_absolute_us;
	int32_t legacy_phase;     /* LegacyEvent.phase, 0 when absent */
	int64_t legacy_duration_us;
} te_head;

/* The LegacyEvent fields placement needs: phase and duration_us. */
static void legacy_decode(tm_span msg, te_head *e)
{
	const uint8_t *p = msg.p, *end = msg.p + msg.n;
	tm_pb_field f;
	while (p < end) {
		int r = tm_pb_field_at(&p, end, &f);
		if (r == TM_PB_FIELD_END)
			break;
		if (r == TM_PB_FIELD_SKIP || f.wire != TM_PB_VARINT)
			continue;
		if (f.id == F_TrackEvent_LegacyEvent_phase)
			e->legacy_phase = (int32_t)(uint32_t)f.val;
		else if (f.id == F_TrackEvent_LegacyEvent_duration_us)
			e->legacy_duration_us = (int64_t)f.val;
	}
}

static void te_head_decode(tm_span msg, te_head *e)
{
	memset(e, 0, sizeof(*e));
	if (!msg.p)
		return;
	const uint8_t *p = msg.p, *end = msg.p + msg.n;
	tm_pb_field f;
	while (p < end) {
		int r = tm_pb_field_at(&p, end, &f);
		if (r == TM_PB_FIELD_END)
			break;
		if (r == TM_PB_FIELD_SKIP)
			continue;
		switch (f.wire) {
		case TM_PB_VARINT:
			switch (f.id) {
			case F_TrackEvent_type: e->has_type = true; e->type = (int32_t)(uint32_t)f.val; break;
			case F_TrackEvent_track_uuid: e->has_track_uuid = true; e->track_uuid = f.val; break;
			case F_TrackEvent_name_iid: e->has_name_iid = true; e->name_iid = f.val; break;
			case F_TrackEvent_counter_value:
				e->has_counter_value = true;
				e->counter_value = (int64_t)f.val;
				break;
			case F_TrackEvent_timestamp_delta_us:
				e->has_timestamp_delta_us = true;
				e->timestamp_delta_us = (int64_t)f.val;
				break;
			case F_TrackEvent_timestamp_absolute_us:
				e->has_timestamp_absolute_us = true;
				e->timestamp_absolute_us = (int64_t)f.val;
				break;
			}
			break;
		case TM_PB_LEN:
			if (f.id == F_TrackEvent_name)
				e->name = f.data;
			else if (f.id == F_TrackEvent_legacy_event)
				legacy_decode(f.data, e);
			break;
		case TM_PB_I64:
			if (f.id == F_TrackEvent_double_counter_value) {
				e->has_double_counter_value = true;
				memcpy(&e->double_counter_value, &f.val, sizeof(double));
			}
			break;
		}
	}
}

/* What the scan takes from an FtraceEvent (as tm_ftrace_event_decode):
 * the first timestamp, the last pid, the first length-delimited field's
 * number as the kind. */
typedef struct ft_head {
	bool has_timestamp, has_pid;
	uint64_t timestamp;
	uint32_t pid, kind;
	tm_span body; /* the event's message (field `kind`) */
} ft_head;

static inline void ft_head_decode(tm_span msg, ft_head *ev)
{
	ev->has_timestamp = ev->has_pid = false;
	ev->timestamp = 0;
	ev->pid = ev->kind = 0;
	const uint8_t *p = msg.p, *end = msg.p + msg.n;
	tm_pb_field f;
	while (p < end) {
		int r = tm_pb_field_at(&p, end, &f);
		if (r == TM_PB_FIELD_END)
			break;
		if (r == TM_PB_FIELD_SKIP)
			continue;
		if (f.wire == TM_PB_LEN) {
			if (!ev->kind) {
				ev->kind = f.id;
				ev->body = f.data;
			}
		} else if (f.wire == TM_PB_VARINT) {
			if (f.id == F_FtraceEvent_timestamp && !ev->has_timestamp) {
				ev->has_timestamp = true;
				ev->timestamp = f.val;
			} else if (f.id == F_FtraceEvent_pid) {
				ev->has_pid = true;
				ev->pid = (uint32_t)f.val;
			}
		}
	}
}

/* ---- records for the model (core/model/model.h, TM_MREC_PROTO) ---------------------- */

static uint32_t cpu_queue(pscan *ps, uint32_t **q, uint32_t cpu)
{
	if (cpu >= TM_FTRACE_MAX_CPUS)
		cpu = TM_FTRACE_MAX_CPUS - 1;
	if (!*q)
		*q = tm_xcalloc(TM_FTRACE_MAX_CPUS, sizeof(**q));
	if (!(*q)[cpu])
		(*q)[cpu] = scan_new_queue(ps->sf) + 1;
	return (*q)[cpu] - 1;
}

/* A flags byte (bit 0: has_thread, bit 1: has_default_track), then
 * seq_id, generation, pid and tid zigzagged, and default_track when it
 * has one. */
size_t tm_pr_event_pack(const tm_pr_event *e, uint8_t out[TM_PR_EVENT_MAX])
{
	uint8_t *p = out;
	*p++ = (uint8_t)((e->has_thread ? 1 : 0) | (e->has_default_track ? 2 : 0));
	p = tm_uv_put(p, e->seq_id);
	p = tm_uv_put(p, e->generation);
	p = tm_uv_put(p, tm_zz(e->pid));
	p = tm_uv_put(p, tm_zz(e->tid));
	if (e->has_default_track)
		p = tm_uv_put(p, e->default_track);
	return (size_t)(p - out);
}

size_t tm_pr_event_unpack(const void *data, size_t n, tm_pr_event *e)
{
	const uint8_t *p = data, *end = p + n;
	uint64_t seq, gen, pid, tid, track = 0;
	if (!n || *p > 3)
		return 0;
	uint8_t flags = *p++;
	if (!(p = tm_pb_varint_at(p, end, &seq)) || !(p = tm_pb_varint_at(p, end, &gen)) ||
	    !(p = tm_pb_varint_at(p, end, &pid)) || !(p = tm_pb_varint_at(p, end, &tid)) ||
	    ((flags & 2) && !(p = tm_pb_varint_at(p, end, &track))))
		return 0;
	e->seq_id = (uint32_t)seq;
	e->generation = (uint32_t)gen;
	e->has_thread = flags & 1;
	e->has_default_track = (flags >> 1) & 1;
	e->pid = tm_unzz(pid);
	e->tid = tm_unzz(tid);
	e->default_track = track;
	return (size_t)(p - (const uint8_t *)data);
}

/* One record: the head, a fixed part and the bytes after it. `side`
 * records are applied before the sorted ones. */
static void pr_record(pscan *ps, const reader *rd, int sub, uint32_t queue, int64_t ts, const void *fixed,
		      size_t fn, const void *body, size_t bn, int side)
{
	tm_buf *b = &ps->rec;
	b->len = 0;
	tm_mrec_head h = {TM_MREC_PROTO, (uint8_t)sub, 0, ps->sf->f->id, rd->row};
	tm_mrec_head_put(b, &h);
	if (fn)
		tm_buf_put(b, fixed, fn);
	if (bn)
		tm_buf_put(b, body, bn);
	if (side)
		scan_record_side(ps->sf, b->data, b->len);
	else
		scan_record(ps->sf, queue, ts, 0, -1, b->data, b->len);
}

static void put_varint_buf(tm_buf *b, uint64_t v)
{
	uint8_t t[10];
	tm_buf_put(b, t, (size_t)(tm_uv_put(t, v) - t));
}

static void put_len_field(tm_buf *b, uint32_t id, const void *p, size_t n)
{
	put_varint_buf(b, ((uint64_t)id << 3) | TM_PB_LEN);
	put_varint_buf(b, n);
	if (n)
		tm_buf_put(b, p, n);
}

static void resolve_annotation(const seq_state *ss, tm_span msg, tm_buf *out, int depth);

/* Field `id` holding msg as resolve_annotation writes it, appended to out
 * in place: its length goes in front once known, the bytes moved up to
 * it (a buffer of its own was a malloc and a free per annotation, which
 * Chrome puts on most events). */
static void put_annotation(const seq_state *ss, uint32_t id, tm_span msg, tm_buf *out, int depth)
{
	put_varint_buf(out, ((uint64_t)id << 3) | TM_PB_LEN);
	size_t at = out->len;
	uint8_t room[TM_UV_MAX] = {0};
	tm_buf_put(out, room, sizeof room);
	size_t body = out->len;
	resolve_annotation(ss, msg, out, depth);
	size_t n = out->len - body;
	size_t k = (size_t)(tm_uv_put(room, n) - room);
	memmove(out->data + at + k, out->data + body, n);
	memcpy(out->data + at, room, k);
	out->len = at + k + n;
}

/* A DebugAnnotation with its interned name written out (and its nested
 * entries likewise). */
static void resolve_annotation(const seq_state *ss, tm_span msg, tm_buf *out, int depth)
{
	const uint8_t *p = msg.p, *end = msg.p + msg.n, *at = p;
	tm_pb_field f = {0};
	while (p < end) {
		int r = tm_pb_field_at(&p, end, &f);
		if (r == TM_PB_FIELD_END)
			break;
		const char *s;
		size_t n;
		if (r == TM_PB_FIELD_OK && f.id == F_DebugAnnotation_name_iid && f.wire == TM_PB_VARINT) {
			if (seq_interned(ss, IK_ANNOTATION, f.val, &s, &n))
				put_len_field(out, F_DebugAnnotation_name, s, n);
		} else if (r == TM_PB_FIELD_OK &&
			   (f.id == F_DebugAnnotation_dict_entries || f.id == F_DebugAnnotation_array_values) &&
			   f.wire == TM_PB_LEN && depth < 64) {
			put_annotation(ss, f.id, f.data, out, depth + 1);
		} else {
			tm_buf_put(out, at, (size_t)(p - at));
		}
		at = p;
	}
}

static void put_varint_field(tm_buf *b, uint32_t id, uint64_t v)
{
	put_varint_buf(b, ((uint64_t)id << 3) | TM_PB_VARINT);
	put_varint_buf(b, v);
}

/* A TrackEvent with its interned name, categories and annotation names
 * written out, so the model reads it alone. With `pool`, a name and the
 * categories go as name_iid and category_iids holding their ids in the
 * model's string pool (scan_intern) instead of the text: a few bytes for
 * the 20 to 40 a name takes in the order store, where a proto pass's
 * temporary space goes. An event that also has categories as text keeps
 * them all as text, in their order (the model joins them in it). */
static void resolve_track_event(scan_file *sf, const seq_state *ss, tm_span msg, tm_buf *out, int pool)
{
	out->len = 0;
	int pooled_cat = 0;
	const uint8_t *p = msg.p, *end = msg.p + msg.n, *at = p;
	tm_pb_field f = {0};
	/* the TrackEvent fields seen, by number, as bits: an int array of
	 * them, zeroed per event, was a fifth of this function's time */
	uint64_t has = 0;
	while (p < end) {
		int r = tm_pb_field_at(&p, end, &f);
		if (r == TM_PB_FIELD_END)
			break;
		const char *s;
		size_t n;
		if (r == TM_PB_FIELD_OK && f.id < 64) /* fieldnum-ok: the bits of has */
			has |= 1ull << f.id;
		uint32_t id;
		if (r == TM_PB_FIELD_OK && f.id == F_TrackEvent_name_iid && f.wire == TM_PB_VARINT) {
			if (!seq_pooled(sf, ss, IK_NAME, f.val, pool, &s, &n, &id))
				;
			else if (id)
				put_varint_field(out, F_TrackEvent_name_iid, id);
			else
				put_len_field(out, F_TrackEvent_name, s, n);
		} else if (r == TM_PB_FIELD_OK && f.id == F_TrackEvent_category_iids &&
			   (f.wire == TM_PB_VARINT || f.wire == TM_PB_LEN)) {
			/* maybe packed -> categories */
			const uint8_t *q = f.wire == TM_PB_LEN ? f.data.p : NULL;
			const uint8_t *qe = q ? q + f.data.n : NULL;
			uint64_t v = f.val;
			while (f.wire == TM_PB_VARINT || (q < qe && (q = tm_pb_varint_at(q, qe, &v)) != NULL)) {
				if (seq_pooled(sf, ss, IK_CATEGORY, v, pool, &s, &n, &id)) {
					if (id) {
						put_varint_field(out, F_TrackEvent_category_iids, id);
						pooled_cat = 1;
					} else {
						put_len_field(out, F_TrackEvent_categories, s, n);
					}
				}
				if (f.wire == TM_PB_VARINT)
					break;
			}
		} else if (r == TM_PB_FIELD_OK && f.id == F_TrackEvent_debug_annotations && f.wire == TM_PB_LEN) {
			put_annotation(ss, F_TrackEvent_debug_annotations, f.data, out, 0);
		} else {
			tm_buf_put(out, at, (size_t)(p - at));
		}
		at = p;
	}
#define TE_HAS(field) ((has >> (field)) & 1)
	_Static_assert(F_TrackEvent_categories < 64 && F_TrackEvent_extra_counter_values < 64 &&
			       F_TrackEvent_extra_counter_track_uuids < 64 &&
			       F_TrackEvent_extra_double_counter_values < 64 &&
			       F_TrackEvent_extra_double_counter_track_uuids < 64,
		       "has holds the fields below 64");
	if (pooled_cat && TE_HAS(F_TrackEvent_categories)) {
		resolve_track_event(sf, ss, msg, out, 0);
		return;
	}
	/* extra counter values whose uuids the sequence's defaults give */
	if (TE_HAS(F_TrackEvent_extra_counter_values) && !TE_HAS(F_TrackEvent_extra_counter_track_uuids) &&
	    ss->extra_uuids.len)
		tm_buf_put(out, ss->extra_uuids.data, ss->extra_uuids.len);
	if (TE_HAS(F_TrackEvent_extra_double_counter_values) && !TE_HAS(F_TrackEvent_extra_double_counter_track_uuids) &&
	    ss->extra_double_uuids.len)
		tm_buf_put(out, ss->extra_double_uuids.data, ss->extra_double_uuids.len);
#undef TE_HAS
}

/* TracePacketDefaults.stack_sample_defaults.source, and the message for
 * its counter descriptors: the last stack_sample_defaults given, whole
 * (a field given twice is not merged: the reference reads the last; none
 * when absent; new defaults replace the old whole). */
static void defaults_stack_source(seq_state *ss, tm_span defaults)
{
	ss->has_stack_source = 0;
	ss->has_stack_defaults = 0;
	tm_pb_iter it, in;
	tm_pb_field f, g;
	tm_pb_iter_init(&it, defaults);
	while (tm_pb_next(&it, &f) == 1) {
		if (f.id != F_TracePacketDefaults_stack_sample_defaults || f.wire != TM_PB_LEN)
			continue;
		ss->has_stack_defaults = 1;
		ss->has_stack_source = 0;
		ss->stack_defaults.len = 0;
		tm_buf_put(&ss->stack_defaults, f.data.p, f.data.n);
		tm_pb_iter_init(&in, f.data);
		while (tm_pb_next(&in, &g) == 1) {
			if (g.id == F_StackSampleDefaults_source && g.wire == TM_PB_LEN) {
				ss->has_stack_source = 1;
				ss->stack_source.len = 0;
				tm_buf_put(&ss->stack_source, g.data.p, g.data.n);
			}
		}
	}
}

/* TracePacketDefaults.track_event_defaults' extra_counter_track_uuids
 * and extra_double_counter_track_uuids, packed or not, each as one
 * varint field for resolve_track_event; new defaults replace the old. */
static void defaults_extra_uuids(seq_state *ss, tm_span defaults)
{
	ss->extra_uuids.len = ss->extra_double_uuids.len = 0;
	const uint8_t *p = defaults.p, *end = defaults.p + defaults.n;
	tm_pb_field f = {0};
	while (p && p < end) {
		int r = tm_pb_field_at(&p, end, &f);
		if (r == TM_PB_FIELD_END)
			break;
		if (r != TM_PB_FIELD_OK || f.id != F_TracePacketDefaults_track_event_defaults || f.wire != TM_PB_LEN)
			continue;
		const uint8_t *q = f.data.p, *qe = f.data.p + f.data.n;
		tm_pb_field g = {0};
		while (q && q < qe) {
			int rr = tm_pb_field_at(&q, qe, &g);
			if (rr == TM_PB_FIELD_END)
				break;
			if (rr != TM_PB_FIELD_OK || (g.id != F_TrackEventDefaults_extra_counter_track_uuids &&
					    g.id != F_TrackEventDefaults_extra_double_counter_track_uuids))
				continue;
			int plain = g.id == F_TrackEventDefaults_extra_counter_track_uuids;
			tm_buf *b = plain ? &ss->extra_uuids : &ss->extra_double_uuids;
			uint64_t key = (uint64_t)(plain ? F_TrackEvent_extra_counter_track_uuids
							: F_TrackEvent_extra_double_counter_track_uuids)
				       << 3;
			if (g.wire == TM_PB_VARINT) {
				put_varint_buf(b, key);
				put_varint_buf(b, g.val);
			} else if (g.wire == TM_PB_LEN) {
				const uint8_t *v = g.data.p, *ve = g.data.p + g.data.n;
				uint64_t x;
				while (v < ve && (v = tm_pb_varint_at(v, ve, &x)) != NULL) {
					put_varint_buf(b, key);
					put_varint_buf(b, x);
				}
			}
		}
	}
}

/* ---- track events (formats.md §5.5, clocks.md §6.1) --------------------------- */

/* A track's pid and tid: a thread track's own, a process track's pid, a
 * child track its parent's pid (formats.md §5.5). */
static void remember_track(reader *rd, const tm_track_descriptor *d)
{
	if (!d->has_uuid || !d->uuid)
		return;
	track_ids ids = {-1, -1};
	if (d->has_thread) {
		ids.pid = d->thread.has_pid ? d->thread.pid : -1;
		ids.tid = d->thread.has_tid ? d->thread.tid : -1;
	} else if (d->has_process && d->process.has_pid) {
		ids.pid = d->process.pid;
	} else if (d->has_parent_uuid) {
		const uint32_t *pi = tm_u64map_get(&rd->tracks, d->parent_uuid);
		if (pi)
			ids.pid = rd->track_at[*pi - 1].pid;
	}
	const uint32_t *ix = tm_u64map_get(&rd->tracks, d->uuid);
	if (ix) {
		rd->track_at[*ix - 1] = ids;
		return;
	}
	if (rd->n_tracks >= MAX_TRACKS)
		return;
	TM_GROW(rd->track_at, rd->cap_tracks, rd->n_tracks + 1);
	rd->track_at[rd->n_tracks] = ids;
	tm_u64map_put(&rd->tracks, d->uuid, (uint32_t)rd->n_tracks);
	rd->n_tracks++;
}

/* The pid/tid of a track event: its track's (explicit or the sequence
 * default), else the sequence's legacy thread. */
static void event_ids(reader *rd, const seq_state *ss, const te_head *e, tm_event *ev)
{
	uint64_t uuid = e->has_track_uuid ? e->track_uuid : ss->has_default_track ? ss->default_track : 0;
	if (uuid) {
		uint32_t k = 0;
		if (rd->last_track_ix && rd->last_track == uuid) {
			k = rd->last_track_ix;
		} else {
			const uint32_t *ix = tm_u64map_get(&rd->tracks, uuid);
			if (ix) {
				k = *ix;
				rd->last_track = uuid;
				rd->last_track_ix = k;
			}
		}
		if (k) {
			ev->pid = rd->track_at[k - 1].pid;
			ev->tid = rd->track_at[k - 1].tid;
		}
	} else if (ss->has_thread) {
		ev->pid = ss->pid;
		ev->tid = ss->tid;
	}
}

static int on_track_event(pscan *ps, reader *rd, seq_state *ss, const tm_packet *p, int64_t ts)
{
	scan_file *sf = ps->sf;
	ps->po_drop = 1; /* until placed */
	if (!p->has_trusted_packet_sequence_id) {
		scan_count(sf, TM_STAT_TRACK_EVENT_NO_SEQ, 1);
		return 0;
	}
	te_head head, *e = &head;
	if (ps->has_te_logged && !ps->events && !ps->records)
		e = ps->te_logged; /* all this needs of it, decoded ahead */
	else
		te_head_decode(p->track_event, e);
	int64_t when;
	int legacy = 0;
	if (e->has_timestamp_delta_us) {
		if (!ss->ts_valid)
			return 0; /* no ThreadDescriptor since the last loss */
		ss->ts_ns = sat_add(ss->ts_ns, sat_mul_1000(e->timestamp_delta_us));
		when = ss->ts_ns;
		legacy = 1;
	} else if (e->has_timestamp_absolute_us && e->timestamp_absolute_us) {
		when = sat_mul_1000(e->timestamp_absolute_us);
		legacy = 1;
	} else if (p->has_timestamp) {
		when = ts;
	} else {
		return 0; /* track_event_missing_timestamp */
	}
	/* Negative before the legacy conversion, or a converted packet
	 * timestamp below 0: track_event_invalid_timestamp (clocks.md §6.1). */
	if (when < 0) {
		scan_count(sf, TM_STAT_TRACK_EVENT_INVALID_TS, 1);
		return 0;
	}
	int64_t raw = legacy ? when : (int64_t)p->timestamp;
	if (legacy) {
		int64_t out;
		if (tm_tracker_to_trace_time(rd->t, TM_CLOCK_MONOTONIC, 0, when, 0, &out) == TM_CONV_OK)
			when = out; /* else the raw value is kept */
	}
	if (when >= 0 && ps->records) {
		tm_pr_event pe;
		memset(&pe, 0, sizeof(pe));
		pe.seq_id = p->trusted_packet_sequence_id;
		pe.generation = ss->generation;
		pe.has_thread = (uint8_t)ss->has_thread;
		pe.pid = ss->pid;
		pe.tid = ss->tid;
		pe.has_default_track = (uint8_t)ss->has_default_track;
		pe.default_track = ss->default_track;
		resolve_track_event(ps->sf, ss, p->track_event, &ps->te, 1);
		uint8_t packed[TM_PR_EVENT_MAX];
		pr_record(ps, rd, TM_PR_TRACK_EVENT, rd->q_events, when, packed, tm_pr_event_pack(&pe, packed), ps->te.data,
			  ps->te.len, 0);
	}
	tm_ev_kind kind;
	int64_t dur = -1;
	switch (e->has_type ? e->type : TM_TE_TYPE_UNSPECIFIED) {
	case TM_TE_SLICE_BEGIN: kind = TM_EV_BEGIN; break;
	case TM_TE_SLICE_END: kind = TM_EV_END; break;
	case TM_TE_INSTANT: kind = TM_EV_INSTANT; break;
	case TM_TE_COUNTER: kind = TM_EV_COUNTER; break;
	default:
		/* a legacy phase, placed as the JSON event it stands for */
		switch (e->has_type ? 0 : e->legacy_phase) {
		case 'B': kind = TM_EV_BEGIN; break;
		case 'E': kind = TM_EV_END; break;
		case 'X':
			kind = TM_EV_SLICE;
			dur = sat_mul_1000(e->legacy_duration_us);
			break;
		case 'i': case 'I': case 'R': case 'n': kind = TM_EV_INSTANT; break;
		case 'b': kind = TM_EV_ASYNC_BEGIN; break;
		case 'e': kind = TM_EV_ASYNC_END; break;
		case 's': case 't': case 'f': case 'M':
			/* flows and metadata: nothing on the timeline, but the
			 * reference parses them: merged.pftrace keeps the packet */
			if (when >= 0) {
				ps->po_drop = 0;
				ps->po_has_ts = 1;
				ps->po_ts = when;
			}
			return 0;
		default: kind = TM_EV_PACKET; break;
		}
		break;
	}
	/* After the check above only a legacy conversion can make it negative;
	 * the sorter then drops it like any other event. */
	if (!ps->events) {
		if (scan_place_times(sf, rd->row, when, dur, raw, TM_STAT_NEGATIVE_TS)) {
			ps->po_drop = 0;
			ps->po_has_ts = 1;
			ps->po_ts = when;
		}
		return 0;
	}
	tm_event ev = event_init(rd, kind);
	ev.dur = dur;
	ev.ts = when;
	ev.raw_ts = raw;
	if (TM_SPAN_HAS(e->name)) {
		ev.name = (const char *)e->name.p;
		ev.name_len = e->name.n;
	} else if (e->has_name_iid) {
		seq_name(ss, e->name_iid, &ev.name, &ev.name_len);
	} else if (kind == TM_EV_PACKET) {
		ev.name = "track_event";
		ev.name_len = strlen(ev.name);
	}
	if (kind == TM_EV_COUNTER)
		ev.value = e->has_counter_value ? (double)e->counter_value : e->double_counter_value;
	event_ids(rd, ss, e, &ev);
	if (scan_place(sf, &ev, TM_STAT_NEGATIVE_TS)) {
		ps->po_drop = 0;
		ps->po_has_ts = 1;
		ps->po_ts = when;
	}
	return 0;
}

/* ---- ftrace (formats.md §5.8, clocks.md §3.1, §6.1) ------------------------------ */

static const char *ftrace_name(uint32_t kind)
{
	switch (kind) {
	case TM_FT_PRINT: return "print";
	case TM_FT_SCHED_SWITCH: return "sched_switch";
	case TM_FT_CPU_FREQUENCY: return "cpu_frequency";
	case TM_FT_CPU_IDLE: return "cpu_idle";
	case TM_FT_SCHED_WAKEUP: return "sched_wakeup";
	case TM_FT_SCHED_WAKING: return "sched_waking";
	case TM_FT_TASK_NEWTASK: return "task_newtask";
	case TM_FT_TASK_RENAME: return "task_rename";
	case TM_FT_SCHED_PROCESS_EXIT: return "sched_process_exit";
	default: return NULL;
	}
}

/* Place one kernel event; returns its trace time, or -1 when dropped. */
static int64_t place_ftrace(pscan *ps, reader *rd, tm_ev_kind kind, const char *name, int64_t out, int64_t raw,
			    int64_t tid, uint32_t cpu, const char *args)
{
	tm_event ev = event_init(rd, kind);
	ev.ts = out;
	ev.raw_ts = raw;
	ev.tid = tid;
	ev.cpu = (int32_t)cpu;
	ev.name = name;
	ev.name_len = strlen(name);
	ev.args = args;
	return scan_place(ps->sf, &ev, TM_STAT_NEGATIVE_TS) ? out : -1;
}

/* A print event: its buf is a systrace print payload, placed as the text
 * line would be (the reference parses both with one parser); a payload it
 * rejects is counted, not placed. Returns the trace time or -1. */
static int64_t place_print(pscan *ps, reader *rd, const ft_head *fe, int64_t out, int64_t raw, uint32_t cpu)
{
	const char *bp = "";
	size_t bn = 0;
	const uint8_t *p = fe->body.p, *end = fe->body.p + fe->body.n;
	tm_pb_field f = {0};
	while (p && p < end) {
		int r = tm_pb_field_at(&p, end, &f);
		if (r == TM_PB_FIELD_END)
			break;
		if (r == TM_PB_FIELD_OK && f.id == F_PrintFtraceEvent_buf && f.wire == TM_PB_LEN) {
			bp = (const char *)f.data.p;
			bn = f.data.n;
		}
	}
	char *text = tm_xstrndup(bp, bn);
	systrace_event l;
	systrace_line_result res = systrace_parse_print(text, &l);
	int64_t placed = -1;
	if (res == SYSTRACE_LINE_EVENT) {
		l.pid = fe->has_pid ? fe->pid : 0;
		l.cpu = cpu;
		l.event_name = "print";
		tm_event ev;
		scan_systrace_event(&l, &ev);
		ev.machine_row = rd->row;
		ev.ts = out;
		ev.raw_ts = raw;
		placed = scan_place(ps->sf, &ev, TM_STAT_NEGATIVE_TS) ? out : -1;
	} else if (res == SYSTRACE_LINE_BAD_PRINT) {
		scan_count(ps->sf, TM_STAT_SYSTRACE_PARSE_FAILURE, 1);
	}
	free(text);
	return placed;
}

static void ftrace_compact(pscan *ps, reader *rd, const tm_ftrace_bundle *b, uint32_t clock, uint32_t seq)
{
	scan_file *sf = ps->sf;
	char args[96];
	int want_args = scan_wants_args(sf);
	tm_compact_iter it;
	int r;
	tm_compact_switch sw;
	/* A failed conversion abandons the rest of its column, without the
	 * parse-error stat (the reference returns there); the abandoned
	 * entries are still walked to report them dropped. */
	int abandoned = 0;
	tm_compact_switch_begin(&it, b);
	while ((r = tm_compact_switch_next(&it, &sw)) == 1) {
		int64_t raw = (int64_t)sw.timestamp, out;
		if (abandoned) {
			PUSH(ps->sw, -1);
			continue;
		}
		if (tm_tracker_to_trace_time(rd->t, clock, seq, raw, 0, &out) != TM_CONV_OK) {
			scan_lost(sf);
			abandoned = 1;
			PUSH(ps->sw, -1);
			continue;
		}
		if (out >= 0 && ps->records) {
			tm_pr_switch ps_ = {b->cpu, sw.next_pid, sw.next_prio, sw.prev_state};
			pr_record(ps, rd, TM_PR_COMPACT_SWITCH, cpu_queue(ps, &rd->q_switch, b->cpu), out, &ps_,
				  sizeof ps_, sw.next_comm.p, sw.next_comm.n, 0);
		}
		if (want_args)
			snprintf(args, sizeof(args), "next_pid=%d", sw.next_pid);
		PUSH(ps->sw, place_ftrace(ps, rd, TM_EV_SCHED, "sched_switch", out, raw, -1, b->cpu,
					  want_args ? args : NULL));
	}
	if (r < 0 && !abandoned)
		scan_count(sf, TM_STAT_COMPACT_SCHED_ERRORS, 1);
	abandoned = 0;
	tm_compact_waking wk;
	tm_compact_waking_begin(&it, b);
	while ((r = tm_compact_waking_next(&it, &wk)) == 1) {
		int64_t raw = (int64_t)wk.timestamp, out;
		if (abandoned) {
			PUSH(ps->wk, -1);
			continue;
		}
		if (tm_tracker_to_trace_time(rd->t, clock, seq, raw, 0, &out) != TM_CONV_OK) {
			scan_lost(sf);
			abandoned = 1;
			PUSH(ps->wk, -1);
			continue;
		}
		if (out >= 0 && ps->records) {
			tm_pr_waking pw = {b->cpu, wk.pid, wk.target_cpu, wk.prio, wk.has_common_flags ? wk.common_flags : 0};
			pr_record(ps, rd, TM_PR_COMPACT_WAKING, cpu_queue(ps, &rd->q_waking, b->cpu), out, &pw, sizeof pw,
				  wk.comm.p, wk.comm.n, 0);
		}
		if (want_args)
			snprintf(args, sizeof(args), "pid=%d target_cpu=%d", wk.pid, wk.target_cpu);
		PUSH(ps->wk, place_ftrace(ps, rd, TM_EV_SCHED, "sched_waking", out, raw, -1, b->cpu,
					  want_args ? args : NULL));
	}
	if (r < 0 && !abandoned)
		scan_count(sf, TM_STAT_COMPACT_SCHED_ERRORS, 1);
}

static int on_ftrace(pscan *ps, reader *rd, const tm_packet *p, tm_error *err)
{
	scan_file *sf = ps->sf;
	tm_ftrace_bundle *b = &ps->bundle;
	if (tm_ftrace_bundle_decode(p->ftrace_events, b, err) != 0)
		return -1;
	if (!b->has_cpu) {
		scan_count(sf, TM_STAT_FTRACE_BUNDLE_ERRORS, 1);
		ps->po_drop = 1;
		return 0;
	}
	uint32_t seq = p->trusted_packet_sequence_id;
	uint32_t clock = TM_CLOCK_BOOTTIME;
	if (b->has_ftrace_clock) {
		switch (b->ftrace_clock) {
		case TM_FTRACE_CLOCK_UNSPECIFIED: clock = TM_CLOCK_BOOTTIME; break;
		case TM_FTRACE_CLOCK_MONO_RAW: clock = TM_CLOCK_MONOTONIC_RAW; break;
		case TM_FTRACE_CLOCK_GLOBAL:
		case TM_FTRACE_CLOCK_LOCAL: clock = TM_CLOCK_SEQ_FIRST; break;
		default: return tm_err(err, TM_EINPUT, "Unable to parse ftrace packets with unknown clock");
		}
		if (b->has_ftrace_timestamp && b->has_boot_timestamp && rd->last_ftrace_ts != b->ftrace_timestamp) {
			tm_raw_reading r[2] = {
				{clock, (uint64_t)b->ftrace_timestamp, 1, 0},
				{TM_CLOCK_BOOTTIME, (uint64_t)b->boot_timestamp, 1, 0},
			};
			tm_error serr; /* cleared, not zeroed (4 KiB): once a packet */
			tm_err_clear(&serr);
			/* Rejections (and a PIN's refusal) are logged by the
			 * reference, never fatal here. */
			tm_tracker_insert_snapshot(rd->t, r, 2, seq, TM_CLOCK_ORIGIN_FTRACE, &serr);
			rd->last_ftrace_ts = b->ftrace_timestamp;
		}
	}
	if (b->has_compact_sched)
		ftrace_compact(ps, rd, b, clock, seq);

	/* The bundle's events in order, up to malformed bytes. */
	ft_head ev;
	uint32_t cpu = b->cpu;
	const uint8_t *fp = b->raw.p, *fend = b->raw.p + b->raw.n;
	tm_pb_field ff;
	while (fp && fp < fend) {
		int fr = tm_pb_field_at(&fp, fend, &ff);
		if (fr == TM_PB_FIELD_END)
			break;
		if (fr == TM_PB_FIELD_SKIP || ff.id != F_FtraceEventBundle_event || ff.wire != TM_PB_LEN)
			continue;
		ft_head_decode(ff.data, &ev);
		if (!ev.has_timestamp) {
			scan_count(sf, TM_STAT_FTRACE_BUNDLE_ERRORS, 1);
			PUSH(ps->ft, -1);
			continue;
		}
		if (!ev.kind) {
			scan_count(sf, TM_STAT_FTRACE_MISSING_EVENT_ID, 1);
			PUSH(ps->ft, -1);
			continue;
		}
		int64_t raw = (int64_t)ev.timestamp, out;
		if (tm_tracker_to_trace_time(rd->t, clock, seq, raw, 0, &out) != TM_CONV_OK) {
			scan_lost(sf);
			PUSH(ps->ft, -1);
			continue;
		}
		if (out >= 0 && ps->records) {
			tm_pr_ftrace pf = {cpu};
			pr_record(ps, rd, TM_PR_FTRACE, cpu_queue(ps, &rd->q_ftrace, cpu), out, &pf, sizeof pf, ff.data.p,
				  ff.data.n, 0);
		}
		if (ev.kind == TM_FT_PRINT) {
			PUSH(ps->ft, place_print(ps, rd, &ev, out, raw, cpu));
			continue;
		}
		char fallback[32];
		const char *name = ftrace_name(ev.kind);
		if (!name) {
			snprintf(fallback, sizeof(fallback), "ftrace_%u", ev.kind);
			name = fallback;
		}
		tm_ev_kind kind = ev.kind == TM_FT_SCHED_SWITCH || ev.kind == TM_FT_SCHED_WAKING ? TM_EV_SCHED
											     : TM_EV_FTRACE;
		PUSH(ps->ft, place_ftrace(ps, rd, kind, name, out, raw, ev.has_pid ? (int64_t)ev.pid : -1, cpu, NULL));
	}

	/* The first bundle of each CPU: the reference converts the bundle's
	 * start time for its metadata and fails the import when it cannot. */
	if (!(rd->cpu_seen[cpu / 8] & (1u << (cpu % 8)))) {
		rd->cpu_seen[cpu / 8] |= (uint8_t)(1u << (cpu % 8));
		if (b->has_previous_bundle_end_timestamp || b->has_last_read_event_timestamp) {
			uint64_t raw = b->has_previous_bundle_end_timestamp ? b->previous_bundle_end_timestamp
									    : b->last_read_event_timestamp;
			int64_t out;
			if (tm_tracker_to_trace_time(rd->t, clock, seq, (int64_t)raw, 0, &out) != TM_CONV_OK)
				return tm_err(err, TM_EINPUT, "Failed to convert timestamp to trace time");
			if (ps->records) /* ftrace_latest_data_start_ns */
				pr_record(ps, rd, TM_PR_FTRACE_START, 0, 0, &out, sizeof out, NULL, 0, 1);
		}
	}
	return 0;
}

/* ---- TraceConfig: the config_* stats ------------------------------------------ */

/* The reference reads a TraceConfig as it tokenizes the packet, before its
 * time is known (ProtoTraceReader::ParseTraceConfig): with write_into_file,
 * every DISCARD buffer counts config_write_into_file_discard at its
 * index; the file's last config without flush_period_ms counts
 * config_write_into_file_no_flush once every file is read, unless its
 * machine's service was v54 or later (count_no_flush, core/scan/scan.c). The
 * message is decoded whole, once a file. */
static void on_trace_config(pscan *ps, reader *rd, tm_span blob)
{
	Perfetto__Protos__TraceConfig *tc = perfetto__protos__trace_config__unpack(NULL, blob.n, blob.p);
	ps->cfg_seen = 1;
	ps->cfg_no_flush = 0;
	ps->cfg_row = rd->row;
	if (!tc)
		return; /* the reference's decoder reads what it can; ours nothing: no stat */
	if (tc->has_write_into_file && tc->write_into_file) {
		for (size_t i = 0; i < tc->n_buffers; i++)
			if (tc->buffers[i]->has_fill_policy &&
			    tc->buffers[i]->fill_policy == PERFETTO__PROTOS__TRACE_CONFIG__BUFFER_CONFIG__FILL_POLICY__DISCARD)
				tm_statlist_add(&ps->sc->s->named, ps->sf->f->id, rd->row, "config_write_into_file_discard",
						(int64_t)i, 1);
		ps->cfg_no_flush = !(tc->has_flush_period_ms && tc->flush_period_ms);
	}
	perfetto__protos__trace_config__free_unpacked(tc, NULL);
}

/* ---- TraceStats: the service's data-loss stats ---------------------------------- */

/* ProtoTraceReader::ParseTraceStats, for the error and data-loss stats it
 * sets (the others are info): a TraceStats packet sets them for its
 * reader's machine and file, the last one's values staying; the per-buffer
 * losses of the writer sequences are the counts of this reader's sequences
 * so far. Decoded whole: a packet or two a file. */
static void on_trace_stats(pscan *ps, reader *rd, tm_span blob)
{
	Perfetto__Protos__TraceStats *ts = perfetto__protos__trace_stats__unpack(NULL, blob.n, blob.p);
	if (!ts)
		return;
	tm_statlist *l = &ps->sc->s->named;
	uint32_t fid = ps->sf->f->id, row = rd->row;
	tm_statlist_set(l, fid, row, "traced_flushes_failed", -1, (int64_t)ts->flushes_failed);
	if (ts->filter_stats)
		tm_statlist_set(l, fid, row, "filter_errors", -1, (int64_t)ts->filter_stats->errors);
	if (ts->has_final_flush_outcome &&
	    ts->final_flush_outcome == PERFETTO__PROTOS__TRACE_STATS__FINAL_FLUSH_OUTCOME__FINAL_FLUSH_FAILED)
		tm_statlist_add(l, fid, row, "traced_final_flush_failed", -1, 1);
	for (size_t i = 0; i < ts->n_buffer_stats; i++) {
		const Perfetto__Protos__TraceStats__BufferStats *b = ts->buffer_stats[i];
		tm_statlist_set(l, fid, row, "traced_buf_patches_failed", (int64_t)i, (int64_t)b->patches_failed);
		tm_statlist_set(l, fid, row, "traced_buf_abi_violations", (int64_t)i, (int64_t)b->abi_violations);
		tm_statlist_set(l, fid, row, "traced_buf_trace_writer_packet_loss", (int64_t)i,
				(int64_t)b->trace_writer_packet_loss);
	}
	/* per buffer, over the writers the reader has seen a packet of */
	static const char *const loss_names[8] = {
		"traced_buf_data_loss_read_gap",	   "traced_buf_data_loss_chunk_corrupted",
		"traced_buf_data_loss_orphan_continuation", "traced_buf_data_loss_reassembly_gap",
		"traced_buf_data_loss_reassembly_broken_chain", "traced_buf_data_loss_overwrite",
		"traced_buf_data_loss_writer_abort",	   "traced_buf_data_loss_smb_full",
	};
	tm_statlist per = {0};
	for (size_t i = 0; i < ts->n_writer_stats; i++) {
		const Perfetto__Protos__TraceStats__WriterStats *w = ts->writer_stats[i];
		const uint32_t *ix = tm_u64map_get(&rd->seq_index, (uint32_t)w->sequence_id);
		if (!ix)
			continue;
		const seq_state *ss = &rd->seqs[*ix - 1];
		int64_t buf = (int32_t)w->buffer;
		tm_statlist_add(&per, 0, 0, "traced_buf_sequence_packet_loss", buf, ss->dropped);
		tm_statlist_add(&per, 0, 0, "traced_buf_incremental_sequences_dropped", buf,
				ss->ni_skipped > 0 && ss->ni_skipped == ss->ni_total);
		for (int b = 0; b < 8; b++)
			tm_statlist_add(&per, 0, 0, loss_names[b], buf, ss->loss[b]);
	}
	for (size_t i = 0; i < per.n; i++)
		tm_statlist_set(l, fid, row, per.v[i].name, per.v[i].idx, per.v[i].value);
	tm_statlist_free(&per);
	perfetto__protos__trace_stats__free_unpacked(ts, NULL);
}

/* ---- SystemInfo (machines.md §7) ------------------------------------------ */

static char *span_str(tm_span s)
{
	return tm_xstrndup(s.n ? (const char *)s.p : "", s.n);
}

/* The major version of a "Perfetto vNN.M-..." or "Perfetto vNN.M (...)"
 * service version, as the reference reads it: the digits between the
 * prefix and the first '.' or '-', nothing else; -1 when there is none. */
static int64_t service_major(tm_span v)
{
	static const char prefix[] = "Perfetto v";
	size_t np = sizeof(prefix) - 1;
	if (v.n < np || memcmp(v.p, prefix, np) != 0)
		return -1;
	size_t end = np;
	while (end < v.n && v.p[end] != '.' && v.p[end] != '-')
		end++;
	if (end == v.n || end == np)
		return -1;
	uint64_t major = 0;
	for (size_t i = np; i < end; i++) {
		if (v.p[i] < '0' || v.p[i] > '9')
			return -1;
		major = major * 10 + (uint64_t)(v.p[i] - '0');
		if (major > UINT32_MAX)
			return -1;
	}
	return (int64_t)major;
}

static void on_system_info(pscan *ps, reader *rd, const tm_packet *p)
{
	tm_system_info si;
	memset(&si, 0, sizeof(si));
	tm_system_info_decode(p->system_info, &si);
	if (TM_SPAN_HAS(si.tracing_service_version))
		scan_service_version(ps->sc, rd->row, service_major(si.tracing_service_version));
	tm_machines *mt = &ps->sc->s->machines;
	if (TM_SPAN_HAS(si.machine_name)) {
		char *n = span_str(si.machine_name);
		tm_machines_set_name(mt, rd->row, n);
		free(n);
	}
	tm_machine *m = &mt->rows[rd->row];
	if (si.has_utsname) {
		struct {
			tm_span s;
			char **field;
		} f[] = {
			{si.sysname, &m->sysname},
			{si.release, &m->release},
			{si.version, &m->version},
			{si.machine, &m->arch},
		};
		for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++) {
			if (!TM_SPAN_HAS(f[i].s))
				continue;
			char *v = span_str(f[i].s);
			tm_machines_set_text(f[i].field, v);
			free(v);
		}
	}
	if (si.has_num_cpus)
		m->num_cpus = si.num_cpus;
}

/* ---- one packet --------------------------------------------------------------- */

/* The payload's field name for TM_EV_PACKET, in TM_PKT_* order. */
static const char *const packet_field_names[TM_PKT_NSPANS] = {
	"ftrace_events", "process_tree", "chrome_events", "clock_snapshot", "track_event",
	"interned_data", "trace_config", "trace_stats", "synchronization_marker",
	"process_descriptor", "thread_descriptor", "system_info", "compressed_packets",
	"chrome_metadata", "trace_packet_defaults", "track_descriptor", "service_event",
	"remote_clock_sync", "trace_attributes", "zstd_compressed_packets",
};

static const char *packet_name(const tm_packet *p)
{
	for (int i = 0; i < TM_PKT_NSPANS; i++) {
		if (i == TM_PKT_INTERNED_DATA || i == TM_PKT_TRACE_PACKET_DEFAULTS)
			continue;
		if (p->span_mask & (1u << i))
			return packet_field_names[i];
	}
	return NULL;
}

static void set_reference_ts(seq_state *ss, const tm_thread_descriptor *td)
{
	ss->ts_valid = 1;
	ss->ts_ns = sat_mul_1000(td->reference_timestamp_us);
}

/* A sample's record (samples.h) on queue q at ts; `iid` a
 * StreamingProfilePacket's callstack. */
static int sample_record(pscan *ps, const reader *rd, seq_state *ss, uint32_t seq, uint32_t field, tm_span msg,
			 uint64_t iid, uint32_t q, int64_t ts)
{
	ps->sample.len = 0;
	pr_seq_defaults d = {
		.stack_source = ss->has_stack_source ? ss->stack_source.data : NULL,
		.source_len = ss->stack_source.len,
		.has_stack = ss->has_stack_defaults,
		.stack = {(const uint8_t *)(ss->stack_defaults.data ? ss->stack_defaults.data : ""),
			  ss->stack_defaults.len},
		.perf = ss->perf,
	};
	pr_sample_record(ss->stacks, field, msg, iid, ps->smp_pid, ps->smp_tid, seq, &d, &ps->sample);
	if (ps->records)
		pr_record(ps, rd, TM_PR_SAMPLE, q, ts, NULL, 0, ps->sample.data, ps->sample.len, 0);
	tm_pr_sample r;
	memcpy(&r, ps->sample.data, sizeof r);
	return r.has_stack;
}

static void stat_record(pscan *ps, const reader *rd, uint8_t code)
{
	ps->smp_logs |= code == TM_PR_STAT_STACK_PARSER_ERROR ? TM_SAMPLE_LOG_PARSER_ERROR : TM_SAMPLE_LOG_BAD_TIME;
	if (ps->records)
		pr_record(ps, rd, TM_PR_STAT, 0, 0, &code, 1, NULL, 0, 1);
}

/* ProfileModule::TokenizeStreamingProfilePacket: each sample at the
 * sequence's legacy time moved on by its delta (microseconds), the first
 * converted from MONOTONIC, on the reader's stream of them; deltas
 * beyond the samples move the sequence's time on too. */
static void on_streaming(pscan *ps, reader *rd, seq_state *ss, tm_span msg)
{
	/* the descriptor's int32 pid and tid as uint32 (-1: none given) */
	ps->smp_pid = ss->has_thread && ss->pid != -1 ? (uint32_t)ss->pid : 0;
	ps->smp_tid = ss->has_thread && ss->tid != -1 ? (uint32_t)ss->tid : 0;
	TM_VEC(uint64_t) iids = {0}, deltas = {0};
	iids.n = tm_pb_varints(msg, F_StreamingProfilePacket_callstack_iid, &iids.v, &iids.cap);
	deltas.n = tm_pb_varints(msg, F_StreamingProfilePacket_timestamp_delta_us, &deltas.v, &deltas.cap);
	int64_t sample_ts = ss->ts_ns, out;
	size_t i = 0;
	if (sample_ts < 0) {
		stat_record(ps, rd, TM_PR_STAT_STREAMING_TIMESTAMP);
		goto done;
	}
	if (tm_tracker_to_trace_time(rd->t, TM_CLOCK_MONOTONIC, 0, sample_ts, 0, &out) == TM_CONV_OK)
		sample_ts = out;
	for (; i < iids.n; i++) {
		if (i >= deltas.n) {
			stat_record(ps, rd, TM_PR_STAT_STACK_PARSER_ERROR);
			break;
		}
		int64_t delta = sat_mul_1000((int64_t)deltas.v[i]);
		ss->ts_ns = sat_add(ss->ts_ns, delta);
		if (ss->ts_ns < 0) {
			stat_record(ps, rd, TM_PR_STAT_STREAMING_TIMESTAMP);
			goto done;
		}
		sample_ts = sat_add(sample_ts, delta);
		int ok = 0;
		if (sample_ts < 0) /* the sorter drops it */
			scan_count(ps->sf, TM_STAT_NEGATIVE_TS, 1);
		if ((ps->records || ps->keep_ts) && sample_ts >= 0)
			ok = sample_record(ps, rd, ss, 0, F_TracePacket_streaming_profile_packet, msg, iids.v[i],
					   rd->q_streaming, sample_ts);
		PUSH(ps->smp, sample_ts < 0 ? INT64_MIN : ok ? sample_ts : -1 - sample_ts);
	}
	for (; i < deltas.n; i++) {
		ss->ts_ns = sat_add(ss->ts_ns, sat_mul_1000((int64_t)deltas.v[i]));
		if (ss->ts_ns < 0) {
			stat_record(ps, rd, TM_PR_STAT_STREAMING_TIMESTAMP);
			break;
		}
	}
done:
	free(iids.v);
	free(deltas.v);
}

/* The timestamp step and the modules (the reference's tokenize-and-push),
 * also run again for a set-aside packet at end of file. */
static int tokenize(pscan *ps, size_t ri, const tm_packet *p, tm_error *err)
{
	scan_file *sf = ps->sf;
	reader *rd = &ps->readers[ri];
	uint32_t seq = p->trusted_packet_sequence_id;
	seq_state *ss = seq_get(rd, seq);
	int64_t ts = 0;
	if (p->has_timestamp) {
		ts = (int64_t)p->timestamp;
		uint32_t clock = p->has_timestamp_clock_id ? p->timestamp_clock_id : 0;
		if (!clock && ss->has_clock_default)
			clock = ss->clock_default;
		int from_default = 0;
		uint32_t dc;
		if (!clock && tm_tracker_default_clock(rd->t, &dc)) {
			clock = dc;
			from_default = 1;
		}
		if ((TM_SPAN_HAS(p->chrome_events) || TM_SPAN_HAS(p->chrome_metadata)) &&
		    (!clock || clock == TM_CLOCK_MONOTONIC)) {
			/* Legacy Chrome data is MONOTONIC; raw kept on failure. */
			int64_t out;
			if (tm_tracker_to_trace_time(rd->t, TM_CLOCK_MONOTONIC, 0, ts, 0, &out) == TM_CONV_OK)
				ts = out;
		} else if (clock) {
			int64_t out;
			tm_conv cv;
			if (from_default) {
				cv = tm_tracker_default_to_trace_time(rd->t, ts, !ps->eof, &out);
			} else {
				if (is_seq_clock(clock) && !seq)
					return tm_err(err, TM_EINPUT,
						      "TracePacket specified a sequence-local clock id (%u) but the "
						      "TraceWriter's sequence_id is zero (the service is probably too old)",
						      clock);
				cv = tm_tracker_to_trace_time(rd->t, clock, seq, ts, !ps->eof, &out);
			}
			if (cv != TM_CONV_OK) {
				ps->po_drop = 1;
				if (!ps->eof && set_aside(ps, ri, p))
					return 0;
				scan_count(sf, TM_STAT_UNDEFERRABLE_LOSS, 1);
				return 0;
			}
			ts = out;
		}
		/* clock 0: the value is trace time as is (§6.1 step 4). */
	} else {
		/* ProtoTraceReader: a packet without a timestamp is pushed at the
		 * latest time seen (the reader's or the sorter's) */
		ts = scan_max_pushed(sf) > rd->latest_ts ? scan_max_pushed(sf) : rd->latest_ts;
	}
	if (ts > rd->latest_ts)
		rd->latest_ts = ts;

	if (p->has_timestamp) {
		ps->po_has_ts = 1;
		ps->po_ts = ts;
	}
	if (ps->records && (TM_SPAN_HAS(p->process_tree) || TM_SPAN_HAS(p->process_descriptor) ||
				       TM_SPAN_HAS(p->thread_descriptor) ||
				       (TM_SPAN_HAS(p->track_descriptor) && ss->valid))) {
		if (TM_SPAN_HAS(p->track_descriptor))
			pr_record(ps, rd, TM_PR_RESERVE, 0, 0, NULL, 0, p->track_descriptor.p, p->track_descriptor.n,
				  1);
		if (ts >= 0)
			pr_record(ps, rd, TM_PR_PACKET, rd->q_packets, ts, NULL, 0, p->raw.p, p->raw.n, 0);
	}
	if (TM_SPAN_HAS(p->track_event))
		return on_track_event(ps, rd, ss, p, ts);
	if (TM_SPAN_HAS(p->ftrace_events))
		return on_ftrace(ps, rd, p, err);
	if (TM_SPAN_HAS(p->system_info)) {
		on_system_info(ps, rd, p);
		return 0;
	}
	if (TM_SPAN_HAS(p->thread_descriptor) && !p->has_trusted_packet_sequence_id) {
		scan_count(sf, TM_STAT_THREAD_DESCRIPTOR_NO_SEQ, 0);
	} else if (TM_SPAN_HAS(p->thread_descriptor)) {
		if (!ss->valid)
			return 0; /* thread_descriptor_skipped_incremental_state_invalid */
		tm_thread_descriptor td;
		memset(&td, 0, sizeof(td));
		tm_thread_descriptor_decode(p->thread_descriptor, &td);
		set_reference_ts(ss, &td);
		ss->has_thread = 1;
		ss->pid = td.has_pid ? td.pid : -1;
		ss->tid = td.has_tid ? td.tid : -1;
	} else if (TM_SPAN_HAS(p->track_descriptor) && ss->valid) {
		tm_track_descriptor d;
		memset(&d, 0, sizeof(d));
		tm_track_descriptor_decode(p->track_descriptor, &d);
		if (d.has_thread && d.has_uuid && d.thread.has_pid && d.thread.has_tid) {
			set_reference_ts(ss, &d.thread);
			/* TokenizeThreadDescriptor: the sequence's thread too */
			ss->has_thread = 1;
			ss->pid = d.thread.pid;
			ss->tid = d.thread.tid;
		}
		remember_track(rd, &d);
	}
	/* FtraceStats (field 34) and the samples (samples.h) have no span of
	 * their own: a packet with no other payload may be one; the model
	 * wants FtraceStats' preserve_ftrace_buffer */
	if (!(p->span_mask & ~((1u << TM_PKT_INTERNED_DATA) | (1u << TM_PKT_TRACE_PACKET_DEFAULTS) |
				(1u << TM_PKT_THREAD_DESCRIPTOR)))) {
		const uint8_t *q = p->raw.p, *qe = p->raw.p + p->raw.n;
		tm_pb_field f = {0};
		while (q && q < qe) {
			int r = tm_pb_field_at(&q, qe, &f);
			if (r == TM_PB_FIELD_END)
				break;
			if (r != TM_PB_FIELD_OK || f.wire != TM_PB_LEN)
				continue;
			if (f.id == F_TracePacket_ftrace_stats && ps->records)
				pr_record(ps, rd, TM_PR_FTRACE_STATS, 0, 0, NULL, 0, f.data.p, f.data.n, 1);
			else if ((f.id == F_TracePacket_perf_sample || f.id == F_TracePacket_stack_sample) && ps->records &&
				 ts >= 0)
				sample_record(ps, rd, ss, seq, f.id, f.data, 0, rd->q_packets, ts);
			else if (f.id == F_TracePacket_streaming_profile_packet)
				on_streaming(ps, rd, ss, f.data);
			else if (f.id == F_TracePacket_heap_graph && ps->records && ts >= 0)
				pr_record(ps, rd, TM_PR_HEAP_GRAPH, rd->q_packets, ts, &seq, sizeof seq, f.data.p,
					  f.data.n, 0);
		}
	}
	if (!p->has_timestamp)
		return 0;
	if (!ps->events) {
		if (!scan_place_times(sf, rd->row, ts, -1, (int64_t)p->timestamp, TM_STAT_NEGATIVE_TS))
			ps->po_drop = 1;
		return 0;
	}
	tm_event ev = event_init(rd, TM_EV_PACKET);
	ev.ts = ts;
	ev.raw_ts = (int64_t)p->timestamp;
	ev.name = packet_name(p);
	ev.name_len = ev.name ? strlen(ev.name) : 0;
	if (!scan_place(sf, &ev, TM_STAT_NEGATIVE_TS))
		ps->po_drop = 1;
	return 0;
}

static void intern_table(pscan *ps, seq_state *ss, int kind, const tm_iid_name *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const tm_iid_name *in = &v[i];
		size_t len = TM_SPAN_HAS(in->name) ? in->name.n : 0;
		if (len > NAMES_MAX_BYTES - ps->name_bytes)
			continue;
		ps->name_bytes += len;
		uint64_t key = in->iid * 4 + (uint64_t)kind;
		const uint32_t *ix = tm_u64map_get(&ss->names, key);
		size_t k;
		if (ix) {
			k = *ix - 1;
		} else {
			TM_GROW(ss->names_at, ss->cap_names, ss->n_names + 1);
			k = ss->n_names++;
			tm_u64map_put(&ss->names, key, (uint32_t)k);
		}
		ss->names_at[k].off = ss->pool.len;
		ss->names_at[k].len = len;
		ss->names_at[k].pool_id = 0;
		if (len)
			tm_buf_put(&ss->pool, in->name.p, len);
	}
}

static void intern_names(pscan *ps, seq_state *ss, const tm_packet *p)
{
	tm_interned_data *d = &ps->idata;
	tm_interned_data_decode(p->interned_data, d);
	intern_table(ps, ss, IK_NAME, d->event_names.v, d->event_names.n);
	if (ps->records) {
		intern_table(ps, ss, IK_CATEGORY, d->event_categories.v, d->event_categories.n);
		intern_table(ps, ss, IK_ANNOTATION, d->debug_annotation_names.v, d->debug_annotation_names.n);
	}
}

/* One packet in its reader, in file order (the reference's ParsePacket
 * after the machine fork). */
static int parse_packet(pscan *ps, size_t ri, const tm_packet *p, tm_error *err)
{
	scan_file *sf = ps->sf;
	reader *rd = &ps->readers[ri];
	uint32_t seq = p->trusted_packet_sequence_id;
	int has_seq = p->has_trusted_packet_sequence_id;
	seq_state *ss = seq_get(rd, seq);
	/* a loss after the sequence's first packet, with its reasons */
	if (has_seq && ss->seen && p->previous_packet_dropped) {
		ss->dropped++;
		for (int b = 0; b < 8; b++)
			ss->loss[b] += (p->previous_packet_dropped >> (b + 1)) & 1;
	}
	ss->seen = 1;

	/* formats.md §5.2: a clear is applied before the same packet's
	 * defaults and interned data. */
	if (p->incremental_state_cleared || (p->sequence_flags & TM_SEQ_INCREMENTAL_STATE_CLEARED)) {
		if (has_seq) {
			ss->valid = 1;
			ss->has_clock_default = 0;
			ss->has_default_track = 0;
			ss->extra_uuids.len = ss->extra_double_uuids.len = 0;
			ss->has_stack_source = 0;
			ss->has_stack_defaults = 0;
			ss->perf.has = 0;
			seq_reset_interned(ss);
			ps->stack_bytes -= pr_stacks_clear(ss->stacks);
			ss->ts_valid = 0;
			ss->ts_ns = 0; /* a fresh TrackEventSequenceState: Chrome's samples count from 0 */
			ss->generation++;
		} else {
			scan_count(sf, TM_STAT_CLEARED_NO_SEQ, 0);
		}
	} else if (p->previous_packet_dropped) {
		if (has_seq) {
			ss->valid = 0;
			ss->generation++;
			ss->ts_valid = 0; /* interned data and defaults survive a loss */
			ss->ts_ns = 0;
		} else {
			scan_count(sf, TM_STAT_DROPPED_NO_SEQ, 0);
		}
	}
	if (TM_SPAN_HAS(p->trace_packet_defaults)) {
		if (!has_seq) {
			scan_count(sf, TM_STAT_DEFAULTS_NO_SEQ, 0);
		} else {
			tm_packet_defaults d;
			memset(&d, 0, sizeof(d));
			tm_packet_defaults_decode(p->trace_packet_defaults, &d);
			ss->has_clock_default = d.has_timestamp_clock_id;
			ss->clock_default = d.has_timestamp_clock_id ? d.timestamp_clock_id : 0;
			ss->has_default_track = d.has_track_uuid;
			ss->default_track = d.track_uuid;
			if (ps->records) {
				defaults_extra_uuids(ss, p->trace_packet_defaults);
				defaults_stack_source(ss, p->trace_packet_defaults);
				pr_perf_defaults(p->trace_packet_defaults, &ss->perf_names, &ss->perf);
			}
		}
	}
	if (TM_SPAN_HAS(p->interned_data)) {
		if (!has_seq)
			scan_count(sf, TM_STAT_INTERNED_NO_SEQ, 0);
		else if (ss->valid && (ps->events || ps->records)) /* names only they read */
			intern_names(ps, ss, p);
		if (has_seq && ss->valid && (ps->records || ps->keep_ts)) {
			/* the model's samples, the exporter's Chrome ones (samples.h) */
			size_t budget = STACKS_MAX_BYTES - ps->stack_bytes;
			pr_stacks_intern(&ss->stacks, p->interned_data, &budget);
			ps->stack_bytes = STACKS_MAX_BYTES - budget;
		}
	}
	if (TM_SPAN_HAS(p->clock_snapshot))
		return on_clock_snapshot(ps, rd, p, err);
	if (TM_SPAN_HAS(p->trace_stats))
		on_trace_stats(ps, rd, p->trace_stats);
	if (TM_SPAN_HAS(p->remote_clock_sync))
		return on_remote_clock_sync(ps, rd, p, err);
	if (TM_SPAN_HAS(p->service_event)) {
		/* clocks.md §6.1: packet clock or BOOTTIME, raw kept on failure. */
		uint32_t clock = p->has_timestamp_clock_id ? p->timestamp_clock_id : TM_CLOCK_BOOTTIME;
		int64_t raw = (int64_t)p->timestamp, out = raw;
		if (tm_tracker_to_trace_time(rd->t, clock, seq, raw, 1, &out) != TM_CONV_OK)
			out = raw;
		if (ps->records)
			pr_record(ps, rd, TM_PR_SERVICE, 0, 0, &out, sizeof out, p->service_event.p, p->service_event.n, 1);
		tm_event ev = event_init(rd, TM_EV_PACKET);
		ev.ts = out;
		ev.raw_ts = raw;
		ev.name = "service_event";
		ev.name_len = strlen(ev.name);
		if (scan_place(sf, &ev, TM_STAT_NEGATIVE_TS)) {
			ps->po_has_ts = 1;
			ps->po_ts = out;
		} else {
			ps->po_drop = 1;
		}
		return 0;
	}
	if (p->sequence_flags & TM_SEQ_NEEDS_INCREMENTAL_STATE) {
		if (!seq)
			return tm_err(err, TM_EINPUT,
				      "TracePacket specified SEQ_NEEDS_INCREMENTAL_STATE but the TraceWriter's "
				      "sequence_id is zero (the service is probably too old)");
		ss->ni_total++;
		if (!ss->valid) {
			ss->ni_skipped++;
			scan_count(sf, TM_STAT_SEQ_NEEDS_INCREMENTAL, 1);
			ps->po_drop = 1;
			return 0;
		}
	}
	if (TM_SPAN_HAS(p->trace_config))
		on_trace_config(ps, &ps->readers[ri], p->trace_config);
	return tokenize(ps, ri, p, err);
}

static void po_reset(pscan *ps)
{
	ps->po_drop = 0;
	ps->po_has_ts = 0;
	ps->po_ts = 0;
	ps->ft.n = ps->sw.n = ps->wk.n = ps->smp.n = 0;
	ps->smp_logs = 0;
}

/* Hand the packet just handled to the exporter unless it was dropped. */
static void po_emit(pscan *ps, size_t ri, const tm_packet *p)
{
	if (ps->po_drop || !ps->keep_ts)
		return;
	/* every field, without clearing it first: a packet at a time */
	tm_packet_out po = {.file_id = 0,
			    .machine_row = ps->readers[ri].row,
			    .seq_id = p->trusted_packet_sequence_id,
			    .data = p->raw.p,
			    .len = p->raw.n,
			    .has_ts = ps->po_has_ts,
			    .ts = ps->po_ts,
			    .ftrace_ts = ps->ft.v,
			    .n_ftrace = ps->ft.n,
			    .switch_ts = ps->sw.v,
			    .n_switch = ps->sw.n,
			    .waking_ts = ps->wk.v,
			    .n_waking = ps->wk.n,
			    .sample_ts = ps->smp.v,
			    .n_sample = ps->smp.n,
			    .sample_pid = ps->smp_pid,
			    .sample_tid = ps->smp_tid,
			    .sample_logs = ps->smp_logs};
	scan_emit_packet(ps->sf, &po);
}

static int on_packet(pscan *ps, const tm_packet *p, tm_error *err)
{
	size_t ri = 0;
	if (p->machine_id != 0) {
		int64_t r = route(ps, p->machine_id, err);
		if (r < 0)
			return -1;
		ri = (size_t)r;
	} else if (!ps->host_used && !p->synchronization_marker) {
		ps->host_used = 1;
	}
	po_reset(ps);
	if (parse_packet(ps, ri, p, err) != 0)
		return -1;
	po_emit(ps, ri, p);
	return 0;
}

/* End of file: each reader's set-aside packets in order, the base reader
 * first, then the remote readers in creation order. */
static int retry_aside(pscan *ps, tm_error *err)
{
	ps->eof = 1;
	for (size_t ri = 0; ri < ps->n_readers; ri++) {
		for (size_t k = ps->readers[ri].aside_head; k; k = ps->aside[k - 1].next) {
			aside *a = &ps->aside[k - 1];
			tm_span raw = {a->bytes, a->n};
			if (tm_packet_extract(raw, &ps->retry, err) != 0)
				return -1;
			po_reset(ps);
			if (tokenize(ps, ri, &ps->retry, err) != 0)
				return -1;
			po_emit(ps, ri, &ps->retry);
		}
	}
	return 0;
}

static void pscan_free(pscan *ps)
{
	for (size_t i = 0; i < ps->n_readers; i++) {
		reader *rd = &ps->readers[i];
		for (size_t k = 0; k < rd->n_seqs; k++)
			seq_free(&rd->seqs[k]);
		free(rd->seqs);
		tm_u64map_free(&rd->seq_index);
		tm_u64map_free(&rd->tracks);
		free(rd->track_at);
		free(rd->q_ftrace);
		free(rd->q_switch);
		free(rd->q_waking);
	}
	free(ps->readers);
	tm_buf_free(&ps->rec);
	tm_buf_free(&ps->te);
	tm_buf_free(&ps->sample);
	free(ps->smp.v);
	tm_u64map_free(&ps->by_machine);
	for (size_t i = 0; i < ps->n_aside; i++)
		free(ps->aside[i].bytes);
	free(ps->aside);
	tm_clock_snapshot_free(&ps->snap);
	tm_remote_clock_sync_free(&ps->rcs);
	tm_interned_data_free(&ps->idata);
	tm_ftrace_bundle_free(&ps->bundle);
	free(ps->ft.v);
	free(ps->sw.v);
	free(ps->wk.v);
	free(ps->rr);
	free(ps->sr);
	free(ps->rounds);
}

/* The packets of the file, handled as they are read. */
static int read_in_place(pscan *ps, tm_proto_reader *r, tm_error *err)
{
	const tm_packet *pkt;
	int rc;
	while ((rc = tm_proto_reader_next(r, &pkt, err)) == 1) {
		ps->sf->out->packets++;
		if (on_packet(ps, pkt, err) != 0)
			return -1;
	}
	return rc;
}

/* ---- a file read ahead (core/util/ahead.h) ----------------------------------------
 *
 * Issue 10: the proto scan ran on one core, and reading the packets (the
 * framing, inflating compressed bundles, extracting each packet's fields)
 * was a third of it. The read-ahead thread reads the next files' packets
 * into logs (tm_packet_put: each packet's fields and bytes), and the scan
 * handles a file's packets from its log when it gets there: the same
 * packets in the same order, then the reader's outcome, so every result
 * is the one a read in place gives. */

/* What a log holds before its packets (filled in at the end). */
typedef struct proto_log_head {
	uint64_t n_packets;
	int rc;         /* the reader's outcome: 0, or -1 with err */
	tm_error err;
} proto_log_head;

/* The scan alone (no events, no records) takes of a TrackEvent only what
 * places it: its type or legacy phase, its legacy duration and its
 * microsecond timestamps. Decoding those was a seventh of the scan's
 * first thread, which the read-ahead thread waited for: that thread
 * decodes them now and keeps them after the packet, in a word (flags,
 * type, phase) and the values present, 8 to 32 bytes. Types other than
 * the four placed and phases outside ASCII are kept as 0, which places
 * the same (as TM_EV_PACKET). */
enum { TT_TYPE = 1, TT_DELTA = 2, TT_ABS = 4, TT_DUR = 8 };

static void te_times_put(tm_buf *log, const te_head *e)
{
	uint64_t w[4];
	size_t n = 1;
	uint64_t type = e->has_type && e->type >= TM_TE_SLICE_BEGIN && e->type <= TM_TE_COUNTER ? (uint64_t)e->type : 0;
	uint64_t phase = e->legacy_phase > 0 && e->legacy_phase < 128 ? (uint64_t)e->legacy_phase : 0;
	uint64_t flags = e->has_type ? TT_TYPE : 0;
	if (e->has_timestamp_delta_us) {
		flags |= TT_DELTA;
		w[n++] = (uint64_t)e->timestamp_delta_us;
	}
	if (e->has_timestamp_absolute_us && e->timestamp_absolute_us) {
		flags |= TT_ABS;
		w[n++] = (uint64_t)e->timestamp_absolute_us;
	}
	if (e->legacy_duration_us) {
		flags |= TT_DUR;
		w[n++] = (uint64_t)e->legacy_duration_us;
	}
	w[0] = flags | type << 8 | phase << 16;
	memcpy(log->data + tm_log_reserve(log, 8 * n), w, 8 * n);
}

/* The next value te_times_put kept when `present`, else 0. */
static int64_t te_times_value(const char **i, uint64_t present)
{
	int64_t v = 0;
	if (present) {
		memcpy(&v, *i, 8);
		*i += 8;
	}
	return v;
}

/* The fields te_times_put kept, into e (its other fields untouched). */
static void te_times_get(const char **at, te_head *e)
{
	const char *i = (const char *)(((uintptr_t)*at + 7) & ~(uintptr_t)7);
	uint64_t w;
	memcpy(&w, i, 8);
	i += 8;
	e->has_type = (w & TT_TYPE) != 0;
	e->type = (int32_t)(w >> 8 & 0xff);
	e->legacy_phase = (int32_t)(w >> 16 & 0xff);
	e->has_timestamp_delta_us = (w & TT_DELTA) != 0;
	e->timestamp_delta_us = te_times_value(&i, w & TT_DELTA);
	e->has_timestamp_absolute_us = (w & TT_ABS) != 0;
	e->timestamp_absolute_us = te_times_value(&i, w & TT_ABS);
	e->legacy_duration_us = te_times_value(&i, w & TT_DUR);
	*at = i;
}

int scan_proto_log(tm_cursor *c, size_t max, tm_buf *log)
{
	size_t at = tm_log_reserve(log, sizeof(proto_log_head));
	proto_log_head h;
	memset(&h, 0, sizeof h);
	tm_proto_reader *r = tm_proto_reader_new(c);
	const tm_packet *pkt;
	int rc;
	te_head e;
	while ((rc = tm_proto_reader_next(r, &pkt, &h.err)) == 1) {
		tm_packet_put(log, pkt);
		if (TM_SPAN_HAS(pkt->track_event)) {
			te_head_decode(pkt->track_event, &e);
			te_times_put(log, &e);
		}
		h.n_packets++;
		if (log->len > max) {
			tm_proto_reader_free(r);
			return -1;
		}
	}
	tm_proto_reader_free(r);
	h.rc = rc;
	memcpy(log->data + at, &h, sizeof h);
	return 0;
}

/* The packets of a log, handled as read in place would. */
static int read_logged(pscan *ps, const tm_buf *log, size_t from, tm_error *err)
{
	from = (from + 7) & ~(size_t)7; /* where tm_log_reserve put the head */
	proto_log_head h;
	memcpy(&h, log->data + from, sizeof h);
	const char *at = log->data + from + sizeof h;
	tm_packet *pkt = &ps->logged;
	te_head e;
	memset(&e, 0, sizeof e);
	ps->te_logged = &e;
	for (uint64_t i = 0; i < h.n_packets; i++) {
		tm_packet_get(&at, pkt);
		ps->has_te_logged = TM_SPAN_HAS(pkt->track_event);
		if (ps->has_te_logged)
			te_times_get(&at, &e);
		ps->sf->out->packets++;
		int rc = on_packet(ps, pkt, err);
		ps->has_te_logged = 0; /* a packet set aside is read again later */
		if (rc != 0)
			return -1;
	}
	if (h.rc < 0)
		*err = h.err;
	return h.rc;
}

int scan_proto(scan_file *sf, tm_cursor *c, const tm_buf *log, size_t from, tm_error *err)
{
	pscan ps;
	memset(&ps, 0, sizeof(ps));
	ps.sf = sf;
	ps.sc = sf->sc;
	ps.keep_ts = scan_wants_packets(sf);
	ps.records = scan_wants_records(sf);
	ps.events = scan_wants_events(sf);
	ps.man = sf->sc->m->manifest;
	if (ps.man && sf->entry >= 0) {
		const tm_mf_file *mf = &ps.man->files[sf->entry];
		ps.machine_override = mf->machine.s != NULL;
		ps.pin = mf->clocks && mf->clocks->clock == 0;
		ps.multi = tm_manifest_entry_is_multi(ps.man, (size_t)sf->entry);
	}
	/* The base context exists from the start (scan.c opened it and armed
	 * its BOOTTIME bridge); a `machines` file never adopts. */
	tm_clock_tracker *t = scan_tracker(sf, sf->base_row);
	if (ps.pin)
		tm_tracker_set_clock_override(t);
	reader_add(&ps, sf->base_row, t);

	tm_proto_reader *r = log ? NULL : tm_proto_reader_new(c);
	int rc = log ? read_logged(&ps, log, from, err) : read_in_place(&ps, r, err);
	if (rc == 0)
		rc = retry_aside(&ps, err);
	if (rc == 0 && ps.cfg_seen && ps.cfg_no_flush)
		tm_statlist_add(&ps.sc->no_flush, sf->f->id, ps.cfg_row, "config_write_into_file_no_flush", -1, 1);
	tm_proto_reader_free(r);
	pscan_free(&ps);
	return rc < 0 ? -1 : 0;
}

static int read_file(scan_file *sf, tm_clock_tracker *t, tm_cursor *c, tm_buf *log, size_t from, tm_error *err)
{
	return scan_proto(sf, c, log, from, err);
}

/* Proto files are read ahead only for the scan alone: a pass that also
 * rewrites packets or makes model records keeps the second core busy with
 * those. Their logs are about 1.6 times their size. */
static uint64_t ahead_cost(const scan_ctx *sc, int64_t size)
{
	int busy = sc->sink && (sc->sink->record || sc->sink->packet);
	return busy ? 0 : (uint64_t)size * 2;
}

/* A proto file's log holds its packets' bytes and fields: past this (its
 * compressed bundles inflated) it is abandoned, so memory stays bounded. */
#define PROTO_LOG_MAX(size) ((size_t)(size) * 3 + ((size_t)1 << 20))

static int log_file(const scan_ctx *sc, tm_cursor *c, int64_t size, tm_buf *log)
{
	/* made as large as a log usually grows at once: grown by doubling,
	 * its reallocations copied it twice over and were a tenth of the
	 * reading thread's time */
	size_t want = log->len + (size_t)size / 8 * 13 + 4096;
	tm_reserve((void **)&log->data, &log->cap, want, 1);
	return scan_proto_log(c, PROTO_LOG_MAX(size), log) != 0;
}

const tm_tokenizer tm_proto_tokenizer = {
	.sync_clock = TM_CLOCK_BOOTTIME,
	.read = read_file,
	.ahead_cost = ahead_cost,
	.log = log_file,
};
