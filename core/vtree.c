/* core/vtree.c - the virtual tree: a node table built at mount time for the
 * static parts (root, files/), generated files rendered once on first use
 * and shared by every reader. */
#include "vtree.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "merge.h"
#include "render.h"

typedef enum src_kind { SRC_NONE, SRC_BLOB, SRC_GEN, SRC_LINK } src_kind;

/* Generated files. Each renders into a buffer once (first stat or open);
 * the bytes never change afterwards, so every reader sees the same ones. */
typedef enum gen_kind { GEN_METADATA, GEN_MANIFEST } gen_kind;

typedef struct vt_node {
	char *name;
	vt_kind kind;
	vt_ino parent;
	vt_ino *kids;
	size_t n_kids, cap_kids;
	src_kind src;
	tm_blob *blob;    /* SRC_BLOB */
	uint64_t size;    /* SRC_BLOB */
	int64_t mtime;
	char *link;       /* SRC_LINK */
	gen_kind gen;     /* SRC_GEN */
	int ready;        /* SRC_GEN: data/len (or err) are final */
	char *data;
	size_t len;
	tm_error err;     /* SRC_GEN: why rendering failed (reads give TM_EIO) */
} vt_node;

struct tm_vtree {
	tm_merge *merge;
	vt_node *nodes;   /* ino i is nodes[i - 1] */
	size_t n_nodes, cap_nodes;
	/* (parent, name) -> ino, open addressing; rebuilt when it fills. */
	vt_ino *slots;
	size_t n_slots;
	pthread_mutex_t lock; /* guards generated buffers */
};

struct vt_file {
	tm_vtree *t;
	vt_node *node;
	tm_cursor *cursor; /* SRC_BLOB */
	pthread_mutex_t lock;
};

static vt_node *node_of(tm_vtree *t, vt_ino ino)
{
	return ino >= 1 && ino <= t->n_nodes ? &t->nodes[ino - 1] : NULL;
}

static uint64_t hash_name(vt_ino parent, const char *name)
{
	uint64_t h = 1469598103934665603ull ^ parent;
	for (const unsigned char *p = (const unsigned char *)name; *p; p++)
		h = (h ^ *p) * 1099511628211ull;
	return h;
}

static void slots_insert(tm_vtree *t, vt_ino ino)
{
	vt_node *n = node_of(t, ino);
	size_t i = hash_name(n->parent, n->name) & (t->n_slots - 1);
	while (t->slots[i])
		i = (i + 1) & (t->n_slots - 1);
	t->slots[i] = ino;
}

static void slots_rebuild(tm_vtree *t)
{
	free(t->slots);
	t->n_slots = 64;
	while (t->n_slots < t->n_nodes * 2)
		t->n_slots *= 2;
	t->slots = tm_xcalloc(t->n_slots, sizeof(*t->slots));
	for (vt_ino i = 2; i <= t->n_nodes; i++)
		slots_insert(t, i);
}

static vt_ino child_named(tm_vtree *t, vt_ino parent, const char *name)
{
	size_t i = hash_name(parent, name) & (t->n_slots - 1);
	for (vt_ino ino; (ino = t->slots[i]); i = (i + 1) & (t->n_slots - 1)) {
		vt_node *n = node_of(t, ino);
		if (n->parent == parent && strcmp(n->name, name) == 0)
			return ino;
	}
	return 0;
}

static vt_ino add_node(tm_vtree *t, vt_ino parent, const char *name, vt_kind kind)
{
	TM_GROW(t->nodes, t->cap_nodes, t->n_nodes + 1);
	vt_node *n = &t->nodes[t->n_nodes++];
	memset(n, 0, sizeof(*n));
	n->name = tm_xstrdup(name);
	n->kind = kind;
	n->parent = parent;
	n->mtime = t->merge->mtime;
	vt_ino ino = (vt_ino)t->n_nodes;
	if (parent) {
		vt_node *p = node_of(t, parent);
		TM_GROW(p->kids, p->cap_kids, p->n_kids + 1);
		p->kids[p->n_kids++] = ino;
		if (t->n_nodes * 2 > t->n_slots)
			slots_rebuild(t);
		else
			slots_insert(t, ino);
	}
	return ino;
}

static vt_ino add_gen(tm_vtree *t, vt_ino parent, const char *name, gen_kind gen)
{
	vt_ino ino = add_node(t, parent, name, VT_REG);
	vt_node *n = node_of(t, ino);
	n->src = SRC_GEN;
	n->gen = gen;
	return ino;
}

