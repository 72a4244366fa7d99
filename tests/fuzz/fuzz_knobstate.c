/*
 * fuzz_knobstate.c - the knob state file under /run/ksm-run
 * (launcher/host/knobstate.c): knobstate_parse on any text, and for every
 * state it accepts a round trip: knobstate_format, then knobstate_parse
 * again, gives the same state, and the formatted text is that again.
 * Also the state accepted keeps the rules of knobstate.h (real pids and
 * start times, knobs by the options' rules, no knob twice, bounded), and
 * knobstate_format into a smaller buffer says that it did not fit and
 * writes no byte past it.  Any broken promise is a crash.
 *
 * Input: a byte for the size of the message buffer and a byte for the size
 * of the short format buffer, then the text of a state file (up to a NUL:
 * ksm-run refuses a file with a NUL before parsing it).
 */
#include "fuzz.h"
#include "host/knobs.h"
#include "host/knobstate.h"

#define TEXT_MAX (1 << 16)

static void same_state(const struct knobstate *a, const struct knobstate *b)
{
	FUZZ_CHECK(a->exists == b->exists && a->nusers == b->nusers && a->saved.n == b->saved.n,
		   "round trip: %d users and %d knobs, then %d and %d", a->nusers, a->saved.n, b->nusers, b->saved.n);
	for (int i = 0; i < a->nusers; i++)
		FUZZ_CHECK(a->users[i].pid == b->users[i].pid && a->users[i].start == b->users[i].start,
			   "round trip: user %d", i);
	for (int i = 0; i < a->saved.n; i++)
		FUZZ_CHECK(!strcmp(a->saved.k[i].name, b->saved.k[i].name) &&
			   !strcmp(a->saved.k[i].value, b->saved.k[i].value),
			   "round trip: knob %d %s=%s, then %s=%s", i, a->saved.k[i].name, a->saved.k[i].value,
			   b->saved.k[i].name, b->saved.k[i].value);
}

/* What knobstate.h promises of a state that was accepted. */
static void check_rules(const struct knobstate *st)
{
	char why[256];
	struct knob_set sorted = st->saved;

	FUZZ_CHECK(st->exists, "a state parsed that does not exist");
	FUZZ_CHECK(st->nusers >= 0 && st->nusers <= MAX_USERS, "%d users", st->nusers);
	FUZZ_CHECK(st->saved.n >= 0 && st->saved.n <= MAX_KNOBS, "%d knobs", st->saved.n);
	for (int i = 0; i < st->nusers; i++)
		FUZZ_CHECK(st->users[i].pid >= 1 && st->users[i].pid <= 4194304 && st->users[i].start > 0,
			   "user %d: pid %d start %llu", i, (int)st->users[i].pid, st->users[i].start);
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
	static struct knobstate st, again;
	static char text[TEXT_MAX], text2[TEXT_MAX];
	size_t whylen = 1 + fuzz_byte(&data, &size);
	size_t shortlen = fuzz_byte(&data, &size) * 16;
	char *why = fuzz_msgbuf(whylen), *in = fuzz_record(&data, &size, '\0'), *shortbuf;
	size_t n, n2, ns;

	if (knobstate_parse(in, &st, why, whylen)) {
		FUZZ_CHECK(fuzz_terminated(why, whylen) && (whylen == 1 || *why), "no message");
		goto out;
	}
	check_rules(&st);
	n = knobstate_format(&st, text, sizeof text);
	FUZZ_CHECK(n < sizeof text && strlen(text) == n, "format: %zu bytes", n);
	memcpy(text2, text, n + 1);            /* parsing writes into its text */
	FUZZ_CHECK(knobstate_parse(text2, &again, why, whylen) == 0, "the formatted state is refused: %s", why);
	same_state(&st, &again);
	n2 = knobstate_format(&again, text2, sizeof text2);
	FUZZ_CHECK(n2 == n && !memcmp(text, text2, n), "formatted twice, two texts");
	shortbuf = fuzz_alloc(shortlen);
	ns = knobstate_format(&st, shortbuf, shortlen);
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
