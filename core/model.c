/* core/model.c - the model's driver: records to parsers, strings, maps,
 * stats, and the tables' accessors. */
#include "model_internal.h"

#include <stdlib.h>
#include <string.h>

#include "json_rec.h"
#include "merge.h"
#include "order.h"
#include "relay.h"
#include "scan.h"

/* ---- strings ------------------------------------------------------------------ */

/* Eight bytes at a time: every JSON event interns its name and category,
 * and a byte-wise hash with strlen on each compare was a tenth of the
 * model's thread on the JSON export (callgrind). */
static uint64_t str_hash(const char *s, size_t n)
{
	const uint64_t k = 0x9e3779b97f4a7c15ull;
	uint64_t h = n * k;
	for (; n >= 8; s += 8, n -= 8) {
		uint64_t w;
		memcpy(&w, s, 8);
		h = (h ^ w) * k;
		h ^= h >> 29;
	}
	uint64_t w = 0;
	memcpy(&w, s, n);
	h = (h ^ w) * k;
	return h ^ (h >> 32);
}

/* A string holding a NUL is kept cut at it (m_str gives C strings), so
 * it matches none: each intern of it is a new id, as it always was. It is
 * placed as what it is kept as, so that where a string lies never depends
 * on when the table last grew. */
uint32_t m_intern(m_strings *p, const char *s, size_t n)
{
	if (!s)
		return 0;
	if ((p->n + 1) * 2 > p->n_slots) {
		size_t ns = p->n_slots ? p->n_slots * 2 : 1024;
		uint64_t *slots = tm_xcalloc(ns, sizeof(*slots));
		for (size_t i = 0; i < p->n; i++) {
			uint64_t h = str_hash(p->s[i], p->lens[i]);
			size_t j = h & (ns - 1);
			while (slots[j])
				j = (j + 1) & (ns - 1);
			slots[j] = (h >> 32 << 32) | (i + 1);
		}
		free(p->slots);
		p->slots = slots;
		p->n_slots = ns;
	}
	uint64_t h = str_hash(s, n), tag = h >> 32 << 32;
	size_t j = h & (p->n_slots - 1);
	for (; p->slots[j]; j = (j + 1) & (p->n_slots - 1)) {
		uint64_t e = p->slots[j];
		size_t i = (uint32_t)e - 1;
		if ((e & ~(uint64_t)UINT32_MAX) == tag && p->lens[i] == n && memcmp(p->s[i], s, n) == 0)
			return (uint32_t)e;
	}
	if (p->n == p->cap) {
		TM_GROW(p->s, p->cap, p->n + 1);
		p->lens = tm_xrealloc(p->lens, p->cap * sizeof(*p->lens));
	}
	p->s[p->n] = tm_xstrndup(s, n);
	p->lens[p->n] = (uint32_t)strlen(p->s[p->n]);
	if (p->lens[p->n] != n) {
		h = str_hash(s, p->lens[p->n]);
		tag = h >> 32 << 32;
		for (j = h & (p->n_slots - 1); p->slots[j]; j = (j + 1) & (p->n_slots - 1))
			;
	}
	p->n++;
	p->slots[j] = tag | p->n;
	return (uint32_t)p->n;
}

static void strings_free(m_strings *p)
{
	for (size_t i = 0; i < p->n; i++)
		free(p->s[i]);
	free(p->s);
	free(p->lens);
	free(p->slots);
}

/* ---- maps --------------------------------------------------------------------- */

uint64_t m_hash2(uint64_t a, uint64_t b)
{
	uint64_t x = a * 0x9e3779b97f4a7c15ull ^ (b + 0x7f4a7c159e3779b9ull + (a << 6) + (a >> 2));
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebull;
	x ^= x >> 31;
	return x;
}

static size_t slot_of(const m_map *m, uint64_t key)
{
	return (size_t)m_hash2(key, 0x5bd1e995) & (m->cap - 1);
}

enum { SLOT_EMPTY = 0, SLOT_DELETED = 1, SLOT_KEY = 2 /* a slot's key is the map's plus this */ };

