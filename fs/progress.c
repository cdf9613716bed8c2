/* fs/progress.c - the scan's progress on a terminal (tracemount(1),
 * "Progress"): bytes read of all, the rate and the file being read, on one
 * line rewritten in place (the tree calls at most about ten times a
 * second), then a summary in the words of the reference's shell:
 * "Trace loaded: 133.2 MB in 0.54s (246 MB/s)". Sizes in MB of 10^6
 * bytes, as there. A generation pass's phases the same way ("tracemount:
 * generating: ordering 1234 of 5678 events (21%)"), then "Generated files
 * built in 7.52s". */
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

/* "N of M UNIT (P%)", or "N UNIT" when M is not known. */
static int count_of(char *out, size_t n, uint64_t done, uint64_t total, const char *unit)
{
	if (!total)
		return snprintf(out, n, "%llu %s", (unsigned long long)done, unit);
	return snprintf(out, n, "%llu of %llu %s (%.0f%%)", (unsigned long long)done, (unsigned long long)total,
			unit, done < total ? 100.0 * (double)done / (double)total : 100.0);
}

/* The line, cut to the terminal's width keeping the file's name's end. */
static void show(const char *line, int n, const char *file)
{
	size_t room = columns() - 1, used = n < 0 ? 0 : (size_t)n < room ? (size_t)n : room;
	file = file ? file : "";
	size_t len = strlen(file);
	if (len > room - used)
		file += len - (room - used);
	fprintf(stderr, "\r\033[K%.*s%s", (int)used, line, file);
	fflush(stderr);
}

static void generating(const vt_progress *p)
{
	if (p->finished) {
		if (p->failed) /* the daemon says why on its own line */
			fputs("\r\033[K", stderr);
		else
			fprintf(stderr, "\r\033[KGenerated files built in %.2fs\n", p->seconds);
		fflush(stderr);
		return;
	}
	char line[512], count[160];
	int n;
	if (p->what == VT_GEN_READING) {
		double mb = (double)p->done / 1e6;
		double rate = p->seconds > 0 ? mb / p->seconds : 0;
		if (p->total)
			snprintf(count, sizeof count, "%.1f of %.1f MB (%.0f%%), %.0f MB/s: ", mb,
				 (double)p->total / 1e6,
				 p->done < p->total ? 100.0 * (double)p->done / (double)p->total : 100.0, rate);
		else
			snprintf(count, sizeof count, "%.1f MB, %.0f MB/s: ", mb, rate);
		n = snprintf(line, sizeof line, "tracemount: generating: reading %s", count);
		show(line, n, p->file);
		return;
	}
	count_of(count, sizeof count, p->done, p->total, p->what == VT_GEN_ORDERING ? "events" : "lines");
	n = snprintf(line, sizeof line, "tracemount: generating: %s %s", p->what == VT_GEN_ORDERING ? "ordering" : "writing",
		     count);
	show(line, n, NULL);
}

void front_progress(void *ctx, const vt_progress *p)
{
	(void)ctx;
	if (p->what != VT_SCAN) {
		generating(p);
		return;
	}
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
	show(line, n, p->file);
}
