/*
 * arrival.h - how fast the memory to merge arrives (arrival.c), and the
 * boost's rate for it: the tuner's boost scans no faster than the memory
 * comes while it still comes.
 */
#ifndef KSMRUN_ARRIVAL_H
#define KSMRUN_ARRIVAL_H

struct arrival {
	double last_t;          /* the previous tick; < 0 none yet */
	long long last_c;
	double pages_per_s;     /* the growth of late, smoothed over a few seconds */
};

void arrival_reset(struct arrival *a);

/* One tick: C candidate pages at time T (C < 0: unknown). */
void arrival_follow(struct arrival *a, double t, long long c);

/* Is memory still arriving, for C candidate pages: fast enough to count? */
int arrival_ongoing(const struct arrival *a, long long c);

/*
 * The boost's pages_to_scan every SLEEP_MS for C candidate pages: MAX_PAGES,
 * or while memory arrives, enough for each arriving page to be scanned
 * twice as it comes and every page at least once in ARRIVAL_LONGEST_S,
 * between MIN_PAGES and MAX_PAGES.
 */
long long arrival_boost_pages(const struct arrival *a, long long c, long long min_pages, long long max_pages,
			      long long sleep_ms);

#endif
