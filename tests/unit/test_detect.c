/* tests/unit/test_detect.c - the sniffers of spec/formats.md §1.2 and the
 * manifest whitespace rule of manifest.md §2. */
#include "tt.h"

#include "detect/detect.h"
#include "pb_write.h"
#include "trace_fields.h"
#include "util/pb.h"

/* Field numbers of schemas other than protos/trace.proto (no F_ in
 * trace_fields.h). */
/* Perfetto's ModuleSymbols.path (trace/profiling/profile_common.proto),
 * inside TracePacket.module_symbols, which protos/trace.proto keeps as
 * bytes. */
#define MODULE_SYMBOLS_PATH 1
/* perftools.profiles (github.com/google/pprof, proto/profile.proto):
 * Profile's fields, and the one field each of ValueType and Sample the
 * tests fill. detect.c's table of Profile fields is its own (static). */
#define PROFILE_SAMPLE_TYPE 1
#define PROFILE_SAMPLE 2
#define PROFILE_STRING_TABLE 6
#define PROFILE_DROP_FRAMES 7
#define PROFILE_TIME_NANOS 9
#define PROFILE_COMMENT 13
#define PROFILE_DEFAULT_SAMPLE_TYPE 14
#define VALUE_TYPE_TYPE 1
#define SAMPLE_LOCATION_ID 1
/* The first number past the Profile fields detect.c knows (up to
 * default_sample_type, as the reference). Newer profile.proto calls it
 * tick_unit, a varint, so written length-delimited it is no Profile field
 * either way. */
#define PROFILE_UNKNOWN_FIELD (PROFILE_DEFAULT_SAMPLE_TYPE + 1)

static tm_type sniff_str(const char *s)
{
	return tm_detect((const unsigned char *)s, strlen(s));
}

static tm_type sniff_bytes(const void *b, size_t n)
{
	return tm_detect(b, n);
}

/* ---- the protobuf writer (tag, f_var, f_bytes, f_msg, f_packed: pb_write.h) */

/* v as a varint of exactly width bytes: over-long when v needs fewer, the
 * padding continuation bytes a decoder must still accept. */
static void put_varint_wide(tm_buf *b, uint64_t v, size_t width)
{
	for (size_t i = 0; i < width; i++, v >>= 7)
		tm_buf_putc(b, (char)((v & 0x7f) | (i + 1 < width ? 0x80 : 0)));
}

/* n bytes of b from off, as a file's first bytes. */
static tm_type sniff_range(const tm_buf *b, size_t off, size_t n)
{
	return tm_detect((const unsigned char *)b->data + off, n);
}

/* The first n bytes of b; b is freed. */
static tm_type sniff_buf_n(tm_buf *b, size_t n)
{
	tm_type t = sniff_range(b, 0, n);
	tm_buf_free(b);
	return t;
}

static tm_type sniff_buf(tm_buf *b)
{
	return sniff_buf_n(b, b->len);
}

static void test_prefix_types(void)
{
	CHECK_INT(sniff_str("ARROW1...."), TM_TYPE_ARROW);
	CHECK_INT(sniff_bytes("\x10\x00\x04\x46\x78\x54\x16\x00rest", 12), TM_TYPE_FUCHSIA);
	CHECK_INT(sniff_str("PERFILE2xxxx"), TM_TYPE_PERF);
	CHECK_INT(sniff_str("SIMPLEPERF..."), TM_TYPE_SIMPLEPERF_PROTO);
	CHECK_INT(sniff_str("PK\x03\x04...."), TM_TYPE_ZIP);
	CHECK_INT(sniff_bytes("\x1f\x8b\x08\x00", 4), TM_TYPE_GZIP);
	CHECK_INT(sniff_bytes("\x28\xb5\x2f\xfd\x00", 5), TM_TYPE_ZSTD);
	CHECK_INT(sniff_bytes("SLOW\x05\x00....", 10), TM_TYPE_ART_METHOD_V2);
	CHECK_INT(sniff_bytes("SLOW\x03\x00....", 10), TM_TYPE_ART_METHOD);
	CHECK_INT(sniff_str("*version\n3\n"), TM_TYPE_ART_METHOD);
	CHECK_INT(sniff_str("JAVA PROFILE 1.0.3"), TM_TYPE_ART_HPROF);
	CHECK_INT(sniff_str("<?xml version=\"1.0\"?>\n<trace-query-result>"), TM_TYPE_INSTRUMENTS_XML);
	CHECK_INT(sniff_str("# ninja log v5\n"), TM_TYPE_NINJA_LOG);
	tm_buf t = {0};
	f_bytes(&t, F_Trace_packet, "hello", 5);
	CHECK_INT(sniff_buf(&t), TM_TYPE_PROTO);
	CHECK_INT(sniff_bytes("\x09\x00\x00", 3), TM_TYPE_PRIMES);
	CHECK_INT(sniff_str("9,0,i,vers,1"), TM_TYPE_ANDROID_DUMPSTATE);
	CHECK_INT(sniff_str("BZh91AY&SY"), TM_TYPE_BZIP2);
	CHECK_INT(sniff_bytes("\xfd" "7zXZ\x00\x00", 7), TM_TYPE_XZ);
	CHECK_INT(sniff_str(""), TM_TYPE_UNKNOWN);
	CHECK_INT(sniff_str("This is not a trace."), TM_TYPE_UNKNOWN);
}

