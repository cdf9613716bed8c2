/* core/wire/proto.c - the wire-level field iterator, TracePacket extraction and
 * the streaming Trace reader (spec/formats.md §5.1, §5.2).
 *
 * The framing follows the reference's tokenizer (proto_trace_tokenizer.h):
 * top-level fields other than packet are skipped by wire type, an input
 * that ends inside a field ends the trace silently, and a compressed
 * bundle is inflated whole, then re-framed with its own, stricter checks.
 * Field parsing follows protozero's ParseOneField, so that "parses fully"
 * means the same thing here as there.
 */
#include "wire/proto.h"

#include <inttypes.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <zlib.h>

/* ---- wire level -------------------------------------------------------- */


void tm_pb_iter_init(tm_pb_iter *it, tm_span msg)
{
	it->p = msg.p;
	it->end = msg.p ? msg.p + msg.n : NULL;
	it->malformed = false;
}

int tm_pb_next(tm_pb_iter *it, tm_pb_field *f)
{
	if (it->malformed)
		return -1;
	for (;;) {
		if (it->p >= it->end)
			return 0;
		int r = tm_pb_field_at(&it->p, it->end, f);
		if (r == TM_PB_FIELD_OK)
			return 1;
		if (r == TM_PB_FIELD_END) {
			it->malformed = true;
			return -1;
		}
	}
}

int tm_pb_varint(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
	const uint8_t *q = tm_pb_varint_at(*p, end, v);
	if (!q)
		return 0;
	*p = q;
	return 1;
}

void tm_pb_values_init(tm_pb_values *it, const tm_pb_field *f)
{
	it->has_one = f->wire == TM_PB_VARINT;
	it->malformed = false;
	it->one = f->val;
	it->p = it->end = NULL;
	if (f->wire == TM_PB_LEN) {
		it->p = f->data.p;
		it->end = f->data.p + f->data.n;
	}
}

int tm_pb_values_next(tm_pb_values *it, uint64_t *v)
{
	if (it->has_one) {
		it->has_one = false;
		*v = it->one;
		return 1;
	}
	if (it->p < it->end && tm_pb_varint(&it->p, it->end, v))
		return 1;
	it->malformed = it->p < it->end;
	it->p = it->end;
	return 0;
}

size_t tm_pb_varints(tm_span msg, uint32_t id, uint64_t **v, size_t *cap)
{
	size_t n = 0;
	tm_pb_iter it;
	tm_pb_field f;
	tm_pb_iter_init(&it, msg);
	while (tm_pb_next(&it, &f) == 1) {
		if (f.id != id)
			continue;
		tm_pb_values vs;
		uint64_t x;
		tm_pb_values_init(&vs, &f);
		while (tm_pb_values_next(&vs, &x)) {
			TM_GROW(*v, *cap, n + 1);
			(*v)[n++] = x;
		}
	}
	return n;
}

size_t tm_pb_repeated_spans(tm_span msg, uint32_t id, tm_span *out, size_t max)
{
	tm_pb_iter it;
	tm_pb_field f;
	size_t n = 0;
	tm_pb_iter_init(&it, msg);
	while (tm_pb_next(&it, &f) > 0)
		if (f.id == id && f.wire == TM_PB_LEN) {
			if (n < max)
				out[n] = f.data;
			n++;
		}
	return n;
}

/* ---- one TracePacket ---------------------------------------------------- */

static const char ERR_NOT_FULLY[] =
	"Failed to parse proto packet fully; the trace is probably corrupt. (ERR:tp-corrupt)";

/* TracePacket field number -> 1 + TM_PKT_* slot (0: not a span we keep);
 * as long as the highest number kept. */
