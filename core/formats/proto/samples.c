/* core/formats/proto/samples.c - a sequence's interned stack profile and a
 * sample's stack written out of it, on the tokenizer's side (samples.h).
 *
 * The rules are StackProfileSequenceState's (v58.2): a callstack's frames
 * from the root; a frame's function name (id 0: ""), its source path (a
 * frame that names one the sequence lacks has no stack), its mapping (id
 * 0: the dummy mapping of interned frames, named ""); a mapping's name
 * its path components each after a '/' ("//x" made "/x"), a missing
 * component ending the name, a missing build id failing the mapping. The
 * stats count each failure; a mapping once resolved for a process is not
 * resolved again, so its missing path component counts once. A
 * sequence's PerfSampleDefaults name its perf counters (pr_perf_defaults)
 * as PerfSampleTracker's InternCounterName does.
 *
 * The messages are read field by field on the wire (wire/proto.h): a
 * sample resolves every frame of its stack, and the scan reads millions;
 * protobuf-c would allocate each message it unpacks. */
#include "formats/proto/samples.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/model.h"
#include "trace.pb-c.h"
#include "util/hash.h"

/* The InternedData tables kept, each by iid. */
enum { IK_FUNCTION, IK_FRAME, IK_CALLSTACK, IK_BUILD_ID, IK_MAPPING_PATH, IK_MAPPING, IK_SOURCE_PATH,
       IK_TASK_CONTEXT, IK_EXEC_CONTEXT, IK_COUNTER, IK_N };

typedef struct entry {
	size_t off, len;
} entry;

struct pr_stacks {
	tm_u64map at[IK_N];     /* iid -> index of `e` */
	entry *e;
	size_t n, cap;
	tm_buf pool;
	tm_u64map mapped;       /* (process, mapping iid) resolved once */
	tm_buf name;            /* a mapping's name being made */
};

static const uint32_t interned_field[IK_N] = {
	[IK_FUNCTION] = F_InternedData_function_names,
	[IK_FRAME] = F_InternedData_frames,
	[IK_CALLSTACK] = F_InternedData_callstacks,
	[IK_BUILD_ID] = F_InternedData_build_ids,
	[IK_MAPPING_PATH] = F_InternedData_mapping_paths,
	[IK_MAPPING] = F_InternedData_mappings,
	[IK_SOURCE_PATH] = F_InternedData_source_paths,
	[IK_TASK_CONTEXT] = F_InternedData_stack_sample_task_contexts,
	[IK_EXEC_CONTEXT] = F_InternedData_stack_sample_execution_contexts,
	[IK_COUNTER] = F_InternedData_stack_sample_counter_descriptors,
};

/* InternedString tables keep the string, the others the message. */
static int is_string_kind(int k)
{
	return k == IK_FUNCTION || k == IK_BUILD_ID || k == IK_MAPPING_PATH || k == IK_SOURCE_PATH;
}

/* An entry interned again keeps its first value (the reference's
 * emplace): 0, else the bytes kept. */
static size_t put(pr_stacks *s, int kind, uint64_t iid, tm_span v)
{
	if (tm_u64map_get(&s->at[kind], iid))
		return 0;
	TM_GROW(s->e, s->cap, s->n + 1);
	size_t k = s->n++;
	tm_u64map_put(&s->at[kind], iid, (uint32_t)k);
	s->e[k].off = s->pool.len;
	s->e[k].len = v.n;
	if (v.n)
		tm_buf_put(&s->pool, v.p, v.n);
	return v.n;
}

static int get(const pr_stacks *s, int kind, uint64_t iid, tm_span *v)
{
	const uint32_t *ix = s ? tm_u64map_get(&s->at[kind], iid) : NULL;
	if (!ix)
		return 0;
	const entry *e = &s->e[*ix - 1];
	v->p = (const uint8_t *)(s->pool.data ? s->pool.data + e->off : "");
	v->n = e->len;
	return 1;
}

void pr_stacks_intern(pr_stacks **sp, tm_span interned_data, size_t *budget)
{
	tm_pb_iter it;
	tm_pb_field f;
	tm_pb_iter_init(&it, interned_data);
	while (tm_pb_next(&it, &f) == 1) {
		if (f.wire != TM_PB_LEN)
			continue;
		int kind = -1;
		for (int k = 0; k < IK_N; k++)
			if (interned_field[k] == f.id)
				kind = k;
		if (kind < 0 || f.data.n > *budget)
			continue;
		uint64_t iid = 0;
		tm_span v = is_string_kind(kind) ? (tm_span){(const uint8_t *)"", 0} : f.data;
		tm_pb_iter in;
		tm_pb_field g;
		tm_pb_iter_init(&in, f.data);
		while (tm_pb_next(&in, &g) == 1) {
			if (g.id == F_InternedString_iid && g.wire == TM_PB_VARINT)
				iid = g.val;
			else if (is_string_kind(kind) && g.id == F_InternedString_str && g.wire == TM_PB_LEN)
				v = g.data;
		}
		if (!*sp)
			*sp = tm_xcalloc(1, sizeof **sp);
		*budget -= put(*sp, kind, iid, v);
	}
}

