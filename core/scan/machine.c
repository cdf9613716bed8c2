/* core/scan/machine.c - the machine table (spec/machines.md). */
#include "scan/machine.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/hash.h"
#include "util/tm.h"

uint32_t tm_machines_add(tm_machines *t, int64_t raw_id, const char *name)
{
	TM_GROW(t->rows, t->cap, t->n + 1);
	tm_machine *r = &t->rows[t->n];
	memset(r, 0, sizeof(*r));
	r->raw_id = raw_id;
	r->name = name ? tm_xstrdup(name) : NULL;
	r->num_cpus = -1;
	return (uint32_t)t->n++;
}

/* An entry whose row no longer has its raw id (set_raw moved it): */
#define IX_NONE (UINT32_MAX - 1) /* no indexed row has the raw id */

/* The first indexed row with `raw`, by a walk (an entry went stale). */
static uint32_t first_row(const tm_machines *t, int64_t raw)
{
	for (size_t i = 0; i < t->ix_rows; i++)
		if (t->rows[i].raw_id == raw)
			return (uint32_t)i;
	return IX_NONE;
}

/* Row `row` (indexed now) has raw id `raw`: the entry names the first
 * such row. */
static void ix_note(tm_machines *t, int64_t raw, uint32_t row)
{
	const uint32_t *v = tm_u64map_get(&t->ix, (uint64_t)raw);
	uint32_t cur = v ? *v - 1 : IX_NONE;
	if (cur != IX_NONE && t->rows[cur].raw_id == raw) {
		if (cur < row)
			return; /* an earlier row keeps it */
	} else if (cur != IX_NONE) {
		uint32_t first = first_row(t, raw); /* the entry went stale */
		if (first < row) {
			tm_u64map_put(&t->ix, (uint64_t)raw, first);
			return;
		}
	}
	tm_u64map_put(&t->ix, (uint64_t)raw, row);
}

int64_t tm_machines_find(const tm_machines *t, int64_t raw)
{
	/* rows appended (or read from an index file) since the last lookup */
	tm_machines *w = (tm_machines *)t;
	for (; w->ix_rows < w->n; w->ix_rows++)
		ix_note(w, w->rows[w->ix_rows].raw_id, (uint32_t)w->ix_rows);
	const uint32_t *v = tm_u64map_get(&t->ix, (uint64_t)raw);
	if (!v || *v - 1 == IX_NONE)
		return -1;
	uint32_t row = *v - 1;
	if (t->rows[row].raw_id != raw) {
		row = first_row(t, raw);
		tm_u64map_put(&w->ix, (uint64_t)raw, row);
		if (row == IX_NONE)
			return -1;
	}
	return row;
}

void tm_machines_set_raw(tm_machines *t, uint32_t row, int64_t raw)
{
	if (row >= t->n)
		return;
	t->rows[row].raw_id = raw;
	if (row < t->ix_rows)
		ix_note(t, raw, row); /* the old raw's entry is found stale */
}

uint32_t tm_machines_get(tm_machines *t, int64_t raw)
{
	int64_t r = tm_machines_find(t, raw);
	return r >= 0 ? (uint32_t)r : tm_machines_add(t, raw, NULL);
}

void tm_machines_set_text(char **field, const char *value)
{
	free(*field);
	*field = value ? tm_xstrdup(value) : NULL;
}

void tm_machines_set_name(tm_machines *t, uint32_t row, const char *name)
{
	if (row < t->n)
		tm_machines_set_text(&t->rows[row].name, name);
}

uint32_t tm_machines_label_index(const tm_machines *t, uint32_t row)
{
	if (row >= t->n || t->rows[row].raw_id == TM_RAW_HOST)
		return 0;
	uint32_t k = 0;
	for (uint32_t i = 0; i <= row; i++)
		k += t->rows[i].raw_id != TM_RAW_HOST;
	return k;
}

