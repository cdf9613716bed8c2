/* tests/unit/test_json.c - core/json: the reference parser's language and
 * its error texts (json.h), the integer/double rule of spec/manifest.md §4,
 * exact int64, duplicate keys, escapes, and hostile nesting. Every expected
 * error text below was produced by the reference parser
 * (src/trace_processor/util/json_value.cc at ec5d16b1) on the same input. */
#include "tt.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "util/ahead.h"
#include "util/json.h"

/* Parse a C string literal (embedded NULs need parse_n). */
static tj_value *parse_n(const char *s, size_t n, tm_error *err)
{
	tj_value *v = NULL;
	if (tj_parse(s, n, &v, err) != 0)
		return NULL;
	return v;
}

static tj_value *parse(const char *s, tm_error *err)
{
	return parse_n(s, strlen(s), err);
}

/* §4: a literal without . e E that fits int64 is an integer; anything else
 * is a double. */
static void test_int_vs_double(void)
{
	static const struct {
		const char *lit;
		tj_type type;
		int64_t i;
		double d;
	} table[] = {
		{"1", TJ_INT, 1, 0},
		{"-0", TJ_INT, 0, 0},
		{"0", TJ_INT, 0, 0},
		{"42", TJ_INT, 42, 0},
		{"9223372036854775807", TJ_INT, INT64_MAX, 0},
		{"-9223372036854775808", TJ_INT, INT64_MIN, 0},
		{"1.0", TJ_DOUBLE, 0, 1.0},
		{"1.5", TJ_DOUBLE, 0, 1.5},
		{"1e3", TJ_DOUBLE, 0, 1000.0},
		{"1E3", TJ_DOUBLE, 0, 1000.0},
		{"1e+2", TJ_DOUBLE, 0, 100.0},
		{"25e-1", TJ_DOUBLE, 0, 2.5},
		{"-0.0", TJ_DOUBLE, 0, -0.0},
		{"7.9", TJ_DOUBLE, 0, 7.9},
		{"1e-400", TJ_DOUBLE, 0, 0.0},
		{"99999999999999999999", TJ_DOUBLE, 0, 7766279631452241920.0},
		{"9223372036854775808", TJ_DOUBLE, 0, -9223372036854775808.0},
		{"-9223372036854775809", TJ_DOUBLE, 0, 9223372036854775807.0},
		{"18446744073709551617", TJ_DOUBLE, 0, 1.0},
	};
	for (size_t k = 0; k < sizeof(table) / sizeof(table[0]); k++) {
		char doc[64];
		snprintf(doc, sizeof doc, "[%s]", table[k].lit);
		tm_error err;
		tj_value *v = parse(doc, &err);
		CHECK(v != NULL);
		CHECK_INT(v->len, 1);
		if (v->items[0].type != table[k].type) {
			tj_free(v);
			TT_FAIL_("%s: type %d, expected %d", table[k].lit, (int)v->items[0].type, (int)table[k].type);
		}
		int ok = table[k].type == TJ_INT ? v->items[0].i == table[k].i
						 : v->items[0].d == table[k].d &&
							   signbit(v->items[0].d) == signbit(table[k].d);
		double got = v->items[0].d;
		tj_free(v);
		if (!ok)
			TT_FAIL_("%s: wrong value (double %.17g)", table[k].lit, got);
	}
}

/* The reference's integer reader misses overflow after a negative literal
 * reaches INT64_MIN; we reproduce it. */
/* Integers of every length up to 19 digits, and with a non-digit at each
 * place of the eight-digit words the parser reads at once, read as strtoll
 * reads them (core/util/json.c parse_number). */
static void test_integers_by_word(void)
{
	uint64_t x = 0x243f6a8885a308d3ull;
	char text[64], lit[32];
	for (int i = 0; i < 4000; i++) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		int digits = 1 + i % 19;
		snprintf(lit, sizeof lit, "%s%llu", i & 32 ? "-" : "", (unsigned long long)(x >> 1));
		size_t keep = (size_t)digits + (lit[0] == '-');
		if (keep < strlen(lit))
			lit[keep] = '\0';
		if (lit[lit[0] == '-'] == '0')
			lit[lit[0] == '-'] = '7'; /* no leading zero */
		/* ended by each delimiter a word may reach */
		const char *ends[] = {"]", ",1]", " ]", ".5]", "e2]"};
		const char *end = ends[i % 5];
		snprintf(text, sizeof text, "[%s%s", lit, end);
		tj_value *v = NULL;
		tm_error err;
		CHECK(tj_parse(text, strlen(text), &v, &err) == 0);
		if (end[0] == '.' || end[0] == 'e') {
			CHECK_INT(v->items[0].type, TJ_DOUBLE);
		} else {
			CHECK_INT(v->items[0].type, TJ_INT);
			CHECK_INT(v->items[0].i, strtoll(lit, NULL, 10));
		}
		tj_free(v);
	}
}

static void test_int64_min_wrap_quirk(void)
{
	tm_error err;
	tj_value *v = parse("[-922337203685477580812, -92233720368547758080]", &err);
	CHECK(v != NULL);
	CHECK_INT(v->items[0].type, TJ_INT);
	CHECK_INT(v->items[0].i, -12);
	CHECK_INT(v->items[1].type, TJ_INT);
	CHECK_INT(v->items[1].i, 0);
	tj_free(v);
}

