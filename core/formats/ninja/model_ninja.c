/* core/formats/ninja/model_ninja.c - a ninja log's jobs into the tables,
 * as NinjaLogParser::OnPushDataToSorter writes them: a new worker is
 * thread `worker` of process 1, the process named "Build" and the thread
 * "Worker" (both of priority "other"), and each job a slice of no category
 * on its worker's thread track. */
#include "model/model_internal.h"
#include "formats/ninja/ninja_format.h"

#include <stdlib.h>
#include <string.h>

#define NINJA_PID 1 /* kSyntheticNinjaPid */

/* Per file and machine: each worker's thread track (the reference keeps
 * the track it interned when it made the worker). */
typedef struct ninja_ctx {
	uint32_t *track; /* by worker - 1 */
	size_t n, cap;
} ninja_ctx;

static void apply(tm_model *m, const tm_mrec_head *h, int64_t ts, const char *body, size_t n, const void *pre,
		  size_t pre_len)
{
	(void)pre;
	(void)pre_len;
	tm_ninja_rec r;
	if (h->sub != 0 || n < sizeof r + 1 || body[n - 1] != '\0')
		return;
	memcpy(&r, body, sizeof r);
	if (r.worker == 0)
		return;
	const char *name = body + sizeof r;
	size_t name_n = n - sizeof r - 1;
	m_ctx *c = m_context(m, h->file_id, h->machine_row);
	if (!c->parsed) {
		c->parsed = tm_xcalloc(1, sizeof(ninja_ctx));
		c->parsed_kind = TM_MREC_NINJA;
	}
	if (c->parsed_kind != TM_MREC_NINJA)
		return; /* the context of another format's file: not a record of ours */
	ninja_ctx *nc = c->parsed;
	/* workers are made in order, one at a time (a record damaged in its
	 * temporary file could ask for 2^32 of them) */
	if (r.new_worker && r.worker > nc->n + 1)
		return;
	if (r.new_worker) {
		m_mach *mc = m_machine(m, h->machine_row);
		int64_t upid = m_get_or_create_process(m, mc, NINJA_PID);
		m_update_process_name(m, upid, m_intern(&m->str, "Build", 5), PP_OTHER);
		int64_t utid = m_update_thread(m, mc, r.worker, NINJA_PID);
		m_update_thread_name(m, utid, m_intern(&m->str, "Worker", 6), TP_OTHER);
		TM_GROW(nc->track, nc->cap, r.worker);
		while (nc->n < r.worker)
			nc->track[nc->n++] = UINT32_MAX;
		nc->track[r.worker - 1] = m_thread_track(m, c, utid);
	}
	if (r.worker > nc->n || nc->track[r.worker - 1] == UINT32_MAX)
		return; /* a worker no job made: not a record of ours */
	uint32_t track = nc->track[r.worker - 1];
	m_slice_scoped(m, c, track, ts, 0, m_intern(&m->str, name, name_n), r.dur_ns, NULL, h->file_id);
	if (!m->sink.observed)
		return;
	ninja_observed no = {name, r.dur_ns};
	tm_mobserved ob = {.model = m, .head = h, .ts = ts, .event = &no, .track = track, .made = m->made,
			   .n_made = m->n_made};
	m->sink.observed(m->sink.ctx, &ob);
}

/* The lines of the log without a job's fields (ninja_parse_errors). */
static void side(tm_model *m, const tm_mrec_head *h, const char *body, size_t n)
{
	int64_t errors;
	if (h->sub != 1 || n != sizeof errors)
		return;
	memcpy(&errors, body, sizeof errors);
	m_stat(m, "ninja_parse_errors", errors);
}

static void ctx_free(m_ctx *c)
{
	ninja_ctx *nc = c->parsed;
	if (!nc)
		return;
	free(nc->track);
	free(nc);
	c->parsed = NULL;
}

const tm_parser tm_ninja_parser = {.apply = apply, .side = side, .ctx_free = ctx_free};