/* files/ name escaping (documented in tracemount(1)): member names are
 * split at '/'; in each component '%' becomes "%25", and components that
 * cannot be directory entries become "%" (empty, as in "a//b" or a leading
 * '/'), "%2E" (".") and "%2E%2E" (".."). The mapping is reversible. */
static char *escape_component(const char *s, size_t n)
{
	if (n == 0)
		return tm_xstrdup("%");
	if (n == 1 && s[0] == '.')
		return tm_xstrdup("%2E");
	if (n == 2 && s[0] == '.' && s[1] == '.')
		return tm_xstrdup("%2E%2E");
	tm_buf b = {0};
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '%')
			tm_buf_puts(&b, "%25");
		else
			tm_buf_put(&b, &s[i], 1);
	}
	return tm_buf_detach(&b, NULL);
}

/* A free name for a member in `dir`: the escaped name, or with "~2", "~3"...
 * appended when an earlier member took it (duplicate member names, or a
 * file where a directory is needed). */
static char *free_name(tm_vtree *t, vt_ino dir, const char *base)
{
	if (!child_named(t, dir, base))
		return tm_xstrdup(base);
	for (unsigned k = 2;; k++) {
		tm_buf b = {0};
		tm_buf_printf(&b, "%s~%u", base, k);
		if (!child_named(t, dir, b.data))
			return tm_buf_detach(&b, NULL);
		tm_buf_free(&b);
	}
}

/* A hard link's target as a path relative to the link's directory, both
 * under files/ and escaped the same way (tracemount(1), "files/"). */
static char *relative_target(const char *link_name, const char *target)
{
	tm_buf b = {0};
	for (const char *p = link_name; (p = strchr(p, '/')); p++)
		tm_buf_puts(&b, "../");
	for (const char *p = target;;) {
		const char *slash = strchr(p, '/');
		size_t n = slash ? (size_t)(slash - p) : strlen(p);
		char *c = escape_component(p, n);
		tm_buf_puts(&b, c);
		free(c);
		if (!slash)
			break;
		tm_buf_puts(&b, "/");
		p = slash + 1;
	}
	return tm_buf_detach(&b, NULL);
}

static void add_member(tm_vtree *t, vt_ino files_dir, const tm_member_view *v)
{
	const tm_entry *e = &v->entry;
	const char *name = e->name;
	size_t len = strlen(name);
	/* A ZIP "d/" entry is a directory to the eye, whatever the merge thinks. */
	int as_dir = e->kind == TM_ENTRY_DIR || (len > 0 && name[len - 1] == '/' && e->size == 0);
	if (len > 0 && name[len - 1] == '/')
		len--;
	vt_ino dir = files_dir;
	size_t start = 0;
	for (;;) {
		const char *slash = memchr(name + start, '/', len - start);
		size_t end = slash ? (size_t)(slash - name) : len;
		char *comp = escape_component(name + start, end - start);
		if (!slash) {
			vt_ino existing = child_named(t, dir, comp);
			if (as_dir) {
				if (!existing || node_of(t, existing)->kind != VT_DIR) {
					char *nm = free_name(t, dir, comp);
					existing = add_node(t, dir, nm, VT_DIR);
					free(nm);
				}
				node_of(t, existing)->mtime = e->mtime ? e->mtime : node_of(t, existing)->mtime;
			} else {
				char *nm = free_name(t, dir, comp);
				int link = e->kind == TM_ENTRY_SYMLINK || (e->kind == TM_ENTRY_HARDLINK && e->link_target);
				vt_ino ino = add_node(t, dir, nm, link ? VT_LNK : VT_REG);
				free(nm);
				vt_node *n = node_of(t, ino);
				if (e->mtime)
					n->mtime = e->mtime;
				if (e->kind == TM_ENTRY_SYMLINK) {
					n->src = SRC_LINK;
					n->link = tm_xstrdup(e->link_target ? e->link_target : "");
				} else if (e->kind == TM_ENTRY_HARDLINK && e->link_target) {
					n->src = SRC_LINK;
					n->link = relative_target(e->name, e->link_target);
				} else if (e->blob) {
					n->src = SRC_BLOB;
					n->blob = tm_blob_ref(e->blob);
					n->size = e->size;
				} /* special files: empty regular files */
			}
			free(comp);
			return;
		}
		vt_ino sub = child_named(t, dir, comp);
		if (!sub || node_of(t, sub)->kind != VT_DIR) {
			char *nm = free_name(t, dir, comp);
			sub = add_node(t, dir, nm, VT_DIR);
			free(nm);
		}
		free(comp);
		dir = sub;
		start = end + 1;
	}
}

