/* core/export/export.c - merged.pftrace: one scan whose kept proto packets are
 * rewritten at the wire level (spec/formats.md §5.9) while the model
 * replays the rest, which core/export/export_text.c encodes. The header (a
 * SystemInfo and the clock snapshots per machine) is built with
 * protobuf-c; rewriting the kept packets stays at the wire level, where
 * copying untouched fields as they are is what keeps it fast. */
#include "export/export.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clock/clockid.h"
#include "export/export_internal.h"
#include "manifest/manifest.h"
#include "wire/proto.h"
#include "util/hash.h"
#include "util/relay.h"
#include "scan/scan.h"
#include "sort/spool.h"
#include "trace.pb-c.h"

#define N_OF(a) (sizeof(a) / sizeof((a)[0]))

/* ---- encoding ------------------------------------------------------------- */

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
uint64_t exp_scoped(uint32_t file, uint32_t row, uint64_t salt, uint64_t id)
{
	if (!id)
		return 0;
	uint64_t v = mix64(id ^ mix64((((uint64_t)file << 32) | row) ^ salt));
	return v ? v : 1;
}

#define SALT_TRACK 0x7472616b75756964ull
#define SALT_FLOW 0x666c6f7769647321ull

static size_t map_hash(uint64_t a, uint64_t b)
{
	return (size_t)tm_khash_pair(a, b);
}

