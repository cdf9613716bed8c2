/* core/order.c - the reference sorter's order (see order.h).
 *
 * Every record goes into one external sort keyed (queue, ts, push order).
 * Its output, grouped by queue, is kept in memory when small or in a
 * temporary file otherwise, and read through one cursor per queue; the
 * cursors apply the slow-sorting tie rule, and the queues are drained
 * together with the reference's extraction rule over a heap. */
#include "order.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "spool.h"
#include "xsort.h"

#define STORE_MEM_MAX (64u * 1024u * 1024u) /* grouped records kept in memory */
#define CURSOR_BUF (64u * 1024u)

typedef struct ohdr {
	uint32_t queue;
	int64_t ts;
	uint64_t seq;
	int64_t key; /* the slow-sorting key of a JSON event; INT64_MAX otherwise */
} ohdr;

/* The reference's Queue bookkeeping while events are appended. */
typedef struct oqueue {
	int json;
	uint64_t n;              /* events appended */
	int64_t max_ts;
	uint64_t sort_start_idx; /* 0: no sorting needed (the reference's quirk: an
				  * out-of-order first event leaves it 0) */
	int64_t sort_min_ts;
	/* reading */
	uint64_t off, end;       /* the queue's records in the store */
	char *buf;               /* spooled store: buf[pos..len) are the bytes from off on */
	size_t cap, pos, len;
	char **group;            /* a reordered group of equal timestamps */
	uint32_t *group_len;
	size_t n_group, i_group, cap_group;
	const char *head;        /* the current record, NULL when drained */
	uint32_t head_len;
	int head_from_store;     /* head is at the store position (else a copy) */
	ohdr hh;
} oqueue;

struct tm_order {
	tm_xsort *sort;
	oqueue *q;
	size_t n_q, cap_q;
	uint64_t seq;
	int slow;                /* a JSON X event was pushed */
	/* the grouped store */
	char *mem;               /* in memory, or */
	tm_spool file;           /* in a temporary file */
	uint64_t store_size;
	/* draining */
	uint32_t *heap;
	size_t n_heap;
	int64_t cur;             /* the queue being drained, -1 none */
	int64_t limit;           /* drain it while ts <= limit */
	int finished;
	int pending;             /* cur's head was handed out: advance first */
};

static int hdr_cmp(const void *a, const void *b)
{
	ohdr x, y;
	memcpy(&x, a, sizeof x);
	memcpy(&y, b, sizeof y);
	if (x.queue != y.queue)
		return x.queue < y.queue ? -1 : 1;
	if (x.ts != y.ts)
		return x.ts < y.ts ? -1 : 1;
	return x.seq < y.seq ? -1 : x.seq > y.seq;
}

tm_order *tm_order_new(size_t run_bytes)
{
	tm_order *o = tm_xcalloc(1, sizeof(*o));
	o->sort = tm_xsort_new(hdr_cmp, run_bytes);
	o->file.fd = -1;
	o->cur = -1;
	return o;
}

uint32_t tm_order_queue(tm_order *o, int json)
{
	TM_GROW(o->q, o->cap_q, o->n_q + 1);
	oqueue *q = &o->q[o->n_q];
	memset(q, 0, sizeof(*q));
	q->json = json;
	q->sort_min_ts = INT64_MAX;
	return (uint32_t)o->n_q++;
}

/* TraceSorter::SlowOperatorLess::KeyForType */
static int64_t json_key(char phase, int64_t dur)
{
	if (phase == 'E')
		return INT64_MIN;
	if (phase == 'X')
		return INT64_MAX - (dur < 0 ? INT64_MAX : dur); /* an absent dur is max() there */
	return INT64_MAX;
}

