/* core/model/sched.c - the scheduler's rows: sched slices and thread
 * states from switches and wakings, the task-state letters, the CPU
 * counters; what the reference's FtraceSchedEventTracker and
 * SchedEventTracker keep, fed by the systrace line parser and the proto
 * ftrace parser alike (core/formats/systrace, core/formats/proto). */
#include "model/model_internal.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


/* TaskState::FromSystrace(...).ToRawStateOnlyForSystraceConversions() */
enum {
	TS_RUNNABLE = 0, TS_INT_SLEEP = 1, TS_UNINT_SLEEP = 2, TS_STOPPED = 4, TS_TRACED = 8, TS_EXIT_DEAD = 16,
	TS_EXIT_ZOMBIE = 32, TS_TASK_DEAD = 64, TS_WAKE_KILL = 128, TS_WAKING = 256, TS_PARKED = 512,
	TS_NO_LOAD = 1024, TS_IDLE = 2048, TS_PREEMPTED = 4096, TS_INVALID = 0x8000
};

static int parsed_state(const char *s)
{
	if (!s || !*s)
		return TS_INVALID;
	if (s[0] == 'R')
		return strcmp(s, "R+") == 0 ? TS_RUNNABLE | TS_PREEMPTED : TS_RUNNABLE;
	static const char sym[] = "SDTtXZPxKWNI";
	static const int flag[] = {TS_INT_SLEEP, TS_UNINT_SLEEP, TS_STOPPED, TS_TRACED, TS_EXIT_DEAD, TS_EXIT_ZOMBIE,
				   TS_PARKED, TS_TASK_DEAD, TS_WAKE_KILL, TS_WAKING, TS_NO_LOAD, TS_IDLE};
	int p = 0;
	for (; *s; s++) {
		if (*s == 'R' || *s == '+')
			return TS_INVALID;
		if (*s == '|')
			continue;
		const char *q = strchr(sym, *s);
		if (!q || !*s)
			return TS_INVALID;
		p |= flag[q - sym];
	}
	return p;
}

int64_t tm_model_task_state_raw(const char *s)
{
	int p = parsed_state(s);
	if (p == TS_INVALID)
		return 0xffff;
	if (p == TS_PREEMPTED)
		return 0x0800;
	int64_t r = p & (0x40 - 1);
	if (p & TS_TASK_DEAD)
		r |= 0x40;
	if (p & TS_WAKE_KILL)
		r |= 0x80;
	if (p & TS_WAKING)
		r |= 0x100;
	if (p & TS_PARKED)
		r |= 0x200;
	if (p & TS_NO_LOAD)
		r |= 0x400;
	if (p & TS_IDLE)
		r |= 0x2 | 0x400;
	return r;
}

int64_t tm_model_task_state_raw_for(const char *s, int major, int minor)
{
	int p = parsed_state(s);
	int64_t raw44 = tm_model_task_state_raw(s);
	if (p == TS_INVALID || major < 4 || (major == 4 && minor < 8))
		return raw44; /* the layout the reference assumes without a version */
	if (major == 4 && minor < 14) /* [4.8, 4.14): preemption is 0x1000 */
		return p == TS_PREEMPTED ? 0x1000 : (p & TS_PREEMPTED ? 0xffff : raw44);
	/* 4.14 and later: the low flags as they are, then parked 0x40, the
	 * idle report 0x80, preemption 0x100; the flags masked off there
	 * cannot be said */
	if (p & (TS_TASK_DEAD | TS_WAKE_KILL | TS_WAKING | TS_NO_LOAD))
		return raw44;
	int64_t r = p & (0x40 - 1);
	if (p & TS_PARKED)
		r |= 0x40;
	if (p & TS_IDLE)
		r |= 0x80;
	if (p & TS_PREEMPTED)
		r |= 0x100;
	return r;
}

/* TaskStateStr of parsed flags (TS_*): "R", "R+", or up to 3 flag letters. */
static const char *state_str(char *buf, int p)
{
	size_t n = 0;
	if (p == 0 || p == TS_PREEMPTED) {
		buf[n++] = 'R';
		if (p & TS_PREEMPTED)
			buf[n++] = '+';
	} else {
		static const int order[] = {TS_INT_SLEEP, TS_UNINT_SLEEP, TS_STOPPED, TS_TRACED, TS_EXIT_DEAD,
					    TS_EXIT_ZOMBIE, TS_PARKED, TS_TASK_DEAD, TS_WAKE_KILL, TS_WAKING,
					    TS_NO_LOAD, TS_IDLE};
		static const char sym[] = "SDTtXZPxKWNI";
		for (int i = 0; i < 12; i++)
			if ((p & order[i]) && n < 3)
				buf[n++] = sym[i];
	}
	buf[n] = '\0';
	return buf;
}

