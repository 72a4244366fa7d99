/*
 * msg.c: ksm-run's messages on stderr, and the small readers and parsers the
 * other files share.  Messages never go to stdout: stdout belongs to the
 * command.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ksmrun.h"

const char *progname = "ksm-run";
int quiet_msgs;

FMT(2, 0) static void vmsg(int err, const char *fmt, va_list ap)
{
	char line[1024];
	int n = snprintf(line, sizeof line, "%s: ", progname);

	vsnprintf(line + n, sizeof line - (size_t)n, fmt, ap);
	if (err)
		snprintf(line + strlen(line), sizeof line - strlen(line), ": %s", strerror(err));
	/* One write per line, so that lines from the command do not cut it. */
	size_t len = strlen(line);
	if (len + 1 < sizeof line)
		line[len++] = '\n';
	if (write(STDERR_FILENO, line, len) < 0)
		return;
}

void warnx_(const char *fmt, ...)
{
	va_list ap;
	int saved = errno;

	va_start(ap, fmt);
	vmsg(0, fmt, ap);
	va_end(ap);
	errno = saved;
}

void warn_errno(int err, const char *fmt, ...)
{
	va_list ap;
	int saved = errno;

	va_start(ap, fmt);
	vmsg(err, fmt, ap);
	va_end(ap);
	errno = saved;
}

/* Only for errors found before anything has been changed or started. */
void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg(0, fmt, ap);
	va_end(ap);
	exit(EXIT_OWN);
}

double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Reads a small file into buf, NUL-terminated, trailing newline removed. */
int read_text(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n, got = 0;

	if (fd < 0)
		return -errno;
	while ((size_t)got < len - 1 && (n = read(fd, buf + got, len - 1 - (size_t)got)) > 0)
		got += n;
	n = got;
	close(fd);
	buf[n] = '\0';
	while (n > 0 && buf[n - 1] == '\n')
		buf[--n] = '\0';
	return 0;
}

/* Strict decimal: no sign surprises, no trailing junk, range checked. */
int parse_ll(const char *s, long long min, long long max, long long *out)
{
	char *end;
	long long v;

	if (!s || !*s || (*s != '-' && (*s < '0' || *s > '9')))
		return -1;
	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno || *end || v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

/* Bytes for people: "+12.3 MiB".  Eight rotating buffers serve one printf. */
const char *human_bytes(long long bytes, bool sign)
{
	static char bufs[8][32];
	static int next;
	char *b = bufs[next++ % 8];
	double v = (double)(bytes < 0 ? -bytes : bytes);
	const char *unit = "B";

	if (bytes == LLONG_MIN)
		return "n/a";
	if (v >= 1024.0 * 1024 * 1024) { v /= 1024.0 * 1024 * 1024; unit = "GiB"; }
	else if (v >= 1024.0 * 1024) { v /= 1024.0 * 1024; unit = "MiB"; }
	else if (v >= 1024.0) { v /= 1024.0; unit = "KiB"; }
	snprintf(b, 32, "%s%.*f %s", bytes < 0 ? "-" : sign ? "+" : "", *unit == 'B' ? 0 : 1, v, unit);
	return b;
}
