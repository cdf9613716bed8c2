/* tests/fuzz/fuzz_detect.c - the sniffers on arbitrary bytes, at the
 * lengths callers pass (the whole input, a TAR member's 512-byte header
 * window, TM_SNIFF_BYTES). The bytes are copied into a buffer of exactly
 * that length so ASan catches any read past it. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "detect/detect.h"

static tm_type detect_exact(const uint8_t *data, size_t n)
{
	unsigned char *copy = malloc(n ? n : 1);
	if (!copy)
		abort();
	if (n)
		memcpy(copy, data, n);
	tm_type t = tm_detect(copy, n);
	free(copy);
	if ((unsigned)t >= TM_TYPE_COUNT || !tm_type_name(t))
		abort();
	return t;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const size_t caps[] = {512, TM_SNIFF_BYTES, SIZE_MAX};
	for (size_t i = 0; i < sizeof caps / sizeof caps[0]; i++) {
		size_t n = size < caps[i] ? size : caps[i];
		/* Detection is a pure function of the bytes. */
		if (detect_exact(data, n) != tm_detect(data, n))
			abort();
	}
	return 0;
}
