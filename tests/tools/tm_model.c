/* tests/tools/tm_model.c - run the model (core/model/model.h) over an archive and
 * print its tables as tab-separated lines, one table after another, each
 * line starting with the table's name, in the columns of the reference's
 * rows in tests/interop/tables.sql:
 *
 *   slice    name ts dur category depth machine kind      (dur != 0)
 *   instant  name ts category depth machine kind          (dur 0)
 *   thread   machine tid name
 *   process  machine pid name
 *   counter  machine track cpu ts value   (cpu \N: not a CPU's counter)
 *   sched    machine ts dur cpu tid end_state
 *   flow     out_name out_ts in_name in_ts machine
 *   stat     name value
 *
 * Machines are shown by name (\N when unnamed, as the reference); a
 * track's kind is the dimension it hangs off (thread, process, cpu,
 * global). Strings are escaped as tables.sql's tm_s does (\\, \t, \n),
 * "\N" for null. tests/interop/model.sh compares these tables with the
 * reference's import of the same archive, tests/t_model.sh with the
 * model's own import of merged.pftrace.
 *
 *   tm_model ARCHIVE
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "input/merge.h"
#include "model/model.h"
#include "pass/run.h"
#include "formats/registry.h"
#include "scan/scan.h"
#include "util/tm.h"

typedef struct sl {
	uint64_t id;
	int64_t ts;
	char *name;
} sl;

/* Slices and counters need the track table, which is complete only at the
 * end: keep the rows until then. */
typedef struct row {
	char kind; /* 's' slice, 'c' counter */
	int64_t ts, dur;
	uint32_t track, depth, machine_row;
	double value;
	char *name, *cat;
} row;

typedef struct state {
	tm_scan *scan;
	sl *slices;
	size_t n, cap;
	row *rows;
	size_t n_rows, cap_rows;
	tm_mflow *flows;
	size_t n_flows, cap_flows;
	tm_msched *sched;
	size_t n_sched, cap_sched;
	tm_buf out;
} state;

static const char *mach(const state *s, uint32_t r)
{
	if (r < s->scan->machines.n && s->scan->machines.rows[r].name)
		return s->scan->machines.rows[r].name;
	return NULL;
}

/* tables.sql's tm_s: \ -> \\, tab -> \t, newline -> \n; NULL -> \N */
static void put(tm_buf *b, const char *str)
{
	if (!str) {
		tm_buf_puts(b, "\\N");
		return;
	}
	for (const char *p = str; *p; p++) {
		if (*p == '\\')
			tm_buf_puts(b, "\\\\");
		else if (*p == '\t')
			tm_buf_puts(b, "\\t");
		else if (*p == '\n')
			tm_buf_puts(b, "\\n");
		else
			tm_buf_put(b, p, 1);
	}
}

static const char *scope_name(tm_mtrack_scope sc)
{
	static const char *const n[] = {"thread", "process", "global", "cpu"};
	return n[sc];
}

static void on_slice(void *ctx, const tm_mslice *x)
{
	state *s = ctx;
	TM_GROW(s->slices, s->cap, s->n + 1);
	s->slices[s->n++] = (sl){x->id, x->ts, x->name ? tm_xstrdup(x->name) : NULL};
	TM_GROW(s->rows, s->cap_rows, s->n_rows + 1);
	s->rows[s->n_rows++] = (row){'s', x->ts, x->dur, x->track, x->depth, x->machine_row, 0,
				     x->name ? tm_xstrdup(x->name) : NULL,
				     x->category ? tm_xstrdup(x->category) : NULL};
}

static void on_counter(void *ctx, const tm_mcounter *c)
{
	state *s = ctx;
	TM_GROW(s->rows, s->cap_rows, s->n_rows + 1);
	s->rows[s->n_rows++] = (row){'c', c->ts, 0, c->track, 0, c->machine_row, c->value, NULL, NULL};
}

static void on_flow(void *ctx, const tm_mflow *f)
{
	state *s = ctx;
	TM_GROW(s->flows, s->cap_flows, s->n_flows + 1);
	s->flows[s->n_flows++] = *f;
}

static void on_sched(void *ctx, const tm_msched *x)
{
	state *s = ctx;
	TM_GROW(s->sched, s->cap_sched, s->n_sched + 1);
	s->sched[s->n_sched] = *x;
	/* strings live for the callback only */
	s->sched[s->n_sched++].end_state = x->end_state ? tm_xstrdup(x->end_state) : NULL;
}

static int by_id(const void *a, const void *b)
{
	const sl *x = a, *y = b;
	return x->id < y->id ? -1 : x->id > y->id;
}

