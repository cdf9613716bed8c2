/* tests/unit/test_manifest.c - core/manifest against spec/manifest.md:
 * every manifest-time message of §8 with its exact text, the order of §6,
 * the manifest-level conformance scenarios, the row order of machines.md
 * §3/§6 and clocks.md §5.3, the edges of clocks.md §9, the worked examples
 * of §10, the merge's lookups, and the normalised output. */
#include "tt.h"

#include <stdlib.h>

#include "manifest/manifest.h"

#define PM(body) "{\"perfetto_manifest\": {\"version\": 1" body "}}"
#define NAMED(k) (TM_MF_RAW_NAMED_BASE + (k))

/* ---- helpers ---------------------------------------------------------------- */

/* A fake archive for tm_manifest_apply: a NULL-terminated list of member
 * names; member k has trace-file id k + 1 (id 0 is the archive itself). */
static int64_t member_file_id(void *ctx, const char *path)
{
	const char *const *names = ctx;
	for (int64_t k = 0; names && names[k]; k++)
		if (strcmp(names[k], path) == 0)
			return k + 1;
	return -1;
}

static int has_member(void *ctx, const char *path)
{
	return member_file_id(ctx, path) >= 0;
}

static tm_manifest *parse_ok(const char *json)
{
	tm_manifest *m = NULL;
	tm_error err;
	if (tm_manifest_parse(json, strlen(json), &m, &err) != 0) {
		printf("# unexpected error: %s\n", err.msg);
		return NULL;
	}
	return m;
}

/* Parse and plan `json` over the archive `members`; 0 on success. */
static int plan_of(const char *json, const char *const *members, tm_manifest **m, tm_mf_plan *p, tm_error *err)
{
	*m = NULL;
	memset(p, 0, sizeof(*p));
	if (tm_manifest_parse(json, strlen(json), m, err) != 0)
		return -1;
	if (tm_manifest_check_tables(*m, has_member, (void *)members, err) != 0 ||
	    tm_manifest_apply(*m, member_file_id, (void *)members, p, err) != 0) {
		tm_manifest_free(*m);
		*m = NULL;
		return -1;
	}
	return 0;
}

static int node_is(tm_clock_node n, uint32_t clock, uint32_t file, uint32_t row)
{
	return n.clock_id == clock && n.seq_id == 0 && n.file_id == file && n.machine_row == row;
}

/* ---- §8: every manifest-time message, exact --------------------------------- */

