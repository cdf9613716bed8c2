/* core/formats/perf/perf_data.c - the fields of a perf.data file, read
 * as the reference's perf importer reads them (perf_data_tokenizer.cc,
 * attrs_section_reader.cc, perf_invocation.cc, perf_event_attr.cc,
 * features.cc, sample.cc, mmap_record.cc, record_parser.cc).
 *
 * Hand-written: a binary format of fixed little-endian structs whose
 * exact failures (and their texts) are the contract; no library reads it. */
#include "formats/perf/perf_data.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "clock/clockid.h"
#include "util/hash.h"
#include "util/ser.h"

/* ---- a bounded reader ------------------------------------------------------------ */

typedef struct rd {
	const uint8_t *p, *end;
} rd;

static size_t left(const rd *r)
{
	return (size_t)(r->end - r->p);
}

static int get(rd *r, void *out, size_t n)
{
	if (left(r) < n)
		return 0;
	memcpy(out, r->p, n);
	r->p += n;
	return 1;
}

static int skip(rd *r, size_t n)
{
	if (left(r) < n)
		return 0;
	r->p += n;
	return 1;
}

static uint64_t le64(const uint8_t *p)
{
	uint64_t v;
	memcpy(&v, p, sizeof v);
	return v;
}

/* ReadCString: up to a NUL inside the bytes (0 when there is none). */
static int cstring(rd *r, const char **s, size_t *n)
{
	const uint8_t *z = memchr(r->p, 0, left(r));
	if (!z)
		return 0;
	*s = (const char *)r->p;
	*n = (size_t)(z - r->p);
	r->p = z;
	return 1;
}

/* features.cc ParseString: a uint32 length (not 0), that many bytes whose
 * last is NUL; the string is up to its first NUL. */
static int padded_string(rd *r, const char **s, size_t *n)
{
	uint32_t len;
	if (!get(r, &len, sizeof len) || len == 0 || left(r) < len || r->p[len - 1] != 0)
		return 0;
	*s = (const char *)r->p;
	*n = strlen(*s);
	r->p += len;
	return 1;
}

/* ---- the header ------------------------------------------------------------------ */

int perf_read_header(const uint8_t *p, size_t n, perf_header *h, tm_error *err)
{
	if (n < PERF_HEADER_SIZE)
		return tm_err(err, TM_EINPUT, PERF_ERR_PREMATURE);
	if (memcmp(p, "PERFILE2", 8) != 0)
		return tm_err(err, TM_EINPUT, "Invalid magic string");
	h->size = le64(p + 8);
	h->attr_size = le64(p + 16);
	h->attrs = (perf_section){le64(p + 24), le64(p + 32)};
	h->data = (perf_section){le64(p + 40), le64(p + 48)};
	h->event_types = (perf_section){le64(p + 56), le64(p + 64)};
	for (int i = 0; i < 4; i++)
		h->flags[i] = le64(p + 72 + 8 * i);
	if (h->size != PERF_HEADER_SIZE)
		return tm_err(err, TM_EINPUT, "Failed to perf file header size. Expected %u, found %" PRIu64,
			      PERF_HEADER_SIZE, h->size);
	return 0;
}

size_t perf_feature_ids(const perf_header *h, uint8_t ids[256])
{
	size_t k = 0;
	for (unsigned i = 0; i < 256; i++)
		if (h->flags[i / 64] >> (i % 64) & 1u)
			ids[k++] = (uint8_t)i;
	return k;
}

/* ---- attrs ----------------------------------------------------------------------- */

static size_t bytes_of(uint64_t sample_type, uint64_t mask)
{
	return (size_t)__builtin_popcountll(sample_type & mask) * 8u;
}

/* ExtractClockId: a POSIX clock id to the reference's builtin clocks. */
static uint32_t clock_of(const perf_attr *a)
{
	if (!PERF_ATTR_USE_CLOCKID(a))
		return TM_CLOCK_PERF;
	switch (a->clockid) {
	case 0:
		return TM_CLOCK_REALTIME;
	case 1:
		return TM_CLOCK_MONOTONIC;
	case 4:
		return TM_CLOCK_MONOTONIC_RAW;
	case 5:
		return TM_CLOCK_REALTIME_COARSE;
	case 6:
		return TM_CLOCK_MONOTONIC_COARSE;
	case 7:
		return TM_CLOCK_BOOTTIME;
	default:
		return TM_CLOCK_UNKNOWN;
	}
}

