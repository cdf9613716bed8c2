/* core/clock_graph.c - spec/clocks.md §3 and §4: the graph of clock
 * snapshots and conversion along it. */
#include "clock.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_HOPS 4 /* §4.1: paths of 4 edges are never expanded */

typedef struct series {
	uint32_t hash;
	size_t n, cap;
	int64_t *val;   /* ns, in insertion order */
	uint64_t *snap; /* snapshot ids, increasing */
} series;

typedef struct edge {
	uint32_t to;    /* node index */
	uint32_t hash;
} edge;

typedef struct node {
	tm_clock_node key;
	uint64_t unit;
	int incremental;
	int non_monotonic;
	int64_t running; /* incremental nodes: §4.4 */
	series *series;
	size_t n_series;
	edge *out;       /* sorted by (to key, hash) */
	size_t n_out, cap_out;
} node;

typedef struct path {
	uint8_t len;
	uint32_t nodes[MAX_HOPS + 1];
	uint32_t hashes[MAX_HOPS];
} path;

typedef struct cached {
	uint32_t src, dst;
	uint64_t version;
	int found;
	path p;
} cached;

struct tm_clock_graph {
	node *nodes;
	size_t n, cap;
	tm_clock_node tt;
	uint64_t next_snap;
	uint64_t version; /* bumped whenever edges change */
	cached *cache;
	size_t n_cache, cap_cache;
	uint64_t searches;
};

static int node_cmp(tm_clock_node a, tm_clock_node b)
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
	return node_cmp(a, b) == 0;
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

static uint64_t mix(uint64_t x)
{
	x ^= x >> 33;
	x *= UINT64_C(0xff51afd7ed558ccd);
	x ^= x >> 33;
	x *= UINT64_C(0xc4ceb9fe1a85ec53);
	x ^= x >> 33;
	return x;
}

uint32_t tm_clock_snapshot_hash(const tm_clock_node *nodes, size_t n)
{
	uint64_t h = 0xe17a1465;
	for (size_t i = 0; i < n; i++) {
		uint64_t v[4] = {nodes[i].clock_id, nodes[i].seq_id, nodes[i].file_id, nodes[i].machine_row};
		for (int k = 0; k < 4; k++)
			h ^= mix(v[k]) + 0x9e3779b9 + (h << 6) + (h >> 2);
	}
	return (uint32_t)h;
}

tm_clock_graph *tm_clock_graph_new(void)
{
	tm_clock_graph *g = tm_xcalloc(1, sizeof(*g));
	g->tt = (tm_clock_node){TM_CLOCK_TRACE_FILE, 0, 0, 0}; /* §5.1 */
	return g;
}

void tm_clock_graph_free(tm_clock_graph *g)
{
	if (!g)
		return;
	for (size_t i = 0; i < g->n; i++) {
		node *nd = &g->nodes[i];
		for (size_t k = 0; k < nd->n_series; k++) {
			free(nd->series[k].val);
			free(nd->series[k].snap);
		}
		free(nd->series);
		free(nd->out);
	}
	free(g->nodes);
	free(g->cache);
	free(g);
}

void tm_clock_graph_set_trace_time(tm_clock_graph *g, tm_clock_node n)
{
	g->tt = n;
}

tm_clock_node tm_clock_graph_trace_time(const tm_clock_graph *g)
{
	return g->tt;
}

uint64_t tm_clock_graph_snapshot_count(const tm_clock_graph *g)
{
	return g->next_snap;
}

uint64_t tm_clock_graph_searches(const tm_clock_graph *g)
{
	return g->searches;
}

static int64_t find_node(const tm_clock_graph *g, tm_clock_node k)
{
	for (size_t i = 0; i < g->n; i++)
		if (node_eq(g->nodes[i].key, k))
			return (int64_t)i;
	return -1;
}

int tm_clock_graph_knows(const tm_clock_graph *g, tm_clock_node n)
{
	return find_node(g, n) >= 0;
}

static series *series_for(node *nd, uint32_t hash, int create)
{
	for (size_t i = 0; i < nd->n_series; i++)
		if (nd->series[i].hash == hash)
			return &nd->series[i];
	if (!create)
		return NULL;
	nd->series = tm_xrealloc(nd->series, (nd->n_series + 1) * sizeof(*nd->series));
	series *s = &nd->series[nd->n_series++];
	memset(s, 0, sizeof(*s));
	s->hash = hash;
	return s;
}

static void series_append(series *s, uint64_t snap, int64_t v)
{
	if (s->n == s->cap) {
		s->cap = s->cap ? s->cap * 2 : 4;
		s->val = tm_xrealloc(s->val, s->cap * sizeof(*s->val));
		s->snap = tm_xrealloc(s->snap, s->cap * sizeof(*s->snap));
	}
	s->val[s->n] = v;
	s->snap[s->n] = snap;
	s->n++;
}

