/* fs/fuse_ops.c - the FUSE daemon: one operations table, each op a thin
 * call into core/session/vtree.h. Setup happens in order before daemonizing (parse
 * options, check the mount point, open and validate the inputs) so every
 * setup error reaches the shell that ran the command; threads start only
 * in the loop, after the fork (STYLE.md, after sshfs). */
#define FUSE_USE_VERSION 314

#include <errno.h>
#include <fcntl.h>
#include <fuse.h>
#include <fuse_lowlevel.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "front.h"

/* What the operations share: the tree (opened before the fork) and the
 * owner every node is shown with. */
struct mount_ctx {
	tm_vtree *tree;
	uid_t uid;
	gid_t gid;
};

static struct mount_ctx *ctx(void)
{
	return fuse_get_context()->private_data;
}

static tm_vtree *tree(void)
{
	return ctx()->tree;
}

/* DESIGN.md: a failure found after mount is printed on the daemon's
 * stderr. Readers retry, so each message is printed once (a small ring of
 * the last distinct messages is enough: a merge has few of them). */
static void log_once(const char *msg)
{
	static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	static uint64_t seen[32];
	static size_t next;
	uint64_t h = 1469598103934665603ull;
	for (const unsigned char *p = (const unsigned char *)msg; *p; p++)
		h = (h ^ *p) * 1099511628211ull;
	h |= 1; /* 0 marks an empty slot */
	pthread_mutex_lock(&lock);
	int fresh = 1;
	for (size_t i = 0; i < sizeof(seen) / sizeof(seen[0]); i++)
		fresh &= seen[i] != h;
	if (fresh) {
		seen[next] = h;
		next = (next + 1) % (sizeof(seen) / sizeof(seen[0]));
		fprintf(stderr, "tracemount: %s\n", msg);
	}
	pthread_mutex_unlock(&lock);
}

/* The FUSE boundary: the only place a core error becomes an errno. */
static int fail(const tm_error *err)
{
	int e = front_errno(err->code);
	if (e == EIO)
		log_once(err->msg);
	return -e;
}

/* Everything is read-only and immutable: directories 0555, files 0444,
 * links 0777, all owned by whoever mounted the archive. */
static void to_stat(const vt_stat *v, struct stat *st)
{
	static const mode_t mode[] = {
		[VT_DIR] = S_IFDIR | 0555,
		[VT_REG] = S_IFREG | 0444,
		[VT_LNK] = S_IFLNK | 0777,
	};
	memset(st, 0, sizeof(*st));
	st->st_ino = v->ino;
	st->st_mode = mode[v->kind];
	st->st_nlink = v->nlink;
	st->st_size = (off_t)v->size;
	st->st_blksize = 4096;
	st->st_blocks = (blkcnt_t)((v->size + 511) / 512);
	st->st_uid = ctx()->uid;
	st->st_gid = ctx()->gid;
	st->st_mtim.tv_sec = st->st_ctim.tv_sec = st->st_atim.tv_sec = v->mtime;
}

static int tm_getattr(const char *path, struct stat *st, struct fuse_file_info *fi)
{
	tm_error err = {0};
	vt_ino ino;
	vt_stat v;
	if (vtree_lookup(tree(), path, &ino, &err) != 0 || vtree_stat(tree(), ino, &v, &err) != 0)
		return fail(&err);
	to_stat(&v, st);
	return 0;
}

struct fill_ctx {
	void *buf;
	fuse_fill_dir_t filler;
};

static int fill_entry(void *arg, const char *name, vt_ino ino, const vt_stat *v)
{
	struct fill_ctx *fc = arg;
	struct stat st;
	if (v) {
		to_stat(v, &st);
		return fc->filler(fc->buf, name, &st, 0, FUSE_FILL_DIR_PLUS);
	}
	/* vtree.h: no attributes means they would cost a tier. Hand over the
	 * inode number only; the kernel asks getattr if and when it needs
	 * the rest, so `ls` stays instant. */
	memset(&st, 0, sizeof(st));
	st.st_ino = ino;
	return fc->filler(fc->buf, name, &st, 0, 0);
}

static int tm_readdir(const char *path, void *buf, fuse_fill_dir_t filler, off_t off, struct fuse_file_info *fi,
		      enum fuse_readdir_flags flags)
{
	tm_error err = {0};
	vt_ino ino;
	if (vtree_lookup(tree(), path, &ino, &err) != 0)
		return fail(&err);
	filler(buf, ".", NULL, 0, 0);
	filler(buf, "..", NULL, 0, 0);
	struct fill_ctx fc = {buf, filler};
	if (vtree_readdir(tree(), ino, fill_entry, &fc, &err) != 0)
		return fail(&err);
	return 0;
}

