/* core/pass/gen.h - the generation pass: every generated file of the merge
 * from one read of the inputs (issue 10: "read each input once for all
 * tiers that are wanted").
 *
 * One scan (core/scan/scan.h) runs the model (core/model/model.h) in the reference's
 * order; on the way, kept proto packets are rewritten into merged.pftrace,
 * and the model's rows feed the exporter (JSON and systrace events),
 * timeline.tsv and the per-machine tables. Everything is spooled to
 * unlinked temporary files, so memory stays bounded and each file's size
 * is exact once the pass is over.
 */
#ifndef TM_GEN_H
#define TM_GEN_H

#include <stddef.h>

#include "export/export.h"
#include "input/merge.h"
#include "scan/scan.h"
#include "util/statlist.h"
#include "export/tables.h"
#include "export/timeline.h"
#include "util/tm.h"

/* The families of generated files, for `wants`. */
enum {
	TM_GEN_PFTRACE = 1,  /* merged.pftrace */
	TM_GEN_TIMELINE = 2, /* timeline.tsv */
	TM_GEN_TABLES = 4,   /* the machine tables */
	TM_GEN_ALL = 7,
	/* With it, merged.pftrace and timeline.tsv are made for the whole
	 * merge alone, not for every machine too (tm_spooled.n_mach is 0):
	 * what `tracemount cat` of a top-level file shows. A machine's copy of
	 * the bytes was a tenth of the JSON export, where the machines'
	 * events interleave. */
	TM_GEN_TOP = 8,
	/* The stats the parse counts (tm_gen.stats), for metadata.json: the
	 * model's run over every record and nothing written. Every pass that
	 * runs the model over every record (timeline.tsv, the tables, any
	 * pass over JSON or systrace input) makes them too. */
	TM_GEN_STATS = 16
};

typedef struct tm_gen {
	tm_export *pftrace;     /* merged.pftrace */
	tm_spooled *timeline;   /* timeline.tsv */
	tm_tables *tables;      /* machines/<dir>/{processes,threads,slices}.tsv */
	tm_statlist *stats;     /* the stats the parse counted per file and
				   machine (tm_model_file_stats), or NULL: the
				   pass did not run the model over every record */
} tm_gen;

/* How far a generation pass is (for a front end's progress): reading the
 * traces (bytes of trace files; a pass that is also the scan reports this
 * as the scan's progress instead), then taking the events out of order
 * into the model, then writing timeline.tsv's lines. Each phase is
 * reported as it goes and once at its end (done is then all it did). */
enum { TM_GEN_READING, TM_GEN_ORDERING, TM_GEN_WRITING };
typedef struct tm_gen_progress {
	int phase;           /* TM_GEN_READING, _ORDERING or _WRITING */
	uint64_t done, total; /* bytes, events, lines */
	const char *file;    /* TM_GEN_READING: the file being read */
} tm_gen_progress;
typedef struct tm_gen_watch {
	void *ctx;
	void (*fn)(void *ctx, const tm_gen_progress *p);
} tm_gen_watch;

/* Build the generated files in `wants` (TM_GEN_* bits; the others stay
 * NULL, and the pass skips the work only they need) of the merge `m`
 * whose first scan is `scan` (it must not have failed). `run_bytes` is the
 * external sorts' run size (0: the default; small values are for tests).
 * With timeline_fd >= 0 and TM_GEN_TOP, timeline.tsv is written to that
 * descriptor as it is made instead of a temporary file (its tm_spooled is
 * `streamed`); -1: spooled as every other file. `watch` (may be NULL)
 * gets the pass's progress. NULL with err set when a temporary file (or
 * timeline_fd) cannot be written or the scan fails. */
tm_gen *tm_gen_build(tm_merge *m, const tm_scan *scan, unsigned wants, size_t run_bytes, int timeline_fd,
		     const tm_gen_watch *watch, tm_error *err);

/* The same for a merge not scanned yet, reading each input once: the
 * pass's own scan gives the scan's results, handed to scanned->fn (which
 * owns them then) as soon as the scan is done, failed or not, while the
 * pass goes on. scanned->progress (may be NULL) gets the scan's progress
 * callback. Kept proto packets are rewritten as the scan reads them and
 * wait in a temporary file for the header, which needs the whole scan's
 * results (tm_export_new_deferred). */
typedef struct tm_gen_scanned {
	void *ctx;
	void (*fn)(void *ctx, tm_scan *s);
	const tm_scan_sink *progress;
} tm_gen_scanned;
tm_gen *tm_gen_build_scanning(tm_merge *m, unsigned wants, size_t run_bytes, int timeline_fd,
			      const tm_gen_scanned *scanned, const tm_gen_watch *watch, tm_error *err);
void tm_gen_free(tm_gen *g);

#endif
