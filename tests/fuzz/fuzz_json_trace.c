/* tests/fuzz/fuzz_json_trace.c - the Chrome JSON reader on arbitrary
 * bytes, read whole and in small chunks, and read into a log and replayed
 * (core/util/ahead.h), whole or times only (the results must agree); the
 * callback reads every field so ASan sees any dangling pointer. Each
 * model record the reader makes (core/formats/json/json_rec.h, mostly from
 * tj_read_shallow's members) must be the bytes json_rec_from_object makes
 * from the event's whole tree. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/ahead.h"
#include "formats/json/json_rec.h"
#include "formats/json/json_trace.h"

typedef struct digest {
	uint64_t n, h;
	int rec; /* comparing with a read ahead: the model's records too, args
		  * only where a read ahead gives them */
	int times; /* comparing with a times-only log: what it keeps alone */
} digest;

#define REC_FLAGS (JSON_TRACE_REC | JSON_TRACE_REC_ANNOT | JSON_TRACE_REC_TEXT)

/* An event's record is the one its tree gives. */
static void check_rec(const json_event *ev)
{
	if (ev->kind != JSON_EV_TRACE || !ev->raw)
		return; /* a replayed log has no raw bytes */
	if (!ev->rec) {
		if (ev->phase != 'P')
			abort(); /* only V8 samples go without one */
		return;
	}
	tj_value *obj = NULL;
	tm_error err;
	if (tj_parse(ev->raw, ev->raw_len, &obj, &err) != 0 || obj->type != TJ_OBJECT)
		abort(); /* a delivered event is an object */
	tm_buf want = {0};
	if (json_rec_from_object(&want, obj, JSON_REC_ANNOT | JSON_REC_TEXT) != 0 || want.len != ev->rec_len ||
	    memcmp(want.data, ev->rec, want.len) != 0)
		abort();
	json_rec_view v;
	if (json_rec_decode(ev->rec, ev->rec_len, &v) != 0 || v.phase != ev->phase)
		abort();
	tm_buf_free(&want);
	tj_free(obj);
}

static void mix(digest *d, uint64_t v) { d->h = (d->h ^ v) * 1099511628211ULL; }

static void mix_str(digest *d, const char *s)
{
	for (; s && *s; s++)
		mix(d, (unsigned char)*s);
	mix(d, 0);
}

static void mix_value(digest *d, const tj_value *v, int depth)
{
	if (!v || depth > 8)
		return;
	mix(d, v->type);
	switch (v->type) {
	case TJ_STRING:
		mix_str(d, v->s);
		break;
	case TJ_INT:
		mix(d, (uint64_t)v->i);
		break;
	case TJ_ARRAY:
	case TJ_OBJECT:
		for (size_t i = 0; i < v->len; i++)
			mix_value(d, &v->items[i], depth + 1);
		break;
	default:
		break;
	}
}

/* What a JSON_TRACE_TIMES log keeps of an event (json_trace.h). */
static void mix_times(digest *d, const json_event *ev)
{
	mix(d, ev->kind);
	mix(d, (uint64_t)ev->has_ts);
	if (ev->systrace) {
		mix(d, (uint64_t)ev->systrace->ts);
		mix(d, (uint64_t)ev->systrace->bad_print);
		return;
	}
	mix(d, (uint64_t)ev->phase);
	mix(d, (uint64_t)ev->ts);
	mix(d, (uint64_t)ev->dur);
	uint64_t numbers = 0;
	if (ev->phase == 'C' && ev->args && ev->args->type == TJ_OBJECT)
		for (size_t i = 0; i < ev->args->len; i++)
			numbers += tj_is_number(&ev->args->items[i]);
	mix(d, numbers);
}