static void test_tar_magic(void)
{
	unsigned char b[512] = {0};
	memcpy(b + 257, "ustar\0", 6);
	CHECK_INT(sniff_bytes(b, sizeof b), TM_TYPE_TAR);
	memcpy(b + 257, "ustar  \0", 8);
	CHECK_INT(sniff_bytes(b, sizeof b), TM_TYPE_TAR);
	memcpy(b + 257, "ustaR\0", 6);
	CHECK_INT(sniff_bytes(b, sizeof b), TM_TYPE_UNKNOWN);
}

/* manifest.md §2: every whitespace byte in the first 128 is removed. */
static void test_manifest_whitespace(void)
{
	CHECK_INT(sniff_str("{\"perfetto_manifest\": {\"version\": 1}}"), TM_TYPE_MANIFEST);
	CHECK_INT(sniff_str("\n\n  { \"perfetto_manifest\" : {"), TM_TYPE_MANIFEST);
	CHECK_INT(sniff_str("{\t\"perfetto_\v\f\rmanifest\"}"), TM_TYPE_MANIFEST);
	CHECK_INT(sniff_str("{\"version\":1,\"perfetto_manifest\":{}}"), TM_TYPE_JSON);
	CHECK_INT(sniff_str("[\"perfetto_manifest\"]"), TM_TYPE_UNKNOWN);
	/* Whitespace past byte 128 is not removed. */
	char s[300];
	memset(s, ' ', 130);
	strcpy(s + 130, "{\"perfetto_manifest\":{}}");
	CHECK_INT(sniff_str(s), TM_TYPE_SYSTRACE); /* starts with a space */
}

static void test_json_and_gecko(void)
{
	CHECK_INT(sniff_str("{\"traceEvents\":[]}"), TM_TYPE_JSON);
	CHECK_INT(sniff_str("[{\"ph\":\"X\"}]"), TM_TYPE_JSON);
	CHECK_INT(sniff_str("\n[ {\"ph\":\"X\"}]"), TM_TYPE_JSON);
	CHECK_INT(sniff_str("{\"meta\":{}}"), TM_TYPE_GECKO);
	CHECK_INT(sniff_str("{ \"libs\" : []}"), TM_TYPE_GECKO);
	CHECK_INT(sniff_str("[]"), TM_TYPE_UNKNOWN);
}

/* formats.md §1.2 "consequences worth testing". */
static void test_systrace_rules(void)
{
	CHECK_INT(sniff_str("# tracer: nop\n#\n"), TM_TYPE_SYSTRACE);
	CHECK_INT(sniff_str("<!DOCTYPE html>\n<html>"), TM_TYPE_SYSTRACE);
	CHECK_INT(sniff_str("<html>\n"), TM_TYPE_SYSTRACE);
	CHECK_INT(sniff_str("cpus=8\n# tracer: nop\n"), TM_TYPE_SYSTRACE);
	CHECK_INT(sniff_str("  app-100 (  100) [001] ...1  1.000000: x: y\n"), TM_TYPE_SYSTRACE);
	CHECK_INT(sniff_str("TRACE:\n# tracer: nop\n"), TM_TYPE_SYSTRACE);
	/* A systrace with no header whose first line starts with a task name
	 * is not recognised. */
	CHECK_INT(sniff_str("app-100 (  100) [001] ...1  1.000000: tracing_mark_write: B|100|x\n"),
		  TM_TYPE_UNKNOWN);
	/* zlib-framed atrace is ctrace. */
	CHECK_INT(sniff_bytes("TRACE:\n\x78\x9c\x01\x02", 11), TM_TYPE_CTRACE);
}

