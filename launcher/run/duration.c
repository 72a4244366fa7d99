/*
 * duration.c - --duration=SECONDS: the end of a command's time, as
 * timeout(1) -k 5 does it.  At the time, TERM goes to the command (its
 * first process, the one ksm-run forwards signals to), then CONT in case
 * it was stopped; if it is still there DURATION_KILL_AFTER_S later, KILL.
 * ksm-run then reports what merged until then and exits 124, or 137 when
 * KILL was needed, the statuses by which scripts already tell timeout(1)'s
 * ends apart.
 * Descendants that outlive the command are survivors as after any end
 * (--end-survivors ends them).
 */
#include <signal.h>
#include <sys/wait.h>

#include "common/files.h"
#include "common/msg.h"
#include "run/duration.h"

/* timeout(1)'s status when the time ran out. */
#define EXIT_TIMED_OUT 124

void duration_start(struct duration *d, double seconds, double start)
{
	d->seconds = seconds;
	d->term_at = start + seconds;
	d->termed = d->killed = false;
}

static double next_due(const struct duration *d)
{
	return d->termed ? d->term_at + DURATION_KILL_AFTER_S : d->term_at;
}

int duration_wait_ms(const struct duration *d, int wait_ms)
{
	double left;

	if (!d->seconds || d->killed)
		return wait_ms;
	left = next_due(d) - now_s();
	if (left <= 0)
		return 0;
	/* +1: a wait that ends just before the time would spin once more. */
	return left * 1000 < wait_ms ? (int)(left * 1000) + 1 : wait_ms;
}

bool duration_term_due(const struct duration *d)
{
	return d->seconds && !d->termed && now_s() >= d->term_at;
}

void duration_signal(struct duration *d, pid_t pid, bool quiet)
{
	if (!d->seconds || d->killed || now_s() < next_due(d))
		return;
	if (!d->termed) {
		d->termed = true;
		if (!quiet)
			msg("--duration=%g: the time is up: TERM to the command (pid %d), KILL in %g s "
			    "if it has not ended", d->seconds, (int)pid, DURATION_KILL_AFTER_S);
		kill(pid, SIGTERM);
		/* As timeout(1): a stopped command could not act on TERM until it runs again. */
		kill(pid, SIGCONT);
		return;
	}
	d->killed = true;
	if (!quiet)
		msg("--duration=%g: the command (pid %d) did not end within %g s of TERM: KILL",
		    d->seconds, (int)pid, DURATION_KILL_AFTER_S);
	kill(pid, SIGKILL);
}

int duration_exit_status(const struct duration *d, const struct child *c)
{
	if (!d->termed || c->exec_errno)
		return -1;
	if (d->killed && WIFSIGNALED(c->status) && WTERMSIG(c->status) == SIGKILL)
		return 128 + SIGKILL;
	return EXIT_TIMED_OUT;
}
