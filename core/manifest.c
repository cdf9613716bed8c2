/* core/manifest.c - perfetto_manifest parsing, validation and application
 * (spec/manifest.md). Checks run in the order of §6; the first failure wins
 * and its text is the contract (§8). */
#include "manifest.h"

#include <cjson/cJSON.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"

#define PFX "perfetto_manifest: "
#define RAW_NAMED_BASE (INT64_C(1) << 32)

static const char E_ROOT[] = PFX "expected a JSON object with a top-level perfetto_manifest key";
static const char E_CLOCK_STRING[] = PFX "clock name must be a string";
static const char E_FILES_ENTRY[] = PFX "files entries must be objects with a string path";
static const char E_MACHINE_OBJ[] =
	PFX "machine must be an object with a string name, e.g. \"machine\": {\"name\": \"phone\"}.";
static const char E_MACHINES_ITEM[] =
	PFX "machines entries need an integer id and a string name, e.g. \"machines\": [{\"id\": 0, \"name\": \"phone\"}].";
static const char E_TABLE_SHAPE[] =
	PFX "__exported_table_schema needs an integer format, a string name, an integer row_count and a columns array";

static char *dup_or_null(const char *s)
{
	return s ? tm_xstrdup(s) : NULL;
}

/* A clock name (§5.8): absent -> 0, else the id or an error. */
static int clock_field(const tj_value *v, uint32_t *id, tm_error *err)
{
	*id = 0;
	if (!v)
		return 0;
	if (v->type != TJ_STRING)
		return tm_err(err, TM_EINPUT, "%s", E_CLOCK_STRING);
	*id = tm_clock_id_from_manifest_name(v->s);
	if (!*id)
		return tm_err(err, TM_EINPUT,
			      PFX "unknown clock name: %s. Use one of REALTIME, REALTIME_COARSE, MONOTONIC, "
				  "MONOTONIC_COARSE, MONOTONIC_RAW, BOOTTIME.",
			      v->s);
	return 0;
}

static int parse_trace_time(tm_manifest *m, const tj_value *tt, tm_error *err)
{
	if (tt->type != TJ_OBJECT)
		return tm_err(err, TM_EINPUT, PFX "trace_time must be an object");
	const tj_value *clock = tj_get(tt, "clock");
	if (!clock)
		return tm_err(err, TM_EINPUT, PFX "trace_time needs a clock");
	if (clock_field(clock, &m->tt_clock, err) != 0)
		return -1;
	const tj_value *file = tj_get(tt, "file"), *machine = tj_get(tt, "machine");
	if (file && file->type != TJ_STRING)
		return tm_err(err, TM_EINPUT, PFX "trace_time: file must be a string");
	if (machine && machine->type != TJ_STRING)
		return tm_err(err, TM_EINPUT, PFX "trace_time: machine must be a string");
	m->has_trace_time = 1;
	m->tt_file = file ? tm_xstrdup(file->s) : NULL;
	m->tt_machine = machine ? tm_xstrdup(machine->s) : NULL;
	return 0;
}

static int parse_table(tm_mf_file *f, const tj_value *t, tm_error *err)
{
	const tj_value *format = tj_get(t, "format"), *name = tj_get(t, "name"),
		       *rows = tj_get(t, "row_count"), *cols = tj_get(t, "columns");
	if (t->type != TJ_OBJECT || !format || format->type != TJ_INT || !name || name->type != TJ_STRING ||
	    !rows || rows->type != TJ_INT || !cols || cols->type != TJ_ARRAY)
		return tm_err(err, TM_EINPUT, "%s", E_TABLE_SHAPE);
	if (rows->i < 0 || rows->i > INT64_C(4294967295))
		return tm_err(err, TM_EINPUT, PFX "table '%s': invalid row_count", name->s);
	tm_mf_table *tb = tm_xcalloc(1, sizeof(*tb));
	f->table = tb;
	tb->format = format->i;
	tb->row_count = rows->i;
	tb->name = tm_xstrdup(name->s);
	tb->columns = tm_xcalloc(cols->len ? cols->len : 1, sizeof(*tb->columns));
	static const char *const keys[] = {"name", "type", "nullability", "sort", "duplicates"};
	for (size_t i = 0; i < cols->len; i++) {
		const tj_value *c = &cols->items[i];
		char *vals[5] = {0};
		for (int k = 0; k < 5; k++) {
			const tj_value *v = tj_get(c, keys[k]);
			if (!v || v->type != TJ_STRING) {
				for (int j = 0; j < k; j++)
					free(vals[j]);
				return tm_err(err, TM_EINPUT, PFX "table '%s': malformed column entry", tb->name);
			}
			vals[k] = tm_xstrdup(v->s);
		}
		tb->columns[tb->n_columns++] = (tm_mf_column){vals[0], vals[1], vals[2], vals[3], vals[4]};
	}
	return 0;
}

