/* core/util/json.h - a small exact JSON parser for documents read whole (the
 * manifest, one Chrome JSON event at a time). cJSON cannot keep what
 * spec/manifest.md §4 needs: integer versus double literals, exact int64
 * values, every duplicate key, NUL bytes inside strings, and the reference
 * parser's error texts.
 *
 * Accepted language (the reference's, not strict RFC 8259):
 *   - the root must be an object or an array; bytes after it are ignored;
 *   - whitespace is space, \t, \n, \r only (not \v or \f);
 *   - '}' and ']' both end any container when an element is expected, so
 *     a trailing comma (`[1,]`, `{"a":1,}`) and `[}` are accepted;
 *   - an unknown escape (`\x`) is dropped together with its backslash;
 *   - \uD800-\uDFFF are rejected (the reference does not join surrogate
 *     pairs), so text outside the BMP must be written as raw UTF-8;
 *   - a number without . e E that fits int64 is TJ_INT; any other number
 *     is TJ_DOUBLE, computed as the reference computes it (integer part and
 *     fraction accumulated in wrapping 64-bit integers, then scaled by
 *     pow(10, exponent)), so even its rounding and its overflow errors match.
 *
 * Error texts (TM_EINPUT), byte for byte those of the reference
 * (src/trace_processor/util/json_value.cc and json_parser.h at ec5d16b1):
 *   "Empty JSON input"                                  len == 0
 *   "Failed to start parsing: Expected '{' or '[' at the start. Got 'X'"
 *   "Failed to start parsing: Expected '{' or '[' at the start. Input is
 *    empty or whitespace only."
 *   "Failed to start parsing: "     the root bracket is the last non-space
 *   "Failed to parse object: <detail>" / "Failed to parse array: <detail>"
 *       named after the container whose element failed; an error right
 *       after a nested container closes (the parent's ',' or bracket) is
 *       named after the nested one, and input ending right after a nested
 *       opening bracket after the parent. Details:
 *       ""                           input ended early (but see below)
 *       Expected '"' at the start of key. Got 'X'
 *       Expected ':' after key 'K'. Got 'X'
 *       Expected ',' or 'B' after value. Got 'X'
 *       Expected ',' or 'B' after value for key 'K'. Got 'X'
 *           K is the most recently read key anywhere in the document (the
 *           reference keeps one), used when the enclosing container is an
 *           object and K is not empty; B is that container's bracket
 *       Invalid token: expected 'true' but got 'XXXX'   (also false, null)
 *       Invalid number: leading zero in '<rest>'
 *       Invalid number: expected digit in '<rest>'
 *       Invalid number: expected digit after '.' in '<rest>'
 *       Invalid number: expected digit after 'e' in '<rest>'
 *           <rest> is the input from the number to the end of the buffer
 *       Double overflow/underflow parsing '<number>'
 *       Invalid escape sequence: \uABCD      the four bytes that end at the
 *           first non-hex digit (so they may include the `\u` itself)
 *       Invalid escape sequence: \uD83D (code point 55357 is reserved for
 *           surrogate pairs)
 *   Input that ends early reports the last "Integer overflow parsing
 *   '<number>'" text instead of "" when an earlier integer literal did not
 *   fit int64 (the reference leaves that status behind when it re-reads
 *   the literal as a double).
 * Our own additions: "Nesting deeper than 512 levels" (the reference
 * recurses without limit). A message longer than TM_ERR_MAX - 1 bytes is
 * cut there; a NUL inside a quoted fragment ends the message, as %s does in
 * the reference.
 */
#ifndef TM_JSON_H
#define TM_JSON_H

#include <stddef.h>
#include <stdint.h>

#include "util/tm.h"

typedef enum tj_type { TJ_NULL, TJ_BOOL, TJ_INT, TJ_DOUBLE, TJ_STRING, TJ_ARRAY, TJ_OBJECT } tj_type;

#define TJ_MAX_DEPTH 512

typedef struct tj_value tj_value;
struct tj_value {
	tj_type type;
	int b;         /* TJ_BOOL */
	size_t len;    /* TJ_STRING byte length; TJ_ARRAY/TJ_OBJECT item count */
	/* Only the member that `type` names holds the value (the others
	 * read its bytes): 24 bytes a value, where a document of small
	 * containers holds one for every two or three bytes of text. */
	union {
		int64_t i;       /* TJ_INT: a literal without . e E that fits int64 */
		double d;        /* TJ_DOUBLE */
		char *s;         /* TJ_STRING, NUL-terminated; may hold NULs, see len */
		tj_value *items; /* TJ_ARRAY/TJ_OBJECT values, in document order
				  * (NULL when there are none) */
	};
};

