/* core/export/render.c - metadata.json, perfetto_manifest.json, machine.json,
 * the clocks/ views and the check summary, rendered from the session and
 * the scan's results (field list: DESIGN.md, and the METADATA section of
 * tracemount(1), which must stay in step with this file). */
#include "export/render.h"

#include <cjson/cJSON.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock/clock.h"
#include "clock/clockid.h"
#include "scan/machine.h"
#include "manifest/manifest.h"

/* cJSON stores numbers as doubles; every integer we print goes in as raw
 * text so that 64-bit values stay exact. */
static cJSON *json_int(int64_t v)
{
	char s[32];
	snprintf(s, sizeof s, "%" PRId64, v);
	return cJSON_CreateRaw(s);
}

static void add_int(cJSON *o, const char *k, int64_t v)
{
	cJSON_AddItemToObject(o, k, json_int(v));
}

static void add_str_or_null(cJSON *o, const char *k, const char *v)
{
	if (v)
		cJSON_AddStringToObject(o, k, v);
	else
		cJSON_AddNullToObject(o, k);
}

/* The path under files/ that shows a member, or NULL. */
static char *files_path(const tm_merge *m, const tm_file *f)
{
	if (f->view < 0 && !(f->id == 0 && !m->members_are_archive))
		return NULL;
	if (m->files_paths && m->files_paths[f->id])
		return tm_xstrdup(m->files_paths[f->id]);
	tm_buf b = {0};
	tm_buf_puts(&b, "files/");
	if (f->view < 0) {
		const char *s = strrchr(m->path, '/');
		tm_buf_puts(&b, s && s[1] ? s + 1 : m->path);
	} else {
		tm_buf_puts(&b, f->name);
	}
	return tm_buf_detach(&b, NULL);
}

static void add_uint(cJSON *o, const char *k, uint64_t v)
{
	char s[32];
	snprintf(s, sizeof s, "%" PRIu64, v);
	cJSON_AddItemToObject(o, k, cJSON_CreateRaw(s));
}

static void add_int_or_null(cJSON *o, const char *k, int has, int64_t v)
{
	if (has)
		add_int(o, k, v);
	else
		cJSON_AddNullToObject(o, k);
}

static const char *override_name(int o)
{
	return o == 1 ? "relate" : o == 2 ? "pin" : NULL;
}

/* Machine and file names for the clock views (label_of, file_of). */
typedef struct labels {
	char **v;
	size_t n;
	const tm_merge *m;
} labels;
static void labels_init(labels *l, const tm_merge *m, const tm_scan *s);
static void labels_free(labels *l);
static const char *label_of(void *ctx, uint32_t row);
static const char *file_of(void *ctx, uint32_t file_id);

/* Where a file's timestamps went (tracemount(1), "placement"): per group
 * of source clocks, the clocks of its path to trace time and how each hop
 * was made, with what was placed and dropped. */
static void add_placement(cJSON *o, const tm_scan *s, uint32_t file_id, const tm_clock_labels *cl)
{
	size_t n;
	tm_placement *p = tm_clocks_placement(s->clocks, file_id, &n);
	cJSON *arr = cJSON_AddArrayToObject(o, "placement");
	tm_buf name = {0};
	for (size_t i = 0; i < n; i++) {
		cJSON *g = cJSON_CreateObject();
		cJSON *clocks = cJSON_AddArrayToObject(g, "clocks");
		cJSON *hops = cJSON_AddArrayToObject(g, "hops");
		int n_hops = p[i].n_hops > 0 ? p[i].n_hops : 0;
		for (int h = 0; h <= n_hops; h++) {
			name.len = 0;
			tm_clocks_placement_clock(&p[i], h, cl, &name);
			cJSON_AddItemToArray(clocks, cJSON_CreateString(name.data));
			if (h < n_hops)
				cJSON_AddItemToArray(hops, cJSON_CreateString(tm_clock_hop_name(&p[i].hops[h])));
		}
		cJSON_AddBoolToObject(g, "reaches_trace_time", p[i].n_hops >= 0);
		add_uint(g, "placed", p[i].ok);
		add_uint(g, "dropped", p[i].failed);
		static const char *const reason[] = {
			[TM_CONV_UNKNOWN_SOURCE] = "clock_sync_failure_unknown_source_clock",
			[TM_CONV_UNKNOWN_TARGET] = "clock_sync_failure_unknown_target_clock",
			[TM_CONV_NO_PATH] = "clock_sync_failure_no_path",
		};
		add_str_or_null(g, "reason", p[i].failed && p[i].failure ? reason[p[i].failure] : NULL);
		cJSON_AddItemToArray(arr, g);
	}
	tm_buf_free(&name);
	free(p);
}

