/* core/sort/xsort.c - runs in memory, spilled sorted to one temporary file,
 * merged with a binary heap. A record is stored as its length and its
 * bytes: 4 bytes of length in the run buffer, a varint in the file (the
 * proto bench's timeline.tsv spills 3.6 million records of 36 bytes on
 * average: the 3 bytes a varint saves on each are 11 MB of TMPDIR).
 *
 * A full run is sorted and written by a thread of its own while the next
 * run fills (issue 10: both cores): sorting and copying a run out was a
 * tenth of timeline.tsv's time on the core that runs the model. Two runs
 * of half the budget each keep memory where one run of the budget was.
 *
 * Reading merges at most fan_in runs at once, a READ_BUF each: as many as
 * the run budget holds (MIN_FAN at least). A sort of more runs first
 * merges them fan_in at a time into the longer runs of a new file, as
 * often as needed. A reader per run tied memory to the number of runs,
 * so to the input: for timeline.tsv of a 2 GB trace that is mostly out of
 * order (2,900 captures one after another), the order store's sort read
 * 5.3 GB in 3,554 runs and the lines' sort 2.4 GB in 319, and the pass
 * peaked at 313 MB of RSS (78 MB with passes). */
#include "sort/xsort.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sort/spool.h"

#define DEFAULT_RUN (32u * 1024u * 1024u)
#define RUN_DOUBLING (256u * 1024u)
#define READ_BUF (64u * 1024u)
#define MIN_FAN 16

typedef struct run_reader {
	uint64_t next, end;   /* file offsets still to read */
	char *buf;
	size_t cap, pos, len;
	const char *rec;      /* the current record (in buf, or the arena) */
	uint32_t rec_len;
	uint8_t rec_head;     /* the bytes of its length, right before it */
	char *big;            /* a record longer than buf */
} run_reader;

/* A run in memory: [len][bytes]... and the offsets of its records, 32
 * bits each (a record starts below run_bytes, a few megabytes: half the
 * index, and half the copy qsort_r sorts it in, of 64-bit offsets). */
typedef struct run {
	char *arena;
	size_t len, cap;
	uint32_t *index;
	size_t n_index, cap_index;
} run;

struct tm_xsort {
	tm_xsort_cmp cmp;
	size_t run_bytes;
	size_t fan_in;        /* runs merged at once */
	run cur;              /* the run being filled */
	run out;              /* the run being spilled (while `spilling`) */
	pthread_t spiller;
	int spilling;
	/* the spilled runs: the spilling thread's alone while it runs */
	tm_spool runs;        /* one after another */
	tm_giveback gb;       /* their space, given back as they are merged */
	int spilled;
	uint64_t *run_start;
	size_t n_runs, cap_runs;
	uint64_t count;
	uint32_t min_len, max_len; /* of the records added: one read back outside
				    * them is damage (a comparator would read past it) */
	tm_xsort_check check; /* the caller's test of a record read back, or NULL */
	int failed, finished;
	/* reading */
	size_t mem_pos;       /* next index of a never-spilled sort */
	run_reader *readers;  /* of the runs being merged */
	size_t n_readers;
	size_t *heap, n_heap;
	int primed;
};

static int merge_pass(tm_xsort *x, tm_error *err);

static const void *rec_at(const char *arena, size_t off)
{
	return arena + off + 4;
}

typedef struct sort_ctx {
	tm_xsort_cmp cmp;
	const char *arena;
} sort_ctx;

static int index_cmp(const void *a, const void *b, void *ctx)
{
	const sort_ctx *c = ctx;
	return c->cmp(rec_at(c->arena, *(const uint32_t *)a), rec_at(c->arena, *(const uint32_t *)b));
}

/* Put a run's index in record order. */
static void sort_run(tm_xsort_cmp cmp, run *r)
{
	sort_ctx c = {cmp, r->arena};
	if (r->n_index) /* (an empty run has no index at all) */
		qsort_r(r->index, r->n_index, sizeof(*r->index), index_cmp, &c);
}

