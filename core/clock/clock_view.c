/* core/clock/clock_view.c - the clocks/ views and each file's placement:
 * clocks/graph.dot drawn for a person (issue 9), clocks/edges.csv with
 * every edge sample, and the path each file's timestamps took to trace
 * time (metadata.json `placement`). Read-only over core/clock/clock.h's public
 * API. */
#include "clock/clock.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/hash.h"

/* ---- names ------------------------------------------------------------------ */

static const char *machine_name(const tm_clock_labels *l, uint32_t row, char *buf)
{
	const char *s = l && l->machine ? l->machine(l->ctx, row) : NULL;
	if (s)
		return s;
	snprintf(buf, 32, "machine %" PRIu32, row);
	return buf;
}

static const char *file_name(const tm_clock_labels *l, uint32_t file_id, char *buf)
{
	const char *s = l && l->file ? l->file(l->ctx, file_id) : NULL;
	if (s && *s)
		return s;
	if (s)
		return "(the input)";
	snprintf(buf, 32, "file %" PRIu32, file_id);
	return buf;
}

static int node_eq(tm_clock_node a, tm_clock_node b)
{
	return !tm_clock_node_cmp(a, b);
}

/* How a hop was made, in the words of the views: a manifest edge is a PIN
 * when one end is a file's private clock (clocks.md §9.1), else a RELATE. */
const char *tm_clock_hop_name(const tm_clock_hop *h)
{
	if (h->origin == TM_CLOCK_ORIGIN_MANIFEST)
		return h->from.clock_id == TM_CLOCK_TRACE_FILE || h->to.clock_id == TM_CLOCK_TRACE_FILE ? "manifest_pin"
														: "manifest_relate";
	return tm_clock_origin_name(h->origin);
}

/* ---- placement ---------------------------------------------------------------- */

/* Sequence clocks of one file on one machine with the same route after
 * their first hop are one group: Chromium writes a clock per sequence. */
static int same_group(const tm_placement *p, const tm_clock_source *s, int n_hops, const tm_clock_hop *hops)
{
	if (p->from.seq_id == 0 || s->node.seq_id == 0 || p->from.clock_id != s->node.clock_id ||
	    p->from.file_id != s->node.file_id || p->from.machine_row != s->node.machine_row ||
	    p->n_hops != n_hops || (p->failed != 0) != (s->failed != 0))
		return 0;
	if (n_hops > 0 && p->hops[0].origin != hops[0].origin)
		return 0;
	for (int h = 0; h < n_hops; h++)
		if (!node_eq(p->hops[h].to, hops[h].to) || (h && p->hops[h].hash != hops[h].hash))
			return 0;
	return 1;
}

typedef struct placements {
	const tm_clock_graph *g;
	tm_clock_node tt;
	tm_placement *v;
	size_t n, cap;
} placements;

/* One source clock of a tracker into its group. */
static void place_source(placements *pl, const tm_clock_source *s)
{
	tm_clock_hop hops[4];
	int n_hops = tm_clock_graph_path(pl->g, s->node, pl->tt, hops);
	size_t j = pl->n;
	if (s->node.seq_id)
		for (j = 0; j < pl->n && !same_group(&pl->v[j], s, n_hops, hops); j++)
			;
	if (j == pl->n) {
		TM_GROW(pl->v, pl->cap, pl->n + 1);
		tm_placement *p = &pl->v[pl->n++];
		memset(p, 0, sizeof(*p));
		p->from = s->node;
		p->n_hops = n_hops;
		if (n_hops > 0)
			memcpy(p->hops, hops, (size_t)n_hops * sizeof(*hops));
	}
	pl->v[j].n_sources++;
	pl->v[j].ok += s->ok;
	pl->v[j].failed += s->failed;
	if (s->failed)
		pl->v[j].failure = s->failure;
}

