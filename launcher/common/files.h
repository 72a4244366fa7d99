/* files.h - small text files and the clock, for every room of ksm-run. */
#ifndef KSMRUN_FILES_H
#define KSMRUN_FILES_H

#include <errno.h>
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
 * Every file ksm-run writes goes through these two, so that a name planted
 * where it writes (a symbolic link, FIFO or hard link in a world-writable
 * directory) never makes root write elsewhere, whether or not the host
 * protects links (fs.protected_symlinks).  Refusals are these errors,
 * which file_strerror() explains:
 */
#define FILE_E_LINK ELOOP       /* PATH is a symbolic link */
#define FILE_E_SPECIAL ENODEV   /* PATH is not a regular file */
#define FILE_E_FOREIGN EPERM    /* PATH to append to is another user's, or linked */

/*
 * Writes LEN bytes of DATA to PATH atomically: a new file (O_EXCL,
 * O_NOFOLLOW, a random name) in PATH's directory, given MODE whatever the
 * umask, renamed over PATH.  What stands at PATH must be a regular file.
 * 0, or -errno.
 */
int file_replace(const char *path, const void *data, size_t len, mode_t mode);

/*
 * Appends LEN bytes of DATA to PATH (LEN 0: checks that it can).  A new
 * file is made with O_EXCL and MODE (less the umask); an existing one must
 * be a regular file of this user or root with one name (O_NOFOLLOW).
 * 0, or -errno.
 */
int file_append(const char *path, const void *data, size_t len, mode_t mode);

/*
 * Opens PATH to read what another user may have put there: a regular file
 * only; a FIFO or device is refused without blocking (O_NONBLOCK) and a
 * link the user named is followed.  A descriptor with *ST, or -errno.
 */
struct stat;
int file_open_input(const char *path, struct stat *st);

/* Removes PATH if it is a regular file of this user (what file_replace
 * made), never a name someone else put there.  0, or -1. */
int file_remove_own(const char *path);

/* MODE less the process's umask, for file_replace(). */
mode_t file_mode_umask(mode_t mode);

/* The refusals above in words, else strerror(ERR). */
const char *file_strerror(int err);

/* Seconds on the monotonic clock. */
double now_s(void);

#endif