/* The offsets PerfEventAttr derives from sample_type. */
static void derive(perf_attr *a)
{
	uint64_t st = a->sample_type;
	a->clock = clock_of(a);
	a->time_from_start = st & PERF_SAMPLE_TIME
				     ? (int64_t)bytes_of(st, PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID)
				     : -1;
	a->time_from_end = PERF_ATTR_SAMPLE_ID_ALL(a) && (st & PERF_SAMPLE_TIME)
				   ? (int64_t)bytes_of(st, PERF_SAMPLE_TIME | PERF_SAMPLE_ID | PERF_SAMPLE_STREAM_ID |
								   PERF_SAMPLE_CPU | PERF_SAMPLE_IDENTIFIER)
				   : -1;
	if (st & PERF_SAMPLE_IDENTIFIER)
		a->id_from_start = 0;
	else if (st & PERF_SAMPLE_ID)
		a->id_from_start = (int64_t)bytes_of(st, PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |
							     PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR);
	else
		a->id_from_start = -1;
	if (st & PERF_SAMPLE_IDENTIFIER)
		a->id_from_end = 8;
	else if (st & PERF_SAMPLE_ID)
		a->id_from_end = (int64_t)bytes_of(st, PERF_SAMPLE_ID | PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU |
							   PERF_SAMPLE_IDENTIFIER);
	else
		a->id_from_end = -1;
	a->sample_id_size = bytes_of(st, PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ID | PERF_SAMPLE_STREAM_ID |
						 PERF_SAMPLE_CPU | PERF_SAMPLE_IDENTIFIER);
}

/* ReadPerfEventAttr of `size` bytes: what of them a perf_event_attr holds
 * (fields past the bytes are 0), the rest skipped. The reference's struct
 * is longer than every field read here (clockid ends at byte 96). */
static int read_attr(rd *r, size_t size, perf_attr *a)
{
	if (left(r) < size)
		return 0;
	uint8_t raw[96] = {0};
	memcpy(raw, r->p, size < sizeof raw ? size : sizeof raw);
	r->p += size;
	memset(a, 0, sizeof *a);
	memcpy(&a->type, raw, 4);
	memcpy(&a->size, raw + 4, 4);
	memcpy(&a->config, raw + 8, 8);
	memcpy(&a->sample_period, raw + 16, 8);
	memcpy(&a->sample_type, raw + 24, 8);
	memcpy(&a->read_format, raw + 32, 8);
	memcpy(&a->flags, raw + 40, 8);
	memcpy(&a->clockid, raw + 92, 4);
	return 1;
}

int perf_attrs_check(const perf_header *h, size_t *count, tm_error *err)
{
	if (h->attr_size == 0)
		return tm_err(err, TM_EINPUT, "Invalid attr_size (0) in perf file header.");
	if (h->attrs.size % h->attr_size != 0)
		return tm_err(err, TM_EINPUT,
			      "Invalid attrs section size %" PRIu64 " for attr_size %" PRIu64 " in perf file header.",
			      h->attrs.size, h->attr_size);
	if (h->attr_size < PERF_SECTION_SIZE)
		return tm_err(err, TM_EINPUT,
			      "Invalid attr_size in file header. Expected at least %u, found %" PRIu64,
			      PERF_SECTION_SIZE, h->attr_size);
	*count = (size_t)(h->attrs.size / h->attr_size);
	return 0;
}

int perf_read_attr(perf_file *f, const uint8_t *p, size_t n, tm_error *err)
{
	size_t attr_size = (size_t)(f->h.attr_size - PERF_SECTION_SIZE);
	TM_GROW(f->attrs, f->cap_attrs, f->n_attrs + 1);
	perf_attr *a = &f->attrs[f->n_attrs];
	rd r = {p, p + n};
	if (!read_attr(&r, attr_size, a) || !get(&r, &a->ids, sizeof a->ids))
		return tm_err(err, TM_EINPUT, PERF_ERR_PREMATURE);
	f->n_attrs++;
	a->event_name = tm_xstrdup("");
	derive(a);
	if (a->size != attr_size)
		return tm_err(err, TM_EINPUT, "Invalid attr.size. Expected %zu, but found %" PRIu32, attr_size, a->size);
	if (a->ids.size % 8 != 0)
		return tm_err(err, TM_EINPUT, "Invalid id section size: %" PRIu64, a->ids.size);
	return 0;
}

/* A set of the ids seen, to find the first repeated one in file order as
 * the reference's FlatHashMap::Insert does: open addressing, id + 1 as
 * the key (0 empty). */
static int id_seen(uint64_t **set, size_t *cap, size_t *n, uint64_t id)
{
	if ((*n + 1) * 2 > *cap) {
		size_t nc = *cap ? *cap * 2 : 64;
		uint64_t *ns = tm_xcalloc(nc, sizeof *ns);
		for (size_t i = 0; i < *cap; i++)
			if ((*set)[i]) {
				size_t k = (size_t)tm_khash_u64((*set)[i]) & (nc - 1);
				while (ns[k])
					k = (k + 1) & (nc - 1);
				ns[k] = (*set)[i];
			}
		free(*set);
		*set = ns;
		*cap = nc;
	}
	uint64_t key = id + 1; /* UINT64_MAX (key 0) is the caller's */
	size_t k = (size_t)tm_khash_u64(key) & (*cap - 1);
	while ((*set)[k]) {
		if ((*set)[k] == key)
			return 1;
		k = (k + 1) & (*cap - 1);
	}
	(*set)[k] = key;
	(*n)++;
	return 0;
}

