/* core/formats/perf_text/encode.c - perf script samples into
 * merged.pftrace: each a StackSample of source "perf_text" (the source the
 * reference gives them, which its cpu_profile_stack_sample view shows) with
 * the sample's tid, and its pid when the head had one, as task context
 * (the reference resolves it as PerfTextTraceParser does: UpdateThread,
 * else GetOrCreateThread), its callstack interned with its frames and
 * mappings. What the reference then shows differently (mapping names
 * prefixed with '/', callsite depths from 0) is in tracemount(1),
 * "Divergences". */
#include "formats/perf_text/perf_text_format.h"

#include "export/export_internal.h"

static void sample(exp_text *t, const tm_mobserved *o)
{
	const perf_text_observed *p = o->event;
	exp_text_flush_bundle(t);
	exp_text_flush_ends(t, o->ts);
	exp_sample s = {p->has_pid, p->pid, p->tid, p->callsite, "perf_text", NULL};
	exp_text_stack_sample(t, o->model, o->head->file_id, o->head->machine_row, o->ts, &s);
}

const tm_encoder tm_perf_text_encoder = {.observed = sample};
