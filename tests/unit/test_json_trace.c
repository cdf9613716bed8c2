/* tests/unit/test_json_trace.c - the Chrome JSON reader against
 * formats.md §3 and conformance.md S34, S39, S60, S68. */
#include <stdlib.h>
#include <unistd.h>

#include "../../core/container/archive.h"
#include "../../core/formats/json/json_trace.h"
#include "tt.h"

#define MAXEV 32

typedef struct rec {
	int n;
	int nodur;   /* X events without dur: delivered, counted, kept apart here */
	int bad;     /* embedded systrace lines with a bad print payload */
	json_event_kind kind[MAXEV];
	char phase[MAXEV];
	int64_t ts[MAXEV], dur[MAXEV], pid[MAXEV], tid[MAXEV];
	int pid_str[MAXEV];
	double value[MAXEV];
	char name[MAXEV][64], cat[MAXEV][64], args[MAXEV][256], pname[MAXEV][64];
} rec;

static void copy_str(char *dst, const char *s) { snprintf(dst, 64, "%s", s ? s : "(null)"); }

static int collect(void *ctx, const json_event *ev, tm_error *err)
{
	(void)err;
	rec *r = ctx;
	if (ev->kind == JSON_EV_TRACE && ev->phase == 'X' && ev->dur < 0) {
		r->nodur++;
		return 0;
	}
	if (ev->kind == JSON_EV_SYSTRACE && ev->systrace->bad_print) {
		r->bad++;
		return 0;
	}
	if (r->n >= MAXEV)
		return 0;
	int i = r->n++;
	r->kind[i] = ev->kind;
	r->phase[i] = ev->phase;
	r->ts[i] = ev->ts;
	r->dur[i] = ev->dur;
	r->pid[i] = ev->pid;
	r->tid[i] = ev->tid;
	r->pid_str[i] = ev->pid_is_string;
	r->value[i] = ev->counter_value;
	copy_str(r->pname[i], ev->pid_name);
	if (ev->kind == JSON_EV_METADATA) {
		copy_str(r->name[i], ev->metadata_key);
		copy_str(r->cat[i], ev->metadata_value->type == TJ_STRING ? ev->metadata_value->s : "?");
	} else {
		copy_str(r->name[i], ev->name);
		copy_str(r->cat[i], ev->category);
	}
	snprintf(r->args[i], 256, "%s", ev->args_summary);
	return 0;
}

static int read_json(const char *text, size_t chunk, rec *r, json_trace_stats *st, tm_error *err)
{
	memset(r, 0, sizeof *r);
	memset(st, 0, sizeof *st);
	tm_err_clear(err);
	tm_blob *b = tm_blob_open_memory(text, strlen(text));
	tm_cursor *c = tm_cursor_open(b, err);
	int rc = chunk ? json_trace_read_chunked(c, chunk, collect, r, st, err)
		       : json_trace_read(c, collect, r, st, err);
	tm_cursor_close(c);
	tm_blob_unref(b);
	return rc;
}

static void json_fixture(void)
{
	rec r;
	json_trace_stats st;
	tm_error err;
	CHECK_INT(read_json("{\"traceEvents\":[{\"pid\":10,\"tid\":10,\"ts\":2000,\"dur\":500,"
			    "\"ph\":\"X\",\"name\":\"json_slice\"}]}",
			    0, &r, &st, &err),
		  0);
	CHECK_INT(r.n, 1);
	CHECK_INT(r.phase[0], 'X');
	CHECK_INT(r.ts[0], 2000000);
	CHECK_INT(r.dur[0], 500000);
	CHECK_INT(r.pid[0], 10);
	CHECK_INT(r.tid[0], 10);
	CHECK_STR(r.name[0], "json_slice");
}

/* S39 and S60: every row of the µs -> ns table. */
static void json_time_values(void)
{
	static const struct {
		const char *ts;
		int64_t ns;
	} rows[] = {
		{"5", 5000},      {"5.0005", 5001},  {"5.00049", 5000},  {"7.0", 7000},
		{"\"9.5\"", 9500}, {"-1", -1000},    {"0.0005", 1},      {"1.0015", 1002},
		{"1e3", 1000000}, {"-0.0004", 0},    {"-0.0005", -1},    {"6.5e-3", 7},
	};
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		char doc[256];
		rec r;
		json_trace_stats st;
		tm_error err;
		snprintf(doc, sizeof doc, "[{\"ph\":\"i\",\"pid\":1,\"ts\":%s}]", rows[i].ts);
		CHECK_INT(read_json(doc, 0, &r, &st, &err), 0);
		CHECK_INT(r.n, 1);
		CHECK_INT(r.ts[0], rows[i].ns);
		CHECK_INT(st.json_tokenizer_failure, 0);
	}
	/* Not a time: the event is skipped and counted. */
	const char *bad[] = {"\"x\"", "true", "null", "{}", "\"\"", "\"9.5x\"", "1e300"};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		char doc[256];
		rec r;
		json_trace_stats st;
		tm_error err;
		snprintf(doc, sizeof doc, "[{\"ph\":\"i\",\"ts\":%s},{\"ph\":\"i\",\"ts\":1}]", bad[i]);
		CHECK_INT(read_json(doc, 0, &r, &st, &err), 0);
		CHECK_INT(r.n, 1);
		CHECK_INT(r.ts[0], 1000);
		CHECK_INT(st.json_tokenizer_failure, 1);
	}
}

