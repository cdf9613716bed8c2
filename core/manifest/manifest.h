/* core/manifest/manifest.h - perfetto_manifest version 1 (spec/manifest.md): parse
 * and validate in the order of §6 with the exact texts of §8, answer the
 * lookups the merge needs, plan the application (§3.2, §7, machines.md §3,
 * clocks.md §5.3 and §9), and print the normalised manifest.
 *
 * All errors are TM_EINPUT with the bare message of manifest.md §8 (the
 * contract); functions returning int give 0 on success, -1 on error.
 */
#ifndef TM_MANIFEST_H
#define TM_MANIFEST_H

#include <stddef.h>
#include <stdint.h>

#include "clock/clockid.h"
#include "util/tm.h"

struct cJSON;

/* Raw id of the k-th distinct manifest machine name (machines.md §1). */
#define TM_MF_RAW_NAMED_BASE (INT64_C(1) << 32)

/* A manifest string: the bytes as decoded from JSON, always NUL-terminated.
 * A JSON \u0000 can put a NUL inside, so identity is all `len` bytes
 * (manifest.md §3.4: exact bytes): such a string never equals a member
 * name, and "a\u0000b" and "a\u0000c" are two machines. `s` is NULL when
 * the field is absent. */
typedef struct tm_mf_str {
	char *s;
	size_t len;
} tm_mf_str;

typedef struct tm_mf_remap {
	uint32_t id;       /* embedded TracePacket.machine_id */
	tm_mf_str name;
} tm_mf_remap;

typedef struct tm_mf_clocks {
	tm_mf_str machine;      /* clocks.machine (absent: s == NULL) */
	uint32_t clock;         /* clocks.clock; 0 = absent: PIN the file's private clock */
	tm_mf_str sync_file;    /* sync_to.file (required) */
	tm_mf_str sync_machine; /* sync_to.machine (absent: s == NULL) */
	uint32_t sync_clock;    /* sync_to.clock; 0 = absent: the reference file's private clock */
	int has_offset;         /* offset_ns was written */
	int64_t offset_ns;      /* 0 when absent; never INT64_MIN */
} tm_mf_clocks;

typedef struct tm_mf_column {
	tm_mf_str name, type, nullability, sort, duplicates;
} tm_mf_column;

/* __exported_table_schema (manifest.md §5.9), kept only to validate and
 * to print back. */
typedef struct tm_mf_table {
	int64_t format;
	tm_mf_str name;
	int64_t row_count; /* in [0, 4294967295] */
	tm_mf_column *columns;
	size_t n_columns;
} tm_mf_table;

typedef struct tm_mf_file {
	tm_mf_str path;
	tm_mf_str machine;      /* machine.name (absent: s == NULL) */
	int has_machines;       /* a `machines` array was written (maybe empty) */
	tm_mf_remap *machines;  /* in array order, duplicates kept */
	size_t n_machines;
	tm_mf_clocks *clocks;   /* NULL when absent */
	tm_mf_table *table;     /* NULL when absent; then the fields above are empty */
} tm_mf_file;

typedef struct tm_mf_attr {
	tm_mf_str key;
	int is_int;   /* an integer literal; else a string */
	int64_t i;
	tm_mf_str s;
} tm_mf_attr;

typedef struct tm_manifest {
	int has_trace_time;
	uint32_t tt_clock;         /* a builtin id 1..6 when has_trace_time */
	tm_mf_str tt_file;         /* absent: s == NULL */
	tm_mf_str tt_machine;      /* absent: s == NULL */
	int has_files;             /* a `files` array was written (maybe empty) */
	tm_mf_file *files;
	size_t n_files;
	int has_attributes;        /* an `attributes` object was written */
	tm_mf_attr *attrs;         /* sorted by key bytes; a duplicate key keeps its last value */
	size_t n_attrs;
	/* machines.md §3: the distinct names of `files` in allocation order
	 * (per entry `machine` first, then `machines` items); the k-th has raw
	 * id TM_MF_RAW_NAMED_BASE + k. Derived, not printed. */
	tm_mf_str *names;
	size_t n_names;
	/* Hash indexes (slot -> index + 1, open addressing) of names and of
	 * the first entry of each path: a manifest may list 100,000 files,
	 * and each member and each name is looked up. Built with the tables;
	 * a path index covers path_ix_n entries. */
	uint32_t *name_ix, *path_ix;
	size_t name_ix_cap, path_ix_cap, path_ix_n;
} tm_manifest;

/* ---- reading ------------------------------------------------------------- */

/* Parse buf[0..len) and validate it (manifest.md §6 steps 1-5; bytes after
 * the root value are ignored). On success *out owns the manifest (free with
 * tm_manifest_free); on failure *out is NULL and err holds the exact text:
 * a JSON syntax text of json.h, or a §8.1-8.3, 8.5, 8.6 text. */
int tm_manifest_parse(const void *buf, size_t len, tm_manifest **out, tm_error *err);

/* §6 step 6: every __exported_table_schema entry names an archive member;
 * `has_member` says whether a member of that exact name exists. */
