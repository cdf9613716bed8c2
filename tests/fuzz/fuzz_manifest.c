/* tests/fuzz/fuzz_manifest.c - the manifest parser on arbitrary bytes: if
 * it parses, normalise, re-parse and apply with a member table that knows
 * a few names. Leak-free on every path. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "manifest.h"

static int64_t member_id(void *ctx, const char *path)
{
	(void)ctx;
	return strcmp(path, "a.json") == 0 ? 1 : strcmp(path, "b.pb") == 0 ? 2 : -1;
}

static int has_member(void *ctx, const char *path)
{
	return member_id(ctx, path) >= 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	tm_manifest *m = NULL;
	tm_error err;
	if (tm_manifest_parse(data, size, &m, &err) != 0)
		return 0;
	size_t len;
	char *s = tm_manifest_to_json(m, &len);
	tm_manifest *back = NULL;
	if (tm_manifest_parse(s, len, &back, &err) != 0)
		abort(); /* our own output must always parse */
	tm_manifest_free(back);
	free(s);
	tm_mf_plan p;
	if (tm_manifest_check_tables(m, has_member, NULL, &err) == 0 &&
	    tm_manifest_apply(m, member_id, NULL, &p, &err) == 0)
		tm_mf_plan_free(&p);
	for (size_t i = 0; i < m->n_files; i++) {
		tm_manifest_entry_base_raw_id(m, i);
		tm_manifest_entry_remap(m, i, 7);
	}
	tm_manifest_free(m);
	return 0;
}
