/* core/formats/hprof/hprof.c - a Java heap dump into the rows the
 * reference's art_hprof importer makes of it (HeapGraphBuilder, then
 * HeapGraphResolver, then ArtHprofParser's Populate*), its rules kept:
 * what a record reads does not depend on its length but for strings,
 * heap dumps and the records it skips; a later object of an id replaces
 * the earlier; roots rank STICKY_CLASS, JNI_GLOBAL, JNI_LOCAL, the rest;
 * an object's references are its class object's static object fields,
 * its instance's object fields of every class up the chain (named
 * "Class.field", with the class of the object they point at), an array's
 * non-null elements ("[i]") that the dump holds; reachability and the
 * distance from the roots breadth first, a weak, phantom or finalizer
 * reference's referent not followed; self sizes from the class's instance
 * size (java.lang.Class's plus the static fields for a class object, plus
 * the elements for an array).
 *
 * Hand-written: a heap dump is a binary format of its own (big-endian,
 * length-prefixed), no library reads it. The whole file is in memory
 * while it is read (the reference holds it too, and more). */
#include "formats/hprof/hprof.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/hash.h"

const char *const hprof_stat_names[HPROF_N_STATS] = {
	"hprof_string_counter",        "hprof_class_counter",          "hprof_heap_dump_counter",
	"hprof_instance_counter",      "hprof_object_array_counter",   "hprof_primitive_array_counter",
	"hprof_root_counter",          "hprof_reference_counter",      "hprof_header_errors",
	"hprof_class_errors",          "hprof_segment_overshoot_counter",
	"hprof_primitive_array_parsing_errors", "hprof_reference_errors", "hprof_field_value_errors",
};

/* record tags */
enum { TAG_UTF8 = 0x01, TAG_LOAD_CLASS = 0x02, TAG_HEAP_DUMP = 0x0C, TAG_HEAP_DUMP_SEGMENT = 0x1C,
       TAG_HEAP_DUMP_END = 0x2C };
/* heap dump sub-record tags (any other is a root of that tag) */
enum { SUB_CLASS_DUMP = 0x20, SUB_INSTANCE = 0x21, SUB_OBJ_ARRAY = 0x22, SUB_PRIM_ARRAY = 0x23,
       SUB_HEAP_INFO = 0xFE };
/* root tags */
enum { ROOT_JNI_GLOBAL = 0x01, ROOT_JNI_LOCAL = 0x02, ROOT_JAVA_FRAME = 0x03, ROOT_NATIVE_STACK = 0x04,
       ROOT_STICKY_CLASS = 0x05, ROOT_THREAD_BLOCK = 0x06, ROOT_MONITOR_USED = 0x07, ROOT_THREAD_OBJ = 0x08,
       ROOT_INTERNED_STRING = 0x89, ROOT_FINALIZING = 0x8A, ROOT_DEBUGGER = 0x8B, ROOT_VM_INTERNAL = 0x8D,
       ROOT_JNI_MONITOR = 0x8E };
/* field (basic) types */
enum { FT_OBJECT = 2, FT_BOOLEAN = 4, FT_CHAR = 5, FT_FLOAT = 6, FT_DOUBLE = 7, FT_BYTE = 8, FT_SHORT = 9,
       FT_INT = 10, FT_LONG = 11 };
enum { OT_CLASS, OT_INSTANCE, OT_OBJ_ARRAY, OT_PRIM_ARRAY };
/* HeapGraphType.Kind values the reference gives classes */
enum { KIND_UNKNOWN = 0, KIND_SOFT = 8, KIND_WEAK = 9, KIND_FINALIZER = 10, KIND_PHANTOM = 11 };

#define NONE UINT32_MAX

typedef struct rd {
	const uint8_t *p;
	size_t n, at;
} rd;

static int u1(rd *r, uint8_t *v)
{
	if (r->n - r->at < 1)
		return 0;
	*v = r->p[r->at++];
	return 1;
}

static uint64_t be(const uint8_t *p, size_t n)
{
	uint64_t v = 0;
	for (size_t i = 0; i < n; i++)
		v = v << 8 | p[i];
	return v;
}

static int uN(rd *r, size_t n, uint64_t *v)
{
	if (r->n - r->at < n)
		return 0;
	*v = be(r->p + r->at, n);
	r->at += n;
	return 1;
}

static int u2(rd *r, uint16_t *v)
{
	uint64_t x;
	if (!uN(r, 2, &x))
		return 0;
	*v = (uint16_t)x;
	return 1;
}

static int u4(rd *r, uint32_t *v)
{
	uint64_t x;
	if (!uN(r, 4, &x))
		return 0;
	*v = (uint32_t)x;
	return 1;
}

static int skip(rd *r, size_t n)
{
	if (r->n - r->at < n)
		return 0;
	r->at += n;
	return 1;
}

/* GetFieldTypeSize: 0 for a type that is none */
static size_t type_size(uint8_t t, uint32_t id_size)
{
	switch (t) {
	case FT_OBJECT: return id_size;
	case FT_BOOLEAN:
	case FT_BYTE: return 1;
	case FT_CHAR:
	case FT_SHORT: return 2;
	case FT_FLOAT:
	case FT_INT: return 4;
	case FT_DOUBLE:
	case FT_LONG: return 8;
	default: return 0;
	}
}