/* formats.md §1.2, priority 185: the first non-banner line within 4096
 * bytes, checked only for its shape (fields split on ' '). */
static void test_logcat(void)
{
	CHECK_INT(sniff_str("--------- beginning of main\n"
			    "01-02 03:04:05.678  1234  1235 I Tag: hello\n"),
		  TM_TYPE_ANDROID_LOGCAT);
	/* Persistent-log shape: year, level in the fifth field. */
	CHECK_INT(sniff_str("2024-01-02 03:04:05.678901 1000 1234 I Tag: hello\n"), TM_TYPE_ANDROID_LOGCAT);
	/* Bugreport shape with a year and a uid column: level in the sixth. */
	CHECK_INT(sniff_str("2024-01-02 03:04:05.678901  1000  1234  1235 W Tag: x\n"),
		  TM_TYPE_ANDROID_LOGCAT);
	/* Digits are never checked, only separators and lengths. */
	CHECK_INT(sniff_str("ab-cd ef:gh:ij.k x y Z\n"), TM_TYPE_ANDROID_LOGCAT);
	/* The line must end in '\n' within the 4096 bytes. */
	CHECK_INT(sniff_str("01-02 03:04:05.678  1234  1235 I Tag: hello"), TM_TYPE_UNKNOWN);
	/* Lowercase level, a tab as separator, a short time: not logcat. */
	CHECK_INT(sniff_str("01-02 03:04:05.678  1234  1235 i tag: hello\n"), TM_TYPE_UNKNOWN);
	CHECK_INT(sniff_str("01-02\t03:04:05.678 1234 1235 I Tag: x\n"), TM_TYPE_UNKNOWN);
	CHECK_INT(sniff_str("01-02 03:04:05 1234 1235 I Tag: x\n"), TM_TYPE_UNKNOWN);
	/* Only the first non-banner line counts. */
	CHECK_INT(sniff_str("garbage\n01-02 03:04:05.678  1234  1235 I Tag: hello\n"), TM_TYPE_UNKNOWN);
	/* Banners are skipped however many there are, up to byte 4096. */
	char big[5000];
	size_t k = 0;
	while (k + 20 < 4000)
		k += (size_t)sprintf(big + k, "--------- banner --\n");
	strcpy(big + k, "01-02 03:04:05.678  1 2 I T: m\n");
	CHECK_INT(sniff_str(big), TM_TYPE_ANDROID_LOGCAT);
	memset(big, '-', 4090);
	big[4090] = '\n';
	strcpy(big + 4091, "01-02 03:04:05.678  1 2 I T: m\n");
	CHECK_INT(sniff_bytes(big, 4096), TM_TYPE_UNKNOWN); /* line cut at 4096 */
	CHECK_INT(sniff_bytes(big, strlen(big)), TM_TYPE_UNKNOWN); /* read past 4096: not */
}

/* Priority 190: up to three non-blank, non-comment lines "a;b count". */
static void test_collapsed_stack(void)
{
	CHECK_INT(sniff_str("main;foo;bar 12\nmain;foo 3\n"), TM_TYPE_COLLAPSED_STACK);
	CHECK_INT(sniff_str("# comment\n\n  a;b 1\r\n"), TM_TYPE_COLLAPSED_STACK);
	CHECK_INT(sniff_str("a;b 12"), TM_TYPE_COLLAPSED_STACK); /* no '\n' needed */
	CHECK_INT(sniff_str("a;b c 7\n"), TM_TYPE_COLLAPSED_STACK); /* last space only */
	/* A fourth line is not looked at. */
	CHECK_INT(sniff_str("a;b 1\na;c 2\na;d 3\nnot a stack\n"), TM_TYPE_COLLAPSED_STACK);
	CHECK_INT(sniff_str("a;b 1\nnot a stack\na;d 3\n"), TM_TYPE_UNKNOWN);
	/* Near misses: no ';', count not all digits, no space, tab before the
	 * count. */
	CHECK_INT(sniff_str("ab 12\n"), TM_TYPE_UNKNOWN);
	CHECK_INT(sniff_str("a;b 12x\n"), TM_TYPE_UNKNOWN);
	CHECK_INT(sniff_str("a;b\n"), TM_TYPE_UNKNOWN);
	CHECK_INT(sniff_str("a;b\t12\n"), TM_TYPE_UNKNOWN);
	CHECK_INT(sniff_str("# only a comment\n"), TM_TYPE_UNKNOWN);
	/* A ';' after the last space does not count. */
	CHECK_INT(sniff_str("ab 1;2\n"), TM_TYPE_UNKNOWN);
	/* A strace line has a count-like tail but no ';': strace, not this. */
	CHECK_INT(sniff_str("1700000000.123456 openat(AT_FDCWD, \"/x\", O_RDONLY) = 3\n"), TM_TYPE_STRACE);
	/* ...but with a ';' in it, collapsed_stack (190) wins over strace (197). */
	CHECK_INT(sniff_str("1700000000.123456 write(1, \"a;b\", 3) = 3\n"), TM_TYPE_COLLAPSED_STACK);
}