/* The used slot of key (not a side key), or NULL. */
static m_slot *slot_find(m_map *m, uint64_t key)
{
	if (!m->cap)
		return NULL;
	uint64_t k = key + SLOT_KEY;
	for (size_t i = slot_of(m, key);; i = (i + 1) & (m->cap - 1)) {
		m_slot *sl = &m->slots[i];
		if (sl->key == k)
			return sl;
		if (sl->key == SLOT_EMPTY)
			return NULL;
	}
}

/* 0 or 1 for a key kept beside the slots, else -1. */
static int side_of(uint64_t key)
{
	return key >= UINT64_MAX - 1 ? (int)(key - (UINT64_MAX - 1)) : -1;
}

uint64_t *m_map_get(m_map *m, uint64_t key)
{
	int s = side_of(key);
	if (s >= 0)
		return m->has_side[s] ? &m->side[s] : NULL;
	m_slot *sl = slot_find(m, key);
	return sl ? &sl->val : NULL;
}

uint64_t *m_map_put(m_map *m, uint64_t key, int *inserted)
{
	uint64_t *v = m_map_get(m, key);
	if (v) {
		if (inserted)
			*inserted = 0;
		return v;
	}
	if (inserted)
		*inserted = 1;
	int s = side_of(key);
	if (s >= 0) {
		m->has_side[s] = 1;
		m->side[s] = 0;
		return &m->side[s];
	}
	if ((m->n + 1) * 2 > m->cap) {
		m_slot *old = m->slots;
		size_t old_cap = m->cap, live = 0;
		for (size_t i = 0; i < old_cap; i++)
			live += old[i].key >= SLOT_KEY;
		/* Twice as large, unless tombstones filled it (pids and tids
		 * come and go through a long trace): then as large, without
		 * them. Small at first: a machine has several, and there may be
		 * 20,000 machines. */
		m->cap = !old_cap ? 8 : (live + 1) * 4 <= old_cap ? old_cap : old_cap * 2;
		m->slots = tm_xcalloc(m->cap, sizeof(*m->slots));
		m->n = 0;
		for (size_t i = 0; i < old_cap; i++)
			if (old[i].key >= SLOT_KEY)
				*m_map_put(m, old[i].key - SLOT_KEY, NULL) = old[i].val;
		free(old);
	}
	size_t i = slot_of(m, key);
	while (m->slots[i].key >= SLOT_KEY)
		i = (i + 1) & (m->cap - 1);
	m_slot *sl = &m->slots[i];
	sl->key = key + SLOT_KEY;
	sl->val = 0;
	m->n++;
	return &sl->val;
}

void m_map_del(m_map *m, uint64_t key)
{
	int s = side_of(key);
	if (s >= 0) {
		m->has_side[s] = 0;
		return;
	}
	m_slot *sl = slot_find(m, key);
	if (sl)
		sl->key = SLOT_DELETED; /* a tombstone keeps probe chains intact */
}

void m_map_free(m_map *m)
{
	free(m->slots);
	memset(m, 0, sizeof(*m));
}

/* ---- stats -------------------------------------------------------------------- */

void m_stat(tm_model *m, const char *name, int64_t add)
{
	tm_statlist_add(&m->file_stats, m->cur_file, m->cur_row, name, -1, add);
}

const tm_statlist *tm_model_file_stats(const tm_model *m)
{
	return &m->file_stats;
}

/* ---- the driver --------------------------------------------------------------- */

tm_model *tm_model_new(const tm_model_sink *sink)
{
	tm_model *m = tm_xcalloc(1, sizeof(*m));
	if (sink)
		m->sink = *sink;
	m->next_string_pid = INT64_C(1) << 32;
	return m;
}

/* tm_model_apply, with what the replay's producer worked out of the
 * record ahead (m_systrace_prepare), or pre NULL. */
