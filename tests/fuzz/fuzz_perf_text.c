/* tests/fuzz/fuzz_perf_text.c - `perf script` lines
 * (core/formats/perf_text/perf_text.c) on arbitrary bytes, split at each
 * '\n' as the tokenizer splits them, each read as a head and as a frame:
 * every piece lies inside its line, a frame's symbol and mapping lie
 * apart (the mapping after the symbol's start), and a line reads the same
 * way twice. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "formats/perf_text/perf_text.h"

static void inside(const char *line, size_t n, const char *p, size_t k)
{
	if (k && (p < line || p + k > line + n))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *p = (const char *)data, *end = p + size;
	perf_text_head h = {0}, h2 = {0};
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
		/* the line alone, so that ASan sees a read past it */
		char *line = malloc(n ? n : 1);
		memcpy(line, p, n);
		int ok = perf_text_parse_head(line, n, &h);
		if (ok != perf_text_parse_head(line, n, &h2))
			abort();
		if (ok && (h.tid != h2.tid || h.ts != h2.ts || h.has_pid != h2.has_pid || h.comm.len != h2.comm.len ||
			   h.comm.len > n || (h.comm.len && memcmp(h.comm.data, h2.comm.data, h.comm.len))))
			abort();
		perf_text_frame f;
		const char *t;
		size_t tn;
		perf_text_frame_kind k = perf_text_parse_frame(line, n, &f, &t, &tn);
		inside(line, n, t, tn);
		if (k == PERF_TEXT_FRAME) {
			inside(line, n, f.symbol, f.symbol_n);
			inside(line, n, f.mapping, f.mapping_n);
			if (tn == 0 || t[tn - 1] != ')')
				abort();
		} else if (k == PERF_TEXT_END && tn != 0) {
			abort();
		}
		free(line);
		p += n + 1;
	}
	tm_buf_free(&h.comm);
	tm_buf_free(&h2.comm);
	return 0;
}
