/* core/export/export_internal.h - what the two halves of the exporter share:
 * core/export/export.c (the header, kept proto packets rewritten at the wire
 * level) and core/export/export_text.c (Chrome JSON and systrace events encoded
 * from the model). Not for front ends. */
#ifndef TM_EXPORT_INTERNAL_H
#define TM_EXPORT_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "export/export.h"
#include "model/model.h"
#include "wire/proto.h"
#include "sort/spool.h"
#include "trace.pb-c.h"

/* ---- the wire level both halves write ---------------------------------------- */

/* v as a varint at t (room for 10 bytes); its length. */
static inline size_t varint_at(uint8_t *t, uint64_t v)
{
	size_t n = 0;
	do {
		t[n++] = (uint8_t)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
		v >>= 7;
	} while (v);
	return n;
}

/* Written in place: a packet's rewrite puts several of these. */
static inline void put_varint(tm_buf *b, uint64_t v)
{
	if (b->len + 11 > b->cap)
		tm_grow((void **)&b->data, &b->cap, b->len + 11, 1);
	b->len += varint_at((uint8_t *)b->data + b->len, v);
	b->data[b->len] = '\0';
}

static inline void put_tag(tm_buf *b, uint32_t id, unsigned wire)
{
	put_varint(b, ((uint64_t)id << 3) | wire);
}

static inline void put_uint(tm_buf *b, uint32_t id, uint64_t v)
{
	put_tag(b, id, TM_PB_VARINT);
	put_varint(b, v);
}

static inline void put_bytes(tm_buf *b, uint32_t id, const void *p, size_t n)
{
	put_tag(b, id, TM_PB_LEN);
	put_varint(b, n);
	if (n)
		tm_buf_put(b, p, n);
}

static inline void put_fixed64(tm_buf *b, uint32_t id, uint64_t v)
{
	uint8_t t[8];
	for (int i = 0; i < 8; i++)
		t[i] = (uint8_t)(v >> (8 * i));
	put_tag(b, id, TM_PB_I64);
	tm_buf_put(b, t, 8);
}

/* A nested message written in place: its tag and a one-byte length, which
 * nested_end fills (moving the body along when it outgrew 127 bytes). */
static inline size_t nested_begin(tm_buf *b, uint32_t id)
{
	put_tag(b, id, TM_PB_LEN);
	put_varint(b, 0);
	return b->len;
}

static inline void nested_end(tm_buf *b, size_t body)
{
	size_t n = b->len - body;
	uint8_t v[10];
	size_t vn = varint_at(v, n);
	if (vn > 1) {
		if (b->len + vn > b->cap)
			tm_grow((void **)&b->data, &b->cap, b->len + vn, 1);
		memmove(b->data + body + vn - 1, b->data + body, n);
		b->len += vn - 1;
		b->data[b->len] = '\0';
	}
	memcpy(b->data + body - 1, v, vn);
}

/* A TrackEvent of the text export: the fields it writes (0 or NULL:
 * absent). exp_te_wire writes it at the wire level (export_text.c says
 * why); test_export_wire compares it with protobuf-c's packing. */
typedef struct exp_te {
	uint64_t track_uuid;
	int type;                  /* a TrackEvent.Type */
	const char *category, *name;
	const char *annot;         /* debug_annotations fields (tm_export_json_args) */
	size_t annot_n;
	int has_counter;
	double counter;            /* double_counter_value */
	/* legacy_event, written when has_phase or has_bind_id */
	int has_phase, phase;
	int has_duration_us;
	int64_t duration_us;
	int has_unscoped_id;
	uint64_t unscoped_id;
	int has_bind_id;
	uint64_t bind_id;
	int bind_to_enclosing;
	int flow_direction;        /* a LegacyEvent.FlowDirection */
} exp_te;

/* The TrackEvent's bytes (without tag or length) appended to b. */
void exp_te_wire(tm_buf *b, const exp_te *e);

/* A map from a (a, b) pair to a value, open addressing. */
typedef struct exp_map_slot {
	uint64_t a, b, v;
	int used;
} exp_map_slot;

typedef struct exp_map {
	exp_map_slot *s;
	size_t cap, n;
} exp_map;

/* The slot of (a, b): created with v = 0 when `insert`, else NULL when
 * absent. */
exp_map_slot *exp_map_find(exp_map *m, uint64_t a, uint64_t b, int insert);