/* Priority 195: the first line (it needs its '\n') holds a `perf script`
 * sample header before some ':'. */
static void test_perf_text(void)
{
	CHECK_INT(sniff_str("trace_processor 3962131 303057.417513:          1 cpu_atom/cycles/Pu:\n"),
		  TM_TYPE_PERF_TEXT);
	CHECK_INT(sniff_str("perf  1234 [001] 12345.678901: 1 cycles:\n"), TM_TYPE_PERF_TEXT);
	CHECK_INT(sniff_str("perf 10/11 [3] 1.000000: x\n"), TM_TYPE_PERF_TEXT);
	CHECK_INT(sniff_str("my comm\t1234 12345.678901: x\n"), TM_TYPE_PERF_TEXT); /* simpleperf tab */
	/* An empty command name is accepted... */
	CHECK_INT(sniff_str("1234 12345.678901: cycles:\n"), TM_TYPE_PERF_TEXT);
	/* ...and so are no digits before the dot, and empty '/' pieces. */
	CHECK_INT(sniff_str("c 1 .123456:\n"), TM_TYPE_PERF_TEXT);
	CHECK_INT(sniff_str("c /12/ 1.123456:\n"), TM_TYPE_PERF_TEXT);
	/* strtoul's syntax: a sign is fine. */
	CHECK_INT(sniff_str("c -5 1.123456:\n"), TM_TYPE_PERF_TEXT);
	/* A later ':' may be the one that works. */
	CHECK_INT(sniff_str("a:b c 12 1.123456: x\n"), TM_TYPE_PERF_TEXT);
	/* Near misses. A lone [cpu] starting with a space is systrace. */
	CHECK_INT(sniff_str("  [001] 12345.678901: x:\n"), TM_TYPE_SYSTRACE);
	CHECK_INT(sniff_str("perf 1234 12345.678901: x:"), TM_TYPE_UNKNOWN); /* no '\n' */
	CHECK_INT(sniff_str("perf 1234 12345.67890: x\n"), TM_TYPE_UNKNOWN);  /* 5 decimals */
	CHECK_INT(sniff_str("perf 1234 1x2345.678901: x\n"), TM_TYPE_UNKNOWN);
	CHECK_INT(sniff_str("perf 1234\t12345.678901: x\n"), TM_TYPE_UNKNOWN); /* needs a space */
	CHECK_INT(sniff_str("perf 1/2/3 12345.678901: x\n"), TM_TYPE_UNKNOWN);
	CHECK_INT(sniff_str("perf 12a 12345.678901: x\n"), TM_TYPE_UNKNOWN);
	CHECK_INT(sniff_str("perf 12 [x] 12345.678901: x\n"), TM_TYPE_UNKNOWN);
	CHECK_INT(sniff_str("perf // 12345.678901: x\n"), TM_TYPE_UNKNOWN);
	/* Only the first line is looked at. */
	CHECK_INT(sniff_str("hello\nperf 1234 12345.678901: x\n"), TM_TYPE_UNKNOWN);
	/* Many ':' after times with no space before them: none is a head,
	 * the one at the end is (each ':' is checked without scanning back) */
	CHECK_INT(sniff_str("0.000000:0.000000:0.000000:0.000000: x 7 1.000000: y\n"), TM_TYPE_PERF_TEXT);
	CHECK_INT(sniff_str("0.000000:0.000000:0.000000:0.000000:\n"), TM_TYPE_UNKNOWN);
	/* the text from the space to the dot must be digits: "1:" breaks it,
	 * though a space and digits come before */
	CHECK_INT(sniff_str("p 8 1:2.000000: x\n"), TM_TYPE_UNKNOWN);
	CHECK_INT(sniff_str("p 8 12.000000:.000000: x\n"), TM_TYPE_PERF_TEXT);
	/* a head fails at its first time ("[1]" alone) and a later one works */
	CHECK_INT(sniff_str("[1] 2.000000: x 3 4.000000:\n"), TM_TYPE_PERF_TEXT);
	/* 450 candidate ':' before the head, as a 4 KB member may hold */
	char line[4200];
	size_t at = 0;
	for (int i = 0; i < 450; i++, at += 9)
		memcpy(line + at, "0.000000:", 9);
	strcpy(line + at, " x 1 1.000000: 1 cycles:\n");
	CHECK_INT(sniff_str(line), TM_TYPE_PERF_TEXT);
	line[at] = 'z'; /* "...0.000000:zx 1 ..." keeps its head */
	CHECK_INT(sniff_str(line), TM_TYPE_PERF_TEXT);
	line[at + 3] = ':'; /* " x 1:1.000000:" no longer has one */
	CHECK_INT(sniff_str(line), TM_TYPE_UNKNOWN);
}