tm_xsort *tm_xsort_new(tm_xsort_cmp cmp, size_t run_bytes)
{
	tm_xsort *x = tm_xcalloc(1, sizeof(*x));
	x->cmp = cmp;
	x->run_bytes = (run_bytes ? run_bytes : DEFAULT_RUN) / 2;
	if (x->run_bytes < 1)
		x->run_bytes = 1;
	if (x->run_bytes > UINT32_MAX) /* a record's offset in a run fits in 32 bits */
		x->run_bytes = UINT32_MAX;
	x->fan_in = 2 * x->run_bytes / READ_BUF;
	if (x->fan_in < MIN_FAN)
		x->fan_in = MIN_FAN;
	x->runs.fd = -1;
	x->gb.fd = -1;
	return x;
}

void tm_xsort_set_check(tm_xsort *x, tm_xsort_check check)
{
	x->check = check;
}

/* A record's length as the file holds it: a varint (at most 5 bytes). */
#define LEN_MAX 5

/* The record at rec (its 4-byte length slot before it, ours to write
 * over) to s with its varint length: one put when the varint fits in the
 * slot, as it does below 2^28 bytes. */
static void put_rec(tm_spool *s, char *rec, uint32_t n)
{
	uint8_t b[TM_UV_MAX];
	size_t k = (size_t)(tm_uv_put(b, n) - b);
	if (k <= 4) {
		memcpy(rec - k, b, k);
		tm_spool_put(s, rec - k, k + (size_t)n);
		return;
	}
	tm_spool_put(s, b, k);
	tm_spool_put(s, rec, n);
}

/* Sort x->out and append it to the file as one run. */
static void *write_run(void *arg)
{
	tm_xsort *x = arg;
	run *r = &x->out;
	sort_run(x->cmp, r);
	TM_GROW(x->run_start, x->cap_runs, x->n_runs + 2);
	x->run_start[x->n_runs++] = x->runs.size;
	for (size_t i = 0; i < r->n_index; i++) {
		uint32_t n;
		memcpy(&n, r->arena + r->index[i], 4);
		put_rec(&x->runs, r->arena + r->index[i] + 4, n);
	}
	x->run_start[x->n_runs] = x->runs.size;
	r->n_index = 0;
	r->len = 0;
	return NULL;
}

/* Wait for the run being spilled, if any. */
static void join_spill(tm_xsort *x)
{
	if (x->spilling)
		pthread_join(x->spiller, NULL);
	x->spilling = 0;
}

/* The current run to the file: sorted and written by a thread while the
 * caller fills the other buffers (`wait`: before returning). */
static int spill(tm_xsort *x, int wait, tm_error *err)
{
	if (!x->cur.n_index)
		return 0;
	if (!x->spilled) {
		if (tm_spool_open(&x->runs, err))
			return -1;
		x->spilled = 1;
	}
	join_spill(x);
	/* (the file is the spilling thread's while it runs: look first) */
	int e = tm_spool_failed(&x->runs);
	if (e)
		return tm_err(err, TM_EIO, "cannot write a temporary file: %s", strerror(e));
	run t = x->out;
	x->out = x->cur;
	x->cur = t;
	x->cur.len = x->cur.n_index = 0;
	if (wait || pthread_create(&x->spiller, NULL, write_run, x) != 0) {
		write_run(x);
	} else {
		x->spilling = 1;
		pthread_setname_np(x->spiller, "tm-sort"); /* joined in join_spill */
	}
	if (wait && (e = tm_spool_failed(&x->runs)) != 0)
		return tm_err(err, TM_EIO, "cannot write a temporary file: %s", strerror(e));
	return 0;
}

