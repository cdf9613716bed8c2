/* core/export_text.c - merged.pftrace: Chrome JSON and systrace events,
 * encoded from the model's replay so that the reference builds the same
 * rows from them (issue 8).
 *
 * Each JSON event becomes one TrackEvent, written in the order the
 * reference parses the archive, on a track the model names: its thread
 * track, the overflow track of an X that overlapped partially, the async
 * track the reference's TrackCompressor gives an id, a global or process
 * instant track, a process counter track. So the reference runs the same
 * slice and flow rules on the same per-track sequences:
 *   B, b -> SLICE_BEGIN; E, e -> SLICE_END (with its name and category,
 *   which the reference matches); i/I/R and n -> INSTANT; X -> a legacy
 *   complete event (its lazily closed stack is the JSON one); an X whose
 *   duration is not a whole microsecond (legacy durations are in µs) ->
 *   SLICE_BEGIN, and SLICE_END at its end; s/t/f -> legacy flow events;
 *   bind_id with flow_in/flow_out -> legacy bind_id and flow_direction;
 *   C -> one COUNTER per numeric arg; args -> nested debug annotations.
 * Each systrace line the reference's text import acts on becomes the
 * typed FtraceEvent the reference's proto import parses the same way
 * (sched_switch, sched_waking, print, cpu_frequency, cpu_idle); the rest
 * of the lines make no rows there and are not written.
 * At the end: the threads and processes the model made, with their final
 * names (a ProcessTree per machine; a task_rename after the line that
 * named a thread of no known process).
 *
 * Messages are built with protobuf-c from protos/trace.proto, but for the
 * TrackEvents and the packets around every message, written at the wire
 * level (the hot path: see exp_te_wire and write_packet).
 */
#include "export_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace.pb-c.h"

#define SALT_MTRACK 0x6d747261636b7321ull
#define SALT_MPROC 0x6d70726f63657373ull
#define SALT_MTHREAD 0x6d74687265616473ull
#define SALT_FLOW_V1 0x666c6f7776316964ull
#define SALT_FLOW_V2 0x666c6f7776326964ull
/* A file's derived events travel on one sequence, its track descriptors on
 * another: a descriptor of a thread sets its sequence's pid and tid, and
 * the reference would then tie every later event of that sequence on a
 * global or process track to that thread (legacy_event.passthrough_utid). */
#define EVENT_SEQ UINT64_MAX
#define DESCRIPTOR_SEQ (UINT64_MAX - 1)
#define BUNDLE_MAX 512

typedef Perfetto__Protos__TrackDescriptor TrackDescriptor;

typedef struct pend_end {
	int64_t ts;
	uint64_t order;
	uint32_t file, row;
	uint64_t uuid;
} pend_end;

struct exp_text {
	exp *x;
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
};

exp_text *exp_text_new(exp *x)
{
	exp_text *t = tm_xcalloc(1, sizeof(*t));
	t->x = x;
	return t;
}

/* ---- packets -------------------------------------------------------------------- */

/* What a packet holds: a message protobuf-c packs, or a TrackEvent this
 * file writes (exp_te_wire). */
typedef struct body {
	const ProtobufCMessage *msg;
	const exp_te *te;
	const exp_text *bundle; /* its bundle (FtraceEventBundle) */
} body;

/* One TracePacket: `field` (an F_TracePacket_ data field) holding `in`,
 * on the file's event or descriptor sequence, at `ts` (none when < 0).
 * The packet around it, four varints, is written here: packing a
 * TracePacket with protobuf-c visits each of its fields twice (size, then
 * bytes) and sizes the message inside twice more, which was a fifth of
 * the JSON export's model thread (callgrind). The fields go out in number
 * order, as protobuf-c writes them, so the bytes are the same. */
static void write_packet(exp_text *t, uint32_t file, uint32_t row, int64_t ts, uint32_t field, body in)
{
	exp *x = t->x;
	uint64_t seq = field == F_TracePacket_track_descriptor ? DESCRIPTOR_SEQ : EVENT_SEQ;
	exp_map_slot *s = exp_map_find(&x->seqs, ((uint64_t)file << 32) | row, seq, 1);
	int first = !s->v;
	if (first)
		s->v = ++x->next_seq;
	uint32_t machine = row < x->scan->machines.n ? x->mach_id[row] : 0;
	struct {
		uint32_t id;
		int has;
		uint64_t v;
	} env[] = {
		{F_TracePacket_timestamp, ts >= 0, (uint64_t)ts},
		{F_TracePacket_trusted_packet_sequence_id, 1, (uint32_t)s->v},
		{F_TracePacket_sequence_flags, first,
		 PERFETTO__PROTOS__TRACE_PACKET__SEQUENCE_FLAGS__SEQ_INCREMENTAL_STATE_CLEARED},
		{F_TracePacket_machine_id, machine != 0, machine},
	};
	tm_buf *b = &t->buf;
	b->len = 0;
	int put = 0;
	for (size_t i = 0; i <= sizeof env / sizeof env[0]; i++) {
		int last = i == sizeof env / sizeof env[0];
		if (!put && (last || field < env[i].id)) {
			if (in.te) {
				size_t at = nested_begin(b, field);
				exp_te_wire(b, in.te);
				nested_end(b, at);
			} else if (in.bundle) {
				size_t at = nested_begin(b, field);
				put_uint(b, F_FtraceEventBundle_cpu, in.bundle->b_cpu);
				tm_buf_put(b, in.bundle->bundle.data, in.bundle->bundle.len);
				nested_end(b, at);
			} else {
				size_t n = protobuf_c_message_get_packed_size(in.msg);
				put_tag(b, field, TM_PB_LEN);
				put_varint(b, n);
				TM_GROW(b->data, b->cap, b->len + n + 1);
				b->len += protobuf_c_message_pack(in.msg, (uint8_t *)b->data + b->len);
			}
			put = 1;
		}
		if (!last && env[i].has)
			put_uint(b, env[i].id, env[i].v);
	}
	exp_emit(x, row, b->data, b->len);
}

