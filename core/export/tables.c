/* core/export/tables.c - processes.tsv, threads.tsv, slices.tsv and
 * profile.folded per machine.
 *
 * Threads and processes are the model's tables as they stand at the end.
 * Slice statistics need each name's durations in order: every slice goes
 * into an external sort keyed by (machine, name, dur), while a map counts
 * each name's slices so that the median and p90 ranks are known before
 * the sorted durations stream past. */
#include "export/tables.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sort/xsort.h"
#include "util/hash.h"

typedef struct track_sum {
	uint64_t slices;
	int64_t busy;
} track_sum;

typedef struct group {      /* one (machine, name) */
	uint32_t machine_row;
	char *name;             /* NULL: the reference's NULL name */
	size_t name_len;
	uint64_t hash;
	uint64_t count, unfinished;
	int64_t total, min, median, p90, max;
} group;

struct tm_tables_build {
	const tm_scan *scan;
	tm_xsort *sort;
	size_t run_bytes;       /* the sorts' (tm_tables_new) */
	tm_error err;
	struct { track_sum *v; size_t n, cap; } tracks; /* by track id */
	group *groups;          /* in the order first seen */
	size_t n, cap_groups;
	uint32_t *slots;        /* open addressing: 1 + index into groups, 0 empty */
	size_t cap;             /* slots */
	struct stack_count *stacks; /* open addressing on (machine, callsite) */
	size_t n_stacks, cap_stacks;
};

/* How many samples a machine has of a callsite (its leaf). */
typedef struct stack_count {
	uint32_t machine_row;
	uint32_t callsite;
	uint64_t count;         /* 0: an empty slot */
} stack_count;

/* Two names in byte order, a prefix first (as strcmp orders text without
 * NUL): the tables' sorts and orders all compare names so. */
static int bytes_cmp(const void *a, size_t na, const void *b, size_t nb)
{
	size_t n = na < nb ? na : nb;
	int c = n ? memcmp(a, b, n) : 0;
	if (c)
		return c;
	return na < nb ? -1 : na > nb;
}

/* A sort record: the key, then the name bytes. */
typedef struct srec {
	uint32_t machine_row;
	uint32_t has_name;
	uint32_t name_len;
	int64_t dur;
} srec;

static int srec_cmp(const void *a, const void *b)
{
	srec x, y;
	memcpy(&x, a, sizeof x);
	memcpy(&y, b, sizeof y);
	if (x.machine_row != y.machine_row)
		return x.machine_row < y.machine_row ? -1 : 1;
	if (x.has_name != y.has_name)
		return x.has_name < y.has_name ? -1 : 1;
	int c = bytes_cmp((const char *)a + sizeof x, x.name_len, (const char *)b + sizeof y, y.name_len);
	if (c)
		return c;
	return x.dur < y.dur ? -1 : x.dur > y.dur;
}

/* A record as add_slice writes it: the key, then name_len bytes of name
 * (none without one). srec_cmp and slice_stats trust name_len. */
static int srec_ok(const void *rec, uint32_t len)
{
	srec r;
	if (len < sizeof r)
		return 0;
	memcpy(&r, rec, sizeof r);
	return r.has_name <= 1 && (r.has_name || !r.name_len) && len == sizeof r + (uint64_t)r.name_len;
}

tm_tables_build *tm_tables_new(const tm_scan *scan, size_t run_bytes)
{
	tm_tables_build *b = tm_xcalloc(1, sizeof(*b));
	b->scan = scan;
	b->sort = tm_xsort_new(srec_cmp, run_bytes);
	b->run_bytes = run_bytes;
	tm_xsort_set_check(b->sort, srec_ok);
	return b;
}

static uint64_t name_hash(uint32_t machine_row, const char *name, size_t n)
{
	return tm_khash_pair(name ? tm_khash_bytes(name, n) : 0, (uint64_t)machine_row << 1 | (name != NULL));
}

/* The group of (machine_row, name); with `insert`, made when missing (a
 * pointer valid until the next insert). Groups are kept densely and found
 * through a table of indexes: 28,500 of them (a hundred Chromium
 * captures) once took a 11.5 MB table of 88-byte slots. */
