/* json.c - JSON values on a stdio stream. */
#include <limits.h>

#include "common/json.h"

void json_str(FILE *f, const char *s)
{
	if (!s) {
		fputs("null", f);
		return;
	}
	fputc('"', f);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == '"' || *p == '\\')
			fprintf(f, "\\%c", *p);
		else if (*p < 0x20 || *p == 0x7f)
			fprintf(f, "\\u%04x", *p);
		else
			fputc(*p, f);
	}
	fputc('"', f);
}

void json_ll(FILE *f, long long v)
{
	if (v == LLONG_MIN)
		fputs("null", f);
	else
		fprintf(f, "%lld", v);
}

void json_bool(FILE *f, int v)
{
	fputs(v ? "true" : "false", f);
}

void json_tristate(FILE *f, int v)
{
	fputs(v < 0 ? "null" : v ? "true" : "false", f);
}
