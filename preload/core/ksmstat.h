/* ksmstat.h - reading /proc/PID/ksm_stat, in the library and in ksm-run. */
#ifndef KSMENABLE_KSMSTAT_H
#define KSMENABLE_KSMSTAT_H

#include <stddef.h>

#include "ksmenable.h"

/* Read the ksm_stat file PATH into BUF (NUL-terminated).  Returns 0 or -1. */
int ksm_stat_read(const char *path, char *buf, size_t size);

/*
 * Walk the "NAME VALUE" or "NAME: VALUE" lines of BUF, which is modified:
 * returns 1 with *NAME and *VALUE set, 0 at the end.  Fields differ between
 * kernel versions, so callers look them up by name.
 */
int ksm_stat_next(char **cursor, const char **name, const char **value);

/* Every field of *ST unknown (-1), as for a kernel that has none of them. */
void ksm_stat_unknown(struct ksmenable_stat *st);

/*
 * The known fields of the ksm_stat file PATH, by name, into *ST; fields the
 * kernel lacks are -1 (a real ksm_process_profit is a multiple of 64, never
 * -1).  The merged pages come from the ksm_merging_pages file beside PATH
 * where ksm_stat has no such line (Linux 6.1), or no ksm_stat is there.
 * Returns 0, or -1 when neither file can be read (the process is gone or
 * not ours to read, or the kernel is older than 5.19).
 */
int ksm_stat_parse(const char *path, struct ksmenable_stat *st);

#endif
