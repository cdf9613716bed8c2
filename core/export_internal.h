/* core/export_internal.h - what the two halves of the exporter share:
 * core/export.c (the header, kept proto packets rewritten at the wire
 * level) and core/export_text.c (Chrome JSON and systrace events encoded
 * from the model). Not for front ends. */
#ifndef TM_EXPORT_INTERNAL_H
#define TM_EXPORT_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "export.h"
#include "model.h"
#include "proto.h"
#include "spool.h"

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

typedef struct exp_text exp_text;

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
	 * that the print events of merged.pftrace would share (export_text.c,
	 * systrace_line) */
	uint8_t *print_files;
	exp_map seqs;          /* (file << 32 | row, seq) -> new sequence id */
	uint32_t next_seq;
	uint64_t seq_last_a, seq_last_b; /* exp_seq's last key, and its id */
	uint32_t seq_last;     /* (0: none; an id never changes once given) */
	tm_buf pkt, s1, s2, s3;
	tm_ftrace_bundle bundle;
	TM_VEC(uint64_t) col[12];
	exp_text *text;
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

/* core/export_text.c: JSON and systrace events, from the model's replay. */
exp_text *exp_text_new(exp *x);
void exp_text_observed(exp_text *t, const tm_mobserved *o);
/* The FtraceEventBundle.event field a systrace line becomes in
 * merged.pftrace, appended to b (its bytes; 0 for a line that makes
 * none). Of the exporter it reads only the scan's results, so that it may
 * run ahead on the thread that feeds the model's
 * (tm_model_sink.prepare_line). */
size_t exp_text_line_event(const exp_text *t, int64_t ts, uint32_t row, const systrace_event *l,
			   systrace_args *a, tm_buf *b);
void exp_text_counter(exp_text *t, const tm_mcounter *c);
/* After the replay: pending ends, and the threads and processes the model
 * made with their names. */
void exp_text_finish(exp_text *t, const tm_model *model);
void exp_text_free(exp_text *t);

#endif