size_t pr_stacks_clear(pr_stacks *s)
{
	if (!s)
		return 0;
	size_t kept = s->pool.len;
	for (int k = 0; k < IK_N; k++)
		tm_u64map_clear(&s->at[k]);
	tm_u64map_clear(&s->mapped);
	s->n = 0;
	s->pool.len = 0;
	return kept;
}

void pr_stacks_free(pr_stacks *s)
{
	if (!s)
		return;
	for (int k = 0; k < IK_N; k++)
		tm_u64map_free(&s->at[k]);
	tm_u64map_free(&s->mapped);
	free(s->e);
	tm_buf_free(&s->pool);
	tm_buf_free(&s->name);
	free(s);
}

/* The last field `id` of msg, as a LEN field (a message, a string or a
 * packed run): 0 when it has none. */
static int last_len(tm_span msg, uint32_t id, tm_span *out)
{
	int has = 0;
	tm_pb_iter it;
	tm_pb_field f;
	tm_pb_iter_init(&it, msg);
	while (tm_pb_next(&it, &f) == 1)
		if (f.id == id && f.wire == TM_PB_LEN) {
			has = 1;
			*out = f.data;
		}
	return has;
}

/* ---- the perf counters' names ---------------------------------------------- */

/* StringifyCounter: perf's own names of PerfEvents.Counter. */
static const char *const counter_names[] = {
	[PERFETTO__PROTOS__PERF_EVENTS__COUNTER__SW_CPU_CLOCK] = "cpu-clock",
	[PERFETTO__PROTOS__PERF_EVENTS__COUNTER__SW_PAGE_FAULTS] = "page-faults",
	[PERFETTO__PROTOS__PERF_EVENTS__COUNTER__SW_TASK_CLOCK] = "task-clock",
	[PERFETTO__PROTOS__PERF_EVENTS__COUNTER__SW_CONTEXT_SWITCHES] = "context-switches",
	[PERFETTO__PROTOS__PERF_EVENTS__COUNTER__SW_CPU_MIGRATIONS] = "cpu-migrations",
	[PERFETTO__PROTOS__PERF_EVENTS__COUNTER__SW_PAGE_FAULTS_MIN] = "minor-faults",
	[PERFETTO__PROTOS__PERF_EVENTS__COUNTER__SW_PAGE_FAULTS_MAJ] = "major-faults",
	[PERFETTO__PROTOS__PERF_EVENTS__COUNTER__SW_ALIGNMENT_FAULTS] = "alignment-faults",
	[PERFETTO__PROTOS__PERF_EVENTS__COUNTER__SW_EMULATION_FAULTS] = "emulation-faults",
	[PERFETTO__PROTOS__PERF_EVENTS__COUNTER__SW_DUMMY] = "dummy",
	[PERFETTO__PROTOS__PERF_EVENTS__COUNTER__HW_CPU_CYCLES] = "cpu-cycles",
	[PERFETTO__PROTOS__PERF_EVENTS__COUNTER__HW_INSTRUCTIONS] = "instructions",
	[PERFETTO__PROTOS__PERF_EVENTS__COUNTER__HW_CACHE_REFERENCES] = "cache-references",
	[PERFETTO__PROTOS__PERF_EVENTS__COUNTER__HW_CACHE_MISSES] = "cache-misses",
	[PERFETTO__PROTOS__PERF_EVENTS__COUNTER__HW_BRANCH_INSTRUCTIONS] = "branch-instructions",
	[PERFETTO__PROTOS__PERF_EVENTS__COUNTER__HW_BRANCH_MISSES] = "branch-misses",
	[PERFETTO__PROTOS__PERF_EVENTS__COUNTER__HW_BUS_CYCLES] = "bus-cycles",
	[PERFETTO__PROTOS__PERF_EVENTS__COUNTER__HW_STALLED_CYCLES_FRONTEND] = "stalled-cycles-frontend",
	[PERFETTO__PROTOS__PERF_EVENTS__COUNTER__HW_STALLED_CYCLES_BACKEND] = "stalled-cycles-backend",
	[PERFETTO__PROTOS__PERF_EVENTS__COUNTER__HW_REF_CPU_CYCLES] = "ref-cycles",
};

