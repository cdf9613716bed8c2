/* core/spool.h - write-once temporary files: an unlinked file under
 * $TMPDIR (else /tmp) written through a buffer, then read by position.
 * The generated views (timeline.tsv, merged.pftrace) are spooled once so
 * their exact size is known and memory stays bounded. */
#ifndef TM_SPOOL_H
#define TM_SPOOL_H

#include <stddef.h>
#include <stdint.h>

#include "tm.h"

typedef struct tm_spool {
	int fd;          /* -1 when closed */
	uint64_t size;   /* bytes put so far */
	char *buf;
	size_t len;
	int failed;      /* a write failed (disk full...), as far as known */
	struct tm_spool_io *io; /* its writes queued to the writer thread */
} tm_spool;

/* Create the file. -1 with err set (TM_EIO naming the path) on failure. */
int tm_spool_open(tm_spool *s, tm_error *err);
/* Append n bytes. Full buffers are written by a writer thread (in order);
 * a failure shows in tm_spool_failed or tm_spool_finish. */
void tm_spool_put(tm_spool *s, const void *p, size_t n);
/* The errno of the first write that failed so far, else 0. */
int tm_spool_failed(const tm_spool *s);
/* Flush and free the buffer, and wait until every byte is in the file
 * (only then may it be read). Returns 0, or -1 with err set when a write
 * failed. The descriptor stays open (tm_spool_close closes it). */
int tm_spool_finish(tm_spool *s, const char *what, tm_error *err);

/* A text field of the tsv views (timeline.tsv, the machine tables): the
 * n bytes of f with backslash, tab, newline, carriage return and NUL
 * written \\ \t \n \r \0, so a field never splits a line or a column. */
void tm_spool_put_field(tm_spool *s, const char *f, size_t n);
/* The same into a buffer. */
void tm_buf_put_field(tm_buf *b, const char *f, size_t n);
/* v in decimal. */
void tm_buf_put_i64(tm_buf *b, int64_t v);
void tm_spool_close(tm_spool *s);

/* Finished spools of one view handed over together: the whole merge's
 * file and one per machine row. */
typedef struct tm_spooled {
	int fd;
	uint64_t size;
	int *mach_fd;        /* by machine row */
	uint64_t *mach_size;
	size_t n_mach;
} tm_spooled;

/* Take the descriptors of out[0] (the whole merge) and out[1 + row] (each
 * machine), all finished; their fds become -1. */
tm_spooled *tm_spooled_take(tm_spool *out, size_t n_mach);
/* Close and free (NULL is fine). */
void tm_spooled_free(tm_spooled *s);

/* The spools of one generated view: the whole merge's, out[0], and each
 * machine's, out[1 + row]. With one machine its view is the whole one
 * byte for byte as long as every put goes to both: the bytes are then
 * written once and both files are the same temporary file. A put that
 * goes to one alone first copies the whole one's bytes so far into the
 * machine's, which from then on is written as any other. */
typedef struct tm_views {
	tm_spool *out;
	size_t n_mach;
	int shared;          /* out[0] stands for out[1] too */
	tm_error err;        /* the first failure to copy */
} tm_views;

/* Open all spools. -1 with err set (all closed again) on failure. */
int tm_views_open(tm_views *v, size_t n_mach, tm_error *err);
/* n bytes to the whole view and to machine `row`'s (row >= n_mach: to
 * the whole view only). */
void tm_views_put(tm_views *v, uint32_t row, const void *p, size_t n);
/* n bytes to every view (a header). */
void tm_views_put_all(tm_views *v, const void *p, size_t n);
/* n bytes to out[i] alone. */
void tm_views_put_one(tm_views *v, size_t i, const void *p, size_t n);
/* Finish every spool (tm_spool_finish; `what` names the file in errors)
 * and hand them over; NULL with err set on a failure. */
tm_spooled *tm_views_take(tm_views *v, const char *what, tm_error *err);
/* Close and free what is left (after take, or instead of it). */
void tm_views_close(tm_views *v);

#endif
