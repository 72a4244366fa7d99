/* msg.c - ksm-run's messages and its error and out-of-memory policy. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/msg.h"

const char *progname = "ksm-run";

FMT(2, 0) static void vmsg(int err, const char *fmt, va_list ap)
{
	char line[1024];
	int n = snprintf(line, sizeof line, "%s: ", progname);
	size_t len;

	vsnprintf(line + n, sizeof line - (size_t)n, fmt, ap);
	if (err)
		snprintf(line + strlen(line), sizeof line - strlen(line), ": %s", strerror(err));
	/* One write per line, so that lines from the command do not cut it. */
	len = strlen(line);
	if (len + 1 < sizeof line)
		line[len++] = '\n';
	if (write(STDERR_FILENO, line, len) < 0)
		return;               /* a closed stderr has nowhere to be told */
}

void msg(const char *fmt, ...)
{
	va_list ap;
	int saved = errno;

	va_start(ap, fmt);
	vmsg(0, fmt, ap);
	va_end(ap);
	errno = saved;
}

void msg_errno(int err, const char *fmt, ...)
{
	va_list ap;
	int saved = errno;

	va_start(ap, fmt);
	vmsg(err, fmt, ap);
	va_end(ap);
	errno = saved;
}

void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg(0, fmt, ap);
	va_end(ap);
	exit(EXIT_OWN);
}

void die_errno(int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg(err, fmt, ap);
	va_end(ap);
	exit(EXIT_OWN);
}

void die_oom(void)
{
	die("out of memory");
}

void *xmalloc(size_t size)
{
	void *p = malloc(size ? size : 1);

	if (!p)
		die_oom();
	return p;
}

void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);

	if (!p)
		die_oom();
	return p;
}

void *xrealloc(void *p, size_t size)
{
	void *np = realloc(p, size ? size : 1);

	if (!np)
		die_oom();
	return np;
}

void *xgrow(void *p, size_t *cap, size_t need, size_t size)
{
	size_t ncap = *cap ? *cap : 16;

	if (need <= *cap)
		return p;
	while (ncap < need) {
		if (ncap > ((size_t)-1 / 2) / size)
			die_oom();
		ncap *= 2;
	}
	p = xrealloc(p, ncap * size);
	*cap = ncap;
	return p;
}

char *xstrdup(const char *s)
{
	char *d = strdup(s);

	if (!d)
		die_oom();
	return d;
}
