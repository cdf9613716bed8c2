/* core/formats/json/json_rec.h - the model's record of a Chrome JSON event
 * (TM_MREC_JSON's payload): what the model and the exporter read of an
 * event, taken out of its text once, where the file is read.
 *
 * Why: the generation pass used to keep each event's text in its sort
 * record and parse it again, whole, on the model's thread, after the scan
 * had already read it (issue 10: on the JSON bench, that parse was 1.8 G of
 * the model thread's 3.4 G instructions, while the scan's two threads had
 * room). Now the reader, on whichever thread reads the file
 * (core/util/ahead.h), fills a json_rec_fields from the event's members and
 * encodes it with the args already in the forms their readers want: the
 * exporter's DebugAnnotation fields, the text of the slices' args column,
 * and the few members C and M events act on. The model's thread only
 * decodes it.
 *
 * The fields follow the reference's ParseTraceEventContents (JsonEvent,
 * v58.2): members in document order, each occurrence of a key applying its
 * own rule (json_rec_member), so a record made from a tree (tj_parse) and
 * one made from tj_read_shallow's members are the same bytes; the fuzz
 * target fuzz_json_trace compares the two. Strings the model interns
 * (pid and tid strings, cat, name) are kept in the order the reference
 * interns them, every occurrence, since the model's string ids are given
 * in that order.
 */
#ifndef TM_JSON_REC_H
#define TM_JSON_REC_H

#include <stddef.h>
#include <stdint.h>

#include "util/json.h"
#include "util/tm.h"

/* The args forms a record carries (the model's sinks decide). */
enum {
	JSON_REC_ANNOT = 1, /* the TrackEvent's debug_annotations fields (merged.pftrace) */
	JSON_REC_TEXT = 2,  /* the args as the slices' args column writes them */
};

typedef enum json_rec_id_type { JR_ID_NONE, JR_ID_STR, JR_ID_UINT } json_rec_id_type;

/* An "id", "bind_id" or id2 member: a string (as is) or an integer. */
typedef struct json_rec_id {
	uint8_t type; /* json_rec_id_type */
	const char *s;
	size_t n;
	uint64_t u;
} json_rec_id;

/* What a string the model interns was, in json_rec_fields.strs. */
typedef enum json_rec_str_kind { JR_STR_PID, JR_STR_TID, JR_STR_CAT, JR_STR_NAME } json_rec_str_kind;

typedef enum json_rec_scope { JR_SCOPE_NONE, JR_SCOPE_GLOBAL, JR_SCOPE_PROCESS, JR_SCOPE_THREAD } json_rec_scope;

/* A "pid" or "tid": absent, a number (already coerced to [0, 2^32)) or a
 * string (strs[str]). */
typedef enum json_rec_pid_kind { JR_PID_ABSENT, JR_PID_NUMBER, JR_PID_STRING } json_rec_pid_kind;

#define JSON_REC_NONE UINT32_MAX

/* A string the model interns. */
typedef struct json_rec_str {
	uint8_t kind; /* json_rec_str_kind */
	const char *s;
	size_t n;
} json_rec_str;

/* One event's fields, as the members give them. Strings point into the
 * event (or a tree of it) and must outlive json_rec_encode. */
typedef struct json_rec_fields {
	char phase;
	int64_t dur;          /* ns, -1 when absent */
	uint8_t pid_kind, tid_kind;
	uint32_t pid_str, tid_str; /* strs index, when a string */
	int64_t pid, tid;     /* when a number */
	uint32_t cat, name;   /* strs index of the last non-empty string, or JSON_REC_NONE */
	json_rec_id id, bind_id, id2_local, id2_global;
	int flow_in, flow_out, bind_enclosing;
	uint8_t scope;        /* json_rec_scope */
	/* the last "args" that was an object: a tree, or its text
	 * (tj_read_shallow gives no tree) */
	const tj_value *args;
	const char *args_text;
	size_t args_text_n;
	int has_args;
	/* the strings the model interns, in the reference's order (in
	 * `some` until there are more) */
	json_rec_str *strs;
	size_t n_strs, cap_strs;
	json_rec_str some[4];
	tj_value *id2;        /* an id2 given as text, parsed here */
} json_rec_fields;

