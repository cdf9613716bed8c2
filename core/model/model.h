/* core/model/model.h - the reference's tables, rebuilt from the merge.
 *
 * The scan places events; the reference then parses them, in the order of
 * its sorter (core/sort/order.h), into tables: threads and processes per
 * machine, slices with their depth on thread, async and global tracks,
 * flows, args, counters and sched slices. The model does the same for the
 * formats whose tables tracemount shows (Chrome JSON, systrace text, and
 * the Perfetto proto packets the scan hands it), with the reference's own
 * rules (Perfetto v58.2: ProcessTracker, SliceTracker, TrackCompressor,
 * FlowTracker, JsonTraceParser, SystraceLineParser, SystraceParser,
 * FtraceSchedEventTracker, TrackEventTracker, TrackEventParser,
 * TrackEventEventImporter, SystemProbesParser, FtraceParser), so that
 * timeline.tsv and the tsv views equal what the reference shows, and the
 * exporter can encode each event the way that makes the reference build
 * the same rows from merged.pftrace.
 *
 * Memory: open slices, the thread and process tables, async track sets,
 * live flows, and per proto file and machine its track descriptor
 * reservations and incremental counter values. Finished rows are handed
 * to the sink as soon as the reference would fix them and are not kept.
 */
#ifndef TM_MODEL_H
#define TM_MODEL_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "util/json.h"
#include "util/statlist.h"
#include "util/tm.h"

typedef struct tm_model tm_model;

/* ---- input records (what the scan hands over, in push order) ---------- */

/* The head of every record (core/sort/order.h payload). */
typedef struct tm_mrec_head {
	uint8_t kind;         /* its parser's (core/formats/kinds.h), < TM_MREC_KINDS */
	uint8_t sub;          /* kind-specific */
	uint16_t cpu;         /* systrace: the line's CPU */
	uint32_t file_id;
	uint32_t machine_row;
} tm_mrec_head;

/* A head as a record holds it: kind and sub, then cpu, file_id and
 * machine_row as varints. Mostly 5 to 7 bytes where the struct takes 12:
 * the order store holds every record of a pass, 2.6 million of them
 * (the head a tenth of their bytes) in the proto bench's timeline. */
#define TM_MREC_HEAD_MAX (2 + 3 + 5 + 5)
static inline void tm_mrec_head_put(tm_buf *b, const tm_mrec_head *h)
{
	uint8_t t[TM_MREC_HEAD_MAX], *p = t;
	*p++ = h->kind;
	*p++ = h->sub;
	p = tm_uv_put(p, h->cpu);
	p = tm_uv_put(p, h->file_id);
	p = tm_uv_put(p, h->machine_row);
	tm_buf_put(b, t, (size_t)(p - t));
}

/* The head of the n bytes of a record at rec into h: the bytes it takes,
 * 0 when they hold none. */
static inline size_t tm_mrec_head_get(const void *rec, size_t n, tm_mrec_head *h)
{
	const uint8_t *p = (const uint8_t *)rec, *end = p + n;
	uint64_t cpu, file, row;
	if (n < 5)
		return 0;
	h->kind = p[0];
	h->sub = p[1];
	if (p[2] < 0x80 && p[3] < 0x80 && p[4] < 0x80) { /* below 128 files and machines */
		h->cpu = p[2];
		h->file_id = p[3];
		h->machine_row = p[4];
		return 5;
	}
	if (n >= 7 && p[2] < 0x80 && p[3] >= 0x80 && p[4] < 0x80 && p[5] >= 0x80 && p[6] < 0x80) {
		h->cpu = p[2]; /* below 16,384 of each */
		h->file_id = (uint32_t)(p[3] & 0x7f) | (uint32_t)p[4] << 7;
		h->machine_row = (uint32_t)(p[5] & 0x7f) | (uint32_t)p[6] << 7;
		return 7;
	}
	if (!(p = tm_uv_get(p + 2, end, &cpu)) || !(p = tm_uv_get(p, end, &file)) || !(p = tm_uv_get(p, end, &row)) ||
	    cpu > UINT16_MAX || file > UINT32_MAX || row > UINT32_MAX)
		return 0;
	h->cpu = (uint16_t)cpu;
	h->file_id = (uint32_t)file;
	h->machine_row = (uint32_t)row;
	return (size_t)(p - (const uint8_t *)rec);
}

