/* core/scan/scan.c - the scan tier: the session (machine rows, manifest edges,
 * trace time, files in processing order, each read by its format's
 * tokenizer: core/formats/<format>/) and the bookkeeping every tokenizer
 * shares.
 */
#include "scan/scan.h"

#include <stdlib.h>
#include <string.h>

#include "scan/scan_internal.h"
#include "util/ahead.h"

const char *const tm_stat_names[TM_STAT_COUNT] = {
	[TM_STAT_NEGATIVE_TS] = "trace_sorter_negative_timestamp_dropped",
	[TM_STAT_TRACK_EVENT_INVALID_TS] = "track_event_invalid_timestamp",
	[TM_STAT_UNRELATABLE] = "clock_sync_unrelatable_clock_domains",
	[TM_STAT_UNKNOWN_SOURCE] = "clock_sync_failure_unknown_source_clock",
	[TM_STAT_UNKNOWN_TARGET] = "clock_sync_failure_unknown_target_clock",
	[TM_STAT_NO_PATH] = "clock_sync_failure_no_path",
	[TM_STAT_UNDEFERRABLE_LOSS] = "clock_sync_failure_undeferrable_packet_loss",
	[TM_STAT_MIXED_SOURCES] = "clock_sync_mixed_clock_sources",
	[TM_STAT_INVALID_SNAPSHOTS] = "invalid_clock_snapshots",
	[TM_STAT_JSON_TOKENIZER_FAILURE] = "json_tokenizer_failure",
	[TM_STAT_JSON_PARSER_FAILURE] = "json_parser_failure",
	[TM_STAT_JSON_DISPLAY_TIME_UNIT] = "json_display_time_unit",
	[TM_STAT_SYSTRACE_PARSE_FAILURE] = "systrace_parse_failure",
	[TM_STAT_SEQ_NEEDS_INCREMENTAL] = "packet_skipped_seq_needs_incremental_state_invalid",
	[TM_STAT_DEFAULTS_NO_SEQ] = "trace_packet_defaults_missing_sequence_id",
	[TM_STAT_INTERNED_NO_SEQ] = "interned_data_missing_sequence_id",
	[TM_STAT_FTRACE_BUNDLE_ERRORS] = "ftrace_bundle_tokenizer_errors",
	[TM_STAT_FTRACE_MISSING_EVENT_ID] = "ftrace_missing_event_id",
	[TM_STAT_COMPACT_SCHED_ERRORS] = "compact_sched_has_parse_errors",
	[TM_STAT_TRACK_EVENT_NO_SEQ] = "track_event_missing_sequence_id",
	[TM_STAT_THREAD_DESCRIPTOR_NO_SEQ] = "thread_descriptor_missing_sequence_id",
	[TM_STAT_CLEARED_NO_SEQ] = "incremental_state_cleared_missing_sequence_id",
	[TM_STAT_DROPPED_NO_SEQ] = "previous_packet_dropped_missing_sequence_id",
};

const char *const tm_ev_kind_names[TM_EV_KIND_COUNT] = {
	[TM_EV_SLICE] = "slice",
	[TM_EV_BEGIN] = "begin",
	[TM_EV_END] = "end",
	[TM_EV_INSTANT] = "instant",
	[TM_EV_COUNTER] = "counter",
	[TM_EV_ASYNC_BEGIN] = "async_begin",
	[TM_EV_ASYNC_END] = "async_end",
	[TM_EV_SCHED] = "sched",
	[TM_EV_FTRACE] = "ftrace",
	[TM_EV_METADATA] = "metadata",
	[TM_EV_PACKET] = "packet",
	[TM_EV_SAMPLE] = "sample",
};

/* ---- shared bookkeeping -------------------------------------------------- */

void scan_sync_machines(scan_ctx *sc)
{
	tm_scan *s = sc->s;
	if (s->n_mach >= s->machines.n)
		return;
	s->mach = tm_xrealloc(s->mach, s->machines.n * sizeof(*s->mach));
	memset(s->mach + s->n_mach, 0, (s->machines.n - s->n_mach) * sizeof(*s->mach));
	s->n_mach = s->machines.n;
}

