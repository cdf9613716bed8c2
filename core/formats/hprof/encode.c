/* core/formats/hprof/encode.c - a heap dump into merged.pftrace: HeapGraph
 * packets (what ART's heap profiler writes, which the reference's
 * heap_graph_* tables show) of process 0, on a sequence of the file, at
 * the dump's time: the objects in parts (continued), each with its type,
 * self size and references (a field, the object, 0 for none the dump
 * holds); then the types (the class rows, with the kind of a reference
 * class), the field names ("TYPE NAME", interned) and the roots, after
 * every object that names them (the reference names a reference by a
 * field it has read). What the reference then shows differently (no
 * superclass, no root distance, process 0 the idle one) is in
 * tracemount(1), "Divergences". */
#include "formats/hprof/hprof_format.h"

#include <stdlib.h>
#include <string.h>

#include "export/export_internal.h"

/* the file's heap graph sequence (export_text.c keeps its other keys apart) */
#define HEAP_SEQ (UINT64_MAX - 3)

/* A count read from a record, at most what the bytes left could hold of
 * elements of `least` bytes: arrays are sized from counts before their
 * elements are read, and a record damaged in its temporary file may claim
 * 2^32 of them. */
static uint32_t at_most(uint32_t n, const char *q, const char *end, size_t least)
{
	size_t fit = (size_t)(end - q) / least;
	return n < fit ? n : (uint32_t)fit;
}

static void emit(exp_text *t, const tm_mobserved *o, Perfetto__Protos__HeapGraph *hg)
{
	hg->has_pid = 1;
	hg->pid = 0;
	exp_text_message(t, o->head->file_id, o->head->machine_row, HEAP_SEQ, o->ts, F_TracePacket_heap_graph,
			 &hg->base);
}

static void objects(exp_text *t, const tm_mobserved *o, const tm_hprof_part_rec *pr, const char *q,
		    const char *end)
{
	Perfetto__Protos__HeapGraph hg = PERFETTO__PROTOS__HEAP_GRAPH__INIT;
	uint32_t n_objs = at_most(pr->n, q, end, sizeof(tm_hprof_obj_rec));
	Perfetto__Protos__HeapGraphObject *objs = tm_xcalloc(n_objs ? n_objs : 1, sizeof *objs);
	Perfetto__Protos__HeapGraphObject **ptrs = tm_xcalloc(n_objs ? n_objs : 1, sizeof *ptrs);
	/* every reference's two ids, in one array for the part */
	size_t n_refs = (size_t)(end - q) / (sizeof(uint32_t) + sizeof(uint64_t)) + 1;
	uint64_t *ids = tm_xcalloc(2 * n_refs, sizeof *ids);
	size_t used = 0;
	uint32_t k = 0;
	for (; k < n_objs; k++) {
		tm_hprof_obj_rec r;
		if (!tm_mrec_get(&q, end, &r, sizeof r) || r.n_refs > n_refs - used)
			break;
		Perfetto__Protos__HeapGraphObject *ob = &objs[k];
		perfetto__protos__heap_graph_object__init(ob);
		ob->identifier_case = PERFETTO__PROTOS__HEAP_GRAPH_OBJECT__IDENTIFIER_ID;
		ob->id = r.id;
		ob->has_type_id = 1;
		ob->type_id = (uint64_t)r.type + 1;
		ob->has_self_size = 1;
		ob->self_size = r.self_size;
		uint64_t *fields = ids + 2 * used, *targets = fields + r.n_refs;
		for (uint32_t j = 0; j < r.n_refs; j++) {
			uint32_t f;
			if (!tm_mrec_get(&q, end, &f, sizeof f) || !tm_mrec_get(&q, end, &targets[j], sizeof targets[j]))
				break;
			fields[j] = (uint64_t)f + 1;
		}
		used += r.n_refs;
		ob->n_reference_field_id = ob->n_reference_object_id = r.n_refs;
		ob->reference_field_id = fields;
		ob->reference_object_id = targets;
		ptrs[k] = ob;
	}
	hg.n_objects = k;
	hg.objects = ptrs;
	hg.has_index = 1;
	hg.index = pr->index;
	hg.has_continued = 1;
	hg.continued = 1;
	emit(t, o, &hg);
	free(ids);
	free(ptrs);
	free(objs);
}

