/* core/formats/json/model_json.c - Chrome JSON events into the tables, as the
 * reference's JsonTraceTokenizer (field extraction) and JsonTraceParser
 * (ParseJsonPacket) do at v58.2. */
#include "model/model_internal.h"
#include "formats/json/json_format.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "formats/json/json_rec.h"

typedef enum { COOKIE_NONE, COOKIE_ID, COOKIE_ID2_GLOBAL, COOKIE_ID2_LOCAL } cookie_type;

/* JsonEvent, as the tokenizer fills it: the record's fields with the
 * model's ids. */
typedef struct jev {
	char phase;
	int64_t dur;            /* -1 absent (the reference's max()) */
	int64_t pid, tid;
	int pid_exists, tid_exists;
	int pid_is_string, tid_is_string;
	const char *pid_str, *tid_str;
	size_t pid_str_n, tid_str_n;
	uint32_t name, cat;     /* 0: null */
	json_rec_id id, bind_id;
	int flow_in, flow_out;
	uint8_t scope;          /* json_rec_scope */
	int bind_enclosing;
	int has_args;           /* an args object */
	cookie_type cookie_type;
	uint64_t cookie;
	const json_rec_view *rec; /* its args: annot, text, members */
} jev;

/* A string id (pid, tid, async id) of the reference's StringPool: one id
 * per distinct string over the whole import. Ours start at 2^32, above
 * every numeric pid. */
static int64_t string_id(tm_model *m, const char *s, size_t n)
{
	uint32_t sid = m_intern(&m->str, s, n);
	int ins;
	uint64_t *v = m_map_put(&m->json_string_ids, sid, &ins);
	if (ins)
		*v = (uint64_t)m->next_string_pid++;
	return (int64_t)*v;
}

static uint64_t id_value(tm_model *m, const json_rec_id *id)
{
	if (id->type == JR_ID_STR)
		return (uint64_t)string_id(m, id->s, id->n) ^ 0x8000000000000000ull;
	return id->u;
}

/* The record's fields as the model's: its strings interned (and string
 * pids and tids given their ids) in the order the reference's
 * ParseTraceEventContents meets them, every occurrence. */
static void read_event(tm_model *m, const json_rec_view *v, jev *e)
{
	memset(e, 0, sizeof(*e));
	e->rec = v;
	e->phase = v->phase;
	e->dur = v->dur;
	e->id = v->id;
	e->bind_id = v->bind_id;
	e->flow_in = v->flow_in;
	e->flow_out = v->flow_out;
	e->scope = v->scope;
	e->bind_enclosing = v->bind_enclosing;
	e->has_args = v->has_args;
	const char *at = v->strs;
	for (uint32_t i = 0; i < v->n_strs; i++) {
		json_rec_str s;
		json_rec_next_str(&at, &s);
		if (s.kind == JR_STR_PID || s.kind == JR_STR_TID) {
			int64_t id = string_id(m, s.s, s.n);
			int pid = s.kind == JR_STR_PID;
			if (i == (pid ? v->pid_str : v->tid_str)) {
				*(pid ? &e->pid : &e->tid) = id;
				*(pid ? &e->pid_str : &e->tid_str) = s.s;
				*(pid ? &e->pid_str_n : &e->tid_str_n) = s.n;
			}
		} else {
			uint32_t id = m_intern(&m->str, s.s, s.n);
			if (i == v->cat)
				e->cat = id;
			if (i == v->name)
				e->name = id;
		}
	}
	e->pid_exists = v->pid_kind != JR_PID_ABSENT;
	e->pid_is_string = v->pid_kind == JR_PID_STRING;
	if (v->pid_kind == JR_PID_NUMBER)
		e->pid = v->pid;
	e->tid_exists = v->tid_kind != JR_PID_ABSENT;
	e->tid_is_string = v->tid_kind == JR_PID_STRING;
	if (v->tid_kind == JR_PID_NUMBER)
		e->tid = v->tid;
	if (e->tid == 0 && e->pid != 0 && !e->tid_is_string)
		e->tid = e->pid;
	/* the async cookie: (category, id) */
	if (e->id.type == JR_ID_NONE) {
		if (v->id2_global.type != JR_ID_NONE) {
			e->cookie_type = COOKIE_ID2_GLOBAL;
			e->cookie = m_hash2(e->cat, id_value(m, &v->id2_global));
		} else if (v->id2_local.type != JR_ID_NONE) {
			e->cookie_type = COOKIE_ID2_LOCAL;
			e->cookie = m_hash2(e->cat, id_value(m, &v->id2_local));
		}
	} else {
		e->cookie_type = COOKIE_ID;
		e->cookie = m_hash2(e->cat, id_value(m, &e->id));
	}
}