int perf_add_ids(perf_file *f, size_t attr, const uint8_t *p, size_t n, tm_error *err)
{
	size_t k = n / 8;
	if (k > PERF_MAX_IDS - f->n_by_id)
		return tm_err(err, TM_EINPUT, "perf: more than %u perf_event_attr ids", PERF_MAX_IDS);
	f->by_id = realloc(f->by_id, (f->n_by_id + k + 1) * sizeof *f->by_id);
	if (!f->by_id)
		abort();
	for (size_t i = 0; i < k; i++)
		f->by_id[f->n_by_id++] = (struct perf_id_attr){le64(p + 8 * i), (uint32_t)attr};
	return 0;
}

static int by_id_cmp(const void *a, const void *b)
{
	const struct perf_id_attr *x = a, *y = b;
	if (x->id != y->id)
		return x->id < y->id ? -1 : 1;
	return x->attr < y->attr ? -1 : x->attr > y->attr;
}

static int offsets_match(const perf_attr *a, const perf_attr *b)
{
	return a->id_from_start == b->id_from_start &&
	       (!PERF_ATTR_SAMPLE_ID_ALL(b) || a->id_from_end == b->id_from_end);
}

int perf_build_invocation(perf_file *f, tm_error *err)
{
	if (f->n_attrs == 0)
		return tm_err(err, TM_EINPUT, "No perf_event_attr");
	const perf_attr *first = &f->attrs[0];
	/* the reference's order: per attr, its flags, then its ids in order
	 * (the ids are in f->by_id by attr, as added) */
	uint64_t *set = NULL;
	size_t cap = 0, n = 0, at = 0;
	int rc = 0, has_max = 0;
	for (size_t i = 0; i < f->n_attrs && rc == 0; i++) {
		const perf_attr *a = &f->attrs[i];
		if (PERF_ATTR_SAMPLE_ID_ALL(first) != PERF_ATTR_SAMPLE_ID_ALL(a))
			rc = tm_err(err, TM_EINPUT, "perf_event_attr with different sample_id_all values");
		else if (!offsets_match(first, a))
			rc = tm_err(err, TM_EINPUT, "perf_event_attr with different id offsets");
		for (; rc == 0 && at < f->n_by_id && f->by_id[at].attr == i; at++) {
			uint64_t id = f->by_id[at].id;
			int dup = id == UINT64_MAX ? has_max : id_seen(&set, &cap, &n, id);
			if (id == UINT64_MAX)
				has_max = 1;
			if (dup)
				rc = tm_err(err, TM_EINPUT, "Same id maps to multiple perf_event_attr: %" PRIu64, id);
		}
	}
	free(set);
	if (rc)
		return rc;
	if (f->n_attrs > 1 &&
	    (first->id_from_start < 0 || (PERF_ATTR_SAMPLE_ID_ALL(first) && first->id_from_end < 0)))
		return tm_err(err, TM_EINPUT, "No id offsets for multiple perf_event_attr");
	qsort(f->by_id, f->n_by_id, sizeof *f->by_id, by_id_cmp);
	return 0;
}

int perf_has_perf_clock(const perf_file *f)
{
	/* over the attrs that have ids (attrs_by_id_) */
	for (size_t i = 0; i < f->n_by_id; i++)
		if (f->attrs[f->by_id[i].attr].clock == TM_CLOCK_PERF)
			return 1;
	return 0;
}

