/* core/model_proc.c - threads and processes, per machine, by the
 * reference's ProcessTracker rules (v58.2): a machine starts with its
 * swapper process (pid 0) and thread (tid 0); a tid seen under a different
 * known process starts a new thread row; names keep the highest priority
 * seen, a later name of equal priority replacing an earlier one. */
#include "model_internal.h"

#include <stdlib.h>
#include <string.h>

static int64_t new_thread_row(tm_model *m, uint32_t row, int64_t tid)
{
	TM_GROW(m->threads, m->cap_threads, m->n_threads + 1);
	m_thread *t = &m->threads[m->n_threads];
	memset(t, 0, sizeof(*t));
	t->pub.tid = tid;
	t->pub.upid = -1;
	t->pub.machine_row = row;
	t->pub.start_ts = t->pub.end_ts = -1;
	t->pub.name_ts = t->pub.name_cpu = -1;
	return (int64_t)m->n_threads++;
}

static int64_t new_process_row(tm_model *m, uint32_t row, int64_t pid)
{
	TM_GROW(m->procs, m->cap_procs, m->n_procs + 1);
	m_process *p = &m->procs[m->n_procs];
	memset(p, 0, sizeof(*p));
	p->pub.pid = pid;
	p->pub.parent_upid = -1;
	p->pub.machine_row = row;
	p->pub.start_ts = p->pub.end_ts = -1;
	return (int64_t)m->n_procs++;
}

m_mach *m_machine(tm_model *m, uint32_t row)
{
	for (size_t i = 0; i < m->n_mach; i++)
		if (m->mach[i].row == row)
			return &m->mach[i];
	m->mach = tm_xrealloc(m->mach, (m->n_mach + 1) * sizeof(*m->mach));
	m_mach *mc = &m->mach[m->n_mach++];
	memset(mc, 0, sizeof(*mc));
	mc->row = row;
	/* ProcessTracker's constructor: the swapper rows, not yet mapped */
	mc->swapper_upid = new_process_row(m, row, 0);
	mc->swapper_utid = new_thread_row(m, row, 0);
	m->threads[mc->swapper_utid].pub.upid = mc->swapper_upid;
	m->threads[mc->swapper_utid].pub.is_main = 1;
	return mc;
}

/* tids_[tid] */
static size_t tid_list(m_mach *mc, int64_t tid, int create)
{
	uint64_t *v = create ? m_map_put(&mc->tids_head, (uint64_t)tid, NULL) : m_map_get(&mc->tids_head, (uint64_t)tid);
	if (!v)
		return SIZE_MAX;
	if (!*v) {
		if (mc->n_tid_lists == mc->cap_tid_lists) {
			mc->cap_tid_lists = mc->cap_tid_lists ? mc->cap_tid_lists * 2 : 64;
			mc->tid_lists = tm_xrealloc(mc->tid_lists, mc->cap_tid_lists * sizeof(*mc->tid_lists));
			mc->tid_list_n = tm_xrealloc(mc->tid_list_n, mc->cap_tid_lists * sizeof(size_t));
			mc->tid_list_cap = tm_xrealloc(mc->tid_list_cap, mc->cap_tid_lists * sizeof(size_t));
		}
		mc->tid_lists[mc->n_tid_lists] = NULL;
		mc->tid_list_n[mc->n_tid_lists] = mc->tid_list_cap[mc->n_tid_lists] = 0;
		*v = ++mc->n_tid_lists;
	}
	return (size_t)*v - 1;
}

static int64_t pid_upid(m_mach *mc, int64_t pid)
{
	uint64_t *v = m_map_get(&mc->pids, (uint64_t)pid);
	return v ? (int64_t)*v - 1 : -1;
}

static int thread_alive(tm_model *m, m_mach *mc, int64_t utid)
{
	const m_thread *t = &m->threads[utid];
	if (t->pub.end_ts >= 0)
		return 0;
	if (t->pub.upid < 0)
		return 1;
	const m_process *p = &m->procs[t->pub.upid];
	if (p->pub.end_ts >= 0)
		return 0;
	int64_t cur = pid_upid(mc, p->pub.pid);
	return cur < 0 || cur == t->pub.upid;
}

static void refresh_live_tid(tm_model *m, m_mach *mc, int64_t tid)
{
	size_t l = tid_list(mc, tid, 0);
	if (l != SIZE_MAX)
		for (size_t i = mc->tid_list_n[l]; i-- > 0;) {
			int64_t utid = (int64_t)mc->tid_lists[l][i];
			if (thread_alive(m, mc, utid)) {
				*m_map_put(&mc->live_tid, (uint64_t)tid, NULL) = (uint64_t)utid + 1;
				return;
			}
		}
	m_map_del(&mc->live_tid, (uint64_t)tid);
}

static int64_t start_new_thread(tm_model *m, m_mach *mc, int64_t ts, int64_t tid)
{
	int64_t utid = new_thread_row(m, mc->row, tid);
	m->threads[utid].pub.start_ts = ts;
	size_t l = tid_list(mc, tid, 1);
	if (mc->tid_list_n[l] == mc->tid_list_cap[l]) {
		mc->tid_list_cap[l] = mc->tid_list_cap[l] ? mc->tid_list_cap[l] * 2 : 2;
		mc->tid_lists[l] = tm_xrealloc(mc->tid_lists[l], mc->tid_list_cap[l] * sizeof(uint64_t));
	}
	mc->tid_lists[l][mc->tid_list_n[l]++] = (uint64_t)utid;
	*m_map_put(&mc->live_tid, (uint64_t)tid, NULL) = (uint64_t)utid + 1;
	return utid;
}

