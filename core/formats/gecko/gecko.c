/* core/formats/gecko/gecko.c - GeckoTraceTokenizer's reading of a profile,
 * step for step: the document parsed whole, its top-level threads' tables
 * read as the reference's SimpleJsonParser gives their values (an unsigned
 * integer is any number >= 0, a double cut; a list of unsigned integers or
 * strings drops the elements that are not), then per thread its frames,
 * its stacks, its samples and its markers, handed to a sink. */
#include "formats/gecko/gecko.h"

#include <stdlib.h>
#include <string.h>

#include "util/json.h"

/* ---- values as SimpleJsonParser gives them --------------------------------------- */

/* GetUint32: an integer or a double >= 0, cast to 32 bits (a double as
 * x86 casts one: out of int64's range it is 0). */
static int get_u32(const tj_value *v, uint32_t *out)
{
	if (v->type == TJ_INT && v->i >= 0) {
		*out = (uint32_t)v->i;
		return 1;
	}
	if (v->type == TJ_DOUBLE && v->d >= 0) {
		*out = v->d < 9223372036854775808.0 ? (uint32_t)(int64_t)v->d : 0;
		return 1;
	}
	return 0;
}

static int get_double(const tj_value *v, double *out)
{
	if (v->type == TJ_DOUBLE) {
		*out = v->d;
		return 1;
	}
	if (v->type == TJ_INT) {
		*out = (double)v->i;
		return 1;
	}
	return 0;
}

static int key_is(const tj_value *obj, size_t i, const char *k)
{
	size_t n = strlen(k);
	const tj_key *key = &tj_keys(obj)[i];
	return key->len == n && memcmp(key->s, k, n) == 0;
}

typedef struct u32s {
	uint32_t *v;
	uint8_t *has;          /* optional arrays: whether each is set */
	size_t n, cap;
} u32s;

static void u32s_push(u32s *a, int has, uint32_t v, int optional)
{
	if (a->n == a->cap) {
		a->cap = a->cap ? a->cap * 2 : 64;
		a->v = tm_xrealloc(a->v, a->cap * sizeof *a->v);
		if (optional || a->has)
			a->has = tm_xrealloc(a->has, a->cap);
	}
	a->v[a->n] = v;
	if (a->has)
		a->has[a->n] = (uint8_t)has;
	a->n++;
}

/* CollectUint32Array (assigned: a second such key replaces the first) */
static void collect_u32(u32s *a, const tj_value *arr)
{
	free(a->v);
	free(a->has);
	memset(a, 0, sizeof *a);
	for (size_t i = 0; i < arr->len; i++) {
		uint32_t v;
		if (get_u32(&arr->items[i], &v))
			u32s_push(a, 1, v, 0);
	}
}

/* ParseOptionalUint32Array (appended) */
static void collect_opt_u32(u32s *a, const tj_value *arr)
{
	for (size_t i = 0; i < arr->len; i++) {
		uint32_t v = 0;
		int has = arr->items[i].type != TJ_NULL && get_u32(&arr->items[i], &v);
		u32s_push(a, has, v, 1);
	}
}

typedef struct vals {
	const tj_value **v;
	size_t n, cap;
} vals;

static void vals_push(vals *a, const tj_value *v)
{
	TM_GROW(a->v, a->cap, a->n + 1);
	a->v[a->n++] = v;
}

/* A raw-shape table: its schema (appended per "schema" key) and its rows
 * (the array elements of "data", appended). */
typedef struct legacy {
	vals schema;           /* the schema objects, in order */
	vals rows;
} legacy;

/* GetSchemaIndex: the first key of that name over the schemas read. */
static int schema_index(const legacy *t, const char *key, uint32_t *out)
{
	for (size_t s = 0; s < t->schema.n; s++) {
		const tj_value *o = t->schema.v[s];
		for (size_t i = 0; i < o->len; i++)
			if (key_is(o, i, key)) {
				if (!get_u32(&o->items[i], out))
					*out = 0;
				return 1;
			}
	}
	return 0;
}

typedef struct gk_thread {
	const tj_value *name;  /* a string, or NULL: "" */
	uint32_t tid, pid;
	vals strings;          /* the strings of the last string table */
	legacy frames, stacks, samples;
	u32s frame_func, func_names, stack_prefix, stack_frame, sample_stack;
	double *times;
	size_t n_times;
	int preprocessed;
	/* markers (ParseMarkersTable): the columns, index-aligned */
	u32s mk_name, mk_phase, mk_cat;
	double *mk_start, *mk_end;
	size_t n_mk_start, n_mk_end;
	vals mk_data;          /* an object or array each, or a null (none) */
} gk_thread;

