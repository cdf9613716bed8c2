/* core/formats/json/json_rec.c - the model's record of a Chrome JSON event: the
 * reference's field rules (ParseTraceEventContents, v58.2), the record's
 * bytes, and reading them back. */
#include "formats/json/json_rec.h"

#include <stdlib.h>
#include <string.h>

#include "formats/json/json_format.h"
#include "formats/json/json_trace.h"
#include "model/model.h"

/* ---- the fields ---------------------------------------------------------- */

void json_rec_fields_init(json_rec_fields *f)
{
	memset(f, 0, offsetof(json_rec_fields, some)); /* `some` needs no clearing */
	f->id2 = NULL;
	f->dur = -1;
	f->pid_str = f->tid_str = f->cat = f->name = JSON_REC_NONE;
	f->strs = f->some;
	f->cap_strs = sizeof f->some / sizeof f->some[0];
}

void json_rec_fields_done(json_rec_fields *f)
{
	if (f->strs != f->some)
		free(f->strs);
	f->strs = f->some;
	tj_free(f->id2);
	f->id2 = NULL;
}

static uint32_t add_str(json_rec_fields *f, uint8_t kind, const char *s, size_t n)
{
	if (f->n_strs == f->cap_strs) {
		size_t cap = f->cap_strs * 2;
		json_rec_str *a = tm_xmalloc(cap * sizeof *a);
		memcpy(a, f->strs, f->n_strs * sizeof *a);
		if (f->strs != f->some)
			free(f->strs);
		f->strs = a;
		f->cap_strs = cap;
	}
	f->strs[f->n_strs] = (json_rec_str){kind, s, n};
	return (uint32_t)f->n_strs++;
}

static json_rec_id extract_id(const tj_value *v)
{
	json_rec_id id = {JR_ID_NONE, NULL, 0, 0};
	if (v && v->type == TJ_STRING) {
		id.type = JR_ID_STR;
		id.s = v->s;
		id.n = v->len;
	} else if (v && v->type == TJ_INT) {
		id.type = JR_ID_UINT;
		id.u = (uint64_t)v->i;
	}
	return id;
}

static int64_t coerce_u32(int64_t n)
{
	return n < 0 || n > UINT32_MAX ? 0 : n;
}

/* A pid or tid member: a number coerced, a string kept for the model's
 * string ids; other types leave the field as it was. */
static void pid_member(json_rec_fields *f, uint8_t str_kind, const tj_value *v, uint8_t *kind, int64_t *num,
		       uint32_t *str)
{
	switch (v->type) {
	case TJ_STRING:
		*kind = JR_PID_STRING;
		*str = add_str(f, str_kind, v->s, v->len);
		break;
	case TJ_INT:
		*kind = JR_PID_NUMBER;
		*num = coerce_u32(v->i);
		break;
	case TJ_DOUBLE:
		*kind = JR_PID_NUMBER;
		*num = v->d >= -9.2e18 && v->d <= 9.2e18 ? coerce_u32((int64_t)v->d) : 0;
		break;
	default:
		break;
	}
}

/* cat and name: the last occurrence wins, a non-string or an empty one
 * making it null; every non-empty one is interned. */
static uint32_t str_member(json_rec_fields *f, uint8_t kind, const tj_value *v)
{
	if (v->type != TJ_STRING || !v->len)
		return JSON_REC_NONE;
	return add_str(f, kind, v->s, v->len);
}

/* A time member's value; strings are handed to json_trace_time_ns
 * NUL-terminated (those of tj_read_shallow are not). */
static int time_ns(const tj_value *v, int64_t *ns)
{
	if (v->type != TJ_STRING)
		return json_trace_time_ns(v, ns);
	char t[72];
	if (v->len >= sizeof t || memchr(v->s, 0, v->len))
		return 0; /* json_trace_time_ns takes none of these */
	memcpy(t, v->s, v->len);
	t[v->len] = '\0';
	tj_value c = *v;
	c.s = t;
	return json_trace_time_ns(&c, ns);
}

