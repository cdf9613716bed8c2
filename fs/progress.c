/* fs/progress.c - the scan's progress on a terminal (tracemount(1),
 * "Progress"): bytes read of all, the rate and the file being read, on one
 * line rewritten in place (the tree calls at most about ten times a
 * second), then a summary in the words of the reference's shell:
 * "Trace loaded: 133.2 MB in 0.54s (246 MB/s)". Sizes in MB of 10^6
 * bytes, as there. A generation pass's phases the same way ("tracemount:
 * generating: ordering 1234 of 5678 events (21%)"), then "Generated files
 * built in 7.52s"; the pass of metadata.json's stats as "tracemount:
 * counting stats: ..." and "Stats counted in 1.20s". */
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

static double percent(uint64_t done, uint64_t total)
{
	return done < total ? 100.0 * (double)done / (double)total : 100.0;
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

static const char *pass_name(const vt_progress *p)
{
	return p->stats ? "counting stats" : "generating";
}

/* "\r\033[K" takes the progress line away first; a failed merge or pass
 * has its error said instead of a summary. */
static void summary(const vt_progress *p)
{
	double mb = (double)p->done / 1e6;
	if (p->failed)
		fputs("\r\033[K", stderr);
	else if (p->what != VT_SCAN)
		fprintf(stderr, "\r\033[K%s in %.2fs\n", p->stats ? "Stats counted" : "Generated files built", p->seconds);
	else if (p->from_index)
		fprintf(stderr, "\r\033[KTrace loaded: %.1f MB in %.2fs (from the index)\n", mb, p->seconds);
	else
		fprintf(stderr, "\r\033[KTrace loaded: %.1f MB in %.2fs (%.0f MB/s)\n", mb, p->seconds,
			p->seconds > 0 ? mb / p->seconds : 0);
	fflush(stderr);
}

void front_progress(void *ctx, const vt_progress *p)
{
	(void)ctx;
	if (p->finished) {
		summary(p);
		return;
	}
	char line[512];
	int n;
	if (p->what == VT_GEN_ORDERING || p->what == VT_GEN_WRITING) {
		const char *verb = p->what == VT_GEN_ORDERING ? "ordering" : "writing";
		const char *unit = p->what == VT_GEN_ORDERING ? "events" : "lines";
		unsigned long long done = p->done, total = p->total;
		if (total)
			n = snprintf(line, sizeof line, "tracemount: %s: %s %llu of %llu %s (%.0f%%)", pass_name(p), verb,
				     done, total, unit, percent(p->done, p->total));
		else
			n = snprintf(line, sizeof line, "tracemount: %s: %s %llu %s", pass_name(p), verb, done, unit);
		show(line, n, NULL);
		return;
	}
	/* bytes of trace files: the scan's, or a pass's reading them again */
	const char *what = p->what == VT_SCAN ? "" : p->stats ? "counting stats: reading " : "generating: reading ";
	double mb = (double)p->done / 1e6;
	double rate = p->seconds > 0 ? mb / p->seconds : 0;
	if (p->total)
		n = snprintf(line, sizeof line, "tracemount: %s%.1f of %.1f MB (%.0f%%), %.0f MB/s: ", what, mb,
			     (double)p->total / 1e6, percent(p->done, p->total), rate);
	else
		n = snprintf(line, sizeof line, "tracemount: %s%.1f MB, %.0f MB/s: ", what, mb, rate);
	/* The file's name last, its end kept, cut to the terminal's width. */
	show(line, n, p->file);
}
