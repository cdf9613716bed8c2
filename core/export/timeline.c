/* core/export/timeline.c - timeline.tsv from the model's rows: spool each row as
 * a sort record, write the lines in order at the end.
 *
 * A record is a key (ts, seq, kind, sub), a packed body and its strings
 * (name, category, args). Names of threads and tracks are looked up when
 * the line is written, so a thread renamed after its first slice shows
 * the name the reference's thread table ends with. */
#include "export/timeline.h"

#include <inttypes.h>
#include <stddef.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/relay.h"
#include "sort/xsort.h"

enum { K_SLICE, K_INSTANT, K_COUNTER, K_SCHED, K_FTRACE, K_SAMPLE };
static const char *const kind_names[] = {"slice", "instant", "counter", "sched", "ftrace", "sample"};
static const char *const scope_names[] = {"thread", "process", "global", "cpu"};

#define NO_TRACK UINT32_MAX

typedef struct rec {
	int64_t ts;
	uint64_t seq;      /* the record that made the row */
	uint32_t kind;
	uint64_t sub;      /* slices: the slice id; others: arrival */
	int64_t dur;       /* INT64_MIN: none */
	int64_t utid;      /* the row's thread, -1: the track's */
	int64_t tid;       /* ftrace: the line's pid, -1 none */
	uint32_t machine_row, file_id, track;
	uint32_t cpu;      /* samples: the leaf callsite */
	int32_t depth;     /* -1: none */
	uint32_t name_len, cat_len, args_len;
	uint32_t name_id, cat_id; /* slices: name and category as the model's
				     string ids (0: the text is in the record) */
	uint8_t has_name, has_cat;
	uint8_t has_state; /* sched: the args part is the end state, else null */
	uint8_t value;     /* counters: the args are the value, dv (VALUE) */
	double dv;
	int32_t prio;      /* sched */
} rec;

struct tm_timeline_build {
	tm_merge *merge;
	int per_machine;   /* every machine's file too (else TM_GEN_TOP) */
	int out_fd;        /* the whole merge's file goes there, -1: spooled */
	const tm_scan *scan;
	tm_xsort *sort;
	uint64_t arrivals;
	tm_error err;      /* the first spooling failure */
	tm_buf args;
	void (*watch)(void *ctx, uint64_t done, uint64_t total); /* tm_timeline_watch */
	void *watch_ctx;
};

void tm_timeline_watch(tm_timeline_build *b, void (*fn)(void *ctx, uint64_t done, uint64_t total), void *ctx)
{
	b->watch = fn;
	b->watch_ctx = ctx;
}

/* A record as the sort holds it: the key at fixed places (rec_cmp reads
 * it there), two bytes of flags, the rest of the rec as varints, then
 * the strings. The key is the time, then seq, kind and sub as one
 * big-endian string of 11 bytes, so that two loads compare them. seq and
 * sub count records and rows, 40 bits each: a trillion rows would take
 * tens of terabytes of sort runs first. A field at its usual value (no
 * thread, no cpu, ...) is a flag and no byte. The rec itself is 104
 * bytes; packed, the proto bench's 3.6 million rows took 191 MB of sort
 * runs with a 25-byte key and every field written, and take 132 MB this
 * way (with the sort's varint lengths, core/sort/xsort.c). The runs grow
 * while the order store they come from drains: `tracemount cat` of that
 * timeline.tsv peaked at 1.8 times the input in TMPDIR, now 1.5. */
#define AT_TS 0
#define AT_ORDER 8     /* seq (5 bytes), kind, sub (5 bytes), big-endian */
#define KEY_BYTES 19
#define BODY_MAX (KEY_BYTES + 2 + 13 * 10) /* flags, then at most 13 varints */
#define BITS40 ((UINT64_C(1) << 40) - 1)

/* NAME_ID, CAT_ID: the model's string id instead of the text; VALUE: a
 * counter's args are its value, the 8 bytes of a double (formatted as
 * {"value":v} when the line is written: 8 bytes where the text took 18
 * in the proto bench's 2.3 million counter rows), or with INT_VALUE a
 * varint when the double is a whole number (most counters are) */
enum { HAS_DUR = 1, HAS_NAME = 2, HAS_CAT = 4, HAS_STATE = 8, NAME_ID = 16, CAT_ID = 32, VALUE = 64, INT_VALUE = 128 };
/* the second byte: which fields differ from their usual value (utid, tid
 * and depth -1, the rest 0) and are written */
enum { P_UTID = 1, P_TID = 2, P_CPU = 4, P_DEPTH = 8, P_NAME = 16, P_CAT = 32, P_ARGS = 64, P_PRIO = 128 };

/* A word in big-endian byte order, whatever the host's (tm_le64 puts it
 * in little-endian order first): the key's bytes compare as numbers. */
static inline uint64_t be64(uint64_t w)
{
	return __builtin_bswap64(tm_le64(w));
}

static inline uint64_t be64_at(const void *p)
{
	uint64_t v;
	memcpy(&v, p, 8);
	return be64(v);
}

