/*
 * advise_stats.h - what an advise pass did, and what it kept out and why:
 * filled by advise.c and guard.c, reported by report.c.
 */
#ifndef KSMENABLE_ADVISE_STATS_H
#define KSMENABLE_ADVISE_STATS_H

struct advise_stats {
	unsigned long regions;        /* regions chosen */
	unsigned long long bytes;     /* their size */
	unsigned long calls;          /* madvise calls that succeeded */
	int error;                    /* first errno madvise gave, other than ENOMEM */
	/* What was kept out, and why. */
	unsigned long denied_regions; /* private regions the user's lists (or min size) refused */
	unsigned long long denied_bytes;
	unsigned long kept_ranges;    /* pieces the program made MADV_UNMERGEABLE */
	unsigned long long kept_bytes;
	unsigned long secret_ranges;  /* secret-like pieces */
	unsigned long long secret_bytes;
	unsigned long deferred;       /* ranges the program remapped during the pass: next time */
};

#endif
