/* core/formats/systrace/systrace.c - systrace text reader (spec/formats.md §4). */
#include "formats/systrace/systrace.h"

#include "util/ahead.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <stddef.h>
#include <string.h>

#include "util/per_thread.h"

/* formats.md §4.1: the TRACE: marker is looked for in the first 128 bytes. */
#define TRACE_MARKER_WINDOW 128

/* Character classes by table: the line matcher tests every byte of a
 * line, and six comparisons for \s were a tenth of the systrace scan
 * (callgrind). */
enum { C_SPACE = 1, C_DIGIT = 2 };
static const unsigned char char_class[256] = {
	/* POSIX [[:space:]], as the reference's regex \s */
	[' '] = C_SPACE, ['\t'] = C_SPACE, ['\n'] = C_SPACE, ['\v'] = C_SPACE, ['\f'] = C_SPACE, ['\r'] = C_SPACE,
	['0'] = C_DIGIT, ['1'] = C_DIGIT, ['2'] = C_DIGIT, ['3'] = C_DIGIT, ['4'] = C_DIGIT,
	['5'] = C_DIGIT, ['6'] = C_DIGIT, ['7'] = C_DIGIT, ['8'] = C_DIGIT, ['9'] = C_DIGIT,
};

static inline int is_space(int ch) { return char_class[(unsigned char)ch] & C_SPACE; }

static inline int is_digit(int ch) { return char_class[(unsigned char)ch] & C_DIGIT; }

static int is_flag_head(int ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || ch == '.';
}

static int is_flag_tail(int ch) { return is_digit(ch) || (ch >= 'a' && ch <= 'f') || ch == '.'; }

/* Where the §4.2 groups lie in the line (offsets; end exclusive). */
typedef struct line_match {
	size_t start, end;
	size_t pid_b, pid_e, tgid_b, tgid_e, cpu_b, cpu_e, ts_b, ts_e, name_b, name_e;
} line_match;

static size_t skip_digits(const char *s, size_t i, size_t n)
{
	while (i < n && is_digit((unsigned char)s[i]))
		i++;
	return i;
}

/* The tail of the pattern from the timestamp on: (\d+\.\d+):\s+(\S+):
 * Every step is forced except \S+, which backtracks to the last ':' of
 * the non-space run (greedy and leftmost-longest agree there). */
static int match_ts_tail(const char *s, size_t i, size_t n, line_match *m)
{
	size_t j = skip_digits(s, i, n);
	if (j == i || j >= n || s[j] != '.')
		return 0;
	size_t k = skip_digits(s, j + 1, n);
	if (k == j + 1 || k >= n || s[k] != ':')
		return 0;
	m->ts_b = i;
	m->ts_e = k;
	k++;
	size_t w = k;
	while (w < n && is_space((unsigned char)s[w]))
		w++;
	if (w == k)
		return 0;
	size_t run = w;
	while (run < n && !is_space((unsigned char)s[run]))
		run++;
	for (size_t c = run; c > w + 1; c--) {
		if (s[c - 1] == ':') {
			m->name_b = w;
			m->name_e = c - 1;
			m->end = c;
			return 1;
		}
	}
	return 0;
}

/* The whole pattern anchored at s[i] == '-' (formats.md §4.2). */
static int match_at(const char *s, size_t i, size_t n, line_match *m)
{
	size_t p = i + 1, q;
	m->start = i;
	q = skip_digits(s, p, n);
	if (q == p)
		return 0;
	m->pid_b = p;
	m->pid_e = q;
	p = q;
	while (q < n && is_space((unsigned char)s[q]))
		q++;
	if (q == p)
		return 0;
	if (q < n && s[q] == '(')
		q++;
	while (q < n && is_space((unsigned char)s[q]))
		q++;
	m->tgid_b = m->tgid_e = q;
	if (q < n && is_digit((unsigned char)s[q])) {
		m->tgid_e = q = skip_digits(s, q, n);
	} else {
		while (q < n && s[q] == '-')
			q++;
		m->tgid_e = q;
	}
	if (q < n && s[q] == ')')
		q++;
	if (q < n && is_space((unsigned char)s[q]))
		q++;
	if (q >= n || s[q] != '[')
		return 0;
	p = ++q;
	q = skip_digits(s, p, n);
	if (q == p || q >= n || s[q] != ']')
		return 0;
	m->cpu_b = p;
	m->cpu_e = q;
	q++;
	while (q < n && is_space((unsigned char)s[q]))
		q++;
	/* Optional irq flags: three of [a-zA-Z.] then one or two of
	 * [0-9a-f.]; a timestamp starts with a digit, so flags are tried
	 * first and both tail lengths are tried (longest first). */
	if (q + 3 < n && is_flag_head((unsigned char)s[q]) && is_flag_head((unsigned char)s[q + 1]) &&
	    is_flag_head((unsigned char)s[q + 2]) && is_flag_tail((unsigned char)s[q + 3])) {
		for (size_t tail = 2; tail >= 1; tail--) {
			size_t f = q + 3;
			if (tail == 2 && !(f + 1 < n && is_flag_tail((unsigned char)s[f + 1])))
				continue;
			f += tail;
			while (f < n && is_space((unsigned char)s[f]))
				f++;
			if (match_ts_tail(s, f, n, m))
				return 1;
		}
	}
	return match_ts_tail(s, q, n, m);
}

