/* core/sort/spool.c - write-once temporary files.
 *
 * Full buffers are written by a writer thread, not by the pass that fills
 * them: the copy into the page cache is a fifth of timeline.tsv's time and
 * a tenth of merged.pftrace's (perf, issue 10), and on the machine's other
 * core it overlaps the pass. One thread with one FIFO queue keeps every
 * file's bytes in order. The thread runs while a spool is open (it starts
 * with the first and ends with the last), so a daemon never has it before
 * its fork. Memory: each open spool's buffer plus at most MAX_INFLIGHT
 * buffers queued. Where the thread cannot be started, writes are made in
 * place as before. */
#include "sort/spool.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SPOOL_BUF (64u * 1024u)
#define MAX_INFLIGHT 32u
#define MAX_FREE 16u
#define WAKE_BATCH 8u

/* A spool's writes in the queue: how many, and the first failure. */
struct tm_spool_io {
	size_t pending;
	int failed;
};

typedef struct wjob {
	struct wjob *next;
	struct tm_spool_io *io;
	int fd;
	char *buf;
	size_t len;
} wjob;

static struct {
	pthread_mutex_t mu;
	pthread_cond_t work;  /* a job was queued, or the last spool closed */
	pthread_cond_t done;  /* a job was written */
	wjob *head, *tail;
	size_t n_queued;
	char *free_bufs[MAX_FREE];
	size_t n_free;
	size_t n_open;        /* open spools */
	int running;
	int idle;             /* the writer waits for work */
} W = {.mu = PTHREAD_MUTEX_INITIALIZER, .work = PTHREAD_COND_INITIALIZER, .done = PTHREAD_COND_INITIALIZER};

/* write(2) all of it; 0 or the errno. */
static int write_all(int fd, const char *p, size_t len)
{
	size_t off = 0;
	while (off < len) {
		ssize_t n = write(fd, p + off, len - off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 && errno ? errno : EIO;
		off += (size_t)n;
	}
	return 0;
}

/* Under W.mu: keep a written buffer for reuse, or give it back. */
static void recycle(char *buf)
{
	if (W.n_free < MAX_FREE)
		W.free_bufs[W.n_free++] = buf;
	else
		free(buf);
}

static void *writer(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&W.mu);
	for (;;) {
		while (!W.head && W.n_open) {
			W.idle = 1;
			pthread_cond_wait(&W.work, &W.mu);
			W.idle = 0;
		}
		if (!W.head)
			break;
		wjob *j = W.head;
		W.head = j->next;
		if (!W.head)
			W.tail = NULL;
		pthread_mutex_unlock(&W.mu);
		int e = j->io->failed ? 0 : write_all(j->fd, j->buf, j->len);
		pthread_mutex_lock(&W.mu);
		if (e && !j->io->failed)
			j->io->failed = e;
		j->io->pending--;
		W.n_queued--;
		recycle(j->buf);
		free(j);
		pthread_cond_broadcast(&W.done);
	}
	while (W.n_free)
		free(W.free_bufs[--W.n_free]);
	W.running = 0;
	pthread_mutex_unlock(&W.mu);
	return NULL;
}

/* s->fd is set: the buffer, and the writer thread for it. */
static void spool_start(tm_spool *s)
{
	s->buf = tm_xmalloc(SPOOL_BUF);
	s->io = tm_xcalloc(1, sizeof(*s->io));
	pthread_mutex_lock(&W.mu);
	W.n_open++;
	if (!W.running) {
		pthread_t t;
		pthread_attr_t a;
		pthread_attr_init(&a);
		pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
		W.running = pthread_create(&t, &a, writer, NULL) == 0;
		/* detached, but it waits for W.mu, held here, before it can end */
		if (W.running)
			pthread_setname_np(t, "tm-spool");
		pthread_attr_destroy(&a);
	}
	pthread_mutex_unlock(&W.mu);
}

int tm_spool_open(tm_spool *s, tm_error *err)
{
	memset(s, 0, sizeof(*s));
	const char *dir = getenv("TMPDIR");
	char path[4096];
	snprintf(path, sizeof path, "%s/tracemount.XXXXXX", dir && *dir ? dir : "/tmp");
	s->fd = mkstemp(path);
	if (s->fd < 0)
		return tm_err(err, TM_EIO, "%s: cannot create a temporary file: %s", path, strerror(errno));
	unlink(path);
	spool_start(s);
	return 0;
}

