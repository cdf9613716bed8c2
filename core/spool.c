/* core/spool.c - write-once temporary files. */
#include "spool.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SPOOL_BUF (64u * 1024u)

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
	return 0;
}

static void flush(tm_spool *s)
{
	size_t off = 0;
	while (off < s->len && !s->failed) {
		ssize_t n = write(s->fd, s->buf + off, s->len - off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			s->failed = errno ? errno : EIO;
		else
			off += (size_t)n;
	}
	s->len = 0;
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
			flush(s);
	}
}

int tm_spool_finish(tm_spool *s, const char *what, tm_error *err)
{
	if (s->buf) {
		flush(s);
		free(s->buf);
		s->buf = NULL;
	}
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
	tm_buf_put(b, t + i, sizeof t - i);
}

void tm_spool_close(tm_spool *s)
{
	free(s->buf);
	s->buf = NULL;
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
