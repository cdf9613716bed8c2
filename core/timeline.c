/* core/timeline.c - timeline.tsv: spool the scan's events, sort them in
 * bounded runs, merge the runs into one text file per view.
 *
 * An event is an entry: a fixed header then its name and args bytes. A run
 * collects entries in a buffer with an index (ts, seq, offset), sorts the
 * index and writes the entries in order, so the merge reads every run
 * sequentially. */
#include "timeline.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "spool.h"

#define DEFAULT_RUN (1024u * 1024u)     /* events per run */
#define RUN_BYTES (48u * 1024u * 1024u) /* entry bytes per run */
#define STR_MAX 4096u                   /* name and args are cut there */
#define READ_BUF (256u * 1024u)         /* per run while merging; > one entry */

typedef struct hdr {
	int64_t ts, dur, pid, tid;
	uint64_t seq;
	uint32_t file_id, machine_row;
	uint16_t name_len, args_len;
	uint8_t kind;
} hdr;

#define HDR_SIZE sizeof(hdr)

typedef struct ix {
	int64_t ts;
	uint64_t seq;
	size_t off;
} ix;

typedef struct build {
	tm_spool runs;
	char *buf;               /* the current run's entries */
	size_t len;
	ix *index;
	size_t n_index, cap_index, max_events;
	uint64_t *run_start, *run_len; /* bytes in the runs file */
	size_t n_runs, cap_runs;
	uint64_t seq;
} build;

static int ix_cmp(const void *a, const void *b)
{
	const ix *x = a, *y = b;
	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static size_t entry_size(const char *p)
{
	hdr h;
	memcpy(&h, p, HDR_SIZE);
	return HDR_SIZE + h.name_len + h.args_len;
}

static void flush_run(build *b)
{
	if (!b->n_index)
		return;
	qsort(b->index, b->n_index, sizeof(*b->index), ix_cmp);
	TM_GROW(b->run_start, b->cap_runs, b->n_runs + 1);
	b->run_len = tm_xrealloc(b->run_len, b->cap_runs * sizeof(*b->run_len));
	b->run_start[b->n_runs] = b->runs.size;
	for (size_t i = 0; i < b->n_index; i++) {
		const char *e = b->buf + b->index[i].off;
		tm_spool_put(&b->runs, e, entry_size(e));
	}
	b->run_len[b->n_runs] = b->runs.size - b->run_start[b->n_runs];
	b->n_runs++;
	b->n_index = 0;
	b->len = 0;
}

static void on_event(void *ctx, const tm_event *ev)
{
	build *b = ctx;
	size_t nl = ev->name ? ev->name_len : 0;
	size_t al = ev->args ? strlen(ev->args) : 0;
	if (nl > STR_MAX)
		nl = STR_MAX;
	if (al > STR_MAX)
		al = STR_MAX;
	size_t need = HDR_SIZE + nl + al;
	if (b->n_index == b->max_events || b->len + need > RUN_BYTES)
		flush_run(b);
	hdr h = {ev->ts, ev->dur, ev->pid, ev->tid, b->seq++, ev->file_id, ev->machine_row,
		 (uint16_t)nl, (uint16_t)al, (uint8_t)ev->kind};
	TM_GROW(b->index, b->cap_index, b->n_index + 1);
	b->index[b->n_index++] = (ix){h.ts, h.seq, b->len};
	char *p = b->buf + b->len;
	memcpy(p, &h, HDR_SIZE);
	if (nl)
		memcpy(p + HDR_SIZE, ev->name, nl);
	if (al)
		memcpy(p + HDR_SIZE + nl, ev->args, al);
	b->len += need;
}

/* ---- merging ------------------------------------------------------------------ */

typedef struct run_reader {
	int fd;
	uint64_t next, end;   /* file offsets still to read */
	char *buf;
	size_t pos, len;
	hdr h;                /* the current entry */
	const char *strs;     /* its name then args bytes, in buf */
	int live;
} run_reader;

/* Advance to the next entry; live = 0 at the end. -1 on a read error. */
static int rr_next(run_reader *r)
{
	r->live = 0;
	if (r->len - r->pos < HDR_SIZE + 2 * STR_MAX && r->next < r->end) {
		memmove(r->buf, r->buf + r->pos, r->len - r->pos);
		r->len -= r->pos;
		r->pos = 0;
		uint64_t want = r->end - r->next;
		if (want > READ_BUF - r->len)
			want = READ_BUF - r->len;
		size_t got = 0;
		while (got < want) {
			ssize_t n = pread(r->fd, r->buf + r->len + got, want - got, (off_t)(r->next + got));
			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0)
				return -1;
			got += (size_t)n;
		}
		r->len += got;
		r->next += got;
	}
	if (r->len - r->pos < HDR_SIZE)
		return 0;
	memcpy(&r->h, r->buf + r->pos, HDR_SIZE);
	size_t sz = HDR_SIZE + r->h.name_len + r->h.args_len;
	if (r->len - r->pos < sz)
		return -1;
	r->strs = r->buf + r->pos + HDR_SIZE;
	r->pos += sz;
	r->live = 1;
	return 0;
}

