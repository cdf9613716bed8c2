/* tests/unit/tt.h - the unit-test harness: one binary per module, one line
 * per case ("PASS name", "FAIL name: file:line: reason", "SKIP name: why"),
 * exit status 1 if any case failed. tests/run.sh counts the lines. */
#ifndef TT_H
#define TT_H

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wformat-truncation"
#endif
/* the tests set the deprecated flow id fields on purpose: the old form
 * of a flow must still be read */
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

/* TT_ASAN: built with AddressSanitizer (gcc says so one way, clang another) */
#if defined(__SANITIZE_ADDRESS__)
#define TT_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TT_ASAN 1
#endif
#endif
/* TT_TSAN: built with ThreadSanitizer, whose shadow memory is counted in
 * ru_maxrss too (several times each byte the program touches) */
#if defined(__SANITIZE_THREAD__)
#define TT_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define TT_TSAN 1
#endif
#endif
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

static int tt_failed, tt_case_failed, tt_case_skipped;
static char tt_reason[1024];

#define TT_FAIL_(...)                                                          \
	do {                                                                   \
		snprintf(tt_reason, sizeof tt_reason, __VA_ARGS__);            \
		tt_case_failed = 1;                                            \
		return;                                                        \
	} while (0)

#define CHECK(c)                                                               \
	do {                                                                   \
		if (!(c))                                                      \
			TT_FAIL_("%s:%d: %s", __FILE__, __LINE__, #c);         \
	} while (0)

#define CHECK_INT(a, b)                                                        \
	do {                                                                   \
		long long tt_a = (long long)(a), tt_b = (long long)(b);        \
		if (tt_a != tt_b)                                              \
			TT_FAIL_("%s:%d: %s == %lld, expected %lld", __FILE__,  \
				 __LINE__, #a, tt_a, tt_b);                    \
	} while (0)

#define CHECK_STR(a, b)                                                        \
	do {                                                                   \
		const char *tt_a = (a), *tt_b = (b);                           \
		if (!tt_a || !tt_b || strcmp(tt_a, tt_b) != 0)                 \
			TT_FAIL_("%s:%d: %s == \"%s\", expected \"%s\"",        \
				 __FILE__, __LINE__, #a, tt_a ? tt_a : "(null)", \
				 tt_b ? tt_b : "(null)");                      \
	} while (0)

#define SKIP(...)                                                              \
	do {                                                                   \
		snprintf(tt_reason, sizeof tt_reason, __VA_ARGS__);            \
		tt_case_skipped = 1;                                           \
		return;                                                        \
	} while (0)

static void tt_run(const char *name, void (*fn)(void))
{
	tt_case_failed = tt_case_skipped = 0;
	tt_reason[0] = '\0';
	fn();
	if (tt_case_failed) {
		tt_failed++;
		printf("FAIL %s: %s\n", name, tt_reason);
	} else if (tt_case_skipped) {
		printf("SKIP %s: %s\n", name, tt_reason);
	} else {
		printf("PASS %s\n", name);
	}
	fflush(stdout);
}

/* A file holding the n bytes at p (tt_temp_bytes) or the C string `text`,
 * made from the mkstemp(3) template `path` (filled in): 0, or -1 when it
 * cannot be written. The caller unlinks it. */
static inline int tt_temp_bytes(char *path, const void *p, size_t n)
{
	int fd = mkstemp(path);
	if (fd < 0)
		return -1;
	ssize_t w = write(fd, p, n);
	close(fd);
	return w == (ssize_t)n ? 0 : -1;
}

static inline int tt_temp_file(char *path, const char *text)
{
	return tt_temp_bytes(path, text, strlen(text));
}

/* A Chrome JSON trace of one complete event. */
#define TT_ONE_EVENT_JSON "{\"traceEvents\":[{\"ph\":\"X\",\"ts\":1,\"dur\":1,\"pid\":1,\"tid\":1}]}\n"

/* The process's peak resident set so far, kB (the memory checks, which
 * the sanitizer builds skip: TT_ASAN, TT_TSAN). */
static inline long tt_maxrss_kb(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_maxrss;
}

#define TT_RUN(fn) tt_run(#fn, fn)
#define TT_DONE() return tt_failed ? 1 : 0

/* Each of this process's temporary files (tracemount.*, unlinked) of at
 * least min_size bytes, opened read-write, to fn (which must not close
 * it): the tests that damage a sort's or the order store's file. Returns
 * how many fn answered nonzero for. */
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
static inline int tt_each_temp_file(off_t min_size, int (*fn)(int fd, const struct stat *st, void *ctx), void *ctx)
{
	int hits = 0;
	DIR *d = opendir("/proc/self/fd");
	for (struct dirent *e; d && (e = readdir(d)) != NULL;) {
		char link[64], target[512];
		snprintf(link, sizeof link, "/proc/self/fd/%s", e->d_name);
		ssize_t k = readlink(link, target, sizeof target - 1);
		if (k <= 0)
			continue;
		target[k] = 0;
		if (!strstr(target, "/tracemount.") || !strstr(target, " (deleted)"))
			continue;
		int fd = open(link, O_RDWR);
		struct stat st;
		if (fd >= 0 && fstat(fd, &st) == 0 && st.st_size >= min_size)
			hits += fn(fd, &st, ctx) != 0;
		if (fd >= 0)
			close(fd);
	}
	if (d)
		closedir(d);
	return hits;
}

#endif
