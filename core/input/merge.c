/* core/input/merge.c - the import session: walking containers in the reference's
 * processing order and the mount-tier checks (spec/formats.md §2,
 * spec/manifest.md §3). */
#include "input/merge.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "input/inputs.h"
#include "manifest/manifest.h"
#include "util/hash.h"

/* A manifest is read whole (it is a small JSON document); past this size
 * only the first bytes are parsed, which is what the reference sees too
 * when a large trace follows a manifest in one gzip stream (manifest.md
 * §3.1: bytes after the root value are ignored). */
#define MANIFEST_READ_MAX (64u << 20)
/* Nesting of containers (zip in tar in gzip ...) we follow. */
#define MAX_DEPTH 16

static const char ERR_UNKNOWN_TYPE[] = "Unknown trace type provided (ERR:fmt)";

static tm_file *add_file(tm_merge *m, int64_t parent, const char *name, tm_blob *blob, int64_t size)
{
	TM_GROW(m->files, m->cap_files, m->n_files + 1);
	tm_file *f = &m->files[m->n_files];
	memset(f, 0, sizeof(*f));
	f->id = (uint32_t)m->n_files++;
	f->parent = parent;
	f->name = name ? tm_xstrdup(name) : NULL;
	f->blob = blob ? tm_blob_ref(blob) : NULL;
	f->size = size;
	f->entry = -1;
	f->view = -1;
	return f;
}

static int sniff(tm_file *f, size_t window, tm_error *err)
{
	if (tm_blob_sniffed(f->blob, window, &f->type))
		return 0;
	unsigned char buf[TM_SNIFF_BYTES];
	ssize_t n = tm_blob_head(f->blob, buf, window < sizeof(buf) ? window : sizeof(buf), err);
	if (n < 0)
		return -1;
	f->type = tm_detect(buf, (size_t)n);
	return 0;
}

/* Sniff members [from, to) of file `fid` in order, up to the first that
 * cannot be read or is of no known type (`failed`, and why in `err`). */
typedef struct sniff_run {
	tm_merge *m;
	uint32_t fid, from, to;
	int failed;
	tm_error err;
} sniff_run;

static void *sniff_range(void *arg)
{
	sniff_run *r = arg;
	tm_merge *m = r->m;
	int tar = m->files[r->fid].type == TM_TYPE_TAR;
	for (uint32_t id = r->from; id < r->to && !r->failed; id++) {
		tm_file *c = &m->files[id];
		size_t window = tar && c->size < 512 ? (size_t)c->size : tar ? 512 : TM_SNIFF_BYTES;
		if (sniff(c, window, &r->err) != 0) {
			r->failed = 1;
			continue;
		}
		/* The reference's TAR reader sniffs a member's first 512 bytes,
		 * its parser then the member's first chunk, and it aborts when
		 * the two types differ (a collapsed-stack file whose first line
		 * is longer: tracemount(1), "Divergences"). Such a member is
		 * read as its longer sniff says, as the parser would. */
		if (tar && window == 512 && c->size > 512) {
			tm_type short_type = c->type;
			if (sniff(c, TM_SNIFF_BYTES, &r->err) != 0) {
				r->failed = 1;
				continue;
			}
			if (c->type == TM_TYPE_UNKNOWN)
				c->type = short_type;
		}
		if (c->type == TM_TYPE_UNKNOWN) {
			tm_err(&r->err, TM_EINPUT, "%s", ERR_UNKNOWN_TYPE);
			r->failed = 1;
		}
	}
	return NULL;
}

/* Loose inputs from this many on are sniffed by two threads. */
#define SNIFF_SPLIT 256

/* Sniff members [first, last) of file `fid`; the error is the first
 * member's in order that fails. The files of a folder come sniffed by
 * their lister (inputs.c opens each once, on two threads); loose inputs
 * it did not sniff (operands, files reached through a link) each open a
 * file of their own here, and many of them take two threads, half each.
 * An archive's members share its file and read windows, and are sniffed
 * in one. */