static const struct {
	const char *json, *error;
} parse_errors[] = {
	/* §8.1 envelope and top level */
	{"{\"perfetto_manifest\": 1}", "perfetto_manifest: expected a JSON object with a top-level perfetto_manifest key"},
	{"{\"perfetto_manifestx\": {}}", "perfetto_manifest: expected a JSON object with a top-level perfetto_manifest key"},
	{"[{\"perfetto_manifest\": {\"version\": 1}}]",
	 "perfetto_manifest: expected a JSON object with a top-level perfetto_manifest key"},
	{"{\"perfetto_manifest\": {}}", "perfetto_manifest: missing required field: version"}, /* c05 */
	{"{\"perfetto_manifest\": {\"version\": \"1\"}}", "perfetto_manifest: version must be an integer"},
	{"{\"perfetto_manifest\": {\"version\": 1.0}}", "perfetto_manifest: version must be an integer"}, /* §10 C */
	{"{\"perfetto_manifest\": {\"version\": 1.5}}", "perfetto_manifest: version must be an integer"}, /* c07 */
	{"{\"perfetto_manifest\": {\"version\": 99999999999999999999}}", "perfetto_manifest: version must be an integer"},
	{"{\"perfetto_manifest\": {\"version\": 99}}", /* c06 */
	 "perfetto_manifest: unsupported version: 99. Only version 1 is supported; set \"version\": 1."},
	{"{\"perfetto_manifest\": {\"version\": 7}}", /* S20 */
	 "perfetto_manifest: unsupported version: 7. Only version 1 is supported; set \"version\": 1."},
	{"{\"perfetto_manifest\": {\"version\": -9223372036854775808}}",
	 "perfetto_manifest: unsupported version: -9223372036854775808. Only version 1 is supported; set \"version\": 1."},
	{PM(", \"files\": {}"), "perfetto_manifest: files must be an array"},
	{PM(", \"files\": [1]"), "perfetto_manifest: files entries must be objects with a string path"},
	{PM(", \"files\": [{}]"), "perfetto_manifest: files entries must be objects with a string path"},
	{PM(", \"files\": [{\"path\": 1}]"), "perfetto_manifest: files entries must be objects with a string path"},
	/* §8.1 malformed JSON: the parser's texts, no prefix */
	{"{\"perfetto_manifest\": {\"version\": 1,, }}", "Failed to parse object: Expected '\"' at the start of key. Got ','"},
	{"{\"perfetto_manifest\" {}}", "Failed to parse object: Expected ':' after key 'perfetto_manifest'. Got '{'"},
	{"{\"perfetto_manifest\": {\"version\": 1 \"x\": 2}}",
	 "Failed to parse object: Expected ',' or '}' after value for key 'version'. Got '\"'"},
	{"{\"perfetto_manifest\": {\"version\": tru}}", "Failed to parse object: Invalid token: expected 'true' but got 'tru}'"},
	{"{\"perfetto_manifest\": {\"files\": [1 2]}}", "Failed to parse array: Expected ',' or ']' after value. Got '2'"},
	{"{\"perfetto_manifest\": {\"version\": 01}}\n", "Failed to parse object: Invalid number: leading zero in '01}}\n'"},
	{"{\"perfetto_manifest\": {\"files\": [{\"path\": \"\\q\\u00zz\"}]}}",
	 "Failed to parse object: Invalid escape sequence: \\uu00z"},
	{"{\"perfetto_manifest\": {\"version\": 1}", "Failed to parse object: "},
	{"{\"perfetto_manifest\"", "Failed to parse object: "},
	{"{ ", "Failed to start parsing: "},
	{"\v{\"perfetto_manifest\": {}}", "Failed to start parsing: Expected '{' or '[' at the start. Got '\v'"},
	{"", "Empty JSON input"},
	/* §8.2 clock names and trace_time */
	{PM(", \"trace_time\": {\"clock\": 6}"), "perfetto_manifest: clock name must be a string"},
	{PM(", \"trace_time\": {\"clock\": \"BOOTIME\"}"), /* c08 */
	 "perfetto_manifest: unknown clock name: BOOTIME. Use one of REALTIME, REALTIME_COARSE, MONOTONIC, "
	 "MONOTONIC_COARSE, MONOTONIC_RAW, BOOTTIME."},
	{PM(", \"trace_time\": {\"clock\": \"TSC\"}"),
	 "perfetto_manifest: unknown clock name: TSC. Use one of REALTIME, REALTIME_COARSE, MONOTONIC, "
	 "MONOTONIC_COARSE, MONOTONIC_RAW, BOOTTIME."},
	{PM(", \"trace_time\": {\"clock\": \"BOOTTIME\\u0000x\"}"), /* exact bytes: printed up to the NUL */
	 "perfetto_manifest: unknown clock name: BOOTTIME. Use one of REALTIME, REALTIME_COARSE, MONOTONIC, "
	 "MONOTONIC_COARSE, MONOTONIC_RAW, BOOTTIME."},
	{PM(", \"trace_time\": []"), "perfetto_manifest: trace_time must be an object"},
	{PM(", \"trace_time\": {}"), "perfetto_manifest: trace_time needs a clock"},
	{PM(", \"trace_time\": {\"clock\": \"BOOTTIME\", \"file\": 1}"), "perfetto_manifest: trace_time: file must be a string"},
	{PM(", \"trace_time\": {\"clock\": \"BOOTTIME\", \"machine\": null}"),
	 "perfetto_manifest: trace_time: machine must be a string"},
	{PM(", \"files\": [{\"path\": \"a\", \"clocks\": {\"clock\": [], \"sync_to\": {\"file\": \"b\"}}}]"),
	 "perfetto_manifest: clock name must be a string"},
	{PM(", \"files\": [{\"path\": \"a\", \"clocks\": {\"sync_to\": {\"file\": \"b\", \"clock\": \"boottime\"}}}]"),
	 "perfetto_manifest: unknown clock name: boottime. Use one of REALTIME, REALTIME_COARSE, MONOTONIC, "
	 "MONOTONIC_COARSE, MONOTONIC_RAW, BOOTTIME."},
	/* §8.3 machine / machines */
	{PM(", \"files\": [{\"path\": \"app.json\", \"machine\": {\"name\": \"a\"}, \"machines\": [{\"id\": 0, \"name\": "
	    "\"b\"}]}]"), /* c25 */
	 "perfetto_manifest: machine and machines are mutually exclusive. Use `machine` for a single-machine file, or "
	 "`machines` to remap a multi-machine proto's embedded ids; not both."},
	{PM(", \"files\": [{\"path\": \"a\", \"machine\": \"x\"}]"),
	 "perfetto_manifest: machine must be an object with a string name, e.g. \"machine\": {\"name\": \"phone\"}."},
	{PM(", \"files\": [{\"path\": \"a\", \"machine\": {}}]"),
	 "perfetto_manifest: machine must be an object with a string name, e.g. \"machine\": {\"name\": \"phone\"}."},
	{PM(", \"files\": [{\"path\": \"app.json\", \"machine\": {\"name\": \"\"}}]"), /* c24 */
	 "perfetto_manifest: machine: name must be non-empty"},
	{PM(", \"files\": [{\"path\": \"a\", \"machines\": {}}]"), "perfetto_manifest: machines must be an array"},
	{PM(", \"files\": [{\"path\": \"a\", \"machines\": [{\"id\": \"7\", \"name\": \"x\"}]}]"),
	 "perfetto_manifest: machines entries need an integer id and a string name, e.g. \"machines\": [{\"id\": 0, "
	 "\"name\": \"phone\"}]."},
	{PM(", \"files\": [{\"path\": \"a\", \"machines\": [{\"id\": 7}]}]"),
	 "perfetto_manifest: machines entries need an integer id and a string name, e.g. \"machines\": [{\"id\": 0, "
	 "\"name\": \"phone\"}]."},
	{PM(", \"files\": [{\"path\": \"a\", \"machines\": [7]}]"),
	 "perfetto_manifest: machines entries need an integer id and a string name, e.g. \"machines\": [{\"id\": 0, "
	 "\"name\": \"phone\"}]."},
	{PM(", \"files\": [{\"path\": \"app.json\", \"machines\": [{\"id\": 4294967296, \"name\": \"vm\"}]}]"), /* c22 */
	 "perfetto_manifest: machines: id must be in [0, 4294967295]"},
	{PM(", \"files\": [{\"path\": \"a\", \"machines\": [{\"id\": -1, \"name\": \"x\"}]}]"),
	 "perfetto_manifest: machines: id must be in [0, 4294967295]"},
	{PM(", \"files\": [{\"path\": \"a\", \"machines\": [{\"id\": 1e30, \"name\": \"x\"}]}]"),
	 "perfetto_manifest: machines: id must be in [0, 4294967295]"},
	{PM(", \"files\": [{\"path\": \"a\", \"machines\": [{\"id\": 1, \"name\": \"\"}]}]"),
	 "perfetto_manifest: machines: name must be non-empty"},
	/* §8.4 clocks, parse time */
	{PM(", \"files\": [{\"path\": \"a\", \"clocks\": 1}]"), "perfetto_manifest: clocks must be an object"},
	{PM(", \"files\": [{\"path\": \"a\", \"clocks\": {\"machine\": 1}}]"), "perfetto_manifest: clocks: machine must be a string"},
	{PM(", \"files\": [{\"path\": \"a\", \"clocks\": {}}]"),
	 "perfetto_manifest: clocks: a sync_to block is required. Manual clock handling relates this file to a clock in "
	 "another trace, e.g. \"sync_to\": {\"file\": \"other.pb\"}."},
	{PM(", \"files\": [{\"path\": \"a\", \"clocks\": {\"sync_to\": \"b\"}}]"), "perfetto_manifest: clocks: sync_to must be an object"},
	{PM(", \"files\": [{\"path\": \"a.pb\", \"machine\": {\"name\": \"phone\"}, \"clocks\": {\"clock\": \"BOOTTIME\", "
	    "\"offset_ns\": 1, \"sync_to\": {\"machine\": \"phone\", \"clock\": \"BOOTTIME\"}}}]"), /* c45 */
	 "perfetto_manifest: clocks: sync_to.file is required and must be a string"},
	{PM(", \"files\": [{\"path\": \"a\", \"clocks\": {\"sync_to\": {\"file\": 3}}}]"),
	 "perfetto_manifest: clocks: sync_to.file is required and must be a string"},
	{PM(", \"files\": [{\"path\": \"a\", \"clocks\": {\"sync_to\": {\"file\": \"b\", \"machine\": 2}}}]"),
	 "perfetto_manifest: clocks: sync_to.machine must be a string"},
	{PM(", \"files\": [{\"path\": \"a\", \"clocks\": {\"sync_to\": {\"file\": \"b\"}, \"offset_ns\": 1.5}}]"),
	 "perfetto_manifest: clocks: offset_ns must be an integer"},
	{PM(", \"files\": [{\"path\": \"a\", \"clocks\": {\"sync_to\": {\"file\": \"b\"}, \"offset_ns\": \"5\"}}]"),
	 "perfetto_manifest: clocks: offset_ns must be an integer"},
	{PM(", \"files\": [{\"path\": \"a\", \"clocks\": {\"sync_to\": {\"file\": \"b\"}, \"offset_ns\": "
	    "-9223372036854775808}}]"), /* S10 */
	 "perfetto_manifest: clocks: offset_ns is out of range"},
	/* §8.5 attributes */
	{PM(", \"attributes\": []"),
	 "perfetto_manifest: attributes must be an object of string or integer values, e.g. \"attributes\": "
	 "{\"benchmark\": \"startup\"}."},
	{PM(", \"attributes\": {\"\": 1}"), "perfetto_manifest: attributes: keys must be non-empty"},
	{PM(", \"attributes\": {\"flags\": [\"a\", \"b\"]}"), /* c53 */
	 "perfetto_manifest: attributes: 'flags' must be a string or an integer"},
	{PM(", \"attributes\": {\"k\": 1.5}"), "perfetto_manifest: attributes: 'k' must be a string or an integer"},
	{PM(", \"attributes\": {\"k\": true}"), "perfetto_manifest: attributes: 'k' must be a string or an integer"},
	{PM(", \"attributes\": {\"k\": null}"), "perfetto_manifest: attributes: 'k' must be a string or an integer"},
	{PM(", \"attributes\": {\"k\": {}}"), "perfetto_manifest: attributes: 'k' must be a string or an integer"},
	{PM(", \"attributes\": {\"k\": 1, \"k\": 1e3}"), /* the last duplicate is the value checked */
	 "perfetto_manifest: attributes: 'k' must be a string or an integer"},
	/* §8.6 __exported_table_schema */
	{PM(", \"files\": [{\"path\": \"t\", \"__exported_table_schema\": {}, \"machine\": {\"name\": \"x\"}}]"),
	 "perfetto_manifest: 't': an exported table is not a trace, so __exported_table_schema cannot be combined with "
	 "clocks/machine/machines"},
	{PM(", \"files\": [{\"path\": \"t\", \"__exported_table_schema\": 1, \"clocks\": 1}]"),
	 "perfetto_manifest: 't': an exported table is not a trace, so __exported_table_schema cannot be combined with "
	 "clocks/machine/machines"},
	{PM(", \"files\": [{\"path\": \"t\", \"__exported_table_schema\": {\"format\": 1}}]"),
	 "perfetto_manifest: __exported_table_schema needs an integer format, a string name, an integer row_count and a "
	 "columns array"},
	{PM(", \"files\": [{\"path\": \"t\", \"__exported_table_schema\": {\"format\": 1.0, \"name\": \"n\", "
	    "\"row_count\": 1, \"columns\": []}}]"),
	 "perfetto_manifest: __exported_table_schema needs an integer format, a string name, an integer row_count and a "
	 "columns array"},
	{PM(", \"files\": [{\"path\": \"t\", \"__exported_table_schema\": {\"format\": 1, \"name\": \"n\", \"row_count\": "
	    "-1, \"columns\": []}}]"),
	 "perfetto_manifest: table 'n': invalid row_count"},
	{PM(", \"files\": [{\"path\": \"t\", \"__exported_table_schema\": {\"format\": 1, \"name\": \"n\", \"row_count\": "
	    "4294967296, \"columns\": []}}]"),
	 "perfetto_manifest: table 'n': invalid row_count"},
	{PM(", \"files\": [{\"path\": \"t\", \"__exported_table_schema\": {\"format\": 1, \"name\": \"n\", \"row_count\": "
	    "1, \"columns\": [{\"name\": \"c\"}]}}]"),
	 "perfetto_manifest: table 'n': malformed column entry"},
};

static void test_parse_error_texts(void)
{
	for (size_t i = 0; i < sizeof(parse_errors) / sizeof(parse_errors[0]); i++) {
		tm_manifest *m = NULL;
		tm_error err;
		tm_err_clear(&err);
		if (tm_manifest_parse(parse_errors[i].json, strlen(parse_errors[i].json), &m, &err) == 0) {
			tm_manifest_free(m);
			TT_FAIL_("%s: parsed, expected [%s]", parse_errors[i].json, parse_errors[i].error);
		}
		CHECK(m == NULL);
		if (strcmp(err.msg, parse_errors[i].error) != 0 || err.code != TM_EINPUT)
			TT_FAIL_("%s: [%s], expected [%s]", parse_errors[i].json, err.msg, parse_errors[i].error);
	}
}

