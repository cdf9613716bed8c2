/* core/scan.c - the scan tier: the session (machine rows, manifest edges,
 * trace time, files in processing order), the Chrome JSON and systrace
 * placement, and the bookkeeping every format shares. The proto reader is
 * core/scan_proto.c.
 */
#include "scan.h"

#include <stdlib.h>
#include <string.h>

#include "ahead.h"
#include "json_rec.h"
#include "json_trace.h"
#include "model.h"
#include "scan_internal.h"
#include "systrace.h"

const char *const tm_stat_names[TM_STAT_COUNT] = {
	[TM_STAT_NEGATIVE_TS] = "trace_sorter_negative_timestamp_dropped",
	[TM_STAT_TRACK_EVENT_INVALID_TS] = "track_event_invalid_timestamp",
	[TM_STAT_UNRELATABLE] = "clock_sync_unrelatable_clock_domains",
	[TM_STAT_UNKNOWN_SOURCE] = "clock_sync_failure_unknown_source_clock",
	[TM_STAT_UNKNOWN_TARGET] = "clock_sync_failure_unknown_target_clock",
	[TM_STAT_NO_PATH] = "clock_sync_failure_no_path",
	[TM_STAT_UNDEFERRABLE_LOSS] = "clock_sync_failure_undeferrable_packet_loss",
	[TM_STAT_MIXED_SOURCES] = "clock_sync_mixed_clock_sources",
	[TM_STAT_INVALID_SNAPSHOTS] = "invalid_clock_snapshots",
	[TM_STAT_JSON_TOKENIZER_FAILURE] = "json_tokenizer_failure",
	[TM_STAT_JSON_PARSER_FAILURE] = "json_parser_failure",
	[TM_STAT_JSON_DISPLAY_TIME_UNIT] = "json_display_time_unit",
	[TM_STAT_SYSTRACE_PARSE_FAILURE] = "systrace_parse_failure",
	[TM_STAT_SEQ_NEEDS_INCREMENTAL] = "packet_skipped_seq_needs_incremental_state_invalid",
	[TM_STAT_DEFAULTS_NO_SEQ] = "trace_packet_defaults_missing_sequence_id",
	[TM_STAT_INTERNED_NO_SEQ] = "interned_data_missing_sequence_id",
	[TM_STAT_FTRACE_BUNDLE_ERRORS] = "ftrace_bundle_tokenizer_errors",
	[TM_STAT_FTRACE_MISSING_EVENT_ID] = "ftrace_missing_event_id",
	[TM_STAT_COMPACT_SCHED_ERRORS] = "compact_sched_has_parse_errors",
};

const char *const tm_ev_kind_names[TM_EV_KIND_COUNT] = {
	[TM_EV_SLICE] = "slice",
	[TM_EV_BEGIN] = "begin",
	[TM_EV_END] = "end",
	[TM_EV_INSTANT] = "instant",
	[TM_EV_COUNTER] = "counter",
	[TM_EV_ASYNC_BEGIN] = "async_begin",
	[TM_EV_ASYNC_END] = "async_end",
	[TM_EV_SCHED] = "sched",
	[TM_EV_FTRACE] = "ftrace",
	[TM_EV_METADATA] = "metadata",
	[TM_EV_PACKET] = "packet",
};

/* ---- shared bookkeeping -------------------------------------------------- */

void scan_sync_machines(scan_ctx *sc)
{
	tm_scan *s = sc->s;
	if (s->n_mach >= s->machines.n)
		return;
	s->mach = tm_xrealloc(s->mach, s->machines.n * sizeof(*s->mach));
	memset(s->mach + s->n_mach, 0, (s->machines.n - s->n_mach) * sizeof(*s->mach));
	s->n_mach = s->machines.n;
}

uint32_t scan_row_for_raw(scan_ctx *sc, int64_t raw)
{
	uint32_t row = tm_machines_get(&sc->s->machines, raw);
	scan_sync_machines(sc);
	return row;
}

int scan_raw_has_context(const scan_ctx *sc, int64_t raw)
{
	return tm_u64map_get(&sc->raw_with_context, (uint64_t)raw) != NULL;
}

void scan_raw_mark(scan_ctx *sc, int64_t raw)
{
	tm_u64map_put(&sc->raw_with_context, (uint64_t)raw, 0);
}

static void file_add_machine(tm_scan_file *out, uint32_t row)
{
	for (size_t i = 0; i < out->n_machines; i++)
		if (out->machines[i] == row)
			return;
	if (!out->n_machines) {
		out->machine0 = row;
		out->machines = &out->machine0;
		out->n_machines = 1;
		return;
	}
	uint32_t *rows = tm_xmalloc((out->n_machines + 1) * sizeof(*rows));
	memcpy(rows, out->machines, out->n_machines * sizeof(*rows));
	if (out->machines != &out->machine0)
		free(out->machines);
	out->machines = rows;
	out->machines[out->n_machines++] = row;
}

tm_clock_tracker *scan_tracker(scan_file *sf, uint32_t row)
{
	scan_ctx *sc = sf->sc;
	tm_clock_tracker *t = tm_clocks_find_tracker(sc->s->clocks, sf->f->id, row);
	if (t)
		return t;
	int64_t raw = sc->s->machines.rows[row].raw_id;
	int primary = !scan_raw_has_context(sc, raw);
	t = tm_clocks_open_tracker(sc->s->clocks, sf->f->id, row, primary);
	scan_raw_mark(sc, raw);
	sc->s->machines.rows[row].has_context = 1;
	file_add_machine(sf->out, row);
	return t;
}

/* A file's drops by stat, allocated with the first. */
static uint64_t *scan_file_drops(tm_scan_file *f)
{
	if (!f->drops)
		f->drops = tm_xcalloc(TM_STAT_COUNT, sizeof(*f->drops));
	return f->drops;
}

