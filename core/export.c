/* core/export.c - merged.pftrace: a second scan whose kept proto packets
 * are rewritten at the wire level and whose Chrome JSON and systrace
 * events are encoded as native packets (spec/formats.md §5.9). */
#include "export.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clockid.h"
#include "proto.h"
#include "spool.h"
#include "systrace.h"

/* ---- encoding ------------------------------------------------------------- */

static void put_varint(tm_buf *b, uint64_t v)
{
	uint8_t t[10];
	size_t n = 0;
	do {
		t[n++] = (uint8_t)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
		v >>= 7;
	} while (v);
	tm_buf_put(b, t, n);
}

static void put_tag(tm_buf *b, uint32_t id, unsigned wire)
{
	put_varint(b, ((uint64_t)id << 3) | wire);
}

static void put_uint(tm_buf *b, uint32_t id, uint64_t v)
{
	put_tag(b, id, TM_PB_VARINT);
	put_varint(b, v);
}

static void put_bytes(tm_buf *b, uint32_t id, const void *p, size_t n)
{
	put_tag(b, id, TM_PB_LEN);
	put_varint(b, n);
	if (n)
		tm_buf_put(b, p, n);
}

static void put_str(tm_buf *b, uint32_t id, const char *s)
{
	put_bytes(b, id, s, strlen(s));
}

static void put_fixed64(tm_buf *b, uint32_t id, uint64_t v)
{
	uint8_t t[8];
	for (int i = 0; i < 8; i++)
		t[i] = (uint8_t)(v >> (8 * i));
	put_tag(b, id, TM_PB_I64);
	tm_buf_put(b, t, 8);
}

static void put_double(tm_buf *b, uint32_t id, double d)
{
	uint64_t v;
	memcpy(&v, &d, sizeof v);
	put_fixed64(b, id, v);
}

/* A nested message from a scratch buffer. */
static void put_msg(tm_buf *b, uint32_t id, const tm_buf *m)
{
	put_bytes(b, id, m->data, m->len);
}

/* ---- id scoping ------------------------------------------------------------ */

static uint64_t mix64(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebull;
	x ^= x >> 31;
	return x;
}

/* Track uuids and flow ids are scoped per (file, machine reader): a
 * bijection of the id within one scope, distinct scopes apart. 0 stays 0
 * (it means "none" in both places). */
static uint64_t scoped(uint32_t file, uint32_t row, uint64_t salt, uint64_t id)
{
	if (!id)
		return 0;
	uint64_t v = mix64(id ^ mix64((((uint64_t)file << 32) | row) ^ salt));
	return v ? v : 1;
}

#define SALT_TRACK 0x7472616b75756964ull
#define SALT_FLOW 0x666c6f7769647321ull
#define SALT_JSON 0x6a736f6e74726b73ull

/* A map from a (file, row, key) triple to a value, open addressing. */
typedef struct map_slot {
	uint64_t a, b, v;
	int used;
} map_slot;

typedef struct map {
	map_slot *s;
	size_t cap, n;
} map;

static size_t map_hash(uint64_t a, uint64_t b)
{
	return (size_t)mix64(a * 0x9e3779b97f4a7c15ull ^ mix64(b));
}

static map_slot *map_find(map *m, uint64_t a, uint64_t b, int insert)
{
	if (insert && (m->n + 1) * 2 > m->cap) {
		map old = *m;
		m->cap = old.cap ? old.cap * 2 : 64;
		m->s = tm_xcalloc(m->cap, sizeof(*m->s));
		m->n = 0;
		for (size_t i = 0; i < old.cap; i++)
			if (old.s[i].used)
				*map_find(m, old.s[i].a, old.s[i].b, 1) = old.s[i];
		free(old.s);
	}
	if (!m->cap)
		return NULL;
	for (size_t i = map_hash(a, b) & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
		map_slot *x = &m->s[i];
		if (x->used && x->a == a && x->b == b)
			return x;
		if (!x->used) {
			if (!insert)
				return NULL;
			x->used = 1;
			x->a = a;
			x->b = b;
			x->v = 0;
			m->n++;
			return x;
		}
	}
}

/* ---- the exporter ------------------------------------------------------------ */

