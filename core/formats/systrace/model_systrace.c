/* core/formats/systrace/model_systrace.c - systrace lines into the tables, as the
 * reference's SystraceLineParser and SystraceParser (print payloads) do at
 * v58.2; the sched rows they feed are core/model/sched.c. */
#include "model/model_internal.h"
#include "formats/systrace/systrace_format.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "formats/systrace/systrace.h"

static int arg(systrace_args *args, const char *key, char *out, size_t n)
{
	if (!systrace_args_get(args, key, out, n)) {
		out[0] = '\0';
		return 0;
	}
	return 1;
}
/* ---- print payloads (SystraceParser::ParseSystracePoint) ----------------------- */

static uint64_t atrace_set(uint32_t kind, int64_t upid, uint32_t name)
{
	return m_hash2(m_hash2(kind, (uint64_t)upid), name);
}

uint32_t m_systrace_print(tm_model *m, m_ctx *c, m_mach *mc, int64_t ts, uint32_t pid, const systrace_event *l,
			  uint32_t file)
{
	uint32_t on = UINT32_MAX;
	uint32_t tgid = l->print_has_tgid ? l->print_tgid : 0;
	const char *name = l->print_name;
	uint32_t name_id = m_intern(&m->str, name, strlen(name));
#define GET_UTID() (tgid == 0 ? m_get_or_create_thread(m, mc, pid) : m_update_thread(m, mc, pid, tgid))
	switch (l->print_phase) {
	case 'B': {
		int64_t utid = GET_UTID();
		uint32_t track = m_thread_track(m, c, utid);
		m_slice_begin(m, c, track, ts, 0, name_id, file);
		on = track;
		if (strncmp(name, "lmk,", 4) == 0) {
			on = UINT32_MAX;
			/* PostProcessSpecialSliceBegin: 'lmk,pid,reason,oom adj,...' */
			char tmp[256];
			snprintf(tmp, sizeof tmp, "%s", name);
			char *tok[5] = {0};
			int nt = 0;
			for (char *p = strtok(tmp, ","); p && nt < 5; p = strtok(NULL, ","))
				tok[nt++] = p;
			uint32_t killed;
			int32_t adj;
			if (nt >= 4 && systrace_to_u32(tok[1], &killed) && systrace_to_i32(tok[3], &adj)) {
				int64_t kupid = m_get_or_create_process(m, mc, killed);
				uint32_t ct = m_named_track(m, c, TM_MT_PROCESS_COUNTER, TM_SCOPE_PROCESS, -1, kupid, -1,
							    m_intern(&m->str, "oom_score_adj", 13));
				m_counter(m, ct, ts, adj, file);
				uint32_t it = m_named_track(m, c, TM_MT_PROCESS_INSTANT, TM_SCOPE_PROCESS, -1, kupid, -1,
							    m_intern(&m->str, "mem.lmk", 7));
				m_slice_scoped(m, c, it, ts, 0, m_intern(&m->str, "mem.lmk", 7), 0, NULL, file);
			}
		}
		break;
	}
	case 'E': {
		int64_t utid;
		if (tgid == 0) {
			utid = m_get_thread_or_null(m, mc, pid);
			if (utid < 0)
				break;
		} else {
			utid = m_update_thread(m, mc, pid, tgid);
		}
		on = m_thread_track(m, c, utid);
		m_slice_end(m, c, on, ts, 0, 0);
		break;
	}
	case 'S':
	case 'F': {
		int64_t upid = m_get_or_create_process(m, mc, tgid);
		uint64_t set = atrace_set(0x535f46, upid, name_id);
		if (l->print_phase == 'S') {
			uint32_t track = m_compress_begin(m, c, set, l->print_value, 0, TM_MT_ATRACE_ASYNC,
							  TM_SCOPE_PROCESS, upid, name_id);
			m_slice_begin_unnestable(m, c, track, ts, name_id, l->print_value, file);
		} else {
			uint32_t track = m_compress_end(m, c, set, l->print_value, TM_MT_ATRACE_ASYNC, TM_SCOPE_PROCESS,
							upid, name_id);
			m_slice_end(m, c, track, ts, 0, 0);
		}
		break;
	}
	case 'I': {
		int64_t utid = GET_UTID();
		on = m_thread_track(m, c, utid);
		m_slice_scoped(m, c, on, ts, 0, name_id, 0, NULL, file);
		break;
	}
	case 'N':
	case 'G':
	case 'H': {
		const char *tname = l->print_track;
		uint32_t tname_id = m_intern(&m->str, tname, strlen(tname));
		if (strcmp(tname, "DeviceStateChanged") == 0 && l->print_phase == 'N') {
			uint32_t t = m_named_track(m, c, TM_MT_GLOBAL_INSTANT, TM_SCOPE_GLOBAL, -1, -1, -1, tname_id);
			m_slice_scoped(m, c, t, ts, 0, name_id, 0, NULL, file);
			break;
		}
		int64_t upid = m_get_or_create_process(m, mc, tgid);
		uint64_t set = atrace_set(0x4e4748, upid, tname_id);
		char v[32];
		if (l->print_phase == 'N') {
			uint32_t t = m_compress_scoped(m, c, set, ts, 0, TM_MT_ATRACE_TRACK, TM_SCOPE_PROCESS, upid,
						       tname_id);
			int64_t utid = m_get_or_create_thread(m, mc, pid);
			size_t ix = m_slice_scoped(m, c, t, ts, 0, name_id, 0, NULL, file);
			snprintf(v, sizeof v, "%lld", (long long)utid);
			m_slice_add_arg(m, t, ix, "utid", v);
		} else if (l->print_phase == 'G') {
			uint32_t t = m_compress_begin(m, c, set, l->print_value, 1, TM_MT_ATRACE_TRACK,
						      TM_SCOPE_PROCESS, upid, tname_id);
			int64_t utid = m_get_or_create_thread(m, mc, pid);
			size_t ix = m_slice_begin(m, c, t, ts, 0, name_id, file);
			snprintf(v, sizeof v, "%lld", (long long)utid);
			m_slice_add_arg(m, t, ix, "utid", v);
		} else {
			uint32_t t = m_compress_end(m, c, set, l->print_value, TM_MT_ATRACE_TRACK, TM_SCOPE_PROCESS,
						    upid, tname_id);
			int64_t utid = m_get_or_create_thread(m, mc, pid);
			size_t ix = m_slice_end(m, c, t, ts, 0, 0);
			(void)ix;
			(void)utid;
		}
		break;
	}
	case 'C': {
		if (strcmp(name, "kill_one_process") == 0) {
			uint32_t killed = (uint32_t)l->print_value;
			if (killed) {
				int64_t kupid = m_get_or_create_process(m, mc, killed);
				uint32_t it = m_named_track(m, c, TM_MT_PROCESS_INSTANT, TM_SCOPE_PROCESS, -1, kupid, -1,
							    m_intern(&m->str, "mem.lmk", 7));
				m_slice_scoped(m, c, it, ts, 0, m_intern(&m->str, "mem.lmk", 7), 0, NULL, file);
			}
		} else if (strcmp(name, "ScreenState") == 0 || strncmp(name, "battery_stats.", 14) == 0) {
			uint32_t t = m_named_track(m, c, TM_MT_GLOBAL_COUNTER, TM_SCOPE_GLOBAL, -1, -1, -1, name_id);
			m_counter(m, t, ts, (double)l->print_value, file);
			break;
		}
		int64_t upid = m_get_or_create_process(m, mc, tgid);
		uint32_t t = m_named_track(m, c, TM_MT_PROCESS_COUNTER, TM_SCOPE_PROCESS, -1, upid, -1, name_id);
		m_counter(m, t, ts, (double)l->print_value, file);
		break;
	}
	default:
		break;
	}
#undef GET_UTID
	return on;
}

