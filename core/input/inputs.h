/* core/input/inputs.h - several inputs as the members of one archive (issue 11,
 * DESIGN.md "Inputs"): the listing that a virtual top-level archive holding
 * them would have, so that the merge walks it exactly as it walks a ZIP.
 *
 * In the order given: a trace file or an archive is one member named by its
 * base name; a directory contributes every regular file below it (symbolic
 * links followed), named by its path relative to the directory, sorted
 * byte-wise by that path. Entries whose name starts with '.' are not walked
 * at all: the merge would skip such a member of an archive anyway
 * (formats.md §2.5), and a `.git` folder is no place to look for traces.
 * Other special files (FIFOs, sockets, devices) inside a directory are
 * skipped too. A manifest file (-o manifest=FILE) comes first, named
 * TM_INPUTS_MANIFEST_NAME, as `tracemount pack` writes it.
 *
 * Of the inputs only directories are read here, and the head of an input
 * whose name clashes with the manifest's: members are loose blobs
 * (archive.h) read in place, one fd per reader. The manifest file is read
 * whole into memory (it is small, and may be a pipe).
 */
#ifndef TM_INPUTS_H
#define TM_INPUTS_H

#include <stddef.h>

#include "container/archive.h"
#include "util/tm.h"

/* The member name of a manifest given apart from the inputs. */
#define TM_INPUTS_MANIFEST_NAME "perfetto_manifest.json"

/* List `paths` (n >= 0) and the optional `manifest` as archive members
 * (TM_ENTRY_FILE, with size, mode, mtime and a loose blob). Errors:
 *   TM_EIO    "<path>: <strerror>" for an input that cannot be looked at,
 *             "<path>: not a regular file or directory" for a special one;
 *   TM_EARGS  "two inputs give the member name '<name>': <a> and <b>" (the
 *             first clash in listing order; <a> and <b> are the host paths,
 *             "-o manifest=<file>" for the manifest);
 *   TM_EARGS  "<file>: not a perfetto_manifest (its first key must be
 *             \"perfetto_manifest\", spec/manifest.md §2)" for a manifest
 *             file whose content the merge would not take for one;
 *   TM_EINPUT "multiple perfetto_manifest files in archive" when an input
 *             that is itself a manifest has the manifest's member name (the
 *             merge gives that text for every other manifest input).
 * On error *out is left empty. */
int tm_inputs_list(const char *const *paths, size_t n, const char *manifest, tm_listing *out, tm_error *err);

#endif
