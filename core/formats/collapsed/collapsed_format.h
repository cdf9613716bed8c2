/* core/formats/collapsed/collapsed_format.h - collapsed stacks as a format
 * module: what the registry (core/formats/registry.c) lists of it.
 *
 * The reference (CollapsedStackTraceReader) reads each line, the last one
 * without its '\n' too, and makes of each stack an aggregate sample of
 * the file's aggregate profile ("collapsed_stack samples", samples in
 * count) with the line's count as value: the file's frames are in one
 * dummy mapping, "[collapsed_stack]", and the stack a chain of callsites
 * from the root at depth 0. The format has no time: nothing is on the
 * timeline, and nothing of it is in merged.pftrace (no Perfetto packet
 * makes an aggregate sample); the samples are in profile.folded. */
#ifndef TM_COLLAPSED_FORMAT_H
#define TM_COLLAPSED_FORMAT_H

#include "formats/kinds.h"
#include "model/model.h"
#include "scan/scan_internal.h"

/* A collapsed-stack file's tokenizer (tokenize.c). */
extern const tm_tokenizer tm_collapsed_tokenizer;

/* A TM_MREC_COLLAPSED side record (sub 0) of one stack: this, then its
 * frames from the root, each a uint32 length and its bytes. */
typedef struct tm_collapsed_rec {
	int64_t count;
	uint32_t n_frames;
} tm_collapsed_rec;

/* TM_MREC_COLLAPSED records into the tables (model_collapsed.c). */
extern const tm_parser tm_collapsed_parser;

#endif