/* MaybeExtractFlowIdentifier: a string id is read as hexadecimal. */
static int flow_id(const json_rec_id *id, uint64_t *out)
{
	if (id->type == JR_ID_UINT) {
		*out = id->u;
		return 1;
	}
	if (id->type != JR_ID_STR || !id->n || memchr(id->s, 0, id->n))
		return 0;
	char *end;
	errno = 0;
	unsigned long long v = strtoull(id->s, &end, 16);
	if (end == id->s || *end || errno == ERANGE)
		return 0;
	*out = v;
	return 1;
}

static void maybe_add_flow(tm_model *m, m_ctx *c, uint32_t track, const jev *e)
{
	uint64_t bind;
	if (!flow_id(&e->bind_id, &bind))
		return;
	if (e->flow_in && e->flow_out)
		m_flow_step_track(m, c, track, bind);
	else if (e->flow_out)
		m_flow_begin_track(m, c, track, bind);
	else if (e->flow_in)
		m_flow_end_track(m, c, track, bind, 1, 0);
	else
		m_stat(m, "flow_without_direction", 1);
}

static uint32_t no_name(tm_model *m, uint32_t name)
{
	return name ? name : m_intern(&m->str, "[No name]", 9);
}

/* A numeric JSON value as base::StringToDouble reads a string. */
static int string_to_double(const char *s, size_t n, double *out)
{
	if (!n || memchr(s, 0, n))
		return 0;
	char *end;
	*out = strtod(s, &end);
	return end != s && *end == '\0';
}

static void counters(tm_model *m, m_ctx *c, m_mach *mc, int64_t ts, const jev *e, int64_t utid, uint32_t file)
{
	(void)mc;
	const json_rec_view *v = e->rec;
	tm_buf *name = &m->scratch;
	const char *at = v->members;
	json_rec_member_view a;
	for (size_t i = 0; i < v->n_members && json_rec_next_member(v, &at, &a); i++) {
		double value;
		if (a.type == TJ_STRING) {
			if (!string_to_double(a.s, a.n, &value)) {
				m_stat(m, "json_parser_failure", 1);
				continue;
			}
		} else if (a.type == TJ_DOUBLE) {
			value = a.d;
		} else if (a.type == TJ_INT) {
			value = (double)a.i;
		} else {
			m_stat(m, "json_parser_failure", 1);
			continue;
		}
		name->len = 0;
		const char *nm = m_str(&m->str, e->name);
		if (nm)
			tm_buf_puts(name, nm);
		if (e->id.type == JR_ID_STR && e->id.n) {
			tm_buf_puts(name, " id: ");
			tm_buf_put(name, e->id.s, e->id.n);
		}
		tm_buf_put(name, " ", 1);
		tm_buf_put(name, a.key, a.key_n);
		uint32_t nid = m_intern(&m->str, name->data, name->len);
		int64_t upid = m->threads[utid].pub.upid;
		uint32_t track = m_named_track(m, c, TM_MT_PROCESS_COUNTER, TM_SCOPE_PROCESS, -1, upid, -1, nid);
		m_counter(m, track, ts, value, file);
	}
}

static void observe(tm_model *m, const tm_mrec_head *h, int64_t ts, const jev *e, uint32_t track, int spilled,
		    int dropped)
{
	if (!m->sink.observed)
		return;
	json_observed j = {e->phase,
		      e->dur,
		      m_str(&m->str, e->name),
		      m_str(&m->str, e->cat),
		      e->rec->annot,
		      e->rec->annot_n,
		      0,
		      0,
		      e->bind_enclosing,
		      0,
		      0,
		      e->flow_in,
		      e->flow_out};
	j.has_flow_id = flow_id(&e->id, &j.flow_id);
	j.has_bind_id = flow_id(&e->bind_id, &j.bind_id);
	tm_mobserved ob = {.model = m, .head = h, .ts = ts, .event = &j, .track = track, .spilled = spilled,
			   .dropped = dropped, .made = m->made, .n_made = m->n_made};
	m->sink.observed(m->sink.ctx, &ob);
}

