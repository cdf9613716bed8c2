/* core/model/model_internal.h - what the model's pieces share (core/model*.c).
 *
 * The reference keeps the process tracker per machine, and the track,
 * slice, async-track, flow, sched and systrace state per (trace file,
 * machine): two files on one machine never share a thread track or a
 * slice stack. The model keeps the same split: m_mach per machine row,
 * m_ctx per (file, machine).
 */
#ifndef TM_MODEL_INTERNAL_H
#define TM_MODEL_INTERNAL_H

#include "model/model.h"

/* ---- a string pool: names, categories (ids from 1; 0 is null) ---------- */

typedef struct m_strings {
	char **s;
	uint32_t *lens;      /* strlen of each */
	size_t n, cap;
	uint64_t *slots;     /* open addressing on s: the hash's high half << 32 | index + 1 */
	size_t n_slots;
} m_strings;

uint32_t m_intern(m_strings *p, const char *s, size_t n);
static inline const char *m_str(const m_strings *p, uint32_t id)
{
	return id ? p->s[id - 1] : NULL;
}

/* ---- a u64 -> u64 map ----------------------------------------------------- */

/* A slot holds its key and value side by side, so that a lookup touches
 * one cache line (as three arrays, with the state, it touched three: a
 * tenth of the timeline pass of 2,000 machines, whose maps outgrow the
 * cache), and tells its state by its key: the map's key plus two, 0 for
 * an empty slot and 1 for a deleted one (16 bytes a slot, not 24 with a
 * state byte: the maps are a sixth of what a machine of a Chrome capture
 * keeps). The two keys that have no such form, UINT64_MAX - 1 and
 * UINT64_MAX, are kept in two more slots after the cap ones (key 1 when
 * present), not in the map: a file's context holds six maps, and an
 * archive may hold 100,000 files. A zeroed m_map is empty. */
typedef struct m_slot {
	uint64_t key, val;
} m_slot;

typedef struct m_map {
	m_slot *slots;      /* cap slots, then the two side slots; NULL when cap is 0 */
	uint32_t cap, n;    /* n: slots used or deleted */
} m_map;

uint64_t *m_map_get(m_map *m, uint64_t key);             /* NULL when absent */
uint64_t *m_map_put(m_map *m, uint64_t key, int *inserted); /* value 0 when new */
void m_map_del(m_map *m, uint64_t key);
/* The index of key's element in *arr (*n of them, of elem bytes, each
 * zeroed when made), found through ix (key -> index + 1) and made when
 * absent and make; SIZE_MAX when absent. */
size_t m_keyed(m_map *ix, void **arr, size_t *n, size_t *cap, size_t elem, uint64_t key, int make);
#define M_KEYED(ix, arr, n, cap, key, make) m_keyed((ix), (void **)&(arr), &(n), &(cap), sizeof(*(arr)), (key), (make))
void m_map_free(m_map *m);
uint64_t m_hash2(uint64_t a, uint64_t b);

/* ---- threads and processes (ProcessTracker, per machine) ---------------- */

typedef struct m_thread {
	tm_mthread pub;
	uint32_t name_id;
	uint64_t stamp;    /* its place in its tid's list (m_tid_list), 0: not in it */
} m_thread;

typedef struct m_process {
	tm_mprocess pub;
	uint32_t name_id;
	uint32_t threads;  /* its threads: the first of its proc_links + 1, 0 none */
} m_process;

/* A thread of a process (m_process.threads), chained: kept when the
 * thread moves to another process, so a walk checks each one's upid. */
typedef struct m_proc_link {
	int64_t utid;
	uint32_t next;     /* + 1, 0 ending */
} m_proc_link;

/* Thread name priorities (ThreadNamePriority). */
enum { TP_OTHER = 0, TP_FTRACE = 1, TP_PROCESS_TREE = 2, TP_PERF_COMM = 2, TP_TRACK_DESCRIPTOR_THREAD_TYPE = 3,
       TP_TRACK_DESCRIPTOR = 4, TP_CONSTANT = 5 };