static const uint8_t pkt_len_slot[] = {
	[F_TracePacket_ftrace_events] = 1 + TM_PKT_FTRACE_EVENTS,
	[F_TracePacket_process_tree] = 1 + TM_PKT_PROCESS_TREE,
	[F_TracePacket_chrome_events] = 1 + TM_PKT_CHROME_EVENTS,
	[F_TracePacket_clock_snapshot] = 1 + TM_PKT_CLOCK_SNAPSHOT,
	[F_TracePacket_track_event] = 1 + TM_PKT_TRACK_EVENT,
	[F_TracePacket_interned_data] = 1 + TM_PKT_INTERNED_DATA,
	[F_TracePacket_trace_config] = 1 + TM_PKT_TRACE_CONFIG,
	[F_TracePacket_trace_stats] = 1 + TM_PKT_TRACE_STATS,
	[F_TracePacket_synchronization_marker] = 1 + TM_PKT_SYNCHRONIZATION_MARKER,
	[F_TracePacket_process_descriptor] = 1 + TM_PKT_PROCESS_DESCRIPTOR,
	[F_TracePacket_thread_descriptor] = 1 + TM_PKT_THREAD_DESCRIPTOR,
	[F_TracePacket_system_info] = 1 + TM_PKT_SYSTEM_INFO,
	[F_TracePacket_compressed_packets] = 1 + TM_PKT_COMPRESSED_PACKETS,
	[F_TracePacket_chrome_metadata] = 1 + TM_PKT_CHROME_METADATA,
	[F_TracePacket_trace_packet_defaults] = 1 + TM_PKT_TRACE_PACKET_DEFAULTS,
	[F_TracePacket_track_descriptor] = 1 + TM_PKT_TRACK_DESCRIPTOR,
	[F_TracePacket_service_event] = 1 + TM_PKT_SERVICE_EVENT,
	[F_TracePacket_remote_clock_sync] = 1 + TM_PKT_REMOTE_CLOCK_SYNC,
	[F_TracePacket_trace_attributes] = 1 + TM_PKT_TRACE_ATTRIBUTES,
	[F_TracePacket_zstd_compressed_packets] = 1 + TM_PKT_ZSTD_COMPRESSED_PACKETS,
};

_Static_assert(sizeof(((tm_packet *)0)->span) == 20 * sizeof(tm_span) && TM_PKT_NSPANS == 20,
	       "tm_packet's named spans must cover the TM_PKT_* enum");
_Static_assert(TM_PKT_NSPANS <= 32, "span_mask has 32 bits");

static void pkt_varint(tm_packet *pkt, uint32_t id, uint64_t v)
{
	switch (id) {
	case F_TracePacket_timestamp:
		pkt->has_timestamp = true;
		pkt->timestamp = v;
		break;
	case F_TracePacket_timestamp_clock_id:
		pkt->has_timestamp_clock_id = true;
		pkt->timestamp_clock_id = (uint32_t)v;
		break;
	case F_TracePacket_trusted_packet_sequence_id:
		pkt->has_trusted_packet_sequence_id = true;
		pkt->trusted_packet_sequence_id = (uint32_t)v;
		break;
	case F_TracePacket_machine_id:
		pkt->has_machine_id = true;
		pkt->machine_id = (uint32_t)v;
		break;
	case F_TracePacket_sequence_flags: pkt->sequence_flags = (uint32_t)v; break;
	case F_TracePacket_incremental_state_cleared: pkt->incremental_state_cleared = v != 0; break;
	case F_TracePacket_previous_packet_dropped: pkt->previous_packet_dropped = (uint32_t)v; break;
	case F_TracePacket_first_packet_on_sequence: pkt->first_packet_on_sequence = v != 0; break;
	case F_TracePacket_trusted_uid:
		pkt->has_trusted_uid = true;
		pkt->trusted_uid = (int32_t)(uint32_t)v;
		break;
	case F_TracePacket_trusted_pid:
		pkt->has_trusted_pid = true;
		pkt->trusted_pid = (int32_t)(uint32_t)v;
		break;
	default: break;
	}
}

/* The one pass over a TracePacket (the hot path of every scan): the same
 * acceptance rules as pb_field, written out so that nothing but the varint
 * decoder is a call. `pkt` must hold no spans outside pkt->span_mask (a
 * zeroed struct, or the previous packet extracted into it). Returns 0 when
 * the packet parsed to its end, -1 when it stopped at malformed bytes. */