uint32_t scan_row_for_raw(scan_ctx *sc, int64_t raw)
{
	uint32_t row = tm_machines_get(&sc->s->machines, raw);
	scan_sync_machines(sc);
	return row;
}

int scan_raw_has_context(const scan_ctx *sc, int64_t raw)
{
	return tm_u64map_get(&sc->raw_with_context, (uint64_t)raw) != NULL;
}

void scan_raw_mark(scan_ctx *sc, int64_t raw)
{
	tm_u64map_put(&sc->raw_with_context, (uint64_t)raw, 0);
}

static void file_add_machine(tm_scan_file *out, uint32_t row)
{
	for (size_t i = 0; i < out->n_machines; i++)
		if (out->machines[i] == row)
			return;
	if (!out->n_machines) {
		out->machine0 = row;
		out->machines = &out->machine0;
		out->n_machines = 1;
		return;
	}
	uint32_t *rows = tm_xmalloc((out->n_machines + 1) * sizeof(*rows));
	memcpy(rows, out->machines, out->n_machines * sizeof(*rows));
	if (out->machines != &out->machine0)
		free(out->machines);
	out->machines = rows;
	out->machines[out->n_machines++] = row;
}

tm_clock_tracker *scan_tracker(scan_file *sf, uint32_t row)
{
	scan_ctx *sc = sf->sc;
	tm_clock_tracker *t = tm_clocks_find_tracker(sc->s->clocks, sf->f->id, row);
	if (t)
		return t;
	int64_t raw = sc->s->machines.rows[row].raw_id;
	int primary = !scan_raw_has_context(sc, raw);
	t = tm_clocks_open_tracker(sc->s->clocks, sf->f->id, row, primary);
	scan_raw_mark(sc, raw);
	sc->s->machines.rows[row].has_context = 1;
	file_add_machine(sf->out, row);
	return t;
}

/* A file's drops by stat, allocated with the first. */
static uint64_t *scan_file_drops(tm_scan_file *f)
{
	if (!f->drops)
		f->drops = tm_xcalloc(TM_STAT_COUNT, sizeof(*f->drops));
	return f->drops;
}

void scan_count(scan_file *sf, tm_stat st, int is_drop)
{
	sf->sc->s->stats[st]++;
	scan_file_drops(sf->out)[st]++;
	if (is_drop)
		sf->out->dropped++;
}

void scan_lost(scan_file *sf)
{
	sf->out->dropped++;
}

static void range_add(int *has, int64_t *lo, int64_t *hi, int64_t a, int64_t b)
{
	if (!*has) {
		*has = 1;
		*lo = a;
		*hi = b;
		return;
	}
	if (a < *lo)
		*lo = a;
	if (b > *hi)
		*hi = b;
}

int scan_place_times(scan_file *sf, uint32_t machine_row, int64_t ts, int64_t dur, int64_t raw_ts, tm_stat neg_stat)
{
	scan_ctx *sc = sf->sc;
	tm_scan *s = sc->s;
	if (ts < 0) {
		scan_count(sf, neg_stat, 1);
		return 0;
	}
	int64_t end = ts;
	if (dur > 0 && ts <= INT64_MAX - dur)
		end = ts + dur;
	int64_t raw_end = raw_ts;
	if (dur > 0 && raw_ts >= 0 && raw_ts <= INT64_MAX - dur)
		raw_end = raw_ts + dur;
	tm_scan_file *o = sf->out;
	o->events++;
	int had = o->has_range;
	range_add(&o->has_range, &o->first_trace, &o->last_trace, ts, end);
	range_add(&had, &o->first_own, &o->last_own, raw_ts, raw_end);
	if (s->n_mach < s->machines.n)
		scan_sync_machines(sc);
	if (machine_row < s->n_mach) {
		tm_scan_machine *mm = &s->mach[machine_row];
		mm->events++;
		range_add(&mm->has_range, &mm->first_trace, &mm->last_trace, ts, end);
	}
	range_add(&s->has_bounds, &s->start_ns, &s->end_ns, ts, end);
	s->events++;
	return 1;
}