int tm_order_push(tm_order *o, uint32_t qi, int64_t ts, char phase, int64_t dur, const void *data,
		  uint32_t len, tm_error *err)
{
	oqueue *q = &o->q[qi];
	if (q->json && phase == 'X')
		o->slow = 1;
	/* TraceSorter::Queue::Append */
	if (ts > q->max_ts || (!o->slow && ts == q->max_ts)) {
		q->max_ts = ts;
	} else if (q->sort_start_idx == 0) {
		q->sort_start_idx = q->n;
		q->sort_min_ts = ts;
	} else if (ts < q->sort_min_ts) {
		q->sort_min_ts = ts;
	}
	q->n++;
	ohdr h = {qi, ts, o->seq++, q->json ? json_key(phase, dur) : INT64_MAX};
	size_t n = sizeof h + len;
	if (n > UINT32_MAX)
		return tm_err(err, TM_EINPUT, "an event of %u bytes is too large to sort", len);
	char stack[512];
	char *rec = n <= sizeof stack ? stack : tm_xmalloc(n);
	memcpy(rec, &h, sizeof h);
	if (len)
		memcpy(rec + sizeof h, data, len);
	int rc = tm_xsort_add(o->sort, rec, (uint32_t)n, err);
	if (rec != stack)
		free(rec);
	return rc;
}

uint64_t tm_order_count(const tm_order *o)
{
	return o->seq;
}

/* ---- the grouped store and its cursors ----------------------------------- */

static int store_put(tm_order *o, tm_buf *mem, const void *rec, uint32_t len)
{
	if (o->file.fd < 0 && mem->len + 4 + len > STORE_MEM_MAX) {
		tm_error e;
		if (tm_spool_open(&o->file, &e) != 0)
			return -1;
		tm_spool_put(&o->file, mem->data, mem->len);
		mem->len = 0;
	}
	if (o->file.fd >= 0) {
		tm_spool_put(&o->file, &len, 4);
		tm_spool_put(&o->file, rec, len);
	} else {
		tm_buf_put(mem, &len, 4);
		tm_buf_put(mem, rec, len);
	}
	o->store_size += 4 + (uint64_t)len;
	return 0;
}

/* The record at queue q's position in the store, without moving past it:
 * 1 with *rec / *len (valid until the cursor moves), 0 at the queue's end,
 * -1 with err set. */
static int raw_peek(tm_order *o, oqueue *q, const char **rec, uint32_t *len, tm_error *err)
{
	if (q->off >= q->end)
		return 0;
	if (o->mem) {
		memcpy(len, o->mem + q->off, 4);
		*rec = o->mem + q->off + 4;
		return 1;
	}
	/* the file: q->buf[pos..len) holds the bytes from q->off on */
	size_t have = q->len - q->pos;
	size_t want = 4;
	if (have >= 4) {
		memcpy(len, q->buf + q->pos, 4);
		want = 4 + (size_t)*len;
	}
	while (have < want) {
		if (q->pos) {
			memmove(q->buf, q->buf + q->pos, have);
			q->len = have;
			q->pos = 0;
		}
		if (want > q->cap) {
			q->buf = tm_xrealloc(q->buf, want);
			q->cap = want;
		}
		uint64_t at = q->off + have;
		if (at >= q->end)
			return tm_err(err, TM_EIO, "a temporary file is cut short");
		size_t room = q->cap - q->len;
		if (room > q->end - at)
			room = (size_t)(q->end - at);
		ssize_t k = pread(o->file.fd, q->buf + q->len, room, (off_t)at);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return tm_err(err, TM_EIO, "cannot read a temporary file");
		q->len += (size_t)k;
		have = q->len - q->pos;
		if (want == 4 && have >= 4) {
			memcpy(len, q->buf + q->pos, 4);
			want = 4 + (size_t)*len;
		}
	}
	*rec = q->buf + q->pos + 4;
	return 1;
}

/* Move past the record raw_peek gave. */
static void raw_advance(tm_order *o, oqueue *q, uint32_t len)
{
	q->off += 4 + (uint64_t)len;
	if (!o->mem)
		q->pos += 4 + (size_t)len;
}

