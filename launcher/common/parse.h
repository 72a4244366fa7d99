/*
 * parse.h - ksm-run's strict number parsers: no leading space, no sign
 * surprises, no trailing junk, range checked.  Callers name the option and
 * what is accepted when one refuses.
 */
#ifndef KSMRUN_PARSE_H
#define KSMRUN_PARSE_H

/* A decimal integer in [MIN, MAX].  Returns 0, or -1 when TEXT is not one. */
int parse_ll(const char *text, long long min, long long max, long long *out);

/* A decimal number (fractions allowed) in [MIN, MAX], e.g. seconds. */
int parse_double(const char *text, double min, double max, double *out);

#endif
