/* core/formats/ninja/tokenize.c - a ninja log into the scan: the whole
 * log read, its jobs sorted and given workers as the reference does at
 * the end of the file, then each placed at its start (ms from the build's
 * start, as trace time: the format has no clock) and recorded for the
 * model in that order. */
#include "formats/ninja/ninja_format.h"

#include <stdlib.h>
#include <string.h>

#include "formats/ninja/ninja.h"

#define MS_TO_NS INT64_C(1000000)
#define CHUNK (256u * 1024u)

/* ms as ns, wrapping where the reference's int64 product overflows */
static int64_t ms_to_ns(int64_t ms)
{
	return (int64_t)((uint64_t)ms * (uint64_t)MS_TO_NS);
}

static void put_job(scan_file *sf, uint32_t queue, const ninja_log *lg, const ninja_job *j, tm_buf *rec)
{
	int64_t ts = ms_to_ns(j->start_ms);
	int64_t dur = (int64_t)((uint64_t)ms_to_ns(j->end_ms) - (uint64_t)ts);
	const char *name = lg->names.data + j->names_off;
	if (ts < 0) { /* the reference writes it; the sorter here cannot order it */
		scan_count(sf, TM_STAT_NEGATIVE_TS, 1);
		return;
	}
	if (scan_wants_records(sf)) {
		tm_mrec_head h = {TM_MREC_NINJA, 0, 0, sf->f->id, sf->base_row};
		tm_ninja_rec r = {dur, j->worker, j->new_worker};
		rec->len = 0;
		tm_mrec_head_put(rec, &h);
		tm_buf_put(rec, &r, sizeof r);
		tm_buf_put(rec, name, j->names_len);
		tm_buf_putc(rec, '\0');
		scan_record(sf, queue, ts, 0, -1, rec->data, rec->len);
	}
	if (!scan_wants_events(sf)) {
		scan_place_times(sf, sf->base_row, ts, dur, ts, TM_STAT_NEGATIVE_TS);
		return;
	}
	tm_event ev = {0};
	ev.machine_row = sf->base_row;
	ev.kind = TM_EV_SLICE;
	ev.ts = ev.raw_ts = ts;
	ev.dur = dur;
	ev.pid = 1;
	ev.tid = j->worker;
	ev.name = name;
	ev.name_len = j->names_len;
	ev.cpu = -1;
	scan_place(sf, &ev, TM_STAT_NEGATIVE_TS);
}

static int read_file(scan_file *sf, tm_clock_tracker *t, tm_cursor *c, tm_buf *log, size_t from, tm_error *err)
{
	(void)t;
	(void)log;
	(void)from;
	ninja_log lg = {0};
	char *buf = tm_xmalloc(CHUNK);
	int rc = 0;
	for (;;) {
		ssize_t got = tm_cursor_read(c, buf, CHUNK, err);
		if (got < 0) {
			rc = -1;
			break;
		}
		if (got == 0)
			break;
		if (ninja_feed(&lg, buf, (size_t)got, err) != 0) {
			rc = -1;
			break;
		}
	}
	free(buf);
	if (rc == 0) {
		ninja_finish(&lg);
		uint32_t queue = scan_new_queue(sf);
		tm_buf rec = {0};
		if (lg.parse_errors && scan_wants_records(sf)) {
			/* counted where the model counts the stats of parsing */
			tm_mrec_head h = {TM_MREC_NINJA, 1, 0, sf->f->id, sf->base_row};
			tm_mrec_head_put(&rec, &h);
			tm_buf_put(&rec, &lg.parse_errors, sizeof lg.parse_errors);
			scan_record_side(sf, rec.data, rec.len);
		}
		for (size_t i = 0; i < lg.n; i++)
			put_job(sf, queue, &lg, &lg.jobs[i], &rec);
		tm_buf_free(&rec);
	}
	ninja_free(&lg);
	return rc;
}

const tm_tokenizer tm_ninja_tokenizer = {.read = read_file};
