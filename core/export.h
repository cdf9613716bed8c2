/* core/export.h - merged.pftrace (DESIGN.md, spec/formats.md §5.9): the
 * merge as one self-contained Perfetto trace, for the whole archive and
 * for each machine.
 *
 * Built by a second scan. Proto packets are rewritten at the wire level
 * as the scan keeps them: timestamps in trace time (packet, ftrace event,
 * compact sched, legacy track-event microseconds folded into the packet
 * timestamp), clock snapshots, remote clock sync and clock ids dropped,
 * sequence ids renumbered per (file, machine, sequence), track uuids and
 * flow ids made unique per (file, machine), machine ids per machine.
 * Chrome JSON and systrace events become TrackEvent packets on thread,
 * process, async and counter tracks (sched_switch and sched_waking lines
 * become ftrace bundles). The output starts with one SystemInfo per
 * machine naming it (the host's first, without machine_id), each
 * followed, when trace time is a builtin clock, by a ClockSnapshot that
 * makes that clock the re-import's trace clock at zero offset.
 */
#ifndef TM_EXPORT_H
#define TM_EXPORT_H

#include <stddef.h>
#include <stdint.h>

#include "merge.h"
#include "scan.h"
#include "spool.h"
#include "tm.h"

/* fd/size: the whole merge; mach_fd/mach_size: one per machine row of
 * the scan. */
typedef tm_spooled tm_export;

/* Build merged.pftrace for the merge `m` whose first scan is `scan` (it
 * must not have failed). NULL with err set when a temporary file cannot be
 * written or the second scan fails. */
tm_export *tm_export_build(tm_merge *m, const tm_scan *scan, tm_error *err);
void tm_export_free(tm_export *x);

#endif
