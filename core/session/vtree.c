/* core/session/vtree.c - the virtual tree: a node table built at mount time for the
 * static parts (root, files/, clocks/), machines/ built the first time it
 * is listed or looked into, generated files rendered once on first use and
 * shared by every reader.
 *
 * Locking: `tree` (a rwlock) guards the node table, the name index and
 * the child lists; nodes themselves are allocated one by one and never
 * move, so a node pointer stays valid once found. Every tier and every
 * generated file is built once, by the first reader that needs it, under a
 * lock of its own (DESIGN.md: readers of different generated files never
 * wait for each other's build; they wait only for what they need): a
 * generated file's `mu` guards its bytes, `gen_mu` the generation pass,
 * `machines_mu` the building of machines/, `scan_mu` the scan. Order: a
 * file's `mu`, then `gen_mu` or `machines_mu`, then `scan_mu`, then
 * `tree`; never the other way. A generated file's `ready` flag is atomic,
 * so readers that see it set read its bytes without a lock. */
#include "session/vtree.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "pass/gen.h"
#include "session/index.h"
#include "input/merge.h"
#include "session/pack.h"
#include "export/render.h"
#include "formats/registry.h"
#include "scan/scan.h"
#include "util/hash.h"
#include "util/ser.h"
#include "sort/spool.h"

typedef enum src_kind { SRC_NONE, SRC_BLOB, SRC_GEN, SRC_LINK } src_kind;

/* Generated files. Each renders into a buffer once (first stat or open);
 * the bytes never change afterwards, so every reader sees the same ones. */
typedef enum gen_kind {
	GEN_METADATA, GEN_MANIFEST, GEN_MACHINE, GEN_DOT, GEN_CSV,
	/* spooled by the generation pass (core/pass/gen.h), from GEN_PFTRACE on */
	GEN_PFTRACE,   /* merged.pftrace */
	GEN_TIMELINE,  /* timeline.tsv */
	GEN_PROCESSES, /* machines/<dir>/processes.tsv */
	GEN_THREADS,   /* machines/<dir>/threads.tsv */
	GEN_SLICES,    /* machines/<dir>/slices.tsv */
	GEN_PROFILE,   /* machines/<dir>/profile.folded */
	GEN_HEAP,      /* machines/<dir>/heap.tsv */
} gen_kind;

#define ROW_ALL UINT32_MAX /* a spooled file of the whole merge */

/* The sizes of the spooled files, by kind and row, that a generation pass
 * of these inputs made: this mount's, or an earlier one's from the index
 * cache. stat answers with them before the pass has run here (DESIGN.md:
 * the sizes of generated files are kept in the index). */
typedef struct gen_sizes {
	pthread_mutex_t mu;
	tm_u64map ix;     /* kind << 32 | row -> index in e */
	struct gen_size {
		uint64_t key, size;
	} *e;
	size_t n, cap;
} gen_sizes;

/* A generated file's bytes and how far they are built: only the nodes of
 * generated files have one (an archive may have 100,000 members). */
typedef struct vt_gen {
	pthread_mutex_t mu; /* held while the bytes are built */
	atomic_int ready;   /* data/len (or err) are final */
	int spool_fd;       /* the bytes (len of them) when not in `data`: the spooled
	                       files read the generation pass's output (owned by the
	                       tree), a large metadata.json or clocks/edges.csv a file
	                       of its own (owns_fd) */
	int owns_fd;
	int streamed;       /* the bytes went to timeline_fd when made: none to read */
	const tm_ext *ext;  /* a machine's view, or a whole one whose header came
			     * last: where its bytes lie in spool_fd (and
			     * whole_fd, the whole merge's file) */
	int whole_fd;
	size_t n_ext;
	const tm_spooled *src; /* a view made when read (timeline.tsv): its
				  bytes come from tm_spooled_read of row src_row */
	size_t src_row;
	char *data;
	size_t len;
	tm_error *err;      /* why reads fail (TM_EIO), or NULL: made only on a
	                       failure (a tm_error is 4 KB; an archive with 20,000
	                       machines has 140,000 generated files) */
} vt_gen;

/* A node of the tree: one per member of the archive (there may be
 * 100,000), so its fields are packed and its name is part of it. */
/* One per member of an archive that may hold 100,000: kept small. */
typedef struct vt_node {
	vt_ino parent;
	vt_ino *kids;
	uint32_t n_kids, cap_kids;
	union {               /* by `src` */
		tm_blob *blob; /* SRC_BLOB */
		char *link;    /* SRC_LINK */
		vt_gen *g;     /* SRC_GEN */
	};
	uint64_t size;    /* SRC_BLOB */
	int64_t mtime;
	uint32_t row;     /* GEN_MACHINE and spooled files: the machine row or ROW_ALL */
	uint8_t kind;     /* vt_kind */
	uint8_t src;      /* src_kind */
	uint8_t gen;      /* gen_kind, SRC_GEN */
	char name[];
} vt_node;

struct tm_vtree {
	tm_merge *merge;
	vt_node **nodes;  /* ino i is nodes[i - 1] */
	size_t n_nodes, cap_nodes;
	/* (parent, name) -> ino, open addressing; rebuilt when it fills. */
	vt_ino *slots;
	size_t n_slots;
	pthread_rwlock_t tree;
	pthread_mutex_t scan_mu;
	tm_scan *scan;          /* the scan tier, run once under `scan_mu` */
	tm_u64map dir_alias;    /* files/: a file whose name a directory also wanted
				   -> the directory renamed for it (dir_for) */
	char *index_path;       /* the index cache's file, NULL: none */
	int index_given;        /* index_path is the user's (-o index=), not the cache's */
	atomic_int index_refused; /* a write of it failed or was refused: no more tries */
	tm_buf index_key;       /* the inputs' key as the scan found them (empty:
				   none), under `scan_mu` until the scan is made */
	int index_missed;       /* the index was read and had no results (its
				   key is in index_key), under `scan_mu` */
	gen_sizes sizes;
	void (*warn)(const char *msg);                       /* vt_inputs.warn */
	void (*progress)(void *ctx, const vt_progress *p);   /* vt_inputs.progress */
	void *progress_ctx;
	pthread_mutex_t gen_mu;
	tm_gen *gen;            /* the generation pass, run once under `gen_mu` */
	/* The stats the parse counted, for metadata.json: a pass's
	 * tm_gen.stats or the index's, set once (parsed_publish) and read
	 * without a lock, so that metadata.json never waits for another
	 * file's generation pass. Its own pass runs under `stats_mu`. */
	_Atomic(tm_statlist *) parsed;
	pthread_mutex_t stats_mu;
	tm_error stats_err;     /* why metadata.json's own pass failed (sticky) */
	unsigned gen_have;      /* the TM_GEN_* families in `gen` */
	unsigned gen_top;       /* those made for the whole merge alone (TM_GEN_TOP) */
	int gen_only_wanted;    /* vt_inputs.gen_only_wanted */
	int timeline_fd;        /* vt_inputs.timeline_fd, -1: none */
	tm_error gen_err;       /* why it failed */
	void (*log)(const char *msg); /* vtree_set_logger */
	pthread_mutex_t machines_mu;
	atomic_int machines_built; /* machines/ is built (under `machines_mu`) */
	vt_ino files_dir, machines_dir;
	vt_ino *file_node;      /* by file id: the node under files/ showing its bytes, or 0 */
	size_t n_file_node;
	/* The open files, so that vtree_free closes those nobody closed: a
	 * FUSE RELEASE that an unmount overtook never comes (LeakSanitizer
	 * saw one in t_index.sh). */
	pthread_mutex_t files_mu;
	vt_file *files;
};

struct vt_file {
	tm_vtree *t;
	vt_node *node;
	tm_cursor *cursor; /* SRC_BLOB */
	pthread_mutex_t lock;
	vt_file *prev, *next; /* in t->files once open */
	int listed;
};

/* Callers hold `tree` (or are the mount-time builder). */
static vt_node *node_of(tm_vtree *t, vt_ino ino)
{
	return ino >= 1 && ino <= t->n_nodes ? t->nodes[ino - 1] : NULL;
}

/* node_of for callers holding no lock. */
static vt_node *get_node(tm_vtree *t, vt_ino ino)
{
	pthread_rwlock_rdlock(&t->tree);
	vt_node *n = node_of(t, ino);
	pthread_rwlock_unlock(&t->tree);
	return n;
}

