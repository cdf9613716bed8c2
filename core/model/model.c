/* core/model/model.c - the model's driver: records to parsers, strings, maps,
 * stats, and the tables' accessors. */
#include "model/model_internal.h"

#include <stdlib.h>
#include <string.h>

#include "scan/machine.h"
#include "util/hash.h"

/* ---- strings ------------------------------------------------------------------ */

/* A string holding a NUL is kept cut at it (m_str gives C strings), so
 * it matches none: each intern of it is a new id, as it always was. It is
 * placed as what it is kept as, so that where a string lies never depends
 * on when the table last grew. */
uint32_t m_intern(m_strings *p, const char *s, size_t n)
{
	if (!s)
		return 0;
	/* kept as C strings: a string is its text up to a NUL, looked up so
	 * (each one with a NUL was a new entry, a sample's frame name each
	 * time) */
	n = strnlen(s, n);
	if ((p->n + 1) * 2 > p->n_slots) {
		size_t ns = p->n_slots ? p->n_slots * 2 : 1024;
		uint64_t *slots = tm_xcalloc(ns, sizeof(*slots));
		for (size_t i = 0; i < p->n; i++) {
			uint64_t h = tm_khash_bytes(p->s[i], p->lens[i]);
			size_t j = h & (ns - 1);
			while (slots[j])
				j = (j + 1) & (ns - 1);
			slots[j] = (h >> 32 << 32) | (i + 1);
		}
		free(p->slots);
		p->slots = slots;
		p->n_slots = ns;
	}
	uint64_t h = tm_khash_bytes(s, n), tag = h >> 32 << 32;
	size_t j = h & (p->n_slots - 1);
	for (; p->slots[j]; j = (j + 1) & (p->n_slots - 1)) {
		uint64_t e = p->slots[j];
		size_t i = (uint32_t)e - 1;
		if ((e & ~(uint64_t)UINT32_MAX) == tag && p->lens[i] == n && memcmp(p->s[i], s, n) == 0)
			return (uint32_t)e;
	}
	if (p->n == p->cap) {
		TM_GROW(p->s, p->cap, p->n + 1);
		p->lens = tm_xrealloc(p->lens, p->cap * sizeof(*p->lens));
	}
	p->s[p->n] = tm_xstrndup(s, n);
	p->lens[p->n] = (uint32_t)n;
	p->n++;
	p->slots[j] = tag | p->n;
	return (uint32_t)p->n;
}

static void strings_free(m_strings *p)
{
	for (size_t i = 0; i < p->n; i++)
		free(p->s[i]);
	free(p->s);
	free(p->lens);
	free(p->slots);
}

/* ---- maps --------------------------------------------------------------------- */

uint64_t m_hash2(uint64_t a, uint64_t b)
{
	uint64_t x = a * 0x9e3779b97f4a7c15ull ^ (b + 0x7f4a7c159e3779b9ull + (a << 6) + (a >> 2));
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebull;
	x ^= x >> 31;
	return x;
}

static size_t slot_of(const m_map *m, uint64_t key)
{
	return (size_t)tm_khash_u64(key) & (m->cap - 1);
}

enum { SLOT_EMPTY = 0, SLOT_DELETED = 1, SLOT_KEY = 2 /* a slot's key is the map's plus this */ };

/* The used slot of key (not a side key), or NULL. */
static m_slot *slot_find(m_map *m, uint64_t key)
{
	if (!m->cap)
		return NULL;
	uint64_t k = key + SLOT_KEY;
	for (size_t i = slot_of(m, key);; i = (i + 1) & (m->cap - 1)) {
		m_slot *sl = &m->slots[i];
		if (sl->key == k)
			return sl;
		if (sl->key == SLOT_EMPTY)
			return NULL;
	}
}

/* 0 or 1 for a key kept beside the slots, else -1. */
static int side_of(uint64_t key)
{
	return key >= UINT64_MAX - 1 ? (int)(key - (UINT64_MAX - 1)) : -1;
}

/* Key UINT64_MAX - 1 + s's slot (NULL while the map has no slots). */
static m_slot *side_slot(const m_map *m, int s)
{
	return m->slots ? &m->slots[m->cap + (size_t)s] : NULL;
}

uint64_t *m_map_get(m_map *m, uint64_t key)
{
	int s = side_of(key);
	if (s >= 0) {
		m_slot *sl = side_slot(m, s);
		return sl && sl->key ? &sl->val : NULL;
	}
	m_slot *sl = slot_find(m, key);
	return sl ? &sl->val : NULL;
}

/* Room for one more key: the slots made anew, twice as many, unless
 * tombstones filled them (pids and tids come and go through a long
 * trace): then as many, without them. Small at first, four for two keys:
 * a machine has several maps, and there may be 20,000 machines; a file's
 * context has six, mostly of a key or two, and there may be 100,000
 * files. */
