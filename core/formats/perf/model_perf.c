/* core/formats/perf/model_perf.c - perf.data records into the tables, as
 * RecordParser makes them: mappings per process from MMAP and MMAP2 (the
 * kernel's and its modules' apart: MappingTracker, PerfTracker), threads
 * and their names from COMM, and each sample's thread, callchain (frames
 * of the mapping each address falls in, else the process's dummy
 * mapping; callsites from the root at depth 0) and counter row (on the
 * attr's track, per CPU when the sample has one, the sum of its periods so
 * far; a read group's values are not kept). A record the
 * parser cannot read counts perf_record_skipped by type. */
#include "model/model_internal.h"
#include "formats/perf/perf_format.h"
#include "formats/perf/perf_data.h"
#include "formats/perf/space.h"

#include <stdlib.h>
#include <string.h>

#include "util/hash.h"

typedef struct pm_attr {
	char *name;    /* its event's (the counter track's name) */
} pm_attr;

/* Per file and machine. */
typedef struct pm_ctx {
	pm_attr *attrs;
	size_t n_attrs, cap_attrs;
	m_map counters;          /* attr << 33 | has_cpu << 32 | cpu -> the sum's bits */
	int has_kernel;
	uint32_t kernel;         /* the kernel image's mapping */
	uint64_t kernel_start, kernel_end;
	perf_space modules;
	m_map spaces;            /* upid -> index + 1 into space */
	perf_space *space;
	size_t n_space, cap_space;
	m_map dummy;             /* upid -> mapping + 1 */
	m_map frames;            /* hash(mapping, rel_pc) -> frame + 1 */
	m_stack_index ix;        /* its callsites */
	tm_buf label;
	/* a read group's other events and counts (perf_observed) */
	const char **other_events;
	double *other_counts;
	size_t n_others, cap_events, cap_counts;
} pm_ctx;

static void ctx_free(m_ctx *c)
{
	pm_ctx *pc = c->parsed;
	for (size_t i = 0; i < pc->n_attrs; i++)
		free(pc->attrs[i].name);
	free(pc->attrs);
	m_map_free(&pc->counters);
	free(pc->other_events);
	free(pc->other_counts);
	perf_space_free(&pc->modules);
	for (size_t i = 0; i < pc->n_space; i++)
		perf_space_free(&pc->space[i]);
	free(pc->space);
	m_map_free(&pc->spaces);
	m_map_free(&pc->dummy);
	m_map_free(&pc->frames);
	m_stack_index_free(&pc->ix);
	tm_buf_free(&pc->label);
	free(pc);
}

static pm_ctx *file_ctx(tm_model *m, const tm_mrec_head *h)
{
	m_ctx *c = m_context(m, h->file_id, h->machine_row);
	if (!c->parsed) {
		c->parsed = tm_xcalloc(1, sizeof(pm_ctx));
		c->parsed_kind = TM_MREC_PERF;
	}
	return c->parsed_kind == TM_MREC_PERF ? c->parsed : NULL;
}

/* ---- address spaces ------------------------------------------------------------------- */

static perf_space *space_of(pm_ctx *pc, int64_t upid, int make)
{
	size_t i = M_KEYED(&pc->spaces, pc->space, pc->n_space, pc->cap_space, (uint64_t)upid, make);
	return i == SIZE_MAX ? NULL : &pc->space[i];
}

/* ---- records ------------------------------------------------------------------------- */

static int64_t upid_of(tm_model *m, m_mach *mc, uint32_t tid, uint32_t pid)
{
	int64_t utid = m_update_thread(m, mc, tid, pid);
	return utid >= 0 ? m->threads[utid].pub.upid : -1;
}

