/* core/scan/scan_index.c - the scan's results as the index cache keeps them
 * (core/session/index.h): written with core/util/ser.h, read back with every count,
 * row and file id checked, never trusted. */
#include "scan/scan.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/ser.h"

static void save_machines(const tm_machines *t, tm_ser_out *out)
{
	tm_ser_u64(out, t->n);
	for (size_t i = 0; i < t->n; i++) {
		const tm_machine *mc = &t->rows[i];
		tm_ser_i64(out, mc->raw_id);
		tm_ser_str(out, mc->name);
		tm_ser_str(out, mc->sysname);
		tm_ser_str(out, mc->release);
		tm_ser_str(out, mc->version);
		tm_ser_str(out, mc->arch);
		tm_ser_i64(out, mc->num_cpus);
		tm_ser_u8(out, (uint8_t)(mc->has_context != 0));
	}
}

static void load_machines(tm_ser_rd *r, tm_machines *t)
{
	size_t n = tm_ser_count(r, 8, UINT32_MAX); /* a varint or byte per field */
	if (r->bad)
		return;
	t->rows = tm_xcalloc(n ? n : 1, sizeof(*t->rows));
	t->cap = n ? n : 1;
	for (size_t i = 0; i < n && !r->bad; i++) {
		tm_machine *mc = &t->rows[t->n++];
		mc->raw_id = tm_ser_get_i64(r);
		mc->name = tm_ser_get_str(r);
		mc->sysname = tm_ser_get_str(r);
		mc->release = tm_ser_get_str(r);
		mc->version = tm_ser_get_str(r);
		mc->arch = tm_ser_get_str(r);
		mc->num_cpus = tm_ser_get_i64(r);
		mc->has_context = tm_ser_get_u8(r) != 0;
	}
}

static void save_range(tm_ser_out *out, int has, int64_t lo, int64_t hi)
{
	tm_ser_u8(out, (uint8_t)(has != 0));
	tm_ser_i64(out, lo);
	tm_ser_i64(out, hi);
}

static void load_range(tm_ser_rd *r, int *has, int64_t *lo, int64_t *hi)
{
	*has = tm_ser_get_u8(r) != 0;
	*lo = tm_ser_get_i64(r);
	*hi = tm_ser_get_i64(r);
}

void tm_scan_save(const tm_scan *s, tm_ser_out *out)
{
	tm_ser_u8(out, (uint8_t)(s->failed != 0));
	tm_ser_u32(out, (uint32_t)s->err.code);
	tm_ser_str(out, s->err.msg);
	tm_ser_i64(out, s->err_file);
	tm_clocks_save(s->clocks, out);
	save_machines(&s->machines, out);
	tm_ser_u64(out, TM_STAT_COUNT);
	for (int i = 0; i < TM_STAT_COUNT; i++)
		tm_ser_u64(out, s->stats[i]);
	tm_ser_u64(out, s->n_files);
	for (size_t i = 0; i < s->n_files; i++) {
		const tm_scan_file *f = &s->files[i];
		tm_ser_u8(out, (uint8_t)(f->scanned != 0));
		tm_ser_u64(out, f->n_machines);
		for (size_t k = 0; k < f->n_machines; k++)
			tm_ser_u32(out, f->machines[k]);
		tm_ser_u32(out, (uint32_t)f->clock_override);
		tm_ser_u64(out, f->packets);
		tm_ser_u64(out, f->events);
		save_range(out, f->has_range, f->first_own, f->last_own);
		tm_ser_i64(out, f->first_trace);
		tm_ser_i64(out, f->last_trace);
		tm_ser_u64(out, f->dropped);
		tm_ser_u8(out, f->drops != NULL);
		for (int k = 0; f->drops && k < TM_STAT_COUNT; k++)
			tm_ser_u64(out, f->drops[k]);
	}
	tm_ser_u64(out, s->n_mach);
	for (size_t i = 0; i < s->n_mach; i++) {
		tm_ser_u64(out, s->mach[i].events);
		save_range(out, s->mach[i].has_range, s->mach[i].first_trace, s->mach[i].last_trace);
	}
	save_range(out, s->has_bounds, s->start_ns, s->end_ns);
	tm_ser_u64(out, s->events);
	tm_ser_u8(out, (uint8_t)(s->has_tt_clock_id != 0));
	tm_ser_u32(out, s->tt_clock_id);
	tm_clock_node_save(out, s->tt_node);
	tm_ser_u8(out, (uint8_t)(s->has_tt_owner != 0));
	tm_ser_u32(out, s->tt_owner_file);
	tm_ser_u32(out, s->next_queue);
	tm_statlist_save(&s->named, out);
}

