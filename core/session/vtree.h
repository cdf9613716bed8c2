/* core/session/vtree.h - the virtual tree of DESIGN.md: path -> node, node -> bytes.
 *
 * The only interface the front ends (fs/: the FUSE daemon and the no-FUSE
 * `tracemount ls|cat|check`) use, so both serve byte-identical content.
 * All functions are safe to call from several threads at once. Work is done
 * the first time a path needs it (DESIGN.md "cost tiers") and shared by all
 * readers.
 */
#ifndef TM_VTREE_H
#define TM_VTREE_H

#include <stdint.h>
#include <sys/types.h>

#include "util/tm.h"

typedef struct tm_vtree tm_vtree;
typedef uint64_t vt_ino; /* stable node number; the root is VT_ROOT */
#define VT_ROOT ((vt_ino)1)

typedef enum vt_kind { VT_DIR, VT_REG, VT_LNK } vt_kind;

typedef struct vt_stat {
	vt_kind kind;
	uint64_t size;  /* exact size in bytes (for VT_LNK: length of the target) */
	uint32_t nlink;
	int64_t mtime;  /* seconds; the archive's mtime unless a member says otherwise */
	vt_ino ino;
} vt_stat;

/* Mount tier: open ARCHIVE, list and sniff its members, read and validate
 * the manifest. NULL with err set (TM_EINPUT and the exact message, or
 * TM_EIO naming the file) when the archive cannot be merged: the caller
 * refuses to mount and exits 1. */
tm_vtree *vtree_open(const char *archive_path, tm_error *err);
void vtree_free(tm_vtree *t);

/* What a progress report is about: the scan, or a phase of a generation
 * pass (core/pass/gen.h: reading the traces again, taking the events out of
 * order into the model, writing timeline.tsv's lines). */
enum { VT_SCAN, VT_GEN_READING, VT_GEN_ORDERING, VT_GEN_WRITING };

/* How far the scan or a generation pass is (vt_inputs.progress), for a
 * front end's display. */
typedef struct vt_progress {
	uint64_t done, total; /* the scan, VT_GEN_READING: bytes of trace files
	                         read, and of all of them (sizes not known yet
	                         count 0); VT_GEN_ORDERING: events; VT_GEN_WRITING:
	                         lines */
	const char *file;     /* being read, or NULL */
	double seconds;       /* since the scan or the pass started */
	int finished;         /* the last call: the scan or the pass is over */
	int from_index;       /* (with finished) answered from the index cache */
	int failed;           /* (with finished) the merge or the pass failed */
	int what;             /* VT_SCAN, VT_GEN_* */
	int stats;            /* VT_GEN_*: the pass counts metadata.json's
	                         stats and writes no file */
} vt_progress;

/* What to open (DESIGN.md "Inputs"): INPUT operands (trace files,
 * archives, directories) merged exactly as one archive holding them in the
 * order given, and the manifest file of `-o manifest=FILE`; and how. */
typedef struct vt_inputs {
	const char *const *paths;
	size_t n;
	const char *manifest; /* NULL: none */
	int as_members;       /* even a single archive is a member (`tracemount pack`) */
	const char *name;     /* the name messages and the check summary use; NULL:
	                         the paths */
	/* The index cache (core/session/index.h): the scan's results are read from and
	 * written to `index_path`, else the cache's file for these inputs;
	 * neither with `no_index`. */
	int no_index;
	const char *index_path;
	/* Build only the top-level file asked for (merged.pftrace or
	 * timeline.tsv: not every machine's copy of it), for a reader that
	 * wants one file (`tracemount cat`). Without it (a mount) a request
	 * builds its file's family, top level and every machine's (the
	 * merged.pftrace files, the timeline.tsv files, or the machine
	 * tables), each family by a pass of its own. */
	int gen_only_wanted;
	/* With gen_only_wanted: a descriptor that the whole merge's
	 * timeline.tsv is written to as it is made, instead of a temporary
	 * file (`tracemount cat`: the lines reach the reader in order while
	 * the rest are formatted, and the disk holds no copy of them). The
	 * file's node then reads nothing (vtree_file_streamed says why). 0:
	 * none (standard input is never written to). */
	int timeline_fd;
	/* One-line warnings that are no error (an index file ignored or not
	 * written), without a trailing newline; NULL: not said. */
	void (*warn)(const char *msg);
	/* Called from the thread that runs the scan, at most about ten times a
	 * second and once at its end (also when the index answered); NULL:
	 * nothing is reported. */
	void (*progress)(void *ctx, const vt_progress *p);
	void *progress_ctx;
} vt_inputs;

