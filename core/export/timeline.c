/* core/export/timeline.c - timeline.tsv from the model's rows: spool each row as
 * a sort record, write the lines in order at the end.
 *
 * A record is a key (ts, seq, kind, sub), a packed body and its strings
 * (name, category, args). Names of threads and tracks are looked up when
 * the line is written, so a thread renamed after its first slice shows
 * the name the reference's thread table ends with. */
#include "export/timeline.h"

#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

typedef struct tl_served tl_served;

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
	atomic_int too_long; /* a block of records past 4 GiB (make_blk) */
	void (*watch)(void *ctx, uint64_t done, uint64_t total); /* the build's */
	void *watch_ctx;
	/* the formatters' batches go to `out` in the order they were handed
	 * out: a batch waits until `turn` is its number */
	pthread_mutex_t mu;
	pthread_cond_t next;
	uint64_t turn;
	/* lines measured, not kept (tl_served): the records go to `recs` in
	 * blocks, and sv notes where each block's lines fall */
	tl_served *sv;
	tm_spool recs;
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
	/* measuring (w->sv): the batch's blocks, made before their turn */
	tm_buf blk;          /* their bytes, one after another (tl_block) */
	tm_buf cuts;         /* per block: a blk_cut */
	tm_buf groups;       /* per block, its groups: blk_group each */
	tm_buf pos;          /* per line of the batch: its record's offset */
	uint32_t *grp_of;    /* per machine row, and one for the rest: its
				group + 1 in the block being made, else 0 */
	uint64_t block_text; /* the lines of the block being made so far */
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

/* What a row's line names, looked up in the model: the same for the line
 * made (write_row) and the line measured (measure_row). */
typedef struct row_refs {
	const char *name, *cat, *args;
	size_t name_len, cat_len;
	const tm_mtrack *t;
	const tm_mthread *th;
	const tm_mprocess *pr;
	int64_t tid;
} row_refs;

static row_refs refs_of(const writer *w, const rec *h, const char *strs)
{
	row_refs r;
	r.name = strs;
	r.cat = strs + h->name_len;
	r.args = r.cat + h->cat_len;
	r.name_len = h->name_len;
	r.cat_len = h->cat_len;
	if (h->name_id)
		r.name = tm_model_string(w->model, h->name_id, &r.name_len);
	if (h->cat_id)
		r.cat = tm_model_string(w->model, h->cat_id, &r.cat_len);
	r.t = h->track != NO_TRACK && h->track < tm_model_n_tracks(w->model) ? tm_model_track(w->model, h->track)
									    : NULL;
	int64_t utid = h->utid >= 0 ? h->utid : r.t ? r.t->utid : -1;
	r.th = utid >= 0 && (size_t)utid < tm_model_n_threads(w->model) ? tm_model_thread(w->model, (size_t)utid)
									 : NULL;
	int64_t upid = r.th && r.th->upid >= 0 ? r.th->upid : r.t ? r.t->upid : -1;
	r.pr = upid >= 0 && (size_t)upid < tm_model_n_processes(w->model) ? tm_model_process(w->model, (size_t)upid)
									   : NULL;
	r.tid = r.th ? r.th->tid : h->tid;
	return r;
}

/* The length of a text as put_str puts it. */
static size_t str_len(const char *s)
{
	return s ? tm_field_len(s, strlen(s)) : 0;
}

/* The length of the line write_row makes of the row, without making it:
 * the pass that counts the lines of a view made when read (tl_served)
 * needs their lengths alone. What is dear to measure but rare (a sched
 * row's or a sample's args) is made in f->text and measured there. A
 * length that differs from the line's fails the read of its block
 * ("damaged"), so the tests of every fixture's views check the two
 * agree. */
static size_t measure_row(fmt *f, const rec *h, const char *strs)
{
	writer *w = f->w;
	row_refs r = refs_of(w, h, strs);
	/* twelve columns: eleven tabs and the newline */
	size_t n = 12 + tm_i64_len(h->ts) + strlen(kind_names[h->kind]) + tm_field_len(r.cat, r.cat_len);
	if (h->dur != INT64_MIN)
		n += tm_i64_len(h->dur);
	if (h->machine_row < w->n_dirs)
		n += w->dir_f[h->machine_row].n;
	if (h->file_id < w->n_files)
		n += w->file_f[h->file_id].n;
	switch (h->kind) {
	case K_COUNTER: n += r.t ? track_name(f, h->track, r.t)->n : 0; break;
	case K_SCHED: n += str_len(r.th ? r.th->name : NULL); break;
	case K_SAMPLE: {
		const tm_mcallsite *c = tm_model_callsite(w->model, h->cpu);
		const tm_mframe *fr = c ? tm_model_frame(w->model, c->frame) : NULL;
		n += str_len(fr ? tm_mframe_text(fr) : NULL);
		break;
	}
	default: n += tm_field_len(r.name, r.name_len);
	}
	if (h->depth >= 0)
		n += tm_i64_len(h->depth);
	if (r.pr)
		n += tm_i64_len(r.pr->pid);
	if (r.tid >= 0)
		n += tm_i64_len(r.tid);
	if (h->kind == K_SCHED || h->kind == K_FTRACE)
		n += 4 + tm_i64_len(h->cpu);
	else if (r.t && r.t->scope == TM_SCOPE_CPU && r.t->cpu >= 0)
		n += 4 + tm_i64_len(r.t->cpu);
	else if (r.t)
		n += strlen(scope_names[r.t->scope]) + (r.t->name ? 1 + track_name(f, h->track, r.t)->n : 0);
	if (h->kind == K_SCHED || h->kind == K_SAMPLE) {
		tm_buf *o = &f->text;
		size_t start = o->len;
		if (h->kind == K_SCHED)
			sched_args(o, h, r.args);
		else
			sample_args(o, w->model, h->cpu);
		n += o->len - start;
		o->len = start;
	} else if (h->value) {
		/* {"value":v}, v as tm_timeline_number writes it */
		n += 10 + (isfinite(h->dv) ? tm_double_len(h->dv) : 4);
	} else {
		n += h->args_len;
	}
	return n;
}