void tm_spool_open_fd(tm_spool *s, int fd)
{
	memset(s, 0, sizeof(*s));
	s->fd = fd;
	s->borrowed = 1;
	spool_start(s);
}

/* Hand the buffer to the writer; with `refill`, take an empty one. */
static void flush(tm_spool *s, int refill)
{
	if (!s->len)
		return;
	pthread_mutex_lock(&W.mu);
	if (!W.running) { /* no thread: write in place */
		pthread_mutex_unlock(&W.mu);
		int e = s->failed ? 0 : write_all(s->fd, s->buf, s->len);
		if (e)
			s->failed = e;
		s->len = 0;
		return;
	}
	while (W.n_queued >= MAX_INFLIGHT) {
		pthread_cond_signal(&W.work);
		pthread_cond_wait(&W.done, &W.mu);
	}
	wjob *j = tm_xmalloc(sizeof(*j));
	*j = (wjob){NULL, s->io, s->fd, s->buf, s->len};
	if (W.tail)
		W.tail->next = j;
	else
		W.head = j;
	W.tail = j;
	W.n_queued++;
	s->io->pending++;
	s->buf = NULL;
	if (refill && W.n_free)
		s->buf = W.free_bufs[--W.n_free];
	/* waking the writer is a system call: wake it for a batch, or for
	 * the last buffer of a file someone is about to wait for */
	if (W.idle && (W.n_queued >= WAKE_BATCH || !refill))
		pthread_cond_signal(&W.work);
	pthread_mutex_unlock(&W.mu);
	if (refill && !s->buf)
		s->buf = tm_xmalloc(SPOOL_BUF);
	s->len = 0;
}

/* Wait until the writer has written everything of s; its failure, if
 * any, becomes s's. */
static void drain(tm_spool *s)
{
	if (!s->io)
		return;
	pthread_mutex_lock(&W.mu);
	if (s->io->pending)
		pthread_cond_signal(&W.work);
	while (s->io->pending)
		pthread_cond_wait(&W.done, &W.mu);
	if (s->io->failed && !s->failed)
		s->failed = s->io->failed;
	pthread_mutex_unlock(&W.mu);
}

void tm_spool_put(tm_spool *s, const void *p, size_t n)
{
	s->size += n;
	while (n) {
		size_t k = SPOOL_BUF - s->len < n ? SPOOL_BUF - s->len : n;
		memcpy(s->buf + s->len, p, k);
		s->len += k;
		p = (const char *)p + k;
		n -= k;
		if (s->len == SPOOL_BUF)
			flush(s, 1);
	}
}

int tm_spool_failed(const tm_spool *s)
{
	if (s->failed || !s->io)
		return s->failed;
	pthread_mutex_lock(&W.mu);
	int e = s->io->failed;
	pthread_mutex_unlock(&W.mu);
	return e;
}

int tm_spool_finish(tm_spool *s, const char *what, tm_error *err)
{
	if (s->buf) {
		flush(s, 0);
		free(s->buf);
		s->buf = NULL;
	}
	drain(s);
	if (s->failed && s->borrowed) /* what the reader of the bytes sees: no file of ours */
		return tm_err(err, TM_EIO, "write error: %s", strerror(s->failed));
	if (s->failed && !what)
		return tm_err(err, TM_EIO, "cannot write a temporary file: %s", strerror(s->failed));
	if (s->failed)
		return tm_err(err, TM_EIO, "%s: cannot write a temporary file: %s", what, strerror(s->failed));
	return 0;
}

/* ---- giving space back ------------------------------------------------- */

void tm_giveback_start(tm_giveback *g, int fd, uint64_t size)
{
	memset(g, 0, sizeof(*g));
	g->fd = -1;
	if (fd < 0 || size <= TM_GIVEBACK_SLAB) /* a slab or less: nothing worth it */
		return;
	if ((size - 1) / TM_GIVEBACK_SLAB > UINT32_MAX) /* 64 TiB: past what `ready` counts */
		return;
	g->fd = fd;
	g->size = size;
	g->n = (size_t)((size + TM_GIVEBACK_SLAB - 1) / TM_GIVEBACK_SLAB);
	g->left = tm_xmalloc(g->n * sizeof(*g->left));
	for (size_t i = 0; i < g->n; i++)
		g->left[i] = TM_GIVEBACK_SLAB;
	if (size % TM_GIVEBACK_SLAB)
		g->left[g->n - 1] = (uint32_t)(size % TM_GIVEBACK_SLAB);
}

static int slab_cmp(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return x < y ? -1 : x > y;
}

