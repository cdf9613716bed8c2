/* core/clock/clock.c - spec/clocks.md §5-§8 and §10 (trace time, claims,
 * trackers, file tags, REALTIME twins, the one-shot bridge, stats),
 * spec/machines.md §8 (remote_clock_sync offsets) and the clocks/ views,
 * on top of the graph of core/clock/clock_graph.c. */
#include "clock/clock.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/hash.h"
#include "util/ser.h"

/* machines.md §8: client BOOTTIME readings this far apart (unsigned
 * difference) belong to different sync sessions. */
#define SYNC_INTERVAL_NS UINT64_C(30000000000)

const char *const tm_clock_stat_names[TM_CLOCK_STAT_COUNT] = {
	[TM_CLOCK_STAT_INVALID_SNAPSHOTS] = "invalid_clock_snapshots",
	[TM_CLOCK_STAT_UNKNOWN_SOURCE] = "clock_sync_failure_unknown_source_clock",
	[TM_CLOCK_STAT_UNKNOWN_TARGET] = "clock_sync_failure_unknown_target_clock",
	[TM_CLOCK_STAT_NO_PATH] = "clock_sync_failure_no_path",
	[TM_CLOCK_STAT_UNRELATABLE] = "clock_sync_unrelatable_clock_domains",
	[TM_CLOCK_STAT_MIXED_SOURCES] = "clock_sync_mixed_clock_sources",
};

/* §4.5: the stat a failed conversion counts. */
static const int conv_stat[] = {
	[TM_CONV_UNKNOWN_SOURCE] = TM_CLOCK_STAT_UNKNOWN_SOURCE,
	[TM_CONV_UNKNOWN_TARGET] = TM_CLOCK_STAT_UNKNOWN_TARGET,
	[TM_CONV_NO_PATH] = TM_CLOCK_STAT_NO_PATH,
};

/* A tracker's memory of one conversion through the graph. */
typedef struct tracker_again {
	uint32_t clock_id, seq_id, file_tag;
	size_t src; /* index in the tracker's src */
	tm_clock_node dst;
	tm_conv_memo m;
} tracker_again;

struct tm_clock_tracker {
	tm_clocks *ctx;
	uint32_t file_id, machine_row;
	uint32_t file_tag;      /* §8.1 */
	uint8_t primary;
	uint8_t has_default;
	uint8_t bridge_armed;   /* §7 runs once, at the next conversion */
	uint8_t clock_override; /* §9.3 */
	uint8_t unrelatable;
	uint32_t default_clock;
	uint32_t sync_clock;    /* D */
	uint32_t unrelatable_src, unrelatable_dst;
	uint64_t conversions;   /* attempts, §5.2 */
	uint64_t mixed_conversions;
	tm_clock_stats stats;
	tm_clock_source *src;   /* the views' record of source clocks */
	size_t n_src, cap_src;
	uint32_t *src_index;    /* open addressing: index + 1 */
	size_t src_index_cap;
	size_t last_src;        /* index + 1 of the last one used */
	/* the last conversions that went through the graph, for the next of
	 * the same clock (tm_clock_graph_convert_again): packets of a few
	 * sequences interleave, each on a clock of its own */
	tracker_again again[8];
};

typedef struct ended_rec {
	uint32_t file_id, machine_row;
	uint32_t first, n;  /* in ended_src */
	uint32_t next;      /* the file's next record + 1, 0: none */
} ended_rec;

struct tm_clocks;
static void keep_ended(struct tm_clocks *c, uint32_t file_id, uint32_t machine_row, const tm_clock_source *src,
		       size_t n);

struct tm_clocks {
	tm_clock_graph *g;
	int has_owner;
	uint32_t owner_file;
	int has_clock_id;
	uint32_t clock_id;
	tm_clock_tracker **trackers;
	size_t n_trackers, cap_trackers;
	/* (file, machine) -> tracker, open addressing (index + 1, 0 = empty):
	 * an archive of many files has a tracker per file. */
	uint32_t *tracker_ix;
	size_t tracker_ix_cap;
	/* What ended trackers leave for the views (tm_clocks_end_trackers):
	 * per tracker that read a clock, its file, machine and sources, in
	 * creation order; and file id -> its first such record (index + 1,
	 * open addressing), the others chained by `next`. */
	ended_rec *ended;
	size_t n_ended, cap_ended;
	tm_clock_source *ended_src;
	size_t n_ended_src, cap_ended_src;
	uint32_t *ended_ix;
	size_t ended_ix_cap;
};