/* Process name priorities (ProcessNamePriority). */
enum { PP_OTHER = 0, PP_CHROME_LABEL = 1, PP_TRACK_DESCRIPTOR = 2, PP_CHROME_LABEL_RENDERER = 3,
       PP_SYSTEM = 4 };

/* pending_assocs_: pairs of threads of one process not yet known, in
 * the reference's vector order (a pair taken out is replaced by the last:
 * that order is the order threads are associated in). Each thread's
 * positions are listed (m_mach.pending_pos) so a resolution goes to its
 * pairs instead of walking them all. */
typedef struct m_pending {
	int64_t t[2];
	uint32_t slot[2];  /* where this pair's position is in t[k]'s list */
} m_pending;

typedef struct m_poslist {
	uint32_t *v;
	size_t n, cap;
} m_poslist;

/* pending_parent_assocs_: processes waiting for their parent thread's
 * process, chained by parent (the order they are given it in changes
 * nothing: each gets the same one) */
typedef struct m_parent_wait {
	int64_t upid;
	uint32_t next;     /* + 1, 0 ending */
} m_parent_wait;

/* tids_[tid]: the threads of a tid in the reference's vector order,
 * which a lookup walks from its end. The order is kept as stamps: a
 * thread put at the end (made, or reaffirmed) takes the next stamp, and
 * the list's log of (thread, stamp) gets it; an entry whose stamp is no
 * longer its thread's is left behind (and dropped when the log has
 * doubled). A tid of a few threads is walked so. One that has had
 * M_TID_INDEXED threads also logs its threads by pid (and those of no
 * process), so a lookup of (tid, pid) skips the threads of other pids:
 * the walk of the whole vector took time with the square of them (a tid
 * under 40,000 pids, 2.4 MB of JSON: 7 s). */
typedef struct m_stamped {
	int64_t utid;
	uint64_t stamp;
} m_stamped;

typedef struct m_stamp_log {
	m_stamped *v;      /* by stamp */
	uint32_t n, cap;
	uint32_t kept;     /* entries kept by its last compaction */
} m_stamp_log;

typedef struct m_tid_index {
	m_stamp_log alive; /* the list, less threads ended for good */
	m_stamp_log loose; /* threads of no process */
	m_map by_pid;      /* a pid -> index + 1 into groups */
	m_stamp_log *groups; /* threads of a process of that pid */
	size_t n_groups, cap_groups;
} m_tid_index;

typedef struct m_tid_list {
	m_stamp_log all;   /* the list: the entries whose stamp is their thread's */
	uint32_t members;
	m_tid_index *ix;   /* once it has had M_TID_INDEXED members */
} m_tid_list;

typedef struct m_mach {
	uint32_t row;
	m_map pids;          /* pid -> upid + 1 */
	m_map live_tid;      /* tid -> utid + 1 */
	m_map tids_head;     /* tid -> index + 1 of its list in tid_lists */
	struct m_tid_list *tid_lists;
	size_t n_tid_lists, cap_tid_lists;
	uint64_t last_stamp; /* the last m_thread.stamp given */
	int64_t swapper_upid, swapper_utid;
	int pid0_is_swapper; /* SetPidZeroIsUpidZeroIdleProcess was called */
	m_pending *pending;  /* pending_assocs_ */
	size_t n_pending, cap_pending;
	m_map pending_of;    /* utid -> index + 1 into pending_pos */
	m_poslist *pending_pos; /* per utid: where its pairs are in pending */
	size_t n_pending_pos, cap_pending_pos;
	m_map parent_waits;  /* parent utid -> its first parent_wait + 1 */
	m_parent_wait *parent_wait;
	size_t n_parent_wait, cap_parent_wait;
	size_t n_waiting;    /* processes in parent_waits */
	int has_kernel;      /* the machine's SystemInfo named a Linux kernel */
	int kernel_major, kernel_minor;
} m_mach;

/* ---- tracks, slices, async sets, flows (per file and machine) ------------ */

typedef struct m_open {          /* a slice on a track's stack */
	uint64_t id;
	uint64_t seq;                /* the record that made it */
	int64_t ts, dur;             /* dur M_PENDING while open */
	uint32_t name, cat;
	uint32_t depth;
	tm_buf args;                 /* compact JSON members, without braces */
	struct m_argidx *argidx;     /* array indexes per key (GetNextArrayEntryIndex) */
	size_t n_argidx;
} m_open;

