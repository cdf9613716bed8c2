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

/* tids_[tid] (NULL: none; valid until another list is made) */
static m_tid_list *tid_list(m_mach *mc, int64_t tid, int create)
{
	size_t i = M_KEYED(&mc->tids_head, mc->tid_lists, mc->n_tid_lists, mc->cap_tid_lists, (uint64_t)tid, create);
	return i == SIZE_MAX ? NULL : &mc->tid_lists[i];
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

/* ---- the logs of a tid's list (m_tid_list) ---- */

static int in_list(const tm_model *m, const m_stamped *e)
{
	return m->threads[e->utid].stamp == e->stamp;
}

/* Ended for good: its own end, or its process's (a thread whose pid
 * went to another process may live again when that one ends). */
static int gone(const tm_model *m, int64_t utid)
{
	const m_thread *t = &m->threads[utid];
	return t->pub.end_ts >= 0 || (t->pub.upid >= 0 && m->procs[t->pub.upid].pub.end_ts >= 0);
}

/* e at its place by stamp (the end, unless a thread joined a process
 * after it was put in the list). Entries left behind are dropped when
 * the log has doubled since they were last dropped. */
static void log_put(const tm_model *m, m_stamp_log *g, m_stamped e)
{
	if (g->n == g->cap && g->n >= 2 * (uint64_t)g->kept + 16) {
		uint32_t k = 0;
		for (uint32_t i = 0; i < g->n; i++)
			if (in_list(m, &g->v[i]))
				g->v[k++] = g->v[i];
		g->n = g->kept = k;
	}
	if (g->n == g->cap) {
		/* from one: most tids have one thread, most threads one pid */
		if (g->cap > UINT32_MAX / 2)
			abort(); /* 2^31 entries of 16 bytes: memory ran out first */
		g->cap = g->cap ? 2 * g->cap : 1;
		g->v = tm_xrealloc(g->v, (size_t)g->cap * sizeof *g->v);
	}
	size_t at = g->n;
	if (at && g->v[at - 1].stamp > e.stamp) {
		size_t lo = 0, hi = at;
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;
			if (g->v[mid].stamp < e.stamp)
				lo = mid + 1;
			else
				hi = mid;
		}
		memmove(g->v + lo + 1, g->v + lo, (at - lo) * sizeof *g->v);
		at = lo;
	}
	g->v[at] = e;
	g->n++;
}

/* The log of the threads of a process of pid (NULL: none, unless make). */
static m_stamp_log *pid_log(m_tid_index *x, int64_t pid, int make)
{
	size_t i = M_KEYED(&x->by_pid, x->groups, x->n_groups, x->cap_groups, (uint64_t)pid, make);
	return i == SIZE_MAX ? NULL : &x->groups[i];
}

void m_tid_index_free(m_tid_index *x)
{
	if (!x)
		return;
	free(x->alive.v);
	free(x->loose.v);
	m_map_free(&x->by_pid);
	for (size_t g = 0; g < x->n_groups; g++)
		free(x->groups[g].v);
	free(x->groups);
	free(x);
}

/* e into the index's logs: the list's, and its thread's pid's. */
static void index_put(tm_model *m, m_tid_index *x, m_stamped e)
{
	log_put(m, &x->alive, e);
	int64_t upid = m->threads[e.utid].pub.upid;
	log_put(m, upid < 0 ? &x->loose : pid_log(x, m->procs[upid].pub.pid, 1), e);
}

#define M_TID_INDEXED 8

/* utid put at the end of its tid's list tl. */
static void put_last(tm_model *m, m_mach *mc, m_tid_list *tl, int64_t utid)
{
	if (!m->threads[utid].stamp)
		tl->members++;
	m_stamped e = {utid, ++mc->last_stamp};
	m->threads[utid].stamp = e.stamp;
	log_put(m, &tl->all, e);
	if (tl->ix) {
		index_put(m, tl->ix, e);
	} else if (tl->members >= M_TID_INDEXED) {
		tl->ix = tm_xcalloc(1, sizeof *tl->ix);
		for (uint32_t i = 0; i < tl->all.n; i++)
			if (in_list(m, &tl->all.v[i]))
				index_put(m, tl->ix, tl->all.v[i]);
	}
}

enum { ANY_PID, NO_PROCESS, OF_PID, OF_PID_OR_NONE };

