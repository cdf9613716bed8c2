/* core/formats/perf/space.c - the address ranges of a process's mappings
 * (space.h). */
#include "formats/perf/space.h"

#include <stdlib.h>
#include <string.h>

#include "util/tm.h"

void perf_space_free(perf_space *s)
{
	for (size_t i = 0; i < s->nb; i++)
		free(s->b[i].v);
	free(s->b);
}

/* Where the first range that ends after addr is: block *bi, index *i
 * (*bi == nb: none). */
static void after(const perf_space *s, uint64_t addr, size_t *bi, uint32_t *i)
{
	size_t lo = 0, hi = s->nb;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (s->b[mid].v[s->b[mid].n - 1].end <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	*bi = lo;
	*i = 0;
	if (lo == s->nb)
		return;
	const perf_block *k = &s->b[lo];
	uint32_t l = 0, h = k->n;
	while (l < h) {
		uint32_t mid = l + (h - l) / 2;
		if (k->v[mid].end <= addr)
			l = mid + 1;
		else
			h = mid;
	}
	*i = l;
}

/* r put before the range at (*bi, *i), which then point after it. A full
 * block is split in two halves first. */
static void insert(perf_space *s, size_t *bi, uint32_t *i, perf_range r)
{
	if (s->nb == 0) {
		TM_GROW(s->b, s->cap, 1);
		s->b[0] = (perf_block){0};
		s->nb = 1;
	}
	if (*bi == s->nb) { /* after the last range */
		*bi = s->nb - 1;
		*i = s->b[*bi].n;
	}
	if (s->b[*bi].n == PERF_SPACE_BLOCK) {
		TM_GROW(s->b, s->cap, s->nb + 1);
		memmove(s->b + *bi + 2, s->b + *bi + 1, (s->nb - *bi - 1) * sizeof *s->b);
		s->nb++;
		perf_block *lo = &s->b[*bi], *up = &s->b[*bi + 1];
		*up = (perf_block){0};
		TM_GROW(up->v, up->cap, PERF_SPACE_BLOCK);
		up->n = PERF_SPACE_BLOCK / 2;
		memcpy(up->v, lo->v + PERF_SPACE_BLOCK / 2, up->n * sizeof *up->v);
		lo->n = PERF_SPACE_BLOCK / 2;
		if (*i > lo->n) {
			*i -= lo->n;
			++*bi;
		}
	}
	perf_block *k = &s->b[*bi];
	TM_GROW(k->v, k->cap, k->n + 1);
	memmove(k->v + *i + 1, k->v + *i, (k->n - *i) * sizeof *k->v);
	k->v[(*i)++] = r;
	k->n++;
}

void perf_space_put(perf_space *s, uint64_t start, uint64_t end, uint32_t mapping)
{
	if (start >= end)
		return; /* an empty range is not kept */
	size_t bi;
	uint32_t i;
	after(s, start, &bi, &i);
	/* what it overlaps, from (bi, i) on, is taken out; the parts of the
	 * first and last outside it stay */
	perf_range head = {0, 0, 0}, tail = {0, 0, 0};
	int has_head = 0, has_tail = 0, first = 1;
	while (bi < s->nb && s->b[bi].v[i].start < end) {
		perf_block *k = &s->b[bi];
		uint32_t j = i;
		while (j < k->n && k->v[j].start < end)
			j++;
		if (first && k->v[i].start < start) {
			head = (perf_range){k->v[i].start, start, k->v[i].mapping};
			has_head = 1;
		}
		first = 0;
		if (k->v[j - 1].end > end) {
			tail = (perf_range){end, k->v[j - 1].end, k->v[j - 1].mapping};
			has_tail = 1;
		}
		uint32_t rest = k->n - j;
		memmove(k->v + i, k->v + j, rest * sizeof *k->v);
		k->n -= j - i;
		if (k->n == 0) {
			free(k->v);
			memmove(s->b + bi, s->b + bi + 1, (s->nb - bi - 1) * sizeof *s->b);
			s->nb--;
			i = 0;
		} else if (rest == 0) {
			bi++; /* it may go on in the next block */
			i = 0;
		} else {
			break;
		}
	}
	/* back to the end of the block before, when this one was left */
	if (i == 0 && bi > 0 && (bi == s->nb || s->b[bi - 1].n < PERF_SPACE_BLOCK)) {
		bi--;
		i = s->b[bi].n;
	}
	if (has_head)
		insert(s, &bi, &i, head);
	insert(s, &bi, &i, (perf_range){start, end, mapping});
	if (has_tail)
		insert(s, &bi, &i, tail);
}

const perf_range *perf_space_find(const perf_space *s, uint64_t addr)
{
	size_t bi;
	uint32_t i;
	after(s, addr, &bi, &i);
	return bi < s->nb && s->b[bi].v[i].start <= addr ? &s->b[bi].v[i] : NULL;
}
