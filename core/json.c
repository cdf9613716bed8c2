/* core/json.c - recursive-descent JSON parser with the reference's errors. */
#include "json.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DEPTH 512

typedef struct parser {
	const char *p, *end;
	int depth;
	tm_error *err;
	int failed;
	char detail[TM_ERR_MAX - 64];
	int incomplete;
} parser;

enum { RC_OK = 0, RC_ERR = -1 };

static int fail(parser *ps, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(parser *ps, const char *fmt, ...)
{
	if (!ps->failed) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(ps->detail, sizeof(ps->detail), fmt, ap);
		va_end(ap);
		ps->failed = 1;
	}
	return RC_ERR;
}

/* Input ended early: the reference reports an empty detail. */
static int incomplete(parser *ps)
{
	if (!ps->failed) {
		ps->detail[0] = '\0';
		ps->failed = 1;
		ps->incomplete = 1;
	}
	return RC_ERR;
}

static int skip_ws(parser *ps)
{
	while (ps->p < ps->end && (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' || *ps->p == '\r'))
		ps->p++;
	return ps->p < ps->end;
}

static void put_utf8(tm_buf *b, uint32_t cp)
{
	char u[4];
	size_t n;
	if (cp <= 0x7f) {
		u[0] = (char)cp;
		n = 1;
	} else if (cp <= 0x7ff) {
		u[0] = (char)(0xc0 | cp >> 6);
		u[1] = (char)(0x80 | (cp & 0x3f));
		n = 2;
	} else {
		u[0] = (char)(0xe0 | cp >> 12);
		u[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		u[2] = (char)(0x80 | (cp & 0x3f));
		n = 3;
	}
	tm_buf_put(b, u, n);
}

static int parse_string(parser *ps, char **out, size_t *out_len)
{
	/* caller checked *p == '"' */
	const char *q = ++ps->p;
	tm_buf b = {0};
	while (q < ps->end && *q != '"') {
		if (*q != '\\') {
			const char *r = q;
			while (r < ps->end && *r != '"' && *r != '\\')
				r++;
			tm_buf_put(&b, q, (size_t)(r - q));
			q = r;
			continue;
		}
		if (q + 1 >= ps->end) {
			tm_buf_free(&b);
			return incomplete(ps);
		}
		char e = q[1];
		q += 2;
		switch (e) {
		case '"': tm_buf_put(&b, "\"", 1); break;
		case '\\': tm_buf_put(&b, "\\", 1); break;
		case '/': tm_buf_put(&b, "/", 1); break;
		case 'b': tm_buf_put(&b, "\b", 1); break;
		case 'f': tm_buf_put(&b, "\f", 1); break;
		case 'n': tm_buf_put(&b, "\n", 1); break;
		case 'r': tm_buf_put(&b, "\r", 1); break;
		case 't': tm_buf_put(&b, "\t", 1); break;
		case 'u': {
			if (ps->end - q < 4) {
				tm_buf_free(&b);
				return incomplete(ps);
			}
			uint32_t cp = 0;
			for (int k = 0; k < 4; k++) {
				char h = q[k];
				int v = h >= '0' && h <= '9' ? h - '0' : h >= 'a' && h <= 'f' ? h - 'a' + 10
					: h >= 'A' && h <= 'F' ? h - 'A' + 10 : -1;
				if (v < 0) {
					tm_buf_free(&b);
					return fail(ps, "Invalid escape sequence: \\u%c%c%c%c", q[0], q[1], q[2], q[3]);
				}
				cp = cp * 16 + (uint32_t)v;
			}
			/* The reference does not combine surrogate pairs. */
			if (cp >= 0xd800 && cp <= 0xdfff) {
				tm_buf_free(&b);
				return fail(ps, "Invalid escape sequence: \\u%c%c%c%c (code point %u is reserved for surrogate pairs)",
					    q[0], q[1], q[2], q[3], cp);
			}
			put_utf8(&b, cp);
			q += 4;
			break;
		}
		default:
			break; /* unknown escapes are dropped, as in the reference */
		}
	}
	if (q >= ps->end) {
		tm_buf_free(&b);
		return incomplete(ps);
	}
	ps->p = q + 1;
	*out = tm_buf_detach(&b, out_len);
	return RC_OK;
}

static int parse_number(parser *ps, tj_value *v)
{
	const char *start = ps->p, *cur = ps->p;
	int rest = (int)(ps->end - start > 200 ? 200 : ps->end - start);
	int int_like = 1;
	cur += *cur == '-';
	if (cur < ps->end && *cur == '0') {
		cur++;
		if (cur < ps->end && isdigit((unsigned char)*cur))
			return fail(ps, "Invalid number: leading zero in '%.*s'", rest, start);
	} else if (cur < ps->end && *cur >= '1' && *cur <= '9') {
		while (cur < ps->end && isdigit((unsigned char)*cur))
			cur++;
	} else if (cur < ps->end) {
		return fail(ps, "Invalid number: expected digit in '%.*s'", rest, start);
	}
	if (cur < ps->end && *cur == '.') {
		int_like = 0;
		const char *f = ++cur;
		while (cur < ps->end && isdigit((unsigned char)*cur))
			cur++;
		if (cur < ps->end && cur == f)
			return fail(ps, "Invalid number: expected digit after '.' in '%.*s'", rest, start);
	}
	if (cur < ps->end && (*cur == 'e' || *cur == 'E')) {
		int_like = 0;
		cur++;
		cur += cur < ps->end && (*cur == '+' || *cur == '-');
		const char *f = cur;
		while (cur < ps->end && isdigit((unsigned char)*cur))
			cur++;
		if (cur < ps->end && cur == f)
			return fail(ps, "Invalid number: expected digit after 'e' in '%.*s'", rest, start);
	}
	if (cur >= ps->end)
		return incomplete(ps);
	char tmp[128];
	size_t n = (size_t)(cur - start);
	if (n >= sizeof(tmp))
		n = sizeof(tmp) - 1;
	memcpy(tmp, start, n);
	tmp[n] = '\0';
	ps->p = cur;
	if (int_like) {
		/* manifest.md §4: an integer literal that fits int64 is an integer;
		 * a larger one is a double. */
		errno = 0;
		char *e;
		long long x = strtoll(tmp, &e, 10);
		if (errno == 0 && *e == '\0') {
			v->type = TJ_INT;
			v->i = x;
			return RC_OK;
		}
	}
	double d = strtod(tmp, NULL);
	if (isinf(d) || isnan(d))
		return fail(ps, "Double overflow/underflow parsing '%.*s'", rest, start);
	v->type = TJ_DOUBLE;
	v->d = d;
	return RC_OK;
}

static int parse_token(parser *ps, const char *word, tj_value *v)
{
	size_t n = strlen(word);
	if ((size_t)(ps->end - ps->p) < n)
		return incomplete(ps);
	if (memcmp(ps->p, word, n) != 0)
		return fail(ps, "Invalid token: expected '%s' but got '%.*s'", word, (int)n, ps->p);
	ps->p += n;
	if (word[0] == 'n') {
		v->type = TJ_NULL;
	} else {
		v->type = TJ_BOOL;
		v->b = word[0] == 't';
	}
	return RC_OK;
}

static int parse_container(parser *ps, tj_value *v, char open);

static int parse_value(parser *ps, tj_value *v)
{
	switch (*ps->p) {
	case '{':
	case '[':
		return parse_container(ps, v, *ps->p);
	case '"':
		v->type = TJ_STRING;
		return parse_string(ps, &v->s, &v->len);
	case 't':
		return parse_token(ps, "true", v);
	case 'f':
		return parse_token(ps, "false", v);
	case 'n':
		return parse_token(ps, "null", v);
	default:
		return parse_number(ps, v);
	}
}

/* The wrapper text names the innermost container whose reading failed. */
static void wrap(parser *ps, char open)
{
	if (ps->failed == 1) {
		tm_err(ps->err, TM_EINPUT, "Failed to parse %s: %s", open == '{' ? "object" : "array", ps->detail);
		ps->failed = 2;
	}
}

static int parse_container(parser *ps, tj_value *v, char open)
{
	char close = open == '{' ? '}' : ']';
	v->type = open == '{' ? TJ_OBJECT : TJ_ARRAY;
	if (++ps->depth > MAX_DEPTH) {
		fail(ps, "nesting deeper than %d levels", MAX_DEPTH);
		wrap(ps, open);
		return RC_ERR;
	}
	ps->p++;
	size_t cap = 0;
	if (!skip_ws(ps))
		goto incomplete_input;
	for (;;) {
		if (*ps->p == '}' || *ps->p == ']') {
			/* The reference ends the scope on either bracket, which also
			 * accepts a trailing comma. */
			ps->p++;
			ps->depth--;
			return RC_OK;
		}
		char *key = NULL;
		if (v->type == TJ_OBJECT) {
			if (*ps->p != '"') {
				fail(ps, "Expected '\"' at the start of key. Got '%c'", *ps->p);
				goto error;
			}
			size_t klen;
			if (parse_string(ps, &key, &klen) != RC_OK)
				goto error;
			if (!skip_ws(ps)) {
				free(key);
				goto incomplete_input;
			}
			if (*ps->p != ':') {
				fail(ps, "Expected ':' after key '%s'. Got '%c'", key, *ps->p);
				free(key);
				goto error;
			}
			ps->p++;
		}
		if (!skip_ws(ps)) {
			free(key);
			goto incomplete_input;
		}
		TM_GROW(v->items, cap, v->len + 1);
		if (v->type == TJ_OBJECT)
			v->keys = tm_xrealloc(v->keys, cap * sizeof(*v->keys));
		tj_value *child = &v->items[v->len];
		memset(child, 0, sizeof(*child));
		if (v->type == TJ_OBJECT)
			v->keys[v->len] = key;
		v->len++;
		if (parse_value(ps, child) != RC_OK) {
			if (ps->failed == 2)
				return RC_ERR; /* already wrapped by a nested container */
			goto error;
		}
		if (!skip_ws(ps))
			goto incomplete_input;
		if (*ps->p == ',') {
			ps->p++;
			if (!skip_ws(ps))
				goto incomplete_input;
		} else if (*ps->p != close) {
			if (v->type == TJ_OBJECT && key && key[0])
				fail(ps, "Expected ',' or '%c' after value for key '%s'. Got '%c'", close, key, *ps->p);
			else
				fail(ps, "Expected ',' or '%c' after value. Got '%c'", close, *ps->p);
			goto error;
		}
	}
incomplete_input:
	incomplete(ps);
error:
	wrap(ps, open);
	return RC_ERR;
}

int tj_parse(const char *buf, size_t len, tj_value **out, tm_error *err)
{
	*out = NULL;
	if (len == 0)
		return tm_err(err, TM_EINPUT, "Empty JSON input");
	parser ps = {.p = buf, .end = buf + len, .err = err};
	if (!skip_ws(&ps))
		return tm_err(err, TM_EINPUT,
			      "Failed to start parsing: Expected '{' or '[' at the start. Input is empty or whitespace only.");
	if (*ps.p != '{' && *ps.p != '[')
		return tm_err(err, TM_EINPUT, "Failed to start parsing: Expected '{' or '[' at the start. Got '%c'", *ps.p);
	tj_value *v = tm_xcalloc(1, sizeof(*v));
	if (parse_container(&ps, v, *ps.p) != RC_OK) {
		tj_free(v);
		return -1;
	}
	*out = v;
	return 0;
}

const tj_value *tj_get(const tj_value *obj, const char *key)
{
	if (!obj || obj->type != TJ_OBJECT)
		return NULL;
	for (size_t i = obj->len; i-- > 0;)
		if (obj->keys[i] && strcmp(obj->keys[i], key) == 0)
			return &obj->items[i];
	return NULL;
}

int tj_is_number(const tj_value *v)
{
	return v && (v->type == TJ_INT || v->type == TJ_DOUBLE);
}

static void clear(tj_value *v)
{
	if (v->type == TJ_STRING)
		free(v->s);
	if (v->type == TJ_ARRAY || v->type == TJ_OBJECT) {
		for (size_t i = 0; i < v->len; i++) {
			clear(&v->items[i]);
			if (v->keys)
				free(v->keys[i]);
		}
		free(v->items);
		free(v->keys);
	}
}

void tj_free(tj_value *v)
{
	if (!v)
		return;
	clear(v);
	free(v);
}