static int parse_clocks(tm_mf_file *f, const tj_value *c, tm_error *err)
{
	if (c->type != TJ_OBJECT)
		return tm_err(err, TM_EINPUT, PFX "clocks must be an object");
	tm_mf_clocks *k = tm_xcalloc(1, sizeof(*k));
	f->clocks = k;
	const tj_value *machine = tj_get(c, "machine");
	if (machine && machine->type != TJ_STRING)
		return tm_err(err, TM_EINPUT, PFX "clocks: machine must be a string");
	k->machine = machine ? tm_xstrdup(machine->s) : NULL;
	if (clock_field(tj_get(c, "clock"), &k->clock, err) != 0)
		return -1;
	const tj_value *sync = tj_get(c, "sync_to");
	if (!sync)
		return tm_err(err, TM_EINPUT,
			      PFX "clocks: a sync_to block is required. Manual clock handling relates this file to a "
				  "clock in another trace, e.g. \"sync_to\": {\"file\": \"other.pb\"}.");
	if (sync->type != TJ_OBJECT)
		return tm_err(err, TM_EINPUT, PFX "clocks: sync_to must be an object");
	const tj_value *file = tj_get(sync, "file");
	if (!file || file->type != TJ_STRING)
		return tm_err(err, TM_EINPUT, PFX "clocks: sync_to.file is required and must be a string");
	k->sync_file = tm_xstrdup(file->s);
	const tj_value *sm = tj_get(sync, "machine");
	if (sm && sm->type != TJ_STRING)
		return tm_err(err, TM_EINPUT, PFX "clocks: sync_to.machine must be a string");
	k->sync_machine = sm ? tm_xstrdup(sm->s) : NULL;
	if (clock_field(tj_get(sync, "clock"), &k->sync_clock, err) != 0)
		return -1;
	const tj_value *off = tj_get(c, "offset_ns");
	if (off) {
		if (off->type != TJ_INT)
			return tm_err(err, TM_EINPUT, PFX "clocks: offset_ns must be an integer");
		if (off->i == INT64_MIN)
			return tm_err(err, TM_EINPUT, PFX "clocks: offset_ns is out of range");
		k->offset_ns = off->i;
	}
	return 0;
}