static group *find_group(tm_tables_build *b, uint32_t machine_row, const char *name, size_t n, int insert)
{
	if (insert && (b->n + 1) * 2 > b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 256;
		free(b->slots);
		b->slots = tm_xcalloc(cap, sizeof(*b->slots));
		b->cap = cap;
		for (size_t i = 0; i < b->n; i++) {
			size_t j = b->groups[i].hash & (cap - 1);
			while (b->slots[j])
				j = (j + 1) & (cap - 1);
			b->slots[j] = (uint32_t)(i + 1);
		}
	}
	if (!b->cap)
		return NULL;
	uint64_t h = name_hash(machine_row, name, n);
	for (size_t j = h & (b->cap - 1);; j = (j + 1) & (b->cap - 1)) {
		if (!b->slots[j]) {
			if (!insert)
				return NULL;
			TM_GROW(b->groups, b->cap_groups, b->n + 1);
			group *g = &b->groups[b->n];
			memset(g, 0, sizeof(*g));
			g->machine_row = machine_row;
			g->name = name ? tm_xstrndup(name, n) : NULL;
			g->name_len = n;
			g->hash = h;
			g->min = INT64_MAX;
			b->slots[j] = (uint32_t)(++b->n);
			return g;
		}
		group *g = &b->groups[b->slots[j] - 1];
		if (g->hash == h && g->machine_row == machine_row && (g->name != NULL) == (name != NULL) &&
		    g->name_len == n && (!name || memcmp(g->name, name, n) == 0))
			return g;
	}
}

static size_t stack_slot(const stack_count *v, size_t cap, uint32_t row, uint32_t callsite)
{
	uint64_t h = ((uint64_t)row << 32 | callsite) * 0x9e3779b97f4a7c15ull;
	size_t i = (size_t)(h >> 20) & (cap - 1);
	while (v[i].count && (v[i].machine_row != row || v[i].callsite != callsite))
		i = (i + 1) & (cap - 1);
	return i;
}

void tm_tables_sample(tm_tables_build *b, const tm_msample *s)
{
	if (s->callsite == TM_NO_CALLSITE)
		return; /* a sample without a stack has no line */
	if ((b->n_stacks + 1) * 2 > b->cap_stacks) {
		size_t cap = b->cap_stacks ? b->cap_stacks * 2 : 1024;
		stack_count *v = tm_xcalloc(cap, sizeof *v);
		for (size_t i = 0; i < b->cap_stacks; i++)
			if (b->stacks[i].count)
				v[stack_slot(v, cap, b->stacks[i].machine_row, b->stacks[i].callsite)] = b->stacks[i];
		free(b->stacks);
		b->stacks = v;
		b->cap_stacks = cap;
	}
	stack_count *c = &b->stacks[stack_slot(b->stacks, b->cap_stacks, s->machine_row, s->callsite)];
	if (!c->count) {
		c->machine_row = s->machine_row;
		c->callsite = s->callsite;
		b->n_stacks++;
	}
	c->count++;
}

void tm_tables_slice(tm_tables_build *b, const tm_mslice *s)
{
	if (s->track >= b->tracks.n) {
		TM_GROW(b->tracks.v, b->tracks.cap, (size_t)s->track + 1);
		memset(b->tracks.v + b->tracks.n, 0, ((size_t)s->track + 1 - b->tracks.n) * sizeof(track_sum));
		b->tracks.n = (size_t)s->track + 1;
	}
	track_sum *ts = &b->tracks.v[s->track];
	ts->slices++;
	if (s->depth == 0 && s->dur > 0)
		ts->busy += s->dur;

	size_t n = s->name ? strlen(s->name) : 0;
	group *g = find_group(b, s->machine_row, s->name, n, 1);
	g->count++;
	if (s->dur < 0)
		g->unfinished++;
	if (b->err.code != TM_OK)
		return;
	srec r;
	memset(&r, 0, sizeof r); /* its padding goes to the sort's files */
	r.machine_row = s->machine_row;
	r.has_name = s->name != NULL;
	r.name_len = (uint32_t)n;
	r.dur = s->dur;
	tm_xsort_part parts[2] = {{&r, sizeof r}, {s->name, (uint32_t)n}};
	tm_xsort_addv(b->sort, parts, 2, &b->err);
}

/* ---- writing ---------------------------------------------------------------- */

static void put_field(tm_buf *w, int64_t v, int known)
{
	tm_buf_put(w, "\t", 1);
	if (known)
		tm_buf_put_i64(w, v);
}

/* Each machine's file begins with the header. */
static void put_headers(tm_parts *out, const char *header)
{
	for (size_t i = 0; i < out->n; i++)
		tm_parts_put(out, i, header, strlen(header));
}

