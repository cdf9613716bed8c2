/* core/wire/proto.h - Perfetto protobuf traces at the wire level
 * (spec/formats.md §5): a streaming TracePacket reader, a zero-copy field
 * iterator, and decoders for the small messages the merge reads.
 *
 * Nothing here allocates per packet. Everything a decoder returns points
 * into the bytes it was given (tm_span: pointer + length, never
 * NUL-terminated); those bytes belong to the caller, or to the reader until
 * its next call. Decoders whose result has repeated parts (snapshots,
 * track events, interned data, process trees, ftrace bundles) fill a
 * caller-owned struct that keeps its arrays between calls: zero it once,
 * decode many times, then call its _free function.
 *
 * Malformed data follows the reference's decoder (protozero): a TracePacket
 * that does not parse to its end is a fatal error
 * "Failed to parse proto packet fully; ...", while a nested message simply
 * ends at the first malformed field (the fields before it are kept, and
 * the decoder returns 0 instead of 1 so a caller may count it). A field
 * whose wire type does not match its declaration is ignored. Decoders
 * never read outside the span they are given.
 */
#ifndef TM_PROTO_H
#define TM_PROTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "container/archive.h"
#include "util/pb.h"
#include "util/tm.h"
#include "trace_fields.h" /* F_<Message>_<field>: build/gen, from protos/trace.proto */

/* ---- wire level -------------------------------------------------------- */

/* Bytes inside someone else's buffer. p == NULL: the field was absent; a
 * present but empty field has p != NULL and n == 0. */
typedef struct tm_span {
	const uint8_t *p;
	size_t n;
} tm_span;

#define TM_SPAN_HAS(s) ((s).p != NULL)

typedef struct tm_pb_field {
	uint32_t id;    /* id and wire first, side by side: tm_pb_field_at */
	uint32_t wire;  /* TM_PB_* */
	uint64_t val;   /* VARINT value; I64 / I32 bits (little endian) */
	tm_span data;   /* LEN payload */
} tm_pb_field;
_Static_assert(offsetof(tm_pb_field, id) == 0 && offsetof(tm_pb_field, wire) == 4, "tm_pb_field_at stores both at once");

typedef struct tm_pb_iter {
	const uint8_t *p, *end;
	bool malformed; /* set when tm_pb_next stopped before the end */
} tm_pb_iter;

/* Start iterating the fields of one message. */
void tm_pb_iter_init(tm_pb_iter *it, tm_span msg);

/* The next field: 1 and *f filled, 0 at the end, -1 at malformed bytes
 * (a truncated or over-long varint, field id 0, wire type 3, 4, 6 or 7, a
 * value running past the end); after -1 every call returns -1. Fields
 * above TM_PB_MAX_FIELD_ID or longer than TM_PB_MAX_LEN are skipped. */
int tm_pb_next(tm_pb_iter *it, tm_pb_field *f);

/* One varint at p: at most 10 bytes, the 10th contributing its low bit only
 * (as protozero). Returns the byte after it, or NULL if it is truncated or
 * longer than 10 bytes. Inline: this is the innermost loop of every scan
 * (proto.c's field iterator and scan_proto.c's TrackEvent/FtraceEvent
 * readers). */
static inline const uint8_t *tm_pb_varint_at(const uint8_t *p, const uint8_t *end, uint64_t *out)
{
	if (p < end && *p < 0x80) {
		*out = *p;
		return p + 1;
	}
	if (end - p >= 2 && p[1] < 0x80) { /* two bytes: most timestamps and ids */
		*out = (uint64_t)(p[0] & 0x7f) | (uint64_t)p[1] << 7;
		return p + 2;
	}
	uint64_t v = 0;
	for (unsigned shift = 0; p < end && shift < 64; shift += 7) {
		uint8_t b = *p++;
		v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*out = v;
			return p;
		}
	}
	return NULL;
}