/* Partial match, first occurrence (the regex search of the reference):
 * the pattern starts at a '-'. */
static int match_line(const char *s, size_t n, line_match *m)
{
	for (const char *p = s; (p = memchr(p, '-', n - (size_t)(p - s))) != NULL; p++)
		if (match_at(s, (size_t)(p - s), n, m))
			return 1;
	return 0;
}

/* base::StringToUInt32: strtoul over the whole (non-empty) text, the
 * result cast to 32 bits. */
static int parse_u32(const char *s, uint32_t *out)
{
	char *end;
	if (!*s)
		return 0;
	errno = 0;
	unsigned long v = strtoul(s, &end, 10);
	if (*end)
		return 0;
	*out = (uint32_t)v;
	return 1;
}

static int parse_i64(const char *s, int64_t *out)
{
	char *end;
	if (!*s)
		return 0;
	long long v = strtoll(s, &end, 10);
	if (*end)
		return 0;
	*out = (int64_t)v;
	return 1;
}

/* A run of decimal digits (pid, cpu, tgid) as parse_u32 reads it: fast
 * for up to 19 digits (no overflow is possible), else strtoul. */
static uint32_t digits_u32(const char *s, size_t n)
{
	if (n == 0 || n > 19) {
		uint32_t u = 0;
		parse_u32(s, &u);
		return u;
	}
	uint64_t v = 0;
	for (size_t i = 0; i < n; i++)
		v = v * 10 + (uint64_t)(s[i] - '0');
	return (uint32_t)v;
}

/* strtod of the §4.2 timestamp text (\d+\.\d+, ended by ':'). When all
 * its digits fit 2^53 and the fraction has at most 22 digits, both the
 * digits and the power of ten are exact doubles, so one division gives the
 * correctly rounded value, which is what strtod returns; else strtod. */
static double ts_seconds(const char *s, size_t n)
{
	static const double pow10[23] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
					 1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
					 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
	uint64_t m = 0;
	size_t frac = 0;
	int seen_dot = 0;
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '.') {
			seen_dot = 1;
			continue;
		}
		if (m > (UINT64_C(1) << 53) / 10)
			return strtod(s, NULL);
		m = m * 10 + (uint64_t)(s[i] - '0');
		frac += seen_dot;
	}
	if (m > (UINT64_C(1) << 53) || frac > 22)
		return strtod(s, NULL);
	return (double)m / pow10[frac];
}

/* Trim b..e in place (NUL at the new end); *len gets the trimmed length
 * when len is not NULL. */
static char *trim(char *b, char *e, size_t *len)
{
	while (b < e && is_space((unsigned char)*b))
		b++;
	while (e > b && is_space((unsigned char)e[-1]))
		e--;
	*e = '\0';
	if (len)
		*len = (size_t)(e - b);
	return b;
}

/* One '|'-separated field of a print payload: s[*off..] up to '|' or the
 * end; the separator is consumed (the offset may pass len, as in the
 * reference's field reader). The field is NUL-terminated in place. */
static char *next_field(char *s, size_t len, size_t *off)
{
	size_t b = *off < len ? *off : len, e = b;
	while (e < len && s[e] != '|')
		e++;
	*off = e + 1;
	s[e] = '\0';
	return s + b;
}

static const char EMPTY_SLICE_NAME[] = "[empty slice name]";