/* A counter's value as a varint when it is a whole number a double holds
 * exactly (not -0, which prints as such): *out, 1. */
static int whole_value(double v, int64_t *out)
{
	if (!(v >= -9007199254740992.0 && v <= 9007199254740992.0))
		return 0; /* NaN too */
	int64_t i = (int64_t)v;
	if ((double)i != v || (i == 0 && signbit(v)))
		return 0;
	*out = i;
	return 1;
}

/* h packed into out (BODY_MAX bytes at most): its length. A VALUE row's
 * args are h->dv; *args_kept says whether its 8 bytes still follow. */
static inline __attribute__((always_inline)) size_t pack_rec(const rec *h, uint8_t *out, int *args_kept)
{
	memcpy(out + AT_TS, &h->ts, 8);
	/* bytes 8-15 and 11-18 of the key, as two overlapping stores */
	uint64_t seq = h->seq & BITS40, sub = h->sub & BITS40, kind = (uint8_t)h->kind;
	uint64_t hi = be64(seq << 24 | kind << 16 | sub >> 24);
	uint64_t lo = be64((seq & 0xffff) << 48 | kind << 40 | sub);
	memcpy(out + AT_ORDER, &hi, 8);
	memcpy(out + AT_ORDER + 3, &lo, 8);
	int64_t whole = 0;
	int is_whole = h->value && whole_value(h->dv, &whole);
	*args_kept = !is_whole;
	uint8_t *p = out + KEY_BYTES;
	p[0] = (uint8_t)((h->dur != INT64_MIN ? HAS_DUR : 0) | (h->has_name ? HAS_NAME : 0) |
			 (h->has_cat ? HAS_CAT : 0) | (h->has_state ? HAS_STATE : 0) | (h->name_id ? NAME_ID : 0) |
			 (h->cat_id ? CAT_ID : 0) | (h->value ? VALUE : 0) | (is_whole ? INT_VALUE : 0));
	uint32_t name = h->name_id ? h->name_id : h->name_len, cat = h->cat_id ? h->cat_id : h->cat_len;
	uint32_t args_len = is_whole ? 0 : h->args_len;
	p[1] = (uint8_t)((h->utid != -1 ? P_UTID : 0) | (h->tid != -1 ? P_TID : 0) | (h->cpu ? P_CPU : 0) |
			 (h->depth != -1 ? P_DEPTH : 0) | (name ? P_NAME : 0) | (cat ? P_CAT : 0) |
			 (args_len ? P_ARGS : 0) | (h->prio ? P_PRIO : 0));
	uint8_t present = p[1];
	p += 2;
	if (h->dur != INT64_MIN)
		p = tm_uv_put(p, tm_zz(h->dur));
	if (present & P_UTID)
		p = tm_uv_put(p, tm_zz(h->utid));
	if (present & P_TID)
		p = tm_uv_put(p, tm_zz(h->tid));
	p = tm_uv_put(p, h->machine_row);
	p = tm_uv_put(p, h->file_id);
	p = tm_uv_put(p, (uint32_t)(h->track + 1)); /* NO_TRACK: 0 */
	if (present & P_CPU)
		p = tm_uv_put(p, h->cpu);
	if (present & P_DEPTH)
		p = tm_uv_put(p, tm_zz(h->depth));
	if (present & P_NAME)
		p = tm_uv_put(p, name);
	if (present & P_CAT)
		p = tm_uv_put(p, cat);
	if (present & P_ARGS)
		p = tm_uv_put(p, args_len);
	if (present & P_PRIO)
		p = tm_uv_put(p, tm_zz(h->prio));
	if (is_whole)
		p = tm_uv_put(p, tm_zz(whole));
	return (size_t)(p - out);
}

/* A varint of [p, end), NULL staying NULL (a record's varints are read in
 * a row, and checked once at the end); most are one byte. */
static inline const uint8_t *get_uv(const uint8_t *p, const uint8_t *end, uint64_t *v)
{
	*v = 0;
	if (p && p < end && !(*p & 0x80)) {
		*v = *p;
		return p + 1;
	}
	return p ? tm_uv_get(p, end, v) : NULL;
}

/* The rec a record of len bytes holds; its strings follow at the returned
 * pointer. NULL when it is not one pack_rec can have written: the records
 * are ours, but they went through a temporary file, and a disk may fail
 * silently (the sort checks the records' lengths, not what they hold). */
