/* core/model_json.c - Chrome JSON events into the tables, as the
 * reference's JsonTraceTokenizer (field extraction) and JsonTraceParser
 * (ParseJsonPacket) do at v58.2. */
#include "model_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "json_trace.h"

typedef enum { ID_NONE, ID_STR, ID_UINT } id_type;

typedef struct json_id {
	id_type type;
	const char *s; /* ID_STR */
	size_t n;
	uint64_t u;    /* ID_UINT */
} json_id;

typedef enum { COOKIE_NONE, COOKIE_ID, COOKIE_ID2_GLOBAL, COOKIE_ID2_LOCAL } cookie_type;
typedef enum { SCOPE_NONE, SCOPE_GLOBAL, SCOPE_PROCESS, SCOPE_THREAD } scope_type;

/* JsonEvent, as the tokenizer fills it. */
typedef struct jev {
	char phase;
	int64_t dur;            /* -1 absent (the reference's max()) */
	int64_t pid, tid;
	int pid_exists, tid_exists;
	int pid_is_string, tid_is_string;
	const char *pid_str, *tid_str;
	size_t pid_str_n, tid_str_n;
	uint32_t name, cat;     /* 0: null */
	json_id id, bind_id;
	int flow_in, flow_out;
	scope_type scope;
	int bind_enclosing;
	const tj_value *args;   /* the args object, or NULL */
	int has_args;           /* a non-empty object text (args_size > 0) */
	cookie_type cookie_type;
	uint64_t cookie;
} jev;

static json_id extract_id(const tj_value *v)
{
	json_id id = {ID_NONE, NULL, 0, 0};
	if (!v)
		return id;
	if (v->type == TJ_STRING) {
		id.type = ID_STR;
		id.s = v->s;
		id.n = v->len;
	} else if (v->type == TJ_INT) {
		id.type = ID_UINT;
		id.u = (uint64_t)v->i;
	}
	return id;
}

static uint32_t coerce_u32_int(int64_t n)
{
	return n < 0 || n > UINT32_MAX ? 0 : (uint32_t)n;
}

/* A string id (pid, tid, async id) of the reference's StringPool: one id
 * per distinct string over the whole import. Ours start at 2^32, above
 * every numeric pid. */
static int64_t string_id(tm_model *m, const char *s, size_t n)
{
	uint64_t h = 1469598103934665603ull;
	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
	uint32_t sid = m_intern(&m->str, s, n);
	int ins;
	uint64_t *v = m_map_put(&m->json_string_ids, sid, &ins);
	if (ins)
		*v = (uint64_t)m->next_string_pid++;
	(void)h;
	return (int64_t)*v;
}

static uint64_t id_value(tm_model *m, const json_id *id)
{
	if (id->type == ID_STR)
		return (uint64_t)string_id(m, id->s, id->n) ^ 0x8000000000000000ull;
	return id->u;
}

static void pid_field(tm_model *m, const tj_value *v, int64_t *out, int *exists, int *is_string, const char **s,
		      size_t *n)
{
	if (!v)
		return;
	switch (v->type) {
	case TJ_STRING:
		*out = string_id(m, v->s, v->len);
		*is_string = 1;
		*exists = 1;
		*s = v->s;
		*n = v->len;
		break;
	case TJ_INT:
		*out = coerce_u32_int(v->i);
		*is_string = 0;
		*exists = 1;
		break;
	case TJ_DOUBLE:
		*out = v->d >= -9.2e18 && v->d <= 9.2e18 ? coerce_u32_int((int64_t)v->d) : 0;
		*is_string = 0;
		*exists = 1;
		break;
	default:
		break;
	}
}

static uint32_t str_field(tm_model *m, const tj_value *v)
{
	if (!v || v->type != TJ_STRING || !v->len)
		return 0;
	return m_intern(&m->str, v->s, v->len);
}

/* The fields in document order, each occurrence overwriting the last, as
 * ParseTraceEventContents does. */