void scan_count(scan_file *sf, tm_stat st, int is_drop)
{
	sf->sc->s->stats[st]++;
	scan_file_drops(sf->out)[st]++;
	if (is_drop)
		sf->out->dropped++;
}

void scan_lost(scan_file *sf)
{
	sf->out->dropped++;
}

static void range_add(int *has, int64_t *lo, int64_t *hi, int64_t a, int64_t b)
{
	if (!*has) {
		*has = 1;
		*lo = a;
		*hi = b;
		return;
	}
	if (a < *lo)
		*lo = a;
	if (b > *hi)
		*hi = b;
}

int scan_place_times(scan_file *sf, uint32_t machine_row, int64_t ts, int64_t dur, int64_t raw_ts, tm_stat neg_stat)
{
	scan_ctx *sc = sf->sc;
	tm_scan *s = sc->s;
	if (ts < 0) {
		scan_count(sf, neg_stat, 1);
		return 0;
	}
	int64_t end = ts;
	if (dur > 0 && ts <= INT64_MAX - dur)
		end = ts + dur;
	int64_t raw_end = raw_ts;
	if (dur > 0 && raw_ts >= 0 && raw_ts <= INT64_MAX - dur)
		raw_end = raw_ts + dur;
	tm_scan_file *o = sf->out;
	o->events++;
	int had = o->has_range;
	range_add(&o->has_range, &o->first_trace, &o->last_trace, ts, end);
	range_add(&had, &o->first_own, &o->last_own, raw_ts, raw_end);
	if (s->n_mach < s->machines.n)
		scan_sync_machines(sc);
	if (machine_row < s->n_mach) {
		tm_scan_machine *mm = &s->mach[machine_row];
		mm->events++;
		range_add(&mm->has_range, &mm->first_trace, &mm->last_trace, ts, end);
	}
	range_add(&s->has_bounds, &s->start_ns, &s->end_ns, ts, end);
	s->events++;
	return 1;
}

int scan_place(scan_file *sf, tm_event *ev, tm_stat neg_stat)
{
	ev->file_id = sf->f->id;
	if (!scan_place_times(sf, ev->machine_row, ev->ts, ev->dur, ev->raw_ts, neg_stat))
		return 0;
	const tm_scan_sink *k = sf->sc->sink;
	if (k && k->event)
		k->event(k->ctx, ev);
	return 1;
}

int scan_wants_events(const scan_file *sf)
{
	return sf->sc->sink && sf->sc->sink->event;
}

int scan_wants_packets(const scan_file *sf)
{
	return sf->sc->sink && sf->sc->sink->packet;
}

int scan_wants_args(const scan_file *sf)
{
	return sf->sc->sink && sf->sc->sink->want_args;
}

void scan_emit_packet(scan_file *sf, tm_packet_out *po)
{
	po->file_id = sf->f->id;
	if (scan_wants_packets(sf))
		sf->sc->sink->packet(sf->sc->sink->ctx, po);
}

static void emit_name(scan_file *sf, int64_t pid, int64_t tid, const char *name)
{
	const tm_scan_sink *k = sf->sc->sink;
	if (!k || !k->name || !name || !*name)
		return;
	tm_name_out n = {sf->f->id, sf->base_row, pid, tid, name, strlen(name)};
	k->name(k->ctx, &n);
}

/* ---- systrace lines (a systrace file, or a JSON file's embedded text) ---- */

void scan_systrace_event(const systrace_event *l, tm_event *ev)
{
	memset(ev, 0, sizeof(*ev));
	ev->dur = -1;
	ev->tid = l->pid;
	ev->pid = l->tgid >= 0 ? l->tgid : -1;
	ev->args = l->args_summary;
	ev->cpu = (int32_t)l->cpu;
	ev->name = l->event_name;
	switch (l->print_phase) {
	case 'B':
		ev->kind = TM_EV_BEGIN;
		ev->name = l->print_name[0] ? l->print_name : "[empty slice name]";
		break;
	case 'E':
		ev->kind = TM_EV_END;
		ev->name = NULL;
		break;
	case 'C':
		ev->kind = TM_EV_COUNTER;
		ev->name = l->print_name;
		ev->value = (double)l->print_value;
		break;
	case 'I':
		ev->kind = TM_EV_INSTANT;
		ev->name = l->print_name;
		break;
	case 'N':
		ev->kind = TM_EV_INSTANT;
		ev->name = l->print_name;
		break;
	case 'S':
	case 'G':
		ev->kind = TM_EV_ASYNC_BEGIN;
		ev->name = l->print_name;
		break;
	case 'F':
	case 'H':
		ev->kind = TM_EV_ASYNC_END;
		ev->name = l->print_name[0] ? l->print_name : NULL;
		break;
	default:
		/* the two the reference builds sched and thread-state rows from
		 * (the first two letters pass few others on to strcmp) */
		if (l->event_name[0] == 's' && l->event_name[1] == 'c' &&
		    (strcmp(l->event_name, "sched_switch") == 0 || strcmp(l->event_name, "sched_waking") == 0))
			ev->kind = TM_EV_SCHED;
		else
			ev->kind = TM_EV_FTRACE;
		break;
	}
	if ((l->print_phase == 'B' || l->print_phase == 'C' || l->print_phase == 'S' || l->print_phase == 'I' ||
	     l->print_phase == 'N' || l->print_phase == 'G' || l->print_phase == 'F') &&
	    l->print_has_tgid)
		ev->pid = l->print_tgid;
	ev->name_len = ev->name ? strlen(ev->name) : 0;
}

