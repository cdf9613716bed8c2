/* core/manifest/manifest.c - perfetto_manifest parsing, validation, application plan
 * and output (spec/manifest.md). Checks run in the order of §6; the first
 * failure wins and its text is the contract (§8). */
#include "manifest/manifest.h"

#include <cjson/cJSON.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/hash.h"
#include "util/json.h"

/* ---- the error catalogue (manifest.md §8), verbatim ----------------------- */

#define PFX "perfetto_manifest: "

/* §8.1 */
static const char E_ROOT[] = PFX "expected a JSON object with a top-level perfetto_manifest key";
static const char E_VERSION_MISSING[] = PFX "missing required field: version";
static const char E_VERSION_TYPE[] = PFX "version must be an integer";
static const char E_VERSION_VALUE[] = PFX "unsupported version: %" PRId64 ". Only version 1 is supported; set \"version\": 1.";
static const char E_FILES_TYPE[] = PFX "files must be an array";
static const char E_FILES_ENTRY[] = PFX "files entries must be objects with a string path";
/* §8.2 */
static const char E_CLOCK_TYPE[] = PFX "clock name must be a string";
static const char E_CLOCK_NAME[] = PFX "unknown clock name: %s. Use one of REALTIME, REALTIME_COARSE, MONOTONIC, "
				      "MONOTONIC_COARSE, MONOTONIC_RAW, BOOTTIME.";
static const char E_TT_TYPE[] = PFX "trace_time must be an object";
static const char E_TT_CLOCK[] = PFX "trace_time needs a clock";
static const char E_TT_FILE_TYPE[] = PFX "trace_time: file must be a string";
static const char E_TT_MACHINE_TYPE[] = PFX "trace_time: machine must be a string";
static const char E_TT_MACHINE_ALONE[] = PFX "trace_time: machine '%s' needs trace_time: file too: a machine name "
					    "alone is ambiguous because embedded machine ids are scoped to their trace.";
/* §8.3 */
static const char E_MACHINE_BOTH[] = PFX "machine and machines are mutually exclusive. Use `machine` for a "
					"single-machine file, or `machines` to remap a multi-machine proto's embedded "
					"ids; not both.";
static const char E_MACHINE_TYPE[] = PFX "machine must be an object with a string name, e.g. \"machine\": "
					"{\"name\": \"phone\"}.";
static const char E_MACHINE_EMPTY[] = PFX "machine: name must be non-empty";
static const char E_MACHINES_TYPE[] = PFX "machines must be an array";
static const char E_MACHINES_ITEM[] = PFX "machines entries need an integer id and a string name, e.g. "
					 "\"machines\": [{\"id\": 0, \"name\": \"phone\"}].";
static const char E_MACHINES_ID[] = PFX "machines: id must be in [0, 4294967295]";
static const char E_MACHINES_EMPTY[] = PFX "machines: name must be non-empty";
/* §8.4 */
static const char E_CLOCKS_TYPE[] = PFX "clocks must be an object";
static const char E_CLOCKS_MACHINE_TYPE[] = PFX "clocks: machine must be a string";
static const char E_SYNC_MISSING[] = PFX "clocks: a sync_to block is required. Manual clock handling relates this "
					"file to a clock in another trace, e.g. \"sync_to\": {\"file\": \"other.pb\"}.";
static const char E_SYNC_TYPE[] = PFX "clocks: sync_to must be an object";
static const char E_SYNC_FILE[] = PFX "clocks: sync_to.file is required and must be a string";
static const char E_SYNC_MACHINE_TYPE[] = PFX "clocks: sync_to.machine must be a string";
static const char E_OFFSET_TYPE[] = PFX "clocks: offset_ns must be an integer";
static const char E_OFFSET_RANGE[] = PFX "clocks: offset_ns is out of range";
static const char E_SOURCE_MULTI[] = PFX "clocks: file '%s' is a multi-machine trace; name which machine the clock "
					"is on with clocks: machine.";
static const char E_SOURCE_UNDECLARED[] = PFX "clocks: machine '%s' is not a machine declared by file '%s'.";
static const char E_UNRESOLVED[] = PFX "clocks: could not resolve file '%s'. It must match the `path` of an entry "
				      "in the `files` array.";
/* §8.5 */
static const char E_ATTRS_TYPE[] = PFX "attributes must be an object of string or integer values, e.g. "
				      "\"attributes\": {\"benchmark\": \"startup\"}.";
static const char E_ATTRS_KEY[] = PFX "attributes: keys must be non-empty";
static const char E_ATTRS_VALUE[] = PFX "attributes: '%s' must be a string or an integer";
/* §8.6 */
static const char E_TABLE_COMBINED[] = PFX "'%s': an exported table is not a trace, so __exported_table_schema "
					  "cannot be combined with clocks/machine/machines";
static const char E_TABLE_SHAPE[] = PFX "__exported_table_schema needs an integer format, a string name, an "
				       "integer row_count and a columns array";
static const char E_TABLE_ROWS[] = PFX "table '%s': invalid row_count";
static const char E_TABLE_COLUMN[] = PFX "table '%s': malformed column entry";
static const char E_TABLE_MISSING[] = PFX "table member '%s' is declared but not present in the archive";

/* §7: the same resolution, worded for each of the two places a (file,
 * machine) reference appears. */
typedef struct ref_texts {
	const char *unknown_file; /* %s: the file */
	const char *multi;        /* %s: the file */
	const char *undeclared;   /* %s: the machine, %s: the file */
} ref_texts;

