/* core/formats/perf/tokenize.c - a perf.data file into the scan, as
 * PerfDataTokenizer reads it: the header, the attrs and their ids, the
 * feature sections (read here before the records: what they say is used
 * only once the records are sorted, and an error of theirs is reported
 * after any of the records', in the reference's order), then each record
 * of the data section with its time on its attr's clock, held back as the
 * reference holds it (MaybePushRecord, OnPushDataToSorter), parsed and
 * handed to the model on the file's one sorter queue. */
#include "formats/perf/perf_format.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "clock/clock.h"
#include "formats/perf/perf_data.h"

#define WINDOW (1u << 20)

typedef struct pd_tok {
	scan_file *sf;
	tm_clock_tracker *t;
	tm_cursor *c;
	uint32_t queue;
	perf_file f;
	/* the data section through a window of the file */
	uint8_t *win;
	uint64_t win_at;
	size_t win_n;
	/* held back: records without a time (each a uint32 length, the
	 * record), COMM records (an int64 time or INT64_MIN, a length, the
	 * record) */
	int has_min;
	int64_t min_ts;
	tm_buf pending, comms;
	tm_buf rec;
	perf_sample smp;
	int aux_info;           /* an AUXTRACE_INFO was read */
	tm_error *err;
} pd_tok;

/* [off, off + n) of the file into *out: 0, or -1 with the reference's
 * premature end (the reference waits for bytes that never come). */
static int read_range(pd_tok *st, uint64_t off, uint64_t n, uint8_t **out, tm_error *err)
{
	*out = NULL;
	if (n == 0)
		return 0;
	uint8_t last;
	/* the last byte first: a damaged size allocates nothing */
	if (off + n < off || n > SIZE_MAX / 2)
		return tm_err(err, TM_EINPUT, PERF_ERR_PREMATURE);
	ssize_t got = tm_cursor_pread(st->c, &last, 1, off + n - 1, err);
	if (got < 0)
		return -1; /* the container's reason */
	if (got != 1)
		return tm_err(err, TM_EINPUT, PERF_ERR_PREMATURE);
	uint8_t *p = malloc((size_t)n);
	if (!p)
		return tm_err(err, TM_EINPUT, PERF_ERR_PREMATURE);
	if (tm_cursor_pread(st->c, p, (size_t)n, off, err) != (ssize_t)n) {
		free(p);
		return tm_err(err, TM_EINPUT, PERF_ERR_PREMATURE);
	}
	*out = p;
	return 0;
}

/* The bytes [at, at + n) of the file (n <= 65535 + 8), through the window;
 * NULL when the file ends first. */
static const uint8_t *window(pd_tok *st, uint64_t at, size_t n)
{
	if (at >= st->win_at && at - st->win_at <= st->win_n && n <= st->win_n - (at - st->win_at))
		return st->win + (at - st->win_at);
	ssize_t got = tm_cursor_pread(st->c, st->win, WINDOW, at, st->err);
	if (got < 0)
		return NULL;
	st->win_at = at;
	st->win_n = (size_t)got;
	return (size_t)got >= n ? st->win : NULL;
}

/* ---- records to the model ----------------------------------------------------------- */

static void head(pd_tok *st, int sub)
{
	tm_mrec_head h = {TM_MREC_PERF, (uint8_t)sub, 0, st->sf->f->id, st->sf->base_row};
	st->rec.len = 0;
	tm_mrec_head_put(&st->rec, &h);
}

static void skip_rec(pd_tok *st, uint32_t type, uint32_t unknown)
{
	head(st, PERF_SKIP);
	tm_buf_put(&st->rec, &type, sizeof type);
	tm_buf_put(&st->rec, &unknown, sizeof unknown);
}

static int is_kernel(int mode)
{
	return mode == PERF_MODE_KERNEL || mode == PERF_MODE_GUEST_KERNEL;
}

/* The record as the parser reads it (RecordParser::ParseRecord), into
 * st->rec; a SAMPLE also placed on the timeline. */