int tm_xsort_addv(tm_xsort *x, const tm_xsort_part *parts, size_t n, tm_error *err)
{
	if (x->failed)
		return tm_err(err, TM_EIO, "a temporary file could not be written");
	uint32_t len = 0;
	for (size_t i = 0; i < n; i++)
		len += parts[i].len;
	run *r = &x->cur;
	/* a run holds run_bytes with its index; its arena grows by doubling
	 * up to that and no further (doubling past it held up to twice).
	 * Past RUN_DOUBLING it goes to run_bytes at once: the blocks each
	 * doubling frees stay with malloc, touched, and a sort that grew
	 * that far fills its runs (the proto timeline's two 4 MB runs left
	 * about 4 MB of them; reserved at once, its peak RSS fell by 0.6 MB,
	 * and a reserve nothing touches costs none) */
	size_t need = r->len + 4 + (size_t)len;
	if (r->n_index && need + (r->n_index + 1) * sizeof(*r->index) > x->run_bytes && spill(x, 0, err) != 0) {
		x->failed = 1;
		return -1;
	}
	need = r->len + 4 + (size_t)len;
	if (need > r->cap) {
		size_t c = r->cap ? r->cap * 2 : 4096;
		if (c > RUN_DOUBLING)
			c = x->run_bytes;
		if (c > x->run_bytes)
			c = x->run_bytes;
		if (c < need)
			c = need;
		TM_RESERVE(r->arena, r->cap, c);
	}
	memcpy(r->arena + r->len, &len, 4);
	size_t at = r->len + 4;
	for (size_t i = 0; i < n; i++)
		if (parts[i].len) {
			memcpy(r->arena + at, parts[i].p, parts[i].len);
			at += parts[i].len;
		}
	TM_GROW(r->index, r->cap_index, r->n_index + 1);
	r->index[r->n_index++] = (uint32_t)r->len;
	r->len += 4 + (size_t)len;
	if (!x->count++ || len < x->min_len)
		x->min_len = len;
	if (len > x->max_len)
		x->max_len = len;
	return 0;
}

int tm_xsort_add(tm_xsort *x, const void *rec, uint32_t len, tm_error *err)
{
	tm_xsort_part one = {rec, len};
	return tm_xsort_addv(x, &one, 1, err);
}

static void run_free(run *r)
{
	free(r->arena);
	r->arena = NULL;
	r->cap = r->len = 0;
	free(r->index);
	r->index = NULL;
	r->cap_index = r->n_index = 0;
}

/* Give back the memory runs' buffers (spilled). */
static void release_run(tm_xsort *x)
{
	join_spill(x);
	run_free(&x->cur);
	run_free(&x->out);
}

size_t tm_xsort_mem(const tm_xsort *x)
{
	if (x->n_readers) {
		size_t n = 0;
		for (size_t i = 0; i < x->n_readers; i++)
			n += x->readers[i].cap + (x->readers[i].big ? x->readers[i].rec_len + 4 : 0);
		return n;
	}
	return x->cur.cap + x->cur.cap_index * sizeof(*x->cur.index) + x->out.cap + x->out.cap_index * sizeof(*x->out.index);
}

int tm_xsort_spill(tm_xsort *x, tm_error *err)
{
	if (x->failed || x->finished)
		return tm_err(err, TM_EIO, "a temporary file could not be written");
	if (spill(x, 1, err) != 0) {
		x->failed = 1;
		return -1;
	}
	release_run(x); /* the budget is shared */
	return 0;
}

uint64_t tm_xsort_count(const tm_xsort *x)
{
	return x->count;
}

int tm_xsort_finish(tm_xsort *x, tm_error *err)
{
	if (x->failed)
		return tm_err(err, TM_EIO, "a temporary file could not be written");
	x->finished = 1;
	if (!x->spilled) {
		sort_run(x->cmp, &x->cur);
		return 0;
	}
	if (spill(x, 1, err) != 0 || tm_spool_finish(&x->runs, NULL, err) != 0) {
		x->failed = 1;
		return -1;
	}
	release_run(x);
	while (x->n_runs > x->fan_in)
		if (merge_pass(x, err) != 0) {
			x->failed = 1;
			return -1;
		}
	tm_giveback_start(&x->gb, x->runs.fd, x->runs.size);
	return 0;
}

/* ---- merging ----------------------------------------------------------- */

static int fill(tm_xsort *x, run_reader *r, size_t want, tm_error *err)
{
	if (r->pos)
		memmove(r->buf, r->buf + r->pos, r->len - r->pos);
	r->len -= r->pos;
	r->pos = 0;
	while (r->len < want && r->next < r->end) {
		size_t room = r->cap - r->len;
		if (room > r->end - r->next)
			room = (size_t)(r->end - r->next);
		ssize_t n = pread(x->runs.fd, r->buf + r->len, room, (off_t)r->next);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return tm_err(err, TM_EIO, "cannot read a temporary file: %s",
				      n < 0 ? strerror(errno) : "short read");
		tm_giveback_read(&x->gb, r->next, (uint64_t)n);
		r->len += (size_t)n;
		r->next += (uint64_t)n;
	}
	return 0;
}

