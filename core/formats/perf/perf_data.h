/* core/formats/perf/perf_data.h - a `perf record` file (perf.data,
 * "PERFILE2") as the reference's perf importer reads it: the header, the
 * attrs section and each attr's ids, the feature sections it reads
 * (build ids, the command line, event descriptions, Simpleperf's
 * marks), and each record of the data section: which attr it is of, its
 * time, and the fields of the records it parses (SAMPLE, MMAP, MMAP2,
 * COMM, ITRACE_START).
 *
 * Everything here reads bytes it is handed and nothing else (the
 * tokenizer reads the file; the fuzz target calls these on arbitrary
 * bytes). All integers are little-endian, as perf writes them on the
 * machines the reference reads (it reads the file's bytes as its own
 * structs). Errors are the reference's texts, which fail the file.
 */
#ifndef TM_PERF_DATA_H
#define TM_PERF_DATA_H

#include <stddef.h>
#include <stdint.h>

#include "util/tm.h"

/* Record types (perf_event.h: enum perf_event_type). */
enum {
	PERF_RECORD_MMAP = 1,
	PERF_RECORD_COMM = 3,
	PERF_RECORD_SAMPLE = 9,
	PERF_RECORD_MMAP2 = 10,
	PERF_RECORD_AUX = 11,
	PERF_RECORD_ITRACE_START = 12,
	PERF_RECORD_USER_TYPE_START = 64,
	PERF_RECORD_AUXTRACE_INFO = 70,
	PERF_RECORD_AUXTRACE = 71,
	PERF_RECORD_TIME_CONV = 79,
};

/* perf_event_attr.sample_type bits. */
enum {
	PERF_SAMPLE_IP = 1u << 0,
	PERF_SAMPLE_TID = 1u << 1,
	PERF_SAMPLE_TIME = 1u << 2,
	PERF_SAMPLE_ADDR = 1u << 3,
	PERF_SAMPLE_READ = 1u << 4,
	PERF_SAMPLE_CALLCHAIN = 1u << 5,
	PERF_SAMPLE_ID = 1u << 6,
	PERF_SAMPLE_CPU = 1u << 7,
	PERF_SAMPLE_PERIOD = 1u << 8,
	PERF_SAMPLE_STREAM_ID = 1u << 9,
	PERF_SAMPLE_IDENTIFIER = 1u << 16,
};

/* Profiling.CpuMode: what a record's misc and a callchain's context marks
 * say (the values perfetto's PerfSample.cpu_mode carries). */
enum {
	PERF_MODE_UNKNOWN = 0,
	PERF_MODE_KERNEL = 1,
	PERF_MODE_USER = 2,
	PERF_MODE_HYPERVISOR = 3,
	PERF_MODE_GUEST_KERNEL = 4,
	PERF_MODE_GUEST_USER = 5,
};

/* Feature ids (perf's HEADER_*, the reference's feature::Id). */
enum {
	PERF_FEAT_BUILD_ID = 2,
	PERF_FEAT_OS_RELEASE = 4,
	PERF_FEAT_CMD_LINE = 11,
	PERF_FEAT_EVENT_DESC = 12,
	PERF_FEAT_GROUP_DESC = 17,
	PERF_FEAT_SIMPLEPERF_META_INFO = 129,
	PERF_FEAT_SIMPLEPERF_FILE2 = 132,
};

#define PERF_HEADER_SIZE 104u
#define PERF_SECTION_SIZE 16u

typedef struct perf_section {
	uint64_t offset, size;
} perf_section;

typedef struct perf_header {
	uint64_t size, attr_size;
	perf_section attrs, data, event_types;
	uint64_t flags[4];      /* the feature bits, 256 */
} perf_header;

/* One perf_event_attr as the reference keeps it (PerfEventAttr). */
typedef struct perf_attr {
	uint32_t type, size;
	uint64_t config, sample_period, sample_type, read_format, flags;
	int32_t clockid;
	uint32_t clock;         /* the TM_CLOCK_* its times are on (ExtractClockId) */
	/* the offsets the reference derives; -1 for none */
	int64_t time_from_start, time_from_end, id_from_start, id_from_end;
	size_t sample_id_size;
	perf_section ids;       /* where its ids are */
	char *event_name;       /* EVENT_DESC's, else "" (never NULL once built) */
} perf_attr;

#define PERF_ATTR_FREQ(a) (((a)->flags >> 10) & 1u)
#define PERF_ATTR_SAMPLE_ID_ALL(a) (((a)->flags >> 18) & 1u)
#define PERF_ATTR_USE_CLOCKID(a) (((a)->flags >> 25) & 1u)

typedef struct perf_build_id {
	int32_t pid;
	char *filename;
	uint8_t id[20];
	uint8_t size;
} perf_build_id;

/* What one file says before its records (PerfInvocation). */
typedef struct perf_file {
	perf_header h;
	perf_attr *attrs;
	size_t n_attrs, cap_attrs;
	struct perf_id_attr {
		uint64_t id;
		uint32_t attr;
	} *by_id;               /* sorted by id */
	size_t n_by_id;
	int simpleperf;         /* needs no pc adjustment */
	perf_build_id *build_ids;
	size_t n_build_ids, cap_build_ids;
	/* build_ids by file name: a hash of the name -> the first entry of
	 * it + 1, then build_next[i] the next one of the same hash + 1 (an
	 * MMAP's lookup walked them all: time with the square of a crafted
	 * file's sizes) */
	tm_u64map build_ix;
	uint32_t *build_next;
	tm_buf cmdline;         /* the CMD_LINE feature's arguments joined by ' ' */
	int has_cmdline;
} perf_file;