static void parse(pd_tok *st, int64_t ts, uint32_t type, uint16_t misc, int64_t attr, const uint8_t *p, size_t n)
{
	scan_file *sf = st->sf;
	switch (type) {
	case PERF_RECORD_SAMPLE: {
		perf_sample *s = &st->smp;
		tm_error e = {0};
		/* Sample::Parse, and InternSample's demands */
		if (attr < 0 || perf_read_sample(&st->f.attrs[attr], misc, p, n, s, &e) != 0 || !s->has_time ||
		    !s->has_tid) {
			skip_rec(st, type, 0);
			return;
		}
		const perf_attr *a = &st->f.attrs[attr];
		tm_perf_sample_rec r;
		memset(&r, 0, sizeof r); /* its padding too: records are compared as bytes */
		r.pid = s->pid;
		r.tid = s->tid;
		r.cpu = s->cpu;
		r.attr = (uint32_t)attr;
		r.period = s->has_period ? s->period : a->sample_period;
		r.has_cpu = (uint8_t)s->has_cpu;
		r.has_period = (uint8_t)(s->has_period || !PERF_ATTR_FREQ(a));
		r.has_read = (uint8_t)s->has_read;
		r.n_reads = s->has_read ? (uint32_t)s->n_reads : 0;
		r.mode = (uint8_t)s->mode;
		r.adjust_pc = (uint8_t)!st->f.simpleperf;
		if (s->n_frames == 0 && s->has_ip) {
			/* a sample without a callchain is its ip */
			r.n = 1;
			head(st, PERF_SAMPLE);
			tm_buf_put(&st->rec, &r, sizeof r);
			tm_buf_put(&st->rec, &s->ip, sizeof s->ip);
			uint8_t mode = (uint8_t)s->mode;
			tm_buf_put(&st->rec, &mode, 1);
		} else {
			r.n = (uint32_t)s->n_frames;
			head(st, PERF_SAMPLE);
			tm_buf_put(&st->rec, &r, sizeof r);
			tm_buf_put(&st->rec, s->ips, s->n_frames * sizeof *s->ips);
			tm_buf_put(&st->rec, s->modes, s->n_frames);
		}
		/* FindAttrForEventId of each value's id (an id the format
		 * lacks: none, as the reference reads 0 then) */
		for (uint32_t i = 0; i < r.n_reads; i++) {
			const perf_read *rv = &s->reads[i];
			int64_t ra = perf_attr_by_id(&st->f, rv->has_id ? rv->id : 0);
			uint32_t ra32 = ra < 0 ? TM_PERF_NO_ATTR : (uint32_t)ra;
			tm_buf_put(&st->rec, &ra32, sizeof ra32);
			tm_buf_put(&st->rec, &rv->value, sizeof rv->value);
		}
		scan_place_sample(sf, ts, (int64_t)s->time, s->pid, s->tid, s->has_cpu ? (int32_t)s->cpu : -1, "", 0);
		return;
	}
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2: {
		perf_mmap mm;
		if (perf_read_mmap(type, misc, p, n, &mm) != 0) {
			skip_rec(st, type, 0);
			return;
		}
		tm_perf_mmap_rec r;
		memset(&r, 0, sizeof r);
		r.pid = mm.pid;
		r.tid = mm.tid;
		r.addr = mm.addr;
		r.len = mm.len;
		r.pgoff = mm.pgoff;
		r.kernel = (uint8_t)is_kernel(mm.mode);
		r.type = (uint8_t)type;
		if (mm.has_build_id) {
			r.has_build_id = 1;
			r.build_id_size = mm.build_id_size;
			memcpy(r.build_id, mm.build_id, sizeof r.build_id);
		} else {
			const perf_build_id *b = perf_lookup_build_id(&st->f, mm.pid, mm.filename, mm.filename_n);
			if (b) {
				r.has_build_id = 1;
				r.build_id_size = b->size;
				memcpy(r.build_id, b->id, sizeof r.build_id);
			}
		}
		head(st, PERF_MMAP);
		tm_buf_put(&st->rec, &r, sizeof r);
		tm_mrec_put_str(&st->rec, mm.filename, mm.filename_n);
		return;
	}
	case PERF_RECORD_COMM: {
		uint32_t ids[2];
		const char *comm;
		size_t comm_n;
		if (perf_read_comm(p, n, &ids[0], &ids[1], &comm, &comm_n) != 0) {
			skip_rec(st, type, 0);
			return;
		}
		head(st, PERF_COMM);
		tm_buf_put(&st->rec, ids, sizeof ids);
		tm_mrec_put_str(&st->rec, comm, comm_n);
		return;
	}
	case PERF_RECORD_ITRACE_START: {
		uint32_t ids[2];
		memcpy(ids, p, sizeof ids); /* checked when it was read */
		head(st, PERF_THREAD);
		tm_buf_put(&st->rec, ids, sizeof ids);
		return;
	}
	default:
		skip_rec(st, type, 1);
		return;
	}
}

