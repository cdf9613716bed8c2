/* core/formats/perf_text/perf_text_format.h - `perf script` text as a
 * format module: what the registry (core/formats/registry.c) lists of it.
 *
 * The reference (its perf_text plugin) reads each sample whole (a head
 * line, its frames, an empty line; a sample not ended so is not read),
 * times it on MONOTONIC and makes a stack sample of source "perf_text"
 * on the thread of its tid (UpdateThread with the pid when the head has
 * one), named by the head's command (ThreadNamePriority kOther, the
 * process too for its main thread). Each mapping name of a file is a
 * dummy mapping of its own, each symbol a frame of it, and the stack a
 * chain of callsites from the root, the root at depth 1. A sample without
 * frames counts perf_text_importer_sample_no_frames; a head or frame it
 * cannot read ends the file with an error. */
#ifndef TM_PERF_TEXT_FORMAT_H
#define TM_PERF_TEXT_FORMAT_H

#include "export/export.h"
#include "formats/kinds.h"
#include "model/model.h"
#include "scan/scan_internal.h"

/* A perf script file's tokenizer (tokenize.c). */
extern const tm_tokenizer tm_perf_text_tokenizer;

/* The tokenizer interns each file's stacks as the reference's tokenizer
 * does, in file order (its frames by symbol and mapping, its callsites by
 * parent and frame), with ids of the file's own from 0, and hands the
 * model each new one as a side record (applied at once, before any sorted
 * record); a sample names its leaf callsite by that id. The model maps
 * those ids to its own with an array per file: a sample costs it no
 * lookup (looking the stacks up in the model, interleaved across files in
 * time order, was a third of its work, in cache misses).
 *
 * TM_MREC_PERF_TEXT records: sub 0, a sample: tm_perf_text_rec, then the
 * command name (a uint32 length, its bytes). Side records: sub 1, the
 * file's samples without frames (int64); sub 2, a frame: its id (uint32),
 * then its symbol and mapping (each a uint32 length and its bytes); sub 3,
 * a callsite: tm_perf_text_callsite. */
typedef struct tm_perf_text_rec {
	uint32_t tid, pid;
	uint8_t has_pid;
	uint32_t callsite;   /* the file's id of its leaf */
} tm_perf_text_rec;

typedef struct tm_perf_text_callsite {
	uint32_t id, parent; /* the file's ids; parent UINT32_MAX for a root */
	uint32_t frame;      /* the file's id */
	uint32_t depth;      /* from 1 at the root */
} tm_perf_text_callsite;

enum { PERF_TEXT_SAMPLE, PERF_TEXT_NO_FRAMES, PERF_TEXT_FRAME_DEF, PERF_TEXT_CALLSITE_DEF };

/* TM_MREC_PERF_TEXT records into the tables (model_perf_text.c). */
extern const tm_parser tm_perf_text_parser;

/* What the parser hands the encoder of a sample (tm_mobserved.event). */
typedef struct perf_text_observed {
	int has_pid;
	uint32_t pid, tid;
	uint32_t callsite;  /* the model's (tm_model_callsite) */
} perf_text_observed;

/* Its samples into merged.pftrace (encode.c). */
extern const tm_encoder tm_perf_text_encoder;

#endif