static int sniff_members(tm_merge *m, uint32_t fid, uint32_t first, uint32_t last, tm_error *err)
{
	sniff_run a = {.m = m, .fid = fid, .from = first, .to = last};
	sniff_run b = {.m = m, .fid = fid, .from = last, .to = last}; /* none */
	if (m->files[fid].type == TM_TYPE_INPUTS && last - first >= SNIFF_SPLIT) {
		a.to = b.from = first + (last - first) / 2;
		tm_run_halves(sniff_range, &a, &b);
	} else {
		sniff_range(&a);
	}
	if (!a.failed && !b.failed)
		return 0;
	if (err)
		*err = a.failed ? a.err : b.err;
	return -1;
}

/* Archive sort key (formats.md §2.4): priority, name byte-wise, listing
 * position (= file id, since ids follow listing order). */
static int cmp_processing(const void *a, const void *b, void *ctx)
{
	const tm_merge *m = ctx;
	const tm_file *fa = &m->files[*(const uint32_t *)a];
	const tm_file *fb = &m->files[*(const uint32_t *)b];
	int pa = tm_type_archive_priority(fa->type), pb = tm_type_archive_priority(fb->type);
	if (pa != pb)
		return pa < pb ? -1 : 1;
	int c = strcmp(fa->name ? fa->name : "", fb->name ? fb->name : "");
	if (c)
		return c;
	return fa->id < fb->id ? -1 : fa->id > fb->id;
}

static int process_file(tm_merge *m, uint32_t id, int depth, tm_error *err);

/* The members by name, while a manifest is checked and applied: it looks
 * up each of its paths, and an archive may hold 100,000 of each. Slot ->
 * the first file id (>= 1) with that name + 1, open addressing. */
typedef struct member_index {
	const tm_merge *m;
	uint32_t *slot;
	size_t cap;
} member_index;

static void member_index_build(member_index *ix, const tm_merge *m)
{
	ix->m = m;
	ix->cap = 64;
	while (ix->cap < 2 * m->n_files)
		ix->cap *= 2;
	ix->slot = tm_xcalloc(ix->cap, sizeof(*ix->slot));
	for (size_t i = 1; i < m->n_files && i < UINT32_MAX; i++) {
		const char *name = m->files[i].name;
		if (!name)
			continue;
		size_t j = (size_t)tm_khash_str(name) & (ix->cap - 1);
		while (ix->slot[j] && strcmp(m->files[ix->slot[j] - 1].name, name) != 0)
			j = (j + 1) & (ix->cap - 1);
		if (!ix->slot[j])
			ix->slot[j] = (uint32_t)i + 1;
	}
}

static int64_t member_file_id(void *ctx, const char *path)
{
	const member_index *ix = ctx;
	size_t j = (size_t)tm_khash_str(path) & (ix->cap - 1);
	for (; ix->slot[j]; j = (j + 1) & (ix->cap - 1))
		if (strcmp(ix->m->files[ix->slot[j] - 1].name, path) == 0)
			return (int64_t)ix->slot[j] - 1;
	return -1;
}

static int has_member(void *ctx, const char *path)
{
	return member_file_id(ctx, path) >= 0;
}

/* manifest.md §3.3: the checks made when a member sniffed as a manifest
 * starts, then reading, validation and application. */
