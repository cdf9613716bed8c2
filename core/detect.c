/* core/detect.c - the sniffers of spec/formats.md §1.2, in priority order. */
#include "detect.h"

#include <ctype.h>
#include <stdint.h>
#include <string.h>

#define WINDOW 128

static int starts(const unsigned char *b, size_t n, const char *lit, size_t len)
{
	return n >= len && memcmp(b, lit, len) == 0;
}
#define STARTS(b, n, lit) starts((b), (n), (lit), sizeof(lit) - 1)

/* The first min(n, 128) bytes with every whitespace byte removed
 * (manifest.md §2: space, \t, \n, \v, \f, \r anywhere in the window). */
static size_t squeeze_window(const unsigned char *b, size_t n, char *out)
{
	size_t k = 0;
	for (size_t i = 0; i < n && i < WINDOW; i++) {
		unsigned char c = b[i];
		if (c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r')
			continue;
		out[k++] = (char)c;
	}
	out[k] = '\0';
	return k;
}

static int window_contains(const unsigned char *b, size_t n, const char *needle)
{
	size_t w = n < WINDOW ? n : WINDOW, l = strlen(needle);
	for (size_t i = 0; i + l <= w; i++)
		if (memcmp(b + i, needle, l) == 0)
			return 1;
	return 0;
}

static int is_tar(const unsigned char *b, size_t n)
{
	return (n >= 263 && memcmp(b + 257, "ustar\0", 6) == 0) ||
	       (n >= 265 && memcmp(b + 257, "ustar  \0", 8) == 0);
}

static int is_art_method_v2(const unsigned char *b, size_t n)
{
	if (!STARTS(b, n, "SLOW") || n < 6)
		return 0;
	unsigned v = (unsigned)b[4] | (unsigned)b[5] << 8;
	return v == 0x0004 || v == 0x0005 || v == 0x00f4 || v == 0x00f5;
}

static int is_ctrace(const unsigned char *b, size_t n)
{
	size_t w = n < WINDOW ? n : WINDOW;
	for (size_t i = 0; i + 9 <= w; i++)
		if (memcmp(b + i, "TRACE:\n\x78\x9c", 9) == 0)
			return 1;
	return 0;
}

/* The first line of the input (without its newline), bounded by `n`. */
static size_t first_line(const unsigned char *b, size_t n, size_t from)
{
	size_t i = from;
	while (i < n && b[i] != '\n')
		i++;
	return i - from;
}

static int all_digits(const unsigned char *p, size_t n)
{
	if (n == 0)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!isdigit(p[i]))
			return 0;
	return 1;
}

/* android_logcat: the first line that is not a "--------- beginning of"
 * banner, within 4096 bytes, looks like a `logcat -v threadtime` line:
 * "MM-DD HH:MM:SS.mmm  PID  TID L TAG: msg" (optionally with a year). */
static int is_logcat(const unsigned char *b, size_t n)
{
	size_t lim = n < 4096 ? n : 4096, pos = 0;
	while (pos < lim) {
		size_t len = first_line(b, lim, pos);
		if (len >= 8 && memcmp(b + pos, "--------", 8) == 0) {
			pos += len + 1;
			continue;
		}
		const unsigned char *p = b + pos;
		size_t i = 0;
		/* optional year "YYYY-" */
		if (len >= 5 && all_digits(p, 4) && p[4] == '-')
			i = 5;
		if (len < i + 18)
			return 0;
		const unsigned char *q = p + i;
		if (!(isdigit(q[0]) && isdigit(q[1]) && q[2] == '-' && isdigit(q[3]) && isdigit(q[4]) &&
		      q[5] == ' ' && isdigit(q[6]) && isdigit(q[7]) && q[8] == ':' && isdigit(q[9]) &&
		      isdigit(q[10]) && q[11] == ':' && isdigit(q[12]) && isdigit(q[13]) && q[14] == '.'))
			return 0;
		size_t j = i + 15;
		while (j < len && isdigit(p[j]))
			j++;
		/* pid, tid, level */
		for (int field = 0; field < 2; field++) {
			size_t s = j;
			while (j < len && p[j] == ' ')
				j++;
			if (j == s)
				return 0;
			s = j;
			while (j < len && (isdigit(p[j]) || p[j] == '-'))
				j++;
			if (j == s)
				return 0;
		}
		if (j >= len || p[j] != ' ')
			return 0;
		while (j < len && p[j] == ' ')
			j++;
		return j + 1 < len && strchr("VDIWEFA", p[j]) && p[j + 1] == ' ';
	}
	return 0;
}

