/*
 * Unit tests of the tuning policy (launcher/host/tune.c), fed samples: a
 * recorded run of two commands, and synthetic ones for each rule (the
 * hand-over that waits for the candidate memory, the boosts again, and the
 * daemon's pressure, CPU ceiling and cost floor).  The steady phase on a
 * simulated machine: test_launcher_tune_world.c.  No root, nothing changed.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "host/counters.h"
#include "host/knobs.h"
#include "host/tune.h"
#include "tune_samples.h"
#include "unit.h"

/* ---- the tuning policy on a recorded run ---- */

#define RECORDING "tests/unit/data/tune-two-commands.tsv"
#define MAX_ROWS 200

struct row {
	struct sys_sample s;
	long long pages_to_scan, sleep_ms;    /* what the real tuner had set */
};

static int load_recording(struct row *rows)
{
	FILE *f = fopen(RECORDING, "r");
	char line[512];
	int n = 0;

	if (!f) {
		perror(RECORDING);
		exit(2);
	}
	while (n < MAX_ROWS && fgets(line, sizeof line, f)) {
		struct row *r = &rows[n];
		if (line[0] == '#')
			continue;
		memset(r, 0, sizeof *r);
		/* The columns are sys_counter_names in order, then two knobs. */
		if (sscanf(line, "%lf %lld %lld %lld %lld %lld %lld %lld %lld %lld %lld %lld", &r->s.t,
			   &r->s.v[0], &r->s.v[1], &r->s.v[2], &r->s.v[3], &r->s.v[4], &r->s.v[5],
			   &r->s.v[6], &r->s.v[7], &r->s.v[8], &r->pages_to_scan, &r->sleep_ms) == 12)
			n++;
	}
	fclose(f);
	return n;
}

/*
 * The recording, with the second command registered at 6 s (new_work, as
 * the machine's state says it).  The boost ends on progress: the first
 * command's memory merged within a second and ended the boost before the
 * second came (at 1.14 s); the second's boost ends once a full scan after
 * its memory merged (at 6.55 s) merged nothing more, at 7.13 s.  The real
 * tuner of the time boosted until 12.54 s.
 */
static void test_tune_recorded(void)
{
	static struct row rows[MAX_ROWS];
	struct knob_set want = { 0 }, out;
	struct tuner t;
	int n = load_recording(rows), i, first_end = -1, second_start = -1, second_end = -1, real_handover = -1;

	CHECK(n > 60);
	tune_start(&t, NULL, "20", true, 0.0, &want);
	CHECK(t.phase == TUNE_BOOST);
	CHECK(want.n == 3 && !strcmp(knob_lookup(&want, "pages_to_scan"), "5000") &&
	      !strcmp(knob_lookup(&want, "sleep_millisecs"), "10") &&
	      !strcmp(knob_lookup(&want, "advisor_mode"), "none"));
	for (i = 1; i < n; i++) {
		struct tune_input in = { .first = &rows[0].s, .now = &rows[i].s, .candidate_pages = -1,
					 .pressure = -1, .ksmd_cpu_pct = -1 };
		in.new_work = rows[i].s.t >= 6.0 && rows[i - 1].s.t < 6.0;
		tune_tick(&t, &in, &out);
		if (real_handover < 0 && rows[i].pages_to_scan != 5000)
			real_handover = i;
		if (first_end < 0 && t.phase == TUNE_STEADY) {
			first_end = i;
			/* 12,366 tracked pages in 20 s: fewer than 100 a wake-up at 20 ms,
			 * so 100 pages with a longer sleep. */
			CHECK(out.n == 2 && !strcmp(knob_lookup(&out, "pages_to_scan"), "100"));
			CHECK(atoll(knob_lookup(&out, "sleep_millisecs")) == 100LL * 1000 / (12366 / 20));
		}
		if (second_start < 0 && first_end >= 0 && t.phase == TUNE_BOOST)
			second_start = i;
		if (second_end < 0 && second_start >= 0 && t.phase == TUNE_STEADY)
			second_end = i;
	}
	CHECK(first_end > 0 && rows[first_end].s.t < 3.0 && sys_value(&rows[first_end].s, "pages_sharing") == 12244);
	CHECK(second_start > 0 && rows[second_start].s.t >= 6.0 && rows[second_start].s.t < 6.5);
	/* After the second command's memory merged, and by more than 4 s before the old rule. */
	CHECK(second_end > 0 && sys_value(&rows[second_end].s, "pages_sharing") >= 18000);
	CHECK(real_handover > 0 && second_end > 0 && rows[second_end].s.t < rows[real_handover].s.t - 4.0);
	CHECK(strstr(t.handover, "boost 5000/10ms for ") == t.handover && strstr(t.handover, "in all (boosted again"));
}