/* A string in a record: a uint32 length, then its bytes. Read back with
 * tm_mrec_get_str (0 when the bytes run short); a length of UINT32_MAX
 * says none (*s NULL): tm_mrec_put_str(b, NULL, UINT32_MAX) writes it. */
static inline void tm_mrec_put_str(tm_buf *b, const char *p, size_t n)
{
	uint32_t len = (uint32_t)n;
	tm_buf_put(b, &len, sizeof len);
	if (n != UINT32_MAX)
		tm_buf_put(b, p, n);
}

/* n bytes of a record into v, *p moved past them: 0 when they run short. */
static inline int tm_mrec_get(const char **p, const char *end, void *v, size_t n)
{
	if ((size_t)(end - *p) < n)
		return 0;
	memcpy(v, *p, n);
	*p += n;
	return 1;
}

static inline int tm_mrec_get_str(const char **p, const char *end, const char **s, size_t *n)
{
	uint32_t len;
	if (!tm_mrec_get(p, end, &len, sizeof len))
		return 0;
	if (len == UINT32_MAX) {
		*s = NULL;
		*n = 0;
		return 1;
	}
	if ((size_t)(end - *p) < len)
		return 0;
	*s = *p;
	*n = len;
	*p += len;
	return 1;
}

/* A systrace prev_state text as the raw kernel state the reference turns
 * it into (TaskState::FromSystrace(s).ToRawStateOnlyForSystraceConversions,
 * the kernel 4.4 layout; 0xffff when it is not a state). */
int64_t tm_model_task_state_raw(const char *s);

/* The same state as the raw value a kernel `major.minor` writes, so that
 * the reference, knowing that kernel (a SystemInfo), shows the letters it
 * shows for the text line read without one. A state that kernel cannot
 * report falls back to tm_model_task_state_raw(). */
int64_t tm_model_task_state_raw_for(const char *s, int major, int minor);

/* A Chrome JSON event's args as the slices' args column writes them
 * ("k":v pairs, compact JSON, comma-separated; nothing for no members),
 * appended to b. Depends on nothing but the args (core/formats/json/json_rec.h makes it
 * where the file is read). */
void tm_model_json_args_text(tm_buf *b, const tj_value *args);


/* ---- tracks --------------------------------------------------------------- */

typedef enum tm_mtrack_kind {
	TM_MT_THREAD,           /* a thread's slices (InternThreadTrack) */
	TM_MT_THREAD_OVERLAP,   /* JSON X slices spilled off a thread track */
	TM_MT_ASYNC_GLOBAL,     /* legacy async slices with global ids */
	TM_MT_ASYNC_PROCESS,    /* legacy async slices with process-local ids */
	TM_MT_ATRACE_ASYNC,     /* systrace S/F per (process, name) */
	TM_MT_ATRACE_TRACK,     /* systrace N/G/H per (process, track name) */
	TM_MT_GLOBAL_INSTANT,   /* JSON "s":"g" instants */
	TM_MT_PROCESS_INSTANT,  /* JSON "s":"p" instants */
	TM_MT_PROCESS_COUNTER,  /* JSON C, systrace C */
	TM_MT_CPU_COUNTER,      /* cpu_frequency, cpu_idle, ... per CPU */
	TM_MT_GLOBAL_COUNTER,   /* clock_*, thermal, ... by name */
	TM_MT_PROTO,            /* a proto TrackDescriptor or legacy track */
	TM_MT_GECKO_MARKER,     /* Firefox markers per (thread, category, name) */
	TM_MT_KIND_COUNT
} tm_mtrack_kind;