/* Text in hprof_dump.text. Offsets are 64-bit: names made of names
 * (Class.field up a chain of long class names) can take more than the
 * file (the reference's strings grow the same). */
typedef struct text_ref {
	uint64_t at;
	uint32_t n;
} text_ref;

typedef struct hfield {
	text_ref name; /* as declared */
	uint8_t type;
} hfield;

typedef struct hchain {
	uint32_t name;  /* "Class.field", interned */
	uint8_t type;
} hchain;

typedef struct hclass {
	uint64_t id, super;
	text_ref name;
	uint32_t inst_size;
	uint32_t fields_at, n_fields;  /* its instance fields, in fld */
	uint32_t chain_at, n_chain;    /* its own fields, qualified (chain), once made */
	uint8_t has_chain, ref_type, kind;
	uint32_t row, obj_row;         /* class rows: its own, its class object's (NONE) */
	uint64_t walked;               /* the last chain walk that passed it (chain_next) */
} hclass;

typedef struct hstatic {
	text_ref name;
	uint8_t type;
	uint64_t target;
	uint32_t next;
} hstatic;

typedef struct hobj {
	uint64_t id, class_id;
	uint8_t type, elem_type;
	uint8_t has_root, root_tag, reachable, has_size;
	int32_t dist;
	const uint8_t *data;           /* an instance's field bytes, an array's elements */
	uint64_t len;                  /* bytes of data (not an object array's) */
	uint32_t count;
	uint32_t st_first, st_last;    /* a class object's static fields */
	uint32_t refs_at, n_refs;
	uint64_t self_size;
	uint32_t row;
} hobj;

typedef struct href {
	uint32_t name;                 /* interned (names) */
	uint32_t ftype;                /* class + 1 of the object pointed at, 0: unknown */
	uint64_t target;
} href;

typedef struct hp {
	rd r;
	uint32_t id_size;
	hprof_dump *d;
	tm_u64map strings;             /* string id -> index in strs */
	struct hstr {
		const uint8_t *p;
		uint32_t n;
		int copied;            /* text holds it: at */
		text_ref at;
	} *strs;
	size_t n_strs, cap_strs;
	tm_u64map class_ix;            /* class object id -> index in cls */
	hclass *cls;
	size_t n_cls, cap_cls;
	hfield *fld;
	size_t n_fld, cap_fld;
	hchain *chain;
	size_t n_chain, cap_chain;
	hstatic *st;
	size_t n_st, cap_st;
	tm_u64map obj_ix;              /* object id -> index in obj */
	hobj *obj;
	size_t n_obj, cap_obj;
	tm_u64map roots;               /* object id -> root tag + 1 */
	href *refs;
	size_t n_refs, cap_refs;
	uint64_t prim_class[12];       /* the class of each primitive array type */
	text_ref heap;                 /* the heap the objects are in (ART) */
	/* reference names, interned */
	tm_u64map name_ix;             /* hash -> name + 1, probing on */
	text_ref *names;
	size_t n_names, cap_names;
	tm_buf scratch;
	uint64_t walks;                /* chain walks made (chain_begin) */
} hp;

/* ---- text --------------------------------------------------------------------- */

static text_ref put_text(hp *h, const void *s, size_t n)
{
	text_ref t = {h->d->text.len, (uint32_t)n};
	tm_buf_put(&h->d->text, s, n);
	tm_buf_putc(&h->d->text, '\0');
	return t;
}

static const char *txt(const hp *h, text_ref t) { return h->d->text.data + t.at; }

/* LookupString: the string up to its first NUL (the reference's
 * c_str()), copied into the text once */
static text_ref lookup(hp *h, uint64_t id)
{
	const uint32_t *v = tm_u64map_get(&h->strings, id);
	if (v) {
		struct hstr *s = &h->strs[*v - 1];
		if (!s->copied) {
			const uint8_t *nul = memchr(s->p, 0, s->n);
			s->at = put_text(h, s->p, nul ? (size_t)(nul - s->p) : s->n);
			s->copied = 1;
		}
		return s->at;
	}
	char b[64];
	int n = snprintf(b, sizeof b, "[unknown string ID: %" PRIu64 "]", id);
	return put_text(h, b, (size_t)n);
}