/* The row's line, made once, at the end of the formatter's text (put in
 * the whole merge's file and its machine's by fmt_flush). */
static void write_row(fmt *f, const rec *h, const char *strs)
{
	writer *w = f->w;
	row_refs r = refs_of(w, h, strs);
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
	tm_buf_put_field(o, r.cat, r.cat_len);
	tm_buf_putc(o, '\t');
	switch (h->kind) {
	case K_COUNTER:
		if (r.t) {
			const field_text *tn = track_name(f, h->track, r.t);
			tm_buf_put(o, tn->s, tn->n);
		}
		break;
	case K_SCHED: put_str(o, r.th ? r.th->name : NULL); break;
	case K_SAMPLE: {
		const tm_mcallsite *c = tm_model_callsite(w->model, h->cpu);
		const tm_mframe *fr = c ? tm_model_frame(w->model, c->frame) : NULL;
		put_str(o, fr ? tm_mframe_text(fr) : NULL);
		break;
	}
	default: tm_buf_put_field(o, r.name, r.name_len);
	}
	tm_buf_putc(o, '\t');
	if (h->depth >= 0)
		tm_buf_put_i64(o, h->depth);
	tm_buf_putc(o, '\t');
	if (r.pr)
		tm_buf_put_i64(o, r.pr->pid);
	tm_buf_putc(o, '\t');
	if (r.tid >= 0)
		tm_buf_put_i64(o, r.tid);
	tm_buf_putc(o, '\t');
	if (h->kind == K_SCHED || h->kind == K_FTRACE) {
		tm_buf_put(o, "cpu:", 4);
		tm_buf_put_i64(o, h->cpu);
	} else if (r.t && r.t->scope == TM_SCOPE_CPU && r.t->cpu >= 0) {
		/* a CPU's counter hangs off that CPU, as its sched lines do:
		 * its name is in the name column, and per-CPU counters of one
		 * name (cpufreq, a perf session's) stay apart */
		tm_buf_put(o, "cpu:", 4);
		tm_buf_put_i64(o, r.t->cpu);
	} else if (r.t) {
		put_str(o, scope_names[r.t->scope]);
		if (r.t->name) {
			tm_buf_putc(o, ':');
			const field_text *tn = track_name(f, h->track, r.t);
			tm_buf_put(o, tn->s, tn->n);
		}
	}
	tm_buf_putc(o, '\t');
	/* compact JSON holds no raw tab, newline or NUL: written as is, so
	 * `cut -f12 | jq` reads it */
	if (h->kind == K_SCHED) {
		sched_args(o, h, r.args);
	} else if (h->kind == K_SAMPLE) {
		sample_args(o, w->model, h->cpu);
	} else if (h->value) {
		tm_buf_puts(o, "{\"value\":");
		tm_timeline_number(o, h->dv);
		tm_buf_putc(o, '}');
	} else {
		tm_buf_put(o, r.args, h->args_len);
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

/* The line of one record as the sort hands it out (body, then strings),
 * made, or with `measure` only measured: its machine row and length go to
 * f->ends all the same. Returns that length (0: the record is damaged). */
static uint64_t write_record(fmt *f, const char *r, uint32_t len, int measure)
{
	rec h = {0}; /* every field is set when strs is not NULL; gcc's
		      * -fsanitize=thread build cannot tell */
	const char *strs = unpack_rec(r, len, &h);
	if (strs && measure) {
		uint64_t end[2] = {h.machine_row, measure_row(f, &h, strs)};
		tm_buf_put(&f->ends, end, sizeof end);
		return end[1];
	}
	if (strs) {
		size_t start = f->text.len;
		write_row(f, &h, strs);
		return f->text.len - start;
	}
	/* the pass fails with it: no more lines are made */
	atomic_store_explicit(&f->w->damaged, 1, memory_order_relaxed);
	atomic_store_explicit(&f->w->gone, 1, memory_order_relaxed);
	return 0;
}

/* A write of the lines failed (a full disk, or a streamed file's reader
 * gone: EPIPE with SIGPIPE ignored): the pass fails with it anyway, so the
 * rest is not formatted. Asked by the formatter that writes. */
static void note_gone(writer *w)
{
	if (tm_spool_failed(w->sv ? &w->recs : &w->out.all))
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

/* ---- lines made when read ------------------------------------------------ */

/* A mount keeps timeline.tsv to serve reads at any offset. Kept as text it
 * took 3.1 times its input in TMPDIR (the proto bench's 416 MB for 133
 * MB; the machines' views refer to it), where the sorted records the lines
 * are made from take a third of that. So a view read later keeps the
 * records instead, in blocks of about BLOCK_TEXT bytes of lines, and a
 * read formats its block (with the model, kept for it). The pass measures
 * every line (measure_row) for the views' exact sizes, which stat needs. */
#define BLOCK_TEXT (512u * 1024u)
/* Blocks made for reads and kept for the reads after them; a read also has
 * the next SERVED_AHEAD blocks of its view made, on threads of their own:
 * a reader going through the file finds them made (both cores: making a
 * block takes longer than handing its bytes over). */
#define SERVED_CACHE 8
#define SERVED_AHEAD 2
/* A buffer of a block that held far more than blocks do (a line may be of
 * any length) is let go once used, not kept while the mount lasts. */
#define SERVED_KEEP (4u * BLOCK_TEXT)
/* The least of lines a block made ahead holds (block_text). */
#define AHEAD_MIN (BLOCK_TEXT / 4)

/* A block in the records file: its records grouped by machine, so that a
 * machine's view reads its own records alone (machines run at the same
 * time, so each block holds lines of most of them: the proto bench's 190
 * machines each read every block's records of the whole file). Varints:
 * the number of groups and of records, each group's bytes; then, per
 * record in the whole view's order, its group; then the groups, each its
 * records in that order ([u32 length][record], as the sort hands them
 * out). A group is a machine row's records, or those of rows past the
 * machines' (none with a view of their own). */
typedef struct tl_block {
	uint64_t text_at;         /* where its lines start in the whole view,
				     after the header (first: last_at_most) */
	uint64_t rec_at, rec_len; /* its bytes in the records file */
} tl_block;

/* A block that holds lines of one machine: where they start in that
 * machine's view (after the header), and its group's records. */
typedef struct tl_mblock {
	uint64_t text_at; /* first: last_at_most */
	uint32_t block;
	uint32_t off, len; /* the group's bytes in the block (24 bytes in all:
			      the proto bench's 190 machines have 150,000) */
} tl_mblock;

/* A block being made (fmt.cuts): the batch's lines before its end, its
 * bytes in fmt.blk, its groups in fmt.groups. */
typedef struct blk_cut {
	uint64_t line_end, bytes;
	uint32_t n_groups;
} blk_cut;

typedef struct blk_group {
	uint64_t row;  /* the machine row, or n_mach: the rest */
	uint64_t off;  /* its records' offset in the block */
	uint64_t len;  /* and their bytes */
	uint64_t text; /* their lines' bytes */
	uint64_t at;   /* where the next of its records goes, while made */
} blk_group;

typedef struct tl_mach {
	tl_mblock *b;
	size_t n, cap;
	uint64_t size; /* its lines' bytes */
} tl_mach;

typedef struct tl_cached {
	size_t row;    /* TM_SPOOLED_ALL: the whole view's lines */
	size_t block;  /* SIZE_MAX: none */
	uint64_t used; /* the read that last used it */
	int making;    /* its text is being made (by the thread that set it) */
	tm_buf text;
} tl_cached;

/* What making a block takes: a formatter, the block's bytes, and its
 * groups' places (make_whole). */
typedef struct tl_maker {
	fmt f;
	tm_buf recs;
	tm_buf cursors;
} tl_maker;

struct tl_served {
	tm_model *model;    /* the tables the lines name, once handed over
			       (tm_timeline_hold_model) */
	writer w;           /* the model and the machine and file columns */
	int fd;             /* the records */
	tl_block *blocks;
	size_t n_blocks, cap_blocks;
	uint64_t text_size; /* the whole view's lines */
	tl_mach *mach;      /* by machine row */
	size_t n_mach;
	/* reads come on several threads, and blocks are made on others: mu
	 * guards the cache, the makers and `ahead`; `made` is signalled when
	 * a block is done or a maker comes back */
	pthread_mutex_t mu;
	pthread_cond_t made;
	tl_cached cache[SERVED_CACHE];
	uint64_t reads;
	tl_maker **idle;    /* makers not in use */
	size_t n_idle, cap_idle;
	unsigned ahead;     /* threads making blocks ahead, not done */
};

static void put_uv(tm_buf *b, uint64_t v)
{
	TM_GROW(b->data, b->cap, b->len + 10);
	b->len = (size_t)((char *)tm_uv_put((uint8_t *)b->data + b->len, v) - b->data);
}

/* The group of a block line i's record is in (tl_block): its machine
 * row's, or with a row past the nm machines' the rest's (index nm of
 * grp_of). */
static size_t group_key(const fmt *f, size_t i, size_t nm)
{
	uint64_t row;
	memcpy(&row, f->ends.data + i * 2 * sizeof row, sizeof row);
	return row < nm ? (size_t)row : nm;
}

/* The block of the batch's lines [l0, l1) (their records at f->pos, their
 * rows and lengths in f->ends), made at the end of f->blk (tl_block). */
static void make_blk(fmt *f, const tm_buf *batch, size_t l0, size_t l1)
{
	size_t nm = f->w->sv->n_mach, g0 = f->groups.len / sizeof(blk_group), start = f->blk.len;
	uint32_t ng = 0;
	for (size_t i = l0; i < l1; i++) {
		uint64_t end[2], at;
		memcpy(end, f->ends.data + i * sizeof end, sizeof end);
		memcpy(&at, f->pos.data + i * sizeof at, sizeof at);
		size_t key = group_key(f, i, nm);
		if (!f->grp_of[key]) {
			blk_group g = {key, 0, 0, 0, 0};
			tm_buf_put(&f->groups, &g, sizeof g);
			f->grp_of[key] = ++ng;
		}
		blk_group *g = (blk_group *)f->groups.data + g0 + f->grp_of[key] - 1;
		uint32_t len;
		memcpy(&len, batch->data + at, 4);
		g->len += 4 + (uint64_t)len;
		g->text += end[1];
	}
	blk_group *gs = (blk_group *)f->groups.data + g0;
	put_uv(&f->blk, ng);
	put_uv(&f->blk, l1 - l0);
	for (uint32_t k = 0; k < ng; k++)
		put_uv(&f->blk, gs[k].len);
	for (size_t i = l0; i < l1; i++)
		put_uv(&f->blk, f->grp_of[group_key(f, i, nm)] - 1);
	uint64_t off = f->blk.len - start;
	for (uint32_t k = 0; k < ng; k++) {
		gs[k].off = gs[k].at = off;
		off += gs[k].len;
	}
	if (off > UINT32_MAX) { /* a group's place is 32 bits (tl_mblock) */
		atomic_store_explicit(&f->w->too_long, 1, memory_order_relaxed);
		atomic_store_explicit(&f->w->gone, 1, memory_order_relaxed);
		return;
	}
	TM_RESERVE(f->blk.data, f->blk.cap, start + off);
	for (size_t i = l0; i < l1; i++) {
		uint64_t at;
		memcpy(&at, f->pos.data + i * sizeof at, sizeof at);
		blk_group *g = &gs[f->grp_of[group_key(f, i, nm)] - 1];
		uint32_t len;
		memcpy(&len, batch->data + at, 4);
		memcpy(f->blk.data + start + g->at, batch->data + at, 4 + (size_t)len);
		g->at += 4 + (uint64_t)len;
	}
	f->blk.len = start + off;
	for (uint32_t k = 0; k < ng; k++)
		f->grp_of[gs[k].row] = 0;
	blk_cut c = {l1, off, ng};
	tm_buf_put(&f->cuts, &c, sizeof c);
}

/* A batch's lines measured, not made: their lengths go to f->ends, and its
 * blocks, cut where their lines reach BLOCK_TEXT and at the end of the
 * batch, are made (make_blk) while other batches are: at its turn they
 * are only written (note_blocks). */
static void count_lines(fmt *f, const tm_buf *batch)
{
	size_t at = 0, line = 0, first = 0;
	while (at + 4 <= batch->len && !atomic_load_explicit(&f->w->gone, memory_order_relaxed)) {
		uint32_t len;
		memcpy(&len, batch->data + at, 4);
		uint64_t pos = at;
		tm_buf_put(&f->pos, &pos, sizeof pos);
		f->block_text += write_record(f, batch->data + at + 4, len, 1);
		if (atomic_load_explicit(&f->w->gone, memory_order_relaxed))
			return; /* damaged: the pass fails, nothing is noted */
		at += 4 + (size_t)len;
		line++;
		if (f->block_text >= BLOCK_TEXT || at + 4 > batch->len) {
			make_blk(f, batch, first, line);
			first = line;
			f->block_text = 0;
		}
	}
}

/* The batch's blocks, in turn: to the records file, and where their lines
 * fall in each view. */
static void note_blocks(fmt *f)
{
	writer *w = f->w;
	tl_served *sv = w->sv;
	const blk_group *g = (const blk_group *)f->groups.data;
	size_t from = 0;
	for (size_t c = 0; c + sizeof(blk_cut) <= f->cuts.len; c += sizeof(blk_cut)) {
		blk_cut cut;
		memcpy(&cut, f->cuts.data + c, sizeof cut);
		uint32_t bi = (uint32_t)sv->n_blocks;
		uint64_t rec_at = w->recs.size;
		TM_GROW(sv->blocks, sv->cap_blocks, sv->n_blocks + 1);
		sv->blocks[sv->n_blocks++] = (tl_block){sv->text_size, rec_at, cut.bytes};
		tm_spool_put(&w->recs, f->blk.data + from, (size_t)cut.bytes);
		for (uint32_t k = 0; k < cut.n_groups; k++, g++) {
			sv->text_size += g->text;
			if (g->row >= sv->n_mach)
				continue;
			tl_mach *mc = &sv->mach[g->row];
			TM_GROW(mc->b, mc->cap, mc->n + 1);
			mc->b[mc->n++] = (tl_mblock){mc->size, bi, (uint32_t)g->off, (uint32_t)g->len};
			mc->size += g->text;
		}
		from += (size_t)cut.bytes;
	}
}

/* tm_relay's fn: records as the sort stores them, [u32 length][record]...,
 * formatted, then written when the batches before it are (or, counted,
 * noted: w->sv). A batch after a failed write is not formatted, but still
 * takes its turn. */

static void write_batch(void *ctx, const tm_buf *batch)
{
	fmt *f = ctx;
	writer *w = f->w;
	uint64_t n = f->batches++ * f->of + f->index;
	if (w->sv)
		count_lines(f, batch);
	else if (!atomic_load_explicit(&w->gone, memory_order_relaxed))
		for (size_t at = 0; at + 4 <= batch->len;) {
			uint32_t len;
			memcpy(&len, batch->data + at, 4);
			write_record(f, batch->data + at + 4, len, 0);
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
		if (w->sv)
			note_blocks(f);
		else
			fmt_flush(f);
		note_gone(w);
	}
	f->text.len = f->ends.len = f->cuts.len = f->blk.len = f->groups.len = f->pos.len = 0;
	f->block_text = 0;
	pthread_mutex_lock(&w->mu);
	w->turn++;
	pthread_cond_broadcast(&w->next);
	pthread_mutex_unlock(&w->mu);
}

static void fmt_free(fmt *f)
{
	tm_buf_free(&f->text);
	tm_buf_free(&f->ends);
	tm_buf_free(&f->cuts);
	tm_buf_free(&f->blk);
	tm_buf_free(&f->groups);
	tm_buf_free(&f->pos);
	free(f->grp_of);
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
		if (w->sv)
			f[i].grp_of = tm_xcalloc(w->sv->n_mach + 1, sizeof(*f[i].grp_of));
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
		f[0].of = 1; /* every batch is f[0]'s */
	}
	tm_buf one = {0}; /* counted on this thread alone: its batches */
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
		if (!n_rl && w->sv) {
			tm_buf_put(&one, &len, 4);
			tm_buf_put(&one, r, len);
			if (one.len >= BATCH) {
				write_batch(&f[0], &one);
				one.len = 0;
			}
			continue;
		}
		if (!n_rl) {
			write_record(&f[0], r, len, 0);
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
	if (one.len)
		write_batch(&f[0], &one);
	tm_buf_free(&one);
	for (unsigned j = 0; j < FORMATTERS; j++)
		fmt_free(&f[j]);
	pthread_cond_destroy(&w->next);
	pthread_mutex_destroy(&w->mu);
	if (k >= 0 && atomic_load_explicit(&w->damaged, memory_order_relaxed)) {
		tm_err(err, TM_EIO, "a temporary file is damaged");
		k = -1;
	} else if (k >= 0 && atomic_load_explicit(&w->too_long, memory_order_relaxed)) {
		tm_err(err, TM_EIO, "timeline.tsv: a row of more than 4 GiB");
		k = -1;
	}
	if (w->watch && k == 0)
		w->watch(w->watch_ctx, i, total);
	return k < 0 ? -1 : 0;
}

/* ---- reading the lines made when read ------------------------------------ */

#define HEADER_LEN (sizeof TM_TIMELINE_HEADER - 1)

static int damaged(tm_error *err)
{
	return tm_err(err, TM_EIO, "timeline.tsv: a temporary file is damaged"), -1;
}

/* The block a view's offset falls in (span_at): its index in sv->blocks,
 * where its lines start and end in the view, the bytes to read for them
 * (the whole block, or the machine's group of it), and the index to find
 * the next one by (of sv->blocks or of the machine's). */
typedef struct tl_span {
	size_t block, i;
	uint64_t start, stop;
	uint64_t rec_at, rec_len;
} tl_span;

static tl_span span_at(const tl_served *sv, const tl_mach *mc, size_t i)
{
	tl_span sp = {.i = i};
	if (mc) {
		sp.block = mc->b[i].block;
		sp.start = mc->b[i].text_at;
		sp.stop = i + 1 < mc->n ? mc->b[i + 1].text_at : mc->size;
		sp.rec_at = sv->blocks[sp.block].rec_at + mc->b[i].off;
		sp.rec_len = mc->b[i].len;
	} else {
		sp.block = i;
		sp.start = sv->blocks[i].text_at;
		sp.stop = i + 1 < sv->n_blocks ? sv->blocks[i + 1].text_at : sv->text_size;
		sp.rec_at = sv->blocks[i].rec_at;
		sp.rec_len = sv->blocks[i].rec_len;
	}
	return sp;
}

/* The line of the record at p ([u32 length][record]) in f->text, when
 * it lies within [p, end), is one pack_rec wrote and is machine `row`'s
 * (TM_SPOOLED_ALL: any): the bytes it takes, else 0. */
static size_t make_line(fmt *f, size_t row, const char *p, const char *end)
{
	uint32_t n;
	if (end - p < 4)
		return 0;
	memcpy(&n, p, 4);
	rec h = {0};
	const char *strs = n <= (size_t)(end - p - 4) ? unpack_rec(p + 4, n, &h) : NULL;
	if (!strs || (row != TM_SPOOLED_ALL && h.machine_row != row))
		return 0;
	write_row(f, &h, strs);
	return 4 + (size_t)n;
}

/* The whole view's lines of a block (tl_block): its groups' records,
 * interleaved again in the order its list gives. Returns 0 when the block
 * is not one make_blk made. */
static int make_whole(fmt *f, tm_buf *cursors, const char *base, const char *end)
{
	const uint8_t *qend = (const uint8_t *)end;
	uint64_t size = (uint64_t)(end - base), ng, nrec;
	const uint8_t *q = get_uv(get_uv((const uint8_t *)base, qend, &ng), qend, &nrec);
	if (!q || ng > size || nrec > size)
		return 0;
	/* per group: where its next record is, and where its records end */
	cursors->len = 0;
	uint64_t sum = 0;
	for (uint64_t g = 0; g < ng; g++) {
		uint64_t len;
		q = get_uv(q, qend, &len);
		if (!q || len > size)
			return 0;
		uint64_t pair[2] = {sum, sum + len};
		sum += len;
		tm_buf_put(cursors, pair, sizeof pair);
	}
	const uint8_t *list = q;
	for (uint64_t i = 0, g; i < nrec && q; i++)
		q = get_uv(q, qend, &g);
	if (!q || (uint64_t)(qend - q) != sum)
		return 0;
	uint64_t *cur = (uint64_t *)cursors->data;
	const char *data = (const char *)q;
	for (uint64_t i = 0; i < nrec; i++) {
		uint64_t g;
		list = get_uv(list, qend, &g);
		size_t took = g < ng ? make_line(f, TM_SPOOLED_ALL, data + cur[2 * g], data + cur[2 * g + 1]) : 0;
		if (!took)
			return 0;
		cur[2 * g] += took;
	}
	for (uint64_t g = 0; g < ng; g++)
		if (cur[2 * g] != cur[2 * g + 1])
			return 0;
	return 1;
}

/* The lines of span sp of machine `row`'s view (TM_SPOOLED_ALL: the
 * whole merge's), made into `text` with maker k: as many bytes as the
 * pass counted. Runs without sv->mu: what it reads of sv is fixed once
 * the pass is done. */
static int make_block(tl_served *sv, tl_maker *k, size_t row, const tl_span *sp, tm_buf *text, tm_error *err)
{
	TM_GROW(k->recs.data, k->recs.cap, sp->rec_len);
	ssize_t got = tm_pread_full(sv->fd, k->recs.data, (size_t)sp->rec_len, sp->rec_at);
	if (got < 0)
		return tm_err(err, TM_EIO, "timeline.tsv: cannot read a temporary file: %s", strerror(errno)), -1;
	fmt *f = &k->f;
	tm_buf own = f->text;
	f->text = *text;
	f->text.len = 0;
	const char *p = k->recs.data, *end = p + got;
	int ok = (uint64_t)got == sp->rec_len;
	if (ok && row == TM_SPOOLED_ALL) {
		ok = make_whole(f, &k->cursors, p, end);
	} else {
		/* a machine's group: its records one after another */
		for (size_t took = 1; ok && p < end; p += took)
			ok = (took = make_line(f, row, p, end)) != 0;
	}
	f->ends.len = 0;
	*text = f->text;
	f->text = own;
	return ok && text->len == sp->stop - sp->start ? 0 : damaged(err);
}

/* A maker for one block (caller holds sv->mu), given back with maker_put. */
static tl_maker *maker_get(tl_served *sv)
{
	if (sv->n_idle)
		return sv->idle[--sv->n_idle];
	tl_maker *k = tm_xcalloc(1, sizeof(*k));
	k->f.w = &sv->w;
	return k;
}

/* A maker back, its buffers let go when one block of long lines (a
 * sample's stack of thousands of frames) grew them past what blocks
 * take: the mount keeps its makers until it ends. */
static void maker_put(tl_served *sv, tl_maker *k)
{
	if (k->recs.cap > SERVED_KEEP)
		tm_buf_free(&k->recs);
	if (k->f.text.cap > SERVED_KEEP)
		tm_buf_free(&k->f.text);
	TM_GROW(sv->idle, sv->cap_idle, sv->n_idle + 1);
	sv->idle[sv->n_idle++] = k;
}

static tl_cached *cache_find(tl_served *sv, size_t row, size_t bi)
{
	for (size_t i = 0; i < SERVED_CACHE; i++)
		if (sv->cache[i].block == bi && sv->cache[i].row == row)
			return &sv->cache[i];
	return NULL;
}

/* The entry to make (row, bi) in, taken from the one least lately used
 * that is not being made, and for a block made ahead (spare set) not used
 * by the last few reads either (another reader may be in it: three
 * readers going through views at once would otherwise take each other's
 * blocks before they are done with them); NULL when there is none. Caller
 * holds sv->mu. */
static tl_cached *cache_claim(tl_served *sv, size_t row, size_t bi, int spare)
{
	tl_cached *c = NULL;
	for (size_t i = 0; i < SERVED_CACHE; i++) {
		tl_cached *e = &sv->cache[i];
		if (e->making || (spare && e->block != SIZE_MAX && e->used + SERVED_CACHE / 2 > sv->reads))
			continue;
		if (!c || e->used < c->used)
			c = e;
	}
	if (c) {
		c->row = row;
		c->block = bi;
		c->making = 1;
		c->used = ++sv->reads;
	}
	return c;
}

/* Make the claimed entry c (the span sp of its row) and mark it done (or
 * empty, when it failed: a reader makes it again, and says why). Caller
 * holds sv->mu, which is let go meanwhile. */
static int cache_make(tl_served *sv, tl_cached *c, const tl_span *sp, tm_error *err)
{
	tl_maker *k = maker_get(sv);
	pthread_mutex_unlock(&sv->mu);
	int rc = make_block(sv, k, c->row, sp, &c->text, err);
	pthread_mutex_lock(&sv->mu);
	maker_put(sv, k);
	c->making = 0;
	if (rc)
		c->block = SIZE_MAX;
	pthread_cond_broadcast(&sv->made);
	return rc;
}

typedef struct tl_ahead {
	tl_served *sv;
	tl_cached *c;
	tl_span sp;
} tl_ahead;

static void *make_ahead(void *arg)
{
	tl_ahead a = *(tl_ahead *)arg;
	free(arg);
	pthread_setname_np(pthread_self(), "tm-lines");
	tm_error err;
	pthread_mutex_lock(&a.sv->mu);
	cache_make(a.sv, a.c, &a.sp, &err); /* a failure is the reader's to say */
	a.sv->ahead--;
	pthread_cond_broadcast(&a.sv->made);
	pthread_mutex_unlock(&a.sv->mu);
	return NULL;
}

/* Have span sp of `row` made on a thread of its own unless it is made or
 * being made already. Caller holds sv->mu. */
static void ahead(tl_served *sv, size_t row, const tl_span *sp)
{
	if (cache_find(sv, row, sp->block))
		return;
	tl_cached *c = cache_claim(sv, row, sp->block, 1);
	if (!c)
		return;
	tl_ahead *a = tm_xmalloc(sizeof(*a));
	*a = (tl_ahead){sv, c, *sp};
	pthread_attr_t at;
	pthread_t th;
	int started = 0;
	if (pthread_attr_init(&at) == 0) {
		started = pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED) == 0 &&
			  pthread_create(&th, &at, make_ahead, a) == 0;
		pthread_attr_destroy(&at);
	}
	if (started) {
		sv->ahead++;
		return;
	}
	free(a); /* no thread: the reader makes it when it gets there */
	c->making = 0;
	c->block = SIZE_MAX;
}

/* The entry that holds the lines of sp, made here unless a read before
 * made them or another thread is at it; the blocks after it are had
 * made ahead. NULL with err set when its records cannot be read. Caller
 * holds sv->mu. */
static tl_cached *block_text(tl_served *sv, size_t row, const tl_mach *mc, const tl_span *sp, tm_error *err)
{
	size_t n = mc ? mc->n : sv->n_blocks;
	for (size_t j = 1; j <= SERVED_AHEAD && sp->i + j < n; j++) {
		tl_span next = span_at(sv, mc, sp->i + j);
		/* a thread for a machine's few lines of a block costs more
		 * than their making (the proto bench's machines have a
		 * block's 190th each): those are made where they are read */
		if (next.stop - next.start >= AHEAD_MIN)
			ahead(sv, row, &next);
	}
	for (;;) {
		tl_cached *c = cache_find(sv, row, sp->block);
		if (c && !c->making) {
			c->used = ++sv->reads;
			return c;
		}
		if (!c && (c = cache_claim(sv, row, sp->block, 0)) != NULL)
			return cache_make(sv, c, sp, err) ? NULL : c;
		pthread_cond_wait(&sv->made, &sv->mu); /* being made, or all are */
	}
}

/* The last of n entries of `elem` bytes whose first field, a uint64,
 * is at most pos (there is one: the first is 0). */
static size_t last_at_most(const void *arr, size_t n, size_t elem, uint64_t pos)
{
	size_t lo = 0, hi = n;
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;
		uint64_t at;
		memcpy(&at, (const char *)arr + mid * elem, sizeof at);
		if (at <= pos)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

/* tm_spooled_src's read: the header, then the lines of the blocks the
 * range meets. A failure after some bytes gives those (as pread(2)); the
 * next read says why. */
static ssize_t served_read(void *ctx, size_t row, void *buf, size_t n, uint64_t off, tm_error *err)
{
	tl_served *sv = ctx;
	if (row != TM_SPOOLED_ALL && row >= sv->n_mach)
		return 0;
	const tl_mach *mc = row == TM_SPOOLED_ALL ? NULL : &sv->mach[row];
	uint64_t size = HEADER_LEN + (mc ? mc->size : sv->text_size);
	size_t got = 0;
	int failed = 0;
	pthread_mutex_lock(&sv->mu);
	while (got < n && off < size) {
		size_t k;
		if (off < HEADER_LEN) {
			k = (size_t)(HEADER_LEN - off) < n - got ? (size_t)(HEADER_LEN - off) : n - got;
			memcpy((char *)buf + got, TM_TIMELINE_HEADER + off, k);
		} else {
			uint64_t pos = off - HEADER_LEN;
			size_t i = mc ? last_at_most(mc->b, mc->n, sizeof *mc->b, pos)
				      : last_at_most(sv->blocks, sv->n_blocks, sizeof *sv->blocks, pos);
			tl_span sp = span_at(sv, mc, i);
			tl_cached *c = block_text(sv, row, mc, &sp, err);
			if (!c) {
				failed = 1;
				break;
			}
			k = (size_t)(sp.stop - pos) < n - got ? (size_t)(sp.stop - pos) : n - got;
			memcpy((char *)buf + got, c->text.data + (pos - sp.start), k);
			/* a block of long lines, read to its end: let its
			 * buffer go rather than keep it for the mount */
			if (pos + k == sp.stop && c->text.cap > SERVED_KEEP) {
				tm_buf_free(&c->text);
				c->block = SIZE_MAX;
			}
		}
		got += k;
		off += k;
	}
	pthread_mutex_unlock(&sv->mu);
	return failed && !got ? -1 : (ssize_t)got;
}

static void served_free(void *ctx)
{
	tl_served *sv = ctx;
	if (!sv)
		return;
	/* the threads making blocks ahead finish first */
	pthread_mutex_lock(&sv->mu);
	while (sv->ahead)
		pthread_cond_wait(&sv->made, &sv->mu);
	pthread_mutex_unlock(&sv->mu);
	if (sv->fd >= 0)
		close(sv->fd);
	free(sv->blocks);
	for (size_t i = 0; i < sv->n_mach; i++)
		free(sv->mach[i].b);
	free(sv->mach);
	for (size_t i = 0; i < SERVED_CACHE; i++)
		tm_buf_free(&sv->cache[i].text);
	for (size_t i = 0; i < sv->n_idle; i++) {
		fmt_free(&sv->idle[i]->f);
		tm_buf_free(&sv->idle[i]->recs);
		tm_buf_free(&sv->idle[i]->cursors);
		free(sv->idle[i]);
	}
	free(sv->idle);
	fields_free(sv->w.dir_f, sv->w.n_dirs);
	fields_free(sv->w.file_f, sv->w.n_files);
	pthread_cond_destroy(&sv->made);
	pthread_mutex_destroy(&sv->mu);
	tm_model_free(sv->model);
	free(sv);
}

int tm_timeline_hold_model(tm_spooled *s, tm_model *model)
{
	if (!s || s->src.read != served_read)
		return 0;
	tl_served *sv = s->src.ctx;
	tm_model_trim(model); /* its tables are all the lines need */
	sv->model = model;
	return 1;
}

/* The views of w's counted lines, read from sv (which they now own). */
static tm_spooled *served_views(tl_served *sv, writer *w)
{
	sv->fd = w->recs.fd;
	w->recs.fd = -1;
	/* the columns the reads write, w's no longer */
	sv->w.model = w->model;
	sv->w.dir_f = w->dir_f;
	sv->w.n_dirs = w->n_dirs;
	sv->w.file_f = w->file_f;
	sv->w.n_files = w->n_files;
	w->dir_f = w->file_f = NULL;
	w->n_dirs = w->n_files = 0;
	tm_spooled *s = tm_xcalloc(1, sizeof(*s));
	s->fd = s->head_fd = s->mach_fd = -1;
	s->size = HEADER_LEN + sv->text_size;
	s->n_mach = sv->n_mach;
	s->mach = tm_xcalloc(sv->n_mach ? sv->n_mach : 1, sizeof(*s->mach));
	for (size_t i = 0; i < sv->n_mach; i++)
		s->mach[i].size = HEADER_LEN + sv->mach[i].size;
	s->src = (tm_spooled_src){served_read, served_free, sv};
	return s;
}

tm_spooled *tm_timeline_finish(tm_timeline_build *b, const tm_model *model, tm_error *err)
{
	size_t nm = b->scan->machines.n;
	writer w = {0};
	tl_served *sv = NULL;
	/* closed at `out` whatever happened: a descriptor 0 there was stdin */
	w.out.all.fd = w.out.mach.file.fd = w.out.head.fd = w.recs.fd = -1;
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
	 * gets the first ones while the rest are formatted. Else they are
	 * made again when read, from their records (tl_served). */
	if (b->out_fd >= 0) {
		tm_views_open_fd(&w.out, b->out_fd);
		tm_views_put_all(&w.out, TM_TIMELINE_HEADER, strlen(TM_TIMELINE_HEADER));
	} else {
		if (tm_spool_open(&w.recs, err))
			goto out;
		sv = tm_xcalloc(1, sizeof(*sv));
		sv->fd = -1;
		for (size_t i = 0; i < SERVED_CACHE; i++)
			sv->cache[i].block = SIZE_MAX;
		pthread_mutex_init(&sv->mu, NULL);
		pthread_cond_init(&sv->made, NULL);
		sv->n_mach = b->per_machine ? nm : 0;
		sv->mach = tm_xcalloc(sv->n_mach ? sv->n_mach : 1, sizeof(*sv->mach));
		w.sv = sv;
	}
	if (write_lines(&w, b->sort, err))
		goto out;
	if (!sv) {
		res = tm_views_take(&w.out, "timeline.tsv", err);
	} else if (tm_spool_finish(&w.recs, "timeline.tsv", err) == 0) {
		res = served_views(sv, &w);
		sv = NULL;
	}
out:
	tm_views_close(&w.out);
	tm_spool_close(&w.recs);
	served_free(sv);
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
