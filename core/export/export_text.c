/* core/export/export_text.c - merged.pftrace: the events the model
 * observed in its replay of text formats, written so that the reference
 * builds the same rows from them (issue 8). What each format's events
 * become is its encoder's (core/formats/json/encode.c,
 * core/formats/systrace/encode.c); here is what they share: the packets
 * and their sequences, the track descriptors of the model's tracks, the
 * TrackEvent at the wire level, the ends of slices written later, the
 * FtraceEventBundle being filled, and at the end the threads and
 * processes the model made, with their final names (a ProcessTree per
 * machine; a task_rename after the line that named a thread of no known
 * process).
 *
 * Messages are built with protobuf-c from protos/trace.proto, but for the
 * TrackEvents, the ftrace events and the packets around every message,
 * written at the wire level (the hot path: see exp_te_wire and
 * write_packet).
 */
#include "export/export_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace.pb-c.h"

#define SALT_MTRACK 0x6d747261636b7321ull
#define SALT_MPROC 0x6d70726f63657373ull
#define SALT_MTHREAD 0x6d74687265616473ull
/* A file's derived events travel on one sequence, its track descriptors on
 * another: a descriptor of a thread sets its sequence's pid and tid, and
 * the reference would then tie every later event of that sequence on a
 * global or process track to that thread (legacy_event.passthrough_utid). */
#define EVENT_SEQ UINT64_MAX
#define DESCRIPTOR_SEQ (UINT64_MAX - 1)
/* A file's stack samples travel on a sequence of their own, which interns
 * their callstacks and whose defaults name their source. */
#define SAMPLE_SEQ (UINT64_MAX - 2)
/* A perf.data file's samples: a sequence per attr (a session each in the
 * reference, as the file's attrs are). */
#define PERF_SEQ(attr) (UINT64_MAX - 8 - (uint64_t)(attr))
#define BUNDLE_MAX 512

typedef Perfetto__Protos__TrackDescriptor TrackDescriptor;

exp_text *exp_text_new(exp *x, const tm_encoders *enc)
{
	exp_text *t = tm_xcalloc(1, sizeof(*t));
	t->x = x;
	t->enc = enc;
	return t;
}

/* ---- packets -------------------------------------------------------------------- */

/* What a packet holds: a message protobuf-c packs, or a TrackEvent this
 * file writes (exp_te_wire); and, on a sequence that interns, its
 * InternedData and TracePacketDefaults (NULL: none). */
typedef struct body {
	const ProtobufCMessage *msg;
	const exp_te *te;
	const exp_text *bundle; /* its bundle (FtraceEventBundle) */
	const ProtobufCMessage *interned, *defaults;
} body;

static void put_msg_field(tm_buf *b, uint32_t field, const ProtobufCMessage *msg)
{
	size_t n = protobuf_c_message_get_packed_size(msg);
	put_tag(b, field, TM_PB_LEN);
	put_varint(b, n);
	TM_GROW(b->data, b->cap, b->len + n + 1);
	b->len += protobuf_c_message_pack(msg, (uint8_t *)b->data + b->len);
}

/* One TracePacket: `field` (an F_TracePacket_ data field) holding `in`,
 * on sequence `seq` of the file (EVENT_SEQ, DESCRIPTOR_SEQ, SAMPLE_SEQ),
 * at `ts` (none when < 0). The packet around it, four varints, is written
 * here: packing a TracePacket with protobuf-c visits each of its fields
 * twice (size, then bytes) and sizes the message inside twice more, which
 * was a fifth of the JSON export's model thread (callgrind). The fields go
 * out in number order, as protobuf-c writes them, so the bytes are the
 * same. */
