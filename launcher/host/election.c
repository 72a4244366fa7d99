/* election.c: registering, electing the one tuner, taking over, leaving. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/msg.h"
#include "host/election.h"
#include "host/hoststate.h"
#include "host/knobs.h"
#include "host/statefile.h"

static struct hoststate st;            /* large: not on the stack */

static struct state_user *find_user(pid_t pid)
{
	for (int i = 0; i < st.nusers; i++)
		if (st.users[i].pid == pid)
			return &st.users[i];
	return NULL;
}

static const char *tuner_name(void)
{
	struct state_user *u = find_user(st.tuner);

	return u ? u->name : "?";
}

static const char *when_text(long long since)
{
	static char buf[32];
	time_t t = (time_t)since;
	struct tm tm;

	if (!localtime_r(&t, &tm) || !strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S", &tm))
		snprintf(buf, sizeof buf, "?");
	return buf;
}

static void note_saved_sleep(struct membership *m)
{
	const char *v = knob_lookup(&st.saved, "sleep_millisecs");

	snprintf(m->saved_sleep, sizeof m->saved_sleep, "%s", v ? v : "20");
}

/* The knobs of WANT that this instance may write. */
static void split_want(const struct membership *m, const struct knob_set *want, struct knob_set *mine)
{
	int skipped = 0;
	char list[256] = "";

	mine->n = 0;
	for (int i = 0; i < want->n; i++) {
		if (!knob_is_rate(want->k[i].name) || m->tuning) {
			knob_put(mine, want->k[i].name, want->k[i].value);
		} else if (strlen(list) + strlen(want->k[i].name) + 3 < sizeof list) {
			snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", skipped++ ? ", " : "",
				 want->k[i].name);
		}
	}
	if (skipped && m->wants_tuning)
		msg("the machine's tuner, pid %d (%s), sets the scan rate: %s not written by this run",
		    (int)st.tuner, tuner_name(), list);
}

int election_join(struct membership *m, const struct knob_set *want, int phase)
{
	struct knob_set mine;
	pid_t self = getpid();
	int fd = hoststate_lock(), r;

	if (fd < 0)
		return fd;
	if ((r = hoststate_load(&st, false)) < 0)
		goto out;
	hoststate_prune(&st, 0);
	if (!st.exists) {
		if ((r = knobs_read_all(&st.saved))) {
			msg_errno(-r, "cannot read the KSM knobs");
			goto out;
		}
		st.exists = true;
	} else if (st.nusers == 0) {
		/*
		 * Before anything else: a run that writes fewer knobs than the
		 * killed one (or none) must not keep its boost.
		 */
		if (knobs_restore(&st.saved))
			msg("found knob state saved by a ksm-run that was killed; some knobs could not be put back "
			    "now, all will be when this run ends");
		else
			msg("found knob state saved by a ksm-run that was killed: put the knobs back first; they "
			    "will be again when this run ends");
	}
	if (st.nusers == MAX_USERS) {
		msg("%d ksm-run already share the saved knob state, the most it holds: this run "
		    "changes no knob (its command runs untuned)", MAX_USERS);
		r = -EUSERS;
		goto out;
	}
	if (m->kind == USER_DAEMON)
		for (int i = 0; i < st.nusers; i++)
			if (st.users[i].kind == USER_DAEMON) {
				msg("another ksm-run --daemon, pid %d, tunes this machine since %s: "
				    "one daemon per machine", (int)st.users[i].pid, when_text(st.users[i].since));
				r = -EEXIST;
				goto out;
			}
	/* The first that wants to tune holds it; a daemon takes it from a command. */
	m->tuning = m->wants_tuning &&
		    (!st.tuner || (m->kind == USER_DAEMON && (!find_user(st.tuner) ||
							      find_user(st.tuner)->kind != USER_DAEMON)));
	if (m->tuning) {
		st.tuner = self;
		st.tuner_start = process_start_time(self);
		st.tuner_phase = phase;
	}
	st.users[st.nusers++] = (struct state_user){
		.pid = self, .start = process_start_time(self), .kind = m->kind,
		.since = (long long)time(NULL), .wants_tuning = m->wants_tuning,
	};
	snprintf(st.users[st.nusers - 1].name, USER_NAME_MAX, "%s", m->name[0] ? m->name : "-");
	st.gen++;
	m->gen_seen = st.gen;
	if ((r = hoststate_store(&st))) {
		msg_errno(-r, "cannot write %s/state", STATE_DIR);
		goto out;
	}
	m->joined = true;
	note_saved_sleep(m);
	split_want(m, want, &mine);
	r = knobs_apply(&mine, NULL);
out:
	close(fd);
	return r;
}