static void test_duplicate_keys(void)
{
	tm_error err;
	tj_value *v = parse("{\"a\": 1, \"b\": 2, \"a\": \"x\", \"a\": 3}", &err);
	CHECK(v != NULL);
	CHECK_INT(v->len, 4);
	CHECK_STR(tj_keys(v)[0].s, "a");
	CHECK_STR(tj_keys(v)[2].s, "a");
	const tj_value *a = tj_get(v, "a");
	CHECK(a == &v->items[3]);
	CHECK_INT(a->i, 3);
	CHECK_INT(tj_get(v, "b")->i, 2);
	CHECK(tj_get(v, "c") == NULL);
	CHECK(tj_get(&v->items[0], "a") == NULL);
	CHECK(tj_get(NULL, "a") == NULL);
	tj_free(v);
}

static void test_escapes(void)
{
	tm_error err;
	tj_value *v = parse("[\"\\\"\\\\\\/\\b\\f\\n\\r\\t\", \"\\u0041\\u00e9\\u20ac\\uFFFF\", \"a\\xb\\q\", "
			    "\"\xf0\x9f\x98\x80\", \"\"]",
			    &err);
	CHECK(v != NULL);
	CHECK_STR(v->items[0].s, "\"\\/\b\f\n\r\t");
	CHECK_STR(v->items[1].s, "A\xc3\xa9\xe2\x82\xac\xef\xbf\xbf");
	/* unknown escapes are dropped with their backslash */
	CHECK_STR(v->items[2].s, "ab");
	/* raw UTF-8 outside the BMP passes through */
	CHECK_STR(v->items[3].s, "\xf0\x9f\x98\x80");
	CHECK_INT(v->items[4].len, 0);
	CHECK_STR(v->items[4].s, "");
	tj_free(v);
}

/* The reference does not join surrogate pairs: any \uD800-\uDFFF fails. */
static void test_surrogates_rejected(void)
{
	tm_error err;
	CHECK(parse("[\"\\ud83d\\ude00\"]", &err) == NULL);
	CHECK_STR(err.msg, "Failed to parse array: Invalid escape sequence: \\ud83d (code point 55357 is reserved "
			   "for surrogate pairs)");
	CHECK_INT(err.code, TM_EINPUT);
	CHECK(parse("{\"\\uDFFF\": 1}", &err) == NULL);
	CHECK_STR(err.msg, "Failed to parse object: Invalid escape sequence: \\uDFFF (code point 57343 is reserved "
			   "for surrogate pairs)");
}

static void test_nul_inside_strings(void)
{
	static const char doc[] = "{\"a\\u0000\": \"x\\u0000y\", \"b\": 1}";
	tm_error err;
	tj_value *v = parse(doc, &err);
	CHECK(v != NULL);
	CHECK_INT(tj_keys(v)[0].len, 2);
	CHECK(tj_get(v, "a") == NULL); /* "a\0" is not "a" */
	CHECK_INT(v->items[0].len, 3);
	CHECK(memcmp(v->items[0].s, "x\0y", 4) == 0);
	tj_free(v);
	/* raw NUL bytes of the input are data too */
	v = parse_n("[\"a\0b\"]", 7, &err);
	CHECK(v != NULL);
	CHECK_INT(v->items[0].len, 3);
	tj_free(v);
}

/* The reference's lenient corners. */
static void test_accepted_quirks(void)
{
	static const char *const ok[] = {
		"{\"a\": 1,}", "[1,]", "[}", "{]", "{} trailing garbage", "[1] [2]", "[[]]", "{\"a\":{}}",
		" \n\t\r{}", "[true,false,null]",
	};
	for (size_t k = 0; k < sizeof(ok) / sizeof(ok[0]); k++) {
		tm_error err;
		tj_value *v = parse(ok[k], &err);
		if (!v)
			TT_FAIL_("%s: %s", ok[k], err.msg);
		tj_free(v);
	}
	tm_error err;
	tj_value *v = parse("[1] [2]", &err);
	CHECK_INT(v->len, 1);
	tj_free(v);
}

