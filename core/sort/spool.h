/* core/sort/spool.h - write-once temporary files: an unlinked file under
 * $TMPDIR (else /tmp) written through a buffer, then read by position.
 * The generated views (timeline.tsv, merged.pftrace) are spooled once so
 * their exact size is known and memory stays bounded. */
#ifndef TM_SPOOL_H
#define TM_SPOOL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "util/tm.h"

typedef struct tm_spool {
	int fd;          /* -1 when closed */
	uint64_t size;   /* bytes put so far */
	char *buf;
	size_t len;
	int failed;      /* a write failed (disk full...), as far as known */
	struct tm_spool_io *io; /* its writes queued to the writer thread */
	int borrowed;    /* fd is the caller's (tm_spool_open_fd): never closed
	                    nor read back */
} tm_spool;

/* Create the file. -1 with err set (TM_EIO naming the path) on failure. */
int tm_spool_open(tm_spool *s, tm_error *err);
/* A spool that writes to the caller's descriptor fd (a pipe, a terminal,
 * a file: written in order with write(2), never read back or closed)
 * instead of a temporary file: `tracemount cat` of timeline.tsv, whose
 * bytes are wanted once and in order. A failed write is reported as a
 * write error, not as a temporary file's. */
void tm_spool_open_fd(tm_spool *s, int fd);
/* Append n bytes. Full buffers are written by a writer thread (in order);
 * a failure shows in tm_spool_failed or tm_spool_finish. */
void tm_spool_put(tm_spool *s, const void *p, size_t n);
/* The errno of the first write that failed so far, else 0. */
int tm_spool_failed(const tm_spool *s);
/* Flush and free the buffer, and wait until every byte is in the file
 * (only then may it be read). Returns 0, or -1 with err set when a write
 * failed: "WHAT: cannot write a temporary file: REASON", without "WHAT: "
 * for what NULL (a sort's scratch, which fails with those words when its
 * writer's failure is found earlier too). The descriptor stays open
 * (tm_spool_close closes it). */
int tm_spool_finish(tm_spool *s, const char *what, tm_error *err);

/* A text field of the tsv views (timeline.tsv, the machine tables): the
 * n bytes of f with backslash, tab, newline, carriage return and NUL
 * written \\ \t \n \r \0, so a field never splits a line or a column. */
void tm_spool_put_field(tm_spool *s, const char *f, size_t n);
/* The same into a buffer. */
void tm_buf_put_field(tm_buf *b, const char *f, size_t n);
/* The length of what those put. */
size_t tm_field_len(const char *f, size_t n);
void tm_spool_close(tm_spool *s);

/* Many write-once streams in ONE temporary file: the machines' views of a
 * generated file (a stream per machine row). A descriptor per machine ran
 * out at the usual limit of 1024 open files with a few hundred machines
 * (a harness that records one trace per device), and a daemon kept them
 * all open for as long as it ran. Each stream's bytes gather in a buffer
 * of its own (doubling up to TM_PART_BUF) and go to the file as an extent
 * when it is full; past TM_PARTS_HELD bytes of buffers in all, every
 * buffer goes. An extent that follows the stream's last one in the file
 * joins it, so a stream written alone is one extent.
 *
 * A stream may also point at bytes of another file instead of holding a
 * copy (tm_parts_put_ref): a machine's view of merged.pftrace or
 * timeline.tsv is its header and then bytes the whole merge's file holds
 * too, so where a machine's bytes run in order there, its stream refers
 * to them (`whole` extents) and they are written once. Where they do not
 * (the rows of many machines interleave: each machine's bytes come a line
 * or a packet at a time), a `list` extent holds the places of a run of
 * them in the whole file, a few bytes each: the views of the proto
 * bench's 190 machines were a copy of its 416 MB timeline.tsv. */
