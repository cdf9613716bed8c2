/* tests/unit/test_pb_unpack.c - tm_pb_unpack against protobuf-c's unpack
 * of the same bytes (pb_same.h): whole events built with protobuf-c,
 * hand-made wire forms at the edges of the library's rules, what it must
 * leave to protobuf-c, and a few thousand mutations of each. */
/* the deprecated flow fields are read by the model, so they are tested */
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
#include "pb_same.h"
#include "pb_write.h"
#include "wire/proto.h"
#include "trace.pb-c.h"
#include "tt.h"

typedef Perfetto__Protos__TrackEvent TrackEvent;
typedef Perfetto__Protos__TrackEvent__LegacyEvent LegacyEvent;
typedef Perfetto__Protos__DebugAnnotation DebugAnnotation;
typedef Perfetto__Protos__DebugAnnotation__NestedValue NestedValue;

/* numbers no message here declares */
#define UNKNOWN_A 1000
#define UNKNOWN_B 999
#define UNKNOWN_C 998
#define UNKNOWN_D 997

#define TE (&perfetto__protos__track_event__descriptor)
#define FE (&perfetto__protos__ftrace_event__descriptor)

/* ---- bytes by hand ---------------------------------------------------------- */

typedef struct wbuf {
	uint8_t b[65536];
	size_t n;
} wbuf;

static void w_byte(wbuf *w, uint8_t c)
{
	if (w->n < sizeof w->b)
		w->b[w->n++] = c;
}

static void w_varint(wbuf *w, uint64_t v)
{
	uint8_t t[10];
	size_t n = pb_varint_encode(t, v);
	for (size_t i = 0; i < n; i++)
		w_byte(w, t[i]);
}

static void w_tag(wbuf *w, uint32_t id, int wire) { w_varint(w, ((uint64_t)id << 3) | (unsigned)wire); }

static void w_uint(wbuf *w, uint32_t id, uint64_t v)
{
	w_tag(w, id, TM_PB_VARINT);
	w_varint(w, v);
}

static void w_bytes(wbuf *w, uint32_t id, const void *p, size_t n)
{
	w_tag(w, id, TM_PB_LEN);
	w_varint(w, n);
	for (size_t i = 0; i < n; i++)
		w_byte(w, ((const uint8_t *)p)[i]);
}

static void w_fixed64(wbuf *w, uint32_t id, uint64_t v)
{
	w_tag(w, id, TM_PB_I64);
	for (int i = 0; i < 8; i++)
		w_byte(w, (uint8_t)(v >> (8 * i)));
}

/* v as a varint of exactly width bytes: over-long when v needs fewer. */
static void w_varint_wide(wbuf *w, uint64_t v, size_t width)
{
	for (size_t i = 0; i < width; i++, v >>= 7)
		w_byte(w, (uint8_t)((v & 0x7f) | (i + 1 < width ? 0x80 : 0)));
}

static void w_raw(wbuf *w, const char *bytes, size_t n)
{
	for (size_t i = 0; i < n; i++)
		w_byte(w, (uint8_t)bytes[i]);
}

/* Both readings agree, and tm_pb_unpack took the bytes itself (want 1) or
 * left them to protobuf-c (want 0). */
#define CHECK_SAME(desc, w, want)                                                                        \
	do {                                                                                             \
		int took_;                                                                               \
		CHECK(pb_same((desc), (w)->b, (w)->n, &took_));                                          \
		CHECK_INT(took_, (want));                                                                \
	} while (0)

/* ---- a whole event, packed by protobuf-c ----------------------------------------- */