/* ---- tracks ----------------------------------------------------------------------- */

/* A track descriptor packet (untimed, on the file's descriptor sequence). */
static void write_descriptor(exp_text *t, uint32_t file, uint32_t row, TrackDescriptor *d)
{
	write_packet(t, file, row, -1, F_TracePacket_track_descriptor, (body){&d->base, NULL, NULL});
}

static uint64_t process_uuid(exp_text *t, const tm_model *m, uint32_t file, uint32_t row, int64_t pid)
{
	uint64_t uuid = exp_scoped(file, row, SALT_MPROC, (uint64_t)pid + 1);
	exp_map_slot *s = exp_map_find(&t->procs, ((uint64_t)file << 32) | row, (uint64_t)pid, 1);
	if (s->v)
		return uuid;
	s->v = 1;
	Perfetto__Protos__ProcessDescriptor pd = PERFETTO__PROTOS__PROCESS_DESCRIPTOR__INIT;
	pd.has_pid = 1;
	pd.pid = tm_model_id32(m, pid);
	TrackDescriptor d = PERFETTO__PROTOS__TRACK_DESCRIPTOR__INIT;
	d.has_uuid = 1;
	d.uuid = uuid;
	d.process = &pd;
	write_descriptor(t, file, row, &d);
	return uuid;
}

static int64_t thread_pid(const tm_model *m, int64_t utid);

/* The root descriptor of a thread: the reference gives every descriptor
 * of one thread its one thread track, so each of our thread tracks is a
 * child of it (see track_uuid). */
static uint64_t thread_root_uuid(exp_text *t, const tm_model *m, uint32_t row, int64_t utid)
{
	uint64_t uuid = exp_scoped(0, row, SALT_MTHREAD, (uint64_t)utid + 1);
	exp_map_slot *s = exp_map_find(&t->threads, row, (uint64_t)utid, 1);
	if (s->v)
		return uuid;
	s->v = 1;
	const tm_mthread *th = tm_model_thread(m, (size_t)utid);
	Perfetto__Protos__ThreadDescriptor td = PERFETTO__PROTOS__THREAD_DESCRIPTOR__INIT;
	td.has_pid = 1;
	td.pid = tm_model_id32(m, thread_pid(m, utid));
	td.has_tid = 1;
	td.tid = th ? tm_model_id32(m, th->tid) : 0;
	TrackDescriptor d = PERFETTO__PROTOS__TRACK_DESCRIPTOR__INIT;
	d.has_uuid = 1;
	d.uuid = uuid;
	d.thread = &td;
	write_descriptor(t, 0, row, &d);
	return uuid;
}

static int64_t thread_pid(const tm_model *m, int64_t utid)
{
	const tm_mthread *th = tm_model_thread(m, (size_t)utid);
	if (!th || th->upid < 0)
		return 0;
	return tm_model_process(m, (size_t)th->upid)->pid;
}

/* The uuid of a model track, its descriptor written on first use. */
static uint64_t track_uuid(exp_text *t, const tm_model *m, uint32_t id)
{
	TM_GROW_ZERO(t->track_uuid, t->cap_tracks, (size_t)id + 1);
	if (t->track_uuid[id])
		return t->track_uuid[id];
	const tm_mtrack *tr = tm_model_track(m, id);
	uint32_t file = tr->file_id, row = tr->machine_row;
	uint64_t uuid = exp_scoped(file, row, SALT_MTRACK, (uint64_t)id + 1);
	t->track_uuid[id] = uuid;
	TrackDescriptor d = PERFETTO__PROTOS__TRACK_DESCRIPTOR__INIT;
	Perfetto__Protos__CounterDescriptor cd = PERFETTO__PROTOS__COUNTER_DESCRIPTOR__INIT;
	d.has_uuid = 1;
	d.uuid = uuid;
	/* Every model track is a track of its own, as the reference keeps one
	 * per file and machine; merging same-named siblings (its default for
	 * descriptor tracks) would share stacks between them. */
	d.has_sibling_merge_behavior = 1;
	d.sibling_merge_behavior = PERFETTO__PROTOS__TRACK_DESCRIPTOR__SIBLING_MERGE_BEHAVIOR__SIBLING_MERGE_BEHAVIOR_NONE;
	if (tr->scope == TM_SCOPE_THREAD) {
		d.has_parent_uuid = 1;
		d.parent_uuid = thread_root_uuid(t, m, row, tr->utid);
	} else {
		if (tr->name) {
			d.static_or_dynamic_name_case = PERFETTO__PROTOS__TRACK_DESCRIPTOR__STATIC_OR_DYNAMIC_NAME_NAME;
			d.name = (char *)tr->name;
		}
		if (tr->scope == TM_SCOPE_PROCESS && tr->upid >= 0) {
			d.has_parent_uuid = 1;
			d.parent_uuid = process_uuid(t, m, file, row, tm_model_process(m, (size_t)tr->upid)->pid);
		}
		if (tr->kind == TM_MT_PROCESS_COUNTER || tr->kind == TM_MT_GLOBAL_COUNTER)
			d.counter = &cd;
	}
	write_descriptor(t, file, row, &d);
	return uuid;
}

/* ---- TrackEvents at the wire level ----------------------------------------------- */

/* The JSON export writes one TrackEvent per event, most with debug
 * annotations from the event's args. Built as protobuf-c structs (every
 * annotation and string a copy) and packed, the export took 2.4 G of the
 * model thread's 3.4 G instructions on the JSON bench (callgrind), and
 * 0.65 G of 1.6 G written here: protobuf-c visits every field of
 * TrackEvent, LegacyEvent and DebugAnnotation, set or not, once to size a
 * message and again to pack it, and sizes each nested message once more
 * per level. The fields set here are written straight from the args, in
 * field-number order as protobuf-c writes them, so the bytes are what it
 * gave; test_export_wire compares the two. Other messages of the export
 * stay protobuf-c's. */

