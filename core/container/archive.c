/* core/container/archive.c - blobs and cursors: the common machinery, and the blob
 * kinds that need no decoding (a file on disk, a memory copy, a byte range
 * of another blob). Deflated members and streams: decompress.c. */
#include "container/archive_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "detect/detect.h"
#include "util/ser.h"

/* ---- common ------------------------------------------------------------ */

/* Where a kind's part kept in the blob's own allocation starts: after the
 * blob, at an alignment any kind's struct takes. */
#define BLOB_HEAD ((sizeof(tm_blob) + _Alignof(max_align_t) - 1) / _Alignof(max_align_t) * _Alignof(max_align_t))

/* A blob with `extra` zeroed bytes after BLOB_HEAD. */
static tm_blob *blob_alloc(const blob_ops *ops, int64_t size, size_t extra)
{
	tm_blob *b = tm_xcalloc(1, BLOB_HEAD + extra);
	atomic_init(&b->refs, 1);
	atomic_init(&b->size, size);
	b->ops = ops;
	return b;
}

tm_blob *tm_blob_new_(const blob_ops *ops, tm_blob *src, uint64_t off, int64_t size, void *priv)
{
	tm_blob *b = blob_alloc(ops, size, 0);
	b->src = tm_blob_ref(src);
	b->off = off;
	b->priv = priv;
	return b;
}

tm_blob *tm_blob_new_inline_(const blob_ops *ops, int64_t size, size_t priv_size)
{
	tm_blob *b = blob_alloc(ops, size, priv_size);
	b->priv = (char *)b + BLOB_HEAD;
	return b;
}

tm_blob *tm_blob_ref(tm_blob *b)
{
	if (b)
		atomic_fetch_add_explicit(&b->refs, 1, memory_order_relaxed);
	return b;
}

void tm_blob_unref(tm_blob *b)
{
	while (b) {
		if (atomic_fetch_sub_explicit(&b->refs, 1, memory_order_acq_rel) != 1)
			return;
		tm_blob *src = b->src;
		if (b->ops->free)
			b->ops->free(b);
		free(b);
		b = src; /* iterate rather than recurse: chains of ranges can be deep */
	}
}

int64_t tm_blob_size(const tm_blob *b)
{
	return atomic_load_explicit(&((tm_blob *)b)->size, memory_order_acquire);
}

void tm_blob_set_size_(tm_blob *b, int64_t size)
{
	atomic_store_explicit(&b->size, size, memory_order_release);
}

tm_cursor *tm_cursor_open(tm_blob *b, tm_error *err)
{
	tm_cursor *c = tm_xcalloc(1, sizeof(*c));
	c->blob = tm_blob_ref(b);
	if (b->src && !(c->src = tm_cursor_open(b->src, err))) {
		tm_cursor_close(c);
		return NULL;
	}
	if (b->ops->open && b->ops->open(c, err) != 0) {
		tm_cursor_close(c);
		return NULL;
	}
	return c;
}

void tm_cursor_close(tm_cursor *c)
{
	if (!c)
		return;
	if (c->blob->ops->close)
		c->blob->ops->close(c);
	tm_cursor_close(c->src);
	tm_blob_unref(c->blob);
	free(c);
}

ssize_t tm_cursor_pread(tm_cursor *c, void *buf, size_t n, uint64_t off, tm_error *err)
{
	if (n > SSIZE_MAX)
		n = SSIZE_MAX;
	int64_t size = tm_blob_size(c->blob);
	if (size >= 0) {
		if (off >= (uint64_t)size)
			return 0;
		if (n > (uint64_t)size - off)
			n = (size_t)((uint64_t)size - off);
	}
	if (n == 0)
		return 0;
	/* a signal that ends the daemon stops the pass reading here too, not
	 * at the end of a file that may be gigabytes long */
	if (tm_stopped(err) != 0)
		return -1;
	ssize_t r = c->blob->ops->pread(c, buf, n, off, err);
	if (r >= 0)
		c->pos = off + (uint64_t)r;
	if (r > 0 && c->observe)
		c->observe(c->observe_ctx, (size_t)r);
	return r;
}

void tm_cursor_observe(tm_cursor *c, void (*fn)(void *ctx, size_t n), void *ctx)
{
	c->observe = fn;
	c->observe_ctx = ctx;
}

ssize_t tm_cursor_read(tm_cursor *c, void *buf, size_t n, tm_error *err)
{
	return tm_cursor_pread(c, buf, n, c->pos, err);
}

