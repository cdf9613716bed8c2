/* tests/unit/test_vtree.c - the tree's own bookkeeping of open files. A
 * FUSE RELEASE that an unmount overtakes never comes, and the daemon then
 * frees the tree with files still open: vtree_free closes them. Under
 * AddressSanitizer's leak check (the san run of make check) a file left
 * behind fails this binary at exit. */
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "export/render.h"
#include "formats/registry.h"
#include "input/merge.h"
#include "pb_write.h"
#include "scan/scan.h"
#include "session/vtree.h"
#include "trace_fields.h"
#include "tt.h"

static void test_free_closes_open_files(void)
{
	char path[] = "/tmp/tm_vtree_XXXXXX";
	CHECK_INT(tt_temp_file(path, TT_ONE_EVENT_JSON), 0);
	tm_error err = {0};
	tm_vtree *t = vtree_open(path, &err);
	unlink(path);
	CHECK(t != NULL);
	/* a generated file and a file of the input, open and read */
	static const char *const names[] = {"metadata.json", "perfetto_manifest.json"};
	int opened = 0;
	for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
		vt_ino ino;
		if (vtree_lookup(t, names[i], &ino, &err) != 0)
			continue;
		vt_file *f = vtree_file_open(t, ino, &err);
		CHECK(f != NULL);
		char buf[16];
		CHECK(vtree_file_read(f, buf, sizeof buf, 0, &err) > 0);
		opened++;
	}
	CHECK(opened > 0);
	vtree_free(t); /* closes them */
}

/* A timeline.tsv streamed to vt_inputs.timeline_fd (`tracemount cat`):
 * its bytes are on that descriptor, a stat names their size (as often as
 * it is asked), and a read says they are not to be had again. */
static void test_streamed_timeline(void)
{
	char path[] = "/tmp/tm_vtree_XXXXXX", out[] = "/tmp/tm_vtree_out_XXXXXX";
	CHECK_INT(tt_temp_file(path, TT_ONE_EVENT_JSON), 0);
	int fd = mkstemp(out);
	CHECK(fd >= 0);
	unlink(out);
	tm_error err = {0};
	const char *paths[] = {path};
	vt_inputs in = {.paths = paths, .n = 1, .no_index = 1, .gen_only_wanted = 1, .timeline_fd = fd};
	tm_vtree *t = vtree_open_inputs(&in, &err);
	CHECK(t != NULL);
	vt_ino ino;
	vt_stat st;
	CHECK_INT(vtree_lookup(t, "timeline.tsv", &ino, &err), 0);
	CHECK_INT(vtree_stat(t, ino, &st, &err), 0);
	off_t written = lseek(fd, 0, SEEK_END);
	CHECK(written > 0);
	CHECK_INT(st.size, written);
	CHECK_INT(vtree_stat(t, ino, &st, &err), 0);
	CHECK_INT(st.size, written);
	vt_file *f = vtree_file_open(t, ino, &err);
	CHECK(f != NULL);
	if (f) {
		CHECK(vtree_file_streamed(f));
		char buf[16];
		CHECK_INT(vtree_file_read(f, buf, sizeof buf, 0, &err), -1);
		vtree_file_close(f);
	}
	vtree_free(t);
	unlink(path);
	close(fd);
}

