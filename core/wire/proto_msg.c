/* core/wire/proto_msg.c - decoders for the small messages the merge reads from
 * TracePackets: clocks, machines, config, processes, track events and
 * interned data (spec/formats.md §5.3-§5.7).
 *
 * Each decoder walks the wire fields once. Conventions shared with the
 * reference's decoder: a scalar or a singular sub-message given twice is
 * the last one (sub-messages are not merged), repeated fields keep wire
 * order, and a message ends at its first malformed field (the decoder then
 * returns 0). Repeated scalars are accepted packed or not, as every
 * protobuf parser does.
 */
#include "wire/proto.h"

#include <stdlib.h>
#include <string.h>

#define IS_V(f) ((f).wire == TM_PB_VARINT)
#define IS_L(f) ((f).wire == TM_PB_LEN)
#define IS_I64(f) ((f).wire == TM_PB_I64)

#define VEC_PUSH(vec, x)                                                       \
	do {                                                                   \
		TM_GROW((vec).v, (vec).cap, (vec).n + 1);                      \
		(vec).v[(vec).n++] = (x);                                      \
	} while (0)

#define VEC_FREE(vec)                                                          \
	do {                                                                   \
		free((vec).v);                                                 \
		(vec).v = NULL;                                                \
		(vec).n = (vec).cap = 0;                                       \
	} while (0)

static inline int32_t as_i32(uint64_t v)
{
	return (int32_t)(uint32_t)v;
}

static inline double as_double(uint64_t bits)
{
	double d;
	memcpy(&d, &bits, sizeof(d));
	return d;
}

/* Walk `msg`, calling `fn` for each field; returns 1 when the message
 * parsed to its end, 0 when it stopped at malformed bytes. */
typedef void (*field_fn)(void *out, const tm_pb_field *f, int *complete);

static int walk(tm_span msg, field_fn fn, void *out)
{
	tm_pb_iter it;
	tm_pb_field f;
	int r, complete = 1;
	tm_pb_iter_init(&it, msg);
	while ((r = tm_pb_next(&it, &f)) > 0)
		fn(out, &f, &complete);
	return r == 0 && complete;
}

/* ---- clocks -------------------------------------------------------------- */

static void clock_field(void *out, const tm_pb_field *f, int *complete)
{
	tm_snap_clock *c = out;
	if (!IS_V(*f))
		return;
	switch (f->id) {
	case F_ClockSnapshot_Clock_clock_id: c->clock_id = (uint32_t)f->val; break;
	case F_ClockSnapshot_Clock_timestamp: c->timestamp = f->val; break;
	case F_ClockSnapshot_Clock_is_incremental: c->is_incremental = f->val != 0; break;
	case F_ClockSnapshot_Clock_unit_multiplier_ns: c->unit_multiplier_ns = f->val; break;
	}
}

typedef struct snap_sink {
	tm_snap_clock **v;
	size_t *n, *cap;
	uint32_t *primary;
} snap_sink;

static void snapshot_field(void *out, const tm_pb_field *f, int *complete)
{
	snap_sink *s = out;
	if (f->id == F_ClockSnapshot_clocks && IS_L(*f)) {
		tm_snap_clock c = {0};
		if (!walk(f->data, clock_field, &c))
			*complete = 0;
		/* formats.md §5.3: a multiplier of 0 means 1. */
		if (!c.unit_multiplier_ns)
			c.unit_multiplier_ns = 1;
		TM_GROW(*s->v, *s->cap, *s->n + 1);
		(*s->v)[(*s->n)++] = c;
	} else if (f->id == F_ClockSnapshot_primary_trace_clock && IS_V(*f) && s->primary) {
		*s->primary = (uint32_t)f->val;
	}
}

int tm_clock_snapshot_decode(tm_span msg, tm_clock_snapshot *s)
{
	s->n = 0;
	s->primary_trace_clock = 0;
	snap_sink sink = {&s->clocks, &s->n, &s->cap, &s->primary_trace_clock};
	return walk(msg, snapshot_field, &sink);
}

