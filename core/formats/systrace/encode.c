/* core/formats/systrace/encode.c - systrace lines into merged.pftrace, from
 * the model's replay: each line the reference's text import acts on
 * becomes the typed FtraceEvent its proto import parses the same way
 * (sched_switch, sched_waking, print, cpu_frequency, cpu_idle, ...); the
 * rest of the lines make no rows there and are not written. Where other
 * files print on the same machine, a print's slices become TrackEvents on
 * the model's track of its file (print_on_own_track).
 */
#include "formats/systrace/systrace_format.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "export/export_internal.h"
#include "trace.pb-c.h"

/* The ftrace events of the systrace export are written at the wire level
 * into the bundle being filled, as the JSON export's TrackEvents are (see
 * exp_te_wire): as protobuf-c structs each event was two string copies and
 * a pack that visits every field of FtraceEvent and of the event inside.
 * Fields go out in number order, as protobuf-c writes them:
 *   FtraceEvent: timestamp 1, pid 2, then the one event field (3 and up);
 *   the event's own fields as ftrace_event writes them, ascending.
 * An event is encoded alone, as the FtraceEventBundle.event field it
 * becomes (tm_encoder.prepare: ftrace_event opens it with an event of
 * `field`, ftrace_event_end closes it), then put in the bundle of (file,
 * row, cpu) (bundle_put, flushing the bundle when it is another's or
 * full). */

/* A text argument as the reference's StringToInt32 / StringToUInt32 /
 * StringToDouble would read it; the model already checked that the line
 * parsed, so a missing value cannot happen here. */
static int64_t arg_i(systrace_args *args, const char *key)
{
	char v[64];
	if (!systrace_args_get(args, key, v, sizeof v))
		return 0;
	int64_t d = systrace_few_digits(v);
	return d >= 0 ? d : strtoll(v, NULL, 10);
}

/* A text argument as a string field: up to 255 bytes, "" when absent. */
static void arg_str(tm_buf *b, uint32_t id, systrace_args *args, const char *key)
{
	char v[256];
	put_str(b, id, systrace_args_get(args, key, v, sizeof v) ? v : "");
}

#define EV_IS(lit) SYSTRACE_EVENT_IS(ev, evn, lit)