/* ---- stats ------------------------------------------------------------------- */

/* The named stats of each file (the scan's, then the parse's, each in
 * first-count order), made once: rendering every file's stats then costs
 * their number, not files x stats (an archive of 100,000 files may give
 * each one). File f's are e[first[f]] .. e[first[f + 1] - 1]. */
typedef struct file_stats {
	size_t *first;
	const tm_named_stat **e;
} file_stats;

static void file_stats_init(file_stats *x, const tm_scan *s, const tm_statlist *parsed)
{
	const tm_statlist *lists[2] = {&s->named, parsed};
	size_t nf = s->n_files, total = 0;
	/* counted at first[f + 2], summed, then placed at first[f + 1]++:
	 * after which first[f] is where file f's begin */
	x->first = tm_xcalloc(nf + 2, sizeof(*x->first));
	for (int k = 0; k < 2; k++)
		for (size_t i = 0; lists[k] && i < lists[k]->n; i++)
			if (lists[k]->v[i].file_id < nf) {
				x->first[lists[k]->v[i].file_id + 2]++;
				total++;
			}
	for (size_t f = 2; f < nf + 2; f++)
		x->first[f] += x->first[f - 1];
	x->e = tm_xcalloc(total ? total : 1, sizeof(*x->e));
	for (int k = 0; k < 2; k++)
		for (size_t i = 0; lists[k] && i < lists[k]->n; i++)
			if (lists[k]->v[i].file_id < nf)
				x->e[x->first[lists[k]->v[i].file_id + 1]++] = &lists[k]->v[i];
}

static void file_stats_free(file_stats *x)
{
	free(x->first);
	free(x->e);
}

/* Each stat of `sum` as a member of o: a number, or for an indexed stat
 * an object of its indexes; the first `keep` entries also when they are
 * 0 (the scan's own stats, which metadata.json's top level always lists). */
static void add_sums(cJSON *o, const tm_statlist *sum, size_t keep)
{
	for (size_t i = 0; i < sum->n; i++) {
		const tm_named_stat *e = &sum->v[i];
		if (!e->value && i >= keep)
			continue;
		if (e->idx < 0) {
			add_int(o, e->name, e->value);
			continue;
		}
		cJSON *have = cJSON_GetObjectItemCaseSensitive(o, e->name);
		if (!have)
			have = cJSON_AddObjectToObject(o, e->name);
		char key[24];
		snprintf(key, sizeof key, "%" PRId64, e->idx);
		add_int(have, key, e->value);
	}
}

/* The stats of file `file_id`, or of the whole merge for -1: the scan's
 * counts, the stats read from the files' records, and those the parse
 * counted (parsed: NULL when the merge did not get that far; a file's
 * named ones are in fs), summed by name and index (their file and machine
 * 0 in the sum). */
static void add_stats(cJSON *o, const tm_scan *s, const tm_statlist *parsed, const file_stats *fs, int64_t file_id)
{
	cJSON *st = cJSON_AddObjectToObject(o, "stats");
	tm_statlist sum = {0};
	for (int i = 0; i < TM_STAT_COUNT; i++) {
		uint64_t v = file_id < 0 ? s->stats[i] : tm_scan_file_drops(&s->files[file_id], (tm_stat)i);
		tm_statlist_add(&sum, 0, 0, tm_stat_names[i], -1, (int64_t)v);
	}
	if (file_id < 0) {
		const tm_statlist *lists[2] = {&s->named, parsed};
		for (int k = 0; k < 2; k++)
			for (size_t i = 0; lists[k] && i < lists[k]->n; i++)
				tm_statlist_add(&sum, 0, 0, lists[k]->v[i].name, lists[k]->v[i].idx, lists[k]->v[i].value);
	} else {
		for (size_t i = fs->first[file_id]; i < fs->first[file_id + 1]; i++)
			tm_statlist_add(&sum, 0, 0, fs->e[i]->name, fs->e[i]->idx, fs->e[i]->value);
	}
	add_sums(st, &sum, file_id < 0 ? TM_STAT_COUNT : 0);
	tm_statlist_free(&sum);
}

