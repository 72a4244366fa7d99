/* logsink.c - log lines: the one formatter, and the daemon's sink on stderr. */
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/logsink.h"
#include "common/parse.h"

/* Longer than any line the daemon, the tuner or the agent makes: the rest is cut. */
#define LINE_MAX_LEN 1024

void log_vto(log_sink *sink, const char *fmt, va_list ap)
{
	char line[LINE_MAX_LEN];

	if (!sink)
		return;
	vsnprintf(line, sizeof line, fmt, ap);
	sink(line);
}

void log_to(log_sink *sink, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vto(sink, fmt, ap);
	va_end(ap);
}

/*
 * Is stderr the journal?  systemd sets JOURNAL_STREAM=DEV:INODE for the
 * stream it connects; a stderr redirected since does not match.
 */
static bool stderr_is_journal(void)
{
	const char *js = getenv("JOURNAL_STREAM");
	char dev[32];
	const char *colon;
	long long d, i;
	struct stat st;

	if (!js || !(colon = strchr(js, ':')) || (size_t)(colon - js) >= sizeof dev)
		return false;
	snprintf(dev, sizeof dev, "%.*s", (int)(colon - js), js);
	if (parse_ll(dev, 0, LLONG_MAX, &d) || parse_ll(colon + 1, 0, LLONG_MAX, &i) || fstat(STDERR_FILENO, &st))
		return false;
	return (long long)st.st_dev == d && (long long)st.st_ino == i;
}

void log_stderr(const char *line)
{
	static int journal = -1;        /* looked at once, at the first line */
	char buf[LINE_MAX_LEN + 64], when[32];
	time_t t = time(NULL);
	struct tm tm;
	int n;

	if (journal < 0)
		journal = stderr_is_journal();
	if (journal) {
		n = snprintf(buf, sizeof buf, "%s\n", line);
	} else {
		if (!localtime_r(&t, &tm) || !strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S", &tm))
			snprintf(when, sizeof when, "-");
		n = snprintf(buf, sizeof buf, "%s ksm-run[%d]: %s\n", when, (int)getpid(), line);
	}
	if (n > (int)sizeof buf - 1) {
		n = (int)sizeof buf - 1;
		buf[n - 1] = '\n';     /* cut, but a line still */
	}
	if (write(STDERR_FILENO, buf, (size_t)n) < 0) {
		/* A closed or broken stderr: the daemon goes on without its log. */
	}
}