/* A file's rows and the machine bookkeeping must name rows of the table,
 * the owner of trace time a file, the error a code: what the views index
 * with. */
static void check(tm_ser_rd *r, const tm_scan *s)
{
	if (s->err.code > TM_EARGS)
		tm_ser_fail(r, "an unknown error code");
	if (s->n_mach != s->machines.n)
		tm_ser_fail(r, "machine rows disagree");
	for (size_t i = 0; i < s->n_files && !r->bad; i++)
		for (size_t k = 0; k < s->files[i].n_machines; k++)
			if (s->files[i].machines[k] >= s->machines.n)
				tm_ser_fail(r, "a file on no machine row");
	if (s->has_tt_owner && s->tt_owner_file >= s->n_files)
		tm_ser_fail(r, "trace time owned by no file");
	for (size_t i = 0; i < s->named.n && !r->bad; i++)
		if (s->named.v[i].file_id >= s->n_files || s->named.v[i].machine_row >= s->machines.n)
			tm_ser_fail(r, "a stat of no file or machine row");
	if (s->machines.n && s->tt_node.machine_row >= s->machines.n)
		tm_ser_fail(r, "trace time on no machine row");
	/* the clock views index by machine row (graph.dot's clusters): a
	 * clock of a row the table has not would size them by its number */
	const tm_clock_graph *g = s->clocks ? tm_clocks_view(s->clocks) : NULL;
	size_t nn = g ? tm_clock_graph_node_count(g) : 0;
	/* trace time is drawn also before anything names it: row 0 then */
	if (g && tm_clock_graph_trace_time(g)->machine_row >= (s->machines.n ? s->machines.n : 1))
		tm_ser_fail(r, "the clock graph's trace time on no machine row");
	for (size_t i = 0; i < nn && !r->bad; i++) {
		tm_clock_node_info ni;
		tm_clock_graph_node_info(g, i, &ni);
		if (ni.node.machine_row >= s->machines.n)
			tm_ser_fail(r, "a clock on no machine row");
	}
	size_t ne = s->clocks ? tm_clocks_ended_count(s->clocks) : 0;
	for (size_t i = 0; i < ne && !r->bad; i++) {
		tm_clock_ended e;
		tm_clocks_ended_at(s->clocks, i, &e);
		if (e.machine_row >= s->machines.n || e.file_id >= s->n_files)
			tm_ser_fail(r, "a file's clocks on no machine row");
	}
	for (size_t f = 0; s->clocks && f < s->n_files && !r->bad; f++) {
		size_t np = 0;
		tm_placement *p = tm_clocks_placement(s->clocks, (uint32_t)f, &np);
		for (size_t k = 0; k < np && !r->bad; k++) {
			int bad = p[k].from.machine_row >= s->machines.n;
			for (int h = 0; h < p[k].n_hops && h < 4; h++)
				bad |= p[k].hops[h].from.machine_row >= s->machines.n ||
				       p[k].hops[h].to.machine_row >= s->machines.n;
			if (bad)
				tm_ser_fail(r, "a file placed on no machine row");
		}
		free(p);
	}
}