/* §6: two faults in one manifest; the earlier check wins. */
static const struct {
	const char *json, *error;
} order_cases[] = {
	/* step 1 before JSON content checks of step 2 */
	{"{\"perfetto_manifest\": [], \"version\": 2}",
	 "perfetto_manifest: expected a JSON object with a top-level perfetto_manifest key"},
	/* version before trace_time and files */
	{"{\"perfetto_manifest\": {\"trace_time\": 1, \"files\": 1, \"version\": 3}}",
	 "perfetto_manifest: unsupported version: 3. Only version 1 is supported; set \"version\": 1."},
	/* the last duplicate key is the one checked */
	{"{\"perfetto_manifest\": {\"version\": 1, \"version\": 2}}",
	 "perfetto_manifest: unsupported version: 2. Only version 1 is supported; set \"version\": 1."},
	/* trace_time before files, whatever the key order */
	{PM(", \"files\": 1, \"trace_time\": 2"), "perfetto_manifest: trace_time must be an object"},
	/* trace_time: clock before file before machine */
	{PM(", \"trace_time\": {\"machine\": 1, \"file\": 1, \"clock\": \"X\"}"),
	 "perfetto_manifest: unknown clock name: X. Use one of REALTIME, REALTIME_COARSE, MONOTONIC, MONOTONIC_COARSE, "
	 "MONOTONIC_RAW, BOOTTIME."},
	{PM(", \"trace_time\": {\"machine\": 1, \"file\": 1, \"clock\": \"BOOTTIME\"}"),
	 "perfetto_manifest: trace_time: file must be a string"},
	/* files before attributes; entries in array order */
	{PM(", \"attributes\": 1, \"files\": [{\"path\": \"a\", \"machine\": {\"name\": \"\"}}]"),
	 "perfetto_manifest: machine: name must be non-empty"},
	{PM(", \"files\": [{\"path\": \"a\", \"machines\": 1}, {\"path\": 2}]"), "perfetto_manifest: machines must be an array"},
	/* within an entry: path, table, clocks, exclusivity, machine, machines */
	{PM(", \"files\": [{\"__exported_table_schema\": {}, \"clocks\": 1}]"),
	 "perfetto_manifest: files entries must be objects with a string path"},
	{PM(", \"files\": [{\"path\": \"t\", \"__exported_table_schema\": {}, \"attributes\": 1}], \"attributes\": 1"),
	 "perfetto_manifest: __exported_table_schema needs an integer format, a string name, an integer row_count and a "
	 "columns array"},
	{PM(", \"files\": [{\"path\": \"a\", \"machine\": {\"name\": \"\"}, \"machines\": 1, \"clocks\": 1}]"),
	 "perfetto_manifest: clocks must be an object"},
	{PM(", \"files\": [{\"path\": \"a\", \"machine\": \"x\", \"machines\": 1}]"),
	 "perfetto_manifest: machine and machines are mutually exclusive. Use `machine` for a single-machine file, or "
	 "`machines` to remap a multi-machine proto's embedded ids; not both."},
	/* clocks: machine, clock, sync_to, sync_to.file, .machine, .clock, offset */
	{PM(", \"files\": [{\"path\": \"a\", \"clocks\": {\"machine\": 1, \"clock\": \"X\"}}]"),
	 "perfetto_manifest: clocks: machine must be a string"},
	{PM(", \"files\": [{\"path\": \"a\", \"clocks\": {\"clock\": \"X\"}}]"),
	 "perfetto_manifest: unknown clock name: X. Use one of REALTIME, REALTIME_COARSE, MONOTONIC, MONOTONIC_COARSE, "
	 "MONOTONIC_RAW, BOOTTIME."},
	{PM(", \"files\": [{\"path\": \"a\", \"clocks\": {\"offset_ns\": 1.5, \"sync_to\": {\"clock\": \"X\", \"machine\": 1}}}]"),
	 "perfetto_manifest: clocks: sync_to.file is required and must be a string"},
	{PM(", \"files\": [{\"path\": \"a\", \"clocks\": {\"offset_ns\": 1.5, \"sync_to\": {\"file\": \"b\", \"clock\": "
	    "\"X\", \"machine\": 1}}}]"),
	 "perfetto_manifest: clocks: sync_to.machine must be a string"},
	{PM(", \"files\": [{\"path\": \"a\", \"clocks\": {\"offset_ns\": 1.5, \"sync_to\": {\"file\": \"b\", \"clock\": "
	    "\"X\"}}}]"),
	 "perfetto_manifest: unknown clock name: X. Use one of REALTIME, REALTIME_COARSE, MONOTONIC, MONOTONIC_COARSE, "
	 "MONOTONIC_RAW, BOOTTIME."},
	/* machines items: shape, then id range, then name */
	{PM(", \"files\": [{\"path\": \"a\", \"machines\": [{\"id\": -1, \"name\": \"\"}]}]"),
	 "perfetto_manifest: machines: id must be in [0, 4294967295]"},
	{PM(", \"files\": [{\"path\": \"a\", \"machines\": [{\"id\": 1, \"name\": \"\"}, {\"id\": -1, \"name\": \"x\"}]}]"),
	 "perfetto_manifest: machines: name must be non-empty"},
	/* attributes: in sorted key order, the empty key sorts first */
	{PM(", \"attributes\": {\"b\": 1.5, \"a\": null}"), "perfetto_manifest: attributes: 'a' must be a string or an integer"},
	{PM(", \"attributes\": {\"b\": [], \"\": 1}"), "perfetto_manifest: attributes: keys must be non-empty"},
	{PM(", \"attributes\": {\"B\": 1, \"a\": [], \"A\": {}}"),
	 "perfetto_manifest: attributes: 'A' must be a string or an integer"},
};

static void test_validation_order(void)
{
	for (size_t i = 0; i < sizeof(order_cases) / sizeof(order_cases[0]); i++) {
		tm_manifest *m = NULL;
		tm_error err;
		if (tm_manifest_parse(order_cases[i].json, strlen(order_cases[i].json), &m, &err) == 0) {
			tm_manifest_free(m);
			TT_FAIL_("%s: parsed", order_cases[i].json);
		}
		if (strcmp(err.msg, order_cases[i].error) != 0)
			TT_FAIL_("%s: [%s], expected [%s]", order_cases[i].json, err.msg, order_cases[i].error);
	}
}

/* §6 steps 6-7: errors after parsing, over a fake archive. */
static const char *const ARCHIVE[] = {"meta.json", "a.json", "b.json", "a.pb", "b.pb", "multi.pb", "server.pb", NULL};

