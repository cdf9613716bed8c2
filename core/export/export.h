/* core/export/export.h - merged.pftrace (DESIGN.md, spec/formats.md §5.9): the
 * merge as one self-contained Perfetto trace, for the whole archive and
 * for each machine.
 *
 * Built in the generation pass (core/pass/gen.h). Proto packets are rewritten at the wire level
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

#include "input/merge.h"
#include "model/model.h"
#include "scan/scan.h"
#include "sort/spool.h"
#include "util/tm.h"

/* fd/size: the whole merge; mach_fd/mach_size: one per machine row of
 * the scan. */
typedef tm_spooled tm_export;

/* An export in progress: core/pass/gen.c drives it through one model run. */
typedef struct exp tm_export_build;

/* A format's encoder into merged.pftrace (core/formats/<format>/encode.c):
 * what the events the model observed become. The exporter knows no
 * format; it asks tm_encoders for the encoder of a record's kind. */
typedef struct exp_text exp_text;
typedef struct tm_encoder {
	/* the event of a record the model observed (tm_model_sink.observed) */
	void (*observed)(exp_text *t, const tm_mobserved *o);
	/* a counter sample the model made from a file of the format, when
	 * its events do not carry it (NULL: they do) */
	void (*counter)(exp_text *t, const tm_mcounter *c);
	/* what `observed` will write of an event (tm_mobserved.event) alone,
	 * appended to b (its bytes; 0 for none); of the exporter it reads
	 * only the scan's results, so that it may run ahead on the thread
	 * that feeds the model's (tm_model_sink.prepare). May be NULL. */
	size_t (*prepare)(const exp_text *t, int64_t ts, const tm_mrec_head *h, const void *event, tm_buf *b);
} tm_encoder;

/* Where the exporter finds encoders: by a record's kind (TM_MREC_*) and
 * by a trace file's type (its counters); NULL for none. The registry's
 * (core/formats/registry.h) are what tm_export_new gives. */
typedef struct tm_encoders {
	const tm_encoder *(*of_kind)(unsigned kind);
	const tm_encoder *(*of_type)(tm_type t);
} tm_encoders;

/* Does a file of `m` go through one of `enc`'s encoders (JSON, systrace,
 * ...)? Without one merged.pftrace is the copied proto packets alone. */
int tm_encoders_used(const tm_encoders *enc, const tm_merge *m);

/* Start the export of the merge `m` whose first scan is `scan` (it must
 * not have failed): the header is written. With per_machine 0 only the
 * whole merge's file is made (TM_GEN_TOP). NULL with err set when a
 * temporary file cannot be created. tm_export_new (core/formats/registry.h)
 * is this with the registry's encoders. */
tm_export_build *tm_export_new_with(tm_merge *m, const tm_scan *scan, int per_machine, const tm_encoders *enc,
				    tm_error *err);

/* The same for a pass whose own scan makes the scan's results
 * (tm_gen_build_scanning): kept packets wait until tm_export_attach gives
 * it those results, then are written after the header; or, when the
 * manifest fixes the machine rows (tm_scan_fixed_rows), are written at
 * once and the header is put in front of them by tm_export_attach. */
tm_export_build *tm_export_new_deferred_with(tm_merge *m, int per_machine, const tm_encoders *enc,
					     tm_error *err);
/* -1 with err set when a temporary file failed, or the scan did not end
 * with the machine rows the exporter was made for (the caller aborts). */
int tm_export_attach(tm_export_build *x, const tm_scan *scan, tm_error *err);

/* The pid of the process each thread of the model (by utid) has at the
 * end of a run of the model before this one (-1: none), to give a thread
 * of no process yet the descriptor of the process it will have: see
 * tm_export_wants_thread_pids. Takes `pids` (malloc'd, n of them). */
void tm_export_thread_pids(tm_export_build *x, int64_t *pids, size_t n);
/* Whether merged.pftrace of `m` may write a thread before it has a
 * process that it has later: an strace file (its threads come without
 * one) beside a file of another format, which may name their process. */
int tm_export_wants_thread_pids(const tm_merge *m);

/* The scan's packets (tm_scan_sink.packet), and the model's JSON
 * and systrace events and counters (tm_model_sink.observed, .counter). */
void tm_export_packet(tm_export_build *x, const tm_packet_out *po);
void tm_export_observed(tm_export_build *x, const tm_mobserved *o);
/* tm_model_sink.prepare: an event encoded ahead, by its kind's encoder. */
size_t tm_export_prepare(const tm_export_build *x, int64_t ts, const tm_mrec_head *h, const void *event, tm_buf *b);
void tm_export_counter(tm_export_build *x, const tm_mcounter *c);

/* After the model run: the names of threads and processes, then the
 * files. NULL with err set when a write failed. Frees `x` either way. */
tm_export *tm_export_finish(tm_export_build *x, const tm_model *model, tm_error *err);

/* Free an unfinished export (NULL is fine). */
void tm_export_abort(tm_export_build *x);

void tm_export_free(tm_export *x);

#endif
