/* core/timeline.c - timeline.tsv: spool the scan's events, sort them in
 * bounded runs, merge the runs into one text file per view. */
#include "timeline.h"

#include "spool.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define DEFAULT_RUN (256u * 1024u)
#define SWIN (64u * 1024u)
#define MERGE_BUF 256u

typedef struct rec {
	int64_t ts, dur, pid, tid;
	uint64_t seq;
	uint64_t str_off;      /* name bytes then args bytes in the string spool */
	uint32_t name_len, args_len;
	uint32_t file_id, machine_row;
	uint8_t kind, has_name;
} rec;

typedef struct build {
	tm_merge *m;
	const tm_scan *scan;
	tm_spool strings, runs;
	rec *run;
	size_t n_run, cap_run;
	uint64_t *run_start, *run_len; /* in records */
	size_t n_runs, cap_runs;
	uint64_t seq;
	int failed;
} build;

static int rec_cmp(const void *a, const void *b)
{
	const rec *x = a, *y = b;
	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static void flush_run(build *b)
{
	if (!b->n_run)
		return;
	qsort(b->run, b->n_run, sizeof(*b->run), rec_cmp);
	TM_GROW(b->run_start, b->cap_runs, b->n_runs + 1);
	b->run_len = tm_xrealloc(b->run_len, b->cap_runs * sizeof(*b->run_len));
	b->run_start[b->n_runs] = b->runs.size / sizeof(rec);
	b->run_len[b->n_runs] = b->n_run;
	b->n_runs++;
	tm_spool_put(&b->runs, b->run, b->n_run * sizeof(rec));
	b->n_run = 0;
}

static void on_event(void *ctx, const tm_event *ev)
{
	build *b = ctx;
	if (b->n_run == b->cap_run)
		flush_run(b);
	rec *r = &b->run[b->n_run++];
	memset(r, 0, sizeof(*r));
	r->ts = ev->ts;
	r->dur = ev->dur;
	r->pid = ev->pid;
	r->tid = ev->tid;
	r->seq = b->seq++;
	r->file_id = ev->file_id;
	r->machine_row = ev->machine_row;
	r->kind = (uint8_t)ev->kind;
	r->has_name = ev->name != NULL;
	r->str_off = b->strings.size;
	size_t nl = ev->name ? ev->name_len : 0;
	size_t al = ev->args ? strlen(ev->args) : 0;
	if (nl > 4096)
		nl = 4096;
	if (al > 4096)
		al = 4096;
	r->name_len = (uint32_t)nl;
	r->args_len = (uint32_t)al;
	if (nl)
		tm_spool_put(&b->strings, ev->name, nl);
	if (al)
		tm_spool_put(&b->strings, ev->args, al);
}

/* ---- reading back --------------------------------------------------------- */

typedef struct swin {
	int fd;
	uint64_t off;
	size_t len;
	char *buf;
} swin;

/* Bytes [off, off+n) of the string spool (n <= 8192 < SWIN). */
static const char *swin_get(swin *s, uint64_t off, size_t n)
{
	if (off >= s->off && off + n <= s->off + s->len)
		return s->buf + (off - s->off);
	ssize_t got = pread(s->fd, s->buf, SWIN, (off_t)off);
	s->off = off;
	s->len = got > 0 ? (size_t)got : 0;
	if (s->len < n)
		memset(s->buf + s->len, 0, n - s->len), s->len = n;
	return s->buf;
}

typedef struct run_reader {
	uint64_t next, end; /* record indexes in the runs file */
	rec buf[MERGE_BUF];
	size_t pos, n;
} run_reader;

static int rr_fill(run_reader *r, int fd)
{
	uint64_t k = r->end - r->next;
	if (k > MERGE_BUF)
		k = MERGE_BUF;
	r->pos = 0;
	r->n = 0;
	if (!k)
		return 0;
	ssize_t got = pread(fd, r->buf, k * sizeof(rec), (off_t)(r->next * sizeof(rec)));
	if (got != (ssize_t)(k * sizeof(rec)))
		return -1;
	r->n = k;
	r->next += k;
	return 0;
}

static void put_escaped(tm_spool *w, const char *s, size_t n)
{
	size_t start = 0;
	for (size_t i = 0; i < n; i++) {
		char e = 0;
		switch (s[i]) {
		case '\\': e = '\\'; break;
		case '\t': e = 't'; break;
		case '\n': e = 'n'; break;
		case '\r': e = 'r'; break;
		case '\0': e = '0'; break;
		default: continue;
		}
		tm_spool_put(w, s + start, i - start);
		char esc[2] = {'\\', e};
		tm_spool_put(w, esc, 2);
		start = i + 1;
	}
	tm_spool_put(w, s + start, n - start);
}

typedef struct emit_ctx {
	swin strings;
	char **dirs;       /* by machine row */
	size_t n_dirs;
	const tm_merge *m;
	tm_buf line;
} emit_ctx;

static void format_line(emit_ctx *e, const rec *r, tm_spool *out1, tm_spool *out2)
{
	char num[160];
	int n = snprintf(num, sizeof num, "%" PRId64 "\t", r->ts);
	if (r->dur >= 0)
		n += snprintf(num + n, sizeof num - (size_t)n, "%" PRId64, r->dur);
	num[n++] = '\t';
	tm_spool *outs[2] = {out1, out2};
	const char *str = swin_get(&e->strings, r->str_off, (size_t)r->name_len + r->args_len);
	/* copy: the window may move between the two outputs */
	e->line.len = 0;
	tm_buf_put(&e->line, str, (size_t)r->name_len + r->args_len);
	const char *name = e->line.data ? e->line.data : "";
	const char *args = name + r->name_len;
	const char *fname = r->file_id < e->m->n_files && e->m->files[r->file_id].name
				    ? e->m->files[r->file_id].name
				    : "";
	const char *dir = r->machine_row < e->n_dirs ? e->dirs[r->machine_row] : "";
	for (int i = 0; i < 2; i++) {
		tm_spool *w = outs[i];
		if (!w)
			continue;
		tm_spool_put(w, num, (size_t)n);
		put_escaped(w, dir, strlen(dir));
		tm_spool_put(w, "\t", 1);
		put_escaped(w, fname, strlen(fname));
		tm_spool_put(w, "\t", 1);
		const char *k = r->kind < TM_EV_KIND_COUNT ? tm_ev_kind_names[r->kind] : "event";
		tm_spool_put(w, k, strlen(k));
		tm_spool_put(w, "\t", 1);
		put_escaped(w, name, r->name_len);
		char ids[64];
		int m = 0;
		ids[m++] = '\t';
		if (r->pid >= 0)
			m += snprintf(ids + m, sizeof ids - (size_t)m, "%" PRId64, r->pid);
		ids[m++] = '\t';
		if (r->tid >= 0)
			m += snprintf(ids + m, sizeof ids - (size_t)m, "%" PRId64, r->tid);
		ids[m++] = '\t';
		tm_spool_put(w, ids, (size_t)m);
		put_escaped(w, args, r->args_len);
		tm_spool_put(w, "\n", 1);
	}
}

static void heap_down(run_reader **h, size_t n, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, s = i;
		if (l < n && rec_cmp(&h[l]->buf[h[l]->pos], &h[s]->buf[h[s]->pos]) < 0)
			s = l;
		if (l + 1 < n && rec_cmp(&h[l + 1]->buf[h[l + 1]->pos], &h[s]->buf[h[s]->pos]) < 0)
			s = l + 1;
		if (s == i)
			return;
		run_reader *t = h[i];
		h[i] = h[s];
		h[s] = t;
		i = s;
	}
}