/* ---- records ----------------------------------------------------------------- */

/* The payload after the head: the fixed fields as varints (ts, pid and
 * tgid zigzagged, print_value zigzagged, cpu, print_tgid, then a byte of
 * print_phase and one of flags), then task, event name, args, print name
 * and print track, each NUL-terminated. As a struct the fixed part was 44
 * bytes of a record of about 140 (a kernel trace's line); packed it is
 * about 15, and the order store a fifth smaller. */
enum { SF_PRINT_HAS_TGID = 1, SF_JSON_EMBEDDED = 2, SF_BAD_PRINT = 4 };
#define SYS_FIXED_MAX (6 * TM_UV_MAX + 2)

void tm_mrec_systrace(tm_buf *b, uint32_t file_id, uint32_t machine_row, const systrace_event *l)
{
	b->len = 0;
	tm_mrec_head h = {TM_MREC_SYSTRACE, 0, (uint16_t)(l->cpu > 0xffff ? 0xffff : l->cpu), file_id, machine_row};
	uint8_t f[SYS_FIXED_MAX], *e = f;
	e = tm_uv_put(e, tm_zz(l->ts));
	e = tm_uv_put(e, tm_zz(l->pid));
	e = tm_uv_put(e, tm_zz(l->tgid));
	e = tm_uv_put(e, tm_zz(l->print_value));
	e = tm_uv_put(e, l->cpu);
	e = tm_uv_put(e, l->print_tgid);
	*e++ = (uint8_t)l->print_phase;
	*e++ = (uint8_t)((l->print_has_tgid ? SF_PRINT_HAS_TGID : 0) | (l->json_embedded ? SF_JSON_EMBEDDED : 0) |
			 (l->bad_print ? SF_BAD_PRINT : 0));
	tm_mrec_head_put(b, &h);
	tm_buf_put(b, f, (size_t)(e - f));
	const char *strs[] = {l->task, l->event_name, l->args, l->print_name, l->print_track};
	for (size_t i = 0; i < 5; i++)
		tm_buf_put(b, strs[i] ? strs[i] : "", strlen(strs[i] ? strs[i] : "") + 1);
}

