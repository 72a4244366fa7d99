/* log.c - messages of the library, on stderr only (never stdout). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"

enum log_level log_threshold = LOG_WARN;

/*
 * Descriptor 2 as it was at start.  A daemon that closes stderr and opens
 * a data file that happens to get number 2 must not find the library's
 * warnings in that file: the library writes only while 2 is still the
 * same file (device and inode).
 */
static dev_t stderr_dev;
static ino_t stderr_ino;
static int stderr_known;

void log_init(void)
{
	struct stat st;

	stderr_known = fstat(STDERR_FILENO, &st) == 0;
	if (stderr_known) {
		stderr_dev = st.st_dev;
		stderr_ino = st.st_ino;
	}
}

static int stderr_unchanged(void)
{
	struct stat st;

	return stderr_known && fstat(STDERR_FILENO, &st) == 0 && st.st_dev == stderr_dev &&
	       st.st_ino == stderr_ino;
}

static const char *const level_names[] = {
	[LOG_ERROR] = "error: ",
	[LOG_WARN] = "warning: ",
	[LOG_INFO] = "",
	[LOG_DEBUG] = "debug: ",
};

void log_msg(enum log_level level, const char *fmt, ...)
{
	char line[1024];
	int saved_errno = errno, len;
	va_list ap;

	if (level > log_threshold || level == LOG_QUIET || !stderr_unchanged())
		return;
	len = snprintf(line, sizeof line, "libksmenable[%d]: %s", (int)getpid(), level_names[level]);
	va_start(ap, fmt);
	len += vsnprintf(line + len, sizeof line - (size_t)len, fmt, ap);
	va_end(ap);
	if (len > (int)sizeof line - 2)
		len = (int)sizeof line - 2;
	line[len++] = '\n';
	/* A failed write to stderr has nowhere to be reported. */
	if (write(STDERR_FILENO, line, (size_t)len) < 0)
		(void)0;
	errno = saved_errno;
}
