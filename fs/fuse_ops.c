/* fs/fuse_ops.c - the FUSE daemon: one operations table, each op a thin
 * call into core/vtree.h. Setup happens in order before daemonizing (parse
 * options, open and validate the archive) so every setup error reaches the
 * shell that ran the command. */
#define FUSE_USE_VERSION 314

#include <errno.h>
#include <fcntl.h>
#include <fuse.h>
#include <fuse_lowlevel.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "front.h"

static tm_vtree *tree(void)
{
	return fuse_get_context()->private_data;
}

/* A core failure found after mount: log the reason once per call site on
 * the daemon's stderr (DESIGN.md) and hand the kernel an errno. */
static int fail(const tm_error *err)
{
	int e = front_errno(err->code);
	if (e == EIO)
		fprintf(stderr, "tracemount: %s\n", err->msg);
	return -e;
}

static void to_stat(const vt_stat *v, struct stat *st)
{
	memset(st, 0, sizeof(*st));
	st->st_ino = v->ino;
	st->st_mode = v->kind == VT_DIR ? S_IFDIR | 0555 : v->kind == VT_LNK ? S_IFLNK | 0777 : S_IFREG | 0444;
	st->st_nlink = v->nlink;
	st->st_size = (off_t)v->size;
	st->st_blksize = 4096;
	st->st_blocks = (blkcnt_t)((v->size + 511) / 512);
	st->st_uid = getuid();
	st->st_gid = getgid();
	st->st_mtim.tv_sec = st->st_ctim.tv_sec = st->st_atim.tv_sec = v->mtime;
}

