/* core/formats/proto/heap_graph.c - Java heap dumps as Perfetto records them
 * (HeapGraph packets, the android.java_hprof data source) into the tables:
 * their processes, their heap_graph_* stats and their classes with
 * objects and bytes (heap.tsv). merged.pftrace carries the packets as they
 * are, so the reference's heap_graph_* tables of it are those of the
 * archive.
 *
 * This follows the reference's HeapGraphModule and HeapGraphTracker as far
 * as those outputs go. A dump is a run of packets on one sequence, the
 * last without `continued`; the tracker keeps one dump per sequence id
 * across every file of the trace (two files' sequence 1 are one state, as
 * in the reference). Objects name their type by an id the dump interns,
 * usually in its last packet, so everything is worked out when the dump
 * ends:
 *   - an object of self_size 0 takes its type's object_size;
 *   - an object a reference, a runtime-internal reference or a type's
 *     class loader names, but no packet gives, is an object of the
 *     reference's class row 0 (the first class row of the trace) and of
 *     size -1 (tracemount(1), "Heap dumps");
 *   - a type no packet names is a class of no name.
 * Object and class ids, references, roots, reachability and native sizes
 * make no output here, so they are only counted where a stat needs them.
 */
#include "model/model_internal.h"
#include "formats/kinds.h"
#include "formats/proto/heap_graph.h"
#include "trace.pb-c.h"
#include "wire/proto.h"

#include <stdlib.h>
#include <string.h>

typedef Perfetto__Protos__HeapGraphObject HeapGraphObject;
typedef Perfetto__Protos__HeapGraphType HeapGraphType;

/* An interned HeapGraphType (AddInternedType: a later one of the id
 * replaces it whole). */
typedef struct hg_type {
	uint64_t id;
	uint32_t name;          /* the model's string of class_name ("" when absent) */
	uint64_t object_size;
	uint64_t superclass_id, classloader_id;
	uint64_t *fields;       /* reference_field_id */
	size_t n_fields;
	uint64_t location_id;
	uint8_t has_location, no_fields;
} hg_type;

/* An object of the dump: given by a packet (`given`), or only named. */
typedef struct hg_object {
	uint64_t type_id;
	int64_t self_size;
	uint32_t n_refs;        /* its reference set's size (the last one made) */
	uint8_t given;
} hg_object;

/* An object left to its type at the end: for its size, or for the names
 * of its references (the type's field list). */
typedef struct hg_deferred {
	size_t obj;
	uint64_t type_id;
} hg_deferred;

/* The dump a sequence is in the middle of (SequenceState). */
typedef struct hg_seq {
	uint32_t seq;
	int64_t upid, ts;       /* 0: not yet (the reference's test, upid 0 too) */
	uint32_t file_id, row;  /* its first packet's: whom the dump's rows and
				 * stats go to */
	uint64_t last_object_id;
	uint64_t prev_index;
	uint8_t has_prev_index;
	m_map objects;          /* object id -> index + 1 into obj */
	hg_object *obj;
	size_t n_obj, cap_obj;
	m_map types;            /* type id -> index + 1 into ty */
	hg_type *ty;
	size_t n_ty, cap_ty;
	m_map rows;             /* type id -> 1: its class row is made */
	m_map fields;           /* field name iids given */
	m_map locations;        /* location iid -> model string + 1 (the first given) */
	hg_deferred *sized, *named;
	size_t n_sized, cap_sized, n_named, cap_named;
} hg_seq;

/* Objects of class row 0, by the file and machine of their dump. */
typedef struct hg_orphans {
	uint32_t file_id, row;
	uint64_t objects;
} hg_orphans;

typedef struct hg_state {
	hg_seq **seqs;          /* the dumps in progress, in their order of start */
	size_t n_seqs, cap_seqs;
	/* the trace's first class row: the dump and type id it is of until
	 * that dump ends, then its name */
	uint8_t has_row0, row0_named;
	hg_seq *row0_seq;
	uint64_t row0_type;
	uint32_t row0_name;
	hg_orphans *orphans;
	size_t n_orphans, cap_orphans;
} hg_state;

