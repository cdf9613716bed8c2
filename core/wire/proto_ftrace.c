/* core/wire/proto_ftrace.c - FtraceEventBundle: the bundle's own fields, its
 * events one at a time, and the CompactSched columns with their
 * delta-encoded timestamps (spec/formats.md §5.8).
 *
 * What the reference's ftrace tokenizer takes from an event is mirrored
 * here: the timestamp is the first one given, the event kind is the first
 * length-delimited field, and compact-sched columns are walked in step up
 * to the shortest one, a mismatch being a parse error reported once.
 */
#include "wire/proto.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#define N_OF(a) (sizeof(a) / sizeof((a)[0]))

static inline int32_t as_i32(uint64_t v)
{
	return (int32_t)(uint32_t)v;
}

/* tm_pb_varint, inline for the compact-sched columns (five varints a
 * row): 1 and *p advanced, or 0 (truncated or longer than 10 bytes). */
static inline int col_varint(const uint8_t **pp, const uint8_t *end, uint64_t *out)
{
	const uint8_t *p = *pp;
	if (p < end && *p < 0x80) {
		*out = *p;
		*pp = p + 1;
		return 1;
	}
	if (end - p >= 2 && p[1] < 0x80) {
		*out = (uint64_t)(p[0] & 0x7f) | (uint64_t)p[1] << 7;
		*pp = p + 2;
		return 1;
	}
	uint64_t v = 0;
	for (unsigned shift = 0; p < end && shift < 64; shift += 7) {
		uint8_t b = *p++;
		v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*out = v;
			*pp = p;
			return 1;
		}
	}
	return 0;
}

/* ---- the bundle ----------------------------------------------------------- */

/* CompactSched field number -> column (its span in tm_compact_sched). */
static const size_t compact_column[] = {
	[F_FtraceEventBundle_CompactSched_switch_timestamp] = offsetof(tm_compact_sched, switch_timestamp),
	[F_FtraceEventBundle_CompactSched_switch_prev_state] = offsetof(tm_compact_sched, switch_prev_state),
	[F_FtraceEventBundle_CompactSched_switch_next_pid] = offsetof(tm_compact_sched, switch_next_pid),
	[F_FtraceEventBundle_CompactSched_switch_next_prio] = offsetof(tm_compact_sched, switch_next_prio),
	[F_FtraceEventBundle_CompactSched_switch_next_comm_index] = offsetof(tm_compact_sched, switch_next_comm_index),
	[F_FtraceEventBundle_CompactSched_waking_timestamp] = offsetof(tm_compact_sched, waking_timestamp),
	[F_FtraceEventBundle_CompactSched_waking_pid] = offsetof(tm_compact_sched, waking_pid),
	[F_FtraceEventBundle_CompactSched_waking_target_cpu] = offsetof(tm_compact_sched, waking_target_cpu),
	[F_FtraceEventBundle_CompactSched_waking_prio] = offsetof(tm_compact_sched, waking_prio),
	[F_FtraceEventBundle_CompactSched_waking_comm_index] = offsetof(tm_compact_sched, waking_comm_index),
	[F_FtraceEventBundle_CompactSched_waking_common_flags] = offsetof(tm_compact_sched, waking_common_flags),
};

static void compact_decode(tm_span msg, tm_ftrace_bundle *b)
{
	tm_pb_iter it;
	tm_pb_field f;
	tm_pb_iter_init(&it, msg);
	while (tm_pb_next(&it, &f) > 0) {
		if (f.wire != TM_PB_LEN || f.id >= N_OF(compact_column))
			continue;
		if (f.id == F_FtraceEventBundle_CompactSched_intern_table) {
			TM_GROW(b->intern_table.v, b->intern_table.cap, b->intern_table.n + 1);
			b->intern_table.v[b->intern_table.n++] = f.data;
		} else if (f.id == F_FtraceEventBundle_CompactSched_switch_timestamp || compact_column[f.id]) {
			/* (switch_timestamp's column is at offset 0) */
			/* The reference reads a packed column from its last
			 * occurrence only. */
			*(tm_span *)((char *)&b->compact + compact_column[f.id]) = f.data;
		}
	}
}