static void thread_free(gk_thread *t)
{
	free(t->strings.v);
	legacy *ls[3] = {&t->frames, &t->stacks, &t->samples};
	for (int i = 0; i < 3; i++) {
		free(ls[i]->schema.v);
		free(ls[i]->rows.v);
	}
	u32s *us[8] = {&t->frame_func, &t->func_names, &t->stack_prefix, &t->stack_frame, &t->sample_stack,
		       &t->mk_name, &t->mk_phase, &t->mk_cat};
	for (int i = 0; i < 8; i++) {
		free(us[i]->v);
		free(us[i]->has);
	}
	free(t->times);
	free(t->mk_start);
	free(t->mk_end);
	free(t->mk_data.v);
}

/* CollectDoubleArray (assigned) */
static void collect_doubles(double **out, size_t *n, const tj_value *a)
{
	free(*out);
	*out = tm_xmalloc((a->len ? a->len : 1) * sizeof **out);
	*n = 0;
	for (size_t e = 0; e < a->len; e++)
		if (get_double(&a->items[e], &(*out)[*n]))
			(*n)++;
}

/* ParseMarkersTable; the data column's objects and arrays kept (appended),
 * any other value none */
static void read_markers(gk_thread *t, const tj_value *m)
{
	for (size_t k = 0; k < m->len; k++) {
		const tj_value *a = &m->items[k];
		if (a->type != TJ_ARRAY)
			continue;
		if (key_is(m, k, "name"))
			collect_u32(&t->mk_name, a);
		else if (key_is(m, k, "startTime"))
			collect_doubles(&t->mk_start, &t->n_mk_start, a);
		else if (key_is(m, k, "endTime"))
			collect_doubles(&t->mk_end, &t->n_mk_end, a);
		else if (key_is(m, k, "phase"))
			collect_u32(&t->mk_phase, a);
		else if (key_is(m, k, "category"))
			collect_u32(&t->mk_cat, a);
		else if (key_is(m, k, "data"))
			for (size_t e = 0; e < a->len; e++)
				vals_push(&t->mk_data, &a->items[e]);
	}
}

/* ReadUint32OrStringifiedUint32 */
static uint32_t id_of(const tj_value *v)
{
	uint32_t u;
	if (get_u32(v, &u))
		return u;
	if (v->type == TJ_STRING && v->s[0]) {
		char *end;
		unsigned long x = strtoul(v->s, &end, 10);
		return *end ? 0 : (uint32_t)x;
	}
	return 0;
}

static void read_legacy(legacy *t, const tj_value *o, size_t i)
{
	if (key_is(o, i, "schema") && o->items[i].type == TJ_OBJECT) {
		vals_push(&t->schema, &o->items[i]);
	} else if (key_is(o, i, "data") && o->items[i].type == TJ_ARRAY) {
		const tj_value *d = &o->items[i];
		for (size_t k = 0; k < d->len; k++)
			if (d->items[k].type == TJ_ARRAY)
				vals_push(&t->rows, &d->items[k]);
	}
}

