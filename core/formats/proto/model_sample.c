/* core/formats/proto/model_sample.c - a proto file's stack samples into the
 * tables (samples.h), as ProfileModule::ParsePerfSample,
 * ParseStreamingProfileSample and StackSampleModule::ParseStackSample do
 * it (v58.2): the stats resolving the stack counted, the thread and
 * process made, the stack interned as callsites, the sample handed to the
 * sink (source "linux.perf", "chrome", or the StackSample's own); a
 * PerfSample's counter values on its session's tracks of its CPU, as
 * PerfSampleTracker makes them. */
#include "formats/proto/samples.h"

#include <stdlib.h>
#include <string.h>

#include "formats/proto/proto_format.h"
#include "model/model_internal.h"

/* A perf session's counter tracks on one CPU: the timebase's, then its
 * followers' (PerfSampleTracker's CpuSequenceState). */
typedef struct perf_stream {
	uint32_t timebase;
	size_t first, n;        /* followers: psamples.followers[first ..] */
} perf_stream;

/* A frame string of the record being read (TM_PR_STR_AGAIN points at
 * one), and the mapping made of it (UINT32_MAX: none yet). */
typedef struct frame_str {
	const char *s;
	size_t n;
	uint32_t mapping;
} frame_str;

struct m_psamples {
	m_stack_index ix;
	TM_VEC(frame_str) strs; /* the record's frame strings, in order */
	m_map mappings;         /* mapping name id -> mapping + 1 */
	m_map labelled;         /* mapping << 32 | label id -> frame + 1 */
	tm_buf label;
	m_map streams;          /* seq << 32 | cpu -> perf_stream + 1 */
	TM_VEC(perf_stream) stream;
	TM_VEC(uint32_t) followers;
	m_map tracks;           /* hash(packet, seq, cpu, source, name) -> counter track + 1 */
	m_map sessions;         /* source << 32 | seq -> profiler session + 1 */
};

static const char *const stat_names[TM_PR_ST_N] = {
	[TM_PR_ST_STRING] = "stackprofile_invalid_string_id",
	[TM_PR_ST_MAPPING] = "stackprofile_invalid_mapping_id",
	[TM_PR_ST_FRAME] = "stackprofile_invalid_frame_id",
	[TM_PR_ST_CALLSTACK] = "stackprofile_invalid_callstack_id",
	[TM_PR_ST_EMPTY] = "stackprofile_empty_callstack",
};

/* PerfSample.SampleSkipReason values that count */
enum { SKIP_READ_STAGE = 1, SKIP_UNWIND_STAGE = 2, SKIP_UNWIND_ENQUEUE = 3 };

void m_proto_samples_free(m_psamples *s)
{
	if (!s)
		return;
	m_stack_index_free(&s->ix);
	free(s->strs.v);
	m_map_free(&s->mappings);
	m_map_free(&s->labelled);
	tm_buf_free(&s->label);
	m_map_free(&s->streams);
	free(s->stream.v);
	free(s->followers.v);
	m_map_free(&s->tracks);
	m_map_free(&s->sessions);
	free(s);
}

static uint32_t mapping_of(tm_model *m, m_psamples *s, const char *name, size_t n, uint32_t file_id)
{
	int fresh;
	uint64_t *v = m_map_put(&s->mappings, m_intern(&m->str, name, n), &fresh);
	if (fresh)
		*v = (uint64_t)m_stack_mapping(m, name, n, file_id) + 1;
	return (uint32_t)(*v - 1);
}

/* A perf frame without a name shows as its mapping's last path component
 * and the address in it, as perf.data's do ("libc.so+0x400"). */
static uint32_t frame_of(tm_model *m, m_psamples *s, uint32_t mapping, const char *name, size_t n, uint64_t rel_pc,
			 int labelled)
{
	if (!labelled || n)
		return m_stack_frame(m, &s->ix, mapping, name, n);
	tm_buf *l = &s->label;
	m_stack_label(m, mapping, rel_pc, l);
	int fresh;
	uint64_t *v = m_map_put(&s->labelled, (uint64_t)mapping << 32 | m_intern(&m->str, l->data, l->len), &fresh);
	if (fresh)
		*v = (uint64_t)m_stack_frame_at(m, mapping, rel_pc, l->data, l->len) + 1;
	return (uint32_t)(*v - 1);
}