tm_placement *tm_clocks_placement(const tm_clocks *c, uint32_t file_id, size_t *n_out)
{
	placements pl = {tm_clocks_view(c), *tm_clock_graph_trace_time(tm_clocks_view(c)), NULL, 0, 0};
	/* the file's ended trackers (looked up by file: an archive may hold
	 * 100,000 files), then its live ones */
	size_t ne;
	size_t *ix = tm_clocks_ended_of(c, file_id, &ne);
	for (size_t i = 0; i < ne; i++) {
		tm_clock_ended e;
		tm_clocks_ended_at(c, ix[i], &e);
		for (size_t k = 0; k < e.n_src; k++)
			place_source(&pl, &e.src[k]);
	}
	free(ix);
	for (size_t i = 0; i < tm_clocks_tracker_count(c); i++) {
		const tm_clock_tracker *t = tm_clocks_tracker_at(c, i);
		if (tm_tracker_file(t) != file_id)
			continue;
		for (size_t k = 0; k < tm_tracker_source_count(t); k++)
			place_source(&pl, tm_tracker_source(t, k));
	}
	*n_out = pl.n;
	return pl.v;
}

void tm_clocks_placement_clock(const tm_placement *p, int i, const tm_clock_labels *l, tm_buf *out)
{
	tm_clock_node n = i == 0 ? p->from : p->hops[i - 1].to;
	char nb[32], mb[32], fb[32];
	tm_buf_printf(out, "%s@%s", tm_clock_name(n.clock_id, nb), machine_name(l, n.machine_row, mb));
	if (i == 0 && p->n_sources > 1)
		tm_buf_printf(out, " (%s, %" PRIu32 " sequences)", file_name(l, n.file_id, fb), p->n_sources);
	else if (n.seq_id)
		tm_buf_printf(out, " (%s, sequence %" PRIu32 ")", file_name(l, n.file_id, fb), n.seq_id);
	else if (n.file_id)
		tm_buf_printf(out, " (%s)", file_name(l, n.file_id, fb));
}

/* ---- graph.dot ------------------------------------------------------------------ */

/* A drawn clock: a graph node, or all the sequence clocks of one file and
 * clock id on one machine folded together. */
typedef struct dnode {
	tm_clock_node key;     /* seq_id UINT32_MAX: a fold */
	uint32_t members, unreachable;
	uint64_t unit_ns;
	int incremental, non_monotonic, is_trace_time;
} dnode;

/* Snapshots drawn as one element: those of one origin relating the same
 * set of drawn clocks (an edge for two, a hub for more). */
typedef struct group {
	tm_clock_origin origin;
	uint32_t *set;         /* drawn clock indices, ascending */
	uint32_t n_set;
	uint64_t snapshots;
	int64_t offset;        /* second minus first, ns, at the first snapshot */
	int offset_varies;
	uint64_t key;
	uint8_t *on_path;      /* per member: an edge to it is on a file's path */
} group;

typedef struct view {
	const tm_clock_graph *g;
	const tm_clocks *c;
	const tm_clock_labels *l;
	tm_clock_node_info *info;  /* graph nodes, sorted by node */
	size_t n_info;
	uint32_t *drawn_of;        /* info index -> dnode */
	dnode *d;
	size_t n_d, cap_d;
	group *grp;
	size_t n_grp, cap_grp;
	size_t *grp_index;         /* open addressing: group + 1 */
	size_t grp_index_cap;
	uint64_t *hash_key;        /* (hash << 32 | group + 1), open addressing */
	size_t hash_cap, n_hash;
} view;

static int info_cmp(const void *x, const void *y)
{
	return tm_clock_node_cmp(((const tm_clock_node_info *)x)->node, ((const tm_clock_node_info *)y)->node);
}