static void apply(tm_model *m, int64_t ts, const void *rec, uint32_t len, const void *pre, size_t pre_len)
{
	tm_mrec_head h;
	if (len < sizeof h)
		return;
	memcpy(&h, rec, sizeof h);
	const char *body = (const char *)rec + sizeof h;
	size_t n = len - sizeof h;
	m->cur_ts = ts;
	m->cur_seq++;
	m->cur_file = h.file_id;
	m->cur_row = h.machine_row;
	m->n_made = 0;
	m->cur_cpu = h.kind == TM_MREC_SYSTRACE ? h.cpu : -1;
	switch (h.kind) {
	case TM_MREC_JSON:
		m_json_apply(m, &h, ts, body, n);
		break;
	case TM_MREC_SYSTRACE:
		m_systrace_apply(m, &h, ts, body, n, pre, pre_len);
		break;
	case TM_MREC_PROTO:
		m_proto_apply(m, &h, ts, body, n);
		break;
	default:
		break;
	}
}

void tm_model_apply(tm_model *m, int64_t ts, const void *rec, uint32_t len)
{
	apply(m, ts, rec, len, NULL, 0);
}

void tm_model_apply_side(tm_model *m, const void *rec, uint32_t len)
{
	tm_mrec_head h;
	if (len < sizeof h)
		return;
	memcpy(&h, rec, sizeof h);
	m->cur_file = h.file_id;
	m->cur_row = h.machine_row;
	if (h.kind == TM_MREC_PROTO)
		m_proto_side(m, &h, (const char *)rec + sizeof h, len - sizeof h);
}

void tm_model_finish(tm_model *m)
{
	m_slices_flush(m);
	m_sched_flush(m);
}

size_t tm_model_n_tracks(const tm_model *m)
{
	return m->n_tracks;
}

const tm_mtrack *tm_model_track(const tm_model *m, uint32_t id)
{
	return id < m->n_tracks ? &m->tracks[id].pub : NULL;
}

int32_t tm_model_id32(const tm_model *m, int64_t id)
{
	/* string_id gives them in turn from there: they are this range */
	if (id >= INT64_C(1) << 32 && id < m->next_string_pid)
		return (int32_t)(INT32_MAX - (id - (INT64_C(1) << 32)));
	return (int32_t)id;
}

size_t tm_model_n_threads(const tm_model *m)
{
	return m->n_threads;
}

const tm_mthread *tm_model_thread(const tm_model *m, size_t utid)
{
	if (utid >= m->n_threads)
		return NULL;
	m->threads[utid].pub.name = m_str(&m->str, m->threads[utid].name_id);
	return &m->threads[utid].pub;
}

size_t tm_model_n_processes(const tm_model *m)
{
	return m->n_procs;
}

const tm_mprocess *tm_model_process(const tm_model *m, size_t upid)
{
	if (upid >= m->n_procs)
		return NULL;
	m->procs[upid].pub.name = m_str(&m->str, m->procs[upid].name_id);
	return &m->procs[upid].pub;
}

static void ctx_free(m_ctx *c)
{
	m_map_free(&c->thread_tracks);
	m_map_free(&c->named_tracks);
	for (size_t i = 0; i < c->n_csets; i++) {
		for (size_t k = 0; k < c->csets[i].n; k++)
			free(c->csets[i].tracks[k].open_ends);
		free(c->csets[i].tracks);
	}
	free(c->csets);
	m_map_free(&c->async_root_name);
	m_map_free(&c->flow_to_slice);
	free(c->flow_slice_id);
	free(c->flow_slice_ts);
	m_map_free(&c->v1_flows);
	free(c->cpus);
	free(c->sched);
	m_proto_ctx_free(c->proto);
}