/* Synthetic samples after a hand-over: memory that grows by half boosts again. */
static void test_tune_boost_again(void)
{
	struct knob_set want = { 0 }, out;
	struct sys_sample s0 = { 0 }, s = { 0 };
	struct tuner t;
	long long page = sysconf(_SC_PAGESIZE);
	double now = 0;
	int i;

	struct tune_input in = { .first = &s0, .now = &s, .candidate_pages = -1, .pressure = -1, .ksmd_cpu_pct = -1 };

	tune_start(&t, NULL, "20", false, 0.0, &want);
	CHECK(want.n == 2 && !knob_lookup(&want, "advisor_mode"));
	/* 100,000 tracked pages, 40,000 merged, no growth, scans advancing. */
	for (i = 0; i <= 60 && t.phase == TUNE_BOOST; i++, now += 0.5) {
		s.t = now;
		s.v[2] = 40000;                                  /* pages_sharing */
		s.v[0] = 40000 * page - 100000LL * 64;           /* general_profit */
		s.v[6] = i;                                      /* full_scans */
		s.v[5] = 0;                                      /* ksm_zero_pages */
		s.v[7] = LLONG_MIN;                              /* pages_scanned: not before 6.6 */
		if (i == 0)
			s0 = s;
		tune_tick(&t, &in, &out);
	}
	/* Three full scans, the last of them merging nothing more: no minimum in seconds. */
	CHECK(t.phase == TUNE_STEADY && i == 4);
	CHECK(t.steady_pages == 100000 * 20 / 20000 && t.steady_sleep_ms == 20);
	/* Grown by a third, seen at the next full scan: a new rate, no boost. */
	s.t = now;
	s.v[0] = 40000 * page - 133000LL * 64;
	s.v[6] = i;
	tune_tick(&t, &in, &out);
	CHECK(t.phase == TUNE_STEADY && out.n == 1 && !strcmp(knob_lookup(&out, "pages_to_scan"), "133"));
	/* Grown by over half (and by more than 25,600 pages): boost again. */
	s.t = now + 1;
	s.v[0] = 40000 * page - 160000LL * 64;
	tune_tick(&t, &in, &out);
	CHECK(t.phase == TUNE_BOOST && t.boosts == 2);
	CHECK(!strcmp(knob_lookup(&out, "pages_to_scan"), "5000") &&
	      !strcmp(knob_lookup(&out, "sleep_millisecs"), "10"));
	/* The report's history ends with the boost in force, after the steady rate. */
	CHECK(strstr(t.handover, "then 133 pages every 20 ms") != NULL);
	CHECK(strstr(t.handover, "; then boosted again (the tracked pages grew by half): 5000 pages every 10 ms") ==
	      t.handover + strlen(t.handover) - strlen("; then boosted again (the tracked pages grew by half): "
						       "5000 pages every 10 ms"));
}

/*
 * Memory that arrives late and in waves: merging levels off at 10 s while
 * the candidate memory still grows; the boost must last until it has
 * stopped growing and been scanned, and not a sample less.
 */
static void test_tune_waits_for_the_memory(void)
{
	struct knob_set want = { 0 }, out;
	struct sys_sample s0, s;
	struct tuner t;
	struct tune_input in = { .first = &s0, .now = &s, .pressure = -1, .ksmd_cpu_pct = -1 };
	double handover = -1;

	tune_start(&t, NULL, "20", false, 0.0, &want);
	sample_at(&s0, 0, 0, 0, 0);
	for (double now = 0.5; now <= 80 && handover < 0; now += 0.5) {
		/* 20,000 pages merged by 5 s and no more; the candidate grows to 40 s. */
		long long cand = now < 40 ? 10000 + (long long)(now * 2000) : 90000;
		sample_at(&s, now, now < 5 ? (long long)(now * 4000) : 20000, cand, (long long)now);
		in.candidate_pages = cand;
		tune_tick(&t, &in, &out);
		if (t.phase == TUNE_STEADY)
			handover = now;
	}
	/* The old rule (merging levelled off) would have handed over at 10 s. */
	/* Growth ends at 40 s; two full scans later (a scan a second here), the hand-over. */
	CHECK(handover >= 40 && handover <= 43);
	CHECK(strstr(t.last_decision, "merging levelled off") != NULL);
}

