/* core/util/hash.c - the secret of the tables' hashes (util/hash.h says
 * why it is there) and the hash of bytes. */
#include "util/hash.h"

#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

uint64_t tm_hash_secret[4];

/* Before main, so that the secret is set before any thread reads it and
 * is never written again: read-only, it needs no lock. getrandom(2) does
 * not block once the kernel's pool is ready, which it is long before a
 * user runs anything. Should it fail, the clock, the pid and a stack
 * address (ASLR) stand in: weaker, but still not known from outside. */
__attribute__((constructor)) static void draw_secret(void)
{
	uint64_t *s = tm_hash_secret;
	if (getrandom(s, sizeof tm_hash_secret, GRND_NONBLOCK) == (ssize_t)sizeof tm_hash_secret)
		return;
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	uint64_t x = (uint64_t)t.tv_nsec ^ (uint64_t)t.tv_sec << 30 ^ (uint64_t)getpid() << 40 ^ (uint64_t)(uintptr_t)&t;
	for (size_t i = 0; i < 4; i++) { /* splitmix64 */
		x += UINT64_C(0x9e3779b97f4a7c15);
		uint64_t z = x;
		z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
		z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
		s[i] = z ^ (z >> 31);
	}
}

static inline uint64_t word(const unsigned char *p)
{
	uint64_t w;
	memcpy(&w, p, 8);
	return w;
}

/* Sixteen bytes at a time, the last (up to 15) zero-padded; the length
 * goes into the start and the end, so that strings that differ only in
 * trailing NULs differ. */
uint64_t tm_khash_bytes(const void *p, size_t n)
{
	const unsigned char *b = p;
	uint64_t h = tm_hash_secret[0] ^ n;
	size_t left = n;
	for (; left >= 16; b += 16, left -= 16)
		h = tm_mum(word(b) ^ tm_hash_secret[1], word(b + 8) ^ h);
	unsigned char tail[16] = {0};
	if (left)
		memcpy(tail, b, left);
	h = tm_mum(word(tail) ^ tm_hash_secret[2], word(tail + 8) ^ h);
	return tm_mum(h ^ tm_hash_secret[3], n ^ tm_hash_secret[1]);
}

uint64_t tm_khash_str(const char *s)
{
	return tm_khash_bytes(s, strlen(s));
}
