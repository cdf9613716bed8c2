/* core/formats/collapsed/model_collapsed.c - collapsed stacks into the
 * tables, as CollapsedStackTraceReader::ParseLine makes them: the file's
 * one dummy mapping "[collapsed_stack]", each frame of it by name, the
 * callsites from the root at depth 0, and an aggregate sample of the
 * line's count. */
#include "model/model_internal.h"
#include "formats/collapsed/collapsed_format.h"

#include <stdlib.h>
#include <string.h>

/* Per file and machine: the file's mapping. */
typedef struct cs_ctx {
	uint32_t mapping;
	m_stack_index ix;  /* its frames and callsites */
} cs_ctx;

static void ctx_free(m_ctx *c)
{
	cs_ctx *cc = c->parsed;
	m_stack_index_free(&cc->ix);
	free(cc);
}

static void side(tm_model *m, const tm_mrec_head *h, const char *body, size_t n)
{
	tm_collapsed_rec r;
	if (h->sub != 0 || n < sizeof r)
		return;
	memcpy(&r, body, sizeof r);
	const char *p = body + sizeof r, *end = body + n;
	if (r.n_frames == 0 || r.n_frames > (size_t)(end - p) / 4)
		return;
	m_ctx *c = m_context(m, h->file_id, h->machine_row);
	if (!c->parsed) {
		cs_ctx *cc = tm_xcalloc(1, sizeof *cc);
		cc->mapping = m_stack_mapping(m, "[collapsed_stack]", 17, h->file_id);
		c->parsed = cc;
		c->parsed_kind = TM_MREC_COLLAPSED;
	}
	if (c->parsed_kind != TM_MREC_COLLAPSED)
		return; /* the context of another format's file: not a record of ours */
	cs_ctx *cc = c->parsed;
	uint32_t callsite = TM_NO_CALLSITE;
	for (uint32_t d = 0; d < r.n_frames; d++) {
		uint32_t len;
		if ((size_t)(end - p) < sizeof len)
			return;
		memcpy(&len, p, sizeof len);
		p += sizeof len;
		if ((size_t)(end - p) < len)
			return;
		uint32_t frame = m_stack_frame(m, &cc->ix, cc->mapping, p, len);
		callsite = m_stack_callsite(m, &cc->ix, callsite, frame, d);
		p += len;
	}
	m_aggregate(m, callsite, r.count);
}

const tm_parser tm_collapsed_parser = {.side = side, .ctx_free = ctx_free};