int scan_place(scan_file *sf, tm_event *ev, tm_stat neg_stat)
{
	ev->file_id = sf->f->id;
	if (!scan_place_times(sf, ev->machine_row, ev->ts, ev->dur, ev->raw_ts, neg_stat))
		return 0;
	const tm_scan_sink *k = sf->sc->sink;
	if (k && k->event)
		k->event(k->ctx, ev);
	return 1;
}

int scan_wants_events(const scan_file *sf)
{
	return sf->sc->sink && sf->sc->sink->event;
}

int scan_wants_packets(const scan_file *sf)
{
	return sf->sc->sink && sf->sc->sink->packet;
}

int scan_wants_args(const scan_file *sf)
{
	return sf->sc->sink && sf->sc->sink->want_args;
}

void scan_emit_packet(scan_file *sf, tm_packet_out *po)
{
	po->file_id = sf->f->id;
	if (scan_wants_packets(sf))
		sf->sc->sink->packet(sf->sc->sink->ctx, po);
}

void scan_emit_name(scan_file *sf, int64_t pid, int64_t tid, const char *name)
{
	const tm_scan_sink *k = sf->sc->sink;
	if (!k || !k->name || !name || !*name)
		return;
	tm_name_out n = {sf->f->id, sf->base_row, pid, tid, name, strlen(name)};
	k->name(k->ctx, &n);
}

/* ---- what every tokenizer shares -------------------------------------------- */

/* Convert a file's own timestamp to trace time for an item the reference
 * pushes to its sorter: 1 with *out (>= 0); 0 when the conversion failed
 * (the tracker counted it) or the result is negative (counted here), so
 * the item is dropped before sorting. */
void scan_place_sample(scan_file *sf, int64_t ts, int64_t raw_ts, int64_t pid, int64_t tid, int32_t cpu,
		       const char *name, size_t name_n)
{
	if (!scan_wants_events(sf)) {
		scan_place_times(sf, sf->base_row, ts, -1, raw_ts, TM_STAT_NEGATIVE_TS);
		return;
	}
	tm_event ev = {0};
	ev.machine_row = sf->base_row;
	ev.kind = TM_EV_SAMPLE;
	ev.ts = ts;
	ev.raw_ts = raw_ts;
	ev.dur = -1;
	ev.pid = pid;
	ev.tid = tid;
	ev.name = name;
	ev.name_len = name_n;
	ev.cpu = cpu;
	scan_place(sf, &ev, TM_STAT_NEGATIVE_TS);
}

#define LINES_CHUNK (256u * 1024u)
#define WHOLE_CHUNK (1u << 20)

int scan_read_whole(tm_cursor *c, tm_buf *doc, tm_error *err)
{
	char *buf = tm_xmalloc(WHOLE_CHUNK);
	ssize_t got;
	while ((got = tm_cursor_read(c, buf, WHOLE_CHUNK, err)) > 0)
		tm_buf_put(doc, buf, (size_t)got);
	free(buf);
	return got < 0 ? -1 : 0;
}

int scan_read_lines(tm_cursor *c, int (*fn)(void *ctx, const char *p, size_t n), void *ctx, tm_buf *rest,
		    tm_error *err)
{
	char *buf = tm_xmalloc(LINES_CHUNK);
	int rc = 0;
	rest->len = 0; /* a line begun in an earlier chunk */
	while (rc == 0) {
		ssize_t got = tm_cursor_read(c, buf, LINES_CHUNK, err);
		if (got <= 0) {
			rc = got < 0 ? -1 : 0;
			break;
		}
		const char *p = buf, *end = buf + got;
		while (rc == 0) {
			const char *nl = memchr(p, '\n', (size_t)(end - p));
			if (!nl) {
				tm_buf_put(rest, p, (size_t)(end - p));
				break;
			}
			if (rest->len) {
				tm_buf_put(rest, p, (size_t)(nl - p));
				rc = fn(ctx, rest->data, rest->len);
				rest->len = 0;
			} else {
				rc = fn(ctx, p, (size_t)(nl - p));
			}
			p = nl + 1;
		}
	}
	free(buf);
	return rc;
}