/* Write `text` to dir/name. */
static void put_file(const char *dir, const char *name, const char *text)
{
	char path[512];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	FILE *f = fopen(path, "w");
	CHECK(f != NULL);
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

/* A folder of many loose files is opened, stat'ed and sniffed (inputs.c,
 * stat_pending), and its members' types taken (merge.c, sniff_members),
 * by two threads: every member gets its type, and a member of no type
 * fails the merge with the reference's error in either half. Under
 * ThreadSanitizer (make check's tsan stage) this is the threads' test. */
static void test_folder_sniffed_in_two(void)
{
	char dir[] = "/tmp/tm_vtree_dir_XXXXXX";
	CHECK(mkdtemp(dir) != NULL);
	for (int i = 0; i < 300; i++) {
		char name[32];
		snprintf(name, sizeof name, "t%03d.json", i);
		put_file(dir, name, TT_ONE_EVENT_JSON);
	}
	const char *paths[] = {dir};
	tm_error err = {0};
	tm_merge *m = tm_merge_open_inputs(paths, 1, NULL, 0, &err);
	CHECK(m != NULL);
	if (m) {
		CHECK_INT(m->n_files, 301);
		size_t json = 0;
		for (size_t i = 1; i < m->n_files; i++)
			json += m->files[i].type == TM_TYPE_JSON;
		CHECK_INT(json, 300);
		tm_merge_free(m);
	}
	/* an empty member late in the order, then early (in the first half) */
	static const char *const empties[] = {"t250_empty.json", "t010_empty.json"};
	char path[512];
	for (size_t k = 0; k < 2; k++) {
		put_file(dir, empties[k], "");
		m = tm_merge_open_inputs(paths, 1, NULL, 0, &err);
		CHECK(m == NULL);
		CHECK_STR(err.msg, "Unknown trace type provided (ERR:fmt)");
		tm_merge_free(m);
		snprintf(path, sizeof path, "%s/%s", dir, empties[k]);
		unlink(path);
	}
	char cmd[600];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	CHECK_INT(system(cmd), 0);
}

/* A proto trace of n ClockSnapshots of four clocks each (six rows of
 * clocks/edges.csv a snapshot), one millisecond apart, in a file from the
 * template `path`. */
static void snapshots_file(char *path, int n)
{
	static const uint32_t ids[] = {6 /* BOOTTIME */, 3 /* MONOTONIC */, 1 /* REALTIME */, 4 /* MONOTONIC_RAW */};
	tm_buf t = {0};
	for (int i = 0; i < n; i++) {
		tm_buf p = {0}, snap = {0};
		for (size_t k = 0; k < sizeof ids / sizeof *ids; k++) {
			tm_buf c = {0};
			f_var(&c, F_ClockSnapshot_Clock_clock_id, ids[k]);
			f_var(&c, F_ClockSnapshot_Clock_timestamp, 1000000000ull * (k + 1) + 1000000ull * (uint64_t)i);
			f_msg(&snap, F_ClockSnapshot_clocks, &c);
		}
		f_msg(&p, F_TracePacket_clock_snapshot, &snap);
		f_var(&p, F_TracePacket_trusted_packet_sequence_id, 1);
		f_msg(&t, F_Trace_packet, &p);
	}
	CHECK_INT(tt_temp_bytes(path, t.data, t.len), 0);
	tm_buf_free(&t);
}

/* clocks/edges.csv larger than TM_RENDER_SPILL goes to a temporary file
 * as it is rendered (a mount of 2,850 proto files held its 121 MB): read
 * back in pieces, its bytes are those rendered at once in memory. */
static void test_edges_csv_spilled(void)
{
	char path[] = "/tmp/tm_vtree_XXXXXX";
	snapshots_file(path, 6000);
	tm_error err = {0};
	tm_buf want = {0};
	tm_merge *m = tm_merge_open(path, &err);
	CHECK(m != NULL);
	if (m) {
		tm_scan *s = tm_scan_run(m, NULL);
		tm_render_clocks_csv(m, s, &want);
		tm_scan_free(s);
		tm_merge_free(m);
	}
	CHECK(want.len > 2 * TM_RENDER_SPILL);
	tm_vtree *t = vtree_open(path, &err);
	CHECK(t != NULL);
	vt_ino ino;
	if (t && vtree_lookup(t, "clocks/edges.csv", &ino, &err) == 0) {
		vt_stat st;
		CHECK_INT(vtree_stat(t, ino, &st, &err), 0);
		CHECK_INT(st.size, want.len);
		vt_file *f = vtree_file_open(t, ino, &err);
		CHECK(f != NULL);
		/* its bytes in a temporary file, the whole file from 0 on */
		int sfd = -1;
		uint64_t at = 1, len = 0;
		CHECK_INT(f ? vtree_file_span(f, 0, &sfd, &at, &len) : -2, 1);
		CHECK(sfd >= 0 && at == 0 && len == want.len);
		tm_buf got = {0};
		static char buf[100003]; /* pieces across the spill's 1 MiB */
		ssize_t k;
		while (f && (k = vtree_file_read(f, buf, sizeof buf, got.len, &err)) > 0)
			tm_buf_put(&got, buf, (size_t)k);
		CHECK_INT(got.len, want.len);
		CHECK(got.len == want.len && memcmp(got.data, want.data, want.len) == 0);
		tm_buf_free(&got);
		vtree_file_close(f);
	} else {
		CHECK(0);
	}
	vtree_free(t);
	tm_buf_free(&want);
	unlink(path);
}

int main(void)
{
	TT_RUN(test_free_closes_open_files);
	TT_RUN(test_streamed_timeline);
	TT_RUN(test_folder_sniffed_in_two);
	TT_RUN(test_edges_csv_spilled);
	TT_DONE();
}