static void write_processes(tm_parts *out, const tm_model *model)
{
	tm_buf o = {0};
	put_headers(out, TM_PROCESSES_HEADER);
	for (size_t u = 0; u < tm_model_n_processes(model); u++) {
		const tm_mprocess *p = tm_model_process(model, u);
		if (p->machine_row >= out->n)
			continue;
		o.len = 0;
		tm_buf_put_i64(&o, p->pid);
		tm_buf_put(&o, "\t", 1);
		if (p->name)
			tm_buf_put_field(&o, p->name, strlen(p->name));
		put_field(&o, p->start_ts, p->start_ts >= 0);
		put_field(&o, p->end_ts, p->end_ts >= 0);
		const tm_mprocess *parent = p->parent_upid >= 0 && (size_t)p->parent_upid < tm_model_n_processes(model)
						    ? tm_model_process(model, (size_t)p->parent_upid)
						    : NULL;
		put_field(&o, parent ? parent->pid : 0, parent != NULL);
		tm_buf_put(&o, "\n", 1);
		tm_parts_put(out, p->machine_row, o.data, o.len);
	}
	tm_buf_free(&o);
}

static void write_threads(tm_parts *out, const tm_model *model, const tm_tables_build *b)
{
	size_t nt = tm_model_n_threads(model);
	track_sum *per = tm_xcalloc(nt ? nt : 1, sizeof(*per));
	for (size_t id = 0; id < b->tracks.n; id++) {
		const tm_mtrack *t = tm_model_track(model, (uint32_t)id);
		if (t->scope != TM_SCOPE_THREAD || t->utid < 0 || (size_t)t->utid >= nt)
			continue;
		per[t->utid].slices += b->tracks.v[id].slices;
		per[t->utid].busy += b->tracks.v[id].busy;
	}
	tm_buf o = {0};
	put_headers(out, TM_THREADS_HEADER);
	for (size_t u = 0; u < nt; u++) {
		const tm_mthread *th = tm_model_thread(model, u);
		if (th->machine_row >= out->n)
			continue;
		o.len = 0;
		tm_buf_put_i64(&o, th->tid);
		tm_buf_put(&o, "\t", 1);
		if (th->name)
			tm_buf_put_field(&o, th->name, strlen(th->name));
		const tm_mprocess *p = th->upid >= 0 && (size_t)th->upid < tm_model_n_processes(model)
					       ? tm_model_process(model, (size_t)th->upid)
					       : NULL;
		put_field(&o, p ? p->pid : 0, p != NULL);
		put_field(&o, th->start_ts, th->start_ts >= 0);
		put_field(&o, th->end_ts, th->end_ts >= 0);
		put_field(&o, (int64_t)per[u].slices, 1);
		put_field(&o, per[u].busy, 1);
		tm_buf_put(&o, "\n", 1);
		tm_parts_put(out, th->machine_row, o.data, o.len);
	}
	tm_buf_free(&o);
	free(per);
}

static int group_order(const void *a, const void *b)
{
	const group *x = *(group *const *)a, *y = *(group *const *)b;
	if (x->machine_row != y->machine_row)
		return x->machine_row < y->machine_row ? -1 : 1;
	if (x->total != y->total)
		return x->total > y->total ? -1 : 1;
	if ((x->name != NULL) != (y->name != NULL))
		return x->name ? 1 : -1;
	return bytes_cmp(x->name, x->name_len, y->name, y->name_len);
}

/* Stream the sorted durations: each group's ranks are known from its
 * counts, so nothing but the current group is held. */
static int slice_stats(tm_tables_build *b, tm_error *err)
{
	if (tm_xsort_finish(b->sort, err))
		return -1;
	group *g = NULL;
	uint64_t rank = 0, med = 0, p90 = 0;
	const void *p;
	uint32_t len;
	int k;
	while ((k = tm_xsort_next(b->sort, &p, &len, err)) == 1) {
		srec r;
		memcpy(&r, p, sizeof r);
		const char *name = r.has_name ? (const char *)p + sizeof r : NULL;
		if (!g || g->machine_row != r.machine_row || (g->name != NULL) != (name != NULL) ||
		    g->name_len != r.name_len || (name && memcmp(g->name, name, r.name_len) != 0)) {
			g = find_group(b, r.machine_row, name, r.name_len, 0);
			if (!g)
				return tm_err(err, TM_EIO, "slices.tsv: a temporary file reads back wrong");
			rank = 0;
			uint64_t done = g->count - g->unfinished;
			med = done ? (done - 1) / 2 : 0;
			p90 = done ? (done * 9 + 9) / 10 - 1 : 0; /* ceil(0.9 n) - 1 */
		}
		if (r.dur < 0)
			continue; /* unfinished: sorted first, counted apart */
		if (rank == 0)
			g->min = r.dur;
		if (rank == med)
			g->median = r.dur;
		if (rank == p90)
			g->p90 = r.dur;
		g->max = r.dur;
		g->total += r.dur;
		rank++;
	}
	return k < 0 ? -1 : 0;
}