/* int32 and enum fields: a negative value takes ten bytes, sign-extended. */
static void put_int32(tm_buf *b, uint32_t id, int32_t v)
{
	put_uint(b, id, (uint64_t)(int64_t)v);
}

static void put_str(tm_buf *b, uint32_t id, const char *s)
{
	put_bytes(b, id, s, strlen(s));
}

/* A string as protobuf-c packs a char *: up to its first NUL (JSON text
 * may hold escaped NULs). */
static void put_cstr(tm_buf *b, uint32_t id, const char *s, size_t n)
{
	const char *z = memchr(s, 0, n);
	put_bytes(b, id, s, z ? (size_t)(z - s) : n);
}

/* One JSON value as a DebugAnnotation's fields, named when `name`. A
 * member or item whose value is null is left out, as the reference
 * skips it. */
static void annot_wire(tm_buf *b, const tj_value *v, const char *name, size_t name_n)
{
	switch (v->type) {
	case TJ_BOOL: put_uint(b, F_DebugAnnotation_bool_value, v->b ? 1 : 0); break;
	case TJ_INT: put_uint(b, F_DebugAnnotation_int_value, (uint64_t)v->i); break;
	case TJ_DOUBLE: {
		uint64_t bits;
		memcpy(&bits, &v->d, sizeof bits);
		put_fixed64(b, F_DebugAnnotation_double_value, bits);
		break;
	}
	case TJ_STRING: put_cstr(b, F_DebugAnnotation_string_value, v->s, v->len); break;
	default: break;
	}
	if (name)
		put_cstr(b, F_DebugAnnotation_name, name, name_n);
	if (v->type != TJ_OBJECT && v->type != TJ_ARRAY)
		return;
	int dict = v->type == TJ_OBJECT;
	for (size_t i = 0; i < v->len; i++) {
		if (v->items[i].type == TJ_NULL)
			continue;
		size_t at = nested_begin(b, dict ? F_DebugAnnotation_dict_entries : F_DebugAnnotation_array_values);
		annot_wire(b, &v->items[i], dict ? v->keys[i] : NULL, dict ? v->key_lens[i] : 0);
		nested_end(b, at);
	}
}

void tm_export_json_args(tm_buf *b, const tj_value *args)
{
	if (!args || args->type != TJ_OBJECT)
		return;
	for (size_t i = 0; i < args->len; i++) {
		if (args->items[i].type == TJ_NULL)
			continue;
		size_t at = nested_begin(b, F_TrackEvent_debug_annotations);
		annot_wire(b, &args->items[i], args->keys[i], args->key_lens[i]);
		nested_end(b, at);
	}
}

void exp_te_wire(tm_buf *b, const exp_te *e)
{
	/* debug_annotations, the lowest field number written, as made where
	 * the file was read */
	if (e->annot_n)
		tm_buf_put(b, e->annot, e->annot_n);
	if (e->has_phase || e->has_bind_id) {
		size_t at = nested_begin(b, F_TrackEvent_legacy_event);
		if (e->has_phase)
			put_int32(b, F_TrackEvent_LegacyEvent_phase, e->phase);
		if (e->has_duration_us)
			put_uint(b, F_TrackEvent_LegacyEvent_duration_us, (uint64_t)e->duration_us);
		if (e->has_unscoped_id)
			put_uint(b, F_TrackEvent_LegacyEvent_unscoped_id, e->unscoped_id);
		if (e->has_bind_id)
			put_uint(b, F_TrackEvent_LegacyEvent_bind_id, e->bind_id);
		if (e->bind_to_enclosing)
			put_uint(b, F_TrackEvent_LegacyEvent_bind_to_enclosing, 1);
		if (e->flow_direction)
			put_int32(b, F_TrackEvent_LegacyEvent_flow_direction, e->flow_direction);
		nested_end(b, at);
	}
	if (e->type)
		put_int32(b, F_TrackEvent_type, e->type);
	put_uint(b, F_TrackEvent_track_uuid, e->track_uuid);
	if (e->category)
		put_str(b, F_TrackEvent_categories, e->category);
	if (e->name)
		put_str(b, F_TrackEvent_name, e->name);
	if (e->has_counter) {
		uint64_t bits;
		memcpy(&bits, &e->counter, sizeof bits);
		put_fixed64(b, F_TrackEvent_double_counter_value, bits);
	}
}

/* ---- JSON events ---------------------------------------------------------------- */

static void heap_push(exp_text *t, pend_end e)
{
	TM_GROW(t->heap, t->cap_heap, t->n_heap + 1);
	size_t i = t->n_heap++;
	t->heap[i] = e;
	while (i) {
		size_t p = (i - 1) / 2;
		const pend_end *a = &t->heap[i], *b = &t->heap[p];
		if (a->ts > b->ts || (a->ts == b->ts && a->order > b->order))
			break;
		pend_end tmp = t->heap[i];
		t->heap[i] = t->heap[p];
		t->heap[p] = tmp;
		i = p;
	}
}

static pend_end heap_pop(exp_text *t)
{
	pend_end top = t->heap[0];
	t->heap[0] = t->heap[--t->n_heap];
	for (size_t i = 0;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i;
		if (l < t->n_heap && (t->heap[l].ts < t->heap[m].ts ||
				      (t->heap[l].ts == t->heap[m].ts && t->heap[l].order < t->heap[m].order)))
			m = l;
		if (r < t->n_heap && (t->heap[r].ts < t->heap[m].ts ||
				      (t->heap[r].ts == t->heap[m].ts && t->heap[r].order < t->heap[m].order)))
			m = r;
		if (m == i)
			break;
		pend_end tmp = t->heap[i];
		t->heap[i] = t->heap[m];
		t->heap[m] = tmp;
		i = m;
	}
	return top;
}

