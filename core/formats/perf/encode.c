/* core/formats/perf/encode.c - perf.data samples into merged.pftrace:
 * each a PerfSample (what traced_perf writes, which the reference's
 * perf_sample view shows) with its pid and tid, CPU and mode, its
 * callstack interned with its frames (the address in the mapping,
 * unnamed) and mappings (range, offsets, build id), and the attr's
 * counter after it as the timebase count, on a sequence per attr whose
 * defaults name the event; a read group's other events are its
 * followers, their counts the follower counts. A sample of no CPU keeps
 * its counters out of its PerfSample: the reference puts a PerfSample's
 * counts on a CPU's track (CPU 0 for none), where its perf.data importer
 * keeps them on a global track, so they are counter TrackEvents on a
 * global track of their own. What the reference then shows differently
 * (a mapping name without a leading '/', the kernel's mapping per
 * process) is in tracemount(1), "Divergences". */
#include "formats/perf/perf_format.h"

#include <stdlib.h>

#include "export/export_internal.h"

/* A counter's value, whole (a double of 2^64 or more has no uint64: the
 * most there is). */
static uint64_t whole(double v)
{
	return v >= 18446744073709551615.0 ? UINT64_MAX : v > 0 ? (uint64_t)v : 0;
}

static void sample(exp_text *t, const tm_mobserved *o)
{
	const perf_observed *p = o->event;
	exp_text_flush_bundle(t);
	exp_text_flush_ends(t, o->ts);
	/* no CPU: the counts are counter TrackEvents (counter below) */
	size_t n_followers = p->has_cpu ? p->n_others : 0;
	uint64_t *followers = NULL;
	if (n_followers) {
		followers = tm_xcalloc(n_followers, sizeof *followers);
		for (size_t i = 0; i < n_followers; i++)
			followers[i] = whole(p->other_counts[i]);
	}
	exp_perf pf = {p->attr, p->event, p->has_cpu, p->cpu, p->mode, p->has_cpu && p->has_count,
		       whole(p->count), n_followers, p->other_events, followers};
	exp_sample s = {1, p->pid, p->tid, p->callsite, "linux.perf", &pf};
	exp_text_stack_sample(t, o->model, o->head->file_id, o->head->machine_row, o->ts, &s);
	free(followers);
}

/* The counter of samples of no CPU, on its global track; a CPU's are in
 * the PerfSamples. */
static void counter(exp_text *t, const tm_mcounter *c)
{
	if (tm_model_track(c->model, c->track)->scope != TM_SCOPE_CPU)
		exp_text_counter_event(t, c);
}

const tm_encoder tm_perf_encoder = {.observed = sample, .counter = counter};
