/* ksmstat.c - /proc/self/ksm_stat, parsed by field name. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "ksmstat.h"

int ksm_stat_read(char *buf, size_t size)
{
	size_t have = 0;
	ssize_t n;
	int fd = open("/proc/self/ksm_stat", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -1;
	while (have < size - 1 && (n = read(fd, buf + have, size - 1 - have)) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			close(fd);
			return -1;
		}
		have += (size_t)n;
	}
	buf[have] = '\0';
	close(fd);
	return 0;
}

int ksm_stat_next(char **cursor, const char **name, const char **value)
{
	char *line = *cursor, *nl, *sep;

	while (*line) {
		nl = strchr(line, '\n');
		if (nl)
			*nl = '\0';
		*cursor = nl ? nl + 1 : line + strlen(line);
		sep = line + strcspn(line, ": ");
		if (*sep && sep > line) {
			*sep++ = '\0';
			sep += strspn(sep, ": ");
			*name = line;
			*value = sep;
			return 1;
		}
		line = *cursor;
	}
	return 0;
}