static int packet_extract(tm_span raw, tm_packet *pkt)
{
	for (uint32_t m = pkt->span_mask; m; m &= m - 1)
		pkt->span[__builtin_ctz(m)] = (tm_span){NULL, 0};
	memset(pkt, 0, offsetof(tm_packet, span));
	pkt->raw = raw;
	if (!raw.n)
		return 0;
	const uint8_t *p = raw.p, *end = raw.p + raw.n;
	while (p < end) {
		uint64_t tag, v;
		if (*p < 0x80)
			tag = *p++;
		else if (!(p = tm_pb_varint_at(p, end, &tag)))
			return -1;
		uint32_t id = (uint32_t)(tag >> 3);
		if (id < TM_PB_MIN_FIELD_ID || p >= end)
			return -1;
		switch (tag & 7) {
		case TM_PB_VARINT:
			if (*p < 0x80)
				v = *p++;
			else if (!(p = tm_pb_varint_at(p, end, &v)))
				return -1;
			pkt_varint(pkt, id, v);
			break;
		case TM_PB_LEN:
			if (*p < 0x80)
				v = *p++;
			else if (!(p = tm_pb_varint_at(p, end, &v)))
				return -1;
			if (v > (uint64_t)(end - p))
				return -1;
			/* Fields the reference skips (TM_PB_MAX_*) are never kept. */
			if (id < sizeof(pkt_len_slot) && pkt_len_slot[id] && v <= TM_PB_MAX_LEN) {
				unsigned slot = pkt_len_slot[id] - 1u;
				pkt->span[slot] = (tm_span){p, (size_t)v};
				pkt->span_mask |= 1u << slot;
			}
			p += v;
			break;
		case TM_PB_I64:
			if (end - p < 8)
				return -1;
			p += 8;
			break;
		case TM_PB_I32:
			if (end - p < 4)
				return -1;
			p += 4;
			break;
		default:
			return -1;
		}
	}
	pkt->synchronization_marker = TM_SPAN_HAS(pkt->synchronization_marker_bytes);
	return 0;
}

int tm_packet_extract(tm_span raw, tm_packet *pkt, tm_error *err)
{
	memset(pkt, 0, sizeof(*pkt));
	if (packet_extract(raw, pkt) < 0)
		return tm_err(err, TM_EINPUT, "%s", ERR_NOT_FULLY);
	return 0;
}

/* ---- packets in a batch --------------------------------------------------- */

/* What tm_packet_put writes: a head, the scalars the head says are there
 * (8 bytes each, in this order), a (start, length) per span in `raw`,
 * then the packet's bytes. Most packets are a timestamp, a sequence id
 * and one span: 40 bytes besides their own. */
typedef struct put_head {
	uint32_t raw_n, span_mask;
	uint32_t bits;
	uint32_t pad;
} put_head;

enum {
	PB_FROM_COMPRESSED = 1u << 0,
	PB_TIMESTAMP = 1u << 1,
	PB_CLOCK = 1u << 2,
	PB_SEQ = 1u << 3,
	PB_MACHINE = 1u << 4,
	PB_UID = 1u << 5,
	PB_PID = 1u << 6,
	PB_CLEARED = 1u << 7,
	PB_FIRST_ON_SEQ = 1u << 8,
	PB_SYNC_MARKER = 1u << 9,
	/* scalars that follow the head */
	PB_HAS_OFFSET = 1u << 16,
	PB_HAS_TIMESTAMP = 1u << 17,
	PB_HAS_IDS = 1u << 18,      /* clock id and sequence id */
	PB_HAS_MACHINE = 1u << 19,  /* machine id and sequence flags */
	PB_HAS_DROPPED = 1u << 20,  /* previous_packet_dropped */
	PB_HAS_TRUSTED = 1u << 21,  /* uid and pid */
};

static inline char *put8(char *o, uint64_t v)
{
	memcpy(o, &v, 8);
	return o + 8;
}

static inline char *put2x4(char *o, uint32_t a, uint32_t b)
{
	uint32_t w[2] = {a, b};
	memcpy(o, w, 8);
	return o + 8;
}

