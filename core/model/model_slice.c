/* core/model/model_slice.c - tracks, slices, async track sets, flows and
 * counters, by the reference's rules (v58.2: TrackTracker, SliceTracker,
 * TrackCompressor, FlowTracker), per (file, machine). */
#include "model/model_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sort/spool.h"
#include "util/hash.h"
#include "util/ser.h"

#define MAX_DEPTH 512 /* SliceTracker::kMaxDepth */

/* ---- contexts and tracks -------------------------------------------------- */

m_ctx *m_context(tm_model *m, uint32_t file_id, uint32_t row)
{
	uint64_t key = ((uint64_t)file_id << 32) | row;
	int ins;
	uint64_t *v = m_map_put(&m->ctx_index, key, &ins);
	if (!ins)
		return &m->ctxs[*v - 1];
	TM_GROW(m->ctxs, m->cap_ctxs, m->n_ctxs + 1);
	m_ctx *c = &m->ctxs[m->n_ctxs];
	memset(c, 0, sizeof(*c));
	c->file_id = file_id;
	c->row = row;
	*v = ++m->n_ctxs;
	m_machine(m, row);
	return c;
}

uint32_t m_new_track(tm_model *m, m_ctx *c, tm_mtrack_kind kind, tm_mtrack_scope scope, int64_t utid,
		     int64_t upid, uint32_t name)
{
	TM_GROW(m->tracks, m->cap_tracks, m->n_tracks + 1);
	m_track *t = &m->tracks[m->n_tracks];
	memset(t, 0, sizeof(*t));
	t->pub.id = (uint32_t)m->n_tracks;
	t->pub.kind = kind;
	t->pub.scope = scope;
	t->pub.machine_row = c->row;
	t->pub.utid = utid;
	t->pub.upid = upid;
	t->pub.cpu = -1;
	t->pub.file_id = c->file_id;
	t->name_id = name;
	t->pub.name = m_str(&m->str, name);
	return (uint32_t)m->n_tracks++;
}

uint32_t m_thread_track(tm_model *m, m_ctx *c, int64_t utid)
{
	int ins;
	uint64_t *v = m_map_put(&c->thread_tracks, (uint64_t)utid, &ins);
	if (ins)
		*v = (uint64_t)m_new_track(m, c, TM_MT_THREAD, TM_SCOPE_THREAD, utid, -1, 0) + 1;
	return (uint32_t)(*v - 1);
}

uint32_t m_named_track(tm_model *m, m_ctx *c, tm_mtrack_kind kind, tm_mtrack_scope scope, int64_t utid,
		       int64_t upid, int64_t cpu, uint32_t name)
{
	uint64_t key = m_hash2(m_hash2((uint64_t)kind, (uint64_t)utid), m_hash2((uint64_t)upid, m_hash2((uint64_t)cpu, name)));
	int ins;
	uint64_t *v = m_map_put(&c->named_tracks, key, &ins);
	if (ins) {
		uint32_t id = m_new_track(m, c, kind, scope, utid, upid, name);
		m->tracks[id].pub.cpu = cpu;
		*v = (uint64_t)id + 1;
	}
	return (uint32_t)(*v - 1);
}

/* ---- TrackCompressor ---------------------------------------------------------- */

/* Each of TrackCompressor's choices is the first track of a set, in the
 * order they were made, that fits: the one of a cookie, else the first
 * whose nesting is done; the first whose last slice ended; the first on
 * which a slice nests. A set of a few tracks is walked, as the reference
 * walks its vector. A set that grows to M_CSET_INDEXED tracks gets an
 * index that finds the same track: a walk took time with the square of
 * the tracks (80,000 async ids open at once in one JSON name, 5.6 MB:
 * 3.8 s; 80,000 X events on one thread, each overlapping the last and
 * ending after it, 4.9 MB: 3.9 s). */
#define M_CSET_INDEXED 16

/* A tree over a kind of track of a set, by the order they were made:
 * each leaf a (lo, hi) of its track, each node the least lo and the
 * greatest hi under it, so the first leaf with lo <= a or hi >= b is
 * found from the root down. */
typedef struct m_seg {
	int64_t *lo, *hi;  /* nodes 1.., leaves from cap */
	uint32_t *at;      /* leaf -> the track's index in the set */
	size_t n, cap;     /* leaves used; cap a power of two */
} m_seg;

struct m_cset_ix {
	m_map cookie;      /* type 0: cookie -> index + 1 */
	uint32_t *free;    /* type 0: a min-heap of the tracks that may have
			    * nest_count 0 (each such track is in it; an
			    * entry whose track nests again is dropped when
			    * met) */
	size_t n_free, cap_free;
	m_seg scoped;      /* type 1: lo = ts_end */
	m_seg nested;      /* type 2: lo = hi = its stack's top (INT64_MAX empty) */
};

static void seg_pull(m_seg *g, size_t node)
{
	size_t l = 2 * node, r = l + 1;
	g->lo[node] = g->lo[l] < g->lo[r] ? g->lo[l] : g->lo[r];
	g->hi[node] = g->hi[l] > g->hi[r] ? g->hi[l] : g->hi[r];
}

