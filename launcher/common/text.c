/* text.c - escaping outside strings for terminals. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "common/text.h"

/* S escaped into BUF (cut to fit); returns BUF. */
static char *text_escape(const char *s, char *buf, size_t len)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n = 0;

	if (!len)
		return buf;
	while (*p && n + 1 < len) {
		int seq = utf8_sequence(p);
		/* U+0080..U+009F, the C1 controls, are C2 80..C2 9F in UTF-8. */
		int c1 = seq == 2 && p[0] == 0xc2 && p[1] < 0xa0;

		if (seq == 1 && *p >= 0x20 && *p != 0x7f) {
			buf[n++] = (char)*p++;
		} else if (seq > 1 && !c1) {
			if (n + (size_t)seq >= len)
				break;
			memcpy(buf + n, p, (size_t)seq);
			n += (size_t)seq;
			p += seq;
		} else {
			if (n + 4 >= len)
				break;
			n += (size_t)snprintf(buf + n, len - n, "\\x%02x", *p++);
		}
	}
	buf[n] = '\0';
	return buf;
}

const char *printable(const char *s)
{
	static char bufs[8][512];
	static int next;

	return text_escape(s ? s : "", bufs[next++ % 8], sizeof bufs[0]);
}

void text_appendf(char *buf, size_t len, const char *fmt, ...)
{
	size_t used = strlen(buf);
	va_list ap;

	if (used >= len)
		return;
	va_start(ap, fmt);
	vsnprintf(buf + used, len - used, fmt, ap);
	va_end(ap);
}
