/* core/formats/json/json_trace.c - Chrome JSON trace reader (spec/formats.md §3). */
#include "formats/json/json_trace.h"

#include "util/ahead.h"
#include "util/hash.h"
#include "formats/json/json_rec.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char ERR_INCOMPLETE[] = "JSON trace file is incomplete (ERR:tp-corrupt)";

/* Outcome of a step of the outer tokenizer. */
enum { STEP_OK = 0, STEP_EOF = 1, STEP_ERR = -1 };

/* ---- the byte source -------------------------------------------------- */

typedef struct source {
	tm_cursor *c;
	char *buf;
	size_t chunk, pos, len;
	int eof, failed;
	tm_error *err;
} source;

/* The next byte without consuming it: 0..255, -1 at the end, -2 on a
 * cursor error (err is set). */
static int src_peek(source *s)
{
	if (s->pos < s->len)
		return (unsigned char)s->buf[s->pos];
	if (s->eof)
		return -1;
	if (s->failed)
		return -2;
	ssize_t got = tm_cursor_read(s->c, s->buf, s->chunk, s->err);
	if (got < 0) {
		s->failed = 1;
		return -2;
	}
	if (got == 0) {
		s->eof = 1;
		return -1;
	}
	s->pos = 0;
	s->len = (size_t)got;
	return (unsigned char)s->buf[0];
}

static int src_get(source *s)
{
	int ch = src_peek(s);
	if (ch >= 0)
		s->pos++;
	return ch;
}