static void end_part(exp_text *t, const tm_mobserved *o, const tm_hprof_part_rec *pr, const char *q,
		     const char *end)
{
	Perfetto__Protos__HeapGraph hg = PERFETTO__PROTOS__HEAP_GRAPH__INIT;
	/* a class: kind, objects, bytes, then its name's length and bytes */
	tm_hprof_class least;
	uint32_t n_types = at_most(pr->n, q, end, sizeof least.kind + sizeof least.objects + sizeof least.bytes + 4);
	Perfetto__Protos__HeapGraphType *types = tm_xcalloc(n_types ? n_types : 1, sizeof *types);
	Perfetto__Protos__HeapGraphType **tp = tm_xcalloc(n_types ? n_types : 1, sizeof *tp);
	char **names = tm_xcalloc(n_types ? n_types : 1, sizeof *names);
	size_t nt = 0;
	for (; nt < n_types; nt++) {
		tm_hprof_class c;
		if (!tm_hprof_get_class(&q, end, &c))
			break;
		Perfetto__Protos__HeapGraphType *ty = &types[nt];
		perfetto__protos__heap_graph_type__init(ty);
		ty->has_id = 1;
		ty->id = nt + 1;
		names[nt] = tm_xstrndup(c.name, c.name_n);
		ty->class_name = names[nt];
		if (c.kind) {
			ty->has_kind = 1;
			ty->kind = (Perfetto__Protos__HeapGraphType__Kind)c.kind;
		}
		tp[nt] = ty;
	}
	uint32_t nf = 0;
	tm_mrec_get(&q, end, &nf, sizeof nf);
	nf = at_most(nf, q, end, 2 * sizeof(uint32_t)); /* two strings' lengths */
	Perfetto__Protos__InternedString *fs = tm_xcalloc(nf ? nf : 1, sizeof *fs);
	Perfetto__Protos__InternedString **fp = tm_xcalloc(nf ? nf : 1, sizeof *fp);
	tm_buf text = {0};
	size_t *at = tm_xcalloc(nf ? nf : 1, sizeof *at), *len = tm_xcalloc(nf ? nf : 1, sizeof *len);
	uint32_t kf = 0;
	for (; kf < nf; kf++) {
		const char *name, *type;
		size_t name_n, type_n;
		if (!tm_mrec_get_str(&q, end, &name, &name_n) || !name ||
		    !tm_mrec_get_str(&q, end, &type, &type_n) || !type)
			break;
		/* the reference splits "TYPE NAME" at the first space */
		at[kf] = text.len;
		tm_buf_put(&text, type, type_n);
		tm_buf_putc(&text, ' ');
		tm_buf_put(&text, name, name_n);
		len[kf] = type_n + 1 + name_n;
	}
	for (uint32_t i = 0; i < kf; i++) {
		perfetto__protos__interned_string__init(&fs[i]);
		fs[i].has_iid = 1;
		fs[i].iid = (uint64_t)i + 1;
		fs[i].has_str = 1;
		fs[i].str.data = (uint8_t *)text.data + at[i];
		fs[i].str.len = len[i];
		fp[i] = &fs[i];
	}
	/* the roots, one message per type */
	enum { N_ROOT_TYPES = 15 };
	uint32_t nr = 0;
	tm_mrec_get(&q, end, &nr, sizeof nr);
	nr = at_most(nr, q, end, 1 + sizeof(uint64_t)); /* a type, an id */
	Perfetto__Protos__HeapGraphRoot roots[N_ROOT_TYPES], *rp[N_ROOT_TYPES];
	uint64_t *ids = tm_xcalloc(nr ? nr : 1, sizeof *ids);
	uint8_t *types_of = tm_xcalloc(nr ? nr : 1, 1);
	uint32_t got = 0;
	for (; got < nr; got++)
		if (!tm_mrec_get(&q, end, &types_of[got], 1) || !tm_mrec_get(&q, end, &ids[got], sizeof ids[got]) ||
		    types_of[got] >= N_ROOT_TYPES)
			break;
	uint64_t *sorted = tm_xcalloc(nr ? nr : 1, sizeof *sorted);
	size_t n_roots = 0, filled = 0;
	for (int ty = 0; ty < N_ROOT_TYPES; ty++) {
		size_t first = filled;
		for (uint32_t i = 0; i < got; i++)
			if (types_of[i] == ty)
				sorted[filled++] = ids[i];
		if (filled == first)
			continue;
		Perfetto__Protos__HeapGraphRoot *r = &roots[n_roots];
		perfetto__protos__heap_graph_root__init(r);
		r->n_object_ids = filled - first;
		r->object_ids = sorted + first;
		if (ty) {
			r->has_root_type = 1;
			r->root_type = (Perfetto__Protos__HeapGraphRoot__Type)ty;
		}
		rp[n_roots++] = r;
	}
	hg.n_types = nt;
	hg.types = tp;
	hg.n_field_names = kf;
	hg.field_names = fp;
	hg.n_roots = n_roots;
	hg.roots = rp;
	hg.has_index = 1;
	hg.index = pr->index;
	emit(t, o, &hg);
	for (size_t i = 0; i < nt; i++)
		free(names[i]);
	free(names);
	free(types);
	free(tp);
	free(fs);
	free(fp);
	free(at);
	free(len);
	tm_buf_free(&text);
	free(ids);
	free(types_of);
	free(sorted);
}

static void observed(exp_text *t, const tm_mobserved *o)
{
	const hprof_observed *ho = o->event;
	tm_hprof_part_rec pr;
	const char *q = ho->body, *end = ho->body + ho->n;
	if (!tm_mrec_get(&q, end, &pr, sizeof pr))
		return;
	if (ho->sub == HPROF_OBJECTS)
		objects(t, o, &pr, q, end);
	else if (ho->sub == HPROF_END)
		end_part(t, o, &pr, q, end);
}

const tm_encoder tm_hprof_encoder = {.observed = observed};