/* ParseThread */
static void read_thread(gk_thread *t, const tj_value *o)
{
	for (size_t i = 0; i < o->len; i++) {
		const tj_value *v = &o->items[i];
		if (key_is(o, i, "name")) {
			t->name = v->type == TJ_STRING ? v : NULL;
		} else if (key_is(o, i, "tid")) {
			t->tid = id_of(v);
		} else if (key_is(o, i, "pid")) {
			t->pid = id_of(v);
		} else if ((key_is(o, i, "stringTable") || key_is(o, i, "stringArray")) && v->type == TJ_ARRAY) {
			if (key_is(o, i, "stringArray"))
				t->preprocessed = 1;
			t->strings.n = 0;
			for (size_t k = 0; k < v->len; k++)
				if (v->items[k].type == TJ_STRING)
					vals_push(&t->strings, &v->items[k]);
		} else if (key_is(o, i, "frameTable") && v->type == TJ_OBJECT) {
			for (size_t k = 0; k < v->len; k++) {
				read_legacy(&t->frames, v, k);
				if (key_is(v, k, "func") && v->items[k].type == TJ_ARRAY) {
					t->preprocessed = 1;
					collect_u32(&t->frame_func, &v->items[k]);
				}
			}
		} else if (key_is(o, i, "funcTable") && v->type == TJ_OBJECT) {
			for (size_t k = 0; k < v->len; k++)
				if (key_is(v, k, "name") && v->items[k].type == TJ_ARRAY)
					collect_u32(&t->func_names, &v->items[k]);
		} else if (key_is(o, i, "stackTable") && v->type == TJ_OBJECT) {
			for (size_t k = 0; k < v->len; k++) {
				read_legacy(&t->stacks, v, k);
				if (key_is(v, k, "prefix") && v->items[k].type == TJ_ARRAY) {
					t->preprocessed = 1;
					collect_opt_u32(&t->stack_prefix, &v->items[k]);
				} else if (key_is(v, k, "frame") && v->items[k].type == TJ_ARRAY) {
					collect_u32(&t->stack_frame, &v->items[k]);
				}
			}
		} else if (key_is(o, i, "markers") && v->type == TJ_OBJECT) {
			read_markers(t, v);
		} else if (key_is(o, i, "samples") && v->type == TJ_OBJECT) {
			for (size_t k = 0; k < v->len; k++) {
				read_legacy(&t->samples, v, k);
				const tj_value *a = &v->items[k];
				if (key_is(v, k, "stack") && a->type == TJ_ARRAY) {
					t->preprocessed = 1;
					collect_opt_u32(&t->sample_stack, a);
				} else if (key_is(v, k, "time") && a->type == TJ_ARRAY) {
					collect_doubles(&t->times, &t->n_times, a);
				}
			}
		}
	}
}

/* A thread's callsites, by its stack index: the file's id and its depth. */
typedef struct gk_callsites {
	uint32_t *id, *depth;
	size_t n, cap;
} gk_callsites;

static void cs_push(gk_callsites *c, uint32_t id, uint32_t depth)
{
	if (c->n == c->cap) {
		c->cap = c->cap ? c->cap * 2 : 256;
		c->id = tm_xrealloc(c->id, c->cap * sizeof *c->id);
		c->depth = tm_xrealloc(c->depth, c->cap * sizeof *c->depth);
	}
	c->id[c->n] = id;
	c->depth[c->n++] = depth;
}

/* One stack: its prefix (a stack index, or none) and frame index. */
static void stack(const gecko_sink *st, gk_callsites *cs, const u32s *frame_ids, int has_prefix, uint32_t prefix,
		  uint32_t frame)
{
	uint32_t parent = UINT32_MAX, depth = 0;
	if (has_prefix && prefix < cs->n) {
		parent = cs->id[prefix];
		depth = cs->depth[prefix] + 1;
	}
	if (frame >= frame_ids->n)
		return;
	cs_push(cs, st->callsite(st->ctx, parent, frame_ids->v[frame], depth), depth);
}

static const tj_value *string_at(const vals *strings, uint32_t i)
{
	return i < strings->n ? strings->v[i] : NULL;
}

/* ProcessLegacyFramesAndStacks / ProcessPreprocessedFramesAndStacks */
static void frames_and_stacks(const gecko_sink *st, const gk_thread *t, const vals *strings, gk_callsites *cs)
{
	u32s frame_ids = {0};
	if (t->preprocessed) {
		for (size_t i = 0; i < t->frame_func.n; i++) {
			uint32_t f = t->frame_func.v[i];
			if (f >= t->func_names.n)
				continue;
			const tj_value *s = string_at(strings, t->func_names.v[f]);
			if (s)
				u32s_push(&frame_ids, 1, st->frame(st->ctx, s->s, s->len), 0);
		}
		for (size_t i = 0; i < t->stack_prefix.n && i < t->stack_frame.n; i++)
			stack(st, cs, &frame_ids, t->stack_prefix.has[i], t->stack_prefix.v[i], t->stack_frame.v[i]);
	} else {
		uint32_t loc, pre, fr;
		if (schema_index(&t->frames, "location", &loc) && schema_index(&t->stacks, "prefix", &pre) &&
		    schema_index(&t->stacks, "frame", &fr)) {
			for (size_t i = 0; i < t->frames.rows.n; i++) {
				const tj_value *row = t->frames.rows.v[i];
				uint32_t sidx;
				if (loc >= row->len || row->items[loc].type == TJ_NULL || !get_u32(&row->items[loc], &sidx))
					continue;
				const tj_value *s = string_at(strings, sidx);
				if (s)
					u32s_push(&frame_ids, 1, st->frame(st->ctx, s->s, s->len), 0);
			}
			for (size_t i = 0; i < t->stacks.rows.n; i++) {
				const tj_value *row = t->stacks.rows.v[i];
				uint32_t p = 0, f;
				if (pre >= row->len || fr >= row->len)
					continue;
				int has_p = row->items[pre].type != TJ_NULL && get_u32(&row->items[pre], &p);
				if (row->items[fr].type == TJ_NULL || !get_u32(&row->items[fr], &f))
					continue;
				stack(st, cs, &frame_ids, has_p, p, f);
			}
		}
	}
	free(frame_ids.v);
	free(frame_ids.has);
}