static int tm_open(const char *path, struct fuse_file_info *fi)
{
	if ((fi->flags & O_ACCMODE) != O_RDONLY || (fi->flags & (O_TRUNC | O_CREAT)))
		return -EROFS;
	tm_error err = {0};
	vt_ino ino;
	vt_file *f;
	if (vtree_lookup(tree(), path, &ino, &err) != 0 || !(f = vtree_file_open(tree(), ino, &err)))
		return fail(&err);
	fi->fh = (uint64_t)(uintptr_t)f;
	fi->keep_cache = 1; /* the bytes never change while mounted */
	return 0;
}

static int tm_read(const char *path, char *buf, size_t size, off_t off, struct fuse_file_info *fi)
{
	tm_error err = {0};
	ssize_t n = vtree_file_read((vt_file *)(uintptr_t)fi->fh, buf, size, (uint64_t)off, &err);
	return n < 0 ? fail(&err) : (int)n;
}

/* Bytes that lie in host files (stored members, the generated files'
 * temporary files) are handed to libfuse as (fd, offset) pieces: they go
 * to the kernel without passing through our buffers (spliced where the
 * kernel allows). A read that would need more than READ_PIECES of them,
 * and everything decoded, is read into memory. */
#define READ_PIECES 4

static int tm_read_buf(const char *path, struct fuse_bufvec **bufp, size_t size, off_t off,
		       struct fuse_file_info *fi)
{
	vt_file *f = (vt_file *)(uintptr_t)fi->fh;
	struct fuse_bufvec *bv = calloc(1, sizeof(*bv) + (READ_PIECES - 1) * sizeof(struct fuse_buf));
	if (!bv)
		return -ENOMEM;
	uint64_t o = (uint64_t)off, done = 0;
	size_t k = 0;
	int fd, rc = 0;
	uint64_t at, len;
	while (done < size && k < READ_PIECES && (rc = vtree_file_span(f, o + done, &fd, &at, &len)) >= 0) {
		size_t n = len < size - done ? (size_t)len : size - (size_t)done;
		bv->buf[k].size = n;
		bv->buf[k].flags = FUSE_BUF_IS_FD | FUSE_BUF_FD_SEEK;
		bv->buf[k].fd = fd;
		bv->buf[k].pos = (off_t)at;
		k++;
		done += n;
		if (rc == 1)
			break;
	}
	/* all of it, or all up to the end of the file */
	if (k && (done == size || rc == 1)) {
		bv->count = k;
		*bufp = bv;
		return 0;
	}
	*bv = FUSE_BUFVEC_INIT(size);
	bv->buf[0].mem = malloc(size ? size : 1);
	if (!bv->buf[0].mem) {
		free(bv);
		return -ENOMEM;
	}
	tm_error err = {0};
	ssize_t n = vtree_file_read(f, bv->buf[0].mem, size, o, &err);
	if (n < 0) {
		free(bv->buf[0].mem);
		free(bv);
		return fail(&err);
	}
	bv->buf[0].size = (size_t)n;
	*bufp = bv;
	return 0;
}

static int tm_release(const char *path, struct fuse_file_info *fi)
{
	vtree_file_close((vt_file *)(uintptr_t)fi->fh);
	return 0;
}

static int tm_readlink(const char *path, char *buf, size_t size)
{
	tm_error err = {0};
	vt_ino ino;
	if (vtree_lookup(tree(), path, &ino, &err) != 0 || vtree_readlink(tree(), ino, buf, size, &err) != 0)
		return fail(&err);
	return 0;
}

/* No free space, nothing to allocate: a read-only file system. */
static int tm_statfs(const char *path, struct statvfs *sv)
{
	memset(sv, 0, sizeof(*sv));
	sv->f_bsize = sv->f_frsize = 4096;
	sv->f_namemax = 255;
	sv->f_flag = ST_RDONLY | ST_NOSUID | ST_NODEV;
	return 0;
}

static void *tm_init(struct fuse_conn_info *conn, struct fuse_config *cfg)
{
	/* Replies that carry an fd (tm_read_buf) are spliced into /dev/fuse.
	 * Not with FUSE_CAP_SPLICE_MOVE: libfuse splices replies from memory
	 * too (written into a pipe first), and with it the kernel swaps the
	 * pipe's pages into the page cache, charging and uncharging each:
	 * reading the proto bench's timeline.tsv on a mount (416 MB, made
	 * when read) took 0.55-1.0 s with it and 0.33-0.35 s without, and its
	 * merged.pftrace, spliced from a file, 0.050-0.058 s either way. */
	if (conn->capable & FUSE_CAP_SPLICE_WRITE)
		conn->want |= FUSE_CAP_SPLICE_WRITE;
	cfg->use_ino = 1;     /* vt_ino is stable: hard-link-free, cache-friendly */
	cfg->kernel_cache = 1; /* no content ever changes while mounted */
	cfg->entry_timeout = cfg->attr_timeout = cfg->negative_timeout = 3600;
	return ctx();
}

