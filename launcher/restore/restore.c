/*
 * restore.c: ksm-run --restore, the operator's way back to the knobs saved
 * before the first ksm-run of the machine changed them: after a crash, or
 * a kill -9, left the state file behind.  Refused while a ksm-run that
 * uses the state still runs.  A host agent's record that its agent left
 * without a word is kept aside for --detach=agent.
 *
 * With --watch it stays, and does so whenever the last ksm-run that uses
 * the state ends without a word: the way back that does not need the
 * daemon alive, where nothing runs after it (a container in Kubernetes
 * has no ExecStopPost; an OOM kill or a kill -9 would leave ksmd at the
 * boost's rate until the next start).
 */
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <unistd.h>

#include "common/msg.h"
#include "common/stopsig.h"
#include "host/hoststate.h"
#include "host/knobs.h"
#include "host/statefile.h"
#include "policy/agentstate.h"
#include "restore/restore.h"

static struct hoststate st;            /* large: not on the stack */

/*
 * One look: the knobs put back if the state is left by ksm-runs that all
 * ended.  WATCHING says only what was done or failed, not "nothing to do"
 * at every look.
 */
static int restore_once(bool watching)
{
	int fd, r;

	agent_forget_gone();
	if (access(STATE_DIR "/state", F_OK)) {
		if (!watching)
			msg("no saved knob state in %s/state: nothing to restore", STATE_DIR);
		return 0;
	}
	if ((fd = hoststate_lock()) < 0)
		return EXIT_OWN;
	if ((r = hoststate_load(&st, true)) < 0) {
		close(fd);
		return r == -EINVAL ? 1 : EXIT_OWN;
	}
	hoststate_prune(&st, getpid());
	if (!st.exists || st.nusers) {
		if (!watching && st.nusers)
			msg("%d running ksm-run (pid %d%s) still use the saved state; not restoring",
			    st.nusers, (int)st.users[0].pid, st.nusers > 1 ? " and others" : "");
		close(fd);
		return st.nusers && !watching ? 1 : 0;
	}
	r = knobs_restore(&st.saved);
	if (!r)
		r = hoststate_remove();
	close(fd);
	if (r) {
		msg("some knobs could not be restored; %s/state is kept", STATE_DIR);
		return 1;
	}
	msg("restored the KSM knobs saved in %s/state%s", STATE_DIR,
	    watching ? ": every ksm-run that used them ended without restoring them (killed)" : "");
	return 0;
}

int restore_main(double watch_s)
{
	sigset_t stops;
	int r;

	if (watch_s <= 0)
		return restore_once(false);
	stop_signals_block(&stops, (const int[]){ SIGINT, SIGTERM, 0 });
	msg("watching %s/state every %g s: the knobs are put back when the last ksm-run that uses them "
	    "ends without doing so", STATE_DIR, watch_s);
	do {
		if ((r = restore_once(true)) == EXIT_OWN)
			return r;       /* the lock or the directory cannot be had: no look would do better */
	} while (stop_signals_wait(&stops, watch_s) <= 0);
	return 0;
}