static int group_cmp(const void *a, const void *b)
{
	ohdr x, y;
	memcpy(&x, *(char *const *)a + 4, sizeof x);
	memcpy(&y, *(char *const *)b + 4, sizeof y);
	if (x.key != y.key)
		return x.key < y.key ? -1 : 1;
	return x.seq < y.seq ? -1 : x.seq > y.seq;
}

static void group_clear(oqueue *q)
{
	for (size_t i = 0; i < q->n_group; i++)
		free(q->group[i]);
	q->n_group = q->i_group = 0;
}

/* Does the slow-sorting tie rule apply at timestamp ts of queue q? */
static int reorders(const tm_order *o, const oqueue *q, int64_t ts)
{
	return o->slow && q->json && q->sort_start_idx != 0 && ts >= q->sort_min_ts;
}

/* Set q->head to the queue's next record in its final order (NULL at its
 * end). The previous head must have been consumed (q->head_consumed). */
static int cursor_next(tm_order *o, oqueue *q, tm_error *err)
{
	if (q->i_group < q->n_group) {
		char *c = q->group[q->i_group++];
		memcpy(&q->head_len, c, 4);
		q->head = c + 4;
		memcpy(&q->hh, q->head, sizeof q->hh);
		q->head_from_store = 0;
		return 1;
	}
	group_clear(q);
	const char *rec;
	uint32_t len;
	int rc = raw_peek(o, q, &rec, &len, err);
	if (rc <= 0) {
		q->head = NULL;
		return rc;
	}
	ohdr h;
	memcpy(&h, rec, sizeof h);
	if (!reorders(o, q, h.ts)) {
		q->head = rec;
		q->head_len = len;
		q->hh = h;
		q->head_from_store = 1;
		return 1;
	}
	/* Copy out the run of this timestamp (each copy keeps its length in
	 * front), then order it by key. */
	int64_t ts = h.ts;
	do {
		TM_GROW(q->group, q->cap_group, q->n_group + 1);
		char *c = tm_xmalloc(4 + (size_t)len);
		memcpy(c, &len, 4);
		memcpy(c + 4, rec, len);
		q->group[q->n_group++] = c;
		raw_advance(o, q, len);
		rc = raw_peek(o, q, &rec, &len, err);
		if (rc < 0)
			return -1;
		if (rc)
			memcpy(&h, rec, sizeof h);
	} while (rc && h.ts == ts);
	qsort(q->group, q->n_group, sizeof(*q->group), group_cmp);
	q->i_group = 0;
	return cursor_next(o, q, err);
}

/* Consume the current head. */
static int cursor_advance(tm_order *o, oqueue *q, tm_error *err)
{
	if (q->head && q->head_from_store)
		raw_advance(o, q, q->head_len);
	return cursor_next(o, q, err);
}

static int heap_less(const tm_order *o, uint32_t a, uint32_t b)
{
	const oqueue *x = &o->q[a], *y = &o->q[b];
	if (x->hh.ts != y->hh.ts)
		return x->hh.ts < y->hh.ts;
	return a < b;
}

static void heap_sift_down(tm_order *o, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i;
		if (l < o->n_heap && heap_less(o, o->heap[l], o->heap[m]))
			m = l;
		if (r < o->n_heap && heap_less(o, o->heap[r], o->heap[m]))
			m = r;
		if (m == i)
			return;
		uint32_t t = o->heap[i];
		o->heap[i] = o->heap[m];
		o->heap[m] = t;
		i = m;
	}
}

static void heap_push(tm_order *o, uint32_t qi)
{
	size_t i = o->n_heap++;
	o->heap[i] = qi;
	while (i) {
		size_t p = (i - 1) / 2;
		if (!heap_less(o, o->heap[i], o->heap[p]))
			break;
		uint32_t t = o->heap[i];
		o->heap[i] = o->heap[p];
		o->heap[p] = t;
		i = p;
	}
}

