/*
 * hoststate.c: the state file the ksm-run instances of a machine share.
 *
 * It is input from outside like any other: every line is checked with the
 * rules that options get (knob names and values), pids and start times
 * must be real, and a file that breaks a rule is not used at all.  It is
 * set aside as state.corrupt so that it can be looked at, and the knobs
 * are never written from it.
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
#include "host/hoststate.h"
#include "host/knobs.h"
#include "host/statefile.h"

#define STATE_NAME "state"
#define STATE_TEXT_MAX (MAX_USERS * (80 + USER_NAME_MAX) + MAX_TARGETS * (48 + USER_NAME_MAX) + MAX_KNOBS * (KNOB_NAME_MAX + KNOB_VALUE_MAX + 8) + 512)

unsigned long long process_start_time(pid_t pid)
{
	struct proc_stat st;

	return proc_stat_read(pid, &st) ? 0 : st.starttime;
}

bool user_alive(const struct state_user *u)
{
	return (kill(u->pid, 0) == 0 || errno == EPERM) && process_start_time(u->pid) == u->start;
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

/* A name as the file keeps it: printable ASCII without spaces. */
static bool plain_name(const char *s)
{
	if (!*s || strlen(s) >= USER_NAME_MAX)
		return false;
	for (; *s; s++)
		if (*s <= ' ' || *s > '~')
			return false;
	return true;
}

static int parse_user(char **w, int n, struct hoststate *st, char *why, size_t whylen)
{
	/* A line of two fields (a ksm-run from before the six) has no name:
	 * "-", as election.c records a command without one and as
	 * hoststate_format writes an empty one, so that it reads back the same. */
	struct state_user u = { .kind = USER_COMMAND, .wants_tuning = true, .name = "-" };
	long long pid, start, since = 0, wants = 1;

	if (n != 3 && n != 7) {
		snprintf(why, whylen, "a user line has 2 or 6 fields");
		return -1;
	}
	if (parse_ll(w[1], 1, 4194304, &pid) || parse_ll(w[2], 1, LLONG_MAX, &start)) {
		snprintf(why, whylen, "a user needs a pid 1..4194304 and a start time > 0");
		return -1;
	}
	if (n == 7) {
		if (strcmp(w[3], "command") && strcmp(w[3], "daemon")) {
			snprintf(why, whylen, "a user is a command or a daemon");
			return -1;
		}
		if (parse_ll(w[4], 0, LLONG_MAX, &since) || parse_ll(w[5], 0, 1, &wants) || !plain_name(w[6])) {
			snprintf(why, whylen, "a user needs a time, 0 or 1, and a plain name");
			return -1;
		}
		u.kind = w[3][0] == 'd' ? USER_DAEMON : USER_COMMAND;
		snprintf(u.name, sizeof u.name, "%s", w[6]);
	}
	if (st->nusers == MAX_USERS) {
		snprintf(why, whylen, "more than %d users", MAX_USERS);
		return -1;
	}
	u.pid = (pid_t)pid;
	u.start = (unsigned long long)start;
	u.since = since;
	u.wants_tuning = wants != 0;
	st->users[st->nusers++] = u;
	return 0;
}

static int parse_target(char **w, int n, struct hoststate *st, char *why, size_t whylen)
{
	struct state_target *t;
	long long pid, start;

	if (n != 4 || parse_ll(w[1], 1, 4194304, &pid) || parse_ll(w[2], 1, LLONG_MAX, &start) ||
	    !plain_name(w[3])) {
		snprintf(why, whylen, "a target line is PID (1..4194304) START (> 0) NAME (plain)");
		return -1;
	}
	if (st->ntargets == MAX_TARGETS) {
		snprintf(why, whylen, "more than %d targets", MAX_TARGETS);
		return -1;
	}
	t = &st->targets[st->ntargets++];
	t->pid = (pid_t)pid;
	t->start = (unsigned long long)start;
	snprintf(t->name, sizeof t->name, "%s", w[3]);
	return 0;
}