static const char *counter_name(uint64_t counter)
{
	/* the enum is read as an int32, as the reference's decoder does */
	int32_t c = (int32_t)(uint32_t)counter;
	if (c < 0 || (size_t)c >= sizeof counter_names / sizeof counter_names[0] || !counter_names[c])
		return "unknown";
	return counter_names[c];
}

/* InternCounterName of a PerfEvents.Timebase or FollowerEvent (their
 * field numbers in `id`), appended to b as a record string: the explicit
 * name, else the counter's, the tracepoint's or the raw event's
 * ("raw.0x<type>.0x<config>.0x<config1>.0x<config2>"), else "unknown";
 * then ':' and the modifiers' letters (u, k, h) if it has any. Of a field
 * given twice, the last counts. */
typedef struct event_fields {
	uint32_t name, counter, tracepoint, raw_event, modifiers;
} event_fields;

static void event_name(tm_span msg, const event_fields *id, tm_buf *b)
{
	tm_span name = {0}, tracepoint = {0}, raw = {0};
	int has_counter = 0, has_tracepoint = 0, has_raw = 0;
	uint64_t counter = 0;
	char mods[64];
	size_t n_mods = 0;
	tm_pb_iter it;
	tm_pb_field f;
	tm_pb_iter_init(&it, msg);
	while (tm_pb_next(&it, &f) == 1) {
		if (f.id == id->name && f.wire == TM_PB_LEN) {
			name = f.data;
		} else if (f.id == id->counter && f.wire == TM_PB_VARINT) {
			has_counter = 1;
			counter = f.val;
		} else if (f.id == id->tracepoint && f.wire == TM_PB_LEN) {
			has_tracepoint = 1;
			tracepoint = f.data;
		} else if (f.id == id->raw_event && f.wire == TM_PB_LEN) {
			has_raw = 1;
			raw = f.data;
		} else if (f.id == id->modifiers && f.wire == TM_PB_VARINT && n_mods < sizeof mods) {
			int32_t mod = (int32_t)(uint32_t)f.val;
			if (mod == PERFETTO__PROTOS__PERF_EVENTS__EVENT_MODIFIER__EVENT_MODIFIER_COUNT_USERSPACE)
				mods[n_mods++] = 'u';
			else if (mod == PERFETTO__PROTOS__PERF_EVENTS__EVENT_MODIFIER__EVENT_MODIFIER_COUNT_KERNEL)
				mods[n_mods++] = 'k';
			else if (mod == PERFETTO__PROTOS__PERF_EVENTS__EVENT_MODIFIER__EVENT_MODIFIER_COUNT_HYPERVISOR)
				mods[n_mods++] = 'h';
		}
	}
	char text[128];
	const char *p = "unknown";
	size_t n = strlen(p);
	if (name.n) {
		p = (const char *)name.p;
		n = name.n;
	} else if (has_counter) {
		p = counter_name(counter);
		n = strlen(p);
	} else if (has_tracepoint) {
		tm_span tp_name = {(const uint8_t *)"", 0};
		last_len(tracepoint, F_PerfEvents_Tracepoint_name, &tp_name);
		p = (const char *)tp_name.p;
		n = tp_name.n;
	} else if (has_raw) {
		uint64_t v[5] = {0};
		tm_pb_iter_init(&it, raw);
		while (tm_pb_next(&it, &f) == 1)
			if (f.wire == TM_PB_VARINT && f.id >= F_PerfEvents_RawEvent_type && f.id <= F_PerfEvents_RawEvent_config2)
				v[f.id] = f.val;
		int w = snprintf(text, sizeof text, "raw.0x%" PRIx32 ".0x%" PRIx64 ".0x%" PRIx64 ".0x%" PRIx64,
				 (uint32_t)v[F_PerfEvents_RawEvent_type], v[F_PerfEvents_RawEvent_config],
				 v[F_PerfEvents_RawEvent_config1], v[F_PerfEvents_RawEvent_config2]);
		p = text;
		n = w > 0 ? (size_t)w : 0;
	}
	uint32_t len = (uint32_t)(n + (n_mods ? 1 + n_mods : 0));
	tm_buf_put(b, &len, sizeof len);
	tm_buf_put(b, p, n);
	if (n_mods) {
		tm_buf_putc(b, ':');
		tm_buf_put(b, mods, n_mods);
	}
}

