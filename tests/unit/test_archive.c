/* tests/unit/test_archive.c - blobs, cursors, ZIP and TAR listing and the
 * compressed streams of spec/formats.md §2 (exact error texts included).
 *
 * Archives are made in a temporary directory, by the real tools (zip, tar,
 * gzip, bzip2, xz, zstd) or byte by byte where an edge case needs it. */
#include "tt.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "container/archive.h"
#include "util/ser.h"

static char tmpdir[] = "/tmp/tm_archive_XXXXXX";

/* ---- helpers ------------------------------------------------------------- */

static int sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int sh(const char *fmt, ...)
{
	char cmd[8192];
	int n = snprintf(cmd, sizeof cmd, "cd '%s' && ", tmpdir);
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(cmd + n, sizeof cmd - (size_t)n, fmt, ap);
	va_end(ap);
	return system(cmd);
}

static const char *path_of(const char *name)
{
	static char p[4][1024];
	static int k;
	k = (k + 1) % 4;
	snprintf(p[k], sizeof p[k], "%s/%s", tmpdir, name);
	return p[k];
}

static void write_file(const char *name, const void *data, size_t n)
{
	FILE *f = fopen(path_of(name), "wb");
	if (f) {
		fwrite(data, 1, n, f);
		fclose(f);
	}
}

static unsigned char *read_file(const char *name, size_t *n)
{
	FILE *f = fopen(path_of(name), "rb");
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	long len = ftell(f);
	fseek(f, 0, SEEK_SET);
	unsigned char *b = malloc((size_t)len + 1);
	*n = fread(b, 1, (size_t)len, f);
	fclose(f);
	return b;
}

/* The error text, through a call: CHECK_STR's report buffer is smaller
 * than tm_error.msg and gcc would warn about the possible truncation. */
static __attribute__((noinline)) const char *msg_of(const tm_error *e)
{
	return e->msg;
}

/* Every byte of a blob, read through a cursor in odd-sized pieces. */
static unsigned char *blob_all(tm_blob *b, size_t *n, tm_error *err)
{
	tm_cursor *c = tm_cursor_open(b, err);
	if (!c)
		return NULL;
	tm_buf out = {0};
	char chunk[7777];
	ssize_t r;
	while ((r = tm_cursor_read(c, chunk, sizeof chunk, err)) > 0)
		tm_buf_put(&out, chunk, (size_t)r);
	tm_cursor_close(c);
	if (r < 0) {
		tm_buf_free(&out);
		return NULL;
	}
	if (!out.data)
		tm_buf_put(&out, "", 0);
	return (unsigned char *)tm_buf_detach(&out, n);
}

static int blob_equals(tm_blob *b, const void *want, size_t n)
{
	tm_error err = {0};
	size_t got_n;
	unsigned char *got = blob_all(b, &got_n, &err);
	int ok = got && got_n == n && memcmp(got, want, n) == 0;
	if (!ok)
		fprintf(stderr, "blob mismatch: got %zu bytes (%s), want %zu\n", got ? got_n : 0, err.msg, n);
	free(got);
	return ok;
}

static const tm_entry *find(const tm_listing *l, const char *name)
{
	for (size_t i = 0; i < l->n; i++)
		if (strcmp(l->entries[i].name, name) == 0)
			return &l->entries[i];
	return NULL;
}

/* Pseudo-random but compressible text: words from a small vocabulary. */
static void gen_text(unsigned char *p, size_t n, uint32_t seed)
{
	static const char *const words[] = {"sched_switch", "prev_comm=", "cpu_idle", "next_pid=", "1234",
					    "tracing_mark_write", "B|100|slice", "\n", " ", "E|100", "[001]",
					    "kworker/0:1", "0.123456:", "binder"};
	size_t i = 0;
	while (i < n) {
		seed = seed * 1103515245u + 12345u;
		const char *w = words[(seed >> 16) % (sizeof words / sizeof words[0])];
		for (size_t k = 0; w[k] && i < n; k++)
			p[i++] = (unsigned char)w[k];
	}
}

static void gen_random(unsigned char *p, size_t n, uint32_t seed)
{
	for (size_t i = 0; i < n; i++) {
		seed = seed * 1103515245u + 12345u;
		p[i] = (unsigned char)(seed >> 16);
	}
}

/* ---- a ZIP writer for edge cases ------------------------------------------ */

typedef struct zmember {
	const char *name;
	const void *data;
	size_t n;
	int deflate;
	int descriptor; /* streamed: zero sizes in the local header, then a descriptor */
} zmember;

static void put16(tm_buf *b, unsigned v)
{
	unsigned char x[2] = {(unsigned char)v, (unsigned char)(v >> 8)};
	tm_buf_put(b, x, 2);
}

static void put32(tm_buf *b, uint32_t v)
{
	put16(b, v & 0xffff);
	put16(b, v >> 16);
}

static unsigned char *deflate_raw(const void *data, size_t n, size_t *clen)
{
	z_stream z = {0};
	deflateInit2(&z, 6, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY);
	size_t cap = deflateBound(&z, (uLong)n) + 16;
	unsigned char *out = malloc(cap);
	z.next_in = (unsigned char *)data;
	z.avail_in = (uInt)n;
	z.next_out = out;
	z.avail_out = (uInt)cap;
	deflate(&z, Z_FINISH);
	*clen = cap - z.avail_out;
	deflateEnd(&z);
	return out;
}

/* Members in the given order; the central directory lists them in reverse
 * when `reverse_cd`, and is left out when `no_cd`. */
static unsigned char *build_zip(const zmember *m, size_t n, int reverse_cd, int no_cd, size_t *len)
{
	tm_buf b = {0}, cd = {0};
	uint32_t *offs = calloc(n, sizeof(*offs)), *crcs = calloc(n, sizeof(*crcs));
	size_t *clens = calloc(n, sizeof(*clens));
	for (size_t i = 0; i < n; i++) {
		size_t clen = m[i].n;
		unsigned char *comp = m[i].deflate ? deflate_raw(m[i].data, m[i].n, &clen) : NULL;
		uint32_t crc = (uint32_t)crc32(0, m[i].data, (uInt)m[i].n);
		offs[i] = (uint32_t)b.len;
		crcs[i] = crc;
		clens[i] = clen;
		put32(&b, 0x04034b50);
		put16(&b, 20);
		put16(&b, m[i].descriptor ? 8 : 0);
		put16(&b, m[i].deflate ? 8 : 0);
		put16(&b, 0);
		put16(&b, 0x21);
		put32(&b, m[i].descriptor ? 0 : crc);
		put32(&b, m[i].descriptor ? 0 : (uint32_t)clen);
		put32(&b, m[i].descriptor ? 0 : (uint32_t)m[i].n);
		put16(&b, (unsigned)strlen(m[i].name));
		put16(&b, 0);
		tm_buf_puts(&b, m[i].name);
		tm_buf_put(&b, comp ? comp : m[i].data, clen);
		if (m[i].descriptor) {
			put32(&b, 0x08074b50);
			put32(&b, crc);
			put32(&b, (uint32_t)clen);
			put32(&b, (uint32_t)m[i].n);
		}
		free(comp);
	}
	uint32_t cd_off = (uint32_t)b.len;
	for (size_t k = 0; k < n; k++) {
		size_t i = reverse_cd ? n - 1 - k : k;
		put32(&cd, 0x02014b50);
		put16(&cd, 0x031e);
		put16(&cd, 20);
		put16(&cd, m[i].descriptor ? 8 : 0);
		put16(&cd, m[i].deflate ? 8 : 0);
		put16(&cd, 0);
		put16(&cd, 0x21);
		put32(&cd, crcs[i]);
		put32(&cd, (uint32_t)clens[i]);
		put32(&cd, (uint32_t)m[i].n);
		put16(&cd, (unsigned)strlen(m[i].name));
		put16(&cd, 0);
		put16(&cd, 0);
		put16(&cd, 0);
		put16(&cd, 0);
		put32(&cd, 0100644u << 16);
		put32(&cd, offs[i]);
		tm_buf_puts(&cd, m[i].name);
	}
	if (!no_cd) {
		tm_buf_put(&b, cd.data, cd.len);
		put32(&b, 0x06054b50);
		put16(&b, 0);
		put16(&b, 0);
		put16(&b, (unsigned)n);
		put16(&b, (unsigned)n);
		put32(&b, (uint32_t)cd.len);
		put32(&b, cd_off);
		put16(&b, 0);
	}
	tm_buf_free(&cd);
	free(offs);
	free(crcs);
	free(clens);
	if (!b.data)
		tm_buf_put(&b, "", 0);
	return (unsigned char *)tm_buf_detach(&b, len);
}

static int zip_error(const void *data, size_t n, tm_error *err)
{
	tm_blob *b = tm_blob_open_memory(data, n);
	tm_listing l = {0};
	int rc = tm_zip_list(b, &l, err);
	tm_listing_free(&l);
	tm_blob_unref(b);
	return rc;
}

/* ---- a TAR writer for edge cases ------------------------------------------ */

