/* tests/unit/test_collapsed.c - collapsed-stack lines as the reference's
 * CollapsedStackTraceReader::ParseLine reads them
 * (core/formats/collapsed/collapsed.c). */
#include "tt.h"

#include "formats/collapsed/collapsed.h"

static char g_piece[256];

static const char *piece(const char *p, size_t n)
{
	snprintf(g_piece, sizeof g_piece, "%.*s", (int)n, p);
	return g_piece;
}

static int parse(const char *line, const char **stack, size_t *n, int64_t *count)
{
	return collapsed_parse_line(line, strlen(line), stack, n, count);
}

/* The frames of a stack, joined by '|'. */
static const char *frames(const char *stack, size_t n)
{
	static char out[256];
	size_t at = 0, k = 0;
	const char *f;
	size_t fn;
	out[0] = '\0';
	while (collapsed_next_frame(stack, n, &at, &f, &fn))
		k += (size_t)snprintf(out + k, sizeof out - k, "%s%.*s", k ? "|" : "", (int)fn, f);
	return out;
}

static void stacks(void)
{
	const char *s;
	size_t n;
	int64_t c;
	CHECK(parse("main;parse;read 12", &s, &n, &c));
	CHECK_STR(piece(s, n), "main;parse;read");
	CHECK_INT(c, 12);
	CHECK_STR(frames(s, n), "main|parse|read");
	/* empty frames dropped */
	CHECK(parse("main;;render 4", &s, &n, &c));
	CHECK_STR(frames(s, n), "main|render");
	/* trimmed of ' ', '\t', '\n'; the count after the last space, read
	 * by strtoll (a '+', leading blanks) */
	CHECK(parse("  worker;spin  \t7  \n", &s, &n, &c));
	CHECK_STR(piece(s, n), "worker;spin ");
	CHECK_INT(c, 7);
	CHECK(parse("main;parse;read +2", &s, &n, &c));
	CHECK_INT(c, 2);
	/* a frame may hold spaces; one frame is a stack */
	CHECK(parse("a b;c d  9", &s, &n, &c));
	CHECK_STR(frames(s, n), "a b|c d ");
	CHECK(parse("solo 6", &s, &n, &c));
	CHECK_STR(frames(s, n), "solo");
}

static void not_stacks(void)
{
	const char *s;
	size_t n;
	int64_t c;
	CHECK(!parse("", &s, &n, &c));
	CHECK(!parse("# main;x 1", &s, &n, &c));
	CHECK(!parse("  \t", &s, &n, &c));
	CHECK(!parse("x;y 0", &s, &n, &c));      /* not positive */
	CHECK(!parse("x;y -1", &s, &n, &c));
	CHECK(!parse("x;y 1.5", &s, &n, &c));    /* not an integer */
	CHECK(!parse(";; 4", &s, &n, &c));       /* no frame */
	CHECK(!parse("nospace", &s, &n, &c));
	CHECK(!parse(" 8", &s, &n, &c));         /* trimmed to "8": no space */
	CHECK(!parse("main;parse\t3", &s, &n, &c)); /* a tab is not the separator */
}

int main(void)
{
	TT_RUN(stacks);
	TT_RUN(not_stacks);
	TT_DONE();
}