static void write_track_event(exp_text *t, uint32_t file, uint32_t row, int64_t ts, const exp_te *te)
{
	write_packet(t, file, row, ts, F_TracePacket_track_event, (body){NULL, te, NULL});
}

/* Ends of X slices due at or before `ts` (they close before what begins
 * there, as the reference pops a slice that ends where another starts). */
static void flush_ends(exp_text *t, int64_t ts)
{
	while (t->n_heap && t->heap[0].ts <= ts) {
		pend_end e = heap_pop(t);
		exp_te te = {.track_uuid = e.uuid, .type = PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_SLICE_END};
		write_track_event(t, e.file, e.row, e.ts, &te);
	}
}

static void flush_bundle(exp_text *t);

static void json_event(exp_text *t, const tm_mobserved *o)
{
	const tm_mjson *j = o->json;
	const tm_model *m = o->model;
	uint32_t file = o->head->file_id, row = o->head->machine_row;
	char ph = j->phase;
	if (o->dropped || o->track == UINT32_MAX || !ph || !strchr("BEXiIRbensft", ph))
		return;
	flush_bundle(t);
	flush_ends(t, o->ts);
	uint64_t uuid = track_uuid(t, m, o->track);
	const tm_mtrack *tr = tm_model_track(m, o->track);
	exp_te te = {.track_uuid = uuid, .category = j->cat};
	/* the name the reference gives the slice: "[No name]" for a nameless
	 * begin, complete or thread instant; as is for ends and for global,
	 * process and async instants */
	const char *name = j->name;
	int default_name = ph == 'B' || ph == 'X' || ph == 'b' ||
			   ((ph == 'i' || ph == 'I' || ph == 'R') && tr->scope == TM_SCOPE_THREAD);
	if (!name && default_name)
		name = "[No name]";
	te.name = name;
	int v2_flow = ph == 'B' || ph == 'X' || ph == 'b' || ph == 'n';
	if (ph != 's' && ph != 't' && ph != 'f') {
		te.annot = j->annot;
		te.annot_n = j->annot_n;
	}
	switch (ph) {
	case 'B':
	case 'b':
		te.type = PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_SLICE_BEGIN;
		break;
	case 'E':
	case 'e':
		te.type = PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_SLICE_END;
		break;
	case 'i':
	case 'I':
	case 'R':
	case 'n':
		te.type = PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_INSTANT;
		break;
	case 'X':
		if (j->dur % 1000 == 0) {
			te.has_phase = 1;
			te.phase = 'X';
			te.has_duration_us = 1;
			te.duration_us = j->dur / 1000;
		} else {
			te.type = PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_SLICE_BEGIN;
			heap_push(t, (pend_end){o->ts + j->dur, t->order++, file, row, uuid});
		}
		break;
	case 's':
	case 't':
	case 'f':
		te.has_phase = 1;
		te.phase = ph;
		if (j->has_flow_id) {
			te.has_unscoped_id = 1;
			te.unscoped_id = exp_scoped(file, row, SALT_FLOW_V1, j->flow_id + 1);
		}
		te.bind_to_enclosing = ph == 'f' && j->bind_enclosing;
		break;
	}
	if (v2_flow && j->has_bind_id) {
		te.has_bind_id = 1;
		te.bind_id = exp_scoped(file, row, SALT_FLOW_V2, j->bind_id + 1);
		if (j->flow_in || j->flow_out)
			te.flow_direction = j->flow_in && j->flow_out ? PERFETTO__PROTOS__TRACK_EVENT__LEGACY_EVENT__FLOW_DIRECTION__FLOW_INOUT
					    : j->flow_out ? PERFETTO__PROTOS__TRACK_EVENT__LEGACY_EVENT__FLOW_DIRECTION__FLOW_OUT
							  : PERFETTO__PROTOS__TRACK_EVENT__LEGACY_EVENT__FLOW_DIRECTION__FLOW_IN;
	}
	write_track_event(t, file, row, o->ts, &te);
}

void exp_text_counter(exp_text *t, const tm_mcounter *c)
{
	const tm_model *m = c->model;
	if (c->file_id >= t->x->m->n_files || t->x->m->files[c->file_id].type != TM_TYPE_JSON)
		return; /* systrace counters travel as their ftrace events */
	flush_bundle(t);
	flush_ends(t, c->ts);
	exp_te te = {.track_uuid = track_uuid(t, m, c->track),
		     .type = PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_COUNTER,
		     .has_counter = 1,
		     .counter = c->value};
	write_track_event(t, c->file_id, c->machine_row, c->ts, &te);
}

/* ---- systrace lines -------------------------------------------------------------------- */

static void flush_bundle(exp_text *t)
{
	if (!t->has_bundle)
		return;
	write_packet(t, t->b_file, t->b_row, -1, F_TracePacket_ftrace_events, (body){NULL, NULL, t});
	t->bundle.len = 0;
	t->n_bundle = 0;
	t->has_bundle = 0;
}

/* The ftrace events of the systrace export are written at the wire level
 * into the bundle being filled, as the JSON export's TrackEvents are (see
 * exp_te_wire): as protobuf-c structs each event was two string copies and
 * a pack that visits every field of FtraceEvent and of the event inside.
 * Fields go out in number order, as protobuf-c writes them:
 *   FtraceEvent: timestamp 1, pid 2, then the one event field (3 and up);
 *   the event's own fields as ftrace_event writes them, ascending.
 * An event is encoded alone, as the FtraceEventBundle.event field it
 * becomes (exp_text_line_event: ftrace_event opens it with an event of
 * `field`, ftrace_event_end closes it), then put in the bundle of (file,
 * row, cpu) (bundle_put, flushing the bundle when it is another's or
 * full). */
typedef struct ev_pos {
	size_t ev, data;
} ev_pos;