static const char *basename_of(const char *path)
{
	const char *s = strrchr(path, '/');
	return s && s[1] ? s + 1 : path;
}

tm_vtree *vtree_open(const char *archive_path, tm_error *err)
{
	tm_merge *m = tm_merge_open(archive_path, err);
	if (!m)
		return NULL;
	tm_vtree *t = tm_xcalloc(1, sizeof(*t));
	t->merge = m;
	pthread_mutex_init(&t->lock, NULL);
	t->n_slots = 64;
	t->slots = tm_xcalloc(t->n_slots, sizeof(*t->slots));
	add_node(t, 0, "", VT_DIR); /* the root, ino 1 */
	vt_ino files = add_node(t, VT_ROOT, "files", VT_DIR);
	add_gen(t, VT_ROOT, "metadata.json", GEN_METADATA);
	add_gen(t, VT_ROOT, "perfetto_manifest.json", GEN_MANIFEST);
	if (m->members_are_archive) {
		for (size_t i = 0; i < m->n_members; i++)
			add_member(t, files, &m->members[i]);
	} else {
		/* A single trace file (or a compressed one): files/ shows the input. */
		vt_ino ino = add_node(t, files, basename_of(archive_path), VT_REG);
		vt_node *n = node_of(t, ino);
		n->src = SRC_BLOB;
		n->blob = tm_blob_ref(m->top);
		n->size = (uint64_t)tm_blob_size(m->top);
	}
	return t;
}

void vtree_free(tm_vtree *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->n_nodes; i++) {
		vt_node *n = &t->nodes[i];
		free(n->name);
		free(n->kids);
		tm_blob_unref(n->blob);
		free(n->link);
		free(n->data);
	}
	free(t->nodes);
	free(t->slots);
	pthread_mutex_destroy(&t->lock);
	tm_merge_free(t->merge);
	free(t);
}

int vtree_lookup(tm_vtree *t, const char *path, vt_ino *ino, tm_error *err)
{
	vt_ino cur = VT_ROOT;
	const char *p = path;
	while (*p) {
		while (*p == '/')
			p++;
		if (!*p)
			break;
		const char *e = strchr(p, '/');
		size_t n = e ? (size_t)(e - p) : strlen(p);
		vt_node *dir = node_of(t, cur);
		if (dir->kind != VT_DIR)
			return tm_err(err, TM_ENOTDIR, "%s: Not a directory", path);
		char *comp = tm_xstrndup(p, n);
		vt_ino next = child_named(t, cur, comp);
		free(comp);
		if (!next)
			return tm_err(err, TM_ENOENT, "%s: No such file or directory", path);
		cur = next;
		p += n;
	}
	*ino = cur;
	return 0;
}

/* Render a generated file once; later callers get the same bytes. */
static void ensure_generated(tm_vtree *t, vt_node *n)
{
	pthread_mutex_lock(&t->lock);
	if (!n->ready) {
		tm_buf b = {0};
		int rc;
		switch (n->gen) {
		case GEN_METADATA:
			rc = tm_render_metadata(t->merge, &b, &n->err);
			break;
		case GEN_MANIFEST:
			rc = tm_render_manifest(t->merge, &b, &n->err);
			break;
		default:
			rc = tm_err(&n->err, TM_EIO, "no generator");
		}
		if (rc != 0)
			tm_buf_free(&b);
		n->data = tm_buf_detach(&b, &n->len);
		n->ready = 1;
	}
	pthread_mutex_unlock(&t->lock);
}

static void fill_stat(tm_vtree *t, vt_ino ino, vt_node *n, vt_stat *st)
{
	memset(st, 0, sizeof(*st));
	st->ino = ino;
	st->kind = n->kind;
	st->mtime = n->mtime;
	st->nlink = 1;
	if (n->kind == VT_DIR) {
		st->nlink = 2;
		for (size_t i = 0; i < n->n_kids; i++)
			st->nlink += node_of(t, n->kids[i])->kind == VT_DIR;
	} else if (n->src == SRC_BLOB) {
		st->size = n->size;
	} else if (n->src == SRC_LINK) {
		st->size = strlen(n->link);
	} else if (n->src == SRC_GEN) {
		ensure_generated(t, n);
		st->size = n->len;
	}
}