static const char *unpack_rec(const char *r, size_t len, rec *h)
{
	const uint8_t *p = (const uint8_t *)r, *end = p + len;
	if (len < KEY_BYTES + 2)
		return NULL;
	memcpy(&h->ts, p + AT_TS, 8);
	uint64_t hi = be64_at(p + AT_ORDER), lo = be64_at(p + AT_ORDER + 3);
	h->seq = hi >> 24;
	h->kind = (uint8_t)(hi >> 16);
	h->sub = lo & BITS40;
	p += KEY_BYTES;
	uint8_t flags = p[0], present = p[1];
	p += 2;
	uint64_t dur = 0, utid = 0, tid = 0, row, file, track, cpu = 0, depth = 0, name = 0, cat = 0, args = 0,
		 prio = 0, whole = 0;
	if (flags & HAS_DUR)
		p = get_uv(p, end, &dur);
	if (present & P_UTID)
		p = get_uv(p, end, &utid);
	if (present & P_TID)
		p = get_uv(p, end, &tid);
	p = get_uv(p, end, &row);
	p = get_uv(p, end, &file);
	p = get_uv(p, end, &track);
	if (present & P_CPU)
		p = get_uv(p, end, &cpu);
	if (present & P_DEPTH)
		p = get_uv(p, end, &depth);
	if (present & P_NAME)
		p = get_uv(p, end, &name);
	if (present & P_CAT)
		p = get_uv(p, end, &cat);
	if (present & P_ARGS)
		p = get_uv(p, end, &args);
	if (present & P_PRIO)
		p = get_uv(p, end, &prio);
	if (flags & INT_VALUE)
		p = get_uv(p, end, &whole);
	if (!p || h->kind >= sizeof kind_names / sizeof kind_names[0] || row > UINT32_MAX || file > UINT32_MAX ||
	    track > UINT32_MAX || cpu > UINT32_MAX || name > UINT32_MAX || cat > UINT32_MAX || args > UINT32_MAX)
		return NULL;
	h->dur = flags & HAS_DUR ? tm_unzz(dur) : INT64_MIN;
	h->has_name = (flags & HAS_NAME) != 0;
	h->has_cat = (flags & HAS_CAT) != 0;
	h->has_state = (flags & HAS_STATE) != 0;
	h->value = (flags & VALUE) != 0;
	h->utid = present & P_UTID ? tm_unzz(utid) : -1;
	h->tid = present & P_TID ? tm_unzz(tid) : -1;
	h->machine_row = (uint32_t)row;
	h->file_id = (uint32_t)file;
	h->track = (uint32_t)track - 1;
	h->cpu = (uint32_t)cpu;
	h->depth = present & P_DEPTH ? (int32_t)tm_unzz(depth) : -1;
	h->name_id = flags & NAME_ID ? (uint32_t)name : 0;
	h->name_len = flags & NAME_ID ? 0 : (uint32_t)name;
	h->cat_id = flags & CAT_ID ? (uint32_t)cat : 0;
	h->cat_len = flags & CAT_ID ? 0 : (uint32_t)cat;
	h->args_len = (uint32_t)args;
	h->prio = (int32_t)tm_unzz(prio);
	/* the strings it names are within it; a value not written whole
	 * is its args' 8 bytes */
	if ((uint64_t)h->name_len + h->cat_len + h->args_len > (uint64_t)(end - p) ||
	    (h->value && !(flags & INT_VALUE) && h->args_len != sizeof(double)))
		return NULL;
	h->dv = 0;
	if (flags & INT_VALUE)
		h->dv = (double)tm_unzz(whole);
	else if (h->value)
		memcpy(&h->dv, p + h->name_len + h->cat_len, sizeof h->dv);
	return (const char *)p;
}

/* The key fields of two records (unaligned: read by memcpy, one field at
 * a time: the sorts compare 50 million times). */
#define KEY(p, at, v) memcpy(&(v), (const char *)(p) + (at), sizeof(v))

static int rec_cmp(const void *a, const void *b)
{
	int64_t ta, tb;
	KEY(a, AT_TS, ta);
	KEY(b, AT_TS, tb);
	if (ta != tb)
		return ta < tb ? -1 : 1;
	/* seq, kind, sub: bytes 8-15, then (those equal) 16-18 */
	uint64_t x = be64_at((const char *)a + AT_ORDER), y = be64_at((const char *)b + AT_ORDER);
	if (x != y)
		return x < y ? -1 : 1;
	x = be64_at((const char *)a + AT_ORDER + 3);
	y = be64_at((const char *)b + AT_ORDER + 3);
	return x < y ? -1 : x > y;
}

tm_timeline_build *tm_timeline_new(tm_merge *m, const tm_scan *scan, int per_machine, size_t run_bytes,
				   int out_fd)
{
	tm_timeline_build *b = tm_xcalloc(1, sizeof(*b));
	b->per_machine = per_machine;
	b->out_fd = per_machine ? -1 : out_fd;
	b->merge = m;
	b->scan = scan;
	b->sort = tm_xsort_new(rec_cmp, run_bytes);
	return b;
}

/* A row into the sort. A name or category the model's string pool holds
 * (h->name_id, h->cat_id) goes in as its id and is looked up when the line
 * is written: the sort holds a few bytes instead of the text, a fifth of
 * the proto bench's 282 MB of sort runs. Inlined, with rec_init and
 * pack_rec, into each kind's function, where the fields that kind never
 * has fold away: out of line, packing cost the model's thread 4% more. */
