/* core/session/pack.h - `tracemount pack` (issue 11): write the members of a
 * several-inputs session (merge.h, tm_merge_open_inputs) as one ZIP, TAR or
 * tar.gz, and report what the merge of the written archive drops.
 *
 * The archive holds exactly the session's top-level members, in listing
 * order (a manifest file first, as perfetto_manifest.json), each with its
 * bytes unchanged, so that mounting it gives the session's merge: the same
 * file ids, processing order and events. ZIP members are deflated; TARs are
 * written in GNU format, whose long names the reference reads (a PAX `path`
 * it ignores, formats.md §2.2).
 */
#ifndef TM_PACK_H
#define TM_PACK_H

#include <stdint.h>

#include "input/merge.h"
#include "scan/scan.h"
#include "util/tm.h"

typedef enum tm_pack_format {
	TM_PACK_NONE = -1,
	TM_PACK_ZIP,
	TM_PACK_TAR,
	TM_PACK_TGZ, /* a TAR in a gzip stream */
} tm_pack_format;

/* The format an output name asks for by its suffix: .zip, .tar, .tar.gz or
 * .tgz (case-insensitive); TM_PACK_NONE for anything else. */
tm_pack_format tm_pack_format_of(const char *name);

/* Issue 11: every manifest files[].path must name a file of the session (a
 * member, or a member of an archive among them, or "" for a stream inside a
 * compressed one). TM_EARGS "the manifest's files[].path '<p>' names no
 * input" for the first that does not. 0 without a manifest. */
int tm_pack_check_paths(const tm_merge *m, tm_error *err);

/* Write the session's members to `fd` (positioned at its start) in format
 * `fmt`. *members (may be NULL) gets the number written. Errors: TM_EIO
 * with libarchive's or the reader's reason. `m` must be a several-inputs
 * session (m->inputs set). */
int tm_pack_write(const tm_merge *m, int fd, tm_pack_format fmt, size_t *members, tm_error *err);

/* The dry run's report: one line per file and reason with drops,
 * "<N> events of <file> dropped: <stat name>", in file-id order. Returns the
 * total dropped. */
uint64_t tm_pack_drops(const tm_merge *m, const tm_scan *s, tm_buf *out);

#endif
