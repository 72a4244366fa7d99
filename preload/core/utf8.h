/*
 * utf8.h - the one judge of UTF-8 (utf8.c), and the one rule for a
 * character inside a JSON string, for every writer of text that others
 * read: ksm-run's JSON, its metrics labels and terminal output, and the
 * library's report lines.  Strings from outside (a command name, a cgroup
 * path) are bytes, not text: a writer that passed them on would make its
 * whole output undecodable.  Pure functions: the library may call them
 * anywhere, a signal handler included.
 */
#ifndef KSMENABLE_UTF8_H
#define KSMENABLE_UTF8_H

#include <stddef.h>

/* The length of the valid UTF-8 sequence at S (1-4), or 0 when it is not one. */
int utf8_sequence(const unsigned char *s);

/* The most bytes json_char writes. */
#define JSON_CHAR_MAX 6

/*
 * The character at S (not its NUL) as it goes inside a JSON string, into
 * OUT (JSON_CHAR_MAX bytes, no NUL), its length in *OUTLEN; returns how
 * many bytes of S it used.  '"' and '\\' are escaped; control characters
 * (C0, DEL and the C1 controls some terminals obey) become \u00XX; a byte
 * that does not start valid UTF-8 becomes U+FFFD, and the next byte is
 * judged afresh.  The output is always valid UTF-8.
 */
size_t json_char(const unsigned char *s, char *out, size_t *outlen);

#endif