/* collapsed_stack (flamegraph input): one line "frame;frame count" after
 * trimming blanks: digits after the last space, and a ';' before it. */
static int is_collapsed_line(const unsigned char *p, size_t len)
{
	size_t a = 0, e = len;
	while (a < len && isspace(p[a]))
		a++;
	while (e > a && isspace(p[e - 1]))
		e--;
	if (a == e || p[a] == '#')
		return 0;
	size_t sp = e;
	while (sp > a && p[sp - 1] != ' ')
		sp--;
	if (sp == a || sp == e) /* no space, or nothing after it */
		return 0;
	if (!all_digits(p + sp, e - sp) || sp - 1 == a)
		return 0;
	return memchr(p + a, ';', sp - 1 - a) != NULL;
}

/* Up to three non-blank, non-comment lines must all be collapsed stacks. */
static int is_collapsed_stack(const unsigned char *b, size_t n)
{
	size_t pos = 0;
	int seen = 0;
	while (pos < n && seen < 3) {
		size_t len = first_line(b, n, pos);
		const unsigned char *p = b + pos;
		size_t a = 0;
		while (a < len && isspace(p[a]))
			a++;
		if (a < len && p[a] != '#') {
			if (!is_collapsed_line(p, len))
				return 0;
			seen++;
		}
		pos += len + 1;
	}
	return seen > 0;
}

/* A decimal uint32 spanning exactly p[0..n). */
static int is_u32(const unsigned char *p, size_t n)
{
	if (n == 0 || n > 10 || !all_digits(p, n))
		return 0;
	unsigned long long v = 0;
	for (size_t i = 0; i < n; i++)
		v = v * 10 + (p[i] - '0');
	return v <= 0xffffffffull;
}

/* perf_text: the first line (it must end in '\n') is a `perf script`
 * sample header. For some ':' the text before it ends in " <digits>.<6
 * digits>"; before that timestamp, the last blank-separated piece is an
 * optional "[cpu]" (not alone) and then "tid" or "pid/tid"; whatever
 * precedes is the command name, possibly empty. */
static int perf_sample_before_colon(const unsigned char *l, size_t n)
{
	if (n < 8)
		return 0;
	if (!all_digits(l + n - 6, 6) || l[n - 7] != '.')
		return 0;
	size_t dot = n - 7, sp = dot;
	while (sp > 0 && l[sp - 1] != ' ')
		sp--;
	if (sp == 0 || !all_digits(l + sp, dot - sp) || sp == dot)
		return 0;
	/* Pieces before the timestamp, tabs counting as blanks. */
	size_t e = sp - 1;
	while (e > 0 && (l[e - 1] == ' ' || l[e - 1] == '\t'))
		e--;
	if (e == 0)
		return 0;
	size_t b = e;
	while (b > 0 && l[b - 1] != ' ' && l[b - 1] != '\t')
		b--;
	if (l[b] == '[' && l[e - 1] == ']') {
		if (!is_u32(l + b + 1, e - b - 2))
			return 0;
		e = b;
		while (e > 0 && (l[e - 1] == ' ' || l[e - 1] == '\t'))
			e--;
		if (e == 0)
			return 0; /* a lone [cpu] */
		b = e;
		while (b > 0 && l[b - 1] != ' ' && l[b - 1] != '\t')
			b--;
	}
	const unsigned char *slash = memchr(l + b, '/', e - b);
	if (!slash)
		return is_u32(l + b, e - b);
	size_t pl = (size_t)(slash - (l + b));
	return is_u32(l + b, pl) && is_u32(slash + 1, e - b - pl - 1);
}

static int is_perf_text(const unsigned char *b, size_t n)
{
	const unsigned char *nl = memchr(b, '\n', n);
	if (!nl)
		return 0;
	size_t len = (size_t)(nl - b);
	for (size_t i = 0; i < len; i++)
		if (b[i] == ':' && perf_sample_before_colon(b, i))
			return 1;
	return 0;
}

/* strace -ttt: "[pid N ]<secs>.<usecs> syscall(" */
static int is_strace(const unsigned char *b, size_t n)
{
	size_t len = first_line(b, n < 4096 ? n : 4096, 0), i = 0;
	if (len > 5 && memcmp(b, "[pid ", 5) == 0) {
		i = 5;
		while (i < len && b[i] == ' ')
			i++;
		size_t s = i;
		while (i < len && isdigit(b[i]))
			i++;
		if (i == s || i >= len || b[i] != ']')
			return 0;
		i++;
		while (i < len && b[i] == ' ')
			i++;
	}
	size_t s = i;
	while (i < len && isdigit(b[i]))
		i++;
	if (i - s < 9 || i >= len || b[i] != '.')
		return 0;
	i++;
	s = i;
	while (i < len && isdigit(b[i]))
		i++;
	if (i - s != 6 || i >= len || b[i] != ' ')
		return 0;
	i++;
	s = i;
	while (i < len && (isalnum(b[i]) || b[i] == '_'))
		i++;
	return i > s && i < len && b[i] == '(';
}