typedef struct exp {
	tm_merge *m;
	const tm_scan *scan;
	tm_spool *out;         /* [0] all, [1 + row] per machine */
	size_t n_out;
	uint32_t *mach_id;     /* row -> TracePacket.machine_id, 0 for the host */
	map seqs;              /* (file << 32 | row, seq) -> new sequence id */
	map tracks;            /* (uuid, 0) -> emitted (JSON/systrace tracks) */
	uint32_t next_seq;
	tm_buf pkt, s1, s2, s3, s4;
	tm_ftrace_bundle bundle;
	TM_VEC(uint64_t) col[12];
} exp;

/* Frame a packet as a Trace.packet field into the whole merge's output
 * and its machine's. */
static void emit(exp *x, uint32_t row, const tm_buf *pkt)
{
	uint8_t head[11];
	size_t n = 0;
	head[n++] = 0x0a; /* field 1, length-delimited */
	uint64_t v = pkt->len;
	do {
		head[n++] = (uint8_t)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
		v >>= 7;
	} while (v);
	for (int k = 0; k < 2; k++) {
		tm_spool *o = k == 0 ? &x->out[0] : row + 1 < x->n_out ? &x->out[row + 1] : NULL;
		if (!o)
			continue;
		tm_spool_put(o, head, n);
		tm_spool_put(o, pkt->data, pkt->len);
	}
}

static uint32_t new_seq(exp *x, uint32_t file, uint32_t row, uint64_t seq)
{
	map_slot *s = map_find(&x->seqs, ((uint64_t)file << 32) | row, seq, 1);
	if (!s->v)
		s->v = ++x->next_seq;
	return (uint32_t)s->v;
}

static void copy_raw(tm_buf *b, const uint8_t *from, const uint8_t *to)
{
	tm_buf_put(b, from, (size_t)(to - from));
}

/* Repeated varint ids (maybe packed), scoped. */
static void put_scoped_ids(tm_buf *b, const tm_pb_field *f, uint32_t file, uint32_t row, uint64_t salt)
{
	if (f->wire == TM_PB_VARINT) {
		put_uint(b, f->id, scoped(file, row, salt, f->val));
		return;
	}
	if (f->wire == TM_PB_I64) {
		put_fixed64(b, f->id, scoped(file, row, salt, f->val));
		return;
	}
	if (f->wire != TM_PB_LEN)
		return;
	/* packed: varints unless the field is a fixed64 one (flow ids 47/48) */
	tm_buf p = {0};
	const uint8_t *q = f->data.p, *end = f->data.p + f->data.n;
	if (f->id == 47 || f->id == 48) {
		for (; q + 8 <= end; q += 8) {
			uint64_t v = 0;
			for (int i = 0; i < 8; i++)
				v |= (uint64_t)q[i] << (8 * i);
			v = scoped(file, row, salt, v);
			uint8_t t[8];
			for (int i = 0; i < 8; i++)
				t[i] = (uint8_t)(v >> (8 * i));
			tm_buf_put(&p, t, 8);
		}
	} else {
		uint64_t v;
		while (q < end && tm_pb_varint(&q, end, &v))
			put_varint(&p, scoped(file, row, salt, v));
	}
	put_bytes(b, f->id, p.data, p.len);
	tm_buf_free(&p);
}

static void rewrite_track_event(exp *x, tm_buf *b, tm_span msg, const tm_packet_out *po)
{
	uint32_t file = po->file_id, row = po->machine_row;
	tm_pb_iter it;
	tm_pb_field f;
	tm_pb_iter_init(&it, msg);
	const uint8_t *at = it.p;
	while (tm_pb_next(&it, &f) == 1) {
		switch (f.id) {
		case 1:  /* timestamp_delta_us: folded into the packet timestamp */
		case 16: /* timestamp_absolute_us */
			break;
		case 11:
		case 31:
		case 45:
			put_scoped_ids(b, &f, file, row, SALT_TRACK);
			break;
		case 47:
		case 48:
		case 36:
		case 42:
			put_scoped_ids(b, &f, file, row, SALT_FLOW);
			break;
		default:
			copy_raw(b, at, it.p);
		}
		at = it.p;
	}
}

static void rewrite_track_descriptor(exp *x, tm_buf *b, tm_span msg, const tm_packet_out *po)
{
	uint32_t file = po->file_id, row = po->machine_row;
	tm_pb_iter it;
	tm_pb_field f;
	tm_pb_iter_init(&it, msg);
	const uint8_t *at = it.p;
	while (tm_pb_next(&it, &f) == 1) {
		if ((f.id == 1 || f.id == 5) && f.wire == TM_PB_VARINT)
			put_uint(b, f.id, scoped(file, row, SALT_TRACK, f.val));
		else
			copy_raw(b, at, it.p);
		at = it.p;
	}
}