/* The line's fixed fields back from a record's payload: the bytes they
 * took, 0 when they are not there. */
static size_t unpack_fixed(const char *p, size_t n, systrace_event *l)
{
	const uint8_t *q = (const uint8_t *)p, *end = q + n;
	uint64_t v[6];
	for (size_t i = 0; i < 6; i++)
		if (!(q = tm_uv_get(q, end, &v[i])))
			return 0;
	if (end - q < 2)
		return 0;
	systrace_event_empty(l);
	l->ts = tm_unzz(v[0]);
	l->pid = tm_unzz(v[1]);
	l->tgid = tm_unzz(v[2]);
	l->print_value = tm_unzz(v[3]);
	l->cpu = (uint32_t)v[4];
	l->print_tgid = (uint32_t)v[5];
	l->print_phase = (char)q[0];
	l->print_has_tgid = (q[1] & SF_PRINT_HAS_TGID) != 0;
	l->json_embedded = (q[1] & SF_JSON_EMBEDDED) != 0;
	l->bad_print = (q[1] & SF_BAD_PRINT) != 0;
	return (size_t)(q + 2 - (const uint8_t *)p);
}

/* The line back from a record's payload (strings point into it). */
static int unpack(const char *p, size_t n, systrace_event *l)
{
	size_t fixed = unpack_fixed(p, n, l);
	if (!fixed)
		return 0;
	const char **strs[] = {&l->task, &l->event_name, &l->args, &l->print_name, &l->print_track};
	const char *q = p + fixed, *end = p + n;
	for (size_t i = 0; i < 5; i++) {
		const char *z = memchr(q, 0, (size_t)(end - q));
		if (!z)
			return 0;
		*strs[i] = q;
		q = z + 1;
	}
	return 1;
}

/* m_systrace_prepare's bytes: where the five strings of the payload start
 * and, when split, its args' tokens, as offsets into the payload (a bare
 * token's key, the literal "name", as PRE_NAME), then n of sys_pre_kv.
 * Finding the strings and splitting the args were a fifth of the model
 * thread's work on the systrace bench's export, while the thread that
 * hands it the records waited for it most of the time. */