void tm_clock_snapshot_free(tm_clock_snapshot *s)
{
	free(s->clocks);
	memset(s, 0, sizeof(*s));
}

typedef struct synced_clocks {
	tm_span client, host; /* the last of each */
} synced_clocks;

static void synced_field(void *out, const tm_pb_field *f, int *complete)
{
	synced_clocks *sc = out;
	if (!IS_L(*f))
		return;
	if (f->id == F_RemoteClockSync_SyncedClocks_client_clocks)
		sc->client = f->data;
	else if (f->id == F_RemoteClockSync_SyncedClocks_host_clocks)
		sc->host = f->data;
}

static void remote_sync_field(void *out, const tm_pb_field *f, int *complete)
{
	tm_remote_clock_sync *s = out;
	if (f->id != F_RemoteClockSync_synced_clocks || !IS_L(*f))
		return;
	synced_clocks sc = {{0}, {0}};
	if (!walk(f->data, synced_field, &sc))
		*complete = 0;
	tm_sync_round round;
	snap_sink sink = {&s->clocks, &s->n_clocks, &s->cap_clocks, NULL};
	round.client_off = s->n_clocks;
	if (!walk(sc.client, snapshot_field, &sink))
		*complete = 0;
	round.client_n = s->n_clocks - round.client_off;
	round.host_off = s->n_clocks;
	if (!walk(sc.host, snapshot_field, &sink))
		*complete = 0;
	round.host_n = s->n_clocks - round.host_off;
	TM_GROW(s->rounds, s->cap_rounds, s->n_rounds + 1);
	s->rounds[s->n_rounds++] = round;
}

int tm_remote_clock_sync_decode(tm_span msg, tm_remote_clock_sync *s)
{
	s->n_rounds = s->n_clocks = 0;
	return walk(msg, remote_sync_field, s);
}

void tm_remote_clock_sync_free(tm_remote_clock_sync *s)
{
	free(s->rounds);
	free(s->clocks);
	memset(s, 0, sizeof(*s));
}

/* ---- machines, config ---------------------------------------------------- */

static void utsname_field(void *out, const tm_pb_field *f, int *complete)
{
	tm_system_info *si = out;
	if (!IS_L(*f))
		return;
	switch (f->id) {
	case F_Utsname_sysname: si->sysname = f->data; break;
	case F_Utsname_version: si->version = f->data; break;
	case F_Utsname_release: si->release = f->data; break;
	case F_Utsname_machine: si->machine = f->data; break;
	}
}

static void system_info_field(void *out, const tm_pb_field *f, int *complete)
{
	tm_system_info *si = out;
	if (IS_L(*f)) {
		switch (f->id) {
		case F_SystemInfo_utsname:
			/* A later utsname replaces an earlier one entirely. */
			si->has_utsname = true;
			si->sysname = si->version = si->release = si->machine = (tm_span){0};
			if (!walk(f->data, utsname_field, si))
				*complete = 0;
			break;
		case F_SystemInfo_android_build_fingerprint: si->android_build_fingerprint = f->data; break;
		case F_SystemInfo_tracing_service_version: si->tracing_service_version = f->data; break;
		case F_SystemInfo_machine_name: si->machine_name = f->data; break;
		}
		return;
	}
	if (!IS_V(*f))
		return;
	switch (f->id) {
	case F_SystemInfo_hz: si->has_hz = true; si->hz = (int64_t)f->val; break;
	case F_SystemInfo_android_sdk_version:
		si->has_android_sdk_version = true;
		si->android_sdk_version = f->val;
		break;
	case F_SystemInfo_page_size: si->has_page_size = true; si->page_size = (uint32_t)f->val; break;
	case F_SystemInfo_timezone_off_mins:
		si->has_timezone_off_mins = true;
		si->timezone_off_mins = as_i32(f->val);
		break;
	case F_SystemInfo_num_cpus: si->has_num_cpus = true; si->num_cpus = (uint32_t)f->val; break;
	case F_SystemInfo_system_ram_bytes:
		si->has_system_ram_bytes = true;
		si->system_ram_bytes = f->val;
		break;
	}
}