/* formats.md §4.4. The payload string is modified in place. */
static systrace_line_result parse_print(char *str, systrace_event *ev)
{
	size_t len = strlen(str), off = 0;
	while (len > 0 && str[len - 1] == '\n')
		len--;
	str[len] = '\0';

	char *phase = next_field(str, len, &off);
	if (!*phase)
		return SYSTRACE_LINE_BAD_PRINT;
	/* The payload is gone once fields are cut; keep the clock-sync test
	 * answerable first. */
	int is_clock_sync = strncmp(str, "trace_event_clock_sync:", 23) == 0;
	ev->print_phase = phase[0];
	char *tgid = off <= len ? next_field(str, len, &off) : str + len;
	ev->print_has_tgid = parse_u32(tgid, &ev->print_tgid);
	if (!ev->print_has_tgid)
		ev->print_tgid = 0;
	int has_tgid = ev->print_has_tgid;
	char *f2, *f3, *f4;
#define FIELD() (off <= len ? next_field(str, len, &off) : str + len)
	switch (ev->print_phase) {
	case 'B':
		if (!has_tgid)
			return SYSTRACE_LINE_BAD_PRINT;
		/* The name is the rest of the line and may contain '|'. */
		ev->print_name = off < len ? str + off : EMPTY_SLICE_NAME;
		return SYSTRACE_LINE_EVENT;
	case 'E':
		return SYSTRACE_LINE_EVENT;
	case 'S':
	case 'F':
		f2 = FIELD();
		f3 = FIELD();
		if (!has_tgid || !*f2 || !parse_i64(f3, &ev->print_value))
			return SYSTRACE_LINE_BAD_PRINT;
		ev->print_name = f2;
		return SYSTRACE_LINE_EVENT;
	case 'I':
		f2 = FIELD();
		if (!has_tgid || !*f2)
			return SYSTRACE_LINE_BAD_PRINT;
		ev->print_name = f2;
		return SYSTRACE_LINE_EVENT;
	case 'N':
		f2 = FIELD();
		f3 = FIELD();
		if (!has_tgid || !*f2 || !*f3)
			return SYSTRACE_LINE_BAD_PRINT;
		ev->print_track = f2;
		ev->print_name = f3;
		return SYSTRACE_LINE_EVENT;
	case 'C':
		f2 = FIELD();
		f3 = FIELD();
		if (!has_tgid || !*f2 || !parse_i64(f3, &ev->print_value))
			return SYSTRACE_LINE_BAD_PRINT;
		ev->print_name = f2;
		return SYSTRACE_LINE_EVENT;
	case 'G':
		f2 = FIELD();
		f3 = FIELD();
		f4 = FIELD();
		if (!has_tgid || !*f2 || !*f3 || !parse_i64(f4, &ev->print_value))
			return SYSTRACE_LINE_BAD_PRINT;
		ev->print_track = f2;
		ev->print_name = f3;
		return SYSTRACE_LINE_EVENT;
	case 'H':
		/* H|tgid|track|[name|]cookie: the cookie is the last of the two. */
		f2 = FIELD();
		f3 = FIELD();
		f4 = FIELD();
		if (!has_tgid || !*f2 || !parse_i64(*f4 ? f4 : f3, &ev->print_value))
			return SYSTRACE_LINE_BAD_PRINT;
		ev->print_track = f2;
		return SYSTRACE_LINE_EVENT;
	default:
		ev->print_phase = 0;
		return is_clock_sync ? SYSTRACE_LINE_SKIP : SYSTRACE_LINE_BAD_PRINT;
	}
#undef FIELD
}

systrace_line_result systrace_parse_print(char *payload, systrace_event *ev)
{
	memset(ev, 0, sizeof *ev);
	ev->task = ev->event_name = ev->args = ev->print_name = ev->print_track = "";
	ev->tgid = -1;
	return parse_print(payload, ev);
}

/* The print fields are cut out of a copy of the payload, so that `args`
 * stays the payload as written (the exporter writes it back as the print
 * event's buf). One copy per thread, valid until the next line is parsed
 * there, like the event. */
typedef struct print_buf {
	char *data;
	size_t cap;
} print_buf;

/* A FUSE worker thread that exits frees its copy. */
static void print_buf_free(void *p)
{
	print_buf *b = p;
	free(b->data);
	free(b);
}

static tm_per_thread print_bufs = TM_PER_THREAD(print_buf, print_buf_free);

static char *print_copy(const char *args, size_t len)
{
	print_buf *b = tm_per_thread_get(&print_bufs);
	size_t n = len + 1;
	if (n > b->cap) {
		free(b->data);
		b->cap = n < 256 ? 256 : n;
		b->data = tm_xmalloc(b->cap);
	}
	memcpy(b->data, args, n);
	return b->data;
}