int tm_manifest_check_tables(const tm_manifest *m, int (*has_member)(void *ctx, const char *path),
			     void *ctx, tm_error *err);

/* Free a manifest (NULL is fine). */
void tm_manifest_free(tm_manifest *m);

/* A manifest holding only version 1 (the defaults view); caller frees. */
tm_manifest *tm_manifest_new_default(void);
/* Append a path-only `files` entry (marks `files` present). */
void tm_manifest_add_file(tm_manifest *m, const char *path);

/* ---- application (§3.2, §6 step 7) --------------------------------------- */

typedef struct tm_mf_row {
	int64_t raw_id;   /* 0 for the host, TM_MF_RAW_NAMED_BASE + k for the k-th name */
	char *name;       /* the name (NUL-terminated, may hold NULs before), NULL for the host */
} tm_mf_row;

typedef struct tm_mf_edge {
	tm_clock_node src, ref;  /* clocks.md §9.1 */
	int64_t src_ts, ref_ts;  /* max(0, -offset_ns), max(0, offset_ns) (§9.2) */
	size_t file_index;       /* the files[] entry holding the clocks block */
} tm_mf_edge;

typedef struct tm_mf_plan {
	tm_mf_row *rows;          /* machine rows the manifest creates, row k = rows[k] */
	size_t n_rows;
	int has_trace_time;
	tm_clock_node trace_time; /* (clock, 0, 0, row) the manifest claims */
	tm_mf_edge *edges;        /* one per clocks block, in files order */
	size_t n_edges;
} tm_mf_plan;

/* Plan the application: one row per distinct name, then the host row if
 * trace_time or a clocks block resolves to a file without a machine;
 * resolve trace_time (row 0 when it names no file, clocks.md §5.3); one
 * edge per clocks block. `member_file_id` gives the trace-file id of the
 * archive member with that exact name, or -1. Checks run in §6 step-7
 * order and fail with the §7/§8.2/§8.4 texts; *out is then empty. The
 * duplicate-clock-domain error is left to the clock graph that receives
 * the edges. Free a successful plan with tm_mf_plan_free. */
int tm_manifest_apply(const tm_manifest *m, int64_t (*member_file_id)(void *ctx, const char *path),
		      void *ctx, tm_mf_plan *out, tm_error *err);
/* Free what a plan owns and empty it (NULL is fine). */
void tm_mf_plan_free(tm_mf_plan *p);

/* ---- lookups for the merge ----------------------------------------------- */

/* Index of the first entry whose path equals the member name byte for byte
 * (§3.4: the first wins), or -1; `m` may be NULL. */
int32_t tm_manifest_find_entry(const tm_manifest *m, const char *name);
/* Entry i is multi-machine: its `machines` array is non-empty (§5.4). */
int tm_manifest_entry_is_multi(const tm_manifest *m, size_t i);
/* Entry i's base machine name (machines.md §2): machine.name, else the
 * name of the LAST `machines` item with id 0 (the reference assigns each in
 * turn), else NULL for the host. Owned by the manifest. */
const char *tm_manifest_entry_base_name(const tm_manifest *m, size_t i);
/* Raw id of entry i's base machine: 0 for the host. */
int64_t tm_manifest_entry_base_raw_id(const tm_manifest *m, size_t i);
/* Remap an embedded machine_id through entry i's `machines`: the raw id of
 * the FIRST item with that id (the reference's map keeps the first), or -1
 * when the id is not listed. The proto reader routes machine_id 0 to the
 * base machine instead (machines.md §4). */
int64_t tm_manifest_entry_remap(const tm_manifest *m, size_t i, uint32_t machine_id);
/* Raw id of a machine name, or -1 when the manifest does not name it. */
int64_t tm_manifest_name_raw_id(const tm_manifest *m, const char *name);
/* §3.3 step 2 and §9: entry i carries an override refused on a container
 * or manifest member (`clocks`, or a base machine); a `machines` list
 * without id 0 is not one. */
int tm_manifest_entry_forbids_container(const tm_manifest *m, size_t i);
/* The trace_time clock id, 0 when the manifest sets none or m is NULL. */
uint32_t tm_manifest_trace_time_clock(const tm_manifest *m);

/* ---- output -------------------------------------------------------------- */

/* The normalised manifest: root key perfetto_manifest, version 1, then
 * exactly the fields present (clock ids as names, duplicates resolved as
 * the reader resolves them), pretty-printed with a 2-space indent and a
 * trailing newline. tm_manifest_parse reads it back to an equal manifest
 * (NULs inside strings included). Caller frees; *len (if not NULL) gets
 * the length. */
char *tm_manifest_to_json(const tm_manifest *m, size_t *len);
/* Entry i as a cJSON object, and the attributes as one (for
 * metadata.json); caller owns the result. Strings holding a NUL are raw
 * items with the NUL escaped; an attribute key holding one is cut there
 * (cJSON keys are C strings). */
struct cJSON *tm_manifest_entry_json(const tm_manifest *m, size_t i);
struct cJSON *tm_manifest_attributes_json(const tm_manifest *m);

#endif