int tm_system_info_decode(tm_span msg, tm_system_info *si)
{
	memset(si, 0, sizeof(*si));
	return walk(msg, system_info_field, si);
}

static void track_event_defaults_field(void *out, const tm_pb_field *f, int *complete)
{
	tm_packet_defaults *d = out;
	if (f->id == F_TrackEventDefaults_track_uuid && IS_V(*f)) {
		d->has_track_uuid = true;
		d->track_uuid = f->val;
	}
}

static void packet_defaults_field(void *out, const tm_pb_field *f, int *complete)
{
	tm_packet_defaults *d = out;
	if (f->id == F_TracePacketDefaults_timestamp_clock_id && IS_V(*f)) {
		d->has_timestamp_clock_id = true;
		d->timestamp_clock_id = (uint32_t)f->val;
	} else if (f->id == F_TracePacketDefaults_track_event_defaults && IS_L(*f)) {
		d->has_track_event_defaults = true;
		d->has_track_uuid = false;
		d->track_uuid = 0;
		if (!walk(f->data, track_event_defaults_field, d))
			*complete = 0;
	}
}

int tm_packet_defaults_decode(tm_span msg, tm_packet_defaults *d)
{
	memset(d, 0, sizeof(*d));
	return walk(msg, packet_defaults_field, d);
}

static void builtin_data_field(void *out, const tm_pb_field *f, int *complete)
{
	tm_trace_config *c = out;
	if (f->id == F_TraceConfig_BuiltinDataSource_primary_trace_clock && IS_V(*f)) {
		c->has_primary_trace_clock = true;
		c->primary_trace_clock = (uint32_t)f->val;
	}
}

static void trace_config_field(void *out, const tm_pb_field *f, int *complete)
{
	tm_trace_config *c = out;
	if (f->id == F_TraceConfig_builtin_data_sources && IS_L(*f)) {
		c->has_primary_trace_clock = false;
		c->primary_trace_clock = 0;
		if (!walk(f->data, builtin_data_field, c))
			*complete = 0;
	} else if (f->id == F_TraceConfig_trace_attributes && IS_L(*f)) {
		c->trace_attributes = f->data;
	} else if (f->id == F_TraceConfig_unique_session_name && IS_L(*f)) {
		c->unique_session_name = f->data;
	} else if (f->id == F_TraceConfig_duration_ms && IS_V(*f)) {
		c->duration_ms = (uint32_t)f->val;
	}
}

int tm_trace_config_decode(tm_span msg, tm_trace_config *c)
{
	memset(c, 0, sizeof(*c));
	return walk(msg, trace_config_field, c);
}

static void attribute_field(void *out, const tm_pb_field *f, int *complete)
{
	tm_trace_attribute *a = out;
	if (f->id == F_TraceAttributes_Attribute_key && IS_L(*f)) {
		a->key = f->data;
	} else if (f->id == F_TraceAttributes_Attribute_long_value && IS_V(*f)) {
		a->kind = 1;
		a->long_value = (int64_t)f->val;
	} else if (f->id == F_TraceAttributes_Attribute_string_value && IS_L(*f)) {
		a->kind = 2;
		a->string_value = f->data;
	}
}

static void attributes_field(void *out, const tm_pb_field *f, int *complete)
{
	tm_trace_attributes *as = out;
	if (f->id != F_TraceAttributes_attribute || !IS_L(*f))
		return;
	tm_trace_attribute a;
	memset(&a, 0, sizeof(a));
	if (!walk(f->data, attribute_field, &a))
		*complete = 0;
	TM_GROW(as->v, as->cap, as->n + 1);
	as->v[as->n++] = a;
}

int tm_trace_attributes_decode(tm_span msg, tm_trace_attributes *a)
{
	a->n = 0;
	return walk(msg, attributes_field, a);
}

void tm_trace_attributes_free(tm_trace_attributes *a)
{
	free(a->v);
	memset(a, 0, sizeof(*a));
}