/* Field by field here, not through tm_clock_node_cmp: it runs for every
 * timestamp of the archive (a call per conversion was 1.3% of the proto
 * scan's first thread, callgrind). */
static inline int node_eq(tm_clock_node a, tm_clock_node b)
{
	return a.clock_id == b.clock_id && a.seq_id == b.seq_id && a.file_id == b.file_id &&
	       a.machine_row == b.machine_row;
}

/* ---- context ----------------------------------------------------------- */

tm_clocks *tm_clocks_new(void)
{
	tm_clocks *c = tm_xcalloc(1, sizeof(*c));
	c->g = tm_clock_graph_new();
	return c;
}

/* Room for the ended trackers of n_files more files with a source each,
 * exactly: doubling would leave up to half of it unused. */
static void reserve_ended(tm_clocks *c, size_t n_files)
{
	TM_RESERVE(c->ended, c->cap_ended, c->n_ended + n_files);
	TM_RESERVE(c->ended_src, c->cap_ended_src, c->n_ended_src + n_files);
}

void tm_clocks_reserve(tm_clocks *c, size_t n_files)
{
	tm_clock_graph_reserve(c->g, n_files);
	reserve_ended(c, n_files);
}

void tm_clocks_trim(tm_clocks *c)
{
	tm_clock_graph_trim(c->g);
}

void tm_clocks_free(tm_clocks *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->n_trackers; i++) {
		free(c->trackers[i]->src);
		free(c->trackers[i]->src_index);
		free(c->trackers[i]);
	}
	free(c->trackers);
	free(c->tracker_ix);
	free(c->ended);
	free(c->ended_src);
	free(c->ended_ix);
	tm_clock_graph_free(c->g);
	free(c);
}

const tm_clock_graph *tm_clocks_view(const tm_clocks *c)
{
	return c->g;
}

int64_t tm_clocks_add_snapshot(tm_clocks *c, const tm_clock_reading *r, size_t n, tm_clock_origin origin,
			       uint32_t file_id, uint32_t machine_row, tm_error *err)
{
	tm_clock_provenance p = {origin, file_id, machine_row};
	return tm_clock_graph_insert(c->g, r, n, &p, err);
}

tm_conv tm_clocks_convert(tm_clocks *c, tm_clock_node src, int64_t value, tm_clock_node dst, int64_t *out)
{
	return tm_clock_graph_convert(c->g, src, value, dst, out);
}

int tm_clocks_has_path(tm_clocks *c, tm_clock_node src, tm_clock_node dst)
{
	return tm_clock_graph_has_path(c->g, src, dst);
}

void tm_clocks_save(const tm_clocks *c, tm_ser_out *out)
{
	tm_clock_graph_save(c->g, out);
	tm_ser_u8(out, (uint8_t)(c->has_owner != 0));
	tm_ser_u32(out, c->owner_file);
	tm_ser_u8(out, (uint8_t)(c->has_clock_id != 0));
	tm_ser_u32(out, c->clock_id);
	tm_ser_u64(out, c->n_ended);
	for (size_t i = 0; i < c->n_ended; i++) {
		const ended_rec *r = &c->ended[i];
		tm_ser_u32(out, r->file_id);
		tm_ser_u32(out, r->machine_row);
		tm_ser_u64(out, r->n);
		for (uint32_t k = 0; k < r->n; k++) {
			const tm_clock_source *s = &c->ended_src[r->first + k];
			tm_clock_node_save(out, s->node);
			tm_ser_u64(out, s->ok);
			tm_ser_u64(out, s->failed);
			tm_ser_u32(out, (uint32_t)s->failure);
		}
	}
}

