/* tests/fuzz/fuzz_heap_graph.c - Perfetto heap dumps (HeapGraph packets,
 * core/formats/proto/heap_graph.c) on arbitrary bytes: the input read as
 * a Trace whose packets' heap_graph fields go to a model as the tokenizer
 * records them (the sequence id, then the bytes), at the packet's time
 * (else the last one), then the end of the input. Checked on the way:
 * every class heap.tsv gets has objects, and no more objects in all than
 * the packets give or name (an object, a reference, a runtime-internal
 * reference, a class loader). The whole merge of such files is
 * fuzz_scan's and fuzz_export's. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "formats/proto/proto_format.h"
#include "formats/registry.h"
#include "wire/proto.h"
#include "model/model.h"
#include "trace.pb-c.h"

/* what the packet can make objects of, at most (one that protobuf-c
 * refuses is read in part: an id takes a byte at least) */
static uint64_t mentions(const tm_span *g)
{
	Perfetto__Protos__HeapGraph *hg = perfetto__protos__heap_graph__unpack(NULL, g->n, g->p);
	if (!hg)
		return g->n;
	uint64_t n = hg->n_objects;
	for (size_t i = 0; i < hg->n_objects; i++)
		n += hg->objects[i]->n_reference_object_id + hg->objects[i]->n_runtime_internal_object_id;
	for (size_t i = 0; i < hg->n_types; i++)
		n += hg->types[i]->classloader_id != 0;
	perfetto__protos__heap_graph__free_unpacked(hg, NULL);
	return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *copy = malloc(size ? size : 1);
	memcpy(copy, data, size);
	const tm_parser *parsers[TM_MREC_KINDS];
	for (unsigned k = 0; k < TM_MREC_KINDS; k++)
		parsers[k] = tm_parser_of(k);
	tm_model_sink sink = {0};
	tm_model *m = tm_model_new(&sink, parsers);
	tm_buf rec = {0};
	int64_t ts = 0;
	uint64_t most = 0;
	tm_pb_iter trace, pit;
	tm_pb_field pf, f;
	tm_pb_iter_init(&trace, (tm_span){copy, size});
	while (tm_pb_next(&trace, &pf) == 1) {
		if (pf.id != F_Trace_packet || pf.wire != TM_PB_LEN)
			continue;
		uint32_t seq = 0;
		tm_pb_iter_init(&pit, pf.data);
		while (tm_pb_next(&pit, &f) == 1) {
			if (f.id == F_TracePacket_trusted_packet_sequence_id && f.wire == TM_PB_VARINT)
				seq = (uint32_t)f.val;
			if (f.id == F_TracePacket_timestamp && f.wire == TM_PB_VARINT && (int64_t)f.val >= ts)
				ts = (int64_t)f.val;
		}
		tm_pb_iter_init(&pit, pf.data);
		while (tm_pb_next(&pit, &f) == 1) {
			if (f.id != F_TracePacket_heap_graph || f.wire != TM_PB_LEN)
				continue;
			most += mentions(&f.data);
			rec.len = 0;
			tm_mrec_head h = {TM_MREC_PROTO, TM_PR_HEAP_GRAPH, 0, 0, 0};
			tm_buf_put(&rec, &h, sizeof h);
			tm_buf_put(&rec, &seq, sizeof seq);
			tm_buf_put(&rec, f.data.p, f.data.n);
			tm_model_apply(m, ts, rec.data, (uint32_t)rec.len);
		}
	}
	tm_model_finish(m);
	uint64_t objects = 0;
	for (size_t i = 0; i < tm_model_n_heap_classes(m); i++) {
		const tm_mheap_class *c = tm_model_heap_class(m, i);
		if (!c->objects)
			abort();
		objects += c->objects;
	}
	if (objects > most)
		abort();
	tm_model_free(m);
	tm_buf_free(&rec);
	free(copy);
	return 0;
}
