/* tests/unit/test_model_proc.c - threads waiting for their process
 * (core/model/model_proc.c): pending associations are resolved in the
 * order the reference's walk of its vector gives (ProcessTracker's
 * ResolvePendingAssociations: from the front, a pair taken out replaced
 * by the last one, which is looked at next). That order is the order
 * threads join their process in (the model's `made` list), and the
 * vector's order after it decides the next resolution's. The test keeps
 * such a vector itself and compares both after each resolution. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tt.h"

#include "model/model_internal.h"

/* no records are applied: the model is driven by its own calls */
static const tm_parser *const no_parsers[TM_MREC_KINDS];

#define THREADS 64
#define PAIRS 400

static int64_t want_v[PAIRS * 2][2];
static size_t want_n;
static int64_t want_upid[THREADS + 64];

static uint64_t next_rand(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

/* The reference's walk: others joined, in order, into made. */
static size_t walk(int64_t first, int64_t upid, int64_t *made, size_t n_made)
{
	int64_t todo[PAIRS * 4 + 1];
	size_t n_todo = 0;
	todo[n_todo++] = first;
	while (n_todo) {
		int64_t u = todo[--n_todo];
		size_t end = want_n;
		for (size_t i = 0; i < end;) {
			int64_t other;
			if (want_v[i][0] == u)
				other = want_v[i][1];
			else if (want_v[i][1] == u)
				other = want_v[i][0];
			else {
				i++;
				continue;
			}
			if (want_upid[other] != upid)
				made[n_made++] = other;
			want_upid[other] = upid;
			end--;
			int64_t t0 = want_v[i][0], t1 = want_v[i][1];
			want_v[i][0] = want_v[end][0];
			want_v[i][1] = want_v[end][1];
			want_v[end][0] = t0;
			want_v[end][1] = t1;
			todo[n_todo++] = other;
		}
		want_n = end;
	}
	return n_made;
}

static void pending_order(void)
{
	for (uint64_t seed = 1; seed <= 20; seed++) {
		tm_model *m = tm_model_new(NULL, no_parsers);
		m_mach *mc = m_machine(m, 0);
		uint64_t x = seed * 0x9e3779b97f4a7c15ull;
		int64_t utid[THREADS];
		for (int i = 0; i < THREADS; i++) {
			utid[i] = m_start_new_thread(m, mc, -1, 1000 + i);
			want_upid[utid[i]] = -1;
		}
		/* pairs of threads of no process yet: some with themselves,
		 * some twice; few threads, so chains and repeats are many */
		want_n = 0;
		for (int k = 0; k < PAIRS; k++) {
			int64_t a = utid[next_rand(&x) % THREADS], b = utid[next_rand(&x) % THREADS];
			if (next_rand(&x) % 16 == 0)
				b = a;
			m_associate_threads(m, mc, a, b, 1);
			want_v[want_n][0] = a;
			want_v[want_n][1] = b;
			want_n++;
		}
		CHECK_INT(mc->n_pending, want_n);
		/* threads join processes one at a time: each takes its
		 * waiting chain with it */
		for (int round = 0; round < 12 && want_n; round++) {
			int64_t pid = 5000 + round;
			int64_t upid = m_get_or_create_process(m, mc, pid);
			int64_t main_utid = m_get_thread_or_null(m, mc, pid);
			CHECK(main_utid >= 0);
			int64_t joiner = utid[next_rand(&x) % THREADS];
			if (want_upid[joiner] >= 0)
				continue; /* already in one: nothing to resolve */
			m->n_made = 0;
			m_associate_threads(m, mc, main_utid, joiner, 1);
			int64_t made[PAIRS * 4 + 1];
			size_t n_made = 0;
			made[n_made++] = joiner;
			want_upid[joiner] = upid;
			n_made = walk(joiner, upid, made, n_made);
			CHECK_INT(m->n_made, n_made);
			for (size_t i = 0; i < n_made; i++)
				if (m->made[i] != made[i])
					TT_FAIL_("seed %llu round %d: made[%zu] is %lld, the walk's %lld",
						 (unsigned long long)seed, round, i, (long long)m->made[i],
						 (long long)made[i]);
			CHECK_INT(mc->n_pending, want_n);
			for (size_t i = 0; i < want_n; i++)
				if (mc->pending[i].t[0] != want_v[i][0] || mc->pending[i].t[1] != want_v[i][1])
					TT_FAIL_("seed %llu round %d: pair %zu differs from the vector's",
						 (unsigned long long)seed, round, i);
			for (int i = 0; i < THREADS; i++)
				CHECK_INT(m->threads[utid[i]].pub.upid, want_upid[utid[i]]);
		}
		tm_model_free(m);
	}
}

/* A process waiting for its parent thread's process gets it when that
 * thread joins one, however many wait for the same thread. */
static void parent_waits(void)
{
	tm_model *m = tm_model_new(NULL, no_parsers);
	m_mach *mc = m_machine(m, 0);
	int64_t parent = m_start_new_thread(m, mc, -1, 77);
	int64_t child[3];
	for (int i = 0; i < 3; i++) {
		child[i] = m_get_or_create_process(m, mc, 100 + i);
		m_associate_created_process(m, mc, child[i], parent);
		CHECK_INT(m->procs[child[i]].pub.parent_upid, -1);
	}
	CHECK_INT(mc->n_waiting, 3);
	int64_t upid = m_get_or_create_process(m, mc, 50);
	m_update_thread(m, mc, 77, 50);
	for (int i = 0; i < 3; i++)
		CHECK_INT(m->procs[child[i]].pub.parent_upid, upid);
	CHECK_INT(mc->n_waiting, 0);
	tm_model_free(m);
}

int main(void)
{
	TT_RUN(pending_order);
	TT_RUN(parent_waits);
	TT_DONE();
}