typedef struct text_ctx {
	scan_file *sf;
	tm_clock_tracker *t;
	uint32_t q_events, q_lines; /* sorter queues: JSON events, systrace lines */
	tm_buf rec;                 /* a record being built */
	/* systrace task names already reported: tid -> name hash, open
	 * addressing, bounded (a full table stops reporting) */
	uint64_t *tids, *hashes;
	size_t cap, n;
} text_ctx;

#define MAX_TASKS (1u << 20)

/* Report a line's task name when its thread shows a new one. */
static void task_name(text_ctx *tc, const systrace_event *l)
{
	if (!tc->sf->sc->sink || !tc->sf->sc->sink->name || !l->task[0] ||
	    (l->task[0] == '<' && strcmp(l->task, "<...>") == 0))
		return;
	uint64_t h = 1469598103934665603ull;
	for (const unsigned char *p = (const unsigned char *)l->task; *p; p++)
		h = (h ^ *p) * 1099511628211ull;
	h |= 1;
	if ((tc->n + 1) * 2 > tc->cap) {
		if (tc->n >= MAX_TASKS)
			return;
		size_t ocap = tc->cap;
		uint64_t *ot = tc->tids, *oh = tc->hashes;
		tc->cap = ocap ? ocap * 2 : 256;
		tc->tids = tm_xcalloc(tc->cap, sizeof(*tc->tids));
		tc->hashes = tm_xcalloc(tc->cap, sizeof(*tc->hashes));
		for (size_t i = 0; i < ocap; i++)
			if (oh[i]) {
				size_t j = (size_t)(ot[i] * 0x9e3779b97f4a7c15ull) & (tc->cap - 1);
				while (tc->hashes[j])
					j = (j + 1) & (tc->cap - 1);
				tc->tids[j] = ot[i];
				tc->hashes[j] = oh[i];
			}
		free(ot);
		free(oh);
	}
	uint64_t tid = (uint64_t)l->pid;
	size_t j = (size_t)(tid * 0x9e3779b97f4a7c15ull) & (tc->cap - 1);
	while (tc->hashes[j] && tc->tids[j] != tid)
		j = (j + 1) & (tc->cap - 1);
	if (tc->hashes[j] == h)
		return;
	if (!tc->hashes[j])
		tc->n++;
	tc->tids[j] = tid;
	tc->hashes[j] = h;
	emit_name(tc->sf, l->tgid >= 0 ? l->tgid : l->pid, l->pid, l->task);
}

/* Convert a file's own timestamp to trace time for an item the reference
 * pushes to its sorter: 1 with *out (>= 0); 0 when the conversion failed
 * (the tracker counted it) or the result is negative (counted here), so
 * the item is dropped before sorting. */
static int push_time(scan_file *sf, tm_clock_tracker *t, uint32_t clock, int64_t ts, int64_t *out)
{
	if (tm_tracker_to_trace_time(t, clock, 0, ts, 0, out) != TM_CONV_OK) {
		scan_lost(sf);
		return 0;
	}
	if (*out < 0) {
		scan_count(sf, TM_STAT_NEGATIVE_TS, 1);
		return 0;
	}
	return 1;
}

int scan_wants_records(const scan_file *sf)
{
	return sf->sc->sink && sf->sc->sink->record;
}

uint32_t scan_new_queue(scan_file *sf)
{
	return sf->sc->s->next_queue++;
}

void scan_record(scan_file *sf, uint32_t queue, int64_t ts, char phase, int64_t dur, const void *data, size_t len)
{
	if (ts > sf->sc->max_pushed)
		sf->sc->max_pushed = ts;
	if (!scan_wants_records(sf))
		return;
	tm_rec r = {queue, ts, phase, dur, data, len, 0};
	sf->sc->sink->record(sf->sc->sink->ctx, &r);
}

void scan_record_side(scan_file *sf, const void *data, size_t len)
{
	if (!scan_wants_records(sf))
		return;
	tm_rec r = {0, 0, 0, -1, data, len, 1};
	sf->sc->sink->record(sf->sc->sink->ctx, &r);
}

int64_t scan_max_pushed(const scan_file *sf)
{
	return sf->sc->max_pushed;
}

/* One systrace line read on `clock` (MONOTONIC for a systrace file, the
 * private clock for embedded text, clocks.md §6.2): recorded for the
 * model, and placed unless its print payload was bad. */
static void systrace_line(text_ctx *tc, uint32_t queue, uint32_t clock, const systrace_event *l)
{
	scan_file *sf = tc->sf;
	task_name(tc, l);
	int64_t out;
	if (!push_time(sf, tc->t, clock, l->ts, &out))
		return;
	if (scan_wants_records(sf)) {
		tm_mrec_systrace(&tc->rec, sf->f->id, sf->base_row, l);
		scan_record(sf, queue, out, 0, -1, tc->rec.data, tc->rec.len);
	}
	if (l->bad_print)
		return; /* counted as a systrace_parse_failure by the reader */
	tm_event ev;
	scan_systrace_event(l, &ev);
	ev.machine_row = sf->base_row;
	ev.raw_ts = l->ts;
	ev.ts = out;
	scan_place(sf, &ev, TM_STAT_NEGATIVE_TS);
}

static int on_systrace_line(void *ctx, const systrace_event *l, tm_error *err)
{
	(void)err;
	text_ctx *tc = ctx;
	systrace_line(tc, tc->q_events, TM_CLOCK_MONOTONIC, l);
	return 0;
}

/* A file is read from its cursor c, or replayed from `log` (at `from`)
 * where it was read ahead: the same callbacks either way. */
