/* core/formats/proto/proto_format.h - Perfetto protobuf as a format module:
 * what the registry (core/formats/registry.c) lists of it. */
#ifndef TM_PROTO_FORMAT_H
#define TM_PROTO_FORMAT_H

#include "formats/kinds.h"
#include "model/model.h"
#include "scan/scan_internal.h"

/* TM_MREC_PROTO records (tm_mrec_head.sub). */
enum {
	TM_PR_RESERVE = 1,      /* side record: a TrackDescriptor as tokenized (its bytes) */
	TM_PR_PACKET,           /* a TracePacket the model parses (descriptors, process
				 * trees, legacy thread and process descriptors) */
	TM_PR_TRACK_EVENT,      /* tm_pr_event packed, then the TrackEvent with its
				 * interned annotation names written out and its name
				 * and categories as the model's string ids (name_iid,
				 * category_iids) or, failing that, as text */
	TM_PR_FTRACE,           /* tm_pr_ftrace, then the FtraceEvent bytes */
	TM_PR_COMPACT_SWITCH,   /* tm_pr_switch, then the next comm */
	TM_PR_COMPACT_WAKING,   /* tm_pr_waking, then the comm */
	/* side records: what the reference's tokenizers note as metadata, for
	 * the ftrace parser's drop of events before the trace's start */
	TM_PR_SERVICE,          /* int64 trace time, then TracingServiceEvent bytes */
	TM_PR_FTRACE_STATS,     /* FtraceStats bytes */
	TM_PR_FTRACE_START,     /* int64: a CPU's first bundle's data start, trace time */
	TM_PR_SAMPLE,           /* a stack sample: tm_pr_sample, its source, its frames
				 * (core/formats/proto/samples.h) */
	TM_PR_STAT,             /* side record: uint8 TM_PR_STAT_*, a stat the
				 * tokenizer counts */
	TM_PR_HEAP_GRAPH,       /* uint32 sequence id, then the HeapGraph bytes
				 * (core/formats/proto/heap_graph.h) */
};

/* TM_PR_STAT's stats: StreamingProfilePacket's tokenization logs. */
enum { TM_PR_STAT_STACK_PARSER_ERROR, TM_PR_STAT_STREAMING_TIMESTAMP };

/* A track event's sequence state, as the record holds it: packed by
 * tm_pr_event_pack (varints: 8 to 12 bytes where the struct is 40, and
 * a proto trace is mostly track events of a few dozen bytes each). */
typedef struct tm_pr_event {
	uint32_t seq_id;
	uint32_t generation;    /* the sequence's incremental state: counts its
				 * clears and losses (incremental counters restart) */
	uint8_t has_thread;     /* the sequence's ThreadDescriptor */
	uint8_t has_default_track;
	int64_t pid, tid;
	uint64_t default_track; /* TrackEventDefaults.track_uuid */
} tm_pr_event;

#define TM_PR_EVENT_MAX 48 /* tm_pr_event_pack's bytes, at most */

/* e packed into out: the bytes written. */
size_t tm_pr_event_pack(const tm_pr_event *e, uint8_t out[TM_PR_EVENT_MAX]);
/* The packed state at p (n bytes there) into e: the bytes it took, 0
 * when they are not one. */
size_t tm_pr_event_unpack(const void *p, size_t n, tm_pr_event *e);

typedef struct tm_pr_ftrace {
	uint32_t cpu;
} tm_pr_ftrace;

typedef struct tm_pr_switch {
	uint32_t cpu;
	int32_t next_pid, next_prio;
	int64_t prev_state;
} tm_pr_switch;

typedef struct tm_pr_waking {
	uint32_t cpu;
	int32_t pid, target_cpu, prio;
	uint32_t common_flags;
} tm_pr_waking;

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