static int matches(const tm_model *m, int64_t utid, int which, int64_t pid)
{
	int64_t upid = m->threads[utid].pub.upid;
	switch (which) {
	case NO_PROCESS: return upid < 0;
	case OF_PID: return upid >= 0 && m->procs[upid].pub.pid == pid;
	case OF_PID_OR_NONE: return upid < 0 || m->procs[upid].pub.pid == pid;
	default: return 1;
	}
}

/* The last thread of a log that is in the list, of which (ANY_PID,
 * NO_PROCESS: of none, OF_PID: of a process of pid, OF_PID_OR_NONE:
 * either) and alive, or -1. Entries at the end that can never be one
 * again are dropped: left behind, and for an index's logs, ended for
 * good or of another pid's log now (a thread joins another process
 * only with a new entry there). */
static int64_t log_last_alive(tm_model *m, m_mach *mc, m_stamp_log *g, int which, int64_t pid, int indexed)
{
	while (g->n) {
		const m_stamped *e = &g->v[g->n - 1];
		if (in_list(m, e) && (!indexed || (!gone(m, e->utid) && matches(m, e->utid, which, pid))))
			break;
		g->n--;
	}
	for (size_t i = g->n; i-- > 0;) {
		const m_stamped *e = &g->v[i];
		if (in_list(m, e) && matches(m, e->utid, which, pid) && thread_alive(m, mc, e->utid))
			return e->utid;
	}
	return -1;
}

static void refresh_live_tid(tm_model *m, m_mach *mc, int64_t tid)
{
	m_tid_list *tl = tid_list(mc, tid, 0);
	int64_t utid = -1;
	if (tl)
		utid = tl->ix ? log_last_alive(m, mc, &tl->ix->alive, ANY_PID, 0, 1)
			      : log_last_alive(m, mc, &tl->all, ANY_PID, 0, 0);
	if (utid >= 0)
		*m_map_put(&mc->live_tid, (uint64_t)tid, NULL) = (uint64_t)utid + 1;
	else
		m_map_del(&mc->live_tid, (uint64_t)tid);
}

int64_t m_start_new_thread(tm_model *m, m_mach *mc, int64_t ts, int64_t tid)
{
	int64_t utid = new_thread_row(m, mc->row, tid);
	m->threads[utid].pub.start_ts = ts;
	put_last(m, mc, tid_list(mc, tid, 1), utid);
	*m_map_put(&mc->live_tid, (uint64_t)tid, NULL) = (uint64_t)utid + 1;
	return utid;
}

int64_t m_get_thread_or_null(tm_model *m, m_mach *mc, int64_t tid)
{
	(void)m;
	uint64_t *v = m_map_get(&mc->live_tid, (uint64_t)tid);
	return v ? (int64_t)*v - 1 : -1;
}

/* GetThreadOrNull(tid, pid): the last alive thread of the list of no
 * process or of a process of pid, the later of the two logs' */
static int64_t thread_for_pid(tm_model *m, m_mach *mc, int64_t tid, int64_t pid)
{
	m_tid_list *tl = tid_list(mc, tid, 0);
	if (!tl)
		return -1;
	if (!tl->ix)
		return log_last_alive(m, mc, &tl->all, OF_PID_OR_NONE, pid, 0);
	int64_t loose = log_last_alive(m, mc, &tl->ix->loose, NO_PROCESS, 0, 1);
	m_stamp_log *g = pid_log(tl->ix, pid, 0);
	int64_t of_pid = g ? log_last_alive(m, mc, g, OF_PID, pid, 1) : -1;
	if (loose < 0)
		return of_pid;
	if (of_pid < 0)
		return loose;
	return m->threads[loose].stamp > m->threads[of_pid].stamp ? loose : of_pid;
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
	m_thread *t = &m->threads[utid];
	t->pub.is_main = is_main;
	if (t->pub.upid == upid)
		return;
	t->pub.upid = upid;
	m_made(m, utid);
	if (upid < 0)
		return;
	TM_GROW(m->proc_links, m->cap_proc_links, m->n_proc_links + 1);
	m->proc_links[m->n_proc_links] = (m_proc_link){utid, m->procs[upid].threads};
	m->procs[upid].threads = (uint32_t)++m->n_proc_links;
	if (t->stamp) {
		/* in its tid's list: logged under its new pid too, at its place */
		m_tid_list *tl = tid_list(m_machine(m, t->pub.machine_row), t->pub.tid, 0);
		if (tl->ix)
			log_put(m, pid_log(tl->ix, m->procs[upid].pub.pid, 1), (m_stamped){utid, t->stamp});
	}
}