/* Read-only everywhere: every mutating operation answers EROFS (the mount
 * is `ro` too; these cover callers that bypass the kernel's check, such as
 * root on a mount made with `-o rw`). */
static int ro_path(const char *p) { return -EROFS; }
static int ro_path2(const char *a, const char *b) { return -EROFS; }
static int ro_rename(const char *a, const char *b, unsigned f) { return -EROFS; }
static int ro_mkdir(const char *p, mode_t m) { return -EROFS; }
static int ro_mknod(const char *p, mode_t m, dev_t d) { return -EROFS; }
static int ro_chmod(const char *p, mode_t m, struct fuse_file_info *fi) { return -EROFS; }
static int ro_chown(const char *p, uid_t u, gid_t g, struct fuse_file_info *fi) { return -EROFS; }
static int ro_truncate(const char *p, off_t o, struct fuse_file_info *fi) { return -EROFS; }
static int ro_write(const char *p, const char *b, size_t s, off_t o, struct fuse_file_info *fi) { return -EROFS; }
static int ro_create(const char *p, mode_t m, struct fuse_file_info *fi) { return -EROFS; }
static int ro_utimens(const char *p, const struct timespec tv[2], struct fuse_file_info *fi) { return -EROFS; }
static int ro_setxattr(const char *p, const char *n, const char *v, size_t s, int f) { return -EROFS; }
static int ro_removexattr(const char *p, const char *n) { return -EROFS; }
static int ro_fallocate(const char *p, int m, off_t o, off_t l, struct fuse_file_info *fi) { return -EROFS; }

static const struct fuse_operations ops = {
	.init = tm_init,
	.getattr = tm_getattr,
	.readdir = tm_readdir,
	.open = tm_open,
	.read = tm_read,
	.read_buf = tm_read_buf,
	.release = tm_release,
	.readlink = tm_readlink,
	.statfs = tm_statfs,
	.mknod = ro_mknod,
	.mkdir = ro_mkdir,
	.unlink = ro_path,
	.rmdir = ro_path,
	.symlink = ro_path2,
	.rename = ro_rename,
	.link = ro_path2,
	.chmod = ro_chmod,
	.chown = ro_chown,
	.truncate = ro_truncate,
	.write = ro_write,
	.create = ro_create,
	.utimens = ro_utimens,
	.setxattr = ro_setxattr,
	.removexattr = ro_removexattr,
	.fallocate = ro_fallocate,
};

/* The operands (INPUT... MOUNTPOINT) and our own options (-o manifest=FILE,
 * index=FILE, noindex); every other option stays in the argument list for
 * libfuse. */
struct operands {
	char **v;
	size_t n, cap;
	char *manifest;
	int manifest_twice;
	char *index;
	int index_twice;
	int no_index;
};

enum { KEY_MANIFEST = 1, KEY_INDEX, KEY_NOINDEX };

static const struct fuse_opt tm_opts[] = {
	FUSE_OPT_KEY("manifest=", KEY_MANIFEST),
	FUSE_OPT_KEY("index=", KEY_INDEX),
	FUSE_OPT_KEY("noindex", KEY_NOINDEX),
	FUSE_OPT_END,
};

static int opt_proc(void *data, const char *arg, int key, struct fuse_args *outargs)
{
	struct operands *o = data;
	if (key == KEY_MANIFEST) {
		o->manifest_twice |= o->manifest != NULL;
		free(o->manifest);
		o->manifest = strdup(arg + strlen("manifest="));
		return 0;
	}
	if (key == KEY_INDEX) {
		o->index_twice |= o->index != NULL;
		free(o->index);
		o->index = strdup(arg + strlen("index="));
		return 0;
	}
	if (key == KEY_NOINDEX) {
		o->no_index = 1;
		return 0;
	}
	if (key != FUSE_OPT_KEY_NONOPT)
		return 1;
	TM_GROW(o->v, o->cap, o->n + 1);
	o->v[o->n++] = strdup(arg);
	return 0;
}

