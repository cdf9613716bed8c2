/* tests/unit/test_perf_text.c - `perf script` heads and frames as the
 * reference's perf_text importer reads them
 * (core/formats/perf_text/perf_text.c). */
#include "tt.h"

#include "formats/perf_text/perf_text.h"

static char g_piece[256];

static const char *piece(const char *p, size_t n)
{
	snprintf(g_piece, sizeof g_piece, "%.*s", (int)n, p);
	return g_piece;
}

static int head(const char *line, perf_text_head *h)
{
	return perf_text_parse_head(line, strlen(line), h);
}

/* The forms of a head perf and simpleperf write. */
static void heads(void)
{
	perf_text_head h = {0};
	CHECK(head("trace_processor 3962131 303057.417513:          1 cpu_atom/cycles/Pu:", &h));
	CHECK_STR(piece(h.comm.data, h.comm.len), "trace_processor");
	CHECK_INT(h.has_pid, 0);
	CHECK_INT(h.tid, 3962131);
	CHECK_INT(h.has_cpu, 0);
	/* the seconds as a double, times 1000 three times, truncated */
	CHECK_INT(h.ts, (int64_t)(303057.417513 * 1000 * 1000 * 1000));

	CHECK(head("my prog 100/101 [003] 1.000002: 1 cycles:", &h));
	CHECK_STR(piece(h.comm.data, h.comm.len), "my prog");
	CHECK_INT(h.has_pid, 1);
	CHECK_INT(h.pid, 100);
	CHECK_INT(h.tid, 101);
	CHECK_INT(h.has_cpu, 1);
	CHECK_INT(h.cpu, 3);

	/* simpleperf's tab after the command reads as spaces */
	CHECK(head("simpleperf\t  77 [1] 5.000000: 1 task-clock:", &h));
	CHECK_STR(piece(h.comm.data, h.comm.len), "simpleperf");
	CHECK_INT(h.tid, 77);

	/* a ':' in the command: the first ':' with a time before it counts */
	CHECK(head("a:b 400 1000.000005: 1 cpu-clock:", &h));
	CHECK_STR(piece(h.comm.data, h.comm.len), "a:b");
	/* no command, and no digits before the dot */
	CHECK(head("   500 .000006: 1 cpu-clock:", &h));
	CHECK_INT(h.comm.len, 0);
	CHECK_INT(h.tid, 500);
	CHECK_INT(h.ts, 6000);
	/* "-1" is strtoul's, cast to 32 bits */
	CHECK(head("x -1 2.000000:", &h));
	CHECK_INT(h.tid, UINT32_MAX);
	tm_buf_free(&h.comm);
}

static void not_heads(void)
{
	perf_text_head h = {0};
	CHECK(!head("perf 12 1.00000:", &h));       /* five digits */
	CHECK(!head("perf 12 1.000000", &h));       /* no ':' after the time */
	CHECK(!head("perf 12 1.0000001:", &h));     /* nanoseconds (perf script --ns) */
	CHECK(!head("[3] 1.000000:", &h));          /* a CPU and nothing before it */
	CHECK(!head("perf [x] 1.000000:", &h));     /* a CPU that is not a number */
	CHECK(!head("perf 1/2/3 1.000000:", &h));   /* three ids */
	CHECK(!head("perf 12a 1.000000:", &h));
	CHECK(!head("perf 12\t1.000000:", &h));     /* the time needs a space before it */
	CHECK(!head("perf 8 123:.000000:.000000:", &h)); /* a ':' between the space and the dot */
	CHECK(!head("a 1 2.000000 3.000000:", &h)); /* "2.000000" is no tid */
	CHECK(!head(" .000000:", &h));              /* nothing before the time */
	CHECK(!head("", &h));
	tm_buf_free(&h.comm);
}

/* Heads of many ':', worked out from the rule: the first ':' counts whose
 * text before it ends in " <digits>.<6 digits>" (only digits since the
 * last space) and holds a head before that time. */
static void many_colons(void)
{
	perf_text_head h = {0};
	/* no space before any of the first times: the command keeps them */
	CHECK(head("0.000000:0.000000:0.000000: x 12 3.000000: 1 cycles:", &h));
	CHECK_STR(piece(h.comm.data, h.comm.len), "0.000000:0.000000:0.000000: x");
	CHECK_INT(h.tid, 12);
	CHECK_INT(h.ts, 3000000000);
	/* ".000000:" after a ':' is no time, though a space and "8" come
	 * before: the text since the space must be digits up to the dot */
	CHECK(head("p 8 123:.000000:.000000: 7 2.000001:", &h));
	CHECK_STR(piece(h.comm.data, h.comm.len), "p 8 123:.000000:.000000:");
	CHECK_INT(h.tid, 7);
	CHECK_INT(h.ts, (int64_t)(2.000001 * 1000 * 1000 * 1000));
	/* two heads: the first ':' after one counts */
	CHECK(head("a 1 2.000000: b 3 4.000000:", &h));
	CHECK_STR(piece(h.comm.data, h.comm.len), "a");
	CHECK_INT(h.tid, 1);
	CHECK_INT(h.ts, 2000000000);
	/* a valid time whose head fails ("[1]" alone) does not stop the search */
	CHECK(head("[1] 2.000000: x 3 4.000000:", &h));
	CHECK_STR(piece(h.comm.data, h.comm.len), "[1] 2.000000: x");
	CHECK_INT(h.tid, 3);
	CHECK_INT(h.has_cpu, 0);
	CHECK_INT(h.ts, 4000000000);
	/* seven digits after the first dot: the second time counts */
	CHECK(head("a 1 2.0000001: b 3 [4] 4.000005:", &h));
	CHECK_STR(piece(h.comm.data, h.comm.len), "a 1 2.0000001: b");
	CHECK_INT(h.tid, 3);
	CHECK_INT(h.has_cpu, 1);
	CHECK_INT(h.cpu, 4);
	CHECK_INT(h.ts, (int64_t)(4.000005 * 1000 * 1000 * 1000));
	/* the shortest head: a tid and a time without digits before the dot */
	CHECK(head("1 .000000:", &h));
	CHECK_INT(h.comm.len, 0);
	CHECK_INT(h.tid, 1);
	CHECK_INT(h.ts, 0);
	/* the time's digits run far back to the space (70 zeros) */
	char line[2048];
	snprintf(line, sizeof line, "app 5 %070d1.000000:", 0);
	CHECK(head(line, &h));
	CHECK_STR(piece(h.comm.data, h.comm.len), "app");
	CHECK_INT(h.tid, 5);
	CHECK_INT(h.ts, 1000000000);
	/* a long run of digits, then ':' and many ".000000:": none is a time
	 * until " 9 1.000000:", though "x 8 " before them is a head's start */
	size_t n = (size_t)snprintf(line, sizeof line, "x 8 ");
	memset(line + n, '1', 100);
	n += 100;
	line[n++] = ':';
	for (int i = 0; i < 50; i++)
		n += (size_t)snprintf(line + n, sizeof line - n, ".000000:");
	size_t comm_n = n;
	n += (size_t)snprintf(line + n, sizeof line - n, " 9 1.000000: 1 cycles:");
	CHECK(head(line, &h));
	CHECK_INT(h.comm.len, comm_n);
	CHECK(memcmp(h.comm.data, line, comm_n) == 0);
	CHECK_INT(h.tid, 9);
	CHECK_INT(h.ts, 1000000000);
	tm_buf_free(&h.comm);
}