static int parse_file_entry(tm_mf_file *f, const tj_value *e, tm_error *err)
{
	const tj_value *path = tj_get(e, "path");
	if (e->type != TJ_OBJECT || !path || path->type != TJ_STRING)
		return tm_err(err, TM_EINPUT, "%s", E_FILES_ENTRY);
	f->path = tm_xstrdup(path->s);
	const tj_value *table = tj_get(e, "__exported_table_schema"), *clocks = tj_get(e, "clocks"),
		       *machine = tj_get(e, "machine"), *machines = tj_get(e, "machines");
	if (table) {
		if (clocks || machine || machines)
			return tm_err(err, TM_EINPUT,
				      PFX "'%s': an exported table is not a trace, so __exported_table_schema cannot "
					  "be combined with clocks/machine/machines",
				      f->path);
		return parse_table(f, table, err);
	}
	if (clocks && parse_clocks(f, clocks, err) != 0)
		return -1;
	if (machine && machines)
		return tm_err(err, TM_EINPUT,
			      PFX "machine and machines are mutually exclusive. Use `machine` for a single-machine "
				  "file, or `machines` to remap a multi-machine proto's embedded ids; not both.");
	if (machine) {
		const tj_value *name = tj_get(machine, "name");
		if (machine->type != TJ_OBJECT || !name || name->type != TJ_STRING)
			return tm_err(err, TM_EINPUT, "%s", E_MACHINE_OBJ);
		if (!name->s[0])
			return tm_err(err, TM_EINPUT, PFX "machine: name must be non-empty");
		f->machine = tm_xstrdup(name->s);
	}
	if (machines) {
		if (machines->type != TJ_ARRAY)
			return tm_err(err, TM_EINPUT, PFX "machines must be an array");
		f->has_machines = 1;
		f->machines = tm_xcalloc(machines->len ? machines->len : 1, sizeof(*f->machines));
		for (size_t i = 0; i < machines->len; i++) {
			const tj_value *it = &machines->items[i];
			const tj_value *id = tj_get(it, "id"), *name = tj_get(it, "name");
			if (it->type != TJ_OBJECT || !tj_is_number(id) || !name || name->type != TJ_STRING)
				return tm_err(err, TM_EINPUT, "%s", E_MACHINES_ITEM);
			/* §5.4: any number, a double truncated toward zero. */
			int64_t v;
			if (id->type == TJ_INT)
				v = id->i;
			else if (id->d >= 9223372036854775807.0)
				v = INT64_MAX;
			else if (id->d <= -9223372036854775808.0)
				v = INT64_MIN;
			else
				v = (int64_t)id->d;
			if (v < 0 || v > INT64_C(4294967295))
				return tm_err(err, TM_EINPUT, PFX "machines: id must be in [0, 4294967295]");
			if (!name->s[0])
				return tm_err(err, TM_EINPUT, PFX "machines: name must be non-empty");
			f->machines[f->n_machines++] = (tm_mf_remap){(uint32_t)v, tm_xstrdup(name->s)};
		}
	}
	return 0;
}

static int cmp_attr(const void *a, const void *b)
{
	return strcmp(((const tm_mf_attr *)a)->key, ((const tm_mf_attr *)b)->key);
}

static int parse_attributes(tm_manifest *m, const tj_value *a, tm_error *err)
{
	if (a->type != TJ_OBJECT)
		return tm_err(err, TM_EINPUT,
			      PFX "attributes must be an object of string or integer values, e.g. \"attributes\": "
				  "{\"benchmark\": \"startup\"}.");
	/* Duplicate keys: the last one wins (§4); checks run in key order. */
	m->attrs = tm_xcalloc(a->len ? a->len : 1, sizeof(*m->attrs));
	for (size_t i = 0; i < a->len; i++) {
		if (tj_get(a, a->keys[i]) != &a->items[i])
			continue;
		const tj_value *v = &a->items[i];
		tm_mf_attr *at = &m->attrs[m->n_attrs++];
		at->key = tm_xstrdup(a->keys[i]);
		at->is_int = v->type == TJ_INT;
		at->i = v->type == TJ_INT ? v->i : 0;
		/* Remember the bad ones by type; report in key order below. */
		at->s = v->type == TJ_STRING ? tm_xstrdup(v->s) : NULL;
		if (v->type != TJ_STRING && v->type != TJ_INT)
			at->i = -1, at->is_int = -1;
	}
	qsort(m->attrs, m->n_attrs, sizeof(*m->attrs), cmp_attr);
	for (size_t i = 0; i < m->n_attrs; i++) {
		if (!m->attrs[i].key[0])
			return tm_err(err, TM_EINPUT, PFX "attributes: keys must be non-empty");
		if (m->attrs[i].is_int < 0)
			return tm_err(err, TM_EINPUT, PFX "attributes: '%s' must be a string or an integer",
				      m->attrs[i].key);
	}
	return 0;
}

/* machines.md §3: one name table, in files order, machine before machines. */
static void add_name(tm_manifest *m, const char *name)
{
	if (!name || tm_manifest_name_raw_id(m, name) >= 0)
		return;
	m->names = tm_xrealloc(m->names, (m->n_names + 1) * sizeof(*m->names));
	m->names[m->n_names++] = tm_xstrdup(name);
}

