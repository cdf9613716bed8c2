/* tests/unit/pb_same.h - whether tm_pb_unpack reads bytes as protobuf-c
 * does: both decode them, protobuf-c's message loses its unknown fields
 * (tm_pb_unpack keeps none), and both are packed again; the bytes must be
 * equal. Shared by test_pb_unpack and fuzz_pb_unpack. */
#ifndef PB_SAME_H
#define PB_SAME_H

#include <stdlib.h>
#include <string.h>

#include "formats/proto/pb_unpack.h"

typedef struct pb_arena {
	void **p;
	size_t n, cap;
} pb_arena;

static void *pb_arena_alloc(void *data, size_t size)
{
	pb_arena *a = data;
	if (a->n == a->cap) {
		size_t cap = a->cap ? a->cap * 2 : 64;
		void **p = realloc(a->p, cap * sizeof *p);
		if (!p)
			return NULL;
		a->p = p;
		a->cap = cap;
	}
	void *m = malloc(size ? size : 1);
	if (m)
		a->p[a->n++] = m;
	return m;
}

static void pb_arena_free_one(void *data, void *p)
{
	(void)data; /* freed with the arena */
	(void)p;
}

static void pb_arena_free(pb_arena *a)
{
	for (size_t i = 0; i < a->n; i++)
		free(a->p[i]);
	free(a->p);
	memset(a, 0, sizeof *a);
}

static void pb_drop_unknown(ProtobufCMessage *m)
{
	m->n_unknown_fields = 0;
	const ProtobufCMessageDescriptor *d = m->descriptor;
	for (unsigned i = 0; i < d->n_fields; i++) {
		const ProtobufCFieldDescriptor *f = &d->fields[i];
		if (f->type != PROTOBUF_C_TYPE_MESSAGE)
			continue;
		char *at = (char *)m + f->offset;
		if (f->label == PROTOBUF_C_LABEL_REPEATED) {
			size_t n = *(size_t *)((char *)m + f->quantifier_offset);
			for (size_t k = 0; k < n; k++)
				pb_drop_unknown((*(ProtobufCMessage ***)at)[k]);
		} else if ((f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) &&
			   *(uint32_t *)((char *)m + f->quantifier_offset) != f->id) {
			continue;
		} else if (*(ProtobufCMessage **)at) {
			pb_drop_unknown(*(ProtobufCMessage **)at);
		}
	}
}

static uint8_t *pb_packed(const ProtobufCMessage *m, size_t *n)
{
	*n = protobuf_c_message_get_packed_size(m);
	uint8_t *b = malloc(*n ? *n : 1);
	if (b)
		protobuf_c_message_pack(m, b);
	return b;
}

/* The bytes one value of a field of type t takes in a message. */
static size_t pb_width(ProtobufCType t)
{
	switch (t) {
	case PROTOBUF_C_TYPE_BOOL: return sizeof(protobuf_c_boolean);
	case PROTOBUF_C_TYPE_INT64:
	case PROTOBUF_C_TYPE_UINT64:
	case PROTOBUF_C_TYPE_SINT64:
	case PROTOBUF_C_TYPE_SFIXED64:
	case PROTOBUF_C_TYPE_FIXED64:
	case PROTOBUF_C_TYPE_DOUBLE: return 8;
	case PROTOBUF_C_TYPE_STRING:
	case PROTOBUF_C_TYPE_MESSAGE: return sizeof(void *);
	case PROTOBUF_C_TYPE_BYTES: return sizeof(ProtobufCBinaryData);
	default: return 4;
	}
}

/* Two messages of one descriptor field by field, in memory: presence
 * flags, oneof cases, every member's bytes (a oneof's whole union, so bytes
 * left over from a replaced member count), strings and bytes by content
 * and by whether they are NULL, sub-messages alike; unknown fields
 * aside. Catches what packing both again cannot see. */
