/* core/export/timeline.h - timeline.tsv (DESIGN.md, issue 9): the model's rows
 * (core/model/model.h) as text lines ordered by trace time, for the whole merge
 * and for each machine.
 *
 * Rows arrive as the model fixes them (a slice when it ends), are spooled
 * to an external sort (core/sort/xsort.h) keyed by (ts, the index of the record
 * that made the row in the reference's processing order, creation order),
 * and are written out at the end, when the thread and process tables hold
 * their final names. Memory is the sort's run budget.
 *
 * Line format (tab-separated, one header line):
 *   ts dur machine file kind category name depth pid tid track args
 * kinds: slice (dur != 0), instant (a slice of dur 0), counter, sched,
 * ftrace (a kernel event the reference keeps no row of). dur is -1 for a
 * slice that never ends and empty for rows without one (counter, ftrace);
 * depth is empty except on slices and instants. track is the scope the
 * row hangs off, `thread`, `process`, `global` or `cpu`, then `:` and the
 * track's name where it has one (a CPU's number for sched and ftrace).
 * args is a compact JSON object: the event's arguments (slices), {"value":
 * v} (counters), {"cpu","end_state","prio"} (sched), the kernel event's
 * key=value fields (ftrace). Backslash, tab, newline, carriage return and
 * NUL inside a field are written \\ \t \n \r \0.
 */
#ifndef TM_TIMELINE_H
#define TM_TIMELINE_H

#include <stddef.h>
#include <stdint.h>

#include "input/merge.h"
#include "model/model.h"
#include "scan/scan.h"
#include "sort/spool.h"
#include "util/tm.h"

#define TM_TIMELINE_HEADER "ts\tdur\tmachine\tfile\tkind\tcategory\tname\tdepth\tpid\ttid\ttrack\targs\n"

typedef struct tm_timeline_build tm_timeline_build;

/* A timeline for the merge `m` whose first scan is `scan` (it names the
 * machines): the whole merge's, and with per_machine every machine's too
 * (else n_mach is 0: TM_GEN_TOP). `run_bytes` is the sort's run size (0:
 * the default; small values are for tests). With out_fd >= 0 (and no
 * per_machine), the whole merge's file is written to that descriptor as
 * its lines are made, not spooled: the result is `streamed`. */
tm_timeline_build *tm_timeline_new(tm_merge *m, const tm_scan *scan, int per_machine, size_t run_bytes,
				   int out_fd);

/* The model's rows (core/model/model.h sink members). A failure to spool is kept
 * and reported by tm_timeline_finish. */
void tm_timeline_slice(tm_timeline_build *b, const tm_mslice *s);
void tm_timeline_counter(tm_timeline_build *b, const tm_mcounter *c);
void tm_timeline_sched(tm_timeline_build *b, const tm_msched *s);
void tm_timeline_kernel(tm_timeline_build *b, const tm_mkernel *k);
/* A stack sample: kind `sample`, its source as category, its leaf frame as
 * name, its frames (leaf first, name and mapping each) as args. */
void tm_timeline_sample(tm_timeline_build *b, const tm_msample *s);

/* How far tm_timeline_finish is (for a front end's progress): fn gets the
 * lines written and all there are, every TM_TIMELINE_WRITTEN_STEP lines
 * and once at the end. */
#define TM_TIMELINE_WRITTEN_STEP 65536
void tm_timeline_watch(tm_timeline_build *b, void (*fn)(void *ctx, uint64_t done, uint64_t total), void *ctx);

/* Write the files with the finished model's tables (track, thread and
 * process names). Returns the spooled files (the whole merge; one per
 * machine row), or NULL with err set when a temporary file cannot be
 * written. Frees `b` either way. Unless streamed, the files are records
 * whose lines are made when read (tm_spooled_src): see
 * tm_timeline_hold_model. */
tm_spooled *tm_timeline_finish(tm_timeline_build *b, const tm_model *model, tm_error *err);

/* A result not streamed keeps the lines' records, and makes a view's
 * lines again when it is read, with the model's tables: the model must
 * outlive it. Hand it over here: 1 when `s` took it (it frees it), else 0
 * (the caller frees it, and s needs it no more). */
int tm_timeline_hold_model(tm_spooled *s, tm_model *model);

/* Free an unfinished build (NULL is fine). */
void tm_timeline_abort(tm_timeline_build *b);

/* `s` as a JSON number the way timeline.tsv writes one: the shortest
 * decimal that reads back as the same double. */
void tm_timeline_number(tm_buf *b, double v);

/* A kernel event's argument text (`k=v k=v ...`) as a compact JSON
 * object: integers as numbers, everything else as strings; text that is
 * not key=value pairs becomes {"text": ...}. */
void tm_timeline_kernel_args(tm_buf *b, const char *text);

#endif