systrace_line_result systrace_parse_line(char *line, size_t len, systrace_event *ev)
{
	systrace_event_empty(ev); /* the summary is written below */
	if (len == 0 || line[0] == '#')
		return SYSTRACE_LINE_SKIP;
	/* The reference matches the line as a C string: it ends at a NUL. */
	size_t n = strnlen(line, len);
	line_match m;
	if (!match_line(line, n, &m))
		return SYSTRACE_LINE_NO_MATCH;

	/* §4.2: (int64)(strtod(text) * 1e9), truncated toward zero. A value
	 * beyond int64 cannot be a timestamp (and the cast would be UB). The
	 * check comes before the line is cut up, so a NO_MATCH line is intact
	 * (JSON quotes it in its error). strtod stops at the ':'. */
	double ns = ts_seconds(line + m.ts_b, m.ts_e - m.ts_b) * 1e9;
	if (!(ns < 9.2233720368547758e18))
		return SYSTRACE_LINE_NO_MATCH;
	ev->ts = (int64_t)ns;

	line[m.pid_e] = line[m.cpu_e] = line[m.ts_e] = line[m.name_e] = '\0';
	/* Digit runs: strtoul cannot fail on them (it saturates, like the
	 * reference's cast). */
	ev->pid = digits_u32(line + m.pid_b, m.pid_e - m.pid_b);
	ev->cpu = digits_u32(line + m.cpu_b, m.cpu_e - m.cpu_b);
	if (ev->cpu >= SYSTRACE_MAX_CPUS)
		return SYSTRACE_LINE_BAD_CPU;
	if (m.tgid_e > m.tgid_b && is_digit((unsigned char)line[m.tgid_b])) {
		char save = line[m.tgid_e];
		line[m.tgid_e] = '\0';
		ev->tgid = digits_u32(line + m.tgid_b, m.tgid_e - m.tgid_b);
		line[m.tgid_e] = save;
	}
	ev->event_name = line + m.name_b;
	size_t name_len = m.name_e - m.name_b;
	size_t args_len;
	ev->args = trim(line + m.end, line + n, &args_len);
	line[m.start] = '\0';
	ev->task = trim(line, line + m.start, NULL);
	/* snprintf "%s", without the printf machinery (the name and the
	 * args hold no NUL: the line was cut at its first) */
	size_t an = args_len;
	if (an > sizeof ev->args_summary - 1)
		an = sizeof ev->args_summary - 1;
	memcpy(ev->args_summary, ev->args, an);
	ev->args_summary[an] = '\0';

	/* The summary keeps the payload before it is cut up. */
	if (systrace_is_print_event(ev->event_name, name_len))
		return parse_print(print_copy(ev->args, args_len), ev);
	return SYSTRACE_LINE_EVENT;
}

/* The token at *p (past spaces), its key kb..ke and value vb..ve; *p
 * moves past it. 0 when no token is left. */
static int next_arg(const char **p, const char **kb, const char **ke, const char **vb, const char **ve)
{
	const char *s = *p;
	while (*s == ' ')
		s++;
	if (!*s)
		return 0;
	const char *e = strchr(s, ' ');
	if (!e)
		e = s + strlen(s);
	const char *eq = memchr(s, '=', (size_t)(e - s));
	if (!eq) {
		/* §4.3: a bare token is stored under "name". */
		*kb = "name";
		*ke = *kb + 4;
		*vb = s;
		*ve = e;
	} else {
		/* The reference splits the token at every '=' and skips empty
		 * pieces: the first piece is the key, the last the value. */
		const char *k = s;
		while (k < e && *k == '=')
			k++;
		const char *kend = memchr(k, '=', (size_t)(e - k));
		if (!kend)
			kend = e;
		const char *v = e;
		while (v > kend && v[-1] == '=')
			v--;
		*ve = v;
		while (v > kend && v[-1] != '=')
			v--;
		*kb = k;
		*ke = kend;
		*vb = v;
	}
	*p = e;
	return 1;
}

static void copy_value(const char *vb, const char *ve, char *out, size_t n)
{
	if (!n)
		return;
	size_t vl = (size_t)(ve - vb);
	if (vl >= n)
		vl = n - 1;
	memcpy(out, vb, vl);
	out[vl] = '\0';
}

int systrace_arg(const char *args, const char *key, char *out, size_t n)
{
	size_t klen = strlen(key);
	const char *p = args, *kb, *ke, *vb, *ve;
	while (next_arg(&p, &kb, &ke, &vb, &ve)) {
		if ((size_t)(ke - kb) == klen && memcmp(kb, key, klen) == 0) {
			copy_value(vb, ve, out, n);
			return 1;
		}
	}
	return 0;
}

void systrace_args_init(systrace_args *a, const char *args)
{
	a->text = args;
	a->split = 0;
}

void systrace_args_split(systrace_args *a)
{
	if (a->split)
		return;
	const char *p = a->text, *kb, *ke, *vb, *ve;
	a->split = 1;
	a->n = 0;
	a->more = 0;
	while (next_arg(&p, &kb, &ke, &vb, &ve)) {
		if (a->n == SYSTRACE_ARGS_KEPT) {
			a->more = 1;
			break;
		}
		a->kv[a->n].k = kb;
		a->kv[a->n].kn = (size_t)(ke - kb);
		a->kv[a->n].v = vb;
		a->kv[a->n].vn = (size_t)(ve - vb);
		a->n++;
	}
}

