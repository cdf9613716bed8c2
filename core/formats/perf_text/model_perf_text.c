/* core/formats/perf_text/model_perf_text.c - perf script samples into the
 * tables. The tokenizer's frames and callsites, as they come (side
 * records, in file order, as the reference's tokenizer interns them): each
 * mapping name of a file a dummy mapping of its own, each (symbol,
 * mapping) a frame of it, the callsites from the root at depth 1. Then
 * the sample as PerfTextTraceParser::Parse makes it: UpdateThread(tid,
 * pid), else GetOrCreateThread(tid); the process of the pid; the thread
 * named by the command (kOther, and its process too for the main thread). */
#include "model/model_internal.h"
#include "formats/perf_text/perf_text_format.h"

#include <stdlib.h>
#include <string.h>

/* Per file and machine: the file's mappings by name (the tokenizer's
 * mappings_), and its frames' and callsites' model ids by the file's. */
typedef struct pt_ctx {
	m_map by_name;         /* string id -> mapping + 1 */
	uint32_t *frame, *callsite;
	size_t n_frame, cap_frame, n_callsite, cap_callsite;
} pt_ctx;

typedef struct rd {
	const char *p, *end;
} rd;

static int get_str(rd *r, const char **s, size_t *n)
{
	uint32_t len;
	if ((size_t)(r->end - r->p) < sizeof len)
		return 0;
	memcpy(&len, r->p, sizeof len);
	r->p += sizeof len;
	if ((size_t)(r->end - r->p) < len)
		return 0;
	*s = r->p;
	*n = len;
	r->p += len;
	return 1;
}

static void ctx_free(m_ctx *c)
{
	pt_ctx *pc = c->parsed;
	m_map_free(&pc->by_name);
	free(pc->frame);
	free(pc->callsite);
	free(pc);
}

/* The file's state on its machine (NULL: the context is another format's). */
static pt_ctx *file_ctx(tm_model *m, const tm_mrec_head *h)
{
	m_ctx *c = m_context(m, h->file_id, h->machine_row);
	if (!c->parsed) {
		c->parsed = tm_xcalloc(1, sizeof(pt_ctx));
		c->parsed_kind = TM_MREC_PERF_TEXT;
	}
	return c->parsed_kind == TM_MREC_PERF_TEXT ? c->parsed : NULL;
}

static uint32_t mapping_of(tm_model *m, pt_ctx *pc, const char *name, size_t n, uint32_t file_id)
{
	uint32_t id = m_intern(&m->str, name, n);
	int fresh;
	uint64_t *v = m_map_put(&pc->by_name, id, &fresh);
	if (fresh)
		*v = (uint64_t)m_stack_mapping(m, name, n, file_id) + 1;
	return (uint32_t)(*v - 1);
}

static void apply(tm_model *m, const tm_mrec_head *h, int64_t ts, const char *body, size_t n, const void *pre,
		  size_t pre_len)
{
	(void)pre;
	(void)pre_len;
	tm_perf_text_rec r;
	if (h->sub != PERF_TEXT_SAMPLE || n < sizeof r)
		return;
	memcpy(&r, body, sizeof r);
	rd in = {body + sizeof r, body + n};
	const char *comm;
	size_t comm_n;
	pt_ctx *pc = file_ctx(m, h);
	if (!get_str(&in, &comm, &comm_n) || !pc || r.callsite >= pc->n_callsite)
		return; /* not a record of ours */
	uint32_t callsite = pc->callsite[r.callsite];

	m_mach *mc = m_machine(m, h->machine_row);
	int64_t utid = r.has_pid ? m_update_thread(m, mc, r.tid, r.pid) : m_get_or_create_thread(m, mc, r.tid);
	if (r.has_pid)
		m_get_or_create_process(m, mc, r.pid);
	if (comm_n)
		m_update_thread_name_and_maybe_process_name(m, utid, m_intern(&m->str, comm, comm_n), TP_OTHER);
	m_sample(m, ts, utid, callsite, "perf_text");
	if (!m->sink.observed)
		return;
	perf_text_observed po = {r.has_pid, r.pid, r.tid, callsite};
	tm_mobserved ob = {.model = m, .head = h, .ts = ts, .event = &po, .track = UINT32_MAX, .made = m->made,
			   .n_made = m->n_made};
	m->sink.observed(m->sink.ctx, &ob);
}

/* The tokenizer's frames and callsites, and the samples it found without
 * frames. A frame or callsite it made once is new to the model (the
 * tokenizer interned it), so none is looked up here. */
static void side(tm_model *m, const tm_mrec_head *h, const char *body, size_t n)
{
	if (h->sub == PERF_TEXT_NO_FRAMES) {
		int64_t k;
		if (n == sizeof k) {
			memcpy(&k, body, sizeof k);
			if (k)
				m_stat(m, "perf_text_importer_sample_no_frames", k);
		}
		return;
	}
	pt_ctx *pc = file_ctx(m, h);
	if (!pc)
		return;
	if (h->sub == PERF_TEXT_FRAME_DEF) {
		uint32_t id;
		const char *sym, *map;
		size_t sym_n, map_n;
		if (n < sizeof id)
			return;
		memcpy(&id, body, sizeof id);
		rd in = {body + sizeof id, body + n};
		if (id != pc->n_frame || !get_str(&in, &sym, &sym_n) || !get_str(&in, &map, &map_n))
			return; /* not the next frame: not a record of ours */
		TM_GROW(pc->frame, pc->cap_frame, pc->n_frame + 1);
		pc->frame[pc->n_frame++] = m_stack_frame(m, NULL, mapping_of(m, pc, map, map_n, h->file_id), sym, sym_n);
	} else if (h->sub == PERF_TEXT_CALLSITE_DEF) {
		tm_perf_text_callsite c;
		if (n != sizeof c)
			return;
		memcpy(&c, body, sizeof c);
		if (c.id != pc->n_callsite || c.frame >= pc->n_frame ||
		    (c.parent != UINT32_MAX && c.parent >= pc->n_callsite))
			return;
		uint32_t parent = c.parent == UINT32_MAX ? TM_NO_CALLSITE : pc->callsite[c.parent];
		TM_GROW(pc->callsite, pc->cap_callsite, pc->n_callsite + 1);
		pc->callsite[pc->n_callsite++] = m_stack_callsite(m, NULL, parent, pc->frame[c.frame], c.depth);
	}
}

/* The record's CPU is 0 (the tokenizer's head): a thread of no process is
 * named in merged.pftrace by a task_rename, which goes out on a CPU; the
 * reference reads no CPU of a sample, so one CPU, not the sample's. */
const tm_parser tm_perf_text_parser = {.apply = apply, .side = side, .ctx_free = ctx_free, .line_cpu = 1};
