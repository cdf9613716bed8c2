/* core/formats/hprof/hprof_format.h - a Java heap dump (hprof) as a format
 * module: what the registry (core/formats/registry.c) lists of it.
 *
 * The reference (ArtHprofParser) reads the whole file, then, at its end,
 * makes process 0 of the file's machine (GetOrCreateProcess(0)), sets its
 * hprof_* counters, and, when the dump holds a class and an object, its
 * heap graph rows (hprof.h) at the header's time as it stands (the format
 * has no clock: the ms since the epoch, taken as ns). */
#ifndef TM_HPROF_FORMAT_H
#define TM_HPROF_FORMAT_H

#include "export/export.h"
#include "formats/kinds.h"
#include "model/model.h"
#include "scan/scan_internal.h"

/* A heap dump's tokenizer (tokenize.c). */
extern const tm_tokenizer tm_hprof_tokenizer;

/* TM_MREC_HPROF records, each a tm_mrec_head and then, by sub:
 *   HPROF_DUMP: tm_hprof_dump_rec (every dump; a side record);
 *   HPROF_OBJECTS: tm_hprof_part_rec, then n objects, each a
 *     tm_hprof_obj_rec and its n_refs references (a uint32 field, from
 *     0 in the dump's field list, and a uint64 object id, 0 for none);
 *   HPROF_END: tm_hprof_part_rec (n: the classes), then each class
 *     (tm_hprof_get_class reads one), a uint32 count of fields and each
 *     (its name and its type name, as the class's), a uint32 count of
 *     roots and each (a uint8 type, a uint64 object id).
 * OBJECTS and END, at the dump's time on a queue of the file, only when
 * the dump has rows (index from 0, END last). */
enum { HPROF_DUMP, HPROF_OBJECTS, HPROF_END };

typedef struct tm_hprof_dump_rec {
	int64_t stats[14]; /* HPROF_N_STATS (hprof.h) */
} tm_hprof_dump_rec;

typedef struct tm_hprof_part_rec {
	uint64_t ts;
	uint32_t index;      /* the HeapGraph packet's */
	uint32_t n;
} tm_hprof_part_rec;

typedef struct tm_hprof_obj_rec {
	uint64_t id;
	uint64_t self_size;
	uint32_t type;       /* its class, from 0 in the END record's list */
	uint32_t n_refs;
	uint8_t root;        /* HeapGraphRoot.Type + 1, 0 none */
} tm_hprof_obj_rec;

/* A class of an END record: a uint8 kind (HeapGraphType.Kind), two
 * uint64 (its objects and their bytes), its name (a uint32 length and its
 * bytes). 0 when the bytes run short. */
typedef struct tm_hprof_class {
	uint8_t kind;
	uint64_t objects, bytes;
	const char *name;
	size_t name_n;
} tm_hprof_class;

static inline int tm_hprof_get_class(const char **p, const char *end, tm_hprof_class *c)
{
	return tm_mrec_get(p, end, &c->kind, sizeof c->kind) && tm_mrec_get(p, end, &c->objects, sizeof c->objects) &&
	       tm_mrec_get(p, end, &c->bytes, sizeof c->bytes) && tm_mrec_get_str(p, end, &c->name, &c->name_n) &&
	       c->name;
}

/* TM_MREC_HPROF records into the tables (model_hprof.c). */
extern const tm_parser tm_hprof_parser;

/* What the parser hands the encoder (tm_mobserved.event): an OBJECTS or
 * END record's body. */
typedef struct hprof_observed {
	int sub;
	const char *body;
	size_t n;
} hprof_observed;

/* Its rows into merged.pftrace as HeapGraph packets (encode.c). */
extern const tm_encoder tm_hprof_encoder;

#endif
