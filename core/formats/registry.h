/* core/formats/registry.h - the formats tracemount reads, one module each
 * (core/formats/<format>/), and what the layers below call of them: the
 * scan its tokenizer, the model its parser. Adding a format is a folder,
 * its lines here and its tests (README, "Layout"). What Perfetto's
 * TraceReaderRegistry is to its importers/<format>/ folders. */
#ifndef TM_REGISTRY_H
#define TM_REGISTRY_H

#include "detect/detect.h"
#include "export/export.h"
#include "formats/kinds.h"
#include "model/model.h"
#include "scan/scan_internal.h"

typedef struct tm_format {
	/* how the scan reads it: its clock, and its events when read */
	const tm_tokenizer *tokenizer;
	/* the reference's pid_zero_is_idle of the type: a file's context
	 * maps pid 0 and tid 0 to its machine's swapper */
	int pid_zero_is_idle;
	/* its records into the tables (NULL: it makes none) */
	const tm_parser *parser;
	/* what its events become in merged.pftrace when the model observes
	 * them (NULL: its packets are kept as they are, or none) */
	const tm_encoder *encoder;
} tm_format;

/* What tracemount knows of type t: NULL for none (not a trace, or a
 * format without a clock of its own); a tokenizer without `read` for a
 * format whose clock counts but whose events are not read yet
 * (tm_type_unexported says why). */
const tm_format *tm_format_of(tm_type t);

/* The parser of a record kind (TM_MREC_*: each is one format's, a JSON
 * file's embedded systrace lines being systrace records), or NULL. */
const tm_parser *tm_parser_of(unsigned kind);

/* The encoders by record kind and file type (tm_export_new_with). */
extern const tm_encoders tm_encoders_all;

/* The scan with every format's tokenizer. */
tm_scan *tm_scan_run(tm_merge *m, const tm_scan_sink *sink);

/* The exporters with every format's encoder (core/export/export.h). */
tm_export_build *tm_export_new(tm_merge *m, const tm_scan *scan, int per_machine, tm_error *err);
tm_export_build *tm_export_new_deferred(tm_merge *m, int per_machine, tm_error *err);

#endif
