/* tests/fuzz/fuzz_collapsed.c - collapsed-stack lines
 * (core/formats/collapsed/collapsed.c) on arbitrary bytes, split at each
 * '\n' as the tokenizer splits them: a stack lies inside its line, its
 * count is positive, it has a frame, every frame lies inside the stack
 * and holds no ';', and a line reads the same way twice. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "formats/collapsed/collapsed.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *p = (const char *)data, *end = p + size;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
		/* the line alone, so that ASan sees a read past it */
		char *line = malloc(n ? n : 1);
		memcpy(line, p, n);
		const char *s, *s2;
		size_t sn, sn2;
		int64_t c, c2;
		int ok = collapsed_parse_line(line, n, &s, &sn, &c);
		if (ok != collapsed_parse_line(line, n, &s2, &sn2, &c2))
			abort();
		if (ok) {
			if (s != s2 || sn != sn2 || c != c2 || c <= 0 || s < line || s + sn > line + n)
				abort();
			size_t at = 0, frames = 0;
			const char *f;
			size_t fn;
			while (collapsed_next_frame(s, sn, &at, &f, &fn)) {
				if (fn == 0 || f < s || f + fn > s + sn || memchr(f, ';', fn))
					abort();
				frames++;
			}
			if (frames == 0)
				abort();
		}
		free(line);
		p += n + 1;
	}
	return 0;
}
