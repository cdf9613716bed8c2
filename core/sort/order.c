/* core/sort/order.c - the reference sorter's order (see order.h).
 *
 * A queue's records mostly arrive in timestamp order already: a CPU's
 * ftrace events, a JSON file written in time order, or a few sequences of
 * a proto file interleaved chunk by chunk, each in order by itself. So a
 * queue keeps its records as a few "piles", each in order as it was
 * pushed: a record goes on the pile whose newest timestamp is the latest
 * not after its own (a new pile when there is none), and only when a queue
 * would need more than MAX_PILES do the rest go to an external sort
 * (core/sort/xsort.h). Reading a queue merges its piles (and that sort) by
 * (timestamp, push order), which is the queue's stable sort; nothing is
 * sorted or copied twice for input that is in order.
 *
 * Pile bytes stay in memory while the whole order holds less than its
 * budget; past it they go to one temporary file in blocks, each pile a
 * list of extents of whole records. The cursors apply the slow-sorting tie
 * rule on the merged stream, and the queues are drained together with the
 * reference's extraction rule over a heap. */
#include "sort/order.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sort/spool.h"
#include "sort/xsort.h"

#define MEM_MAX (32u * 1024u * 1024u) /* memory the pile tails hold, in all */
#define BLOCK (64u * 1024u)           /* a pile's tail is written out at this size */
#define CURSOR_BUF (64u * 1024u)      /* a pile reader's buffer, at most */
#define MAX_PILES 32                  /* per queue; more disorder goes to a sort */
_Static_assert(MAX_PILES <= 256, "a pile's rank is a byte");
#define OVERFLOW_RUN (8u * 1024u * 1024u)

/* What orders a record: in front of it in the overflow sorts and the
 * slow-sorting groups. A pile stores it compactly (see struct pile). */
typedef struct ohdr {
	int64_t ts;
	uint64_t seq;
	int64_t key; /* the slow-sorting key of a JSON event; INT64_MAX otherwise */
} ohdr;

typedef struct extent {
	uint64_t off, len;
} extent;

/* Records in push order, first the extents in the file, then the tail in
 * memory. Each is stored as varints: the bytes after this one, the
 * timestamp's and the push order's steps from the pile's previous record
 * (neither goes back within a pile), and on a JSON queue its slow-sorting
 * key counted down from INT64_MAX; then its bytes. A proto track event's
 * record is about 80 bytes, and a fixed 28-byte header in front of each
 * made the store a third bigger (the proto bench's pass wrote 370 MB of
 * it for a 133 MB input); these take 4 or 5 bytes. */
typedef struct pile {
	int64_t last_ts;
	uint64_t last_seq;
	extent *ext;
	size_t n_ext, cap_ext;
	tm_buf tail;
	/* reading */
	size_t i_ext;
	uint64_t at;             /* file offset of buf[len] within ext[i_ext] */
	char *buf;
	size_t cap, pos, len;
	size_t tail_pos;
	const char *rec;         /* the current record's bytes, NULL at the end */
	uint32_t rec_len;
	uint32_t rec_step;       /* what it takes in the pile, varints included */
	ohdr hdr;                /* its header */
	int64_t prev_ts;         /* the header of the record before it */
	uint64_t prev_seq;
	int in_tail;
} pile;

/* A queue waiting in the drain's heap, with its head's time: compared
 * there without touching the queue (the queues' heads were a cache miss
 * each, 18 a pop with 500 files, a tenth of the systrace bench's replay
 * thread). A queue's head does not change while it waits. */
typedef struct oheap_ent {
	int64_t ts;
	uint32_t q;
} oheap_ent;

