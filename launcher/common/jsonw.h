/*
 * jsonw.h - the one JSON writer of ksm-run (jsonw.c): objects and arrays
 * nested on a stdio stream, the commas and keys written by the writer
 * from its nesting state, strings escaped to valid UTF-8 (json.c), and
 * unknown values written as null.  Every call inside an object takes the
 * member's KEY; inside an array, or for the outermost value, KEY is NULL.
 *
 *	struct jsonw w;
 *	jw_start(&w, stdout);
 *	jw_object(&w, NULL);
 *	jw_ll(&w, "pid", 42);
 *	jw_array(&w, "groups");
 *	...
 *	jw_finish(&w);                  closes what is open, then a newline
 */
#ifndef KSMRUN_JSONW_H
#define KSMRUN_JSONW_H

#include <stdbool.h>
#include <stdio.h>

#define JSONW_DEPTH 16

struct jsonw {
	FILE *f;
	int depth;                      /* open objects and arrays */
	bool object[JSONW_DEPTH];       /* what each level is: an object, else an array */
	bool members[JSONW_DEPTH];      /* each level has a member already: the next needs a comma */
	int lost;                       /* levels opened beyond JSONW_DEPTH, not written */
};

void jw_start(struct jsonw *w, FILE *f);
void jw_object(struct jsonw *w, const char *key);
void jw_array(struct jsonw *w, const char *key);
/* Closes the innermost object or array. */
void jw_end(struct jsonw *w);
/* Closes every open level, and ends the line. */
void jw_finish(struct jsonw *w);

/* A string, or null when S is NULL. */
void jw_string(struct jsonw *w, const char *key, const char *s);
/* A whole number, or null when V is LLONG_MIN (unknown). */
void jw_ll(struct jsonw *w, const char *key, long long v);
/* A number with DECIMALS places, or null when V is negative (unknown) and NEG_IS_UNKNOWN. */
void jw_fixed(struct jsonw *w, const char *key, double v, int decimals, bool neg_is_unknown);
/* A number in %g, as the options were given. */
void jw_g(struct jsonw *w, const char *key, double v);
void jw_bool(struct jsonw *w, const char *key, bool v);
/* true, false, or null when V is negative (unknown). */
void jw_tristate(struct jsonw *w, const char *key, int v);
void jw_null(struct jsonw *w, const char *key);
/* A knob's value: a number when it reads as one ("100"), else a string ("scan-time"). */
void jw_knob(struct jsonw *w, const char *key, const char *value);

#endif
