/* core/formats/ninja/encode.c - a ninja log's jobs into merged.pftrace: a
 * job is a complete TrackEvent (legacy phase X, its duration in whole us:
 * the log's are whole ms) on its worker's thread track, whose descriptor
 * names thread `worker` of process 1; the names "Build" and "Worker" come
 * with the other threads' and processes' at the end (core/export). So the
 * reference, reading merged.pftrace, makes the same threads, process and
 * slices as from the log alone. */
#include "formats/ninja/ninja_format.h"

#include "export/export_internal.h"
#include "trace.pb-c.h"

static void job(exp_text *t, const tm_mobserved *o)
{
	const ninja_observed *j = o->event;
	uint32_t file = o->head->file_id, row = o->head->machine_row;
	exp_text_flush_bundle(t);
	exp_text_flush_ends(t, o->ts);
	uint64_t uuid = exp_text_track(t, o->model, o->track);
	exp_te te = {.track_uuid = uuid, .name = j->name};
	exp_te_complete(t, &te, o->ts, j->dur_ns, file, row); /* X but where ms overflowed in ns */
	exp_text_event(t, file, row, o->ts, &te);
}

const tm_encoder tm_ninja_encoder = {.observed = job};