int systrace_args_get_n(systrace_args *a, const char *key, size_t klen, char *out, size_t n)
{
	systrace_args_split(a);
	for (size_t i = 0; i < a->n; i++) {
		/* most keys differ in length or in their first or last byte
		 * (prev_comm and prev_prio, next_pid and prev_pid) */
		if (a->kv[i].kn == klen &&
		    (!klen || (a->kv[i].k[0] == key[0] && a->kv[i].k[klen - 1] == key[klen - 1])) &&
		    memcmp(a->kv[i].k, key, klen) == 0) {
			copy_value(a->kv[i].v, a->kv[i].v + a->kv[i].vn, out, n);
			return 1;
		}
	}
	/* not among the kept tokens, so the first match is past them */
	return a->more && systrace_arg(a->text, key, out, n);
}

/* ---- the streaming reader (§4.1) ------------------------------------- */

typedef enum read_state {
	ST_HTML_BEFORE,   /* HTML: waiting for a trace-data script section */
	ST_DATA_SECTION,  /* inside a section, before its content is known */
	ST_SYSTRACE,      /* systrace text lines */
	ST_OTHER_SECTION, /* PROCESS DUMP / CGROUP DUMP: skipped to </script> */
	ST_END,
} read_state;

typedef struct reader {
	read_state state;
	systrace_event_fn fn;
	void *ctx;
	systrace_stats *st;
	int skipping_long_line;
} reader;

static const char TRACE_DATA_SECTION[] = "<script class=\"trace-data\" type=\"application/text\">";

static int line_has_n(const char *line, size_t len, const char *needle, size_t nl)
{
	/* memmem, but skipping to the needle's first byte with memchr: most
	 * lines hold no '<' at all. */
	const char *p = line, *e = line + len;
	while ((size_t)(e - p) >= nl && (p = memchr(p, needle[0], (size_t)(e - p) - nl + 1)) != NULL) {
		if (memcmp(p, needle, nl) == 0)
			return 1;
		p++;
	}
	return 0;
}
/* (a literal needle: its length is known at compile time) */
#define line_has(line, len, needle) line_has_n((line), (len), (needle), sizeof(needle) - 1)

static int line_starts(const char *line, size_t len, const char *prefix)
{
	size_t pl = strlen(prefix);
	return len >= pl && memcmp(line, prefix, pl) == 0;
}

static int handle_line(reader *r, char *line, size_t len, tm_error *err)
{
	switch (r->state) {
	case ST_HTML_BEFORE:
		if (line_has(line, len, TRACE_DATA_SECTION))
			r->state = ST_DATA_SECTION;
		return 0;
	case ST_DATA_SECTION:
		if (line_starts(line, len, "#") && line_has(line, len, "TASK-PID"))
			r->state = ST_SYSTRACE;
		else if (line_starts(line, len, "PROCESS DUMP") || line_starts(line, len, "CGROUP DUMP"))
			r->state = ST_OTHER_SECTION;
		else if (line_has(line, len, "</script>"))
			r->state = ST_HTML_BEFORE;
		return 0;
	case ST_OTHER_SECTION:
		if (line_has(line, len, "</script>"))
			r->state = ST_HTML_BEFORE;
		return 0;
	case ST_END:
		return 0;
	case ST_SYSTRACE:
		break;
	}
	/* §4.1: once systrace text has started, </script> ends the parse
	 * (the reference applies this to plain text too). */
	if (line_has(line, len, "</script>")) {
		r->state = ST_END;
		return 0;
	}
	systrace_event ev;
	switch (systrace_parse_line(line, len, &ev)) {
	case SYSTRACE_LINE_EVENT:
		return r->fn(r->ctx, &ev, err) ? -1 : 0;
	case SYSTRACE_LINE_SKIP:
		return 0;
	case SYSTRACE_LINE_NO_MATCH:
	case SYSTRACE_LINE_BAD_CPU:
		r->st->systrace_parse_failure++;
		return 0;
	case SYSTRACE_LINE_BAD_PRINT:
		r->st->systrace_parse_failure++;
		ev.bad_print = 1;
		ev.print_phase = 0;
		return r->fn(r->ctx, &ev, err) ? -1 : 0;
	}
	return 0;
}

/* Offset just past a TRACE: marker in the first 128 bytes, else 0. */
static size_t trace_marker_end(const tm_buf *buf)
{
	size_t win = buf->len < TRACE_MARKER_WINDOW ? buf->len : TRACE_MARKER_WINDOW;
	const char *mk = memmem(buf->data, win, "TRACE:\n", 7);
	return mk ? (size_t)(mk - buf->data) + 7 : 0;
}

