/*
 * report.c - KSM_ENABLE_REPORT: one JSON line per process, at exit.
 *
 * The line is built in a buffer and appended with a single write(2) on an
 * O_APPEND descriptor, so lines of processes that end together never mix.
 * The launcher reads these lines; the keys are documented in
 * libksmenable(7) and stay stable.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "guard.h"
#include "ksmstat.h"
#include "library.h"
#include "marks.h"
#include "log.h"
#include "readfile.h"
#include "report.h"
#include "utf8.h"

struct line {
	char buf[4096];
	size_t len;
};

static void put(struct line *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void put(struct line *l, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (l->len >= sizeof l->buf)
		return;
	va_start(ap, fmt);
	n = vsnprintf(l->buf + l->len, sizeof l->buf - l->len, fmt, ap);
	va_end(ap);
	if (n > 0)
		l->len += (size_t)n;
}

/* A JSON string: the command name is chosen by the program (any bytes). */
static void put_string(struct line *l, const char *s)
{
	put(l, "\"");
	for (const unsigned char *p = (const unsigned char *)s; *p;) {
		char out[JSON_CHAR_MAX];
		size_t len;

		p += json_char(p, out, &len);
		put(l, "%.*s", (int)len, out);
	}
	put(l, "\"");
}

static void read_comm(char *comm, size_t size)
{
	if (read_small_file("/proc/self/comm", comm, size) < 0)
		comm[0] = '\0';
	comm[strcspn(comm, "\n")] = '\0';
}

/* ksm_stat values are numbers, or yes/no on the newer lines. */
static void put_stat_value(struct line *l, const char *v)
{
	if (!strcmp(v, "yes") || !strcmp(v, "no"))
		put(l, "%s", v[0] == 'y' ? "true" : "false");
	else if (v[strspn(v, "-0123456789")] == '\0' && *v)
		put(l, "%s", v);
	else
		put_string(l, v);
}

static void put_ksm_stat(struct line *l)
{
	char text[1024], *cursor = text;
	const char *name, *value;
	int first = 1;

	if (ksm_stat_read("/proc/self/ksm_stat", text, sizeof text)) {
		put(l, ",\"ksm_stat\":null");
		return;
	}
	put(l, ",\"ksm_stat\":{");
	while (ksm_stat_next(&cursor, &name, &value)) {
		put(l, "%s", first ? "" : ",");
		put_string(l, name);
		put(l, ":");
		put_stat_value(l, value);
		first = 0;
	}
	put(l, "}");
}

/* What was kept out of KSM, and why: the user's lists, the program, secret-like. */
static void put_kept_out(struct line *l)
{
	unsigned long prog_ranges, secret_ranges;
	unsigned long long prog_bytes, secret_bytes;

	guard_kept_out(&prog_ranges, &prog_bytes, &secret_ranges, &secret_bytes);
	put(l, ",\"kept_out\":{\"user\":{\"regions\":%lu,\"bytes\":%llu},"
	    "\"program\":{\"ranges\":%lu,\"bytes\":%llu},\"secret\":{\"ranges\":%lu,\"bytes\":%llu},"
	    "\"marks_full\":%s}",
	    lib.last.denied_regions, lib.last.denied_bytes, prog_ranges, prog_bytes,
	    secret_ranges, secret_bytes, marks_full() ? "true" : "false");
}

static const char *const applied_names[] = {
	[APPLIED_NONE] = "none", [APPLIED_OFF] = "off",
	[APPLIED_PRCTL] = "prctl", [APPLIED_MADVISE] = "madvise",
};

void report_write(void)
{
	struct line l = { .len = 0 };
	char comm[64];
	struct stat st;
	int fd;

	read_comm(comm, sizeof comm);
	put(&l, "{\"pid\":%d,\"ppid\":%d,", (int)getpid(), (int)getppid());
	if (lib.cfg.report_token[0])
		put(&l, "\"token\":\"%s\",", lib.cfg.report_token);
	put(&l, "\"comm\":");
	put_string(&l, comm);
	put(&l, ",\"mode\":\"%s\",\"error\":", applied_names[lib.applied]);
	if (lib.error)
		put_string(&l, lib.error);
	else
		put(&l, "null");
	put(&l, ",\"regions_advised\":%lu,\"bytes_advised\":%llu,\"passes\":%lu",
	    lib.last.regions, lib.last.bytes, lib.passes);
	put_kept_out(&l);
	put_ksm_stat(&l);
	put(&l, "}\n");
	if (l.len >= sizeof l.buf) {
		log_warn("KSM_ENABLE_REPORT: the report line does not fit; not written");
		return;
	}
	/* No link followed, no FIFO waited on or written (SIGPIPE would end the host). */
	fd = open(lib.cfg.report_path, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0644);
	if (fd < 0) {
		log_warn("KSM_ENABLE_REPORT=%s: cannot open (errno %d)", lib.cfg.report_path, errno);
		return;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		log_warn("KSM_ENABLE_REPORT=%s: not a regular file; not written", lib.cfg.report_path);
		close(fd);
		return;
	}
	if (write(fd, l.buf, l.len) != (ssize_t)l.len)
		log_warn("KSM_ENABLE_REPORT=%s: cannot write (errno %d)", lib.cfg.report_path, errno);
	close(fd);
}
