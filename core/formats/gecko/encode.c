/* core/formats/gecko/encode.c - a Gecko profile's samples into
 * merged.pftrace: each a StackSample of source "gecko" with its tid as
 * task context, a thread's first with its pid too (the reference then
 * makes the thread of that process, as its thread metadata does), its
 * callstack interned with its frames and mappings. The thread's name goes
 * out with the others at the end (export_text.c). */
#include "formats/gecko/gecko_format.h"

#include "export/export_internal.h"
#include "trace.pb-c.h"

/* A marker: a TrackEvent on its track (an instant, a complete event, a
 * begin, an end with its name and category, which the reference matches),
 * its data the debug annotation "data" as JSON text (legacy_json_value),
 * which the reference parses and flattens as it flattens the profile's
 * (keys as they are; a dict entry's name would be made a C identifier).
 * Its import shows them as debug.data.*, the profile's as data.*:
 * tracemount(1), "Divergences". */
static void marker(exp_text *t, const tm_mobserved *o, const gecko_observed *g)
{
	if (o->track == UINT32_MAX)
		return;
	exp_text_thread_pid(t, o->model, o->head->machine_row, tm_model_track(o->model, o->track)->utid, g->pid);
	uint64_t uuid = exp_text_track(t, o->model, o->track);
	tm_buf *b = &t->line;
	b->len = 0;
	size_t prefix = sizeof GECKO_DATA_ARG - 1;
	if (g->args && g->args_n > prefix) {
		size_t at = nested_begin(b, F_TrackEvent_debug_annotations);
		put_cstr(b, F_DebugAnnotation_legacy_json_value, g->args + prefix, g->args_n - prefix);
		put_cstr(b, F_DebugAnnotation_name, "data", 4);
		nested_end(b, at);
	}
	exp_te te = {.track_uuid = uuid, .category = g->cat, .name = g->name,
		     .annot = b->data, .annot_n = b->len};
	switch (g->phase) {
	case 0: te.type = PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_INSTANT; break;
	case 1: exp_te_complete(t, &te, o->ts, g->dur, o->head->file_id, o->head->machine_row); break;
	case 2: te.type = PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_SLICE_BEGIN; break;
	default: te.type = PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_SLICE_END; break;
	}
	exp_text_event(t, o->head->file_id, o->head->machine_row, o->ts, &te);
}

static void sample(exp_text *t, const tm_mobserved *o)
{
	const gecko_observed *g = o->event;
	exp_text_flush_bundle(t);
	exp_text_flush_ends(t, o->ts);
	if (g->marker) {
		marker(t, o, g);
		return;
	}
	exp_sample s = {g->first, g->pid, g->tid, g->callsite, "gecko", NULL};
	exp_text_stack_sample(t, o->model, o->head->file_id, o->head->machine_row, o->ts, &s);
}

const tm_encoder tm_gecko_encoder = {.observed = sample};