/* NormalizeClassName: "[[Ljava/lang/String;" is "java.lang.String[][]" */
static text_ref normalize(hp *h, text_ref raw)
{
	const char *s = txt(h, raw);
	size_t n = raw.n, dims = 0;
	while (dims < n && s[dims] == '[')
		dims++;
	tm_buf *b = &h->scratch;
	b->len = 0;
	if (dims) {
		const char *e = s + dims;
		size_t en = n - dims;
		static const char *const prim[] = {['Z'] = "boolean", ['B'] = "byte", ['C'] = "char",
						   ['S'] = "short", ['I'] = "int", ['J'] = "long",
						   ['F'] = "float", ['D'] = "double"};
		if (!en) {
			h->d->stats[HPROF_STAT_CLASS_ERRORS]++;
			return raw;
		}
		unsigned char c = (unsigned char)e[0];
		if (c == 'L') {
			if (e[en - 1] != ';') {
				h->d->stats[HPROF_STAT_CLASS_ERRORS]++;
				return raw;
			}
			tm_buf_put(b, e + 1, en >= 2 ? en - 2 : 0);
		} else if (c < sizeof prim / sizeof prim[0] && prim[c]) {
			tm_buf_puts(b, prim[c]);
		} else {
			h->d->stats[HPROF_STAT_CLASS_ERRORS]++;
			return raw;
		}
	} else {
		tm_buf_put(b, s, n);
	}
	for (size_t i = 0; i < b->len; i++)
		if (b->data[i] == '/')
			b->data[i] = '.';
	for (size_t i = 0; i < dims; i++)
		tm_buf_puts(b, "[]");
	if (!dims && b->len == n && memcmp(b->data, s, n) == 0)
		return raw;
	return put_text(h, b->data, b->len);
}

static int text_is(const hp *h, text_ref t, const char *s)
{
	size_t n = strlen(s);
	return t.n == n && memcmp(txt(h, t), s, n) == 0;
}

/* A reference name, interned: its id. */
static uint32_t intern_name(hp *h, const char *s, size_t n)
{
	uint64_t k = tm_khash_bytes(s, n);
	for (;; k = tm_khash_next(k)) {
		const uint32_t *v = tm_u64map_get(&h->name_ix, k);
		if (!v)
			break;
		text_ref t = h->names[*v - 1];
		if (t.n == n && memcmp(txt(h, t), s, n) == 0)
			return *v - 1;
	}
	uint32_t id = (uint32_t)h->n_names;
	TM_GROW(h->names, h->cap_names, h->n_names + 1);
	h->names[h->n_names++] = put_text(h, s, n);
	tm_u64map_put(&h->name_ix, k, id);
	return id;
}

/* ---- the records ---------------------------------------------------------------- */

static hclass *class_of(hp *h, uint64_t id)
{
	const uint32_t *v = tm_u64map_get(&h->class_ix, id);
	return v ? &h->cls[*v - 1] : NULL;
}

static hobj *obj_of(hp *h, uint64_t id)
{
	const uint32_t *v = tm_u64map_get(&h->obj_ix, id);
	return v ? &h->obj[*v - 1] : NULL;
}

/* The index of id in ix; where it has none, a new element appended to
 * the array (*arr, *n, *cap of elem bytes) is its (the caller fills it
 * in). The reference's map[id], for each of its id maps. */
static uint32_t index_of(tm_u64map *ix, uint64_t id, void **arr, size_t *n, size_t *cap, size_t elem)
{
	const uint32_t *v = tm_u64map_get(ix, id);
	if (v)
		return *v - 1;
	tm_grow(arr, cap, *n + 1, elem);
	tm_u64map_put(ix, id, (uint32_t)*n);
	return (uint32_t)(*n)++;
}

static int rid(hp *h, uint64_t *v)
{
	if (h->id_size != 4 && h->id_size != 8)
		return 0;
	return uN(&h->r, h->id_size, v);
}

/* objects_[id] = a new object (replacing one of that id where it was) */
static hobj *new_obj(hp *h, uint64_t id, uint64_t class_id, int type)
{
	uint32_t ix = index_of(&h->obj_ix, id, (void **)&h->obj, &h->n_obj, &h->cap_obj, sizeof *h->obj);
	hobj *o = &h->obj[ix]; /* after the call: it may move the array */
	memset(o, 0, sizeof *o);
	o->id = id;
	o->class_id = class_id;
	o->type = (uint8_t)type;
	o->dist = -1;
	o->st_first = o->st_last = NONE;
	o->row = NONE;
	return o;
}

static int utf8(hp *h, uint32_t len)
{
	uint64_t id;
	if (!rid(h, &id) || len < h->id_size)
		return 0;
	size_t n = len - h->id_size;
	const uint8_t *p = h->r.p + h->r.at;
	if (!skip(&h->r, n))
		return 0;
	uint32_t ix = index_of(&h->strings, id, (void **)&h->strs, &h->n_strs, &h->cap_strs, sizeof *h->strs);
	h->strs[ix] = (struct hstr){p, (uint32_t)n, 0, {0, 0}};
	h->d->stats[HPROF_STAT_STRINGS]++;
	return 1;
}

