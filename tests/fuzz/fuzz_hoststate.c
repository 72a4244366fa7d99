/*
 * fuzz_hoststate.c - the state file that the ksm-run instances of a
 * machine share under /run/ksm-run (launcher/host/hoststate.c):
 * hoststate_parse on any text, and for every state it accepts a round trip:
 * hoststate_format, then hoststate_parse again, gives the same state, and
 * the formatted text is that again.  Also the state accepted keeps the
 * rules of hoststate.h (users, targets and the tuner with real pids and
 * start times, a user a command or a daemon with a time, 0 or 1 and a plain
 * name, a target with a plain name, the tuner's phase an enum held_phase,
 * knobs by the options' rules, no knob twice, bounded), and hoststate_format into a smaller buffer says that it
 * did not fit and writes no byte past it.  Any broken promise is a crash.
 *
 * Input: a byte for the size of the message buffer and a byte for the size
 * of the short format buffer, then the text of a state file (up to a NUL:
 * ksm-run refuses a file with a NUL before parsing it).
 */
#include <limits.h>

#include "fuzz.h"
#include "host/hoststate.h"
#include "host/knobs.h"

#define TEXT_MAX (1 << 16)

static void same_user(int i, const struct state_user *a, const struct state_user *b)
{
	FUZZ_CHECK(a->pid == b->pid && a->start == b->start && a->kind == b->kind && a->since == b->since &&
		   a->wants_tuning == b->wants_tuning && !strcmp(a->name, b->name),
		   "round trip: user %d, %d %llu %d %lld %d '%s', then %d %llu %d %lld %d '%s'", i,
		   (int)a->pid, a->start, a->kind, a->since, a->wants_tuning, a->name,
		   (int)b->pid, b->start, b->kind, b->since, b->wants_tuning, b->name);
}

static void same_state(const struct hoststate *a, const struct hoststate *b)
{
	FUZZ_CHECK(a->exists == b->exists && a->nusers == b->nusers && a->saved.n == b->saved.n,
		   "round trip: %d users and %d knobs, then %d and %d", a->nusers, a->saved.n, b->nusers, b->saved.n);
	FUZZ_CHECK(a->tuner == b->tuner && a->tuner_start == b->tuner_start && a->tuner_phase == b->tuner_phase &&
		   a->gen == b->gen, "round trip: tuner %d %llu %d gen %lu, then %d %llu %d gen %lu",
		   (int)a->tuner, a->tuner_start, a->tuner_phase, a->gen,
		   (int)b->tuner, b->tuner_start, b->tuner_phase, b->gen);
	for (int i = 0; i < a->nusers; i++)
		same_user(i, &a->users[i], &b->users[i]);
	FUZZ_CHECK(a->ntargets == b->ntargets, "round trip: %d targets, then %d", a->ntargets, b->ntargets);
	for (int i = 0; i < a->ntargets; i++)
		FUZZ_CHECK(a->targets[i].pid == b->targets[i].pid && a->targets[i].start == b->targets[i].start &&
			   !strcmp(a->targets[i].name, b->targets[i].name), "round trip: target %d", i);
	for (int i = 0; i < a->saved.n; i++)
		FUZZ_CHECK(!strcmp(a->saved.k[i].name, b->saved.k[i].name) &&
			   !strcmp(a->saved.k[i].value, b->saved.k[i].value),
			   "round trip: knob %d %s=%s, then %s=%s", i, a->saved.k[i].name, a->saved.k[i].value,
			   b->saved.k[i].name, b->saved.k[i].value);
}

/*
 * A name as hoststate.c keeps it: printable ASCII without spaces, bounded
 * ("-" for a user line of two fields).
 */
static int plain(const char *s)
{
	size_t n = strnlen(s, USER_NAME_MAX);

	if (n == 0 || n == USER_NAME_MAX)
		return 0;
	for (; *s; s++)
		if (*s <= ' ' || *s > '~')
			return 0;
	return 1;
}

