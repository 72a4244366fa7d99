/*
 * survivors.c - the command's processes that outlive it.
 *
 * ksm-run reports and exits when the process it started ends, with its
 * status, as env(1) and timeout(1) do; a shell's background jobs or a
 * daemon that detached go on, reparented to init.  By default they are
 * left be (killing what the user started is not ksm-run's to decide), the
 * report names them; --end-survivors ends them the way timeout(1)'s
 * --kill-after does: TERM, then KILL.
 */
#include <errno.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>

#include "common/procfs.h"
#include "follow/survivors.h"

#define KILL_AFTER_MS 5000

bool survivor(const struct proc_info *p, pid_t main)
{
	return p->pid != main && p->alive && proc_running(p->pid);
}

/* Reaps whatever of ours has ended: reparented survivors are our children. */
static void reap(void)
{
	int status;

	while (waitpid(-1, &status, WNOHANG) > 0)
		;
}

static int signal_survivors(struct sampler *s, pid_t main, int sig)
{
	int n = 0;

	for (int i = 0; i < s->nprocs; i++) {
		struct proc_info *p = &s->procs[i];
		if (survivor(p, main) && kill(p->pid, sig) == 0) {
			p->ended_by = sig;
			n++;
		}
	}
	return n;
}

/* Reaps until no survivor is left, for at most MS; true when none is. */
static bool wait_gone(struct sampler *s, pid_t main, int ms)
{
	const struct timespec tick = { 0, 10 * 1000000L };

	for (int waited = 0;; waited += 10) {
		int left = 0;

		reap();
		for (int i = 0; i < s->nprocs; i++)
			left += survivor(&s->procs[i], main);
		if (!left)
			return true;
		if (waited >= ms)
			return false;
		nanosleep(&tick, NULL);
	}
}

int survivors_end(struct sampler *s, pid_t main)
{
	int n;

	sample_tick(s);
	if (!(n = signal_survivors(s, main, SIGTERM)))
		return 0;
	if (!wait_gone(s, main, KILL_AFTER_MS)) {
		signal_survivors(s, main, SIGKILL);
		/* KILL takes effect when the process next runs: wait for it (1 s at most). */
		wait_gone(s, main, 1000);
	}
	return n;
}
