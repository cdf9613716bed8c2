/* core/session/pack.c - writing a several-inputs session as one archive with
 * libarchive, and the dry run's drop report. */
#include "session/pack.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "container/la.h"
#include "manifest/manifest.h"
#include "export/render.h"

#define COPY_CHUNK ((size_t)1 << 20)

tm_pack_format tm_pack_format_of(const char *name)
{
	static const struct {
		const char *suffix;
		tm_pack_format fmt;
	} suffixes[] = {
		{".tar.gz", TM_PACK_TGZ},
		{".tgz", TM_PACK_TGZ},
		{".tar", TM_PACK_TAR},
		{".zip", TM_PACK_ZIP},
	};
	size_t len = strlen(name);
	for (size_t i = 0; i < sizeof suffixes / sizeof suffixes[0]; i++) {
		size_t n = strlen(suffixes[i].suffix);
		if (len > n && strcasecmp(name + len - n, suffixes[i].suffix) == 0)
			return suffixes[i].fmt;
	}
	return TM_PACK_NONE;
}

static int names_file(const tm_merge *m, const tm_mf_str *path)
{
	for (size_t i = 0; i < m->n_files; i++) {
		const char *n = m->files[i].name;
		if (n && strlen(n) == path->len && memcmp(n, path->s, path->len) == 0)
			return 1;
	}
	return 0;
}

int tm_pack_check_paths(const tm_merge *m, tm_error *err)
{
	if (!m->manifest)
		return 0;
	for (size_t i = 0; i < m->manifest->n_files; i++) {
		const tm_mf_str *p = &m->manifest->files[i].path;
		if (!names_file(m, p))
			return tm_err(err, TM_EARGS, "the manifest's files[].path '%s' names no input", p->s);
	}
	return 0;
}

static int archive_fail(const tm_la *la, struct archive *a, const char *what, tm_error *err)
{
	const char *why = la->archive_error_string(a);
	return tm_err(err, TM_EIO, "%s: %s", what, why ? why : "cannot write the archive");
}

/* One member: header, then its bytes through a cursor. */
static int write_member(const tm_la *la, struct archive *a, const tm_entry *e, char *buf, tm_error *err)
{
	struct archive_entry *ae = la->archive_entry_new();
	la->archive_entry_copy_pathname(ae, e->name);
	la->archive_entry_set_filetype(ae, AE_IFREG);
	la->archive_entry_set_perm(ae, e->mode & 0777 ? e->mode & 0777 : 0644);
	la->archive_entry_set_size(ae, (la_int64_t)e->size);
	la->archive_entry_set_mtime(ae, (time_t)e->mtime, 0);
	int rc = la->archive_write_header(a, ae);
	la->archive_entry_free(ae);
	if (rc < ARCHIVE_WARN)
		return archive_fail(la, a, e->name, err);
	tm_cursor *c = tm_cursor_open(e->blob, err);
	if (!c)
		return -1;
	uint64_t done = 0;
	while (done < e->size) {
		ssize_t n = tm_cursor_pread(c, buf, COPY_CHUNK, done, err);
		if (n < 0) {
			tm_cursor_close(c);
			return -1;
		}
		if (n == 0) {
			tm_cursor_close(c);
			return tm_err(err, TM_EIO, "%s: file is shorter than when it was listed", e->name);
		}
		if (la->archive_write_data(a, buf, (size_t)n) != n) {
			tm_cursor_close(c);
			return archive_fail(la, a, e->name, err);
		}
		done += (uint64_t)n;
	}
	tm_cursor_close(c);
	if (la->archive_write_finish_entry(a) < ARCHIVE_WARN)
		return archive_fail(la, a, e->name, err);
	return 0;
}