static void tar_header(unsigned char *h, const char *name, char type, uint64_t size, int gnu)
{
	memset(h, 0, 512);
	memcpy(h, name, strlen(name) < 100 ? strlen(name) : 100);
	memcpy(h + 100, "0000644", 7);
	memcpy(h + 108, "0000000", 7);
	memcpy(h + 116, "0000000", 7);
	snprintf((char *)h + 124, 12, "%011llo", (unsigned long long)size);
	memcpy(h + 136, "14000000000", 11);
	h[156] = (unsigned char)type;
	if (gnu)
		memcpy(h + 257, "ustar  ", 8);
	else
		memcpy(h + 257, "ustar\0" "00", 8);
	memset(h + 148, ' ', 8);
	unsigned sum = 0;
	for (int i = 0; i < 512; i++)
		sum += h[i];
	snprintf((char *)h + 148, 8, "%06o", sum);
}

static void tar_put(tm_buf *t, const unsigned char *h, const void *data, size_t n)
{
	tm_buf_put(t, h, 512);
	if (n) {
		tm_buf_put(t, data, n);
		static const unsigned char zero[512];
		tm_buf_put(t, zero, (512 - n % 512) % 512);
	}
}

static void tar_end(tm_buf *t)
{
	static const unsigned char zero[1024];
	tm_buf_put(t, zero, sizeof zero);
}

static int tar_error(const void *data, size_t n, tm_error *err)
{
	tm_blob *b = tm_blob_open_memory(data, n);
	tm_listing l = {0};
	int rc = tm_tar_list(b, &l, err);
	tm_listing_free(&l);
	tm_blob_unref(b);
	return rc;
}

/* ---- names ---------------------------------------------------------------- */

static void test_hidden_names(void)
{
	/* formats.md §2.5 */
	CHECK(tm_member_name_is_hidden(".DS_Store"));
	CHECK(tm_member_name_is_hidden("__MACOSX/._x"));
	CHECK(tm_member_name_is_hidden("a/.hidden/b"));
	CHECK(tm_member_name_is_hidden("dir/.hid"));
	CHECK(tm_member_name_is_hidden("..."));
	CHECK(!tm_member_name_is_hidden("./a/j.json"));
	CHECK(!tm_member_name_is_hidden("../a.json"));
	CHECK(!tm_member_name_is_hidden("a/./b/../c"));
	CHECK(!tm_member_name_is_hidden("a.json"));
	CHECK(!tm_member_name_is_hidden(""));
	CHECK(!tm_member_name_is_hidden("d/"));
	CHECK(!tm_member_name_is_hidden("a//b"));
}

/* ---- plain blobs ---------------------------------------------------------- */

static void test_file_blob(void)
{
	unsigned char data[100000];
	gen_random(data, sizeof data, 7);
	write_file("plain.bin", data, sizeof data);
	tm_error err = {0};
	tm_blob *b = tm_blob_open_path(path_of("plain.bin"), &err);
	CHECK(b);
	CHECK_INT(tm_blob_size(b), sizeof data);
	CHECK_INT(tm_blob_measure(b, &err), sizeof data);
	unsigned char head[16];
	CHECK_INT(tm_blob_head(b, head, sizeof head, &err), 16);
	CHECK(memcmp(head, data, 16) == 0);
	tm_cursor *c = tm_cursor_open(b, &err);
	unsigned char buf[5000];
	CHECK_INT(tm_cursor_pread(c, buf, sizeof buf, 99000, &err), 1000);
	CHECK(memcmp(buf, data + 99000, 1000) == 0);
	CHECK_INT(tm_cursor_pread(c, buf, 10, 100000, &err), 0);
	CHECK_INT(tm_cursor_pread(c, buf, 10, 1ull << 62, &err), 0);
	CHECK_INT(tm_cursor_pread(c, buf, 100, 5, &err), 100);
	CHECK_INT(tm_cursor_read(c, buf + 100, 100, &err), 100); /* continues at 105 */
	CHECK(memcmp(buf, data + 5, 200) == 0);
	tm_cursor_close(c);
	CHECK(blob_equals(b, data, sizeof data));
	tm_blob_unref(b);

	CHECK(!tm_blob_open_path(path_of("missing"), &err));
	CHECK_INT(err.code, TM_EIO);
	tm_buf want = {0};
	tm_buf_printf(&want, "%s: No such file or directory", path_of("missing"));
	int same = strcmp(err.msg, want.data) == 0;
	tm_buf_free(&want);
	CHECK(same);
	CHECK(!tm_blob_open_path(tmpdir, &err));
	CHECK_INT(err.code, TM_EIO);
}

/* tm_blob_head_hash of a loose file is tm_hash of its first n bytes
 * whether or not a head read took the whole file before it (the sniff of
 * a small file), also once a larger file was only partly read. */
static void test_loose_head_hash(void)
{
	unsigned char data[9000];
	gen_random(data, sizeof data, 11);
	write_file("small.bin", data, 300);
	write_file("large.bin", data, sizeof data);
	tm_error err = {0};
	struct stat st;
	CHECK_INT(stat(path_of("small.bin"), &st), 0);
	tm_blob *small = tm_blob_open_loose(path_of("small.bin"), &st);
	CHECK_INT(stat(path_of("large.bin"), &st), 0);
	tm_blob *large = tm_blob_open_loose(path_of("large.bin"), &st);
	uint64_t h = 0, want_small = tm_hash(TM_HASH_INIT, data, 300);
	CHECK_INT(tm_blob_head_hash(small, 1 << 20, &h, &err), 0); /* read now */
	CHECK(h == want_small);
	unsigned char head[4096];
	CHECK_INT(tm_blob_head(small, head, sizeof head, &err), 300); /* whole */
	CHECK_INT(tm_blob_head(large, head, sizeof head, &err), 4096); /* not whole */
	h = 0;
	CHECK_INT(tm_blob_head_hash(small, 1 << 20, &h, &err), 0); /* kept */
	CHECK(h == want_small);
	h = 0;
	CHECK_INT(tm_blob_head_hash(small, 100, &h, &err), 0); /* fewer bytes: read */
	CHECK(h == tm_hash(TM_HASH_INIT, data, 100));
	CHECK_INT(tm_blob_head_hash(large, 1 << 20, &h, &err), 0);
	CHECK(h == tm_hash(TM_HASH_INIT, data, sizeof data));
	CHECK_INT(tm_blob_head_hash(large, 5000, &h, &err), 0);
	CHECK(h == tm_hash(TM_HASH_INIT, data, 5000));
	tm_blob_unref(small);
	tm_blob_unref(large);
}

/* A loose file its lister opened (tm_blob_open_loose_fd): stat'ed through
 * the fd, its type known from the head read then, and a small file's hash
 * too, so that neither opens it again: both still answer once the file is
 * gone. A narrower sniff window, a larger file's hash, a FIFO and a
 * directory are not served from that read. */
static void test_loose_opened_by_lister(void)
{
	const char json[] = "{\"traceEvents\": []}";
	unsigned char data[9000];
	gen_random(data, sizeof data, 12);
	write_file("lister_small.json", json, sizeof json - 1);
	write_file("lister_large.bin", data, sizeof data);
	struct stat st, want;
	int fd = open(path_of("lister_small.json"), O_RDONLY);
	CHECK(fd >= 0);
	tm_blob *small = tm_blob_open_loose_fd(path_of("lister_small.json"), fd, &st);
	close(fd);
	CHECK(small);
	CHECK_INT(stat(path_of("lister_small.json"), &want), 0);
	CHECK(st.st_ino == want.st_ino && st.st_size == (off_t)(sizeof json - 1));
	CHECK_INT(unlink(path_of("lister_small.json")), 0);
	tm_type type = TM_TYPE_COUNT;
	CHECK(tm_blob_sniffed(small, TM_SNIFF_BYTES, &type));
	CHECK_INT(type, TM_TYPE_JSON);
	type = TM_TYPE_COUNT;
	CHECK(tm_blob_sniffed(small, 512, &type)); /* the whole file is in 512 */
	CHECK_INT(type, TM_TYPE_JSON);
	CHECK(!tm_blob_sniffed(small, 4, &type));
	tm_error err = {0};
	uint64_t h = 0;
	CHECK_INT(tm_blob_head_hash(small, 1 << 20, &h, &err), 0);
	CHECK(h == tm_hash(TM_HASH_INIT, json, sizeof json - 1));
	unsigned char head[16];
	CHECK_INT(tm_blob_head(small, head, sizeof head, &err), -1); /* gone */
	tm_blob_unref(small);

	fd = open(path_of("lister_large.bin"), O_RDONLY);
	tm_blob *large = tm_blob_open_loose_fd(path_of("lister_large.bin"), fd, &st);
	close(fd);
	CHECK(large);
	CHECK(tm_blob_sniffed(large, TM_SNIFF_BYTES, &type));
	CHECK_INT(type, tm_detect(data, TM_SNIFF_BYTES));
	CHECK(!tm_blob_sniffed(large, 512, &type));
	CHECK_INT(tm_blob_head_hash(large, 1 << 20, &h, &err), 0); /* read whole now */
	CHECK(h == tm_hash(TM_HASH_INIT, data, sizeof data));
	tm_blob_unref(large);

	tm_blob *plain = tm_blob_open_memory(json, sizeof json - 1);
	CHECK(!tm_blob_sniffed(plain, TM_SNIFF_BYTES, &type));
	tm_blob_unref(plain);

	CHECK_INT(mkfifo(path_of("lister_fifo"), 0600), 0);
	fd = open(path_of("lister_fifo"), O_RDONLY | O_NONBLOCK);
	CHECK(fd >= 0);
	CHECK(!tm_blob_open_loose_fd(path_of("lister_fifo"), fd, &st));
	close(fd);
	fd = open(tmpdir, O_RDONLY | O_DIRECTORY);
	CHECK(!tm_blob_open_loose_fd(tmpdir, fd, &st));
	close(fd);
}

