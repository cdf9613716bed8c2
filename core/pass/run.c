/* core/pass/run.c - one pass over a merge: the scan's records through
 * the reference's order (core/sort) into the model (core/model), the
 * records handed over on a thread of their own. */
#include "pass/run.h"

#include <stdlib.h>
#include <string.h>

#include "formats/registry.h"
#include "input/merge.h"
#include "model/model.h"
#include "scan/scan.h"
#include "sort/order.h"
#include "util/relay.h"

/* ---- running over a merge ----------------------------------------------------- */

typedef struct run_ctx {
	tm_order *order;
	tm_model *model;             /* side records go to it at once */
	uint32_t n_queues;
	const tm_scan_sink *also;
	int failed;
	tm_error err;
	const struct tm_merge *merge;
	uint64_t forked; /* the last file and machine forked, + 1 (0: none yet) */
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
	if (!tm_mrec_head_get(r->data, r->len, &h))
		return;
	/* records come file by file: the model's map is asked only when the
	 * file or machine changes (asking it for each record was a fiftieth
	 * of the proto scan, which runs on one core) */
	uint64_t key = ((uint64_t)h.file_id << 32 | h.machine_row) + 1;
	if (key == rc->forked)
		return;
	rc->forked = key;
	if (!tm_model_fork(rc->model, h.file_id, h.machine_row))
		return;
	tm_type type = h.file_id < rc->merge->n_files ? rc->merge->files[h.file_id].type : TM_TYPE_UNKNOWN;
	const tm_format *fm = tm_format_of(type);
	if (fm && fm->pid_zero_is_idle)
		tm_model_pid_zero_is_idle(rc->model, h.machine_row);
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

static uint32_t run_intern(void *ctx, const char *s, size_t n)
{
	run_ctx *rc = ctx;
	return tm_model_intern(rc->model, s, n);
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

/* What the reference does as each trace file's context is made, before it
 * parses anything: a proto or systrace file's machines (a proto file's
 * remote machines too) get pid 0 as the swapper (forwarding_trace_parser.cc,
 * ProtoTraceReader::CreateRemoteMachineReader); a proto file's machines read
 * sched states with the kernel their SystemInfo names. */
static void start_contexts(tm_model *m, const struct tm_merge *merge, const tm_scan *s)
{
	for (size_t i = 0; i < s->n_files && i < merge->n_files; i++) {
		const tm_scan_file *f = &s->files[i];
		const tm_format *fm = tm_format_of(merge->files[i].type);
		if (!f->scanned || !fm || !fm->pid_zero_is_idle)
			continue;
		for (size_t k = 0; k < f->n_machines; k++)
			tm_model_machine_start(m, f->machines[k],
					       f->machines[k] < s->machines.n ? &s->machines.rows[f->machines[k]] : NULL);
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
	uint32_t pre;    /* bytes of its parser's prepare after the record (padded) */
} replay_rec;

#define REPLAY_CHUNK (64u * 1024u)
/* Batches that may wait for the model. The pass runs three threads or
 * more on two cores (this one, the model's, the sorts' and the temporary
 * files' writers), so each of the two goes without a core now and then,
 * for milliseconds: with four batches (a few ms of the model's work) the
 * other ran dry. perf sched on the systrace timeline: the model waited
 * 53 ms for batches and this thread 152 ms for room. With sixteen,
 * perf stat (10 runs each, two rounds, interleaved): systrace timeline
 * 0.422 and 0.419 s against 0.454 and 0.479, JSON 0.253 and 0.250 s
 * against 0.260 and 0.260, proto 1.74 and 1.70 s against 1.83 and 1.79.
 * The 0.8 MB more that batches hold are paid for by the sorts' runs,
 * now reserved at once (core/sort/xsort.c). */
#define REPLAY_QUEUE 16

static void replay_batch(void *ctx, const tm_buf *b)
{
	tm_model *m = ctx;
	for (size_t at = 0; at < b->len;) {
		replay_rec r;
		memcpy(&r, b->data + at, sizeof r);
		at += sizeof r;
		const char *pre = b->data + at + TM_RELAY_PAD8(r.len);
		tm_model_apply_prepared(m, r.ts, b->data + at, r.len, r.pre ? pre : NULL, r.pre);
		at += TM_RELAY_PAD8(r.len) + TM_RELAY_PAD8(r.pre);
	}
}

/* The record into the batch, and what its parser would work out first
 * from it alone (tm_parser.prepare: a systrace line's) when the model's
 * thread is the slower one: the batches handed to it wait. Else the model
 * works it out itself (the same result: tm_model_apply does so without a
 * relay), since this thread is the slower then. Prepared here always,
 * the systrace merged.pftrace of bench_import had this thread a third
 * busier than the model's in the replay (perf); decided batch by batch,
 * its pass took 0.76 s instead of 0.85 s (median of seven). */
static void replay_put(tm_relay *rl, const tm_model_sink *sink, const tm_parser *const parsers[TM_MREC_KINDS],
		       const tm_order_rec *o)
{
	tm_buf *b = tm_relay_buf(rl);
	size_t at = b->len;
	TM_GROW(b->data, b->cap, at + sizeof(replay_rec) + TM_RELAY_PAD8(o->len));
	memcpy(b->data + at + sizeof(replay_rec), o->data, o->len);
	b->len = at + sizeof(replay_rec) + TM_RELAY_PAD8(o->len);
	tm_mrec_head h;
	size_t pre = 0, hn;
	if (o->len <= UINT32_MAX && (hn = tm_mrec_head_get(o->data, o->len, &h)) != 0) {
		const tm_parser *p = h.kind < TM_MREC_KINDS ? parsers[h.kind] : NULL;
		if (p && p->prepare && tm_relay_queued(rl) > 0)
			pre = p->prepare(sink, o->ts, &h, (const char *)o->data + hn, o->len - hn, b);
	}
	TM_GROW(b->data, b->cap, b->len + 8);
	b->len = at + sizeof(replay_rec) + TM_RELAY_PAD8(o->len) + TM_RELAY_PAD8(pre);
	replay_rec r = {o->ts, (uint32_t)o->len, (uint32_t)pre};
	memcpy(b->data + at, &r, sizeof r);
	if (b->len >= REPLAY_CHUNK)
		tm_relay_hand(rl);
}

/* Every record into m: 0 at the end, -1 with err set. */
static int replay(tm_model *m, const tm_model_sink *msink, const tm_parser *const parsers[TM_MREC_KINDS],
		  tm_order *o, tm_error *err)
{
	tm_model_sink sink = *msink; /* this thread's copy: the model is the relay's */
	tm_relay *rl = tm_relay_useful() ? tm_relay_start("tm-model", replay_batch, m, REPLAY_QUEUE) : NULL;
	tm_order_rec r;
	int k;
	uint64_t n = 1, total = tm_order_count(o);
	for (; (k = tm_order_next(o, &r, err)) == 1; n++) {
		if (!(n & 4095) && (k = tm_stopped(err)) != 0) /* every 4096: cheap either way */
			break;
		if (sink.replayed && !(n % TM_MODEL_REPLAYED_STEP))
			sink.replayed(sink.ctx, n, total);
		if (rl)
			replay_put(rl, &sink, parsers, &r);
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
	const tm_parser *parsers[TM_MREC_KINDS];
	for (unsigned k = 0; k < TM_MREC_KINDS; k++)
		parsers[k] = tm_parser_of(k);
	run_ctx rc = {tm_order_new(order_bytes), tm_model_new(sink, parsers), 0, also, 0, {0}, merge, 0};
	tm_scan_sink ss = {.ctx = &rc, .record = records ? run_record : NULL, .intern = run_intern};
	ss.rec_for = (sink && sink->observed ? TM_REC_FOR_ENCODERS : 0u) | (sink && sink->slice ? TM_REC_FOR_ROWS : 0u);
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
	if (failed) {
		*err = s->err;
	} else {
		start_contexts(rc.model, merge, s);
		tm_model_bounds(rc.model, (uint32_t)merge->n_files, (uint32_t)s->machines.n);
	}
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
		tm_model_sink none = {0};
		if (replay(m, sink ? sink : &none, parsers, rc.order, err) < 0) {
			tm_model_free(m);
			m = NULL;
		} else {
			tm_model_finish(m);
		}
	}
	tm_order_free(rc.order);
	return m;
}
