/* core/util/statlist.h - stats by name, per trace file and machine, as the
 * reference's stats table keeps them (its Scope::kMachineAndTrace: a row
 * per name, index, machine and trace file).
 *
 * The scan's own stats are a fixed enum (core/scan/scan.h); this list holds the
 * others: the indexed config_* stats the scan reads from a TraceConfig,
 * and the stats the model counts while it parses events in the
 * reference's order (core/model/model.h), which metadata.json shows per file
 * and in total.
 */
#ifndef TM_STATLIST_H
#define TM_STATLIST_H

#include <stddef.h>
#include <stdint.h>

#include "util/tm.h"

struct tm_ser_out;
struct tm_ser_rd;

typedef struct tm_named_stat {
	uint32_t file_id;
	uint32_t machine_row;
	int64_t idx;    /* the index of an indexed stat, -1 for a single one */
	char *name;     /* the reference's stat name */
	int64_t value;
} tm_named_stat;

typedef struct tm_statlist {
	tm_named_stat *v; /* in first-count order */
	size_t n, cap;
	tm_u64map ix;     /* hash of (file, machine, idx, name) -> index in v */
} tm_statlist;

/* Add `value` to the stat (name, idx) of that file and machine. */
void tm_statlist_add(tm_statlist *l, uint32_t file_id, uint32_t machine_row, const char *name, int64_t idx,
		     int64_t value);
/* Make the stat (name, idx) of that file and machine `value` (the
 * reference's SetStats: the last value stays). */
void tm_statlist_set(tm_statlist *l, uint32_t file_id, uint32_t machine_row, const char *name, int64_t idx,
		     int64_t value);
/* Every entry of `from` added to `to`. */
void tm_statlist_merge(tm_statlist *to, const tm_statlist *from);
void tm_statlist_free(tm_statlist *l);

/* For the index cache (core/util/ser.h). Load returns 0, or -1 with the
 * reader bad (the list is then empty). */
void tm_statlist_save(const tm_statlist *l, struct tm_ser_out *out);
int tm_statlist_load(tm_statlist *l, struct tm_ser_rd *r);

#endif