/* One key of an object: NUL-terminated, may hold NULs (see len). */
typedef struct tj_key {
	char *s;
	size_t len;
} tj_key;

/* The keys of object `obj`, parallel to its items (duplicates kept), or
 * NULL when it has none. They follow the items in the same block, so an
 * object built by hand keeps its keys right after its obj->len items. */
static inline tj_key *tj_keys(const tj_value *obj)
{
	return obj->items ? (tj_key *)(void *)(obj->items + obj->len) : NULL;
}

/* Parse the first JSON value of buf[0..len). On success *out owns the tree
 * (free with tj_free) and 0 is returned; on failure *out is NULL, err holds
 * one of the texts above (TM_EINPUT) and -1 is returned. */
int tj_parse(const char *buf, size_t len, tj_value **out, tm_error *err);

/* One member of an object read by tj_read_shallow. */
typedef struct tj_member {
	const char *key;   /* not NUL-terminated; holds no escape */
	size_t key_len;
	tj_value v;        /* a scalar as tj_parse makes it, except a string: s
			    * points into the input (not NUL-terminated, its
			    * escapes not decoded when `escaped`); a container
			    * has its type and no items */
	int escaped;
	const char *raw;   /* the value's bytes */
	size_t raw_len;
} tj_member;

/* Return 0 to go on; non-zero makes tj_read_shallow return 0. */
typedef int (*tj_member_fn)(void *ctx, const tj_member *m);

/* Read the object at buf[0] ('{') without building a tree: each member in
 * document order to fn, nested containers checked but not built (a Chrome
 * JSON event needs a few of its top-level members, not its args). Takes
 * only a subset of what tj_parse_prefix takes: strict JSON (no trailing
 * comma), no escape in a top-level key, nesting up to 64 levels. Returns 1
 * with *used set, and then tj_parse_prefix would take the same bytes and
 * make the same values; or 0 (fn may have seen some members), and then
 * tj_parse_prefix is the one to ask, also for the error. */
int tj_read_shallow(const char *buf, size_t len, tj_member_fn fn, void *ctx, size_t *used);

/* Whether fn wants the member with this key: 0 passes its value by,
 * checked as ever but not read (a number's value not made). */
typedef int (*tj_key_fn)(void *ctx, const char *key, size_t key_len);

/* tj_read_shallow, asking `keep` (NULL: every member) about each member's
 * key first: fn sees only the members it keeps. The outcome and *used are
 * the same as tj_read_shallow's. */
int tj_read_shallow_keys(const char *buf, size_t len, tj_key_fn keep, tj_member_fn fn, void *ctx, size_t *used);

/* The value of the LAST member of `obj` whose key is exactly the C string
 * `key` (a key with a NUL inside never matches), or NULL (also when `obj`
 * is NULL or not an object). */
const tj_value *tj_get(const tj_value *obj, const char *key);

/* Is `v` a number (integer or double)? NULL is not. */
int tj_is_number(const tj_value *v);

/* A tree written into a buffer that moves (core/util/ahead.h's logs): appends
 * a copy of `v` and everything under it to b, 8-aligned, with offsets from
 * b->data where the pointers go (0 for NULL, as in core/util/ahead.h's logs),
 * and returns the offset of the copy's root. tj_copy_in turns the
 * copy at `root` back into a tree, in place, once b->data stops moving;
 * it then lives as long as b, and is not freed with tj_free. */
size_t tj_copy_out(const tj_value *v, tm_buf *b);
tj_value *tj_copy_in(char *base, size_t root);

/* `v` as compact JSON appended to b: numbers as read (an integer as one, a
 * double with a '.' or an exponent, so that it reads back as a double),
 * strings escaped, no space. tj_write_members writes an object's members
 * without its braces; tj_write_double a double as tj_write does. */
void tj_write(tm_buf *b, const tj_value *v);
void tj_write_members(tm_buf *b, const tj_value *obj);
void tj_write_double(tm_buf *b, double d);

/* Free a tree returned by tj_parse (NULL is fine). */
void tj_free(tj_value *v);

#endif