/* Input -> the reference's exact error text. */
static void test_error_texts(void)
{
	static const struct {
		const char *in;
		const char *msg;
	} table[] = {
		{"", "Empty JSON input"},
		{" \t\r\n", "Failed to start parsing: Expected '{' or '[' at the start. Input is empty or whitespace only."},
		{"x", "Failed to start parsing: Expected '{' or '[' at the start. Got 'x'"},
		{"\v{}", "Failed to start parsing: Expected '{' or '[' at the start. Got '\v'"},
		{"{", "Failed to start parsing: "},
		{"[ \n", "Failed to start parsing: "},
		/* truncated input */
		{"{\"a\"", "Failed to parse object: "},
		{"{\"a", "Failed to parse object: "},
		{"{\"a\":nul", "Failed to parse object: "},
		{"{\"a\":[", "Failed to parse object: "},
		{"{\"a\":[1", "Failed to parse array: "},
		{"{\"a\":[1]", "Failed to parse array: "},
		{"{\"a\":{}", "Failed to parse object: "},
		{"{\"a\":99999999999999999999, \"b\":", "Failed to parse object: Integer overflow parsing '99999999999999999999'"},
		/* keys, colons, commas */
		{"{,", "Failed to parse object: Expected '\"' at the start of key. Got ','"},
		{"{\"a\":1,,}", "Failed to parse object: Expected '\"' at the start of key. Got ','"},
		{"{\"a\" 1}", "Failed to parse object: Expected ':' after key 'a'. Got '1'"},
		{"{\"a\":1 \"b\":2}", "Failed to parse object: Expected ',' or '}' after value for key 'a'. Got '\"'"},
		{"[1 2]", "Failed to parse array: Expected ',' or ']' after value. Got '2'"},
		{"{\"\":1 x}", "Failed to parse object: Expected ',' or '}' after value. Got 'x'"},
		{"{\"a\":1]", "Failed to parse object: Expected ',' or '}' after value for key 'a'. Got ']'"},
		{"{\"a\":{\"b\":1} x}", "Failed to parse object: Expected ',' or '}' after value for key 'b'. Got 'x'"},
		{"[{\"b\":1} x]", "Failed to parse object: Expected ',' or ']' after value. Got 'x'"},
		{"{\"a\":[1] x}", "Failed to parse array: Expected ',' or '}' after value for key 'a'. Got 'x'"},
		{"{\"k\\u0000x\":1 y}", "Failed to parse object: Expected ',' or '}' after value for key 'k'. Got 'y'"},
		/* literals */
		{"{\"a\":tru}", "Failed to parse object: Invalid token: expected 'true' but got 'tru}'"},
		{"[fals]", "Failed to parse array: Invalid token: expected 'false' but got 'fals]'"},
		{"[nulx]", "Failed to parse array: Invalid token: expected 'null' but got 'nulx'"},
		/* numbers: the rest of the input is quoted */
		{"{\"a\":01}", "Failed to parse object: Invalid number: leading zero in '01}'"},
		{"{\"a\":-x}", "Failed to parse object: Invalid number: expected digit in '-x}'"},
		{"{\"a\": }", "Failed to parse object: Invalid number: expected digit in '}'"},
		{"[1,,2]", "Failed to parse array: Invalid number: expected digit in ',2]'"},
		{"{\"a\":1.}", "Failed to parse object: Invalid number: expected digit after '.' in '1.}'"},
		{"{\"a\":1e+}", "Failed to parse object: Invalid number: expected digit after 'e' in '1e+}'"},
		{"{\"a\":1e999}", "Failed to parse object: Double overflow/underflow parsing '1e999'"},
		{"[0e400]", "Failed to parse array: Double overflow/underflow parsing '0e400'"},
		{"[0.0000000000000000000000000000000000000000000000000000000000000001]",
		 "Failed to parse array: Double overflow/underflow parsing "
		 "'0.0000000000000000000000000000000000000000000000000000000000000001'"},
		/* escapes: the four bytes ending at the bad digit */
		{"{\"a\":\"\\u12x4\"}", "Failed to parse object: Invalid escape sequence: \\uu12x"},
		{"{\"a\":\"\\uZ\"}", "Failed to parse object: Invalid escape sequence: \\u\"\\uZ"},
	};
	for (size_t k = 0; k < sizeof(table) / sizeof(table[0]); k++) {
		tm_error err;
		tm_err_clear(&err);
		tj_value *v = parse(table[k].in, &err);
		if (v) {
			tj_free(v);
			TT_FAIL_("%s: parsed, expected \"%s\"", table[k].in, table[k].msg);
		}
		if (strcmp(err.msg, table[k].msg) != 0 || err.code != TM_EINPUT)
			TT_FAIL_("%s: \"%s\", expected \"%s\"", table[k].in, err.msg, table[k].msg);
	}
}

/* A message quotes at most what tm_error holds, even for a huge rest. */
static void test_long_number_error_is_cut(void)
{
	size_t n = 3 * TM_ERR_MAX;
	char *doc = malloc(n + 1);
	memset(doc, '7', n);
	memcpy(doc, "[01", 3);
	doc[n] = '\0';
	tm_error err;
	CHECK(parse(doc, &err) == NULL);
	free(doc);
	CHECK_INT(strlen(err.msg), TM_ERR_MAX - 1);
	CHECK(strncmp(err.msg, "Failed to parse array: Invalid number: leading zero in '01777", 60) == 0);
}

static char *nested(size_t depth, size_t *len)
{
	char *s = malloc(2 * depth + 1);
	for (size_t k = 0; k < depth; k++) {
		s[k] = '[';
		s[2 * depth - 1 - k] = ']';
	}
	s[2 * depth] = '\0';
	*len = 2 * depth;
	return s;
}

static void test_deep_nesting(void)
{
	size_t len;
	tm_error err;
	char *ok = nested(TJ_MAX_DEPTH, &len);
	tj_value *v = parse_n(ok, len, &err);
	free(ok);
	CHECK(v != NULL);
	tj_free(v);
	char *deep = nested(TJ_MAX_DEPTH + 1, &len);
	v = parse_n(deep, len, &err);
	free(deep);
	CHECK(v == NULL);
	CHECK_STR(err.msg, "Failed to parse array: Nesting deeper than 512 levels");
	/* a hostile document far deeper than any stack would allow */
	char *hostile = nested(1 << 20, &len);
	v = parse_n(hostile, len / 2, &err);
	free(hostile);
	CHECK(v == NULL);
	CHECK_STR(err.msg, "Failed to parse array: Nesting deeper than 512 levels");
}

static void test_tree_shape(void)
{
	tm_error err;
	tj_value *v = parse("{\"files\": [{\"path\": \"a\", \"n\": [1, 2.5, true, null]}], \"x\": {}}", &err);
	CHECK(v != NULL);
	CHECK_INT(v->type, TJ_OBJECT);
	const tj_value *files = tj_get(v, "files");
	CHECK(files && files->type == TJ_ARRAY && files->len == 1);
	const tj_value *n = tj_get(&files->items[0], "n");
	CHECK(n && n->len == 4);
	CHECK_INT(n->items[0].type, TJ_INT);
	CHECK_INT(n->items[1].type, TJ_DOUBLE);
	CHECK_INT(n->items[2].type, TJ_BOOL);
	CHECK_INT(n->items[2].b, 1);
	CHECK_INT(n->items[3].type, TJ_NULL);
	CHECK(tj_is_number(&n->items[0]) && tj_is_number(&n->items[1]) && !tj_is_number(&n->items[2]));
	CHECK(!tj_is_number(NULL));
	CHECK_INT(tj_get(v, "x")->len, 0);
	CHECK_STR(tj_get(&files->items[0], "path")->s, "a");
	tj_free(v);
	tj_free(NULL);
}