static int scan_systrace(scan_file *sf, tm_clock_tracker *t, tm_cursor *c, tm_buf *log, size_t from,
			 tm_error *err)
{
	/* SystraceTraceParser: one stream */
	text_ctx tc = {sf, t, scan_new_queue(sf), 0, {0}, NULL, NULL, 0, 0};
	systrace_stats st = {0};
	int rc = log ? systrace_replay(log, from, on_systrace_line, &tc, &st, err)
		     : systrace_read(c, on_systrace_line, &tc, &st, err);
	free(tc.tids);
	free(tc.hashes);
	tm_buf_free(&tc.rec);
	for (int64_t i = 0; i < st.systrace_parse_failure; i++)
		scan_count(sf, TM_STAT_SYSTRACE_PARSE_FAILURE, 1);
	return rc;
}

/* ---- Chrome JSON ---------------------------------------------------------- */

/* formats.md §3.5: a C event is one sample per numeric arg k, on the
 * counter "{name} {k}" ("{name} id: {id} {k}" with a string id: the
 * reference ignores an integer one there). */
static int place_counters(scan_file *sf, const json_event *je, tm_event *ev)
{
	const tj_value *a = je->args;
	const tj_value *id = je->id;
	tm_buf name = {0};
	for (size_t i = 0; a && a->type == TJ_OBJECT && i < a->len; i++) {
		const tj_value *v = &a->items[i];
		if (!tj_is_number(v))
			continue;
		name.len = 0;
		if (je->name)
			tm_buf_puts(&name, je->name);
		if (id && id->type == TJ_STRING && id->len)
			tm_buf_printf(&name, " id: %s", id->s);
		tm_buf_puts(&name, " ");
		tm_buf_put(&name, a->keys[i], a->key_lens[i]);
		ev->name = name.data;
		ev->name_len = name.len;
		ev->value = v->type == TJ_INT ? (double)v->i : v->d;
		scan_place(sf, ev, TM_STAT_NEGATIVE_TS);
	}
	tm_buf_free(&name);
	return 0;
}

static int on_json_event(void *ctx, const json_event *je, tm_error *err)
{
	(void)err;
	text_ctx *tc = ctx;
	scan_file *sf = tc->sf;
	if (je->kind == JSON_EV_SYSTRACE) {
		systrace_line(tc, tc->q_lines, TM_CLOCK_THIS_FILE, je->systrace);
		return 0;
	}
	/* V8 samples (P) go to a stream of their own that the model does not
	 * read; metadata values are not events. */
	if (je->kind != JSON_EV_TRACE || je->phase == 'P')
		return 0;
	int64_t out;
	if (!push_time(sf, tc->t, TM_CLOCK_THIS_FILE, je->ts, &out))
		return 0;
	if (scan_wants_records(sf) && je->rec) {
		tm_mrec_head h = {TM_MREC_JSON, 0, 0, sf->f->id, sf->base_row};
		tc->rec.len = 0;
		tm_buf_put(&tc->rec, &h, sizeof h);
		tm_buf_put(&tc->rec, je->rec, je->rec_len);
		scan_record(sf, tc->q_events, out, je->phase, je->dur, tc->rec.data, tc->rec.len);
	}
	if (je->phase == 'M' && je->name && je->args) {
		/* formats.md §3.5: process_name / thread_name in args.name */
		const tj_value *n = tj_get(je->args, "name");
		int proc = strcmp(je->name, "process_name") == 0;
		if (n && n->type == TJ_STRING && (proc || strcmp(je->name, "thread_name") == 0))
			emit_name(sf, je->has_pid ? je->pid : 0, proc ? -1 : je->has_tid ? je->tid : 0, n->s);
		return 0;
	}
	tm_event ev;
	memset(&ev, 0, sizeof(ev));
	ev.dur = -1;
	ev.cpu = -1;
	switch (je->phase) {
	case 'X':
		if (je->dur < 0)
			return 0; /* the reader counted json_parser_failure */
		ev.kind = TM_EV_SLICE;
		ev.dur = je->dur;
		break;
	case 'B': ev.kind = TM_EV_BEGIN; break;
	case 'E': ev.kind = TM_EV_END; break;
	case 'i':
	case 'I':
	case 'R':
	case 'n':
		ev.kind = TM_EV_INSTANT;
		break;
	case 'C':
		ev.kind = TM_EV_COUNTER;
		ev.value = je->counter_value;
		break;
	case 'b': ev.kind = TM_EV_ASYNC_BEGIN; break;
	case 'e': ev.kind = TM_EV_ASYNC_END; break;
	case 'T':
		if (je->dur < 0)
			return 0;
		ev.kind = TM_EV_SLICE;
		ev.dur = je->dur;
		break;
	default:
		return 0; /* metadata, flows: not placed on the timeline */
	}
	ev.machine_row = sf->base_row;
	ev.ts = out;
	ev.raw_ts = je->ts;
	ev.pid = je->has_pid ? je->pid : -1;
	ev.tid = je->has_tid ? je->tid : -1;
	ev.name = je->name;
	ev.name_len = je->name ? strlen(je->name) : 0;
	ev.args = je->args_summary;
	if (ev.kind == TM_EV_COUNTER)
		return place_counters(sf, je, &ev);
	scan_place(sf, &ev, TM_STAT_NEGATIVE_TS);
	return 0;
}

/* Whether the scan reads nothing of a systrace line but its time and
 * bad_print, nor of a JSON event but what JSON_TRACE_TIMES keeps: no
 * records, names or events are wanted (systrace_line, on_json_event), as
 * in the scan alone. */
static int reads_times_only(const scan_ctx *sc)
{
	return !sc->sink || (!sc->sink->record && !sc->sink->name && !sc->sink->event);
}

