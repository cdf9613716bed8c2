/* core/detect/detect.c - the sniffers of spec/formats.md §1.2, in priority order.
 *
 * Every rule accepts exactly the inputs the reference's sniffer accepts,
 * including its quirks (which bytes count as blanks, which number syntax a
 * field takes, which window it reads), because the first match decides the
 * type of every archive member and a different answer changes the merge or
 * the error. The line-based rules read all the bytes they are given, as the
 * reference's do; only logcat caps itself (at 4096 bytes).
 */
#include "detect/detect.h"

#include <stdint.h>
#include <string.h>

#include "util/pb.h"
#include "trace_fields.h" /* F_<Message>_<field>: build/gen, from protos/trace.proto */

/* Most sniffers look at no more than this many leading bytes (formats.md
 * §1.1 "window"). */
#define WINDOW 128
/* android_logcat splits at most this many bytes into lines (formats.md §1.2). */
#define LOGCAT_LOOKAHEAD 4096

typedef struct span {
	const unsigned char *p;
	size_t n;
} span;

/* The reference's blank set for trimming and for the JSON window: the six
 * ASCII blanks, independent of the locale. */
static int is_blank(unsigned char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

static int is_digit(unsigned char c)
{
	return c >= '0' && c <= '9';
}

static size_t window(size_t n)
{
	return n < WINDOW ? n : WINDOW;
}

static int starts(const unsigned char *b, size_t n, const char *lit, size_t len)
{
	return n >= len && memcmp(b, lit, len) == 0;
}
#define STARTS(b, n, lit) starts((b), (n), (lit), sizeof(lit) - 1)

static const unsigned char *find(const unsigned char *b, size_t n, const char *needle, size_t len)
{
	for (size_t i = 0; i + len <= n; i++)
		if (memcmp(b + i, needle, len) == 0)
			return b + i;
	return NULL;
}
#define CONTAINS(b, n, lit) (find((b), (n), (lit), sizeof(lit) - 1) != NULL)

/* Does the window, with every blank removed, start with `lit`? (manifest.md
 * §2; the json and gecko rules use the same squeezed window.) */
static int squeezed_starts(const unsigned char *b, size_t n, const char *lit)
{
	size_t w = window(n), k = 0;
	for (size_t i = 0; i < w && lit[k]; i++) {
		if (is_blank(b[i]))
			continue;
		if (b[i] != (unsigned char)lit[k++])
			return 0;
	}
	return lit[k] == '\0';
}

/* Does the window, ASCII-lowercased, start with `lit` (given in lowercase)? */
static int lower_starts(const unsigned char *b, size_t n, const char *lit)
{
	size_t len = strlen(lit);
	if (window(n) < len)
		return 0;
	for (size_t i = 0; i < len; i++) {
		unsigned char c = b[i] >= 'A' && b[i] <= 'Z' ? (unsigned char)(b[i] + 32) : b[i];
		if (c != (unsigned char)lit[i])
			return 0;
	}
	return 1;
}

/* Trims ' ', '\t' and '\n' at both ends: the reference's TrimWhitespace,
 * which (unlike is_blank) keeps '\r', '\v' and '\f'. */
static span trim_tsn(span s)
{
	while (s.n && (s.p[0] == ' ' || s.p[0] == '\t' || s.p[0] == '\n'))
		s.p++, s.n--;
	while (s.n && (s.p[s.n - 1] == ' ' || s.p[s.n - 1] == '\t' || s.p[s.n - 1] == '\n'))
		s.n--;
	return s;
}

static span tail(span s, size_t from)
{
	return (span){s.p + from, s.n - from};
}

/* Index of the first `c` in s, or s.n. */
static size_t index_of(span s, unsigned char c)
{
	const unsigned char *q = s.n ? memchr(s.p, c, s.n) : NULL;
	return q ? (size_t)(q - s.p) : s.n;
}

/* The C-string number parser the reference uses for pids, tids and cpus
 * (strtoul, base 10, on the piece cut at its first NUL): accepted when that
 * text is blanks, an optional sign and at least one digit, nothing more.
 * The value does not matter to detection; overflow still parses. */
static int c_uint_accepts(span s)
{
	size_t n = index_of(s, '\0'), i = 0;
	while (i < n && is_blank(s.p[i]))
		i++;
	if (i < n && (s.p[i] == '+' || s.p[i] == '-'))
		i++;
	size_t digits = i;
	while (i < n && is_digit(s.p[i]))
		i++;
	return i > digits && i == n;
}

/* The reference's string-view int64 parser (one leading '+' dropped, then
 * an optional '-' and at least one digit spanning the whole piece, within
 * int64), followed by the strace range check 0 <= value <= max. max must be
 * below UINT64_MAX / 10. */
static int int64_within(span s, uint64_t max)
{
	size_t i = 0;
	if (i < s.n && s.p[i] == '+')
		i++;
	int negative = i < s.n && s.p[i] == '-';
	if (negative)
		i++;
	if (i == s.n)
		return 0;
	uint64_t v = 0;
	for (; i < s.n; i++) {
		if (!is_digit(s.p[i]))
			return 0;
		if (v <= max) /* saturates just above max: no overflow */
			v = v * 10 + (uint64_t)(s.p[i] - '0');
	}
	return negative ? v == 0 : v <= max; /* "-0" is zero, not negative */
}

/* A protobuf varint as the reference reads it: at most 10 bytes, the 10th
 * contributing its low bit only. Returns the bytes used, 0 when truncated
 * or overlong. */
static size_t varint(const unsigned char *b, size_t n, uint64_t *out)
{
	uint64_t v = 0;
	for (size_t i = 0; i < n && i < 10; i++) {
		v |= (uint64_t)(b[i] & 0x7f) << (7 * i);
		if (!(b[i] & 0x80)) {
			*out = v;
			return i + 1;
		}
	}
	return 0;
}

/* ---- sniffers with more than a magic prefix, in priority order ---- */

static int is_tar(const unsigned char *b, size_t n)
{
	return (n >= 257 + 6 && memcmp(b + 257, "ustar\0", 6) == 0) ||
	       (n >= 257 + 8 && memcmp(b + 257, "ustar  \0", 8) == 0);
}

static int art_method_v2_version(const unsigned char *b, size_t n)
{
	if (n < 6 || !STARTS(b, n, "SLOW"))
		return 0;
	unsigned v = (unsigned)b[4] | (unsigned)b[5] << 8;
	return v == 0x0004 || v == 0x0005 || v == 0x00f4 || v == 0x00f5;
}

/* 70: streaming v2 method traces. */
static int is_art_method_v2(const unsigned char *b, size_t n)
{
	return art_method_v2_version(b, n);
}

/* 75: "SLOW" with any other (or no) version, or the "*version" text form. */
static int is_art_method(const unsigned char *b, size_t n)
{
	if (STARTS(b, n, "SLOW"))
		return !art_method_v2_version(b, n);
	return STARTS(b, n, "*version\n");
}

static int is_manifest(const unsigned char *b, size_t n)
{
	return squeezed_starts(b, n, "{\"perfetto_manifest\"");
}

static int is_gecko(const unsigned char *b, size_t n)
{
	return squeezed_starts(b, n, "{\"meta\"") || squeezed_starts(b, n, "{\"libs\"");
}

static int is_json(const unsigned char *b, size_t n)
{
	return squeezed_starts(b, n, "{\"") || squeezed_starts(b, n, "[{\"");
}

static int is_instruments_xml(const unsigned char *b, size_t n)
{
	return STARTS(b, window(n), "<?xml version=\"1.0\"?>\n<trace-query-result>");
}

/* 160: an atrace dump whose body is zlib (78 9c) after "TRACE:\n". */
static int is_ctrace(const unsigned char *b, size_t n)
{
	return CONTAINS(b, window(n), "TRACE:\n\x78\x9c");
}

/* The logcat line shapes (threadtime as in a bugreport, or the persistent
 * log with the level one field earlier), checked only as far as the
 * reference does: fields are split on ' ' alone with empty pieces dropped;
 * the date is 5 bytes with '-' third or 10 with '-' fifth and eighth; the
 * time is at least 10 bytes with ':', ':', '.' at 2, 5, 8; the level is one
 * capital letter in the fifth or sixth field. Digits are never checked. */
static int is_logcat_line(span line)
{
	span f[6];
	size_t nf = 0;
	for (size_t i = 0; i < line.n && nf < 6;) {
		if (line.p[i] == ' ') {
			i++;
			continue;
		}
		size_t s = i;
		while (i < line.n && line.p[i] != ' ')
			i++;
		f[nf++] = (span){line.p + s, i - s};
	}
	if (nf < 5)
		return 0;
	int mm_dd = f[0].n == 5 && f[0].p[2] == '-';
	int yyyy_mm_dd = f[0].n == 10 && f[0].p[4] == '-' && f[0].p[7] == '-';
	if (!mm_dd && !yyyy_mm_dd)
		return 0;
	if (f[1].n < 10 || f[1].p[2] != ':' || f[1].p[5] != ':' || f[1].p[8] != '.')
		return 0;
	for (size_t k = 4; k < nf; k++)
		if (f[k].n == 1 && f[k].p[0] >= 'A' && f[k].p[0] <= 'Z')
			return 1;
	return 0;
}

/* 185: the first '\n'-terminated line within 4096 bytes that does not
 * start with "--------" (the "--------- beginning of" banners). A last line
 * without its '\n' is not considered. */
static int is_logcat(const unsigned char *b, size_t n)
{
	span rest = {b, n < LOGCAT_LOOKAHEAD ? n : LOGCAT_LOOKAHEAD};
	for (;;) {
		size_t len = index_of(rest, '\n');
		if (len == rest.n)
			return 0;
		span line = {rest.p, len};
		if (!STARTS(line.p, line.n, "--------"))
			return is_logcat_line(line);
		rest = tail(rest, len + 1);
	}
}

/* A flamegraph line "frame;frame count" after trimming blanks: digits after
 * the last space, which is not the first byte, and a ';' before it. */
static int is_collapsed_line(span line)
{
	while (line.n && is_blank(line.p[0]))
		line.p++, line.n--;
	while (line.n && is_blank(line.p[line.n - 1]))
		line.n--;
	if (line.n == 0 || line.p[0] == '#')
		return 0;
	size_t sp = line.n;
	while (sp > 0 && line.p[sp - 1] != ' ')
		sp--;
	if (sp <= 1) /* no space, or only at the start */
		return 0;
	for (size_t i = sp; i < line.n; i++)
		if (!is_digit(line.p[i]))
			return 0;
	return memchr(line.p, ';', sp - 1) != NULL;
}

/* 190: the first three lines that are neither blank nor '#' comments (the
 * last one may lack its '\n') must all be collapsed stacks; at least one
 * must exist. Reads as far as it takes. */
static int is_collapsed_stack(const unsigned char *b, size_t n)
{
	span rest = {b, n};
	int seen = 0;
	while (rest.n && seen < 3) {
		size_t len = index_of(rest, '\n');
		span line = {rest.p, len};
		size_t a = 0;
		while (a < len && is_blank(line.p[a]))
			a++;
		if (a < len && line.p[a] != '#') {
			if (!is_collapsed_line(line))
				return 0;
			seen++;
		}
		rest = tail(rest, len < rest.n ? len + 1 : len);
	}
	return seen > 0;
}

/* The last piece of l[0..*end) split on ' ' and '\t' (the reference turns
 * tabs into spaces, then drops empty pieces); *end moves to its start. */
static int last_piece(const unsigned char *l, size_t *end, span *piece)
{
	size_t e = *end;
	while (e > 0 && (l[e - 1] == ' ' || l[e - 1] == '\t'))
		e--;
	if (e == 0)
		return 0;
	size_t s = e;
	while (s > 0 && l[s - 1] != ' ' && l[s - 1] != '\t')
		s--;
	*piece = (span){l + s, e - s};
	*end = s;
	return 1;
}

/* "tid" or "pid/tid": split on '/' with empty pieces dropped, one or two
 * pieces, each a number for c_uint_accepts. */
static int is_pid_tid(span s)
{
	span part[2];
	size_t k = 0;
	for (size_t i = 0; i < s.n;) {
		if (s.p[i] == '/') {
			i++;
			continue;
		}
		size_t from = i;
		while (i < s.n && s.p[i] != '/')
			i++;
		if (k == 2)
			return 0;
		part[k++] = (span){s.p + from, i - from};
	}
	return k > 0 && c_uint_accepts(part[k - 1]) && (k == 1 || c_uint_accepts(part[0]));
}

/* Is l[0..m) (the text before some ':') the head of a `perf script`
 * sample? It must end in a timestamp, " <digits>.<6 digits>" (the digits
 * before the dot may be absent); before that come an optional "[cpu]",
 * which must not be the only piece, then "tid" or "pid/tid"; anything
 * earlier is the command name, possibly empty. */
static int is_perf_sample_head(const unsigned char *l, size_t m, size_t last_nd, size_t prev_nd)
{
	/* the time: the last non-digit before m is its dot, seven back, and
	 * the one before that the space before the time (see is_perf_text) */
	if (m < 8 || last_nd != m - 7 || l[m - 7] != '.' || prev_nd == SIZE_MAX || l[prev_nd] != ' ')
		return 0;
	size_t end = prev_nd + 1;
	span piece;
	if (!last_piece(l, &end, &piece))
		return 0;
	if (piece.p[0] == '[' && piece.p[piece.n - 1] == ']') {
		span cpu = {piece.p + 1, piece.n - 2};
		if (!c_uint_accepts(cpu) || !last_piece(l, &end, &piece))
			return 0;
	}
	return is_pid_tid(piece);
}

/* 195: the first line, which must end in '\n' wherever that is, has a ':'
 * preceded by a sample head. The last two non-digits before each ':' are
 * kept as the line is read, so the time before a ':' is checked without
 * scanning back to its space: that scan, at every ':' of a line of many
 * ("0.000000:0.000000:..."), took time with the square of the line (3,000
 * such 4 KB members: 0.81 s, nine tenths of it here). */
static int is_perf_text(const unsigned char *b, size_t n)
{
	span all = {b, n};
	size_t len = index_of(all, '\n');
	if (len == n)
		return 0;
	size_t last_nd = SIZE_MAX, prev_nd = SIZE_MAX;
	for (size_t i = 0; i < len; i++) {
		if (b[i] == ':' && is_perf_sample_head(b, i, last_nd, prev_nd))
			return 1;
		if (!is_digit(b[i])) {
			prev_nd = last_nd;
			last_nd = i;
		}
	}
	return 0;
}

/* strace -ttt timestamp "<secs>[.<usecs>]": no ':' (that is -t/-tt), secs
 * in [0, INT64_MAX / 1e9], usecs (if any text follows the dot) in
 * [0, 999999], each through the int64 parser. */
static int is_epoch_timestamp(span s)
{
	if (index_of(s, ':') < s.n)
		return 0;
	size_t dot = index_of(s, '.');
	if (!int64_within((span){s.p, dot}, INT64_MAX / 1000000000))
		return 0;
	if (dot + 1 >= s.n)
		return 1;
	return int64_within(tail(s, dot + 1), 999999);
}

/* 197: the first line (to '\n' or the end of the bytes given) is a syscall
 * line "<timestamp> name(args) = ret", optionally after a pid (strace -f),
 * or its resumed form "<timestamp> <... name resumed>...". Past the name
 * the reference only needs "<unfinished ...>" or an '=' somewhere. */
static int is_strace(const unsigned char *b, size_t n)
{
	span all = {b, n};
	span rest = trim_tsn((span){b, index_of(all, '\n')});
	if (rest.n == 0 || rest.p[0] == '-' || rest.p[0] == '+') /* "--- SIG", "+++ exited" */
		return 0;
	/* A leading run of 1..9 digits is a pid; 10 or more is the timestamp. */
	size_t sp = index_of(rest, ' ');
	if (sp < rest.n && sp > 0 && sp < 10) {
		size_t i = 0;
		while (i < sp && is_digit(rest.p[i]))
			i++;
		if (i == sp)
			rest = trim_tsn(tail(rest, sp + 1));
	}
	sp = index_of(rest, ' ');
	if (sp == rest.n || !is_epoch_timestamp((span){rest.p, sp}))
		return 0;
	rest = trim_tsn(tail(rest, sp + 1));
	if (rest.n == 0)
		return 0;
	if (STARTS(rest.p, rest.n, "<... ")) {
		const unsigned char *r = find(rest.p + 5, rest.n - 5, " resumed>", 9);
		if (!r)
			return 0;
		rest = trim_tsn(tail(rest, (size_t)(r - rest.p) + 9));
	} else {
		size_t paren = index_of(rest, '(');
		if (paren == rest.n)
			return 0;
		rest = tail(rest, paren + 1);
	}
	return CONTAINS(rest.p, rest.n, "<unfinished ...>") || index_of(rest, '=') < rest.n;
}

/* 200: the text forms atrace and systrace produce; a headerless dump whose
 * first line starts with a task name matches none of these (formats.md
 * §1.2). */
static int is_systrace(const unsigned char *b, size_t n)
{
	size_t w = window(n);
	return CONTAINS(b, w, "# tracer") || lower_starts(b, w, "<!doctype html>") ||
	       lower_starts(b, w, "<html>") || CONTAINS(b, w, "TRACE:\n") || STARTS(b, w, "cpus=") ||
	       STARTS(b, w, " ");
}

/* 210: Trace.packet (its tag possibly over-long) of non-zero length whose
 * first tag is module_symbols, length-delimited. */
static int is_symbols(const unsigned char *b, size_t n)
{
	uint64_t v;
	size_t i = 0, k;
	if (!(k = varint(b, n, &v)) || v != TM_PB_TAG(F_Trace_packet, TM_PB_LEN))
		return 0;
	i += k;
	if (!(k = varint(b + i, n - i, &v)) || v == 0)
		return 0;
	i += k;
	return (k = varint(b + i, n - i, &v)) && v == TM_PB_TAG(F_TracePacket_module_symbols, TM_PB_LEN);
}

enum { PB_END, PB_FIELD, PB_SKIP };

/* One field as the reference's generic decoder reads it; PB_END on the end
 * of the bytes, a truncated field, field id 0 or wire types 3, 4, 6, 7.
 * Field ids beyond 2^24 - 1 and over-long payloads are skipped silently. */
static int pb_next(const unsigned char *b, size_t n, size_t *pos, uint32_t *id, unsigned *wire)
{
	size_t i = *pos, k;
	uint64_t tag, v;
	if (i >= n || !(k = varint(b + i, n - i, &tag)))
		return PB_END;
	i += k;
	*id = (uint32_t)(tag >> 3);
	*wire = (unsigned)(tag & 7);
	if (*id < TM_PB_MIN_FIELD_ID || i >= n)
		return PB_END;
	uint64_t payload = 0;
	switch (*wire) {
	case TM_PB_VARINT:
		if (!(k = varint(b + i, n - i, &v)))
			return PB_END;
		i += k;
		break;
	case TM_PB_LEN:
		if (!(k = varint(b + i, n - i, &payload)) || payload > n - i - k)
			return PB_END;
		i += k + (size_t)payload;
		break;
	case TM_PB_I64:
	case TM_PB_I32: {
		size_t width = *wire == TM_PB_I64 ? 8 : 4;
		if (width > n - i)
			return PB_END;
		i += width;
		break;
	}
	default:
		return PB_END;
	}
	*pos = i;
	return *id > TM_PB_MAX_FIELD_ID || payload > TM_PB_MAX_LEN ? PB_SKIP : PB_FIELD;
}

/* 220: a pprof Profile (not in formats.md's table; it sits between symbols
 * and proto). At least 10 bytes; every field readable in the bytes given is
 * a Profile field with its wire type, and one of sample, mapping, location,
 * function, string_table, drop_frames or keep_frames is present. */
static int is_pprof(const unsigned char *b, size_t n)
{
	enum { LEN = 1, VARINT = 2, CORE = 4 };
	/* perftools.profiles.Profile's field numbers: pprof's schema, not one
	 * of protos/, so they have no generated names. */
	static const unsigned char profile_field[15] = {
		[1] = LEN,	   /* sample_type; fieldnum-ok: pprof */
		[2] = LEN | CORE,  /* sample; fieldnum-ok: pprof */
		[3] = LEN | CORE,  /* mapping; fieldnum-ok: pprof */
		[4] = LEN | CORE,  /* location; fieldnum-ok: pprof */
		[5] = LEN | CORE,  /* function; fieldnum-ok: pprof */
		[6] = LEN | CORE,  /* string_table; fieldnum-ok: pprof */
		[7] = VARINT | CORE, /* drop_frames; fieldnum-ok: pprof */
		[8] = VARINT | CORE, /* keep_frames; fieldnum-ok: pprof */
		[9] = VARINT,	   /* time_nanos; fieldnum-ok: pprof */
		[10] = VARINT,	   /* duration_nanos; fieldnum-ok: pprof */
		[11] = LEN,	   /* period_type; fieldnum-ok: pprof */
		[12] = VARINT,	   /* period; fieldnum-ok: pprof */
		[13] = LEN | VARINT, /* comment (packed or not); fieldnum-ok: pprof */
		[14] = VARINT,	   /* default_sample_type; fieldnum-ok: pprof */
	};
	if (n < 10)
		return 0;
	int core = 0, r;
	size_t pos = 0;
	uint32_t id;
	unsigned wire;
	while ((r = pb_next(b, n, &pos, &id, &wire)) != PB_END) {
		if (r == PB_SKIP)
			continue;
		unsigned f = id < sizeof profile_field ? profile_field[id] : 0;
		if (!f || !(f & (wire == TM_PB_LEN ? LEN : wire == TM_PB_VARINT ? VARINT : 0)))
			return 0;
		core |= (f & CORE) != 0;
	}
	return core;
}

/* 250: BatteryStats checkin or the dumpstate banner. */
static int is_dumpstate(const unsigned char *b, size_t n)
{
	size_t w = window(n);
	return STARTS(b, w, "9,0,i,vers,") ||
	       STARTS(b, w, "========================================================\n== dumpstate: ");
}

/* tracemount extension: bzip2 ("BZh" and a block size digit). */
static int is_bzip2(const unsigned char *b, size_t n)
{
	return n >= 4 && STARTS(b, n, "BZh") && b[3] >= '1' && b[3] <= '9';
}

#define MAGIC(s) s, sizeof(s) - 1, NULL
#define RULE(f) NULL, 0, f

/* The reference's importers by detection priority (formats.md §1.2, plus
 * pprof); the first match wins. An entry matches on its magic prefix when it
 * has one, else when its function says so. */
static const struct sniffer {
	int priority;
	tm_type type;
	const char *magic;
	size_t magic_len;
	int (*match)(const unsigned char *b, size_t n);
} sniffers[] = {
	{10, TM_TYPE_TAR, RULE(is_tar)},
	{15, TM_TYPE_ARROW, MAGIC("ARROW1")},
	{20, TM_TYPE_FUCHSIA, MAGIC("\x10\x00\x04\x46\x78\x54\x16\x00")},
	{30, TM_TYPE_PERF, MAGIC("PERFILE2")},
	{40, TM_TYPE_SIMPLEPERF_PROTO, MAGIC("SIMPLEPERF")},
	{50, TM_TYPE_ZIP, MAGIC("PK\x03\x04")},
	{60, TM_TYPE_GZIP, MAGIC("\x1f\x8b")},
	{65, TM_TYPE_ZSTD, MAGIC("\x28\xb5\x2f\xfd")},
	{70, TM_TYPE_ART_METHOD_V2, RULE(is_art_method_v2)},
	{75, TM_TYPE_ART_METHOD, RULE(is_art_method)},
	{80, TM_TYPE_ART_HPROF, MAGIC("JAVA PROFILE")},
	{90, TM_TYPE_MANIFEST, RULE(is_manifest)},
	{100, TM_TYPE_GECKO, RULE(is_gecko)},
	{110, TM_TYPE_JSON, RULE(is_json)},
	{150, TM_TYPE_INSTRUMENTS_XML, RULE(is_instruments_xml)},
	{160, TM_TYPE_CTRACE, RULE(is_ctrace)},
	{183, TM_TYPE_NINJA_LOG, MAGIC("# ninja log")},
	{185, TM_TYPE_ANDROID_LOGCAT, RULE(is_logcat)},
	{190, TM_TYPE_COLLAPSED_STACK, RULE(is_collapsed_stack)},
	{195, TM_TYPE_PERF_TEXT, RULE(is_perf_text)},
	{197, TM_TYPE_STRACE, RULE(is_strace)},
	{200, TM_TYPE_SYSTRACE, RULE(is_systrace)},
	{210, TM_TYPE_SYMBOLS, RULE(is_symbols)},
	{220, TM_TYPE_PPROF, RULE(is_pprof)},
	{230, TM_TYPE_PROTO, MAGIC("\x0a")},
	{240, TM_TYPE_PRIMES, MAGIC("\x09")},
	{250, TM_TYPE_ANDROID_DUMPSTATE, RULE(is_dumpstate)},
	/* tracemount extensions, last so they never shadow a reference type */
	{1000, TM_TYPE_BZIP2, RULE(is_bzip2)},
	{1001, TM_TYPE_XZ, MAGIC("\xfd" "7zXZ\x00")},
};

tm_type tm_detect(const unsigned char *b, size_t n)
{
	static const unsigned char none[1];
	if (!b)
		b = none, n = 0;
	for (size_t i = 0; i < sizeof sniffers / sizeof sniffers[0]; i++) {
		const struct sniffer *s = &sniffers[i];
		if (s->magic ? starts(b, n, s->magic, s->magic_len) : s->match(b, n))
			return s->type;
	}
	return TM_TYPE_UNKNOWN;
}

static const struct {
	const char *name; /* the reference's name, and metadata.json's */
	int priority;
	int container;
	int supported;
} types[TM_TYPE_COUNT] = {
	[TM_TYPE_UNKNOWN] = {"unknown", 2, 0, 0},
	[TM_TYPE_TAR] = {"tar", 1, 1, 1},
	[TM_TYPE_ARROW] = {"arrow", 2, 0, 0},
	[TM_TYPE_FUCHSIA] = {"fuchsia", 2, 0, 0},
	[TM_TYPE_PERF] = {"perf", 2, 0, 1},
	[TM_TYPE_SIMPLEPERF_PROTO] = {"simpleperf_proto", 2, 0, 0},
	[TM_TYPE_ZIP] = {"zip", 1, 1, 1},
	[TM_TYPE_GZIP] = {"gzip", 1, 1, 1},
	[TM_TYPE_ZSTD] = {"zstd", 1, 1, 1},
	[TM_TYPE_ART_METHOD_V2] = {"art_method_v2", 2, 0, 0},
	[TM_TYPE_ART_METHOD] = {"art_method", 2, 0, 0},
	[TM_TYPE_ART_HPROF] = {"art_hprof", 2, 0, 1},
	[TM_TYPE_MANIFEST] = {"perfetto_manifest", -1, 0, 1},
	[TM_TYPE_GECKO] = {"gecko", 2, 0, 1},
	[TM_TYPE_JSON] = {"json", 2, 0, 1},
	[TM_TYPE_INSTRUMENTS_XML] = {"instruments_xml", 2, 0, 0},
	[TM_TYPE_CTRACE] = {"ctrace", 2, 1, 1},
	[TM_TYPE_NINJA_LOG] = {"ninja_log", 2, 0, 1},
	[TM_TYPE_ANDROID_LOGCAT] = {"android_logcat", 2, 0, 0},
	[TM_TYPE_COLLAPSED_STACK] = {"collapsed_stack", 2, 0, 1},
	[TM_TYPE_PERF_TEXT] = {"perf_text", 2, 0, 1},
	[TM_TYPE_STRACE] = {"strace", 2, 0, 1},
	[TM_TYPE_SYSTRACE] = {"systrace", 2, 0, 1},
	[TM_TYPE_SYMBOLS] = {"symbols", 3, 0, 0},
	[TM_TYPE_PROTO] = {"proto", 0, 0, 1},
	[TM_TYPE_PRIMES] = {"primes", 2, 0, 0},
	[TM_TYPE_ANDROID_DUMPSTATE] = {"android_dumpstate", 2, 0, 0},
	[TM_TYPE_PPROF] = {"pprof", 2, 0, 0},
	[TM_TYPE_BZIP2] = {"bzip2", 1, 1, 1},
	[TM_TYPE_XZ] = {"xz", 1, 1, 1},
	[TM_TYPE_INPUTS] = {"inputs", 1, 1, 1},
};

const char *tm_type_name(tm_type t)
{
	return (unsigned)t < TM_TYPE_COUNT ? types[t].name : "unknown";
}

const char *tm_type_unexported(tm_type t)
{
	if (tm_type_is_supported(t) || t == TM_TYPE_UNKNOWN || (unsigned)t >= TM_TYPE_COUNT)
		return NULL;
	return "tracemount does not read this format's events yet: none of them is in merged.pftrace, "
	       "timeline.tsv or the tables";
}

int tm_type_archive_priority(tm_type t)
{
	return (unsigned)t < TM_TYPE_COUNT ? types[t].priority : 2;
}

int tm_type_is_container(tm_type t)
{
	return (unsigned)t < TM_TYPE_COUNT && types[t].container;
}

int tm_type_is_trace(tm_type t)
{
	return t != TM_TYPE_UNKNOWN && t != TM_TYPE_MANIFEST && !tm_type_is_container(t);
}

int tm_type_is_supported(tm_type t)
{
	return (unsigned)t < TM_TYPE_COUNT && types[t].supported;
}
