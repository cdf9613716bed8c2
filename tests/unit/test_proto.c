/* tests/unit/test_proto.c - the TracePacket reader, the wire iterator and
 * the message decoders of core/proto (spec/formats.md §5).
 *
 * Conformance fixtures (the .textproto files of testdata/conformance) are
 * encoded by tests/tools/encode_fixtures.sh into a temporary directory;
 * edge cases are built byte by byte, and a few messages with the protobuf-c
 * code generated from protos/trace.proto (which also checks that the two
 * agree).
 */
#include "tt.h"

#include <stdarg.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "clock/clockid.h"
#include "container/archive.h"
#include "pb_write.h"
#include "wire/proto.h"
#include "trace.pb-c.h"
#include "trace_fields.h"

#define G INT64_C(1000000000)

/* Deliberately unknown field numbers, for what the readers do with fields
 * they do not know: Perfetto's Trace has one field, packet (1), and neither
 * TracePacket nor FtraceEvent has a field 999. */
#define UNKNOWN_TRACE_FIELD_A 2
#define UNKNOWN_TRACE_FIELD_B 3
#define UNKNOWN_TRACE_FIELD_C 4
#define UNKNOWN_TRACE_FIELD_D 5
#define UNKNOWN_FIELD 999

static char tmpdir[] = "/tmp/tm_proto_XXXXXX";
static char root[1024] = ".";
static int have_fixtures;

/* ---- helpers ------------------------------------------------------------- */

static const char *path_of(const char *name)
{
	static char p[4][1200];
	static int k;
	k = (k + 1) % 4;
	snprintf(p[k], sizeof p[k], "%s/%s", tmpdir, name);
	return p[k];
}

static unsigned char *slurp(const char *path, size_t *n)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	long len = ftell(f);
	fseek(f, 0, SEEK_SET);
	unsigned char *b = malloc((size_t)len + 1);
	*n = fread(b, 1, (size_t)len, f);
	fclose(f);
	return b;
}

static unsigned char *fixture(const char *name, size_t *n)
{
	char p[256];
	snprintf(p, sizeof p, "%s.pb", name);
	return slurp(path_of(p), n);
}

/* A minimal protobuf writer for hand-made (and deliberately broken) input. */
static void put_raw(tm_buf *b, const void *p, size_t n)
{
	if (n)
		tm_buf_put(b, p, n);
}

static void put_v(tm_buf *b, uint32_t id, uint64_t v)
{
	tag(b, id, TM_PB_VARINT);
	put_varint(b, v);
}

static void put_bytes(tm_buf *b, uint32_t id, const void *p, size_t n)
{
	tag(b, id, TM_PB_LEN);
	put_varint(b, n);
	put_raw(b, p, n);
}

/* Append a sub-message and free its buffer. */
static void put_msg(tm_buf *b, uint32_t id, tm_buf *m)
{
	put_bytes(b, id, m->data, m->len);
	tm_buf_free(m);
}

static void put_packed(tm_buf *b, uint32_t id, const uint64_t *v, size_t n)
{
	tm_buf m = {0};
	for (size_t i = 0; i < n; i++)
		put_varint(&m, v[i]);
	put_msg(b, id, &m);
}

/* A whole Trace.packet holding a TracePacket with a timestamp. */
static void put_ts_packet(tm_buf *trace, uint64_t ts)
{
	tm_buf p = {0};
	put_v(&p, F_TracePacket_timestamp, ts);
	put_msg(trace, F_Trace_packet, &p);
}

typedef struct rd {
	tm_blob *blob;
	tm_cursor *cur;
	tm_proto_reader *r;
	tm_error err;
} rd;

static void rd_mem(rd *x, const void *p, size_t n)
{
	memset(x, 0, sizeof(*x));
	x->blob = tm_blob_open_memory(p, n);
	x->cur = tm_cursor_open(x->blob, &x->err);
	x->r = tm_proto_reader_new(x->cur);
}

static void rd_close(rd *x)
{
	tm_proto_reader_free(x->r);
	tm_cursor_close(x->cur);
	tm_blob_unref(x->blob);
}

/* Read everything; count packets, return the last rc (0 or -1). */
static int rd_count(const void *p, size_t n, size_t chunk, size_t *count, tm_error *err,
		    uint64_t *trailing)
{
	rd x;
	rd_mem(&x, p, n);
	if (chunk)
		tm_proto_reader_set_chunk(x.r, chunk);
	const tm_packet *pkt;
	int rc;
	*count = 0;
	while ((rc = tm_proto_reader_next(x.r, &pkt, err)) > 0)
		(*count)++;
	if (trailing)
		*trailing = tm_proto_reader_trailing(x.r);
	rd_close(&x);
	return rc;
}

/* Expect the input to fail with exactly `msg` after `packets` packets. */
static int fails_with(const void *p, size_t n, size_t packets, const char *msg)
{
	size_t count;
	tm_error err;
	tm_err_clear(&err);
	int rc = rd_count(p, n, 0, &count, &err, NULL);
	if (rc != -1 || count != packets || strcmp(err.msg, msg) != 0) {
		printf("  got rc=%d packets=%zu msg=\"%s\"\n", rc, count, err.msg);
		return 0;
	}
	return 1;
}

static int span_is(tm_span s, const char *str)
{
	return s.p && s.n == strlen(str) && memcmp(s.p, str, s.n) == 0;
}

#define NEED_FIXTURES()                                                        \
	do {                                                                   \
		if (!have_fixtures)                                            \
			SKIP("fixtures not encoded (protoc missing?)");        \
	} while (0)

/* ---- fixtures ------------------------------------------------------------- */

static void test_fixture_spine(void)
{
	NEED_FIXTURES();
	size_t n;
	unsigned char *data = fixture("spine", &n);
	CHECK(data);
	rd x;
	rd_mem(&x, data, n);
	const tm_packet *pkt;
	tm_clock_snapshot snap = {0};
	tm_track_event te = {0};
	tm_track_descriptor td;

	/* SNAP: BOOTTIME 1e9, REALTIME 1.700000001e18, MONOTONIC 5e8. */
	CHECK_INT(tm_proto_reader_next(x.r, &pkt, &x.err), 1);
	CHECK(!pkt->has_trusted_packet_sequence_id && !pkt->has_timestamp && !pkt->has_machine_id);
	CHECK(TM_SPAN_HAS(pkt->clock_snapshot));
	CHECK_INT(pkt->offset, 2);
	CHECK_INT(tm_clock_snapshot_decode(pkt->clock_snapshot, &snap), 1);
	CHECK_INT(snap.n, 3);
	CHECK_INT(snap.clocks[0].clock_id, 6);
	CHECK_INT(snap.clocks[0].timestamp, 1 * G);
	CHECK_INT(snap.clocks[1].clock_id, 1);
	CHECK_INT(snap.clocks[1].timestamp, INT64_C(1700000001000000000));
	CHECK_INT(snap.clocks[2].clock_id, 3);
	CHECK_INT(snap.clocks[2].timestamp, 500000000);
	CHECK_INT(snap.clocks[2].unit_multiplier_ns, 1);
	CHECK(!snap.clocks[2].is_incremental);
	CHECK_INT(snap.primary_trace_clock, 0);

	CHECK_INT(tm_proto_reader_next(x.r, &pkt, &x.err), 1);
	CHECK(pkt->has_trusted_packet_sequence_id);
	CHECK_INT(pkt->trusted_packet_sequence_id, 1);
	CHECK_INT(tm_track_descriptor_decode(pkt->track_descriptor, &td), 1);
	CHECK(td.has_uuid);
	CHECK_INT(td.uuid, 12345);

	CHECK_INT(tm_proto_reader_next(x.r, &pkt, &x.err), 1);
	CHECK(pkt->has_timestamp);
	CHECK_INT(pkt->timestamp, 1100000000);
	CHECK(!pkt->has_timestamp_clock_id);
	CHECK_INT(tm_track_event_decode(pkt->track_event, &te), 1);
	CHECK_INT(te.type, TM_TE_SLICE_BEGIN);
	CHECK_INT(te.track_uuid, 12345);
	CHECK(span_is(te.name, "proto_slice"));

	CHECK_INT(tm_proto_reader_next(x.r, &pkt, &x.err), 1);
	CHECK_INT(pkt->timestamp, 1200000000);
	CHECK_INT(tm_track_event_decode(pkt->track_event, &te), 1);
	CHECK_INT(te.type, TM_TE_SLICE_END);
	CHECK(!TM_SPAN_HAS(te.name));

	CHECK_INT(tm_proto_reader_next(x.r, &pkt, &x.err), 0);
	CHECK_INT(tm_proto_reader_next(x.r, &pkt, &x.err), 0);
	CHECK_INT(tm_proto_reader_trailing(x.r), 0);
	tm_clock_snapshot_free(&snap);
	tm_track_event_free(&te);
	rd_close(&x);
	free(data);
}

static void test_fixture_multi_machine_ids(void)
{
	NEED_FIXTURES();
	size_t n;
	unsigned char *data = fixture("multi", &n);
	CHECK(data);
	rd x;
	rd_mem(&x, data, n);
	const tm_packet *pkt;
	static const int machine[] = {0, 0, 0, 0, 7, 7, 7, 7};
	static const int64_t ts[] = {-1, -1, 1100000000, 1200000000, -1, -1, 50100000000, 50200000000};
	size_t i = 0;
	int rc;
	while ((rc = tm_proto_reader_next(x.r, &pkt, &x.err)) > 0 && i < 8) {
		CHECK_INT(pkt->has_machine_id, machine[i] != 0);
		CHECK_INT(pkt->machine_id, machine[i]);
		CHECK_INT(pkt->has_timestamp, ts[i] >= 0);
		if (ts[i] >= 0)
			CHECK_INT(pkt->timestamp, ts[i]);
		i++;
	}
	CHECK_INT(rc, 0);
	CHECK_INT(i, 8);
	rd_close(&x);
	free(data);
}

static void test_fixture_remote_clock_sync(void)
{
	NEED_FIXTURES();
	size_t n;
	unsigned char *data = fixture("multi_rcs", &n);
	CHECK(data);
	rd x;
	rd_mem(&x, data, n);
	const tm_packet *pkt;
	tm_remote_clock_sync rcs = {0};
	size_t count = 0, rcs_packets = 0;
	while (tm_proto_reader_next(x.r, &pkt, &x.err) > 0) {
		count++;
		if (pkt->has_timestamp)
			CHECK_INT(pkt->timestamp_clock_id, 6);
		if (!TM_SPAN_HAS(pkt->remote_clock_sync))
			continue;
		rcs_packets++;
		CHECK_INT(pkt->machine_id, 7);
		CHECK_INT(tm_remote_clock_sync_decode(pkt->remote_clock_sync, &rcs), 1);
		CHECK_INT(rcs.n_rounds, 2);
		for (size_t r = 0; r < 2; r++) {
			const tm_sync_round *rd_ = &rcs.rounds[r];
			CHECK_INT(rd_->client_n, 1);
			CHECK_INT(rd_->host_n, 1);
			CHECK_INT(rcs.clocks[rd_->client_off].clock_id, 6);
			CHECK_INT(rcs.clocks[rd_->client_off].timestamp, 50 * G);
			CHECK_INT(rcs.clocks[rd_->host_off].clock_id, 6);
			CHECK_INT(rcs.clocks[rd_->host_off].timestamp, 2 * G);
		}
	}
	CHECK_INT(count, 8);
	CHECK_INT(rcs_packets, 1);
	tm_remote_clock_sync_free(&rcs);
	rd_close(&x);
	free(data);
}

static void test_fixture_rcs_example_b(void)
{
	NEED_FIXTURES();
	size_t n;
	unsigned char *data = fixture("s41_rcs_four_rounds", &n);
	CHECK(data);
	rd x;
	rd_mem(&x, data, n);
	const tm_packet *pkt;
	tm_remote_clock_sync rcs = {0};
	static const int64_t client[] = {100 * G, 100 * G + 2000, 140 * G, 140 * G + 10};
	static const int64_t host[] = {10 * G, 10 * G + 1000, 50 * G + 7, 50 * G + 12};
	int seen = 0;
	while (tm_proto_reader_next(x.r, &pkt, &x.err) > 0) {
		if (!TM_SPAN_HAS(pkt->remote_clock_sync))
			continue;
		seen = 1;
		tm_remote_clock_sync_decode(pkt->remote_clock_sync, &rcs);
		CHECK_INT(rcs.n_rounds, 4);
		for (size_t r = 0; r < 4; r++) {
			CHECK_INT(rcs.clocks[rcs.rounds[r].client_off].timestamp, client[r]);
			CHECK_INT(rcs.clocks[rcs.rounds[r].host_off].timestamp, host[r]);
		}
	}
	CHECK(seen);
	tm_remote_clock_sync_free(&rcs);
	rd_close(&x);
	free(data);
}

