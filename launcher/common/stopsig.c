/* stopsig.c - a mode's stop signals, blocked and waited for. */
#include <errno.h>
#include <time.h>

#include "common/msg.h"
#include "common/stopsig.h"

void stop_signals_block(sigset_t *set, const int *sigs)
{
	sigemptyset(set);
	for (; *sigs; sigs++)
		sigaddset(set, *sigs);
	if (sigprocmask(SIG_BLOCK, set, NULL))
		die_errno(errno, "cannot block signals");
	signal(SIGPIPE, SIG_IGN);
}

int stop_signal_pending(const sigset_t *set)
{
	sigset_t p;

	if (sigpending(&p))
		return 0;
	for (int s = 1; s < NSIG; s++)
		if (sigismember(set, s) == 1 && sigismember(&p, s) == 1)
			return s;
	return 0;
}

int stop_signals_wait(const sigset_t *set, double seconds)
{
	struct timespec ts = { (time_t)seconds, (long)((seconds - (double)(time_t)seconds) * 1e9) };
	int sig = sigtimedwait(set, NULL, &ts);

	return sig > 0 ? sig : 0;
}