static void read_event(tm_model *m, const tj_value *o, jev *e)
{
	memset(e, 0, sizeof(*e));
	e->dur = -1;
	json_id id2_local = {ID_NONE, NULL, 0, 0}, id2_global = {ID_NONE, NULL, 0, 0};
	for (size_t i = 0; i < o->len; i++) {
		const char *k = o->keys[i];
		size_t kn = o->key_lens[i];
		const tj_value *v = &o->items[i];
#define KEY(s) (kn == sizeof(s) - 1 && memcmp(k, s, kn) == 0)
		if (KEY("ph")) {
			e->phase = v->type == TJ_STRING && v->len ? v->s[0] : 0;
		} else if (KEY("dur")) {
			int64_t ns;
			if (json_trace_time_ns(v, &ns))
				e->dur = ns;
		} else if (KEY("pid")) {
			pid_field(m, v, &e->pid, &e->pid_exists, &e->pid_is_string, &e->pid_str, &e->pid_str_n);
		} else if (KEY("tid")) {
			pid_field(m, v, &e->tid, &e->tid_exists, &e->tid_is_string, &e->tid_str, &e->tid_str_n);
		} else if (KEY("id")) {
			json_id id = extract_id(v);
			if (id.type != ID_NONE)
				e->id = id;
		} else if (KEY("bind_id")) {
			json_id id = extract_id(v);
			if (id.type != ID_NONE)
				e->bind_id = id;
		} else if (KEY("cat")) {
			e->cat = str_field(m, v);
		} else if (KEY("name")) {
			e->name = str_field(m, v);
		} else if (KEY("flow_in")) {
			if (v->type == TJ_BOOL)
				e->flow_in = v->b;
		} else if (KEY("flow_out")) {
			if (v->type == TJ_BOOL)
				e->flow_out = v->b;
		} else if (KEY("s")) {
			if (v->type == TJ_STRING && v->len == 1 && v->s[0] == 'p')
				e->scope = SCOPE_PROCESS;
			else if (v->type == TJ_STRING && v->len == 1 && v->s[0] == 't')
				e->scope = SCOPE_THREAD;
			else if (v->type == TJ_STRING && v->len == 1 && v->s[0] == 'g')
				e->scope = SCOPE_GLOBAL;
			else if (v->type != TJ_STRING)
				e->scope = SCOPE_NONE;
		} else if (KEY("bp")) {
			e->bind_enclosing = v->type == TJ_STRING && v->len == 1 && v->s[0] == 'e';
		} else if (KEY("args")) {
			if (v->type == TJ_OBJECT) {
				e->args = v;
				e->has_args = 1;
			}
		} else if (KEY("id2")) {
			if (v->type == TJ_OBJECT)
				for (size_t j = 0; j < v->len; j++) {
					if (v->key_lens[j] == 5 && memcmp(v->keys[j], "local", 5) == 0)
						id2_local = extract_id(&v->items[j]);
					else if (v->key_lens[j] == 6 && memcmp(v->keys[j], "global", 6) == 0)
						id2_global = extract_id(&v->items[j]);
				}
		}
#undef KEY
	}
	if (e->tid == 0 && e->pid != 0 && !e->tid_is_string)
		e->tid = e->pid;
	/* the async cookie: (category, id) */
	if (e->id.type == ID_NONE) {
		if (id2_global.type != ID_NONE) {
			e->cookie_type = COOKIE_ID2_GLOBAL;
			e->cookie = m_hash2(e->cat, id_value(m, &id2_global));
		} else if (id2_local.type != ID_NONE) {
			e->cookie_type = COOKIE_ID2_LOCAL;
			e->cookie = m_hash2(e->cat, id_value(m, &id2_local));
		}
	} else {
		e->cookie_type = COOKIE_ID;
		e->cookie = m_hash2(e->cat, id_value(m, &e->id));
	}
}