/* JSON whitespace (RFC 8259). */
static int is_ws(int ch) { return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r'; }

static int src_skip_ws(source *s)
{
	int ch;
	while ((ch = src_peek(s)) >= 0 && is_ws(ch))
		s->pos++;
	return ch;
}

/* ---- the reader -------------------------------------------------------- */

typedef struct str_id {
	char *s;
	int64_t id;
} str_id;

typedef struct reader {
	source src;
	json_event_fn fn;
	void *ctx;
	json_trace_stats *st;
	tm_error *err;
	int object_form;
	int summaries;  /* fill args_summary (JSON_TRACE_SUMMARIES) */
	int metadata;   /* deliver JSON_EV_METADATA (JSON_TRACE_METADATA) */
	int rec;        /* make json_event.rec (JSON_TRACE_REC) */
	int times;      /* only what JSON_TRACE_TIMES keeps */
	unsigned rec_forms; /* its args forms (JSON_REC_*) */
	tm_buf recbuf;  /* the record being made */
	tm_buf ev;      /* the event object (or metadata value) being buffered */
	tm_buf line;    /* the systemTraceEvents line being unescaped */
	tm_buf strs;    /* the fast path's strings, NUL-terminated */
	str_id *ids;    /* string pid/tid table (open addressing) */
	size_t nids, capids;
} reader;

static int fail_step(reader *r, int ch)
{
	/* A cursor error already filled err. */
	if (ch == -2)
		return STEP_ERR;
	return STEP_EOF;
}

/* Append one byte to a capture buffer, within the memory bound. */
static int capture(reader *r, tm_buf *b, int ch)
{
	if (!b)
		return 0;
	if (b->len >= JSON_TRACE_EVENT_MAX)
		return tm_err(r->err, TM_EINPUT,
			      "Failure parsing JSON: event larger than %u bytes", JSON_TRACE_EVENT_MAX);
	char c = (char)ch;
	tm_buf_put(b, &c, 1);
	return 0;
}

/* Append n bytes to a capture buffer (may be NULL), within the memory
 * bound: the same bound as byte by byte (at most JSON_TRACE_EVENT_MAX). */
static int capture_run(reader *r, tm_buf *b, const char *p, size_t n)
{
	if (!b || !n)
		return 0;
	if (n > JSON_TRACE_EVENT_MAX || b->len > JSON_TRACE_EVENT_MAX - n)
		return tm_err(r->err, TM_EINPUT,
			      "Failure parsing JSON: event larger than %u bytes", JSON_TRACE_EVENT_MAX);
	tm_buf_put(b, p, n);
	return 0;
}

/* The rest of a string whose opening quote was consumed, raw (escapes
 * kept), into b (may be NULL). Copies runs of plain bytes at once. */
static int scan_string_rest(reader *r, tm_buf *b)
{
	source *s = &r->src;
	for (;;) {
		int ch = src_peek(s);
		if (ch < 0)
			return fail_step(r, ch);
		const char *p = s->buf + s->pos, *e = s->buf + s->len, *q = p;
		while (q < e && *q != '"' && *q != '\\')
			q++;
		if (q == e) {
			if (capture_run(r, b, p, (size_t)(e - p)))
				return STEP_ERR;
			s->pos = s->len;
			continue;
		}
		if (capture_run(r, b, p, (size_t)(q - p) + 1))
			return STEP_ERR;
		s->pos += (size_t)(q - p) + 1;
		if (*q == '"')
			return STEP_OK;
		ch = src_get(s); /* the escaped byte, whatever it is */
		if (ch < 0)
			return fail_step(r, ch);
		if (capture(r, b, ch))
			return STEP_ERR;
	}
}

/* One JSON value starting at the next non-blank byte, copied raw into b
 * (may be NULL to skip). Brackets are only counted, not matched: the
 * parser of the captured text judges the structure. */
static int scan_value(reader *r, tm_buf *b)
{
	source *s = &r->src;
	int ch = src_skip_ws(s);
	if (ch < 0)
		return fail_step(r, ch);
	if (ch == '"') {
		s->pos++;
		if (capture(r, b, ch))
			return STEP_ERR;
		return scan_string_rest(r, b);
	}
	if (ch == '{' || ch == '[') {
		size_t depth = 0;
		for (;;) {
			ch = src_peek(s);
			if (ch < 0)
				return fail_step(r, ch);
			/* a run of bytes that are no quote or bracket, at once */
			const char *p = s->buf + s->pos, *e = s->buf + s->len, *q = p;
			while (q < e && *q != '"' && *q != '{' && *q != '[' && *q != '}' && *q != ']')
				q++;
			if (q == e) {
				if (capture_run(r, b, p, (size_t)(e - p)))
					return STEP_ERR;
				s->pos = s->len;
				continue;
			}
			if (capture_run(r, b, p, (size_t)(q - p) + 1))
				return STEP_ERR;
			s->pos += (size_t)(q - p) + 1;
			if (*q == '"') {
				int rc = scan_string_rest(r, b);
				if (rc)
					return rc;
			} else if (*q == '{' || *q == '[') {
				depth++;
			} else if (--depth == 0) {
				return STEP_OK;
			}
		}
	}
	/* A scalar: up to the next delimiter. */
	while ((ch = src_peek(s)) >= 0 && !is_ws(ch) && ch != ',' && ch != '}' && ch != ']') {
		s->pos++;
		if (capture(r, b, ch))
			return STEP_ERR;
	}
	if (ch == -2)
		return STEP_ERR;
	return ch == -1 ? STEP_EOF : STEP_OK;
}

/* One event object (the next byte is its '{'), found by counting brackets
 * outside strings as scan_value does. When the whole object lies in the
 * current chunk, *text points into the chunk (valid until the next read
 * from the source) and nothing is copied; otherwise it is captured into
 * r->ev, with the same bound and the same errors as scan_value. */
static int scan_event(reader *r, const char **text, size_t *len)
{
	source *s = &r->src;
	tm_buf *b = &r->ev;
	b->len = 0;
	size_t depth = 0;
	int in_str = 0, esc = 0, copied = 0;
	for (;;) {
		int ch = src_peek(s);
		if (ch < 0)
			return fail_step(r, ch);
		const char *p = s->buf + s->pos, *e = s->buf + s->len, *q = p;
		int done = 0;
		while (q < e) {
			if (in_str) {
				if (esc) {
					esc = 0;
					q++;
					continue;
				}
				while (q < e && *q != '"' && *q != '\\')
					q++;
				if (q == e)
					break;
				if (*q == '\\')
					esc = 1;
				else
					in_str = 0;
				q++;
				continue;
			}
			char c = *q++;
			if (c == '"')
				in_str = 1;
			else if (c == '{' || c == '[')
				depth++;
			else if ((c == '}' || c == ']') && --depth == 0) {
				done = 1;
				break;
			}
		}
		size_t run = (size_t)(q - p);
		s->pos += run;
		if (done && !copied) {
			if (run > JSON_TRACE_EVENT_MAX)
				return tm_err(r->err, TM_EINPUT, "Failure parsing JSON: event larger than %u bytes",
					      JSON_TRACE_EVENT_MAX);
			*text = p;
			*len = run;
			return STEP_OK;
		}
		if (capture_run(r, b, p, run))
			return STEP_ERR;
		copied = 1;
		if (done) {
			*text = b->data;
			*len = b->len;
			return STEP_OK;
		}
	}
}

/* ---- §3.3 time values and §3.4 ids ------------------------------------ */

/* The largest magnitude whose int64 conversion and ×1000 stay defined. */
#define TS_LIMIT 9.2233720368547758e15

static int double_to_ns(double v, int64_t *ns)
{
	if (!(fabs(v) < TS_LIMIT))
		return 0;
	if (v == trunc(v))
		*ns = (int64_t)v * 1000;
	else
		*ns = (int64_t)llround(v * 1000.0);
	return 1;
}

int json_trace_time_ns(const tj_value *v, int64_t *ns)
{
	if (!v)
		return 0;
	switch (v->type) {
	case TJ_INT: {
		long long out;
		if (__builtin_mul_overflow((long long)v->i, 1000LL, &out))
			return 0;
		*ns = out;
		return 1;
	}
	case TJ_DOUBLE:
		return double_to_ns(v->d, ns);
	case TJ_STRING: {
		/* §3.3: a string holding a number is parsed as a JSON number. */
		if (v->len == 0 || v->len > 64 || strspn(v->s, "0123456789+-.eE") != v->len)
			return 0;
		char wrapped[70];
		snprintf(wrapped, sizeof wrapped, "[%s]", v->s);
		tj_value *arr = NULL;
		tm_error e;
		if (tj_parse(wrapped, strlen(wrapped), &arr, &e) < 0)
			return 0;
		int ok = arr->len == 1 && tj_is_number(&arr->items[0]) &&
			 json_trace_time_ns(&arr->items[0], ns);
		tj_free(arr);
		return ok;
	}
	default:
		return 0;
	}
}

/* §3.4: outside [0, 4294967295] a pid or tid is 0. */
static int64_t coerce_u32(int64_t v) { return v < 0 || v > 4294967295LL ? 0 : v; }

/* A stable id per distinct string pid/tid of this file (§3.4). */
static int64_t string_id(reader *r, const char *s)
{
	if (r->nids * 2 >= r->capids) {
		size_t ncap = r->capids ? r->capids * 2 : 64;
		str_id *n = tm_xcalloc(ncap, sizeof *n);
		for (size_t i = 0; i < r->capids; i++) {
			if (!r->ids[i].s)
				continue;
			size_t j = tm_khash_str(r->ids[i].s) & (ncap - 1);
			while (n[j].s)
				j = (j + 1) & (ncap - 1);
			n[j] = r->ids[i];
		}
		free(r->ids);
		r->ids = n;
		r->capids = ncap;
	}
	size_t j = tm_khash_str(s) & (r->capids - 1);
	while (r->ids[j].s) {
		if (strcmp(r->ids[j].s, s) == 0)
			return r->ids[j].id;
		j = (j + 1) & (r->capids - 1);
	}
	r->ids[j].s = tm_xstrdup(s);
	r->ids[j].id = JSON_TRACE_STRING_ID_BASE + (int64_t)r->nids++;
	return r->ids[j].id;
}

/* pid / tid (§3.4). Returns 1 when the field is present in a usable type. */
static int read_id(reader *r, const tj_value *v, int64_t *id, int *is_string, const char **name)
{
	*is_string = 0;
	*name = NULL;
	if (!v)
		return 0;
	switch (v->type) {
	case TJ_INT:
		*id = coerce_u32(v->i);
		return 1;
	case TJ_DOUBLE:
		*id = fabs(v->d) < 9.2e18 ? coerce_u32((int64_t)v->d) : 0;
		return 1;
	case TJ_STRING:
		*id = string_id(r, v->s);
		*is_string = 1;
		*name = v->s;
		return 1;
	default:
		return 0;
	}
}

static const char *nonempty_string(const tj_value *v)
{
	return v && v->type == TJ_STRING && v->len > 0 ? v->s : NULL;
}

/* A compact rendering of an args value for the summary. */
static void summarise_value(tm_buf *b, const tj_value *v)
{
	switch (v->type) {
	case TJ_NULL:
		tm_buf_puts(b, "null");
		break;
	case TJ_BOOL:
		tm_buf_puts(b, v->b ? "true" : "false");
		break;
	case TJ_INT:
		tm_buf_printf(b, "%lld", (long long)v->i);
		break;
	case TJ_DOUBLE:
		tm_buf_printf(b, "%.17g", v->d);
		break;
	case TJ_STRING:
		tm_buf_puts(b, v->s);
		break;
	case TJ_ARRAY:
		tm_buf_puts(b, "[...]");
		break;
	case TJ_OBJECT:
		tm_buf_puts(b, "{...}");
		break;
	}
}

static void summarise_args(const tj_value *args, char *out, size_t n)
{
	tm_buf b = {0};
	const tj_key *keys = args && args->type == TJ_OBJECT ? tj_keys(args) : NULL;
	for (size_t i = 0; keys && i < args->len; i++) {
		if (b.len > n)
			break;
		tm_buf_printf(&b, "%s%s=", i ? " " : "", keys[i].s);
		summarise_value(&b, &args->items[i]);
	}
	snprintf(out, n, "%s", b.data ? b.data : "");
	tm_buf_free(&b);
}

/* ---- events ------------------------------------------------------------ */

/* json.c: tj_parse, also giving the bytes the root value took. */
int tj_parse_prefix(const char *buf, size_t len, tj_value **out, size_t *used, tm_error *err);

/* The members of an event object that the record is made of (the last
 * one of each key: a key given twice is its last value, as tj_get finds
 * it). */
enum {
	K_PH = JK_PH,
	K_TS = JK_TS,
	K_DUR = JK_DUR,
	K_TTS = JK_TTS,
	K_TDUR = JK_TDUR,
	K_PID = JK_PID,
	K_TID = JK_TID,
	K_NAME = JK_NAME,
	K_CAT = JK_CAT,
	K_ARGS = JK_ARGS,
	K_ID = JK_ID,
	K_COUNT = JK_BIND_ID /* the keys past these are the record's only */
};

static int member_key(const char *k, size_t n)
{
	json_rec_key key = json_rec_key_of(k, n);
	return (int)key < K_COUNT ? (int)key : -1;
}

_Static_assert(offsetof(json_event, counter_value) > offsetof(json_event, args_summary),
	       "the fields after the summary start at counter_value");

/* Deliver one event object from its members (`obj` is the whole tree, or
 * NULL when the fast path read it without one); raw/raw_len are its bytes
 * in the file; rec/rec_len its record (JSON_TRACE_REC), or NULL. */
static int deliver_members(reader *r, const tj_value *const *f, const tj_value *obj, const char *raw,
			   size_t raw_len, const char *rec, size_t rec_len)
{
	json_event ev;
	/* cleared but for the summary's bytes: one event object at a time */
	memset(&ev, 0, offsetof(json_event, args_summary));
	ev.args_summary[0] = '\0';
	memset(&ev.counter_value, 0, sizeof ev - offsetof(json_event, counter_value));
	ev.kind = JSON_EV_TRACE;
	ev.object = obj;
	ev.raw = raw;
	ev.raw_len = raw_len;
	ev.rec = rec;
	ev.rec_len = rec_len;
	ev.dur = ev.tts = ev.tdur = -1;
	ev.pid = ev.tid = -1;
	const tj_value *ph = f[K_PH], *args = f[K_ARGS];
	if (ph && ph->type == TJ_STRING && ph->len > 0)
		ev.phase = ph->s[0];
	/* §3.3: a bad dur/tts/tdur drops the event. */
	const tj_value *durations[] = {f[K_DUR], f[K_TTS], f[K_TDUR]};
	int64_t *slots[] = {&ev.dur, &ev.tts, &ev.tdur};
	for (size_t i = 0; i < 3; i++) {
		const tj_value *v = durations[i];
		if (v && !json_trace_time_ns(v, slots[i])) {
			r->st->json_tokenizer_failure++;
			return STEP_OK;
		}
	}
	if (!ev.phase) {
		r->st->json_tokenizer_failure++;
		return STEP_OK;
	}
	ev.has_ts = json_trace_time_ns(f[K_TS], &ev.ts);
	if (!ev.has_ts) {
		/* §3.2: ts is required except for M (then 0). */
		if (ev.phase != 'M') {
			r->st->json_tokenizer_failure++;
			return STEP_OK;
		}
		ev.ts = 0;
	}
	/* An X without dur is counted here and still delivered: the reference
	 * sorts it and makes its thread before it rejects it. */
	if (ev.phase == 'X' && ev.dur < 0 && !f[K_DUR])
		r->st->json_parser_failure++;
	if (r->times) {
		/* JSON_TRACE_TIMES: of the rest, only a C event's args */
		if (ev.phase == 'C' && args && args->type == TJ_OBJECT)
			ev.args = args;
		return r->fn(r->ctx, &ev, r->err) ? STEP_ERR : STEP_OK;
	}
	ev.has_pid = read_id(r, f[K_PID], &ev.pid, &ev.pid_is_string, &ev.pid_name);
	ev.has_tid = read_id(r, f[K_TID], &ev.tid, &ev.tid_is_string, &ev.tid_name);
	/* §3.4: tid absent or 0 (and not a string) while pid != 0 -> pid. */
	int64_t pid_val = ev.has_pid ? ev.pid : 0;
	int64_t tid_val = ev.has_tid ? ev.tid : 0;
	if (tid_val == 0 && pid_val != 0 && !ev.tid_is_string) {
		ev.tid = ev.pid;
		ev.has_tid = 1;
	}
	ev.name = nonempty_string(f[K_NAME]);
	ev.category = nonempty_string(f[K_CAT]);
	ev.id = f[K_ID];
	if (args && args->type == TJ_OBJECT) {
		ev.args = args;
		if (r->summaries)
			summarise_args(args, ev.args_summary, sizeof ev.args_summary);
		for (size_t i = 0; i < args->len; i++) {
			if (tj_is_number(&args->items[i])) {
				const tj_value *a = &args->items[i];
				ev.counter_value = a->type == TJ_INT ? (double)a->i : a->d;
				break;
			}
		}
	}
	return r->fn(r->ctx, &ev, r->err) ? STEP_ERR : STEP_OK;
}

/* Deliver one parsed event object (freed here). */
static int deliver_parsed(reader *r, tj_value *obj, const char *raw, size_t raw_len)
{
	int rc = STEP_OK;
	/* §3.1: `{}` is skipped silently. */
	if (obj->type == TJ_OBJECT && obj->len > 0) {
		const tj_value *f[K_COUNT] = {0};
		const tj_key *keys = tj_keys(obj);
		for (size_t i = 0; i < obj->len; i++) {
			int k = member_key(keys[i].s, keys[i].len);
			if (k >= 0)
				f[k] = &obj->items[i];
		}
		/* V8 samples (P) are not recorded */
		const tj_value *ph = f[K_PH];
		int want = r->rec && !(ph && ph->type == TJ_STRING && ph->len && ph->s[0] == 'P');
		r->recbuf.len = 0;
		if (want && json_rec_from_object(&r->recbuf, obj, r->rec_forms) != 0)
			want = 0; /* cannot be: the args parsed with the event */
		rc = deliver_members(r, f, obj, raw, raw_len, want ? r->recbuf.data : NULL, r->recbuf.len);
	}
	tj_free(obj);
	return rc;
}

/* The fast path's members: scalars as tj_read_shallow gives them. */
typedef struct shallow_ev {
	tj_value v[K_COUNT];
	int set[K_COUNT];
	size_t n;                /* members, all keys */
	json_rec_fields *jf;     /* the record's fields (JSON_TRACE_REC), or NULL */
	json_rec_key key;        /* times_key's class of the member it kept */
	int keyed;               /* times_key counts and classes the members */
} shallow_ev;

/* JSON_TRACE_TIMES without records: of an event's members only the
 * phase, the times (tts and tdur too: a bad one drops the event) and the
 * args (a C event's) are read; the rest are passed by, their numbers not
 * made (pid and tid: a third of the numbers of a DevTools trace). */
static int times_key(void *ctx, const char *k, size_t n)
{
	shallow_ev *se = ctx;
	se->n++;
	/* the six keys by hand: json_rec_key_of, which knows every key the
	 * records read, was a fifteenth of this scan */
	json_rec_key key = JK_OTHER;
	if (n == 2)
		key = k[0] == 'p' && k[1] == 'h' ? JK_PH : k[0] == 't' && k[1] == 's' ? JK_TS : JK_OTHER;
	else if (n == 3)
		key = !memcmp(k, "dur", 3) ? JK_DUR : !memcmp(k, "tts", 3) ? JK_TTS : JK_OTHER;
	else if (n == 4)
		key = !memcmp(k, "tdur", 4) ? JK_TDUR : !memcmp(k, "args", 4) ? JK_ARGS : JK_OTHER;
	se->key = key;
	return key != JK_OTHER;
}

static int on_member(void *ctx, const tj_member *m)
{
	shallow_ev *se = ctx;
	json_rec_key key;
	if (se->keyed) {
		key = se->key;
	} else {
		se->n++;
		key = json_rec_key_of(m->key, m->key_len);
	}
	if (se->jf && key != JK_OTHER && json_rec_member_of(se->jf, key, &m->v, m->escaped, m->raw, m->raw_len) != 0)
		return 1; /* the general path reads it */
	if ((int)key >= K_COUNT)
		return 0;
	int k = (int)key;
	/* a string this record reads must be decoded: tj_parse does that */
	if (m->v.type == TJ_STRING && m->escaped && k != K_ARGS)
		return 1;
	se->v[k] = m->v;
	/* its bytes, parsed when wanted; s is where a container's items
	 * are, but args are read as a container only once parsed */
	if (k == K_ARGS) {
		se->v[k].s = (char *)m->raw;
		se->v[k].len = m->raw_len;
	}
	se->set[k] = 1;
	return 0;
}

/* The event at buf (its '{') read without a tree of the whole object:
 * decoding every member of every event was most of the scan's time, and
 * the record needs ten of them and, for a few phases, the args. 1 when
 * delivered (*used set; with err set when the callback stopped), 0 when
 * the general path must read it. se->jf (may be NULL) gathers the model's
 * record's fields on the way. */
static int deliver_shallow(reader *r, shallow_ev *se, const char *buf, size_t len, size_t *used, int *rc)
{
	se->keyed = r->times && !se->jf && !r->summaries;
	if (!tj_read_shallow_keys(buf, len, se->keyed ? times_key : NULL, on_member, se, used) ||
	    *used > JSON_TRACE_EVENT_MAX)
		return 0; /* the general path reads it, or reports it */
	*rc = STEP_OK;
	if (se->n == 0) /* §3.1: `{}` is skipped silently */
		return 1;
	/* the strings NUL-terminated, in one buffer made at once */
	size_t room = 0;
	if (r->times) /* JSON_TRACE_TIMES reads none of these */
		se->set[K_PID] = se->set[K_TID] = se->set[K_NAME] = se->set[K_CAT] = se->set[K_ID] = 0;
	for (int k = 0; k < K_COUNT; k++)
		if (se->set[k] && se->v[k].type == TJ_STRING && k != K_ARGS)
			room += se->v[k].len + 1;
	tm_buf *b = &r->strs;
	b->len = 0;
	if (room + 1 > b->cap)
		tm_grow((void **)&b->data, &b->cap, room + 1, 1);
	const tj_value *f[K_COUNT] = {0};
	for (int k = 0; k < K_COUNT; k++) {
		if (!se->set[k])
			continue;
		tj_value *v = &se->v[k];
		if (v->type == TJ_STRING && k != K_ARGS) {
			char *d = b->data + b->len;
			memcpy(d, v->s, v->len);
			d[v->len] = '\0';
			b->len += v->len + 1;
			v->s = d;
		}
		f[k] = v;
	}
	/* args as a tree only where the record reads it: summaries, counters
	 * (C) and names (M) */
	tj_value *args = NULL;
	const tj_value *ph = f[K_PH];
	char phase = ph && ph->type == TJ_STRING && ph->len ? ph->s[0] : 0;
	if (f[K_ARGS]) {
		if (se->v[K_ARGS].type == TJ_OBJECT && (r->summaries || phase == 'C' || (phase == 'M' && !r->times))) {
			tm_error perr;
			if (tj_parse(se->v[K_ARGS].s, se->v[K_ARGS].len, &args, &perr) < 0)
				return 0; /* cannot be: tj_read_shallow checked it */
			f[K_ARGS] = args;
		} else if (se->v[K_ARGS].type == TJ_OBJECT) {
			static const tj_value empty = {.type = TJ_NULL};
			f[K_ARGS] = &empty; /* an object nobody reads */
		}
	}
	/* the model's record, V8 samples (P) aside */
	const char *rec = NULL;
	if (se->jf && phase != 'P') {
		/* the last args member is an object: the one the record takes,
		 * already parsed when the tree above was made */
		if (args) {
			se->jf->args = args;
			se->jf->args_text = NULL;
		}
		r->recbuf.len = 0;
		if (json_rec_encode(&r->recbuf, se->jf, r->rec_forms) != 0) {
			tj_free(args);
			return 0; /* cannot be: tj_read_shallow checked the args */
		}
		rec = r->recbuf.data;
	}
	*rc = deliver_members(r, f, NULL, buf, *used, rec, rec ? r->recbuf.len : 0);
	tj_free(args);
	return 1;
}

/* deliver_shallow, with the record's fields gathered when records are
 * made. */
static int deliver_fast(reader *r, const char *buf, size_t len, size_t *used, int *rc)
{
	shallow_ev se;
	se.n = 0;
	memset(se.set, 0, sizeof se.set);
	json_rec_fields jf;
	se.jf = NULL;
	if (r->rec) {
		json_rec_fields_init(&jf);
		se.jf = &jf;
	}
	int done = deliver_shallow(r, &se, buf, len, used, rc);
	if (se.jf)
		json_rec_fields_done(&jf);
	return done;
}

static int deliver_trace_event(reader *r, const char *text, size_t len)
{
	tj_value *obj = NULL;
	tm_error perr;
	if (tj_parse(text, len, &obj, &perr) < 0)
		return tm_err(r->err, TM_EINPUT, "Failure parsing JSON: %s", perr.msg);
	return deliver_parsed(r, obj, text, len);
}

/* traceEvents (or the bare array); the '[' is consumed. */
static int read_events(reader *r)
{
	for (;;) {
		int ch = src_skip_ws(&r->src);
		if (ch < 0) {
			/* §3.1: the bare array may end without ']'. */
			if (ch == -1 && !r->object_form)
				return STEP_OK;
			return fail_step(r, ch);
		}
		if (ch == ',') {
			r->src.pos++;
			continue;
		}
		if (ch == ']') {
			r->src.pos++;
			return STEP_OK;
		}
		if (ch != '{')
			return tm_err(r->err, TM_EINPUT,
				      "Failure parsing JSON: unexpected character '%c' in traceEvents", ch);
		/* Fast path: parse the event straight from the chunk. Where that
		 * parse succeeds, it ends at the bracket that scan_event would
		 * find (both skip strings alike, and no other token holds a
		 * bracket or a quote), so the tree is the one the bounded text
		 * gives. Anything else (an event cut by the chunk's end, or a bad
		 * one) takes the general path, which reports as before. */
		{
			tj_value *obj = NULL;
			size_t used = 0;
			int rc;
			tm_error perr;
			source *s = &r->src;
			if (deliver_fast(r, s->buf + s->pos, s->len - s->pos, &used, &rc)) {
				s->pos += used;
				if (rc)
					return STEP_ERR;
				continue;
			}
			if (tj_parse_prefix(s->buf + s->pos, s->len - s->pos, &obj, &used, &perr) == 0) {
				if (used > JSON_TRACE_EVENT_MAX) {
					tj_free(obj);
					return tm_err(r->err, TM_EINPUT,
						      "Failure parsing JSON: event larger than %u bytes",
						      JSON_TRACE_EVENT_MAX);
				}
				s->pos += used;
				if (deliver_parsed(r, obj, s->buf + s->pos - used, used))
					return STEP_ERR;
				continue;
			}
		}
		const char *text = NULL;
		size_t len = 0;
		int rc = scan_event(r, &text, &len);
		if (rc == STEP_EOF && !r->object_form)
			return STEP_OK; /* an event cut short ends a bare array */
		if (rc)
			return rc;
		if (deliver_trace_event(r, text, len))
			return STEP_ERR;
	}
}

/* One completed systemTraceEvents line (§3.1). */
static int deliver_system_line(reader *r)
{
	tm_buf *l = &r->line;
	if (!l->data) {
		tm_buf_put(l, "", 1); /* parsing needs l->data[len] writable */
		l->len = 0;
		l->data[0] = '\0';
	}
	systrace_event sev;
	/* systrace_parse_line leaves a line it cannot match intact. */
	systrace_line_result res = systrace_parse_line(l->data, l->len, &sev);
	int rc = STEP_OK;
	switch (res) {
	case SYSTRACE_LINE_NO_MATCH:
		rc = tm_err(r->err, TM_EINPUT, "Not a known systrace event format (line: %s)",
			    l->data);
		break;
	case SYSTRACE_LINE_SKIP:
		break;
	case SYSTRACE_LINE_BAD_CPU:
		r->st->systrace_parse_failure++;
		break;
	case SYSTRACE_LINE_BAD_PRINT:
		/* counted, and delivered for its thread (systrace.h) */
		r->st->systrace_parse_failure++;
		sev.bad_print = 1;
		sev.print_phase = 0;
		/* fall through */
	case SYSTRACE_LINE_EVENT: {
		json_event ev;
		memset(&ev, 0, sizeof ev);
		sev.json_embedded = 1;
		ev.kind = JSON_EV_SYSTRACE;
		ev.systrace = &sev;
		ev.phase = sev.print_phase;
		ev.has_ts = 1;
		ev.ts = sev.ts;
		ev.dur = ev.tts = ev.tdur = -1;
		ev.has_pid = sev.tgid >= 0;
		ev.pid = sev.tgid;
		ev.has_tid = 1;
		ev.tid = sev.pid;
		ev.name = sev.print_name[0] ? sev.print_name : sev.event_name;
		ev.counter_value = (double)sev.print_value;
		snprintf(ev.args_summary, sizeof ev.args_summary, "%s", sev.args_summary);
		if (r->fn(r->ctx, &ev, r->err))
			rc = STEP_ERR;
		break;
	}
	}
	l->len = 0;
	return rc;
}

static int hexval(int ch)
{
	if (ch >= '0' && ch <= '9')
		return ch - '0';
	if (ch >= 'a' && ch <= 'f')
		return ch - 'a' + 10;
	if (ch >= 'A' && ch <= 'F')
		return ch - 'A' + 10;
	return -1;
}

static void put_utf8(tm_buf *b, unsigned cp)
{
	char u[4];
	size_t n;
	if (cp < 0x80) {
		u[0] = (char)cp;
		n = 1;
	} else if (cp < 0x800) {
		u[0] = (char)(0xC0 | (cp >> 6));
		u[1] = (char)(0x80 | (cp & 0x3F));
		n = 2;
	} else {
		u[0] = (char)(0xE0 | (cp >> 12));
		u[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
		u[2] = (char)(0x80 | (cp & 0x3F));
		n = 3;
	}
	tm_buf_put(b, u, n);
}

/* Unescape a raw JSON string body in place (keys). Returns 0, or -1 on
 * a bad escape. */
static int unescape_in_place(tm_buf *b)
{
	static const char FROM[] = "\"\\/bfnrt";
	static const char TO[] = "\"\\/\b\f\n\r\t";
	tm_buf out = {0};
	for (size_t i = 0; i < b->len; i++) {
		char ch = b->data[i];
		if (ch != '\\') {
			tm_buf_put(&out, &ch, 1);
			continue;
		}
		if (++i >= b->len)
			goto bad;
		const char *p = b->data[i] ? strchr(FROM, b->data[i]) : NULL;
		if (p) {
			tm_buf_put(&out, &TO[p - FROM], 1);
		} else if (b->data[i] == 'u') {
			unsigned cp = 0;
			for (int k = 1; k <= 4; k++) {
				if (i + (size_t)k >= b->len || hexval((unsigned char)b->data[i + (size_t)k]) < 0)
					goto bad;
				cp = cp * 16 + (unsigned)hexval((unsigned char)b->data[i + (size_t)k]);
			}
			put_utf8(&out, cp);
			i += 4;
		} else {
			goto bad;
		}
	}
	b->len = 0;
	if (out.len)
		tm_buf_put(b, out.data, out.len);
	else if (b->data)
		b->data[0] = '\0';
	tm_buf_free(&out);
	return 0;
bad:
	tm_buf_free(&out);
	return -1;
}

static const char ERR_SYSTEM_STRING[] =
	"Failure parsing JSON: encountered fatal error while parsing event inside trace event string";

/* systemTraceEvents: the opening quote is consumed. The string is
 * unescaped as it streams; each `\n` escape ends a line. Text after the
 * last `\n` is dropped, as in the reference. */
static int read_system_events(reader *r)
{
	r->line.len = 0;
	for (;;) {
		int ch = src_get(&r->src);
		if (ch < 0)
			return fail_step(r, ch);
		if (ch == '"')
			return STEP_OK;
		if (ch != '\\') {
			if (r->line.len >= SYSTRACE_LINE_MAX)
				return tm_err(r->err, TM_EINPUT, "%s", ERR_SYSTEM_STRING);
			char c = (char)ch;
			tm_buf_put(&r->line, &c, 1);
			continue;
		}
		ch = src_get(&r->src);
		if (ch < 0)
			return fail_step(r, ch);
		static const char SIMPLE_FROM[] = "\"\\/bfrt";
		static const char SIMPLE_TO[] = "\"\\/\b\f\r\t";
		const char *p = ch ? strchr(SIMPLE_FROM, ch) : NULL;
		if (ch == 'n') {
			if (deliver_system_line(r))
				return STEP_ERR;
		} else if (p) {
			tm_buf_put(&r->line, &SIMPLE_TO[p - SIMPLE_FROM], 1);
		} else if (ch == 'u') {
			unsigned cp = 0;
			for (int i = 0; i < 4; i++) {
				int h = src_get(&r->src);
				if (h < 0)
					return fail_step(r, h);
				if (hexval(h) < 0)
					return tm_err(r->err, TM_EINPUT, "%s", ERR_SYSTEM_STRING);
				cp = cp * 16 + (unsigned)hexval(h);
			}
			put_utf8(&r->line, cp);
		} else {
			return tm_err(r->err, TM_EINPUT, "%s", ERR_SYSTEM_STRING);
		}
	}
}

/* The outer `metadata` value (§3.1): each non-null entry of an object is
 * reported; anything else is ignored. */
static int read_metadata(reader *r)
{
	/* nobody reads it: passed by like any other key (and then, as the
	 * reference, without our bound on a captured value's size) */
	if (!r->metadata)
		return scan_value(r, NULL);
	r->ev.len = 0;
	int rc = scan_value(r, &r->ev);
	if (rc)
		return rc;
	tj_value *obj = NULL;
	tm_error perr;
	if (r->ev.len == 0 || r->ev.data[0] != '{' || tj_parse(r->ev.data, r->ev.len, &obj, &perr) < 0)
		return STEP_OK;
	for (size_t i = 0; i < obj->len && rc == STEP_OK; i++) {
		if (obj->items[i].type == TJ_NULL)
			continue;
		json_event ev;
		memset(&ev, 0, sizeof ev);
		ev.kind = JSON_EV_METADATA;
		ev.dur = ev.tts = ev.tdur = ev.pid = ev.tid = -1;
		ev.metadata_key = tj_keys(obj)[i].s;
		ev.metadata_value = &obj->items[i];
		if (r->fn(r->ctx, &ev, r->err))
			rc = STEP_ERR;
	}
	tj_free(obj);
	return rc;
}

/* The outer object's keys, after its '{' (§3.1). */
static int read_outer_object(reader *r)
{
	tm_buf key = {0};
	int rc;
	for (;;) {
		int ch = src_skip_ws(&r->src);
		if (ch < 0) {
			rc = fail_step(r, ch);
			break;
		}
		r->src.pos++;
		if (ch == ',')
			continue;
		if (ch == '}') {
			rc = STEP_OK;
			break;
		}
		if (ch != '"') {
			rc = tm_err(r->err, TM_EINPUT,
				    "Failure parsing JSON: encountered fatal error while parsing key");
			break;
		}
		key.len = 0;
		if ((rc = scan_string_rest(r, &key)) != STEP_OK)
			break;
		/* The raw key with its closing quote, unescaped as the
		 * reference's key reader does. */
		key.data[--key.len] = '\0';
		if (unescape_in_place(&key) < 0) {
			rc = tm_err(r->err, TM_EINPUT,
				    "Failure parsing JSON: encountered fatal error while parsing key");
			break;
		}
		if (!key.data)
			tm_buf_puts(&key, "");
		ch = src_skip_ws(&r->src);
		if (ch < 0) {
			rc = fail_step(r, ch);
			break;
		}
		if (ch != ':') {
			rc = tm_err(r->err, TM_EINPUT,
				    "Failure parsing JSON: encountered fatal error while parsing key");
			break;
		}
		r->src.pos++;
		ch = src_skip_ws(&r->src);
		if (ch < 0) {
			rc = fail_step(r, ch);
			break;
		}
		if (strcmp(key.data, "traceEvents") == 0) {
			if (ch != '[') {
				rc = tm_err(r->err, TM_EINPUT,
					    "Failure parsing JSON: traceEvents is not an array.");
				break;
			}
			r->src.pos++;
			rc = read_events(r);
		} else if (strcmp(key.data, "systemTraceEvents") == 0) {
			if (ch != '"') {
				rc = tm_err(r->err, TM_EINPUT,
					    "Failure parsing JSON: systemTraceEvents is not an string.");
				break;
			}
			r->src.pos++;
			rc = read_system_events(r);
		} else if (strcmp(key.data, "displayTimeUnit") == 0) {
			/* §3.1: counted, units unchanged; it must be a string. */
			if (ch != '"') {
				rc = tm_err(r->err, TM_EINPUT, "Could not parse displayTimeUnit");
				break;
			}
			r->st->json_display_time_unit++;
			rc = scan_value(r, NULL);
		} else if (strcmp(key.data, "metadata") == 0) {
			rc = read_metadata(r);
		} else {
			rc = scan_value(r, NULL);
		}
		if (rc)
			break;
	}
	tm_buf_free(&key);
	return rc;
}

static int read_impl(tm_cursor *c, size_t chunk, unsigned flags, json_event_fn fn, void *ctx,
		     json_trace_stats *st, tm_error *err)
{
	reader r = {.fn = fn,
		    .ctx = ctx,
		    .st = st,
		    .err = err,
		    .summaries = (flags & JSON_TRACE_SUMMARIES) != 0,
		    .metadata = (flags & JSON_TRACE_METADATA) != 0,
		    .rec = (flags & JSON_TRACE_REC) != 0,
		    .times = (flags & JSON_TRACE_TIMES) != 0,
		    .rec_forms = ((flags & JSON_TRACE_REC_ANNOT) ? JSON_REC_ANNOT : 0u) |
				 ((flags & JSON_TRACE_REC_TEXT) ? JSON_REC_TEXT : 0u)};
	if (!chunk)
		chunk = 1;
	r.src = (source){.c = c, .buf = tm_xmalloc(chunk), .chunk = chunk, .err = err};
	int rc;
	int ch = src_skip_ws(&r.src);
	if (ch == -2)
		rc = STEP_ERR;
	else if (ch == -1)
		rc = tm_err(err, TM_EINPUT, "Failure parsing JSON: first chunk has only whitespace");
	else if (ch != '{' && ch != '[')
		rc = tm_err(err, TM_EINPUT,
			    "Failure parsing JSON: first non-whitespace character is not [ or {");
	else {
		r.src.pos++;
		r.object_form = ch == '{';
		rc = r.object_form ? read_outer_object(&r) : read_events(&r);
	}
	/* §3.1: only the object form may not be cut short. */
	if (rc == STEP_EOF)
		rc = tm_err(err, TM_EINPUT, "%s", ERR_INCOMPLETE);
	for (size_t i = 0; i < r.capids; i++)
		free(r.ids[i].s);
	free(r.ids);
	free(r.src.buf);
	tm_buf_free(&r.ev);
	tm_buf_free(&r.line);
	tm_buf_free(&r.strs);
	tm_buf_free(&r.recbuf);
	return rc ? -1 : 0;
}

int json_trace_read_chunked(tm_cursor *c, size_t chunk, json_event_fn fn, void *ctx,
			    json_trace_stats *st, tm_error *err)
{
	return read_impl(c, chunk, JSON_TRACE_SUMMARIES | JSON_TRACE_METADATA, fn, ctx, st, err);
}

int json_trace_read(tm_cursor *c, json_event_fn fn, void *ctx, json_trace_stats *st, tm_error *err)
{
	return read_impl(c, JSON_TRACE_CHUNK, JSON_TRACE_SUMMARIES | JSON_TRACE_METADATA, fn, ctx, st, err);
}

int json_trace_read_opt(tm_cursor *c, unsigned flags, json_event_fn fn, void *ctx, json_trace_stats *st,
			tm_error *err)
{
	return read_impl(c, JSON_TRACE_CHUNK, flags, fn, ctx, st, err);
}

/* ---- read ahead (core/util/ahead.h) --------------------------------------------- */

enum { LOG_EVENT = 1, LOG_STATS, LOG_TIMES, LOG_END };

/* An event entry's head holds its kind, its phase and these bits; the
 * fields after ts, dur, pid and tid are there when `more` says so. */
enum {
	EV_HAS_TS = 1,
	EV_HAS_PID = 2,
	EV_HAS_TID = 4,
	EV_PID_IS_STRING = 8,
	EV_TID_IS_STRING = 16,
};
enum {
	MORE_TTS = 1 << 0, /* tts, tdur */
	MORE_COUNTER = 1 << 1,
	MORE_REC = 1 << 2,
	MORE_PID_NAME = 1 << 3,
	MORE_TID_NAME = 1 << 4,
	MORE_NAME = 1 << 5,
	MORE_CATEGORY = 1 << 6,
	MORE_SUMMARY = 1 << 7,
	MORE_ID = 1 << 8,
	MORE_ARGS = 1 << 9,
	MORE_SYSTRACE = 1 << 10,
};

typedef struct log_ctx {
	tm_buf *b;
	json_trace_stats st, logged;
	size_t times_at; /* the open LOG_TIMES entry's head, 0 when none */
} log_ctx;

/* The counts so far, when they changed since the last entry. */
static void log_stats(log_ctx *lc)
{
	if (memcmp(&lc->st, &lc->logged, sizeof lc->st) == 0)
		return;
	tm_log_run_close(lc->b, &lc->times_at);
	size_t at = tm_log_begin(lc->b, LOG_STATS, 0, 0, 0);
	tm_buf_put(lc->b, &lc->st, sizeof lc->st);
	tm_log_end(lc->b, at);
	lc->logged = lc->st;
}

/* A tree: where the field ends, then the tree from the next 8-aligned
 * offset. */
static void put_tree(tm_buf *b, const tj_value *v)
{
	uint64_t end = 0;
	size_t slot = b->len;
	tm_buf_put(b, &end, sizeof end);
	tj_copy_out(v, b);
	end = b->len;
	memcpy(b->data + slot, &end, sizeof end);
}

static const tj_value *get_tree(const char **p, char *base)
{
	uint64_t end;
	tm_log_get(p, &end, sizeof end);
	size_t root = ((size_t)(*p - base) + 7) & ~(size_t)7;
	*p = base + end;
	return tj_copy_in(base, root);
}

static void put_cstr(tm_buf *b, const char *s)
{
	tm_log_put_s(b, s, strlen(s));
}

static int log_event(void *ctx, const json_event *ev, tm_error *err)
{
	(void)err;
	log_ctx *lc = ctx;
	tm_buf *b = lc->b;
	log_stats(lc);
	int args = ev->args && (ev->phase == 'C' || ev->phase == 'M');
	uint64_t counter_bits; /* -0.0 is kept too */
	memcpy(&counter_bits, &ev->counter_value, sizeof counter_bits);
	uint16_t more = (uint16_t)((ev->tts != -1 || ev->tdur != -1 ? MORE_TTS : 0) |
				   (counter_bits ? MORE_COUNTER : 0) | (ev->rec ? MORE_REC : 0) |
				   (ev->pid_name ? MORE_PID_NAME : 0) | (ev->tid_name ? MORE_TID_NAME : 0) |
				   (ev->name ? MORE_NAME : 0) | (ev->category ? MORE_CATEGORY : 0) |
				   (ev->args_summary[0] ? MORE_SUMMARY : 0) | (ev->id ? MORE_ID : 0) |
				   (args ? MORE_ARGS : 0) | (ev->systrace ? MORE_SYSTRACE : 0));
	uint8_t bits = (uint8_t)((ev->has_ts ? EV_HAS_TS : 0) | (ev->has_pid ? EV_HAS_PID : 0) |
				 (ev->has_tid ? EV_HAS_TID : 0) | (ev->pid_is_string ? EV_PID_IS_STRING : 0) |
				 (ev->tid_is_string ? EV_TID_IS_STRING : 0));
	size_t at = tm_log_begin(b, LOG_EVENT, (uint8_t)ev->kind, (uint8_t)ev->phase, bits);
	struct {
		int64_t ts, dur, pid, tid;
		uint16_t more;
	} f = {ev->ts, ev->dur, ev->pid, ev->tid, more};
	tm_buf_put(b, &f, sizeof f);
	if (more & MORE_TTS) {
		tm_buf_put(b, &ev->tts, sizeof ev->tts);
		tm_buf_put(b, &ev->tdur, sizeof ev->tdur);
	}
	if (more & MORE_COUNTER)
		tm_buf_put(b, &ev->counter_value, sizeof ev->counter_value);
	if (more & MORE_REC)
		tm_log_put_s(b, ev->rec, ev->rec_len);
	if (more & MORE_PID_NAME)
		put_cstr(b, ev->pid_name);
	if (more & MORE_TID_NAME)
		put_cstr(b, ev->tid_name);
	if (more & MORE_NAME)
		put_cstr(b, ev->name);
	if (more & MORE_CATEGORY)
		put_cstr(b, ev->category);
	if (more & MORE_SUMMARY)
		put_cstr(b, ev->args_summary);
	if (more & MORE_ID)
		put_tree(b, ev->id);
	if (more & MORE_ARGS)
		put_tree(b, ev->args);
	if (more & MORE_SYSTRACE)
		systrace_event_put(b, ev->systrace);
	tm_log_end(b, at);
	return 0;
}

/* An event of a times-only log: runs of them in one entry. A whole
 * event costs about what its read does to hand to the other core, and
 * the scan alone reads only these of it. */
typedef struct event_time {
	int64_t ts, dur;
	uint32_t numbers; /* C: its numeric args */
	uint8_t kind, phase, has_ts, bad_print;
} event_time;

static int log_time(void *ctx, const json_event *ev, tm_error *err)
{
	(void)err;
	log_ctx *lc = ctx;
	log_stats(lc);
	tm_log_run_open(lc->b, &lc->times_at, LOG_TIMES);
	event_time t = {ev->ts, ev->dur, 0, (uint8_t)ev->kind, (uint8_t)ev->phase, ev->has_ts != 0, 0};
	if (ev->systrace) {
		t.ts = ev->systrace->ts;
		t.bad_print = ev->systrace->bad_print != 0;
	}
	const tj_value *a = ev->args;
	if (ev->phase == 'C' && a && a->type == TJ_OBJECT)
		for (size_t i = 0; i < a->len; i++)
			t.numbers += tj_is_number(&a->items[i]);
	tm_buf_put(lc->b, &t, sizeof t);
	return 0;
}

void json_trace_log(tm_cursor *c, unsigned flags, tm_buf *log)
{
	log_ctx lc = {log, {0}, {0}, 0};
	tm_error err;
	tm_err_clear(&err);
	unsigned read_flags = flags & ~(unsigned)JSON_TRACE_METADATA;
	int rc = json_trace_read_opt(c, read_flags, flags & JSON_TRACE_TIMES ? log_time : log_event, &lc, &lc.st,
				     &err);
	log_stats(&lc);
	tm_log_run_close(lc.b, &lc.times_at);
	size_t at = tm_log_begin(log, LOG_END, rc != 0, 0, 0);
	if (rc)
		tm_buf_put(log, &err, sizeof err);
	tm_log_end(log, at);
}

static void add_stats(json_trace_stats *st, const json_trace_stats *start, const json_trace_stats *d)
{
	st->json_tokenizer_failure = start->json_tokenizer_failure + d->json_tokenizer_failure;
	st->json_parser_failure = start->json_parser_failure + d->json_parser_failure;
	st->json_display_time_unit = start->json_display_time_unit + d->json_display_time_unit;
	st->systrace_parse_failure = start->systrace_parse_failure + d->systrace_parse_failure;
}

/* An event entry's fields (after its head) into ev. */
static void get_event(const char **p, char *base, const tm_log_head *h, json_event *ev, systrace_event *sev)
{
	struct {
		int64_t ts, dur, pid, tid;
		uint16_t more;
	} f;
	tm_log_get(p, &f, sizeof f);
	size_t n;
	memset(ev, 0, offsetof(json_event, args_summary));
	ev->kind = (json_event_kind)h->a;
	ev->phase = (char)h->b;
	ev->has_ts = (h->c & EV_HAS_TS) != 0;
	ev->has_pid = (h->c & EV_HAS_PID) != 0;
	ev->has_tid = (h->c & EV_HAS_TID) != 0;
	ev->pid_is_string = (h->c & EV_PID_IS_STRING) != 0;
	ev->tid_is_string = (h->c & EV_TID_IS_STRING) != 0;
	ev->ts = f.ts;
	ev->dur = f.dur;
	ev->pid = f.pid;
	ev->tid = f.tid;
	ev->tts = ev->tdur = -1;
	if (f.more & MORE_TTS) {
		tm_log_get(p, &ev->tts, sizeof ev->tts);
		tm_log_get(p, &ev->tdur, sizeof ev->tdur);
	}
	ev->counter_value = 0;
	if (f.more & MORE_COUNTER)
		tm_log_get(p, &ev->counter_value, sizeof ev->counter_value);
	if (f.more & MORE_REC)
		ev->rec = tm_log_get_s(p, &ev->rec_len);
	if (f.more & MORE_PID_NAME)
		ev->pid_name = tm_log_get_s(p, &n);
	if (f.more & MORE_TID_NAME)
		ev->tid_name = tm_log_get_s(p, &n);
	if (f.more & MORE_NAME)
		ev->name = tm_log_get_s(p, &n);
	if (f.more & MORE_CATEGORY)
		ev->category = tm_log_get_s(p, &n);
	ev->args_summary[0] = '\0';
	if (f.more & MORE_SUMMARY) {
		const char *s = tm_log_get_s(p, &n);
		memcpy(ev->args_summary, s, n + 1); /* it was one: it fits */
	}
	if (f.more & MORE_ID)
		ev->id = get_tree(p, base);
	if (f.more & MORE_ARGS)
		ev->args = get_tree(p, base);
	ev->systrace = NULL;
	ev->metadata_key = NULL;
	ev->metadata_value = NULL;
	if (f.more & MORE_SYSTRACE) {
		systrace_event_get(p, sev);
		ev->systrace = sev;
	}
}

/* A LOG_TIMES entry's events, p to e. */
static int replay_times(const char *p, const char *e, json_event_fn fn, void *ctx, tm_error *err)
{
	json_event ev;
	memset(&ev, 0, offsetof(json_event, args_summary));
	ev.args_summary[0] = '\0';
	memset(&ev.counter_value, 0, sizeof ev - offsetof(json_event, counter_value));
	systrace_event sev;
	systrace_event_empty(&sev);
	sev.json_embedded = 1;
	/* a C event's numbers: values of 0 under empty keys */
	tj_value args = {.type = TJ_OBJECT};
	size_t cap = 0;
	static char empty_key[1];
	int rc = 0;
	while (p + sizeof(event_time) <= e) {
		event_time t;
		tm_log_get(&p, &t, sizeof t);
		ev.kind = (json_event_kind)t.kind;
		ev.phase = (char)t.phase;
		ev.has_ts = t.has_ts;
		ev.ts = t.ts;
		ev.dur = t.dur;
		ev.tts = ev.tdur = ev.pid = ev.tid = -1;
		ev.args = NULL;
		ev.systrace = NULL;
		if (ev.kind == JSON_EV_SYSTRACE) {
			sev.ts = t.ts;
			sev.bad_print = t.bad_print;
			ev.systrace = &sev;
		} else if (ev.phase == 'C') {
			/* the keys follow the items (tj_keys): laid out again
			 * when the count changes */
			if (t.numbers != args.len) {
				if (t.numbers > cap) {
					cap = t.numbers;
					args.items = tm_xrealloc(args.items, cap * (sizeof(tj_value) + sizeof(tj_key)));
				}
				args.len = t.numbers;
				tj_key *keys = tj_keys(&args);
				for (size_t i = 0; i < args.len; i++) {
					args.items[i] = (tj_value){.type = TJ_INT};
					keys[i] = (tj_key){empty_key, 0};
				}
			}
			ev.args = &args;
		}
		if (fn(ctx, &ev, err)) {
			rc = -1;
			break;
		}
	}
	free(args.items);
	return rc;
}

int json_trace_replay(tm_buf *log, size_t from, json_event_fn fn, void *ctx, json_trace_stats *st,
		      tm_error *err)
{
	json_trace_stats start = *st;
	for (size_t at = from; at + sizeof(tm_log_head) <= log->len;) {
		const char *p = log->data + at;
		tm_log_head h;
		tm_log_get(&p, &h, sizeof h);
		if (h.tag == LOG_EVENT) {
			json_event ev;
			systrace_event sev;
			get_event(&p, log->data, &h, &ev, &sev);
			if (fn(ctx, &ev, err))
				return -1;
		} else if (h.tag == LOG_TIMES) {
			if (replay_times(p, log->data + at + h.next, fn, ctx, err))
				return -1;
		} else if (h.tag == LOG_STATS) {
			json_trace_stats d;
			tm_log_get(&p, &d, sizeof d);
			add_stats(st, &start, &d);
		} else {
			if (h.a)
				tm_log_get(&p, err, sizeof *err);
			return h.a ? -1 : 0;
		}
		at += h.next;
	}
	return tm_err(err, TM_EIO, "a file read ahead left no outcome");
}
