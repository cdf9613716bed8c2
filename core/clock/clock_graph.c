/* core/clock/clock_graph.c - spec/clocks.md §3 and §4: the graph of clock
 * snapshots, path search and conversion along it. */
#include "clock/clock.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/hash.h"
#include "util/per_thread.h"
#include "util/ser.h"

#define MAX_HOPS 4    /* §4.1: paths of 4 edges are never expanded */
#define NO_DIST 0xff

/* The readings of one node in the snapshots of one hash: values (ns, in
 * insertion order) and snapshot ids (increasing). Most series hold one
 * reading (a file's bridge to trace time), kept inline: cap 0 means at
 * most one, in `one`; read them through vals() and snaps(). */
typedef struct series {
	uint32_t hash;
	uint32_t n, cap;
	uint8_t unsorted; /* a value below the one before it */
	union {
		struct {
			int64_t *val;
			uint32_t *snap;
		} heap;
		struct {
			int64_t val;
			uint32_t snap;
		} one;
	} u;
} series;

static const int64_t *vals(const series *s)
{
	return s->cap ? s->u.heap.val : &s->u.one.val;
}

static const uint32_t *snaps(const series *s)
{
	return s->cap ? s->u.heap.snap : &s->u.one.snap;
}

typedef struct edge {
	uint32_t to;   /* node index */
	uint32_t hash;
} edge;

/* Hash indexes of a node with many series or edges (the trace-time node
 * of an archive of many files has one of each per file): open addressing
 * over positions (index + 1, 0 = empty). Allocated when first needed. */
typedef struct node_ix {
	uint32_t *series;    /* by series hash */
	uint32_t series_cap;
	uint32_t *out;       /* by (to, hash) */
	uint32_t out_cap;
} node_ix;

typedef struct gnode {
	tm_clock_node key;
	uint64_t unit;
	size_t n_values;
	int64_t running; /* last snapshot value, then the §4.4 running value */
	series *series;
	edge *out;       /* in insertion order; edge-set order is (to key, hash) */
	node_ix *ix;     /* NULL while the node has few series and edges */
	uint32_t n_series, cap_series;
	uint32_t n_out, cap_out;
	uint8_t incremental;
	uint8_t non_monotonic;
} gnode;

static node_ix *ix_of(gnode *nd)
{
	if (!nd->ix)
		nd->ix = tm_xcalloc(1, sizeof(*nd->ix));
	return nd->ix;
}

/* A hop remembers its last answer: conversions come in runs of nearby
 * values, which mostly fall between the same two readings of a series.
 * The answer holds while both series have the lengths it was made with
 * (series only grow) and the value stays in the same gap of A's sorted
 * values. */
typedef struct hop_memo {
	uint32_t na, nb;  /* series lengths; na 0 = no answer */
	uint32_t k;       /* values of A <= the value */
	uint8_t skip;     /* no partner in B (§3.3) */
	int64_t delta;    /* what the hop adds */
} hop_memo;

typedef struct hop {
	uint32_t a, b, hash;
	uint32_t sa, sb; /* series indices in a and b (stable: series only grow) */
	hop_memo memo;
} hop;

typedef struct path {
	uint32_t len;
	hop hops[MAX_HOPS];
} path;

/* A path's last answer as a whole: while no series has grown, every value
 * in [lo, hi) takes each hop through the gap its hop memo holds, so the
 * conversion adds `add` (the hops' deltas, wrapped as they add up) with
 * no hop looked at. */
typedef struct span {
	uint64_t gen;     /* series_gen + 1 it was made at; 0 = none */
	int64_t lo, hi;
	uint64_t add;
} span;

typedef struct cached {
	uint64_t key;     /* src << 32 | dst, plus one; 0 = empty slot */
	uint64_t version; /* edge-set version the answer belongs to */
	int found;
	path p;
	span sp;
} cached;

/* What search() marks on the nodes it reaches: nothing is cleared between
 * searches (a search costs what it visits, not the size of the graph). */
typedef struct scratch {
	uint32_t *seen;  /* the id of the last search that reached the node */
	uint8_t *df;     /* hops from src */
	uint8_t *dt;     /* hops to dst along a shortest route, or NO_DIST */
	size_t cap;
	uint32_t id;
	uint32_t *list;  /* reached nodes, layer by layer */
	size_t list_cap;
} scratch;

static void scratch_free(scratch *sc);

/* A recorded snapshot. An accepted one keeps its readings compact in
 * `pool` (its nodes are registered and have the units it gave), a rejected
 * one as offered in `rpool` (some of its nodes may not exist). */
typedef struct record {
	tm_clock_provenance prov;
	uint32_t hash;
	uint32_t first;   /* readings: pool (accepted) or rpool range */
	uint8_t n;        /* 0 for an oversize snapshot (TM_CLOCK_SNAPSHOT_MAX fits) */
	uint8_t accepted;
} record;

/* An accepted snapshot's reading: a snapshot per file (an archive of many
 * files) makes these add up. */
typedef struct creading {
	uint64_t ts;
	uint32_t node;    /* index */
	uint8_t unit_zero; /* offered with unit_ns 0 (meaning 1) */
	uint8_t incremental;
} creading;

struct tm_clock_graph {
	gnode *nodes;
	size_t n, cap;
	uint32_t *index; /* open addressing: node index + 1, 0 = empty */
	size_t index_cap;
	tm_clock_node tt;
	uint64_t version; /* bumped whenever the edge set changes */
	uint64_t series_gen; /* bumped whenever a series grows */
	cached *cache;
	size_t cache_cap, cache_used;
	uint64_t searches;
	scratch sc;       /* for the searches of find_path */
	/* tm_clock_graph_convert's last (src, dst) and its cache slot + 1 */
	tm_clock_node memo_src, memo_dst;
	size_t memo_slot, memo_cap;
	uint64_t rejected;
	record *recs;
	size_t n_recs, cap_recs;
	/* the first accepted record of each hash, for hash_origin: open
	 * addressing over record index + 1, 0 = empty (a path names hashes;
	 * an archive of many files has a record per file and a path each) */
	uint32_t *origin_ix;
	size_t origin_cap, origin_used;
	creading *pool;
	size_t n_pool, cap_pool;
	tm_clock_reading *rpool;
	size_t n_rpool, cap_rpool;
};

/* ---- nodes ----------------------------------------------------------- */

int tm_clock_node_cmp(tm_clock_node a, tm_clock_node b)
{
	if (a.clock_id != b.clock_id)
		return a.clock_id < b.clock_id ? -1 : 1;
	if (a.seq_id != b.seq_id)
		return a.seq_id < b.seq_id ? -1 : 1;
	if (a.file_id != b.file_id)
		return a.file_id < b.file_id ? -1 : 1;
	if (a.machine_row != b.machine_row)
		return a.machine_row < b.machine_row ? -1 : 1;
	return 0;
}

static int node_eq(tm_clock_node a, tm_clock_node b)
{
	return a.clock_id == b.clock_id && a.seq_id == b.seq_id && a.file_id == b.file_id &&
	       a.machine_row == b.machine_row;
}

const char *tm_clock_node_str(tm_clock_node n, char *buf)
{
	if (!n.seq_id && !n.file_id && !n.machine_row)
		snprintf(buf, 64, "%" PRIu32, n.clock_id);
	else
		snprintf(buf, 64, "%" PRIu32 "(seq=%" PRIu32 ",tf=%" PRIu32 ",m=%" PRIu32 ")", n.clock_id, n.seq_id,
			 n.file_id, n.machine_row);
	return buf;
}