void tm_packet_put(tm_buf *b, const tm_packet *p)
{
	uint32_t bits = (p->from_compressed ? PB_FROM_COMPRESSED : 0u) | (p->has_timestamp ? PB_TIMESTAMP : 0u) |
			(p->has_timestamp_clock_id ? PB_CLOCK : 0u) | (p->has_trusted_packet_sequence_id ? PB_SEQ : 0u) |
			(p->has_machine_id ? PB_MACHINE : 0u) | (p->has_trusted_uid ? PB_UID : 0u) |
			(p->has_trusted_pid ? PB_PID : 0u) | (p->incremental_state_cleared ? PB_CLEARED : 0u) |
			(p->first_packet_on_sequence ? PB_FIRST_ON_SEQ : 0u) |
			(p->synchronization_marker ? PB_SYNC_MARKER : 0u) | (p->offset ? PB_HAS_OFFSET : 0u) |
			(p->timestamp ? PB_HAS_TIMESTAMP : 0u) |
			(p->timestamp_clock_id || p->trusted_packet_sequence_id ? PB_HAS_IDS : 0u) |
			(p->machine_id || p->sequence_flags ? PB_HAS_MACHINE : 0u) |
			(p->previous_packet_dropped ? PB_HAS_DROPPED : 0u) |
			(p->trusted_uid || p->trusted_pid ? PB_HAS_TRUSTED : 0u);
	/* room for every scalar and a span per bit: a bound, not a size */
	size_t at = (b->len + 7) & ~(size_t)7;
	size_t bound = at + sizeof(put_head) + 6 * 8 + TM_PKT_NSPANS * 8 + p->raw.n;
	if (bound + 1 > b->cap)
		tm_grow((void **)&b->data, &b->cap, bound + 1, 1);
	char *o = b->data + at;
	put_head h = {(uint32_t)p->raw.n, p->span_mask, bits, 0};
	memcpy(o, &h, sizeof h);
	o += sizeof h;
	if (bits & PB_HAS_OFFSET)
		o = put8(o, p->offset);
	if (bits & PB_HAS_TIMESTAMP)
		o = put8(o, p->timestamp);
	if (bits & PB_HAS_IDS)
		o = put2x4(o, p->timestamp_clock_id, p->trusted_packet_sequence_id);
	if (bits & PB_HAS_MACHINE)
		o = put2x4(o, p->machine_id, p->sequence_flags);
	if (bits & PB_HAS_DROPPED)
		o = put2x4(o, p->previous_packet_dropped, 0);
	if (bits & PB_HAS_TRUSTED)
		o = put2x4(o, (uint32_t)p->trusted_uid, (uint32_t)p->trusted_pid);
	for (uint32_t m = p->span_mask; m; m &= m - 1) {
		const tm_span *sp = &p->span[__builtin_ctz(m)];
		o = put2x4(o, (uint32_t)(sp->p - p->raw.p), (uint32_t)sp->n);
	}
	if (p->raw.n)
		memcpy(o, p->raw.p, p->raw.n);
	b->len = (size_t)(o - b->data) + p->raw.n;
	b->data[b->len] = '\0';
}

static inline uint64_t get8(const char **i)
{
	uint64_t v;
	memcpy(&v, *i, 8);
	*i += 8;
	return v;
}

void tm_packet_get(const char **at, tm_packet *p)
{
	/* where tm_packet_put started it (a batch's buffer is malloc'd) */
	const char *i = (const char *)(((uintptr_t)*at + 7) & ~(uintptr_t)7);
	put_head h;
	memcpy(&h, i, sizeof h);
	i += sizeof h;
	uint32_t bits = h.bits;
	uint32_t w[2];
	p->offset = bits & PB_HAS_OFFSET ? get8(&i) : 0;
	p->timestamp = bits & PB_HAS_TIMESTAMP ? get8(&i) : 0;
	p->timestamp_clock_id = p->trusted_packet_sequence_id = 0;
	if (bits & PB_HAS_IDS) {
		memcpy(w, i, 8);
		i += 8;
		p->timestamp_clock_id = w[0];
		p->trusted_packet_sequence_id = w[1];
	}
	p->machine_id = p->sequence_flags = 0;
	if (bits & PB_HAS_MACHINE) {
		memcpy(w, i, 8);
		i += 8;
		p->machine_id = w[0];
		p->sequence_flags = w[1];
	}
	p->previous_packet_dropped = 0;
	if (bits & PB_HAS_DROPPED) {
		memcpy(w, i, 8);
		i += 8;
		p->previous_packet_dropped = w[0];
	}
	p->trusted_uid = p->trusted_pid = 0;
	if (bits & PB_HAS_TRUSTED) {
		memcpy(w, i, 8);
		i += 8;
		p->trusted_uid = (int32_t)w[0];
		p->trusted_pid = (int32_t)w[1];
	}
	for (uint32_t m = p->span_mask; m; m &= m - 1)
		p->span[__builtin_ctz(m)] = (tm_span){NULL, 0};
	const char *spans = i;
	for (uint32_t m = h.span_mask; m; m &= m - 1)
		i += 8;
	const uint8_t *raw = (const uint8_t *)i;
	for (uint32_t m = h.span_mask; m; m &= m - 1) {
		memcpy(w, spans, 8);
		spans += 8;
		p->span[__builtin_ctz(m)] = (tm_span){raw + w[0], w[1]};
	}
	p->raw = (tm_span){raw, h.raw_n};
	p->span_mask = h.span_mask;
	p->from_compressed = (bits & PB_FROM_COMPRESSED) != 0;
	p->has_timestamp = (bits & PB_TIMESTAMP) != 0;
	p->has_timestamp_clock_id = (bits & PB_CLOCK) != 0;
	p->has_trusted_packet_sequence_id = (bits & PB_SEQ) != 0;
	p->has_machine_id = (bits & PB_MACHINE) != 0;
	p->has_trusted_uid = (bits & PB_UID) != 0;
	p->has_trusted_pid = (bits & PB_PID) != 0;
	p->incremental_state_cleared = (bits & PB_CLEARED) != 0;
	p->first_packet_on_sequence = (bits & PB_FIRST_ON_SEQ) != 0;
	p->synchronization_marker = (bits & PB_SYNC_MARKER) != 0;
	*at = (const char *)raw + h.raw_n;
}