#define M_PENDING (-1)

/* The CPUs a machine's sched state covers: the reference's
 * kMaxCpusPerMachine (its import aborts beyond; systrace lines stop there,
 * SYSTRACE_MAX_CPUS, proto ftrace bundles at 1024). */
#define M_MAX_CPUS 4096u

typedef struct m_track {
	tm_mtrack pub;
	uint32_t name_id;
	m_open *stack;
	size_t depth, cap;
	int legacy_unnestable;       /* systrace S/F tracks */
	int64_t unnestable_begins, unnestable_last_ts;
	uint64_t *pending_flows;     /* FlowTracker pending_flow_ids_map_ */
	size_t n_pending_flows, cap_pending_flows;
} m_track;

/* A TrackCompressor set: tracks of one (blueprint, dimensions). */
typedef struct m_cstate {
	int type;                    /* 0 cookie, 1 timestamp, 2 nestable timestamp */
	uint32_t leaf;               /* its leaf in its set's index, UINT32_MAX none */
	int64_t cookie;
	int64_t nest_count;
	int64_t ts_end;
	int64_t *open_ends;
	size_t n_open, cap_open;
	uint32_t track;              /* model track, UINT32_MAX until interned */
} m_cstate;

typedef struct m_cset_ix m_cset_ix;

typedef struct m_cset {
	uint64_t key;                /* hash of (blueprint, dimensions) */
	m_cstate *tracks;
	size_t n, cap;
	m_cset_ix *ix;               /* once it has M_CSET_INDEXED tracks (model_slice.c) */
} m_cset;

typedef struct m_pending_sched {
	int64_t slice_idx;           /* -1 none (index into ctx->sched) */
	int64_t last_pid;
	int64_t last_utid;           /* -1: never */
	int32_t last_prio;
} m_pending_sched;

typedef struct m_sched_open {
	tm_msched row;
	int live;
} m_sched_open;

typedef struct m_ctx {
	uint32_t file_id, row;
	m_map thread_tracks;         /* utid -> track + 1 */
	m_map named_tracks;          /* hash(kind, dims) -> track + 1 */
	m_cset *csets;
	size_t n_csets, cap_csets;
	m_map cset_ix;               /* a set's key -> index + 1 into csets */
	m_map async_root_name;       /* TrackCompressor async_tracks_to_root_string_id_ */
	m_map flow_to_slice;         /* flow id -> index + 1 into flow_slices */
	uint64_t *flow_slice_id;
	int64_t *flow_slice_ts;
	size_t n_flow_slices, cap_flow_slices;
	m_map v1_flows;              /* hash(id, cat, name) -> flow id + 1 */
	uint64_t next_v1_flow;
	m_pending_sched *cpus;       /* by CPU, below M_MAX_CPUS */
	size_t n_cpus;
	m_sched_open *sched;         /* sched slices still open, indexed by slice_idx */
	size_t n_sched, cap_sched;
	int kernel_states;           /* sched end states are read with the machine's
				      * kernel version (a proto file's context) */
	void *parsed;                /* what its file's parser keeps per context
				      * (its tm_parser.ctx_free frees it), or NULL */
	uint8_t parsed_kind;         /* the record kind of that parser */
} m_ctx;