/* Priority 197: the first line is an strace -ttt line. */
static void test_strace(void)
{
	CHECK_INT(sniff_str("1700000000.123456 openat(AT_FDCWD, \"/x\", O_RDONLY) = 3\n"), TM_TYPE_STRACE);
	CHECK_INT(sniff_str("1234 1700000000.123456 read(3, \"x\", 1) = 1"), TM_TYPE_STRACE);
	CHECK_INT(sniff_str("1234  1700000000 close(3)\n= 0"), TM_TYPE_UNKNOWN); /* '=' on line 2 */
	CHECK_INT(sniff_str("1234 1700000000.5 read(3, <unfinished ...>\n"), TM_TYPE_STRACE);
	CHECK_INT(sniff_str("1234 1700000000.000500 <... read resumed>) = 3\n"), TM_TYPE_STRACE);
	CHECK_INT(sniff_str("\t1700000000. x(=\n"), TM_TYPE_STRACE); /* empty fraction */
	CHECK_INT(sniff_str("5 -0 x(=\n"), TM_TYPE_STRACE);		/* "-0" is zero */
	CHECK_INT(sniff_str("9223372036 x(=\n"), TM_TYPE_STRACE);	/* the largest second */
	/* Near misses. */
	CHECK_INT(sniff_str("9223372037 x(=\n"), TM_TYPE_UNKNOWN); /* overflows ns */
	CHECK_INT(sniff_str("1700000000.1234567 x(=\n"), TM_TYPE_UNKNOWN); /* > 999999 us */
	CHECK_INT(sniff_str("12:00:00.000000 read(3) = 1\n"), TM_TYPE_UNKNOWN); /* -tt */
	CHECK_INT(sniff_str("1234 1700000000.1 read(3)\n"), TM_TYPE_UNKNOWN);  /* no '=' */
	CHECK_INT(sniff_str("1700000000.1 read\n"), TM_TYPE_UNKNOWN);		/* no '(' */
	CHECK_INT(sniff_str("1234 1700000000.1 <... read> = 1\n"), TM_TYPE_UNKNOWN);
	CHECK_INT(sniff_str("--- SIGCHLD 1.0 x(=\n"), TM_TYPE_UNKNOWN);
	CHECK_INT(sniff_str("+++ exited 1.0 x(=\n"), TM_TYPE_UNKNOWN);
	CHECK_INT(sniff_str("1700000000.1\n"), TM_TYPE_UNKNOWN);
	/* Ten digits are a timestamp, not a pid; the call name is then all
	 * before '(', spaces included. */
	CHECK_INT(sniff_str("1234567890 1700000000.1 x(=\n"), TM_TYPE_STRACE);
	CHECK_INT(sniff_str("1234567890 1700000000.1 x()\n"), TM_TYPE_UNKNOWN);
	/* A leading space would make it systrace, but strace (197) runs first. */
	CHECK_INT(sniff_str(" 1700000000.1 x() = 0\n"), TM_TYPE_STRACE);
	/* '\r' is not trimmed: "\r1234" is no pid and no timestamp. */
	CHECK_INT(sniff_str("\r1234 1700000000.1 x() = 0\n"), TM_TYPE_UNKNOWN);
}