static void test_fixture_process_tree(void)
{
	NEED_FIXTURES();
	size_t n;
	unsigned char *data = fixture("m7_process", &n);
	CHECK(data);
	rd x;
	rd_mem(&x, data, n);
	const tm_packet *pkt;
	tm_process_tree pt = {0};
	CHECK_INT(tm_proto_reader_next(x.r, &pkt, &x.err), 1);
	CHECK_INT(pkt->machine_id, 7);
	CHECK_INT(tm_process_tree_decode(pkt->process_tree, &pt), 1);
	CHECK_INT(pt.n_processes, 1);
	CHECK_INT(pt.processes[0].pid, 30);
	CHECK(pt.processes[0].has_ppid);
	CHECK_INT(pt.processes[0].ppid, 0);
	CHECK_INT(pt.processes[0].cmdline_n, 1);
	CHECK(span_is(pt.cmdline[pt.processes[0].cmdline_off], "m7_proc"));
	CHECK_INT(pt.n_threads, 0);
	CHECK_INT(tm_proto_reader_next(x.r, &pkt, &x.err), 0);
	tm_process_tree_free(&pt);
	rd_close(&x);
	free(data);
}

static void test_fixture_seq_clock_and_defaults(void)
{
	NEED_FIXTURES();
	size_t n;
	unsigned char *data = fixture("s52_seq_clock_64", &n);
	CHECK(data);
	rd x;
	rd_mem(&x, data, n);
	const tm_packet *pkt;
	tm_packet_defaults d;
	tm_clock_snapshot snap = {0};
	CHECK_INT(tm_proto_reader_next(x.r, &pkt, &x.err), 1);
	CHECK(pkt->incremental_state_cleared);
	CHECK_INT(tm_packet_defaults_decode(pkt->trace_packet_defaults, &d), 1);
	CHECK(d.has_timestamp_clock_id);
	CHECK_INT(d.timestamp_clock_id, 64);
	CHECK(!d.has_track_event_defaults);
	CHECK_INT(tm_proto_reader_next(x.r, &pkt, &x.err), 1); /* descriptor */
	CHECK_INT(tm_proto_reader_next(x.r, &pkt, &x.err), 1);
	CHECK_INT(pkt->trusted_packet_sequence_id, 1);
	tm_clock_snapshot_decode(pkt->clock_snapshot, &snap);
	CHECK_INT(snap.n, 2);
	CHECK_INT(snap.clocks[1].clock_id, 64);
	CHECK_INT(snap.clocks[1].timestamp, 500000);
	CHECK(snap.clocks[1].is_incremental);
	CHECK_INT(snap.clocks[1].unit_multiplier_ns, 1000);
	static const uint64_t ts[] = {5, 3, 10};
	for (int i = 0; i < 3; i++) {
		CHECK_INT(tm_proto_reader_next(x.r, &pkt, &x.err), 1);
		CHECK_INT(pkt->timestamp, ts[i]);
		CHECK(!pkt->has_timestamp_clock_id);
	}
	tm_clock_snapshot_free(&snap);
	rd_close(&x);
	free(data);
}

static void test_fixture_primary_clock_and_sysinfo(void)
{
	NEED_FIXTURES();
	size_t n;
	unsigned char *data = fixture("s57_a", &n);
	CHECK(data);
	rd x;
	rd_mem(&x, data, n);
	const tm_packet *pkt;
	tm_clock_snapshot snap = {0};
	CHECK_INT(tm_proto_reader_next(x.r, &pkt, &x.err), 1);
	tm_clock_snapshot_decode(pkt->clock_snapshot, &snap);
	CHECK_INT(snap.primary_trace_clock, 3);
	tm_clock_snapshot_free(&snap);
	rd_close(&x);
	free(data);

	data = fixture("s63_sysinfo_order", &n);
	CHECK(data);
	rd_mem(&x, data, n);
	tm_system_info si;
	static const char *const names[] = {"first", "second"};
	static const uint64_t ts[] = {1200000000, 1100000000};
	for (int i = 0; i < 2; i++) {
		CHECK_INT(tm_proto_reader_next(x.r, &pkt, &x.err), 1);
		CHECK_INT(pkt->timestamp, ts[i]);
		CHECK_INT(tm_system_info_decode(pkt->system_info, &si), 1);
		CHECK(span_is(si.machine_name, names[i]));
		CHECK(!si.has_utsname);
	}
	rd_close(&x);
	free(data);
}

/* conformance.md §1: concatenated traces are one trace; multi = spine + m7_slice_vm. */
static void test_fixture_concatenation(void)
{
	NEED_FIXTURES();
	size_t a, b, m;
	unsigned char *spine = fixture("spine", &a), *vm = fixture("m7_slice_vm", &b),
		      *multi = fixture("multi", &m);
	CHECK(spine && vm && multi);
	CHECK_INT(m, a + b);
	CHECK(memcmp(multi, spine, a) == 0 && memcmp(multi + a, vm, b) == 0);
	free(spine);
	free(vm);
	free(multi);

	/* multi_q = snap + slice_q + m7_slice_qvm (testdata/conformance/README.md). */
	size_t s1, s2, s3, q;
	unsigned char *snap = fixture("snap", &s1), *sq = fixture("slice_q", &s2),
		      *qvm = fixture("m7_slice_qvm", &s3), *mq = fixture("multi_q", &q);
	CHECK(snap && sq && qvm && mq);
	CHECK_INT(q, s1 + s2 + s3);
	CHECK(memcmp(mq, snap, s1) == 0 && memcmp(mq + s1, sq, s2) == 0 &&
	      memcmp(mq + s1 + s2, qvm, s3) == 0);
	free(snap);
	free(sq);
	free(qvm);
	free(mq);
}

/* Every fixture reads to its end without an error or trailing bytes. */
static void test_fixture_all_readable(void)
{
	NEED_FIXTURES();
	static const char *const names[] = {
		"snap", "spine", "solo", "m7", "slice_q", "m7_process", "m7_slice_vm",
		"m7_slice_qvm", "multi", "multi_q", "multi_rcs", "rt_a_slice", "rt_b_slice",
		"rt_c_slice", "rt_b_slice_boot5", "rt_phone_slice", "boot_a_slice",
		"boot_b_slice", "boot_b_slice_3e9", "boot_boot_slice", "boot_phone_slice",
		"boot_server_slice", "boot_server_slice_3", "boot_server_slice_50e9",
		"s27_reclaim", "s41_rcs_four_rounds", "s42_hash_tiebreak", "s43_hash_order",
		"s46_nearest", "s47_tokenize_time", "s48_chain", "s49_hash", "s49_hash_swapped",
		"s50_realtime_jump", "s51_non_monotonic", "s52_seq_clock_64",
		"s53_incremental_global", "s54_seq_clock_no_seq", "s55_early_packet",
		"s56_remote_first", "s57_a", "s57_b", "s63_sysinfo_order",
		"s64_rcs_two_packets", "s65_rcs_decreasing",
	};
	/* Packet counts follow from the fixture definitions of conformance.md §1. */
	static const size_t packets[] = {
		1, 4, 3, 3, 3, 1, 4, 4, 8, 8, 8, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4,
		10, 4, 4, 4, 10, 5, 9, 4, 4, 6, 6, 8, 3, 1, 3, 10, 4, 4, 5, 7, 5,
	};
	_Static_assert(sizeof(names) / sizeof(names[0]) == sizeof(packets) / sizeof(packets[0]),
		       "one count per fixture");
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		size_t n, count;
		uint64_t trailing;
		tm_error err;
		unsigned char *data = fixture(names[i], &n);
		if (!data)
			TT_FAIL_("fixture %s.pb missing", names[i]);
		int rc = rd_count(data, n, 0, &count, &err, &trailing);
		free(data);
		if (rc != 0 || count != packets[i] || trailing)
			TT_FAIL_("%s: rc %d, %zu packets (expected %zu), %llu trailing", names[i], rc,
				 count, packets[i], (unsigned long long)trailing);
	}
}

/* The RT and BOOT instances carry the parameters of conformance.md §2.4. */
static void test_fixture_rt_boot_parameters(void)
{
	NEED_FIXTURES();
	static const struct {
		const char *name;
		int64_t boot, rt; /* rt 0: a BOOT fixture */
		uint32_t seq;
		uint64_t uuid;
		int64_t at;
		const char *slice;
	} cases[] = {
		{"rt_a_slice", 1 * G, INT64_C(1700000001000000000), 1, 111, 1100000000, "a_slice"},
		{"rt_b_slice", 1 * G, INT64_C(1700000002000000000), 2, 222, 1100000000, "b_slice"},
		{"rt_c_slice", 1 * G, INT64_C(1700000003000000000), 3, 333, 1100000000, "c_slice"},
		{"rt_b_slice_boot5", 5 * G, INT64_C(1700000001000000000), 2, 222, 5100000000, "b_slice"},
		{"rt_phone_slice", 1 * G, INT64_C(1700000001500000000), 1, 111, 1100000000, "phone_slice"},
		{"boot_b_slice_3e9", 1 * G, 0, 2, 222, 3 * G, "b_slice"},
		{"boot_server_slice_3", 1 * G, 0, 3, 333, 1100000000, "server_slice"},
		{"boot_server_slice_50e9", 50 * G, 0, 3, 333, 50100000000, "server_slice"},
	};
	tm_clock_snapshot snap = {0};
	tm_track_event te = {0};
	tm_track_descriptor td;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		size_t n;
		unsigned char *data = fixture(cases[i].name, &n);
		CHECK(data);
		rd x;
		rd_mem(&x, data, n);
		const tm_packet *pkt;
		CHECK_INT(tm_proto_reader_next(x.r, &pkt, &x.err), 1);
		tm_clock_snapshot_decode(pkt->clock_snapshot, &snap);
		CHECK_INT(snap.n, cases[i].rt ? 2 : 1);
		CHECK_INT(snap.clocks[0].clock_id, 6);
		CHECK_INT(snap.clocks[0].timestamp, cases[i].boot);
		if (cases[i].rt) {
			CHECK_INT(snap.clocks[1].clock_id, 1);
			CHECK_INT(snap.clocks[1].timestamp, cases[i].rt);
		}
		CHECK_INT(tm_proto_reader_next(x.r, &pkt, &x.err), 1);
		CHECK_INT(pkt->trusted_packet_sequence_id, cases[i].seq);
		tm_track_descriptor_decode(pkt->track_descriptor, &td);
		CHECK_INT(td.uuid, cases[i].uuid);
		CHECK_INT(tm_proto_reader_next(x.r, &pkt, &x.err), 1);
		CHECK_INT(pkt->timestamp, cases[i].at);
		tm_track_event_decode(pkt->track_event, &te);
		CHECK(span_is(te.name, cases[i].slice));
		CHECK_INT(te.track_uuid, cases[i].uuid);
		CHECK_INT(tm_proto_reader_next(x.r, &pkt, &x.err), 1);
		CHECK_INT(pkt->timestamp, cases[i].at + 100000000);
		rd_close(&x);
		free(data);
	}
	tm_clock_snapshot_free(&snap);
	tm_track_event_free(&te);
}

/* ---- compressed packets (formats.md §5.1) ----------------------------------- */

/* zlib (gzip = 0) or gzip (gzip = 1) framing of `in`. */
static void deflate_to(tm_buf *out, const void *in, size_t n, int gzip)
{
	z_stream z;
	memset(&z, 0, sizeof(z));
	deflateInit2(&z, 6, Z_DEFLATED, gzip ? 16 + 15 : 15, 8, Z_DEFAULT_STRATEGY);
	uLong bound = deflateBound(&z, (uLong)n);
	unsigned char *buf = malloc(bound);
	z.next_in = (Bytef *)in;
	z.avail_in = (uInt)n;
	z.next_out = buf;
	z.avail_out = (uInt)bound;
	deflate(&z, Z_FINISH);
	put_raw(out, buf, bound - z.avail_out);
	deflateEnd(&z);
	free(buf);
}

static void put_compressed_packet(tm_buf *trace, uint32_t field, const tm_buf *payload)
{
	tm_buf p = {0};
	put_bytes(&p, field, payload->data, payload->len);
	put_msg(trace, F_Trace_packet, &p);
}