static int64_t info_find(const view *v, tm_clock_node n)
{
	size_t lo = 0, hi = v->n_info;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = tm_clock_node_cmp(v->info[mid].node, n);
		if (!c)
			return (int64_t)mid;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

static tm_clock_node fold_key(tm_clock_node n)
{
	if (n.seq_id)
		n.seq_id = UINT32_MAX;
	return n;
}

static int dnode_order(const void *x, const void *y)
{
	const dnode *a = x, *b = y;
	if (a->key.machine_row != b->key.machine_row)
		return a->key.machine_row < b->key.machine_row ? -1 : 1;
	return tm_clock_node_cmp(a->key, b->key);
}

static void build_nodes(view *v)
{
	size_t n = tm_clock_graph_node_count(v->g);
	v->info = tm_xcalloc(n + 1, sizeof(*v->info));
	for (size_t i = 0; i < n; i++)
		tm_clock_graph_node_info(v->g, i, &v->info[i]);
	/* Which clocks reach trace time, all at once (asking clock by clock
	 * costs the graph's size each: a clock per file in an archive of many
	 * files), by registration index, so before the sort. */
	tm_clock_node tt = *tm_clock_graph_trace_time(v->g);
	unsigned char *reach = tm_xmalloc(n ? n : 1);
	tm_clock_graph_reaching(v->g, tt, reach);
	if (!tm_clock_graph_knows(v->g, tt)) /* drawn even before a snapshot names it */
		v->info[n++] = (tm_clock_node_info){.node = tt, .unit_ns = 1, .is_trace_time = 1};
	/* the folds: sorted by key, equal keys adjacent after sorting dnodes */
	dnode *all = tm_xcalloc(n ? n : 1, sizeof(*all));
	for (size_t i = 0; i < n; i++) {
		const tm_clock_node_info *ni = &v->info[i];
		all[i] = (dnode){fold_key(ni->node), 1,
				 !ni->is_trace_time && !reach[i],
				 ni->unit_ns,
				 ni->incremental,
				 ni->non_monotonic,
				 ni->is_trace_time};
	}
	free(reach);
	qsort(v->info, n, sizeof(*v->info), info_cmp);
	v->n_info = n;
	qsort(all, n, sizeof(*all), dnode_order);
	for (size_t i = 0; i < n; i++) {
		if (v->n_d && node_eq(v->d[v->n_d - 1].key, all[i].key)) {
			dnode *d = &v->d[v->n_d - 1];
			d->members++;
			d->unreachable += all[i].unreachable;
			d->incremental |= all[i].incremental;
			d->non_monotonic |= all[i].non_monotonic;
			continue;
		}
		TM_GROW(v->d, v->cap_d, v->n_d + 1);
		v->d[v->n_d++] = all[i];
	}
	free(all);
	v->drawn_of = tm_xcalloc(n ? n : 1, sizeof(*v->drawn_of));
	for (size_t i = 0; i < n; i++) {
		tm_clock_node k = fold_key(v->info[i].node);
		size_t lo = 0, hi = v->n_d;
		while (lo < hi) { /* v->d is in dnode_order: search by it */
			size_t mid = lo + (hi - lo) / 2;
			dnode probe = {.key = k};
			int c = dnode_order(&v->d[mid], &probe);
			if (!c) {
				lo = mid;
				break;
			}
			if (c < 0)
				lo = mid + 1;
			else
				hi = mid;
		}
		v->drawn_of[i] = (uint32_t)lo;
	}
}

static int64_t drawn(const view *v, tm_clock_node n)
{
	int64_t i = info_find(v, n);
	return i < 0 ? -1 : (int64_t)v->drawn_of[i];
}

static uint64_t set_key(tm_clock_origin o, const uint32_t *set, uint32_t n)
{
	uint64_t h = 1469598103934665603ull ^ (uint64_t)o;
	for (uint32_t i = 0; i < n; i++)
		h = (h ^ set[i]) * 1099511628211ull;
	return h ? h : 1;
}

static size_t group_find(view *v, tm_clock_origin o, const uint32_t *set, uint32_t n)
{
	if ((v->n_grp + 1) * 2 > v->grp_index_cap) {
		size_t cap = v->grp_index_cap ? v->grp_index_cap * 2 : 64;
		free(v->grp_index);
		v->grp_index = tm_xcalloc(cap, sizeof(*v->grp_index));
		v->grp_index_cap = cap;
		for (size_t i = 0; i < v->n_grp; i++) {
			size_t j = v->grp[i].key & (cap - 1);
			while (v->grp_index[j])
				j = (j + 1) & (cap - 1);
			v->grp_index[j] = i + 1;
		}
	}
	uint64_t key = set_key(o, set, n);
	size_t j = key & (v->grp_index_cap - 1);
	for (; v->grp_index[j]; j = (j + 1) & (v->grp_index_cap - 1)) {
		const group *gr = &v->grp[v->grp_index[j] - 1];
		if (gr->key == key && gr->origin == o && gr->n_set == n && !memcmp(gr->set, set, n * sizeof(*set)))
			return v->grp_index[j] - 1;
	}
	TM_GROW(v->grp, v->cap_grp, v->n_grp + 1);
	group *gr = &v->grp[v->n_grp];
	memset(gr, 0, sizeof(*gr));
	gr->origin = o;
	gr->set = tm_xmalloc(n * sizeof(*set));
	memcpy(gr->set, set, n * sizeof(*set));
	gr->n_set = n;
	gr->key = key;
	gr->on_path = tm_xcalloc(n, 1);
	v->grp_index[j] = ++v->n_grp;
	return v->n_grp - 1;
}

static size_t hash_slot(const view *v, uint32_t hash)
{
	return (size_t)tm_khash_u64(hash) & (v->hash_cap - 1);
}

static void hash_put(view *v, uint32_t hash, size_t grp)
{
	if ((v->n_hash + 1) * 2 > v->hash_cap) {
		size_t old_cap = v->hash_cap;
		uint64_t *old = v->hash_key;
		v->hash_cap = old_cap ? old_cap * 2 : 64;
		v->hash_key = tm_xcalloc(v->hash_cap, sizeof(*v->hash_key));
		for (size_t i = 0; i < old_cap; i++)
			if (old[i]) {
				size_t j = hash_slot(v, (uint32_t)(old[i] >> 32));
				while (v->hash_key[j])
					j = (j + 1) & (v->hash_cap - 1);
				v->hash_key[j] = old[i];
			}
		free(old);
	}
	size_t j = hash_slot(v, hash);
	for (; v->hash_key[j]; j = (j + 1) & (v->hash_cap - 1))
		if ((uint32_t)(v->hash_key[j] >> 32) == hash)
			return; /* the first snapshot of a hash names its group */
	v->hash_key[j] = (uint64_t)hash << 32 | (grp + 1);
	v->n_hash++;
}

static int64_t hash_group(const view *v, uint32_t hash)
{
	if (!v->hash_cap)
		return -1;
	for (size_t j = hash_slot(v, hash); v->hash_key[j]; j = (j + 1) & (v->hash_cap - 1))
		if ((uint32_t)(v->hash_key[j] >> 32) == hash)
			return (int64_t)(uint32_t)v->hash_key[j] - 1;
	return -1;
}

static int u32_cmp(const void *x, const void *y)
{
	uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
	return a < b ? -1 : a > b;
}

static void build_groups(view *v)
{
	uint64_t count = tm_clock_graph_snapshot_count(v->g);
	uint32_t *set = NULL;
	size_t cap = 0;
	for (uint64_t id = 0; id < count; id++) {
		tm_clock_snapshot_info si;
		if (!tm_clock_graph_snapshot(v->g, id, &si) || !si.accepted)
			continue;
		TM_GROW(set, cap, si.n_readings + 1);
		uint32_t n = 0;
		for (size_t i = 0; i < si.n_readings; i++) {
			int64_t d = drawn(v, si.readings[i].node);
			if (d >= 0)
				set[n++] = (uint32_t)d;
		}
		qsort(set, n, sizeof(*set), u32_cmp);
		uint32_t w = 0;
		for (uint32_t i = 0; i < n; i++)
			if (!w || set[w - 1] != set[i])
				set[w++] = set[i];
		if (w < 2)
			continue; /* the sequence clocks of one fold: nothing to draw */
		size_t gi = group_find(v, si.prov.origin, set, w);
		group *gr = &v->grp[gi];
		/* the offset between the two clocks, where the group is an edge */
		int64_t off = 0;
		if (w == 2 && si.n_readings == 2) {
			const tm_clock_reading *a = &si.readings[0], *b = &si.readings[1];
			if (v->drawn_of[info_find(v, a->node)] != set[0]) {
				const tm_clock_reading *t = a;
				a = b;
				b = t;
			}
			off = (int64_t)(b->ts * (b->unit_ns ? b->unit_ns : 1) - a->ts * (a->unit_ns ? a->unit_ns : 1));
		} else {
			gr->offset_varies = 1;
		}
		if (gr->snapshots == 0)
			gr->offset = off;
		else if (gr->offset != off)
			gr->offset_varies = 1;
		gr->snapshots++;
		hash_put(v, si.hash, gi);
	}
	free(set);
}

static void put_escaped(tm_buf *b, const char *s)
{
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;
		if (ch == '"' || ch == '\\')
			tm_buf_printf(b, "\\%c", ch);
		else if (ch < 0x20 || ch == 0x7f)
			tm_buf_puts(b, "?");
		else
			tm_buf_put(b, s, 1);
	}
}

