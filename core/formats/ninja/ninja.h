/* core/formats/ninja/ninja.h - a ninja build log (`.ninja_log`, v5) as the
 * reference's NinjaLogParser reads it: its jobs, merged where one rule
 * wrote several outputs, in the reference's order, each on the worker the
 * reference infers for it.
 *
 * The format: a header line "# ninja log v5", then per job a line of
 * tab-separated fields: start and end in ms from the build's start, the
 * restat time (ignored), the output's name, the command's hash in hex.
 * Only lines ended by '\n' count (the reference keeps an unended tail for
 * a next chunk that never comes). Lines and fields are split the way
 * Perfetto's StringSplitter splits them: empty ones are skipped, and a
 * NUL byte ends the text.
 */
#ifndef TM_NINJA_H
#define TM_NINJA_H

#include <stddef.h>
#include <stdint.h>

#include "util/tm.h"

typedef struct ninja_job {
	int64_t start_ms, end_ms;
	uint64_t hash;
	uint32_t names_off, names_len; /* into ninja_log.names: the outputs, space-separated */
	uint32_t worker;               /* 1-based, once ninja_finish ran */
	uint8_t new_worker;            /* the job that made its worker */
} ninja_job;

typedef struct ninja_log {
	ninja_job *jobs;
	size_t n, cap;
	tm_buf names;
	int64_t parse_errors;          /* ninja_parse_errors: lines without the fields */
	int header_parsed;
	tm_buf tail;                   /* an unended line, until more text comes */
} ninja_log;

/* Errors the reference fails the import with. */
#define NINJA_ERR_HEADER "Failed to parse ninja log header"
#define NINJA_ERR_VERSION "Unsupported ninja log version"

/* More of the file's text. 0, or -1 with err set (TM_EINPUT, one of the
 * texts above): the import fails. */
int ninja_feed(ninja_log *lg, const void *p, size_t n, tm_error *err);

/* The end of the file: the jobs in the reference's order (std::sort of
 * libstdc++ by start, which keeps no order among equal starts: the same
 * steps here), each given its worker. */
void ninja_finish(ninja_log *lg);

void ninja_free(ninja_log *lg);

/* The sort of ninja_finish alone, for its tests: libstdc++'s std::sort
 * (introsort, its pivots and its final insertion sort) by start_ms. */
void ninja_sort_jobs(ninja_job *j, size_t n);

#endif