static int process_manifest(tm_merge *m, tm_file *f, tm_error *err)
{
	if (m->trace_started)
		return tm_err(err, TM_EINPUT, "perfetto_manifest file must be the first trace file in the input");
	if (m->manifest && f->entry >= 0 && tm_manifest_entry_forbids_container(m->manifest, (size_t)f->entry))
		return tm_err(err, TM_EINPUT,
			      "perfetto_manifest: overrides are not supported for trace files which are "
			      "themselves archives or perfetto_manifest files: %s",
			      f->name ? f->name : "");
	if (m->manifest)
		return tm_err(err, TM_EINPUT, "multiple perfetto_manifest files in archive");

	tm_cursor *c = tm_cursor_open(f->blob, err);
	if (!c)
		return -1;
	tm_buf b = {0};
	char chunk[1 << 16];
	ssize_t n = 0;
	while (b.len < MANIFEST_READ_MAX && (n = tm_cursor_read(c, chunk, sizeof(chunk), err)) > 0)
		tm_buf_put(&b, chunk, (size_t)n);
	tm_cursor_close(c);
	if (n < 0) {
		tm_buf_free(&b);
		return -1;
	}
	tm_manifest *man = NULL;
	int rc = tm_manifest_parse(b.data ? b.data : "", b.len, &man, err);
	tm_buf_free(&b);
	if (rc != 0)
		return -1;
	tm_mf_plan *plan = tm_xcalloc(1, sizeof(*plan));
	member_index ix;
	member_index_build(&ix, m);
	rc = tm_manifest_check_tables(man, has_member, &ix, err) != 0 ||
	     tm_manifest_apply(man, member_file_id, &ix, plan, err) != 0;
	free(ix.slot);
	if (rc) {
		tm_mf_plan_free(plan);
		free(plan);
		tm_manifest_free(man);
		return -1;
	}
	/* clocks.md §3.3: the manifest's edges are the first snapshots; one
	 * whose two readings are the same node is rejected, fatally here. */
	for (size_t i = 0; i < plan->n_edges; i++) {
		const tm_clock_node *a = &plan->edges[i].src, *r = &plan->edges[i].ref;
		if (memcmp(a, r, sizeof(*a)) != 0)
			continue;
		char id[96];
		if (a->seq_id || a->file_id || a->machine_row)
			snprintf(id, sizeof id, "%u(seq=%u,tf=%u,m=%u)", a->clock_id, a->seq_id, a->file_id,
				 a->machine_row);
		else
			snprintf(id, sizeof id, "%u", a->clock_id);
		tm_err(err, TM_EINPUT, "Clock sync error: duplicate clock domain with id=%s at snapshot %zu.", id, i);
		tm_mf_plan_free(plan);
		free(plan);
		tm_manifest_free(man);
		return -1;
	}
	m->manifest = man;
	m->manifest_file = f->id;
	m->plan = plan;
	/* Members listed before the manifest was applied learn their entries
	 * now (manifest.md §3.2: entries may name members parsed later). */
	for (size_t i = 0; i < m->n_files; i++)
		if (m->files[i].name)
			m->files[i].entry = tm_manifest_find_entry(man, m->files[i].name);
	return 0;
}

/* Give the visible members of a listed container (a ZIP, a TAR, or the
 * virtual archive of several inputs) file ids in listing order, sniff them
 * all, then process them in sorted order. Takes the listing's entries. */
static int process_listing(tm_merge *m, tm_file *f, tm_listing *lp, int depth, tm_error *err)
{
	tm_listing l = *lp;
	*lp = (tm_listing){0};
	uint32_t fid = f->id;

	/* files/ shows the outermost archive: the input, or the stream inside a
	 * top-level gzip/zstd/... (a .tar.gz shows its tar members). */
	int outermost = !m->members_are_archive && (f->id == 0 || f->parent == 0);
	if (outermost)
		m->members_are_archive = 1;

	/* Room for every member at once (an archive may hold 100,000). */
	TM_RESERVE(m->files, m->cap_files, m->n_files + l.n);
	if (outermost)
		TM_RESERVE(m->members, m->cap_members, m->n_members + l.n);
	uint32_t first = (uint32_t)m->n_files;
	for (size_t i = 0; i < l.n; i++) {
		tm_entry *e = &l.entries[i];
		const char *skip = NULL;
		if (tm_member_name_is_hidden(e->name))
			skip = "hidden member (a path component starts with '.')";
		else if (e->kind == TM_ENTRY_DIR)
			skip = "directory";
		else if (e->kind == TM_ENTRY_SYMLINK)
			skip = "symbolic link (the reference aborts on it; tracemount skips it)";
		else if (e->kind == TM_ENTRY_HARDLINK)
			skip = "hard link (the reference aborts on it; tracemount skips it)";
		else if (e->kind == TM_ENTRY_OTHER)
			skip = "special file";
		int64_t id = -1;
		if (!skip) {
			/* A member shown under files/ shares its name with the view. */
			tm_file *c = add_file(m, fid, outermost ? NULL : e->name, e->blob, (int64_t)e->size);
			id = c->id;
			c->entry = m->manifest ? tm_manifest_find_entry(m->manifest, e->name) : -1;
		}
		if (outermost) {
			TM_GROW(m->members, m->cap_members, m->n_members + 1);
			tm_member_view *v = &m->members[m->n_members];
			v->entry = *e; /* takes ownership of the entry's strings and blob */
			memset(e, 0, sizeof(*e));
			v->file_id = id;
			v->skip_reason = skip;
			if (id >= 0) {
				m->files[id].view = (int32_t)m->n_members;
				m->files[id].name = v->entry.name;
				m->files[id].name_shared = 1;
			}
			m->n_members++;
		}
	}
	tm_listing_free(&l);

	/* formats.md §2.4: all members are listed and sniffed before any is
	 * processed; an unrecognised member fails the whole import. */
	uint32_t last = (uint32_t)m->n_files;
	if (sniff_members(m, fid, first, last, err) != 0)
		return -1;
	size_t n = last - first;
	uint32_t *ids = tm_xmalloc(n * sizeof(*ids));
	for (size_t i = 0; i < n; i++)
		ids[i] = first + (uint32_t)i;
	qsort_r(ids, n, sizeof(*ids), cmp_processing, m);
	for (size_t i = 0; i < n; i++) {
		if (process_file(m, ids[i], depth + 1, err) != 0) {
			free(ids);
			return -1;
		}
	}
	free(ids);
	return 0;
}

