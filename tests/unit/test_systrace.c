/* tests/unit/test_systrace.c - the systrace reader against formats.md §4
 * and conformance.md S40 and the SYSTRACE fixture. */
#include <stdlib.h>
#include <unistd.h>

#include "../../core/container/archive.h"
#include "../../core/formats/systrace/systrace.h"
#include "tt.h"

#define MAXEV 16

typedef struct rec {
	int n;
	int bad; /* lines with a bad print payload: delivered flagged, kept apart */
	int64_t ts[MAXEV], pid[MAXEV], tgid[MAXEV], value[MAXEV];
	uint32_t cpu[MAXEV];
	char phase[MAXEV];
	char task[MAXEV][64], name[MAXEV][64], pname[MAXEV][64], track[MAXEV][64], args[MAXEV][256];
} rec;

static int collect(void *ctx, const systrace_event *ev, tm_error *err)
{
	(void)err;
	rec *r = ctx;
	if (ev->bad_print) {
		r->bad++;
		return 0;
	}
	if (r->n >= MAXEV)
		return 0;
	int i = r->n++;
	r->ts[i] = ev->ts;
	r->pid[i] = ev->pid;
	r->tgid[i] = ev->tgid;
	r->cpu[i] = ev->cpu;
	r->phase[i] = ev->print_phase;
	r->value[i] = ev->print_value;
	snprintf(r->task[i], 64, "%s", ev->task);
	snprintf(r->name[i], 64, "%s", ev->event_name);
	snprintf(r->pname[i], 64, "%s", ev->print_name);
	snprintf(r->track[i], 64, "%s", ev->print_track);
	snprintf(r->args[i], 256, "%s", ev->args_summary);
	return 0;
}

static int read_text(const char *text, size_t chunk, rec *r, systrace_stats *st)
{
	tm_error err = {0};
	memset(r, 0, sizeof *r);
	memset(st, 0, sizeof *st);
	tm_blob *b = tm_blob_open_memory(text, strlen(text));
	tm_cursor *c = tm_cursor_open(b, &err);
	int rc = chunk ? systrace_read_chunked(c, chunk, collect, r, st, &err)
		       : systrace_read(c, collect, r, st, &err);
	tm_cursor_close(c);
	tm_blob_unref(b);
	return rc;
}

static const char FIXTURE[] =
	"# tracer: nop\n"
	"#\n"
	"  app-100 (  100) [001] ...1  1.000000: tracing_mark_write: B|100|sys_slice\n"
	"  app-100 (  100) [001] ...1  1.500000: tracing_mark_write: E|100\n";

static void systrace_fixture(void)
{
	rec r;
	systrace_stats st;
	CHECK_INT(read_text(FIXTURE, 0, &r, &st), 0);
	CHECK_INT(r.n, 2);
	CHECK_INT(st.systrace_parse_failure, 0);
	CHECK_INT(r.ts[0], 1000000000);
	CHECK_INT(r.ts[1], 1500000000);
	CHECK_INT(r.phase[0], 'B');
	CHECK_INT(r.phase[1], 'E');
	CHECK_STR(r.pname[0], "sys_slice");
	CHECK_STR(r.task[0], "app");
	CHECK_STR(r.name[0], "tracing_mark_write");
	CHECK_STR(r.args[0], "B|100|sys_slice");
	CHECK_INT(r.pid[0], 100);
	CHECK_INT(r.tgid[0], 100);
	CHECK_INT(r.cpu[0], 1);
}

/* S40: truncation of strtod(text) * 1e9. */
static void systrace_s40_timestamps(void)
{
	rec r;
	systrace_stats st;
	CHECK_INT(read_text("a-1 [000] ...1 1.000001: x: y\n"
			    "a-1 [000] ...1 316.196720: x: y\n"
			    "a-1 [000] ...1 12345.678901: x: y\n",
			    0, &r, &st),
		  0);
	CHECK_INT(r.n, 3);
	CHECK_INT(r.ts[0], 1000000999);
	CHECK_INT(r.ts[1], 316196720000LL);
	CHECK_INT(r.ts[2], 12345678901000LL);
}

