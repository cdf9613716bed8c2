/* core/pass/run.h - one pass over a merge: scan, order, model. */
#ifndef TM_RUN_H
#define TM_RUN_H

#include "model/model.h"
#include "util/tm.h"

/* Run the model over a merge: one scan (core/scan/scan.h) whose records go
 * through the reference's order (core/sort/order.h) into a model with `sink`
 * and the registry's parsers (core/formats/registry.h). `also` (may be
 * NULL) receives the scan's other callbacks in the same pass, so an
 * exporter reads each input once. With `records` 0 the scan makes no
 * records at all (for a caller that needs only `also`): the model stays
 * empty. Returns the finished model (its tables stay readable until
 * tm_model_free), or NULL with err set when the scan fails or a temporary
 * file cannot be written. `order_bytes`: the memory the records are put
 * in order with (tm_order_new; 0: its default). */
struct tm_merge;
struct tm_scan;
struct tm_scan_sink;
tm_model *tm_model_run(struct tm_merge *merge, const tm_model_sink *sink, const struct tm_scan_sink *also,
		       int records, size_t order_bytes, tm_error *err);

/* The same, handing the scan's results to `scanned` (it owns them then)
 * once the scan is done, failed or not, before any record reaches the
 * model: a caller that has no results yet takes them from this read
 * instead of a scan of its own. `scanned` returns 0 to go on, or -1 with
 * err set to stop (the run then returns NULL). */
typedef struct tm_model_scanned {
	void *ctx;
	int (*fn)(void *ctx, struct tm_scan *s, tm_error *err);
} tm_model_scanned;
tm_model *tm_model_run_scanned(struct tm_merge *merge, const tm_model_sink *sink,
			       const struct tm_scan_sink *also, int records, size_t order_bytes,
			       const tm_model_scanned *scanned, tm_error *err);

#endif
