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

/* Per file and machine: its stacks (the tokenizer's mappings_ by name,
 * its frames and callsites). */
typedef struct pt_ctx {
	m_file_stacks st;
} pt_ctx;

static void ctx_free(m_ctx *c)
{
	pt_ctx *pc = c->parsed;
	m_file_stacks_free(&pc->st);
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

static void apply(tm_model *m, const tm_mrec_head *h, int64_t ts, const char *body, size_t n, const void *pre,
		  size_t pre_len)
{
	(void)pre;
	(void)pre_len;
	tm_perf_text_rec r;
	if (h->sub != PERF_TEXT_SAMPLE || n < sizeof r)
		return;
	memcpy(&r, body, sizeof r);
	const char *in = body + sizeof r, *end = body + n;
	const char *comm;
	size_t comm_n;
	pt_ctx *pc = file_ctx(m, h);
	uint32_t callsite = pc ? m_file_stacks_get(&pc->st, r.callsite) : TM_NO_CALLSITE;
	if (!tm_mrec_get_str(&in, end, &comm, &comm_n) || !comm || callsite == TM_NO_CALLSITE)
		return; /* not a record of ours */

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
		const char *in = body + sizeof id, *end = body + n;
		if (tm_mrec_get_str(&in, end, &sym, &sym_n) && sym && tm_mrec_get_str(&in, end, &map, &map_n) && map)
			m_file_stacks_frame(m, &pc->st, id, sym, sym_n, map, map_n, NULL, h->file_id);
	} else if (h->sub == PERF_TEXT_CALLSITE_DEF) {
		tm_perf_text_callsite c;
		if (n != sizeof c)
			return;
		memcpy(&c, body, sizeof c);
		m_file_stacks_callsite(m, &pc->st, c.id, c.parent, c.frame, c.depth);
	}
}

/* The record's CPU is 0 (the tokenizer's head): a thread of no process is
 * named in merged.pftrace by a task_rename, which goes out on a CPU; the
 * reference reads no CPU of a sample, so one CPU, not the sample's. */
const tm_parser tm_perf_text_parser = {.apply = apply, .side = side, .ctx_free = ctx_free, .line_cpu = 1};