static void mmap_rec(tm_model *m, const tm_mrec_head *h, const char *body, size_t n)
{
	tm_perf_mmap_rec r;
	const char *name, *p = body + sizeof r;
	size_t name_n;
	pm_ctx *pc = file_ctx(m, h);
	if (!pc || n < sizeof r)
		return;
	memcpy(&r, body, sizeof r);
	if (!tm_mrec_get_str(&p, body + n, &name, &name_n))
		return;
	if (r.addr + r.len < r.addr) {
		/* AddressRange would not hold it (the reference stops) */
		m_stat_idx(m, "perf_record_skipped", r.type, 1);
		return;
	}
	tm_mmapping mp;
	memset(&mp, 0, sizeof mp);
	mp.has_range = 1;
	mp.start = r.addr;
	mp.end = r.addr + r.len;
	mp.exact_offset = r.pgoff;
	if (r.has_build_id) {
		/* at most the 20 bytes it has (the tokenizer's cap; the record
		 * went through a temporary file) */
		mp.build_id_len = r.build_id_size <= sizeof mp.build_id ? r.build_id_size : sizeof mp.build_id;
		memcpy(mp.build_id, r.build_id, sizeof mp.build_id);
	}
	if (r.kernel) {
		/* PerfTracker::CreateKernelMemoryMapping */
		if (name_n == 5 && memcmp(name, "[bpf]", 5) == 0 && r.addr == 0 && r.len == UINT64_MAX)
			return;
		int kallsyms = name_n >= 17 && memcmp(name, "[kernel.kallsyms]", 17) == 0;
		if (kallsyms)
			mp.exact_offset = 0; /* its pgoff is the KASLR address of _text */
		if (!kallsyms && r.len) {
			uint32_t id = m_stack_memory_mapping(m, &mp, name, name_n, h->file_id);
			perf_space_put(&pc->modules, mp.start, mp.end, id);
		} else if (!pc->has_kernel) {
			pc->kernel = m_stack_memory_mapping(m, &mp, name, name_n, h->file_id);
			pc->has_kernel = 1;
			pc->kernel_start = mp.start;
			pc->kernel_end = mp.end;
		}
		return;
	}
	m_mach *mc = m_machine(m, h->machine_row);
	int64_t upid = upid_of(m, mc, r.tid, r.pid);
	uint32_t id = m_stack_memory_mapping(m, &mp, name, name_n, h->file_id);
	perf_space_put(space_of(pc, upid, 1), mp.start, mp.end, id);
}

/* The frame of (mapping, rel_pc), unnamed (InternFrame(rel_pc, "")). */
static uint32_t frame_of(tm_model *m, pm_ctx *pc, uint32_t mapping, uint64_t rel_pc)
{
	/* keyed: with fixed multipliers an input could give N mappings one
	 * key and make each frame walk the others (util/hash.h) */
	uint64_t h = tm_khash_pair(mapping, rel_pc);
	for (;; h = tm_khash_next(h)) {
		uint64_t *v = m_map_get(&pc->frames, h);
		if (!v)
			break;
		const tm_mframe *f = tm_model_frame(m, (uint32_t)(*v - 1));
		if (f->mapping == mapping && f->rel_pc == rel_pc)
			return (uint32_t)(*v - 1);
	}
	tm_buf *l = &pc->label;
	m_stack_label(m, mapping, rel_pc, l);
	uint32_t id = m_stack_frame_at(m, mapping, rel_pc, l->data, l->len);
	*m_map_put(&pc->frames, h, NULL) = (uint64_t)id + 1;
	return id;
}

/* RecordParser::GetDummyMapping: one per process, made at its first use. */
static uint32_t dummy_of(tm_model *m, pm_ctx *pc, int64_t upid, uint32_t file_id)
{
	int fresh;
	uint64_t *v = m_map_put(&pc->dummy, (uint64_t)upid, &fresh);
	if (fresh) {
		tm_mmapping mp;
		memset(&mp, 0, sizeof mp);
		mp.has_range = 1;
		mp.end = UINT64_MAX;
		*v = (uint64_t)m_stack_memory_mapping(m, &mp, "", 0, file_id) + 1;
	}
	return (uint32_t)(*v - 1);
}

static int in_kernel(uint8_t mode)
{
	return mode == 1 || mode == 4; /* KERNEL, GUEST_KERNEL */
}

/* InternCallchain: from the root (the last ip) to the leaf. */
static uint32_t callchain(tm_model *m, pm_ctx *pc, int64_t upid, const tm_perf_sample_rec *r, const char *ips,
			  const uint8_t *modes, uint32_t file_id)
{
	uint32_t parent = TM_NO_CALLSITE;
	for (uint32_t d = 0; d < r->n; d++) {
		uint32_t i = r->n - 1 - d;
		uint64_t ip;
		memcpy(&ip, ips + 8 * (size_t)i, 8);
		/* a caller's ip is its return address: the call is before it */
		if (ip != 0 && i != 0 && r->adjust_pc)
			ip--;
		const perf_range *at = NULL;
		uint32_t mapping;
		int found = 0;
		if (in_kernel(modes[i])) {
			if ((at = perf_space_find(&pc->modules, ip)) != NULL) {
				mapping = at->mapping;
				found = 1;
			} else if (pc->has_kernel && ip >= pc->kernel_start && ip < pc->kernel_end) {
				mapping = pc->kernel;
				found = 1;
			}
		} else {
			perf_space *s = space_of(pc, upid, 0);
			if (s && (at = perf_space_find(s, ip)) != NULL) {
				mapping = at->mapping;
				found = 1;
			}
		}
		if (!found) {
			m_stat(m, "perf_dummy_mapping_used", 1);
			mapping = dummy_of(m, pc, upid, file_id);
		}
		const tm_mmapping *mp = tm_model_mapping(m, mapping);
		uint64_t rel_pc = ip - mp->start + mp->exact_offset + mp->load_bias;
		parent = m_stack_callsite(m, &pc->ix, parent, frame_of(m, pc, mapping, rel_pc), d);
	}
	return parent;
}