static int load_class(hp *h)
{
	uint32_t serial, stack;
	uint64_t id, name_id;
	if (!u4(&h->r, &serial) || !rid(h, &id) || !u4(&h->r, &stack) || !rid(h, &name_id))
		return 0;
	text_ref name = normalize(h, lookup(h, name_id));
	uint32_t ix = index_of(&h->class_ix, id, (void **)&h->cls, &h->n_cls, &h->cap_cls, sizeof *h->cls);
	hclass *c = &h->cls[ix];
	memset(c, 0, sizeof *c);
	c->id = id;
	c->name = name;
	c->row = c->obj_row = NONE;
	h->d->stats[HPROF_STAT_CLASSES]++;
	static const struct {
		const char *name;
		uint8_t type;
	} prim[] = {{"boolean[]", FT_BOOLEAN}, {"char[]", FT_CHAR}, {"float[]", FT_FLOAT}, {"double[]", FT_DOUBLE},
		    {"byte[]", FT_BYTE},       {"short[]", FT_SHORT}, {"int[]", FT_INT},     {"long[]", FT_LONG}};
	for (size_t i = 0; i < sizeof prim / sizeof prim[0]; i++)
		if (text_is(h, name, prim[i].name)) {
			h->prim_class[prim[i].type] = id;
			break;
		}
	return 1;
}

static int rank(uint8_t tag)
{
	switch (tag) {
	case ROOT_STICKY_CLASS: return 0;
	case ROOT_JNI_GLOBAL: return 1;
	case ROOT_JNI_LOCAL: return 2;
	default: return 3;
	}
}

static int root(hp *h, uint8_t tag)
{
	uint64_t id;
	if (!rid(h, &id))
		return 0;
	size_t extra = 0;
	switch (tag) {
	case ROOT_JNI_GLOBAL: extra = h->id_size; break;
	case ROOT_JNI_LOCAL:
	case ROOT_JAVA_FRAME:
	case ROOT_JNI_MONITOR:
	case ROOT_THREAD_OBJ: extra = 8; break;
	case ROOT_NATIVE_STACK:
	case ROOT_THREAD_BLOCK: extra = 4; break;
	default: break;
	}
	if (!skip(&h->r, extra))
		return 0;
	h->d->stats[HPROF_STAT_ROOTS]++;
	const uint32_t *v = tm_u64map_get(&h->roots, id);
	if (!v || rank(tag) < rank((uint8_t)(*v - 1)))
		tm_u64map_put(&h->roots, id, tag);
	return 1;
}

static void add_static(hp *h, hobj *o, text_ref name, uint8_t type, uint64_t target)
{
	TM_GROW(h->st, h->cap_st, h->n_st + 1);
	uint32_t i = (uint32_t)h->n_st++;
	h->st[i] = (hstatic){name, type, target, NONE};
	if (o->st_last == NONE)
		o->st_first = i;
	else
		h->st[o->st_last].next = i;
	o->st_last = i;
}

static int class_dump(hp *h)
{
	uint64_t id, super, skip_id;
	uint32_t stack, inst_size;
	if (!rid(h, &id) || !u4(&h->r, &stack) || !rid(h, &super))
		return 0;
	for (int i = 0; i < 5; i++) /* loader, signers, protection domain, two reserved */
		if (!rid(h, &skip_id))
			return 0;
	if (!u4(&h->r, &inst_size))
		return 0;
	hclass *c = class_of(h, id);
	if (!c) {
		h->d->stats[HPROF_STAT_CLASS_ERRORS]++;
		return 0;
	}
	c->super = super;
	c->inst_size = inst_size;
	uint16_t n;
	if (!u2(&h->r, &n))
		return 0;
	for (uint16_t i = 0; i < n; i++) { /* the constant pool */
		uint16_t index;
		uint8_t type;
		if (!u2(&h->r, &index) || !u1(&h->r, &type) || !skip(&h->r, type_size(type, h->id_size)))
			return 0;
	}
	/* objects_[id], made anew while its id reads 0 (never there for a
	 * class object of id 0: each dump of it starts it again) */
	hobj *o = obj_of(h, id);
	if (!o || o->id == 0)
		o = new_obj(h, id, id, OT_CLASS);
	if (!u2(&h->r, &n))
		return 0;
	for (uint16_t i = 0; i < n; i++) {
		uint64_t name_id, target = 0;
		uint8_t type;
		if (!rid(h, &name_id) || !u1(&h->r, &type))
			return 0;
		text_ref name = lookup(h, name_id);
		size_t sz = type_size(type, h->id_size);
		if (type == FT_OBJECT) {
			if (!rid(h, &target))
				return 0;
		} else if (!skip(&h->r, sz)) {
			return 0;
		}
		if (sz) /* a type that is none reads nothing and adds no field */
			add_static(h, o, name, type, target);
	}
	if (!u2(&h->r, &n))
		return 0;
	uint32_t at = (uint32_t)h->n_fld;
	for (uint16_t i = 0; i < n; i++) {
		uint64_t name_id;
		uint8_t type;
		if (!rid(h, &name_id) || !u1(&h->r, &type))
			return 0;
		TM_GROW(h->fld, h->cap_fld, h->n_fld + 1);
		h->fld[h->n_fld++] = (hfield){lookup(h, name_id), type};
	}
	c->fields_at = at;
	c->n_fields = n;
	return 1;
}

