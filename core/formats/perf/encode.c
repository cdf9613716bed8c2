/* core/formats/perf/encode.c - perf.data samples into merged.pftrace:
 * each a PerfSample (what traced_perf writes, which the reference's
 * perf_sample view shows) with its pid and tid, CPU and mode, its
 * callstack interned with its frames (the address in the mapping,
 * unnamed) and mappings (range, offsets, build id), and the attr's
 * counter after it as the timebase count, on a sequence per attr whose
 * defaults name the event. What the reference then shows differently
 * (a mapping name without a leading '/', the kernel's mapping per
 * process, counter tracks per CPU) is in tracemount(1), "Divergences". */
#include "formats/perf/perf_format.h"

#include "export/export_internal.h"

static void sample(exp_text *t, const tm_mobserved *o)
{
	const perf_observed *p = o->event;
	exp_text_flush_bundle(t);
	exp_text_flush_ends(t, o->ts);
	/* the sum of the periods, whole (a double of 2^64 or more has no
	 * uint64: the most there is) */
	uint64_t count = p->count >= 18446744073709551615.0 ? UINT64_MAX : p->count > 0 ? (uint64_t)p->count : 0;
	exp_perf pf = {p->attr, p->event, p->has_cpu, p->cpu, p->mode, p->has_count, count};
	exp_sample s = {1, p->pid, p->tid, p->callsite, "linux.perf", &pf};
	exp_text_stack_sample(t, o->model, o->head->file_id, o->head->machine_row, o->ts, &s);
}

const tm_encoder tm_perf_encoder = {.observed = sample};
