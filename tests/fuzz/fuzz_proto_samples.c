/* tests/fuzz/fuzz_proto_samples.c - a proto trace's stack samples
 * (core/formats/proto/samples.c, model_sample.c) on arbitrary bytes: the
 * input read as a Trace whose packets' clears, interned data, defaults
 * and sample packets (PerfSample, StackSample, StreamingProfilePacket, one
 * sample per callstack iid) go through one sequence's store as the
 * tokenizer hands them over, each sample's record into a model. Checked
 * on the way: a record holds what its head says (the source, a
 * PerfSample's counts and names, a StackSample's counter values,
 * n_frames frames, nothing after), a record without a stack holds no
 * frame; every sample the model hands out is on a callsite chain that
 * ends at a root within as many steps as there are callsites; every
 * counter is on a CPU or global counter track. The whole merge of such
 * files is fuzz_scan's and fuzz_export's. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "formats/proto/proto_format.h"
#include "formats/proto/samples.h"
#include "formats/registry.h"
#include "model/model.h"

typedef struct seen {
	const tm_model *m;
	uint64_t n;
} seen;

static void on_sample(void *ctx, const tm_msample *s)
{
	seen *sn = ctx;
	sn->n++;
	if (s->callsite == TM_NO_CALLSITE || !sn->m)
		return;
	size_t steps = 0, max = tm_model_n_callsites(sn->m);
	for (const tm_mcallsite *c = tm_model_callsite(sn->m, s->callsite); c;
	     c = c->parent == TM_NO_CALLSITE ? NULL : tm_model_callsite(sn->m, c->parent)) {
		const tm_mframe *f = tm_model_frame(sn->m, c->frame);
		if (!f || !tm_mframe_text(f) || ++steps > max)
			abort();
	}
}

static void on_counter(void *ctx, const tm_mcounter *c)
{
	seen *sn = ctx;
	const tm_mtrack *t = tm_model_track(sn->m, c->track);
	if (!t || (t->kind != TM_MT_CPU_COUNTER && t->kind != TM_MT_GLOBAL_COUNTER) || !t->name)
		abort();
}

/* The record must be what its head says. */
static void check(const tm_buf *b)
{
	tm_pr_sample r;
	const char *p = b->data, *end = b->data + b->len, *s;
	size_t n;
	if (!tm_mrec_get(&p, end, &r, sizeof r) || !tm_mrec_get_str(&p, end, &s, &n))
		abort();
	if (!r.has_stack && r.n_frames)
		abort();
	if (r.source == TM_PR_SRC_CHROME && r.n_counts)
		abort();
	if (r.source != TM_PR_SRC_PERF && r.has_defaults)
		abort();
	for (uint32_t i = 0; r.source == TM_PR_SRC_PERF && i < r.n_counts; i++) {
		uint64_t v;
		if (!tm_mrec_get(&p, end, &v, sizeof v))
			abort();
	}
	for (uint32_t i = 0; r.source == TM_PR_SRC_STACK && i < r.n_counts; i++) {
		tm_pr_counter c;
		if (!tm_mrec_get(&p, end, &c, sizeof c) || !tm_mrec_get_str(&p, end, &s, &n) || !s)
			abort();
	}
	for (uint32_t i = 0; r.has_defaults && i <= r.n_followers; i++)
		if (!tm_mrec_get_str(&p, end, &s, &n) || !s)
			abort();
	for (uint32_t i = 0; i < r.n_frames; i++) {
		uint64_t rel_pc;
		const char *name, *map;
		size_t nn, mn;
		if (!tm_mrec_get_str(&p, end, &name, &nn) || !tm_mrec_get_str(&p, end, &map, &mn) || !name || !map ||
		    !tm_mrec_get(&p, end, &rel_pc, sizeof rel_pc))
			abort();
	}
	if (p != end)
		abort();
}