static uint64_t hash_name(vt_ino parent, const char *name)
{
	return tm_khash_pair(tm_khash_str(name), parent);
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

/* Callers hold `tree` for writing (or are the mount-time builder). */
static vt_ino add_node(tm_vtree *t, vt_ino parent, const char *name, vt_kind kind)
{
	TM_GROW(t->nodes, t->cap_nodes, t->n_nodes + 1);
	size_t len = strlen(name);
	vt_node *n = tm_xcalloc(1, sizeof(*n) + len + 1);
	t->nodes[t->n_nodes++] = n;
	memcpy(n->name, name, len + 1);
	n->kind = (uint8_t)kind;
	n->parent = parent;
	n->mtime = t->merge->mtime;
	vt_ino ino = (vt_ino)t->n_nodes;
	if (parent) {
		vt_node *p = node_of(t, parent);
		if (p->n_kids == p->cap_kids) {
			p->cap_kids = p->cap_kids ? p->cap_kids * 2 : 8;
			p->kids = tm_xrealloc(p->kids, p->cap_kids * sizeof(*p->kids));
		}
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
	n->row = ROW_ALL;
	n->g = tm_xcalloc(1, sizeof(*n->g));
	pthread_mutex_init(&n->g->mu, NULL);
	atomic_init(&n->g->ready, 0);
	n->g->spool_fd = -1;
	n->g->whole_fd = -1;
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

/* The directory `comp` (escaped) of `dir`, made when missing: the one of
 * that name, or, where a file took the name, the directory renamed for it
 * ("~2", ...) the first time, so that all the members below it share one
 * directory (before, each got a directory of its own: a~2/x, a~3/y). */
static vt_ino dir_for(tm_vtree *t, vt_ino dir, const char *comp)
{
	vt_ino sub = child_named(t, dir, comp);
	if (sub && node_of(t, sub)->kind == VT_DIR)
		return sub;
	const uint32_t *alias = sub ? tm_u64map_get(&t->dir_alias, sub) : NULL;
	if (alias)
		return *alias - 1;
	char *nm = free_name(t, dir, comp);
	vt_ino d = add_node(t, dir, nm, VT_DIR);
	free(nm);
	if (sub && d <= UINT32_MAX)
		tm_u64map_put(&t->dir_alias, sub, (uint32_t)d);
	return d;
}

/* A hard link's target as a path relative to the link's directory, both
 * under files/: the target's place in the tree (`target_path`, the member
 * it names), else its name escaped the same way (tracemount(1), "files/"). */
static char *relative_target(const char *link_name, const char *target, const char *target_path)
{
	tm_buf b = {0};
	for (const char *p = link_name; (p = strchr(p, '/')); p++)
		tm_buf_puts(&b, "../");
	if (target_path) {
		tm_buf_puts(&b, target_path);
		return tm_buf_detach(&b, NULL);
	}
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

/* Member `v` under files/ (its node, or 0 for a directory); a hard link's
 * target is at `target_path` in the tree, NULL when no member before it
 * has that name. Sets *node to the member's node. */
static vt_ino add_member(tm_vtree *t, vt_ino files_dir, const tm_member_view *v, const char *target_path,
			 vt_ino *node)
{
	vt_ino ret = 0;
	*node = 0;
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
			if (as_dir) {
				vt_ino existing = dir_for(t, dir, comp);
				node_of(t, existing)->mtime = e->mtime ? e->mtime : node_of(t, existing)->mtime;
			} else {
				char *nm = free_name(t, dir, comp);
				int link = e->kind == TM_ENTRY_SYMLINK || (e->kind == TM_ENTRY_HARDLINK && e->link_target);
				vt_ino ino = add_node(t, dir, nm, link ? VT_LNK : VT_REG);
				free(nm);
				*node = ino;
				vt_node *n = node_of(t, ino);
				if (e->mtime)
					n->mtime = e->mtime;
				if (e->kind == TM_ENTRY_SYMLINK) {
					n->src = SRC_LINK;
					n->link = tm_xstrdup(e->link_target ? e->link_target : "");
				} else if (e->kind == TM_ENTRY_HARDLINK && e->link_target) {
					n->src = SRC_LINK;
					n->link = relative_target(e->name, e->link_target, target_path);
				} else if (e->blob) {
					ret = ino;
					n->src = SRC_BLOB;
					n->blob = tm_blob_ref(e->blob);
					n->size = e->size;
				} /* special files: empty regular files */
			}
			free(comp);
			return ret;
		}
		vt_ino sub = dir_for(t, dir, comp);
		free(comp);
		dir = sub;
		start = end + 1;
	}
}

static char *path_below(tm_vtree *t, vt_ino ino, vt_ino top, const char *sep);

/* The members seen so far by name, for the hard links of a TAR (a link
 * names a member archived before it; the latest of that name, as tar
 * extracts it): kept only when the archive has one. By the name's hash,
 * the latest member of it; another name of the same hash hides it, and the
 * link then keeps its target's name escaped, as without this. */
typedef struct hard_links {
	tm_u64map latest;     /* tm_khash_str(name) -> member index */
	vt_ino *node;         /* by member index, NULL when not wanted */
} hard_links;

static vt_ino hard_link_find(const hard_links *h, const tm_merge *m, const char *name)
{
	const uint32_t *v = h->node ? tm_u64map_get(&h->latest, tm_khash_str(name)) : NULL;
	if (!v || strcmp(m->members[*v - 1].entry.name, name) != 0)
		return 0;
	return h->node[*v - 1];
}

/* metadata.json's files_path of file `id`, shown at `ino`, where that is
 * not "files/" + its name (tm_merge.files_paths): an escaped component, or
 * a "~2" of a name taken before it. */
static void note_files_path(tm_vtree *t, size_t id, vt_ino ino)
{
	tm_merge *m = t->merge;
	const char *name = id < m->n_files ? m->files[id].name : NULL;
	if (!name)
		return;
	/* the names of the nodes up to files/, against name's components from
	 * its end: nothing is made for a name shown as it is (all, as a rule) */
	size_t end = strlen(name);
	vt_ino i = ino;
	for (; i && i != t->files_dir; i = node_of(t, i)->parent) {
		const char *nm = node_of(t, i)->name;
		size_t n = strlen(nm);
		if (n > end || memcmp(name + end - n, nm, n) != 0)
			break;
		end -= n;
		if (node_of(t, i)->parent == t->files_dir)
			continue;
		if (!end || name[end - 1] != '/')
			break;
		end--;
	}
	if (i == t->files_dir && end == 0)
		return;
	char *rel = path_below(t, ino, t->files_dir, "/");
	if (!m->files_paths)
		m->files_paths = tm_xcalloc(m->n_files, sizeof(*m->files_paths));
	tm_buf b = {0};
	tm_buf_printf(&b, "files/%s", rel);
	free(m->files_paths[id]);
	m->files_paths[id] = tm_buf_detach(&b, NULL);
	free(rel);
}

static const char *basename_of(const char *path)
{
	const char *s = strrchr(path, '/');
	return s && s[1] ? s + 1 : path;
}

tm_vtree *vtree_open(const char *archive_path, tm_error *err)
{
	return vtree_open_inputs(&(vt_inputs){.paths = &archive_path, .n = 1}, err);
}

tm_vtree *vtree_open_inputs(const vt_inputs *in, tm_error *err)
{
	tm_merge *m = tm_merge_open_inputs(in->paths, in->n, in->manifest, in->as_members, err);
	if (!m)
		return NULL;
	if (in->name)
		tm_merge_set_name(m, in->name);
	const char *archive_path = in->n ? in->paths[0] : "";
	tm_vtree *t = tm_xcalloc(1, sizeof(*t));
	t->merge = m;
	pthread_rwlock_init(&t->tree, NULL);
	pthread_mutex_init(&t->scan_mu, NULL);
	pthread_mutex_init(&t->gen_mu, NULL);
	pthread_mutex_init(&t->stats_mu, NULL);
	pthread_mutex_init(&t->machines_mu, NULL);
	pthread_mutex_init(&t->files_mu, NULL);
	pthread_mutex_init(&t->sizes.mu, NULL);
	atomic_init(&t->machines_built, 0);
	/* Now, while relative paths still mean what the user meant (a daemon
	 * leaves its working directory). */
	if (!in->no_index) {
		t->index_path = in->index_path ? tm_xstrdup(in->index_path)
					       : tm_index_default_path(in->paths, in->n, in->manifest, in->as_members);
		t->index_given = in->index_path != NULL;
	}
	t->warn = in->warn;
	t->gen_only_wanted = in->gen_only_wanted;
	t->timeline_fd = in->gen_only_wanted && in->timeline_fd > 0 ? in->timeline_fd : -1;
	t->progress = in->progress;
	t->progress_ctx = in->progress_ctx;
	t->n_slots = 64;
	t->slots = tm_xcalloc(t->n_slots, sizeof(*t->slots));
	t->n_file_node = m->n_files;
	t->file_node = tm_xcalloc(m->n_files ? m->n_files : 1, sizeof(*t->file_node));
	add_node(t, 0, "", VT_DIR); /* the root, ino 1 */
	vt_ino clocks = add_node(t, VT_ROOT, "clocks", VT_DIR);
	add_gen(t, clocks, "edges.csv", GEN_CSV);
	add_gen(t, clocks, "graph.dot", GEN_DOT);
	vt_ino files = add_node(t, VT_ROOT, "files", VT_DIR);
	t->files_dir = files;
	t->machines_dir = add_node(t, VT_ROOT, "machines", VT_DIR);
	add_gen(t, VT_ROOT, "merged.pftrace", GEN_PFTRACE);
	add_gen(t, VT_ROOT, "metadata.json", GEN_METADATA);
	add_gen(t, VT_ROOT, "perfetto_manifest.json", GEN_MANIFEST);
	add_gen(t, VT_ROOT, "timeline.tsv", GEN_TIMELINE);
	if (m->members_are_archive) {
		hard_links hl = {{0}, NULL};
		for (size_t i = 0; i < m->n_members && !hl.node; i++)
			if (m->members[i].entry.kind == TM_ENTRY_HARDLINK && m->members[i].entry.link_target &&
			    m->n_members < UINT32_MAX)
				hl.node = tm_xcalloc(m->n_members, sizeof(*hl.node));
		for (size_t i = 0; i < m->n_members; i++) {
			const tm_entry *e = &m->members[i].entry;
			char *target = NULL;
			if (e->kind == TM_ENTRY_HARDLINK && e->link_target) {
				vt_ino to = hard_link_find(&hl, m, e->link_target);
				if (to)
					target = path_below(t, to, files, "/");
			}
			vt_ino node;
			vt_ino ino = add_member(t, files, &m->members[i], target, &node);
			free(target);
			if (hl.node && node) {
				hl.node[i] = node;
				tm_u64map_put(&hl.latest, tm_khash_str(e->name), (uint32_t)i);
			}
			int64_t id = m->members[i].file_id;
			if (ino && id >= 0 && (size_t)id < t->n_file_node) {
				t->file_node[id] = ino;
				note_files_path(t, (size_t)id, ino);
			}
		}
		tm_u64map_free(&hl.latest);
		free(hl.node);
	} else {
		/* A single trace file (or a compressed one): files/ shows the input. */
		vt_ino ino = add_node(t, files, basename_of(archive_path), VT_REG);
		vt_node *n = node_of(t, ino);
		n->src = SRC_BLOB;
		n->blob = tm_blob_ref(m->top);
		n->size = (uint64_t)tm_blob_size(m->top);
		if (t->n_file_node > 0)
			t->file_node[0] = ino;
	}
	return t;
}

void vtree_free(tm_vtree *t)
{
	if (!t)
		return;
	while (t->files)
		vtree_file_close(t->files);
	pthread_mutex_destroy(&t->files_mu);
	for (size_t i = 0; i < t->n_nodes; i++) {
		vt_node *n = t->nodes[i];
		free(n->kids);
		if (n->src == SRC_BLOB)
			tm_blob_unref(n->blob);
		else if (n->src == SRC_LINK)
			free(n->link);
		else if (n->src == SRC_GEN) {
			if (n->g->owns_fd)
				close(n->g->spool_fd);
			pthread_mutex_destroy(&n->g->mu);
			free(n->g->err);
			free(n->g->data);
			free(n->g);
		}
		free(n);
	}
	free(t->nodes);
	free(t->slots);
	free(t->file_node);
	pthread_rwlock_destroy(&t->tree);
	pthread_mutex_destroy(&t->scan_mu);
	tm_u64map_free(&t->dir_alias);
	free(t->index_path);
	tm_buf_free(&t->index_key);
	pthread_mutex_destroy(&t->sizes.mu);
	tm_u64map_free(&t->sizes.ix);
	free(t->sizes.e);
	pthread_mutex_destroy(&t->gen_mu);
	pthread_mutex_destroy(&t->stats_mu);
	pthread_mutex_destroy(&t->machines_mu);
	tm_gen_free(t->gen);
	tm_statlist *parsed = atomic_load(&t->parsed);
	if (parsed)
		tm_statlist_free(parsed);
	free(parsed);
	tm_scan_free(t->scan);
	tm_merge_free(t->merge);
	free(t);
}

/* ---- the scan tier and machines/ ------------------------------------------ */

/* ---- the scan: from the index cache, or read with progress --------------- */

static void warn(tm_vtree *t, const char *fmt, const char *a, const char *b)
{
	if (!t->warn)
		return;
	tm_buf m = {0};
	tm_buf_printf(&m, fmt, a, b);
	t->warn(m.data);
	tm_buf_free(&m);
}

/* ---- the sizes of the spooled files ---------------------------------------- */

static uint64_t size_key(gen_kind kind, uint32_t row)
{
	return (uint64_t)kind << 32 | row;
}

/* The size a generation pass gave the file (kind, row): 1 and *size, or 0. */
static int size_known(tm_vtree *t, gen_kind kind, uint32_t row, uint64_t *size)
{
	gen_sizes *z = &t->sizes;
	pthread_mutex_lock(&z->mu);
	const uint32_t *v = tm_u64map_get(&z->ix, size_key(kind, row));
	if (v)
		*size = z->e[*v - 1].size;
	pthread_mutex_unlock(&z->mu);
	return v != NULL;
}

/* Note a size. Returns 1 for a new file, 0 for the size noted before, -1
 * when another size was noted for the file (it is replaced). Caller holds
 * sizes.mu. */
static int size_note(gen_sizes *z, uint64_t key, uint64_t size)
{
	const uint32_t *v = tm_u64map_get(&z->ix, key);
	if (v) {
		uint64_t *at = &z->e[*v - 1].size;
		int same = *at == size;
		*at = size;
		return same ? 0 : -1;
	}
	TM_GROW(z->e, z->cap, z->n + 1);
	z->e[z->n].key = key;
	z->e[z->n].size = size;
	tm_u64map_put(&z->ix, key, (uint32_t)z->n++);
	return 1;
}

static void save_sizes(const void *obj, struct tm_ser_out *out)
{
	const gen_sizes *z = obj;
	tm_index_size *e = tm_xcalloc(z->n ? z->n : 1, sizeof(*e));
	for (size_t i = 0; i < z->n; i++)
		e[i] = (tm_index_size){(uint32_t)(z->e[i].key >> 32), (uint32_t)z->e[i].key, z->e[i].size};
	tm_index_sizes_save(e, z->n, out);
	free(e);
}

/* Take the sizes of an index's TM_INDEX_SIZES section: all of them, or
 * none (said) when one is not a spooled file's. */
static void load_sizes(tm_vtree *t, const void *p, size_t len)
{
	tm_index_size *e = NULL;
	size_t n = 0;
	const char *why = NULL;
	gen_sizes got = {0};
	if (tm_index_sizes_load(p, len, &e, &n, &why) == 0) {
		for (size_t i = 0; i < n && !why; i++) {
			if (e[i].kind < GEN_PFTRACE || e[i].kind > GEN_HEAP)
				why = "a size of no such file";
			else if (size_note(&got, size_key((gen_kind)e[i].kind, e[i].row), e[i].size) != 1)
				why = "two sizes of one file";
		}
	}
	if (why) {
		warn(t, "index %s: sizes ignored: %s", t->index_path, why);
	} else {
		pthread_mutex_lock(&t->sizes.mu);
		for (size_t i = 0; i < got.n; i++)
			size_note(&t->sizes, got.e[i].key, got.e[i].size);
		pthread_mutex_unlock(&t->sizes.mu);
	}
	free(e);
	tm_u64map_free(&got.ix);
	free(got.e);
}

static void save_parsed(const void *obj, struct tm_ser_out *out)
{
	tm_statlist_save(obj, out);
}

/* Make `l` (owned) the parse's stats unless some pass or the index gave
 * them first (then it is dropped: they are the same). 1 when it was taken. */
static int parsed_publish(tm_vtree *t, tm_statlist *l)
{
	tm_statlist *none = NULL;
	if (atomic_compare_exchange_strong(&t->parsed, &none, l))
		return 1;
	tm_statlist_free(l);
	free(l);
	return 0;
}

/* Take the parse's stats of an index's TM_INDEX_STATS section, unless
 * they name a file or machine row the scan `s` has not (said). */
static void load_parsed(tm_vtree *t, const tm_scan *s, const void *p, size_t len)
{
	tm_ser_rd r = tm_ser_reader(p, len);
	tm_statlist *l = tm_xcalloc(1, sizeof(*l));
	const char *why = NULL;
	if (tm_statlist_load(l, &r) != 0 || r.left)
		why = r.why ? r.why : "bytes after the stats";
	for (size_t i = 0; !why && i < l->n; i++)
		if (l->v[i].file_id >= s->n_files || l->v[i].machine_row >= s->machines.n)
			why = "a stat of no file or machine row";
	if (why) {
		warn(t, "index %s: stats ignored: %s", t->index_path, why);
		tm_statlist_free(l);
		free(l);
		return;
	}
	parsed_publish(t, l);
}

/* The scan's results from the index, or NULL (a miss, said when the file
 * could not be trusted). `key` is the inputs' key, empty when they could
 * not be read for it. */
static tm_scan *scan_from_index(tm_vtree *t, tm_buf *key)
{
	if (tm_index_key(t->merge, key) != 0) {
		key->len = 0;
		return NULL;
	}
	char *why = NULL;
	tm_index *ix = tm_index_read(t->index_path, key, &why);
	if (!ix) {
		if (why)
			warn(t, "index %s: ignored: %s", t->index_path, why);
		free(why);
		return NULL;
	}
	size_t len = 0;
	const void *p = tm_index_find(ix, TM_INDEX_SCAN, &len);
	const char *bad = "no scan results";
	/* spending: the load gives back the pages it passes, all of them
	 * inside the scan's section, so the sizes' section stays whole */
	tm_scan *s = p ? tm_scan_load(p, len, t->merge->n_files, 1, &bad) : NULL;
	if (!s)
		warn(t, "index %s: ignored: %s", t->index_path, bad);
	else if ((p = tm_index_find(ix, TM_INDEX_SIZES, &len)) != NULL)
		load_sizes(t, p, len);
	if (s && (p = tm_index_find(ix, TM_INDEX_STATS, &len)) != NULL)
		load_parsed(t, s, p, len);
	tm_index_free(ix);
	return s;
}

/* Write the index file; a failure is a warning. A file the user named
 * that holds something else is left alone (tm_index_foreign); a foreign
 * file among the cache's own is replaced. */
static void index_write(tm_vtree *t, const tm_buf *key, const tm_index_section *sec, size_t n)
{
	/* once refused, not tried again: the scan's write and the later
	 * ones (the parse's stats, the sizes) would say it again */
	if (atomic_load(&t->index_refused))
		return;
	tm_error err = {0};
	if (t->index_given && tm_index_foreign(t->index_path)) {
		atomic_store(&t->index_refused, 1);
		warn(t, "index %s: not written: %s", t->index_path, "it holds something else, left as it is");
	} else if (tm_index_write(t->index_path, key, sec, n, &err) != 0) {
		atomic_store(&t->index_refused, 1);
		warn(t, "index %s: not written: %s", t->index_path, err.msg);
	}
}

static void save_scan(const void *s, struct tm_ser_out *out)
{
	tm_scan_save(s, out);
}

/* Keep a scan's results, unless the scan failed for a reason that may not
 * hold next time (an I/O error). Never fails the caller. */
static void scan_to_index(tm_vtree *t, const tm_buf *key, const tm_scan *s)
{
	if (!key->len || (s->failed && s->err.code != TM_EINPUT))
		return;
	tm_index_section sec = {TM_INDEX_SCAN, save_scan, s};
	index_write(t, key, &sec, 1);
}

typedef struct progress_ctx {
	tm_vtree *t;
	struct timespec start;
	double last;       /* seconds when last reported */
} progress_ctx;

static double seconds_since(const struct timespec *t0)
{
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	return (double)(now.tv_sec - t0->tv_sec) + (double)(now.tv_nsec - t0->tv_nsec) / 1e9;
}

/* tm_scan_sink.progress: passed on at most ten times a second (the end
 * is reported by scan_load_or_run, which knows how it went). */
static void on_scan_progress(void *ctx, const tm_scan_progress *p)
{
	progress_ctx *pc = ctx;
	double now = seconds_since(&pc->start);
	if (!p->file || now - pc->last < 0.1)
		return;
	pc->last = now;
	vt_progress v = {p->done, p->total, p->file, now, 0, 0, 0, VT_SCAN, 0};
	pc->t->progress(pc->t->progress_ctx, &v);
}

/* The bytes of the trace files a scan read. */
static uint64_t scanned_bytes(const tm_vtree *t, const tm_scan *s)
{
	uint64_t bytes = 0;
	for (size_t i = 0; i < t->merge->n_files && i < s->n_files; i++) {
		int64_t size = t->merge->files[i].blob ? tm_blob_size(t->merge->files[i].blob) : -1;
		if (s->files[i].scanned && size > 0)
			bytes += (uint64_t)size;
	}
	return bytes;
}

/* A scan tier being made: when it started, and the inputs' key. */
typedef struct scan_start {
	progress_ctx pc;
	tm_buf key;
} scan_start;

/* Start making the scan tier (caller holds `scan_mu`): the index's
 * results when it has them, else NULL (the inputs are to be read). */
static tm_scan *scan_begin(tm_vtree *t, scan_start *st)
{
	*st = (scan_start){.pc = {.t = t}};
	clock_gettime(CLOCK_MONOTONIC, &st->pc.start);
	if (!t->index_path)
		return NULL;
	if (t->index_missed) { /* asked before (scan_if_known): not again */
		st->key = t->index_key;
		t->index_key = (tm_buf){0};
		return NULL;
	}
	return scan_from_index(t, &st->key);
}

/* The scan tier is `s` (read now unless from_index): kept in the index,
 * its end reported, its failure logged. Caller holds `scan_mu`. */
static void scan_install(tm_vtree *t, scan_start *st, tm_scan *s, int from_index)
{
	if (!from_index && t->index_path)
		scan_to_index(t, &st->key, s);
	tm_buf_free(&t->index_key);
	t->index_key = st->key; /* for the sizes a generation pass finds */
	st->key = (tm_buf){0};
	if (t->progress) {
		uint64_t bytes = scanned_bytes(t, s);
		vt_progress v = {bytes, bytes, NULL, seconds_since(&st->pc.start), 1, from_index, s->failed, VT_SCAN, 0};
		t->progress(t->progress_ctx, &v);
	}
	t->scan = s;
	t->index_missed = 0;
	if (s->failed && t->log)
		t->log(s->err.msg);
}

/* The scan tier when it is made or the index has it, else NULL: nothing
 * is read (the first generation pass may make it, gen_first). */
static tm_scan *scan_if_known(tm_vtree *t)
{
	pthread_mutex_lock(&t->scan_mu);
	if (!t->scan && t->index_path && !t->index_missed) {
		scan_start st;
		tm_scan *s = scan_begin(t, &st);
		if (s) {
			scan_install(t, &st, s, 1);
		} else {
			tm_buf_free(&t->index_key);
			t->index_key = st.key;
			t->index_missed = 1;
		}
	}
	tm_scan *s = t->scan;
	pthread_mutex_unlock(&t->scan_mu);
	return s;
}

/* The scan's result, run once, by the first reader that needs it (the
 * others wait for it under `scan_mu`): from the index when it has them,
 * else read. */
static tm_scan *scan_get(tm_vtree *t)
{
	pthread_mutex_lock(&t->scan_mu);
	if (!t->scan) {
		scan_start st;
		tm_scan *s = scan_begin(t, &st);
		int from_index = s != NULL;
		if (!s) {
			tm_scan_sink sink = {.ctx = &st.pc, .progress = on_scan_progress};
			s = tm_scan_run(t->merge, t->progress ? &sink : NULL);
		}
		scan_install(t, &st, s, from_index);
	}
	tm_scan *s = t->scan;
	pthread_mutex_unlock(&t->scan_mu);
	return s;
}

/* The path of a node below files/, components joined with `sep`. Caller
 * holds `tree`. */
static char *path_below(tm_vtree *t, vt_ino ino, vt_ino top, const char *sep)
{
	size_t n = 0;
	for (vt_ino i = ino; i && i != top; i = node_of(t, i)->parent)
		n++;
	vt_ino *chain = tm_xmalloc((n ? n : 1) * sizeof(*chain));
	n = 0;
	for (vt_ino i = ino; i && i != top; i = node_of(t, i)->parent)
		chain[n++] = i;
	tm_buf b = {0};
	while (n > 0) {
		tm_buf_puts(&b, node_of(t, chain[--n])->name);
		if (n > 0)
			tm_buf_puts(&b, sep);
	}
	free(chain);
	return tm_buf_detach(&b, NULL);
}

/* machines/<dir>/{files/, machine.json} for every machine row: built once,
 * the first time machines/ is listed or looked into (runs the scan). A
 * file's link is named after its path under files/ with each '/' written
 * "%2F" (tracemount(1), "Machine folders"). */
static void ensure_machines(tm_vtree *t)
{
	if (atomic_load_explicit(&t->machines_built, memory_order_acquire))
		return;
	pthread_mutex_lock(&t->machines_mu);
	if (!atomic_load_explicit(&t->machines_built, memory_order_relaxed)) {
		tm_scan *s = scan_get(t);
		char **dns = tm_machines_dir_names(&s->machines);
		tm_row_files rf;
		tm_scan_row_files(s, &rf);
		pthread_rwlock_wrlock(&t->tree);
		for (uint32_t r = 0; r < s->machines.n; r++) {
			char *nm = free_name(t, t->machines_dir, dns[r]);
			vt_ino dir = add_node(t, t->machines_dir, nm, VT_DIR);
			free(nm);
			vt_ino fdir = add_node(t, dir, "files", VT_DIR);
			vt_ino mj = add_gen(t, dir, "machine.json", GEN_MACHINE);
			node_of(t, mj)->row = r;
			node_of(t, add_gen(t, dir, "merged.pftrace", GEN_PFTRACE))->row = r;
			node_of(t, add_gen(t, dir, "timeline.tsv", GEN_TIMELINE))->row = r;
			node_of(t, add_gen(t, dir, "processes.tsv", GEN_PROCESSES))->row = r;
			node_of(t, add_gen(t, dir, "threads.tsv", GEN_THREADS))->row = r;
			node_of(t, add_gen(t, dir, "slices.tsv", GEN_SLICES))->row = r;
			node_of(t, add_gen(t, dir, "profile.folded", GEN_PROFILE))->row = r;
			node_of(t, add_gen(t, dir, "heap.tsv", GEN_HEAP))->row = r;
			for (size_t j = rf.first[r]; j < rf.first[r + 1]; j++) {
				size_t i = rf.files[j];
				if (i >= t->n_file_node || !t->file_node[i])
					continue;
				char *rel = path_below(t, t->file_node[i], t->files_dir, "/");
				char *flat = path_below(t, t->file_node[i], t->files_dir, "%2F");
				char *ln = free_name(t, fdir, flat);
				vt_ino l = add_node(t, fdir, ln, VT_LNK);
				vt_node *n = node_of(t, l);
				n->src = SRC_LINK;
				tm_buf b = {0};
				tm_buf_printf(&b, "../../../files/%s", rel);
				n->link = tm_buf_detach(&b, NULL);
				free(ln);
				free(flat);
				free(rel);
			}
		}
		pthread_rwlock_unlock(&t->tree);
		tm_row_files_free(&rf);
		tm_machines_dir_names_free(dns, s->machines.n);
		atomic_store_explicit(&t->machines_built, 1, memory_order_release);
	}
	pthread_mutex_unlock(&t->machines_mu);
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
		if (cur == t->machines_dir)
			ensure_machines(t);
		char *comp = tm_xstrndup(p, n);
		pthread_rwlock_rdlock(&t->tree);
		vt_node *dir = node_of(t, cur);
		int is_dir = dir->kind == VT_DIR;
		vt_ino next = is_dir ? child_named(t, cur, comp) : 0;
		pthread_rwlock_unlock(&t->tree);
		free(comp);
		if (!is_dir)
			return tm_err(err, TM_ENOTDIR, "%s: Not a directory", path);
		if (!next)
			return tm_err(err, TM_ENOENT, "%s: No such file or directory", path);
		cur = next;
		p += n;
	}
	*ino = cur;
	return 0;
}

/* Views that show the merge itself: unreadable (EIO) after a failed scan. */
static void fail_if_scan_failed(const tm_scan *s, tm_error *err)
{
	if (s->failed)
		tm_err(err, TM_EIO, "%s", s->err.msg);
}

/* The index with all that is known now: the scan's results, the sizes
 * noted, and the parse's stats once made. Caller holds `sizes.mu`. */
static void index_write_all(tm_vtree *t, const tm_scan *s)
{
	if (!t->index_path || !t->index_key.len)
		return;
	tm_statlist *parsed = atomic_load(&t->parsed);
	tm_index_section sec[] = {{TM_INDEX_SCAN, save_scan, s},
				  {TM_INDEX_SIZES, save_sizes, &t->sizes},
				  {TM_INDEX_STATS, save_parsed, parsed}};
	index_write(t, &t->index_key, sec, parsed ? 3 : 2);
}

/* Note the sizes of the files of the families `built` (TM_GEN_*) in `g`
 * and keep them in the index with the scan's results, so that the next
 * mount of these inputs answers stat without a generation pass. Caller
 * holds `gen_mu`. */
static void sizes_from_gen(tm_vtree *t, const tm_scan *s, const tm_gen *g, unsigned built, int new_stats)
{
	const struct {
		unsigned family;
		gen_kind kind;
		const tm_spooled *sp;
	} f[] = {
		{TM_GEN_PFTRACE, GEN_PFTRACE, g->pftrace},
		{TM_GEN_TIMELINE, GEN_TIMELINE, g->timeline},
		{TM_GEN_TABLES, GEN_PROCESSES, g->tables ? g->tables->processes : NULL},
		{TM_GEN_TABLES, GEN_THREADS, g->tables ? g->tables->threads : NULL},
		{TM_GEN_TABLES, GEN_SLICES, g->tables ? g->tables->slices : NULL},
		{TM_GEN_TABLES, GEN_PROFILE, g->tables ? g->tables->profile : NULL},
		{TM_GEN_TABLES, GEN_HEAP, g->tables ? g->tables->heap : NULL},
	};
	gen_sizes *z = &t->sizes;
	int added = 0, changed = 0;
	pthread_mutex_lock(&z->mu);
	for (size_t i = 0; i < sizeof f / sizeof f[0]; i++) {
		const tm_spooled *sp = f[i].sp;
		if (!(built & f[i].family) || !sp)
			continue;
		int rc = 0;
		if (tm_spooled_has(sp, TM_SPOOLED_ALL) || sp->streamed)
			rc = size_note(z, size_key(f[i].kind, ROW_ALL), tm_spooled_size(sp, TM_SPOOLED_ALL));
		added |= rc > 0;
		changed |= rc < 0;
		for (size_t r = 0; tm_spooled_has(sp, r); r++) {
			rc = size_note(z, size_key(f[i].kind, (uint32_t)r), tm_spooled_size(sp, r));
			added |= rc > 0;
			changed |= rc < 0;
		}
	}
	/* The bytes are the same for the same inputs and build: a size that
	 * differs from the index's means one of them is wrong. */
	if (changed)
		warn(t, "index %s: %s", t->index_path ? t->index_path : "", "a generated file's size differs from the one kept");
	if (added || changed || new_stats)
		index_write_all(t, s);
	pthread_mutex_unlock(&z->mu);
}

/* Keep what a generation pass built (`build`, TM_GEN_*), or its failure
 * (in gen_err). Caller holds `gen_mu`. */
static void gen_store(tm_vtree *t, const tm_scan *s, tm_gen *g, unsigned build, const char *what)
{
	if (!g && t->gen_err.code == TM_OK)
		tm_err(&t->gen_err, TM_EIO, "%s: could not be built", what);
	/* a stop that a reader below met as a failed read: whatever that
	 * reader made of it, the pass was interrupted */
	if (!g)
		tm_stopped(&t->gen_err);
	/* DESIGN.md: a failure found after the mount goes to the daemon's
	 * stderr when found, also when no reader's request fails on it (a stat
	 * that built the files, or a pass stopped as the daemon goes) */
	if (!g && t->log)
		t->log(t->gen_err.msg);
	int new_stats = 0;
	if (g && g->stats) { /* the same for every pass: the first one's stay */
		new_stats = parsed_publish(t, g->stats);
		g->stats = NULL;
	}
	if (g && !t->gen) {
		t->gen = g;
	} else if (g) { /* the files built before stay where readers have them */
		if (g->pftrace)
			t->gen->pftrace = g->pftrace;
		if (g->timeline)
			t->gen->timeline = g->timeline;
		if (g->tables)
			t->gen->tables = g->tables;
		free(g);
	}
	if (g) {
		if (build & TM_GEN_TOP)
			t->gen_top |= build & ~(unsigned)TM_GEN_TOP;
		else
			t->gen_have |= build;
		sizes_from_gen(t, s, t->gen, build, new_stats);
	}
}

/* Has the family `want` (TM_GEN_*, with TM_GEN_TOP: its whole-merge
 * file alone) been built? Caller holds `gen_mu`. */
static int gen_built(const tm_vtree *t, unsigned want)
{
	unsigned fam = want & ~(unsigned)TM_GEN_TOP;
	return (t->gen_have & fam) || ((want & TM_GEN_TOP) && (t->gen_top & fam));
}

/* A generation pass's progress for the front end: passed on at most ten
 * times a second, and at the first report of each phase. */
typedef struct gen_watch_ctx {
	tm_vtree *t;
	struct timespec start;
	double last;
	int phase;          /* of the last report, -1 before it */
	int stats;          /* metadata.json's pass (vt_progress.stats) */
	tm_gen_watch watch;
} gen_watch_ctx;

static void on_gen_progress(void *ctx, const tm_gen_progress *p)
{
	gen_watch_ctx *w = ctx;
	double now = seconds_since(&w->start);
	if ((p->phase == TM_GEN_READING && !p->file) || (p->phase == w->phase && now - w->last < 0.1))
		return;
	w->last = now;
	w->phase = p->phase;
	vt_progress v = {p->done, p->total, p->file, now, 0, 0, 0, VT_GEN_READING + p->phase, w->stats};
	w->t->progress(w->t->progress_ctx, &v);
}

/* The watch of a pass about to start: NULL without a front end's
 * progress. */
static const tm_gen_watch *gen_watch_start(tm_vtree *t, gen_watch_ctx *w)
{
	*w = (gen_watch_ctx){.t = t, .phase = -1, .watch = {w, on_gen_progress}};
	clock_gettime(CLOCK_MONOTONIC, &w->start);
	return t->progress ? &w->watch : NULL;
}

/* The end of a pass that had a watch: built (g) or failed. */
static void gen_watch_end(tm_vtree *t, gen_watch_ctx *w, const tm_gen *g)
{
	if (!t->progress)
		return;
	vt_progress v = {0, 0, NULL, seconds_since(&w->start), 1, 0, g == NULL, VT_GEN_WRITING, w->stats};
	t->progress(t->progress_ctx, &v);
}

/* The generation pass for the family `want` (TM_GEN_*): run once under
 * `gen_mu` for that family alone (issue 34: a mount's first read of
 * merged.pftrace built timeline.tsv and the tables too, ten times the
 * work of the file asked for); NULL with *err set when it failed. */
static tm_gen *gen_get(tm_vtree *t, const tm_scan *s, unsigned want, const char *what, tm_error *err)
{
	pthread_mutex_lock(&t->gen_mu);
	if (!gen_built(t, want) && t->gen_err.code == TM_OK) {
		unsigned build = want;
		gen_watch_ctx w;
		const tm_gen_watch *gw = gen_watch_start(t, &w);
		tm_gen *g = tm_gen_build(t->merge, s, build, 0, t->timeline_fd, gw, &t->gen_err);
		gen_watch_end(t, &w, g);
		gen_store(t, s, g, build, what);
	}
	tm_gen *gen = gen_built(t, want) ? t->gen : NULL;
	if (!gen)
		*err = t->gen_err;
	pthread_mutex_unlock(&t->gen_mu);
	return gen;
}

/* The first generation pass of a merge whose scan tier is not made yet
 * (and not in the index): its own scan is made the scan tier as soon as it
 * is done, so each input is read once (DESIGN.md). */
typedef struct first_pass {
	tm_vtree *t;
	scan_start st;
} first_pass;

/* tm_gen_scanned: install the scan tier and let its waiters go (the
 * caller took `scan_mu` for it), while the pass goes on. */
static void first_pass_scanned(void *ctx, tm_scan *s)
{
	first_pass *fp = ctx;
	scan_install(fp->t, &fp->st, s, 0);
	pthread_mutex_unlock(&fp->t->scan_mu);
}

static void gen_first(tm_vtree *t, unsigned want, const char *what)
{
	pthread_mutex_lock(&t->scan_mu);
	if (t->scan) {
		pthread_mutex_unlock(&t->scan_mu);
		return;
	}
	first_pass fp = {.t = t};
	tm_scan *s = scan_begin(t, &fp.st);
	if (s) { /* the index has the scan: the usual way */
		scan_install(t, &fp.st, s, 1);
		pthread_mutex_unlock(&t->scan_mu);
		return;
	}
	/* scan_mu, then gen_mu: the order gen_get's callers take them in */
	pthread_mutex_lock(&t->gen_mu);
	unsigned build = want;
	tm_scan_sink progress = {.ctx = &fp.st.pc, .progress = on_scan_progress};
	tm_gen_scanned sc = {&fp, first_pass_scanned, t->progress ? &progress : NULL};
	gen_watch_ctx w;
	const tm_gen_watch *gw = gen_watch_start(t, &w);
	tm_gen *g = tm_gen_build_scanning(t->merge, build, 0, t->timeline_fd, &sc, gw, &t->gen_err);
	/* scan_mu was let go when the scan ended; the scan tier is set */
	if (!t->scan->failed)
		gen_watch_end(t, &w, g);
	if (t->scan->failed) {
		tm_gen_free(g); /* the views say the scan's error, as usual */
		tm_err_clear(&t->gen_err);
		pthread_mutex_unlock(&t->gen_mu);
		return;
	}
	gen_store(t, t->scan, g, build, what);
	pthread_mutex_unlock(&t->gen_mu);
}

/* A spooled file: the node reads its part of the generation pass's
 * output. Caller holds the node's `mu`. */
static int spool_view(tm_vtree *t, vt_node *n, tm_error *err)
{
	vt_gen *g = n->g;
	unsigned want = n->gen == GEN_PFTRACE ? TM_GEN_PFTRACE : n->gen == GEN_TIMELINE ? TM_GEN_TIMELINE : TM_GEN_TABLES;
	/* `tracemount cat` of a top-level file: no machine's copy of it */
	if (t->gen_only_wanted && n->row == ROW_ALL && want != TM_GEN_TABLES)
		want |= TM_GEN_TOP;
	gen_first(t, want, n->name);
	tm_scan *s = scan_get(t);
	if (s->failed)
		return tm_err(err, TM_EIO, "%s", s->err.msg);
	const tm_gen *gen = gen_get(t, s, want, n->name, err);
	if (!gen)
		return -1;
	const tm_spooled *sp = n->gen == GEN_PFTRACE	? gen->pftrace
			       : n->gen == GEN_TIMELINE ? gen->timeline
			       : n->gen == GEN_PROCESSES ? gen->tables->processes
			       : n->gen == GEN_THREADS	? gen->tables->threads
			       : n->gen == GEN_SLICES	? gen->tables->slices
			       : n->gen == GEN_PROFILE	? gen->tables->profile
							: gen->tables->heap;
	size_t row = n->row == ROW_ALL ? TM_SPOOLED_ALL : n->row;
	if (!tm_spooled_has(sp, row) && !(row == TM_SPOOLED_ALL && sp->streamed))
		return tm_err(err, TM_EIO, "%s: no such machine", n->name);
	if (sp->src.read) {
		g->src = sp;
		g->src_row = row;
	} else if (n->row == ROW_ALL && sp->streamed) {
		g->streamed = 1;
	} else if (n->row == ROW_ALL && sp->n_all_ext) { /* a header given last */
		g->spool_fd = sp->head_fd;
		g->whole_fd = sp->fd;
		g->ext = sp->all_ext;
		g->n_ext = sp->n_all_ext;
	} else if (n->row == ROW_ALL) {
		g->spool_fd = sp->fd;
	} else {
		g->spool_fd = sp->mach_fd;
		g->whole_fd = sp->fd;
		g->ext = sp->mach[n->row].ext;
		g->n_ext = sp->mach[n->row].n_ext;
	}
	g->len = (size_t)tm_spooled_size(sp, row);
	return 0;
}

/* A large view goes to a temporary file of its own as it is rendered
 * (spill_to_file), so that memory holds at most TM_RENDER_SPILL of it. */
typedef struct spill_ctx {
	tm_spool spool;
	int open, failed;
	tm_error err;
} spill_ctx;

static void spill_to_file(void *ctx, tm_buf *out)
{
	spill_ctx *sc = ctx;
	if (!sc->open && !sc->failed) {
		if (tm_spool_open(&sc->spool, &sc->err) == 0)
			sc->open = 1;
		else
			sc->failed = 1;
	}
	if (sc->open)
		tm_spool_put(&sc->spool, out->data, out->len);
	out->len = 0;
}

/* metadata.json's own pass: the model over every record, nothing
 * written, and the scan too when it is not made yet (each input read once,
 * as gen_first does). It takes no `gen_mu`: metadata.json does not wait
 * for a generation pass of other files, nor they for it. Caller holds
 * `stats_mu`. */
static void parsed_pass(tm_vtree *t, const char *what)
{
	tm_gen *g = NULL;
	gen_watch_ctx w;
	const tm_gen_watch *gw;
	pthread_mutex_lock(&t->scan_mu);
	tm_scan *s = t->scan;
	if (!s) {
		first_pass fp = {.t = t};
		s = scan_begin(t, &fp.st);
		if (s) {
			scan_install(t, &fp.st, s, 1);
		} else {
			tm_scan_sink progress = {.ctx = &fp.st.pc, .progress = on_scan_progress};
			tm_gen_scanned sc = {&fp, first_pass_scanned, t->progress ? &progress : NULL};
			gw = gen_watch_start(t, &w);
			w.stats = 1;
			g = tm_gen_build_scanning(t->merge, TM_GEN_STATS, 0, -1, &sc, gw, &t->stats_err);
			/* scan_mu was let go when the scan ended */
			s = t->scan;
			if (!s->failed)
				gen_watch_end(t, &w, g);
			goto built;
		}
	}
	pthread_mutex_unlock(&t->scan_mu);
	if (s->failed || atomic_load(&t->parsed)) /* the index had them */
		return;
	gw = gen_watch_start(t, &w);
	w.stats = 1;
	g = tm_gen_build(t->merge, s, TM_GEN_STATS, 0, -1, gw, &t->stats_err);
	gen_watch_end(t, &w, g);
built:
	if (s->failed) {
		tm_err_clear(&t->stats_err); /* metadata.json says the scan's error */
	} else if (!g || !g->stats) {
		if (t->stats_err.code == TM_OK)
			tm_err(&t->stats_err, TM_EIO, "%s: the stats could not be counted", what);
		tm_stopped(&t->stats_err);
		if (t->log)
			t->log(t->stats_err.msg);
	} else {
		tm_statlist *l = g->stats;
		g->stats = NULL;
		if (parsed_publish(t, l)) {
			pthread_mutex_lock(&t->sizes.mu);
			index_write_all(t, s);
			pthread_mutex_unlock(&t->sizes.mu);
		}
	}
	tm_gen_free(g);
}

/* The stats the parse counted, for metadata.json: made once, by a pass of
 * metadata.json's own unless a generation pass or the index gave them.
 * NULL when the merge failed (the scan's error says why), or with *err
 * when the pass did. */
static const tm_statlist *parsed_get(tm_vtree *t, const char *what, tm_error *err)
{
	tm_statlist *have = atomic_load(&t->parsed);
	if (!have) {
		pthread_mutex_lock(&t->stats_mu);
		if (!atomic_load(&t->parsed) && t->stats_err.code == TM_OK)
			parsed_pass(t, what);
		have = atomic_load(&t->parsed);
		if (!have && t->stats_err.code != TM_OK)
			*err = t->stats_err;
		pthread_mutex_unlock(&t->stats_mu);
	}
	return scan_get(t)->failed ? NULL : have;
}

/* A view that may grow large (metadata.json, clocks/edges.csv): in `b`,
 * or in g->spool_fd when it did. */
static int render_spilled(tm_vtree *t, vt_node *n, tm_buf *b, tm_error *err)
{
	vt_gen *g = n->g;
	spill_ctx sc = {.spool = {.fd = -1}};
	tm_render_spill spill = {spill_to_file, &sc};
	int rc = 0;
	if (n->gen == GEN_CSV) {
		tm_scan *s = scan_get(t);
		tm_render_clocks_csv_spill(t->merge, s, b, &spill);
		/* a failed scan's rows are never read (stat and reads give its
		 * error): neither kept in memory nor in a file */
		fail_if_scan_failed(s, err);
		rc = err->code != TM_OK ? -1 : 0;
	} else {
		tm_error perr = {0};
		const tm_statlist *parsed = parsed_get(t, n->name, &perr);
		rc = tm_render_metadata_spill(t->merge, scan_get(t), parsed, perr.code ? perr.msg : NULL, b, &spill,
					      err);
	}
	if (rc == 0 && sc.failed) {
		*err = sc.err;
		rc = -1;
	}
	if (sc.open) {
		if (rc == 0) {
			tm_spool_put(&sc.spool, b->data, b->len);
			rc = tm_spool_finish(&sc.spool, n->name, err);
		}
		if (rc == 0) {
			g->spool_fd = sc.spool.fd;
			g->owns_fd = 1;
			g->len = (size_t)sc.spool.size;
			sc.spool.fd = -1;
		}
		tm_spool_close(&sc.spool);
		tm_buf_free(b);
	}
	return rc;
}

/* The bytes of a view rendered into memory. Caller holds the node's `mu`. */
static int render_view(tm_vtree *t, vt_node *n, tm_buf *b, tm_error *err)
{
	tm_scan *s;
	int rc;
	switch (n->gen) {
	case GEN_METADATA:
		return render_spilled(t, n, b, err);
	case GEN_MANIFEST:
		return tm_render_manifest(t->merge, t->merge->manifest ? NULL : scan_get(t), b, err);
	case GEN_MACHINE:
		s = scan_get(t);
		rc = tm_render_machine(t->merge, s, n->row, b, err);
		if (rc == 0)
			fail_if_scan_failed(s, err);
		return rc;
	case GEN_DOT:
		s = scan_get(t);
		tm_render_clocks_dot(t->merge, s, b);
		fail_if_scan_failed(s, err);
		return 0;
	case GEN_CSV:
		return render_spilled(t, n, b, err);
	default: /* the spooled files */
		return spool_view(t, n, err);
	}
}

/* Build a generated file once; later callers get the same bytes. Readers
 * of other files are not held up: each file builds under its own lock.
 * Called without `tree` held. */
static void ensure_generated(tm_vtree *t, vt_node *n)
{
	vt_gen *g = n->g;
	if (atomic_load_explicit(&g->ready, memory_order_acquire))
		return;
	pthread_mutex_lock(&g->mu);
	if (!atomic_load_explicit(&g->ready, memory_order_relaxed)) {
		tm_buf b = {0};
		tm_error err;
		tm_err_clear(&err);
		if (render_view(t, n, &b, &err) != 0) {
			tm_buf_free(&b);
			err.code = TM_EIO;
		}
		if (err.code != TM_OK) {
			g->err = tm_xmalloc(sizeof(*g->err));
			*g->err = err;
		}
		if (g->spool_fd >= 0 || g->src || g->streamed) {
			/* the bytes are in g->spool_fd, made by g->src, or were streamed */
			tm_buf_free(&b);
			tm_memory_release(); /* what the pass freed, back to the kernel */
		} else {
			g->data = tm_buf_detach(&b, &g->len);
		}
		atomic_store_explicit(&g->ready, 1, memory_order_release);
	}
	pthread_mutex_unlock(&g->mu);
}

/* Caller holds `tree`; generated nodes must have been rendered (or the
 * size reads 0). */
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
		st->size = atomic_load_explicit(&n->g->ready, memory_order_acquire) ? n->g->len : 0;
	}
}

