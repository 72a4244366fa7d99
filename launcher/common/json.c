/* json.c - JSON values on a stdio stream. */
#include <limits.h>

#include "common/json.h"
#include "utf8.h"

void json_str(FILE *f, const char *s)
{
	if (!s) {
		fputs("null", f);
		return;
	}
	fputc('"', f);
	for (const unsigned char *p = (const unsigned char *)s; *p;) {
		char out[JSON_CHAR_MAX];
		size_t len;

		p += json_char(p, out, &len);
		fwrite(out, 1, len, f);
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