/* How each origin is drawn: measurements solid, assumptions dashed. */
static const struct {
	const char *color, *style;
} origin_style[TM_CLOCK_ORIGIN_COUNT] = {
	[TM_CLOCK_ORIGIN_SNAPSHOT] = {"black", "solid"},
	[TM_CLOCK_ORIGIN_FTRACE] = {"gray40", "solid"},
	[TM_CLOCK_ORIGIN_REMOTE_CLIENT] = {"darkgreen", "solid"},
	[TM_CLOCK_ORIGIN_REMOTE_OFFSET] = {"darkgreen", "solid"},
	[TM_CLOCK_ORIGIN_MANIFEST] = {"purple", "solid"},
	[TM_CLOCK_ORIGIN_FILE_TAG] = {"blue", "dashed"},
	[TM_CLOCK_ORIGIN_REALTIME] = {"blue", "dashed"},
	[TM_CLOCK_ORIGIN_ASSUMED] = {"orange", "dashed"},
};

#define PATH_COLOR "crimson"

static void put_dnode(tm_buf *b, const view *v, size_t i)
{
	const dnode *d = &v->d[i];
	char nb[32], fb[32];
	tm_buf_printf(b, "    n%zu [label=\"", i);
	if (d->key.seq_id == UINT32_MAX) {
		tm_buf_printf(b, "%s\\n", tm_clock_name(d->key.clock_id, nb));
		put_escaped(b, file_name(v->l, d->key.file_id, fb));
		tm_buf_printf(b, "\\n%" PRIu32 " sequence clock%s", d->members, d->members == 1 ? "" : "s");
	} else {
		tm_buf_puts(b, tm_clock_name(d->key.clock_id, nb));
		if (d->key.file_id) {
			tm_buf_puts(b, "\\n");
			put_escaped(b, file_name(v->l, d->key.file_id, fb));
		}
	}
	if (d->unit_ns != 1)
		tm_buf_printf(b, "\\nunit %" PRIu64 " ns", d->unit_ns);
	if (d->incremental)
		tm_buf_puts(b, "\\nincremental");
	if (d->non_monotonic)
		tm_buf_puts(b, "\\nnon-monotonic");
	if (d->is_trace_time)
		tm_buf_puts(b, "\\ntrace time");
	if (d->unreachable && d->members > 1)
		tm_buf_printf(b, "\\n%" PRIu32 " without a path to trace time", d->unreachable);
	tm_buf_puts(b, "\"");
	if (d->is_trace_time)
		tm_buf_puts(b, ", style=\"rounded,filled,bold\", fillcolor=\"gold\", penwidth=2");
	else if (d->unreachable == d->members)
		tm_buf_puts(b, ", style=\"rounded,dashed\", color=\"red\", fontcolor=\"red\", "
			       "tooltip=\"no path to trace time\"");
	tm_buf_puts(b, "];\n");
}

