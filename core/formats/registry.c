/* core/formats/registry.c - the table of formats: one line each. */
#include "formats/registry.h"

#include "formats/collapsed/collapsed_format.h"
#include "formats/gecko/gecko_format.h"
#include "formats/hprof/hprof_format.h"
#include "formats/json/json_format.h"
#include "formats/ninja/ninja_format.h"
#include "formats/perf/perf_format.h"
#include "formats/perf_text/perf_text_format.h"
#include "formats/strace/strace_format.h"
#include "formats/proto/proto_format.h"
#include "formats/systrace/systrace_format.h"

/* The formats whose clock the merge counts (clocks.md §6: their files
 * claim it and bridge like the reference's) but whose events are not
 * read yet. */
static const tm_tokenizer this_file = {.clock = TM_CLOCK_THIS_FILE};
static const tm_tokenizer monotonic = {.clock = TM_CLOCK_MONOTONIC};
static const tm_tokenizer boottime = {.clock = TM_CLOCK_BOOTTIME};
static const tm_tokenizer realtime = {.clock = TM_CLOCK_REALTIME};

static const tm_format formats[TM_TYPE_COUNT] = {
	/* read */
	[TM_TYPE_PROTO] = {&tm_proto_tokenizer, 1, &tm_proto_parser, NULL},
	[TM_TYPE_JSON] = {&tm_json_tokenizer, 0, &tm_json_parser, &tm_json_encoder},
	[TM_TYPE_SYSTRACE] = {&tm_systrace_tokenizer, 1, &tm_systrace_parser, &tm_systrace_encoder},
	[TM_TYPE_NINJA_LOG] = {&tm_ninja_tokenizer, 0, &tm_ninja_parser, &tm_ninja_encoder},
	[TM_TYPE_STRACE] = {&tm_strace_tokenizer, 0, &tm_strace_parser, &tm_strace_encoder},
	[TM_TYPE_PERF_TEXT] = {&tm_perf_text_tokenizer, 0, &tm_perf_text_parser, &tm_perf_text_encoder},
	[TM_TYPE_COLLAPSED_STACK] = {&tm_collapsed_tokenizer, 0, &tm_collapsed_parser, NULL},
	[TM_TYPE_GECKO] = {&tm_gecko_tokenizer, 0, &tm_gecko_parser, &tm_gecko_encoder},
	[TM_TYPE_PERF] = {&tm_perf_tokenizer, 0, &tm_perf_parser, &tm_perf_encoder},
	[TM_TYPE_ART_HPROF] = {&tm_hprof_tokenizer, 0, &tm_hprof_parser, &tm_hprof_encoder},
	/* clocks only */
	[TM_TYPE_INSTRUMENTS_XML] = {&this_file, 0, NULL, NULL},
	[TM_TYPE_PRIMES] = {&this_file, 0, NULL, NULL},
	[TM_TYPE_SIMPLEPERF_PROTO] = {&monotonic, 0, NULL, NULL},
	[TM_TYPE_ART_METHOD] = {&monotonic, 0, NULL, NULL},
	[TM_TYPE_ART_METHOD_V2] = {&monotonic, 0, NULL, NULL},
	[TM_TYPE_FUCHSIA] = {&boottime, 0, NULL, NULL},
	[TM_TYPE_ANDROID_LOGCAT] = {&realtime, 0, NULL, NULL},
	[TM_TYPE_ANDROID_DUMPSTATE] = {&realtime, 0, NULL, NULL},
};

const tm_format *tm_format_of(tm_type t)
{
	return (unsigned)t < TM_TYPE_COUNT && formats[t].tokenizer ? &formats[t] : NULL;
}

static const tm_tokenizer *tokenizer_of(tm_type t)
{
	const tm_format *f = tm_format_of(t);
	return f ? f->tokenizer : NULL;
}

/* A record kind is its format's: the kind's parser and encoder are the
 * format's (a JSON file's embedded systrace lines are systrace records). */
_Static_assert(TM_MREC_LAST < TM_MREC_KINDS, "the model holds a parser for every record kind");
static const tm_type kind_format[TM_MREC_KINDS] = {
	[TM_MREC_JSON] = TM_TYPE_JSON,
	[TM_MREC_SYSTRACE] = TM_TYPE_SYSTRACE,
	[TM_MREC_PROTO] = TM_TYPE_PROTO,
	[TM_MREC_NINJA] = TM_TYPE_NINJA_LOG,
	[TM_MREC_STRACE] = TM_TYPE_STRACE,
	[TM_MREC_PERF_TEXT] = TM_TYPE_PERF_TEXT,
	[TM_MREC_COLLAPSED] = TM_TYPE_COLLAPSED_STACK,
	[TM_MREC_GECKO] = TM_TYPE_GECKO,
	[TM_MREC_PERF] = TM_TYPE_PERF,
	[TM_MREC_HPROF] = TM_TYPE_ART_HPROF,
};

static const tm_format *format_of_kind(unsigned kind)
{
	return kind < TM_MREC_KINDS && kind_format[kind] ? tm_format_of(kind_format[kind]) : NULL;
}

const tm_parser *tm_parser_of(unsigned kind)
{
	const tm_format *f = format_of_kind(kind);
	return f ? f->parser : NULL;
}

static const tm_encoder *encoder_of_type(tm_type t)
{
	const tm_format *f = tm_format_of(t);
	return f ? f->encoder : NULL;
}

static const tm_encoder *encoder_of_kind(unsigned kind)
{
	const tm_format *f = format_of_kind(kind);
	return f ? f->encoder : NULL;
}

const tm_encoders tm_encoders_all = {encoder_of_kind, encoder_of_type};

tm_scan *tm_scan_run(tm_merge *m, const tm_scan_sink *sink)
{
	return tm_scan_run_with(m, sink, tokenizer_of);
}

tm_export_build *tm_export_new(tm_merge *m, const tm_scan *scan, int per_machine, tm_error *err)
{
	return tm_export_new_with(m, scan, per_machine, &tm_encoders_all, err);
}

tm_export_build *tm_export_new_deferred(tm_merge *m, int per_machine, tm_error *err)
{
	return tm_export_new_deferred_with(m, per_machine, &tm_encoders_all, err);
}
