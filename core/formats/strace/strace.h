/* core/formats/strace/strace.h - a line of `strace -f -ttt` output as the
 * reference's ParseStraceLine reads it.
 *
 *   1234  1700000000.000100 openat(AT_FDCWD, "/etc/hosts", O_RDONLY) = 3
 *   1234  1700000000.000200 read(3,  <unfinished ...>
 *   1234  1700000000.000300 <... read resumed>"x", 4096) = 1
 *
 * An optional pid (a run of 1 to 9 digits: ten or more are the time),
 * the time as Unix epoch seconds with optional microseconds (-ttt; a time
 * of day, -t or -tt, is refused and said so), then a whole call, the start
 * of an interrupted one, or the rest of a resumed one. Signal and exit
 * banners ("--- SIGCHLD", "+++ exited") are not calls.
 */
#ifndef TM_STRACE_H
#define TM_STRACE_H

#include <stddef.h>
#include <stdint.h>

typedef enum strace_kind {
	STRACE_COMPLETE,               /* "foo(args) = ret" */
	STRACE_UNFINISHED,             /* "foo(args <unfinished ...>" */
	STRACE_RESUMED,                /* "<... foo resumed> args) = ret" */
	STRACE_RESUMED_THEN_UNFINISHED /* "<... foo resumed> args <unfinished ...>" */
} strace_kind;

/* Pieces point into the line given. */
typedef struct strace_line {
	int has_pid;
	uint32_t pid;
	int64_t epoch_ns;
	strace_kind kind;
	const char *syscall;
	size_t syscall_n;
	const char *args;      /* "" (args_n 0) when there are none */
	size_t args_n;
	int has_ret;
	const char *ret;
	size_t ret_n;
} strace_line;

/* 1 and *out filled for a call line; 0 for another line, with
 * *unsupported_time set when it has a time of day where the epoch time
 * goes (strace_unsupported_timestamp_format, else strace_parse_failure). */
int strace_parse_line(const char *p, size_t n, strace_line *out, int *unsupported_time);

#endif