static void json_display_time_unit(void)
{
	rec r;
	json_trace_stats st;
	tm_error err;
	CHECK_INT(read_json("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[{\"ph\":\"i\",\"ts\":3}]}", 0, &r,
			    &st, &err),
		  0);
	CHECK_INT(st.json_display_time_unit, 1);
	CHECK_INT(r.ts[0], 3000); /* units unchanged */
}

static void json_shapes(void)
{
	rec r;
	json_trace_stats st;
	tm_error err;
	/* Bare array without ']', with and without a trailing comma, and
	 * cut inside an event. */
	const char *ok[] = {"[{\"ph\":\"i\",\"ts\":1},{\"ph\":\"i\",\"ts\":2}",
			    "[{\"ph\":\"i\",\"ts\":1},{\"ph\":\"i\",\"ts\":2},\n",
			    "[{\"ph\":\"i\",\"ts\":1},{\"ph\":\"i\",\"ts\":2},{\"ph\":\"i\",\"ts",
			    " \n[{\"ph\":\"i\",\"ts\":1},{},{\"ph\":\"i\",\"ts\":2},]",
			    "{\"traceEvents\":[{\"ph\":\"i\",\"ts\":1},{},{\"ph\":\"i\",\"ts\":2},],}"};
	for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
		CHECK_INT(read_json(ok[i], 0, &r, &st, &err), 0);
		CHECK_INT(r.n, 2);
		CHECK_INT(r.ts[1], 2000);
		CHECK_INT(st.json_tokenizer_failure, 0);
	}
	/* The object form may not be cut short. */
	const char *cut[] = {"{\"traceEvents\":[{\"ph\":\"i\",\"ts\":1}",
			     "{\"traceEvents\":[{\"ph\":\"i\",\"ts\":1}]",
			     "{\"traceEvents\":[{\"ph\":\"i\",\"ts\":1}],\"other\":[1,{\"a\":\"]",
			     "{\"systemTraceEvents\":\"a-1 [000] 1.0: x: y\\n"};
	for (size_t i = 0; i < sizeof cut / sizeof cut[0]; i++) {
		CHECK_INT(read_json(cut[i], 0, &r, &st, &err), -1);
		CHECK_STR(err.msg, "JSON trace file is incomplete (ERR:tp-corrupt)");
	}
	/* Other keys are skipped correctly, whatever they hold. */
	CHECK_INT(read_json("{\"a\":\"]}\\\"[\",\"b\":[{\"c\":\"}\"},[]],\"n\":-1.5e3,\"t\":true,"
			    "\"traceEvents\":[{\"ph\":\"i\",\"ts\":4}],\"z\":{}}",
			    0, &r, &st, &err),
		  0);
	CHECK_INT(r.n, 1);
	CHECK_INT(r.ts[0], 4000);
	/* Keys are unescaped before they are compared. */
	CHECK_INT(read_json("{\"trace\\u0045vents\":[{\"ph\":\"i\",\"ts\":5}]}", 0, &r, &st, &err), 0);
	CHECK_INT(r.n, 1);
	CHECK_INT(r.ts[0], 5000);
	CHECK_INT(read_json("{\"displayTimeUnit\":3}", 0, &r, &st, &err), -1);
	CHECK_STR(err.msg, "Could not parse displayTimeUnit");
	CHECK_INT(read_json("{\"traceEvents\":{}}", 0, &r, &st, &err), -1);
	CHECK_STR(err.msg, "Failure parsing JSON: traceEvents is not an array.");
	CHECK_INT(read_json("  ", 0, &r, &st, &err), -1);
	CHECK_INT(read_json("x", 0, &r, &st, &err), -1);
}