/* Priority 210 (symbols), 220 (pprof, not in the spec table), 230 (proto),
 * 240 (primes). */
static void test_protos(void)
{
	tm_buf t = {0}, p = {0}, m = {0};
	/* packet { module_symbols { path: "" } } */
	f_bytes(&m, MODULE_SYMBOLS_PATH, "", 0);
	f_msg(&p, F_TracePacket_module_symbols, &m);
	f_msg(&t, F_Trace_packet, &p);
	size_t packet_len = t.len - 2; /* a one-byte tag and length before it */
	CHECK_INT(sniff_buf(&t), TM_TYPE_SYMBOLS);
	/* Over-long varints are still the same numbers: the packet's tag and
	 * length in two bytes each, module_symbols' tag in three. The bytes
	 * stop after that tag, the last thing the rule reads. */
	put_varint_wide(&t, TM_PB_TAG(F_Trace_packet, TM_PB_LEN), 2);
	put_varint_wide(&t, packet_len, 2);
	put_varint_wide(&t, TM_PB_TAG(F_TracePacket_module_symbols, TM_PB_LEN), 3);
	CHECK_INT(sniff_buf(&t), TM_TYPE_SYMBOLS);
	/* A zero-length first packet, or another first field: plain proto. */
	f_bytes(&t, F_Trace_packet, "", 0);
	f_bytes(&t, F_TracePacket_module_symbols, "", 0); /* after the packet, not in it */
	CHECK_INT(sniff_buf(&t), TM_TYPE_PROTO);
	/* The packet's first tag is another field's (any tag but
	 * module_symbols' LEN one fails the rule), then zero bytes up to the
	 * symbols packet's length. */
	static const char zeros[8];
	f_var(&p, F_TracePacket_ftrace_events, 1);
	tm_buf_put(&p, zeros, packet_len - p.len);
	f_msg(&t, F_Trace_packet, &p);
	CHECK_INT(sniff_buf(&t), TM_TYPE_PROTO);
	/* A truncated tag: module_symbols' takes two bytes; only the first is
	 * there, in a packet whose length the bytes do not reach. */
	tag(&t, F_Trace_packet, TM_PB_LEN);
	put_varint(&t, packet_len);
	tag(&t, F_TracePacket_module_symbols, TM_PB_LEN);
	CHECK_INT(sniff_buf_n(&t, t.len - 1), TM_TYPE_PROTO);
	/* pprof: sample_type, sample, string_table... (>= 10 bytes, a core
	 * field, every field a Profile field of the right wire type). */
	f_var(&m, VALUE_TYPE_TYPE, 1);
	f_msg(&t, PROFILE_SAMPLE_TYPE, &m);
	size_t after_sample_type = t.len;
	f_var(&m, SAMPLE_LOCATION_ID, 1);
	f_msg(&t, PROFILE_SAMPLE, &m);
	f_bytes(&t, PROFILE_STRING_TABLE, "x", 1);
	f_var(&t, PROFILE_TIME_NANOS, 5);
	tm_type whole = sniff_range(&t, 0, t.len);
	tm_type too_short = sniff_range(&t, 0, 9);
	tm_type rest = sniff_range(&t, after_sample_type, t.len - after_sample_type); /* 9 bytes */
	tm_buf_free(&t);
	CHECK_INT(whole, TM_TYPE_PPROF);
	CHECK_INT(too_short, TM_TYPE_PROTO);
	CHECK_INT(rest, TM_TYPE_UNKNOWN);
	/* A truncated last field ends the walk without failing it: string_table
	 * says nine bytes and holds one. */
	f_var(&m, SAMPLE_LOCATION_ID, 1);
	f_msg(&t, PROFILE_SAMPLE, &m);
	f_var(&m, VALUE_TYPE_TYPE, 1);
	f_msg(&t, PROFILE_SAMPLE_TYPE, &m);
	tag(&t, PROFILE_STRING_TABLE, TM_PB_LEN);
	put_varint(&t, 9);
	tm_buf_putc(&t, 'x');
	CHECK_INT(sniff_buf(&t), TM_TYPE_PPROF);
	/* Ids above 2^24 - 1 are skipped, not rejected. */
	f_bytes(&t, PROFILE_SAMPLE, "", 0);
	f_var(&t, TM_PB_MAX_FIELD_ID + 1, 0);
	f_bytes(&t, PROFILE_SAMPLE_TYPE, "", 0);
	f_bytes(&t, PROFILE_SAMPLE_TYPE, "", 0);
	CHECK_INT(sniff_buf(&t), TM_TYPE_PPROF);
	/* A perfetto trace has packets only: Trace.packet has sample_type's
	 * number and wire type, so it reads as sample_types and no core field
	 * (the packets here hold a sample_type's bytes; the rule does not look
	 * inside). */
	f_var(&m, VALUE_TYPE_TYPE, 1);
	f_msg(&t, F_Trace_packet, &m);
	f_var(&m, VALUE_TYPE_TYPE, 1);
	f_msg(&t, F_Trace_packet, &m);
	f_bytes(&t, F_Trace_packet, "", 0);
	CHECK_INT(sniff_buf(&t), TM_TYPE_PROTO);
	/* sample as a varint, or a non-Profile field: not pprof. */
	f_bytes(&t, PROFILE_SAMPLE_TYPE, "", 0);
	f_var(&t, PROFILE_SAMPLE, 1);
	f_var(&m, VALUE_TYPE_TYPE, 1);
	f_msg(&t, PROFILE_SAMPLE_TYPE, &m);
	f_bytes(&t, PROFILE_SAMPLE_TYPE, "", 0);
	CHECK_INT(sniff_buf(&t), TM_TYPE_PROTO);
	f_bytes(&t, PROFILE_SAMPLE_TYPE, "", 0);
	f_bytes(&t, PROFILE_SAMPLE, "", 0);
	f_bytes(&t, PROFILE_UNKNOWN_FIELD, "", 0);
	f_bytes(&t, PROFILE_SAMPLE_TYPE, "", 0);
	f_bytes(&t, PROFILE_SAMPLE_TYPE, "", 0);
	CHECK_INT(sniff_buf(&t), TM_TYPE_PROTO);
	/* drop_frames is a varint and a core field; comment may be packed. */
	static const uint64_t comments[] = {1, 2};
	f_var(&t, PROFILE_DROP_FRAMES, 1);
	f_packed(&t, PROFILE_COMMENT, comments, 2);
	f_var(&t, PROFILE_COMMENT, 3);
	f_var(&t, PROFILE_TIME_NANOS, 1);
	CHECK_INT(sniff_buf(&t), TM_TYPE_PPROF);
	/* primes: detect.c's one-byte magic, matched as bytes. */
	CHECK_INT(sniff_bytes("\x09\x00\x00", 3), TM_TYPE_PRIMES);
}