static int instance(hp *h)
{
	uint64_t id, class_id;
	uint32_t stack, len;
	if (!rid(h, &id) || !u4(&h->r, &stack) || !rid(h, &class_id) || !u4(&h->r, &len))
		return 0;
	const uint8_t *p = h->r.p + h->r.at;
	if (!skip(&h->r, len))
		return 0;
	hobj *o = new_obj(h, id, class_id, OT_INSTANCE);
	o->data = p;
	o->len = len;
	h->d->stats[HPROF_STAT_INSTANCES]++;
	return 1;
}

static int obj_array(hp *h)
{
	uint64_t id, class_id;
	uint32_t stack, count;
	if (!rid(h, &id) || !u4(&h->r, &stack) || !u4(&h->r, &count) || !rid(h, &class_id))
		return 0;
	const uint8_t *p = h->r.p + h->r.at;
	if (!skip(&h->r, (size_t)count * h->id_size))
		return 0;
	hobj *o = new_obj(h, id, class_id, OT_OBJ_ARRAY);
	o->data = p;
	o->count = count;
	o->elem_type = FT_OBJECT;
	h->d->stats[HPROF_STAT_OBJECT_ARRAYS]++;
	return 1;
}

static int prim_array(hp *h)
{
	uint64_t id;
	uint32_t stack, count;
	uint8_t type;
	if (!rid(h, &id) || !u4(&h->r, &stack) || !u4(&h->r, &count) || !u1(&h->r, &type))
		return 0;
	size_t len = (size_t)count * type_size(type, h->id_size);
	const uint8_t *p = h->r.p + h->r.at;
	if (!skip(&h->r, len))
		return 0;
	if (type >= 12 || !h->prim_class[type]) {
		h->d->stats[HPROF_STAT_PRIM_ERRORS]++;
		return 0;
	}
	hobj *o = new_obj(h, id, h->prim_class[type], OT_PRIM_ARRAY);
	o->data = p;
	o->len = len;
	o->count = count;
	o->elem_type = type;
	h->d->stats[HPROF_STAT_PRIM_ARRAYS]++;
	return 1;
}

static int heap_info(hp *h)
{
	uint32_t heap_id;
	uint64_t name_id;
	if (!u4(&h->r, &heap_id) || !rid(h, &name_id))
		return 0;
	h->heap = lookup(h, name_id);
	return 1;
}

static int heap_dump(hp *h, uint32_t len)
{
	size_t end = h->r.at + len;
	while (h->r.at < end) {
		uint8_t tag;
		if (!u1(&h->r, &tag))
			return 0;
		int ok;
		switch (tag) {
		case SUB_CLASS_DUMP: ok = class_dump(h); break;
		case SUB_INSTANCE: ok = instance(h); break;
		case SUB_OBJ_ARRAY: ok = obj_array(h); break;
		case SUB_PRIM_ARRAY: ok = prim_array(h); break;
		case SUB_HEAP_INFO: ok = heap_info(h); break;
		default: ok = root(h, tag); break;
		}
		if (!ok)
			return 0;
	}
	if (h->r.at > end)
		h->d->stats[HPROF_STAT_OVERSHOOT]++;
	return 1;
}

/* ParseRecord: 0 at the end, or where a record cannot be read */
static int record(hp *h)
{
	rd *r = &h->r;
	if (r->n - r->at < 9)
		return 0;
	uint32_t len = (uint32_t)be(r->p + r->at + 5, 4);
	if (r->n - r->at - 9 < len) /* not all of it there: the reference waits for more */
		return 0;
	uint8_t tag = r->p[r->at];
	r->at += 9;
	switch (tag) {
	case TAG_UTF8: return utf8(h, len);
	case TAG_LOAD_CLASS: return load_class(h);
	case TAG_HEAP_DUMP:
	case TAG_HEAP_DUMP_SEGMENT: h->d->stats[HPROF_STAT_HEAP_DUMPS]++; return heap_dump(h, len);
	case TAG_HEAP_DUMP_END: return 1;
	default: return skip(r, len);
	}
}

static int header(hp *h)
{
	uint8_t c;
	while (u1(&h->r, &c) && c != 0)
		;
	uint32_t hi, lo;
	if (!u4(&h->r, &h->id_size))
		return 0;
	if (!u4(&h->r, &hi) || !u4(&h->r, &lo))
		return 0;
	h->d->ts = (uint64_t)hi << 32 | lo;
	return 1;
}

/* ---- the graph ---------------------------------------------------------------- */

/* "Class.field", interned: a reference's name */
static uint32_t qualified(hp *h, text_ref cls, text_ref field)
{
	tm_buf *b = &h->scratch;
	b->len = 0;
	tm_buf_put(b, txt(h, cls), cls.n);
	tm_buf_putc(b, '.');
	tm_buf_put(b, txt(h, field), field.n);
	return intern_name(h, b->data, b->len);
}

/* A class's own fields, qualified "Class.field" (interned), into `chain`
 * (once). */
static void make_own(hp *h, hclass *k)
{
	if (k->has_chain)
		return;
	uint32_t at = (uint32_t)h->n_chain;
	for (uint32_t i = 0; i < k->n_fields; i++) {
		const hfield *f = &h->fld[k->fields_at + i];
		uint32_t name = qualified(h, k->name, f->name);
		TM_GROW(h->chain, h->cap_chain, h->n_chain + 1);
		h->chain[h->n_chain++] = (hchain){name, f->type};
	}
	k->chain_at = at;
	k->n_chain = (uint32_t)(h->n_chain - at);
	k->has_chain = 1;
}