tm_scan *tm_scan_load(const void *data, size_t len, size_t n_files, int spend, const char **why)
{
	tm_ser_rd rd = spend ? tm_ser_reader_spending(data, len) : tm_ser_reader(data, len), *r = &rd;
	tm_scan *s = tm_xcalloc(1, sizeof(*s));
	s->failed = tm_ser_get_u8(r) != 0;
	s->err.code = (tm_code)tm_ser_get_u32(r);
	char *msg = tm_ser_get_str(r);
	if (msg) {
		snprintf(s->err.msg, sizeof s->err.msg, "%s", msg);
		free(msg);
	}
	s->err_file = tm_ser_get_i64(r);
	if (!r->bad && !(s->clocks = tm_clocks_load(r)))
		tm_ser_fail(r, "bad clock graph");
	load_machines(r, &s->machines);
	if (tm_ser_get_u64(r) != TM_STAT_COUNT)
		tm_ser_fail(r, "another set of stats");
	for (int i = 0; i < TM_STAT_COUNT; i++)
		s->stats[i] = tm_ser_get_u64(r);
	if (tm_ser_get_u64(r) != n_files)
		tm_ser_fail(r, "another number of files");
	if (!r->bad) {
		s->n_files = n_files;
		s->files = tm_xcalloc(n_files ? n_files : 1, sizeof(*s->files));
	}
	for (size_t i = 0; i < s->n_files && !r->bad; i++) {
		tm_scan_file *f = &s->files[i];
		f->scanned = tm_ser_get_u8(r) != 0;
		size_t nm = tm_ser_count(r, 1, UINT32_MAX);
		if (nm == 1) {
			f->machines = &f->machine0;
		} else if (nm > 1) {
			f->machines = tm_xcalloc(nm, sizeof(*f->machines));
		}
		for (size_t k = 0; k < nm; k++)
			f->machines[k] = tm_ser_get_u32(r);
		f->n_machines = nm;
		f->clock_override = (int)tm_ser_get_u32(r);
		f->packets = tm_ser_get_u64(r);
		f->events = tm_ser_get_u64(r);
		load_range(r, &f->has_range, &f->first_own, &f->last_own);
		f->first_trace = tm_ser_get_i64(r);
		f->last_trace = tm_ser_get_i64(r);
		f->dropped = tm_ser_get_u64(r);
		if (tm_ser_get_u8(r)) {
			f->drops = tm_xcalloc(TM_STAT_COUNT, sizeof(*f->drops));
			for (int k = 0; k < TM_STAT_COUNT; k++)
				f->drops[k] = tm_ser_get_u64(r);
		}
	}
	size_t nm = tm_ser_count(r, 4, UINT32_MAX);
	if (!r->bad) {
		s->n_mach = nm;
		s->mach = tm_xcalloc(nm ? nm : 1, sizeof(*s->mach));
	}
	for (size_t i = 0; i < s->n_mach && !r->bad; i++) {
		s->mach[i].events = tm_ser_get_u64(r);
		load_range(r, &s->mach[i].has_range, &s->mach[i].first_trace, &s->mach[i].last_trace);
	}
	load_range(r, &s->has_bounds, &s->start_ns, &s->end_ns);
	s->events = tm_ser_get_u64(r);
	s->has_tt_clock_id = tm_ser_get_u8(r) != 0;
	s->tt_clock_id = tm_ser_get_u32(r);
	s->tt_node = tm_clock_node_load(r);
	s->has_tt_owner = tm_ser_get_u8(r) != 0;
	s->tt_owner_file = tm_ser_get_u32(r);
	s->next_queue = tm_ser_get_u32(r);
	tm_statlist_load(&s->named, r);
	if (!r->bad && r->left)
		tm_ser_fail(r, "bytes after the results");
	if (!r->bad)
		check(r, s);
	if (r->bad) {
		*why = r->why;
		tm_scan_free(s);
		return NULL;
	}
	return s;
}