static void rewrite_defaults(exp *x, tm_buf *b, tm_span msg, const tm_packet_out *po)
{
	uint32_t file = po->file_id, row = po->machine_row;
	tm_pb_iter it;
	tm_pb_field f;
	tm_pb_iter_init(&it, msg);
	const uint8_t *at = it.p;
	while (tm_pb_next(&it, &f) == 1) {
		if (f.id == 58) {
			/* timestamp_clock_id: the timestamps are trace time now */
		} else if (f.id == 11 && f.wire == TM_PB_LEN) {
			tm_buf ted = {0};
			tm_pb_iter it2;
			tm_pb_field g;
			tm_pb_iter_init(&it2, f.data);
			const uint8_t *at2 = it2.p;
			while (tm_pb_next(&it2, &g) == 1) {
				if (g.id == 11 || g.id == 31 || g.id == 45)
					put_scoped_ids(&ted, &g, file, row, SALT_TRACK);
				else
					copy_raw(&ted, at2, it2.p);
				at2 = it2.p;
			}
			put_msg(b, 11, &ted);
			tm_buf_free(&ted);
		} else {
			copy_raw(b, at, it.p);
		}
		at = it.p;
	}
}

/* The values of a packed varint column (the last occurrence, as read). */
static size_t read_column(tm_span s, uint64_t **v, size_t *cap)
{
	size_t n = 0;
	if (!s.p)
		return 0;
	const uint8_t *q = s.p, *end = s.p + s.n;
	uint64_t x;
	while (q < end && tm_pb_varint(&q, end, &x)) {
		if (n == *cap) {
			*cap = *cap ? *cap * 2 : 64;
			*v = tm_xrealloc(*v, *cap * sizeof(**v));
		}
		(*v)[n++] = x;
	}
	return n;
}

static void put_packed(tm_buf *b, uint32_t id, const uint64_t *v, const size_t *keep, size_t n_keep)
{
	tm_buf p = {0};
	for (size_t i = 0; i < n_keep; i++)
		put_varint(&p, v[keep[i]]);
	if (n_keep)
		put_bytes(b, id, p.data, p.len);
	tm_buf_free(&p);
}

/* CompactSched with dropped events removed and the timestamp deltas
 * re-encoded from the trace-time values. */
static void rewrite_compact(exp *x, tm_buf *b, tm_span msg, const tm_packet_out *po)
{
	const tm_compact_sched *c = &x->bundle.compact;
	tm_span cols[12] = {
		{0}, c->switch_timestamp, c->switch_prev_state, c->switch_next_pid, c->switch_next_prio, {0},
		c->switch_next_comm_index, c->waking_timestamp, c->waking_pid, c->waking_target_cpu,
		c->waking_prio, c->waking_comm_index,
	};
	size_t len[13] = {0};
	for (int i = 1; i < 12; i++)
		if (i != 5)
			len[i] = read_column(cols[i], &x->col[i].v, &x->col[i].cap);
	size_t len12 = read_column(c->waking_common_flags, &x->col[0].v, &x->col[0].cap);

	/* intern_table: every occurrence as it is */
	tm_pb_iter it;
	tm_pb_field f;
	tm_pb_iter_init(&it, msg);
	const uint8_t *at = it.p;
	while (tm_pb_next(&it, &f) == 1) {
		if (f.id == 5)
			copy_raw(b, at, it.p);
		at = it.p;
	}
	for (int w = 0; w < 2; w++) {
		const int64_t *ts = w ? po->waking_ts : po->switch_ts;
		size_t n = w ? po->n_waking : po->n_switch;
		int base = w ? 7 : 1;
		size_t *keep = tm_xmalloc((n ? n : 1) * sizeof(size_t));
		size_t nk = 0;
		for (size_t k = 0; k < n; k++)
			if (ts[k] >= 0 && k < len[base])
				keep[nk++] = k;
		tm_buf p = {0};
		uint64_t prev = 0;
		for (size_t i = 0; i < nk; i++) {
			uint64_t v = (uint64_t)ts[keep[i]];
			put_varint(&p, v - prev);
			prev = v;
		}
		if (nk)
			put_bytes(b, (uint32_t)base, p.data, p.len);
		tm_buf_free(&p);
		for (int col = base + 1; col < base + 5; col++) {
			int idx = col;
			if (!w && col == 5)
				idx = 6; /* switch_next_comm_index is field 6 */
			size_t ok = 0;
			while (ok < nk && keep[ok] < len[idx])
				ok++;
			put_packed(b, (uint32_t)idx, x->col[idx].v, keep, ok);
		}
		if (w) {
			size_t ok = 0;
			while (ok < nk && keep[ok] < len12)
				ok++;
			put_packed(b, 12, x->col[0].v, keep, ok);
		}
		free(keep);
	}
}

