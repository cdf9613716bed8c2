/* tests/unit/test_model_compress.c - the model's TrackCompressor
 * (core/model/model_slice.c) against the reference's walks over a set's
 * tracks, kept by the test: the track of a cookie, else the first whose
 * nesting is done; the first scoped track whose slice ended; the first
 * nestable track a slice nests on. Sets grow past the size at which the
 * model indexes them, so both ways are compared, each call. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tt.h"

#include "model/model_internal.h"

static const tm_parser *const no_parsers[TM_MREC_KINDS];

#define MAX_TRACKS 4096
#define MAX_OPEN 4096

/* The reference's set: its tracks in the order they were made. */
typedef struct want_track {
	int type;
	int64_t cookie, nest, ts_end;
	int64_t open[MAX_OPEN];
	size_t n_open;
	int64_t model_id; /* the model's track for it, -1 until returned */
} want_track;

static want_track want[2][MAX_TRACKS];
static size_t n_want[2];

static want_track *want_new(int set, int type)
{
	want_track *t = &want[set][n_want[set]++];
	memset(t, 0, sizeof *t);
	t->type = type;
	t->model_id = -1;
	return t;
}

static want_track *want_cookie(int set, int64_t cookie)
{
	for (size_t i = 0; i < n_want[set]; i++)
		if (want[set][i].type == 0 && want[set][i].cookie == cookie)
			return &want[set][i];
	for (size_t i = 0; i < n_want[set]; i++)
		if (want[set][i].type == 0 && want[set][i].nest == 0) {
			want[set][i].cookie = cookie;
			return &want[set][i];
		}
	want_track *t = want_new(set, 0);
	t->cookie = cookie;
	return t;
}

static want_track *want_scoped(int set, int64_t ts, int64_t dur)
{
	for (size_t i = 0; i < n_want[set]; i++)
		if (want[set][i].type == 1 && want[set][i].ts_end <= ts) {
			want[set][i].ts_end = ts + dur;
			return &want[set][i];
		}
	want_track *t = want_new(set, 1);
	t->ts_end = ts + dur;
	return t;
}

static want_track *want_overlapping(int set, int64_t ts, int64_t dur)
{
	int64_t end = ts + dur;
	want_track *t = NULL;
	for (size_t i = 0; i < n_want[set] && !t; i++) {
		want_track *w = &want[set][i];
		if (w->type != 2)
			continue;
		while (w->n_open && w->open[w->n_open - 1] <= ts)
			w->n_open--;
		if (!w->n_open || end <= w->open[w->n_open - 1])
			t = w;
	}
	if (!t)
		t = want_new(set, 2);
	t->open[t->n_open++] = end;
	return t;
}

static uint64_t next_rand(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

/* The model gave id for the reference's track t: the same as it gave
 * before for t, and a new one for a new t. */
static int same_track(want_track *t, uint32_t id, uint8_t *seen)
{
	if (t->model_id < 0) {
		if (seen[id])
			return 0;
		seen[id] = 1;
		t->model_id = id;
		return 1;
	}
	return t->model_id == (int64_t)id;
}

static void compress_walks(void)
{
	for (uint64_t seed = 1; seed <= 12; seed++) {
		tm_model *m = tm_model_new(NULL, no_parsers);
		m_ctx *c = m_context(m, 0, 0);
		uint64_t x = seed * 0x9e3779b97f4a7c15ull;
		uint8_t *seen = tm_xcalloc(4 * MAX_TRACKS, 1);
		n_want[0] = n_want[1] = 0;
		/* set 0 holds cookie and scoped tracks together (as an
		 * atrace track's G, H and N do), set 1 nestable ones; seeds
		 * differ in how many cookies and how long slices are */
		int64_t cookies = seed % 3 == 0 ? 40 : seed % 3 == 1 ? 300 : 2000;
		int64_t ts = 0, dur_max = seed % 2 ? 400 : 4000;
		for (int op = 0; op < 6000; op++) {
			ts += (int64_t)(next_rand(&x) % 8);
			int64_t cookie = (int64_t)(next_rand(&x) % (uint64_t)cookies);
			int64_t dur = (int64_t)(next_rand(&x) % (uint64_t)dur_max);
			uint32_t id;
			want_track *t;
			switch (next_rand(&x) % 8) {
			case 0:
			case 1: {
				int nestable = (int)(next_rand(&x) % 2);
				id = m_compress_begin(m, c, 1000, cookie, nestable, TM_MT_PROTO, TM_SCOPE_PROCESS, 1, 0);
				t = want_cookie(0, cookie);
				t->nest = nestable ? t->nest + 1 : 1;
				break;
			}
			case 2:
			case 3:
				id = m_compress_end(m, c, 1000, cookie, TM_MT_PROTO, TM_SCOPE_PROCESS, 1, 0);
				t = want_cookie(0, cookie);
				if (t->nest > 0)
					t->nest--;
				break;
			case 4:
				if (next_rand(&x) % 16 == 0) { /* DefaultTrack: the first, whatever it is */
					id = m_compress_cookie(m, c, 1000, M_COMPRESS_DEFAULT, 0, TM_MT_PROTO,
							       TM_SCOPE_PROCESS, -1, 1, 0);
					t = n_want[0] ? &want[0][0] : want_cookie(0, 0);
					break;
				}
				id = m_compress_scoped(m, c, 1000, ts, dur % 50, TM_MT_PROTO, TM_SCOPE_PROCESS, 1, 0);
				t = want_scoped(0, ts, dur % 50);
				break;
			default:
				id = m_compress_overlapping(m, c, 2000, ts, dur, TM_MT_PROTO, TM_SCOPE_THREAD, 1, 0);
				t = want_overlapping(1, ts, dur);
				break;
			}
			if (!same_track(t, id, seen))
				TT_FAIL_("seed %llu op %d: the model's track %u is not the walk's",
					 (unsigned long long)seed, op, id);
		}
		free(seen);
		tm_model_free(m);
		CHECK(n_want[0] > 16 && n_want[1] > 16); /* past the size that is indexed */
	}
}

int main(void)
{
	TT_RUN(compress_walks);
	TT_DONE();
}