/* The scan's per-file fields (files[] entries the scan read). */
static void add_scan_file(cJSON *o, const tm_file *f, const tm_scan_file *sf)
{
	cJSON *rows = cJSON_AddArrayToObject(o, "machines");
	for (size_t k = 0; k < sf->n_machines; k++)
		cJSON_AddItemToArray(rows, json_int(sf->machines[k]));
	add_str_or_null(o, "clock_override", override_name(sf->clock_override));
	if (f->type == TM_TYPE_PROTO)
		add_uint(o, "packets", sf->packets);
	else
		cJSON_AddNullToObject(o, "packets");
	/* null, not 0: the file's events were not counted, they may be many */
	if (tm_type_unexported(f->type))
		cJSON_AddNullToObject(o, "events");
	else
		add_uint(o, "events", sf->events);
	add_int_or_null(o, "first_ts", sf->has_range, sf->first_own);
	add_int_or_null(o, "last_ts", sf->has_range, sf->last_own);
	add_int_or_null(o, "first_trace_ts", sf->has_range, sf->first_trace);
	add_int_or_null(o, "last_trace_ts", sf->has_range, sf->last_trace);
	add_uint(o, "dropped", sf->dropped);
	cJSON *drops = cJSON_AddObjectToObject(o, "drops");
	for (int i = 0; i < TM_STAT_COUNT; i++)
		if (tm_scan_file_drops(sf, (tm_stat)i))
			add_uint(drops, tm_stat_names[i], tm_scan_file_drops(sf, (tm_stat)i));
}

/* `l`: the machines' labels, made once for all the files (NULL without a
 * scan). */
static cJSON *render_file(const tm_merge *m, const tm_scan *s, const file_stats *fs, const tm_file *f,
			  const labels *l)
{
	cJSON *o = cJSON_CreateObject();
	add_int(o, "id", f->id);
	add_str_or_null(o, "path", f->name);
	cJSON_AddStringToObject(o, "type", tm_type_name(f->type));
	int64_t size = f->size >= 0 ? f->size : f->blob ? tm_blob_size(f->blob) : -1;
	if (size >= 0)
		add_int(o, "size", size);
	else
		cJSON_AddNullToObject(o, "size");
	if (f->processed)
		add_int(o, "processing_order", f->order);
	else
		cJSON_AddNullToObject(o, "processing_order");
	if (f->parent >= 0)
		add_int(o, "parent", f->parent);
	else
		cJSON_AddNullToObject(o, "parent");
	char *fp = files_path(m, f);
	add_str_or_null(o, "files_path", fp);
	free(fp);
	if (m->manifest && f->entry >= 0)
		cJSON_AddItemToObject(o, "manifest_entry", tm_manifest_entry_json(m->manifest, (size_t)f->entry));
	else
		cJSON_AddNullToObject(o, "manifest_entry");
	if (tm_type_unexported(f->type))
		cJSON_AddStringToObject(o, "not_exported", tm_type_unexported(f->type));
	if (s && f->id < s->n_files && s->files[f->id].scanned) {
		add_scan_file(o, f, &s->files[f->id]);
		add_stats(o, s, NULL, fs, (int64_t)f->id);
		tm_clock_labels cl = {(void *)l, label_of, file_of};
		add_placement(o, s, (uint32_t)f->id, &cl);
	}
	return o;
}

static int64_t owner_kind(const tm_merge *m, const tm_scan *s)
{
	/* 0 none, 1 the manifest, 2 a file */
	if (!s->has_tt_owner)
		return 0;
	if (m->manifest && m->manifest_file >= 0 && (int64_t)s->tt_owner_file == m->manifest_file)
		return 1;
	return 2;
}

static cJSON *render_trace_time(const tm_merge *m, const tm_scan *s)
{
	cJSON *tt = cJSON_CreateObject();
	char buf[32];
	if (!s) {
		/* The scan has not run: what the manifest says. */
		uint32_t clock = m->manifest ? tm_manifest_trace_time_clock(m->manifest) : 0;
		add_str_or_null(tt, "clock", clock ? tm_clock_name(clock, buf) : NULL);
		add_int_or_null(tt, "clock_id", clock != 0, clock);
		return tt;
	}
	cJSON_AddStringToObject(tt, "clock", tm_clock_name(s->tt_node.clock_id, buf));
	add_int_or_null(tt, "clock_id", s->has_tt_clock_id, s->tt_clock_id);
	add_int(tt, "machine", s->tt_node.machine_row);
	int64_t kind = owner_kind(m, s);
	const tm_file *of = kind == 2 ? tm_merge_file(m, s->tt_owner_file) : NULL;
	add_str_or_null(tt, "file", of ? of->name : NULL);
	add_str_or_null(tt, "owner", kind == 1 ? "manifest" : kind == 2 ? "file" : NULL);
	return tt;
}