static void rewrite_bundle(exp *x, tm_buf *b, tm_span msg, const tm_packet_out *po)
{
	tm_error err = {0};
	if (tm_ftrace_bundle_decode(msg, &x->bundle, &err) != 0)
		return;
	tm_pb_iter it;
	tm_pb_field f;
	tm_pb_iter_init(&it, msg);
	const uint8_t *at = it.p;
	size_t ev = 0;
	while (tm_pb_next(&it, &f) == 1) {
		switch (f.id) {
		case 5: case 6: case 7: case 9: case 10:
			break; /* the bundle clock and its readings */
		case 2: {
			size_t k = ev++;
			if (f.wire != TM_PB_LEN || k >= po->n_ftrace || po->ftrace_ts[k] < 0)
				break;
			tm_buf *e = &x->s2;
			e->len = 0;
			put_uint(e, 1, (uint64_t)po->ftrace_ts[k]);
			tm_pb_iter it2;
			tm_pb_field g;
			tm_pb_iter_init(&it2, f.data);
			const uint8_t *at2 = it2.p;
			while (tm_pb_next(&it2, &g) == 1) {
				if (g.id != 1)
					copy_raw(e, at2, it2.p);
				at2 = it2.p;
			}
			put_msg(b, 2, e);
			break;
		}
		case 4: {
			if (f.wire != TM_PB_LEN)
				break;
			tm_buf *cs = &x->s3;
			cs->len = 0;
			rewrite_compact(x, cs, f.data, po);
			put_msg(b, 4, cs);
			break;
		}
		default:
			copy_raw(b, at, it.p);
		}
		at = it.p;
	}
}

static void on_packet(void *ctx, const tm_packet_out *po)
{
	exp *x = ctx;
	tm_span raw = {po->data, po->len};
	tm_buf *b = &x->pkt;
	b->len = 0;
	int had_seq = 0, clock_only = 0;
	tm_pb_iter it;
	tm_pb_field f;
	tm_pb_iter_init(&it, raw);
	const uint8_t *at = it.p;
	while (tm_pb_next(&it, &f) == 1) {
		switch (f.id) {
		case 6:   /* clock_snapshot: applied by the merge */
		case 107: /* remote_clock_sync */
			clock_only = 1;
			break;
		case 8:
		case 58:
		case 98:
			break;
		case 10:
			had_seq = 1;
			break;
		case 59:  /* trace_packet_defaults */
		case 11:  /* track_event */
		case 60:  /* track_descriptor */
		case 1: { /* ftrace_events */
			if (f.wire != TM_PB_LEN)
				break;
			void (*rewrite)(exp *, tm_buf *, tm_span, const tm_packet_out *) =
				f.id == 59 ? rewrite_defaults
				: f.id == 11 ? rewrite_track_event
				: f.id == 60 ? rewrite_track_descriptor
					     : rewrite_bundle;
			x->s1.len = 0;
			rewrite(x, &x->s1, f.data, po);
			put_msg(b, f.id, &x->s1);
			break;
		}
		default:
			copy_raw(b, at, it.p);
		}
		at = it.p;
	}
	/* A clock packet keeps what else it carries (Chromium clears a
	 * sequence's incremental state on its snapshot packet), but not its
	 * time, and is dropped when nothing else is left. */
	if (clock_only && !b->len)
		return;
	if (po->has_ts && !clock_only)
		put_uint(b, 8, (uint64_t)po->ts);
	if (had_seq && po->seq_id)
		put_uint(b, 10, new_seq(x, po->file_id, po->machine_row, po->seq_id));
	if (po->machine_row < x->scan->machines.n && x->mach_id[po->machine_row])
		put_uint(b, 98, x->mach_id[po->machine_row]);
	emit(x, po->machine_row, b);
}

/* ---- Chrome JSON and systrace events as native packets --------------------- */

