/* fs/cli.c - `tracemount ls|cat|check`: the tree without FUSE. What `cat`
 * prints is byte for byte what `cat MOUNT/PATH` prints, so the tests and
 * users without /dev/fuse see the same files (DESIGN.md). And `tracemount
 * pack`, which writes the inputs of a tree as one archive: the file
 * handling is here (a temporary file next to OUT, renamed at the end), the
 * archive and the dry run come from the tree. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <unistd.h>

#include "front.h"

#define CHUNK (1u << 20) /* cat reads the tree 1 MiB at a time */
#define MAX_HOPS 40      /* symbolic links followed, as Linux allows */

static const struct {
	const char *cmd, *synopsis;
} synopses[] = {
	{"ls", "ls [-l] [-o OPTION]... INPUT... [PATH]"},
	{"cat", "cat [-o OPTION]... INPUT... PATH"},
	{"check", "check [-o OPTION]... INPUT..."},
	{"pack", "pack -o OUT [--manifest FILE] [--strict] [--no-validate] INPUT..."},
};

static int usage_error(const char *cmd, const char *msg)
{
	fprintf(stderr, "tracemount: %s: %s\n", cmd, msg);
	for (size_t i = 0; i < sizeof(synopses) / sizeof(synopses[0]); i++)
		if (strcmp(cmd, synopses[i].cmd) == 0)
			fprintf(stderr, "usage: tracemount %s\n", synopses[i].synopsis);
	fputs("Try 'tracemount --help' for more information.\n", stderr);
	return EXIT_USAGE;
}

/* What the options of ls, cat and check say. */
struct tree_opts {
	int long_format;        /* ls -l */
	const char *manifest;   /* -o manifest=FILE */
	const char *index_path; /* -o index=FILE */
	int no_index;           /* -o noindex */
	int gen_only_wanted;    /* cat: build only the file asked for */
	int timeline_fd;        /* cat: timeline.tsv goes there as it is made */
};

/* getopt's complaint (c is '?' or ':') as a usage error of command argv[0]. */
static int option_error(char **argv, int c)
{
	char msg[80];
	if (c == ':' && optopt > 0 && optopt < 128)
		snprintf(msg, sizeof msg, "option '-%c' needs a value", optopt);
	else if (c == ':')
		snprintf(msg, sizeof msg, "option '%.40s' needs a value", argv[optind - 1]);
	else if (optopt > 0 && optopt < 128)
		snprintf(msg, sizeof msg, "unknown option '-%c'", optopt);
	else
		snprintf(msg, sizeof msg, "unknown option '%.40s'", argv[optind - 1]);
	return usage_error(argv[0], msg);
}

/* One -o of ls, cat or check: manifest=FILE, index=FILE or noindex (one
 * per -o: a FILE may hold commas). Returns -1 to go on, else the usage
 * error's exit status. */
static int tree_option(const char *cmd, const char *o, struct tree_opts *opts)
{
	if (strcmp(o, "noindex") == 0) {
		opts->no_index = 1;
		return -1;
	}
	const char **slot = strncmp(o, "manifest=", 9) == 0 ? &opts->manifest
			    : strncmp(o, "index=", 6) == 0  ? &opts->index_path
							    : NULL;
	const char *value = slot ? strchr(o, '=') + 1 : NULL;
	if (!slot || !*value)
		return usage_error(cmd, "-o takes manifest=FILE, index=FILE or noindex");
	if (*slot) {
		char msg[64];
		snprintf(msg, sizeof msg, "-o %.*s=FILE given twice", (int)(value - 1 - o), o);
		return usage_error(cmd, msg);
	}
	*slot = value;
	return -1;
}

/* Options of a command: -h/--help everywhere, -o OPTION, -l for ls.
 * Returns -1 to go on, else the exit status (help printed, or a usage
 * error). */
