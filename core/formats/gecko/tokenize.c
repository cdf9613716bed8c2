/* core/formats/gecko/tokenize.c - a Gecko profile into the scan: the
 * profile read as the reference reads it (gecko.c), its frames and
 * callsites interned per file as its tokenizer interns them and handed to
 * the model in side records, each sample placed on the file's own clock
 * with its record for the model. */
#include "formats/gecko/gecko_format.h"

#include <stdlib.h>
#include <string.h>

#include "formats/gecko/gecko.h"
#include "util/hash.h"
#include "util/json.h"


/* ---- the file's frames and callsites, interned as the reference's tokenizer does -- */

typedef struct gk_tok {
	scan_file *sf;
	tm_clock_tracker *t;
	uint32_t queue;
	tm_u64map frames_by_hash; /* hash(mapping, name) -> frame + 1 (probing on) */
	tm_buf arena;          /* each frame's mapping (or nothing) and name */
	struct gk_frame_at {
		size_t at;
		uint32_t map_n, name_n; /* map_n UINT32_MAX: the "gecko" mapping */
	} *fr;
	size_t n_fr, cap_fr;
	tm_u64map callsites;   /* (parent + 1) << 32 | frame -> id + 1 */
	uint32_t n_callsites;
	tm_buf rec;
	tm_buf args;           /* a marker's args */
} gk_tok;

/* InternFrame: " (in LIB)" names LIB's mapping (up to the next ')', or
 * the end), the name before it the frame's; else the "gecko" mapping. */
static uint32_t intern_frame(gk_tok *st, const char *name, size_t n)
{
	static const char in[] = " (in ";
	const char *hit = NULL;
	for (size_t i = 0; i + 5 <= n; i++)
		if (memcmp(name + i, in, 5) == 0) {
			hit = name + i;
			break;
		}
	const char *map = NULL, *fn = name;
	size_t map_n = UINT32_MAX, fn_n = n;
	if (hit) {
		map = hit + 5;
		const char *close = memchr(map, ')', (size_t)(name + n - map));
		map_n = (size_t)((close ? close : name + n) - map);
		fn_n = (size_t)(hit - name);
	}
	uint32_t mn = (uint32_t)map_n;
	uint64_t h = tm_khash_pair(tm_khash_pair(mn, map ? tm_khash_bytes(map, map_n) : 0), tm_khash_bytes(fn, fn_n));
	for (;; h = tm_khash_next(h)) {
		const uint32_t *v = tm_u64map_get(&st->frames_by_hash, h);
		if (!v)
			break;
		const struct gk_frame_at *a = &st->fr[*v - 1];
		const char *s = st->arena.data + a->at;
		size_t mlen = a->map_n == UINT32_MAX ? 0 : a->map_n;
		if (a->map_n == mn && a->name_n == fn_n && (!map || memcmp(s, map, mlen) == 0) &&
		    memcmp(s + mlen, fn, fn_n) == 0)
			return *v - 1;
	}
	uint32_t id = (uint32_t)st->n_fr;
	TM_GROW(st->fr, st->cap_fr, st->n_fr + 1);
	st->fr[st->n_fr++] = (struct gk_frame_at){st->arena.len, mn, (uint32_t)fn_n};
	if (map)
		tm_buf_put(&st->arena, map, map_n);
	tm_buf_put(&st->arena, fn, fn_n);
	tm_u64map_put(&st->frames_by_hash, h, id);
	tm_mrec_head hd = {TM_MREC_GECKO, GECKO_FRAME_DEF, 0, st->sf->f->id, st->sf->base_row};
	tm_buf *b = &st->rec;
	b->len = 0;
	tm_mrec_head_put(b, &hd);
	tm_buf_put(b, &id, sizeof id);
	tm_mrec_put_str(b, fn, fn_n);
	if (map) {
		tm_mrec_put_str(b, map, map_n);
	} else {
		uint32_t none = UINT32_MAX;
		tm_buf_put(b, &none, sizeof none);
	}
	scan_record_side(st->sf, b->data, b->len);
	return id;
}

/* InternCallsite(parent, frame, depth): UINT32_MAX parent for a root.
 * The depth is the parent's plus one, 0 for a root, so (parent, frame) is
 * the key. */
static uint32_t intern_callsite(gk_tok *st, uint32_t parent, uint32_t frame, uint32_t depth)
{
	uint64_t key = (uint64_t)(parent == UINT32_MAX ? 0 : (uint64_t)parent + 1) << 32 | frame;
	const uint32_t *v = tm_u64map_get(&st->callsites, key);
	if (v)
		return *v - 1;
	uint32_t id = st->n_callsites++;
	tm_u64map_put(&st->callsites, key, id);
	tm_mrec_head hd = {TM_MREC_GECKO, GECKO_CALLSITE_DEF, 0, st->sf->f->id, st->sf->base_row};
	tm_gecko_callsite c = {id, parent, frame, depth};
	tm_buf *b = &st->rec;
	b->len = 0;
	tm_mrec_head_put(b, &hd);
	tm_buf_put(b, &c, sizeof c);
	scan_record_side(st->sf, b->data, b->len);
	return id;
}

static uint32_t on_frame(void *ctx, const char *name, size_t n)
{
	return intern_frame(ctx, name, n);
}

