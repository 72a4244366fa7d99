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

/* A new file beside PATH that no one else made: its descriptor, or -errno.
 * Private until it is complete: the caller sets its mode. */
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
		fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
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

/* What may stand at PATH before it is replaced: nothing, or a regular file
 * (a link, FIFO or device there was planted, or is a mistake). */
static int replaceable(const char *path)
{
	struct stat st;

	if (lstat(path, &st))
		return errno == ENOENT ? 0 : -errno;
	if (S_ISLNK(st.st_mode))
		return -FILE_E_LINK;
	return S_ISREG(st.st_mode) ? 0 : -FILE_E_SPECIAL;
}

int file_replace(const char *path, const void *data, size_t len, mode_t mode)
{
	char dir[PATH_MAX], tmp[PATH_MAX + 64];
	const char *base;
	int fd, r;

	if (split_path(path, dir, sizeof dir, &base))
		return -ENAMETOOLONG;
	if ((r = replaceable(path)))
		return r;
	if ((fd = open_temporary(dir, base, tmp, sizeof tmp)) < 0)
		return fd;
	r = fchmod(fd, mode) ? -errno : write_all(fd, data, len);
	if (close(fd) && !r)
		r = -errno;
	/* rename(2) replaces a link planted since, never what it points to. */
	if (!r && rename(tmp, path))
		r = -errno;
	if (r)
		unlink(tmp);
	return r;
}

/*
 * An existing file to append to must be a regular file of this user or
 * root with no other name: a file someone else owns or linked to is
 * theirs to point elsewhere.  O_NONBLOCK: a FIFO never blocks the open.
 */
static int open_append(const char *path, mode_t mode)
{
	const int flags = O_WRONLY | O_APPEND | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC;
	struct stat st;
	int fd;

	for (int tries = 0; tries < 4; tries++) {
		if ((fd = open(path, flags)) >= 0)
			break;
		if (errno == ELOOP)
			return -FILE_E_LINK;
		if (errno == ENXIO)
			return -FILE_E_SPECIAL;         /* a FIFO without a reader */
		if (errno != ENOENT)
			return -errno;
		if ((fd = open(path, flags | O_CREAT | O_EXCL, mode)) >= 0)
			return fd;                      /* ours, new */
		if (errno != EEXIST)
			return errno == ELOOP ? -FILE_E_LINK : -errno;
	}
	if (fd < 0)
		return -EAGAIN;
	if (fstat(fd, &st)) {
		int err = errno;
		close(fd);
		return -err;
	}
	if (!S_ISREG(st.st_mode) || (st.st_uid != geteuid() && st.st_uid != 0) || st.st_nlink != 1) {
		close(fd);
		return !S_ISREG(st.st_mode) ? -FILE_E_SPECIAL : -FILE_E_FOREIGN;
	}
	return fd;
}

int file_append(const char *path, const void *data, size_t len, mode_t mode)
{
	int fd = open_append(path, mode), r;

	if (fd < 0)
		return fd;
	r = write_all(fd, data, len);
	if (close(fd) && !r)
		r = -errno;
	return r;
}

int file_open_input(const char *path, struct stat *st)
{
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC), err;

	if (fd < 0)
		return -errno;
	if (fstat(fd, st)) {
		err = errno;
		close(fd);
		return -err;
	}
	if (!S_ISREG(st->st_mode)) {
		close(fd);
		return -FILE_E_SPECIAL;
	}
	return fd;
}

int file_remove_own(const char *path)
{
	struct stat st;

	if (lstat(path, &st) || !S_ISREG(st.st_mode) || st.st_uid != geteuid())
		return -1;
	return unlink(path);
}

mode_t file_mode_umask(mode_t mode)
{
	mode_t mask = umask(0);

	umask(mask);
	return mode & ~mask;
}

const char *file_strerror(int err)
{
	switch (err) {
	case FILE_E_LINK:
		return "it is a symbolic link (ksm-run writes no file through a link)";
	case FILE_E_SPECIAL:
		return "not a regular file (a FIFO, socket, device or directory)";
	case FILE_E_FOREIGN:
		return "it belongs to another user or has another name (a hard link): "
		       "ksm-run appends only to its user's or root's files";
	default:
		return strerror(err);
	}
}