static void start_packet(exp *x, tm_buf *b, uint32_t file, uint32_t row, int64_t ts)
{
	b->len = 0;
	if (ts >= 0)
		put_uint(b, 8, (uint64_t)ts);
	map_slot *s = map_find(&x->seqs, ((uint64_t)file << 32) | row, UINT64_MAX, 1);
	int first = !s->v;
	if (first)
		s->v = ++x->next_seq;
	put_uint(b, 10, s->v);
	if (first)
		put_uint(b, 13, TM_SEQ_INCREMENTAL_STATE_CLEARED);
}

static void end_packet(exp *x, tm_buf *b, uint32_t row)
{
	if (row < x->scan->machines.n && x->mach_id[row])
		put_uint(b, 98, x->mach_id[row]);
	emit(x, row, b);
}

/* The uuid of a JSON/systrace track: kind 't' thread, 'p' process, 'c'
 * counter, 'a' async (the last two per name), scoped to the file and
 * machine. */
static uint64_t track_uuid(const tm_event *ev, char kind, int64_t pid, int64_t tid)
{
	uint64_t key = mix64(((uint64_t)(unsigned char)kind << 56) ^ mix64((uint64_t)pid) ^
			     mix64((uint64_t)tid * 31 + 7));
	if (kind == 'c' || kind == 'a') {
		uint64_t h = 1469598103934665603ull;
		for (size_t i = 0; i < ev->name_len; i++)
			h = (h ^ (unsigned char)ev->name[i]) * 1099511628211ull;
		key ^= mix64(h);
	}
	return scoped(ev->file_id, ev->machine_row, SALT_JSON, key ? key : 1);
}

/* Emit the TrackDescriptor of a track; `label` names a thread or process
 * (thread_name / process_name), or NULL. */
static void describe(exp *x, const tm_event *ev, char kind, int64_t pid, int64_t tid, uint64_t uuid,
		     uint64_t parent, const char *label, size_t label_len)
{
	tm_buf *d = &x->s1, *sub = &x->s2, *b = &x->s3;
	d->len = sub->len = 0;
	put_uint(d, 1, uuid);
	if (parent)
		put_uint(d, 5, parent);
	if (kind == 't') {
		put_uint(sub, 1, (uint64_t)(int64_t)(int32_t)pid);
		put_uint(sub, 2, (uint64_t)tid);
		if (label)
			put_bytes(sub, 5, label, label_len);
		put_msg(d, 4, sub);
	} else if (kind == 'p') {
		put_uint(sub, 1, (uint64_t)(int64_t)(int32_t)pid);
		if (label)
			put_bytes(sub, 6, label, label_len);
		put_msg(d, 3, sub);
	} else {
		put_bytes(d, 2, ev->name ? ev->name : "", ev->name ? ev->name_len : 0);
		if (kind == 'c')
			put_bytes(d, 8, "", 0);
	}
	start_packet(x, b, ev->file_id, ev->machine_row, -1);
	put_msg(b, 60, d);
	end_packet(x, b, ev->machine_row);
}

/* A track's uuid, its descriptor emitted on first use. */
static uint64_t track(exp *x, const tm_event *ev, char kind, int64_t pid, int64_t tid)
{
	uint64_t uuid = track_uuid(ev, kind, pid, tid);
	map_slot *s = map_find(&x->tracks, uuid, 0, 1);
	if (s->v)
		return uuid;
	s->v = 1;
	uint64_t parent = kind == 'c' || kind == 'a' ? track(x, ev, 'p', pid, 0) : 0;
	describe(x, ev, kind, pid, tid, uuid, parent, NULL, 0);
	return uuid;
}

/* A process or thread name: its descriptor again, with the name. */
static void on_name(void *ctx, const tm_name_out *n)
{
	exp *x = ctx;
	if (n->file_id >= x->m->n_files || x->m->files[n->file_id].type == TM_TYPE_PROTO)
		return;
	tm_event ev;
	memset(&ev, 0, sizeof(ev));
	ev.file_id = n->file_id;
	ev.machine_row = n->machine_row;
	char kind = n->tid < 0 ? 'p' : 't';
	int64_t tid = n->tid < 0 ? 0 : n->tid;
	uint64_t uuid = track_uuid(&ev, kind, n->pid, tid);
	map_find(&x->tracks, uuid, 0, 1)->v = 1;
	describe(x, &ev, kind, n->pid, tid, uuid, 0, n->name, n->name_len);
}