/* §3.4: the edge set is a set, kept in (to-node, hash) order. */
static void add_edge(tm_clock_graph *g, uint32_t from, uint32_t to, uint32_t hash)
{
	node *nd = &g->nodes[from];
	size_t i = 0;
	for (; i < nd->n_out; i++) {
		int c = node_cmp(g->nodes[nd->out[i].to].key, g->nodes[to].key);
		if (c > 0 || (c == 0 && nd->out[i].hash >= hash))
			break;
	}
	if (i < nd->n_out && nd->out[i].to == to && nd->out[i].hash == hash)
		return;
	TM_GROW(nd->out, nd->cap_out, nd->n_out + 1);
	memmove(&nd->out[i + 1], &nd->out[i], (nd->n_out - i) * sizeof(*nd->out));
	nd->out[i] = (edge){to, hash};
	nd->n_out++;
	g->version++;
}

static int is_seq_clock(uint32_t id)
{
	return id >= TM_CLOCK_SEQ_FIRST && id <= TM_CLOCK_SEQ_LAST;
}

int64_t tm_clock_graph_add_snapshot(tm_clock_graph *g, const tm_clock_reading *r, size_t n, tm_error *err)
{
	uint64_t snap = g->next_snap++;
	tm_clock_node keys[64] = {{0}};
	tm_clock_node *kp = n <= 64 ? keys : tm_xmalloc(n * sizeof(*kp));
	for (size_t i = 0; i < n; i++)
		kp[i] = r[i].node;
	uint32_t hash = tm_clock_snapshot_hash(kp, n);
	if (kp != keys)
		free(kp);
	uint32_t idx_small[64];
	uint32_t *idx = n <= 64 ? idx_small : tm_xmalloc(n * sizeof(*idx));
	char id[64];
	int rc = 0;

	for (size_t k = 0; k < n; k++) {
		uint64_t unit = r[k].unit_ns ? r[k].unit_ns : 1;
		int incr = r[k].incremental != 0;
		int64_t i = find_node(g, r[k].node);
		/* §3.3: the offending node is registered before a check fails. */
		if (i < 0) {
			TM_GROW(g->nodes, g->cap, g->n + 1);
			node *nd = &g->nodes[g->n];
			memset(nd, 0, sizeof(*nd));
			nd->key = r[k].node;
			nd->unit = unit;
			nd->incremental = incr;
			i = (int64_t)g->n++;
			if (incr && !is_seq_clock(r[k].node.clock_id)) {
				rc = tm_err(err, TM_EINPUT,
					    "Clock sync error: the global clock with id=%s cannot use incremental "
					    "encoding; this is only supported for sequence-scoped clocks.",
					    tm_clock_node_str(r[k].node, id));
				break;
			}
		} else if (g->nodes[i].unit != unit || g->nodes[i].incremental != incr) {
			rc = tm_err(err, TM_EINPUT,
				    "Clock sync error: the clock domain with id=%s (unit=%" PRIu64
				    ", incremental=%d), was previously registered with different properties (unit=%" PRIu64
				    ", incremental=%d).",
				    tm_clock_node_str(r[k].node, id), unit, incr, g->nodes[i].unit,
				    g->nodes[i].incremental);
			break;
		}
		node *nd = &g->nodes[i];
		int is_tt = node_eq(nd->key, g->tt);
		if (is_tt && unit != 1) {
			rc = tm_err(err, TM_EINPUT,
				    "Clock sync error: the trace clock (id=%s) must always use nanoseconds as unit multiplier.",
				    tm_clock_node_str(nd->key, id));
			break;
		}
		for (size_t j = 0; j < k; j++) {
			if (idx[j] == (uint32_t)i) {
				rc = tm_err(err, TM_EINPUT, "Clock sync error: duplicate clock domain with id=%s at snapshot %" PRIu64 ".",
					    tm_clock_node_str(nd->key, id), snap);
				break;
			}
		}
		if (rc)
			break;
		int64_t v = (int64_t)(r[k].ts * unit);
		series *s = series_for(nd, hash, 1);
		if (s->n && v < s->val[s->n - 1]) {
			if (is_tt) {
				rc = tm_err(err, TM_EINPUT,
					    "Clock sync error: the trace clock (id=%s) is not monotonic at snapshot %" PRIu64
					    ". %" PRId64 " not >= %" PRId64 ".",
					    tm_clock_node_str(nd->key, id), snap, v, s->val[s->n - 1]);
				break;
			}
			/* §3.5: non-monotonic forever; edges leaving it go. */
			if (!nd->non_monotonic) {
				nd->non_monotonic = 1;
				nd->n_out = 0;
				g->version++;
			}
		}
		series_append(s, snap, v);
		if (nd->incremental)
			nd->running = v;
		idx[k] = (uint32_t)i;
	}
	if (!rc) {
		for (size_t a = 0; a < n; a++)
			for (size_t b = a + 1; b < n; b++) {
				if (!g->nodes[idx[a]].non_monotonic)
					add_edge(g, idx[a], idx[b], hash);
				if (!g->nodes[idx[b]].non_monotonic)
					add_edge(g, idx[b], idx[a], hash);
			}
	}
	if (idx != idx_small)
		free(idx);
	return rc ? -1 : (int64_t)snap;
}

