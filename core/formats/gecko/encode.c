/* core/formats/gecko/encode.c - a Gecko profile's samples into
 * merged.pftrace: each a StackSample of source "gecko" with its tid as
 * task context, a thread's first with its pid too (the reference then
 * makes the thread of that process, as its thread metadata does), its
 * callstack interned with its frames and mappings. The thread's name goes
 * out with the others at the end (export_text.c). */
#include "formats/gecko/gecko_format.h"

#include "export/export_internal.h"

static void sample(exp_text *t, const tm_mobserved *o)
{
	const gecko_observed *g = o->event;
	exp_text_flush_bundle(t);
	exp_text_flush_ends(t, o->ts);
	exp_sample s = {g->first, g->pid, g->tid, g->callsite, "gecko", NULL};
	exp_text_stack_sample(t, o->model, o->head->file_id, o->head->machine_row, o->ts, &s);
}

const tm_encoder tm_gecko_encoder = {.observed = sample};