typedef struct sys_pre {
	uint32_t str[5];
	uint32_t split, n, more;
	uint32_t prepared, n_prepare; /* the sink's prepare: its bytes follow the tokens */
} sys_pre;
typedef struct sys_pre_kv {
	uint32_t k, kn, v, vn;
} sys_pre_kv;
#define PRE_NAME UINT32_MAX

static size_t m_systrace_prepare(const tm_model_sink *sink, int64_t ts, const tm_mrec_head *h, const char *payload,
			  size_t len, tm_buf *b)
{
	systrace_event l;
	if (len > UINT32_MAX - 1 || !unpack(payload, len, &l))
		return 0;
	systrace_args sa;
	systrace_args_init(&sa, l.args);
	/* Split only the lines whose args are read, as good as always, by
	 * m_systrace_apply and merged.pftrace (the most frequent of a kernel
	 * trace): the others, if ever, when looked up. */
	const char *ev = l.event_name;
	size_t evn = strlen(ev);
	if (SYSTRACE_EVENT_IS(ev, evn, "sched_switch") || SYSTRACE_EVENT_IS(ev, evn, "sched_waking") ||
	    SYSTRACE_EVENT_IS(ev, evn, "cpu_frequency") || SYSTRACE_EVENT_IS(ev, evn, "cpu_idle"))
		systrace_args_split(&sa);
	const char *strs[] = {l.task, l.event_name, l.args, l.print_name, l.print_track};
	sys_pre p = {.split = (uint32_t)sa.split};
	if (sa.split) {
		p.n = (uint32_t)sa.n;
		p.more = (uint32_t)sa.more;
	}
	for (size_t i = 0; i < 5; i++)
		p.str[i] = (uint32_t)(strs[i] - payload);
	size_t start = b->len;
	tm_buf_put(b, &p, sizeof p); /* written again below, complete */
	for (size_t i = 0; sa.split && i < sa.n; i++) {
		uintptr_t k = (uintptr_t)sa.kv[i].k, from = (uintptr_t)payload;
		int in = k >= from && k < from + len; /* else the literal "name" */
		sys_pre_kv kv = {in ? (uint32_t)(k - from) : PRE_NAME, (uint32_t)sa.kv[i].kn,
				 (uint32_t)(sa.kv[i].v - payload), (uint32_t)sa.kv[i].vn};
		tm_buf_put(b, &kv, sizeof kv);
	}
	if (sink->prepare) {
		size_t at = b->len;
		systrace_observed so = {&l, &sa};
		size_t n = sink->prepare(sink->ctx, ts, h, &so, b);
		if (n > UINT32_MAX || b->len != at + n) {
			b->len = at; /* cannot be: taken as not asked */
		} else {
			p.prepared = 1;
			p.n_prepare = (uint32_t)n;
			memcpy(b->data + start, &p, sizeof p);
		}
	}
	return b->len - start;
}

/* unpack, the args split and what the sink prepared (ob->prepare...),
 * from m_systrace_prepare's bytes. */
static int unpack_pre(const char *payload, size_t len, const void *pre, size_t pre_len, systrace_event *l,
		      systrace_args *a, tm_mobserved *ob)
{
	sys_pre p;
	if (pre_len < sizeof p || !unpack_fixed(payload, len, l))
		return 0;
	memcpy(&p, pre, sizeof p);
	if (p.n > SYSTRACE_ARGS_KEPT || (!p.split && p.n) ||
	    pre_len != sizeof p + p.n * sizeof(sys_pre_kv) + (size_t)p.n_prepare)
		return 0;
	ob->prepared = p.prepared != 0;
	ob->prepare = (const char *)pre + sizeof p + p.n * sizeof(sys_pre_kv);
	ob->n_prepare = p.n_prepare;
	const char **strs[] = {&l->task, &l->event_name, &l->args, &l->print_name, &l->print_track};
	for (size_t i = 0; i < 5; i++) {
		if (p.str[i] >= len)
			return 0;
		*strs[i] = payload + p.str[i];
	}
	a->text = l->args;
	a->split = p.split != 0;
	a->n = p.n;
	a->more = (int)p.more;
	const char *kv_at = (const char *)pre + sizeof p;
	for (size_t i = 0; i < p.n; i++) {
		sys_pre_kv kv;
		memcpy(&kv, kv_at + i * sizeof kv, sizeof kv);
		a->kv[i].k = kv.k == PRE_NAME ? "name" : payload + kv.k;
		a->kv[i].kn = kv.kn;
		a->kv[i].v = payload + kv.v;
		a->kv[i].vn = kv.vn;
	}
	return 1;
}