struct tm_model {
	tm_model_sink sink;
	/* rows of the reference's profiler_session table so far: perf.data
	 * attrs', proto perf sequences' and StackSample sequences' */
	uint32_t n_profiler_sessions;
	const tm_parser *parsers[TM_MREC_KINDS];  /* by record kind (tm_model_new) */
	/* what a parser keeps of the whole trace, by record kind: not of a
	 * context (a heap graph's sequence spans files, as the reference's
	 * HeapGraphTracker does); its tm_parser.state_free frees it */
	void *kind_state[TM_MREC_KINDS];
	m_strings str;
	m_mach *mach;
	size_t n_mach;
	uint32_t *mach_of_row;  /* machine row -> index in mach + 1, 0: none yet */
	size_t cap_mach_of_row;
	uint32_t n_files, n_rows; /* tm_model_bounds, 0: none given */
	m_thread *threads;           /* by utid, all machines */
	size_t n_threads, cap_threads;
	/* the threads the record being applied made or gave a process, in
	 * that order (tm_mobserved.made) */
	int64_t *made;
	size_t n_made, cap_made;
	m_process *procs;            /* by upid, all machines */
	size_t n_procs, cap_procs;
	m_proc_link *proc_links;     /* m_process.threads */
	size_t n_proc_links, cap_proc_links;
	m_track *tracks;
	size_t n_tracks, cap_tracks;
	m_ctx *ctxs;
	size_t n_ctxs, cap_ctxs;
	m_map ctx_index;             /* (file, row) -> ctx + 1 */
	m_map forked;                /* (file << 32 | row) of tm_model_fork */
	uint64_t next_slice;
	tm_statlist file_stats;      /* stats per trace file and machine */
	/* the JSON string-pid interning (the reference's StringPool raw ids) */
	m_map json_string_ids;       /* hash(string) -> id */
	int64_t next_string_pid;
	tm_buf scratch;
	int64_t cur_ts;              /* the record being applied */
	uint32_t cur_file, cur_row;  /* its trace file and machine: whom m_stat counts for */
	uint64_t cur_seq;            /* its index */
	int64_t cur_cpu;             /* its CPU (systrace), else -1 */
	uint64_t last_slice_id;      /* the slice the last m_slice_* call made or ended */
	int64_t last_slice_ts;
	/* stack profiles (core/model/stack.c) */
	tm_mmapping *mappings;
	size_t n_mappings, cap_mappings;
	tm_mframe *frames;
	size_t n_frames, cap_frames;
	tm_mcallsite *callsites;
	size_t n_callsites, cap_callsites;
	tm_maggregate *aggregates;
	size_t n_aggregates, cap_aggregates;
	tm_mheap_class *heap_classes;
	size_t n_heap_classes, cap_heap_classes;
};

/* Count a stat for the record being applied (its file and machine). */
void m_stat(tm_model *m, const char *name, int64_t add);
/* The same for an indexed stat (the reference's IncrementIndexedStats). */
void m_stat_idx(tm_model *m, const char *name, int idx, int64_t add);
/* SetIndexedStats: the value, not a sum */
void m_stat_idx_set(tm_model *m, const char *name, int idx, int64_t value);

/* Machines and threads (core/model/model_proc.c) */
m_mach *m_machine(tm_model *m, uint32_t row);
/* Kernel counters, read from a text line or a proto ftrace event alike: on
 * cpu's track named `name`; kCpuMax/MinFrequencyLimitBlueprint's ("Cpu N
 * Max Freq Limit"); on the global track "<key><suffix>", the suffix of
 * kClockFrequencyBlueprint, kClockStateBlueprint,
 * kThermalTemperatureBlueprint or kCoolingDeviceCounterBlueprint. */
#define M_CLOCK_FREQUENCY " Frequency"
#define M_CLOCK_STATE " State"
#define M_THERMAL_TEMPERATURE " Temperature"
#define M_COOLING_DEVICE " Cooling Device"
void m_counter_cpu(tm_model *m, m_ctx *c, const char *name, uint32_t cpu, int64_t ts, double v, uint32_t file);
void m_cpu_freq_limit(tm_model *m, m_ctx *c, int max, uint32_t cpu, int64_t ts, double v, uint32_t file);
void m_counter_keyed(tm_model *m, m_ctx *c, const char *key, const char *suffix, int64_t ts, double v, uint32_t file);

/* Log that thread utid was made, or given a process, by the record being
 * applied (tm_model.made). */