static const ref_texts TRACE_TIME_REF = {
	PFX "trace_time: file names unknown file '%s'. It must match the `path` of an entry in the `files` array.",
	PFX "trace_time: file '%s' is a multi-machine trace; also name the machine with trace_time: machine.",
	PFX "trace_time: machine '%s' is not a machine declared by file '%s'.",
};

static const ref_texts SYNC_TO_REF = {
	PFX "clocks: sync_to.file names unknown file '%s'. It must match the `path` of an entry in the `files` array.",
	PFX "clocks: sync_to.file '%s' is a multi-machine trace; also name the machine with clocks: sync_to.machine.",
	PFX "clocks: sync_to.machine '%s' is not a machine declared by file '%s'.",
};

/* ---- strings --------------------------------------------------------------- */

static tm_mf_str str_dup(const char *s, size_t len)
{
	return (tm_mf_str){tm_xstrndup(s, len), len};
}

static tm_mf_str str_from(const tj_value *v)
{
	return str_dup(v->s, v->len);
}

static int str_eq(tm_mf_str a, tm_mf_str b)
{
	return a.s && b.s && a.len == b.len && memcmp(a.s, b.s, a.len) == 0;
}

/* A C string (a member name) equals a manifest string only if the manifest
 * string holds no NUL. */
static int str_eq_c(tm_mf_str a, const char *c)
{
	return a.s && strlen(a.s) == a.len && strcmp(a.s, c) == 0;
}

/* The order of std::string keys in the reference's std::map: bytes as
 * unsigned, a prefix first. */
static int str_cmp(tm_mf_str a, tm_mf_str b)
{
	int c = memcmp(a.s, b.s, a.len < b.len ? a.len : b.len);
	return c ? c : (a.len > b.len) - (a.len < b.len);
}

static void str_free(tm_mf_str *s)
{
	free(s->s);
	s->s = NULL;
	s->len = 0;
}

static const tj_value *get_string(const tj_value *obj, const char *key)
{
	const tj_value *v = tj_get(obj, key);
	return v && v->type == TJ_STRING ? v : NULL;
}

/* ---- parsing (§6 steps 1-5) ------------------------------------------------ */

/* A clock name (§5.8) -> builtin id, or an error. */
static int parse_clock_name(const tj_value *v, uint32_t *id, tm_error *err)
{
	if (v->type != TJ_STRING)
		return tm_err(err, TM_EINPUT, "%s", E_CLOCK_TYPE);
	*id = strlen(v->s) == v->len ? tm_clock_id_from_manifest_name(v->s) : 0;
	if (!*id)
		return tm_err(err, TM_EINPUT, E_CLOCK_NAME, v->s);
	return 0;
}

/* §6 step 3. */
static int parse_trace_time(tm_manifest *m, const tj_value *tt, tm_error *err)
{
	if (tt->type != TJ_OBJECT)
		return tm_err(err, TM_EINPUT, "%s", E_TT_TYPE);
	const tj_value *clock = tj_get(tt, "clock"), *file = tj_get(tt, "file"), *machine = tj_get(tt, "machine");
	if (!clock)
		return tm_err(err, TM_EINPUT, "%s", E_TT_CLOCK);
	if (parse_clock_name(clock, &m->tt_clock, err) != 0)
		return -1;
	if (file && file->type != TJ_STRING)
		return tm_err(err, TM_EINPUT, "%s", E_TT_FILE_TYPE);
	if (machine && machine->type != TJ_STRING)
		return tm_err(err, TM_EINPUT, "%s", E_TT_MACHINE_TYPE);
	m->has_trace_time = 1;
	if (file)
		m->tt_file = str_from(file);
	if (machine)
		m->tt_machine = str_from(machine);
	return 0;
}

/* §5.9; only the JSON shape is checked, as in the reference. */
static int parse_table(tm_mf_file *f, const tj_value *t, tm_error *err)
{
	const tj_value *format = tj_get(t, "format"), *name = get_string(t, "name"), *rows = tj_get(t, "row_count"),
		       *cols = tj_get(t, "columns");
	if (t->type != TJ_OBJECT || !format || format->type != TJ_INT || !name || !rows || rows->type != TJ_INT ||
	    !cols || cols->type != TJ_ARRAY)
		return tm_err(err, TM_EINPUT, "%s", E_TABLE_SHAPE);
	if (rows->i < 0 || rows->i > INT64_C(4294967295))
		return tm_err(err, TM_EINPUT, E_TABLE_ROWS, name->s);
	tm_mf_table *tb = tm_xcalloc(1, sizeof(*tb));
	f->table = tb;
	tb->format = format->i;
	tb->row_count = rows->i;
	tb->name = str_from(name);
	tb->columns = tm_xcalloc(cols->len ? cols->len : 1, sizeof(*tb->columns));
	for (size_t i = 0; i < cols->len; i++) {
		const tj_value *c = &cols->items[i];
		const tj_value *v[5] = {get_string(c, "name"), get_string(c, "type"), get_string(c, "nullability"),
					get_string(c, "sort"), get_string(c, "duplicates")};
		if (!v[0] || !v[1] || !v[2] || !v[3] || !v[4])
			return tm_err(err, TM_EINPUT, E_TABLE_COLUMN, tb->name.s);
		tb->columns[tb->n_columns++] =
			(tm_mf_column){str_from(v[0]), str_from(v[1]), str_from(v[2]), str_from(v[3]), str_from(v[4])};
	}
	return 0;
}