/* A TrackEvent with every kind of field the model reads set, packed. */
static size_t full_event(uint8_t *out, size_t cap)
{
	static char *cats[] = {"cat1", "cat,2"};
	static uint64_t iids[] = {1, 300, 70000};
	static uint64_t uuids[] = {11, 12};
	static int64_t values[] = {-5, 1ll << 40};
	static double dvalues[] = {0.5};
	static uint64_t flows[] = {UINT64_MAX, 7};
	static int32_t pids[] = {-1, 42};

	NestedValue leaf1 = PERFETTO__PROTOS__DEBUG_ANNOTATION__NESTED_VALUE__INIT;
	leaf1.has_int_value = 1;
	leaf1.int_value = -3;
	NestedValue leaf2 = PERFETTO__PROTOS__DEBUG_ANNOTATION__NESTED_VALUE__INIT;
	leaf2.string_value = "s";
	NestedValue *leaves[] = {&leaf1, &leaf2};
	static char *keys[] = {"k1", "k2"};
	NestedValue dict = PERFETTO__PROTOS__DEBUG_ANNOTATION__NESTED_VALUE__INIT;
	dict.has_nested_type = 1;
	dict.nested_type = PERFETTO__PROTOS__DEBUG_ANNOTATION__NESTED_VALUE__NESTED_TYPE__DICT;
	dict.n_dict_keys = 2;
	dict.dict_keys = keys;
	dict.n_dict_values = 2;
	dict.dict_values = leaves;

	DebugAnnotation inner = PERFETTO__PROTOS__DEBUG_ANNOTATION__INIT;
	inner.name_field_case = PERFETTO__PROTOS__DEBUG_ANNOTATION__NAME_FIELD_NAME;
	inner.name = "inner";
	inner.value_case = PERFETTO__PROTOS__DEBUG_ANNOTATION__VALUE_DOUBLE_VALUE;
	inner.double_value = -0.25;
	DebugAnnotation *inners[] = {&inner};
	DebugAnnotation a1 = PERFETTO__PROTOS__DEBUG_ANNOTATION__INIT;
	a1.name_field_case = PERFETTO__PROTOS__DEBUG_ANNOTATION__NAME_FIELD_NAME_IID;
	a1.name_iid = 9;
	a1.value_case = PERFETTO__PROTOS__DEBUG_ANNOTATION__VALUE_NESTED_VALUE;
	a1.nested_value = &dict;
	a1.n_dict_entries = 1;
	a1.dict_entries = inners;
	DebugAnnotation a2 = PERFETTO__PROTOS__DEBUG_ANNOTATION__INIT;
	a2.name_field_case = PERFETTO__PROTOS__DEBUG_ANNOTATION__NAME_FIELD_NAME;
	a2.name = "";
	a2.value_case = PERFETTO__PROTOS__DEBUG_ANNOTATION__VALUE_BOOL_VALUE;
	a2.bool_value = 1;
	a2.has_proto_value = 1;
	a2.proto_value.len = 3;
	a2.proto_value.data = (uint8_t *)"\x08\x01\x00"; /* a bytes value of no schema */
	DebugAnnotation *annots[] = {&a1, &a2};

	LegacyEvent le = PERFETTO__PROTOS__TRACK_EVENT__LEGACY_EVENT__INIT;
	le.has_phase = 1;
	le.phase = 'X';
	le.has_duration_us = 1;
	le.duration_us = -1;
	le.id_case = PERFETTO__PROTOS__TRACK_EVENT__LEGACY_EVENT__ID_GLOBAL_ID;
	le.global_id = 77;
	le.id_scope = "scope";
	le.has_bind_to_enclosing = 1;
	le.bind_to_enclosing = 1;
	le.has_flow_direction = 1;
	le.flow_direction = PERFETTO__PROTOS__TRACK_EVENT__LEGACY_EVENT__FLOW_DIRECTION__FLOW_INOUT;
	le.has_pid_override = 1;
	le.pid_override = -7;

	Perfetto__Protos__ChromeActiveProcesses ap = PERFETTO__PROTOS__CHROME_ACTIVE_PROCESSES__INIT;
	ap.n_pid = 2;
	ap.pid = pids;

	TrackEvent e = PERFETTO__PROTOS__TRACK_EVENT__INIT;
	e.n_category_iids = 3;
	e.category_iids = iids;
	e.n_categories = 2;
	e.categories = cats;
	e.name_field_case = PERFETTO__PROTOS__TRACK_EVENT__NAME_FIELD_NAME;
	e.name = "name\twith tab";
	e.has_type = 1;
	e.type = PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_COUNTER;
	e.has_track_uuid = 1;
	e.track_uuid = UINT64_MAX;
	e.counter_value_field_case = PERFETTO__PROTOS__TRACK_EVENT__COUNTER_VALUE_FIELD_COUNTER_VALUE;
	e.counter_value = -1;
	e.n_extra_counter_track_uuids = 2;
	e.extra_counter_track_uuids = uuids;
	e.n_extra_counter_values = 2;
	e.extra_counter_values = values;
	e.n_extra_double_counter_values = 1;
	e.extra_double_counter_values = dvalues;
	e.n_flow_ids = 2;
	e.flow_ids = flows;
	e.n_terminating_flow_ids_old = 1;
	e.terminating_flow_ids_old = flows;
	e.n_debug_annotations = 2;
	e.debug_annotations = annots;
	e.timestamp_case = PERFETTO__PROTOS__TRACK_EVENT__TIMESTAMP_TIMESTAMP_ABSOLUTE_US;
	e.timestamp_absolute_us = 123456789;
	e.thread_time_case = PERFETTO__PROTOS__TRACK_EVENT__THREAD_TIME_THREAD_TIME_DELTA_US;
	e.thread_time_delta_us = 5;
	e.legacy_event = &le;
	e.active_processes = &ap;
	size_t n = perfetto__protos__track_event__get_packed_size(&e);
	if (n > cap)
		return 0;
	return perfetto__protos__track_event__pack(&e, out);
}

