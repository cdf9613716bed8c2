/* core/formats/perf_text/model_perf_text.c - perf script samples into the
 * tables. The stack is interned as the tokenizer does it (each mapping
 * name a dummy mapping of the file, each symbol a frame of it, callsites
 * from the root at depth 1), then the sample as PerfTextTraceParser::Parse
 * makes it: UpdateThread(tid, pid), else GetOrCreateThread(tid); the
 * process of the pid; the thread named by the command (kOther, and its
 * process too for the main thread). */
#include "model/model_internal.h"
#include "formats/perf_text/perf_text_format.h"

#include <stdlib.h>
#include <string.h>

/* Per file and machine: the file's mappings by name (the tokenizer's
 * mappings_), name -> mapping id + 1. */
typedef struct pt_ctx {
	m_map by_name;         /* string id -> mapping + 1 */
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
	free(pc);
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
	if (h->sub != 0 || n < sizeof r)
		return;
	memcpy(&r, body, sizeof r);
	rd in = {body + sizeof r, body + n};
	const char *comm;
	size_t comm_n;
	if (!get_str(&in, &comm, &comm_n) || r.n_frames == 0 || r.n_frames > (size_t)(in.end - in.p) / 8)
		return;
	m_ctx *c = m_context(m, h->file_id, h->machine_row);
	if (!c->parsed) {
		c->parsed = tm_xcalloc(1, sizeof(pt_ctx));
		c->parsed_kind = TM_MREC_PERF_TEXT;
	}
	if (c->parsed_kind != TM_MREC_PERF_TEXT)
		return; /* the context of another format's file: not a record of ours */
	pt_ctx *pc = c->parsed;
	/* the frames come leaf first; callsites are made from the root */
	uint32_t *frames = tm_xmalloc(r.n_frames * sizeof *frames);
	for (uint32_t i = 0; i < r.n_frames; i++) {
		const char *sym, *map;
		size_t sym_n, map_n;
		if (!get_str(&in, &sym, &sym_n) || !get_str(&in, &map, &map_n)) {
			free(frames);
			return;
		}
		frames[i] = m_stack_frame(m, mapping_of(m, pc, map, map_n, h->file_id), sym, sym_n);
	}
	uint32_t callsite = TM_NO_CALLSITE;
	for (uint32_t d = 0; d < r.n_frames; d++)
		callsite = m_stack_callsite(m, callsite, frames[r.n_frames - 1 - d], d + 1);
	free(frames);

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

/* The samples the tokenizer found without frames. */
static void side(tm_model *m, const tm_mrec_head *h, const char *body, size_t n)
{
	int64_t k;
	if (h->sub != 1 || n != sizeof k)
		return;
	memcpy(&k, body, sizeof k);
	if (k)
		m_stat(m, "perf_text_importer_sample_no_frames", k);
}

/* The record's CPU is 0 (the tokenizer's head): a thread of no process is
 * named in merged.pftrace by a task_rename, which goes out on a CPU; the
 * reference reads no CPU of a sample, so one CPU, not the sample's. */
const tm_parser tm_perf_text_parser = {.apply = apply, .side = side, .ctx_free = ctx_free, .line_cpu = 1};