/* What the JSON reader makes for the scan. */
static unsigned json_flags(const scan_ctx *sc)
{
	/* the scan reads no metadata records */
	const tm_scan_sink *k = sc->sink;
	if (reads_times_only(sc))
		return JSON_TRACE_TIMES;
	unsigned f = k && k->want_args ? JSON_TRACE_SUMMARIES : 0;
	if (k && k->record)
		f |= JSON_TRACE_REC | ((k->json_rec & JSON_REC_ANNOT) ? JSON_TRACE_REC_ANNOT : 0) |
		     ((k->json_rec & JSON_REC_TEXT) ? JSON_TRACE_REC_TEXT : 0);
	return f;
}

static int scan_json(scan_file *sf, tm_clock_tracker *t, tm_cursor *c, tm_buf *log, size_t from, tm_error *err)
{
	/* JsonTraceTokenizer: streams for events, systrace lines and V8 samples */
	text_ctx tc = {sf, t, 0, 0, {0}, NULL, NULL, 0, 0};
	tc.q_events = scan_new_queue(sf);
	tc.q_lines = scan_new_queue(sf);
	scan_new_queue(sf); /* V8 samples */
	json_trace_stats st = {0};
	int rc = log ? json_trace_replay(log, from, on_json_event, &tc, &st, err)
		     : json_trace_read_opt(c, json_flags(sf->sc), on_json_event, &tc, &st, err);
	free(tc.tids);
	free(tc.hashes);
	tm_buf_free(&tc.rec);
	for (int64_t i = 0; i < st.json_tokenizer_failure; i++)
		scan_count(sf, TM_STAT_JSON_TOKENIZER_FAILURE, 1);
	for (int64_t i = 0; i < st.json_parser_failure; i++)
		scan_count(sf, TM_STAT_JSON_PARSER_FAILURE, 1);
	for (int64_t i = 0; i < st.json_display_time_unit; i++)
		scan_count(sf, TM_STAT_JSON_DISPLAY_TIME_UNIT, 0);
	for (int64_t i = 0; i < st.systrace_parse_failure; i++)
		scan_count(sf, TM_STAT_SYSTRACE_PARSE_FAILURE, 1);
	return rc;
}

/* ---- config_write_into_file_no_flush ---------------------------------------- */

void scan_service_version(scan_ctx *sc, uint32_t row, int64_t major)
{
	if (row >= sc->n_svc_major) {
		size_t n = row + 1;
		sc->svc_major = tm_xrealloc(sc->svc_major, n * sizeof(*sc->svc_major));
		memset(sc->svc_major + sc->n_svc_major, 0, (n - sc->n_svc_major) * sizeof(*sc->svc_major));
		sc->n_svc_major = n;
	}
	sc->svc_major[row] = major >= 0 ? (uint64_t)major + 1 : 0;
}

/* ProtoTraceReader::OnEventsFullyExtracted: a write_into_file config
 * without flush_period_ms counts, unless its machine's service was v54 or
 * later (it flushes on every write then). */
static void count_no_flush(scan_ctx *sc)
{
	for (size_t i = 0; i < sc->no_flush.n; i++) {
		const tm_named_stat *e = &sc->no_flush.v[i];
		uint64_t v = e->machine_row < sc->n_svc_major ? sc->svc_major[e->machine_row] : 0;
		if (!v || v - 1 < 54)
			tm_statlist_add(&sc->s->named, e->file_id, e->machine_row, e->name, -1, 1);
	}
}

/* ---- the session ------------------------------------------------------------ */

/* clocks.md §6: the clock a format's events are on and claims at start;
 * 0 for formats without timestamps. */
static uint32_t format_clock(tm_type t)
{
	switch (t) {
	case TM_TYPE_JSON:
	case TM_TYPE_GECKO:
	case TM_TYPE_INSTRUMENTS_XML:
	case TM_TYPE_PRIMES:
		return TM_CLOCK_THIS_FILE;
	case TM_TYPE_SYSTRACE:
	case TM_TYPE_PERF:
	case TM_TYPE_PERF_TEXT:
	case TM_TYPE_SIMPLEPERF_PROTO:
	case TM_TYPE_ART_METHOD:
	case TM_TYPE_ART_METHOD_V2:
		return TM_CLOCK_MONOTONIC;
	case TM_TYPE_FUCHSIA:
		return TM_CLOCK_BOOTTIME;
	case TM_TYPE_ANDROID_LOGCAT:
	case TM_TYPE_ANDROID_DUMPSTATE:
	case TM_TYPE_STRACE:
		return TM_CLOCK_REALTIME;
	default:
		return 0;
	}
}

static int is_trace_file(tm_type t)
{
	return t != TM_TYPE_UNKNOWN && t != TM_TYPE_MANIFEST && !tm_type_is_container(t);
}

/* ---- progress ------------------------------------------------------------ */

static void report(scan_ctx *sc)
{
	if (sc->sink && sc->sink->progress)
		sc->sink->progress(sc->sink->ctx, &sc->progress);
}

static void on_read(void *ctx, size_t n)
{
	scan_ctx *sc = ctx;
	sc->progress.done += n;
	report(sc);
}

/* A file's cursor, reporting its reads when someone listens. */
static tm_cursor *open_observed(scan_ctx *sc, const tm_file *f, tm_error *err)
{
	tm_cursor *c = tm_cursor_open(f->blob, err);
	if (c && sc->sink && sc->sink->progress) {
		sc->progress.file = f->name ? f->name : sc->m->path;
		report(sc);
		tm_cursor_observe(c, on_read, sc);
	}
	return c;
}

/* ---- files read ahead (core/ahead.h) ---------------------------------------- */

/* What a log starts with: whether the file opened, why not, the bytes
 * read; the reader's entries follow from `from`. */
