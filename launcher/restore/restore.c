/*
 * restore.c: ksm-run --restore, the operator's way back to the knobs saved
 * before the first ksm-run of the machine changed them: after a crash, or
 * a kill -9, left the state file behind.  Refused while a ksm-run that
 * uses the state still runs.  A host agent's record that its agent left
 * without a word goes too.
 */
#include <errno.h>
#include <unistd.h>

#include "common/msg.h"
#include "host/hoststate.h"
#include "host/knobs.h"
#include "host/statefile.h"
#include "policy/agentstate.h"
#include "restore/restore.h"

static struct hoststate st;            /* large: not on the stack */

int restore_main(void)
{
	int fd, r;

	agent_forget_gone();
	if (access(STATE_DIR "/state", F_OK)) {
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
	if (st.nusers) {
		msg("%d running ksm-run (pid %d%s) still use the saved state; not restoring",
		    st.nusers, (int)st.users[0].pid, st.nusers > 1 ? " and others" : "");
		close(fd);
		return 1;
	}
	r = knobs_restore(&st.saved);
	if (!r)
		r = hoststate_remove();
	close(fd);
	if (r) {
		msg("some knobs could not be restored; %s/state is kept", STATE_DIR);
		return 1;
	}
	msg("restored the KSM knobs saved in %s/state", STATE_DIR);
	return 0;
}