static const char *const origin_names[TM_CLOCK_ORIGIN_COUNT] = {
	[TM_CLOCK_ORIGIN_SNAPSHOT] = "clock_snapshot",
	[TM_CLOCK_ORIGIN_FTRACE] = "ftrace_bundle",
	[TM_CLOCK_ORIGIN_REMOTE_CLIENT] = "remote_clock_sync",
	[TM_CLOCK_ORIGIN_REMOTE_OFFSET] = "remote_clock_sync_offset",
	[TM_CLOCK_ORIGIN_MANIFEST] = "manifest",
	[TM_CLOCK_ORIGIN_FILE_TAG] = "file_tag_identity",
	[TM_CLOCK_ORIGIN_REALTIME] = "realtime_rendezvous",
	[TM_CLOCK_ORIGIN_ASSUMED] = "same_domain_assumption",
};

const char *tm_clock_origin_name(tm_clock_origin o)
{
	return (unsigned)o < TM_CLOCK_ORIGIN_COUNT ? origin_names[o] : "unknown";
}

static uint64_t mix(uint64_t x)
{
	x ^= x >> 33;
	x *= UINT64_C(0xff51afd7ed558ccd);
	x ^= x >> 33;
	x *= UINT64_C(0xc4ceb9fe1a85ec53);
	x ^= x >> 33;
	return x;
}

#define HASH_SEED UINT64_C(0xe17a1465)

static uint64_t hash_node(uint64_t h, tm_clock_node n)
{
	uint64_t v[4] = {n.clock_id, n.seq_id, n.file_id, n.machine_row};
	for (int k = 0; k < 4; k++)
		h ^= mix(v[k]) + 0x9e3779b9 + (h << 6) + (h >> 2);
	return h;
}

uint32_t tm_clock_snapshot_hash(const tm_clock_node *nodes, size_t n)
{
	uint64_t h = HASH_SEED;
	for (size_t i = 0; i < n; i++)
		h = hash_node(h, nodes[i]);
	return (uint32_t)h;
}

static uint64_t key_hash(tm_clock_node k)
{
	return tm_khash_pair((uint64_t)k.clock_id << 32 | k.seq_id, (uint64_t)k.file_id << 32 | k.machine_row);
}

static int64_t find_node(const tm_clock_graph *g, tm_clock_node k)
{
	if (!g->index_cap)
		return -1;
	size_t mask = g->index_cap - 1;
	for (size_t i = key_hash(k) & mask;; i = (i + 1) & mask) {
		uint32_t v = g->index[i];
		if (!v)
			return -1;
		if (node_eq(g->nodes[v - 1].key, k))
			return (int64_t)v - 1;
	}
}

static void index_put(uint32_t *index, size_t cap, tm_clock_node k, uint32_t v)
{
	size_t mask = cap - 1;
	size_t i = key_hash(k) & mask;
	while (index[i])
		i = (i + 1) & mask;
	index[i] = v;
}

static uint32_t add_node(tm_clock_graph *g, tm_clock_node k)
{
	if ((g->n + 1) * 2 > g->index_cap) {
		size_t cap = g->index_cap ? g->index_cap * 2 : 64;
		uint32_t *ix = tm_xcalloc(cap, sizeof(*ix));
		for (size_t i = 0; i < g->n; i++)
			index_put(ix, cap, g->nodes[i].key, (uint32_t)i + 1);
		free(g->index);
		g->index = ix;
		g->index_cap = cap;
	}
	TM_GROW(g->nodes, g->cap, g->n + 1);
	gnode *nd = &g->nodes[g->n];
	memset(nd, 0, sizeof(*nd));
	nd->key = k;
	nd->unit = 1;
	index_put(g->index, g->index_cap, k, (uint32_t)g->n + 1);
	return (uint32_t)g->n++;
}

/* ---- graph lifetime --------------------------------------------------- */

tm_clock_graph *tm_clock_graph_new(void)
{
	tm_clock_graph *g = tm_xcalloc(1, sizeof(*g));
	g->tt = (tm_clock_node){TM_CLOCK_TRACE_FILE, 0, 0, 0}; /* §5.1 */
	return g;
}

void tm_clock_graph_reserve(tm_clock_graph *g, size_t n)
{
	TM_RESERVE(g->nodes, g->cap, g->n + n);
	TM_RESERVE(g->recs, g->cap_recs, g->n_recs + n);
	TM_RESERVE(g->pool, g->cap_pool, g->n_pool + 2 * n);
}

void tm_clock_graph_free(tm_clock_graph *g)
{
	if (!g)
		return;
	for (size_t i = 0; i < g->n; i++) {
		gnode *nd = &g->nodes[i];
		for (size_t k = 0; k < nd->n_series; k++) {
			if (nd->series[k].cap) {
				free(nd->series[k].u.heap.val);
				free(nd->series[k].u.heap.snap);
			}
		}
		free(nd->series);
		free(nd->out);
		if (nd->ix) {
			free(nd->ix->series);
			free(nd->ix->out);
			free(nd->ix);
		}
	}
	scratch_free(&g->sc);
	free(g->nodes);
	free(g->index);
	free(g->cache);
	free(g->recs);
	free(g->origin_ix);
	free(g->pool);
	free(g->rpool);
	free(g);
}

void tm_clock_graph_set_trace_time(tm_clock_graph *g, tm_clock_node n)
{
	g->tt = n;
}

const tm_clock_node *tm_clock_graph_trace_time(const tm_clock_graph *g)
{
	return &g->tt;
}

uint64_t tm_clock_graph_snapshot_count(const tm_clock_graph *g)
{
	return g->n_recs;
}

uint64_t tm_clock_graph_rejected(const tm_clock_graph *g)
{
	return g->rejected;
}

uint64_t tm_clock_graph_searches(const tm_clock_graph *g)
{
	return g->searches;
}

int tm_clock_graph_knows(const tm_clock_graph *g, tm_clock_node n)
{
	return find_node(g, n) >= 0;
}

/* ---- series and edges ------------------------------------------------- */

/* Below this many series a node is searched linearly. */
#define SERIES_LINEAR 8

static size_t series_slot(const gnode *nd, uint32_t hash)
{
	return (size_t)(tm_khash_u64(hash) & (nd->ix->series_cap - 1));
}

static int64_t series_index(const gnode *nd, uint32_t hash)
{
	if (!nd->ix || !nd->ix->series) {
		for (uint32_t i = 0; i < nd->n_series; i++)
			if (nd->series[i].hash == hash)
				return i;
		return -1;
	}
	uint32_t mask = nd->ix->series_cap - 1;
	for (size_t i = series_slot(nd, hash);; i = (i + 1) & mask) {
		uint32_t v = nd->ix->series[i];
		if (!v)
			return -1;
		if (nd->series[v - 1].hash == hash)
			return (int64_t)v - 1;
	}
}