/* The header's 104 bytes: 0, or -1 with the reference's text in err. */
int perf_read_header(const uint8_t *p, size_t n, perf_header *h, tm_error *err);

/* The feature ids set in the header, ascending, into ids (up to 256):
 * their number. */
size_t perf_feature_ids(const perf_header *h, uint8_t ids[256]);

/* The attrs section's shape (AttrsSectionReader::Create): 0 with its
 * number of entries, or -1 with err set. Then each entry (attr_size bytes,
 * in order) into f->attrs with where its ids are, and the entry's ids (the
 * bytes there, a multiple of 8 bytes, checked by perf_read_attr) before
 * the next entry, as the reference reads them: 0, or -1 with err set. At
 * most PERF_MAX_IDS ids in all (attrs may share their id sections: the
 * reference's memory grows with their product). Once every attr has its
 * ids, perf_build_invocation checks them as PerfInvocation::Builder::Build. */
#define PERF_MAX_IDS (1u << 20)
int perf_attrs_check(const perf_header *h, size_t *count, tm_error *err);
int perf_read_attr(perf_file *f, const uint8_t *p, size_t n, tm_error *err);
int perf_add_ids(perf_file *f, size_t attr, const uint8_t *p, size_t n, tm_error *err);
int perf_build_invocation(perf_file *f, tm_error *err);

/* Some attr's times are on the perf clock (HasPerfClock). */
int perf_has_perf_clock(const perf_file *f);

/* One feature section (its id and bytes): 0, -1 with err set. A feature
 * the reference skips adds 1 to skipped[id] (perf_features_skipped). */
int perf_read_feature(perf_file *f, uint8_t id, const uint8_t *p, size_t n, int64_t skipped[256], tm_error *err);

/* The attr of a record (FindAttrForRecord): its index, -1 for none (a
 * user record type), or -2 with err set. */
int64_t perf_attr_of(const perf_file *f, uint32_t type, const uint8_t *payload, size_t n, tm_error *err);

/* The attr an event id belongs to (FindAttrForEventId): its index, -1
 * for none. */
int64_t perf_attr_by_id(const perf_file *f, uint64_t id);

/* A record's time (ReadTime, ExtractTraceTimestamp): 1 with *time when it
 * has one that is not 0, else 0. */
int perf_record_time(const perf_attr *a, uint32_t type, const uint8_t *payload, size_t n, uint64_t *time);

/* The mode of a record's misc. */
int perf_misc_mode(uint16_t misc);

/* One counter value of a sample's PERF_SAMPLE_READ (Sample::ReadGroup):
 * the event id it names (PERF_FORMAT_ID) and the count. */
typedef struct perf_read {
	int has_id;
	uint64_t id, value;
} perf_read;

/* A SAMPLE's fields (Sample::Parse); frames leaf first, each with its
 * mode (the context marks consumed). */
typedef struct perf_sample {
	int has_ip, has_tid, has_time, has_cpu, has_period;
	uint64_t ip, time, period;
	uint32_t pid, tid, cpu;
	int mode;
	int has_read;           /* PERF_SAMPLE_READ: read groups were read */
	perf_read *reads;       /* them, n_reads (has_read: at least one) */
	size_t n_reads, cap_reads;
	uint64_t *ips;
	uint8_t *modes;
	size_t n_frames, cap_frames;
} perf_sample;

/* 0, or -1 with the reference's reason in err (the record is skipped). */
int perf_read_sample(const perf_attr *a, uint16_t misc, const uint8_t *p, size_t n, perf_sample *s, tm_error *err);
void perf_sample_free(perf_sample *s);

/* MMAP and MMAP2 (MmapRecord, Mmap2Record). */
typedef struct perf_mmap {
	uint32_t pid, tid;
	uint64_t addr, len, pgoff;
	int mode;
	int has_build_id;        /* MMAP2 with PERF_RECORD_MISC_MMAP_BUILD_ID */
	uint8_t build_id[20];
	uint8_t build_id_size;
	const char *filename;   /* into the payload */
	size_t filename_n;
} perf_mmap;
int perf_read_mmap(uint32_t type, uint16_t misc, const uint8_t *p, size_t n, perf_mmap *m);

/* COMM: pid, tid and the name up to its NUL (into the payload). */
int perf_read_comm(const uint8_t *p, size_t n, uint32_t *pid, uint32_t *tid, const char **comm, size_t *comm_n);

/* The build id the features give (pid, filename), else any pid's
 * (LookupBuildId): NULL for none. */
const perf_build_id *perf_lookup_build_id(const perf_file *f, uint32_t pid, const char *name, size_t n);

void perf_file_free(perf_file *f);

/* The reference's texts. */
#define PERF_ERR_PREMATURE "Premature end of perf file. (ERR:tp-corrupt)"

#endif