/* GetClassHierarchyFields: the instance fields of a class, its own then
 * every class's up its chain. A chain that loops ends at the first class
 * it comes back to (the reference's never ends). Each class keeps only
 * its own, and the chain is walked: a class's whole chain kept for each
 * was K^2/2 entries for K classes in one line, 1 GB for a dump of
 * 1.5 MB. */
typedef struct chain_it {
	hp *h;
	uint64_t cur, walk;
	const hclass *k;
	uint32_t i;
} chain_it;

static void chain_begin(chain_it *it, hp *h, const hclass *c)
{
	*it = (chain_it){h, c->id, ++h->walks, NULL, 0};
}

static const hchain *chain_next(chain_it *it)
{
	for (;;) {
		if (it->k && it->i < it->k->n_chain)
			return &it->h->chain[it->k->chain_at + it->i++];
		hclass *k = it->cur ? class_of(it->h, it->cur) : NULL;
		if (!k || k->walked == it->walk) {
			it->cur = 0;
			it->k = NULL;
			return NULL;
		}
		k->walked = it->walk;
		make_own(it->h, k);
		it->k = k;
		it->i = 0;
		it->cur = k->super;
	}
}

static void add_ref(hp *h, uint32_t name, uint64_t field_class, uint64_t target)
{
	hclass *fc = field_class ? class_of(h, field_class) : NULL;
	TM_GROW(h->refs, h->cap_refs, h->n_refs + 1);
	h->refs[h->n_refs++] = (href){name, fc ? (uint32_t)(fc - h->cls) + 1 : 0, target};
	h->d->stats[HPROF_STAT_REFERENCES]++;
}

/* ExtractObjectReferences and, for its stat, ExtractFieldValues */
static void object_refs(hp *h, hobj *o, hclass *c)
{
	for (uint32_t i = o->st_first; i != NONE; i = h->st[i].next) {
		const hstatic *s = &h->st[i];
		if (s->type != FT_OBJECT)
			continue;
		hobj *t = obj_of(h, s->target);
		if (!t)
			continue;
		add_ref(h, qualified(h, c->name, s->name), t->class_id, s->target);
	}
	if (!o->len)
		return;
	chain_it it;
	chain_begin(&it, h, c);
	size_t off = 0;
	for (const hchain *f; (f = chain_next(&it)) != NULL;) {
		if (off >= o->len)
			break;
		if (f->type == FT_OBJECT) {
			if (off + h->id_size > o->len) {
				h->d->stats[HPROF_STAT_REF_ERRORS]++;
				break;
			}
			uint64_t target = be(o->data + off, h->id_size);
			off += h->id_size;
			if (target) {
				hobj *t = obj_of(h, target);
				add_ref(h, f->name, t ? t->class_id : 0, target);
			}
		} else {
			off += type_size(f->type, h->id_size);
		}
	}
	if (o->type != OT_INSTANCE)
		return;
	off = 0;
	chain_begin(&it, h, c);
	for (const hchain *f; off < o->len && (f = chain_next(&it)) != NULL;) {
		size_t sz = type_size(f->type, h->id_size);
		if (sz > 1 && off + sz > o->len)
			h->d->stats[HPROF_STAT_FIELD_ERRORS]++;
		off += sz;
	}
}

static void array_refs(hp *h, hobj *o)
{
	char b[24];
	for (uint32_t i = 0; i < o->count; i++) {
		uint64_t e = be(o->data + (size_t)i * h->id_size, h->id_size);
		if (!e)
			continue;
		hobj *t = obj_of(h, e);
		if (!t)
			continue;
		int n = snprintf(b, sizeof b, "[%" PRIu32 "]", i);
		add_ref(h, intern_name(h, b, (size_t)n), t->class_id, e);
	}
}

/* ExtractAllObjectData: each object's references; the roots it is */
static void resolve_refs(hp *h)
{
	for (size_t i = 0; i < h->n_obj; i++) {
		hobj *o = &h->obj[i];
		o->refs_at = (uint32_t)h->n_refs;
		if (o->type == OT_INSTANCE || o->type == OT_CLASS) {
			hclass *c = class_of(h, o->class_id);
			if (c)
				object_refs(h, o, c);
		} else if (o->type == OT_OBJ_ARRAY) {
			array_refs(h, o);
		}
		o->n_refs = (uint32_t)(h->n_refs - o->refs_at);
		const uint32_t *v = tm_u64map_get(&h->roots, o->id);
		if (v) {
			o->has_root = 1;
			o->root_tag = (uint8_t)(*v - 1);
		}
	}
}

/* The kind of each class (the first reference class up its chain, 100
 * steps at most) and whether its referent is not followed. */