static hg_state *state(tm_model *m)
{
	if (!m->kind_state[TM_MREC_PROTO])
		m->kind_state[TM_MREC_PROTO] = tm_xcalloc(1, sizeof(hg_state));
	return m->kind_state[TM_MREC_PROTO];
}

static hg_seq *seq_get(const tm_model *m, hg_state *st, uint32_t seq)
{
	for (size_t i = 0; i < st->n_seqs; i++)
		if (st->seqs[i]->seq == seq)
			return st->seqs[i];
	TM_GROW(st->seqs, st->cap_seqs, st->n_seqs + 1);
	hg_seq *s = tm_xcalloc(1, sizeof *s);
	s->seq = seq;
	s->file_id = m->cur_file;
	s->row = m->cur_row;
	st->seqs[st->n_seqs++] = s;
	return s;
}

static void seq_free(hg_seq *s)
{
	m_map_free(&s->objects);
	free(s->obj);
	m_map_free(&s->types);
	for (size_t i = 0; i < s->n_ty; i++)
		free(s->ty[i].fields);
	free(s->ty);
	m_map_free(&s->rows);
	m_map_free(&s->fields);
	m_map_free(&s->locations);
	free(s->sized);
	free(s->named);
	free(s);
}

static void seq_drop(hg_state *st, hg_seq *s)
{
	for (size_t i = 0; i < st->n_seqs; i++)
		if (st->seqs[i] == s) {
			memmove(&st->seqs[i], &st->seqs[i + 1], (st->n_seqs - i - 1) * sizeof *st->seqs);
			st->n_seqs--;
			break;
		}
	seq_free(s);
}

static hg_type *type_of(hg_seq *s, uint64_t id)
{
	uint64_t *v = m_map_get(&s->types, id);
	return v ? &s->ty[*v - 1] : NULL;
}

/* GetOrInsertObject: an object of the dump, named only until given */
static size_t object(hg_seq *s, uint64_t id)
{
	int ins;
	uint64_t *v = m_map_put(&s->objects, id, &ins);
	if (!ins)
		return (size_t)(*v - 1);
	TM_GROW(s->obj, s->cap_obj, s->n_obj + 1);
	s->obj[s->n_obj] = (hg_object){0, -1, 0, 0};
	*v = ++s->n_obj;
	return s->n_obj - 1;
}

/* GetOrInsertType: the class row of a type id, the trace's first one
 * remembered */
static void class_row(hg_state *st, hg_seq *s, uint64_t type_id)
{
	int ins;
	m_map_put(&s->rows, type_id, &ins);
	if (ins && !st->has_row0) {
		st->has_row0 = 1;
		st->row0_seq = s;
		st->row0_type = type_id;
	}
}

static void defer(hg_deferred **v, size_t *n, size_t *cap, size_t obj, uint64_t type_id)
{
	TM_GROW(*v, *cap, *n + 1);
	(*v)[(*n)++] = (hg_deferred){obj, type_id};
}

/* SetPidAndTimestamp: a dump is of one process at one time */
static int same_dump(tm_model *m, hg_seq *s, int64_t upid, int64_t ts)
{
	if ((s->upid != 0 && s->upid != upid) || (s->ts != 0 && s->ts != ts)) {
		m_stat(m, "heap_graph_non_finalized_graph", 1);
		return 0;
	}
	s->upid = upid;
	s->ts = ts;
	return 1;
}

/* SetPacketIndex: the packets of a dump count from 0 */
static void packet_index(tm_model *m, hg_seq *s, uint64_t index)
{
	if ((!s->has_prev_index && index != 0) || (s->has_prev_index && s->prev_index + 1 != index))
		m_stat_idx(m, "heap_graph_missing_packet", (int)s->upid, 1);
	s->prev_index = index;
	s->has_prev_index = 1;
}