void m_made(tm_model *m, int64_t utid);
int64_t m_get_or_create_thread(tm_model *m, m_mach *mc, int64_t tid);
int64_t m_get_thread_or_null(tm_model *m, m_mach *mc, int64_t tid);
int64_t m_update_thread(tm_model *m, m_mach *mc, int64_t tid, int64_t pid);
int64_t m_get_or_create_process(tm_model *m, m_mach *mc, int64_t pid);
void m_update_thread_name(tm_model *m, int64_t utid, uint32_t name, int prio);
void m_update_process_name(tm_model *m, int64_t upid, uint32_t name, int prio);
void m_set_pid_zero_is_swapper(tm_model *m, m_mach *mc);
void m_end_thread(tm_model *m, m_mach *mc, int64_t ts, int64_t tid);
int64_t m_start_new_thread(tm_model *m, m_mach *mc, int64_t ts, int64_t tid);
/* StartNewProcess (ts -1: none; parent_upid -1: none) */
int64_t m_start_new_process(tm_model *m, m_mach *mc, int64_t ts, int64_t parent_upid, int64_t pid, uint32_t name,
			    int thread_prio);
void m_associate_threads(tm_model *m, m_mach *mc, int64_t utid1, int64_t utid2, int assoc_main);
/* AssociateCreatedProcessToParentThread */
void m_associate_created_process(tm_model *m, m_mach *mc, int64_t upid, int64_t parent_utid);
void m_set_process_parent(tm_model *m, int64_t upid, int64_t pupid);
void m_set_start_ts_if_unset(tm_model *m, int64_t upid, int64_t ts);
void m_update_thread_name_and_maybe_process_name(tm_model *m, int64_t utid, uint32_t name, int prio);

/* Tracks and slices (core/model/model_slice.c) */
m_ctx *m_context(tm_model *m, uint32_t file_id, uint32_t row);
uint32_t m_new_track(tm_model *m, m_ctx *c, tm_mtrack_kind kind, tm_mtrack_scope scope, int64_t utid,
		     int64_t upid, uint32_t name);
uint32_t m_thread_track(tm_model *m, m_ctx *c, int64_t utid);
/* A track interned by (kind, a, b, name): process instants, counters... */
uint32_t m_named_track(tm_model *m, m_ctx *c, tm_mtrack_kind kind, tm_mtrack_scope scope, int64_t utid,
		       int64_t upid, int64_t cpu, uint32_t name);
/* TrackCompressor: begin / end / instant of a cookie, and the scoped and
 * overlapping-scoped variants. `set_key` identifies (blueprint, dims). */
void m_cset_ix_free(m_cset_ix *ix);
void m_tid_index_free(m_tid_index *ix);
uint32_t m_compress_begin(tm_model *m, m_ctx *c, uint64_t set_key, int64_t cookie, int nestable,
			  tm_mtrack_kind kind, tm_mtrack_scope scope, int64_t upid, uint32_t name);
uint32_t m_compress_end(tm_model *m, m_ctx *c, uint64_t set_key, int64_t cookie, tm_mtrack_kind kind,
			tm_mtrack_scope scope, int64_t upid, uint32_t name);
uint32_t m_compress_scoped(tm_model *m, m_ctx *c, uint64_t set_key, int64_t ts, int64_t dur,
			   tm_mtrack_kind kind, tm_mtrack_scope scope, int64_t upid, uint32_t name);
/* The TrackCompressor for a factory made elsewhere (proto descriptor
 * tracks): Begin / End of a cookie, or the set's DefaultTrack. */
enum { M_COMPRESS_BEGIN, M_COMPRESS_END, M_COMPRESS_DEFAULT };
uint32_t m_compress_cookie(tm_model *m, m_ctx *c, uint64_t set_key, int op, int64_t cookie, tm_mtrack_kind kind,
			   tm_mtrack_scope scope, int64_t utid, int64_t upid, uint32_t name);
uint32_t m_compress_overlapping(tm_model *m, m_ctx *c, uint64_t set_key, int64_t ts, int64_t dur,
				tm_mtrack_kind kind, tm_mtrack_scope scope, int64_t utid, uint32_t name);

/* SliceTracker. Args are compact JSON members without braces (a JSON
 * event's tm_model_json_args_text, proto debug annotations already
 * rendered; NULL or empty adds none), kept only while a sink reads
 * slices. Returns the slice's stack index + 1, or 0 when no slice was made
 * / matched; m->last_slice_id / last_slice_ts name the slice begun or
 * ended (valid when the call returned non-zero). An overlap (may be NULL)
 * is told whether a complete slice was refused for overlapping partially. */