/* TaskState(raw, kernel).ToString(): what the sched table shows for a raw
 * state. A systrace file's context has no SystemInfo, so its states (raw
 * ones written by systrace conversion) are read with the 4.4 layout, as the
 * reference does; a proto file's with its machine's kernel version. The
 * text is at most 3 characters (TaskStateStr): an invalid systrace state,
 * 0xffff by then, reads "SDT" (every flag). NULL when the raw state is
 * invalid for the kernel. */
static const char *end_state_for(char *buf, int64_t raw, int major, int minor)
{
	uint16_t r = (uint16_t)raw;
	if (major > 4 || (major == 4 && minor >= 14)) {
		int p = r & (0x40 - 1);
		if (r & 0x40)
			p |= TS_PARKED;
		if (r & 0x80)
			p |= TS_IDLE;
		if (r & 0x100)
			p |= TS_PREEMPTED;
		if (r & 0xfe00)
			return NULL; /* kInvalid: no end state (task_state_invalid) */
		return state_str(buf, p);
	}
	if (major == 4 && minor >= 8) {
		/* [4.8, 4.14): preemption is 0x1000; 0x800 is TASK_NEW, never
		 * reported */
		r = (uint16_t)((r & ~0x1800) | (r & 0x1000 ? 0x800 : 0));
	}
	int p = r & (0x40 - 1);
	if (r & 0x40)
		p |= TS_TASK_DEAD;
	if (r & 0x80)
		p |= TS_WAKE_KILL;
	if (r & 0x100)
		p |= TS_WAKING;
	if (r & 0x200)
		p |= TS_PARKED;
	if (r & 0x400)
		p |= TS_NO_LOAD;
	if (p == (TS_UNINT_SLEEP | TS_NO_LOAD))
		p = TS_IDLE;
	if (r & 0x800)
		p |= TS_PREEMPTED;
	return state_str(buf, p);
}

static const char *ctx_end_state(tm_model *m, m_ctx *c, char *buf, int64_t raw)
{
	const m_mach *mc = m_machine(m, c->row);
	if (c->kernel_states && mc->has_kernel)
		return end_state_for(buf, raw, mc->kernel_major, mc->kernel_minor);
	return end_state_for(buf, raw, 4, 4);
}

/* ---- sched (FtraceSchedEventTracker, SchedEventTracker) ----------------------- */

/* A CPU's state, for cpu < M_MAX_CPUS (the callers' check: the inputs
 * stop there, a record damaged in its temporary file may not). */
static m_pending_sched *pending(m_ctx *c, uint32_t cpu)
{
	if (cpu >= c->n_cpus) {
		c->cpus = tm_xrealloc(c->cpus, ((size_t)cpu + 1) * sizeof(*c->cpus));
		for (size_t i = c->n_cpus; i <= cpu; i++)
			c->cpus[i] = (m_pending_sched){-1, 0, -1, 0};
		c->n_cpus = (size_t)cpu + 1;
	}
	return &c->cpus[cpu];
}

static void emit_sched(tm_model *m, const tm_msched *s)
{
	if (m->sink.sched)
		m->sink.sched(m->sink.ctx, s);
}

/* AddStartSlice. A closed predecessor is never looked at again, so its
 * slot is reused (one left open by a mismatch was handed out). */
static void start_sched_slice(tm_model *m, m_ctx *c, m_pending_sched *ps, uint32_t cpu, int64_t ts, int64_t utid,
			      int32_t prio, uint32_t file_id)
{
	if (ps->slice_idx < 0 || c->sched[ps->slice_idx].live) {
		TM_GROW(c->sched, c->cap_sched, c->n_sched + 1);
		ps->slice_idx = (int64_t)c->n_sched++;
	}
	m_sched_open *o = &c->sched[ps->slice_idx];
	o->row = (tm_msched){m->cur_seq, ts, -1, cpu, utid, NULL, prio, file_id, c->row};
	o->live = 1;
}

