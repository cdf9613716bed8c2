/* core/util/pb.h - protobuf's wire format as constants: the wire types,
 * the field ids and lengths the reference decodes, a tag. What a layer
 * that only recognizes protobuf bytes needs (detect/), without the
 * packet readers of core/wire/. */
#ifndef TM_PB_H
#define TM_PB_H

#include <stdint.h>

enum {
	TM_PB_VARINT = 0,
	TM_PB_I64 = 1,
	TM_PB_LEN = 2,
	TM_PB_I32 = 5,
};

/* The smallest field id: a tag with field 0 is malformed bytes. */
#define TM_PB_MIN_FIELD_ID 1u

/* Largest field id and length-delimited size the reference decodes; bigger
 * fields are skipped, not errors (protozero's Field::kMaxId and
 * kMaxMessageLength). */
#define TM_PB_MAX_FIELD_ID ((1u << 24) - 1)
#define TM_PB_MAX_LEN ((1u << 28) - 1)

/* A field's tag as one varint: its number (an F_<Message>_<field>) and wire
 * type. */
#define TM_PB_TAG(id, wire) ((uint32_t)(id) << 3 | (uint32_t)(wire))

#endif