/* The audit's line of "0.000000:" and no space, with and without a head
 * after it. */
static void colons_without_space(void)
{
	perf_text_head h = {0};
	size_t k = 1000, n = 0;
	char *line = tm_xmalloc(k * 9 + 64);
	for (size_t i = 0; i < k; i++, n += 9)
		memcpy(line + n, "0.000000:", 9);
	CHECK(!perf_text_parse_head(line, n, &h));
	/* the pieces before " 5 " are the command, all 9000 bytes of it */
	size_t comm_n = n;
	n += (size_t)sprintf(line + n, " 5 6.000000:");
	CHECK(perf_text_parse_head(line, n, &h));
	CHECK_INT(h.comm.len, comm_n);
	CHECK(memcmp(h.comm.data, line, comm_n) == 0);
	CHECK_INT(h.tid, 5);
	CHECK_INT(h.ts, 6000000000);
	free(line);
	tm_buf_free(&h.comm);
}

static perf_text_frame_kind frame(const char *line, perf_text_frame *f)
{
	const char *t;
	size_t tn;
	return perf_text_parse_frame(line, strlen(line), f, &t, &tn);
}

static void frames(void)
{
	perf_text_frame f;
	CHECK_INT(frame("\tffffffff81c848fa strnlen_user+0x2a ([kernel.kallsyms])", &f), PERF_TEXT_FRAME);
	CHECK_STR(piece(f.symbol, f.symbol_n), "strnlen_user");
	CHECK_STR(piece(f.mapping, f.mapping_n), "[kernel.kallsyms]");
	/* the offset is cut at the last '+' */
	CHECK_INT(frame("  1 operator+(int)+0x4 (/lib/x.so)", &f), PERF_TEXT_FRAME);
	CHECK_STR(piece(f.symbol, f.symbol_n), "operator+(int)");
	CHECK_INT(frame("\t1 +0x5 ([unknown])", &f), PERF_TEXT_FRAME);
	CHECK_STR(piece(f.symbol, f.symbol_n), "");
	CHECK_INT(frame("\t7f58cf28cad7 [unknown] ([unknown])", &f), PERF_TEXT_FRAME);
	CHECK_STR(piece(f.symbol, f.symbol_n), "[unknown]");
	/* the mapping is the last "(...)", spaces and all */
	CHECK_INT(frame("\t1234 foo(int) (/opt/x y/lib.so)", &f), PERF_TEXT_FRAME);
	CHECK_STR(piece(f.symbol, f.symbol_n), "foo(int)");
	CHECK_STR(piece(f.mapping, f.mapping_n), "/opt/x y/lib.so");
	/* a '(' before the first space: the symbol runs to the line's end */
	CHECK_INT(frame("a(b c)", &f), PERF_TEXT_FRAME);
	CHECK_STR(piece(f.symbol, f.symbol_n), "c)");
	CHECK_STR(piece(f.mapping, f.mapping_n), "b c");

	CHECK_INT(frame("", &f), PERF_TEXT_END);
	CHECK_INT(frame(" \t ", &f), PERF_TEXT_END);
	CHECK_INT(frame("\tnospace", &f), PERF_TEXT_NO_SYMBOL);
	CHECK_INT(frame("\t1 sym (/lib/x.so) ", &f), PERF_TEXT_FRAME); /* trailing space trimmed */
	CHECK_INT(frame("\t1 sym (/lib/x.so)\r", &f), PERF_TEXT_NO_MAPPING); /* CR LF is not read */
	CHECK_INT(frame("\t1 sym", &f), PERF_TEXT_NO_MAPPING);
	const char *t;
	size_t tn;
	CHECK_INT(perf_text_parse_frame("\t garbage line \n", 16, &f, &t, &tn), PERF_TEXT_NO_MAPPING);
	CHECK_STR(piece(t, tn), "garbage line");
}

int main(void)
{
	TT_RUN(heads);
	TT_RUN(not_heads);
	TT_RUN(many_colons);
	TT_RUN(colons_without_space);
	TT_RUN(frames);
	TT_DONE();
}
