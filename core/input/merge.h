/* core/input/merge.h - one import session: the trace-file table, processing
 * order, the manifest, and the tiers of DESIGN.md (mount now; scan and
 * export build on it).
 *
 * Mount tier (tm_merge_open): list every container depth-first in the
 * reference's processing order (formats.md §2.4), sniff every member, read
 * and validate the manifest where it is processed, and raise every error
 * that needs no trace parsing, in the order the reference would meet them.
 */
#ifndef TM_MERGE_H
#define TM_MERGE_H

#include <stdint.h>

#include "container/archive.h"
#include "detect/detect.h"
#include "util/tm.h"

struct tm_manifest;

/* One row of the trace-file table (formats.md §2.6). */
typedef struct tm_file {
	/* Ordered widest first: an archive may hold 100,000 of these. */
	int64_t parent;       /* id of the container, -1 for the top level */
	char *name;           /* NULL for the top level, "" for a decompressed stream,
	                         else the member name as matched by the manifest */
	int64_t size;         /* size of the file's bytes, -1 while unknown (a stream) */
	tm_blob *blob;        /* the file's bytes (decompressed for a stream) */
	uint64_t dir_hash;    /* a ZIP or TAR: its listing's dir_hash (archive.h), else 0 */
	uint32_t id;          /* 0 = the top-level input (or the virtual archive of
	                         several inputs); members 1, 2, ... in listing order */
	tm_type type;
	uint32_t order;       /* processing order (0 = top level) */
	int32_t entry;        /* index of the first matching manifest files[] entry, or -1 */
	int32_t view;         /* index into tm_merge.members when shown under files/, else -1 */
	uint8_t processed;    /* reached by the walk (an error may stop it early) */
	uint8_t name_shared;  /* `name` is the member view's (not freed with the row) */
} tm_file;

/* An entry of the outermost archive, as files/ shows it (every member,
 * including the ones the merge skips). */
typedef struct tm_member_view {
	tm_entry entry;       /* name, kind, size, blob, ... (owned) */
	int64_t file_id;      /* its row in the file table, -1 if the merge skips it */
	const char *skip_reason; /* static text when skipped, else NULL */
} tm_member_view;

typedef struct tm_merge {
	char *path;               /* the archive as given; for several inputs, their
	                             paths joined by spaces (for messages) */
	char **inputs;            /* several inputs: the INPUT operands in order, else NULL */
	size_t n_inputs;
	int64_t mtime;            /* the archive's mtime (several inputs: the newest) */
	tm_blob *top;             /* the archive's bytes; NULL for several inputs */
	tm_file *files;           /* by id */
	size_t n_files, cap_files;
	uint32_t *order;          /* file ids in processing order */
	size_t n_order, cap_order;
	tm_member_view *members;  /* files/ view, listing order */
	size_t n_members, cap_members;
	int members_are_archive;  /* the input is an archive (else files/ shows the input itself) */
	struct tm_manifest *manifest; /* the applied manifest, or NULL */
	int64_t manifest_file;    /* its file id, or -1 */
	void *plan;               /* tm_mf_plan * once applied */
	int trace_started;        /* a non-container trace file has begun processing */
	char **files_paths;       /* by file id: its path in the tree where that is not
	                             "files/" + its name (escaped or renamed, tracemount(1)
	                             "files/"), set by the tree that shows it (vtree_open);
	                             NULL while no name needs one */
} tm_merge;

/* Mount tier. NULL with err set (TM_EINPUT + exact text) when the archive
 * cannot be merged, TM_EIO when it cannot be read. */
tm_merge *tm_merge_open(const char *path, tm_error *err);
void tm_merge_free(tm_merge *m);

/* Several inputs (issue 11, core/input/inputs.h): trace files, archives and
 * directories, and an optional manifest file, merged exactly as one archive
 * holding them in the order given would be. File 0 is that archive (type
 * TM_TYPE_INPUTS: no bytes, size -1); the inputs are its members (ids from
 * 1, a manifest file first), shown under files/. One input that is not a
 * directory, without a manifest, is opened as tm_merge_open opens it unless
 * `as_members` is set (`tracemount pack` always makes inputs members).
 * Errors: those of tm_inputs_list, then those of tm_merge_open. */
tm_merge *tm_merge_open_inputs(const char *const *paths, size_t n, const char *manifest, int as_members,
			       tm_error *err);

/* The name messages and the check summary give the session (`tracemount
 * pack` names its dry run after the archive it writes, not the temporary
 * file it reads). */
void tm_merge_set_name(tm_merge *m, const char *name);

/* The file row for an id, or NULL. */
const tm_file *tm_merge_file(const tm_merge *m, uint32_t id);


#endif