void tm_model_free(tm_model *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->n_tracks; i++) {
		m_track *t = &m->tracks[i];
		for (size_t k = 0; k < t->depth; k++) {
			tm_buf_free(&t->stack[k].args);
			free(t->stack[k].argidx);
		}
		free(t->stack);
		free(t->pending_flows);
	}
	free(m->tracks);
	for (size_t i = 0; i < m->n_ctxs; i++)
		ctx_free(&m->ctxs[i]);
	free(m->ctxs);
	m_map_free(&m->ctx_index);
	for (size_t i = 0; i < m->n_mach; i++) {
		m_mach *mc = &m->mach[i];
		m_map_free(&mc->pids);
		m_map_free(&mc->live_tid);
		m_map_free(&mc->tids_head);
		for (size_t k = 0; k < mc->n_tid_lists; k++)
			free(mc->tid_lists[k]);
		free(mc->tid_lists);
		free(mc->tid_list_n);
		free(mc->tid_list_cap);
		free(mc->pending.v);
		free(mc->pending_parent.v);
	}
	free(m->mach);
	free(m->mach_of_row);
	free(m->threads);
	free(m->made);
	free(m->procs);
	tm_statlist_free(&m->file_stats);
	m_map_free(&m->json_string_ids);
	strings_free(&m->str);
	tm_buf_free(&m->scratch);
	free(m);
}

/* ---- running over a merge ----------------------------------------------------- */

typedef struct run_ctx {
	tm_order *order;
	tm_model *model;             /* side records go to it at once */
	uint32_t n_queues;
	const tm_scan_sink *also;
	int failed;
	tm_error err;
	const struct tm_merge *merge;
	m_map forked;                /* (file << 32 | machine row) seen */
} run_ctx;

/* The first record of a file on a machine: where the reference forks the
 * file's context for that machine during tokenization (before any sorted
 * event is parsed). A systrace or proto file's fork maps pid 0 and tid 0 to
 * the machine's swapper (SetPidZeroIsUpidZeroIdleProcess: TraceType's
 * pid_zero_is_idle); a JSON file's does not, so tid 0 in JSON, embedded
 * systrace included, is a thread of its own. */
static void first_of_file(run_ctx *rc, const tm_rec *r)
{
	tm_mrec_head h;
	if (r->len < sizeof h)
		return;
	memcpy(&h, r->data, sizeof h);
	int inserted = 0;
	m_map_put(&rc->forked, (uint64_t)h.file_id << 32 | h.machine_row, &inserted);
	if (!inserted)
		return;
	m_mach *mc = m_machine(rc->model, h.machine_row);
	tm_type type = h.file_id < rc->merge->n_files ? rc->merge->files[h.file_id].type : TM_TYPE_UNKNOWN;
	if (type == TM_TYPE_SYSTRACE || type == TM_TYPE_PROTO)
		m_set_pid_zero_is_swapper(rc->model, mc);
}

static void run_record(void *ctx, const tm_rec *r)
{
	run_ctx *rc = ctx;
	if (rc->failed)
		return;
	first_of_file(rc, r);
	if (r->side) {
		tm_model_apply_side(rc->model, r->data, (uint32_t)r->len);
		return;
	}
	/* queues the scan numbered but never used still count for the order;
	 * a queue whose first record is a JSON event (it has a phase) is a JSON
	 * queue, whose events take part in slow sorting */
	while (rc->n_queues <= r->queue) {
		tm_order_queue(rc->order, rc->n_queues == r->queue && r->json_phase != 0);
		rc->n_queues++;
	}
	if (tm_order_push(rc->order, r->queue, r->ts, r->json_phase, r->json_dur, r->data, (uint32_t)r->len,
			  &rc->err) != 0)
		rc->failed = 1;
}

static void run_event(void *ctx, const tm_event *ev)
{
	run_ctx *rc = ctx;
	rc->also->event(rc->also->ctx, ev);
}

static void run_packet(void *ctx, const tm_packet_out *p)
{
	run_ctx *rc = ctx;
	rc->also->packet(rc->also->ctx, p);
}

static void run_progress(void *ctx, const tm_scan_progress *p)
{
	run_ctx *rc = ctx;
	rc->also->progress(rc->also->ctx, p);
}

static void run_name(void *ctx, const tm_name_out *n)
{
	run_ctx *rc = ctx;
	rc->also->name(rc->also->ctx, n);
}

