/* core/formats/ninja/ninja_format.h - a ninja build log as a format
 * module: what the registry (core/formats/registry.c) lists of it.
 *
 * The reference (NinjaLogParser) reads the whole log, then, at the end of
 * the file, sorts the jobs by start, infers the workers that ran them in
 * parallel and writes each job as a slice on its worker: thread `worker`
 * (named "Worker") of process 1 (named "Build"), at its start in ms from
 * the build's start as trace time (the format has no clock), no category.
 * The tokenizer does the same at the end of the file and hands the jobs
 * to the sorter in that order, on one queue of their own. */
#ifndef TM_NINJA_FORMAT_H
#define TM_NINJA_FORMAT_H

#include "export/export.h"
#include "formats/kinds.h"
#include "model/model.h"
#include "scan/scan_internal.h"

/* A ninja log's tokenizer (tokenize.c). */
extern const tm_tokenizer tm_ninja_tokenizer;

/* A TM_MREC_NINJA record: this head, then the job's names. */
typedef struct tm_ninja_rec {
	int64_t dur_ns;
	uint32_t worker;     /* the thread id of its worker, from 1 */
	uint8_t new_worker;  /* the job that made its worker */
} tm_ninja_rec;

/* TM_MREC_NINJA records into the tables (model_ninja.c). */
extern const tm_parser tm_ninja_parser;

/* What the parser hands the encoder of a job (tm_mobserved.event). */
typedef struct ninja_observed {
	const char *name;    /* NUL-terminated */
	int64_t dur_ns;
} ninja_observed;

/* Its jobs into merged.pftrace (encode.c). */
extern const tm_encoder tm_ninja_encoder;

#endif