/* One entry of metadata.json's machines; `label` is its label index and
 * `dir` its folder name, made for all rows at once (the per-row calls
 * cost the square of the rows). */
static cJSON *render_machine_row(const tm_scan *s, uint32_t row, uint32_t label, const char *dir,
				 const tm_row_files *rf)
{
	const tm_machine *mc = &s->machines.rows[row];
	cJSON *o = cJSON_CreateObject();
	add_int(o, "id", row);
	add_int(o, "raw_id", mc->raw_id);
	add_str_or_null(o, "name", mc->name);
	add_int(o, "label_index", label);
	cJSON_AddStringToObject(o, "dir", dir);
	/* One raw text, written as cJSON writes an array of numbers: a cJSON
	 * item per file would take 100 bytes each in an archive of 100,000. */
	tm_buf ids = {0};
	tm_buf_puts(&ids, "[");
	for (size_t j = rf->first[row]; j < rf->first[row + 1]; j++)
		tm_buf_printf(&ids, "%s%u", j > rf->first[row] ? ", " : "", rf->files[j]);
	tm_buf_puts(&ids, "]");
	cJSON_AddItemToObject(o, "files", cJSON_CreateRaw(ids.data));
	tm_buf_free(&ids);
	const tm_scan_machine *sm = row < s->n_mach ? &s->mach[row] : NULL;
	add_uint(o, "events", sm ? sm->events : 0);
	add_int_or_null(o, "first_ts", sm && sm->has_range, sm ? sm->first_trace : 0);
	add_int_or_null(o, "last_ts", sm && sm->has_range, sm ? sm->last_trace : 0);
	return o;
}

static int print_json(cJSON *root, tm_buf *out, const char *what, tm_error *err)
{
	char *txt = cJSON_Print(root);
	cJSON_Delete(root);
	if (!txt)
		return tm_err(err, TM_ENOMEM, "cannot render %s", what);
	tm_buf_put_utf8(out, txt, strlen(txt)); /* names are bytes; JSON is UTF-8 */
	tm_buf_puts(out, "\n");
	cJSON_free(txt);
	return 0;
}

/* Element `index` of an array that is the value of a key of the root
 * object, written as cJSON_Print writes it there: ", " between elements,
 * and every line after the first indented by two more tabs (cJSON indents
 * by nesting depth, arrays and objects both counting; a JSON string never
 * holds a raw newline). Consumes `item`. */
static int put_element(tm_buf *out, size_t index, cJSON *item, const char *what, tm_error *err)
{
	char *txt = cJSON_Print(item);
	cJSON_Delete(item);
	if (!txt)
		return tm_err(err, TM_ENOMEM, "cannot render %s", what);
	if (index)
		tm_buf_puts(out, ", ");
	for (const char *p = txt, *nl; *p; p = nl + 1) {
		if (!(nl = strchr(p, '\n'))) {
			tm_buf_put_utf8(out, p, strlen(p));
			break;
		}
		tm_buf_put_utf8(out, p, (size_t)(nl - p) + 1);
		tm_buf_puts(out, "\t\t");
	}
	cJSON_free(txt);
	return 0;
}

static void maybe_spill(tm_buf *out, const tm_render_spill *spill)
{
	if (spill && out->len > TM_RENDER_SPILL)
		spill->fn(spill->ctx, out);
}

int tm_render_metadata(tm_merge *m, const tm_scan *s, const tm_statlist *parsed, tm_buf *out, tm_error *err)
{
	return tm_render_metadata_spill(m, s, parsed, NULL, out, NULL, err);
}

