/* core/formats/collapsed/tokenize.c - a collapsed-stack file into the
 * scan: each stack a side record for the model (the format has no time,
 * so nothing is placed or sorted). */
#include "formats/collapsed/collapsed_format.h"

#include <stdlib.h>
#include <string.h>

#include "formats/collapsed/collapsed.h"

#define CHUNK (256u * 1024u)

static void put_str(tm_buf *b, const char *p, size_t n)
{
	uint32_t len = (uint32_t)n;
	tm_buf_put(b, &len, sizeof len);
	tm_buf_put(b, p, n);
}

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
	tm_buf_put(rec, &h, sizeof h);
	tm_buf_put(rec, &r, sizeof r);
	size_t at = 0;
	const char *f;
	size_t fn;
	while (collapsed_next_frame(stack, stack_n, &at, &f, &fn)) {
		put_str(rec, f, fn);
		r.n_frames++;
	}
	memcpy(rec->data + sizeof h, &r, sizeof r);
	scan_record_side(sf, rec->data, rec->len);
}

static int read_file(scan_file *sf, tm_clock_tracker *t, tm_cursor *c, tm_buf *log, size_t from, tm_error *err)
{
	(void)t;
	(void)log;
	(void)from;
	if (!scan_wants_records(sf))
		return 0; /* nothing of it is placed: only the model reads it */
	tm_buf pend = {0}, rec = {0};
	char *buf = tm_xmalloc(CHUNK);
	int rc = 0;
	for (;;) {
		ssize_t got = tm_cursor_read(c, buf, CHUNK, err);
		if (got <= 0) {
			rc = got < 0 ? -1 : 0;
			break;
		}
		const char *p = buf, *end = buf + got;
		for (;;) {
			const char *nl = memchr(p, '\n', (size_t)(end - p));
			if (!nl) {
				tm_buf_put(&pend, p, (size_t)(end - p));
				break;
			}
			if (pend.len) {
				tm_buf_put(&pend, p, (size_t)(nl - p));
				line(sf, &rec, pend.data, pend.len);
				pend.len = 0;
			} else {
				line(sf, &rec, p, (size_t)(nl - p));
			}
			p = nl + 1;
		}
	}
	/* the last line is read without its '\n' (OnPushDataToSorter) */
	if (rc == 0 && pend.len)
		line(sf, &rec, pend.data, pend.len);
	free(buf);
	tm_buf_free(&pend);
	tm_buf_free(&rec);
	return rc;
}

const tm_tokenizer tm_collapsed_tokenizer = {.read = read_file};
