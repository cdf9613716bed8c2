/* core/formats/hprof/hprof.h - a Java heap dump (hprof: HotSpot's
 * `jcmd GC.heap_dump`, ART's) read as the reference's art_hprof importer
 * reads it, into the rows it makes of it: its classes, its objects with
 * their sizes, roots and reachability, and their references.
 *
 * The format: "JAVA PROFILE 1.0.x" and a NUL, the id size (4 or 8) and a
 * time in ms (two big-endian uint32), then records of a tag, a time and a
 * length: strings (UTF8), LOAD CLASS (a class object's id and its name),
 * and HEAP DUMP (SEGMENT)s of sub-records: roots, CLASS DUMPs (superclass,
 * instance size, static and instance fields), INSTANCE DUMPs (the field
 * bytes of every class up the chain), object and primitive arrays, and
 * ART's HEAP DUMP INFO naming the heap that follows. */
#ifndef TM_HPROF_H
#define TM_HPROF_H

#include <stddef.h>
#include <stdint.h>

#include "util/tm.h"

/* The counts the reference keeps as stats (their names: hprof_stat_names). */
enum {
	HPROF_STAT_STRINGS,        /* hprof_string_counter */
	HPROF_STAT_CLASSES,        /* hprof_class_counter */
	HPROF_STAT_HEAP_DUMPS,     /* hprof_heap_dump_counter */
	HPROF_STAT_INSTANCES,      /* hprof_instance_counter */
	HPROF_STAT_OBJECT_ARRAYS,  /* hprof_object_array_counter */
	HPROF_STAT_PRIM_ARRAYS,    /* hprof_primitive_array_counter */
	HPROF_STAT_ROOTS,          /* hprof_root_counter */
	HPROF_STAT_REFERENCES,     /* hprof_reference_counter */
	HPROF_STAT_HEADER_ERRORS,  /* hprof_header_errors */
	HPROF_STAT_CLASS_ERRORS,   /* hprof_class_errors */
	HPROF_STAT_OVERSHOOT,      /* hprof_segment_overshoot_counter */
	HPROF_STAT_PRIM_ERRORS,    /* hprof_primitive_array_parsing_errors */
	HPROF_STAT_REF_ERRORS,     /* hprof_reference_errors */
	HPROF_STAT_FIELD_ERRORS,   /* hprof_field_value_errors */
	HPROF_N_STATS
};
extern const char *const hprof_stat_names[HPROF_N_STATS];
/* The first HPROF_N_COUNTERS are set whenever the file is read (zeros
 * too); the others counted only when they happen. */
#define HPROF_N_COUNTERS 8

/* A class row (heap_graph_class): a class, or the class object of one
 * ("java.lang.Class<NAME>"). kind: HeapGraphType.Kind's value (0 the
 * reference's "[unknown class kind]"; 8-11 a reference class). */
typedef struct hprof_class_row {
	uint64_t name_at;         /* in hprof_dump.text */
	uint32_t name_n;
	uint8_t kind;
	uint64_t objects;         /* its objects */
	uint64_t bytes;           /* their self sizes */
} hprof_class_row;

/* An object row (heap_graph_object). root: HeapGraphRoot.Type's value
 * plus one, 0 for none. */
typedef struct hprof_object_row {
	uint64_t id;
	uint32_t type;            /* its class row */
	uint8_t root;
	uint8_t reachable;
	int32_t root_distance;    /* -1: unreachable */
	uint64_t self_size;
	uint32_t refs_at, n_refs; /* in hprof_dump.refs */
} hprof_object_row;

/* A reference (heap_graph_reference): its field (a field row), the
 * object it points at (an object row's id; 0 for none the dump holds). */
typedef struct hprof_ref_row {
	uint32_t field;
	uint64_t target;
} hprof_ref_row;

/* A distinct (field name, field type name) of the references: the name
 * qualified by its class ("java.util.HashMap.table", "[3]" for an array
 * element), the type the class of the object it pointed at, or
 * "unknown". */
typedef struct hprof_field_row {
	uint64_t name_at, type_at;
	uint32_t name_n, type_n;
} hprof_field_row;

typedef struct hprof_dump {
	uint64_t ts;              /* the header's time (ms), as the reference takes it: graph_sample_ts */
	int64_t stats[HPROF_N_STATS];
	/* rows: 0 when the dump has no class or no object (the reference
	 * then makes none) */
	int has_rows;
	hprof_class_row *classes;
	size_t n_classes;
	hprof_object_row *objects;
	size_t n_objects;
	hprof_ref_row *refs;
	size_t n_refs;
	hprof_field_row *fields;
	size_t n_fields;
	uint64_t reachable;       /* objects reachable from a root */
	tm_buf text;              /* the rows' names */
} hprof_dump;

/* Read the whole file p[0, n) into d (zeroed first). Never fails: as the
 * reference, reading stops at the first record it cannot read (a cut
 * file keeps what came before) and what went wrong is in the stats. */
void hprof_read(const uint8_t *p, size_t n, hprof_dump *d);
void hprof_dump_free(hprof_dump *d);

/* The row's text (name or type). */
static inline const char *hprof_text(const hprof_dump *d, uint64_t at) { return d->text.data + at; }

#endif