static inline __attribute__((always_inline)) void add(tm_timeline_build *b, rec *h, const char *name,
						      const char *cat, const char *args, size_t args_len)
{
	if (b->err.code != TM_OK)
		return;
	h->has_name = name != NULL;
	h->has_cat = cat != NULL;
	if (h->name_id)
		name = NULL;
	if (h->cat_id)
		cat = NULL;
	h->name_len = name ? (uint32_t)strlen(name) : 0;
	h->cat_len = cat ? (uint32_t)strlen(cat) : 0;
	h->args_len = (uint32_t)args_len;
	uint8_t body[BODY_MAX];
	int args_kept;
	size_t n = pack_rec(h, body, &args_kept);
	tm_xsort_part parts[4] = {{body, n}, {name, h->name_len}, {cat, h->cat_len}, {args, args_kept ? h->args_len : 0}};
	tm_xsort_addv(b->sort, parts, 4, &b->err);
}

/* A record with no dur, depth, thread or track. */
static inline __attribute__((always_inline)) void rec_init(rec *r, uint32_t kind, int64_t ts, uint64_t seq,
							   uint32_t machine_row, uint32_t file_id)
{
	rec h;
	memset(&h, 0, sizeof h);
	h.kind = kind;
	h.ts = ts;
	h.seq = seq;
	h.machine_row = machine_row;
	h.file_id = file_id;
	h.dur = INT64_MIN;
	h.utid = -1;
	h.tid = -1;
	h.track = NO_TRACK;
	h.depth = -1;
	memcpy(r, &h, sizeof h);
}

void tm_timeline_slice(tm_timeline_build *b, const tm_mslice *s)
{
	rec h;
	rec_init(&h, s->dur == 0 ? K_INSTANT : K_SLICE, s->ts, s->seq, s->machine_row, s->file_id);
	h.sub = s->id;
	h.dur = s->dur;
	h.track = s->track;
	h.depth = (int32_t)s->depth;
	h.name_id = s->name ? s->name_id : 0;
	h.cat_id = s->category ? s->cat_id : 0;
	const char *args = s->args ? s->args : "{}";
	add(b, &h, s->name, s->category, args, strlen(args));
}

void tm_timeline_number(tm_buf *b, double v)
{
	if (!isfinite(v)) { /* JSON has no NaN or infinity */
		tm_buf_puts(b, "null");
		return;
	}
	tm_buf_put_double(b, v);
}

void tm_timeline_counter(tm_timeline_build *b, const tm_mcounter *c)
{
	rec h;
	rec_init(&h, K_COUNTER, c->ts, c->seq, c->machine_row, c->file_id);
	h.sub = b->arrivals++;
	h.track = c->track;
	h.value = 1;
	h.dv = c->value;
	add(b, &h, NULL, NULL, (const char *)&c->value, sizeof c->value);
}

void tm_timeline_sched(tm_timeline_build *b, const tm_msched *s)
{
	rec h;
	rec_init(&h, K_SCHED, s->ts, s->seq, s->machine_row, s->file_id);
	h.sub = b->arrivals++;
	h.dur = s->dur;
	h.utid = s->utid;
	h.cpu = s->cpu;
	/* two thirds of the rows of a kernel capture: the args are made
	 * when the line is (sched_args), the record holds the end state
	 * alone, a third of its size less to sort */
	h.prio = s->prio;
	h.has_state = s->end_state != NULL;
	const char *state = s->end_state ? s->end_state : "";
	add(b, &h, NULL, NULL, state, strlen(state));
}

/* A decimal integer that reads back as the same text (no sign but '-', no
 * leading zero, fits in 64 bits). */
static int plain_integer(const char *s, size_t n)
{
	size_t i = s[0] == '-';
	if (i >= n || n - i > 18)
		return 0;
	if (s[i] == '0' && n - i > 1)
		return 0;
	if (s[i] == '0' && i)
		return 0; /* -0 */
	for (; i < n; i++)
		if (s[i] < '0' || s[i] > '9')
			return 0;
	return 1;
}

void tm_timeline_kernel_args(tm_buf *b, const char *text)
{
	/* Fields are `key=value` separated by spaces; a word without '='
	 * continues the value before it (a comm such as "Chrome_IO thread"). */
	size_t n = strlen(text);
	size_t start = b->len;
	tm_buf_puts(b, "{");
	const char *key = NULL, *val = NULL;
	size_t key_len = 0;
	int fields = 0;
	const char *p = text, *end = text + n;
	while (p < end && *p == ' ')
		p++;
	for (;;) {
		const char *w = p;
		while (p < end && *p != ' ')
			p++;
		const char *eq = memchr(w, '=', (size_t)(p - w));
		if (w == p || (eq && eq > w)) {
			if (key) { /* the previous field ends before this word */
				const char *vend = w;
				while (vend > val && vend[-1] == ' ')
					vend--;
				if (fields++)
					tm_buf_puts(b, ",");
				tm_buf_json_string(b, key, key_len);
				tm_buf_puts(b, ":");
				if (plain_integer(val, (size_t)(vend - val)))
					tm_buf_put(b, val, (size_t)(vend - val));
				else
					tm_buf_json_string(b, val, (size_t)(vend - val));
			}
			if (w == p)
				break;
			key = w;
			key_len = (size_t)(eq - w);
			val = eq + 1;
		} else if (!key) {
			b->len = start; /* not key=value text */
			tm_buf_puts(b, "{\"text\":");
			tm_buf_json_string(b, text, n);
			tm_buf_puts(b, "}");
			return;
		}
		while (p < end && *p == ' ')
			p++;
	}
	tm_buf_puts(b, "}");
}