const char *held_phase_name(int phase)
{
	static const char *const names[HELD_PHASES] = {
		"none", "boost", "steady", "the user's rate", "yielded to another manager",
	};

	return phase >= 0 && phase < HELD_PHASES ? names[phase] : "?";
}

const char *held_phase_key(int phase)
{
	static const char *const keys[HELD_PHASES] = { "none", "boost", "steady", "user_rate", "yielded" };

	return phase >= 0 && phase < HELD_PHASES ? keys[phase] : "unknown";
}

static int parse_line(char **w, int n, struct hoststate *st, char *why, size_t whylen)
{
	long long a, b, c;
	char kwhy[256];

	if (!strcmp(w[0], "user"))
		return parse_user(w, n, st, why, whylen);
	if (!strcmp(w[0], "target"))
		return parse_target(w, n, st, why, whylen);
	if (!strcmp(w[0], "tuner")) {
		if (n != 4 || parse_ll(w[1], 1, 4194304, &a) || parse_ll(w[2], 1, LLONG_MAX, &b) ||
		    parse_ll(w[3], 0, HELD_PHASES - 1, &c) || st->tuner || st->tuner_phase) {
			snprintf(why, whylen, "a tuner line is PID START PHASE (0..%d), once, without a phase line",
				 HELD_PHASES - 1);
			return -1;
		}
		st->tuner = (pid_t)a;
		st->tuner_start = (unsigned long long)b;
		st->tuner_phase = (int)c;
		return 0;
	}
	/* The phase the last holder left in, while nobody holds the tuning. */
	if (!strcmp(w[0], "phase")) {
		if (n != 2 || parse_ll(w[1], 1, HELD_PHASES - 1, &a) || st->tuner || st->tuner_phase) {
			snprintf(why, whylen, "a phase line is a PHASE (1..%d), once, without a tuner line",
				 HELD_PHASES - 1);
			return -1;
		}
		st->tuner_phase = (int)a;
		return 0;
	}
	if (!strcmp(w[0], "gen")) {
		if (n != 2 || parse_ll(w[1], 0, LLONG_MAX, &a)) {
			snprintf(why, whylen, "a gen line is a number");
			return -1;
		}
		st->gen = (unsigned long)a;
		return 0;
	}
	if (!strcmp(w[0], "knob")) {
		if (n != 3) {
			snprintf(why, whylen, "a knob line is NAME VALUE");
			return -1;
		}
		if (knob_check_name(w[1], kwhy, sizeof kwhy) || knob_check_value(w[1], w[2], kwhy, sizeof kwhy)) {
			snprintf(why, whylen, "%s", kwhy);
			return -1;
		}
		if (knob_lookup(&st->saved, w[1]) || st->saved.n == MAX_KNOBS) {
			snprintf(why, whylen, "knob %s twice, or too many knobs", w[1]);
			return -1;
		}
		knob_put(&st->saved, w[1], w[2]);
		return 0;
	}
	snprintf(why, whylen, "unknown keyword '%.32s'", w[0]);
	return -1;
}

int hoststate_parse(char *text, struct hoststate *st, char *why, size_t whylen)
{
	char *line, *next, *p, *w[8], lwhy[256];
	int lineno = 0, n;

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
		for (n = 0; n < 8 && (w[n] = word(&p)); n++)
			;
		if (n == 8 || n < 2) {
			snprintf(why, whylen, "line %d: not KEYWORD FIELD...", lineno);
			return -1;
		}
		if (parse_line(w, n, st, lwhy, sizeof lwhy)) {
			snprintf(why, whylen, "line %d: %s", lineno, lwhy);
			return -1;
		}
	}
	knob_order(&st->saved);
	return 0;
}

