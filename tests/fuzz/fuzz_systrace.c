/* tests/fuzz/fuzz_systrace.c - the systrace reader on arbitrary bytes,
 * read whole and in small chunks, and read into a log and replayed
 * (core/util/ahead.h), whole or times only (the results must agree); the
 * callback reads every field so ASan sees any dangling string. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/ahead.h"
#include "formats/systrace/systrace.h"

typedef struct digest {
	uint64_t n, h;
} digest;

static void mix(digest *d, uint64_t v) { d->h = (d->h ^ v) * 1099511628211ULL; }

static void mix_str(digest *d, const char *s)
{
	for (; *s; s++)
		mix(d, (unsigned char)*s);
	mix(d, 0);
}

static int on_event(void *ctx, const systrace_event *ev, tm_error *err)
{
	(void)err;
	digest *d = ctx;
	char v[64];
	d->n++;
	mix(d, (uint64_t)ev->ts);
	mix(d, (uint64_t)ev->pid);
	mix(d, (uint64_t)ev->tgid);
	mix(d, ev->cpu);
	mix_str(d, ev->task);
	mix_str(d, ev->event_name);
	mix_str(d, ev->args);
	mix_str(d, ev->args_summary);
	mix(d, (uint64_t)ev->print_phase);
	mix(d, ev->print_tgid);
	mix_str(d, ev->print_name);
	mix_str(d, ev->print_track);
	mix(d, (uint64_t)ev->print_value);
	mix(d, (uint64_t)(ev->json_embedded + 2 * ev->bad_print + 4 * ev->print_has_tgid));
	if (systrace_arg(ev->args, "pid", v, sizeof v))
		mix_str(d, v);
	return 0;
}

/* What a times-only log keeps: the time and bad_print of each line. */
static int on_time(void *ctx, const systrace_event *ev, tm_error *err)
{
	(void)err;
	digest *d = ctx;
	d->n++;
	mix(d, (uint64_t)ev->ts);
	mix(d, (uint64_t)ev->bad_print);
	return 0;
}

static int run(const uint8_t *data, size_t size, size_t chunk, systrace_event_fn fn, digest *d,
	       systrace_stats *st)
{
	tm_error err;
	tm_blob *b = tm_blob_open_memory(data, size);
	tm_cursor *c = tm_cursor_open(b, &err);
	int rc = c ? systrace_read_chunked(c, chunk, fn, d, st, &err) : -1;
	tm_cursor_close(c);
	tm_blob_unref(b);
	return rc;
}

static int run_logged(const uint8_t *data, size_t size, int times_only, systrace_event_fn fn, digest *d,
		      systrace_stats *st)
{
	tm_error err;
	tm_blob *b = tm_blob_open_memory(data, size);
	tm_cursor *c = tm_cursor_open(b, &err);
	int rc = -1;
	if (c) {
		tm_buf log = {0};
		systrace_log(c, times_only, &log);
		rc = systrace_replay(&log, TM_LOG_FIRST, fn, d, st, &err);
		tm_buf_free(&log);
	}
	tm_cursor_close(c);
	tm_blob_unref(b);
	return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	digest a = {0, 0}, b = {0, 0};
	systrace_stats sa = {0}, sb = {0};
	int ra = run(data, size, SYSTRACE_CHUNK, on_event, &a, &sa);
	int rb = run(data, size, 7, on_event, &b, &sb);
	if (ra != rb || a.n != b.n || a.h != b.h || sa.systrace_parse_failure != sb.systrace_parse_failure)
		abort(); /* the chunk size must not change the result */
	digest l = {0, 0};
	systrace_stats sl = {0};
	int rl = run_logged(data, size, 0, on_event, &l, &sl);
	if (ra != rl || a.n != l.n || a.h != l.h || sa.systrace_parse_failure != sl.systrace_parse_failure)
		abort(); /* a file read ahead must give what it gives in place */
	digest t = {0, 0}, tl = {0, 0};
	systrace_stats st = {0}, stl = {0};
	int rt = run(data, size, SYSTRACE_CHUNK, on_time, &t, &st);
	int rtl = run_logged(data, size, 1, on_time, &tl, &stl);
	if (rt != rtl || t.n != tl.n || t.h != tl.h || st.systrace_parse_failure != stl.systrace_parse_failure)
		abort(); /* nor a times-only log what a read gives of the times */
	return 0;
}
