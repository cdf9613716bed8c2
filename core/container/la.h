/* core/container/la.h - libarchive, loaded the first time it is needed.
 *
 * libarchive decodes the zstd, bzip2 and xz streams (core/container/decompress.c)
 * and writes what `tracemount pack` makes (core/session/pack.c); ZIP, TAR, gzip
 * and plain files are read without it. Linked as usual, it and what it
 * links (libxml2, ICU, nettle, libstdc++, liblzma, libzstd, ...) were two
 * thirds of the start of every tracemount process: 3.0 ms, against 1.0 ms
 * for a program without them, a twentieth of the scan of a 70 MB archive
 * and most of a `tracemount cat` of a small one. So it is opened with
 * dlopen(3) by the first stream or pack that needs it, once per process,
 * and its functions are called through this table. */
#ifndef TM_LA_H
#define TM_LA_H

/* libarchive's <archive.h> is shadowed by our core/container/archive.h on the
 * include path; the -iquote makes <...> reach the system's. */
#include <archive.h>
#include <archive_entry.h>

#include "util/tm.h"

/* The functions used, each a member of the same name. */
#define TM_LA_FUNCTIONS(X)                                                                     \
	X(archive_error_string)                                                                \
	X(archive_set_error)                                                                   \
	X(archive_read_new)                                                                    \
	X(archive_read_free)                                                                   \
	X(archive_read_support_filter_zstd)                                                    \
	X(archive_read_support_filter_bzip2)                                                   \
	X(archive_read_support_filter_xz)                                                      \
	X(archive_read_support_filter_lzma)                                                    \
	X(archive_read_support_format_raw)                                                     \
	X(archive_read_open2)                                                                  \
	X(archive_read_next_header)                                                            \
	X(archive_read_data)                                                                   \
	X(archive_filter_code)                                                                 \
	X(archive_filter_count)                                                                \
	X(archive_write_new)                                                                   \
	X(archive_write_free)                                                                  \
	X(archive_write_set_format_zip)                                                        \
	X(archive_write_set_format_gnutar)                                                     \
	X(archive_write_add_filter_gzip)                                                       \
	X(archive_write_set_bytes_in_last_block)                                               \
	X(archive_write_open_fd)                                                               \
	X(archive_write_header)                                                                \
	X(archive_write_data)                                                                  \
	X(archive_write_finish_entry)                                                          \
	X(archive_write_close)                                                                 \
	X(archive_entry_new)                                                                   \
	X(archive_entry_free)                                                                  \
	X(archive_entry_copy_pathname)                                                         \
	X(archive_entry_set_filetype)                                                          \
	X(archive_entry_set_perm)                                                              \
	X(archive_entry_set_size)                                                              \
	X(archive_entry_set_mtime)

typedef struct tm_la {
#define TM_LA_MEMBER(f) __typeof__(f) *f;
	TM_LA_FUNCTIONS(TM_LA_MEMBER)
#undef TM_LA_MEMBER
} tm_la;

/* The functions, or NULL with err set (TM_EIO: the library or one of its
 * functions could not be loaded, and why). Thread-safe. */
const tm_la *tm_la_get(tm_error *err);

#endif