static void ref_kinds(hp *h)
{
	for (size_t i = 0; i < h->n_cls; i++) {
		uint64_t cur = h->cls[i].id;
		uint8_t kind = KIND_UNKNOWN, skip_ref = 0;
		for (int depth = 0; depth < 100 && cur != 0; depth++) {
			hclass *k = class_of(h, cur);
			if (!k)
				break;
			uint8_t is = text_is(h, k->name, "java.lang.ref.WeakReference")		 ? KIND_WEAK
				     : text_is(h, k->name, "java.lang.ref.SoftReference")	 ? KIND_SOFT
				     : text_is(h, k->name, "java.lang.ref.PhantomReference")	 ? KIND_PHANTOM
				     : text_is(h, k->name, "java.lang.ref.FinalizerReference") ? KIND_FINALIZER
											 : KIND_UNKNOWN;
			if (!kind)
				kind = is;
			if (is && is != KIND_SOFT) {
				skip_ref = 1;
				break;
			}
			cur = k->super;
		}
		h->cls[i].kind = kind;
		h->cls[i].ref_type = skip_ref;
	}
}

/* MarkReachableObjects: breadth first from the roots */
static void reach(hp *h)
{
	uint32_t referent = NONE;
	for (size_t i = 0; i < h->n_names; i++)
		if (h->names[i].n == 32 && memcmp(txt(h, h->names[i]), "java.lang.ref.Reference.referent", 32) == 0)
			referent = (uint32_t)i;
	uint32_t *q = tm_xmalloc((h->n_obj ? h->n_obj : 1) * sizeof *q);
	size_t head = 0, tail = 0;
	for (size_t i = 0; i < h->n_obj; i++)
		if (h->obj[i].has_root) {
			h->obj[i].reachable = 1;
			h->obj[i].dist = 0;
			q[tail++] = (uint32_t)i;
		}
	while (head < tail) {
		hobj *o = &h->obj[q[head++]];
		hclass *c = class_of(h, o->class_id);
		int skip_ref = c && c->ref_type;
		for (uint32_t j = 0; j < o->n_refs; j++) {
			const href *r = &h->refs[o->refs_at + j];
			if (skip_ref && r->name == referent)
				continue;
			hobj *t = obj_of(h, r->target);
			if (t && !t->reachable) {
				t->reachable = 1;
				t->dist = o->dist + 1;
				q[tail++] = (uint32_t)(t - h->obj);
			}
		}
	}
	free(q);
}

/* ComputeSelfSizes */
static void self_sizes(hp *h)
{
	int has_jlc = 0;
	uint64_t jlc = 0;
	for (size_t i = 0; i < h->n_cls && !has_jlc; i++)
		if (text_is(h, h->cls[i].name, "java.lang.Class")) {
			has_jlc = 1;
			jlc = h->cls[i].inst_size;
		}
	for (size_t i = 0; i < h->n_obj; i++) {
		hobj *o = &h->obj[i];
		hclass *c = class_of(h, o->class_id);
		if (o->type == OT_CLASS) {
			uint64_t sz = jlc;
			for (uint32_t s = o->st_first; s != NONE; s = h->st[s].next)
				sz += type_size(h->st[s].type, h->id_size);
			o->self_size = sz;
			o->has_size = 1;
		} else if (c) {
			o->self_size = c->inst_size;
			if (o->type == OT_OBJ_ARRAY)
				o->self_size += (uint64_t)o->count * h->id_size;
			else if (o->type == OT_PRIM_ARRAY)
				o->self_size += o->len;
			o->has_size = 1;
		}
	}
}

/* ---- the rows ------------------------------------------------------------------ */

static uint32_t class_row(hp *h, text_ref name, uint8_t kind)
{
	hprof_dump *d = h->d;
	d->classes = tm_xrealloc(d->classes, (d->n_classes + 1) * sizeof *d->classes);
	d->classes[d->n_classes] = (hprof_class_row){name.at, name.n, kind, 0, 0};
	return (uint32_t)d->n_classes++;
}

/* HeapGraphRoot.Type of a root tag (GetRootTypeName's names, "ROOT_"
 * before them) */
static uint8_t proto_root(uint8_t tag)
{
	switch (tag) {
	case ROOT_JNI_GLOBAL: return 1;
	case ROOT_JNI_LOCAL: return 2;
	case ROOT_JAVA_FRAME: return 3;
	case ROOT_NATIVE_STACK: return 4;
	case ROOT_STICKY_CLASS: return 5;
	case ROOT_THREAD_BLOCK: return 6;
	case ROOT_MONITOR_USED: return 7;
	case ROOT_THREAD_OBJ: return 8;
	case ROOT_INTERNED_STRING: return 9;
	case ROOT_FINALIZING: return 10;
	case ROOT_DEBUGGER: return 11;
	case ROOT_VM_INTERNAL: return 13;
	case ROOT_JNI_MONITOR: return 14;
	default: return 0; /* UNKNOWN */
	}
}

/* The type row of an object, or NONE for one the reference makes no row
 * of (counted hprof_class_errors). */
