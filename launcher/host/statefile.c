/* statefile.c - files under /run/ksm-run, never trusted blindly. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "host/statefile.h"

int statedir_check(const char *dir, int create, char *why, size_t whylen)
{
	struct stat st;

	if (create && mkdir(dir, 0755) && errno != EEXIST) {
		int err = errno;
		snprintf(why, whylen, "cannot make %s: %s", dir, strerror(err));
		return -err;
	}
	if (lstat(dir, &st)) {
		int err = errno;
		snprintf(why, whylen, "%s: %s", dir, strerror(err));
		return -err;
	}
	if (!S_ISDIR(st.st_mode)) {
		snprintf(why, whylen, "%s is not a directory (a symbolic link or file planted there?)", dir);
		return -ENOTDIR;
	}
	if (st.st_uid != geteuid() || (st.st_mode & (S_IWGRP | S_IWOTH))) {
		snprintf(why, whylen, "%s is owned by uid %d with mode %04o: it must belong to uid %d "
			 "and be writable by no one else", dir, (int)st.st_uid, (unsigned)(st.st_mode & 07777),
			 (int)geteuid());
		return -EPERM;
	}
	return 0;
}

static int open_in(const char *dir, const char *name, int flags, mode_t mode)
{
	char path[256];

	if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, name) >= sizeof path)
		return -ENAMETOOLONG;
	int fd = open(path, flags | O_CLOEXEC | O_NOFOLLOW, mode);
	return fd < 0 ? -errno : fd;
}

/* A regular file of ours, not a device, FIFO or someone else's file. */
static int ours(int fd)
{
	struct stat st;

	if (fstat(fd, &st))
		return -errno;
	return S_ISREG(st.st_mode) && st.st_uid == geteuid() ? 0 : -EPERM;
}

int statefile_lock(const char *dir)
{
	int fd = open_in(dir, "lock", O_RDWR | O_CREAT, 0600), r;
	struct stat st;

	if (fd < 0)
		return fd;
	if ((r = ours(fd))) {
		close(fd);
		return r;
	}
	/* Anyone who can open it can hold it, and make every ksm-run wait: 0600. */
	if (fstat(fd, &st) == 0 && (st.st_mode & 077) && fchmod(fd, 0600)) {
		r = -errno;
		close(fd);
		return r;
	}
	while (flock(fd, LOCK_EX))
		if (errno != EINTR) {
			int err = errno;
			close(fd);
			return -err;
		}
	return fd;
}

long statefile_read(const char *dir, const char *name, char *buf, size_t size)
{
	int fd = open_in(dir, name, O_RDONLY | O_NONBLOCK, 0), r;
	size_t have = 0;
	ssize_t n;

	if (fd < 0)
		return fd;
	if ((r = ours(fd))) {
		close(fd);
		return r;
	}
	while ((n = read(fd, buf + have, size - 1 - have)) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int err = errno;
			close(fd);
			return -err;
		}
		have += (size_t)n;
		if (have == size - 1) {
			char extra;
			int more = read(fd, &extra, 1) != 0;
			close(fd);
			buf[have] = '\0';
			return more ? -EFBIG : (long)have;
		}
	}
	close(fd);
	buf[have] = '\0';
	return (long)have;
}

/*
 * A full file system (a small /run) has no room for the new copy, but the
 * file itself may have room in the blocks it holds: then it is rewritten
 * in place, under the lock that every writer and loader holds.  Only when
 * the blocks it holds take the whole text, so that a write never stops
 * half way.  A reader without the lock (--status) may see it half written
 * for the moment of the write, and says the state is corrupt: better
 * than a state that names instances that ended.
 */
static int rewrite_in_place(const char *dir, const char *name, const char *text, size_t len)
{
	int fd = open_in(dir, name, O_WRONLY | O_NONBLOCK, 0), r;
	struct stat st;

	if (fd < 0)
		return fd == -ENOENT ? -ENOSPC : fd;
	if ((r = ours(fd)) || (r = fstat(fd, &st) ? -errno : 0))
		goto out;
	if ((unsigned long long)st.st_blocks * 512 < len) {
		r = -ENOSPC;
		goto out;
	}
	if (pwrite(fd, text, len, 0) != (ssize_t)len || ftruncate(fd, (off_t)len) || fsync(fd))
		r = errno ? -errno : -EIO;
out:
	close(fd);
	return r;
}

/* The new text in DIR/NAME.tmp, renamed over DIR/NAME: readers see the old file or the new. */
static int replace(const char *dir, const char *name, const char *text, size_t len)
{
	char tmp[128], path[256], final[256];
	int fd, err = 0;
	ssize_t n;

	snprintf(tmp, sizeof tmp, "%s.tmp", name);
	snprintf(path, sizeof path, "%s/%s", dir, tmp);
	snprintf(final, sizeof final, "%s/%s", dir, name);
	/* We hold the lock: a .tmp left by a crash, or planted, goes first. */
	if (unlink(path) && errno != ENOENT)
		return -errno;
	if ((fd = open_in(dir, tmp, O_WRONLY | O_CREAT | O_EXCL, 0600)) < 0)
		return fd;
	errno = 0;
	if ((n = write(fd, text, len)) >= 0 && (size_t)n < len)
		err = ENOSPC;           /* a short write to a regular file: no room */
	else if (n < 0 || fsync(fd))
		err = errno ? errno : EIO;
	if (close(fd) && !err)
		err = errno;
	if (!err && rename(path, final))
		err = errno;
	if (err)
		unlink(path);
	return -err;
}

int statefile_write(const char *dir, const char *name, const char *text, size_t len)
{
	int r = replace(dir, name, text, len);

	return r == -ENOSPC || r == -EDQUOT ? rewrite_in_place(dir, name, text, len) : r;
}