void m_sched_switch(tm_model *m, m_ctx *c, uint32_t cpu, int64_t ts, int64_t prev_pid, const char *prev_comm,
		    int32_t prev_prio, int64_t prev_state, int64_t next_pid, const char *next_comm, int32_t next_prio,
		    uint32_t file_id)
{
	(void)prev_prio;
	if (cpu >= M_MAX_CPUS)
		return;
	m_mach *mc = m_machine(m, c->row);
	int64_t next_utid = m_get_or_create_thread(m, mc, next_pid);
	m_update_thread_name(m, next_utid, m_intern(&m->str, next_comm, strlen(next_comm)), TP_FTRACE);
	m_pending_sched *ps = pending(c, cpu);
	char buf[16];
	const char *state = ctx_end_state(m, c, buf, prev_state);
	if (!state)
		m_stat(m, "task_state_invalid", 1);
	if (ps->slice_idx >= 0) {
		if (prev_pid == ps->last_pid) {
			m_sched_open *o = &c->sched[ps->slice_idx];
			o->row.dur = ts - o->row.ts;
			o->row.end_state = state;
			emit_sched(m, &o->row);
			o->live = 0;
		} else {
			/* The slice stays open in the reference's table: it is
			 * never looked at again and ends the trace as it is now
			 * (dur -1, no end state), so it is handed out now and its
			 * slot reused. Keeping it to the end made memory grow
			 * with every mismatch (a synthetic or broken capture has
			 * one per switch); the timeline sorts its rows anyway. */
			m_stat(m, "mismatched_sched_switch_tids", 1);
			m_sched_open *o = &c->sched[ps->slice_idx];
			if (o->live)
				emit_sched(m, &o->row);
			o->live = 0;
		}
	}
	int64_t prev_utid = m_get_or_create_thread(m, mc, prev_pid);
	m_update_thread_name(m, prev_utid, m_intern(&m->str, prev_comm, strlen(prev_comm)), TP_FTRACE);
	start_sched_slice(m, c, ps, cpu, ts, next_utid, next_prio, file_id);
	ps->last_pid = next_pid;
	ps->last_utid = next_utid;
	ps->last_prio = next_prio;
}

void m_sched_switch_compact(tm_model *m, m_ctx *c, uint32_t cpu, int64_t ts, int64_t prev_state, int64_t next_pid,
			    const char *next_comm, int32_t next_prio, int only_raw, uint32_t file_id)
{
	if (cpu >= M_MAX_CPUS)
		return;
	m_mach *mc = m_machine(m, c->row);
	int64_t next_utid = m_get_or_create_thread(m, mc, next_pid);
	m_update_thread_name(m, next_utid, m_intern(&m->str, next_comm, strlen(next_comm)), TP_FTRACE);
	m_pending_sched *ps = pending(c, cpu);
	if (ps->last_utid < 0) {
		/* the first switch of a CPU has no prev_* fields: no slice */
		m_stat(m, "compact_sched_switch_skipped", 1);
		ps->last_pid = next_pid;
		ps->last_utid = next_utid;
		ps->last_prio = next_prio;
		return;
	}
	char buf[16];
	const char *state = ctx_end_state(m, c, buf, prev_state);
	if (!state)
		m_stat(m, "task_state_invalid", 1);
	if (ps->slice_idx >= 0) {
		m_sched_open *o = &c->sched[ps->slice_idx];
		o->row.dur = ts - o->row.ts;
		o->row.end_state = state;
		if (o->live)
			emit_sched(m, &o->row);
		o->live = 0;
	}
	ps->last_pid = next_pid;
	ps->last_utid = next_utid;
	ps->last_prio = next_prio;
	if (only_raw)
		return;
	start_sched_slice(m, c, ps, cpu, ts, next_utid, next_prio, file_id);
}

void m_sched_waking_compact(tm_model *m, m_ctx *c, uint32_t cpu, int64_t wakee_pid, int only_raw)
{
	if (cpu >= M_MAX_CPUS)
		return;
	m_pending_sched *ps = pending(c, cpu);
	if (ps->last_utid < 0) {
		m_stat(m, "compact_sched_waking_skipped", 1);
		return;
	}
	if (!only_raw)
		m_get_or_create_thread(m, m_machine(m, c->row), wakee_pid);
}

void m_sched_flush(tm_model *m)
{
	for (size_t i = 0; i < m->n_ctxs; i++) {
		m_ctx *c = &m->ctxs[i];
		for (size_t k = 0; k < c->n_sched; k++)
			if (c->sched[k].live) {
				emit_sched(m, &c->sched[k].row);
				c->sched[k].live = 0;
			}
	}
}

void m_counter_cpu(tm_model *m, m_ctx *c, const char *name, uint32_t cpu, int64_t ts, double v, uint32_t file)
{
	uint32_t t = m_named_track(m, c, TM_MT_CPU_COUNTER, TM_SCOPE_CPU, -1, -1, cpu, m_intern(&m->str, name, strlen(name)));
	m_counter(m, t, ts, v, file);
}

void m_cpu_freq_limit(tm_model *m, m_ctx *c, int max, uint32_t cpu, int64_t ts, double v, uint32_t file)
{
	char name[64];
	snprintf(name, sizeof name, "Cpu %u %s Freq Limit", cpu, max ? "Max" : "Min");
	m_counter_cpu(m, c, name, cpu, ts, v, file);
}

void m_counter_keyed(tm_model *m, m_ctx *c, const char *key, const char *suffix, int64_t ts, double v, uint32_t file)
{
	tm_buf *n = &m->scratch;
	n->len = 0;
	tm_buf_puts(n, key);
	tm_buf_puts(n, suffix);
	uint32_t t = m_named_track(m, c, TM_MT_GLOBAL_COUNTER, TM_SCOPE_GLOBAL, -1, -1, -1,
				   m_intern(&m->str, n->data, n->len));
	m_counter(m, t, ts, v, file);
}