static const struct {
	const char *json, *error;
} apply_errors[] = {
	/* §8.6: table member missing */
	{PM(", \"files\": [{\"path\": \"t.arrow\", \"__exported_table_schema\": {\"format\": 1, \"name\": \"n\", "
	    "\"row_count\": 0, \"columns\": []}}]"),
	 "perfetto_manifest: table member 't.arrow' is declared but not present in the archive"},
	/* §8.2 trace_time resolution (§10 C, c37) */
	{PM(", \"trace_time\": {\"clock\": \"BOOTTIME\", \"machine\": \"vm\"}"),
	 "perfetto_manifest: trace_time: machine 'vm' needs trace_time: file too: a machine name alone is ambiguous "
	 "because embedded machine ids are scoped to their trace."},
	{PM(", \"trace_time\": {\"file\": \"ghost.pb\", \"clock\": \"BOOTTIME\"}, \"files\": [{\"path\": \"a.json\"}]"),
	 "perfetto_manifest: trace_time: file names unknown file 'ghost.pb'. It must match the `path` of an entry in the "
	 "`files` array."},
	{PM(", \"trace_time\": {\"clock\": \"BOOTTIME\", \"file\": \"m.pb\"}, \"files\": [{\"path\": \"m.pb\", "
	    "\"machines\": [{\"id\": 0, \"name\": \"x\"}]}]"),
	 "perfetto_manifest: trace_time: file 'm.pb' is a multi-machine trace; also name the machine with trace_time: "
	 "machine."},
	{PM(", \"trace_time\": {\"clock\": \"BOOTTIME\", \"file\": \"m.pb\", \"machine\": \"y\"}, \"files\": [{\"path\": "
	    "\"m.pb\", \"machines\": [{\"id\": 0, \"name\": \"x\"}]}, {\"path\": \"y.json\", \"machine\": {\"name\": \"y\"}}]"),
	 "perfetto_manifest: trace_time: machine 'y' is not a machine declared by file 'm.pb'."},
	/* §8.4 clocks resolution: c35, c44, c46, c51, c54, S16 */
	{PM(", \"files\": [{\"path\": \"a.pb\", \"machine\": {\"name\": \"phone\"}, \"clocks\": {\"clock\": \"BOOTTIME\", "
	    "\"offset_ns\": 1, \"sync_to\": {\"file\": \"ghost.pb\", \"clock\": \"BOOTTIME\"}}}]"),
	 "perfetto_manifest: clocks: sync_to.file names unknown file 'ghost.pb'. It must match the `path` of an entry in "
	 "the `files` array."},
	{PM(", \"files\": [{\"path\": \"multi.pb\", \"machines\": [{\"id\": 0, \"name\": \"phone\"}, {\"id\": 7, \"name\": "
	    "\"vm\"}]}, {\"path\": \"server.pb\", \"machine\": {\"name\": \"server\"}, \"clocks\": {\"clock\": "
	    "\"BOOTTIME\", \"offset_ns\": 500, \"sync_to\": {\"file\": \"multi.pb\", \"clock\": \"BOOTTIME\"}}}]"),
	 "perfetto_manifest: clocks: sync_to.file 'multi.pb' is a multi-machine trace; also name the machine with "
	 "clocks: sync_to.machine."},
	{PM(", \"files\": [{\"path\": \"multi.pb\", \"machines\": [{\"id\": 0, \"name\": \"phone\"}, {\"id\": 7, \"name\": "
	    "\"vm\"}]}, {\"path\": \"server.pb\", \"machine\": {\"name\": \"server\"}, \"clocks\": {\"clock\": "
	    "\"BOOTTIME\", \"offset_ns\": 500, \"sync_to\": {\"file\": \"multi.pb\", \"machine\": \"ghost\", \"clock\": "
	    "\"BOOTTIME\"}}}]"),
	 "perfetto_manifest: clocks: sync_to.machine 'ghost' is not a machine declared by file 'multi.pb'."},
	{PM(", \"files\": [{\"path\": \"multi.pb\", \"machines\": [{\"id\": 0, \"name\": \"phone\"}, {\"id\": 7, \"name\": "
	    "\"vm\"}], \"clocks\": {\"clock\": \"BOOTTIME\", \"sync_to\": {\"file\": \"server.pb\", \"clock\": "
	    "\"BOOTTIME\"}}}, {\"path\": \"server.pb\", \"machine\": {\"name\": \"server\"}}]"),
	 "perfetto_manifest: clocks: file 'multi.pb' is a multi-machine trace; name which machine the clock is on with "
	 "clocks: machine."},
	{PM(", \"files\": [{\"path\": \"a.pb\", \"machine\": {\"name\": \"phone\"}, \"clocks\": {\"machine\": \"ghost\", "
	    "\"clock\": \"BOOTTIME\", \"sync_to\": {\"file\": \"b.pb\", \"clock\": \"BOOTTIME\"}}}, {\"path\": \"b.pb\", "
	    "\"machine\": {\"name\": \"srv\"}}]"),
	 "perfetto_manifest: clocks: machine 'ghost' is not a machine declared by file 'a.pb'."},
	{PM(", \"files\": [{\"path\": \"ghost.json\", \"clocks\": {\"sync_to\": {\"file\": \"a.json\", \"clock\": "
	    "\"BOOTTIME\"}}}, {\"path\": \"a.json\"}]"),
	 "perfetto_manifest: clocks: could not resolve file 'ghost.json'. It must match the `path` of an entry in the "
	 "`files` array."},
	{PM(", \"files\": [{\"path\": \"a.json\", \"clocks\": {\"clock\": \"BOOTTIME\", \"sync_to\": {\"file\": "
	    "\"ghost.json\"}}}, {\"path\": \"ghost.json\"}]"),
	 "perfetto_manifest: clocks: could not resolve file 'ghost.json'. It must match the `path` of an entry in the "
	 "`files` array."},
	/* a path holding a NUL names no member */
	{PM(", \"files\": [{\"path\": \"a.json\\u0000\", \"clocks\": {\"sync_to\": {\"file\": \"b.json\", \"clock\": "
	    "\"BOOTTIME\"}}}, {\"path\": \"b.json\"}]"),
	 "perfetto_manifest: clocks: could not resolve file 'a.json'. It must match the `path` of an entry in the "
	 "`files` array."},
	/* §6 step 7 order: trace_time before clocks */
	{PM(", \"trace_time\": {\"clock\": \"BOOTTIME\", \"file\": \"x\"}, \"files\": [{\"path\": \"a.json\", \"clocks\": "
	    "{\"sync_to\": {\"file\": \"y\"}}}]"),
	 "perfetto_manifest: trace_time: file names unknown file 'x'. It must match the `path` of an entry in the `files` "
	 "array."},
	/* clocks blocks in files order */
	{PM(", \"files\": [{\"path\": \"a.json\", \"clocks\": {\"sync_to\": {\"file\": \"y\"}}}, {\"path\": \"b.json\", "
	    "\"clocks\": {\"sync_to\": {\"file\": \"x\"}}}]"),
	 "perfetto_manifest: clocks: sync_to.file names unknown file 'y'. It must match the `path` of an entry in the "
	 "`files` array."},
	/* source machine before reference */
	{PM(", \"files\": [{\"path\": \"a.json\", \"clocks\": {\"machine\": \"m\", \"sync_to\": {\"file\": \"y\"}}}]"),
	 "perfetto_manifest: clocks: machine 'm' is not a machine declared by file 'a.json'."},
	/* reference before the PIN source's member */
	{PM(", \"files\": [{\"path\": \"ghost.json\", \"clocks\": {\"sync_to\": {\"file\": \"y\"}}}]"),
	 "perfetto_manifest: clocks: sync_to.file names unknown file 'y'. It must match the `path` of an entry in the "
	 "`files` array."},
	/* PIN source member before the clock-less reference member */
	{PM(", \"files\": [{\"path\": \"ghost1.json\", \"clocks\": {\"sync_to\": {\"file\": \"ghost2.json\"}}}, "
	    "{\"path\": \"ghost2.json\"}]"),
	 "perfetto_manifest: clocks: could not resolve file 'ghost1.json'. It must match the `path` of an entry in the "
	 "`files` array."},
	/* tables (step 6) before application (step 7) */
	{PM(", \"trace_time\": {\"clock\": \"BOOTTIME\", \"machine\": \"vm\"}, \"files\": [{\"path\": \"t\", "
	    "\"__exported_table_schema\": {\"format\": 1, \"name\": \"n\", \"row_count\": 0, \"columns\": []}}]"),
	 "perfetto_manifest: table member 't' is declared but not present in the archive"},
};

static void test_apply_error_texts(void)
{
	for (size_t i = 0; i < sizeof(apply_errors) / sizeof(apply_errors[0]); i++) {
		tm_manifest *m;
		tm_mf_plan p;
		tm_error err;
		tm_err_clear(&err);
		if (plan_of(apply_errors[i].json, ARCHIVE, &m, &p, &err) == 0) {
			tm_mf_plan_free(&p);
			tm_manifest_free(m);
			TT_FAIL_("%s: applied", apply_errors[i].json);
		}
		CHECK(p.rows == NULL && p.edges == NULL && p.n_rows == 0);
		if (strcmp(err.msg, apply_errors[i].error) != 0 || err.code != TM_EINPUT)
			TT_FAIL_("%s: [%s], expected [%s]", apply_errors[i].json, err.msg, apply_errors[i].error);
	}
}

/* ---- conformance scenarios and worked examples ------------------------------ */

/* c01/c02: a path-only entry is a valid no-op. */
static void test_path_only_entry(void)
{
	tm_manifest *m;
	tm_mf_plan p;
	tm_error err;
	CHECK(plan_of(PM(", \"files\": [{\"path\": \"app.json\"}]"), ARCHIVE, &m, &p, &err) == 0);
	CHECK_INT(p.n_rows, 0);
	CHECK_INT(p.n_edges, 0);
	CHECK_INT(p.has_trace_time, 0);
	CHECK_INT(tm_manifest_find_entry(m, "app.json"), 0);
	CHECK_INT(tm_manifest_entry_base_raw_id(m, 0), 0);
	CHECK(tm_manifest_entry_base_name(m, 0) == NULL);
	CHECK_INT(tm_manifest_entry_forbids_container(m, 0), 0);
	CHECK_INT(tm_manifest_trace_time_clock(m), 0);
	tm_mf_plan_free(&p);
	tm_manifest_free(m);
}

/* c03, c04, c09: the manifest claims trace time on row 0. */
static void test_trace_time_claim(void)
{
	static const struct {
		const char *clock;
		uint32_t id;
	} table[] = {{"REALTIME", 1}, {"REALTIME_COARSE", 2}, {"MONOTONIC", 3}, {"MONOTONIC_COARSE", 4},
		     {"MONOTONIC_RAW", 5}, {"BOOTTIME", 6}};
	for (size_t k = 0; k < sizeof(table) / sizeof(table[0]); k++) {
		char json[128];
		snprintf(json, sizeof json, PM(", \"trace_time\": {\"clock\": \"%s\"}"), table[k].clock);
		tm_manifest *m;
		tm_mf_plan p;
		tm_error err;
		CHECK(plan_of(json, ARCHIVE, &m, &p, &err) == 0);
		CHECK_INT(tm_manifest_trace_time_clock(m), table[k].id);
		CHECK_INT(p.has_trace_time, 1);
		CHECK(node_is(p.trace_time, table[k].id, 0, 0));
		CHECK_INT(p.n_rows, 0);
		tm_mf_plan_free(&p);
		tm_manifest_free(m);
	}
	CHECK_INT(tm_manifest_trace_time_clock(NULL), 0);
}