int scan_convert_time(scan_file *sf, tm_clock_tracker *t, uint32_t clock, int64_t ts, int64_t *out)
{
	if (tm_tracker_to_trace_time(t, clock, 0, ts, 0, out) != TM_CONV_OK) {
		scan_lost(sf);
		return SCAN_TIME_LOST;
	}
	if (*out < 0) {
		scan_count(sf, TM_STAT_NEGATIVE_TS, 1);
		return SCAN_TIME_NEGATIVE;
	}
	return SCAN_TIME_OK;
}

int scan_push_time(scan_file *sf, tm_clock_tracker *t, uint32_t clock, int64_t ts, int64_t *out)
{
	return scan_convert_time(sf, t, clock, ts, out) == SCAN_TIME_OK;
}

int scan_wants_records(const scan_file *sf)
{
	return sf->sc->sink && sf->sc->sink->record;
}

uint32_t scan_intern(scan_file *sf, const char *s, size_t n)
{
	const tm_scan_sink *k = sf->sc->sink;
	return k && k->record && k->intern ? k->intern(k->ctx, s, n) : 0;
}

uint32_t scan_new_queue(scan_file *sf)
{
	return sf->sc->s->next_queue++;
}

void scan_record(scan_file *sf, uint32_t queue, int64_t ts, char phase, int64_t dur, const void *data, size_t len)
{
	if (ts > sf->sc->max_pushed)
		sf->sc->max_pushed = ts;
	if (!scan_wants_records(sf))
		return;
	tm_rec r = {queue, ts, phase, dur, data, len, 0};
	sf->sc->sink->record(sf->sc->sink->ctx, &r);
}

void scan_record_side(scan_file *sf, const void *data, size_t len)
{
	if (!scan_wants_records(sf))
		return;
	tm_rec r = {0, 0, 0, -1, data, len, 1};
	sf->sc->sink->record(sf->sc->sink->ctx, &r);
}

int64_t scan_max_pushed(const scan_file *sf)
{
	return sf->sc->max_pushed;
}

/* Whether the scan reads nothing of a systrace line but its time and
 * bad_print, nor of a JSON event but what JSON_TRACE_TIMES keeps: no
 * records, names or events are wanted (systrace_line, on_json_event), as
 * in the scan alone. */
int scan_reads_times_only(const scan_ctx *sc)
{
	return !sc->sink || (!sc->sink->record && !sc->sink->name && !sc->sink->event);
}

/* What the JSON reader makes for the scan. */
/* ---- config_write_into_file_no_flush ---------------------------------------- */

void scan_service_version(scan_ctx *sc, uint32_t row, int64_t major)
{
	if (row >= sc->n_svc_major) {
		size_t n = row + 1;
		sc->svc_major = tm_xrealloc(sc->svc_major, n * sizeof(*sc->svc_major));
		memset(sc->svc_major + sc->n_svc_major, 0, (n - sc->n_svc_major) * sizeof(*sc->svc_major));
		sc->n_svc_major = n;
	}
	sc->svc_major[row] = major >= 0 ? (uint64_t)major + 1 : 0;
}

/* ProtoTraceReader::OnEventsFullyExtracted: a write_into_file config
 * without flush_period_ms counts, unless its machine's service was v54 or
 * later (it flushes on every write then). */
static void count_no_flush(scan_ctx *sc)
{
	for (size_t i = 0; i < sc->no_flush.n; i++) {
		const tm_named_stat *e = &sc->no_flush.v[i];
		uint64_t v = e->machine_row < sc->n_svc_major ? sc->svc_major[e->machine_row] : 0;
		if (!v || v - 1 < 54)
			tm_statlist_add(&sc->s->named, e->file_id, e->machine_row, e->name, -1, 1);
	}
}

/* ---- progress ------------------------------------------------------------ */

static void report(scan_ctx *sc)
{
	if (sc->sink && sc->sink->progress)
		sc->sink->progress(sc->sink->ctx, &sc->progress);
}

static void on_read(void *ctx, size_t n)
{
	scan_ctx *sc = ctx;
	sc->progress.done += n;
	report(sc);
}

