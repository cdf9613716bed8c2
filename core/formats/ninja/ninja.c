/* core/formats/ninja/ninja.c - NinjaLogParser's reading of a ninja log:
 * its lines, its jobs, their order and their workers. */
#include "formats/ninja/ninja.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* ---- lines and fields ---------------------------------------------------- */

/* base::CStringToInt64 / CStringToUInt64 / CStringToUInt32: strto* over
 * the whole token, which must not be empty. */
static int to_i64(const char *s, int64_t *out)
{
	char *end;
	long long v = strtoll(s, &end, 10);
	if (!*s || *end)
		return 0;
	*out = (int64_t)v;
	return 1;
}

static int to_u64(const char *s, int base, uint64_t *out)
{
	char *end;
	unsigned long long v = strtoull(s, &end, base);
	if (!*s || *end)
		return 0;
	*out = (uint64_t)v;
	return 1;
}

/* StringSplitter::Next over [*at, end) on `delim`, empty tokens skipped:
 * the token, NUL-terminated in place, or NULL. A NUL byte ends the text. */
static char *next_token(char **at, char *end, char delim)
{
	char *p = *at;
	while (p < end && *p == delim)
		p++;
	if (p >= end || !*p) {
		*at = end;
		return NULL;
	}
	char *tok = p;
	for (; p < end; p++) {
		if (*p == delim) {
			*p = '\0';
			*at = p + 1;
			return tok;
		}
		if (!*p)
			break;
	}
	*at = end;
	return tok;
}

#define HEADER "# ninja log v"

static void add_job(ninja_log *lg, int64_t start, int64_t end, uint64_t hash, const char *name)
{
	size_t nn = strlen(name);
	ninja_job *last = lg->n ? &lg->jobs[lg->n - 1] : NULL;
	/* the same hash and times back to back: one rule's several outputs */
	if (last && last->hash == hash && last->start_ms == start && last->end_ms == end &&
	    (uint64_t)last->names_len + 1 + nn <= UINT32_MAX) {
		tm_buf_put(&lg->names, " ", 1);
		tm_buf_put(&lg->names, name, nn);
		last->names_len += (uint32_t)(1 + nn);
		return;
	}
	if (lg->names.len + nn > UINT32_MAX) {
		lg->parse_errors++; /* beyond what a record holds: not a real log */
		return;
	}
	TM_GROW(lg->jobs, lg->cap, lg->n + 1);
	ninja_job *j = &lg->jobs[lg->n++];
	memset(j, 0, sizeof(*j));
	j->start_ms = start;
	j->end_ms = end;
	j->hash = hash;
	j->names_off = (uint32_t)lg->names.len;
	j->names_len = (uint32_t)nn;
	tm_buf_put(&lg->names, name, nn);
}

/* NinjaLogParser::Parse of the complete lines in [p, p + n): p[n - 1] is
 * the last one's '\n'. */
static int parse_lines(ninja_log *lg, char *p, size_t n, tm_error *err)
{
	char *end = p + n;
	end[-1] = '\0'; /* the splitter's own terminator */
	char *line;
	while ((line = next_token(&p, end, '\n'))) {
		if (!lg->header_parsed) {
			if (strncmp(line, HEADER, strlen(HEADER)) != 0)
				return tm_err(err, TM_EINPUT, NINJA_ERR_HEADER);
			lg->header_parsed = 1;
			const char *v = line + strlen(HEADER);
			char *ve;
			unsigned long version = strtoul(v, &ve, 10);
			if (!*v || *ve || (uint32_t)version != 5)
				return tm_err(err, TM_EINPUT, NINJA_ERR_VERSION);
			continue;
		}
		char *at = line, *le = line + strlen(line) + 1;
		const char *f[5];
		for (int i = 0; i < 5; i++) {
			f[i] = next_token(&at, le, '\t');
			if (!f[i])
				f[i] = "";
		}
		int64_t start, stop;
		uint64_t hash;
		/* f[2], the restat time, is not read */
		if (!to_i64(f[0], &start) || !to_i64(f[1], &stop) || !*f[3] || !to_u64(f[4], 16, &hash)) {
			lg->parse_errors++;
			continue;
		}
		add_job(lg, start, stop, hash, f[3]);
	}
	return 0;
}