tm_clocks *tm_clocks_load(tm_ser_rd *r)
{
	tm_clock_graph *g = tm_clock_graph_load(r);
	if (!g)
		return NULL;
	tm_clocks *c = tm_xcalloc(1, sizeof(*c));
	c->g = g;
	c->has_owner = tm_ser_get_u8(r) != 0;
	c->owner_file = tm_ser_get_u32(r);
	c->has_clock_id = tm_ser_get_u8(r) != 0;
	c->clock_id = tm_ser_get_u32(r);
	size_t ne = tm_ser_count(r, 3, UINT32_MAX);
	reserve_ended(c, ne); /* a tracker with a source per file, mostly */
	tm_clock_source src[64];
	for (size_t i = 0; i < ne && !r->bad; i++) {
		uint32_t file_id = tm_ser_get_u32(r), row = tm_ser_get_u32(r);
		size_t n = tm_ser_count(r, 7, UINT32_MAX);
		tm_clock_source *v = n <= 64 ? src : tm_xcalloc(n, sizeof(*v));
		for (size_t k = 0; k < n && !r->bad; k++) {
			tm_clock_source *s = &v[k];
			s->node = tm_clock_node_load(r);
			s->ok = tm_ser_get_u64(r);
			s->failed = tm_ser_get_u64(r);
			uint32_t f = tm_ser_get_u32(r);
			if (f > TM_CONV_NO_PATH)
				tm_ser_fail(r, "an unknown conversion failure");
			s->failure = (tm_conv)f;
		}
		if (!r->bad)
			keep_ended(c, file_id, row, v, n);
		if (v != src)
			free(v);
	}
	if (r->bad) {
		tm_clocks_free(c);
		return NULL;
	}
	return c;
}

tm_clock_node tm_clocks_trace_time(const tm_clocks *c)
{
	return *tm_clock_graph_trace_time(c->g);
}

int tm_clocks_owner(const tm_clocks *c, uint32_t *owner_file)
{
	if (c->has_owner && owner_file)
		*owner_file = c->owner_file;
	return c->has_owner;
}

int tm_clocks_trace_time_clock_id(const tm_clocks *c, uint32_t *clock_id)
{
	if (c->has_clock_id && clock_id)
		*clock_id = c->clock_id;
	return c->has_clock_id;
}

int tm_clocks_claim(tm_clocks *c, tm_clock_node node, uint32_t owner_file)
{
	/* §5.2: the first owner wins; the same file may re-claim. */
	if (c->has_owner && c->owner_file != owner_file)
		return 0;
	c->has_owner = 1;
	c->owner_file = owner_file;
	c->has_clock_id = 1;
	c->clock_id = node.clock_id;
	tm_clock_graph_set_trace_time(c->g, node);
	return 1;
}

void tm_clocks_stats(const tm_clocks *c, tm_clock_stats *out)
{
	memset(out, 0, sizeof(*out));
	out->n[TM_CLOCK_STAT_INVALID_SNAPSHOTS] = tm_clock_graph_rejected(c->g);
	for (size_t i = 0; i < c->n_trackers; i++)
		for (int s = 0; s < TM_CLOCK_STAT_COUNT; s++)
			out->n[s] += c->trackers[i]->stats.n[s];
}

/* ---- trackers ------------------------------------------------------------ */

static size_t tracker_slot(const tm_clocks *c, uint32_t file_id, uint32_t machine_row)
{
	uint64_t h = ((uint64_t)file_id << 32 | machine_row) * UINT64_C(0x9e3779b97f4a7c15);
	return (size_t)(h >> 32) & (c->tracker_ix_cap - 1);
}

static void tracker_index_put(tm_clocks *c, uint32_t i)
{
	const tm_clock_tracker *t = c->trackers[i];
	size_t j = tracker_slot(c, t->file_id, t->machine_row);
	while (c->tracker_ix[j])
		j = (j + 1) & (c->tracker_ix_cap - 1);
	c->tracker_ix[j] = i + 1;
}

tm_clock_tracker *tm_clocks_find_tracker(tm_clocks *c, uint32_t file_id, uint32_t machine_row)
{
	if (!c->tracker_ix_cap)
		return NULL;
	for (size_t j = tracker_slot(c, file_id, machine_row);; j = (j + 1) & (c->tracker_ix_cap - 1)) {
		uint32_t v = c->tracker_ix[j];
		if (!v)
			return NULL;
		tm_clock_tracker *t = c->trackers[v - 1];
		if (t->file_id == file_id && t->machine_row == machine_row)
			return t;
	}
}

tm_clock_tracker *tm_clocks_open_tracker(tm_clocks *c, uint32_t file_id, uint32_t machine_row, int primary)
{
	tm_clock_tracker *t = tm_clocks_find_tracker(c, file_id, machine_row);
	if (t)
		return t;
	t = tm_xcalloc(1, sizeof(*t));
	t->ctx = c;
	t->file_id = file_id;
	t->machine_row = machine_row;
	t->primary = primary != 0;
	TM_GROW(c->trackers, c->cap_trackers, c->n_trackers + 1);
	c->trackers[c->n_trackers++] = t;
	if (c->n_trackers * 2 > c->tracker_ix_cap) {
		free(c->tracker_ix);
		c->tracker_ix_cap = c->tracker_ix_cap ? c->tracker_ix_cap * 2 : 16;
		c->tracker_ix = tm_xcalloc(c->tracker_ix_cap, sizeof(*c->tracker_ix));
		for (size_t i = 0; i < c->n_trackers; i++)
			tracker_index_put(c, (uint32_t)i);
	} else {
		tracker_index_put(c, (uint32_t)(c->n_trackers - 1));
	}
	return t;
}