/* PerfEventAttr::GetOrCreateCounter's counter of attr `a` for the
 * sample's CPU, or the session's global one: its value made v (AddCount)
 * or, when add, v added to it (AddDelta), and that value its row, on a
 * track named after the event (merged.pftrace's come from the
 * reference's import of its PerfSample packets instead; an attr the
 * model was not given has none). Returns it. */
static double attr_counter(tm_model *m, const tm_mrec_head *h, pm_ctx *pc, uint32_t a, const tm_perf_sample_rec *r,
			   int64_t ts, double v, int add)
{
	uint64_t key = (uint64_t)a << 33 | (uint64_t)r->has_cpu << 32 | r->cpu;
	uint64_t *slot = m_map_put(&pc->counters, key, NULL);
	double value;
	memcpy(&value, slot, sizeof value); /* a new slot is 0: 0.0 */
	value = add ? value + v : v;
	memcpy(slot, &value, sizeof value);
	if (a >= pc->n_attrs)
		return value;
	const char *event = pc->attrs[a].name;
	m_ctx *c = m_context(m, h->file_id, h->machine_row);
	uint32_t name = m_intern(&m->str, event, strlen(event));
	uint32_t t = r->has_cpu ? m_named_track(m, c, TM_MT_CPU_COUNTER, TM_SCOPE_CPU, -1, -1, r->cpu, name)
				: m_named_track(m, c, TM_MT_GLOBAL_COUNTER, TM_SCOPE_GLOBAL, -1, -1, -1, name);
	m_counter(m, t, ts, value, h->file_id);
	return value;
}

/* UpdateCountersInReadGroups: each value the sample read made its event's
 * counter (AddCount), in the group's order; the sample's own event's is
 * po's count, the others po's others. 0 when an event id has no attr (the
 * values before it are counted, as the reference's are). */
static int read_counters(tm_model *m, const tm_mrec_head *h, pm_ctx *pc, const tm_perf_sample_rec *r, int64_t ts,
			 const char *reads, perf_observed *po)
{
	pc->n_others = 0;
	for (uint32_t i = 0; i < r->n_reads; i++) {
		uint32_t a;
		uint64_t v;
		memcpy(&a, reads + (size_t)i * TM_PERF_READ_REC_SIZE, sizeof a);
		memcpy(&v, reads + (size_t)i * TM_PERF_READ_REC_SIZE + sizeof a, sizeof v);
		if (a == TM_PERF_NO_ATTR || a >= pc->n_attrs)
			return 0;
		double value = attr_counter(m, h, pc, a, r, ts, (double)v, 0);
		if (a == r->attr && !po->has_count) {
			po->has_count = 1;
			po->count = value;
			continue;
		}
		TM_GROW(pc->other_events, pc->cap_events, pc->n_others + 1);
		TM_GROW(pc->other_counts, pc->cap_counts, pc->n_others + 1);
		pc->other_events[pc->n_others] = pc->attrs[a].name;
		pc->other_counts[pc->n_others++] = value;
	}
	po->n_others = pc->n_others;
	po->other_events = pc->other_events;
	po->other_counts = pc->other_counts;
	return 1;
}

