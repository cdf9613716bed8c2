/* fs/front.h - the two front ends over core/session/vtree.h: the FUSE daemon
 * (fuse_ops.c) and the no-FUSE commands (cli.c), dispatched by main.c.
 * fs/ knows nothing about traces (DESIGN.md): it sees paths, nodes, bytes
 * and tm_error. */
#ifndef TM_FRONT_H
#define TM_FRONT_H

#include <stdio.h>

#include "session/vtree.h"

/* Exit statuses (tracemount(1), EXIT STATUS). */
enum { EXIT_OK = 0, EXIT_MERGE = 1, EXIT_USAGE = 2 };

/* `tracemount INPUT... MOUNTPOINT [options]`: parses the options, opens the
 * inputs, mounts, serves until unmounted. Returns the exit status. */
int fuse_front_main(int argc, char **argv);

/* `tracemount ls|cat|check|pack ...`, argv[0] being the command name. Each
 * prints its own errors and returns the exit status. */
int cli_ls(int argc, char **argv);
int cli_cat(int argc, char **argv);
int cli_check(int argc, char **argv);
int cli_pack(int argc, char **argv);

/* The errno for a core error code: the only place codes become errnos. */
int front_errno(tm_code code);

/* Print why an archive cannot be served, on stderr: a TM_EINPUT message is
 * the contract (the exact text Perfetto prints) and goes out bare, any
 * other error as "tracemount: <message>". */
void front_report(const tm_error *err);

/* One line on stderr, "tracemount: warning: ...", for each trace file
 * whose events no output holds (vtree_unexported); returns how many. */
size_t front_warn_unexported(tm_vtree *t);

/* The full usage text (--help). */
void front_usage(FILE *out);

/* vt_inputs.progress for a terminal on stderr (fs/progress.c): one line
 * rewritten in place while the scan runs, then "Trace loaded: ..." (ctx
 * unused). Front ends set it only when stderr is a terminal. */
void front_progress(void *ctx, const vt_progress *p);

#endif
