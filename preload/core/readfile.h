/* readfile.h - reading a small file (/proc, /sys) in one go. */
#ifndef KSMENABLE_READFILE_H
#define KSMENABLE_READFILE_H

#include <stddef.h>
#include <sys/types.h>

/*
 * Read PATH into BUF (at most SIZE - 1 bytes), NUL-terminated; a read
 * interrupted by a signal is retried.  Returns the number of bytes read,
 * or -1 with errno.  Never allocates, so the library may call it anywhere.
 */
ssize_t read_small_file(const char *path, char *buf, size_t size);

#endif