enum { TM_EXT_OWN, TM_EXT_WHOLE, TM_EXT_LIST };
typedef struct tm_ext {
	uint64_t off;    /* where it starts in the stream */
	uint64_t at;     /* where it starts in the file */
	uint64_t len;    /* its bytes in the stream */
	int whole;       /* TM_EXT_OWN: len bytes at `at` of the file;
			    TM_EXT_WHOLE: of the other one (tm_parts_put_ref's);
			    TM_EXT_LIST: `enc` bytes at `at` of the file list
			    places in the other one, which hold its len bytes */
	uint32_t enc;
} tm_ext;

typedef struct tm_part {
	uint64_t size;   /* bytes put */
	char *buf;       /* put and not yet in the file */
	size_t len, cap;
	tm_ext *ext;     /* the rest, in stream order */
	size_t n_ext, cap_ext;
	uint64_t ref_end; /* where its last tm_parts_put_ref ended, 0: none */
	uint64_t head;    /* bytes put by tm_parts_put_head, at the front */
	size_t head_ext;  /* extents that hold them */
	/* the list being made (TM_EXT_LIST): the places (varints: per place
	 * its gap from the end of the one before, from 0 for the first, and
	 * its length) of list_len stream bytes from list_off on; list_end is
	 * where the last one ends in the other file (0 while it is empty) */
	tm_buf list;
	uint64_t list_off, list_len, list_end;
} tm_part;

typedef struct tm_parts {
	tm_spool file;   /* fd -1 while there are no streams */
	tm_part *p;
	size_t n;
	size_t held;     /* the buffers' capacity, all streams */
} tm_parts;

/* Open n streams (n may be 0: no file). -1 with err set on failure. */
int tm_parts_open(tm_parts *ps, size_t n, tm_error *err);
/* Append n bytes to stream i. */
void tm_parts_put(tm_parts *ps, size_t i, const void *p, size_t n);
/* Put n bytes at the front of stream i, after what earlier calls put
 * there (a header given last, tm_views_head). */
void tm_parts_put_head(tm_parts *ps, size_t i, const void *p, size_t n);
/* Append to stream i the n bytes p that the other file holds at `at`:
 * a reference to them where the stream's earlier bytes came from just
 * before them there or n is at least TM_PART_REF_MIN (4 KiB), and the
 * stream is long enough that its extents stay few (one per
 * TM_PART_REF_MIN bytes at most), else a copy. */
void tm_parts_put_ref(tm_parts *ps, size_t i, uint64_t at, const void *p, size_t n);
/* Put every buffer in the file and finish it (tm_spool_finish). */
int tm_parts_finish(tm_parts *ps, const char *what, tm_error *err);
/* Close and free (after tm_spooled_take, only what it left). */
void tm_parts_close(tm_parts *ps);

/* A temporary file written whole and then read once, every byte of it
 * (the order store's piles, a sort's runs), gives its disk space back as
 * it is read: each slab of TM_GIVEBACK_SLAB bytes is punched out of the
 * file (fallocate FALLOC_FL_PUNCH_HOLE) once all of its bytes have been
 * read. Without it the order store's file stayed whole until the pass
 * ended, next to the timeline's sort runs: 780 MB and 600 MB at once for
 * the 400-machine archive's 281 MB. A file system that cannot punch
 * holes keeps the space until the file is closed, as before.
 *
 * The slabs are small because the order store's blocks are not read in
 * the order they were written: a file's records all go out in the scan's
 * first spill, and are read back across the whole replay, as every other
 * file's are. With slabs of 1 MiB the store of the proto bench (177 MB)
 * was given back only at the end of the replay, beside the timeline's
 * 190 MB of sort runs: 348 MB at the peak of `tracemount cat
 * timeline.tsv`; 277 MB with 64 KiB slabs, 235 MB with 16 KiB. A punch
 * costs about 1.1 us beyond freeing its pages, on the thread that feeds
 * the model: punched one by one, 16 KiB slabs made the systrace bench's
 * merged.pftrace 5% slower. So the slabs read whole wait, TM_GIVEBACK_BATCH
 * of them, and go in one punch per run of neighbours: a 64 KiB block of a
 * pile is four slabs read one after another. */