static void write_slices(tm_parts *out, tm_tables_build *b)
{
	group **order = tm_xcalloc(b->n ? b->n : 1, sizeof(*order));
	size_t n = 0;
	for (size_t i = 0; i < b->n; i++)
		if (b->groups[i].count)
			order[n++] = &b->groups[i];
	qsort(order, n, sizeof(*order), group_order);
	tm_buf o = {0};
	put_headers(out, TM_SLICES_HEADER);
	for (size_t i = 0; i < n; i++) {
		const group *g = order[i];
		if (g->machine_row >= out->n)
			continue;
		o.len = 0;
		if (g->name)
			tm_buf_put_field(&o, g->name, g->name_len);
		int done = g->count > g->unfinished;
		put_field(&o, (int64_t)g->count, 1);
		put_field(&o, g->total, 1);
		put_field(&o, g->min, done);
		put_field(&o, g->median, done);
		put_field(&o, g->p90, done);
		put_field(&o, g->max, done);
		put_field(&o, (int64_t)g->unfinished, 1);
		tm_buf_put(&o, "\n", 1);
		tm_parts_put(out, g->machine_row, o.data, o.len);
	}
	tm_buf_free(&o);
	free(order);
}

/* profile.folded's sort record: the key, then text_len bytes of text, a
 * stack as one collapsed line's text: the frames' names from the root,
 * joined by ';' (a ';' or a control character inside a name written '_':
 * the format has no escape, and the text holds no NUL). */
typedef struct frec {
	uint32_t machine_row;
	uint32_t text_len;
	uint64_t count;
} frec;

/* By machine, then text as strcmp orders it (bytes, a prefix first). */
static int frec_cmp(const void *a, const void *b)
{
	frec x, y;
	memcpy(&x, a, sizeof x);
	memcpy(&y, b, sizeof y);
	if (x.machine_row != y.machine_row)
		return x.machine_row < y.machine_row ? -1 : 1;
	return bytes_cmp((const char *)a + sizeof x, x.text_len, (const char *)b + sizeof y, y.text_len);
}

static int frec_ok(const void *rec, uint32_t len)
{
	frec r;
	if (len < sizeof r)
		return 0;
	memcpy(&r, rec, sizeof r);
	return len == sizeof r + (uint64_t)r.text_len;
}

static char *stack_text(const tm_model *m, uint32_t leaf)
{
	size_t depth = 0;
	for (const tm_mcallsite *c = tm_model_callsite(m, leaf); c;
	     c = c->parent == TM_NO_CALLSITE ? NULL : tm_model_callsite(m, c->parent))
		depth++;
	const char **names = tm_xcalloc(depth ? depth : 1, sizeof *names);
	size_t k = depth;
	for (const tm_mcallsite *c = tm_model_callsite(m, leaf); c && k;
	     c = c->parent == TM_NO_CALLSITE ? NULL : tm_model_callsite(m, c->parent)) {
		const tm_mframe *f = tm_model_frame(m, c->frame);
		names[--k] = f && tm_mframe_text(f) ? tm_mframe_text(f) : "";
	}
	tm_buf o = {0};
	for (size_t i = 0; i < depth; i++) {
		if (i)
			tm_buf_putc(&o, ';');
		for (const char *p = names[i]; *p; p++)
			tm_buf_putc(&o, *p == ';' || (unsigned char)*p < 0x20 || *p == 0x7f ? '_' : *p);
	}
	tm_buf_putc(&o, '\0');
	free(names);
	return tm_buf_detach(&o, NULL);
}

