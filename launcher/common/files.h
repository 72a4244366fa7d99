/* files.h - small text files and the clock, for every room of ksm-run. */
#ifndef KSMRUN_FILES_H
#define KSMRUN_FILES_H

#include <stddef.h>

/*
 * Read a small file (a sysfs knob, /proc/PID/comm) into BUF, NUL-terminated,
 * trailing newlines removed.  Returns 0, or -errno.
 */
int read_text(const char *path, char *buf, size_t len);

/* Seconds on the monotonic clock. */
double now_s(void);

#endif