int tm_render_metadata_spill(tm_merge *m, const tm_scan *s, const tm_statlist *parsed, const char *parse_failed,
			     tm_buf *out, const tm_render_spill *spill, tm_error *err)
{
	cJSON *root = cJSON_CreateObject();
	if (s && s->failed) {
		cJSON_AddStringToObject(root, "status", "error");
		cJSON_AddStringToObject(root, "error", s->err.msg);
	} else {
		cJSON_AddStringToObject(root, "status", "ok");
		cJSON_AddNullToObject(root, "error");
	}
	if (m->inputs) {
		cJSON *in = cJSON_AddArrayToObject(root, "archive");
		for (size_t i = 0; i < m->n_inputs; i++)
			cJSON_AddItemToArray(in, cJSON_CreateString(m->inputs[i]));
	} else {
		cJSON_AddStringToObject(root, "archive", m->path);
	}
	cJSON_AddItemToObject(root, "trace_time", render_trace_time(m, s));

	cJSON_AddItemToObject(root, "attributes",
			      m->manifest ? tm_manifest_attributes_json(m->manifest) : cJSON_CreateObject());
	if (m->manifest_file >= 0)
		cJSON_AddStringToObject(root, "manifest", m->files[m->manifest_file].name
				? m->files[m->manifest_file].name : "");
	else
		cJSON_AddNullToObject(root, "manifest");

	if (s) {
		if (s->has_bounds) {
			cJSON *b = cJSON_AddObjectToObject(root, "bounds");
			add_int(b, "start_ns", s->start_ns);
			add_int(b, "end_ns", s->end_ns);
		} else {
			cJSON_AddNullToObject(root, "bounds");
		}
		add_stats(root, s, parsed, NULL, -1);
		if (parse_failed)
			cJSON_AddStringToObject(root, "stats_incomplete", parse_failed);
		cJSON *machines = cJSON_AddArrayToObject(root, "machines");
		char **dirs = tm_machines_dir_names(&s->machines);
		tm_row_files rf;
		tm_scan_row_files(s, &rf);
		uint32_t label = 0;
		for (uint32_t r = 0; r < s->machines.n; r++) {
			label += s->machines.rows[r].raw_id != TM_RAW_HOST;
			uint32_t li = s->machines.rows[r].raw_id != TM_RAW_HOST ? label : 0;
			cJSON_AddItemToArray(machines, render_machine_row(s, r, li, dirs[r], &rf));
		}
		tm_row_files_free(&rf);
		tm_machines_dir_names_free(dirs, s->machines.n);
	}

	/* `files` and `ignored` go out one element at a time: the cJSON tree
	 * of an archive of 100,000 members would take hundreds of MB. */
	if (print_json(root, out, "metadata.json", err) != 0)
		return -1;
	out->len -= 3; /* the head's closing "\n}\n" */
	out->data[out->len] = '\0';
	tm_buf_puts(out, ",\n\t\"files\":\t[");
	labels l = {0};
	file_stats fs = {0};
	if (s) {
		labels_init(&l, m, s);
		file_stats_init(&fs, s, parsed);
	}
	for (size_t i = 0; i < m->n_files; i++) {
		if (put_element(out, i, render_file(m, s, &fs, &m->files[i], s ? &l : NULL), "metadata.json", err) != 0) {
			labels_free(&l);
			file_stats_free(&fs);
			return -1;
		}
		maybe_spill(out, spill);
	}
	labels_free(&l);
	file_stats_free(&fs);
	tm_buf_puts(out, "],\n\t\"ignored\":\t[");
	for (size_t i = 0, k = 0; i < m->n_members; i++) {
		const tm_member_view *v = &m->members[i];
		if (!v->skip_reason)
			continue;
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "path", v->entry.name);
		cJSON_AddStringToObject(o, "reason", v->skip_reason);
		if (put_element(out, k++, o, "metadata.json", err) != 0)
			return -1;
		maybe_spill(out, spill);
	}
	tm_buf_puts(out, "]\n}\n");
	return 0;
}

