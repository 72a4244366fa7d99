/* files.c - small text files, through the core's one reader. */
#include <errno.h>
#include <time.h>

#include "common/files.h"
#include "readfile.h"

int read_text(const char *path, char *buf, size_t len)
{
	ssize_t n = read_small_file(path, buf, len);

	if (n < 0)
		return -errno;
	while (n > 0 && buf[n - 1] == '\n')
		buf[--n] = '\0';
	return 0;
}

double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}
