/* core/clock_tracker.c - spec/clocks.md §5-§8 and §10 (trace time, claims,
 * trackers, file tags, REALTIME twins, the one-shot bridge) and
 * spec/machines.md §8 (remote_clock_sync offsets). */
#include "clock_tracker.h"

#include <stdlib.h>
#include <string.h>

/* machines.md §8: rounds further apart than this belong to different sync
 * sessions. */
#define SYNC_INTERVAL_NS 30000000000ULL

struct tm_clock_tracker {
	tm_clocks *ctx;
	uint32_t file_id, machine_row;
	int primary;
	uint32_t sync_clock; /* D, §6 */
	uint32_t file_tag;   /* §8.1 */
	int has_default;
	uint32_t default_clock;
	int bridged;         /* §7 runs once */
	int clock_override;
	uint64_t conversions; /* attempts, §5.2 */
	uint64_t stats[TM_CSTAT_COUNT];
	int unrelatable_recorded;
	uint32_t unrelatable_src, unrelatable_dst;
	uint64_t mixed_conversions;
};

struct tm_clocks {
	tm_clock_graph *graph;
	tm_clock_node trace_time;
	int has_owner;
	uint32_t owner_file;
	int has_clock_id;
	uint32_t trace_time_clock_id;
	uint64_t invalid_snapshots;
	tm_clock_tracker **trackers;
	size_t n_trackers, cap_trackers;
};

static const char *const stat_names[TM_CSTAT_COUNT] = {
	[TM_CSTAT_UNRELATABLE] = "clock_sync_unrelatable_clock_domains",
	[TM_CSTAT_UNKNOWN_SOURCE] = "clock_sync_failure_unknown_source_clock",
	[TM_CSTAT_UNKNOWN_TARGET] = "clock_sync_failure_unknown_target_clock",
	[TM_CSTAT_NO_PATH] = "clock_sync_failure_no_path",
	[TM_CSTAT_UNDEFERRABLE_LOSS] = "clock_sync_failure_undeferrable_packet_loss",
	[TM_CSTAT_MIXED_SOURCES] = "clock_sync_mixed_clock_sources",
	[TM_CSTAT_INVALID_SNAPSHOTS] = "invalid_clock_snapshots",
};

/* §4.5: which stat a failed conversion counts. */
static const tm_clock_stat conv_stat[] = {
	[TM_CONV_UNKNOWN_SOURCE] = TM_CSTAT_UNKNOWN_SOURCE,
	[TM_CONV_UNKNOWN_TARGET] = TM_CSTAT_UNKNOWN_TARGET,
	[TM_CONV_NO_PATH] = TM_CSTAT_NO_PATH,
};

const char *tm_clock_stat_name(tm_clock_stat s)
{
	return (unsigned)s < TM_CSTAT_COUNT ? stat_names[s] : "unknown";
}

static int node_eq(tm_clock_node a, tm_clock_node b)
{
	return a.clock_id == b.clock_id && a.seq_id == b.seq_id && a.file_id == b.file_id &&
	       a.machine_row == b.machine_row;
}

static int is_seq_clock(uint32_t id)
{
	return id >= TM_CLOCK_SEQ_FIRST && id <= TM_CLOCK_SEQ_LAST;
}

/* ---- context -------------------------------------------------------- */

tm_clocks *tm_clocks_new(void)
{
	tm_clocks *c = tm_xcalloc(1, sizeof *c);
	c->graph = tm_clock_graph_new();
	/* §5.1: the private clock of file 0 on row 0, unowned */
	c->trace_time = (tm_clock_node){TM_CLOCK_TRACE_FILE, 0, 0, 0};
	tm_clock_graph_set_trace_time(c->graph, c->trace_time);
	return c;
}

void tm_clocks_free(tm_clocks *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->n_trackers; i++)
		free(c->trackers[i]);
	free(c->trackers);
	tm_clock_graph_free(c->graph);
	free(c);
}

tm_clock_graph *tm_clocks_graph(tm_clocks *c)
{
	return c->graph;
}

tm_clock_node tm_clocks_trace_time(const tm_clocks *c)
{
	return c->trace_time;
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
		*clock_id = c->trace_time_clock_id;
	return c->has_clock_id;
}

