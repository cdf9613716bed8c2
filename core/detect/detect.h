/* core/detect/detect.h - trace type from the first bytes (spec/formats.md §1).
 *
 * Sniffers run in the reference's priority order; the first match wins.
 * tracemount merges proto, Chrome JSON and systrace, walks zip, tar, gzip,
 * zstd and ctrace containers, and reads a perfetto_manifest. Every other
 * type the reference recognises is still recognised (so that priorities
 * resolve exactly as there) and reported as not exported
 * (tm_type_unexported).
 */
#ifndef TM_DETECT_H
#define TM_DETECT_H

#include <stddef.h>

typedef enum tm_type {
	TM_TYPE_UNKNOWN = 0,
	TM_TYPE_TAR,
	TM_TYPE_ARROW,
	TM_TYPE_FUCHSIA,
	TM_TYPE_PERF,
	TM_TYPE_SIMPLEPERF_PROTO,
	TM_TYPE_ZIP,
	TM_TYPE_GZIP,
	TM_TYPE_ZSTD,
	TM_TYPE_ART_METHOD_V2,
	TM_TYPE_ART_METHOD,
	TM_TYPE_ART_HPROF,
	TM_TYPE_MANIFEST,
	TM_TYPE_GECKO,
	TM_TYPE_JSON,
	TM_TYPE_INSTRUMENTS_XML,
	TM_TYPE_CTRACE,
	TM_TYPE_NINJA_LOG,
	TM_TYPE_ANDROID_LOGCAT,
	TM_TYPE_COLLAPSED_STACK,
	TM_TYPE_PERF_TEXT,
	TM_TYPE_STRACE,
	TM_TYPE_SYSTRACE,
	TM_TYPE_SYMBOLS,
	TM_TYPE_PROTO,
	TM_TYPE_PRIMES,
	TM_TYPE_ANDROID_DUMPSTATE,
	/* Reference types the spec table omits (added after the rest so the
	 * values above stay put; detection order is by priority, not value): */
	TM_TYPE_PPROF,
	/* tracemount extensions (the reference does not open these): */
	TM_TYPE_BZIP2,
	TM_TYPE_XZ,
	/* Never detected: the top level of several inputs, a virtual archive
	 * whose members they are (issue 11; core/input/inputs.h). */
	TM_TYPE_INPUTS,
	TM_TYPE_COUNT
} tm_type;

/* How many leading bytes the sniffers may look at; callers pass at most
 * this many (fewer when the input is shorter). */
#define TM_SNIFF_BYTES 4096

/* Classify an input from its first `n` bytes: the first type whose sniffer
 * matches, in the reference's priority order, or TM_TYPE_UNKNOWN. Pass
 * exactly the bytes the reference sniffs (formats.md §1.1): min(512, size)
 * for a TAR member, otherwise min(size, TM_SNIFF_BYTES). Most rules read only
 * the first 128 bytes and logcat the first 4096, but collapsed_stack,
 * perf_text, strace and pprof read every byte given, so a longer prefix can
 * change their answer. Never reads past buf[n-1]; buf may be NULL if n is 0. */
tm_type tm_detect(const unsigned char *buf, size_t n);

/* A type's name: the reference's own ("proto", "perf", "gecko", "zstd",
 * ...), which metadata.json uses too; "inputs" for the virtual archive of
 * several inputs, "unknown" for what no sniffer matched. */
const char *tm_type_name(tm_type t);

/* Why the events of a trace file of this type reach no output: a
 * sentence for the formats the reference imports and tracemount only
 * recognises (perf, gecko, strace, ...), NULL for the formats it merges
 * and for what holds no events of its own (containers, the manifest,
 * unknown). */
const char *tm_type_unexported(tm_type t);

/* Archive sort priority (formats.md §1.3, §2.4): manifest -1, proto 0,
 * containers 1, ctrace and everything else 2, symbols 3. */
int tm_type_archive_priority(tm_type t);

/* Containers whose content is more trace files. */
int tm_type_is_container(tm_type t);

/* A trace file: what no sniffer matched, the manifest and containers
 * aside. */
int tm_type_is_trace(tm_type t);

/* Types tracemount can merge (proto, json, systrace) or walk. */
int tm_type_is_supported(tm_type t);

#endif