static int process_archive(tm_merge *m, tm_file *f, int depth, tm_error *err)
{
	tm_listing l = {0};
	int rc = f->type == TM_TYPE_ZIP ? tm_zip_list(f->blob, &l, err) : tm_tar_list(f->blob, &l, err);
	if (rc != 0)
		return -1;
	f->dir_hash = l.dir_hash;
	return process_listing(m, f, &l, depth, err);
}

static tm_codec codec_of(tm_type t)
{
	switch (t) {
	case TM_TYPE_ZSTD: return TM_CODEC_ZSTD;
	case TM_TYPE_BZIP2: return TM_CODEC_BZIP2;
	case TM_TYPE_XZ: return TM_CODEC_XZ;
	case TM_TYPE_CTRACE: return TM_CODEC_CTRACE;
	default: return TM_CODEC_GZIP;
	}
}

/* formats.md §2.3: a compressed container holds one inner stream, a new
 * file named "" that is classified on its own. */
static int process_stream(tm_merge *m, tm_file *f, int depth, tm_error *err)
{
	uint32_t fid = f->id;
	tm_blob *inner = tm_blob_decompress(f->blob, codec_of(f->type), err);
	if (!inner)
		return -1;
	tm_file *c = add_file(m, fid, "", inner, tm_blob_size(inner));
	tm_blob_unref(inner);
	uint32_t cid = c->id;
	c->entry = m->manifest ? tm_manifest_find_entry(m->manifest, "") : -1;
	if (sniff(c, TM_SNIFF_BYTES, err) != 0)
		return -1;
	if (m->files[cid].type == TM_TYPE_UNKNOWN)
		return tm_err(err, TM_EINPUT, "%s", ERR_UNKNOWN_TYPE);
	return process_file(m, cid, depth + 1, err);
}

/* The file starts being processed: it takes the next processing order. */
static tm_file *begin_file(tm_merge *m, uint32_t id)
{
	tm_file *f = &m->files[id];
	TM_GROW(m->order, m->cap_order, m->n_order + 1);
	f->order = (uint32_t)m->n_order;
	m->order[m->n_order++] = id;
	f->processed = 1;
	return f;
}

static int process_file(tm_merge *m, uint32_t id, int depth, tm_error *err)
{
	if (depth > MAX_DEPTH)
		return tm_err(err, TM_EINPUT, "containers nested more than %d deep", MAX_DEPTH);
	tm_file *f = begin_file(m, id);

	if (f->type == TM_TYPE_MANIFEST)
		return process_manifest(m, f, err);
	if (tm_type_is_container(f->type)) {
		/* manifest.md §3.3 step 2: overrides on a container are rejected
		 * when it starts. */
		if (m->manifest && f->entry >= 0 && tm_manifest_entry_forbids_container(m->manifest, (size_t)f->entry))
			return tm_err(err, TM_EINPUT,
				      "perfetto_manifest: overrides are not supported for trace files which are "
				      "themselves archives or perfetto_manifest files: %s",
				      f->name ? f->name : "");
		if (f->type == TM_TYPE_ZIP || f->type == TM_TYPE_TAR)
			return process_archive(m, f, depth, err);
		return process_stream(m, f, depth, err);
	}
	/* manifest.md §3.1: any non-container file counts as a trace file. */
	m->trace_started = 1;
	return 0;
}