typedef struct ahead_head {
	int opened;      /* else a tm_error follows, or it was abandoned */
	int abandoned;   /* too big a log: the scan reads the file in place */
	uint64_t bytes, from;
} ahead_head;

/* A proto file's log holds its packets' bytes and fields: past this (its
 * compressed bundles inflated) it is abandoned, so memory stays bounded. */
#define PROTO_LOG_MAX(size) ((size_t)(size) * 3 + ((size_t)1 << 20))

static void count_read(void *ctx, size_t n)
{
	*(uint64_t *)ctx += n;
}

/* Runs on either thread: reads only the merge's files and the sink's
 * wishes, which nobody changes during the scan. */
static void read_ahead(void *ctx, size_t i, tm_buf *log)
{
	const scan_ctx *sc = ctx;
	const tm_file *f = &sc->m->files[sc->m->order[i]];
	ahead_head h;
	memset(&h, 0, sizeof h);
	size_t at = tm_log_reserve(log, sizeof h);
	tm_error err;
	tm_cursor *c = tm_cursor_open(f->blob, &err);
	if (!c)
		tm_buf_put(log, &err, sizeof err);
	if (c) {
		h.opened = 1;
		h.from = log->len;
		tm_cursor_observe(c, count_read, &h.bytes);
		if (f->type == TM_TYPE_JSON)
			json_trace_log(c, json_flags(sc), log);
		else if (f->type == TM_TYPE_SYSTRACE)
			systrace_log(c, reads_times_only(sc), log);
		else if (scan_proto_log(c, PROTO_LOG_MAX(tm_blob_size(f->blob)), log) != 0) {
			/* read in place after all: the log's memory goes now */
			h.opened = 0;
			h.abandoned = 1;
			tm_buf_free(log);
			at = tm_log_reserve(log, sizeof h);
		}
		tm_cursor_close(c);
	}
	memcpy(log->data + at, &h, sizeof h);
}

/* The JSON and systrace files small enough to read ahead, by their place
 * in the processing order; NULL when none are read ahead. */
static tm_ahead *start_ahead(scan_ctx *sc)
{
	const tm_merge *m = sc->m;
	uint64_t *cost = tm_xcalloc(m->n_order ? m->n_order : 1, sizeof *cost);
	/* A systrace line parses in about the time its copy takes to reach
	 * the other core: read ahead whole, the scan alone took 0.088 s
	 * instead of 0.075 (bench archive of 200 files), while an export,
	 * whose scan also feeds the sorter, gained 8%. The scan alone reads
	 * only the lines' times, which cross in 16 bytes each. */
	int records = sc->sink && sc->sink->record;
	int systrace = records || reads_times_only(sc);
	/* Proto files only for the scan alone: a pass that also rewrites
	 * packets or makes model records keeps the second core busy with
	 * those. Their logs are about 1.6 times their size. */
	int proto = !records && !(sc->sink && sc->sink->packet);
	for (size_t i = 0; i < m->n_order; i++) {
		const tm_file *f = &m->files[m->order[i]];
		int64_t size = f->blob ? tm_blob_size(f->blob) : -1;
		if ((f->type == TM_TYPE_JSON || (f->type == TM_TYPE_SYSTRACE && systrace) ||
		     (f->type == TM_TYPE_PROTO && proto)) &&
		    size > 0 && size <= (int64_t)TM_AHEAD_MAX_FILE)
			cost[i] = (uint64_t)size * (f->type == TM_TYPE_PROTO ? 2 : 1) + TM_AHEAD_ITEM_COST;
	}
	tm_ahead *a = tm_ahead_start(m->n_order, cost, read_ahead, sc);
	free(cost);
	return a;
}

/* A file read ahead, replayed into the scan. */
static int scan_logged(scan_file *sf, tm_clock_tracker *t, tm_buf *log, tm_error *err)
{
	scan_ctx *sc = sf->sc;
	ahead_head h;
	memcpy(&h, log->data + TM_LOG_FIRST, sizeof h);
	if (h.abandoned)
		return 1;
	if (!h.opened) {
		memcpy(err, log->data + TM_LOG_FIRST + sizeof h, sizeof *err);
		return -1;
	}
	if (sc->sink && sc->sink->progress) {
		sc->progress.file = sf->f->name ? sf->f->name : sc->m->path;
		report(sc);
	}
	int rc = sf->f->type == TM_TYPE_JSON       ? scan_json(sf, t, NULL, log, h.from, err)
		 : sf->f->type == TM_TYPE_SYSTRACE ? scan_systrace(sf, t, NULL, log, h.from, err)
						   : scan_proto(sf, NULL, log, h.from, err);
	if (sc->sink && sc->sink->progress && h.bytes)
		on_read(sc, h.bytes);
	return rc;
}