int pr_perf_defaults(tm_span defaults, tm_buf *names, pr_perf_names *out)
{
	static const event_fields timebase = {F_PerfEvents_Timebase_name, F_PerfEvents_Timebase_counter,
					      F_PerfEvents_Timebase_tracepoint, F_PerfEvents_Timebase_raw_event,
					      F_PerfEvents_Timebase_modifiers};
	static const event_fields follower = {F_FollowerEvent_name, F_FollowerEvent_counter,
					      F_FollowerEvent_tracepoint, F_FollowerEvent_raw_event,
					      F_FollowerEvent_modifiers};
	tm_span perf;
	names->len = 0;
	memset(out, 0, sizeof *out);
	if (!last_len(defaults, F_TracePacketDefaults_perf_sample_defaults, &perf))
		return 0;
	tm_pb_iter it;
	tm_pb_field f;
	tm_span tb = {(const uint8_t *)"", 0};
	tm_pb_iter_init(&it, perf);
	while (tm_pb_next(&it, &f) == 1) {
		if (f.id == F_PerfSampleDefaults_timebase && f.wire == TM_PB_LEN)
			tb = f.data;
		else if (f.id == F_PerfSampleDefaults_process_shard_count && f.wire == TM_PB_VARINT)
			out->shard_count = (uint32_t)f.val;
		else if (f.id == F_PerfSampleDefaults_chosen_process_shard && f.wire == TM_PB_VARINT)
			out->chosen_shard = (uint32_t)f.val;
	}
	event_name(tb, &timebase, names);
	tm_pb_iter_init(&it, perf);
	while (tm_pb_next(&it, &f) == 1)
		if (f.id == F_PerfSampleDefaults_followers && f.wire == TM_PB_LEN) {
			event_name(f.data, &follower, names);
			out->n_followers++;
		}
	out->has = 1;
	out->names = names->data;
	out->len = names->len;
	return 1;
}

/* ---- a stack written out ---------------------------------------------------- */

typedef struct resolve {
	pr_stacks *s;
	int has_pid;
	int64_t pid;
	tm_pr_sample *r;
	tm_buf *b;
	size_t frames_at;       /* where the record's frames begin in b */
	uint32_t n_strs;        /* the frames' strings written so far */
	tm_u64map names, maps;  /* past TM_PR_DEDUP_AFTER: function name and
				   mapping iids -> their string's index */
} resolve;

/* A frame's string (iid: its function name's or mapping's, 0 for none):
 * written out, or once the frames hold TM_PR_DEDUP_AFTER bytes, the index
 * of the same iid's string written before (samples.h). */
static void put_frame_str(resolve *rs, tm_u64map *seen, uint64_t iid, const char *p, size_t n)
{
	uint32_t at = rs->n_strs++;
	if (iid && rs->b->len - rs->frames_at > TM_PR_DEDUP_AFTER) {
		const uint32_t *v = tm_u64map_get(seen, iid);
		if (v) {
			uint32_t again[2] = {TM_PR_STR_AGAIN, *v - 1};
			tm_buf_put(rs->b, again, sizeof again);
			return;
		}
		tm_u64map_put(seen, iid, at);
	}
	tm_mrec_put_str(rs->b, p, n);
}

static void count(tm_pr_sample *r, int st)
{
	if (r->stats[st] < UINT32_MAX)
		r->stats[st]++;
}

/* FindOrInsertMappingImpl: its name into rs->s->name; 0 when it fails. */
static int mapping_name(resolve *rs, uint64_t iid)
{
	tm_span msg, v;
	if (!get(rs->s, IK_MAPPING, iid, &msg)) {
		count(rs->r, TM_PR_ST_MAPPING);
		return 0;
	}
	/* keyed: (iid, pid) pairs that an input made collide under a fixed
	 * hash were taken for each other, and a stat went uncounted */
	uint64_t key = tm_khash_pair(iid, rs->has_pid ? (uint64_t)rs->pid + 1 : 0);
	int again = tm_u64map_get(&rs->s->mapped, key) != NULL;
	tm_buf *n = &rs->s->name;
	n->len = 0;
	uint64_t build_id = 0;
	int ended = 0;
	tm_pb_iter it;
	tm_pb_field f;
	tm_pb_iter_init(&it, msg);
	while (tm_pb_next(&it, &f) == 1) {
		if (f.id == F_Mapping_build_id && f.wire == TM_PB_VARINT) {
			build_id = f.val;
		} else if (f.id == F_Mapping_path_string_ids && !ended) {
			tm_pb_values vs;
			uint64_t id;
			tm_pb_values_init(&vs, &f);
			while (!ended && tm_pb_values_next(&vs, &id)) {
				if (!get(rs->s, IK_MAPPING_PATH, id, &v)) {
					if (!again)
						count(rs->r, TM_PR_ST_STRING);
					ended = 1;
					break;
				}
				tm_buf_putc(n, '/');
				tm_buf_put(n, v.p, v.n);
			}
		}
	}
	if (build_id && !get(rs->s, IK_BUILD_ID, build_id, &v)) {
		count(rs->r, TM_PR_ST_STRING);
		return 0;
	}
	if (n->len >= 2 && n->data[0] == '/' && n->data[1] == '/') {
		memmove(n->data, n->data + 1, n->len - 1);
		n->len--;
		n->data[n->len] = '\0';
	}
	if (!again)
		tm_u64map_put(&rs->s->mapped, key, 1);
	return 1;
}