/* Read system calls made so far by this process (/proc/self/io's syscr),
 * or -1 where the kernel does not count them. */
static long long read_syscalls(void)
{
	FILE *f = fopen("/proc/self/io", "r");
	long long n = -1;
	char line[128];
	while (f && fgets(line, sizeof line, f))
		if (sscanf(line, "syscr: %lld", &n) == 1)
			break;
	if (f)
		fclose(f);
	return n;
}

/* Two runs of small reads at two places of one file, taken in turns (the
 * scan's two threads, each on its members): each keeps a window of its
 * own, so the file is read in windows, not again for every read, and
 * every read gives the file's bytes. */
static void test_file_blob_two_runs(void)
{
	enum { SIZE = 4 << 20, STEP = 200, READS = 2000 };
	unsigned char *data = malloc(SIZE), buf[STEP];
	gen_random(data, SIZE, 13);
	write_file("two_runs.bin", data, SIZE);
	tm_error err = {0};
	tm_blob *b = tm_blob_open_path(path_of("two_runs.bin"), &err);
	CHECK(b);
	tm_cursor *x = tm_cursor_open(b, &err), *y = tm_cursor_open(b, &err);
	long long before = read_syscalls();
	int bad = 0;
	for (uint64_t i = 0; i < READS; i++) {
		uint64_t a = i * STEP, c = SIZE / 2 + i * STEP;
		bad += tm_cursor_pread(x, buf, STEP, a, &err) != STEP || memcmp(buf, data + a, STEP) != 0;
		bad += tm_cursor_pread(y, buf, STEP, c, &err) != STEP || memcmp(buf, data + c, STEP) != 0;
	}
	long long after = read_syscalls();
	CHECK_INT(bad, 0);
	tm_cursor_close(x);
	tm_cursor_close(y);
	tm_blob_unref(b);
	free(data);
	if (before < 0 || after < 0)
		SKIP("no /proc/self/io here: the bytes were checked, not the reads");
	/* 2 x 400 KB in windows of 16, 32, 64, then 128 KB: about 12 reads
	 * (a shared window read again for each of the 4,000) */
	CHECK(after - before <= 40);
}

/* Small reads served from the read window: forward runs (the window
 * grows), nearby jumps back and forth (it keeps its size), far jumps (it
 * starts small again) and reads across the end of a window or of the file
 * all give the file's bytes. */
static void test_file_blob_window(void)
{
	enum { SIZE = 1 << 20 };
	unsigned char *data = malloc(SIZE), buf[16384];
	gen_random(data, SIZE, 11);
	write_file("window.bin", data, SIZE);
	tm_error err = {0};
	tm_blob *b = tm_blob_open_path(path_of("window.bin"), &err);
	CHECK(b);
	tm_cursor *c = tm_cursor_open(b, &err);
	uint64_t seed = 99, off = 0;
	int bad = 0;
	for (int i = 0; i < 20000; i++) {
		seed = seed * 6364136223846793005ull + 1442695040888963407ull;
		uint32_t r = (uint32_t)(seed >> 33);
		size_t n = 1 + r % (i % 3 ? 600 : sizeof buf);
		switch (r % 4) {
		case 0: /* a far jump */
			off = (r >> 4) % SIZE;
			break;
		case 1: /* nearby, either way */
			off = (off + SIZE + (r >> 8) % 300000 - 150000) % SIZE;
			break;
		default: /* on forward */
			off += n;
			break;
		}
		if (off >= SIZE)
			off = SIZE - 1 - r % 100;
		size_t want = off + n > SIZE ? SIZE - off : n;
		ssize_t got = tm_cursor_pread(c, buf, n, off, &err);
		bad += got != (ssize_t)want || memcmp(buf, data + off, want) != 0;
	}
	CHECK_INT(bad, 0);
	tm_cursor_close(c);
	tm_blob_unref(b);
	free(data);
}

static void test_memory_blob(void)
{
	tm_blob *b = tm_blob_open_memory("hello world", 11);
	tm_error err = {0};
	CHECK_INT(tm_blob_size(b), 11);
	CHECK(blob_equals(b, "hello world", 11));
	tm_blob *e = tm_blob_open_memory(NULL, 0);
	CHECK_INT(tm_blob_size(e), 0);
	char x[4];
	CHECK_INT(tm_blob_head(e, x, sizeof x, &err), 0);
	tm_blob_unref(e);
	tm_blob_ref(b);
	tm_blob_unref(b);
	tm_blob_unref(b);
	tm_blob_ref(NULL);
	tm_blob_unref(NULL);
}

/* ---- ZIP ------------------------------------------------------------------ */

static void test_zip_tools(void)
{
	static unsigned char text[300000], rnd[70000];
	gen_text(text, sizeof text, 1);
	gen_random(rnd, sizeof rnd, 2);
	write_file("z_text.txt", text, sizeof text);
	write_file("z_rnd.bin", rnd, sizeof rnd);
	write_file("z_small.json", "{\"a\":1}", 7);
	if (sh("zip -q z.zip z_text.txt z_rnd.bin && zip -q -0 z.zip z_small.json") != 0)
		SKIP("zip failed");
	tm_error err = {0};
	tm_blob *b = tm_blob_open_path(path_of("z.zip"), &err);
	tm_listing l = {0};
	CHECK_INT(tm_zip_list(b, &l, &err), 0);
	CHECK_INT(l.n, 3);
	CHECK_STR(l.entries[0].name, "z_text.txt");
	CHECK_STR(l.entries[1].name, "z_rnd.bin");
	CHECK_STR(l.entries[2].name, "z_small.json");
	for (size_t i = 0; i < l.n; i++) {
		CHECK_INT(l.entries[i].kind, TM_ENTRY_FILE);
		CHECK(l.entries[i].pax_path == NULL);
		CHECK(l.entries[i].mtime > 0);
		CHECK_INT(l.entries[i].mode, 0644);
	}
	CHECK_INT(l.entries[0].size, sizeof text);
	CHECK_INT(tm_blob_size(l.entries[0].blob), sizeof text);
	CHECK_INT(l.entries[1].size, sizeof rnd);
	CHECK_INT(l.entries[2].size, 7);
	CHECK(blob_equals(l.entries[0].blob, text, sizeof text));
	CHECK(blob_equals(l.entries[1].blob, rnd, sizeof rnd));
	CHECK(blob_equals(l.entries[2].blob, "{\"a\":1}", 7));

	/* random access into a deflated member: backward seeks restart it */
	tm_cursor *c = tm_cursor_open(l.entries[0].blob, &err);
	static const uint64_t offs[] = {250000, 10, 299990, 123456, 0, 123457, 299999};
	for (size_t k = 0; k < sizeof offs / sizeof offs[0]; k++) {
		unsigned char buf[4096];
		size_t want = sizeof text - offs[k] < sizeof buf ? sizeof text - offs[k] : sizeof buf;
		CHECK_INT(tm_cursor_pread(c, buf, sizeof buf, offs[k], &err), want);
		CHECK(memcmp(buf, text + offs[k], want) == 0);
	}
	tm_cursor_close(c);
	tm_listing_free(&l);
	CHECK_INT(l.n, 0);
	tm_blob_unref(b);
}

static void test_zip_streamed_descriptor(void)
{
	/* formats.md §2.1: data descriptors (zip(1) writes them, and zip64
	 * local headers, when its output is a pipe) */
	if (sh("printf x | zip -q - - | cat > dd1.zip && seq 1 100000 | zip -q - - | cat > dd2.zip && "
	       "seq 1 100000 > dd2.txt") != 0)
		SKIP("zip failed");
	tm_error err = {0};
	tm_blob *b = tm_blob_open_path(path_of("dd1.zip"), &err);
	tm_listing l = {0};
	CHECK_INT(tm_zip_list(b, &l, &err), 0);
	CHECK_INT(l.n, 1);
	CHECK_STR(l.entries[0].name, "-");
	CHECK_INT(l.entries[0].size, 1);
	CHECK(blob_equals(l.entries[0].blob, "x", 1));
	tm_listing_free(&l);
	tm_blob_unref(b);

	size_t n, zn;
	unsigned char *want = read_file("dd2.txt", &n), *zip = read_file("dd2.zip", &zn);
	b = tm_blob_open_memory(zip, zn);
	CHECK_INT(tm_zip_list(b, &l, &err), 0);
	CHECK_INT(l.n, 1);
	CHECK_INT(l.entries[0].size, n);
	CHECK(blob_equals(l.entries[0].blob, want, n));
	tm_listing_free(&l);
	tm_blob_unref(b);

	/* Without its central directory the member is inflated to find its
	 * end (a truncated or streamed zip). */
	uint32_t cd = 0;
	for (size_t i = zn - 22; i > 0; i--)
		if (memcmp(zip + i, "PK\x05\x06", 4) == 0) {
			cd = (uint32_t)zip[i + 16] | (uint32_t)zip[i + 17] << 8 | (uint32_t)zip[i + 18] << 16 |
			     (uint32_t)zip[i + 19] << 24;
			break;
		}
	CHECK(cd > 0);
	b = tm_blob_open_memory(zip, cd);
	CHECK_INT(tm_zip_list(b, &l, &err), 0);
	CHECK_INT(l.n, 1);
	CHECK(blob_equals(l.entries[0].blob, want, n));
	tm_listing_free(&l);
	tm_blob_unref(b);

	/* cut inside the member's data: the reference never completes it */
	b = tm_blob_open_memory(zip, cd / 2);
	CHECK_INT(tm_zip_list(b, &l, &err), 0);
	CHECK_INT(l.n, 0);
	tm_blob_unref(b);
	free(want);
	free(zip);
}