/* Keep the hash index of a node's series (once it has many) in step. */
static void series_index_put(gnode *nd, uint32_t i)
{
	if (nd->n_series <= SERIES_LINEAR)
		return;
	node_ix *x = ix_of(nd);
	if ((size_t)nd->n_series * 2 > x->series_cap) {
		free(x->series);
		x->series_cap = x->series_cap ? x->series_cap * 2 : 4 * SERIES_LINEAR;
		while ((size_t)nd->n_series * 2 > x->series_cap)
			x->series_cap *= 2;
		x->series = tm_xcalloc(x->series_cap, sizeof(*x->series));
		for (uint32_t k = 0; k < nd->n_series; k++) {
			size_t j = series_slot(nd, nd->series[k].hash);
			while (x->series[j])
				j = (j + 1) & (x->series_cap - 1);
			x->series[j] = k + 1;
		}
		return;
	}
	size_t j = series_slot(nd, nd->series[i].hash);
	while (x->series[j])
		j = (j + 1) & (x->series_cap - 1);
	x->series[j] = i + 1;
}

static series *series_get(gnode *nd, uint32_t hash)
{
	int64_t i = series_index(nd, hash);
	if (i >= 0)
		return &nd->series[i];
	if (nd->n_series == nd->cap_series) {
		nd->cap_series = nd->cap_series ? nd->cap_series * 2 : 1;
		nd->series = tm_xrealloc(nd->series, nd->cap_series * sizeof(*nd->series));
	}
	series *s = &nd->series[nd->n_series++];
	memset(s, 0, sizeof(*s));
	s->hash = hash;
	series_index_put(nd, nd->n_series - 1);
	return s;
}

static void series_append(series *s, uint32_t snap, int64_t v)
{
	if (!s->cap && !s->n) {
		s->u.one.val = v;
		s->u.one.snap = snap;
		s->n = 1;
		return;
	}
	if (!s->cap) { /* the second reading: the series moves to the heap */
		int64_t v0 = s->u.one.val;
		uint32_t s0 = s->u.one.snap;
		s->cap = 4;
		s->u.heap.val = tm_xmalloc(s->cap * sizeof(*s->u.heap.val));
		s->u.heap.snap = tm_xmalloc(s->cap * sizeof(*s->u.heap.snap));
		s->u.heap.val[0] = v0;
		s->u.heap.snap[0] = s0;
	} else if (s->n == s->cap) {
		s->cap *= 2;
		s->u.heap.val = tm_xrealloc(s->u.heap.val, s->cap * sizeof(*s->u.heap.val));
		s->u.heap.snap = tm_xrealloc(s->u.heap.snap, s->cap * sizeof(*s->u.heap.snap));
	}
	if (v < s->u.heap.val[s->n - 1])
		s->unsorted = 1;
	s->u.heap.val[s->n] = v;
	s->u.heap.snap[s->n] = snap;
	s->n++;
}

static int edge_cmp(const tm_clock_graph *g, edge a, edge b)
{
	int c = tm_clock_node_cmp(g->nodes[a.to].key, g->nodes[b.to].key);
	if (c)
		return c;
	return a.hash < b.hash ? -1 : a.hash > b.hash;
}

/* Below this many edges a node's edges are searched linearly. */
#define EDGES_LINEAR 8

static size_t edge_slot(const gnode *nd, uint32_t to, uint32_t hash)
{
	return (size_t)(tm_khash_u64((uint64_t)to << 32 | hash) & (nd->ix->out_cap - 1));
}

/* The position of edge (to, hash) among nd's edges, or -1. */
static int64_t edge_find(const gnode *nd, uint32_t to, uint32_t hash)
{
	if (!nd->ix || !nd->ix->out) {
		for (uint32_t i = 0; i < nd->n_out; i++)
			if (nd->out[i].to == to && nd->out[i].hash == hash)
				return i;
		return -1;
	}
	uint32_t mask = nd->ix->out_cap - 1;
	for (size_t i = edge_slot(nd, to, hash);; i = (i + 1) & mask) {
		uint32_t v = nd->ix->out[i];
		if (!v)
			return -1;
		if (nd->out[v - 1].to == to && nd->out[v - 1].hash == hash)
			return (int64_t)v - 1;
	}
}

static void edge_index_put(gnode *nd, uint32_t i)
{
	if (nd->n_out <= EDGES_LINEAR)
		return;
	node_ix *x = ix_of(nd);
	if ((size_t)nd->n_out * 2 > x->out_cap) {
		free(x->out);
		x->out_cap = x->out_cap ? x->out_cap * 2 : 4 * EDGES_LINEAR;
		while ((size_t)nd->n_out * 2 > x->out_cap)
			x->out_cap *= 2;
		x->out = tm_xcalloc(x->out_cap, sizeof(*x->out));
		for (uint32_t k = 0; k < nd->n_out; k++) {
			size_t j = edge_slot(nd, nd->out[k].to, nd->out[k].hash);
			while (x->out[j])
				j = (j + 1) & (x->out_cap - 1);
			x->out[j] = k + 1;
		}
		return;
	}
	size_t j = edge_slot(nd, nd->out[i].to, nd->out[i].hash);
	while (x->out[j])
		j = (j + 1) & (x->out_cap - 1);
	x->out[j] = i + 1;
}

/* §3.5: a node that turns non-monotonic loses the edges leaving it. */
static void edges_clear(gnode *nd)
{
	nd->n_out = 0;
	if (nd->ix) {
		free(nd->ix->out);
		nd->ix->out = NULL;
		nd->ix->out_cap = 0;
	}
}

/* §3.4: the edge set is a set. Edges are kept in insertion order (the
 * trace-time node of an archive of many files gets one per file, in file
 * id order that processing order does not follow), and put in edge-set
 * order where the order matters: the path walk and the iterator. */
static void add_edge(tm_clock_graph *g, uint32_t from, uint32_t to, uint32_t hash)
{
	gnode *nd = &g->nodes[from];
	if (edge_find(nd, to, hash) >= 0)
		return;
	if (nd->n_out == nd->cap_out) {
		nd->cap_out = nd->cap_out ? nd->cap_out * 2 : 2;
		nd->out = tm_xrealloc(nd->out, nd->cap_out * sizeof(*nd->out));
	}
	nd->out[nd->n_out++] = (edge){to, hash};
	edge_index_put(nd, nd->n_out - 1);
	g->version++;
}

/* ---- insertion (§3.3-§3.5) -------------------------------------------- */

static size_t record_snapshot(tm_clock_graph *g, const tm_clock_provenance *prov, uint32_t hash)
{
	TM_GROW(g->recs, g->cap_recs, g->n_recs + 1);
	record *rec = &g->recs[g->n_recs];
	memset(rec, 0, sizeof(*rec));
	rec->prov = prov ? *prov : (tm_clock_provenance){TM_CLOCK_ORIGIN_SNAPSHOT, 0, 0};
	rec->hash = hash;
	return g->n_recs++;
}

/* The readings of a rejected snapshot, as offered. */
static void record_rejected(tm_clock_graph *g, uint32_t snap, const tm_clock_reading *r, size_t n)
{
	TM_GROW(g->rpool, g->cap_rpool, g->n_rpool + n);
	if (n)
		memcpy(&g->rpool[g->n_rpool], r, n * sizeof(*r));
	g->recs[snap].first = (uint32_t)g->n_rpool;
	g->recs[snap].n = (uint8_t)n;
	g->n_rpool += n;
}

/* The slot of `hash` in the origin index (which has one): the one that
 * holds its record, else the empty one where it goes. */