/* clocks.md §5.3 (verified): no file -> row 0, the first named machine. */
static void test_trace_time_row0_is_first_named(void)
{
	tm_manifest *m;
	tm_mf_plan p;
	tm_error err;
	CHECK(plan_of(PM(", \"trace_time\": {\"clock\": \"BOOTTIME\"}, \"files\": [{\"path\": \"z.pb\", \"machine\": "
			 "{\"name\": \"phone\"}}, {\"path\": \"a.pb\", \"machine\": {\"name\": \"server\"}}]"),
		      ARCHIVE, &m, &p, &err) == 0);
	CHECK(node_is(p.trace_time, 6, 0, 0));
	CHECK_INT(p.n_rows, 2);
	CHECK_STR(p.rows[0].name, "phone");
	CHECK_INT(p.rows[0].raw_id, NAMED(0));
	tm_mf_plan_free(&p);
	tm_manifest_free(m);
}

/* clocks.md §5.3, machines.md §3 step 2: trace_time on a file without a
 * machine creates the host row after the named ones. */
static void test_trace_time_file_creates_host_row(void)
{
	tm_manifest *m;
	tm_mf_plan p;
	tm_error err;
	CHECK(plan_of(PM(", \"trace_time\": {\"clock\": \"REALTIME\", \"file\": \"a.json\"}, \"files\": [{\"path\": "
			 "\"a.json\"}, {\"path\": \"b.json\", \"machine\": {\"name\": \"x\"}}]"),
		      ARCHIVE, &m, &p, &err) == 0);
	CHECK_INT(p.n_rows, 2);
	CHECK_INT(p.rows[0].raw_id, NAMED(0));
	CHECK_INT(p.rows[1].raw_id, 0);
	CHECK(p.rows[1].name == NULL);
	CHECK(node_is(p.trace_time, 1, 0, 1));
	tm_mf_plan_free(&p);
	tm_manifest_free(m);
}

/* machines.md §6 (verified): machines items allocate in array order. */
static void test_row_order_machines_array(void)
{
	tm_manifest *m;
	tm_mf_plan p;
	tm_error err;
	CHECK(plan_of(PM(", \"files\": [{\"path\": \"a.json\", \"machine\": {\"name\": \"phone\"}}, {\"path\": \"p.pb\", "
			 "\"machines\": [{\"id\": 7, \"name\": \"vm\"}, {\"id\": 0, \"name\": \"host0\"}]}]"),
		      ARCHIVE, &m, &p, &err) == 0);
	CHECK_INT(p.n_rows, 3);
	CHECK_STR(p.rows[0].name, "phone");
	CHECK_INT(p.rows[0].raw_id, NAMED(0));
	CHECK_STR(p.rows[1].name, "vm");
	CHECK_INT(p.rows[1].raw_id, NAMED(1));
	CHECK_STR(p.rows[2].name, "host0");
	CHECK_INT(p.rows[2].raw_id, NAMED(2));
	CHECK_INT(tm_manifest_entry_is_multi(m, 1), 1);
	CHECK_STR(tm_manifest_entry_base_name(m, 1), "host0");
	CHECK_INT(tm_manifest_entry_base_raw_id(m, 1), NAMED(2));
	CHECK_INT(tm_manifest_entry_remap(m, 1, 7), NAMED(1));
	CHECK_INT(tm_manifest_entry_remap(m, 1, 8), -1);
	CHECK_INT(tm_manifest_name_raw_id(m, "vm"), NAMED(1));
	CHECK_INT(tm_manifest_name_raw_id(m, "ghost"), -1);
	tm_mf_plan_free(&p);
	tm_manifest_free(m);
}

/* c16, c17, c20, c21, c42, c43: one namespace for names. */
static void test_machine_names(void)
{
	tm_manifest *m = parse_ok(PM(", \"files\": [{\"path\": \"app.json\", \"machine\": {\"name\": \"vm\"}}, "
				     "{\"path\": \"spine.pb\", \"machines\": [{\"id\": 7, \"name\": \"vm\"}]}]"));
	CHECK(m);
	CHECK_INT(m->n_names, 1); /* c16: one machine */
	CHECK_INT(tm_manifest_entry_base_raw_id(m, 0), NAMED(0));
	CHECK_INT(tm_manifest_entry_remap(m, 1, 7), NAMED(0));
	CHECK_INT(tm_manifest_entry_base_raw_id(m, 1), 0); /* no id-0 item: the host */
	CHECK_INT(tm_manifest_entry_is_multi(m, 1), 1);
	tm_manifest_free(m);

	m = parse_ok(PM(", \"files\": [{\"path\": \"host.json\", \"machine\": {\"name\": \"host\"}}, {\"path\": "
			"\"vm.json\", \"machine\": {\"name\": \"vm\"}}, {\"path\": \"spine.pb\", \"machines\": [{\"id\": 0, "
			"\"name\": \"host\"}, {\"id\": 7, \"name\": \"vm\"}]}]"));
	CHECK(m); /* c17 */
	CHECK_INT(m->n_names, 2);
	CHECK_INT(tm_manifest_entry_base_raw_id(m, 2), NAMED(0));
	CHECK_INT(tm_manifest_entry_remap(m, 2, 7), NAMED(1));
	tm_manifest_free(m);

	m = parse_ok(PM(", \"files\": [{\"path\": \"a.json\", \"machine\": {\"name\": \"phone\"}}, {\"path\": \"b.json\", "
			"\"machine\": {\"name\": \"phone\"}}, {\"path\": \"c.json\", \"machine\": {\"name\": \"watch\"}}]"));
	CHECK(m); /* c20 */
	CHECK_INT(m->n_names, 2);
	CHECK_INT(tm_manifest_entry_base_raw_id(m, 0), tm_manifest_entry_base_raw_id(m, 1));
	CHECK(tm_manifest_entry_base_raw_id(m, 2) != tm_manifest_entry_base_raw_id(m, 0));
	tm_manifest_free(m);

	m = parse_ok(PM(", \"files\": [{\"path\": \"p.pb\", \"machines\": [{\"id\": 0, \"name\": \"pa\"}, {\"id\": 7, "
			"\"name\": \"pb\"}]}, {\"path\": \"q.pb\", \"machines\": [{\"id\": 0, \"name\": \"qa\"}, {\"id\": "
			"7, \"name\": \"qb\"}]}, {\"path\": \"r.pb\", \"machines\": [{\"id\": 7, \"name\": \"pb\"}]}]"));
	CHECK(m); /* c42: ids scoped per file; c43: a shared name is one machine */
	CHECK(tm_manifest_entry_remap(m, 0, 7) != tm_manifest_entry_remap(m, 1, 7));
	CHECK_INT(tm_manifest_entry_remap(m, 2, 7), tm_manifest_entry_remap(m, 0, 7));
	tm_manifest_free(m);

	tm_mf_plan p;
	tm_error err;
	CHECK(plan_of(PM(", \"files\": [{\"path\": \"host.json\"}, {\"path\": \"vm.json\", \"machine\": {\"name\": "
			 "\"vm\"}}]"),
		      ARCHIVE, &m, &p, &err) == 0);
	/* c21: the manifest creates only vm's row (row 0); the host comes later */
	CHECK_INT(p.n_rows, 1);
	CHECK_STR(p.rows[0].name, "vm");
	tm_mf_plan_free(&p);
	tm_manifest_free(m);
}

/* The reference assigns the base machine per id-0 item (the last stays)
 * and keeps the first remap of an id. */
static void test_duplicate_machine_ids(void)
{
	tm_manifest *m = parse_ok(PM(", \"files\": [{\"path\": \"p.pb\", \"machines\": [{\"id\": 0, \"name\": \"a\"}, "
				     "{\"id\": 7, \"name\": \"b\"}, {\"id\": 0, \"name\": \"c\"}, {\"id\": 7, \"name\": "
				     "\"d\"}]}]"));
	CHECK(m);
	CHECK_INT(m->n_names, 4);
	CHECK_STR(tm_manifest_entry_base_name(m, 0), "c");
	CHECK_INT(tm_manifest_entry_base_raw_id(m, 0), NAMED(2));
	CHECK_INT(tm_manifest_entry_remap(m, 0, 7), NAMED(1));
	tm_manifest_free(m);
}

/* S9: a double id is truncated toward zero. */
static void test_double_machine_id(void)
{
	tm_manifest *m = parse_ok(PM(", \"files\": [{\"path\": \"p.pb\", \"machines\": [{\"id\": 7.9, \"name\": \"x\"}, "
				     "{\"id\": -0.5, \"name\": \"y\"}, {\"id\": 4294967295.5, \"name\": \"z\"}]}]"));
	CHECK(m);
	CHECK_INT(m->files[0].machines[0].id, 7);
	CHECK_INT(m->files[0].machines[1].id, 0);
	CHECK_INT(m->files[0].machines[2].id, 4294967295u);
	CHECK_INT(tm_manifest_entry_remap(m, 0, 7), NAMED(0));
	tm_manifest_free(m);
}

