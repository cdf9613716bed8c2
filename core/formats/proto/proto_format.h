/* core/formats/proto/proto_format.h - Perfetto protobuf as a format module:
 * what the registry (core/formats/registry.c) lists of it. */
#ifndef TM_PROTO_FORMAT_H
#define TM_PROTO_FORMAT_H

#include "model/model.h"
#include "scan/scan_internal.h"

/* A Perfetto protobuf file's tokenizer (scan_proto.c). */
extern const tm_tokenizer tm_proto_tokenizer;

/* Read a proto file (core/formats/proto/scan_proto.c) from its cursor c, or from `log`
 * at `from` where scan_proto_log read its packets ahead. Returns 0, or -1
 * with err set (the exact text; the merge then fails). */
int scan_proto(scan_file *sf, tm_cursor *c, const tm_buf *log, size_t from, tm_error *err);

/* A proto file's packets read ahead (core/util/ahead.h): every packet as
 * tm_proto_reader_next gives it, and the reader's outcome, appended to
 * log; runs on any thread (it reads nothing but c). Returns 0 when the
 * log holds the file, or -1 when it would pass `max` bytes (packets
 * inflated from compressed bundles can be many times the file): the log
 * is then of no use and the file is read in place. */
int scan_proto_log(tm_cursor *c, size_t max, tm_buf *log);


/* TM_MREC_PROTO records into the tables (model_proto.c): reservations
 * (side records) at once, the rest in order. */
extern const tm_parser tm_proto_parser;

#endif