static uint32_t type_row(hp *h, const hobj *o)
{
	if (o->type == OT_CLASS) {
		const hclass *c = class_of(h, o->id);
		return c ? c->obj_row : NONE;
	}
	const hclass *c = class_of(h, o->class_id);
	if (c)
		return c->row;
	return o->type == OT_PRIM_ARRAY ? 0 : NONE; /* the reference's unset type id: its first class */
}

/* A field row of (name, the type of what it points at), interned. */
static uint32_t field_row(hp *h, tm_u64map *ix, const href *r, text_ref *unknown)
{
	uint64_t key = (uint64_t)r->name << 32 | r->ftype;
	const uint32_t *v = tm_u64map_get(ix, key);
	if (v)
		return *v - 1;
	hprof_dump *d = h->d;
	text_ref type;
	if (r->ftype) {
		type = h->cls[r->ftype - 1].name;
	} else {
		if (!unknown->n)
			*unknown = put_text(h, "unknown", 7);
		type = *unknown;
	}
	text_ref name = h->names[r->name];
	d->fields = tm_xrealloc(d->fields, (d->n_fields + 1) * sizeof *d->fields);
	d->fields[d->n_fields] = (hprof_field_row){name.at, type.at, name.n, type.n};
	tm_u64map_put(ix, key, (uint32_t)d->n_fields);
	return (uint32_t)d->n_fields++;
}

/* PopulateClasses, PopulateObjects, PopulateReferences: rows only when
 * the dump has a class and an object. */
static void rows(hp *h)
{
	hprof_dump *d = h->d;
	if (!h->n_cls || !h->n_obj)
		return;
	d->has_rows = 1;
	for (size_t i = 0; i < h->n_cls; i++)
		h->cls[i].row = class_row(h, h->cls[i].name, h->cls[i].kind);
	tm_buf *b = &h->scratch;
	for (size_t i = 0; i < h->n_cls; i++) {
		const hobj *o = obj_of(h, h->cls[i].id);
		if (!o || o->type != OT_CLASS)
			continue;
		b->len = 0;
		tm_buf_puts(b, "java.lang.Class<");
		tm_buf_put(b, txt(h, h->cls[i].name), h->cls[i].name.n);
		tm_buf_putc(b, '>');
		text_ref t = put_text(h, b->data, b->len);
		h->cls[i].obj_row = class_row(h, t, KIND_UNKNOWN);
	}
	d->objects = tm_xcalloc(h->n_obj, sizeof *d->objects);
	for (size_t i = 0; i < h->n_obj; i++) {
		hobj *o = &h->obj[i];
		uint32_t type = type_row(h, o);
		if (type == NONE) {
			d->stats[HPROF_STAT_CLASS_ERRORS]++;
			continue;
		}
		o->row = (uint32_t)d->n_objects;
		uint64_t size = o->has_size ? o->self_size : 0;
		d->objects[d->n_objects++] = (hprof_object_row){
			o->id, type, (uint8_t)(o->has_root ? proto_root(o->root_tag) + 1 : 0), o->reachable, o->dist, size,
			0, 0};
		d->classes[type].objects++;
		d->classes[type].bytes += size;
		d->reachable += o->reachable;
	}
	tm_u64map ix = {0};
	text_ref unknown = {0, 0};
	for (size_t i = 0; i < h->n_obj; i++) {
		const hobj *o = &h->obj[i];
		if (o->row == NONE)
			continue;
		hprof_object_row *row = &d->objects[o->row];
		row->refs_at = (uint32_t)d->n_refs;
		d->refs = tm_xrealloc(d->refs, (d->n_refs + o->n_refs + 1) * sizeof *d->refs);
		for (uint32_t j = 0; j < o->n_refs; j++) {
			const href *r = &h->refs[o->refs_at + j];
			const hobj *t = obj_of(h, r->target);
			uint64_t target = t && t->row != NONE ? r->target : 0;
			d->refs[d->n_refs++] = (hprof_ref_row){field_row(h, &ix, r, &unknown), target};
		}
		row->n_refs = o->n_refs;
	}
	tm_u64map_free(&ix);
}

void hprof_read(const uint8_t *p, size_t n, hprof_dump *d)
{
	memset(d, 0, sizeof *d);
	hp h = {.r = {p, n, 0}, .d = d};
	if (!header(&h))
		d->stats[HPROF_STAT_HEADER_ERRORS]++;
	while (record(&h))
		;
	resolve_refs(&h);
	ref_kinds(&h);
	reach(&h);
	self_sizes(&h);
	rows(&h);
	tm_u64map_free(&h.strings);
	tm_u64map_free(&h.class_ix);
	tm_u64map_free(&h.obj_ix);
	tm_u64map_free(&h.roots);
	tm_u64map_free(&h.name_ix);
	free(h.strs);
	free(h.cls);
	free(h.fld);
	free(h.chain);
	free(h.st);
	free(h.obj);
	free(h.refs);
	free(h.names);
	tm_buf_free(&h.scratch);
}

void hprof_dump_free(hprof_dump *d)
{
	free(d->classes);
	free(d->objects);
	free(d->refs);
	free(d->fields);
	tm_buf_free(&d->text);
	memset(d, 0, sizeof *d);
}