static int pb_deep_same(const ProtobufCMessage *a, const ProtobufCMessage *b)
{
	const ProtobufCMessageDescriptor *d = a->descriptor;
	if (b->descriptor != d)
		return 0;
	for (unsigned i = 0; i < d->n_fields; i++) {
		const ProtobufCFieldDescriptor *f = &d->fields[i];
		const char *ma = (const char *)a + f->offset, *mb = (const char *)b + f->offset;
		size_t na = 1, nb = 1;
		if (f->label == PROTOBUF_C_LABEL_REPEATED) {
			na = *(const size_t *)((const char *)a + f->quantifier_offset);
			nb = *(const size_t *)((const char *)b + f->quantifier_offset);
			if (na != nb)
				return 0;
			ma = *(char *const *)ma;
			mb = *(char *const *)mb;
			if (!na)
				continue;
		} else if (f->quantifier_offset) {
			/* has_ flag or oneof case (a uint32 either way here) */
			uint32_t qa, qb;
			memcpy(&qa, (const char *)a + f->quantifier_offset, sizeof qa);
			memcpy(&qb, (const char *)b + f->quantifier_offset, sizeof qb);
			if (qa != qb)
				return 0;
		}
		int in_oneof = (f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) != 0;
		if (in_oneof && *(const uint32_t *)((const char *)a + f->quantifier_offset) != f->id) {
			/* not the member set: the bytes of the union past the set
			 * member's own (compared by content) must match all the
			 * same (every member is looked at, so all of them) */
			uint32_t set = *(const uint32_t *)((const char *)a + f->quantifier_offset);
			size_t from = 0;
			for (unsigned j = 0; set && j < d->n_fields; j++)
				if (d->fields[j].id == set)
					from = pb_width(d->fields[j].type);
			size_t w = pb_width(f->type);
			if (w > from && memcmp(ma + from, mb + from, w - from) != 0)
				return 0;
			continue;
		}
		for (size_t k = 0; k < na; k++) {
			switch (f->type) {
			case PROTOBUF_C_TYPE_STRING: {
				const char *sa = ((char *const *)ma)[k], *sb = ((char *const *)mb)[k];
				if (!sa != !sb || (sa && strcmp(sa, sb) != 0))
					return 0;
				break;
			}
			case PROTOBUF_C_TYPE_BYTES: {
				const ProtobufCBinaryData *ba = &((const ProtobufCBinaryData *)ma)[k],
							 *bb = &((const ProtobufCBinaryData *)mb)[k];
				if (ba->len != bb->len || !ba->data != !bb->data ||
				    (ba->len && memcmp(ba->data, bb->data, ba->len) != 0))
					return 0;
				break;
			}
			case PROTOBUF_C_TYPE_MESSAGE: {
				const ProtobufCMessage *sa = ((ProtobufCMessage *const *)ma)[k],
						       *sb = ((ProtobufCMessage *const *)mb)[k];
				if (!sa != !sb || (sa && !pb_deep_same(sa, sb)))
					return 0;
				break;
			}
			default: {
				size_t w = pb_width(f->type);
				if (memcmp(ma + k * w, mb + k * w, w) != 0)
					return 0;
			}
			}
		}
	}
	return 1;
}

/* 1 when tm_pb_unpack leaves the bytes to protobuf-c or reads them as it
 * does; *took says which (1: tm_pb_unpack gave a message). */
static int pb_same(const ProtobufCMessageDescriptor *d, const uint8_t *data, size_t len, int *took)
{
	pb_arena fa = {0}, sa = {0};
	ProtobufCAllocator fast_alloc = {pb_arena_alloc, pb_arena_free_one, &fa};
	ProtobufCAllocator slow_alloc = {pb_arena_alloc, pb_arena_free_one, &sa};
	ProtobufCMessage *fast = tm_pb_unpack(d, &fast_alloc, len, data);
	ProtobufCMessage *slow = protobuf_c_message_unpack(d, &slow_alloc, len, data);
	int same = 1;
	*took = fast != NULL;
	if (fast && !slow) {
		same = 0;
	} else if (fast) {
		pb_drop_unknown(slow);
		size_t nf, ns;
		uint8_t *bf = pb_packed(fast, &nf), *bs = pb_packed(slow, &ns);
		same = bf && bs && nf == ns && memcmp(bf, bs, nf) == 0 && pb_deep_same(fast, slow);
		free(bf);
		free(bs);
	}
	pb_arena_free(&fa);
	pb_arena_free(&sa);
	return same;
}

#endif