static inline uint64_t tm_pb_load_le(const uint8_t *p, unsigned n)
{
	uint64_t v = 0;
	for (unsigned i = 0; i < n; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

enum { TM_PB_FIELD_OK, TM_PB_FIELD_SKIP, TM_PB_FIELD_END };

/* One field at *pp (protozero's ParseOneField): TM_PB_FIELD_OK with *f
 * filled, TM_PB_FIELD_SKIP for a well-formed field the reference ignores
 * (id or size too big), TM_PB_FIELD_END at the end or at malformed bytes
 * (*pp unchanged). Inline, as the varint: tm_pb_next and the scan's own
 * TrackEvent/FtraceEvent readers (scan_proto.c) step through it. */
static inline __attribute__((always_inline)) int tm_pb_field_at(const uint8_t **pp, const uint8_t *end, tm_pb_field *f)
{
	const uint8_t *p = *pp;
	uint64_t tag;
	if (p >= end || !(p = tm_pb_varint_at(p, end, &tag)))
		return TM_PB_FIELD_END;
	uint32_t id = (uint32_t)(tag >> 3);
	if (id < TM_PB_MIN_FIELD_ID || p >= end)
		return TM_PB_FIELD_END;
	uint32_t wire = (uint32_t)(tag & 7);
	uint64_t val = 0, len = 0;
	switch (wire) {
	case TM_PB_VARINT:
		if (!(p = tm_pb_varint_at(p, end, &val)))
			return TM_PB_FIELD_END;
		break;
	case TM_PB_LEN:
		if (!(p = tm_pb_varint_at(p, end, &len)) || len > (uint64_t)(end - p))
			return TM_PB_FIELD_END;
		f->data.p = p;
		f->data.n = (size_t)len;
		p += len;
		break;
	case TM_PB_I64:
		if (end - p < 8)
			return TM_PB_FIELD_END;
		val = tm_pb_load_le(p, 8);
		p += 8;
		break;
	case TM_PB_I32:
		if (end - p < 4)
			return TM_PB_FIELD_END;
		val = tm_pb_load_le(p, 4);
		p += 4;
		break;
	default: /* groups (3, 4) and 6, 7 */
		return TM_PB_FIELD_END;
	}
	*pp = p;
	if (id > TM_PB_MAX_FIELD_ID || len > TM_PB_MAX_LEN)
		return TM_PB_FIELD_SKIP;
	/* id and wire in one 8-byte store: gcc reads `f->id == X && f->wire
	 * == Y` as one 8-byte load, which the CPU cannot forward from two
	 * 4-byte stores; that stall was half of the proto timeline's
	 * TrackEvent reader (resolve_track_event) */
	const uint32_t id_wire[2] = {id, wire};
	memcpy(f, id_wire, sizeof id_wire);
	f->val = val;
	return TM_PB_FIELD_OK;
}

/* One varint of at most 10 bytes at *p (< end): 1 and *p advanced, or 0
 * (truncated / over-long; *p unchanged). */
int tm_pb_varint(const uint8_t **p, const uint8_t *end, uint64_t *v);

/* The values of one occurrence of a repeated varint field, packed (a
 * length-delimited run, read until a varint does not end: then
 * `malformed` is set, protozero's parse error) or not (one value):
 * tm_pb_values_init with the field, then tm_pb_values_next for 1 and *v
 * while there is a value. Other wire types have none. */
typedef struct tm_pb_values {
	const uint8_t *p, *end;
	uint64_t one;
	bool has_one;
	bool malformed;
} tm_pb_values;
void tm_pb_values_init(tm_pb_values *it, const tm_pb_field *f);
int tm_pb_values_next(tm_pb_values *it, uint64_t *v);

/* Every value of repeated varint field `id` of msg, every occurrence,
 * packed or not, into *v (grown as needed; *cap its room): how many. */
size_t tm_pb_varints(tm_span msg, uint32_t id, uint64_t **v, size_t *cap);

/* Every occurrence of length-delimited field `id` of `msg`, in order: the
 * first `max` go to out[]; returns how many there are (a repeated string
 * such as ProcessDescriptor.cmdline). */
size_t tm_pb_repeated_spans(tm_span msg, uint32_t id, tm_span *out, size_t max);

/* ---- one TracePacket ---------------------------------------------------- */

/* The length-delimited TracePacket fields the merge reads (formats.md
 * §5.2), in one array so that the extraction is a table lookup (core/wire/proto.c
 * maps each F_TracePacket_* number to its slot); the named members alias
 * it. */
enum {
	TM_PKT_FTRACE_EVENTS,
	TM_PKT_PROCESS_TREE,
	TM_PKT_CHROME_EVENTS,
	TM_PKT_CLOCK_SNAPSHOT,
	TM_PKT_TRACK_EVENT,
	TM_PKT_INTERNED_DATA,
	TM_PKT_TRACE_CONFIG,
	TM_PKT_TRACE_STATS,
	TM_PKT_SYNCHRONIZATION_MARKER,
	TM_PKT_PROCESS_DESCRIPTOR,
	TM_PKT_THREAD_DESCRIPTOR,
	TM_PKT_SYSTEM_INFO,
	TM_PKT_COMPRESSED_PACKETS,
	TM_PKT_CHROME_METADATA,
	TM_PKT_TRACE_PACKET_DEFAULTS,
	TM_PKT_TRACK_DESCRIPTOR,
	TM_PKT_SERVICE_EVENT,
	TM_PKT_REMOTE_CLOCK_SYNC,
	TM_PKT_TRACE_ATTRIBUTES,
	TM_PKT_ZSTD_COMPRESSED_PACKETS,
	TM_PKT_NSPANS
};

/* A packet's merge-relevant fields. Scalars of a field given twice: the
 * last wins (as in the reference). Spans point into `raw`. */
typedef struct tm_packet {
	tm_span raw;              /* the whole TracePacket */
	uint64_t offset;          /* stream offset of raw (of the enclosing
	                             compressed packet for expanded ones) */
	bool from_compressed;     /* expanded from compressed_packets */

	bool has_timestamp;
	bool has_timestamp_clock_id;
	bool has_trusted_packet_sequence_id;
	bool has_machine_id;
	bool has_trusted_uid;
	bool has_trusted_pid;
	bool incremental_state_cleared;
	bool first_packet_on_sequence;
	bool synchronization_marker;     /* the field is present */
	uint64_t timestamp;
	uint32_t timestamp_clock_id;
	uint32_t trusted_packet_sequence_id;
	uint32_t machine_id;
	uint32_t sequence_flags;         /* TM_SEQ_* */
	uint32_t previous_packet_dropped;/* reason bits */
	int32_t trusted_uid;
	int32_t trusted_pid;
	uint32_t span_mask;              /* bit TM_PKT_x set: span[TM_PKT_x] present */

	union {
		tm_span span[TM_PKT_NSPANS];
		struct { /* same order as the TM_PKT_* enum */
			tm_span ftrace_events, process_tree, chrome_events, clock_snapshot,
				track_event, interned_data, trace_config, trace_stats,
				synchronization_marker_bytes, process_descriptor,
				thread_descriptor, system_info, compressed_packets,
				chrome_metadata, trace_packet_defaults, track_descriptor,
				service_event, remote_clock_sync, trace_attributes,
				zstd_compressed_packets;
		};
	};
} tm_packet;

enum {
	TM_SEQ_INCREMENTAL_STATE_CLEARED = 1,
	TM_SEQ_NEEDS_INCREMENTAL_STATE = 2,
};

/* One pass over a TracePacket's top-level fields into *pkt (all of it is
 * overwritten). Returns 0, or -1 with
 * TM_EINPUT "Failed to parse proto packet fully; the trace is probably
 * corrupt. (ERR:tp-corrupt)" when the bytes do not parse to their end (the
 * fields before the damage are still filled in). pkt->offset and
 * pkt->from_compressed are left 0. */
int tm_packet_extract(tm_span raw, tm_packet *pkt, tm_error *err);

/* A packet carried to another thread in a batch (core/util/relay.h): its
 * fields and a copy of its bytes, appended to b at an 8-aligned offset;
 * tm_packet_get reads the one at *at back into *pkt (spans pointing into
 * the batch, valid as long as it is) and moves *at past it. *pkt must be
 * a packet tm_packet_get filled before, or zeroed. */
void tm_packet_put(tm_buf *b, const tm_packet *pkt);
void tm_packet_get(const char **at, tm_packet *pkt);

/* ---- the streaming reader ----------------------------------------------- */

/* Packets (and a compressed_packets bundle once inflated) above this size
 * are refused with TM_EUNSUP rather than held in memory. */
#define TM_PROTO_MAX_PACKET ((size_t)256 << 20)

typedef struct tm_proto_reader tm_proto_reader;

/* A reader over the bytes of `c` (not owned; it must outlive the reader
 * and nobody else may read it meanwhile). Never fails. */
tm_proto_reader *tm_proto_reader_new(tm_cursor *c);
void tm_proto_reader_free(tm_proto_reader *r);

/* The next TracePacket, in file order, with compressed_packets and
 * zstd_compressed_packets expanded in place (formats.md §5.1). Returns 1
 * and points *pkt at the reader's packet (it and its spans stay valid
 * until the next call; reusing one struct is what keeps this path free of
 * per-packet clearing), 0 at the end, or -1 with err set. Top-level
 * fields other than Trace.packet are skipped and empty packets dropped, as
 * in the reference; an input that ends inside a field ends the trace
 * without an error (the reference's behaviour; see
 * tm_proto_reader_trailing). Packets expanded from a bundle are not
 * expanded again, and an empty one is kept (the reference's re-framing
 * loop). Errors, TM_EINPUT with the reference's texts unless noted:
 *   "Failed to parse tag @ 0x{off} (ERR:tp-corrupt)", "Failed to skip
 *   varint @ ...", "Failed to skip delimited @ ...", "Oversized
 *   length-delimited field @ ...", "Unknown field type @ 0x{off}; the trace
 *   is corrupt or was produced by a newer version of Perfetto
 *   (ERR:tp-corrupt)", "Failed to parse TracePacket size (ERR:tp-corrupt)";
 *   "Failed to parse proto packet fully; the trace is probably corrupt.
 *   (ERR:tp-corrupt)";
 *   inside a compressed bundle: "Expected TracePacket tag (ERR:tp-corrupt)",
 *   "Invalid packet size (ERR:tp-corrupt)", "Failed to decompress
 *   compressed_packets (ERR:tp-corrupt)", "A trace must not mix
 *   compressed_packets and zstd_compressed_packets (ERR:tp-corrupt)";
 *   TM_EUNSUP: a packet or inflated bundle above the size limit; a
 *   compressed bundle inside a compressed bundle (the reference aborts);
 *   the cursor's own errors. After -1 the reader keeps returning -1. */
int tm_proto_reader_next(tm_proto_reader *r, const tm_packet **pkt, tm_error *err);

/* After the end: how many bytes at the end of the input did not form a
 * whole top-level field (a truncated last packet), which the reference
 * ignores silently. */
uint64_t tm_proto_reader_trailing(const tm_proto_reader *r);

/* Tests: read the cursor at most `n` bytes at a time (>= 1), and refuse
 * packets above `max` bytes instead of TM_PROTO_MAX_PACKET. */
void tm_proto_reader_set_chunk(tm_proto_reader *r, size_t n);
void tm_proto_reader_set_max_packet(tm_proto_reader *r, size_t max);

/* ---- clocks (formats.md §5.3) -------------------------------------------- */

typedef struct tm_snap_clock {
	uint32_t clock_id;
	uint64_t timestamp;
	bool is_incremental;
	uint64_t unit_multiplier_ns; /* already 1 when the field is absent or 0 */
} tm_snap_clock;

typedef struct tm_clock_snapshot {
	tm_snap_clock *clocks;   /* in message order */
	size_t n, cap;
	uint32_t primary_trace_clock; /* 0 when absent */
} tm_clock_snapshot;

/* Decode a ClockSnapshot (reusing s's array). Returns 1, or 0 if it
 * stopped at malformed bytes. */
int tm_clock_snapshot_decode(tm_span msg, tm_clock_snapshot *s);
void tm_clock_snapshot_free(tm_clock_snapshot *s);

/* RemoteClockSync: each round's client and host clocks are slices of one
 * flat array (machines.md §8 processes them in order). */
typedef struct tm_sync_round {
	size_t client_off, client_n;
	size_t host_off, host_n;
} tm_sync_round;

typedef struct tm_remote_clock_sync {
	tm_sync_round *rounds;
	size_t n_rounds, cap_rounds;
	tm_snap_clock *clocks;
	size_t n_clocks, cap_clocks;
} tm_remote_clock_sync;

int tm_remote_clock_sync_decode(tm_span msg, tm_remote_clock_sync *s);
void tm_remote_clock_sync_free(tm_remote_clock_sync *s);

/* ---- machines, config ---------------------------------------------------- */

typedef struct tm_system_info {
	bool has_utsname;
	tm_span sysname, version, release, machine;  /* utsname */
	tm_span android_build_fingerprint, tracing_service_version;
	tm_span machine_name;                         /* machines.md §7 */
	bool has_num_cpus, has_page_size, has_hz, has_android_sdk_version;
	bool has_timezone_off_mins, has_system_ram_bytes;
	uint32_t num_cpus, page_size;
	int64_t hz;
	uint64_t android_sdk_version, system_ram_bytes;
	int32_t timezone_off_mins;
} tm_system_info;

int tm_system_info_decode(tm_span msg, tm_system_info *si);

typedef struct tm_packet_defaults {
	bool has_timestamp_clock_id;
	uint32_t timestamp_clock_id;
	bool has_track_event_defaults;
	bool has_track_uuid;
	uint64_t track_uuid;                /* track_event_defaults.track_uuid */
} tm_packet_defaults;

int tm_packet_defaults_decode(tm_span msg, tm_packet_defaults *d);

typedef struct tm_trace_config {
	bool has_primary_trace_clock;
	uint32_t primary_trace_clock;       /* builtin_data_sources.primary_trace_clock */
	tm_span trace_attributes;
	tm_span unique_session_name;
	uint32_t duration_ms;
} tm_trace_config;

int tm_trace_config_decode(tm_span msg, tm_trace_config *c);

/* TraceAttributes (TracePacket.trace_attributes,
 * TraceConfig.trace_attributes). */
typedef struct tm_trace_attribute {
	tm_span key;
	int kind;           /* 0 no value, 1 long_value, 2 string_value (the last given) */
	int64_t long_value;
	tm_span string_value;
} tm_trace_attribute;

typedef struct tm_trace_attributes {
	tm_trace_attribute *v;
	size_t n, cap;
} tm_trace_attributes;

int tm_trace_attributes_decode(tm_span msg, tm_trace_attributes *a);
void tm_trace_attributes_free(tm_trace_attributes *a);

/* ---- processes and threads (formats.md §5.7) ------------------------------ */

typedef struct tm_pt_process {
	bool has_pid, has_ppid, has_uid;
	int32_t pid, ppid, uid;
	size_t cmdline_off, cmdline_n;  /* slice of tm_process_tree.cmdline */
	bool cmdline_is_comm, is_kthread;
} tm_pt_process;

typedef struct tm_pt_thread {
	bool has_tid, has_tgid;
	int32_t tid, tgid;
	tm_span name;
} tm_pt_thread;

typedef struct tm_process_tree {
	tm_pt_process *processes;
	size_t n_processes, cap_processes;
	tm_pt_thread *threads;
	size_t n_threads, cap_threads;
	tm_span *cmdline;
	size_t n_cmdline, cap_cmdline;
	bool has_collection_end_timestamp;
	uint64_t collection_end_timestamp;
} tm_process_tree;

int tm_process_tree_decode(tm_span msg, tm_process_tree *t);
void tm_process_tree_free(tm_process_tree *t);

typedef struct tm_process_descriptor {
	tm_span raw;              /* for tm_pb_repeated_spans(raw,
	                             F_ProcessDescriptor_cmdline, ...) */
	bool has_pid;
	int32_t pid;
	tm_span cmdline0;         /* the first cmdline entry */
	size_t n_cmdline;
	tm_span process_name;
	int32_t process_priority, chrome_process_type, legacy_sort_index;
	bool has_start_timestamp_ns;
	int64_t start_timestamp_ns;
} tm_process_descriptor;

int tm_process_descriptor_decode(tm_span msg, tm_process_descriptor *d);

typedef struct tm_thread_descriptor {
	bool has_pid, has_tid;
	int32_t pid;
	int64_t tid;
	tm_span thread_name;
	int32_t chrome_thread_type, legacy_sort_index;
	bool has_reference_timestamp_us, has_reference_thread_time_us;
	bool has_reference_thread_instruction_count;
	int64_t reference_timestamp_us;   /* µs, MONOTONIC (clocks.md §6.1) */
	int64_t reference_thread_time_us;
	int64_t reference_thread_instruction_count;
} tm_thread_descriptor;

int tm_thread_descriptor_decode(tm_span msg, tm_thread_descriptor *d);

/* ---- track events (formats.md §5.5, §5.6) --------------------------------- */

typedef struct tm_counter_descriptor {
	int32_t type, unit;
	tm_span unit_name;
	bool has_unit_multiplier;
	int64_t unit_multiplier;
	bool is_incremental;
} tm_counter_descriptor;

typedef struct tm_track_descriptor {
	bool has_uuid, has_parent_uuid;
	uint64_t uuid, parent_uuid;
	tm_span name, static_name, atrace_name, description;
	bool has_process, has_thread, has_counter;
	tm_process_descriptor process;
	tm_thread_descriptor thread;
	tm_counter_descriptor counter;
} tm_track_descriptor;

int tm_track_descriptor_decode(tm_span msg, tm_track_descriptor *d);

enum {
	TM_TE_TYPE_UNSPECIFIED = 0,
	TM_TE_SLICE_BEGIN = 1,
	TM_TE_SLICE_END = 2,
	TM_TE_INSTANT = 3,
	TM_TE_COUNTER = 4,
	TM_TE_STATE = 5,
};

typedef enum tm_da_kind {
	TM_DA_NONE,        /* no value field */
	TM_DA_BOOL,        /* v.u is 0 or 1 */
	TM_DA_UINT,        /* v.u */
	TM_DA_INT,         /* v.i */
	TM_DA_DOUBLE,      /* v.d */
	TM_DA_STRING,      /* str */
	TM_DA_POINTER,     /* v.u */
	TM_DA_LEGACY_JSON, /* str */
	TM_DA_STRING_IID,  /* v.u: an interned debug_annotation_string_values iid */
	TM_DA_NESTED,      /* str: a NestedValue, or the annotation's raw bytes
	                      when it holds dict_entries / array_values */
} tm_da_kind;

typedef struct tm_debug_annotation {
	bool has_name_iid;
	uint64_t name_iid;
	tm_span name;
	tm_da_kind kind;
	union {
		uint64_t u;
		int64_t i;
		double d;
	} v;
	tm_span str;
} tm_debug_annotation;

/* A growable array of T, reused across decodes. */
#define TM_VEC(T) struct { T *v; size_t n, cap; }

typedef struct tm_track_event {
	bool has_type;
	int32_t type;                                  /* TM_TE_* */
	bool has_track_uuid;
	uint64_t track_uuid;
	bool has_name_iid;
	uint64_t name_iid;
	tm_span name;
	TM_VEC(uint64_t) category_iids;
	TM_VEC(tm_span) categories;
	bool has_counter_value, has_double_counter_value;
	int64_t counter_value;
	double double_counter_value;
	TM_VEC(uint64_t) extra_counter_track_uuids;
	TM_VEC(int64_t) extra_counter_values;
	TM_VEC(uint64_t) extra_double_counter_track_uuids;
	TM_VEC(double) extra_double_counter_values;
	TM_VEC(uint64_t) flow_ids, terminating_flow_ids;
	TM_VEC(uint64_t) flow_ids_old, terminating_flow_ids_old;
	bool has_timestamp_delta_us, has_timestamp_absolute_us;
	int64_t timestamp_delta_us, timestamp_absolute_us;       /* µs, MONOTONIC */
	bool has_thread_time_delta_us, has_thread_time_absolute_us;
	int64_t thread_time_delta_us, thread_time_absolute_us;
	TM_VEC(tm_debug_annotation) debug_annotations;
	tm_span legacy_event;
} tm_track_event;

int tm_track_event_decode(tm_span msg, tm_track_event *e);
void tm_track_event_free(tm_track_event *e);

typedef struct tm_iid_name {
	uint64_t iid;
	tm_span name;
} tm_iid_name;

typedef struct tm_interned_data {
	TM_VEC(tm_iid_name) event_categories;
	TM_VEC(tm_iid_name) event_names;
	TM_VEC(tm_iid_name) debug_annotation_names;
} tm_interned_data;

int tm_interned_data_decode(tm_span msg, tm_interned_data *d);
void tm_interned_data_free(tm_interned_data *d);

/* ---- ftrace (formats.md §5.8) --------------------------------------------- */

/* The reference refuses bundles for CPUs at or above this. */
#define TM_FTRACE_MAX_CPUS 1024

enum {
	TM_FTRACE_CLOCK_UNSPECIFIED = 0,
	TM_FTRACE_CLOCK_UNKNOWN = 1,
	TM_FTRACE_CLOCK_GLOBAL = 2,
	TM_FTRACE_CLOCK_LOCAL = 3,
	TM_FTRACE_CLOCK_MONO_RAW = 4,
};

/* CompactSched columns: each span is the last occurrence of its packed
 * field, as the reference reads them. */
typedef struct tm_compact_sched {
	tm_span switch_timestamp, switch_prev_state, switch_next_pid,
		switch_next_prio, switch_next_comm_index;
	tm_span waking_timestamp, waking_pid, waking_target_cpu, waking_prio,
		waking_comm_index, waking_common_flags;
} tm_compact_sched;

typedef struct tm_ftrace_bundle {
	tm_span raw;
	bool has_cpu;
	uint32_t cpu;
	bool lost_events;
	bool has_ftrace_clock, has_ftrace_timestamp, has_boot_timestamp;
	int32_t ftrace_clock;                 /* TM_FTRACE_CLOCK_* */
	int64_t ftrace_timestamp, boot_timestamp;
	bool has_last_read_event_timestamp, has_previous_bundle_end_timestamp;
	uint64_t last_read_event_timestamp;   /* bundle clock */
	uint64_t previous_bundle_end_timestamp;
	size_t n_events;
	bool has_compact_sched;
	tm_compact_sched compact;
	TM_VEC(tm_span) intern_table;         /* CompactSched.intern_table */
} tm_ftrace_bundle;

/* Decode a bundle's own fields (events are read with the iterator below).
 * Returns 0, or -1 with TM_EINPUT "CPU {cpu} is greater than maximum
 * allowed of 1024. This is likely because of trace corruption
 * (ERR:tp-corrupt)" (the reference's check). A bundle without `cpu`
 * decodes with has_cpu false: the reference skips it and counts
 * ftrace_bundle_tokenizer_errors. */
int tm_ftrace_bundle_decode(tm_span msg, tm_ftrace_bundle *b, tm_error *err);
void tm_ftrace_bundle_free(tm_ftrace_bundle *b);

/* FtraceEvent payload kinds tracemount decodes: the field number of the
 * event's oneof member. */
enum {
	TM_FT_PRINT = F_FtraceEvent_print,
	TM_FT_SCHED_SWITCH = F_FtraceEvent_sched_switch,
	TM_FT_CPU_FREQUENCY = F_FtraceEvent_cpu_frequency,
	TM_FT_CPU_IDLE = F_FtraceEvent_cpu_idle,
	TM_FT_SCHED_WAKEUP = F_FtraceEvent_sched_wakeup,
	TM_FT_SCHED_WAKING = F_FtraceEvent_sched_waking,
	TM_FT_TASK_NEWTASK = F_FtraceEvent_task_newtask,
	TM_FT_TASK_RENAME = F_FtraceEvent_task_rename,
	TM_FT_SCHED_PROCESS_EXIT = F_FtraceEvent_sched_process_exit,
};

typedef struct tm_ftrace_event {
	tm_span raw;
	bool has_timestamp;    /* false: the reference drops the event
	                          (ftrace_bundle_tokenizer_errors) */
	uint64_t timestamp;    /* the first one given; bundle clock */
	bool has_pid;
	uint32_t pid;
	uint32_t common_flags;
	uint32_t kind;         /* first length-delimited field's number, 0 if
	                          none (the reference: ftrace_missing_event_id) */
	tm_span body;          /* that field's bytes */
	union {
		struct { uint64_t ip; tm_span buf; } print;
		struct {
			tm_span prev_comm, next_comm;
			int32_t prev_pid, prev_prio, next_pid, next_prio;
			int64_t prev_state;
		} sched_switch;
		struct { /* sched_waking and sched_wakeup */
			tm_span comm;
			int32_t pid, prio, success, target_cpu;
		} sched_wake;
		struct { uint32_t state, cpu_id; } cpu; /* cpu_frequency, cpu_idle */
		struct {
			tm_span comm;
			int32_t pid, oom_score_adj;
			uint64_t clone_flags;
		} task_newtask;
		struct {
			tm_span oldcomm, newcomm;
			int32_t pid, oom_score_adj;
		} task_rename;
		struct {
			tm_span comm;
			int32_t pid, tgid, prio;
		} sched_process_exit;
	} u;                   /* decoded for the TM_FT_* kinds, else zero */
} tm_ftrace_event;

typedef struct tm_ftrace_iter {
	tm_pb_iter it;
} tm_ftrace_iter;

/* Iterate the bundle's `event` fields in order. next: 1 and *ev filled,
 * 0 at the end (or where the bundle's bytes are malformed). */
void tm_ftrace_events_begin(tm_ftrace_iter *it, const tm_ftrace_bundle *b);
int tm_ftrace_events_next(tm_ftrace_iter *it, tm_ftrace_event *ev);

/* Decode one FtraceEvent on its own. Returns 1, or 0 if it stopped at
 * malformed bytes. */
int tm_ftrace_event_decode(tm_span msg, tm_ftrace_event *ev);

typedef struct tm_compact_switch {
	uint64_t timestamp;     /* absolute, bundle clock (sum of the deltas so far) */
	int64_t prev_state;
	int32_t next_pid, next_prio;
	uint32_t next_comm_index;
	tm_span next_comm;      /* intern_table[next_comm_index] */
} tm_compact_switch;

typedef struct tm_compact_waking {
	uint64_t timestamp;     /* absolute, bundle clock */
	int32_t pid, target_cpu, prio;
	uint32_t comm_index;
	tm_span comm;
	bool has_common_flags;
	uint32_t common_flags;
} tm_compact_waking;

typedef struct tm_compact_iter {
	const tm_ftrace_bundle *b;
	tm_span col[6];
	uint64_t acc;
	bool bad, flags_bad;
} tm_compact_iter;

/* Walk the switch (or waking) columns in step, delta-decoding timestamps
 * (switch and waking accumulate independently, from 0). next: 1 and *out
 * filled; 0 at a clean end; -1 at the end when the columns had different
 * lengths, a malformed packed value or a comm index outside intern_table
 * (the reference keeps the events before it and counts
 * compact_sched_has_parse_errors once). */
void tm_compact_switch_begin(tm_compact_iter *it, const tm_ftrace_bundle *b);
int tm_compact_switch_next(tm_compact_iter *it, tm_compact_switch *out);
void tm_compact_waking_begin(tm_compact_iter *it, const tm_ftrace_bundle *b);
int tm_compact_waking_next(tm_compact_iter *it, tm_compact_waking *out);

#endif
