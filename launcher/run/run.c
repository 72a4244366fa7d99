/*
 * run.c: running a command under ksm-run, as a recipe of steps.  Each step
 * before start_command() may refuse (exit 125) and changes nothing that a
 * later refusal would leave behind; from start_command() on, ksm-run must
 * not bail out: it supervises the command to its end, restores the knobs,
 * reports, and ends like the command did.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/files.h"
#include "common/kfeature.h"
#include "common/msg.h"
#include "eval/profile.h"
#include "host/knobs.h"
#include "host/election.h"
#include "host/counters.h"
#include "host/hosttune.h"
#include "host/tune.h"
#include "kernel_abi.h"
#include "paths.h"
#include "run/channel.h"
#include "run/child.h"
#include "run/duration.h"
#include "run/elf.h"
#include "follow/follow.h"
#include "follow/jointune.h"
#include "run/preload.h"
#include "follow/report.h"
#include "run/run.h"
#include "follow/survivors.h"
#include "follow/tree.h"

struct run {
	const struct run_opts *o;
	char **cmd;
	char lib[PATH_MAX];
	bool have_lib;
	bool prctl_pre_exec;          /* the process-wide flag is set before exec */
	struct host_tuner host;       /* its part in tuning the machine */
	struct sys_sample start;      /* the counters before any knob was written */
	struct channel channel;       /* the library's exit lines, made here */
	const char *report_path;      /* where the library writes them; NULL none */
	struct sampler s;
	struct child c;
	struct duration dur;          /* --duration: when the command is ended */
	struct profile prof;
	void (*on_sample)(struct run *r);       /* after each sample: --profile's; or NULL */
	struct report_section report_part;      /* --profile's part of the report */
};

/* --report-file must be writable before anything runs. */
static void check_report_file(const struct run_opts *o)
{
	int r;

	if (!o->report_file)
		return;
	if ((r = file_append(o->report_file, "", 0, 0644)))
		die("--report-file=%s: refused: %s; nothing was run", o->report_file, file_strerror(-r));
}

static void find_library(struct run *r)
{
	const struct run_opts *o = r->o;

	if (o->no_preload)
		return;
	r->have_lib = preload_find(o->preload, r->lib, sizeof r->lib) == 0;
	if (r->have_lib)
		return;
	if (o->preload)
		exit(EXIT_OWN);          /* preload_find said why */
	if (o->tuning.strict || config_coverage(o->lib) == COVER_SELECTION)
		die("libksmenable.so not found next to ksm-run, in ../lib or in %s (use --preload=PATH)",
		    KSMENABLE_LIBDIR);
	msg("libksmenable.so not found; only the prctl before exec enables KSM");
}

/*
 * The library's own rule (config_coverage) decides whether the process-wide
 * flag is set before exec.  A selection needs the library inside the
 * command, which a static binary never loads: the prctl would merge
 * everything the selection keeps out, so the command runs without KSM.
 */
static void decide_coverage(struct run *r)
{
	switch (config_coverage(r->o->lib)) {
	case COVER_NOTHING:
		r->prctl_pre_exec = false;
		return;
	case COVER_PROCESS:
		/* Where the kernel has no such prctl (before 6.4), the library advises each region instead. */
		r->prctl_pre_exec = kfeature_present(KF_PRCTL);
		if (r->prctl_pre_exec || exec_kind_of(r->cmd[0]) != EXEC_STATIC)
			return;
		if (r->o->tuning.strict)
			die("--strict: '%s' is a static binary, and this kernel has no PR_SET_MEMORY_MERGE "
			    "(Linux %s+) to cover it from outside; nothing was run", r->cmd[0],
			    kfeature_info(KF_PRCTL)->since);
		msg("'%s' is a static binary, which the library cannot load in, and this kernel has no "
		    "PR_SET_MEMORY_MERGE (Linux %s+) to cover it from outside: it runs without KSM",
		    r->cmd[0], kfeature_info(KF_PRCTL)->since);
		return;
	case COVER_SELECTION:
		r->prctl_pre_exec = false;
		if (exec_kind_of(r->cmd[0]) != EXEC_STATIC)
			return;
		if (r->o->tuning.strict)
			die("--strict: '%s' is a static binary, which cannot be covered selectively "
			    "(the library cannot load in it); nothing was run", r->cmd[0]);
		msg("'%s' is a static binary: the library cannot load in it, and a static binary "
		    "cannot be covered selectively (--allow, --deny, --min-size, --mode=madvise); "
		    "it runs without KSM (use --mode=prctl to merge all of its memory)", r->cmd[0]);
		return;
	}
}

