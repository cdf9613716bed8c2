/* core/formats/gecko/model_gecko.c - a Gecko profile's samples into the
 * tables. The tokenizer's frames and callsites, as they come (side
 * records, in file order): the file's "gecko" mapping, a mapping per lib
 * named by a frame, the callsites from the root at depth 0. Then each
 * sample as GeckoTraceParser makes it: a thread's first also its
 * ParseThreadMetadata (UpdateThread(tid, pid), its name of priority
 * kOther), each a stack sample of source "gecko" on GetOrCreateThread(tid);
 * each marker as ParseMarker makes it (a thread's first marker its
 * ParseThreadMetadata too): a slice on the firefox_marker track of
 * (GetOrCreateThread(tid), category, name), named by the marker. */
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

static void observe(tm_model *m, const tm_mrec_head *h, int64_t ts, const gecko_observed *go, uint32_t track)
{
	if (!m->sink.observed)
		return;
	tm_mobserved ob = {.model = m, .head = h, .ts = ts, .event = go, .track = track, .made = m->made,
			   .n_made = m->n_made};
	m->sink.observed(m->sink.ctx, &ob);
}

static void marker(tm_model *m, const tm_mrec_head *h, int64_t ts, const char *body, size_t n)
{
	tm_gecko_marker_rec r;
	const char *p = body + sizeof r, *end = body + n, *name, *cat, *tname = NULL, *args;
	size_t name_n, cat_n, tname_n = 0, args_n;
	if (n < sizeof r)
		return;
	memcpy(&r, body, sizeof r);
	if (!tm_mrec_get_str(&p, end, &name, &name_n) || !name || !tm_mrec_get_str(&p, end, &cat, &cat_n) ||
	    (r.first && (!tm_mrec_get_str(&p, end, &tname, &tname_n) || !tname)) ||
	    !tm_mrec_get_str(&p, end, &args, &args_n))
		return;
	m_mach *mc = m_machine(m, h->machine_row);
	if (r.first) { /* ParseThreadMetadata */
		int64_t utid = m_update_thread(m, mc, r.tid, r.pid);
		m_update_thread_name(m, utid, m_intern(&m->str, tname, tname_n), TP_OTHER);
	}
	int64_t utid = m_get_or_create_thread(m, mc, r.tid);
	uint32_t nm = m_intern(&m->str, name, name_n);
	uint32_t ct = cat ? m_intern(&m->str, cat, cat_n) : 0;
	m_ctx *c = m_context(m, h->file_id, h->machine_row);
	uint32_t track = m_named_track(m, c, TM_MT_GECKO_MARKER, TM_SCOPE_THREAD, utid, -1, ct, nm);
	size_t an = args ? args_n : 0;
	int made = 1;
	switch (r.phase) {
	case 0:
		m_slice_scoped_raw(m, c, track, ts, ct, nm, 0, args, an, NULL, h->file_id);
		break;
	case 1:
		m_slice_scoped_raw(m, c, track, ts, ct, nm, r.dur, args, an, NULL, h->file_id);
		break;
	case 2:
		m_slice_begin_raw(m, c, track, ts, ct, nm, args, an, h->file_id);
		break;
	case 3:
		m_slice_end_raw(m, c, track, ts, ct, nm, args, an);
		break;
	default:
		made = 0; /* a phase the reference makes nothing of */
	}
	gecko_observed go = {r.first, r.pid, r.tid, TM_NO_CALLSITE, 1, r.phase, r.dur, nm ? m_str(&m->str, nm) : NULL,
			     ct ? m_str(&m->str, ct) : NULL, args, an};
	observe(m, h, ts, &go, made ? track : UINT32_MAX);
}

static void apply(tm_model *m, const tm_mrec_head *h, int64_t ts, const char *body, size_t n, const void *pre,
		  size_t pre_len)
{
	(void)pre;
	(void)pre_len;
	if (h->sub == GECKO_MARKER) {
		marker(m, h, ts, body, n);
		return;
	}
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
	gecko_observed go = {r.first, r.pid, r.tid, callsite, 0, 0, 0, NULL, NULL, NULL, 0};
	observe(m, h, ts, &go, UINT32_MAX);
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