/* Leaf k's values (k at most n: n adds one). */
static void seg_set(m_seg *g, size_t k, int64_t lo, int64_t hi)
{
	if (k >= g->cap) {
		size_t cap = g->cap ? g->cap * 2 : M_CSET_INDEXED;
		int64_t *nlo = tm_xmalloc(2 * cap * sizeof *nlo), *nhi = tm_xmalloc(2 * cap * sizeof *nhi);
		for (size_t i = 0; i < cap; i++) {
			nlo[cap + i] = i < g->cap ? g->lo[g->cap + i] : INT64_MAX;
			nhi[cap + i] = i < g->cap ? g->hi[g->cap + i] : INT64_MIN;
		}
		free(g->lo);
		free(g->hi);
		g->lo = nlo;
		g->hi = nhi;
		g->at = tm_xrealloc(g->at, cap * sizeof *g->at);
		g->cap = cap;
		for (size_t i = cap; i-- > 1;)
			seg_pull(g, i);
	}
	if (k == g->n)
		g->n++;
	size_t node = g->cap + k;
	g->lo[node] = lo;
	g->hi[node] = hi;
	for (node /= 2; node; node /= 2)
		seg_pull(g, node);
}

/* The first leaf with lo <= a or hi >= b, or SIZE_MAX. */
static size_t seg_first(const m_seg *g, int64_t a, int64_t b)
{
	if (!g->n || !(g->lo[1] <= a || g->hi[1] >= b))
		return SIZE_MAX;
	size_t node = 1;
	while (node < g->cap)
		node = g->lo[2 * node] <= a || g->hi[2 * node] >= b ? 2 * node : 2 * node + 1;
	size_t k = node - g->cap;
	return k < g->n ? k : SIZE_MAX; /* the unused leaves come last */
}

static void free_push(m_cset_ix *x, uint32_t i)
{
	TM_GROW(x->free, x->cap_free, x->n_free + 1);
	size_t at = x->n_free++;
	for (; at && x->free[(at - 1) / 2] > i; at = (at - 1) / 2)
		x->free[at] = x->free[(at - 1) / 2];
	x->free[at] = i;
}

static void free_pop(m_cset_ix *x)
{
	uint32_t last = x->free[--x->n_free];
	size_t at = 0;
	for (;;) {
		size_t c = 2 * at + 1;
		if (c >= x->n_free)
			break;
		if (c + 1 < x->n_free && x->free[c + 1] < x->free[c])
			c++;
		if (x->free[c] >= last)
			break;
		x->free[at] = x->free[c];
		at = c;
	}
	if (x->n_free)
		x->free[at] = last;
}

/* The top of a type 2 track's stack as its leaf holds it. */
static int64_t stack_top(const m_cstate *st)
{
	return st->n_open ? st->open_ends[st->n_open - 1] : INT64_MAX;
}

/* Track i of s (made, or changed) into the index. */
static void ix_note(m_cset *s, uint32_t i)
{
	m_cset_ix *x = s->ix;
	if (!x)
		return;
	m_cstate *st = &s->tracks[i];
	if (st->type == 0) {
		if (st->nest_count == 0)
			free_push(x, i);
		return;
	}
	m_seg *g = st->type == 1 ? &x->scoped : &x->nested;
	int64_t lo = st->type == 1 ? st->ts_end : stack_top(st), hi = st->type == 1 ? INT64_MIN : lo;
	if (st->leaf == UINT32_MAX) {
		st->leaf = (uint32_t)g->n;
		seg_set(g, g->n, lo, hi);
		g->at[st->leaf] = i;
	} else {
		seg_set(g, st->leaf, lo, hi);
	}
}

/* The index of s, made from its tracks when it reaches M_CSET_INDEXED. */
static void ix_make(m_cset *s)
{
	m_cset_ix *x = tm_xcalloc(1, sizeof *x);
	s->ix = x;
	for (uint32_t i = 0; i < s->n; i++) {
		if (s->tracks[i].type == 0)
			*m_map_put(&x->cookie, (uint64_t)s->tracks[i].cookie, NULL) = (uint64_t)i + 1;
		ix_note(s, i);
	}
}

void m_cset_ix_free(m_cset_ix *x)
{
	if (!x)
		return;
	m_map_free(&x->cookie);
	free(x->free);
	free(x->scoped.lo);
	free(x->scoped.hi);
	free(x->scoped.at);
	free(x->nested.lo);
	free(x->nested.hi);
	free(x->nested.at);
	free(x);
}

/* The set of key, found through cset_ix (a walk over the sets took
 * 1.1 s for 80,000 async slices of distinct names, and grew with their
 * square). */
static m_cset *cset(m_ctx *c, uint64_t key)
{
	int ins;
	uint64_t *v = m_map_put(&c->cset_ix, key, &ins);
	if (!ins)
		return &c->csets[*v - 1];
	TM_GROW(c->csets, c->cap_csets, c->n_csets + 1);
	m_cset *s = &c->csets[c->n_csets++];
	memset(s, 0, sizeof(*s));
	s->key = key;
	*v = c->n_csets;
	return s;
}