int tm_manifest_parse(const void *buf, size_t len, tm_manifest **out, tm_error *err)
{
	*out = NULL;
	tj_value *doc;
	if (tj_parse(buf, len, &doc, err) != 0)
		return -1;
	tm_manifest *m = tm_xcalloc(1, sizeof(*m));
	const tj_value *root = tj_get(doc, "perfetto_manifest");
	const tj_value *v, *tt, *files, *attrs;
	if (doc->type != TJ_OBJECT || !root || root->type != TJ_OBJECT) {
		tm_err(err, TM_EINPUT, "%s", E_ROOT);
		goto fail;
	}
	v = tj_get(root, "version");
	if (!v) {
		tm_err(err, TM_EINPUT, PFX "missing required field: version");
		goto fail;
	}
	if (v->type != TJ_INT) {
		tm_err(err, TM_EINPUT, PFX "version must be an integer");
		goto fail;
	}
	if (v->i != 1) {
		tm_err(err, TM_EINPUT,
		       PFX "unsupported version: %" PRId64 ". Only version 1 is supported; set \"version\": 1.", v->i);
		goto fail;
	}
	tt = tj_get(root, "trace_time");
	if (tt && parse_trace_time(m, tt, err) != 0)
		goto fail;
	files = tj_get(root, "files");
	if (files) {
		if (files->type != TJ_ARRAY) {
			tm_err(err, TM_EINPUT, PFX "files must be an array");
			goto fail;
		}
		m->files = tm_xcalloc(files->len ? files->len : 1, sizeof(*m->files));
		for (size_t i = 0; i < files->len; i++) {
			m->n_files++;
			if (parse_file_entry(&m->files[i], &files->items[i], err) != 0)
				goto fail;
		}
	}
	attrs = tj_get(root, "attributes");
	if (attrs && parse_attributes(m, attrs, err) != 0)
		goto fail;
	for (size_t i = 0; i < m->n_files; i++) {
		add_name(m, m->files[i].machine);
		for (size_t k = 0; k < m->files[i].n_machines; k++)
			add_name(m, m->files[i].machines[k].name);
	}
	tj_free(doc);
	*out = m;
	return 0;
fail:
	tj_free(doc);
	tm_manifest_free(m);
	return -1;
}

int tm_manifest_check_tables(const tm_manifest *m, int (*has_member)(void *ctx, const char *path), void *ctx,
			     tm_error *err)
{
	for (size_t i = 0; i < m->n_files; i++)
		if (m->files[i].table && !has_member(ctx, m->files[i].path))
			return tm_err(err, TM_EINPUT, PFX "table member '%s' is declared but not present in the archive",
				      m->files[i].path);
	return 0;
}

static void free_file(tm_mf_file *f)
{
	free(f->path);
	free(f->machine);
	for (size_t k = 0; k < f->n_machines; k++)
		free(f->machines[k].name);
	free(f->machines);
	if (f->clocks) {
		free(f->clocks->machine);
		free(f->clocks->sync_file);
		free(f->clocks->sync_machine);
		free(f->clocks);
	}
	if (f->table) {
		for (size_t k = 0; k < f->table->n_columns; k++) {
			tm_mf_column *c = &f->table->columns[k];
			free(c->name), free(c->type), free(c->nullability), free(c->sort), free(c->duplicates);
		}
		free(f->table->columns);
		free(f->table->name);
		free(f->table);
	}
}

void tm_manifest_free(tm_manifest *m)
{
	if (!m)
		return;
	free(m->tt_file);
	free(m->tt_machine);
	for (size_t i = 0; i < m->n_files; i++)
		free_file(&m->files[i]);
	free(m->files);
	for (size_t i = 0; i < m->n_attrs; i++) {
		free(m->attrs[i].key);
		free(m->attrs[i].s);
	}
	free(m->attrs);
	for (size_t i = 0; i < m->n_names; i++)
		free(m->names[i]);
	free(m->names);
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
	m->files[m->n_files++].path = tm_xstrdup(path);
}

/* ---- lookups ----------------------------------------------------------- */

int32_t tm_manifest_find_entry(const tm_manifest *m, const char *name)
{
	for (size_t i = 0; m && i < m->n_files; i++)
		if (strcmp(m->files[i].path, name) == 0)
			return (int32_t)i;
	return -1;
}

int tm_manifest_entry_is_multi(const tm_manifest *m, size_t i)
{
	return m->files[i].n_machines > 0;
}

const char *tm_manifest_entry_base_name(const tm_manifest *m, size_t i)
{
	const tm_mf_file *f = &m->files[i];
	if (f->machine)
		return f->machine;
	for (size_t k = 0; k < f->n_machines; k++)
		if (f->machines[k].id == 0)
			return f->machines[k].name;
	return NULL;
}