static size_t ended_slot(const tm_clocks *c, uint32_t file_id)
{
	return (size_t)(((uint64_t)file_id * UINT64_C(0x9e3779b97f4a7c15)) >> 32) & (c->ended_ix_cap - 1);
}

/* The slot of file_id's first record (an empty slot when it has none). */
static uint32_t *ended_head(const tm_clocks *c, uint32_t file_id)
{
	for (size_t j = ended_slot(c, file_id);; j = (j + 1) & (c->ended_ix_cap - 1)) {
		uint32_t v = c->ended_ix[j];
		if (!v || c->ended[v - 1].file_id == file_id)
			return &c->ended_ix[j];
	}
}

static void ended_index_grow(tm_clocks *c)
{
	size_t cap = c->ended_ix_cap ? c->ended_ix_cap * 2 : 64;
	free(c->ended_ix);
	c->ended_ix = tm_xcalloc(cap, sizeof(*c->ended_ix));
	c->ended_ix_cap = cap;
	for (size_t i = 0; i < c->n_ended; i++) {
		uint32_t *h = ended_head(c, c->ended[i].file_id);
		if (!*h)
			*h = (uint32_t)i + 1;
	}
}

/* Keep what the views read of a tracker: its file, machine and sources. */
static void keep_ended(tm_clocks *c, uint32_t file_id, uint32_t machine_row, const tm_clock_source *src, size_t n)
{
	if (n) { /* an index file may hold a tracker without sources */
		TM_GROW(c->ended_src, c->cap_ended_src, c->n_ended_src + n);
		memcpy(c->ended_src + c->n_ended_src, src, n * sizeof(*src));
	}
	if ((c->n_ended + 2) * 2 > c->ended_ix_cap)
		ended_index_grow(c);
	TM_GROW(c->ended, c->cap_ended, c->n_ended + 1);
	c->ended[c->n_ended] = (ended_rec){file_id, machine_row, (uint32_t)c->n_ended_src, (uint32_t)n, 0};
	c->n_ended_src += n;
	uint32_t idx = (uint32_t)c->n_ended++;
	uint32_t *h = ended_head(c, file_id);
	if (!*h) {
		*h = idx + 1;
		return;
	}
	uint32_t k = *h - 1; /* the file's chain, in creation order */
	while (c->ended[k].next)
		k = c->ended[k].next - 1;
	c->ended[k].next = idx + 1;
}

size_t tm_clocks_ended_count(const tm_clocks *c)
{
	return c->n_ended;
}

void tm_clocks_ended_at(const tm_clocks *c, size_t i, tm_clock_ended *out)
{
	const ended_rec *r = &c->ended[i];
	*out = (tm_clock_ended){r->file_id, r->machine_row, c->ended_src + r->first, r->n};
}

size_t *tm_clocks_ended_of(const tm_clocks *c, uint32_t file_id, size_t *n)
{
	*n = 0;
	if (!c->ended_ix_cap)
		return NULL;
	size_t *v = NULL, cap = 0;
	for (uint32_t k = *ended_head(c, file_id); k; k = c->ended[k - 1].next) {
		TM_GROW(v, cap, *n + 1);
		v[(*n)++] = k - 1;
	}
	return v;
}

void tm_clocks_end_trackers(tm_clocks *c)
{
	for (size_t i = 0; i < c->n_trackers; i++) {
		tm_clock_tracker *t = c->trackers[i];
		if (t->n_src)
			keep_ended(c, t->file_id, t->machine_row, t->src, t->n_src);
		free(t->src);
		free(t->src_index);
		free(t);
	}
	free(c->trackers);
	free(c->tracker_ix);
	c->trackers = NULL;
	c->tracker_ix = NULL;
	c->n_trackers = c->cap_trackers = c->tracker_ix_cap = 0;
}

size_t tm_clocks_tracker_count(const tm_clocks *c)
{
	return c->n_trackers;
}