static void test_whole_event_reads_the_same(void)
{
	wbuf w = {.n = 0};
	w.n = full_event(w.b, sizeof w.b);
	CHECK(w.n > 0);
	CHECK_SAME(TE, &w, 1);
	/* and what the model reads of it */
	pb_arena fa = {0};
	ProtobufCAllocator a = {pb_arena_alloc, pb_arena_free_one, &fa};
	TrackEvent *e = (TrackEvent *)tm_pb_unpack(TE, &a, w.n, w.b);
	CHECK(e != NULL);
	CHECK_INT(e->n_category_iids, 3);
	CHECK_INT(e->category_iids[2], 70000);
	CHECK_STR(e->name, "name\twith tab");
	CHECK_INT(e->track_uuid == UINT64_MAX, 1);
	CHECK_INT(e->n_debug_annotations, 2);
	CHECK_INT(e->debug_annotations[0]->nested_value->n_dict_values, 2);
	CHECK_STR(e->debug_annotations[0]->nested_value->dict_values[1]->string_value, "s");
	CHECK_INT(e->legacy_event->pid_override, -7);
	CHECK_INT(e->active_processes->pid[0], -1);
	CHECK_INT(e->base.n_unknown_fields, 0);
	pb_arena_free(&fa);
}

static void test_unknown_fields_are_skipped(void)
{
	wbuf w = {.n = 0};
	/* one unknown field of each wire type, around known ones */
	w_uint(&w, UNKNOWN_A, 5);
	w_uint(&w, F_TrackEvent_track_uuid, 3);
	w_fixed64(&w, UNKNOWN_B, 1);
	w_bytes(&w, UNKNOWN_C, "abc", 3);
	w_tag(&w, UNKNOWN_D, TM_PB_I32);
	w_raw(&w, "\x01\x02\x03\x04", 4);
	w_bytes(&w, F_TrackEvent_name, "n", 1);
	/* a tag whose number is 0 in two bytes: protobuf-c keeps it as unknown */
	w_varint_wide(&w, TM_PB_TAG(PB_NO_FIELD, TM_PB_VARINT), 2);
	w_varint(&w, 5);
	CHECK_SAME(TE, &w, 1);
}

