/* tests/tools/tm_model.c - run the model (core/model.h) over an archive and
 * print its tables as tab-separated lines, one table after another, each
 * line starting with the table's name:
 *
 *   slice    machine ts dur depth scope name category
 *   thread   machine tid name
 *   process  machine pid name
 *   counter  machine track ts value
 *   flow     machine out_name out_ts in_name in_ts
 *   sched    machine ts dur cpu tid end_state
 *   stat     name value
 *
 * Machines are shown by name (\N when unnamed, as the reference). Strings
 * are printed as they are, "\N" for null. tests/interop compares these
 * tables with the reference's import of the same archive.
 *
 *   tm_model ARCHIVE
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "merge.h"
#include "model.h"
#include "scan.h"
#include "tm.h"

typedef struct sl {
	uint64_t id;
	int64_t ts;
	char *name;
} sl;

typedef struct state {
	tm_scan *scan;
	sl *slices;
	size_t n, cap;
	tm_buf out;
	tm_model *model;
} state;

static const char *mach(const state *s, uint32_t row)
{
	if (row < s->scan->machines.n && s->scan->machines.rows[row].name)
		return s->scan->machines.rows[row].name;
	return "\\N";
}

static void put(tm_buf *b, const char *str)
{
	tm_buf_puts(b, str ? str : "\\N");
}

static const char *scope_name(tm_mtrack_scope sc)
{
	static const char *const n[] = {"thread", "process", "global", "cpu"};
	return n[sc];
}

/* Slices and counters need the track table, which is complete only at the
 * end: keep the rows until then. */
typedef struct row {
	char kind; /* 's' slice, 'c' counter */
	int64_t ts, dur;
	uint32_t track, depth, machine_row;
	double value;
	char *name, *cat;
} row;

static row *rows;
static size_t n_rows, cap_rows;

static void on_slice(void *ctx, const tm_mslice *x)
{
	state *s = ctx;
	TM_GROW(s->slices, s->cap, s->n + 1);
	s->slices[s->n++] = (sl){x->id, x->ts, x->name ? tm_xstrdup(x->name) : NULL};
	TM_GROW(rows, cap_rows, n_rows + 1);
	rows[n_rows++] = (row){'s', x->ts, x->dur, x->track, x->depth, x->machine_row, 0,
			       x->name ? tm_xstrdup(x->name) : NULL, x->category ? tm_xstrdup(x->category) : NULL};
}

static void on_counter(void *ctx, const tm_mcounter *c)
{
	(void)ctx;
	TM_GROW(rows, cap_rows, n_rows + 1);
	rows[n_rows++] = (row){'c', c->ts, 0, c->track, 0, c->machine_row, c->value, NULL, NULL};
}

typedef struct fl {
	tm_mflow f;
} fl;
static fl *flows;
static size_t n_flows, cap_flows;

static void on_flow(void *ctx, const tm_mflow *f)
{
	(void)ctx;
	TM_GROW(flows, cap_flows, n_flows + 1);
	flows[n_flows++].f = *f;
}

static void on_sched(void *ctx, const tm_msched *x)
{
	state *s = ctx;
	tm_buf_printf(&s->out, "sched\t%s\t%" PRId64 "\t%" PRId64 "\t%u\t%" PRId64 "\t", mach(s, x->machine_row), x->ts,
		      x->dur, x->cpu, x->utid);
	put(&s->out, x->end_state);
	tm_buf_puts(&s->out, "\n");
}

static const char *slice_name(const state *s, uint64_t id, int64_t *ts)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->slices[i].id == id) {
			*ts = s->slices[i].ts;
			return s->slices[i].name;
		}
	*ts = -1;
	return "?";
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
	tm_model *md = tm_model_run(m, &sink, NULL, &err);
	if (!md) {
		fprintf(stderr, "%s\n", err.msg);
		return 1;
	}
	for (size_t i = 0; i < n_rows; i++) {
		const row *r = &rows[i];
		const tm_mtrack *t = tm_model_track(md, r->track);
		if (r->kind == 's') {
			tm_buf_printf(&s.out, "slice\t%s\t%" PRId64 "\t%" PRId64 "\t%u\t%s\t", mach(&s, r->machine_row), r->ts,
				      r->dur, r->depth, scope_name(t->scope));
			put(&s.out, r->name);
			tm_buf_puts(&s.out, "\t");
			put(&s.out, r->cat);
		} else {
			tm_buf_printf(&s.out, "counter\t%s\t", mach(&s, r->machine_row));
			put(&s.out, t->name);
			tm_buf_printf(&s.out, "\t%" PRId64 "\t%.17g", r->ts, r->value);
		}
		tm_buf_puts(&s.out, "\n");
	}
	for (size_t i = 0; i < tm_model_n_threads(md); i++) {
		const tm_mthread *t = tm_model_thread(md, i);
		tm_buf_printf(&s.out, "thread\t%s\t%" PRId64 "\t", mach(&s, t->machine_row), t->tid);
		put(&s.out, t->name);
		tm_buf_puts(&s.out, "\n");
	}
	for (size_t i = 0; i < tm_model_n_processes(md); i++) {
		const tm_mprocess *p = tm_model_process(md, i);
		tm_buf_printf(&s.out, "process\t%s\t%" PRId64 "\t", mach(&s, p->machine_row), p->pid);
		put(&s.out, p->name);
		tm_buf_puts(&s.out, "\n");
	}
	for (size_t i = 0; i < n_flows; i++) {
		const tm_mflow *f = &flows[i].f;
		int64_t t1, t2;
		const char *n1 = slice_name(&s, f->slice_out, &t1), *n2 = slice_name(&s, f->slice_in, &t2);
		tm_buf_printf(&s.out, "flow\t%s\t", mach(&s, f->machine_row));
		put(&s.out, n1);
		tm_buf_printf(&s.out, "\t%" PRId64 "\t", t1);
		put(&s.out, n2);
		tm_buf_printf(&s.out, "\t%" PRId64 "\n", t2);
	}
	for (size_t i = 0; i < tm_model_n_stats(md); i++) {
		int64_t v;
		const char *n = tm_model_stat(md, i, &v);
		tm_buf_printf(&s.out, "stat\t%s\t%" PRId64 "\n", n, v);
	}
	fwrite(s.out.data ? s.out.data : "", 1, s.out.len, stdout);
	tm_model_free(md);
	tm_scan_free(s.scan);
	tm_merge_free(m);
	for (size_t i = 0; i < s.n; i++)
		free(s.slices[i].name);
	free(s.slices);
	for (size_t i = 0; i < n_rows; i++) {
		free(rows[i].name);
		free(rows[i].cat);
	}
	free(rows);
	free(flows);
	tm_buf_free(&s.out);
	return 0;
}