/* Two trees alike to the byte: types, scalars, strings, keys, order. */
static int same_tree(const tj_value *a, const tj_value *b)
{
	if (a->type != b->type || a->b != b->b)
		return 0;
	if (a->type == TJ_INT || a->type == TJ_DOUBLE) /* -0.0 is not 0.0 */
		return memcmp(&a->i, &b->i, sizeof a->i) == 0;
	if (a->type == TJ_STRING)
		return a->len == b->len && memcmp(a->s, b->s, a->len + 1) == 0;
	if (a->type != TJ_ARRAY && a->type != TJ_OBJECT)
		return 1;
	if (a->len != b->len)
		return 0;
	for (size_t i = 0; i < a->len; i++) {
		if (a->type == TJ_OBJECT && (tj_keys(a)[i].len != tj_keys(b)[i].len ||
					     memcmp(tj_keys(a)[i].s, tj_keys(b)[i].s, tj_keys(a)[i].len + 1) != 0))
			return 0;
		if (!same_tree(&a->items[i], &b->items[i]))
			return 0;
	}
	return 1;
}

/* A tree copied through a buffer that moves as it grows comes back the
 * same (core/util/ahead.h's logs). */
static void test_copy_through_buffer(void)
{
	static const char *docs[] = {
		"{}",
		"[]",
		"{\"a\":1,\"a\":2.5,\"k\\u0000\":\"x\\u0000y\",\"n\":null,\"t\":true}",
		"[[[],{}],{\"deep\":[1,[2,[3,{\"s\":\"\"}]]]},-0.0,9223372036854775807]",
	};
	for (size_t d = 0; d < sizeof docs / sizeof docs[0]; d++) {
		tj_value *v;
		tm_error err;
		CHECK(tj_parse(docs[d], strlen(docs[d]), &v, &err) == 0);
		tm_buf b = {0};
		tm_log_begin(&b, 0, 0, 0, 0); /* offset 0 stays NULL */
		size_t first = tj_copy_out(v, &b);
		size_t second = v->len ? tj_copy_out(&v->items[0], &b) : 0; /* another tree after it */
		CHECK(same_tree(v, tj_copy_in(b.data, first)));
		if (second)
			CHECK(same_tree(&v->items[0], tj_copy_in(b.data, second)));
		tm_buf_free(&b);
		tj_free(v);
	}
}

/* A small tree read member by member, every value written out by hand. */
static void test_small_tree_by_hand(void)
{
	tm_error err;
	tj_value *v = parse("{\"a\":[1,[2,[]],{}],\"b\":{\"c\":\"d\",\"c\":null},\"e\":[],\"a\":-3.5}", &err);
	CHECK(v != NULL);
	CHECK_INT(v->type, TJ_OBJECT);
	CHECK_INT(v->len, 4);
	const tj_key *k = tj_keys(v);
	CHECK(k != NULL);
	CHECK_STR(k[0].s, "a");
	CHECK_STR(k[1].s, "b");
	CHECK_STR(k[2].s, "e");
	CHECK_STR(k[3].s, "a");
	CHECK_INT(k[0].len, 1);
	const tj_value *a = &v->items[0];
	CHECK_INT(a->type, TJ_ARRAY);
	CHECK_INT(a->len, 3);
	CHECK_INT(a->items[0].type, TJ_INT);
	CHECK_INT(a->items[0].i, 1);
	CHECK_INT(a->items[1].type, TJ_ARRAY);
	CHECK_INT(a->items[1].len, 2);
	CHECK_INT(a->items[1].items[0].i, 2);
	CHECK_INT(a->items[1].items[1].type, TJ_ARRAY);
	CHECK_INT(a->items[1].items[1].len, 0);
	CHECK(a->items[1].items[1].items == NULL);
	CHECK_INT(a->items[2].type, TJ_OBJECT);
	CHECK_INT(a->items[2].len, 0);
	CHECK(tj_keys(&a->items[2]) == NULL);
	const tj_value *b = &v->items[1];
	CHECK_INT(b->len, 2);
	CHECK_STR(tj_keys(b)[0].s, "c");
	CHECK_STR(tj_keys(b)[1].s, "c");
	CHECK_INT(b->items[0].type, TJ_STRING);
	CHECK_STR(b->items[0].s, "d");
	CHECK_INT(b->items[0].len, 1);
	CHECK(tj_get(b, "c") == &b->items[1]);
	CHECK_INT(tj_get(b, "c")->type, TJ_NULL);
	CHECK_INT(v->items[2].len, 0);
	CHECK(tj_get(v, "a") == &v->items[3]);
	CHECK_INT(v->items[3].type, TJ_DOUBLE);
	CHECK(v->items[3].d == -3.5);
	tj_free(v);
}

/* An array of n integers 0..n-1, or an object of n members "k<i>": i. */
static void put_container(tm_buf *b, int object, size_t n)
{
	tm_buf_puts(b, object ? "{" : "[");
	for (size_t i = 0; i < n; i++) {
		if (object)
			tm_buf_printf(b, "%s\"k%zu\":%zu", i ? "," : "", i, i);
		else
			tm_buf_printf(b, "%s%zu", i ? "," : "", i);
	}
	tm_buf_puts(b, object ? "}" : "]");
}