/* A new track of type in s; the caller sets its fields, then tells the
 * index (ix_note). */
static m_cstate *cstate_new(m_cset *s, int type)
{
	TM_GROW(s->tracks, s->cap, s->n + 1);
	m_cstate *st = &s->tracks[s->n++];
	memset(st, 0, sizeof(*st));
	st->type = type;
	st->track = UINT32_MAX;
	st->leaf = UINT32_MAX;
	return st;
}

/* After a new track's fields are set: the index told, or made when
 * the set has grown to M_CSET_INDEXED. */
static void cstate_made(m_cset *s)
{
	if (s->ix)
		ix_note(s, (uint32_t)(s->n - 1));
	else if (s->n == M_CSET_INDEXED)
		ix_make(s);
}

/* GetOrCreateTrackForCookie */
static m_cstate *for_cookie(m_cset *s, int64_t cookie)
{
	m_cset_ix *x = s->ix;
	if (x) {
		uint64_t *v = m_map_get(&x->cookie, (uint64_t)cookie);
		if (v)
			return &s->tracks[*v - 1];
		while (x->n_free) {
			m_cstate *st = &s->tracks[x->free[0]];
			if (st->nest_count == 0) {
				m_map_del(&x->cookie, (uint64_t)st->cookie);
				st->cookie = cookie;
				*m_map_put(&x->cookie, (uint64_t)cookie, NULL) = (uint64_t)x->free[0] + 1;
				return st;
			}
			free_pop(x);
		}
	} else {
		for (size_t i = 0; i < s->n; i++)
			if (s->tracks[i].type == 0 && s->tracks[i].cookie == cookie)
				return &s->tracks[i];
		for (size_t i = 0; i < s->n; i++)
			if (s->tracks[i].type == 0 && s->tracks[i].nest_count == 0) {
				s->tracks[i].cookie = cookie;
				return &s->tracks[i];
			}
	}
	m_cstate *st = cstate_new(s, 0);
	st->cookie = cookie;
	if (s->ix)
		*m_map_put(&s->ix->cookie, (uint64_t)cookie, NULL) = (uint64_t)s->n;
	cstate_made(s);
	return &s->tracks[s->n - 1];
}

/* A cookie track's nesting changed: one back at 0 may be taken again. */
static void nest_changed(m_cset *s, const m_cstate *st)
{
	if (s->ix && st->nest_count == 0)
		free_push(s->ix, (uint32_t)(st - s->tracks));
}

static uint32_t cstate_track(tm_model *m, m_ctx *c, m_cstate *st, tm_mtrack_kind kind, tm_mtrack_scope scope,
			     int64_t utid, int64_t upid, uint32_t name)
{
	if (st->track == UINT32_MAX)
		st->track = m_new_track(m, c, kind, scope, utid, upid, name);
	return st->track;
}

uint32_t m_compress_cookie(tm_model *m, m_ctx *c, uint64_t set_key, int op, int64_t cookie, tm_mtrack_kind kind,
			   tm_mtrack_scope scope, int64_t utid, int64_t upid, uint32_t name)
{
	m_cset *s = cset(c, set_key);
	m_cstate *st;
	if (op == M_COMPRESS_DEFAULT) {
		/* DefaultTrack: the set's first track, made for cookie 0 */
		st = s->n ? &s->tracks[0] : for_cookie(s, 0);
	} else {
		st = for_cookie(s, cookie);
		if (op == M_COMPRESS_BEGIN)
			st->nest_count++;
		else if (st->nest_count > 0)
			st->nest_count--;
		nest_changed(s, st);
	}
	return cstate_track(m, c, st, kind, scope, utid, upid, name);
}

uint32_t m_compress_begin(tm_model *m, m_ctx *c, uint64_t set_key, int64_t cookie, int nestable,
			  tm_mtrack_kind kind, tm_mtrack_scope scope, int64_t upid, uint32_t name)
{
	m_cset *s = cset(c, set_key);
	m_cstate *st = for_cookie(s, cookie);
	if (nestable)
		st->nest_count++;
	else
		st->nest_count = 1;
	nest_changed(s, st);
	return cstate_track(m, c, st, kind, scope, -1, upid, name);
}

uint32_t m_compress_end(tm_model *m, m_ctx *c, uint64_t set_key, int64_t cookie, tm_mtrack_kind kind,
			tm_mtrack_scope scope, int64_t upid, uint32_t name)
{
	m_cset *s = cset(c, set_key);
	m_cstate *st = for_cookie(s, cookie);
	if (st->nest_count > 0)
		st->nest_count--;
	nest_changed(s, st);
	return cstate_track(m, c, st, kind, scope, -1, upid, name);
}

