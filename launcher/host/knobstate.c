/*
 * knobstate.c: the knob values from before the first of overlapping ksm-run
 * instances, kept in /run/ksm-run/state under a lock.  The reference count
 * is the list of live users (pid and start time, so a reused pid is not
 * mistaken for a user): the last user to end restores the saved values.  A
 * ksm-run killed by SIGKILL leaves its entry behind; it is seen as dead, and
 * the saved values stay until the next run ends or --restore.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/files.h"
#include "common/msg.h"
#include "common/procfs.h"
#include "host/knobs.h"
#include "host/knobstate.h"

#define STATE_FILE KNOBSTATE_DIR "/state"
#define LOCK_FILE KNOBSTATE_DIR "/lock"
#define MAX_USERS 256

struct state {
	bool exists;
	int nusers;
	struct user {
		pid_t pid;
		unsigned long long start;
	} users[MAX_USERS];
	struct knob_set saved;
};

static unsigned long long start_time(pid_t pid)
{
	struct proc_stat st;

	return proc_stat_read(pid, &st) ? 0 : st.starttime;
}

static bool user_alive(const struct user *u)
{
	return (kill(u->pid, 0) == 0 || errno == EPERM) && start_time(u->pid) == u->start;
}

static int load(struct state *st)
{
	FILE *f = fopen(STATE_FILE, "re");
	char line[256], a[KNOB_NAME_MAX], b[KNOB_VALUE_MAX];

	memset(st, 0, sizeof *st);
	if (!f)
		return errno == ENOENT ? 0 : -errno;
	st->exists = true;
	while (fgets(line, sizeof line, f)) {
		int pid;
		unsigned long long t;

		if (sscanf(line, "user %d %llu", &pid, &t) == 2 && st->nusers < MAX_USERS)
			st->users[st->nusers++] = (struct user){ pid, t };
		else if (sscanf(line, "knob %63s %63s", a, b) == 2)
			knob_put(&st->saved, a, b);
	}
	fclose(f);
	knob_order(&st->saved);
	return 0;
}

/* Written to a temporary file and renamed: a crash never leaves half a file. */
static int store(const struct state *st)
{
	FILE *f = fopen(STATE_FILE ".tmp", "we");

	if (!f)
		return -errno;
	fprintf(f, "# ksm-run: KSM knobs from before the first running ksm-run\n");
	for (int i = 0; i < st->nusers; i++)
		fprintf(f, "user %d %llu\n", (int)st->users[i].pid, st->users[i].start);
	for (int i = 0; i < st->saved.n; i++)
		fprintf(f, "knob %s %s\n", st->saved.k[i].name, st->saved.k[i].value);
	if (fflush(f) || fsync(fileno(f))) {
		int err = errno;
		fclose(f);
		return -err;
	}
	fclose(f);
	return rename(STATE_FILE ".tmp", STATE_FILE) ? -errno : 0;
}

static void prune(struct state *st, pid_t self)
{
	int j = 0;

	for (int i = 0; i < st->nusers; i++)
		if (st->users[i].pid != self && user_alive(&st->users[i]))
			st->users[j++] = st->users[i];
	st->nusers = j;
}

static int lock_state(void)
{
	int fd;

	if (mkdir(KNOBSTATE_DIR, 0755) && errno != EEXIST)
		return -errno;
	if ((fd = open(LOCK_FILE, O_RDWR | O_CREAT | O_CLOEXEC, 0644)) < 0)
		return -errno;
	while (flock(fd, LOCK_EX))
		if (errno != EINTR) {
			int err = errno;
			close(fd);
			return -err;
		}
	return fd;
}

/*
 * Registers this run and writes the wanted knobs, all under the lock so
 * that two runs starting together cannot both save the other's values.
 */
