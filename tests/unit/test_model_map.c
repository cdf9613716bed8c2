/* tests/unit/test_model_map.c - the model's u64 -> u64 map
 * (core/model/model_internal.h): every key, the two kept beside the slots
 * (UINT64_MAX - 1, UINT64_MAX) and those next to them included, answers
 * as a plain table does through puts, gets and deletes that grow the map
 * and leave tombstones behind; a zeroed map is an empty one. Also the
 * head of the model's records (core/model/model.h) as records store it. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tt.h"

#include "formats/registry.h"
#include "formats/systrace/systrace.h"
#include "formats/systrace/systrace_format.h"
#include "model/model_internal.h"

/* The keys the test draws from: small ones, the edges, and spread ones. */
#define N_KEYS 600
static uint64_t keys[N_KEYS];

static void make_keys(void)
{
	const uint64_t edge[] = {0, 1, 2, 3, UINT64_MAX, UINT64_MAX - 1, UINT64_MAX - 2, UINT64_MAX - 3,
				 INT64_MAX, (uint64_t)INT64_MAX + 1};
	size_t n = 0;
	for (size_t i = 0; i < sizeof edge / sizeof edge[0]; i++)
		keys[n++] = edge[i];
	uint64_t x = 0x9e3779b97f4a7c15ull;
	while (n < N_KEYS) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		keys[n] = n % 3 ? x : n; /* a third are small: they collide in the low bits */
		n++;
	}
}

static void test_against_a_table(void)
{
	make_keys();
	m_map m;
	memset(&m, 0, sizeof m);
	uint64_t val[N_KEYS];
	int in[N_KEYS] = {0};
	uint32_t r = 12345;
	size_t bad_get = 0, bad_ins = 0;
	for (int step = 0; step < 300000; step++) {
		r = r * 1103515245u + 12345u;
		size_t k = (r >> 8) % N_KEYS;
		int op = (int)((r >> 24) % 4);
		if (op == 0 || op == 1) { /* put */
			int ins = -1;
			uint64_t *v = m_map_put(&m, keys[k], &ins);
			bad_ins += ins != !in[k] || (ins && *v != 0);
			*v = (uint64_t)step * 7 + k;
			val[k] = *v;
			in[k] = 1;
		} else if (op == 2) { /* get */
			uint64_t *v = m_map_get(&m, keys[k]);
			bad_get += in[k] ? !v || *v != val[k] : v != NULL;
		} else { /* delete */
			m_map_del(&m, keys[k]);
			in[k] = 0;
		}
	}
	CHECK_INT(bad_get, 0);
	CHECK_INT(bad_ins, 0);
	for (size_t k = 0; k < N_KEYS; k++) {
		uint64_t *v = m_map_get(&m, keys[k]);
		bad_get += in[k] ? !v || *v != val[k] : v != NULL;
	}
	CHECK_INT(bad_get, 0);
	/* deletes and puts over and over do not grow it without end */
	CHECK(m.cap <= 4 * N_KEYS);
	m_map_free(&m);
	CHECK(m_map_get(&m, 0) == NULL && m_map_get(&m, UINT64_MAX) == NULL);
}

static void test_side_keys(void)
{
	m_map m;
	memset(&m, 0, sizeof m);
	CHECK(m_map_get(&m, UINT64_MAX) == NULL);
	CHECK(m_map_get(&m, UINT64_MAX - 1) == NULL);
	int ins = 0;
	*m_map_put(&m, UINT64_MAX, &ins) = 5;
	CHECK_INT(ins, 1);
	CHECK(m_map_get(&m, UINT64_MAX - 1) == NULL);
	*m_map_put(&m, UINT64_MAX - 1, &ins) = 6;
	*m_map_put(&m, UINT64_MAX - 2, &ins) = 7;
	CHECK_INT(*m_map_get(&m, UINT64_MAX), 5);
	CHECK_INT(*m_map_get(&m, UINT64_MAX - 1), 6);
	CHECK_INT(*m_map_get(&m, UINT64_MAX - 2), 7);
	CHECK(m_map_put(&m, UINT64_MAX, &ins) && ins == 0);
	m_map_del(&m, UINT64_MAX);
	CHECK(m_map_get(&m, UINT64_MAX) == NULL);
	CHECK_INT(*m_map_get(&m, UINT64_MAX - 1), 6);
	CHECK_INT(*m_map_put(&m, UINT64_MAX, &ins), 0);
	CHECK_INT(ins, 1);
	m_map_free(&m);
}

