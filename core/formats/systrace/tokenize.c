/* core/formats/systrace/tokenize.c - systrace text into the scan: each
 * line's time on MONOTONIC (clocks.md §6.2), its record for the model and
 * its place on the timeline, task names for the tables. Also the lines a
 * JSON file embeds (core/formats/json/tokenize.c). */
#include "formats/systrace/systrace_format.h"

#include <stdlib.h>
#include <string.h>

#include "util/ahead.h"
#include "util/hash.h"

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

#define MAX_TASKS (1u << 20)

/* Report a line's task name when its thread shows a new one. */
static void task_name(systrace_tok *tc, const systrace_event *l)
{
	if (!tc->sf->sc->sink || !tc->sf->sc->sink->name || !l->task[0] ||
	    (l->task[0] == '<' && strcmp(l->task, "<...>") == 0))
		return;
	uint64_t h = tm_khash_str(l->task) | 1;
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
				size_t j = (size_t)tm_khash_u64(ot[i]) & (tc->cap - 1);
				while (tc->hashes[j])
					j = (j + 1) & (tc->cap - 1);
				tc->tids[j] = ot[i];
				tc->hashes[j] = oh[i];
			}
		free(ot);
		free(oh);
	}
	uint64_t tid = (uint64_t)l->pid;
	size_t j = (size_t)tm_khash_u64(tid) & (tc->cap - 1);
	while (tc->hashes[j] && tc->tids[j] != tid)
		j = (j + 1) & (tc->cap - 1);
	if (tc->hashes[j] == h)
		return;
	if (!tc->hashes[j])
		tc->n++;
	tc->tids[j] = tid;
	tc->hashes[j] = h;
	scan_emit_name(tc->sf, l->tgid >= 0 ? l->tgid : l->pid, l->pid, l->task);
}

void systrace_tok_free(systrace_tok *tc)
{
	free(tc->tids);
	free(tc->hashes);
	tm_buf_free(&tc->rec);
}

/* A systrace file's tokenizer: its one sorter queue. */
typedef struct file_tok {
	systrace_tok tok;
	uint32_t queue;
} file_tok;

/* One systrace line read on `clock` (MONOTONIC for a systrace file, the
 * private clock for embedded text, clocks.md §6.2): recorded for the
 * model, and placed unless its print payload was bad. */
void systrace_tok_line(systrace_tok *tc, uint32_t queue, uint32_t clock, const systrace_event *l)
{
	scan_file *sf = tc->sf;
	task_name(tc, l);
	int64_t out;
	if (!scan_push_time(sf, tc->t, clock, l->ts, &out))
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
	file_tok *ft = ctx;
	systrace_tok_line(&ft->tok, ft->queue, TM_CLOCK_MONOTONIC, l);
	return 0;
}

/* A file is read from its cursor c, or replayed from `log` (at `from`)
 * where it was read ahead: the same callbacks either way. */
static int read_file(scan_file *sf, tm_clock_tracker *t, tm_cursor *c, tm_buf *log, size_t from, tm_error *err)
{
	/* SystraceTraceParser: one stream */
	file_tok ft = {{sf, t, {0}, NULL, NULL, 0, 0}, scan_new_queue(sf)};
	systrace_stats st = {0};
	int rc = log ? systrace_replay(log, from, on_systrace_line, &ft, &st, err)
		     : systrace_read(c, on_systrace_line, &ft, &st, err);
	systrace_tok_free(&ft.tok);
	for (int64_t i = 0; i < st.systrace_parse_failure; i++)
		scan_count(sf, TM_STAT_SYSTRACE_PARSE_FAILURE, 1);
	return rc;
}

/* A line parses in about the time its copy takes to reach the other core:
 * read ahead whole, the scan alone took 0.088 s instead of 0.075 (bench
 * archive of 200 files), while an export, whose scan also feeds the
 * sorter, gained 8%. The scan alone reads only the lines' times, which
 * cross in 16 bytes each. */
static uint64_t ahead_cost(const scan_ctx *sc, int64_t size)
{
	int records = sc->sink && sc->sink->record;
	return records || scan_reads_times_only(sc) ? (uint64_t)size : 0;
}

static int log_file(const scan_ctx *sc, tm_cursor *c, int64_t size, tm_buf *log)
{
	systrace_log(c, scan_reads_times_only(sc), log);
	return 0;
}

const tm_tokenizer tm_systrace_tokenizer = {
	.clock = TM_CLOCK_MONOTONIC,
	.read = read_file,
	.ahead_cost = ahead_cost,
	.log = log_file,
};