/* The command's name as the shared state keeps it: printable, no spaces. */
static const char *plain_name_of(const char *cmd)
{
	static char name[USER_NAME_MAX];
	const char *base = strrchr(cmd, '/');
	size_t n = 0;

	for (const char *p = base ? base + 1 : cmd; *p && n + 1 < sizeof name; p++)
		name[n++] = *p > ' ' && *p <= '~' ? *p : '_';
	name[n] = '\0';
	return n ? name : "-";
}

/* Where the library in the command writes its exit lines (a path of the user's, or ours). */
static void open_report_channel(struct run *r)
{
	if (!r->have_lib)
		return;
	if (channel_open(&r->channel) == 0 && !getenv("KSM_ENABLE_REPORT"))
		r->report_path = r->channel.path;
	else if (r->channel.token[0])
		r->report_path = getenv("KSM_ENABLE_REPORT");
}

static void setenv_opt(const char *name, const char *value)
{
	if (value && setenv(name, value, 1))
		die_errno(errno, "cannot set %s", name);
}

/* The settings go to the library in the command as KSM_ENABLE_*. */
static void export_settings(struct run *r)
{
	const struct run_opts *o = r->o;

	if (r->report_path) {
		setenv_opt("KSM_ENABLE_REPORT", r->report_path);
		setenv_opt("KSM_ENABLE_REPORT_TOKEN", r->channel.token);
	}
	for (int i = 0; i < o->nsettings; i++)
		setenv_opt(o->settings[i].var, o->settings[i].value);
	if (r->have_lib && preload_setenv(r->lib))
		msg("cannot set LD_PRELOAD; only the prctl before exec enables KSM");
}

/* Undoes what the steps before the start did, for a command that never started. */
static void undo_before_start(struct run *r)
{
	host_tuner_leave(&r->host);
	channel_close(&r->channel);
}

static int start_command(struct run *r)
{
	int err;
	struct proc_info *mp;
	const char *base = strrchr(r->cmd[0], '/');

	sample_init(&r->s, &r->start, getpid(), r->have_lib ? r->lib : NULL, r->report_path,
		    r->report_path ? r->channel.token : NULL);
	if ((err = child_start(&r->c, r->cmd, r->prctl_pre_exec))) {
		msg_errno(-err, "cannot start %s", r->cmd[0]);
		undo_before_start(r);
		return -1;
	}
	/* A closed stderr must not kill ksm-run before it exits like the command. */
	signal(SIGPIPE, SIG_IGN);
	if ((mp = sample_proc(&r->s, r->c.pid))) {
		mp->ppid = getpid();
		snprintf(mp->comm, sizeof mp->comm, "%.15s", base ? base + 1 : r->cmd[0]);
	}
	return 0;
}

/*
 * --profile's sample: the command's process tree, as the sampler knows it
 * (MAX_TRACKED at most).  The command runs: no allocation may end
 * ksm-run, so the array is the sampler's size, made once.
 */
static void profile_tree(struct run *r)
{
	static pid_t pids[MAX_TRACKED];
	size_t n = 0;

	for (int i = 0; i < r->s.nprocs && n < sizeof pids / sizeof pids[0]; i++)
		pids[n++] = r->s.procs[i].pid;
	profile_sample(&r->prof, pids, n);
}

