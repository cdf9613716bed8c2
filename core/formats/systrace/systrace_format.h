/* core/formats/systrace/systrace_format.h - systrace text as a format
 * module: what the registry (core/formats/registry.c) lists of it, and the
 * print-payload parser the proto format's ftrace print events share. */
#ifndef TM_SYSTRACE_FORMAT_H
#define TM_SYSTRACE_FORMAT_H

#include "export/export.h"
#include "formats/kinds.h"
#include "formats/systrace/systrace.h"
#include "model/model_internal.h"
#include "scan/scan_internal.h"

/* A systrace file's tokenizer (tokenize.c). */
extern const tm_tokenizer tm_systrace_tokenizer;

/* The tokenizer's state of one file's lines: a systrace file's, or the
 * lines a JSON file embeds. */
typedef struct systrace_tok {
	scan_file *sf;
	tm_clock_tracker *t;
	tm_buf rec;                 /* a record being built */
	/* task names already reported: tid -> name hash, open addressing,
	 * bounded (a full table stops reporting) */
	uint64_t *tids, *hashes;
	size_t cap, n;
} systrace_tok;

/* One line read on `clock` (MONOTONIC for a systrace file, the private
 * clock for embedded text, clocks.md §6.2): its record for the model on
 * sorter queue `queue`, and its place unless its print payload was bad. */
void systrace_tok_line(systrace_tok *tc, uint32_t queue, uint32_t clock, const systrace_event *l);
void systrace_tok_free(systrace_tok *tc);

/* A systrace line (or a proto print event's payload, parsed) as an event:
 * kind, name, pid/tid, args, value; the caller sets times and the row. */
void scan_systrace_event(const systrace_event *l, tm_event *ev);

/* TM_MREC_SYSTRACE records into the tables (model_systrace.c). Its
 * prepare works out, on the replay's producer thread, where a line's
 * strings are and its args' tokens, and what the sink's prepare makes of
 * it. */
extern const tm_parser tm_systrace_parser;

/* Build a TM_MREC_SYSTRACE record (head and payload) from a parsed line. */
void tm_mrec_systrace(tm_buf *b, uint32_t file_id, uint32_t machine_row, const systrace_event *l);

/* SystraceParser::ParseSystracePoint of a parsed print payload (print_*
 * fields of `l`), for a systrace line or a proto print / zero event.
 * Returns the thread track a B, E or I went on (the observer encodes it
 * there when the machine's thread tracks are shared: encode.c), else
 * UINT32_MAX: other phases, an E of no known thread, and an lmk B, whose
 * counters only the print makes. */
uint32_t m_systrace_print(tm_model *m, m_ctx *c, m_mach *mc, int64_t ts, uint32_t pid, const systrace_event *l,
		      uint32_t file);

/* What the parser hands the encoder of a line (tm_mobserved.event, and
 * the event of tm_model_sink.prepare): the line and its args, split or
 * not, for lookups. */
typedef struct systrace_observed {
	const systrace_event *line;
	systrace_args *args;
} systrace_observed;

/* Its lines into merged.pftrace (encode.c). */
extern const tm_encoder tm_systrace_encoder;

#endif