tm_clock_tracker *tm_clocks_tracker_at(const tm_clocks *c, size_t i)
{
	return i < c->n_trackers ? c->trackers[i] : NULL;
}

uint32_t tm_tracker_file(const tm_clock_tracker *t)
{
	return t->file_id;
}

uint32_t tm_tracker_machine(const tm_clock_tracker *t)
{
	return t->machine_row;
}

int tm_tracker_is_primary(const tm_clock_tracker *t)
{
	return t->primary;
}

uint32_t tm_tracker_file_tag(const tm_clock_tracker *t)
{
	return t->file_tag;
}

void tm_tracker_set_default_clock(tm_clock_tracker *t, uint32_t clock_id)
{
	t->has_default = 1;
	t->default_clock = clock_id;
}

int tm_tracker_default_clock(const tm_clock_tracker *t, uint32_t *clock_id)
{
	if (t->has_default && clock_id)
		*clock_id = t->default_clock;
	return t->has_default;
}

void tm_tracker_set_sync_clock(tm_clock_tracker *t, uint32_t clock_id)
{
	t->sync_clock = clock_id;
	t->bridge_armed = 1;
}

void tm_tracker_set_clock_override(tm_clock_tracker *t)
{
	t->clock_override = 1;
}

/* §2.2 with an explicit file tag. */
static inline tm_clock_node qualify(const tm_clock_tracker *t, uint32_t clock_id, uint32_t seq_id, uint32_t tag)
{
	if (clock_id == TM_CLOCK_THIS_FILE)
		return (tm_clock_node){TM_CLOCK_TRACE_FILE, 0, t->file_id, t->machine_row};
	if (clock_id >= TM_CLOCK_SEQ_FIRST && clock_id <= TM_CLOCK_SEQ_LAST && seq_id)
		return (tm_clock_node){clock_id, seq_id, t->file_id, t->machine_row};
	return (tm_clock_node){clock_id, 0, tag, t->machine_row};
}

tm_clock_node tm_tracker_node(const tm_clock_tracker *t, uint32_t clock_id, uint32_t seq_id)
{
	return qualify(t, clock_id, seq_id, t->file_tag);
}

int tm_tracker_claim(tm_clock_tracker *t, uint32_t clock_id)
{
	/* §5.2 extra rule: a tracker that has attempted a conversion no longer
	 * claims; trace time is named by the canonical node (tag 0). */
	if (t->conversions)
		return 0;
	return tm_clocks_claim(t->ctx, qualify(t, clock_id, 0, 0), t->file_id);
}

static int64_t insert_as(tm_clock_tracker *t, const tm_clock_reading *r, size_t n, tm_clock_origin origin,
			 tm_error *err)
{
	return tm_clocks_add_snapshot(t->ctx, r, n, origin, t->file_id, t->machine_row, err);
}

int64_t tm_tracker_insert_snapshot(tm_clock_tracker *t, const tm_raw_reading *r, size_t n, uint32_t seq_id,
				   tm_clock_origin origin, tm_error *err)
{
	if (t->clock_override) {
		tm_err(err, TM_EINPUT, "perfetto_manifest: clock overrides require the trace to use a single clock");
		return TM_CLOCK_SNAPSHOT_FATAL;
	}
	/* §8.1: a non-primary file's own snapshot isolates it on its file tag. */
	if (!t->primary && !t->file_tag) {
		if (t->conversions) {
			t->stats.n[TM_CLOCK_STAT_MIXED_SOURCES]++;
			t->mixed_conversions = t->conversions;
		}
		t->file_tag = t->file_id;
	}
	/* §8.2: off the trace-time machine a non-primary file keeps REALTIME
	 * joinable to the rendezvous through canonical twins. */
	int twins = !t->primary && t->machine_row != tm_clocks_trace_time(t->ctx).machine_row;
	size_t n_twins = 0;
	if (twins)
		for (size_t i = 0; i < n; i++)
			n_twins += r[i].clock_id == TM_CLOCK_REALTIME || r[i].clock_id == TM_CLOCK_REALTIME_COARSE;
	tm_clock_reading small[16];
	size_t total = n + n_twins;
	tm_clock_reading *q = total <= 16 ? small : tm_xmalloc(total * sizeof(*q));
	size_t k = n;
	for (size_t i = 0; i < n; i++) {
		q[i] = (tm_clock_reading){tm_tracker_node(t, r[i].clock_id, seq_id), r[i].ts, r[i].unit_ns,
					  r[i].incremental};
		if (twins && (r[i].clock_id == TM_CLOCK_REALTIME || r[i].clock_id == TM_CLOCK_REALTIME_COARSE)) {
			q[k] = q[i];
			q[k++].node = qualify(t, r[i].clock_id, 0, 0);
		}
	}
	int64_t id = insert_as(t, q, total, origin, err);
	if (q != small)
		free(q);
	return id;
}