static void systrace_line_variants(void)
{
	rec r;
	systrace_stats st;
	/* A first byte '<' would mean HTML (§4.1), hence the comment line. */
	CHECK_INT(read_text("# tracer: nop\n"
			    "<idle>-0     [000] ...2     0.002188: task_newtask: pid=1 comm=init\n"
			    "<idle>-0     [000]  0.002189: sched_waking: comm=a pid=5\n"
			    "kworker/u16:1-77    (   77) [004] ....   316.196720: 0: B|77|__scm|0\n"
			    "foo-bar-12 ( -----) [002] d..3 2.5: sched_switch: prev_comm=a\n"
			    "t-3 [001] ...10.5: x: y\n",
			    0, &r, &st),
		  0);
	CHECK_INT(st.systrace_parse_failure, 0);
	CHECK_INT(r.n, 5);
	CHECK_STR(r.task[0], "<idle>");
	CHECK_INT(r.tgid[0], -1);
	CHECK_STR(r.name[0], "task_newtask");
	CHECK_STR(r.args[0], "pid=1 comm=init");
	CHECK_INT(r.ts[1], 2189000);
	CHECK_STR(r.name[1], "sched_waking");
	CHECK_STR(r.task[2], "kworker/u16:1");
	CHECK_INT(r.pid[2], 77);
	CHECK_INT(r.tgid[2], 77);
	CHECK_INT(r.cpu[2], 4);
	CHECK_STR(r.pname[2], "__scm|0");
	CHECK_STR(r.task[3], "foo-bar");
	CHECK_INT(r.tgid[3], -1);
	CHECK_INT(r.ts[3], 2500000000LL);
	/* Flags "...1" then the timestamp 0.5 (the regex backtracks). */
	CHECK_INT(r.ts[4], 500000000);
}

/* A CPU of 4096 or more (the reference's import aborts on it; ours grew a
 * per-CPU array to its number, and 4294967295 wrapped that size to 0): the
 * line is no event and counts as a systrace_parse_failure. 4095 is one. */
static void systrace_cpu_limit(void)
{
	rec r;
	systrace_stats st;
	CHECK_INT(read_text("# tracer: nop\n"
			    "a-1 [4095] ...1 1.0: sched_waking: comm=a pid=5\n"
			    "a-1 [4096] ...1 2.0: sched_waking: comm=a pid=5\n"
			    "a-1 [4294967295] ...1 3.0: sched_waking: comm=a pid=5\n"
			    "a-1 [99999999999] ...1 4.0: sched_waking: comm=a pid=5\n"
			    "a-1 [007] ...1 5.0: sched_waking: comm=a pid=5\n",
			    0, &r, &st),
		  0);
	CHECK_INT(st.systrace_parse_failure, 3);
	CHECK_INT(r.n, 2);
	CHECK_INT(r.cpu[0], 4095);
	CHECK_INT(r.cpu[1], 7);
	CHECK_INT(r.ts[1], 5000000000LL);
}

static void systrace_print_payloads(void)
{
	rec r;
	systrace_stats st;
	CHECK_INT(read_text("a-1 [000] ...1 1.0: tracing_mark_write: B|5|\n"
			    "a-1 [000] ...1 1.0: tracing_mark_write: C|5|ctr|42|cat\n"
			    "a-1 [000] ...1 1.0: print: S|5|as|7\n"
			    "a-1 [000] ...1 1.0: tracing_mark_write: N|5|trk|nm\n"
			    "a-1 [000] ...1 1.0: tracing_mark_write: G|5|trk|nm|9\n"
			    "a-1 [000] ...1 1.0: tracing_mark_write: H|5|trk|nm|11\n"
			    "a-1 [000] ...1 1.0: tracing_mark_write: H|5|trk|12\n"
			    "a-1 [000] ...1 1.0: tracing_mark_write: E\n"
			    "a-1 [000] ...1 1.0: tracing_mark_write: trace_event_clock_sync: parent_ts=1\n"
			    "a-1 [000] ...1 1.0: tracing_mark_write: B|x|bad\n"
			    "a-1 [000] ...1 1.0: tracing_mark_write: C|5|ctr|1.5\n"
			    "a-1 [000] ...1 1.0: tracing_mark_write: Q|5|x\n"
			    "a-1 [000] ...1 1.0: tracing_mark_write: I|5|\n",
			    0, &r, &st),
		  0);
	CHECK_INT(r.n, 8);
	CHECK_INT(st.systrace_parse_failure, 4);
	CHECK_INT(r.bad, 4); /* each failure above is a matched line with a bad payload */
	CHECK_STR(r.pname[0], "[empty slice name]");
	CHECK_INT(r.phase[1], 'C');
	CHECK_STR(r.pname[1], "ctr");
	CHECK_INT(r.value[1], 42);
	CHECK_INT(r.value[2], 7);
	CHECK_STR(r.track[3], "trk");
	CHECK_STR(r.pname[3], "nm");
	CHECK_INT(r.value[4], 9);
	CHECK_INT(r.value[5], 11);
	CHECK_INT(r.value[6], 12);
	CHECK_INT(r.phase[7], 'E');
}

