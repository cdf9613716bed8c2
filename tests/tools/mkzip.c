/* tests/tools/mkzip.c - write a ZIP whose member names and order are exactly
 * the ones given (the zip(1) command normalises names such as "./a/j.json").
 *
 *   mkzip OUT.zip NAME=FILE ...   store FILE as member NAME
 *   mkzip OUT.zip NAME/           a directory entry (empty member "NAME/")
 *   mkzip -d OUT.zip ...          deflate members instead of storing them
 *
 * Test tooling only: no ZIP64, members < 4 GiB. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

static void put16(FILE *f, unsigned v) { fputc(v & 0xff, f); fputc(v >> 8 & 0xff, f); }
static void put32(FILE *f, uint32_t v) { put16(f, v & 0xffff); put16(f, v >> 16); }

struct member { char *name; uint32_t crc, csize, usize, offset; int method; };

static unsigned char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f) { perror(path); exit(1); }
	size_t cap = 1 << 16, n = 0, r;
	unsigned char *b = malloc(cap);
	while ((r = fread(b + n, 1, cap - n, f)) > 0)
		if ((n += r) == cap)
			b = realloc(b, cap *= 2);
	fclose(f);
	*len = n;
	return b;
}

int main(int argc, char **argv)
{
	int use_deflate = 0, a = 1;
	if (argc > 1 && strcmp(argv[1], "-d") == 0) { use_deflate = 1; a++; }
	if (argc - a < 1) { fprintf(stderr, "usage: mkzip [-d] OUT NAME=FILE|NAME/ ...\n"); return 2; }
	FILE *out = fopen(argv[a], "wb");
	if (!out) { perror(argv[a]); return 1; }
	int n = argc - a - 1;
	struct member *ms = calloc((size_t)n + 1, sizeof(*ms));
	for (int i = 0; i < n; i++) {
		char *arg = argv[a + 1 + i], *eq = strchr(arg, '=');
		struct member *m = &ms[i];
		unsigned char *data = NULL, *comp = NULL;
		size_t len = 0, clen = 0;
		if (eq) {
			m->name = strndup(arg, (size_t)(eq - arg));
			data = slurp(eq + 1, &len);
		} else {
			m->name = strdup(arg);
		}
		m->crc = data ? (uint32_t)crc32(0, data, (uInt)len) : 0;
		m->usize = (uint32_t)len;
		m->method = use_deflate && len ? 8 : 0;
		if (m->method == 8) {
			z_stream z = {0};
			deflateInit2(&z, 6, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY);
			clen = deflateBound(&z, (uLong)len);
			comp = malloc(clen);
			z.next_in = data; z.avail_in = (uInt)len;
			z.next_out = comp; z.avail_out = (uInt)clen;
			deflate(&z, Z_FINISH);
			clen = z.total_out;
			deflateEnd(&z);
		}
		m->csize = (uint32_t)(m->method == 8 ? clen : len);
		m->offset = (uint32_t)ftell(out);
		put32(out, 0x04034b50); put16(out, 20); put16(out, 0); put16(out, (unsigned)m->method);
		put16(out, 0); put16(out, 0x21); put32(out, m->crc); put32(out, m->csize); put32(out, m->usize);
		put16(out, (unsigned)strlen(m->name)); put16(out, 0);
		fwrite(m->name, 1, strlen(m->name), out);
		if (m->csize)
			fwrite(m->method == 8 ? comp : data, 1, m->csize, out);
		free(data);
		free(comp);
	}
	uint32_t cd = (uint32_t)ftell(out);
	for (int i = 0; i < n; i++) {
		struct member *m = &ms[i];
		put32(out, 0x02014b50); put16(out, 20); put16(out, 20); put16(out, 0); put16(out, (unsigned)m->method);
		put16(out, 0); put16(out, 0x21); put32(out, m->crc); put32(out, m->csize); put32(out, m->usize);
		put16(out, (unsigned)strlen(m->name)); put16(out, 0); put16(out, 0); put16(out, 0); put16(out, 0);
		put32(out, 0); put32(out, m->offset);
		fwrite(m->name, 1, strlen(m->name), out);
	}
	uint32_t cdlen = (uint32_t)ftell(out) - cd;
	put32(out, 0x06054b50); put16(out, 0); put16(out, 0); put16(out, (unsigned)n); put16(out, (unsigned)n);
	put32(out, cdlen); put32(out, cd); put16(out, 0);
	for (int i = 0; i < n; i++)
		free(ms[i].name);
	free(ms);
	return fclose(out) == 0 ? 0 : 1;
}