void tm_timeline_kernel(tm_timeline_build *b, const tm_mkernel *k)
{
	rec h;
	rec_init(&h, K_FTRACE, k->ts, k->seq, k->machine_row, k->file_id);
	h.sub = b->arrivals++;
	h.tid = k->tid;
	h.cpu = k->cpu;
	b->args.len = 0;
	tm_timeline_kernel_args(&b->args, k->args ? k->args : "");
	add(b, &h, k->name, NULL, b->args.data, b->args.len);
}

void tm_timeline_sample(tm_timeline_build *b, const tm_msample *s)
{
	rec h;
	rec_init(&h, K_SAMPLE, s->ts, s->seq, s->machine_row, s->file_id);
	h.sub = b->arrivals++;
	h.utid = s->utid;
	h.cpu = s->callsite;
	add(b, &h, NULL, s->source, "", 0);
}

/* ---- writing ---------------------------------------------------------------- */

static void put_str(tm_buf *b, const char *s)
{
	if (s)
		tm_buf_put_field(b, s, strlen(s));
}

/* A text as it goes into a field, escaped once. */
typedef struct field_text {
	char *s;
	size_t n;
} field_text;

typedef struct writer {
	const tm_model *model;
	/* the machine (by row) and file columns of every line, escaped once
	 * (both cost a strlen and an escape scan a line: a tenth of the
	 * formatter's time on the proto bench) */
	field_text *dir_f, *file_f;
	size_t n_dirs, n_files;
	const tm_merge *merge;
	tm_views out;
	atomic_int gone;     /* a write of the lines failed: the rest are not made */
	atomic_int damaged;  /* a record read back was not one pack_rec wrote */
	void (*watch)(void *ctx, uint64_t done, uint64_t total); /* the build's */
	void *watch_ctx;
	/* the formatters' batches go to `out` in the order they were handed
	 * out: a batch waits until `turn` is its number */
	pthread_mutex_t mu;
	pthread_cond_t next;
	uint64_t turn;
} writer;

/* One formatter (write_lines has two): the lines of its batch, made while
 * the other makes the next batch's, then put in the views in turn. */
typedef struct fmt {
	writer *w;
	unsigned index, of;  /* its batches are the index-th of each `of` */
	uint64_t batches;    /* its batches so far */
	tm_buf text;         /* the batch's lines */
	tm_buf ends;         /* per line: its machine row and length, uint64 each */
	field_text *track_f; /* track names, escaped when first written */
	size_t n_track_f;
} fmt;

/* A sched row's args: {"cpu":N,"end_state":S,"prio":P}, S the state its
 * record holds (or null). */
static void sched_args(tm_buf *o, const rec *h, const char *state)
{
	tm_buf_puts(o, "{\"cpu\":");
	tm_buf_put_i64(o, h->cpu);
	tm_buf_puts(o, ",\"end_state\":");
	if (h->has_state)
		tm_buf_json_string(o, state, h->args_len);
	else
		tm_buf_puts(o, "null");
	tm_buf_puts(o, ",\"prio\":");
	tm_buf_put_i64(o, h->prio);
	tm_buf_putc(o, '}');
}

/* A sample's args: {"stack":[{"name":N,"mapping":M},...]}, its frames
 * from the leaf to the root. */
static void sample_args(tm_buf *o, const tm_model *m, uint32_t callsite)
{
	tm_buf_puts(o, "{\"stack\":[");
	const tm_mcallsite *c = tm_model_callsite(m, callsite);
	for (int first = 1; c; first = 0) {
		const tm_mframe *f = tm_model_frame(m, c->frame);
		const tm_mmapping *mp = f ? tm_model_mapping(m, f->mapping) : NULL;
		if (!first)
			tm_buf_putc(o, ',');
		tm_buf_puts(o, "{\"name\":");
		const char *n = f ? tm_mframe_text(f) : "";
		tm_buf_json_string(o, n, strlen(n));
		tm_buf_puts(o, ",\"mapping\":");
		n = mp ? mp->name : "";
		tm_buf_json_string(o, n, strlen(n));
		tm_buf_putc(o, '}');
		c = c->parent == TM_NO_CALLSITE ? NULL : tm_model_callsite(m, c->parent);
	}
	tm_buf_puts(o, "]}");
}

/* s as put_str writes it (NULL: empty). */
static field_text escaped(const char *s)
{
	tm_buf b = {0};
	put_str(&b, s);
	field_text f;
	f.n = b.len;
	f.s = tm_buf_detach(&b, NULL);
	return f;
}

static void fields_free(field_text *f, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(f[i].s);
	free(f);
}