/* A file's node and the edges of its placement groups; marks the drawn
 * elements on its paths. */
static void put_file(tm_buf *b, view *v, uint32_t file_id, const tm_placement *p, size_t n, tm_buf *edges)
{
	char fb[32];
	uint64_t ok = 0, failed = 0;
	for (size_t i = 0; i < n; i++)
		ok += p[i].ok, failed += p[i].failed;
	tm_buf_printf(b, "    f%" PRIu32 " [shape=note, label=\"", file_id);
	put_escaped(b, file_name(v->l, file_id, fb));
	tm_buf_printf(b, "\\n%" PRIu64 " timestamp%s placed", ok, ok == 1 ? "" : "s");
	if (failed)
		tm_buf_printf(b, "\\n%" PRIu64 " dropped", failed);
	tm_buf_puts(b, "\"");
	if (failed)
		tm_buf_puts(b, ", color=\"red\", fontcolor=\"red\"");
	tm_buf_puts(b, "];\n");
	for (size_t i = 0; i < n; i++) {
		int64_t src = drawn(v, p[i].from);
		if (src < 0)
			continue;
		tm_buf_printf(edges, "  f%" PRIu32 " -> n%" PRId64, file_id, src);
		if (p[i].n_hops < 0 || p[i].failed) {
			const char *why = p[i].failure == TM_CONV_UNKNOWN_SOURCE ? "unknown source clock"
					  : p[i].failure == TM_CONV_UNKNOWN_TARGET ? "unknown target clock"
										   : "no path";
			tm_buf_printf(edges, " [color=\"red\", style=dashed, fontcolor=\"red\", label=\"dropped: %s\"];\n",
				      why);
			continue;
		}
		tm_buf_puts(edges, " [color=\"" PATH_COLOR "\", penwidth=2];\n");
		for (int h = 0; h < p[i].n_hops; h++) {
			int64_t gi = hash_group(v, p[i].hops[h].hash);
			int64_t a = drawn(v, p[i].hops[h].from), z = drawn(v, p[i].hops[h].to);
			if (gi < 0)
				continue;
			group *gr = &v->grp[gi];
			for (uint32_t k = 0; k < gr->n_set; k++)
				if ((int64_t)gr->set[k] == a || (int64_t)gr->set[k] == z)
					gr->on_path[k] = 1;
		}
	}
}

