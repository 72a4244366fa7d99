/*
 * arrival.c - the boost's rate while memory still arrives.
 *
 * A page merges on ksmd's second look at it at the earliest, and a full
 * scan covers every candidate page, not only the new ones.  While memory
 * arrives (guests booting, caches filling), a boost at its full rate
 * rescans what is there many times over before the rest has come: on four
 * booting QEMU guests, nine full scans of 1.3 GiB in the boost where the
 * memory took ten seconds to come.  So while memory arrives, the boost
 * scans ARRIVAL_VISITS pages for each page that arrives, and every page at
 * least once in ARRIVAL_LONGEST_S; once it no longer arrives, the full rate
 * merges what came, in the two scans it needs.
 *
 * The arrival is the growth of late, smoothed over ARRIVAL_SMOOTH_S (steps
 * and bursts between ticks count, a single tick does not decide), and it
 * counts while it is at least ARRIVAL_MIN_SHARE of the candidate memory a
 * second (and a MiB): QEMU's processes keep growing by a MiB or so a
 * second after their guests have filled their RAM, which is no reason to
 * hold back the merging of a GiB.  Memory there at the first tick is no
 * arrival: it only sets the base.
 */
#include <math.h>

#include "host/arrival.h"

#define ARRIVAL_VISITS 2.0
#define ARRIVAL_LONGEST_S 20.0
#define ARRIVAL_SMOOTH_S 2.0
#define ARRIVAL_MIN_SHARE 0.01
/* 256 pages a second: 1 MiB of 4 KiB pages. */
#define ARRIVAL_MIN_PAGES_S 256.0

void arrival_reset(struct arrival *a)
{
	a->last_t = -1;
	a->last_c = 0;
	a->pages_per_s = 0;
}

void arrival_follow(struct arrival *a, double t, long long c)
{
	double dt = t - a->last_t, growth;

	if (c < 0) {
		arrival_reset(a);
		return;
	}
	if (a->last_t >= 0 && dt > 0) {
		growth = c > a->last_c ? (double)(c - a->last_c) / dt : 0;
		a->pages_per_s += (growth - a->pages_per_s) * (1 - exp(-dt / ARRIVAL_SMOOTH_S));
	}
	if (a->last_t < 0 || dt > 0) {
		a->last_t = t;
		a->last_c = c;
	}
}

int arrival_ongoing(const struct arrival *a, long long c)
{
	return c > 0 && a->pages_per_s >= fmax(ARRIVAL_MIN_PAGES_S, (double)c * ARRIVAL_MIN_SHARE);
}

long long arrival_boost_pages(const struct arrival *a, long long c, long long min_pages, long long max_pages,
			      long long sleep_ms)
{
	double per_s, pages;

	if (!arrival_ongoing(a, c))
		return max_pages;
	per_s = fmax(ARRIVAL_VISITS * a->pages_per_s, (double)c / ARRIVAL_LONGEST_S);
	pages = ceil(per_s * (double)sleep_ms / 1000.0);
	return pages < (double)min_pages ? min_pages : pages > (double)max_pages ? max_pages : (long long)pages;
}