/* The profiler session of a sequence's perf samples (PerfSampleTracker)
 * or StackSamples (StackSampleModule), each made at its first sample: its
 * row in the reference's profiler_session table. */
static uint32_t session_of(tm_model *m, m_psamples *s, uint8_t source, uint32_t seq)
{
	int fresh;
	uint64_t *v = m_map_put(&s->sessions, (uint64_t)source << 32 | seq, &fresh);
	if (fresh)
		*v = (uint64_t)m->n_profiler_sessions++ + 1;
	return (uint32_t)(*v - 1);
}

/* InternTrack of a sample's counter: one track per dimensions, the
 * packet's (TM_PR_SRC_PERF: kPerfCpuCounterBlueprint, session, CPU and
 * name; TM_PR_SRC_STACK: a StackSample counter's, session, source
 * (UINT32_MAX: none), name and, per_cpu, the CPU), the CPU's track or
 * the session's. */
static uint32_t counter_track(tm_model *m, m_psamples *s, m_ctx *c, uint8_t packet, uint32_t seq, int per_cpu,
			      uint32_t cpu, uint32_t source, const char *name, size_t n)
{
	uint32_t name_id = m_intern(&m->str, name, n);
	int fresh;
	uint64_t key = m_hash2(m_hash2(m_hash2(packet, seq), m_hash2((uint64_t)per_cpu, cpu)), m_hash2(source, name_id));
	uint64_t *v = m_map_put(&s->tracks, key, &fresh);
	if (fresh) {
		uint32_t t = per_cpu ? m_new_track(m, c, TM_MT_CPU_COUNTER, TM_SCOPE_CPU, -1, -1, name_id)
				     : m_new_track(m, c, TM_MT_GLOBAL_COUNTER, TM_SCOPE_GLOBAL, -1, -1, name_id);
		if (per_cpu)
			m->tracks[t].pub.cpu = cpu;
		*v = (uint64_t)t + 1;
	}
	return (uint32_t)(*v - 1);
}

/* kPerfCpuCounterBlueprint's track of a perf session on a CPU */
static uint32_t perf_track(tm_model *m, m_psamples *s, m_ctx *c, uint32_t seq, uint32_t cpu, const char *name,
			   size_t n)
{
	return counter_track(m, s, c, TM_PR_SRC_PERF, seq, 1, cpu, UINT32_MAX, name, n);
}

/* GetSamplingStreamInfo: the session's tracks on the sample's CPU, named
 * at its first sample there (after the sequence's defaults then, the
 * timebase "cpu-clock" when it had none); *p is moved past the names.
 * NULL when the record runs short. */
static const perf_stream *perf_stream_of(tm_model *m, m_psamples *s, const tm_mrec_head *h, const tm_pr_sample *r,
					 const char **p, const char *end)
{
	const char *names = *p;
	session_of(m, s, TM_PR_SRC_PERF, r->seq);
	if (r->has_defaults) { /* skip them: the stream may be known */
		const char *name;
		size_t n;
		for (uint32_t i = 0; i <= r->n_followers; i++)
			if (!tm_mrec_get_str(p, end, &name, &n) || !name)
				return NULL;
	}
	int fresh;
	uint64_t *v = m_map_put(&s->streams, (uint64_t)r->seq << 32 | r->cpu, &fresh);
	if (!fresh)
		return &s->stream.v[*v - 1];
	m_ctx *c = m_context(m, h->file_id, h->machine_row);
	perf_stream st = {.first = s->followers.n};
	if (r->has_defaults && r->shard_count > 0) { /* the sharding asked for, per session */
		int session = (int)session_of(m, s, TM_PR_SRC_PERF, r->seq);
		m_stat_idx_set(m, "perf_process_shard_count", session, r->shard_count);
		m_stat_idx_set(m, "perf_chosen_process_shard", session, r->chosen_shard);
	}
	if (!r->has_defaults) {
		static const char legacy[] = "cpu-clock";
		st.timebase = perf_track(m, s, c, r->seq, r->cpu, legacy, sizeof legacy - 1);
	} else {
		const char *name = "";
		size_t n = 0;
		tm_mrec_get_str(&names, end, &name, &n);
		st.timebase = perf_track(m, s, c, r->seq, r->cpu, name, n);
		for (uint32_t i = 0; i < r->n_followers; i++) {
			tm_mrec_get_str(&names, end, &name, &n);
			uint32_t t = perf_track(m, s, c, r->seq, r->cpu, name, n);
			TM_GROW(s->followers.v, s->followers.cap, s->followers.n + 1);
			s->followers.v[s->followers.n++] = t;
			st.n++;
		}
	}
	TM_GROW(s->stream.v, s->stream.cap, s->stream.n + 1);
	s->stream.v[s->stream.n++] = st;
	*v = s->stream.n;
	return &s->stream.v[s->stream.n - 1];
}

