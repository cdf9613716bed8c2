/* tests/unit/pb_same.h - whether tm_pb_unpack reads bytes as protobuf-c
 * does: both decode them, protobuf-c's message loses its unknown fields
 * (tm_pb_unpack keeps none), and both are packed again; the bytes must be
 * equal. Shared by test_pb_unpack and fuzz_pb_unpack. */
#ifndef PB_SAME_H
#define PB_SAME_H

#include <stdlib.h>
#include <string.h>

#include "pb_unpack.h"

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
		same = bf && bs && nf == ns && memcmp(bf, bs, nf) == 0;
		free(bf);
		free(bs);
	}
	pb_arena_free(&fa);
	pb_arena_free(&sa);
	return same;
}

#endif