static const sl *slice_of(const state *s, uint64_t id)
{
	size_t lo = 0, hi = s->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (s->slices[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < s->n && s->slices[lo].id == id ? &s->slices[lo] : NULL;
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: tm_model ARCHIVE\n");
		return 2;
	}
	tm_error err = {0};
	tm_merge *m = tm_merge_open(argv[1], &err);
	if (!m) {
		fprintf(stderr, "%s\n", err.msg);
		return 1;
	}
	state s = {0};
	s.scan = tm_scan_run(m, NULL);
	if (s.scan->failed) {
		fprintf(stderr, "%s\n", s.scan->err.msg);
		return 1;
	}
	tm_model_sink sink = {.ctx = &s, .slice = on_slice, .counter = on_counter, .flow = on_flow,
			      .sched = on_sched};
	tm_model *md = tm_model_run(m, &sink, NULL, 1, 0, &err);
	if (!md) {
		fprintf(stderr, "%s\n", err.msg);
		return 1;
	}
	tm_buf *o = &s.out;
	for (size_t i = 0; i < s.n_rows; i++) {
		const row *r = &s.rows[i];
		const tm_mtrack *t = tm_model_track(md, r->track);
		if (r->kind == 's') {
			tm_buf_puts(o, r->dur ? "slice\t" : "instant\t");
			put(o, r->name);
			tm_buf_printf(o, "\t%" PRId64 "\t", r->ts);
			if (r->dur)
				tm_buf_printf(o, "%" PRId64 "\t", r->dur);
			put(o, r->cat);
			tm_buf_printf(o, "\t%u\t", r->depth);
			put(o, mach(&s, r->machine_row));
			tm_buf_printf(o, "\t%s", scope_name(t->scope));
		} else {
			tm_buf_puts(o, "counter\t");
			put(o, mach(&s, r->machine_row));
			tm_buf_puts(o, "\t");
			put(o, t->name);
			if (t->scope == TM_SCOPE_CPU && t->cpu >= 0)
				tm_buf_printf(o, "\t%" PRId64, t->cpu);
			else
				tm_buf_puts(o, "\t\\N");
			tm_buf_printf(o, "\t%" PRId64 "\t%.17g", r->ts, r->value);
		}
		tm_buf_puts(o, "\n");
	}
	for (size_t i = 0; i < tm_model_n_threads(md); i++) {
		const tm_mthread *t = tm_model_thread(md, i);
		tm_buf_puts(o, "thread\t");
		put(o, mach(&s, t->machine_row));
		tm_buf_printf(o, "\t%" PRId64 "\t", t->tid);
		put(o, t->name);
		tm_buf_puts(o, "\n");
	}
	for (size_t i = 0; i < tm_model_n_processes(md); i++) {
		const tm_mprocess *p = tm_model_process(md, i);
		tm_buf_puts(o, "process\t");
		put(o, mach(&s, p->machine_row));
		tm_buf_printf(o, "\t%" PRId64 "\t", p->pid);
		put(o, p->name);
		tm_buf_puts(o, "\n");
	}
	for (size_t i = 0; i < s.n_sched; i++) {
		const tm_msched *x = &s.sched[i];
		const tm_mthread *t = tm_model_thread(md, (size_t)x->utid);
		tm_buf_puts(o, "sched\t");
		put(o, mach(&s, x->machine_row));
		tm_buf_printf(o, "\t%" PRId64 "\t%" PRId64 "\t%u\t%" PRId64 "\t", x->ts, x->dur, x->cpu, t ? t->tid : -1);
		put(o, x->end_state);
		tm_buf_puts(o, "\n");
	}
	if (s.n)
		qsort(s.slices, s.n, sizeof(*s.slices), by_id);
	for (size_t i = 0; i < s.n_flows; i++) {
		const tm_mflow *f = &s.flows[i];
		const sl *a = slice_of(&s, f->slice_out), *b = slice_of(&s, f->slice_in);
		tm_buf_puts(o, "flow\t");
		put(o, a ? a->name : "?");
		tm_buf_printf(o, "\t%" PRId64 "\t", a ? a->ts : -1);
		put(o, b ? b->name : "?");
		tm_buf_printf(o, "\t%" PRId64 "\t", b ? b->ts : -1);
		put(o, mach(&s, f->machine_row));
		tm_buf_puts(o, "\n");
	}
	/* in total, by name in first-count order */
	const tm_statlist *fs = tm_model_file_stats(md);
	tm_statlist total = {0};
	for (size_t i = 0; i < fs->n; i++)
		tm_statlist_add(&total, 0, 0, fs->v[i].name, -1, fs->v[i].value);
	for (size_t i = 0; i < total.n; i++)
		tm_buf_printf(o, "stat\t%s\t%" PRId64 "\n", total.v[i].name, total.v[i].value);
	tm_statlist_free(&total);
	fwrite(o->data ? o->data : "", 1, o->len, stdout);
	tm_model_free(md);
	tm_scan_free(s.scan);
	tm_merge_free(m);
	for (size_t i = 0; i < s.n; i++)
		free(s.slices[i].name);
	free(s.slices);
	for (size_t i = 0; i < s.n_rows; i++) {
		free(s.rows[i].name);
		free(s.rows[i].cat);
	}
	free(s.rows);
	free(s.flows);
	for (size_t i = 0; i < s.n_sched; i++)
		free((char *)s.sched[i].end_state);
	free(s.sched);
	tm_buf_free(&s.out);
	return 0;
}
