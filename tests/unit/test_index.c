/* tests/unit/test_index.c - the index cache's file (core/session/index.h) and its
 * byte layout (core/util/ser.h): varints and strings round-trip and a short or
 * impossible input is refused; a written index reads back for its key
 * only; damaged, truncated, foreign, other-version and other-format files
 * are refused with their reason; sections of unknown kinds are skipped;
 * a failed write leaves nothing behind; the key follows the archive; a
 * spending reader decodes what a plain one does and gives back the pages
 * it has passed, never one it still hands out. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "tt.h"

#include "session/index.h"
#include "input/merge.h"
#include "util/ser.h"

static char tmpdir[512];

static const char *tmp_path(const char *name)
{
	static char p[4][1024];
	static int k;
	k = (k + 1) % 4;
	snprintf(p[k], sizeof p[k], "%s/%s", tmpdir, name);
	return p[k];
}

static void write_file(const char *path, const void *p, size_t n)
{
	FILE *f = fopen(path, "wb");
	if (f) {
		fwrite(p, 1, n, f);
		fclose(f);
	}
}

static unsigned char *read_file(const char *path, size_t *n)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	unsigned char *b = malloc(1 << 20);
	*n = fread(b, 1, 1 << 20, f);
	fclose(f);
	return b;
}

static void test_varints(void)
{
	static const uint64_t u[] = {0, 1, 127, 128, 300, 16383, 16384, UINT32_MAX, (uint64_t)UINT32_MAX + 1, UINT64_MAX};
	static const int64_t i[] = {0, -1, 1, -64, 64, INT64_MIN, INT64_MAX};
	tm_ser_out o;
	tm_ser_out_init(&o, TM_SER_MEMORY);
	for (size_t k = 0; k < sizeof u / sizeof u[0]; k++)
		tm_ser_u64(&o, u[k]);
	for (size_t k = 0; k < sizeof i / sizeof i[0]; k++)
		tm_ser_i64(&o, i[k]);
	tm_ser_str(&o, NULL);
	tm_ser_str(&o, "");
	tm_ser_str(&o, "tracemount");
	CHECK_INT(o.total, o.buf.len);
	tm_ser_rd r = tm_ser_reader(o.buf.data, o.buf.len);
	for (size_t k = 0; k < sizeof u / sizeof u[0]; k++)
		CHECK(tm_ser_get_u64(&r) == u[k]);
	for (size_t k = 0; k < sizeof i / sizeof i[0]; k++)
		CHECK(tm_ser_get_i64(&r) == i[k]);
	char *s0 = tm_ser_get_str(&r), *s1 = tm_ser_get_str(&r), *s2 = tm_ser_get_str(&r);
	CHECK(!s0);
	CHECK_STR(s1, "");
	CHECK_STR(s2, "tracemount");
	free(s1);
	free(s2);
	CHECK(!r.bad && r.left == 0);
	/* one more read runs short and stays bad */
	CHECK_INT(tm_ser_get_u32(&r), 0);
	CHECK(r.bad);
	CHECK_STR(r.why, "truncated");
	tm_ser_out_free(&o);
}

static void test_reader_refuses(void)
{
	/* a u32 above 2^32 - 1, a varint of 11 bytes, a count beyond what is left */
	const unsigned char big[] = {0x80, 0x80, 0x80, 0x80, 0x10};
	tm_ser_rd r = tm_ser_reader(big, sizeof big);
	tm_ser_get_u32(&r);
	CHECK(r.bad);
	const unsigned char longv[] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01};
	r = tm_ser_reader(longv, sizeof longv);
	tm_ser_get_u64(&r);
	CHECK(r.bad);
	const unsigned char count[] = {0x64, 1, 2, 3};
	r = tm_ser_reader(count, sizeof count);
	CHECK_INT(tm_ser_count(&r, 1, 1000), 0);
	CHECK(r.bad);
	/* a string holding a NUL */
	const unsigned char nul[] = {1, 3, 'a', 0, 'b'};
	r = tm_ser_reader(nul, sizeof nul);
	CHECK(!tm_ser_get_str(&r));
	CHECK(r.bad);
}

/* 12 MiB of numbers and strings (strings that straddle pages, one of
 * 5 MiB) in an anonymous mapping: a spending reader reads what a plain
 * reader does, and the pages behind it are no longer resident. */
