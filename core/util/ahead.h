/* core/util/ahead.h - trace files read ahead on a second thread (issue 10:
 * both cores), while the scan goes through them in order.
 *
 * Reading a Chrome JSON or systrace file (tokenizing its events, parsing
 * its lines) or a proto file's packets (framing, inflating, extracting
 * their fields) depends on nothing but its bytes; what the scan then does
 * with each event (clock conversion, placement, the sorter) depends on the
 * files before it. So a helper thread reads the next files, each into a
 * log of the reader's callbacks, and the scan replays a file's log when
 * it gets there: the same callbacks with the same records in the same
 * order, so every result is the one a read in place gives. Whoever gets
 * to a file first reads it: the scan reads the file it is at in place
 * when nobody has started it, and while it waits for the helper it reads
 * a later file ahead itself, so both threads stay busy.
 *
 * Memory stays bounded: only files up to TM_AHEAD_MAX_FILE bytes are read
 * ahead, and no more than TM_AHEAD_BUDGET bytes of them (TM_AHEAD_ITEM_COST
 * more each) at a time between being started and being replayed.
 */
#ifndef TM_AHEAD_H
#define TM_AHEAD_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "util/tm.h"

#define TM_AHEAD_MAX_FILE (8u << 20)
#define TM_AHEAD_BUDGET (8u << 20)
/* What a log holds beyond the file's bytes, at least: 100,000 files of a
 * few bytes are not read ahead all at once. */
#define TM_AHEAD_ITEM_COST 4096u

typedef struct tm_ahead tm_ahead;

/* Read item `i` into `log` (empty when called). Runs on the helper thread
 * or on the scan's own; it may touch only what nobody changes meanwhile. */
typedef void (*tm_ahead_fn)(void *ctx, size_t i, tm_buf *log);

/* Items 0..n-1 in the order the scan takes them; cost[i] is the bytes of
 * item i (copied), 0 for one never read ahead. NULL when there is nothing
 * to gain: one CPU, fewer than two items to read ahead, or no thread. */
tm_ahead *tm_ahead_start(size_t n, const uint64_t *cost, tm_ahead_fn fn, void *ctx);

/* Item i, taken in increasing order: NULL when the caller is to read it in
 * place (nobody else will), else its log, the caller's to replay (it may
 * change it) until tm_ahead_done. a may be NULL (then always NULL). */
tm_buf *tm_ahead_take(tm_ahead *a, size_t i);

/* The caller is through with item i (its log is freed). */
void tm_ahead_done(tm_ahead *a, size_t i);

/* Stop reading ahead, wait for the helper and free every log (NULL is
 * fine). */
void tm_ahead_stop(tm_ahead *a);

/* ---- what the logs are made of -----------------------------------------
 * Entries 8-aligned, pointers kept as offsets from the log's start (it
 * moves while it grows); offset 0 stands for NULL, so a log never starts
 * with data that is pointed at. */

/* Where the first thing put in an empty log lies. */
#define TM_LOG_FIRST 8

/* n zeroed bytes at the log's end, 8-aligned: their offset. */
static inline size_t tm_log_reserve(tm_buf *b, size_t n)
{
	size_t at = (b->len + 7) & ~(size_t)7;
	if (at == 0)
		at = TM_LOG_FIRST; /* offset 0 is NULL */
	TM_GROW(b->data, b->cap, at + n + 1);
	memset(b->data + b->len, 0, at + n - b->len);
	b->len = at + n;
	return at;
}

/* A copy of s[0..n) with a NUL after it: its offset (0 for s NULL). */
static inline uint64_t tm_log_str(tm_buf *b, const char *s, size_t n)
{
	if (!s)
		return 0;
	size_t at = tm_log_reserve(b, n + 1);
	memcpy(b->data + at, s, n);
	return at;
}

/* Entries are written field by field, each entry starting with a head
 * that says what it is and how far the next one is; reads go through the
 * fields in the order they were written. Small entries are what the two
 * threads hand each other: their bytes move from one core's cache to the
 * other's, and a log entry per event of fixed, padded structs cost more
 * than reading ahead saved. */
typedef struct tm_log_head {
	uint32_t next; /* bytes from this head to the next entry's */
	uint8_t tag, a, b, c;
} tm_log_head;

/* Start an entry: its head's offset (for tm_log_end). */
static inline size_t tm_log_begin(tm_buf *b, uint8_t tag, uint8_t x, uint8_t y, uint8_t z)
{
	tm_log_head h = {0, tag, x, y, z};
	if (!b->len)
		tm_buf_put(b, "\0\0\0\0\0\0\0\0", TM_LOG_FIRST); /* offset 0 is NULL */
	size_t at = b->len;
	tm_buf_put(b, &h, sizeof h);
	return at;
}

static inline void tm_log_end(tm_buf *b, size_t at)
{
	uint32_t next = (uint32_t)(b->len - at);
	memcpy(b->data + at, &next, sizeof next);
}

/* Runs: many small fixed-size records in one entry, where a head each
 * would cost more than the record (the times of a scan alone). *run is
 * the open run's head, 0 when none; a run is closed long before its
 * 32-bit `next` could overflow. */
#define TM_LOG_RUN_MAX (1u << 20)

static inline void tm_log_run_close(tm_buf *b, size_t *run)
{
	if (*run)
		tm_log_end(b, *run);
	*run = 0;
}

/* An open run of `tag` at the log's end (close the run before anything
 * else is logged). */
static inline void tm_log_run_open(tm_buf *b, size_t *run, uint8_t tag)
{
	if (*run && b->len - *run > TM_LOG_RUN_MAX)
		tm_log_run_close(b, run);
	if (!*run)
		*run = tm_log_begin(b, tag, 0, 0, 0);
}

/* A string field: its length, its bytes and a NUL; NULL is kept as such. */
static inline void tm_log_put_s(tm_buf *b, const char *s, size_t n)
{
	uint32_t len = s ? (uint32_t)n : UINT32_MAX;
	tm_buf_put(b, &len, sizeof len);
	if (s) {
		TM_GROW(b->data, b->cap, b->len + n + 1);
		memcpy(b->data + b->len, s, n);
		b->data[b->len + n] = '\0';
		b->len += n + 1;
	}
}

/* Reading: *p walks through an entry's fields. */
static inline void tm_log_get(const char **p, void *out, size_t n)
{
	memcpy(out, *p, n);
	*p += n;
}

static inline const char *tm_log_get_s(const char **p, size_t *n)
{
	uint32_t len;
	tm_log_get(p, &len, sizeof len);
	if (len == UINT32_MAX) {
		*n = 0;
		return NULL;
	}
	const char *s = *p;
	*p += (size_t)len + 1;
	*n = len;
	return s;
}

#endif