/* A source of a queue's merge: a pile, or (index n_piles) the sort. */
typedef struct oqueue {
	int json;
	uint64_t n;              /* events appended */
	int64_t max_ts;
	uint64_t sort_start_idx; /* 0: no sorting needed (the reference's quirk: an
				  * out-of-order first event leaves it 0) */
	int64_t sort_min_ts;
	pile *piles;
	size_t n_piles, cap_piles;
	uint8_t rank[MAX_PILES]; /* the piles by last_ts, oldest first (pick_pile) */
	tm_xsort *over;          /* records past MAX_PILES piles */
	size_t over_mem;         /* what o->over_mem counts for it */
	/* reading: the merge of the sources */
	const char *over_rec;    /* the sort's current record: an ohdr, then its bytes */
	uint32_t over_len;
	uint32_t *src;           /* heap of sources by current record */
	size_t n_src;
	int src_pending;         /* the top's record was consumed: step it first */
	/* the slow-sorting cursor on top */
	char **group;            /* a reordered group of equal timestamps */
	size_t n_group, i_group, cap_group;
	tm_buf group_bytes;      /* its records' copies, one after another */
	const char *head;        /* the current record's bytes, NULL when drained */
	uint32_t head_len;
	int head_from_src;       /* head is the merge's current record (else a copy) */
	ohdr hh;                 /* its header */
} oqueue;

struct tm_order {
	/* The queues by number, each made at its first record (NULL before):
	 * a file numbers the queues it may use (a JSON file three, a proto
	 * file three and one a CPU), most stay empty, and an archive of
	 * 50,000 one-event JSON files held 150,000 of 248 bytes each. */
	struct oslot {
		oqueue *q;
		uint8_t json;    /* tm_order_queue's, for when it is made */
	} *q;
	size_t n_q, cap_q;
	uint64_t seq;
	int slow;                /* a JSON X event was pushed */
	size_t mem_max, block, over_run;
	size_t pile_buf;         /* a pile reader's buffer (tm_order_finish) */
	size_t mem;              /* pile tail bytes in memory */
	size_t over_mem;         /* memory of the overflow sorts */
	tm_spool file;           /* pile blocks once past mem_max */
	tm_giveback gb;          /* its space, given back as it is read */
	int to_file;
	int failed;
	tm_error err;
	/* draining */
	oheap_ent *heap;
	size_t n_heap;
	int64_t cur;             /* the queue being drained, -1 none */
	int64_t limit;           /* drain it while ts <= limit */
	int finished;
	int pending;             /* cur's head was handed out: advance first */
};

static ohdr hdr_of(const void *rec)
{
	ohdr h;
	memcpy(&h, rec, sizeof h);
	return h;
}