ssize_t tm_read_full_(tm_cursor *c, void *buf, size_t n, uint64_t off, tm_error *err)
{
	size_t got = 0;
	while (got < n) {
		ssize_t r = tm_cursor_pread(c, (char *)buf + got, n - got, off + got, err);
		if (r < 0)
			return -1;
		if (r == 0)
			break;
		got += (size_t)r;
	}
	return (ssize_t)got;
}

int64_t tm_blob_measure(tm_blob *b, tm_error *err)
{
	int64_t size = tm_blob_size(b);
	if (size >= 0)
		return size;
	tm_cursor *c = tm_cursor_open(b, err);
	if (!c)
		return -1;
	uint64_t off = b->ops->resume_hint ? b->ops->resume_hint(b) : 0;
	char *scratch = tm_xmalloc(TM_IO_CHUNK);
	ssize_t r;
	while ((r = tm_cursor_pread(c, scratch, TM_IO_CHUNK, off, err)) > 0)
		off += (uint64_t)r;
	free(scratch);
	tm_cursor_close(c);
	if (r < 0)
		return -1;
	size = tm_blob_size(b);
	if (size < 0) /* a decoder that reached its end always records the size */
		return tm_err(err, TM_EINPUT, "stream size unknown after reading %llu bytes",
			      (unsigned long long)off);
	return size;
}

/* ---- a file on disk: one fd, pread only ---------------------------------- */

/* Small reads (the headers and data of an archive of many small members,
 * read one after another by the listing, the sniffing and the scan) are
 * served from a window of the file read before, instead of a system call
 * each. A window starts at WINDOW_MIN and doubles, up to READ_WINDOW, while
 * the reads stay within READ_WINDOW of it (small members, read in archive
 * order or near it); a read farther away starts it small again: a TAR of
 * large members is a header and its sniffed bytes, then a jump, and 128 KB
 * windows there read more than half of the archive to list it.
 *
 * There are N_WINDOWS of them, each following its own run of reads: the
 * scan reads members on two threads (core/util/ahead.h), at two places of the
 * archive. With one window they took it from each other, each reading a
 * window of up to 128 KB again for every member: the scan of 200,000
 * members took 2.5 times as long as that of 100,000. A read takes the
 * window that holds it, else the one its place continues, else the one
 * used least recently. */
#define SMALL_READ ((size_t)16 << 10)
#define WINDOW_MIN SMALL_READ
#define READ_WINDOW ((size_t)128 << 10)
#define N_WINDOWS 4

typedef struct file_window {
	unsigned char *buf;    /* READ_WINDOW bytes, allocated with its first read */
	uint64_t off;
	size_t len;
	size_t size;           /* the size it is read at now (0: never read) */
	uint64_t used;         /* when it last served a read (file_blob.tick) */
} file_window;

typedef struct file_blob {
	int fd;
	char *path;
	pthread_mutex_t lock;  /* guards the windows */
	file_window w[N_WINDOWS];
	uint64_t tick;
} file_blob;

static ssize_t file_read_at(const file_blob *f, void *buf, size_t n, uint64_t off, size_t need, tm_error *err)
{
	size_t got = 0;
	while (got < need) {
		ssize_t r = pread(f->fd, (char *)buf + got, n - got, (off_t)(off + got));
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return tm_err(err, TM_EIO, "%s: %s", f->path, strerror(errno));
		if (r == 0) /* the file shrank under us: the blob's size is a promise */
			return tm_err(err, TM_EIO, "%s: file is shorter than when it was opened", f->path);
		got += (size_t)r;
	}
	return (ssize_t)got;
}

/* Whether a read at `off` continues the run of reads of window w. */
static int window_near(const file_window *w, uint64_t off)
{
	uint64_t near = w->off > READ_WINDOW ? w->off - READ_WINDOW : 0;
	return w->size && off >= near && off - near <= 2 * (uint64_t)READ_WINDOW + w->len;
}