static void json_pid_tid(void)
{
	rec r;
	json_trace_stats st;
	tm_error err;
	CHECK_INT(read_json("[{\"ph\":\"i\",\"ts\":1,\"pid\":7},"
			    "{\"ph\":\"i\",\"ts\":1,\"pid\":7,\"tid\":0},"
			    "{\"ph\":\"i\",\"ts\":1,\"pid\":-3,\"tid\":4294967296},"
			    "{\"ph\":\"i\",\"ts\":1,\"pid\":12.9,\"tid\":4294967295},"
			    "{\"ph\":\"i\",\"ts\":1,\"pid\":\"browser\",\"tid\":\"main\"},"
			    "{\"ph\":\"i\",\"ts\":1,\"pid\":\"gpu\"},"
			    "{\"ph\":\"i\",\"ts\":1,\"pid\":\"browser\"}]",
			    0, &r, &st, &err),
		  0);
	CHECK_INT(r.n, 7);
	CHECK_INT(r.tid[0], 7);
	CHECK_INT(r.tid[1], 7);
	CHECK_INT(r.pid[2], 0);
	CHECK_INT(r.tid[2], 0);
	CHECK_INT(r.pid[3], 12);
	CHECK_INT(r.tid[3], 4294967295LL);
	CHECK(r.pid_str[4]);
	CHECK_STR(r.pname[4], "browser");
	CHECK(r.pid[4] >= JSON_TRACE_STRING_ID_BASE);
	CHECK(r.pid[5] != r.pid[4]);
	CHECK_INT(r.pid[6], r.pid[4]); /* stable per distinct string */
	CHECK(r.tid[4] != r.pid[4]);
	CHECK_INT(r.tid[6], r.pid[6]); /* tid absent: takes the string pid's id */
}

static void json_phases(void)
{
	rec r;
	json_trace_stats st;
	tm_error err;
	CHECK_INT(read_json("[{\"ph\":\"X\",\"ts\":1,\"name\":\"nodur\"},"
			    "{\"ph\":\"C\",\"ts\":2,\"pid\":1,\"name\":\"ctr\",\"cat\":\"c\","
			    "\"args\":{\"label\":\"x\",\"value\":2.5,\"other\":3}},"
			    "{\"ph\":\"M\",\"pid\":1,\"name\":\"process_name\",\"args\":{\"name\":\"Browser\"}},"
			    "{\"ph\":\"B\",\"ts\":3,\"name\":\"\",\"cat\":\"\"},"
			    "{\"ts\":4},"
			    "{\"ph\":\"B\"},"
			    "{\"ph\":\"X\",\"ts\":1,\"dur\":\"bad\"}]",
			    0, &r, &st, &err),
		  0);
	CHECK_INT(r.n, 3);
	CHECK_INT(r.nodur, 1); /* counted, and still delivered for the model */
	CHECK_INT(st.json_parser_failure, 1);
	CHECK_INT(st.json_tokenizer_failure, 3);
	CHECK_INT(r.phase[0], 'C');
	CHECK_STR(r.name[0], "ctr");
	CHECK_STR(r.cat[0], "c");
	CHECK(r.value[0] == 2.5);
	CHECK_STR(r.args[0], "label=x value=2.5 other=3");
	CHECK_INT(r.phase[1], 'M');
	CHECK_INT(r.ts[1], 0);
	CHECK_STR(r.args[1], "name=Browser");
	CHECK_STR(r.name[2], "(null)"); /* empty name -> null */
	CHECK_STR(r.cat[2], "(null)");
}

static void json_metadata(void)
{
	rec r;
	json_trace_stats st;
	tm_error err;
	CHECK_INT(read_json("{\"metadata\":{\"cpu\":\"x86\",\"gone\":null,\"n\":3},\"traceEvents\":[]}", 0, &r,
			    &st, &err),
		  0);
	CHECK_INT(r.n, 2);
	CHECK_INT(r.kind[0], JSON_EV_METADATA);
	CHECK_STR(r.name[0], "cpu");
	CHECK_STR(r.cat[0], "x86");
	CHECK_STR(r.name[1], "n");
}

/* S34: embedded systrace, times as in §4.2 (the caller keeps them on the
 * JSON private clock). */
static const char S34[] =
	"{\"traceEvents\":[{\"pid\":10,\"tid\":10,\"ts\":2000,\"dur\":500,\"ph\":\"X\",\"name\":\"json_slice\"}],"
	"\"systemTraceEvents\":\"# tracer: nop\\n#\\n"
	"  app-100 (  100) [001] ...1  1.000000: tracing_mark_write: B|100|sys_slice\\n"
	"  app-100 (  100) [001] ...1  1.500000: tracing_mark_write: E|100\\n\"}";

