/* core/container/archive.h - the bytes of an import: the input file, archive members
 * and decompressed streams, without ever holding a whole member in memory.
 *
 * A tm_blob describes a byte sequence (immutable, reference-counted,
 * shareable between threads). A tm_cursor reads one blob; it is owned by one
 * reader at a time (callers serialise access to a cursor themselves).
 *
 * Random access contract (issue 2): reading a member of a plain ZIP or TAR
 * never rescans the archive: a stored member is a pread() window; a
 * deflated ZIP member inflates from its own data offset. Members of a
 * compressed TAR (tar.gz, .bz2, .xz, .zst) live inside one decompressed
 * stream. A cursor keeps its decoder state, so sequential reads are linear;
 * a forward seek decodes and discards (or preads stored data).
 *
 * Deflate data (gzip/zlib streams and deflated ZIP members) gets a
 * checkpoint index on its first pass (tm_blob_measure, tm_tar_list, or any
 * cursor decoding that far): the zlib "zran" technique, the inflate bit
 * position and its 32 KiB window every ~8 MiB of output, at most 256 points
 * (8 MiB) per blob, shared by all cursors of the blob. A later seek,
 * backward or far forward, resumes from the nearest checkpoint at or before
 * the target instead of from the start. Checks that need the data from the
 * start are made when decoding runs from the start: a gzip member's
 * CRC/length trailer (skipped for the one member a resumed decoder starts
 * in) and a ZIP member's CRC-32 (skipped by a resumed decoder); a pass
 * from the start, such as a full scan of every member, makes them.
 * bzip2, xz and zstd have no index: a backward seek restarts that stream
 * from its beginning.
 *
 * Errors are reported through tm_error with TM_EINPUT and the exact
 * reference text where spec/formats.md gives one (ZIP and TAR walking,
 * gzip), otherwise a one-line reason that names what is wrong; TM_EIO for
 * operating-system failures, with the file name and strerror. A decoding
 * cursor that failed keeps failing at and after the failure point; reading
 * before it restarts decoding.
 */
#ifndef TM_ARCHIVE_H
#define TM_ARCHIVE_H

#include <stdint.h>
#include <sys/types.h>

#include "detect/detect.h"
#include "util/tm.h"

typedef struct tm_blob tm_blob;
typedef struct tm_cursor tm_cursor;

/* Open the top-level input. The file stays open (one fd, pread only) for
 * the blob's lifetime. Error: TM_EIO "<path>: <strerror>". */
tm_blob *tm_blob_open_path(const char *path, tm_error *err);

/* A loose input file (issue 11): `path` (absolute, so that a daemon that
 * left its working directory still finds it) as `st` describes it. Each
 * cursor opens the file for as long as it lives, so a mount of thousands of
 * files holds no fd per file. A cursor that finds the file replaced or
 * changed (device, inode, size or mtime differ from `st`) fails with TM_EIO
 * "<path>: the file changed since it was listed". */
struct stat;
tm_blob *tm_blob_open_loose(const char *path, const struct stat *st);
/* The same for a file its lister has open as `fd` (and closes): *st from
 * fstat, and its first TM_SNIFF_BYTES read now, so that its sniff
 * (tm_blob_sniffed) and index key (tm_blob_head_hash, when that was all of
 * it) need no second open. NULL, with nothing said, when fd is not a
 * regular file or cannot be read: the caller falls back to the path. */
tm_blob *tm_blob_open_loose_fd(const char *path, int fd, struct stat *st);
/* Whether the blob's type from its first min(window, TM_SNIFF_BYTES) bytes
 * is already known (tm_blob_open_loose_fd): 1 with *type, else 0. */
int tm_blob_sniffed(const tm_blob *b, size_t window, tm_type *type);

/* A blob over a private copy of `n` bytes (tests, fuzzing). Never fails. */
tm_blob *tm_blob_open_memory(const void *data, size_t n);

/* Where the blob's bytes lie unchanged in a file (the input itself, a
 * stored ZIP member, a member of a plain TAR): the open fd (owned by the
 * blob) and the offset of byte 0. Lets a front end hand reads to the kernel
 * without copying. -1 for anything decoded. */
int tm_blob_file_range(const tm_blob *b, int *fd, uint64_t *off);

/* The same for an open cursor: also answers for a loose file (the fd is
 * the cursor's own, valid until tm_cursor_close). -1 for anything decoded. */
int tm_cursor_file_range(const tm_cursor *c, int *fd, uint64_t *off);

/* The file a blob reads in place (the input itself, a loose input), for
 * the index cache's key: the input as its open file is now (fstat), a
 * loose input as it was listed. 0, or -1 for a blob that reads no host
 * file (a member, a stream, a memory copy). */
typedef struct tm_host_file {
	const char *path;
	uint64_t dev, ino;
	int64_t size, mtime_ns, ctime_ns;
} tm_host_file;
int tm_blob_host_file(const tm_blob *b, tm_host_file *out);

/* Reference counting; a blob holds references to the blobs it reads from.
 * tm_blob_ref(NULL) and tm_blob_unref(NULL) are no-ops. */
tm_blob *tm_blob_ref(tm_blob *b);
void tm_blob_unref(tm_blob *b);

/* Exact size in bytes, or -1 while unknown (a decompressed stream whose end
 * has not been reached yet; it becomes known once any cursor has read to
 * its end, or after tm_blob_measure()). */