/* `at`: the file's place in the processing order. */
static int scan_one(scan_ctx *sc, const tm_file *f, size_t at, tm_error *err)
{
	tm_scan *s = sc->s;
	tm_manifest *man = sc->m->manifest;
	scan_file sf = {sc, f, &s->files[f->id], -1, TM_RAW_HOST, 0};
	sf.out->scanned = 1;
	if (man && f->entry >= 0) {
		sf.entry = f->entry;
		sf.base_raw = tm_manifest_entry_base_raw_id(man, (size_t)f->entry);
		const tm_mf_clocks *ck = man->files[f->entry].clocks;
		if (ck)
			sf.out->clock_override = ck->clock ? 1 : 2;
	}
	/* machines.md §2-§3: the file's context on its base machine exists
	 * from the start. */
	sf.base_row = scan_row_for_raw(sc, sf.base_raw);
	tm_clock_tracker *t = scan_tracker(&sf, sf.base_row);

	if (f->type == TM_TYPE_PROTO) {
		tm_tracker_set_sync_clock(t, TM_CLOCK_BOOTTIME);
		tm_buf *log = tm_ahead_take(sc->ahead, at);
		int rc = log ? scan_logged(&sf, t, log, err) : 1;
		if (log)
			tm_ahead_done(sc->ahead, at);
		if (rc != 1)
			return rc;
		tm_cursor *c = open_observed(sc, f, err);
		if (!c)
			return -1;
		rc = scan_proto(&sf, c, NULL, 0, err);
		tm_cursor_close(c);
		return rc;
	}
	uint32_t clock = format_clock(f->type);
	if (!clock)
		return 0;
	tm_tracker_set_default_clock(t, clock);
	tm_tracker_set_sync_clock(t, clock);
	tm_tracker_claim(t, clock);
	if (f->type != TM_TYPE_JSON && f->type != TM_TYPE_SYSTRACE)
		return 0; /* claims and bridges like the reference, events not read */
	tm_buf *log = tm_ahead_take(sc->ahead, at);
	if (log) {
		int rc = scan_logged(&sf, t, log, err);
		tm_ahead_done(sc->ahead, at);
		return rc;
	}
	tm_cursor *c = open_observed(sc, f, err);
	if (!c)
		return -1;
	int rc = f->type == TM_TYPE_JSON ? scan_json(&sf, t, c, NULL, 0, err)
					 : scan_systrace(&sf, t, c, NULL, 0, err);
	tm_cursor_close(c);
	return rc;
}

static int64_t file_of_entry(const tm_merge *m, size_t entry)
{
	for (size_t i = 0; i < m->n_files; i++)
		if (m->files[i].entry == (int32_t)entry && m->files[i].name)
			return (int64_t)i;
	return 0;
}

/* manifest.md §6 step 7, clocks.md §3.1 and §5.2: rows, edges, claim. */
static int apply_plan(scan_ctx *sc, tm_error *err)
{
	const tm_mf_plan *p = sc->plan;
	tm_scan *s = sc->s;
	for (size_t i = 0; i < p->n_rows; i++)
		tm_machines_add(&s->machines, p->rows[i].raw_id, p->rows[i].name);
	scan_sync_machines(sc);
	for (size_t i = 0; i < p->n_edges; i++) {
		const tm_mf_edge *e = &p->edges[i];
		tm_clock_reading r[2] = {
			{e->src, (uint64_t)e->src_ts, 1, 0},
			{e->ref, (uint64_t)e->ref_ts, 1, 0},
		};
		int64_t fid = file_of_entry(sc->m, e->file_index);
		if (tm_clocks_add_snapshot(s->clocks, r, 2, TM_CLOCK_ORIGIN_MANIFEST, (uint32_t)fid,
					   e->src.machine_row, err) < 0)
			return -1;
	}
	if (p->has_trace_time)
		tm_clocks_claim(s->clocks, p->trace_time,
				(uint32_t)(sc->m->manifest_file >= 0 ? sc->m->manifest_file : 0));
	return 0;
}

/* The clock module counts per-conversion failures on its trackers; fold
 * them into the files' drops and the totals, then let the trackers go: a
 * tracker serves only the file it was opened for, so each file's are
 * folded and freed when it is read (an archive may hold 100,000 files). */
static void fold_tracker_stats(tm_scan *s)
{
	static const tm_stat map[TM_CLOCK_STAT_COUNT] = {
		[TM_CLOCK_STAT_INVALID_SNAPSHOTS] = TM_STAT_INVALID_SNAPSHOTS,
		[TM_CLOCK_STAT_UNKNOWN_SOURCE] = TM_STAT_UNKNOWN_SOURCE,
		[TM_CLOCK_STAT_UNKNOWN_TARGET] = TM_STAT_UNKNOWN_TARGET,
		[TM_CLOCK_STAT_NO_PATH] = TM_STAT_NO_PATH,
		[TM_CLOCK_STAT_UNRELATABLE] = TM_STAT_UNRELATABLE,
		[TM_CLOCK_STAT_MIXED_SOURCES] = TM_STAT_MIXED_SOURCES,
	};
	size_t n = tm_clocks_tracker_count(s->clocks);
	for (size_t i = 0; i < n; i++) {
		tm_clock_tracker *t = tm_clocks_tracker_at(s->clocks, i);
		tm_clock_stats st;
		tm_tracker_stats(t, &st);
		uint32_t fid = tm_tracker_file(t);
		for (int k = 0; k < TM_CLOCK_STAT_COUNT; k++) {
			if (k == TM_CLOCK_STAT_INVALID_SNAPSHOTS || !st.n[k])
				continue;
			s->stats[map[k]] += st.n[k];
			if (fid < s->n_files)
				scan_file_drops(&s->files[fid])[map[k]] += st.n[k];
		}
	}
	tm_clocks_end_trackers(s->clocks);
}

/* invalid_clock_snapshots is the graph's, not a tracker's. */
static void collect_clock_stats(tm_scan *s)
{
	fold_tracker_stats(s);
	tm_clock_stats all;
	tm_clocks_stats(s->clocks, &all);
	s->stats[TM_STAT_INVALID_SNAPSHOTS] = all.n[TM_CLOCK_STAT_INVALID_SNAPSHOTS];
}