static void systrace_prefixes_and_bad_lines(void)
{
	rec r;
	systrace_stats st;
	CHECK_INT(read_text("junk TRACE:\ncpus=8\n"
			    "not a systrace line\n"
			    "\n"
			    "a-1 [000] ...1 3.0: x: k=v\n"
			    "a-1 [000] ...1 4.0: x: no newline",
			    0, &r, &st),
		  0);
	CHECK_INT(r.n, 1);
	CHECK_INT(r.ts[0], 3000000000LL);
	CHECK_INT(st.systrace_parse_failure, 1);

	/* cpus= with a non-digit is a line like any other (a failure). */
	CHECK_INT(read_text("cpus=8x\na-1 [000] 3.0: x: k=v\n", 0, &r, &st), 0);
	CHECK_INT(r.n, 1);
	CHECK_INT(st.systrace_parse_failure, 1);
}

static const char HTML[] =
	"<!DOCTYPE html>\n<html>\n"
	"a-1 [000] ...1 9.0: x: ignored\n"
	"<script class=\"trace-data\" type=\"application/text\">\n"
	"PROCESS DUMP\nUSER PID TID CMD\nroot 1 1 init\n</script>\n"
	"<script class=\"trace-data\" type=\"application/text\">\n"
	"# tracer: nop\n"
	"#           TASK-PID    CPU#  ||||    TIMESTAMP  FUNCTION\n"
	"  app-100 (  100) [001] ...1  1.000000: tracing_mark_write: B|100|sys_slice\n"
	"  app-100 (  100) [001] ...1  1.500000: tracing_mark_write: E|100\n"
	"  </script>\n"
	"a-1 [000] ...1 9.0: x: after end\n";

static void systrace_html(void)
{
	rec r;
	systrace_stats st;
	CHECK_INT(read_text(HTML, 0, &r, &st), 0);
	CHECK_INT(r.n, 2);
	CHECK_INT(r.ts[0], 1000000000);
	CHECK_INT(r.ts[1], 1500000000);
	CHECK_INT(st.systrace_parse_failure, 0);
}

static void systrace_chunk_sizes(void)
{
	rec a, b;
	systrace_stats sa, sb;
	/* The TRACE: marker near the end of its 128-byte window, then a cpus=
	 * line and HTML: the HTML test must see the byte after the cpus= line
	 * whatever the chunk size (a fuzzer find). */
	static const char NEAR_WINDOW[] =
		"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
		"TRACE:\ncpus=4\n<html>\n<script class=\"trace-data\" type=\"application/text\">\n"
		"# TASK-PID\na-1 [000] 1.0: x: y\n</script>\n";
	const char *inputs[] = {FIXTURE, HTML, "xx TRACE:\ncpus=2\na-1 [000] 3.0: x: k=v\nbad\n", NEAR_WINDOW};
	CHECK_INT(read_text(NEAR_WINDOW, 0, &a, &sa), 0);
	CHECK_INT(a.n, 1);
	CHECK_INT(sa.systrace_parse_failure, 0);
	for (size_t i = 0; i < 4; i++) {
		CHECK_INT(read_text(inputs[i], 0, &a, &sa), 0);
		for (size_t chunk = 1; chunk < 40; chunk += 3) {
			CHECK_INT(read_text(inputs[i], chunk, &b, &sb), 0);
			CHECK_INT(b.n, a.n);
			CHECK_INT(sb.systrace_parse_failure, sa.systrace_parse_failure);
			CHECK(memcmp(&a, &b, sizeof a) == 0);
		}
	}
}

