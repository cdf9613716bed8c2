/* core/util/statlist.c - stats by name per trace file and machine (statlist.h). */
#include "util/statlist.h"

#include <stdlib.h>
#include <string.h>

#include "util/hash.h"
#include "util/ser.h"
#include "util/tm.h"

static uint64_t key_of(uint32_t file_id, uint32_t machine_row, const char *name, int64_t idx)
{
	return tm_khash_pair(tm_khash_pair((uint64_t)file_id << 32 | machine_row, (uint64_t)idx), tm_khash_str(name));
}

static int same(const tm_named_stat *e, uint32_t file_id, uint32_t machine_row, const char *name, int64_t idx)
{
	return e->file_id == file_id && e->machine_row == machine_row && e->idx == idx && strcmp(e->name, name) == 0;
}

/* The entry, made (0) when missing. Indexed by a hash: an archive of many
 * files can give each a stat, and a stat is counted per event. An entry
 * whose hash another took first is found by a search of the list. */
static tm_named_stat *entry(tm_statlist *l, uint32_t file_id, uint32_t machine_row, const char *name, int64_t idx)
{
	uint64_t key = key_of(file_id, machine_row, name, idx);
	const uint32_t *at = tm_u64map_get(&l->ix, key);
	if (at && same(&l->v[*at - 1], file_id, machine_row, name, idx))
		return &l->v[*at - 1];
	if (at) /* a collision of 64-bit hashes */
		for (size_t i = 0; i < l->n; i++)
			if (same(&l->v[i], file_id, machine_row, name, idx))
				return &l->v[i];
	TM_GROW(l->v, l->cap, l->n + 1);
	l->v[l->n] = (tm_named_stat){file_id, machine_row, idx, tm_xstrdup(name), 0};
	if (!at)
		tm_u64map_put(&l->ix, key, (uint32_t)l->n);
	return &l->v[l->n++];
}

void tm_statlist_add(tm_statlist *l, uint32_t file_id, uint32_t machine_row, const char *name, int64_t idx,
		     int64_t value)
{
	entry(l, file_id, machine_row, name, idx)->value += value;
}

void tm_statlist_set(tm_statlist *l, uint32_t file_id, uint32_t machine_row, const char *name, int64_t idx,
		     int64_t value)
{
	entry(l, file_id, machine_row, name, idx)->value = value;
}

void tm_statlist_merge(tm_statlist *to, const tm_statlist *from)
{
	for (size_t i = 0; i < from->n; i++) {
		const tm_named_stat *e = &from->v[i];
		tm_statlist_add(to, e->file_id, e->machine_row, e->name, e->idx, e->value);
	}
}

void tm_statlist_free(tm_statlist *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i].name);
	free(l->v);
	tm_u64map_free(&l->ix);
	memset(l, 0, sizeof(*l));
}

void tm_statlist_save(const tm_statlist *l, tm_ser_out *out)
{
	tm_ser_u64(out, l->n);
	for (size_t i = 0; i < l->n; i++) {
		const tm_named_stat *e = &l->v[i];
		tm_ser_u32(out, e->file_id);
		tm_ser_u32(out, e->machine_row);
		tm_ser_i64(out, e->idx);
		tm_ser_str(out, e->name);
		tm_ser_i64(out, e->value);
	}
}

int tm_statlist_load(tm_statlist *l, tm_ser_rd *r)
{
	memset(l, 0, sizeof(*l));
	/* an entry takes five bytes at least: four varints and a string */
	size_t n = tm_ser_count(r, 5, SIZE_MAX / sizeof(tm_named_stat));
	for (size_t i = 0; i < n && !r->bad; i++) {
		uint32_t file_id = tm_ser_get_u32(r);
		uint32_t row = tm_ser_get_u32(r);
		int64_t idx = tm_ser_get_i64(r);
		char *name = tm_ser_get_str(r);
		int64_t value = tm_ser_get_i64(r);
		if (!name)
			tm_ser_fail(r, "a stat without a name");
		else if (!r->bad)
			tm_statlist_add(l, file_id, row, name, idx, value);
		free(name);
	}
	if (r->bad) {
		tm_statlist_free(l);
		return -1;
	}
	return 0;
}