/* A file's cursor, reporting its reads when someone listens. */
static tm_cursor *open_observed(scan_ctx *sc, const tm_file *f, tm_error *err)
{
	tm_cursor *c = tm_cursor_open(f->blob, err);
	if (c && sc->sink && sc->sink->progress) {
		sc->progress.file = f->name ? f->name : sc->m->path;
		report(sc);
		tm_cursor_observe(c, on_read, sc);
	}
	return c;
}

/* ---- files read ahead (core/util/ahead.h) ---------------------------------------- */

/* What a log starts with: whether the file opened, why not, the bytes
 * read; the reader's entries follow from `from`. */
typedef struct ahead_head {
	int opened;      /* else a tm_error follows, or it was abandoned */
	int abandoned;   /* too big a log: the scan reads the file in place */
	uint64_t bytes, from;
} ahead_head;

static void count_read(void *ctx, size_t n)
{
	*(uint64_t *)ctx += n;
}

/* The tokenizer of a type, or NULL. */
static const tm_tokenizer *tokenizer(const scan_ctx *sc, tm_type t)
{
	return sc->tok(t);
}

/* Runs on either thread: reads only the merge's files and the sink's
 * wishes, which nobody changes during the scan. */
static void read_ahead(void *ctx, size_t i, tm_buf *log)
{
	const scan_ctx *sc = ctx;
	const tm_file *f = &sc->m->files[sc->m->order[i]];
	ahead_head h;
	memset(&h, 0, sizeof h);
	size_t at = tm_log_reserve(log, sizeof h);
	tm_error err;
	tm_cursor *c = tm_cursor_open(f->blob, &err);
	if (!c)
		tm_buf_put(log, &err, sizeof err);
	if (c) {
		h.opened = 1;
		h.from = log->len;
		tm_cursor_observe(c, count_read, &h.bytes);
		if (tokenizer(sc, f->type)->log(sc, c, tm_blob_size(f->blob), log) != 0) {
			/* read in place after all: the log's memory goes now */
			h.opened = 0;
			h.abandoned = 1;
			tm_buf_free(log);
			at = tm_log_reserve(log, sizeof h);
		}
		tm_cursor_close(c);
	}
	memcpy(log->data + at, &h, sizeof h);
}

/* The files small enough to read ahead whose tokenizer wants it, by their
 * place in the processing order; NULL when none are read ahead. */
static tm_ahead *start_ahead(scan_ctx *sc)
{
	const tm_merge *m = sc->m;
	uint64_t *cost = tm_xcalloc(m->n_order ? m->n_order : 1, sizeof *cost);
	for (size_t i = 0; i < m->n_order; i++) {
		const tm_file *f = &m->files[m->order[i]];
		const tm_tokenizer *tk = tokenizer(sc, f->type);
		int64_t size = f->blob ? tm_blob_size(f->blob) : -1;
		if (!tk || !tk->read || !tk->ahead_cost || !tk->log || size <= 0 ||
		    size > (int64_t)TM_AHEAD_MAX_FILE)
			continue;
		uint64_t c = tk->ahead_cost(sc, size);
		if (c)
			cost[i] = c + TM_AHEAD_ITEM_COST;
	}
	tm_ahead *a = tm_ahead_start(m->n_order, cost, read_ahead, sc);
	free(cost);
	return a;
}

/* A file read ahead, replayed into the scan. */
static int scan_logged(scan_file *sf, tm_clock_tracker *t, tm_buf *log, tm_error *err)
{
	scan_ctx *sc = sf->sc;
	ahead_head h;
	memcpy(&h, log->data + TM_LOG_FIRST, sizeof h);
	if (h.abandoned)
		return 1;
	if (!h.opened) {
		memcpy(err, log->data + TM_LOG_FIRST + sizeof h, sizeof *err);
		return -1;
	}
	if (sc->sink && sc->sink->progress) {
		sc->progress.file = sf->f->name ? sf->f->name : sc->m->path;
		report(sc);
	}
	int rc = tokenizer(sc, sf->f->type)->read(sf, t, NULL, log, h.from, err);
	if (sc->sink && sc->sink->progress && h.bytes)
		on_read(sc, h.bytes);
	return rc;
}

