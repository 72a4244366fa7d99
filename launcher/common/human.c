/* human.c - formatting byte counts for the reports. */
#include <limits.h>
#include <stdio.h>

#include "common/human.h"

const char *human_bytes(long long bytes, bool sign)
{
	static char bufs[8][32];
	static int next;
	char *b = bufs[next++ % 8];
	double v;
	const char *unit = "B";

	if (bytes == LLONG_MIN)
		return "n/a";
	v = (double)(bytes < 0 ? -bytes : bytes);
	if (v >= 1024.0 * 1024 * 1024) { v /= 1024.0 * 1024 * 1024; unit = "GiB"; }
	else if (v >= 1024.0 * 1024) { v /= 1024.0 * 1024; unit = "MiB"; }
	else if (v >= 1024.0) { v /= 1024.0; unit = "KiB"; }
	snprintf(b, 32, "%s%.*f %s", bytes < 0 ? "-" : sign ? "+" : "", *unit == 'B' ? 0 : 1, v, unit);
	return b;
}