/* FindOrInsertFrame: the frame appended to rs->b; 0 when it fails. */
static int frame(resolve *rs, uint64_t iid)
{
	tm_span msg, name = {(const uint8_t *)"", 0}, v;
	if (!get(rs->s, IK_FRAME, iid, &msg)) {
		count(rs->r, TM_PR_ST_FRAME);
		return 0;
	}
	uint64_t fn = 0, mapping = 0, rel_pc = 0, source = 0;
	int has_source = 0;
	tm_pb_iter it;
	tm_pb_field f;
	tm_pb_iter_init(&it, msg);
	while (tm_pb_next(&it, &f) == 1) {
		if (f.wire != TM_PB_VARINT)
			continue;
		if (f.id == F_Frame_function_name_id)
			fn = f.val;
		else if (f.id == F_Frame_mapping_id)
			mapping = f.val;
		else if (f.id == F_Frame_rel_pc)
			rel_pc = f.val;
		else if (f.id == F_Frame_source_path_iid) {
			has_source = 1;
			source = f.val;
		}
	}
	if (fn && !get(rs->s, IK_FUNCTION, fn, &name)) {
		count(rs->r, TM_PR_ST_STRING);
		return 0;
	}
	if (has_source && !source)
		return 0; /* LookupInternedSourcePath of iid 0: nothing, no stat */
	if (has_source && !get(rs->s, IK_SOURCE_PATH, source, &v)) {
		count(rs->r, TM_PR_ST_STRING);
		return 0;
	}
	/* a mapping this record wrote out already is the same again, and
	 * counts nothing again: made once (its path may be long) */
	int again = mapping && rs->b->len - rs->frames_at > TM_PR_DEDUP_AFTER && tm_u64map_get(&rs->maps, mapping);
	if (!again) {
		rs->s->name.len = 0;
		if (mapping && !mapping_name(rs, mapping))
			return 0;
	}
	put_frame_str(rs, &rs->names, fn, (const char *)name.p, name.n);
	put_frame_str(rs, &rs->maps, mapping, rs->s->name.data ? rs->s->name.data : "", rs->s->name.len);
	tm_buf_put(rs->b, &rel_pc, sizeof rel_pc);
	return 1;
}

/* FindOrInsertCallstack: the frames after the record's head. */
static void callstack(resolve *rs, uint64_t iid)
{
	tm_span msg;
	if (!get(rs->s, IK_CALLSTACK, iid, &msg)) {
		count(rs->r, TM_PR_ST_CALLSTACK);
		return;
	}
	size_t frames_at = rs->b->len;
	rs->frames_at = frames_at;
	rs->n_strs = 0;
	uint32_t n = 0;
	tm_pb_iter it;
	tm_pb_field f;
	tm_pb_iter_init(&it, msg);
	while (tm_pb_next(&it, &f) == 1) {
		if (f.id != F_Callstack_frame_ids)
			continue;
		tm_pb_values vs;
		uint64_t id;
		tm_pb_values_init(&vs, &f);
		while (tm_pb_values_next(&vs, &id)) {
			if (!frame(rs, id))
				goto failed;
			n++;
		}
	}
	if (!n) {
		count(rs->r, TM_PR_ST_EMPTY);
		return;
	}
	rs->r->has_stack = 1;
	rs->r->n_frames = n;
	return;
failed:
	rs->b->len = frames_at;
}

/* StackSample's written-out stack: dummy frames of the mapping
 * "stack_sample_inline" (an empty one is no stack: no stat). */