static void test_compressed_packets(void)
{
	for (int gzip = 0; gzip < 2; gzip++) {
		tm_buf inner = {0}, z = {0}, trace = {0};
		for (uint64_t t = 1; t <= 5; t++)
			put_ts_packet(&inner, t * 10);
		deflate_to(&z, inner.data, inner.len, gzip);
		put_ts_packet(&trace, 1);
		put_compressed_packet(&trace, F_TracePacket_compressed_packets, &z);
		put_ts_packet(&trace, 99);

		rd x;
		rd_mem(&x, trace.data, trace.len);
		const tm_packet *pkt;
		CHECK_INT(tm_proto_reader_next(x.r, &pkt, &x.err), 1);
		CHECK_INT(pkt->timestamp, 1);
		CHECK(!pkt->from_compressed);
		uint64_t bundle_offset = 0;
		for (uint64_t t = 1; t <= 5; t++) {
			CHECK_INT(tm_proto_reader_next(x.r, &pkt, &x.err), 1);
			CHECK_INT(pkt->timestamp, t * 10);
			CHECK(pkt->from_compressed);
			if (t == 1)
				bundle_offset = pkt->offset;
			CHECK_INT(pkt->offset, bundle_offset);
		}
		CHECK_INT(bundle_offset, 4 + 2); /* after "0a 02 40 01" and the bundle's "0a LL" */
		CHECK_INT(tm_proto_reader_next(x.r, &pkt, &x.err), 1);
		CHECK_INT(pkt->timestamp, 99);
		CHECK(!pkt->from_compressed);
		CHECK_INT(tm_proto_reader_next(x.r, &pkt, &x.err), 0);
		rd_close(&x);
		tm_buf_free(&inner);
		tm_buf_free(&z);
		tm_buf_free(&trace);
	}
}

/* Framing inside an inflated bundle: exact texts from the reference. */
static void test_compressed_errors(void)
{
	static const char *const DECOMP = "Failed to decompress compressed_packets (ERR:tp-corrupt)";
	tm_buf inner = {0}, z = {0}, trace = {0};

	/* Corrupt deflate data. */
	tm_buf garbage = {0};
	put_raw(&garbage, "garbage!", 8);
	put_compressed_packet(&trace, F_TracePacket_compressed_packets, &garbage);
	tm_buf_free(&garbage);
	CHECK(fails_with(trace.data, trace.len, 0, DECOMP));
	tm_buf_free(&trace);

	/* Trailing bytes after the stream, and a stream cut short. */
	put_ts_packet(&inner, 7);
	deflate_to(&z, inner.data, inner.len, 0);
	tm_buf_put(&z, "x", 1);
	put_compressed_packet(&trace, F_TracePacket_compressed_packets, &z);
	CHECK(fails_with(trace.data, trace.len, 0, DECOMP));
	tm_buf_free(&trace);
	z.len -= 3;
	put_compressed_packet(&trace, F_TracePacket_compressed_packets, &z);
	CHECK(fails_with(trace.data, trace.len, 0, DECOMP));
	tm_buf_free(&trace);
	tm_buf_free(&z);
	tm_buf_free(&inner);

	/* An inner field that is not Trace.packet. */
	put_ts_packet(&inner, 7);
	put_v(&inner, UNKNOWN_TRACE_FIELD_A, 5);
	put_ts_packet(&inner, 8);
	deflate_to(&z, inner.data, inner.len, 0);
	put_compressed_packet(&trace, F_TracePacket_compressed_packets, &z);
	CHECK(fails_with(trace.data, trace.len, 1, "Expected TracePacket tag (ERR:tp-corrupt)"));
	tm_buf_free(&trace);
	tm_buf_free(&z);
	tm_buf_free(&inner);

	/* An inner size past the end, and a size varint that never ends. */
	static const unsigned char too_long[] = {
		TM_PB_TAG(F_Trace_packet, TM_PB_LEN), 9, /* broken on purpose: 2 bytes follow */
		TM_PB_TAG(F_TracePacket_timestamp, TM_PB_VARINT), 1,
	};
	static const unsigned char bad_varint[] = {
		TM_PB_TAG(F_Trace_packet, TM_PB_LEN), 0xff, 0xff, 0xff, /* on purpose: no last byte */
	};
	const unsigned char *bad[] = {too_long, bad_varint};
	for (int i = 0; i < 2; i++) {
		deflate_to(&z, bad[i], 4, 0);
		put_compressed_packet(&trace, F_TracePacket_compressed_packets, &z);
		CHECK(fails_with(trace.data, trace.len, 0, "Invalid packet size (ERR:tp-corrupt)"));
		tm_buf_free(&trace);
		tm_buf_free(&z);
	}

	/* An inner packet that does not parse to its end: on purpose, its
	 * timestamp's varint has no last byte. */
	static const unsigned char not_fully[] = {
		TM_PB_TAG(F_Trace_packet, TM_PB_LEN), 2, TM_PB_TAG(F_TracePacket_timestamp, TM_PB_VARINT), 0xff,
	};
	deflate_to(&z, not_fully, 4, 0);
	put_compressed_packet(&trace, F_TracePacket_compressed_packets, &z);
	CHECK(fails_with(trace.data, trace.len, 0,
			 "Failed to parse proto packet fully; the trace is probably corrupt. (ERR:tp-corrupt)"));
	tm_buf_free(&trace);
	tm_buf_free(&z);

	/* Two bytes or fewer left at the end of a bundle are ignored, as in
	 * the reference's re-framing loop; an empty inner packet is kept. The
	 * second packet is broken on purpose: its one byte is a tag of field
	 * 0. */
	static const unsigned char tail[] = {
		TM_PB_TAG(F_Trace_packet, TM_PB_LEN), 0,
		TM_PB_TAG(F_Trace_packet, TM_PB_LEN), 1, TM_PB_TAG(PB_NO_FIELD, TM_PB_VARINT),
		TM_PB_TAG(F_Trace_packet, TM_PB_LEN), 5,
	};
	deflate_to(&z, tail, sizeof tail - 2, 0); /* "0a 00 0a 01 00" */
	put_compressed_packet(&trace, F_TracePacket_compressed_packets, &z);
	size_t count;
	tm_error err;
	CHECK_INT(rd_count(trace.data, trace.len, 0, &count, &err, NULL), -1);
	CHECK_INT(count, 1); /* the empty packet, then "00" fails */
	CHECK_STR(err.msg, "Failed to parse proto packet fully; the trace is probably corrupt. (ERR:tp-corrupt)");
	tm_buf_free(&trace);
	tm_buf_free(&z);
	deflate_to(&z, tail, 2, 0); /* "0a 00": two bytes, nothing */
	put_compressed_packet(&trace, F_TracePacket_compressed_packets, &z);
	put_ts_packet(&trace, 3);
	CHECK_INT(rd_count(trace.data, trace.len, 0, &count, &err, NULL), 0);
	CHECK_INT(count, 1);
	tm_buf_free(&trace);
	tm_buf_free(&z);

	/* Nested bundles: the reference aborts; we refuse them. */
	tm_buf nested = {0};
	put_ts_packet(&inner, 1);
	deflate_to(&z, inner.data, inner.len, 0);
	put_compressed_packet(&nested, F_TracePacket_compressed_packets, &z);
	tm_buf_free(&z);
	deflate_to(&z, nested.data, nested.len, 0);
	put_compressed_packet(&trace, F_TracePacket_compressed_packets, &z);
	CHECK_INT(rd_count(trace.data, trace.len, 0, &count, &err, NULL), -1);
	CHECK_INT(err.code, TM_EUNSUP);
	tm_buf_free(&trace);
	tm_buf_free(&z);
	tm_buf_free(&nested);
	tm_buf_free(&inner);
}

/* The bundle is found by a decoder that stops at damage, so a bundle
 * before the damage expands and the damage goes unnoticed (as in the
 * reference); damage before it is an error. */
static void test_compressed_before_damage(void)
{
	tm_buf inner = {0}, z = {0}, p = {0}, trace = {0};
	put_ts_packet(&inner, 42);
	deflate_to(&z, inner.data, inner.len, 0);
	put_bytes(&p, F_TracePacket_compressed_packets, z.data, z.len);
	tag(&p, F_TracePacket_timestamp, TM_PB_VARINT); /* on purpose: a tag without its value */
	put_msg(&trace, F_Trace_packet, &p);
	size_t count;
	tm_error err;
	CHECK_INT(rd_count(trace.data, trace.len, 0, &count, &err, NULL), 0);
	CHECK_INT(count, 1);
	tm_buf_free(&trace);

	tag(&p, F_TracePacket_timestamp, TM_PB_VARINT); /* the same damage, first */
	put_bytes(&p, F_TracePacket_compressed_packets, z.data, z.len);
	put_msg(&trace, F_Trace_packet, &p);
	CHECK(fails_with(trace.data, trace.len, 0,
			 "Failed to parse proto packet fully; the trace is probably corrupt. (ERR:tp-corrupt)"));
	tm_buf_free(&trace);
	tm_buf_free(&z);
	tm_buf_free(&inner);
}

static int zstd_of(const void *in, size_t n, tm_buf *out)
{
	FILE *f = fopen(path_of("z.in"), "wb");
	if (!f)
		return -1;
	fwrite(in, 1, n, f);
	fclose(f);
	char cmd[4096];
	snprintf(cmd, sizeof cmd, "zstd -q -f -c '%s' > '%s' 2>/dev/null", path_of("z.in"),
		 path_of("z.out"));
	if (system(cmd) != 0)
		return -1;
	size_t len;
	unsigned char *b = slurp(path_of("z.out"), &len);
	if (!b)
		return -1;
	put_raw(out, b, len);
	free(b);
	return 0;
}

static void test_zstd_packets_and_mixing(void)
{
	tm_buf inner = {0}, zs = {0}, gz = {0}, trace = {0};
	for (uint64_t t = 1; t <= 3; t++)
		put_ts_packet(&inner, t);
	if (zstd_of(inner.data, inner.len, &zs) < 0) {
		tm_buf_free(&inner);
		SKIP("zstd command not available");
	}
	deflate_to(&gz, inner.data, inner.len, 1);

	put_compressed_packet(&trace, F_TracePacket_zstd_compressed_packets, &zs);
	size_t count;
	tm_error err;
	CHECK_INT(rd_count(trace.data, trace.len, 0, &count, &err, NULL), 0);
	CHECK_INT(count, 3);

	static const char *const MIX =
		"A trace must not mix compressed_packets and zstd_compressed_packets (ERR:tp-corrupt)";
	put_compressed_packet(&trace, F_TracePacket_compressed_packets, &gz);
	CHECK(fails_with(trace.data, trace.len, 3, MIX));
	tm_buf_free(&trace);
	put_compressed_packet(&trace, F_TracePacket_compressed_packets, &gz);
	put_compressed_packet(&trace, F_TracePacket_zstd_compressed_packets, &zs);
	CHECK(fails_with(trace.data, trace.len, 3, MIX));
	tm_buf_free(&trace);

	/* A corrupt zstd frame. */
	zs.data[zs.len / 2] ^= 0x55;
	zs.data[zs.len - 1] ^= 0x55;
	put_compressed_packet(&trace, F_TracePacket_zstd_compressed_packets, &zs);
	CHECK(fails_with(trace.data, trace.len, 0,
			 "Failed to decompress compressed_packets (ERR:tp-corrupt)"));
	tm_buf_free(&trace);
	tm_buf_free(&inner);
	tm_buf_free(&zs);
	tm_buf_free(&gz);
}

/* ---- top-level framing (formats.md §5.1) ------------------------------------ */