static size_t line_event(const exp_text *t, int64_t ts, uint32_t row, const systrace_event *l, systrace_args *a,
			   tm_buf *b)
{
	const char *ev = l->event_name;
	size_t evn = strlen(ev), start = b->len;
	uint32_t pid = (uint32_t)l->pid;
	exp_ev_pos at;
	if (systrace_is_print_event(ev, evn)) {
		at = exp_ftrace_begin(b, ts, pid, F_FtraceEvent_print);
		put_str(b, F_PrintFtraceEvent_buf, l->args);
	} else if (EV_IS("sched_switch")) {
		at = exp_ftrace_begin(b, ts, pid, F_FtraceEvent_sched_switch);
		char st[64];
		systrace_args_get(a, "prev_state", st, sizeof st) || (st[0] = '\0');
		int major = 0, minor = 0;
		const tm_machines *ms = &t->x->scan->machines;
		if (row < ms->n && ms->rows[row].release)
			sscanf(ms->rows[row].release, "%d.%d", &major, &minor);
		arg_str(b, F_SchedSwitchFtraceEvent_prev_comm, a, "prev_comm");
		put_int32(b, F_SchedSwitchFtraceEvent_prev_pid, (int32_t)arg_i(a, "prev_pid"));
		put_int32(b, F_SchedSwitchFtraceEvent_prev_prio, (int32_t)arg_i(a, "prev_prio"));
		/* the reference reads the text line with no kernel version (its
		 * own trace), and merged.pftrace with the machine's SystemInfo */
		put_uint(b, F_SchedSwitchFtraceEvent_prev_state,
			 (uint64_t)tm_model_task_state_raw_for(st, major, minor));
		arg_str(b, F_SchedSwitchFtraceEvent_next_comm, a, "next_comm");
		put_int32(b, F_SchedSwitchFtraceEvent_next_pid, (int32_t)arg_i(a, "next_pid"));
		put_int32(b, F_SchedSwitchFtraceEvent_next_prio, (int32_t)arg_i(a, "next_prio"));
	} else if (EV_IS("sched_waking")) {
		at = exp_ftrace_begin(b, ts, pid, F_FtraceEvent_sched_waking);
		arg_str(b, F_SchedWakingFtraceEvent_comm, a, "comm");
		put_int32(b, F_SchedWakingFtraceEvent_pid, (int32_t)arg_i(a, "pid"));
		put_int32(b, F_SchedWakingFtraceEvent_prio, (int32_t)arg_i(a, "prio"));
		put_int32(b, F_SchedWakingFtraceEvent_target_cpu, (int32_t)arg_i(a, "target_cpu"));
	} else if (EV_IS("cpu_frequency") || EV_IS("cpu_idle")) {
		int freq = ev[4] == 'f';
		at = exp_ftrace_begin(b, ts, pid, freq ? F_FtraceEvent_cpu_frequency : F_FtraceEvent_cpu_idle);
		char v[64];
		double state = systrace_args_get(a, "state", v, sizeof v) ? strtod(v, NULL) : 0;
		put_uint(b, freq ? F_CpuFrequencyFtraceEvent_state : F_CpuIdleFtraceEvent_state, (uint32_t)state);
		put_uint(b, freq ? F_CpuFrequencyFtraceEvent_cpu_id : F_CpuIdleFtraceEvent_cpu_id,
			 (uint32_t)arg_i(a, "cpu_id"));
	} else if (EV_IS("cpu_frequency_limits")) {
		/* the text import pushes each limit it can read, the proto one
		 * both (an absent one as 0): written when both are whole */
		char v[64];
		uint32_t cpu, mx, mn;
		if (!(systrace_args_get(a, "cpu_id", v, sizeof v) && systrace_to_u32(v, &cpu)) ||
		    !((systrace_args_get(a, "max", v, sizeof v) || systrace_args_get(a, "max_freq", v, sizeof v)) &&
		      systrace_to_u32(v, &mx)) ||
		    !((systrace_args_get(a, "min", v, sizeof v) || systrace_args_get(a, "min_freq", v, sizeof v)) &&
		      systrace_to_u32(v, &mn)))
			return 0;
		at = exp_ftrace_begin(b, ts, pid, F_FtraceEvent_cpu_frequency_limits);
		put_uint(b, F_CpuFrequencyLimitsFtraceEvent_min_freq, mn);
		put_uint(b, F_CpuFrequencyLimitsFtraceEvent_max_freq, mx);
		put_uint(b, F_CpuFrequencyLimitsFtraceEvent_cpu_id, cpu);
	} else if (EV_IS("clock_set_rate") || EV_IS("clock_enable") || EV_IS("clock_disable")) {
		/* the three messages share their fields' numbers */
		_Static_assert(F_ClockSetRateFtraceEvent_name == F_ClockEnableFtraceEvent_name &&
				       F_ClockSetRateFtraceEvent_state == F_ClockDisableFtraceEvent_state &&
				       F_ClockEnableFtraceEvent_state == F_ClockSetRateFtraceEvent_state,
			       "clock events share their field numbers");
		char v[64];
		uint32_t state;
		if (!systrace_args_get(a, "state", v, sizeof v) || !systrace_to_u32(v, &state))
			return 0;
		at = exp_ftrace_begin(b, ts, pid, ev[6] == 's' ? F_FtraceEvent_clock_set_rate
					     : ev[6] == 'e' ? F_FtraceEvent_clock_enable
							    : F_FtraceEvent_clock_disable);
		arg_str(b, F_ClockSetRateFtraceEvent_name, a, "name");
		put_uint(b, F_ClockSetRateFtraceEvent_state, state);
	} else if (EV_IS("thermal_temperature")) {
		char v[64];
		int32_t temp;
		if (!systrace_args_get(a, "temp", v, sizeof v) || !systrace_to_i32(v, &temp))
			return 0;
		at = exp_ftrace_begin(b, ts, pid, F_FtraceEvent_thermal_temperature);
		put_int32(b, F_ThermalTemperatureFtraceEvent_temp, temp);
		arg_str(b, F_ThermalTemperatureFtraceEvent_thermal_zone, a, "thermal_zone");
	} else if (EV_IS("cdev_update")) {
		/* a double in the text, an integer in the proto: whole ones */
		char v[64];
		double target;
		if (!systrace_args_get(a, "target", v, sizeof v) || !systrace_to_double(v, &target) || target < 0 ||
		    target > 9007199254740992.0 || target != (double)(uint64_t)target)
			return 0;
		at = exp_ftrace_begin(b, ts, pid, F_FtraceEvent_cdev_update);
		put_uint(b, F_CdevUpdateFtraceEvent_target, (uint64_t)target);
		arg_str(b, F_CdevUpdateFtraceEvent_type, a, "type");
	} else {
		return 0;
	}
	exp_ftrace_end(b, at);
	return b->len - start;
}

