/* hosttune.c - an instance's tuning of the machine, and its watch on the knobs. */
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/files.h"
#include "common/logsink.h"
#include "common/msg.h"
#include "common/parse.h"
#include "host/candidate.h"
#include "host/counters.h"
#include "host/election.h"
#include "host/hosttune.h"
#include "host/knobs.h"
#include "host/managers.h"
#include "host/pressure.h"
#include "host/tune.h"
#include "kernel_abi.h"

/* The knobs an instance watches: run always; the rate too while it tunes. */
static const char *const watched[] = { "run", "pages_to_scan", "sleep_millisecs", "advisor_mode" };
#define NWATCHED (int)(sizeof watched / sizeof watched[0])

/*
 * The knobs this instance watches for someone else's hand: run always, the
 * rate while it tunes.  Not pages_to_scan while the kernel's scan-time
 * advisor is on: the advisor itself writes it after every scan.
 */
static bool watches(const struct host_tuner *h, int i)
{
	char mode[KNOB_VALUE_MAX];

	if (!strcmp(watched[i], "pages_to_scan") && !knob_read("advisor_mode", mode, sizeof mode) &&
	    !strcmp(mode, "scan-time"))
		return false;
	return i == 0 || h->m.tuning;
}

static void say(struct host_tuner *h, const char *fmt, ...) FMT(2, 3);

/* The daemon's log; a command's run has none. */
static void say(struct host_tuner *h, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vto(h->log, fmt, ap);
	va_end(ap);
}

/* What everyone should hear: the daemon's log, or a command's stderr. */
static void notice(struct host_tuner *h, const char *fmt, ...) FMT(2, 3);

/* A command's run has no log: its notices go to stderr as ksm-run's messages. */
static void to_msg(const char *line)
{
	msg("%s", line);
}

static void notice(struct host_tuner *h, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vto(h->log ? h->log : to_msg, fmt, ap);
	va_end(ap);
}

/* The watched knobs as they are now become what is expected. */
static void expect_now(struct host_tuner *h)
{
	char v[KNOB_VALUE_MAX];

	h->expected.n = 0;
	for (int i = 0; i < NWATCHED; i++)
		if (!knob_read(watched[i], v, sizeof v))
			knob_put(&h->expected, watched[i], v);
}

/* Writes what the policy asked for, and expects it. */
static void write_knobs(struct host_tuner *h, const struct knob_set *out)
{
	if (!out->n || h->yielded)
		return;
	if (knobs_apply(out, NULL))
		msg("tuning: cannot change the scan rate");
	for (int i = 0; i < out->n; i++)
		if (knob_lookup(&h->expected, out->k[i].name))
			knob_put(&h->expected, out->k[i].name, out->k[i].value);
}

void host_tuner_plan(struct host_tuner *h, const struct knob_set *want, double now, struct knob_set *all)
{
	char v[KNOB_VALUE_MAX];

	*all = *want;
	/* Read before run=1 is written: ksmd then drops what is stale within a scan. */
	h->left_over_at_start = counters_left_over_now();
	h->have_advisor = access(KSM_SYSFS_DIR "/advisor_mode", F_OK) == 0;
	h->candidate = -1;
	h->pressure = -1;
	h->cpu_pct = -1;
	h->ksmd = ksmd_find();
	h->want = *want;
	h->m.wants_tuning = !h->no_tune;
	if (!h->user_rate && !h->no_tune) {
		bool known = knob_read("sleep_millisecs", v, sizeof v) == 0;
		tune_start(&h->policy, &h->cfg, known ? v : NULL, h->have_advisor, now, all);
	}
	if (!knob_lookup(all, "run") && !knob_read("run", v, sizeof v) && strcmp(v, "1"))
		knob_put(all, "run", "1");
}

void host_tuner_alone(struct host_tuner *h, const struct knob_set *all)
{
	h->alone = true;
	h->m.tuning = true;
	knobs_apply(all, NULL);
	expect_now(h);
}

/* What the state says of this instance's tuning. */
static int held_phase(const struct host_tuner *h)
{
	_Static_assert((int)TUNE_BOOST == HELD_BOOST && (int)TUNE_STEADY == HELD_STEADY, "phases");
	if (h->yielded)
		return HELD_YIELDED;
	return h->user_rate ? HELD_USER_RATE : (int)h->policy.phase;
}