/* A spooled file not built yet whose size a generation pass of these
 * inputs gave (the index's): 1 and *size, without building it. */
static int size_before_built(tm_vtree *t, vt_node *n, uint64_t *size)
{
	if (n->gen < GEN_PFTRACE || atomic_load_explicit(&n->g->ready, memory_order_acquire))
		return 0;
	const tm_scan *s = scan_if_known(t); /* not read for this */
	if (!s || s->failed) /* a failed scan: the file is an error, not a size */
		return 0;
	return size_known(t, (gen_kind)n->gen, n->row, size);
}

int vtree_stat(tm_vtree *t, vt_ino ino, vt_stat *st, tm_error *err)
{
	vt_node *n = get_node(t, ino);
	if (!n)
		return tm_err(err, TM_ENOENT, "no such node");
	uint64_t known = 0;
	int have_size = n->src == SRC_GEN && size_before_built(t, n, &known);
	if (n->src == SRC_GEN && !have_size) {
		ensure_generated(t, n);
		/* a file that could not be built has no size: its error, as
		 * for an open (a size of 0 looked like an empty file) */
		if (n->g->err)
			return tm_err(err, TM_EIO, "%s", n->g->err->msg);
	}
	pthread_rwlock_rdlock(&t->tree);
	fill_stat(t, ino, n, st);
	pthread_rwlock_unlock(&t->tree);
	if (have_size)
		st->size = known;
	return 0;
}