uint32_t m_compress_scoped(tm_model *m, m_ctx *c, uint64_t set_key, int64_t ts, int64_t dur,
			   tm_mtrack_kind kind, tm_mtrack_scope scope, int64_t upid, uint32_t name)
{
	m_cset *s = cset(c, set_key);
	m_cstate *st = NULL;
	if (s->ix) {
		size_t k = seg_first(&s->ix->scoped, ts, INT64_MAX);
		if (k != SIZE_MAX)
			st = &s->tracks[s->ix->scoped.at[k]];
	} else {
		for (size_t i = 0; i < s->n && !st; i++)
			if (s->tracks[i].type == 1 && s->tracks[i].ts_end <= ts)
				st = &s->tracks[i];
	}
	if (st) {
		st->ts_end = ts + dur;
		ix_note(s, (uint32_t)(st - s->tracks));
		return cstate_track(m, c, st, kind, scope, -1, upid, name);
	}
	st = cstate_new(s, 1);
	st->ts_end = ts + dur;
	cstate_made(s);
	return cstate_track(m, c, &s->tracks[s->n - 1], kind, scope, -1, upid, name);
}

/* A slice [ts, end) on a nestable track: its stack's slices that ended
 * by ts are let go, and it nests if nothing is left or it ends within
 * the top. */
static int nests(m_cstate *st, int64_t ts, int64_t end)
{
	while (st->n_open && st->open_ends[st->n_open - 1] <= ts)
		st->n_open--;
	return !st->n_open || end <= st->open_ends[st->n_open - 1];
}

static uint32_t push_open(tm_model *m, m_ctx *c, m_cset *s, m_cstate *st, int64_t end, tm_mtrack_kind kind,
			  tm_mtrack_scope scope, int64_t utid, uint32_t name)
{
	TM_GROW(st->open_ends, st->cap_open, st->n_open + 1);
	st->open_ends[st->n_open++] = end;
	ix_note(s, (uint32_t)(st - s->tracks));
	return cstate_track(m, c, st, kind, scope, utid, -1, name);
}

uint32_t m_compress_overlapping(tm_model *m, m_ctx *c, uint64_t set_key, int64_t ts, int64_t dur,
				tm_mtrack_kind kind, tm_mtrack_scope scope, int64_t utid, uint32_t name)
{
	m_cset *s = cset(c, set_key);
	int64_t end = ts + dur;
	if (s->ix) {
		/* The walk lets go of ended slices on each track it passes. A
		 * track whose top is in (ts, end) has none to let go and does
		 * not fit; one whose top ended by ts, or is at or past end, is
		 * looked at as the walk looks at it. The others are passed as
		 * the walk passes them, unchanged. */
		size_t k;
		while ((k = seg_first(&s->ix->nested, ts, end)) != SIZE_MAX) {
			m_cstate *st = &s->tracks[s->ix->nested.at[k]];
			if (nests(st, ts, end))
				return push_open(m, c, s, st, end, kind, scope, utid, name);
			ix_note(s, s->ix->nested.at[k]);
		}
	} else {
		for (size_t i = 0; i < s->n; i++) {
			m_cstate *st = &s->tracks[i];
			if (st->type == 2 && nests(st, ts, end))
				return push_open(m, c, s, st, end, kind, scope, utid, name);
		}
	}
	cstate_new(s, 2);
	cstate_made(s);
	return push_open(m, c, s, &s->tracks[s->n - 1], end, kind, scope, utid, name);
}

/* ---- slices ------------------------------------------------------------------- */

void tm_model_json_args_text(tm_buf *b, const tj_value *args)
{
	if (args && args->type == TJ_OBJECT)
		tj_write_members(b, args);
}

void m_slice_add_arg(tm_model *m, uint32_t track, size_t ix, const char *key, const char *json_value)
{
	m_track *t = &m->tracks[track];
	if (!ix || ix > t->depth || !m_wants_args(m))
		return;
	m_open *o = &t->stack[ix - 1];
	if (o->args.len)
		tm_buf_put(&o->args, ",", 1);
	tm_buf_json_string(&o->args, key, strlen(key));
	tm_buf_put(&o->args, ":", 1);
	tm_buf_puts(&o->args, json_value);
}

static void emit_slice(tm_model *m, const m_track *t, const m_open *o)
{
	if (!m->sink.slice)
		return;
	tm_buf args = {0};
	if (o->args.len) {
		tm_buf_put(&args, "{", 1);
		tm_buf_put(&args, o->args.data, o->args.len);
		tm_buf_put(&args, "}", 1);
	}
	tm_mslice s = {o->id, o->seq, o->ts, o->dur, t->pub.id, o->depth, m_str(&m->str, o->name),
		       m_str(&m->str, o->cat), args.data, t->pub.file_id, t->pub.machine_row, o->name, o->cat};
	m->sink.slice(m->sink.ctx, &s);
	tm_buf_free(&args);
}

