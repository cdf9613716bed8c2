/* core/pass/gen.c - one model run feeding the exporter, the timeline and the
 * tables. */
#include "pass/gen.h"

#include <stdlib.h>

#include "model/model.h"
#include "formats/registry.h"
#include "pass/run.h"

typedef struct gen_ctx {
	tm_export_build *x;
	tm_timeline_build *tl;
	tm_tables_build *tb;
	/* the builders to make once the pass's own scan is done
	 * (tm_gen_build_scanning) */
	tm_merge *m;
	unsigned wants;
	size_t sort_bytes;
	int timeline_fd;
	const tm_gen_scanned *scanned;
	const tm_gen_watch *watch;
} gen_ctx;

static void on_packet(void *ctx, const tm_packet_out *po)
{
	gen_ctx *g = ctx;
	tm_export_packet(g->x, po);
}

static void on_progress(void *ctx, const tm_scan_progress *p)
{
	gen_ctx *g = ctx;
	g->scanned->progress->progress(g->scanned->progress->ctx, p);
}

static void report(const gen_ctx *g, int phase, uint64_t done, uint64_t total, const char *file)
{
	tm_gen_progress p = {phase, done, total, file};
	g->watch->fn(g->watch->ctx, &p);
}

/* The pass's own reading of the traces (a pass after the scan). */
static void on_reading(void *ctx, const tm_scan_progress *p)
{
	report(ctx, TM_GEN_READING, p->done, p->total, p->file);
}

static void on_replayed(void *ctx, uint64_t done, uint64_t total)
{
	report(ctx, TM_GEN_ORDERING, done, total, NULL);
}

static void on_written(void *ctx, uint64_t done, uint64_t total)
{
	report(ctx, TM_GEN_WRITING, done, total, NULL);
}

/* On the thread that feeds the model's: g->x was made before the replay
 * and is not changed by it (tm_model_sink.prepare). */
static size_t on_prepare(void *ctx, int64_t ts, const tm_mrec_head *h, const void *event, tm_buf *b)
{
	gen_ctx *g = ctx;
	return g->x ? tm_export_prepare(g->x, ts, h, event, b) : 0;
}

static void on_observed(void *ctx, const tm_mobserved *o)
{
	gen_ctx *g = ctx;
	tm_export_observed(g->x, o);
}

static void on_slice(void *ctx, const tm_mslice *s)
{
	gen_ctx *g = ctx;
	if (g->tl)
		tm_timeline_slice(g->tl, s);
	if (g->tb)
		tm_tables_slice(g->tb, s);
}

static void on_counter(void *ctx, const tm_mcounter *c)
{
	gen_ctx *g = ctx;
	if (g->x)
		tm_export_counter(g->x, c);
	if (g->tl)
		tm_timeline_counter(g->tl, c);
}

static void on_sched(void *ctx, const tm_msched *s)
{
	gen_ctx *g = ctx;
	tm_timeline_sched(g->tl, s);
}

static void on_kernel(void *ctx, const tm_mkernel *k)
{
	gen_ctx *g = ctx;
	tm_timeline_kernel(g->tl, k);
}

static void on_sample(void *ctx, const tm_msample *s)
{
	gen_ctx *g = ctx;
	if (g->tl)
		tm_timeline_sample(g->tl, s);
	if (g->tb)
		tm_tables_sample(g->tb, s);
}

/* The pass's memory for putting records in order and for sorting the
 * timeline and the slice statistics: one budget (issue 10: 64 MB of peak
 * RSS whatever the input) that the sorts wanted share with the order.
 * The model's own tables grow with the machines (reserved tracks, clock
 * graphs, open slices: 25 MB for the proto bench's 190): with 12 MB for
 * the order and 16 for the timeline's sort that pass peaked at 76 MB;
 * with 8 and 8 at 64 MB, in the same time (the order's records are
 * compact, and what it holds beyond them is read back sequentially).
 * Alone, the order had 32 MB: metadata.json's pass over the proto bench
 * then peaked at 74 MB. With 16 it peaks at 60 MB in the same 1.0 s
 * (JSON's merged.pftrace 46 -> 32 MB, systrace's 53 -> 39 MB, the same
 * times; 5 to 9 MB more of TMPDIR). Where files are many a larger budget
 * still pays, in larger reads of the piles: metadata.json of 500 proto
 * files on one machine takes 2.85 s with 32, 3.14 s with 16, 3.15 s
 * with 8. */
