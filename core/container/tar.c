/* core/container/tar.c - listing a TAR container (spec/formats.md §2.2).
 *
 * The 512-byte headers are parsed here rather than by libarchive because
 * the reference names members from the ustar fields and a GNU `L` long
 * name only: PAX `path` records are ignored for naming (spec S44), which
 * libarchive would apply. The walk mirrors the reference state machine,
 * including its quirks (a directory header is skipped before any other
 * check and does not consume a pending long name; a single zero block is
 * not the end). Divergence, documented (spec S45): the reference aborts on
 * a symlink, hard link, device or FIFO header; we list it with its kind and
 * the merge skips it.
 */
#include "container/archive_internal.h"

#include <stdlib.h>
#include <string.h>

#include "util/ser.h"

#define BLOCK 512u
/* A GNU long name or a PAX header larger than this is only partly read:
 * names and paths are never that long, and hostile sizes must not drive
 * allocations. The walk still skips the whole payload. */
#define MAX_META ((uint64_t)1 << 20)

/* ustar header layout (POSIX.1-1988) */
enum {
	F_NAME = 0, L_NAME = 100,
	F_MODE = 100, L_MODE = 8,
	F_SIZE = 124, L_SIZE = 12,
	F_MTIME = 136, L_MTIME = 12,
	F_TYPE = 156,
	F_LINK = 157, L_LINK = 100,
	F_MAGIC = 257,
	F_VERSION = 263,
	F_PREFIX = 345, L_PREFIX = 155,
};

static const char MAGIC_USTAR[6] = {'u', 's', 't', 'a', 'r', '\0'};
static const char MAGIC_GNU[8] = {'u', 's', 't', 'a', 'r', ' ', ' ', '\0'};

/* Type flags that have content the walk reads or skips; any other type
 * must have size 0 (formats.md §2.2). */
enum {
	T_REGULAR = '0',
	T_AREGULAR = '\0',
	T_HARDLINK = '1',
	T_SYMLINK = '2',
	T_DIR = '5',
	T_GNU_LONGNAME = 'L',
	T_PAX = 'x',
	T_PAX_GLOBAL = 'g',
};

static char *field_str(const unsigned char *h, size_t off, size_t len)
{
	const unsigned char *nul = memchr(h + off, 0, len);
	return tm_xstrndup((const char *)h + off, nul ? (size_t)(nul - (h + off)) : len);
}

/* The member name from the header: prefix "/" name when prefix is set. */
static char *ustar_name(const unsigned char *h)
{
	char *name = field_str(h, F_NAME, L_NAME), *prefix = field_str(h, F_PREFIX, L_PREFIX);
	if (!*prefix) {
		free(prefix);
		return name;
	}
	tm_buf b = {0};
	tm_buf_printf(&b, "%s/%s", prefix, name);
	free(prefix);
	free(name);
	return tm_buf_detach(&b, NULL);
}

/* The reference's size field rules: NUL first byte is an error; bit 7 set
 * means base-256 (bit 6 = negative, rejected; the rest of the first byte
 * is ignored; at most 8 significant bytes); else octal with leading spaces,
 * ending at NUL or space. */
static int parse_size(const unsigned char *f, uint64_t *out, tm_error *err)
{
	static const char prefix[] = "Failed to parse size field: ";
	if (f[0] == 0)
		return tm_err(err, TM_EINPUT, "%sSize field is empty or zero.", prefix);
	uint64_t v = 0;
	if (f[0] & 0x80) {
		if (f[0] & 0x40)
			return tm_err(err, TM_EINPUT, "%sNegative size in base-256 encoding is not supported.", prefix);
		size_t i = 1;
		while (i < L_SIZE && f[i] == 0)
			i++;
		if (L_SIZE - i > sizeof(uint64_t))
			return tm_err(err, TM_EINPUT, "%sBase-256 value exceeds uint64_t range.", prefix);
		for (; i < L_SIZE; i++)
			v = v << 8 | f[i];
		*out = v;
		return 0;
	}
	size_t i = 0;
	while (i < L_SIZE && f[i] == ' ')
		i++;
	for (; i < L_SIZE && f[i] != 0 && f[i] != ' '; i++) {
		if (f[i] < '0' || f[i] > '7')
			return tm_err(err, TM_EINPUT, "%sInvalid octal digit in size field.", prefix);
		v = (v << 3) + (uint64_t)(f[i] - '0');
	}
	*out = v;
	return 0;
}