static void map_grow(m_map *m)
{
	if ((uint64_t)(m->n + 1) * 2 <= m->cap)
		return;
	m_slot *old = m->slots;
	uint32_t old_cap = m->cap, live = 0;
	for (uint32_t i = 0; i < old_cap; i++)
		live += old[i].key >= SLOT_KEY;
	m->cap = !old_cap ? 4 : (uint64_t)(live + 1) * 4 <= old_cap ? old_cap : old_cap * 2;
	m->slots = tm_xcalloc((size_t)m->cap + 2, sizeof(*m->slots));
	m->n = 0;
	if (old) {
		memcpy(&m->slots[m->cap], &old[old_cap], 2 * sizeof(*old)); /* the side slots */
		for (uint32_t i = 0; i < old_cap; i++)
			if (old[i].key >= SLOT_KEY)
				*m_map_put(m, old[i].key - SLOT_KEY, NULL) = old[i].val;
	}
	free(old);
}

uint64_t *m_map_put(m_map *m, uint64_t key, int *inserted)
{
	uint64_t *v = m_map_get(m, key);
	if (v) {
		if (inserted)
			*inserted = 0;
		return v;
	}
	if (inserted)
		*inserted = 1;
	int s = side_of(key);
	if (s >= 0) {
		if (!m->slots)
			map_grow(m);
		m_slot *sl = side_slot(m, s);
		sl->key = 1;
		sl->val = 0;
		return &sl->val;
	}
	map_grow(m);
	size_t i = slot_of(m, key);
	while (m->slots[i].key >= SLOT_KEY)
		i = (i + 1) & (m->cap - 1);
	m_slot *sl = &m->slots[i];
	sl->key = key + SLOT_KEY;
	sl->val = 0;
	m->n++;
	return &sl->val;
}

size_t m_keyed(m_map *ix, void **arr, size_t *n, size_t *cap, size_t elem, uint64_t key, int make)
{
	int fresh = 0;
	uint64_t *v = make ? m_map_put(ix, key, &fresh) : m_map_get(ix, key);
	if (!v)
		return SIZE_MAX;
	if (fresh) {
		tm_grow_zero(arr, cap, *n + 1, elem);
		*v = ++*n;
	}
	return (size_t)*v - 1;
}

void m_map_del(m_map *m, uint64_t key)
{
	int s = side_of(key);
	if (s >= 0) {
		m_slot *sl = side_slot(m, s);
		if (sl)
			sl->key = 0;
		return;
	}
	m_slot *sl = slot_find(m, key);
	if (sl)
		sl->key = SLOT_DELETED; /* a tombstone keeps probe chains intact */
}

void m_map_free(m_map *m)
{
	free(m->slots);
	memset(m, 0, sizeof(*m));
}

/* ---- stats -------------------------------------------------------------------- */

void m_stat(tm_model *m, const char *name, int64_t add)
{
	tm_statlist_add(&m->file_stats, m->cur_file, m->cur_row, name, -1, add);
}

void m_stat_idx(tm_model *m, const char *name, int idx, int64_t add)
{
	tm_statlist_add(&m->file_stats, m->cur_file, m->cur_row, name, idx, add);
}

void m_stat_idx_set(tm_model *m, const char *name, int idx, int64_t value)
{
	tm_statlist_set(&m->file_stats, m->cur_file, m->cur_row, name, idx, value);
}

const tm_statlist *tm_model_file_stats(const tm_model *m)
{
	return &m->file_stats;
}

/* ---- the driver --------------------------------------------------------------- */

tm_model *tm_model_new(const tm_model_sink *sink, const tm_parser *const parsers[TM_MREC_KINDS])
{
	tm_model *m = tm_xcalloc(1, sizeof(*m));
	if (sink)
		m->sink = *sink;
	for (size_t k = 0; k < TM_MREC_KINDS; k++)
		m->parsers[k] = parsers[k];
	m->cur_cpu = -1;
	m->next_string_pid = INT64_C(1) << 32;
	return m;
}

/* The parser of a record's kind, or NULL. */
static const tm_parser *parser_of(const tm_model *m, uint8_t kind)
{
	return kind < TM_MREC_KINDS ? m->parsers[kind] : NULL;
}

void tm_model_bounds(tm_model *m, uint32_t n_files, uint32_t n_rows)
{
	m->n_files = n_files;
	m->n_rows = n_rows;
}