/* ---- processes and threads ----------------------------------------------- */

typedef struct pt_process_ctx {
	tm_process_tree *t;
	tm_pt_process *p;
} pt_process_ctx;

static void pt_process_field(void *out, const tm_pb_field *f, int *complete)
{
	pt_process_ctx *c = out;
	tm_pt_process *p = c->p;
	if (f->id == F_ProcessTree_Process_cmdline && IS_L(*f)) {
		TM_GROW(c->t->cmdline, c->t->cap_cmdline, c->t->n_cmdline + 1);
		c->t->cmdline[c->t->n_cmdline++] = f->data;
		p->cmdline_n++;
		return;
	}
	if (!IS_V(*f))
		return;
	switch (f->id) {
	case F_ProcessTree_Process_pid: p->has_pid = true; p->pid = as_i32(f->val); break;
	case F_ProcessTree_Process_ppid: p->has_ppid = true; p->ppid = as_i32(f->val); break;
	case F_ProcessTree_Process_uid: p->has_uid = true; p->uid = as_i32(f->val); break;
	case F_ProcessTree_Process_is_kthread: p->is_kthread = f->val != 0; break;
	case F_ProcessTree_Process_cmdline_is_comm: p->cmdline_is_comm = f->val != 0; break;
	}
}

static void pt_thread_field(void *out, const tm_pb_field *f, int *complete)
{
	tm_pt_thread *th = out;
	if (f->id == F_ProcessTree_Thread_name && IS_L(*f))
		th->name = f->data;
	else if (f->id == F_ProcessTree_Thread_tid && IS_V(*f)) {
		th->has_tid = true;
		th->tid = as_i32(f->val);
	} else if (f->id == F_ProcessTree_Thread_tgid && IS_V(*f)) {
		th->has_tgid = true;
		th->tgid = as_i32(f->val);
	}
}

static void process_tree_field(void *out, const tm_pb_field *f, int *complete)
{
	tm_process_tree *t = out;
	if (f->id == F_ProcessTree_processes && IS_L(*f)) {
		tm_pt_process p;
		memset(&p, 0, sizeof(p));
		p.cmdline_off = t->n_cmdline;
		pt_process_ctx c = {t, &p};
		if (!walk(f->data, pt_process_field, &c))
			*complete = 0;
		TM_GROW(t->processes, t->cap_processes, t->n_processes + 1);
		t->processes[t->n_processes++] = p;
	} else if (f->id == F_ProcessTree_threads && IS_L(*f)) {
		tm_pt_thread th;
		memset(&th, 0, sizeof(th));
		if (!walk(f->data, pt_thread_field, &th))
			*complete = 0;
		TM_GROW(t->threads, t->cap_threads, t->n_threads + 1);
		t->threads[t->n_threads++] = th;
	} else if (f->id == F_ProcessTree_collection_end_timestamp && IS_V(*f)) {
		t->has_collection_end_timestamp = true;
		t->collection_end_timestamp = f->val;
	}
}

int tm_process_tree_decode(tm_span msg, tm_process_tree *t)
{
	t->n_processes = t->n_threads = t->n_cmdline = 0;
	t->has_collection_end_timestamp = false;
	t->collection_end_timestamp = 0;
	return walk(msg, process_tree_field, t);
}

void tm_process_tree_free(tm_process_tree *t)
{
	free(t->processes);
	free(t->threads);
	free(t->cmdline);
	memset(t, 0, sizeof(*t));
}