/* S19: two entries for one path: the first wins, the second's machine
 * still gets a row. */
static void test_same_path_twice(void)
{
	tm_manifest *m;
	tm_mf_plan p;
	tm_error err;
	CHECK(plan_of(PM(", \"files\": [{\"path\": \"a.json\", \"machine\": {\"name\": \"p\"}}, {\"path\": \"a.json\", "
			 "\"machine\": {\"name\": \"q\"}}]"),
		      ARCHIVE, &m, &p, &err) == 0);
	CHECK_INT(tm_manifest_find_entry(m, "a.json"), 0);
	CHECK_STR(tm_manifest_entry_base_name(m, (size_t)tm_manifest_find_entry(m, "a.json")), "p");
	CHECK_INT(p.n_rows, 2);
	CHECK_STR(p.rows[1].name, "q");
	CHECK_INT(tm_manifest_find_entry(m, "./a.json"), -1); /* §3.4: no normalisation */
	CHECK_INT(tm_manifest_find_entry(NULL, "a.json"), -1);
	tm_mf_plan_free(&p);
	tm_manifest_free(m);
}

/* §3.3 step 2, c13, S17: which entries may not sit on a container. */
static void test_container_overrides(void)
{
	tm_manifest *m = parse_ok(PM(", \"files\": [{\"path\": \"meta2.json\", \"clocks\": {\"sync_to\": {\"file\": "
				     "\"app.json\", \"clock\": \"BOOTTIME\"}}}, {\"path\": \"a.json.gz\", \"machine\": "
				     "{\"name\": \"m\"}}, {\"path\": \"b.json.gz\", \"machines\": [{\"id\": 1, \"name\": "
				     "\"x\"}]}, {\"path\": \"c.json.gz\", \"machines\": [{\"id\": 0, \"name\": \"y\"}]}, "
				     "{\"path\": \"d.zip\", \"machines\": []}]"));
	CHECK(m);
	CHECK_INT(tm_manifest_entry_forbids_container(m, 0), 1);
	CHECK_INT(tm_manifest_entry_forbids_container(m, 1), 1);
	CHECK_INT(tm_manifest_entry_forbids_container(m, 2), 0);
	CHECK_INT(tm_manifest_entry_forbids_container(m, 3), 1);
	CHECK_INT(tm_manifest_entry_forbids_container(m, 4), 0);
	CHECK_INT(tm_manifest_entry_is_multi(m, 4), 0); /* an empty machines array is not multi */
	tm_manifest_free(m);
}

/* c33, c34, c36: RELATE edges, reference = source + offset. */
static void test_relate_edges(void)
{
	static const char *const variants[] = {
		PM(", \"files\": [{\"path\": \"phone.pb\", \"machine\": {\"name\": \"phone\"}}, {\"path\": \"server.pb\", "
		   "\"machine\": {\"name\": \"server\"}, \"clocks\": {\"clock\": \"BOOTTIME\", \"offset_ns\": 500, "
		   "\"sync_to\": {\"file\": \"phone.pb\", \"clock\": \"BOOTTIME\"}}}]"),
		PM(", \"files\": [{\"path\": \"phone.pb\", \"machine\": {\"name\": \"phone\"}}, {\"path\": \"server.pb\", "
		   "\"machine\": {\"name\": \"server\"}, \"clocks\": {\"clock\": \"BOOTTIME\", \"offset_ns\": 500, "
		   "\"sync_to\": {\"file\": \"phone.pb\", \"machine\": \"phone\", \"clock\": \"BOOTTIME\"}}}]"),
		PM(", \"trace_time\": {\"file\": \"server.pb\", \"clock\": \"BOOTTIME\"}, \"files\": [{\"path\": "
		   "\"phone.pb\", \"machine\": {\"name\": \"phone\"}}, {\"path\": \"server.pb\", \"machine\": {\"name\": "
		   "\"server\"}, \"clocks\": {\"clock\": \"BOOTTIME\", \"offset_ns\": 500, \"sync_to\": {\"file\": "
		   "\"phone.pb\", \"clock\": \"BOOTTIME\"}}}]"),
	};
	for (size_t k = 0; k < 3; k++) {
		tm_manifest *m;
		tm_mf_plan p;
		tm_error err;
		CHECK(plan_of(variants[k], ARCHIVE, &m, &p, &err) == 0);
		CHECK_INT(p.n_rows, 2);
		CHECK_INT(p.n_edges, 1);
		CHECK(node_is(p.edges[0].src, 6, 0, 1));
		CHECK(node_is(p.edges[0].ref, 6, 0, 0));
		CHECK_INT(p.edges[0].src_ts, 0);
		CHECK_INT(p.edges[0].ref_ts, 500);
		CHECK_INT(p.edges[0].file_index, 1);
		CHECK_INT(p.has_trace_time, k == 2);
		if (k == 2)
			CHECK(node_is(p.trace_time, 6, 0, 1));
		tm_mf_plan_free(&p);
		tm_manifest_free(m);
	}
}

/* c47 and c50: machines inside a multi-machine file. */
static void test_multi_machine_edges(void)
{
	tm_manifest *m;
	tm_mf_plan p;
	tm_error err;
	CHECK(plan_of(PM(", \"trace_time\": {\"file\": \"multi.pb\", \"machine\": \"vm\", \"clock\": \"BOOTTIME\"}, "
			 "\"files\": [{\"path\": \"multi.pb\", \"machines\": [{\"id\": 0, \"name\": \"phone\"}, {\"id\": 7, "
			 "\"name\": \"vm\"}]}, {\"path\": \"server.pb\", \"machine\": {\"name\": \"server\"}, \"clocks\": "
			 "{\"clock\": \"BOOTTIME\", \"offset_ns\": 500, \"sync_to\": {\"file\": \"multi.pb\", \"machine\": "
			 "\"vm\", \"clock\": \"BOOTTIME\"}}}]"),
		      ARCHIVE, &m, &p, &err) == 0);
	CHECK_INT(p.n_rows, 3);
	CHECK(node_is(p.trace_time, 6, 0, 1));
	CHECK(node_is(p.edges[0].src, 6, 0, 2));
	CHECK(node_is(p.edges[0].ref, 6, 0, 1));
	CHECK_INT(p.edges[0].ref_ts, 500);
	tm_mf_plan_free(&p);
	tm_manifest_free(m);

	CHECK(plan_of(PM(", \"trace_time\": {\"file\": \"server.pb\", \"clock\": \"BOOTTIME\"}, \"files\": [{\"path\": "
			 "\"multi.pb\", \"machines\": [{\"id\": 0, \"name\": \"phone\"}, {\"id\": 7, \"name\": \"vm\"}], "
			 "\"clocks\": {\"machine\": \"vm\", \"clock\": \"BOOTTIME\", \"offset_ns\": 500, \"sync_to\": "
			 "{\"file\": \"server.pb\", \"clock\": \"BOOTTIME\"}}}, {\"path\": \"server.pb\", \"machine\": "
			 "{\"name\": \"server\"}}]"),
		      ARCHIVE, &m, &p, &err) == 0);
	CHECK(node_is(p.trace_time, 6, 0, 2));
	CHECK(node_is(p.edges[0].src, 6, 0, 1));
	CHECK(node_is(p.edges[0].ref, 6, 0, 2));
	CHECK_INT(p.edges[0].file_index, 0);
	tm_mf_plan_free(&p);
	tm_manifest_free(m);
}

/* c48, c49, §10 B: PIN sources and clock-less references are private
 * TRACE_FILE clocks keyed by member id. */