static void test_zip_local_order_and_descriptors(void)
{
	static unsigned char big[200000];
	gen_text(big, sizeof big, 3);
	zmember m[] = {
		{"z.json", "{\"z\":1}", 7, 0, 0},
		{"b.pb", big, sizeof big, 1, 1},
		{"a/../a.json", "[{}]", 4, 1, 0},
		{"d/", "", 0, 0, 0},
		{"e.json", "", 0, 1, 1},
	};
	size_t n_m = sizeof m / sizeof m[0];
	for (int variant = 0; variant < 2; variant++) {
		size_t len;
		unsigned char *zip = build_zip(m, n_m, 1, variant, &len);
		tm_blob *b = tm_blob_open_memory(zip, len);
		free(zip);
		tm_listing l = {0};
		tm_error err = {0};
		CHECK_INT(tm_zip_list(b, &l, &err), 0);
		CHECK_INT(l.n, n_m);
		for (size_t i = 0; i < l.n && i < n_m; i++) {
			/* local-header order, names as stored */
			CHECK_STR(l.entries[i].name, m[i].name);
			CHECK_INT(l.entries[i].kind, TM_ENTRY_FILE);
			CHECK_INT(l.entries[i].size, m[i].n);
			CHECK(blob_equals(l.entries[i].blob, m[i].data, m[i].n));
		}
		CHECK_INT(l.entries[0].offset, 0);
		CHECK_INT(l.entries[0].mode, variant ? 0 : 0644);
		tm_listing_free(&l);
		tm_blob_unref(b);
	}
}

static void test_zip_directory_entry(void)
{
	if (sh("mkdir -p zd/d && printf '[{}]' > zd/d/app.json && cd zd && zip -q ../zd.zip d/ d/app.json") != 0)
		SKIP("zip failed");
	tm_error err = {0};
	tm_blob *b = tm_blob_open_path(path_of("zd.zip"), &err);
	tm_listing l = {0};
	CHECK_INT(tm_zip_list(b, &l, &err), 0);
	CHECK_INT(l.n, 2);
	/* formats.md §2.1: an ordinary empty member */
	CHECK_STR(l.entries[0].name, "d/");
	CHECK_INT(l.entries[0].kind, TM_ENTRY_FILE);
	CHECK_INT(l.entries[0].size, 0);
	CHECK(l.entries[0].blob != NULL);
	CHECK(blob_equals(l.entries[0].blob, "", 0));
	CHECK_STR(l.entries[1].name, "d/app.json");
	CHECK(blob_equals(l.entries[1].blob, "[{}]", 4));
	tm_listing_free(&l);
	tm_blob_unref(b);
}

static void test_zip64(void)
{
	/* a stored member whose local sizes live in the zip64 extra field */
	tm_buf z = {0};
	put32(&z, 0x04034b50);
	put16(&z, 45);
	put16(&z, 0);
	put16(&z, 0);
	put16(&z, 0);
	put16(&z, 0x21);
	put32(&z, (uint32_t)crc32(0, (const Bytef *)"hello", 5));
	put32(&z, 0xffffffff);
	put32(&z, 0xffffffff);
	put16(&z, 5);
	put16(&z, 20);
	tm_buf_puts(&z, "h.txt");
	put16(&z, 1);
	put16(&z, 16);
	put32(&z, 5); /* uncompressed, 64-bit */
	put32(&z, 0);
	put32(&z, 5); /* compressed, 64-bit */
	put32(&z, 0);
	tm_buf_puts(&z, "hello");
	put32(&z, 0x02014b50); /* the walk ends at the central directory */
	tm_buf_put(&z, "\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0", 42);
	tm_blob *b = tm_blob_open_memory(z.data, z.len);
	tm_listing l = {0};
	tm_error err = {0};
	CHECK_INT(tm_zip_list(b, &l, &err), 0);
	CHECK_INT(l.n, 1);
	CHECK_STR(l.entries[0].name, "h.txt");
	CHECK_INT(l.entries[0].size, 5);
	CHECK(blob_equals(l.entries[0].blob, "hello", 5));
	tm_listing_free(&l);
	tm_blob_unref(b);

	/* the extra field too short for the sentinel it must replace */
	z.data[30 + 5 + 2] = 4; /* extra record size 4 */
	z.data[30 + 5 + 4 + 0] = 5;
	b = tm_blob_open_memory(z.data, z.len);
	CHECK_INT(tm_zip_list(b, &l, &err), -1);
	CHECK_STR(msg_of(&err), "Malformed ZIP at offset 0x37. Zip64 extra field is too short to hold the "
			   "uncompressed size.");
	tm_blob_unref(b);
	tm_buf_free(&z);

	/* zip(1) -fz forces zip64 records, including the zip64 end of central directory */
	if (sh("seq 1 5000 > z64.txt && zip -q -fz z64.zip z64.txt") != 0)
		SKIP("zip -fz failed");
	size_t n;
	unsigned char *want = read_file("z64.txt", &n);
	b = tm_blob_open_path(path_of("z64.zip"), &err);
	CHECK_INT(tm_zip_list(b, &l, &err), 0);
	CHECK_INT(l.n, 1);
	CHECK_INT(l.entries[0].size, n);
	CHECK(blob_equals(l.entries[0].blob, want, n));
	tm_listing_free(&l);
	tm_blob_unref(b);
	free(want);
}

static void test_zip_errors(void)
{
	tm_error err = {0};
	zmember m[] = {{"a.json", "[{}]", 4, 0, 0}, {"b.json", "[{}]", 4, 0, 0}};
	size_t len;
	unsigned char *zip = build_zip(m, 2, 0, 0, &len);
	size_t second = 30 + 6 + 4;

	/* formats.md §2.1 texts; offsets as the reference prints them (past the
	 * 30-byte header), hexadecimal without 0x for the values */
	unsigned char *z = malloc(len);
	memcpy(z, zip, len);
	memcpy(z + second, "PK\x07\x09", 4);
	CHECK_INT(zip_error(z, len, &err), -1);
	CHECK_INT(err.code, TM_EINPUT);
	CHECK_STR(msg_of(&err), "Invalid signature found at offset 0x46. Actual=0x9074b50, expected=0x4034b50");

	memcpy(z, zip, len);
	z[second + 4] = 63; /* version needed 6.3 */
	CHECK_INT(zip_error(z, len, &err), -1);
	CHECK_STR(msg_of(&err), "Unsupported zip features at offset 0x46. version=3f, flags=0");

	memcpy(z, zip, len);
	z[6] = 0x41; /* encrypted + strong encryption */
	CHECK_INT(zip_error(z, len, &err), -1);
	CHECK_STR(msg_of(&err), "Unsupported zip features at offset 0x1e. version=14, flags=41");

	memcpy(z, zip, len);
	z[7] = 0x08; /* bit 11 (UTF-8) is fine */
	CHECK_INT(zip_error(z, len, &err), 0);
	z[7] = 0x10; /* bit 12 is not */
	CHECK_INT(zip_error(z, len, &err), -1);
	CHECK_STR(msg_of(&err), "Unsupported zip features at offset 0x1e. version=14, flags=1000");

	memcpy(z, zip, len);
	z[second + 8] = 14; /* LZMA */
	CHECK_INT(zip_error(z, len, &err), -1);
	CHECK_STR(msg_of(&err), "Unsupported compression type at offset 0x46. type=e. Only deflate and no compression "
			   "are supported.");

	memcpy(z, zip, len);
	z[6] = 0x08; /* data descriptor on a stored member */
	CHECK_INT(zip_error(z, len, &err), -1);
	CHECK_STR(msg_of(&err), "Unsupported compression type at offset 0x1e. type=0. Only deflate supported for ZIPs "
			   "compressed in a streaming fashion.");

	/* an empty zip (only the 22-byte end record) has no members: fewer
	 * than 30 bytes are never looked at; with a comment it is an error */
	static const unsigned char empty[40] = {'P', 'K', 5, 6, [20] = 18};
	CHECK_INT(zip_error(empty, 22, &err), 0);
	CHECK_INT(zip_error(empty, sizeof empty, &err), -1);
	CHECK_STR(msg_of(&err), "Invalid signature found at offset 0x1e. Actual=0x6054b50, expected=0x4034b50");
	/* fewer than 30 bytes left: nothing more (the reference waits for data) */
	CHECK_INT(zip_error(zip, second + 29, &err), 0);
	free(z);
	free(zip);

	/* a bad data-descriptor signature, offset past the descriptor */
	zmember d[] = {{"s.json", "[{}]", 4, 1, 1}};
	zip = build_zip(d, 1, 0, 0, &len);
	size_t clen;
	free(deflate_raw("[{}]", 4, &clen));
	size_t desc = 30 + 6 + clen;
	zip[desc + 3] = 9;
	CHECK_INT(zip_error(zip, len, &err), -1);
	char want[200];
	snprintf(want, sizeof want, "Invalid signature found at offset 0x%zx. Actual=0x9074b50, expected=0x8074b50",
		 desc + 16);
	CHECK_STR(msg_of(&err), want);
	/* corrupt deflate data in a streamed member */
	zip[desc + 3] = 8;
	zip[36] = 0xff;
	zip[37] = 0xff;
	zip[38] = 0xff;
	unsigned char *nocd = malloc(desc + 16);
	memcpy(nocd, zip, desc + 16);
	CHECK_INT(zip_error(nocd, desc + 16, &err), -1);
	CHECK_STR(msg_of(&err), "Failed decompressing stream in ZIP file at offset 0x24");
	free(nocd);
	free(zip);
}

