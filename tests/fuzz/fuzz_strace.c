/* tests/fuzz/fuzz_strace.c - strace lines (core/formats/strace/strace.c)
 * on arbitrary bytes, split at each '\n' as the tokenizer splits them:
 * every piece of a call lies inside its line, the time is a real epoch
 * time, and a line is a call, or not one, the same way twice. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "formats/strace/strace.h"

static void inside(const char *line, size_t n, const char *p, size_t k)
{
	if (k && (p < line || p + k > line + n))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *p = (const char *)data, *end = p + size;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
		/* the line alone, so that ASan sees a read past it */
		char *line = malloc(n ? n : 1);
		memcpy(line, p, n);
		strace_line l, l2;
		int tod, tod2;
		int ok = strace_parse_line(line, n, &l, &tod);
		if (ok != strace_parse_line(line, n, &l2, &tod2) || tod != tod2)
			abort();
		if (ok) {
			if (tod || l.epoch_ns < 0 || (unsigned)l.kind > STRACE_RESUMED_THEN_UNFINISHED)
				abort();
			inside(line, n, l.syscall, l.syscall_n);
			inside(line, n, l.args, l.args_n);
			if (l.has_ret)
				inside(line, n, l.ret, l.ret_n);
			if (l.has_ret != (l.kind == STRACE_COMPLETE || l.kind == STRACE_RESUMED))
				abort();
		}
		free(line);
		p += n + 1;
	}
	return 0;
}
