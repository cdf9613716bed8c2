/* tests/fuzz/fuzz_proto.c - arbitrary bytes as a Perfetto trace: every
 * packet is read (whole input, then 7 bytes at a time; both readings must
 * agree), carried through a batch (tm_packet_put / tm_packet_get: it must
 * come back the same), and every span of every packet goes through every decoder,
 * whatever field it came from, so each decoder meets every kind of
 * garbage. The digest touches every byte a decoder points at, so ASan sees
 * any span that escapes its message. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wire/proto.h"

typedef struct digest {
	uint64_t n, h;
} digest;

static void mix(digest *d, uint64_t v) { d->h = (d->h ^ v) * 1099511628211ULL; }

static void mix_span(digest *d, tm_span s)
{
	mix(d, s.p != NULL);
	for (size_t i = 0; i < s.n; i++)
		mix(d, s.p[i]);
	mix(d, s.n);
}

typedef struct decoders {
	tm_clock_snapshot snap;
	tm_remote_clock_sync rcs;
	tm_trace_attributes attrs;
	tm_process_tree pt;
	tm_track_event te;
	tm_interned_data id;
	tm_ftrace_bundle fb;
} decoders;

static void decode_ftrace(digest *d, decoders *x, tm_span s)
{
	tm_error err;
	mix(d, (uint64_t)tm_ftrace_bundle_decode(s, &x->fb, &err));
	mix(d, x->fb.cpu);
	mix(d, x->fb.last_read_event_timestamp ^ x->fb.previous_bundle_end_timestamp);
	tm_ftrace_iter it;
	tm_ftrace_event ev;
	tm_ftrace_events_begin(&it, &x->fb);
	while (tm_ftrace_events_next(&it, &ev) > 0) {
		mix(d, ev.timestamp);
		mix(d, ev.kind);
		mix_span(d, ev.body);
		switch (ev.kind) {
		case TM_FT_PRINT: mix_span(d, ev.u.print.buf); break;
		case TM_FT_SCHED_SWITCH:
			mix_span(d, ev.u.sched_switch.prev_comm);
			mix_span(d, ev.u.sched_switch.next_comm);
			mix(d, (uint64_t)ev.u.sched_switch.prev_state);
			break;
		case TM_FT_SCHED_WAKING:
		case TM_FT_SCHED_WAKEUP: mix_span(d, ev.u.sched_wake.comm); break;
		case TM_FT_TASK_NEWTASK: mix_span(d, ev.u.task_newtask.comm); break;
		case TM_FT_TASK_RENAME:
			mix_span(d, ev.u.task_rename.oldcomm);
			mix_span(d, ev.u.task_rename.newcomm);
			break;
		case TM_FT_SCHED_PROCESS_EXIT: mix_span(d, ev.u.sched_process_exit.comm); break;
		}
	}
	tm_compact_iter ci;
	tm_compact_switch sw;
	tm_compact_waking wk;
	int r;
	tm_compact_switch_begin(&ci, &x->fb);
	while ((r = tm_compact_switch_next(&ci, &sw)) > 0) {
		mix(d, sw.timestamp);
		mix_span(d, sw.next_comm);
	}
	mix(d, (uint64_t)r);
	tm_compact_waking_begin(&ci, &x->fb);
	while ((r = tm_compact_waking_next(&ci, &wk)) > 0) {
		mix(d, wk.timestamp);
		mix_span(d, wk.comm);
	}
	mix(d, (uint64_t)r);
}

/* Every decoder on one span. */
static void decode_all(digest *d, decoders *x, tm_span s)
{
	mix(d, (uint64_t)tm_clock_snapshot_decode(s, &x->snap));
	for (size_t i = 0; i < x->snap.n; i++)
		mix(d, x->snap.clocks[i].timestamp * x->snap.clocks[i].unit_multiplier_ns);

	tm_remote_clock_sync_decode(s, &x->rcs);
	for (size_t i = 0; i < x->rcs.n_rounds; i++) {
		const tm_sync_round *r = &x->rcs.rounds[i];
		for (size_t k = 0; k < r->client_n; k++)
			mix(d, x->rcs.clocks[r->client_off + k].timestamp);
		for (size_t k = 0; k < r->host_n; k++)
			mix(d, x->rcs.clocks[r->host_off + k].timestamp);
	}

	tm_system_info si;
	tm_system_info_decode(s, &si);
	mix_span(d, si.machine_name);
	mix_span(d, si.sysname);
	mix_span(d, si.release);

	tm_packet_defaults pd;
	tm_packet_defaults_decode(s, &pd);
	mix(d, pd.timestamp_clock_id ^ pd.track_uuid);

	tm_trace_config tc;
	tm_trace_config_decode(s, &tc);
	mix(d, tc.primary_trace_clock);
	tm_trace_attributes_decode(tc.trace_attributes, &x->attrs);
	tm_trace_attributes_decode(s, &x->attrs);
	for (size_t i = 0; i < x->attrs.n; i++) {
		mix_span(d, x->attrs.v[i].key);
		mix_span(d, x->attrs.v[i].string_value);
	}

	tm_process_tree_decode(s, &x->pt);
	for (size_t i = 0; i < x->pt.n_processes; i++) {
		const tm_pt_process *p = &x->pt.processes[i];
		for (size_t k = 0; k < p->cmdline_n; k++)
			mix_span(d, x->pt.cmdline[p->cmdline_off + k]);
	}
	for (size_t i = 0; i < x->pt.n_threads; i++)
		mix_span(d, x->pt.threads[i].name);

	tm_track_descriptor td;
	tm_track_descriptor_decode(s, &td);
	mix(d, td.uuid);
	mix_span(d, td.name);
	mix_span(d, td.process.cmdline0);
	mix_span(d, td.thread.thread_name);
	tm_span args[4];
	size_t nargs = tm_pb_repeated_spans(td.process.raw, 2, args, 4);
	for (size_t i = 0; i < nargs && i < 4; i++)
		mix_span(d, args[i]);

	tm_process_descriptor prd;
	tm_process_descriptor_decode(s, &prd);
	mix_span(d, prd.process_name);
	tm_thread_descriptor thd;
	tm_thread_descriptor_decode(s, &thd);
	mix(d, (uint64_t)thd.reference_timestamp_us);

	tm_track_event_decode(s, &x->te);
	mix_span(d, x->te.name);
	for (size_t i = 0; i < x->te.categories.n; i++)
		mix_span(d, x->te.categories.v[i]);
	for (size_t i = 0; i < x->te.flow_ids.n; i++)
		mix(d, x->te.flow_ids.v[i]);
	for (size_t i = 0; i < x->te.debug_annotations.n; i++) {
		mix_span(d, x->te.debug_annotations.v[i].name);
		mix_span(d, x->te.debug_annotations.v[i].str);
	}

	tm_interned_data_decode(s, &x->id);
	for (size_t i = 0; i < x->id.event_names.n; i++)
		mix_span(d, x->id.event_names.v[i].name);
	for (size_t i = 0; i < x->id.debug_annotation_names.n; i++)
		mix_span(d, x->id.debug_annotation_names.v[i].name);

	decode_ftrace(d, x, s);
}

