/*
 * follow.h - following what ksm-run watches over, a command's tree,
 * --attach's targets or the machine alone (the daemon) (follow.c): one
 * loop for the three, with one tick (a sample, the tuning, the metrics
 * file) and the metrics file's life; for a command and an attach one end
 * too (the tuning left, the report).  A mode gives the loop its wait and
 * what it does after each tick (follow_hooks).
 */
#ifndef KSMRUN_FOLLOW_H
#define KSMRUN_FOLLOW_H

#include <stdbool.h>

#include "host/hosttune.h"
#include "follow/report.h"
#include "follow/runmetrics.h"
#include "follow/tree.h"

struct follow {
	struct sampler *s;              /* FOLLOWED_MACHINE: only its counters are used */
	struct host_tuner *host;
	const char *metrics_file;       /* --metrics-file, or NULL */
	double interval;                /* --interval */
	double next_sample;             /* now_s() of the next sample; 0: at once */
	enum followed what;             /* a command, processes attached to, the machine */
	const char *command;            /* FOLLOWED_COMMAND: its argv[0], for the metrics */
	struct run_metrics metrics;     /* the metrics file's state (follow.c's) */
	/*
	 * The machine's metrics file, written after each tick by the daemon's
	 * own writer (its agent's figures), with CTX; NULL: a command's or an
	 * attach's, of what they follow (runmetrics.h).
	 */
	void (*write_metrics)(void *ctx, bool sampled);
	void *metrics_ctx;
};

/*
 * A sample every interval (and the metrics file then, or when this
 * instance starts or stops writing the machine's series), the counters
 * otherwise (always, for the machine alone), and the machine's tuning at
 * every call.  *SAMPLED says
 * whether this call sampled.  Returns how long to wait before the next
 * call, in seconds: until the next sample, but at most 1 s (a tuner that
 * ends is replaced within two) and at least 10 ms.
 */
double follow_tick(struct follow *f, bool *sampled);

/* What a mode gives the follow loop. */
struct follow_hooks {
	/*
	 * Waits up to WAIT_S seconds (0: only looks): 0 while what is followed
	 * goes on; else why the following ends: FOLLOW_ENDED (the command or
	 * the last target ended), or the stop signal that came.
	 */
	int (*wait)(void *ctx, double wait_s);
	/* After each tick (SAMPLED: it sampled): --profile's sample, --duration's end.  NULL: nothing. */
	void (*ticked)(void *ctx, bool sampled);
	void *ctx;
};
#define FOLLOW_ENDED (-1)

/*
 * Follows until H->wait says it ended: the first wait FIRST_WAIT_S long,
 * then a tick after each wait, the next wait as long as the tick says.
 * Then a last sample of the processes followed, and the metrics file
 * removed (only a file it wrote): the figures of what has ended would read
 * as true.  What the last wait said: FOLLOW_ENDED, or the signal.
 */
int follow_loop(struct follow *f, const struct follow_hooks *h, double first_wait_s);

/*
 * The end: this run's part in the machine's tuning left (the knobs
 * restored when it was the last), then, unless QUIET, J's report, with RO
 * as the mode chose it and the knobs in force and the tuning's history
 * filled in here.
 */
void follow_end(struct follow *f, struct report_opts *ro, const struct report_subject *j, bool quiet);

#endif
