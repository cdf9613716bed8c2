/* core/manifest.h - perfetto_manifest version 1 (spec/manifest.md): parse,
 * validate in the order of §6 with the exact texts of §8, resolve and
 * apply (§7, machines.md §3, clocks.md §9).
 */
#ifndef TM_MANIFEST_H
#define TM_MANIFEST_H

#include <stddef.h>
#include <stdint.h>

#include "clockid.h"
#include "tm.h"

typedef struct tm_mf_remap {
	uint32_t id;
	char *name;
} tm_mf_remap;

typedef struct tm_mf_clocks {
	char *machine;        /* clocks.machine, or NULL */
	uint32_t clock;       /* clocks.clock, 0 when absent (PIN) */
	char *sync_file;
	char *sync_machine;   /* or NULL */
	uint32_t sync_clock;  /* 0 when absent (the reference file's private clock) */
	int64_t offset_ns;
} tm_mf_clocks;

typedef struct tm_mf_column {
	char *name, *type, *nullability, *sort, *duplicates;
} tm_mf_column;

typedef struct tm_mf_table {
	int64_t format, row_count;
	char *name;
	tm_mf_column *columns;
	size_t n_columns;
} tm_mf_table;

typedef struct tm_mf_file {
	char *path;
	char *machine;          /* machine.name, or NULL */
	int has_machines;       /* a `machines` array was given */
	tm_mf_remap *machines;
	size_t n_machines;
	tm_mf_clocks *clocks;   /* NULL when absent */
	tm_mf_table *table;     /* __exported_table_schema, or NULL */
} tm_mf_file;

typedef struct tm_mf_attr {
	char *key;
	int is_int;
	int64_t i;
	char *s;
} tm_mf_attr;

typedef struct tm_manifest {
	int has_trace_time;
	uint32_t tt_clock;
	char *tt_file, *tt_machine;   /* NULL when absent */
	tm_mf_file *files;
	size_t n_files;
	tm_mf_attr *attrs;            /* sorted by key, duplicates resolved (last wins) */
	size_t n_attrs;
	char **names;                 /* distinct machine names, k-th has raw id 2^32 + k */
	size_t n_names;
} tm_manifest;

/* Parse and validate (manifest.md §6 steps 1-5). On success *out owns the
 * manifest; on failure err holds the exact message. */
int tm_manifest_parse(const void *buf, size_t len, tm_manifest **out, tm_error *err);
/* §6 step 6: every exported table member exists. */
int tm_manifest_check_tables(const tm_manifest *m, int (*has_member)(void *ctx, const char *path),
			     void *ctx, tm_error *err);
void tm_manifest_free(tm_manifest *m);

/* A manifest with version 1 and nothing else (for the defaults view). */
tm_manifest *tm_manifest_new_default(void);
/* Append a path-only entry. */
void tm_manifest_add_file(tm_manifest *m, const char *path);

/* ---- application (§3.2, §6 step 7) ------------------------------------ */

typedef struct tm_mf_row {
	int64_t raw_id;   /* 0 for the host, 2^32 + k for the k-th name */
	char *name;       /* NULL for the host */
} tm_mf_row;

typedef struct tm_mf_edge {
	tm_clock_node src, ref;
	int64_t src_ts, ref_ts;
	size_t file_index;  /* the files[] entry with the clocks block */
} tm_mf_edge;

typedef struct tm_mf_plan {
	tm_mf_row *rows;    /* machine rows created by the manifest, in row order */
	size_t n_rows;
	int has_trace_time;
	tm_clock_node trace_time;
	tm_mf_edge *edges;  /* in insertion order */
	size_t n_edges;
} tm_mf_plan;

/* Resolve trace_time and every clocks block; `member_file_id` gives the
 * file id of an archive member by name, or -1. Errors: the §7/§8.2/§8.4
 * texts. The duplicate-clock-domain error is the clock graph's. */
int tm_manifest_apply(const tm_manifest *m, int64_t (*member_file_id)(void *ctx, const char *path),
		      void *ctx, tm_mf_plan *out, tm_error *err);
void tm_mf_plan_free(tm_mf_plan *p);

/* ---- lookups ---------------------------------------------------------- */

/* Index of the first entry whose path equals `name` byte for byte, or -1. */
int32_t tm_manifest_find_entry(const tm_manifest *m, const char *name);
/* A non-empty `machines` array (manifest.md §5.4). */
int tm_manifest_entry_is_multi(const tm_manifest *m, size_t i);
/* The base machine name: machine.name, or the machines item with id 0; NULL. */
const char *tm_manifest_entry_base_name(const tm_manifest *m, size_t i);
/* machines.md §2: raw id of the entry's base machine (0 = host). */
int64_t tm_manifest_entry_base_raw_id(const tm_manifest *m, size_t i);
/* §3.3 step 2: clocks, or a base machine, are refused on containers. */
int tm_manifest_entry_forbids_container(const tm_manifest *m, size_t i);
/* Raw id of a machine name, or -1. */
int64_t tm_manifest_name_raw_id(const tm_manifest *m, const char *name);
/* Remap an embedded machine id through the entry's `machines`: the raw id,
 * or -1 when the id is not declared. */
int64_t tm_manifest_entry_remap(const tm_manifest *m, size_t i, uint32_t machine_id);
/* The trace_time clock id, 0 when the manifest sets none. */
uint32_t tm_manifest_trace_time_clock(const tm_manifest *m);

/* ---- output ----------------------------------------------------------- */

/* The normalised manifest: pretty JSON with a trailing newline (caller frees). */
char *tm_manifest_to_json(const tm_manifest *m, size_t *len);
/* cJSON objects (caller owns) for metadata.json. */
struct cJSON *tm_manifest_entry_json(const tm_manifest *m, size_t i);
struct cJSON *tm_manifest_attributes_json(const tm_manifest *m);

#endif