/* Every field of a packet, spans by their place in its bytes. */
static uint64_t packet_digest(const tm_packet *p)
{
	digest d = {0, 0};
	mix_span(&d, p->raw);
	mix(&d, p->offset);
	mix(&d, p->timestamp);
	mix(&d, p->timestamp_clock_id);
	mix(&d, p->trusted_packet_sequence_id);
	mix(&d, p->machine_id);
	mix(&d, p->sequence_flags);
	mix(&d, p->previous_packet_dropped);
	mix(&d, (uint32_t)p->trusted_uid);
	mix(&d, (uint32_t)p->trusted_pid);
	mix(&d, p->span_mask);
	bool b[] = {p->from_compressed, p->has_timestamp, p->has_timestamp_clock_id,
		    p->has_trusted_packet_sequence_id, p->has_machine_id, p->has_trusted_uid,
		    p->has_trusted_pid, p->incremental_state_cleared, p->first_packet_on_sequence,
		    p->synchronization_marker};
	for (size_t i = 0; i < sizeof b / sizeof b[0]; i++)
		mix(&d, b[i]);
	for (int i = 0; i < TM_PKT_NSPANS; i++) {
		mix(&d, p->span[i].p ? (uint64_t)(p->span[i].p - p->raw.p) : UINT64_MAX);
		mix_span(&d, p->span[i]);
	}
	return d.h;
}

