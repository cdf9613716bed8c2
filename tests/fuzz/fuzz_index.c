/* tests/fuzz/fuzz_index.c - the index cache's reading of scan results
 * (core/scan.h tm_scan_load) never trusts its bytes, and what it keeps is
 * all the views need:
 *   1. the input as an archive is merged and scanned; the results saved
 *      and loaded back render every view (metadata.json, each machine.json,
 *      graph.dot, edges.csv, perfetto_manifest.json, the check summary)
 *      byte for byte as the scan's own, and save again to the same bytes;
 *   2. those saved bytes cut at every length and with bytes flipped, and
 *      the input itself taken as saved results, load or are refused without
 *      a crash, and what loads renders without one.
 * The seeds are fuzz_scan's (tests/fuzz/corpus/fuzz_index links to them). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fuzz_input.h"
#include "merge.h"
#include "render.h"
#include "scan.h"
#include "ser.h"

/* Every view of a scan, one after another. */
static void render_all(tm_merge *m, const tm_scan *s, tm_buf *out)
{
	tm_error err;
	tm_err_clear(&err);
	tm_render_metadata(m, s, out, &err);
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
	tm_scan *s = tm_scan_load(p, n, m->n_files, &why);
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
	tm_scan *l = tm_scan_load(a.buf.data, a.buf.len, m->n_files, &why);
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
	/* Damaged copies: every length, and a flipped byte every few. */
	size_t step = a.buf.len / 256 + 1;
	for (size_t k = 0; k < a.buf.len; k += step)
		try_load(m, a.buf.data, k);
	char *c = malloc(a.buf.len ? a.buf.len : 1);
	for (size_t k = 0; k < a.buf.len; k += step) {
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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
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