/* stream_->Push(ts, record): a negative time the sorter drops. */
static void push(pd_tok *st, int64_t ts, const uint8_t *r, size_t n)
{
	uint32_t type;
	uint16_t misc;
	int64_t attr;
	memcpy(&type, r, 4);
	memcpy(&misc, r + 4, 2);
	memcpy(&attr, r + 8, 8);
	if (ts < 0) {
		scan_count(st->sf, TM_STAT_NEGATIVE_TS, 1);
		return;
	}
	if (!scan_wants_records(st->sf) && type != PERF_RECORD_SAMPLE)
		return;
	parse(st, ts, type, misc, attr, r + 16, n - 16);
	if (scan_wants_records(st->sf))
		scan_record(st->sf, st->queue, ts, 0, -1, st->rec.data, st->rec.len);
}

/* A held-back record: its type, misc, attr, then its payload. */
static void hold(tm_buf *b, uint32_t type, uint16_t misc, int64_t attr, const uint8_t *p, size_t n)
{
	uint32_t len = (uint32_t)(16 + n);
	uint16_t pad = 0;
	tm_buf_put(b, &len, sizeof len);
	tm_buf_put(b, &type, 4);
	tm_buf_put(b, &misc, 2);
	tm_buf_put(b, &pad, 2);
	tm_buf_put(b, &attr, 8);
	tm_buf_put(b, p, n);
}

static void flush_pending(pd_tok *st)
{
	for (size_t at = 0; at < st->pending.len;) {
		uint32_t len;
		memcpy(&len, st->pending.data + at, 4);
		push(st, st->min_ts, (const uint8_t *)st->pending.data + at + 4, len);
		at += 4 + len;
	}
	st->pending.len = 0;
}

/* MaybePushRecord. */
static void maybe_push(pd_tok *st, uint32_t type, uint16_t misc, int64_t attr, const uint8_t *p, size_t n)
{
	const perf_attr *a = attr >= 0 ? &st->f.attrs[attr] : NULL;
	uint64_t time;
	int64_t ts = 0;
	/* ToTraceTime: a time it cannot convert is no time (its stat counted) */
	/* a time of 2^63 or more is negative to the reference: its sorter
	 * drops it (and it lowers the least time) */
	int timed = perf_record_time(a, type, p, n, &time) &&
		    tm_tracker_to_trace_time(st->t, a->clock, 0, (int64_t)time, 0, &ts) == TM_CONV_OK;
	if (timed && (!st->has_min || ts < st->min_ts)) {
		st->has_min = 1;
		st->min_ts = ts;
	}
	if (type == PERF_RECORD_COMM) {
		int64_t at = timed ? ts : INT64_MIN;
		tm_buf_put(&st->comms, &at, sizeof at);
		hold(&st->comms, type, misc, attr, p, n);
		return;
	}
	if (!timed) {
		hold(&st->pending, type, misc, attr, p, n);
		return;
	}
	flush_pending(st);
	tm_buf rec = {0};
	hold(&rec, type, misc, attr, p, n);
	push(st, ts, (const uint8_t *)rec.data + 4, rec.len - 4);
	tm_buf_free(&rec);
}

/* OnPushDataToSorter: the COMM records in file order (records without a
 * time still held are never pushed). */
static void flush_comms(pd_tok *st)
{
	for (size_t at = 0; at < st->comms.len;) {
		int64_t ts;
		uint32_t len;
		memcpy(&ts, st->comms.data + at, 8);
		memcpy(&len, st->comms.data + at + 8, 4);
		const uint8_t *r = (const uint8_t *)st->comms.data + at + 12;
		at += 12 + len;
		if (ts == INT64_MIN) {
			if (!st->has_min)
				continue;
			ts = st->min_ts;
		}
		push(st, ts, r, len);
	}
}

/* The trailing sample_id of a record (SampleId::ParseFromRecord): 0 with
 * whether it holds a CPU, or -1 with the reference's text. */
static int sample_id_cpu(pd_tok *st, int64_t attr, uint32_t type, size_t n, int *has_cpu)
{
	*has_cpu = 0;
	const perf_attr *a = attr >= 0 ? &st->f.attrs[attr] : NULL;
	if (!a || !PERF_ATTR_SAMPLE_ID_ALL(a) || type >= PERF_RECORD_USER_TYPE_START)
		return 0;
	if (a->sample_id_size > n)
		return tm_err(st->err, TM_EINPUT,
			      "Record is too small to hold a SampleId. Expected at least %zu bytes, but found %zu",
			      a->sample_id_size, n);
	*has_cpu = (a->sample_type & PERF_SAMPLE_CPU) != 0;
	return 0;
}

