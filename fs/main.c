/* fs/main.c - command-line dispatch: mount, one of the no-FUSE commands
 * (ls, cat, check, pack), or --help / --version; and the two things both
 * front ends share, the errno mapping, the error printer and the warning
 * for files whose events are not exported. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "front.h"
#include "util/tm.h"

void front_usage(FILE *out)
{
	fputs("usage: tracemount INPUT... MOUNTPOINT [-f] [-d] [-s] [-o OPTION[,OPTION...]]\n"
	      "       tracemount ls [-l] [-o OPTION]... INPUT... [PATH]\n"
	      "       tracemount cat [-o OPTION]... INPUT... PATH\n"
	      "       tracemount check [-o OPTION]... INPUT...\n"
	      "       tracemount pack -o OUT [--manifest FILE] [--strict] [--no-validate] INPUT...\n"
	      "       tracemount --help | --version\n"
	      "\n"
	      "Mount a trace archive (ZIP, TAR, tar.gz, gzip or a single trace file) read-only\n"
	      "and show the merged result of the traces inside as files. Several INPUTs (trace\n"
	      "files, archives, directories) merge exactly as one archive holding them would.\n"
	      "\n"
	      "Mount options:\n"
	      "  -f            stay in the foreground\n"
	      "  -d            FUSE debug output (implies -f)\n"
	      "  -s            serve requests on one thread\n"
	      "  -o manifest=FILE\n"
	      "                apply FILE as the manifest, as if it were packed first\n"
	      "  -o index=FILE keep the scan's results in FILE instead of the index cache\n"
	      "                ($XDG_CACHE_HOME/tracemount, else ~/.cache/tracemount)\n"
	      "  -o noindex    neither read nor write the index cache\n"
	      "  -o OPTIONS    FUSE mount options, comma separated (the mount is always\n"
	      "                read-only; auto_unmount is the default)\n"
	      "  -h, --help    print this help\n"
	      "  -V, --version print the version\n"
	      "\n"
	      "Commands (the same tree without FUSE; -o manifest=, index=, noindex as for a\n"
	      "mount, one per -o):\n"
	      "  ls [-l] INPUT... [PATH]  list a directory of the tree, one name per line\n"
	      "                           (-l: type, size and name; links with their target);\n"
	      "                           with two operands or more the last is the PATH\n"
	      "  cat INPUT... PATH        write a file of the tree to standard output\n"
	      "  check INPUT...           exit 0 with a summary if the inputs merge,\n"
	      "                           1 with the exact error if they do not (progress\n"
	      "                           on stderr when it is a terminal; a warning there\n"
	      "                           for each file whose events are not exported)\n"
	      "  pack -o OUT INPUT...     write the inputs as one archive (.zip, .tar, .tar.gz,\n"
	      "                           .tgz), the manifest first; validate, then dry-run it\n"
	      "                           and report dropped events on stderr\n"
	      "    --manifest FILE        pack FILE first as perfetto_manifest.json\n"
	      "    --strict               exit 1 (and write nothing) if any event is dropped\n"
	      "                           or a file's events are not exported\n"
	      "    --no-validate          skip the dry run\n"
	      "\n"
	      "Exit status: 0 success, 1 the inputs cannot be merged or a path cannot be read,\n"
	      "2 usage error. See tracemount(1).\n",
	      out);
}

int front_errno(tm_code code)
{
	/* Input and system failures alike reach a reader as EIO; the reason
	 * goes to the daemon's stderr (and, for the merge, metadata.json). */
	static const int errno_of[] = {
		[TM_OK] = 0,
		[TM_EINPUT] = EIO,
		[TM_EIO] = EIO,
		[TM_ENOENT] = ENOENT,
		[TM_ENOTDIR] = ENOTDIR,
		[TM_EISDIR] = EISDIR,
		[TM_ENOMEM] = ENOMEM,
		[TM_EUNSUP] = EIO,
		[TM_EARGS] = EIO,
	};
	return (size_t)code < sizeof(errno_of) / sizeof(errno_of[0]) ? errno_of[code] : EIO;
}

void front_report(const tm_error *err)
{
	if (err->code == TM_EINPUT)
		fprintf(stderr, "%s\n", err->msg); /* users compare it with Perfetto's */
	else
		fprintf(stderr, "tracemount: %s\n", err->msg);
}

size_t front_warn_unexported(tm_vtree *t)
{
	tm_buf w = {0};
	size_t n = vtree_unexported(t, &w);
	for (const char *line = w.data, *nl; line && *line; line = nl + 1) {
		nl = strchr(line, '\n');
		fprintf(stderr, "tracemount: warning: %.*s\n", (int)(nl - line), line);
	}
	tm_buf_free(&w);
	return n;
}

static const struct {
	const char *name;
	int (*run)(int argc, char **argv);
} commands[] = {
	{"ls", cli_ls},
	{"cat", cli_cat},
	{"check", cli_check},
	{"pack", cli_pack},
};

int main(int argc, char **argv)
{
	tm_memory_tune();
	if (argc >= 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
		front_usage(stdout);
		return EXIT_OK;
	}
	if (argc >= 2 && (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "-V") == 0)) {
		printf("tracemount %s\n", TM_VERSION);
		return EXIT_OK;
	}
	for (size_t i = 0; argc >= 2 && i < sizeof(commands) / sizeof(commands[0]); i++)
		if (strcmp(argv[1], commands[i].name) == 0)
			return commands[i].run(argc - 1, argv + 1);
	return fuse_front_main(argc, argv);
}