static int is_systrace(const unsigned char *b, size_t n)
{
	if (window_contains(b, n, "# tracer"))
		return 1;
	char low[16];
	size_t k = 0;
	for (; k < sizeof(low) - 1 && k < n; k++)
		low[k] = (char)tolower(b[k]);
	low[k] = '\0';
	if (strncmp(low, "<!doctype html>", 15) == 0 || strncmp(low, "<html>", 6) == 0)
		return 1;
	if (window_contains(b, n, "TRACE:\n"))
		return 1;
	return STARTS(b, n, "cpus=") || (n > 0 && b[0] == ' ');
}

/* symbols: a proto whose first packet's first field is module_symbols (61). */
static int is_symbols(const unsigned char *b, size_t n)
{
	if (n < 2 || b[0] != 0x0a)
		return 0;
	size_t i = 1;
	for (int shift = 0; i < n && shift < 64; shift += 7)
		if (!(b[i++] & 0x80))
			goto len_done;
	return 0;
len_done:
	/* field 61, wire type 2: tag = (61 << 3) | 2 = 490 = 0xea 0x03 */
	return i + 1 < n && b[i] == 0xea && b[i + 1] == 0x03;
}

static int is_dumpstate(const unsigned char *b, size_t n)
{
	return STARTS(b, n, "9,0,i,vers,") ||
	       STARTS(b, n, "========================================================\n== dumpstate");
}

tm_type tm_detect(const unsigned char *b, size_t n)
{
	char sq[WINDOW + 1];
	squeeze_window(b, n, sq);

	if (is_tar(b, n))
		return TM_TYPE_TAR;
	if (STARTS(b, n, "ARROW1"))
		return TM_TYPE_ARROW;
	if (STARTS(b, n, "\x10\x00\x04\x46\x78\x54\x16\x00"))
		return TM_TYPE_FUCHSIA;
	if (STARTS(b, n, "PERFILE2"))
		return TM_TYPE_PERF;
	if (STARTS(b, n, "SIMPLEPERF"))
		return TM_TYPE_SIMPLEPERF_PROTO;
	if (STARTS(b, n, "PK\x03\x04"))
		return TM_TYPE_ZIP;
	if (STARTS(b, n, "\x1f\x8b"))
		return TM_TYPE_GZIP;
	if (STARTS(b, n, "\x28\xb5\x2f\xfd"))
		return TM_TYPE_ZSTD;
	if (is_art_method_v2(b, n))
		return TM_TYPE_ART_METHOD_V2;
	if (STARTS(b, n, "SLOW") || STARTS(b, n, "*version\n"))
		return TM_TYPE_ART_METHOD;
	if (STARTS(b, n, "JAVA PROFILE"))
		return TM_TYPE_ART_HPROF;
	if (strncmp(sq, "{\"perfetto_manifest\"", 20) == 0)
		return TM_TYPE_MANIFEST;
	if (strncmp(sq, "{\"meta\"", 7) == 0 || strncmp(sq, "{\"libs\"", 7) == 0)
		return TM_TYPE_GECKO;
	if (strncmp(sq, "{\"", 2) == 0 || strncmp(sq, "[{\"", 3) == 0)
		return TM_TYPE_JSON;
	if (STARTS(b, n, "<?xml version=\"1.0\"?>\n<trace-query-result>"))
		return TM_TYPE_INSTRUMENTS_XML;
	if (is_ctrace(b, n))
		return TM_TYPE_CTRACE;
	if (STARTS(b, n, "# ninja log"))
		return TM_TYPE_NINJA_LOG;
	if (is_logcat(b, n))
		return TM_TYPE_ANDROID_LOGCAT;
	if (is_collapsed_stack(b, n))
		return TM_TYPE_COLLAPSED_STACK;
	if (is_perf_text(b, n))
		return TM_TYPE_PERF_TEXT;
	if (is_strace(b, n))
		return TM_TYPE_STRACE;
	if (is_systrace(b, n))
		return TM_TYPE_SYSTRACE;
	if (is_symbols(b, n))
		return TM_TYPE_SYMBOLS;
	if (n > 0 && b[0] == 0x0a)
		return TM_TYPE_PROTO;
	if (n > 0 && b[0] == 0x09)
		return TM_TYPE_PRIMES;
	if (is_dumpstate(b, n))
		return TM_TYPE_ANDROID_DUMPSTATE;
	/* tracemount extensions, tried last so they never shadow a reference type */
	if (STARTS(b, n, "BZh") && n >= 4 && b[3] >= '1' && b[3] <= '9')
		return TM_TYPE_BZIP2;
	if (STARTS(b, n, "\xfd" "7zXZ\x00"))
		return TM_TYPE_XZ;
	return TM_TYPE_UNKNOWN;
}

