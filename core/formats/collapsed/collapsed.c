/* core/formats/collapsed/collapsed.c - CollapsedStackTraceReader::ParseLine,
 * step for step. */
#include "formats/collapsed/collapsed.h"

#include <stdlib.h>
#include <string.h>

#include "util/tm.h"

/* base::TrimWhitespace: ' ', '\t' and '\n' only */
static int trim_char(char c)
{
	return c == ' ' || c == '\t' || c == '\n';
}

/* base::StringToInt64 of a std::string holding p[0..n): strtoll on its C
 * string (so up to a NUL), refused when that is empty or not all read. */
static int c_int64(const char *p, size_t n, int64_t *out)
{
	char small[64];
	char *s = n < sizeof small ? small : tm_xmalloc(n + 1);
	memcpy(s, p, n);
	s[n] = '\0';
	char *end;
	long long v = strtoll(s, &end, 10);
	int ok = s[0] != '\0' && *end == '\0';
	if (s != small)
		free(s);
	if (ok)
		*out = (int64_t)v;
	return ok;
}

int collapsed_parse_line(const char *p, size_t n, const char **stack, size_t *stack_n, int64_t *count)
{
	while (n && trim_char(p[0]))
		p++, n--;
	while (n && trim_char(p[n - 1]))
		n--;
	if (n == 0 || p[0] == '#')
		return 0;
	size_t sp = n;
	while (sp > 0 && p[sp - 1] != ' ')
		sp--;
	if (sp <= 1) /* no space, or only the first byte */
		return 0;
	size_t last_space = sp - 1;
	if (!c_int64(p + last_space + 1, n - last_space - 1, count) || *count <= 0)
		return 0;
	*stack = p;
	*stack_n = last_space;
	size_t at = 0;
	const char *f;
	size_t fn;
	return collapsed_next_frame(p, last_space, &at, &f, &fn); /* no frame: skipped */
}

int collapsed_next_frame(const char *stack, size_t n, size_t *at, const char **frame, size_t *frame_n)
{
	size_t i = *at;
	while (i < n && stack[i] == ';')
		i++;
	if (i >= n) {
		*at = n;
		return 0;
	}
	size_t from = i;
	while (i < n && stack[i] != ';')
		i++;
	*frame = stack + from;
	*frame_n = i - from;
	*at = i;
	return 1;
}