static void id2_members(json_rec_fields *f, const tj_value *o)
{
	const tj_key *keys = tj_keys(o);
	for (size_t j = 0; j < o->len; j++) {
		if (keys[j].len == 5 && memcmp(keys[j].s, "local", 5) == 0)
			f->id2_local = extract_id(&o->items[j]);
		else if (keys[j].len == 6 && memcmp(keys[j].s, "global", 6) == 0)
			f->id2_global = extract_id(&o->items[j]);
	}
}

json_rec_key json_rec_key_of(const char *k, size_t n)
{
#define IS(s) (memcmp(k, s, n) == 0)
	switch (n) {
	case 1:
		return k[0] == 's' ? JK_S : JK_OTHER;
	case 2:
		return IS("ph") ? JK_PH : IS("ts") ? JK_TS : IS("id") ? JK_ID : IS("bp") ? JK_BP : JK_OTHER;
	case 3:
		switch (k[0]) {
		case 'd': return IS("dur") ? JK_DUR : JK_OTHER;
		case 't': return IS("tts") ? JK_TTS : IS("tid") ? JK_TID : JK_OTHER;
		case 'p': return IS("pid") ? JK_PID : JK_OTHER;
		case 'c': return IS("cat") ? JK_CAT : JK_OTHER;
		case 'i': return IS("id2") ? JK_ID2 : JK_OTHER;
		default: return JK_OTHER;
		}
	case 4:
		return IS("tdur") ? JK_TDUR : IS("name") ? JK_NAME : IS("args") ? JK_ARGS : JK_OTHER;
	case 7:
		return IS("bind_id") ? JK_BIND_ID : IS("flow_in") ? JK_FLOW_IN : JK_OTHER;
	case 8:
		return IS("flow_out") ? JK_FLOW_OUT : JK_OTHER;
	default:
		return JK_OTHER;
	}
#undef IS
}

int json_rec_member(json_rec_fields *f, const char *k, size_t kn, const tj_value *v, int escaped, const char *raw,
		    size_t raw_n)
{
	return json_rec_member_of(f, json_rec_key_of(k, kn), v, escaped, raw, raw_n);
}

int json_rec_member_of(json_rec_fields *f, json_rec_key key, const tj_value *v, int escaped, const char *raw,
		       size_t raw_n)
{
	int str = v->type == TJ_STRING;
	/* the rules that read a string need it decoded */
	switch (key) {
	case JK_PH:
	case JK_DUR:
	case JK_PID:
	case JK_TID:
	case JK_ID:
	case JK_BIND_ID:
	case JK_CAT:
	case JK_NAME:
	case JK_S:
	case JK_BP:
		if (str && escaped)
			return -1;
		break;
	default:
		break;
	}
	switch (key) {
	case JK_PH:
		f->phase = str && v->len ? v->s[0] : 0;
		break;
	case JK_DUR: {
		int64_t ns;
		if (time_ns(v, &ns))
			f->dur = ns;
		break;
	}
	case JK_PID:
		pid_member(f, JR_STR_PID, v, &f->pid_kind, &f->pid, &f->pid_str);
		break;
	case JK_TID:
		pid_member(f, JR_STR_TID, v, &f->tid_kind, &f->tid, &f->tid_str);
		break;
	case JK_ID:
	case JK_BIND_ID: {
		json_rec_id id = extract_id(v);
		if (id.type != JR_ID_NONE)
			*(key == JK_ID ? &f->id : &f->bind_id) = id;
		break;
	}
	case JK_CAT:
		f->cat = str_member(f, JR_STR_CAT, v);
		break;
	case JK_NAME:
		f->name = str_member(f, JR_STR_NAME, v);
		break;
	case JK_FLOW_IN:
		if (v->type == TJ_BOOL)
			f->flow_in = v->b;
		break;
	case JK_FLOW_OUT:
		if (v->type == TJ_BOOL)
			f->flow_out = v->b;
		break;
	case JK_S:
		if (str && v->len == 1 && v->s[0] == 'p')
			f->scope = JR_SCOPE_PROCESS;
		else if (str && v->len == 1 && v->s[0] == 't')
			f->scope = JR_SCOPE_THREAD;
		else if (str && v->len == 1 && v->s[0] == 'g')
			f->scope = JR_SCOPE_GLOBAL;
		else if (!str)
			f->scope = JR_SCOPE_NONE;
		break;
	case JK_BP:
		f->bind_enclosing = str && v->len == 1 && v->s[0] == 'e';
		break;
	case JK_ARGS:
		if (v->type == TJ_OBJECT) {
			f->has_args = 1;
			f->args = v->items || !raw ? v : NULL;
			f->args_text = f->args ? NULL : raw;
			f->args_text_n = f->args ? 0 : raw_n;
		}
		break;
	case JK_ID2: {
		if (v->type != TJ_OBJECT)
			break;
		if (v->items || !raw) {
			id2_members(f, v);
			break;
		}
		/* given as text: its ids point into the tree, kept until
		 * json_rec_fields_done (a second id2 text: the general path) */
		tm_error err;
		tj_value *t = NULL;
		if (f->id2 || tj_parse(raw, raw_n, &t, &err) != 0)
			return -1;
		f->id2 = t;
		id2_members(f, t);
		break;
	}
	default:
		break;
	}
	return 0;
}

