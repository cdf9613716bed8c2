/* core/formats/perf_text/perf_text.c - ParseSampleLine and the frame lines
 * of PerfTextTraceTokenizer, step for step. */
#include "formats/perf_text/perf_text.h"

#include <stdlib.h>
#include <string.h>

#define NPOS ((size_t)-1)

static int is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* base::StringToUInt32 of a std::string holding p[0..n): strtoul on its
 * C string (so up to a NUL), refused when that is empty or not all read,
 * the value cast to 32 bits as the reference casts it. */
static int c_uint32(const char *p, size_t n, uint32_t *out)
{
	char small[64];
	char *s = n < sizeof small ? small : tm_xmalloc(n + 1);
	memcpy(s, p, n);
	s[n] = '\0';
	char *end;
	unsigned long v = strtoul(s, &end, 10);
	int ok = s[0] != '\0' && *end == '\0';
	if (s != small)
		free(s);
	if (ok)
		*out = (uint32_t)v;
	return ok;
}

/* FindTsAtEnd of l[0..cln): the offset of the digits of the
 * " <digits>.<6 digits>" that ends it (the digits before the dot may be
 * absent), or NPOS. The reference scans back from each ':' to the space
 * before the time, so a line of many ':' costs the square of its length;
 * here the caller passes the last two non-digits before cln, kept in one
 * pass over the line. The time ends l[0..cln) exactly when the last is the
 * dot seven back and the one before it is the space. */
static size_t ts_at_end(const char *l, size_t cln, size_t last_nd, size_t prev_nd)
{
	if (last_nd == NPOS || last_nd + 7 != cln || l[last_nd] != '.')
		return NPOS;
	if (prev_nd == NPOS || l[prev_nd] != ' ')
		return NPOS;
	return prev_nd + 1;
}

/* A piece of the text before the time: split on ' ' once tabs are two
 * spaces, empty pieces dropped. */
typedef struct piece {
	size_t at, n;
} piece;

static int is_sep(char c)
{
	return c == ' ' || c == '\t';
}

/* The double's product as the reference computes it, cast as x86's
 * cvttsd2si casts: out of range is INT64_MIN. */
static int64_t seconds_to_ns(double s)
{
	double ns = s * 1000 * 1000 * 1000;
	if (!(ns < 9223372036854775808.0 && ns >= -9223372036854775808.0))
		return INT64_MIN;
	return (int64_t)ns;
}

/* One candidate ':' at l[cln], its time's digits at l[ts_at] (or NPOS):
 * 1 when what comes before it is a head. */