static void test_zip_member_checks(void)
{
	static unsigned char text[50000];
	gen_text(text, sizeof text, 9);
	zmember m[] = {{"t.txt", text, sizeof text, 1, 0}};
	size_t len;
	unsigned char *zip = build_zip(m, 1, 0, 0, &len);
	zip[14] ^= 1; /* CRC in the local header */
	tm_blob *b = tm_blob_open_memory(zip, len);
	tm_listing l = {0};
	tm_error err = {0};
	CHECK_INT(tm_zip_list(b, &l, &err), 0);
	unsigned char head[100];
	CHECK_INT(tm_blob_head(l.entries[0].blob, head, sizeof head, &err), 100); /* sniffing is fine */
	size_t n;
	CHECK(!blob_all(l.entries[0].blob, &n, &err));
	char want[200];
	uint32_t crc = (uint32_t)crc32(0, text, sizeof text);
	snprintf(want, sizeof want, "Zip CRC32 failure on t.txt (actual: %x, expected: %x) (ERR:tp-corrupt)", crc,
		 crc ^ 1);
	CHECK_STR(msg_of(&err), want);
	/* the failure sticks at the end; earlier bytes stay readable */
	tm_cursor *c = tm_cursor_open(l.entries[0].blob, &err);
	unsigned char buf[64];
	CHECK_INT(tm_cursor_pread(c, buf, sizeof buf, sizeof text - 64, &err), -1);
	CHECK_INT(tm_cursor_pread(c, buf, sizeof buf, sizeof text - 64, &err), -1);
	CHECK_INT(tm_cursor_pread(c, buf, sizeof buf, 0, &err), 64);
	CHECK(memcmp(buf, text, 64) == 0);
	tm_cursor_close(c);
	tm_listing_free(&l);
	tm_blob_unref(b);

	/* a stored size larger than the deflate data gives */
	zip[14] ^= 1;
	zip[22] += 1; /* uncompressed size + 1 */
	b = tm_blob_open_memory(zip, len);
	CHECK_INT(tm_zip_list(b, &l, &err), 0);
	CHECK(!blob_all(l.entries[0].blob, &n, &err));
	snprintf(want, sizeof want, "t.txt: deflate data ends after %zu of %zu bytes (ERR:tp-corrupt)", sizeof text,
		 sizeof text + 1);
	CHECK_STR(msg_of(&err), want);
	tm_listing_free(&l);
	tm_blob_unref(b);
	/* ... and smaller */
	zip[22] -= 2;
	b = tm_blob_open_memory(zip, len);
	CHECK_INT(tm_zip_list(b, &l, &err), 0);
	CHECK(!blob_all(l.entries[0].blob, &n, &err));
	size_t clen;
	free(deflate_raw(text, sizeof text, &clen));
	snprintf(want, sizeof want, "Zip decompression error (0) on t.txt (c=%zu, u=%zu) (ERR:tp-corrupt)", clen,
		 sizeof text - 1);
	CHECK_STR(msg_of(&err), want);
	tm_listing_free(&l);
	tm_blob_unref(b);
	free(zip);
}

static void test_zip_many_members(void)
{
	/* thousands of members: listing reads headers only */
	if (sh("mkdir -p many && cd many && for i in $(seq 1 2000); do echo \"[{\\\"i\\\":$i}]\" > m$i.json; done "
	       "&& zip -q ../many.zip m*.json") != 0)
		SKIP("zip failed");
	tm_error err = {0};
	tm_blob *b = tm_blob_open_path(path_of("many.zip"), &err);
	tm_listing l = {0};
	CHECK_INT(tm_zip_list(b, &l, &err), 0);
	CHECK_INT(l.n, 2000);
	const tm_entry *e = find(&l, "m1234.json");
	CHECK(e);
	CHECK(e && blob_equals(e->blob, "[{\"i\":1234}]\n", 13));
	tm_listing_free(&l);
	tm_blob_unref(b);
}

/* ---- TAR ------------------------------------------------------------------- */

static void test_tar_formats(void)
{
	char longname[160];
	memset(longname, 'x', 140);
	strcpy(longname + 140, ".json");
	char cmd[2048];
	snprintf(cmd, sizeof cmd,
		 "mkdir -p tf/sub/deeper && cd tf && printf '[{}]' > a.json && printf 'L' > %s && "
		 "mkdir -p pppppppppppppppppppppppppppppppppppppppppppppppppppppppppppp/qqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqq && "
		 "printf P > pppppppppppppppppppppppppppppppppppppppppppppppppppppppppppp/qqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqq/n.json && "
		 "ln -s a.json link.json && ln a.json hard.json && "
		 "tar --format=ustar -cf ../u.tar a.json pppppppppppppppppppppppppppppppppppppppppppppppppppppppppppp 2>/dev/null && "
		 "tar --format=gnu -cf ../g.tar a.json %s link.json hard.json && "
		 "tar --format=pax -cf ../p.tar %s a.json",
		 longname, longname, longname);
	if (sh("%s", cmd) != 0)
		SKIP("tar failed");
	tm_error err = {0};
	tm_listing l = {0};

	/* ustar: prefix "/" name */
	tm_blob *b = tm_blob_open_path(path_of("u.tar"), &err);
	CHECK_INT(tm_tar_list(b, &l, &err), 0);
	const tm_entry *e = find(&l, "a.json");
	CHECK(e && e->kind == TM_ENTRY_FILE && e->size == 4 && e->mode == 0644);
	CHECK(e && blob_equals(e->blob, "[{}]", 4));
	e = find(&l, "pppppppppppppppppppppppppppppppppppppppppppppppppppppppppppp/qqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqq/n.json");
	CHECK(e && e->kind == TM_ENTRY_FILE);
	CHECK(e && blob_equals(e->blob, "P", 1));
	e = find(&l, "pppppppppppppppppppppppppppppppppppppppppppppppppppppppppppp/");
	CHECK(e && e->kind == TM_ENTRY_DIR && !e->blob);
	tm_listing_free(&l);
	tm_blob_unref(b);

	/* GNU: L long names; symlink and hard link listed with their kinds (S45) */
	b = tm_blob_open_path(path_of("g.tar"), &err);
	CHECK_INT(tm_tar_list(b, &l, &err), 0);
	CHECK_INT(l.n, 4);
	CHECK_STR(l.entries[0].name, "a.json");
	CHECK_STR(l.entries[1].name, longname);
	CHECK(blob_equals(l.entries[1].blob, "L", 1));
	CHECK_STR(l.entries[2].name, "link.json");
	CHECK_INT(l.entries[2].kind, TM_ENTRY_SYMLINK);
	CHECK_STR(l.entries[2].link_target, "a.json");
	CHECK(!l.entries[2].blob);
	CHECK_STR(l.entries[3].name, "hard.json");
	CHECK_INT(l.entries[3].kind, TM_ENTRY_HARDLINK);
	CHECK_STR(l.entries[3].link_target, "a.json");
	tm_listing_free(&l);
	tm_blob_unref(b);

	/* PAX-only long name: the truncated ustar name (S44); path kept for display */
	b = tm_blob_open_path(path_of("p.tar"), &err);
	CHECK_INT(tm_tar_list(b, &l, &err), 0);
	CHECK_INT(l.n, 2);
	CHECK_INT(strlen(l.entries[0].name), 100);
	CHECK(strncmp(l.entries[0].name, longname, 100) == 0);
	CHECK_STR(l.entries[0].pax_path, longname);
	CHECK(blob_equals(l.entries[0].blob, "L", 1));
	CHECK_STR(l.entries[1].name, "a.json");
	tm_listing_free(&l);
	tm_blob_unref(b);
}

