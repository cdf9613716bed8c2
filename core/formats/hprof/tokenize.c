/* core/formats/hprof/tokenize.c - a heap dump into the scan: nothing of
 * it is placed (it has no clock); for the model, read whole (hprof.c) and
 * handed over: the dump as a side record (the reference makes its process
 * when it reads the file), then, at the dump's time, its objects in parts
 * of a HeapGraph packet each, its classes, fields and roots last (records
 * the sorter orders: the exporter writes them as the model applies them,
 * which a side record, applied while the scan is still going, is too
 * early for). */
#include "formats/hprof/hprof_format.h"

#include <stdlib.h>
#include <string.h>

#include "formats/hprof/hprof.h"

#define PART_BYTES (1u << 20) /* a part's objects and references, about */

_Static_assert(sizeof(((tm_hprof_dump_rec *)0)->stats) / sizeof(int64_t) == HPROF_N_STATS,
	       "the dump record holds every stat");

static void head(scan_file *sf, tm_buf *b, int sub)
{
	tm_mrec_head h = {TM_MREC_HPROF, (uint8_t)sub, 0, sf->f->id, sf->base_row};
	b->len = 0;
	tm_mrec_head_put(b, &h);
}

/* A part's head; the count of its rows is set later (set_n), at the
 * offset this returns. */
static size_t part_head(scan_file *sf, tm_buf *b, int sub, const hprof_dump *d, uint32_t index)
{
	head(sf, b, sub);
	size_t at = b->len + offsetof(tm_hprof_part_rec, n);
	tm_hprof_part_rec p = {d->ts, index, 0};
	tm_buf_put(b, &p, sizeof p);
	return at;
}

static void set_n(tm_buf *b, size_t at, uint32_t n)
{
	memcpy(b->data + at, &n, sizeof n);
}

static void records(scan_file *sf, const hprof_dump *d)
{
	uint32_t queue = scan_new_queue(sf);
	tm_buf b = {0};
	head(sf, &b, HPROF_DUMP);
	tm_hprof_dump_rec r;
	memcpy(r.stats, d->stats, sizeof r.stats);
	tm_buf_put(&b, &r, sizeof r);
	scan_record_side(sf, b.data, b.len);
	/* a time of 2^63 or more is no trace time: no rows then */
	if (!d->has_rows || d->ts > INT64_MAX) {
		tm_buf_free(&b);
		return;
	}
	uint32_t index = 0, n = 0;
	size_t n_at = part_head(sf, &b, HPROF_OBJECTS, d, index);
	for (size_t i = 0; i < d->n_objects; i++) {
		const hprof_object_row *o = &d->objects[i];
		tm_hprof_obj_rec or = {o->id, o->self_size, o->type, o->n_refs, o->root};
		tm_buf_put(&b, &or, sizeof or);
		for (uint32_t j = 0; j < o->n_refs; j++) {
			const hprof_ref_row *ref = &d->refs[o->refs_at + j];
			tm_buf_put(&b, &ref->field, sizeof ref->field);
			tm_buf_put(&b, &ref->target, sizeof ref->target);
		}
		n++;
		if (b.len >= PART_BYTES || i + 1 == d->n_objects) {
			set_n(&b, n_at, n);
			scan_record(sf, queue, (int64_t)d->ts, 0, -1, b.data, b.len);
			n_at = part_head(sf, &b, HPROF_OBJECTS, d, ++index);
			n = 0;
		}
	}
	n_at = part_head(sf, &b, HPROF_END, d, index);
	set_n(&b, n_at, (uint32_t)d->n_classes);
	for (size_t i = 0; i < d->n_classes; i++) {
		const hprof_class_row *c = &d->classes[i];
		tm_buf_put(&b, &c->kind, sizeof c->kind);
		tm_buf_put(&b, &c->objects, sizeof c->objects);
		tm_buf_put(&b, &c->bytes, sizeof c->bytes);
		tm_mrec_put_str(&b, hprof_text(d, c->name_at), c->name_n);
	}
	uint32_t nf = (uint32_t)d->n_fields, nr = 0;
	tm_buf_put(&b, &nf, sizeof nf);
	for (size_t i = 0; i < d->n_fields; i++) {
		const hprof_field_row *f = &d->fields[i];
		tm_mrec_put_str(&b, hprof_text(d, f->name_at), f->name_n);
		tm_mrec_put_str(&b, hprof_text(d, f->type_at), f->type_n);
	}
	for (size_t i = 0; i < d->n_objects; i++)
		nr += d->objects[i].root != 0;
	tm_buf_put(&b, &nr, sizeof nr);
	for (size_t i = 0; i < d->n_objects; i++) {
		const hprof_object_row *o = &d->objects[i];
		if (!o->root)
			continue;
		uint8_t type = (uint8_t)(o->root - 1);
		tm_buf_put(&b, &type, sizeof type);
		tm_buf_put(&b, &o->id, sizeof o->id);
	}
	scan_record(sf, queue, (int64_t)d->ts, 0, -1, b.data, b.len);
	tm_buf_free(&b);
}

static int read_file(scan_file *sf, tm_clock_tracker *t, tm_cursor *c, tm_buf *log, size_t from, tm_error *err)
{
	(void)t;
	(void)log;
	(void)from;
	if (!scan_wants_records(sf))
		return 0; /* nothing of it is placed: only the model reads it */
	tm_buf doc = {0};
	int rc = scan_read_whole(c, &doc, err);
	if (rc == 0 && doc.len) {
		hprof_dump d;
		hprof_read((const uint8_t *)doc.data, doc.len, &d);
		records(sf, &d);
		hprof_dump_free(&d);
	}
	tm_buf_free(&doc);
	return rc;
}

const tm_tokenizer tm_hprof_tokenizer = {.read = read_file};