/* The ms of a time, in ns as the reference computes it (cast as x86 casts). */
static int64_t ms_to_ns(double ms)
{
	double ns = ms * 1000 * 1000;
	if (!(ns < 9223372036854775808.0 && ns >= -9223372036854775808.0))
		return INT64_MIN;
	return (int64_t)ns;
}

/* A sample the reference pushes (its thread made first with the first). */
static void sample(const gecko_sink *st, const gk_thread *t, int64_t raw, uint32_t callsite, int *first)
{
	gecko_thread th = {t->tid, t->pid, t->name ? t->name->s : "", t->name ? t->name->len : 0, *first};
	if (st->sample(st->ctx, &th, raw, callsite))
		*first = 0;
}

/* ProcessLegacySamples / ProcessSamples (preprocessed: when the thread or
 * the shared block is) */
static void samples(const gecko_sink *st, const gk_thread *t, const gk_callsites *cs, int preprocessed)
{
	int first = 1;
	if (preprocessed) {
		for (size_t i = 0; i < t->sample_stack.n && i < t->n_times; i++)
			if (t->sample_stack.has[i] && t->sample_stack.v[i] < cs->n)
				sample(st, t, ms_to_ns(t->times[i]), cs->id[t->sample_stack.v[i]], &first);
		return;
	}
	uint32_t si, ti;
	if (!schema_index(&t->samples, "stack", &si) || !schema_index(&t->samples, "time", &ti))
		return;
	for (size_t i = 0; i < t->samples.rows.n; i++) {
		const tj_value *row = t->samples.rows.v[i];
		uint32_t s;
		if (si >= row->len || ti >= row->len)
			continue;
		if (row->items[si].type == TJ_NULL || !get_u32(&row->items[si], &s) || s >= cs->n)
			continue;
		/* the cell is an unsigned integer when it can be one: a time
		 * of 15.95 ms is 15 */
		const tj_value *tv = &row->items[ti];
		double ms = 0;
		uint32_t u;
		if (tv->type != TJ_NULL && get_u32(tv, &u))
			ms = (double)u;
		else if (tv->type != TJ_NULL)
			get_double(tv, &ms);
		sample(st, t, ms_to_ns(ms), cs->id[s], &first);
	}
}

/* ProcessMarkers: the columns up to the shortest; a marker whose name is
 * not in the strings is none */
static void markers(const gecko_sink *st, const gk_thread *t, const vals *strings, const vals *categories)
{
	size_t n = t->mk_name.n;
	n = t->n_mk_start < n ? t->n_mk_start : n;
	n = t->n_mk_end < n ? t->n_mk_end : n;
	n = t->mk_phase.n < n ? t->mk_phase.n : n;
	n = t->mk_cat.n < n ? t->mk_cat.n : n;
	int first = 1;
	for (size_t i = 0; i < n; i++) {
		const tj_value *name = string_at(strings, t->mk_name.v[i]);
		if (!name)
			continue;
		gecko_marker m = {(uint8_t)t->mk_phase.v[i], 0, 0, name->s, name->len, NULL, 0, NULL};
		const tj_value *cat = string_at(categories, t->mk_cat.v[i]);
		if (cat) {
			m.cat = cat->s;
			m.cat_n = cat->len;
		}
		double start = t->mk_start[i], end = t->mk_end[i];
		m.raw_ts = ms_to_ns(m.phase == 3 ? end : start);
		if (m.phase == 1) {
			int64_t d = ms_to_ns(end - start);
			m.dur = d > 0 ? d : 0;
		}
		if (i < t->mk_data.n && (t->mk_data.v[i]->type == TJ_OBJECT || t->mk_data.v[i]->type == TJ_ARRAY))
			m.data = t->mk_data.v[i];
		gecko_thread th = {t->tid, t->pid, t->name ? t->name->s : "", t->name ? t->name->len : 0, first};
		if (st->marker(st->ctx, &th, &m))
			first = 0;
	}
}