static void json_s34_system_trace_events(void)
{
	rec r;
	json_trace_stats st;
	tm_error err;
	CHECK_INT(read_json(S34, 0, &r, &st, &err), 0);
	CHECK_INT(r.n, 3);
	CHECK_INT(r.kind[0], JSON_EV_TRACE);
	CHECK_INT(r.ts[0], 2000000);
	CHECK_INT(r.kind[1], JSON_EV_SYSTRACE);
	CHECK_INT(r.phase[1], 'B');
	CHECK_INT(r.ts[1], 1000000000);
	CHECK_STR(r.name[1], "sys_slice");
	CHECK_INT(r.tid[1], 100);
	CHECK_INT(r.phase[2], 'E');
	CHECK_INT(r.ts[2], 1500000000);
	/* Same result read a byte at a time. */
	rec r2;
	CHECK_INT(read_json(S34, 1, &r2, &st, &err), 0);
	CHECK(memcmp(&r, &r2, sizeof r) == 0);
	CHECK_INT(read_json(S34, 7, &r2, &st, &err), 0);
	CHECK(memcmp(&r, &r2, sizeof r) == 0);
}

static void json_s68_bad_system_line(void)
{
	rec r;
	json_trace_stats st;
	tm_error err;
	CHECK_INT(read_json("{\"systemTraceEvents\":\"# tracer\\nthis is \\\"not\\\" systrace\\n\"}", 0, &r,
			    &st, &err),
		  -1);
	CHECK_STR(err.msg, "Not a known systrace event format (line: this is \"not\" systrace)");
	/* A bad print payload is counted, and the line delivered flagged. */
	CHECK_INT(read_json("{\"systemTraceEvents\":\"a-1 [000] 1.0: tracing_mark_write: B|x\\n\"}", 0, &r,
			    &st, &err),
		  0);
	CHECK_INT(st.systrace_parse_failure, 1);
	CHECK_INT(r.n, 0);
	CHECK_INT(r.bad, 1);
}

static int stop_cb(void *ctx, const json_event *ev, tm_error *err)
{
	(void)ctx;
	(void)ev;
	return tm_err(err, TM_EINPUT, "stop");
}

static void json_callback_stops(void)
{
	tm_error err = {0};
	json_trace_stats st = {0};
	tm_blob *b = tm_blob_open_memory(S34, strlen(S34));
	tm_cursor *c = tm_cursor_open(b, &err);
	CHECK_INT(json_trace_read(c, stop_cb, NULL, &st, &err), -1);
	CHECK_STR(err.msg, "stop");
	tm_cursor_close(c);
	tm_blob_unref(b);
}

static int64_t g_count;
static int count_cb(void *ctx, const json_event *ev, tm_error *err)
{
	(void)ctx;
	(void)err;
	g_count += ev->ts > 0;
	return 0;
}

/* Memory stays bounded by one chunk plus one event, not the file. */
static void json_memory_bounded(void)
{
#if defined(TT_ASAN)
	SKIP("ASan's quarantine keeps freed blocks; ru_maxrss means nothing here");
#endif
	char path[] = "/tmp/test_json_trace_XXXXXX";
	int fd = mkstemp(path);
	if (fd < 0)
		SKIP("mkstemp failed");
	FILE *f = fdopen(fd, "w");
	fputs("{\"traceEvents\":[", f);
	int64_t n = 0;
	long bytes = 0;
	while (bytes < 100L * 1024 * 1024) {
		int w = fprintf(f, "%s{\"ph\":\"X\",\"pid\":1,\"tid\":2,\"ts\":%lld.5,\"dur\":3,\"name\":\"slice\","
				   "\"args\":{\"k\":\"vvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvv\"}}\n",
			    n ? "," : "", (long long)n + 1);
		bytes += w;
		n++;
	}
	fputs("]}", f);
	fclose(f);

	long before = tt_maxrss_kb();
	tm_error err = {0};
	json_trace_stats st = {0};
	tm_blob *b = tm_blob_open_path(path, &err);
	tm_cursor *c = b ? tm_cursor_open(b, &err) : NULL;
	g_count = 0;
	int rc = c ? json_trace_read(c, count_cb, NULL, &st, &err) : -1;
	tm_cursor_close(c);
	tm_blob_unref(b);
	unlink(path);
	long after = tt_maxrss_kb();
	CHECK_INT(rc, 0);
	CHECK_INT(g_count, n);
	CHECK(after - before < 64 * 1024);
}

int main(void)
{
	TT_RUN(json_fixture);
	TT_RUN(json_time_values);
	TT_RUN(json_display_time_unit);
	TT_RUN(json_shapes);
	TT_RUN(json_pid_tid);
	TT_RUN(json_phases);
	TT_RUN(json_metadata);
	TT_RUN(json_s34_system_trace_events);
	TT_RUN(json_s68_bad_system_line);
	TT_RUN(json_callback_stops);
	TT_RUN(json_memory_bounded);
	TT_DONE();
}