static size_t origin_slot(const tm_clock_graph *g, uint32_t hash)
{
	size_t mask = g->origin_cap - 1, k = tm_khash_u64(hash) & mask;
	while (g->origin_ix[k] && g->recs[g->origin_ix[k] - 1].hash != hash)
		k = (k + 1) & mask;
	return k;
}

/* Record `snap` (accepted) as its hash's first accepted one, unless one
 * before it is. */
static void origin_put(tm_clock_graph *g, uint32_t snap)
{
	if ((g->origin_used + 1) * 2 > g->origin_cap) {
		uint32_t *old = g->origin_ix;
		size_t old_cap = g->origin_cap;
		g->origin_cap = old_cap ? old_cap * 2 : 64;
		g->origin_ix = tm_xcalloc(g->origin_cap, sizeof(*g->origin_ix));
		for (size_t i = 0; i < old_cap; i++)
			if (old[i])
				g->origin_ix[origin_slot(g, g->recs[old[i] - 1].hash)] = old[i];
		free(old);
	}
	uint32_t *v = &g->origin_ix[origin_slot(g, g->recs[snap].hash)];
	if (!*v)
		g->origin_used++;
	if (!*v || snap + 1 < *v)
		*v = snap + 1;
}

/* The readings of an accepted snapshot, by node index. */
static void record_accepted(tm_clock_graph *g, uint32_t snap, const tm_clock_reading *r, const uint32_t *idx,
			    size_t n)
{
	TM_GROW(g->pool, g->cap_pool, g->n_pool + n);
	for (size_t k = 0; k < n; k++)
		g->pool[g->n_pool + k] = (creading){r[k].ts, idx[k], r[k].unit_ns == 0, r[k].incremental != 0};
	g->recs[snap].first = (uint32_t)g->n_pool;
	g->recs[snap].n = (uint8_t)n;
	g->recs[snap].accepted = 1;
	g->n_pool += n;
	origin_put(g, snap);
}

/* Stores one reading; returns 0, or -1 with the §3.3 message. Follows the
 * reference's order of checks, so that a rejection leaves exactly its
 * traces behind (§3.3: the node registered, earlier readings stored, an
 * incremental node's running value reset). */
static int store_reading(tm_clock_graph *g, const tm_clock_reading *rd, uint32_t snap, uint32_t hash, uint32_t *idx,
			 tm_error *err)
{
	char id[64];
	uint64_t unit = rd->unit_ns ? rd->unit_ns : 1;
	int incr = rd->incremental != 0;
	int64_t found = find_node(g, rd->node);
	uint32_t i = found >= 0 ? (uint32_t)found : add_node(g, rd->node);
	gnode *nd = &g->nodes[i];
	if (!nd->n_values) {
		/* Only sequence-scoped nodes carry a sequence id (§2.2). */
		if (incr && !rd->node.seq_id)
			return tm_err(err, TM_EINPUT,
				      "Clock sync error: the global clock with id=%s cannot use incremental encoding; this "
				      "is only supported for sequence-scoped clocks.",
				      tm_clock_node_str(rd->node, id));
		nd->unit = unit;
		nd->incremental = (uint8_t)incr;
	} else if (nd->unit != unit || nd->incremental != incr) {
		return tm_err(err, TM_EINPUT,
			      "Clock sync error: the clock domain with id=%s (unit=%" PRId64
			      ", incremental=%d), was previously registered with different properties (unit=%" PRId64
			      ", incremental=%d).",
			      tm_clock_node_str(rd->node, id), (int64_t)unit, incr, (int64_t)nd->unit, nd->incremental);
	}
	int is_tt = node_eq(rd->node, g->tt);
	if (is_tt && nd->unit != 1)
		return tm_err(err, TM_EINPUT,
			      "Clock sync error: the trace clock (id=%s) must always use nanoseconds as unit multiplier.",
			      tm_clock_node_str(rd->node, id));
	int64_t v = (int64_t)(rd->ts * nd->unit);
	nd->running = v; /* §4.4: a snapshot resets the running value */
	series *s = series_get(nd, hash);
	if (s->n && snaps(s)[s->n - 1] == snap)
		return tm_err(err, TM_EINPUT, "Clock sync error: duplicate clock domain with id=%s at snapshot %" PRIu32 ".",
			      tm_clock_node_str(rd->node, id), snap);
	if (s->n && v < vals(s)[s->n - 1]) {
		if (is_tt)
			return tm_err(err, TM_EINPUT,
				      "Clock sync error: the trace clock (id=%s) is not monotonic at snapshot %" PRIu32
				      ". %" PRId64 " not >= %" PRId64 ".",
				      tm_clock_node_str(rd->node, id), snap, v, vals(s)[s->n - 1]);
		/* §3.5: non-monotonic forever; the edges leaving it go, those
		 * entering it stay. */
		nd->non_monotonic = 1;
		if (nd->n_out) {
			edges_clear(nd);
			g->version++;
		}
	}
	series_append(s, snap, v);
	g->series_gen++;
	nd->n_values++;
	*idx = i;
	return 0;
}

int64_t tm_clock_graph_insert(tm_clock_graph *g, const tm_clock_reading *r, size_t n, const tm_clock_provenance *prov,
			      tm_error *err)
{
	uint64_t h = HASH_SEED;
	for (size_t i = 0; i < n; i++)
		h = hash_node(h, r[i].node);
	uint32_t hash = (uint32_t)h;
	/* An oversize snapshot is recorded without its readings: hostile input
	 * must not make the record pool grow beyond what the graph keeps. */
	uint32_t snap = (uint32_t)record_snapshot(g, prov, hash);

	if (n > TM_CLOCK_SNAPSHOT_MAX) {
		g->rejected++;
		return tm_err(err, TM_EINPUT,
			      "Clock sync error: snapshot %" PRIu32 " lists %zu clocks; at most %d are supported.", snap,
			      n, TM_CLOCK_SNAPSHOT_MAX);
	}
	uint32_t idx[TM_CLOCK_SNAPSHOT_MAX];
	for (size_t k = 0; k < n; k++) {
		if (store_reading(g, &r[k], snap, hash, &idx[k], err) < 0) {
			g->rejected++;
			record_rejected(g, snap, r, n);
			return -1;
		}
	}
	for (size_t a = 0; a < n; a++)
		for (size_t b = a + 1; b < n; b++) {
			if (!g->nodes[idx[a]].non_monotonic)
				add_edge(g, idx[a], idx[b], hash);
			if (!g->nodes[idx[b]].non_monotonic)
				add_edge(g, idx[b], idx[a], hash);
		}
	record_accepted(g, snap, r, idx, n);
	return snap;
}

int64_t tm_clock_graph_add_snapshot(tm_clock_graph *g, const tm_clock_reading *r, size_t n, tm_error *err)
{
	return tm_clock_graph_insert(g, r, n, NULL, err);
}

/* ---- path search (§4.1) ------------------------------------------------ */

static void scratch_free(scratch *sc)
{
	free(sc->seen);
	free(sc->df);
	free(sc->dt);
	free(sc->list);
	memset(sc, 0, sizeof(*sc));
}

/* A memo of a trimmed cache cannot be taken for current: its capacity is
 * not 0 (tm_clock_graph_convert_again), and a slot is only used when it
 * holds the memo's key at the current version. */