#define PER_CPU_ONLY "Aux data handling only implemented for per cpu data."

/* The records the tokenizer itself consumes, AUX area tracing's (Intel
 * PT, Arm SPE): their checks and the reference's texts, its AUX data
 * skipped (tracemount(1), "Divergences"). 0, or -1 with err set;
 * *aux_data is the bytes that follow an AUXTRACE record. */
static int tokenizer_record(pd_tok *st, uint32_t type, int64_t attr, const uint8_t *p, size_t n, uint64_t *aux_data)
{
	uint64_t v[2];
	int has_cpu;
	switch (type) {
	case PERF_RECORD_AUXTRACE:
		/* size, offset, reference, idx, tid, cpu, reserved */
		if (n < 40)
			return tm_err(st->err, TM_EINPUT, "Failed to parse PERF_RECORD_AUXTRACE");
		memcpy(v, p, 16);
		if (v[1] > UINT64_MAX - v[0])
			return tm_err(st->err, TM_EINPUT, "AUXTRACE record overflows");
		*aux_data = v[0]; /* then checked once its data is there */
		return 0;
	case PERF_RECORD_AUXTRACE_INFO:
		if (n < 8)
			return tm_err(st->err, TM_EINPUT, "Failed to parse PERF_RECORD_AUXTRACE_INFO");
		if (st->aux_info)
			return tm_err(st->err, TM_EINPUT, "Multiple PERF_RECORD_AUXTRACE_INFO not supported.");
		st->aux_info = 1;
		return 0;
	case PERF_RECORD_AUX:
		if (n < 24)
			return tm_err(st->err, TM_EINPUT, "Failed to parse AUX record");
		memcpy(v, p, 16);
		if (v[0] > UINT64_MAX - v[1])
			return tm_err(st->err, TM_EINPUT, "AUX record overflows");
		if (sample_id_cpu(st, attr, type, n, &has_cpu))
			return -1;
		if (!st->aux_info)
			return tm_err(st->err, TM_EINPUT, "PERF_RECORD_AUX without previous PERF_RECORD_AUXTRACE_INFO.");
		if (!has_cpu)
			return tm_err(st->err, TM_EINPUT, PER_CPU_ONLY);
		return 0;
	case PERF_RECORD_TIME_CONV:
		if (n < 48)
			return tm_err(st->err, TM_EINPUT, "Failed to parse PERF_RECORD_TIME_CONV");
		return 0;
	case PERF_RECORD_ITRACE_START:
		if (n < 8)
			return tm_err(st->err, TM_EINPUT, "Failed to parse PERF_RECORD_ITRACE_START");
		if (sample_id_cpu(st, attr, type, n, &has_cpu))
			return -1;
		/* its AUX stream is its CPU's (the reference asserts an
		 * AUXTRACE_INFO came first) */
		if (!has_cpu || !st->aux_info)
			return tm_err(st->err, TM_EINPUT, PER_CPU_ONLY);
		return 0;
	default:
		return 0;
	}
}

/* An AUXTRACE record once its data is there (OnAuxtraceRecord). */
static int auxtrace_read(pd_tok *st, const uint8_t *p)
{
	uint32_t cpu;
	if (!st->aux_info)
		return tm_err(st->err, TM_EINPUT, "PERF_RECORD_AUXTRACE without previous PERF_RECORD_AUXTRACE_INFO.");
	memcpy(&cpu, p + 32, 4);
	if (cpu == UINT32_MAX)
		return tm_err(st->err, TM_EINPUT, PER_CPU_ONLY);
	return 0;
}