int tm_ftrace_bundle_decode(tm_span msg, tm_ftrace_bundle *b, tm_error *err)
{
	tm_span *intern = b->intern_table.v;
	size_t intern_cap = b->intern_table.cap;
	memset(b, 0, sizeof(*b));
	b->intern_table.v = intern;
	b->intern_table.cap = intern_cap;
	b->raw = msg;

	tm_span compact = {0};
	tm_pb_iter it;
	tm_pb_field f;
	tm_pb_iter_init(&it, msg);
	while (tm_pb_next(&it, &f) > 0) {
		if (f.wire == TM_PB_LEN) {
			if (f.id == F_FtraceEventBundle_event)
				b->n_events++;
			else if (f.id == F_FtraceEventBundle_compact_sched)
				compact = f.data;
			continue;
		}
		if (f.wire != TM_PB_VARINT)
			continue;
		switch (f.id) {
		case F_FtraceEventBundle_cpu: b->has_cpu = true; b->cpu = (uint32_t)f.val; break;
		case F_FtraceEventBundle_lost_events: b->lost_events = f.val != 0; break;
		case F_FtraceEventBundle_ftrace_clock:
			b->has_ftrace_clock = true;
			b->ftrace_clock = as_i32(f.val);
			break;
		case F_FtraceEventBundle_ftrace_timestamp:
			b->has_ftrace_timestamp = true;
			b->ftrace_timestamp = (int64_t)f.val;
			break;
		case F_FtraceEventBundle_boot_timestamp:
			b->has_boot_timestamp = true;
			b->boot_timestamp = (int64_t)f.val;
			break;
		case F_FtraceEventBundle_last_read_event_timestamp:
			b->has_last_read_event_timestamp = true;
			b->last_read_event_timestamp = f.val;
			break;
		case F_FtraceEventBundle_previous_bundle_end_timestamp:
			b->has_previous_bundle_end_timestamp = true;
			b->previous_bundle_end_timestamp = f.val;
			break;
		}
	}
	if ((b->has_compact_sched = TM_SPAN_HAS(compact)))
		compact_decode(compact, b);
	if (b->has_cpu && b->cpu >= TM_FTRACE_MAX_CPUS)
		return tm_err(err, TM_EINPUT,
			      "CPU %u is greater than maximum allowed of %u. This is likely because of trace corruption (ERR:tp-corrupt)",
			      b->cpu, TM_FTRACE_MAX_CPUS);
	return 0;
}

void tm_ftrace_bundle_free(tm_ftrace_bundle *b)
{
	free(b->intern_table.v);
	memset(b, 0, sizeof(*b));
}

/* ---- events ---------------------------------------------------------------- */

enum { FT_U32 = 1, FT_I32, FT_I64, FT_U64, FT_STR };

typedef struct ft_slot {
	uint8_t type;  /* FT_*; 0: field not decoded */
	uint16_t off;  /* offset in tm_ftrace_event */
} ft_slot;

#define SLOT(type, member) {type, (uint16_t)offsetof(tm_ftrace_event, u.member)}

