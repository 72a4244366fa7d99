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
	double grew_t;          /* when it last grew, to what */
	long long grew_c;
	double t0;              /* when the memory began to arrive; < 0 not arriving */
	long long c0;
	double pages_per_s;     /* since t0; 0 when not arriving */
};

void arrival_reset(struct arrival *a);

/* One tick: C candidate pages at time T (C < 0: unknown, not arriving). */
void arrival_follow(struct arrival *a, double t, long long c);

/*
 * The boost's pages_to_scan every SLEEP_MS for C candidate pages: MAX_PAGES,
 * or while memory arrives, enough for each arriving page to be scanned
 * twice as it comes and every page at least once in ARRIVAL_LONGEST_S,
 * between MIN_PAGES and MAX_PAGES.
 */
long long arrival_boost_pages(const struct arrival *a, long long c, long long min_pages, long long max_pages,
			      long long sleep_ms);

#endif