/* "Linux" and "major.minor...": SystemInfoTracker::SetKernelVersion */
static int kernel_version(const tm_machine *mr, int *major, int *minor)
{
	if (!mr->sysname || !mr->release || strcmp(mr->sysname, "Linux") != 0)
		return 0;
	const char *r = mr->release, *dot = strchr(r, '.');
	if (!dot)
		return 0;
	const char *dot2 = strchr(dot + 1, '.');
	size_t n1 = (size_t)(dot - r), n2 = dot2 ? (size_t)(dot2 - dot - 1) : strlen(dot + 1);
	if (!n1 || !n2 || n1 > 9 || n2 > 9)
		return 0;
	for (size_t i = 0; i < n1; i++)
		if (r[i] < '0' || r[i] > '9')
			return 0;
	for (size_t i = 0; i < n2; i++)
		if (dot[1 + i] < '0' || dot[1 + i] > '9')
			return 0;
	*major = atoi(r);
	*minor = atoi(dot + 1);
	return 1;
}

/* What the reference does as each trace file's context is made, before it
 * parses anything: a proto or systrace file's machines (a proto file's
 * remote machines too) get pid 0 as the swapper (forwarding_trace_parser.cc,
 * ProtoTraceReader::CreateRemoteMachineReader); a proto file's machines read
 * sched states with the kernel their SystemInfo names. */
static void start_contexts(tm_model *m, const struct tm_merge *merge, const tm_scan *s)
{
	m->cur_cpu = -1;
	for (size_t i = 0; i < s->n_files && i < merge->n_files; i++) {
		const tm_scan_file *f = &s->files[i];
		tm_type ty = merge->files[i].type;
		if (!f->scanned || (ty != TM_TYPE_PROTO && ty != TM_TYPE_SYSTRACE))
			continue;
		for (size_t k = 0; k < f->n_machines; k++) {
			m_mach *mc = m_machine(m, f->machines[k]);
			if (f->machines[k] < s->machines.n)
				mc->has_kernel = kernel_version(&s->machines.rows[f->machines[k]], &mc->kernel_major,
								&mc->kernel_minor);
			m_set_pid_zero_is_swapper(m, mc);
		}
	}
}

/* ---- the replay ------------------------------------------------------------ */

/* The records in order, applied on a thread of their own: the model, its
 * sinks and the builders they feed (the JSON parse, the encoders) run on
 * the relay's thread, while this one takes the records out of order
 * (merging the sorted runs, reading them back from the temporary file)
 * and copies them into batches (issue 10: both cores). The model sees the
 * same records in the same order, so every result is the same as
 * applying them here. JSON events are parsed on the model's thread too:
 * parsed here, each tree crossed cores and was freed on the other thread,
 * and with malloc's lock and cache misses the JSON bench's export took
 * 1.1 to 2.1 s instead of 0.8 s, though half the instructions moved. */
typedef struct replay_rec {
	int64_t ts;
	uint32_t len;
	uint32_t pre;    /* bytes of m_systrace_prepare's after the record (padded) */
} replay_rec;

#define REPLAY_CHUNK (64u * 1024u)
#define REPLAY_QUEUE 4

static void replay_batch(void *ctx, const tm_buf *b)
{
	tm_model *m = ctx;
	for (size_t at = 0; at < b->len;) {
		replay_rec r;
		memcpy(&r, b->data + at, sizeof r);
		at += sizeof r;
		const char *pre = b->data + at + TM_RELAY_PAD8(r.len);
		apply(m, r.ts, b->data + at, r.len, r.pre ? pre : NULL, r.pre);
		at += TM_RELAY_PAD8(r.len) + TM_RELAY_PAD8(r.pre);
	}
}

/* The record into the batch, and for a systrace line what the model would
 * work out first from it alone (m_systrace_prepare): this thread waits for
 * the model's most of the time. */