typedef struct dirent_copy {
	char *name;
	vt_ino ino;
	int has_st;
	vt_stat st;
} dirent_copy;

int vtree_readdir(tm_vtree *t, vt_ino dir, vt_dirent_cb cb, void *ctx, tm_error *err)
{
	vt_node *d = get_node(t, dir);
	if (!d)
		return tm_err(err, TM_ENOENT, "no such node");
	if (d->kind != VT_DIR)
		return tm_err(err, TM_ENOTDIR, "%s: Not a directory", d->name);
	if (dir == t->machines_dir)
		ensure_machines(t);
	/* Copy the entries, then call back without the lock (the callback
	 * may stat, which may render). */
	pthread_rwlock_rdlock(&t->tree);
	size_t n_ents = d->n_kids;
	dirent_copy *ents = tm_xcalloc(n_ents ? n_ents : 1, sizeof(*ents));
	for (size_t i = 0; i < n_ents; i++) {
		vt_node *n = node_of(t, d->kids[i]);
		ents[i].name = tm_xstrdup(n->name);
		ents[i].ino = d->kids[i];
		/* Generated files not rendered yet get no attributes here, so
		 * `ls` never pays for them (DESIGN.md: listing computes nothing). */
		ents[i].has_st = n->src != SRC_GEN ||
				 (atomic_load_explicit(&n->g->ready, memory_order_acquire) && !n->g->err);
		if (ents[i].has_st)
			fill_stat(t, d->kids[i], n, &ents[i].st);
	}
	pthread_rwlock_unlock(&t->tree);
	size_t i = 0;
	for (; i < n_ents; i++)
		if (cb(ctx, ents[i].name, ents[i].ino, ents[i].has_st ? &ents[i].st : NULL))
			break;
	for (i = 0; i < n_ents; i++)
		free(ents[i].name);
	free(ents);
	return 0;
}

