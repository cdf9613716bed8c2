/* core/export/tables.h - machines/<dir>/processes.tsv, threads.tsv,
 * slices.tsv (DESIGN.md, issue 9) and profile.folded (issue 35): the
 * model's tables per machine as text.
 *
 * processes.tsv  pid name start_ts end_ts parent_pid
 *                the reference's process table of the machine, in its
 *                order (upid); empty fields where it holds NULL.
 * threads.tsv    tid name pid start_ts end_ts slices busy_ns
 *                its thread table (utid order), plus the number of slices
 *                on the thread's tracks and busy_ns, the summed duration
 *                of those at depth 0 that ended.
 * slices.tsv     name count total_ns min_ns median_ns p90_ns max_ns unfinished
 *                one line per slice name of the machine (instants
 *                included): count of all its slices, and over those that
 *                ended the total, min, median (the lower middle, sorted
 *                index floor((n-1)/2)), p90 (nearest rank, index
 *                ceil(0.9 n) - 1) and max duration; unfinished the ones
 *                that never ended. Sorted by total descending, then name,
 *                so two runs of one capture setup `diff` line by line.
 * profile.folded  one line per distinct stack of the machine's stack
 *                samples: its frames' names from the root joined by ';',
 *                a space and its count (the collapsed-stack form that
 *                flamegraph.pl, inferno and speedscope read), in byte
 *                order; no header.
 * heap.tsv       class objects bytes
 *                per class name of the machine's heap dumps, its objects
 *                and their self sizes (summed over dumps and over classes
 *                of one name), by bytes descending, then objects
 *                descending, then name; classes without objects left
 *                out (as jmap -histo).
 * Fields are escaped as in timeline.tsv (core/export/timeline.h).
 *
 * Memory: a counter per track and one line per distinct slice name; the
 * durations go through an external sort (core/sort/xsort.h).
 */
#ifndef TM_TABLES_H
#define TM_TABLES_H

#include <stddef.h>

#include "model/model.h"
#include "scan/scan.h"
#include "sort/spool.h"
#include "util/tm.h"

#define TM_PROCESSES_HEADER "pid\tname\tstart_ts\tend_ts\tparent_pid\n"
#define TM_THREADS_HEADER "tid\tname\tpid\tstart_ts\tend_ts\tslices\tbusy_ns\n"
#define TM_HEAP_HEADER "class\tobjects\tbytes\n"
#define TM_SLICES_HEADER "name\tcount\ttotal_ns\tmin_ns\tmedian_ns\tp90_ns\tmax_ns\tunfinished\n"

typedef struct tm_tables_build tm_tables_build;

/* The files hold one spool per machine row; their `fd` (a whole merge's
 * file) is -1. */
typedef struct tm_tables {
	tm_spooled *processes, *threads, *slices, *profile, *heap;
} tm_tables;

/* Tables for the machines of `scan`; `run_bytes` as in tm_xsort_new. */
tm_tables_build *tm_tables_new(const tm_scan *scan, size_t run_bytes);

/* A slice of the model (core/model/model.h sink). */
void tm_tables_slice(tm_tables_build *b, const tm_mslice *s);

/* A stack sample of the model. */
void tm_tables_sample(tm_tables_build *b, const tm_msample *s);

/* Write the files from the finished model. Returns the tables or NULL
 * with err set when a temporary file cannot be written. Frees `b` either
 * way. */
tm_tables *tm_tables_finish(tm_tables_build *b, const tm_model *model, tm_error *err);
void tm_tables_abort(tm_tables_build *b);
void tm_tables_free(tm_tables *t);

#endif