static void test_later_values_replace_earlier(void)
{
	wbuf w = {.n = 0};
	w_uint(&w, F_TrackEvent_track_uuid, 3);
	w_uint(&w, F_TrackEvent_track_uuid, 4);
	w_uint(&w, F_TrackEvent_name_iid, 8);
	w_bytes(&w, F_TrackEvent_name, "later", 5);
	w_uint(&w, F_TrackEvent_timestamp_delta_us, 1);
	w_uint(&w, F_TrackEvent_timestamp_absolute_us, 2);
	w_bytes(&w, F_TrackEvent_categories, "a", 1);
	w_bytes(&w, F_TrackEvent_categories, "b", 1);
	CHECK_SAME(TE, &w, 1);
	wbuf v = {.n = 0};
	w_bytes(&v, F_TrackEvent_name, "first", 5);
	w_uint(&v, F_TrackEvent_name_iid, 8);
	CHECK_SAME(TE, &v, 1);
}

static void test_repeated_fields_packed_or_not(void)
{
	wbuf w = {.n = 0};
	w_uint(&w, F_TrackEvent_category_iids, 1);
	uint8_t packed[] = {0x02, 0xac, 0x02, 0x7f};
	w_bytes(&w, F_TrackEvent_category_iids, packed, sizeof packed);
	w_bytes(&w, F_TrackEvent_category_iids, "", 0);
	w_uint(&w, F_TrackEvent_category_iids, 9);
	/* fixed64 one by one and packed */
	w_fixed64(&w, F_TrackEvent_flow_ids, 5);
	uint8_t two[16] = {1, 0, 0, 0, 0, 0, 0, 0, 2};
	w_bytes(&w, F_TrackEvent_flow_ids, two, sizeof two);
	/* many, so the array grows several times */
	for (int i = 0; i < 1000; i++)
		w_uint(&w, F_TrackEvent_extra_counter_values, (uint64_t)(i * 7919));
	CHECK_SAME(TE, &w, 1);
}

static void test_varints_at_their_widest(void)
{
	wbuf w = {.n = 0};
	uint8_t le[64];
	wbuf l = {.n = 0};
	/* -1 as int32: ten bytes, the low 32 bits kept */
	w_uint(&l, F_TrackEvent_LegacyEvent_phase, UINT64_MAX);
	/* a bool whose only set bit is past the 64th: true for protobuf-c */
	w_tag(&l, F_TrackEvent_LegacyEvent_bind_to_enclosing, TM_PB_VARINT);
	w_raw(&l, "\x80\x80\x80\x80\x80\x80\x80\x80\x80\x02", 10);
	/* a bool of zeros written long: false */
	w_tag(&l, F_TrackEvent_LegacyEvent_use_async_tts, TM_PB_VARINT);
	w_raw(&l, "\x80\x80\x00", 3);
	/* a five-byte int32 with bits past 32 */
	w_tag(&l, F_TrackEvent_LegacyEvent_pid_override, TM_PB_VARINT);
	w_raw(&l, "\xff\xff\xff\xff\x7f", 5);
	memcpy(le, l.b, l.n);
	w_bytes(&w, F_TrackEvent_legacy_event, le, l.n);
	/* an int64 of ten bytes whose last has more than one bit */
	w_tag(&w, F_TrackEvent_counter_value, TM_PB_VARINT);
	w_raw(&w, "\xff\xff\xff\xff\xff\xff\xff\xff\xff\x7f", 10);
	CHECK_SAME(TE, &w, 1);
}