static void add_object(tm_model *m, hg_state *st, hg_seq *s, int64_t upid, int64_t ts, const HeapGraphObject *o)
{
	uint64_t id = o->identifier_case == PERFETTO__PROTOS__HEAP_GRAPH_OBJECT__IDENTIFIER_ID_DELTA && o->id_delta
			      ? s->last_object_id + o->id_delta
			      : (o->identifier_case == PERFETTO__PROTOS__HEAP_GRAPH_OBJECT__IDENTIFIER_ID ? o->id : 0);
	if (o->n_reference_field_id && o->n_reference_field_id != o->n_reference_object_id) {
		m_stat_idx(m, "heap_graph_malformed_packet", (int)upid, 1);
		return;
	}
	if (!same_dump(m, s, upid, ts))
		return;
	s->last_object_id = id;
	size_t k = object(s, id);
	class_row(st, s, o->type_id);
	s->obj[k].given = 1;
	s->obj[k].type_id = o->type_id;
	s->obj[k].self_size = (int64_t)o->self_size;
	if (o->self_size == 0)
		defer(&s->sized, &s->n_sized, &s->cap_sized, k, o->type_id);
	for (size_t i = 0; i < o->n_reference_object_id; i++)
		if (o->reference_object_id[i])
			object(s, o->reference_object_id[i] + o->reference_field_id_base);
	for (size_t i = 0; i < o->n_runtime_internal_object_id; i++)
		object(s, o->runtime_internal_object_id[i]);
	size_t refs = o->n_reference_object_id + o->n_runtime_internal_object_id;
	if (refs)
		s->obj[k].n_refs = refs > UINT32_MAX ? UINT32_MAX : (uint32_t)refs;
	if (o->n_reference_object_id && !o->n_reference_field_id)
		defer(&s->named, &s->n_named, &s->cap_named, k, o->type_id);
}

static void add_type(tm_model *m, hg_seq *s, const HeapGraphType *t)
{
	int ins;
	uint64_t *v = m_map_put(&s->types, t->id, &ins);
	if (ins) {
		TM_GROW(s->ty, s->cap_ty, s->n_ty + 1);
		memset(&s->ty[s->n_ty], 0, sizeof s->ty[s->n_ty]);
		*v = ++s->n_ty;
	}
	hg_type *ty = &s->ty[*v - 1];
	free(ty->fields);
	ty->id = t->id;
	const char *name = t->class_name ? t->class_name : "";
	ty->name = m_intern(&m->str, name, strlen(name));
	ty->object_size = t->object_size;
	ty->superclass_id = t->superclass_id;
	ty->classloader_id = t->classloader_id;
	ty->n_fields = t->n_reference_field_id;
	ty->fields = NULL;
	if (ty->n_fields) {
		ty->fields = tm_xcalloc(ty->n_fields, sizeof *ty->fields);
		memcpy(ty->fields, t->reference_field_id, ty->n_fields * sizeof *ty->fields);
	}
	ty->has_location = t->has_location_id;
	ty->location_id = t->location_id;
	ty->no_fields = t->kind == PERFETTO__PROTOS__HEAP_GRAPH_TYPE__KIND__KIND_NOREFERENCES ||
			t->kind == PERFETTO__PROTOS__HEAP_GRAPH_TYPE__KIND__KIND_ARRAY ||
			t->kind == PERFETTO__PROTOS__HEAP_GRAPH_TYPE__KIND__KIND_STRING;
}

/* PackageFromApp: a path under /data/app/ names a package ("PKG-..." as
 * its first directory, or its second after a "~~..." one); 0 when not */
static int app_has_package(const char *p, size_t n)
{
	size_t start = 0;
	if (n && p[0] == '~') {
		const char *slash = memchr(p, '/', n);
		if (!slash)
			return 0;
		start = (size_t)(slash - p) + 1;
	}
	if (start + 1 > n)
		return 0;
	const char *end = memchr(p + start + 1, '/', n - start - 1);
	if (!end)
		return 0;
	/* the reference takes (end - p) bytes from start, at most what is left */
	size_t len = (size_t)(end - p);
	if (len > n - start)
		len = n - start;
	return memchr(p + start, '-', len) != NULL;
}

