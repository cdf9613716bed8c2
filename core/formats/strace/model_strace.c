/* core/formats/strace/model_strace.c - strace calls into the tables, as
 * StraceTraceParser::Parse makes them: the thread of the line's pid (no
 * process), its thread track, and a slice of category "strace" named by
 * the syscall, with the args "args" and "ret": Scoped of no duration for
 * a whole call, Begin for an interrupted one, End for its resumption
 * (a no-op without an open slice of that name), End then Begin for a
 * resumption interrupted again. */
#include "model/model_internal.h"
#include "formats/strace/strace_format.h"

#include <string.h>

#include "formats/strace/strace.h"

/* The args as compact JSON members: "args":"...","ret":"..." */
static void args_text(tm_buf *b, const strace_observed *o)
{
	b->len = 0;
	if (o->args) {
		tm_buf_puts(b, "\"args\":");
		tm_buf_json_string(b, o->args, strlen(o->args));
	}
	if (o->ret) {
		if (b->len)
			tm_buf_putc(b, ',');
		tm_buf_puts(b, "\"ret\":");
		tm_buf_json_string(b, o->ret, strlen(o->ret));
	}
}

static void apply(tm_model *m, const tm_mrec_head *h, int64_t ts, const char *body, size_t n, const void *pre,
		  size_t pre_len)
{
	(void)pre;
	(void)pre_len;
	tm_strace_rec r;
	if (h->sub != 0 || n < sizeof r + 3 || body[n - 1] != '\0')
		return;
	memcpy(&r, body, sizeof r);
	const char *syscall = body + sizeof r, *end = body + n;
	const char *args = syscall + strlen(syscall) + 1;
	if (args >= end)
		return;
	const char *ret = args + strlen(args) + 1;
	if (ret >= end || r.kind > STRACE_RESUMED_THEN_UNFINISHED)
		return;
	strace_observed so = {r.kind, syscall, r.has_args ? args : NULL, r.has_ret ? ret : NULL};

	m_mach *mc = m_machine(m, h->machine_row);
	m_ctx *c = m_context(m, h->file_id, h->machine_row);
	int64_t utid = m_get_or_create_thread(m, mc, r.tid);
	uint32_t track = m_thread_track(m, c, utid);
	uint32_t cat = m_intern(&m->str, "strace", 6), name = m_intern(&m->str, syscall, strlen(syscall));
	tm_buf *a = &m->scratch;
	args_text(a, &so);
	switch (r.kind) {
	case STRACE_COMPLETE:
		m_slice_scoped_raw(m, c, track, ts, cat, name, 0, a->data, a->len, NULL, h->file_id);
		break;
	case STRACE_UNFINISHED:
		m_slice_begin_raw(m, c, track, ts, cat, name, a->data, a->len, h->file_id);
		break;
	case STRACE_RESUMED:
		m_slice_end_raw(m, c, track, ts, cat, name, a->data, a->len);
		break;
	default: /* STRACE_RESUMED_THEN_UNFINISHED */
		m_slice_end_raw(m, c, track, ts, cat, name, a->data, a->len);
		args_text(a, &so); /* the scratch buffer may have served the end */
		m_slice_begin_raw(m, c, track, ts, cat, name, a->data, a->len, h->file_id);
		break;
	}
	if (!m->sink.observed)
		return;
	tm_mobserved ob = {.model = m, .head = h, .ts = ts, .event = &so, .track = track, .made = m->made,
			   .n_made = m->n_made};
	m->sink.observed(m->sink.ctx, &ob);
}

/* The lines the tokenizer counted: strace_parse_failure,
 * strace_unsupported_timestamp_format, strace_missing_pid. */
static void side(tm_model *m, const tm_mrec_head *h, const char *body, size_t n)
{
	int64_t k[3];
	if (h->sub != 1 || n != sizeof k)
		return;
	memcpy(k, body, sizeof k);
	static const char *const names[3] = {"strace_parse_failure", "strace_unsupported_timestamp_format",
					     "strace_missing_pid"};
	for (int i = 0; i < 3; i++)
		if (k[i])
			m_stat(m, names[i], k[i]);
}

const tm_parser tm_strace_parser = {.apply = apply, .side = side};