int knobstate_begin(const struct knob_set *want)
{
	static struct state st;
	int fd = lock_state(), r;
	pid_t self = getpid();

	if (fd < 0) {
		msg_errno(-fd, "cannot lock %s", LOCK_FILE);
		return fd;
	}
	if ((r = load(&st)) < 0) {
		msg_errno(-r, "cannot read %s", STATE_FILE);
		close(fd);
		return r;
	}
	prune(&st, self);
	if (!st.exists) {
		if ((r = knobs_read_all(&st.saved))) {
			msg_errno(-r, "cannot read the KSM knobs");
			close(fd);
			return r;
		}
	} else if (st.nusers == 0) {
		msg("found knob state saved by a ksm-run that was killed; it will be restored when this run ends");
	}
	st.users[st.nusers++] = (struct user){ self, start_time(self) };
	if ((r = store(&st))) {
		msg_errno(-r, "cannot write %s", STATE_FILE);
		close(fd);
		return r;
	}
	r = knobs_apply(want, NULL);
	close(fd);
	return r;
}

int knobstate_end(void)
{
	static struct state st;
	int fd = lock_state(), r;

	if (fd < 0) {
		msg_errno(-fd, "cannot lock %s to restore the knobs", LOCK_FILE);
		return fd;
	}
	if ((r = load(&st)) < 0 || !st.exists) {
		close(fd);
		return r;
	}
	prune(&st, getpid());
	if (st.nusers == 0) {
		r = knobs_restore(&st.saved);
		/* The file stays if a knob could not be put back: --restore can retry. */
		if (!r && unlink(STATE_FILE))
			r = -errno;
	} else {
		r = store(&st);
	}
	close(fd);
	return r;
}

int knobstate_restore_cmd(void)
{
	static struct state st;
	int fd, r;

	if (access(STATE_FILE, F_OK)) {
		msg("no saved knob state in %s: nothing to restore", STATE_FILE);
		return 0;
	}
	if ((fd = lock_state()) < 0) {
		msg_errno(-fd, "cannot lock %s", LOCK_FILE);
		return EXIT_OWN;
	}
	if ((r = load(&st)) < 0) {
		msg_errno(-r, "cannot read %s", STATE_FILE);
		close(fd);
		return EXIT_OWN;
	}
	prune(&st, getpid());
	if (st.nusers) {
		msg("%d running ksm-run (pid %d%s) still use the saved state; not restoring",
		       st.nusers, (int)st.users[0].pid, st.nusers > 1 ? " and others" : "");
		close(fd);
		return 1;
	}
	r = knobs_restore(&st.saved);
	if (!r && unlink(STATE_FILE))
		r = -errno;
	close(fd);
	if (r) {
		msg("some knobs could not be restored; %s is kept", STATE_FILE);
		return 1;
	}
	msg("restored the KSM knobs saved in %s", STATE_FILE);
	return 0;
}

/* Read-only, without the lock, for --status (which works without root). */
int knobstate_describe(char *buf, size_t len)
{
	static struct state st;
	int r = load(&st), live = 0;
	size_t n;

	if (r < 0) {
		snprintf(buf, len, "cannot read %s: %s", STATE_FILE, strerror(-r));
		return 1;
	}
	if (!st.exists) {
		snprintf(buf, len, "none (no ksm-run holds saved knobs)");
		return 0;
	}
	for (int i = 0; i < st.nusers; i++)
		live += user_alive(&st.users[i]);
	if (live)
		n = (size_t)snprintf(buf, len, "%d running ksm-run hold saved knobs:", live);
	else
		n = (size_t)snprintf(buf, len, "LEFT BEHIND by a killed ksm-run; `ksm-run --restore` puts back:");
	for (int i = 0; i < st.saved.n && n < len; i++)
		n += (size_t)snprintf(buf + n, len - n, " %s=%s", st.saved.k[i].name, st.saved.k[i].value);
	return live ? 0 : 2;
}

int knobstate_exists(void)
{
	return access(STATE_FILE, F_OK) == 0 && access(LOCK_FILE, W_OK) == 0;
}