int64_t tm_manifest_name_raw_id(const tm_manifest *m, const char *name)
{
	for (size_t k = 0; k < m->n_names; k++)
		if (strcmp(m->names[k], name) == 0)
			return RAW_NAMED_BASE + (int64_t)k;
	return -1;
}

int64_t tm_manifest_entry_base_raw_id(const tm_manifest *m, size_t i)
{
	const char *n = tm_manifest_entry_base_name(m, i);
	return n ? tm_manifest_name_raw_id(m, n) : 0;
}

int tm_manifest_entry_forbids_container(const tm_manifest *m, size_t i)
{
	return m->files[i].clocks != NULL || tm_manifest_entry_base_name(m, i) != NULL;
}

int64_t tm_manifest_entry_remap(const tm_manifest *m, size_t i, uint32_t machine_id)
{
	const tm_mf_file *f = &m->files[i];
	for (size_t k = 0; k < f->n_machines; k++)
		if (f->machines[k].id == machine_id)
			return tm_manifest_name_raw_id(m, f->machines[k].name);
	return -1;
}

uint32_t tm_manifest_trace_time_clock(const tm_manifest *m)
{
	return m && m->has_trace_time ? m->tt_clock : 0;
}

/* A machine name M is declared by entry F (§5.5). */
static int declares(const tm_mf_file *f, const char *name)
{
	if (f->machine && strcmp(f->machine, name) == 0)
		return 1;
	for (size_t k = 0; k < f->n_machines; k++)
		if (strcmp(f->machines[k].name, name) == 0)
			return 1;
	return 0;
}

/* ---- application -------------------------------------------------------- */

static uint32_t plan_row(tm_mf_plan *p, int64_t raw, const char *name)
{
	for (size_t r = 0; r < p->n_rows; r++)
		if (p->rows[r].raw_id == raw)
			return (uint32_t)r;
	p->rows = tm_xrealloc(p->rows, (p->n_rows + 1) * sizeof(*p->rows));
	p->rows[p->n_rows] = (tm_mf_row){raw, dup_or_null(name)};
	return (uint32_t)p->n_rows++;
}

static uint32_t name_row(const tm_manifest *m, tm_mf_plan *p, const char *name)
{
	return plan_row(p, tm_manifest_name_raw_id(m, name), name);
}

/* The base machine of a single-machine entry, else the host (§7). */
static uint32_t base_row(const tm_manifest *m, tm_mf_plan *p, size_t i)
{
	const char *n = tm_manifest_entry_base_name(m, i);
	return n ? name_row(m, p, n) : plan_row(p, 0, NULL);
}

/* The wording of §7's errors for the two places a file reference appears. */
typedef struct ref_texts {
	const char *unknown_file; /* %s: the file */
	const char *multi;        /* %s: the file */
	const char *undeclared;   /* %s: the machine, %s: the file */
} ref_texts;

static const ref_texts trace_time_texts = {
	PFX "trace_time: file names unknown file '%s'. It must match the `path` of an entry in the `files` array.",
	PFX "trace_time: file '%s' is a multi-machine trace; also name the machine with trace_time: machine.",
	PFX "trace_time: machine '%s' is not a machine declared by file '%s'.",
};

static const ref_texts sync_to_texts = {
	PFX "clocks: sync_to.file names unknown file '%s'. It must match the `path` of an entry in the `files` array.",
	PFX "clocks: sync_to.file '%s' is a multi-machine trace; also name the machine with clocks: sync_to.machine.",
	PFX "clocks: sync_to.machine '%s' is not a machine declared by file '%s'.",
};

/* manifest.md §7: the machine row a (file, machine) reference names. */
static int resolve_reference(const tm_manifest *m, tm_mf_plan *out, const ref_texts *t, const char *file,
			     const char *machine, uint32_t *row, tm_error *err)
{
	int32_t e = tm_manifest_find_entry(m, file);
	if (e < 0)
		return tm_err(err, TM_EINPUT, t->unknown_file, file);
	if (!machine) {
		if (tm_manifest_entry_is_multi(m, (size_t)e))
			return tm_err(err, TM_EINPUT, t->multi, file);
		*row = base_row(m, out, (size_t)e);
		return 0;
	}
	if (!declares(&m->files[e], machine))
		return tm_err(err, TM_EINPUT, t->undeclared, machine, file);
	*row = name_row(m, out, machine);
	return 0;
}