/* `at`: the file's place in the processing order. */
static int scan_one(scan_ctx *sc, const tm_file *f, size_t at, tm_error *err)
{
	tm_scan *s = sc->s;
	tm_manifest *man = sc->m->manifest;
	scan_file sf = {sc, f, &s->files[f->id], -1, TM_RAW_HOST, 0};
	sf.out->scanned = 1;
	if (man && f->entry >= 0) {
		sf.entry = f->entry;
		sf.base_raw = tm_manifest_entry_base_raw_id(man, (size_t)f->entry);
		const tm_mf_clocks *ck = man->files[f->entry].clocks;
		if (ck)
			sf.out->clock_override = ck->clock ? 1 : 2;
	}
	/* machines.md §2-§3: the file's context on its base machine exists
	 * from the start. */
	sf.base_row = scan_row_for_raw(sc, sf.base_raw);
	tm_clock_tracker *t = scan_tracker(&sf, sf.base_row);

	const tm_tokenizer *tk = tokenizer(sc, f->type);
	if (!tk)
		return 0;
	if (tk->clock) {
		tm_tracker_set_default_clock(t, tk->clock);
		tm_tracker_set_sync_clock(t, tk->clock);
		tm_tracker_claim(t, tk->clock);
	} else if (tk->sync_clock) {
		tm_tracker_set_sync_clock(t, tk->sync_clock);
	}
	if (!tk->read)
		return 0; /* claims and bridges like the reference, events not read */
	tm_buf *log = tm_ahead_take(sc->ahead, at);
	int rc = log ? scan_logged(&sf, t, log, err) : 1;
	if (log)
		tm_ahead_done(sc->ahead, at);
	if (rc != 1)
		return rc;
	tm_cursor *c = open_observed(sc, f, err);
	if (!c)
		return -1;
	rc = tk->read(&sf, t, c, NULL, 0, err);
	tm_cursor_close(c);
	return rc;
}

static int64_t file_of_entry(const tm_merge *m, size_t entry)
{
	for (size_t i = 0; i < m->n_files; i++)
		if (m->files[i].entry == (int32_t)entry && m->files[i].name)
			return (int64_t)i;
	return 0;
}

/* manifest.md §6 step 7, clocks.md §3.1 and §5.2: rows, edges, claim. */
static int apply_plan(scan_ctx *sc, tm_error *err)
{
	const tm_mf_plan *p = sc->plan;
	tm_scan *s = sc->s;
	for (size_t i = 0; i < p->n_rows; i++)
		tm_machines_add(&s->machines, p->rows[i].raw_id, p->rows[i].name);
	scan_sync_machines(sc);
	for (size_t i = 0; i < p->n_edges; i++) {
		const tm_mf_edge *e = &p->edges[i];
		tm_clock_reading r[2] = {
			{e->src, (uint64_t)e->src_ts, 1, 0},
			{e->ref, (uint64_t)e->ref_ts, 1, 0},
		};
		int64_t fid = file_of_entry(sc->m, e->file_index);
		if (tm_clocks_add_snapshot(s->clocks, r, 2, TM_CLOCK_ORIGIN_MANIFEST, (uint32_t)fid,
					   e->src.machine_row, err) < 0)
			return -1;
	}
	if (p->has_trace_time)
		tm_clocks_claim(s->clocks, p->trace_time,
				(uint32_t)(sc->m->manifest_file >= 0 ? sc->m->manifest_file : 0));
	return 0;
}

/* The clock module counts per-conversion failures on its trackers; fold
 * them into the files' drops and the totals, then let the trackers go: a
 * tracker serves only the file it was opened for, so each file's are
 * folded and freed when it is read (an archive may hold 100,000 files). */