static void test_tar_handmade(void)
{
	unsigned char h[512];
	tm_buf t = {0};
	/* base-256 size; a type-'0' member of size 0; GNU magic; a second L
	 * replaced by a directory that neither uses nor consumes it */
	tar_header(h, "b256.json", '0', 0, 0);
	memset(h + 124, 0, 12);
	h[124] = 0x80;
	h[135] = 5;
	tar_put(&t, h, "hello", 5);
	tar_header(h, "empty.json", '\0', 0, 1);
	tar_put(&t, h, NULL, 0);
	tar_header(h, "././@LongLink", 'L', 12, 1);
	tar_put(&t, h, "long/n.json\0", 12);
	tar_header(h, "dir/", '5', 0, 1);
	tar_put(&t, h, NULL, 0);
	/* a single zero block is not the end */
	static const unsigned char zero[512];
	tm_buf_put(&t, zero, 512);
	tar_header(h, "short.json", '0', 2, 1);
	tar_put(&t, h, "[]", 2);
	tar_header(h, "fifo", '6', 0, 0);
	tar_put(&t, h, NULL, 0);
	tar_end(&t);
	tm_blob *b = tm_blob_open_memory(t.data, t.len);
	tm_listing l = {0};
	tm_error err = {0};
	CHECK_INT(tm_tar_list(b, &l, &err), 0);
	CHECK_INT(l.n, 5);
	CHECK_STR(l.entries[0].name, "b256.json");
	CHECK_INT(l.entries[0].size, 5);
	CHECK(blob_equals(l.entries[0].blob, "hello", 5));
	CHECK_STR(l.entries[1].name, "empty.json");
	CHECK_INT(l.entries[1].kind, TM_ENTRY_FILE);
	CHECK(blob_equals(l.entries[1].blob, "", 0));
	CHECK_STR(l.entries[2].name, "long/n.json"); /* the directory shows the pending name... */
	CHECK_INT(l.entries[2].kind, TM_ENTRY_DIR);
	CHECK_STR(l.entries[3].name, "long/n.json"); /* ...which names the next member */
	CHECK(blob_equals(l.entries[3].blob, "[]", 2));
	CHECK_STR(l.entries[4].name, "fifo");
	CHECK_INT(l.entries[4].kind, TM_ENTRY_OTHER);
	CHECK_INT(l.entries[0].offset, 0);
	CHECK_INT(l.entries[1].offset, 1024);
	tm_listing_free(&l);
	tm_blob_unref(b);
	tm_buf_free(&t);

	/* macOS tar: AppleDouble members and LIBARCHIVE.xattr PAX records */
	static const char pax[] = "30 mtime=1700000000.123456789\n"
				  "61 LIBARCHIVE.xattr.com.apple.quarantine=MDA4MTtmZjtTYWZhcmk\n"
				  "19 path=x/._a.json\n";
	tar_header(h, "x/PaxHeader/._a.json", 'x', sizeof pax - 1, 0);
	tar_put(&t, h, pax, sizeof pax - 1);
	tar_header(h, "x/._a.json", '0', 3, 0);
	tar_put(&t, h, "\0\5\26", 3);
	tar_header(h, "x/a.json", '0', 4, 0);
	tar_put(&t, h, "[{}]", 4);
	tar_end(&t);
	b = tm_blob_open_memory(t.data, t.len);
	CHECK_INT(tm_tar_list(b, &l, &err), 0);
	CHECK_INT(l.n, 2);
	CHECK_STR(l.entries[0].name, "x/._a.json");
	CHECK_STR(l.entries[0].pax_path, "x/._a.json");
	CHECK(tm_member_name_is_hidden(l.entries[0].name));
	CHECK_STR(l.entries[1].name, "x/a.json");
	CHECK(l.entries[1].pax_path == NULL);
	tm_listing_free(&l);
	tm_blob_unref(b);
	tm_buf_free(&t);
}

static void test_tar_errors(void)
{
	unsigned char h[512];
	tm_buf t = {0};
	tm_error err = {0};
	tar_header(h, "a.json", '0', 4, 0);
	tar_put(&t, h, "[{}]", 4);
	tar_end(&t);
	CHECK_INT(tar_error(t.data, t.len, &err), 0);

	/* formats.md §2.2 texts */
	tar_header(h, "a.json", '0', 4, 0);
	h[263] = '0';
	h[264] = '1';
	CHECK_INT(tar_error(h, 512, &err), -1);
	CHECK_STR(msg_of(&err), "Invalid version: 01");
	/* ...but a directory is skipped before the version is looked at */
	tm_buf dir = {0};
	tar_header(h, "d/", '5', 0, 0);
	h[263] = 'x';
	tar_put(&dir, h, NULL, 0);
	tar_end(&dir);
	CHECK_INT(tar_error(dir.data, dir.len, &err), 0);
	tm_buf_free(&dir);

	tar_header(h, "a.json", '0', 4, 0);
	h[257] = 'U';
	CHECK_INT(tar_error(h, 512, &err), -1);
	CHECK_STR(msg_of(&err), "Invalid magic value");

	tar_header(h, "a.json", '0', 4, 0);
	h[126] = '8';
	CHECK_INT(tar_error(h, 512, &err), -1);
	CHECK_STR(msg_of(&err), "Failed to parse size field: Invalid octal digit in size field.");
	tar_header(h, "a.json", '0', 4, 0);
	memcpy(h + 124, "   4 xxxxxxx", 12); /* leading spaces, ends at a space */
	tm_buf u = {0};
	tar_put(&u, h, "[{}]", 4);
	tar_end(&u);
	CHECK_INT(tar_error(u.data, u.len, &err), 0);
	tm_buf_free(&u);
	h[124] = 0;
	CHECK_INT(tar_error(h, 512, &err), -1);
	CHECK_STR(msg_of(&err), "Failed to parse size field: Size field is empty or zero.");
	h[124] = 0xc0;
	CHECK_INT(tar_error(h, 512, &err), -1);
	CHECK_STR(msg_of(&err), "Failed to parse size field: Negative size in base-256 encoding is not supported.");
	memset(h + 124, 0xff, 12);
	h[124] = 0x80;
	CHECK_INT(tar_error(h, 512, &err), -1);
	CHECK_STR(msg_of(&err), "Failed to parse size field: Base-256 value exceeds uint64_t range.");
	/* a huge base-256 size is a premature end, not an allocation */
	memset(h + 124, 0, 12);
	h[124] = 0x80;
	memset(h + 128, 0xff, 8);
	CHECK_INT(tar_error(h, 512, &err), -1);
	CHECK_STR(msg_of(&err), "Premature end of TAR file (ERR:tp-corrupt)");

	tar_header(h, "link", '2', 4, 0);
	CHECK_INT(tar_error(h, 512, &err), -1);
	CHECK_STR(msg_of(&err), "Unsupported file type: 0x32");
	tar_header(h, "longlink", 'K', 4, 1);
	CHECK_INT(tar_error(h, 512, &err), -1);
	CHECK_STR(msg_of(&err), "Unsupported file type: 0x4b");
	tar_header(h, "odd", (char)0x99, 1, 0);
	CHECK_INT(tar_error(h, 512, &err), -1);
	CHECK_STR(msg_of(&err), "Unsupported file type: 0xffffff99");

	/* premature ends: no end marker, one zero block, a cut payload, a cut header */
	CHECK_INT(tar_error(t.data, 1024, &err), -1);
	CHECK_STR(msg_of(&err), "Premature end of TAR file (ERR:tp-corrupt)");
	CHECK_INT(tar_error(t.data, 1536, &err), -1);
	CHECK_STR(msg_of(&err), "Premature end of TAR file (ERR:tp-corrupt)");
	CHECK_INT(tar_error(t.data, 600, &err), -1);
	CHECK_STR(msg_of(&err), "Premature end of TAR file (ERR:tp-corrupt)");
	CHECK_INT(tar_error(t.data, 100, &err), -1);
	CHECK_STR(msg_of(&err), "Premature end of TAR file (ERR:tp-corrupt)");
	CHECK_INT(tar_error(t.data, 0, &err), -1);
	CHECK_STR(msg_of(&err), "Premature end of TAR file (ERR:tp-corrupt)");
	tm_buf_free(&t);
}

/* ---- compressed streams ------------------------------------------------------ */

static tm_blob *decompress_file(const char *name, tm_codec codec)
{
	tm_error err = {0};
	tm_blob *f = tm_blob_open_path(path_of(name), &err);
	if (!f)
		return NULL;
	tm_blob *d = tm_blob_decompress(f, codec, &err);
	tm_blob_unref(f);
	return d;
}