static int64_t prev_state_of(const char *s)
{
	static const char states[] = "RSDTtXZxKWPN";
	int64_t v = 0;
	for (; *s; s++) {
		if (*s == '+') {
			v |= 2048;
			continue;
		}
		const char *p = strchr(states, *s);
		if (p && *s && p != states)
			v |= INT64_C(1) << (p - states - 1);
	}
	return v;
}

static int64_t arg_int(const char *args, const char *key)
{
	char v[64];
	return systrace_arg(args, key, v, sizeof v) ? strtoll(v, NULL, 10) : 0;
}

static void kernel_event(exp *x, const tm_event *ev)
{
	const char *args = ev->args ? ev->args : "";
	tm_buf *body = &x->s1, *fe = &x->s2, *bundle = &x->s3, *b = &x->s4;
	body->len = fe->len = bundle->len = 0;
	char comm[64];
	uint32_t kind;
	if (ev->name_len == 12 && memcmp(ev->name, "sched_switch", 12) == 0) {
		kind = 4;
		put_str(body, 1, systrace_arg(args, "prev_comm", comm, sizeof comm) ? comm : "");
		put_uint(body, 2, (uint64_t)arg_int(args, "prev_pid"));
		put_uint(body, 3, (uint64_t)arg_int(args, "prev_prio"));
		put_uint(body, 4, (uint64_t)prev_state_of(systrace_arg(args, "prev_state", comm, sizeof comm) ? comm : ""));
		put_str(body, 5, systrace_arg(args, "next_comm", comm, sizeof comm) ? comm : "");
		put_uint(body, 6, (uint64_t)arg_int(args, "next_pid"));
		put_uint(body, 7, (uint64_t)arg_int(args, "next_prio"));
	} else if (ev->name_len == 12 && memcmp(ev->name, "sched_waking", 12) == 0) {
		kind = 20;
		put_str(body, 1, systrace_arg(args, "comm", comm, sizeof comm) ? comm : "");
		put_uint(body, 2, (uint64_t)arg_int(args, "pid"));
		put_uint(body, 3, (uint64_t)arg_int(args, "prio"));
		put_uint(body, 4, 1);
		put_uint(body, 5, (uint64_t)arg_int(args, "target_cpu"));
	} else {
		/* other kernel events: an instant on the thread with the text */
		uint64_t t = track(x, ev, 't', ev->pid >= 0 ? ev->pid : ev->tid, ev->tid);
		tm_buf *te = &x->s1, *da = &x->s2;
		te->len = da->len = 0;
		put_uint(te, 9, 3);
		put_uint(te, 11, t);
		put_bytes(te, 23, ev->name, ev->name_len);
		put_str(da, 10, "args");
		put_str(da, 6, args);
		put_msg(te, 4, da);
		start_packet(x, b, ev->file_id, ev->machine_row, ev->ts);
		put_msg(b, 11, te);
		end_packet(x, b, ev->machine_row);
		return;
	}
	put_uint(fe, 1, (uint64_t)ev->ts);
	put_uint(fe, 2, (uint64_t)(ev->tid >= 0 ? ev->tid : 0));
	put_msg(fe, kind, body);
	put_uint(bundle, 1, (uint64_t)(ev->cpu >= 0 ? ev->cpu : 0));
	put_msg(bundle, 2, fe);
	b->len = 0;
	put_msg(b, 1, bundle);
	end_packet(x, b, ev->machine_row);
}

static void track_event(exp *x, const tm_event *ev, uint64_t track_uuid, int type, int64_t ts, int named)
{
	tm_buf *te = &x->s1, *b = &x->s4;
	te->len = 0;
	put_uint(te, 9, (uint64_t)type);
	put_uint(te, 11, track_uuid);
	if (named && ev->name)
		put_bytes(te, 23, ev->name, ev->name_len);
	if (type == TM_TE_COUNTER)
		put_double(te, 44, ev->value);
	start_packet(x, b, ev->file_id, ev->machine_row, ts);
	put_msg(b, 11, te);
	end_packet(x, b, ev->machine_row);
}

