/* tests/unit/pb_write.h - the varint the tests' hand-made protobuf bytes
 * are built from (test_proto, test_scan_proto, test_pb_unpack, test_detect,
 * and the bench and fuzz generator tests/tools/gen_trace.c), and the tiny
 * field writer test_scan_proto and test_detect share. */
#ifndef PB_WRITE_H
#define PB_WRITE_H

#include <stddef.h>
#include <stdint.h>

#include "util/pb.h"
#include "util/tm.h"

/* Numbers no well-formed protobuf holds, for the tests' deliberately broken
 * input (the decoders must call it malformed): field number 0, below
 * TM_PB_MIN_FIELD_ID, and wire types util/pb.h has no name for, the
 * deprecated group start (3) and one protobuf never defined (7). */
#define PB_NO_FIELD (TM_PB_MIN_FIELD_ID - 1)
#define PB_WIRE_GROUP_START 3
#define PB_WIRE_UNDEFINED 7

/* v as a varint into out (ten bytes at most): its length. */
static inline size_t pb_varint_encode(uint8_t out[10], uint64_t v)
{
	size_t n = 0;
	do {
		out[n] = (uint8_t)(v & 0x7f);
		v >>= 7;
		if (v)
			out[n] |= 0x80;
		n++;
	} while (v);
	return n;
}

static inline void put_varint(tm_buf *b, uint64_t v)
{
	uint8_t t[10];
	tm_buf_put(b, t, pb_varint_encode(t, v));
}

/* A field's tag alone (with what follows it written by hand: a value
 * broken on purpose, an over-long length). */
static inline void tag(tm_buf *b, uint32_t id, unsigned wire)
{
	put_varint(b, TM_PB_TAG(id, wire));
}

static inline void f_var(tm_buf *b, uint32_t id, uint64_t v)
{
	tag(b, id, TM_PB_VARINT);
	put_varint(b, v);
}

static inline void f_bytes(tm_buf *b, uint32_t id, const void *p, size_t n)
{
	tag(b, id, TM_PB_LEN);
	put_varint(b, n);
	tm_buf_put(b, p, n);
}

/* Append message m as field id and free it. */
static inline void f_msg(tm_buf *b, uint32_t id, tm_buf *m)
{
	f_bytes(b, id, m->data ? m->data : "", m->len);
	tm_buf_free(m);
}

/* v[0..n) as one packed repeated field. */
static inline void f_packed(tm_buf *b, uint32_t id, const uint64_t *v, size_t n)
{
	tm_buf m = {0};
	for (size_t i = 0; i < n; i++)
		put_varint(&m, v[i]);
	f_msg(b, id, &m);
}

#endif
