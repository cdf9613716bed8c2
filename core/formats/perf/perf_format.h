/* core/formats/perf/perf_format.h - `perf record` output (perf.data) as a
 * format module: what the registry (core/formats/registry.c) lists of it.
 *
 * The reference (PerfDataTokenizer, RecordParser) reads the header, the
 * attrs and their ids, then each record of the data section, then the
 * feature sections; its parser sees the records in time order. A record's
 * time is on its attr's clock (the perf clock, which then names trace
 * time, unless the attr says use_clockid). A record without a time waits
 * for the next one with a time and goes in at the least time seen so far;
 * COMM records wait for the end of the file and go in, in file order, at
 * their own time or that least one. Samples make perf samples (source
 * "linux.perf"): the thread of their pid and tid, their callchain from
 * the root as frames of the mapping the address falls in (the kernel's,
 * else the process's from its MMAP records, else a dummy mapping of the
 * process), each frame the address relative to its mapping, unnamed; the
 * attr's counter goes up by the period. COMM names threads (and a main
 * thread's process); MMAP and MMAP2 make mappings. Every other record is
 * counted perf_record_skipped (and perf_unknown_record_type) by type. */
#ifndef TM_PERF_FORMAT_H
#define TM_PERF_FORMAT_H

#include "export/export.h"
#include "formats/kinds.h"
#include "model/model.h"
#include "scan/scan_internal.h"

/* A perf.data file's tokenizer (tokenize.c). */
extern const tm_tokenizer tm_perf_tokenizer;

/* TM_MREC_PERF records, each a tm_mrec_head and then, by sub:
 *   PERF_SAMPLE: tm_perf_sample_rec, then n ips (uint64) and n modes
 *     (uint8), leaf first, then n_reads read values (tm_perf_read_rec);
 *   PERF_MMAP: tm_perf_mmap_rec, then the filename (uint32 length, bytes);
 *   PERF_COMM: two uint32 (pid, tid), then the name (uint32 length, bytes);
 *   PERF_THREAD: two uint32 (pid, tid): an ITRACE_START's UpdateThread;
 *   PERF_SKIP: two uint32: the record type and whether it is of a type
 *     the parser does not know (perf_unknown_record_type);
 * side records:
 *   PERF_ATTR: tm_perf_attr_rec, then the event's name (uint32 length,
 *     bytes), each attr in order, before any sorted record;
 *   PERF_STAT: an int32 index and an int64 value of perf_features_skipped;
 *   PERF_THREAD too (the tokenizer's UpdateThread, before sorting). */
enum { PERF_SAMPLE, PERF_MMAP, PERF_COMM, PERF_THREAD, PERF_SKIP, PERF_ATTR, PERF_STAT };

typedef struct tm_perf_sample_rec {
	uint32_t pid, tid, cpu;
	uint32_t attr;
	uint64_t period;
	uint32_t n;        /* frames */
	uint32_t n_reads;  /* PERF_SAMPLE_READ's values (has_read) */
	uint8_t has_cpu, has_period, has_read, mode;
	uint8_t adjust_pc; /* linux perf's return addresses (not Simpleperf's) */
} tm_perf_sample_rec;

/* A value a sample read (Sample::ReadGroup), as the record holds it:
 * 12 bytes, the attr of its event id (TM_PERF_NO_ATTR when none has it)
 * and the count. */
#define TM_PERF_NO_ATTR UINT32_MAX
typedef struct tm_perf_read_rec {
	uint32_t attr;
	uint64_t value;
} tm_perf_read_rec;
#define TM_PERF_READ_REC_SIZE 12

typedef struct tm_perf_mmap_rec {
	uint32_t pid, tid;
	uint64_t addr, len, pgoff;
	uint8_t kernel;    /* of a kernel mode (KERNEL, GUEST_KERNEL) */
	uint8_t type;      /* PERF_RECORD_MMAP or PERF_RECORD_MMAP2 */
	uint8_t has_build_id, build_id_size;
	uint8_t build_id[20];
} tm_perf_mmap_rec;

typedef struct tm_perf_attr_rec {
	uint32_t index;
} tm_perf_attr_rec;

/* TM_MREC_PERF records into the tables (model_perf.c). */
extern const tm_parser tm_perf_parser;

/* What the parser hands the encoder of a sample (tm_mobserved.event). */
typedef struct perf_observed {
	uint32_t pid, tid, cpu;
	int has_cpu;
	int mode;             /* Profiling.CpuMode */
	uint32_t callsite;    /* the model's; TM_NO_CALLSITE for none */
	uint32_t attr;
	const char *event;    /* the attr's event name */
	int has_count;
	double count;         /* the counter after the sample */
	/* a read group's other events (their names) and their counts after
	 * it, in the group's order (the sample's own is `count`) */
	size_t n_others;
	const char *const *other_events;
	const double *other_counts;
} perf_observed;

/* Its samples into merged.pftrace (encode.c). */
extern const tm_encoder tm_perf_encoder;

#endif
