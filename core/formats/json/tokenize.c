/* core/formats/json/tokenize.c - Chrome JSON into the scan: each event's
 * time on the file's private clock (clocks.md §6), its record for the
 * model, its place on the timeline, thread and process names; the
 * systrace text it embeds goes to the systrace tokenizer's line handler. */
#include "formats/json/json_format.h"

#include <stdlib.h>
#include <string.h>

#include "formats/json/json_rec.h"
#include "formats/json/json_trace.h"
#include "formats/systrace/systrace_format.h"

/* JsonTraceTokenizer's state: its embedded lines, its sorter queues. */
typedef struct json_tok {
	systrace_tok lines;
	uint32_t q_events, q_lines; /* sorter queues: JSON events, systrace lines */
} json_tok;

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
		tm_buf_put(&name, tj_keys(a)[i].s, tj_keys(a)[i].len);
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
	json_tok *tc = ctx;
	scan_file *sf = tc->lines.sf;
	if (je->kind == JSON_EV_SYSTRACE) {
		systrace_tok_line(&tc->lines, tc->q_lines, TM_CLOCK_THIS_FILE, je->systrace);
		return 0;
	}
	/* V8 samples (P) go to a stream of their own that the model does not
	 * read; metadata values are not events. */
	if (je->kind != JSON_EV_TRACE || je->phase == 'P')
		return 0;
	int64_t out;
	if (!scan_push_time(sf, tc->lines.t, TM_CLOCK_THIS_FILE, je->ts, &out))
		return 0;
	if (scan_wants_records(sf) && je->rec) {
		tm_mrec_head h = {TM_MREC_JSON, 0, 0, sf->f->id, sf->base_row};
		tm_buf *rec = &tc->lines.rec;
		rec->len = 0;
		tm_mrec_head_put(rec, &h);
		tm_buf_put(rec, je->rec, je->rec_len);
		scan_record(sf, tc->q_events, out, je->phase, je->dur, rec->data, rec->len);
	}
	if (je->phase == 'M' && je->name && je->args) {
		/* formats.md §3.5: process_name / thread_name in args.name */
		const tj_value *n = tj_get(je->args, "name");
		int proc = strcmp(je->name, "process_name") == 0;
		if (n && n->type == TJ_STRING && (proc || strcmp(je->name, "thread_name") == 0))
			scan_emit_name(sf, je->has_pid ? je->pid : 0, proc ? -1 : je->has_tid ? je->tid : 0, n->s);
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

static unsigned json_flags(const scan_ctx *sc)
{
	/* the scan reads no metadata records */
	const tm_scan_sink *k = sc->sink;
	if (scan_reads_times_only(sc))
		return JSON_TRACE_TIMES;
	unsigned f = k && k->want_args ? JSON_TRACE_SUMMARIES : 0;
	if (k && k->record)
		f |= JSON_TRACE_REC | ((k->rec_for & TM_REC_FOR_ENCODERS) ? JSON_TRACE_REC_ANNOT : 0) |
		     ((k->rec_for & TM_REC_FOR_ROWS) ? JSON_TRACE_REC_TEXT : 0);
	return f;
}

static int read_file(scan_file *sf, tm_clock_tracker *t, tm_cursor *c, tm_buf *log, size_t from, tm_error *err)
{
	/* JsonTraceTokenizer: streams for events, systrace lines and V8 samples */
	json_tok tc = {{sf, t, {0}, NULL, NULL, 0, 0}, 0, 0};
	tc.q_events = scan_new_queue(sf);
	tc.q_lines = scan_new_queue(sf);
	scan_new_queue(sf); /* V8 samples */
	json_trace_stats st = {0};
	int rc = log ? json_trace_replay(log, from, on_json_event, &tc, &st, err)
		     : json_trace_read_opt(c, json_flags(sf->sc), on_json_event, &tc, &st, err);
	systrace_tok_free(&tc.lines);
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

static uint64_t ahead_cost(const scan_ctx *sc, int64_t size)
{
	return (uint64_t)size;
}

static int log_file(const scan_ctx *sc, tm_cursor *c, int64_t size, tm_buf *log)
{
	json_trace_log(c, json_flags(sc), log);
	return 0;
}

const tm_tokenizer tm_json_tokenizer = {
	.clock = TM_CLOCK_THIS_FILE,
	.read = read_file,
	.ahead_cost = ahead_cost,
	.log = log_file,
};
