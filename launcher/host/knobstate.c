/*
 * knobstate.c: the knob values from before the first of overlapping ksm-run
 * instances, kept in /run/ksm-run/state under a lock.  The reference count
 * is the list of live users (pid and start time, so a reused pid is not
 * mistaken for a user): the last user to end restores the saved values.  A
 * ksm-run killed by SIGKILL leaves its entry behind; it is seen as dead, and
 * the saved values stay until the next run ends or --restore.
 *
 * The file is input from outside like any other: every line is checked
 * with the rules that options get (knob names and values), pids and start
 * times must be real, and a file that breaks a rule is not used at all.
 * It is set aside as state.corrupt so that it can be looked at, and the
 * knobs are never written from it.
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/msg.h"
#include "common/parse.h"
#include "common/procfs.h"
#include "host/knobs.h"
#include "host/knobstate.h"
#include "host/statefile.h"

#define STATE_NAME "state"
#define STATE_TEXT_MAX (MAX_USERS * 48 + MAX_KNOBS * (KNOB_NAME_MAX + KNOB_VALUE_MAX + 8) + 256)

static unsigned long long start_time(pid_t pid)
{
	struct proc_stat st;

	return proc_stat_read(pid, &st) ? 0 : st.starttime;
}

static bool user_alive(const struct state_user *u)
{
	return (kill(u->pid, 0) == 0 || errno == EPERM) && start_time(u->pid) == u->start;
}

/* The next space-separated word of *P, NUL-terminated in place. */
static char *word(char **p)
{
	char *w = *p;

	while (*w == ' ')
		w++;
	if (!*w)
		return NULL;
	*p = w + strcspn(w, " ");
	if (**p)
		*(*p)++ = '\0';
	return w;
}

int knobstate_parse(char *text, struct knobstate *st, char *why, size_t whylen)
{
	char *line, *next, *p, *kw, *a, *b;
	int lineno = 0;

	memset(st, 0, sizeof *st);
	st->exists = true;
	for (line = text; line && *line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		lineno++;
		if (line[0] == '#' || !line[0])
			continue;
		p = line;
		kw = word(&p);
		a = word(&p);
		b = word(&p);
		if (!kw || !a || !b || word(&p)) {
			snprintf(why, whylen, "line %d: not KEYWORD A B", lineno);
			return -1;
		}
		if (!strcmp(kw, "user")) {
			long long pid, start;
			if (parse_ll(a, 1, 4194304, &pid) || parse_ll(b, 1, LLONG_MAX, &start)) {
				snprintf(why, whylen, "line %d: a user needs a pid 1..4194304 and a start time > 0", lineno);
				return -1;
			}
			if (st->nusers == MAX_USERS) {
				snprintf(why, whylen, "line %d: more than %d users", lineno, MAX_USERS);
				return -1;
			}
			st->users[st->nusers++] = (struct state_user){ (pid_t)pid, (unsigned long long)start };
		} else if (!strcmp(kw, "knob")) {
			char kwhy[256];
			if (knob_check_name(a, kwhy, sizeof kwhy) || knob_check_value(a, b, kwhy, sizeof kwhy)) {
				snprintf(why, whylen, "line %d: %s", lineno, kwhy);
				return -1;
			}
			if (knob_lookup(&st->saved, a) || st->saved.n == MAX_KNOBS) {
				snprintf(why, whylen, "line %d: knob %s twice, or too many knobs", lineno, a);
				return -1;
			}
			knob_put(&st->saved, a, b);
		} else {
			snprintf(why, whylen, "line %d: unknown keyword '%.32s'", lineno, kw);
			return -1;
		}
	}
	knob_order(&st->saved);
	return 0;
}

size_t knobstate_format(const struct knobstate *st, char *buf, size_t size)
{
	size_t n = (size_t)snprintf(buf, size, "# ksm-run: KSM knobs from before the first running ksm-run\n");

	for (int i = 0; i < st->nusers && n < size; i++)
		n += (size_t)snprintf(buf + n, size - n, "user %d %llu\n", (int)st->users[i].pid,
				      st->users[i].start);
	for (int i = 0; i < st->saved.n && n < size; i++)
		n += (size_t)snprintf(buf + n, size - n, "knob %s %s\n", st->saved.k[i].name,
				      st->saved.k[i].value);
	return n;
}

/*
 * Loads the state.  Returns 0 (st->exists tells whether there was one),
 * or -errno with a message said; a corrupt file is set aside and counts as
 * none after a warning, unless STRICT (then -EINVAL: --restore refuses).
 */
static int load(struct knobstate *st, bool strict)
{
	static char text[STATE_TEXT_MAX];
	char why[256], from[64], to[64];
	long n = statefile_read(STATE_DIR, STATE_NAME, text, sizeof text);

	memset(st, 0, sizeof *st);
	if (n == -ENOENT)
		return 0;
	if (n < 0) {
		msg_errno((int)-n, "cannot read %s/%s%s", STATE_DIR, STATE_NAME,
			  n == -EPERM ? " (not a regular file of this user)" : "");
		return (int)n;
	}
	if ((size_t)n != strlen(text)) {
		snprintf(why, sizeof why, "a NUL byte");
	} else if (knobstate_parse(text, st, why, sizeof why) == 0) {
		return 0;
	}
	msg("%s/%s is corrupt (%s): not used%s", STATE_DIR, STATE_NAME, why,
	    strict ? "" : "; it is kept as state.corrupt and the knobs as they are now count as before");
	memset(st, 0, sizeof *st);
	if (strict)
		return -EINVAL;
	snprintf(from, sizeof from, "%s/%s", STATE_DIR, STATE_NAME);
	snprintf(to, sizeof to, "%s/%s.corrupt", STATE_DIR, STATE_NAME);
	if (rename(from, to))
		return -errno;
	return 0;
}

