/* tests/unit/test_export_wire.c - the text export's TrackEvents written at
 * the wire level (exp_te_wire) against protobuf-c's packing of the same
 * event built as structs, the way the export built them before. */
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include "export/export_internal.h"
#include "formats/json/json_format.h"
#include "formats/registry.h"
#include "util/json.h"
#include "input/merge.h"
#include "pass/gen.h"
#include "scan/scan.h"
#include "sort/spool.h"
#include "trace.pb-c.h"
#include "trace_fields.h"
#include "tt.h"

typedef Perfetto__Protos__TrackEvent TrackEvent;
typedef Perfetto__Protos__TrackEvent__LegacyEvent LegacyEvent;
typedef Perfetto__Protos__DebugAnnotation DebugAnnotation;

/* Everything the reference struct owns, freed at the end of a case. */
typedef struct owned {
	void *p[4096];
	size_t n;
} owned;

static void *own(owned *o, void *p)
{
	if (o->n < sizeof o->p / sizeof o->p[0])
		o->p[o->n++] = p;
	return p;
}

static void own_free(owned *o)
{
	for (size_t i = 0; i < o->n; i++)
		free(o->p[i]);
	o->n = 0;
}

/* A JSON value as a protobuf-c DebugAnnotation: NULL for null. */
static DebugAnnotation *annot(owned *o, const tj_value *v)
{
	if (v->type == TJ_NULL)
		return NULL;
	DebugAnnotation *d = own(o, malloc(sizeof *d));
	DebugAnnotation init = PERFETTO__PROTOS__DEBUG_ANNOTATION__INIT;
	*d = init;
	switch (v->type) {
	case TJ_BOOL:
		d->value_case = PERFETTO__PROTOS__DEBUG_ANNOTATION__VALUE_BOOL_VALUE;
		d->bool_value = v->b;
		break;
	case TJ_INT:
		d->value_case = PERFETTO__PROTOS__DEBUG_ANNOTATION__VALUE_INT_VALUE;
		d->int_value = v->i;
		break;
	case TJ_DOUBLE:
		d->value_case = PERFETTO__PROTOS__DEBUG_ANNOTATION__VALUE_DOUBLE_VALUE;
		d->double_value = v->d;
		break;
	case TJ_STRING:
		d->value_case = PERFETTO__PROTOS__DEBUG_ANNOTATION__VALUE_STRING_VALUE;
		d->string_value = own(o, strndup(v->s, v->len));
		break;
	case TJ_OBJECT:
	case TJ_ARRAY: {
		DebugAnnotation **e = own(o, calloc(v->len + 1, sizeof *e));
		size_t n = 0;
		for (size_t i = 0; i < v->len; i++) {
			DebugAnnotation *c = annot(o, &v->items[i]);
			if (!c)
				continue;
			if (v->type == TJ_OBJECT) {
				c->name_field_case = PERFETTO__PROTOS__DEBUG_ANNOTATION__NAME_FIELD_NAME;
				c->name = own(o, strndup(tj_keys(v)[i].s, tj_keys(v)[i].len));
			}
			e[n++] = c;
		}
		if (v->type == TJ_OBJECT) {
			d->n_dict_entries = n;
			d->dict_entries = e;
		} else {
			d->n_array_values = n;
			d->array_values = e;
		}
		break;
	}
	default:
		break;
	}
	return d;
}

/* 1 when exp_te_wire gives protobuf-c's bytes for e. */
static int same_as_protobuf_c(const exp_te *e, const tj_value *args, size_t *len)
{
	owned o = {.n = 0};
	TrackEvent te = PERFETTO__PROTOS__TRACK_EVENT__INIT;
	LegacyEvent le = PERFETTO__PROTOS__TRACK_EVENT__LEGACY_EVENT__INIT;
	char *cat = (char *)e->category;
	te.has_track_uuid = 1;
	te.track_uuid = e->track_uuid;
	if (e->type) {
		te.has_type = 1;
		te.type = e->type;
	}
	if (cat) {
		te.n_categories = 1;
		te.categories = &cat;
	}
	if (e->name) {
		te.name_field_case = PERFETTO__PROTOS__TRACK_EVENT__NAME_FIELD_NAME;
		te.name = (char *)e->name;
	}
	if (e->has_counter) {
		te.counter_value_field_case = PERFETTO__PROTOS__TRACK_EVENT__COUNTER_VALUE_FIELD_DOUBLE_COUNTER_VALUE;
		te.double_counter_value = e->counter;
	}
	if (args && args->type == TJ_OBJECT) {
		DebugAnnotation *root = annot(&o, args);
		te.n_debug_annotations = root->n_dict_entries;
		te.debug_annotations = root->dict_entries;
	}
	le.has_phase = e->has_phase;
	le.phase = e->phase;
	le.has_duration_us = e->has_duration_us;
	le.duration_us = e->duration_us;
	if (e->has_unscoped_id) {
		le.id_case = PERFETTO__PROTOS__TRACK_EVENT__LEGACY_EVENT__ID_UNSCOPED_ID;
		le.unscoped_id = e->unscoped_id;
	}
	le.has_bind_id = e->has_bind_id;
	le.bind_id = e->bind_id;
	le.has_bind_to_enclosing = e->bind_to_enclosing;
	le.bind_to_enclosing = e->bind_to_enclosing;
	if (e->flow_direction) {
		le.has_flow_direction = 1;
		le.flow_direction = e->flow_direction;
	}
	if (e->has_phase || e->has_bind_id)
		te.legacy_event = &le;
	size_t n = perfetto__protos__track_event__get_packed_size(&te);
	uint8_t *want = malloc(n + 1);
	perfetto__protos__track_event__pack(&te, want);
	tm_buf got = {0};
	tm_buf_put(&got, "x", 1); /* written after other bytes, as in a packet */
	exp_te_wire(&got, e);
	int same = got.len == n + 1 && memcmp(got.data + 1, want, n) == 0;
	*len = n;
	free(want);
	tm_buf_free(&got);
	own_free(&o);
	return same;
}

