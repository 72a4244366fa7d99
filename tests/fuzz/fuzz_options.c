/*
 * fuzz_options.c - ksm-run's command line (launcher/options.c):
 * options_parse on an argv made from the input.  It must either return a
 * command within argv with options that keep their rules, or end the
 * process: exit 125 through die() for a bad option, exit 0 for --help,
 * --version and --list-*.
 *
 * The seam: options_parse ends the process with exit(), in die()
 * (launcher/common/msg.c) and for --help and the like.  This harness is
 * linked with -Wl,--wrap=exit (see the Makefile), so that every call of
 * exit() in the linked objects comes to __wrap_exit below: while
 * options_parse runs it jumps back here with the status; at any other
 * time it is the real exit.  ksm-run itself is built and linked as before:
 * its code has no hook and behaves the same, and the seam needs no change
 * to the code under test at all.
 *
 * What else options_parse relies on, and how the harness meets it:
 * getopt_long keeps its place between calls (optind = 0 starts afresh);
 * the option table is static and rebuilt by each call (nothing to do);
 * the library's settings fall back to the environment (the KSM_ENABLE_*
 * variables are removed at start); --help and the lists print to stdout
 * and die() to stderr (run it with -close_fd_mask=3, as make fuzz and
 * tests/04-fuzz.bats do; failed checks still reach stderr, see fuzz.h); knob options stat and read /sys/kernel/mm/ksm, never write.
 *
 * --daemon's options (--take-over, --steady, --max-cpu, --min-profit) are
 * checked too: its own only with it, and none of a command's beside it; and
 * the fingerprint options and --combine by the rules of options_fleet.c,
 * --attach and --detach by those of options_rules.c.
 *
 * Input: the arguments after argv[0], separated by NUL bytes.
 */
#include <getopt.h>
#include <setjmp.h>

#include "common/msg.h"
#include "eval/fingerprint.h"
#include "fuzz.h"
#include "options.h"

#define MAX_ARGS 64

static jmp_buf back;
static volatile int parsing, status;

void __real_exit(int code) __attribute__((noreturn));
void __wrap_exit(int code) __attribute__((noreturn));

void __wrap_exit(int code)
{
	if (parsing) {
		parsing = 0;
		status = code;
		longjmp(back, 1);
	}
	__real_exit(code);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	static const char *const vars[] = {
		"KSM_ENABLE_MODE", "KSM_ENABLE_ALLOW", "KSM_ENABLE_DENY", "KSM_ENABLE_MIN_SIZE",
		"KSM_ENABLE_RESCAN_MS", "KSM_ENABLE_LOG", "KSM_ENABLE_REPORT", "KSM_ENABLE_REPORT_TOKEN",
		"KSM_ENABLE_INHERIT",
	};

	(void)argc;
	(void)argv;
	for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++)
		unsetenv(vars[i]);
	return 0;
}