static void put_groups(tm_buf *b, const view *v)
{
	for (size_t i = 0; i < v->n_grp; i++) {
		const group *gr = &v->grp[i];
		const char *color = origin_style[gr->origin].color, *style = origin_style[gr->origin].style;
		tm_buf label = {0};
		tm_buf_puts(&label, tm_clock_origin_name(gr->origin));
		if (gr->snapshots > 1)
			tm_buf_printf(&label, " x%" PRIu64, gr->snapshots);
		if (gr->n_set == 2) {
			int path = gr->on_path[0] && gr->on_path[1];
			if (!gr->offset_varies)
				tm_buf_printf(&label, "\\noffset %+" PRId64 " ns", gr->offset);
			tm_buf_printf(b, "  n%" PRIu32 " -> n%" PRIu32 " [dir=none, label=\"%s\", color=\"%s\", style=%s%s];\n",
				      gr->set[0], gr->set[1], label.data, path ? PATH_COLOR : color, style,
				      path ? ", penwidth=3" : "");
		} else {
			tm_buf_printf(b, "  h%zu [shape=circle, width=0.15, fixedsize=true, label=\"\", xlabel=\"%s\", "
					 "color=\"%s\"];\n",
				      i, label.data, color);
			for (uint32_t k = 0; k < gr->n_set; k++)
				tm_buf_printf(b, "  h%zu -> n%" PRIu32 " [dir=none, color=\"%s\", style=%s%s];\n", i,
					      gr->set[k], gr->on_path[k] ? PATH_COLOR : color, style,
					      gr->on_path[k] ? ", penwidth=3" : "");
		}
		tm_buf_free(&label);
	}
}

/* A tracker that read a clock, for the list of files: by file, then in
 * creation order. */
typedef struct file_first {
	uint32_t file_id, row;
	size_t order;
} file_first;