/*
 * The state could not be written (a full /run): said once, and this
 * instance goes on from what it knows.  Nothing is lost that matters: the
 * others judge who ended by their pids (hoststate_prune), and the one who
 * takes over is the first live candidate, whatever the file still says.
 */
static void store_or_go_on(struct membership *m)
{
	int r = hoststate_store(&st);

	if (r && !m->store_failed)
		msg_errno(-r, "cannot write %s/state; this instance goes on from what it knows "
			  "(said once)", STATE_DIR);
	m->store_failed = r != 0;
}

/* The first live instance that wants to tune, in the order they came. */
static bool first_candidate(pid_t self)
{
	for (int i = 0; i < st.nusers; i++)
		if (st.users[i].wants_tuning)
			return st.users[i].pid == self;
	return false;
}

int election_tick(struct membership *m, int phase, struct election_news *news)
{
	pid_t self = getpid();
	int fd, r, prior, had_users, had_targets;
	bool dirty = false, had_tuner;

	memset(news, 0, sizeof *news);
	if (!m->joined)
		return 0;
	if ((fd = hoststate_lock()) < 0)
		return fd;
	if ((r = hoststate_load(&st, false)) < 0)
		goto out;
	if (!st.exists) {
		r = -ENOENT;   /* removed under us (--restore refuses while we live): no news */
		goto out;
	}
	prior = st.tuner_phase;
	had_tuner = st.tuner != 0;
	had_users = st.nusers;
	had_targets = st.ntargets;
	hoststate_prune(&st, 0);
	/* The holder, or others, or targets, are gone: say so in the file. */
	dirty = (had_tuner && !st.tuner) || st.nusers != had_users || st.ntargets != had_targets;
	if (m->tuning && st.tuner && st.tuner != self) {
		m->tuning = false;
		news->lost_tuning = true;
	} else if (m->tuning && !st.tuner) {
		/* It took over while the state could not be written: it still holds it. */
		st.tuner = self;
		st.tuner_start = process_start_time(self);
		dirty = true;
	}
	if (!m->tuning && !st.tuner && m->wants_tuning && first_candidate(self)) {
		st.tuner = self;
		st.tuner_start = process_start_time(self);
		m->tuning = true;
		news->became_tuner = true;
		news->prior_phase = prior;
		dirty = true;
	}
	/* A new holder's PHASE is from before it held the tuning (off): the
	 * phase it takes up comes from election_took_over(). */
	if (m->tuning && !news->became_tuner && st.tuner_phase != phase) {
		st.tuner_phase = phase;
		dirty = true;
	}
	news->new_work = st.gen != m->gen_seen;
	m->gen_seen = st.gen;
	news->tuner = st.tuner;
	news->users = st.nusers;
	for (int i = 0; i < st.nusers; i++) {
		news->roots[i] = st.users[i].pid;
		news->daemon |= st.users[i].kind == USER_DAEMON;
	}
	news->ntargets = st.ntargets;
	for (int i = 0; i < st.ntargets; i++)
		news->targets[i] = st.targets[i].pid;
	note_saved_sleep(m);
	if (dirty)
		store_or_go_on(m);
	m->locked = true;
	m->lock_fd = fd;
	return 0;
out:
	close(fd);
	return r;
}