static void process_descriptor_field(void *out, const tm_pb_field *f, int *complete)
{
	tm_process_descriptor *d = out;
	if (IS_L(*f)) {
		if (f->id == F_ProcessDescriptor_cmdline) {
			if (!d->n_cmdline)
				d->cmdline0 = f->data;
			d->n_cmdline++;
		} else if (f->id == F_ProcessDescriptor_process_name) {
			d->process_name = f->data;
		}
		return;
	}
	if (!IS_V(*f))
		return;
	switch (f->id) {
	case F_ProcessDescriptor_pid: d->has_pid = true; d->pid = as_i32(f->val); break;
	case F_ProcessDescriptor_legacy_sort_index: d->legacy_sort_index = as_i32(f->val); break;
	case F_ProcessDescriptor_chrome_process_type: d->chrome_process_type = as_i32(f->val); break;
	case F_ProcessDescriptor_process_priority: d->process_priority = as_i32(f->val); break;
	case F_ProcessDescriptor_start_timestamp_ns:
		d->has_start_timestamp_ns = true;
		d->start_timestamp_ns = (int64_t)f->val;
		break;
	}
}

int tm_process_descriptor_decode(tm_span msg, tm_process_descriptor *d)
{
	memset(d, 0, sizeof(*d));
	d->raw = msg;
	return walk(msg, process_descriptor_field, d);
}

static void thread_descriptor_field(void *out, const tm_pb_field *f, int *complete)
{
	tm_thread_descriptor *d = out;
	if (f->id == F_ThreadDescriptor_thread_name && IS_L(*f)) {
		d->thread_name = f->data;
		return;
	}
	if (!IS_V(*f))
		return;
	switch (f->id) {
	case F_ThreadDescriptor_pid: d->has_pid = true; d->pid = as_i32(f->val); break;
	case F_ThreadDescriptor_tid: d->has_tid = true; d->tid = (int64_t)f->val; break;
	case F_ThreadDescriptor_legacy_sort_index: d->legacy_sort_index = as_i32(f->val); break;
	case F_ThreadDescriptor_chrome_thread_type: d->chrome_thread_type = as_i32(f->val); break;
	case F_ThreadDescriptor_reference_timestamp_us:
		d->has_reference_timestamp_us = true;
		d->reference_timestamp_us = (int64_t)f->val;
		break;
	case F_ThreadDescriptor_reference_thread_time_us:
		d->has_reference_thread_time_us = true;
		d->reference_thread_time_us = (int64_t)f->val;
		break;
	case F_ThreadDescriptor_reference_thread_instruction_count:
		d->has_reference_thread_instruction_count = true;
		d->reference_thread_instruction_count = (int64_t)f->val;
		break;
	}
}

int tm_thread_descriptor_decode(tm_span msg, tm_thread_descriptor *d)
{
	memset(d, 0, sizeof(*d));
	return walk(msg, thread_descriptor_field, d);
}

/* ---- track events --------------------------------------------------------- */

static void counter_descriptor_field(void *out, const tm_pb_field *f, int *complete)
{
	tm_counter_descriptor *c = out;
	if (f->id == F_CounterDescriptor_unit_name && IS_L(*f)) {
		c->unit_name = f->data;
		return;
	}
	if (!IS_V(*f))
		return;
	switch (f->id) {
	case F_CounterDescriptor_type: c->type = as_i32(f->val); break;
	case F_CounterDescriptor_unit: c->unit = as_i32(f->val); break;
	case F_CounterDescriptor_unit_multiplier:
		c->has_unit_multiplier = true;
		c->unit_multiplier = (int64_t)f->val;
		break;
	case F_CounterDescriptor_is_incremental: c->is_incremental = f->val != 0; break;
	}
}

typedef struct track_descriptor_ctx {
	tm_track_descriptor *d;
	tm_span process, thread, counter; /* the last of each */
} track_descriptor_ctx;

static void track_descriptor_field(void *out, const tm_pb_field *f, int *complete)
{
	track_descriptor_ctx *c = out;
	tm_track_descriptor *d = c->d;
	if (IS_V(*f)) {
		if (f->id == F_TrackDescriptor_uuid) {
			d->has_uuid = true;
			d->uuid = f->val;
		} else if (f->id == F_TrackDescriptor_parent_uuid) {
			d->has_parent_uuid = true;
			d->parent_uuid = f->val;
		}
		return;
	}
	if (!IS_L(*f))
		return;
	switch (f->id) {
	case F_TrackDescriptor_name: d->name = f->data; break;
	case F_TrackDescriptor_static_name: d->static_name = f->data; break;
	case F_TrackDescriptor_atrace_name: d->atrace_name = f->data; break;
	case F_TrackDescriptor_description: d->description = f->data; break;
	case F_TrackDescriptor_process: c->process = f->data; break;
	case F_TrackDescriptor_thread: c->thread = f->data; break;
	case F_TrackDescriptor_counter: c->counter = f->data; break;
	}
}

