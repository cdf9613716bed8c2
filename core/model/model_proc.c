/* core/model/model_proc.c - threads and processes, per machine, by the
 * reference's ProcessTracker rules (v58.2): a machine starts with its
 * swapper process (pid 0) and thread (tid 0); a tid seen under a different
 * known process starts a new thread row; names keep the highest priority
 * seen, a later name of equal priority replacing an earlier one. */
#include "model/model_internal.h"

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
	m_made(m, (int64_t)m->n_threads);
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
	/* Every event asks: by row, not by a walk over the machines (an
	 * archive of one machine per file may have thousands). */
	if (row < m->cap_mach_of_row && m->mach_of_row[row])
		return &m->mach[m->mach_of_row[row] - 1];
	TM_GROW_ZERO(m->mach_of_row, m->cap_mach_of_row, (size_t)row + 1);
	m->mach = tm_xrealloc(m->mach, (m->n_mach + 1) * sizeof(*m->mach));
	m->mach_of_row[row] = (uint32_t)m->n_mach + 1;
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

int64_t m_start_new_thread(tm_model *m, m_mach *mc, int64_t ts, int64_t tid)
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
	return utid >= 0 ? utid : m_start_new_thread(m, mc, -1, tid);
}

void m_made(tm_model *m, int64_t utid)
{
	TM_GROW(m->made, m->cap_made, m->n_made + 1);
	m->made[m->n_made++] = utid;
}

static void associate(tm_model *m, int64_t utid, int64_t upid, int is_main)
{
	if (m->threads[utid].pub.upid != upid)
		m_made(m, utid);
	m->threads[utid].pub.upid = upid;
	m->threads[utid].pub.is_main = is_main;
}

static void pair_push(m_pairs *v, int64_t a, int64_t b)
{
	TM_GROW(v->v, v->cap, v->n + 1);
	v->v[v->n][0] = a;
	v->v[v->n][1] = b;
	v->n++;
}

/* ResolvePendingAssociations: threads (and child processes) waiting for
 * utid_arg's process follow it, and then whatever waited for them. */
static void resolve_pending(tm_model *m, m_mach *mc, int64_t utid_arg, int64_t upid, int assoc_main)
{
	if (!mc->pending.n && !mc->pending_parent.n)
		return;
	int64_t *todo = NULL;
	size_t n_todo = 0, cap_todo = 0;
	TM_GROW(todo, cap_todo, 1);
	todo[n_todo++] = utid_arg;
	while (n_todo) {
		int64_t utid = todo[--n_todo];
		for (size_t i = 0; i < mc->pending_parent.n;) {
			if (mc->pending_parent.v[i][0] != utid) {
				i++;
				continue;
			}
			m->procs[mc->pending_parent.v[i][1]].pub.parent_upid = upid;
			mc->pending_parent.v[i][0] = mc->pending_parent.v[mc->pending_parent.n - 1][0];
			mc->pending_parent.v[i][1] = mc->pending_parent.v[mc->pending_parent.n - 1][1];
			mc->pending_parent.n--;
		}
		size_t end = mc->pending.n;
		for (size_t i = 0; i < end;) {
			int64_t other;
			if (mc->pending.v[i][0] == utid)
				other = mc->pending.v[i][1];
			else if (mc->pending.v[i][1] == utid)
				other = mc->pending.v[i][0];
			else {
				i++;
				continue;
			}
			int is_main = assoc_main && m->threads[other].pub.tid == m->procs[upid].pub.pid;
			associate(m, other, upid, is_main);
			end--;
			int64_t t0 = mc->pending.v[i][0], t1 = mc->pending.v[i][1];
			mc->pending.v[i][0] = mc->pending.v[end][0];
			mc->pending.v[i][1] = mc->pending.v[end][1];
			mc->pending.v[end][0] = t0;
			mc->pending.v[end][1] = t1;
			TM_GROW(todo, cap_todo, n_todo + 1);
			todo[n_todo++] = other;
		}
		mc->pending.n = end;
	}
	free(todo);
}

/* GetOrCreateThreadWithParentInternal */
static int64_t thread_with_parent(tm_model *m, m_mach *mc, int64_t tid, int64_t upid, int is_main, int assoc_main)
{
	int64_t utid = thread_for_pid(m, mc, tid, m->procs[upid].pub.pid);
	if (utid < 0) {
		utid = m_start_new_thread(m, mc, -1, tid);
	} else {
		/* a thread reaffirmed with its process becomes the live one for
		 * its tid, and the last of its tid's list */
		*m_map_put(&mc->live_tid, (uint64_t)tid, NULL) = (uint64_t)utid + 1;
		size_t l = tid_list(mc, tid, 0);
		if (l != SIZE_MAX && mc->tid_list_n[l] && (int64_t)mc->tid_lists[l][mc->tid_list_n[l] - 1] != utid) {
			size_t k = 0;
			for (size_t i = 0; i < mc->tid_list_n[l]; i++)
				if ((int64_t)mc->tid_lists[l][i] != utid)
					mc->tid_lists[l][k++] = mc->tid_lists[l][i];
			mc->tid_lists[l][k++] = (uint64_t)utid;
			mc->tid_list_n[l] = k;
		}
	}
	if (m->threads[utid].pub.upid < 0)
		associate(m, utid, upid, is_main);
	resolve_pending(m, mc, utid, m->threads[utid].pub.upid, assoc_main);
	return utid;
}