static int file_first_cmp(const void *a, const void *b)
{
	const file_first *x = a, *y = b;
	if (x->file_id != y->file_id)
		return x->file_id < y->file_id ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

void tm_clocks_render_dot(const tm_clocks *c, const tm_clock_labels *l, tm_buf *out)
{
	view v = {0};
	v.g = tm_clocks_view(c);
	v.c = c;
	v.l = l;
	build_nodes(&v);
	build_groups(&v);

	/* files, in file id order, with the machine of their first tracker
	 * that read a clock (ended ones were created first) */
	size_t ne = tm_clocks_ended_count(c), nt = tm_clocks_tracker_count(c), nf = 0;
	file_first *ff = tm_xcalloc(ne + nt ? ne + nt : 1, sizeof(*ff));
	for (size_t i = 0; i < ne; i++) {
		tm_clock_ended e;
		tm_clocks_ended_at(c, i, &e);
		ff[nf++] = (file_first){e.file_id, e.machine_row, i};
	}
	for (size_t i = 0; i < nt; i++) {
		const tm_clock_tracker *t = tm_clocks_tracker_at(c, i);
		if (tm_tracker_source_count(t))
			ff[nf++] = (file_first){tm_tracker_file(t), tm_tracker_machine(t), ne + i};
	}
	qsort(ff, nf, sizeof(*ff), file_first_cmp);
	uint32_t *files = tm_xcalloc(nf ? nf : 1, sizeof(*files));
	uint32_t *file_row = tm_xcalloc(nf ? nf : 1, sizeof(*file_row));
	size_t w = 0;
	for (size_t i = 0; i < nf; i++)
		if (!w || files[w - 1] != ff[i].file_id) {
			files[w] = ff[i].file_id;
			file_row[w++] = ff[i].row;
		}
	nf = w;
	free(ff);

	tm_buf file_nodes = {0}, file_edges = {0};
	tm_buf *per_row_files = NULL; /* file nodes by machine row, for the clusters */
	uint32_t max_row = 0;
	for (size_t i = 0; i < v.n_d; i++)
		if (v.d[i].key.machine_row > max_row)
			max_row = v.d[i].key.machine_row;
	for (size_t i = 0; i < nf; i++)
		if (file_row[i] > max_row)
			max_row = file_row[i];
	per_row_files = tm_xcalloc((size_t)max_row + 1, sizeof(*per_row_files));
	for (size_t i = 0; i < nf; i++) {
		size_t np;
		tm_placement *p = tm_clocks_placement(c, files[i], &np);
		put_file(&per_row_files[file_row[i]], &v, files[i], p, np, &file_edges);
		free(p);
	}

	tm_buf_puts(out, "digraph clocks {\n"
			 "  graph [rankdir=LR, fontname=\"Helvetica\", labelloc=t, label=\"clock graph (tracemount): "
			 "files (notes) and their path to trace time (gold) in " PATH_COLOR
			 "; dashed edges are assumptions; a dot joins the clocks of one snapshot\"];\n"
			 "  node [shape=box, style=rounded, fontname=\"Helvetica\"];\n"
			 "  edge [fontname=\"Helvetica\", fontsize=10];\n");
	char mb[32];
	size_t i = 0;
	for (uint32_t row = 0; row <= max_row; row++) {
		int any = per_row_files[row].len > 0;
		for (size_t k = i; k < v.n_d && v.d[k].key.machine_row == row && !any; k++)
			any = 1;
		if (!any)
			continue;
		tm_buf_printf(out, "  subgraph \"cluster_m%" PRIu32 "\" {\n    label=\"", row);
		put_escaped(out, machine_name(l, row, mb));
		tm_buf_puts(out, "\";\n");
		for (; i < v.n_d && v.d[i].key.machine_row == row; i++)
			put_dnode(out, &v, i);
		if (per_row_files[row].len)
			tm_buf_put(out, per_row_files[row].data, per_row_files[row].len);
		tm_buf_puts(out, "  }\n");
	}
	put_groups(out, &v);
	if (file_edges.len)
		tm_buf_put(out, file_edges.data, file_edges.len);
	tm_buf_puts(out, "}\n");

	for (uint32_t row = 0; row <= max_row; row++)
		tm_buf_free(&per_row_files[row]);
	free(per_row_files);
	tm_buf_free(&file_nodes);
	tm_buf_free(&file_edges);
	free(files);
	free(file_row);
	for (size_t k = 0; k < v.n_grp; k++) {
		free(v.grp[k].set);
		free(v.grp[k].on_path);
	}
	free(v.grp);
	free(v.grp_index);
	free(v.hash_key);
	free(v.d);
	free(v.drawn_of);
	free(v.info);
}

/* ---- edges.csv -------------------------------------------------------------------- */

/* A clock as one line of text: "BOOTTIME@phone", plus "/file=N" where the
 * node is scoped to a file and "/seq=N" for sequence clocks. Written in
 * pieces, not with printf: edges.csv has a line per pair of a snapshot's
 * readings (65,000 for 190 Chrome traces), and its printfs were a tenth
 * of the scan's time. */
static void put_clock_name(tm_buf *b, tm_clock_node n, const tm_clock_labels *l)
{
	char nb[32], mb[32];
	tm_buf_puts(b, tm_clock_name(n.clock_id, nb));
	tm_buf_puts(b, "@");
	tm_buf_puts(b, machine_name(l, n.machine_row, mb));
	if (n.file_id) {
		tm_buf_puts(b, "/file=");
		tm_buf_put_i64(b, n.file_id);
	}
	if (n.seq_id) {
		tm_buf_puts(b, "/seq=");
		tm_buf_put_i64(b, n.seq_id);
	}
}

/* RFC 4180: quote a field holding a comma, quote or line break. */
static void put_csv_field(tm_buf *b, const char *s)
{
	if (!strpbrk(s, ",\"\r\n")) {
		tm_buf_puts(b, s);
		return;
	}
	tm_buf_puts(b, "\"");
	for (; *s; s++) {
		if (*s == '"')
			tm_buf_puts(b, "\"");
		tm_buf_put(b, s, 1);
	}
	tm_buf_puts(b, "\"");
}

static int64_t reading_ns(const tm_clock_reading *r)
{
	return (int64_t)(r->ts * (r->unit_ns ? r->unit_ns : 1));
}

void tm_clocks_render_csv(const tm_clocks *c, const tm_clock_labels *l, tm_buf *out)
{
	tm_clocks_render_csv_spill(c, l, out, NULL);
}

void tm_clocks_render_csv_spill(const tm_clocks *c, const tm_clock_labels *l, tm_buf *out,
				const tm_clock_spill *spill)
{
	const tm_clock_graph *g = tm_clocks_view(c);
	tm_buf name = {0};
	char mb[32];
	tm_buf_puts(out, "from_clock,to_clock,from_ts,to_ts,origin,file,machine\n");
	uint64_t count = tm_clock_graph_snapshot_count(g);
	for (uint64_t id = 0; id < count; id++) {
		tm_clock_snapshot_info si;
		if (!tm_clock_graph_snapshot(g, id, &si) || !si.accepted)
			continue;
		for (size_t i = 0; i < si.n_readings; i++)
			for (size_t j = i + 1; j < si.n_readings; j++) {
				const tm_clock_reading *x = &si.readings[i], *y = &si.readings[j];
				name.len = 0;
				put_clock_name(&name, x->node, l);
				put_csv_field(out, name.data);
				tm_buf_puts(out, ",");
				name.len = 0;
				put_clock_name(&name, y->node, l);
				put_csv_field(out, name.data);
				tm_buf_puts(out, ",");
				tm_buf_put_i64(out, reading_ns(x));
				tm_buf_puts(out, ",");
				tm_buf_put_i64(out, reading_ns(y));
				tm_buf_puts(out, ",");
				tm_buf_puts(out, tm_clock_origin_name(si.prov.origin));
				tm_buf_puts(out, ",");
				tm_buf_put_i64(out, si.prov.file_id);
				tm_buf_puts(out, ",");
				put_csv_field(out, machine_name(l, si.prov.machine_row, mb));
				tm_buf_puts(out, "\n");
			}
		if (spill && out->len > spill->at)
			spill->fn(spill->ctx, out);
	}
	tm_buf_free(&name);
}
