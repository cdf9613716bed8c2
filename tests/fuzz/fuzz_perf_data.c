/* tests/fuzz/fuzz_perf_data.c - a perf.data file's fields
 * (core/formats/perf/perf_data.c) on arbitrary bytes, read in the
 * tokenizer's order: the header, the attrs and their ids, the feature
 * sections, then each record of the data section (its attr, its time, and
 * a SAMPLE, MMAP, MMAP2 or COMM's fields). Checked on the way: an attr
 * index is one of the file's; whatever a reader points at lies inside the
 * bytes it was handed; a callchain has no more frames than its payload
 * has addresses; a sample reads the same twice. The whole merge of such
 * files (tokenizer, model, encoder) is fuzz_scan's and fuzz_export's. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "formats/perf/perf_data.h"

static int in_file(uint64_t off, uint64_t n, size_t size)
{
	return off <= size && n <= size - off;
}

static void inside(const void *base, size_t n, const void *p, size_t k)
{
	const char *b = base, *q = p;
	if (k && (q < b || q + k > b + n))
		abort();
}

static void records(const perf_file *f, const uint8_t *data, size_t size)
{
	uint64_t at = f->h.data.offset, end = f->h.data.offset + f->h.data.size;
	if (end < at || end > size)
		end = size;
	perf_sample s = {0}, s2 = {0};
	tm_error err;
	/* a data offset near 2^64 (the header's own) must not wrap `at + 8` */
	while (at <= end && end - at >= 8) {
		uint32_t type;
		uint16_t misc, n;
		memcpy(&type, data + at, 4);
		memcpy(&misc, data + at + 4, 2);
		memcpy(&n, data + at + 6, 2);
		if (n < 8 || n > size - at)
			break;
		/* the payload alone, so that ASan sees a read past it */
		size_t pn = (size_t)n - 8;
		uint8_t *p = malloc(pn ? pn : 1);
		memcpy(p, data + at + 8, pn);
		at += n;
		int64_t a = perf_attr_of(f, type, p, pn, &err);
		if (a == -2) {
			free(p);
			break;
		}
		if (a >= (int64_t)f->n_attrs || a < -1)
			abort();
		const perf_attr *attr = a >= 0 ? &f->attrs[a] : NULL;
		uint64_t t;
		if (perf_record_time(attr, type, p, pn, &t) && t == 0)
			abort();
		if (type == 9 && attr) {
			int rc = perf_read_sample(attr, misc, p, pn, &s, &err);
			if (rc != perf_read_sample(attr, misc, p, pn, &s2, &err))
				abort();
			if (rc == 0) {
				if (s.n_frames > pn / 8 || s.n_frames != s2.n_frames || s.tid != s2.tid ||
				    s.time != s2.time || (s.n_frames && memcmp(s.ips, s2.ips, s.n_frames * 8)))
					abort();
			}
		} else if (type == 1 || type == 10) {
			perf_mmap m;
			if (perf_read_mmap(type, misc, p, pn, &m) == 0) {
				inside(p, pn, m.filename, m.filename_n);
				if (m.has_build_id && m.build_id_size > 20)
					abort();
			}
		} else if (type == 3) {
			uint32_t pid, tid;
			const char *comm;
			size_t cn;
			if (perf_read_comm(p, pn, &pid, &tid, &comm, &cn) == 0)
				inside(p, pn, comm, cn);
		}
		free(p);
	}
	perf_sample_free(&s);
	perf_sample_free(&s2);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	perf_file f = {0};
	tm_error err;
	if (perf_read_header(data, size, &f.h, &err) != 0)
		return 0;
	size_t n_attrs;
	if (!in_file(f.h.attrs.offset, f.h.attrs.size, size) || perf_attrs_check(&f.h, &n_attrs, &err) != 0)
		goto out;
	for (size_t i = 0; i < n_attrs; i++) {
		if (perf_read_attr(&f, data + f.h.attrs.offset + i * f.h.attr_size, (size_t)f.h.attr_size, &err) != 0)
			goto out;
		perf_section ids = f.attrs[i].ids;
		if (!in_file(ids.offset, ids.size, size) ||
		    perf_add_ids(&f, i, data + ids.offset, (size_t)ids.size, &err) != 0)
			goto out;
	}
	if (perf_build_invocation(&f, &err) != 0)
		goto out;
	uint8_t ids[256];
	size_t k = perf_feature_ids(&f.h, ids);
	uint64_t at = f.h.data.offset + f.h.data.size;
	int64_t skipped[256] = {0};
	if (at >= f.h.data.offset && in_file(at, (uint64_t)k * 16, size))
		for (size_t i = 0; i < k; i++) {
			uint64_t off, n;
			memcpy(&off, data + at + 16 * i, 8);
			memcpy(&n, data + at + 16 * i + 8, 8);
			if (!in_file(off, n, size))
				continue;
			uint8_t *p = malloc(n ? (size_t)n : 1);
			memcpy(p, data + off, (size_t)n);
			perf_read_feature(&f, ids[i], p, (size_t)n, skipped, &err);
			free(p);
		}
	for (size_t i = 0; i < f.n_attrs; i++)
		if (!f.attrs[i].event_name)
			abort();
	records(&f, data, size);
out:
	perf_file_free(&f);
	return 0;
}
