/* fs/progress.c - the scan's progress on a terminal (tracemount(1),
 * "Progress"): bytes read of all, the rate and the file being read, on one
 * line rewritten in place (the tree calls at most about ten times a
 * second), then a summary in the words of the reference's shell:
 * "Trace loaded: 133.2 MB in 0.54s (246 MB/s)". Sizes in MB of 10^6
 * bytes, as there. */
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "front.h"

static unsigned columns(void)
{
	struct winsize ws;
	if (ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col >= 20)
		return ws.ws_col;
	return 80;
}

void front_progress(void *ctx, const vt_progress *p)
{
	(void)ctx;
	double mb = (double)p->done / 1e6;
	double rate = p->seconds > 0 ? mb / p->seconds : 0;
	if (p->finished) {
		/* "\r\033[K" takes the progress line away first; a failed merge
		 * has its error said instead. */
		if (p->failed)
			fputs("\r\033[K", stderr);
		else if (p->from_index)
			fprintf(stderr, "\r\033[KTrace loaded: %.1f MB in %.2fs (from the index)\n", mb, p->seconds);
		else
			fprintf(stderr, "\r\033[KTrace loaded: %.1f MB in %.2fs (%.0f MB/s)\n", mb, p->seconds, rate);
		fflush(stderr);
		return;
	}
	char line[512];
	int n;
	if (p->total)
		n = snprintf(line, sizeof line, "tracemount: %.1f of %.1f MB (%.0f%%), %.0f MB/s: ", mb,
			     (double)p->total / 1e6, p->done < p->total ? 100.0 * (double)p->done / (double)p->total : 100.0,
			     rate);
	else
		n = snprintf(line, sizeof line, "tracemount: %.1f MB, %.0f MB/s: ", mb, rate);
	/* The file's name last, its end kept, cut to the terminal's width. */
	size_t room = columns() - 1, used = (size_t)n < room ? (size_t)n : room;
	const char *file = p->file ? p->file : "";
	size_t len = strlen(file);
	if (len > room - used)
		file += len - (room - used);
	fprintf(stderr, "\r\033[K%.*s%s", (int)used, line, file);
	fflush(stderr);
}
