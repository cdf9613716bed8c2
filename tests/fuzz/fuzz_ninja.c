/* tests/fuzz/fuzz_ninja.c - a ninja log (core/formats/ninja/ninja.c) on
 * arbitrary bytes: read whole and in small chunks (without a NUL byte,
 * which ends what one read holds, the two must agree), then sorted and
 * given workers: starts in order, every job on a worker that exists, each
 * worker made once. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "formats/ninja/ninja.h"

static void read_log(ninja_log *lg, const uint8_t *data, size_t size, size_t chunk, int *rc, tm_error *err)
{
	*rc = 0;
	for (size_t at = 0; at < size && *rc == 0; at += chunk)
		*rc = ninja_feed(lg, data + at, size - at < chunk ? size - at : chunk, err);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	ninja_log whole = {0}, parts = {0};
	tm_error e1 = {0}, e2 = {0};
	int rc1, rc2;
	read_log(&whole, data, size, size ? size : 1, &rc1, &e1);
	read_log(&parts, data, size, 1 + (size % 13), &rc2, &e2);
	if (!memchr(data, 0, size)) {
		if (rc1 != rc2 || (rc1 && strcmp(e1.msg, e2.msg) != 0) || whole.n != parts.n ||
		    whole.parse_errors != parts.parse_errors || whole.names.len != parts.names.len ||
		    (whole.names.len && memcmp(whole.names.data, parts.names.data, whole.names.len) != 0))
			abort();
	}
	if (rc1 == 0) {
		ninja_finish(&whole);
		uint32_t workers = 0;
		for (size_t i = 0; i < whole.n; i++) {
			const ninja_job *j = &whole.jobs[i];
			if (i && whole.jobs[i - 1].start_ms > j->start_ms)
				abort();
			if (j->new_worker && j->worker != ++workers)
				abort();
			if (!j->worker || j->worker > workers)
				abort();
			if ((uint64_t)j->names_off + j->names_len > whole.names.len)
				abort();
		}
	}
	ninja_free(&whole);
	ninja_free(&parts);
	return 0;
}
