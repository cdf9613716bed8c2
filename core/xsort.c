/* core/xsort.c - runs in memory, spilled sorted to one temporary file,
 * merged with a binary heap. A record is stored as a 4-byte length and its
 * bytes, in the run buffer and in the file alike. */
#include "xsort.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "spool.h"

#define DEFAULT_RUN (32u * 1024u * 1024u)
#define READ_BUF (64u * 1024u)

typedef struct run_reader {
	uint64_t next, end;   /* file offsets still to read */
	char *buf;
	size_t cap, pos, len;
	const char *rec;      /* the current record (in buf, or the arena) */
	uint32_t rec_len;
	char *big;            /* a record longer than buf */
} run_reader;

struct tm_xsort {
	tm_xsort_cmp cmp;
	size_t run_bytes;
	char *arena;          /* the current run: [len][bytes]... */
	size_t len, cap;
	size_t *index;        /* offsets of the run's records */
	size_t n_index, cap_index;
	tm_spool runs;        /* spilled runs, one after another */
	int spilled;
	uint64_t *run_start;
	size_t n_runs, cap_runs;
	uint64_t count;
	int failed, finished;
	/* reading */
	size_t mem_pos;       /* next index of a never-spilled sort */
	run_reader *readers;
	size_t *heap, n_heap;
	int primed;
};

static const void *rec_at(const char *arena, size_t off)
{
	return arena + off + 4;
}

static int index_cmp(const void *a, const void *b, void *ctx)
{
	const tm_xsort *x = ctx;
	return x->cmp(rec_at(x->arena, *(const size_t *)a), rec_at(x->arena, *(const size_t *)b));
}

tm_xsort *tm_xsort_new(tm_xsort_cmp cmp, size_t run_bytes)
{
	tm_xsort *x = tm_xcalloc(1, sizeof(*x));
	x->cmp = cmp;
	x->run_bytes = run_bytes ? run_bytes : DEFAULT_RUN;
	x->runs.fd = -1;
	return x;
}

static int spill(tm_xsort *x, tm_error *err)
{
	if (!x->n_index)
		return 0;
	if (!x->spilled) {
		if (tm_spool_open(&x->runs, err))
			return -1;
		x->spilled = 1;
	}
	qsort_r(x->index, x->n_index, sizeof(*x->index), index_cmp, x);
	TM_GROW(x->run_start, x->cap_runs, x->n_runs + 2);
	x->run_start[x->n_runs++] = x->runs.size;
	for (size_t i = 0; i < x->n_index; i++) {
		uint32_t n;
		memcpy(&n, x->arena + x->index[i], 4);
		tm_spool_put(&x->runs, x->arena + x->index[i], 4 + (size_t)n);
	}
	x->run_start[x->n_runs] = x->runs.size;
	x->n_index = 0;
	x->len = 0;
	int e = tm_spool_failed(&x->runs);
	if (e)
		return tm_err(err, TM_EIO, "cannot write a temporary file: %s", strerror(e));
	return 0;
}

int tm_xsort_add(tm_xsort *x, const void *rec, uint32_t len, tm_error *err)
{
	if (x->failed)
		return tm_err(err, TM_EIO, "a temporary file could not be written");
	if (x->n_index && x->len + 4 + (size_t)len > x->run_bytes && spill(x, err) != 0) {
		x->failed = 1;
		return -1;
	}
	TM_GROW(x->arena, x->cap, x->len + 4 + (size_t)len);
	memcpy(x->arena + x->len, &len, 4);
	if (len)
		memcpy(x->arena + x->len + 4, rec, len);
	TM_GROW(x->index, x->cap_index, x->n_index + 1);
	x->index[x->n_index++] = x->len;
	x->len += 4 + (size_t)len;
	x->count++;
	return 0;
}

/* Give back the memory run's buffers (spilled). */
static void release_run(tm_xsort *x)
{
	free(x->arena);
	x->arena = NULL;
	x->cap = 0;
	free(x->index);
	x->index = NULL;
	x->cap_index = 0;
}

size_t tm_xsort_mem(const tm_xsort *x)
{
	return x->cap + x->cap_index * sizeof(*x->index);
}

int tm_xsort_spill(tm_xsort *x, tm_error *err)
{
	if (x->failed || x->finished)
		return tm_err(err, TM_EIO, "a temporary file could not be written");
	if (spill(x, err) != 0) {
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
		if (x->n_index)
			qsort_r(x->index, x->n_index, sizeof(*x->index), index_cmp, x);
		return 0;
	}
	if (spill(x, err) != 0 || tm_spool_finish(&x->runs, "sort", err) != 0) {
		x->failed = 1;
		return -1;
	}
	release_run(x);
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
		r->len += (size_t)n;
		r->next += (uint64_t)n;
	}
	return 0;
}

/* Advance reader r to its next record: 1, 0 at its end, -1 on error. */
static int advance(tm_xsort *x, run_reader *r, tm_error *err)
{
	if (r->len - r->pos < 4 && fill(x, r, 4, err) != 0)
		return -1;
	if (r->len - r->pos < 4)
		return 0;
	uint32_t n;
	memcpy(&n, r->buf + r->pos, 4);
	size_t need = 4 + (size_t)n;
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
			have += (size_t)k;
			r->next += (uint64_t)k;
		}
		r->rec = r->big + 4;
		r->rec_len = n;
		return 1;
	}
	if (r->len - r->pos < need && fill(x, r, need, err) != 0)
		return -1;
	if (r->len - r->pos < need)
		return tm_err(err, TM_EIO, "a temporary file is cut short");
	r->rec = r->buf + r->pos + 4;
	r->rec_len = n;
	r->pos += need;
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

static int prime(tm_xsort *x, tm_error *err)
{
	x->primed = 1;
	x->readers = tm_xcalloc(x->n_runs ? x->n_runs : 1, sizeof(*x->readers));
	x->heap = tm_xcalloc(x->n_runs ? x->n_runs : 1, sizeof(*x->heap));
	for (size_t i = 0; i < x->n_runs; i++) {
		run_reader *r = &x->readers[i];
		r->next = x->run_start[i];
		r->end = x->run_start[i + 1];
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

int tm_xsort_next(tm_xsort *x, const void **rec, uint32_t *len, tm_error *err)
{
	if (x->failed)
		return tm_err(err, TM_EIO, "a temporary file could not be written");
	if (!x->spilled) {
		if (x->mem_pos >= x->n_index)
			return 0;
		size_t off = x->index[x->mem_pos++];
		memcpy(len, x->arena + off, 4);
		*rec = x->arena + off + 4;
		return 1;
	}
	if (!x->primed) {
		if (prime(x, err) != 0)
			return -1;
	} else if (x->n_heap) {
		/* the record handed out last time: move its reader on */
		run_reader *r = &x->readers[x->heap[0]];
		int rc = advance(x, r, err);
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

void tm_xsort_free(tm_xsort *x)
{
	if (!x)
		return;
	free(x->arena);
	free(x->index);
	free(x->run_start);
	if (x->readers)
		for (size_t i = 0; i < x->n_runs; i++) {
			free(x->readers[i].buf);
			free(x->readers[i].big);
		}
	free(x->readers);
	free(x->heap);
	tm_spool_close(&x->runs);
	free(x);
}