static void on_event(void *ctx, const tm_event *ev)
{
	exp *x = ctx;
	if (ev->file_id >= x->m->n_files || x->m->files[ev->file_id].type == TM_TYPE_PROTO)
		return; /* proto files are exported packet by packet */
	int64_t pid = ev->pid >= 0 ? ev->pid : ev->tid >= 0 ? ev->tid : 0;
	int64_t tid = ev->tid >= 0 ? ev->tid : pid;
	switch (ev->kind) {
	case TM_EV_SLICE: {
		uint64_t t = track(x, ev, 't', pid, tid);
		track_event(x, ev, t, TM_TE_SLICE_BEGIN, ev->ts, 1);
		int64_t end = ev->dur > 0 && ev->ts <= INT64_MAX - ev->dur ? ev->ts + ev->dur : ev->ts;
		track_event(x, ev, t, TM_TE_SLICE_END, end, 0);
		break;
	}
	case TM_EV_BEGIN:
		track_event(x, ev, track(x, ev, 't', pid, tid), TM_TE_SLICE_BEGIN, ev->ts, 1);
		break;
	case TM_EV_END:
		track_event(x, ev, track(x, ev, 't', pid, tid), TM_TE_SLICE_END, ev->ts, 0);
		break;
	case TM_EV_INSTANT:
		track_event(x, ev, track(x, ev, 't', pid, tid), TM_TE_INSTANT, ev->ts, 1);
		break;
	case TM_EV_COUNTER:
		track_event(x, ev, track(x, ev, 'c', pid, 0), TM_TE_COUNTER, ev->ts, 0);
		break;
	case TM_EV_ASYNC_BEGIN:
		track_event(x, ev, track(x, ev, 'a', pid, 0), TM_TE_SLICE_BEGIN, ev->ts, 1);
		break;
	case TM_EV_ASYNC_END:
		track_event(x, ev, track(x, ev, 'a', pid, 0), TM_TE_SLICE_END, ev->ts, 0);
		break;
	case TM_EV_SCHED:
	case TM_EV_FTRACE:
		kernel_event(x, ev);
		break;
	default:
		break;
	}
}

/* ---- header ------------------------------------------------------------------ */

static void system_info(exp *x, uint32_t row, size_t out)
{
	const tm_machine *mc = &x->scan->machines.rows[row];
	tm_buf *si = &x->s1, *un = &x->s2, *b = &x->pkt;
	si->len = un->len = b->len = 0;
	if (mc->sysname)
		put_str(un, 1, mc->sysname);
	if (mc->version)
		put_str(un, 2, mc->version);
	if (mc->release)
		put_str(un, 3, mc->release);
	if (mc->arch)
		put_str(un, 4, mc->arch);
	if (un->len)
		put_msg(si, 1, un);
	if (mc->num_cpus >= 0)
		put_uint(si, 8, (uint64_t)mc->num_cpus);
	if (mc->name)
		put_str(si, 17, mc->name);
	put_msg(b, 45, si);
	if (x->mach_id[row])
		put_uint(b, 98, x->mach_id[row]);
	tm_buf frame = {0};
	put_bytes(&frame, 1, b->data, b->len);
	tm_spool_put(&x->out[out], frame.data, frame.len);
	tm_buf_free(&frame);
}

/* The re-import's clocks (clocks.md §5.2, §7). The values are already
 * trace time, so every clock the re-import may convert from must be the
 * identity of trace time. The first machine's snapshot lists trace time's
 * clock C with BOOTTIME, MONOTONIC and REALTIME, all at 0, and names C its
 * primary clock: the re-import claims C (same trace_time_clock_id) and
 * every reader's default clock is C. Every other machine's snapshot lists
 * the same clocks plus TRACE_FILE, which stops it from claiming; its
 * BOOTTIME reaches trace time through the REALTIME rendezvous, so its
 * events convert at zero offset too. Only for a builtin C other than the
 * private clock; otherwise no snapshot is written and the re-import runs
 * on its private clock, which takes the values as they are. */
static int export_clock(const exp *x)
{
	uint32_t c = x->scan->tt_clock_id;
	return x->scan->has_tt_clock_id && c >= 1 && c <= TM_CLOCK_MAX_BUILTIN && c != TM_CLOCK_TRACE_FILE ? (int)c
														 : 0;
}