static int tm_getattr(const char *path, struct stat *st, struct fuse_file_info *fi)
{
	(void)fi;
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

static int fill_entry(void *ctx, const char *name, vt_ino ino, const vt_stat *v)
{
	(void)ino;
	struct fill_ctx *fc = ctx;
	struct stat st;
	/* No attributes for entries that would cost a tier: `ls` stays instant
	 * and the kernel asks getattr only when it needs them. */
	if (v) {
		to_stat(v, &st);
		return fc->filler(fc->buf, name, &st, 0, FUSE_FILL_DIR_PLUS);
	}
	return fc->filler(fc->buf, name, NULL, 0, 0);
}

static int tm_readdir(const char *path, void *buf, fuse_fill_dir_t filler, off_t off, struct fuse_file_info *fi,
		      enum fuse_readdir_flags flags)
{
	(void)off, (void)fi, (void)flags;
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
	fi->keep_cache = 1; /* contents never change while mounted */
	return 0;
}

static int tm_read(const char *path, char *buf, size_t size, off_t off, struct fuse_file_info *fi)
{
	(void)path;
	tm_error err = {0};
	ssize_t n = vtree_file_read((vt_file *)(uintptr_t)fi->fh, buf, size, (uint64_t)off, &err);
	return n < 0 ? fail(&err) : (int)n;
}

/* Stored members are handed to libfuse as (fd, offset): the bytes go from
 * the archive to the kernel without passing through our buffers (spliced
 * where the kernel allows). Everything else is decoded into memory. */
static int tm_read_buf(const char *path, struct fuse_bufvec **bufp, size_t size, off_t off,
		       struct fuse_file_info *fi)
{
	(void)path;
	vt_file *f = (vt_file *)(uintptr_t)fi->fh;
	struct fuse_bufvec *bv = malloc(sizeof(*bv));
	if (!bv)
		return -ENOMEM;
	int fd;
	uint64_t base, fsize;
	if (vtree_file_fd(f, &fd, &base, &fsize) == 0) {
		uint64_t o = (uint64_t)off;
		size_t n = o >= fsize ? 0 : fsize - o < size ? (size_t)(fsize - o) : size;
		*bv = FUSE_BUFVEC_INIT(n);
		bv->buf[0].flags = FUSE_BUF_IS_FD | FUSE_BUF_FD_SEEK;
		bv->buf[0].fd = fd;
		bv->buf[0].pos = (off_t)(base + o);
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
	ssize_t n = vtree_file_read(f, bv->buf[0].mem, size, (uint64_t)off, &err);
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
	(void)path;
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

static int tm_statfs(const char *path, struct statvfs *sv)
{
	(void)path;
	memset(sv, 0, sizeof(*sv));
	sv->f_bsize = sv->f_frsize = 4096;
	sv->f_namemax = 255;
	sv->f_flag = ST_RDONLY;
	return 0;
}

static void *tm_init(struct fuse_conn_info *conn, struct fuse_config *cfg)
{
	/* Replies that carry an fd are spliced into the FUSE device. */
	if (conn->capable & FUSE_CAP_SPLICE_WRITE)
		conn->want |= FUSE_CAP_SPLICE_WRITE | FUSE_CAP_SPLICE_MOVE;
	cfg->use_ino = 1;
	cfg->kernel_cache = 1;
	cfg->entry_timeout = cfg->attr_timeout = cfg->negative_timeout = 60;
	return tree();
}

/* Read-only everywhere: every mutating operation answers EROFS. */
static int ro_path(const char *p) { (void)p; return -EROFS; }
static int ro_path2(const char *a, const char *b) { (void)a, (void)b; return -EROFS; }
static int ro_rename(const char *a, const char *b, unsigned f) { (void)a, (void)b, (void)f; return -EROFS; }
static int ro_mkdir(const char *p, mode_t m) { (void)p, (void)m; return -EROFS; }
static int ro_mknod(const char *p, mode_t m, dev_t d) { (void)p, (void)m, (void)d; return -EROFS; }
static int ro_chmod(const char *p, mode_t m, struct fuse_file_info *fi) { (void)p, (void)m, (void)fi; return -EROFS; }
static int ro_chown(const char *p, uid_t u, gid_t g, struct fuse_file_info *fi) { (void)p, (void)u, (void)g, (void)fi; return -EROFS; }
static int ro_truncate(const char *p, off_t o, struct fuse_file_info *fi) { (void)p, (void)o, (void)fi; return -EROFS; }
static int ro_write(const char *p, const char *b, size_t s, off_t o, struct fuse_file_info *fi)
{ (void)p, (void)b, (void)s, (void)o, (void)fi; return -EROFS; }
static int ro_create(const char *p, mode_t m, struct fuse_file_info *fi) { (void)p, (void)m, (void)fi; return -EROFS; }
static int ro_utimens(const char *p, const struct timespec tv[2], struct fuse_file_info *fi)
{ (void)p, (void)tv, (void)fi; return -EROFS; }
static int ro_setxattr(const char *p, const char *n, const char *v, size_t s, int f)
{ (void)p, (void)n, (void)v, (void)s, (void)f; return -EROFS; }
static int ro_removexattr(const char *p, const char *n) { (void)p, (void)n; return -EROFS; }

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
};

struct cmdline {
	char *archive;
	int nonopt;
};

/* The first non-option argument is the archive; the second (the mount
 * point) stays for fuse_parse_cmdline. */
static int opt_proc(void *data, const char *arg, int key, struct fuse_args *outargs)
{
	(void)outargs;
	struct cmdline *c = data;
	if (key == FUSE_OPT_KEY_NONOPT && !c->archive) {
		c->archive = strdup(arg);
		return 0;
	}
	if (key == FUSE_OPT_KEY_NONOPT)
		c->nonopt++;
	return 1;
}

static const char *base_name(const char *p)
{
	const char *s = strrchr(p, '/');
	return s && s[1] ? s + 1 : p;
}

int fuse_front_main(int argc, char **argv)
{
	struct fuse_args args = FUSE_ARGS_INIT(argc, argv);
	struct cmdline cl = {0};
	struct fuse_cmdline_opts opts = {0};
	int rc = EXIT_USAGE;
	tm_vtree *t = NULL;
	struct fuse *fuse = NULL;

	if (fuse_opt_parse(&args, &cl, NULL, opt_proc) != 0)
		goto out;
	if (!cl.archive || cl.nonopt != 1) {
		fprintf(stderr, "tracemount: expected ARCHIVE and MOUNTPOINT\n");
		front_usage(stderr);
		goto out;
	}
	/* Read-only always; auto_unmount so a killed daemon leaves no stale
	 * mount. A user's -o options come after and may add more. */
	char fsopt[4200];
	snprintf(fsopt, sizeof fsopt, "-oro,default_permissions,auto_unmount,subtype=tracemount,fsname=tracemount:%s",
		 base_name(cl.archive));
	for (char *p = fsopt + 3; *p; p++)
		if (*p == ',' && p > strstr(fsopt, "fsname="))
			*p = '_'; /* a comma would end the option */
	fuse_opt_insert_arg(&args, 1, fsopt);
	if (fuse_parse_cmdline(&args, &opts) != 0)
		goto out;
	if (opts.show_help) {
		front_usage(stdout);
		rc = EXIT_OK;
		goto out;
	}
	if (!opts.mountpoint) {
		fprintf(stderr, "tracemount: expected ARCHIVE and MOUNTPOINT\n");
		goto out;
	}

	tm_error err = {0};
	t = vtree_open(cl.archive, &err);
	if (!t) {
		fprintf(stderr, "%s\n", err.msg); /* the exact text, as Perfetto prints it */
		rc = EXIT_MERGE;
		goto out;
	}
	rc = EXIT_MERGE;
	fuse = fuse_new(&args, &ops, sizeof(ops), t);
	if (!fuse)
		goto out;
	if (fuse_mount(fuse, opts.mountpoint) != 0)
		goto out_destroy;
	if (fuse_daemonize(opts.foreground) != 0)
		goto out_unmount;
	if (fuse_set_signal_handlers(fuse_get_session(fuse)) != 0)
		goto out_unmount;
	int lrc;
	if (opts.singlethread) {
		lrc = fuse_loop(fuse);
	} else {
		struct fuse_loop_config *cfg = fuse_loop_cfg_create();
		fuse_loop_cfg_set_clone_fd(cfg, opts.clone_fd);
		fuse_loop_cfg_set_max_threads(cfg, opts.max_threads);
		fuse_loop_cfg_set_idle_threads(cfg, opts.max_idle_threads);
		lrc = fuse_loop_mt(fuse, cfg);
		fuse_loop_cfg_destroy(cfg);
	}
	rc = lrc == 0 ? EXIT_OK : EXIT_MERGE;
	fuse_remove_signal_handlers(fuse_get_session(fuse));
out_unmount:
	fuse_unmount(fuse);
out_destroy:
	fuse_destroy(fuse);
out:
	vtree_free(t);
	free(opts.mountpoint);
	free(cl.archive);
	fuse_opt_free_args(&args);
	return rc;
}