/* "</script>" ends the text wherever it lies in a line, and only in the
 * line that holds it: lines of '<' without it ("<idle>", "</scrip") go
 * on, a tag across two reads is found, and an HTML data section's end
 * turns back to HTML; every chunk size gives the same. The reference
 * makes one slice, at 1 s, of each text (v58.2). */
static void systrace_script_end(void)
{
	static const char PLAIN[] = "# tracer: nop\n"
				    "  <idle>-0 [000] ...1 1.000000: tracing_mark_write: I|1|prev=<idle> </scrip>\n"
				    "  a-1 [000] ...1 2.000000: tracing_mark_write: I|1|y</script>z\n"
				    "  b-2 [000] ...1 3.000000: tracing_mark_write: I|1|y\n";
	static const char HTML2[] = "<html>\n<script class=\"trace-data\" type=\"application/text\">\n"
				    "PROCESS DUMP\nx </script>\n"
				    "<p>text</script> between</p>\n"
				    "<script class=\"trace-data\" type=\"application/text\">\n"
				    "data</script>\n"
				    "<script class=\"trace-data\" type=\"application/text\">\n"
				    "# TASK-PID\n  a-1 [000] 1.0: tracing_mark_write: I|1|<y>\n"
				    "  b-2 [000] 2.0: tracing_mark_write: I|1|y</script>\n"
				    "  c-3 [000] 3.0: tracing_mark_write: I|1|y\n";
	const char *inputs[] = {PLAIN, HTML2};
	rec a, b;
	systrace_stats sa, sb;
	for (size_t i = 0; i < 2; i++) {
		CHECK_INT(read_text(inputs[i], 0, &a, &sa), 0);
		CHECK_INT(a.n, 1);
		CHECK_INT(a.ts[0], 1000000000);
		for (size_t chunk = 1; chunk < 90; chunk++) {
			CHECK_INT(read_text(inputs[i], chunk, &b, &sb), 0);
			CHECK(memcmp(&a, &b, sizeof a) == 0);
			CHECK(memcmp(&sa, &sb, sizeof sa) == 0);
		}
	}
}

static void systrace_args_lookup(void)
{
	char v[32];
	const char *args = "prev_comm=sh prev_pid=12 a=b=c bare next_pid=0";
	CHECK(systrace_arg(args, "prev_pid", v, sizeof v));
	CHECK_STR(v, "12");
	CHECK(systrace_arg(args, "a", v, sizeof v));
	CHECK_STR(v, "c");
	CHECK(systrace_arg(args, "name", v, sizeof v));
	CHECK_STR(v, "bare");
	CHECK(systrace_arg(args, "next_pid", v, sizeof v));
	CHECK_STR(v, "0");
	CHECK(!systrace_arg(args, "cpu", v, sizeof v));
}

/* The split tokens answer every lookup as the text does: the first
 * occurrence, '=' runs, bare tokens, truncation, and keys past the kept
 * tokens (SYSTRACE_ARGS_KEPT). */
