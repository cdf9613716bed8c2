/* core/formats/proto/samples.h - a proto file's stack samples: PerfSample
 * (traced_perf), StreamingProfilePacket (Chrome's sampler) and StackSample
 * packets, for profile.folded and timeline.tsv's sample rows.
 *
 * The tokenizer keeps each sequence's interned stack profile (function
 * names, frames, callstacks, mappings and their paths and build ids, task
 * contexts: pr_stacks) and writes a sample's stack out into its record
 * (TM_PR_SAMPLE), frame by frame from the root, with the stats the
 * reference counts resolving it (StackProfileSequenceState). The model
 * (m_proto_sample) makes the threads, callsites and the sample of it. */
#ifndef TM_PROTO_SAMPLES_H
#define TM_PROTO_SAMPLES_H

#include <stddef.h>
#include <stdint.h>

#include "util/tm.h"
#include "wire/proto.h"

struct tm_model;
struct tm_mrec_head;

/* The packet a sample came in (tm_pr_sample.source). */
enum { TM_PR_SRC_PERF = 1, TM_PR_SRC_CHROME, TM_PR_SRC_STACK };

/* The stats resolving a stack counts (stackprofile_*), in the record. */
enum {
	TM_PR_ST_STRING,        /* stackprofile_invalid_string_id */
	TM_PR_ST_MAPPING,       /* stackprofile_invalid_mapping_id */
	TM_PR_ST_FRAME,         /* stackprofile_invalid_frame_id */
	TM_PR_ST_CALLSTACK,     /* stackprofile_invalid_callstack_id */
	TM_PR_ST_EMPTY,         /* stackprofile_empty_callstack */
	TM_PR_ST_N
};

/* TM_PR_SAMPLE's fixed part; then the StackSample's source (a record
 * string, none for the other packets); for a PerfSample, its n_counts
 * follower counts (uint64) and, when its sequence has perf defaults
 * (has_defaults), the names of its counters (record strings: the
 * timebase's, then n_followers followers'); for a StackSample, its
 * n_counts counter values that have a track, each a tm_pr_counter and its
 * descriptor's name (a record string); then n_frames frames from the
 * root, each its function name and mapping name (record strings) and its
 * rel_pc (uint64). Past the first TM_PR_DEDUP_AFTER bytes of frames, a
 * name or mapping name the record already holds (the same interned iid) is
 * TM_PR_STR_AGAIN in place of a string's length, then the index (uint32)
 * of that string among the frames' strings so far, two a frame: a stack of
 * thousands of frames of one mapping whose path repeats a long component
 * made a record of frames x path, 300 MB of memory for 2 KB of input. */
#define TM_PR_STR_AGAIN (UINT32_MAX - 1)
#define TM_PR_DEDUP_AFTER (64u * 1024u)
typedef struct tm_pr_sample {
	uint8_t source;         /* TM_PR_SRC_* */
	uint8_t has_pid, has_tid;
	uint8_t has_stack;      /* the stack resolved (frames follow) */
	uint8_t has_cpu;
	uint8_t has_skip;       /* PerfSample.sample_skipped_reason */
	uint8_t producer_event; /* PerfSample.producer_event: no sample */
	uint8_t guardrail;      /* of it: the profiler stopped at its guardrail */
	uint8_t has_count;      /* PerfSample.timebase_count */
	uint8_t has_defaults;   /* the sequence's PerfSampleDefaults */
	uint32_t stats[TM_PR_ST_N]; /* counts */
	uint32_t cpu;
	uint32_t skip;
	uint32_t n_frames;
	uint32_t seq;           /* trusted_packet_sequence_id: the session */
	uint32_t n_counts;      /* PerfSample.follower_counts; StackSample: its values */
	uint32_t n_followers;   /* PerfSampleDefaults.followers */
	uint32_t shard_count, chosen_shard; /* PerfSampleDefaults' sharding */
	uint64_t count;         /* PerfSample.timebase_count */
	uint64_t lost;          /* PerfSample.kernel_records_lost: no sample */
	int64_t pid, tid;
} tm_pr_sample;

/* A StackSample's counter value: on its session's track of that name, the
 * CPU's when cpu is not TM_PR_SESSION_SCOPE. */
#define TM_PR_SESSION_SCOPE UINT32_MAX
typedef struct tm_pr_counter {
	uint64_t value;
	uint32_t cpu;
} tm_pr_counter;

/* A sequence's PerfSampleDefaults as its samples' records carry it. */
typedef struct pr_perf_names {
	int has;                /* the defaults had perf_sample_defaults */
	const char *names;      /* the counters' names, record strings */
	size_t len;
	uint32_t n_followers;
	uint32_t shard_count, chosen_shard; /* process_shard_count, chosen_process_shard */
} pr_perf_names;

/* A TracePacketDefaults' perf_sample_defaults into *out: the counter
 * names (InternCounterName of the timebase, then of each follower) into
 * `names` as record strings, out->names and len pointing at them. Returns
 * out->has: 0 when it has none (names empty). */
int pr_perf_defaults(tm_span defaults, tm_buf *names, pr_perf_names *out);

/* What a sequence's defaults give its samples. */
typedef struct pr_seq_defaults {
	const char *stack_source;   /* StackSampleDefaults.source (NULL: none) */
	size_t source_len;
	int has_stack;              /* StackSampleDefaults, for its counters */
	tm_span stack;
	pr_perf_names perf;         /* PerfSampleDefaults */
} pr_seq_defaults;

/* One sequence's interned stack profile, as InternedData gave it. */
typedef struct pr_stacks pr_stacks;

/* The stack profile entries of an InternedData message into *s (made at
 * first use); `budget` is what the file may still keep, in bytes
 * (decreased by what is kept: an iid given again keeps its first value,
 * as the reference's does). */
void pr_stacks_intern(pr_stacks **s, tm_span interned_data, size_t *budget);
/* The sequence's incremental state was cleared: nothing interned. Returns
 * the bytes it kept. */
size_t pr_stacks_clear(pr_stacks *s);
void pr_stacks_free(pr_stacks *s);

/* A sample's record after its head (tm_pr_sample, the source, the
 * frames) appended to b, for one of the packets above (its field of the
 * TracePacket: `field`, `msg`). For a StreamingProfilePacket, one sample:
 * its callstack iid, and the sequence's thread (pid, tid; 0 when it has
 * none). `seq` is the sequence's id, `d` its defaults (NULL: none). */
void pr_sample_record(pr_stacks *s, uint32_t field, tm_span msg, uint64_t streaming_iid, int64_t thread_pid,
		      int64_t thread_tid, uint32_t seq, const pr_seq_defaults *d, tm_buf *b);

/* A TM_PR_SAMPLE record into the model (model_sample.c), with the
 * stacks of its file and machine (*state, made at first use; freed by
 * m_proto_samples_free). */
typedef struct m_psamples m_psamples;
void m_proto_sample(struct tm_model *m, const struct tm_mrec_head *h, int64_t ts, const char *body, size_t n,
		    m_psamples **state);
void m_proto_samples_free(m_psamples *s);

#endif