/* §4.1: breadth-first over paths, edges in set order, the first path that
 * reaches dst wins; no visited set; paths of 4 edges are not expanded. */
static int search(tm_clock_graph *g, uint32_t src, uint32_t dst, path *out)
{
	g->searches++;
	size_t head = 0, n = 1, cap = 64;
	path *q = tm_xmalloc(cap * sizeof(*q));
	memset(&q[0], 0, sizeof(q[0]));
	q[0].nodes[0] = src;
	int found = 0;
	while (head < n && !found) {
		path p = q[head++];
		if (p.len == MAX_HOPS)
			continue;
		const node *last = &g->nodes[p.nodes[p.len]];
		for (size_t e = 0; e < last->n_out; e++) {
			path np = p;
			np.hashes[np.len] = last->out[e].hash;
			np.nodes[++np.len] = last->out[e].to;
			if (last->out[e].to == dst) {
				*out = np;
				found = 1;
				break;
			}
			if (n == cap)
				q = tm_xrealloc(q, (cap *= 2) * sizeof(*q));
			q[n++] = np;
		}
	}
	free(q);
	return found;
}

static cached *find_path(tm_clock_graph *g, uint32_t src, uint32_t dst)
{
	cached *c = NULL;
	for (size_t i = 0; i < g->n_cache; i++)
		if (g->cache[i].src == src && g->cache[i].dst == dst) {
			c = &g->cache[i];
			break;
		}
	if (!c) {
		TM_GROW(g->cache, g->cap_cache, g->n_cache + 1);
		c = &g->cache[g->n_cache++];
		c->src = src;
		c->dst = dst;
		c->version = UINT64_MAX;
	}
	if (c->version != g->version) {
		c->found = search(g, src, dst, &c->p);
		c->version = g->version;
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

/* §4.3: the last snapshot whose value <= ns, else the first. */
static size_t nearest(const series *s, int64_t ns)
{
	size_t lo = 0, hi = s->n; /* upper bound */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (s->val[mid] <= ns)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? lo - 1 : 0;
}

static int value_at(const node *nd, uint32_t hash, uint64_t snap, int64_t *v)
{
	const series *s = NULL;
	for (size_t i = 0; i < nd->n_series; i++)
		if (nd->series[i].hash == hash)
			s = &nd->series[i];
	if (!s)
		return 0;
	size_t lo = 0, hi = s->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (s->snap[mid] < snap)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < s->n && s->snap[lo] == snap) {
		*v = s->val[lo];
		return 1;
	}
	return 0;
}

tm_conv tm_clock_graph_convert(tm_clock_graph *g, tm_clock_node src, int64_t value, tm_clock_node dst, int64_t *out)
{
	if (node_eq(src, dst)) {
		*out = value;
		return TM_CONV_OK;
	}
	int64_t s = find_node(g, src), d = find_node(g, dst);
	if (s < 0)
		return TM_CONV_UNKNOWN_SOURCE;
	if (d < 0)
		return TM_CONV_UNKNOWN_TARGET;
	cached *c = find_path(g, (uint32_t)s, (uint32_t)d);
	if (!c->found)
		return TM_CONV_NO_PATH;
	node *sn = &g->nodes[s];
	/* Arithmetic wraps like the reference's (clocks.md §10 "Overflow"). */
	uint64_t ns = (uint64_t)value * sn->unit;
	if (sn->incremental) {
		sn->running = (int64_t)((uint64_t)sn->running + ns);
		ns = (uint64_t)sn->running;
	}
	for (int h = 0; h < c->p.len; h++) {
		const node *a = &g->nodes[c->p.nodes[h]], *b = &g->nodes[c->p.nodes[h + 1]];
		const series *sa = series_for((node *)a, c->p.hashes[h], 0);
		if (!sa || !sa->n)
			continue;
		size_t i = nearest(sa, (int64_t)ns);
		int64_t vb;
		/* §3.3: an orphan value of A has no partner in B: skip the hop. */
		if (!value_at(b, c->p.hashes[h], sa->snap[i], &vb))
			continue;
		ns = ns - (uint64_t)sa->val[i] + (uint64_t)vb;
	}
	*out = (int64_t)ns;
	return TM_CONV_OK;
}