/* A zero-offset bridge edge {a: 0, b: 0} (§7). A rejection is counted by
 * the graph and otherwise ignored, as in the reference. */
static void insert_bridge(tm_clock_tracker *t, tm_clock_node a, tm_clock_node b, tm_clock_origin origin)
{
	tm_clock_reading r[2] = {{a, 0, 1, 0}, {b, 0, 1, 0}};
	insert_as(t, r, 2, origin, NULL);
}

/* §7 bridge(X, G). */
static void bridge(tm_clock_tracker *t, tm_clock_node x, tm_clock_node g)
{
	tm_clocks *c = t->ctx;
	if (tm_clocks_has_path(c, x, g)) /* also X == G: a real relation wins */
		return;
	tm_clock_node r = {TM_CLOCK_REALTIME, 0, 0, t->machine_row};
	tm_clock_node gr = {TM_CLOCK_REALTIME, 0, 0, g.machine_row};
	if (!node_eq(r, gr) && tm_clocks_has_path(c, x, r) && tm_clocks_has_path(c, gr, g)) {
		if (!tm_clocks_has_path(c, r, gr))
			insert_bridge(t, r, gr, TM_CLOCK_ORIGIN_REALTIME);
		return;
	}
	if (x.clock_id == TM_CLOCK_TRACE_FILE || g.clock_id == TM_CLOCK_TRACE_FILE || x.clock_id == g.clock_id) {
		insert_bridge(t, x, g, TM_CLOCK_ORIGIN_ASSUMED);
		return;
	}
	t->stats.n[TM_CLOCK_STAT_UNRELATABLE]++;
	t->unrelatable = 1;
	t->unrelatable_src = x.clock_id;
	t->unrelatable_dst = g.clock_id;
}

/* §7: at the first conversion request, against the graph as it is now. */
static void run_bridge(tm_clock_tracker *t)
{
	t->bridge_armed = 0;
	tm_clock_node g = tm_clocks_trace_time(t->ctx);
	tm_clock_node q = qualify(t, t->sync_clock, 0, t->file_tag);
	tm_clock_node canon = qualify(t, t->sync_clock, 0, 0);
	if (!node_eq(q, canon) && !tm_clocks_has_path(t->ctx, q, canon))
		insert_bridge(t, q, canon, TM_CLOCK_ORIGIN_FILE_TAG);
	bridge(t, canon, g);
}

static size_t node_slot(tm_clock_node n, size_t cap)
{
	return (size_t)tm_khash_pair((uint64_t)n.clock_id << 32 | n.seq_id, (uint64_t)n.file_id << 32 | n.machine_row) &
	       (cap - 1);
}

/* The source record of `n`, created on first use. */
static tm_clock_source *source_of(tm_clock_tracker *t, tm_clock_node n)
{
	if (t->last_src && node_eq(t->src[t->last_src - 1].node, n))
		return &t->src[t->last_src - 1];
	if ((t->n_src + 1) * 2 > t->src_index_cap) {
		size_t cap = t->src_index_cap ? t->src_index_cap * 2 : 16;
		free(t->src_index);
		t->src_index = tm_xcalloc(cap, sizeof(*t->src_index));
		t->src_index_cap = cap;
		for (size_t i = 0; i < t->n_src; i++) {
			size_t j = node_slot(t->src[i].node, cap);
			while (t->src_index[j])
				j = (j + 1) & (cap - 1);
			t->src_index[j] = (uint32_t)i + 1;
		}
	}
	size_t j = node_slot(n, t->src_index_cap);
	for (; t->src_index[j]; j = (j + 1) & (t->src_index_cap - 1))
		if (node_eq(t->src[t->src_index[j] - 1].node, n))
			break;
	if (!t->src_index[j]) {
		TM_GROW(t->src, t->cap_src, t->n_src + 1);
		t->src[t->n_src] = (tm_clock_source){n, 0, 0, TM_CONV_OK};
		t->src_index[j] = (uint32_t)++t->n_src;
	}
	t->last_src = t->src_index[j];
	return &t->src[t->last_src - 1];
}

