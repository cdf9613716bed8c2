/* tests/fuzz/fuzz_gecko.c - a Gecko profile (core/formats/gecko/gecko.c)
 * on arbitrary bytes, read twice into a sink that interns as the
 * tokenizer does (a new id per frame name and per callsite): every
 * callsite names a frame and a parent it was given, one level deeper than
 * that parent (0 for a root), every sample a callsite it was given, every
 * marker a name, a duration not below 0 (none but for an interval) and
 * data that is an object or an array, and both reads hand over the same. */
#include "util/json.h"
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "formats/gecko/gecko.h"

typedef struct seen {
	uint32_t frames, callsites;
	uint32_t *depth;
	size_t cap;
	uint64_t h;
} seen;

static void mix(seen *s, uint64_t v) { s->h = (s->h ^ v) * 1099511628211ULL; }

static uint32_t on_frame(void *ctx, const char *name, size_t n)
{
	seen *s = ctx;
	for (size_t i = 0; i < n; i++)
		mix(s, (unsigned char)name[i]);
	return s->frames++;
}

static uint32_t on_callsite(void *ctx, uint32_t parent, uint32_t frame, uint32_t depth)
{
	seen *s = ctx;
	if (frame >= s->frames || (parent != UINT32_MAX && parent >= s->callsites) ||
	    depth != (parent == UINT32_MAX ? 0 : s->depth[parent] + 1))
		abort();
	if (s->callsites == s->cap) {
		s->cap = s->cap ? s->cap * 2 : 64;
		s->depth = realloc(s->depth, s->cap * sizeof *s->depth);
	}
	s->depth[s->callsites] = depth;
	mix(s, parent);
	mix(s, frame);
	return s->callsites++;
}

static int on_sample(void *ctx, const gecko_thread *t, int64_t raw, uint32_t callsite)
{
	seen *s = ctx;
	if (callsite >= s->callsites || (t->name_n && !t->name))
		abort();
	mix(s, t->tid);
	mix(s, (uint64_t)raw);
	mix(s, callsite);
	return raw >= 0; /* a dropped sample leaves the thread's first to come */
}

static int on_marker(void *ctx, const gecko_thread *t, const gecko_marker *m)
{
	seen *s = ctx;
	if (!m->name || m->dur < 0 || (m->phase != 1 && m->dur) || m->phase > 255 ||
	    (m->data && m->data->type != TJ_OBJECT && m->data->type != TJ_ARRAY))
		abort();
	for (size_t i = 0; i < m->name_n; i++)
		mix(s, (unsigned char)m->name[i]);
	for (size_t i = 0; m->cat && i < m->cat_n; i++)
		mix(s, (unsigned char)m->cat[i]);
	mix(s, t->tid);
	mix(s, (uint64_t)m->raw_ts);
	mix(s, (uint64_t)m->dur);
	return m->raw_ts >= 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	seen a = {0}, b = {0};
	gecko_sink sa = {&a, on_frame, on_callsite, on_sample, on_marker},
		   sb = {&b, on_frame, on_callsite, on_sample, on_marker};
	tm_error ea, eb;
	int ra = gecko_read((const char *)data, size, &sa, &ea);
	int rb = gecko_read((const char *)data, size, &sb, &eb);
	if (ra != rb || a.h != b.h || a.frames != b.frames || a.callsites != b.callsites)
		abort();
	if (ra != 0 && strncmp(ea.msg, "Syntactic error while parsing Gecko trace: ", 43) != 0)
		abort();
	free(a.depth);
	free(b.depth);
	return 0;
}
