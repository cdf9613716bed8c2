/* core/render.c - metadata.json, perfetto_manifest.json and the check
 * summary, rendered from the session (field list: DESIGN.md, and the
 * METADATA section of tracemount(1), which must stay in step with this
 * file). */
#include "render.h"

#include <cjson/cJSON.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clockid.h"
#include "manifest.h"

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

static cJSON *render_file(const tm_merge *m, const tm_file *f)
{
	cJSON *o = cJSON_CreateObject();
	add_int(o, "id", f->id);
	add_str_or_null(o, "path", f->name);
	cJSON_AddStringToObject(o, "type", tm_type_name(f->type));
	if (strcmp(tm_type_name(f->type), tm_type_format_name(f->type)) != 0)
		cJSON_AddStringToObject(o, "format", tm_type_format_name(f->type));
	int64_t size = f->size >= 0 ? f->size : tm_blob_size(f->blob);
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
	if (!tm_type_is_supported(f->type))
		cJSON_AddStringToObject(o, "note", "format not supported by tracemount: not merged");
	return o;
}

int tm_render_metadata(tm_merge *m, tm_buf *out, tm_error *err)
{
	cJSON *root = cJSON_CreateObject();
	cJSON_AddStringToObject(root, "status", "ok");
	cJSON_AddNullToObject(root, "error");
	cJSON_AddStringToObject(root, "archive", m->path);

	cJSON *tt = cJSON_CreateObject();
	uint32_t clock = m->manifest ? tm_manifest_trace_time_clock(m->manifest) : 0;
	if (clock) {
		char buf[32];
		cJSON_AddStringToObject(tt, "clock", tm_clock_name(clock, buf));
		add_int(tt, "clock_id", clock);
	} else {
		cJSON_AddNullToObject(tt, "clock");
		cJSON_AddNullToObject(tt, "clock_id");
	}
	cJSON_AddItemToObject(root, "trace_time", tt);

	cJSON_AddItemToObject(root, "attributes",
			      m->manifest ? tm_manifest_attributes_json(m->manifest) : cJSON_CreateObject());
	if (m->manifest_file >= 0)
		cJSON_AddStringToObject(root, "manifest", m->files[m->manifest_file].name
				? m->files[m->manifest_file].name : "");
	else
		cJSON_AddNullToObject(root, "manifest");

	cJSON *files = cJSON_AddArrayToObject(root, "files");
	for (size_t i = 0; i < m->n_files; i++)
		cJSON_AddItemToArray(files, render_file(m, &m->files[i]));

	cJSON *ignored = cJSON_AddArrayToObject(root, "ignored");
	for (size_t i = 0; i < m->n_members; i++) {
		const tm_member_view *v = &m->members[i];
		if (!v->skip_reason)
			continue;
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "path", v->entry.name);
		cJSON_AddStringToObject(o, "reason", v->skip_reason);
		cJSON_AddItemToArray(ignored, o);
	}

	char *s = cJSON_Print(root);
	cJSON_Delete(root);
	if (!s)
		return tm_err(err, TM_ENOMEM, "cannot render metadata.json");
	tm_buf_puts(out, s);
	tm_buf_puts(out, "\n");
	cJSON_free(s);
	return 0;
}

int tm_render_manifest(tm_merge *m, tm_buf *out, tm_error *err)
{
	if (m->manifest) {
		size_t len;
		char *s = tm_manifest_to_json(m->manifest, &len);
		tm_buf_put(out, s, len);
		free(s);
		return 0;
	}
	/* No manifest in the archive: the equivalent of the defaults that
	 * apply (every trace file on the host, automatic clocks). */
	tm_manifest *def = tm_manifest_new_default();
	for (size_t i = 0; i < m->n_order; i++) {
		const tm_file *f = &m->files[m->order[i]];
		if (f->name && tm_type_is_supported(f->type) && !tm_type_is_container(f->type) &&
		    f->type != TM_TYPE_MANIFEST)
			tm_manifest_add_file(def, f->name);
	}
	size_t len;
	char *s = tm_manifest_to_json(def, &len);
	tm_buf_put(out, s, len);
	free(s);
	tm_manifest_free(def);
	return 0;
}

int tm_render_summary(tm_merge *m, tm_buf *out, tm_error *err)
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
		tm_buf_printf(out, "%s%zu %s", sep, counts[t], tm_type_format_name((tm_type)t));
		sep = ", ";
	}
	if (strcmp(sep, ", ") == 0)
		tm_buf_puts(out, ")");
	if (m->manifest_file >= 0)
		tm_buf_printf(out, ", manifest %s", m->files[m->manifest_file].name ? m->files[m->manifest_file].name : "(input)");
	else
		tm_buf_puts(out, ", no manifest");
	tm_buf_puts(out, "\n");
	return 0;
}