/* A record's head comes back as it was put, whatever the size of each
 * field's varint (the 5- and 7-byte fast paths and the rest), with the
 * body after it where it says; a record cut inside its head has none. */
static void test_record_heads(void)
{
	const uint32_t cpus[] = {0, 1, 127, 128, 16383, 16384, 65535};
	const uint32_t ids[] = {0, 1, 127, 128, 16383, 16384, 2097151, 2097152, UINT32_MAX};
	const size_t nc = sizeof cpus / sizeof cpus[0], ni = sizeof ids / sizeof ids[0];
	int ok = 1, cut_ok = 1;
	for (size_t c = 0; c < nc; c++)
		for (size_t f = 0; f < ni; f++)
			for (size_t r = 0; r < ni; r++) {
				tm_mrec_head h = {(uint8_t)(3 + c), (uint8_t)(200 + f), (uint16_t)cpus[c], ids[f], ids[r]};
				tm_buf b = {0};
				tm_mrec_head_put(&b, &h);
				size_t hn = b.len;
				tm_buf_put(&b, "body", 4);
				tm_mrec_head g;
				memset(&g, 0xa5, sizeof g);
				size_t got = tm_mrec_head_get(b.data, b.len, &g);
				ok &= got == hn && hn <= TM_MREC_HEAD_MAX && g.kind == h.kind && g.sub == h.sub &&
				      g.cpu == h.cpu && g.file_id == h.file_id && g.machine_row == h.machine_row &&
				      memcmp(b.data + got, "body", 4) == 0;
				for (size_t k = 0; k < hn; k++)
					cut_ok &= tm_mrec_head_get(b.data, k, &g) == 0;
				tm_buf_free(&b);
			}
	CHECK(ok);
	CHECK(cut_ok);
	/* a varint longer than its field: no head */
	const uint8_t too_long[] = {1, 0, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01, 0, 0};
	tm_mrec_head g;
	CHECK_INT(tm_mrec_head_get(too_long, sizeof too_long, &g), 0);
	const uint8_t cpu_too_big[] = {1, 0, 0x80, 0x80, 0x04, 0, 0}; /* 65536 */
	CHECK_INT(tm_mrec_head_get(cpu_too_big, sizeof cpu_too_big, &g), 0);
}

/* tm_model_bounds: a record of a machine row or file beyond the scan's
 * (only damage to a record in its temporary file makes one) changes
 * nothing; one within them makes its thread. Without bounds, every row is
 * taken (row 5 here). */
static void test_record_bounds(void)
{
	const tm_parser *parsers[TM_MREC_KINDS];
	for (unsigned k = 0; k < TM_MREC_KINDS; k++)
		parsers[k] = tm_parser_of(k);
	systrace_event l;
	memset(&l, 0, sizeof l);
	l.pid = 77;
	l.tgid = -1;
	l.task = "bash";
	l.event_name = "foo";
	l.args = l.print_name = l.print_track = "";
	tm_buf b = {0};
	for (int bounded = 0; bounded < 2; bounded++) {
		tm_model *m = tm_model_new(NULL, parsers);
		if (bounded)
			tm_model_bounds(m, 1, 1);
		size_t n0 = tm_model_n_threads(m);
		/* a row past the bounds (2^32 - 1 once grew the unbounded
		 * model's tables to 16 GiB: a sanitizer's build was killed) */
		tm_mrec_systrace(&b, 0, bounded ? UINT32_MAX : 5, &l);
		tm_model_apply(m, 1, b.data, (uint32_t)b.len);
		size_t n1 = tm_model_n_threads(m);
		tm_mrec_systrace(&b, 3, 0, &l);
		tm_model_apply(m, 2, b.data, (uint32_t)b.len);
		size_t n2 = tm_model_n_threads(m);
		tm_mrec_systrace(&b, 0, 0, &l);
		tm_model_apply(m, 3, b.data, (uint32_t)b.len);
		size_t n3 = tm_model_n_threads(m);
		if (bounded) {
			CHECK_INT(n1, n0);
			CHECK_INT(n2, n0);
			CHECK(n3 > n0);
		} else {
			CHECK(n1 > n0);
		}
		tm_model_free(m);
	}
	tm_buf_free(&b);
}

int main(void)
{
	tt_run("test_against_a_table", test_against_a_table);
	tt_run("test_side_keys", test_side_keys);
	tt_run("test_record_heads", test_record_heads);
	tt_run("test_record_bounds", test_record_bounds);
	return tt_failed ? 1 : 0;
}
