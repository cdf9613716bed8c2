/* core/formats/collapsed/tokenize.c - a collapsed-stack file into the
 * scan: each stack a side record for the model (the format has no time,
 * so nothing is placed or sorted). */
#include "formats/collapsed/collapsed_format.h"

#include <stdlib.h>
#include <string.h>

#include "formats/collapsed/collapsed.h"


static void line(scan_file *sf, tm_buf *rec, const char *p, size_t n)
{
	const char *stack;
	size_t stack_n;
	int64_t count;
	if (!collapsed_parse_line(p, n, &stack, &stack_n, &count))
		return;
	tm_mrec_head h = {TM_MREC_COLLAPSED, 0, 0, sf->f->id, sf->base_row};
	tm_collapsed_rec r = {count, 0};
	rec->len = 0;
	tm_mrec_head_put(rec, &h);
	size_t at = rec->len;
	tm_buf_put(rec, &r, sizeof r);
	size_t next = 0;
	const char *f;
	size_t fn;
	while (collapsed_next_frame(stack, stack_n, &next, &f, &fn)) {
		tm_mrec_put_str(rec, f, fn);
		r.n_frames++;
	}
	memcpy(rec->data + at, &r, sizeof r);
	scan_record_side(sf, rec->data, rec->len);
}

struct lines {
	scan_file *sf;
	tm_buf rec;
};

static int each_line(void *ctx, const char *p, size_t n)
{
	struct lines *ls = ctx;
	line(ls->sf, &ls->rec, p, n);
	return 0;
}

static int read_file(scan_file *sf, tm_clock_tracker *t, tm_cursor *c, tm_buf *log, size_t from, tm_error *err)
{
	(void)t;
	(void)log;
	(void)from;
	if (!scan_wants_records(sf))
		return 0; /* nothing of it is placed: only the model reads it */
	struct lines ls = {sf, {0}};
	tm_buf pend = {0};
	int rc = scan_read_lines(c, each_line, &ls, &pend, err);
	/* the last line is read without its '\n' (OnPushDataToSorter) */
	if (rc == 0 && pend.len)
		line(sf, &ls.rec, pend.data, pend.len);
	tm_buf_free(&pend);
	tm_buf_free(&ls.rec);
	return rc;
}

const tm_tokenizer tm_collapsed_tokenizer = {.read = read_file};