static int head_before(const char *l, size_t cln, size_t ts_at, perf_text_head *out)
{
	if (ts_at == NPOS)
		return 0;
	/* StringToDouble of "<digits>.<6 digits>": always a number */
	char num[64];
	size_t tn = cln - ts_at;
	if (tn >= sizeof num) {
		char *big = tm_xmalloc(tn + 1);
		memcpy(big, l + ts_at, tn);
		big[tn] = '\0';
		out->ts = seconds_to_ns(strtod(big, NULL));
		free(big);
	} else {
		memcpy(num, l + ts_at, tn);
		num[tn] = '\0';
		out->ts = seconds_to_ns(strtod(num, NULL));
	}
	/* the pieces of l[0..ts_at), from the last */
	size_t end = ts_at;
	piece last[2];
	size_t got = 0;
	size_t cut = end; /* where the pieces not taken end */
	for (int k = 0; k < 2; k++) {
		size_t e = cut;
		while (e > 0 && is_sep(l[e - 1]))
			e--;
		if (e == 0)
			break;
		size_t s = e;
		while (s > 0 && !is_sep(l[s - 1]))
			s--;
		last[got++] = (piece){s, e - s};
		cut = s;
	}
	if (got == 0)
		return 0;
	size_t take = 0; /* pieces taken from the end */
	const char *p0 = l + last[0].at;
	out->has_cpu = 0;
	if (p0[0] == '[' && p0[last[0].n - 1] == ']' && last[0].n >= 1) {
		if (got == 1)
			return 0; /* only a "[cpu]": no tid */
		if (last[0].n < 2 || !c_uint32(p0 + 1, last[0].n - 2, &out->cpu))
			return 0;
		out->has_cpu = 1;
		take = 1;
	}
	piece ids = last[take];
	/* "tid" or "pid/tid", split on '/' with empty pieces dropped */
	piece part[2];
	size_t k = 0;
	for (size_t i = ids.at; i < ids.at + ids.n;) {
		if (l[i] == '/') {
			i++;
			continue;
		}
		size_t from = i;
		while (i < ids.at + ids.n && l[i] != '/')
			i++;
		if (k == 2)
			return 0;
		part[k++] = (piece){from, i - from};
	}
	if (k == 0)
		return 0;
	if (!c_uint32(l + part[k - 1].at, part[k - 1].n, &out->tid))
		return 0;
	out->has_pid = k == 2;
	if (k == 2 && !c_uint32(l + part[0].at, part[0].n, &out->pid))
		return 0;
	/* the rest, joined by single spaces, is the command name */
	size_t rest = ids.at;
	out->comm.len = 0;
	for (size_t i = 0; i < rest;) {
		while (i < rest && is_sep(l[i]))
			i++;
		size_t from = i;
		while (i < rest && !is_sep(l[i]))
			i++;
		if (i > from) {
			if (out->comm.len)
				tm_buf_putc(&out->comm, ' ');
			tm_buf_put(&out->comm, l + from, i - from);
		}
	}
	return 1;
}

int perf_text_parse_head(const char *p, size_t n, perf_text_head *out)
{
	/* the first ':' with a head before it counts, as in the reference */
	size_t last_nd = NPOS, prev_nd = NPOS; /* the last two non-digits before i */
	for (size_t i = 0; i < n; i++) {
		if (p[i] == ':' && head_before(p, i, ts_at_end(p, i, last_nd, prev_nd), out))
			return 1;
		if (!is_digit(p[i])) {
			prev_nd = last_nd;
			last_nd = i;
		}
	}
	return 0;
}

/* base::TrimWhitespace: ' ', '\t' and '\n' only */
static int trim_char(char c)
{
	return c == ' ' || c == '\t' || c == '\n';
}

static void trim(const char **p, size_t *n)
{
	while (*n && trim_char((*p)[0])) {
		(*p)++;
		(*n)--;
	}
	while (*n && trim_char((*p)[*n - 1]))
		(*n)--;
}

perf_text_frame_kind perf_text_parse_frame(const char *p, size_t n, perf_text_frame *out, const char **trimmed,
					   size_t *trimmed_n)
{
	trim(&p, &n);
	*trimmed = p;
	*trimmed_n = n;
	if (n == 0)
		return PERF_TEXT_END;
	const char *sp = memchr(p, ' ', n);
	if (!sp)
		return PERF_TEXT_NO_SYMBOL;
	size_t symbol_end = (size_t)(sp - p);
	size_t mapping_start = NPOS;
	for (size_t i = n; i > 0; i--)
		if (p[i - 1] == '(') {
			mapping_start = i - 1;
			break;
		}
	if (mapping_start == NPOS || p[n - 1] != ')')
		return PERF_TEXT_NO_MAPPING;
	out->mapping = p + mapping_start + 1;
	out->mapping_n = n - 1 - (mapping_start + 1);
	/* Slice(frame, symbol_end, mapping_start): substr's length wraps
	 * when the '(' comes first, and it takes the rest of the line */
	const char *s = p + symbol_end;
	size_t sn = mapping_start >= symbol_end ? mapping_start - symbol_end : n - symbol_end;
	trim(&s, &sn);
	for (size_t i = sn; i > 0; i--)
		if (s[i - 1] == '+') {
			sn = i - 1;
			break;
		}
	out->symbol = s;
	out->symbol_n = sn;
	return PERF_TEXT_FRAME;
}
