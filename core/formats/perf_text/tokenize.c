/* core/formats/perf_text/tokenize.c - `perf script` text into the scan:
 * each frame and callsite as the reference's tokenizer interns them, each
 * whole sample's time on MONOTONIC (clocks.md §6), its record for the
 * model on the file's one sorter queue and its place on the timeline; a
 * line the reference cannot read ends the file with its error. */
#include "formats/perf_text/perf_text_format.h"

#include <stdlib.h>
#include <string.h>

#include "formats/perf_text/perf_text.h"
#include "util/hash.h"


/* The file's frames, by symbol and mapping: a hash of the two to the
 * frame's id + 1, probing on past a collision of different strings. */
typedef struct pt_frames {
	tm_u64map by_hash;
	tm_buf arena;          /* each frame's symbol, then its mapping */
	struct pt_frame_at {
		size_t at;
		uint32_t sym_n, map_n;
	} *at;
	size_t n, cap;
} pt_frames;

typedef struct pt_tok {
	scan_file *sf;
	tm_clock_tracker *t;
	uint32_t queue;
	perf_text_head head;
	int in_sample;         /* a head was read, its frames are coming */
	uint32_t *frames;      /* the sample's frames so far, leaf first (ids) */
	size_t n_frames, cap_frames;
	tm_buf leaf;           /* the first frame's symbol */
	pt_frames fr;
	tm_u64map callsites;   /* (parent + 1) << 32 | frame -> id + 1 */
	uint32_t n_callsites;
	tm_buf rec;
	int64_t no_frames;
	tm_error *err;
} pt_tok;

/* The file's id of the frame (symbol, mapping); a new one is handed to
 * the model first (the reference makes its mapping and frame as it reads
 * the line, before the sample is whole). */
static uint32_t frame_id(pt_tok *st, const perf_text_frame *f)
{
	pt_frames *fr = &st->fr;
	uint64_t h = tm_khash_pair(tm_khash_bytes(f->symbol, f->symbol_n), tm_khash_bytes(f->mapping, f->mapping_n));
	for (;; h = tm_khash_next(h)) {
		const uint32_t *v = tm_u64map_get(&fr->by_hash, h);
		if (!v)
			break;
		const struct pt_frame_at *a = &fr->at[*v - 1];
		const char *s = fr->arena.data + a->at;
		if (a->sym_n == f->symbol_n && a->map_n == f->mapping_n && memcmp(s, f->symbol, f->symbol_n) == 0 &&
		    memcmp(s + a->sym_n, f->mapping, f->mapping_n) == 0)
			return *v - 1;
	}
	uint32_t id = (uint32_t)fr->n;
	TM_GROW(fr->at, fr->cap, fr->n + 1);
	fr->at[fr->n++] = (struct pt_frame_at){fr->arena.len, (uint32_t)f->symbol_n, (uint32_t)f->mapping_n};
	tm_buf_put(&fr->arena, f->symbol, f->symbol_n);
	tm_buf_put(&fr->arena, f->mapping, f->mapping_n);
	tm_u64map_put(&fr->by_hash, h, id);
	if (scan_wants_records(st->sf)) {
		tm_mrec_head hd = {TM_MREC_PERF_TEXT, PERF_TEXT_FRAME_DEF, 0, st->sf->f->id, st->sf->base_row};
		tm_buf *b = &st->rec;
		b->len = 0;
		tm_mrec_head_put(b, &hd);
		tm_buf_put(b, &id, sizeof id);
		tm_mrec_put_str(b, f->symbol, f->symbol_n);
		tm_mrec_put_str(b, f->mapping, f->mapping_n);
		scan_record_side(st->sf, b->data, b->len);
	}
	return id;
}

/* The file's id of the sample's leaf callsite, its chain made from the
 * root (depth 1 there) as the reference's tokenizer makes it. */
static uint32_t leaf_callsite(pt_tok *st)
{
	uint32_t parent = UINT32_MAX;
	for (size_t d = 0; d < st->n_frames; d++) {
		uint32_t frame = st->frames[st->n_frames - 1 - d];
		uint64_t key = (uint64_t)(parent == UINT32_MAX ? 0 : (uint64_t)parent + 1) << 32 | frame;
		const uint32_t *v = tm_u64map_get(&st->callsites, key);
		if (v) {
			parent = *v - 1;
			continue;
		}
		uint32_t id = st->n_callsites++;
		tm_u64map_put(&st->callsites, key, id);
		if (scan_wants_records(st->sf)) {
			tm_mrec_head hd = {TM_MREC_PERF_TEXT, PERF_TEXT_CALLSITE_DEF, 0, st->sf->f->id, st->sf->base_row};
			tm_perf_text_callsite c = {id, parent, frame, (uint32_t)d + 1};
			tm_buf *b = &st->rec;
			b->len = 0;
			tm_mrec_head_put(b, &hd);
			tm_buf_put(b, &c, sizeof c);
			scan_record_side(st->sf, b->data, b->len);
		}
		parent = id;
	}
	return parent;
}