/* Per event kind, field number -> where it goes. */
static const ft_slot print_slots[] = {
	[F_PrintFtraceEvent_ip] = SLOT(FT_U64, print.ip),
	[F_PrintFtraceEvent_buf] = SLOT(FT_STR, print.buf),
};
static const ft_slot sched_switch_slots[] = {
	[F_SchedSwitchFtraceEvent_prev_comm] = SLOT(FT_STR, sched_switch.prev_comm),
	[F_SchedSwitchFtraceEvent_prev_pid] = SLOT(FT_I32, sched_switch.prev_pid),
	[F_SchedSwitchFtraceEvent_prev_prio] = SLOT(FT_I32, sched_switch.prev_prio),
	[F_SchedSwitchFtraceEvent_prev_state] = SLOT(FT_I64, sched_switch.prev_state),
	[F_SchedSwitchFtraceEvent_next_comm] = SLOT(FT_STR, sched_switch.next_comm),
	[F_SchedSwitchFtraceEvent_next_pid] = SLOT(FT_I32, sched_switch.next_pid),
	[F_SchedSwitchFtraceEvent_next_prio] = SLOT(FT_I32, sched_switch.next_prio),
};
/* sched_waking and sched_wakeup: one message shape */
_Static_assert(F_SchedWakeupFtraceEvent_comm == F_SchedWakingFtraceEvent_comm &&
	       F_SchedWakeupFtraceEvent_pid == F_SchedWakingFtraceEvent_pid &&
	       F_SchedWakeupFtraceEvent_prio == F_SchedWakingFtraceEvent_prio &&
	       F_SchedWakeupFtraceEvent_success == F_SchedWakingFtraceEvent_success &&
	       F_SchedWakeupFtraceEvent_target_cpu == F_SchedWakingFtraceEvent_target_cpu,
	       "sched_wakeup and sched_waking share sched_wake_slots");
static const ft_slot sched_wake_slots[] = {
	[F_SchedWakingFtraceEvent_comm] = SLOT(FT_STR, sched_wake.comm),
	[F_SchedWakingFtraceEvent_pid] = SLOT(FT_I32, sched_wake.pid),
	[F_SchedWakingFtraceEvent_prio] = SLOT(FT_I32, sched_wake.prio),
	[F_SchedWakingFtraceEvent_success] = SLOT(FT_I32, sched_wake.success),
	[F_SchedWakingFtraceEvent_target_cpu] = SLOT(FT_I32, sched_wake.target_cpu),
};
/* cpu_frequency and cpu_idle: one message shape */
_Static_assert(F_CpuIdleFtraceEvent_state == F_CpuFrequencyFtraceEvent_state &&
	       F_CpuIdleFtraceEvent_cpu_id == F_CpuFrequencyFtraceEvent_cpu_id,
	       "cpu_frequency and cpu_idle share cpu_slots");
static const ft_slot cpu_slots[] = {
	[F_CpuFrequencyFtraceEvent_state] = SLOT(FT_U32, cpu.state),
	[F_CpuFrequencyFtraceEvent_cpu_id] = SLOT(FT_U32, cpu.cpu_id),
};
static const ft_slot newtask_slots[] = {
	[F_TaskNewtaskFtraceEvent_pid] = SLOT(FT_I32, task_newtask.pid),
	[F_TaskNewtaskFtraceEvent_comm] = SLOT(FT_STR, task_newtask.comm),
	[F_TaskNewtaskFtraceEvent_clone_flags] = SLOT(FT_U64, task_newtask.clone_flags),
	[F_TaskNewtaskFtraceEvent_oom_score_adj] = SLOT(FT_I32, task_newtask.oom_score_adj),
};
static const ft_slot rename_slots[] = {
	[F_TaskRenameFtraceEvent_pid] = SLOT(FT_I32, task_rename.pid),
	[F_TaskRenameFtraceEvent_oldcomm] = SLOT(FT_STR, task_rename.oldcomm),
	[F_TaskRenameFtraceEvent_newcomm] = SLOT(FT_STR, task_rename.newcomm),
	[F_TaskRenameFtraceEvent_oom_score_adj] = SLOT(FT_I32, task_rename.oom_score_adj),
};
static const ft_slot exit_slots[] = {
	[F_SchedProcessExitFtraceEvent_comm] = SLOT(FT_STR, sched_process_exit.comm),
	[F_SchedProcessExitFtraceEvent_pid] = SLOT(FT_I32, sched_process_exit.pid),
	[F_SchedProcessExitFtraceEvent_tgid] = SLOT(FT_I32, sched_process_exit.tgid),
	[F_SchedProcessExitFtraceEvent_prio] = SLOT(FT_I32, sched_process_exit.prio),
};
#undef SLOT

