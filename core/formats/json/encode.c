/* core/formats/json/encode.c - Chrome JSON events into merged.pftrace, from
 * the model's replay, so that the reference builds the same rows from
 * them (issue 8).
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
 *   C -> one COUNTER per numeric arg; args -> nested debug annotations
 *   (tm_export_json_args, made where the file is read).
 * The TrackEvents are written at the wire level (export_internal.h,
 * exp_te_wire).
 */
#include "formats/json/json_format.h"

#include <string.h>

#include "export/export_internal.h"
#include "trace.pb-c.h"

#define SALT_FLOW_V1 0x666c6f7776316964ull
#define SALT_FLOW_V2 0x666c6f7776326964ull

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
	const tj_key *keys = v->type == TJ_OBJECT ? tj_keys(v) : NULL;
	for (size_t i = 0; i < v->len; i++) {
		if (v->items[i].type == TJ_NULL)
			continue;
		size_t at = nested_begin(b, keys ? F_DebugAnnotation_dict_entries : F_DebugAnnotation_array_values);
		annot_wire(b, &v->items[i], keys ? keys[i].s : NULL, keys ? keys[i].len : 0);
		nested_end(b, at);
	}
}

void tm_export_json_args(tm_buf *b, const tj_value *args)
{
	if (!args || args->type != TJ_OBJECT)
		return;
	const tj_key *keys = tj_keys(args);
	for (size_t i = 0; i < args->len; i++) {
		if (args->items[i].type == TJ_NULL)
			continue;
		size_t at = nested_begin(b, F_TrackEvent_debug_annotations);
		annot_wire(b, &args->items[i], keys[i].s, keys[i].len);
		nested_end(b, at);
	}
}

static void json_event(exp_text *t, const tm_mobserved *o)
{
	const json_observed *j = o->event;
	const tm_model *m = o->model;
	uint32_t file = o->head->file_id, row = o->head->machine_row;
	char ph = j->phase;
	if (o->dropped || o->track == UINT32_MAX || !ph || !strchr("BEXiIRbensft", ph))
		return;
	exp_text_flush_bundle(t);
	exp_text_flush_ends(t, o->ts);
	uint64_t uuid = exp_text_track(t, m, o->track);
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
		exp_te_complete(t, &te, o->ts, j->dur, file, row);
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
	exp_text_event(t, file, row, o->ts, &te);
}

/* A JSON file's counters are TrackEvents of their own. */
const tm_encoder tm_json_encoder = {.observed = json_event, .counter = exp_text_counter_event};
