/*
 * arrival.c - the boost's rate while memory still arrives.
 *
 * A page merges on ksmd's second look at it at the earliest, and a full
 * scan covers every candidate page, not only the new ones.  While memory
 * arrives (guests booting, caches filling), a boost at its full rate
 * rescans what is there many times over before the rest has come: on four
 * booting QEMU guests, nine full scans of 1.3 GiB in the boost where the
 * memory took ten seconds to come.  So while the candidate memory grows,
 * the boost scans ARRIVAL_VISITS pages for each page that arrives (the
 * arrival's rate since it began), and every page at least once in
 * ARRIVAL_LONGEST_S; once it has not grown for ARRIVAL_QUIET_S, the full
 * rate merges what came, in the two scans it needs.  Growth counts from
 * the last growth, not from one tick to the next, so that memory that
 * comes in steps or trickles is an arrival too.  Memory that was there at
 * the first tick is no arrival: it only sets the base.
 */
#include <math.h>

#include "host/arrival.h"

#define ARRIVAL_VISITS 2.0
#define ARRIVAL_LONGEST_S 20.0
#define ARRIVAL_QUIET_S 3.0
/* Growth that counts: 256 pages (1 MiB of 4 KiB pages). */
#define ARRIVAL_GROWTH_PAGES 256

void arrival_reset(struct arrival *a)
{
	a->last_t = a->grew_t = a->t0 = -1;
	a->last_c = a->grew_c = a->c0 = 0;
	a->pages_per_s = 0;
}

void arrival_follow(struct arrival *a, double t, long long c)
{
	if (c < 0) {
		arrival_reset(a);
		return;
	}
	if (a->last_t < 0 || c < a->grew_c) {   /* the base, or memory went: from here */
		a->grew_t = t;
		a->grew_c = c;
	} else if (c > a->grew_c + ARRIVAL_GROWTH_PAGES && t > a->last_t) {
		if (a->t0 < 0) {        /* it began after the last tick, as far as can be told */
			a->t0 = a->last_t;
			a->c0 = a->last_c;
		}
		a->grew_t = t;
		a->grew_c = c;
	} else if (a->t0 >= 0 && t - a->grew_t >= ARRIVAL_QUIET_S) {
		a->t0 = -1;
	}
	a->pages_per_s = a->t0 >= 0 && t > a->t0 && c > a->c0 ? (double)(c - a->c0) / (t - a->t0) : 0;
	a->last_t = t;
	a->last_c = c;
}

long long arrival_boost_pages(const struct arrival *a, long long c, long long min_pages, long long max_pages,
			      long long sleep_ms)
{
	double per_s, pages;

	if (a->t0 < 0 || a->pages_per_s <= 0 || c <= 0)
		return max_pages;
	per_s = fmax(ARRIVAL_VISITS * a->pages_per_s, (double)c / ARRIVAL_LONGEST_S);
	pages = ceil(per_s * (double)sleep_ms / 1000.0);
	return pages < (double)min_pages ? min_pages : pages > (double)max_pages ? max_pages : (long long)pages;
}
