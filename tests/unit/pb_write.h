/* tests/unit/pb_write.h - the varint the tests' hand-made protobuf bytes
 * are built from (test_proto, test_scan_proto, test_pb_unpack, and the
 * bench and fuzz generator tests/tools/gen_trace.c). */
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

#endif
