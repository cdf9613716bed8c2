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

/* A TM_MREC_PERF_TEXT record (sub 0): this head, then the command name
 * and each frame's symbol and mapping, leaf first, each string a uint32
 * length and its bytes. Sub 1, a side record: the file's samples without
 * frames (int64). */
typedef struct tm_perf_text_rec {
	uint32_t tid, pid;
	uint8_t has_pid;
	uint32_t n_frames;
} tm_perf_text_rec;

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
