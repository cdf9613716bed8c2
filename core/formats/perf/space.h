/* core/formats/perf/space.h - an address space as the reference's
 * AddressRangeMap::TrimOverlapsAndEmplace keeps it: disjoint ranges by
 * start, each with its mapping; a new range trims or splits the ones it
 * overlaps (the newest mapping of an address wins).
 *
 * The ranges are kept in order in blocks of at most PERF_SPACE_BLOCK.
 * One sorted array took a move of every range after a new one, so a
 * crafted perf.data of MMAPs in descending address order took time with
 * the square of their number (80,000 MMAPs, 7.7 MB: 0.7 s; 160,000:
 * 3.0 s; now 0.08 and 0.18 s). A put or a find is a search over the
 * blocks, one in a block, and a move of at most a block; a block that
 * fills is split in two halves. */
#ifndef TM_PERF_SPACE_H
#define TM_PERF_SPACE_H

#include <stddef.h>
#include <stdint.h>

#define PERF_SPACE_BLOCK 256

typedef struct perf_range {
	uint64_t start, end;
	uint32_t mapping;
} perf_range;

typedef struct perf_block {
	perf_range *v;
	uint32_t n;        /* 1 to PERF_SPACE_BLOCK */
	size_t cap;
} perf_block;

typedef struct perf_space {
	perf_block *b;     /* in order, none empty */
	size_t nb, cap;
} perf_space;

/* [start, end) of mapping put in s: what it overlaps is trimmed to
 * outside it (a range that covers it on both sides is split in two). An
 * empty range changes nothing. */
void perf_space_put(perf_space *s, uint64_t start, uint64_t end, uint32_t mapping);

/* The range holding addr, or NULL; valid until the next put. */
const perf_range *perf_space_find(const perf_space *s, uint64_t addr);

void perf_space_free(perf_space *s);

#endif