static void inline_callstack(resolve *rs, tm_span msg)
{
	static const char mapping[] = "stack_sample_inline";
	uint32_t n = 0;
	tm_pb_iter it;
	tm_pb_field f;
	tm_pb_iter_init(&it, msg);
	while (tm_pb_next(&it, &f) == 1) {
		if (f.id != F_InlineCallstack_frames || f.wire != TM_PB_LEN)
			continue;
		tm_span name = {(const uint8_t *)"", 0};
		tm_pb_iter in;
		tm_pb_field g;
		tm_pb_iter_init(&in, f.data);
		while (tm_pb_next(&in, &g) == 1)
			if (g.id == F_InlineCallstack_Frame_function_name && g.wire == TM_PB_LEN)
				name = g.data;
		uint64_t rel_pc = 0;
		tm_mrec_put_str(rs->b, (const char *)name.p, name.n);
		tm_mrec_put_str(rs->b, mapping, sizeof mapping - 1);
		tm_buf_put(rs->b, &rel_pc, sizeof rel_pc);
		n++;
	}
	rs->r->has_stack = n > 0;
	rs->r->n_frames = n;
}

/* A StackSample.TaskContext's pid and tid. */
static void task_context(tm_pr_sample *r, tm_span msg)
{
	tm_pb_iter it;
	tm_pb_field f;
	tm_pb_iter_init(&it, msg);
	while (tm_pb_next(&it, &f) == 1) {
		if (f.wire != TM_PB_VARINT)
			continue;
		if (f.id == F_StackSample_TaskContext_pid) {
			r->has_pid = 1;
			r->pid = (uint32_t)f.val;
		} else if (f.id == F_StackSample_TaskContext_tid) {
			r->has_tid = 1;
			r->tid = (uint32_t)f.val;
		}
	}
}

/* ---- a StackSample's counters -------------------------------------------------- */

/* A counter descriptor's slot: none when it does not resolve. */
typedef struct slot {
	int ok;
	tm_span desc;
} slot;

/* The value of a CounterDescriptor's counter appended to b (a
 * tm_pr_counter and its name), unless it is per CPU and the sample has
 * none (InternCounterTrack makes no track then). */
static void counter_value(tm_pr_sample *r, tm_span desc, int has_cpu, uint32_t cpu, uint64_t value, tm_buf *b)
{
	tm_span name = {(const uint8_t *)"", 0};
	uint64_t scope = PERFETTO__PROTOS__STACK_SAMPLE__COUNTER_DESCRIPTOR__SCOPE__SCOPE_GLOBAL;
	tm_pb_iter it;
	tm_pb_field f;
	tm_pb_iter_init(&it, desc);
	while (tm_pb_next(&it, &f) == 1) {
		if (f.id == F_StackSample_CounterDescriptor_name && f.wire == TM_PB_LEN)
			name = f.data;
		else if (f.id == F_StackSample_CounterDescriptor_scope && f.wire == TM_PB_VARINT)
			scope = f.val;
	}
	int per_cpu = (int32_t)(uint32_t)scope == PERFETTO__PROTOS__STACK_SAMPLE__COUNTER_DESCRIPTOR__SCOPE__SCOPE_CPU;
	if (per_cpu && !has_cpu)
		return;
	tm_pr_counter c = {value, per_cpu ? cpu : TM_PR_SESSION_SCOPE};
	tm_buf_put(b, &c, sizeof c);
	tm_mrec_put_str(b, (const char *)name.p, name.n);
	r->n_counts++;
}

/* StackSampleModule::ParseCounterValues: the primary descriptor inline,
 * interned or the defaults', its weight; the followers' descriptors
 * inline, else interned (one that does not resolve keeps its place),
 * else the defaults', paired with the follower weights by position. The
 * sample's CPU is its execution context's, inline or interned. */
