/*
 * json.h - writing JSON values to a stdio stream, for ksm-run's reports,
 * --estimate and --profile.  Strings from outside (command names, paths)
 * are escaped, control characters included.
 */
#ifndef KSMRUN_JSON_H
#define KSMRUN_JSON_H

#include <stdio.h>

/* A JSON string, or null when S is NULL: always valid UTF-8 (json_char in utf8.h). */
void json_str(FILE *f, const char *s);
/* A number, or null when V is LLONG_MIN (unknown). */
void json_ll(FILE *f, long long v);
void json_bool(FILE *f, int v);
/* true, false, or null when V is negative (unknown). */
void json_tristate(FILE *f, int v);

#endif