void tm_giveback_flush(tm_giveback *g)
{
	if (g->fd < 0 || !g->n_ready)
		return;
	qsort(g->ready, g->n_ready, sizeof g->ready[0], slab_cmp);
	for (size_t i = 0, j; i < g->n_ready; i = j) {
		for (j = i + 1; j < g->n_ready && g->ready[j] == g->ready[j - 1] + 1; j++)
			;
		if (fallocate(g->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)g->ready[i] * TM_GIVEBACK_SLAB,
			      (off_t)(j - i) * TM_GIVEBACK_SLAB) != 0 &&
		    errno != EINTR) {
			tm_giveback_free(g); /* no holes here (EOPNOTSUPP...): keep it all */
			return;
		}
	}
	g->n_ready = 0;
}

void tm_giveback_read(tm_giveback *g, uint64_t off, uint64_t len)
{
	if (g->fd < 0 || off >= g->size)
		return;
	if (len > g->size - off)
		len = g->size - off;
	while (len) {
		size_t i = (size_t)(off / TM_GIVEBACK_SLAB);
		uint64_t in_slab = TM_GIVEBACK_SLAB - off % TM_GIVEBACK_SLAB;
		uint32_t k = (uint32_t)(len < in_slab ? len : in_slab);
		if (k > g->left[i]) { /* read twice: the count is wrong, punch no more */
			tm_giveback_free(g);
			return;
		}
		g->left[i] -= k;
		if (!g->left[i]) {
			g->ready[g->n_ready++] = (uint32_t)i;
			if (g->n_ready == TM_GIVEBACK_BATCH) {
				tm_giveback_flush(g);
				if (g->fd < 0)
					return;
			}
		}
		off += k;
		len -= k;
	}
}

void tm_giveback_free(tm_giveback *g)
{
	free(g->left);
	g->left = NULL;
	g->n = 0;
	g->n_ready = 0;
	g->fd = -1;
}

/* The letter after the backslash that stands for byte c in a field, or 0
 * when c stands for itself (a table: one load a byte). */
static const char ESCAPE_OF[256] = {['\\'] = '\\', ['\t'] = 't', ['\n'] = 'n', ['\r'] = 'r', [0] = '0'};

static inline char field_escape(char c)
{
	return ESCAPE_OF[(unsigned char)c];
}

/* The first byte of f[i..n) that field_escape changes, or n. Eight bytes
 * at a time: a word with no byte below 0x0e (NUL, tab, newline and
 * carriage return are) and no backslash is passed by whole; only a word
 * with one is looked at byte by byte. Byte by byte throughout, escaping
 * was a tenth of the proto timeline's model thread (callgrind). */
static inline size_t next_escaped(const char *f, size_t i, size_t n)
{
	const uint64_t ones = 0x0101010101010101ull, highs = 0x8080808080808080ull;
	const uint64_t slashes = ones * '\\';
	for (; n - i >= 8; i += 8) {
		uint64_t w;
		memcpy(&w, f + i, sizeof w);
		uint64_t x = w ^ slashes;
		/* some byte below 0x0e, or some byte equal to the backslash
		 * (exact as to whether there is one, whatever the order) */
		if ((((w - ones * 0x0e) & ~w) | ((x - ones) & ~x)) & highs) {
			for (size_t k = i; k < i + 8; k++)
				if (field_escape(f[k]))
					return k;
		}
	}
	for (; i < n; i++)
		if (field_escape(f[i]))
			return i;
	return n;
}

/* f with field_escape applied, in pieces through put. */
static void put_escaped(void (*put)(void *to, const void *p, size_t n), void *to, const char *f, size_t n)
{
	size_t start = 0;
	for (size_t i; (i = next_escaped(f, start, n)) < n; start = i + 1) {
		put(to, f + start, i - start);
		char esc[2] = {'\\', field_escape(f[i])};
		put(to, esc, 2);
	}
	put(to, f + start, n - start);
}

static void to_spool(void *to, const void *p, size_t n)
{
	tm_spool_put(to, p, n);
}

static void to_buf(void *to, const void *p, size_t n)
{
	tm_buf_put(to, p, n);
}

void tm_spool_put_field(tm_spool *s, const char *f, size_t n)
{
	put_escaped(to_spool, s, f, n);
}

void tm_buf_put_field(tm_buf *b, const char *f, size_t n)
{
	if (next_escaped(f, 0, n) == n) /* most fields: nothing to escape */
		tm_buf_put(b, f, n);
	else
		put_escaped(to_buf, b, f, n);
}