/* The top-level members of an event that the reader (core/formats/json/json_trace.c:
 * the first ones, up to JK_BIND_ID) or the record reads; one
 * classification of each key serves both. */
typedef enum json_rec_key {
	JK_PH, JK_TS, JK_DUR, JK_TTS, JK_TDUR, JK_PID, JK_TID, JK_NAME, JK_CAT, JK_ARGS, JK_ID,
	JK_BIND_ID, JK_FLOW_IN, JK_FLOW_OUT, JK_S, JK_BP, JK_ID2,
	JK_OTHER
} json_rec_key;
json_rec_key json_rec_key_of(const char *k, size_t n);

void json_rec_fields_init(json_rec_fields *f);
/* Apply one member (document order). `escaped`: v is a string whose
 * escapes are not decoded (tj_read_shallow), usable only where the rule
 * reads no string; `raw` holds a container's text when v has no items.
 * 0, or -1 when the member cannot be taken this way (the caller reads the
 * event as a tree instead). */
int json_rec_member(json_rec_fields *f, const char *key, size_t key_n, const tj_value *v, int escaped,
		    const char *raw, size_t raw_n);
/* The same for a key already classified. */
int json_rec_member_of(json_rec_fields *f, json_rec_key key, const tj_value *v, int escaped, const char *raw,
		       size_t raw_n);
/* Free what json_rec_member parsed. */
void json_rec_fields_done(json_rec_fields *f);

/* Append the record of f to out (its args in the `forms` wanted, each
 * only for the phases whose readers take it). -1 (out unchanged) when the
 * args text does not parse, which cannot happen for text that
 * tj_read_shallow passed. */
int json_rec_encode(tm_buf *out, json_rec_fields *f, unsigned forms);

/* The record of a whole event object (a tree): members, then encode. */
int json_rec_from_object(tm_buf *out, const tj_value *obj, unsigned forms);

/* A record read back (pointers into it; strings NUL-terminated). */
typedef struct json_rec_view {
	char phase;
	int64_t dur;
	uint8_t pid_kind, tid_kind, scope;
	uint32_t pid_str, tid_str, cat, name;
	int64_t pid, tid;
	json_rec_id id, bind_id, id2_local, id2_global;
	int flow_in, flow_out, bind_enclosing, has_args;
	const char *strs; /* the interned strings: json_rec_next_str */
	size_t n_strs;
	const char *annot; /* JSON_REC_ANNOT: DebugAnnotation fields, or NULL */
	size_t annot_n;
	const char *text;  /* JSON_REC_TEXT: "k":v pairs, or NULL */
	size_t text_n;
	const char *members; /* C and M events: the args' top-level members */
	size_t n_members;
	const char *members_end;
} json_rec_view;

/* 0, or -1 when p[0..n) is not a record. */
int json_rec_decode(const void *p, size_t n, json_rec_view *v);

/* The next of a view's n_strs interned strings, in order: *at starts at
 * v->strs and moves past it. */
void json_rec_next_str(const char **at, json_rec_str *s);

/* One top-level args member of a C or M event. */
typedef struct json_rec_member_view {
	const char *key;
	size_t key_n;
	tj_type type;
	int64_t i;      /* TJ_INT */
	double d;       /* TJ_DOUBLE */
	const char *s;  /* TJ_STRING (NUL-terminated; may hold NULs) */
	size_t n;
} json_rec_member_view;

/* The members in order: *at starts at v->members; 1 while one is read. */
int json_rec_next_member(const json_rec_view *v, const char **at, json_rec_member_view *m);

#endif