int tm_track_descriptor_decode(tm_span msg, tm_track_descriptor *d)
{
	memset(d, 0, sizeof(*d));
	track_descriptor_ctx c = {d, {0}, {0}, {0}};
	int ok = walk(msg, track_descriptor_field, &c);
	if ((d->has_process = TM_SPAN_HAS(c.process)))
		ok &= tm_process_descriptor_decode(c.process, &d->process);
	if ((d->has_thread = TM_SPAN_HAS(c.thread)))
		ok &= tm_thread_descriptor_decode(c.thread, &d->thread);
	if ((d->has_counter = TM_SPAN_HAS(c.counter)))
		ok &= walk(c.counter, counter_descriptor_field, &d->counter);
	return ok;
}

static void debug_annotation_field(void *out, const tm_pb_field *f, int *complete)
{
	tm_debug_annotation *a = out;
	if (IS_V(*f)) {
		switch (f->id) {
		case F_DebugAnnotation_name_iid: a->has_name_iid = true; a->name_iid = f->val; break;
		case F_DebugAnnotation_bool_value: a->kind = TM_DA_BOOL; a->v.u = f->val != 0; break;
		case F_DebugAnnotation_uint_value: a->kind = TM_DA_UINT; a->v.u = f->val; break;
		case F_DebugAnnotation_int_value: a->kind = TM_DA_INT; a->v.i = (int64_t)f->val; break;
		case F_DebugAnnotation_pointer_value: a->kind = TM_DA_POINTER; a->v.u = f->val; break;
		case F_DebugAnnotation_string_value_iid: a->kind = TM_DA_STRING_IID; a->v.u = f->val; break;
		}
	} else if (IS_L(*f)) {
		switch (f->id) {
		case F_DebugAnnotation_name: a->name = f->data; break;
		case F_DebugAnnotation_string_value: a->kind = TM_DA_STRING; a->str = f->data; break;
		case F_DebugAnnotation_legacy_json_value: a->kind = TM_DA_LEGACY_JSON; a->str = f->data; break;
		case F_DebugAnnotation_nested_value: a->kind = TM_DA_NESTED; a->str = f->data; break;
		}
	} else if (IS_I64(*f) && f->id == F_DebugAnnotation_double_value) {
		a->kind = TM_DA_DOUBLE;
		a->v.d = as_double(f->val);
	}
}

static int debug_annotation_decode(tm_span msg, tm_debug_annotation *a)
{
	memset(a, 0, sizeof(*a));
	int ok = walk(msg, debug_annotation_field, a);
	if (a->kind == TM_DA_NONE) {
		/* dict_entries / array_values: hand over the whole annotation;
		 * nothing in the merge looks inside. */
		tm_span any[1];
		if (tm_pb_repeated_spans(msg, F_DebugAnnotation_dict_entries, any, 1) ||
		    tm_pb_repeated_spans(msg, F_DebugAnnotation_array_values, any, 1)) {
			a->kind = TM_DA_NESTED;
			a->str = msg;
		}
	}
	return ok;
}

/* Append a repeated varint field given either way: one value, or packed. */
#define PUSH_VARINTS(vec, T, conv, f, complete)                                \
	do {                                                                   \
		if (IS_V(*(f))) {                                              \
			VEC_PUSH(vec, (T)conv((f)->val));                      \
		} else if (IS_L(*(f))) {                                       \
			const uint8_t *p_ = (f)->data.p, *e_ = p_ + (f)->data.n; \
			uint64_t x_;                                           \
			while (p_ < e_) {                                      \
				if (!tm_pb_varint(&p_, e_, &x_)) {             \
					*(complete) = 0;                       \
					break;                                 \
				}                                              \
				VEC_PUSH(vec, (T)conv(x_));                    \
			}                                                      \
		}                                                              \
	} while (0)

