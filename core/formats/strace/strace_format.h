/* core/formats/strace/strace_format.h - `strace -f -ttt` text as a format
 * module: what the registry (core/formats/registry.c) lists of it.
 *
 * The reference (its strace plugin) reads each line ended by '\n', times
 * on REALTIME, and makes per thread (tid only: strace knows no process)
 * a slice of category "strace" named by the syscall, with the args
 * "args" (the call's arguments) and "ret" (its return value): of no
 * duration for a whole call, begun by an interrupted call and ended by
 * its resumption. */
#ifndef TM_STRACE_FORMAT_H
#define TM_STRACE_FORMAT_H

#include "export/export.h"
#include "formats/kinds.h"
#include "model/model.h"
#include "scan/scan_internal.h"

/* An strace file's tokenizer (tokenize.c). */
extern const tm_tokenizer tm_strace_tokenizer;

/* A TM_MREC_STRACE record (sub 0): this head, then the syscall, the args
 * and the return value, each NUL-terminated. Sub 1, a side record: the
 * file's three stats (int64 each: parse failures, unsupported times,
 * missing pids). */
typedef struct tm_strace_rec {
	uint32_t tid;
	uint8_t kind;     /* strace_kind */
	uint8_t has_args; /* args not empty */
	uint8_t has_ret;
} tm_strace_rec;

/* TM_MREC_STRACE records into the tables (model_strace.c). */
extern const tm_parser tm_strace_parser;

/* What the parser hands the encoder of a line (tm_mobserved.event). */
typedef struct strace_observed {
	uint8_t kind;             /* strace_kind */
	const char *syscall;
	const char *args;         /* NULL: none */
	const char *ret;          /* NULL: none */
} strace_observed;

/* Its calls into merged.pftrace (encode.c). */
extern const tm_encoder tm_strace_encoder;

#endif