size_t hoststate_format(const struct hoststate *st, char *buf, size_t size)
{
	size_t n = (size_t)snprintf(buf, size, "# ksm-run: the KSM knobs from before the first running ksm-run, "
				    "its instances, and the tuner\n");

	if (n < size)
		n += (size_t)snprintf(buf + n, size - n, "gen %lu\n", st->gen);
	if (st->tuner && n < size)
		n += (size_t)snprintf(buf + n, size - n, "tuner %d %llu %d\n", (int)st->tuner, st->tuner_start,
				      st->tuner_phase);
	/* A holder that left: the next one goes on from its phase, not from a boost. */
	else if (st->tuner_phase && n < size)
		n += (size_t)snprintf(buf + n, size - n, "phase %d\n", st->tuner_phase);
	for (int i = 0; i < st->nusers && n < size; i++) {
		const struct state_user *u = &st->users[i];
		n += (size_t)snprintf(buf + n, size - n, "user %d %llu %s %lld %d %s\n", (int)u->pid, u->start,
				      u->kind == USER_DAEMON ? "daemon" : "command", u->since,
				      u->wants_tuning ? 1 : 0, u->name[0] ? u->name : "-");
	}
	for (int i = 0; i < st->ntargets && n < size; i++)
		n += (size_t)snprintf(buf + n, size - n, "target %d %llu %s\n", (int)st->targets[i].pid,
				      st->targets[i].start, st->targets[i].name[0] ? st->targets[i].name : "-");
	for (int i = 0; i < st->saved.n && n < size; i++)
		n += (size_t)snprintf(buf + n, size - n, "knob %s %s\n", st->saved.k[i].name,
				      st->saved.k[i].value);
	return n;
}

int hoststate_load(struct hoststate *st, bool strict)
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
	if ((size_t)n != strlen(text))
		snprintf(why, sizeof why, "a NUL byte");
	else if (hoststate_parse(text, st, why, sizeof why) == 0)
		return 0;
	msg("%s/%s is corrupt (%s): not used%s", STATE_DIR, STATE_NAME, why,
	    strict ? "" : "; it is kept as state.corrupt and the knobs as they are now count as before");
	memset(st, 0, sizeof *st);
	if (strict)
		return -EINVAL;
	snprintf(from, sizeof from, "%s/%s", STATE_DIR, STATE_NAME);
	snprintf(to, sizeof to, "%s/%s.corrupt", STATE_DIR, STATE_NAME);
	return rename(from, to) ? -errno : 0;
}

int hoststate_store(const struct hoststate *st)
{
	static char text[STATE_TEXT_MAX];
	size_t n = hoststate_format(st, text, sizeof text);

	return n >= sizeof text ? -EFBIG : statefile_write(STATE_DIR, STATE_NAME, text, n);
}

int hoststate_remove(void)
{
	return unlink(STATE_DIR "/" STATE_NAME) && errno != ENOENT ? -errno : 0;
}

int hoststate_lock(void)
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

int hoststate_peek(struct hoststate *st, char *why, size_t whylen)
{
	static char text[STATE_TEXT_MAX];
	long r = statefile_read(STATE_DIR, STATE_NAME, text, sizeof text);

	memset(st, 0, sizeof *st);
	if (r < 0)
		return (int)r;
	if ((size_t)r != strlen(text)) {
		snprintf(why, whylen, "a NUL byte");
		return -EINVAL;
	}
	if (hoststate_parse(text, st, why, whylen))
		return -EINVAL;
	/* A tuner that ended is none, whatever the file still says (it may not be writable). */
	if (st->tuner) {
		struct state_user t = { .pid = st->tuner, .start = st->tuner_start };
		if (!user_alive(&t))
			st->tuner = 0;
	}
	return 0;
}

void hoststate_prune(struct hoststate *st, pid_t self)
{
	int j = 0;

	for (int i = 0; i < st->nusers; i++)
		if (st->users[i].pid != self && user_alive(&st->users[i]))
			st->users[j++] = st->users[i];
	st->nusers = j;
	j = 0;
	for (int i = 0; i < st->ntargets; i++) {
		struct state_user t = { .pid = st->targets[i].pid, .start = st->targets[i].start };
		if (user_alive(&t))
			st->targets[j++] = st->targets[i];
	}
	st->ntargets = j;
	if (st->tuner) {
		struct state_user t = { .pid = st->tuner, .start = st->tuner_start };
		if (st->tuner == self || !user_alive(&t))
			st->tuner = 0;
	}
}