/* ---- the streaming reader ----------------------------------------------- */

#define TRACE_PACKET_TAG TM_PB_TAG(F_Trace_packet, TM_PB_LEN)
#define HEADER_MAX 20         /* a tag and a length, 10 bytes each at most */
#define BUF_INITIAL ((size_t)1 << 20)
#define INNER_KEEP ((size_t)16 << 20) /* buffers above this are given back when done */

enum { CODEC_NONE, CODEC_GZIP, CODEC_ZSTD };

struct tm_proto_reader {
	tm_cursor *cur;
	uint8_t *buf;
	size_t cap;
	size_t pos, len;        /* unconsumed bytes are buf[pos, len) */
	uint64_t base;          /* stream offset of buf[0] */
	bool eof;
	int failed;
	tm_error fail;
	size_t chunk;           /* 0: read as much as fits */
	size_t max_packet;
	uint64_t trailing;
	tm_packet pkt;          /* the packet handed out; reused */

	/* The inflated bundle being re-framed. */
	uint8_t *inner;
	size_t inner_len, inner_pos, inner_cap;
	uint64_t inner_offset;  /* offset of the compressed packet */
	int codec;              /* the first codec used; the other is refused */
};

tm_proto_reader *tm_proto_reader_new(tm_cursor *c)
{
	tm_proto_reader *r = tm_xcalloc(1, sizeof(*r));
	r->cur = c;
	r->max_packet = TM_PROTO_MAX_PACKET;
	return r;
}

void tm_proto_reader_free(tm_proto_reader *r)
{
	if (!r)
		return;
	free(r->buf);
	free(r->inner);
	free(r);
}

void tm_proto_reader_set_chunk(tm_proto_reader *r, size_t n)
{
	r->chunk = n ? n : 1;
}

void tm_proto_reader_set_max_packet(tm_proto_reader *r, size_t max)
{
	r->max_packet = max;
}

uint64_t tm_proto_reader_trailing(const tm_proto_reader *r)
{
	return r->trailing;
}

static int reader_fail(tm_proto_reader *r, const tm_error *err)
{
	r->failed = 1;
	r->fail = *err;
	return -1;
}

/* Make at least `need` unconsumed bytes available, unless the input ends
 * first. Returns how many are available, or -1 (cursor error). */
static ssize_t fill(tm_proto_reader *r, size_t need, tm_error *err)
{
	size_t avail = r->len - r->pos;
	if (avail >= need || r->eof)
		return (ssize_t)avail;
	if (r->pos + need > r->cap || r->cap > INNER_KEEP) {
		if (avail)
			memmove(r->buf, r->buf + r->pos, avail);
		r->base += r->pos;
		r->len = avail;
		r->pos = 0;
		if (r->cap > INNER_KEEP && need <= BUF_INITIAL && avail <= BUF_INITIAL) {
			/* Back to normal after a huge packet. */
			r->buf = tm_xrealloc(r->buf, BUF_INITIAL);
			r->cap = BUF_INITIAL;
		}
		if (need > r->cap) {
			size_t cap = r->cap ? r->cap : BUF_INITIAL;
			while (cap < need)
				cap *= 2;
			r->buf = tm_xrealloc(r->buf, cap);
			r->cap = cap;
		}
	}
	while (r->len - r->pos < need) {
		size_t want = r->cap - r->len;
		if (r->chunk && want > r->chunk)
			want = r->chunk;
		ssize_t got = tm_cursor_read(r->cur, r->buf + r->len, want, err);
		if (got < 0)
			return -1;
		if (got == 0) {
			r->eof = true;
			break;
		}
		r->len += (size_t)got;
	}
	return (ssize_t)(r->len - r->pos);
}

/* The input ended inside the field starting at the current position. */
static int end_inside_field(tm_proto_reader *r)
{
	r->trailing = r->len - r->pos;
	r->pos = r->len;
	return 0;
}

