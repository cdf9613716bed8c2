/* core/formats/gecko/model_gecko.c - a Gecko profile's samples into the
 * tables. The tokenizer's frames and callsites, as they come (side
 * records, in file order): the file's "gecko" mapping, a mapping per lib
 * named by a frame, the callsites from the root at depth 0. Then each
 * sample as GeckoTraceParser makes it: a thread's first also its
 * ParseThreadMetadata (UpdateThread(tid, pid), its name of priority
 * kOther), each a stack sample of source "gecko" on GetOrCreateThread(tid). */
#include "model/model_internal.h"
#include "formats/gecko/gecko_format.h"

#include <stdlib.h>
#include <string.h>

static void ctx_free(m_ctx *c)
{
	m_file_stacks_free(c->parsed);
	free(c->parsed);
}

static m_file_stacks *file_ctx(tm_model *m, const tm_mrec_head *h)
{
	m_ctx *c = m_context(m, h->file_id, h->machine_row);
	if (!c->parsed) {
		c->parsed = tm_xcalloc(1, sizeof(m_file_stacks));
		c->parsed_kind = TM_MREC_GECKO;
	}
	return c->parsed_kind == TM_MREC_GECKO ? c->parsed : NULL;
}

static void apply(tm_model *m, const tm_mrec_head *h, int64_t ts, const char *body, size_t n, const void *pre,
		  size_t pre_len)
{
	(void)pre;
	(void)pre_len;
	tm_gecko_rec r;
	if (h->sub != GECKO_SAMPLE || n < sizeof r)
		return;
	memcpy(&r, body, sizeof r);
	m_file_stacks *fs = file_ctx(m, h);
	uint32_t callsite = fs ? m_file_stacks_get(fs, r.callsite) : TM_NO_CALLSITE;
	if (callsite == TM_NO_CALLSITE)
		return; /* not a record of ours */
	m_mach *mc = m_machine(m, h->machine_row);
	if (r.first) {
		const char *p = body + sizeof r, *name;
		size_t name_n;
		if (!tm_mrec_get_str(&p, body + n, &name, &name_n) || !name)
			return;
		int64_t utid = m_update_thread(m, mc, r.tid, r.pid);
		m_update_thread_name(m, utid, m_intern(&m->str, name, name_n), TP_OTHER);
	}
	int64_t utid = m_get_or_create_thread(m, mc, r.tid);
	m_sample(m, ts, utid, callsite, "gecko");
	if (!m->sink.observed)
		return;
	gecko_observed go = {r.first, r.pid, r.tid, callsite};
	tm_mobserved ob = {.model = m, .head = h, .ts = ts, .event = &go, .track = UINT32_MAX, .made = m->made,
			   .n_made = m->n_made};
	m->sink.observed(m->sink.ctx, &ob);
}

static void side(tm_model *m, const tm_mrec_head *h, const char *body, size_t n)
{
	m_file_stacks *fs = file_ctx(m, h);
	if (!fs)
		return;
	if (h->sub == GECKO_FRAME_DEF) {
		uint32_t id;
		const char *p = body + sizeof id, *end = body + n, *name, *map;
		size_t name_n, map_n;
		if (n < sizeof id)
			return;
		memcpy(&id, body, sizeof id);
		if (tm_mrec_get_str(&p, end, &name, &name_n) && name && tm_mrec_get_str(&p, end, &map, &map_n))
			m_file_stacks_frame(m, fs, id, name, name_n, map, map_n, "gecko", h->file_id);
	} else if (h->sub == GECKO_CALLSITE_DEF) {
		tm_gecko_callsite c;
		if (n != sizeof c)
			return;
		memcpy(&c, body, sizeof c);
		m_file_stacks_callsite(m, fs, c.id, c.parent, c.frame, c.depth);
	}
}

const tm_parser tm_gecko_parser = {.apply = apply, .side = side, .ctx_free = ctx_free};