void election_took_over(struct membership *m, int phase)
{
	if (!m->locked || !m->tuning || st.tuner_phase == phase)
		return;
	st.tuner_phase = phase;
	store_or_go_on(m);
}

void election_unlock(struct membership *m)
{
	if (m->locked)
		close(m->lock_fd);
	m->locked = false;
}

static bool has_target(pid_t pid, unsigned long long start)
{
	for (int i = 0; i < st.ntargets; i++)
		if (st.targets[i].pid == pid && st.targets[i].start == start)
			return true;
	return false;
}

static void describe_tuning(struct tuning_view *view)
{
	const char *run = knob_lookup(&st.saved, "run");

	view->instances = st.nusers;
	view->tuner = st.tuner;
	snprintf(view->tuner_name, sizeof view->tuner_name, "%s", st.tuner ? tuner_name() : "");
	for (int i = 0; i < st.nusers; i++)
		view->daemon |= st.users[i].kind == USER_DAEMON;
	snprintf(view->saved_run, sizeof view->saved_run, "%s", run ? run : "");
}

int election_add_targets(const struct state_target *t, int n, struct tuning_view *view)
{
	int fd, r;

	memset(view, 0, sizeof *view);
	if (!election_state_exists())
		return 0;
	if ((fd = hoststate_lock()) < 0)
		return fd;
	if ((r = hoststate_load(&st, false)) < 0 || !st.exists)
		goto out;
	hoststate_prune(&st, 0);
	if (!st.nusers)
		goto out;               /* left by a killed ksm-run: the next instance restores it */
	for (int i = 0; i < n; i++) {
		if (has_target(t[i].pid, t[i].start))
			continue;
		if (st.ntargets == MAX_TARGETS) {
			msg("%d attached processes are registered already, the most the state holds: "
			    "the machine's tuner does not count the memory of the rest", MAX_TARGETS);
			break;
		}
		st.targets[st.ntargets++] = t[i];
		view->added++;
	}
	if (view->added)
		st.gen++;       /* new work: the tuner boosts for it as for a new command */
	describe_tuning(view);
	if (view->added && (r = hoststate_store(&st)))
		msg_errno(-r, "cannot write %s/state: the machine's tuner is not told of the targets", STATE_DIR);
out:
	close(fd);
	return r;
}

int election_drop_targets(const pid_t *pids, int n)
{
	int fd, r, j = 0;

	if (!election_state_exists())
		return 0;
	if ((fd = hoststate_lock()) < 0)
		return fd;
	if ((r = hoststate_load(&st, false)) < 0 || !st.exists)
		goto out;
	for (int i = 0; i < st.ntargets; i++) {
		bool dropped = false;
		for (int k = 0; k < n && !dropped; k++)
			dropped = st.targets[i].pid == pids[k];
		if (!dropped)
			st.targets[j++] = st.targets[i];
	}
	if (j != st.ntargets) {
		st.ntargets = j;
		if ((r = hoststate_store(&st)))
			msg_errno(-r, "cannot write %s/state", STATE_DIR);
	}
out:
	close(fd);
	return r;
}

int election_leave(struct membership *m)
{
	int fd, r;

	if (!m->joined)
		return 0;
	if ((fd = hoststate_lock()) < 0)
		return fd;
	if ((r = hoststate_load(&st, false)) < 0 || !st.exists)
		goto out;
	hoststate_prune(&st, getpid());
	m->joined = m->tuning = false;
	if (st.nusers == 0) {
		r = knobs_restore(&st.saved);
		/* The file stays if a knob could not be put back: --restore can retry. */
		if (!r)
			r = hoststate_remove();
		m->restored = !r;
	} else {
		/* Even if this cannot be written, the others see that this pid ended. */
		store_or_go_on(m);
	}
out:
	close(fd);
	return r;
}

bool election_state_exists(void)
{
	return access(STATE_DIR "/state", F_OK) == 0 && access(STATE_DIR "/lock", W_OK) == 0;
}