static void fold_tracker_stats(tm_scan *s)
{
	static const tm_stat map[TM_CLOCK_STAT_COUNT] = {
		[TM_CLOCK_STAT_INVALID_SNAPSHOTS] = TM_STAT_INVALID_SNAPSHOTS,
		[TM_CLOCK_STAT_UNKNOWN_SOURCE] = TM_STAT_UNKNOWN_SOURCE,
		[TM_CLOCK_STAT_UNKNOWN_TARGET] = TM_STAT_UNKNOWN_TARGET,
		[TM_CLOCK_STAT_NO_PATH] = TM_STAT_NO_PATH,
		[TM_CLOCK_STAT_UNRELATABLE] = TM_STAT_UNRELATABLE,
		[TM_CLOCK_STAT_MIXED_SOURCES] = TM_STAT_MIXED_SOURCES,
	};
	size_t n = tm_clocks_tracker_count(s->clocks);
	for (size_t i = 0; i < n; i++) {
		tm_clock_tracker *t = tm_clocks_tracker_at(s->clocks, i);
		tm_clock_stats st;
		tm_tracker_stats(t, &st);
		uint32_t fid = tm_tracker_file(t);
		for (int k = 0; k < TM_CLOCK_STAT_COUNT; k++) {
			if (k == TM_CLOCK_STAT_INVALID_SNAPSHOTS || !st.n[k])
				continue;
			s->stats[map[k]] += st.n[k];
			if (fid < s->n_files)
				scan_file_drops(&s->files[fid])[map[k]] += st.n[k];
		}
	}
	tm_clocks_end_trackers(s->clocks);
}

/* invalid_clock_snapshots is the graph's, not a tracker's. */
static void collect_clock_stats(tm_scan *s)
{
	fold_tracker_stats(s);
	tm_clock_stats all;
	tm_clocks_stats(s->clocks, &all);
	s->stats[TM_STAT_INVALID_SNAPSHOTS] = all.n[TM_CLOCK_STAT_INVALID_SNAPSHOTS];
}

tm_scan *tm_scan_run_with(tm_merge *m, const tm_scan_sink *sink, const tm_tokenizer *(*tokenizer_of)(tm_type t))
{
	tm_scan *s = tm_xcalloc(1, sizeof(*s));
	s->err_file = -1;
	s->clocks = tm_clocks_new();
	s->n_files = m->n_files;
	s->files = tm_xcalloc(m->n_files ? m->n_files : 1, sizeof(*s->files));
	scan_ctx sc = {.tok = tokenizer_of, .m = m, .s = s, .sink = sink, .plan = m->plan};
	tm_error err = {0};
	for (size_t i = 0; sink && sink->progress && i < m->n_order; i++) {
		const tm_file *f = &m->files[m->order[i]];
		int64_t size = f->blob ? tm_blob_size(f->blob) : -1;
		const tm_tokenizer *tk = tokenizer(&sc, f->type);
		if (tk && tk->read && size > 0) /* the formats scan_one reads */
			sc.progress.total += (uint64_t)size;
	}
	size_t n_trace = 0;
	for (size_t i = 0; i < m->n_order; i++) {
		const tm_file *f = &m->files[m->order[i]];
		n_trace += tm_type_is_trace(f->type) && f->blob;
	}
	tm_clocks_reserve(s->clocks, n_trace); /* 100,000 small files: one clock each */
	if (sc.plan && apply_plan(&sc, &err) != 0) {
		s->failed = 1;
		s->err = err;
		s->err_file = m->manifest_file;
	}
	/* issue 10: the second core reads the next JSON and systrace files */
	if (!s->failed)
		sc.ahead = start_ahead(&sc);
	for (size_t i = 0; !s->failed && i < m->n_order; i++) {
		const tm_file *f = &m->files[m->order[i]];
		if (!tm_type_is_trace(f->type) || !f->blob)
			continue;
		tm_err_clear(&err);
		if (tm_stopped(&err) != 0 || scan_one(&sc, f, i, &err) != 0) {
			/* a stop that a reader met as a failed read (the cursors
			 * look at it): whatever that reader made of it, the scan
			 * was interrupted, and no index may keep it as the input's
			 * fault */
			tm_stopped(&err);
			s->failed = 1;
			if (err.code == TM_OK)
				tm_err(&err, TM_EIO, "%s: read failed", f->name ? f->name : m->path);
			s->err = err;
			s->err_file = f->id;
		}
		fold_tracker_stats(s);
	}
	tm_ahead_stop(sc.ahead);
	if (!s->failed)
		count_no_flush(&sc);
	tm_statlist_free(&sc.no_flush);
	free(sc.svc_major);
	collect_clock_stats(s);
	scan_sync_machines(&sc);
	sc.progress.file = NULL;
	report(&sc);
	s->tt_node = tm_clocks_trace_time(s->clocks);
	s->has_tt_clock_id = tm_clocks_trace_time_clock_id(s->clocks, &s->tt_clock_id);
	s->has_tt_owner = tm_clocks_owner(s->clocks, &s->tt_owner_file);
	/* the paths found for the files' conversions: 2 MB for the proto
	 * bench's 190 machines, held for as long as the scan is (the whole
	 * generation pass, and a mount) */
	tm_clocks_trim(s->clocks);
	tm_u64map_free(&sc.raw_with_context);
	return s;
}

