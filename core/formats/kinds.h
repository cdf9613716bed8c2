/* core/formats/kinds.h - the kinds of the records a format's tokenizer
 * hands the sorter and its parser reads (tm_mrec_head.kind), one per
 * parser. The model knows only how many there can be (TM_MREC_KINDS);
 * the registry (core/formats/registry.c) maps each to its format. */
#ifndef TM_KINDS_H
#define TM_KINDS_H

typedef enum tm_mrec_kind {
	TM_MREC_JSON = 1,     /* a Chrome JSON event: its record (core/formats/json/json_rec.h) */
	TM_MREC_SYSTRACE,     /* a systrace line (a file's, or a JSON file's embedded
			       * text) as parsed: its fields packed, then its five
			       * strings (core/formats/systrace/model_systrace.c) */
	TM_MREC_PROTO,        /* a proto record (core/formats/proto/model_proto.c) */
	TM_MREC_NINJA,        /* a ninja log's job (core/formats/ninja/ninja_format.h) */
	TM_MREC_STRACE,       /* an strace call line (core/formats/strace/strace_format.h) */
	TM_MREC_PERF_TEXT,    /* a perf script sample (core/formats/perf_text/perf_text_format.h) */
	TM_MREC_COLLAPSED,    /* a collapsed stack (core/formats/collapsed/collapsed_format.h) */
	TM_MREC_GECKO,        /* a Gecko profile's sample (core/formats/gecko/gecko_format.h) */
	TM_MREC_PERF,         /* a perf.data record (core/formats/perf/perf_format.h) */
	TM_MREC_HPROF,        /* a heap dump's rows (core/formats/hprof/hprof_format.h) */
	TM_MREC_LAST = TM_MREC_HPROF
} tm_mrec_kind;

#endif