static ssize_t file_pread(tm_cursor *c, void *buf, size_t n, uint64_t off, tm_error *err)
{
	file_blob *f = c->blob->priv;
	if (n > SMALL_READ)
		return file_read_at(f, buf, n, off, n, err);
	pthread_mutex_lock(&f->lock);
	file_window *w = NULL;
	for (int i = 0; i < N_WINDOWS && !w; i++) {
		file_window *x = &f->w[i];
		if (x->len && off >= x->off && off - x->off <= x->len && n <= x->len - (off - x->off))
			w = x;
	}
	if (!w) {
		for (int i = 0; i < N_WINDOWS && !w; i++)
			if (window_near(&f->w[i], off))
				w = &f->w[i];
		if (w) {
			w->size = w->size * 2 < READ_WINDOW ? w->size * 2 : READ_WINDOW;
		} else {
			w = &f->w[0];
			for (int i = 1; i < N_WINDOWS; i++)
				if (f->w[i].used < w->used)
					w = &f->w[i];
			w->size = WINDOW_MIN;
		}
		if (!w->buf)
			w->buf = tm_xmalloc(READ_WINDOW);
		uint64_t size = (uint64_t)tm_blob_size(c->blob);
		size_t want = size - off < w->size ? (size_t)(size - off) : w->size;
		w->len = 0;
		ssize_t r = file_read_at(f, w->buf, want, off, n, err);
		if (r < 0) {
			pthread_mutex_unlock(&f->lock);
			return -1;
		}
		w->off = off;
		w->len = (size_t)r;
	}
	w->used = ++f->tick;
	memcpy(buf, w->buf + (off - w->off), n);
	pthread_mutex_unlock(&f->lock);
	return (ssize_t)n;
}

static void file_free(tm_blob *b)
{
	file_blob *f = b->priv;
	close(f->fd);
	pthread_mutex_destroy(&f->lock);
	for (int i = 0; i < N_WINDOWS; i++)
		free(f->w[i].buf);
	free(f->path);
	free(f);
}

static const blob_ops file_ops = {
	.pread = file_pread,
	.free = file_free,
};

tm_blob *tm_blob_open_path(const char *path, tm_error *err)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		tm_err(err, TM_EIO, "%s: %s", path, strerror(errno));
		return NULL;
	}
	struct stat st;
	if (fstat(fd, &st) != 0 || S_ISDIR(st.st_mode)) {
		tm_err(err, TM_EIO, "%s: %s", path, strerror(S_ISDIR(st.st_mode) ? EISDIR : errno));
		close(fd);
		return NULL;
	}
	file_blob *f = tm_xcalloc(1, sizeof(*f));
	f->fd = fd;
	f->path = tm_xstrdup(path);
	pthread_mutex_init(&f->lock, NULL);
	return tm_blob_new_(&file_ops, NULL, 0, (int64_t)st.st_size, f);
}

/* ---- a loose file, opened by each reader ---------------------------------- */

/* Loose inputs (issue 11) may be thousands of files: holding one fd per
 * file for the mount's lifetime would run into RLIMIT_NOFILE, so each
 * cursor opens the file for as long as it reads. The file is identified by
 * what stat said when it was listed; a reader that finds another file (or
 * this one changed) fails rather than serve bytes the merge never saw. */
typedef struct loose_blob {
	dev_t dev;
	ino_t ino;
	int64_t mtime_ns;
	int64_t ctime_ns; /* for the index cache's key */
	/* tm_hash of the whole file, when a head read took all of it (the
	 * sniff of a small file): the index key needs that hash, and reading
	 * each of 100,000 small files a second time for it was a quarter of
	 * a warm reopen of their folder. `whole` is set after `whole_hash`. */
	_Atomic uint64_t whole_hash;
	atomic_int whole;
	/* tm_detect of the first TM_SNIFF_BYTES, when the lister read them
	 * (tm_blob_open_loose_fd); set before the blob is shared */
	uint8_t sniffed;
	uint8_t type;
	/* absolute: the daemon may chdir("/") after listing. In the struct's
	 * own allocation, as the times are kept in one word each: a folder
	 * of 100,000 files holds one of these per file. */
	char path[];
} loose_blob;
_Static_assert(TM_TYPE_COUNT <= UINT8_MAX, "a tm_type fits loose_blob.type");