/* §6 step 4.3 (the caller checked that `clocks` is an object). */
static int parse_clocks(tm_mf_file *f, const tj_value *c, tm_error *err)
{
	tm_mf_clocks *k = tm_xcalloc(1, sizeof(*k));
	f->clocks = k;
	const tj_value *machine = tj_get(c, "machine"), *clock = tj_get(c, "clock"), *sync = tj_get(c, "sync_to"),
		       *offset = tj_get(c, "offset_ns");
	if (machine && machine->type != TJ_STRING)
		return tm_err(err, TM_EINPUT, "%s", E_CLOCKS_MACHINE_TYPE);
	if (machine)
		k->machine = str_from(machine);
	if (clock && parse_clock_name(clock, &k->clock, err) != 0)
		return -1;
	if (!sync)
		return tm_err(err, TM_EINPUT, "%s", E_SYNC_MISSING);
	if (sync->type != TJ_OBJECT)
		return tm_err(err, TM_EINPUT, "%s", E_SYNC_TYPE);
	const tj_value *file = get_string(sync, "file"), *sync_machine = tj_get(sync, "machine"),
		       *sync_clock = tj_get(sync, "clock");
	if (!file)
		return tm_err(err, TM_EINPUT, "%s", E_SYNC_FILE);
	k->sync_file = str_from(file);
	if (sync_machine && sync_machine->type != TJ_STRING)
		return tm_err(err, TM_EINPUT, "%s", E_SYNC_MACHINE_TYPE);
	if (sync_machine)
		k->sync_machine = str_from(sync_machine);
	if (sync_clock && parse_clock_name(sync_clock, &k->sync_clock, err) != 0)
		return -1;
	if (offset) {
		if (offset->type != TJ_INT)
			return tm_err(err, TM_EINPUT, "%s", E_OFFSET_TYPE);
		/* Its negation (the source reading of the edge) must exist. */
		if (offset->i == INT64_MIN)
			return tm_err(err, TM_EINPUT, "%s", E_OFFSET_RANGE);
		k->has_offset = 1;
		k->offset_ns = offset->i;
	}
	return 0;
}

/* §5.4: any JSON number, truncated toward zero as the reference's
 * static_cast does on x86-64 (out of range gives INT64_MIN, which the range
 * check then refuses). */
static int64_t truncate_id(const tj_value *id)
{
	if (id->type == TJ_INT)
		return id->i;
	if (!(id->d > -9223372036854775808.0 && id->d < 9223372036854775808.0))
		return INT64_MIN;
	return (int64_t)id->d;
}

static int parse_machines(tm_mf_file *f, const tj_value *ms, tm_error *err)
{
	if (ms->type != TJ_ARRAY)
		return tm_err(err, TM_EINPUT, "%s", E_MACHINES_TYPE);
	f->has_machines = 1;
	f->machines = tm_xcalloc(ms->len ? ms->len : 1, sizeof(*f->machines));
	for (size_t i = 0; i < ms->len; i++) {
		const tj_value *it = &ms->items[i], *id = tj_get(it, "id"), *name = get_string(it, "name");
		if (it->type != TJ_OBJECT || !tj_is_number(id) || !name)
			return tm_err(err, TM_EINPUT, "%s", E_MACHINES_ITEM);
		int64_t v = truncate_id(id);
		if (v < 0 || v > INT64_C(4294967295))
			return tm_err(err, TM_EINPUT, "%s", E_MACHINES_ID);
		if (name->len == 0)
			return tm_err(err, TM_EINPUT, "%s", E_MACHINES_EMPTY);
		f->machines[f->n_machines++] = (tm_mf_remap){(uint32_t)v, str_from(name)};
	}
	return 0;
}

/* §6 step 4, one entry. */
static int parse_file_entry(tm_mf_file *f, const tj_value *e, tm_error *err)
{
	const tj_value *path = get_string(e, "path");
	if (e->type != TJ_OBJECT || !path)
		return tm_err(err, TM_EINPUT, "%s", E_FILES_ENTRY);
	f->path = str_from(path);
	const tj_value *table = tj_get(e, "__exported_table_schema"), *clocks = tj_get(e, "clocks"),
		       *machine = tj_get(e, "machine"), *machines = tj_get(e, "machines");
	if (table) {
		if (clocks || machine || machines)
			return tm_err(err, TM_EINPUT, E_TABLE_COMBINED, f->path.s);
		return parse_table(f, table, err);
	}
	if (clocks) {
		if (clocks->type != TJ_OBJECT)
			return tm_err(err, TM_EINPUT, "%s", E_CLOCKS_TYPE);
		if (parse_clocks(f, clocks, err) != 0)
			return -1;
	}
	if (machine && machines)
		return tm_err(err, TM_EINPUT, "%s", E_MACHINE_BOTH);
	if (machine) {
		const tj_value *name = get_string(machine, "name");
		if (machine->type != TJ_OBJECT || !name)
			return tm_err(err, TM_EINPUT, "%s", E_MACHINE_TYPE);
		if (name->len == 0)
			return tm_err(err, TM_EINPUT, "%s", E_MACHINE_EMPTY);
		f->machine = str_from(name);
	}
	if (machines)
		return parse_machines(f, machines, err);
	return 0;
}

/* Member order of an attributes object: by key, then document position, so
 * the last of equal keys ends each run (§4: the last duplicate wins). */
typedef struct attr_ref {
	tm_mf_str key; /* borrowed from the tree */
	size_t index;
} attr_ref;