/* Append a repeated 8-byte field (fixed64 / double), given either way. */
#define PUSH_FIXED64(vec, T, conv, f, complete)                                \
	do {                                                                   \
		if (IS_I64(*(f))) {                                            \
			VEC_PUSH(vec, (T)conv((f)->val));                      \
		} else if (IS_L(*(f))) {                                       \
			const uint8_t *p_ = (f)->data.p;                       \
			size_t n_ = (f)->data.n;                               \
			if (n_ % 8)                                            \
				*(complete) = 0;                               \
			for (; n_ >= 8; n_ -= 8, p_ += 8) {                    \
				uint64_t x_ = 0;                               \
				for (int i_ = 0; i_ < 8; i_++)                 \
					x_ |= (uint64_t)p_[i_] << (8 * i_);    \
				VEC_PUSH(vec, (T)conv(x_));                    \
			}                                                      \
		}                                                              \
	} while (0)

#define SAME(x) (x)

static void track_event_field(void *out, const tm_pb_field *f, int *complete)
{
	tm_track_event *e = out;
	switch (f->id) {
	case F_TrackEvent_category_iids:
		PUSH_VARINTS(e->category_iids, uint64_t, SAME, f, complete);
		return;
	case F_TrackEvent_extra_counter_track_uuids:
		PUSH_VARINTS(e->extra_counter_track_uuids, uint64_t, SAME, f, complete);
		return;
	case F_TrackEvent_extra_counter_values:
		PUSH_VARINTS(e->extra_counter_values, int64_t, SAME, f, complete);
		return;
	case F_TrackEvent_extra_double_counter_track_uuids:
		PUSH_VARINTS(e->extra_double_counter_track_uuids, uint64_t, SAME, f, complete);
		return;
	case F_TrackEvent_extra_double_counter_values:
		PUSH_FIXED64(e->extra_double_counter_values, double, as_double, f, complete);
		return;
	case F_TrackEvent_flow_ids_old:
		PUSH_VARINTS(e->flow_ids_old, uint64_t, SAME, f, complete);
		return;
	case F_TrackEvent_terminating_flow_ids_old:
		PUSH_VARINTS(e->terminating_flow_ids_old, uint64_t, SAME, f, complete);
		return;
	case F_TrackEvent_flow_ids:
		PUSH_FIXED64(e->flow_ids, uint64_t, SAME, f, complete);
		return;
	case F_TrackEvent_terminating_flow_ids:
		PUSH_FIXED64(e->terminating_flow_ids, uint64_t, SAME, f, complete);
		return;
	}
	if (IS_L(*f)) {
		switch (f->id) {
		case F_TrackEvent_categories: VEC_PUSH(e->categories, f->data); break;
		case F_TrackEvent_name: e->name = f->data; break;
		case F_TrackEvent_legacy_event: e->legacy_event = f->data; break;
		case F_TrackEvent_debug_annotations: {
			tm_debug_annotation a;
			if (!debug_annotation_decode(f->data, &a))
				*complete = 0;
			VEC_PUSH(e->debug_annotations, a);
			break;
		}
		}
		return;
	}
	if (IS_I64(*f)) {
		if (f->id == F_TrackEvent_double_counter_value) {
			e->has_double_counter_value = true;
			e->double_counter_value = as_double(f->val);
		}
		return;
	}
	if (!IS_V(*f))
		return;
	switch (f->id) {
	case F_TrackEvent_type: e->has_type = true; e->type = as_i32(f->val); break;
	case F_TrackEvent_track_uuid: e->has_track_uuid = true; e->track_uuid = f->val; break;
	case F_TrackEvent_name_iid: e->has_name_iid = true; e->name_iid = f->val; break;
	case F_TrackEvent_counter_value:
		e->has_counter_value = true;
		e->counter_value = (int64_t)f->val;
		break;
	case F_TrackEvent_timestamp_delta_us:
		e->has_timestamp_delta_us = true;
		e->timestamp_delta_us = (int64_t)f->val;
		break;
	case F_TrackEvent_timestamp_absolute_us:
		e->has_timestamp_absolute_us = true;
		e->timestamp_absolute_us = (int64_t)f->val;
		break;
	case F_TrackEvent_thread_time_delta_us:
		e->has_thread_time_delta_us = true;
		e->thread_time_delta_us = (int64_t)f->val;
		break;
	case F_TrackEvent_thread_time_absolute_us:
		e->has_thread_time_absolute_us = true;
		e->thread_time_absolute_us = (int64_t)f->val;
		break;
	}
}