static void profile_json_part(struct jsonw *w, const void *prof)
{
	profile_json(w, prof);
}

static void profile_text_part(FILE *f, const void *prof)
{
	profile_print(f, prof);
}

/* --profile: a sample of it after each of the run's, and its part of the report. */
static void profile_start(struct run *r)
{
	profile_init(&r->prof, r->o->threshold);
	r->on_sample = profile_tree;
	r->report_part = (struct report_section){ profile_json_part, profile_text_part, &r->prof };
}

/* --duration's end: what merged until now is sampled before the command is told to end. */
static void end_of_duration(struct run *r, bool sampled)
{
	if (duration_term_due(&r->dur) && !sampled) {
		sample_tick(&r->s);
		if (r->on_sample)
			r->on_sample(r);
	}
	/* The report on stderr is JSON alone: the exit status says it (124). */
	duration_signal(&r->dur, r->c.pid, r->o->quiet || (r->o->json && !r->o->report_file));
}

/* The follow loop's wait: for the command's end, or --duration's. */
static int wait_command(void *ctx, double wait_s)
{
	struct run *r = ctx;

	return child_wait(&r->c, duration_wait_ms(&r->dur, (int)(1000 * wait_s))) ? FOLLOW_ENDED : 0;
}

static void ticked(void *ctx, bool sampled)
{
	struct run *r = ctx;

	if (sampled && r->on_sample)
		r->on_sample(r);
	end_of_duration(r, sampled);
}

/*
 * Follows the command to its end (follow.h), then leaves the tuning and
 * reports.  The first sample comes early: it catches short commands.
 */
static void follow_command(struct run *r)
{
	struct follow f = { .s = &r->s, .host = &r->host, .metrics_file = r->o->metrics_file,
			    .interval = r->o->interval, .what = FOLLOWED_COMMAND, .command = r->cmd[0] };
	struct report_opts ro = {
		.json = r->o->json, .file = r->o->report_file, .prctl_pre_exec = r->prctl_pre_exec,
		.extra = r->on_sample ? &r->report_part : NULL, .all_processes = r->o->report_all,
	};
	struct report_subject j = { .what = FOLLOWED_COMMAND, .argv = r->cmd, .root = r->c.pid };

	duration_start(&r->dur, r->o->duration, r->c.start);
	follow_loop(&f, &(struct follow_hooks){ wait_command, ticked, r }, 0.1);
	if (r->c.exec_errno)
		msg_errno(r->c.exec_errno, "cannot run '%s'", r->cmd[0]);
	if (ro.extra)
		profile_finish(&r->prof);
	if (r->o->end_survivors)
		survivors_end(&r->s, r->c.pid);
	j.start = r->c.start;
	j.end = r->c.end;
	j.wait_status = r->c.status;
	j.exit_status = child_exit_status(&r->c);
	follow_end(&f, &ro, &j, r->c.exec_errno || r->o->quiet);
	channel_close(&r->channel);
}

int run_command(const struct run_opts *o, char **cmd)
{
	static struct run r;
	int err;

	r.o = o;
	r.cmd = cmd;
	check_report_file(o);
	find_library(&r);
	decide_coverage(&r);
	/* From here on, the forwarded signals wait until the knobs are restored. */
	if ((err = child_prepare_signals()))
		die_errno(-err, "cannot block signals");
	counters_sample(&r.start, ksmd_find());        /* the report's start: before any knob is written */
	run_join_tuning(&r.host, &o->tuning, plain_name_of(r.cmd[0]));
	open_report_channel(&r);
	export_settings(&r);
	if (start_command(&r))
		return EXIT_OWN;
	/* ---- The command runs: from here ksm-run must not bail out. ---- */
	if (o->profile)
		profile_start(&r);
	follow_command(&r);
	/* Ended by --duration: timeout(1)'s status, not the TERM re-raised. */
	if ((err = duration_exit_status(&r.dur, &r.c)) >= 0) {
		fflush(NULL);
		exit(err);
	}
	child_exit_like(&r.c);
}
