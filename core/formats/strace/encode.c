/* core/formats/strace/encode.c - strace calls into merged.pftrace: each a
 * TrackEvent of category "strace" named by the syscall on its thread's
 * track (an instant for a whole call, a begin and an end, both named, for
 * an interrupted one: the reference ends the open slice of that name, as
 * from the text), with the call's arguments and return value as the
 * string debug annotations "args" and "ret". The reference shows those
 * as debug.args and debug.ret, and the thread, whose descriptor must name
 * a process, in process 0: tracemount(1), "Divergences". */
#include "formats/strace/strace_format.h"

#include <string.h>

#include "export/export_internal.h"
#include "formats/strace/strace.h"
#include "trace.pb-c.h"

static void annotation(tm_buf *b, const char *name, const char *value)
{
	size_t at = nested_begin(b, F_TrackEvent_debug_annotations);
	put_str(b, F_DebugAnnotation_string_value, value);
	put_str(b, F_DebugAnnotation_name, name);
	nested_end(b, at);
}

static void event(exp_text *t, const tm_mobserved *o, const strace_observed *s, uint64_t uuid, int type)
{
	tm_buf *b = &t->line;
	b->len = 0;
	if (s->args)
		annotation(b, "args", s->args);
	if (s->ret)
		annotation(b, "ret", s->ret);
	exp_te te = {.track_uuid = uuid, .type = type, .category = "strace", .name = s->syscall,
		     .annot = b->data, .annot_n = b->len};
	exp_text_event(t, o->head->file_id, o->head->machine_row, o->ts, &te);
}

static void call(exp_text *t, const tm_mobserved *o)
{
	const strace_observed *s = o->event;
	exp_text_flush_bundle(t);
	exp_text_flush_ends(t, o->ts);
	uint64_t uuid = exp_text_track(t, o->model, o->track);
	switch (s->kind) {
	case STRACE_COMPLETE:
		event(t, o, s, uuid, PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_INSTANT);
		break;
	case STRACE_UNFINISHED:
		event(t, o, s, uuid, PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_SLICE_BEGIN);
		break;
	case STRACE_RESUMED:
		event(t, o, s, uuid, PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_SLICE_END);
		break;
	default: /* STRACE_RESUMED_THEN_UNFINISHED */
		event(t, o, s, uuid, PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_SLICE_END);
		event(t, o, s, uuid, PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_SLICE_BEGIN);
		break;
	}
}

const tm_encoder tm_strace_encoder = {.observed = call};