/* The reference's track kinds as the interop comparison and timeline.tsv
 * name them: the dimension a track hangs off. */
typedef enum tm_mtrack_scope { TM_SCOPE_THREAD, TM_SCOPE_PROCESS, TM_SCOPE_GLOBAL, TM_SCOPE_CPU } tm_mtrack_scope;

typedef struct tm_mtrack {
	uint32_t id;
	tm_mtrack_kind kind;
	tm_mtrack_scope scope;
	uint32_t machine_row;
	int64_t utid, upid;     /* -1 when the track has none */
	int64_t cpu;            /* CPU tracks */
	const char *name;       /* NULL for thread tracks */
	uint32_t file_id;       /* the file that created it */
	uint64_t proto_uuid;    /* TM_MT_PROTO: the descriptor's uuid in its file */
} tm_mtrack;

/* ---- output rows ---------------------------------------------------------- */

/* Every row below carries `seq`: the index of the record whose handling
 * made it (the reference's processing order), for ordering ties. */

typedef struct tm_mslice {
	uint64_t id;            /* the slice table's id (creation order) */
	uint64_t seq;
	int64_t ts, dur;        /* dur -1: never ended */
	uint32_t track;
	uint32_t depth;
	const char *name;       /* NULL: the reference shows no name */
	const char *category;
	const char *args;       /* a compact JSON object of the args, or NULL */
	uint32_t file_id;
	uint32_t machine_row;
	/* name and category as the model's string ids (tm_model_string):
	 * what a sink that keeps them until the model's end stores */
	uint32_t name_id, cat_id;
} tm_mslice;

typedef struct tm_mcounter {
	const tm_model *model;
	uint64_t seq;
	int64_t ts;
	uint32_t track;
	double value;
	uint32_t file_id;
	uint32_t machine_row;
} tm_mcounter;

typedef struct tm_mflow {
	uint64_t slice_out, slice_in;
	int64_t ts_out, ts_in;
	uint32_t machine_row;
} tm_mflow;

typedef struct tm_msched {
	uint64_t seq;
	int64_t ts, dur;        /* dur -1: still running at the end */
	uint32_t cpu;
	int64_t utid;
	const char *end_state;  /* NULL while running */
	int32_t prio;
	uint32_t file_id;
	uint32_t machine_row;
} tm_msched;

/* A kernel event the reference keeps no row of (timeline.tsv shows it as
 * kind `ftrace`). */
typedef struct tm_mkernel {
	uint64_t seq;
	int64_t ts;
	uint32_t cpu;
	int64_t tid;
	const char *name;       /* the event name */
	const char *args;       /* its argument text */
	uint32_t file_id;
	uint32_t machine_row;
} tm_mkernel;

typedef struct tm_mthread {
	int64_t tid;
	int64_t upid;           /* -1 none */
	const char *name;       /* NULL: unnamed */
	uint8_t name_prio;
	uint8_t name_perf;      /* the name is a perf.data COMM's (of ProcessTree's
				 * priority, but no packet of the input says it) */
	int64_t name_ts;        /* when the name was last set, -1 never */
	int64_t name_cpu;       /* the CPU of the line that set it, -1 none */
	int is_main;
	uint32_t machine_row;
	int64_t start_ts, end_ts; /* -1 unknown */
} tm_mthread;

typedef struct tm_mprocess {
	int64_t pid;
	const char *name;
	uint8_t name_prio;
	int64_t parent_upid;    /* -1 none */
	uint32_t machine_row;
	int64_t start_ts, end_ts;
} tm_mprocess;

/* Stack profiles (the reference's MappingTracker and StackProfileTracker):
 * a mapping, a frame of it (interned by name within its mapping), a
 * callsite (interned by parent and frame). Ids from 0, in creation order;
 * kept until tm_model_free. */