/* A track's name (the model's final one) as a field. */
static const field_text *track_name(fmt *f, uint32_t id, const tm_mtrack *t)
{
	if (id >= f->n_track_f) {
		size_t n = tm_model_n_tracks(f->w->model);
		f->track_f = tm_xrealloc(f->track_f, n * sizeof *f->track_f);
		memset(f->track_f + f->n_track_f, 0, (n - f->n_track_f) * sizeof *f->track_f);
		f->n_track_f = n;
	}
	if (!f->track_f[id].s)
		f->track_f[id] = escaped(t->name);
	return &f->track_f[id];
}

/* The row's line, made once, at the end of the formatter's text (put in
 * the whole merge's file and its machine's by fmt_flush). */
static void write_row(fmt *f, const rec *h, const char *strs)
{
	writer *w = f->w;
	const char *name = strs, *cat = strs + h->name_len, *args = cat + h->cat_len;
	size_t name_len = h->name_len, cat_len = h->cat_len;
	if (h->name_id)
		name = tm_model_string(w->model, h->name_id, &name_len);
	if (h->cat_id)
		cat = tm_model_string(w->model, h->cat_id, &cat_len);
	const tm_mtrack *t = h->track != NO_TRACK && h->track < tm_model_n_tracks(w->model)
				     ? tm_model_track(w->model, h->track)
				     : NULL;
	int64_t utid = h->utid >= 0 ? h->utid : t ? t->utid : -1;
	const tm_mthread *th = utid >= 0 && (size_t)utid < tm_model_n_threads(w->model)
				       ? tm_model_thread(w->model, (size_t)utid)
				       : NULL;
	int64_t upid = th && th->upid >= 0 ? th->upid : t ? t->upid : -1;
	const tm_mprocess *pr = upid >= 0 && (size_t)upid < tm_model_n_processes(w->model)
					? tm_model_process(w->model, (size_t)upid)
					: NULL;
	int64_t tid = th ? th->tid : h->tid;
	tm_buf *o = &f->text;
	size_t start = o->len;
	tm_buf_put_i64(o, h->ts);
	tm_buf_putc(o, '\t');
	if (h->dur != INT64_MIN)
		tm_buf_put_i64(o, h->dur);
	tm_buf_putc(o, '\t');
	if (h->machine_row < w->n_dirs)
		tm_buf_put(o, w->dir_f[h->machine_row].s, w->dir_f[h->machine_row].n);
	tm_buf_putc(o, '\t');
	if (h->file_id < w->n_files)
		tm_buf_put(o, w->file_f[h->file_id].s, w->file_f[h->file_id].n);
	tm_buf_putc(o, '\t');
	put_str(o, kind_names[h->kind]);
	tm_buf_putc(o, '\t');
	tm_buf_put_field(o, cat, cat_len);
	tm_buf_putc(o, '\t');
	switch (h->kind) {
	case K_COUNTER:
		if (t) {
			const field_text *tn = track_name(f, h->track, t);
			tm_buf_put(o, tn->s, tn->n);
		}
		break;
	case K_SCHED: put_str(o, th ? th->name : NULL); break;
	case K_SAMPLE: {
		const tm_mcallsite *c = tm_model_callsite(w->model, h->cpu);
		const tm_mframe *fr = c ? tm_model_frame(w->model, c->frame) : NULL;
		put_str(o, fr ? tm_mframe_text(fr) : NULL);
		break;
	}
	default: tm_buf_put_field(o, name, name_len);
	}
	tm_buf_putc(o, '\t');
	if (h->depth >= 0)
		tm_buf_put_i64(o, h->depth);
	tm_buf_putc(o, '\t');
	if (pr)
		tm_buf_put_i64(o, pr->pid);
	tm_buf_putc(o, '\t');
	if (tid >= 0)
		tm_buf_put_i64(o, tid);
	tm_buf_putc(o, '\t');
	if (h->kind == K_SCHED || h->kind == K_FTRACE) {
		tm_buf_put(o, "cpu:", 4);
		tm_buf_put_i64(o, h->cpu);
	} else if (t && t->scope == TM_SCOPE_CPU && t->cpu >= 0) {
		/* a CPU's counter hangs off that CPU, as its sched lines do:
		 * its name is in the name column, and per-CPU counters of one
		 * name (cpufreq, a perf session's) stay apart */
		tm_buf_put(o, "cpu:", 4);
		tm_buf_put_i64(o, t->cpu);
	} else if (t) {
		put_str(o, scope_names[t->scope]);
		if (t->name) {
			tm_buf_putc(o, ':');
			const field_text *tn = track_name(f, h->track, t);
			tm_buf_put(o, tn->s, tn->n);
		}
	}
	tm_buf_putc(o, '\t');
	/* compact JSON holds no raw tab, newline or NUL: written as is, so
	 * `cut -f12 | jq` reads it */
	if (h->kind == K_SCHED) {
		sched_args(o, h, args);
	} else if (h->kind == K_SAMPLE) {
		sample_args(o, w->model, h->cpu);
	} else if (h->value) {
		tm_buf_puts(o, "{\"value\":");
		tm_timeline_number(o, h->dv);
		tm_buf_putc(o, '}');
	} else {
		tm_buf_put(o, args, h->args_len);
	}
	tm_buf_putc(o, '\n');
	uint64_t end[2] = {h->machine_row, o->len - start};
	tm_buf_put(&f->ends, end, sizeof end);
}

