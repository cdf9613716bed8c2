/* core/formats/perf_text/perf_text.h - `perf script` text as the
 * reference's perf_text importer reads it (PerfTextTraceTokenizer,
 * ParseSampleLine):
 *
 *   python3 16875 56824.281182:     250000 cpu-clock:
 *   	ffffffff81c848fa strnlen_user+0x2a ([kernel.kallsyms])
 *   	    7f58cf28cad7 [unknown] ([unknown])
 *   <an empty line>
 *
 * A sample is a head line, its frames leaf first, and an empty line. The
 * head has, before some ':', a time "<digits>.<6 digits>" (microseconds:
 * `perf script --ns` is not read), and before that an optional "[cpu]",
 * "tid" or "pid/tid", and the command name (simpleperf's tabs read as
 * spaces). A frame is an address, the symbol with an optional "+offset",
 * and the mapping in parentheses, the line's last character.
 */
#ifndef TM_PERF_TEXT_H
#define TM_PERF_TEXT_H

#include <stddef.h>
#include <stdint.h>

#include "util/tm.h"

typedef struct perf_text_head {
	tm_buf comm;       /* the pieces before the tid, joined by ' ' ("" for none) */
	int has_pid;
	uint32_t pid, tid;
	int has_cpu;
	uint32_t cpu;
	int64_t ts;        /* ns: the seconds as a double times 1000 three times */
} perf_text_head;

/* 1 and *out filled when the line (without its '\n') is a sample's head. */
int perf_text_parse_head(const char *p, size_t n, perf_text_head *out);

/* A frame line's pieces, pointing into the line. */
typedef struct perf_text_frame {
	const char *symbol;  /* without its "+offset" */
	size_t symbol_n;
	const char *mapping;
	size_t mapping_n;
} perf_text_frame;

typedef enum perf_text_frame_kind {
	PERF_TEXT_FRAME,       /* *out filled */
	PERF_TEXT_END,         /* an empty line (but for ' ', '\t'): the sample ends */
	PERF_TEXT_NO_SYMBOL,   /* no ' ' after trimming */
	PERF_TEXT_NO_MAPPING   /* no '(' or not ending in ')' */
} perf_text_frame_kind;

/* A line (without its '\n') after a head. For the two errors, *trimmed
 * is the line as the reference's message quotes it. */
perf_text_frame_kind perf_text_parse_frame(const char *p, size_t n, perf_text_frame *out, const char **trimmed,
					   size_t *trimmed_n);

/* The reference's errors, which end the file's import (with the context
 * quoted up to its first NUL, as C strings print). */
#define PERF_TEXT_ERR_HEAD "Perf text parser: unable to parse sample line (context: '%.*s')"
#define PERF_TEXT_ERR_SYMBOL "Perf text parser: unable to find symbol in frame (context: '%.*s')"
#define PERF_TEXT_ERR_MAPPING "Perf text parser: unable to find mapping in frame (context: '%.*s')"

#endif