/* The context a message quotes: a C string, so up to its first NUL. */
static int quoted(const char *p, size_t n)
{
	const char *z = memchr(p, '\0', n);
	return (int)(z ? (size_t)(z - p) : n);
}

static void sample(pt_tok *st)
{
	scan_file *sf = st->sf;
	const perf_text_head *hd = &st->head;
	/* the reference interns the stack before it places the sample */
	uint32_t leaf = scan_wants_records(sf) ? leaf_callsite(st) : 0;
	int64_t ts;
	/* the tokenizer drops what ToTraceTime cannot place, unseen */
	if (!scan_push_time(sf, st->t, TM_CLOCK_MONOTONIC, hd->ts, &ts))
		return;
	if (scan_wants_records(sf)) {
		tm_mrec_head h = {TM_MREC_PERF_TEXT, PERF_TEXT_SAMPLE, 0, sf->f->id, sf->base_row};
		tm_perf_text_rec r = {hd->tid, hd->pid, (uint8_t)hd->has_pid, leaf};
		tm_buf *b = &st->rec;
		b->len = 0;
		tm_mrec_head_put(b, &h);
		tm_buf_put(b, &r, sizeof r);
		tm_mrec_put_str(b, hd->comm.data, hd->comm.len);
		scan_record(sf, st->queue, ts, 0, -1, b->data, b->len);
	}
	scan_place_sample(sf, ts, hd->ts, hd->has_pid ? (int64_t)hd->pid : -1, hd->tid,
			  hd->has_cpu ? (int32_t)hd->cpu : -1, st->leaf.data, st->leaf.len);
}

/* PerfTextTraceTokenizer::Parse of one line (its '\n' not included):
 * -1 with the error set when the file ends here. */
static int line(pt_tok *st, const char *p, size_t n)
{
	if (!st->in_sample) {
		if (!perf_text_parse_head(p, n, &st->head))
			return tm_err(st->err, TM_EINPUT, PERF_TEXT_ERR_HEAD, quoted(p, n), p);
		st->in_sample = 1;
		st->n_frames = 0;
		st->leaf.len = 0;
		return 0;
	}
	perf_text_frame f;
	const char *tp;
	size_t tn;
	switch (perf_text_parse_frame(p, n, &f, &tp, &tn)) {
	case PERF_TEXT_END:
		st->in_sample = 0;
		if (st->n_frames == 0)
			st->no_frames++;
		else
			sample(st);
		return 0;
	case PERF_TEXT_NO_SYMBOL:
		return tm_err(st->err, TM_EINPUT, PERF_TEXT_ERR_SYMBOL, quoted(tp, tn), tp);
	case PERF_TEXT_NO_MAPPING:
		return tm_err(st->err, TM_EINPUT, PERF_TEXT_ERR_MAPPING, quoted(tp, tn), tp);
	default:
		break;
	}
	if (st->n_frames == 0) {
		st->leaf.len = 0;
		tm_buf_put(&st->leaf, f.symbol, f.symbol_n);
		tm_buf_putc(&st->leaf, '\0');
		st->leaf.len--;
	}
	TM_GROW(st->frames, st->cap_frames, st->n_frames + 1);
	/* the scan alone reads the times only */
	st->frames[st->n_frames++] = scan_wants_records(st->sf) ? frame_id(st, &f) : 0;
	return 0;
}

static int each_line(void *ctx, const char *p, size_t n)
{
	return line(ctx, p, n);
}

static int read_file(scan_file *sf, tm_clock_tracker *t, tm_cursor *c, tm_buf *log, size_t from, tm_error *err)
{
	(void)log;
	(void)from;
	pt_tok st = {.sf = sf, .t = t, .queue = scan_new_queue(sf), .err = err};
	tm_buf pend = {0};
	int rc = scan_read_lines(c, each_line, &st, &pend, err);
	/* an unended last line, and a sample without its empty line, are
	 * never read (the reference waits for them) */
	tm_buf_free(&pend);
	if (rc == 0 && scan_wants_records(sf) && st.no_frames) {
		tm_mrec_head h = {TM_MREC_PERF_TEXT, PERF_TEXT_NO_FRAMES, 0, sf->f->id, sf->base_row};
		st.rec.len = 0;
		tm_mrec_head_put(&st.rec, &h);
		tm_buf_put(&st.rec, &st.no_frames, sizeof st.no_frames);
		scan_record_side(sf, st.rec.data, st.rec.len);
	}
	tm_buf_free(&st.rec);
	free(st.frames);
	tm_buf_free(&st.leaf);
	tm_buf_free(&st.head.comm);
	tm_u64map_free(&st.fr.by_hash);
	tm_buf_free(&st.fr.arena);
	free(st.fr.at);
	tm_u64map_free(&st.callsites);
	return rc;
}

const tm_tokenizer tm_perf_text_tokenizer = {.clock = TM_CLOCK_MONOTONIC, .read = read_file};
