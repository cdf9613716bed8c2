/* tests/unit/test_hash.c - the tables' keyed hashes (core/util/hash.h):
 * the secret is drawn, and differs from one process to the next; the same
 * key gives the same hash within one; and the keys that fell into one
 * probe chain under the old hashes (tests/tools/make_flood.py) spread over
 * a table's slots as random keys do. Also the tables themselves find
 * every such key again. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tt.h"

#include "util/hash.h"
#include "util/tm.h"

#define BUCKETS 1024u
#define KEYS 8192u /* 8 a bucket on average */
/* The most keys a bucket may take. Uniformly hashed, a bucket's count is
 * about Poisson(8): above 40 has a chance of about 1e-15 per bucket. */
#define MOST 40u

/* The fullest bucket of the low bits of the keys' hashes. */
static unsigned fullest(const uint64_t *h, size_t n)
{
	static unsigned count[BUCKETS];
	memset(count, 0, sizeof count);
	unsigned most = 0;
	for (size_t i = 0; i < n; i++) {
		unsigned c = ++count[h[i] & (BUCKETS - 1)];
		if (c > most)
			most = c;
	}
	return most;
}

/* The key the old tm_u64map hash sent to y (xorshift 33, multiply by C,
 * xorshift 33: each step undone). */
static uint64_t old_u64map_unhash(uint64_t y)
{
	const uint64_t c = UINT64_C(0xff51afd7ed558ccd);
	uint64_t inv = c; /* Newton: each step doubles the correct low bits */
	for (int i = 0; i < 6; i++)
		inv *= 2 - c * inv;
	y ^= y >> 33;
	y *= inv;
	y ^= y >> 33;
	return y;
}

static void test_flooding_keys_spread(void)
{
	static uint64_t h[KEYS];
	/* perf_data.c id_seen: (key * K >> 7) & mask, keys with low bits 0 */
	for (uint64_t i = 0; i < KEYS; i++)
		h[i] = tm_khash_u64((i + 1) << 40);
	CHECK(fullest(h, KEYS) <= MOST);
	/* systrace task names: tid * K & mask, tids i << 16 */
	for (uint64_t i = 0; i < KEYS; i++)
		h[i] = tm_khash_u64(i << 16);
	CHECK(fullest(h, KEYS) <= MOST);
	/* tm_u64map: keys the old hash sent to i << 24 */
	for (uint64_t i = 0; i < KEYS; i++) {
		uint64_t k = old_u64map_unhash((i + 1) << 24);
		h[i] = tm_khash_u64(k);
	}
	CHECK(fullest(h, KEYS) <= MOST);
	/* pairs that differ in one half only */
	for (uint64_t i = 0; i < KEYS; i++)
		h[i] = tm_khash_pair(i << 32, 7);
	CHECK(fullest(h, KEYS) <= MOST);
	for (uint64_t i = 0; i < KEYS; i++)
		h[i] = tm_khash_pair(7, i << 32);
	CHECK(fullest(h, KEYS) <= MOST);
	/* 40-byte names alike but for the number i, written at i % 32 */
	char name[41];
	for (size_t i = 0; i < KEYS; i++) {
		memset(name, 'a', 40);
		name[40] = '\0';
		char digits[8];
		int nd = snprintf(digits, sizeof digits, "%zu", i);
		memcpy(name + i % 32, digits, (size_t)nd);
		h[i] = tm_khash_str(name);
	}
	CHECK(fullest(h, KEYS) <= MOST);
}

static void test_same_within_a_process(void)
{
	const char a[] = "sched_switch\0sched_switch";
	CHECK(tm_khash_bytes(a, 12) == tm_khash_bytes(a + 13, 12));
	CHECK(tm_khash_str("sched_switch") == tm_khash_bytes(a, 12));
	CHECK(tm_khash_u64(42) == tm_khash_u64(42));
	CHECK(tm_khash_pair(1, 2) == tm_khash_pair(1, 2));
	/* a length is part of the hash: trailing NULs, the empty string */
	const char z[17] = {0};
	int distinct = 1;
	for (size_t n = 0; n < 17; n++)
		for (size_t m = 0; m < n; m++)
			distinct &= tm_khash_bytes(z, n) != tm_khash_bytes(z, m);
	CHECK(distinct);
	CHECK(tm_khash_pair(1, 2) != tm_khash_pair(2, 1));
	/* no partner made of the secret: with k and k ^ s0 ^ s1 as the two
	 * factors of one product, every key had one */
	uint64_t s01 = tm_hash_secret[0] ^ tm_hash_secret[1];
	int partners = 0;
	for (uint64_t k = 1; k < 1000; k++) {
		partners += tm_khash_u64(k) == tm_khash_u64(k ^ s01);
		partners += tm_khash_pair(k, 7) == tm_khash_pair(7 ^ s01, k ^ s01);
	}
	CHECK_INT(partners, 0);
}

/* A table holding flooding keys finds each again (and no other). */
static void test_map_with_flooding_keys(void)
{
	tm_u64map m = {0};
	for (uint64_t i = 0; i < 50000; i++)
		tm_u64map_put(&m, old_u64map_unhash((i + 1) << 24), (uint32_t)i);
	size_t bad = 0;
	for (uint64_t i = 0; i < 50000; i++) {
		const uint32_t *v = tm_u64map_get(&m, old_u64map_unhash((i + 1) << 24));
		bad += !v || *v != i + 1;
	}
	bad += tm_u64map_get(&m, old_u64map_unhash(UINT64_C(1) << 60)) != NULL;
	CHECK_INT(bad, 0);
	tm_u64map_free(&m);
}

/* This binary run again prints its secret: another process draws another. */
static void test_secret_per_process(void)
{
	CHECK((tm_hash_secret[0] | tm_hash_secret[1] | tm_hash_secret[2] | tm_hash_secret[3]) != 0); /* drawn */
	char self[4096], cmd[4200];
	ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
	if (n <= 0)
		SKIP("no /proc/self/exe to run again");
	self[n] = '\0';
	snprintf(cmd, sizeof cmd, "'%s' --secret", self);
	FILE *p = popen(cmd, "r");
	CHECK(p != NULL);
	unsigned long long other[4] = {0};
	int got = fscanf(p, "%llx %llx %llx %llx", &other[0], &other[1], &other[2], &other[3]);
	pclose(p);
	CHECK_INT(got, 4);
	int same = 1;
	for (int i = 0; i < 4; i++)
		same &= other[i] == tm_hash_secret[i];
	CHECK(!same);
}

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "--secret") == 0) {
		printf("%llx %llx %llx %llx\n", (unsigned long long)tm_hash_secret[0],
		       (unsigned long long)tm_hash_secret[1], (unsigned long long)tm_hash_secret[2],
		       (unsigned long long)tm_hash_secret[3]);
		return 0;
	}
	TT_RUN(test_flooding_keys_spread);
	TT_RUN(test_same_within_a_process);
	TT_RUN(test_map_with_flooding_keys);
	TT_RUN(test_secret_per_process);
	TT_DONE();
}