#define TM_GIVEBACK_SLAB (16u << 10)
#define TM_GIVEBACK_BATCH 64
typedef struct tm_giveback {
	int fd;          /* -1: nothing to give back */
	uint64_t size;
	uint32_t *left;  /* per slab: its bytes not read yet */
	size_t n;
	uint32_t ready[TM_GIVEBACK_BATCH]; /* slabs read whole, not punched yet */
	size_t n_ready;
} tm_giveback;
/* The file fd of `size` bytes, all written, is read from now on. */
void tm_giveback_start(tm_giveback *g, int fd, uint64_t size);
/* Bytes [off, off + len) of it were read, and will not be again. */
void tm_giveback_read(tm_giveback *g, uint64_t off, uint64_t len);
/* Punch the slabs read whole that still wait for a batch. */
void tm_giveback_flush(tm_giveback *g);
void tm_giveback_free(tm_giveback *g);

/* pread(2) until n bytes or the end of the file (EINTR retried). Returns
 * the bytes read, or -1 with errno set. */
ssize_t tm_pread_full(int fd, void *buf, size_t n, uint64_t off);

/* The index of the last of the n_ext extents (in stream order) that
 * starts at or before stream offset off (0 when none does). */
size_t tm_ext_find(const tm_ext *ext, size_t n_ext, uint64_t off);
/* Read up to n bytes at stream offset off of a stream stored as extents
 * of fd (and of whole_fd, the `whole` and `list` ones). Returns the bytes
 * read (short only at the stream's end), or -1 with errno set (EIO for a
 * list that is damaged). */
ssize_t tm_ext_pread(int fd, int whole_fd, const tm_ext *ext, size_t n_ext, void *buf, size_t n, uint64_t off);

/* Views whose bytes are made when they are read, not kept in a file
 * (timeline.tsv's, core/export/timeline.c): `read` as tm_spooled_pread,
 * a failure said in err; `free` frees ctx with the views. */
typedef struct tm_spooled_src {
	ssize_t (*read)(void *ctx, size_t row, void *buf, size_t n, uint64_t off, tm_error *err);
	void (*free)(void *ctx);
	void *ctx;
} tm_spooled_src;

/* A finished view handed over: the whole merge's file and each machine
 * row's stream (extents of one file, and `whole` ones of fd), or a source
 * that makes them (src). */
typedef struct tm_spooled {
	int fd;              /* the whole merge, -1 when there is none */
	int streamed;        /* the whole merge's bytes went to the caller's
	                        descriptor as they were made (tm_views_open_fd):
	                        fd is -1, size is theirs */
	uint64_t size;       /* the whole merge's view, head_fd's bytes included */
	/* A header given last (tm_views_head): the whole view is head_fd's
	 * bytes, then fd's, as the extents all_ext (of head_fd, and `whole`
	 * of fd). head_fd is -1 and n_all_ext 0 otherwise: the view is fd. */
	int head_fd;
	tm_ext all_ext[2];
	size_t n_all_ext;
	int mach_fd;         /* the machines' streams */
	tm_part *mach;       /* by machine row: size and extents */
	size_t n_mach;
	tm_spooled_src src;  /* read set: every view is made by it (fd, head_fd
				and mach_fd are -1, mach holds sizes alone) */
} tm_spooled;

/* Take the descriptors of `whole` (NULL: none) and of `mach`, finished;
 * their fds become -1 and mach's streams move into the result. */
tm_spooled *tm_spooled_take(tm_spool *whole, tm_parts *mach);
/* Read up to n bytes at off of machine `row`'s view, or of the whole
 * merge's when row is TM_SPOOLED_ALL: as pread(2). */