static void test_other_rules(void)
{
	CHECK_INT(sniff_str("9,0,i,vers,36,214,PQ1A"), TM_TYPE_ANDROID_DUMPSTATE);
	CHECK_INT(sniff_str("========================================================\n"
			    "== dumpstate: 2024-01-01 00:00:00\n"),
		  TM_TYPE_ANDROID_DUMPSTATE);
	CHECK_INT(sniff_str("========================================================\n"
			    "== dumpstate 2024\n"),
		  TM_TYPE_UNKNOWN);
	CHECK_INT(sniff_bytes("SLOW", 4), TM_TYPE_ART_METHOD);	 /* no version */
	CHECK_INT(sniff_bytes("SLOW\xf4\x00", 6), TM_TYPE_ART_METHOD_V2);
	CHECK_INT(sniff_bytes("SLOW\x04\x01", 6), TM_TYPE_ART_METHOD); /* 0x0104 */
	CHECK_INT(sniff_str("*version"), TM_TYPE_UNKNOWN);
	CHECK_INT(sniff_str("<?xml version=\"1.0\"?><trace-query-result>"), TM_TYPE_UNKNOWN);
	CHECK_INT(sniff_str("# ninja lo"), TM_TYPE_UNKNOWN);
	/* "TRACE:\n" must lie within the first 128 bytes. */
	char s[300];
	memset(s, 'x', 200);
	strcpy(s + 121, "TRACE:\n");
	CHECK_INT(sniff_str(s), TM_TYPE_SYSTRACE);
	strcpy(s + 122, "TRACE:\n");
	CHECK_INT(sniff_str(s), TM_TYPE_UNKNOWN);
	CHECK_INT(sniff_str("<HtMl>"), TM_TYPE_SYSTRACE);
	CHECK_INT(sniff_str("<htm"), TM_TYPE_UNKNOWN);
	/* JSON: a NUL is no blank. */
	CHECK_INT(sniff_bytes("{\0\"a\":1}", 8), TM_TYPE_UNKNOWN);
	CHECK_INT(tm_detect(NULL, 0), TM_TYPE_UNKNOWN);
}