/* Advance reader r to its next record: 1, 0 at its end, -1 on error. */
static int advance(tm_xsort *x, run_reader *r, tm_error *err)
{
	if (r->len - r->pos < LEN_MAX && fill(x, r, LEN_MAX, err) != 0)
		return -1;
	if (r->len == r->pos)
		return 0;
	/* the length: a varint of at most LEN_MAX bytes, all in the buffer
	 * (fill brought LEN_MAX, or what the run had left); mostly one */
	const uint8_t *at = (const uint8_t *)r->buf + r->pos;
	size_t avail = r->len - r->pos < LEN_MAX ? r->len - r->pos : LEN_MAX;
	uint64_t v;
	const uint8_t *after = tm_uv_get(at, at + avail, &v);
	if (!after)
		return tm_err(err, TM_EIO, "a temporary file is damaged");
	size_t head = (size_t)(after - at);
	uint32_t n = (uint32_t)v;
	size_t need = head + (size_t)n;
	/* the file is ours, but a damaged one must fail the read, not the
	 * comparator: a length no record had, or past the run's end */
	if (v != n || n < x->min_len || n > x->max_len || need > (r->len - r->pos) + (r->end - r->next))
		return tm_err(err, TM_EIO, "a temporary file is damaged");
	if (need > r->cap) {
		/* one record larger than the buffer: read it whole */
		free(r->big);
		r->big = tm_xmalloc(need);
		size_t have = r->len - r->pos;
		memcpy(r->big, r->buf + r->pos, have);
		r->pos = r->len;
		while (have < need) {
			ssize_t k = pread(x->runs.fd, r->big + have, need - have, (off_t)r->next);
			if (k < 0 && errno == EINTR)
				continue;
			if (k <= 0)
				return tm_err(err, TM_EIO, "cannot read a temporary file: %s",
					      k < 0 ? strerror(errno) : "short read");
			tm_giveback_read(&x->gb, r->next, (uint64_t)k);
			have += (size_t)k;
			r->next += (uint64_t)k;
		}
		r->rec = r->big + head;
	} else {
		if (r->len - r->pos < need && fill(x, r, need, err) != 0)
			return -1;
		if (r->len - r->pos < need)
			return tm_err(err, TM_EIO, "a temporary file is cut short");
		r->rec = r->buf + r->pos + head;
		r->pos += need;
	}
	r->rec_len = n;
	r->rec_head = (uint8_t)head;
	if (x->check && !x->check(r->rec, n))
		return tm_err(err, TM_EIO, "a temporary file is damaged");
	return 1;
}

static int heap_less(const tm_xsort *x, size_t a, size_t b)
{
	int c = x->cmp(x->readers[a].rec, x->readers[b].rec);
	return c < 0 || (c == 0 && a < b);
}

static void sift_down(tm_xsort *x, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i;
		if (l < x->n_heap && heap_less(x, x->heap[l], x->heap[m]))
			m = l;
		if (r < x->n_heap && heap_less(x, x->heap[r], x->heap[m]))
			m = r;
		if (m == i)
			return;
		size_t t = x->heap[i];
		x->heap[i] = x->heap[m];
		x->heap[m] = t;
		i = m;
	}
}

/* Give back the readers of the runs merged last. */
static void drop_readers(tm_xsort *x)
{
	for (size_t i = 0; i < x->n_readers; i++) {
		free(x->readers[i].buf);
		free(x->readers[i].big);
	}
	free(x->readers);
	free(x->heap);
	x->readers = NULL;
	x->heap = NULL;
	x->n_readers = x->n_heap = 0;
}