typedef struct tm_mmapping {
	const char *name;
	uint32_t file_id;       /* the file that made it */
	/* a memory mapping's (perf.data's MMAP records, the reference's
	 * CreateMappingParams); all 0 for a dummy mapping of names */
	int has_range;
	uint64_t start, end, exact_offset, start_offset, load_bias;
	uint8_t build_id[20];   /* raw, build_id_len bytes (0: none) */
	uint8_t build_id_len;
} tm_mmapping;

typedef struct tm_mframe {
	const char *name;       /* the reference's ("" for an unsymbolized address) */
	uint32_t mapping;
	uint64_t rel_pc;
	/* what the text views show of a frame without a name: the mapping's
	 * last path component and the address in it ("node+0x1abc"); NULL
	 * when the name says it */
	const char *label;
} tm_mframe;

/* What timeline.tsv and profile.folded show of a frame. */
static inline const char *tm_mframe_text(const tm_mframe *f)
{
	return f->label ? f->label : f->name;
}

#define TM_NO_CALLSITE UINT32_MAX
typedef struct tm_mcallsite {
	uint32_t parent;        /* TM_NO_CALLSITE for a root */
	uint32_t frame;
	uint32_t depth;         /* as its format's importer numbers it */
} tm_mcallsite;

/* A stack sample (profiler_sample; cpu_profile_stack_sample shows those of
 * the sources it knows). */
typedef struct tm_msample {
	uint64_t seq;
	int64_t ts;
	int64_t utid;
	uint32_t callsite;      /* its leaf */
	const char *source;     /* the profiler_sample.source ("perf_text") */
	uint32_t file_id;
	uint32_t machine_row;
} tm_msample;

/* An aggregate sample (the reference's aggregate_sample: collapsed
 * stacks): a stack and its weight, of no time. */
typedef struct tm_maggregate {
	uint32_t callsite;
	int64_t value;
	uint32_t file_id;
	uint32_t machine_row;
} tm_maggregate;

/* A class of a heap dump (the reference's heap_graph_class, an hprof
 * file's or a HeapGraph's) with its objects and the sum of their self
 * sizes, of no time. The sum is signed: the reference sizes an object a
 * HeapGraph refers to but never gives at -1. */
typedef struct tm_mheap_class {
	uint32_t name;          /* the model's string */
	uint64_t objects;
	int64_t bytes;
	uint32_t file_id;
	uint32_t machine_row;
} tm_mheap_class;

/* What the model saw an event of a text format do, for the exporter: the
 * track it landed on (UINT32_MAX: none) and, for a JSON X event moved off
 * its thread because it overlapped partially, that it spilled. */
typedef struct tm_mobserved {
	const tm_model *model;
	const tm_mrec_head *head;
	int64_t ts;
	/* the event as its format's parser read it, for that format's
	 * encoder: a type of the format module both live in
	 * (core/formats/<format>/), which the model does not know */
	const void *event;
	/* the model track the event went on: a JSON event's; a systrace
	 * print B, E or I's thread track (m_systrace_print); else UINT32_MAX */
	uint32_t track;
	int spilled;
	int dropped;            /* the reference made no row of it */
	/* the threads the record made or gave a process (the reference's
	 * UpdateThread of every JSON event and systrace line), in that
	 * order, a utid more than once where both happened */
	const int64_t *made;
	size_t n_made;
	/* what the sink's `prepare` made of the event, when it was asked
	 * (`prepared`): n_prepare bytes at prepare */
	int prepared;
	const void *prepare;
	size_t n_prepare;
} tm_mobserved;