/* PackageFromLocation's one stat: a location under /data/app/ (or a dex
 * extracted from one) whose package it cannot read. The names it knows
 * by their path come first and are never an error. */
static void check_location(tm_model *m, const char *loc, size_t n)
{
	static const char *const known[] = {"DevicePersonalizationPrebuilt", "MatchMaker",
					    "DeviceIntelligenceNetworkPrebuilt", "SettingsIntelligenceGooglePrebuilt",
					    "PrebuiltGmsCore", "com.google.android.gms"};
	for (size_t i = 0; i < sizeof known / sizeof *known; i++)
		if (memmem(loc, n, known[i], strlen(known[i])))
			return;
	static const char data_app[] = "/data/app/", inmem[] = "dex extracted in memory from /data/app/";
	const size_t da = sizeof data_app - 1, im = sizeof inmem - 1;
	const char *at = NULL;
	if (n >= da && memcmp(loc, data_app, da) == 0) {
		at = loc + da;
	} else {
		const char *f = memmem(loc, n, inmem, im);
		if (f)
			at = f + im;
	}
	if (at && !app_has_package(at, n - (size_t)(at - loc)))
		m_stat(m, "deobfuscate_location_parse_error", 1);
}

/* The names of an object's references from its type's field list, up
 * the superclasses (the stats of those that have none). */
static void name_references(tm_model *m, hg_seq *s, const hg_object *o, const hg_type *t)
{
	if (t->no_fields)
		return;
	size_t off = 0;
	for (size_t r = 0; r < o->n_refs; r++) {
		/* a chain of superclasses without fields would loop in the
		 * reference; it ends here after as many steps as types */
		size_t steps = 0;
		while (t && off >= t->n_fields) {
			size_t prev = t->n_fields;
			const hg_type *super = t->superclass_id ? type_of(s, t->superclass_id) : NULL;
			if (!super)
				m_stat_idx(m, "heap_graph_malformed_packet", (int)s->upid, 1);
			t = ++steps > s->n_ty ? NULL : super;
			off -= prev;
		}
		if (!t)
			return;
		if (!m_map_get(&s->fields, t->fields[off++]))
			m_stat_idx(m, "heap_graph_malformed_packet", (int)s->upid, 1);
	}
}

static void add_orphans(hg_state *st, uint32_t file_id, uint32_t row, uint64_t n)
{
	for (size_t i = 0; i < st->n_orphans; i++)
		if (st->orphans[i].file_id == file_id && st->orphans[i].row == row) {
			st->orphans[i].objects += n;
			return;
		}
	TM_GROW(st->orphans, st->cap_orphans, st->n_orphans + 1);
	st->orphans[st->n_orphans++] = (hg_orphans){file_id, row, n};
}