/* ParseMetaCategories: each object's name ("" for none) */
static void categories(vals *out, const tj_value *meta, tj_value *empty)
{
	for (size_t i = 0; i < meta->len; i++) {
		if (!key_is(meta, i, "categories") || meta->items[i].type != TJ_ARRAY)
			continue;
		const tj_value *a = &meta->items[i];
		for (size_t k = 0; k < a->len; k++) {
			const tj_value *c = &a->items[k];
			if (c->type != TJ_OBJECT)
				continue;
			const tj_value *name = empty;
			for (size_t f = 0; f < c->len; f++)
				if (key_is(c, f, "name"))
					name = c->items[f].type == TJ_STRING ? &c->items[f] : empty;
			vals_push(out, name);
		}
	}
}

static void profile(const gecko_sink *st, const tj_value *root)
{
	vals cats = {0};
	static char none[1];
	tj_value empty = {.type = TJ_STRING, .s = none, .len = 0};
	gk_thread *threads = NULL, shared;
	size_t n = 0, cap = 0;
	int has_shared = 0;
	memset(&shared, 0, sizeof shared);
	for (size_t i = 0; root->type == TJ_OBJECT && i < root->len; i++) {
		const tj_value *v = &root->items[i];
		if (key_is(root, i, "meta") && v->type == TJ_OBJECT) {
			categories(&cats, v, &empty);
		} else if (key_is(root, i, "shared") && v->type == TJ_OBJECT) {
			thread_free(&shared);
			memset(&shared, 0, sizeof shared);
			has_shared = 1;
			read_thread(&shared, v);
		} else if (key_is(root, i, "threads") && v->type == TJ_ARRAY) {
			for (size_t k = 0; k < v->len; k++) {
				if (v->items[k].type != TJ_OBJECT)
					continue;
				TM_GROW(threads, cap, n + 1);
				memset(&threads[n], 0, sizeof threads[n]);
				read_thread(&threads[n++], &v->items[k]);
			}
		}
	}
	/* the shared block's callsites, made once for every thread */
	gk_callsites shared_cs = {0};
	int shared_frames = has_shared && (shared.frame_func.n || shared.frames.rows.n);
	if (shared_frames)
		frames_and_stacks(st, &shared, &shared.strings, &shared_cs);
	for (size_t i = 0; i < n; i++) {
		const gk_thread *t = &threads[i];
		const vals *strings = t->strings.n || !has_shared ? &t->strings : &shared.strings;
		if (shared_frames) {
			samples(st, t, &shared_cs, t->preprocessed || shared.preprocessed);
		} else {
			gk_callsites cs = {0};
			frames_and_stacks(st, t, strings, &cs);
			samples(st, t, &cs, t->preprocessed);
			free(cs.id);
			free(cs.depth);
		}
		markers(st, t, strings, &cats);
	}
	free(cats.v);
	free(shared_cs.id);
	free(shared_cs.depth);
	for (size_t i = 0; i < n; i++)
		thread_free(&threads[i]);
	free(threads);
	thread_free(&shared);
}

/* The reference's SimpleJsonParser names a failure by the container it
 * was walking ("Error parsing JSON object field: <detail>") where the JSON
 * importer's parser (tj_parse's texts) says "Failed to parse object:
 * <detail>". */
static const char *walker_words(const char *msg, const char **rest)
{
	static const struct {
		const char *ours, *theirs;
	} words[] = {{"Failed to parse object: ", "Error parsing JSON object field: "},
		     {"Failed to parse array: ", "Error parsing JSON array element: "}};
	for (size_t i = 0; i < sizeof words / sizeof words[0]; i++) {
		size_t k = strlen(words[i].ours);
		if (strncmp(msg, words[i].ours, k) == 0) {
			*rest = msg + k;
			return words[i].theirs;
		}
	}
	*rest = msg;
	return "";
}

int gecko_read(const char *doc, size_t n, const gecko_sink *sink, tm_error *err)
{
	tj_value *root = NULL;
	tm_error perr;
	if (tj_parse(doc ? doc : "", n, &root, &perr) != 0) {
		const char *rest, *words = walker_words(perr.msg, &rest);
		return tm_err(err, TM_EINPUT, GECKO_ERR_SYNTAX, words, rest);
	}
	profile(sink, root);
	tj_free(root);
	return 0;
}