static int cmp_attr_ref(const void *pa, const void *pb)
{
	const attr_ref *a = pa, *b = pb;
	int c = str_cmp(a->key, b->key);
	return c ? c : (a->index > b->index) - (a->index < b->index);
}

/* §6 step 5: keys are checked in sorted order, the reference's std::map. */
static int parse_attributes(tm_manifest *m, const tj_value *a, tm_error *err)
{
	if (a->type != TJ_OBJECT)
		return tm_err(err, TM_EINPUT, "%s", E_ATTRS_TYPE);
	m->has_attributes = 1;
	attr_ref *refs = tm_xcalloc(a->len ? a->len : 1, sizeof(*refs));
	const tj_key *keys = tj_keys(a);
	for (size_t i = 0; i < a->len; i++)
		refs[i] = (attr_ref){{keys[i].s, keys[i].len}, i};
	qsort(refs, a->len, sizeof(*refs), cmp_attr_ref);
	m->attrs = tm_xcalloc(a->len ? a->len : 1, sizeof(*m->attrs));
	int rc = 0;
	for (size_t i = 0; i < a->len && rc == 0; i++) {
		if (i + 1 < a->len && str_eq(refs[i].key, refs[i + 1].key))
			continue;
		const tj_value *v = &a->items[refs[i].index];
		if (refs[i].key.len == 0)
			rc = tm_err(err, TM_EINPUT, "%s", E_ATTRS_KEY);
		else if (v->type != TJ_STRING && v->type != TJ_INT)
			rc = tm_err(err, TM_EINPUT, E_ATTRS_VALUE, refs[i].key.s);
		else
			m->attrs[m->n_attrs++] = (tm_mf_attr){str_dup(refs[i].key.s, refs[i].key.len),
							      v->type == TJ_INT, v->type == TJ_INT ? v->i : 0,
							      v->type == TJ_STRING ? str_from(v) : (tm_mf_str){0}};
	}
	free(refs);
	return rc;
}

/* The slot of `name` in the name index: where it is, or the empty one
 * where it goes. */
static size_t name_slot(const tm_manifest *m, tm_mf_str name)
{
	size_t mask = m->name_ix_cap - 1, j = (size_t)tm_khash_bytes(name.s, name.len) & mask;
	while (m->name_ix[j] && !str_eq(m->names[m->name_ix[j] - 1], name))
		j = (j + 1) & mask;
	return j;
}

static int64_t name_index(const tm_manifest *m, tm_mf_str name)
{
	if (!name.s || !m->name_ix_cap)
		return -1;
	size_t j = name_slot(m, name);
	return m->name_ix[j] ? (int64_t)m->name_ix[j] - 1 : -1;
}

static void name_ix_grow(tm_manifest *m)
{
	size_t cap = m->name_ix_cap ? m->name_ix_cap * 2 : 64;
	free(m->name_ix);
	m->name_ix = tm_xcalloc(cap, sizeof(*m->name_ix));
	m->name_ix_cap = cap;
	for (size_t k = 0; k < m->n_names; k++)
		m->name_ix[name_slot(m, m->names[k])] = (uint32_t)k + 1;
}

/* The first entry of each path a member name can equal (one without a NUL
 * inside), for tm_manifest_find_entry. */
static void index_paths(tm_manifest *m)
{
	size_t cap = 64;
	while (cap < 2 * m->n_files)
		cap *= 2;
	m->path_ix = tm_xcalloc(cap, sizeof(*m->path_ix));
	m->path_ix_cap = cap;
	m->path_ix_n = m->n_files;
	for (size_t i = 0; i < m->n_files && i < INT32_MAX; i++) {
		tm_mf_str p = m->files[i].path;
		if (!p.s || strlen(p.s) != p.len)
			continue;
		size_t j = (size_t)tm_khash_bytes(p.s, p.len) & (cap - 1);
		while (m->path_ix[j] && !str_eq(m->files[m->path_ix[j] - 1].path, p))
			j = (j + 1) & (cap - 1);
		if (!m->path_ix[j])
			m->path_ix[j] = (uint32_t)i + 1;
	}
}

/* machines.md §3 step 1: one name table, in files order, `machine` before
 * the `machines` items of the same entry. Later entries with a path seen
 * before still allocate their names (§3.4). */
static void allocate_names(tm_manifest *m)
{
	size_t cap = 0;
	for (size_t i = 0; i < m->n_files; i++) {
		const tm_mf_file *f = &m->files[i];
		for (size_t k = 0; k <= f->n_machines; k++) {
			tm_mf_str name = k == 0 ? f->machine : f->machines[k - 1].name;
			if (!name.s || name_index(m, name) >= 0)
				continue;
			TM_GROW(m->names, cap, m->n_names + 1);
			m->names[m->n_names++] = str_dup(name.s, name.len);
			if (m->n_names * 2 > m->name_ix_cap)
				name_ix_grow(m);
			else
				m->name_ix[name_slot(m, m->names[m->n_names - 1])] = (uint32_t)m->n_names;
		}
	}
}

