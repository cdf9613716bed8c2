/* core/formats/proto/pb_unpack.c - protobuf-c's unpack in one pass (see pb_unpack.h).
 *
 * Hand-written because the library's own unpack is the cost: the fields
 * are read straight into the generated struct, guided by the generated
 * descriptor (so no field number is written here), with the library's
 * rules for what each wire form means:
 *   - a varint is at most ten bytes; a 32-bit field takes its low 32 bits;
 *     a bool is true when any of its bytes has a low bit set;
 *   - a tag is at most five bytes, and one whose first byte names no field
 *     is malformed; a length prefix is at most five bytes and INT_MAX;
 *   - a scalar or string met again replaces the first; a oneof member
 *     replaces whichever member was set;
 *   - a repeated packable field may come packed (LEN) or one by one;
 *     packed fixed-width data must be a whole number of elements.
 * Whatever else the library would do (merge a message met twice, reject
 * or accept oddities) is left to it: NULL.
 */
#include "formats/proto/pb_unpack.h"

#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

enum {
	WIRE_VARINT = PROTOBUF_C_WIRE_TYPE_VARINT,
	WIRE_64 = PROTOBUF_C_WIRE_TYPE_64BIT,
	WIRE_LEN = PROTOBUF_C_WIRE_TYPE_LENGTH_PREFIXED,
	WIRE_32 = PROTOBUF_C_WIRE_TYPE_32BIT,
};

#define VARINT_MAX 10 /* bytes */
#define TAG_MAX 5
#define PREFIX_MAX 5

/* A varint at p (at most `rem` bytes): its length, or 0 when it does not
 * end within VARINT_MAX bytes. */
static inline size_t varint_len(const uint8_t *p, size_t rem)
{
	if (rem && !(p[0] & 0x80))
		return 1;
	size_t max = rem < VARINT_MAX ? rem : VARINT_MAX;
	for (size_t i = 0; i < max; i++)
		if (!(p[i] & 0x80))
			return i + 1;
	return 0;
}

static inline uint64_t varint_value(const uint8_t *p, size_t n)
{
	if (n == 1)
		return p[0];
	uint64_t v = 0;
	for (size_t i = 0; i < n; i++)
		v |= (uint64_t)(p[i] & 0x7f) << (7 * i);
	return v;
}

static int varint_bool(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] & 0x7f)
			return 1;
	return 0;
}

static void *alloc(ProtobufCAllocator *a, size_t n)
{
	return a->alloc(a->allocator_data, n ? n : 1);
}

/* Fields by number, for a descriptor whose numbers are below
 * INDEX_MAX: its fields' indexes + 1 (0: none), made once and kept for
 * the process (a binary search per field was a third of the time, most
 * of it for fields the descriptor does not know). Found by the
 * descriptor's address in an open-addressed table: a few dozen
 * descriptors are ever indexed (every message a TracePacket can hold). */
#define INDEX_MAX 2048
#define INDEXED_MAX 256 /* a power of two */
static struct indexed {
	_Atomic(const ProtobufCMessageDescriptor *) d;
	uint16_t *ix;
	uint32_t n;
} indexed[INDEXED_MAX];
static pthread_mutex_t indexed_mu = PTHREAD_MUTEX_INITIALIZER;

static size_t slot_of(const ProtobufCMessageDescriptor *d)
{
	uintptr_t h = (uintptr_t)d;
	return (size_t)((h >> 4) ^ (h >> 12)) & (INDEXED_MAX - 1);
}

static const struct indexed *index_of(const ProtobufCMessageDescriptor *d)
{
	size_t h = slot_of(d);
	for (size_t k = 0; k < INDEXED_MAX; k++) {
		const struct indexed *e = &indexed[(h + k) & (INDEXED_MAX - 1)];
		const ProtobufCMessageDescriptor *ed = atomic_load_explicit(&e->d, memory_order_acquire);
		if (ed == d)
			return e;
		if (!ed)
			break;
	}
	uint32_t n = 0;
	for (unsigned f = 0; f < d->n_fields; f++)
		if (d->fields[f].id >= n)
			n = d->fields[f].id + 1;
	if (n > INDEX_MAX)
		return NULL;
	const struct indexed *r = NULL;
	pthread_mutex_lock(&indexed_mu);
	for (size_t k = 0; k < INDEXED_MAX && !r; k++) {
		struct indexed *e = &indexed[(h + k) & (INDEXED_MAX - 1)];
		const ProtobufCMessageDescriptor *ed = atomic_load_explicit(&e->d, memory_order_relaxed);
		if (ed == d) {
			r = e;
		} else if (!ed) {
			uint16_t *ix = calloc(n, sizeof *ix);
			if (!ix)
				break;
			for (unsigned f = 0; f < d->n_fields; f++)
				ix[d->fields[f].id] = (uint16_t)(f + 1);
			e->ix = ix;
			e->n = n;
			atomic_store_explicit(&e->d, d, memory_order_release);
			r = e;
		}
	}
	pthread_mutex_unlock(&indexed_mu);
	return r;
}

