/* core/sort/xsort.h - an external sort of byte records.
 *
 * Records are collected in a memory run; a full run is sorted and written
 * to one unlinked temporary file (core/sort/spool.h); reading merges the runs
 * with a heap over buffered readers, at most as many at once as the run
 * budget has read buffers (more runs are first merged into fewer). Memory
 * is about the run budget, whatever the number of records. A sort that
 * never fills its run is read straight from memory.
 *
 * The comparator sees whole records (they start with whatever key the
 * caller puts there; records may be unaligned, so read keys with memcpy)
 * and must be a total order: equal records come out in an unspecified
 * order, so callers that need stability put a sequence number in the key.
 */
#ifndef TM_XSORT_H
#define TM_XSORT_H

#include <stddef.h>
#include <stdint.h>

#include "util/tm.h"

typedef int (*tm_xsort_cmp)(const void *a, const void *b);

typedef struct tm_xsort tm_xsort;

/* A sort with runs of about `run_bytes` (0: the default, 32 MiB). */
tm_xsort *tm_xsort_new(tm_xsort_cmp cmp, size_t run_bytes);

/* Records read back from a temporary file go to `check` before anything
 * compares them: 0 there fails the read as "a temporary file is damaged"
 * (the sort checks a record's length, `check` what it holds, such as a
 * length inside it that the comparator trusts). Records never spilled are
 * not checked. */
typedef int (*tm_xsort_check)(const void *rec, uint32_t len);
void tm_xsort_set_check(tm_xsort *x, tm_xsort_check check);

/* Add a record of `len` bytes (copied). Returns 0, or -1 with err set when
 * a run cannot be written (the sort is then failed and stays so). */
int tm_xsort_add(tm_xsort *x, const void *rec, uint32_t len, tm_error *err);

/* Add one record made of n parts, one after another (copied straight into
 * the run: a caller need not join them first). Same returns. */
typedef struct tm_xsort_part {
	const void *p;
	uint32_t len;
} tm_xsort_part;
int tm_xsort_addv(tm_xsort *x, const tm_xsort_part *parts, size_t n, tm_error *err);

/* No more records: sort the last run. Returns 0 or -1 with err set. */
int tm_xsort_finish(tm_xsort *x, tm_error *err);

/* The next record in order: returns 1 with *rec / *len set (valid until
 * the next call), 0 at the end, -1 with err set on a read error. */
int tm_xsort_next(tm_xsort *x, const void **rec, uint32_t *len, tm_error *err);

/* Bytes the sort holds: while records are added, what the current memory
 * run has allocated (records and their index); once the merge of spilled
 * runs has begun, its read buffers. */
size_t tm_xsort_mem(const tm_xsort *x);

/* Write the current memory run out now (a caller keeping several sorts
 * under one memory budget). Returns 0 or -1 with err set. */
int tm_xsort_spill(tm_xsort *x, tm_error *err);

/* Records added so far. */
uint64_t tm_xsort_count(const tm_xsort *x);

void tm_xsort_free(tm_xsort *x);

#endif
