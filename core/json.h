/* core/json.h - a small exact JSON parser for documents read whole (the
 * manifest). cJSON cannot keep what spec/manifest.md needs: integer versus
 * double literals (§4), exact int64 values, every duplicate key, and the
 * reference's parse-error texts.
 *
 * Error texts follow the reference parser: the innermost object or array
 * being read names the wrapper ("Failed to parse object: <detail>" /
 * "Failed to parse array: <detail>"), a document that does not start with
 * '{' or '[' gives "Failed to start parsing: <detail>", and input that ends
 * early gives an empty detail. Details covered: a key not starting with
 * '"', a missing ':' or ',', bad true/false/null tokens, bad numbers
 * (quoting the input from the number to the end, as the reference does),
 * bad \u escapes and surrogates. Trailing commas are accepted, unknown
 * escapes are dropped, and bytes after the root value are ignored, as
 * there.
 */
#ifndef TM_JSON_H
#define TM_JSON_H

#include <stddef.h>
#include <stdint.h>

#include "tm.h"

typedef enum tj_type { TJ_NULL, TJ_BOOL, TJ_INT, TJ_DOUBLE, TJ_STRING, TJ_ARRAY, TJ_OBJECT } tj_type;

typedef struct tj_value tj_value;
struct tj_value {
	tj_type type;
	int b;            /* TJ_BOOL */
	int64_t i;        /* TJ_INT: a literal without . e E that fits int64 */
	double d;         /* TJ_DOUBLE */
	char *s;          /* TJ_STRING (NUL-terminated; may hold NULs, see len) */
	size_t len;       /* TJ_STRING length; TJ_ARRAY/TJ_OBJECT item count */
	tj_value *items;  /* TJ_ARRAY/TJ_OBJECT values, in document order */
	char **keys;      /* TJ_OBJECT keys, parallel to items (duplicates kept) */
};

/* Parse the first JSON value of buf[0..len). The root must be an object or
 * an array. On success *out owns the tree (free with tj_free). Errors are
 * TM_EINPUT with the texts above. Nesting deeper than 512 is rejected. */
int tj_parse(const char *buf, size_t len, tj_value **out, tm_error *err);

/* The value of the LAST member named `key` of an object, or NULL. */
const tj_value *tj_get(const tj_value *obj, const char *key);

/* Is `v` a number (integer or double)? */
int tj_is_number(const tj_value *v);

void tj_free(tj_value *v);

#endif
