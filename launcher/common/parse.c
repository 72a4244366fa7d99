/* parse.c - strict decimal numbers for options and files. */
#include <errno.h>
#include <stdlib.h>

#include "common/parse.h"

static int starts_like_number(const char *s)
{
	return s && ((*s >= '0' && *s <= '9') || (*s == '-' && s[1] >= '0' && s[1] <= '9'));
}

int parse_ll(const char *text, long long min, long long max, long long *out)
{
	char *end;
	long long v;

	if (!starts_like_number(text))
		return -1;
	/* "-0" is no value of an unsigned setting. */
	if (min >= 0 && *text == '-')
		return -1;
	errno = 0;
	v = strtoll(text, &end, 10);
	if (errno || *end || v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

int parse_double(const char *text, double min, double max, double *out)
{
	char *end;
	double v;

	/* strtod also takes " 2", "0x10", "inf" and "nan": none is meant here. */
	if (!starts_like_number(text) && !(text && *text == '.' && text[1] >= '0' && text[1] <= '9'))
		return -1;
	for (const char *p = text; *p; p++)
		if (!((*p >= '0' && *p <= '9') || *p == '.' || *p == '-'))
			return -1;
	errno = 0;
	v = strtod(text, &end);
	if (errno || *end || end == text || !(v >= min && v <= max))
		return -1;
	*out = v;
	return 0;
}
