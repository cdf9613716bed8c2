/* core/gen.c - one model run feeding the exporter, the timeline and the
 * tables. */
#include "gen.h"

#include <stdlib.h>

#include "model.h"

typedef struct gen_ctx {
	tm_export_build *x;
	tm_timeline_build *tl;
	tm_tables_build *tb;
} gen_ctx;

static void on_packet(void *ctx, const tm_packet_out *po)
{
	gen_ctx *g = ctx;
	tm_export_packet(g->x, po);
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

/* The pass's memory for putting records in order and for sorting the
 * timeline and the slice statistics: one budget (issue 10: 64 MB of peak
 * RSS whatever the input) that the sorts wanted share with the order. */
#define GEN_ORDER_ALONE (32u * 1024u * 1024u)
#define GEN_ORDER_SHARED (12u * 1024u * 1024u)
#define GEN_SORTS (16u * 1024u * 1024u)

tm_gen *tm_gen_build(tm_merge *m, const tm_scan *scan, unsigned wants, size_t run_bytes, tm_error *err)
{
	gen_ctx g = {0};
	tm_gen *res = NULL;
	tm_model *model = NULL;
	unsigned sorts = !!(wants & TM_GEN_TIMELINE) + !!(wants & TM_GEN_TABLES);
	size_t order_bytes = sorts ? GEN_ORDER_SHARED : GEN_ORDER_ALONE;
	size_t sort_bytes = run_bytes ? run_bytes : sorts ? GEN_SORTS / sorts : 0;
	if ((wants & TM_GEN_PFTRACE) && !(g.x = tm_export_new(m, scan, err)))
		return NULL;
	if (wants & TM_GEN_TIMELINE)
		g.tl = tm_timeline_new(m, scan, sort_bytes);
	if (wants & TM_GEN_TABLES)
		g.tb = tm_tables_new(scan, sort_bytes);
	/* only the sinks something wanted listens to: the model skips the
	 * rows nobody reads */
	tm_scan_sink pass = {.ctx = &g, .packet = on_packet};
	tm_model_sink ms = {.ctx = &g,
			    .slice = g.tl || g.tb ? on_slice : NULL,
			    .counter = g.x || g.tl ? on_counter : NULL,
			    .sched = g.tl ? on_sched : NULL,
			    .kernel = g.tl ? on_kernel : NULL,
			    .observed = g.x ? on_observed : NULL};
	/* merged.pftrace alone needs the model only to convert JSON and
	 * systrace events (and, at the end, the names and associations those
	 * gave threads): without such input its records are not made */
	int records = (wants & (TM_GEN_TIMELINE | TM_GEN_TABLES)) || tm_merge_has_text(m);
	model = tm_model_run(m, &ms, g.x ? &pass : NULL, records, order_bytes, err);
	if (!model)
		goto fail;
	res = tm_xcalloc(1, sizeof(*res));
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

void tm_gen_free(tm_gen *g)
{
	if (!g)
		return;
	tm_export_free(g->pftrace);
	tm_spooled_free(g->timeline);
	tm_tables_free(g->tables);
	free(g);
}