int64_t perf_attr_by_id(const perf_file *f, uint64_t id)
{
	size_t lo = 0, hi = f->n_by_id;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (f->by_id[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < f->n_by_id && f->by_id[lo].id == id ? (int64_t)f->by_id[lo].attr : -1;
}

/* ---- features -------------------------------------------------------------------- */

/* PerfInvocation::SetEventName(id, name): the attr of the id. */
static void name_attr(perf_file *f, int64_t attr, const char *s, size_t n)
{
	if (attr < 0)
		return;
	free(f->attrs[attr].event_name);
	f->attrs[attr].event_name = tm_xstrndup(s, n);
}

/* build_ix and build_next over all of build_ids, each chain in the
 * entries' order (made again when a section adds entries). */
static void index_build_ids(perf_file *f)
{
	tm_u64map_clear(&f->build_ix);
	f->build_next = tm_xrealloc(f->build_next, (f->n_build_ids ? f->n_build_ids : 1) * sizeof *f->build_next);
	for (size_t i = f->n_build_ids; i-- > 0;) {
		const char *name = f->build_ids[i].filename;
		tm_chain_push(&f->build_ix, tm_khash_str(name), (uint32_t)i, &f->build_next[i]);
	}
}

static int read_build_ids(perf_file *f, const uint8_t *p, size_t n, tm_error *err)
{
	rd r = {p, p + n};
	while (left(&r)) {
		uint32_t type;
		uint16_t misc, size;
		if (!get(&r, &type, 4) || !get(&r, &misc, 2) || !get(&r, &size, 2))
			return tm_err(err, TM_EINPUT, "Failed to parse feature BuildId. Could not read header.");
		if (size < 8)
			return tm_err(err, TM_EINPUT, "Failed to parse feature BuildId. Invalid size in header.");
		if (left(&r) < (size_t)size - 8)
			return tm_err(err, TM_EINPUT, "Failed to parse feature BuildId. Could not read payload.");
		rd e = {r.p, r.p + size - 8};
		r.p += size - 8;
		int32_t pid;
		uint8_t rec[24]; /* data[20], size, reserved[3] */
		if (!get(&e, &pid, 4) || !get(&e, rec, sizeof rec))
			return tm_err(err, TM_EINPUT, "Failed to parse feature BuildId. Could not read entry.");
		const uint8_t *z = memchr(e.p, 0, left(&e));
		size_t name_n = z ? (size_t)(z - e.p) : left(&e);
		uint8_t len;
		if (misc & (1u << 15)) { /* PERF_RECORD_MISC_EXT_RESERVED: the size is said */
			if (rec[20] > 20)
				return tm_err(err, TM_EINPUT, "Failed to parse feature BuildId. Could not read entry.");
			len = rec[20];
		} else {
			/* GuessBuildIdSize: Simpleperf pads with zeros to 20 */
			uint8_t used = 20;
			while (used > 0 && rec[used - 1] == 0)
				used--;
			len = used > 16 ? 20 : used > 8 ? 16 : 8;
		}
		TM_GROW(f->build_ids, f->cap_build_ids, f->n_build_ids + 1);
		perf_build_id *b = &f->build_ids[f->n_build_ids++];
		b->pid = pid;
		b->filename = tm_xstrndup((const char *)e.p, name_n);
		memcpy(b->id, rec, 20);
		b->size = len;
	}
	index_build_ids(f);
	return 0;
}

static int read_cmdline(perf_file *f, const uint8_t *p, size_t n, tm_error *err)
{
	rd r = {p, p + n};
	uint32_t nr;
	if (!get(&r, &nr, sizeof nr))
		return tm_err(err, TM_EINPUT, "Failed to parse nr for CMDLINE");
	tm_buf line = {0};
	for (uint32_t i = 0; i < nr; i++) {
		const char *s;
		size_t k;
		if (!padded_string(&r, &s, &k)) {
			tm_buf_free(&line);
			return tm_err(err, TM_EINPUT, "Failed to parse string for CMDLINE");
		}
		if (i)
			tm_buf_putc(&line, ' ');
		tm_buf_put(&line, s, k);
	}
	tm_buf_free(&f->cmdline);
	f->cmdline = line;
	f->has_cmdline = 1;
	return 0;
}

/* Each entry's name goes to the attrs of its ids, the last entry of an
 * attr winning. An attr is named once an entry (named[attr] is the entry
 * that last named it): an entry of a long name and many ids, as a
 * crafted file can hold, took a copy of the name for each id (a 1.9 MB
 * section: 0.58 s). */
static int read_event_desc(perf_file *f, const uint8_t *p, size_t n, tm_error *err)
{
	rd r = {p, p + n};
	uint32_t nr, attr_size;
	if (!get(&r, &nr, 4) || !get(&r, &attr_size, 4))
		return tm_err(err, TM_EINPUT, "Failed to parse header for PERF_EVENT_DESC");
	uint32_t *named = tm_xcalloc(f->n_attrs ? f->n_attrs : 1, sizeof *named);
	int rc = 0;
	for (uint32_t entry = 1; nr && rc == 0; nr--, entry++) {
		perf_attr a;
		uint32_t nr_ids;
		const char *s;
		size_t k;
		if (!read_attr(&r, attr_size, &a) || !get(&r, &nr_ids, 4) || !padded_string(&r, &s, &k)) {
			rc = tm_err(err, TM_EINPUT, "Failed to parse record for PERF_EVENT_DESC");
			break;
		}
		for (; nr_ids; nr_ids--) {
			uint64_t id;
			if (!get(&r, &id, 8)) {
				rc = tm_err(err, TM_EINPUT, "Failed to parse ids for PERF_EVENT_DESC");
				break;
			}
			int64_t at = perf_attr_by_id(f, id);
			if (at >= 0 && named[at] != entry) {
				named[at] = entry;
				name_attr(f, at, s, k);
			}
		}
	}
	free(named);
	return rc;
}

static int read_group_desc(const uint8_t *p, size_t n, tm_error *err)
{
	rd r = {p, p + n};
	uint32_t nr;
	if (!get(&r, &nr, 4))
		return tm_err(err, TM_EINPUT, "Failed to parse header for HEADER_GROUP_DESC");
	for (; nr; nr--) {
		const char *s;
		size_t k;
		uint32_t leader, members;
		if (!padded_string(&r, &s, &k) || !get(&r, &leader, 4) || !get(&r, &members, 4))
			return tm_err(err, TM_EINPUT, "Failed to parse HEADER_GROUP_DESC entry");
	}
	return 0;
}

/* base::StringToUInt64 / StringToUInt32: the whole token read by
 * strtoull (saturating, a '-' negating), cut to the type's width. */
static int to_u64(const char *s, uint64_t max, uint64_t *out)
{
	if (!*s)
		return 0;
	char *end;
	unsigned long long v = strtoull(s, &end, 10);
	if (*end)
		return 0;
	*out = max == UINT32_MAX ? (uint64_t)(uint32_t)v : (uint64_t)v;
	return 1;
}

/* The event_type_info entry: lines of "name,type,config"
 * (ParseEventTypeInfo; base::SplitString drops empty pieces). The first
 * line of a (type, config) names every attr of them that has ids
 * (SetEventName); later lines of it are left out. Both are found through
 * maps: a walk over the lines seen and the ids for each line took time
 * with the square of the lines (40,000 lines, 0.9 MB: 1.2 s). */
static uint64_t type_config_hash(uint64_t type, uint64_t config)
{
	return tm_khash_pair(type, config);
}

static int event_type_info(perf_file *f, const char *v, size_t n, tm_error *err)
{
	/* the attrs that have ids, chained by the hash of their (type,
	 * config) (tm_chain) */
	tm_u64map first = {0}, seen = {0};
	uint32_t *next = tm_xcalloc(f->n_attrs ? f->n_attrs : 1, sizeof *next);
	uint8_t *has_ids = tm_xcalloc(f->n_attrs ? f->n_attrs : 1, 1);
	for (size_t i = 0; i < f->n_by_id; i++)
		has_ids[f->by_id[i].attr] = 1;
	for (size_t a = f->n_attrs; a-- > 0;)
		if (has_ids[a])
			tm_chain_push(&first, type_config_hash(f->attrs[a].type, f->attrs[a].config), (uint32_t)a, &next[a]);
	/* the (type, config)s seen, chained by hash: the line that first had
	 * each */
	struct type_config {
		uint64_t type, config;
		uint32_t next;
	} *lines = NULL;
	size_t n_lines = 0, cap_lines = 0;
	char *copy = tm_xstrndup(v, n), *save = NULL;
	int rc = 0;
	for (char *line = strtok_r(copy, "\n", &save); line && rc == 0; line = strtok_r(NULL, "\n", &save)) {
		char *tok[4] = {0}, *s2 = NULL, *l2 = tm_xstrdup(line);
		size_t k = 0;
		for (char *t = strtok_r(l2, ",", &s2); t; t = strtok_r(NULL, ",", &s2))
			if (k < 4)
				tok[k++] = t;
			else
				k++;
		uint64_t type = 0, config = 0;
		if (k != 3)
			rc = tm_err(err, TM_EINPUT, "Invalid event_type_info: '%s'", line);
		else if (!to_u64(tok[1], UINT32_MAX, &type))
			rc = tm_err(err, TM_EINPUT, "Could not parse type in event_type_info: '%s'", tok[1]);
		else if (!to_u64(tok[2], UINT64_MAX, &config))
			rc = tm_err(err, TM_EINPUT, "Could not parse config in event_type_info: '%s'", tok[2]);
		if (rc) {
			free(l2);
			break;
		}
		uint64_t h = type_config_hash(type, config);
		uint32_t at = tm_chain_first(&seen, h);
		while (at && !(lines[at - 1].type == type && lines[at - 1].config == config))
			at = lines[at - 1].next;
		if (!at) {
			TM_GROW(lines, cap_lines, n_lines + 1);
			lines[n_lines] = (struct type_config){type, config, 0};
			tm_chain_push(&seen, h, (uint32_t)n_lines, &lines[n_lines].next);
			n_lines++;
			for (uint32_t i = tm_chain_first(&first, h); i; i = next[i - 1])
				if (f->attrs[i - 1].type == type && f->attrs[i - 1].config == config)
					name_attr(f, i - 1, tok[0], strlen(tok[0]));
		}
		free(l2);
	}
	free(copy);
	free(lines);
	free(next);
	free(has_ids);
	tm_u64map_free(&first);
	tm_u64map_free(&seen);
	return rc;
}

static int read_simpleperf_meta(perf_file *f, const uint8_t *p, size_t n, tm_error *err)
{
	const char *it = (const char *)p, *end = it + n;
	while (it != end) {
		const char *z = memchr(it, 0, (size_t)(end - it));
		if (!z)
			return tm_err(err, TM_EINPUT, "Failed to read key from Simpleperf MetaInfo");
		const char *key = it;
		size_t key_n = (size_t)(z - it);
		it = z + 1;
		if (it == end)
			return tm_err(err, TM_EINPUT, "Missing value in Simpleperf MetaInfo");
		z = memchr(it, 0, (size_t)(end - it));
		if (!z)
			return tm_err(err, TM_EINPUT, "Failed to read value from Simpleperf MetaInfo");
		const char *val = it;
		size_t val_n = (size_t)(z - it);
		it = z + 1;
		if (key_n == 15 && memcmp(key, "event_type_info", 15) == 0 && event_type_info(f, val, val_n, err))
			return -1;
	}
	return 0;
}

static int read_simpleperf_file2(const uint8_t *p, size_t n, tm_error *err)
{
	rd r = {p, p + n};
	while (left(&r)) {
		uint32_t len;
		if (!get(&r, &len, 4))
			return tm_err(err, TM_EINPUT, "Failed to parse len in FEATURE_SIMPLEPERF_FILE2");
		if (!skip(&r, len))
			return tm_err(err, TM_EINPUT, "Failed to parse payload in FEATURE_SIMPLEPERF_FILE2");
	}
	return 0;
}

int perf_read_feature(perf_file *f, uint8_t id, const uint8_t *p, size_t n, int64_t skipped[256], tm_error *err)
{
	switch (id) {
	case PERF_FEAT_OS_RELEASE: {
		rd r = {p, p + n};
		const char *s;
		size_t k;
		if (!padded_string(&r, &s, &k))
			return tm_err(err, TM_EINPUT, "Failed to parse string for OS_RELEASE");
		return 0;
	}
	case PERF_FEAT_CMD_LINE:
		return read_cmdline(f, p, n, err);
	case PERF_FEAT_EVENT_DESC:
		return read_event_desc(f, p, n, err);
	case PERF_FEAT_BUILD_ID:
		return read_build_ids(f, p, n, err);
	case PERF_FEAT_GROUP_DESC:
		return read_group_desc(p, n, err);
	case PERF_FEAT_SIMPLEPERF_META_INFO:
		f->simpleperf = 1;
		return read_simpleperf_meta(f, p, n, err);
	case PERF_FEAT_SIMPLEPERF_FILE2:
		/* its symbol tables are not read (tracemount(1), "Divergences") */
		f->simpleperf = 1;
		return read_simpleperf_file2(p, n, err);
	default:
		skipped[id]++;
		return 0;
	}
}

/* ---- records --------------------------------------------------------------------- */

int64_t perf_attr_of(const perf_file *f, uint32_t type, const uint8_t *payload, size_t n, tm_error *err)
{
	if (type >= PERF_RECORD_USER_TYPE_START)
		return -1;
	if (f->n_attrs == 1)
		return 0;
	const perf_attr *first = &f->attrs[0];
	if (type != PERF_RECORD_SAMPLE && !PERF_ATTR_SAMPLE_ID_ALL(first))
		return 0;
	/* ReadEventId: at the offsets every attr shares (Build checked them) */
	int64_t off = type == PERF_RECORD_SAMPLE ? first->id_from_start : first->id_from_end;
	uint64_t id;
	if (off < 0 || (type == PERF_RECORD_SAMPLE ? n < (size_t)off + 8 : (n < (size_t)off || off < 8))) {
		tm_err(err, TM_EINPUT, "Unable to determine perf_event_attr for record. Failed to read record id");
		return -2;
	}
	id = le64(payload + (type == PERF_RECORD_SAMPLE ? (size_t)off : n - (size_t)off));
	if (id == 0)
		return 0;
	int64_t a = perf_attr_by_id(f, id);
	if (a < 0) {
		tm_err(err, TM_EINPUT, "Unable to determine perf_event_attr for record. No perf_event_attr for id %" PRIu64,
		       id);
		return -2;
	}
	return a;
}

int perf_record_time(const perf_attr *a, uint32_t type, const uint8_t *payload, size_t n, uint64_t *time)
{
	if (!a)
		return 0;
	size_t at;
	if (type != PERF_RECORD_SAMPLE) {
		if (a->time_from_end < 0 || (size_t)a->time_from_end > n || a->time_from_end < 8)
			return 0;
		at = n - (size_t)a->time_from_end;
	} else {
		if (a->time_from_start < 0 || n < (size_t)a->time_from_start + 8)
			return 0;
		at = (size_t)a->time_from_start;
	}
	*time = le64(payload + at);
	return *time != 0;
}

int perf_misc_mode(uint16_t misc)
{
	switch (misc & 7u) {
	case 1:
		return PERF_MODE_KERNEL;
	case 2:
		return PERF_MODE_USER;
	case 3:
		return PERF_MODE_HYPERVISOR;
	case 4:
		return PERF_MODE_GUEST_KERNEL;
	case 5:
		return PERF_MODE_GUEST_USER;
	default:
		return PERF_MODE_UNKNOWN;
	}
}

/* PerfCallchainContextToCpuMode: the marks are the top 4095 values. */
#define PERF_CONTEXT_MAX ((uint64_t)-4095)
static int context_mode(uint64_t ip)
{
	switch (ip) {
	case (uint64_t)-32:
		return PERF_MODE_HYPERVISOR;
	case (uint64_t)-128:
		return PERF_MODE_KERNEL;
	case (uint64_t)-512:
		return PERF_MODE_USER;
	case (uint64_t)-2176:
		return PERF_MODE_GUEST_KERNEL;
	case (uint64_t)-2560:
		return PERF_MODE_GUEST_USER;
	default:
		return PERF_MODE_UNKNOWN;
	}
}

/* ParseSampleRead: the values are read past, not kept (the counters of
 * read groups are not made: tracemount(1), "Divergences"). */
static perf_read *read_slot(perf_sample *s)
{
	TM_GROW(s->reads, s->cap_reads, s->n_reads + 1);
	perf_read *e = &s->reads[s->n_reads++];
	memset(e, 0, sizeof *e);
	return e;
}

/* ParseSampleRead: a group's values (each with its id when the format
 * has them), or one value, into s->reads. */
static int sample_read(rd *r, uint64_t fmt, perf_sample *s)
{
	enum { TOTAL_TIME_ENABLED = 1, TOTAL_TIME_RUNNING = 2, FORMAT_ID = 4, FORMAT_GROUP = 8, FORMAT_LOST = 16 };
	uint64_t v;
	if (!get(r, &v, 8))
		return 0;
	if ((fmt & TOTAL_TIME_ENABLED) && !skip(r, 8))
		return 0;
	if ((fmt & TOTAL_TIME_RUNNING) && !skip(r, 8))
		return 0;
	if (fmt & FORMAT_GROUP) {
		size_t each = 8 + (fmt & FORMAT_ID ? 8 : 0) + (fmt & FORMAT_LOST ? 8 : 0);
		if (v > left(r) / each)
			return 0;
		for (uint64_t i = 0; i < v; i++) {
			perf_read *e = read_slot(s);
			get(r, &e->value, 8);
			if (fmt & FORMAT_ID) {
				e->has_id = 1;
				get(r, &e->id, 8);
			}
			if (fmt & FORMAT_LOST)
				skip(r, 8);
		}
		return 1;
	}
	perf_read *e = read_slot(s);
	e->value = v;
	if (fmt & FORMAT_ID) {
		e->has_id = 1;
		if (!get(r, &e->id, 8))
			return 0;
	}
	if ((fmt & FORMAT_LOST) && !skip(r, 8))
		return 0;
	return 1;
}

#define NEED(cond, what)                                                         \
	do {                                                                     \
		if (!(cond))                                                     \
			return tm_err(err, TM_EINPUT, "Not enough data to read " what); \
	} while (0)

int perf_read_sample(const perf_attr *a, uint16_t misc, const uint8_t *p, size_t n, perf_sample *s, tm_error *err)
{
	uint64_t st = a->sample_type;
	rd r = {p, p + n};
	s->has_ip = s->has_tid = s->has_time = s->has_cpu = s->has_period = s->has_read = 0;
	s->n_frames = s->n_reads = 0;
	s->mode = perf_misc_mode(misc);
	uint64_t identifier = 0, id = 0, stream;
	int has_identifier = 0, has_id = 0;
	if (st & PERF_SAMPLE_IDENTIFIER) {
		NEED(get(&r, &identifier, 8), "PERF_SAMPLE_IDENTIFIER");
		has_identifier = 1;
	}
	if (st & PERF_SAMPLE_IP) {
		NEED(get(&r, &s->ip, 8), "PERF_SAMPLE_IP");
		s->has_ip = 1;
	}
	if (st & PERF_SAMPLE_TID) {
		NEED(get(&r, &s->pid, 4) && get(&r, &s->tid, 4), "PERF_SAMPLE_TID");
		s->has_tid = 1;
	}
	if (st & PERF_SAMPLE_TIME) {
		NEED(get(&r, &s->time, 8), "PERF_SAMPLE_TIME");
		s->has_time = 1;
	}
	if (st & PERF_SAMPLE_ADDR)
		NEED(skip(&r, 8), "PERF_SAMPLE_ADDR");
	if (st & PERF_SAMPLE_ID) {
		NEED(get(&r, &id, 8), "PERF_SAMPLE_ID");
		has_id = 1;
	}
	if (has_identifier && has_id && identifier != id)
		return tm_err(err, TM_EINPUT, "ID and IDENTIFIER mismatch");
	if (st & PERF_SAMPLE_STREAM_ID)
		NEED(get(&r, &stream, 8), "PERF_SAMPLE_STREAM_ID");
	if (st & PERF_SAMPLE_CPU) {
		NEED(get(&r, &s->cpu, 4) && skip(&r, 4), "PERF_SAMPLE_CPU");
		s->has_cpu = 1;
	}
	if (st & PERF_SAMPLE_PERIOD) {
		NEED(get(&r, &s->period, 8), "PERF_SAMPLE_PERIOD");
		s->has_period = 1;
	}
	if (st & PERF_SAMPLE_READ) {
		if (!sample_read(&r, a->read_format, s))
			return tm_err(err, TM_EINPUT, "Failed to read PERF_SAMPLE_READ field");
		s->has_read = s->n_reads > 0;
		if (!s->has_read)
			return tm_err(err, TM_EINPUT, "No data in PERF_SAMPLE_READ field");
	}
	if (st & PERF_SAMPLE_CALLCHAIN) {
		uint64_t nr;
		if (!get(&r, &nr, 8) || nr > left(&r) / 8)
			return tm_err(err, TM_EINPUT, "Failed to read PERF_SAMPLE_CALLCHAIN field");
		int mode = s->mode;
		for (uint64_t i = 0; i < nr; i++) {
			uint64_t ip = le64(r.p + 8 * i);
			if (ip >= PERF_CONTEXT_MAX) {
				mode = context_mode(ip);
				continue;
			}
			if (s->n_frames == s->cap_frames) {
				s->cap_frames = s->cap_frames ? 2 * s->cap_frames : 64;
				s->ips = realloc(s->ips, s->cap_frames * sizeof *s->ips);
				s->modes = realloc(s->modes, s->cap_frames * sizeof *s->modes);
				if (!s->ips || !s->modes)
					abort();
			}
			s->ips[s->n_frames] = ip;
			s->modes[s->n_frames++] = (uint8_t)mode;
		}
	}
	return 0;
}

void perf_sample_free(perf_sample *s)
{
	free(s->ips);
	free(s->modes);
	free(s->reads);
	s->ips = NULL;
	s->modes = NULL;
	s->reads = NULL;
	s->cap_frames = s->n_frames = 0;
	s->cap_reads = s->n_reads = 0;
}

int perf_read_mmap(uint32_t type, uint16_t misc, const uint8_t *p, size_t n, perf_mmap *m)
{
	rd r = {p, p + n};
	memset(m, 0, sizeof *m);
	if (!get(&r, &m->pid, 4) || !get(&r, &m->tid, 4) || !get(&r, &m->addr, 8) || !get(&r, &m->len, 8) ||
	    !get(&r, &m->pgoff, 8))
		return -1;
	if (type == PERF_RECORD_MMAP2) {
		uint8_t u[24]; /* build id (size, 3 reserved, 20 bytes) or the inode's fields */
		if (!get(&r, u, sizeof u) || !skip(&r, 8))
			return -1;
		if (misc & (1u << 14)) { /* PERF_RECORD_MISC_MMAP_BUILD_ID */
			m->has_build_id = 1;
			m->build_id_size = u[0];
			memcpy(m->build_id, u + 4, 20);
		}
	}
	if (!cstring(&r, &m->filename, &m->filename_n))
		return -1;
	if (m->has_build_id && m->build_id_size > 20)
		return -1;
	m->mode = perf_misc_mode(misc);
	return 0;
}

int perf_read_comm(const uint8_t *p, size_t n, uint32_t *pid, uint32_t *tid, const char **comm, size_t *comm_n)
{
	rd r = {p, p + n};
	if (!get(&r, pid, 4) || !get(&r, tid, 4) || !cstring(&r, comm, comm_n))
		return -1;
	return 0;
}

const perf_build_id *perf_lookup_build_id(const perf_file *f, uint32_t pid, const char *name, size_t n)
{
	/* the last entry of a key wins (a FlatHashMap Insert keeps the first:
	 * so the first) */
	const perf_build_id *any = NULL;
	for (uint32_t at = tm_chain_first(&f->build_ix, tm_khash_bytes(name, n)); at; at = f->build_next[at - 1]) {
		const perf_build_id *b = &f->build_ids[at - 1];
		if (strlen(b->filename) != n || memcmp(b->filename, name, n) != 0)
			continue;
		if (b->pid == (int32_t)pid)
			return b;
		if (b->pid == -1 && !any)
			any = b;
	}
	return any;
}

void perf_file_free(perf_file *f)
{
	for (size_t i = 0; i < f->n_attrs; i++)
		free(f->attrs[i].event_name);
	free(f->attrs);
	free(f->by_id);
	for (size_t i = 0; i < f->n_build_ids; i++)
		free(f->build_ids[i].filename);
	free(f->build_ids);
	tm_u64map_free(&f->build_ix);
	free(f->build_next);
	tm_buf_free(&f->cmdline);
	memset(f, 0, sizeof *f);
}