size_t tm_field_len(const char *f, size_t n)
{
	size_t len = n;
	for (size_t i = 0; (i = next_escaped(f, i, n)) < n; i++)
		len++; /* a byte becomes two */
	return len;
}

void tm_spool_close(tm_spool *s)
{
	free(s->buf);
	s->buf = NULL;
	if (s->io) {
		drain(s);
		free(s->io);
		s->io = NULL;
		pthread_mutex_lock(&W.mu);
		if (!--W.n_open)
			pthread_cond_signal(&W.work);
		pthread_mutex_unlock(&W.mu);
	}
	if (s->fd >= 0 && !s->borrowed)
		close(s->fd);
	s->fd = -1;
}

/* ---- many streams in one file ------------------------------------------------- */

#define TM_PART_BUF (32u * 1024u)
#define TM_PART_MIN 256u
#define TM_PARTS_HELD (2u * 1024u * 1024u)
#define TM_PART_REF_MIN 4096u
#define TM_PART_LIST_MAX 2048u /* a list's bytes: its extent is flushed then */
#define TM_PART_LIST_MIN 16u   /* a shorter put is copied */

int tm_parts_open(tm_parts *ps, size_t n, tm_error *err)
{
	memset(ps, 0, sizeof(*ps));
	ps->file.fd = -1;
	if (!n)
		return 0;
	if (tm_spool_open(&ps->file, err))
		return -1;
	ps->p = tm_xcalloc(n, sizeof(*ps->p));
	ps->n = n;
	return 0;
}

/* Stream i's buffer to the file, as an extent (joined to the last one
 * when it follows it there). */
static void part_flush(tm_parts *ps, tm_part *pt)
{
	if (!pt->len)
		return;
	uint64_t at = ps->file.size;
	tm_spool_put(&ps->file, pt->buf, pt->len);
	tm_ext *last = pt->n_ext ? &pt->ext[pt->n_ext - 1] : NULL;
	if (last && !last->whole && last->at + last->len == at) {
		last->len += pt->len;
	} else {
		TM_GROW(pt->ext, pt->cap_ext, pt->n_ext + 1);
		pt->ext[pt->n_ext++] = (tm_ext){pt->size - pt->len, at, pt->len, TM_EXT_OWN, 0};
	}
	pt->len = 0;
}

/* Stream i's list to the file, as a TM_EXT_LIST extent. */
static void list_flush(tm_parts *ps, tm_part *pt)
{
	if (!pt->list.len)
		return;
	TM_GROW(pt->ext, pt->cap_ext, pt->n_ext + 1);
	pt->ext[pt->n_ext++] = (tm_ext){pt->list_off, ps->file.size, pt->list_len, TM_EXT_LIST, (uint32_t)pt->list.len};
	tm_spool_put(&ps->file, pt->list.data, pt->list.len);
	pt->list.len = 0;
	pt->list_len = pt->list_end = 0;
}

/* n bytes at `at` of the other file onto stream i's list. */
static void list_put(tm_parts *ps, tm_part *pt, uint64_t at, size_t n)
{
	part_flush(ps, pt); /* the buffer's bytes come first */
	uint8_t e[2 * TM_UV_MAX];
	if (!pt->list.len)
		pt->list_off = pt->size;
	uint8_t *q = tm_uv_put(e, at - pt->list_end); /* list_end is 0 for the first */
	q = tm_uv_put(q, n);
	size_t cap0 = pt->list.cap;
	tm_buf_put(&pt->list, e, (size_t)(q - e));
	ps->held += pt->list.cap - cap0;
	pt->list_len += n;
	pt->list_end = at + n;
	pt->size += n;
	if (pt->list.len >= TM_PART_LIST_MAX)
		list_flush(ps, pt);
}

/* Every buffer to the file and freed: the streams hold too much. */
static void parts_release(tm_parts *ps)
{
	for (size_t i = 0; i < ps->n; i++) {
		tm_part *pt = &ps->p[i];
		list_flush(ps, pt);
		tm_buf_free(&pt->list);
		part_flush(ps, pt);
		free(pt->buf);
		pt->buf = NULL;
		pt->cap = 0;
	}
	ps->held = 0;
}