/* ---- the lines, formatted beside the merge ------------------------------------------ */

/* The lines are formatted by two threads of their own (core/util/relay.h)
 * while this one merges the sorted runs (issue 10: both cores). Records go
 * over in batches of BATCH bytes, copied out of the merge's buffers, to
 * each formatter in turn; a formatter makes its batch's lines in a buffer
 * of its own, then waits for the batch before it to be written and
 * writes its own. With one formatter, it was busy all of the end of the
 * proto bench's cat timeline.tsv and this thread two fifths of it. */
#define BATCH (256u * 1024u)
#define FORMATTERS 2
/* The lines a formatter holds before it writes them (its turn come). */
#define FMT_TEXT_MAX (4u << 20)

/* The line of one record as the sort hands it out (body, then strings). */
static void write_record(fmt *f, const char *r, uint32_t len)
{
	rec h = {0}; /* every field is set when strs is not NULL; gcc's
		      * -fsanitize=thread build cannot tell */
	const char *strs = unpack_rec(r, len, &h);
	if (strs) {
		write_row(f, &h, strs);
		return;
	}
	/* the pass fails with it: no more lines are made */
	atomic_store_explicit(&f->w->damaged, 1, memory_order_relaxed);
	atomic_store_explicit(&f->w->gone, 1, memory_order_relaxed);
}

/* A write of the lines failed (a full disk, or a streamed file's reader
 * gone: EPIPE with SIGPIPE ignored): the pass fails with it anyway, so the
 * rest is not formatted. Asked by the formatter that writes. */
static void note_gone(writer *w)
{
	if (tm_spool_failed(&w->out.all))
		atomic_store_explicit(&w->gone, 1, memory_order_relaxed);
}

/* The formatter's lines into the views, each to its machine's too. */
static void fmt_flush(fmt *f)
{
	writer *w = f->w;
	const char *line = f->text.data;
	for (size_t at = 0; at + 2 * sizeof(uint64_t) <= f->ends.len; at += 2 * sizeof(uint64_t)) {
		uint64_t end[2];
		memcpy(end, f->ends.data + at, sizeof end);
		tm_views_put(&w->out, (uint32_t)end[0], line, (size_t)end[1]);
		line += end[1];
	}
	f->text.len = f->ends.len = 0;
}

/* Wait until it is batch n's turn to be written. */
static void wait_turn(writer *w, uint64_t n)
{
	pthread_mutex_lock(&w->mu);
	while (w->turn != n)
		pthread_cond_wait(&w->next, &w->mu);
	pthread_mutex_unlock(&w->mu);
}

/* tm_relay's fn: records as the sort stores them, [u32 length][record]...,
 * formatted, then written when the batches before it are. A batch after
 * a failed write is not formatted, but still takes its turn. */

static void write_batch(void *ctx, const tm_buf *batch)
{
	fmt *f = ctx;
	writer *w = f->w;
	uint64_t n = f->batches++ * f->of + f->index;
	if (!atomic_load_explicit(&w->gone, memory_order_relaxed))
		for (size_t at = 0; at + 4 <= batch->len;) {
			uint32_t len;
			memcpy(&len, batch->data + at, 4);
			write_record(f, batch->data + at + 4, len);
			at += 4 + (size_t)len;
			/* lines far longer than their records (a sample's
			 * stack of thousands of frames) go out before the
			 * batch ends, once it is the batch's turn: a batch's
			 * lines held whole took 900 MB for 110 KB of input */
			if (f->text.len >= FMT_TEXT_MAX && !atomic_load_explicit(&w->gone, memory_order_relaxed)) {
				wait_turn(w, n);
				fmt_flush(f);
				note_gone(w);
			}
		}
	wait_turn(w, n);
	if (!atomic_load_explicit(&w->gone, memory_order_relaxed)) {
		fmt_flush(f);
		note_gone(w);
	} else {
		f->text.len = f->ends.len = 0; /* as fmt_flush leaves them */
	}
	pthread_mutex_lock(&w->mu);
	w->turn++;
	pthread_cond_broadcast(&w->next);
	pthread_mutex_unlock(&w->mu);
}

static void fmt_free(fmt *f)
{
	tm_buf_free(&f->text);
	tm_buf_free(&f->ends);
	fields_free(f->track_f, f->n_track_f);
}

/* Every record of the sort, in order, to w's lines. Returns 0, or -1 with
 * err set when the sort cannot be read. */