static const char *const ARGS[] = {
	NULL,
	"{}",
	"{\"a\":1,\"b\":-5,\"c\":1.5,\"d\":\"x\",\"e\":true,\"f\":false,\"g\":null,\"\":\"\"}",
	"{\"o\":{\"p\":[1,null,{\"q\":\"r\"},[],{}],\"s\":{},\"t\":null},\"n\":[null]}",
	"{\"k\\u0000cut\":\"v\\u0000cut\",\"min\":-9223372036854775808,\"max\":9223372036854775807}",
	"{\"d\":-0.0,\"e\":1e300,\"f\":-2.5e-300,\"g\":123456789012345678901234567890}",
	"[1,2]",
};

static void export_wire_matches_protobuf_c(void)
{
	/* strings whose lengths take one, two and three varint bytes, nested
	 * so each level's length moves its body along */
	tm_buf big = {0};
	tm_buf_puts(&big, "{\"deep\":{\"s\":\"");
	for (int i = 0; i < 200; i++)
		tm_buf_puts(&big, "x");
	tm_buf_puts(&big, "\",\"a\":[{\"t\":\"");
	for (int i = 0; i < 20000; i++)
		tm_buf_puts(&big, "y");
	tm_buf_puts(&big, "\"}]}}");
	size_t n_args = sizeof ARGS / sizeof ARGS[0];
	int cases = 0, biggest = 0;
	for (size_t a = 0; a <= n_args; a++) {
		tj_value *args = NULL;
		tm_error err;
		const char *text = a < n_args ? ARGS[a] : big.data;
		if (text)
			CHECK(tj_parse(text, strlen(text), &args, &err) == 0);
		for (int shape = 0; shape < 8; shape++) {
			/* the args as the reader makes them (core/formats/json/json_rec.h) */
			tm_buf annot = {0};
			tm_export_json_args(&annot, args);
			exp_te e = {.track_uuid = shape ? UINT64_C(0xfedcba9876543210) >> shape : 0,
				    .annot = annot.data,
				    .annot_n = annot.len};
			e.type = shape % 4;
			e.category = shape & 1 ? "cat" : shape & 2 ? "" : NULL;
			e.name = shape & 4 ? "name" : NULL;
			if (shape == 3) {
				e.has_counter = 1;
				e.counter = -1.25;
			}
			if (shape >= 4) {
				e.has_phase = 1;
				e.phase = shape == 4 ? 'X' : shape == 5 ? 'f' : -2;
				e.has_duration_us = shape == 4;
				e.duration_us = shape == 4 ? -3 : 0;
				e.has_unscoped_id = shape >= 5;
				e.unscoped_id = UINT64_MAX - (uint64_t)shape;
				e.bind_to_enclosing = shape == 5;
			}
			if (shape == 6 || shape == 2) {
				e.has_bind_id = 1;
				e.bind_id = 1u << 20;
				e.flow_direction = shape == 6 ? 3 : 1;
			}
			size_t len;
			int same = same_as_protobuf_c(&e, args, &len);
			tm_buf_free(&annot);
			if (!same) {
				tj_free(args);
				tm_buf_free(&big);
				TT_FAIL_("args %zu shape %d: bytes differ from protobuf-c's", a, shape);
			}
			cases++;
			if (len > (size_t)biggest)
				biggest = (int)len;
		}
		tj_free(args);
	}
	tm_buf_free(&big);
	CHECK_INT(cases, 8 * (int)(n_args + 1));
	CHECK(biggest > 20000); /* a length of three varint bytes was written */
}

/* An exporter made for a pass whose scan then fails is aborted before its
 * outputs were opened: it must close none of the process's descriptors
 * (its header spool's descriptor once started out as 0, and the abort
 * closed standard input). */