int tm_track_event_decode(tm_span msg, tm_track_event *e)
{
	/* Keep the arrays' memory; forget their contents and every scalar. */
	tm_track_event keep = *e;
	memset(e, 0, sizeof(*e));
#define KEEP(vec) (e->vec.v = keep.vec.v, e->vec.cap = keep.vec.cap)
	KEEP(category_iids);
	KEEP(categories);
	KEEP(extra_counter_track_uuids);
	KEEP(extra_counter_values);
	KEEP(extra_double_counter_track_uuids);
	KEEP(extra_double_counter_values);
	KEEP(flow_ids);
	KEEP(terminating_flow_ids);
	KEEP(flow_ids_old);
	KEEP(terminating_flow_ids_old);
	KEEP(debug_annotations);
#undef KEEP
	return walk(msg, track_event_field, e);
}

void tm_track_event_free(tm_track_event *e)
{
	VEC_FREE(e->category_iids);
	VEC_FREE(e->categories);
	VEC_FREE(e->extra_counter_track_uuids);
	VEC_FREE(e->extra_counter_values);
	VEC_FREE(e->extra_double_counter_track_uuids);
	VEC_FREE(e->extra_double_counter_values);
	VEC_FREE(e->flow_ids);
	VEC_FREE(e->terminating_flow_ids);
	VEC_FREE(e->flow_ids_old);
	VEC_FREE(e->terminating_flow_ids_old);
	VEC_FREE(e->debug_annotations);
	memset(e, 0, sizeof(*e));
}

/* ---- interned data -------------------------------------------------------- */

_Static_assert(F_EventCategory_iid == F_EventName_iid && F_DebugAnnotationName_iid == F_EventName_iid &&
	       F_EventCategory_name == F_EventName_name && F_DebugAnnotationName_name == F_EventName_name,
	       "one decoder reads the three interned-name messages");

static void iid_name_field(void *out, const tm_pb_field *f, int *complete)
{
	tm_iid_name *e = out;
	if (f->id == F_EventName_iid && IS_V(*f))
		e->iid = f->val;
	else if (f->id == F_EventName_name && IS_L(*f))
		e->name = f->data;
}

static void interned_data_field(void *out, const tm_pb_field *f, int *complete)
{
	tm_interned_data *d = out;
	if (!IS_L(*f) || (f->id != F_InternedData_event_categories && f->id != F_InternedData_event_names &&
			  f->id != F_InternedData_debug_annotation_names))
		return;
	tm_iid_name e = {0, {0}};
	if (!walk(f->data, iid_name_field, &e))
		*complete = 0;
	switch (f->id) {
	case F_InternedData_event_categories: VEC_PUSH(d->event_categories, e); break;
	case F_InternedData_event_names: VEC_PUSH(d->event_names, e); break;
	case F_InternedData_debug_annotation_names: VEC_PUSH(d->debug_annotation_names, e); break;
	}
}

int tm_interned_data_decode(tm_span msg, tm_interned_data *d)
{
	d->event_categories.n = d->event_names.n = d->debug_annotation_names.n = 0;
	return walk(msg, interned_data_field, d);
}

void tm_interned_data_free(tm_interned_data *d)
{
	VEC_FREE(d->event_categories);
	VEC_FREE(d->event_names);
	VEC_FREE(d->debug_annotation_names);
}
