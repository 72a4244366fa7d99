/*
 * statefile.h - ksm-run's files under /run/ksm-run, handled as input from
 * outside: another process may have planted or changed them (statefile.c).
 *
 * The directory must be a real directory owned by this user and writable
 * by no one else; files are regular, owned by this user, opened without
 * following symbolic links, created 0600 with O_EXCL, and replaced by
 * rename so that a crash never leaves half a file.
 */
#ifndef KSMRUN_STATEFILE_H
#define KSMRUN_STATEFILE_H

#include <stddef.h>

#define STATE_DIR "/run/ksm-run"

/*
 * Makes or checks DIR (CREATE: mkdir it 0755 if missing).  Returns 0, or
 * -errno with a message in WHY naming what is wrong.
 */
int statedir_check(const char *dir, int create, char *why, size_t whylen);

/* Takes DIR/lock (exclusive, waiting).  Returns the descriptor, or -errno. */
int statefile_lock(const char *dir);

/*
 * Reads DIR/NAME into BUF (NUL-terminated).  Returns the length, -ENOENT
 * when there is none, -EFBIG when it does not fit, or -errno; a file that
 * is not a regular file of this user is refused with -EPERM.
 */
long statefile_read(const char *dir, const char *name, char *buf, size_t size);

/*
 * Replaces DIR/NAME with TEXT atomically (DIR/NAME.tmp, fsync, rename).
 * When the file system is full, rewrites DIR/NAME in place if the blocks
 * it holds take TEXT (the caller holds the lock).  0 or -errno.
 */
int statefile_write(const char *dir, const char *name, const char *text, size_t len);

#endif