static int run(const uint8_t *data, size_t size, size_t chunk, digest *d, decoders *x,
	       tm_error *err)
{
	tm_buf batch = {0};
	tm_packet back;
	memset(&back, 0, sizeof back);
	tm_blob *b = tm_blob_open_memory(data, size);
	tm_cursor *c = tm_cursor_open(b, err);
	tm_proto_reader *r = tm_proto_reader_new(c);
	if (chunk)
		tm_proto_reader_set_chunk(r, chunk);
	/* Small limits so that the size checks are reachable by the fuzzer. */
	tm_proto_reader_set_max_packet(r, 1 << 20);
	const tm_packet *pkt;
	int rc;
	while ((rc = tm_proto_reader_next(r, &pkt, err)) > 0) {
		d->n++;
		mix(d, pkt->offset);
		mix(d, pkt->timestamp);
		mix(d, pkt->machine_id ^ pkt->trusted_packet_sequence_id ^ pkt->sequence_flags);
		mix_span(d, pkt->raw);
		if (x) {
			batch.len = 0;
			tm_packet_put(&batch, pkt);
			const char *at = batch.data;
			tm_packet_get(&at, &back);
			if (packet_digest(&back) != packet_digest(pkt) || at != batch.data + batch.len)
				abort(); /* a packet handed to another thread must be the same */
		}
		if (x)
			for (int i = 0; i < TM_PKT_NSPANS; i++)
				if (TM_SPAN_HAS(pkt->span[i]))
					decode_all(d, x, pkt->span[i]);
	}
	mix(d, tm_proto_reader_trailing(r));
	tm_buf_free(&batch);
	tm_proto_reader_free(r);
	tm_cursor_close(c);
	tm_blob_unref(b);
	return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	decoders x;
	memset(&x, 0, sizeof(x));
	digest whole = {0, 14695981039346656037ULL}, chunked = whole;
	tm_error e1, e2;
	tm_err_clear(&e1);
	tm_err_clear(&e2);
	int r1 = run(data, size, 0, &whole, &x, &e1);
	int r2 = run(data, size, 7, &chunked, NULL, &e2);

	/* The whole input as one packet body, too: the decoders' own garbage. */
	digest d = whole;
	decode_all(&d, &x, (tm_span){data, size});
	tm_packet pkt;
	tm_error e3;
	tm_packet_extract((tm_span){data, size}, &pkt, &e3);

	tm_clock_snapshot_free(&x.snap);
	tm_remote_clock_sync_free(&x.rcs);
	tm_trace_attributes_free(&x.attrs);
	tm_process_tree_free(&x.pt);
	tm_track_event_free(&x.te);
	tm_interned_data_free(&x.id);
	tm_ftrace_bundle_free(&x.fb);

	/* The read size must not change what is read (decoding is not part
	 * of the chunked run, so compare packet counts and outcome). */
	if (r1 != r2 || whole.n != chunked.n || (r1 < 0 && strcmp(e1.msg, e2.msg) != 0)) {
		fprintf(stderr, "chunked read differs: rc %d/%d, %llu/%llu packets, \"%s\" / \"%s\"\n",
			r1, r2, (unsigned long long)whole.n, (unsigned long long)chunked.n, e1.msg,
			e2.msg);
		abort();
	}
	return 0;
}