/* Mount tier for several inputs. One input that is not a directory, with no
 * manifest and no `as_members`, is opened as vtree_open opens it. Errors:
 * as vtree_open, and TM_EARGS (tracemount's own text) when the inputs
 * cannot form one archive: two with one member name, a manifest file that
 * is no manifest. */
tm_vtree *vtree_open_inputs(const vt_inputs *in, tm_error *err);

/* Resolve a path: "" or "/" is the root; components separated by '/'.
 * TM_ENOENT / TM_ENOTDIR as appropriate. Never runs a costly tier for the
 * root or files/; may run the scan for paths under machines/. */
int vtree_lookup(tm_vtree *t, const char *path, vt_ino *ino, tm_error *err);

/* Attributes, exact st_size included; may run the scan for generated
 * files. A failure found by the scan is not an error here: the file keeps
 * a size and its reads fail with TM_EIO. */
int vtree_stat(tm_vtree *t, vt_ino ino, vt_stat *st, tm_error *err);

/* List a directory in a stable order. `st` is NULL for entries whose
 * attributes would cost a tier that has not run yet (so `ls` stays
 * instant); callers then stat lazily. Returning non-zero from the callback
 * stops the listing. */
typedef int (*vt_dirent_cb)(void *ctx, const char *name, vt_ino ino, const vt_stat *st);
int vtree_readdir(tm_vtree *t, vt_ino dir, vt_dirent_cb cb, void *ctx, tm_error *err);

/* The target of a VT_LNK node, NUL-terminated, truncated to size-1. */
int vtree_readlink(tm_vtree *t, vt_ino ino, char *buf, size_t size, tm_error *err);

/* Open files. Reads are positional and thread-safe; each handle keeps its
 * own decoder state, so sequential reads never rescan. A failure found
 * after mount fails with TM_EIO and the reason (also in metadata.json):
 * opening a view of the failed merge, or reading a damaged member. */
typedef struct vt_file vt_file;
vt_file *vtree_file_open(tm_vtree *t, vt_ino ino, tm_error *err);
ssize_t vtree_file_read(vt_file *f, void *buf, size_t n, uint64_t off, tm_error *err);
/* Whether the file's bytes went to vt_inputs.timeline_fd when they were
 * made (reading them fails with EIO). */
int vtree_file_streamed(const vt_file *f);
void vtree_file_close(vt_file *f);

/* When byte `off` of the open file lies unchanged in a host file (a
 * stored member, a generated file's temporary files), that file's fd
 * (owned by the tree), where the byte is in it, and how many bytes from
 * there on are the open file's next ones: a front end may then read them
 * directly. Returns 1 when those reach the end of the file, 0 when more
 * follow, -1 when the byte is not in a host file or is past the end. */
int vtree_file_span(vt_file *f, uint64_t off, int *fd, uint64_t *at, uint64_t *len);

/* Where the tree reports a failure of the merge found after mount (the
 * scan's error text) the moment it is found, once; the FUSE daemon prints
 * it on stderr (DESIGN.md). NULL (the default) reports nothing. */
void vtree_set_logger(tm_vtree *t, void (*log)(const char *msg));

/* `tracemount check`: run every tier that can fail (the scan, once it
 * exists) and write a short human summary into `summary`. Returns 0 when
 * the archive merges, -1 with the exact error otherwise. */
int vtree_check(tm_vtree *t, tm_buf *summary, tm_error *err);

/* ---- `tracemount pack` -------------------------------------------------- */

typedef enum vt_pack_format { VT_PACK_NONE = -1, VT_PACK_ZIP, VT_PACK_TAR, VT_PACK_TGZ } vt_pack_format;

/* The format an output file name asks for: .zip, .tar, .tar.gz or .tgz. */
vt_pack_format vtree_pack_format(const char *out_name);

/* Write the tree's inputs (opened with `as_members`) to `fd` as one
 * archive: the manifest file first as perfetto_manifest.json, then every
 * member in order with its bytes unchanged. Checks first that every
 * manifest files[].path names an input (TM_EARGS naming the path).
 * *members gets the number written. TM_EIO when writing fails. */
int vtree_pack(tm_vtree *t, int fd, vt_pack_format fmt, size_t *members, tm_error *err);

/* The dry run of `tracemount pack`: run the scan and append one line per
 * file and reason "<N> events of <file> dropped: <stat>" to `report`;
 * *dropped gets the total. -1 with the exact error when the merge fails. */
int vtree_drops(tm_vtree *t, tm_buf *report, uint64_t *dropped, tm_error *err);

/* The trace files whose events reach no output, a format tracemount only
 * recognises: one line each, "<input>: <file>: <type> events not
 * exported: ...", appended to `report`; returns how many. Needs no scan:
 * `check`, a mount and `pack` print it as a warning. */
size_t vtree_unexported(tm_vtree *t, tm_buf *report);

#endif