static void test_spending_reader(void)
{
	tm_ser_out o;
	tm_ser_out_init(&o, TM_SER_MEMORY);
	size_t big = (size_t)5 << 20;
	char *s = malloc(big + 1);
	for (size_t i = 0; i < big; i++)
		s[i] = (char)('a' + i % 26);
	s[big] = 0;
	uint64_t n = 0;
	while (o.buf.len < ((size_t)12 << 20)) {
		tm_ser_u64(&o, n * 0x9e3779b97f4a7c15u);
		if (n % 1000 == 0)
			tm_ser_str(&o, n == 300000 ? s : "straddling, perhaps, a page boundary");
		n++;
	}
	size_t len = o.buf.len, page = (size_t)sysconf(_SC_PAGESIZE);
	unsigned char *map = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(map != MAP_FAILED);
	memcpy(map, o.buf.data, len);
	tm_ser_rd plain = tm_ser_reader(o.buf.data, len), spend = tm_ser_reader_spending(map, len);
	size_t same = 0;
	for (uint64_t i = 0; i < n; i++) {
		same += tm_ser_get_u64(&spend) == tm_ser_get_u64(&plain);
		if (i % 1000 == 0) {
			char *a = tm_ser_get_str(&spend), *b = tm_ser_get_str(&plain);
			same += a && b && strcmp(a, b) == 0;
			if (i == 300000)
				CHECK(a && strlen(a) == big);
			free(a);
			free(b);
		}
	}
	CHECK(!spend.bad && !plain.bad && spend.left == 0);
	CHECK_INT(same, n + (n + 999) / 1000);
	/* the first pages were given back, the last one is still there */
	unsigned char res[4];
	CHECK_INT(mincore(map, 4 * page, res), 0);
	CHECK_INT(res[0] & 1, 0);
	CHECK_INT(res[3] & 1, 0);
	unsigned char last;
	CHECK_INT(mincore(map + ((len - 1) & ~(page - 1)), 1, &last), 0);
	CHECK_INT(last & 1, 1);
	munmap(map, len);

	/* Bytes whose take is the one that gives pages back: a first payload
	 * sized so that the second one's bytes begin exactly
	 * TM_SER_SPEND_STEP in. They are handed out whole. */
	tm_ser_out_free(&o);
	tm_ser_out_init(&o, TM_SER_MEMORY);
	size_t second = (size_t)1 << 20, first = TM_SER_SPEND_STEP - 7; /* 2^20 takes 3 varint bytes */
	tm_ser_bytes(&o, s, first); /* and this length 4: 3 + 4 + first = the step */
	tm_ser_bytes(&o, s + 1, second);
	len = o.buf.len;
	map = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(map != MAP_FAILED);
	memcpy(map, o.buf.data, len);
	spend = tm_ser_reader_spending(map, len);
	size_t n1 = 0, n2 = 0;
	tm_ser_get_bytes(&spend, &n1);
	const char *b2 = tm_ser_get_bytes(&spend, &n2);
	CHECK(!spend.bad && n1 == first && n2 == second);
	CHECK((const unsigned char *)b2 == map + TM_SER_SPEND_STEP);
	CHECK(b2 && memcmp(b2, s + 1, second) == 0);
	CHECK_INT(mincore(map, page, res), 0);
	CHECK_INT(res[0] & 1, 0);
	munmap(map, len);
	free(s);
	tm_ser_out_free(&o);
}

/* A file laid out as tm_index_write lays it, with any format, version and
 * sections, and a right or wrong CRC. */
static void craft(const char *path, uint32_t format, const char *version, const tm_buf *key, const uint32_t *kinds,
		  const char *const *payloads, size_t n, int good_crc)
{
	tm_ser_out o;
	tm_ser_out_init(&o, TM_SER_MEMORY);
	tm_ser_str(&o, version);
	tm_ser_bytes(&o, key->data, key->len);
	tm_ser_u64(&o, n);
	for (size_t i = 0; i < n; i++) {
		tm_ser_u32(&o, kinds[i]);
		tm_ser_bytes(&o, payloads[i], strlen(payloads[i]));
	}
	uint32_t crc = (uint32_t)crc32(0, (const Bytef *)o.buf.data, (uInt)o.buf.len) ^ (good_crc ? 0 : 1);
	unsigned char head[16] = {'T', 'M', 'I', 'N', 'D', 'E', 'X', '\n'};
	for (int k = 0; k < 4; k++) {
		head[8 + k] = (unsigned char)(format >> (8 * k));
		head[12 + k] = (unsigned char)(crc >> (8 * k));
	}
	FILE *f = fopen(path, "wb");
	if (f) {
		fwrite(head, 1, sizeof head, f);
		fwrite(o.buf.data, 1, o.buf.len, f);
		fclose(f);
	}
	tm_ser_out_free(&o);
}

static void save_text(const void *obj, tm_ser_out *out)
{
	const char *s = obj;
	tm_ser_bytes(out, s, strlen(s));
}

static tm_buf key_of(const char *text)
{
	tm_buf k = {0};
	tm_buf_puts(&k, text);
	return k;
}