/* ---- a line (SystraceLineParser::ParseLine) ------------------------------------ */

static void kernel_row(tm_model *m, const tm_mrec_head *h, int64_t ts, const systrace_event *l)
{
	if (!m->sink.kernel)
		return;
	tm_mkernel k = {m->cur_seq, ts, l->cpu, l->pid, l->event_name, l->args, h->file_id, h->machine_row};
	m->sink.kernel(m->sink.ctx, &k);
}

static void m_systrace_apply(tm_model *m, const tm_mrec_head *h, int64_t ts, const char *payload, size_t len,
		      const void *pre, size_t pre_len)
{
	systrace_event l;
	systrace_args sa; /* the observer reads them too */
	tm_mobserved ob = {.track = UINT32_MAX};
	if (pre ? !unpack_pre(payload, len, pre, pre_len, &l, &sa, &ob) : !unpack(payload, len, &l))
		return;
	if (!pre)
		systrace_args_init(&sa, l.args);
	m_mach *mc = m_machine(m, h->machine_row);
	m_ctx *c = m_context(m, h->file_id, h->machine_row);
	uint32_t file = h->file_id;
	int64_t utid = m_get_or_create_thread(m, mc, l.pid);
	if (strcmp(l.task, "<...>") != 0)
		m_update_thread_name(m, utid, m_intern(&m->str, l.task, strlen(l.task)), TP_FTRACE);
	if (l.tgid >= 0)
		m_update_thread(m, mc, l.pid, l.tgid);
	const char *ev = l.event_name;
	size_t evn = strlen(ev);
#define EV_IS(lit) SYSTRACE_EVENT_IS(ev, evn, lit)
	systrace_args *a = &sa;
	char v1[256], v2[256], v3[256], v4[256], v5[256], v6[256], v7[256];
	int acted = 1; /* the reference made rows or state of the line */
	if (EV_IS("sched_switch")) {
		arg(a, "prev_state", v1, sizeof v1);
		int64_t state = tm_model_task_state_raw(v1);
		uint32_t prev_pid, next_pid;
		int32_t prev_prio, next_prio;
		arg(a, "prev_pid", v2, sizeof v2);
		arg(a, "prev_prio", v3, sizeof v3);
		arg(a, "next_pid", v4, sizeof v4);
		arg(a, "next_prio", v5, sizeof v5);
		arg(a, "prev_comm", v6, sizeof v6);
		arg(a, "next_comm", v7, sizeof v7);
		if (systrace_to_u32(v2, &prev_pid) && systrace_to_i32(v3, &prev_prio) && systrace_to_u32(v4, &next_pid) && systrace_to_i32(v5, &next_prio))
			m_sched_switch(m, c, l.cpu, ts, prev_pid, v6, prev_prio, state, next_pid, v7, next_prio, file);
		else
			acted = 0; /* "Could not parse sched_switch": no row */
	} else if (systrace_is_print_event(ev, evn)) {
		if (l.print_phase)
			ob.track = m_systrace_print(m, c, mc, ts, (uint32_t)l.pid, &l, file);
		else
			acted = 0;
	} else if (EV_IS("sched_waking")) {
		arg(a, "comm", v1, sizeof v1);
		uint32_t wakee;
		arg(a, "pid", v2, sizeof v2);
		if (systrace_to_u32(v2, &wakee)) {
			int64_t w = m_get_or_create_thread(m, mc, wakee);
			m_update_thread_name(m, w, m_intern(&m->str, v1, strlen(v1)), TP_FTRACE);
		} else {
			acted = 0;
		}
	} else if (EV_IS("cpu_frequency") || EV_IS("cpu_idle")) {
		uint32_t cpu;
		double st;
		arg(a, "cpu_id", v1, sizeof v1);
		arg(a, "state", v2, sizeof v2);
		if (systrace_to_u32(v1, &cpu) && systrace_to_double(v2, &st))
			m_counter_cpu(m, c, ev[4] == 'f' ? "cpufreq" : "cpuidle", cpu, ts, st, file);
		else
			acted = 0;
	} else if (EV_IS("cpu_frequency_limits")) {
		uint32_t cpu;
		double mx, mn;
		arg(a, "cpu_id", v1, sizeof v1);
		if (systrace_to_u32(v1, &cpu)) {
			int has_max = arg(a, "max", v2, sizeof v2) ? systrace_to_double(v2, &mx)
								   : (arg(a, "max_freq", v2, sizeof v2), systrace_to_double(v2, &mx));
			int has_min = arg(a, "min", v3, sizeof v3) ? systrace_to_double(v3, &mn)
								   : (arg(a, "min_freq", v3, sizeof v3), systrace_to_double(v3, &mn));
			if (has_max)
				m_cpu_freq_limit(m, c, 1, cpu, ts, mx, file);
			if (has_min)
				m_cpu_freq_limit(m, c, 0, cpu, ts, mn, file);
		}
	} else if (EV_IS("clock_set_rate") || EV_IS("clock_enable") ||
		   EV_IS("clock_disable")) {
		uint32_t rate;
		arg(a, "state", v1, sizeof v1);
		arg(a, "name", v2, sizeof v2);
		if (systrace_to_u32(v1, &rate))
			m_counter_keyed(m, c, v2, ev[6] == 's' ? M_CLOCK_FREQUENCY : M_CLOCK_STATE, ts, rate, file);
	} else if (EV_IS("workqueue_execute_start")) {
		const char *f = strstr(l.args, "function ");
		if (f) {
			f += 9;
			const char *e = strstr(f, "function ");
			size_t n = e ? (size_t)(e - f) : strlen(f);
			m_slice_begin(m, c, m_thread_track(m, c, utid), ts, m_intern(&m->str, "workqueue", 9),
				      m_intern(&m->str, f, n), file);
		}
	} else if (EV_IS("workqueue_execute_end")) {
		m_slice_end(m, c, m_thread_track(m, c, utid), ts, m_intern(&m->str, "workqueue", 9), 0);
	} else if (EV_IS("thermal_temperature") || EV_IS("cdev_update")) {
		int t_ = ev[0] == 't';
		arg(a, t_ ? "thermal_zone" : "type", v1, sizeof v1);
		arg(a, t_ ? "temp" : "target", v2, sizeof v2);
		int32_t ti;
		double dv;
		int ok = t_ ? systrace_to_i32(v2, &ti) : systrace_to_double(v2, &dv);
		if (ok)
			m_counter_keyed(m, c, v1, t_ ? M_THERMAL_TEMPERATURE : M_COOLING_DEVICE, ts, t_ ? ti : dv, file);
	} else if ((evn >= 7 && memcmp(ev, "binder_", 7) == 0) || EV_IS("sched_blocked_reason") ||
		   EV_IS("rss_stat")) {
		/* kept by the reference in tables the model does not rebuild */
	} else {
		acted = 0;
	}
	if (!acted)
		kernel_row(m, h, ts, &l);
	if (m->sink.observed) {
		ob.model = m;
		ob.head = h;
		ob.ts = ts;
		systrace_observed so = {&l, &sa};
		ob.event = &so;
		ob.dropped = !acted;
		ob.made = m->made;
		ob.n_made = m->n_made;
		m->sink.observed(m->sink.ctx, &ob);
	}
}
#undef EV_IS

const tm_parser tm_systrace_parser = {.apply = m_systrace_apply, .prepare = m_systrace_prepare, .line_cpu = 1};