/* ---- the record's bytes ---------------------------------------------------------- */

enum {
	B_FLOW_IN = 1,
	B_FLOW_OUT = 2,
	B_BIND_ENCLOSING = 4,
	B_HAS_ARGS = 8,
	B_ANNOT = 16,
	B_TEXT = 32,
	B_MEMBERS = 64,
};

/* The fixed part, copied as is (the record never leaves the process),
 * with no padding: every byte of a record is written, so records of the
 * same event are the same bytes. */
typedef struct rec_fixed {
	int64_t dur, pid, tid;
	uint32_t n_strs, pid_str, tid_str, cat, name;
	char phase;
	uint8_t bits, scope, pid_kind, tid_kind;
	uint8_t id_types; /* id, bind_id, id2 local, id2 global: 2 bits each */
	uint16_t pad;
	uint32_t pad2;
} rec_fixed;

_Static_assert(sizeof(rec_fixed) == 3 * 8 + 5 * 4 + 8 + 4, "rec_fixed has no hidden padding");

static void put_u32(tm_buf *b, uint32_t v)
{
	tm_buf_put(b, &v, sizeof v);
}

/* n bytes, their length before them and a NUL after. */
static void put_str(tm_buf *b, const char *s, size_t n)
{
	put_u32(b, (uint32_t)n);
	TM_GROW(b->data, b->cap, b->len + n + 2);
	if (n)
		memcpy(b->data + b->len, s, n);
	b->data[b->len + n] = '\0';
	b->len += n + 1;
	b->data[b->len] = '\0';
}

static void put_id(tm_buf *b, const json_rec_id *id)
{
	if (id->type == JR_ID_STR)
		put_str(b, id->s, id->n);
	else if (id->type == JR_ID_UINT)
		tm_buf_put(b, &id->u, sizeof id->u);
}

/* A section: its length, then what fn appends (the length filled in). */
static size_t section_begin(tm_buf *b)
{
	put_u32(b, 0);
	return b->len;
}

static void section_end(tm_buf *b, size_t at)
{
	uint32_t n = (uint32_t)(b->len - at);
	memcpy(b->data + at - sizeof n, &n, sizeof n);
}

/* The args' top-level members, for C (counters) and M (names). */
static void put_members(tm_buf *b, const tj_value *args)
{
	put_u32(b, (uint32_t)args->len);
	const tj_key *keys = tj_keys(args);
	for (size_t i = 0; i < args->len; i++) {
		const tj_value *v = &args->items[i];
		put_str(b, keys[i].s, keys[i].len);
		uint8_t type = (uint8_t)v->type;
		tm_buf_put(b, &type, 1);
		if (v->type == TJ_INT)
			tm_buf_put(b, &v->i, sizeof v->i);
		else if (v->type == TJ_DOUBLE)
			tm_buf_put(b, &v->d, sizeof v->d);
		else if (v->type == TJ_STRING)
			put_str(b, v->s, v->len);
	}
}

