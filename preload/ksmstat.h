/* ksmstat.h - reading this process's /proc/self/ksm_stat. */
#ifndef KSMENABLE_KSMSTAT_H
#define KSMENABLE_KSMSTAT_H

#include <stddef.h>

/* Read /proc/self/ksm_stat into BUF (NUL-terminated).  Returns 0 or -1. */
int ksm_stat_read(char *buf, size_t size);

/*
 * Walk the "NAME VALUE" or "NAME: VALUE" lines of BUF, which is modified:
 * returns 1 with *NAME and *VALUE set, 0 at the end.  Fields differ between
 * kernel versions, so callers look them up by name.
 */
int ksm_stat_next(char **cursor, const char **name, const char **value);

#endif
