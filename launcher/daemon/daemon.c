/*
 * daemon.c: ksm-run --daemon.  Everything that can refuse does so before
 * a knob is written (exit 125): no KSM, no right to write the knobs,
 * another manager running (unless --take-over), another daemon.  Then it
 * joins the machine's tuning as a daemon, which takes the tuning from a
 * command's instance, and ticks every second until a stop signal.
 */
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/files.h"
#include "common/logsink.h"
#include "common/msg.h"
#include "common/stopsig.h"
#include "common/parse.h"
#include "host/counters.h"
#include "daemon/daemon.h"
#include "host/hosttune.h"
#include "host/knobs.h"
#include "host/managers.h"
#include "host/metrics.h"
#include "host/tune.h"
#include "follow/follow.h"
#include "kernel_abi.h"
#include "policy/agent.h"
#include "policy/agentstate.h"

/* The defaults of --max-cpu and --min-profit (tune.h has the others). */
#define DEFAULT_MAX_CPU_PCT 50.0
#define DEFAULT_MIN_PROFIT (16UL << 20)
/*
 * How often the agent reads the kernel's process events: a fork and its
 * exec mostly come in one batch, so that a new process is judged once, by
 * the program it runs, a tenth of a second after its start at most.
 */
#define EVENT_WAIT_S 0.1

/* The refusals, before anything is changed. */
static void check_can_run(const struct daemon_opts *o)
{
	char mgr[128];
	int err = 0;

	if (access(KSM_SYSFS_DIR "/run", F_OK))
		die("--daemon: this kernel has no KSM (%s/run is missing: CONFIG_KSM)", KSM_SYSFS_DIR);
	for (const char *const *k = (const char *const[]){ "run", "pages_to_scan", "sleep_millisecs", NULL }; *k; k++)
		if (!knob_probe_writable(*k, &err))
			die("--daemon: cannot write %s/%s: %s%s", KSM_SYSFS_DIR, *k, strerror(err), knob_write_hint(*k, err));
	if (!o->take_over && other_manager(mgr, sizeof mgr))
		die("--daemon: %s manages KSM on this machine; the two would fight over ksmd's knobs. "
		    "Stop it first (for ksmtuned: systemctl disable --now ksmtuned), "
		    "or pass --take-over to tune anyway and keep our values when it writes", mgr);
}

static void configure(struct host_tuner *h, const struct daemon_opts *o)
{
	tune_defaults(&h->cfg);
	if (o->steady)
		h->cfg.steady_scan_s = o->steady;
	h->cfg.max_cpu_pct = o->max_cpu_given ? o->max_cpu : DEFAULT_MAX_CPU_PCT;
	h->cfg.profit_floor = (double)(o->min_profit_given ? o->min_profit : DEFAULT_MIN_PROFIT);
	h->cfg.adapt_to_pressure = true;
	h->take_over = o->take_over;
	h->log = log_stderr;
	h->m.kind = USER_DAEMON;
	snprintf(h->m.name, sizeof h->m.name, "daemon");
}

/* HUP: where it stands, in one line. */
static void log_standing(const struct host_tuner *h, const struct sys_sample *now)
{
	char tuning[1024];
	long long gp = sys_value(now, "general_profit");

	log_to(log_stderr, "%s; candidate memory %lld MiB in %d processes; general_profit %lld MiB; "
		    "ksmd %.1f%% of a core; memory pressure %.2f (%s); %s",
		    h->m.tuning ? "tuning the machine" : "not tuning (see --status)",
		    h->candidate < 0 ? -1 : h->candidate * sysconf(_SC_PAGESIZE) >> 20, h->candidate_procs,
		    gp == LLONG_MIN ? -1 : gp >> 20, h->cpu_pct, h->pressure,
		    h->pressure_source ? h->pressure_source : "-", host_tuner_summary(h, tuning, sizeof tuning));
}

/* The metrics file at each tick; a failure is logged when it starts, not every second. */
static void write_metrics(const struct daemon_opts *o, const struct host_tuner *h, const struct sys_sample *now,
			  const struct agent *agent)
{
	static struct metrics_rule rules[POLICY_MAX_RULES];
	static struct metrics_role role;
	static int last_err;
	struct metrics_agent figures;
	struct metrics_agent_life life = { .running = true };
	int r;

	if (!o->metrics_file)
		return;
	metrics_role_update(&role, h, true, now_s());
	life.last_seen = (long long)time(NULL);
	agent_figures(agent, rules, &figures);
	r = metrics_write_host(o->metrics_file, h, now, NULL, agent->active ? &figures : NULL,
			       agent->active ? &life : NULL, role.machine);
	if (r && r != last_err)
		log_to(log_stderr, "cannot write the metrics file %s: %s; trying again at every tick", o->metrics_file,
			    file_strerror(-r));
	else if (!r && last_err)
		log_to(log_stderr, "the metrics file %s is written again", o->metrics_file);
	last_err = r;
}