int host_tuner_join(struct host_tuner *h, const struct knob_set *all)
{
	int r;

	if ((r = election_join(&h->m, all, held_phase(h))))
		return r;
	h->registered = true;
	/* The steady sleep is the one from before the first instance. */
	snprintf(h->policy.sleep_before, sizeof h->policy.sleep_before, "%s", h->m.saved_sleep);
	if (!h->m.tuning)
		h->policy.phase = TUNE_OFF;
	expect_now(h);
	return 0;
}

/* This instance holds the tuning now: its policy from where the last holder was. */
static void take_over(struct host_tuner *h, const struct election_news *news, const struct sys_sample *now)
{
	struct knob_set out = { 0 };

	if (h->user_rate) {
		for (int i = 0; i < h->want.n; i++)
			if (knob_is_rate(h->want.k[i].name))
				knob_put(&out, h->want.k[i].name, h->want.k[i].value);
	} else if (!h->no_tune && news->prior_phase == HELD_STEADY) {
		tune_resume_steady(&h->policy, &h->cfg, h->m.saved_sleep, now, &out);
	} else if (!h->no_tune) {
		tune_start(&h->policy, &h->cfg, h->m.saved_sleep, h->have_advisor, now->t, &out);
	}
	expect_now(h);
	write_knobs(h, &out);
	election_took_over(&h->m, held_phase(h));
	say(h, "took over the tuning (the instance that held it ended)%s",
	    news->prior_phase == HELD_STEADY ? ": steady" : h->user_rate ? ": the user's rate" : ": boost");
}

/* Someone else changed a watched knob: say so once, name a manager, yield. */
static void check_others(struct host_tuner *h)
{
	char v[KNOB_VALUE_MAX];
	const char *was;

	for (int i = 0; i < NWATCHED; i++) {
		if (!watches(h, i) || knob_read(watched[i], v, sizeof v) || !(was = knob_lookup(&h->expected, watched[i])) ||
		    !strcmp(was, v))
			continue;
		if (h->nevents < MAX_EVENTS) {
			struct knob_event *e = &h->events[h->nevents++];
			e->t = now_s();
			e->wall = (long long)time(NULL);
			snprintf(e->knob, sizeof e->knob, "%s", watched[i]);
			snprintf(e->from, sizeof e->from, "%s", was);
			snprintf(e->to, sizeof e->to, "%s", v);
		}
		if (!h->manager[0])
			other_manager(h->manager, sizeof h->manager);
		notice(h, "%s was changed by someone else: %s -> %s%s%s; %s", watched[i], was, v,
		       h->manager[0] ? "; running: " : "", h->manager,
		       h->take_over ? "--take-over: this instance keeps writing its values" :
		       "this instance does not fight it: it writes no knob from now on");
		if (h->take_over && !knob_write(watched[i], was))
			continue;       /* ours again, as expected */
		knob_put(&h->expected, watched[i], v);
		if (!h->take_over)
			h->yielded = true;
	}
}

void host_tuner_count_targets(struct host_tuner *h, const pid_t *pids, int n)
{
	h->targets = pids;
	h->ntargets = n;
}

static void measure(struct host_tuner *h, const struct election_news *news, const struct sys_sample *now)
{
	if (news->daemon) {
		h->candidate = candidate_host(&h->candidate_procs);
	} else {
		/* The registered commands, the processes attached (election.h), and
		 * this instance's own targets when they could not be registered. */
		h->candidate = candidate_trees(news->roots, news->users);
		if (news->ntargets && h->candidate >= 0)
			h->candidate += candidate_targets(news->targets, news->ntargets);
		if (h->ntargets && h->candidate >= 0)
			h->candidate += candidate_targets(h->targets, h->ntargets);
		h->candidate_procs = -1;
	}
	if (h->cfg.adapt_to_pressure)
		h->pressure = memory_pressure(&h->pressure_source);
	if (now->ksmd_cpu >= 0) {
		if (h->cpu_t0 <= 0 || now->t - h->cpu_t0 > 60) {
			if (h->cpu_t0 > 0)
				h->cpu_pct = 100.0 * (now->ksmd_cpu - h->cpu0) / (now->t - h->cpu_t0);
			h->cpu_t0 = now->t;
			h->cpu0 = now->ksmd_cpu;
		} else if (now->t - h->cpu_t0 >= 10) {
			h->cpu_pct = 100.0 * (now->ksmd_cpu - h->cpu0) / (now->t - h->cpu_t0);
		}
	}
}

/* A watched knob as this instance last saw or wrote it: a number, or -1. */
static long expected_number(const struct host_tuner *h, const char *knob)
{
	const char *v = knob_lookup(&h->expected, knob);
	long long n;

	return v && !parse_ll(v, 0, LONG_MAX, &n) ? (long)n : -1;
}