/* A StackSample's counter values (tm_pr_counter and name each, n of
 * them) on their tracks (StackSampleModule::InternCounterTrack). */
static void stack_counters(tm_model *m, m_psamples *s, const tm_mrec_head *h, const tm_pr_sample *r, int64_t ts,
			   uint32_t source, const char *p, const char *end)
{
	m_ctx *c = m_context(m, h->file_id, h->machine_row);
	for (uint32_t i = 0; i < r->n_counts; i++) {
		tm_pr_counter v;
		const char *name;
		size_t n;
		if (!tm_mrec_get(&p, end, &v, sizeof v) || !tm_mrec_get_str(&p, end, &name, &n) || !name)
			return;
		uint32_t t = counter_track(m, s, c, TM_PR_SRC_STACK, r->seq, v.cpu != TM_PR_SESSION_SCOPE, v.cpu,
					   source, name, n);
		m_counter(m, t, ts, (double)v.value, h->file_id);
	}
}

/* A frame's string at *p (samples.h): its text, or the one TM_PR_STR_AGAIN
 * names; its index among the record's strings, UINT32_MAX when there is
 * none (none is no frame's). */
static uint32_t frame_str_get(m_psamples *s, const char **p, const char *end)
{
	uint32_t len;
	frame_str fs = {NULL, 0, UINT32_MAX};
	if (!tm_mrec_get(p, end, &len, sizeof len) || len == UINT32_MAX)
		return UINT32_MAX;
	if (len == TM_PR_STR_AGAIN) {
		uint32_t k;
		if (!tm_mrec_get(p, end, &k, sizeof k) || k >= s->strs.n)
			return UINT32_MAX;
		fs = s->strs.v[k];
	} else {
		if ((size_t)(end - *p) < len)
			return UINT32_MAX;
		fs.s = *p;
		fs.n = len;
		*p += len;
	}
	TM_GROW(s->strs.v, s->strs.cap, s->strs.n + 1);
	s->strs.v[s->strs.n++] = fs;
	return (uint32_t)(s->strs.n - 1);
}

/* The record's frames as callsites: the leaf, or TM_NO_CALLSITE when they
 * run short. */
static uint32_t stack(tm_model *m, m_psamples *s, const tm_pr_sample *r, const char *p, const char *end,
		      uint32_t file_id)
{
	uint32_t parent = TM_NO_CALLSITE;
	s->strs.n = 0;
	for (uint32_t d = 0; d < r->n_frames; d++) {
		uint64_t rel_pc;
		uint32_t ni = frame_str_get(s, &p, end), mi = ni == UINT32_MAX ? UINT32_MAX : frame_str_get(s, &p, end);
		if (mi == UINT32_MAX || !tm_mrec_get(&p, end, &rel_pc, sizeof rel_pc))
			return TM_NO_CALLSITE;
		frame_str *name = &s->strs.v[ni], *map = &s->strs.v[mi];
		/* a mapping named again is the one made of it before */
		if (map->mapping == UINT32_MAX)
			map->mapping = mapping_of(m, s, map->s, map->n, file_id);
		uint32_t frame = frame_of(m, s, map->mapping, name->s, name->n, rel_pc, r->source == TM_PR_SRC_PERF);
		parent = m_stack_callsite(m, &s->ix, parent, frame, d);
	}
	return parent;
}