static int parse_manifest(tm_manifest *m, const tj_value *doc, tm_error *err)
{
	const tj_value *root = tj_get(doc, "perfetto_manifest");
	if (doc->type != TJ_OBJECT || !root || root->type != TJ_OBJECT)
		return tm_err(err, TM_EINPUT, "%s", E_ROOT);
	const tj_value *version = tj_get(root, "version");
	if (!version)
		return tm_err(err, TM_EINPUT, "%s", E_VERSION_MISSING);
	if (version->type != TJ_INT)
		return tm_err(err, TM_EINPUT, "%s", E_VERSION_TYPE);
	if (version->i != 1)
		return tm_err(err, TM_EINPUT, E_VERSION_VALUE, version->i);
	const tj_value *tt = tj_get(root, "trace_time");
	if (tt && parse_trace_time(m, tt, err) != 0)
		return -1;
	const tj_value *files = tj_get(root, "files");
	if (files) {
		if (files->type != TJ_ARRAY)
			return tm_err(err, TM_EINPUT, "%s", E_FILES_TYPE);
		m->has_files = 1;
		m->files = tm_xcalloc(files->len ? files->len : 1, sizeof(*m->files));
		for (size_t i = 0; i < files->len; i++) {
			m->n_files++; /* counted first so a half-read entry is freed */
			if (parse_file_entry(&m->files[i], &files->items[i], err) != 0)
				return -1;
		}
	}
	const tj_value *attrs = tj_get(root, "attributes");
	if (attrs && parse_attributes(m, attrs, err) != 0)
		return -1;
	allocate_names(m);
	index_paths(m);
	return 0;
}

int tm_manifest_parse(const void *buf, size_t len, tm_manifest **out, tm_error *err)
{
	*out = NULL;
	tj_value *doc;
	if (tj_parse(buf, len, &doc, err) != 0)
		return -1;
	tm_manifest *m = tm_xcalloc(1, sizeof(*m));
	int rc = parse_manifest(m, doc, err);
	tj_free(doc);
	if (rc != 0) {
		tm_manifest_free(m);
		return -1;
	}
	*out = m;
	return 0;
}

/* A path that holds a NUL cannot name a member (their names are C
 * strings), so the callback is not asked. */
static int path_is_c(tm_mf_str path)
{
	return strlen(path.s) == path.len;
}

int tm_manifest_check_tables(const tm_manifest *m, int (*has_member)(void *ctx, const char *path), void *ctx,
			     tm_error *err)
{
	for (size_t i = 0; i < m->n_files; i++) {
		const tm_mf_file *f = &m->files[i];
		if (f->table && !(path_is_c(f->path) && has_member(ctx, f->path.s)))
			return tm_err(err, TM_EINPUT, E_TABLE_MISSING, f->path.s);
	}
	return 0;
}

static void free_file(tm_mf_file *f)
{
	str_free(&f->path);
	str_free(&f->machine);
	for (size_t k = 0; k < f->n_machines; k++)
		str_free(&f->machines[k].name);
	free(f->machines);
	if (f->clocks) {
		str_free(&f->clocks->machine);
		str_free(&f->clocks->sync_file);
		str_free(&f->clocks->sync_machine);
		free(f->clocks);
	}
	if (f->table) {
		for (size_t k = 0; k < f->table->n_columns; k++) {
			tm_mf_column *c = &f->table->columns[k];
			str_free(&c->name);
			str_free(&c->type);
			str_free(&c->nullability);
			str_free(&c->sort);
			str_free(&c->duplicates);
		}
		free(f->table->columns);
		str_free(&f->table->name);
		free(f->table);
	}
}

void tm_manifest_free(tm_manifest *m)
{
	if (!m)
		return;
	str_free(&m->tt_file);
	str_free(&m->tt_machine);
	for (size_t i = 0; i < m->n_files; i++)
		free_file(&m->files[i]);
	free(m->files);
	for (size_t i = 0; i < m->n_attrs; i++) {
		str_free(&m->attrs[i].key);
		str_free(&m->attrs[i].s);
	}
	free(m->attrs);
	for (size_t i = 0; i < m->n_names; i++)
		str_free(&m->names[i]);
	free(m->names);
	free(m->name_ix);
	free(m->path_ix);
	free(m);
}

tm_manifest *tm_manifest_new_default(void)
{
	return tm_xcalloc(1, sizeof(tm_manifest));
}

void tm_manifest_add_file(tm_manifest *m, const char *path)
{
	m->files = tm_xrealloc(m->files, (m->n_files + 1) * sizeof(*m->files));
	memset(&m->files[m->n_files], 0, sizeof(tm_mf_file));
	m->files[m->n_files++].path = str_dup(path, strlen(path));
	m->has_files = 1;
}

/* ---- lookups --------------------------------------------------------------- */

static int32_t find_entry(const tm_manifest *m, tm_mf_str path)
{
	for (size_t i = 0; i < m->n_files && i <= INT32_MAX; i++)
		if (str_eq(m->files[i].path, path))
			return (int32_t)i;
	return -1;
}

int32_t tm_manifest_find_entry(const tm_manifest *m, const char *name)
{
	if (m && m->path_ix_cap && m->path_ix_n == m->n_files) {
		size_t n = strlen(name), mask = m->path_ix_cap - 1, j = (size_t)tm_khash_bytes(name, n) & mask;
		for (; m->path_ix[j]; j = (j + 1) & mask)
			if (str_eq_c(m->files[m->path_ix[j] - 1].path, name))
				return (int32_t)m->path_ix[j] - 1;
		return -1;
	}
	for (size_t i = 0; m && i < m->n_files && i <= INT32_MAX; i++)
		if (str_eq_c(m->files[i].path, name))
			return (int32_t)i;
	return -1;
}

int tm_manifest_entry_is_multi(const tm_manifest *m, size_t i)
{
	return m->files[i].n_machines > 0;
}

/* machines.md §2; the reference assigns the base once per id-0 item, so
 * the last one stays. */