int vtree_stat(tm_vtree *t, vt_ino ino, vt_stat *st, tm_error *err)
{
	vt_node *n = node_of(t, ino);
	if (!n)
		return tm_err(err, TM_ENOENT, "no such node");
	fill_stat(t, ino, n, st);
	return 0;
}

int vtree_readdir(tm_vtree *t, vt_ino dir, vt_dirent_cb cb, void *ctx, tm_error *err)
{
	vt_node *d = node_of(t, dir);
	if (!d)
		return tm_err(err, TM_ENOENT, "no such node");
	if (d->kind != VT_DIR)
		return tm_err(err, TM_ENOTDIR, "%s: Not a directory", d->name);
	for (size_t i = 0; i < d->n_kids; i++) {
		vt_node *n = node_of(t, d->kids[i]);
		vt_stat st;
		/* Generated files not rendered yet get no attributes here, so
		 * `ls` never pays for them (DESIGN.md: listing computes nothing). */
		int cheap = n->src != SRC_GEN || n->ready;
		if (cheap)
			fill_stat(t, d->kids[i], n, &st);
		if (cb(ctx, n->name, d->kids[i], cheap ? &st : NULL))
			break;
	}
	return 0;
}

int vtree_readlink(tm_vtree *t, vt_ino ino, char *buf, size_t size, tm_error *err)
{
	vt_node *n = node_of(t, ino);
	if (!n || n->src != SRC_LINK)
		return tm_err(err, TM_ENOENT, "not a symbolic link");
	if (size == 0)
		return 0;
	snprintf(buf, size, "%s", n->link);
	return 0;
}

vt_file *vtree_file_open(tm_vtree *t, vt_ino ino, tm_error *err)
{
	vt_node *n = node_of(t, ino);
	if (!n)
		return tm_err(err, TM_ENOENT, "no such node"), NULL;
	if (n->kind == VT_DIR)
		return tm_err(err, TM_EISDIR, "%s: Is a directory", n->name), NULL;
	vt_file *f = tm_xcalloc(1, sizeof(*f));
	f->t = t;
	f->node = n;
	pthread_mutex_init(&f->lock, NULL);
	if (n->src == SRC_BLOB) {
		f->cursor = tm_cursor_open(n->blob, err);
		if (!f->cursor) {
			vtree_file_close(f);
			return NULL;
		}
	} else if (n->src == SRC_GEN) {
		ensure_generated(t, n);
	}
	return f;
}

ssize_t vtree_file_read(vt_file *f, void *buf, size_t n, uint64_t off, tm_error *err)
{
	vt_node *node = f->node;
	if (node->src == SRC_BLOB) {
		if (off >= node->size)
			return 0;
		if (n > node->size - off)
			n = (size_t)(node->size - off);
		size_t got = 0;
		pthread_mutex_lock(&f->lock);
		while (got < n) {
			ssize_t r = tm_cursor_pread(f->cursor, (char *)buf + got, n - got, off + got, err);
			if (r < 0) {
				pthread_mutex_unlock(&f->lock);
				if (err && err->code == TM_EINPUT)
					err->code = TM_EIO;
				return -1;
			}
			if (r == 0)
				break;
			got += (size_t)r;
		}
		pthread_mutex_unlock(&f->lock);
		return (ssize_t)got;
	}
	if (node->src == SRC_GEN) {
		if (node->err.code != TM_OK) {
			tm_err(err, TM_EIO, "%s", node->err.msg);
			return -1;
		}
		if (off >= node->len)
			return 0;
		if (n > node->len - off)
			n = (size_t)(node->len - off);
		memcpy(buf, node->data + off, n);
		return (ssize_t)n;
	}
	return 0;
}

int vtree_file_fd(vt_file *f, int *fd, uint64_t *off, uint64_t *size)
{
	if (f->node->src != SRC_BLOB || tm_blob_file_range(f->node->blob, fd, off) != 0)
		return -1;
	*size = f->node->size;
	return 0;
}

void vtree_file_close(vt_file *f)
{
	if (!f)
		return;
	tm_cursor_close(f->cursor);
	pthread_mutex_destroy(&f->lock);
	free(f);
}

int vtree_check(tm_vtree *t, tm_buf *summary, tm_error *err)
{
	return tm_render_summary(t->merge, summary, err);
}
