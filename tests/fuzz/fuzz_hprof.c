/* tests/fuzz/fuzz_hprof.c - a heap dump's rows (core/formats/hprof/
 * hprof.c) on arbitrary bytes. Checked on the way: every object's class
 * is a class row, its references lie in the reference rows, each names a
 * field row and points at no object (0) or at an object row; the class
 * rows' counts add up to the objects; every name lies in the text; a
 * second read gives the same rows. The whole merge of such files
 * (tokenizer, model, encoder) is fuzz_scan's and fuzz_export's. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "formats/hprof/hprof.h"

static void text_in(const hprof_dump *d, uint32_t at, uint32_t n)
{
	if ((size_t)at + n >= d->text.len + 1 || d->text.data[at + n] != '\0')
		abort();
}

static int by_id(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* the bytes alone, so that ASan sees a read past them */
	uint8_t *p = malloc(size ? size : 1);
	memcpy(p, data, size);
	hprof_dump d, e;
	hprof_read(p, size, &d);
	if (!d.has_rows && (d.n_classes || d.n_objects || d.n_refs))
		abort();
	uint64_t objects = 0;
	for (size_t i = 0; i < d.n_classes; i++) {
		text_in(&d, d.classes[i].name_at, d.classes[i].name_n);
		objects += d.classes[i].objects;
	}
	if (objects != d.n_objects)
		abort();
	for (size_t i = 0; i < d.n_fields; i++) {
		text_in(&d, d.fields[i].name_at, d.fields[i].name_n);
		text_in(&d, d.fields[i].type_at, d.fields[i].type_n);
	}
	uint64_t *ids = malloc((d.n_objects ? d.n_objects : 1) * sizeof *ids);
	size_t refs = 0;
	for (size_t i = 0; i < d.n_objects; i++) {
		const hprof_object_row *o = &d.objects[i];
		ids[i] = o->id;
		if (o->type >= d.n_classes || o->refs_at != refs || (size_t)o->refs_at + o->n_refs > d.n_refs)
			abort();
		if ((o->root_distance >= 0) != (o->reachable != 0) || (o->root && o->root_distance != 0))
			abort();
		refs += o->n_refs;
	}
	if (refs != d.n_refs)
		abort();
	qsort(ids, d.n_objects, sizeof *ids, by_id);
	for (size_t i = 0; i < d.n_refs; i++) {
		const hprof_ref_row *r = &d.refs[i];
		if (r->field >= d.n_fields)
			abort();
		if (r->target && !bsearch(&r->target, ids, d.n_objects, sizeof *ids, by_id))
			abort();
	}
	free(ids);
	hprof_read(p, size, &e);
	if (e.n_objects != d.n_objects || e.n_refs != d.n_refs || e.n_classes != d.n_classes ||
	    memcmp(e.stats, d.stats, sizeof d.stats) != 0 ||
	    e.reachable != d.reachable)
		abort();
	for (size_t i = 0; i < d.n_objects; i++) {
		const hprof_object_row *x = &d.objects[i], *y = &e.objects[i];
		if (x->id != y->id || x->type != y->type || x->root != y->root || x->self_size != y->self_size ||
		    x->root_distance != y->root_distance || x->n_refs != y->n_refs)
			abort();
	}
	for (size_t i = 0; i < d.n_refs; i++)
		if (d.refs[i].field != e.refs[i].field || d.refs[i].target != e.refs[i].target)
			abort();
	hprof_dump_free(&e);
	hprof_dump_free(&d);
	free(p);
	return 0;
}
