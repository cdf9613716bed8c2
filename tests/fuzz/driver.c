/* tests/fuzz/driver.c - runs a libFuzzer target over files named on the
 * command line (or every file in named directories) without libFuzzer, so
 * `make check` replays kept crashers and seeds under ASan + UBSan with gcc.
 * Prints one PASS line per directory or file argument. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* fuzz_input.h, fuzz_thorough(): replaying, a target may take its time. */
const int fuzz_replaying = 1;

static int run_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		perror(path);
		return -1;
	}
	size_t cap = 1 << 16, len = 0;
	uint8_t *buf = malloc(cap);
	size_t n;
	while (buf && (n = fread(buf + len, 1, cap - len, f)) > 0) {
		len += n;
		if (len == cap)
			buf = realloc(buf, cap *= 2);
	}
	fclose(f);
	if (!buf)
		return -1;
	LLVMFuzzerTestOneInput(buf, len);
	free(buf);
	return 0;
}

int main(int argc, char **argv)
{
	int bad = 0;
	for (int i = 1; i < argc; i++) {
		struct stat st;
		if (stat(argv[i], &st) != 0)
			continue;
		int count = 0;
		if (S_ISDIR(st.st_mode)) {
			DIR *d = opendir(argv[i]);
			struct dirent *e;
			while (d && (e = readdir(d))) {
				if (e->d_name[0] == '.')
					continue;
				char p[4096];
				snprintf(p, sizeof p, "%s/%s", argv[i], e->d_name);
				bad |= run_file(p) != 0;
				count++;
			}
			if (d)
				closedir(d);
		} else {
			bad |= run_file(argv[i]) != 0;
			count++;
		}
		printf("%s %s (%d inputs)\n", bad ? "FAIL" : "PASS", argv[i], count);
	}
	return bad;
}