static ev_pos ftrace_event(tm_buf *b, int64_t ts, uint32_t pid, uint32_t field)
{
	ev_pos at;
	at.ev = nested_begin(b, F_FtraceEventBundle_event);
	put_uint(b, F_FtraceEvent_timestamp, (uint64_t)ts);
	put_uint(b, F_FtraceEvent_pid, pid);
	at.data = nested_begin(b, field);
	return at;
}

static void ftrace_event_end(tm_buf *b, ev_pos at)
{
	nested_end(b, at.data);
	nested_end(b, at.ev);
}

static void bundle_put(exp_text *t, uint32_t file, uint32_t row, uint32_t cpu, const void *ev, size_t n)
{
	if (t->has_bundle && (t->b_file != file || t->b_row != row || t->b_cpu != cpu || t->n_bundle >= BUNDLE_MAX))
		flush_bundle(t);
	if (!t->has_bundle) {
		t->has_bundle = 1;
		t->b_file = file;
		t->b_row = row;
		t->b_cpu = cpu;
	}
	tm_buf_put(&t->bundle, ev, n);
	t->n_bundle++;
}

/* A text argument as the reference's StringToInt32 / StringToUInt32 /
 * StringToDouble would read it; the model already checked that the line
 * parsed, so a missing value cannot happen here. */
static int64_t arg_i(systrace_args *args, const char *key)
{
	char v[64];
	if (!systrace_args_get(args, key, v, sizeof v))
		return 0;
	int64_t d = systrace_few_digits(v);
	return d >= 0 ? d : strtoll(v, NULL, 10);
}

/* A text argument as a string field: up to 255 bytes, "" when absent. */
static void arg_str(tm_buf *b, uint32_t id, systrace_args *args, const char *key)
{
	char v[256];
	put_str(b, id, systrace_args_get(args, key, v, sizeof v) ? v : "");
}

#define EV_IS(lit) SYSTRACE_EVENT_IS(ev, evn, lit)

size_t exp_text_line_event(const exp_text *t, int64_t ts, uint32_t row, const systrace_event *l, systrace_args *a,
			   tm_buf *b)
{
	const char *ev = l->event_name;
	size_t evn = strlen(ev), start = b->len;
	uint32_t pid = (uint32_t)l->pid;
	ev_pos at;
	if (systrace_is_print_event(ev, evn)) {
		at = ftrace_event(b, ts, pid, F_FtraceEvent_print);
		put_str(b, F_PrintFtraceEvent_buf, l->args);
	} else if (EV_IS("sched_switch")) {
		at = ftrace_event(b, ts, pid, F_FtraceEvent_sched_switch);
		char st[64];
		systrace_args_get(a, "prev_state", st, sizeof st) || (st[0] = '\0');
		int major = 0, minor = 0;
		const tm_machines *ms = &t->x->scan->machines;
		if (row < ms->n && ms->rows[row].release)
			sscanf(ms->rows[row].release, "%d.%d", &major, &minor);
		arg_str(b, F_SchedSwitchFtraceEvent_prev_comm, a, "prev_comm");
		put_int32(b, F_SchedSwitchFtraceEvent_prev_pid, (int32_t)arg_i(a, "prev_pid"));
		put_int32(b, F_SchedSwitchFtraceEvent_prev_prio, (int32_t)arg_i(a, "prev_prio"));
		/* the reference reads the text line with no kernel version (its
		 * own trace), and merged.pftrace with the machine's SystemInfo */
		put_uint(b, F_SchedSwitchFtraceEvent_prev_state,
			 (uint64_t)tm_model_systrace_state_for(st, major, minor));
		arg_str(b, F_SchedSwitchFtraceEvent_next_comm, a, "next_comm");
		put_int32(b, F_SchedSwitchFtraceEvent_next_pid, (int32_t)arg_i(a, "next_pid"));
		put_int32(b, F_SchedSwitchFtraceEvent_next_prio, (int32_t)arg_i(a, "next_prio"));
	} else if (EV_IS("sched_waking")) {
		at = ftrace_event(b, ts, pid, F_FtraceEvent_sched_waking);
		arg_str(b, F_SchedWakingFtraceEvent_comm, a, "comm");
		put_int32(b, F_SchedWakingFtraceEvent_pid, (int32_t)arg_i(a, "pid"));
		put_int32(b, F_SchedWakingFtraceEvent_prio, (int32_t)arg_i(a, "prio"));
		put_int32(b, F_SchedWakingFtraceEvent_target_cpu, (int32_t)arg_i(a, "target_cpu"));
	} else if (EV_IS("cpu_frequency") || EV_IS("cpu_idle")) {
		int freq = ev[4] == 'f';
		at = ftrace_event(b, ts, pid, freq ? F_FtraceEvent_cpu_frequency : F_FtraceEvent_cpu_idle);
		char v[64];
		double state = systrace_args_get(a, "state", v, sizeof v) ? strtod(v, NULL) : 0;
		put_uint(b, freq ? F_CpuFrequencyFtraceEvent_state : F_CpuIdleFtraceEvent_state, (uint32_t)state);
		put_uint(b, freq ? F_CpuFrequencyFtraceEvent_cpu_id : F_CpuIdleFtraceEvent_cpu_id,
			 (uint32_t)arg_i(a, "cpu_id"));
	} else if (EV_IS("cpu_frequency_limits")) {
		/* the text import pushes each limit it can read, the proto one
		 * both (an absent one as 0): written when both are whole */
		char v[64];
		uint32_t cpu, mx, mn;
		if (!(systrace_args_get(a, "cpu_id", v, sizeof v) && systrace_to_u32(v, &cpu)) ||
		    !((systrace_args_get(a, "max", v, sizeof v) || systrace_args_get(a, "max_freq", v, sizeof v)) &&
		      systrace_to_u32(v, &mx)) ||
		    !((systrace_args_get(a, "min", v, sizeof v) || systrace_args_get(a, "min_freq", v, sizeof v)) &&
		      systrace_to_u32(v, &mn)))
			return 0;
		at = ftrace_event(b, ts, pid, F_FtraceEvent_cpu_frequency_limits);
		put_uint(b, F_CpuFrequencyLimitsFtraceEvent_min_freq, mn);
		put_uint(b, F_CpuFrequencyLimitsFtraceEvent_max_freq, mx);
		put_uint(b, F_CpuFrequencyLimitsFtraceEvent_cpu_id, cpu);
	} else if (EV_IS("clock_set_rate") || EV_IS("clock_enable") || EV_IS("clock_disable")) {
		/* the three messages share their fields' numbers */
		_Static_assert(F_ClockSetRateFtraceEvent_name == F_ClockEnableFtraceEvent_name &&
				       F_ClockSetRateFtraceEvent_state == F_ClockDisableFtraceEvent_state &&
				       F_ClockEnableFtraceEvent_state == F_ClockSetRateFtraceEvent_state,
			       "clock events share their field numbers");
		char v[64];
		uint32_t state;
		if (!systrace_args_get(a, "state", v, sizeof v) || !systrace_to_u32(v, &state))
			return 0;
		at = ftrace_event(b, ts, pid, ev[6] == 's' ? F_FtraceEvent_clock_set_rate
					     : ev[6] == 'e' ? F_FtraceEvent_clock_enable
							    : F_FtraceEvent_clock_disable);
		arg_str(b, F_ClockSetRateFtraceEvent_name, a, "name");
		put_uint(b, F_ClockSetRateFtraceEvent_state, state);
	} else if (EV_IS("thermal_temperature")) {
		char v[64];
		int32_t temp;
		if (!systrace_args_get(a, "temp", v, sizeof v) || !systrace_to_i32(v, &temp))
			return 0;
		at = ftrace_event(b, ts, pid, F_FtraceEvent_thermal_temperature);
		put_int32(b, F_ThermalTemperatureFtraceEvent_temp, temp);
		arg_str(b, F_ThermalTemperatureFtraceEvent_thermal_zone, a, "thermal_zone");
	} else if (EV_IS("cdev_update")) {
		/* a double in the text, an integer in the proto: whole ones */
		char v[64];
		double target;
		if (!systrace_args_get(a, "target", v, sizeof v) || !systrace_to_double(v, &target) || target < 0 ||
		    target > 9007199254740992.0 || target != (double)(uint64_t)target)
			return 0;
		at = ftrace_event(b, ts, pid, F_FtraceEvent_cdev_update);
		put_uint(b, F_CdevUpdateFtraceEvent_target, (uint64_t)target);
		arg_str(b, F_CdevUpdateFtraceEvent_type, a, "type");
	} else {
		return 0;
	}
	ftrace_event_end(b, at);
	return b->len - start;
}