static int64_t ns_of(struct timespec t)
{
	return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

/* Keep the hash of the whole file, read whole (the first keeper wins). */
static void keep_whole_hash(loose_blob *l, const void *buf, size_t n)
{
	if (atomic_load_explicit(&l->whole, memory_order_acquire))
		return;
	atomic_store_explicit(&l->whole_hash, tm_hash(TM_HASH_INIT, buf, n), memory_order_relaxed);
	atomic_store_explicit(&l->whole, 1, memory_order_release);
}

static int loose_open(tm_cursor *c, tm_error *err)
{
	const loose_blob *l = c->blob->priv;
	int fd = open(l->path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return tm_err(err, TM_EIO, "%s: %s", l->path, strerror(errno));
	struct stat st;
	if (fstat(fd, &st) != 0) {
		tm_err(err, TM_EIO, "%s: %s", l->path, strerror(errno));
		close(fd);
		return -1;
	}
	if (st.st_dev != l->dev || st.st_ino != l->ino || st.st_size != tm_blob_size(c->blob) ||
	    ns_of(st.st_mtim) != l->mtime_ns) {
		close(fd);
		return tm_err(err, TM_EIO, "%s: the file changed since it was listed", l->path);
	}
	int *state = tm_xmalloc(sizeof(*state));
	*state = fd;
	c->state = state;
	return 0;
}

static ssize_t loose_pread(tm_cursor *c, void *buf, size_t n, uint64_t off, tm_error *err)
{
	const loose_blob *l = c->blob->priv;
	int fd = *(int *)c->state;
	size_t got = 0;
	while (got < n) {
		ssize_t r = pread(fd, (char *)buf + got, n - got, (off_t)(off + got));
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return tm_err(err, TM_EIO, "%s: %s", l->path, strerror(errno));
		if (r == 0)
			return tm_err(err, TM_EIO, "%s: file is shorter than when it was listed", l->path);
		got += (size_t)r;
	}
	return (ssize_t)got;
}

static void loose_close(tm_cursor *c)
{
	if (c->state)
		close(*(int *)c->state);
	free(c->state);
}

static const blob_ops loose_ops = {
	.open = loose_open,
	.pread = loose_pread,
	.close = loose_close,
};

ssize_t tm_blob_head(tm_blob *b, void *buf, size_t n, tm_error *err)
{
	tm_cursor *c = tm_cursor_open(b, err);
	if (!c)
		return -1;
	ssize_t r = tm_read_full_(c, buf, n, 0, err);
	tm_cursor_close(c);
	if (r >= 0 && b->ops == &loose_ops && r == tm_blob_size(b))
		keep_whole_hash(b->priv, buf, (size_t)r);
	return r;
}

int tm_blob_head_hash(tm_blob *b, size_t n, uint64_t *h, tm_error *err)
{
	int64_t size = tm_blob_size(b);
	if (b->ops == &loose_ops) {
		const loose_blob *l = b->priv;
		if (atomic_load_explicit(&l->whole, memory_order_acquire) && size >= 0 && (uint64_t)size <= n) {
			*h = atomic_load_explicit(&l->whole_hash, memory_order_relaxed);
			return 0;
		}
	}
	if (size >= 0 && (uint64_t)size < n)
		n = (size_t)size; /* no buffer larger than the bytes */
	unsigned char *buf = tm_xmalloc(n ? n : 1);
	ssize_t r = tm_blob_head(b, buf, n, err);
	if (r >= 0)
		*h = tm_hash(TM_HASH_INIT, buf, (size_t)r);
	free(buf);
	return r < 0 ? -1 : 0;
}

tm_blob *tm_blob_open_loose(const char *path, const struct stat *st)
{
	size_t len = strlen(path);
	tm_blob *b = tm_blob_new_inline_(&loose_ops, (int64_t)st->st_size, sizeof(loose_blob) + len + 1);
	loose_blob *l = b->priv;
	memcpy(l->path, path, len + 1);
	l->dev = st->st_dev;
	l->ino = st->st_ino;
	l->mtime_ns = ns_of(st->st_mtim);
	l->ctime_ns = ns_of(st->st_ctim);
	return b;
}

tm_blob *tm_blob_open_loose_fd(const char *path, int fd, struct stat *st)
{
	if (fstat(fd, st) != 0)
		return NULL;
	if (!S_ISREG(st->st_mode))
		return NULL;
	unsigned char head[TM_SNIFF_BYTES];
	size_t n = st->st_size < (off_t)sizeof head ? (size_t)st->st_size : sizeof head, got = 0;
	while (got < n) {
		ssize_t r = pread(fd, head + got, n - got, (off_t)got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return NULL; /* the path's own reader will say why */
		got += (size_t)r;
	}
	tm_blob *b = tm_blob_open_loose(path, st);
	loose_blob *l = b->priv;
	l->sniffed = 1;
	l->type = (uint8_t)tm_detect(head, n);
	if ((off_t)n == st->st_size)
		keep_whole_hash(l, head, n);
	return b;
}

int tm_blob_sniffed(const tm_blob *b, size_t window, tm_type *type)
{
	if (b->ops != &loose_ops)
		return 0;
	const loose_blob *l = b->priv;
	int64_t size = tm_blob_size(b);
	/* the same bytes as a head read of `window` would give */
	if (!l->sniffed || (window < TM_SNIFF_BYTES && (size < 0 || (uint64_t)size > window)))
		return 0;
	*type = (tm_type)l->type;
	return 1;
}

int tm_blob_host_file(const tm_blob *b, tm_host_file *out)
{
	struct stat st;
	if (b->ops == &file_ops) {
		const file_blob *f = b->priv;
		if (fstat(f->fd, &st) != 0)
			return -1;
		*out = (tm_host_file){f->path, (uint64_t)st.st_dev, (uint64_t)st.st_ino, (int64_t)st.st_size,
				      ns_of(st.st_mtim), ns_of(st.st_ctim)};
		return 0;
	}
	if (b->ops == &loose_ops) {
		const loose_blob *l = b->priv;
		*out = (tm_host_file){l->path, (uint64_t)l->dev, (uint64_t)l->ino, tm_blob_size(b), l->mtime_ns,
				      l->ctime_ns};
		return 0;
	}
	return -1;
}

/* ---- a private memory copy ----------------------------------------------- */

static ssize_t mem_pread(tm_cursor *c, void *buf, size_t n, uint64_t off, tm_error *err)
{
	memcpy(buf, (const char *)c->blob->priv + off, n);
	return (ssize_t)n;
}

static void mem_free(tm_blob *b)
{
	free(b->priv);
}

static const blob_ops mem_ops = {
	.pread = mem_pread,
	.free = mem_free,
};

tm_blob *tm_blob_open_memory(const void *data, size_t n)
{
	void *copy = tm_xmalloc(n ? n : 1);
	if (n)
		memcpy(copy, data, n);
	return tm_blob_new_(&mem_ops, NULL, 0, (int64_t)n, copy);
}

/* ---- a byte range of another blob ---------------------------------------- */

static ssize_t range_pread(tm_cursor *c, void *buf, size_t n, uint64_t off, tm_error *err)
{
	ssize_t r = tm_read_full_(c->src, buf, n, c->blob->off + off, err);
	if (r >= 0 && (size_t)r < n) /* the container ended inside the member */
		return tm_err(err, TM_EINPUT, "archive member extends past the end of its container");
	return r;
}

static const blob_ops range_ops = {
	.pread = range_pread,
};

int tm_blob_file_range(const tm_blob *b, int *fd, uint64_t *off)
{
	uint64_t base = 0;
	if (b->ops == &range_ops) { /* ranges are flattened onto their source */
		base = b->off;
		b = b->src;
	}
	if (b->ops != &file_ops)
		return -1;
	*fd = ((const file_blob *)b->priv)->fd;
	*off = base;
	return 0;
}

int tm_cursor_file_range(const tm_cursor *c, int *fd, uint64_t *off)
{
	uint64_t base = 0;
	if (c->blob->ops == &range_ops) { /* a range's cursor reads its source's */
		base = c->blob->off;
		c = c->src;
	}
	if (c->blob->ops == &loose_ops && c->state) {
		*fd = *(const int *)c->state;
		*off = base;
		return 0;
	}
	if (tm_blob_file_range(c->blob, fd, off) != 0)
		return -1;
	*off += base;
	return 0;
}

tm_blob *tm_blob_range_(tm_blob *src, uint64_t off, uint64_t len)
{
	if (src->ops == &range_ops) {
		off += src->off;
		src = src->src;
	}
	if (len > INT64_MAX)
		len = INT64_MAX;
	return tm_blob_new_(&range_ops, src, off, (int64_t)len, NULL);
}

/* ---- listings ------------------------------------------------------------ */

tm_entry *tm_listing_add_(tm_listing *l, size_t *cap)
{
	TM_GROW(l->entries, *cap, l->n + 1);
	tm_entry *e = &l->entries[l->n++];
	memset(e, 0, sizeof(*e));
	return e;
}

void tm_entry_clear(tm_entry *e)
{
	free(e->name);
	free(e->pax_path);
	free(e->link_target);
	tm_blob_unref(e->blob);
	memset(e, 0, sizeof(*e));
}

void tm_listing_free(tm_listing *l)
{
	for (size_t i = 0; i < l->n; i++)
		tm_entry_clear(&l->entries[i]);
	free(l->entries);
	l->entries = NULL;
	l->n = 0;
}

int tm_member_name_is_hidden(const char *name)
{
	for (const char *p = name;;) {
		size_t len = strcspn(p, "/");
		int dot = len == 1 && p[0] == '.';
		int dotdot = len == 2 && p[0] == '.' && p[1] == '.';
		if (len > 0 && p[0] == '.' && !dot && !dotdot)
			return 1;
		if (!p[len])
			return 0;
		p += len + 1;
	}
}