/* Is v what put_container wrote? */
static int is_container(const tj_value *v, int object, size_t n)
{
	if (v->type != (object ? TJ_OBJECT : TJ_ARRAY) || v->len != n || (n == 0) != (v->items == NULL))
		return 0;
	const tj_key *keys = object ? tj_keys(v) : NULL;
	for (size_t i = 0; i < n; i++) {
		char k[32];
		int kn = snprintf(k, sizeof k, "k%zu", i);
		if (v->items[i].type != TJ_INT || v->items[i].i != (int64_t)i)
			return 0;
		if (object && (keys[i].len != (size_t)kn || strcmp(keys[i].s, k) != 0))
			return 0;
	}
	return 1;
}

/* v written out is text, byte for byte. */
static int writes_back(const tj_value *v, const tm_buf *text)
{
	tm_buf back = {0};
	tj_write(&back, v);
	int same = back.len == text->len && memcmp(back.data, text->data, text->len) == 0;
	tm_buf_free(&back);
	return same;
}

/* Containers of every size around the parser's own limits (json.c: the
 * elements of open containers wait on a stack, 32 of them inline; past
 * 256 a container's go to a block of its own), alone and among siblings
 * before and after it, read back item by item and key by key. The texts
 * are compact, so that tj_write gives each back. */
static void test_container_sizes(void)
{
	static const size_t sizes[] = {0, 1, 2, 7, 8, 9, 31, 32, 33, 64, 255, 256, 257, 511, 512, 513, 3000};
	for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++)
		for (int object = 0; object <= 1; object++)
			for (int among = 0; among <= 1; among++) {
				size_t n = sizes[k];
				tm_buf text = {0};
				if (among)
					tm_buf_puts(&text, "[7,{\"s\":\"x\",\"t\":[1,2]},");
				put_container(&text, object, n);
				if (among)
					tm_buf_puts(&text, ",[8],\"after\"]");
				tm_error err;
				tj_value *v = parse_n(text.data, text.len, &err);
				if (!v) {
					tm_buf_free(&text);
					TT_FAIL_("%zu, object %d: %s", n, object, err.msg);
				}
				const tj_value *c = v;
				int ok = 1;
				if (among) {
					ok = v->len == 5 && v->items[0].i == 7 && v->items[1].len == 2 &&
					     strcmp(tj_get(&v->items[1], "s")->s, "x") == 0 &&
					     tj_get(&v->items[1], "t")->items[1].i == 2 && v->items[3].len == 1 &&
					     v->items[3].items[0].i == 8 && strcmp(v->items[4].s, "after") == 0;
					c = &v->items[2];
				}
				ok = ok && is_container(c, object, n);
				if (ok && object && n) {
					char last[32];
					snprintf(last, sizeof last, "k%zu", n - 1);
					ok = tj_get(c, last) == &c->items[n - 1] && tj_get(c, "k") == NULL;
				}
				ok = ok && writes_back(v, &text);
				tm_buf_free(&text);
				tj_free(v);
				if (!ok)
					TT_FAIL_("%zu items, object %d, among siblings %d: read back wrong", n, object, among);
			}
}

/* Large containers inside large ones, and small ones between them: each
 * outer element closes while the outer container already has a block of
 * its own. */
static void test_large_inside_large(void)
{
	tm_buf text = {0};
	tm_buf_puts(&text, "{\"arrays\":[");
	for (size_t i = 0; i < 300; i++) {
		tm_buf_puts(&text, i ? "," : "");
		put_container(&text, i % 3 == 2, i % 2 ? 300 : i % 40);
	}
	tm_buf_puts(&text, "],\"small\":[1]");
	for (size_t i = 0; i < 300; i++) {
		tm_buf_printf(&text, ",\"m%zu\":", i);
		put_container(&text, i % 2, i % 7 ? 3 : 260);
	}
	tm_buf_puts(&text, "}");
	tm_error err;
	tj_value *v = parse_n(text.data, text.len, &err);
	CHECK(v != NULL);
	int ok = v->len == 302 && strcmp(tj_keys(v)[0].s, "arrays") == 0 && v->items[0].len == 300 &&
		 tj_get(v, "small")->len == 1 && tj_get(v, "small")->items[0].i == 1;
	for (size_t i = 0; ok && i < 300; i++)
		ok = is_container(&v->items[0].items[i], i % 3 == 2, i % 2 ? 300 : i % 40);
	for (size_t i = 0; ok && i < 300; i++) {
		char k[32];
		snprintf(k, sizeof k, "m%zu", i);
		ok = strcmp(tj_keys(v)[2 + i].s, k) == 0 && is_container(&v->items[2 + i], i % 2, i % 7 ? 3 : 260);
	}
	ok = ok && writes_back(v, &text);
	tm_buf_free(&text);
	tj_free(v);
	CHECK(ok);
}

/* Nesting to the limit with elements before and after each nested
 * container, arrays and objects in turn: `[0,{"d":1,"n":[2,...,2],"e":1},0]`. */
static void test_deep_nesting_with_siblings(void)
{
	tm_buf text = {0};
	for (int d = 0; d < TJ_MAX_DEPTH; d++)
		tm_buf_printf(&text, d % 2 ? "{\"d\":%d,\"n\":" : "[%d,", d);
	tm_buf_puts(&text, "null");
	for (int d = TJ_MAX_DEPTH - 1; d >= 0; d--)
		tm_buf_printf(&text, d % 2 ? ",\"e\":%d}" : ",%d]", d);
	tm_error err;
	tj_value *v = parse_n(text.data, text.len, &err);
	CHECK(v != NULL);
	const tj_value *at = v;
	int ok = 1;
	for (int d = 0; ok && d < TJ_MAX_DEPTH; d++) {
		ok = at->type == (d % 2 ? TJ_OBJECT : TJ_ARRAY) && at->len == 3 && at->items[0].i == d &&
		     at->items[2].i == d;
		if (ok && d % 2)
			ok = strcmp(tj_keys(at)[0].s, "d") == 0 && strcmp(tj_keys(at)[1].s, "n") == 0 &&
			     strcmp(tj_keys(at)[2].s, "e") == 0;
		at = &at->items[1];
	}
	ok = ok && at->type == TJ_NULL;
	ok = ok && writes_back(v, &text);
	tm_buf_free(&text);
	tj_free(v);
	CHECK(ok);
}