/* (ts, push order): how a queue's sources merge. */
static int ohdr_cmp(const ohdr *x, const ohdr *y)
{
	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* The same on records that start with their header (the overflow sorts). */
static int hdr_cmp(const void *a, const void *b)
{
	ohdr x = hdr_of(a), y = hdr_of(b);
	return ohdr_cmp(&x, &y);
}

tm_order *tm_order_new(size_t run_bytes)
{
	tm_order *o = tm_xcalloc(1, sizeof(*o));
	o->file.fd = -1;
	o->gb.fd = -1;
	o->cur = -1;
	o->mem_max = run_bytes ? run_bytes : MEM_MAX;
	o->block = o->mem_max / 8 < BLOCK ? o->mem_max / 8 : BLOCK;
	o->over_run = o->mem_max / 4 < OVERFLOW_RUN ? o->mem_max / 4 : OVERFLOW_RUN;
	return o;
}

uint32_t tm_order_queue(tm_order *o, int json)
{
	TM_GROW(o->q, o->cap_q, o->n_q + 1);
	o->q[o->n_q] = (struct oslot){NULL, json != 0};
	return (uint32_t)o->n_q++;
}

/* Queue qi, made now if it has had no record yet. */
static oqueue *queue_made(tm_order *o, uint32_t qi)
{
	oqueue *q = o->q[qi].q;
	if (!q) {
		q = o->q[qi].q = tm_xcalloc(1, sizeof(*q));
		q->json = o->q[qi].json;
		q->sort_min_ts = INT64_MAX;
	}
	return q;
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

/* ---- storing piles ----------------------------------------------------------- */

/* The budget counts what the tails hold, not what they use: a tail grows
 * by doubling, and counting its bytes let the tails of many queues hold
 * twice the budget. */
static void tail_release(tm_order *o, pile *p)
{
	o->mem -= p->tail.cap;
	tm_buf_free(&p->tail);
}

static void flush_tail(tm_order *o, pile *p)
{
	if (!p->tail.len)
		return;
	TM_GROW(p->ext, p->cap_ext, p->n_ext + 1);
	p->ext[p->n_ext++] = (extent){o->file.size, p->tail.len};
	tm_spool_put(&o->file, p->tail.data, p->tail.len);
	p->tail.len = 0;
	if (p->tail.cap > o->block) /* a big record grew it: give it back */
		tail_release(o, p);
}

/* Every tail to the file: memory is over its budget. */
static int flush_all(tm_order *o)
{
	if (!o->to_file) {
		if (tm_spool_open(&o->file, &o->err) != 0)
			return -1;
		o->to_file = 1;
	}
	for (size_t i = 0; i < o->n_q; i++)
		for (size_t k = 0; o->q[i].q && k < o->q[i].q->n_piles; k++) {
			flush_tail(o, &o->q[i].q->piles[k]);
			tail_release(o, &o->q[i].q->piles[k]);
		}
	return 0;
}

/* The pile for a record at ts: the one whose newest record is the latest
 * not after ts (a new one when none is); SIZE_MAX when none is and no new
 * pile may be made. The piles' last_ts are all different and q->rank
 * keeps them in order: a record goes on the pile ranked just below the
 * first later one, so that pile stays below it, and a new pile starts
 * below every other. A queue in order puts every record on its top pile,
 * found at the first look (scanning all piles' headers, 184 bytes apart,
 * was a twentieth of a proto scan that makes records). */
static size_t pick_pile(oqueue *q, int64_t ts)
{
	size_t r = q->n_piles;
	while (r > 0 && q->piles[q->rank[r - 1]].last_ts > ts)
		r--;
	if (r > 0)
		return q->rank[r - 1];
	if (q->n_piles >= MAX_PILES)
		return SIZE_MAX;
	/* one pile at first, not tm_grow's eight: a queue in order never has
	 * a second, and an archive of 50,000 one-event files held 74 MB of
	 * empty piles */
	if (q->n_piles == q->cap_piles)
		TM_RESERVE(q->piles, q->cap_piles, q->cap_piles ? 2 * q->cap_piles : 1);
	memset(&q->piles[q->n_piles], 0, sizeof(pile));
	memmove(q->rank + 1, q->rank, q->n_piles);
	q->rank[0] = (uint8_t)q->n_piles;
	return q->n_piles++;
}

static int push_over(tm_order *o, oqueue *q, const void *rec, uint32_t n)
{
	if (!q->over)
		q->over = tm_xsort_new(hdr_cmp, o->over_run);
	if (tm_xsort_add(q->over, rec, n, &o->err) != 0)
		return -1;
	size_t now = tm_xsort_mem(q->over);
	o->over_mem = o->over_mem - q->over_mem + now;
	q->over_mem = now;
	if (o->over_mem <= o->mem_max)
		return 0;
	/* over budget together: write out the largest memory run */
	oqueue *big = q;
	for (size_t i = 0; i < o->n_q; i++)
		if (o->q[i].q && o->q[i].q->over_mem > big->over_mem)
			big = o->q[i].q;
	if (tm_xsort_spill(big->over, &o->err) != 0)
		return -1;
	o->over_mem -= big->over_mem;
	big->over_mem = 0;
	return 0;
}

#define PILE_HDR_MAX (3 * TM_UV_MAX) /* the varints after the length, at most */

/* A record (header and payload) on its pile, or on the queue's sort. */
static int store(tm_order *o, oqueue *q, const ohdr *h, const void *data, uint32_t len)
{
	size_t n = sizeof *h + len;
	size_t k = pick_pile(q, h->ts);
	if (k == SIZE_MAX) {
		char stack[512];
		char *rec = n <= sizeof stack ? stack : tm_xmalloc(n);
		memcpy(rec, h, sizeof *h);
		if (len)
			memcpy(rec + sizeof *h, data, len);
		int rc = push_over(o, q, rec, (uint32_t)n);
		if (rec != stack)
			free(rec);
		return rc;
	}
	pile *p = &q->piles[k];
	uint8_t hb[PILE_HDR_MAX], lb[TM_UV_MAX];
	uint8_t *he = tm_uv_put(hb, (uint64_t)(h->ts - p->last_ts));
	he = tm_uv_put(he, h->seq - p->last_seq);
	if (q->json)
		he = tm_uv_put(he, (uint64_t)INT64_MAX - (uint64_t)h->key);
	size_t hn = (size_t)(he - hb);
	size_t ln = (size_t)(tm_uv_put(lb, hn + len) - lb);
	p->last_ts = h->ts;
	p->last_seq = h->seq;
	size_t cap0 = p->tail.cap;
	TM_GROW(p->tail.data, p->tail.cap, p->tail.len + ln + hn + len);
	memcpy(p->tail.data + p->tail.len, lb, ln);
	memcpy(p->tail.data + p->tail.len + ln, hb, hn);
	if (len)
		memcpy(p->tail.data + p->tail.len + ln + hn, data, len);
	p->tail.len += ln + hn + len;
	o->mem += p->tail.cap - cap0;
	int wrote = 0;
	if (o->to_file && p->tail.len >= o->block) {
		flush_tail(o, p);
		wrote = 1;
	}
	if (o->mem > o->mem_max) {
		if (flush_all(o) != 0)
			return -1;
		wrote = 1;
	}
	/* the writer thread's failure, asked where bytes went to it: asking
	 * takes its lock, which every record took (a tenth of the proto
	 * timeline's scan went to the lock and the wake-ups around it); one
	 * found later is still reported, by tm_order_finish at the latest */
	int e = wrote ? tm_spool_failed(&o->file) : 0;
	if (e)
		return tm_err(&o->err, TM_EIO, "cannot write a temporary file: %s", strerror(e));
	return 0;
}

int tm_order_push(tm_order *o, uint32_t qi, int64_t ts, char phase, int64_t dur, const void *data,
		  uint32_t len, tm_error *err)
{
	if (o->failed) {
		*err = o->err;
		return -1;
	}
	if ((size_t)len + sizeof(ohdr) > UINT32_MAX - 4)
		return tm_err(err, TM_EINPUT, "an event of %u bytes is too large to sort", len);
	oqueue *q = queue_made(o, qi);
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
	ohdr h = {ts, o->seq++, q->json ? json_key(phase, dur) : INT64_MAX};
	if (store(o, q, &h, data, len) != 0) {
		o->failed = 1;
		*err = o->err;
		return -1;
	}
	return 0;
}

uint64_t tm_order_count(const tm_order *o)
{
	return o->seq;
}

/* ---- reading a pile ------------------------------------------------------------ */

/* The record at r (the varint of its length first; `have` bytes there)
 * into p->rec, p->rec_len, p->rec_step and p->hdr: 1; 0 when `have` does
 * not hold all of it, with *want set to what it needs (known once its
 * length is); -1 when it cannot be one (the file is ours, but a damaged
 * one must fail the read, not what comes after it). */
static int pile_decode(const oqueue *q, pile *p, const char *r, size_t have, size_t *want)
{
	const uint8_t *at = (const uint8_t *)r, *end = at + have;
	uint64_t n, dts, dseq, key = 0;
	const uint8_t *after = tm_uv_get(at, end, &n);
	if (!after) {
		if (have >= TM_UV_MAX)
			return -1;
		*want = have + 1;
		return 0;
	}
	at = after;
	size_t ln = (size_t)(at - (const uint8_t *)r);
	if (n < 2 || n > UINT32_MAX - ln)
		return -1;
	if (have < ln + n) {
		*want = ln + (size_t)n;
		return 0;
	}
	end = at + n;
	if (!(at = tm_uv_get(at, end, &dts)) || !(at = tm_uv_get(at, end, &dseq)) ||
	    (q->json && !(at = tm_uv_get(at, end, &key))))
		return -1;
	p->hdr.ts = (int64_t)((uint64_t)p->prev_ts + dts);
	p->hdr.seq = p->prev_seq + dseq;
	p->hdr.key = (int64_t)((uint64_t)INT64_MAX - key);
	p->rec = (const char *)at;
	p->rec_len = (uint32_t)(end - at);
	p->rec_step = (uint32_t)(ln + n);
	return 1;
}

/* Load the record at the pile's position into p->rec (NULL at its end). */
static int pile_load(tm_order *o, const oqueue *q, pile *p, tm_error *err)
{
	while (!p->in_tail) {
		if (p->i_ext >= p->n_ext) {
			p->in_tail = 1;
			break;
		}
		const extent *e = &p->ext[p->i_ext];
		uint64_t end = e->off + e->len;
		size_t have = p->len - p->pos;
		if (!have && p->at >= end) {
			p->i_ext++;
			p->at = p->i_ext < p->n_ext ? p->ext[p->i_ext].off : 0;
			p->pos = p->len = 0;
			continue;
		}
		size_t want = 0;
		int rc;
		while ((rc = pile_decode(q, p, p->buf + p->pos, have, &want)) == 0) {
			if (want > have + (end - p->at))
				return tm_err(err, TM_EIO, "a temporary file is damaged");
			if (p->pos) {
				memmove(p->buf, p->buf + p->pos, have);
				p->len = have;
				p->pos = 0;
			}
			if (want > p->cap) {
				p->buf = tm_xrealloc(p->buf, want);
				p->cap = want;
			} else if (p->cap > o->pile_buf && want <= o->pile_buf && have <= o->pile_buf) {
				/* back to its share once a record larger than it is read:
				 * kept, those made the readers of 500 proto files hold
				 * 12 MB at the pass's peak, 3 MB with this */
				p->buf = tm_xrealloc(p->buf, o->pile_buf);
				p->cap = o->pile_buf;
			}
			if (p->at >= end)
				return tm_err(err, TM_EIO, "a temporary file is cut short");
			size_t room = p->cap - p->len;
			if (room > end - p->at)
				room = (size_t)(end - p->at);
			ssize_t k = pread(o->file.fd, p->buf + p->len, room, (off_t)p->at);
			if (k < 0 && errno == EINTR)
				continue;
			if (k <= 0)
				return tm_err(err, TM_EIO, "cannot read a temporary file");
			tm_giveback_read(&o->gb, p->at, (uint64_t)k);
			p->len += (size_t)k;
			p->at += (uint64_t)k;
			have = p->len - p->pos;
		}
		if (rc < 0)
			return tm_err(err, TM_EIO, "a temporary file is damaged");
		return 1;
	}
	if (p->tail_pos >= p->tail.len) {
		p->rec = NULL;
		return 0;
	}
	size_t want;
	if (pile_decode(q, p, p->tail.data + p->tail_pos, p->tail.len - p->tail_pos, &want) != 1)
		return tm_err(err, TM_EIO, "a record of the sort is damaged");
	return 1;
}

static void pile_step(pile *p)
{
	if (p->in_tail)
		p->tail_pos += p->rec_step;
	else
		p->pos += p->rec_step;
	p->prev_ts = p->hdr.ts;
	p->prev_seq = p->hdr.seq;
}

/* ---- merging a queue's sources ------------------------------------------------- */

/* Source s's current record: its header, its bytes. */
static const char *src_rec(const oqueue *q, uint32_t s, ohdr *h, uint32_t *len)
{
	if (s < q->n_piles) {
		*h = q->piles[s].hdr;
		*len = q->piles[s].rec_len;
		return q->piles[s].rec;
	}
	*h = hdr_of(q->over_rec);
	*len = q->over_len - (uint32_t)sizeof(ohdr);
	return q->over_rec + sizeof(ohdr);
}

/* Move source s to its next record: 1, 0 at its end, -1 with err set. */
static int src_next(tm_order *o, oqueue *q, uint32_t s, int step, tm_error *err)
{
	if (s < q->n_piles) {
		if (step)
			pile_step(&q->piles[s]);
		return pile_load(o, q, &q->piles[s], err);
	}
	const void *rec;
	int rc = tm_xsort_next(q->over, &rec, &q->over_len, err);
	q->over_rec = rc == 1 ? rec : NULL;
	if (rc == 1 && q->over_len < sizeof(ohdr))
		return tm_err(err, TM_EIO, "a record of the sort is damaged");
	return rc;
}

static const ohdr *src_hdr(const oqueue *q, uint32_t s, ohdr *tmp)
{
	if (s < q->n_piles)
		return &q->piles[s].hdr;
	*tmp = hdr_of(q->over_rec);
	return tmp;
}

static int src_less(const oqueue *q, uint32_t a, uint32_t b)
{
	ohdr ta, tb;
	return ohdr_cmp(src_hdr(q, a, &ta), src_hdr(q, b, &tb)) < 0;
}

static void src_sift_down(oqueue *q, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i;
		if (l < q->n_src && src_less(q, q->src[l], q->src[m]))
			m = l;
		if (r < q->n_src && src_less(q, q->src[r], q->src[m]))
			m = r;
		if (m == i)
			return;
		uint32_t t = q->src[i];
		q->src[i] = q->src[m];
		q->src[m] = t;
		i = m;
	}
}

static int merge_start(tm_order *o, oqueue *q, tm_error *err)
{
	size_t n = q->n_piles + (q->over ? 1 : 0);
	q->src = tm_xcalloc(n ? n : 1, sizeof(*q->src));
	for (uint32_t s = 0; s < n; s++) {
		int rc = src_next(o, q, s, 0, err);
		if (rc < 0)
			return -1;
		if (rc)
			q->src[q->n_src++] = s;
	}
	for (size_t i = q->n_src; i-- > 0;)
		src_sift_down(q, i);
	return 0;
}

/* The queue's next record in (ts, push order) without consuming it: 1
 * with *h, *rec / *len (its bytes, valid until it is consumed and the next
 * peek), 0 at the queue's end, -1 with err set. */
static int merge_peek(tm_order *o, oqueue *q, ohdr *h, const char **rec, uint32_t *len, tm_error *err)
{
	if (q->src_pending) {
		q->src_pending = 0;
		int rc = src_next(o, q, q->src[0], 1, err);
		if (rc < 0)
			return -1;
		if (!rc)
			q->src[0] = q->src[--q->n_src];
		if (q->n_src)
			src_sift_down(q, 0);
	}
	if (!q->n_src)
		return 0;
	*rec = src_rec(q, q->src[0], h, len);
	return 1;
}

static void merge_consume(oqueue *q)
{
	q->src_pending = 1;
}

/* ---- the slow-sorting cursor ---------------------------------------------------- */

static int group_cmp(const void *a, const void *b)
{
	ohdr x = hdr_of(*(char *const *)a + 4), y = hdr_of(*(char *const *)b + 4);
	if (x.key != y.key)
		return x.key < y.key ? -1 : 1;
	return x.seq < y.seq ? -1 : x.seq > y.seq;
}

/* A group bigger than this is not kept for the next one. */
#define GROUP_KEEP (256u * 1024u)

static void group_clear(oqueue *q)
{
	q->n_group = q->i_group = 0;
	q->group_bytes.len = 0;
	if (q->group_bytes.cap > GROUP_KEEP)
		tm_buf_free(&q->group_bytes);
}

/* Does the slow-sorting tie rule apply at timestamp ts of queue q? */
static int reorders(const tm_order *o, const oqueue *q, int64_t ts)
{
	return o->slow && q->json && q->sort_start_idx != 0 && ts >= q->sort_min_ts;
}

/* Set q->head to the queue's next record in its final order (NULL at its
 * end). The previous head must have been consumed. */
static int cursor_next(tm_order *o, oqueue *q, tm_error *err)
{
	if (q->i_group < q->n_group) {
		char *c = q->group[q->i_group++];
		memcpy(&q->head_len, c, 4);
		q->hh = hdr_of(c + 4);
		q->head = c + 4 + sizeof(ohdr);
		q->head_from_src = 0;
		return 1;
	}
	group_clear(q);
	const char *rec;
	uint32_t len;
	ohdr h;
	int rc = merge_peek(o, q, &h, &rec, &len, err);
	if (rc <= 0) {
		q->head = NULL;
		return rc;
	}
	if (!reorders(o, q, h.ts)) {
		q->head = rec;
		q->head_len = len;
		q->hh = h;
		q->head_from_src = 1;
		return 1;
	}
	/* Copy out the run of this timestamp (each copy keeps the length of
	 * its bytes and its header in front, 8-aligned in one buffer: most
	 * runs of a JSON trace are one record, and a malloc each cost more
	 * than the rest of the merge), then order it by key. */
	int64_t ts = h.ts;
	tm_buf *gb = &q->group_bytes;
	do {
		TM_GROW(q->group, q->cap_group, q->n_group + 1);
		size_t at = (gb->len + 7) & ~(size_t)7;
		TM_GROW(gb->data, gb->cap, at + 4 + sizeof h + (size_t)len);
		memcpy(gb->data + at, &len, 4);
		memcpy(gb->data + at + 4, &h, sizeof h);
		if (len)
			memcpy(gb->data + at + 4 + sizeof h, rec, len);
		gb->len = at + 4 + sizeof h + (size_t)len;
		q->group[q->n_group++] = (char *)(uintptr_t)at; /* the buffer may move: an offset for now */
		merge_consume(q);
		rc = merge_peek(o, q, &h, &rec, &len, err);
		if (rc < 0) {
			group_clear(q); /* its entries are offsets yet */
			return -1;
		}
	} while (rc && h.ts == ts);
	for (size_t i = 0; i < q->n_group; i++)
		q->group[i] = gb->data + (uintptr_t)q->group[i];
	if (q->n_group > 1)
		qsort(q->group, q->n_group, sizeof(*q->group), group_cmp);
	q->i_group = 0;
	return cursor_next(o, q, err);
}

/* Consume the current head. */
static int cursor_advance(tm_order *o, oqueue *q, tm_error *err)
{
	if (q->head && q->head_from_src)
		merge_consume(q);
	return cursor_next(o, q, err);
}

/* ---- draining the queues together ------------------------------------------------ */

/* By time, then by queue: the queue made first goes first. */
static int heap_less(const oheap_ent *a, const oheap_ent *b)
{
	if (a->ts != b->ts)
		return a->ts < b->ts;
	return a->q < b->q;
}

static void heap_sift_down(tm_order *o, size_t i)
{
	oheap_ent *h = o->heap;
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i;
		if (l < o->n_heap && heap_less(&h[l], &h[m]))
			m = l;
		if (r < o->n_heap && heap_less(&h[r], &h[m]))
			m = r;
		if (m == i)
			return;
		oheap_ent t = h[i];
		h[i] = h[m];
		h[m] = t;
		i = m;
	}
}