/* A stack's text and count into the sort (0, or -1 with err set). */
static int fold_add(tm_xsort *x, const tm_model *m, uint32_t machine_row, uint32_t leaf, uint64_t count,
		    tm_error *err)
{
	char *text = stack_text(m, leaf);
	size_t n = strlen(text);
	int rc = 0;
	if (n > UINT32_MAX - sizeof(frec)) {
		rc = tm_err(err, TM_EINPUT, "profile.folded: a stack of %zu bytes is too large", n);
	} else {
		frec r = {machine_row, (uint32_t)n, count};
		tm_xsort_part parts[2] = {{&r, sizeof r}, {text, (uint32_t)n}};
		rc = tm_xsort_addv(x, parts, 2, err);
	}
	free(text);
	return rc;
}

/* A profile.folded line: the text and its count (o: scratch). */
static void fold_line(tm_parts *out, uint32_t row, const tm_buf *text, uint64_t count, tm_buf *o)
{
	o->len = 0;
	tm_buf_put(o, text->data ? text->data : "", text->len);
	char num[24];
	snprintf(num, sizeof num, " %" PRIu64 "\n", count);
	tm_buf_puts(o, num);
	tm_parts_put(out, row, o->data, o->len);
}

/* profile.folded: per machine, each distinct stack and its samples (a
 * collapsed stack's weight), ordered by text. The texts go through an
 * external sort: all of them held at once took 1.25 GB for a Gecko profile
 * of 490 KB whose stacks chain 32,000 deep. 0, or -1 with err set. */
static int write_profile(tm_parts *out, tm_tables_build *b, const tm_model *model, tm_error *err)
{
	tm_xsort *x = tm_xsort_new(frec_cmp, b->run_bytes);
	tm_xsort_set_check(x, frec_ok);
	int rc = 0;
	for (size_t i = 0; i < b->cap_stacks && rc == 0; i++) {
		const stack_count *c = &b->stacks[i];
		if (c->count && c->machine_row < out->n)
			rc = fold_add(x, model, c->machine_row, c->callsite, c->count, err);
	}
	/* collapsed stacks: a weight each, of no time */
	size_t na = tm_model_n_aggregates(model);
	for (size_t i = 0; i < na && rc == 0; i++) {
		const tm_maggregate *a = tm_model_aggregate(model, i);
		if (a->machine_row < out->n)
			rc = fold_add(x, model, a->machine_row, a->callsite, (uint64_t)a->value, err);
	}
	if (rc == 0)
		rc = tm_xsort_finish(x, err);
	/* equal texts of a machine are one line, their counts summed: a line
	 * goes out when the next text differs, the last at the end */
	tm_buf prev = {0}, o = {0};
	uint32_t prev_row = 0;
	uint64_t count = 0;
	int have = 0;
	const void *p;
	uint32_t len;
	int k = 0;
	while (rc == 0 && (k = tm_xsort_next(x, &p, &len, err)) == 1) {
		frec r;
		memcpy(&r, p, sizeof r);
		const char *text = (const char *)p + sizeof r;
		if (have && (r.machine_row != prev_row || bytes_cmp(text, r.text_len, prev.data, prev.len) != 0)) {
			fold_line(out, prev_row, &prev, count, &o);
			have = 0;
		}
		if (!have) {
			prev.len = 0;
			tm_buf_put(&prev, text, r.text_len);
			prev_row = r.machine_row;
			count = 0;
			have = 1;
		}
		count += r.count;
	}
	if (k < 0)
		rc = -1;
	else if (rc == 0 && have)
		fold_line(out, prev_row, &prev, count, &o);
	tm_buf_free(&prev);
	tm_buf_free(&o);
	tm_xsort_free(x);
	return rc;
}

/* heap.tsv: per machine, each class name of its heap dumps with its
 * objects and their self sizes (a name loaded twice, or in two dumps, one
 * line), by bytes descending, then objects descending, then name; a class
 * without objects is left out, as jmap -histo leaves it. */
typedef struct heap_line {
	uint32_t machine_row;
	const char *name;
	size_t name_n;
	uint64_t objects;
	int64_t bytes;
} heap_line;

static int heap_by_name(const void *a, const void *b)
{
	const heap_line *x = a, *y = b;
	if (x->machine_row != y->machine_row)
		return x->machine_row < y->machine_row ? -1 : 1;
	return bytes_cmp(x->name, x->name_n, y->name, y->name_n);
}