static int store(const struct knobstate *st)
{
	static char text[STATE_TEXT_MAX];
	size_t n = knobstate_format(st, text, sizeof text);

	return n >= sizeof text ? -EFBIG : statefile_write(STATE_DIR, STATE_NAME, text, n);
}

static void prune(struct knobstate *st, pid_t self)
{
	int j = 0;

	for (int i = 0; i < st->nusers; i++)
		if (st->users[i].pid != self && user_alive(&st->users[i]))
			st->users[j++] = st->users[i];
	st->nusers = j;
}

/* The directory checked and the lock taken: the descriptor, or -errno (said). */
static int lock_state(void)
{
	char why[256];
	int r, fd;

	if ((r = statedir_check(STATE_DIR, 1, why, sizeof why))) {
		msg("%s; the knob state is not used", why);
		return r;
	}
	if ((fd = statefile_lock(STATE_DIR)) < 0)
		msg_errno(-fd, "cannot lock %s/lock", STATE_DIR);
	return fd;
}

/*
 * Registers this run and writes the wanted knobs, all under the lock so
 * that two runs starting together cannot both save the other's values.
 */
int knobstate_begin(const struct knob_set *want)
{
	static struct knobstate st;
	int fd = lock_state(), r;
	pid_t self = getpid();

	if (fd < 0)
		return fd;
	if ((r = load(&st, false)) < 0) {
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
		st.exists = true;
	} else if (st.nusers == 0) {
		msg("found knob state saved by a ksm-run that was killed; it will be restored when this run ends");
	}
	if (st.nusers == MAX_USERS) {
		msg("%d ksm-run already share the saved knob state, the most it holds: this run "
		    "changes no knob (its command runs untuned)", MAX_USERS);
		close(fd);
		return -EUSERS;
	}
	st.users[st.nusers++] = (struct state_user){ self, start_time(self) };
	if ((r = store(&st))) {
		msg_errno(-r, "cannot write %s/%s", STATE_DIR, STATE_NAME);
		close(fd);
		return r;
	}
	r = knobs_apply(want, NULL);
	close(fd);
	return r;
}

int knobstate_end(void)
{
	static struct knobstate st;
	int fd = lock_state(), r;

	if (fd < 0)
		return fd;
	if ((r = load(&st, false)) < 0 || !st.exists) {
		close(fd);
		return r;
	}
	prune(&st, getpid());
	if (st.nusers == 0) {
		r = knobs_restore(&st.saved);
		/* The file stays if a knob could not be put back: --restore can retry. */
		if (!r && unlink(STATE_DIR "/" STATE_NAME))
			r = -errno;
	} else {
		r = store(&st);
	}
	close(fd);
	return r;
}

int knobstate_restore_cmd(void)
{
	static struct knobstate st;
	int fd, r;

	if (access(STATE_DIR "/" STATE_NAME, F_OK)) {
		msg("no saved knob state in %s/%s: nothing to restore", STATE_DIR, STATE_NAME);
		return 0;
	}
	if ((fd = lock_state()) < 0)
		return EXIT_OWN;
	if ((r = load(&st, true)) < 0) {
		close(fd);
		return r == -EINVAL ? 1 : EXIT_OWN;
	}
	prune(&st, getpid());
	if (st.nusers) {
		msg("%d running ksm-run (pid %d%s) still use the saved state; not restoring",
		    st.nusers, (int)st.users[0].pid, st.nusers > 1 ? " and others" : "");
		close(fd);
		return 1;
	}
	r = knobs_restore(&st.saved);
	if (!r && unlink(STATE_DIR "/" STATE_NAME))
		r = -errno;
	close(fd);
	if (r) {
		msg("some knobs could not be restored; %s/%s is kept", STATE_DIR, STATE_NAME);
		return 1;
	}
	msg("restored the KSM knobs saved in %s/%s", STATE_DIR, STATE_NAME);
	return 0;
}

/* Read-only, without the lock, for --status (which works without root). */
int knobstate_describe(char *buf, size_t len)
{
	static char text[STATE_TEXT_MAX];
	static struct knobstate st;
	char why[256];
	long r = statefile_read(STATE_DIR, STATE_NAME, text, sizeof text);
	int live = 0;
	size_t n;

	if (r == -ENOENT) {
		snprintf(buf, len, "none (no ksm-run holds saved knobs)");
		return 0;
	}
	if (r < 0) {
		snprintf(buf, len, "cannot read %s/%s: %s%s", STATE_DIR, STATE_NAME, strerror((int)-r),
			 r == -EACCES ? " (it is root's)" : "");
		return 1;
	}
	if (knobstate_parse(text, &st, why, sizeof why)) {
		snprintf(buf, len, "CORRUPT (%s): not used; `ksm-run --restore` refuses it", why);
		return 1;
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
	return access(STATE_DIR "/" STATE_NAME, F_OK) == 0 && access(STATE_DIR "/lock", W_OK) == 0;
}