static void write_packet_on(exp_text *t, uint32_t file, uint32_t row, uint64_t seq, int64_t ts, uint32_t field,
			    body in)
{
	exp *x = t->x;
	exp_map_slot *s = exp_map_find(&x->seqs, ((uint64_t)file << 32) | row, seq, 1);
	int first = !s->v;
	if (first)
		s->v = ++x->next_seq;
	uint32_t machine = row < x->scan->machines.n ? x->mach_id[row] : 0;
	struct {
		uint32_t id;
		int has;
		uint64_t v;
		const ProtobufCMessage *msg;
	} env[] = {
		{F_TracePacket_timestamp, ts >= 0, (uint64_t)ts, NULL},
		{F_TracePacket_trusted_packet_sequence_id, 1, (uint32_t)s->v, NULL},
		{F_TracePacket_interned_data, in.interned != NULL, 0, in.interned},
		{F_TracePacket_sequence_flags, first,
		 PERFETTO__PROTOS__TRACE_PACKET__SEQUENCE_FLAGS__SEQ_INCREMENTAL_STATE_CLEARED, NULL},
		{F_TracePacket_trace_packet_defaults, in.defaults != NULL, 0, in.defaults},
		{F_TracePacket_machine_id, machine != 0, machine, NULL},
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
				put_msg_field(b, field, in.msg);
			}
			put = 1;
		}
		if (last || !env[i].has)
			continue;
		if (env[i].msg)
			put_msg_field(b, env[i].id, env[i].msg);
		else
			put_uint(b, env[i].id, env[i].v);
	}
	exp_emit(x, row, b->data, b->len);
}

void exp_text_message(exp_text *t, uint32_t file, uint32_t row, uint64_t seq, int64_t ts, uint32_t field,
		      const ProtobufCMessage *msg)
{
	write_packet_on(t, file, row, seq, ts, field, (body){.msg = msg});
}

static void write_packet(exp_text *t, uint32_t file, uint32_t row, int64_t ts, uint32_t field, body in)
{
	uint64_t seq = field == F_TracePacket_track_descriptor ? DESCRIPTOR_SEQ : EVENT_SEQ;
	write_packet_on(t, file, row, seq, ts, field, in);
}

/* ---- tracks ----------------------------------------------------------------------- */