static void stack_pop(tm_model *m, m_track *t)
{
	m_open *o = &t->stack[--t->depth];
	if (t->legacy_unnestable && m_wants_args(m)) {
		char v[32];
		snprintf(v, sizeof v, "%lld", (long long)t->unnestable_begins);
		if (o->args.len)
			tm_buf_put(&o->args, ",", 1);
		tm_buf_printf(&o->args, "\"legacy_unnestable_begin_count\":%s,\"legacy_unnestable_last_begin_ts\":%lld", v,
			      (long long)t->unnestable_last_ts);
	}
	emit_slice(m, t, o);
	tm_buf_free(&o->args);
}

/* SliceTracker::MaybeCloseStack. Returns 0 when the new slice partially
 * overlaps an open one (then *overlap says so, or the stat is counted). */
static int maybe_close_stack(tm_model *m, m_track *t, int64_t new_ts, int64_t new_dur, m_overlap *overlap)
{
	int incomplete_descendent = 0;
	for (int64_t i = (int64_t)t->depth - 1; i >= 0; i--) {
		if ((size_t)i >= t->depth)
			continue;
		m_open *o = &t->stack[i];
		int64_t start = o->ts, dur = o->dur, end = start + dur;
		if (dur == M_PENDING) {
			incomplete_descendent = 1;
			continue;
		}
		if (incomplete_descendent) {
			if (new_ts <= end)
				continue;
			m_stat(m, "misplaced_end_event", 1);
			for (int64_t j = (int64_t)t->depth - 1; j > i; j--) {
				t->stack[j].dur = end - t->stack[j].ts;
				stack_pop(m, t);
			}
			stack_pop(m, t);
			incomplete_descendent = 0;
			continue;
		}
		int ends_before = end < new_ts;
		int ends_same = end == new_ts && !(dur == 0 && new_dur == 0);
		if (ends_before || ends_same) {
			stack_pop(m, t);
			continue;
		}
		if (new_dur == M_PENDING)
			continue;
		if (new_ts < end && new_ts + new_dur > end) {
			if (overlap)
				overlap->hit = 1;
			else
				m_stat(m, "slice_drop_overlapping_complete_event", 1);
			return 0;
		}
	}
	return 1;
}

static void flow_close_pending(tm_model *m, m_ctx *c, m_track *t, uint64_t slice, int64_t ts);

static void add_raw_args(m_open *o, const char *raw, size_t n)
{
	if (!raw || !n)
		return;
	if (o->args.len)
		tm_buf_put(&o->args, ",", 1);
	tm_buf_put(&o->args, raw, n);
}

/* The end of the JSON value at p (compact, as the model writes args), or
 * end when it runs past. */
static const char *json_value_end(const char *p, const char *end)
{
	int depth = 0;
	while (p < end) {
		char ch = *p;
		if (ch == '"') {
			for (p++; p < end && *p != '"'; p++)
				if (*p == '\\' && p + 1 < end)
					p++;
			if (p < end)
				p++;
		} else if (ch == '{' || ch == '[') {
			depth++;
			p++;
		} else if (ch == '}' || ch == ']') {
			depth--;
			p++;
		} else if (ch == ',' && depth == 0) {
			return p;
		} else {
			p++;
		}
		if (depth == 0 && p < end && *p == ',')
			return p;
	}
	return end;
}

/* One member "key":value of compact members at p: the key's span (its
 * quotes included), the value's, and the member's end. 0 at the end. */
static int next_member(const char **p, const char *end, const char **key, size_t *key_n, const char **val,
		       size_t *val_n)
{
	const char *q = *p;
	if (q < end && *q == ',')
		q++;
	if (q >= end || *q != '"')
		return 0;
	const char *k = q;
	for (q++; q < end && *q != '"'; q++)
		if (*q == '\\' && q + 1 < end)
			q++;
	if (q < end)
		q++;
	if (q >= end || *q != ':')
		return 0;
	*key = k;
	*key_n = (size_t)(q - k);
	*val = q + 1;
	const char *ve = json_value_end(q + 1, end);
	*val_n = (size_t)(ve - (q + 1));
	*p = ve;
	return 1;
}

/* A member of a slice's args while an end's are merged in: its key and
 * the value it ends with (in the slice's old text, or the end's). */
typedef struct end_member {
	const char *key, *val;  /* key: the member's first byte (its ',' if any) */
	size_t key_n, val_n;    /* key_n: up to the value */
	uint32_t next;          /* in its key's hash chain (tm_chain) */
} end_member;

/* The member of key k (hash h) in v through the chains of ix, or -1. */
static int64_t member_of(const tm_u64map *ix, const end_member *v, const char *k, size_t kn, uint64_t h)
{
	for (uint32_t i = tm_chain_first(ix, h); i; i = v[i - 1].next) {
		const end_member *e = &v[i - 1];
		const char *ek = e->key + (*e->key == ',');
		size_t ekn = e->key_n - (size_t)(*e->key == ',') - 1; /* without its ':' */
		if (ekn == kn && memcmp(ek, k, kn) == 0)
			return (int64_t)i - 1;
	}
	return -1;
}