int tm_clocks_claim(tm_clocks *c, tm_clock_node node, uint32_t owner_file)
{
	/* §5.2: different files never take trace time from each other */
	if (c->has_owner && c->owner_file != owner_file)
		return 0;
	c->trace_time = node;
	c->has_owner = 1;
	c->owner_file = owner_file;
	c->has_clock_id = 1;
	c->trace_time_clock_id = node.clock_id;
	tm_clock_graph_set_trace_time(c->graph, node);
	return 1;
}

uint64_t tm_clocks_stat(const tm_clocks *c, tm_clock_stat s)
{
	if ((unsigned)s >= TM_CSTAT_COUNT)
		return 0;
	if (s == TM_CSTAT_INVALID_SNAPSHOTS)
		return c->invalid_snapshots;
	uint64_t sum = 0;
	for (size_t i = 0; i < c->n_trackers; i++)
		sum += c->trackers[i]->stats[s];
	return sum;
}

/* Every insertion goes through here so that a rejection of any origin is
 * counted (§10: invalid_clock_snapshots is a property of the graph). */
static int64_t insert(tm_clocks *c, const tm_clock_reading *r, size_t n, tm_error *err)
{
	tm_error local;
	int64_t id = tm_clock_graph_add_snapshot(c->graph, r, n, err ? err : &local);
	if (id < 0)
		c->invalid_snapshots++;
	return id;
}

/* A zero-offset pair {a:0, b:0}: "identical for all time" (§7). */
static void insert_identity(tm_clocks *c, tm_clock_node a, tm_clock_node b)
{
	tm_clock_reading r[2] = {{a, 0, 1, 0}, {b, 0, 1, 0}};
	insert(c, r, 2, NULL);
}

/* ---- trackers ------------------------------------------------------- */

tm_clock_tracker *tm_clocks_find_tracker(tm_clocks *c, uint32_t file_id, uint32_t machine_row)
{
	for (size_t i = 0; i < c->n_trackers; i++)
		if (c->trackers[i]->file_id == file_id && c->trackers[i]->machine_row == machine_row)
			return c->trackers[i];
	return NULL;
}

tm_clock_tracker *tm_clocks_tracker(tm_clocks *c, uint32_t file_id, uint32_t machine_row, int primary,
				    uint32_t sync_clock)
{
	tm_clock_tracker *t = tm_clocks_find_tracker(c, file_id, machine_row);
	if (t)
		return t;
	t = tm_xcalloc(1, sizeof *t);
	t->ctx = c;
	t->file_id = file_id;
	t->machine_row = machine_row;
	t->primary = primary != 0;
	t->sync_clock = sync_clock;
	TM_GROW(c->trackers, c->cap_trackers, c->n_trackers + 1);
	c->trackers[c->n_trackers++] = t;
	return t;
}

uint32_t tm_tracker_file(const tm_clock_tracker *t)
{
	return t->file_id;
}