int tm_manifest_apply(const tm_manifest *m, int64_t (*member_file_id)(void *ctx, const char *path), void *ctx,
		      tm_mf_plan *out, tm_error *err)
{
	memset(out, 0, sizeof(*out));
	for (size_t k = 0; k < m->n_names; k++)
		plan_row(out, RAW_NAMED_BASE + (int64_t)k, m->names[k]);

	if (m->has_trace_time) {
		uint32_t row = 0; /* clocks.md §5.3: no file -> machine row 0 */
		if (!m->tt_file && m->tt_machine) {
			tm_err(err, TM_EINPUT,
			       PFX "trace_time: machine '%s' needs trace_time: file too: a machine name alone is "
				   "ambiguous because embedded machine ids are scoped to their trace.",
			       m->tt_machine);
			goto fail;
		}
		if (m->tt_file && resolve_reference(m, out, &trace_time_texts, m->tt_file, m->tt_machine, &row, err) != 0)
			goto fail;
		out->has_trace_time = 1;
		out->trace_time = (tm_clock_node){m->tt_clock, 0, 0, row};
	}

	for (size_t i = 0; i < m->n_files; i++) {
		const tm_mf_file *g = &m->files[i];
		const tm_mf_clocks *c = g->clocks;
		if (!c)
			continue;
		uint32_t src_row, ref_row;
		/* Source machine. */
		if (!c->machine) {
			if (tm_manifest_entry_is_multi(m, i)) {
				tm_err(err, TM_EINPUT,
				       PFX "clocks: file '%s' is a multi-machine trace; name which machine the clock "
					   "is on with clocks: machine.",
				       g->path);
				goto fail;
			}
			src_row = base_row(m, out, i);
		} else {
			if (!declares(g, c->machine)) {
				tm_err(err, TM_EINPUT, PFX "clocks: machine '%s' is not a machine declared by file '%s'.",
				       c->machine, g->path);
				goto fail;
			}
			src_row = name_row(m, out, c->machine);
		}
		if (resolve_reference(m, out, &sync_to_texts, c->sync_file, c->sync_machine, &ref_row, err) != 0)
			goto fail;
		/* clocks.md §9.1: PIN and clock-less references use the files'
		 * private clocks, which need real members. */
		tm_clock_node src = {c->clock, 0, 0, src_row}, ref = {c->sync_clock, 0, 0, ref_row};
		const char *unresolved = NULL;
		if (!c->clock) {
			int64_t id = member_file_id(ctx, g->path);
			if (id < 0)
				unresolved = g->path;
			src = (tm_clock_node){TM_CLOCK_TRACE_FILE, 0, (uint32_t)id, src_row};
		}
		if (!unresolved && !c->sync_clock) {
			int64_t id = member_file_id(ctx, c->sync_file);
			if (id < 0)
				unresolved = c->sync_file;
			ref = (tm_clock_node){TM_CLOCK_TRACE_FILE, 0, (uint32_t)id, ref_row};
		}
		if (unresolved) {
			tm_err(err, TM_EINPUT,
			       PFX "clocks: could not resolve file '%s'. It must match the `path` of an entry in the "
				   "`files` array.",
			       unresolved);
			goto fail;
		}
		/* §9.2: {source: max(0, -offset), reference: max(0, offset)}. */
		out->edges = tm_xrealloc(out->edges, (out->n_edges + 1) * sizeof(*out->edges));
		out->edges[out->n_edges++] = (tm_mf_edge){
			src, ref, c->offset_ns < 0 ? -c->offset_ns : 0, c->offset_ns > 0 ? c->offset_ns : 0, i};
	}
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

/* ---- output ------------------------------------------------------------- */

static cJSON *raw_int(int64_t v)
{
	char s[32];
	snprintf(s, sizeof s, "%" PRId64, v);
	return cJSON_CreateRaw(s);
}

static const char *clock_name(uint32_t id)
{
	static char unused[32];
	return tm_clock_name(id, unused); /* ids here are always named builtins */
}

cJSON *tm_manifest_entry_json(const tm_manifest *m, size_t i)
{
	const tm_mf_file *f = &m->files[i];
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "path", f->path);
	if (f->machine) {
		cJSON *mo = cJSON_AddObjectToObject(o, "machine");
		cJSON_AddStringToObject(mo, "name", f->machine);
	}
	if (f->has_machines) {
		cJSON *arr = cJSON_AddArrayToObject(o, "machines");
		for (size_t k = 0; k < f->n_machines; k++) {
			cJSON *it = cJSON_CreateObject();
			cJSON_AddItemToObject(it, "id", raw_int(f->machines[k].id));
			cJSON_AddStringToObject(it, "name", f->machines[k].name);
			cJSON_AddItemToArray(arr, it);
		}
	}
	if (f->clocks) {
		const tm_mf_clocks *c = f->clocks;
		cJSON *co = cJSON_AddObjectToObject(o, "clocks");
		if (c->machine)
			cJSON_AddStringToObject(co, "machine", c->machine);
		if (c->clock)
			cJSON_AddStringToObject(co, "clock", clock_name(c->clock));
		cJSON *so = cJSON_AddObjectToObject(co, "sync_to");
		cJSON_AddStringToObject(so, "file", c->sync_file);
		if (c->sync_machine)
			cJSON_AddStringToObject(so, "machine", c->sync_machine);
		if (c->sync_clock)
			cJSON_AddStringToObject(so, "clock", clock_name(c->sync_clock));
		cJSON_AddItemToObject(co, "offset_ns", raw_int(c->offset_ns));
	}
	if (f->table) {
		const tm_mf_table *t = f->table;
		cJSON *to = cJSON_AddObjectToObject(o, "__exported_table_schema");
		cJSON_AddItemToObject(to, "format", raw_int(t->format));
		cJSON_AddStringToObject(to, "name", t->name);
		cJSON_AddItemToObject(to, "row_count", raw_int(t->row_count));
		cJSON *cols = cJSON_AddArrayToObject(to, "columns");
		for (size_t k = 0; k < t->n_columns; k++) {
			cJSON *c = cJSON_CreateObject();
			cJSON_AddStringToObject(c, "name", t->columns[k].name);
			cJSON_AddStringToObject(c, "type", t->columns[k].type);
			cJSON_AddStringToObject(c, "nullability", t->columns[k].nullability);
			cJSON_AddStringToObject(c, "sort", t->columns[k].sort);
			cJSON_AddStringToObject(c, "duplicates", t->columns[k].duplicates);
			cJSON_AddItemToArray(cols, c);
		}
	}
	return o;
}

