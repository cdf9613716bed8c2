/* tests/fuzz/fuzz_input.h - a fuzz input as a file: the bytes written to a
 * memfd, opened by path (/proc/self/fd/N) as a user's archive would be. */
#ifndef FUZZ_INPUT_H
#define FUZZ_INPUT_H

#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

/* A memfd holding the size bytes of data, or -1. */
static inline int fuzz_memfd(const char *name, const void *data, size_t size)
{
	int fd = memfd_create(name, 0);
	if (fd < 0)
		return -1;
	for (size_t off = 0; off < size;) {
		ssize_t w = write(fd, (const char *)data + off, size - off);
		if (w <= 0) {
			close(fd);
			return -1;
		}
		off += (size_t)w;
	}
	return fd;
}

/* Defined by the replay driver (driver.c), which `make check` runs over
 * the kept inputs: there a target may be thorough. Under libFuzzer it is
 * undefined (weak, so NULL) and a target keeps each run short, for many
 * runs a second. */
extern const int fuzz_replaying __attribute__((weak));

static inline int fuzz_thorough(void)
{
	return &fuzz_replaying != NULL;
}

/* The path that names fd. */
static inline void fuzz_fd_path(int fd, char path[64])
{
	snprintf(path, 64, "/proc/self/fd/%d", fd);
}

#endif
