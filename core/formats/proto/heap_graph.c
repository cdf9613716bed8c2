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

typedef Perfetto__Protos__HeapGraph HeapGraph;
typedef Perfetto__Protos__HeapGraphObject HeapGraphObject;
typedef Perfetto__Protos__HeapGraphType HeapGraphType;
typedef Perfetto__Protos__HeapGraphRoot HeapGraphRoot;
typedef Perfetto__Protos__InternedString InternedString;

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

/* ---- a packet protobuf-c refuses --------------------------------------------- */

/* protobuf-c unpacks a message whole or not at all: one object whose packed
 * references end in a cut varint, and the packet is refused. The reference
 * reads it field by field (protozero): a message's fields up to bytes that
 * are no field count; an object (or root) whose packed ids do not parse
 * counts heap_graph_malformed_packet and ends the packet's objects (roots);
 * a type whose field ids do not parse counts it and is skipped. So such a
 * packet is read again here that way, by hand on the wire (what protobuf-c
 * cannot do), each entry unpacked by protobuf-c on its own: a message's
 * whole fields alone, and where even those are refused, it is the packed
 * ids. */
typedef struct hg_salvage {
	HeapGraph g;
	size_t cap[5];          /* of objects, types, roots, field and location names */
	int bad_objects, bad_roots;
	int bad_types;          /* how many */
} hg_salvage;

/* The bytes of m's fields up to the first that does not parse (where
 * protozero stops reading a message). */
static size_t whole_fields(tm_span m)
{
	const uint8_t *at = m.p, *end = m.p + m.n;
	tm_pb_field f;
	while (tm_pb_field_at(&at, end, &f) != TM_PB_FIELD_END)
		;
	return (size_t)(at - m.p);
}

#define SALVAGE_PUSH(v, n, cap, x)                                                                                  \
	do {                                                                                                        \
		if ((n) == (cap))                                                                                   \
			TM_GROW(v, cap, (n) + 1);                                                                    \
		(v)[(n)++] = (x);                                                                                   \
	} while (0)

static HeapGraph *salvage(hg_salvage *sv, const uint8_t *p, size_t n)
{
	memset(sv, 0, sizeof *sv);
	HeapGraph *g = &sv->g;
	perfetto__protos__heap_graph__init(g);
	const uint8_t *at = p, *end = p + n;
	tm_pb_field f;
	int r;
	while ((r = tm_pb_field_at(&at, end, &f)) != TM_PB_FIELD_END) {
		if (r != TM_PB_FIELD_OK)
			continue;
		if (f.wire == TM_PB_VARINT) { /* the last one counts */
			if (f.id == F_HeapGraph_pid) {
				g->has_pid = 1;
				g->pid = (int32_t)(uint32_t)f.val;
			} else if (f.id == F_HeapGraph_index) {
				g->has_index = 1;
				g->index = f.val;
			} else if (f.id == F_HeapGraph_continued) {
				g->has_continued = 1;
				g->continued = f.val != 0;
			}
			continue;
		}
		if (f.wire != TM_PB_LEN)
			continue;
		size_t k = whole_fields(f.data);
		switch (f.id) {
		case F_HeapGraph_objects: {
			if (sv->bad_objects)
				break;
			HeapGraphObject *o = perfetto__protos__heap_graph_object__unpack(NULL, k, f.data.p);
			if (o)
				SALVAGE_PUSH(g->objects, g->n_objects, sv->cap[0], o);
			else
				sv->bad_objects = 1;
			break;
		}
		case F_HeapGraph_types: {
			HeapGraphType *t = perfetto__protos__heap_graph_type__unpack(NULL, k, f.data.p);
			if (t)
				SALVAGE_PUSH(g->types, g->n_types, sv->cap[1], t);
			else
				sv->bad_types++;
			break;
		}
		case F_HeapGraph_roots: {
			if (sv->bad_roots)
				break;
			HeapGraphRoot *o = perfetto__protos__heap_graph_root__unpack(NULL, k, f.data.p);
			if (o)
				SALVAGE_PUSH(g->roots, g->n_roots, sv->cap[2], o);
			else
				sv->bad_roots = 1;
			break;
		}
		case F_HeapGraph_field_names:
		case F_HeapGraph_location_names: {
			InternedString *is = perfetto__protos__interned_string__unpack(NULL, k, f.data.p);
			if (!is)
				break; /* cannot be: it has no packed field */
			if (f.id == F_HeapGraph_field_names)
				SALVAGE_PUSH(g->field_names, g->n_field_names, sv->cap[3], is);
			else
				SALVAGE_PUSH(g->location_names, g->n_location_names, sv->cap[4], is);
			break;
		}
		default:
			break;
		}
	}
	return g;
}