/* A print B, E or I of a systrace file on a machine where other files
 * (systrace or proto) may print too. The reference gives each file its
 * own thread tracks (a TrackTracker per trace and machine: its
 * TraceProcessorContext), so two files' B and E on one thread nest apart;
 * as print events of one trace they would share the thread's one track
 * and cross. So they become TrackEvents on the model's track of that file
 * and thread, a child of the thread's descriptor, which the reference
 * keeps apart in the same way: the same slices, names (no category, no
 * args), depths and instants. */
static int print_on_own_track(const exp_text *t, const tm_mobserved *o)
{
	uint32_t row = o->head->machine_row;
	if (o->track == UINT32_MAX || o->dropped || row >= t->x->scan->machines.n || t->x->print_files[row] < 2)
		return 0;
	/* the track's descriptor names the thread's process: a thread of
	 * none keeps its print (a descriptor would give it process 0) */
	const tm_mthread *th = tm_model_thread(o->model, (size_t)tm_model_track(o->model, o->track)->utid);
	return th && th->upid >= 0;
}

static void print_track_event(exp_text *t, const tm_mobserved *o)
{
	const systrace_event *l = o->line;
	uint32_t file = o->head->file_id, row = o->head->machine_row;
	flush_bundle(t);
	flush_ends(t, o->ts);
	exp_te te = {.track_uuid = track_uuid(t, o->model, o->track)};
	switch (l->print_phase) {
	case 'B':
		te.type = PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_SLICE_BEGIN;
		te.name = l->print_name;
		break;
	case 'E':
		te.type = PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_SLICE_END;
		break;
	default: /* 'I' */
		te.type = PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_INSTANT;
		te.name = l->print_name;
		break;
	}
	write_track_event(t, file, row, o->ts, &te);
}

/* Did the line make its own thread, of no known process? (The reference
 * makes the thread of every line it reads.) */
static int made_own_thread(const tm_mobserved *o)
{
	for (size_t i = 0; i < o->n_made; i++) {
		const tm_mthread *th = tm_model_thread(o->model, (size_t)o->made[i]);
		if (th->tid == o->line->pid && th->upid < 0)
			return 1;
	}
	return 0;
}

/* A line that made its own thread: the thread is made here, at the
 * line's place and before what the line's event makes (a sched_switch
 * read from a proto makes its next thread first, the text line its own),
 * by a legacy generic ftrace event of the line's name, which the
 * reference reads into its raw ftrace_event table only (GetOrCreateThread
 * of its pid). Threads of a known process come by made_threads. */
static void line_thread(exp_text *t, const tm_mobserved *o)
{
	const systrace_event *l = o->line;
	tm_buf *b = &t->line;
	b->len = 0;
	ev_pos at = ftrace_event(b, o->ts, (uint32_t)l->pid, F_FtraceEvent_generic);
	put_str(b, F_GenericFtraceEvent_event_name, l->event_name);
	ftrace_event_end(b, at);
	bundle_put(t, o->head->file_id, o->head->machine_row, l->cpu, b->data, b->len);
}