/* Readers for runs [lo, hi), each at its first record, in a heap. */
static int prime(tm_xsort *x, size_t lo, size_t hi, tm_error *err)
{
	drop_readers(x);
	size_t n = hi - lo;
	x->readers = tm_xcalloc(n ? n : 1, sizeof(*x->readers));
	x->heap = tm_xcalloc(n ? n : 1, sizeof(*x->heap));
	x->n_readers = n;
	for (size_t i = 0; i < n; i++) {
		run_reader *r = &x->readers[i];
		r->next = x->run_start[lo + i];
		r->end = x->run_start[lo + i + 1];
		r->cap = READ_BUF;
		r->buf = tm_xmalloc(r->cap);
		int rc = advance(x, r, err);
		if (rc < 0)
			return -1;
		if (rc)
			x->heap[x->n_heap++] = i;
	}
	for (size_t i = x->n_heap; i-- > 0;)
		sift_down(x, i);
	return 0;
}

/* The smallest record of the runs being merged (valid until the next
 * call): 1, 0 when they are all read, -1 with err set. `moved`: the one
 * handed out before has been used, move its reader on first. */
static int pop(tm_xsort *x, int moved, const void **rec, uint32_t *len, tm_error *err)
{
	if (moved && x->n_heap) {
		int rc = advance(x, &x->readers[x->heap[0]], err);
		if (rc < 0)
			return -1;
		if (!rc)
			x->heap[0] = x->heap[--x->n_heap];
		if (x->n_heap)
			sift_down(x, 0);
	}
	if (!x->n_heap)
		return 0;
	run_reader *r = &x->readers[x->heap[0]];
	*rec = r->rec;
	*len = r->rec_len;
	return 1;
}

/* Merge the runs fan_in at a time into the runs of a new file, which
 * then replaces the old one (its space given back as it is read). */
static int merge_pass(tm_xsort *x, tm_error *err)
{
	tm_spool next = {.fd = -1};
	if (tm_spool_open(&next, err) != 0)
		return -1;
	size_t n_next = (x->n_runs + x->fan_in - 1) / x->fan_in;
	uint64_t *start = tm_xcalloc(n_next + 1, sizeof(*start));
	tm_giveback_start(&x->gb, x->runs.fd, x->runs.size);
	int rc = 0;
	for (size_t k = 0; k < n_next && rc == 0; k++) {
		size_t lo = k * x->fan_in, hi = lo + x->fan_in < x->n_runs ? lo + x->fan_in : x->n_runs;
		start[k] = next.size;
		const void *rec;
		uint32_t len;
		if ((rc = prime(x, lo, hi, err)) != 0)
			break;
		uint64_t n = 0;
		for (int moved = 0; (rc = pop(x, moved, &rec, &len, err)) == 1; moved = 1) {
			/* as read: its length and its bytes */
			const run_reader *rr = &x->readers[x->heap[0]];
			tm_spool_put(&next, rr->rec - rr->rec_head, rr->rec_head + (size_t)len);
			/* a pass reads the whole sort again: a signal stops it too */
			if (!(++n & 4095) && (rc = tm_stopped(err)) != 0)
				break;
		}
	}
	drop_readers(x);
	start[n_next] = next.size;
	tm_giveback_free(&x->gb);
	if (rc < 0 || tm_spool_finish(&next, NULL, err) != 0) {
		tm_spool_close(&next);
		free(start);
		return -1;
	}
	tm_spool_close(&x->runs);
	x->runs = next;
	free(x->run_start);
	x->run_start = start;
	x->n_runs = n_next;
	x->cap_runs = n_next + 1;
	return 0;
}

int tm_xsort_next(tm_xsort *x, const void **rec, uint32_t *len, tm_error *err)
{
	if (x->failed)
		return tm_err(err, TM_EIO, "a temporary file could not be written");
	if (!x->spilled) {
		if (x->mem_pos >= x->cur.n_index)
			return 0;
		size_t off = x->cur.index[x->mem_pos++];
		memcpy(len, x->cur.arena + off, 4);
		*rec = x->cur.arena + off + 4;
		return 1;
	}
	int moved = x->primed;
	if (!x->primed) {
		x->primed = 1;
		if (prime(x, 0, x->n_runs, err) != 0)
			return -1;
	}
	return pop(x, moved, rec, len, err);
}

void tm_xsort_free(tm_xsort *x)
{
	if (!x)
		return;
	release_run(x);
	free(x->run_start);
	drop_readers(x);
	tm_giveback_free(&x->gb);
	tm_spool_close(&x->runs);
	free(x);
}