/* Memory that never stops growing: the boost ends 60 s after the last growth, not before. */
static void test_tune_boost_has_an_end(void)
{
	struct knob_set want = { 0 }, out;
	struct sys_sample s0, s;
	struct tuner t;
	struct tune_input in = { .first = &s0, .now = &s, .pressure = -1, .ksmd_cpu_pct = -1 };
	double now;

	tune_start(&t, NULL, "20", false, 0.0, &want);
	sample_at(&s0, 0, 0, 0, 0);
	/* Growth until 30 s, then a candidate that stays but is never scanned twice (no scans). */
	for (now = 0.5; now <= 200 && t.phase == TUNE_BOOST; now += 0.5) {
		long long cand = now < 30 ? 10000 + (long long)(now * 2000) : 70000;
		sample_at(&s, now, 1000, cand, now < 30 ? (long long)now : 30);
		in.candidate_pages = cand;
		tune_tick(&t, &in, &out);
	}
	CHECK(t.phase == TUNE_STEADY && now > 90 && now <= 91.5);
	CHECK(strstr(t.last_decision, "a minute without new memory") != NULL);
}

/* In the steady phase: a new command boosts; 5% and 2048 pages more candidate memory boosts; less does not. */
static void test_tune_new_work(void)
{
	struct knob_set out;
	struct sys_sample s0, s;
	struct tuner t;
	struct tune_input in = { .first = &s0, .now = &s, .pressure = -1, .ksmd_cpu_pct = -1 };
	double now = to_steady(&t, NULL, &in, &s, 100000, 100000);

	CHECK(t.phase == TUNE_STEADY);
	in.new_work = true;
	sample_at(&s, now, 40000, 100000, (long long)now);
	tune_tick(&t, &in, &out);
	CHECK(t.phase == TUNE_BOOST && !strcmp(knob_lookup(&out, "pages_to_scan"), "5000"));
	CHECK(strstr(t.last_decision, "a command or attached processes registered") != NULL);
	in.new_work = false;

	now = to_steady(&t, NULL, &in, &s, 100000, 100000);
	/* 4% more: not new work. */
	in.candidate_pages = 104000;
	sample_at(&s, now, 40000, 100000, (long long)now);
	tune_tick(&t, &in, &out);
	CHECK(t.phase == TUNE_STEADY);
	/* 5% + 2048 pages and one more: boost. */
	in.candidate_pages = 100000 + 5000 + 2048 + 1;
	sample_at(&s, now + 1, 40000, 100000, (long long)now + 1);
	tune_tick(&t, &in, &out);
	CHECK(t.phase == TUNE_BOOST && strstr(t.last_decision, "new memory to merge") != NULL);

	/* Less memory (a command ended): no boost, and the new, lower baseline counts. */
	now = to_steady(&t, NULL, &in, &s, 100000, 100000);
	in.candidate_pages = 50000;
	sample_at(&s, now, 40000, 100000, (long long)now);
	tune_tick(&t, &in, &out);
	CHECK(t.phase == TUNE_STEADY && t.cand_at_handover == 50000);
	in.candidate_pages = 50000 + 2500 + 2048 + 1;
	sample_at(&s, now + 1, 40000, 100000, (long long)now + 1);
	tune_tick(&t, &in, &out);
	CHECK(t.phase == TUNE_BOOST);
}

/* The daemon's rules: pressure changes the steady period, the CPU ceiling scales the rate, the cost floor. */
static void test_tune_daemon_rules(void)
{
	struct tune_config cfg;
	struct knob_set out;
	struct sys_sample s0, s;
	struct tuner t;
	struct tune_input in = { .first = &s0, .now = &s, .pressure = 0.05, .ksmd_cpu_pct = -1 };
	long long normal, calm, pressed;
	double now;

	tune_defaults(&cfg);
	cfg.adapt_to_pressure = true;
	to_steady(&t, &cfg, &in, &s, 200000, 200000);
	normal = t.steady_pages;
	/* 200,000 pages, a scan every 20 s, 20 ms sleeps: 200 pages per sleep. */
	CHECK(normal == 200);
	in.pressure = 0.0;
	to_steady(&t, &cfg, &in, &s, 200000, 200000);
	calm = t.steady_pages;
	in.pressure = 0.5;
	to_steady(&t, &cfg, &in, &s, 200000, 200000);
	pressed = t.steady_pages;
	CHECK(calm == 100 && pressed == 800);

	/* A ceiling of 10% while ksmd used 40%: a quarter of the rate. */
	cfg.max_cpu_pct = 10;
	in.pressure = 0.5;
	in.ksmd_cpu_pct = 40;
	to_steady(&t, &cfg, &in, &s, 200000, 200000);
	CHECK(t.steady_pages == 200);

	/* The cost floor: 16 MiB per percent; 40,000 pages merged (156 MiB) for 20% is under it. */
	cfg.max_cpu_pct = 0;
	cfg.profit_floor = 16 << 20;
	in.pressure = 0.05;
	in.ksmd_cpu_pct = 20;
	now = to_steady(&t, &cfg, &in, &s, 200000, 200000);
	for (double end = now + 299; now < end; now += 1) {
		sample_at(&s, now, 40000, 200000, (long long)now);
		tune_tick(&t, &in, &out);
		CHECK(!t.frugal);
	}
	for (double end = now + 5; now < end && !t.frugal; now += 1) {
		sample_at(&s, now, 40000, 200000, (long long)now);
		tune_tick(&t, &in, &out);
	}
	CHECK(t.frugal && !strcmp(knob_lookup(&out, "pages_to_scan"), "100"));
	CHECK(strstr(t.last_decision, "slowed to 100 pages") != NULL && strstr(t.handover, "did not pay") != NULL);
	/* And worth it at 5%: not frugal. */
	in.ksmd_cpu_pct = 5;
	now = to_steady(&t, &cfg, &in, &s, 200000, 200000);
	for (double end = now + 400; now < end; now += 1) {
		sample_at(&s, now, 40000, 200000, (long long)now);
		tune_tick(&t, &in, &out);
	}
	CHECK(!t.frugal);
}