typedef struct m_overlap {
	int hit;
} m_overlap;
size_t m_slice_begin(tm_model *m, m_ctx *c, uint32_t track, int64_t ts, uint32_t cat, uint32_t name,
		     uint32_t file_id);
size_t m_slice_end(tm_model *m, m_ctx *c, uint32_t track, int64_t ts, uint32_t cat, uint32_t name);
size_t m_slice_scoped(tm_model *m, m_ctx *c, uint32_t track, int64_t ts, uint32_t cat, uint32_t name,
		      int64_t dur, m_overlap *overlap, uint32_t file_id);
size_t m_slice_begin_raw(tm_model *m, m_ctx *c, uint32_t track, int64_t ts, uint32_t cat, uint32_t name,
			 const char *args, size_t args_n, uint32_t file_id);
size_t m_slice_scoped_raw(tm_model *m, m_ctx *c, uint32_t track, int64_t ts, uint32_t cat, uint32_t name,
			  int64_t dur, const char *args, size_t args_n, m_overlap *overlap, uint32_t file_id);
size_t m_slice_end_raw(tm_model *m, m_ctx *c, uint32_t track, int64_t ts, uint32_t cat, uint32_t name,
		       const char *args, size_t args_n);
size_t m_slice_begin_unnestable(tm_model *m, m_ctx *c, uint32_t track, int64_t ts, uint32_t name,
				int64_t cookie, uint32_t file_id);
/* The topmost slice of a track: its id and ts, or 0. */
int m_slice_top(tm_model *m, uint32_t track, uint64_t *id, int64_t *ts);
/* Add `key: value` (raw JSON text) to the slice at stack index ix - 1. */
void m_slice_add_arg(tm_model *m, uint32_t track, size_t ix, const char *key, const char *json_value);
void m_slices_flush(tm_model *m);

/* FlowTracker */
void m_flow_begin_track(tm_model *m, m_ctx *c, uint32_t track, uint64_t flow);
void m_flow_step_track(tm_model *m, m_ctx *c, uint32_t track, uint64_t flow);
void m_flow_end_track(tm_model *m, m_ctx *c, uint32_t track, uint64_t flow, int bind_enclosing, int close);
void m_flow_begin_slice(tm_model *m, m_ctx *c, uint64_t slice, int64_t ts, uint64_t flow);
void m_flow_step_slice(tm_model *m, m_ctx *c, uint64_t slice, int64_t ts, uint64_t flow);
void m_flow_end_slice(tm_model *m, m_ctx *c, uint64_t slice, int64_t ts, uint64_t flow, int close);
uint64_t m_flow_v1_id(m_ctx *c, uint64_t source, uint32_t cat, uint32_t name);

/* Whether a slice's args are wanted: only the slice sink reads them (the
 * export takes each event's args from the event itself), so without one
 * they are not rendered. On the JSON bench's export that was 15% of the
 * model's work. */
static inline int m_wants_args(const tm_model *m)
{
	return m->sink.slice != NULL;
}

/* Counters */
void m_counter(tm_model *m, uint32_t track, int64_t ts, double value, uint32_t file_id);

/* Sched rows (core/model/sched.c): the running ones end with the input. */
void m_sched_flush(tm_model *m);
/* FtraceSchedEventTracker::PushSchedSwitchCompact / PushSchedWakingCompact
 * (only_raw: before the ftrace data is valid, the raw table only). */
void m_sched_switch_compact(tm_model *m, m_ctx *c, uint32_t cpu, int64_t ts, int64_t prev_state, int64_t next_pid,
			    const char *next_comm, int32_t next_prio, int only_raw, uint32_t file_id);
void m_sched_waking_compact(tm_model *m, m_ctx *c, uint32_t cpu, int64_t wakee_pid, int only_raw);
void m_sched_switch(tm_model *m, m_ctx *c, uint32_t cpu, int64_t ts, int64_t prev_pid, const char *prev_comm,
		    int32_t prev_prio, int64_t prev_state, int64_t next_pid, const char *next_comm, int32_t next_prio,
		    uint32_t file_id);