static void stack_counters(pr_stacks *s, tm_pr_sample *r, tm_span msg, const pr_seq_defaults *d, tm_buf *b)
{
	int has_exec = 0, has_exec_iid = 0, has_primary = 0, has_primary_iid = 0, has_weight = 0;
	int has_cpu = 0, has_followers = 0;
	uint64_t exec_iid = 0, primary_iid = 0, weight = 0;
	uint32_t cpu = 0;
	tm_span exec = {0}, primary = {0}, v;
	tm_pb_iter it;
	tm_pb_field f;
	tm_pb_iter_init(&it, msg);
	while (tm_pb_next(&it, &f) == 1) {
		if (f.id == F_StackSample_execution_context && f.wire == TM_PB_LEN) {
			has_exec = 1;
			exec = f.data;
		} else if (f.id == F_StackSample_execution_context_iid && f.wire == TM_PB_VARINT) {
			has_exec_iid = 1;
			exec_iid = f.val;
		} else if (f.id == F_StackSample_primary_descriptor && f.wire == TM_PB_LEN) {
			has_primary = 1;
			primary = f.data;
		} else if (f.id == F_StackSample_primary_descriptor_iid && f.wire == TM_PB_VARINT) {
			has_primary_iid = 1;
			primary_iid = f.val;
		} else if (f.id == F_StackSample_primary_weight && f.wire == TM_PB_VARINT) {
			has_weight = 1;
			weight = f.val;
		} else if (f.id == F_StackSample_follower_descriptors && f.wire == TM_PB_LEN) {
			has_followers = 1;
		}
	}
	if (!has_exec && has_exec_iid && get(s, IK_EXEC_CONTEXT, exec_iid, &v)) {
		has_exec = 1;
		exec = v;
	}
	if (has_exec) {
		tm_pb_iter_init(&it, exec);
		while (tm_pb_next(&it, &f) == 1)
			if (f.id == F_StackSample_ExecutionContext_cpu && f.wire == TM_PB_VARINT) {
				has_cpu = 1;
				cpu = (uint32_t)f.val;
			}
	}
	int has_defaults = d && d->has_stack;
	int primary_ok = has_primary;
	if (!has_primary && has_primary_iid)
		primary_ok = get(s, IK_COUNTER, primary_iid, &primary);
	else if (!has_primary && has_defaults)
		primary_ok = last_len(d->stack, F_StackSampleDefaults_primary_descriptor, &primary);
	if (primary_ok && has_weight)
		counter_value(r, primary, has_cpu, cpu, weight, b);

	TM_VEC(slot) slots = {0};
	tm_span run;
	if (has_followers) {
		tm_pb_iter_init(&it, msg);
		while (tm_pb_next(&it, &f) == 1)
			if (f.id == F_StackSample_follower_descriptors && f.wire == TM_PB_LEN) {
				TM_GROW(slots.v, slots.cap, slots.n + 1);
				slots.v[slots.n++] = (slot){1, f.data};
			}
	} else if (last_len(msg, F_StackSample_follower_descriptor_iids, &run)) {
		tm_pb_field packed = {.id = F_StackSample_follower_descriptor_iids, .wire = TM_PB_LEN, .data = run};
		tm_pb_values vs;
		uint64_t iid;
		tm_pb_values_init(&vs, &packed);
		while (tm_pb_values_next(&vs, &iid)) {
			TM_GROW(slots.v, slots.cap, slots.n + 1);
			slot *sl = &slots.v[slots.n++];
			sl->ok = get(s, IK_COUNTER, iid, &sl->desc);
		}
	}
	if (!slots.n && has_defaults) {
		tm_pb_iter_init(&it, d->stack);
		while (tm_pb_next(&it, &f) == 1)
			if (f.id == F_StackSampleDefaults_follower_descriptors && f.wire == TM_PB_LEN) {
				TM_GROW(slots.v, slots.cap, slots.n + 1);
				slots.v[slots.n++] = (slot){1, f.data};
			}
	}
	if (slots.n && last_len(msg, F_StackSample_follower_weights, &run)) {
		tm_pb_field packed = {.id = F_StackSample_follower_weights, .wire = TM_PB_LEN, .data = run};
		tm_pb_values vs;
		uint64_t w;
		size_t i = 0;
		tm_pb_values_init(&vs, &packed);
		for (; i < slots.n && tm_pb_values_next(&vs, &w); i++)
			if (slots.v[i].ok)
				counter_value(r, slots.v[i].desc, has_cpu, cpu, w, b);
	}
	free(slots.v);
}