static void test_oneof_members_replace_each_other(void)
{
	/* a wider member replaced by a narrower one: protobuf-c zeroes the
	 * old bytes first */
	wbuf a = {.n = 0};
	w_fixed64(&a, F_DebugAnnotation_double_value, 0x3ff0000000000000ull);
	w_uint(&a, F_DebugAnnotation_bool_value, 1);
	CHECK_SAME(&perfetto__protos__debug_annotation__descriptor, &a, 1);
	/* a oneof message met twice: read whole again, not merged */
	wbuf n1 = {.n = 0}, n2 = {.n = 0};
	w_uint(&n1, F_DebugAnnotation_NestedValue_int_value, 5);
	w_bytes(&n2, F_DebugAnnotation_NestedValue_string_value, "s", 1);
	wbuf b = {.n = 0};
	w_bytes(&b, F_DebugAnnotation_nested_value, n1.b, n1.n);
	w_bytes(&b, F_DebugAnnotation_nested_value, n2.b, n2.n);
	CHECK_SAME(&perfetto__protos__debug_annotation__descriptor, &b, 1);
	wbuf sw = {.n = 0};
	w_uint(&sw, F_SchedSwitchFtraceEvent_prev_pid, 3);
	wbuf f = {.n = 0};
	w_bytes(&f, F_FtraceEvent_sched_switch, sw.b, sw.n);
	w_bytes(&f, F_FtraceEvent_sched_switch, "", 0);
	CHECK_SAME(FE, &f, 1);
	/* empty bytes: NULL data, as protobuf-c leaves it */
	wbuf e = {.n = 0};
	w_bytes(&e, F_DebugAnnotation_proto_value, "", 0);
	CHECK_SAME(&perfetto__protos__debug_annotation__descriptor, &e, 1);
}

static void test_left_to_protobuf_c(void)
{
	/* a message field met twice: protobuf-c merges */
	wbuf l1 = {.n = 0}, l2 = {.n = 0};
	w_uint(&l1, F_TrackEvent_LegacyEvent_phase, 'B');
	w_uint(&l2, F_TrackEvent_LegacyEvent_duration_us, 1);
	wbuf w = {.n = 0};
	w_bytes(&w, F_TrackEvent_legacy_event, l1.b, l1.n);
	w_bytes(&w, F_TrackEvent_legacy_event, l2.b, l2.n);
	CHECK_SAME(TE, &w, 0);
	/* a bool of another wire type: protobuf-c reads it anyway */
	wbuf lb = {.n = 0};
	w_bytes(&lb, F_TrackEvent_LegacyEvent_bind_to_enclosing, "\x01", 1);
	wbuf b = {.n = 0};
	w_bytes(&b, F_TrackEvent_legacy_event, lb.b, lb.n);
	CHECK_SAME(TE, &b, 0);
	/* a known field of the wrong wire type */
	wbuf t = {.n = 0};
	w_bytes(&t, F_TrackEvent_track_uuid, "x", 1);
	CHECK_SAME(TE, &t, 0);
	/* packed fixed64 that is not a whole number of elements */
	wbuf f = {.n = 0};
	w_bytes(&f, F_TrackEvent_flow_ids, "1234567", 7);
	CHECK_SAME(TE, &f, 0);
	/* malformed: a group; a varint cut short, and one of eleven bytes; a
	 * length past the end; a tag naming field 0 */
	wbuf g = {.n = 0};
	w_tag(&g, F_TrackEvent_track_uuid, PB_WIRE_GROUP_START);
	CHECK_SAME(TE, &g, 0);
	wbuf c = {.n = 0};
	w_tag(&c, F_TrackEvent_track_uuid, TM_PB_VARINT);
	w_raw(&c, "\x80", 1);
	CHECK_SAME(TE, &c, 0);
	wbuf e = {.n = 0};
	w_tag(&e, F_TrackEvent_track_uuid, TM_PB_VARINT);
	for (int i = 0; i < 10; i++)
		w_raw(&e, "\x80", 1);
	w_raw(&e, "\x01", 1);
	CHECK_SAME(TE, &e, 0);
	wbuf p = {.n = 0};
	w_tag(&p, F_TrackEvent_name, TM_PB_LEN);
	w_varint(&p, 5);
	w_raw(&p, "ab", 2);
	CHECK_SAME(TE, &p, 0);
	wbuf z = {.n = 0};
	w_uint(&z, PB_NO_FIELD, 1);
	CHECK_SAME(TE, &z, 0);
	/* a length prefix of six bytes (protobuf-c reads five at most) */
	wbuf six = {.n = 0};
	w_tag(&six, F_TrackEvent_name, TM_PB_LEN);
	w_raw(&six, "\x81\x80\x80\x80\x80\x00", 6);
	w_raw(&six, "x", 1);
	CHECK_SAME(TE, &six, 0);
	/* a tag of six bytes */
	wbuf tag6 = {.n = 0};
	w_varint_wide(&tag6, TM_PB_TAG(F_TrackEvent_track_uuid, TM_PB_VARINT), 6);
	w_varint(&tag6, 1);
	CHECK_SAME(TE, &tag6, 0);
}

static void test_nesting_past_the_limit(void)
{
	/* dict_entries inside dict_entries, deeper than TM_PB_UNPACK_DEPTH */
	static wbuf lv[2];
	wbuf *cur = &lv[0], *next = &lv[1];
	cur->n = 0;
	w_bytes(cur, F_DebugAnnotation_name, "leaf", 4);
	for (int d = 0; d < TM_PB_UNPACK_DEPTH + 2; d++) {
		next->n = 0;
		w_bytes(next, F_DebugAnnotation_dict_entries, cur->b, cur->n);
		wbuf *t = cur;
		cur = next;
		next = t;
	}
	wbuf w = {.n = 0};
	w_bytes(&w, F_TrackEvent_debug_annotations, cur->b, cur->n);
	CHECK_SAME(TE, &w, 0);
}

/* Nesting far past the limit: protobuf-c would follow it by recursion
 * until the stack runs out, so tm_pb_too_deep says so and the model
 * drops the event; nesting within the limit, or bytes whose framing
 * stops protobuf-c first, are not too deep. */
static void test_too_deep_for_protobuf_c(void)
{
	static uint8_t bufs[2][1 << 20];
	size_t n = 0;
	uint8_t *cur = bufs[0], *next = bufs[1];
	wbuf leaf = {.n = 0};
	w_bytes(&leaf, F_DebugAnnotation_name, "leaf", 4);
	memcpy(cur, leaf.b, leaf.n);
	n = leaf.n;
	const ProtobufCMessageDescriptor *da = &perfetto__protos__debug_annotation__descriptor;
	for (int d = 1; d <= 100000; d++) {
		/* tag (dict_entries, LEN), then the length, then the inner bytes */
		size_t k = pb_varint_encode(next, ((uint64_t)F_DebugAnnotation_dict_entries << 3) | TM_PB_LEN);
		k += pb_varint_encode(next + k, n);
		if (k + n > sizeof bufs[0])
			TT_FAIL_("nesting %d does not fit", d);
		memmove(next + k, cur, n);
		n += k;
		uint8_t *tmp = cur;
		cur = next;
		next = tmp;
		if (d == TM_PB_UNPACK_DEPTH - 1)
			CHECK(!tm_pb_too_deep(da, n, cur));
		if (d == TM_PB_UNPACK_DEPTH + 1)
			CHECK(tm_pb_too_deep(da, n, cur));
	}
	CHECK(tm_pb_too_deep(da, n, cur));
	pb_arena fa = {0};
	ProtobufCAllocator a = {pb_arena_alloc, pb_arena_free_one, &fa};
	CHECK(tm_pb_unpack(da, &a, n, cur) == NULL);
	pb_arena_free(&fa);
	/* the same with a field that does not frame after it: protobuf-c
	 * fails on the first pass, before any nesting */
	cur[n] = 0x0b; /* a group */
	CHECK(!tm_pb_too_deep(da, n + 1, cur));
}

static void test_ftrace_event_reads_the_same(void)
{
	wbuf sw = {.n = 0};
	w_bytes(&sw, F_SchedSwitchFtraceEvent_prev_comm, "swapper/0", 9);
	w_uint(&sw, F_SchedSwitchFtraceEvent_prev_pid, 0);
	w_uint(&sw, F_SchedSwitchFtraceEvent_prev_state, UINT64_MAX);
	w_bytes(&sw, F_SchedSwitchFtraceEvent_next_comm, "kworker", 7);
	w_uint(&sw, F_SchedSwitchFtraceEvent_next_pid, 12);
	wbuf w = {.n = 0};
	w_uint(&w, F_FtraceEvent_timestamp, 1000);
	w_uint(&w, F_FtraceEvent_pid, 12);
	w_bytes(&w, F_FtraceEvent_sched_switch, sw.b, sw.n);
	CHECK_SAME(FE, &w, 1);
	/* another member of the oneof replaces it */
	wbuf pr = {.n = 0};
	w_bytes(&pr, F_PrintFtraceEvent_buf, "hi", 2);
	w_bytes(&w, F_FtraceEvent_print, pr.b, pr.n);
	CHECK_SAME(FE, &w, 1);
}

/* Every byte of the whole event changed, one at a time, to a few values;
 * and runs of random bytes spliced in: whatever tm_pb_unpack takes it
 * reads as protobuf-c does. */
static void test_mutations_read_the_same(void)
{
	wbuf base = {.n = 0};
	base.n = full_event(base.b, sizeof base.b);
	CHECK(base.n > 0);
	static const uint8_t vals[] = {0x00, 0x01, 0x02, 0x05, 0x7f, 0x80, 0xff};
	size_t took = 0, total = 0;
	for (size_t i = 0; i < base.n; i++) {
		for (size_t k = 0; k < sizeof vals; k++) {
			static wbuf w;
			w = base;
			w.b[i] = vals[k];
			int t;
			if (!pb_same(TE, w.b, w.n, &t))
				TT_FAIL_("byte %zu set to 0x%02x: the readings differ", i, vals[k]);
			took += (size_t)t;
			total++;
		}
	}
	uint64_t seed = 0x9e3779b97f4a7c15ull;
	for (int r = 0; r < 3000; r++) {
		static wbuf w;
		w = base;
		seed = seed * 6364136223846793005ull + 1442695040888963407ull;
		size_t at = (size_t)(seed >> 33) % w.n, n = (size_t)(seed >> 20) % 6 + 1;
		for (size_t j = 0; j < n && at + j < w.n; j++) {
			seed = seed * 6364136223846793005ull + 1442695040888963407ull;
			w.b[at + j] = (uint8_t)(seed >> 56);
		}
		int t;
		if (!pb_same(TE, w.b, w.n, &t))
			TT_FAIL_("random run %d at %zu: the readings differ", r, at);
		took += (size_t)t;
		total++;
	}
	/* most mutations still parse: the fast path was exercised */
	CHECK(took * 4 > total);
}

/* tm_pb_unpack does not check required fields: none of the messages it
 * is given has one. */
static int has_required(const ProtobufCMessageDescriptor *d, int depth)
{
	if (depth > 16)
		return 0;
	for (unsigned i = 0; i < d->n_fields; i++) {
		if (d->fields[i].label == PROTOBUF_C_LABEL_REQUIRED)
			return 1;
		if (d->fields[i].type == PROTOBUF_C_TYPE_MESSAGE && d->fields[i].descriptor != d &&
		    has_required(d->fields[i].descriptor, depth + 1))
			return 1;
	}
	return 0;
}

static void test_no_required_fields(void)
{
	CHECK(!has_required(TE, 0));
	CHECK(!has_required(FE, 0));
}

int main(void)
{
	TT_RUN(test_whole_event_reads_the_same);
	TT_RUN(test_unknown_fields_are_skipped);
	TT_RUN(test_later_values_replace_earlier);
	TT_RUN(test_repeated_fields_packed_or_not);
	TT_RUN(test_varints_at_their_widest);
	TT_RUN(test_oneof_members_replace_each_other);
	TT_RUN(test_left_to_protobuf_c);
	TT_RUN(test_nesting_past_the_limit);
	TT_RUN(test_too_deep_for_protobuf_c);
	TT_RUN(test_ftrace_event_reads_the_same);
	TT_RUN(test_mutations_read_the_same);
	TT_RUN(test_no_required_fields);
	TT_DONE();
}