static int usage_error(const char *msg)
{
	if (msg)
		fprintf(stderr, "tracemount: %s\n", msg);
	fputs("usage: tracemount INPUT... MOUNTPOINT [-f] [-d] [-s] [-o OPTION[,OPTION...]]\n"
	      "Try 'tracemount --help' for more information.\n",
	      stderr);
	return EXIT_USAGE;
}

/* auto_unmount needs fusermount3 (libfuse runs it even for root); where
 * it is missing, root still mounts with mount(2), without auto_unmount. */
static int have_fusermount3(void)
{
	const char *path = getenv("PATH");
	char dirs[4096];
	snprintf(dirs, sizeof dirs, "/usr/bin:/bin:%s", path ? path : "");
	for (char *save = NULL, *d = strtok_r(dirs, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
		char p[PATH_MAX];
		if (snprintf(p, sizeof p, "%s/fusermount3", d) < (int)sizeof p && access(p, X_OK) == 0)
			return 1;
	}
	return 0;
}

/* fsname=tracemount:<first input's basename>, then "+<N>" for N more
 * inputs. A comma would end the option and a backslash would escape the
 * next character (fuse_opt), so both become '_' in the shown name. */
static void fsname_option(const char *archive, size_t more, char *out, size_t cap)
{
	const char *s = strrchr(archive, '/');
	const char *base = s && s[1] ? s + 1 : archive;
	size_t n = (size_t)snprintf(out, cap, "-osubtype=tracemount,fsname=tracemount:");
	for (; *base && n + 64 < cap; base++) /* room for "+N,auto_unmount" */
		out[n++] = *base == ',' || *base == '\\' ? '_' : *base;
	out[n] = '\0';
	if (more)
		snprintf(out + n, cap - n, "+%zu", more);
	if (have_fusermount3())
		strncat(out, ",auto_unmount", cap - strlen(out) - 1);
}

/* A mount point must be an existing directory; checked before the archive
 * is opened so the error names the right culprit. Returns its absolute
 * path (caller frees) or NULL after printing why. */
static char *check_mountpoint(const char *mp)
{
	char *abs = realpath(mp, NULL);
	struct stat st;
	if (!abs || stat(abs, &st) != 0) {
		fprintf(stderr, "tracemount: %s: %s\n", mp, strerror(errno));
		free(abs);
		return NULL;
	}
	if (!S_ISDIR(st.st_mode)) {
		fprintf(stderr, "tracemount: %s: %s\n", mp, strerror(ENOTDIR));
		free(abs);
		return NULL;
	}
	return abs;
}

/* libfuse's handlers of the signals that end a mount, wrapped so that a
 * generation pass under way stops too (tm_stop_request): otherwise the
 * daemon went only when the pass was done (12 s after SIGTERM during the
 * 400-machine archive's timeline.tsv). */
static const int stop_signals[] = {SIGINT, SIGTERM, SIGHUP};
static struct sigaction fuse_handlers[3];

static void on_stop_signal(int sig)
{
	tm_stop_request();
	for (size_t i = 0; i < 3; i++)
		if (stop_signals[i] == sig && fuse_handlers[i].sa_handler != SIG_DFL &&
		    fuse_handlers[i].sa_handler != SIG_IGN)
			fuse_handlers[i].sa_handler(sig);
}

/* After fuse_set_signal_handlers (which leaves an ignored signal ignored),
 * or, with `restore`, before fuse_remove_signal_handlers (which removes
 * only its own). */
static void wrap_stop_signals(int restore)
{
	for (size_t i = 0; i < 3; i++) {
		if (restore) {
			sigaction(stop_signals[i], &fuse_handlers[i], NULL);
			continue;
		}
		if (sigaction(stop_signals[i], NULL, &fuse_handlers[i]) != 0 ||
		    fuse_handlers[i].sa_handler == SIG_DFL || fuse_handlers[i].sa_handler == SIG_IGN ||
		    (fuse_handlers[i].sa_flags & SA_SIGINFO))
			continue;
		struct sigaction sa = fuse_handlers[i];
		sa.sa_handler = on_stop_signal;
		sigaction(stop_signals[i], &sa, NULL);
	}
}

static int serve(struct fuse *fuse, const struct fuse_cmdline_opts *opts)
{
	if (opts->singlethread)
		return fuse_loop(fuse);
	struct fuse_loop_config *cfg = fuse_loop_cfg_create();
	if (!cfg)
		return -1;
	fuse_loop_cfg_set_clone_fd(cfg, (unsigned)opts->clone_fd);
	fuse_loop_cfg_set_max_threads(cfg, opts->max_threads);
	/* UINT_MAX means "not given"; libfuse 3.14 warns when it is passed on */
	if (opts->max_idle_threads != UINT_MAX)
		fuse_loop_cfg_set_idle_threads(cfg, opts->max_idle_threads);
	int rc = fuse_loop_mt(fuse, cfg);
	fuse_loop_cfg_destroy(cfg);
	return rc;
}

int fuse_front_main(int argc, char **argv)
{
	struct fuse_args args = FUSE_ARGS_INIT(0, NULL);
	struct operands o = {0};
	struct fuse_cmdline_opts opts = {0};
	struct mount_ctx mc = {.uid = getuid(), .gid = getgid()};
	struct fuse *fuse = NULL;
	char *mountpoint = NULL;
	int rc = EXIT_USAGE;

	/* Our defaults first, so a user's -o may override fsname or subtype;
	 * `ro` and `default_permissions` last, so nothing turns them off. */
	char defaults[PATH_MAX + 128];
	fuse_opt_add_arg(&args, argv[0]);
	for (int i = 1; i < argc; i++)
		fuse_opt_add_arg(&args, argv[i]);
	fuse_opt_add_arg(&args, "-oro,default_permissions");

	if (fuse_opt_parse(&args, &o, tm_opts, opt_proc) != 0) {
		rc = usage_error(NULL);
		goto out;
	}
	if (fuse_parse_cmdline(&args, &opts) != 0) {
		rc = usage_error(NULL);
		goto out;
	}
	if (opts.show_help) {
		front_usage(stdout);
		rc = EXIT_OK;
		goto out;
	}
	if (opts.show_version) {
		printf("tracemount %s\n", TM_VERSION);
		rc = EXIT_OK;
		goto out;
	}
	if (o.n < 2) {
		rc = usage_error("expected INPUT... and MOUNTPOINT");
		goto out;
	}
	if (o.manifest_twice || (o.manifest && !o.manifest[0])) {
		rc = usage_error(o.manifest_twice ? "-o manifest=FILE given twice" : "-o manifest= needs a FILE");
		goto out;
	}
	if (o.index_twice || (o.index && !o.index[0])) {
		rc = usage_error(o.index_twice ? "-o index=FILE given twice" : "-o index= needs a FILE");
		goto out;
	}
	size_t n_inputs = o.n - 1;
	fsname_option(o.v[0], n_inputs - 1, defaults, sizeof defaults);
	fuse_opt_insert_arg(&args, 1, defaults);

	/* fuse_new checks every remaining option: a mistyped one is a usage
	 * error, found before the archive is opened. */
	fuse = fuse_new(&args, &ops, sizeof(ops), &mc);
	if (!fuse) {
		rc = usage_error(NULL);
		goto out;
	}
	rc = EXIT_MERGE;
	if (!(mountpoint = check_mountpoint(o.v[n_inputs])))
		goto out_destroy;

	tm_error err = {0};
	/* Progress only in the foreground, on a terminal (tracemount(1),
	 * "Progress"); warnings go where the daemon's stderr goes. */
	int progress = opts.foreground && isatty(STDERR_FILENO);
	mc.tree = vtree_open_inputs(&(vt_inputs){.paths = (const char *const *)o.v, .n = n_inputs,
						 .manifest = o.manifest, .no_index = o.no_index,
						 .index_path = o.index, .warn = log_once,
						 .progress = progress ? front_progress : NULL},
				    &err);
	if (!mc.tree) {
		front_report(&err);
		goto out_destroy;
	}
	vtree_set_logger(mc.tree, log_once);
	front_warn_unexported(mc.tree);
	if (fuse_mount(fuse, mountpoint) != 0)
		goto out_destroy;
	if (fuse_daemonize(opts.foreground) != 0 || fuse_set_signal_handlers(fuse_get_session(fuse)) != 0)
		goto out_unmount;
	wrap_stop_signals(0);
	/* 0: unmounted; a positive value: the signal (SIGINT, SIGTERM, SIGHUP)
	 * that ended the loop, after which the mount is taken down below, as
	 * asked: both a normal end. -errno: a failure. */
	rc = serve(fuse, &opts) >= 0 ? EXIT_OK : EXIT_MERGE;
	wrap_stop_signals(1);
	fuse_remove_signal_handlers(fuse_get_session(fuse));
out_unmount:
	fuse_unmount(fuse);
out_destroy:
	fuse_destroy(fuse);
out:
	vtree_free(mc.tree);
	free(mountpoint);
	free(opts.mountpoint);
	for (size_t i = 0; i < o.n; i++)
		free(o.v[i]);
	free(o.v);
	free(o.manifest);
	free(o.index);
	fuse_opt_free_args(&args);
	return rc;
}