/* FinalizeProfile: the dump's types, sizes and classes; its state goes */
static void finalize(tm_model *m, hg_state *st, hg_seq *s)
{
	uint32_t cur_file = m->cur_file, cur_row = m->cur_row;
	m->cur_file = s->file_id;
	m->cur_row = s->row;
	/* the class rows in the order of the types (hash order in the
	 * reference: only which row is the trace's first can tell) */
	for (size_t i = 0; i < s->n_ty; i++) {
		const hg_type *t = &s->ty[i];
		if (t->has_location) {
			const uint64_t *loc = m_map_get(&s->locations, t->location_id);
			if (!loc) {
				m_stat_idx(m, "heap_graph_invalid_string_id", (int)s->upid, 1);
			} else {
				size_t n;
				const char *p = tm_model_string(m, (uint32_t)(*loc - 1), &n);
				check_location(m, p ? p : "", p ? n : 0);
			}
		}
		class_row(st, s, t->id);
		if (t->classloader_id)
			object(s, t->classloader_id);
	}
	int left = 0;
	for (size_t i = 0; i < s->n_sized; i++) {
		const hg_type *t = type_of(s, s->sized[i].type_id);
		if (t)
			s->obj[s->sized[i].obj].self_size = (int64_t)t->object_size;
		else
			left = 1;
	}
	for (size_t i = 0; i < s->n_named; i++) {
		const hg_type *t = type_of(s, s->named[i].type_id);
		if (t)
			name_references(m, s, &s->obj[s->named[i].obj], t);
		else
			left = 1;
	}
	if (left)
		m_stat_idx(m, "heap_graph_malformed_packet", (int)s->upid, 1);

	/* heap.tsv: per type, its objects and bytes; the objects only named
	 * go to class row 0, whose name may come later */
	m_map per_type = {0};
	struct {
		uint64_t type_id, objects;
		uint64_t bytes; /* summed as the two's complement of their sizes */
	} *c = NULL;
	size_t n_types = 0, cap_types = 0, orphans = 0;
	for (size_t i = 0; i < s->n_obj; i++) {
		const hg_object *o = &s->obj[i];
		if (!o->given) {
			orphans++;
			continue;
		}
		int ins;
		uint64_t *v = m_map_put(&per_type, o->type_id, &ins);
		if (ins) {
			TM_GROW(c, cap_types, n_types + 1);
			c[n_types].type_id = o->type_id;
			c[n_types].objects = c[n_types].bytes = 0;
			*v = ++n_types;
		}
		c[*v - 1].objects++;
		c[*v - 1].bytes += (uint64_t)o->self_size;
	}
	for (size_t i = 0; i < n_types; i++) {
		const hg_type *t = type_of(s, c[i].type_id);
		size_t n = 0;
		const char *name = t ? tm_model_string(m, t->name, &n) : NULL;
		m_heap_class(m, name ? name : "", name ? n : 0, c[i].objects, (int64_t)c[i].bytes);
	}
	if (orphans)
		add_orphans(st, s->file_id, s->row, orphans);
	free(c);
	m_map_free(&per_type);

	if (st->row0_seq == s) {
		const hg_type *t = type_of(s, st->row0_type);
		st->row0_name = t ? t->name : 0;
		st->row0_named = 1;
		st->row0_seq = NULL;
	}
	seq_drop(st, s);
	m->cur_file = cur_file;
	m->cur_row = cur_row;
}

/* ---- reading a packet as protozero does --------------------------------------- */

/* Hand-written on the wire, not protobuf-c: the reference reads a HeapGraph
 * with protozero, whose rules protobuf-c does not follow, and they decide
 * what a damaged or unusual packet gives:
 *   - a message is its fields up to bytes that are no field;
 *   - a field's value is its last occurrence, whatever its wire type (a
 *     length-delimited one read as a number is an address there: 0 here,
 *     but true as a bool; a number read as a message is an empty one);
 *   - a packed field is its last run alone, and a run that does not parse
 *     (a varint cut off) is an error: for an object or a root it counts
 *     heap_graph_malformed_packet and ends the packet's objects (roots),
 *     for a type it counts it and the type is left out (HeapGraphModule);
 *   - an object's id_delta, when not 0, wins over its id.
 * protobuf-c refused such a packet whole, or read two runs of a field as
 * one. The entries still go to the code below as protobuf-c's structs,
 * filled here. */
#define PZ_FIELDS 16 /* above every field of the messages read here */
/* pz_has answers 0 for a field past PZ_FIELDS: each field read by number
 * must be below it, or it would read as absent */
