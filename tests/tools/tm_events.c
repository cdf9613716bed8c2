/* tests/tools/tm_events.c - run the scan over an archive and print every
 * placed event as one JSON line, then a summary line. The conformance
 * tests query it with jq (tests/t_conformance.sh, "events" lines).
 *
 *   tm_events ARCHIVE
 *
 * Event lines: {"file","file_id","machine","machine_row","raw_id","kind",
 * "name","ts","raw_ts","dur","pid","tid","value"}; machine names are the
 * final ones (a SystemInfo later in the file renames its machine), so the
 * events are kept until the scan ends. Last line: {"summary": {"status",
 * "error","trace_time_clock_id","stats","machines"}}. Exit status 0, or 1
 * when the archive does not mount (the error on stderr).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "input/merge.h"
#include "formats/registry.h"
#include "scan/scan.h"
#include "util/tm.h"

typedef struct rec {
	tm_event ev;
	char *name; /* copy */
} rec;

typedef struct recs {
	rec *v;
	size_t n, cap;
} recs;

static void on_event(void *ctx, const tm_event *ev)
{
	recs *r = ctx;
	TM_GROW(r->v, r->cap, r->n + 1);
	rec *x = &r->v[r->n++];
	x->ev = *ev;
	x->name = ev->name ? tm_xstrndup(ev->name, ev->name_len) : NULL;
	x->ev.name = NULL;
	x->ev.args = NULL;
}

static void put_str(const char *s, size_t n)
{
	if (!s) {
		fputs("null", stdout);
		return;
	}
	putchar('"');
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c == '"' || c == '\\')
			printf("\\%c", c);
		else if (c < 0x20)
			printf("\\u%04x", c);
		else
			putchar(c);
	}
	putchar('"');
}

static void put_cstr(const char *s)
{
	put_str(s, s ? strlen(s) : 0);
}

static void put_opt(int64_t v)
{
	if (v < 0)
		fputs("null", stdout);
	else
		printf("%" PRId64, v);
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: tm_events ARCHIVE\n");
		return 2;
	}
	tm_error err = {0};
	tm_merge *m = tm_merge_open(argv[1], &err);
	if (!m) {
		fprintf(stderr, "%s\n", err.msg);
		return 1;
	}
	recs r = {0};
	tm_scan_sink sink = {.ctx = &r, .event = on_event};
	tm_scan *s = tm_scan_run(m, &sink);
	for (size_t i = 0; i < r.n; i++) {
		const tm_event *e = &r.v[i].ev;
		const tm_machine *mc = e->machine_row < s->machines.n ? &s->machines.rows[e->machine_row] : NULL;
		fputs("{\"file\":", stdout);
		put_cstr(m->files[e->file_id].name);
		printf(",\"file_id\":%u,\"machine\":", e->file_id);
		put_cstr(mc ? mc->name : NULL);
		printf(",\"machine_row\":%u,\"raw_id\":%" PRId64 ",\"kind\":\"%s\",\"name\":", e->machine_row,
		       mc ? mc->raw_id : -1, tm_ev_kind_names[e->kind]);
		put_str(r.v[i].name, r.v[i].name ? e->name_len : 0);
		printf(",\"ts\":%" PRId64 ",\"raw_ts\":%" PRId64 ",\"dur\":", e->ts, e->raw_ts);
		put_opt(e->dur);
		fputs(",\"pid\":", stdout);
		put_opt(e->pid);
		fputs(",\"tid\":", stdout);
		put_opt(e->tid);
		printf(",\"value\":%.17g}\n", e->value);
		free(r.v[i].name);
	}
	free(r.v);
	printf("{\"summary\":{\"status\":\"%s\",\"error\":", s->failed ? "error" : "ok");
	put_cstr(s->failed ? s->err.msg : NULL);
	fputs(",\"trace_time_clock_id\":", stdout);
	if (s->has_tt_clock_id)
		printf("%u", s->tt_clock_id);
	else
		fputs("null", stdout);
	fputs(",\"stats\":{", stdout);
	for (int i = 0; i < TM_STAT_COUNT; i++)
		printf("%s\"%s\":%" PRIu64, i ? "," : "", tm_stat_names[i], s->stats[i]);
	fputs("},\"machines\":[", stdout);
	for (size_t i = 0; i < s->machines.n; i++) {
		const tm_machine *mc = &s->machines.rows[i];
		printf("%s{\"id\":%zu,\"raw_id\":%" PRId64 ",\"name\":", i ? "," : "", i, mc->raw_id);
		put_cstr(mc->name);
		printf(",\"label_index\":%u}", tm_machines_label_index(&s->machines, (uint32_t)i));
	}
	fputs("]}}\n", stdout);
	tm_scan_free(s);
	tm_merge_free(m);
	return 0;
}