#define KIND(kind, slots) {kind, slots, N_OF(slots)}
static const struct {
	uint32_t kind;
	const ft_slot *slots;
	uint32_t n;
} ft_kinds[] = {
	KIND(TM_FT_PRINT, print_slots),
	KIND(TM_FT_SCHED_SWITCH, sched_switch_slots),
	KIND(TM_FT_CPU_FREQUENCY, cpu_slots),
	KIND(TM_FT_CPU_IDLE, cpu_slots),
	KIND(TM_FT_SCHED_WAKEUP, sched_wake_slots),
	KIND(TM_FT_SCHED_WAKING, sched_wake_slots),
	KIND(TM_FT_TASK_NEWTASK, newtask_slots),
	KIND(TM_FT_TASK_RENAME, rename_slots),
	KIND(TM_FT_SCHED_PROCESS_EXIT, exit_slots),
};
#undef KIND

static int decode_body(tm_ftrace_event *ev)
{
	const ft_slot *slots = NULL;
	uint32_t n = 0;
	for (size_t i = 0; i < sizeof(ft_kinds) / sizeof(ft_kinds[0]); i++)
		if (ft_kinds[i].kind == ev->kind) {
			slots = ft_kinds[i].slots;
			n = ft_kinds[i].n;
			break;
		}
	if (!slots)
		return 1;
	tm_pb_iter it;
	tm_pb_field f;
	int r;
	tm_pb_iter_init(&it, ev->body);
	while ((r = tm_pb_next(&it, &f)) > 0) {
		if (f.id >= n || !slots[f.id].type)
			continue;
		char *dst = (char *)ev + slots[f.id].off;
		uint8_t type = slots[f.id].type;
		if (type == FT_STR) {
			if (f.wire == TM_PB_LEN)
				memcpy(dst, &f.data, sizeof(tm_span));
			continue;
		}
		if (f.wire != TM_PB_VARINT)
			continue;
		switch (type) {
		case FT_U32: { uint32_t v = (uint32_t)f.val; memcpy(dst, &v, sizeof(v)); break; }
		case FT_I32: { int32_t v = as_i32(f.val); memcpy(dst, &v, sizeof(v)); break; }
		case FT_I64: { int64_t v = (int64_t)f.val; memcpy(dst, &v, sizeof(v)); break; }
		case FT_U64: memcpy(dst, &f.val, sizeof(f.val)); break;
		}
	}
	return r == 0;
}

int tm_ftrace_event_decode(tm_span msg, tm_ftrace_event *ev)
{
	memset(ev, 0, sizeof(*ev));
	ev->raw = msg;
	tm_pb_iter it;
	tm_pb_field f;
	int r;
	tm_pb_iter_init(&it, msg);
	while ((r = tm_pb_next(&it, &f)) > 0) {
		if (f.wire == TM_PB_LEN) {
			if (!ev->kind) {
				ev->kind = f.id;
				ev->body = f.data;
			}
			continue;
		}
		if (f.wire != TM_PB_VARINT)
			continue;
		if (f.id == F_FtraceEvent_timestamp && !ev->has_timestamp) {
			ev->has_timestamp = true;
			ev->timestamp = f.val;
		} else if (f.id == F_FtraceEvent_pid) {
			ev->has_pid = true;
			ev->pid = (uint32_t)f.val;
		} else if (f.id == F_FtraceEvent_common_flags) {
			ev->common_flags = (uint32_t)f.val;
		}
	}
	int ok = r == 0;
	if (ev->kind)
		ok &= decode_body(ev);
	return ok;
}

void tm_ftrace_events_begin(tm_ftrace_iter *it, const tm_ftrace_bundle *b)
{
	tm_pb_iter_init(&it->it, b->raw);
}

int tm_ftrace_events_next(tm_ftrace_iter *it, tm_ftrace_event *ev)
{
	tm_pb_field f;
	while (tm_pb_next(&it->it, &f) > 0)
		if (f.id == F_FtraceEventBundle_event && f.wire == TM_PB_LEN) {
			tm_ftrace_event_decode(f.data, ev);
			return 1;
		}
	return 0;
}

/* ---- compact sched ---------------------------------------------------------- */