void tm_clock_graph_trim(tm_clock_graph *g)
{
	free(g->cache);
	g->cache = NULL;
	g->cache_cap = g->cache_used = 0;
	g->memo_slot = g->memo_cap = 0;
	scratch_free(&g->sc);
}

/* A fresh search id, the per-node arrays covering n nodes. */
static uint32_t scratch_begin(scratch *sc, size_t n)
{
	if (sc->cap < n) {
		size_t cap = sc->cap ? sc->cap : 64;
		while (cap < n)
			cap *= 2;
		sc->seen = tm_xrealloc(sc->seen, cap * sizeof(*sc->seen));
		memset(sc->seen + sc->cap, 0, (cap - sc->cap) * sizeof(*sc->seen));
		sc->df = tm_xrealloc(sc->df, cap);
		sc->dt = tm_xrealloc(sc->dt, cap);
		sc->cap = cap;
	}
	if (++sc->id == 0) { /* wrapped: forget every mark */
		memset(sc->seen, 0, sc->cap * sizeof(*sc->seen));
		sc->id = 1;
	}
	return sc->id;
}

static void scratch_push(scratch *sc, size_t *n, uint32_t v)
{
	TM_GROW(sc->list, sc->list_cap, *n + 1);
	sc->list[(*n)++] = v;
}

/* The scratch of the searches on a const graph: one per thread, kept (and
 * given back when the thread ends), so that every file of an archive of
 * 100,000 does not allocate and clear arrays the size of the graph
 * (placement searches once per file; FUSE serves on several threads). */
static void const_sc_destroy(void *p)
{
	scratch_free(p);
	free(p);
}

static tm_per_thread const_sc = TM_PER_THREAD(scratch, const_sc_destroy);

/* The reference's search is a breadth-first walk over paths in FIFO order,
 * each path extended by its last node's edges in edge-set order, returning
 * at the first edge that reaches dst, never extending paths of 4 edges.
 * Its answer is therefore the shortest path (of at most 4 edges) whose
 * edge sequence is smallest in edge-set order, compared edge by edge. That
 * path is found here without enumerating paths (which grows as degree^4),
 * and visiting only what lies within that many hops of src (an archive of
 * many files has many nodes, and every file searches): breadth-first layers
 * from src up to the one that holds dst (length L); then, back from dst,
 * which of those nodes lie on a shortest route (a node of layer d with an
 * edge to a route node of layer d + 1); then from src the first edge in
 * edge-set order that stays on a route, at every step. A node on a route
 * is exactly a node whose distance to dst is L minus its layer, so each
 * step picks the edge the reference's walk picks (edges are kept in
 * insertion order: the smallest in edge-set order is chosen). */
static int search(const tm_clock_graph *g, scratch *sc, uint32_t src, uint32_t dst, path *out)
{
	uint32_t id = scratch_begin(sc, g->n);
	size_t layer[MAX_HOPS + 2], n = 0;
	int len = -1;
	sc->seen[src] = id;
	sc->df[src] = 0;
	sc->dt[src] = NO_DIST;
	scratch_push(sc, &n, src);
	layer[0] = 0;
	layer[1] = n;
	/* Reaching dst ends the walk at once: the way back below only needs
	 * the layers before dst's, and which of their nodes have an edge to
	 * dst (a hub of many files' clocks must not be walked whole by every
	 * search). */
	for (int d = 0; d < MAX_HOPS && len < 0 && layer[d] < layer[d + 1]; d++) {
		for (size_t i = layer[d]; i < layer[d + 1] && len < 0; i++) {
			const gnode *nd = &g->nodes[sc->list[i]];
			for (uint32_t e = 0; e < nd->n_out; e++) {
				uint32_t v = nd->out[e].to;
				if (sc->seen[v] == id)
					continue;
				sc->seen[v] = id;
				sc->df[v] = (uint8_t)(d + 1);
				sc->dt[v] = NO_DIST;
				scratch_push(sc, &n, v);
				if (v == dst) {
					len = d + 1;
					break;
				}
			}
		}
		layer[d + 2] = n;
	}
	if (len < 0)
		return 0;
	sc->dt[dst] = 0;
	for (int d = len - 1; d >= 0; d--)
		for (size_t i = layer[d]; i < layer[d + 1]; i++) {
			uint32_t u = sc->list[i];
			const gnode *nd = &g->nodes[u];
			for (uint32_t e = 0; e < nd->n_out; e++) {
				uint32_t v = nd->out[e].to;
				if (sc->seen[v] == id && sc->df[v] == d + 1 && sc->dt[v] == len - d - 1) {
					sc->dt[u] = (uint8_t)(len - d);
					break;
				}
			}
		}
	out->len = 0;
	for (uint32_t u = src; u != dst;) {
		const gnode *nd = &g->nodes[u];
		const edge *best = NULL;
		for (uint32_t e = 0; e < nd->n_out; e++) {
			uint32_t v = nd->out[e].to;
			if (sc->seen[v] == id && sc->df[v] == sc->df[u] + 1 && sc->dt[v] == sc->dt[u] - 1 &&
			    (!best || edge_cmp(g, nd->out[e], *best) < 0))
				best = &nd->out[e];
		}
		hop *h = &out->hops[out->len++];
		h->a = u;
		h->b = best->to;
		h->hash = best->hash;
		h->sa = (uint32_t)series_index(nd, h->hash);
		h->sb = (uint32_t)series_index(&g->nodes[h->b], h->hash);
		h->memo.na = 0;
		u = h->b;
	}
	return 1;
}

static cached *cache_slot(tm_clock_graph *g, uint64_t key)
{
	size_t mask = g->cache_cap - 1;
	for (size_t i = mix(key) & mask;; i = (i + 1) & mask)
		if (g->cache[i].key == key || !g->cache[i].key)
			return &g->cache[i];
}

/* Answers the path cache keeps; beyond, it starts over. Each file converts
 * from its own clocks, so an archive of many files would otherwise keep an
 * answer per file for ever (100 bytes each). */
#define CACHE_MAX 4096

/* The (src, dst) answer for the current edge set, searching on a miss. */
static cached *find_path(tm_clock_graph *g, uint32_t src, uint32_t dst)
{
	if (g->cache_used >= CACHE_MAX) {
		memset(g->cache, 0, g->cache_cap * sizeof(*g->cache));
		g->cache_used = 0;
		g->memo_slot = 0;
	}
	if ((g->cache_used + 1) * 2 > g->cache_cap) {
		size_t cap = g->cache_cap ? g->cache_cap * 2 : 16;
		cached *old = g->cache;
		size_t old_cap = g->cache_cap;
		g->cache = tm_xcalloc(cap, sizeof(*g->cache));
		g->cache_cap = cap;
		for (size_t i = 0; i < old_cap; i++)
			if (old[i].key)
				*cache_slot(g, old[i].key) = old[i];
		free(old);
	}
	uint64_t key = ((uint64_t)src << 32 | dst) + 1;
	cached *c = cache_slot(g, key);
	if (!c->key) {
		c->key = key;
		c->version = g->version + 1; /* stale */
		g->cache_used++;
	}
	if (c->version != g->version) {
		g->searches++;
		c->found = search(g, &g->sc, src, dst, &c->p);
		c->version = g->version;
		c->sp.gen = 0;
	}
	return c;
}