/* The args an end gives the slice it closes: a key the slice has already
 * takes the new value (the reference's ArgsTracker keeps the last value
 * of a key in one arg set), the others are added, in the end's order.
 * When a key is there twice (the args of a begin and of its flows are
 * put side by side), its first member is the one. The slice's members
 * are read once, into a map by key, and its text made again once: a
 * search of the slice's text for each of the end's keys, and a move of
 * its text's tail for each one replaced, took time with the product of
 * the two (an E of 40,000 args on a B of as many, 1.2 MB: 20.5 s).
 * Members after text that is not a member are not looked in, and what
 * the end adds is then not either, as when the text was searched. */
static void add_end_args(m_open *o, const char *raw, size_t n)
{
	if (!raw || !n)
		return;
	end_member *v = NULL;
	size_t nv = 0, cap = 0;
	tm_u64map ix = {0};
	/* the slice's members (no args yet: no buffer, NULL + 0 is
	 * undefined) */
	const char *q = o->args.data, *qe = q ? q + o->args.len : NULL, *k, *val;
	size_t kn, vn;
	const char *from = q;
	while (q && next_member(&q, qe, &k, &kn, &val, &vn)) {
		TM_GROW(v, cap, nv + 1);
		v[nv] = (end_member){.key = from, .key_n = (size_t)(val - from), .val = val, .val_n = vn};
		uint64_t h = tm_khash_bytes(k, kn);
		if (member_of(&ix, v, k, kn, h) < 0)
			tm_chain_push(&ix, h, (uint32_t)nv, &v[nv].next);
		nv++;
		from = q;
	}
	/* text after the last member that is not one: kept as it is */
	size_t rest = q ? (size_t)(qe - from) : 0;
	int searchable = rest == 0;
	size_t n_old = nv;
	const char *p = raw, *end = raw + n;
	while (next_member(&p, end, &k, &kn, &val, &vn)) {
		uint64_t h = tm_khash_bytes(k, kn);
		int64_t at = member_of(&ix, v, k, kn, h);
		if (at >= 0) {
			v[at].val = val;
			v[at].val_n = vn;
			continue;
		}
		TM_GROW(v, cap, nv + 1);
		v[nv] = (end_member){.key = k, .key_n = kn + 1, .val = val, .val_n = vn};
		if (searchable)
			tm_chain_push(&ix, h, (uint32_t)nv, &v[nv].next);
		nv++;
	}
	/* the slice's members, its text after them, then the end's new ones */
	tm_buf out = {0};
	for (size_t i = 0; i < nv; i++) {
		if (i == n_old && rest)
			tm_buf_put(&out, from, rest);
		if (i >= n_old && out.len)
			tm_buf_put(&out, ",", 1);
		tm_buf_put(&out, v[i].key, v[i].key_n);
		tm_buf_put(&out, v[i].val, v[i].val_n);
	}
	if (nv == n_old && rest)
		tm_buf_put(&out, from, rest);
	tm_buf_free(&o->args);
	o->args = out;
	free(v);
	tm_u64map_free(&ix);
}

static size_t start_slice(tm_model *m, m_ctx *c, uint32_t track, int64_t ts, int64_t dur, uint32_t cat,
			  uint32_t name, const char *raw, size_t raw_n, m_overlap *overlap, uint32_t file_id)
{
	(void)file_id;
	m_track *t = &m->tracks[track];
	if (t->legacy_unnestable) {
		t->unnestable_begins++;
		t->unnestable_last_ts = ts;
		if (t->depth)
			return 0;
	}
	if (!maybe_close_stack(m, t, ts, dur, overlap))
		return 0;
	if (t->depth >= MAX_DEPTH) {
		m_stat(m, "slice_max_depth_exceeded", 1);
		return 0;
	}
	/* Doubled from one, not TM_GROW's eight: most tracks nest a level or
	 * two, and a Chrome capture's machine has a hundred tracks (eight open
	 * slices each were a fifth of its state; an archive of 100,000
	 * one-slice files has a track each, and two were 18 MB of it). */
	if (t->depth + 1 > t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 1;
		t->stack = tm_xrealloc(t->stack, cap * sizeof(*t->stack));
		t->cap = cap;
	}
	m_open *o = &t->stack[t->depth];
	memset(o, 0, sizeof(*o));
	o->id = m->next_slice++;
	o->seq = m->cur_seq;
	o->ts = ts;
	o->dur = dur;
	o->cat = cat;
	o->name = name;
	o->depth = (uint32_t)t->depth;
	if (m_wants_args(m))
		add_raw_args(o, raw, raw_n);
	t->depth++;
	m->last_slice_id = o->id;
	m->last_slice_ts = ts;
	flow_close_pending(m, c, t, o->id, ts);
	return t->depth;
}

size_t m_slice_begin(tm_model *m, m_ctx *c, uint32_t track, int64_t ts, uint32_t cat, uint32_t name,
		     uint32_t file_id)
{
	return start_slice(m, c, track, ts, M_PENDING, cat, name, NULL, 0, NULL, file_id);
}

