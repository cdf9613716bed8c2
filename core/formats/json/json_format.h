/* core/formats/json/json_format.h - Chrome JSON as a format module: what
 * the registry (core/formats/registry.c) lists of it. */
#ifndef TM_JSON_FORMAT_H
#define TM_JSON_FORMAT_H

#include "export/export.h"
#include "formats/kinds.h"
#include "model/model.h"
#include "scan/scan_internal.h"

/* A Chrome JSON file's tokenizer (tokenize.c). */
extern const tm_tokenizer tm_json_tokenizer;

/* TM_MREC_JSON records into the tables (model_json.c). */
extern const tm_parser tm_json_parser;

/* A JSON event's fields as the reference's tokenizer reads them: what
 * the parser hands the encoder (tm_mobserved.event). */
typedef struct json_observed {
	char phase;
	int64_t dur;            /* ns, -1 absent */
	const char *name, *cat; /* NULL: null (absent or empty) */
	const char *annot;      /* the args as debug_annotations fields
				 * (core/formats/json/json_rec.h), or NULL */
	size_t annot_n;
	int has_flow_id;        /* s/t/f: the id as a flow id (hex when a string) */
	uint64_t flow_id;
	int bind_enclosing;     /* f: "bp":"e" */
	int has_bind_id;        /* flow v2 */
	uint64_t bind_id;
	int flow_in, flow_out;
} json_observed;

/* Its events into merged.pftrace (encode.c). */
extern const tm_encoder tm_json_encoder;

/* A Chrome JSON event's args as the TrackEvent's debug_annotations
 * fields (each a nested DebugAnnotation; null members left out), appended
 * to b (encode.c). Depends on nothing but the args, so the reader makes it
 * where the file is read (json_rec.h) and the encoder copies the bytes. */
void tm_export_json_args(tm_buf *b, const tj_value *args);

#endif