void m_proto_sample(tm_model *m, const tm_mrec_head *h, int64_t ts, const char *body, size_t n, m_psamples **state)
{
	tm_pr_sample r;
	const char *p = body, *end = body + n, *source, *counts = NULL;
	size_t source_n;
	if (!tm_mrec_get(&p, end, &r, sizeof r) || !tm_mrec_get_str(&p, end, &source, &source_n))
		return;
	for (int i = 0; i < TM_PR_ST_N; i++)
		if (r.stats[i])
			m_stat(m, stat_names[i], r.stats[i]);
	if (!*state)
		*state = tm_xcalloc(1, sizeof **state);
	m_psamples *s = *state;
	m_mach *mc = m_machine(m, h->machine_row);
	const perf_stream *stream = NULL;
	const char *values = p;
	if (r.source == TM_PR_SRC_STACK) { /* skip the counter values */
		const char *name;
		size_t nn;
		for (uint32_t i = 0; i < r.n_counts; i++)
			if (!tm_mrec_get(&p, end, &(tm_pr_counter){0}, sizeof(tm_pr_counter)) ||
			    !tm_mrec_get_str(&p, end, &name, &nn) || !name)
				return;
	} else if (r.source == TM_PR_SRC_PERF) {
		counts = p;
		if ((size_t)(end - p) / sizeof(uint64_t) < r.n_counts)
			return;
		p += (size_t)r.n_counts * sizeof(uint64_t);
		if (!(stream = perf_stream_of(m, s, h, &r, &p, end)))
			return;
	}
	uint32_t callsite = r.has_stack ? stack(m, s, &r, p, end, h->file_id) : TM_NO_CALLSITE;
	int64_t utid = -1;
	switch (r.source) {
	case TM_PR_SRC_PERF:
		if (r.lost > 0) { /* records the kernel lost, not a sample */
			m_stat_idx(m, "perf_cpu_lost_records", (int)r.cpu, (int64_t)r.lost);
			return;
		}
		if (r.producer_event) { /* the time a guardrail stopped it */
			if (r.guardrail)
				m_stat_idx_set(m, "perf_guardrail_stop_ts", (int)session_of(m, s, TM_PR_SRC_PERF, r.seq), ts);
			return;
		}
		if (r.has_skip && (r.skip == SKIP_READ_STAGE || r.skip == SKIP_UNWIND_STAGE))
			m_stat(m, "perf_samples_skipped", 1);
		else if (r.has_skip && r.skip == SKIP_UNWIND_ENQUEUE)
			m_stat(m, "perf_samples_skipped_dataloss", 1);
		/* the counters: the timebase's, then each follower's that has
		 * a track (PushCounter) */
		if (r.has_count)
			m_counter(m, stream->timebase, ts, (double)r.count, h->file_id);
		for (size_t i = 0; i < r.n_counts && i < stream->n; i++) {
			uint64_t v;
			memcpy(&v, counts + i * sizeof v, sizeof v);
			m_counter(m, s->followers.v[stream->first + i], ts, (double)v, h->file_id);
		}
		utid = m_update_thread(m, mc, r.tid, r.pid);
		m_get_or_create_process(m, mc, r.pid);
		m_sample(m, ts, utid, callsite, "linux.perf");
		return;
	case TM_PR_SRC_CHROME:
		utid = m_update_thread(m, mc, r.tid, r.pid);
		m_get_or_create_process(m, mc, r.pid);
		if (callsite == TM_NO_CALLSITE) {
			m_stat(m, "stackprofile_parser_error", 1);
			return;
		}
		m_sample(m, ts, utid, callsite, "chrome");
		return;
	case TM_PR_SRC_STACK: {
		if (r.has_pid)
			m_get_or_create_process(m, mc, r.pid);
		if (r.has_tid)
			utid = r.has_pid ? m_update_thread(m, mc, r.tid, r.pid) : m_get_or_create_thread(m, mc, r.tid);
		session_of(m, s, TM_PR_SRC_STACK, r.seq);
		/* the source as the model keeps strings: valid until it ends */
		uint32_t source_id = source && source_n ? m_intern(&m->str, source, source_n) : UINT32_MAX;
		stack_counters(m, s, h, &r, ts, source_id, values, end);
		m_sample(m, ts, utid, callsite, source_id != UINT32_MAX ? m_str(&m->str, source_id) : NULL);
		return;
	}
	default:
		return;
	}
}