/* Failures inside containers that hold blocks of their own, and inside
 * their elements: the reference's texts, and nothing kept (the sanitizer
 * build's leak check). Then every prefix, and every byte made 'x', of one
 * document of such containers: each refused or taken, never more. */
static void test_errors_inside_large_containers(void)
{
	static const struct {
		const char *head, *repeat;
		int times;
		const char *tail, *msg;
	} table[] = {
		{"[", "0,", 300, "x]", "Failed to parse array: Invalid number: expected digit in 'x]'"},
		{"{\"a\":[", "0,", 300, "0}", "Failed to parse array: Expected ',' or ']' after value. Got '}'"},
		{"{", "\"k\":0,", 300, "\"last\":1 \"x\"}",
		 "Failed to parse object: Expected ',' or '}' after value for key 'last'. Got '\"'"},
		{"[[", "0,", 300, "", "Failed to parse array: "},
		{"{\"o\":{", "\"k\":[1,2],", 300, "\"k\":", "Failed to parse object: "},
		{"[", "[0,0,0,0,0,0,0,0,0,0],", 300, "[0,tru]]",
		 "Failed to parse array: Invalid token: expected 'true' but got 'tru]'"},
		{"[", "{\"a\":1},", 300, "{\"a\":1]",
		 "Failed to parse object: Expected ',' or '}' after value for key 'a'. Got ']'"},
		{"[", "\"s\",", 257, "\"\\ud800\"]",
		 "Failed to parse array: Invalid escape sequence: \\ud800 (code point 55296 is reserved for surrogate pairs)"},
	};
	for (size_t k = 0; k < sizeof table / sizeof table[0]; k++) {
		tm_buf text = {0};
		tm_buf_puts(&text, table[k].head);
		for (int i = 0; i < table[k].times; i++)
			tm_buf_puts(&text, table[k].repeat);
		tm_buf_puts(&text, table[k].tail);
		tm_error err;
		tj_value *v = parse_n(text.data, text.len, &err);
		tm_buf_free(&text);
		if (v) {
			tj_free(v);
			TT_FAIL_("%s...: parsed, expected \"%s\"", table[k].head, table[k].msg);
		}
		if (strcmp(err.msg, table[k].msg) != 0)
			TT_FAIL_("%s...: \"%s\", expected \"%s\"", table[k].head, err.msg, table[k].msg);
	}
	tm_buf doc = {0};
	tm_buf_puts(&doc, "{\"a\":");
	put_container(&doc, 0, 270);
	tm_buf_puts(&doc, ",\"o\":[");
	for (int i = 0; i < 3; i++) {
		tm_buf_puts(&doc, i ? "," : "");
		put_container(&doc, 1, 260);
	}
	tm_buf_puts(&doc, "],\"s\":\"x\\u00e9\"}");
	tm_error err;
	tj_value *whole = parse_n(doc.data, doc.len, &err);
	CHECK(whole != NULL);
	tj_free(whole);
	int refused = 0;
	for (size_t cut = 0; cut < doc.len; cut++) {
		tj_value *v = parse_n(doc.data, cut, &err);
		refused += v == NULL;
		tj_free(v);
	}
	CHECK_INT(refused, doc.len);
	for (size_t at = 0; at < doc.len; at += 3) {
		char *bad = malloc(doc.len);
		memcpy(bad, doc.data, doc.len);
		bad[at] = 'x';
		tj_value *v = parse_n(bad, doc.len, &err);
		if (!v && strncmp(err.msg, "Failed to ", 10) != 0) {
			free(bad);
			tm_buf_free(&doc);
			TT_FAIL_("byte %zu made 'x': \"%s\"", at, err.msg);
		}
		tj_free(v);
		free(bad);
	}
	tm_buf_free(&doc);
}

/* A million one-element arrays, `[[0],[0],...]`, four bytes each: each
 * took room for 8 values of 64 bytes, and the outer array's blocks as it
 * grew stayed in the tree (660 MB for the 4 MB). Now two values of 24
 * bytes each, 48 MB. Checked in the plain build alone: ASan's quarantine
 * keeps freed blocks. */
static void test_tree_memory(void)
{
#if defined(TT_ASAN)
	SKIP("ASan's quarantine keeps freed blocks; ru_maxrss means nothing here");
#elif defined(TT_TSAN)
	SKIP("ThreadSanitizer's shadow memory is in ru_maxrss: 221 MB for this tree's 47");
#endif
	size_t n = 1000000;
	char *text = malloc(4 * n + 1);
	text[0] = '[';
	for (size_t i = 0; i < n; i++)
		memcpy(text + 1 + 4 * i, i + 1 < n ? "[0]," : "[0]]", 4);
	long before = tt_maxrss_kb();
	tm_error err;
	tj_value *v = parse_n(text, 4 * n + 1, &err);
	long after = tt_maxrss_kb();
	free(text);
	CHECK(v != NULL);
	int ok = v->len == n && v->items[n - 1].len == 1 && v->items[n - 1].items[0].type == TJ_INT;
	tj_free(v);
	CHECK(ok);
	if (after - before > 96 * 1024)
		TT_FAIL_("a tree of 4 MB of text took %ld kB, expected under 96 MB", after - before);
}

