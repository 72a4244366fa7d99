/*
 * options_rules.c - the rules between values of each mode of ksm-run:
 * what a mode takes besides the option table's say (a command or none,
 * the evaluation's, the daemon's, --attach's and --detach's), the knobs
 * the kernel refuses together, and the library's settings checked as the
 * library will read them.  All refused with 125 before anything is read,
 * written or started.
 */
#include <string.h>

#include "common/kfeature.h"
#include "common/msg.h"
#include "host/knobs.h"
#include "options_fleet.h"
#include "options_library.h"
#include "options_rules.h"

/* What --attach's and --detach's rules ask of the command line. */
struct attach_request {
	bool detach;                    /* --detach, else --attach */
	const char *target;             /* its TARGET */
	const char *mode;               /* --mode, or NULL */
	bool selection;                 /* --allow, --deny or --min-size */
};

/* The evaluation modes' own rules, between values. */
static void check_evaluation(struct opts *o, char **cmd)
{
	if (o->action == ACT_ESTIMATE && *cmd)
		die("--estimate reads running processes and takes no command ('%s')", cmd[0]);
	if (o->action == ACT_PROFILE) {
		if (o->mode && strcmp(o->mode, "prctl"))
			die("--profile runs the command with all of its memory mergeable (prctl); "
			    "it cannot take --mode=%s", o->mode);
		/* Before 6.4 all of it is every private region, advised by the
		 * library (madvise, whose selection is all by default). */
		o->mode = kfeature_present(KF_PRCTL) ? "prctl" : "madvise";
		if (!o->threshold)
			o->threshold = 95;
	}
}

/* --daemon runs no command and sets the scan rate itself. */
static void check_daemon(const struct opts *o, char **cmd)
{
	if (o->action != ACT_DAEMON)
		return;
	if (*cmd)
		die("--daemon runs no command ('%s'): it tunes ksmd for the whole machine; "
		    "run commands with `ksm-run -- COMMAND` beside it", cmd[0]);
	if (o->user_rate)
		die("--daemon sets the scan rate itself (pages_to_scan, sleep_millisecs, advisor_*): "
		    "use --steady, --max-cpu and --min-profit, or --set for the other knobs");
}

/* The kernel refuses pages_to_scan under the scan-time advisor: say so now. */
static void check_knob_combination(const struct opts *o)
{
	const char *mode = knob_lookup(&o->knobs, "advisor_mode");
	char cur[KNOB_VALUE_MAX];

	if (!knob_lookup(&o->knobs, "pages_to_scan"))
		return;
	if (!mode && !knob_read("advisor_mode", cur, sizeof cur))
		mode = cur;
	if (mode && !strcmp(mode, "scan-time"))
		die("pages_to_scan cannot be set while the scan-time advisor is active (the kernel "
		    "refuses it): add --advisor=none, or set the advisor_* knobs instead");
}

/*
 * --attach and --detach act on processes that run.  No command (CMD must
 * be empty), a TARGET without "all" ("agent" only as --detach's whole
 * TARGET), a mode the targets can take (which options --attach, --attach
 * --no-wait and --detach take at all is the option table's, options.c).
 * Returns the mode to use: Q's, or "prctl" (the process-wide form) when
 * neither a mode nor a selection is given.
 */
static const char *attach_check(const struct attach_request *q, char **cmd)
{
	const char *opt = q->detach ? "--detach" : "--attach";

	if (*cmd)
		die("%s acts on processes that already run and takes no command ('%s')", opt, cmd[0]);
	/* Each item in place, however long the value: an "all" must not hide past a buffer's end. */
	for (const char *it = q->target;; it++) {
		size_t n = strcspn(it, ",");

		if (n == 3 && !strncmp(it, "all", 3))
			die("%s: 'all' is not accepted as a target (every process of the machine); give PIDs "
			    "or cgroup:PATH", opt);
		if (n == 5 && !strncmp(it, "agent", 5) && (!q->detach || strcmp(q->target, "agent")))
			die("%s=%s: 'agent' (the processes the host agent enabled) is --detach's alone, and a "
			    "target of its own", opt, q->target);
		if (!it[n])
			break;
		it += n;
	}
	if (q->mode && strcmp(q->mode, "prctl") && strcmp(q->mode, "madvise"))
		die("%s --mode=%s: accepted are prctl (the default) and madvise", opt, q->mode);
	if (q->mode && !strcmp(q->mode, "prctl") && q->selection)
		die("%s --mode=prctl is process-wide: it cannot take --allow, --deny or --min-size", opt);
	return q->mode || q->selection ? q->mode : "prctl";
}

void options_check_rules(struct opts *o, char **cmd)
{
	fleet_check(&o->fp, &(struct fleet_mode){ .combine = o->action == ACT_COMBINE, .matrix = o->matrix,
						  .format_given = o->fp_format_given }, cmd);
	check_evaluation(o, cmd);
	check_daemon(o, cmd);
	if (o->action == ACT_CHECK_CONFIG && *cmd)
		die("--check-config checks the policy and takes no command ('%s')", cmd[0]);
	if (o->action == ACT_RUN || o->action == ACT_PROFILE) {
		if (!*cmd)
			die("no command given (see --help)");
		check_knob_combination(o);
		check_library_settings(o);
	}
	if (o->action == ACT_ESTIMATE)
		check_library_settings(o);      /* its --allow and --deny */
	if (o->action == ACT_ATTACH || o->action == ACT_DETACH) {
		o->mode = attach_check(&(struct attach_request){
			.detach = o->action == ACT_DETACH, .target = o->attach,
			.mode = o->mode, .selection = o->allow || o->deny || o->min_size }, cmd);
		check_knob_combination(o);
		check_library_settings(o);
	}
}