void tm_model_apply_prepared(tm_model *m, int64_t ts, const void *rec, uint32_t len, const void *pre, size_t pre_len)
{
	tm_mrec_head h;
	size_t hn = tm_mrec_head_get(rec, len, &h);
	if (!hn || (m->n_rows && (h.machine_row >= m->n_rows || h.file_id >= m->n_files)))
		return;
	const tm_parser *p = parser_of(m, h.kind);
	const char *body = (const char *)rec + hn;
	size_t n = len - hn;
	m->cur_ts = ts;
	m->cur_seq++;
	m->cur_file = h.file_id;
	m->cur_row = h.machine_row;
	m->n_made = 0;
	m->cur_cpu = p && p->line_cpu ? h.cpu : -1;
	if (p && p->apply)
		p->apply(m, &h, ts, body, n, pre, pre_len);
}

void tm_model_apply(tm_model *m, int64_t ts, const void *rec, uint32_t len)
{
	tm_model_apply_prepared(m, ts, rec, len, NULL, 0);
}

void tm_model_apply_side(tm_model *m, const void *rec, uint32_t len)
{
	tm_mrec_head h;
	size_t hn = tm_mrec_head_get(rec, len, &h);
	if (!hn)
		return;
	m->cur_file = h.file_id;
	m->cur_row = h.machine_row;
	const tm_parser *p = parser_of(m, h.kind);
	if (p && p->side)
		p->side(m, &h, (const char *)rec + hn, len - hn);
}

void tm_model_finish(tm_model *m)
{
	m_slices_flush(m);
	m_sched_flush(m);
	for (int k = 0; k < TM_MREC_KINDS; k++)
		if (m->parsers[k] && m->parsers[k]->finish)
			m->parsers[k]->finish(m);
	/* the final names, so that tm_model_thread and tm_model_process
	 * write nothing from here on: the timeline's two formatters read the
	 * model at once */
	for (size_t i = 0; i < m->n_threads; i++)
		m->threads[i].pub.name = m_str(&m->str, m->threads[i].name_id);
	for (size_t i = 0; i < m->n_procs; i++)
		m->procs[i].pub.name = m_str(&m->str, m->procs[i].name_id);
}

size_t tm_model_n_tracks(const tm_model *m)
{
	return m->n_tracks;
}

uint32_t tm_model_intern(tm_model *m, const char *s, size_t n)
{
	return m_intern(&m->str, s, n);
}

const char *tm_model_string(const tm_model *m, uint32_t id, size_t *len)
{
	if (!id || id > m->str.n) {
		*len = 0;
		return NULL;
	}
	*len = m->str.lens[id - 1];
	return m->str.s[id - 1];
}

const tm_mtrack *tm_model_track(const tm_model *m, uint32_t id)
{
	return id < m->n_tracks ? &m->tracks[id].pub : NULL;
}

int32_t tm_model_id32(const tm_model *m, int64_t id)
{
	/* string_id gives them in turn from there: they are this range */
	if (id >= INT64_C(1) << 32 && id < m->next_string_pid)
		return (int32_t)(INT32_MAX - (id - (INT64_C(1) << 32)));
	return (int32_t)id;
}

size_t tm_model_n_threads(const tm_model *m)
{
	return m->n_threads;
}

const tm_mthread *tm_model_thread(const tm_model *m, size_t utid)
{
	if (utid >= m->n_threads)
		return NULL;
	/* the name as it is now (a thread is renamed while the model runs);
	 * written only when it changed: after tm_model_finish, never */
	const char *name = m_str(&m->str, m->threads[utid].name_id);
	if (m->threads[utid].pub.name != name)
		m->threads[utid].pub.name = name;
	return &m->threads[utid].pub;
}

size_t tm_model_n_processes(const tm_model *m)
{
	return m->n_procs;
}

const tm_mprocess *tm_model_process(const tm_model *m, size_t upid)
{
	if (upid >= m->n_procs)
		return NULL;
	const char *name = m_str(&m->str, m->procs[upid].name_id); /* as tm_model_thread's */
	if (m->procs[upid].pub.name != name)
		m->procs[upid].pub.name = name;
	return &m->procs[upid].pub;
}

static void ctx_free(const tm_model *m, m_ctx *c)
{
	m_map_free(&c->thread_tracks);
	m_map_free(&c->named_tracks);
	for (size_t i = 0; i < c->n_csets; i++) {
		for (size_t k = 0; k < c->csets[i].n; k++)
			free(c->csets[i].tracks[k].open_ends);
		free(c->csets[i].tracks);
		m_cset_ix_free(c->csets[i].ix);
	}
	free(c->csets);
	m_map_free(&c->cset_ix);
	m_map_free(&c->async_root_name);
	m_map_free(&c->flow_to_slice);
	free(c->flow_slice_id);
	free(c->flow_slice_ts);
	m_map_free(&c->v1_flows);
	free(c->cpus);
	free(c->sched);
	const tm_parser *p = c->parsed && c->parsed_kind < TM_MREC_KINDS ? m->parsers[c->parsed_kind] : NULL;
	if (p && p->ctx_free)
		p->ctx_free(c);
}