int64_t tm_blob_size(const tm_blob *b);

/* Decode the whole blob once to learn its size (streams, bounded memory).
 * Returns the size or -1 with err set (e.g. corrupt gzip). A gzip stream
 * resumes from its last checkpoint, so measuring after a full listing is
 * cheap. This is also the way to learn whether a stream is intact to its
 * end (formats.md §2.3: "Compressed stream incomplete ..."). */
int64_t tm_blob_measure(tm_blob *b, tm_error *err);

/* Read up to `n` bytes from the start of the blob (for sniffing). Decodes
 * only what it needs. Returns the number of bytes read (< n only at the end
 * of the blob) or -1. */
ssize_t tm_blob_head(tm_blob *b, void *buf, size_t n, tm_error *err);
/* tm_hash (core/util/ser.h) of the blob's first n bytes, all of them when it
 * is shorter, into *h: 0, or -1 with err set. A loose file that an
 * earlier tm_blob_head read whole is not read again. */
int tm_blob_head_hash(tm_blob *b, size_t n, uint64_t *h, tm_error *err);

/* Cursors. tm_cursor_pread returns bytes read (0 at end; fewer than `n`
 * only at the end of the blob) or -1 (no bytes are delivered by a call that
 * fails). Reading at the cursor's current position continues without
 * seeking. Deflated ZIP members are checked when a read reaches their end:
 * the deflate stream must end exactly at the stored size and the CRC-32 must
 * match (the reference's "Zip decompression error ..." and "Zip CRC32
 * failure ..." texts). */
tm_cursor *tm_cursor_open(tm_blob *b, tm_error *err);
ssize_t tm_cursor_pread(tm_cursor *c, void *buf, size_t n, uint64_t off, tm_error *err);
/* Sequential read from the cursor's current position. */
ssize_t tm_cursor_read(tm_cursor *c, void *buf, size_t n, tm_error *err);
/* Call fn(ctx, n) after every read of this cursor that delivers n > 0
 * bytes (a front end's progress). NULL stops it. */
void tm_cursor_observe(tm_cursor *c, void (*fn)(void *ctx, size_t n), void *ctx);
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
	uint32_t mode;     /* permission bits as stored (0 if none) */
	uint64_t size;     /* exact size of the member's own bytes (uncompressed for ZIP deflate) */
	char *link_target; /* symlink / hard link target, else NULL */
	int64_t mtime;     /* seconds since the epoch as stored (0 if none) */
	tm_blob *blob;     /* the member's bytes (one reference owned by the entry); NULL unless FILE */
	uint64_t offset;   /* where the member's header starts in the container (for messages) */
} tm_entry;

/* Free an entry's strings and drop its blob reference; the entry is zeroed. */
void tm_entry_clear(tm_entry *e);

/* formats.md §2.5: true when any '/'-separated component of `name` starts
 * with '.' and is not "." or "..". The merge skips such members; the
 * listers below still report them. */
int tm_member_name_is_hidden(const char *name);

typedef struct tm_listing {
	size_t n;
	tm_entry *entries; /* in listing order */
	uint64_t dir_hash; /* a hash (core/util/ser.h) of every header the listing
	                      read: ZIP local headers and data descriptors, TAR
	                      header blocks and long names (the index cache's key) */
} tm_listing;

/* List a ZIP container: members in local-header order (the central
 * directory is only an index to find sizes of data-descriptor members fast).
 * Near-instant for any size: no member data is read, except that a
 * data-descriptor member the central directory does not describe is
 * inflated once to find its end (a streamed or truncated zip). Errors use
 * the exact texts of formats.md §2.1 (the offsets are the reference's:
 * just past the 30-byte local header, or past the data descriptor). As in
 * the reference, a member cut short by the end of the file ends the listing
 * without an error. On error *out is left empty. */
int tm_zip_list(tm_blob *zip, tm_listing *out, tm_error *err);

/* List a TAR container (ustar, GNU, PAX, macOS), which may itself be a
 * decompressed stream. Errors use the exact texts of formats.md §2.2. Over
 * a plain blob only the 512-byte headers are read; over a stream the
 * stream is decoded once, to its very end (so its size becomes known and a
 * corrupt or truncated stream fails the listing with its own error, as in
 * the reference where the decompressor's checks come first). Names follow
 * the reference: a GNU `L` long name (up to its first NUL) names the next
 * non-directory header; a directory header neither uses nor consumes it.
 * GNU `K` (long link name) is an unsupported type like any other (formats.md
 * §2.2). Symlinks, hard links, devices and FIFOs of size 0 are listed with
 * their kinds (the reference aborts on them; spec S45). On error *out is
 * left empty. */
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
 * "Compressed stream incomplete, trace is likely corrupt (ERR:tp-corrupt)".
 * GZIP and CTRACE behave alike (the reference uses one gzip reader for
 * both): everything up to and including the first "TRACE:\n" within the
 * first 1 MiB of compressed bytes is dropped (formats.md §2.3: "the first
 * compressed chunk"; the reference's top-level chunk is 1 MiB), then
 * gzip or zlib members are decoded one after another. Never fails today
 * (err is for future codecs). */
tm_blob *tm_blob_decompress(tm_blob *compressed, tm_codec codec, tm_error *err);

#endif
