/* core/container/la.c - libarchive opened on first use (core/container/la.h says why). */
#include "container/la.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

/* The soname the Makefile found at build time (the one -larchive would
 * have recorded). */
#ifndef TM_LIBARCHIVE
#define TM_LIBARCHIVE "libarchive.so.13"
#endif

static pthread_once_t once = PTHREAD_ONCE_INIT;
static tm_la table;
static int loaded;
static char why[256];

/* 0 when every function is found; else why names the first missing. */
static int lookup(void *h)
{
	/* dlsym gives an object pointer; POSIX guarantees it converts */
#define TM_LA_LOOKUP(f)                                                                       \
	if (!(*(void **)&table.f = dlsym(h, #f))) {                                            \
		snprintf(why, sizeof why, "%s: no %s", TM_LIBARCHIVE, #f);                     \
		return -1;                                                                     \
	}
	TM_LA_FUNCTIONS(TM_LA_LOOKUP)
#undef TM_LA_LOOKUP
	return 0;
}

static void load(void)
{
	void *h = dlopen(TM_LIBARCHIVE, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		const char *e = dlerror();
		snprintf(why, sizeof why, "%s", e ? e : "dlopen failed");
		return;
	}
	if (lookup(h) != 0) {
		dlclose(h); /* no use without every function */
		return;
	}
	loaded = 1; /* h stays open for the process's life */
}

const tm_la *tm_la_get(tm_error *err)
{
	pthread_once(&once, load);
	if (!loaded) {
		tm_err(err, TM_EIO, "cannot load libarchive: %s", why);
		return NULL;
	}
	return &table;
}
