/* readfile.c - one reader of small files for the library and ksm-run. */
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include "readfile.h"

ssize_t read_small_file(const char *path, char *buf, size_t size)
{
	size_t have = 0;
	ssize_t n;
	int fd, err;

	if (size == 0) {
		errno = EINVAL;
		return -1;
	}
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return -1;
	while (have < size - 1) {
		n = read(fd, buf + have, size - 1 - have);
		if (n == 0)
			break;
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			err = errno;
			close(fd);
			errno = err;
			return -1;
		}
		have += (size_t)n;
	}
	buf[have] = '\0';
	close(fd);
	return (ssize_t)have;
}