/* A print B, E or I of a systrace file on a machine where other files
 * (systrace or proto) may print too. The reference gives each file its
 * own thread tracks (a TrackTracker per trace and machine: its
 * TraceProcessorContext), so two files' B and E on one thread nest apart;
 * as print events of one trace they would share the thread's one track
 * and cross. So they become TrackEvents on the model's track of that file
 * and thread, a child of the thread's descriptor, which the reference
 * keeps apart in the same way: the same slices, names (no category, no
 * args), depths and instants. */
static int print_on_own_track(const exp_text *t, const tm_mobserved *o)
{
	uint32_t row = o->head->machine_row;
	if (o->track == UINT32_MAX || o->dropped || row >= t->x->scan->machines.n || t->x->print_files[row] < 2)
		return 0;
	/* the track's descriptor names the thread's process: a thread of
	 * none keeps its print (a descriptor would give it process 0) */
	const tm_mthread *th = tm_model_thread(o->model, (size_t)tm_model_track(o->model, o->track)->utid);
	return th && th->upid >= 0;
}

static void print_track_event(exp_text *t, const tm_mobserved *o)
{
	const systrace_event *l = ((const systrace_observed *)o->event)->line;
	uint32_t file = o->head->file_id, row = o->head->machine_row;
	exp_text_flush_bundle(t);
	exp_text_flush_ends(t, o->ts);
	exp_te te = {.track_uuid = exp_text_track(t, o->model, o->track)};
	switch (l->print_phase) {
	case 'B':
		te.type = PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_SLICE_BEGIN;
		te.name = l->print_name;
		break;
	case 'E':
		te.type = PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_SLICE_END;
		break;
	default: /* 'I' */
		te.type = PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_INSTANT;
		te.name = l->print_name;
		break;
	}
	exp_text_event(t, file, row, o->ts, &te);
}

/* Did the line make its own thread, of no known process? (The reference
 * makes the thread of every line it reads.) */
static int made_own_thread(const tm_mobserved *o)
{
	for (size_t i = 0; i < o->n_made; i++) {
		const tm_mthread *th = tm_model_thread(o->model, (size_t)o->made[i]);
		if (th->tid == ((const systrace_observed *)o->event)->line->pid && th->upid < 0)
			return 1;
	}
	return 0;
}

/* A line that made its own thread: the thread is made here, at the
 * line's place and before what the line's event makes (a sched_switch
 * read from a proto makes its next thread first, the text line its own),
 * by a legacy generic ftrace event of the line's name, which the
 * reference reads into its raw ftrace_event table only (GetOrCreateThread
 * of its pid). Threads of a known process come by made_threads. */
static void line_thread(exp_text *t, const tm_mobserved *o)
{
	const systrace_event *l = ((const systrace_observed *)o->event)->line;
	tm_buf *b = &t->line;
	b->len = 0;
	exp_ev_pos at = exp_ftrace_begin(b, o->ts, (uint32_t)l->pid, F_FtraceEvent_generic);
	put_str(b, F_GenericFtraceEvent_event_name, l->event_name);
	exp_ftrace_end(b, at);
	exp_text_bundle_put(t, o->head->file_id, o->head->machine_row, l->cpu, b->data, b->len);
}

static void systrace_line(exp_text *t, const tm_mobserved *o)
{
	const systrace_observed *so = o->event;
	const systrace_event *l = so->line;
	if (print_on_own_track(t, o)) {
		print_track_event(t, o);
		return;
	}
	/* a print with a bad payload is written too: the reference counts the
	 * same parse failure when it reads it back */
	if (made_own_thread(o))
		line_thread(t, o);
	if (o->dropped && !systrace_is_print_event(l->event_name, strlen(l->event_name)))
		return;
	const void *bytes = o->prepare;
	size_t n = o->n_prepare;
	if (!o->prepared) { /* encoded here */
		t->line.len = 0;
		n = line_event(t, o->ts, o->head->machine_row, l, so->args, &t->line);
		bytes = t->line.data;
	}
	if (n)
		exp_text_bundle_put(t, o->head->file_id, o->head->machine_row, l->cpu, bytes, n);
}
#undef EV_IS

/* tm_encoder.prepare: the line's event, encoded ahead */
static size_t prepare_line(const exp_text *t, int64_t ts, const tm_mrec_head *h, const void *event, tm_buf *b)
{
	const systrace_observed *so = event;
	return line_event(t, ts, h->machine_row, so->line, so->args, b);
}

const tm_encoder tm_systrace_encoder = {.observed = systrace_line, .prepare = prepare_line};