/* MaybeExtractFlowIdentifier: a string id is read as hexadecimal. */
static int flow_id(const json_id *id, uint64_t *out)
{
	if (id->type == ID_UINT) {
		*out = id->u;
		return 1;
	}
	if (id->type != ID_STR || !id->n || memchr(id->s, 0, id->n))
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
	const tj_value *a = e->args;
	tm_buf *name = &m->scratch;
	for (size_t i = 0; i < a->len; i++) {
		const tj_value *v = &a->items[i];
		double value;
		if (v->type == TJ_STRING) {
			if (!string_to_double(v->s, v->len, &value)) {
				m_stat(m, "json_parser_failure", 1);
				continue;
			}
		} else if (v->type == TJ_DOUBLE) {
			value = v->d;
		} else if (v->type == TJ_INT) {
			value = (double)v->i;
		} else {
			m_stat(m, "json_parser_failure", 1);
			continue;
		}
		name->len = 0;
		const char *nm = m_str(&m->str, e->name);
		if (nm)
			tm_buf_puts(name, nm);
		if (e->id.type == ID_STR && e->id.n) {
			tm_buf_puts(name, " id: ");
			tm_buf_put(name, e->id.s, e->id.n);
		}
		tm_buf_put(name, " ", 1);
		tm_buf_put(name, a->keys[i], a->key_lens[i]);
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
	tm_mjson j = {e->phase, e->dur, m_str(&m->str, e->name), m_str(&m->str, e->cat), e->args, 0, 0,
		      e->bind_enclosing, 0, 0, e->flow_in, e->flow_out};
	j.has_flow_id = flow_id(&e->id, &j.flow_id);
	j.has_bind_id = flow_id(&e->bind_id, &j.bind_id);
	tm_mobserved ob = {m, h, ts, &j, NULL, track, spilled, dropped, NULL};
	m->sink.observed(m->sink.ctx, &ob);
}

void m_json_apply(tm_model *m, const tm_mrec_head *h, int64_t ts, const char *raw, size_t len)
{
	tj_value *o = NULL;
	tm_error err;
	if (tj_parse(raw, len, &o, &err) != 0 || o->type != TJ_OBJECT) {
		tj_free(o);
		return;
	}
	jev e;
	read_event(m, o, &e);
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
		m_slice_begin(m, c, track, ts, e.cat, no_name(m, e.name), e.args, file);
		maybe_add_flow(m, c, track, &e);
		break;
	case 'E':
		track = m_thread_track(m, c, utid);
		m_slice_end(m, c, track, ts, e.cat, e.name, e.args);
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
			m_slice_begin(m, c, track, ts, e.cat, no_name(m, e.name), e.args, file);
			maybe_add_flow(m, c, track, &e);
		} else if (e.phase == 'e') {
			track = m_compress_end(m, c, set, cookie, kind, scope, tupid, e.name);
			m_slice_end(m, c, track, ts, e.cat, e.name, e.args);
		} else {
			track = m_compress_begin(m, c, set, cookie, 1, kind, scope, tupid, e.name);
			m_compress_end(m, c, set, cookie, kind, scope, tupid, e.name);
			m_slice_scoped(m, c, track, ts, e.cat, e.name, 0, e.args, NULL, file);
			maybe_add_flow(m, c, track, &e);
		}
		break;
	}
	case 'X': {
		if (e.dur < 0) {
			m_stat(m, "json_parser_failure", 1);
			dropped = 1;
			break;
		}
		track = m_thread_track(m, c, utid);
		m_overlap ov = {0};
		size_t ix = m_slice_scoped(m, c, track, ts, e.cat, no_name(m, e.name), e.dur, e.args, &ov, file);
		if (!ix && ov.hit) {
			m_stat(m, "slice_spill_overlapping_complete_event", 1);
			uint32_t set = 0x6f766c70;
			track = m_compress_overlapping(m, c, m_hash2(set, (uint64_t)utid), ts, e.dur,
						       TM_MT_THREAD_OVERLAP, TM_SCOPE_THREAD, utid, 0);
			m_slice_scoped(m, c, track, ts, e.cat, no_name(m, e.name), e.dur, e.args, NULL, file);
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
		if (e.scope == SCOPE_GLOBAL) {
			track = m_named_track(m, c, TM_MT_GLOBAL_INSTANT, TM_SCOPE_GLOBAL, -1, -1, -1, 0);
			m_slice_scoped(m, c, track, ts, e.cat, e.name, 0, e.args, NULL, file);
		} else if (e.scope == SCOPE_PROCESS) {
			if (!e.pid_exists) {
				m_stat(m, "json_parser_failure", 1);
				dropped = 1;
				break;
			}
			int64_t upid = m_get_or_create_process(m, mc, e.pid);
			track = m_named_track(m, c, TM_MT_PROCESS_INSTANT, TM_SCOPE_PROCESS, -1, upid, -1, 0);
			m_slice_scoped(m, c, track, ts, e.cat, e.name, 0, e.args, NULL, file);
		} else {
			if (!e.tid_exists) {
				m_stat(m, "json_parser_failure", 1);
				dropped = 1;
				break;
			}
			track = m_thread_track(m, c, utid);
			m_slice_scoped(m, c, track, ts, e.cat, no_name(m, e.name), 0, e.args, NULL, file);
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
		for (size_t i = 0; i < e.args->len; i++) {
			if (e.args->key_lens[i] != 4 || memcmp(e.args->keys[i], "name", 4) != 0)
				continue;
			const tj_value *v = &e.args->items[i];
			if (v->type != TJ_STRING || !v->len) {
				m_stat(m, "json_parser_failure", 1);
				continue;
			}
			uint32_t id = m_intern(&m->str, v->s, v->len);
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
	tj_free(o);
}