static void test_framing_errors(void)
{
	unsigned char b[64];
	tm_buf ok = {0};
	put_ts_packet(&ok, 5); /* 4 bytes: the errors below are @ 0x4 */

	/* Each lead is broken on purpose: 0xff continues a varint (a tag, a
	 * value, a size) into the 0xff fill, so it never ends; the length
	 * 2^64 - 1 is past TM_PB_MAX_LEN; the wire types are none protobuf
	 * uses. */
	static const struct {
		unsigned char lead[12];
		size_t lead_n;
		const char *msg;
	} cases[] = {
		{{0xff}, 1, "Failed to parse tag @ 0x4 (ERR:tp-corrupt)"},
		{{TM_PB_TAG(UNKNOWN_TRACE_FIELD_A, TM_PB_VARINT), 0xff}, 2,
		 "Failed to skip varint @ 0x4 (ERR:tp-corrupt)"},
		{{TM_PB_TAG(UNKNOWN_TRACE_FIELD_A, TM_PB_LEN), 0xff}, 2,
		 "Failed to skip delimited @ 0x4 (ERR:tp-corrupt)"},
		{{TM_PB_TAG(F_Trace_packet, TM_PB_LEN), 0xff}, 2, "Failed to parse TracePacket size (ERR:tp-corrupt)"},
		{{TM_PB_TAG(UNKNOWN_TRACE_FIELD_A, TM_PB_LEN), 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01},
		 11, "Oversized length-delimited field @ 0x4 (ERR:tp-corrupt)"},
		{{TM_PB_TAG(F_Trace_packet, PB_WIRE_GROUP_START)}, 1,
		 "Unknown field type @ 0x4; the trace is corrupt or was produced by a newer version of Perfetto (ERR:tp-corrupt)"},
		{{TM_PB_TAG(F_Trace_packet, PB_WIRE_UNDEFINED)}, 1,
		 "Unknown field type @ 0x4; the trace is corrupt or was produced by a newer version of Perfetto (ERR:tp-corrupt)"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		/* The lead, then 0xff up to a full 20-byte header. */
		memcpy(b, ok.data, ok.len);
		memset(b + ok.len, 0xff, 30);
		memcpy(b + ok.len, cases[i].lead, cases[i].lead_n);
		if (!fails_with(b, ok.len + 30, 1, cases[i].msg))
			TT_FAIL_("case %zu: %s", i, cases[i].msg);
	}

	/* A packet that does not parse to its end: each is broken on purpose
	 * inside a well-formed Trace.packet. */
#define PACKET_OF(n) TM_PB_TAG(F_Trace_packet, TM_PB_LEN), n
	static const unsigned char bad_packets[][6] = {
		/* the timestamp's varint has no last byte */
		{PACKET_OF(2), TM_PB_TAG(F_TracePacket_timestamp, TM_PB_VARINT), 0xff},
		/* field id 0 */
		{PACKET_OF(2), TM_PB_TAG(PB_NO_FIELD, TM_PB_VARINT), 1},
		/* wire type 3 */
		{PACKET_OF(2), TM_PB_TAG(F_TracePacket_timestamp, PB_WIRE_GROUP_START), 1},
		/* 5 bytes said, 1 there */
		{PACKET_OF(3), TM_PB_TAG(F_TracePacket_trusted_uid, TM_PB_LEN), 5, 0},
		/* a tag at the very end, its value missing */
		{PACKET_OF(1), TM_PB_TAG(F_TracePacket_timestamp, TM_PB_VARINT)},
	};
#undef PACKET_OF
	static const size_t bad_n[] = {4, 4, 4, 5, 3};
	for (size_t i = 0; i < sizeof(bad_n) / sizeof(bad_n[0]); i++) {
		tm_buf t = {0};
		put_raw(&t, ok.data, ok.len);
		put_raw(&t, bad_packets[i], bad_n[i]);
		if (!fails_with(t.data, t.len, 1,
				"Failed to parse proto packet fully; the trace is probably corrupt. (ERR:tp-corrupt)"))
			TT_FAIL_("bad packet %zu", i);
		tm_buf_free(&t);
	}

	/* After an error the reader keeps failing with the same text. */
	rd x;
	rd_mem(&x, bad_packets[0], 4);
	const tm_packet *pkt;
	CHECK_INT(tm_proto_reader_next(x.r, &pkt, &x.err), -1);
	tm_err_clear(&x.err);
	CHECK_INT(tm_proto_reader_next(x.r, &pkt, &x.err), -1);
	CHECK_STR(x.err.msg, "Failed to parse proto packet fully; the trace is probably corrupt. (ERR:tp-corrupt)");
	rd_close(&x);
	tm_buf_free(&ok);
}

/* Other top-level fields are skipped by wire type; empty packets dropped. */
static void test_skip_other_fields(void)
{
	tm_buf t = {0};
	put_ts_packet(&t, 1);
	put_v(&t, UNKNOWN_TRACE_FIELD_A, 123456789);         /* varint */
	put_bytes(&t, UNKNOWN_TRACE_FIELD_B, "abcdefgh", 8); /* length-delimited */
	tag(&t, UNKNOWN_TRACE_FIELD_C, TM_PB_I64);
	put_raw(&t, "12345678", 8);
	tag(&t, UNKNOWN_TRACE_FIELD_D, TM_PB_I32);
	put_raw(&t, "1234", 4);
	put_v(&t, F_Trace_packet, 1);          /* packet's number as a varint: not a packet */
	put_bytes(&t, F_Trace_packet, "", 0);  /* empty packet */
	put_ts_packet(&t, 2);
	put_bytes(&t, PB_NO_FIELD, "", 0);     /* field 0, malformed on purpose: skipped too */
	put_ts_packet(&t, 3);
	size_t count;
	tm_error err;
	uint64_t trailing;
	for (size_t chunk = 0; chunk < 8; chunk++) {
		CHECK_INT(rd_count(t.data, t.len, chunk, &count, &err, &trailing), 0);
		CHECK_INT(count, 3);
		CHECK_INT(trailing, 0);
	}
	tm_buf_free(&t);
}

/* The reference ends silently where the input ends inside a field. */
static void test_truncated(void)
{
	tm_buf t = {0};
	put_ts_packet(&t, 1);
	put_ts_packet(&t, 1000000); /* 0a 04 40 c0 84 3d */
	size_t count;
	tm_error err;
	uint64_t trailing;
	for (size_t cut = 1; cut <= 6; cut++) {
		CHECK_INT(rd_count(t.data, t.len - cut, 0, &count, &err, &trailing), 0);
		CHECK_INT(count, 1);
		CHECK_INT(trailing, 6 - cut);
	}
	/* A skipped field cut short, and a lone byte. */
	tm_buf s = {0};
	put_ts_packet(&s, 1);
	put_bytes(&s, UNKNOWN_TRACE_FIELD_B, "abcdefgh", 8);
	CHECK_INT(rd_count(s.data, s.len - 2, 3, &count, &err, &trailing), 0);
	CHECK_INT(count, 1);
	CHECK_INT(trailing, 8);
	tm_buf lone = {0};
	tag(&lone, F_Trace_packet, TM_PB_LEN); /* on purpose: no size after it */
	CHECK_INT(rd_count(lone.data, lone.len, 0, &count, &err, &trailing), 0);
	CHECK_INT(count, 0);
	CHECK_INT(trailing, 1);
	tm_buf_free(&lone);
	CHECK_INT(rd_count("", 0, 0, &count, &err, &trailing), 0);
	CHECK_INT(count, 0);
	CHECK_INT(trailing, 0);
	tm_buf_free(&s);
	tm_buf_free(&t);
}

/* Packets straddling the cursor's reads, and one bigger than the initial
 * buffer, come out byte-identical whatever the read size. */
static void test_chunk_boundaries(void)
{
	tm_buf t = {0};
	for (uint64_t i = 0; i < 50; i++) {
		tm_buf p = {0};
		put_v(&p, F_TracePacket_timestamp, i * 1000003);
		put_v(&p, F_TracePacket_trusted_packet_sequence_id, i % 3 + 1);
		char name[40];
		int k = snprintf(name, sizeof name, "packet-%llu", (unsigned long long)i);
		put_bytes(&p, F_TracePacket_track_event, name, (size_t)k);
		put_msg(&t, F_Trace_packet, &p);
	}
	size_t big_n = (size_t)3 << 20;
	char *big = malloc(big_n);
	memset(big, 'x', big_n);
	tm_buf p = {0};
	put_v(&p, F_TracePacket_timestamp, 777);
	put_bytes(&p, F_TracePacket_synchronization_marker, big, big_n);
	put_msg(&t, F_Trace_packet, &p);
	put_ts_packet(&t, 778);
	free(big);

	static const size_t chunks[] = {0, 1, 2, 3, 7, 19, 20, 21, 4096, 65537};
	for (size_t c = 0; c < sizeof(chunks) / sizeof(chunks[0]); c++) {
		rd x;
		rd_mem(&x, t.data, t.len);
		if (chunks[c])
			tm_proto_reader_set_chunk(x.r, chunks[c]);
		const tm_packet *pkt;
		uint64_t i = 0;
		int rc;
		while ((rc = tm_proto_reader_next(x.r, &pkt, &x.err)) > 0) {
			if (i < 50) {
				CHECK_INT(pkt->timestamp, i * 1000003);
				CHECK_INT(pkt->trusted_packet_sequence_id, i % 3 + 1);
				char name[40];
				snprintf(name, sizeof name, "packet-%llu", (unsigned long long)i);
				CHECK(span_is(pkt->track_event, name));
				CHECK(!pkt->synchronization_marker);
			} else if (i == 50) {
				/* The reader reuses its packet: the previous spans are gone. */
				CHECK(!TM_SPAN_HAS(pkt->track_event));
				CHECK_INT(pkt->span_mask, 1u << TM_PKT_SYNCHRONIZATION_MARKER);
				CHECK_INT(pkt->timestamp, 777);
				CHECK(pkt->synchronization_marker);
				CHECK_INT(pkt->synchronization_marker_bytes.n, big_n);
				CHECK(pkt->synchronization_marker_bytes.p[big_n - 1] == 'x');
			} else {
				CHECK_INT(pkt->timestamp, 778);
				CHECK(!pkt->synchronization_marker && !pkt->span_mask);
			}
			CHECK(pkt->offset < t.len && pkt->raw.p[0] == TM_PB_TAG(F_TracePacket_timestamp, TM_PB_VARINT));
			i++;
		}
		if (rc != 0 || i != 52)
			TT_FAIL_("chunk %zu: rc %d after %llu packets", chunks[c], rc, (unsigned long long)i);
		rd_close(&x);
	}
	tm_buf_free(&t);
}

/* A packet bigger than the buffer keeps is read whole, and the packets
 * after it are read normally once the buffer has shrunk back. */
static void test_huge_packet(void)
{
	tm_buf t = {0};
	put_ts_packet(&t, 1);
	size_t big_n = (size_t)20 << 20;
	char *big = malloc(big_n);
	memset(big, 'h', big_n);
	big[big_n - 1] = 'H';
	tm_buf p = {0};
	put_bytes(&p, F_TracePacket_chrome_events, big, big_n);
	put_msg(&t, F_Trace_packet, &p);
	free(big);
	for (uint64_t i = 2; i < 20000; i++)
		put_ts_packet(&t, i);
	rd x;
	rd_mem(&x, t.data, t.len);
	const tm_packet *pkt;
	CHECK_INT(tm_proto_reader_next(x.r, &pkt, &x.err), 1);
	CHECK_INT(tm_proto_reader_next(x.r, &pkt, &x.err), 1);
	CHECK_INT(pkt->chrome_events.n, big_n);
	CHECK(pkt->chrome_events.p[big_n - 1] == 'H');
	for (uint64_t i = 2; i < 20000; i++) {
		CHECK_INT(tm_proto_reader_next(x.r, &pkt, &x.err), 1);
		CHECK_INT(pkt->timestamp, i);
	}
	CHECK_INT(tm_proto_reader_next(x.r, &pkt, &x.err), 0);
	rd_close(&x);
	tm_buf_free(&t);
}

static void test_packet_size_limit(void)
{
	tm_buf t = {0};
	put_ts_packet(&t, 1);
	char body[300];
	memset(body, 'y', sizeof body);
	put_bytes(&t, F_Trace_packet, body, sizeof body);
	rd x;
	rd_mem(&x, t.data, t.len);
	tm_proto_reader_set_max_packet(x.r, 100);
	const tm_packet *pkt;
	CHECK_INT(tm_proto_reader_next(x.r, &pkt, &x.err), 1);
	CHECK_INT(tm_proto_reader_next(x.r, &pkt, &x.err), -1);
	CHECK_INT(x.err.code, TM_EUNSUP);
	CHECK(strstr(x.err.msg, "@ 0x4 has 300 bytes") != NULL);
	rd_close(&x);

	/* Cut short, the big packet ends the trace silently, as in the reference. */
	rd_mem(&x, t.data, t.len - 1);
	tm_proto_reader_set_max_packet(x.r, 100);
	CHECK_INT(tm_proto_reader_next(x.r, &pkt, &x.err), 1);
	CHECK_INT(tm_proto_reader_next(x.r, &pkt, &x.err), 0);
	CHECK_INT(tm_proto_reader_trailing(x.r), 3 + 299);
	rd_close(&x);
	tm_buf_free(&t);
}

/* ---- wire iterator and extraction ---------------------------------------------- */

static void test_wire_iterator(void)
{
	/* The iterator knows no schema: numbers of no particular message. */
	enum { ANY_VARINT = 1, ANY_REPEATED = 2, ANY_FIXED64 = 2, ANY_LEN = 3, ANY_FIXED32 = 4 };
	tm_buf m = {0};
	put_v(&m, ANY_VARINT, 300);
	tag(&m, ANY_FIXED64, TM_PB_I64);
	put_raw(&m, "\x01\x02\x03\x04\x05\x06\x07\x08", 8);
	put_bytes(&m, ANY_LEN, "hi", 2);
	tag(&m, ANY_FIXED32, TM_PB_I32);
	put_raw(&m, "\x01\x00\x00\x80", 4);
	put_v(&m, TM_PB_MAX_FIELD_ID + 1, 9);                       /* skipped */
	put_v(&m, TM_PB_MAX_FIELD_ID, 10);
	tm_pb_iter it;
	tm_pb_field f;
	tm_pb_iter_init(&it, (tm_span){(const uint8_t *)m.data, m.len});
	CHECK_INT(tm_pb_next(&it, &f), 1);
	CHECK_INT(f.id, ANY_VARINT);
	CHECK_INT(f.wire, TM_PB_VARINT);
	CHECK_INT(f.val, 300);
	CHECK_INT(tm_pb_next(&it, &f), 1);
	CHECK_INT(f.wire, TM_PB_I64);
	CHECK(f.val == UINT64_C(0x0807060504030201));
	CHECK_INT(tm_pb_next(&it, &f), 1);
	CHECK(span_is(f.data, "hi"));
	CHECK_INT(tm_pb_next(&it, &f), 1);
	CHECK_INT(f.wire, TM_PB_I32);
	CHECK(f.val == UINT64_C(0x80000001));
	CHECK_INT(tm_pb_next(&it, &f), 1);
	CHECK_INT(f.id, TM_PB_MAX_FIELD_ID);
	CHECK_INT(f.val, 10);
	CHECK_INT(tm_pb_next(&it, &f), 0);
	CHECK(!it.malformed);
	tm_buf_free(&m);

	/* An 11-byte varint is malformed (on purpose); so is every later call. */
	static const uint8_t overlong[] = {TM_PB_TAG(ANY_VARINT, TM_PB_VARINT),
					   0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01};
	tm_pb_iter_init(&it, (tm_span){overlong, sizeof overlong});
	CHECK_INT(tm_pb_next(&it, &f), -1);
	CHECK_INT(tm_pb_next(&it, &f), -1);
	CHECK(it.malformed);
	/* A 10-byte varint keeps only the low bit of its last byte. */
	static const uint8_t ten[] = {TM_PB_TAG(ANY_VARINT, TM_PB_VARINT),
				      0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f};
	tm_pb_iter_init(&it, (tm_span){ten, sizeof ten});
	CHECK_INT(tm_pb_next(&it, &f), 1);
	CHECK(f.val == UINT64_MAX);

	/* Empty and absent spans are empty messages. */
	tm_pb_iter_init(&it, (tm_span){NULL, 0});
	CHECK_INT(tm_pb_next(&it, &f), 0);

	tm_span out[2];
	tm_buf r = {0};
	put_bytes(&r, ANY_REPEATED, "a", 1);
	put_v(&r, ANY_REPEATED, 5); /* wrong wire type: not counted */
	put_bytes(&r, ANY_REPEATED, "bb", 2);
	put_bytes(&r, ANY_REPEATED, "ccc", 3);
	CHECK_INT(tm_pb_repeated_spans((tm_span){(const uint8_t *)r.data, r.len}, ANY_REPEATED, out, 2), 3);
	CHECK(span_is(out[0], "a") && span_is(out[1], "bb"));
	tm_buf_free(&r);
}

/* A TracePacket's fields of most kinds, some given twice. */
static void put_many_fields(tm_buf *p)
{
	put_v(p, F_TracePacket_machine_id, 3);
	put_v(p, F_TracePacket_timestamp, 10);
	put_v(p, F_TracePacket_machine_id, 7);
	put_v(p, F_TracePacket_timestamp_clock_id, TM_CLOCK_BOOTTIME);
	put_v(p, F_TracePacket_sequence_flags, 3);
	put_v(p, F_TracePacket_previous_packet_dropped, 1);
	put_v(p, F_TracePacket_first_packet_on_sequence, 1);
	put_v(p, F_TracePacket_trusted_uid, 0xffffffffu); /* trusted_uid -1 */
	put_v(p, F_TracePacket_trusted_pid, 4242);
	put_bytes(p, F_TracePacket_clock_snapshot, "A", 1);
	put_bytes(p, F_TracePacket_clock_snapshot, "BB", 2);
	put_bytes(p, F_TracePacket_synchronization_marker, "", 0);
	put_bytes(p, F_TracePacket_timestamp, "x", 1); /* timestamp with the wrong wire type: ignored */
	put_bytes(p, UNKNOWN_FIELD, "?", 1);
}

static void test_extract_last_wins(void)
{
	tm_buf p = {0};
	put_many_fields(&p);
	tm_packet pkt;
	tm_error err;
	CHECK_INT(tm_packet_extract((tm_span){(const uint8_t *)p.data, p.len}, &pkt, &err), 0);
	CHECK_INT(pkt.machine_id, 7);
	CHECK_INT(pkt.timestamp, 10);
	CHECK_INT(pkt.timestamp_clock_id, 6);
	CHECK_INT(pkt.sequence_flags, TM_SEQ_INCREMENTAL_STATE_CLEARED | TM_SEQ_NEEDS_INCREMENTAL_STATE);
	CHECK_INT(pkt.previous_packet_dropped, 1);
	CHECK(pkt.first_packet_on_sequence);
	CHECK(!pkt.incremental_state_cleared);
	CHECK(pkt.has_trusted_uid && pkt.trusted_uid == -1);
	CHECK_INT(pkt.trusted_pid, 4242);
	CHECK(span_is(pkt.clock_snapshot, "BB"));
	CHECK(pkt.synchronization_marker);
	CHECK(TM_SPAN_HAS(pkt.span[TM_PKT_SYNCHRONIZATION_MARKER]));
	CHECK(!TM_SPAN_HAS(pkt.track_event));
	CHECK_INT(pkt.span_mask, (1u << TM_PKT_CLOCK_SNAPSHOT) | (1u << TM_PKT_SYNCHRONIZATION_MARKER));
	put_raw(&p, "\x80", 1); /* on purpose: a tag's varint with no last byte */
	CHECK_INT(tm_packet_extract((tm_span){(const uint8_t *)p.data, p.len}, &pkt, &err), -1);
	CHECK_STR(err.msg, "Failed to parse proto packet fully; the trace is probably corrupt. (ERR:tp-corrupt)");
	CHECK_INT(pkt.machine_id, 7); /* fields before the damage are kept */
	tm_buf_free(&p);
}

/* ---- packets carried in a batch (tm_packet_put / tm_packet_get) -------------- */

static int pkt_same(const tm_packet *a, const tm_packet *b)
{
	if (a->raw.n != b->raw.n || memcmp(a->raw.p, b->raw.p, a->raw.n) != 0 || a->offset != b->offset ||
	    a->from_compressed != b->from_compressed || a->has_timestamp != b->has_timestamp ||
	    a->has_timestamp_clock_id != b->has_timestamp_clock_id ||
	    a->has_trusted_packet_sequence_id != b->has_trusted_packet_sequence_id ||
	    a->has_machine_id != b->has_machine_id || a->has_trusted_uid != b->has_trusted_uid ||
	    a->has_trusted_pid != b->has_trusted_pid || a->incremental_state_cleared != b->incremental_state_cleared ||
	    a->first_packet_on_sequence != b->first_packet_on_sequence ||
	    a->synchronization_marker != b->synchronization_marker || a->timestamp != b->timestamp ||
	    a->timestamp_clock_id != b->timestamp_clock_id ||
	    a->trusted_packet_sequence_id != b->trusted_packet_sequence_id || a->machine_id != b->machine_id ||
	    a->sequence_flags != b->sequence_flags || a->previous_packet_dropped != b->previous_packet_dropped ||
	    a->trusted_uid != b->trusted_uid || a->trusted_pid != b->trusted_pid || a->span_mask != b->span_mask)
		return 0;
	for (int k = 0; k < TM_PKT_NSPANS; k++) {
		const tm_span *x = &a->span[k], *y = &b->span[k];
		if (x->n != y->n || !x->p != !y->p)
			return 0;
		if (x->p && (x->p - a->raw.p != y->p - b->raw.p || memcmp(x->p, y->p, x->n) != 0))
			return 0;
	}
	return 1;
}

/* Every packet of a trace (fields of every kind, packets inflated from a
 * bundle among them) put in a batch comes back the same, spans in place. */
static void test_packet_through_batch(void)
{
	tm_buf trace = {0}, inner = {0}, z = {0}, p = {0};
	put_many_fields(&p);
	put_v(&p, F_TracePacket_incremental_state_cleared, 1);
	put_v(&p, F_TracePacket_trusted_packet_sequence_id, 77);
	put_bytes(&p, F_TracePacket_track_event, "te", 2);
	put_bytes(&p, F_TracePacket_interned_data, "", 0);
	put_msg(&trace, F_Trace_packet, &p);
	put_ts_packet(&trace, 0);
	put_ts_packet(&trace, UINT64_MAX);
	tm_buf empty = {0};
	for (uint64_t t = 1; t <= 5; t++)
		put_ts_packet(&inner, t * 10);
	deflate_to(&z, inner.data, inner.len, 1);
	put_compressed_packet(&trace, F_TracePacket_compressed_packets, &z);
	put_msg(&trace, F_Trace_packet, &empty); /* an empty packet: dropped */
	rd x;
	rd_mem(&x, trace.data, trace.len);
	tm_packet want[16];
	tm_buf batch = {0};
	size_t n = 0;
	const tm_packet *pkt;
	while (n < 16 && tm_proto_reader_next(x.r, &pkt, &x.err) == 1) {
		want[n] = *pkt;
		/* the reader's buffer is reused: keep each packet's bytes */
		uint8_t *copy = malloc(pkt->raw.n + 1);
		memcpy(copy, pkt->raw.p, pkt->raw.n);
		for (int k = 0; k < TM_PKT_NSPANS; k++)
			if (want[n].span[k].p)
				want[n].span[k].p = copy + (pkt->span[k].p - pkt->raw.p);
		want[n].raw.p = copy;
		tm_packet_put(&batch, &want[n]);
		n++;
	}
	rd_close(&x);
	tm_packet got;
	memset(&got, 0, sizeof got);
	const char *at = batch.data;
	int same = 1;
	for (size_t i = 0; i < n; i++) {
		tm_packet_get(&at, &got);
		same &= pkt_same(&want[i], &got);
		free((void *)want[i].raw.p);
	}
	int whole = at == batch.data + batch.len;
	tm_buf_free(&batch);
	tm_buf_free(&trace);
	tm_buf_free(&inner);
	tm_buf_free(&z);
	tm_buf_free(&p);
	CHECK_INT(n, 8); /* the first, the two timestamps and the bundle's five */
	CHECK(same);
	CHECK(whole);
}

/* ---- decoders ------------------------------------------------------------------- */

static void test_track_event_decode(void)
{
	Perfetto__Protos__TrackEvent te = PERFETTO__PROTOS__TRACK_EVENT__INIT;
	te.has_type = 1;
	te.type = PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_COUNTER;
	te.has_track_uuid = 1;
	te.track_uuid = UINT64_C(0xfedcba9876543210);
	te.name_field_case = PERFETTO__PROTOS__TRACK_EVENT__NAME_FIELD_NAME_IID;
	te.name_iid = 17;
	uint64_t cats[] = {1, 2, 300};
	te.n_category_iids = 3;
	te.category_iids = cats;
	char *catn[] = {"cat_a", "cat_b"};
	te.n_categories = 2;
	te.categories = catn;
	te.counter_value_field_case = PERFETTO__PROTOS__TRACK_EVENT__COUNTER_VALUE_FIELD_DOUBLE_COUNTER_VALUE;
	te.double_counter_value = 2.5;
	uint64_t flows[] = {UINT64_C(0xffffffffffffffff), 5};
	te.n_flow_ids = 2;
	te.flow_ids = flows;
	uint64_t term[] = {9};
	te.n_terminating_flow_ids = 1;
	te.terminating_flow_ids = term;
	int64_t extra[] = {-4, 8};
	te.n_extra_counter_values = 2;
	te.extra_counter_values = extra;
	double dextra[] = {0.25};
	te.n_extra_double_counter_values = 1;
	te.extra_double_counter_values = dextra;
	te.timestamp_case = PERFETTO__PROTOS__TRACK_EVENT__TIMESTAMP_TIMESTAMP_DELTA_US;
	te.timestamp_delta_us = -16;

	Perfetto__Protos__DebugAnnotation da[4] = {
		PERFETTO__PROTOS__DEBUG_ANNOTATION__INIT, PERFETTO__PROTOS__DEBUG_ANNOTATION__INIT,
		PERFETTO__PROTOS__DEBUG_ANNOTATION__INIT, PERFETTO__PROTOS__DEBUG_ANNOTATION__INIT};
	da[0].name_field_case = PERFETTO__PROTOS__DEBUG_ANNOTATION__NAME_FIELD_NAME;
	da[0].name = "n_int";
	da[0].value_case = PERFETTO__PROTOS__DEBUG_ANNOTATION__VALUE_INT_VALUE;
	da[0].int_value = -7;
	da[1].name_field_case = PERFETTO__PROTOS__DEBUG_ANNOTATION__NAME_FIELD_NAME_IID;
	da[1].name_iid = 4;
	da[1].value_case = PERFETTO__PROTOS__DEBUG_ANNOTATION__VALUE_STRING_VALUE;
	da[1].string_value = "str";
	da[2].name_field_case = PERFETTO__PROTOS__DEBUG_ANNOTATION__NAME_FIELD_NAME;
	da[2].name = "b";
	da[2].value_case = PERFETTO__PROTOS__DEBUG_ANNOTATION__VALUE_BOOL_VALUE;
	da[2].bool_value = 1;
	da[3].name_field_case = PERFETTO__PROTOS__DEBUG_ANNOTATION__NAME_FIELD_NAME;
	da[3].name = "d";
	da[3].value_case = PERFETTO__PROTOS__DEBUG_ANNOTATION__VALUE_DOUBLE_VALUE;
	da[3].double_value = -1.5;
	Perfetto__Protos__DebugAnnotation *dap[] = {&da[0], &da[1], &da[2], &da[3]};
	te.n_debug_annotations = 4;
	te.debug_annotations = dap;

	size_t n = perfetto__protos__track_event__get_packed_size(&te);
	uint8_t *buf = malloc(n);
	perfetto__protos__track_event__pack(&te, buf);

	tm_track_event e = {0};
	for (int round = 0; round < 2; round++) { /* decoding twice reuses the arrays */
		CHECK_INT(tm_track_event_decode((tm_span){buf, n}, &e), 1);
		CHECK_INT(e.type, TM_TE_COUNTER);
		CHECK(e.track_uuid == UINT64_C(0xfedcba9876543210));
		CHECK(e.has_name_iid && e.name_iid == 17 && !TM_SPAN_HAS(e.name));
		CHECK_INT(e.category_iids.n, 3);
		CHECK_INT(e.category_iids.v[2], 300);
		CHECK_INT(e.categories.n, 2);
		CHECK(span_is(e.categories.v[1], "cat_b"));
		CHECK(e.has_double_counter_value && e.double_counter_value == 2.5);
		CHECK(!e.has_counter_value);
		CHECK_INT(e.flow_ids.n, 2);
		CHECK(e.flow_ids.v[0] == UINT64_MAX && e.flow_ids.v[1] == 5);
		CHECK_INT(e.terminating_flow_ids.n, 1);
		CHECK_INT(e.terminating_flow_ids.v[0], 9);
		CHECK_INT(e.extra_counter_values.n, 2);
		CHECK_INT(e.extra_counter_values.v[0], -4);
		CHECK_INT(e.extra_double_counter_values.n, 1);
		CHECK(e.extra_double_counter_values.v[0] == 0.25);
		CHECK(e.has_timestamp_delta_us && e.timestamp_delta_us == -16);
		CHECK(!e.has_timestamp_absolute_us);
		CHECK_INT(e.debug_annotations.n, 4);
		const tm_debug_annotation *a = e.debug_annotations.v;
		CHECK(span_is(a[0].name, "n_int") && a[0].kind == TM_DA_INT && a[0].v.i == -7);
		CHECK(a[1].has_name_iid && a[1].name_iid == 4 && a[1].kind == TM_DA_STRING);
		CHECK(span_is(a[1].str, "str"));
		CHECK(a[2].kind == TM_DA_BOOL && a[2].v.u == 1);
		CHECK(a[3].kind == TM_DA_DOUBLE && a[3].v.d == -1.5);
	}
	/* Packed and unpacked repeated varints are both read. */
	tm_buf m = {0};
	uint64_t iids[] = {7, 8};
	put_packed(&m, F_TrackEvent_category_iids, iids, 2);
	put_v(&m, F_TrackEvent_category_iids, 9);
	put_v(&m, F_TrackEvent_timestamp_absolute_us, 1234);
	CHECK_INT(tm_track_event_decode((tm_span){(const uint8_t *)m.data, m.len}, &e), 1);
	CHECK_INT(e.category_iids.n, 3);
	CHECK_INT(e.category_iids.v[0], 7);
	CHECK_INT(e.category_iids.v[2], 9);
	CHECK_INT(e.debug_annotations.n, 0);
	CHECK(!e.has_type && !e.has_track_uuid);
	CHECK(e.has_timestamp_absolute_us && e.timestamp_absolute_us == 1234);
	tm_buf_free(&m);
	tm_track_event_free(&e);
	free(buf);
}

static void test_descriptors_and_interning(void)
{
	Perfetto__Protos__TrackDescriptor td = PERFETTO__PROTOS__TRACK_DESCRIPTOR__INIT;
	Perfetto__Protos__ProcessDescriptor pd = PERFETTO__PROTOS__PROCESS_DESCRIPTOR__INIT;
	Perfetto__Protos__ThreadDescriptor thd = PERFETTO__PROTOS__THREAD_DESCRIPTOR__INIT;
	Perfetto__Protos__CounterDescriptor cd = PERFETTO__PROTOS__COUNTER_DESCRIPTOR__INIT;
	td.has_uuid = 1;
	td.uuid = 55;
	td.has_parent_uuid = 1;
	td.parent_uuid = 54;
	td.static_or_dynamic_name_case = PERFETTO__PROTOS__TRACK_DESCRIPTOR__STATIC_OR_DYNAMIC_NAME_STATIC_NAME;
	td.static_name = "trk";
	pd.has_pid = 1;
	pd.pid = 1234;
	char *cmd[] = {"/bin/app", "--flag"};
	pd.n_cmdline = 2;
	pd.cmdline = cmd;
	pd.process_name = "app";
	thd.has_pid = 1;
	thd.pid = 1234;
	thd.has_tid = 1;
	thd.tid = 1240;
	thd.thread_name = "worker";
	thd.has_reference_timestamp_us = 1;
	thd.reference_timestamp_us = 1000000;
	cd.unit_name = "bytes";
	cd.has_unit_multiplier = 1;
	cd.unit_multiplier = 1024;
	cd.has_is_incremental = 1;
	cd.is_incremental = 1;
	td.process = &pd;
	td.thread = &thd;
	td.counter = &cd;
	size_t n = perfetto__protos__track_descriptor__get_packed_size(&td);
	uint8_t *buf = malloc(n);
	perfetto__protos__track_descriptor__pack(&td, buf);
	tm_track_descriptor d;
	CHECK_INT(tm_track_descriptor_decode((tm_span){buf, n}, &d), 1);
	CHECK_INT(d.uuid, 55);
	CHECK_INT(d.parent_uuid, 54);
	CHECK(span_is(d.static_name, "trk") && !TM_SPAN_HAS(d.name));
	CHECK(d.has_process && d.process.pid == 1234);
	CHECK_INT(d.process.n_cmdline, 2);
	CHECK(span_is(d.process.cmdline0, "/bin/app"));
	tm_span args[2];
	CHECK_INT(tm_pb_repeated_spans(d.process.raw, F_ProcessDescriptor_cmdline, args, 2), 2);
	CHECK(span_is(args[1], "--flag"));
	CHECK(span_is(d.process.process_name, "app"));
	CHECK(d.has_thread && d.thread.tid == 1240 && d.thread.pid == 1234);
	CHECK(span_is(d.thread.thread_name, "worker"));
	CHECK(d.thread.has_reference_timestamp_us && d.thread.reference_timestamp_us == 1000000);
	CHECK(d.has_counter && d.counter.is_incremental && d.counter.unit_multiplier == 1024);
	CHECK(span_is(d.counter.unit_name, "bytes"));
	free(buf);

	Perfetto__Protos__InternedData id = PERFETTO__PROTOS__INTERNED_DATA__INIT;
	Perfetto__Protos__EventName en[2] = {PERFETTO__PROTOS__EVENT_NAME__INIT,
					     PERFETTO__PROTOS__EVENT_NAME__INIT};
	Perfetto__Protos__EventCategory ec = PERFETTO__PROTOS__EVENT_CATEGORY__INIT;
	Perfetto__Protos__DebugAnnotationName dn = PERFETTO__PROTOS__DEBUG_ANNOTATION_NAME__INIT;
	en[0].has_iid = en[1].has_iid = 1;
	en[0].iid = 1;
	en[0].name = "first";
	en[1].iid = 2;
	en[1].name = "second";
	ec.has_iid = 1;
	ec.iid = 9;
	ec.name = "cat";
	dn.has_iid = 1;
	dn.iid = 3;
	dn.name = "arg";
	Perfetto__Protos__EventName *enp[] = {&en[0], &en[1]};
	Perfetto__Protos__EventCategory *ecp[] = {&ec};
	Perfetto__Protos__DebugAnnotationName *dnp[] = {&dn};
	id.n_event_names = 2;
	id.event_names = enp;
	id.n_event_categories = 1;
	id.event_categories = ecp;
	id.n_debug_annotation_names = 1;
	id.debug_annotation_names = dnp;
	n = perfetto__protos__interned_data__get_packed_size(&id);
	buf = malloc(n);
	perfetto__protos__interned_data__pack(&id, buf);
	tm_interned_data in;
	memset(&in, 0, sizeof in);
	CHECK_INT(tm_interned_data_decode((tm_span){buf, n}, &in), 1);
	CHECK_INT(in.event_names.n, 2);
	CHECK_INT(in.event_names.v[1].iid, 2);
	CHECK(span_is(in.event_names.v[1].name, "second"));
	CHECK_INT(in.event_categories.n, 1);
	CHECK(in.event_categories.v[0].iid == 9 && span_is(in.event_categories.v[0].name, "cat"));
	CHECK_INT(in.debug_annotation_names.n, 1);
	CHECK(span_is(in.debug_annotation_names.v[0].name, "arg"));
	tm_interned_data_free(&in);
	free(buf);
}

static void test_config_sysinfo_attributes(void)
{
	/* TraceConfig.builtin_data_sources(20).primary_trace_clock(5) and
	 * trace_attributes(48); the last builtin_data_sources counts. */
	tm_buf attr = {0}, a1 = {0}, a2 = {0}, bd = {0}, cfg = {0};
	put_bytes(&a1, F_TraceAttributes_Attribute_key, "run", 3);
	put_v(&a1, F_TraceAttributes_Attribute_long_value, 42);
	put_msg(&attr, F_TraceAttributes_attribute, &a1);
	put_bytes(&a2, F_TraceAttributes_Attribute_key, "who", 3);
	put_bytes(&a2, F_TraceAttributes_Attribute_string_value, "me", 2);
	put_msg(&attr, F_TraceAttributes_attribute, &a2);
	put_v(&bd, F_TraceConfig_BuiltinDataSource_primary_trace_clock, TM_CLOCK_BOOTTIME);
	put_msg(&cfg, F_TraceConfig_builtin_data_sources, &bd);
	put_v(&bd, F_TraceConfig_BuiltinDataSource_primary_trace_clock, TM_CLOCK_MONOTONIC);
	put_msg(&cfg, F_TraceConfig_builtin_data_sources, &bd);
	put_v(&cfg, F_TraceConfig_duration_ms, 10000);
	put_bytes(&cfg, F_TraceConfig_trace_attributes, attr.data, attr.len);
	tm_trace_config c;
	CHECK_INT(tm_trace_config_decode((tm_span){(const uint8_t *)cfg.data, cfg.len}, &c), 1);
	CHECK(c.has_primary_trace_clock);
	CHECK_INT(c.primary_trace_clock, 3);
	CHECK_INT(c.duration_ms, 10000);
	tm_trace_attributes at = {0};
	CHECK_INT(tm_trace_attributes_decode(c.trace_attributes, &at), 1);
	CHECK_INT(at.n, 2);
	CHECK(span_is(at.v[0].key, "run") && at.v[0].kind == 1 && at.v[0].long_value == 42);
	CHECK(span_is(at.v[1].key, "who") && at.v[1].kind == 2 && span_is(at.v[1].string_value, "me"));
	tm_trace_attributes_free(&at);
	tm_buf_free(&cfg);
	tm_buf_free(&attr);

	Perfetto__Protos__SystemInfo si = PERFETTO__PROTOS__SYSTEM_INFO__INIT;
	Perfetto__Protos__Utsname un = PERFETTO__PROTOS__UTSNAME__INIT;
	un.sysname = "Linux";
	un.release = "6.1.0";
	un.machine = "aarch64";
	si.utsname = &un;
	si.machine_name = "vm";
	si.has_num_cpus = 1;
	si.num_cpus = 8;
	size_t n = perfetto__protos__system_info__get_packed_size(&si);
	uint8_t *buf = malloc(n);
	perfetto__protos__system_info__pack(&si, buf);
	tm_system_info d;
	CHECK_INT(tm_system_info_decode((tm_span){buf, n}, &d), 1);
	CHECK(d.has_utsname && span_is(d.sysname, "Linux") && span_is(d.release, "6.1.0"));
	CHECK(span_is(d.machine, "aarch64") && !TM_SPAN_HAS(d.version));
	CHECK(span_is(d.machine_name, "vm"));
	CHECK(d.has_num_cpus && d.num_cpus == 8);
	free(buf);
}

/* Nested messages end at damage, keeping what came before (protozero). */
static void test_lenient_nested(void)
{
	tm_buf s = {0}, c = {0};
	put_v(&c, F_ClockSnapshot_Clock_clock_id, TM_CLOCK_BOOTTIME);
	put_v(&c, F_ClockSnapshot_Clock_timestamp, 77);
	put_msg(&s, F_ClockSnapshot_clocks, &c);
	put_v(&c, F_ClockSnapshot_Clock_clock_id, TM_CLOCK_MONOTONIC);
	put_v(&c, F_ClockSnapshot_Clock_unit_multiplier_ns, 0); /* unit 0 means 1 */
	put_msg(&s, F_ClockSnapshot_clocks, &c);
	tag(&s, F_ClockSnapshot_primary_trace_clock, TM_PB_VARINT); /* on purpose: without a value */
	tm_clock_snapshot snap = {0};
	CHECK_INT(tm_clock_snapshot_decode((tm_span){(const uint8_t *)s.data, s.len}, &snap), 0);
	CHECK_INT(snap.n, 2);
	CHECK_INT(snap.clocks[0].timestamp, 77);
	CHECK_INT(snap.clocks[1].clock_id, 3);
	CHECK_INT(snap.clocks[1].unit_multiplier_ns, 1);
	CHECK_INT(snap.primary_trace_clock, 0);
	tm_clock_snapshot_free(&snap);
	tm_buf_free(&s);
}

/* ---- ftrace (formats.md §5.8) ------------------------------------------------------ */

static void test_compact_sched(void)
{
	tm_buf cs = {0}, bundle = {0};
	static const uint64_t sw_ts[] = {1000, 5, 7};
	static const uint64_t sw_state[] = {0, 1, 2};
	static const uint64_t sw_pid[] = {10, 11, 0};
	static const uint64_t sw_prio[] = {120, 100, (uint64_t)-1}; /* int32 -1 as a varint */
	static const uint64_t sw_comm[] = {1, 2, 0};
	static const uint64_t wk_ts[] = {500, 50, 50, 1};
	static const uint64_t wk_pid[] = {20, 21, 22, 23};
	static const uint64_t wk_cpu[] = {0, 1, 2, 3};
	static const uint64_t wk_prio[] = {120, 120, 120, 120};
	static const uint64_t wk_comm[] = {0, 0, 1, 2};
	static const uint64_t wk_flags[] = {4, 5}; /* shorter: optional column */
	put_bytes(&cs, F_FtraceEventBundle_CompactSched_intern_table, "swapper/0", 9);
	put_bytes(&cs, F_FtraceEventBundle_CompactSched_intern_table, "app", 3);
	put_bytes(&cs, F_FtraceEventBundle_CompactSched_intern_table, "kworker", 7);
	put_packed(&cs, F_FtraceEventBundle_CompactSched_switch_timestamp, sw_ts, 3);
	put_packed(&cs, F_FtraceEventBundle_CompactSched_switch_prev_state, sw_state, 3);
	put_packed(&cs, F_FtraceEventBundle_CompactSched_switch_next_pid, sw_pid, 3);
	put_packed(&cs, F_FtraceEventBundle_CompactSched_switch_next_prio, sw_prio, 3);
	put_packed(&cs, F_FtraceEventBundle_CompactSched_switch_next_comm_index, sw_comm, 3);
	put_packed(&cs, F_FtraceEventBundle_CompactSched_waking_timestamp, wk_ts, 4);
	put_packed(&cs, F_FtraceEventBundle_CompactSched_waking_pid, wk_pid, 4);
	put_packed(&cs, F_FtraceEventBundle_CompactSched_waking_target_cpu, wk_cpu, 4);
	put_packed(&cs, F_FtraceEventBundle_CompactSched_waking_prio, wk_prio, 4);
	put_packed(&cs, F_FtraceEventBundle_CompactSched_waking_comm_index, wk_comm, 4);
	put_packed(&cs, F_FtraceEventBundle_CompactSched_waking_common_flags, wk_flags, 2);
	put_v(&bundle, F_FtraceEventBundle_cpu, 2);
	put_bytes(&bundle, F_FtraceEventBundle_compact_sched, cs.data, cs.len);

	tm_ftrace_bundle b = {0};
	tm_error err;
	CHECK_INT(tm_ftrace_bundle_decode((tm_span){(const uint8_t *)bundle.data, bundle.len}, &b, &err), 0);
	CHECK(b.has_cpu && b.cpu == 2);
	CHECK(b.has_compact_sched);
	CHECK_INT(b.intern_table.n, 3);
	CHECK_INT(b.n_events, 0);

	tm_compact_iter it;
	tm_compact_switch sw;
	static const uint64_t sw_abs[] = {1000, 1005, 1012}; /* sums of the deltas */
	static const char *const sw_names[] = {"app", "kworker", "swapper/0"};
	tm_compact_switch_begin(&it, &b);
	for (int i = 0; i < 3; i++) {
		CHECK_INT(tm_compact_switch_next(&it, &sw), 1);
		CHECK_INT(sw.timestamp, sw_abs[i]);
		CHECK_INT(sw.prev_state, (int64_t)sw_state[i]);
		CHECK_INT(sw.next_pid, (int64_t)sw_pid[i]);
		CHECK(span_is(sw.next_comm, sw_names[i]));
	}
	CHECK_INT(sw.next_prio, -1);
	CHECK_INT(tm_compact_switch_next(&it, &sw), 0);

	tm_compact_waking wk;
	static const uint64_t wk_abs[] = {500, 550, 600, 601}; /* independent of the switches */
	tm_compact_waking_begin(&it, &b);
	for (int i = 0; i < 4; i++) {
		CHECK_INT(tm_compact_waking_next(&it, &wk), 1);
		CHECK_INT(wk.timestamp, wk_abs[i]);
		CHECK_INT(wk.pid, (int64_t)wk_pid[i]);
		CHECK_INT(wk.target_cpu, i);
		CHECK_INT(wk.has_common_flags, i < 2);
		if (i < 2)
			CHECK_INT(wk.common_flags, (int64_t)wk_flags[i]);
	}
	CHECK(span_is(wk.comm, "kworker"));
	CHECK_INT(tm_compact_waking_next(&it, &wk), 0);

	/* Columns of different lengths: the rows up to the shortest, then -1. */
	tm_buf cs2 = {0}, b2 = {0};
	put_bytes(&cs2, F_FtraceEventBundle_CompactSched_intern_table, "x", 1);
	put_packed(&cs2, F_FtraceEventBundle_CompactSched_switch_timestamp, sw_ts, 3);
	put_packed(&cs2, F_FtraceEventBundle_CompactSched_switch_prev_state, sw_state, 2);
	put_packed(&cs2, F_FtraceEventBundle_CompactSched_switch_next_pid, sw_pid, 3);
	put_packed(&cs2, F_FtraceEventBundle_CompactSched_switch_next_prio, sw_prio, 3);
	static const uint64_t zeros[] = {0, 0, 5};
	/* the third index is out of range */
	put_packed(&cs2, F_FtraceEventBundle_CompactSched_switch_next_comm_index, zeros, 3);
	put_v(&b2, F_FtraceEventBundle_cpu, 0);
	put_bytes(&b2, F_FtraceEventBundle_compact_sched, cs2.data, cs2.len);
	CHECK_INT(tm_ftrace_bundle_decode((tm_span){(const uint8_t *)b2.data, b2.len}, &b, &err), 0);
	tm_compact_switch_begin(&it, &b);
	CHECK_INT(tm_compact_switch_next(&it, &sw), 1);
	CHECK_INT(tm_compact_switch_next(&it, &sw), 1);
	CHECK_INT(sw.timestamp, 1005);
	CHECK_INT(tm_compact_switch_next(&it, &sw), -1);
	CHECK_INT(tm_compact_switch_next(&it, &sw), -1);
	/* No waking columns at all: a clean, empty walk. */
	tm_compact_waking_begin(&it, &b);
	CHECK_INT(tm_compact_waking_next(&it, &wk), 0);
	tm_buf_free(&b2);
	tm_buf_free(&cs2);

	/* A comm index out of range stops the walk with -1. */
	put_packed(&cs2, F_FtraceEventBundle_CompactSched_switch_timestamp, sw_ts, 3);
	put_packed(&cs2, F_FtraceEventBundle_CompactSched_switch_prev_state, sw_state, 3);
	put_packed(&cs2, F_FtraceEventBundle_CompactSched_switch_next_pid, sw_pid, 3);
	put_packed(&cs2, F_FtraceEventBundle_CompactSched_switch_next_prio, sw_prio, 3);
	put_packed(&cs2, F_FtraceEventBundle_CompactSched_switch_next_comm_index, zeros, 3);
	put_bytes(&cs2, F_FtraceEventBundle_CompactSched_intern_table, "x", 1);
	put_bytes(&b2, F_FtraceEventBundle_compact_sched, cs2.data, cs2.len);
	CHECK_INT(tm_ftrace_bundle_decode((tm_span){(const uint8_t *)b2.data, b2.len}, &b, &err), 0);
	CHECK(!b.has_cpu);
	tm_compact_switch_begin(&it, &b);
	CHECK_INT(tm_compact_switch_next(&it, &sw), 1);
	CHECK_INT(tm_compact_switch_next(&it, &sw), 1);
	CHECK_INT(tm_compact_switch_next(&it, &sw), -1);
	tm_buf_free(&b2);
	tm_buf_free(&cs2);

	tm_ftrace_bundle_free(&b);
	tm_buf_free(&bundle);
	tm_buf_free(&cs);
}

static void test_ftrace_events(void)
{
	Perfetto__Protos__FtraceEventBundle fb = PERFETTO__PROTOS__FTRACE_EVENT_BUNDLE__INIT;
	fb.has_cpu = 1;
	fb.cpu = 3;
	fb.has_ftrace_clock = 1;
	fb.ftrace_clock = PERFETTO__PROTOS__FTRACE_CLOCK__FTRACE_CLOCK_MONO_RAW;
	fb.has_ftrace_timestamp = 1;
	fb.ftrace_timestamp = 111;
	fb.has_boot_timestamp = 1;
	fb.boot_timestamp = 222;
	fb.has_previous_bundle_end_timestamp = 1;
	fb.previous_bundle_end_timestamp = 333;

	Perfetto__Protos__FtraceEvent ev[5];
	Perfetto__Protos__FtraceEvent *evp[5];
	for (int i = 0; i < 5; i++) {
		Perfetto__Protos__FtraceEvent init = PERFETTO__PROTOS__FTRACE_EVENT__INIT;
		ev[i] = init;
		ev[i].has_timestamp = 1;
		ev[i].timestamp = 1000 + (uint64_t)i;
		ev[i].has_pid = 1;
		ev[i].pid = 100 + (uint32_t)i;
		evp[i] = &ev[i];
	}
	Perfetto__Protos__PrintFtraceEvent pr = PERFETTO__PROTOS__PRINT_FTRACE_EVENT__INIT;
	pr.buf = "B|100|slice\n";
	ev[0].event_case = PERFETTO__PROTOS__FTRACE_EVENT__EVENT_PRINT;
	ev[0].print = &pr;
	Perfetto__Protos__SchedSwitchFtraceEvent ss = PERFETTO__PROTOS__SCHED_SWITCH_FTRACE_EVENT__INIT;
	ss.prev_comm = "a";
	ss.has_prev_pid = 1;
	ss.prev_pid = 5;
	ss.has_prev_state = 1;
	ss.prev_state = 2;
	ss.next_comm = "b";
	ss.has_next_pid = 1;
	ss.next_pid = 6;
	ss.has_next_prio = 1;
	ss.next_prio = -3;
	ev[1].event_case = PERFETTO__PROTOS__FTRACE_EVENT__EVENT_SCHED_SWITCH;
	ev[1].sched_switch = &ss;
	Perfetto__Protos__SchedWakingFtraceEvent sw = PERFETTO__PROTOS__SCHED_WAKING_FTRACE_EVENT__INIT;
	sw.comm = "w";
	sw.has_pid = 1;
	sw.pid = 9;
	sw.has_target_cpu = 1;
	sw.target_cpu = 1;
	ev[2].event_case = PERFETTO__PROTOS__FTRACE_EVENT__EVENT_SCHED_WAKING;
	ev[2].sched_waking = &sw;
	Perfetto__Protos__CpuFrequencyFtraceEvent cf = PERFETTO__PROTOS__CPU_FREQUENCY_FTRACE_EVENT__INIT;
	cf.has_state = 1;
	cf.state = 1800000;
	cf.has_cpu_id = 1;
	cf.cpu_id = 3;
	ev[3].event_case = PERFETTO__PROTOS__FTRACE_EVENT__EVENT_CPU_FREQUENCY;
	ev[3].cpu_frequency = &cf;
	Perfetto__Protos__TaskRenameFtraceEvent tr = PERFETTO__PROTOS__TASK_RENAME_FTRACE_EVENT__INIT;
	tr.has_pid = 1;
	tr.pid = 77;
	tr.oldcomm = "old";
	tr.newcomm = "new";
	ev[4].event_case = PERFETTO__PROTOS__FTRACE_EVENT__EVENT_TASK_RENAME;
	ev[4].task_rename = &tr;
	fb.n_event = 5;
	fb.event = evp;

	size_t n = perfetto__protos__ftrace_event_bundle__get_packed_size(&fb);
	uint8_t *buf = malloc(n);
	perfetto__protos__ftrace_event_bundle__pack(&fb, buf);
	tm_ftrace_bundle b = {0};
	tm_error err;
	CHECK_INT(tm_ftrace_bundle_decode((tm_span){buf, n}, &b, &err), 0);
	CHECK(b.has_cpu && b.cpu == 3);
	CHECK(b.has_ftrace_clock && b.ftrace_clock == TM_FTRACE_CLOCK_MONO_RAW);
	CHECK_INT(b.ftrace_timestamp, 111);
	CHECK_INT(b.boot_timestamp, 222);
	CHECK(b.has_previous_bundle_end_timestamp && b.previous_bundle_end_timestamp == 333);
	CHECK(!b.has_last_read_event_timestamp && !b.has_compact_sched);
	CHECK_INT(b.n_events, 5);

	static const uint32_t kinds[] = {TM_FT_PRINT, TM_FT_SCHED_SWITCH, TM_FT_SCHED_WAKING,
					 TM_FT_CPU_FREQUENCY, TM_FT_TASK_RENAME};
	tm_ftrace_iter it;
	tm_ftrace_event e;
	tm_ftrace_events_begin(&it, &b);
	for (int i = 0; i < 5; i++) {
		CHECK_INT(tm_ftrace_events_next(&it, &e), 1);
		CHECK(e.has_timestamp && e.timestamp == 1000 + (uint64_t)i);
		CHECK(e.has_pid && e.pid == 100 + (uint32_t)i);
		CHECK_INT(e.kind, kinds[i]);
		switch (i) {
		case 0: CHECK(span_is(e.u.print.buf, "B|100|slice\n")); break;
		case 1:
			CHECK(span_is(e.u.sched_switch.prev_comm, "a"));
			CHECK(span_is(e.u.sched_switch.next_comm, "b"));
			CHECK_INT(e.u.sched_switch.prev_pid, 5);
			CHECK_INT(e.u.sched_switch.prev_state, 2);
			CHECK_INT(e.u.sched_switch.next_pid, 6);
			CHECK_INT(e.u.sched_switch.next_prio, -3);
			break;
		case 2:
			CHECK(span_is(e.u.sched_wake.comm, "w"));
			CHECK_INT(e.u.sched_wake.pid, 9);
			CHECK_INT(e.u.sched_wake.target_cpu, 1);
			break;
		case 3:
			CHECK_INT(e.u.cpu.state, 1800000);
			CHECK_INT(e.u.cpu.cpu_id, 3);
			break;
		case 4:
			CHECK_INT(e.u.task_rename.pid, 77);
			CHECK(span_is(e.u.task_rename.oldcomm, "old"));
			CHECK(span_is(e.u.task_rename.newcomm, "new"));
			break;
		}
	}
	CHECK_INT(tm_ftrace_events_next(&it, &e), 0);
	free(buf);

	/* An event without a timestamp, one without payload, and the first
	 * timestamp winning over a later one. */
	tm_buf m = {0};
	put_v(&m, F_FtraceEvent_pid, 5);
	put_bytes(&m, UNKNOWN_FIELD, "zz", 2); /* an unknown kind: reported, not decoded */
	CHECK_INT(tm_ftrace_event_decode((tm_span){(const uint8_t *)m.data, m.len}, &e), 1);
	CHECK(!e.has_timestamp);
	CHECK_INT(e.kind, UNKNOWN_FIELD);
	CHECK(span_is(e.body, "zz"));
	tm_buf_free(&m);
	put_v(&m, F_FtraceEvent_timestamp, 10);
	put_v(&m, F_FtraceEvent_timestamp, 20);
	CHECK_INT(tm_ftrace_event_decode((tm_span){(const uint8_t *)m.data, m.len}, &e), 1);
	CHECK_INT(e.timestamp, 10);
	CHECK_INT(e.kind, 0);
	tm_buf_free(&m);

	/* formats.md §5.8 / the reference: CPU 1024 and above is corruption. */
	put_v(&m, F_FtraceEventBundle_cpu, 1024);
	CHECK_INT(tm_ftrace_bundle_decode((tm_span){(const uint8_t *)m.data, m.len}, &b, &err), -1);
	CHECK_STR(err.msg,
		  "CPU 1024 is greater than maximum allowed of 1024. This is likely because of trace corruption (ERR:tp-corrupt)");
	tm_buf_free(&m);
	tm_ftrace_bundle_free(&b);
}

/* Packets read from a file through the reader, with the bundle inside a
 * real TracePacket built by protobuf-c. */
static void test_ftrace_packet_roundtrip(void)
{
	Perfetto__Protos__FtraceEventBundle fb = PERFETTO__PROTOS__FTRACE_EVENT_BUNDLE__INIT;
	Perfetto__Protos__FtraceEventBundle__CompactSched cs =
		PERFETTO__PROTOS__FTRACE_EVENT_BUNDLE__COMPACT_SCHED__INIT;
	uint64_t ts[] = {100, 1, 1};
	int64_t st[] = {0, 0, 0};
	int32_t pid[] = {1, 2, 3}, prio[] = {120, 120, 120};
	uint32_t comm[] = {0, 0, 0};
	char *intern[] = {"t"};
	cs.n_switch_timestamp = 3;
	cs.switch_timestamp = ts;
	cs.n_switch_prev_state = 3;
	cs.switch_prev_state = st;
	cs.n_switch_next_pid = 3;
	cs.switch_next_pid = pid;
	cs.n_switch_next_prio = 3;
	cs.switch_next_prio = prio;
	cs.n_switch_next_comm_index = 3;
	cs.switch_next_comm_index = comm;
	cs.n_intern_table = 1;
	cs.intern_table = intern;
	fb.has_cpu = 1;
	fb.cpu = 0;
	fb.compact_sched = &cs;
	Perfetto__Protos__TracePacket tp = PERFETTO__PROTOS__TRACE_PACKET__INIT;
	tp.data_case = PERFETTO__PROTOS__TRACE_PACKET__DATA_FTRACE_EVENTS;
	tp.ftrace_events = &fb;
	tp.optional_trusted_packet_sequence_id_case =
		PERFETTO__PROTOS__TRACE_PACKET__OPTIONAL_TRUSTED_PACKET_SEQUENCE_ID_TRUSTED_PACKET_SEQUENCE_ID;
	tp.trusted_packet_sequence_id = 4;
	Perfetto__Protos__TracePacket *tpp[] = {&tp, &tp};
	Perfetto__Protos__Trace tr = PERFETTO__PROTOS__TRACE__INIT;
	tr.n_packet = 2;
	tr.packet = tpp;
	size_t n = perfetto__protos__trace__get_packed_size(&tr);
	uint8_t *buf = malloc(n);
	perfetto__protos__trace__pack(&tr, buf);
	FILE *f = fopen(path_of("ftrace.pb"), "wb");
	CHECK(f);
	fwrite(buf, 1, n, f);
	fclose(f);
	free(buf);

	tm_error err;
	tm_blob *blob = tm_blob_open_path(path_of("ftrace.pb"), &err);
	CHECK(blob);
	tm_cursor *c = tm_cursor_open(blob, &err);
	tm_proto_reader *r = tm_proto_reader_new(c);
	const tm_packet *pkt;
	tm_ftrace_bundle b = {0};
	int packets = 0;
	while (tm_proto_reader_next(r, &pkt, &err) > 0) {
		packets++;
		CHECK_INT(pkt->trusted_packet_sequence_id, 4);
		CHECK_INT(tm_ftrace_bundle_decode(pkt->ftrace_events, &b, &err), 0);
		tm_compact_iter it;
		tm_compact_switch s;
		tm_compact_switch_begin(&it, &b);
		uint64_t last = 0;
		int rows = 0;
		while (tm_compact_switch_next(&it, &s) > 0) {
			rows++;
			last = s.timestamp;
		}
		CHECK_INT(rows, 3);
		CHECK_INT(last, 102);
	}
	CHECK_INT(packets, 2);
	tm_ftrace_bundle_free(&b);
	tm_proto_reader_free(r);
	tm_cursor_close(c);
	tm_blob_unref(blob);
}

/* ---- main ------------------------------------------------------------------------ */

static void find_root(const char *argv0)
{
	if (access("tests/tools/encode_fixtures.sh", R_OK) == 0)
		return;
	/* build/<variant>/tests/test_proto -> the checkout three levels up */
	snprintf(root, sizeof root, "%s", argv0);
	for (int i = 0; i < 4; i++) {
		char *s = strrchr(root, '/');
		if (!s)
			break;
		*s = '\0';
	}
}

int main(int argc, char **argv)
{
	(void)argc;
	find_root(argv[0]);
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 1;
	}
	char cmd[4096];
	snprintf(cmd, sizeof cmd, "bash '%s/tests/tools/encode_fixtures.sh' '%s' >/dev/null 2>&1",
		 root, tmpdir);
	have_fixtures = system(cmd) == 0;

	TT_RUN(test_fixture_spine);
	TT_RUN(test_packet_through_batch);
	TT_RUN(test_fixture_multi_machine_ids);
	TT_RUN(test_fixture_remote_clock_sync);
	TT_RUN(test_fixture_rcs_example_b);
	TT_RUN(test_fixture_process_tree);
	TT_RUN(test_fixture_seq_clock_and_defaults);
	TT_RUN(test_fixture_primary_clock_and_sysinfo);
	TT_RUN(test_fixture_concatenation);
	TT_RUN(test_fixture_all_readable);
	TT_RUN(test_fixture_rt_boot_parameters);
	TT_RUN(test_compressed_packets);
	TT_RUN(test_compressed_errors);
	TT_RUN(test_compressed_before_damage);
	TT_RUN(test_zstd_packets_and_mixing);
	TT_RUN(test_framing_errors);
	TT_RUN(test_skip_other_fields);
	TT_RUN(test_truncated);
	TT_RUN(test_chunk_boundaries);
	TT_RUN(test_huge_packet);
	TT_RUN(test_packet_size_limit);
	TT_RUN(test_wire_iterator);
	TT_RUN(test_extract_last_wins);
	TT_RUN(test_track_event_decode);
	TT_RUN(test_descriptors_and_interning);
	TT_RUN(test_config_sysinfo_attributes);
	TT_RUN(test_lenient_nested);
	TT_RUN(test_compact_sched);
	TT_RUN(test_ftrace_events);
	TT_RUN(test_ftrace_packet_roundtrip);

	snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", tmpdir);
	TT_DONE();
}