/* tj_read_shallow and tj_read_shallow_keys (members passed by, their
 * numbers checked without being made) take exactly the objects tj_parse
 * takes, over numbers at the edges of int64 and of the passed-by fast
 * path, and whitespace (or a control byte) at every place around keys,
 * colons, values and commas; with the same length used, and the same
 * values for the members kept. */
static int keep_b(void *ctx, const char *k, size_t n)
{
	(void)ctx;
	return n == 1 && k[0] == 'b';
}

static int keep_none(void *ctx, const char *k, size_t n)
{
	(void)ctx;
	(void)k;
	(void)n;
	return 0;
}

typedef struct got_members {
	int n;
	char text[512];
} got_members;

static int collect(void *ctx, const tj_member *m)
{
	got_members *g = ctx;
	size_t at = strlen(g->text);
	snprintf(g->text + at, sizeof g->text - at, "%.*s=%d:%lld:%.17g;", (int)m->key_len, m->key, (int)m->v.type,
		 m->v.type == TJ_INT ? (long long)m->v.i : 0, m->v.type == TJ_DOUBLE ? m->v.d : 0.0);
	g->n++;
	return 0;
}

static void test_shallow_takes_what_parse_takes(void)
{
	static const char *numbers[] = {"0", "-0", "7", "-", "01", "-01", "1.", "1.5", "-1.25", ".5", "1e5",
					"1E-3", "1.5e", "123456789012345678", "1234567890123456789",
					"-9223372036854775808", "9223372036854775808", "12345678901234567.5",
					"0.000000000000000001", "1e400", "1.2.3", "2x", "0x10"};
	static const char *ws[] = {"", " ", "\t\n\r ", "\x01"};
	char buf[256];
	int cases = 0, taken = 0;
	for (size_t i = 0; i < sizeof numbers / sizeof *numbers; i++)
		for (size_t w = 0; w < sizeof ws / sizeof *ws; w++)
			for (int place = 0; place < 5; place++) {
				const char *sp[5] = {"", "", "", "", ""};
				sp[place] = ws[w];
				int n = snprintf(buf, sizeof buf, "{%s\"a\"%s:%s%s%s,%s\"b\":[%s],\"c\":{\"d\":%s}}", sp[0],
						 sp[1], sp[2], numbers[i], sp[3], sp[4], numbers[i], numbers[i]);
				tm_error err;
				tj_value *v = NULL;
				int parsed = tj_parse(buf, (size_t)n, &v, &err) == 0;
				tj_free(v);
				got_members g_all = {0}, g_b = {0}, g_none = {0};
				size_t u_all = 0, u_b = 0, u_none = 0;
				int r_all = tj_read_shallow(buf, (size_t)n, collect, &g_all, &u_all);
				int r_b = tj_read_shallow_keys(buf, (size_t)n, keep_b, collect, &g_b, &u_b);
				int r_none = tj_read_shallow_keys(buf, (size_t)n, keep_none, collect, &g_none, &u_none);
				cases++;
				taken += r_all;
				if (r_all != parsed || r_b != r_all || r_none != r_all)
					TT_FAIL_("%s: tj_parse %d, shallow %d, keeping b %d, keeping none %d", buf, parsed,
						 r_all, r_b, r_none);
				if (r_all && (u_all != (size_t)n || u_b != u_all || u_none != u_all))
					TT_FAIL_("%s: used %zu, %zu, %zu of %d", buf, u_all, u_b, u_none, n);
				if (r_all && (g_none.n != 0 || g_b.n != 1 || !strstr(g_all.text, g_b.text)))
					TT_FAIL_("%s: kept %s against %s", buf, g_b.text, g_all.text);
			}
	CHECK(taken > 0 && taken < cases);
}

/* The shallow reader's strings: an escape (good or bad) at every offset
 * of bodies up to 40 bytes long, across the sixteen- and eight-byte steps
 * of the quote search and its byte tail, as a member's value and inside a
 * nested object; and every such object cut short. The same verdict and
 * length as tj_parse, and the value kept as it lies in the text. Each
 * text is copied to an allocation of its exact size, so that a sanitizer
 * build catches a read past the end. */
typedef struct kept_k {
	int n, escaped;
	size_t len;
	const char *s;
} kept_k;

static int keep_k(void *ctx, const char *k, size_t n)
{
	(void)ctx;
	return n == 1 && k[0] == 'k';
}

static int collect_k(void *ctx, const tj_member *m)
{
	kept_k *g = ctx;
	g->n++;
	g->escaped = m->escaped;
	g->len = m->v.len;
	g->s = m->v.s;
	return 0;
}