/* Enough data to pre-process: the marker window, the line after it and
 * the byte after that line (the HTML test looks at it). */
static int preprocess_ready(const tm_buf *buf)
{
	if (buf->len < TRACE_MARKER_WINDOW)
		return 0;
	size_t drop = trace_marker_end(buf);
	const char *nl = memchr(buf->data + drop, '\n', buf->len - drop);
	return nl && (size_t)(nl - buf->data) + 1 < buf->len;
}

/* §4.1 steps 1-3, applied once to the start of the data. Drops the
 * prefix from buf and returns the initial state. */
static read_state preprocess(tm_buf *buf)
{
	size_t drop = trace_marker_end(buf);
	const char *nl = memchr(buf->data + drop, '\n', buf->len - drop);
	if (nl && line_starts(buf->data + drop, (size_t)(nl - buf->data) - drop, "cpus=")) {
		const char *p = buf->data + drop + 5;
		while (p < nl && is_digit((unsigned char)*p))
			p++;
		if (p == nl)
			drop = (size_t)(nl - buf->data) + 1;
	}
	memmove(buf->data, buf->data + drop, buf->len - drop);
	buf->len -= drop;
	buf->data[buf->len] = '\0';
	return buf->len > 0 && buf->data[0] == '<' ? ST_HTML_BEFORE : ST_SYSTRACE;
}

int systrace_read_chunked(tm_cursor *c, size_t chunk, systrace_event_fn fn, void *ctx,
			  systrace_stats *st, tm_error *err)
{
	reader r = {.state = ST_SYSTRACE, .fn = fn, .ctx = ctx, .st = st};
	tm_buf buf = {0};
	int started = 0, eof = 0, rc = 0;
	size_t pos = 0; /* start of the unparsed part of buf */
	if (!chunk)
		chunk = 1;

	while (!eof && r.state != ST_END) {
		/* Read straight into the line buffer's spare room: no bounce
		 * buffer to copy from and fault in for every file. */
		tm_grow((void **)&buf.data, &buf.cap, buf.len + chunk + 1, 1);
		ssize_t got = tm_cursor_read(c, buf.data + buf.len, chunk, err);
		if (got < 0) {
			rc = -1;
			break;
		}
		if (got == 0)
			eof = 1;
		buf.len += (size_t)got;
		buf.data[buf.len] = '\0';
		if (!started) {
			/* Pre-processing needs the first 128 bytes and the first
			 * line, whatever the chunk size, but never more than one
			 * full chunk (the memory bound; a first line that long
			 * cannot be a `cpus=` header worth dropping). */
			if (!eof && buf.len < SYSTRACE_CHUNK && !preprocess_ready(&buf))
				continue;
			if (buf.len == 0)
				break;
			r.state = preprocess(&buf);
			started = 1;
		}
		while (pos < buf.len) {
			char *nl = memchr(buf.data + pos, '\n', buf.len - pos);
			if (!nl)
				break;
			size_t len = (size_t)(nl - (buf.data + pos));
			*nl = '\0';
			if (r.skipping_long_line)
				r.skipping_long_line = 0;
			else if (handle_line(&r, buf.data + pos, len, err) < 0) {
				rc = -1;
				break;
			}
			pos += len + 1;
			if (r.state == ST_END)
				break;
		}
		if (rc < 0)
			break;
		/* Keep only the incomplete last line. */
		if (pos > 0) {
			memmove(buf.data, buf.data + pos, buf.len - pos);
			buf.len -= pos;
			buf.data[buf.len] = '\0';
			pos = 0;
		}
		if (buf.len > SYSTRACE_LINE_MAX) {
			if (!r.skipping_long_line && r.state == ST_SYSTRACE)
				st->systrace_parse_failure++;
			r.skipping_long_line = 1;
			buf.len = 0;
		}
	}
	/* §4.1: a last line without '\n' is not parsed. */
	tm_buf_free(&buf);
	return rc;
}

int systrace_read(tm_cursor *c, systrace_event_fn fn, void *ctx, systrace_stats *st, tm_error *err)
{
	return systrace_read_chunked(c, SYSTRACE_CHUNK, fn, ctx, st, err);
}

/* ---- read ahead (core/util/ahead.h) --------------------------------------------- */

enum {
	LINE_JSON_EMBEDDED = 1,
	LINE_BAD_PRINT = 2,
	LINE_PRINT_HAS_TGID = 4,
	LINE_SUMMARY_OF_ARGS = 8, /* the summary is the args' start, as lines give it */
	LINE_PRINT = 16,          /* the print fields follow */
};