size_t tm_tracker_source_count(const tm_clock_tracker *t)
{
	return t->n_src;
}

const tm_clock_source *tm_tracker_source(const tm_clock_tracker *t, size_t i)
{
	return i < t->n_src ? &t->src[i] : NULL;
}

tm_conv tm_tracker_to_trace_time(tm_clock_tracker *t, uint32_t clock_id, uint32_t seq_id, int64_t value, int quiet,
				 int64_t *out)
{
	if (t->bridge_armed)
		run_bridge(t);
	t->conversions++;
	/* by reference: a node returned by value costs a stall here, on every
	 * timestamp of the archive */
	const tm_clock_node *dst = tm_clock_graph_trace_time(t->ctx->g);
	/* A file's timestamps come in long runs on one clock: the last
	 * conversion's path answers most of them in one add (it was a seventh
	 * of the proto scan, callgrind). */
	tracker_again *ag = &t->again[(clock_id ^ seq_id * 0x9e3779b9u) >> 29];
	if (ag->m.valid && ag->clock_id == clock_id && ag->seq_id == seq_id && ag->file_tag == t->file_tag &&
	    node_eq(ag->dst, *dst) && tm_clock_graph_convert_again(t->ctx->g, &ag->m, value, out)) {
		t->src[ag->src].ok++;
		return TM_CONV_OK;
	}
	tm_clock_node src = tm_tracker_node(t, clock_id, seq_id);
	/* The common case, a value already in trace time, without the call
	 * (tm_clock_graph_convert answers it the same way). */
	tm_clock_source *rec = source_of(t, src);
	if (node_eq(src, *dst)) {
		rec->ok++;
		*out = value;
		return TM_CONV_OK;
	}
	tm_conv rc = tm_clock_graph_convert_memo(t->ctx->g, src, value, *dst, out, &ag->m);
	ag->clock_id = clock_id;
	ag->seq_id = seq_id;
	ag->file_tag = t->file_tag;
	ag->src = (size_t)(rec - t->src);
	ag->dst = *dst;
	if (rc == TM_CONV_OK) {
		rec->ok++;
	} else if (!quiet) { /* a quiet failure is retried, or not a drop */
		t->stats.n[conv_stat[rc]]++;
		rec->failed++;
		rec->failure = rc;
	}
	return rc;
}

tm_conv tm_tracker_default_to_trace_time(tm_clock_tracker *t, int64_t value, int quiet, int64_t *out)
{
	if (!t->has_default)
		return TM_CONV_UNKNOWN_SOURCE;
	return tm_tracker_to_trace_time(t, t->default_clock, 0, value, quiet, out);
}

uint64_t tm_tracker_conversions(const tm_clock_tracker *t)
{
	return t->conversions;
}

void tm_tracker_stats(const tm_clock_tracker *t, tm_clock_stats *out)
{
	*out = t->stats;
}

int tm_tracker_unrelatable(const tm_clock_tracker *t, uint32_t *source_clock_id, uint32_t *target_clock_id)
{
	if (t->unrelatable) {
		if (source_clock_id)
			*source_clock_id = t->unrelatable_src;
		if (target_clock_id)
			*target_clock_id = t->unrelatable_dst;
	}
	return t->unrelatable;
}

uint64_t tm_tracker_mixed_conversions(const tm_clock_tracker *t)
{
	return t->mixed_conversions;
}

/* ---- remote_clock_sync (machines.md §8) ----------------------------------- */

/* One round's table: clock id -> (host, client), 0 where a side is silent. */
typedef struct sync_entry {
	uint32_t clock_id;
	uint64_t host, client;
} sync_entry;

typedef struct sync_table {
	sync_entry *e;
	size_t n, cap;
} sync_table;

static sync_entry *table_at(sync_table *tb, uint32_t clock_id)
{
	for (size_t i = 0; i < tb->n; i++)
		if (tb->e[i].clock_id == clock_id)
			return &tb->e[i];
	TM_GROW(tb->e, tb->cap, tb->n + 1);
	tb->e[tb->n] = (sync_entry){clock_id, 0, 0};
	return &tb->e[tb->n++];
}

static const sync_entry *table_find(const sync_table *tb, uint32_t clock_id)
{
	for (size_t i = 0; i < tb->n; i++)
		if (tb->e[i].clock_id == clock_id)
			return &tb->e[i];
	return NULL;
}

/* Per clock: the sum and count of its offset estimates (sums wrap like the
 * reference's int64 accumulate). */
