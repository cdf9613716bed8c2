/* core/archive.h - the bytes of an import: the input file, archive members
 * and decompressed streams, without ever holding a whole member in memory.
 *
 * A tm_blob describes a byte sequence (immutable, reference-counted,
 * shareable between threads). A tm_cursor reads one blob; it is owned by one
 * reader at a time (callers serialise access to a cursor themselves).
 *
 * Random access contract (issue 2): reading a member of a plain ZIP or TAR
 * never rescans the archive: a stored member is a pread() window, a deflated
 * ZIP member restarts inflation from its own data offset only when the
 * reader seeks backwards. Members of a compressed TAR (tar.gz, .bz2, .xz,
 * .zst) live inside one decompressed stream; a cursor keeps its decoder
 * state, so sequential reads are linear and only a backward seek restarts
 * decompression.
 *
 * Errors are reported through tm_error with TM_EINPUT and the exact
 * reference text where spec/formats.md gives one (ZIP and TAR walking,
 * gzip), otherwise a one-line reason that names what is wrong; TM_EIO for
 * operating-system failures, with the file name and strerror.
 */
#ifndef TM_ARCHIVE_H
#define TM_ARCHIVE_H

#include <stdint.h>
#include <sys/types.h>

#include "tm.h"

typedef struct tm_blob tm_blob;
typedef struct tm_cursor tm_cursor;

/* Open the top-level input. The file stays open (one fd, pread only) for
 * the blob's lifetime. Error: TM_EIO "<path>: <strerror>". */
tm_blob *tm_blob_open_path(const char *path, tm_error *err);

/* Reference counting; a blob holds references to the blobs it reads from. */
tm_blob *tm_blob_ref(tm_blob *b);
void tm_blob_unref(tm_blob *b);

/* Exact size in bytes, or -1 while unknown (a decompressed stream whose end
 * has not been reached yet; it becomes known once any cursor has read to
 * its end, or after tm_blob_measure()). */
int64_t tm_blob_size(const tm_blob *b);

/* Decode the whole blob once to learn its size (streams, bounded memory).
 * Returns the size or -1 with err set (e.g. corrupt gzip). */
int64_t tm_blob_measure(tm_blob *b, tm_error *err);

/* Read up to `n` bytes from the start of the blob (for sniffing). Decodes
 * only what it needs. Returns the number of bytes read (< n only at the end
 * of the blob) or -1. */
ssize_t tm_blob_head(tm_blob *b, void *buf, size_t n, tm_error *err);

/* Cursors. tm_cursor_pread returns bytes read (0 at end) or -1. Reading at
 * the cursor's current position continues without seeking. */
tm_cursor *tm_cursor_open(tm_blob *b, tm_error *err);
ssize_t tm_cursor_pread(tm_cursor *c, void *buf, size_t n, uint64_t off, tm_error *err);
/* Sequential read from the cursor's current position. */
ssize_t tm_cursor_read(tm_cursor *c, void *buf, size_t n, tm_error *err);
void tm_cursor_close(tm_cursor *c);

/* ---- containers ------------------------------------------------------ */

typedef enum tm_entry_kind {
	TM_ENTRY_FILE,     /* regular member: has a blob */
	TM_ENTRY_DIR,      /* TAR directory (`5`); ZIP "d/" entries are FILEs of size 0, as in the reference */
	TM_ENTRY_SYMLINK,  /* TAR `2`: skipped by the merge (the reference aborts; spec S45) */
	TM_ENTRY_HARDLINK, /* TAR `1`: skipped by the merge */
	TM_ENTRY_OTHER,    /* device, FIFO, ...: skipped by the merge */
} tm_entry_kind;

typedef struct tm_entry {
	char *name;        /* the member name exactly as the merge matches it
	                      (formats.md §2.1, §2.2: ZIP local-header name; TAR
	                      GNU long name, else prefix "/" name; PAX path ignored) */
	char *pax_path;    /* TAR only: the PAX `path` record if one was present, else NULL
	                      (shown to users, never used for matching) */
	tm_entry_kind kind;
	uint64_t size;     /* exact size of the member's own bytes (uncompressed for ZIP deflate) */
	char *link_target; /* symlink / hard link target, else NULL */
	uint32_t mode;     /* permission bits as stored (0 if none) */
	int64_t mtime;     /* seconds since the epoch as stored (0 if none) */
	tm_blob *blob;     /* the member's bytes (one reference owned by the entry); NULL unless FILE */
} tm_entry;

typedef struct tm_listing {
	size_t n;
	tm_entry *entries; /* in listing order */
} tm_listing;

/* List a ZIP container: members in local-header order (the central
 * directory is only an index to find sizes of data-descriptor members fast).
 * Near-instant for any size: no member data is read. Errors use the exact
 * texts of formats.md §2.1. */
int tm_zip_list(tm_blob *zip, tm_listing *out, tm_error *err);

/* List a TAR container (ustar, GNU, PAX, macOS), which may itself be a
 * decompressed stream. Errors use the exact texts of formats.md §2.2. */
int tm_tar_list(tm_blob *tar, tm_listing *out, tm_error *err);

void tm_listing_free(tm_listing *l);

/* ---- compressed streams ---------------------------------------------- */

typedef enum tm_codec {
	TM_CODEC_GZIP,   /* gzip or zlib framing; concatenated members form one stream (RFC 1952) */
	TM_CODEC_ZSTD,   /* zstd frames (via libarchive) */
	TM_CODEC_BZIP2,  /* via libarchive */
	TM_CODEC_XZ,     /* xz / lzma via libarchive */
	TM_CODEC_CTRACE, /* "TRACE:\n" then a zlib stream (formats.md §2.3) */
} tm_codec;

/* The decompressed inner stream of `compressed` (a new blob that holds a
 * reference to it). Nothing is decoded until it is read. Corrupt data
 * surfaces on read: "Failed to decompress trace chunk (ERR:tp-corrupt)" or
 * "Compressed stream incomplete, trace is likely corrupt (ERR:tp-corrupt)". */
tm_blob *tm_blob_decompress(tm_blob *compressed, tm_codec codec, tm_error *err);

#endif