static void test_shallow_strings(void)
{
	static const char *escapes[] = {"",        "\\\"",   "\\\\",   "\\n",   "\\/",    "\\u00e9",
					"\\uD83D", "\\udfff", "\\u12",  "\\u12g4", "\\x",   "\\",
					"\""};
	char body[64], text[160];
	int cases = 0, taken = 0;
	for (size_t e = 0; e < sizeof escapes / sizeof *escapes; e++)
		for (int len = 0; len <= 40; len++)
			for (int at = 0; at <= len; at++) {
				snprintf(body, sizeof body, "%.*s%s%.*s", at, "0123456789abcdefghijklmnopqrstuvwxyz0123", escapes[e],
					 len - at, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnop");
				int n = snprintf(text, sizeof text, "{\"k\":\"%s\",\"o\":{\"p\":\"%s\"}}", body, body);
				for (int cut = n; cut >= (len == 0 ? 0 : n); cut--) {
					char *buf = malloc((size_t)cut + 1);
					memcpy(buf, text, (size_t)cut);
					tm_error err;
					tj_value *v = NULL;
					int parsed = tj_parse(buf, (size_t)cut, &v, &err) == 0;
					tj_free(v);
					kept_k g = {0};
					size_t used = 0;
					int r = tj_read_shallow_keys(buf, (size_t)cut, keep_k, collect_k, &g, &used);
					cases++;
					taken += r;
					/* the shallow reader may leave an object to tj_parse, never take one it refuses */
					if (r && !parsed)
						TT_FAIL_("%.*s: taken, tj_parse refuses it", cut, buf);
					if (parsed && !r)
						TT_FAIL_("%.*s: tj_parse takes it, shallow leaves it", cut, buf);
					if (r && (used != (size_t)cut || g.n != 1 || g.len != strlen(body) ||
						  g.s != buf + 6 || g.escaped != (strchr(body, '\\') != NULL)))
						TT_FAIL_("%.*s: used %zu, kept %d, len %zu, escaped %d", cut, buf, used, g.n,
							 g.len, g.escaped);
					free(buf);
				}
			}
	/* cut short: every prefix of one object with an escape near a step's edge */
	int n = snprintf(text, sizeof text, "{\"k\":\"0123456789abcde\\\"fghijklmnopqrstu\\u00e9v\",\"o\":{\"p\":\"x\"}}");
	for (int cut = 0; cut < n; cut++) {
		char *buf = malloc((size_t)cut + 1);
		memcpy(buf, text, (size_t)cut);
		kept_k g = {0};
		size_t used = 0;
		if (tj_read_shallow_keys(buf, (size_t)cut, keep_k, collect_k, &g, &used) != 0)
			TT_FAIL_("%.*s: a prefix taken", cut, buf);
		free(buf);
	}
	CHECK(taken > 0 && taken < cases);
}

/* Text for JSON and Graphviz: well-formed UTF-8 kept byte for byte (also
 * past runs of ASCII read a word at a time), each
 * maximal ill-formed part one U+FFFD, as Python's decode("utf-8",
 * "replace") gives (the expectations were made with it). */
static void test_put_utf8(void)
{
	static const struct {
		const char *in;
		size_t n;
		const char *want;
		size_t n_want;
	} cases[] = {
		{"plain", 5, "plain", 5},
		{"caf\xe9"".systrace", 13, "caf\xef""\xbf""\xbd"".systrace", 15},
		{"\xc3""\xa9""\xe2""\x82""\xac""\xf0""\x9f""\x98""\x80""", 9, "\xc3""\xa9""\xe2""\x82""\xac""\xf0""\x9f""\x98""\x80""", 9},
		{"\x80""x", 2, "\xef""\xbf""\xbd""x", 4},
		{"\xc0""\x80""", 2, "\xef""\xbf""\xbd""\xef""\xbf""\xbd""", 6},
		{"\xed""\xa0""\x80""", 3, "\xef""\xbf""\xbd""\xef""\xbf""\xbd""\xef""\xbf""\xbd""", 9},
		{"\xe6""\x97""a", 3, "\xef""\xbf""\xbd""a", 4},
		{"\xf4""\x90""\x80""\x80""", 4, "\xef""\xbf""\xbd""\xef""\xbf""\xbd""\xef""\xbf""\xbd""\xef""\xbf""\xbd""", 12},
		{"\xf5""", 1, "\xef""\xbf""\xbd""", 3},
		{"end\xe6""\x97""", 5, "end\xef""\xbf""\xbd""", 6},
		{"\xe0""\x9f""\x80""", 3, "\xef""\xbf""\xbd""\xef""\xbf""\xbd""\xef""\xbf""\xbd""", 9},
		{"\xf0""\x8f""\xbf""\xbf""", 4, "\xef""\xbf""\xbd""\xef""\xbf""\xbd""\xef""\xbf""\xbd""\xef""\xbf""\xbd""", 12},
		{"a\x00""b", 3, "a\x00""b", 3},
		{"0123456789abcdefghij\xe9""klmnopqrstu\xc3""\xa9""vwxyz01234567", 47, "0123456789abcdefghij\xef""\xbf""\xbd""klmnopqrstu\xc3""\xa9""vwxyz01234567", 49},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		tm_buf b = {0};
		tm_buf_puts(&b, "<");
		tm_buf_put_utf8(&b, cases[i].in, cases[i].n);
		CHECK_INT(b.len, cases[i].n_want + 1);
		CHECK(b.len == cases[i].n_want + 1 && memcmp(b.data + 1, cases[i].want, cases[i].n_want) == 0);
		tm_buf_free(&b);
	}
	tm_buf e = {0};
	tm_buf_put_utf8(&e, NULL, 0);
	CHECK(e.data && e.len == 0 && e.data[0] == '\0');
	tm_buf_free(&e);
}

int main(void)
{
	TT_RUN(test_tree_memory);
	TT_RUN(test_int_vs_double);
	TT_RUN(test_integers_by_word);
	TT_RUN(test_copy_through_buffer);
	TT_RUN(test_int64_min_wrap_quirk);
	TT_RUN(test_duplicate_keys);
	TT_RUN(test_escapes);
	TT_RUN(test_surrogates_rejected);
	TT_RUN(test_nul_inside_strings);
	TT_RUN(test_accepted_quirks);
	TT_RUN(test_error_texts);
	TT_RUN(test_long_number_error_is_cut);
	TT_RUN(test_deep_nesting);
	TT_RUN(test_shallow_strings);
	TT_RUN(test_tree_shape);
	TT_RUN(test_small_tree_by_hand);
	TT_RUN(test_container_sizes);
	TT_RUN(test_large_inside_large);
	TT_RUN(test_deep_nesting_with_siblings);
	TT_RUN(test_errors_inside_large_containers);
	TT_RUN(test_shallow_takes_what_parse_takes);
	TT_RUN(test_put_utf8);
	TT_DONE();
}