tm_timeline *tm_timeline_build(tm_merge *m, const tm_scan *scan, size_t run_events, tm_error *err)
{
	build b = {0};
	b.m = m;
	b.scan = scan;
	b.cap_run = run_events ? run_events : DEFAULT_RUN;
	b.strings.fd = b.runs.fd = -1;
	tm_timeline *t = tm_xcalloc(1, sizeof(*t));
	t->fd = -1;
	size_t nm = scan->machines.n;
	t->n_mach = nm;
	t->mach_fd = tm_xmalloc((nm ? nm : 1) * sizeof(int));
	t->mach_size = tm_xcalloc(nm ? nm : 1, sizeof(uint64_t));
	for (size_t i = 0; i < nm; i++)
		t->mach_fd[i] = -1;
	tm_spool all = {.fd = -1}, *mw = tm_xcalloc(nm ? nm : 1, sizeof(tm_spool));
	for (size_t i = 0; i < nm; i++)
		mw[i].fd = -1;
	emit_ctx e = {0};
	run_reader *readers = NULL;
	run_reader **heap = NULL;
	int ok = 0;

	if (tm_spool_open(&b.strings, err) || tm_spool_open(&b.runs, err))
		goto out;
	b.run = tm_xmalloc(b.cap_run * sizeof(rec));
	tm_scan_sink sink = {.ctx = &b, .event = on_event};
	tm_scan *s2 = tm_scan_run(m, &sink);
	int scan_failed = s2->failed;
	if (scan_failed)
		*err = s2->err;
	tm_scan_free(s2);
	if (scan_failed)
		goto out;
	flush_run(&b);
	if (tm_spool_finish(&b.strings, "timeline.tsv", err) || tm_spool_finish(&b.runs, "timeline.tsv", err))
		goto out;

	if (tm_spool_open(&all, err))
		goto out;
	for (size_t i = 0; i < nm; i++)
		if (tm_spool_open(&mw[i], err))
			goto out;
	e.m = m;
	e.strings.fd = b.strings.fd;
	e.strings.buf = tm_xmalloc(SWIN + 8192);
	e.strings.len = 0;
	e.n_dirs = nm;
	e.dirs = tm_xcalloc(nm ? nm : 1, sizeof(char *));
	for (size_t i = 0; i < nm; i++)
		e.dirs[i] = tm_machines_dir_name(&scan->machines, (uint32_t)i);

	tm_spool_put(&all, TM_TIMELINE_HEADER, strlen(TM_TIMELINE_HEADER));
	for (size_t i = 0; i < nm; i++)
		tm_spool_put(&mw[i], TM_TIMELINE_HEADER, strlen(TM_TIMELINE_HEADER));

	readers = tm_xcalloc(b.n_runs ? b.n_runs : 1, sizeof(*readers));
	heap = tm_xcalloc(b.n_runs ? b.n_runs : 1, sizeof(*heap));
	size_t nh = 0;
	for (size_t i = 0; i < b.n_runs; i++) {
		readers[i].next = b.run_start[i];
		readers[i].end = b.run_start[i] + b.run_len[i];
		if (rr_fill(&readers[i], b.runs.fd) != 0) {
			tm_err(err, TM_EIO, "timeline.tsv: cannot read a temporary file");
			goto out;
		}
		if (readers[i].n)
			heap[nh++] = &readers[i];
	}
	for (size_t i = nh; i-- > 0;)
		heap_down(heap, nh, i);
	while (nh) {
		run_reader *r = heap[0];
		const rec *x = &r->buf[r->pos];
		format_line(&e, x, &all, x->machine_row < nm ? &mw[x->machine_row] : NULL);
		if (++r->pos == r->n) {
			if (rr_fill(r, b.runs.fd) != 0) {
				tm_err(err, TM_EIO, "timeline.tsv: cannot read a temporary file");
				goto out;
			}
			if (!r->n) {
				heap[0] = heap[--nh];
			}
		}
		heap_down(heap, nh, 0);
	}
	if (tm_spool_finish(&all, "timeline.tsv", err))
		goto out;
	for (size_t i = 0; i < nm; i++)
		if (tm_spool_finish(&mw[i], "timeline.tsv", err))
			goto out;
	t->fd = all.fd;
	t->size = all.size;
	all.fd = -1;
	for (size_t i = 0; i < nm; i++) {
		t->mach_fd[i] = mw[i].fd;
		t->mach_size[i] = mw[i].size;
		mw[i].fd = -1;
	}
	ok = 1;
out:
	free(b.run);
	free(b.run_start);
	free(b.run_len);
	tm_spool_close(&b.strings);
	tm_spool_close(&b.runs);
	tm_spool_close(&all);
	for (size_t i = 0; i < nm; i++)
		tm_spool_close(&mw[i]);
	free(mw);
	for (size_t i = 0; i < e.n_dirs; i++)
		free(e.dirs[i]);
	free(e.dirs);
	free(e.strings.buf);
	tm_buf_free(&e.line);
	free(readers);
	free(heap);
	if (!ok) {
		tm_timeline_free(t);
		return NULL;
	}
	return t;
}

void tm_timeline_free(tm_timeline *t)
{
	if (!t)
		return;
	if (t->fd >= 0)
		close(t->fd);
	for (size_t i = 0; i < t->n_mach; i++)
		if (t->mach_fd[i] >= 0)
			close(t->mach_fd[i]);
	free(t->mach_fd);
	free(t->mach_size);
	free(t);
}