int tm_render_machine(tm_merge *m, const tm_scan *s, uint32_t row, tm_buf *out, tm_error *err)
{
	if (row >= s->machines.n)
		return tm_err(err, TM_ENOENT, "no machine row %u", (unsigned)row);
	const tm_machine *mc = &s->machines.rows[row];
	cJSON *o = cJSON_CreateObject();
	add_int(o, "id", row);
	add_int(o, "raw_id", mc->raw_id);
	add_str_or_null(o, "name", mc->name);
	add_int(o, "label_index", tm_machines_label_index(&s->machines, row));
	if (mc->sysname)
		cJSON_AddStringToObject(o, "sysname", mc->sysname);
	if (mc->release)
		cJSON_AddStringToObject(o, "release", mc->release);
	if (mc->version)
		cJSON_AddStringToObject(o, "version", mc->version);
	if (mc->arch)
		cJSON_AddStringToObject(o, "arch", mc->arch);
	if (mc->num_cpus >= 0)
		add_int(o, "num_cpus", mc->num_cpus);
	cJSON *files = cJSON_AddArrayToObject(o, "files");
	for (size_t i = 0; i < s->n_files; i++) {
		if (!tm_scan_file_on_row(s, i, row))
			continue;
		cJSON *fo = cJSON_CreateObject();
		add_int(fo, "id", (int64_t)i);
		add_str_or_null(fo, "path", i < m->n_files ? m->files[i].name : NULL);
		cJSON_AddItemToArray(files, fo);
	}
	cJSON *clocks = cJSON_AddArrayToObject(o, "clocks");
	const tm_clock_graph *g = tm_clocks_view(s->clocks);
	size_t nn = tm_clock_graph_node_count(g);
	for (size_t i = 0; i < nn; i++) {
		tm_clock_node_info ni;
		tm_clock_graph_node_info(g, i, &ni);
		if (ni.node.machine_row != row)
			continue;
		char buf[64];
		cJSON_AddItemToArray(clocks, cJSON_CreateString(tm_clock_node_str(ni.node, buf)));
	}
	const tm_scan_machine *sm = row < s->n_mach ? &s->mach[row] : NULL;
	add_int_or_null(o, "first_ts", sm && sm->has_range, sm ? sm->first_trace : 0);
	add_int_or_null(o, "last_ts", sm && sm->has_range, sm ? sm->last_trace : 0);
	add_uint(o, "events", sm ? sm->events : 0);
	return print_json(o, out, "machine.json", err);
}

/* ---- clocks/ ------------------------------------------------------------- */



static const char *label_of(void *ctx, uint32_t row)
{
	labels *l = ctx;
	return row < l->n ? l->v[row] : NULL;
}

static const char *file_of(void *ctx, uint32_t file_id)
{
	labels *l = ctx;
	if (!l->m || file_id >= l->m->n_files)
		return NULL;
	const char *name = l->m->files[file_id].name;
	return name ? name : "";
}

static void labels_init(labels *l, const tm_merge *m, const tm_scan *s)
{
	l->m = m;
	l->n = s->machines.n;
	l->v = tm_machines_dir_names(&s->machines);
	for (uint32_t r = 0; r < l->n; r++) {
		const char *name = s->machines.rows[r].name;
		if (name && name[0]) {
			free(l->v[r]);
			l->v[r] = tm_xstrdup(name);
		}
	}
}

static void labels_free(labels *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
}

void tm_render_clocks_dot(const tm_merge *m, const tm_scan *s, tm_buf *out)
{
	labels l;
	labels_init(&l, m, s);
	tm_clock_labels cl = {&l, label_of, file_of};
	tm_buf dot = {0};
	tm_clocks_render_dot(s->clocks, &cl, &dot);
	/* Graphviz reads UTF-8 and takes a file with other bytes for
	 * Latin-1, with a warning */
	tm_buf_put_utf8(out, dot.data, dot.len);
	tm_buf_free(&dot);
	labels_free(&l);
}

void tm_render_clocks_csv(const tm_merge *m, const tm_scan *s, tm_buf *out)
{
	tm_render_clocks_csv_spill(m, s, out, NULL);
}

void tm_render_clocks_csv_spill(const tm_merge *m, const tm_scan *s, tm_buf *out, const tm_render_spill *spill)
{
	labels l;
	labels_init(&l, m, s);
	tm_clock_labels cl = {&l, label_of, file_of};
	tm_clock_spill cs = {spill ? spill->fn : NULL, spill ? spill->ctx : NULL, TM_RENDER_SPILL};
	tm_clocks_render_csv_spill(s->clocks, &cl, out, spill ? &cs : NULL);
	labels_free(&l);
}

/* ---- perfetto_manifest.json ---------------------------------------------- */

/* Files of the effective manifest: trace files with a member name, in
 * processing order. */
static int listed(const tm_merge *m, const tm_scan *s, const tm_file *f)
{
	if (!f->name)
		return 0;
	if (s && f->id < s->n_files && s->files[f->id].scanned)
		return 1;
	return tm_type_is_supported(f->type) && tm_type_is_trace(f->type);
}

/* How a listed file's machines are written. */
enum { MF_PATH_ONLY = 0, MF_MACHINE, MF_MACHINES };