tm_scan *tm_scan_run(tm_merge *m, const tm_scan_sink *sink)
{
	tm_scan *s = tm_xcalloc(1, sizeof(*s));
	s->err_file = -1;
	s->clocks = tm_clocks_new();
	s->n_files = m->n_files;
	s->files = tm_xcalloc(m->n_files ? m->n_files : 1, sizeof(*s->files));
	scan_ctx sc = {.m = m, .s = s, .sink = sink, .plan = m->plan};
	tm_error err = {0};
	for (size_t i = 0; sink && sink->progress && i < m->n_order; i++) {
		const tm_file *f = &m->files[m->order[i]];
		int64_t size = f->blob ? tm_blob_size(f->blob) : -1;
		int read = f->type == TM_TYPE_PROTO || f->type == TM_TYPE_JSON || f->type == TM_TYPE_SYSTRACE;
		if (read && size > 0) /* the formats scan_one reads */
			sc.progress.total += (uint64_t)size;
	}
	size_t n_trace = 0;
	for (size_t i = 0; i < m->n_order; i++) {
		const tm_file *f = &m->files[m->order[i]];
		n_trace += is_trace_file(f->type) && f->blob;
	}
	tm_clocks_reserve(s->clocks, n_trace); /* 100,000 small files: one clock each */
	if (sc.plan && apply_plan(&sc, &err) != 0) {
		s->failed = 1;
		s->err = err;
		s->err_file = m->manifest_file;
	}
	/* issue 10: the second core reads the next JSON and systrace files */
	if (!s->failed)
		sc.ahead = start_ahead(&sc);
	for (size_t i = 0; !s->failed && i < m->n_order; i++) {
		const tm_file *f = &m->files[m->order[i]];
		if (!is_trace_file(f->type) || !f->blob)
			continue;
		tm_err_clear(&err);
		if (tm_stopped(&err) != 0 || scan_one(&sc, f, i, &err) != 0) {
			/* a stop that a reader met as a failed read (the cursors
			 * look at it): whatever that reader made of it, the scan
			 * was interrupted, and no index may keep it as the input's
			 * fault */
			tm_stopped(&err);
			s->failed = 1;
			if (err.code == TM_OK)
				tm_err(&err, TM_EIO, "%s: read failed", f->name ? f->name : m->path);
			s->err = err;
			s->err_file = f->id;
		}
		fold_tracker_stats(s);
	}
	tm_ahead_stop(sc.ahead);
	if (!s->failed)
		count_no_flush(&sc);
	tm_statlist_free(&sc.no_flush);
	free(sc.svc_major);
	collect_clock_stats(s);
	scan_sync_machines(&sc);
	sc.progress.file = NULL;
	report(&sc);
	s->tt_node = tm_clocks_trace_time(s->clocks);
	s->has_tt_clock_id = tm_clocks_trace_time_clock_id(s->clocks, &s->tt_clock_id);
	s->has_tt_owner = tm_clocks_owner(s->clocks, &s->tt_owner_file);
	tm_u64map_free(&sc.raw_with_context);
	return s;
}

void tm_scan_free(tm_scan *s)
{
	if (!s)
		return;
	tm_clocks_free(s->clocks);
	tm_machines_free(&s->machines);
	for (size_t i = 0; i < s->n_files; i++) {
		if (s->files[i].machines != &s->files[i].machine0)
			free(s->files[i].machines);
		free(s->files[i].drops);
	}
	free(s->files);
	free(s->mach);
	tm_statlist_free(&s->named);
	free(s);
}

const tm_mf_row *tm_scan_fixed_rows(const tm_merge *m, size_t *n)
{
	const tm_mf_plan *p = m->plan;
	*n = 0;
	if (!p || !m->manifest)
		return NULL;
	for (size_t i = 0; i < m->n_order; i++) {
		const tm_file *f = &m->files[m->order[i]];
		if (!is_trace_file(f->type) || !f->blob)
			continue;
		if (f->entry < 0 || tm_manifest_entry_base_raw_id(m->manifest, (size_t)f->entry) == TM_RAW_HOST)
			return NULL;
	}
	*n = p->n_rows;
	return p->rows;
}

int tm_scan_file_on_row(const tm_scan *s, size_t fid, uint32_t row)
{
	if (fid >= s->n_files)
		return 0;
	const tm_scan_file *sf = &s->files[fid];
	for (size_t k = 0; k < sf->n_machines; k++)
		if (sf->machines[k] == row)
			return 1;
	return 0;
}

void tm_scan_row_files(const tm_scan *s, tm_row_files *out)
{
	size_t nr = s->machines.n, total = 0;
	out->first = tm_xcalloc(nr + 1, sizeof(*out->first));
	for (size_t i = 0; i < s->n_files; i++)
		for (size_t k = 0; k < s->files[i].n_machines; k++)
			if (s->files[i].machines[k] < nr) {
				out->first[s->files[i].machines[k] + 1]++;
				total++;
			}
	for (size_t r = 0; r < nr; r++)
		out->first[r + 1] += out->first[r];
	out->files = tm_xcalloc(total ? total : 1, sizeof(*out->files));
	size_t *at = tm_xcalloc(nr ? nr : 1, sizeof(*at));
	for (size_t i = 0; i < s->n_files; i++)
		for (size_t k = 0; k < s->files[i].n_machines; k++) {
			uint32_t r = s->files[i].machines[k];
			if (r >= nr)
				continue;
			size_t j = out->first[r] + at[r];
			if (at[r] && out->files[j - 1] == (uint32_t)i)
				continue; /* a row listed twice for the file */
			out->files[j] = (uint32_t)i;
			at[r]++;
		}
	/* Rows that skipped a repeat end early: close the gaps. */
	size_t w = 0;
	for (size_t r = 0; r < nr; r++) {
		size_t start = out->first[r], n = at[r];
		memmove(out->files + w, out->files + start, n * sizeof(*out->files));
		out->first[r] = w;
		w += n;
	}
	out->first[nr] = w;
	free(at);
}

void tm_row_files_free(tm_row_files *rf)
{
	free(rf->first);
	free(rf->files);
	rf->first = NULL;
	rf->files = NULL;
}
