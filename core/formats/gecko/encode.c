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
 * its data the debug annotation "data" (the reference's import shows it as
 * debug.data.*, the archive's as data.*: tracemount(1), "Divergences"). */
static void marker(exp_text *t, const tm_mobserved *o, const gecko_observed *g)
{
	if (o->track == UINT32_MAX)
		return;
	exp_text_thread_pid(t, o->model, o->head->machine_row, tm_model_track(o->model, o->track)->utid, g->pid);
	exp_te te = {.track_uuid = exp_text_track(t, o->model, o->track), .category = g->cat, .name = g->name,
		     .annot = g->annot, .annot_n = g->annot_n};
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