/* A tuner that took over in the steady phase never boosted: its history must not say it did. */
static void test_tune_taken_over_steady(void)
{
	struct knob_set want = { 0 };
	struct sys_sample s = { 0 };
	struct tuner t;
	long long page = sysconf(_SC_PAGESIZE);

	s.t = 100;
	s.v[0] = 40000 * page - 100000LL * 64;          /* general_profit */
	s.v[2] = 40000;                                  /* pages_sharing */
	tune_resume_steady(&t, NULL, "20", &s, &want);
	CHECK(t.phase == TUNE_STEADY && !strcmp(knob_lookup(&want, "pages_to_scan"), "100"));
	CHECK(strstr(t.handover, "boost") == NULL);
	CHECK(strstr(t.handover, "taken over in the steady phase: 100 pages every 20 ms") == t.handover);
	CHECK(strstr(t.handover, "(a full scan about every 20 s)") != NULL);
	CHECK(strstr(t.handover, "smart scan") == NULL);
	/* Fewer than 100 pages a wake-up at 20 ms: 100 pages, with longer sleeps. */
	s.v[0] = 40000 * page - 41000LL * 64;           /* 41,000 rmap items */
	tune_resume_steady(&t, NULL, "20", &s, &want);
	CHECK(strstr(t.handover, "100 pages every 48 ms (a full scan about every 20 s)") != NULL);
}

/*
 * Linux 6.1: no general_profit, ksm_zero_pages, pages_scanned or
 * pages_skipped (LLONG_MIN).  The steady rate is sized from the rmap items
 * all the same (the four page counters add up to them), not left at the
 * minimum; and memory that grows by half brings the boost back.
 */
static void test_tune_without_general_profit(void)
{
	struct knob_set want = { 0 }, out;
	struct sys_sample s0 = { 0 }, s = { 0 };
	struct tuner t;
	double now = 0;
	struct tune_input in = { .first = &s0, .now = &s, .candidate_pages = -1, .pressure = -1, .ksmd_cpu_pct = -1 };

	tune_start(&t, NULL, "20", false, 0.0, &want);
	for (int i = 0; i <= 60 && t.phase == TUNE_BOOST; i++, now += 0.5) {
		s.t = now;
		s.v[0] = s.v[5] = s.v[7] = s.v[8] = LLONG_MIN;  /* not in 6.1 */
		s.v[1] = 10000;                                  /* pages_shared */
		s.v[2] = 40000;                                  /* pages_sharing */
		s.v[3] = 300000;                                 /* pages_unshared */
		s.v[4] = 50000;                                  /* pages_volatile: 400,000 rmap items */
		s.v[6] = i;                                      /* full_scans */
		if (i == 0)
			s0 = s;
		tune_tick(&t, &in, &out);
	}
	CHECK(t.phase == TUNE_STEADY);
	CHECK(t.steady_pages == 400000 * 20 / 20000);           /* one full scan every 20 s */
	/* What the steady phase costs without smart scan is said. */
	CHECK(strstr(t.handover, "400 pages every 20 ms (a full scan about every 20 s); no smart scan in this "
			"kernel (Linux 6.7+): all 400000 tracked pages are rescanned on each pass, 20000 pages/s"));
	s.t = now + 1;
	s.v[3] = 600000;                                         /* 650,000 rmap items: grown by over half */
	tune_tick(&t, &in, &out);
	CHECK(t.phase == TUNE_BOOST && t.boosts == 2);
}

UNIT_MAIN(UNIT_TEST(test_tune_recorded), UNIT_TEST(test_tune_boost_again),
	  UNIT_TEST(test_tune_waits_for_the_memory), UNIT_TEST(test_tune_boost_has_an_end),
	  UNIT_TEST(test_tune_new_work), UNIT_TEST(test_tune_daemon_rules),
	  UNIT_TEST(test_tune_taken_over_steady), UNIT_TEST(test_tune_without_general_profit))