/* The tick's work, under the state's lock. */
static void tick_locked(struct host_tuner *h, const struct election_news *news, const struct sys_sample *first,
			const struct sys_sample *now)
{
	struct knob_set out;
	struct tune_input in;

	h->tuner_pid = news->tuner;
	h->tuner_daemon = news->daemon;
	if (news->lost_tuning) {
		h->policy.phase = TUNE_OFF;
		say(h, "the tuning passed to a daemon, pid %d", (int)news->tuner);
		expect_now(h);
	}
	if (news->became_tuner)
		take_over(h, news, now);
	check_others(h);
	/* The host's scan cost, measured while this instance's knobs are the
	 * ones in force: check_others() has just read them as expected. */
	if (h->m.tuning && !h->yielded)
		scancal_watch_sample(&h->scan_cost, now, expected_number(h, "pages_to_scan"),
				     expected_number(h, "sleep_millisecs"));
	else
		scancal_watch_finish(&h->scan_cost);
	if (!h->m.tuning || h->yielded || h->user_rate || h->policy.phase == TUNE_OFF)
		return;
	measure(h, news, now);
	in = (struct tune_input){ .first = first, .now = now, .candidate_pages = h->candidate,
				  .new_work = news->new_work, .pressure = h->pressure, .ksmd_cpu_pct = h->cpu_pct };
	tune_tick(&h->policy, &in, &out);
	write_knobs(h, &out);
	if (h->policy.last_decision[0]) {
		h->decisions++;
		say(h, "%s (candidate memory %lld MiB%s)", h->policy.last_decision,
		    h->candidate < 0 ? -1 : h->candidate * sysconf(_SC_PAGESIZE) >> 20,
		    news->daemon ? ", whole machine" : "");
	}
}

void host_tuner_tick(struct host_tuner *h, const struct sys_sample *first, const struct sys_sample *now)
{
	struct election_news news;

	memset(&news, 0, sizeof news);
	if (h->alone) {
		news.roots[0] = getpid();
		news.users = 1;
		tick_locked(h, &news, first, now);
		return;
	}
	if (!h->m.joined || election_tick(&h->m, held_phase(h), &news))
		return;
	tick_locked(h, &news, first, now);
	election_unlock(&h->m);
}

int host_tuner_leave(struct host_tuner *h)
{
	scancal_watch_finish(&h->scan_cost);
	return h->alone ? 0 : election_leave(&h->m);
}

int host_tuner_machine_phase(const struct host_tuner *h)
{
	static struct hoststate st;
	char why[256];

	if (h->alone || h->m.tuning)
		return held_phase(h);
	if (hoststate_peek(&st, why, sizeof why))
		return HELD_NONE;
	return st.tuner ? st.tuner_phase : HELD_NONE;
}

const char *host_tuner_summary(const struct host_tuner *h, char *buf, size_t len)
{
	size_t n;

	if (h->user_rate)
		n = (size_t)snprintf(buf, len, "user");
	else if (h->no_tune)
		n = (size_t)snprintf(buf, len, "off");
	else if (h->policy.handover[0])
		n = (size_t)snprintf(buf, len, "%s", h->policy.handover);
	else if (h->policy.phase == TUNE_BOOST)
		n = (size_t)snprintf(buf, len, "boost 5000/10ms (the command ended before the hand-over)");
	else if (h->registered && h->tuner_pid)
		n = (size_t)snprintf(buf, len, "by the machine's tuner, %s pid %d", h->tuner_daemon ? "ksm-run --daemon," :
				     "another ksm-run,", (int)h->tuner_pid);
	else if (h->registered)
		n = (size_t)snprintf(buf, len, "by the machine's tuner, another ksm-run");
	else
		n = (size_t)snprintf(buf, len, "none (the knobs could not be written)");
	for (int i = 0; i < h->nevents && n < len; i++) {
		struct tm tm;
		time_t w = (time_t)h->events[i].wall;
		localtime_r(&w, &tm);
		n += (size_t)snprintf(buf + n, len - n, "%s; at %02d:%02d:%02d someone else set %s %s -> %s",
				      i ? "" : "", tm.tm_hour, tm.tm_min, tm.tm_sec, h->events[i].knob,
				      h->events[i].from, h->events[i].to);
	}
	if (h->yielded && n < len)
		n += (size_t)snprintf(buf + n, len - n, "; yielded to it%s%s", h->manager[0] ? ": " : "", h->manager);
	return buf;
}
