/* tests/unit/test_perf_space.c - a process's address ranges
 * (core/formats/perf/space.c) against a plain model of the rule: the
 * newest mapping of an address wins. */
#include "tt.h"

#include <stdlib.h>

#include "formats/perf/space.h"

/* The model: the mapping of every address of a small span, or NONE. */
#define SPAN 16384
#define NONE UINT32_MAX

static uint32_t owner[SPAN];

static void model_put(uint64_t start, uint64_t end, uint32_t mapping)
{
	for (uint64_t a = start; a < end && a < SPAN; a++)
		owner[a] = mapping;
}

static uint64_t next_rand(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

/* Blocks in order, none empty nor over full, ranges disjoint and not
 * empty. */
static int well_formed(const perf_space *s)
{
	uint64_t last_end = 0;
	for (size_t b = 0; b < s->nb; b++) {
		if (s->b[b].n == 0 || s->b[b].n > PERF_SPACE_BLOCK)
			return 0;
		for (uint32_t i = 0; i < s->b[b].n; i++) {
			const perf_range *r = &s->b[b].v[i];
			if (r->start >= r->end || ((b || i) && r->start < last_end))
				return 0;
			last_end = r->end;
		}
	}
	return 1;
}

static int agrees(const perf_space *s)
{
	for (uint64_t a = 0; a < SPAN; a++) {
		const perf_range *r = perf_space_find(s, a);
		uint32_t got = r ? r->mapping : NONE;
		if (got != owner[a] || (r && (r->start > a || r->end <= a)))
			return 0;
	}
	return 1;
}

static size_t count(const perf_space *s)
{
	size_t n = 0;
	for (size_t b = 0; b < s->nb; b++)
		n += s->b[b].n;
	return n;
}

/* Ranges of every length, from one address to all of them, in random
 * order: after each put the space is well formed and every address
 * finds the model's mapping. Runs of small ranges fill and split blocks;
 * the wide ones take out many blocks at once. */
static void random_puts(void)
{
	for (uint64_t seed = 1; seed <= 6; seed++) {
		perf_space s = {0};
		uint64_t x = seed * 0x9e3779b97f4a7c15ull;
		for (size_t a = 0; a < SPAN; a++)
			owner[a] = NONE;
		size_t most = 0;
		for (uint32_t m = 0; m < 20000; m++) {
			uint64_t start = next_rand(&x) % SPAN, len, kind = next_rand(&x) % 4096;
			if (kind == 0)
				len = SPAN;
			else if (kind < 64)
				len = 0;
			else if (kind < 512)
				len = next_rand(&x) % 512;
			else
				len = 1 + next_rand(&x) % 4;
			perf_space_put(&s, start, start + len, m);
			model_put(start, start + len, m);
			if (!well_formed(&s)) {
				TT_FAIL_("seed %llu: not well formed after put %u", (unsigned long long)seed, m);
			}
			if ((m % 97 == 0 || m > 19900) && !agrees(&s)) {
				TT_FAIL_("seed %llu: a find disagrees after put %u", (unsigned long long)seed, m);
			}
			if (count(&s) > most)
				most = count(&s);
		}
		perf_space_free(&s);
		CHECK(most > 4 * PERF_SPACE_BLOCK); /* several blocks at a time */
	}
}

/* Ranges put from the highest address down (each at the front), then
 * one over the middle of them all, then one inside a range (split in
 * two around it). */
static void descending_then_cover(void)
{
	perf_space s = {0};
	for (size_t a = 0; a < SPAN; a++)
		owner[a] = NONE;
	for (uint32_t m = 0; m < SPAN / 2; m++) {
		uint64_t start = SPAN - 2 * (uint64_t)(m + 1);
		perf_space_put(&s, start, start + 1, m);
		model_put(start, start + 1, m);
	}
	CHECK(well_formed(&s));
	CHECK(agrees(&s));
	CHECK_INT(count(&s), SPAN / 2);
	CHECK(s.nb > SPAN / 2 / PERF_SPACE_BLOCK);
	perf_space_put(&s, 101, SPAN - 101, 7777);
	model_put(101, SPAN - 101, 7777);
	CHECK(well_formed(&s));
	CHECK(agrees(&s));
	CHECK_INT(count(&s), 51 + 1 + 50);
	perf_space_put(&s, 2000, 2001, 8888);
	model_put(2000, 2001, 8888);
	CHECK(well_formed(&s));
	CHECK(agrees(&s));
	CHECK_INT(count(&s), 51 + 3 + 50);
	/* an empty range changes nothing */
	perf_space_put(&s, 10, 10, 9999);
	CHECK(agrees(&s));
	perf_space_put(&s, 0, SPAN, 1);
	model_put(0, SPAN, 1);
	CHECK(agrees(&s));
	CHECK_INT(count(&s), 1);
	CHECK_INT(s.nb, 1);
	perf_space_free(&s);
}

/* Addresses at the ends of the 64-bit space. */
static void wide_addresses(void)
{
	perf_space s = {0};
	perf_space_put(&s, UINT64_MAX - 10, UINT64_MAX, 1);
	perf_space_put(&s, 0, 1, 2);
	CHECK(perf_space_find(&s, UINT64_MAX) == NULL);
	CHECK_INT(perf_space_find(&s, UINT64_MAX - 1)->mapping, 1);
	CHECK_INT(perf_space_find(&s, 0)->mapping, 2);
	CHECK(perf_space_find(&s, 1) == NULL);
	perf_space_free(&s);
}

int main(void)
{
	TT_RUN(random_puts);
	TT_RUN(descending_then_cover);
	TT_RUN(wide_addresses);
	TT_DONE();
}
