/* core/formats/proto/pb_unpack.h - protobuf-c's unpack, in one pass, for the hot
 * messages the model decodes whole (TrackEvent, FtraceEvent).
 *
 * protobuf_c_message_unpack reads a message twice (it scans every field,
 * then parses it), looks up each field by binary search and copies every
 * unknown field; on the proto bench's timeline.tsv it was a third of the
 * model thread (callgrind: 3.1 G of 10.1 G instructions, 2,290 a
 * TrackEvent). tm_pb_unpack walks the bytes once, guided by the same
 * generated descriptor, and gives the same message for every input it
 * accepts. It leaves to protobuf-c (returns NULL) what it does not do
 * itself: malformed bytes, a known field of the wrong wire type, a
 * message field (not of a oneof) met twice (protobuf-c merges the two),
 * a required field, nesting deeper than TM_PB_UNPACK_DEPTH. So a caller
 * tries it first and falls back to protobuf_c_message_unpack, whose
 * answer (a message or NULL) then stands; but not when tm_pb_too_deep
 * says the bytes nest deeper than that: protobuf-c follows nesting by
 * recursion as deep as the bytes go (a 400 KB DebugAnnotation nested
 * 100,000 deep overflows an 8 MB stack), so such bytes are dropped as
 * malformed ones are.
 *
 * One difference by design: unknown fields are skipped, not kept
 * (n_unknown_fields is 0). The model never reads them.
 *
 * Everything is allocated from `a` (strings, sub-messages, repeated
 * arrays, which grow by doubling): meant for an arena that is reset, not
 * for protobuf_c_message_free_unpacked field by field.
 */
#ifndef TM_PB_UNPACK_H
#define TM_PB_UNPACK_H

#include <stddef.h>
#include <stdint.h>

#include <protobuf-c/protobuf-c.h>

#define TM_PB_UNPACK_DEPTH 64

/* The message `desc` decoded from data[0..len), or NULL: left to
 * protobuf_c_message_unpack (see above), or out of memory. */
ProtobufCMessage *tm_pb_unpack(const ProtobufCMessageDescriptor *desc, ProtobufCAllocator *a, size_t len,
			       const uint8_t *data);

/* Whether protobuf_c_message_unpack of these bytes would follow messages
 * nested deeper than TM_PB_UNPACK_DEPTH (the bytes are not decoded). */
int tm_pb_too_deep(const ProtobufCMessageDescriptor *desc, size_t len, const uint8_t *data);

#endif