void tm_parts_put(tm_parts *ps, size_t i, const void *p, size_t n)
{
	tm_part *pt = &ps->p[i];
	if (n)
		list_flush(ps, pt); /* the list's bytes come first */
	while (n) {
		if (pt->len == pt->cap) {
			if (pt->cap == TM_PART_BUF) {
				part_flush(ps, pt);
			} else {
				size_t cap = pt->cap ? pt->cap * 2 : TM_PART_MIN;
				while (cap < TM_PART_BUF && cap - pt->len < n)
					cap *= 2;
				if (cap > TM_PART_BUF)
					cap = TM_PART_BUF;
				if (ps->held + (cap - pt->cap) > TM_PARTS_HELD) {
					parts_release(ps);
					continue;
				}
				pt->buf = tm_xrealloc(pt->buf, cap);
				ps->held += cap - pt->cap;
				pt->cap = cap;
			}
		}
		size_t k = pt->cap - pt->len < n ? pt->cap - pt->len : n;
		memcpy(pt->buf + pt->len, p, k);
		pt->len += k;
		pt->size += k;
		p = (const char *)p + k;
		n -= k;
	}
}

void tm_parts_put_ref(tm_parts *ps, size_t i, uint64_t at, const void *p, size_t n)
{
	tm_part *pt = &ps->p[i];
	int follows = pt->ref_end && pt->ref_end == at;
	pt->ref_end = at + n;
	if (!n)
		return;
	tm_ext *last = pt->n_ext ? &pt->ext[pt->n_ext - 1] : NULL;
	if (follows && last && last->whole == TM_EXT_WHOLE && last->off + last->len == pt->size && last->at + last->len == at) {
		last->len += n; /* the stream's tail grows */
		pt->size += n;
		return;
	}
	/* a run (this put follows the last, or is long by itself), and room
	 * for the buffer's extent and this one */
	if ((follows || n >= TM_PART_REF_MIN) && (pt->n_ext + 2) * (uint64_t)TM_PART_REF_MIN <= pt->size + n) {
		list_flush(ps, pt);
		part_flush(ps, pt);
		TM_GROW(pt->ext, pt->cap_ext, pt->n_ext + 1);
		pt->ext[pt->n_ext++] = (tm_ext){pt->size, at, n, TM_EXT_WHOLE, 0};
		pt->size += n;
		return;
	}
	if (n >= TM_PART_LIST_MIN || pt->list.len) {
		list_put(ps, pt, at, n);
		return;
	}
	tm_parts_put(ps, i, p, n);
}

void tm_parts_put_head(tm_parts *ps, size_t i, const void *p, size_t n)
{
	tm_part *pt = &ps->p[i];
	if (!n)
		return;
	uint64_t at = ps->file.size;
	tm_spool_put(&ps->file, p, n);
	tm_ext *last = pt->head_ext ? &pt->ext[pt->head_ext - 1] : NULL;
	if (last && last->off + last->len == pt->head && last->at + last->len == at) {
		last->len += n;
	} else {
		TM_GROW(pt->ext, pt->cap_ext, pt->n_ext + 1);
		memmove(pt->ext + pt->head_ext + 1, pt->ext + pt->head_ext,
			(pt->n_ext - pt->head_ext) * sizeof(*pt->ext));
		pt->ext[pt->head_ext++] = (tm_ext){pt->head, at, n, TM_EXT_OWN, 0};
		pt->n_ext++;
	}
	/* what was put before moves along (the buffer's bytes with size) */
	for (size_t k = pt->head_ext; k < pt->n_ext; k++)
		pt->ext[k].off += n;
	if (pt->list.len)
		pt->list_off += n;
	pt->head += n;
	pt->size += n;
}

int tm_parts_finish(tm_parts *ps, const char *what, tm_error *err)
{
	if (!ps->n)
		return 0;
	parts_release(ps);
	return tm_spool_finish(&ps->file, what, err);
}

void tm_parts_close(tm_parts *ps)
{
	for (size_t i = 0; i < ps->n; i++) {
		free(ps->p[i].buf);
		free(ps->p[i].ext);
		tm_buf_free(&ps->p[i].list);
	}
	free(ps->p);
	ps->p = NULL;
	ps->n = 0;
	ps->held = 0;
	tm_spool_close(&ps->file);
}

ssize_t tm_pread_full(int fd, void *buf, size_t n, uint64_t off)
{
	size_t got = 0;
	while (got < n) {
		ssize_t r = pread(fd, (char *)buf + got, n - got, (off_t)(off + got));
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -1;
		if (r == 0)
			break;
		got += (size_t)r;
	}
	return (ssize_t)got;
}

