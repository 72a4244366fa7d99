/*
 * Unit tests of ksm-run's knobs: the validation of names and values, and
 * the knob state file under /run/ksm-run, whose planted or corrupt text is
 * refused.  No root, nothing changed on the machine.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host/counters.h"
#include "host/hoststate.h"
#include "host/knobs.h"
#include "unit.h"

/* ---- knob validation ---- */

static void test_knobs(void)
{
	char why[256];
	struct knob_set s = { 0 };

	CHECK(knob_check_value("pages_to_scan", "0", why, sizeof why) == 0);
	CHECK(knob_check_value("pages_to_scan", "4294967295", why, sizeof why) == 0);
	CHECK(knob_check_value("pages_to_scan", "4294967296", why, sizeof why) != 0);
	CHECK(knob_check_value("pages_to_scan", "-5", why, sizeof why) != 0);
	CHECK(knob_check_value("pages_to_scan", "12x", why, sizeof why) != 0 &&
	      strstr(why, "pages_to_scan: '12x' is not a number in 0..4294967295"));
	CHECK(knob_check_value("pages_to_scan", "", why, sizeof why) != 0);
	CHECK(knob_check_value("pages_to_scan", "-0", why, sizeof why) != 0);
	CHECK(knob_check_value("pages_to_scan", "00000000000000000000000000000000000000000000000000000000000000001",
			       why, sizeof why) != 0 && strstr(why, "too long"));
	CHECK(knob_check_value("pages_to_scan", "000000000000000000000000000000000000000000000000000000000000001",
			       why, sizeof why) == 0);
	CHECK(knob_check_value("run", "2", why, sizeof why) != 0 && strstr(why, "never writes it"));
	CHECK(knob_check_value("run", "1", why, sizeof why) == 0);
	CHECK(knob_check_value("smart_scan", "yes", why, sizeof why) != 0 && strstr(why, "not 0 or 1"));
	CHECK(knob_check_value("advisor_mode", "scan-time", why, sizeof why) == 0);
	CHECK(knob_check_value("advisor_mode", "fast", why, sizeof why) != 0);
	CHECK(knob_check_value("advisor_max_cpu", "101", why, sizeof why) != 0);
	CHECK(knob_check_value("advisor_max_cpu", "100", why, sizeof why) == 0);
	CHECK(knob_check_value("max_page_sharing", "1", why, sizeof why) != 0);
	CHECK(knob_check_value("some_future_knob", "a value", why, sizeof why) != 0);
	CHECK(knob_check_value("some_future_knob", "12", why, sizeof why) == 0);
	CHECK(knob_check_name("pages_to_scan", why, sizeof why) == 0);
	CHECK(knob_check_name("../run", why, sizeof why) != 0);
	CHECK(knob_check_name("..", why, sizeof why) != 0);
	CHECK(knob_check_name("", why, sizeof why) != 0);
	CHECK(knob_check_name("Run", why, sizeof why) != 0);
	/* Write order: advisor limits, its mode, the rate, ..., run last. */
	knob_put(&s, "run", "1");
	knob_put(&s, "pages_to_scan", "5000");
	knob_put(&s, "advisor_mode", "none");
	knob_put(&s, "some_future_knob", "1");
	knob_put(&s, "advisor_max_cpu", "50");
	knob_put(&s, "pages_to_scan", "6000");     /* replaces */
	knob_order(&s);
	CHECK(s.n == 5 && !strcmp(s.k[0].name, "advisor_max_cpu") && !strcmp(s.k[1].name, "advisor_mode") &&
	      !strcmp(s.k[2].name, "pages_to_scan") && !strcmp(s.k[2].value, "6000") &&
	      !strcmp(s.k[3].name, "some_future_knob") && !strcmp(s.k[4].name, "run"));
	CHECK(!strcmp(knob_known_name(0), "advisor_target_scan_time"));
	for (int i = 0; knob_known_name(i); i++)
		CHECK(knob_check_name(knob_known_name(i), why, sizeof why) == 0);
}

/* ---- the knob state file: planted or corrupt text is refused ---- */

static int state_refused(const char *text, const char *why_part)
{
	static struct hoststate st;
	char buf[40000], why[256] = "";
	int refused;

	snprintf(buf, sizeof buf, "%s", text);
	refused = hoststate_parse(buf, &st, why, sizeof why) != 0;
	if (refused && !strstr(why, why_part))
		fprintf(stderr, "  refused for '%s', not '%s'\n", why, why_part);
	return refused && strstr(why, why_part);
}