static void heap_push(tm_order *o, uint32_t qi)
{
	oheap_ent *h = o->heap;
	size_t i = o->n_heap++;
	h[i].ts = o->q[qi].q->hh.ts;
	h[i].q = qi;
	while (i) {
		size_t p = (i - 1) / 2;
		if (!heap_less(&h[i], &h[p]))
			break;
		oheap_ent t = h[i];
		h[i] = h[p];
		h[p] = t;
		i = p;
	}
}

static uint32_t heap_pop(tm_order *o)
{
	uint32_t top = o->heap[0].q;
	o->heap[0] = o->heap[--o->n_heap];
	if (o->n_heap)
		heap_sift_down(o, 0);
	return top;
}

int tm_order_finish(tm_order *o, tm_error *err)
{
	if (o->failed) {
		*err = o->err;
		return -1;
	}
	if (o->to_file) {
		/* the tails stay in memory; the file is read from here on */
		if (tm_spool_finish(&o->file, NULL, err) != 0)
			return -1;
		tm_giveback_start(&o->gb, o->file.fd, o->file.size);
	}
	/* pile readers: a buffer each, sharing what the tails (which stay)
	 * leave of the budget, an eighth of it at least, so that the store
	 * holds about mem_max while it is read as while it was filled */
	size_t n_piles = 0, made = 0;
	for (size_t i = 0; i < o->n_q; i++) {
		n_piles += o->q[i].q ? o->q[i].q->n_piles : 0;
		made += o->q[i].q != NULL;
	}
	size_t left = o->mem < o->mem_max ? o->mem_max - o->mem : 0;
	if (left < o->mem_max / 8)
		left = o->mem_max / 8;
	size_t per = n_piles ? left / n_piles : CURSOR_BUF;
	if (per > CURSOR_BUF)
		per = CURSOR_BUF;
	if (per < 256)
		per = 256;
	o->pile_buf = per;
	o->heap = tm_xcalloc(made ? made : 1, sizeof(*o->heap));
	for (size_t i = 0; i < o->n_q; i++) {
		oqueue *q = o->q[i].q;
		if (!q)
			continue;
		for (size_t k = 0; k < q->n_piles; k++) {
			pile *p = &q->piles[k];
			uint64_t in_file = 0;
			for (size_t e = 0; e < p->n_ext; e++)
				in_file += p->ext[e].len;
			if (in_file) {
				p->cap = in_file < per ? (size_t)in_file : per;
				p->buf = tm_xmalloc(p->cap);
				p->at = p->ext[0].off;
			}
		}
		if (q->over && tm_xsort_finish(q->over, err) != 0)
			return -1;
		if (merge_start(o, q, err) != 0)
			return -1;
		int rc = cursor_next(o, q, err);
		if (rc < 0)
			return -1;
		if (rc)
			heap_push(o, (uint32_t)i);
	}
	o->finished = 1;
	return 0;
}