/* The list of utid's positions in pending (NULL: none yet). */
static m_poslist *pending_pos(m_mach *mc, int64_t utid, int create)
{
	size_t i = M_KEYED(&mc->pending_of, mc->pending_pos, mc->n_pending_pos, mc->cap_pending_pos, (uint64_t)utid,
			   create);
	return i == SIZE_MAX ? NULL : &mc->pending_pos[i];
}

static void pending_push(m_mach *mc, int64_t a, int64_t b)
{
	TM_GROW(mc->pending, mc->cap_pending, mc->n_pending + 1);
	uint32_t at = (uint32_t)mc->n_pending++;
	m_pending *e = &mc->pending[at];
	e->t[0] = a;
	e->t[1] = b;
	for (int k = 0; k < 2; k++) {
		m_poslist *l = pending_pos(mc, e->t[k], 1);
		TM_GROW(l->v, l->cap, l->n + 1);
		e->slot[k] = (uint32_t)l->n;
		l->v[l->n++] = at;
	}
}

/* Side k of the pair at position at out of its thread's list. */
static void pending_unlist(m_mach *mc, uint32_t at, int k)
{
	int64_t utid = mc->pending[at].t[k];
	m_poslist *l = pending_pos(mc, utid, 0);
	uint32_t s = mc->pending[at].slot[k], last = (uint32_t)l->n - 1, q = l->v[last];
	l->v[s] = q;
	l->n--;
	if (s == last)
		return;
	/* the entry moved to s: which side of its pair it is */
	m_pending *e = &mc->pending[q];
	if (e->t[0] == utid && e->slot[0] == last)
		e->slot[0] = s;
	else
		e->slot[1] = s;
}

static int pos_cmp(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return x < y ? -1 : x > y;
}

/* The pairs of utid, taken out as the reference's walk of its vector
 * takes them: from the front, each replaced by the last pair, which is
 * looked at next in its place. Each one's other thread joins upid and is
 * put on todo. Only utid's positions are visited, in order: a position
 * not reached yet still holds its own pair (pairs moved go to positions
 * already passed), and one past the shrinking end was moved and, being
 * utid's, taken out where it went. */
static void take_pending(tm_model *m, m_mach *mc, int64_t utid, int64_t upid, int assoc_main, int64_t **todo,
			 size_t *n_todo, size_t *cap_todo)
{
	m_poslist *l = pending_pos(mc, utid, 0);
	if (!l || !l->n)
		return;
	size_t np = l->n;
	uint32_t *ps = tm_xmalloc(np * sizeof *ps);
	memcpy(ps, l->v, np * sizeof *ps);
	qsort(ps, np, sizeof *ps, pos_cmp);
	size_t end = mc->n_pending;
	for (size_t j = 0; j < np && ps[j] < end; j++) {
		if (j && ps[j] == ps[j - 1])
			continue; /* a pair of utid with itself */
		uint32_t i = ps[j];
		for (;;) {
			m_pending *e = &mc->pending[i];
			int64_t other = e->t[0] == utid ? e->t[1] : e->t[0];
			int is_main = assoc_main && m->threads[other].pub.tid == m->procs[upid].pub.pid;
			associate(m, other, upid, is_main);
			TM_GROW(*todo, *cap_todo, *n_todo + 1);
			(*todo)[(*n_todo)++] = other;
			pending_unlist(mc, i, 0);
			pending_unlist(mc, i, 1);
			end--;
			if (i == end)
				break;
			/* the last pair into its place */
			mc->pending[i] = mc->pending[end];
			e = &mc->pending[i];
			for (int k = 0; k < 2; k++)
				pending_pos(mc, e->t[k], 0)->v[e->slot[k]] = i;
			if (e->t[0] != utid && e->t[1] != utid)
				break;
		}
	}
	mc->n_pending = end;
	free(ps);
}