/* The field numbered `id`, or NULL. Fields are in number order. */
static inline __attribute__((always_inline)) const ProtobufCFieldDescriptor *field_of(const ProtobufCMessageDescriptor *d, const struct indexed *x,
						uint32_t id)
{
	if (x)
		return id < x->n && x->ix[id] ? &d->fields[x->ix[id] - 1] : NULL;
	unsigned lo = 0, hi = d->n_fields;
	while (lo < hi) {
		unsigned mid = lo + (hi - lo) / 2;
		if (d->fields[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < d->n_fields && d->fields[lo].id == id ? &d->fields[lo] : NULL;
}

static inline size_t elt_size(ProtobufCType t)
{
	switch (t) {
	case PROTOBUF_C_TYPE_INT32:
	case PROTOBUF_C_TYPE_SINT32:
	case PROTOBUF_C_TYPE_SFIXED32:
	case PROTOBUF_C_TYPE_UINT32:
	case PROTOBUF_C_TYPE_FIXED32:
	case PROTOBUF_C_TYPE_FLOAT:
	case PROTOBUF_C_TYPE_ENUM:
		return 4;
	case PROTOBUF_C_TYPE_INT64:
	case PROTOBUF_C_TYPE_SINT64:
	case PROTOBUF_C_TYPE_SFIXED64:
	case PROTOBUF_C_TYPE_UINT64:
	case PROTOBUF_C_TYPE_FIXED64:
	case PROTOBUF_C_TYPE_DOUBLE:
		return 8;
	case PROTOBUF_C_TYPE_BOOL:
		return sizeof(protobuf_c_boolean);
	case PROTOBUF_C_TYPE_STRING:
	case PROTOBUF_C_TYPE_MESSAGE:
		return sizeof(void *);
	case PROTOBUF_C_TYPE_BYTES:
		return sizeof(ProtobufCBinaryData);
	}
	return 0;
}

static int packable(ProtobufCType t)
{
	return t != PROTOBUF_C_TYPE_STRING && t != PROTOBUF_C_TYPE_BYTES && t != PROTOBUF_C_TYPE_MESSAGE;
}

static size_t pow2_at_least(size_t n)
{
	size_t c = 4;
	while (c < n)
		c *= 2;
	return c;
}

/* Room for k more elements in a repeated field holding n: its array's
 * capacity is never stored, it is pow2_at_least(n) once n > 0. */
static void *room(ProtobufCAllocator *a, void **arr, size_t n, size_t k, size_t size)
{
	if (k == 1 && n && (n < 4 || (n & (n - 1)) != 0)) /* not full */
		return (char *)*arr + n * size;
	size_t cap = n ? pow2_at_least(n) : 0;
	if (n + k > cap) {
		size_t want = pow2_at_least(n + k);
		void *p = alloc(a, want * size);
		if (!p)
			return NULL;
		if (n)
			memcpy(p, *arr, n * size);
		*arr = p;
	}
	return (char *)*arr + n * size;
}

static ProtobufCMessage *unpack(const ProtobufCMessageDescriptor *d, ProtobufCAllocator *a, size_t len,
				const uint8_t *data, int depth);

/* One value of field f, of wire type `wire`, its bytes v[0..n) (a
 * varint's bytes, a fixed value, or a LEN's payload), into `out`. 0 when
 * left to protobuf-c. */
static int value(const ProtobufCFieldDescriptor *f, ProtobufCAllocator *a, int wire, const uint8_t *v, size_t n,
		 void *out, int depth)
{
	switch (f->type) {
	case PROTOBUF_C_TYPE_INT32:
	case PROTOBUF_C_TYPE_UINT32:
	case PROTOBUF_C_TYPE_ENUM:
		if (wire != WIRE_VARINT)
			return 0;
		*(uint32_t *)out = (uint32_t)varint_value(v, n);
		return 1;
	case PROTOBUF_C_TYPE_SINT32: {
		if (wire != WIRE_VARINT)
			return 0;
		uint32_t u = (uint32_t)varint_value(v, n);
		*(int32_t *)out = (int32_t)((u >> 1) ^ (0u - (u & 1)));
		return 1;
	}
	case PROTOBUF_C_TYPE_INT64:
	case PROTOBUF_C_TYPE_UINT64:
		if (wire != WIRE_VARINT)
			return 0;
		*(uint64_t *)out = varint_value(v, n);
		return 1;
	case PROTOBUF_C_TYPE_SINT64: {
		if (wire != WIRE_VARINT)
			return 0;
		uint64_t u = varint_value(v, n);
		*(int64_t *)out = (int64_t)((u >> 1) ^ (0ull - (u & 1)));
		return 1;
	}
	case PROTOBUF_C_TYPE_BOOL:
		/* protobuf-c reads a bool of any wire type: only varints here */
		if (wire != WIRE_VARINT)
			return 0;
		*(protobuf_c_boolean *)out = varint_bool(v, n);
		return 1;
	case PROTOBUF_C_TYPE_SFIXED32:
	case PROTOBUF_C_TYPE_FIXED32:
	case PROTOBUF_C_TYPE_FLOAT:
		if (wire != WIRE_32)
			return 0;
		memcpy(out, v, 4);
		return 1;
	case PROTOBUF_C_TYPE_SFIXED64:
	case PROTOBUF_C_TYPE_FIXED64:
	case PROTOBUF_C_TYPE_DOUBLE:
		if (wire != WIRE_64)
			return 0;
		memcpy(out, v, 8);
		return 1;
	case PROTOBUF_C_TYPE_STRING: {
		if (wire != WIRE_LEN)
			return 0;
		char *s = alloc(a, n + 1);
		if (!s)
			return 0;
		memcpy(s, v, n);
		s[n] = '\0';
		*(char **)out = s;
		return 1;
	}
	case PROTOBUF_C_TYPE_BYTES: {
		if (wire != WIRE_LEN)
			return 0;
		ProtobufCBinaryData *b = out;
		b->data = NULL;
		if (n) {
			if (!(b->data = alloc(a, n)))
				return 0;
			memcpy(b->data, v, n);
		}
		b->len = n;
		return 1;
	}
	case PROTOBUF_C_TYPE_MESSAGE: {
		if (wire != WIRE_LEN)
			return 0;
		ProtobufCMessage *m = unpack(f->descriptor, a, n, v, depth + 1);
		*(ProtobufCMessage **)out = m;
		return m != NULL;
	}
	}
	return 0;
}

/* A packed run of field f's elements, v[0..n), appended. */
static int packed(const ProtobufCFieldDescriptor *f, ProtobufCAllocator *a, ProtobufCMessage *m, const uint8_t *v,
		  size_t n)
{
	size_t *count = (size_t *)((char *)m + f->quantifier_offset);
	void **arr = (void **)((char *)m + f->offset);
	size_t size = elt_size(f->type);
	int fixed = f->type == PROTOBUF_C_TYPE_SFIXED32 || f->type == PROTOBUF_C_TYPE_FIXED32 ||
		    f->type == PROTOBUF_C_TYPE_FLOAT || f->type == PROTOBUF_C_TYPE_SFIXED64 ||
		    f->type == PROTOBUF_C_TYPE_FIXED64 || f->type == PROTOBUF_C_TYPE_DOUBLE;
	if (fixed) {
		if (n % size)
			return 0;
		if (!n)
			return 1;
		void *at = room(a, arr, *count, n / size, size);
		if (!at)
			return 0;
		memcpy(at, v, n);
		*count += n / size;
		return 1;
	}
	for (size_t i = 0; i < n;) {
		size_t k = varint_len(v + i, n - i);
		if (!k)
			return 0;
		void *at = room(a, arr, *count, 1, size);
		if (!at || !value(f, a, WIRE_VARINT, v + i, k, at, 0))
			return 0;
		++*count;
		i += k;
	}
	return 1;
}

/* The field at *p (before end): its number, wire type and value bytes
 * v[0..n) (a varint's bytes, a fixed value, or a LEN's payload); *p moves
 * past it. 1, or 0 when the bytes are not a field as protobuf-c frames
 * one (its first pass over a message). */
static inline __attribute__((always_inline)) int next_field(const uint8_t **pp, const uint8_t *end, uint32_t *id, int *wire, const uint8_t **v,
		      size_t *n)
{
	const uint8_t *p = *pp;
	size_t rem = (size_t)(end - p);
	/* the tag: a first byte naming no field is malformed */
	if (!(p[0] & 0xf8))
		return 0;
	size_t tl = rem < TAG_MAX ? rem : TAG_MAX, t = 0;
	while (t < tl && (p[t] & 0x80))
		t++;
	if (t == tl)
		return 0;
	uint64_t tag = varint_value(p, t + 1);
	*wire = (int)(tag & 7);
	*id = (uint32_t)(tag >> 3);
	p += t + 1;
	rem = (size_t)(end - p);
	*v = p;
	switch (*wire) {
	case WIRE_VARINT:
		if (!(*n = varint_len(p, rem)))
			return 0;
		break;
	case WIRE_64:
		if (rem < 8)
			return 0;
		*n = 8;
		break;
	case WIRE_32:
		if (rem < 4)
			return 0;
		*n = 4;
		break;
	case WIRE_LEN: {
		size_t pl = rem < PREFIX_MAX ? rem : PREFIX_MAX, k = 0;
		while (k < pl && (p[k] & 0x80))
			k++;
		if (k == pl)
			return 0;
		uint64_t l = varint_value(p, k + 1);
		if (l > INT_MAX || l > rem - (k + 1))
			return 0;
		*v = p + k + 1;
		*n = (size_t)l;
		break;
	}
	default:
		return 0;
	}
	*pp = *v + *n;
	return 1;
}

static ProtobufCMessage *unpack(const ProtobufCMessageDescriptor *d, ProtobufCAllocator *a, size_t len,
				const uint8_t *data, int depth)
{
	if (depth > TM_PB_UNPACK_DEPTH)
		return NULL;
	ProtobufCMessage *m = alloc(a, d->sizeof_message);
	if (!m)
		return NULL;
	protobuf_c_message_init(d, m);
	const struct indexed *x = index_of(d);
	const uint8_t *p = data, *end = data + len;
	while (p < end) {
		uint32_t id;
		int wire;
		const uint8_t *v;
		size_t n;
		if (!next_field(&p, end, &id, &wire, &v, &n))
			return NULL;
		const ProtobufCFieldDescriptor *f = id ? field_of(d, x, id) : NULL;
		if (!f)
			continue; /* unknown: not kept (pb_unpack.h) */
		void *member = (char *)m + f->offset;
		if (f->label == PROTOBUF_C_LABEL_REPEATED) {
			if (wire == WIRE_LEN && packable(f->type)) {
				if (!packed(f, a, m, v, n))
					return NULL;
				continue;
			}
			size_t *count = (size_t *)((char *)m + f->quantifier_offset);
			void *at = room(a, (void **)member, *count, 1, elt_size(f->type));
			if (!at || !value(f, a, wire, v, n, at, depth))
				return NULL;
			++*count;
			continue;
		}
		if (f->label != PROTOBUF_C_LABEL_OPTIONAL && f->label != PROTOBUF_C_LABEL_NONE)
			return NULL; /* required: protobuf-c checks presence */
		if (f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) {
			/* another member of the oneof (or this one) set before:
			 * protobuf-c zeroes the old one's bytes, then reads the
			 * new one whole (a message is not merged) */
			uint32_t *which = (uint32_t *)((char *)m + f->quantifier_offset);
			const ProtobufCFieldDescriptor *old = *which ? field_of(d, x, *which) : NULL;
			if (old)
				memset(member, 0, elt_size(old->type));
			if (!value(f, a, wire, v, n, member, depth))
				return NULL;
			*which = f->id;
			continue;
		}
		/* a message met before: protobuf-c merges the two */
		if (f->type == PROTOBUF_C_TYPE_MESSAGE && *(ProtobufCMessage **)member != f->default_value)
			return NULL;
		if (!value(f, a, wire, v, n, member, depth))
			return NULL;
		if (f->quantifier_offset)
			*(protobuf_c_boolean *)((char *)m + f->quantifier_offset) = 1;
	}
	return m;
}

/* Whether protobuf-c, reading data[0..len) as `d`, would follow messages
 * nested deeper than TM_PB_UNPACK_DEPTH: like its first pass, a level
 * whose fields do not all frame stops it before it reads any of them. */
static int too_deep(const ProtobufCMessageDescriptor *d, size_t len, const uint8_t *data, int depth)
{
	const uint8_t *end = data + len;
	uint32_t id;
	int wire;
	const uint8_t *v;
	size_t n;
	for (const uint8_t *p = data; p < end;)
		if (!next_field(&p, end, &id, &wire, &v, &n))
			return 0;
	const struct indexed *x = index_of(d);
	for (const uint8_t *p = data; p < end;) {
		if (!next_field(&p, end, &id, &wire, &v, &n))
			return 0; /* cannot be: the loop above framed them all */
		const ProtobufCFieldDescriptor *f = id ? field_of(d, x, id) : NULL;
		if (!f || f->type != PROTOBUF_C_TYPE_MESSAGE || wire != WIRE_LEN)
			continue;
		if (depth + 1 > TM_PB_UNPACK_DEPTH || too_deep(f->descriptor, n, v, depth + 1))
			return 1;
	}
	return 0;
}

int tm_pb_too_deep(const ProtobufCMessageDescriptor *desc, size_t len, const uint8_t *data)
{
	return too_deep(desc, len, data, 0);
}

ProtobufCMessage *tm_pb_unpack(const ProtobufCMessageDescriptor *desc, ProtobufCAllocator *a, size_t len,
			       const uint8_t *data)
{
	return unpack(desc, a, len, data, 0);
}