cJSON *tm_manifest_attributes_json(const tm_manifest *m)
{
	cJSON *o = cJSON_CreateObject();
	for (size_t i = 0; i < m->n_attrs; i++) {
		if (m->attrs[i].is_int)
			cJSON_AddItemToObject(o, m->attrs[i].key, raw_int(m->attrs[i].i));
		else
			cJSON_AddStringToObject(o, m->attrs[i].key, m->attrs[i].s ? m->attrs[i].s : "");
	}
	return o;
}

char *tm_manifest_to_json(const tm_manifest *m, size_t *len)
{
	cJSON *root = cJSON_CreateObject();
	cJSON *pm = cJSON_AddObjectToObject(root, "perfetto_manifest");
	cJSON_AddItemToObject(pm, "version", raw_int(1));
	if (m->has_trace_time) {
		cJSON *tt = cJSON_AddObjectToObject(pm, "trace_time");
		cJSON_AddStringToObject(tt, "clock", clock_name(m->tt_clock));
		if (m->tt_file)
			cJSON_AddStringToObject(tt, "file", m->tt_file);
		if (m->tt_machine)
			cJSON_AddStringToObject(tt, "machine", m->tt_machine);
	}
	if (m->n_files) {
		cJSON *files = cJSON_AddArrayToObject(pm, "files");
		for (size_t i = 0; i < m->n_files; i++)
			cJSON_AddItemToArray(files, tm_manifest_entry_json(m, i));
	}
	if (m->n_attrs)
		cJSON_AddItemToObject(pm, "attributes", tm_manifest_attributes_json(m));
	char *s = cJSON_Print(root);
	cJSON_Delete(root);
	tm_buf b = {0};
	tm_buf_puts(&b, s ? s : "{}");
	tm_buf_puts(&b, "\n");
	cJSON_free(s);
	return tm_buf_detach(&b, len);
}