size_t m_slice_begin_raw(tm_model *m, m_ctx *c, uint32_t track, int64_t ts, uint32_t cat, uint32_t name,
			 const char *args, size_t args_n, uint32_t file_id)
{
	return start_slice(m, c, track, ts, M_PENDING, cat, name, args, args_n, NULL, file_id);
}

size_t m_slice_scoped_raw(tm_model *m, m_ctx *c, uint32_t track, int64_t ts, uint32_t cat, uint32_t name,
			  int64_t dur, const char *args, size_t args_n, m_overlap *overlap, uint32_t file_id)
{
	if (dur < 0) {
		m_stat(m, "slice_negative_duration", 1);
		return 0;
	}
	return start_slice(m, c, track, ts, dur, cat, name, args, args_n, overlap, file_id);
}

size_t m_slice_scoped(tm_model *m, m_ctx *c, uint32_t track, int64_t ts, uint32_t cat, uint32_t name,
		      int64_t dur, m_overlap *overlap, uint32_t file_id)
{
	return m_slice_scoped_raw(m, c, track, ts, cat, name, dur, NULL, 0, overlap, file_id);
}

size_t m_slice_begin_unnestable(tm_model *m, m_ctx *c, uint32_t track, int64_t ts, uint32_t name,
				int64_t cookie, uint32_t file_id)
{
	m->tracks[track].legacy_unnestable = 1;
	size_t ix = start_slice(m, c, track, ts, M_PENDING, 0, name, NULL, 0, NULL, file_id);
	if (ix) {
		char v[32];
		snprintf(v, sizeof v, "%lld", (long long)cookie);
		m_slice_add_arg(m, track, ix, "cookie", v);
	}
	return ix;
}

static size_t end_slice(tm_model *m, m_ctx *c, uint32_t track, int64_t ts, uint32_t cat, uint32_t name,
			const char *raw, size_t raw_n);

size_t m_slice_end(tm_model *m, m_ctx *c, uint32_t track, int64_t ts, uint32_t cat, uint32_t name)
{
	return end_slice(m, c, track, ts, cat, name, NULL, 0);
}

size_t m_slice_end_raw(tm_model *m, m_ctx *c, uint32_t track, int64_t ts, uint32_t cat, uint32_t name,
		       const char *args, size_t args_n)
{
	return end_slice(m, c, track, ts, cat, name, args, args_n);
}

static size_t end_slice(tm_model *m, m_ctx *c, uint32_t track, int64_t ts, uint32_t cat, uint32_t name,
			const char *raw, size_t raw_n)
{
	(void)c;
	m_track *t = &m->tracks[track];
	if (!maybe_close_stack(m, t, ts, M_PENDING, NULL) || !t->depth)
		return 0;
	/* MatchingIncompleteSliceIndex */
	int64_t ix = -1;
	for (int64_t i = (int64_t)t->depth - 1; i >= 0; i--) {
		const m_open *o = &t->stack[i];
		if (o->dur != M_PENDING)
			continue;
		if (cat && (!o->cat || cat != o->cat))
			continue;
		if (name && o->name && name != o->name)
			continue;
		ix = i;
		break;
	}
	if (ix < 0)
		return 0;
	m_open *o = &t->stack[ix];
	o->dur = ts - o->ts;
	if (m_wants_args(m))
		add_end_args(o, raw, raw_n);
	m->last_slice_id = o->id;
	m->last_slice_ts = o->ts;
	if ((size_t)ix == t->depth - 1) {
		size_t r = (size_t)ix + 1;
		stack_pop(m, t);
		return r;
	}
	return (size_t)ix + 1;
}

int m_slice_top(tm_model *m, uint32_t track, uint64_t *id, int64_t *ts)
{
	m_track *t = &m->tracks[track];
	if (!t->depth)
		return 0;
	*id = t->stack[t->depth - 1].id;
	*ts = t->stack[t->depth - 1].ts;
	return 1;
}

void m_slices_flush(tm_model *m)
{
	/* FlushPendingSlices: what is left open is handed out as it is, from
	 * the bottom of each stack */
	for (size_t i = 0; i < m->n_tracks; i++) {
		m_track *t = &m->tracks[i];
		for (size_t k = 0; k < t->depth; k++) {
			emit_slice(m, t, &t->stack[k]);
			tm_buf_free(&t->stack[k].args);
		}
		t->depth = 0;
	}
}

/* ---- flows -------------------------------------------------------------------- */

static void insert_flow(tm_model *m, m_ctx *c, uint64_t out, int64_t ts_out, uint64_t in, int64_t ts_in)
{
	if (m->sink.flow) {
		tm_mflow f = {out, in, ts_out, ts_in, c->row};
		m->sink.flow(m->sink.ctx, &f);
	}
}

static int flow_source(m_ctx *c, uint64_t flow, uint64_t *slice, int64_t *ts)
{
	uint64_t *v = m_map_get(&c->flow_to_slice, flow);
	if (!v)
		return 0;
	*slice = c->flow_slice_id[*v - 1];
	*ts = c->flow_slice_ts[*v - 1];
	return 1;
}

