/* fs/front.h - the two front ends over core/vtree.h: the FUSE daemon and
 * the no-FUSE commands. fs/ knows nothing about traces (DESIGN.md). */
#ifndef TM_FRONT_H
#define TM_FRONT_H

#include "vtree.h"

/* Exit statuses (tracemount(1), EXIT STATUS). */
enum { EXIT_OK = 0, EXIT_MERGE = 1, EXIT_USAGE = 2 };

/* `tracemount ARCHIVE MOUNTPOINT [options]`: returns the exit status. */
int fuse_front_main(int argc, char **argv);

/* `tracemount ls|cat|check ...` with argv[0] the subcommand. */
int cli_ls(int argc, char **argv);
int cli_cat(int argc, char **argv);
int cli_check(int argc, char **argv);

/* The errno for a core error code (the only place codes become errnos). */
int front_errno(int tm_code);

void front_usage(FILE *out);

#endif