static const tm_mf_str *base_name(const tm_mf_file *f)
{
	if (f->machine.s)
		return &f->machine;
	const tm_mf_str *base = NULL;
	for (size_t k = 0; k < f->n_machines; k++)
		if (f->machines[k].id == 0)
			base = &f->machines[k].name;
	return base;
}

const char *tm_manifest_entry_base_name(const tm_manifest *m, size_t i)
{
	const tm_mf_str *n = base_name(&m->files[i]);
	return n ? n->s : NULL;
}

static int64_t raw_id_of(const tm_manifest *m, tm_mf_str name)
{
	int64_t k = name_index(m, name);
	return k < 0 ? -1 : TM_MF_RAW_NAMED_BASE + k;
}

int64_t tm_manifest_entry_base_raw_id(const tm_manifest *m, size_t i)
{
	const tm_mf_str *n = base_name(&m->files[i]);
	return n ? raw_id_of(m, *n) : 0;
}

int64_t tm_manifest_entry_remap(const tm_manifest *m, size_t i, uint32_t machine_id)
{
	const tm_mf_file *f = &m->files[i];
	for (size_t k = 0; k < f->n_machines; k++)
		if (f->machines[k].id == machine_id)
			return raw_id_of(m, f->machines[k].name);
	return -1;
}

int64_t tm_manifest_name_raw_id(const tm_manifest *m, const char *name)
{
	return raw_id_of(m, (tm_mf_str){(char *)name, strlen(name)});
}

int tm_manifest_entry_forbids_container(const tm_manifest *m, size_t i)
{
	return m->files[i].clocks != NULL || base_name(&m->files[i]) != NULL;
}

uint32_t tm_manifest_trace_time_clock(const tm_manifest *m)
{
	return m && m->has_trace_time ? m->tt_clock : 0;
}

/* §5.5: M is declared by F. */
static int declares(const tm_mf_file *f, tm_mf_str name)
{
	if (str_eq(f->machine, name))
		return 1;
	for (size_t k = 0; k < f->n_machines; k++)
		if (str_eq(f->machines[k].name, name))
			return 1;
	return 0;
}

/* ---- application (§6 step 7) ----------------------------------------------- */

/* The row of a raw id, created on first use (machines.md §3). */
static uint32_t ensure_row(const tm_manifest *m, tm_mf_plan *p, int64_t raw)
{
	for (size_t r = 0; r < p->n_rows; r++)
		if (p->rows[r].raw_id == raw)
			return (uint32_t)r;
	p->rows = tm_xrealloc(p->rows, (p->n_rows + 1) * sizeof(*p->rows));
	tm_mf_row *row = &p->rows[p->n_rows];
	row->raw_id = raw;
	row->name = NULL;
	if (raw >= TM_MF_RAW_NAMED_BASE) {
		tm_mf_str n = m->names[raw - TM_MF_RAW_NAMED_BASE];
		row->name = tm_xstrndup(n.s, n.len);
	}
	return (uint32_t)p->n_rows++;
}

/* The raw id a file's own machine resolves to without a machine name: its
 * base machine, else the host. */
static int64_t file_raw_id(const tm_manifest *m, const tm_mf_file *f)
{
	const tm_mf_str *n = base_name(f);
	return n ? raw_id_of(m, *n) : 0;
}

/* §7: the raw id a (file, machine) reference names; `file` is present. */
static int resolve_reference(const tm_manifest *m, const ref_texts *t, tm_mf_str file, tm_mf_str machine,
			     int64_t *raw, tm_error *err)
{
	int32_t e = find_entry(m, file);
	if (e < 0)
		return tm_err(err, TM_EINPUT, t->unknown_file, file.s);
	const tm_mf_file *f = &m->files[e];
	if (!machine.s) {
		if (f->n_machines > 0)
			return tm_err(err, TM_EINPUT, t->multi, file.s);
		*raw = file_raw_id(m, f);
		return 0;
	}
	if (!declares(f, machine))
		return tm_err(err, TM_EINPUT, t->undeclared, machine.s, file.s);
	*raw = raw_id_of(m, machine);
	return 0;
}

/* clocks.md §5.3: without a file, trace time is on machine row 0, whatever
 * machine that turns out to be. */
static int plan_trace_time(const tm_manifest *m, tm_mf_plan *p, tm_error *err)
{
	uint32_t row = 0;
	if (m->tt_machine.s && !m->tt_file.s)
		return tm_err(err, TM_EINPUT, E_TT_MACHINE_ALONE, m->tt_machine.s);
	if (m->tt_file.s) {
		int64_t raw;
		if (resolve_reference(m, &TRACE_TIME_REF, m->tt_file, m->tt_machine, &raw, err) != 0)
			return -1;
		row = ensure_row(m, p, raw);
	}
	p->has_trace_time = 1;
	p->trace_time = (tm_clock_node){m->tt_clock, 0, 0, row};
	return 0;
}

/* The trace-file id of a member, for a private (TRACE_FILE) clock node. */
static int member_id(tm_mf_str path, int64_t (*member_file_id)(void *ctx, const char *path), void *ctx,
		     uint32_t *id, tm_error *err)
{
	int64_t v = path_is_c(path) ? member_file_id(ctx, path.s) : -1;
	if (v < 0 || v > UINT32_MAX)
		return tm_err(err, TM_EINPUT, E_UNRESOLVED, path.s);
	*id = (uint32_t)v;
	return 0;
}

/* One clocks block of entry i -> one edge (clocks.md §9), checks in §6
 * step-7 order: source machine, reference, PIN source member, clock-less
 * reference member. */
