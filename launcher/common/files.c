/*
 * files.c - small text files, through the core's one reader; files that
 * ksm-run writes for others (metrics, fingerprints), replaced atomically.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

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

static int split_path(const char *path, char *dir, size_t dlen, const char **base)
{
	const char *slash = strrchr(path, '/');

	*base = slash ? slash + 1 : path;
	if (!slash)
		return snprintf(dir, dlen, ".") >= (int)dlen ? -1 : 0;
	if (slash == path)
		return snprintf(dir, dlen, "/") >= (int)dlen ? -1 : 0;
	return snprintf(dir, dlen, "%.*s", (int)(slash - path), path) >= (int)dlen ? -1 : 0;
}

int file_check_new(const char *path, char *why, size_t whylen)
{
	char dir[PATH_MAX];
	const char *base;
	struct stat st;

	if (split_path(path, dir, sizeof dir, &base) || !*base || !strcmp(base, ".") || !strcmp(base, "..")) {
		snprintf(why, whylen, "not a file name");
		return -1;
	}
	if (stat(dir, &st) || !S_ISDIR(st.st_mode)) {
		snprintf(why, whylen, "its directory '%s' does not exist", dir);
		return -1;
	}
	if (access(dir, W_OK | X_OK)) {
		snprintf(why, whylen, "cannot write in its directory '%s': %s", dir, strerror(errno));
		return -1;
	}
	if (!lstat(path, &st) && S_ISDIR(st.st_mode)) {
		snprintf(why, whylen, "is a directory");
		return -1;
	}
	return 0;
}

/* A new file beside PATH that no one else made: its descriptor, or -errno. */
static int open_temporary(const char *dir, const char *base, char *tmp, size_t len)
{
	for (int tries = 0; tries < 16; tries++) {
		uint64_t r;
		int fd;
		if (getrandom(&r, sizeof r, GRND_NONBLOCK) != (ssize_t)sizeof r)
			r = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32) ^ (uint64_t)tries;
		/* A leading dot and no suffix: node_exporter's textfile collector
		 * (*.prom) and readers of *.kfp skip it. */
		if (snprintf(tmp, len, "%s/.%s.%016llx", dir, base, (unsigned long long)r) >= (int)len)
			return -ENAMETOOLONG;
		fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
		if (fd >= 0)
			return fd;
		if (errno != EEXIST)
			return -errno;
	}
	return -EEXIST;
}

static int write_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

int file_replace(const char *path, const void *data, size_t len, mode_t mode)
{
	char dir[PATH_MAX], tmp[PATH_MAX + 64];
	const char *base;
	int fd, r;

	if (split_path(path, dir, sizeof dir, &base))
		return -ENAMETOOLONG;
	if ((fd = open_temporary(dir, base, tmp, sizeof tmp)) < 0)
		return fd;
	r = fchmod(fd, mode) ? -errno : write_all(fd, data, len);
	if (close(fd) && !r)
		r = -errno;
	if (!r && rename(tmp, path))
		r = -errno;
	if (r)
		unlink(tmp);
	return r;
}