#define GEN_ORDER_ALONE (16u * 1024u * 1024u)
#define GEN_ORDER_SHARED (8u * 1024u * 1024u)
#define GEN_SORTS (8u * 1024u * 1024u)

/* The builders of the families in `wants`, for the scan's results (an
 * exporter made before the scan gets them now). */
static int gen_open(gen_ctx *g, tm_merge *m, const tm_scan *scan, unsigned wants, size_t sort_bytes, tm_error *err)
{
	if (g->x && tm_export_attach(g->x, scan, err) != 0)
		return -1;
	int per_machine = !(wants & TM_GEN_TOP);
	if ((wants & TM_GEN_PFTRACE) && !g->x && !(g->x = tm_export_new(m, scan, per_machine, err)))
		return -1;
	if (wants & TM_GEN_TIMELINE) {
		g->tl = tm_timeline_new(m, scan, per_machine, sort_bytes, g->timeline_fd);
		if (g->watch)
			tm_timeline_watch(g->tl, on_written, g);
	}
	if (wants & TM_GEN_TABLES)
		g->tb = tm_tables_new(scan, sort_bytes);
	return 0;
}

/* tm_model_scanned: the results go to the caller; the builders are made
 * for them before the first record reaches the model. */
static int gen_scanned(void *ctx, tm_scan *s, tm_error *err)
{
	gen_ctx *g = ctx;
	int failed = s->failed;
	g->scanned->fn(g->scanned->ctx, s);
	return failed ? 0 : gen_open(g, g->m, s, g->wants, g->sort_bytes, err);
}

static void observed_nothing(void *ctx, const tm_mobserved *o)
{
	(void)ctx;
	(void)o;
}

/* The pid of each thread's process at the end of the model's run (-1 for
 * none), by utid, from a run of its own before the pass: what
 * tm_export_thread_pids needs, only for a merge where an strace thread may
 * get its process from another file after its first event. The run makes
 * the records the pass makes for merged.pftrace (an observer), so its
 * threads are the pass's, row for row. NULL with err set on failure. */
static int64_t *thread_pids_to_come(tm_merge *m, size_t order_bytes, size_t *n, tm_error *err)
{
	tm_model_sink sink = {.observed = observed_nothing};
	tm_model *md = tm_model_run(m, &sink, NULL, 1, order_bytes, err);
	if (!md)
		return NULL;
	*n = tm_model_n_threads(md);
	int64_t *pids = tm_xmalloc((*n ? *n : 1) * sizeof(*pids));
	for (size_t i = 0; i < *n; i++) {
		const tm_mthread *th = tm_model_thread(md, i);
		pids[i] = th->upid >= 0 ? tm_model_process(md, (size_t)th->upid)->pid : -1;
	}
	tm_model_free(md);
	return pids;
}