static uint32_t on_callsite(void *ctx, uint32_t parent, uint32_t frame, uint32_t depth)
{
	return intern_callsite(ctx, parent, frame, depth);
}

/* A sample or marker whose time did not place: one before the clock's
 * start was pushed by the reference, its thread's metadata with it when
 * it was the thread's first, and both dropped by its sorter: the thread
 * is then made later without its process and name (1: taken). One whose
 * time did not convert was not pushed (0). */
static int negative_first(scan_file *sf, const gecko_thread *t, int tr)
{
	if (tr == SCAN_TIME_LOST)
		return 0;
	if (t->first)
		scan_count(sf, TM_STAT_NEGATIVE_TS, 1);
	return 1;
}

static int on_sample(void *ctx, const gecko_thread *t, int64_t raw, uint32_t callsite)
{
	gk_tok *st = ctx;
	scan_file *sf = st->sf;
	int64_t ts;
	int tr = scan_convert_time(sf, st->t, TM_CLOCK_THIS_FILE, raw, &ts);
	if (tr != SCAN_TIME_OK)
		return negative_first(sf, t, tr);
	if (scan_wants_records(sf)) {
		tm_mrec_head h = {TM_MREC_GECKO, GECKO_SAMPLE, 0, sf->f->id, sf->base_row};
		tm_gecko_rec r = {t->tid, t->pid, (uint8_t)t->first, callsite};
		tm_buf *b = &st->rec;
		b->len = 0;
		tm_mrec_head_put(b, &h);
		tm_buf_put(b, &r, sizeof r);
		if (t->first)
			tm_mrec_put_str(b, t->name, t->name_n);
		scan_record(sf, st->queue, ts, 0, -1, b->data, b->len);
	}
	scan_place_sample(sf, ts, raw, t->pid, t->tid, -1, "", 0);
	return 1;
}

static int on_marker(void *ctx, const gecko_thread *t, const gecko_marker *mk)
{
	gk_tok *st = ctx;
	scan_file *sf = st->sf;
	int64_t ts;
	int tr = scan_convert_time(sf, st->t, TM_CLOCK_THIS_FILE, mk->raw_ts, &ts);
	if (tr != SCAN_TIME_OK)
		return negative_first(sf, t, tr);
	if (scan_wants_records(sf)) {
		tm_mrec_head h = {TM_MREC_GECKO, GECKO_MARKER, 0, sf->f->id, sf->base_row};
		tm_gecko_marker_rec r = {t->tid, t->pid, mk->dur, (uint8_t)mk->phase, (uint8_t)t->first};
		tm_buf *b = &st->rec;
		b->len = 0;
		tm_mrec_head_put(b, &h);
		tm_buf_put(b, &r, sizeof r);
		tm_mrec_put_str(b, mk->name, mk->name_n);
		tm_mrec_put_str(b, mk->cat, mk->cat ? mk->cat_n : UINT32_MAX);
		if (t->first)
			tm_mrec_put_str(b, t->name, t->name_n);
		if (mk->data) {
			tm_buf *a = &st->args;
			a->len = 0;
			tm_buf_puts(a, GECKO_DATA_ARG);
			tj_write(a, mk->data);
			tm_mrec_put_str(b, a->data, a->len);
		} else {
			tm_mrec_put_str(b, NULL, UINT32_MAX);
		}
		scan_record(sf, st->queue, ts, 0, -1, b->data, b->len);
	}
	/* placed as an event of the file: an interval to its end */
	int64_t dur = mk->phase == 1 ? mk->dur : -1;
	if (!scan_wants_events(sf)) {
		scan_place_times(sf, sf->base_row, ts, dur, mk->raw_ts, TM_STAT_NEGATIVE_TS);
		return 1;
	}
	tm_event ev = {0};
	ev.machine_row = sf->base_row;
	ev.kind = mk->phase == 1 ? TM_EV_SLICE : mk->phase == 2 ? TM_EV_BEGIN : mk->phase == 3 ? TM_EV_END : TM_EV_INSTANT;
	ev.ts = ts;
	ev.raw_ts = mk->raw_ts;
	ev.dur = dur;
	ev.pid = t->pid;
	ev.tid = t->tid;
	ev.name = mk->name;
	ev.name_len = mk->name_n;
	ev.cpu = -1;
	scan_place(sf, &ev, TM_STAT_NEGATIVE_TS);
	return 1;
}

static int read_file(scan_file *sf, tm_clock_tracker *t, tm_cursor *c, tm_buf *log, size_t from, tm_error *err)
{
	(void)log;
	(void)from;
	tm_buf doc = {0};
	int rc = scan_read_whole(c, &doc, err);
	if (rc == 0) {
		gk_tok st = {.sf = sf, .t = t, .queue = scan_new_queue(sf)};
		gecko_sink sink = {&st, on_frame, on_callsite, on_sample, on_marker};
		rc = gecko_read(doc.data, doc.len, &sink, err);
		tm_u64map_free(&st.frames_by_hash);
		tm_u64map_free(&st.callsites);
		tm_buf_free(&st.arena);
		free(st.fr);
		tm_buf_free(&st.rec);
		tm_buf_free(&st.args);
	}
	tm_buf_free(&doc);
	return rc;
}

const tm_tokenizer tm_gecko_tokenizer = {.clock = TM_CLOCK_THIS_FILE, .read = read_file};