typedef struct tm_model_sink {
	void *ctx;
	void (*slice)(void *ctx, const tm_mslice *s);
	void (*counter)(void *ctx, const tm_mcounter *c);
	void (*flow)(void *ctx, const tm_mflow *f);
	void (*sched)(void *ctx, const tm_msched *s);
	void (*kernel)(void *ctx, const tm_mkernel *k);
	void (*sample)(void *ctx, const tm_msample *s);
	/* after each JSON / systrace record was applied (may be NULL) */
	void (*observed)(void *ctx, const tm_mobserved *o);
	/* Before a record is applied, on the thread that takes the records
	 * out of order for the model's (core/pass/run.c, replay; not when
	 * there is no such thread), for a parser whose `prepare` asks it:
	 * what `observed` will want of the event alone (as tm_mobserved.event
	 * gives it), its time and its record's head, appended to b (their
	 * count; `observed` gets them). It runs while the model's thread
	 * applies earlier records, so it reads only what the pass does not
	 * change. May be NULL. */
	size_t (*prepare)(void *ctx, int64_t ts, const tm_mrec_head *h, const void *event, tm_buf *b);
	/* How far the records are in the model (for a front end's progress):
	 * every TM_MODEL_REPLAYED_STEP records taken out of order, and once
	 * at the end; `total` is every record there is. May be NULL. */
	void (*replayed)(void *ctx, uint64_t done, uint64_t total);
} tm_model_sink;
#define TM_MODEL_REPLAYED_STEP 65536

/* A format's parser into the tables (core/formats/<format>/), as the
 * model calls it for a record of its kind; the registry
 * (core/formats/registry.c) lists them. The model knows no format: it
 * hands each record to its kind's parser. */
struct m_ctx;
typedef struct tm_parser {
	/* a record in the reference's order; pre: what `prepare` made of it
	 * on the replay's other thread, or NULL */
	void (*apply)(tm_model *m, const tm_mrec_head *h, int64_t ts, const char *body, size_t n, const void *pre,
		      size_t pre_len);
	/* a side record (tm_rec.side), before every sorted record; may be NULL */
	void (*side)(tm_model *m, const tm_mrec_head *h, const char *body, size_t n);
	/* what apply would work out first from the record alone, appended
	 * to b (its length); runs on the replay's producer thread and reads
	 * only the record and the sink. May be NULL. */
	size_t (*prepare)(const struct tm_model_sink *sink, int64_t ts, const tm_mrec_head *h, const char *body,
			  size_t n, tm_buf *b);
	/* frees the parser's state of one context (file, machine); may be NULL */
	void (*ctx_free)(struct m_ctx *c);
	/* at the end of the input (tm_model_finish), what the parser keeps
	 * of the whole trace rather than of one context (its
	 * tm_model.kind_state); may be NULL */
	void (*finish)(tm_model *m);
	/* frees that state (tm_model_free); may be NULL */
	void (*state_free)(tm_model *m);
	int line_cpu;   /* tm_mrec_head.cpu is the record's CPU */
} tm_parser;
#define TM_MREC_KINDS 11 /* the record kinds there can be, 0 unused
			  * (core/formats/kinds.h; the registry checks) */

/* A model whose records of kind k go to parsers[k] (NULL: ignored). `sink`
 * may have NULL members. */
tm_model *tm_model_new(const tm_model_sink *sink, const tm_parser *const parsers[TM_MREC_KINDS]);

/* 1 the first time a record of (file_id, row) comes, else 0: where the
 * reference forks the file's context for that machine (the model makes
 * the machine then, if it has not yet). */
int tm_model_fork(tm_model *m, uint32_t file_id, uint32_t row);

/* A trace file's context on machine `row` maps pid 0 and tid 0 to the
 * machine's swapper (the reference's pid_zero_is_idle of the file's
 * type: systrace and proto files, not JSON). */
void tm_model_pid_zero_is_idle(tm_model *m, uint32_t row);

/* Machine row `row` as a proto or systrace file's context finds it
 * before anything is parsed: its kernel (SystemInfo's utsname, read for
 * sched states; mr may be NULL) and pid 0 as the swapper. */