static void test_priorities(void)
{
	CHECK_INT(tm_type_archive_priority(TM_TYPE_MANIFEST), -1);
	CHECK_INT(tm_type_archive_priority(TM_TYPE_PROTO), 0);
	CHECK_INT(tm_type_archive_priority(TM_TYPE_ZIP), 1);
	CHECK_INT(tm_type_archive_priority(TM_TYPE_GZIP), 1);
	CHECK_INT(tm_type_archive_priority(TM_TYPE_TAR), 1);
	CHECK_INT(tm_type_archive_priority(TM_TYPE_ZSTD), 1);
	CHECK_INT(tm_type_archive_priority(TM_TYPE_CTRACE), 2);
	CHECK_INT(tm_type_archive_priority(TM_TYPE_JSON), 2);
	CHECK_INT(tm_type_archive_priority(TM_TYPE_SYSTRACE), 2);
	CHECK_INT(tm_type_archive_priority(TM_TYPE_SYMBOLS), 3);
	CHECK_STR(tm_type_name(TM_TYPE_GECKO), "gecko");
	CHECK_STR(tm_type_name(TM_TYPE_MANIFEST), "perfetto_manifest");
	CHECK_STR(tm_type_name(TM_TYPE_PPROF), "pprof");
	CHECK_STR(tm_type_name(TM_TYPE_ZSTD), "zstd");
	CHECK_STR(tm_type_name(TM_TYPE_UNKNOWN), "unknown");
	/* what the reference imports and tracemount only recognises says so;
	 * what it merges, walks or cannot name does not */
	CHECK(tm_type_unexported(TM_TYPE_PERF) == NULL);
	CHECK(tm_type_unexported(TM_TYPE_SIMPLEPERF_PROTO) != NULL);
	CHECK(tm_type_unexported(TM_TYPE_GECKO) == NULL);
	CHECK(tm_type_unexported(TM_TYPE_ART_HPROF) == NULL);
	CHECK(tm_type_unexported(TM_TYPE_ANDROID_LOGCAT) != NULL);
	CHECK(tm_type_unexported(TM_TYPE_PROTO) == NULL);
	CHECK(tm_type_unexported(TM_TYPE_NINJA_LOG) == NULL);
	CHECK(tm_type_unexported(TM_TYPE_STRACE) == NULL);
	CHECK(tm_type_unexported(TM_TYPE_PERF_TEXT) == NULL);
	CHECK(tm_type_unexported(TM_TYPE_COLLAPSED_STACK) == NULL);
	CHECK(tm_type_unexported(TM_TYPE_JSON) == NULL);
	CHECK(tm_type_unexported(TM_TYPE_SYSTRACE) == NULL);
	CHECK(tm_type_unexported(TM_TYPE_ZSTD) == NULL);
	CHECK(tm_type_unexported(TM_TYPE_CTRACE) == NULL);
	CHECK(tm_type_unexported(TM_TYPE_MANIFEST) == NULL);
	CHECK(tm_type_unexported(TM_TYPE_UNKNOWN) == NULL);
	CHECK_INT(tm_type_archive_priority(TM_TYPE_PPROF), 2);
	CHECK(!tm_type_is_supported(TM_TYPE_PPROF) && !tm_type_is_container(TM_TYPE_PPROF));
}

int main(void)
{
	TT_RUN(test_prefix_types);
	TT_RUN(test_tar_magic);
	TT_RUN(test_manifest_whitespace);
	TT_RUN(test_json_and_gecko);
	TT_RUN(test_systrace_rules);
	TT_RUN(test_logcat);
	TT_RUN(test_collapsed_stack);
	TT_RUN(test_perf_text);
	TT_RUN(test_strace);
	TT_RUN(test_protos);
	TT_RUN(test_other_rules);
	TT_RUN(test_priorities);
	TT_DONE();
}