/* Machine folder names: a name is used as is when it is a valid, harmless
 * path component; otherwise bytes outside [A-Za-z0-9._+-@,=] and a leading
 * '.' or '%' become %XX (uppercase hex), which is reversible. */
static char *escape_name(const char *s)
{
	tm_buf b = {0};
	for (size_t i = 0; s[i]; i++) {
		unsigned char c = (unsigned char)s[i];
		int plain = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
			    strchr("._+-@,=", c) != NULL;
		if (i == 0 && c == '.')
			plain = 0;
		if (plain)
			tm_buf_put(&b, &s[i], 1);
		else
			tm_buf_printf(&b, "%%%02X", c);
	}
	if (!b.len)
		tm_buf_puts(&b, "%");
	return tm_buf_detach(&b, NULL);
}

static char *base_dir_name(const tm_machines *t, uint32_t row)
{
	const tm_machine *r = &t->rows[row];
	if (r->name)
		return escape_name(r->name);
	tm_buf b = {0};
	tm_buf_printf(&b, "machine%u", tm_machines_label_index(t, row));
	return tm_buf_detach(&b, NULL);
}

char *tm_machines_dir_name(const tm_machines *t, uint32_t row)
{
	char *mine = base_dir_name(t, row);
	for (uint32_t i = 0; i < row; i++) {
		char *other = base_dir_name(t, i);
		int clash = strcmp(mine, other) == 0;
		free(other);
		if (clash) {
			tm_buf b = {0};
			tm_buf_printf(&b, "%s~%u", mine, row);
			free(mine);
			return tm_buf_detach(&b, NULL);
		}
	}
	return mine;
}

char **tm_machines_dir_names(const tm_machines *t)
{
	size_t n = t->n;
	char **base = tm_xcalloc(n ? n : 1, sizeof(*base));
	char **out = tm_xcalloc(n ? n : 1, sizeof(*out));
	/* The base names seen so far (row + 1, open addressing): a row whose
	 * base name an earlier row has gets "~<row>", as in
	 * tm_machines_dir_name. Label indexes are counted as rows go by. */
	size_t cap = 16;
	while (cap < 2 * n)
		cap *= 2;
	uint32_t *seen = tm_xcalloc(cap, sizeof(*seen));
	uint32_t label = 0;
	for (uint32_t r = 0; r < n; r++) {
		const tm_machine *mc = &t->rows[r];
		label += mc->raw_id != TM_RAW_HOST;
		if (mc->name) {
			base[r] = escape_name(mc->name);
		} else {
			tm_buf b = {0};
			tm_buf_printf(&b, "machine%u", mc->raw_id == TM_RAW_HOST ? 0u : label);
			base[r] = tm_buf_detach(&b, NULL);
		}
		size_t j = (size_t)tm_khash_str(base[r]) & (cap - 1);
		while (seen[j] && strcmp(base[seen[j] - 1], base[r]) != 0)
			j = (j + 1) & (cap - 1);
		if (seen[j]) {
			tm_buf b = {0};
			tm_buf_printf(&b, "%s~%u", base[r], r);
			out[r] = tm_buf_detach(&b, NULL);
		} else {
			seen[j] = r + 1;
			out[r] = tm_xstrdup(base[r]);
		}
	}
	free(seen);
	tm_machines_dir_names_free(base, n);
	return out;
}

void tm_machines_dir_names_free(char **names, size_t n)
{
	for (size_t i = 0; names && i < n; i++)
		free(names[i]);
	free(names);
}

void tm_machines_free(tm_machines *t)
{
	for (size_t i = 0; i < t->n; i++) {
		tm_machine *r = &t->rows[i];
		free(r->name);
		free(r->sysname);
		free(r->release);
		free(r->version);
		free(r->arch);
	}
	free(t->rows);
	t->rows = NULL;
	t->n = t->cap = 0;
	tm_u64map_free(&t->ix);
	t->ix_rows = 0;
}