void tm_scan_free(tm_scan *s)
{
	if (!s)
		return;
	tm_clocks_free(s->clocks);
	tm_machines_free(&s->machines);
	for (size_t i = 0; i < s->n_files; i++) {
		if (s->files[i].machines != &s->files[i].machine0)
			free(s->files[i].machines);
		free(s->files[i].drops);
	}
	free(s->files);
	free(s->mach);
	tm_statlist_free(&s->named);
	free(s);
}

const tm_mf_row *tm_scan_fixed_rows(const tm_merge *m, size_t *n)
{
	const tm_mf_plan *p = m->plan;
	*n = 0;
	if (!p || !m->manifest)
		return NULL;
	for (size_t i = 0; i < m->n_order; i++) {
		const tm_file *f = &m->files[m->order[i]];
		if (!tm_type_is_trace(f->type) || !f->blob)
			continue;
		if (f->entry < 0 || tm_manifest_entry_base_raw_id(m->manifest, (size_t)f->entry) == TM_RAW_HOST)
			return NULL;
	}
	*n = p->n_rows;
	return p->rows;
}

int tm_scan_file_on_row(const tm_scan *s, size_t fid, uint32_t row)
{
	if (fid >= s->n_files)
		return 0;
	const tm_scan_file *sf = &s->files[fid];
	for (size_t k = 0; k < sf->n_machines; k++)
		if (sf->machines[k] == row)
			return 1;
	return 0;
}

void tm_scan_row_files(const tm_scan *s, tm_row_files *out)
{
	size_t nr = s->machines.n, total = 0;
	out->first = tm_xcalloc(nr + 1, sizeof(*out->first));
	for (size_t i = 0; i < s->n_files; i++)
		for (size_t k = 0; k < s->files[i].n_machines; k++)
			if (s->files[i].machines[k] < nr) {
				out->first[s->files[i].machines[k] + 1]++;
				total++;
			}
	for (size_t r = 0; r < nr; r++)
		out->first[r + 1] += out->first[r];
	out->files = tm_xcalloc(total ? total : 1, sizeof(*out->files));
	size_t *at = tm_xcalloc(nr ? nr : 1, sizeof(*at));
	for (size_t i = 0; i < s->n_files; i++)
		for (size_t k = 0; k < s->files[i].n_machines; k++) {
			uint32_t r = s->files[i].machines[k];
			if (r >= nr)
				continue;
			size_t j = out->first[r] + at[r];
			if (at[r] && out->files[j - 1] == (uint32_t)i)
				continue; /* a row listed twice for the file */
			out->files[j] = (uint32_t)i;
			at[r]++;
		}
	/* Rows that skipped a repeat end early: close the gaps. */
	size_t w = 0;
	for (size_t r = 0; r < nr; r++) {
		size_t start = out->first[r], n = at[r];
		memmove(out->files + w, out->files + start, n * sizeof(*out->files));
		out->first[r] = w;
		w += n;
	}
	out->first[nr] = w;
	free(at);
}

void tm_row_files_free(tm_row_files *rf)
{
	free(rf->first);
	free(rf->files);
	rf->first = NULL;
	rf->files = NULL;
}