_Static_assert(F_HeapGraph_pid < PZ_FIELDS && F_HeapGraph_index < PZ_FIELDS && F_HeapGraph_continued < PZ_FIELDS &&
		       F_HeapGraphObject_id < PZ_FIELDS && F_HeapGraphObject_id_delta < PZ_FIELDS &&
		       F_HeapGraphObject_type_id < PZ_FIELDS && F_HeapGraphObject_self_size < PZ_FIELDS &&
		       F_HeapGraphObject_reference_field_id_base < PZ_FIELDS &&
		       F_HeapGraphObject_reference_field_id < PZ_FIELDS &&
		       F_HeapGraphObject_reference_object_id < PZ_FIELDS &&
		       F_HeapGraphObject_runtime_internal_object_id < PZ_FIELDS && F_HeapGraphType_id < PZ_FIELDS &&
		       F_HeapGraphType_location_id < PZ_FIELDS && F_HeapGraphType_class_name < PZ_FIELDS &&
		       F_HeapGraphType_object_size < PZ_FIELDS && F_HeapGraphType_superclass_id < PZ_FIELDS &&
		       F_HeapGraphType_reference_field_id < PZ_FIELDS && F_HeapGraphType_classloader_id < PZ_FIELDS &&
		       F_HeapGraphType_kind < PZ_FIELDS && F_HeapGraphRoot_object_ids < PZ_FIELDS &&
		       F_InternedString_iid < PZ_FIELDS && F_InternedString_str < PZ_FIELDS,
	       "PZ_FIELDS is above every field read by number");

/* where an empty message or string points (never NULL: NULL + 0 is
 * undefined) */
static const uint8_t pz_empty[1];

typedef struct pz {
	tm_span msg;                  /* its fields, up to the first that is none */
	tm_pb_field last[PZ_FIELDS];  /* each field's last occurrence, by number */
	uint32_t has;
} pz;

static void pz_read(pz *z, tm_span msg)
{
	z->has = 0;
	const uint8_t *at = msg.p, *end = msg.p + msg.n;
	tm_pb_field f = {0};
	int r;
	while ((r = tm_pb_field_at(&at, end, &f)) != TM_PB_FIELD_END) {
		if (r != TM_PB_FIELD_OK || f.id >= PZ_FIELDS)
			continue;
		z->last[f.id] = f;
		z->has |= 1u << f.id;
	}
	z->msg.p = msg.p;
	z->msg.n = (size_t)(at - msg.p);
}

static int pz_has(const pz *z, uint32_t id)
{
	return id < PZ_FIELDS && (z->has >> id & 1);
}

static uint64_t pz_u64(const pz *z, uint32_t id)
{
	return pz_has(z, id) && z->last[id].wire != TM_PB_LEN ? z->last[id].val : 0;
}

static int pz_bool(const pz *z, uint32_t id)
{
	return pz_has(z, id) && (z->last[id].wire == TM_PB_LEN || z->last[id].val != 0);
}

static tm_span pz_bytes(const pz *z, uint32_t id)
{
	tm_span none = {pz_empty, 0};
	return pz_has(z, id) && z->last[id].wire == TM_PB_LEN ? z->last[id].data : none;
}

/* The next occurrence of field id from *at (z's message start at first) as
 * a message: 1, or 0 at the end. */
static int pz_next(const pz *z, uint32_t id, const uint8_t **at, tm_span *out)
{
	const uint8_t *end = z->msg.p + z->msg.n;
	tm_pb_field f = {0};
	int r;
	while ((r = tm_pb_field_at(at, end, &f)) != TM_PB_FIELD_END) {
		if (r != TM_PB_FIELD_OK || f.id != id)
			continue;
		out->p = f.wire == TM_PB_LEN ? f.data.p : pz_empty;
		out->n = f.wire == TM_PB_LEN ? f.data.n : 0;
		return 1;
	}
	return 0;
}

/* ForEachVarInt: the ids of field id into b (uint64s), packed (its last
 * run) or not (every occurrence; one that is length-delimited, an address
 * there, is left out); -1 when the run does not parse. */
static int pz_varints(const pz *z, uint32_t id, tm_buf *b)
{
	b->len = 0;
	if (!pz_has(z, id))
		return 0;
	if (z->last[id].wire == TM_PB_LEN) {
		tm_pb_values it;
		uint64_t v;
		tm_pb_values_init(&it, &z->last[id]);
		while (tm_pb_values_next(&it, &v))
			tm_buf_put(b, &v, sizeof v);
		return it.malformed ? -1 : 0;
	}
	const uint8_t *at = z->msg.p, *end = z->msg.p + z->msg.n;
	tm_pb_field f = {0};
	int r;
	while ((r = tm_pb_field_at(&at, end, &f)) != TM_PB_FIELD_END)
		if (r == TM_PB_FIELD_OK && f.id == id && f.wire != TM_PB_LEN)
			tm_buf_put(b, &f.val, sizeof f.val);
	return 0;
}

