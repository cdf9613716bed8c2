/* core/scan/machine.h - the machine table (spec/machines.md).
 *
 * Rows are created in the order the reference creates them (§3): the
 * manifest's names first, then lazily as files start and embedded machine
 * ids are first routed. Clock nodes are keyed by row; users see raw_id and
 * name.
 */
#ifndef TM_MACHINE_H
#define TM_MACHINE_H

#include <stddef.h>
#include <stdint.h>

#include "util/tm.h"

#define TM_RAW_HOST 0
#define TM_RAW_NAMED_BASE (INT64_C(1) << 32) /* k-th manifest name: 2^32 + k */

typedef struct tm_machine {
	int64_t raw_id;
	char *name;        /* manifest or SystemInfo.machine_name; NULL if unnamed */
	char *sysname, *release, *version, *arch; /* SystemInfo.utsname, NULL if none */
	int64_t num_cpus;  /* -1 if unknown */
	int has_context;   /* some file has routed data to this row */
} tm_machine;

typedef struct tm_machines {
	tm_machine *rows;
	size_t n, cap;
	/* raw id -> its first row, for rows [0, ix_rows): a walk per lookup
	 * took the square of the machine count (20,000 machines) */
	tm_u64map ix;
	size_t ix_rows;
} tm_machines;

/* Append a row; returns its index. `name` is copied (may be NULL). */
uint32_t tm_machines_add(tm_machines *t, int64_t raw_id, const char *name);
/* The row whose raw id is `raw`, or -1. It indexes the rows added since
 * the last lookup, so two threads must not call it at once (the scan and
 * the generation pass, under its lock, are its callers). */
int64_t tm_machines_find(const tm_machines *t, int64_t raw);
/* The row for `raw`, created at the end if there is none. */
uint32_t tm_machines_get(tm_machines *t, int64_t raw);
/* Give a row another raw id (a proto file adopting its host row). */
void tm_machines_set_raw(tm_machines *t, uint32_t row, int64_t raw);
/* Replace a row's name (SystemInfo overwrites the manifest's, §7). */
void tm_machines_set_name(tm_machines *t, uint32_t row, const char *name);
/* Replace one utsname field (*field is one of the row's char* members). */
void tm_machines_set_text(char **field, const char *value);
/* §6: 0 for the host (raw id 0), else the 1-based rank among non-host rows. */
uint32_t tm_machines_label_index(const tm_machines *t, uint32_t row);
/* A directory name for machines/: the name escaped for a path component
 * (tracemount(1), "Machine folders"), or "machine<label_index>" when
 * unnamed, made unique among the rows before it with "~<row>". Caller frees. */
char *tm_machines_dir_name(const tm_machines *t, uint32_t row);
/* Every row's directory name at once, as tm_machines_dir_name gives
 * them, in time linear in the rows (one call per row takes their square:
 * an archive may put each of thousands of files on a machine of its own).
 * Free with tm_machines_dir_names_free. */
char **tm_machines_dir_names(const tm_machines *t);
void tm_machines_dir_names_free(char **names, size_t n);
void tm_machines_free(tm_machines *t);

#endif