/* Display-only numbers (mode, mtime): lenient, 0 when unreadable. */
static uint64_t parse_number(const unsigned char *f, size_t len)
{
	uint64_t v = 0;
	if (f[0] & 0x80) {
		for (size_t i = 1; i < len; i++)
			v = v << 8 | f[i];
		return f[0] & 0x40 ? 0 : v;
	}
	size_t i = 0;
	while (i < len && f[i] == ' ')
		i++;
	for (; i < len && f[i] >= '0' && f[i] <= '7'; i++)
		v = (v << 3) + (uint64_t)(f[i] - '0');
	return v;
}

static int all_zero(const unsigned char *h)
{
	for (size_t i = 0; i < BLOCK; i++)
		if (h[i])
			return 0;
	return 1;
}

/* The PAX `path` record of an extended header ("LEN path=VALUE\n"), kept
 * for display only; NULL if there is none. */
static char *pax_path(const unsigned char *p, size_t n)
{
	static const char key[] = "path=";
	char *path = NULL;
	size_t i = 0;
	while (i < n) {
		size_t len = 0, j = i;
		while (j < n && p[j] >= '0' && p[j] <= '9' && len < n)
			len = len * 10 + (size_t)(p[j++] - '0');
		if (j >= n || p[j] != ' ' || len <= j - i + 1 || len > n - i)
			break;
		const unsigned char *kv = p + j + 1, *end = p + i + len;
		if (end[-1] != '\n')
			break;
		size_t kvlen = (size_t)(end - 1 - kv);
		if (kvlen >= sizeof(key) - 1 && memcmp(kv, key, sizeof(key) - 1) == 0) {
			free(path);
			path = tm_xstrndup((const char *)kv + sizeof(key) - 1, kvlen - (sizeof(key) - 1));
		}
		i += len;
	}
	return path;
}

static tm_entry_kind kind_of(unsigned char type)
{
	switch (type) {
	case T_HARDLINK: return TM_ENTRY_HARDLINK;
	case T_SYMLINK: return TM_ENTRY_SYMLINK;
	default: return TM_ENTRY_OTHER;
	}
}

typedef struct tar_walk {
	tm_blob *tar;
	tm_cursor *c;
	tm_listing *out;
	size_t cap;
	uint64_t off;      /* next header */
	char *long_name;   /* pending GNU long name (the reference's optional string) */
	char *pax_path;    /* pending PAX path, display only */
	unsigned char *meta; /* MAX_META bytes, allocated when first needed */
} tar_walk;

static int premature(tm_error *err)
{
	return tm_err(err, TM_EINPUT, "Premature end of TAR file (ERR:tp-corrupt)");
}

/* Make sure a payload of `size` bytes (padded to the block size) is there:
 * the reference waits for all of it before going on. */
static int payload_present(tar_walk *w, uint64_t size, uint64_t *padded, tm_error *err)
{
	if (size > INT64_MAX - BLOCK)
		return premature(err);
	*padded = (size + BLOCK - 1) / BLOCK * BLOCK;
	if (*padded == 0)
		return 0;
	if (*padded > INT64_MAX - w->off)
		return premature(err);
	int64_t total = tm_blob_size(w->tar);
	if (total >= 0)
		return w->off + *padded <= (uint64_t)total ? 0 : premature(err);
	unsigned char last; /* a stream: decode through the payload */
	ssize_t r = tm_cursor_pread(w->c, &last, 1, w->off + *padded - 1, err);
	if (r < 0)
		return -1;
	return r == 1 ? 0 : premature(err);
}

/* The first min(size, MAX_META) payload bytes, for L and x headers. */
static ssize_t read_meta(tar_walk *w, uint64_t size, tm_error *err)
{
	if (!w->meta)
		w->meta = tm_xmalloc(MAX_META);
	size_t n = size < MAX_META ? (size_t)size : (size_t)MAX_META;
	ssize_t r = tm_read_full_(w->c, w->meta, n, w->off, err);
	if (r >= 0 && (size_t)r < n)
		return premature(err);
	return r;
}

static tm_entry *add_entry(tar_walk *w, const unsigned char *h, char *name, tm_entry_kind kind, uint64_t size,
			   uint64_t header_off)
{
	tm_entry *e = tm_listing_add_(w->out, &w->cap);
	e->name = name;
	e->kind = kind;
	e->size = size;
	e->offset = header_off;
	e->mode = (uint32_t)(parse_number(h + F_MODE, L_MODE) & 07777);
	uint64_t mtime = parse_number(h + F_MTIME, L_MTIME);
	e->mtime = mtime > INT64_MAX ? 0 : (int64_t)mtime;
	e->pax_path = w->pax_path;
	w->pax_path = NULL;
	if (kind == TM_ENTRY_SYMLINK || kind == TM_ENTRY_HARDLINK)
		e->link_target = field_str(h, F_LINK, L_LINK);
	return e;
}