typedef struct exp {
	tm_merge *m;
	const tm_scan *scan;
	tm_views out;          /* the whole merge's file and each machine's */
	uint32_t *mach_id;     /* row -> TracePacket.machine_id, 0 for the host */
	size_t n_rows;         /* of mach_id */
	int early;             /* mach_id known before the scan (tm_scan_fixed_rows) */
	uint8_t *kernel_text;  /* row -> a systrace or JSON file put data on it */
	/* row -> how many systrace and proto files put data on it, 2 for
	 * more: from 2, the reference keeps a thread track per file there
	 * that the print events of merged.pftrace would share (core/formats/systrace/encode.c,
	 * systrace_line) */
	uint8_t *print_files;
	exp_map seqs;          /* (file << 32 | row, seq) -> new sequence id */
	uint32_t next_seq;
	uint64_t seq_last_a, seq_last_b; /* exp_seq's last key, and its id */
	uint32_t seq_last;     /* (0: none; an id never changes once given) */
	/* by new sequence id: its TracePacketDefaults as rewritten, and
	 * whether those went out again with the source of Chrome's samples
	 * (exp_streaming) */
	struct exp_seq_defaults {
		tm_buf bytes;
		int chrome;
	} *seq_defaults;
	size_t cap_seq_defaults;
	tm_buf pkt, s1, s2, s3;
	tm_ftrace_bundle bundle;
	TM_VEC(uint64_t) col[12];
	exp_text *text;
	int64_t *final_pid;    /* tm_export_thread_pids: by utid, -1 none */
	size_t n_final_pid;
	const tm_encoders *enc;
	int deferred;          /* kept packets go to `body` (tm_export_new_deferred) */
	int per_machine;       /* every machine's file too, not only the whole one's */
	tm_spool body;
	uint8_t tail[12];      /* emit_kept: the machine_id field of row tail_row */
	uint8_t tail_n;
	uint32_t tail_row;
	/* The scan's thread reads these for every packet while the worker
	 * that rewrites kept packets (and writes the fields above) runs: a
	 * cache line of their own. */
	_Alignas(64) struct tm_relay *worker;
	int worker_tried;
	char line_end_[64 - sizeof(struct tm_relay *) - sizeof(int)];
} exp;

/* Frame a TracePacket as a Trace.packet field into the whole merge's
 * output and its machine's. */
void exp_emit(exp *x, uint32_t row, const void *pkt, size_t len);

/* The merged trace's sequence id for (file, machine row, sequence). */
uint32_t exp_seq(exp *x, uint32_t file, uint32_t row, uint64_t seq);

/* An id made unique per (file, machine row) scope: a bijection of `id`
 * within the scope, 0 kept as 0. */
uint64_t exp_scoped(uint32_t file, uint32_t row, uint64_t salt, uint64_t id);

/* ---- the text formats' events (core/export/export_text.c) -------------------------
 * What a format's encoder (tm_encoder) writes with. */

typedef struct pend_end {
	int64_t ts;
	uint64_t order;
	uint32_t file, row;
	uint64_t uuid;
} pend_end;

struct exp_text {
	exp *x;
	const tm_encoders *enc;
	uint64_t *track_uuid;   /* by model track id: 0 until described */
	size_t cap_tracks;
	exp_map procs;          /* (file << 32 | row, pid) -> described */
	exp_map threads;        /* (row, utid) -> described */
	pend_end *heap;         /* X ends written later, by (ts, order) */
	size_t n_heap, cap_heap;
	uint64_t order;
	/* the bundle being filled: its events' bytes (each an
	 * FtraceEventBundle.event field) */
	int has_bundle;
	uint32_t b_file, b_row, b_cpu;
	tm_buf bundle;
	size_t n_bundle;
	tm_buf line;            /* a systrace line's event, encoded here */
	tm_buf buf;
	/* what each sample sequence interned (exp_text_stack_sample): by
	 * mapping, frame and callsite id, the first sequence; the others */
	struct exp_interned {
		uint32_t *seq;
		size_t n, cap;
	} interned_by_id[3];
	exp_map interned;
};

/* int32 and enum fields: a negative value takes ten bytes, sign-extended. */
static inline void put_int32(tm_buf *b, uint32_t id, int32_t v)
{
	put_uint(b, id, (uint64_t)(int64_t)v);
}

static inline void put_str(tm_buf *b, uint32_t id, const char *s)
{
	put_bytes(b, id, s, strlen(s));
}

/* A string as protobuf-c packs a char *: up to its first NUL (JSON text
 * may hold escaped NULs). */
static inline void put_cstr(tm_buf *b, uint32_t id, const char *s, size_t n)
{
	const char *z = memchr(s, 0, n);
	put_bytes(b, id, s, z ? (size_t)(z - s) : n);
}

/* An FtraceEvent, encoded alone as the FtraceEventBundle.event field it
 * becomes: exp_ftrace_begin opens it with an event of `field`,
 * exp_ftrace_end closes it. */
typedef struct exp_ev_pos {
	size_t ev, data;
} exp_ev_pos;

static inline exp_ev_pos exp_ftrace_begin(tm_buf *b, int64_t ts, uint32_t pid, uint32_t field)
{
	exp_ev_pos at;
	at.ev = nested_begin(b, F_FtraceEventBundle_event);
	put_uint(b, F_FtraceEvent_timestamp, (uint64_t)ts);
	put_uint(b, F_FtraceEvent_pid, pid);
	at.data = nested_begin(b, field);
	return at;
}

static inline void exp_ftrace_end(tm_buf *b, exp_ev_pos at)
{
	nested_end(b, at.data);
	nested_end(b, at.ev);
}