/* Can file f's machine rows all be written by name (ok_row)? */
static int file_form(const tm_file *f, const tm_scan_file *sf, const tm_machines *mt, const char *ok_row)
{
	if (sf->n_machines == 0)
		return MF_PATH_ONLY;
	for (size_t k = 0; k < sf->n_machines; k++)
		if (!ok_row[sf->machines[k]])
			return -1;
	if (f->type != TM_TYPE_PROTO)
		return sf->n_machines == 1 ? MF_MACHINE : -1;
	/* A proto: its base row holds the packets without machine_id (raw 0,
	 * or the embedded id it adopted); the others are embedded ids. */
	for (size_t k = 1; k < sf->n_machines; k++) {
		int64_t raw = mt->rows[sf->machines[k]].raw_id;
		if (raw <= 0 || raw >= TM_RAW_NAMED_BASE)
			return -1;
	}
	int64_t base = mt->rows[sf->machines[0]].raw_id;
	if (base < 0 || base >= TM_RAW_NAMED_BASE)
		return -1;
	return MF_MACHINES;
}

static tm_mf_str mf_str(const char *s)
{
	return (tm_mf_str){tm_xstrdup(s), strlen(s)};
}

static void add_remap(tm_mf_file *e, uint32_t id, const char *name)
{
	e->machines = tm_xrealloc(e->machines, (e->n_machines + 1) * sizeof(*e->machines));
	e->machines[e->n_machines].id = id;
	e->machines[e->n_machines].name = mf_str(name);
	e->n_machines++;
	e->has_machines = 1;
}

/* The manifest equivalent to what the scan applied to an archive without
 * one (tracemount(1), perfetto_manifest.json): every row a file put data
 * on is named in the manifest when it has a name of its own that no other
 * row shares and every file on it can say so; such files get `machine`
 * (one machine, not a proto) or `machines` (a proto: id 0 for its base
 * machine, then its embedded ids). Trace time is written when its clock is
 * one the manifest can name and its owner file resolves to its machine. */
static tm_manifest *effective_manifest(const tm_merge *m, const tm_scan *s)
{
	const tm_machines *mt = &s->machines;
	size_t nr = mt->n;
	char *ok_row = tm_xcalloc(nr ? nr : 1, 1);
	for (size_t r = 0; r < nr; r++) {
		const char *nm = mt->rows[r].name;
		ok_row[r] = nm && nm[0];
		for (size_t q = 0; ok_row[r] && q < nr; q++)
			if (q != r && mt->rows[q].name && strcmp(mt->rows[q].name, nm) == 0)
				ok_row[r] = 0;
	}
	for (int changed = 1; changed;) {
		changed = 0;
		for (size_t i = 0; i < m->n_order; i++) {
			const tm_file *f = &m->files[m->order[i]];
			if (f->id >= s->n_files || !s->files[f->id].scanned)
				continue;
			const tm_scan_file *sf = &s->files[f->id];
			if (listed(m, s, f) && file_form(f, sf, mt, ok_row) >= 0)
				continue;
			for (size_t k = 0; k < sf->n_machines; k++)
				if (ok_row[sf->machines[k]]) {
					ok_row[sf->machines[k]] = 0;
					changed = 1;
				}
		}
	}

	tm_manifest *def = tm_manifest_new_default();
	int owner_form = -2;
	const tm_scan_file *owner_sf = NULL;
	for (size_t i = 0; i < m->n_order; i++) {
		const tm_file *f = &m->files[m->order[i]];
		if (!listed(m, s, f))
			continue;
		tm_manifest_add_file(def, f->name);
		if (f->id >= s->n_files || !s->files[f->id].scanned)
			continue;
		const tm_scan_file *sf = &s->files[f->id];
		tm_mf_file *e = &def->files[def->n_files - 1];
		int form = file_form(f, sf, mt, ok_row);
		if (form == MF_MACHINE) {
			e->machine = mf_str(mt->rows[sf->machines[0]].name);
		} else if (form == MF_MACHINES) {
			const tm_machine *base = &mt->rows[sf->machines[0]];
			add_remap(e, 0, base->name);
			if (base->raw_id != 0)
				add_remap(e, (uint32_t)base->raw_id, base->name);
			for (size_t k = 1; k < sf->n_machines; k++) {
				const tm_machine *mc = &mt->rows[sf->machines[k]];
				add_remap(e, (uint32_t)mc->raw_id, mc->name);
			}
		}
		if (s->has_tt_owner && s->tt_owner_file == f->id) {
			owner_form = form < 0 ? MF_PATH_ONLY : form;
			owner_sf = sf;
		}
	}

	uint32_t clock = s->tt_node.clock_id;
	if (owner_sf && clock >= TM_CLOCK_REALTIME && clock <= TM_CLOCK_BOOTTIME) {
		const tm_file *of = tm_merge_file(m, s->tt_owner_file);
		uint32_t row = s->tt_node.machine_row;
		int resolves = 0;
		const char *machine = NULL;
		if (owner_form == MF_MACHINE)
			resolves = owner_sf->machines[0] == row;
		else if (owner_form == MF_MACHINES)
			resolves = tm_scan_file_on_row(s, of->id, row), machine = mt->rows[row].name;
		else
			resolves = row < nr && mt->rows[row].raw_id == TM_RAW_HOST;
		if (resolves) {
			def->has_trace_time = 1;
			def->tt_clock = clock;
			def->tt_file = mf_str(of->name);
			if (machine)
				def->tt_machine = mf_str(machine);
		}
	}
	free(ok_row);
	return def;
}