/* `scan` NULL: the pass's own scan is the scan (tm_gen_build_scanning). */
static tm_gen *gen_build(tm_merge *m, const tm_scan *scan, unsigned wants, size_t run_bytes, int timeline_fd,
			 const tm_gen_scanned *scanned, const tm_gen_watch *gw, tm_error *err)
{
	gen_ctx g = {.m = m, .wants = wants, .scanned = scanned, .timeline_fd = timeline_fd, .watch = gw};
	tm_gen *res = NULL;
	tm_model *model = NULL;
	unsigned sorts = !!(wants & TM_GEN_TIMELINE) + !!(wants & TM_GEN_TABLES);
	size_t order_bytes = sorts ? GEN_ORDER_SHARED : GEN_ORDER_ALONE;
	g.sort_bytes = run_bytes ? run_bytes : sorts ? GEN_SORTS / sorts : 0;
	if (scan && gen_open(&g, m, scan, wants, g.sort_bytes, err) != 0)
		goto fail;
	/* only the sinks something wanted listens to: the model skips the
	 * rows nobody reads */
	tm_scan_sink pass = {.ctx = &g, .packet = on_packet};
	tm_model_sink ms = {.ctx = &g,
			    .slice = wants & (TM_GEN_TIMELINE | TM_GEN_TABLES) ? on_slice : NULL,
			    .counter = wants & (TM_GEN_PFTRACE | TM_GEN_TIMELINE) ? on_counter : NULL,
			    .sched = wants & TM_GEN_TIMELINE ? on_sched : NULL,
			    .kernel = wants & TM_GEN_TIMELINE ? on_kernel : NULL,
			    .sample = wants & (TM_GEN_TIMELINE | TM_GEN_TABLES) ? on_sample : NULL,
			    .observed = wants & TM_GEN_PFTRACE ? on_observed : NULL,
			    .prepare = wants & TM_GEN_PFTRACE ? on_prepare : NULL,
			    .replayed = gw ? on_replayed : NULL};
	/* merged.pftrace alone needs the model only to convert the events
	 * of formats with an encoder (and, at the end, the names and
	 * associations those gave threads): without such input its records
	 * are not made */
	int records = (wants & (TM_GEN_TIMELINE | TM_GEN_TABLES | TM_GEN_STATS)) || tm_encoders_used(&tm_encoders_all, m);
	int64_t *pids = NULL;
	size_t n_pids = 0;
	if ((wants & TM_GEN_PFTRACE) && records && tm_export_wants_thread_pids(m) &&
	    !(pids = thread_pids_to_come(m, order_bytes, &n_pids, err)))
		goto fail;
	if (scanned && (wants & TM_GEN_PFTRACE)) {
		/* kept proto packets wait for the scan's results in the
		 * exporter (or, with the machine ids known before, only the
		 * header does). An exporter that cannot start now is tried
		 * again once the scan is done (gen_open), which fails with the
		 * reason then: the caller still gets the scan. */
		tm_error later;
		g.x = tm_export_new_deferred(m, !(wants & TM_GEN_TOP), &later);
	}
	if (g.x && pids)
		tm_export_thread_pids(g.x, pids, n_pids);
	else
		free(pids);
	if (scanned) {
		/* the scan's progress is the caller's */
		pass.packet = g.x ? on_packet : NULL;
		pass.progress = scanned->progress ? on_progress : NULL;
		tm_model_scanned sc = {&g, gen_scanned};
		model = tm_model_run_scanned(m, &ms, &pass, records, order_bytes, &sc, err);
	} else {
		if (!g.x)
			pass.packet = NULL;
		pass.progress = gw ? on_reading : NULL;
		model = tm_model_run(m, &ms, g.x || gw ? &pass : NULL, records, order_bytes, err);
	}
	if (!model)
		goto fail;
	res = tm_xcalloc(1, sizeof(*res));
	if (records) {
		res->stats = tm_xcalloc(1, sizeof(*res->stats));
		tm_statlist_merge(res->stats, tm_model_file_stats(model));
	}
	if (g.x) {
		res->pftrace = tm_export_finish(g.x, model, err);
		g.x = NULL;
		if (!res->pftrace)
			goto fail;
	}
	if (g.tl) {
		res->timeline = tm_timeline_finish(g.tl, model, err);
		g.tl = NULL;
		if (!res->timeline)
			goto fail;
	}
	if (g.tb) {
		res->tables = tm_tables_finish(g.tb, model, err);
		g.tb = NULL;
		if (!res->tables)
			goto fail;
	}
	/* a timeline read later makes its lines with the model's tables */
	if (!tm_timeline_hold_model(res->timeline, model))
		tm_model_free(model);
	return res;
fail:
	tm_export_abort(g.x);
	tm_timeline_abort(g.tl);
	tm_tables_abort(g.tb);
	tm_model_free(model);
	tm_gen_free(res);
	return NULL;
}

tm_gen *tm_gen_build(tm_merge *m, const tm_scan *scan, unsigned wants, size_t run_bytes, int timeline_fd,
		     const tm_gen_watch *watch, tm_error *err)
{
	return gen_build(m, scan, wants, run_bytes, timeline_fd, NULL, watch, err);
}

tm_gen *tm_gen_build_scanning(tm_merge *m, unsigned wants, size_t run_bytes, int timeline_fd,
			      const tm_gen_scanned *scanned, const tm_gen_watch *watch, tm_error *err)
{
	return gen_build(m, NULL, wants, run_bytes, timeline_fd, scanned, watch, err);
}

void tm_gen_free(tm_gen *g)
{
	if (!g)
		return;
	tm_export_free(g->pftrace);
	tm_spooled_free(g->timeline);
	tm_tables_free(g->tables);
	if (g->stats)
		tm_statlist_free(g->stats);
	free(g->stats);
	free(g);
}
