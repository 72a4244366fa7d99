/* utf8.c - judging UTF-8, and characters inside JSON strings. */
#include <string.h>

#include "utf8.h"

int utf8_sequence(const unsigned char *s)
{
	unsigned cp;
	int n;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		n = 2, cp = s[0] & 0x1f;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		n = 3, cp = s[0] & 0x0f;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		n = 4, cp = s[0] & 0x07;
	else
		return 0;
	for (int i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	/* Overlong forms, surrogates and beyond U+10FFFF are not UTF-8. */
	if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n;
}

static size_t hex_escape(unsigned v, char *out)
{
	static const char hex[] = "0123456789abcdef";

	memcpy(out, "\\u00", 4);
	out[4] = hex[v >> 4 & 0xf];
	out[5] = hex[v & 0xf];
	return 6;
}

size_t json_char(const unsigned char *s, char *out, size_t *outlen)
{
	int n = utf8_sequence(s);

	if (s[0] == '"' || s[0] == '\\') {
		out[0] = '\\';
		out[1] = (char)s[0];
		*outlen = 2;
	} else if (s[0] < 0x20 || s[0] == 0x7f) {
		*outlen = hex_escape(s[0], out);
	} else if (n == 2 && s[0] == 0xc2 && s[1] < 0xa0) {
		*outlen = hex_escape(s[1], out);        /* U+0080..U+009F, the C1 controls */
	} else if (n == 0) {
		memcpy(out, "\xef\xbf\xbd", 3);         /* U+FFFD, the replacement character */
		*outlen = 3;
		return 1;
	} else {
		memcpy(out, s, (size_t)n);
		*outlen = (size_t)n;
	}
	return (size_t)n;
}
