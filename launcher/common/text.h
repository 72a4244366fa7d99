/*
 * text.h - strings from outside (a command name, a path, a line a process
 * wrote) made safe to print on a terminal (text.c): control characters,
 * including the C1 controls some terminals obey, and bytes that are not
 * UTF-8 become \xNN, so that no one can send escape sequences to the
 * terminal of the root user reading a report.
 */
#ifndef KSMRUN_TEXT_H
#define KSMRUN_TEXT_H

#include <stddef.h>

#include "utf8.h"         /* utf8_sequence(), for the writers of text */

/* S escaped for a terminal, in one of eight rotating buffers of 512 bytes, for one printf. */
const char *printable(const char *s);

/* Appends to the string in BUF (LEN bytes in all), cut at its end: a line built in parts. */
void text_appendf(char *buf, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif
