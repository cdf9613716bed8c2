/* tests/unit/test_manifest.c - every manifest-time error of
 * spec/manifest.md §8 with its exact text, the §6 order, the JSON rules of
 * §4, and application (§7, machines.md §3, clocks.md §9). */
#include "tt.h"

#include <stdlib.h>

#include "json.h"
#include "manifest.h"

#define PM(body) "{\"perfetto_manifest\": {\"version\": 1" body "}}"

static const struct {
	const char *json, *error;
} errors[] = {
	{"{\"perfetto_manifest\": 1}", "perfetto_manifest: expected a JSON object with a top-level perfetto_manifest key"},
	{"[1]", "perfetto_manifest: expected a JSON object with a top-level perfetto_manifest key"},
	{"{\"perfetto_manifest\": {}}", "perfetto_manifest: missing required field: version"},
	{"{\"perfetto_manifest\": {\"version\": \"1\"}}", "perfetto_manifest: version must be an integer"},
	{"{\"perfetto_manifest\": {\"version\": 1.0}}", "perfetto_manifest: version must be an integer"},
	{"{\"perfetto_manifest\": {\"version\": 99999999999999999999}}", "perfetto_manifest: version must be an integer"},
	{"{\"perfetto_manifest\": {\"version\": 2}}",
	 "perfetto_manifest: unsupported version: 2. Only version 1 is supported; set \"version\": 1."},
	{PM(", \"files\": {}"), "perfetto_manifest: files must be an array"},
	{PM(", \"files\": [1]"), "perfetto_manifest: files entries must be objects with a string path"},
	{PM(", \"files\": [{\"path\": 1}]"), "perfetto_manifest: files entries must be objects with a string path"},
	{PM(", \"trace_time\": {\"clock\": 6}"), "perfetto_manifest: clock name must be a string"},
	{PM(", \"trace_time\": {\"clock\": \"boottime\"}"),
	 "perfetto_manifest: unknown clock name: boottime. Use one of REALTIME, REALTIME_COARSE, MONOTONIC, "
	 "MONOTONIC_COARSE, MONOTONIC_RAW, BOOTTIME."},
	{PM(", \"trace_time\": []"), "perfetto_manifest: trace_time must be an object"},
	{PM(", \"trace_time\": {}"), "perfetto_manifest: trace_time needs a clock"},
	{PM(", \"trace_time\": {\"clock\": \"BOOTTIME\", \"file\": 1}"), "perfetto_manifest: trace_time: file must be a string"},
	{PM(", \"trace_time\": {\"clock\": \"BOOTTIME\", \"machine\": 1}"),
	 "perfetto_manifest: trace_time: machine must be a string"},
	{PM(", \"files\": [{\"path\": \"a\", \"machine\": {\"name\": \"x\"}, \"machines\": []}]"),
	 "perfetto_manifest: machine and machines are mutually exclusive. Use `machine` for a single-machine file, or "
	 "`machines` to remap a multi-machine proto's embedded ids; not both."},
	{PM(", \"files\": [{\"path\": \"a\", \"machine\": \"x\"}]"),
	 "perfetto_manifest: machine must be an object with a string name, e.g. \"machine\": {\"name\": \"phone\"}."},
	{PM(", \"files\": [{\"path\": \"a\", \"machine\": {\"name\": \"\"}}]"),
	 "perfetto_manifest: machine: name must be non-empty"},
	{PM(", \"files\": [{\"path\": \"a\", \"machines\": {}}]"), "perfetto_manifest: machines must be an array"},
	{PM(", \"files\": [{\"path\": \"a\", \"machines\": [{\"id\": \"7\", \"name\": \"x\"}]}]"),
	 "perfetto_manifest: machines entries need an integer id and a string name, e.g. \"machines\": [{\"id\": 0, "
	 "\"name\": \"phone\"}]."},
	{PM(", \"files\": [{\"path\": \"a\", \"machines\": [{\"id\": -1, \"name\": \"x\"}]}]"),
	 "perfetto_manifest: machines: id must be in [0, 4294967295]"},
	{PM(", \"files\": [{\"path\": \"a\", \"machines\": [{\"id\": 1, \"name\": \"\"}]}]"),
	 "perfetto_manifest: machines: name must be non-empty"},
	{PM(", \"files\": [{\"path\": \"a\", \"clocks\": 1}]"), "perfetto_manifest: clocks must be an object"},
	{PM(", \"files\": [{\"path\": \"a\", \"clocks\": {\"machine\": 1}}]"), "perfetto_manifest: clocks: machine must be a string"},
	{PM(", \"files\": [{\"path\": \"a\", \"clocks\": {}}]"),
	 "perfetto_manifest: clocks: a sync_to block is required. Manual clock handling relates this file to a clock in "
	 "another trace, e.g. \"sync_to\": {\"file\": \"other.pb\"}."},
	{PM(", \"files\": [{\"path\": \"a\", \"clocks\": {\"sync_to\": 1}}]"), "perfetto_manifest: clocks: sync_to must be an object"},
	{PM(", \"files\": [{\"path\": \"a\", \"clocks\": {\"sync_to\": {}}}]"),
	 "perfetto_manifest: clocks: sync_to.file is required and must be a string"},
	{PM(", \"files\": [{\"path\": \"a\", \"clocks\": {\"sync_to\": {\"file\": \"b\", \"machine\": 2}}}]"),
	 "perfetto_manifest: clocks: sync_to.machine must be a string"},
	{PM(", \"files\": [{\"path\": \"a\", \"clocks\": {\"sync_to\": {\"file\": \"b\"}, \"offset_ns\": 1.5}}]"),
	 "perfetto_manifest: clocks: offset_ns must be an integer"},
	{PM(", \"files\": [{\"path\": \"a\", \"clocks\": {\"sync_to\": {\"file\": \"b\"}, \"offset_ns\": "
	    "-9223372036854775808}}]"),
	 "perfetto_manifest: clocks: offset_ns is out of range"},
	{PM(", \"attributes\": []"),
	 "perfetto_manifest: attributes must be an object of string or integer values, e.g. \"attributes\": "
	 "{\"benchmark\": \"startup\"}."},
	{PM(", \"attributes\": {\"\": 1}"), "perfetto_manifest: attributes: keys must be non-empty"},
	{PM(", \"attributes\": {\"k\": 1.5}"), "perfetto_manifest: attributes: 'k' must be a string or an integer"},
	{PM(", \"attributes\": {\"k\": true}"), "perfetto_manifest: attributes: 'k' must be a string or an integer"},
	{PM(", \"files\": [{\"path\": \"t\", \"__exported_table_schema\": {}, \"machine\": {\"name\": \"x\"}}]"),
	 "perfetto_manifest: 't': an exported table is not a trace, so __exported_table_schema cannot be combined with "
	 "clocks/machine/machines"},
	{PM(", \"files\": [{\"path\": \"t\", \"__exported_table_schema\": {\"format\": 1}}]"),
	 "perfetto_manifest: __exported_table_schema needs an integer format, a string name, an integer row_count and a "
	 "columns array"},
	{PM(", \"files\": [{\"path\": \"t\", \"__exported_table_schema\": {\"format\": 1, \"name\": \"n\", \"row_count\": "
	    "-1, \"columns\": []}}]"),
	 "perfetto_manifest: table 'n': invalid row_count"},
	{PM(", \"files\": [{\"path\": \"t\", \"__exported_table_schema\": {\"format\": 1, \"name\": \"n\", \"row_count\": "
	    "1, \"columns\": [{\"name\": \"c\"}]}}]"),
	 "perfetto_manifest: table 'n': malformed column entry"},
	/* §6 order: version before everything, trace_time before files, files
	 * in array order, attributes last. */
	{"{\"perfetto_manifest\": {\"version\": 3, \"files\": 1}}",
	 "perfetto_manifest: unsupported version: 3. Only version 1 is supported; set \"version\": 1."},
	{PM(", \"files\": 1, \"trace_time\": 2"), "perfetto_manifest: trace_time must be an object"},
	{PM(", \"attributes\": 1, \"files\": [{\"path\": \"a\", \"machine\": {\"name\": \"\"}}]"),
	 "perfetto_manifest: machine: name must be non-empty"},
	/* Within an entry: clocks before machine. */
	{PM(", \"files\": [{\"path\": \"a\", \"machine\": {\"name\": \"\"}, \"clocks\": 1}]"),
	 "perfetto_manifest: clocks must be an object"},
	/* JSON syntax errors (§4, the reference parser's texts). */
	{"{\"perfetto_manifest\": {\"version\": 1,, }}", "Failed to parse object: Expected '\"' at the start of key. Got ','"},
	{"{\"perfetto_manifest\" {}}", "Failed to parse object: Expected ':' after key 'perfetto_manifest'. Got '{'"},
	{"{\"perfetto_manifest\": {\"version\": 1 \"x\": 2}}",
	 "Failed to parse object: Expected ',' or '}' after value for key 'version'. Got '\"'"},
	{"{\"perfetto_manifest\": {\"version\": tru}}", "Failed to parse object: Invalid token: expected 'true' but got 'tru}'"},
	{"{\"perfetto_manifest\": {\"files\": [1 2]}}", "Failed to parse array: Expected ',' or ']' after value. Got '2'"},
	{"{\"perfetto_manifest\": {\"version\": 01}}", "Failed to parse object: Invalid number: leading zero in '01}}'"},
	{"{\"perfetto_manifest\": {\"version\": 1", "Failed to parse object: "},
	{"  x", "Failed to start parsing: Expected '{' or '[' at the start. Got 'x'"},
};

static void test_error_texts(void)
{
	for (size_t i = 0; i < sizeof(errors) / sizeof(errors[0]); i++) {
		tm_manifest *m = NULL;
		tm_error err = {0};
		int rc = tm_manifest_parse(errors[i].json, strlen(errors[i].json), &m, &err);
		if (rc == 0) {
			tm_manifest_free(m);
			TT_FAIL_("case %zu (%s) parsed, expected [%s]", i, errors[i].json, errors[i].error);
		}
		if (strcmp(err.msg, errors[i].error) != 0)
			TT_FAIL_("case %zu (%s): got [%s], expected [%s]", i, errors[i].json, err.msg, errors[i].error);
	}
}

/* §4: integers vs doubles; duplicate keys, last wins; trailing bytes. */
static void test_json_rules(void)
{
	const char *doc = "{\"a\": 1, \"b\": 1.0, \"c\": 1e3, \"d\": 99999999999999999999, \"e\": -9223372036854775808,"
			  " \"a\": 2, \"s\": \"x\\u00e9\\n\", \"t\": [true, false, null,]} trailing garbage";
	tj_value *v;
	tm_error err = {0};
	CHECK(tj_parse(doc, strlen(doc), &v, &err) == 0);
	CHECK_INT(tj_get(v, "a")->type, TJ_INT);
	CHECK_INT(tj_get(v, "a")->i, 2);
	CHECK_INT(tj_get(v, "b")->type, TJ_DOUBLE);
	CHECK_INT(tj_get(v, "c")->type, TJ_DOUBLE);
	CHECK_INT(tj_get(v, "d")->type, TJ_DOUBLE);
	CHECK_INT(tj_get(v, "e")->type, TJ_INT);
	CHECK(tj_get(v, "e")->i == INT64_MIN);
	CHECK_STR(tj_get(v, "s")->s, "x\xc3\xa9\n");
	CHECK_INT(tj_get(v, "t")->len, 3);
	tj_free(v);
	/* Deep nesting is refused without a crash. */
	char deep[3000];
	memset(deep, '[', sizeof deep - 1);
	deep[sizeof deep - 1] = '\0';
	CHECK(tj_parse(deep, strlen(deep), &v, &err) != 0);
}

static int64_t ids(void *ctx, const char *path)
{
	(void)ctx;
	/* a fake archive: a.json is member 1, b.json 2, phone.pb 3 */
	static const char *const names[] = {"a.json", "b.json", "phone.pb"};
	for (int i = 0; i < 3; i++)
		if (strcmp(path, names[i]) == 0)
			return i + 1;
	return -1;
}

static tm_manifest *parse_ok(const char *json)
{
	tm_manifest *m = NULL;
	tm_error err = {0};
	if (tm_manifest_parse(json, strlen(json), &m, &err) != 0) {
		fprintf(stderr, "unexpected: %s\n", err.msg);
		return NULL;
	}
	return m;
}

/* machines.md §6: rows in files order, machines items in array order. */
static void test_rows_and_trace_time(void)
{
	tm_manifest *m = parse_ok(PM(", \"trace_time\": {\"clock\": \"BOOTTIME\"}, \"files\": [{\"path\": \"a.json\", "
				     "\"machine\": {\"name\": \"phone\"}}, {\"path\": \"p.pb\", \"machines\": [{\"id\": 7, "
				     "\"name\": \"vm\"}, {\"id\": 0, \"name\": \"host0\"}]}]"));
	CHECK(m);
	tm_mf_plan p;
	tm_error err = {0};
	CHECK(tm_manifest_apply(m, ids, NULL, &p, &err) == 0);
	CHECK_INT(p.n_rows, 3);
	CHECK_STR(p.rows[0].name, "phone");
	CHECK(p.rows[0].raw_id == (INT64_C(1) << 32));
	CHECK_STR(p.rows[1].name, "vm");
	CHECK_STR(p.rows[2].name, "host0");
	CHECK(p.rows[2].raw_id == (INT64_C(1) << 32) + 2);
	/* clocks.md §5.3: no file -> machine row 0, the first named machine. */
	CHECK_INT(p.has_trace_time, 1);
	CHECK_INT(p.trace_time.clock_id, 6);
	CHECK_INT(p.trace_time.machine_row, 0);
	CHECK_INT(tm_manifest_entry_base_raw_id(m, 1), (INT64_C(1) << 32) + 2);
	CHECK_INT(tm_manifest_entry_remap(m, 1, 7), (INT64_C(1) << 32) + 1);
	CHECK_INT(tm_manifest_entry_remap(m, 1, 8), -1);
	tm_mf_plan_free(&p);
	tm_manifest_free(m);
}

/* clocks.md §9: PIN and RELATE nodes, the offset's sign; manifest.md §10 B. */
static void test_edges(void)
{
	tm_manifest *m = parse_ok(PM(", \"files\": [{\"path\": \"phone.pb\"}, {\"path\": \"a.json\", \"machine\": {\"name\": "
				     "\"srv\"}, \"clocks\": {\"sync_to\": {\"file\": \"phone.pb\", \"clock\": \"BOOTTIME\"}, "
				     "\"offset_ns\": 250000000}}, {\"path\": \"b.json\", \"clocks\": {\"clock\": "
				     "\"MONOTONIC\", \"sync_to\": {\"file\": \"a.json\"}, \"offset_ns\": -500}}]"));
	CHECK(m);
	tm_mf_plan p;
	tm_error err = {0};
	CHECK(tm_manifest_apply(m, ids, NULL, &p, &err) == 0);
	CHECK_INT(p.n_edges, 2);
	/* PIN: a.json's private clock on srv (row 0) -> host BOOTTIME (row 1). */
	CHECK_INT(p.edges[0].src.clock_id, 11);
	CHECK_INT(p.edges[0].src.file_id, 1);
	CHECK_INT(p.edges[0].src.machine_row, 0);
	CHECK_INT(p.edges[0].ref.clock_id, 6);
	CHECK_INT(p.edges[0].ref.machine_row, 1);
	CHECK_INT(p.edges[0].src_ts, 0);
	CHECK_INT(p.edges[0].ref_ts, 250000000);
	CHECK_INT(p.rows[1].raw_id, 0); /* the host row, created by the reference */
	/* RELATE with a clock-less reference and a negative offset. */
	CHECK_INT(p.edges[1].src.clock_id, 3);
	CHECK_INT(p.edges[1].ref.clock_id, 11);
	CHECK_INT(p.edges[1].ref.file_id, 1);
	CHECK_INT(p.edges[1].ref.machine_row, 0);
	CHECK_INT(p.edges[1].src_ts, 500);
	CHECK_INT(p.edges[1].ref_ts, 0);
	tm_mf_plan_free(&p);
	tm_manifest_free(m);
}