static uint32_t heap_pop(tm_order *o)
{
	uint32_t top = o->heap[0];
	o->heap[0] = o->heap[--o->n_heap];
	if (o->n_heap)
		heap_sift_down(o, 0);
	return top;
}

int tm_order_finish(tm_order *o, tm_error *err)
{
	if (tm_xsort_finish(o->sort, err) != 0)
		return -1;
	/* Group the sorted records by queue in the store. */
	tm_buf mem = {0};
	uint64_t *start = tm_xcalloc(o->n_q + 1, sizeof(*start));
	const void *rec;
	uint32_t len;
	int rc;
	int64_t last_q = -1;
	while ((rc = tm_xsort_next(o->sort, &rec, &len, err)) == 1) {
		ohdr h;
		memcpy(&h, rec, sizeof h);
		while (last_q < (int64_t)h.queue)
			start[++last_q] = o->store_size;
		if (store_put(o, &mem, rec, len) != 0) {
			rc = tm_err(err, TM_EIO, "cannot write a temporary file");
			break;
		}
	}
	while (last_q < (int64_t)o->n_q)
		start[++last_q] = o->store_size;
	tm_xsort_free(o->sort);
	o->sort = NULL;
	if (rc < 0) {
		tm_buf_free(&mem);
		free(start);
		return -1;
	}
	if (o->file.fd >= 0) {
		tm_buf_free(&mem);
		if (tm_spool_finish(&o->file, "sort", err) != 0) {
			free(start);
			return -1;
		}
	} else {
		o->mem = mem.data ? mem.data : tm_xstrdup("");
	}
	o->heap = tm_xcalloc(o->n_q ? o->n_q : 1, sizeof(*o->heap));
	for (size_t i = 0; i < o->n_q; i++) {
		oqueue *q = &o->q[i];
		q->off = start[i];
		q->end = start[i + 1];
		if (!o->mem && q->end > q->off) {
			q->cap = q->end - q->off < CURSOR_BUF ? (size_t)(q->end - q->off) : CURSOR_BUF;
			if (q->cap < 64)
				q->cap = 64;
			q->buf = tm_xmalloc(q->cap);
		}
		rc = cursor_next(o, q, err);
		if (rc < 0) {
			free(start);
			return -1;
		}
		if (rc)
			heap_push(o, (uint32_t)i);
	}
	free(start);
	o->finished = 1;
	return 0;
}

int tm_order_next(tm_order *o, tm_order_rec *out, tm_error *err)
{
	if (!o->finished)
		return tm_err(err, TM_EIO, "tm_order_next before tm_order_finish");
	if (o->pending) {
		o->pending = 0;
		oqueue *q = &o->q[o->cur];
		if (cursor_advance(o, q, err) < 0)
			return -1;
	}
	/* TraceSorter::SortAndExtractEventsUntilAllocId */
	if (o->cur >= 0) {
		oqueue *q = &o->q[o->cur];
		if (!q->head || q->hh.ts > o->limit) {
			if (q->head)
				heap_push(o, (uint32_t)o->cur);
			o->cur = -1;
		}
	}
	if (o->cur < 0) {
		if (!o->n_heap)
			return 0;
		o->cur = heap_pop(o);
		o->limit = o->n_heap ? o->q[o->heap[0]].hh.ts : INT64_MAX;
	}
	oqueue *q = &o->q[o->cur];
	out->queue = q->hh.queue;
	out->ts = q->hh.ts;
	out->seq = q->hh.seq;
	out->data = q->head + sizeof(ohdr);
	out->len = q->head_len - (uint32_t)sizeof(ohdr);
	o->pending = 1;
	return 1;
}

void tm_order_free(tm_order *o)
{
	if (!o)
		return;
	tm_xsort_free(o->sort);
	for (size_t i = 0; i < o->n_q; i++) {
		oqueue *q = &o->q[i];
		group_clear(q);
		free(q->group);
		free(q->buf);
	}
	free(o->q);
	free(o->mem);
	tm_spool_close(&o->file);
	free(o->heap);
	free(o);
}