/* The reason a read gives (or "hit" / "miss"). */
static const char *outcome(const char *path, const tm_buf *key, char *buf, size_t cap)
{
	char *why = NULL;
	tm_index *ix = tm_index_read(path, key, &why);
	snprintf(buf, cap, "%s", ix ? "hit" : why ? why : "miss");
	tm_index_free(ix);
	free(why);
	return buf;
}

static void test_write_read(void)
{
	const char *path = tmp_path("a.idx");
	tm_buf key = key_of("file 1 2 3\n"), other = key_of("file 1 2 4\n");
	tm_index_section sec = {TM_INDEX_SCAN, save_text, "the results"};
	tm_error err = {0};
	CHECK_INT(tm_index_write(path, &key, &sec, 1, &err), 0);
	char *why = NULL;
	tm_index *ix = tm_index_read(path, &key, &why);
	CHECK(ix && !why);
	size_t len = 0;
	const char *p = ix ? tm_index_find(ix, TM_INDEX_SCAN, &len) : NULL;
	tm_ser_rd r = tm_ser_reader(p, len);
	size_t n = 0;
	const char *text = p ? tm_ser_get_bytes(&r, &n) : NULL;
	CHECK(text && n == 11 && memcmp(text, "the results", 11) == 0);
	CHECK(ix && !tm_index_find(ix, 2, &len));
	tm_index_free(ix);
	char b[256];
	CHECK_STR(outcome(path, &other, b, sizeof b), "miss");
	CHECK_STR(outcome(tmp_path("none.idx"), &key, b, sizeof b), "miss");
	struct stat st;
	CHECK(stat(path, &st) == 0 && (st.st_mode & 0777) == 0600);
	tm_buf_free(&key);
	tm_buf_free(&other);
}

static void test_refusals(void)
{
	const char *path = tmp_path("b.idx");
	tm_buf key = key_of("k\n");
	tm_index_section sec = {TM_INDEX_SCAN, save_text, "payload bytes"};
	tm_error err = {0};
	CHECK_INT(tm_index_write(path, &key, &sec, 1, &err), 0);
	size_t n = 0;
	unsigned char *good = read_file(path, &n);
	CHECK(good && n > 20);
	if (!good)
		return;
	char b[256];
	/* every truncation is refused, never used */
	for (size_t k = 0; k < n; k++) {
		write_file(path, good, k);
		outcome(path, &key, b, sizeof b);
		CHECK(strcmp(b, "hit") != 0 && strcmp(b, "miss") != 0);
	}
	write_file(path, good, 5);
	CHECK_STR(outcome(path, &key, b, sizeof b), "truncated");
	write_file(path, good, n - 1);
	CHECK_STR(outcome(path, &key, b, sizeof b), "checksum mismatch (damaged or truncated)");
	/* every flipped byte is refused (the checksum, or the header) */
	for (size_t k = 0; k < n; k++) {
		good[k] ^= 0x20;
		write_file(path, good, n);
		outcome(path, &key, b, sizeof b);
		CHECK(strcmp(b, "hit") != 0);
		good[k] ^= 0x20;
	}
	write_file(path, "{\"a\": 1}\n", 9);
	CHECK_STR(outcome(path, &key, b, sizeof b), "not a tracemount index");
	uint32_t kinds[] = {99, TM_INDEX_SCAN};
	const char *payloads[] = {"a later kind", "results"};
	craft(path, TM_INDEX_FORMAT, "0.0.0", &key, kinds, payloads, 2, 1);
	CHECK_STR(outcome(path, &key, b, sizeof b), "written by tracemount 0.0.0");
	craft(path, TM_INDEX_FORMAT + 1, TM_VERSION, &key, kinds, payloads, 2, 1);
	snprintf(b, sizeof b, "written in another format (%d) by another tracemount", TM_INDEX_FORMAT + 1);
	char got[256];
	CHECK_STR(outcome(path, &key, got, sizeof got), b);
	craft(path, TM_INDEX_FORMAT, TM_VERSION, &key, kinds, payloads, 2, 0);
	CHECK_STR(outcome(path, &key, b, sizeof b), "checksum mismatch (damaged or truncated)");
	/* a kind this code does not know is skipped */
	craft(path, TM_INDEX_FORMAT, TM_VERSION, &key, kinds, payloads, 2, 1);
	char *why = NULL;
	tm_index *ix = tm_index_read(path, &key, &why);
	size_t len = 0;
	const char *p = ix ? tm_index_find(ix, TM_INDEX_SCAN, &len) : NULL;
	CHECK(p && len == 7 && memcmp(p, "results", 7) == 0);
	tm_index_free(ix);
	free(why);
	free(good);
	tm_buf_free(&key);
}