static void test_gzip_concatenated(void)
{
	if (sh("printf '{\"perfetto_manifest\":{}}' > m.json && printf '[{\"ph\":\"X\"}]' > j.json && "
	       "gzip -c m.json > mj.gz && gzip -c j.json >> mj.gz") != 0)
		SKIP("gzip failed");
	static const char want[] = "{\"perfetto_manifest\":{}}[{\"ph\":\"X\"}]";
	tm_blob *d = decompress_file("mj.gz", TM_CODEC_GZIP);
	tm_error err = {0};
	CHECK_INT(tm_blob_size(d), -1);
	char head[5];
	CHECK_INT(tm_blob_head(d, head, 5, &err), 5);
	CHECK(memcmp(head, want, 5) == 0);
	CHECK_INT(tm_blob_size(d), -1);
	CHECK(blob_equals(d, want, sizeof want - 1)); /* RFC 1952: one stream */
	CHECK_INT(tm_blob_size(d), sizeof want - 1);
	CHECK_INT(tm_blob_measure(d, &err), sizeof want - 1);
	tm_blob_unref(d);

	/* zlib framing, and a zlib member after a gzip one */
	size_t zn = compressBound(5) + 16;
	unsigned char *zb = malloc(zn);
	uLongf zlen = zn;
	compress(zb, &zlen, (const Bytef *)"hello", 5);
	size_t gn;
	unsigned char *g = read_file("mj.gz", &gn);
	tm_buf mix = {0};
	tm_buf_put(&mix, g, gn);
	tm_buf_put(&mix, zb, zlen);
	tm_blob *src = tm_blob_open_memory(mix.data, mix.len);
	d = tm_blob_decompress(src, TM_CODEC_GZIP, &err);
	tm_blob_unref(src);
	char want2[100];
	snprintf(want2, sizeof want2, "%shello", want);
	CHECK(blob_equals(d, want2, strlen(want2)));
	tm_blob_unref(d);

	/* formats.md §2.3 errors: cut inside a member; trailing garbage */
	src = tm_blob_open_memory(mix.data, mix.len - 3);
	d = tm_blob_decompress(src, TM_CODEC_GZIP, &err);
	tm_blob_unref(src);
	CHECK_INT(tm_blob_measure(d, &err), -1);
	CHECK_STR(msg_of(&err), "Compressed stream incomplete, trace is likely corrupt (ERR:tp-corrupt)");
	tm_blob_unref(d);
	tm_buf_put(&mix, "garbage!", 8);
	src = tm_blob_open_memory(mix.data, mix.len);
	d = tm_blob_decompress(src, TM_CODEC_GZIP, &err);
	tm_blob_unref(src);
	CHECK_INT(tm_blob_measure(d, &err), -1);
	CHECK_STR(msg_of(&err), "Failed to decompress trace chunk (ERR:tp-corrupt)");
	/* the good prefix is still readable through a cursor */
	CHECK_INT(tm_blob_head(d, head, 5, &err), 5);
	tm_blob_unref(d);
	/* one stray byte that could start a header: incomplete */
	mix.len -= 8;
	tm_buf_put(&mix, "\x1f", 1);
	src = tm_blob_open_memory(mix.data, mix.len);
	d = tm_blob_decompress(src, TM_CODEC_GZIP, &err);
	tm_blob_unref(src);
	CHECK_INT(tm_blob_measure(d, &err), -1);
	CHECK_STR(msg_of(&err), "Compressed stream incomplete, trace is likely corrupt (ERR:tp-corrupt)");
	tm_blob_unref(d);
	tm_buf_free(&mix);
	free(g);
	free(zb);
}

static void test_ctrace(void)
{
	/* formats.md §2.3: everything up to and including "TRACE:\n" is dropped */
	static const char text[] = "# tracer: nop\n  app-100 [001] ...1  1.000000: tracing_mark_write: B|100|s\n";
	uLongf zlen = compressBound(sizeof text) + 16;
	unsigned char *zb = malloc(zlen);
	compress(zb, &zlen, (const Bytef *)text, sizeof text - 1);
	tm_buf in = {0};
	tm_buf_puts(&in, "capturing trace... done\nTRACE:\n");
	tm_buf_put(&in, zb, zlen);
	tm_error err = {0};
	for (int codec = 0; codec < 2; codec++) {
		tm_blob *src = tm_blob_open_memory(in.data, in.len);
		tm_blob *d = tm_blob_decompress(src, codec ? TM_CODEC_GZIP : TM_CODEC_CTRACE, &err);
		tm_blob_unref(src);
		CHECK(blob_equals(d, text, sizeof text - 1));
		CHECK_INT(tm_blob_measure(d, &err), sizeof text - 1);
		tm_blob_unref(d);
	}
	/* nothing after the marker: an empty stream */
	tm_blob *src = tm_blob_open_memory("TRACE:\n", 7);
	tm_blob *d = tm_blob_decompress(src, TM_CODEC_CTRACE, &err);
	tm_blob_unref(src);
	CHECK_INT(tm_blob_measure(d, &err), 0);
	tm_blob_unref(d);
	tm_buf_free(&in);
	free(zb);
}

typedef struct codec_case {
	const char *tool, *ext;
	tm_codec codec;
} codec_case;

static const codec_case codecs[] = {
	{"gzip -c", "gz", TM_CODEC_GZIP},
	{"bzip2 -c", "bz2", TM_CODEC_BZIP2},
	{"xz -c", "xz", TM_CODEC_XZ},
	{"zstd -q -c", "zst", TM_CODEC_ZSTD},
};

static void test_compressed_tars(void)
{
	static unsigned char text[400000], rnd[30000];
	gen_text(text, sizeof text, 4);
	gen_random(rnd, sizeof rnd, 5);
	write_file("ct_text.txt", text, sizeof text);
	write_file("ct_rnd.bin", rnd, sizeof rnd);
	write_file("ct_one.json", "[{}]", 4);
	if (sh("tar -cf ct.tar ct_text.txt ct_one.json ct_rnd.bin") != 0)
		SKIP("tar failed");
	for (size_t k = 0; k < sizeof codecs / sizeof codecs[0]; k++) {
		char name[64];
		snprintf(name, sizeof name, "ct.tar.%s", codecs[k].ext);
		if (sh("%s ct.tar > %s", codecs[k].tool, name) != 0)
			SKIP("%s failed", codecs[k].tool);
		tm_blob *d = decompress_file(name, codecs[k].codec);
		tm_listing l = {0};
		tm_error err = {0};
		CHECK_INT(tm_tar_list(d, &l, &err), 0);
		size_t tar_n;
		unsigned char *tar = read_file("ct.tar", &tar_n);
		CHECK_INT(tm_blob_size(d), tar_n); /* listing decodes to the end */
		free(tar);
		CHECK_INT(l.n, 3);
		CHECK_STR(l.entries[0].name, "ct_text.txt");
		CHECK_STR(l.entries[1].name, "ct_one.json");
		CHECK_STR(l.entries[2].name, "ct_rnd.bin");
		/* members read in reverse order force backward seeks */
		CHECK(blob_equals(l.entries[2].blob, rnd, sizeof rnd));
		CHECK(blob_equals(l.entries[1].blob, "[{}]", 4));
		CHECK(blob_equals(l.entries[0].blob, text, sizeof text));
		unsigned char head[512];
		CHECK_INT(tm_blob_head(l.entries[0].blob, head, sizeof head, &err), 512);
		CHECK(memcmp(head, text, 512) == 0);

		/* reads across member boundaries of the inner stream */
		tm_cursor *c = tm_cursor_open(d, &err);
		unsigned char buf[3000];
		CHECK_INT(tm_cursor_pread(c, buf, sizeof buf, 512 + sizeof text - 1000, &err), 3000);
		CHECK(memcmp(buf, text + sizeof text - 1000, 1000) == 0);
		CHECK_INT(tm_cursor_pread(c, buf, 100, 600, &err), 100);
		CHECK(memcmp(buf, text + 88, 100) == 0);
		tm_cursor_close(c);
		tm_listing_free(&l);
		tm_blob_unref(d);

		/* truncated and corrupt streams fail with the reference's texts */
		size_t n;
		unsigned char *comp = read_file(name, &n);
		tm_blob *src = tm_blob_open_memory(comp, n - 20);
		d = tm_blob_decompress(src, codecs[k].codec, &err);
		tm_blob_unref(src);
		CHECK_INT(tm_tar_list(d, &l, &err), -1);
		CHECK_INT(l.n, 0);
		if (strcmp(err.msg, "Compressed stream incomplete, trace is likely corrupt (ERR:tp-corrupt)") != 0)
			fprintf(stderr, "%s truncated: %s\n", codecs[k].ext, err.msg);
		CHECK_STR(msg_of(&err), "Compressed stream incomplete, trace is likely corrupt (ERR:tp-corrupt)");
		tm_blob_unref(d);
		for (size_t i = n / 3; i < n / 3 + 64; i++)
			comp[i] ^= 0x55;
		src = tm_blob_open_memory(comp, n);
		d = tm_blob_decompress(src, codecs[k].codec, &err);
		tm_blob_unref(src);
		CHECK_INT(tm_blob_measure(d, &err), -1);
		if (strcmp(err.msg, "Failed to decompress trace chunk (ERR:tp-corrupt)") != 0)
			fprintf(stderr, "%s corrupt: %s\n", codecs[k].ext, err.msg);
		CHECK_STR(msg_of(&err), "Failed to decompress trace chunk (ERR:tp-corrupt)");
		tm_blob_unref(d);
		free(comp);
	}
}