int tm_clock_graph_has_path(tm_clock_graph *g, tm_clock_node src, tm_clock_node dst)
{
	if (node_eq(src, dst))
		return 1;
	int64_t s = find_node(g, src), d = find_node(g, dst);
	return s >= 0 && d >= 0 && find_path(g, (uint32_t)s, (uint32_t)d)->found;
}

int tm_clock_graph_reaches(const tm_clock_graph *g, tm_clock_node src, tm_clock_node dst)
{
	if (node_eq(src, dst))
		return 1;
	int64_t s = find_node(g, src), d = find_node(g, dst);
	if (s < 0 || d < 0)
		return 0;
	path p;
	int found = search(g, tm_per_thread_get(&const_sc), (uint32_t)s, (uint32_t)d, &p);
	return found;
}

void tm_clock_graph_reaching(const tm_clock_graph *g, tm_clock_node dst, unsigned char *reach)
{
	memset(reach, 0, g->n);
	int64_t d = find_node(g, dst);
	if (d < 0)
		return;
	/* The layers of search() backwards from dst, over every node at once:
	 * a node reaches dst in k + 1 hops when an edge leads to one that
	 * reaches it in k. */
	uint8_t *dist = tm_xmalloc(g->n ? g->n : 1);
	memset(dist, NO_DIST, g->n);
	dist[d] = 0;
	for (uint8_t k = 0; k < MAX_HOPS; k++) {
		int grew = 0;
		for (size_t u = 0; u < g->n; u++) {
			if (dist[u] != NO_DIST)
				continue;
			const gnode *nd = &g->nodes[u];
			for (uint32_t e = 0; e < nd->n_out; e++)
				if (dist[nd->out[e].to] == k) {
					dist[u] = (uint8_t)(k + 1);
					grew = 1;
					break;
				}
		}
		if (!grew)
			break;
	}
	for (size_t u = 0; u < g->n; u++)
		reach[u] = dist[u] != NO_DIST;
	free(dist);
}

int tm_clock_graph_path(const tm_clock_graph *g, tm_clock_node src, tm_clock_node dst, tm_clock_hop *hops)
{
	if (node_eq(src, dst))
		return 0;
	int64_t s = find_node(g, src), d = find_node(g, dst);
	if (s < 0 || d < 0)
		return -1;
	path p;
	int found = search(g, tm_per_thread_get(&const_sc), (uint32_t)s, (uint32_t)d, &p);
	if (!found)
		return -1;
	for (uint32_t h = 0; h < p.len; h++) {
		hops[h].from = g->nodes[p.hops[h].a].key;
		hops[h].to = g->nodes[p.hops[h].b].key;
		hops[h].hash = p.hops[h].hash;
		hops[h].origin = tm_clock_graph_hash_origin(g, p.hops[h].hash);
	}
	return (int)p.len;
}

tm_clock_origin tm_clock_graph_hash_origin(const tm_clock_graph *g, uint32_t hash)
{
	uint32_t v = g->origin_cap ? g->origin_ix[origin_slot(g, hash)] : 0;
	return v ? g->recs[v - 1].prov.origin : TM_CLOCK_ORIGIN_SNAPSHOT;
}

/* ---- conversion (§4) --------------------------------------------------- */

/* §4.3: the last snapshot whose value <= ns, else the first. *k is how
 * many values the search counted as <= ns. */
static uint32_t nearest(const series *s, int64_t ns, uint32_t *k)
{
	const int64_t *val = vals(s);
	uint32_t lo = 0, hi = s->n; /* upper bound */
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (val[mid] <= ns)
			lo = mid + 1;
		else
			hi = mid;
	}
	*k = lo;
	return lo ? lo - 1 : 0;
}

static int value_at(const series *s, uint32_t snap, int64_t *v)
{
	const uint32_t *sn = snaps(s);
	uint32_t lo = 0, hi = s->n;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (sn[mid] < snap)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < s->n && sn[lo] == snap) {
		*v = vals(s)[lo];
		return 1;
	}
	return 0;
}

tm_conv tm_clock_graph_convert(tm_clock_graph *g, tm_clock_node src, int64_t value, tm_clock_node dst, int64_t *out)
{
	return tm_clock_graph_convert_memo(g, src, value, dst, out, NULL);
}

int tm_clock_graph_convert_again(tm_clock_graph *g, const tm_conv_memo *m, int64_t value, int64_t *out)
{
	/* the same cache entry, for the same edges, in the same place */
	if (!m->valid || m->version != g->version || m->cap != g->cache_cap)
		return 0;
	const cached *c = &g->cache[m->slot];
	gnode *sn = &g->nodes[m->s];
	if (c->key != m->key || c->version != g->version)
		return 0;
	uint64_t ns = (uint64_t)value * sn->unit;
	if (sn->incremental) /* as tm_clock_graph_convert advances it */
		ns = (uint64_t)sn->running + ns;
	const span *sp = &c->sp;
	if (sp->gen != g->series_gen + 1 || (int64_t)ns < sp->lo || (int64_t)ns >= sp->hi)
		return 0;
	if (sn->incremental)
		sn->running = (int64_t)ns;
	*out = (int64_t)(ns + sp->add);
	return 1;
}