static void json_apply(tm_model *m, const tm_mrec_head *h, int64_t ts, const char *rec, size_t len)
{
	json_rec_view v;
	if (json_rec_decode(rec, len, &v) != 0)
		return;
	jev e;
	read_event(m, &v, &e);
	/* the slices' args, as the record carries them (core/formats/json/json_rec.h) */
	const char *args = v.text;
	size_t args_n = v.text_n;
	m_mach *mc = m_machine(m, h->machine_row);
	m_ctx *c = m_context(m, h->file_id, h->machine_row);
	uint32_t file = h->file_id;
	uint32_t track = UINT32_MAX;
	int spilled = 0, dropped = 0;

	if (e.pid_is_string) {
		int64_t upid = m_get_or_create_process(m, mc, e.pid);
		m_update_process_name(m, upid, m_intern(&m->str, e.pid_str, e.pid_str_n), PP_SYSTEM);
	}
	if (e.tid_is_string) {
		int64_t u = m_get_or_create_thread(m, mc, e.tid);
		m_update_thread_name(m, u, m_intern(&m->str, e.tid_str, e.tid_str_n), TP_OTHER);
	}
	int64_t utid = m_update_thread(m, mc, e.tid, e.pid);

	switch (e.phase) {
	case 'B':
		track = m_thread_track(m, c, utid);
		m_slice_begin_raw(m, c, track, ts, e.cat, no_name(m, e.name), args, args_n, file);
		maybe_add_flow(m, c, track, &e);
		break;
	case 'E':
		track = m_thread_track(m, c, utid);
		m_slice_end_raw(m, c, track, ts, e.cat, e.name, args, args_n);
		break;
	case 'b':
	case 'e':
	case 'n': {
		if (!e.pid_exists || e.cookie_type == COOKIE_NONE) {
			m_stat(m, "json_parser_failure", 1);
			dropped = 1;
			break;
		}
		int64_t upid = m_get_or_create_process(m, mc, e.pid);
		int local = e.cookie_type == COOKIE_ID2_LOCAL;
		/* async_tracks_to_root_string_id_: the first name of a trace id
		 * names its track set */
		uint64_t root_key = local ? m_hash2(m_hash2(1, (uint64_t)upid), e.cookie) : m_hash2(2, e.cookie);
		int ins;
		uint64_t *root = m_map_put(&c->async_root_name, root_key, &ins);
		if (ins)
			*root = e.name;
		uint64_t set = local ? m_hash2(m_hash2(0x6c6170, (uint64_t)upid), *root) : m_hash2(0x676173, *root);
		tm_mtrack_kind kind = local ? TM_MT_ASYNC_PROCESS : TM_MT_ASYNC_GLOBAL;
		tm_mtrack_scope scope = local ? TM_SCOPE_PROCESS : TM_SCOPE_GLOBAL;
		int64_t tupid = local ? upid : -1;
		int64_t cookie = (int64_t)e.cookie;
		if (e.phase == 'b') {
			track = m_compress_begin(m, c, set, cookie, 1, kind, scope, tupid, e.name);
			m_slice_begin_raw(m, c, track, ts, e.cat, no_name(m, e.name), args, args_n, file);
			maybe_add_flow(m, c, track, &e);
		} else if (e.phase == 'e') {
			track = m_compress_end(m, c, set, cookie, kind, scope, tupid, e.name);
			m_slice_end_raw(m, c, track, ts, e.cat, e.name, args, args_n);
		} else {
			track = m_compress_begin(m, c, set, cookie, 1, kind, scope, tupid, e.name);
			m_compress_end(m, c, set, cookie, kind, scope, tupid, e.name);
			m_slice_scoped_raw(m, c, track, ts, e.cat, e.name, 0, args, args_n, NULL, file);
			maybe_add_flow(m, c, track, &e);
		}
		break;
	}
	case 'X': {
		if (e.dur < 0) {
			/* json_parser_failure: counted by the scan, which sees
			 * the X without its dur first (core/formats/json/json_trace.c) */
			dropped = 1;
			break;
		}
		track = m_thread_track(m, c, utid);
		m_overlap ov = {0};
		size_t ix = m_slice_scoped_raw(m, c, track, ts, e.cat, no_name(m, e.name), e.dur, args, args_n, &ov,
					       file);
		if (!ix && ov.hit) {
			m_stat(m, "slice_spill_overlapping_complete_event", 1);
			uint32_t set = 0x6f766c70;
			track = m_compress_overlapping(m, c, m_hash2(set, (uint64_t)utid), ts, e.dur,
						       TM_MT_THREAD_OVERLAP, TM_SCOPE_THREAD, utid, 0);
			m_slice_scoped_raw(m, c, track, ts, e.cat, no_name(m, e.name), e.dur, args, args_n, NULL,
					   file);
			spilled = 1;
		}
		maybe_add_flow(m, c, track, &e);
		break;
	}
	case 'C':
		if (!e.has_args) {
			m_stat(m, "json_parser_failure", 1);
			dropped = 1;
			break;
		}
		counters(m, c, mc, ts, &e, utid, file);
		break;
	case 'R':
	case 'I':
	case 'i':
		if (e.scope == JR_SCOPE_GLOBAL) {
			track = m_named_track(m, c, TM_MT_GLOBAL_INSTANT, TM_SCOPE_GLOBAL, -1, -1, -1, 0);
			m_slice_scoped_raw(m, c, track, ts, e.cat, e.name, 0, args, args_n, NULL, file);
		} else if (e.scope == JR_SCOPE_PROCESS) {
			if (!e.pid_exists) {
				m_stat(m, "json_parser_failure", 1);
				dropped = 1;
				break;
			}
			int64_t upid = m_get_or_create_process(m, mc, e.pid);
			track = m_named_track(m, c, TM_MT_PROCESS_INSTANT, TM_SCOPE_PROCESS, -1, upid, -1, 0);
			m_slice_scoped_raw(m, c, track, ts, e.cat, e.name, 0, args, args_n, NULL, file);
		} else {
			if (!e.tid_exists) {
				m_stat(m, "json_parser_failure", 1);
				dropped = 1;
				break;
			}
			track = m_thread_track(m, c, utid);
			m_slice_scoped_raw(m, c, track, ts, e.cat, no_name(m, e.name), 0, args, args_n, NULL, file);
		}
		break;
	case 's':
	case 't':
	case 'f': {
		track = m_thread_track(m, c, utid);
		uint64_t src;
		if (!flow_id(&e.id, &src)) {
			m_stat(m, "flow_invalid_id", 1);
			break;
		}
		uint64_t f = m_flow_v1_id(c, src, e.cat, e.name);
		if (e.phase == 's')
			m_flow_begin_track(m, c, track, f);
		else if (e.phase == 't')
			m_flow_step_track(m, c, track, f);
		else
			m_flow_end_track(m, c, track, f, e.bind_enclosing, 0);
		break;
	}
	case 'M': {
		if (!e.has_args)
			break;
		const char *nm = m_str(&m->str, e.name);
		if (!nm || (strcmp(nm, "thread_name") != 0 && strcmp(nm, "process_name") != 0))
			break;
		const char *at = v.members;
		json_rec_member_view a;
		for (size_t i = 0; i < v.n_members && json_rec_next_member(&v, &at, &a); i++) {
			if (a.key_n != 4 || memcmp(a.key, "name", 4) != 0)
				continue;
			if (a.type != TJ_STRING || !a.n) {
				m_stat(m, "json_parser_failure", 1);
				continue;
			}
			uint32_t id = m_intern(&m->str, a.s, a.n);
			if (nm[0] == 't') {
				m_update_thread_name(m, utid, id, TP_OTHER);
			} else {
				int64_t upid = m_get_or_create_process(m, mc, e.pid);
				m_update_process_name(m, upid, id, PP_SYSTEM);
			}
		}
		break;
	}
	default:
		break;
	}
	observe(m, h, ts, &e, track, spilled, dropped);
}

static void apply(tm_model *m, const tm_mrec_head *h, int64_t ts, const char *body, size_t n, const void *pre,
		  size_t pre_len)
{
	json_apply(m, h, ts, body, n);
}

const tm_parser tm_json_parser = {.apply = apply};