static int records(pd_tok *st)
{
	const perf_header *h = &st->f.h;
	uint64_t end = h->data.offset + h->data.size, at = h->data.offset;
	if (end < h->data.offset || h->data.offset < PERF_HEADER_SIZE)
		return tm_err(st->err, TM_EINPUT, PERF_ERR_PREMATURE);
	while (at < end) {
		const uint8_t *r = window(st, at, 8);
		if (!r)
			return st->err->code != TM_OK ? -1 : tm_err(st->err, TM_EINPUT, PERF_ERR_PREMATURE);
		uint32_t type;
		uint16_t misc, size;
		memcpy(&type, r, 4);
		memcpy(&misc, r + 4, 2);
		memcpy(&size, r + 6, 2);
		if (size < 8)
			return tm_err(st->err, TM_EINPUT, "Invalid record size: %u", (unsigned)size);
		r = window(st, at, size);
		if (!r)
			return st->err->code != TM_OK ? -1 : tm_err(st->err, TM_EINPUT, PERF_ERR_PREMATURE);
		const uint8_t *p = r + 8;
		size_t n = (size_t)size - 8;
		int64_t attr = perf_attr_of(&st->f, type, p, n, st->err);
		if (attr == -2)
			return -1;
		at += size;
		uint64_t aux = 0;
		switch (type) {
		case PERF_RECORD_AUXTRACE:
		case PERF_RECORD_AUXTRACE_INFO:
		case PERF_RECORD_AUX:
		case PERF_RECORD_TIME_CONV:
			if (tokenizer_record(st, type, attr, p, n, &aux) != 0)
				return -1;
			if (aux) {
				/* the data must be there (the reference waits for it) */
				uint8_t last;
				if (at + aux < at || tm_cursor_pread(st->c, &last, 1, at + aux - 1, st->err) != 1)
					return st->err->code != TM_OK ? -1 : tm_err(st->err, TM_EINPUT, PERF_ERR_PREMATURE);
			}
			if (type == PERF_RECORD_AUXTRACE && auxtrace_read(st, p) != 0)
				return -1;
			at += aux;
			continue;
		case PERF_RECORD_ITRACE_START:
			if (tokenizer_record(st, type, attr, p, n, &aux) != 0)
				return -1;
			if (scan_wants_records(st->sf)) {
				head(st, PERF_THREAD);
				tm_buf_put(&st->rec, p, 8);
				scan_record_side(st->sf, st->rec.data, st->rec.len);
			}
			break;
		default:
			break;
		}
		maybe_push(st, type, misc, attr, p, n);
	}
	if (at != end)
		return tm_err(st->err, TM_EINPUT, "perf: a record runs past the end of the data section");
	return 0;
}

/* ParseFeatureSections and ParseFeatures: -1 with err set. What the
 * features say goes into st->f; perf_features_skipped into skipped. */
static int features(pd_tok *st, int64_t skipped[256], tm_error *err)
{
	const perf_header *h = &st->f.h;
	uint8_t ids[256];
	size_t k = perf_feature_ids(h, ids);
	uint64_t at = h->data.offset + h->data.size;
	uint8_t *hdrs;
	if (read_range(st, at, (uint64_t)k * PERF_SECTION_SIZE, &hdrs, err) != 0)
		return -1;
	struct sec {
		uint8_t id;
		uint64_t offset, size;
	} *s = tm_xcalloc(k ? k : 1, sizeof *s);
	for (size_t i = 0; i < k; i++) {
		s[i].id = ids[i];
		memcpy(&s[i].offset, hdrs + 16 * i, 8);
		memcpy(&s[i].size, hdrs + 16 * i + 8, 8);
	}
	free(hdrs);
	/* by offset, the empty ones of an offset first (a stable insertion
	 * sort: the reference's std::sort on the same keys) */
	for (size_t i = 1; i < k; i++)
		for (size_t j = i; j > 0; j--) {
			struct sec *x = &s[j - 1], *y = &s[j];
			if (x->offset < y->offset || (x->offset == y->offset && x->size <= y->size))
				break;
			struct sec tmp = *x;
			*x = *y;
			*y = tmp;
		}
	uint64_t pos = at + (uint64_t)k * PERF_SECTION_SIZE;
	int rc = 0;
	for (size_t i = 0; i < k && rc == 0; i++) {
		if (s[i].offset < pos) {
			rc = tm_err(err, TM_EINPUT, "perf: feature section %u overlaps what comes before it",
				    (unsigned)s[i].id);
			break;
		}
		uint8_t *p;
		if (read_range(st, s[i].offset, s[i].size, &p, err) != 0) {
			rc = -1;
			break;
		}
		rc = perf_read_feature(&st->f, s[i].id, p ? p : (const uint8_t *)"", (size_t)s[i].size, skipped,
				       err);
		free(p);
		pos = s[i].offset + s[i].size; /* PopFrontUntil(section.end()) */
	}
	free(s);
	if (rc)
		return rc;
	/* kDone with bytes left */
	uint8_t b;
	if (tm_cursor_pread(st->c, &b, 1, pos, err) == 1) {
		uint64_t extra = 0;
		uint8_t *buf = tm_xmalloc(WINDOW);
		ssize_t got;
		while ((got = tm_cursor_pread(st->c, buf, WINDOW, pos + extra, err)) > 0)
			extra += (uint64_t)got;
		free(buf);
		return tm_err(err, TM_EINPUT, "Unexpected data, %" PRIu64, extra);
	}
	return 0;
}