static int parse_options(int argc, char **argv, const char *accepted, struct tree_opts *o)
{
	static const struct option longopts[] = {{"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0}};
	char spec[16];
	snprintf(spec, sizeof spec, ":ho:%s", accepted);
	opterr = 0;
	optind = 1;
	for (int c; (c = getopt_long(argc, argv, spec, longopts, NULL)) != -1;) {
		if (c == 'h') {
			front_usage(stdout);
			return EXIT_OK;
		}
		if (c == 'l') {
			o->long_format = 1;
			continue;
		}
		if (c == 'o') {
			int rc = tree_option(argv[0], optarg, o);
			if (rc >= 0)
				return rc;
			continue;
		}
		return option_error(argv, c);
	}
	return -1;
}

/* Warnings that are no error, such as an index file ignored. */
static void warn(const char *msg)
{
	fprintf(stderr, "tracemount: %s\n", msg);
}

/* Open the inputs as the options say; `progress` for check on a terminal. */
static tm_vtree *open_or_report(char **inputs, size_t n, const struct tree_opts *o, int progress)
{
	tm_error err = {0};
	vt_inputs in = {.paths = (const char *const *)inputs, .n = n, .manifest = o->manifest,
			.no_index = o->no_index, .index_path = o->index_path, .warn = warn,
			.gen_only_wanted = o->gen_only_wanted, .timeline_fd = o->timeline_fd,
			.progress = progress ? front_progress : NULL, .progress_ctx = NULL};
	tm_vtree *t = vtree_open_inputs(&in, &err);
	if (!t)
		front_report(&err);
	return t;
}

/* What to say of a failed tree operation: an I/O failure's own reason
 * (a member that cannot be read, a generated file that could not be
 * built), else the errno text a mount would give. */
static const char *reason(const tm_error *err)
{
	return err->code == TM_EIO && err->msg[0] ? err->msg : strerror(front_errno(err->code));
}

/* Resolve PATH the way the kernel would under a mount: component by
 * component, following symbolic links (relative ones; at most MAX_HOPS),
 * ".." taken on the link-free path walked so far. `follow_last` is 0 for
 * `ls -l`, which shows a link itself (a trailing '/' still follows it).
 * On failure returns -1 with `why` set to the reason (which may live in
 * the caller's *errp). */
static int resolve(tm_vtree *t, const char *path, int follow_last, vt_ino *ino, const char **why, tm_error *errp)
{
	tm_buf done = {0}; /* the link-free path so far; "" is the root */
	char *rest = tm_xstrdup(path);
	size_t pos = 0;
	int hops = 0, rc = -1;
	tm_error err = {0};
	tm_buf_puts(&done, "");
	while (rest[pos]) {
		if (rest[pos] == '/') {
			pos++;
			continue;
		}
		const char *comp = rest + pos;
		size_t n = strcspn(comp, "/"), end = pos + n;
		if (n == 1 && comp[0] == '.') {
			pos = end;
			continue;
		}
		if (n == 2 && comp[0] == '.' && comp[1] == '.') {
			char *up = strrchr(done.data, '/');
			if (!up) {
				*why = "\"..\" leads out of the archive";
				goto out;
			}
			done.len = (size_t)(up - done.data);
			done.data[done.len] = '\0';
			pos = end;
			continue;
		}
		size_t keep = done.len;
		tm_buf_printf(&done, "/%.*s", (int)n, comp);
		vt_stat st;
		if (vtree_lookup(t, done.data, ino, &err) != 0 || vtree_stat(t, *ino, &st, &err) != 0) {
			*errp = err;
			*why = reason(errp);
			goto out;
		}
		pos = end;
		if (st.kind != VT_LNK || (!rest[end] && !follow_last))
			continue;
		if (++hops > MAX_HOPS) {
			*why = strerror(ELOOP);
			goto out;
		}
		char *target = tm_xmalloc(st.size + 1);
		if (vtree_readlink(t, *ino, target, st.size + 1, &err) != 0 || target[0] == '/') {
			*why = err.code ? strerror(front_errno(err.code)) : "symbolic link leads out of the archive";
			free(target);
			goto out;
		}
		/* The link's target takes its place; the rest of the path follows. */
		tm_buf next = {0};
		tm_buf_printf(&next, "%s%s", target, rest + end);
		free(target);
		free(rest);
		rest = tm_buf_detach(&next, NULL);
		pos = 0;
		done.len = keep;
		done.data[keep] = '\0';
	}
	if (vtree_lookup(t, done.data, ino, &err) != 0) {
		*why = strerror(front_errno(err.code));
		goto out;
	}
	rc = 0;
out:
	tm_buf_free(&done);
	free(rest);
	return rc;
}

struct ls_ctx {
	tm_vtree *t;
	int long_format;
	int rc;
};

/* `ls -l` line: type (d, -, l), exact size, name, and a link's target. */
static int print_long(tm_vtree *t, const char *name, vt_ino ino, const vt_stat *known)
{
	static const char type_char[] = {[VT_DIR] = 'd', [VT_REG] = '-', [VT_LNK] = 'l'};
	tm_error err = {0};
	vt_stat st;
	if (!known && vtree_stat(t, ino, &st, &err) != 0) {
		fprintf(stderr, "tracemount: ls: %s: %s\n", name, reason(&err));
		return -1;
	}
	if (known)
		st = *known;
	printf("%c %12" PRIu64 " %s", type_char[st.kind], st.size, name);
	if (st.kind == VT_LNK) {
		char *target = tm_xmalloc(st.size + 1);
		if (vtree_readlink(t, ino, target, st.size + 1, &err) == 0)
			printf(" -> %s", target);
		free(target);
	}
	putchar('\n');
	return 0;
}

static int print_entry(void *arg, const char *name, vt_ino ino, const vt_stat *st)
{
	struct ls_ctx *c = arg;
	if (c->long_format) {
		if (print_long(c->t, name, ino, st) != 0)
			c->rc = EXIT_MERGE; /* as ls(1): the others are listed, the status says so */
	} else
		printf("%s\n", name);
	return 0;
}

int cli_ls(int argc, char **argv)
{
	struct tree_opts o = {0};
	int rc = parse_options(argc, argv, "l", &o);
	if (rc >= 0)
		return rc;
	int long_format = o.long_format;
	int n = argc - optind;
	if (n < 1)
		return usage_error("ls", "expected INPUT... [PATH]");
	/* With two operands or more the last is the PATH: `ls a.json b.json /`
	 * lists the root of two inputs (one operand alone lists its root). */
	const char *path = n >= 2 ? argv[argc - 1] : "/";
	tm_vtree *t = open_or_report(argv + optind, (size_t)(n >= 2 ? n - 1 : 1), &o, 0);
	if (!t)
		return EXIT_MERGE;
	tm_error err = {0};
	const char *why;
	vt_ino ino;
	vt_stat st;
	rc = EXIT_OK;
	struct ls_ctx c = {t, long_format, EXIT_OK};
	if (resolve(t, path, !long_format, &ino, &why, &err) != 0) {
		fprintf(stderr, "tracemount: ls: %s: %s\n", path, why);
		rc = EXIT_MERGE;
	} else if (vtree_stat(t, ino, &st, &err) != 0) {
		fprintf(stderr, "tracemount: ls: %s: %s\n", path, reason(&err));
		rc = EXIT_MERGE;
	} else if (st.kind != VT_DIR) {
		/* Like ls(1): a file operand is listed as given. */
		print_entry(&c, path, ino, &st);
	} else if (vtree_readdir(t, ino, print_entry, &c, &err) != 0) {
		fprintf(stderr, "tracemount: ls: %s: %s\n", path, reason(&err));
		rc = EXIT_MERGE;
	}
	if (c.rc != EXIT_OK)
		rc = c.rc;
	if (fflush(stdout) != 0) {
		fprintf(stderr, "tracemount: ls: write error: %s\n", strerror(errno));
		rc = EXIT_MERGE;
	}
	vtree_free(t);
	return rc;
}

/* Where a run of the file lies unchanged in a host file (a stored member,
 * a generated file's temporary file), the kernel copies it to stdout with
 * sendfile, without passing it through our buffer (the 81 MB
 * merged.pftrace of the proto bench was read into it and written out
 * again). 1 when it went that way (*off moved on), 0 when the run is to
 * be read (no such run), 2 when stdout takes no sendfile (a terminal, an
 * old kernel), -1 on a write error (errno set). */
static int copy_span(vt_file *f, uint64_t *off)
{
	int fd;
	uint64_t at, len;
	if (vtree_file_span(f, *off, &fd, &at, &len) < 0 || len == 0)
		return 0;
	if (fflush(stdout) != 0)
		return -1;
	off_t pos = (off_t)at;
	size_t want = len > (1u << 30) ? (1u << 30) : (size_t)len;
	ssize_t n;
	do
		n = sendfile(STDOUT_FILENO, fd, &pos, want);
	while (n < 0 && errno == EINTR);
	if (n > 0) {
		*off += (uint64_t)n;
		return 1;
	}
	if (n == 0)
		return 0; /* a host file shorter than the tree says: the read reports it */
	return errno == EINVAL || errno == ENOSYS || errno == EAGAIN ? 2 : -1;
}

/* Copy an open file to stdout. Returns the exit status. */
static int copy_out(vt_file *f, const char *path)
{
	char *buf = tm_xmalloc(CHUNK);
	tm_error err = {0};
	int rc = EXIT_OK, direct = 1;
	for (uint64_t off = 0;;) {
		if (direct) {
			int d = copy_span(f, &off);
			if (d == 1)
				continue;
			direct = d != 2;
			if (d < 0) {
				fprintf(stderr, "tracemount: cat: write error: %s\n", strerror(errno));
				rc = EXIT_MERGE;
				break;
			}
		}
		ssize_t n = vtree_file_read(f, buf, CHUNK, off, &err);
		if (n < 0) {
			/* The reason is the core's text (for a merge output,
			 * the exact error metadata.json reports). */
			fprintf(stderr, "tracemount: cat: %s: %s\n", path, err.msg);
			rc = EXIT_MERGE;
			break;
		}
		if (n == 0)
			break;
		if (fwrite(buf, 1, (size_t)n, stdout) != (size_t)n)
			break; /* reported by the fflush below */
		off += (uint64_t)n;
	}
	free(buf);
	if (fflush(stdout) != 0 || ferror(stdout)) {
		if (rc == EXIT_OK)
			fprintf(stderr, "tracemount: cat: write error: %s\n", strerror(errno));
		rc = EXIT_MERGE;
	}
	return rc;
}

int cli_cat(int argc, char **argv)
{
	struct tree_opts o = {0};
	int rc = parse_options(argc, argv, "", &o);
	if (rc >= 0)
		return rc;
	if (argc - optind < 2)
		return usage_error("cat", "expected INPUT... PATH");
	const char *path = argv[argc - 1];
	/* A closed standard output would be the number the first file opened
	 * gets, which the bytes would then go to. */
	if (fcntl(STDOUT_FILENO, F_GETFD) < 0) {
		fprintf(stderr, "tracemount: cat: write error: %s\n", strerror(errno));
		return EXIT_MERGE;
	}
	o.gen_only_wanted = 1; /* one file: no pass for the others */
	o.timeline_fd = STDOUT_FILENO; /* the top-level timeline.tsv: no copy on disk */
	tm_vtree *t = open_or_report(argv + optind, (size_t)(argc - optind - 1), &o, 0);
	if (!t)
		return EXIT_MERGE;
	tm_error err = {0};
	const char *why;
	vt_ino ino;
	vt_file *f = NULL;
	if (resolve(t, path, 1, &ino, &why, &err) != 0) {
		fprintf(stderr, "tracemount: cat: %s: %s\n", path, why);
		rc = EXIT_MERGE;
	} else if (!(f = vtree_file_open(t, ino, &err))) {
		/* a view of a failed merge: the reason, as a failed read gives
		 * it; a failed write of the streamed timeline.tsv as copy_out's */
		if (err.code == TM_EIO && strncmp(err.msg, "write error: ", 13) == 0)
			fprintf(stderr, "tracemount: cat: %s\n", err.msg);
		else
			fprintf(stderr, "tracemount: cat: %s: %s\n", path, reason(&err));
		rc = EXIT_MERGE;
	} else if (vtree_file_streamed(f)) { /* written while it was made */
		rc = EXIT_OK;
	} else {
		rc = copy_out(f, path);
	}
	vtree_file_close(f);
	vtree_free(t);
	return rc;
}

int cli_check(int argc, char **argv)
{
	struct tree_opts o = {0};
	int rc = parse_options(argc, argv, "", &o);
	if (rc >= 0)
		return rc;
	if (argc - optind < 1)
		return usage_error("check", "expected INPUT...");
	/* Progress on a terminal only: a script reading the summary wants
	 * nothing else on stderr (tracemount(1), "Progress"). */
	tm_vtree *t = open_or_report(argv + optind, (size_t)(argc - optind), &o, isatty(STDERR_FILENO));
	if (!t)
		return EXIT_MERGE;
	front_warn_unexported(t);
	tm_buf sum = {0};
	tm_error err = {0};
	rc = EXIT_OK;
	if (vtree_check(t, &sum, &err) != 0) {
		front_report(&err);
		rc = EXIT_MERGE;
	} else {
		fputs(sum.data ? sum.data : "", stdout);
	}
	tm_buf_free(&sum);
	vtree_free(t);
	return rc;
}

/* ---- pack ----------------------------------------------------------------- */

/* The temporary file being written, removed if a signal ends the command
 * (unlink is async-signal-safe; the path is set before the file exists). */
static char pack_tmp[4096];
static volatile sig_atomic_t pack_tmp_live;

static void pack_on_signal(int sig)
{
	if (pack_tmp_live)
		unlink(pack_tmp);
	signal(sig, SIG_DFL);
	raise(sig);
}

static void pack_catch_signals(void (*handler)(int))
{
	static const int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGPIPE};
	for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
		signal(sigs[i], handler);
}

/* A new file next to `out` (same directory, so rename() is atomic), named
 * ".<base>.XXXXXX", with the mode a plain create would give. */
static int pack_open_tmp(const char *out)
{
	const char *slash = strrchr(out, '/');
	int dirlen = slash ? (int)(slash - out + 1) : 0;
	if (snprintf(pack_tmp, sizeof pack_tmp, "%.*s.%s.XXXXXX", dirlen, out, out + dirlen) >= (int)sizeof pack_tmp) {
		errno = ENAMETOOLONG;
		return -1;
	}
	pack_catch_signals(pack_on_signal);
	int fd = mkostemp(pack_tmp, O_CLOEXEC);
	if (fd < 0)
		return -1;
	pack_tmp_live = 1;
	mode_t mask = umask(0);
	umask(mask);
	if (fchmod(fd, 0666 & ~mask) != 0) {
		int e = errno;
		close(fd);
		errno = e;
		return -1;
	}
	return fd;
}

static void pack_drop_tmp(void)
{
	if (pack_tmp_live)
		unlink(pack_tmp);
	pack_tmp_live = 0;
	pack_catch_signals(SIG_DFL);
}

struct pack_opts {
	const char *out, *manifest;
	int strict, no_validate;
};

static int pack_parse(int argc, char **argv, struct pack_opts *o)
{
	enum { OPT_MANIFEST = 256, OPT_STRICT, OPT_NO_VALIDATE };
	static const struct option longopts[] = {
		{"help", no_argument, NULL, 'h'},
		{"manifest", required_argument, NULL, OPT_MANIFEST},
		{"strict", no_argument, NULL, OPT_STRICT},
		{"no-validate", no_argument, NULL, OPT_NO_VALIDATE},
		{NULL, 0, NULL, 0},
	};
	opterr = 0;
	optind = 1;
	for (int c; (c = getopt_long(argc, argv, ":ho:", longopts, NULL)) != -1;) {
		switch (c) {
		case 'h':
			front_usage(stdout);
			return EXIT_OK;
		case 'o':
			if (o->out)
				return usage_error("pack", "-o OUT given twice");
			o->out = optarg;
			break;
		case OPT_MANIFEST:
			if (o->manifest)
				return usage_error("pack", "--manifest given twice");
			o->manifest = optarg;
			break;
		case OPT_STRICT:
			o->strict = 1;
			break;
		case OPT_NO_VALIDATE:
			o->no_validate = 1;
			break;
		default:
			return option_error(argv, c);
		}
	}
	if (!o->out)
		return usage_error("pack", "expected -o OUT");
	if (argc - optind < 1)
		return usage_error("pack", "expected INPUT...");
	if (vtree_pack_format(o->out) == VT_PACK_NONE)
		return usage_error("pack", "OUT must end in .zip, .tar, .tar.gz or .tgz");
	return -1;
}

/* The dry run (issue 11): the written archive merged as a mount would merge
 * it; what it drops is reported per file and reason on stderr. Returns the
 * exit status; on success `sum` holds the check summary. */
static int pack_dry_run(const struct pack_opts *o, tm_buf *sum)
{
	tm_error err = {0};
	const char *path = pack_tmp;
	/* The written archive is a temporary file: no index for it. */
	tm_vtree *t = vtree_open_inputs(&(vt_inputs){.paths = &path, .n = 1, .name = o->out, .no_index = 1}, &err);
	if (!t) {
		front_report(&err);
		return EXIT_MERGE;
	}
	tm_buf drops = {0};
	uint64_t dropped = 0;
	int rc = EXIT_OK;
	if (vtree_check(t, sum, &err) != 0 || vtree_drops(t, &drops, &dropped, &err) != 0) {
		front_report(&err);
		rc = EXIT_MERGE;
	} else {
		fputs(drops.data ? drops.data : "", stderr);
		size_t unexported = front_warn_unexported(t);
		if (o->strict && dropped) {
			fprintf(stderr, "tracemount: pack: --strict: %" PRIu64 " event%s dropped, %s not written\n", dropped,
				dropped == 1 ? "" : "s", o->out);
			rc = EXIT_MERGE;
		} else if (o->strict && unexported) {
			fprintf(stderr, "tracemount: pack: --strict: the events of %zu file%s not exported, %s not written\n",
				unexported, unexported == 1 ? " are" : "s are", o->out);
			rc = EXIT_MERGE;
		}
	}
	tm_buf_free(&drops);
	vtree_free(t);
	return rc;
}

int cli_pack(int argc, char **argv)
{
	struct pack_opts o = {0};
	int rc = pack_parse(argc, argv, &o);
	if (rc >= 0)
		return rc;
	tm_error err = {0};
	vt_inputs in = {.paths = (const char *const *)(argv + optind), .n = (size_t)(argc - optind),
			.manifest = o.manifest, .as_members = 1, .no_index = 1};
	/* Everything the mount tier checks, before a byte is written. */
	tm_vtree *t = vtree_open_inputs(&in, &err);
	if (!t) {
		front_report(&err);
		return EXIT_MERGE;
	}
	int fd = pack_open_tmp(o.out);
	if (fd < 0) {
		fprintf(stderr, "tracemount: pack: %s: %s\n", o.out, strerror(errno));
		pack_drop_tmp();
		vtree_free(t);
		return EXIT_MERGE;
	}
	size_t members = 0;
	rc = vtree_pack(t, fd, vtree_pack_format(o.out), &members, &err);
	vtree_free(t);
	if (rc != 0) {
		fprintf(stderr, "tracemount: pack: %s\n", err.msg);
		close(fd);
		pack_drop_tmp();
		return EXIT_MERGE;
	}
	if (fsync(fd) != 0 || close(fd) != 0) {
		fprintf(stderr, "tracemount: pack: %s: %s\n", o.out, strerror(errno));
		pack_drop_tmp();
		return EXIT_MERGE;
	}
	tm_buf sum = {0};
	if (o.no_validate)
		tm_buf_printf(&sum, "%s: %zu member%s written, not validated\n", o.out, members, members == 1 ? "" : "s");
	else if ((rc = pack_dry_run(&o, &sum)) != EXIT_OK) {
		tm_buf_free(&sum);
		pack_drop_tmp();
		return rc;
	}
	if (rename(pack_tmp, o.out) != 0) {
		fprintf(stderr, "tracemount: pack: %s: %s\n", o.out, strerror(errno));
		tm_buf_free(&sum);
		pack_drop_tmp();
		return EXIT_MERGE;
	}
	pack_tmp_live = 0;
	pack_catch_signals(SIG_DFL);
	fputs(sum.data ? sum.data : "", stdout);
	tm_buf_free(&sum);
	if (fflush(stdout) != 0) {
		fprintf(stderr, "tracemount: pack: write error: %s\n", strerror(errno));
		return EXIT_MERGE;
	}
	return EXIT_OK;
}