/* The buffers a packet's entries are read into, reused from one to the next. */
typedef struct pz_bufs {
	tm_buf ids[3];
	tm_buf name;
} pz_bufs;

/* An object into o (its arrays in bb): 0, or -1 when its packed ids do
 * not parse. */
static int read_object(HeapGraphObject *o, tm_span msg, pz_bufs *bb)
{
	static const uint32_t packed[3] = {F_HeapGraphObject_reference_field_id, F_HeapGraphObject_reference_object_id,
					   F_HeapGraphObject_runtime_internal_object_id};
	pz z;
	pz_read(&z, msg);
	uint64_t delta = pz_u64(&z, F_HeapGraphObject_id_delta);
	if (delta) {
		o->identifier_case = PERFETTO__PROTOS__HEAP_GRAPH_OBJECT__IDENTIFIER_ID_DELTA;
		o->id_delta = delta;
	} else {
		o->identifier_case = PERFETTO__PROTOS__HEAP_GRAPH_OBJECT__IDENTIFIER_ID;
		o->id = pz_u64(&z, F_HeapGraphObject_id);
	}
	o->type_id = pz_u64(&z, F_HeapGraphObject_type_id);
	o->self_size = pz_u64(&z, F_HeapGraphObject_self_size);
	o->reference_field_id_base = pz_u64(&z, F_HeapGraphObject_reference_field_id_base);
	for (size_t i = 0; i < 3; i++)
		if (pz_varints(&z, packed[i], &bb->ids[i]) != 0)
			return -1;
	o->n_reference_field_id = bb->ids[0].len / sizeof(uint64_t);
	o->reference_field_id = (uint64_t *)bb->ids[0].data;
	o->n_reference_object_id = bb->ids[1].len / sizeof(uint64_t);
	o->reference_object_id = (uint64_t *)bb->ids[1].data;
	o->n_runtime_internal_object_id = bb->ids[2].len / sizeof(uint64_t);
	o->runtime_internal_object_id = (uint64_t *)bb->ids[2].data;
	return 0;
}

/* A type into t (its arrays and name in bb): 0, or -1 when its field ids
 * do not parse. */
static int read_type(HeapGraphType *t, tm_span msg, pz_bufs *bb)
{
	pz z;
	pz_read(&z, msg);
	if (pz_varints(&z, F_HeapGraphType_reference_field_id, &bb->ids[0]) != 0)
		return -1;
	t->n_reference_field_id = bb->ids[0].len / sizeof(uint64_t);
	t->reference_field_id = (uint64_t *)bb->ids[0].data;
	t->id = pz_u64(&z, F_HeapGraphType_id);
	t->has_location_id = pz_has(&z, F_HeapGraphType_location_id);
	t->location_id = pz_u64(&z, F_HeapGraphType_location_id);
	tm_span name = pz_bytes(&z, F_HeapGraphType_class_name);
	bb->name.len = 0;
	tm_buf_put(&bb->name, name.p, name.n);
	tm_buf_putc(&bb->name, '\0');
	t->class_name = bb->name.data;
	t->object_size = pz_u64(&z, F_HeapGraphType_object_size);
	t->superclass_id = pz_u64(&z, F_HeapGraphType_superclass_id);
	t->classloader_id = pz_u64(&z, F_HeapGraphType_classloader_id);
	t->kind = (Perfetto__Protos__HeapGraphType__Kind)(int)pz_u64(&z, F_HeapGraphType_kind);
	return 0;
}

/* ---- a packet ---------------------------------------------------------------------- */