static int on_event(void *ctx, const json_event *ev, tm_error *err)
{
	(void)err;
	digest *d = ctx;
	d->n++;
	if (d->times) {
		mix_times(d, ev);
		return 0;
	}
	mix(d, ev->kind);
	mix(d, (uint64_t)ev->phase);
	mix(d, (uint64_t)ev->ts);
	mix(d, (uint64_t)ev->dur);
	mix(d, (uint64_t)ev->tts);
	mix(d, (uint64_t)ev->tdur);
	mix(d, (uint64_t)ev->pid);
	mix(d, (uint64_t)ev->tid);
	mix(d, (uint64_t)(ev->has_ts + 2 * ev->has_pid + 4 * ev->has_tid + 8 * ev->pid_is_string +
			  16 * ev->tid_is_string));
	mix_str(d, ev->pid_name);
	mix_str(d, ev->tid_name);
	mix_str(d, ev->name);
	mix_str(d, ev->category);
	uint64_t bits;
	memcpy(&bits, &ev->counter_value, sizeof bits);
	mix(d, bits);
	mix_str(d, ev->args_summary);
	/* object: the whole tree only where it was built; id: a container's
	 * items only there too */
	if (ev->id) {
		mix(d, ev->id->type);
		if (ev->id->type == TJ_STRING)
			mix_str(d, ev->id->s);
		else if (ev->id->type == TJ_INT)
			mix(d, (uint64_t)ev->id->i);
	}
	/* a read ahead gives args to C and M events only (json_trace.h) */
	if (!d->rec || ev->phase == 'C' || ev->phase == 'M')
		mix_value(d, ev->args, 0);
	if (ev->systrace) {
		mix_str(d, ev->systrace->task);
		mix_str(d, ev->systrace->event_name);
		mix_str(d, ev->systrace->args);
		mix_str(d, ev->systrace->print_name);
		mix_str(d, ev->systrace->print_track);
	}
	mix_str(d, ev->metadata_key);
	mix_value(d, ev->metadata_value, 0);
	if (d->rec) {
		check_rec(ev);
		mix(d, ev->rec_len);
		for (size_t i = 0; i < ev->rec_len; i++)
			mix(d, (unsigned char)ev->rec[i]);
	}
	return 0;
}

/* Read as the scan reads in place, or logged and replayed. */
static int run_scan(const uint8_t *data, size_t size, unsigned flags, int logged, digest *d,
		    json_trace_stats *st, tm_error *err)
{
	tm_blob *b = tm_blob_open_memory(data, size);
	tm_cursor *c = tm_cursor_open(b, err);
	int rc = -1;
	if (c && !logged) {
		rc = json_trace_read_opt(c, flags, on_event, d, st, err);
	} else if (c) {
		tm_buf log = {0};
		json_trace_log(c, flags, &log);
		rc = json_trace_replay(&log, TM_LOG_FIRST, on_event, d, st, err);
		tm_buf_free(&log);
	}
	tm_cursor_close(c);
	tm_blob_unref(b);
	return rc;
}

static int run(const uint8_t *data, size_t size, size_t chunk, digest *d, json_trace_stats *st,
	       tm_error *err)
{
	tm_blob *b = tm_blob_open_memory(data, size);
	tm_cursor *c = tm_cursor_open(b, err);
	int rc = c ? json_trace_read_chunked(c, chunk, on_event, d, st, err) : -1;
	tm_cursor_close(c);
	tm_blob_unref(b);
	return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	digest a = {0, 0, 0, 0}, b = {0, 0, 0, 0};
	json_trace_stats sa = {0}, sb = {0};
	tm_error ea, eb;
	tm_err_clear(&ea);
	tm_err_clear(&eb);
	int ra = run(data, size, JSON_TRACE_CHUNK, &a, &sa, &ea);
	int rb = run(data, size, 5, &b, &sb, &eb);
	if (ra != rb || a.n != b.n || a.h != b.h || memcmp(&sa, &sb, sizeof sa) != 0 ||
	    strcmp(ea.msg, eb.msg) != 0)
		abort(); /* the chunk size must not change the result */
	static const unsigned scan_flags[] = {REC_FLAGS, REC_FLAGS | JSON_TRACE_SUMMARIES, JSON_TRACE_TIMES};
	for (size_t k = 0; k < sizeof scan_flags / sizeof scan_flags[0]; k++) {
		unsigned flags = scan_flags[k];
		int times = (flags & JSON_TRACE_TIMES) != 0;
		digest c = {0, 0, !times, times}, l = {0, 0, !times, times};
		json_trace_stats sc = {0}, sl = {0};
		tm_error ec, el;
		tm_err_clear(&ec);
		tm_err_clear(&el);
		/* in place: times only, of a whole read */
		int rc = run_scan(data, size, flags & ~(unsigned)JSON_TRACE_TIMES, 0, &c, &sc, &ec);
		int rl = run_scan(data, size, flags, 1, &l, &sl, &el);
		if (rc != rl || c.n != l.n || c.h != l.h || memcmp(&sc, &sl, sizeof sc) != 0 ||
		    strcmp(ec.msg, el.msg) != 0)
			abort(); /* a file read ahead must give what it gives in place */
		if (times) {
			digest t = {0, 0, 0, 1};
			json_trace_stats st = {0};
			tm_error et;
			tm_err_clear(&et);
			int rt = run_scan(data, size, flags, 0, &t, &st, &et);
			if (rt != rc || t.n != c.n || t.h != c.h || memcmp(&st, &sc, sizeof st) != 0 ||
			    strcmp(et.msg, ec.msg) != 0)
				abort(); /* nor a times-only read what a whole one gives of them */
		}
	}
	return 0;
}