static void sample_rec(tm_model *m, const tm_mrec_head *h, int64_t ts, const char *body, size_t n)
{
	tm_perf_sample_rec r;
	pm_ctx *pc = file_ctx(m, h);
	if (!pc || n < sizeof r)
		return;
	memcpy(&r, body, sizeof r);
	if (n != sizeof r + (size_t)r.n * 9 + (size_t)r.n_reads * TM_PERF_READ_REC_SIZE)
		return;
	const char *ips = body + sizeof r;
	const uint8_t *modes = (const uint8_t *)ips + 8 * (size_t)r.n;
	const char *reads = (const char *)modes + r.n;
	if (r.mode == 0)
		m_stat(m, "perf_samples_cpu_mode_unknown", 1);
	m_mach *mc = m_machine(m, h->machine_row);
	int64_t utid = m_update_thread(m, mc, r.tid, r.pid);
	int64_t upid = utid >= 0 ? m->threads[utid].pub.upid : -1;
	uint32_t callsite = callchain(m, pc, upid, &r, ips, modes, h->file_id);
	/* UpdateCounters: the values a read group gives, else the attr's
	 * period added to its counter */
	perf_observed po = {r.pid, r.tid, r.cpu, r.has_cpu, r.mode, callsite, r.attr, "", 0, 0, 0, NULL, NULL};
	const pm_attr *a = r.attr < pc->n_attrs ? &pc->attrs[r.attr] : NULL;
	if (a)
		po.event = a->name;
	if (r.has_read) {
		if (!read_counters(m, h, pc, &r, ts, reads, &po)) {
			m_stat_idx(m, "perf_record_skipped", PERF_RECORD_SAMPLE, 1);
			return;
		}
	} else {
		if (!r.has_period) {
			m_stat_idx(m, "perf_record_skipped", PERF_RECORD_SAMPLE, 1);
			return;
		}
		po.has_count = 1;
		po.count = attr_counter(m, h, pc, r.attr, &r, ts, (double)r.period, 1);
	}
	m_sample(m, ts, utid, callsite, "linux.perf");
	if (!m->sink.observed)
		return;
	tm_mobserved ob = {.model = m, .head = h, .ts = ts, .event = &po, .track = UINT32_MAX, .made = m->made,
			   .n_made = m->n_made};
	m->sink.observed(m->sink.ctx, &ob);
}

static void comm_rec(tm_model *m, const tm_mrec_head *h, const char *body, size_t n)
{
	uint32_t ids[2];
	const char *comm, *p = body + sizeof ids;
	size_t comm_n;
	if (n < sizeof ids)
		return;
	memcpy(ids, body, sizeof ids);
	if (!tm_mrec_get_str(&p, body + n, &comm, &comm_n))
		return;
	m_mach *mc = m_machine(m, h->machine_row);
	int64_t utid = m_update_thread(m, mc, ids[1], ids[0]);
	uint32_t name = m_intern(&m->str, comm, comm_n);
	int applies = utid >= 0 && name && TP_PERF_COMM >= m->threads[utid].pub.name_prio;
	m_update_thread_name_and_maybe_process_name(m, utid, name, TP_PERF_COMM);
	if (applies)
		m->threads[utid].pub.name_perf = 1;
}

static void apply(tm_model *m, const tm_mrec_head *h, int64_t ts, const char *body, size_t n, const void *pre,
		  size_t pre_len)
{
	(void)pre;
	(void)pre_len;
	switch (h->sub) {
	case PERF_SAMPLE:
		sample_rec(m, h, ts, body, n);
		return;
	case PERF_MMAP:
		mmap_rec(m, h, body, n);
		return;
	case PERF_COMM:
		comm_rec(m, h, body, n);
		return;
	case PERF_THREAD:
		if (n == 8) {
			uint32_t ids[2];
			memcpy(ids, body, sizeof ids);
			m_update_thread(m, m_machine(m, h->machine_row), ids[1], ids[0]);
		}
		return;
	case PERF_SKIP:
		if (n == 8) {
			uint32_t v[2];
			memcpy(v, body, sizeof v);
			if (v[1])
				m_stat_idx(m, "perf_unknown_record_type", (int)v[0], 1);
			m_stat_idx(m, "perf_record_skipped", (int)v[0], 1);
		}
		return;
	default:
		return;
	}
}

static void side(tm_model *m, const tm_mrec_head *h, const char *body, size_t n)
{
	if (h->sub == PERF_STAT) {
		int32_t idx;
		int64_t v;
		if (n == sizeof idx + sizeof v) {
			memcpy(&idx, body, sizeof idx);
			memcpy(&v, body + sizeof idx, sizeof v);
			m_stat_idx(m, "perf_features_skipped", idx, v);
		}
		return;
	}
	if (h->sub == PERF_THREAD) {
		apply(m, h, 0, body, n, NULL, 0);
		return;
	}
	pm_ctx *pc = file_ctx(m, h);
	tm_perf_attr_rec r;
	if (h->sub != PERF_ATTR || !pc || n < sizeof r)
		return;
	memcpy(&r, body, sizeof r);
	const char *name, *p = body + sizeof r;
	size_t name_n;
	if (r.index != pc->n_attrs || !tm_mrec_get_str(&p, body + n, &name, &name_n))
		return;
	TM_GROW(pc->attrs, pc->cap_attrs, pc->n_attrs + 1);
	pc->attrs[pc->n_attrs++] = (pm_attr){tm_xstrndup(name, name_n)};
	m->n_profiler_sessions++; /* PerfInvocation: a session per attr */
}

const tm_parser tm_perf_parser = {.apply = apply, .side = side, .ctx_free = ctx_free};