/* One header at w->off. Returns 1 to go on, 0 at the end marker, -1. */
static int walk_header(tar_walk *w, int *zero_seen, tm_error *err)
{
	unsigned char h[BLOCK];
	uint64_t header_off = w->off;
	ssize_t r = tm_read_full_(w->c, h, BLOCK, w->off, err);
	if (r < 0)
		return -1;
	if (r < (ssize_t)BLOCK)
		return premature(err);
	w->off += BLOCK;
	w->out->dir_hash = tm_hash(w->out->dir_hash, h, BLOCK);

	int gnu = memcmp(h + F_MAGIC, MAGIC_GNU, sizeof(MAGIC_GNU)) == 0;
	int ustar = !gnu && memcmp(h + F_MAGIC, MAGIC_USTAR, sizeof(MAGIC_USTAR)) == 0;
	if (!gnu && !ustar) {
		if (!all_zero(h))
			return tm_err(err, TM_EINPUT, "Invalid magic value");
		/* two consecutive zero blocks end the archive */
		if (*zero_seen)
			return 0;
		*zero_seen = 1;
		return 1;
	}
	unsigned char type = h[F_TYPE];
	if (type == T_DIR) {
		/* Skipped by the reference before any other check; its pending
		 * long name stays for the next header. Listed for display. */
		char *name = w->long_name ? tm_xstrdup(w->long_name) : ustar_name(h);
		add_entry(w, h, name, TM_ENTRY_DIR, 0, header_off);
		return 1;
	}
	if (ustar && (h[F_VERSION] != '0' || h[F_VERSION + 1] != '0'))
		return tm_err(err, TM_EINPUT, "Invalid version: %c%c", h[F_VERSION], h[F_VERSION + 1]);
	uint64_t size = 0;
	if (parse_size(h + F_SIZE, &size, err) != 0)
		return -1;
	char *name = w->long_name ? w->long_name : ustar_name(h);
	w->long_name = NULL;
	*zero_seen = 0;

	uint64_t padded;
	ssize_t n;
	switch (type) {
	case T_REGULAR:
	case T_AREGULAR:
		if (payload_present(w, size, &padded, err) != 0)
			break;
		add_entry(w, h, name, TM_ENTRY_FILE, size, header_off)->blob = tm_blob_range_(w->tar, w->off, size);
		w->off += padded;
		return 1;
	case T_GNU_LONGNAME:
		free(name);
		if (payload_present(w, size, &padded, err) != 0 || (n = read_meta(w, size, err)) < 0)
			return -1;
		/* the reference keeps all `size` bytes; a C string ends at the NUL GNU tar writes */
		w->long_name = tm_xstrndup((const char *)w->meta, (size_t)n);
		w->out->dir_hash = tm_hash(w->out->dir_hash, w->meta, (size_t)n);
		w->off += padded;
		return 1;
	case T_PAX:
	case T_PAX_GLOBAL:
		/* formats.md §2.2: payload skipped; the `path` is kept for display */
		free(name);
		if (payload_present(w, size, &padded, err) != 0)
			return -1;
		if (type == T_PAX) {
			if ((n = read_meta(w, size, err)) < 0)
				return -1;
			free(w->pax_path);
			w->pax_path = pax_path(w->meta, (size_t)n);
		}
		w->off += padded;
		return 1;
	default:
		if (size != 0) {
			free(name);
			/* printed as the reference's signed char promoted to int */
			return tm_err(err, TM_EINPUT, "Unsupported file type: 0x%02x", (unsigned)(int)(signed char)type);
		}
		add_entry(w, h, name, kind_of(type), 0, header_off);
		return 1;
	}
	free(name);
	return -1;
}

int tm_tar_list(tm_blob *tar, tm_listing *out, tm_error *err)
{
	memset(out, 0, sizeof(*out));
	out->dir_hash = TM_HASH_INIT;
	tar_walk w = {.tar = tar, .out = out};
	if (!(w.c = tm_cursor_open(tar, err)))
		return -1;
	int zero_seen = 0, rc;
	while ((rc = walk_header(&w, &zero_seen, err)) > 0)
		;
	/* A stream is decoded to its end: its own errors come first in the
	 * reference (the decompressor checks before the TAR reader does), and
	 * its size becomes known. */
	if (rc == 0 && tm_blob_size(tar) < 0) {
		unsigned char *scratch = w.meta ? w.meta : tm_xmalloc(MAX_META);
		w.meta = scratch;
		ssize_t r;
		while ((r = tm_cursor_pread(w.c, scratch, MAX_META, w.off, err)) > 0)
			w.off += (uint64_t)r;
		if (r < 0)
			rc = -1;
	}
	free(w.long_name);
	free(w.pax_path);
	free(w.meta);
	tm_cursor_close(w.c);
	if (rc < 0) {
		tm_listing_free(out);
		return -1;
	}
	return 0;
}