static void apply(tm_model *m, tm_buf *rec, const tm_buf *body, int64_t ts)
{
	check(body);
	rec->len = 0;
	tm_mrec_head h = {TM_MREC_PROTO, TM_PR_SAMPLE, 0, 0, 0};
	tm_buf_put(rec, &h, sizeof h);
	tm_buf_put(rec, body->data, body->len);
	tm_model_apply(m, ts, rec->data, (uint32_t)rec->len);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *copy = malloc(size ? size : 1);
	memcpy(copy, data, size);
	const tm_parser *parsers[TM_MREC_KINDS];
	for (unsigned k = 0; k < TM_MREC_KINDS; k++)
		parsers[k] = tm_parser_of(k);
	seen sn = {0};
	tm_model_sink sink = {.ctx = &sn, .sample = on_sample, .counter = on_counter};
	tm_model *m = tm_model_new(&sink, parsers);
	sn.m = m;
	pr_stacks *st = NULL;
	size_t budget = 1u << 20;
	tm_buf body = {0}, rec = {0}, names = {0};
	pr_seq_defaults defaults = {.stack_source = "src", .source_len = 3};
	int64_t ts = 0;
	tm_pb_iter trace, pit;
	tm_pb_field pf, f;
	tm_pb_iter_init(&trace, (tm_span){copy, size});
	while (tm_pb_next(&trace, &pf) == 1) {
		if (pf.id != F_Trace_packet || pf.wire != TM_PB_LEN)
			continue;
		uint32_t seq = 0;
		tm_pb_iter_init(&pit, pf.data);
		while (tm_pb_next(&pit, &f) == 1)
			if (f.id == F_TracePacket_trusted_packet_sequence_id && f.wire == TM_PB_VARINT)
				seq = (uint32_t)f.val;
		tm_pb_iter_init(&pit, pf.data);
		while (tm_pb_next(&pit, &f) == 1) {
			if (f.id == F_TracePacket_trace_packet_defaults && f.wire == TM_PB_LEN) {
				pr_perf_defaults(f.data, &names, &defaults.perf);
				/* its StackSampleDefaults, the last given */
				defaults.has_stack = 0;
				tm_pb_iter dit;
				tm_pb_field df;
				tm_pb_iter_init(&dit, f.data);
				while (tm_pb_next(&dit, &df) == 1)
					if (df.id == F_TracePacketDefaults_stack_sample_defaults && df.wire == TM_PB_LEN) {
						defaults.has_stack = 1;
						defaults.stack = df.data;
					}
			}
			if (f.id == F_TracePacket_incremental_state_cleared && f.val)
				pr_stacks_clear(st);
			else if (f.id == F_TracePacket_interned_data && f.wire == TM_PB_LEN)
				pr_stacks_intern(&st, f.data, &budget);
			if (f.wire != TM_PB_LEN)
				continue;
			if (f.id == F_TracePacket_perf_sample || f.id == F_TracePacket_stack_sample) {
				body.len = 0;
				pr_sample_record(st, f.id, f.data, 0, 0, 0, seq, &defaults, &body);
				apply(m, &rec, &body, ts++);
			} else if (f.id == F_TracePacket_streaming_profile_packet) {
				tm_pb_iter sp;
				tm_pb_field g;
				tm_pb_iter_init(&sp, f.data);
				while (tm_pb_next(&sp, &g) == 1) {
					if (g.id != F_StreamingProfilePacket_callstack_iid || g.wire != TM_PB_VARINT)
						continue;
					body.len = 0;
					pr_sample_record(st, f.id, f.data, g.val, 7, 8, 0, NULL, &body);
					apply(m, &rec, &body, ts++);
				}
			}
		}
	}
	tm_model_finish(m);
	tm_model_free(m);
	pr_stacks_free(st);
	tm_buf_free(&body);
	tm_buf_free(&rec);
	tm_buf_free(&names);
	free(copy);
	return 0;
}