int tm_render_manifest(tm_merge *m, const tm_scan *s, tm_buf *out, tm_error *err)
{
	size_t len;
	char *txt;
	if (m->manifest) {
		txt = tm_manifest_to_json(m->manifest, &len);
	} else if (s) {
		tm_manifest *def = effective_manifest(m, s);
		txt = tm_manifest_to_json(def, &len);
		tm_manifest_free(def);
	} else {
		/* No scan: the defaults, every trace file on the host. */
		tm_manifest *def = tm_manifest_new_default();
		for (size_t i = 0; i < m->n_order; i++) {
			const tm_file *f = &m->files[m->order[i]];
			if (listed(m, NULL, f))
				tm_manifest_add_file(def, f->name);
		}
		txt = tm_manifest_to_json(def, &len);
		tm_manifest_free(def);
	}
	tm_buf_put(out, txt, len);
	free(txt);
	return 0;
}

void tm_render_file_label(const tm_merge *m, const tm_file *f, tm_buf *out)
{
	/* A stream inside a compressed member is named "": say whose. */
	const tm_file *parent = f->parent >= 0 ? tm_merge_file(m, (uint32_t)f->parent) : NULL;
	if (f->name && f->name[0])
		tm_buf_puts(out, f->name);
	else if (f->name && parent && parent->name)
		tm_buf_printf(out, "%s (decompressed)", parent->name);
	else
		tm_buf_puts(out, m->path);
}

size_t tm_render_unexported(const tm_merge *m, tm_buf *out)
{
	size_t n = 0;
	for (size_t i = 0; i < m->n_files; i++) {
		const tm_file *f = &m->files[i];
		if (!tm_type_unexported(f->type))
			continue;
		if (f->id != 0 || !m->top)
			tm_buf_printf(out, "%s: ", m->path);
		tm_render_file_label(m, f, out);
		tm_buf_printf(out, ": %s events not exported: tracemount does not read this format yet\n",
			      tm_type_name(f->type));
		n++;
	}
	return n;
}

int tm_render_summary(tm_merge *m, const tm_scan *s, tm_buf *out, tm_error *err)
{
	size_t counts[TM_TYPE_COUNT] = {0};
	size_t traces = 0;
	for (size_t i = 0; i < m->n_files; i++) {
		const tm_file *f = &m->files[i];
		counts[f->type]++;
		if (!tm_type_is_container(f->type) && f->type != TM_TYPE_MANIFEST)
			traces++;
	}
	tm_buf_printf(out, "%s: ok: %zu trace file%s", m->path, traces, traces == 1 ? "" : "s");
	const char *sep = " (";
	for (int t = 0; t < TM_TYPE_COUNT; t++) {
		if (!counts[t] || tm_type_is_container((tm_type)t) || t == TM_TYPE_MANIFEST)
			continue;
		tm_buf_printf(out, "%s%zu %s", sep, counts[t], tm_type_name((tm_type)t));
		sep = ", ";
	}
	if (strcmp(sep, ", ") == 0)
		tm_buf_puts(out, ")");
	if (m->manifest_file >= 0)
		tm_buf_printf(out, ", manifest %s", m->files[m->manifest_file].name ? m->files[m->manifest_file].name : "(input)");
	else
		tm_buf_puts(out, ", no manifest");
	if (s) {
		char buf[32];
		tm_buf_printf(out, ", %zu machine%s, %" PRIu64 " event%s placed, trace time %s", s->machines.n,
			      s->machines.n == 1 ? "" : "s", s->events, s->events == 1 ? "" : "s",
			      tm_clock_name(s->tt_node.clock_id, buf));
	}
	tm_buf_puts(out, "\n");
	return 0;
}
