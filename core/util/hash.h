/* core/util/hash.h - the hashes of the tables an input fills, keyed with a
 * secret drawn once per process.
 *
 * Every table here is open addressing with linear probing. With a fixed
 * hash, an input can choose its keys (tids, ids, uuids, names) so that
 * they share one probe chain, and each lookup then walks all of them:
 * 3.2 MB of perf.data ids took 77 s, 4.2 MB of hprof object ids 45 s,
 * 7.5 MB of proto track uuids 16 s (hash flooding). Keyed, the slots an
 * input's keys take cannot be known from outside the process. No output
 * depends on where a key lies in a table (values are indices into arrays
 * filled in order), so outputs stay the same from run to run.
 *
 * The mixing is wyhash's: a 64 x 64 -> 128-bit product folded to 64 bits,
 * of the data xored with the secret (as Go's maps do where they have no
 * AES). Hashes that are kept or compared across runs (the index's, an
 * archive's) are tm_hash (util/ser.h), which must not vary. */
#ifndef TM_UTIL_HASH_H
#define TM_UTIL_HASH_H

#include <stddef.h>
#include <stdint.h>

/* Drawn from getrandom(2) before main (hash.c). */
extern uint64_t tm_hash_secret[4];

/* The 128-bit product of a and b, its halves xored. */
static inline uint64_t tm_mum(uint64_t a, uint64_t b)
{
	unsigned __int128 r = (unsigned __int128)a * b;
	return (uint64_t)r ^ (uint64_t)(r >> 64);
}

static inline uint64_t tm_rotl(uint64_t x, unsigned r)
{
	return x << r | x >> (64 - r);
}

/* A 64-bit key's hash. The product's two factors are k and k rotated,
 * not k twice: (k ^ s0) * (k ^ s1) is the same for k and k ^ s0 ^ s1, a
 * partner for every key (a review found it). */
static inline uint64_t tm_khash_u64(uint64_t k)
{
	uint64_t h = tm_mum(k ^ tm_hash_secret[0], tm_rotl(k, 23) ^ tm_hash_secret[1]);
	return tm_mum(h ^ tm_hash_secret[2], k ^ tm_hash_secret[3]);
}

/* Two 64-bit keys' hash, for tables keyed by a pair: one after the
 * other, so that (a, b) and (b, a) differ. */
static inline uint64_t tm_khash_pair(uint64_t a, uint64_t b)
{
	return tm_khash_u64(a ^ tm_khash_u64(b));
}

/* The key to try next when a table keyed by hashes finds key h taken by
 * another value (one whose full hash is the same): each try a new slot. */
static inline uint64_t tm_khash_next(uint64_t h)
{
	return h * UINT64_C(0x9e3779b97f4a7c15) + 1;
}

/* n bytes' hash. */
uint64_t tm_khash_bytes(const void *p, size_t n);

/* A C string's hash. */
uint64_t tm_khash_str(const char *s);

#endif