exp_map_slot *exp_map_find(exp_map *m, uint64_t a, uint64_t b, int insert)
{
	if (insert && (m->n + 1) * 2 > m->cap) {
		exp_map old = *m;
		m->cap = old.cap ? old.cap * 2 : 64;
		m->s = tm_xcalloc(m->cap, sizeof(*m->s));
		m->n = 0;
		for (size_t i = 0; i < old.cap; i++)
			if (old.s[i].used)
				*exp_map_find(m, old.s[i].a, old.s[i].b, 1) = old.s[i];
		free(old.s);
	}
	if (!m->cap)
		return NULL;
	for (size_t i = map_hash(a, b) & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
		exp_map_slot *x = &m->s[i];
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

/* Frame pkt followed by `tail` (tn bytes, may be 0) as one packet,
 * written straight into the output's buffer (tm_views_reserve): putting
 * head, bytes and tail in turn, each also kept for its machine's view,
 * cost more than the packet's copy (1.4 million packets in the proto
 * bench). A packet too large for the buffer goes in pieces. */
static void emit_tail(exp *x, uint32_t row, const void *pkt, size_t len, const uint8_t *tail, size_t tn)
{
	uint8_t head[11];
	_Static_assert(TM_PB_TAG(F_Trace_packet, TM_PB_LEN) < 0x80, "Trace.packet's tag is one byte");
	head[0] = TM_PB_TAG(F_Trace_packet, TM_PB_LEN);
	size_t hn = 1 + varint_at(head + 1, len + tn);
	uint8_t *d = tm_views_reserve(&x->out, row, hn + len + tn);
	if (!d) {
		tm_views_put(&x->out, row, head, hn);
		tm_views_put(&x->out, row, pkt, len);
		if (tn)
			tm_views_put(&x->out, row, tail, tn);
		return;
	}
	memcpy(d, head, hn);
	if (len) /* pkt may be NULL then */
		memcpy(d + hn, pkt, len);
	if (tn)
		memcpy(d + hn + len, tail, tn);
	tm_views_commit(&x->out, row, hn + len + tn);
}

void exp_emit(exp *x, uint32_t row, const void *pkt, size_t len)
{
	emit_tail(x, row, pkt, len, NULL, 0);
}

/* A kept packet, ending with the merge's machine_id for its row (none
 * for the host). */
static void emit_kept(exp *x, uint32_t row, const void *pkt, size_t len)
{
	if (row >= x->n_rows || !x->mach_id[row]) {
		emit_tail(x, row, pkt, len, NULL, 0);
		return;
	}
	/* the last row's tail, kept: packets come in runs of a row */
	if (row != x->tail_row || !x->tail_n) {
		x->tail_n = (uint8_t)varint_at(x->tail, TM_PB_TAG(F_TracePacket_machine_id, TM_PB_VARINT));
		x->tail_n += (uint8_t)varint_at(x->tail + x->tail_n, x->mach_id[row]);
		x->tail_row = row;
	}
	emit_tail(x, row, pkt, len, x->tail, x->tail_n);
}

uint32_t exp_seq(exp *x, uint32_t file, uint32_t row, uint64_t seq)
{
	uint64_t a = ((uint64_t)file << 32) | row;
	/* packets come in runs of one sequence */
	if (x->seq_last && x->seq_last_a == a && x->seq_last_b == seq)
		return x->seq_last;
	exp_map_slot *s = exp_map_find(&x->seqs, a, seq, 1);
	if (!s->v)
		s->v = ++x->next_seq;
	x->seq_last_a = a;
	x->seq_last_b = seq;
	x->seq_last = (uint32_t)s->v;
	return x->seq_last;
}

static void copy_raw(tm_buf *b, const uint8_t *from, const uint8_t *to)
{
	tm_buf_put(b, from, (size_t)(to - from));
}

/* The fields kept as they are go out in runs, a copy per run rather than
 * per field: *from is where the current run began. A field that is
 * dropped or rewritten (it spans [at, next)) ends the run before it, and
 * the next one begins after it. */
static void end_run(tm_buf *b, const uint8_t **from, const uint8_t *at, const uint8_t *next)
{
	copy_raw(b, *from, at);
	*from = next;
}

/* Repeated varint ids (maybe packed), scoped. */
static void put_scoped_ids(tm_buf *b, const tm_pb_field *f, uint32_t file, uint32_t row, uint64_t salt)
{
	if (f->wire == TM_PB_VARINT) {
		put_uint(b, f->id, exp_scoped(file, row, salt, f->val));
		return;
	}
	if (f->wire == TM_PB_I64) {
		put_fixed64(b, f->id, exp_scoped(file, row, salt, f->val));
		return;
	}
	if (f->wire != TM_PB_LEN)
		return;
	/* packed: varints unless the field is a fixed64 one (TrackEvent's flow
	 * ids; TrackEventDefaults' track uuids are varints) */
	tm_buf p = {0};
	const uint8_t *q = f->data.p, *end = f->data.p + f->data.n;
	if (f->id == F_TrackEvent_flow_ids || f->id == F_TrackEvent_terminating_flow_ids) {
		for (; q + 8 <= end; q += 8) {
			uint64_t v = 0;
			for (int i = 0; i < 8; i++)
				v |= (uint64_t)q[i] << (8 * i);
			v = exp_scoped(file, row, salt, v);
			uint8_t t[8];
			for (int i = 0; i < 8; i++)
				t[i] = (uint8_t)(v >> (8 * i));
			tm_buf_put(&p, t, 8);
		}
	} else {
		uint64_t v;
		while (q < end && tm_pb_varint(&q, end, &v))
			put_varint(&p, exp_scoped(file, row, salt, v));
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
	const uint8_t *at = it.p, *from = it.p;
	while (tm_pb_next(&it, &f) == 1) {
		switch (f.id) {
		case F_TrackEvent_timestamp_delta_us: /* folded into the packet timestamp */
		case F_TrackEvent_timestamp_absolute_us:
			end_run(b, &from, at, it.p);
			break;
		case F_TrackEvent_track_uuid:
		case F_TrackEvent_extra_counter_track_uuids:
		case F_TrackEvent_extra_double_counter_track_uuids:
			end_run(b, &from, at, it.p);
			put_scoped_ids(b, &f, file, row, SALT_TRACK);
			break;
		case F_TrackEvent_flow_ids:
		case F_TrackEvent_terminating_flow_ids:
		case F_TrackEvent_flow_ids_old:
		case F_TrackEvent_terminating_flow_ids_old:
			end_run(b, &from, at, it.p);
			put_scoped_ids(b, &f, file, row, SALT_FLOW);
			break;
		}
		at = it.p;
	}
	copy_raw(b, from, at);
}

static void rewrite_track_descriptor(exp *x, tm_buf *b, tm_span msg, const tm_packet_out *po)
{
	uint32_t file = po->file_id, row = po->machine_row;
	tm_pb_iter it;
	tm_pb_field f;
	tm_pb_iter_init(&it, msg);
	const uint8_t *at = it.p, *from = it.p;
	while (tm_pb_next(&it, &f) == 1) {
		if ((f.id == F_TrackDescriptor_uuid || f.id == F_TrackDescriptor_parent_uuid) && f.wire == TM_PB_VARINT) {
			end_run(b, &from, at, it.p);
			put_uint(b, f.id, exp_scoped(file, row, SALT_TRACK, f.val));
		}
		at = it.p;
	}
	copy_raw(b, from, at);
}

static void rewrite_defaults(exp *x, tm_buf *b, tm_span msg, const tm_packet_out *po)
{
	uint32_t file = po->file_id, row = po->machine_row;
	tm_pb_iter it;
	tm_pb_field f;
	tm_pb_iter_init(&it, msg);
	const uint8_t *at = it.p, *from = it.p;
	while (tm_pb_next(&it, &f) == 1) {
		if (f.id == F_TracePacketDefaults_timestamp_clock_id) {
			/* the timestamps are trace time now */
			end_run(b, &from, at, it.p);
		} else if (f.id == F_TracePacketDefaults_track_event_defaults && f.wire == TM_PB_LEN) {
			end_run(b, &from, at, it.p);
			tm_buf ted = {0};
			tm_pb_iter it2;
			tm_pb_field g;
			tm_pb_iter_init(&it2, f.data);
			const uint8_t *at2 = it2.p, *from2 = it2.p;
			while (tm_pb_next(&it2, &g) == 1) {
				if (g.id == F_TrackEventDefaults_track_uuid || g.id == F_TrackEventDefaults_extra_counter_track_uuids ||
				    g.id == F_TrackEventDefaults_extra_double_counter_track_uuids) {
					end_run(&ted, &from2, at2, it2.p);
					put_scoped_ids(&ted, &g, file, row, SALT_TRACK);
				}
				at2 = it2.p;
			}
			copy_raw(&ted, from2, at2);
			put_msg(b, F_TracePacketDefaults_track_event_defaults, &ted);
			tm_buf_free(&ted);
		}
		at = it.p;
	}
	copy_raw(b, from, at);
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

/* CompactSched's two column sets, in the order they are written: the
 * timestamps, then the columns stepped with them (0 ends a set). */
#define CS(field) F_FtraceEventBundle_CompactSched_##field
static const struct compact_set {
	uint32_t timestamp;
	uint32_t cols[5];
} compact_sets[2] = {
	{CS(switch_timestamp),
	 {CS(switch_prev_state), CS(switch_next_pid), CS(switch_next_prio), CS(switch_next_comm_index), 0}},
	{CS(waking_timestamp),
	 {CS(waking_pid), CS(waking_target_cpu), CS(waking_prio), CS(waking_comm_index), CS(waking_common_flags)}},
};

/* x->col holds the column of field id at [id - 1]. */
_Static_assert(N_OF(((exp *)0)->col) == CS(waking_common_flags),
	       "exp.col has a slot for every CompactSched column");

/* A column's values as the bundle decoder found them. */
static tm_span compact_column(const tm_compact_sched *c, uint32_t id)
{
	switch (id) {
	case CS(switch_timestamp): return c->switch_timestamp;
	case CS(switch_prev_state): return c->switch_prev_state;
	case CS(switch_next_pid): return c->switch_next_pid;
	case CS(switch_next_prio): return c->switch_next_prio;
	case CS(switch_next_comm_index): return c->switch_next_comm_index;
	case CS(waking_timestamp): return c->waking_timestamp;
	case CS(waking_pid): return c->waking_pid;
	case CS(waking_target_cpu): return c->waking_target_cpu;
	case CS(waking_prio): return c->waking_prio;
	case CS(waking_comm_index): return c->waking_comm_index;
	case CS(waking_common_flags): return c->waking_common_flags;
	}
	return (tm_span){0};
}

/* CompactSched with dropped events removed and the timestamp deltas
 * re-encoded from the trace-time values. */
static void rewrite_compact(exp *x, tm_buf *b, tm_span msg, const tm_packet_out *po)
{
	const tm_compact_sched *c = &x->bundle.compact;
	size_t len[CS(waking_common_flags) + 1] = {0}; /* values per column, by field id */
	for (int w = 0; w < 2; w++) {
		const struct compact_set *set = &compact_sets[w];
		uint32_t id = set->timestamp;
		len[id] = read_column(compact_column(c, id), &x->col[id - 1].v, &x->col[id - 1].cap);
		for (size_t k = 0; k < N_OF(set->cols) && (id = set->cols[k]); k++)
			len[id] = read_column(compact_column(c, id), &x->col[id - 1].v, &x->col[id - 1].cap);
	}

	/* intern_table: every occurrence as it is */
	tm_pb_iter it;
	tm_pb_field f;
	tm_pb_iter_init(&it, msg);
	const uint8_t *at = it.p;
	while (tm_pb_next(&it, &f) == 1) {
		if (f.id == CS(intern_table))
			copy_raw(b, at, it.p);
		at = it.p;
	}
	for (int w = 0; w < 2; w++) {
		const struct compact_set *set = &compact_sets[w];
		const int64_t *ts = w ? po->waking_ts : po->switch_ts;
		size_t n = w ? po->n_waking : po->n_switch;
		size_t *keep = tm_xmalloc((n ? n : 1) * sizeof(size_t));
		size_t nk = 0;
		for (size_t k = 0; k < n; k++)
			if (ts[k] >= 0 && k < len[set->timestamp])
				keep[nk++] = k;
		tm_buf p = {0};
		uint64_t prev = 0;
		for (size_t i = 0; i < nk; i++) {
			uint64_t v = (uint64_t)ts[keep[i]];
			put_varint(&p, v - prev);
			prev = v;
		}
		if (nk)
			put_bytes(b, set->timestamp, p.data, p.len);
		tm_buf_free(&p);
		uint32_t id;
		for (size_t k = 0; k < N_OF(set->cols) && (id = set->cols[k]); k++) {
			size_t ok = 0;
			while (ok < nk && keep[ok] < len[id])
				ok++;
			put_packed(b, id, x->col[id - 1].v, keep, ok);
		}
		free(keep);
	}
}
#undef CS

static void rewrite_bundle(exp *x, tm_buf *b, tm_span msg, const tm_packet_out *po)
{
	tm_error err; /* cleared, not zeroed (4 KiB): once a packet */
	tm_err_clear(&err);
	if (tm_ftrace_bundle_decode(msg, &x->bundle, &err) != 0)
		return;
	tm_pb_iter it;
	tm_pb_field f;
	tm_pb_iter_init(&it, msg);
	const uint8_t *at = it.p, *from = it.p;
	size_t ev = 0;
	while (tm_pb_next(&it, &f) == 1) {
		switch (f.id) {
		case F_FtraceEventBundle_ftrace_clock: /* the bundle clock and its readings */
		case F_FtraceEventBundle_ftrace_timestamp:
		case F_FtraceEventBundle_boot_timestamp:
		case F_FtraceEventBundle_last_read_event_timestamp:
		case F_FtraceEventBundle_previous_bundle_end_timestamp:
			end_run(b, &from, at, it.p);
			break;
		case F_FtraceEventBundle_event: {
			end_run(b, &from, at, it.p);
			size_t k = ev++;
			if (f.wire != TM_PB_LEN || k >= po->n_ftrace || po->ftrace_ts[k] < 0)
				break;
			tm_buf *e = &x->s2;
			e->len = 0;
			put_uint(e, F_FtraceEvent_timestamp, (uint64_t)po->ftrace_ts[k]);
			tm_pb_iter it2;
			tm_pb_field g;
			tm_pb_iter_init(&it2, f.data);
			const uint8_t *at2 = it2.p, *from2 = it2.p;
			while (tm_pb_next(&it2, &g) == 1) {
				if (g.id == F_FtraceEvent_timestamp)
					end_run(e, &from2, at2, it2.p);
				at2 = it2.p;
			}
			copy_raw(e, from2, at2);
			put_msg(b, F_FtraceEventBundle_event, e);
			break;
		}
		case F_FtraceEventBundle_compact_sched: {
			end_run(b, &from, at, it.p);
			if (f.wire != TM_PB_LEN)
				break;
			tm_buf *cs = &x->s3;
			cs->len = 0;
			rewrite_compact(x, cs, f.data, po);
			put_msg(b, F_FtraceEventBundle_compact_sched, cs);
			break;
		}
		}
		at = it.p;
	}
	copy_raw(b, from, at);
}

/* ---- packets before the scan's results ---------------------------------------- */

/* A pass that makes the scan's results as it goes (tm_export_new_deferred)
 * rewrites each kept packet before the header that comes first (it needs
 * the whole scan), and, unless the manifest fixes the machine rows
 * (tm_scan_fixed_rows), before the merge's machine ids are known (they
 * need every machine's raw id). With the ids known, packets go to the
 * outputs at once and the header is put in front of them later
 * (tm_views_head). Without, such packets wait in a temporary file
 * without their machine_id, as (row, length, bytes) records, and
 * tm_export_attach copies them out after the header. The copy is a
 * sequential read of bytes already rewritten: far cheaper than reading
 * and tokenizing every input a second time. */
static void defer_kept(exp *x, uint32_t row, const tm_buf *b)
{
	uint8_t t[20];
	size_t n = varint_at(t, row);
	n += varint_at(t + n, b->len);
	tm_spool_put(&x->body, t, n);
	tm_spool_put(&x->body, b->data, b->len);
}

#define DEFER_READ (1u << 20)

static int copy_deferred(exp *x, tm_error *err)
{
	if (tm_spool_finish(&x->body, "merged.pftrace", err) != 0)
		return -1;
	size_t cap = DEFER_READ, have = 0, at = 0;
	uint8_t *buf = tm_xmalloc(cap);
	uint64_t off = 0;
	int rc = 0;
	/* what is read goes back at once, so the copy does not need the
	 * file's space twice: `tracemount cat merged.pftrace` of 190 proto
	 * files without a manifest peaked at 2.08 times the input */
	tm_giveback gb;
	tm_giveback_start(&gb, x->body.fd, x->body.size);
	for (;;) {
		const uint8_t *p = buf + at, *end = buf + have;
		uint64_t row, len;
		int head;
		if (end - p >= 2 && p[0] < 0x80 && p[1] < 0x80) { /* most records */
			row = p[0];
			len = p[1];
			p += 2;
			head = 1;
		} else {
			head = tm_pb_varint(&p, end, &row) && tm_pb_varint(&p, end, &len);
		}
		if (head && len <= (uint64_t)(end - p)) {
			emit_kept(x, (uint32_t)row, p, (size_t)len);
			at = (size_t)(p - buf) + (size_t)len;
			continue;
		}
		if (off == x->body.size)
			break;
		/* the record so far to the front, room for all of it, more */
		size_t need = head ? (size_t)(p - (buf + at)) + (size_t)len : 0;
		memmove(buf, buf + at, have - at);
		have -= at;
		at = 0;
		if (need > cap) {
			cap = need;
			buf = tm_xrealloc(buf, cap);
		}
		uint64_t left = x->body.size - off;
		ssize_t k = tm_pread_full(x->body.fd, buf + have, cap - have < left ? cap - have : (size_t)left, off);
		if (k <= 0) {
			rc = tm_err(err, TM_EIO, "merged.pftrace: cannot read a temporary file: %s",
				    k < 0 ? strerror(errno) : "it ended early");
			break;
		}
		tm_giveback_read(&gb, off, (uint64_t)k);
		have += (size_t)k;
		off += (uint64_t)k;
	}
	if (!rc && at != have)
		rc = tm_err(err, TM_EIO, "merged.pftrace: a temporary file ends inside a packet");
	tm_giveback_free(&gb);
	free(buf);
	tm_spool_close(&x->body);
	return rc;
}

static void keep_packet(exp *x, uint32_t row, tm_buf *b)
{
	if (x->deferred)
		defer_kept(x, row, b);
	else
		emit_kept(x, row, b->data, b->len);
}

static struct exp_seq_defaults *seq_defaults(exp *x, uint32_t seq)
{
	if (seq >= x->cap_seq_defaults) {
		size_t cap = x->cap_seq_defaults;
		TM_GROW(x->seq_defaults, x->cap_seq_defaults, (size_t)seq + 1);
		memset(x->seq_defaults + cap, 0, (x->cap_seq_defaults - cap) * sizeof *x->seq_defaults);
	}
	return &x->seq_defaults[seq];
}

static void put_packet(tm_buf *b, const Perfetto__Protos__TracePacket *p)
{
	size_t n = perfetto__protos__trace_packet__get_packed_size(p);
	b->len = 0;
	TM_GROW(b->data, b->cap, n + 1);
	perfetto__protos__trace_packet__pack(p, (uint8_t *)b->data);
	b->len = n;
}

/* A StreamingProfilePacket's samples as the reference reads them: their
 * times come from the sequence's legacy timestamp, which merged.pftrace's
 * TrackEvents no longer move, in microseconds. Each sample goes out as a
 * StackSample of its own at its trace time, of the sequence's thread and
 * on its callstack (interned on the same sequence), with the source
 * "chrome" in the sequence's defaults (its own kept, the source added;
 * its own again after them where they name a source of their own), so
 * that the reference's import makes the same rows. A sample whose stack
 * does not resolve goes out as a StreamingProfilePacket of a zero delta
 * after a ThreadDescriptor of its time, and a packet whose tokenization
 * failed on a missing delta as one of none: they make the same stats and
 * no row. */
static void exp_streaming(exp *x, const tm_packet_out *po, uint32_t seq, tm_span msg)
{
	tm_buf *b = &x->s2;
	Perfetto__Protos__TracePacket p = PERFETTO__PROTOS__TRACE_PACKET__INIT;
	p.optional_trusted_packet_sequence_id_case =
		PERFETTO__PROTOS__TRACE_PACKET__OPTIONAL_TRUSTED_PACKET_SEQUENCE_ID_TRUSTED_PACKET_SEQUENCE_ID;
	p.trusted_packet_sequence_id = seq;
	struct exp_seq_defaults *d = seq_defaults(x, seq);
	if (!d->chrome && po->n_sample) {
		Perfetto__Protos__TracePacketDefaults pd = PERFETTO__PROTOS__TRACE_PACKET_DEFAULTS__INIT;
		Perfetto__Protos__StackSampleDefaults sd = PERFETTO__PROTOS__STACK_SAMPLE_DEFAULTS__INIT;
		sd.source = "chrome";
		pd.stack_sample_defaults = &sd;
		x->s3.len = 0;
		size_t n = perfetto__protos__trace_packet_defaults__get_packed_size(&pd);
		tm_buf_put(&x->s3, d->bytes.data ? d->bytes.data : "", d->bytes.len);
		TM_GROW(x->s3.data, x->s3.cap, x->s3.len + n + 1);
		perfetto__protos__trace_packet_defaults__pack(&pd, (uint8_t *)x->s3.data + x->s3.len);
		x->s3.len += n; /* a message's bytes followed by more are their merge */
		b->len = 0;
		put_bytes(b, F_TracePacket_trace_packet_defaults, x->s3.data, x->s3.len);
		put_uint(b, F_TracePacket_trusted_packet_sequence_id, seq);
		keep_packet(x, po->machine_row, b);
		d->chrome = 1;
	}
	uint64_t *iids = NULL;
	size_t cap = 0, n_iids = tm_pb_varints(msg, F_StreamingProfilePacket_callstack_iid, &iids, &cap);
	Perfetto__Protos__StackSample ss = PERFETTO__PROTOS__STACK_SAMPLE__INIT;
	Perfetto__Protos__StackSample__TaskContext tc = PERFETTO__PROTOS__STACK_SAMPLE__TASK_CONTEXT__INIT;
	tc.has_pid = tc.has_tid = 1;
	tc.pid = (uint32_t)po->sample_pid;
	tc.tid = (uint32_t)po->sample_tid;
	ss.task_context_field_case = PERFETTO__PROTOS__STACK_SAMPLE__TASK_CONTEXT_FIELD_TASK_CONTEXT;
	ss.task_context = &tc;
	ss.callstack_field_case = PERFETTO__PROTOS__STACK_SAMPLE__CALLSTACK_FIELD_CALLSTACK_IID;
	Perfetto__Protos__StreamingProfilePacket sp = PERFETTO__PROTOS__STREAMING_PROFILE_PACKET__INIT;
	int64_t zero = 0;
	for (size_t i = 0; i < po->n_sample && i < n_iids; i++) {
		int64_t ts = po->sample_ts[i];
		if (ts == INT64_MIN)
			continue;
		p.data_case = PERFETTO__PROTOS__TRACE_PACKET__DATA__NOT_SET;
		p.has_timestamp = 0;
		if (ts >= 0) {
			ss.callstack_iid = iids[i];
			p.has_timestamp = 1;
			p.timestamp = (uint64_t)ts;
			p.data_case = PERFETTO__PROTOS__TRACE_PACKET__DATA_STACK_SAMPLE;
			p.stack_sample = &ss;
		} else {
			/* the sequence's thread again, its time the sample's
			 * (to the microsecond below), so that the sample is
			 * parsed where it was: no row, the thread made then */
			Perfetto__Protos__ThreadDescriptor td = PERFETTO__PROTOS__THREAD_DESCRIPTOR__INIT;
			td.has_pid = td.has_tid = td.has_reference_timestamp_us = 1;
			td.pid = (int32_t)po->sample_pid;
			td.tid = (int32_t)po->sample_tid;
			td.reference_timestamp_us = (-1 - ts) / 1000;
			p.data_case = PERFETTO__PROTOS__TRACE_PACKET__DATA_THREAD_DESCRIPTOR;
			p.thread_descriptor = &td;
			put_packet(b, &p);
			keep_packet(x, po->machine_row, b);
			sp.n_callstack_iid = 1;
			sp.callstack_iid = &iids[i];
			sp.n_timestamp_delta_us = 1;
			sp.timestamp_delta_us = &zero;
			p.data_case = PERFETTO__PROTOS__TRACE_PACKET__DATA_STREAMING_PROFILE_PACKET;
			p.streaming_profile_packet = &sp;
		}
		put_packet(b, &p);
		keep_packet(x, po->machine_row, b);
	}
	if (d->chrome && tm_pb_repeated_spans((tm_span){(const uint8_t *)d->bytes.data, d->bytes.len},
					       F_TracePacketDefaults_stack_sample_defaults, NULL, 0)) {
		/* the sequence's own StackSamples keep their source */
		b->len = 0;
		put_bytes(b, F_TracePacket_trace_packet_defaults, d->bytes.data, d->bytes.len);
		put_uint(b, F_TracePacket_trusted_packet_sequence_id, seq);
		keep_packet(x, po->machine_row, b);
		d->chrome = 0;
	}
	if (po->sample_logs & TM_SAMPLE_LOG_PARSER_ERROR) {
		uint64_t none = 0;
		sp.n_callstack_iid = 1;
		sp.callstack_iid = &none;
		sp.n_timestamp_delta_us = 0;
		p.has_timestamp = 0;
		p.data_case = PERFETTO__PROTOS__TRACE_PACKET__DATA_STREAMING_PROFILE_PACKET;
		p.streaming_profile_packet = &sp;
		put_packet(b, &p);
		keep_packet(x, po->machine_row, b);
	}
	free(iids);
}

static void on_packet(void *ctx, const tm_packet_out *po)
{
	exp *x = ctx;
	tm_span raw = {po->data, po->len};
	tm_buf *b = &x->pkt;
	b->len = 0;
	int had_seq = 0, clock_only = 0, cleared = 0, has_defaults = 0, heap_graph = 0;
	tm_span streaming = {0};
	tm_pb_iter it;
	tm_pb_field f;
	tm_pb_iter_init(&it, raw);
	const uint8_t *at = it.p, *from = it.p;
	while (tm_pb_next(&it, &f) == 1) {
		switch (f.id) {
		case F_TracePacket_clock_snapshot: /* applied by the merge */
		case F_TracePacket_remote_clock_sync:
			end_run(b, &from, at, it.p);
			clock_only = 1;
			break;
		case F_TracePacket_timestamp: /* trace time now, written below */
		case F_TracePacket_timestamp_clock_id:
		case F_TracePacket_machine_id: /* the merge's, written below */
			end_run(b, &from, at, it.p);
			break;
		case F_TracePacket_trusted_packet_sequence_id:
			end_run(b, &from, at, it.p);
			had_seq = 1;
			break;
		case F_TracePacket_incremental_state_cleared:
			cleared |= f.wire == TM_PB_VARINT && f.val;
			break;
		case F_TracePacket_heap_graph:
			heap_graph = 1;
			break;
		case F_TracePacket_sequence_flags:
			cleared |= f.wire == TM_PB_VARINT && (f.val & TM_SEQ_INCREMENTAL_STATE_CLEARED);
			break;
		case F_TracePacket_streaming_profile_packet: /* exp_streaming, on a sequence */
			if (!po->seq_id || f.wire != TM_PB_LEN)
				break; /* kept as it is */
			end_run(b, &from, at, it.p);
			streaming = f.data;
			break;
		case F_TracePacket_trace_packet_defaults:
		case F_TracePacket_track_event:
		case F_TracePacket_track_descriptor:
		case F_TracePacket_ftrace_events: {
			end_run(b, &from, at, it.p);
			if (f.wire != TM_PB_LEN)
				break;
			void (*rewrite)(exp *, tm_buf *, tm_span, const tm_packet_out *) =
				f.id == F_TracePacket_trace_packet_defaults ? rewrite_defaults
				: f.id == F_TracePacket_track_event ? rewrite_track_event
				: f.id == F_TracePacket_track_descriptor ? rewrite_track_descriptor
				: rewrite_bundle;
			x->s1.len = 0;
			rewrite(x, &x->s1, f.data, po);
			put_msg(b, f.id, &x->s1);
			if (f.id == F_TracePacket_trace_packet_defaults && po->seq_id) {
				/* kept for exp_streaming, should the sequence have one */
				struct exp_seq_defaults *d =
					seq_defaults(x, exp_seq(x, po->file_id, po->machine_row, po->seq_id));
				d->bytes.len = 0;
				tm_buf_put(&d->bytes, x->s1.data ? x->s1.data : "", x->s1.len);
				d->chrome = 0;
				has_defaults = 1;
			}
			break;
		}
		}
		at = it.p;
	}
	copy_raw(b, from, at);
	if (cleared && !has_defaults && had_seq && po->seq_id) { /* a clear drops the defaults */
		struct exp_seq_defaults *d = seq_defaults(x, exp_seq(x, po->file_id, po->machine_row, po->seq_id));
		d->bytes.len = 0;
		d->chrome = 0;
	}
	if (streaming.p && !b->len && !po->has_ts) {
		/* nothing but the samples */
		if (had_seq && po->seq_id)
			exp_streaming(x, po, exp_seq(x, po->file_id, po->machine_row, po->seq_id), streaming);
		return;
	}
	/* A clock packet keeps what else it carries (Chromium clears a
	 * sequence's incremental state on its snapshot packet), but not its
	 * time, and is dropped when nothing else is left. */
	if (clock_only && !b->len)
		return;
	if (po->has_ts && !clock_only)
		put_uint(b, F_TracePacket_timestamp, (uint64_t)po->ts);
	/* The reference keeps a heap dump per sequence id, whatever the file
	 * or machine (core/formats/proto/heap_graph.c): a HeapGraph packet
	 * goes on the one sequence of its id. */
	if (had_seq && po->seq_id)
		put_uint(b, F_TracePacket_trusted_packet_sequence_id,
			 heap_graph ? exp_seq(x, UINT32_MAX, UINT32_MAX, po->seq_id)
				    : exp_seq(x, po->file_id, po->machine_row, po->seq_id));
	keep_packet(x, po->machine_row, b);
	if (streaming.p && had_seq && po->seq_id)
		exp_streaming(x, po, exp_seq(x, po->file_id, po->machine_row, po->seq_id), streaming);
}

/* ---- the packet worker ---------------------------------------------------------- */

/* Rewriting the kept packets is a third of a proto export and the scan
 * that finds them most of the rest: with a second core, a worker thread
 * (core/util/relay.h) rewrites while the scan reads on. The scan copies each
 * packet and its timestamps into a chunk (the callback's pointers die
 * with it); at most PW_QUEUE full chunks wait, so memory stays bounded
 * (about (PW_QUEUE + 2) * PW_CHUNK). Every other use of the exporter
 * stops the worker first (pw_stop), once it has rewritten all it was
 * given: the packets are rewritten in the same order, by the same code,
 * and the bytes are the same as without it. */
#define PW_CHUNK (256u * 1024u)
#define PW_QUEUE 8

/* A packet in a chunk, at an offset that is a multiple of 8: this, the
 * bytes (padded to 8), then the ftrace, switch and waking timestamps. */
typedef struct pw_rec {
	uint32_t file_id, machine_row, seq_id;
	int32_t has_ts;
	int64_t ts;
	uint64_t len, n_ftrace, n_switch, n_waking, n_sample;
	int64_t sample_pid, sample_tid;
	uint64_t sample_logs;
} pw_rec;

/* tm_relay's fn: the packets of a chunk, on the worker's thread. */
static void pw_rewrite(void *ctx, const tm_buf *c)
{
	exp *x = ctx;
	for (size_t at = 0; at < c->len;) {
		pw_rec r;
		memcpy(&r, c->data + at, sizeof r);
		const char *p = c->data + at + sizeof r;
		const int64_t *ts = (const int64_t *)(const void *)(p + TM_RELAY_PAD8(r.len));
		tm_packet_out po = {
			.file_id = r.file_id,
			.machine_row = r.machine_row,
			.seq_id = r.seq_id,
			.data = (const uint8_t *)p,
			.len = r.len,
			.has_ts = r.has_ts,
			.ts = r.ts,
			.ftrace_ts = ts,
			.n_ftrace = r.n_ftrace,
			.switch_ts = ts + r.n_ftrace,
			.n_switch = r.n_switch,
			.waking_ts = ts + r.n_ftrace + r.n_switch,
			.n_waking = r.n_waking,
			.sample_ts = ts + r.n_ftrace + r.n_switch + r.n_waking,
			.n_sample = r.n_sample,
			.sample_pid = r.sample_pid,
			.sample_tid = r.sample_tid,
			.sample_logs = (unsigned)r.sample_logs,
		};
		on_packet(x, &po);
		at += sizeof r + TM_RELAY_PAD8(r.len) + 8 * (r.n_ftrace + r.n_switch + r.n_waking + r.n_sample);
	}
}

/* A worker for x, or NULL when this process may run on one CPU only
 * (taskset, a container's cpuset) or no thread can start. */
static tm_relay *pw_start(exp *x)
{
	return tm_relay_useful() ? tm_relay_start("tm-rewrite", pw_rewrite, x, PW_QUEUE) : NULL;
}

static void pw_put(tm_relay *w, const tm_packet_out *po)
{
	pw_rec r = {po->file_id,  po->machine_row, po->seq_id,   po->has_ts,     po->ts,
		    po->len,      po->n_ftrace,    po->n_switch, po->n_waking,   po->n_sample,
		    po->sample_pid, po->sample_tid, po->sample_logs};
	size_t n_ts = po->n_ftrace + po->n_switch + po->n_waking + po->n_sample;
	tm_buf *b = tm_relay_buf(w);
	size_t at = b->len, need = at + sizeof r + TM_RELAY_PAD8(po->len) + 8 * n_ts;
	if (need > b->cap)
		tm_grow((void **)&b->data, &b->cap, need, 1);
	memcpy(b->data + at, &r, sizeof r);
	at += sizeof r;
	/* the padding's word zeroed first, the bytes over it */
	if (po->len)
		memset(b->data + at + TM_RELAY_PAD8(po->len) - 8, 0, 8);
	memcpy(b->data + at, po->data, po->len);
	at += TM_RELAY_PAD8(po->len);
	const int64_t *ts[4] = {po->ftrace_ts, po->switch_ts, po->waking_ts, po->sample_ts};
	size_t n[4] = {po->n_ftrace, po->n_switch, po->n_waking, po->n_sample};
	for (size_t k = 0; k < 4; k++)
		if (n[k]) { /* the array is NULL when empty */
			memcpy(b->data + at, ts[k], 8 * n[k]);
			at += 8 * n[k];
		}
	b->len = at;
	if (b->len >= PW_CHUNK)
		tm_relay_hand(w);
}

/* Wait until every packet handed over is rewritten, then end the worker:
 * the exporter is the caller's alone again. */
static void pw_stop(exp *x)
{
	tm_relay_finish(x->worker);
	x->worker = NULL;
}

/* ---- header ------------------------------------------------------------------ */

/* A header packet straight into one output (the header differs per
 * output: each machine's file starts with its own machine). */
static void put_header_packet(exp *x, uint32_t row, size_t out, Perfetto__Protos__TracePacket *p)
{
	if (x->mach_id[row]) {
		p->has_machine_id = 1;
		p->machine_id = x->mach_id[row];
	}
	size_t n = perfetto__protos__trace_packet__get_packed_size(p);
	TM_GROW(x->pkt.data, x->pkt.cap, n + 1);
	perfetto__protos__trace_packet__pack(p, (uint8_t *)x->pkt.data);
	tm_buf frame = {0};
	put_bytes(&frame, F_Trace_packet, x->pkt.data, n);
	if (out == 0 && x->out.shared) /* one machine: its header is this one */
		tm_views_put_all(&x->out, frame.data, frame.len);
	else
		tm_views_put_one(&x->out, out, frame.data, frame.len);
	tm_buf_free(&frame);
}

static void system_info(exp *x, uint32_t row, size_t out)
{
	const tm_machine *mc = &x->scan->machines.rows[row];
	Perfetto__Protos__Utsname un = PERFETTO__PROTOS__UTSNAME__INIT;
	Perfetto__Protos__SystemInfo si = PERFETTO__PROTOS__SYSTEM_INFO__INIT;
	un.sysname = mc->sysname;
	un.version = mc->version;
	un.release = mc->release;
	un.machine = mc->arch;
	if (mc->sysname || mc->version || mc->release || mc->arch)
		si.utsname = &un;
	if (mc->num_cpus >= 0) {
		si.has_num_cpus = 1;
		si.num_cpus = (uint32_t)mc->num_cpus;
	}
	si.machine_name = mc->name;
	Perfetto__Protos__TracePacket p = PERFETTO__PROTOS__TRACE_PACKET__INIT;
	p.data_case = PERFETTO__PROTOS__TRACE_PACKET__DATA_SYSTEM_INFO;
	p.system_info = &si;
	put_header_packet(x, row, out, &p);
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
	Perfetto__Protos__ClockSnapshot__Clock clocks[6], *cp[6];
	for (size_t i = 0; i < n; i++) {
		Perfetto__Protos__ClockSnapshot__Clock init = PERFETTO__PROTOS__CLOCK_SNAPSHOT__CLOCK__INIT;
		clocks[i] = init;
		clocks[i].has_clock_id = clocks[i].has_timestamp = 1;
		clocks[i].clock_id = ids[i];
		clocks[i].timestamp = 0;
		cp[i] = &clocks[i];
	}
	Perfetto__Protos__ClockSnapshot cs = PERFETTO__PROTOS__CLOCK_SNAPSHOT__INIT;
	cs.n_clocks = n;
	cs.clocks = cp;
	if (first) {
		cs.has_primary_trace_clock = 1;
		cs.primary_trace_clock = (Perfetto__Protos__BuiltinClock)c;
	}
	Perfetto__Protos__TracePacket p = PERFETTO__PROTOS__TRACE_PACKET__INIT;
	p.data_case = PERFETTO__PROTOS__TRACE_PACKET__DATA_CLOCK_SNAPSHOT;
	p.clock_snapshot = &cs;
	put_header_packet(x, row, out, &p);
}

/* A machine whose kernel text travels as ftrace events: the reference
 * reads a text file as a trace of its own, with no start time, while in
 * merged.pftrace a proto's start would make it drop the older events. */
static int has_kernel_text(const exp *x, uint32_t row)
{
	return row < x->scan->machines.n && x->kernel_text[row];
}

static void preserve_ftrace(exp *x, uint32_t row, size_t out)
{
	if (!has_kernel_text(x, row))
		return;
	Perfetto__Protos__FtraceStats fs = PERFETTO__PROTOS__FTRACE_STATS__INIT;
	fs.has_phase = 1;
	fs.phase = PERFETTO__PROTOS__FTRACE_STATS__PHASE__START_OF_TRACE;
	fs.has_preserve_ftrace_buffer = 1;
	fs.preserve_ftrace_buffer = 1;
	Perfetto__Protos__TracePacket p = PERFETTO__PROTOS__TRACE_PACKET__INIT;
	p.data_case = PERFETTO__PROTOS__TRACE_PACKET__DATA_FTRACE_STATS;
	p.ftrace_stats = &fs;
	put_header_packet(x, row, out, &p);
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
	preserve_ftrace(x, (uint32_t)first, out);
	if (only_row >= 0)
		return;
	for (size_t r = 0; r < ms->n; r++) {
		/* A machine no file put data on (a name the manifest declares)
		 * gets no packet: one would give it the threads and processes
		 * the reference makes for every machine it reads data for. */
		if ((int64_t)r == first || !ms->rows[r].has_context)
			continue;
		system_info(x, (uint32_t)r, out);
		if (clock)
			trace_clock(x, (uint32_t)r, out, 0);
		preserve_ftrace(x, (uint32_t)r, out);
	}
}

void tm_export_observed(tm_export_build *x, const tm_mobserved *o)
{
	pw_stop(x);
	exp_text_observed(x->text, o);
}

size_t tm_export_prepare(const tm_export_build *x, int64_t ts, const tm_mrec_head *h, const void *event, tm_buf *b)
{
	return exp_text_prepare(x->text, ts, h, event, b);
}

void tm_export_counter(tm_export_build *x, const tm_mcounter *c)
{
	pw_stop(x);
	exp_text_counter(x->text, c);
}

void tm_export_packet(tm_export_build *x, const tm_packet_out *po)
{
	if (!x->worker && !x->worker_tried) {
		x->worker_tried = 1;
		x->worker = pw_start(x);
	}
	if (x->worker)
		pw_put(x->worker, po);
	else
		on_packet(x, po);
}

static int u32_cmp(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return x < y ? -1 : x > y;
}

/* The merge's machine ids of rows with these raw ids (row order): the raw
 * id where it is an embedded one, else the next id no embedded one uses;
 * the host (raw 0) has none. The embedded ids, sorted, are passed by as
 * `next` grows (thousands of machines). */
static uint32_t *machine_ids(const int64_t *raw, size_t nm)
{
	uint32_t *id = tm_xcalloc(nm ? nm : 1, sizeof(*id));
	uint32_t *embedded = tm_xcalloc(nm ? nm : 1, sizeof(*embedded));
	size_t n_emb = 0;
	for (size_t r = 0; r < nm; r++)
		if (raw[r] > 0 && raw[r] <= UINT32_MAX)
			embedded[n_emb++] = id[r] = (uint32_t)raw[r];
	qsort(embedded, n_emb, sizeof(*embedded), u32_cmp);
	uint32_t next = 1;
	size_t e = 0;
	for (size_t r = 0; r < nm; r++) {
		if (raw[r] == TM_RAW_HOST || id[r])
			continue;
		for (;; next++) {
			while (e < n_emb && embedded[e] < next)
				e++;
			if (e == n_emb || embedded[e] != next)
				break;
		}
		id[r] = next++;
	}
	free(embedded);
	return id;
}

/* The machine ids, the outputs and their headers, for the scan's results.
 * An exporter that wrote kept packets during the scan (`early`) has its
 * ids and outputs already: the scan must have ended with rows that give
 * the same ids (as many rows, the host among them where it was), and the
 * headers go in front of those packets. */
static int export_start(exp *x, const tm_scan *scan, tm_error *err)
{
	tm_merge *m = x->m;
	x->scan = scan;
	size_t nm = scan->machines.n;
	int64_t *raw = tm_xcalloc(nm ? nm : 1, sizeof(*raw));
	for (size_t r = 0; r < nm; r++)
		raw[r] = scan->machines.rows[r].raw_id;
	uint32_t *id = machine_ids(raw, nm);
	free(raw);
	if (x->early) {
		int same = nm == x->n_rows && (!nm || !memcmp(id, x->mach_id, nm * sizeof(*id)));
		free(id);
		if (!same) /* tm_scan_fixed_rows was wrong: a bug, not the input's fault */
			return tm_err(err, TM_EIO, "merged.pftrace: the scan made machines the manifest does not name");
	} else {
		x->mach_id = id;
		x->n_rows = nm;
	}
	x->kernel_text = tm_xcalloc(nm ? nm : 1, 1);
	x->print_files = tm_xcalloc(nm ? nm : 1, 1);
	for (size_t i = 0; i < m->n_files && i < scan->n_files; i++) {
		tm_type ty = m->files[i].type;
		if (ty != TM_TYPE_SYSTRACE && ty != TM_TYPE_JSON && ty != TM_TYPE_PROTO)
			continue;
		for (size_t k = 0; k < scan->files[i].n_machines; k++) {
			uint32_t r = scan->files[i].machines[k];
			if (r >= nm)
				continue;
			if (ty != TM_TYPE_PROTO)
				x->kernel_text[r] = 1;
			if (ty != TM_TYPE_JSON && x->print_files[r] < 2)
				x->print_files[r]++;
		}
	}
	/* no machine views at all without per_machine (TM_GEN_TOP) */
	if (!x->early && tm_views_open(&x->out, x->per_machine ? nm : 0, err))
		return -1;
	if (x->early)
		tm_views_head(&x->out);
	header(x, 0, -1);
	/* With one machine the whole merge's header is that machine's (the
	 * same packets of the same row): the file is shared (tm_views). */
	for (size_t r = 0; x->per_machine && r < nm && !x->out.shared; r++)
		header(x, r + 1, (int64_t)r);
	if (x->early)
		tm_views_head_end(&x->out);
	x->text = exp_text_new(x, x->enc);
	return 0;
}

/* An exporter with no file open yet (aligned: see exp.worker). */
static exp *exp_alloc(tm_merge *m, const tm_encoders *enc)
{
	exp *x = tm_xcalloc_aligned(_Alignof(exp), sizeof(exp));
	x->m = m;
	x->enc = enc;
	x->out.all.fd = x->out.mach.file.fd = x->out.head.fd = x->body.fd = -1;
	return x;
}

tm_export_build *tm_export_new_with(tm_merge *m, const tm_scan *scan, int per_machine, const tm_encoders *enc,
				    tm_error *err)
{
	exp *x = exp_alloc(m, enc);
	x->per_machine = per_machine;
	if (export_start(x, scan, err) != 0) {
		tm_export_abort(x);
		return NULL;
	}
	return x;
}

tm_export_build *tm_export_new_deferred_with(tm_merge *m, int per_machine, const tm_encoders *enc,
					     tm_error *err)
{
	exp *x = exp_alloc(m, enc);
	x->per_machine = per_machine;
	size_t n;
	const tm_mf_row *rows = tm_scan_fixed_rows(m, &n);
	if (rows) {
		/* The machine ids are known now: kept packets go to the
		 * outputs as the scan finds them, and the headers in front
		 * of them once it is done (tm_views_head). */
		int64_t *raw = tm_xcalloc(n ? n : 1, sizeof(*raw));
		for (size_t r = 0; r < n; r++)
			raw[r] = rows[r].raw_id;
		x->mach_id = machine_ids(raw, n);
		free(raw);
		x->n_rows = n;
		x->early = 1;
		if (tm_views_open(&x->out, per_machine ? n : 0, err) != 0) {
			tm_export_abort(x);
			return NULL;
		}
		return x;
	}
	x->deferred = 1;
	if (tm_spool_open(&x->body, err) != 0) {
		tm_export_abort(x);
		return NULL;
	}
	return x;
}

void tm_export_thread_pids(tm_export_build *x, int64_t *pids, size_t n)
{
	free(x->final_pid);
	x->final_pid = pids;
	x->n_final_pid = n;
}

int tm_export_wants_thread_pids(const tm_merge *m)
{
	int strace = 0, other = 0;
	for (size_t i = 0; i < m->n_files; i++) {
		tm_type ty = m->files[i].type;
		if (ty == TM_TYPE_STRACE)
			strace = 1;
		else if (tm_type_is_trace(ty))
			other = 1;
	}
	return strace && other;
}

int tm_export_attach(tm_export_build *x, const tm_scan *scan, tm_error *err)
{
	pw_stop(x);
	if (export_start(x, scan, err) != 0)
		return -1;
	if (!x->deferred)
		return 0;
	x->deferred = 0;
	return copy_deferred(x, err);
}

tm_export *tm_export_finish(tm_export_build *x, const tm_model *model, tm_error *err)
{
	tm_export *res = NULL;
	pw_stop(x);
	exp_text_finish(x->text, model);
	res = tm_views_take(&x->out, "merged.pftrace", err);
	tm_export_abort(x);
	return res;
}

void tm_export_abort(tm_export_build *x)
{
	if (!x)
		return;
	pw_stop(x);
	exp_text_free(x->text);
	tm_views_close(&x->out);
	tm_spool_close(&x->body);
	free(x->mach_id);
	free(x->final_pid);
	free(x->kernel_text);
	free(x->print_files);
	free(x->seqs.s);
	for (size_t i = 0; i < x->cap_seq_defaults; i++)
		tm_buf_free(&x->seq_defaults[i].bytes);
	free(x->seq_defaults);
	tm_buf_free(&x->pkt);
	tm_buf_free(&x->s1);
	tm_buf_free(&x->s2);
	tm_buf_free(&x->s3);
	tm_ftrace_bundle_free(&x->bundle);
	for (size_t i = 0; i < N_OF(x->col); i++)
		free(x->col[i].v);
	free(x);
}

void tm_export_free(tm_export *x)
{
	tm_spooled_free(x);
}
