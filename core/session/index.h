/* core/session/index.h - the index cache (DESIGN.md "Laziness and cost tiers"):
 * what the scan found, kept on disk, so that opening an unchanged archive
 * again answers metadata.json, machines/ and clocks/ without reading a
 * single trace.
 *
 * Where: one file per set of inputs in $XDG_CACHE_HOME/tracemount/ (else
 * ~/.cache/tracemount/), named after a hash of the inputs' absolute paths,
 * so that a changed archive overwrites its own stale index; or the file
 * `-o index=PATH` names.
 *
 * Key: what the results depend on, kept whole in the file and compared
 * byte for byte: the tracemount version and build (the executable's
 * identity), and for every file read (the archive; for several inputs each
 * member, and a manifest given apart by its content) its device, inode,
 * size, mtime and ctime in ns and a hash of its first MiB, and the hash of
 * the header listing of every ZIP and TAR opened. Any change misses.
 *
 * File (core/util/ser.h: varints, length-prefixed strings and bytes):
 *   "TMINDEX\n", format (TM_INDEX_FORMAT) and the CRC-32 of all that
 *   follows as 32-bit little-endian words, then
 *   str tracemount version, bytes key, section count, and per section its
 *   kind and its payload (bytes)
 * Sections are a list, so that a reader skips kinds it does not know. A
 * file is read whole, into an anonymous mapping of its own, and checked
 * before anything in it is used (a section's loader may then give its
 * pages back as it passes them: tm_scan_load's `spend`); writing goes to a
 * temporary file renamed over the index.
 */
#ifndef TM_INDEX_H
#define TM_INDEX_H

#include <stddef.h>
#include <stdint.h>

#include "input/merge.h"
#include "util/tm.h"

/* The layout of the file and of every section; bump it with any change. */
#define TM_INDEX_FORMAT 2

/* Section kinds. Ids are never reused. */
enum {
	TM_INDEX_SCAN = 1,  /* the scan's results: tm_scan_save (core/scan/scan.h) */
	TM_INDEX_SIZES = 2, /* the sizes of the files a generation pass made
			       (merged.pftrace, timeline.tsv, the tables;
			       core/session/vtree.c) */
	TM_INDEX_STATS = 3, /* the stats the parse counted, for metadata.json
			       (tm_statlist_save, core/util/statlist.h) */
};

/* TM_INDEX_SIZES: the size of each file a generation pass made, named
 * by the caller's kind and row (core/session/vtree.c). */
struct tm_ser_out;
typedef struct tm_index_size {
	uint32_t kind, row;
	uint64_t size;
} tm_index_size;
void tm_index_sizes_save(const tm_index_size *e, size_t n, struct tm_ser_out *out);
/* The entries of a TM_INDEX_SIZES payload (a new array in *e, caller
 * frees; NULL for none), or -1 with *why (static text) when the bytes are
 * not such a payload. */
int tm_index_sizes_load(const void *p, size_t len, tm_index_size **e, size_t *n, const char **why);

/* The key of a merge's inputs (see above), appended to *key as bytes.
 * -1 when a file cannot be read (there is no index then). */
int tm_index_key(const tm_merge *m, tm_buf *key);

/* The cache's file for these inputs (their absolute paths, the manifest
 * file's, and whether inputs are taken as members); NULL when there is no
 * cache directory (neither $XDG_CACHE_HOME nor $HOME). Caller frees. */
char *tm_index_default_path(const char *const *paths, size_t n, const char *manifest, int as_members);

typedef struct tm_index tm_index;

/* Read the index at `path` made for `key`. A hit returns it. A miss
 * returns NULL with *why NULL: there is no such file, or it was made for
 * other inputs (or before they changed): nothing to say. NULL with *why
 * set (static text: "truncated", "not a tracemount index", "checksum
 * mismatch", "written by tracemount X"...; caller frees) when the file
 * cannot be trusted: it is ignored, and the caller says so. */
tm_index *tm_index_read(const char *path, const tm_buf *key, char **why);

/* The payload of the first section of `kind`, or NULL. */
const void *tm_index_find(const tm_index *ix, uint32_t kind, size_t *len);
void tm_index_free(tm_index *ix);

/* A section to write: save(obj, out) writes its payload; it is called
 * twice, to learn the payload's length and to write it (so that a large
 * index never sits whole in memory). */
typedef struct tm_index_section {
	uint32_t kind;
	void (*save)(const void *obj, struct tm_ser_out *out);
	const void *obj;
} tm_index_section;

/* Write the index for `key` with `n` sections at `path`, atomically (a
 * temporary file next to it, renamed over it), making missing directories
 * above it (mode 0700). -1 with err (TM_EIO, the system's reason). */
int tm_index_write(const char *path, const tm_buf *key, const tm_index_section *s, size_t n, tm_error *err);

/* Whether `path` holds bytes that are no index (an empty file, or none,
 * is not foreign): a file the user named with -o index= is then left as
 * it is, since replacing it would lose it (a trace named by mistake). */
int tm_index_foreign(const char *path);

#endif