/* What hoststate.h promises of a state that was accepted. */
static void check_rules(const struct hoststate *st)
{
	char why[256];
	struct knob_set sorted = st->saved;

	FUZZ_CHECK(st->exists, "a state parsed that does not exist");
	FUZZ_CHECK(st->nusers >= 0 && st->nusers <= MAX_USERS, "%d users", st->nusers);
	FUZZ_CHECK(st->saved.n >= 0 && st->saved.n <= MAX_KNOBS, "%d knobs", st->saved.n);
	for (int i = 0; i < st->nusers; i++) {
		const struct state_user *u = &st->users[i];

		FUZZ_CHECK(u->pid >= 1 && u->pid <= 4194304 && u->start > 0 && u->start <= (unsigned long long)LLONG_MAX,
			   "user %d: pid %d start %llu", i, (int)u->pid, u->start);
		FUZZ_CHECK(u->kind == USER_COMMAND || u->kind == USER_DAEMON, "user %d: kind %d", i, (int)u->kind);
		FUZZ_CHECK(u->since >= 0, "user %d: since %lld", i, u->since);
		FUZZ_CHECK(plain(u->name), "user %d: name '%.*s' not plain", i, USER_NAME_MAX, u->name);
	}
	FUZZ_CHECK(st->ntargets >= 0 && st->ntargets <= MAX_TARGETS, "%d targets", st->ntargets);
	for (int i = 0; i < st->ntargets; i++) {
		const struct state_target *t = &st->targets[i];

		FUZZ_CHECK(t->pid >= 1 && t->pid <= 4194304 && t->start > 0 && t->start <= (unsigned long long)LLONG_MAX,
			   "target %d: pid %d start %llu", i, (int)t->pid, t->start);
		FUZZ_CHECK(plain(t->name), "target %d: name '%.*s' not plain", i, USER_NAME_MAX, t->name);
	}
	if (st->tuner)
		FUZZ_CHECK(st->tuner >= 1 && st->tuner <= 4194304 && st->tuner_start > 0 &&
			   st->tuner_start <= (unsigned long long)LLONG_MAX &&
			   st->tuner_phase >= 0 && st->tuner_phase < HELD_PHASES,
			   "tuner %d %llu phase %d", (int)st->tuner, st->tuner_start, st->tuner_phase);
	else    /* a phase line: the phase the last holder left in */
		FUZZ_CHECK(!st->tuner_start && st->tuner_phase >= 0 && st->tuner_phase < HELD_PHASES,
			   "no tuner, but %llu %d", st->tuner_start, st->tuner_phase);
	FUZZ_CHECK(st->gen <= (unsigned long)LLONG_MAX, "gen %lu", st->gen);
	for (int i = 0; i < st->saved.n; i++) {
		const struct knob *k = &st->saved.k[i];

		FUZZ_CHECK(knob_check_name(k->name, why, sizeof why) == 0 &&
			   knob_check_value(k->name, k->value, why, sizeof why) == 0,
			   "knob %s=%s kept against the rules: %s", k->name, k->value, why);
		FUZZ_CHECK(strcmp(k->value, "2") || strcmp(k->name, "run"), "run=2 kept");
		for (int j = 0; j < i; j++)
			FUZZ_CHECK(strcmp(st->saved.k[j].name, k->name), "knob %s twice", k->name);
	}
	/* In write order already: sorting again changes nothing. */
	knob_order(&sorted);
	for (int i = 0; i < st->saved.n; i++)
		FUZZ_CHECK(!strcmp(sorted.k[i].name, st->saved.k[i].name), "not in write order at %d", i);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct hoststate st, again;
	static char text[TEXT_MAX], text2[TEXT_MAX];
	size_t whylen = 1 + fuzz_byte(&data, &size);
	size_t shortlen = fuzz_byte(&data, &size) * 16;
	char *why = fuzz_msgbuf(whylen), *in = fuzz_record(&data, &size, '\0'), *shortbuf;
	size_t n, n2, ns;

	if (hoststate_parse(in, &st, why, whylen)) {
		FUZZ_CHECK(fuzz_terminated(why, whylen) && (whylen == 1 || *why), "no message");
		goto out;
	}
	check_rules(&st);
	n = hoststate_format(&st, text, sizeof text);
	FUZZ_CHECK(n < sizeof text && strlen(text) == n, "format: %zu bytes", n);
	memcpy(text2, text, n + 1);            /* parsing writes into its text */
	FUZZ_CHECK(hoststate_parse(text2, &again, why, whylen) == 0, "the formatted state is refused: %s", why);
	same_state(&st, &again);
	n2 = hoststate_format(&again, text2, sizeof text2);
	FUZZ_CHECK(n2 == n && !memcmp(text, text2, n), "formatted twice, two texts");
	shortbuf = fuzz_alloc(shortlen);
	ns = hoststate_format(&st, shortbuf, shortlen);
	if (ns < shortlen)
		FUZZ_CHECK(ns == n && !memcmp(shortbuf, text, n + 1), "a short buffer: %zu bytes, not %zu", ns, n);
	else
		FUZZ_CHECK(n >= shortlen && (!shortlen || fuzz_terminated(shortbuf, shortlen)),
			   "did not fit in %zu, but the text is %zu", shortlen, n);
	free(shortbuf);
out:
	free(in);
	free(why);
	return 0;
}