static int plan_edge(const tm_manifest *m, size_t i, int64_t (*member_file_id)(void *ctx, const char *path),
		     void *ctx, tm_mf_plan *p, tm_error *err)
{
	const tm_mf_file *g = &m->files[i];
	const tm_mf_clocks *c = g->clocks;
	int64_t src_raw, ref_raw;
	if (!c->machine.s) {
		if (g->n_machines > 0)
			return tm_err(err, TM_EINPUT, E_SOURCE_MULTI, g->path.s);
		src_raw = file_raw_id(m, g);
	} else {
		if (!declares(g, c->machine))
			return tm_err(err, TM_EINPUT, E_SOURCE_UNDECLARED, c->machine.s, g->path.s);
		src_raw = raw_id_of(m, c->machine);
	}
	if (resolve_reference(m, &SYNC_TO_REF, c->sync_file, c->sync_machine, &ref_raw, err) != 0)
		return -1;
	uint32_t src_row = ensure_row(m, p, src_raw), ref_row = ensure_row(m, p, ref_raw);
	tm_clock_node src = {c->clock, 0, 0, src_row}, ref = {c->sync_clock, 0, 0, ref_row};
	if (!c->clock) {
		src.clock_id = TM_CLOCK_TRACE_FILE;
		if (member_id(g->path, member_file_id, ctx, &src.file_id, err) != 0)
			return -1;
	}
	if (!c->sync_clock) {
		ref.clock_id = TM_CLOCK_TRACE_FILE;
		if (member_id(c->sync_file, member_file_id, ctx, &ref.file_id, err) != 0)
			return -1;
	}
	p->edges = tm_xrealloc(p->edges, (p->n_edges + 1) * sizeof(*p->edges));
	p->edges[p->n_edges++] = (tm_mf_edge){
		.src = src,
		.ref = ref,
		.src_ts = c->offset_ns < 0 ? -c->offset_ns : 0,
		.ref_ts = c->offset_ns > 0 ? c->offset_ns : 0,
		.file_index = i,
	};
	return 0;
}

int tm_manifest_apply(const tm_manifest *m, int64_t (*member_file_id)(void *ctx, const char *path), void *ctx,
		      tm_mf_plan *out, tm_error *err)
{
	memset(out, 0, sizeof(*out));
	for (size_t k = 0; k < m->n_names; k++)
		ensure_row(m, out, TM_MF_RAW_NAMED_BASE + (int64_t)k);
	if (m->has_trace_time && plan_trace_time(m, out, err) != 0)
		goto fail;
	for (size_t i = 0; i < m->n_files; i++)
		if (m->files[i].clocks && plan_edge(m, i, member_file_id, ctx, out, err) != 0)
			goto fail;
	return 0;
fail:
	tm_mf_plan_free(out);
	return -1;
}

void tm_mf_plan_free(tm_mf_plan *p)
{
	if (!p)
		return;
	for (size_t r = 0; r < p->n_rows; r++)
		free(p->rows[r].name);
	free(p->rows);
	free(p->edges);
	memset(p, 0, sizeof(*p));
}

/* ---- output ---------------------------------------------------------------- */

static cJSON *raw_int(int64_t v)
{
	char s[32];
	snprintf(s, sizeof s, "%" PRId64, v);
	return cJSON_CreateRaw(s);
}

/* Append s as a JSON string, escaped the way cJSON escapes (so output
 * looks the same whichever printed it), NULs included. */
static void put_json_string(tm_buf *b, tm_mf_str s)
{
	static const char short_form[] = {['\b'] = 'b', ['\f'] = 'f', ['\n'] = 'n', ['\r'] = 'r', ['\t'] = 't'};
	tm_buf_puts(b, "\"");
	for (size_t k = 0; k < s.len; k++) {
		unsigned char c = (unsigned char)s.s[k];
		if (c == '"' || c == '\\')
			tm_buf_printf(b, "\\%c", c);
		else if (c < sizeof(short_form) && short_form[c])
			tm_buf_printf(b, "\\%c", short_form[c]);
		else if (c < 0x20)
			tm_buf_printf(b, "\\u%04x", c);
		else
			tm_buf_put(b, &c, 1);
	}
	tm_buf_puts(b, "\"");
}

/* A JSON string item of all the bytes: cJSON stops at a NUL, so a string
 * holding one goes in raw. */
static cJSON *string_item(tm_mf_str s)
{
	if (path_is_c(s))
		return cJSON_CreateString(s.s);
	tm_buf b = {0};
	put_json_string(&b, s);
	cJSON *item = cJSON_CreateRaw(b.data);
	tm_buf_free(&b);
	return item;
}

static void add_string(cJSON *o, const char *key, tm_mf_str s)
{
	cJSON_AddItemToObject(o, key, string_item(s));
}

static void add_clock(cJSON *o, const char *key, uint32_t id)
{
	char buf[32];
	cJSON_AddStringToObject(o, key, tm_clock_name(id, buf));
}

static cJSON *clocks_json(const tm_mf_clocks *c)
{
	cJSON *o = cJSON_CreateObject();
	if (c->machine.s)
		add_string(o, "machine", c->machine);
	if (c->clock)
		add_clock(o, "clock", c->clock);
	cJSON *sync = cJSON_AddObjectToObject(o, "sync_to");
	add_string(sync, "file", c->sync_file);
	if (c->sync_machine.s)
		add_string(sync, "machine", c->sync_machine);
	if (c->sync_clock)
		add_clock(sync, "clock", c->sync_clock);
	if (c->has_offset)
		cJSON_AddItemToObject(o, "offset_ns", raw_int(c->offset_ns));
	return o;
}