tm_conv tm_clock_graph_convert_memo(tm_clock_graph *g, tm_clock_node src, int64_t value, tm_clock_node dst,
				    int64_t *out, tm_conv_memo *m)
{
	if (m)
		m->valid = 0;
	if (node_eq(src, dst)) {
		*out = value;
		return TM_CONV_OK;
	}
	/* Conversions come in runs of the same (src, dst): the last answer's
	 * cache slot is tried first. It still holds that answer when its key
	 * names the same two nodes and its version is current (slots move
	 * only when the cache grows, which changes cache_cap). */
	int64_t s;
	cached *c;
	if (g->memo_slot && g->memo_cap == g->cache_cap && g->cache[g->memo_slot - 1].version == g->version &&
	    node_eq(g->memo_src, src) && node_eq(g->memo_dst, dst)) {
		c = &g->cache[g->memo_slot - 1];
		s = (int64_t)((c->key - 1) >> 32);
	} else {
		s = find_node(g, src);
		int64_t d = find_node(g, dst);
		if (s < 0)
			return TM_CONV_UNKNOWN_SOURCE;
		if (d < 0)
			return TM_CONV_UNKNOWN_TARGET;
		c = find_path(g, (uint32_t)s, (uint32_t)d);
		g->memo_slot = (size_t)(c - g->cache) + 1;
		g->memo_cap = g->cache_cap;
		g->memo_src = src;
		g->memo_dst = dst;
	}
	if (!c->found)
		return TM_CONV_NO_PATH;
	if (m)
		*m = (tm_conv_memo){c->key, g->version, (size_t)(c - g->cache), g->cache_cap, (uint32_t)s, 1};
	gnode *sn = &g->nodes[s];
	/* Arithmetic wraps like the reference's (clocks.md §10 "Overflow"). */
	uint64_t ns = (uint64_t)value * sn->unit;
	if (sn->incremental) {
		sn->running = (int64_t)((uint64_t)sn->running + ns);
		ns = (uint64_t)sn->running;
	}
	span *sp = &c->sp;
	if (sp->gen == g->series_gen + 1 && (int64_t)ns >= sp->lo && (int64_t)ns < sp->hi) {
		*out = (int64_t)(ns + sp->add);
		return TM_CONV_OK;
	}
	/* The span of source values that take every hop through the same gap:
	 * hop h sees the source value plus the deltas before it (`before`,
	 * not wrapped), and keeps its answer from va[k - 1] up to va[k]. The
	 * bounds stay inside int64, so within the span no sum wraps. */
	__int128 lo = INT64_MIN, hi = (__int128)INT64_MAX + 1, before = 0;
	int spans = 1;
	for (uint32_t h = 0; h < c->p.len; h++) {
		hop *hp = &c->p.hops[h];
		const series *sa = &g->nodes[hp->a].series[hp->sa];
		const series *sb = &g->nodes[hp->b].series[hp->sb];
		hop_memo *mo = &hp->memo;
		const int64_t *va = vals(sa);
		/* In a sorted series the search's answer depends only on the gap
		 * the value falls in; an unsorted one is searched every time. */
		if (mo->na != sa->n || mo->nb != sb->n || sa->unsorted || (mo->k && va[mo->k - 1] > (int64_t)ns) ||
		    (mo->k < sa->n && va[mo->k] <= (int64_t)ns)) {
			uint32_t i = nearest(sa, (int64_t)ns, &mo->k);
			int64_t vb;
			/* §3.3: an orphan value of A has no partner in B: skip the hop. */
			mo->skip = !value_at(sb, snaps(sa)[i], &vb);
			mo->delta = mo->skip ? 0 : (int64_t)((uint64_t)vb - (uint64_t)va[i]);
			mo->na = sa->n;
			mo->nb = sb->n;
		}
		if (sa->unsorted) {
			spans = 0;
		} else if (spans) {
			__int128 gap_lo = mo->k ? va[mo->k - 1] : INT64_MIN;
			__int128 gap_hi = mo->k < sa->n ? va[mo->k] : (__int128)INT64_MAX + 1;
			if (gap_lo - before > lo)
				lo = gap_lo - before;
			if (gap_hi - before < hi)
				hi = gap_hi - before;
		}
		if (!mo->skip) {
			ns += (uint64_t)mo->delta;
			before += mo->delta;
		}
	}
	if (spans && lo < hi) {
		sp->gen = g->series_gen + 1;
		sp->lo = (int64_t)lo;
		sp->hi = hi > INT64_MAX ? INT64_MAX : (int64_t)hi; /* INT64_MAX itself left out */
		sp->add = (uint64_t)before;
	} else {
		sp->gen = 0;
	}
	*out = (int64_t)ns;
	return TM_CONV_OK;
}

/* ---- introspection ------------------------------------------------------ */

size_t tm_clock_graph_node_count(const tm_clock_graph *g)
{
	return g->n;
}

void tm_clock_graph_node_info(const tm_clock_graph *g, size_t index, tm_clock_node_info *out)
{
	memset(out, 0, sizeof(*out));
	if (index >= g->n)
		return;
	const gnode *nd = &g->nodes[index];
	out->node = nd->key;
	out->unit_ns = nd->unit;
	out->incremental = nd->incremental;
	out->non_monotonic = nd->non_monotonic;
	out->is_trace_time = node_eq(nd->key, g->tt);
	out->n_values = nd->n_values;
}

int tm_clock_graph_next_edge(const tm_clock_graph *g, tm_clock_edge_iter *it, tm_clock_edge *out)
{
	while (it->node < g->n && it->k >= g->nodes[it->node].n_out) {
		it->node++;
		it->k = 0;
	}
	if (it->node >= g->n)
		return 0;
	/* Edges are stored in insertion order: the next in edge-set order is
	 * the smallest after the one returned last. */
	const gnode *nd = &g->nodes[it->node];
	const edge *next = NULL, *last = it->k ? &nd->out[it->last] : NULL;
	for (uint32_t e = 0; e < nd->n_out; e++)
		if ((!last || edge_cmp(g, nd->out[e], *last) > 0) && (!next || edge_cmp(g, nd->out[e], *next) < 0))
			next = &nd->out[e];
	it->last = (size_t)(next - nd->out);
	out->from = nd->key;
	out->to = g->nodes[next->to].key;
	out->hash = next->hash;
	it->k++;
	return 1;
}

int tm_clock_graph_has_edge(const tm_clock_graph *g, tm_clock_node from, tm_clock_node to, uint32_t hash)
{
	int64_t f = find_node(g, from), t = find_node(g, to);
	return f >= 0 && t >= 0 && edge_find(&g->nodes[f], (uint32_t)t, hash) >= 0;
}

int tm_clock_graph_snapshot(const tm_clock_graph *g, uint64_t id, tm_clock_snapshot_info *out)
{
	if (id >= g->n_recs)
		return 0;
	const record *rec = &g->recs[id];
	out->id = (uint32_t)id;
	out->prov = rec->prov;
	out->hash = rec->hash;
	out->accepted = rec->accepted;
	out->n_readings = rec->n;
	out->readings = NULL;
	if (rec->n && !rec->accepted) {
		out->readings = &g->rpool[rec->first];
	} else if (rec->n) {
		for (size_t k = 0; k < rec->n; k++) {
			const creading *c = &g->pool[rec->first + k];
			const gnode *nd = &g->nodes[c->node];
			out->buf[k] = (tm_clock_reading){nd->key, c->ts, c->unit_zero ? 0 : nd->unit, c->incremental};
		}
		out->readings = out->buf;
	}
	return 1;
}

/* ---- the index cache ------------------------------------------------------ */

void tm_clock_node_save(tm_ser_out *b, tm_clock_node k)
{
	tm_ser_u32(b, k.clock_id);
	tm_ser_u32(b, k.seq_id);
	tm_ser_u32(b, k.file_id);
	tm_ser_u32(b, k.machine_row);
}

tm_clock_node tm_clock_node_load(tm_ser_rd *r)
{
	tm_clock_node k;
	k.clock_id = tm_ser_get_u32(r);
	k.seq_id = tm_ser_get_u32(r);
	k.file_id = tm_ser_get_u32(r);
	k.machine_row = tm_ser_get_u32(r);
	return k;
}

void tm_clock_graph_save(const tm_clock_graph *g, tm_ser_out *out)
{
	tm_ser_u64(out, g->n);
	for (size_t i = 0; i < g->n; i++) {
		const gnode *nd = &g->nodes[i];
		tm_clock_node_save(out, nd->key);
		tm_ser_u64(out, nd->unit);
		tm_ser_u64(out, nd->n_values);
		tm_ser_i64(out, nd->running);
		tm_ser_u8(out, nd->incremental);
		tm_ser_u8(out, nd->non_monotonic);
		tm_ser_u64(out, nd->n_series);
		for (uint32_t k = 0; k < nd->n_series; k++) {
			const series *s = &nd->series[k];
			tm_ser_u32(out, s->hash);
			tm_ser_u64(out, s->n);
			for (uint32_t v = 0; v < s->n; v++) {
				tm_ser_i64(out, vals(s)[v]);
				tm_ser_u32(out, snaps(s)[v]);
			}
		}
		tm_ser_u64(out, nd->n_out);
		for (uint32_t e = 0; e < nd->n_out; e++) {
			tm_ser_u32(out, nd->out[e].to);
			tm_ser_u32(out, nd->out[e].hash);
		}
	}
	tm_clock_node_save(out, g->tt);
	tm_ser_u64(out, g->rejected);
	tm_ser_u64(out, g->n_recs);
	for (size_t i = 0; i < g->n_recs; i++) {
		const record *rec = &g->recs[i];
		tm_ser_u32(out, (uint32_t)rec->prov.origin);
		tm_ser_u32(out, rec->prov.file_id);
		tm_ser_u32(out, rec->prov.machine_row);
		tm_ser_u32(out, rec->hash);
		tm_ser_u32(out, rec->first);
		tm_ser_u8(out, rec->n);
		tm_ser_u8(out, rec->accepted);
	}
	tm_ser_u64(out, g->n_pool);
	for (size_t i = 0; i < g->n_pool; i++) {
		tm_ser_u64(out, g->pool[i].ts);
		tm_ser_u32(out, g->pool[i].node);
		tm_ser_u8(out, g->pool[i].unit_zero);
		tm_ser_u8(out, g->pool[i].incremental);
	}
	tm_ser_u64(out, g->n_rpool);
	for (size_t i = 0; i < g->n_rpool; i++) {
		const tm_clock_reading *rd = &g->rpool[i];
		tm_clock_node_save(out, rd->node);
		tm_ser_u64(out, rd->ts);
		tm_ser_u64(out, rd->unit_ns);
		tm_ser_u8(out, rd->incremental != 0);
	}
}

