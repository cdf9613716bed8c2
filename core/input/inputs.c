/* core/input/inputs.c - the listing of a virtual archive made of loose inputs:
 * files by base name, directories walked, the manifest file first, member
 * names checked unique. */
#include "input/inputs.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "detect/detect.h"

/* As the merge reads a manifest member (merge.c): a small document. */
#define MANIFEST_MAX ((size_t)64 << 20)

/* What each entry was made from, for the duplicate-name message. */
typedef struct origin {
	char **shown; /* by entry: the host path as the user would write it */
	size_t cap;
} origin;

/* The last component of a path given on the command line ("a/b/" -> "b"). */
static char *base_name(const char *path)
{
	size_t len = strlen(path);
	while (len > 1 && path[len - 1] == '/')
		len--;
	size_t start = len;
	while (start > 0 && path[start - 1] != '/')
		start--;
	return tm_xstrndup(path + start, len - start);
}

static char *join(const char *a, const char *b)
{
	tm_buf p = {0};
	size_t la = strlen(a);
	tm_buf_puts(&p, a);
	if (la == 0 || a[la - 1] != '/')
		tm_buf_puts(&p, "/");
	tm_buf_puts(&p, b);
	return tm_buf_detach(&p, NULL);
}

/* `blob`: the file's, when its lister made it (taken over; `abs` is then
 * not read), else NULL. */
static void add_entry(tm_listing *l, size_t *cap, origin *o, const char *name, const char *abs,
		      const struct stat *st, tm_blob *blob, const char *shown)
{
	TM_GROW(l->entries, *cap, l->n + 1);
	tm_entry *e = &l->entries[l->n++];
	memset(e, 0, sizeof(*e));
	e->name = tm_xstrdup(name);
	e->kind = TM_ENTRY_FILE;
	e->size = (uint64_t)st->st_size;
	e->mode = (uint32_t)(st->st_mode & 07777);
	e->mtime = (int64_t)st->st_mtime;
	e->blob = blob ? blob : tm_blob_open_loose(abs, st);
	TM_GROW(o->shown, o->cap, l->n);
	o->shown[l->n - 1] = tm_xstrdup(shown);
}

/* The manifest file is read whole into memory (it is a small document, and
 * so it may be a pipe: `-o manifest=<(jq ... m.json)`). */
static int add_manifest(tm_listing *l, size_t *cap, origin *o, const char *path, tm_error *err)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) != 0) {
		int e = errno;
		if (fd >= 0)
			close(fd);
		return tm_err(err, TM_EIO, "%s: %s", path, strerror(e));
	}
	if (S_ISDIR(st.st_mode)) {
		close(fd);
		return tm_err(err, TM_EIO, "%s: %s", path, strerror(EISDIR));
	}
	tm_buf b = {0};
	char chunk[65536];
	ssize_t r;
	while ((r = read(fd, chunk, sizeof chunk)) != 0) {
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 || b.len > MANIFEST_MAX) {
			int e = r < 0 ? errno : EFBIG;
			close(fd);
			tm_buf_free(&b);
			return tm_err(err, TM_EIO, "%s: %s", path, strerror(e));
		}
		tm_buf_put(&b, chunk, (size_t)r);
	}
	close(fd);
	TM_GROW(l->entries, *cap, l->n + 1);
	tm_entry *e = &l->entries[l->n++];
	memset(e, 0, sizeof(*e));
	e->name = tm_xstrdup(TM_INPUTS_MANIFEST_NAME);
	e->kind = TM_ENTRY_FILE;
	e->size = b.len;
	e->mode = 0644;
	e->mtime = S_ISREG(st.st_mode) ? (int64_t)st.st_mtime : (int64_t)time(NULL);
	e->blob = tm_blob_open_memory(b.data, b.len);
	tm_buf_free(&b);
	TM_GROW(o->shown, o->cap, l->n);
	tm_buf shown = {0};
	tm_buf_printf(&shown, "-o manifest=%s", path);
	o->shown[l->n - 1] = tm_buf_detach(&shown, NULL);
	return 0;
}

