/* pressure.c - memory pressure from PSI or MemAvailable. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/files.h"
#include "host/pressure.h"

/* "some avg10=1.23 avg60=..." as a share of time. */
static double psi(void)
{
	char buf[512], *p;

	if (read_text("/proc/pressure/memory", buf, sizeof buf) || !(p = strstr(buf, "some avg10=")))
		return -1;
	return strtod(p + 11, NULL) / 100.0;
}

static double available_share(void)
{
	char buf[4096], *total, *avail;
	double t, a;

	if (read_text("/proc/meminfo", buf, sizeof buf) || !(total = strstr(buf, "MemTotal:")) ||
	    !(avail = strstr(buf, "MemAvailable:")))
		return -1;
	t = strtod(total + 9, NULL);
	a = strtod(avail + 13, NULL);
	return t > 0 ? a / t : -1;
}

double memory_pressure(const char **source)
{
	double p = psi(), a = available_share();

	/* PSI tells stalls; a machine about to run out does not stall yet. */
	if (a >= 0 && a < 0.1) {
		*source = "MemAvailable";
		return 1.0 - a;
	}
	if (p >= 0) {
		*source = "PSI";
		return p;
	}
	*source = a >= 0 ? "MemAvailable" : "none";
	return a >= 0 ? (a < 0.5 ? 0.1 : 0.0) : -1;
}
