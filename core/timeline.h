/* core/timeline.h - timeline.tsv (DESIGN.md): every placed event as one
 * text line, ordered by trace-time timestamp, for the whole merge and for
 * each machine.
 *
 * Built by a second scan whose events are spooled to temporary files,
 * sorted in bounded runs and merged, so memory does not grow with the
 * trace. The results are unlinked temporary files read by position.
 *
 * Line format (tab-separated, one header line):
 *   ts  dur  machine  file  kind  name  pid  tid  args
 * ts and dur in ns (dur empty when the event has none); machine is the
 * machines/ directory name; file the member path ("" for the top-level
 * input); pid/tid empty when unknown. Backslash, tab, newline, carriage
 * return and NUL inside a field are written \\ \t \n \r \0. Events with
 * equal ts keep the order in which the merge placed them.
 */
#ifndef TM_TIMELINE_H
#define TM_TIMELINE_H

#include <stddef.h>
#include <stdint.h>

#include "merge.h"
#include "scan.h"
#include "spool.h"
#include "tm.h"

#define TM_TIMELINE_HEADER "ts\tdur\tmachine\tfile\tkind\tname\tpid\ttid\targs\n"

/* fd/size: the whole merge; mach_fd/mach_size: one per machine row of
 * the scan. */
typedef tm_spooled tm_timeline;

/* Build the timelines of the merge `m`, whose first scan is `scan` (it
 * names the machines; it must not have failed). The run size (events per
 * sorted run) is a parameter for tests; 0 means the default. Returns NULL
 * with err set when a temporary file cannot be written. */
tm_timeline *tm_timeline_build(tm_merge *m, const tm_scan *scan, size_t run_events, tm_error *err);
void tm_timeline_free(tm_timeline *t);

#endif