int ninja_feed(ninja_log *lg, const void *p, size_t n, tm_error *err)
{
	const char *s = p;
	const char *nl = n ? memrchr(s, '\n', n) : NULL;
	if (!nl) {
		tm_buf_put(&lg->tail, s, n);
		return 0;
	}
	size_t upto = (size_t)(nl - s) + 1;
	tm_buf_put(&lg->tail, s, upto);
	int rc = parse_lines(lg, lg->tail.data, lg->tail.len, err);
	lg->tail.len = 0;
	tm_buf_put(&lg->tail, s + upto, n - upto);
	return rc;
}

/* ---- std::sort of libstdc++ ------------------------------------------------ */

/* The reference sorts its jobs with std::sort by start alone, which leaves
 * equal starts in whatever order its steps put them; the step after it
 * (workers) depends on that order. So these are libstdc++'s steps
 * (bits/stl_algo.h, bits/stl_heap.h), one for one. */

#define LESS(a, b) ((a)->start_ms < (b)->start_ms)
#define THRESHOLD 16

static void swap_jobs(ninja_job *a, ninja_job *b)
{
	ninja_job t = *a;
	*a = *b;
	*b = t;
}

static void unguarded_linear_insert(ninja_job *last)
{
	ninja_job val = *last;
	ninja_job *next = last - 1;
	while (LESS(&val, next)) {
		*last = *next;
		last = next;
		next--;
	}
	*last = val;
}

static void insertion_sort(ninja_job *first, ninja_job *last)
{
	if (first == last)
		return;
	for (ninja_job *i = first + 1; i != last; i++) {
		if (LESS(i, first)) {
			ninja_job val = *i;
			memmove(first + 1, first, (size_t)(i - first) * sizeof(*first));
			*first = val;
		} else {
			unguarded_linear_insert(i);
		}
	}
}

static void push_heap(ninja_job *first, ptrdiff_t hole, ptrdiff_t top, ninja_job val)
{
	ptrdiff_t parent = (hole - 1) / 2;
	while (hole > top && LESS(first + parent, &val)) {
		first[hole] = first[parent];
		hole = parent;
		parent = (hole - 1) / 2;
	}
	first[hole] = val;
}

static void adjust_heap(ninja_job *first, ptrdiff_t hole, ptrdiff_t len, ninja_job val)
{
	ptrdiff_t top = hole, child = hole;
	while (child < (len - 1) / 2) {
		child = 2 * (child + 1);
		if (LESS(first + child, first + (child - 1)))
			child--;
		first[hole] = first[child];
		hole = child;
	}
	if ((len & 1) == 0 && child == (len - 2) / 2) {
		child = 2 * (child + 1);
		first[hole] = first[child - 1];
		hole = child - 1;
	}
	push_heap(first, hole, top, val);
}

/* __partial_sort(first, last, last): make_heap, then sort_heap */
static void heap_sort(ninja_job *first, ninja_job *last)
{
	ptrdiff_t len = last - first;
	if (len >= 2) {
		for (ptrdiff_t parent = (len - 2) / 2;; parent--) {
			adjust_heap(first, parent, len, first[parent]);
			if (parent == 0)
				break;
		}
	}
	while (last - first > 1) {
		last--;
		ninja_job val = *last;
		*last = *first;
		adjust_heap(first, 0, last - first, val);
	}
}

static void move_median_to_first(ninja_job *result, ninja_job *a, ninja_job *b, ninja_job *c)
{
	if (LESS(a, b)) {
		if (LESS(b, c))
			swap_jobs(result, b);
		else if (LESS(a, c))
			swap_jobs(result, c);
		else
			swap_jobs(result, a);
	} else if (LESS(a, c)) {
		swap_jobs(result, a);
	} else if (LESS(b, c)) {
		swap_jobs(result, c);
	} else {
		swap_jobs(result, b);
	}
}

static ninja_job *unguarded_partition(ninja_job *first, ninja_job *last, ninja_job *pivot)
{
	for (;;) {
		while (LESS(first, pivot))
			first++;
		last--;
		while (LESS(pivot, last))
			last--;
		if (!(first < last))
			return first;
		swap_jobs(first, last);
		first++;
	}
}

static void introsort_loop(ninja_job *first, ninja_job *last, size_t depth)
{
	while (last - first > THRESHOLD) {
		if (depth == 0) {
			heap_sort(first, last);
			return;
		}
		depth--;
		ninja_job *mid = first + (last - first) / 2;
		move_median_to_first(first, first + 1, mid, last - 1);
		ninja_job *cut = unguarded_partition(first + 1, last, first);
		introsort_loop(cut, last, depth);
		last = cut;
	}
}