enum { COL_TS, COL_A, COL_B, COL_C, COL_COMM, COL_FLAGS };

void tm_compact_switch_begin(tm_compact_iter *it, const tm_ftrace_bundle *b)
{
	memset(it, 0, sizeof(*it));
	it->b = b;
	it->col[COL_TS] = b->compact.switch_timestamp;
	it->col[COL_A] = b->compact.switch_prev_state;
	it->col[COL_B] = b->compact.switch_next_pid;
	it->col[COL_C] = b->compact.switch_next_prio;
	it->col[COL_COMM] = b->compact.switch_next_comm_index;
}

void tm_compact_waking_begin(tm_compact_iter *it, const tm_ftrace_bundle *b)
{
	memset(it, 0, sizeof(*it));
	it->b = b;
	it->col[COL_TS] = b->compact.waking_timestamp;
	it->col[COL_A] = b->compact.waking_pid;
	it->col[COL_B] = b->compact.waking_target_cpu;
	it->col[COL_C] = b->compact.waking_prio;
	it->col[COL_COMM] = b->compact.waking_comm_index;
	it->col[COL_FLAGS] = b->compact.waking_common_flags;
}

/* Take the next value of the five stepped columns into v[]. 1 a row, 0 a
 * clean end, -1 the end of a damaged set (see tm_compact_switch_next). */
static int compact_row(tm_compact_iter *it, uint64_t v[5])
{
	if (it->bad)
		return -1;
	int empty = 0;
	for (int i = 0; i <= COL_COMM; i++)
		empty += it->col[i].n == 0;
	if (empty) {
		it->bad = empty != COL_COMM + 1;
		return it->bad ? -1 : 0;
	}
	for (int i = 0; i <= COL_COMM; i++) {
		const uint8_t *p = it->col[i].p;
		if (!col_varint(&p, p + it->col[i].n, &v[i])) {
			it->bad = true;
			return -1;
		}
		it->col[i].n -= (size_t)(p - it->col[i].p);
		it->col[i].p = p;
	}
	/* formats.md §5.8: the k-th time is the sum of the first k deltas. */
	it->acc += v[COL_TS];
	if ((uint32_t)v[COL_COMM] >= it->b->intern_table.n) {
		it->bad = true;
		return -1;
	}
	return 1;
}

int tm_compact_switch_next(tm_compact_iter *it, tm_compact_switch *out)
{
	uint64_t v[5];
	int r = compact_row(it, v);
	if (r <= 0)
		return r;
	out->timestamp = it->acc;
	out->prev_state = (int64_t)v[COL_A];
	out->next_pid = as_i32(v[COL_B]);
	out->next_prio = as_i32(v[COL_C]);
	out->next_comm_index = (uint32_t)v[COL_COMM];
	out->next_comm = it->b->intern_table.v[out->next_comm_index];
	return 1;
}

int tm_compact_waking_next(tm_compact_iter *it, tm_compact_waking *out)
{
	uint64_t v[5];
	int r = compact_row(it, v);
	if (r <= 0)
		return r == 0 && it->flags_bad ? -1 : r;
	out->timestamp = it->acc;
	out->pid = as_i32(v[COL_A]);
	out->target_cpu = as_i32(v[COL_B]);
	out->prio = as_i32(v[COL_C]);
	out->comm_index = (uint32_t)v[COL_COMM];
	out->comm = it->b->intern_table.v[out->comm_index];
	/* common_flags is optional and not stepped with the others; a damaged
	 * value only counts as a parse error at the end. */
	out->has_common_flags = false;
	out->common_flags = 0;
	tm_span *fl = &it->col[COL_FLAGS];
	if (fl->n && !it->flags_bad) {
		const uint8_t *p = fl->p;
		uint64_t x;
		if (tm_pb_varint(&p, p + fl->n, &x)) {
			out->has_common_flags = true;
			out->common_flags = (uint32_t)x;
			fl->n -= (size_t)(p - fl->p);
			fl->p = p;
		} else {
			it->flags_bad = true;
		}
	}
	return 1;
}
