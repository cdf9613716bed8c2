/* core/session/index.c - the index cache's key, its place in the XDG cache, and its
 * file: read whole and checked, written atomically (core/session/index.h). */
#include "session/index.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "util/ser.h"

static const char MAGIC[8] = {'T', 'M', 'I', 'N', 'D', 'E', 'X', '\n'};
#define HEADER 16u                        /* magic, format, CRC-32 */
#define HEAD_HASHED ((size_t)1 << 20)     /* the first MiB of each file */
#define MAX_INDEX ((uint64_t)1 << 32)     /* a larger file is not believed */

/* ---- the key ----------------------------------------------------------- */

/* The key is bytes in the layout of core/util/ser.h (a tag byte, then varints
 * and length-prefixed strings), not text: a folder of 100,000 files keeps
 * a key of 100,000 file identities for the mount's life, 5 MB so where
 * their text took 11 (16 with a buffer's slack). */
enum { KEY_VERSION = 'v', KEY_BUILD = 'x', KEY_NO_BUILD = 'X', KEY_FILE = 'f', KEY_BYTES = 'b',
       KEY_MEMBER = 'm', KEY_LISTING = 'l' };

/* The running executable: a rebuilt tracemount may compute other results
 * under the same version number. */
static void key_build(tm_ser_out *key)
{
	struct stat st;
	if (stat("/proc/self/exe", &st) == 0) {
		tm_ser_u8(key, KEY_BUILD);
		tm_ser_u64(key, (uint64_t)st.st_dev);
		tm_ser_u64(key, (uint64_t)st.st_ino);
		tm_ser_i64(key, (int64_t)st.st_size);
		tm_ser_i64(key, (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec);
	} else {
		tm_ser_u8(key, KEY_NO_BUILD);
	}
}

/* One file's identity: where it is, how it was last changed, what it
 * starts with. A blob that is no host file (a manifest given apart, kept
 * in memory) is known by its whole content. */
static int key_blob(tm_ser_out *key, tm_blob *b)
{
	tm_host_file hf;
	int host = tm_blob_host_file(b, &hf) == 0;
	int64_t size = tm_blob_size(b);
	size_t want = HEAD_HASHED;
	if (!host && size >= 0)
		want = (size_t)size;
	uint64_t h;
	if (tm_blob_head_hash(b, want, &h, NULL) != 0)
		return -1;
	if (host) {
		tm_ser_u8(key, KEY_FILE);
		tm_ser_u64(key, hf.dev);
		tm_ser_u64(key, hf.ino);
		tm_ser_i64(key, hf.size);
		tm_ser_i64(key, hf.mtime_ns);
		tm_ser_i64(key, hf.ctime_ns);
	} else {
		tm_ser_u8(key, KEY_BYTES);
		tm_ser_i64(key, size);
	}
	tm_ser_u64(key, h);
	return 0;
}

int tm_index_key(const tm_merge *m, tm_buf *key)
{
	tm_ser_out o;
	tm_ser_out_init(&o, TM_SER_MEMORY);
	o.buf = *key;
	tm_ser_u8(&o, KEY_VERSION);
	tm_ser_str(&o, TM_VERSION);
	key_build(&o);
	int rc = 0;
	if (m->top) {
		rc = key_blob(&o, m->top);
	} else {
		/* Several inputs: the members they gave, by name, in order. */
		for (size_t i = 0; rc == 0 && i < m->n_members; i++) {
			const tm_entry *e = &m->members[i].entry;
			tm_ser_u8(&o, KEY_MEMBER);
			tm_ser_str(&o, e->name);
			if (e->blob)
				rc = key_blob(&o, e->blob);
		}
	}
	for (size_t i = 0; i < m->n_files; i++)
		if (m->files[i].dir_hash) {
			tm_ser_u8(&o, KEY_LISTING);
			tm_ser_u64(&o, i);
			tm_ser_u64(&o, m->files[i].dir_hash);
		}
	*key = o.buf;
	if (key->cap > key->len + 1) { /* kept as long as the mount: no slack */
		key->data = tm_xrealloc(key->data, key->len + 1);
		key->cap = key->len + 1;
	}
	return rc;
}

/* ---- where ------------------------------------------------------------- */

/* $XDG_CACHE_HOME (an absolute path, as the XDG spec wants), else
 * $HOME/.cache; then tracemount/. */
static char *cache_dir(void)
{
	const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
	tm_buf d = {0};
	if (xdg && xdg[0] == '/')
		tm_buf_printf(&d, "%s/tracemount", xdg);
	else if (home && home[0])
		tm_buf_printf(&d, "%s/.cache/tracemount", home);
	else
		return NULL;
	return tm_buf_detach(&d, NULL);
}

/* Make the directories above `path` that are missing (mode 0700: the
 * cache is the user's own). */
static void make_parents(const char *path)
{
	char *p = tm_xstrdup(path);
	for (char *s = strchr(p + 1, '/'); s; s = strchr(s + 1, '/')) {
		*s = '\0';
		(void)mkdir(p, 0700);
		*s = '/';
	}
	free(p);
}

static void hash_path(uint64_t *h, const char *path)
{
	char *abs = realpath(path, NULL);
	const char *p = abs ? abs : path;
	*h = tm_hash(*h, p, strlen(p) + 1);
	free(abs);
}

char *tm_index_default_path(const char *const *paths, size_t n, const char *manifest, int as_members)
{
	char *dir = cache_dir();
	if (!dir)
		return NULL;
	uint64_t h = tm_hash(TM_HASH_INIT, &as_members, sizeof as_members);
	for (size_t i = 0; i < n; i++)
		hash_path(&h, paths[i]);
	if (manifest) {
		h = tm_hash(h, "-o manifest=", 12);
		hash_path(&h, manifest);
	}
	/* The first input's name first, so that a user can tell the files
	 * apart, then the hash that keeps them apart. */
	tm_buf p = {0};
	tm_buf_printf(&p, "%s/", dir);
	const char *base = n ? strrchr(paths[0], '/') : NULL;
	base = n ? (base && base[1] ? base + 1 : paths[0]) : "";
	for (size_t i = 0; base[i] && i < 64; i++) {
		char c = base[i];
		int plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
			    c == '_' || c == '-';
		tm_buf_put(&p, plain ? &c : "_", 1);
	}
	tm_buf_printf(&p, "-%016" PRIx64 ".idx", h);
	free(dir);
	return tm_buf_detach(&p, NULL);
}

/* ---- the file ------------------------------------------------------------ */

/* A section read: where its payload lies in the file's bytes. */
typedef struct section_read {
	uint32_t kind;
	const void *data;
	size_t len;
} section_read;

struct tm_index {
	unsigned char *data; /* mapped, map bytes */
	size_t len, map;
	section_read *sec;
	size_t n_sec;
};

void tm_index_free(tm_index *ix)
{
	if (!ix)
		return;
	if (ix->data)
		munmap(ix->data, ix->map);
	free(ix->sec);
	free(ix);
}

const void *tm_index_find(const tm_index *ix, uint32_t kind, size_t *len)
{
	for (size_t i = 0; i < ix->n_sec; i++)
		if (ix->sec[i].kind == kind) {
			*len = ix->sec[i].len;
			return ix->sec[i].data;
		}
	return NULL;
}

static uint32_t le32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void put_le32(unsigned char *p, uint32_t v)
{
	for (int k = 0; k < 4; k++)
		p[k] = (unsigned char)(v >> (8 * k));
}

static char *reason(const char *fmt, const char *arg)
{
	tm_buf b = {0};
	tm_buf_printf(&b, fmt, arg);
	return tm_buf_detach(&b, NULL);
}

/* The whole file into an anonymous mapping of its own, *map bytes long,
 * so that a spending reader may give its pages back (core/util/ser.h); NULL
 * with errno. */
static unsigned char *slurp(const char *path, size_t *len, size_t *map)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	struct stat st;
	int e = fstat(fd, &st) != 0 ? errno : !S_ISREG(st.st_mode) ? EINVAL : (uint64_t)st.st_size > MAX_INDEX ? EFBIG : 0;
	if (e) {
		close(fd);
		errno = e;
		return NULL;
	}
	size_t n = (size_t)st.st_size, got = 0;
	*map = n ? n : 1;
	unsigned char *data = mmap(NULL, *map, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (data == MAP_FAILED) {
		e = errno;
		close(fd);
		errno = e;
		return NULL;
	}
	while (got < n) {
		ssize_t r = read(fd, data + got, n - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break; /* shrank while read: judged by its length below */
		got += (size_t)r;
	}
	close(fd);
	*len = got;
	return data;
}

tm_index *tm_index_read(const char *path, const tm_buf *key, char **why)
{
	*why = NULL;
	size_t len = 0;
	size_t map = 0;
	unsigned char *data = slurp(path, &len, &map);
	if (!data) {
		if (errno != ENOENT && errno != ENOTDIR) /* nothing there: a plain miss */
			*why = reason("%s", strerror(errno));
		return NULL;
	}
	tm_index *ix = tm_xcalloc(1, sizeof(*ix));
	ix->data = data;
	ix->len = len;
	ix->map = map;
	tm_ser_rd rd = tm_ser_reader(data + HEADER, len > HEADER ? len - HEADER : 0), *r = &rd;
	if (len < sizeof MAGIC || memcmp(data, MAGIC, sizeof MAGIC) != 0) {
		*why = reason("%s", len < sizeof MAGIC && memcmp(data, MAGIC, len) == 0 ? "truncated"
										   : "not a tracemount index");
		goto miss;
	}
	if (len < HEADER) {
		*why = reason("%s", "truncated");
		goto miss;
	}
	uint32_t format = le32(data + 8), crc = le32(data + 12);
	if (format != TM_INDEX_FORMAT) {
		char f[16];
		snprintf(f, sizeof f, "%" PRIu32, format);
		*why = reason("written in another format (%s) by another tracemount", f);
		goto miss;
	}
	if ((uint32_t)crc32(crc32(0, NULL, 0), data + HEADER, (uInt)(len - HEADER)) != crc) {
		*why = reason("%s", "checksum mismatch (damaged or truncated)");
		goto miss;
	}
	char *version = tm_ser_get_str(r);
	if (!r->bad && (!version || strcmp(version, TM_VERSION) != 0)) {
		*why = reason("written by tracemount %s", version ? version : "(unknown)");
		free(version);
		goto miss;
	}
	free(version);
	size_t klen;
	const void *k = tm_ser_get_bytes(r, &klen);
	if (r->bad) {
		*why = reason("%s", "truncated");
		goto miss;
	}
	if (klen != key->len || memcmp(k, key->data, klen) != 0)
		goto miss; /* other inputs, or these changed: a plain miss */
	size_t n = tm_ser_count(r, 2, 1u << 20);
	ix->sec = tm_xcalloc(n ? n : 1, sizeof(*ix->sec));
	for (size_t i = 0; i < n && !r->bad; i++) {
		section_read *s = &ix->sec[ix->n_sec++];
		s->kind = tm_ser_get_u32(r);
		s->data = tm_ser_get_bytes(r, &s->len);
	}
	if (!r->bad && r->left)
		tm_ser_fail(r, "bytes after the last section");
	if (r->bad) {
		*why = reason("%s", r->why);
		goto miss;
	}
	return ix;
miss:
	tm_index_free(ix);
	return NULL;
}

int tm_index_foreign(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	unsigned char head[sizeof MAGIC];
	ssize_t got = read(fd, head, sizeof head);
	close(fd);
	if (got <= 0)
		return 0;
	return memcmp(head, MAGIC, (size_t)got) != 0;
}

int tm_index_write(const char *path, const tm_buf *key, const tm_index_section *s, size_t n, tm_error *err)
{
	tm_buf tmp = {0};
	tm_buf_printf(&tmp, "%s.XXXXXX", path);
	int fd = mkostemp(tmp.data, O_CLOEXEC);
	if (fd < 0 && errno == ENOENT) { /* the cache directory is made on first use */
		make_parents(path);
		tm_buf_free(&tmp);
		tm_buf_printf(&tmp, "%s.XXXXXX", path);
		fd = mkostemp(tmp.data, O_CLOEXEC);
	}
	int e = fd < 0 ? errno : 0;
	unsigned char head[HEADER];
	memcpy(head, MAGIC, sizeof MAGIC);
	put_le32(head + 8, TM_INDEX_FORMAT);
	put_le32(head + 12, 0); /* the CRC, once the rest is written */
	if (!e && write(fd, head, sizeof head) != (ssize_t)sizeof head)
		e = errno ? errno : EIO;
	tm_ser_out out;
	tm_ser_out_init(&out, fd);
	tm_ser_str(&out, TM_VERSION);
	tm_ser_bytes(&out, key->data, key->len);
	tm_ser_u64(&out, n);
	for (size_t i = 0; !e && i < n; i++) {
		tm_ser_out count;
		tm_ser_out_init(&count, TM_SER_COUNT);
		s[i].save(s[i].obj, &count);
		tm_ser_flush(&count);
		tm_ser_out_free(&count);
		tm_ser_u32(&out, s[i].kind);
		tm_ser_u64(&out, count.total);
		s[i].save(s[i].obj, &out);
	}
	tm_ser_flush(&out);
	tm_ser_out_free(&out);
	if (!e && out.error)
		e = out.error;
	put_le32(head + 12, out.crc);
	if (!e && pwrite(fd, head + 12, 4, 12) != 4)
		e = errno ? errno : EIO;
	if (fd >= 0 && close(fd) != 0 && !e)
		e = errno;
	if (!e && rename(tmp.data, path) != 0)
		e = errno;
	if (e) {
		tm_err(err, TM_EIO, "%s", strerror(e));
		if (fd >= 0)
			unlink(tmp.data);
	}
	tm_buf_free(&tmp);
	return e ? -1 : 0;
}

/* ---- TM_INDEX_SIZES ----------------------------------------------------- */

void tm_index_sizes_save(const tm_index_size *e, size_t n, tm_ser_out *out)
{
	tm_ser_u64(out, n);
	for (size_t i = 0; i < n; i++) {
		tm_ser_u32(out, e[i].kind);
		tm_ser_u32(out, e[i].row);
		tm_ser_u64(out, e[i].size);
	}
}

int tm_index_sizes_load(const void *p, size_t len, tm_index_size **e, size_t *n, const char **why)
{
	tm_ser_rd r = tm_ser_reader(p, len);
	size_t count = tm_ser_count(&r, 3, SIZE_MAX);
	tm_index_size *v = r.bad || !count ? NULL : tm_xcalloc(count, sizeof(*v));
	for (size_t i = 0; i < count && !r.bad; i++) {
		v[i].kind = tm_ser_get_u32(&r);
		v[i].row = tm_ser_get_u32(&r);
		v[i].size = tm_ser_get_u64(&r);
	}
	if (!r.bad && r.left)
		tm_ser_fail(&r, "bytes after the sizes");
	if (r.bad) {
		free(v);
		*why = r.why;
		return -1;
	}
	*e = v;
	*n = count;
	return 0;
}
