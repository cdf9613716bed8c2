/* core/formats/strace/strace.c - ParseStraceLine, step for step. */
#include "formats/strace/strace.h"

#include <string.h>

typedef struct sv {
	const char *p;
	size_t n;
} sv;

#define NPOS ((size_t)-1)

/* base::TrimWhitespace: ' ', '\t' and '\n' only */
static int trim_char(char c)
{
	return c == ' ' || c == '\t' || c == '\n';
}

static sv trim(sv s)
{
	while (s.n && trim_char(s.p[0])) {
		s.p++;
		s.n--;
	}
	while (s.n && trim_char(s.p[s.n - 1]))
		s.n--;
	return s;
}

/* base::IsSpace */
static int is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

static size_t find_char(sv s, char c, size_t from)
{
	for (size_t i = from; i < s.n; i++)
		if (s.p[i] == c)
			return i;
	return NPOS;
}

static size_t find_str(sv s, const char *needle, size_t from)
{
	size_t k = strlen(needle);
	for (size_t i = from; k <= s.n && i + k <= s.n; i++)
		if (memcmp(s.p + i, needle, k) == 0)
			return i;
	return NPOS;
}

static sv sub(sv s, size_t from, size_t len)
{
	if (from > s.n)
		from = s.n;
	if (len > s.n - from)
		len = s.n - from;
	return (sv){s.p + from, len};
}

static int is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* base::StringViewToInt64: one leading '+' dropped, then std::from_chars
 * of an int64 spanning the whole view (an optional '-', digits, no
 * overflow). */
static int to_i64(sv s, int64_t *out)
{
	size_t i = s.n && s.p[0] == '+' ? 1 : 0;
	int neg = i < s.n && s.p[i] == '-';
	if (neg)
		i++;
	if (i == s.n)
		return 0;
	uint64_t v = 0, lim = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
	for (; i < s.n; i++) {
		if (!is_digit(s.p[i]))
			return 0;
		uint64_t d = (uint64_t)(s.p[i] - '0');
		if (v > (lim - d) / 10)
			return 0;
		v = v * 10 + d;
	}
	*out = neg ? (int64_t)(0 - v) : (int64_t)v;
	return 1;
}

#define NS_PER_SEC INT64_C(1000000000)
#define MAX_EPOCH_SECONDS (INT64_MAX / NS_PER_SEC)

/* ParseEpochTimestamp: "seconds[.microseconds]", no ':' */
static int epoch_ns(sv s, int64_t *out)
{
	if (find_char(s, ':', 0) != NPOS)
		return 0;
	size_t dot = find_char(s, '.', 0);
	sv whole = dot == NPOS ? s : sub(s, 0, dot);
	sv frac = dot == NPOS ? (sv){s.p + s.n, 0} : sub(s, dot + 1, NPOS);
	int64_t sec, us;
	if (!to_i64(whole, &sec) || sec < 0 || sec > MAX_EPOCH_SECONDS)
		return 0;
	int64_t ns = sec * NS_PER_SEC;
	if (frac.n) {
		if (!to_i64(frac, &us) || us < 0 || us > 999999)
			return 0;
		ns += us * 1000;
	}
	*out = ns;
	return 1;
}

int strace_parse_line(const char *p, size_t n, strace_line *out, int *unsupported_time)
{
	*unsupported_time = 0;
	memset(out, 0, sizeof(*out));
	sv rest = trim((sv){p, n});
	if (!rest.n || rest.p[0] == '-' || rest.p[0] == '+')
		return 0;

	/* a pid: a run of digits shorter than an epoch time's ten */
	size_t sp = find_char(rest, ' ', 0);
	if (sp != NPOS) {
		int all_digits = sp > 0 && sp < 10;
		for (size_t i = 0; all_digits && i < sp; i++)
			all_digits = is_digit(rest.p[i]);
		if (all_digits) {
			uint32_t pid = 0;
			for (size_t i = 0; i < sp; i++)
				pid = pid * 10 + (uint32_t)(rest.p[i] - '0');
			out->has_pid = 1;
			out->pid = pid;
			rest = trim(sub(rest, sp + 1, NPOS));
		}
	}

	/* the time, to the next space */
	sp = find_char(rest, ' ', 0);
	if (sp == NPOS)
		return 0;
	sv ts = sub(rest, 0, sp);
	if (!epoch_ns(ts, &out->epoch_ns)) {
		*unsupported_time = find_char(ts, ':', 0) != NPOS;
		return 0;
	}
	rest = trim(sub(rest, sp + 1, NPOS));
	if (!rest.n)
		return 0;

	int resumed = 0;
	static const char resumed_prefix[] = "<... ", resumed_mark[] = " resumed>";
	if (rest.n >= strlen(resumed_prefix) && memcmp(rest.p, resumed_prefix, strlen(resumed_prefix)) == 0) {
		size_t name_start = strlen(resumed_prefix);
		size_t name_end = find_str(rest, resumed_mark, name_start);
		if (name_end == NPOS)
			return 0;
		out->syscall = rest.p + name_start;
		out->syscall_n = name_end - name_start;
		resumed = 1;
		rest = trim(sub(rest, name_end + strlen(resumed_mark), NPOS));
	} else {
		size_t paren = find_char(rest, '(', 0);
		if (paren == NPOS)
			return 0;
		out->syscall = rest.p;
		out->syscall_n = paren;
		rest = sub(rest, paren + 1, NPOS);
	}
	out->args = rest.p + rest.n;

	/* an interrupted call: no closing paren, no return value */
	size_t unfinished = find_str(rest, "<unfinished ...>", 0);
	if (unfinished != NPOS) {
		sv a = trim(sub(rest, 0, unfinished));
		while (a.n && a.p[a.n - 1] == ',')
			a.n--;
		out->args = a.p;
		out->args_n = a.n;
		out->kind = resumed ? STRACE_RESUMED_THEN_UNFINISHED : STRACE_UNFINISHED;
		return 1;
	}
	out->kind = resumed ? STRACE_RESUMED : STRACE_COMPLETE;

	/* the call's own ')' is the one followed, after spaces, by '=' */
	size_t close = NPOS;
	for (size_t pos = find_char(rest, ')', 0); pos != NPOS; pos = find_char(rest, ')', pos + 1)) {
		size_t after = pos + 1;
		while (after < rest.n && is_space(rest.p[after]))
			after++;
		if (after < rest.n && rest.p[after] == '=') {
			close = pos;
			break;
		}
	}
	size_t eq;
	if (close == NPOS) { /* "<... read resumed>) = 3" left "= 3" */
		eq = find_char(rest, '=', 0);
		if (eq == NPOS)
			return 0;
	} else {
		sv a = trim(sub(rest, 0, close));
		out->args = a.p;
		out->args_n = a.n;
		eq = find_char(rest, '=', close + 1);
	}
	sv r = trim(sub(rest, eq + 1, NPOS));
	out->has_ret = 1;
	out->ret = r.p;
	out->ret_n = r.n;
	return 1;
}