int vtree_readlink(tm_vtree *t, vt_ino ino, char *buf, size_t size, tm_error *err)
{
	vt_node *n = get_node(t, ino);
	if (!n || n->src != SRC_LINK)
		return tm_err(err, TM_ENOENT, "not a symbolic link");
	if (size == 0)
		return 0;
	snprintf(buf, size, "%s", n->link);
	return 0;
}

vt_file *vtree_file_open(tm_vtree *t, vt_ino ino, tm_error *err)
{
	vt_node *n = get_node(t, ino);
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
		/* A view of a failed merge cannot be opened: its size may be 0,
		 * and a reader would see an empty file instead of the error. */
		if (n->g->err) {
			tm_err(err, TM_EIO, "%s", n->g->err->msg);
			vtree_file_close(f);
			return NULL;
		}
	}
	pthread_mutex_lock(&t->files_mu);
	f->next = t->files;
	if (t->files)
		t->files->prev = f;
	t->files = f;
	f->listed = 1;
	pthread_mutex_unlock(&t->files_mu);
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
		const vt_gen *g = node->g;
		if (g->err) {
			tm_err(err, TM_EIO, "%s", g->err->msg);
			return -1;
		}
		if (g->streamed) {
			tm_err(err, TM_EIO, "%s: its bytes went to the stream they were made for", node->name);
			return -1;
		}
		if (off >= g->len)
			return 0;
		if (n > g->len - off)
			n = (size_t)(g->len - off);
		if (g->src) /* its failures are TM_EIO already */
			return tm_spooled_read(g->src, g->src_row, buf, n, off, err);
		if (g->spool_fd >= 0) {
			ssize_t r = g->ext ? tm_ext_pread(g->spool_fd, g->whole_fd, g->ext, g->n_ext, buf, n, off)
					   : tm_pread_full(g->spool_fd, buf, n, off);
			if (r < 0)
				tm_err(err, TM_EIO, "%s: %s", node->name, strerror(errno));
			return r;
		}
		memcpy(buf, g->data + off, n);
		return (ssize_t)n;
	}
	return 0;
}

