/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Replays fuzzer corpora as ordinary tests when the compiler has no
 * libFuzzer (as systemd does): each argument is a file or a directory of files.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz/fuzz.h"

#define REPLAY_MAX (1U << 20)

static int replay_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf = malloc(REPLAY_MAX);
	size_t n;

	if (!f || !buf) {
		fprintf(stderr, "replay: %s: cannot read\n", path);
		free(buf);
		if (f)
			fclose(f);
		return -1;
	}
	n = fread(buf, 1, REPLAY_MAX, f);
	fclose(f);
	LLVMFuzzerTestOneInput(buf, n);
	free(buf);
	return 0;
}

static int replay(const char *path, unsigned *count)
{
	struct stat st;
	struct dirent **names;
	int n, r = 0;

	if (stat(path, &st) < 0)
		return -1;
	if (!S_ISDIR(st.st_mode)) {
		(*count)++;
		return replay_file(path);
	}
	n = scandir(path, &names, NULL, alphasort);
	for (int i = 0; i < n; i++) {
		char sub[4096];

		if (names[i]->d_name[0] != '.' &&
		    snprintf(sub, sizeof(sub), "%s/%s", path, names[i]->d_name) <
			    (int)sizeof(sub) &&
		    replay(sub, count) < 0)
			r = -1;
		free(names[i]);
	}
	free(names);
	return n < 0 ? -1 : r;
}

int main(int argc, char **argv)
{
	unsigned count = 0;

	for (int i = 1; i < argc; i++)
		if (replay(argv[i], &count) < 0)
			return 1;
	printf("replayed %u input(s)\n", count);
	return count > 0 ? 0 : 1;
}