#define TM_SPOOLED_ALL SIZE_MAX
ssize_t tm_spooled_pread(const tm_spooled *s, size_t row, void *buf, size_t n, uint64_t off);
/* The same, a failure said in err (TM_EIO). */
ssize_t tm_spooled_read(const tm_spooled *s, size_t row, void *buf, size_t n, uint64_t off, tm_error *err);
/* Whether it holds that view (the whole merge's is not there when it was
 * streamed: none to read, but its size is known). */
int tm_spooled_has(const tm_spooled *s, size_t row);
/* The size of that view (0 for a row past the last). */
uint64_t tm_spooled_size(const tm_spooled *s, size_t row);
/* Close and free (NULL is fine). */
void tm_spooled_free(tm_spooled *s);

/* The spools of one generated view: the whole merge's and each machine's
 * stream. With one machine its view is the whole one byte for byte as
 * long as every put goes to both: the bytes are then written once and
 * the machine's view is the whole file. A put that goes to one alone
 * first copies the whole one's bytes so far into the machine's stream,
 * which from then on is written as any other. With more machines, a
 * machine's stream refers to the bytes the whole file holds where they
 * run in order there (tm_parts_put_ref), so they are written once. */
typedef struct tm_views {
	tm_spool all;
	tm_parts mach;
	size_t n_mach;
	int shared;          /* `all` stands for machine 0's view too */
	tm_error err;        /* the first failure to copy */
	/* Puts of one machine row that follow each other in the whole file
	 * reach the machine's stream as one (a packet is put in a few pieces,
	 * and a trace's packets mostly come a machine at a time): the run's
	 * bytes are still in all's buffer. */
	uint32_t run_row;
	uint64_t run_at;     /* where the run starts in the whole file */
	size_t run_len;      /* 0: no run */
	int heading;         /* between tm_views_head and tm_views_head_end */
	tm_spool head;       /* the whole view's header when given last (fd -1: none) */
} tm_views;

/* Open all spools. -1 with err set (all closed again) on failure. */
int tm_views_open(tm_views *v, size_t n_mach, tm_error *err);
/* The whole view alone, written to the caller's descriptor fd as it is
 * made (tm_spool_open_fd); tm_views_take then gives it `streamed`. */
void tm_views_open_fd(tm_views *v, int fd);
/* n bytes to the whole view and to machine `row`'s (row >= n_mach: to
 * the whole view only). */
void tm_views_put(tm_views *v, uint32_t row, const void *p, size_t n);
/* tm_views_put without a copy (it is how tm_views_put writes): room for
 * n bytes of machine `row` at the end of the whole view's buffer, to be
 * filled and then counted with tm_views_commit (nothing else in
 * between). NULL when n does not fit in a buffer: put those with
 * tm_views_put. */
void *tm_views_reserve(tm_views *v, uint32_t row, size_t n);
void tm_views_commit(tm_views *v, uint32_t row, size_t n);
/* n bytes to every view (a header). */
void tm_views_put_all(tm_views *v, const void *p, size_t n);
/* n bytes to one view alone: 0 the whole merge's, 1 + row a machine's. */
void tm_views_put_one(tm_views *v, size_t i, const void *p, size_t n);
/* The header, given last: for a pass that writes the bytes after the
 * header before it can know the header (core/export/export.c writes the kept
 * packets of Perfetto protobuf traces as the scan finds them, and the
 * header needs the scan's results). Between tm_views_head and
 * tm_views_head_end, tm_views_put_all and tm_views_put_one put to the
 * front of their views instead of the end: in the order put, before
 * every byte put so far. The whole view's header is a temporary file of
 * its own, a machine's a first extent of its stream: nothing put so far
 * is copied. Call each once, in that order. */
void tm_views_head(tm_views *v);
void tm_views_head_end(tm_views *v);
/* Finish every spool (tm_spool_finish; `what` names the file in errors)
 * and hand them over; NULL with err set on a failure. */
tm_spooled *tm_views_take(tm_views *v, const char *what, tm_error *err);
/* Close and free what is left (after take, or instead of it). */
void tm_views_close(tm_views *v);

#endif