static void test_write_fails(void)
{
	tm_buf key = key_of("k\n");
	tm_index_section sec = {TM_INDEX_SCAN, save_text, "x"};
	tm_error err = {0};
	write_file(tmp_path("plain"), "x", 1);
	CHECK_INT(tm_index_write(tmp_path("plain/sub/c.idx"), &key, &sec, 1, &err), -1);
	CHECK_INT(err.code, TM_EIO);
	CHECK_STR(err.msg, "Not a directory");
	/* missing directories are made, mode 0700 */
	CHECK_INT(tm_index_write(tmp_path("d1/d2/c.idx"), &key, &sec, 1, &err), 0);
	struct stat st;
	CHECK(stat(tmp_path("d1/d2"), &st) == 0 && (st.st_mode & 0777) == 0700);
	/* nothing but the index in its directory: the temporary file is gone */
	char cmd[1200];
	snprintf(cmd, sizeof cmd, "test \"$(ls -a %s | wc -l)\" = 3", tmp_path("d1/d2"));
	CHECK(system(cmd) == 0);
	tm_buf_free(&key);
}

static void test_key_follows_the_archive(void)
{
	const char *path = tmp_path("t.json");
	const char *a = "{\"traceEvents\":[{\"pid\":1,\"tid\":1,\"ts\":1000,\"ph\":\"i\",\"name\":\"a\"}]}\n";
	const char *b = "{\"traceEvents\":[{\"pid\":1,\"tid\":1,\"ts\":2000,\"ph\":\"i\",\"name\":\"b\"}]}\n";
	write_file(path, a, strlen(a));
	tm_error err = {0};
	tm_merge *m = tm_merge_open(path, &err);
	CHECK(m);
	if (!m)
		return;
	tm_buf k1 = {0}, k2 = {0}, k3 = {0};
	CHECK_INT(tm_index_key(m, &k1), 0);
	CHECK_INT(tm_index_key(m, &k2), 0);
	CHECK(k1.len == k2.len && memcmp(k1.data, k2.data, k1.len) == 0);
	/* the same length rewritten in place, its times put back */
	struct stat st;
	stat(path, &st);
	int fd = open(path, O_WRONLY);
	CHECK(fd >= 0 && write(fd, b, strlen(b)) == (ssize_t)strlen(b));
	close(fd);
	struct timespec times[2] = {st.st_atim, st.st_mtim};
	utimensat(AT_FDCWD, path, times, 0);
	CHECK_INT(tm_index_key(m, &k3), 0);
	CHECK(k1.len != k3.len || memcmp(k1.data, k3.data, k1.len) != 0);
	tm_buf_free(&k1);
	tm_buf_free(&k2);
	tm_buf_free(&k3);
	tm_merge_free(m);
	/* the default file: under XDG_CACHE_HOME, named after the input */
	setenv("XDG_CACHE_HOME", tmpdir, 1);
	const char *in[] = {path};
	char *p = tm_index_default_path(in, 1, NULL, 0);
	char want[1200];
	snprintf(want, sizeof want, "%s/tracemount/t.json-", tmpdir);
	CHECK(p && strncmp(p, want, strlen(want)) == 0 && strlen(p) == strlen(want) + 16 + 4);
	char *q = tm_index_default_path(in, 1, "m.json", 0);
	CHECK(q && p && strcmp(p, q) != 0);
	free(p);
	free(q);
	setenv("XDG_CACHE_HOME", "relative/dir", 1); /* not absolute: $HOME/.cache */
	setenv("HOME", tmpdir, 1);
	p = tm_index_default_path(in, 1, NULL, 0);
	snprintf(want, sizeof want, "%s/.cache/tracemount/t.json-", tmpdir);
	CHECK(p && strncmp(p, want, strlen(want)) == 0);
	free(p);
	unsetenv("XDG_CACHE_HOME");
	unsetenv("HOME");
	CHECK(!tm_index_default_path(in, 1, NULL, 0));
}

int main(void)
{
	snprintf(tmpdir, sizeof tmpdir, "/tmp/test_index.XXXXXX");
	if (!mkdtemp(tmpdir))
		return 1;
	tt_run("test_varints", test_varints);
	tt_run("test_reader_refuses", test_reader_refuses);
	tt_run("test_spending_reader", test_spending_reader);
	tt_run("test_write_read", test_write_read);
	tt_run("test_refusals", test_refusals);
	tt_run("test_write_fails", test_write_fails);
	tt_run("test_key_follows_the_archive", test_key_follows_the_archive);
	char cmd[600];
	snprintf(cmd, sizeof cmd, "rm -rf %s", tmpdir);
	if (system(cmd) != 0)
		return 1;
	return tt_failed ? 1 : 0;
}