typedef struct found {
	char *rel;
	struct stat st;
	int pending;   /* a regular file by readdir's d_type, not stat'ed yet */
	tm_blob *blob; /* made by stat_range, head read (else add_entry makes it) */
} found;

typedef struct walk {
	found *v;
	size_t n, cap;
	/* the directories being walked, to stop at a symbolic-link loop */
	struct stat stack[64];
	size_t depth;
} walk;

static int cmp_found(const void *a, const void *b)
{
	return strcmp(((const found *)a)->rel, ((const found *)b)->rel);
}

/* Collect the regular files below abs/rel (rel "" is the directory
 * itself). `shown` is the directory as given, for messages. */
static int walk_dir(walk *w, const char *abs, const char *rel, const char *shown, tm_error *err)
{
	char *dir = rel[0] ? join(abs, rel) : tm_xstrdup(abs);
	DIR *d = opendir(dir);
	if (!d) {
		char *s = rel[0] ? join(shown, rel) : tm_xstrdup(shown);
		tm_err(err, TM_EIO, "%s: %s", s, strerror(errno));
		free(s);
		free(dir);
		return -1;
	}
	int rc = 0;
	for (struct dirent *de; rc == 0 && (errno = 0, de = readdir(d));) {
		/* formats.md §2.5: a hidden component is never a member ("."
		 * and ".." are this directory and its parent here) */
		if (de->d_name[0] == '.')
			continue;
		char *r = rel[0] ? join(rel, de->d_name) : tm_xstrdup(de->d_name);
		if (de->d_type == DT_REG) { /* stat'ed after the walk (stat_pending) */
			TM_GROW(w->v, w->cap, w->n + 1);
			w->v[w->n++] = (found){.rel = r, .pending = 1};
			continue;
		}
		char *p = join(dir, de->d_name);
		struct stat st;
		if (stat(p, &st) != 0) {
			char *s = join(shown, r);
			rc = tm_err(err, TM_EIO, "%s: %s", s, strerror(errno));
			free(s);
		} else if (S_ISDIR(st.st_mode)) {
			int loop = 0;
			for (size_t i = 0; i < w->depth && !loop; i++)
				loop = w->stack[i].st_dev == st.st_dev && w->stack[i].st_ino == st.st_ino;
			if (!loop && w->depth == sizeof w->stack / sizeof w->stack[0]) {
				char *s = join(shown, r);
				rc = tm_err(err, TM_EIO, "%s: directories nested more than %zu deep", s, w->depth);
				free(s);
			} else if (!loop) { /* a link back up the tree is walked once, where it is */
				w->stack[w->depth++] = st;
				rc = walk_dir(w, abs, r, shown, err);
				w->depth--;
			}
		} else if (S_ISREG(st.st_mode)) {
			TM_GROW(w->v, w->cap, w->n + 1);
			w->v[w->n++] = (found){.rel = r, .st = st};
			r = NULL;
		}
		free(p);
		free(r);
	}
	if (rc == 0 && errno != 0) {
		char *s = rel[0] ? join(shown, rel) : tm_xstrdup(shown);
		rc = tm_err(err, TM_EIO, "%s: %s", s, strerror(errno));
		free(s);
	}
	closedir(d);
	free(dir);
	return rc;
}

/* Stat the pending files of v[from, to) below `abs`: the first that
 * fails is `failed` (its index + 1) with its errno. Each is opened, and
 * fstat'ed and its head read through that one open (tm_blob_open_loose_fd):
 * a stat by path and then an open by path for the sniff were two lookups
 * of each of 100,000 names, a fifth of their mount tier. A file that
 * cannot be opened or read so is stat'ed by its path, as before, and its
 * sniff says why it cannot be read. */
typedef struct stat_run {
	found *v;
	size_t from, to;
	const char *abs;
	size_t failed;
	int err;
} stat_run;