static void test_codec_mismatch(void)
{
	/* data that is not of the codec is corrupt, not passed through */
	tm_error err = {0};
	for (size_t k = 1; k < sizeof codecs / sizeof codecs[0]; k++) {
		tm_blob *src = tm_blob_open_memory("plain text, not compressed", 26);
		tm_blob *d = tm_blob_decompress(src, codecs[k].codec, &err);
		tm_blob_unref(src);
		CHECK_INT(tm_blob_measure(d, &err), -1);
		CHECK_STR(msg_of(&err), "Failed to decompress trace chunk (ERR:tp-corrupt)");
		tm_blob_unref(d);
	}
	/* concatenated frames/streams are one stream for every codec */
	if (sh("printf ab > ab1 && printf cd > ab2") != 0)
		SKIP("sh failed");
	for (size_t k = 0; k < sizeof codecs / sizeof codecs[0]; k++) {
		char name[32];
		snprintf(name, sizeof name, "abcd.%s", codecs[k].ext);
		if (sh("%s ab1 > %s && %s ab2 >> %s", codecs[k].tool, name, codecs[k].tool, name) != 0)
			SKIP("%s failed", codecs[k].tool);
		tm_blob *d = decompress_file(name, codecs[k].codec);
		CHECK(blob_equals(d, "abcd", 4));
		tm_blob_unref(d);
	}
}

/* ---- gzip checkpoints ------------------------------------------------------------ */

#define BIG ((size_t)40 << 20)

typedef struct reader_arg {
	tm_blob *blob;
	const unsigned char *want;
	uint32_t seed;
	int ok;
} reader_arg;

static void *random_reader(void *p)
{
	reader_arg *a = p;
	tm_error err = {0};
	tm_cursor *c = tm_cursor_open(a->blob, &err);
	unsigned char *buf = malloc(70000);
	uint32_t s = a->seed;
	a->ok = 1;
	for (int i = 0; i < 12 && a->ok; i++) {
		s = s * 1103515245u + 12345u;
		uint64_t off = ((uint64_t)s << 8) % BIG;
		size_t n = 1 + s % 70000;
		size_t want = BIG - off < n ? BIG - off : n;
		ssize_t r = tm_cursor_pread(c, buf, n, off, &err);
		a->ok = r == (ssize_t)want && memcmp(buf, a->want + off, want) == 0;
	}
	free(buf);
	tm_cursor_close(c);
	return NULL;
}

static void test_checkpoints(void)
{
	/* 40 MB in seven gzip members (checkpoints fall inside members and
	 * resumed decoding crosses member trailers), > 3 checkpoints long;
	 * then the same text as a deflated ZIP member */
	unsigned char *text = malloc(BIG);
	gen_text(text, BIG, 11);
	write_file("big.txt", text, BIG);
	if (sh("split -b 6000000 -d big.txt bigpart. && for f in bigpart.*; do gzip -1 -c $f >> big.gz; done") != 0) {
		free(text);
		SKIP("gzip failed");
	}
	tm_error err = {0};
	tm_blob *f = tm_blob_open_path(path_of("big.gz"), &err);
	tm_blob *d = tm_blob_decompress(f, TM_CODEC_GZIP, &err);
	CHECK_INT(tm_blob_measure(d, &err), BIG);
	CHECK_INT(tm_blob_size(d), BIG);

	/* random access, compared with the original bytes */
	tm_cursor *c = tm_cursor_open(d, &err);
	static const uint64_t offs[] = {35u << 20, 1000, 17000000, 16999999, 8u << 20, (8u << 20) - 1, BIG - 10,
					6000000 - 5, 24000000 - 3, 0};
	unsigned char buf[20000];
	for (size_t k = 0; k < sizeof offs / sizeof offs[0]; k++) {
		size_t want = BIG - offs[k] < sizeof buf ? BIG - offs[k] : sizeof buf;
		ssize_t r = tm_cursor_pread(c, buf, sizeof buf, offs[k], &err);
		CHECK_INT(r, want);
		CHECK(memcmp(buf, text + offs[k], want) == 0);
	}
	tm_cursor_close(c);

	/* several threads on the one blob */
	pthread_t th[4];
	reader_arg args[4];
	for (int i = 0; i < 4; i++) {
		args[i] = (reader_arg){.blob = d, .want = text, .seed = (uint32_t)i * 77 + 1};
		pthread_create(&th[i], NULL, random_reader, &args[i]);
	}
	for (int i = 0; i < 4; i++) {
		pthread_join(th[i], NULL);
		CHECK(args[i].ok);
	}

	/* Proof that reads resume from checkpoints: spoil the first megabyte
	 * of the compressed file (its gzip header included); a read far in
	 * still works, one near the start fails. */
	int fd = open(path_of("big.gz"), O_WRONLY);
	static unsigned char junk[1 << 20];
	memset(junk, 0xa5, sizeof junk);
	CHECK_INT(pwrite(fd, junk, sizeof junk, 0), sizeof junk);
	close(fd);
	c = tm_cursor_open(d, &err);
	CHECK_INT(tm_cursor_pread(c, buf, 1000, 30000000, &err), 1000);
	CHECK(memcmp(buf, text + 30000000, 1000) == 0);
	CHECK_INT(tm_cursor_pread(c, buf, sizeof buf, 100000, &err), -1);
	CHECK_STR(msg_of(&err), "Failed to decompress trace chunk (ERR:tp-corrupt)");
	tm_cursor_close(c);
	tm_blob_unref(d);
	tm_blob_unref(f);

	/* a large deflated ZIP member has an index too */
	if (sh("zip -q -1 big.zip big.txt") != 0) {
		free(text);
		SKIP("zip failed");
	}
	f = tm_blob_open_path(path_of("big.zip"), &err);
	tm_listing l = {0};
	CHECK_INT(tm_zip_list(f, &l, &err), 0);
	CHECK_INT(l.n, 1);
	CHECK(blob_equals(l.entries[0].blob, text, BIG)); /* the first pass checks the CRC */
	c = tm_cursor_open(l.entries[0].blob, &err);
	for (size_t k = 0; k < sizeof offs / sizeof offs[0]; k++) {
		size_t want = BIG - offs[k] < sizeof buf ? BIG - offs[k] : sizeof buf;
		ssize_t r = tm_cursor_pread(c, buf, sizeof buf, offs[k], &err);
		CHECK_INT(r, want);
		CHECK(memcmp(buf, text + offs[k], want) == 0);
	}
	tm_cursor_close(c);
	fd = open(path_of("big.zip"), O_WRONLY);
	CHECK_INT(pwrite(fd, junk, 100000, 1000), 100000);
	close(fd);
	c = tm_cursor_open(l.entries[0].blob, &err);
	CHECK_INT(tm_cursor_pread(c, buf, 1000, 30000000, &err), 1000);
	CHECK(memcmp(buf, text + 30000000, 1000) == 0);
	CHECK_INT(tm_cursor_pread(c, buf, 10, BIG - 10, &err), 10); /* resumed: no CRC to check at the end */
	CHECK(memcmp(buf, text + BIG - 10, 10) == 0);
	tm_cursor_close(c);
	tm_listing_free(&l);
	tm_blob_unref(f);
	free(text);
}

static void test_nested_member_stream(void)
{
	/* a .gz member inside a tar.gz: a stream over a range over a stream */
	static unsigned char text[200000];
	gen_text(text, sizeof text, 12);
	write_file("inner.txt", text, sizeof text);
	if (sh("gzip -c inner.txt > inner.txt.gz && tar -cf nest.tar inner.txt.gz && gzip -c nest.tar > nest.tar.gz") !=
	    0)
		SKIP("tools failed");
	tm_blob *outer = decompress_file("nest.tar.gz", TM_CODEC_GZIP);
	tm_listing l = {0};
	tm_error err = {0};
	CHECK_INT(tm_tar_list(outer, &l, &err), 0);
	CHECK_INT(l.n, 1);
	tm_blob *inner = tm_blob_decompress(l.entries[0].blob, TM_CODEC_GZIP, &err);
	CHECK(blob_equals(inner, text, sizeof text));
	CHECK_INT(tm_blob_size(inner), sizeof text);
	tm_blob_unref(inner);
	tm_listing_free(&l);
	tm_blob_unref(outer);
}

int main(void)
{
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 1;
	}
	TT_RUN(test_hidden_names);
	TT_RUN(test_file_blob);
	TT_RUN(test_loose_head_hash);
	TT_RUN(test_loose_opened_by_lister);
	TT_RUN(test_file_blob_window);
	TT_RUN(test_file_blob_two_runs);
	TT_RUN(test_memory_blob);
	TT_RUN(test_zip_tools);
	TT_RUN(test_zip_streamed_descriptor);
	TT_RUN(test_zip_local_order_and_descriptors);
	TT_RUN(test_zip_directory_entry);
	TT_RUN(test_zip64);
	TT_RUN(test_zip_errors);
	TT_RUN(test_zip_member_checks);
	TT_RUN(test_zip_many_members);
	TT_RUN(test_tar_formats);
	TT_RUN(test_tar_handmade);
	TT_RUN(test_tar_errors);
	TT_RUN(test_gzip_concatenated);
	TT_RUN(test_ctrace);
	TT_RUN(test_compressed_tars);
	TT_RUN(test_codec_mismatch);
	TT_RUN(test_checkpoints);
	TT_RUN(test_nested_member_stream);
	char cmd[1100];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", tmpdir);
	TT_DONE();
}
