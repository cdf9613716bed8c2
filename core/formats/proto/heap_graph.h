/* core/formats/proto/heap_graph.h - HeapGraph packets into the tables
 * (core/formats/proto/heap_graph.c). */
#ifndef TM_HEAP_GRAPH_H
#define TM_HEAP_GRAPH_H

#include "model/model.h"

#include <stddef.h>
#include <stdint.h>

/* A HeapGraph (its bytes) of sequence `seq` at `ts`. */
void m_heap_graph_packet(tm_model *m, const tm_mrec_head *h, int64_t ts, uint32_t seq, const uint8_t *p,
			 size_t n);
/* At the end of the input: the dumps still open, then the objects that
 * wait for the name of the trace's first class row. */
void m_heap_graph_finish(tm_model *m);
void m_heap_graph_free(tm_model *m);

#endif
