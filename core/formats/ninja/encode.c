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
	if (j->dur_ns % 1000 == 0) {
		te.has_phase = 1;
		te.phase = 'X';
		te.has_duration_us = 1;
		te.duration_us = j->dur_ns / 1000;
	} else { /* only where start or end overflowed in ns */
		te.type = PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_SLICE_BEGIN;
		exp_text_end_at(t, o->ts + j->dur_ns, file, row, uuid);
	}
	exp_text_event(t, file, row, o->ts, &te);
}

const tm_encoder tm_ninja_encoder = {.observed = job};