/* Consume `n` bytes that need not be kept (a skipped field, or a packet too
 * big to hold). Returns 1 when all were there, 0 when the input ended
 * first, -1 on a cursor error. */
static int discard(tm_proto_reader *r, uint64_t n, tm_error *err)
{
	uint64_t start = r->base + r->pos;
	while (n) {
		size_t avail = r->len - r->pos;
		if (!avail) {
			r->base += r->len;
			r->pos = r->len = 0;
			ssize_t a = fill(r, 1, err);
			if (a < 0)
				return -1;
			if (a == 0) {
				r->trailing = r->base - start;
				return 0;
			}
			avail = (size_t)a;
		}
		size_t take = avail < n ? avail : (size_t)n;
		r->pos += take;
		n -= take;
	}
	return 1;
}

static int inflate_gzip(tm_proto_reader *r, tm_span in, tm_error *err)
{
	z_stream z;
	memset(&z, 0, sizeof(z));
	/* 32 + 15: zlib or gzip header, as the reference's gzip decompressor. */
	if (inflateInit2(&z, 32 + 15) != Z_OK)
		return tm_err(err, TM_ENOMEM, "zlib: cannot initialise inflate");
	z.next_in = (Bytef *)in.p;
	size_t left = in.n;
	int rc = Z_OK;
	r->inner_len = 0;
	for (;;) {
		if (z.avail_in == 0 && left) {
			z.avail_in = left > UINT_MAX ? UINT_MAX : (uInt)left;
			left -= z.avail_in;
		}
		if (r->inner_len == r->inner_cap) {
			if (r->inner_cap >= r->max_packet) {
				inflateEnd(&z);
				return tm_err(err, TM_EUNSUP,
					      "compressed_packets expands to more than %zu bytes; tracemount does not read bigger bundles",
					      r->max_packet);
			}
			size_t cap = r->inner_cap ? r->inner_cap * 2 : in.n * 4 + 4096;
			if (cap > r->max_packet)
				cap = r->max_packet;
			r->inner = tm_xrealloc(r->inner, cap);
			r->inner_cap = cap;
		}
		size_t room = r->inner_cap - r->inner_len;
		z.next_out = r->inner + r->inner_len;
		z.avail_out = room > UINT_MAX ? UINT_MAX : (uInt)room;
		uInt before = z.avail_out;
		rc = inflate(&z, Z_NO_FLUSH);
		r->inner_len += before - z.avail_out;
		if (rc == Z_STREAM_END || (rc != Z_OK && rc != Z_BUF_ERROR))
			break;
		if (rc == Z_BUF_ERROR && z.avail_in == 0 && !left)
			break; /* input ended before the stream did */
	}
	/* One deflate stream exactly: trailing bytes are as bad as missing ones
	 * (the reference decodes a single frame). */
	bool ok = rc == Z_STREAM_END && z.avail_in == 0 && !left;
	inflateEnd(&z);
	if (!ok)
		return tm_err(err, TM_EINPUT, "Failed to decompress compressed_packets (ERR:tp-corrupt)");
	return 0;
}

/* zstd through libarchive's filter (core/archive's stream decoder): no
 * zstd library of our own. A corrupt frame surfaces as a read error. */
static int inflate_zstd(tm_proto_reader *r, tm_span in, tm_error *err)
{
	static const char ERR_ZSTD[] = "Failed to decompress compressed_packets (ERR:tp-corrupt)";
	if (in.n == 0)
		return tm_err(err, TM_EINPUT, "%s", ERR_ZSTD);
	tm_blob *mem = tm_blob_open_memory(in.p, in.n);
	tm_error e;
	tm_err_clear(&e);
	tm_blob *z = tm_blob_decompress(mem, TM_CODEC_ZSTD, &e);
	tm_blob_unref(mem);
	tm_cursor *c = z ? tm_cursor_open(z, &e) : NULL;
	int rc = 0;
	r->inner_len = 0;
	while (c) {
		if (r->inner_len == r->inner_cap) {
			if (r->inner_cap >= r->max_packet) {
				rc = tm_err(err, TM_EUNSUP,
					    "zstd_compressed_packets expands to more than %zu bytes; tracemount does not read bigger bundles",
					    r->max_packet);
				break;
			}
			size_t cap = r->inner_cap ? r->inner_cap * 2 : in.n * 4 + 4096;
			if (cap > r->max_packet)
				cap = r->max_packet;
			r->inner = tm_xrealloc(r->inner, cap);
			r->inner_cap = cap;
		}
		ssize_t got = tm_cursor_read(c, r->inner + r->inner_len, r->inner_cap - r->inner_len, &e);
		if (got < 0) {
			rc = tm_err(err, TM_EINPUT, "%s", ERR_ZSTD);
			break;
		}
		if (got == 0)
			break;
		r->inner_len += (size_t)got;
	}
	if (!c && !rc)
		rc = tm_err(err, TM_EINPUT, "%s", ERR_ZSTD);
	tm_cursor_close(c);
	tm_blob_unref(z);
	return rc;
}