static void replay_put(tm_relay *rl, const tm_model_sink *sink, const tm_order_rec *o)
{
	tm_buf *b = tm_relay_buf(rl);
	size_t at = b->len;
	TM_GROW(b->data, b->cap, at + sizeof(replay_rec) + TM_RELAY_PAD8(o->len));
	memcpy(b->data + at + sizeof(replay_rec), o->data, o->len);
	b->len = at + sizeof(replay_rec) + TM_RELAY_PAD8(o->len);
	tm_mrec_head h;
	size_t pre = 0;
	if (o->len >= sizeof h && o->len <= UINT32_MAX) {
		memcpy(&h, o->data, sizeof h);
		if (h.kind == TM_MREC_SYSTRACE)
			pre = m_systrace_prepare(sink, o->ts, &h, (const char *)o->data + sizeof h, o->len - sizeof h, b);
	}
	TM_GROW(b->data, b->cap, b->len + 8);
	b->len = at + sizeof(replay_rec) + TM_RELAY_PAD8(o->len) + TM_RELAY_PAD8(pre);
	replay_rec r = {o->ts, (uint32_t)o->len, (uint32_t)pre};
	memcpy(b->data + at, &r, sizeof r);
	if (b->len >= REPLAY_CHUNK)
		tm_relay_hand(rl);
}

/* Every record into m: 0 at the end, -1 with err set. */
static int replay(tm_model *m, tm_order *o, tm_error *err)
{
	tm_model_sink sink = m->sink; /* this thread's copy: the model is the relay's */
	tm_relay *rl = tm_relay_useful() ? tm_relay_start(replay_batch, m, REPLAY_QUEUE) : NULL;
	tm_order_rec r;
	int k;
	uint64_t n = 1, total = tm_order_count(o);
	for (; (k = tm_order_next(o, &r, err)) == 1; n++) {
		if (!(n & 4095) && (k = tm_stopped(err)) != 0) /* every 4096: cheap either way */
			break;
		if (sink.replayed && !(n % TM_MODEL_REPLAYED_STEP))
			sink.replayed(sink.ctx, n, total);
		if (rl)
			replay_put(rl, &sink, &r);
		else
			tm_model_apply(m, r.ts, r.data, r.len);
	}
	tm_relay_finish(rl); /* the model is this thread's again */
	if (sink.replayed && k == 0)
		sink.replayed(sink.ctx, n - 1, total);
	return k;
}

tm_model *tm_model_run(struct tm_merge *merge, const tm_model_sink *sink, const struct tm_scan_sink *also,
		       int records, size_t order_bytes, tm_error *err)
{
	return tm_model_run_scanned(merge, sink, also, records, order_bytes, NULL, err);
}

tm_model *tm_model_run_scanned(struct tm_merge *merge, const tm_model_sink *sink,
			       const struct tm_scan_sink *also, int records, size_t order_bytes,
			       const tm_model_scanned *scanned, tm_error *err)
{
	run_ctx rc = {tm_order_new(order_bytes), tm_model_new(sink), 0, also, 0, {0}, merge, {0}};
	tm_scan_sink ss = {.ctx = &rc, .record = records ? run_record : NULL};
	/* a JSON event's args in the forms the sinks read (core/json_rec.h) */
	ss.json_rec = (sink && sink->observed ? JSON_REC_ANNOT : 0u) | (sink && sink->slice ? JSON_REC_TEXT : 0u);
	if (also) {
		ss.event = also->event ? run_event : NULL;
		ss.packet = also->packet ? run_packet : NULL;
		ss.name = also->name ? run_name : NULL;
		ss.want_args = also->want_args;
	}
	if (also && also->progress)
		ss.progress = run_progress;
	tm_scan *s = tm_scan_run(merge, &ss);
	int failed = s->failed;
	if (failed)
		*err = s->err;
	else
		start_contexts(rc.model, merge, s);
	if (scanned) {
		tm_error why;
		tm_err_clear(&why);
		if (scanned->fn(scanned->ctx, s, &why) != 0 && !failed) {
			*err = why;
			failed = 1;
		}
	} else {
		tm_scan_free(s);
	}
	if (!failed && rc.failed) {
		*err = rc.err;
		failed = 1;
	}
	if (!failed && tm_order_finish(rc.order, err) != 0)
		failed = 1;
	tm_model *m = rc.model;
	if (failed) {
		tm_model_free(m);
		m = NULL;
	} else {
		if (replay(m, rc.order, err) < 0) {
			tm_model_free(m);
			m = NULL;
		} else {
			tm_model_finish(m);
		}
	}
	tm_order_free(rc.order);
	m_map_free(&rc.forked);
	return m;
}