static void test_pin_edges(void)
{
	tm_manifest *m;
	tm_mf_plan p;
	tm_error err;
	CHECK(plan_of(PM(", \"files\": [{\"path\": \"a.pb\", \"machine\": {\"name\": \"phone\"}}, {\"path\": \"a.json\", "
			 "\"machine\": {\"name\": \"server\"}, \"clocks\": {\"offset_ns\": 500, \"sync_to\": {\"file\": "
			 "\"a.pb\", \"clock\": \"BOOTTIME\"}}}]"),
		      ARCHIVE, &m, &p, &err) == 0);
	CHECK(node_is(p.edges[0].src, TM_CLOCK_TRACE_FILE, 2, 1)); /* a.json is member id 2 */
	CHECK(node_is(p.edges[0].ref, 6, 0, 0));
	CHECK_INT(p.edges[0].ref_ts, 500);
	tm_mf_plan_free(&p);
	tm_manifest_free(m);

	CHECK(plan_of(PM(", \"files\": [{\"path\": \"a.json\"}, {\"path\": \"b.json\", \"clocks\": {\"offset_ns\": 500, "
			 "\"sync_to\": {\"file\": \"a.json\"}}}]"),
		      ARCHIVE, &m, &p, &err) == 0);
	CHECK_INT(p.n_rows, 1);
	CHECK_INT(p.rows[0].raw_id, 0); /* the host row, for both ends */
	CHECK(node_is(p.edges[0].src, TM_CLOCK_TRACE_FILE, 3, 0));
	CHECK(node_is(p.edges[0].ref, TM_CLOCK_TRACE_FILE, 2, 0));
	tm_mf_plan_free(&p);
	tm_manifest_free(m);

	/* §10 B: a JSON log 250 ms after a system trace */
	static const char *const b_archive[] = {"sys.pb", "app.json", NULL};
	CHECK(plan_of(PM(", \"trace_time\": {\"clock\": \"BOOTTIME\"}, \"files\": [{\"path\": \"sys.pb\"}, {\"path\": "
			 "\"app.json\", \"clocks\": {\"sync_to\": {\"file\": \"sys.pb\", \"clock\": \"BOOTTIME\"}, "
			 "\"offset_ns\": 250000000}}]"),
		      b_archive, &m, &p, &err) == 0);
	CHECK(node_is(p.trace_time, 6, 0, 0));
	CHECK_INT(p.n_rows, 1);
	CHECK_INT(p.rows[0].raw_id, 0);
	CHECK(node_is(p.edges[0].src, TM_CLOCK_TRACE_FILE, 2, 0));
	CHECK(node_is(p.edges[0].ref, 6, 0, 0));
	CHECK_INT(p.edges[0].src_ts, 0);
	CHECK_INT(p.edges[0].ref_ts, 250000000);
	tm_mf_plan_free(&p);
	tm_manifest_free(m);
}

/* clocks.md §9.2: {source max(0,-offset), reference max(0,offset)}; edges
 * in files order. */
static void test_edge_offsets(void)
{
	tm_manifest *m;
	tm_mf_plan p;
	tm_error err;
	CHECK(plan_of(PM(", \"files\": [{\"path\": \"a.json\", \"clocks\": {\"offset_ns\": 500, \"sync_to\": {\"file\": "
			 "\"b.json\"}}}, {\"path\": \"b.json\", \"clocks\": {\"offset_ns\": -500, \"sync_to\": {\"file\": "
			 "\"a.json\"}}}, {\"path\": \"a.pb\", \"clocks\": {\"clock\": \"REALTIME\", \"sync_to\": "
			 "{\"file\": \"b.json\", \"clock\": \"MONOTONIC\"}}}, {\"path\": \"b.pb\", \"clocks\": {\"clock\": "
			 "\"BOOTTIME\", \"offset_ns\": 9223372036854775807, \"sync_to\": {\"file\": \"ghost\", \"clock\": "
			 "\"BOOTTIME\"}}}, {\"path\": \"ghost\", \"machine\": {\"name\": \"g\"}}]"),
		      ARCHIVE, &m, &p, &err) == 0);
	CHECK_INT(p.n_edges, 4);
	CHECK_INT(p.edges[0].src_ts, 0);
	CHECK_INT(p.edges[0].ref_ts, 500);
	CHECK_INT(p.edges[1].src_ts, 500);
	CHECK_INT(p.edges[1].ref_ts, 0);
	CHECK_INT(p.edges[2].src_ts, 0);
	CHECK_INT(p.edges[2].ref_ts, 0);
	CHECK(node_is(p.edges[2].src, 1, 0, 1));
	CHECK(node_is(p.edges[2].ref, 3, 0, 1));
	/* S16: a named reference clock needs no member */
	CHECK(node_is(p.edges[3].ref, 6, 0, 0));
	CHECK_INT(p.edges[3].ref_ts, INT64_MAX);
	for (size_t k = 0; k < 4; k++)
		CHECK_INT(p.edges[k].file_index, k);
	tm_mf_plan_free(&p);
	tm_manifest_free(m);
}

/* S14, S15: the plan hands the clock graph edges whose two ends are the same
 * node; the duplicate-domain error is the graph's. */
static void test_same_node_edges_are_planned(void)
{
	tm_manifest *m;
	tm_mf_plan p;
	tm_error err;
	static const char *const s14[] = {"meta.json", "a.json", NULL};
	CHECK(plan_of(PM(", \"files\": [{\"path\": \"a.json\", \"clocks\": {\"sync_to\": {\"file\": \"a.json\"}}}]"), s14,
		      &m, &p, &err) == 0);
	CHECK(node_is(p.edges[0].src, TM_CLOCK_TRACE_FILE, 2, 0));
	CHECK(memcmp(&p.edges[0].src, &p.edges[0].ref, sizeof(tm_clock_node)) == 0);
	tm_mf_plan_free(&p);
	tm_manifest_free(m);
	CHECK(plan_of(PM(", \"files\": [{\"path\": \"a.json\", \"machine\": {\"name\": \"p\"}, \"clocks\": {\"clock\": "
			 "\"BOOTTIME\", \"sync_to\": {\"file\": \"b.json\", \"clock\": \"BOOTTIME\"}}}, {\"path\": "
			 "\"b.json\", \"machine\": {\"name\": \"p\"}}]"),
		      ARCHIVE, &m, &p, &err) == 0);
	CHECK(node_is(p.edges[0].src, 6, 0, 0));
	CHECK(memcmp(&p.edges[0].src, &p.edges[0].ref, sizeof(tm_clock_node)) == 0);
	tm_mf_plan_free(&p);
	tm_manifest_free(m);
}

/* §10 A, c52, S8: attributes sorted, integer or string, last duplicate wins. */
static void test_attributes(void)
{
	tm_manifest *m;
	tm_mf_plan p;
	tm_error err;
	CHECK(plan_of(PM(", \"files\": [{\"path\": \"a.pb\", \"machine\": {\"name\": \"phone\"}}, {\"path\": \"b.pb\", "
			 "\"machine\": {\"name\": \"server\"}}], \"attributes\": {\"run_id\": 42, \"benchmark\": "
			 "\"startup\", \"a\": \"x\", \"a\": \"y\"}"),
		      ARCHIVE, &m, &p, &err) == 0);
	CHECK_INT(p.n_rows, 2);
	CHECK_INT(p.rows[0].raw_id, INT64_C(4294967296));
	CHECK_INT(p.rows[1].raw_id, INT64_C(4294967297));
	CHECK_STR(p.rows[1].name, "server");
	CHECK_INT(p.has_trace_time, 0);
	CHECK_INT(m->n_attrs, 3);
	CHECK_STR(m->attrs[0].key.s, "a");
	CHECK_STR(m->attrs[0].s.s, "y");
	CHECK_STR(m->attrs[1].key.s, "benchmark");
	CHECK_INT(m->attrs[1].is_int, 0);
	CHECK_STR(m->attrs[1].s.s, "startup");
	CHECK_STR(m->attrs[2].key.s, "run_id");
	CHECK_INT(m->attrs[2].is_int, 1);
	CHECK_INT(m->attrs[2].i, 42);
	tm_mf_plan_free(&p);
	tm_manifest_free(m);
}

/* §3.4: exact bytes; a JSON \u0000 keeps names apart and never matches a
 * member name. */
static void test_names_with_nul(void)
{
	tm_manifest *m = parse_ok(PM(", \"files\": [{\"path\": \"a\\u0000b\", \"machine\": {\"name\": \"m\\u0000x\"}}, "
				     "{\"path\": \"a\", \"machine\": {\"name\": \"m\\u0000y\"}}]"));
	CHECK(m);
	CHECK_INT(m->n_names, 2);
	CHECK_INT(tm_manifest_find_entry(m, "a"), 1);
	CHECK_INT(tm_manifest_name_raw_id(m, "m"), -1);
	tm_manifest_free(m);
}

/* ---- output -------------------------------------------------------------------- */

static int str_same(tm_mf_str a, tm_mf_str b)
{
	if (!a.s || !b.s)
		return !a.s && !b.s;
	return a.len == b.len && memcmp(a.s, b.s, a.len) == 0;
}