static void trace_clock(exp *x, uint32_t row, size_t out, int first)
{
	uint32_t c = (uint32_t)export_clock(x);
	uint32_t ids[6] = {c};
	size_t n = 1;
	static const uint32_t more[] = {TM_CLOCK_BOOTTIME, TM_CLOCK_MONOTONIC, TM_CLOCK_REALTIME, TM_CLOCK_TRACE_FILE};
	for (size_t i = 0; i < sizeof more / sizeof more[0]; i++)
		if (more[i] != c && (more[i] != TM_CLOCK_TRACE_FILE || !first))
			ids[n++] = more[i];
	tm_buf *cs = &x->s1, *cl = &x->s2, *b = &x->pkt;
	cs->len = b->len = 0;
	for (size_t i = 0; i < n; i++) {
		cl->len = 0;
		put_uint(cl, 1, ids[i]);
		put_uint(cl, 2, 0);
		put_msg(cs, 1, cl);
	}
	if (first)
		put_uint(cs, 2, c);
	put_msg(b, 6, cs);
	if (x->mach_id[row])
		put_uint(b, 98, x->mach_id[row]);
	tm_buf frame = {0};
	put_bytes(&frame, 1, b->data, b->len);
	tm_spool_put(&x->out[out], frame.data, frame.len);
	tm_buf_free(&frame);
}

static void header(exp *x, size_t out, int64_t only_row)
{
	const tm_machines *ms = &x->scan->machines;
	int clock = export_clock(x);
	int64_t first = only_row;
	if (first < 0) {
		first = tm_machines_find(ms, TM_RAW_HOST);
		if (first < 0 && ms->n)
			first = 0;
	}
	if (first < 0)
		return;
	system_info(x, (uint32_t)first, out);
	if (clock)
		trace_clock(x, (uint32_t)first, out, 1);
	if (only_row >= 0)
		return;
	for (size_t r = 0; r < ms->n; r++) {
		if ((int64_t)r == first)
			continue;
		system_info(x, (uint32_t)r, out);
		if (clock)
			trace_clock(x, (uint32_t)r, out, 0);
	}
}

tm_export *tm_export_build(tm_merge *m, const tm_scan *scan, tm_error *err)
{
	exp x = {0};
	x.m = m;
	x.scan = scan;
	size_t nm = scan->machines.n;
	x.n_out = nm + 1;
	x.out = tm_xcalloc(x.n_out, sizeof(*x.out));
	for (size_t i = 0; i < x.n_out; i++)
		x.out[i].fd = -1;
	x.mach_id = tm_xcalloc(nm ? nm : 1, sizeof(*x.mach_id));
	/* machine ids: the raw id where it is an embedded one, else the next
	 * free id; the host (raw 0) has none */
	uint32_t next = 1;
	for (size_t r = 0; r < nm; r++) {
		int64_t raw = scan->machines.rows[r].raw_id;
		if (raw > 0 && raw <= UINT32_MAX)
			x.mach_id[r] = (uint32_t)raw;
	}
	for (size_t r = 0; r < nm; r++) {
		int64_t raw = scan->machines.rows[r].raw_id;
		if (raw == TM_RAW_HOST || x.mach_id[r])
			continue;
		for (;; next++) {
			int used = 0;
			for (size_t k = 0; k < nm && !used; k++)
				used = x.mach_id[k] == next;
			if (!used)
				break;
		}
		x.mach_id[r] = next++;
	}
	tm_export *res = NULL;
	for (size_t i = 0; i < x.n_out; i++)
		if (tm_spool_open(&x.out[i], err))
			goto out;
	header(&x, 0, -1);
	for (size_t r = 0; r < nm; r++)
		header(&x, r + 1, (int64_t)r);
	tm_scan_sink sink = {.ctx = &x, .event = on_event, .packet = on_packet, .name = on_name};
	tm_scan *s2 = tm_scan_run(m, &sink);
	int failed = s2->failed;
	if (failed)
		*err = s2->err;
	tm_scan_free(s2);
	if (failed)
		goto out;
	for (size_t i = 0; i < x.n_out; i++)
		if (tm_spool_finish(&x.out[i], "merged.pftrace", err))
			goto out;
	res = tm_spooled_take(x.out, nm);
out:
	for (size_t i = 0; i < x.n_out; i++)
		tm_spool_close(&x.out[i]);
	free(x.out);
	free(x.mach_id);
	free(x.seqs.s);
	free(x.tracks.s);
	tm_buf_free(&x.pkt);
	tm_buf_free(&x.s1);
	tm_buf_free(&x.s2);
	tm_buf_free(&x.s3);
	tm_buf_free(&x.s4);
	tm_ftrace_bundle_free(&x.bundle);
	for (int i = 0; i < 12; i++)
		free(x.col[i].v);
	return res;
}

void tm_export_free(tm_export *x)
{
	tm_spooled_free(x);
}