/* formats.md §5.1: inflate a bundle; the reader then re-frames it. */
static int expand(tm_proto_reader *r, const tm_packet *pkt, tm_error *err)
{
	/* compressed_packets wins when both are present, as in the reference. */
	int codec = TM_SPAN_HAS(pkt->compressed_packets) ? CODEC_GZIP : CODEC_ZSTD;
	if (r->codec && r->codec != codec)
		return tm_err(err, TM_EINPUT,
			      "A trace must not mix compressed_packets and zstd_compressed_packets (ERR:tp-corrupt)");
	r->codec = codec;
	int rc = codec == CODEC_GZIP ? inflate_gzip(r, pkt->compressed_packets, err)
				     : inflate_zstd(r, pkt->zstd_compressed_packets, err);
	if (rc < 0) {
		r->inner_len = 0;
		return -1;
	}
	r->inner_pos = 0;
	r->inner_offset = pkt->offset;
	return 0;
}

/* The next packet of the inflated bundle (the reference's inner loop: it
 * stops when two bytes or fewer are left). 1, 0 (bundle done) or -1. */
static int next_inner(tm_proto_reader *r, tm_packet *pkt, tm_error *err)
{
	if (r->inner_len - r->inner_pos <= 2) {
		r->inner_len = r->inner_pos = 0;
		if (r->inner_cap > INNER_KEEP) { /* do not sit on a huge bundle's memory */
			free(r->inner);
			r->inner = NULL;
			r->inner_cap = 0;
		}
		return 0;
	}
	const uint8_t *outer = r->inner + r->inner_pos, *end = r->inner + r->inner_len;
	if (*outer != TRACE_PACKET_TAG)
		return tm_err(err, TM_EINPUT, "Expected TracePacket tag (ERR:tp-corrupt)");
	uint64_t size;
	const uint8_t *p = tm_pb_varint_at(outer + 1, end, &size);
	if (!p || size > (uint64_t)(end - p))
		return tm_err(err, TM_EINPUT, "Invalid packet size (ERR:tp-corrupt)");
	r->inner_pos = (size_t)(p + size - r->inner);
	tm_span raw = {p, (size_t)size};
	if (packet_extract(raw, pkt) < 0)
		return tm_err(err, TM_EINPUT, "%s", ERR_NOT_FULLY);
	if (TM_SPAN_HAS(pkt->compressed_packets) || TM_SPAN_HAS(pkt->zstd_compressed_packets))
		return tm_err(err, TM_EUNSUP, "compressed_packets nested inside compressed_packets are not supported");
	pkt->offset = r->inner_offset;
	pkt->from_compressed = true;
	return 1;
}

/* Skip a top-level field that is not a packet, by wire type. `h` points at
 * the header (tag already parsed up to `q`), `hn` bytes of it available.
 * Returns 1 skipped, 0 the input ended, -1 error. */
static int skip_other(tm_proto_reader *r, uint64_t tag, const uint8_t *h, const uint8_t *q,
		      size_t hn, uint64_t at, tm_error *err)
{
	const uint8_t *hend = h + hn;
	uint64_t v;
	switch (tag & 7) {
	case TM_PB_VARINT: {
		const uint8_t *e = tm_pb_varint_at(q, hend, &v);
		if (!e) {
			if (hn < HEADER_MAX)
				return end_inside_field(r);
			return tm_err(err, TM_EINPUT, "Failed to skip varint @ 0x%" PRIx64 " (ERR:tp-corrupt)", at);
		}
		r->pos += (size_t)(e - h);
		return 1;
	}
	case TM_PB_LEN: {
		const uint8_t *e = tm_pb_varint_at(q, hend, &v);
		if (!e) {
			if (hn < HEADER_MAX)
				return end_inside_field(r);
			return tm_err(err, TM_EINPUT, "Failed to skip delimited @ 0x%" PRIx64 " (ERR:tp-corrupt)", at);
		}
		uint64_t over = (uint64_t)(e - h);
		if (v > SIZE_MAX - over)
			return tm_err(err, TM_EINPUT,
				      "Oversized length-delimited field @ 0x%" PRIx64 " (ERR:tp-corrupt)", at);
		return discard(r, over + v, err);
	}
	case TM_PB_I64:
	case TM_PB_I32: {
		uint64_t n = (uint64_t)(q - h) + ((tag & 7) == TM_PB_I64 ? 8 : 4);
		return discard(r, n, err);
	}
	default:
		return tm_err(err, TM_EINPUT,
			      "Unknown field type @ 0x%" PRIx64
			      "; the trace is corrupt or was produced by a newer version of Perfetto (ERR:tp-corrupt)",
			      at);
	}
}