static int write_lines(writer *w, tm_xsort *sort, tm_error *err)
{
	fmt f[FORMATTERS];
	tm_relay *rl[FORMATTERS];
	unsigned n_rl = 0;
	memset(f, 0, sizeof f);
	for (unsigned i = 0; i < FORMATTERS; i++) {
		f[i].w = w;
		f[i].index = i;
		f[i].of = FORMATTERS;
	}
	pthread_mutex_init(&w->mu, NULL);
	pthread_cond_init(&w->next, NULL);
	w->turn = 0;
	/* both or none: on one core (or when a thread cannot start) this
	 * thread formats and writes each line itself */
	if (tm_relay_useful())
		while (n_rl < FORMATTERS && (rl[n_rl] = tm_relay_start("tm-format", write_batch, &f[n_rl], 1)) != NULL)
			n_rl++;
	if (n_rl < FORMATTERS) {
		for (unsigned i = 0; i < n_rl; i++)
			tm_relay_finish(rl[i]);
		n_rl = 0;
	}
	const void *r;
	uint32_t len;
	int k;
	unsigned to = 0;
	uint64_t i = 0, total = tm_xsort_count(sort);
	for (; (k = tm_xsort_next(sort, &r, &len, err)) == 1; i++) {
		if (atomic_load_explicit(&w->gone, memory_order_relaxed))
			break;
		if (i % 4096 == 4095 && (k = tm_stopped(err)) != 0)
			break;
		if (w->watch && i % TM_TIMELINE_WRITTEN_STEP == TM_TIMELINE_WRITTEN_STEP - 1)
			w->watch(w->watch_ctx, i + 1, total);
		if (!n_rl) {
			write_record(&f[0], r, len);
			fmt_flush(&f[0]);
			if (i % 4096 == 4095) /* asking takes a lock: not every line */
				note_gone(w);
			continue;
		}
		tm_buf *cur = tm_relay_buf(rl[to]);
		tm_buf_put(cur, &len, 4);
		tm_buf_put(cur, r, len);
		if (cur->len >= BATCH) {
			tm_relay_hand(rl[to]);
			to = (to + 1) % n_rl;
		}
	}
	/* the last batches, in the order they were begun: the formatter
	 * whose turn it is first */
	for (unsigned j = 0; j < n_rl; j++)
		tm_relay_finish(rl[(to + j) % n_rl]);
	for (unsigned j = 0; j < FORMATTERS; j++)
		fmt_free(&f[j]);
	pthread_cond_destroy(&w->next);
	pthread_mutex_destroy(&w->mu);
	if (k >= 0 && atomic_load_explicit(&w->damaged, memory_order_relaxed)) {
		tm_err(err, TM_EIO, "a temporary file is damaged");
		k = -1;
	}
	if (w->watch && k == 0)
		w->watch(w->watch_ctx, i, total);
	return k < 0 ? -1 : 0;
}

tm_spooled *tm_timeline_finish(tm_timeline_build *b, const tm_model *model, tm_error *err)
{
	size_t nm = b->scan->machines.n;
	writer w = {0};
	/* closed at `out` whatever happened: a descriptor 0 there was stdin */
	w.out.all.fd = w.out.mach.file.fd = w.out.head.fd = -1;
	w.model = model;
	w.merge = b->merge;
	w.watch = b->watch;
	w.watch_ctx = b->watch_ctx;
	w.n_dirs = nm;
	char **dirs = tm_machines_dir_names(&b->scan->machines);
	w.dir_f = tm_xcalloc(nm ? nm : 1, sizeof *w.dir_f);
	for (size_t i = 0; i < nm; i++) {
		w.dir_f[i] = escaped(dirs[i]);
		free(dirs[i]);
	}
	free(dirs);
	w.n_files = b->merge->n_files;
	w.file_f = tm_xcalloc(w.n_files ? w.n_files : 1, sizeof *w.file_f);
	for (size_t i = 0; i < w.n_files; i++)
		w.file_f[i] = escaped(b->merge->files[i].name);
	tm_spooled *res = NULL;
	if (b->err.code != TM_OK) {
		*err = b->err;
		goto out;
	}
	if (tm_xsort_finish(b->sort, err))
		goto out;
	/* Streamed, the lines need no temporary file of their own (as large
	 * as the timeline: 2.7 GB for a 1 GB proto capture), and a reader
	 * gets the first ones while the rest are formatted. */
	if (b->out_fd >= 0)
		tm_views_open_fd(&w.out, b->out_fd);
	else if (tm_views_open(&w.out, b->per_machine ? nm : 0, err))
		goto out;
	tm_views_put_all(&w.out, TM_TIMELINE_HEADER, strlen(TM_TIMELINE_HEADER));
	if (write_lines(&w, b->sort, err))
		goto out;
	res = tm_views_take(&w.out, "timeline.tsv", err);
out:
	tm_views_close(&w.out);
	fields_free(w.dir_f, w.n_dirs);
	fields_free(w.file_f, w.n_files);
	tm_timeline_abort(b);
	return res;
}

void tm_timeline_abort(tm_timeline_build *b)
{
	if (!b)
		return;
	tm_xsort_free(b->sort);
	tm_buf_free(&b->args);
	free(b);
}