void m_heap_graph_packet(tm_model *m, const tm_mrec_head *h, int64_t ts, uint32_t seq, const uint8_t *p,
			 size_t n)
{
	pz g, z;
	pz_read(&g, (tm_span){n ? p : pz_empty, n});
	hg_state *st = state(m);
	m_mach *mc = m_machine(m, h->machine_row);
	/* the reference's pid is a uint32 */
	int64_t upid = m_get_or_create_process(m, mc, (int64_t)(uint32_t)pz_u64(&g, F_HeapGraph_pid));
	hg_seq *s = seq_get(m, st, seq);
	packet_index(m, s, pz_u64(&g, F_HeapGraph_index));
	pz_bufs bb = {0};
	const uint8_t *at = g.msg.p;
	tm_span e;
	while (pz_next(&g, F_HeapGraph_objects, &at, &e)) {
		HeapGraphObject o = PERFETTO__PROTOS__HEAP_GRAPH_OBJECT__INIT;
		if (read_object(&o, e, &bb) != 0) {
			m_stat_idx(m, "heap_graph_malformed_packet", (int)upid, 1);
			break;
		}
		add_object(m, st, s, upid, ts, &o);
	}
	for (at = g.msg.p; pz_next(&g, F_HeapGraph_types, &at, &e);) {
		HeapGraphType t = PERFETTO__PROTOS__HEAP_GRAPH_TYPE__INIT;
		if (read_type(&t, e, &bb) != 0) {
			m_stat_idx(m, "heap_graph_malformed_packet", (int)upid, 1);
			continue;
		}
		add_type(m, s, &t);
	}
	for (at = g.msg.p; pz_next(&g, F_HeapGraph_field_names, &at, &e);) {
		pz_read(&z, e);
		int ins;
		m_map_put(&s->fields, pz_u64(&z, F_InternedString_iid), &ins);
	}
	for (at = g.msg.p; pz_next(&g, F_HeapGraph_location_names, &at, &e);) {
		pz_read(&z, e);
		tm_span str = pz_bytes(&z, F_InternedString_str);
		int ins;
		uint64_t *v = m_map_put(&s->locations, pz_u64(&z, F_InternedString_iid), &ins);
		if (ins)
			*v = (uint64_t)m_intern(&m->str, str.n ? (const char *)str.p : "", str.n) + 1;
	}
	for (at = g.msg.p; pz_next(&g, F_HeapGraph_roots, &at, &e);) {
		pz_read(&z, e);
		if (pz_varints(&z, F_HeapGraphRoot_object_ids, &bb.ids[0]) != 0) {
			m_stat_idx(m, "heap_graph_malformed_packet", (int)upid, 1);
			break;
		}
		same_dump(m, s, upid, ts);
	}
	for (size_t i = 0; i < 3; i++)
		tm_buf_free(&bb.ids[i]);
	tm_buf_free(&bb.name);
	if (!pz_bool(&g, F_HeapGraph_continued))
		finalize(m, st, s);
}

/* FinalizeAllProfiles: the dumps the trace ends in the middle of; then
 * the objects of class row 0 */
void m_heap_graph_finish(tm_model *m)
{
	hg_state *st = m->kind_state[TM_MREC_PROTO];
	if (!st)
		return;
	if (st->n_seqs)
		m_stat(m, "heap_graph_non_finalized_graph", 1);
	while (st->n_seqs)
		finalize(m, st, st->seqs[0]);
	if (!st->row0_named)
		return;
	size_t n = 0;
	const char *name = tm_model_string(m, st->row0_name, &n);
	for (size_t i = 0; i < st->n_orphans; i++)
		m_heap_class_at(m, name ? name : "", name ? n : 0, st->orphans[i].objects,
				-(int64_t)st->orphans[i].objects, st->orphans[i].file_id, st->orphans[i].row);
	st->n_orphans = 0;
}

void m_heap_graph_free(tm_model *m)
{
	hg_state *st = m->kind_state[TM_MREC_PROTO];
	if (!st)
		return;
	for (size_t i = 0; i < st->n_seqs; i++)
		seq_free(st->seqs[i]);
	free(st->seqs);
	free(st->orphans);
	free(st);
	m->kind_state[TM_MREC_PROTO] = NULL;
}