static void flow_set_source(m_ctx *c, uint64_t flow, uint64_t slice, int64_t ts)
{
	int ins;
	uint64_t *v = m_map_put(&c->flow_to_slice, flow, &ins);
	if (ins) {
		TM_GROW(c->flow_slice_id, c->cap_flow_slices, c->n_flow_slices + 1);
		c->flow_slice_ts = tm_xrealloc(c->flow_slice_ts, c->cap_flow_slices * sizeof(int64_t));
		*v = ++c->n_flow_slices;
	}
	c->flow_slice_id[*v - 1] = slice;
	c->flow_slice_ts[*v - 1] = ts;
}

void m_flow_begin_slice(tm_model *m, m_ctx *c, uint64_t slice, int64_t ts, uint64_t flow)
{
	if (m_map_get(&c->flow_to_slice, flow)) {
		m_stat(m, "flow_duplicate_id", 1);
		return;
	}
	flow_set_source(c, flow, slice, ts);
}

void m_flow_step_slice(tm_model *m, m_ctx *c, uint64_t slice, int64_t ts, uint64_t flow)
{
	uint64_t ex;
	int64_t ex_ts;
	if (!flow_source(c, flow, &ex, &ex_ts)) {
		m_stat(m, "flow_step_without_start", 1);
		return;
	}
	if (ex_ts > ts)
		insert_flow(m, c, slice, ts, ex, ex_ts);
	else
		insert_flow(m, c, ex, ex_ts, slice, ts);
	flow_set_source(c, flow, slice, ts);
}

void m_flow_end_slice(tm_model *m, m_ctx *c, uint64_t slice, int64_t ts, uint64_t flow, int close)
{
	uint64_t ex;
	int64_t ex_ts;
	if (!flow_source(c, flow, &ex, &ex_ts)) {
		m_stat(m, "flow_end_without_start", 1);
		return;
	}
	if (close)
		m_map_del(&c->flow_to_slice, flow);
	if (ex_ts > ts)
		insert_flow(m, c, slice, ts, ex, ex_ts);
	else
		insert_flow(m, c, ex, ex_ts, slice, ts);
}

void m_flow_begin_track(tm_model *m, m_ctx *c, uint32_t track, uint64_t flow)
{
	uint64_t id;
	int64_t ts;
	if (!m_slice_top(m, track, &id, &ts)) {
		m_stat(m, "flow_no_enclosing_slice", 1);
		return;
	}
	m_flow_begin_slice(m, c, id, ts, flow);
}

void m_flow_step_track(tm_model *m, m_ctx *c, uint32_t track, uint64_t flow)
{
	uint64_t id;
	int64_t ts;
	if (!m_slice_top(m, track, &id, &ts)) {
		m_stat(m, "flow_no_enclosing_slice", 1);
		return;
	}
	m_flow_step_slice(m, c, id, ts, flow);
}

void m_flow_end_track(tm_model *m, m_ctx *c, uint32_t track, uint64_t flow, int bind_enclosing, int close)
{
	if (!bind_enclosing) {
		m_track *t = &m->tracks[track];
		TM_GROW(t->pending_flows, t->cap_pending_flows, t->n_pending_flows + 1);
		t->pending_flows[t->n_pending_flows++] = flow;
		return;
	}
	uint64_t id;
	int64_t ts;
	if (!m_slice_top(m, track, &id, &ts)) {
		m_stat(m, "flow_no_enclosing_slice", 1);
		return;
	}
	m_flow_end_slice(m, c, id, ts, flow, close);
}

/* ClosePendingEventsOnTrack: a slice beginning on the track takes the flows
 * ended there without an enclosing slice. The reference looks the source
 * up without checking it exists (operator[] inserts slice id 0). */
static void flow_close_pending(tm_model *m, m_ctx *c, m_track *t, uint64_t slice, int64_t ts)
{
	for (size_t i = 0; i < t->n_pending_flows; i++) {
		uint64_t ex;
		int64_t ex_ts;
		if (!flow_source(c, t->pending_flows[i], &ex, &ex_ts)) {
			flow_set_source(c, t->pending_flows[i], 0, 0);
			ex = 0;
			ex_ts = 0;
		}
		insert_flow(m, c, ex, ex_ts, slice, ts);
	}
	t->n_pending_flows = 0;
}

uint64_t m_flow_v1_id(m_ctx *c, uint64_t source, uint32_t cat, uint32_t name)
{
	uint64_t key = m_hash2(m_hash2(source, cat), name);
	int ins;
	uint64_t *v = m_map_put(&c->v1_flows, key, &ins);
	if (ins)
		*v = ++c->next_v1_flow; /* ids from 0, stored + 1 */
	return *v - 1;
}

/* ---- counters ------------------------------------------------------------------- */

void m_counter(tm_model *m, uint32_t track, int64_t ts, double value, uint32_t file_id)
{
	if (!m->sink.counter)
		return;
	tm_mcounter cn = {m, m->cur_seq, ts, track, value, file_id, m->tracks[track].pub.machine_row};
	m->sink.counter(m->sink.ctx, &cn);
}