static int64_t get_or_create_process(tm_model *m, m_mach *mc, int64_t pid, int assoc_main_thread)
{
	int64_t upid = pid_upid(mc, pid);
	if (upid >= 0)
		return upid;
	upid = new_process_row(m, mc->row, pid);
	*m_map_put(&mc->pids, (uint64_t)pid, NULL) = (uint64_t)upid + 1;
	/* associate_main_thread: UpdateThread(pid, pid) */
	if (assoc_main_thread)
		m_update_thread(m, mc, pid, pid);
	return upid;
}

int64_t m_get_or_create_process(tm_model *m, m_mach *mc, int64_t pid)
{
	return get_or_create_process(m, mc, pid, 1);
}

int64_t m_update_thread(tm_model *m, m_mach *mc, int64_t tid, int64_t pid)
{
	int64_t upid = m_get_or_create_process(m, mc, pid);
	return thread_with_parent(m, mc, tid, upid, tid == pid, 1);
}

static void invalidate_process_threads(tm_model *m, m_mach *mc, int64_t upid)
{
	for (size_t i = 0; i < m->n_threads; i++)
		if (m->threads[i].pub.upid == upid && m->threads[i].pub.machine_row == mc->row &&
		    (int64_t)i != mc->swapper_utid)
			refresh_live_tid(m, mc, m->threads[i].pub.tid);
}

int64_t m_start_new_process(tm_model *m, m_mach *mc, int64_t ts, int64_t parent_upid, int64_t pid, uint32_t name,
			    int thread_prio)
{
	int64_t recycled = pid_upid(mc, pid);
	m_map_del(&mc->pids, (uint64_t)pid);
	/* the same pid is never two live processes: its tids go too */
	size_t l = tid_list(mc, pid, 0);
	if (l != SIZE_MAX)
		mc->tid_list_n[l] = 0;
	m_map_del(&mc->live_tid, (uint64_t)pid);
	int64_t utid = m_start_new_thread(m, mc, ts, pid);
	m_update_thread_name(m, utid, name, thread_prio);
	int64_t upid = get_or_create_process(m, mc, pid, 1);
	if (ts >= 0)
		m->procs[upid].pub.start_ts = ts;
	m_update_process_name(m, upid, name, PP_SYSTEM);
	if (parent_upid >= 0)
		m->procs[upid].pub.parent_upid = parent_upid;
	if (recycled >= 0)
		invalidate_process_threads(m, mc, recycled);
	return upid;
}

void m_associate_threads(tm_model *m, m_mach *mc, int64_t utid1, int64_t utid2, int assoc_main)
{
	int64_t p1 = m->threads[utid1].pub.upid, p2 = m->threads[utid2].pub.upid;
	if (p1 >= 0 && p2 < 0) {
		associate(m, utid2, p1, assoc_main && m->threads[utid2].pub.tid == m->procs[p1].pub.pid);
		resolve_pending(m, mc, utid2, p1, assoc_main);
		return;
	}
	if (p2 >= 0 && p1 < 0) {
		associate(m, utid1, p2, assoc_main && m->threads[utid1].pub.tid == m->procs[p2].pub.pid);
		resolve_pending(m, mc, utid1, p2, assoc_main);
		return;
	}
	if (p1 >= 0 && p1 != p2) {
		m_stat(m, "process_tracker_errors", 1);
		return;
	}
	pair_push(&mc->pending, utid1, utid2);
}

void m_associate_created_process(tm_model *m, m_mach *mc, int64_t upid, int64_t parent_utid)
{
	int64_t pupid = m->threads[parent_utid].pub.upid;
	if (pupid >= 0)
		m->procs[upid].pub.parent_upid = pupid;
	else
		pair_push(&mc->pending_parent, parent_utid, upid);
}

void m_set_process_parent(tm_model *m, int64_t upid, int64_t pupid)
{
	/* a changed parent is reparenting: the first one stays */
	if (m->procs[upid].pub.parent_upid < 0)
		m->procs[upid].pub.parent_upid = pupid;
}

void m_set_start_ts_if_unset(tm_model *m, int64_t upid, int64_t ts)
{
	if (m->procs[upid].pub.start_ts < 0)
		m->procs[upid].pub.start_ts = ts;
}

void m_update_thread_name_and_maybe_process_name(tm_model *m, int64_t utid, uint32_t name, int prio)
{
	m_update_thread_name(m, utid, name, prio);
	int64_t upid = m->threads[utid].pub.upid;
	if (upid >= 0 && m->procs[upid].pub.pid == m->threads[utid].pub.tid)
		m_update_process_name(m, upid, name, PP_SYSTEM);
}

void m_update_thread_name(tm_model *m, int64_t utid, uint32_t name, int prio)
{
	if (!name || utid < 0)
		return;
	m_thread *t = &m->threads[utid];
	if (prio >= t->pub.name_prio) {
		t->name_id = name;
		t->pub.name_prio = (uint8_t)prio;
		t->pub.name_perf = 0;
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
	/* tids_ and pids_ keep what they already hold for 0 (Insert) */
	int fresh = !m_map_get(&mc->tids_head, 0);
	size_t l = tid_list(mc, 0, 1);
	if (fresh) {
		if (!mc->tid_list_cap[l]) {
			mc->tid_list_cap[l] = 2;
			mc->tid_lists[l] = tm_xmalloc(2 * sizeof(uint64_t));
		}
		mc->tid_lists[l][mc->tid_list_n[l]++] = (uint64_t)mc->swapper_utid;
	}
	*m_map_put(&mc->live_tid, 0, NULL) = (uint64_t)mc->swapper_utid + 1;
	int ins;
	uint64_t *pv = m_map_put(&mc->pids, 0, &ins);
	if (ins)
		*pv = (uint64_t)mc->swapper_upid + 1;
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
	invalidate_process_threads(m, mc, t->pub.upid);
}