exp_text *exp_text_new(exp *x, const tm_encoders *enc);
/* A TrackEvent packet of (file, row) at ts, on the file's event sequence. */
void exp_text_event(exp_text *t, uint32_t file, uint32_t row, int64_t ts, const exp_te *te);
/* Where a thread's descriptor is still to be written and the model has
 * no process of it yet, write it now with `pid`: the process an event of
 * a later time gives the thread (a Firefox marker before its thread's
 * first in time), so that the reference does not make the thread twice. */
void exp_text_thread_pid(exp_text *t, const tm_model *m, uint32_t row, int64_t utid, int64_t pid);
/* The uuid of a model track, its descriptor written on first use. */
uint64_t exp_text_track(exp_text *t, const tm_model *m, uint32_t id);
/* A model counter row as a counter TrackEvent on its track (a descriptor
 * of its own: global, or a process's). */
void exp_text_counter_event(exp_text *t, const tm_mcounter *c);
/* A SLICE_END of track uuid written once the replay passes ts. */
void exp_text_end_at(exp_text *t, int64_t ts, uint32_t file, uint32_t row, uint64_t uuid);
/* te (on te->track_uuid, at ts) as a complete slice of dur ns: a legacy X
 * event where dur is whole microseconds, else a SLICE_BEGIN whose end
 * exp_text_end_at writes. */
void exp_te_complete(exp_text *t, exp_te *te, int64_t ts, int64_t dur, uint32_t file, uint32_t row);
/* Ends of slices due at or before `ts` (they close before what begins
 * there, as the reference pops a slice that ends where another starts). */
void exp_text_flush_ends(exp_text *t, int64_t ts);
/* The bundle being filled, written out (before a packet of another kind). */
void exp_text_flush_bundle(exp_text *t);
/* An FtraceEventBundle.event field into the bundle of (file, row, cpu),
 * flushing the bundle when it is another's or full. */
void exp_text_bundle_put(exp_text *t, uint32_t file, uint32_t row, uint32_t cpu, const void *ev, size_t n);
/* The events of the model's replay, by their encoders. */
void exp_text_observed(exp_text *t, const tm_mobserved *o);
/* What the encoder of the record's kind will write of an event alone
 * (tm_encoder.prepare), appended to b (its bytes; 0 for none). */
size_t exp_text_prepare(const exp_text *t, int64_t ts, const tm_mrec_head *h, const void *event, tm_buf *b);
void exp_text_counter(exp_text *t, const tm_mcounter *c);
/* A stack sample: its thread (tid; pid when has_pid), its leaf callsite
 * in the model, and its source (profiler_sample.source). */
typedef struct exp_perf exp_perf;
typedef struct exp_sample {
	int has_pid;
	uint32_t pid, tid;
	uint32_t callsite;      /* TM_NO_CALLSITE: none (a perf sample may have none) */
	const char *source;
	const exp_perf *perf;   /* a perf sample: a PerfSample packet; NULL for a StackSample */
} exp_sample;
/* What a PerfSample says beyond the thread and the stack: the attr whose
 * sequence it goes on (the reference makes a session per sequence, a
 * perf.data file one per attr), that attr's event (the timebase's name in
 * the sequence's defaults: the counter track's name), the CPU, the mode
 * and the counter's value after it; a read group's other events (the
 * followers the defaults name, at the sequence's first sample) and their
 * counts. */
struct exp_perf {
	uint32_t attr;
	const char *event;
	int has_cpu;
	uint32_t cpu;
	int mode;
	int has_count;
	uint64_t count;
	size_t n_followers;
	const char *const *follower_events;
	const uint64_t *follower_counts;
};
/* The sample as a StackSample packet of (file, row) at ts, on the file's
 * sample sequence: the source in the sequence's first packet's defaults,
 * the callstack interned on the sequence with what it needs of frames,
 * function names and mappings (a mapping's name its one path component,
 * none for an empty name; a memory mapping's range, offsets and build id).
 * A perf sample is a PerfSample packet instead, on its attr's sequence. */
void exp_text_stack_sample(exp_text *t, const tm_model *m, uint32_t file, uint32_t row, int64_t ts,
			   const exp_sample *smp);
/* A TracePacket of (file, row) at ts (none when < 0) holding msg in
 * `field` (an F_TracePacket_ data field), on the file's sequence `seq`
 * (a key of the encoder's, apart from export_text.c's: EVENT_SEQ and the
 * others count down from UINT64_MAX, perf's from UINT64_MAX - 8), the
 * sequence's first packet marking its incremental state cleared. */
void exp_text_message(exp_text *t, uint32_t file, uint32_t row, uint64_t seq, int64_t ts, uint32_t field,
		      const ProtobufCMessage *msg);
/* After the replay: pending ends, and the threads and processes the model
 * made with their names. */
void exp_text_finish(exp_text *t, const tm_model *model);
void exp_text_free(exp_text *t);

#endif
