/* tests/fuzz/fuzz_index.c - the index cache's reading of scan results
 * (core/scan/scan.h tm_scan_load) never trusts its bytes, and what it keeps is
 * all the views need:
 *   1. the input as an archive is merged and scanned; the results saved
 *      and loaded back render every view (metadata.json, each machine.json,
 *      graph.dot, edges.csv, perfetto_manifest.json, the check summary)
 *      byte for byte as the scan's own, and save again to the same bytes;
 *   2. those saved bytes cut at 256 lengths and with as many bytes flipped
 *      (16 of each under libFuzzer, where the input picks them), and
 *      the input itself taken as saved results, load or are refused without
 *      a crash, and what loads renders without one;
 *   3. the generated files' sizes (TM_INDEX_SIZES), made from the input's
 *      bytes, load back as saved; the input itself taken as such a
 *      section loads or is refused with a reason, without a crash.
 * The seeds are fuzz_scan's (tests/fuzz/corpus/fuzz_index links to them). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fuzz_input.h"
#include "session/index.h"
#include "input/merge.h"
#include "export/render.h"
#include "formats/registry.h"
#include "scan/scan.h"
#include "util/ser.h"

/* Every view of a scan, one after another. */
static void render_all(tm_merge *m, const tm_scan *s, tm_buf *out)
{
	tm_error err;
	tm_err_clear(&err);
	tm_render_metadata(m, s, NULL, out, &err);
	for (uint32_t r = 0; r < s->machines.n; r++)
		tm_render_machine(m, s, r, out, &err);
	tm_render_clocks_dot(m, s, out);
	tm_render_clocks_csv(m, s, out);
	tm_render_manifest(m, s, out, &err);
	tm_render_summary(m, s, out, &err);
}

static void save(const tm_scan *s, tm_ser_out *o)
{
	tm_ser_out_init(o, TM_SER_MEMORY);
	tm_scan_save(s, o);
}

/* Load whatever `p` holds; render it when it loads. */
static void try_load(tm_merge *m, const void *p, size_t n)
{
	const char *why = NULL;
	tm_scan *s = tm_scan_load(p, n, m->n_files, 0, &why);
	if (!s) {
		if (!why)
			abort(); /* a refusal says why */
		return;
	}
	tm_buf b = {0};
	render_all(m, s, &b);
	tm_buf_free(&b);
	tm_scan_free(s);
}

static void round_trip(tm_merge *m, const uint8_t *data, size_t size)
{
	tm_scan *s = tm_scan_run(m, NULL);
	tm_ser_out a;
	save(s, &a);
	const char *why = NULL;
	tm_scan *l = tm_scan_load(a.buf.data, a.buf.len, m->n_files, 0, &why);
	if (!l) {
		fprintf(stderr, "saved results do not load: %s\n", why);
		abort();
	}
	tm_buf x = {0}, y = {0};
	render_all(m, s, &x);
	render_all(m, l, &y);
	if (x.len != y.len || memcmp(x.data, y.data, x.len) != 0) {
		fprintf(stderr, "the views of loaded results differ from the scan's\n");
		abort();
	}
	tm_ser_out b;
	save(l, &b);
	if (a.buf.len != b.buf.len || memcmp(a.buf.data, b.buf.data, a.buf.len) != 0) {
		fprintf(stderr, "loaded results save to other bytes\n");
		abort();
	}
	/* Damaged copies: cut at 256 lengths spread over the saved bytes, and
	 * a byte flipped at as many places; under libFuzzer, 16 of each from
	 * an offset the input picks. Each loads and renders every view: all
	 * of them kept fuzz_index at 45 runs a second, 30 times fewer than
	 * fuzz_scan, which reads the same inputs. */
	size_t spots = fuzz_thorough() ? 256 : 16;
	size_t step = a.buf.len / spots + 1;
	size_t first = fuzz_thorough() || !size ? 0 : data[size / 2] % step;
	for (size_t k = first; k < a.buf.len; k += step)
		try_load(m, a.buf.data, k);
	char *c = malloc(a.buf.len ? a.buf.len : 1);
	for (size_t k = first; k < a.buf.len; k += step) {
		memcpy(c, a.buf.data, a.buf.len);
		c[k] ^= (char)(0x5a ^ (data && size ? data[k % size] : 0));
		try_load(m, c, a.buf.len);
	}
	free(c);
	try_load(m, data, size);
	tm_buf_free(&x);
	tm_buf_free(&y);
	tm_ser_out_free(&a);
	tm_ser_out_free(&b);
	tm_scan_free(l);
	tm_scan_free(s);
}

/* Sizes from the input's bytes, saved and loaded back; then the input
 * itself as a sizes section. */
static void sizes(const uint8_t *data, size_t size)
{
	size_t n = size / 8;
	tm_index_size *e = calloc(n ? n : 1, sizeof(*e));
	for (size_t i = 0; i < n; i++) {
		const uint8_t *d = data + 8 * i;
		e[i].kind = d[0];
		e[i].row = (uint32_t)d[1] << 24 | (uint32_t)d[2] << 8 | d[3];
		e[i].size = (uint64_t)d[4] << 56 | (uint64_t)d[5] << 32 | (uint64_t)d[6] << 8 | d[7];
	}
	tm_ser_out o;
	tm_ser_out_init(&o, TM_SER_MEMORY);
	tm_index_sizes_save(e, n, &o);
	tm_index_size *l = NULL;
	size_t ln = 0;
	const char *why = NULL;
	if (tm_index_sizes_load(o.buf.data, o.buf.len, &l, &ln, &why) != 0 || ln != n ||
	    (n && memcmp(l, e, n * sizeof(*e)) != 0)) {
		fprintf(stderr, "saved sizes do not load back: %s\n", why ? why : "other entries");
		abort();
	}
	free(l);
	l = NULL;
	why = NULL;
	if (tm_index_sizes_load(data, size, &l, &ln, &why) != 0 && !why)
		abort(); /* a refusal says why */
	free(l);
	free(e);
	tm_ser_out_free(&o);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	sizes(data, size);
	int fd = fuzz_memfd("fuzz_index", data, size);
	if (fd < 0)
		return 0;
	char path[64];
	fuzz_fd_path(fd, path);
	tm_error err;
	tm_err_clear(&err);
	tm_merge *m = tm_merge_open(path, &err);
	if (m) {
		round_trip(m, data, size);
		tm_merge_free(m);
	}
	close(fd);
	return 0;
}