static int header_and_attrs(pd_tok *st)
{
	uint8_t hb[PERF_HEADER_SIZE];
	ssize_t got = tm_cursor_pread(st->c, hb, sizeof hb, 0, st->err);
	if (got < 0)
		return -1;
	if (perf_read_header(hb, (size_t)got, &st->f.h, st->err) != 0)
		return -1;
	const perf_header *h = &st->f.h;
	uint8_t *p;
	if (h->attrs.size && h->attrs.offset < PERF_HEADER_SIZE)
		return tm_err(st->err, TM_EINPUT, PERF_ERR_PREMATURE);
	if (read_range(st, h->attrs.offset, h->attrs.size, &p, st->err))
		return -1;
	size_t n;
	int rc = perf_attrs_check(h, &n, st->err);
	/* each entry, then its ids (ParseAttrs) */
	for (size_t i = 0; rc == 0 && i < n; i++) {
		rc = perf_read_attr(&st->f, p + i * h->attr_size, (size_t)h->attr_size, st->err);
		if (rc)
			break;
		perf_section ids = st->f.attrs[i].ids;
		uint8_t *q;
		if (ids.size && ids.offset < PERF_HEADER_SIZE)
			rc = tm_err(st->err, TM_EINPUT, PERF_ERR_PREMATURE);
		else if (read_range(st, ids.offset, ids.size, &q, st->err))
			rc = -1;
		else {
			rc = perf_add_ids(&st->f, i, q, (size_t)ids.size, st->err);
			free(q);
		}
	}
	free(p);
	return rc ? rc : perf_build_invocation(&st->f, st->err);
}

/* What the model needs of each attr, and the features skipped. */
static void side_records(pd_tok *st, const int64_t skipped[256])
{
	if (!scan_wants_records(st->sf))
		return;
	for (size_t i = 0; i < st->f.n_attrs; i++) {
		const perf_attr *a = &st->f.attrs[i];
		tm_perf_attr_rec r;
		memset(&r, 0, sizeof r);
		r.index = (uint32_t)i;
		head(st, PERF_ATTR);
		tm_buf_put(&st->rec, &r, sizeof r);
		tm_mrec_put_str(&st->rec, a->event_name, strlen(a->event_name));
		scan_record_side(st->sf, st->rec.data, st->rec.len);
	}
	for (int i = 0; i < 256; i++) {
		if (!skipped[i])
			continue;
		head(st, PERF_STAT);
		int32_t idx = i;
		tm_buf_put(&st->rec, &idx, sizeof idx);
		tm_buf_put(&st->rec, &skipped[i], sizeof skipped[i]);
		scan_record_side(st->sf, st->rec.data, st->rec.len);
	}
}

static int read_file(scan_file *sf, tm_clock_tracker *t, tm_cursor *c, tm_buf *log, size_t from, tm_error *err)
{
	(void)log;
	(void)from;
	pd_tok st = {.sf = sf, .t = t, .c = c, .queue = scan_new_queue(sf), .err = err};
	int64_t skipped[256] = {0};
	int rc = header_and_attrs(&st);
	if (rc == 0) {
		/* SetGlobalClock(PERF): the perf clock names trace time when no
		 * conversion has happened yet and no other file claimed it */
		if (perf_has_perf_clock(&st.f))
			tm_tracker_claim(t, TM_CLOCK_PERF);
		tm_error ferr = {0};
		int frc = features(&st, skipped, &ferr);
		side_records(&st, skipped);
		st.win = tm_xmalloc(WINDOW);
		rc = records(&st);
		if (rc == 0 && frc != 0) {
			*err = ferr;
			rc = -1;
		} else {
			tm_err_clear(&ferr);
		}
		if (rc == 0)
			flush_comms(&st);
	}
	free(st.win);
	perf_sample_free(&st.smp);
	perf_file_free(&st.f);
	tm_buf_free(&st.pending);
	tm_buf_free(&st.comms);
	tm_buf_free(&st.rec);
	return rc;
}

const tm_tokenizer tm_perf_tokenizer = {.clock = TM_CLOCK_MONOTONIC, .read = read_file};