static const char *stop_name(int sig)
{
	return sig == SIGTERM ? "SIGTERM" : sig == SIGINT ? "SIGINT" : sig == SIGQUIT ? "SIGQUIT" : "a signal";
}

/* What the follow loop's hooks need of the daemon. */
struct daemon_run {
	const struct daemon_opts *o;
	struct host_tuner *h;
	struct agent *agent;
	struct sampler *s;              /* the machine's counters */
	const sigset_t *stops;          /* TERM, INT, QUIT and HUP, blocked */
};

/*
 * The follow loop's wait (follow.h): WAIT_S, with the kernel's process
 * events read every EVENT_WAIT_S meanwhile; HUP logs where the daemon
 * stands and reads the policy again, and the wait goes on; TERM, INT and
 * QUIT end it.
 */
static int daemon_wait(void *ctx, double wait_s)
{
	struct daemon_run *d = ctx;
	double end = now_s() + wait_s;

	for (;;) {
		double left = end - now_s();
		int sig;

		if (left < 0)
			left = 0;
		sig = stop_signals_wait(d->stops, agent_listening(d->agent) && left > EVENT_WAIT_S ? EVENT_WAIT_S : left);
		if (sig == SIGHUP) {
			log_standing(d->h, &d->s->last);
			agent_reload(d->agent);
			agent_scan(d->agent);
			agent_publish(d->agent);
			continue;
		}
		if (sig > 0)
			return sig;
		agent_events(d->agent);
		if (now_s() >= end)
			return 0;
	}
}

/* After each tick of the tuning: the agent's own, and what it publishes. */
static void daemon_ticked(void *ctx, bool sampled)
{
	struct daemon_run *d = ctx;

	(void)sampled;
	agent_tick(d->agent);
	agent_publish(d->agent);
}

static void daemon_metrics(void *ctx, bool sampled)
{
	struct daemon_run *d = ctx;

	(void)sampled;
	write_metrics(d->o, d->h, &d->s->last, d->agent);
}

int daemon_main(const struct daemon_opts *o)
{
	static struct host_tuner h;
	static struct agent agent;
	static struct sampler s;
	struct sys_sample first;
	struct knob_set all;
	sigset_t stops, ending;
	struct daemon_run d = { o, &h, &agent, &s, &stops };
	/* A tick a second, of the machine alone. */
	struct follow f = { .s = &s, .host = &h, .metrics_file = o->metrics_file, .interval = 1.0,
			    .what = FOLLOWED_MACHINE, .write_metrics = daemon_metrics, .metrics_ctx = &d };
	int sig;

	check_can_run(o);
	/* From here the stop signals are taken by sigtimedwait only: none kills us before the restore. */
	stop_signals_block(&stops, (const int[]){ SIGTERM, SIGINT, SIGHUP, SIGQUIT, 0 });
	/* The agent's attaches end between stops for the signals that end the daemon, not for HUP. */
	ending = stops;
	sigdelset(&ending, SIGHUP);
	/* The policy is checked before anything changes: one that is not valid is a refusal. */
	if (agent_start(&agent, o->policy, log_stderr, &ending))
		die("--daemon: the policy is not valid (the errors are above; ksm-run --check-config%s%s "
		    "checks it): nothing was changed", o->policy ? "=" : "", o->policy ? o->policy : "");
	configure(&h, o);
	host_tuner_plan(&h, o->knobs, now_s(), &all);
	counters_sample(&first, h.ksmd);
	if (host_tuner_join(&h, &all)) {
		host_tuner_leave(&h);
		exit(EXIT_OWN);
	}
	log_to(log_stderr, "tuning the machine (pid %d): boost, then a full scan as often as the churn needs, at least every %g s; ksmd under %g%% of a core%s; "
		    "slows to the minimum under %lu MiB saved per percent of a core",
		    (int)getpid(), h.cfg.steady_scan_s, h.cfg.max_cpu_pct, h.cfg.max_cpu_pct > 0 ? "" : " (no ceiling)",
		    (unsigned long)(h.cfg.profit_floor / 1048576));
	sample_init(&s, &first, 0, NULL, NULL, NULL);
	s.ksmd = h.ksmd;
	s.last = first;
	write_metrics(o, &h, &s.last, &agent);
	agent_scan(&agent);
	agent_publish(&agent);
	f.next_sample = now_s() + 1;
	sig = follow_loop(&f, &(struct follow_hooks){ daemon_wait, daemon_ticked, &d }, 1.0);
	agent_publish(&agent);          /* what it decided last, for --detach=agent */
	agent_unpublish();
	agent_stop(&agent);
	if (host_tuner_leave(&h)) {
		log_to(log_stderr, "stopped by %s; some knobs could not be restored: see `ksm-run --status`, "
			    "then `ksm-run --restore`", stop_name(sig));
		return 1;
	}
	log_to(log_stderr, "stopped by %s; %s", stop_name(sig), h.m.restored ? "the knobs from before are restored" :
		    "ksm-run instances still run: the tuning passes to them, and the last restores the knobs");
	return 0;
}