int tm_pack_write(const tm_merge *m, int fd, tm_pack_format fmt, size_t *members, tm_error *err)
{
	if (!m->inputs)
		return tm_err(err, TM_EARGS, "only a session of inputs can be packed");
	const tm_la *la = tm_la_get(err);
	if (!la)
		return -1;
	struct archive *a = la->archive_write_new();
	int rc = fmt == TM_PACK_ZIP ? la->archive_write_set_format_zip(a) : la->archive_write_set_format_gnutar(a);
	if (rc == ARCHIVE_OK && fmt == TM_PACK_TGZ)
		rc = la->archive_write_add_filter_gzip(a);
	/* libarchive pads the last block of a file to 10 KiB by default, which
	 * a TAR reader does not need; a ZIP it must not pad at all. */
	if (rc == ARCHIVE_OK)
		rc = la->archive_write_set_bytes_in_last_block(a, 1);
	if (rc == ARCHIVE_OK)
		rc = la->archive_write_open_fd(a, fd);
	if (rc != ARCHIVE_OK) {
		archive_fail(la, a, "archive", err);
		la->archive_write_free(a);
		return -1;
	}
	char *buf = tm_xmalloc(COPY_CHUNK);
	size_t n = 0;
	rc = 0;
	for (size_t i = 0; rc == 0 && i < m->n_members; i++) {
		const tm_entry *e = &m->members[i].entry;
		if (e->kind != TM_ENTRY_FILE || !e->blob)
			continue;
		rc = write_member(la, a, e, buf, err);
		n += rc == 0;
	}
	free(buf);
	if (rc == 0 && la->archive_write_close(a) != ARCHIVE_OK)
		rc = archive_fail(la, a, "archive", err);
	la->archive_write_free(a);
	if (members)
		*members = n;
	return rc;
}

/* Stats that count events (or packets) the merge lost; the others are
 * notes (a display unit, a sequence-less default, a clock snapshot the
 * graph refused, mixed clock sources, a file found unrelatable once). */
static const unsigned char counts_drops[TM_STAT_COUNT] = {
	[TM_STAT_NEGATIVE_TS] = 1,
	[TM_STAT_TRACK_EVENT_INVALID_TS] = 1,
	[TM_STAT_UNKNOWN_SOURCE] = 1,
	[TM_STAT_UNKNOWN_TARGET] = 1,
	[TM_STAT_NO_PATH] = 1,
	[TM_STAT_UNDEFERRABLE_LOSS] = 1,
	[TM_STAT_JSON_TOKENIZER_FAILURE] = 1,
	[TM_STAT_JSON_PARSER_FAILURE] = 1,
	[TM_STAT_SYSTRACE_PARSE_FAILURE] = 1,
	[TM_STAT_SEQ_NEEDS_INCREMENTAL] = 1,
	[TM_STAT_FTRACE_BUNDLE_ERRORS] = 1,
	[TM_STAT_FTRACE_MISSING_EVENT_ID] = 1,
	[TM_STAT_COMPACT_SCHED_ERRORS] = 1,
	[TM_STAT_TRACK_EVENT_NO_SEQ] = 1,
};

static void drop_line(tm_buf *out, uint64_t n, const char *file, const char *reason)
{
	tm_buf_printf(out, "%" PRIu64 " event%s of %s dropped%s%s\n", n, n == 1 ? "" : "s", file, reason ? ": " : "",
		      reason ? reason : "");
}

uint64_t tm_pack_drops(const tm_merge *m, const tm_scan *s, tm_buf *out)
{
	uint64_t total = 0;
	for (size_t i = 0; i < s->n_files && i < m->n_files; i++) {
		const tm_scan_file *sf = &s->files[i];
		const tm_file *f = &m->files[i];
		if (!sf->scanned)
			continue;
		tm_buf name = {0};
		tm_render_file_label(m, f, &name);
		uint64_t listed = 0;
		for (int k = 0; k < TM_STAT_COUNT; k++) {
			if (!counts_drops[k] || !tm_scan_file_drops(sf, (tm_stat)k))
				continue;
			drop_line(out, tm_scan_file_drops(sf, (tm_stat)k), name.data, tm_stat_names[k]);
			listed += tm_scan_file_drops(sf, (tm_stat)k);
		}
		/* Events lost to a conversion retried quietly carry no stat. */
		if (sf->dropped > listed)
			drop_line(out, sf->dropped - listed, name.data, NULL);
		total += sf->dropped > listed ? sf->dropped : listed;
		tm_buf_free(&name);
	}
	return total;
}