void systrace_event_put(tm_buf *b, const systrace_event *ev)
{
	size_t args_len = strlen(ev->args);
	uint32_t summary_len = (uint32_t)strlen(ev->args_summary);
	int of_args = summary_len <= args_len && memcmp(ev->args, ev->args_summary, summary_len) == 0;

	int print = ev->print_phase || ev->print_has_tgid || ev->print_tgid || ev->print_value ||
		    ev->print_name[0] || ev->print_track[0];
	uint8_t bits = (uint8_t)((ev->json_embedded ? LINE_JSON_EMBEDDED : 0) | (ev->bad_print ? LINE_BAD_PRINT : 0) |
				 (ev->print_has_tgid ? LINE_PRINT_HAS_TGID : 0) |
				 (of_args ? LINE_SUMMARY_OF_ARGS : 0) | (print ? LINE_PRINT : 0));
	struct {
		int64_t ts, pid, tgid;
		uint32_t cpu, summary_len;
		uint8_t bits;
		char print_phase;
	} f = {ev->ts, ev->pid, ev->tgid, ev->cpu, summary_len, bits, ev->print_phase};
	tm_buf_put(b, &f, sizeof f);
	tm_log_put_s(b, ev->task, strlen(ev->task));
	tm_log_put_s(b, ev->event_name, strlen(ev->event_name));
	tm_log_put_s(b, ev->args, args_len);
	if (!of_args)
		tm_log_put_s(b, ev->args_summary, summary_len);
	if (print) {
		tm_buf_put(b, &ev->print_tgid, sizeof ev->print_tgid);
		tm_buf_put(b, &ev->print_value, sizeof ev->print_value);
		tm_log_put_s(b, ev->print_name, strlen(ev->print_name));
		tm_log_put_s(b, ev->print_track, strlen(ev->print_track));
	}
}

void systrace_event_get(const char **p, systrace_event *ev)
{
	struct {
		int64_t ts, pid, tgid;
		uint32_t cpu, summary_len;
		uint8_t bits;
		char print_phase;
	} f;
	tm_log_get(p, &f, sizeof f);
	size_t n;
	memset(ev, 0, offsetof(systrace_event, args_summary));
	ev->ts = f.ts;
	ev->pid = f.pid;
	ev->tgid = f.tgid;
	ev->cpu = f.cpu;
	ev->task = tm_log_get_s(p, &n);
	ev->event_name = tm_log_get_s(p, &n);
	ev->args = tm_log_get_s(p, &n);
	const char *summary = f.bits & LINE_SUMMARY_OF_ARGS ? ev->args : tm_log_get_s(p, &n);
	memcpy(ev->args_summary, summary, f.summary_len);
	ev->args_summary[f.summary_len] = '\0';
	ev->json_embedded = (f.bits & LINE_JSON_EMBEDDED) != 0;
	ev->bad_print = (f.bits & LINE_BAD_PRINT) != 0;
	ev->print_has_tgid = (f.bits & LINE_PRINT_HAS_TGID) != 0;
	ev->print_phase = f.print_phase;
	ev->print_name = ev->print_track = "";
	ev->print_tgid = 0;
	ev->print_value = 0;
	if (f.bits & LINE_PRINT) {
		tm_log_get(p, &ev->print_tgid, sizeof ev->print_tgid);
		tm_log_get(p, &ev->print_value, sizeof ev->print_value);
		ev->print_name = tm_log_get_s(p, &n);
		ev->print_track = tm_log_get_s(p, &n);
	}
}

enum { LOG_LINE = 1, LOG_STATS, LOG_TIMES, LOG_END };

/* systrace_event_empty zeroes the fields after the summary from
 * json_embedded on: it must be the next field. */
_Static_assert(offsetof(systrace_event, json_embedded) ==
		       (offsetof(systrace_event, args_summary) + sizeof(((systrace_event *)0)->args_summary) +
			_Alignof(int) - 1) / _Alignof(int) * _Alignof(int),
	       "json_embedded follows the summary");

void systrace_event_empty(systrace_event *ev)
{
	/* all but the summary's bytes (a fifth of the struct): zeroing them
	 * was most of unpacking a record on the systrace bench's replay */
	memset(ev, 0, offsetof(systrace_event, args_summary));
	ev->args_summary[0] = '\0';
	memset(&ev->json_embedded, 0, sizeof *ev - offsetof(systrace_event, json_embedded));
	ev->tgid = -1;
	ev->task = ev->event_name = ev->args = ev->print_name = ev->print_track = "";
}

/* A line of a times-only log: what the scan alone reads of it. */
typedef struct line_time {
	int64_t ts;
	int64_t bad_print;
} line_time;

typedef struct log_ctx {
	tm_buf *b;
	systrace_stats st, logged;
	size_t times_at; /* the open LOG_TIMES entry's head, 0 when none */
} log_ctx;