void pr_sample_record(pr_stacks *s, uint32_t field, tm_span msg, uint64_t streaming_iid, int64_t thread_pid,
		      int64_t thread_tid, uint32_t seq, const pr_seq_defaults *d, tm_buf *b)
{
	tm_pr_sample r;
	memset(&r, 0, sizeof r);
	resolve rs = {.s = s, .r = &r, .b = b};
	size_t head_at = b->len;
	tm_buf_put(b, &r, sizeof r);
	r.seq = seq;
	int has_iid = 0, has_inline = 0, has_task = 0, has_task_iid = 0;
	uint64_t iid = 0, task_iid = 0;
	tm_span inline_stack = {0}, task = {0};
	tm_pb_iter it;
	tm_pb_field f;
	tm_pb_iter_init(&it, msg);
	if (field == F_TracePacket_streaming_profile_packet) {
		r.source = TM_PR_SRC_CHROME;
		r.has_pid = r.has_tid = 1;
		r.pid = (uint32_t)thread_pid;
		r.tid = (uint32_t)thread_tid;
		has_iid = 1;
		iid = streaming_iid;
		tm_mrec_put_str(b, NULL, UINT32_MAX);
	} else if (field == F_TracePacket_perf_sample) {
		/* UpdateThread(tid, pid) of what the sample says, 0 if nothing */
		r.source = TM_PR_SRC_PERF;
		r.has_pid = r.has_tid = 1;
		while (tm_pb_next(&it, &f) == 1) {
			switch (f.id) {
			case F_PerfSample_cpu:
				r.has_cpu = 1;
				r.cpu = (uint32_t)f.val;
				break;
			case F_PerfSample_pid:
				r.pid = (uint32_t)f.val;
				break;
			case F_PerfSample_tid:
				r.tid = (uint32_t)f.val;
				break;
			case F_PerfSample_callstack_iid:
				has_iid = 1;
				iid = f.val;
				break;
			case F_PerfSample_kernel_records_lost:
				r.lost = f.val;
				break;
			case F_PerfSample_sample_skipped_reason:
				r.has_skip = 1;
				r.skip = (uint32_t)f.val;
				break;
			case F_PerfSample_producer_event:
				r.producer_event = 1;
				r.guardrail = 0;
				if (f.wire == TM_PB_LEN) {
					tm_pb_iter in;
					tm_pb_field g;
					tm_pb_iter_init(&in, f.data);
					while (tm_pb_next(&in, &g) == 1)
						if (g.id == F_PerfSample_ProducerEvent_source_stop_reason &&
						    g.wire == TM_PB_VARINT)
							r.guardrail = (int32_t)(uint32_t)g.val ==
								      PERFETTO__PROTOS__PERF_SAMPLE__PRODUCER_EVENT__DATA_SOURCE_STOP_REASON__PROFILER_STOP_GUARDRAIL;
				}
				break;
			case F_PerfSample_timebase_count:
				if (f.wire == TM_PB_VARINT) {
					r.has_count = 1;
					r.count = f.val;
				}
				break;
			}
		}
		tm_mrec_put_str(b, NULL, UINT32_MAX);
		/* the follower counts, then the sequence's counter names */
		tm_pb_iter_init(&it, msg);
		while (tm_pb_next(&it, &f) == 1)
			if (f.id == F_PerfSample_follower_counts && f.wire == TM_PB_VARINT) {
				tm_buf_put(b, &f.val, sizeof f.val);
				r.n_counts++;
			}
		const pr_perf_names *perf = d ? &d->perf : NULL;
		if (perf && perf->has) {
			r.has_defaults = 1;
			r.n_followers = perf->n_followers;
			r.shard_count = perf->shard_count;
			r.chosen_shard = perf->chosen_shard;
			tm_buf_put(b, perf->names, perf->len);
		}
	} else {
		r.source = TM_PR_SRC_STACK;
		/* the last of each field; of a oneof's two, the reference asks
		 * for the inline task context first and the interned stack
		 * first, whatever their order */
		while (tm_pb_next(&it, &f) == 1) {
			if (f.id == F_StackSample_task_context && f.wire == TM_PB_LEN) {
				has_task = 1;
				task = f.data;
			} else if (f.id == F_StackSample_task_context_iid && f.wire == TM_PB_VARINT) {
				has_task_iid = 1;
				task_iid = f.val;
			} else if (f.id == F_StackSample_callstack_iid && f.wire == TM_PB_VARINT) {
				has_iid = 1;
				iid = f.val;
			} else if (f.id == F_StackSample_callstack && f.wire == TM_PB_LEN) {
				has_inline = 1;
				inline_stack = f.data;
			}
		}
		tm_span tc;
		if (has_task)
			task_context(&r, task);
		else if (has_task_iid && get(s, IK_TASK_CONTEXT, task_iid, &tc))
			task_context(&r, tc);
		if (has_iid)
			has_inline = 0;
		const char *source = d ? d->stack_source : NULL;
		tm_mrec_put_str(b, source, source ? d->source_len : UINT32_MAX);
		stack_counters(s, &r, msg, d, b);
	}
	rs.has_pid = r.has_pid;
	rs.pid = r.pid;
	int not_sample = r.lost > 0 || r.producer_event;
	if (!not_sample && has_iid)
		callstack(&rs, iid);
	else if (!not_sample && has_inline)
		inline_callstack(&rs, inline_stack);
	memcpy(b->data + head_at, &r, sizeof r);
	tm_u64map_free(&rs.names);
	tm_u64map_free(&rs.maps);
}