int tm_order_next(tm_order *o, tm_order_rec *out, tm_error *err)
{
	if (!o->finished)
		return tm_err(err, TM_EIO, "tm_order_next before tm_order_finish");
	if (o->pending) {
		o->pending = 0;
		oqueue *q = o->q[o->cur].q;
		if (cursor_advance(o, q, err) < 0)
			return -1;
	}
	/* TraceSorter::SortAndExtractEventsUntilAllocId */
	if (o->cur >= 0) {
		oqueue *q = o->q[o->cur].q;
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
		o->limit = o->n_heap ? o->heap[0].ts : INT64_MAX;
	}
	oqueue *q = o->q[o->cur].q;
	out->queue = (uint32_t)o->cur;
	out->ts = q->hh.ts;
	out->seq = q->hh.seq;
	out->data = q->head;
	out->len = q->head_len;
	o->pending = 1;
	return 1;
}

void tm_order_free(tm_order *o)
{
	if (!o)
		return;
	for (size_t i = 0; i < o->n_q; i++) {
		oqueue *q = o->q[i].q;
		if (!q)
			continue;
		for (size_t k = 0; k < q->n_piles; k++) {
			free(q->piles[k].ext);
			tm_buf_free(&q->piles[k].tail);
			free(q->piles[k].buf);
		}
		free(q->piles);
		tm_xsort_free(q->over);
		free(q->src);
		tm_buf_free(&q->group_bytes);
		free(q->group);
		free(q);
	}
	free(o->q);
	tm_giveback_free(&o->gb);
	tm_spool_close(&o->file);
	free(o->heap);
	free(o);
}