/* A track descriptor packet (untimed, on the file's descriptor sequence). */
static void write_descriptor(exp_text *t, uint32_t file, uint32_t row, TrackDescriptor *d)
{
	write_packet(t, file, row, -1, F_TracePacket_track_descriptor, (body){.msg = &d->base});
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

/* t->threads' values: a thread's root descriptor is written, or written
 * in process 0 because the thread had no process yet and no pid to come
 * was known (an strace thread: a ThreadDescriptor must name a pid,
 * tracemount(1), "Divergences"). */
enum { ROOT_WRITTEN = 1, ROOT_IN_PROCESS_0 = 2 };

/* The pid a thread of no process yet is written with: that of the process
 * it has at the end, where a run of the model before this one says
 * (tm_export_thread_pids), else 0. The reference's import of the archive
 * moves such a thread into its process when a file names it; its import of
 * merged.pftrace would keep it in process 0 and make a second thread of the
 * tid for that file. Named at once, it is made in its process. */
static int64_t pid_to_come(const exp_text *t, int64_t utid)
{
	const exp *x = t->x;
	return utid >= 0 && (size_t)utid < x->n_final_pid ? x->final_pid[utid] : -1;
}

/* A thread's root descriptor: (pid, tid), and its name when not NULL. */
static void write_thread_root(exp_text *t, const tm_model *m, uint32_t row, uint64_t uuid, int64_t pid,
			      const tm_mthread *th, const char *name)
{
	Perfetto__Protos__ThreadDescriptor td = PERFETTO__PROTOS__THREAD_DESCRIPTOR__INIT;
	td.has_pid = 1;
	td.pid = tm_model_id32(m, pid);
	td.has_tid = 1;
	td.tid = th ? tm_model_id32(m, th->tid) : 0;
	td.thread_name = (char *)name;
	TrackDescriptor d = PERFETTO__PROTOS__TRACK_DESCRIPTOR__INIT;
	d.has_uuid = 1;
	d.uuid = uuid;
	d.thread = &td;
	write_descriptor(t, 0, row, &d);
}

/* The root descriptor of a thread: the reference gives every descriptor
 * of one thread its one thread track, so each of our thread tracks is a
 * child of it (see track_uuid). */
static uint64_t thread_root_uuid_of(exp_text *t, const tm_model *m, uint32_t row, int64_t utid, int64_t pid)
{
	uint64_t uuid = exp_scoped(0, row, SALT_MTHREAD, (uint64_t)utid + 1);
	exp_map_slot *s = exp_map_find(&t->threads, row, (uint64_t)utid, 1);
	if (s->v)
		return uuid;
	const tm_mthread *th = tm_model_thread(m, (size_t)utid);
	if (pid < 0 && th && th->upid < 0)
		pid = pid_to_come(t, utid);
	s->v = pid < 0 && th && th->upid < 0 ? ROOT_IN_PROCESS_0 : ROOT_WRITTEN;
	write_thread_root(t, m, row, uuid, pid >= 0 ? pid : thread_pid(m, utid), th, NULL);
	return uuid;
}

static uint64_t thread_root_uuid(exp_text *t, const tm_model *m, uint32_t row, int64_t utid)
{
	return thread_root_uuid_of(t, m, row, utid, -1);
}

void exp_text_thread_pid(exp_text *t, const tm_model *m, uint32_t row, int64_t utid, int64_t pid)
{
	if (thread_pid(m, utid) == 0)
		thread_root_uuid_of(t, m, row, utid, pid);
}

static int64_t thread_pid(const tm_model *m, int64_t utid)
{
	const tm_mthread *th = tm_model_thread(m, (size_t)utid);
	if (!th || th->upid < 0)
		return 0;
	return tm_model_process(m, (size_t)th->upid)->pid;
}

/* Whether the reference's import of merged.pftrace has this thread in
 * process 0: its root descriptor was written before the model gave it a
 * process, with no pid to come (pid_to_come). The reference never moves a
 * thread to another process, so an entry naming its process later
 * (UpdateThread) would make it a second thread of that tid there; such a
 * thread gets none. */
static int root_in_process_0(exp_text *t, const tm_mthread *th, int64_t utid)
{
	exp_map_slot *s = exp_map_find(&t->threads, th->machine_row, (uint64_t)utid, 0);
	return s && s->v == ROOT_IN_PROCESS_0;
}

/* The uuid of a model track, its descriptor written on first use. */
uint64_t exp_text_track(exp_text *t, const tm_model *m, uint32_t id)
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

void exp_text_counter_event(exp_text *t, const tm_mcounter *c)
{
	exp_text_flush_bundle(t);
	exp_text_flush_ends(t, c->ts);
	exp_te te = {.track_uuid = exp_text_track(t, c->model, c->track),
		     .type = PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_COUNTER,
		     .has_counter = 1,
		     .counter = c->value};
	exp_text_event(t, c->file_id, c->machine_row, c->ts, &te);
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

void exp_text_event(exp_text *t, uint32_t file, uint32_t row, int64_t ts, const exp_te *te)
{
	write_packet(t, file, row, ts, F_TracePacket_track_event, (body){.te = te});
}

/* Ends of X slices due at or before `ts` (they close before what begins
 * there, as the reference pops a slice that ends where another starts). */
void exp_text_end_at(exp_text *t, int64_t ts, uint32_t file, uint32_t row, uint64_t uuid)
{
	heap_push(t, (pend_end){ts, t->order++, file, row, uuid});
}

void exp_te_complete(exp_text *t, exp_te *te, int64_t ts, int64_t dur, uint32_t file, uint32_t row)
{
	if (dur % 1000 == 0) {
		te->has_phase = 1;
		te->phase = 'X';
		te->has_duration_us = 1;
		te->duration_us = dur / 1000;
	} else {
		te->type = PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_SLICE_BEGIN;
		exp_text_end_at(t, ts + dur, file, row, te->track_uuid);
	}
}

void exp_text_flush_ends(exp_text *t, int64_t ts)
{
	while (t->n_heap && t->heap[0].ts <= ts) {
		pend_end e = heap_pop(t);
		exp_te te = {.track_uuid = e.uuid, .type = PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_SLICE_END};
		exp_text_event(t, e.file, e.row, e.ts, &te);
	}
}

/* ---- the FtraceEventBundle being filled ------------------------------------------- */

void exp_text_flush_bundle(exp_text *t)
{
	if (!t->has_bundle)
		return;
	write_packet(t, t->b_file, t->b_row, -1, F_TracePacket_ftrace_events, (body){.bundle = t});
	t->bundle.len = 0;
	t->n_bundle = 0;
	t->has_bundle = 0;
}

void exp_text_bundle_put(exp_text *t, uint32_t file, uint32_t row, uint32_t cpu, const void *ev, size_t n)
{
	/* A text line may name any CPU (the reference reads systrace text up
	 * to CPU 4095 and aborts above), but its proto import refuses the
	 * whole trace for a bundle of CPU 1024 or more: such events are left
	 * out, so that merged.pftrace still opens (tracemount(1), DIVERGENCES
	 * FROM PERFETTO). */
	if (cpu >= TM_FTRACE_MAX_CPUS)
		return;
	if (t->has_bundle && (t->b_file != file || t->b_row != row || t->b_cpu != cpu || t->n_bundle >= BUNDLE_MAX))
		exp_text_flush_bundle(t);
	if (!t->has_bundle) {
		t->has_bundle = 1;
		t->b_file = file;
		t->b_row = row;
		t->b_cpu = cpu;
	}
	tm_buf_put(&t->bundle, ev, n);
	t->n_bundle++;
}

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
	exp_text_flush_bundle(t);
	write_packet(t, o->head->file_id, o->head->machine_row, o->ts, F_TracePacket_process_tree,
		     (body){.msg = &pt->base});
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
	/* made and then given a process: one entry, at its last place. A
	 * record makes a thread or two; one that resolves a chain of threads
	 * waiting for a process makes them all, so past a few their last
	 * places are found through a map (a walk of the rest for each took
	 * 3.4 s for 160,000) */
	tm_u64map last = {0};
	if (o->n_made > BATCH)
		for (size_t i = 0; i < o->n_made; i++)
			tm_u64map_put(&last, (uint64_t)o->made[i], (uint32_t)i);
	for (size_t i = 0; i < o->n_made; i++) {
		const tm_mthread *th = tm_model_thread(m, (size_t)o->made[i]);
		int seen = 0;
		if (o->n_made > BATCH)
			seen = *tm_u64map_get(&last, (uint64_t)o->made[i]) != i + 1; /* the map's: index + 1 */
		else
			for (size_t k = i + 1; k < o->n_made && !seen; k++)
				seen = o->made[k] == o->made[i];
		if (seen || th->tid == 0 || th->upid < 0 || root_in_process_0(t, th, o->made[i]))
			continue;
		tree_thread(&ths[pt.n_threads], m, th);
		thp[pt.n_threads] = &ths[pt.n_threads];
		if (++pt.n_threads == BATCH)
			write_made(t, o, &pt);
	}
	if (pt.n_threads)
		write_made(t, o, &pt);
	tm_u64map_free(&last);
}

void exp_text_observed(exp_text *t, const tm_mobserved *o)
{
	made_threads(t, o);
	const tm_encoder *e = t->enc->of_kind(o->head->kind);
	if (e && e->observed)
		e->observed(t, o);
}

void exp_text_counter(exp_text *t, const tm_mcounter *c)
{
	if (c->file_id >= t->x->m->n_files)
		return;
	const tm_encoder *e = t->enc->of_type(t->x->m->files[c->file_id].type);
	if (e && e->counter)
		e->counter(t, c);
}

size_t exp_text_prepare(const exp_text *t, int64_t ts, const tm_mrec_head *h, const void *event, tm_buf *b)
{
	const tm_encoder *e = t->enc->of_kind(h->kind);
	return e && e->prepare ? e->prepare(t, ts, h, event, b) : 0;
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

int tm_encoders_used(const tm_encoders *enc, const tm_merge *m)
{
	for (size_t i = 0; i < m->n_files; i++)
		if (enc->of_type(m->files[i].type))
			return 1;
	return 0;
}

void exp_text_finish(exp_text *t, const tm_model *m)
{
	exp_text_flush_bundle(t);
	exp_text_flush_ends(t, INT64_MAX);
	/* Without input a format's encoder converts, every name and
	 * association is in the copied proto packets: the same with or
	 * without the model's records (tm_gen_build does not make them
	 * then). */
	if (!tm_encoders_used(t->enc, t->x->m))
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
		exp_ev_pos at = exp_ftrace_begin(b, th->name_ts, (uint32_t)tid, F_FtraceEvent_task_rename);
		put_int32(b, F_TaskRenameFtraceEvent_pid, tid);
		put_str(b, F_TaskRenameFtraceEvent_newcomm, th->name);
		exp_ftrace_end(b, at);
		exp_text_bundle_put(t, 0, th->machine_row, (uint32_t)th->name_cpu, b->data, b->len);
	}
	exp_text_flush_bundle(t);
	/* A thread whose descriptor put it in process 0 and that a file gave
	 * a process later gets no ProcessTree entry below (root_in_process_0);
	 * the name that entry would carry comes in its descriptor, written
	 * again: the reference names the thread by (tid, pid 0) at the end,
	 * which finds it while it is its tid's newest row and has not ended. */
	exp_map newest = {0};
	for (size_t i = 0; i < nt; i++) {
		const tm_mthread *th = tm_model_thread(m, i);
		exp_map_find(&newest, th->machine_row, (uint64_t)th->tid, 1)->v = i + 1;
	}
	for (size_t i = 0; i < nt; i++) {
		const tm_mthread *th = tm_model_thread(m, i);
		if (th->tid == 0 || th->upid < 0 || !th->name || (th->name_prio >= 2 && !th->name_perf) ||
		    th->end_ts >= 0 || !root_in_process_0(t, th, (int64_t)i) ||
		    exp_map_find(&newest, th->machine_row, (uint64_t)th->tid, 0)->v != i + 1)
			continue;
		write_thread_root(t, m, th->machine_row, exp_scoped(0, th->machine_row, SALT_MTHREAD, (uint64_t)i + 1), 0,
				  th, th->name);
	}
	free(newest.s);
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
			if (th->tid == 0 || th->upid < 0 || (th->name_prio >= 2 && !th->name_perf) ||
			    !thread_live(&latest, m, th) || root_in_process_0(t, th, (int64_t)t_ix[k]))
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
			write_packet(t, 0, (uint32_t)row, -1, F_TracePacket_process_tree, (body){.msg = &pt.base});
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

/* ---- stack samples ---------------------------------------------------------------- */

/* What a sample sequence has interned. A model's mapping, frame or
 * callsite is of one file, so nearly always of one sequence: an array by
 * id holds the sequence that interned it first, and the map (sequence id
 * << 8 | what, id) the others (the map alone, random accesses into it for
 * every frame of every new stack, was a fifth of a perf script export). */
enum { INTERNED_MAPPING, INTERNED_FRAME, INTERNED_CALLSTACK };

static int interned_before(exp_text *t, uint32_t seq, int what, uint64_t id)
{
	struct exp_interned *in = &t->interned_by_id[what];
	if (id < UINT32_MAX) {
		if (id >= in->n) {
			size_t n = in->n;
			TM_GROW(in->seq, in->cap, (size_t)id + 1);
			memset(in->seq + n, 0, ((size_t)id + 1 - n) * sizeof *in->seq);
			in->n = (size_t)id + 1;
		}
		if (in->seq[id] == seq)
			return 1;
		if (!in->seq[id]) {
			in->seq[id] = seq;
			return 0;
		}
	}
	exp_map_slot *s = exp_map_find(&t->interned, (uint64_t)seq << 8 | (uint64_t)what, id, 1);
	int before = s->v != 0;
	s->v = 1;
	return before;
}

typedef Perfetto__Protos__InternedString InternedString;
typedef Perfetto__Protos__Frame Frame;
typedef Perfetto__Protos__Mapping Mapping;
typedef Perfetto__Protos__Callstack Callstack;

void exp_text_stack_sample(exp_text *t, const tm_model *m, uint32_t file, uint32_t row, int64_t ts,
			   const exp_sample *smp)
{
	const tm_mcallsite *leaf = tm_model_callsite(m, smp->callsite);
	if (!leaf && !smp->perf)
		return;
	exp *x = t->x;
	uint64_t seq_key = smp->perf ? PERF_SEQ(smp->perf->attr) : SAMPLE_SEQ;
	exp_map_slot *known = exp_map_find(&x->seqs, ((uint64_t)file << 32) | row, seq_key, 0);
	int first = !known || !known->v;
	/* the id write_packet_on gives a new sequence (nothing is written
	 * before it) */
	uint32_t seq = first ? x->next_seq + 1 : (uint32_t)known->v;

	/* the chain, leaf first */
	size_t depth = 0;
	for (const tm_mcallsite *c = leaf; c; c = c->parent == TM_NO_CALLSITE ? NULL : tm_model_callsite(m, c->parent))
		depth++;
	size_t cap = depth ? depth : 1;
	uint32_t *chain = tm_xmalloc(cap * sizeof *chain);
	size_t k = 0;
	for (const tm_mcallsite *c = leaf; c && k < depth;
	     c = c->parent == TM_NO_CALLSITE ? NULL : tm_model_callsite(m, c->parent))
		chain[k++] = c->frame;

	Perfetto__Protos__InternedData id = PERFETTO__PROTOS__INTERNED_DATA__INIT;
	Callstack cs = PERFETTO__PROTOS__CALLSTACK__INIT;
	Callstack *csp = &cs;
	/* at most one new mapping (its path and build id), frame and name
	 * string per frame */
	InternedString *strs = tm_xcalloc(3 * cap, sizeof *strs);
	InternedString **names = tm_xcalloc(cap, sizeof *names), **paths = tm_xcalloc(cap, sizeof *paths);
	InternedString **bids = tm_xcalloc(cap, sizeof *bids);
	Frame *fr = tm_xcalloc(cap, sizeof *fr);
	Frame **frp = tm_xcalloc(cap, sizeof *frp);
	Mapping *mp = tm_xcalloc(cap, sizeof *mp);
	Mapping **mpp = tm_xcalloc(cap, sizeof *mpp);
	uint64_t *path_ids = tm_xcalloc(cap, sizeof *path_ids);
	uint64_t *frame_ids = tm_xcalloc(cap, sizeof *frame_ids);
	size_t n_str = 0;
	if (leaf && !interned_before(t, seq, INTERNED_CALLSTACK, smp->callsite)) {
		for (size_t i = 0; i < depth; i++) {
			uint32_t fid = chain[depth - 1 - i]; /* from the root */
			frame_ids[i] = (uint64_t)fid + 1;
			if (interned_before(t, seq, INTERNED_FRAME, fid))
				continue;
			const tm_mframe *f = tm_model_frame(m, fid);
			const tm_mmapping *map = f ? tm_model_mapping(m, f->mapping) : NULL;
			if (map && !interned_before(t, seq, INTERNED_MAPPING, f->mapping)) {
				Mapping *mm = &mp[id.n_mappings];
				perfetto__protos__mapping__init(mm);
				mm->has_iid = 1;
				mm->iid = (uint64_t)f->mapping + 1;
				/* one path component: the reference names the
				 * mapping "/" and it (a path of its own keeps its
				 * one '/'); an empty name none, which it names "" */
				if (map->name[0]) {
					InternedString *ps = &strs[n_str++];
					perfetto__protos__interned_string__init(ps);
					ps->has_iid = ps->has_str = 1;
					ps->iid = (uint64_t)f->mapping + 1;
					ps->str.data = (uint8_t *)map->name;
					ps->str.len = strlen(map->name);
					paths[id.n_mapping_paths++] = ps;
					path_ids[id.n_mappings] = ps->iid;
					mm->n_path_string_ids = 1;
					mm->path_string_ids = &path_ids[id.n_mappings];
				}
				if (map->has_range) {
					mm->has_start = mm->has_end = mm->has_exact_offset = 1;
					mm->start = map->start;
					mm->end = map->end;
					mm->exact_offset = map->exact_offset;
					mm->has_start_offset = map->start_offset != 0;
					mm->start_offset = map->start_offset;
					mm->has_load_bias = map->load_bias != 0;
					mm->load_bias = map->load_bias;
				}
				if (map->build_id_len) {
					InternedString *bs = &strs[n_str++];
					perfetto__protos__interned_string__init(bs);
					bs->has_iid = bs->has_str = 1;
					bs->iid = (uint64_t)f->mapping + 1;
					bs->str.data = (uint8_t *)map->build_id;
					bs->str.len = map->build_id_len;
					bids[id.n_build_ids++] = bs;
					mm->has_build_id = 1;
					mm->build_id = bs->iid;
				}
				mpp[id.n_mappings++] = mm;
			}
			InternedString *ns = &strs[n_str++];
			perfetto__protos__interned_string__init(ns);
			ns->has_iid = ns->has_str = 1;
			ns->iid = (uint64_t)fid + 1;
			ns->str.data = (uint8_t *)(f ? f->name : "");
			ns->str.len = f ? strlen(f->name) : 0;
			names[id.n_function_names++] = ns;
			Frame *ff = &fr[id.n_frames];
			perfetto__protos__frame__init(ff);
			ff->has_iid = ff->has_function_name_id = ff->has_mapping_id = ff->has_rel_pc = 1;
			ff->iid = (uint64_t)fid + 1;
			ff->function_name_id = ns->iid;
			ff->mapping_id = f ? (uint64_t)f->mapping + 1 : 0;
			ff->rel_pc = f ? f->rel_pc : 0;
			frp[id.n_frames++] = ff;
		}
		cs.has_iid = 1;
		cs.iid = (uint64_t)smp->callsite + 1;
		cs.n_frame_ids = depth;
		cs.frame_ids = frame_ids;
		id.n_callstacks = 1;
		id.callstacks = &csp;
		id.function_names = names;
		id.frames = frp;
		id.mapping_paths = paths;
		id.mappings = mpp;
		id.build_ids = bids;
	}

	Perfetto__Protos__TracePacketDefaults d = PERFETTO__PROTOS__TRACE_PACKET_DEFAULTS__INIT;
	const ProtobufCMessage *interned = id.n_callstacks ? &id.base : NULL;
	if (smp->perf) {
		const exp_perf *pf = smp->perf;
		Perfetto__Protos__PerfSample ps = PERFETTO__PROTOS__PERF_SAMPLE__INIT;
		ps.has_pid = ps.has_tid = 1;
		ps.pid = smp->pid;
		ps.tid = smp->tid;
		ps.has_cpu = pf->has_cpu;
		ps.cpu = pf->cpu;
		ps.has_cpu_mode = pf->mode != 0;
		ps.cpu_mode = (Perfetto__Protos__CpuMode)pf->mode;
		ps.has_timebase_count = pf->has_count;
		ps.timebase_count = pf->count;
		ps.n_follower_counts = pf->n_followers;
		ps.follower_counts = (uint64_t *)pf->follower_counts;
		ps.has_callstack_iid = leaf != NULL;
		ps.callstack_iid = (uint64_t)smp->callsite + 1;
		Perfetto__Protos__PerfSampleDefaults pd = PERFETTO__PROTOS__PERF_SAMPLE_DEFAULTS__INIT;
		Perfetto__Protos__PerfEvents__Timebase tb = PERFETTO__PROTOS__PERF_EVENTS__TIMEBASE__INIT;
		tb.name = (char *)(pf->event ? pf->event : "");
		pd.timebase = &tb;
		Perfetto__Protos__FollowerEvent *fe = NULL, **fep = NULL;
		if (first && pf->n_followers) {
			fe = tm_xcalloc(pf->n_followers, sizeof *fe);
			fep = tm_xcalloc(pf->n_followers, sizeof *fep);
			for (size_t i = 0; i < pf->n_followers; i++) {
				perfetto__protos__follower_event__init(&fe[i]);
				fe[i].name = (char *)pf->follower_events[i];
				fep[i] = &fe[i];
			}
			pd.n_followers = pf->n_followers;
			pd.followers = fep;
		}
		d.perf_sample_defaults = &pd;
		body in = {.msg = &ps.base, .interned = interned, .defaults = first ? &d.base : NULL};
		write_packet_on(t, file, row, seq_key, ts, F_TracePacket_perf_sample, in);
		free(fe);
		free(fep);
	} else {
		Perfetto__Protos__StackSample ss = PERFETTO__PROTOS__STACK_SAMPLE__INIT;
		Perfetto__Protos__StackSample__TaskContext tc = PERFETTO__PROTOS__STACK_SAMPLE__TASK_CONTEXT__INIT;
		tc.has_tid = 1;
		tc.tid = smp->tid;
		tc.has_pid = smp->has_pid;
		tc.pid = smp->pid;
		ss.task_context_field_case = PERFETTO__PROTOS__STACK_SAMPLE__TASK_CONTEXT_FIELD_TASK_CONTEXT;
		ss.task_context = &tc;
		ss.callstack_field_case = PERFETTO__PROTOS__STACK_SAMPLE__CALLSTACK_FIELD_CALLSTACK_IID;
		ss.callstack_iid = (uint64_t)smp->callsite + 1;
		Perfetto__Protos__StackSampleDefaults sd = PERFETTO__PROTOS__STACK_SAMPLE_DEFAULTS__INIT;
		sd.source = (char *)smp->source;
		d.stack_sample_defaults = &sd;
		body in = {.msg = &ss.base, .interned = interned, .defaults = first ? &d.base : NULL};
		write_packet_on(t, file, row, SAMPLE_SEQ, ts, F_TracePacket_stack_sample, in);
	}
	free(chain);
	free(strs);
	free(names);
	free(paths);
	free(bids);
	free(fr);
	free(frp);
	free(mp);
	free(mpp);
	free(path_ids);
	free(frame_ids);
}

void exp_text_free(exp_text *t)
{
	if (!t)
		return;
	tm_buf_free(&t->bundle);
	free(t->track_uuid);
	free(t->procs.s);
	free(t->threads.s);
	free(t->interned.s);
	for (int i = 0; i < 3; i++)
		free(t->interned_by_id[i].seq);
	free(t->heap);
	tm_buf_free(&t->buf);
	tm_buf_free(&t->line);
	free(t);
}
