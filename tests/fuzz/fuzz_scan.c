/* tests/fuzz/fuzz_scan.c - the input as a whole archive (or a bare trace
 * file), merged end to end: tm_merge_open on a memfd path, then
 * tm_scan_run with a sink that reads every byte of every event and
 * packet it is handed, then every result the scan keeps. The scan runs
 * twice on the same session and both runs must agree (same events, same
 * digest, same outcome), which catches reads of uninitialised state. A
 * third run has no event sink, as every pass but the tests' (the proto
 * scan then places events without making them, scan_place_times): its
 * packets and results must be the same. A fourth has no sink at all, as
 * the scan alone (metadata.json): proto files are then read ahead into
 * logs that carry their TrackEvents' times decoded, and the results must
 * still be the same.
 *
 * Contracts of core/scan/scan.h checked on the way: placed events have ts >= 0
 * and a file id of the session; the event count equals s->events. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fuzz_input.h"
#include "input/merge.h"
#include "formats/registry.h"
#include "scan/scan.h"

typedef struct digest {
	const tm_merge *m;
	uint64_t events, packets, h;
	uint64_t ev_h; /* the events' own digest */
	uint64_t r;    /* the scan result's own digest */
} digest;

static void mix(digest *d, uint64_t v) { d->h = (d->h ^ v) * 1099511628211ULL; }

static void mix_bytes(digest *d, const void *p, size_t n)
{
	const uint8_t *b = p;
	for (size_t i = 0; i < n; i++)
		mix(d, b[i]);
	mix(d, n);
}

static void mix_cstr(digest *d, const char *s)
{
	mix(d, s != NULL);
	if (s)
		mix_bytes(d, s, strlen(s));
}

static void on_event(void *ctx, const tm_event *ev)
{
	digest *all = ctx, e = {.h = all->ev_h}, *d = &e;
	all->events++;
	if (ev->ts < 0 || ev->file_id >= all->m->n_files || (unsigned)ev->kind >= TM_EV_KIND_COUNT) {
		fprintf(stderr, "bad event: ts %lld file %u kind %d\n", (long long)ev->ts, ev->file_id,
			(int)ev->kind);
		abort();
	}
	mix(d, ev->file_id);
	mix(d, ev->machine_row);
	mix(d, (uint64_t)ev->kind);
	mix(d, (uint64_t)ev->ts);
	mix(d, (uint64_t)ev->raw_ts);
	mix(d, (uint64_t)ev->dur);
	mix(d, (uint64_t)ev->pid);
	mix(d, (uint64_t)ev->tid);
	mix(d, ev->name != NULL);
	if (ev->name)
		mix_bytes(d, ev->name, ev->name_len);
	uint64_t bits;
	memcpy(&bits, &ev->value, sizeof bits);
	mix(d, ev->value == ev->value ? bits : 1); /* every NaN alike */
	mix_cstr(d, ev->args);
	mix_cstr(d, tm_ev_kind_names[ev->kind]);
	all->ev_h = e.h;
}

static void on_packet(void *ctx, const tm_packet_out *p)
{
	digest *d = ctx;
	if (p->file_id >= d->m->n_files)
		abort();
	d->packets++;
	mix(d, p->file_id);
	mix(d, p->machine_row);
	mix(d, p->seq_id);
	mix_bytes(d, p->data, p->len);
	mix(d, (uint64_t)p->has_ts);
	if (p->has_ts)
		mix(d, (uint64_t)p->ts);
	for (size_t i = 0; i < p->n_ftrace; i++)
		mix(d, (uint64_t)p->ftrace_ts[i]);
	for (size_t i = 0; i < p->n_switch; i++)
		mix(d, (uint64_t)p->switch_ts[i]);
	for (size_t i = 0; i < p->n_waking; i++)
		mix(d, (uint64_t)p->waking_ts[i]);
}

