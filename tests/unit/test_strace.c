/* tests/unit/test_strace.c - strace lines as the reference's
 * ParseStraceLine reads them (core/formats/strace/strace.c). */
#include "tt.h"

#include "formats/strace/strace.h"

static char g_piece[256];

static const char *piece(const char *p, size_t n)
{
	snprintf(g_piece, sizeof g_piece, "%.*s", (int)n, p);
	return g_piece;
}

/* Each kind of call line, with its pieces. */
static void strace_calls(void)
{
	strace_line l;
	int tod;
	const char *a = "1234  1700000000.000100 openat(AT_FDCWD, \"/etc/hosts\", O_RDONLY) = 3";
	CHECK(strace_parse_line(a, strlen(a), &l, &tod));
	CHECK_INT(l.has_pid, 1);
	CHECK_INT(l.pid, 1234);
	CHECK_INT(l.epoch_ns, INT64_C(1700000000000100000));
	CHECK_INT(l.kind, STRACE_COMPLETE);
	CHECK_STR(piece(l.syscall, l.syscall_n), "openat");
	CHECK_STR(piece(l.args, l.args_n), "AT_FDCWD, \"/etc/hosts\", O_RDONLY");
	CHECK_INT(l.has_ret, 1);
	CHECK_STR(piece(l.ret, l.ret_n), "3");

	const char *b = "7 1700000000.5 read(3,  <unfinished ...>";
	CHECK(strace_parse_line(b, strlen(b), &l, &tod));
	CHECK_INT(l.kind, STRACE_UNFINISHED);
	CHECK_INT(l.epoch_ns, INT64_C(1700000000000005000)); /* the digits are microseconds */
	CHECK_STR(piece(l.args, l.args_n), "3");              /* trailing commas dropped */
	CHECK_INT(l.has_ret, 0);

	const char *c = "7 1700000000.000300 <... read resumed>\"x)y\", 4096) = 1";
	CHECK(strace_parse_line(c, strlen(c), &l, &tod));
	CHECK_INT(l.kind, STRACE_RESUMED);
	CHECK_STR(piece(l.syscall, l.syscall_n), "read");
	CHECK_STR(piece(l.args, l.args_n), "\"x)y\", 4096");
	CHECK_STR(piece(l.ret, l.ret_n), "1");

	const char *d = "7 1700000000 <... futex resumed>, 0x2 <unfinished ...>";
	CHECK(strace_parse_line(d, strlen(d), &l, &tod));
	CHECK_INT(l.kind, STRACE_RESUMED_THEN_UNFINISHED);
	CHECK_INT(l.epoch_ns, INT64_C(1700000000000000000));
	CHECK_STR(piece(l.args, l.args_n), ", 0x2");

	/* no args left: "= 3" after the resumption's ')' */
	const char *e = "7 1700000000.1 <... close resumed>) = 0";
	CHECK(strace_parse_line(e, strlen(e), &l, &tod));
	CHECK_INT(l.args_n, 0);
	CHECK_STR(piece(l.ret, l.ret_n), "0");

	/* the return value's own parentheses; a ')' in a string that no '='
	 * follows; the '=' padded with spaces (and an IsSpace of '\v') */
	const char *f = "7 1.0 access(\"/x) y\", F_OK)  \v= -1 ENOENT (No such file or directory)";
	CHECK(strace_parse_line(f, strlen(f), &l, &tod));
	CHECK_STR(piece(l.args, l.args_n), "\"/x) y\", F_OK");
	CHECK_STR(piece(l.ret, l.ret_n), "-1 ENOENT (No such file or directory)");

	/* "=" and nothing: an empty return value, which still counts */
	const char *g = "7 1.0 brk(NULL) =";
	CHECK(strace_parse_line(g, strlen(g), &l, &tod));
	CHECK_INT(l.has_ret, 1);
	CHECK_INT(l.ret_n, 0);

	/* ten digits are the time, not a pid */
	const char *h = "1700000000 getpid() = 5";
	CHECK(strace_parse_line(h, strlen(h), &l, &tod));
	CHECK_INT(l.has_pid, 0);
	CHECK_INT(l.epoch_ns, INT64_C(1700000000000000000));
}

/* Lines that are not calls, and which of them count as a time of day. */
static void strace_not_calls(void)
{
	struct {
		const char *line;
		int tod;
	} cases[] = {
		{"", 0},
		{"   ", 0},
		{"--- SIGCHLD {si_signo=SIGCHLD} ---", 0},
		{"+++ exited with 0 +++", 0},
		{"7 1700000000.0 --- SIGCHLD ---", 0},   /* no '(' */
		{"7 12:00:00.000100 getpid() = 7", 1},   /* -tt */
		{"12:00:00 getpid() = 7", 1},            /* -t, no pid */
		{"7 1700000000.1234567 getpid() = 7", 0}, /* over 999999 us */
		{"7 -1.0 getpid() = 7", 0},
		{"7 9223372037.0 getpid() = 7", 0},      /* seconds * 1e9 past int64 */
		{"7 .5 getpid() = 7", 0},
		{"7 1.-5 getpid() = 7", 0},
		{"7 1.0 getpid()", 0},                   /* no '=' */
		{"7 1.0 <... read resumed) = 1", 0},     /* no " resumed>" */
		{"7\t1.0 getpid() = 7", 0},              /* a tab: one token */
		{"7 1.0", 0},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		strace_line l;
		int tod = -1;
		if (strace_parse_line(cases[i].line, strlen(cases[i].line), &l, &tod))
			TT_FAIL_("parsed as a call: \"%s\"", cases[i].line);
		if (tod != cases[i].tod)
			TT_FAIL_("\"%s\": time of day %d, expected %d", cases[i].line, tod, cases[i].tod);
	}
	/* '+' before the seconds or the microseconds is dropped, as by the
	 * reference's number parser */
	strace_line l;
	int tod;
	const char *p = "7 +1.+5 getpid() = 7";
	CHECK(strace_parse_line(p, strlen(p), &l, &tod));
	CHECK_INT(l.epoch_ns, INT64_C(1000005000));
}

int main(void)
{
	TT_RUN(strace_calls);
	TT_RUN(strace_not_calls);
	TT_DONE();
}