/* Stack profiles (core/model/stack.c). A dummy mapping of its own (the
 * reference's CreateDummyMapping: never shared); a frame of it by name
 * (InternDummyFrame); a callsite by (parent, frame) at depth
 * (InternCallsite; parent TM_NO_CALLSITE for a root). The frames and
 * callsites are looked up in an index of the caller's: the mappings of a
 * file are its own, so are their frames and the callsites made of them,
 * and one index per file is one that fits in the cache (one for the whole
 * model was a third of a perf script pass, in cache misses). An index
 * NULL: the caller knows the frame or callsite is new (its tokenizer
 * interned it). */
typedef struct m_stack_index {
	m_map frames;                /* mapping << 32 | name id -> frame + 1 */
	m_map callsites;             /* (parent + 1) << 32 | frame -> callsite + 1 */
} m_stack_index;
uint32_t m_stack_mapping(tm_model *m, const char *name, size_t n, uint32_t file_id);
uint32_t m_stack_frame(tm_model *m, m_stack_index *ix, uint32_t mapping, const char *name, size_t n);
uint32_t m_stack_callsite(tm_model *m, m_stack_index *ix, uint32_t parent, uint32_t frame, uint32_t depth);
/* A memory mapping (the reference's CreateUserMemoryMapping and
 * CreateKernelMemoryMapping make one per MMAP record): the fields of
 * *params, its name and file. A frame of an address in it (InternFrame
 * with no name: the caller keeps the index), `label` what the text views
 * show of it. */
uint32_t m_stack_memory_mapping(tm_model *m, const tm_mmapping *params, const char *name, size_t n, uint32_t file_id);
uint32_t m_stack_frame_at(tm_model *m, uint32_t mapping, uint64_t rel_pc, const char *label, size_t label_n);
/* What the text views show of a frame without a name (tm_mframe.label):
 * its mapping's last path component, or [unknown] for none, and the
 * address in it ("libc.so+0x400"), into out. */
void m_stack_label(const tm_model *m, uint32_t mapping, uint64_t rel_pc, tm_buf *out);
void m_stack_index_free(m_stack_index *ix);
/* A file's stacks as its tokenizer interned them and handed them over in
 * side records (in file order, before any sorted record): the file's ids
 * of frames and callsites, from 0, and the model's for them; its mappings
 * by name (the reference's tokenizers keep one dummy mapping per name and
 * file) and its default mapping, made once. */
typedef struct m_file_stacks {
	m_map by_name;               /* mapping name's string id -> mapping + 1 */
	uint32_t dflt;               /* the default mapping + 1, 0 until made */
	uint32_t *frame, *callsite;
	size_t n_frame, cap_frame, n_callsite, cap_callsite;
} m_file_stacks;
/* The file's next frame (`id` must be the count so far, else -1): in the
 * mapping named map[0..map_n), or, with map NULL, in the default mapping
 * named `dflt`. */
int m_file_stacks_frame(tm_model *m, m_file_stacks *fs, uint32_t id, const char *sym, size_t sym_n, const char *map,
			size_t map_n, const char *dflt, uint32_t file_id);
/* The file's next callsite (the same rule), parent UINT32_MAX for a root. */
int m_file_stacks_callsite(tm_model *m, m_file_stacks *fs, uint32_t id, uint32_t parent, uint32_t frame,
			   uint32_t depth);
/* The model's callsite of the file's `id`, or TM_NO_CALLSITE. */
uint32_t m_file_stacks_get(const m_file_stacks *fs, uint32_t id);
void m_file_stacks_free(m_file_stacks *fs);
/* A sample of the record being applied, to the sink. */
void m_sample(tm_model *m, int64_t ts, int64_t utid, uint32_t callsite, const char *source);
/* An aggregate sample of the record being applied (kept in the model:
 * side records come before the sinks exist). */
void m_aggregate(tm_model *m, uint32_t callsite, int64_t value);
/* A heap dump's class of the record being applied, with its objects. */
void m_heap_class(tm_model *m, const char *name, size_t n, uint64_t objects, int64_t bytes);
/* the same, of a trace file and machine other than the record's */
void m_heap_class_at(tm_model *m, const char *name, size_t n, uint64_t objects, int64_t bytes, uint32_t file_id,
		     uint32_t row);
void m_stack_free(tm_model *m);

#endif