/* Everything the scan result holds. */
static void mix_result(digest *d, const tm_scan *s)
{
	mix(d, (uint64_t)s->failed);
	if (s->failed) {
		mix(d, (uint64_t)s->err.code);
		mix_cstr(d, s->err.msg);
		mix(d, (uint64_t)s->err_file);
	}
	for (int i = 0; i < TM_STAT_COUNT; i++) {
		mix(d, s->stats[i]);
		mix_cstr(d, tm_stat_names[i]);
	}
	for (size_t i = 0; i < s->n_files; i++) {
		const tm_scan_file *f = &s->files[i];
		mix(d, (uint64_t)f->scanned);
		for (size_t k = 0; k < f->n_machines; k++) {
			if (f->machines[k] >= s->machines.n)
				abort(); /* a file's machine is a row of the table */
			mix(d, f->machines[k]);
		}
		mix(d, (uint64_t)f->clock_override);
		mix(d, f->packets ^ f->events << 1 ^ f->dropped << 2);
		if (f->has_range)
			mix(d, (uint64_t)(f->first_own ^ f->last_own ^ f->first_trace ^ f->last_trace));
		for (int k = 0; k < TM_STAT_COUNT; k++)
			mix(d, tm_scan_file_drops(f, (tm_stat)k));
	}
	for (size_t i = 0; i < s->named.n; i++) {
		const tm_named_stat *e = &s->named.v[i];
		if (e->file_id >= s->n_files || e->machine_row >= s->machines.n)
			abort(); /* a stat of a file and a machine row of the session */
		mix(d, e->file_id ^ (uint64_t)e->machine_row << 32);
		mix(d, (uint64_t)e->idx ^ (uint64_t)e->value << 1);
		mix_cstr(d, e->name);
	}
	for (size_t i = 0; i < s->machines.n; i++) {
		const tm_machine *r = &s->machines.rows[i];
		mix(d, (uint64_t)r->raw_id);
		mix_cstr(d, r->name);
		mix_cstr(d, r->sysname);
		mix_cstr(d, r->release);
		mix_cstr(d, r->version);
		mix_cstr(d, r->arch);
		mix(d, (uint64_t)r->num_cpus ^ (uint64_t)r->has_context << 40);
	}
	for (size_t i = 0; i < s->n_mach; i++) {
		mix(d, s->mach[i].events);
		if (s->mach[i].has_range)
			mix(d, (uint64_t)(s->mach[i].first_trace ^ s->mach[i].last_trace));
	}
	if (s->has_bounds)
		mix(d, (uint64_t)(s->start_ns ^ s->end_ns));
	mix(d, s->events);
	if (s->has_tt_clock_id)
		mix(d, s->tt_clock_id);
	if (s->has_tt_owner)
		mix(d, s->tt_owner_file);
}

/* sinks: 2 events and packets, 1 packets, 0 none */
static void scan_once(tm_merge *m, digest *d, int sinks)
{
	int events = sinks == 2;
	tm_scan_sink sink = {.ctx = d, .event = events ? on_event : NULL, .packet = on_packet};
	tm_scan *s = tm_scan_run(m, sinks ? &sink : NULL);
	if (events && s->events != d->events) {
		fprintf(stderr, "sink saw %llu events, the scan counts %llu\n",
			(unsigned long long)d->events, (unsigned long long)s->events);
		abort();
	}
	mix_result(d, s);
	digest r = {.m = d->m, .h = 14695981039346656037ULL};
	mix_result(&r, s);
	d->r = r.h;
	tm_scan_free(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int fd = fuzz_memfd("fuzz_scan", data, size);
	if (fd < 0)
		return 0;
	char path[64];
	fuzz_fd_path(fd, path);
	tm_error err;
	tm_err_clear(&err);
	tm_merge *m = tm_merge_open(path, &err);
	if (m) {
		digest a = {m, 0, 0, 14695981039346656037ULL, 14695981039346656037ULL, 0}, b = a, c = a, alone = a;
		scan_once(m, &a, 2);
		scan_once(m, &b, 2);
		scan_once(m, &c, 1);
		scan_once(m, &alone, 0);
		if (a.h != b.h || a.ev_h != b.ev_h || a.events != b.events || a.packets != b.packets) {
			fprintf(stderr, "two scans of one session differ: %llu/%llu events, %llu/%llu packets\n",
				(unsigned long long)a.events, (unsigned long long)b.events,
				(unsigned long long)a.packets, (unsigned long long)b.packets);
			abort();
		}
		if (a.h != c.h || a.packets != c.packets) {
			fprintf(stderr, "a scan without an event sink differs: %llu/%llu packets\n",
				(unsigned long long)a.packets, (unsigned long long)c.packets);
			abort();
		}
		if (a.r != alone.r) {
			fprintf(stderr, "the scan alone (no sink) gives other results\n");
			abort();
		}
		tm_merge_free(m);
	}
	close(fd);
	return 0;
}