/* The counts so far, when they changed since the last entry. */
static void log_stats(log_ctx *lc)
{
	if (lc->st.systrace_parse_failure == lc->logged.systrace_parse_failure)
		return;
	tm_log_run_close(lc->b, &lc->times_at);
	size_t at = tm_log_begin(lc->b, LOG_STATS, 0, 0, 0);
	tm_buf_put(lc->b, &lc->st, sizeof lc->st);
	tm_log_end(lc->b, at);
	lc->logged = lc->st;
}

static int log_line(void *ctx, const systrace_event *ev, tm_error *err)
{
	(void)err;
	log_ctx *lc = ctx;
	log_stats(lc);
	size_t at = tm_log_begin(lc->b, LOG_LINE, 0, 0, 0);
	systrace_event_put(lc->b, ev);
	tm_log_end(lc->b, at);
	return 0;
}

/* Times only: runs of lines in one entry, 16 bytes a line. A whole line
 * costs about as much to hand to the other core as to parse; its time
 * costs an eighth of that. */
static int log_time(void *ctx, const systrace_event *ev, tm_error *err)
{
	(void)err;
	log_ctx *lc = ctx;
	log_stats(lc);
	tm_log_run_open(lc->b, &lc->times_at, LOG_TIMES);
	line_time t = {ev->ts, ev->bad_print != 0};
	tm_buf_put(lc->b, &t, sizeof t);
	return 0;
}

void systrace_log(tm_cursor *c, int times_only, tm_buf *log)
{
	log_ctx lc = {log, {0}, {0}, 0};
	tm_error err;
	tm_err_clear(&err);
	int rc = systrace_read(c, times_only ? log_time : log_line, &lc, &lc.st, &err);
	log_stats(&lc);
	tm_log_run_close(lc.b, &lc.times_at);
	size_t at = tm_log_begin(log, LOG_END, rc != 0, 0, 0);
	if (rc)
		tm_buf_put(log, &err, sizeof err);
	tm_log_end(log, at);
}

int systrace_replay(tm_buf *log, size_t from, systrace_event_fn fn, void *ctx, systrace_stats *st,
		    tm_error *err)
{
	systrace_stats start = *st;
	for (size_t at = from; at + sizeof(tm_log_head) <= log->len;) {
		const char *p = log->data + at;
		tm_log_head h;
		tm_log_get(&p, &h, sizeof h);
		if (h.tag == LOG_LINE) {
			systrace_event ev;
			systrace_event_get(&p, &ev);
			if (fn(ctx, &ev, err))
				return -1;
		} else if (h.tag == LOG_TIMES) {
			systrace_event ev;
			systrace_event_empty(&ev);
			for (const char *e = log->data + at + h.next; p + sizeof(line_time) <= e;) {
				line_time t;
				tm_log_get(&p, &t, sizeof t);
				ev.ts = t.ts;
				ev.bad_print = (int)t.bad_print;
				if (fn(ctx, &ev, err))
					return -1;
			}
		} else if (h.tag == LOG_STATS) {
			systrace_stats d;
			tm_log_get(&p, &d, sizeof d);
			st->systrace_parse_failure = start.systrace_parse_failure + d.systrace_parse_failure;
		} else {
			if (h.a)
				tm_log_get(&p, err, sizeof *err);
			return h.a ? -1 : 0;
		}
		at += h.next;
	}
	return tm_err(err, TM_EIO, "a file read ahead left no outcome");
}

/* ---- argument values ------------------------------------------------------ */

/* A whole decimal string in [lo, hi]: up to nine digits straight, else
 * strtoll, which for these ranges accepts and refuses what strtoull
 * (StringToUInt32's reader) does. */
static int whole_int(const char *s, long long lo, long long hi, long long *out)
{
	int64_t d = systrace_few_digits(s);
	if (d >= 0) {
		*out = d;
		return 1;
	}
	if (!*s)
		return 0;
	char *end;
	errno = 0;
	long long v = strtoll(s, &end, 10);
	if (*end || errno || v < lo || v > hi)
		return 0;
	*out = v;
	return 1;
}

int systrace_to_u32(const char *s, uint32_t *out)
{
	long long v;
	if (!whole_int(s, 0, UINT32_MAX, &v))
		return 0;
	*out = (uint32_t)v;
	return 1;
}

int systrace_to_i32(const char *s, int32_t *out)
{
	long long v;
	if (!whole_int(s, INT32_MIN, INT32_MAX, &v))
		return 0;
	*out = (int32_t)v;
	return 1;
}

int systrace_to_double(const char *s, double *out)
{
	if (!*s)
		return 0;
	char *end;
	*out = strtod(s, &end);
	return *end == '\0';
}