static int rr_less(const run_reader *a, const run_reader *b)
{
	if (a->h.ts != b->h.ts)
		return a->h.ts < b->h.ts;
	return a->h.seq < b->h.seq;
}

static void heap_down(run_reader **h, size_t n, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, s = i;
		if (l < n && rr_less(h[l], h[s]))
			s = l;
		if (l + 1 < n && rr_less(h[l + 1], h[s]))
			s = l + 1;
		if (s == i)
			return;
		run_reader *t = h[i];
		h[i] = h[s];
		h[s] = t;
		i = s;
	}
}

static void put_escaped(tm_spool *w, const char *s, size_t n)
{
	size_t start = 0;
	for (size_t i = 0; i < n; i++) {
		char e;
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
	char **dirs;       /* by machine row, escaped once */
	size_t n_dirs;
	char **files;      /* by file id, escaped once */
	size_t n_files;
	tm_buf line;
} emit_ctx;

static char *escaped_copy(const char *s)
{
	tm_buf b = {0};
	for (; s && *s; s++) {
		switch (*s) {
		case '\\': tm_buf_puts(&b, "\\\\"); break;
		case '\t': tm_buf_puts(&b, "\\t"); break;
		case '\n': tm_buf_puts(&b, "\\n"); break;
		case '\r': tm_buf_puts(&b, "\\r"); break;
		default: tm_buf_put(&b, s, 1);
		}
	}
	if (!b.data)
		tm_buf_puts(&b, "");
	return tm_buf_detach(&b, NULL);
}

static void format_line(emit_ctx *e, const run_reader *r, tm_spool *w)
{
	const hdr *h = &r->h;
	char num[96];
	int n = snprintf(num, sizeof num, "%" PRId64 "\t", h->ts);
	if (h->dur >= 0)
		n += snprintf(num + n, sizeof num - (size_t)n, "%" PRId64, h->dur);
	num[n++] = '\t';
	tm_spool_put(w, num, (size_t)n);
	const char *dir = h->machine_row < e->n_dirs ? e->dirs[h->machine_row] : "";
	tm_spool_put(w, dir, strlen(dir));
	tm_spool_put(w, "\t", 1);
	const char *file = h->file_id < e->n_files ? e->files[h->file_id] : "";
	tm_spool_put(w, file, strlen(file));
	tm_spool_put(w, "\t", 1);
	const char *k = h->kind < TM_EV_KIND_COUNT ? tm_ev_kind_names[h->kind] : "event";
	tm_spool_put(w, k, strlen(k));
	tm_spool_put(w, "\t", 1);
	put_escaped(w, r->strs, h->name_len);
	char ids[64];
	int m = 0;
	ids[m++] = '\t';
	if (h->pid >= 0)
		m += snprintf(ids + m, sizeof ids - (size_t)m, "%" PRId64, h->pid);
	ids[m++] = '\t';
	if (h->tid >= 0)
		m += snprintf(ids + m, sizeof ids - (size_t)m, "%" PRId64, h->tid);
	ids[m++] = '\t';
	tm_spool_put(w, ids, (size_t)m);
	put_escaped(w, r->strs + h->name_len, h->args_len);
	tm_spool_put(w, "\n", 1);
}

tm_timeline *tm_timeline_build(tm_merge *m, const tm_scan *scan, size_t run_events, tm_error *err)
{
	build b = {0};
	b.runs.fd = -1;
	b.max_events = run_events ? run_events : DEFAULT_RUN;
	size_t nm = scan->machines.n;
	tm_timeline *t = NULL;
	/* out[0]: the whole merge; out[1 + row]: each machine */
	tm_spool *out = tm_xcalloc(nm + 1, sizeof(*out));
	for (size_t i = 0; i <= nm; i++)
		out[i].fd = -1;
	emit_ctx e = {0};
	run_reader *readers = NULL;
	run_reader **heap = NULL;

	if (tm_spool_open(&b.runs, err))
		goto out;
	b.buf = tm_xmalloc(RUN_BYTES);
	tm_scan_sink sink = {.ctx = &b, .event = on_event, .want_args = 1};
	tm_scan *s2 = tm_scan_run(m, &sink);
	int scan_failed = s2->failed;
	if (scan_failed)
		*err = s2->err;
	tm_scan_free(s2);
	if (scan_failed)
		goto out;
	flush_run(&b);
	free(b.buf);
	b.buf = NULL;
	if (tm_spool_finish(&b.runs, "timeline.tsv", err))
		goto out;

	for (size_t i = 0; i <= nm; i++)
		if (tm_spool_open(&out[i], err))
			goto out;
	e.n_dirs = nm;
	e.dirs = tm_xcalloc(nm ? nm : 1, sizeof(char *));
	for (size_t i = 0; i < nm; i++) {
		char *d = tm_machines_dir_name(&scan->machines, (uint32_t)i);
		e.dirs[i] = escaped_copy(d);
		free(d);
	}
	e.n_files = m->n_files;
	e.files = tm_xcalloc(m->n_files ? m->n_files : 1, sizeof(char *));
	for (size_t i = 0; i < m->n_files; i++)
		e.files[i] = escaped_copy(m->files[i].name ? m->files[i].name : "");

	for (size_t i = 0; i <= nm; i++)
		tm_spool_put(&out[i], TM_TIMELINE_HEADER, strlen(TM_TIMELINE_HEADER));

	readers = tm_xcalloc(b.n_runs ? b.n_runs : 1, sizeof(*readers));
	heap = tm_xcalloc(b.n_runs ? b.n_runs : 1, sizeof(*heap));
	size_t nh = 0;
	for (size_t i = 0; i < b.n_runs; i++) {
		run_reader *r = &readers[i];
		r->fd = b.runs.fd;
		r->next = b.run_start[i];
		r->end = b.run_start[i] + b.run_len[i];
		r->buf = tm_xmalloc(READ_BUF);
		if (rr_next(r) != 0) {
			tm_err(err, TM_EIO, "timeline.tsv: cannot read a temporary file");
			goto out;
		}
		if (r->live)
			heap[nh++] = r;
	}
	for (size_t i = nh; i-- > 0;)
		heap_down(heap, nh, i);
	while (nh) {
		run_reader *r = heap[0];
		format_line(&e, r, &out[0]);
		if (r->h.machine_row < nm)
			format_line(&e, r, &out[r->h.machine_row + 1]);
		if (rr_next(r) != 0) {
			tm_err(err, TM_EIO, "timeline.tsv: cannot read a temporary file");
			goto out;
		}
		if (!r->live)
			heap[0] = heap[--nh];
		heap_down(heap, nh, 0);
	}
	for (size_t i = 0; i <= nm; i++)
		if (tm_spool_finish(&out[i], "timeline.tsv", err))
			goto out;
	t = tm_spooled_take(out, nm);
out:
	free(b.buf);
	free(b.index);
	free(b.run_start);
	free(b.run_len);
	tm_spool_close(&b.runs);
	for (size_t i = 0; i <= nm; i++)
		tm_spool_close(&out[i]);
	free(out);
	for (size_t i = 0; i < e.n_dirs; i++)
		free(e.dirs[i]);
	free(e.dirs);
	for (size_t i = 0; i < e.n_files; i++)
		free(e.files[i]);
	free(e.files);
	tm_buf_free(&e.line);
	if (readers)
		for (size_t i = 0; i < b.n_runs; i++)
			free(readers[i].buf);
	free(readers);
	free(heap);
	return t;
}

void tm_timeline_free(tm_timeline *t)
{
	tm_spooled_free(t);
}