void ninja_sort_jobs(ninja_job *j, size_t n)
{
	if (n == 0)
		return;
	size_t lg = 0;
	for (size_t k = n; k > 1; k >>= 1)
		lg++;
	introsort_loop(j, j + n, lg * 2);
	if (n > THRESHOLD) {
		insertion_sort(j, j + THRESHOLD);
		for (ninja_job *i = j + THRESHOLD; i != j + n; i++)
			unguarded_linear_insert(i);
	} else {
		insertion_sort(j, j + n);
	}
}

/* ---- workers --------------------------------------------------------------- */

/* The reference gives a job the worker whose busy_until is the greatest
 * not after the job's start, the first such worker on ties, and makes a
 * new worker when none is free. It scans every worker per job; a log whose
 * jobs all overlap would make that quadratic, so the workers are kept in
 * a treap by (busy_until, then index descending): the greatest key not
 * after (start, any index) is the worker the scan finds. */
typedef struct wnode {
	int64_t busy;
	uint32_t index; /* 1-based: the worker's tid */
	uint32_t prio;
	int32_t l, r;
} wnode;

typedef struct wtree {
	wnode *n;
	size_t len, cap;
	int32_t root;
	uint64_t rng;
} wtree;

static int wkey_less(const wnode *a, int64_t busy, uint32_t index)
{
	return a->busy < busy || (a->busy == busy && a->index > index);
}

static int32_t w_merge(wtree *t, int32_t a, int32_t b)
{
	if (a < 0)
		return b;
	if (b < 0)
		return a;
	if (t->n[a].prio > t->n[b].prio) {
		t->n[a].r = w_merge(t, t->n[a].r, b);
		return a;
	}
	t->n[b].l = w_merge(t, a, t->n[b].l);
	return b;
}

/* Split into keys < (busy, index) and the rest. */
static void w_split(wtree *t, int32_t x, int64_t busy, uint32_t index, int32_t *lo, int32_t *hi)
{
	if (x < 0) {
		*lo = *hi = -1;
		return;
	}
	if (wkey_less(&t->n[x], busy, index)) {
		w_split(t, t->n[x].r, busy, index, &t->n[x].r, hi);
		*lo = x;
	} else {
		w_split(t, t->n[x].l, busy, index, lo, &t->n[x].l);
		*hi = x;
	}
}

static void w_insert(wtree *t, int32_t x)
{
	int32_t lo, hi;
	w_split(t, t->root, t->n[x].busy, t->n[x].index, &lo, &hi);
	t->root = w_merge(t, w_merge(t, lo, x), hi);
}

/* The node of the greatest key with busy <= start, taken out; -1 for none. */
static int32_t w_take(wtree *t, int64_t start)
{
	int32_t lo, hi;
	if (start == INT64_MAX) {
		lo = t->root;
		hi = -1;
	} else {
		w_split(t, t->root, start + 1, UINT32_MAX, &lo, &hi); /* keys with busy <= start */
	}
	if (lo < 0) {
		t->root = hi;
		return -1;
	}
	/* the rightmost node of lo */
	int32_t parent = -1, x = lo;
	while (t->n[x].r >= 0) {
		parent = x;
		x = t->n[x].r;
	}
	if (parent < 0)
		lo = t->n[x].l;
	else
		t->n[parent].r = t->n[x].l;
	t->n[x].l = t->n[x].r = -1;
	t->root = w_merge(t, lo, hi);
	return x;
}

static uint32_t w_rand(wtree *t)
{
	t->rng ^= t->rng << 13;
	t->rng ^= t->rng >> 7;
	t->rng ^= t->rng << 17;
	return (uint32_t)(t->rng >> 32);
}

void ninja_finish(ninja_log *lg)
{
	ninja_sort_jobs(lg->jobs, lg->n);
	wtree t = {.root = -1, .rng = 0x9e3779b97f4a7c15ull};
	for (size_t i = 0; i < lg->n; i++) {
		ninja_job *j = &lg->jobs[i];
		int32_t w = w_take(&t, j->start_ms);
		if (w < 0) {
			TM_GROW(t.n, t.cap, t.len + 1);
			w = (int32_t)t.len++;
			t.n[w].index = (uint32_t)t.len;
			t.n[w].prio = w_rand(&t);
			j->new_worker = 1;
		}
		t.n[w].busy = j->end_ms;
		t.n[w].l = t.n[w].r = -1;
		j->worker = t.n[w].index;
		w_insert(&t, w);
	}
	free(t.n);
}

void ninja_free(ninja_log *lg)
{
	free(lg->jobs);
	tm_buf_free(&lg->names);
	tm_buf_free(&lg->tail);
	memset(lg, 0, sizeof(*lg));
}