static void systrace_line(exp_text *t, const tm_mobserved *o)
{
	const systrace_event *l = o->line;
	if (print_on_own_track(t, o)) {
		print_track_event(t, o);
		return;
	}
	/* a print with a bad payload is written too: the reference counts the
	 * same parse failure when it reads it back */
	if (made_own_thread(o))
		line_thread(t, o);
	if (o->dropped && !systrace_is_print_event(l->event_name, strlen(l->event_name)))
		return;
	const void *bytes = o->prepare;
	size_t n = o->n_prepare;
	if (!o->prepared) { /* encoded here */
		t->line.len = 0;
		n = exp_text_line_event(t, o->ts, o->head->machine_row, l, o->line_args, &t->line);
		bytes = t->line.data;
	}
	if (n)
		bundle_put(t, o->head->file_id, o->head->machine_row, l->cpu, bytes, n);
}
#undef EV_IS

/* A thread of a known process as a ProcessTree entry: the reference's
 * UpdateThread(tid, tgid). */
static void tree_thread(Perfetto__Protos__ProcessTree__Thread *x, const tm_model *m, const tm_mthread *th)
{
	Perfetto__Protos__ProcessTree__Thread init = PERFETTO__PROTOS__PROCESS_TREE__THREAD__INIT;
	*x = init;
	x->has_tid = x->has_tgid = 1;
	x->tid = tm_model_id32(m, th->tid);
	x->tgid = tm_model_id32(m, tm_model_process(m, (size_t)th->upid)->pid);
}

/* One ProcessTree of made_threads, before the record's event. */
static void write_made(exp_text *t, const tm_mobserved *o, Perfetto__Protos__ProcessTree *pt)
{
	flush_bundle(t);
	write_packet(t, o->head->file_id, o->head->machine_row, o->ts, F_TracePacket_process_tree,
		     (body){&pt->base, NULL, NULL});
	pt->n_threads = 0;
}

/* The threads a JSON event or systrace line made or gave a process, at
 * its place in the order. The reference's parsers call UpdateThread for
 * every JSON event and every line, also one that leaves no other trace (a
 * metadata event at ts 0, a line of an event it keeps no row of, the tgid
 * of a line), and the row ids it gives threads and processes in that
 * order (utid, upid) are what args such as legacy_event.passthrough_utid
 * hold. In merged.pftrace a thread would come only with its first event
 * on a thread track, and its process at the end. So each such thread of
 * a known process is made here by a ProcessTree entry (tid, tgid: the
 * same UpdateThread), before the record's own event, at the record's
 * time; a thread of no known process is left to its events (an entry
 * would give it process 0). */
static void made_threads(exp_text *t, const tm_mobserved *o)
{
	const tm_model *m = o->model;
	enum { BATCH = 8 };
	Perfetto__Protos__ProcessTree__Thread ths[BATCH], *thp[BATCH];
	Perfetto__Protos__ProcessTree pt = PERFETTO__PROTOS__PROCESS_TREE__INIT;
	pt.threads = thp;
	for (size_t i = 0; i < o->n_made; i++) {
		const tm_mthread *th = tm_model_thread(m, (size_t)o->made[i]);
		int seen = 0; /* made and then given a process: one entry */
		for (size_t k = i + 1; k < o->n_made && !seen; k++)
			seen = o->made[k] == o->made[i];
		if (seen || th->tid == 0 || th->upid < 0)
			continue;
		tree_thread(&ths[pt.n_threads], m, th);
		thp[pt.n_threads] = &ths[pt.n_threads];
		if (++pt.n_threads == BATCH)
			write_made(t, o, &pt);
	}
	if (pt.n_threads)
		write_made(t, o, &pt);
}

void exp_text_observed(exp_text *t, const tm_mobserved *o)
{
	made_threads(t, o);
	if (o->json)
		json_event(t, o);
	else if (o->line)
		systrace_line(t, o);
}

/* ---- the end --------------------------------------------------------------------------- */

/* The process a (machine, pid) stands for at the end, as the reference's
 * ProcessTracker maps it: the newest row of that pid, unless it ended. */
static int process_live(exp_map *latest, const tm_model *m, size_t upid)
{
	const tm_mprocess *p = tm_model_process(m, upid);
	exp_map_slot *s = exp_map_find(latest, p->machine_row, (uint64_t)p->pid, 0);
	return s && s->v == upid + 1 && p->end_ts < 0;
}

/* IsThreadAlive at the end of the trace: an entry for a dead thread would
 * make the reference start a new one. */
static int thread_live(exp_map *latest, const tm_model *m, const tm_mthread *th)
{
	if (th->end_ts >= 0)
		return 0;
	return th->upid < 0 || process_live(latest, m, (size_t)th->upid);
}

/* The indexes of the model's processes (procs) or threads by machine row:
 * row r's are ix[at[r] .. at[r + 1]), in table order; rows past nm are
 * left out. */
static void by_row(size_t *at, size_t *ix, size_t nm, size_t n, const tm_model *m, int procs)
{
	for (size_t i = 0; i < n; i++) {
		uint32_t row = procs ? tm_model_process(m, i)->machine_row : tm_model_thread(m, i)->machine_row;
		if (row < nm)
			at[row + 1]++;
	}
	for (size_t r = 0; r < nm; r++)
		at[r + 1] += at[r];
	size_t *next = tm_xcalloc(nm ? nm : 1, sizeof(*next));
	for (size_t i = 0; i < n; i++) {
		uint32_t row = procs ? tm_model_process(m, i)->machine_row : tm_model_thread(m, i)->machine_row;
		if (row < nm)
			ix[at[row] + next[row]++] = i;
	}
	free(next);
}