/* What options.h and the options' rules promise of a parse that returned. */
static void check_opts(const struct opts *o, char **argv, int argc, char **cmd)
{
	char why[256];
	bool rate = false;

	FUZZ_CHECK(cmd >= argv + 1 && cmd <= argv + argc, "the command at argv + %td of %d", cmd - argv, argc);
	FUZZ_CHECK(o->action >= ACT_RUN && o->action <= ACT_CHECK_CONFIG, "action %d", o->action);
	if (o->action == ACT_RUN || o->action == ACT_PROFILE)
		FUZZ_CHECK(*cmd, "no command to run");
	if (o->action == ACT_ESTIMATE)
		FUZZ_CHECK(!*cmd && o->estimate && *o->estimate, "--estimate with a command or no target");
	FUZZ_CHECK(o->interval >= 0.1 && o->interval <= 3600, "interval %g", o->interval);
	FUZZ_CHECK(!o->settle || (o->action == ACT_ESTIMATE && o->settle >= 0.1 && o->settle <= 3600),
		   "settle %g", o->settle);
	if (o->action == ACT_PROFILE)
		FUZZ_CHECK(o->threshold > 0 && o->threshold <= 100 && !strcmp(o->mode, "prctl") &&
			   !o->allow && !o->deny && !o->min_size, "--profile with threshold %g", o->threshold);
	else
		FUZZ_CHECK(!o->threshold, "a threshold without --profile");
	FUZZ_CHECK(o->knobs.n >= 0 && o->knobs.n <= MAX_KNOBS, "%d knobs", o->knobs.n);
	for (int i = 0; i < o->knobs.n; i++) {
		const struct knob *k = &o->knobs.k[i];

		FUZZ_CHECK(knob_check_name(k->name, why, sizeof why) == 0 &&
			   knob_check_value(k->name, k->value, why, sizeof why) == 0,
			   "--set %s=%s taken against the rules: %s", k->name, k->value, why);
		rate |= knob_is_rate(k->name);
	}
	FUZZ_CHECK(o->user_rate == rate, "user_rate %d, but a rate knob given: %d", o->user_rate, rate);
	/* --daemon's own options, and what it refuses (a command's, the user's rate). */
	FUZZ_CHECK(!o->steady || (o->steady >= 1 && o->steady <= 86400), "steady %g", o->steady);
	FUZZ_CHECK(o->max_cpu_given ? o->max_cpu >= 0 && o->max_cpu <= 100 : !o->max_cpu, "max-cpu %g", o->max_cpu);
	FUZZ_CHECK(o->min_profit_given || !o->min_profit, "min-profit %lu not given", o->min_profit);
	if (o->action == ACT_DAEMON)
		FUZZ_CHECK(!*cmd && !o->mode && !o->allow && !o->deny && !o->min_size && !o->rescan && !o->log &&
			   !o->preload && !o->report_file && !o->no_inherit && !o->no_preload && !o->json &&
			   !o->quiet && !o->no_tune && !o->keep && !o->user_rate,
			   "--daemon with a command's option, or the user's rate");
	else
		FUZZ_CHECK(!o->steady && !o->max_cpu_given && !o->min_profit_given,
			   "--steady, --max-cpu or --min-profit without --daemon");
	/* Fingerprints: each --estimate a target, labels and files after one,
	 * only with --estimate; --combine with files, --matrix with two. */
	FUZZ_CHECK(o->fp.n <= FP_TARGETS_MAX && (o->fp.n > 0) == (o->action == ACT_ESTIMATE),
		   "%zu targets with action %d", o->fp.n, o->action);
	for (size_t i = 0; i < o->fp.n; i++) {
		const struct fp_request *q = &o->fp.req[i];
		FUZZ_CHECK(q->target && *q->target && (!q->label || (q->file && fp_text_ok(q->label))),
			   "target %zu: a label without a file, or not a label", i);
		for (size_t j = 0; j < i; j++)
			FUZZ_CHECK(!q->file || !o->fp.req[j].file || strcmp(q->file, o->fp.req[j].file),
				   "--fingerprint=%s twice", q->file);
	}
	FUZZ_CHECK(o->fp.sample <= FP_SAMPLE_MAX && (!o->fp.sample || fp_wanted(&o->fp)),
		   "--sample=%u without a fingerprint", o->fp.sample);
	FUZZ_CHECK(!o->fp.per_cgroup || o->action == ACT_ESTIMATE, "--fingerprint-per-cgroup without --estimate");
	FUZZ_CHECK(!o->fp.tsv || o->fp.sample <= 1, "a sampled TSV");
	/* --attach and --detach: a target that is not "all", no command, no
	 * library option; --detach and --no-wait write no knob and no report. */
	if (o->action == ACT_ATTACH || o->action == ACT_DETACH) {
		FUZZ_CHECK(!*cmd && o->attach && *o->attach, "--attach with a command or no target");
		FUZZ_CHECK(strcmp(o->attach, "all") && strncmp(o->attach, "all,", 4) && !strstr(o->attach, ",all,") &&
			   (strlen(o->attach) < 4 || strcmp(o->attach + strlen(o->attach) - 4, ",all")),
			   "--attach=%s: all taken", o->attach);
		FUZZ_CHECK(!o->preload && !o->no_preload && !o->no_inherit && !o->rescan && !o->log &&
			   !o->end_survivors, "--attach with a library option");
		/* The form: the prctl with no selection, else madvise of a selection. */
		bool selection = o->allow || o->deny || o->min_size;
		FUZZ_CHECK(o->mode ? !strcmp(o->mode, "madvise") || (!strcmp(o->mode, "prctl") && !selection)
				   : selection, "--attach's form: mode %s", o->mode ? o->mode : "(none)");
		if (o->action == ACT_DETACH || o->no_wait)
			FUZZ_CHECK(!o->knobs.n && !o->no_tune && !o->keep && !o->take_over &&
				   !o->report_file && !o->report_all && !o->metrics_file,
				   "--detach or --no-wait with a knob or report option");
		/* --attach --no-wait --strict: a stopped ksmd is an error. */
		FUZZ_CHECK(o->action != ACT_DETACH || !o->strict, "--detach --strict");
	} else {
		FUZZ_CHECK(!o->attach, "a target to attach to without --attach");
	}
	FUZZ_CHECK(!o->no_wait || o->action == ACT_ATTACH, "--no-wait without --attach");
	/* The modes that read or show and change nothing take no knob, tuning, library or run option. */
	if (o->action == ACT_ESTIMATE || o->action == ACT_COMBINE || o->action == ACT_STATUS ||
	    o->action == ACT_RESTORE)
		FUZZ_CHECK(!o->knobs.n && !o->no_tune && !o->keep && !o->strict && !o->take_over && !o->quiet &&
			   !o->mode && !o->min_size && !o->rescan && !o->log && !o->preload && !o->no_preload &&
			   !o->no_inherit && !o->report_all && !o->end_survivors && !o->metrics_file &&
			   !o->stop_budget && !o->threshold, "a mode that changes nothing took a knob, tuning or run option");
	FUZZ_CHECK(!o->settle || o->action == ACT_ESTIMATE, "--settle without --estimate");
	if (o->action == ACT_STATUS || o->action == ACT_RESTORE)
		FUZZ_CHECK(!o->allow && !o->deny && !o->report_file, "--status or --restore with a selection or a file");
	if (o->action == ACT_COMBINE)
		FUZZ_CHECK(cmd[0] && (!o->matrix || cmd[1]), "--combine without files, or --matrix with one");
	else
		FUZZ_CHECK(!o->matrix, "--matrix without --combine");
	{
		const char *values[] = { o->mode, o->allow, o->deny, o->min_size, o->rescan, o->log,
					 o->preload, o->report_file, o->estimate, o->attach };

		for (size_t i = 0; i < sizeof values / sizeof values[0]; i++)
			FUZZ_CHECK(!values[i] || *values[i], "an empty value taken (%zu)", i);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct opts o;
	static char *argv[MAX_ARGS + 2];
	static int argc;
	static char **cmd;

	argc = 0;
	argv[argc++] = fuzz_str((const uint8_t *)"ksm-run", 7);
	while (size && argc <= MAX_ARGS)
		argv[argc++] = fuzz_record(&data, &size, '\0');
	argv[argc] = NULL;
	optind = 0;                             /* getopt_long: start afresh */
	cmd = NULL;
	if (!setjmp(back)) {
		parsing = 1;
		cmd = options_parse(argc, argv, &o);
		parsing = 0;
		check_opts(&o, argv, argc, cmd);
	} else {
		FUZZ_CHECK(status == 0 || status == EXIT_OWN, "options_parse exited %d", status);
	}
	/* Whatever was loaded before the end: the library's settings. */
	config_free(&o.lib);
	for (int i = 0; i < argc; i++)
		free(argv[i]);
	return 0;
}