uint32_t tm_tracker_machine(const tm_clock_tracker *t)
{
	return t->machine_row;
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

void tm_tracker_set_clock_override(tm_clock_tracker *t)
{
	t->clock_override = 1;
}

/* §2.2 with an explicit file tag: sequence clocks and the private clock
 * always carry the file's own id; builtin and global clocks the tag. */
static tm_clock_node qualify(const tm_clock_tracker *t, uint32_t clock_id, uint32_t seq_id, uint32_t tag)
{
	if (is_seq_clock(clock_id))
		return (tm_clock_node){clock_id, seq_id, t->file_id, t->machine_row};
	if (clock_id == TM_CLOCK_TRACE_FILE)
		return (tm_clock_node){clock_id, 0, t->file_id, t->machine_row};
	return (tm_clock_node){clock_id, 0, tag, t->machine_row};
}

tm_clock_node tm_tracker_node(const tm_clock_tracker *t, uint32_t clock_id, uint32_t seq_id)
{
	return qualify(t, clock_id, seq_id, t->file_tag);
}

int tm_tracker_claim(tm_clock_tracker *t, uint32_t clock_id)
{
	/* §5.2 extra rule: once this tracker has tried to convert, its view of
	 * trace time is fixed and a claim is ignored without a message */
	if (t->conversions > 0 || is_seq_clock(clock_id))
		return 0;
	return tm_clocks_claim(t->ctx, qualify(t, clock_id, 0, 0), t->file_id);
}

static void count(tm_clock_tracker *t, tm_clock_stat s)
{
	if ((unsigned)s < TM_CSTAT_COUNT)
		t->stats[s]++;
}

void tm_tracker_count(tm_clock_tracker *t, tm_clock_stat s)
{
	if (s == TM_CSTAT_INVALID_SNAPSHOTS)
		t->ctx->invalid_snapshots++;
	else
		count(t, s);
}

uint64_t tm_tracker_stat(const tm_clock_tracker *t, tm_clock_stat s)
{
	return (unsigned)s < TM_CSTAT_COUNT ? t->stats[s] : 0;
}

int tm_tracker_unrelatable_args(const tm_clock_tracker *t, uint32_t *source_clock_id, uint32_t *target_clock_id)
{
	if (!t->unrelatable_recorded)
		return 0;
	if (source_clock_id)
		*source_clock_id = t->unrelatable_src;
	if (target_clock_id)
		*target_clock_id = t->unrelatable_dst;
	return 1;
}

uint64_t tm_tracker_mixed_conversions(const tm_clock_tracker *t)
{
	return t->mixed_conversions;
}

uint64_t tm_tracker_conversions(const tm_clock_tracker *t)
{
	return t->conversions;
}

static int is_realtime(uint32_t id)
{
	return id == TM_CLOCK_REALTIME || id == TM_CLOCK_REALTIME_COARSE;
}

int64_t tm_tracker_add_snapshot(tm_clock_tracker *t, const tm_clock_sample *s, size_t n, uint32_t seq_id,
				tm_error *err)
{
	tm_clocks *c = t->ctx;
	if (t->clock_override)
		return tm_err(err, TM_EINPUT,
			      "perfetto_manifest: clock overrides require the trace to use a single clock");
	/* §8.1: a non-primary file isolates itself at its first snapshot */
	if (!t->primary && t->file_tag == 0) {
		if (t->conversions > 0) {
			count(t, TM_CSTAT_MIXED_SOURCES);
			t->mixed_conversions = t->conversions;
		}
		t->file_tag = t->file_id;
	}
	/* §8.2: twins only for non-primary files away from the trace-time
	 * machine (judged now, against the current trace time) */
	int twins = !t->primary && t->machine_row != c->trace_time.machine_row;
	size_t n_twins = 0;
	if (twins)
		for (size_t i = 0; i < n; i++)
			n_twins += is_realtime(s[i].clock_id);
	size_t total = n + n_twins;
	tm_clock_reading *r = tm_xcalloc(total ? total : 1, sizeof *r);
	size_t k = n;
	for (size_t i = 0; i < n; i++) {
		r[i] = (tm_clock_reading){tm_tracker_node(t, s[i].clock_id, seq_id), s[i].ts, s[i].unit_ns,
					  s[i].incremental};
		if (twins && is_realtime(s[i].clock_id)) {
			r[k] = r[i];
			r[k].node = qualify(t, s[i].clock_id, 0, 0);
			k++;
		}
	}
	int64_t id = insert(c, r, total, err);
	free(r);
	return id;
}

/* §7 bridge(X, G). Every "path exists" is a fresh search against the graph
 * as it is now; the three rendezvous tests are separate searches. */
static void bridge(tm_clock_tracker *t, tm_clock_node x, tm_clock_node g)
{
	tm_clocks *c = t->ctx;
	if (node_eq(x, g) || tm_clock_graph_has_path(c->graph, x, g))
		return;
	tm_clock_node r = {TM_CLOCK_REALTIME, 0, 0, t->machine_row};
	tm_clock_node gr = {TM_CLOCK_REALTIME, 0, 0, g.machine_row};
	if (!node_eq(r, gr) && tm_clock_graph_has_path(c->graph, x, r) && tm_clock_graph_has_path(c->graph, gr, g)) {
		if (!tm_clock_graph_has_path(c->graph, r, gr))
			insert_identity(c, r, gr);
		return;
	}
	/* step 3: assume aligned only where that is defensible: a private
	 * clock on either side, or the same domain elsewhere */
	if (x.clock_id == TM_CLOCK_TRACE_FILE || g.clock_id == TM_CLOCK_TRACE_FILE || x.clock_id == g.clock_id) {
		insert_identity(c, x, g);
		return;
	}
	count(t, TM_CSTAT_UNRELATABLE);
	t->unrelatable_recorded = 1;
	t->unrelatable_src = x.clock_id;
	t->unrelatable_dst = g.clock_id;
}

static void bridge_once(tm_clock_tracker *t)
{
	if (t->bridged)
		return;
	t->bridged = 1;
	tm_clocks *c = t->ctx;
	tm_clock_node g = c->trace_time;
	tm_clock_node q = qualify(t, t->sync_clock, 0, t->file_tag);
	tm_clock_node canon = qualify(t, t->sync_clock, 0, 0);
	/* §8.1: an isolated file still reaches trace time through its D */
	if (!node_eq(q, canon) && !tm_clock_graph_has_path(c->graph, q, canon))
		insert_identity(c, q, canon);
	bridge(t, canon, g);
}

static tm_conv convert(tm_clock_tracker *t, uint32_t clock_id, uint32_t seq_id, int64_t value, int64_t *out,
		       int record)
{
	bridge_once(t);
	t->conversions++;
	int64_t v = 0;
	tm_conv rc = tm_clock_graph_convert(t->ctx->graph, tm_tracker_node(t, clock_id, seq_id), value,
					    t->ctx->trace_time, &v);
	if (rc == TM_CONV_OK) {
		if (out)
			*out = v;
	} else if (record && (size_t)rc < sizeof conv_stat / sizeof conv_stat[0]) {
		count(t, conv_stat[rc]);
	}
	return rc;
}

tm_conv tm_tracker_convert(tm_clock_tracker *t, uint32_t clock_id, uint32_t seq_id, int64_t value, int64_t *out)
{
	return convert(t, clock_id, seq_id, value, out, 1);
}

tm_conv tm_tracker_try_convert(tm_clock_tracker *t, uint32_t clock_id, uint32_t seq_id, int64_t value,
			       int64_t *out)
{
	return convert(t, clock_id, seq_id, value, out, 0);
}

/* ---- remote_clock_sync (machines.md §8) ----------------------------- */

/* One round's table entry: clock id -> (host, client); 0 = not listed. */
typedef struct sync_entry {
	uint32_t clock_id;
	uint64_t host, client;
} sync_entry;

typedef struct sync_table {
	sync_entry *e;
	size_t n;
} sync_table;

typedef struct tagged {
	uint32_t clock_id;
	size_t order; /* position in the round: later listing wins */
	int is_host;
	uint64_t ts;
} tagged;

static int tagged_cmp(const void *a, const void *b)
{
	const tagged *x = a, *y = b;
	if (x->clock_id != y->clock_id)
		return x->clock_id < y->clock_id ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

/* Step 1's table: sorted by clock id, a clock listed twice keeps its last
 * value per side. */
static sync_table build_table(const tm_sync_round *rd)
{
	sync_table tb = {0};
	size_t n = rd->n_host + rd->n_client;
	if (!n)
		return tb;
	tagged *all = tm_xcalloc(n, sizeof *all);
	size_t k = 0;
	for (size_t i = 0; i < rd->n_host; i++, k++)
		all[k] = (tagged){rd->host[i].clock_id, k, 1, rd->host[i].ts};
	for (size_t i = 0; i < rd->n_client; i++, k++)
		all[k] = (tagged){rd->client[i].clock_id, k, 0, rd->client[i].ts};
	qsort(all, n, sizeof *all, tagged_cmp);
	tb.e = tm_xcalloc(n, sizeof *tb.e);
	for (size_t i = 0; i < n; i++) {
		if (!tb.n || tb.e[tb.n - 1].clock_id != all[i].clock_id)
			tb.e[tb.n++] = (sync_entry){all[i].clock_id, 0, 0};
		if (all[i].is_host)
			tb.e[tb.n - 1].host = all[i].ts;
		else
			tb.e[tb.n - 1].client = all[i].ts;
	}
	free(all);
	return tb;
}

static const sync_entry *table_find(const sync_table *tb, uint32_t clock_id)
{
	size_t lo = 0, hi = tb->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (tb->e[mid].clock_id < clock_id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < tb->n && tb->e[lo].clock_id == clock_id ? &tb->e[lo] : NULL;
}

typedef struct offset_item {
	uint32_t clock_id;
	int64_t offset;
} offset_item;

static int offset_cmp(const void *a, const void *b)
{
	const offset_item *x = a, *y = b;
	return x->clock_id < y->clock_id ? -1 : x->clock_id > y->clock_id;
}

/* Signed results of unsigned sums (machines.md §8 step 2): the wrap is
 * done in uint64 so that huge values never hit signed overflow. */
static int64_t as_signed(uint64_t v)
{
	return v <= INT64_MAX ? (int64_t)v : -(int64_t)(~v) - 1;
}

size_t tm_clocks_remote_sync(tm_clock_tracker *client, const tm_sync_round *rounds, size_t n_rounds)
{
	tm_clocks *c = client->ctx;
	if (!n_rounds)
		return 0;
	sync_table *tabs = tm_xcalloc(n_rounds, sizeof *tabs);
	for (size_t i = 0; i < n_rounds; i++) {
		tabs[i] = build_table(&rounds[i]);
		/* the client side also acts as an ordinary snapshot (step 1) */
		tm_clock_sample *s = tm_xcalloc(rounds[i].n_client ? rounds[i].n_client : 1, sizeof *s);
		for (size_t j = 0; j < rounds[i].n_client; j++)
			s[j] = (tm_clock_sample){rounds[i].client[j].clock_id, rounds[i].client[j].ts, 1, 0};
		tm_error err;
		tm_tracker_add_snapshot(client, s, rounds[i].n_client, 0, &err);
		free(s);
	}

	offset_item *offs = NULL;
	size_t n_offs = 0, cap_offs = 0;
	for (size_t i = 1; i < n_rounds; i++) {
		const sync_table *ping = &tabs[i - 1], *upd = &tabs[i];
		const sync_entry *pb = table_find(ping, TM_CLOCK_BOOTTIME);
		const sync_entry *ub = table_find(upd, TM_CLOCK_BOOTTIME);
		uint64_t pc = pb ? pb->client : 0, uc = ub ? ub->client : 0;
		/* unsigned on purpose: a decreasing client clock wraps huge */
		if (uc - pc >= SYNC_INTERVAL_NS)
			continue;
		for (size_t j = 0; j < ping->n; j++) {
			const sync_entry *p = &ping->e[j];
			const sync_entry *u = table_find(upd, p->clock_id);
			if (!u || !p->host || !p->client || !u->host || !u->client)
				continue;
			int64_t half_c = as_signed(p->client + u->client) / 2;
			int64_t half_h = as_signed(p->host + u->host) / 2;
			int64_t off1 = as_signed((uint64_t)half_c - p->host);
			int64_t off2 = as_signed(u->client - (uint64_t)half_h);
			TM_GROW(offs, cap_offs, n_offs + 2);
			offs[n_offs++] = (offset_item){p->clock_id, off1};
			offs[n_offs++] = (offset_item){p->clock_id, off2};
		}
	}
	if (n_offs)
		qsort(offs, n_offs, sizeof *offs, offset_cmp);

	size_t edges = 0;
	uint32_t host_row = c->trace_time.machine_row;
	for (size_t i = 0; i < n_offs;) {
		size_t j = i;
		uint64_t sum = 0;
		for (; j < n_offs && offs[j].clock_id == offs[i].clock_id; j++)
			sum += (uint64_t)offs[j].offset;
		uint32_t clock_id = offs[i].clock_id;
		int64_t offset = as_signed(sum) / (int64_t)(j - i);
		/* step 3: anchor on a real host reading, the last non-zero one */
		uint64_t anchor = 0;
		for (size_t r = 0; r < n_rounds; r++) {
			const sync_entry *e = table_find(&tabs[r], clock_id);
			if (e && e->host)
				anchor = e->host;
		}
		tm_clock_reading rd[2] = {
			{{clock_id, 0, 0, host_row}, anchor, 1, 0},
			{{clock_id, 0, 0, client->machine_row}, anchor + (uint64_t)offset, 1, 0},
		};
		tm_error err;
		if (insert(c, rd, 2, &err) >= 0)
			edges++;
		i = j;
	}
	free(offs);
	for (size_t i = 0; i < n_rounds; i++)
		free(tabs[i].e);
	free(tabs);
	return edges;
}