static void test_knobstate(void)
{
	static struct hoststate st, again;
	char text[40000], out[40000], why[256];
	size_t n = 0;

	snprintf(text, sizeof text, "# comment\nuser 4242 98765\nknob pages_to_scan 100\nknob run 0\n\n"
		 "knob advisor_mode none\nuser 77 88 daemon 1700000000 0 ksm-run\ntuner 77 88 2\ngen 9\n");
	CHECK(hoststate_parse(text, &st, why, sizeof why) == 0);
	CHECK(st.nusers == 2 && st.users[0].pid == 4242 && st.users[0].start == 98765);
	CHECK(st.users[0].kind == USER_COMMAND && st.users[0].wants_tuning && !strcmp(st.users[0].name, "-"));
	CHECK(st.users[1].kind == USER_DAEMON && !st.users[1].wants_tuning && !strcmp(st.users[1].name, "ksm-run") &&
	      st.users[1].since == 1700000000);
	CHECK(st.tuner == 77 && st.tuner_start == 88 && st.tuner_phase == 2 && st.gen == 9);
	CHECK(st.saved.n == 3 && !strcmp(st.saved.k[0].name, "advisor_mode") &&
	      !strcmp(st.saved.k[2].name, "run"));
	n = hoststate_format(&st, out, sizeof out);
	CHECK(n < sizeof out && hoststate_parse(out, &again, why, sizeof why) == 0);
	CHECK(again.nusers == 2 && again.saved.n == 3 && !strcmp(knob_lookup(&again.saved, "pages_to_scan"), "100"));
	CHECK(again.tuner == 77 && again.gen == 9 && again.users[1].kind == USER_DAEMON);
	/* The same users again, the one of two fields too (found by fuzz_hoststate). */
	for (int i = 0; i < 2; i++)
		CHECK(again.users[i].pid == st.users[i].pid && again.users[i].kind == st.users[i].kind &&
		      again.users[i].since == st.users[i].since && !strcmp(again.users[i].name, st.users[i].name));
	/* What the audit planted: a path as a knob name, users that never die. */
	CHECK(state_refused("knob ../../../../etc/passwd root::0:0\n", "not a knob name"));
	CHECK(state_refused("user 0 0\n", "a pid 1..4194304"));
	CHECK(state_refused("user -5 100\n", "a pid 1..4194304"));
	CHECK(state_refused("user 12 0\n", "start time > 0"));
	CHECK(state_refused("knob run 2\n", "never writes it"));
	CHECK(state_refused("knob pages_to_scan -0\n", "not a number"));
	CHECK(state_refused("knob pages_to_scan 1 2\n", "a knob line is NAME VALUE"));
	CHECK(state_refused("knob pages_to_scan\n", "a knob line is NAME VALUE"));
	CHECK(state_refused("user 12 34 command 5 1\n", "2 or 6 fields"));
	CHECK(state_refused("user 12 34 root 5 1 x\n", "a command or a daemon"));
	CHECK(state_refused("user 12 34 command 5 2 x\n", "a time, 0 or 1, and a plain name"));
	CHECK(state_refused("tuner 12 34 7\n", "PHASE (0..4)"));
	CHECK(state_refused("tuner 12 34 1\ntuner 13 34 1\n", "once"));
	CHECK(state_refused("gen -1\n", "a gen line is a number"));
	/* The phase a holder left in, kept while nobody holds the tuning. */
	CHECK(state_refused("phase 0\n", "a phase line is a PHASE (1..4)"));
	CHECK(state_refused("phase 2\ntuner 12 34 2\n", "without a phase line"));
	CHECK(state_refused("tuner 12 34 2\nphase 2\n", "without a tuner line"));
	CHECK(state_refused("phase 2\nphase 2\n", "once"));
	snprintf(text, sizeof text, "user 4242 98765\nphase 2\n");
	CHECK(hoststate_parse(text, &st, why, sizeof why) == 0 && !st.tuner && st.tuner_phase == HELD_STEADY);
	n = hoststate_format(&st, out, sizeof out);
	CHECK(n < sizeof out && strstr(out, "\nphase 2\n") && !strstr(out, "tuner "));
	CHECK(hoststate_parse(out, &again, why, sizeof why) == 0 && again.tuner_phase == HELD_STEADY && !again.tuner);
	/* The processes --attach enabled: apart from the instances, kept by a round trip. */
	snprintf(text, sizeof text, "user 4242 98765\ntarget 500 600 gunicorn\ntarget 501 601 -\n");
	CHECK(hoststate_parse(text, &st, why, sizeof why) == 0 && st.nusers == 1 && st.ntargets == 2);
	CHECK(st.targets[0].pid == 500 && st.targets[0].start == 600 && !strcmp(st.targets[0].name, "gunicorn"));
	n = hoststate_format(&st, out, sizeof out);
	CHECK(n < sizeof out && strstr(out, "\ntarget 500 600 gunicorn\ntarget 501 601 -\n"));
	CHECK(hoststate_parse(out, &again, why, sizeof why) == 0 && again.ntargets == 2 &&
	      again.targets[1].pid == 501 && again.targets[1].start == 601 && !strcmp(again.targets[1].name, "-"));
	CHECK(state_refused("target 0 5 x\n", "a target line is PID"));
	CHECK(state_refused("target 5 0 x\n", "a target line is PID"));
	CHECK(state_refused("target 5 6\n", "a target line is PID"));
	CHECK(state_refused("target 5 6 x y\n", "a target line is PID"));
	CHECK(state_refused("target 5 6 \x01\n", "a target line is PID"));
	CHECK(state_refused("rm -rf /\n", "unknown keyword"));
	CHECK(state_refused("knob run 1\nknob run 0\n", "twice"));
	n = 0;
	for (int i = 0; i <= MAX_USERS; i++)
		n += (size_t)snprintf(text + n, sizeof text - n, "user %d 1000\n", i + 1);
	CHECK(state_refused(text, "more than 256 users"));
	n = 0;
	for (int i = 0; i <= MAX_TARGETS; i++)
		n += (size_t)snprintf(text + n, sizeof text - n, "target %d 1000 t\n", i + 1);
	CHECK(state_refused(text, "more than 256 targets"));
}

UNIT_MAIN(UNIT_TEST(test_knobs), UNIT_TEST(test_knobstate))