/* Deep equality of two manifests; the failing field on mismatch. */
static const char *manifest_diff(const tm_manifest *a, const tm_manifest *b)
{
	if (a->has_trace_time != b->has_trace_time || a->tt_clock != b->tt_clock || !str_same(a->tt_file, b->tt_file) ||
	    !str_same(a->tt_machine, b->tt_machine))
		return "trace_time";
	if (a->has_files != b->has_files || a->n_files != b->n_files)
		return "files";
	for (size_t i = 0; i < a->n_files; i++) {
		const tm_mf_file *x = &a->files[i], *y = &b->files[i];
		if (!str_same(x->path, y->path) || !str_same(x->machine, y->machine) ||
		    x->has_machines != y->has_machines || x->n_machines != y->n_machines)
			return "entry";
		for (size_t k = 0; k < x->n_machines; k++)
			if (x->machines[k].id != y->machines[k].id || !str_same(x->machines[k].name, y->machines[k].name))
				return "machines";
		if (!x->clocks != !y->clocks || !x->table != !y->table)
			return "entry blocks";
		if (x->clocks) {
			const tm_mf_clocks *c = x->clocks, *d = y->clocks;
			if (!str_same(c->machine, d->machine) || c->clock != d->clock || !str_same(c->sync_file, d->sync_file) ||
			    !str_same(c->sync_machine, d->sync_machine) || c->sync_clock != d->sync_clock ||
			    c->has_offset != d->has_offset || c->offset_ns != d->offset_ns)
				return "clocks";
		}
		if (x->table) {
			const tm_mf_table *t = x->table, *u = y->table;
			if (t->format != u->format || !str_same(t->name, u->name) || t->row_count != u->row_count ||
			    t->n_columns != u->n_columns)
				return "table";
			for (size_t k = 0; k < t->n_columns; k++)
				if (!str_same(t->columns[k].name, u->columns[k].name) ||
				    !str_same(t->columns[k].type, u->columns[k].type) ||
				    !str_same(t->columns[k].nullability, u->columns[k].nullability) ||
				    !str_same(t->columns[k].sort, u->columns[k].sort) ||
				    !str_same(t->columns[k].duplicates, u->columns[k].duplicates))
					return "columns";
		}
	}
	if (a->has_attributes != b->has_attributes || a->n_attrs != b->n_attrs)
		return "attributes";
	for (size_t i = 0; i < a->n_attrs; i++)
		if (!str_same(a->attrs[i].key, b->attrs[i].key) || a->attrs[i].is_int != b->attrs[i].is_int ||
		    a->attrs[i].i != b->attrs[i].i || !str_same(a->attrs[i].s, b->attrs[i].s))
			return "attribute";
	if (a->n_names != b->n_names)
		return "names";
	for (size_t i = 0; i < a->n_names; i++)
		if (!str_same(a->names[i], b->names[i]))
			return "name";
	return NULL;
}

static void test_round_trip(void)
{
	static const char *const docs[] = {
		PM(""),
		PM(", \"files\": [], \"attributes\": {}"),
		PM(", \"trace_time\": {\"clock\": \"REALTIME\", \"file\": \"a.json\"}, \"files\": [{\"path\": \"a.json\", "
		   "\"machine\": {\"name\": \"p\"}, \"clocks\": {\"clock\": \"BOOTTIME\", \"sync_to\": {\"file\": \"b\", "
		   "\"clock\": \"MONOTONIC\"}, \"offset_ns\": -9223372036854775807}}], \"attributes\": {\"z\": 1, \"a\": "
		   "\"x\", \"big\": -9223372036854775808}"),
		PM(", \"trace_time\": {\"clock\": \"MONOTONIC_RAW\", \"file\": \"m\", \"machine\": \"vm\"}, \"files\": "
		   "[{\"path\": \"m\", \"machines\": [{\"id\": 4294967295, \"name\": \"vm\"}, {\"id\": 7.9, \"name\": "
		   "\"vm\"}, {\"id\": 0, \"name\": \"h\"}], \"clocks\": {\"machine\": \"vm\", \"sync_to\": {\"file\": "
		   "\"x\", \"machine\": \"y\"}}}, {\"path\": \"t\", \"__exported_table_schema\": {\"format\": "
		   "9223372036854775807, \"name\": \"tb\", \"row_count\": 4294967295, \"columns\": [{\"name\": \"c\", "
		   "\"type\": \"int\", \"nullability\": \"n\", \"sort\": \"s\", \"duplicates\": \"d\"}]}}, {\"path\": "
		   "\"e\", \"machines\": []}], \"unknown\": [1, {\"x\": 2}]"),
		PM(", \"files\": [{\"path\": \"q\\\"\\\\\\/\\b\\f\\n\\r\\t\\u0001\\u0000\\u00e9\", \"machine\": {\"name\": "
		   "\"\\u0000\"}}], \"attributes\": {\"a\\u0000\": \"v\\u0000\", \"a\": 2, \"\\u00e9\": \"\\n\"}"),
	};
	for (size_t k = 0; k < sizeof(docs) / sizeof(docs[0]); k++) {
		tm_manifest *m = parse_ok(docs[k]);
		CHECK(m);
		size_t len;
		char *s = tm_manifest_to_json(m, &len);
		CHECK_INT(strlen(s), len);
		CHECK(len > 0 && s[len - 1] == '\n');
		tm_manifest *back = NULL;
		tm_error err;
		int rc = tm_manifest_parse(s, len, &back, &err);
		const char *diff = rc == 0 ? manifest_diff(m, back) : err.msg;
		size_t len2 = 0;
		char *s2 = rc == 0 ? tm_manifest_to_json(back, &len2) : NULL;
		int same_text = s2 && len2 == len && memcmp(s, s2, len) == 0;
		free(s);
		free(s2);
		tm_manifest_free(m);
		tm_manifest_free(back);
		if (diff)
			TT_FAIL_("doc %zu: %s", k, diff);
		CHECK(same_text);
	}
}

/* The layout users read: 2-space indent, clock names, exactly the fields
 * present, integers exact. */
static void test_output_text(void)
{
	tm_manifest *m = parse_ok(PM(", \"attributes\": {\"run\": 9007199254740993}, \"files\": [{\"path\": \"a.json\", "
				     "\"clocks\": {\"sync_to\": {\"file\": \"b.pb\", \"clock\": \"BOOTTIME\"}, "
				     "\"offset_ns\": 250000000}, \"extra\": 1}, {\"path\": \"b.pb\", \"machines\": []}], "
				     "\"trace_time\": {\"clock\": \"REALTIME\"}"));
	CHECK(m);
	char *s = tm_manifest_to_json(m, NULL);
	tm_manifest_free(m);
	static const char expected[] = "{\n"
				       "  \"perfetto_manifest\": {\n"
				       "    \"version\": 1,\n"
				       "    \"trace_time\": {\n"
				       "      \"clock\": \"REALTIME\"\n"
				       "    },\n"
				       "    \"files\": [\n"
				       "      {\n"
				       "        \"path\": \"a.json\",\n"
				       "        \"clocks\": {\n"
				       "          \"sync_to\": {\n"
				       "            \"file\": \"b.pb\",\n"
				       "            \"clock\": \"BOOTTIME\"\n"
				       "          },\n"
				       "          \"offset_ns\": 250000000\n"
				       "        }\n"
				       "      },\n"
				       "      {\n"
				       "        \"path\": \"b.pb\",\n"
				       "        \"machines\": []\n"
				       "      }\n"
				       "    ],\n"
				       "    \"attributes\": {\n"
				       "      \"run\": 9007199254740993\n"
				       "    }\n"
				       "  }\n"
				       "}\n";
	int same = strcmp(s, expected) == 0;
	if (!same)
		printf("# got:\n%s", s);
	free(s);
	CHECK(same);
}

/* The defaults view (render.c): a path-only entry per trace file. */
static void test_default_manifest(void)
{
	tm_manifest *m = tm_manifest_new_default();
	char *s = tm_manifest_to_json(m, NULL);
	CHECK_STR(s, "{\n  \"perfetto_manifest\": {\n    \"version\": 1\n  }\n}\n");
	free(s);
	tm_manifest_add_file(m, "a.json");
	tm_manifest_add_file(m, "");
	s = tm_manifest_to_json(m, NULL);
	CHECK_STR(s, "{\n  \"perfetto_manifest\": {\n    \"version\": 1,\n    \"files\": [\n      {\n        \"path\": "
		     "\"a.json\"\n      },\n      {\n        \"path\": \"\"\n      }\n    ]\n  }\n}\n");
	free(s);
	CHECK_INT(tm_manifest_find_entry(m, ""), 1);
	tm_manifest_free(m);
	tm_manifest_free(NULL);
	tm_mf_plan_free(NULL);
}

int main(void)
{
	TT_RUN(test_parse_error_texts);
	TT_RUN(test_validation_order);
	TT_RUN(test_apply_error_texts);
	TT_RUN(test_path_only_entry);
	TT_RUN(test_trace_time_claim);
	TT_RUN(test_trace_time_row0_is_first_named);
	TT_RUN(test_trace_time_file_creates_host_row);
	TT_RUN(test_row_order_machines_array);
	TT_RUN(test_machine_names);
	TT_RUN(test_duplicate_machine_ids);
	TT_RUN(test_double_machine_id);
	TT_RUN(test_same_path_twice);
	TT_RUN(test_container_overrides);
	TT_RUN(test_relate_edges);
	TT_RUN(test_multi_machine_edges);
	TT_RUN(test_pin_edges);
	TT_RUN(test_edge_offsets);
	TT_RUN(test_same_node_edges_are_planned);
	TT_RUN(test_attributes);
	TT_RUN(test_names_with_nul);
	TT_RUN(test_round_trip);
	TT_RUN(test_output_text);
	TT_RUN(test_default_manifest);
	TT_DONE();
}
