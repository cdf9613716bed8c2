/* tests/fuzz/fuzz_manifest.c - the manifest reader on arbitrary bytes. If
 * the bytes parse: the normalised JSON must parse back to the same
 * normalised JSON, the plan is built over a fake archive that knows a few
 * member names, and every lookup is exercised. Leak-free on every path;
 * an error must always carry a message. */
#include <cjson/cJSON.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "manifest/manifest.h"

static const char *const MEMBERS[] = {"a.json", "b.pb", "", "meta.json", "multi.pb"};

static int64_t member_file_id(void *ctx, const char *path)
{
	(void)ctx;
	for (size_t k = 0; k < sizeof(MEMBERS) / sizeof(MEMBERS[0]); k++)
		if (strcmp(path, MEMBERS[k]) == 0)
			return (int64_t)k + 1;
	return -1;
}

static int has_member(void *ctx, const char *path)
{
	return member_file_id(ctx, path) >= 0;
}

/* Our own output must read back to itself. */
static void check_round_trip(const tm_manifest *m)
{
	size_t len, len2;
	char *s = tm_manifest_to_json(m, &len);
	tm_manifest *back = NULL;
	tm_error err;
	if (tm_manifest_parse(s, len, &back, &err) != 0)
		abort();
	char *s2 = tm_manifest_to_json(back, &len2);
	if (len2 != len || memcmp(s, s2, len) != 0 || back->n_names != m->n_names || back->n_attrs != m->n_attrs)
		abort();
	free(s2);
	free(s);
	tm_manifest_free(back);
}

static void check_plan(const tm_manifest *m)
{
	tm_mf_plan p;
	tm_error err;
	err.msg[0] = '\0';
	if (tm_manifest_check_tables(m, has_member, NULL, &err) != 0 ||
	    tm_manifest_apply(m, member_file_id, NULL, &p, &err) != 0) {
		if (!err.msg[0])
			abort();
		return;
	}
	/* machines.md §3: the names first, in order, then at most the host. */
	if (p.n_rows < m->n_names || p.n_rows > m->n_names + 1)
		abort();
	for (size_t r = 0; r < p.n_rows; r++)
		if (p.rows[r].raw_id != (r < m->n_names ? TM_MF_RAW_NAMED_BASE + (int64_t)r : 0))
			abort();
	for (size_t e = 0; e < p.n_edges; e++)
		if (p.edges[e].src.machine_row >= p.n_rows || p.edges[e].ref.machine_row >= p.n_rows ||
		    p.edges[e].file_index >= m->n_files || p.edges[e].src_ts < 0 || p.edges[e].ref_ts < 0)
			abort();
	tm_mf_plan_free(&p);
}

static void check_lookups(const tm_manifest *m)
{
	for (size_t k = 0; k < sizeof(MEMBERS) / sizeof(MEMBERS[0]); k++) {
		int32_t e = tm_manifest_find_entry(m, MEMBERS[k]);
		if (e >= 0 && (size_t)e >= m->n_files)
			abort();
	}
	for (size_t i = 0; i < m->n_files; i++) {
		const char *base = tm_manifest_entry_base_name(m, i);
		int64_t raw = tm_manifest_entry_base_raw_id(m, i);
		if ((base == NULL) != (raw == 0))
			abort();
		tm_manifest_entry_is_multi(m, i);
		tm_manifest_entry_forbids_container(m, i);
		tm_manifest_entry_remap(m, i, 0);
		tm_manifest_entry_remap(m, i, 7);
		cJSON_Delete(tm_manifest_entry_json(m, i));
	}
	cJSON_Delete(tm_manifest_attributes_json(m));
	tm_manifest_trace_time_clock(m);
	tm_manifest_name_raw_id(m, "vm");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	tm_manifest *m = NULL;
	tm_error err;
	err.msg[0] = '\0';
	if (tm_manifest_parse(data, size, &m, &err) != 0) {
		if (m || !err.msg[0])
			abort();
		return 0;
	}
	check_round_trip(m);
	check_plan(m);
	check_lookups(m);
	tm_manifest_free(m);
	return 0;
}