typedef struct sync_offset {
	uint32_t clock_id;
	uint64_t sum;
	int64_t count;
} sync_offset;

static int offset_cmp(const void *a, const void *b)
{
	uint32_t x = ((const sync_offset *)a)->clock_id, y = ((const sync_offset *)b)->clock_id;
	return x < y ? -1 : x > y;
}

size_t tm_tracker_remote_clock_sync(tm_clock_tracker *client, const tm_remote_sync_round *rounds, size_t n_rounds)
{
	sync_table *tables = tm_xcalloc(n_rounds ? n_rounds : 1, sizeof(*tables));
	for (size_t i = 0; i < n_rounds; i++) {
		const tm_remote_sync_round *rd = &rounds[i];
		/* Step 1: a clock listed twice: the last reading wins. */
		for (size_t k = 0; k < rd->n_host; k++)
			table_at(&tables[i], rd->host[k].clock_id)->host = rd->host[k].ts;
		tm_raw_reading small[16];
		tm_raw_reading *snap = rd->n_client <= 16 ? small : tm_xmalloc(rd->n_client * sizeof(*snap));
		for (size_t k = 0; k < rd->n_client; k++) {
			table_at(&tables[i], rd->client[k].clock_id)->client = rd->client[k].ts;
			snap[k] = (tm_raw_reading){rd->client[k].clock_id, rd->client[k].ts, 1, 0};
		}
		/* The client snapshot is an ordinary snapshot of the client
		 * reader: every clock as a builtin, never sequence-scoped. */
		tm_tracker_insert_snapshot(client, snap, rd->n_client, 0, TM_CLOCK_ORIGIN_REMOTE_CLIENT, NULL);
		if (snap != small)
			free(snap);
	}

	/* Step 2: offsets from each consecutive (ping, update) pair. */
	sync_offset *offs = NULL;
	size_t n_offs = 0, cap_offs = 0;
	for (size_t i = 1; i < n_rounds; i++) {
		sync_table *ping = &tables[i - 1], *upd = &tables[i];
		uint64_t pc = table_at(ping, TM_CLOCK_BOOTTIME)->client;
		uint64_t uc = table_at(upd, TM_CLOCK_BOOTTIME)->client;
		if (uc - pc >= SYNC_INTERVAL_NS) /* unsigned: a decrease wraps */
			continue;
		for (size_t k = 0; k < ping->n; k++) {
			const sync_entry *a = &ping->e[k];
			const sync_entry *b = table_find(upd, a->clock_id);
			uint64_t t1h = a->host, t1c = a->client;
			uint64_t t2h = b ? b->host : 0, t2c = b ? b->client : 0;
			if (!t1h || !t1c || !t2h || !t2c)
				continue;
			int64_t offset1 = (int64_t)(t1c + t2c) / 2 - (int64_t)t1h;
			int64_t offset2 = (int64_t)t2c - (int64_t)(t1h + t2h) / 2;
			size_t j = 0;
			while (j < n_offs && offs[j].clock_id != a->clock_id)
				j++;
			if (j == n_offs) {
				TM_GROW(offs, cap_offs, n_offs + 1);
				offs[n_offs++] = (sync_offset){a->clock_id, 0, 0};
			}
			offs[j].sum += (uint64_t)offset1 + (uint64_t)offset2;
			offs[j].count += 2;
		}
	}

	/* Step 3: one cross-machine edge per clock; client = host + offset. */
	if (n_offs)
		qsort(offs, n_offs, sizeof(*offs), offset_cmp);
	uint32_t host_row = tm_clocks_trace_time(client->ctx).machine_row;
	for (size_t j = 0; j < n_offs; j++) {
		int64_t offset = (int64_t)offs[j].sum / offs[j].count;
		uint64_t anchor = 0;
		for (size_t i = 0; i < n_rounds; i++) {
			const sync_entry *e = table_find(&tables[i], offs[j].clock_id);
			if (e && e->host)
				anchor = e->host;
		}
		tm_clock_reading r[2] = {
			{{offs[j].clock_id, 0, 0, host_row}, anchor, 1, 0},
			{{offs[j].clock_id, 0, 0, client->machine_row}, anchor + (uint64_t)offset, 1, 0},
		};
		insert_as(client, r, 2, TM_CLOCK_ORIGIN_REMOTE_OFFSET, NULL);
	}
	for (size_t i = 0; i < n_rounds; i++)
		free(tables[i].e);
	free(tables);
	free(offs);
	return n_offs;
}