/* Is this object text `{}` (blanks allowed)? Then it has no members. */
static int empty_object(const char *s, size_t n)
{
	size_t i = 1;
	while (i < n && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r'))
		i++;
	return i < n && s[i] == '}';
}

int json_rec_encode(tm_buf *out, json_rec_fields *f, unsigned forms)
{
	char ph = f->phase;
	/* the phases whose args the exporter writes and slices keep
	 * (core/formats/json/encode.c, core/formats/json/model_json.c) */
	int slice_args = ph && strchr("BEXbenRIi", ph) != NULL;
	int annot = (forms & JSON_REC_ANNOT) && slice_args;
	int text = (forms & JSON_REC_TEXT) && slice_args;
	int members = ph == 'C' || ph == 'M';
	const tj_value *args = f->has_args ? f->args : NULL;
	tj_value *parsed = NULL;
	if (f->has_args && !args && (annot || text || members) && !empty_object(f->args_text, f->args_text_n)) {
		tm_error err;
		if (tj_parse(f->args_text, f->args_text_n, &parsed, &err) != 0)
			return -1;
		args = parsed;
	}
	if (args && !args->len)
		args = NULL;
	rec_fixed x;
	memset(&x, 0, sizeof x);
	x.dur = f->dur;
	x.pid = f->pid;
	x.tid = f->tid;
	x.n_strs = (uint32_t)f->n_strs;
	x.pid_str = f->pid_str;
	x.tid_str = f->tid_str;
	x.cat = f->cat;
	x.name = f->name;
	x.phase = ph;
	x.bits = (uint8_t)((f->flow_in ? B_FLOW_IN : 0) | (f->flow_out ? B_FLOW_OUT : 0) |
			   (f->bind_enclosing ? B_BIND_ENCLOSING : 0) | (f->has_args ? B_HAS_ARGS : 0) |
			   (annot && args ? B_ANNOT : 0) | (text && args ? B_TEXT : 0) | (members && args ? B_MEMBERS : 0));
	x.scope = f->scope;
	x.pid_kind = f->pid_kind;
	x.tid_kind = f->tid_kind;
	x.id_types = (uint8_t)(f->id.type | f->bind_id.type << 2 | f->id2_local.type << 4 | f->id2_global.type << 6);
	tm_buf_put(out, &x, sizeof x);
	put_id(out, &f->id);
	put_id(out, &f->bind_id);
	put_id(out, &f->id2_local);
	put_id(out, &f->id2_global);
	for (size_t i = 0; i < f->n_strs; i++) {
		tm_buf_put(out, &f->strs[i].kind, 1);
		put_str(out, f->strs[i].s, f->strs[i].n);
	}
	if (x.bits & B_ANNOT) {
		size_t at = section_begin(out);
		tm_export_json_args(out, args);
		section_end(out, at);
	}
	if (x.bits & B_TEXT) {
		size_t at = section_begin(out);
		tm_model_json_args_text(out, args);
		section_end(out, at);
	}
	if (x.bits & B_MEMBERS)
		put_members(out, args);
	tj_free(parsed);
	return 0;
}

int json_rec_from_object(tm_buf *out, const tj_value *obj, unsigned forms)
{
	json_rec_fields f;
	json_rec_fields_init(&f);
	const tj_key *keys = tj_keys(obj);
	for (size_t i = 0; i < obj->len; i++)
		json_rec_member(&f, keys[i].s, keys[i].len, &obj->items[i], 0, NULL, 0);
	int rc = json_rec_encode(out, &f, forms);
	json_rec_fields_done(&f);
	return rc;
}

/* ---- reading it back ------------------------------------------------------------------ */

typedef struct reader {
	const char *p, *end;
	int bad;
} reader;

static inline void get(reader *r, void *out, size_t n)
{
	if ((size_t)(r->end - r->p) < n) {
		r->bad = 1;
		memset(out, 0, n);
		return;
	}
	memcpy(out, r->p, n);
	r->p += n;
}

static const char *get_str(reader *r, size_t *n)
{
	uint32_t len;
	get(r, &len, sizeof len);
	/* its NUL is there too: strtod and strtoull read the string up to it
	 * (a record damaged in its temporary file may have lost it) */
	if (r->bad || (size_t)(r->end - r->p) < (size_t)len + 1 || r->p[len] != '\0') {
		r->bad = 1;
		*n = 0;
		return "";
	}
	const char *s = r->p;
	r->p += (size_t)len + 1;
	*n = len;
	return s;
}

static json_rec_id get_id(reader *r, unsigned type)
{
	json_rec_id id = {(uint8_t)type, NULL, 0, 0};
	if (type == JR_ID_STR)
		id.s = get_str(r, &id.n);
	else if (type == JR_ID_UINT)
		get(r, &id.u, sizeof id.u);
	else
		id.type = JR_ID_NONE;
	return id;
}

/* A section's bytes, or NULL when its bit is not set. */
static const char *get_section(reader *r, int present, size_t *n)
{
	*n = 0;
	if (!present)
		return NULL;
	uint32_t len;
	get(r, &len, sizeof len);
	if (r->bad || (size_t)(r->end - r->p) < len) {
		r->bad = 1;
		return NULL;
	}
	const char *s = r->p;
	r->p += len;
	*n = len;
	return s;
}

void json_rec_next_str(const char **at, json_rec_str *s)
{
	/* decode checked the bytes: no bound is needed here */
	reader r = {*at, *at + 5, 0};
	get(&r, &s->kind, 1);
	uint32_t len;
	get(&r, &len, sizeof len);
	s->s = r.p;
	s->n = len;
	*at = r.p + len + 1;
}

int json_rec_decode(const void *p, size_t n, json_rec_view *v)
{
	reader r = {p, (const char *)p + n, 0};
	rec_fixed x;
	get(&r, &x, sizeof x);
	if (r.bad)
		return -1;
	/* every field is set below: a view is made per event */
	v->phase = x.phase;
	v->dur = x.dur;
	v->pid_kind = x.pid_kind;
	v->tid_kind = x.tid_kind;
	v->scope = x.scope;
	v->pid_str = x.pid_str;
	v->tid_str = x.tid_str;
	v->cat = x.cat;
	v->name = x.name;
	v->pid = x.pid;
	v->tid = x.tid;
	v->flow_in = (x.bits & B_FLOW_IN) != 0;
	v->flow_out = (x.bits & B_FLOW_OUT) != 0;
	v->bind_enclosing = (x.bits & B_BIND_ENCLOSING) != 0;
	v->has_args = (x.bits & B_HAS_ARGS) != 0;
	v->id = get_id(&r, x.id_types & 3);
	v->bind_id = get_id(&r, x.id_types >> 2 & 3);
	v->id2_local = get_id(&r, x.id_types >> 4 & 3);
	v->id2_global = get_id(&r, x.id_types >> 6 & 3);
	v->strs = r.p;
	v->n_strs = x.n_strs;
	for (uint32_t i = 0; i < x.n_strs && !r.bad; i++) {
		/* a kind byte, then a string */
		r.p += r.p < r.end;
		size_t len;
		get_str(&r, &len);
	}
	v->annot = get_section(&r, x.bits & B_ANNOT, &v->annot_n);
	v->text = get_section(&r, x.bits & B_TEXT, &v->text_n);
	v->members = NULL;
	v->n_members = 0;
	v->members_end = NULL;
	if (x.bits & B_MEMBERS) {
		uint32_t count;
		get(&r, &count, sizeof count);
		v->members = r.p;
		v->n_members = count;
		v->members_end = r.end;
	}
	/* an index past the strings is no record of ours */
	uint32_t idx[] = {x.pid_str, x.tid_str, x.cat, x.name};
	for (size_t i = 0; i < sizeof idx / sizeof idx[0]; i++)
		if (idx[i] != JSON_REC_NONE && idx[i] >= x.n_strs)
			r.bad = 1;
	return r.bad ? -1 : 0;
}

int json_rec_next_member(const json_rec_view *v, const char **at, json_rec_member_view *m)
{
	if (!v->members || *at < v->members)
		return 0;
	reader r = {*at, v->members_end, 0};
	memset(m, 0, sizeof *m);
	m->key = get_str(&r, &m->key_n);
	uint8_t type;
	get(&r, &type, 1);
	m->type = (tj_type)type;
	if (type == TJ_INT)
		get(&r, &m->i, sizeof m->i);
	else if (type == TJ_DOUBLE)
		get(&r, &m->d, sizeof m->d);
	else if (type == TJ_STRING)
		m->s = get_str(&r, &m->n);
	if (r.bad)
		return 0;
	*at = r.p;
	return 1;
}