int vtree_file_streamed(const vt_file *f)
{
	return f->node->src == SRC_GEN && f->node->g->streamed;
}

int vtree_file_span(vt_file *f, uint64_t off, int *fd, uint64_t *at, uint64_t *len)
{
	const vt_gen *g = f->node->g;
	if (f->node->src == SRC_GEN && g->spool_fd >= 0 && !g->err) {
		if (off >= g->len)
			return -1;
		if (!g->ext) {
			*fd = g->spool_fd;
			*at = off;
			*len = g->len - off;
			return 1;
		}
		size_t i = tm_ext_find(g->ext, g->n_ext, off);
		const tm_ext *e = i < g->n_ext ? &g->ext[i] : NULL;
		if (!e || off < e->off || off >= e->off + e->len || e->whole == TM_EXT_LIST)
			return -1; /* a list's bytes are read piece by piece */
		*fd = e->whole ? g->whole_fd : g->spool_fd;
		*at = e->at + (off - e->off);
		*len = e->len - (off - e->off);
		if (off + *len > g->len)
			*len = g->len - off;
		return off + *len == g->len;
	}
	uint64_t base;
	struct stat st;
	if (f->node->src != SRC_BLOB || !f->cursor || off >= f->node->size ||
	    tm_cursor_file_range(f->cursor, fd, &base) != 0)
		return -1;
	/* The input is the user's file: cut short since it was opened, a read
	 * of it past its end would give the front end no bytes, which reads as
	 * a short member. Read through the cursor instead, which says why
	 * (EIO, "file is shorter than when it was opened"). */
	if (fstat(*fd, &st) != 0 || (uint64_t)st.st_size < base + f->node->size)
		return -1;
	*at = base + off;
	*len = f->node->size - off;
	return 1;
}

