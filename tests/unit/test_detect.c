/* tests/unit/test_detect.c - the sniffers of spec/formats.md §1.2 and the
 * manifest whitespace rule of manifest.md §2. */
#include "tt.h"

#include "detect.h"

static tm_type sniff_str(const char *s)
{
	return tm_detect((const unsigned char *)s, strlen(s));
}

static tm_type sniff_bytes(const void *b, size_t n)
{
	return tm_detect(b, n);
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
	CHECK_INT(sniff_bytes("\x0a\x05hello", 7), TM_TYPE_PROTO);
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

static void test_line_formats(void)
{
	CHECK_INT(sniff_str("--------- beginning of main\n"
			    "01-02 03:04:05.678  1234  1235 I Tag: hello\n"),
		  TM_TYPE_ANDROID_LOGCAT);
	CHECK_INT(sniff_str("main;foo;bar 12\nmain;foo 3\n"), TM_TYPE_COLLAPSED_STACK);
	CHECK_INT(sniff_str("1700000000.123456 openat(AT_FDCWD, \"/x\", O_RDONLY) = 3\n"), TM_TYPE_STRACE);
	/* The reference accepts an empty command name before the pid. */
	CHECK_INT(sniff_str("            perf  1234 [001] 12345.678901: cycles:\n"), TM_TYPE_PERF_TEXT);
	CHECK_INT(sniff_str("trace_processor 3962131 303057.417513:          1 cpu_atom/cycles/Pu:\n"),
		  TM_TYPE_PERF_TEXT);
	CHECK_INT(sniff_str("  [001] 12345.678901: x:\n"), TM_TYPE_SYSTRACE); /* a lone [cpu] */
	/* No newline: not perf text (the rule needs a whole first line). */
	CHECK_INT(sniff_str("perf 1234 12345.678901: x:"), TM_TYPE_UNKNOWN);
	/* A strace line is not a collapsed stack (no ';'). */
	CHECK_INT(sniff_str("a;b 12\n"), TM_TYPE_COLLAPSED_STACK);
	CHECK_INT(sniff_str("ab 12\n"), TM_TYPE_UNKNOWN);
	CHECK_INT(sniff_str("perf  1234 [001] 12345.678901: 1 cycles:\n"), TM_TYPE_PERF_TEXT);
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
	CHECK_STR(tm_type_name(TM_TYPE_GECKO), "unknown");
	CHECK_STR(tm_type_format_name(TM_TYPE_GECKO), "gecko");
	CHECK_STR(tm_type_name(TM_TYPE_MANIFEST), "perfetto_manifest");
}

int main(void)
{
	TT_RUN(test_prefix_types);
	TT_RUN(test_tar_magic);
	TT_RUN(test_manifest_whitespace);
	TT_RUN(test_json_and_gecko);
	TT_RUN(test_systrace_rules);
	TT_RUN(test_line_formats);
	TT_RUN(test_priorities);
	TT_DONE();
}
