/* tests/tools/tm_scan.c - run the scan tier over an archive with a sink
 * that keeps nothing (it counts events and folds their fields into a
 * digest), then print one summary line. The benchmark (tests/bench/
 * bench_scan.sh) times it; it is the scan alone, without rendering.
 *
 *   tm_scan ARCHIVE
 *
 * Output: "events=N packets=N files=N digest=HEX status=ok|error" plus
 * every non-zero stat as name=N, then the error text when the merge
 * failed. Exit status 0 when the scan ran (whatever it found), 1 when the
 * archive does not mount.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "input/merge.h"
#include "formats/registry.h"
#include "scan/scan.h"
#include "util/tm.h"

typedef struct tally {
	uint64_t n, h;
} tally;

static void on_event(void *ctx, const tm_event *ev)
{
	tally *t = ctx;
	uint64_t h = t->h;
	h = (h ^ (uint64_t)ev->ts) * 1099511628211ULL;
	h = (h ^ (uint64_t)ev->kind ^ (uint64_t)ev->tid << 8) * 1099511628211ULL;
	if (ev->name && ev->name_len)
		h = (h ^ (uint8_t)ev->name[0] ^ (uint64_t)ev->name_len << 8) * 1099511628211ULL;
	t->h = h;
	t->n++;
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: tm_scan ARCHIVE\n");
		return 2;
	}
	tm_error err = {0};
	tm_merge *m = tm_merge_open(argv[1], &err);
	if (!m) {
		fprintf(stderr, "tm_scan: %s\n", err.msg);
		return 1;
	}
	tally t = {0, 14695981039346656037ULL};
	tm_scan_sink sink = {.ctx = &t, .event = on_event};
	tm_scan *s = tm_scan_run(m, &sink);
	uint64_t packets = 0;
	size_t scanned = 0;
	for (size_t i = 0; i < s->n_files; i++) {
		packets += s->files[i].packets;
		scanned += s->files[i].scanned != 0;
	}
	printf("events=%" PRIu64 " placed=%" PRIu64 " packets=%" PRIu64 " files=%zu digest=%016" PRIx64
	       " status=%s",
	       t.n, s->events, packets, scanned, t.h, s->failed ? "error" : "ok");
	for (int i = 0; i < TM_STAT_COUNT; i++)
		if (s->stats[i])
			printf(" %s=%" PRIu64, tm_stat_names[i], s->stats[i]);
	if (s->failed)
		printf(" error=\"%s\"", s->err.msg);
	putchar('\n');
	tm_scan_free(s);
	tm_merge_free(m);
	return 0;
}
