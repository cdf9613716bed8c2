/* core/formats/hprof/model_hprof.c - a heap dump into the tables: process
 * 0 of its machine and its hprof_* stats (every dump), its classes with
 * their objects and bytes (heap.tsv); its objects, classes, fields and
 * roots go on to the encoder as they are. */
#include "model/model_internal.h"
#include "formats/hprof/hprof_format.h"
#include "formats/hprof/hprof.h"

#include <string.h>

static void observe(tm_model *m, const tm_mrec_head *h, int64_t ts, const char *body, size_t n)
{
	if (!m->sink.observed)
		return;
	hprof_observed ho = {h->sub, body, n};
	tm_mobserved ob = {.model = m, .head = h, .ts = ts, .event = &ho, .track = UINT32_MAX};
	m->sink.observed(m->sink.ctx, &ob);
}

/* the dump: its process, its stats */
static void side(tm_model *m, const tm_mrec_head *h, const char *body, size_t n)
{
	tm_hprof_dump_rec r;
	if (h->sub != HPROF_DUMP || n != sizeof r)
		return;
	memcpy(&r, body, sizeof r);
	m_get_or_create_process(m, m_machine(m, h->machine_row), 0);
	for (int i = 0; i < HPROF_N_STATS; i++)
		if (r.stats[i])
			m_stat(m, hprof_stat_names[i], r.stats[i]);
}

/* its objects, then its classes, fields and roots */
static void apply(tm_model *m, const tm_mrec_head *h, int64_t ts, const char *body, size_t n, const void *pre,
		  size_t pre_len)
{
	(void)pre;
	(void)pre_len;
	const char *q = body, *end = body + n;
	tm_hprof_part_rec p;
	if (!tm_mrec_get(&q, end, &p, sizeof p))
		return;
	if (h->sub == HPROF_END) {
		tm_hprof_class c;
		for (uint32_t i = 0; i < p.n; i++) {
			if (!tm_hprof_get_class(&q, end, &c))
				return;
			m_heap_class(m, c.name, c.name_n, c.objects, (int64_t)c.bytes);
		}
	}
	observe(m, h, ts, body, n);
}

const tm_parser tm_hprof_parser = {.apply = apply, .side = side};