/* ResolvePendingAssociations: threads (and child processes) waiting for
 * utid_arg's process follow it, and then whatever waited for them. Both
 * kinds of waiting are found by thread: walking all of them for each
 * thread updated took time with the square of the pairs (160,000 threads
 * made by CLONE_THREAD of threads of no known process, 5.9 MB of proto:
 * 9.6 s). */
static void resolve_pending(tm_model *m, m_mach *mc, int64_t utid_arg, int64_t upid, int assoc_main)
{
	if (!mc->n_pending && !mc->n_waiting)
		return;
	int64_t *todo = NULL;
	size_t n_todo = 0, cap_todo = 0;
	TM_GROW(todo, cap_todo, 1);
	todo[n_todo++] = utid_arg;
	while (n_todo) {
		int64_t utid = todo[--n_todo];
		uint64_t *w = m_map_get(&mc->parent_waits, (uint64_t)utid);
		if (w) {
			for (uint32_t i = (uint32_t)*w; i; i = mc->parent_wait[i - 1].next) {
				m->procs[mc->parent_wait[i - 1].upid].pub.parent_upid = upid;
				mc->n_waiting--;
			}
			m_map_del(&mc->parent_waits, (uint64_t)utid);
		}
		take_pending(m, mc, utid, upid, assoc_main, &todo, &n_todo, &cap_todo);
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
		m_tid_list *tl = tid_list(mc, tid, 0);
		if (tl) {
			while (tl->all.n && !in_list(m, &tl->all.v[tl->all.n - 1]))
				tl->all.n--;
			if (tl->all.n && tl->all.v[tl->all.n - 1].utid != utid)
				put_last(m, mc, tl, utid);
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

/* The live thread of each tid of upid's threads made again. Through the
 * process's own threads: a walk over every thread of the model for each
 * process that ended or whose pid came again took time with the square
 * of them (160,000 sched_process_free of new processes, 7 MB of proto:
 * 22.5 s). A tid's live thread depends on nothing of another tid, so the
 * order does not matter, and one refreshed twice is the same. */
static void invalidate_process_threads(tm_model *m, m_mach *mc, int64_t upid)
{
	for (uint32_t l = m->procs[upid].threads; l; l = m->proc_links[l - 1].next) {
		int64_t utid = m->proc_links[l - 1].utid;
		const m_thread *t = &m->threads[utid];
		if (t->pub.upid == upid && t->pub.machine_row == mc->row && utid != mc->swapper_utid)
			refresh_live_tid(m, mc, t->pub.tid);
	}
}

int64_t m_start_new_process(tm_model *m, m_mach *mc, int64_t ts, int64_t parent_upid, int64_t pid, uint32_t name,
			    int thread_prio)
{
	int64_t recycled = pid_upid(mc, pid);
	m_map_del(&mc->pids, (uint64_t)pid);
	/* the same pid is never two live processes: its tids go too */
	m_tid_list *tl = tid_list(mc, pid, 0);
	if (tl) {
		for (uint32_t i = 0; i < tl->all.n; i++)
			if (in_list(m, &tl->all.v[i]))
				m->threads[tl->all.v[i].utid].stamp = 0;
		tl->all.n = tl->all.kept = tl->members = 0;
		m_tid_index_free(tl->ix);
		tl->ix = NULL;
	}
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
	pending_push(mc, utid1, utid2);
}

void m_associate_created_process(tm_model *m, m_mach *mc, int64_t upid, int64_t parent_utid)
{
	int64_t pupid = m->threads[parent_utid].pub.upid;
	if (pupid >= 0)
		m->procs[upid].pub.parent_upid = pupid;
	else {
		TM_GROW(mc->parent_wait, mc->cap_parent_wait, mc->n_parent_wait + 1);
		uint64_t *w = m_map_put(&mc->parent_waits, (uint64_t)parent_utid, NULL);
		mc->parent_wait[mc->n_parent_wait] = (m_parent_wait){upid, (uint32_t)*w};
		*w = ++mc->n_parent_wait;
		mc->n_waiting++;
	}
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
	m_tid_list *tl = tid_list(mc, 0, 1);
	if (fresh)
		put_last(m, mc, tl, mc->swapper_utid);
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
	if (t->stamp) { /* out of its tid's list */
		t->stamp = 0;
		tid_list(mc, tid, 0)->members--;
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