void exp_text_finish(exp_text *t, const tm_model *m)
{
	flush_bundle(t);
	flush_ends(t, INT64_MAX);
	/* Without JSON or systrace input, every name and association is in
	 * the copied proto packets: the same with or without the model's
	 * records (tm_gen_build does not make them then). */
	if (!tm_merge_has_text(t->x->m))
		return;
	const tm_scan *scan = t->x->scan;
	size_t nt = tm_model_n_threads(m), np = tm_model_n_processes(m);
	exp_map latest = {0};
	for (size_t i = 0; i < np; i++) {
		const tm_mprocess *p = tm_model_process(m, i);
		exp_map_find(&latest, p->machine_row, (uint64_t)p->pid, 1)->v = i + 1;
	}
	/* What merged.pftrace does not say by itself: the names JSON and
	 * systrace files gave threads and processes, and the associations
	 * of systrace threads (a line's tgid). A thread named by a proto
	 * source (a process tree, a descriptor: priority 2 and up) needs
	 * nothing, the proto packets are copied. A thread of a known process
	 * gets its entry in the ProcessTree below, never a task_rename: the
	 * reference renames a process with its main thread's task_rename.
	 * A named thread of no process gets a task_rename after the line that
	 * last named it: ftrace priority, like that line. */
	for (size_t i = 0; i < nt; i++) {
		const tm_mthread *th = tm_model_thread(m, i);
		if (th->tid == 0 || th->upid >= 0 || !th->name || th->name_cpu < 0 || th->name_prio >= 2)
			continue;
		tm_buf *b = &t->line;
		b->len = 0;
		int32_t tid = tm_model_id32(m, th->tid); /* the event's and the rename's */
		ev_pos at = ftrace_event(b, th->name_ts, (uint32_t)tid, F_FtraceEvent_task_rename);
		put_int32(b, F_TaskRenameFtraceEvent_pid, tid);
		put_str(b, F_TaskRenameFtraceEvent_newcomm, th->name);
		ftrace_event_end(b, at);
		bundle_put(t, 0, th->machine_row, (uint32_t)th->name_cpu, b->data, b->len);
	}
	flush_bundle(t);
	/* One ProcessTree per machine: every live thread of a known process
	 * that no proto source named (its association, and its name), every
	 * named live process (a second, empty cmdline element keeps a name
	 * with spaces whole: a single element is cut at its first space).
	 * Rows the reference no longer maps (ended, or their pid or tid
	 * reused) get no entry: it would make a new process or thread. */
	/* each machine's processes and threads, in table order: walking the
	 * whole tables for every machine took the square of their number
	 * (20,000 machines: 7 s) */
	size_t nm = scan->machines.n;
	size_t *p_at = tm_xcalloc(nm + 1, sizeof(*p_at)), *t_at = tm_xcalloc(nm + 1, sizeof(*t_at));
	size_t *p_ix = tm_xcalloc(np ? np : 1, sizeof(*p_ix)), *t_ix = tm_xcalloc(nt ? nt : 1, sizeof(*t_ix));
	by_row(p_at, p_ix, nm, np, m, 1);
	by_row(t_at, t_ix, nm, nt, m, 0);
	Perfetto__Protos__ProcessTree__Thread *ths = tm_xcalloc(nt ? nt : 1, sizeof(*ths));
	Perfetto__Protos__ProcessTree__Thread **thp = tm_xcalloc(nt ? nt : 1, sizeof(*thp));
	Perfetto__Protos__ProcessTree__Process *prs = tm_xcalloc(np ? np : 1, sizeof(*prs));
	Perfetto__Protos__ProcessTree__Process **prp = tm_xcalloc(np ? np : 1, sizeof(*prp));
	char **cmd = tm_xcalloc(2 * (np ? np : 1), sizeof(*cmd));
	for (size_t row = 0; row < nm; row++) {
		Perfetto__Protos__ProcessTree pt = PERFETTO__PROTOS__PROCESS_TREE__INIT;
		for (size_t k = p_at[row]; k < p_at[row + 1]; k++) {
			size_t i = p_ix[k];
			const tm_mprocess *p = tm_model_process(m, i);
			if (p->pid == 0 || !p->name || !process_live(&latest, m, i))
				continue;
			Perfetto__Protos__ProcessTree__Process init = PERFETTO__PROTOS__PROCESS_TREE__PROCESS__INIT;
			Perfetto__Protos__ProcessTree__Process *x = &prs[pt.n_processes];
			*x = init;
			x->has_pid = 1;
			x->pid = tm_model_id32(m, p->pid);
			cmd[2 * pt.n_processes] = (char *)p->name;
			cmd[2 * pt.n_processes + 1] = (char *)"";
			x->n_cmdline = 2;
			x->cmdline = &cmd[2 * pt.n_processes];
			prp[pt.n_processes++] = x;
		}
		for (size_t k = t_at[row]; k < t_at[row + 1]; k++) {
			const tm_mthread *th = tm_model_thread(m, t_ix[k]);
			if (th->tid == 0 || th->upid < 0 || th->name_prio >= 2 || !thread_live(&latest, m, th))
				continue;
			Perfetto__Protos__ProcessTree__Thread *x = &ths[pt.n_threads];
			tree_thread(x, m, th);
			if (th->name)
				x->name = (char *)th->name;
			thp[pt.n_threads++] = x;
		}
		if (pt.n_threads || pt.n_processes) {
			pt.threads = thp;
			pt.processes = prp;
			/* no timestamp: the reference gives it the latest one read,
			 * the end of the trace, and it is not an event */
			write_packet(t, 0, (uint32_t)row, -1, F_TracePacket_process_tree, (body){&pt.base, NULL, NULL});
		}
	}
	free(ths);
	free(thp);
	free(prs);
	free(prp);
	free(cmd);
	free(p_at);
	free(t_at);
	free(p_ix);
	free(t_ix);
	free(latest.s);
}

void exp_text_free(exp_text *t)
{
	if (!t)
		return;
	tm_buf_free(&t->bundle);
	free(t->track_uuid);
	free(t->procs.s);
	free(t->threads.s);
	free(t->heap);
	tm_buf_free(&t->buf);
	tm_buf_free(&t->line);
	free(t);
}