void vtree_file_close(vt_file *f)
{
	if (!f)
		return;
	if (f->listed) {
		tm_vtree *t = f->t;
		pthread_mutex_lock(&t->files_mu);
		if (f->prev)
			f->prev->next = f->next;
		else
			t->files = f->next;
		if (f->next)
			f->next->prev = f->prev;
		pthread_mutex_unlock(&t->files_mu);
	}
	tm_cursor_close(f->cursor);
	pthread_mutex_destroy(&f->lock);
	free(f);
}

int vtree_check(tm_vtree *t, tm_buf *summary, tm_error *err)
{
	const tm_scan *s = scan_get(t);
	if (s->failed) {
		if (err)
			*err = s->err;
		return -1;
	}
	return tm_render_summary(t->merge, s, summary, err);
}

void vtree_set_logger(tm_vtree *t, void (*log)(const char *msg))
{
	t->log = log;
}

vt_pack_format vtree_pack_format(const char *out_name)
{
	static const vt_pack_format of[] = {
		[TM_PACK_ZIP] = VT_PACK_ZIP, [TM_PACK_TAR] = VT_PACK_TAR, [TM_PACK_TGZ] = VT_PACK_TGZ};
	tm_pack_format f = tm_pack_format_of(out_name);
	return f == TM_PACK_NONE ? VT_PACK_NONE : of[f];
}

int vtree_pack(tm_vtree *t, int fd, vt_pack_format fmt, size_t *members, tm_error *err)
{
	static const tm_pack_format of[] = {
		[VT_PACK_ZIP] = TM_PACK_ZIP, [VT_PACK_TAR] = TM_PACK_TAR, [VT_PACK_TGZ] = TM_PACK_TGZ};
	if ((int)fmt < 0 || (size_t)fmt >= sizeof of / sizeof of[0])
		return tm_err(err, TM_EARGS, "no archive format given");
	if (tm_pack_check_paths(t->merge, err) != 0)
		return -1;
	return tm_pack_write(t->merge, fd, of[fmt], members, err);
}

size_t vtree_unexported(tm_vtree *t, tm_buf *report)
{
	return tm_render_unexported(t->merge, report);
}

int vtree_drops(tm_vtree *t, tm_buf *report, uint64_t *dropped, tm_error *err)
{
	const tm_scan *s = scan_get(t);
	if (s->failed) {
		if (err)
			*err = s->err;
		return -1;
	}
	*dropped = tm_pack_drops(t->merge, s, report);
	return 0;
}
