/* fs/main.c - command-line dispatch: mount, or one of the no-FUSE
 * commands, or --help / --version. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "front.h"

void front_usage(FILE *out)
{
	fputs("usage: tracemount ARCHIVE MOUNTPOINT [-f] [-d] [-s] [-o OPTION[,OPTION...]]\n"
	      "       tracemount ls ARCHIVE [PATH]\n"
	      "       tracemount cat ARCHIVE PATH\n"
	      "       tracemount check ARCHIVE\n"
	      "       tracemount --help | --version\n"
	      "\n"
	      "Mount a trace archive (ZIP, TAR, tar.gz, gzip or a single trace file) read-only\n"
	      "and show the merged result of the traces inside as files.\n"
	      "\n"
	      "Mount options:\n"
	      "  -f            stay in the foreground\n"
	      "  -d            debug output (implies -f)\n"
	      "  -s            single-threaded\n"
	      "  -o OPTIONS    FUSE mount options (always read-only; auto_unmount is the default)\n"
	      "\n"
	      "Commands (the same tree without FUSE):\n"
	      "  ls ARCHIVE [PATH]   list a directory of the tree, one name per line\n"
	      "  cat ARCHIVE PATH    write a file of the tree to standard output\n"
	      "  check ARCHIVE       exit 0 with a summary if the archive merges, 1 with the error\n"
	      "\n"
	      "Exit status: 0 success, 1 the archive cannot be merged or a path cannot be read,\n"
	      "2 usage error. See tracemount(1).\n",
	      out);
}

int front_errno(int code)
{
	switch (code) {
	case TM_OK: return 0;
	case TM_ENOENT: return ENOENT;
	case TM_ENOTDIR: return ENOTDIR;
	case TM_EISDIR: return EISDIR;
	case TM_ENOMEM: return ENOMEM;
	default: return EIO;
	}
}

static const struct {
	const char *name;
	int (*run)(int argc, char **argv);
} commands[] = {
	{"ls", cli_ls},
	{"cat", cli_cat},
	{"check", cli_check},
};

int main(int argc, char **argv)
{
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