static void salvage_free(hg_salvage *sv)
{
	HeapGraph *g = &sv->g;
	for (size_t i = 0; i < g->n_objects; i++)
		perfetto__protos__heap_graph_object__free_unpacked(g->objects[i], NULL);
	for (size_t i = 0; i < g->n_types; i++)
		perfetto__protos__heap_graph_type__free_unpacked(g->types[i], NULL);
	for (size_t i = 0; i < g->n_roots; i++)
		perfetto__protos__heap_graph_root__free_unpacked(g->roots[i], NULL);
	for (size_t i = 0; i < g->n_field_names; i++)
		perfetto__protos__interned_string__free_unpacked(g->field_names[i], NULL);
	for (size_t i = 0; i < g->n_location_names; i++)
		perfetto__protos__interned_string__free_unpacked(g->location_names[i], NULL);
	free(g->objects);
	free(g->types);
	free(g->roots);
	free(g->field_names);
	free(g->location_names);
}

/* ---- a packet ---------------------------------------------------------------------- */

void m_heap_graph_packet(tm_model *m, const tm_mrec_head *h, int64_t ts, uint32_t seq, const uint8_t *p,
			 size_t n)
{
	hg_salvage sv;
	HeapGraph *g = perfetto__protos__heap_graph__unpack(NULL, n, p);
	int salvaged = !g;
	if (salvaged)
		g = salvage(&sv, p, n);
	hg_state *st = state(m);
	m_mach *mc = m_machine(m, h->machine_row);
	/* the reference's pid is a uint32 */
	int64_t upid = m_get_or_create_process(m, mc, (int64_t)(uint32_t)g->pid);
	hg_seq *s = seq_get(m, st, seq);
	packet_index(m, s, g->index);
	for (size_t i = 0; i < g->n_objects; i++)
		add_object(m, st, s, upid, ts, g->objects[i]);
	if (salvaged && sv.bad_objects)
		m_stat_idx(m, "heap_graph_malformed_packet", (int)upid, 1);
	for (size_t i = 0; i < g->n_types; i++)
		add_type(m, s, g->types[i]);
	if (salvaged && sv.bad_types)
		m_stat_idx(m, "heap_graph_malformed_packet", (int)upid, sv.bad_types);
	for (size_t i = 0; i < g->n_field_names; i++) {
		int ins;
		m_map_put(&s->fields, g->field_names[i]->iid, &ins);
	}
	for (size_t i = 0; i < g->n_location_names; i++) {
		const Perfetto__Protos__InternedString *ls = g->location_names[i];
		int ins;
		uint64_t *v = m_map_put(&s->locations, ls->iid, &ins);
		if (ins)
			*v = (uint64_t)m_intern(&m->str, ls->has_str ? (const char *)ls->str.data : "",
						 ls->has_str ? ls->str.len : 0) +
			     1;
	}
	for (size_t i = 0; i < g->n_roots; i++)
		same_dump(m, s, upid, ts);
	if (salvaged && sv.bad_roots)
		m_stat_idx(m, "heap_graph_malformed_packet", (int)upid, 1);
	if (!g->continued)
		finalize(m, st, s);
	if (salvaged)
		salvage_free(&sv);
	else
		perfetto__protos__heap_graph__free_unpacked(g, NULL);
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