struct tm_machine;
void tm_model_machine_start(tm_model *m, uint32_t row, const struct tm_machine *mr);

/* The replay's records are of files below n_files and machine rows below
 * n_rows (the scan's): a record beyond them, which only damage to it in a
 * temporary file makes, is dropped (the model's tables by row would grow
 * to it). Before this, nothing is dropped. */
void tm_model_bounds(tm_model *m, uint32_t n_files, uint32_t n_rows);

/* Apply one record (core/sort/order.h output). Never fails on bad input: what
 * the reference rejects is counted or dropped as it does. */
void tm_model_apply(tm_model *m, int64_t ts, const void *rec, uint32_t len);

/* tm_model_apply with what the record's parser prepared of it (pre,
 * pre_len; NULL, 0 for nothing). */
void tm_model_apply_prepared(tm_model *m, int64_t ts, const void *rec, uint32_t len, const void *pre,
			     size_t pre_len);

/* Apply a side record (tm_rec.side): before every sorted record. */
void tm_model_apply_side(tm_model *m, const void *rec, uint32_t len);

/* The end of the input: open slices are handed out with dur -1, running
 * sched slices likewise (FlushPendingSlices). */
void tm_model_finish(tm_model *m);

/* The id of s in the model's string pool, added when missing: what a
 * record may carry instead of the text, before the records are applied
 * (the scan's thread, while the model applies only side records). */
uint32_t tm_model_intern(tm_model *m, const char *s, size_t n);

/* Tables, valid until tm_model_free. */
/* A string of the model's pool (tm_mslice.name_id...): NULL for 0 or an
 * id it does not have; *len its length. */
const char *tm_model_string(const tm_model *m, uint32_t id, size_t *len);
size_t tm_model_n_tracks(const tm_model *m);
const tm_mtrack *tm_model_track(const tm_model *m, uint32_t id);
/* A pid or tid as a 32-bit field of merged.pftrace holds it: as is, but
 * a JSON string's id (from 2^32 up, JSON pids and tids given as strings)
 * from INT32_MAX down, above the pids and tids of real systems. */
int32_t tm_model_id32(const tm_model *m, int64_t id);
size_t tm_model_n_threads(const tm_model *m);
const tm_mthread *tm_model_thread(const tm_model *m, size_t utid);
size_t tm_model_n_processes(const tm_model *m);
const tm_mprocess *tm_model_process(const tm_model *m, size_t upid);
size_t tm_model_n_callsites(const tm_model *m);
const tm_mcallsite *tm_model_callsite(const tm_model *m, uint32_t id);
const tm_mframe *tm_model_frame(const tm_model *m, uint32_t id);
const tm_mmapping *tm_model_mapping(const tm_model *m, uint32_t id);
size_t tm_model_n_aggregates(const tm_model *m);
const tm_maggregate *tm_model_aggregate(const tm_model *m, size_t i);
size_t tm_model_n_heap_classes(const tm_model *m);
const tm_mheap_class *tm_model_heap_class(const tm_model *m, size_t i);
/* The reference's stats the model counts (flow_*, misplaced_end_event,
 * mismatched_sched_switch_tids, ...), per trace file and machine (the
 * record's own file and machine row) as the reference keeps them, in
 * first-count order: a name's first entry is its first count. */
const tm_statlist *tm_model_file_stats(const tm_model *m);

/* Free what the finished model's tables (the strings, tracks, threads,
 * processes and stack profiles read through the functions above) do not
 * need: the state the parse kept to go on (contexts, open slices, maps of
 * ids, parsers' state, stats). A mount keeps the tables for timeline.tsv's
 * lines, made when read (core/export/timeline.c): 0.9 of the 23 MB the
 * model held for the proto bench, 5 of 12 MB for the systrace bench's.
 * Only those tables may be read after it. */
void tm_model_trim(tm_model *m);

void tm_model_free(tm_model *m);

#endif