static cJSON *table_json(const tm_mf_table *t)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddItemToObject(o, "format", raw_int(t->format));
	add_string(o, "name", t->name);
	cJSON_AddItemToObject(o, "row_count", raw_int(t->row_count));
	cJSON *cols = cJSON_AddArrayToObject(o, "columns");
	for (size_t k = 0; k < t->n_columns; k++) {
		const tm_mf_column *c = &t->columns[k];
		cJSON *co = cJSON_CreateObject();
		add_string(co, "name", c->name);
		add_string(co, "type", c->type);
		add_string(co, "nullability", c->nullability);
		add_string(co, "sort", c->sort);
		add_string(co, "duplicates", c->duplicates);
		cJSON_AddItemToArray(cols, co);
	}
	return o;
}

cJSON *tm_manifest_entry_json(const tm_manifest *m, size_t i)
{
	const tm_mf_file *f = &m->files[i];
	cJSON *o = cJSON_CreateObject();
	add_string(o, "path", f->path);
	if (f->machine.s)
		add_string(cJSON_AddObjectToObject(o, "machine"), "name", f->machine);
	if (f->has_machines) {
		cJSON *arr = cJSON_AddArrayToObject(o, "machines");
		for (size_t k = 0; k < f->n_machines; k++) {
			cJSON *it = cJSON_CreateObject();
			cJSON_AddItemToObject(it, "id", raw_int(f->machines[k].id));
			add_string(it, "name", f->machines[k].name);
			cJSON_AddItemToArray(arr, it);
		}
	}
	if (f->clocks)
		cJSON_AddItemToObject(o, "clocks", clocks_json(f->clocks));
	if (f->table)
		cJSON_AddItemToObject(o, "__exported_table_schema", table_json(f->table));
	return o;
}

cJSON *tm_manifest_attributes_json(const tm_manifest *m)
{
	cJSON *o = cJSON_CreateObject();
	for (size_t i = 0; i < m->n_attrs; i++) {
		const tm_mf_attr *a = &m->attrs[i];
		cJSON_AddItemToObject(o, a->key.s, a->is_int ? raw_int(a->i) : string_item(a->s));
	}
	return o;
}

/* Print a leaf (string, number, raw) through cJSON's escaping. */
static void print_leaf(tm_buf *b, const cJSON *leaf)
{
	char *s = cJSON_PrintUnformatted(leaf);
	tm_buf_puts(b, s ? s : "null");
	cJSON_free(s);
}

/* cJSON keys are C strings, so the attributes object's keys (which may
 * hold NULs) are printed from the manifest: its k-th child is attrs[k]. */
typedef struct printer {
	tm_buf *b;
	const cJSON *attrs_obj;
	const tm_manifest *m;
} printer;

/* cJSON's own formatter indents with tabs and keeps arrays on one line;
 * the files users read get the common 2-space layout, one member or
 * element per line, empty containers as {} and []. */
static void print_pretty(const printer *pr, const cJSON *v, int depth)
{
	tm_buf *b = pr->b;
	if (!cJSON_IsObject(v) && !cJSON_IsArray(v)) {
		print_leaf(b, v);
		return;
	}
	int is_obj = cJSON_IsObject(v);
	if (!v->child) {
		tm_buf_puts(b, is_obj ? "{}" : "[]");
		return;
	}
	tm_buf_puts(b, is_obj ? "{\n" : "[\n");
	size_t k = 0;
	for (const cJSON *c = v->child; c; c = c->next, k++) {
		tm_buf_printf(b, "%*s", 2 * (depth + 1), "");
		if (is_obj) {
			put_json_string(b, v == pr->attrs_obj ? pr->m->attrs[k].key
							       : (tm_mf_str){c->string, strlen(c->string)});
			tm_buf_puts(b, ": ");
		}
		print_pretty(pr, c, depth + 1);
		tm_buf_puts(b, c->next ? ",\n" : "\n");
	}
	tm_buf_printf(b, "%*s%s", 2 * depth, "", is_obj ? "}" : "]");
}

char *tm_manifest_to_json(const tm_manifest *m, size_t *len)
{
	cJSON *root = cJSON_CreateObject();
	cJSON *pm = cJSON_AddObjectToObject(root, "perfetto_manifest");
	cJSON_AddItemToObject(pm, "version", raw_int(1));
	if (m->has_trace_time) {
		cJSON *tt = cJSON_AddObjectToObject(pm, "trace_time");
		add_clock(tt, "clock", m->tt_clock);
		if (m->tt_file.s)
			add_string(tt, "file", m->tt_file);
		if (m->tt_machine.s)
			add_string(tt, "machine", m->tt_machine);
	}
	if (m->has_files) {
		cJSON *files = cJSON_AddArrayToObject(pm, "files");
		for (size_t i = 0; i < m->n_files; i++)
			cJSON_AddItemToArray(files, tm_manifest_entry_json(m, i));
	}
	cJSON *attrs = NULL;
	if (m->has_attributes)
		cJSON_AddItemToObject(pm, "attributes", attrs = tm_manifest_attributes_json(m));
	tm_buf b = {0};
	print_pretty(&(printer){&b, attrs, m}, root, 0);
	tm_buf_puts(&b, "\n");
	cJSON_Delete(root);
	return tm_buf_detach(&b, len);
}