int64_t m_get_thread_or_null(tm_model *m, m_mach *mc, int64_t tid)
{
	(void)m;
	uint64_t *v = m_map_get(&mc->live_tid, (uint64_t)tid);
	return v ? (int64_t)*v - 1 : -1;
}

/* GetThreadOrNull(tid, pid) */
static int64_t thread_for_pid(tm_model *m, m_mach *mc, int64_t tid, int64_t pid)
{
	size_t l = tid_list(mc, tid, 0);
	if (l == SIZE_MAX)
		return -1;
	for (size_t i = mc->tid_list_n[l]; i-- > 0;) {
		int64_t utid = (int64_t)mc->tid_lists[l][i];
		if (!thread_alive(m, mc, utid))
			continue;
		int64_t upid = m->threads[utid].pub.upid;
		if (upid < 0 || m->procs[upid].pub.pid == pid)
			return utid;
	}
	return -1;
}

int64_t m_get_or_create_thread(tm_model *m, m_mach *mc, int64_t tid)
{
	int64_t utid = m_get_thread_or_null(m, mc, tid);
	return utid >= 0 ? utid : start_new_thread(m, mc, -1, tid);
}

static void associate(tm_model *m, int64_t utid, int64_t upid, int is_main)
{
	m->threads[utid].pub.upid = upid;
	m->threads[utid].pub.is_main = is_main;
}

static int64_t thread_with_parent(tm_model *m, m_mach *mc, int64_t tid, int64_t upid, int is_main)
{
	int64_t utid = thread_for_pid(m, mc, tid, m->procs[upid].pub.pid);
	if (utid < 0)
		utid = start_new_thread(m, mc, -1, tid);
	if (m->threads[utid].pub.upid < 0)
		associate(m, utid, upid, is_main);
	return utid;
}

int64_t m_get_or_create_process(tm_model *m, m_mach *mc, int64_t pid)
{
	int64_t upid = pid_upid(mc, pid);
	if (upid >= 0)
		return upid;
	upid = new_process_row(m, mc->row, pid);
	*m_map_put(&mc->pids, (uint64_t)pid, NULL) = (uint64_t)upid + 1;
	/* associate_main_thread: UpdateThread(pid, pid) */
	thread_with_parent(m, mc, pid, upid, 1);
	return upid;
}

int64_t m_update_thread(tm_model *m, m_mach *mc, int64_t tid, int64_t pid)
{
	int64_t upid = m_get_or_create_process(m, mc, pid);
	return thread_with_parent(m, mc, tid, upid, tid == pid);
}

void m_update_thread_name(tm_model *m, int64_t utid, uint32_t name, int prio)
{
	if (!name || utid < 0)
		return;
	m_thread *t = &m->threads[utid];
	if (prio >= t->pub.name_prio) {
		t->name_id = name;
		t->pub.name_prio = (uint8_t)prio;
		t->pub.name_ts = m->cur_ts;
		t->pub.name_cpu = m->cur_cpu;
	}
}

void m_update_process_name(tm_model *m, int64_t upid, uint32_t name, int prio)
{
	if (!name || upid < 0)
		return;
	m_process *p = &m->procs[upid];
	if (prio >= p->pub.name_prio) {
		p->name_id = name;
		p->pub.name_prio = (uint8_t)prio;
	}
}

void m_set_pid_zero_is_swapper(tm_model *m, m_mach *mc)
{
	if (mc->pid0_is_swapper)
		return;
	mc->pid0_is_swapper = 1;
	size_t l = tid_list(mc, 0, 1);
	mc->tid_list_n[l] = 0;
	if (!mc->tid_list_cap[l]) {
		mc->tid_list_cap[l] = 2;
		mc->tid_lists[l] = tm_xmalloc(2 * sizeof(uint64_t));
	}
	mc->tid_lists[l][mc->tid_list_n[l]++] = (uint64_t)mc->swapper_utid;
	*m_map_put(&mc->live_tid, 0, NULL) = (uint64_t)mc->swapper_utid + 1;
	*m_map_put(&mc->pids, 0, NULL) = (uint64_t)mc->swapper_upid + 1;
	int64_t utid = m_get_or_create_thread(m, mc, 0);
	m_update_thread_name(m, utid, m_intern(&m->str, "swapper", 7), TP_CONSTANT);
}

void m_end_thread(tm_model *m, m_mach *mc, int64_t ts, int64_t tid)
{
	int64_t utid = m_get_thread_or_null(m, mc, tid);
	if (utid < 0)
		return;
	m_thread *t = &m->threads[utid];
	t->pub.end_ts = ts;
	size_t l = tid_list(mc, tid, 0);
	if (l != SIZE_MAX) {
		size_t k = 0;
		for (size_t i = 0; i < mc->tid_list_n[l]; i++)
			if ((int64_t)mc->tid_lists[l][i] != utid)
				mc->tid_lists[l][k++] = mc->tid_lists[l][i];
		mc->tid_list_n[l] = k;
	}
	refresh_live_tid(m, mc, tid);
	if (t->pub.upid < 0)
		return;
	m_process *p = &m->procs[t->pub.upid];
	if (p->pub.pid != tid)
		return;
	p->pub.end_ts = ts;
	m_map_del(&mc->pids, (uint64_t)tid);
	/* InvalidateProcessThreads */
	for (size_t i = 0; i < m->n_threads; i++)
		if (m->threads[i].pub.upid == t->pub.upid)
			refresh_live_tid(m, mc, m->threads[i].pub.tid);
}