static void *stat_range(void *arg)
{
	stat_run *r = arg;
	/* the directory of the last file, open: a name is looked up in it
	 * rather than from the root (the walk lists a directory's files
	 * together) */
	int dfd = -1;
	const char *drel = NULL;
	size_t dlen = 0;
	for (size_t i = r->from; i < r->to && !r->failed; i++) {
		if (!r->v[i].pending)
			continue;
		const char *rel = r->v[i].rel, *slash = strrchr(rel, '/');
		size_t len = slash ? (size_t)(slash - rel) : 0;
		if (!drel || len != dlen || memcmp(rel, drel, len) != 0) {
			if (dfd >= 0)
				close(dfd);
			char *sub = tm_xstrndup(rel, len), *d = len ? join(r->abs, sub) : tm_xstrdup(r->abs);
			dfd = open(d, O_PATH | O_DIRECTORY | O_CLOEXEC);
			free(d);
			free(sub);
			drel = rel;
			dlen = len;
		}
		char *p = join(r->abs, rel);
		/* O_NOFOLLOW, O_NONBLOCK: what readdir said was a regular file
		 * and has become a link or a FIFO takes the path's way */
		int flags = O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY;
		int fd = dfd >= 0 ? openat(dfd, slash ? slash + 1 : rel, flags) : open(p, flags);
		if (fd >= 0) {
			r->v[i].blob = tm_blob_open_loose_fd(p, fd, &r->v[i].st);
			close(fd);
		}
		if (!r->v[i].blob && stat(p, &r->v[i].st) != 0) {
			r->failed = i + 1;
			r->err = errno;
		}
		free(p);
	}
	if (dfd >= 0)
		close(dfd);
	return NULL;
}

/* From this many files on, two threads stat them. */
#define STAT_SPLIT 256

/* The files readdir said are regular, opened and stat'ed (stat_range):
 * by two threads for a folder of many (a stat each was a third of the
 * mount tier of 100,000 files). The error is the first failing file's in walk order; a file
 * that is no longer regular is left out, as the walk leaves such files. */
static int stat_pending(walk *w, const char *abs, const char *shown, tm_error *err)
{
	stat_run a = {.v = w->v, .from = 0, .to = w->n, .abs = abs};
	stat_run b = {.v = w->v, .from = w->n, .to = w->n, .abs = abs}; /* none */
	if (w->n >= STAT_SPLIT) {
		a.to = b.from = w->n / 2;
		tm_run_halves(stat_range, &a, &b);
	} else {
		stat_range(&a);
	}
	stat_run *f = a.failed ? &a : b.failed ? &b : NULL;
	if (f) {
		char *s = join(shown, w->v[f->failed - 1].rel);
		tm_err(err, TM_EIO, "%s: %s", s, strerror(f->err));
		free(s);
		return -1;
	}
	size_t k = 0;
	for (size_t i = 0; i < w->n; i++) {
		if (w->v[i].pending && !S_ISREG(w->v[i].st.st_mode)) {
			free(w->v[i].rel);
			tm_blob_unref(w->v[i].blob);
			continue;
		}
		w->v[k] = w->v[i];
		w->v[k++].pending = 0;
	}
	w->n = k;
	return 0;
}

static int add_directory(tm_listing *l, size_t *cap, origin *o, const char *path, const char *abs,
			 const struct stat *st, tm_error *err)
{
	walk w = {0};
	w.stack[w.depth++] = *st;
	int rc = walk_dir(&w, abs, "", path, err);
	if (rc == 0)
		rc = stat_pending(&w, abs, path, err);
	if (rc == 0) {
		if (w.n)
			qsort(w.v, w.n, sizeof(*w.v), cmp_found);
		for (size_t i = 0; i < w.n; i++) {
			/* a blob the lister made has its absolute path already */
			char *a = w.v[i].blob ? NULL : join(abs, w.v[i].rel);
			char *s = join(path, w.v[i].rel);
			add_entry(l, cap, o, w.v[i].rel, a, &w.v[i].st, w.v[i].blob, s);
			w.v[i].blob = NULL;
			free(s);
			free(a);
		}
	}
	for (size_t i = 0; i < w.n; i++) {
		free(w.v[i].rel);
		tm_blob_unref(w.v[i].blob);
	}
	free(w.v);
	return rc;
}

