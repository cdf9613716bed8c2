/* core/spool.c - write-once temporary files.
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
#include "spool.h"

#include <errno.h>
#include <pthread.h>
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
		pthread_attr_destroy(&a);
	}
	pthread_mutex_unlock(&W.mu);
	return 0;
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
	if (s->failed)
		return tm_err(err, TM_EIO, "%s: cannot write a temporary file: %s", what, strerror(s->failed));
	return 0;
}

/* The letter after the backslash that stands for byte c in a field, or 0
 * when c stands for itself. */
static char field_escape(char c)
{
	switch (c) {
	case '\\': return '\\';
	case '\t': return 't';
	case '\n': return 'n';
	case '\r': return 'r';
	case '\0': return '0';
	default: return 0;
	}
}

/* f with field_escape applied, in pieces through put. */
static void put_escaped(void (*put)(void *to, const void *p, size_t n), void *to, const char *f, size_t n)
{
	size_t start = 0;
	for (size_t i = 0; i < n; i++) {
		char e = field_escape(f[i]);
		if (!e)
			continue;
		put(to, f + start, i - start);
		char esc[2] = {'\\', e};
		put(to, esc, 2);
		start = i + 1;
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
	put_escaped(to_buf, b, f, n);
}

void tm_buf_put_i64(tm_buf *b, int64_t v)
{
	char t[24];
	size_t i = sizeof t;
	uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
	do {
		t[--i] = (char)('0' + u % 10);
		u /= 10;
	} while (u);
	if (v < 0)
		t[--i] = '-';
	size_t n = sizeof t - i;
	if (b->len + n + 1 > b->cap)
		tm_grow((void **)&b->data, &b->cap, b->len + n + 1, 1);
	for (size_t k = 0; k < n; k++) /* a few bytes: no call to memcpy */
		b->data[b->len + k] = t[i + k];
	b->len += n;
	b->data[b->len] = '\0';
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
	if (s->fd >= 0)
		close(s->fd);
	s->fd = -1;
}

tm_spooled *tm_spooled_take(tm_spool *out, size_t n_mach)
{
	tm_spooled *s = tm_xcalloc(1, sizeof(*s));
	s->fd = out[0].fd;
	s->size = out[0].size;
	out[0].fd = -1;
	s->n_mach = n_mach;
	s->mach_fd = tm_xcalloc(n_mach ? n_mach : 1, sizeof(int));
	s->mach_size = tm_xcalloc(n_mach ? n_mach : 1, sizeof(uint64_t));
	for (size_t r = 0; r < n_mach; r++) {
		s->mach_fd[r] = out[r + 1].fd;
		s->mach_size[r] = out[r + 1].size;
		out[r + 1].fd = -1;
	}
	return s;
}

/* ---- views ------------------------------------------------------------------- */

int tm_views_open(tm_views *v, size_t n_mach, tm_error *err)
{
	memset(v, 0, sizeof(*v));
	v->n_mach = n_mach;
	v->shared = n_mach == 1;
	v->out = tm_xcalloc(n_mach + 1, sizeof(*v->out));
	for (size_t i = 0; i <= n_mach; i++)
		v->out[i].fd = -1;
	for (size_t i = 0; i <= n_mach; i++)
		if (!(v->shared && i == 1) && tm_spool_open(&v->out[i], err)) {
			tm_views_close(v);
			return -1;
		}
	return 0;
}

/* The machine's view becomes a file of its own: the whole one's bytes so
 * far copied into it. */
static void split_views(tm_views *v)
{
	v->shared = 0;
	tm_spool *all = &v->out[0], *one = &v->out[1];
	if (tm_spool_open(one, &v->err))
		return;
	if (all->buf)
		flush(all, 1);
	drain(all);
	char *buf = tm_xmalloc(SPOOL_BUF);
	for (uint64_t off = 0; off < all->size;) {
		size_t want = all->size - off < SPOOL_BUF ? (size_t)(all->size - off) : SPOOL_BUF;
		ssize_t k = pread(all->fd, buf, want, (off_t)off);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0) {
			one->failed = k < 0 && errno ? errno : EIO;
			break;
		}
		tm_spool_put(one, buf, (size_t)k);
		off += (uint64_t)k;
	}
	free(buf);
}

void tm_views_put(tm_views *v, uint32_t row, const void *p, size_t n)
{
	if (v->shared && row != 0)
		split_views(v);
	tm_spool_put(&v->out[0], p, n);
	if (row < v->n_mach && !v->shared)
		tm_spool_put(&v->out[row + 1], p, n);
}

void tm_views_put_all(tm_views *v, const void *p, size_t n)
{
	for (size_t i = 0; i <= v->n_mach; i++)
		if (!(v->shared && i == 1))
			tm_spool_put(&v->out[i], p, n);
}

void tm_views_put_one(tm_views *v, size_t i, const void *p, size_t n)
{
	if (v->shared)
		split_views(v);
	tm_spool_put(&v->out[i], p, n);
}

tm_spooled *tm_views_take(tm_views *v, const char *what, tm_error *err)
{
	if (v->err.code != TM_OK) {
		*err = v->err;
		return NULL;
	}
	for (size_t i = 0; i <= v->n_mach; i++)
		if (!(v->shared && i == 1) && tm_spool_finish(&v->out[i], what, err))
			return NULL;
	if (v->shared) {
		v->out[1].fd = dup(v->out[0].fd);
		if (v->out[1].fd < 0)
			return tm_err(err, TM_EIO, "%s: cannot share a temporary file: %s", what, strerror(errno)), NULL;
		v->out[1].size = v->out[0].size;
	}
	return tm_spooled_take(v->out, v->n_mach);
}

void tm_views_close(tm_views *v)
{
	if (!v->out)
		return;
	for (size_t i = 0; i <= v->n_mach; i++)
		tm_spool_close(&v->out[i]);
	free(v->out);
	v->out = NULL;
}

void tm_spooled_free(tm_spooled *s)
{
	if (!s)
		return;
	if (s->fd >= 0)
		close(s->fd);
	for (size_t i = 0; i < s->n_mach; i++)
		if (s->mach_fd[i] >= 0)
			close(s->mach_fd[i]);
	free(s->mach_fd);
	free(s->mach_size);
	free(s);
}