/* One top-level step: 1 a packet in *pkt, 2 something skipped or a bundle
 * expanded (call again), 0 the end, -1 error. */
static int next_outer(tm_proto_reader *r, tm_packet *pkt, tm_error *err)
{
	ssize_t avail = (ssize_t)(r->len - r->pos);
	if (avail < HEADER_MAX && (avail = fill(r, HEADER_MAX, err)) < 0)
		return -1;
	uint64_t at = r->base + r->pos;
	if (avail < 2) /* the reference waits for a 2-byte header */
		return avail ? end_inside_field(r) : 0;
	size_t hn = (size_t)avail < HEADER_MAX ? (size_t)avail : HEADER_MAX;
	const uint8_t *h = r->buf + r->pos, *hend = h + hn;
	uint64_t tag;
	const uint8_t *q = tm_pb_varint_at(h, hend, &tag);
	if (!q) {
		if (hn < HEADER_MAX)
			return end_inside_field(r);
		return tm_err(err, TM_EINPUT, "Failed to parse tag @ 0x%" PRIx64 " (ERR:tp-corrupt)", at);
	}
	if (tag != TRACE_PACKET_TAG) {
		int s = skip_other(r, tag, h, q, hn, at, err);
		return s == 1 ? 2 : s;
	}
	uint64_t size;
	const uint8_t *body = tm_pb_varint_at(q, hend, &size);
	if (!body) {
		if (hn < HEADER_MAX)
			return end_inside_field(r);
		return tm_err(err, TM_EINPUT, "Failed to parse TracePacket size (ERR:tp-corrupt)");
	}
	size_t hdr = (size_t)(body - h);
	if (size == 0) { /* the reference drops empty packets */
		r->pos += hdr;
		return 2;
	}
	if (size > r->max_packet) {
		/* Too big to hold. If the input ends inside it, the reference
		 * would end silently too; otherwise it is our limit. */
		int d = discard(r, hdr + size, err);
		if (d <= 0)
			return d;
		return tm_err(err, TM_EUNSUP,
			      "TracePacket @ 0x%" PRIx64 " has %" PRIu64
			      " bytes; tracemount reads packets of at most %zu bytes",
			      at, size, r->max_packet);
	}
	if ((size_t)avail < hdr + size && (avail = fill(r, hdr + (size_t)size, err)) < 0)
		return -1;
	if ((size_t)avail < hdr + size)
		return end_inside_field(r);
	tm_span raw = {r->buf + r->pos + hdr, (size_t)size};
	r->pos += hdr + (size_t)size;
	int malformed = packet_extract(raw, pkt) < 0;
	pkt->offset = at + hdr;
	/* The reference looks for a bundle with a decoder that stops at the
	 * damage, so a bundle before the damage still expands. */
	if (TM_SPAN_HAS(pkt->compressed_packets) || TM_SPAN_HAS(pkt->zstd_compressed_packets))
		return expand(r, pkt, err) < 0 ? -1 : 2;
	if (malformed)
		return tm_err(err, TM_EINPUT, "%s", ERR_NOT_FULLY);
	return 1;
}

int tm_proto_reader_next(tm_proto_reader *r, const tm_packet **out, tm_error *err)
{
	tm_packet *pkt = &r->pkt;
	*out = pkt;
	tm_error local;
	if (!err)
		err = &local;
	if (r->failed) {
		*err = r->fail;
		return -1;
	}
	for (;;) {
		int rc;
		if (r->inner_len) {
			rc = next_inner(r, pkt, err);
			if (rc != 0)
				return rc < 0 ? reader_fail(r, err) : 1;
		}
		rc = next_outer(r, pkt, err);
		if (rc < 0)
			return reader_fail(r, err);
		if (rc != 2)
			return rc;
	}
}
