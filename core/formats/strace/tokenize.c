/* core/formats/strace/tokenize.c - strace text into the scan: each call
 * line's time on REALTIME (clocks.md §6), its record for the model on the
 * file's one sorter queue and its place on the timeline; the lines that
 * are not calls counted as the reference counts them. */
#include "formats/strace/strace_format.h"

#include <stdlib.h>
#include <string.h>

#include "formats/strace/strace.h"


typedef struct strace_tok {
	scan_file *sf;
	tm_clock_tracker *t;
	uint32_t queue;
	tm_buf rec;
	int64_t parse_failure, unsupported_time, missing_pid;
} strace_tok;

/* StraceTraceTokenizer::Parse of one line (its '\n' not included) */
static void line(strace_tok *st, const char *p, size_t n)
{
	scan_file *sf = st->sf;
	strace_line l;
	int unsupported;
	if (!strace_parse_line(p, n, &l, &unsupported)) {
		if (unsupported)
			st->unsupported_time++;
		else
			st->parse_failure++;
		return;
	}
	int64_t ts;
	if (!scan_push_time(sf, st->t, TM_CLOCK_REALTIME, l.epoch_ns, &ts))
		return;
	if (!l.has_pid) {
		st->missing_pid++;
		return;
	}
	if (scan_wants_records(sf)) {
		tm_mrec_head h = {TM_MREC_STRACE, 0, 0, sf->f->id, sf->base_row};
		tm_strace_rec r = {l.pid, (uint8_t)l.kind, l.args_n > 0, (uint8_t)l.has_ret};
		tm_buf *b = &st->rec;
		b->len = 0;
		tm_mrec_head_put(b, &h);
		tm_buf_put(b, &r, sizeof r);
		tm_buf_put(b, l.syscall, l.syscall_n);
		tm_buf_putc(b, '\0');
		tm_buf_put(b, l.args, l.args_n);
		tm_buf_putc(b, '\0');
		tm_buf_put(b, l.ret, l.ret_n);
		tm_buf_putc(b, '\0');
		scan_record(sf, st->queue, ts, 0, -1, b->data, b->len);
	}
	tm_ev_kind kind = l.kind == STRACE_COMPLETE ? TM_EV_INSTANT : l.kind == STRACE_RESUMED ? TM_EV_END : TM_EV_BEGIN;
	if (!scan_wants_events(sf)) {
		scan_place_times(sf, sf->base_row, ts, -1, l.epoch_ns, TM_STAT_NEGATIVE_TS);
		return;
	}
	tm_event ev = {0};
	ev.machine_row = sf->base_row;
	ev.kind = kind;
	ev.ts = ts;
	ev.raw_ts = l.epoch_ns;
	ev.dur = -1;
	ev.pid = -1;
	ev.tid = l.pid;
	ev.name = l.syscall;
	ev.name_len = l.syscall_n;
	ev.cpu = -1;
	scan_place(sf, &ev, TM_STAT_NEGATIVE_TS);
}

static int each_line(void *ctx, const char *p, size_t n)
{
	line(ctx, p, n);
	return 0;
}

static int read_file(scan_file *sf, tm_clock_tracker *t, tm_cursor *c, tm_buf *log, size_t from, tm_error *err)
{
	(void)log;
	(void)from;
	strace_tok st = {.sf = sf, .t = t, .queue = scan_new_queue(sf)};
	tm_buf pend = {0};
	int rc = scan_read_lines(c, each_line, &st, &pend, err);
	/* an unended last line is never read (the reference waits for its '\n') */
	tm_buf_free(&pend);
	if (rc == 0 && scan_wants_records(sf) && (st.parse_failure || st.unsupported_time || st.missing_pid)) {
		tm_mrec_head h = {TM_MREC_STRACE, 1, 0, sf->f->id, sf->base_row};
		int64_t n[3] = {st.parse_failure, st.unsupported_time, st.missing_pid};
		st.rec.len = 0;
		tm_mrec_head_put(&st.rec, &h);
		tm_buf_put(&st.rec, n, sizeof n);
		scan_record_side(sf, st.rec.data, st.rec.len);
	}
	tm_buf_free(&st.rec);
	return rc;
}

const tm_tokenizer tm_strace_tokenizer = {.clock = TM_CLOCK_REALTIME, .read = read_file};