/* What a node, series, edge, record or reading takes when written, at
 * least (a byte per field): counts are checked against what is left
 * (tm_ser_count). */
enum { MIN_NODE = 11, MIN_SERIES = 2, MIN_VALUE = 2, MIN_EDGE = 2, MIN_REC = 7, MIN_CREADING = 4, MIN_READING = 7 };

tm_clock_graph *tm_clock_graph_load(tm_ser_rd *r)
{
	tm_clock_graph *g = tm_clock_graph_new();
	size_t n = tm_ser_count(r, MIN_NODE, UINT32_MAX);
	/* Sized once and exactly: growing them node by node would leave the
	 * old copies behind, and doubling up to half of it unused (a node per
	 * file in an archive of many files). */
	TM_RESERVE(g->nodes, g->cap, n);
	g->index_cap = 64;
	while (g->index_cap < 2 * n + 2)
		g->index_cap *= 2;
	g->index = tm_xcalloc(g->index_cap, sizeof(*g->index));
	for (size_t i = 0; i < n && !r->bad; i++) {
		tm_clock_node key = tm_clock_node_load(r);
		if (r->bad || find_node(g, key) >= 0) {
			tm_ser_fail(r, "a clock node twice");
			break;
		}
		uint32_t idx = add_node(g, key); /* may move g->nodes */
		gnode *nd = &g->nodes[idx];
		nd->unit = tm_ser_get_u64(r);
		nd->n_values = (size_t)tm_ser_get_u64(r);
		nd->running = tm_ser_get_i64(r);
		nd->incremental = tm_ser_get_u8(r) != 0;
		nd->non_monotonic = tm_ser_get_u8(r) != 0;
		size_t ns = tm_ser_count(r, MIN_SERIES, UINT32_MAX);
		if (ns) {
			nd->series = tm_xcalloc(ns, sizeof(*nd->series));
			nd->cap_series = (uint32_t)ns;
		}
		for (size_t k = 0; k < ns && !r->bad; k++) {
			series *s = series_get(nd, tm_ser_get_u32(r));
			size_t nv = tm_ser_count(r, MIN_VALUE, UINT32_MAX - s->n);
			for (size_t v = 0; v < nv && !r->bad; v++) {
				int64_t val = tm_ser_get_i64(r);
				series_append(s, tm_ser_get_u32(r), val);
			}
		}
		size_t ne = tm_ser_count(r, MIN_EDGE, UINT32_MAX);
		if (ne) {
			nd->out = tm_xcalloc(ne, sizeof(*nd->out));
			nd->cap_out = (uint32_t)ne;
		}
		for (size_t e = 0; e < ne && !r->bad; e++) {
			uint32_t to = tm_ser_get_u32(r), hash = tm_ser_get_u32(r);
			if (to >= n) {
				tm_ser_fail(r, "an edge to no node");
				break;
			}
			if (!r->bad) /* `to` may be registered later: add_edge looks at indexes only */
				add_edge(g, (uint32_t)i, to, hash);
		}
	}
	g->tt = tm_clock_node_load(r);
	g->rejected = tm_ser_get_u64(r);
	size_t nr = tm_ser_count(r, MIN_REC, UINT32_MAX);
	if (!r->bad) {
		g->recs = tm_xcalloc(nr ? nr : 1, sizeof(*g->recs));
		g->cap_recs = nr ? nr : 1;
	}
	for (size_t i = 0; i < nr && !r->bad; i++) {
		record *rec = &g->recs[g->n_recs++];
		rec->prov.origin = (tm_clock_origin)tm_ser_get_u32(r);
		rec->prov.file_id = tm_ser_get_u32(r);
		rec->prov.machine_row = tm_ser_get_u32(r);
		rec->hash = tm_ser_get_u32(r);
		rec->first = tm_ser_get_u32(r);
		rec->n = tm_ser_get_u8(r);
		rec->accepted = tm_ser_get_u8(r);
		if (rec->n > TM_CLOCK_SNAPSHOT_MAX || rec->accepted > 1 ||
		    (uint32_t)rec->prov.origin >= TM_CLOCK_ORIGIN_COUNT)
			tm_ser_fail(r, "a bad snapshot record");
	}
	for (size_t i = 0; i < g->n_recs && !r->bad; i++)
		if (g->recs[i].accepted)
			origin_put(g, (uint32_t)i);
	size_t np = tm_ser_count(r, MIN_CREADING, UINT32_MAX);
	if (!r->bad) {
		g->pool = tm_xcalloc(np ? np : 1, sizeof(*g->pool));
		g->cap_pool = np ? np : 1;
	}
	for (size_t i = 0; i < np && !r->bad; i++) {
		creading *c = &g->pool[g->n_pool++];
		c->ts = tm_ser_get_u64(r);
		c->node = tm_ser_get_u32(r);
		c->unit_zero = tm_ser_get_u8(r) != 0;
		c->incremental = tm_ser_get_u8(r) != 0;
		if (c->node >= g->n)
			tm_ser_fail(r, "a reading of no node");
	}
	size_t nq = tm_ser_count(r, MIN_READING, UINT32_MAX);
	if (!r->bad) {
		g->rpool = tm_xcalloc(nq ? nq : 1, sizeof(*g->rpool));
		g->cap_rpool = nq ? nq : 1;
	}
	for (size_t i = 0; i < nq && !r->bad; i++) {
		tm_clock_reading *rd = &g->rpool[g->n_rpool++];
		rd->node = tm_clock_node_load(r);
		rd->ts = tm_ser_get_u64(r);
		rd->unit_ns = tm_ser_get_u64(r);
		rd->incremental = tm_ser_get_u8(r) != 0;
	}
	for (size_t i = 0; i < g->n_recs && !r->bad; i++) {
		const record *rec = &g->recs[i];
		size_t pool = rec->accepted ? g->n_pool : g->n_rpool;
		if (rec->first > pool || rec->n > pool - rec->first)
			tm_ser_fail(r, "a snapshot's readings out of range");
	}
	if (r->bad) {
		tm_clock_graph_free(g);
		return NULL;
	}
	return g;
}