static const struct {
	const char *format; /* the reference's name */
	const char *meta;   /* metadata.json's name */
	int priority;
	int container;
	int supported;
} types[TM_TYPE_COUNT] = {
	[TM_TYPE_UNKNOWN] = {"unknown", "unknown", 2, 0, 0},
	[TM_TYPE_TAR] = {"tar", "tar", 1, 1, 1},
	[TM_TYPE_ARROW] = {"arrow", "unknown", 2, 0, 0},
	[TM_TYPE_FUCHSIA] = {"fuchsia", "unknown", 2, 0, 0},
	[TM_TYPE_PERF] = {"perf", "unknown", 2, 0, 0},
	[TM_TYPE_SIMPLEPERF_PROTO] = {"simpleperf_proto", "unknown", 2, 0, 0},
	[TM_TYPE_ZIP] = {"zip", "zip", 1, 1, 1},
	[TM_TYPE_GZIP] = {"gzip", "gzip", 1, 1, 1},
	[TM_TYPE_ZSTD] = {"zstd", "unknown", 1, 1, 1},
	[TM_TYPE_ART_METHOD_V2] = {"art_method_v2", "unknown", 2, 0, 0},
	[TM_TYPE_ART_METHOD] = {"art_method", "unknown", 2, 0, 0},
	[TM_TYPE_ART_HPROF] = {"art_hprof", "unknown", 2, 0, 0},
	[TM_TYPE_MANIFEST] = {"perfetto_manifest", "perfetto_manifest", -1, 0, 1},
	[TM_TYPE_GECKO] = {"gecko", "unknown", 2, 0, 0},
	[TM_TYPE_JSON] = {"json", "json", 2, 0, 1},
	[TM_TYPE_INSTRUMENTS_XML] = {"instruments_xml", "unknown", 2, 0, 0},
	[TM_TYPE_CTRACE] = {"ctrace", "unknown", 2, 1, 1},
	[TM_TYPE_NINJA_LOG] = {"ninja_log", "unknown", 2, 0, 0},
	[TM_TYPE_ANDROID_LOGCAT] = {"android_logcat", "unknown", 2, 0, 0},
	[TM_TYPE_COLLAPSED_STACK] = {"collapsed_stack", "unknown", 2, 0, 0},
	[TM_TYPE_PERF_TEXT] = {"perf_text", "unknown", 2, 0, 0},
	[TM_TYPE_STRACE] = {"strace", "unknown", 2, 0, 0},
	[TM_TYPE_SYSTRACE] = {"systrace", "systrace", 2, 0, 1},
	[TM_TYPE_SYMBOLS] = {"symbols", "unknown", 3, 0, 0},
	[TM_TYPE_PROTO] = {"proto", "proto", 0, 0, 1},
	[TM_TYPE_PRIMES] = {"primes", "unknown", 2, 0, 0},
	[TM_TYPE_ANDROID_DUMPSTATE] = {"android_dumpstate", "unknown", 2, 0, 0},
	[TM_TYPE_BZIP2] = {"bzip2", "unknown", 1, 1, 1},
	[TM_TYPE_XZ] = {"xz", "unknown", 1, 1, 1},
};

const char *tm_type_name(tm_type t)
{
	return (unsigned)t < TM_TYPE_COUNT ? types[t].meta : "unknown";
}

const char *tm_type_format_name(tm_type t)
{
	return (unsigned)t < TM_TYPE_COUNT ? types[t].format : "unknown";
}

int tm_type_archive_priority(tm_type t)
{
	return (unsigned)t < TM_TYPE_COUNT ? types[t].priority : 2;
}

int tm_type_is_container(tm_type t)
{
	return (unsigned)t < TM_TYPE_COUNT && types[t].container;
}

int tm_type_is_supported(tm_type t)
{
	return (unsigned)t < TM_TYPE_COUNT && types[t].supported;
}