static void export_abort_closes_nothing(void)
{
	char path[] = "/tmp/tm_export_abort_XXXXXX";
	CHECK_INT(tt_temp_file(path, TT_ONE_EVENT_JSON), 0);
	tm_error err = {0};
	tm_merge *m = tm_merge_open(path, &err);
	unlink(path);
	CHECK(m != NULL);
	/* fd 0 is a pipe of ours for the duration */
	int saved = dup(0), p[2];
	CHECK(saved >= 0 && pipe(p) == 0);
	CHECK(dup2(p[0], 0) == 0);
	tm_export_build *x = tm_export_new_deferred(m, 1, &err);
	CHECK(x != NULL);
	tm_export_abort(x);
	int still_open = fcntl(0, F_GETFD) != -1;
	dup2(saved, 0);
	close(saved);
	close(p[0]);
	close(p[1]);
	tm_merge_free(m);
	CHECK(still_open);
}

/* A proto trace of one track and n instant events on it, 1 us apart
 * (written with export_internal.h's writers), in a file from the
 * template `path`. */
static void put_msg_free(tm_buf *b, uint32_t id, tm_buf *m)
{
	put_bytes(b, id, m->data, m->len);
	m->len = 0;
}

static void instants_file(char *path, int n)
{
	tm_buf t = {0}, p = {0}, d = {0};
	put_uint(&d, F_TrackDescriptor_uuid, 1);
	put_bytes(&d, F_TrackDescriptor_name, "t", 1);
	put_msg_free(&p, F_TracePacket_track_descriptor, &d);
	put_uint(&p, F_TracePacket_trusted_packet_sequence_id, 1);
	put_msg_free(&t, F_Trace_packet, &p);
	tm_buf e = {0};
	for (int i = 0; i < n; i++) {
		put_uint(&e, F_TrackEvent_type, 3); /* TYPE_INSTANT */
		put_uint(&e, F_TrackEvent_track_uuid, 1);
		put_bytes(&e, F_TrackEvent_name, "instant", 7);
		put_uint(&p, F_TracePacket_timestamp, 1000000 + 1000 * (uint64_t)i);
		put_uint(&p, F_TracePacket_trusted_packet_sequence_id, 1);
		put_msg_free(&p, F_TracePacket_track_event, &e);
		put_msg_free(&t, F_Trace_packet, &p);
	}
	CHECK_INT(tt_temp_bytes(path, t.data, t.len), 0);
	tm_buf_free(&t);
	tm_buf_free(&p);
	tm_buf_free(&d);
	tm_buf_free(&e);
}

static void took_scan(void *ctx, tm_scan *s)
{
	*(tm_scan **)ctx = s;
}

/* Without a manifest the kept packets wait in a temporary file for the
 * scan's machine ids, and go back into the output past the header, their
 * space given back as they are copied (slab by slab, TM_GIVEBACK_SLAB):
 * merged.pftrace is the one a pass after the scan makes at once. */
static void deferred_packets_given_back(void)
{
	char path[] = "/tmp/tm_export_deferred_XXXXXX";
	instants_file(path, 200000);
	tm_error err = {0};
	tm_merge *m = tm_merge_open(path, &err);
	CHECK(m != NULL);
	tm_scan *s = NULL;
	tm_gen_scanned sc = {&s, took_scan, NULL};
	tm_gen *deferred = m ? tm_gen_build_scanning(m, TM_GEN_PFTRACE, 0, -1, &sc, NULL, &err) : NULL;
	CHECK(deferred != NULL && s != NULL && !s->failed);
	tm_gen *at_once = deferred ? tm_gen_build(m, s, TM_GEN_PFTRACE, 0, -1, NULL, &err) : NULL;
	CHECK(at_once != NULL);
	if (deferred && at_once) {
		uint64_t size = tm_spooled_size(at_once->pftrace, TM_SPOOLED_ALL);
		CHECK(size > 64 * TM_GIVEBACK_SLAB); /* a batch of slabs, and more */
		CHECK_INT(tm_spooled_size(deferred->pftrace, TM_SPOOLED_ALL), size);
		static char x[1 << 16], y[1 << 16];
		int same = 1;
		for (uint64_t off = 0; same && off < size;) {
			ssize_t r = tm_spooled_pread(at_once->pftrace, TM_SPOOLED_ALL, x, sizeof x, off);
			same = r > 0 && tm_spooled_pread(deferred->pftrace, TM_SPOOLED_ALL, y, sizeof y, off) == r &&
			       memcmp(x, y, (size_t)r) == 0;
			off += r > 0 ? (uint64_t)r : 0;
		}
		CHECK(same);
	}
	tm_gen_free(at_once);
	tm_gen_free(deferred);
	tm_scan_free(s);
	tm_merge_free(m);
	unlink(path);
}

int main(void)
{
	TT_RUN(export_wire_matches_protobuf_c);
	TT_RUN(export_abort_closes_nothing);
	TT_RUN(deferred_packets_given_back);
	TT_DONE();
}