/* Stat an operand and find its absolute path. */
static int look_at(const char *path, struct stat *st, char **abs, tm_error *err)
{
	if (stat(path, st) != 0 || !(*abs = realpath(path, NULL)))
		return tm_err(err, TM_EIO, "%s: %s", path, strerror(errno));
	if (!S_ISREG(st->st_mode) && !S_ISDIR(st->st_mode)) {
		free(*abs);
		*abs = NULL;
		return tm_err(err, TM_EIO, "%s: not a regular file or directory", path);
	}
	return 0;
}

static tm_type sniff_blob(tm_blob *b, tm_error *err)
{
	unsigned char head[TM_SNIFF_BYTES];
	ssize_t n = tm_blob_head(b, head, sizeof head, err);
	return n < 0 ? TM_TYPE_COUNT : tm_detect(head, (size_t)n);
}

typedef struct name_ref {
	const char *name;
	size_t index;
} name_ref;

static int cmp_name_ref(const void *a, const void *b)
{
	const name_ref *x = a, *y = b;
	int c = strcmp(x->name, y->name);
	return c ? c : x->index < y->index ? -1 : x->index > y->index;
}

/* Issue 11: two inputs with one member name are an error naming both (an
 * archive may hold such twins, but a user who gives them meant two files).
 * The clash reported is the one whose later member comes first. */
static int check_unique(const tm_listing *l, const origin *o, int has_manifest, tm_error *err)
{
	name_ref *v = tm_xmalloc((l->n ? l->n : 1) * sizeof(*v));
	for (size_t i = 0; i < l->n; i++)
		v[i] = (name_ref){l->entries[i].name, i};
	qsort(v, l->n, sizeof(*v), cmp_name_ref);
	size_t first = 0, second = SIZE_MAX;
	for (size_t i = 1; i < l->n; i++) {
		if (strcmp(v[i].name, v[i - 1].name) != 0)
			continue;
		/* v[i-1] is the earliest of its run when v[i] is the run's second */
		size_t a = v[i - 1].index, b = v[i].index;
		if (i >= 2 && strcmp(v[i - 2].name, v[i].name) == 0)
			continue;
		if (b < second)
			first = a, second = b;
	}
	free(v);
	if (second == SIZE_MAX)
		return 0;
	if (has_manifest && first == 0) {
		tm_error ignore;
		if (sniff_blob(l->entries[second].blob, &ignore) == TM_TYPE_MANIFEST)
			return tm_err(err, TM_EINPUT, "multiple perfetto_manifest files in archive");
	}
	return tm_err(err, TM_EARGS, "two inputs give the member name '%s': %s and %s", l->entries[second].name,
		      o->shown[first], o->shown[second]);
}

int tm_inputs_list(const char *const *paths, size_t n, const char *manifest, tm_listing *out, tm_error *err)
{
	tm_listing l = {0};
	size_t cap = 0;
	origin o = {0};
	int rc = 0;
	if (manifest) {
		rc = add_manifest(&l, &cap, &o, manifest, err);
		if (rc == 0) {
			tm_type t = sniff_blob(l.entries[0].blob, err);
			if (t == TM_TYPE_COUNT)
				rc = -1;
			else if (t != TM_TYPE_MANIFEST)
				rc = tm_err(err, TM_EARGS,
					    "%s: not a perfetto_manifest (its first key must be \"perfetto_manifest\", "
					    "spec/manifest.md §2)",
					    manifest);
		}
	}
	for (size_t i = 0; rc == 0 && i < n; i++) {
		struct stat st;
		char *abs = NULL;
		rc = look_at(paths[i], &st, &abs, err);
		if (rc == 0 && S_ISDIR(st.st_mode)) {
			rc = add_directory(&l, &cap, &o, paths[i], abs, &st, err);
		} else if (rc == 0) {
			char *name = base_name(paths[i]);
			add_entry(&l, &cap, &o, name, abs, &st, NULL, paths[i]);
			free(name);
		}
		free(abs);
	}
	if (rc == 0)
		rc = check_unique(&l, &o, manifest != NULL, err);
	for (size_t i = 0; i < l.n; i++)
		free(o.shown[i]);
	free(o.shown);
	if (rc != 0) {
		tm_listing_free(&l);
		return -1;
	}
	*out = l;
	return 0;
}