static int heap_by_size(const void *a, const void *b)
{
	const heap_line *x = a, *y = b;
	if (x->machine_row != y->machine_row)
		return x->machine_row < y->machine_row ? -1 : 1;
	if (x->bytes != y->bytes)
		return x->bytes > y->bytes ? -1 : 1;
	if (x->objects != y->objects)
		return x->objects > y->objects ? -1 : 1;
	return heap_by_name(a, b);
}

static void write_heap(tm_parts *out, const tm_model *model)
{
	put_headers(out, TM_HEAP_HEADER);
	size_t nc = tm_model_n_heap_classes(model), n = 0;
	heap_line *h = tm_xcalloc(nc ? nc : 1, sizeof *h);
	for (size_t i = 0; i < nc; i++) {
		const tm_mheap_class *c = tm_model_heap_class(model, i);
		if (!c->objects || c->machine_row >= out->n)
			continue;
		size_t len;
		const char *name = tm_model_string(model, c->name, &len);
		h[n++] = (heap_line){c->machine_row, name ? name : "", name ? len : 0, c->objects, c->bytes};
	}
	qsort(h, n, sizeof *h, heap_by_name);
	size_t m = 0;
	for (size_t i = 0; i < n; i++) {
		if (m && heap_by_name(&h[m - 1], &h[i]) == 0) {
			h[m - 1].objects += h[i].objects;
			/* in two's complement: a sum past INT64_MAX wraps rather
			 * than overflows */
			h[m - 1].bytes = (int64_t)((uint64_t)h[m - 1].bytes + (uint64_t)h[i].bytes);
		} else {
			h[m++] = h[i];
		}
	}
	qsort(h, m, sizeof *h, heap_by_size);
	tm_buf o = {0};
	for (size_t i = 0; i < m; i++) {
		o.len = 0;
		tm_buf_put_field(&o, h[i].name, h[i].name_n);
		char num[48];
		snprintf(num, sizeof num, "\t%" PRIu64 "\t%" PRId64 "\n", h[i].objects, h[i].bytes);
		tm_buf_puts(&o, num);
		tm_parts_put(out, h[i].machine_row, o.data, o.len);
	}
	tm_buf_free(&o);
	free(h);
}

tm_tables *tm_tables_finish(tm_tables_build *b, const tm_model *model, tm_error *err)
{
	size_t nm = b->scan->machines.n;
	enum { N_FILES = 5 };
	tm_parts out[N_FILES];
	for (int f = 0; f < N_FILES; f++) {
		memset(&out[f], 0, sizeof out[f]);
		out[f].file.fd = -1;
	}
	static const char *const what[N_FILES] = {"processes.tsv", "threads.tsv", "slices.tsv", "profile.folded",
						     "heap.tsv"};
	tm_tables *res = NULL;
	if (b->err.code != TM_OK) {
		*err = b->err;
		goto out;
	}
	if (slice_stats(b, err))
		goto out;
	for (int f = 0; f < N_FILES; f++)
		if (tm_parts_open(&out[f], nm, err))
			goto out;
	write_processes(&out[0], model);
	write_threads(&out[1], model, b);
	write_slices(&out[2], b);
	if (write_profile(&out[3], b, model, err))
		goto out;
	write_heap(&out[4], model);
	for (int f = 0; f < N_FILES; f++)
		if (tm_parts_finish(&out[f], what[f], err))
			goto out;
	res = tm_xcalloc(1, sizeof(*res));
	res->processes = tm_spooled_take(NULL, &out[0]);
	res->threads = tm_spooled_take(NULL, &out[1]);
	res->slices = tm_spooled_take(NULL, &out[2]);
	res->profile = tm_spooled_take(NULL, &out[3]);
	res->heap = tm_spooled_take(NULL, &out[4]);
out:
	for (int f = 0; f < N_FILES; f++)
		tm_parts_close(&out[f]);
	tm_tables_abort(b);
	return res;
}

void tm_tables_abort(tm_tables_build *b)
{
	if (!b)
		return;
	tm_xsort_free(b->sort);
	for (size_t i = 0; i < b->n; i++)
		free(b->groups[i].name);
	free(b->groups);
	free(b->slots);
	free(b->tracks.v);
	free(b->stacks);
	free(b);
}

void tm_tables_free(tm_tables *t)
{
	if (!t)
		return;
	tm_spooled_free(t->processes);
	tm_spooled_free(t->threads);
	tm_spooled_free(t->slices);
	tm_spooled_free(t->profile);
	tm_spooled_free(t->heap);
	free(t);
}