static const struct {
	const char *json, *error;
} apply_errors[] = {
	{PM(", \"trace_time\": {\"clock\": \"BOOTTIME\", \"machine\": \"vm\"}"),
	 "perfetto_manifest: trace_time: machine 'vm' needs trace_time: file too: a machine name alone is ambiguous "
	 "because embedded machine ids are scoped to their trace."},
	{PM(", \"trace_time\": {\"clock\": \"BOOTTIME\", \"file\": \"m.pb\"}, \"files\": [{\"path\": \"m.pb\", "
	    "\"machines\": [{\"id\": 0, \"name\": \"x\"}]}]"),
	 "perfetto_manifest: trace_time: file 'm.pb' is a multi-machine trace; also name the machine with trace_time: "
	 "machine."},
	{PM(", \"trace_time\": {\"clock\": \"BOOTTIME\", \"file\": \"m.pb\", \"machine\": \"y\"}, \"files\": [{\"path\": "
	    "\"m.pb\", \"machines\": [{\"id\": 0, \"name\": \"x\"}]}]"),
	 "perfetto_manifest: trace_time: machine 'y' is not a machine declared by file 'm.pb'."},
	{PM(", \"files\": [{\"path\": \"ghost.json\", \"clocks\": {\"sync_to\": {\"file\": \"a.json\", \"clock\": "
	    "\"BOOTTIME\"}}}, {\"path\": \"a.json\"}]"),
	 "perfetto_manifest: clocks: could not resolve file 'ghost.json'. It must match the `path` of an entry in the "
	 "`files` array."},
	{PM(", \"files\": [{\"path\": \"a.json\", \"clocks\": {\"clock\": \"BOOTTIME\", \"sync_to\": {\"file\": "
	    "\"ghost.json\"}}}, {\"path\": \"ghost.json\"}]"),
	 "perfetto_manifest: clocks: could not resolve file 'ghost.json'. It must match the `path` of an entry in the "
	 "`files` array."},
};

static void test_apply_errors(void)
{
	for (size_t i = 0; i < sizeof(apply_errors) / sizeof(apply_errors[0]); i++) {
		tm_manifest *m = parse_ok(apply_errors[i].json);
		if (!m)
			TT_FAIL_("case %zu does not parse", i);
		tm_mf_plan p;
		tm_error err = {0};
		int rc = tm_manifest_apply(m, ids, NULL, &p, &err);
		tm_manifest_free(m);
		if (rc == 0) {
			tm_mf_plan_free(&p);
			TT_FAIL_("case %zu applied", i);
		}
		if (strcmp(err.msg, apply_errors[i].error) != 0)
			TT_FAIL_("case %zu: got [%s], expected [%s]", i, err.msg, apply_errors[i].error);
	}
}

/* The normalised output parses back to the same manifest. */
static void test_round_trip(void)
{
	tm_manifest *m = parse_ok(PM(", \"trace_time\": {\"clock\": \"REALTIME\", \"file\": \"a.json\"}, \"files\": "
				     "[{\"path\": \"a.json\", \"machine\": {\"name\": \"p\"}, \"clocks\": {\"clock\": "
				     "\"BOOTTIME\", \"sync_to\": {\"file\": \"b\", \"clock\": \"MONOTONIC\"}, \"offset_ns\": "
				     "-9223372036854775807}}], \"attributes\": {\"z\": 1, \"a\": \"x\"}"));
	CHECK(m);
	size_t len;
	char *s = tm_manifest_to_json(m, &len);
	tm_manifest *back = parse_ok(s);
	CHECK(back);
	size_t len2;
	char *s2 = tm_manifest_to_json(back, &len2);
	CHECK_STR(s2, s);
	CHECK(strstr(s, "-9223372036854775807") != NULL);
	CHECK_STR(back->attrs[0].key, "a");
	free(s);
	free(s2);
	tm_manifest_free(m);
	tm_manifest_free(back);
}

int main(void)
{
	TT_RUN(test_error_texts);
	TT_RUN(test_json_rules);
	TT_RUN(test_rows_and_trace_time);
	TT_RUN(test_edges);
	TT_RUN(test_apply_errors);
	TT_RUN(test_round_trip);
	TT_DONE();
}