static void systrace_args_split_agrees(void)
{
	static const char *const texts[] = {
		"prev_comm=sh prev_pid=12 prev_prio=120 prev_state=R ==> next_comm=a next_pid=0 next_prio=120",
		"  a=1  a=2 =b= ==c==d== bare other name=x  ",
		("k0=0 k1=1 k2=2 k3=3 k4=4 k5=5 k6=6 k7=7 k8=8 k9=9 k10=10 k11=11 k12=12 k13=13 k14=14 k15=15 "
		 "k16=16 k0=dup k17=17 tail"),
		"",
		"x=0123456789012345678901234567890123456789",
		/* same length, first and last byte: only the middle tells them apart */
		"abc=1 axc=2 abbc=3 prxv_pid=4 prev_pid=5",
	};
	static const char *const keys[] = {"prev_pid", "next_comm", ">", "a", "b", "c", "name", "k0",  "k15",
					   "k16",      "k17",       "x", "",  "=", "d", "k1", "none",
					   "abc",      "axc",       "acc", "abbc", "prxv_pid"};
	int got = 0;
	for (size_t t = 0; t < sizeof texts / sizeof texts[0]; t++) {
		systrace_args sa;
		systrace_args_init(&sa, texts[t]);
		for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++) {
			char a[16] = "unset", b[16] = "unset";
			int ra = systrace_arg(texts[t], keys[k], a, sizeof a);
			int rb = systrace_args_get(&sa, keys[k], b, sizeof b);
			CHECK_INT(rb, ra);
			CHECK_STR(b, a);
			got += ra;
		}
	}
	CHECK(got > 10); /* the keys above do occur */
	systrace_args sa;
	char v[8];
	systrace_args_init(&sa, texts[2]);
	CHECK_INT(sa.split, 0); /* split at the first lookup, not before */
	CHECK(systrace_args_get(&sa, "k17", v, sizeof v));
	CHECK_INT(sa.split, 1);
	CHECK_INT(sa.more, 1);
	CHECK_STR(v, "17");
	CHECK(systrace_args_get(&sa, "k0", v, sizeof v));
	CHECK_STR(v, "0");
}

static int stop_cb(void *ctx, const systrace_event *ev, tm_error *err)
{
	(void)ctx;
	(void)ev;
	return tm_err(err, TM_EINPUT, "stop");
}

static void systrace_callback_stops(void)
{
	tm_error err = {0};
	systrace_stats st = {0};
	tm_blob *b = tm_blob_open_memory(FIXTURE, strlen(FIXTURE));
	tm_cursor *c = tm_cursor_open(b, &err);
	CHECK_INT(systrace_read(c, stop_cb, NULL, &st, &err), -1);
	CHECK_STR(err.msg, "stop");
	tm_cursor_close(c);
	tm_blob_unref(b);
}

static int64_t g_count;
static int count_cb(void *ctx, const systrace_event *ev, tm_error *err)
{
	(void)ctx;
	(void)err;
	g_count += ev->print_phase == 'B';
	return 0;
}

/* Memory stays bounded by one chunk plus one line, not the file. */
static void systrace_memory_bounded(void)
{
#if defined(TT_ASAN)
	SKIP("ASan's quarantine keeps freed blocks; ru_maxrss means nothing here");
#endif
	char path[] = "/tmp/test_systrace_XXXXXX";
	int fd = mkstemp(path);
	if (fd < 0)
		SKIP("mkstemp failed");
	FILE *f = fdopen(fd, "w");
	fputs("# tracer: nop\n", f);
	int64_t n = 0;
	for (long bytes = 0; bytes < 100L * 1024 * 1024; n++)
		bytes += fprintf(f, "  app-100 (  100) [001] ...1  %lld.%06d: tracing_mark_write: B|100|slice\n",
				 (long long)(n / 1000000), (int)(n % 1000000));
	fclose(f);

	long before = tt_maxrss_kb();
	tm_error err = {0};
	systrace_stats st = {0};
	tm_blob *b = tm_blob_open_path(path, &err);
	tm_cursor *c = b ? tm_cursor_open(b, &err) : NULL;
	g_count = 0;
	int rc = c ? systrace_read(c, count_cb, NULL, &st, &err) : -1;
	tm_cursor_close(c);
	tm_blob_unref(b);
	unlink(path);
	CHECK_INT(rc, 0);
	CHECK_INT(g_count, n);
	CHECK_INT(st.systrace_parse_failure, 0);
	CHECK(tt_maxrss_kb() - before < 64 * 1024);
}

int main(void)
{
	TT_RUN(systrace_fixture);
	TT_RUN(systrace_s40_timestamps);
	TT_RUN(systrace_line_variants);
	TT_RUN(systrace_cpu_limit);
	TT_RUN(systrace_print_payloads);
	TT_RUN(systrace_prefixes_and_bad_lines);
	TT_RUN(systrace_html);
	TT_RUN(systrace_chunk_sizes);
	TT_RUN(systrace_script_end);
	TT_RUN(systrace_args_lookup);
	TT_RUN(systrace_args_split_agrees);
	TT_RUN(systrace_callback_stops);
	TT_RUN(systrace_memory_bounded);
	TT_DONE();
}