size_t tm_ext_find(const tm_ext *ext, size_t n_ext, uint64_t off)
{
	size_t lo = 0, hi = n_ext;
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;
		if (ext[mid].off <= off)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

/* Up to n bytes from `in` on of list extent e (its list in fd, its bytes
 * in whole_fd): what tm_ext_pread reads of one extent. */
static ssize_t list_pread(int fd, int whole_fd, const tm_ext *e, char *buf, size_t n, uint64_t in)
{
	uint8_t stack[TM_PART_LIST_MAX + 32];
	uint8_t *l = e->enc <= sizeof stack ? stack : malloc(e->enc);
	if (!l)
		return -1;
	ssize_t r = tm_pread_full(fd, l, e->enc, e->at), got = 0;
	const uint8_t *p = l, *end = l + (r > 0 ? (size_t)r : 0);
	/* the place (from 0: the first gap is its offset), and where it
	 * starts in the extent */
	uint64_t at = 0, len = 0, pos = 0;
	while (r >= 0 && (size_t)got < n) {
		uint64_t gap;
		if (p == end || !(p = tm_uv_get(p, end, &gap)) || !(p = tm_uv_get(p, end, &len))) {
			errno = EIO; /* a list shorter than its extent */
			r = -1;
			break;
		}
		at += gap;
		if (in < pos + len) {
			uint64_t skip = in > pos ? in - pos : 0;
			size_t want = len - skip < n - (size_t)got ? (size_t)(len - skip) : n - (size_t)got;
			ssize_t k = tm_pread_full(whole_fd, buf + got, want, at + skip);
			if (k < 0) {
				r = -1;
				break;
			}
			got += k;
			if ((size_t)k < want)
				break; /* the file is shorter than the list says */
		}
		pos += len;
		at += len;
	}
	if (l != stack)
		free(l);
	return r < 0 ? -1 : got;
}

ssize_t tm_ext_pread(int fd, int whole_fd, const tm_ext *ext, size_t n_ext, void *buf, size_t n, uint64_t off)
{
	size_t got = 0;
	for (size_t i = tm_ext_find(ext, n_ext, off); i < n_ext && got < n; i++) {
		const tm_ext *e = &ext[i];
		if (off + got < e->off || off + got >= e->off + e->len)
			continue;
		uint64_t in = off + got - e->off;
		size_t want = e->len - in < n - got ? (size_t)(e->len - in) : n - got;
		ssize_t r = e->whole == TM_EXT_LIST ? list_pread(fd, whole_fd, e, (char *)buf + got, want, in)
						    : tm_pread_full(e->whole ? whole_fd : fd, (char *)buf + got, want, e->at + in);
		if (r < 0)
			return -1;
		got += (size_t)r;
		if ((size_t)r < want)
			break; /* the file is shorter than its extents say */
	}
	return (ssize_t)got;
}

tm_spooled *tm_spooled_take(tm_spool *whole, tm_parts *mach)
{
	tm_spooled *s = tm_xcalloc(1, sizeof(*s));
	s->fd = s->head_fd = -1;
	if (whole) {
		s->fd = whole->borrowed ? -1 : whole->fd;
		s->streamed = whole->borrowed;
		s->size = whole->size;
		whole->fd = -1;
	}
	s->mach_fd = mach->file.fd;
	mach->file.fd = -1;
	s->mach = mach->p;
	s->n_mach = mach->n;
	mach->p = NULL;
	mach->n = 0;
	return s;
}

ssize_t tm_spooled_pread(const tm_spooled *s, size_t row, void *buf, size_t n, uint64_t off)
{
	if (s->src.read) {
		tm_error err;
		ssize_t r = s->src.read(s->src.ctx, row, buf, n, off, &err);
		if (r < 0)
			errno = EIO;
		return r;
	}
	if (row == TM_SPOOLED_ALL) {
		uint64_t size = s->size;
		if (s->fd < 0 || off >= size)
			return 0;
		if (s->n_all_ext)
			return tm_ext_pread(s->head_fd, s->fd, s->all_ext, s->n_all_ext, buf, n, off);
		return tm_pread_full(s->fd, buf, size - off < n ? (size_t)(size - off) : n, off);
	}
	if (row >= s->n_mach)
		return 0;
	const tm_part *pt = &s->mach[row];
	return tm_ext_pread(s->mach_fd, s->fd, pt->ext, pt->n_ext, buf, n, off);
}

ssize_t tm_spooled_read(const tm_spooled *s, size_t row, void *buf, size_t n, uint64_t off, tm_error *err)
{
	if (s->src.read)
		return s->src.read(s->src.ctx, row, buf, n, off, err);
	ssize_t r = tm_spooled_pread(s, row, buf, n, off);
	if (r < 0)
		tm_err(err, TM_EIO, "cannot read a temporary file: %s", strerror(errno));
	return r;
}

int tm_spooled_has(const tm_spooled *s, size_t row)
{
	if (row == TM_SPOOLED_ALL)
		return s->fd >= 0 || s->src.read != NULL;
	return row < s->n_mach && (s->mach_fd >= 0 || s->src.read != NULL);
}

uint64_t tm_spooled_size(const tm_spooled *s, size_t row)
{
	if (row == TM_SPOOLED_ALL)
		return s->size;
	return row < s->n_mach ? s->mach[row].size : 0;
}

void tm_spooled_free(tm_spooled *s)
{
	if (!s)
		return;
	if (s->fd >= 0)
		close(s->fd);
	if (s->head_fd >= 0)
		close(s->head_fd);
	if (s->mach_fd >= 0)
		close(s->mach_fd);
	for (size_t i = 0; i < s->n_mach; i++) {
		free(s->mach[i].buf);
		free(s->mach[i].ext);
	}
	free(s->mach);
	if (s->src.free)
		s->src.free(s->src.ctx);
	free(s);
}

/* ---- views ------------------------------------------------------------------- */

void tm_views_open_fd(tm_views *v, int fd)
{
	memset(v, 0, sizeof(*v));
	v->mach.file.fd = v->head.fd = -1;
	tm_spool_open_fd(&v->all, fd);
}

int tm_views_open(tm_views *v, size_t n_mach, tm_error *err)
{
	memset(v, 0, sizeof(*v));
	v->all.fd = v->mach.file.fd = v->head.fd = -1;
	v->n_mach = n_mach;
	v->shared = n_mach == 1;
	if (tm_spool_open(&v->all, err) || (!v->shared && tm_parts_open(&v->mach, n_mach, err))) {
		tm_views_close(v);
		return -1;
	}
	return 0;
}

/* The bytes of `from` so far to machine stream 0: at its end, or with
 * `head` at its front (tm_parts_put_head). */
static void copy_to_stream(tm_views *v, tm_spool *from, int head)
{
	if (from->fd < 0)
		return;
	if (from->buf)
		flush(from, 1);
	drain(from);
	char *buf = tm_xmalloc(SPOOL_BUF);
	for (uint64_t off = 0; off < from->size;) {
		size_t want = from->size - off < SPOOL_BUF ? (size_t)(from->size - off) : SPOOL_BUF;
		ssize_t k = tm_pread_full(from->fd, buf, want, off);
		if (k <= 0) {
			v->mach.file.failed = k < 0 && errno ? errno : EIO;
			break;
		}
		if (head)
			tm_parts_put_head(&v->mach, 0, buf, (size_t)k);
		else
			tm_parts_put(&v->mach, 0, buf, (size_t)k);
		off += (uint64_t)k;
	}
	free(buf);
}

/* The machine's view becomes a stream of its own: the whole one's bytes
 * so far copied into it (and its header so far, when given last). */
static void split_views(tm_views *v)
{
	v->shared = 0;
	if (tm_parts_open(&v->mach, 1, &v->err))
		return;
	copy_to_stream(v, &v->all, 0);
	copy_to_stream(v, &v->head, 1);
}

/* n bytes to the front of the whole view (tm_views_head). */
static void head_put(tm_views *v, const void *p, size_t n)
{
	if (!n || v->err.code != TM_OK)
		return;
	if (v->head.fd < 0 && tm_spool_open(&v->head, &v->err))
		return;
	tm_spool_put(&v->head, p, n);
}

/* The pending run to its machine's stream, before anything else reaches
 * the streams or all's buffer is written out. */
static void end_run(tm_views *v)
{
	if (!v->run_len)
		return;
	const char *p = v->all.buf + (v->run_at - (v->all.size - v->all.len));
	tm_parts_put_ref(&v->mach, v->run_row, v->run_at, p, v->run_len);
	v->run_len = 0;
}

void tm_views_head(tm_views *v)
{
	end_run(v);
	v->heading = 1;
}

void tm_views_head_end(tm_views *v)
{
	v->heading = 0;
}

/* Whether puts of `row` also reach a machine's stream of their own. */
static int tracks(const tm_views *v, uint32_t row)
{
	return row < v->n_mach && !v->shared && v->mach.n;
}

void *tm_views_reserve(tm_views *v, uint32_t row, size_t n)
{
	if (v->shared && row != 0)
		split_views(v);
	if (n >= SPOOL_BUF)
		return NULL;
	if (n >= SPOOL_BUF - v->all.len) {
		end_run(v);
		flush(&v->all, 1);
	}
	return v->all.buf + v->all.len;
}

void tm_views_commit(tm_views *v, uint32_t row, size_t n)
{
	uint64_t at = v->all.size;
	v->all.len += n;
	v->all.size += n;
	if (!tracks(v, row)) {
		end_run(v); /* the run no longer ends where the file does */
		return;
	}
	if (v->run_len && (row != v->run_row || v->run_at + v->run_len != at))
		end_run(v);
	if (!v->run_len) {
		v->run_row = row;
		v->run_at = at;
	}
	v->run_len += n;
}

void tm_views_put(tm_views *v, uint32_t row, const void *p, size_t n)
{
	void *room = tm_views_reserve(v, row, n);
	if (room) {
		if (n) /* p may be NULL then */
			memcpy(room, p, n);
		tm_views_commit(v, row, n);
		return;
	}
	/* larger than a buffer: through the spool, and referred to (or
	 * copied) by the machine's stream at once */
	end_run(v);
	uint64_t at = v->all.size;
	tm_spool_put(&v->all, p, n);
	if (tracks(v, row))
		tm_parts_put_ref(&v->mach, row, at, p, n);
}

void tm_views_put_all(tm_views *v, const void *p, size_t n)
{
	end_run(v);
	if (v->heading) {
		head_put(v, p, n);
		for (size_t i = 0; i < v->mach.n; i++)
			tm_parts_put_head(&v->mach, i, p, n);
		return;
	}
	tm_spool_put(&v->all, p, n);
	for (size_t i = 0; i < v->mach.n; i++)
		tm_parts_put(&v->mach, i, p, n);
}

void tm_views_put_one(tm_views *v, size_t i, const void *p, size_t n)
{
	end_run(v);
	if (v->shared)
		split_views(v);
	if (v->heading) {
		if (i == 0)
			head_put(v, p, n);
		else if (i - 1 < v->mach.n)
			tm_parts_put_head(&v->mach, i - 1, p, n);
		return;
	}
	if (i == 0)
		tm_spool_put(&v->all, p, n);
	else if (i - 1 < v->mach.n)
		tm_parts_put(&v->mach, i - 1, p, n);
}

tm_spooled *tm_views_take(tm_views *v, const char *what, tm_error *err)
{
	end_run(v);
	if (v->err.code != TM_OK) {
		*err = v->err;
		return NULL;
	}
	if (tm_spool_finish(&v->all, what, err) || tm_parts_finish(&v->mach, what, err) ||
	    (v->head.fd >= 0 && tm_spool_finish(&v->head, what, err)))
		return NULL;
	uint64_t h = v->head.fd >= 0 ? v->head.size : 0;
	/* the whole view with a header given last: the header, then all's
	 * bytes; without, all's bytes alone */
	const tm_ext headed[2] = {{0, 0, h, TM_EXT_OWN, 0}, {h, 0, v->all.size, TM_EXT_WHOLE, 0}};
	const tm_ext alone = {0, 0, v->all.size, TM_EXT_OWN, 0};
	if (v->shared) {
		/* machine 0's view is the whole one: the same extents, of a
		 * copy of the descriptor that holds the first */
		size_t n_ext = h ? 2 : 1;
		v->mach.file.fd = dup(h ? v->head.fd : v->all.fd);
		if (v->mach.file.fd < 0)
			return tm_err(err, TM_EIO, "%s: cannot share a temporary file: %s", what, strerror(errno)), NULL;
		v->mach.p = tm_xcalloc(1, sizeof(*v->mach.p));
		v->mach.n = 1;
		v->mach.p[0].size = h + v->all.size;
		v->mach.p[0].ext = tm_xmalloc(n_ext * sizeof(tm_ext));
		memcpy(v->mach.p[0].ext, h ? headed : &alone, n_ext * sizeof(tm_ext));
		v->mach.p[0].n_ext = v->mach.p[0].cap_ext = n_ext;
	}
	tm_spooled *s = tm_spooled_take(&v->all, &v->mach);
	if (h) {
		s->head_fd = v->head.fd;
		v->head.fd = -1;
		memcpy(s->all_ext, headed, sizeof headed);
		s->n_all_ext = 2;
		s->size += h;
	}
	return s;
}

void tm_views_close(tm_views *v)
{
	tm_spool_close(&v->all);
	tm_spool_close(&v->head);
	tm_parts_close(&v->mach);
}