/* The parse's state (tm_model_trim): what tm_model_free frees besides
 * the tables, left empty. */
static void free_parse_state(tm_model *m)
{
	for (size_t i = 0; i < m->n_tracks; i++) {
		m_track *t = &m->tracks[i];
		for (size_t k = 0; k < t->depth; k++) {
			tm_buf_free(&t->stack[k].args);
			free(t->stack[k].argidx);
		}
		free(t->stack);
		free(t->pending_flows);
		t->stack = NULL;
		t->depth = t->cap = 0;
		t->pending_flows = NULL;
		t->n_pending_flows = t->cap_pending_flows = 0;
	}
	for (size_t i = 0; i < m->n_ctxs; i++)
		ctx_free(m, &m->ctxs[i]);
	free(m->ctxs);
	m->ctxs = NULL;
	m->n_ctxs = m->cap_ctxs = 0;
	for (int k = 0; k < TM_MREC_KINDS; k++)
		if (m->parsers[k] && m->parsers[k]->state_free)
			m->parsers[k]->state_free(m);
	m_map_free(&m->ctx_index);
	m_map_free(&m->forked);
	for (size_t i = 0; i < m->n_mach; i++) {
		m_mach *mc = &m->mach[i];
		m_map_free(&mc->pids);
		m_map_free(&mc->live_tid);
		m_map_free(&mc->tids_head);
		for (size_t k = 0; k < mc->n_tid_lists; k++) {
			free(mc->tid_lists[k].all.v);
			m_tid_index_free(mc->tid_lists[k].ix);
		}
		free(mc->tid_lists);
		free(mc->pending);
		m_map_free(&mc->pending_of);
		for (size_t k = 0; k < mc->n_pending_pos; k++)
			free(mc->pending_pos[k].v);
		free(mc->pending_pos);
		m_map_free(&mc->parent_waits);
		free(mc->parent_wait);
	}
	free(m->mach);
	m->mach = NULL;
	m->n_mach = 0;
	free(m->mach_of_row);
	m->mach_of_row = NULL;
	m->cap_mach_of_row = 0;
	free(m->made);
	m->made = NULL;
	m->n_made = m->cap_made = 0;
	free(m->proc_links);
	m->proc_links = NULL;
	m->n_proc_links = m->cap_proc_links = 0;
	tm_statlist_free(&m->file_stats);
	m_map_free(&m->json_string_ids);
	free(m->str.slots); /* the strings stay, their index goes */
	m->str.slots = NULL;
	m->str.n_slots = 0;
	tm_buf_free(&m->scratch);
}

void tm_model_trim(tm_model *m)
{
	free_parse_state(m);
	tm_memory_release();
}

void tm_model_free(tm_model *m)
{
	if (!m)
		return;
	free_parse_state(m);
	free(m->tracks);
	m_stack_free(m);
	free(m->threads);
	free(m->procs);
	strings_free(&m->str);
	free(m);
}

/* ---- contexts as a file's parse starts them --------------------------------- */

/* "Linux" and "major.minor...": SystemInfoTracker::SetKernelVersion */
static int kernel_version(const tm_machine *mr, int *major, int *minor)
{
	if (!mr->sysname || !mr->release || strcmp(mr->sysname, "Linux") != 0)
		return 0;
	const char *r = mr->release, *dot = strchr(r, '.');
	if (!dot)
		return 0;
	const char *dot2 = strchr(dot + 1, '.');
	size_t n1 = (size_t)(dot - r), n2 = dot2 ? (size_t)(dot2 - dot - 1) : strlen(dot + 1);
	if (!n1 || !n2 || n1 > 9 || n2 > 9)
		return 0;
	for (size_t i = 0; i < n1; i++)
		if (r[i] < '0' || r[i] > '9')
			return 0;
	for (size_t i = 0; i < n2; i++)
		if (dot[1 + i] < '0' || dot[1 + i] > '9')
			return 0;
	*major = atoi(r);
	*minor = atoi(dot + 1);
	return 1;
}

int tm_model_fork(tm_model *m, uint32_t file_id, uint32_t row)
{
	int inserted = 0;
	m_map_put(&m->forked, (uint64_t)file_id << 32 | row, &inserted);
	if (inserted)
		m_machine(m, row); /* the machine's place among the model's */
	return inserted;
}

void tm_model_pid_zero_is_idle(tm_model *m, uint32_t row)
{
	m_set_pid_zero_is_swapper(m, m_machine(m, row));
}

void tm_model_machine_start(tm_model *m, uint32_t row, const struct tm_machine *mr)
{
	m_mach *mc = m_machine(m, row);
	if (mr)
		mc->has_kernel = kernel_version(mr, &mc->kernel_major, &mc->kernel_minor);
	m_set_pid_zero_is_swapper(m, mc);
}
