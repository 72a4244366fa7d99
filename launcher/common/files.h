/* files.h - small text files and the clock, for every room of ksm-run. */
#ifndef KSMRUN_FILES_H
#define KSMRUN_FILES_H

#include <stddef.h>
#include <sys/types.h>

/*
 * Read a small file (a sysfs knob, /proc/PID/comm) into BUF, NUL-terminated,
 * trailing newlines removed.  Returns 0, or -errno.
 */
int read_text(const char *path, char *buf, size_t len);

/*
 * PATH's directory exists and can be written, and PATH is not a directory:
 * for options that name a file to write.  0, or -1 with WHY.
 */
int file_check_new(const char *path, char *why, size_t whylen);

/*
 * Writes LEN bytes of DATA to PATH atomically: a new file (O_EXCL,
 * O_NOFOLLOW, MODE whatever the umask) in PATH's directory, renamed over
 * PATH.  0, or -errno.
 */
int file_replace(const char *path, const void *data, size_t len, mode_t mode);

/* Seconds on the monotonic clock. */
double now_s(void);

#endif