tm_merge *tm_merge_open(const char *path, tm_error *err)
{
	tm_merge *m = tm_xcalloc(1, sizeof(*m));
	m->path = tm_xstrdup(path);
	m->manifest_file = -1;
	struct stat st;
	if (stat(path, &st) == 0)
		m->mtime = (int64_t)st.st_mtime;
	m->top = tm_blob_open_path(path, err);
	if (!m->top)
		goto fail;
	tm_file *f = add_file(m, -1, NULL, m->top, tm_blob_size(m->top));
	if (sniff(f, TM_SNIFF_BYTES, err) != 0)
		goto fail;
	if (f->type == TM_TYPE_UNKNOWN) {
		tm_err(err, TM_EINPUT, "%s", ERR_UNKNOWN_TYPE);
		goto fail;
	}
	if (process_file(m, 0, 0, err) != 0)
		goto fail;
	return m;
fail:
	tm_merge_free(m);
	return NULL;
}

/* The INPUT operands opened as one archive rather than as themselves. */
static int as_virtual_archive(const char *const *paths, size_t n, const char *manifest, int as_members)
{
	struct stat st;
	if (as_members || manifest || n != 1)
		return 1;
	return stat(paths[0], &st) == 0 && S_ISDIR(st.st_mode);
}

tm_merge *tm_merge_open_inputs(const char *const *paths, size_t n, const char *manifest, int as_members,
			       tm_error *err)
{
	if (!as_virtual_archive(paths, n, manifest, as_members))
		return tm_merge_open(paths[0], err);
	tm_merge *m = tm_xcalloc(1, sizeof(*m));
	m->manifest_file = -1;
	m->n_inputs = n;
	m->inputs = tm_xcalloc(n ? n : 1, sizeof(*m->inputs));
	tm_buf shown = {0};
	for (size_t i = 0; i < n; i++) {
		m->inputs[i] = tm_xstrdup(paths[i]);
		tm_buf_printf(&shown, "%s%s", i ? " " : "", paths[i]);
		struct stat st;
		if (stat(paths[i], &st) == 0 && (int64_t)st.st_mtime > m->mtime)
			m->mtime = (int64_t)st.st_mtime;
	}
	m->path = tm_buf_detach(&shown, NULL);
	if (!m->path)
		m->path = tm_xstrdup("");
	tm_listing l = {0};
	if (tm_inputs_list(paths, n, manifest, &l, err) != 0)
		goto fail;
	/* formats.md §2.6: file 0 is the top level; here the archive that
	 * would hold the inputs, which has no bytes of its own. */
	tm_file *f = add_file(m, -1, NULL, NULL, -1);
	f->type = TM_TYPE_INPUTS;
	begin_file(m, 0);
	if (process_listing(m, f, &l, 0, err) != 0)
		goto fail;
	return m;
fail:
	tm_listing_free(&l);
	tm_merge_free(m);
	return NULL;
}

void tm_merge_set_name(tm_merge *m, const char *name)
{
	free(m->path);
	m->path = tm_xstrdup(name);
}

void tm_merge_free(tm_merge *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->n_inputs; i++)
		free(m->inputs[i]);
	free(m->inputs);
	for (size_t i = 0; i < m->n_files; i++) {
		if (!m->files[i].name_shared)
			free(m->files[i].name);
		tm_blob_unref(m->files[i].blob);
	}
	for (size_t i = 0; m->files_paths && i < m->n_files; i++)
		free(m->files_paths[i]);
	free(m->files_paths);
	free(m->files);
	free(m->order);
	for (size_t i = 0; i < m->n_members; i++)
		tm_entry_clear(&m->members[i].entry);
	free(m->members);
	if (m->plan) {
		tm_mf_plan_free(m->plan);
		free(m->plan);
	}
	tm_manifest_free(m->manifest);
	tm_blob_unref(m->top);
	free(m->path);
	free(m);
}

const tm_file *tm_merge_file(const tm_merge *m, uint32_t id)
{
	return id < m->n_files ? &m->files[id] : NULL;
}

