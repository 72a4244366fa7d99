/*
 * options.c: ksm-run's options.  Everything that can be refused is refused
 * here, before any knob is written or the command started: values by the
 * same parsers that the library and the knobs use, combinations by the
 * rules of each mode.
 */
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/msg.h"
#include "common/parse.h"
#include "ksmenable.h"
#include "nearest.h"
#include "option_modes.h"
#include "options.h"
#include "options_fleet.h"
#include "options_help.h"
#include "options_rules.h"
#include "options_values.h"

enum {
	O_MODE = 256, O_ALLOW, O_DENY, O_MIN_SIZE, O_RESCAN, O_LOG, O_NO_INHERIT, O_PRELOAD,
	O_NO_PRELOAD, O_SET, O_NO_TUNE, O_KEEP, O_STRICT, O_REPORT_FILE, O_JSON, O_INTERVAL,
	O_STATUS, O_RESTORE, O_ALIAS, O_ESTIMATE, O_SETTLE, O_PROFILE, O_THRESHOLD,
	O_LIST_OPTIONS, O_LIST_KNOBS, O_DAEMON, O_TAKE_OVER, O_STEADY, O_MAX_CPU, O_MIN_PROFIT,
	O_REPORT_ALL, O_METRICS_FILE, O_WATCH, O_END_SURVIVORS, O_FINGERPRINT, O_LABEL, O_SAMPLE,
	O_FP_FORMAT, O_FP_PER_CGROUP, O_FP_KEY, O_COMBINE, O_MATRIX, O_ATTACH, O_DETACH, O_NO_WAIT,
	O_STOP_BUDGET, O_DURATION, O_CHECK_CONFIG, O_POLICY, O_SCAN_RATE,
};

/* --watch's interval when it is given without one. */
#define WATCH_DEFAULT_S 2.0

/* The modes that take an option (option_modes.h), by their bits. */
#define RUN M(CLI_RUN)
#define PROFILE M(CLI_PROFILE)
#define ESTIMATE M(CLI_ESTIMATE)
#define COMBINE M(CLI_COMBINE)
#define STATUS M(CLI_STATUS)
#define RESTORE M(CLI_RESTORE)
#define DAEMON M(CLI_DAEMON)
#define ATTACH M(CLI_ATTACH)
#define NO_WAIT M(CLI_ATTACH_NO_WAIT)
#define DETACH M(CLI_DETACH)
#define CHECK_CONFIG M(CLI_CHECK_CONFIG)
#define COMMAND (RUN | PROFILE)                 /* a command runs, with the library */
#define TUNING (COMMAND | ATTACH | DAEMON)      /* ksm-run tunes ksmd while it lasts */
#define REPORTING (COMMAND | ATTACH)            /* it follows processes and reports on them */
#define ATTACHING (ATTACH | NO_WAIT)
#define OUTSIDE (ATTACHING | DETACH)            /* processes that already run */

/*
 * Every option, and the modes that take it: the one table.  An option a
 * mode does not take is refused with 125 (option_check_mode), before any
 * value is read; the rules between values are the modes' own (below).
 */
#define ALIAS(name) { name, required_argument, O_ALIAS, TUNING, true }
static const struct option_spec specs[] = {
	{ "help", no_argument, 'h', M_ALL, false },
	{ "version", no_argument, 'V', M_ALL, false },
	{ "list-options", optional_argument, O_LIST_OPTIONS, M_ALL, false },
	{ "list-knobs", no_argument, O_LIST_KNOBS, M_ALL, false },
	{ "quiet", no_argument, 'q', REPORTING | NO_WAIT, false },
	/* The library's settings; --attach and --detach take the selection. */
	{ "mode", required_argument, O_MODE, COMMAND | OUTSIDE, false },
	{ "allow", required_argument, O_ALLOW, RUN | ESTIMATE | OUTSIDE, false },
	{ "deny", required_argument, O_DENY, RUN | ESTIMATE | OUTSIDE, false },
	{ "min-size", required_argument, O_MIN_SIZE, RUN | OUTSIDE, false },
	{ "rescan-ms", required_argument, O_RESCAN, COMMAND, false },
	{ "log", required_argument, O_LOG, COMMAND, false },
	{ "no-inherit", no_argument, O_NO_INHERIT, COMMAND, false },
	{ "preload", required_argument, O_PRELOAD, COMMAND, false },
	{ "no-preload", no_argument, O_NO_PRELOAD, COMMAND, false },
	/* The knobs and the tuning. */
	{ "set", required_argument, O_SET, TUNING, false },
	{ "no-tune", no_argument, O_NO_TUNE, REPORTING, false },
	{ "keep-knobs", no_argument, O_KEEP, REPORTING, false },
	{ "strict", no_argument, O_STRICT, REPORTING | NO_WAIT, false },
	{ "take-over", no_argument, O_TAKE_OVER, TUNING, false },
	/* The report and the figures. */
	{ "report-file", required_argument, O_REPORT_FILE, REPORTING | ESTIMATE | COMBINE, false },
	{ "json", no_argument, O_JSON, REPORTING | ESTIMATE | COMBINE | STATUS | OUTSIDE, false },
	{ "report-all", no_argument, O_REPORT_ALL, REPORTING, false },
	{ "end-survivors", no_argument, O_END_SURVIVORS, COMMAND, false },
	{ "interval", required_argument, O_INTERVAL, REPORTING, false },
	{ "duration", required_argument, O_DURATION, COMMAND, false },
	{ "metrics-file", required_argument, O_METRICS_FILE, TUNING, false },
	/* The modes, each with its own options. */
	{ "status", no_argument, O_STATUS, STATUS, false },
	{ "watch", optional_argument, O_WATCH, STATUS | RESTORE, false },
	{ "restore", no_argument, O_RESTORE, RESTORE, false },
	{ "estimate", required_argument, O_ESTIMATE, ESTIMATE, false },
	{ "settle", required_argument, O_SETTLE, ESTIMATE, false },
	{ "scan-rate", required_argument, O_SCAN_RATE, ESTIMATE, false },
	{ "fingerprint", required_argument, O_FINGERPRINT, ESTIMATE, false },
	{ "label", required_argument, O_LABEL, ESTIMATE, false },
	{ "sample", required_argument, O_SAMPLE, ESTIMATE, false },
	{ "fingerprint-format", required_argument, O_FP_FORMAT, ESTIMATE, false },
	{ "fingerprint-per-cgroup", required_argument, O_FP_PER_CGROUP, ESTIMATE, false },
	{ "fingerprint-key", required_argument, O_FP_KEY, ESTIMATE, false },
	{ "combine", no_argument, O_COMBINE, COMBINE, false },
	{ "matrix", no_argument, O_MATRIX, COMBINE, false },
	{ "profile", no_argument, O_PROFILE, PROFILE, false },
	{ "threshold", required_argument, O_THRESHOLD, PROFILE, false },
	{ "daemon", no_argument, O_DAEMON, DAEMON, false },
	{ "steady", required_argument, O_STEADY, DAEMON, false },
	{ "max-cpu", required_argument, O_MAX_CPU, DAEMON, false },
	{ "min-profit", required_argument, O_MIN_PROFIT, DAEMON, false },
	{ "policy", required_argument, O_POLICY, DAEMON, false },
	{ "attach", required_argument, O_ATTACH, ATTACHING, false },
	{ "no-wait", no_argument, O_NO_WAIT, NO_WAIT, false },
	{ "detach", required_argument, O_DETACH, DETACH, false },
	{ "stop-budget", required_argument, O_STOP_BUDGET, OUTSIDE, false },
	{ "check-config", optional_argument, O_CHECK_CONFIG, CHECK_CONFIG, false },
	/* --set NAME=VALUE's aliases: the knob's name with '-' for '_'. */
	ALIAS("pages-to-scan"), ALIAS("sleep-millisecs"), ALIAS("smart-scan"), ALIAS("advisor"),
	ALIAS("advisor-target-scan-time"), ALIAS("advisor-max-cpu"), ALIAS("advisor-min-pages-to-scan"),
	ALIAS("advisor-max-pages-to-scan"), ALIAS("max-page-sharing"), ALIAS("use-zero-pages"),
	ALIAS("merge-across-nodes"),
	{ NULL, 0, 0, 0, false },
};
#define NALL (int)(sizeof specs / sizeof specs[0] - 1)

const struct option_spec *options_table(void)
{
	return specs;
}

/* getopt's table, made from SPECS. */
static struct option all_opts[NALL + 1];

static void build_table(void)
{
	for (int i = 0; i < NALL; i++)
		all_opts[i] = (struct option){ specs[i].name, specs[i].has_arg, NULL, specs[i].val };
	memset(&all_opts[NALL], 0, sizeof all_opts[0]);
}

/* The known option nearest to NAME, if near enough to be a typo. */
static const char *nearest_option(const char *name)
{
	const char *best = NULL;
	size_t best_d = (size_t)-1, len = strlen(name);

	for (int i = 0; i < NALL; i++) {
		size_t d = name_distance(name, len, all_opts[i].name, strlen(all_opts[i].name));
		if (d < best_d) {
			best_d = d;
			best = all_opts[i].name;
		}
	}
	return name_is_near(best_d, len) ? best : NULL;
}

_Noreturn static void unknown_option(const char *arg, int optopt_)
{
	char name[64];
	const char *near;
	size_t len;

	if (optopt_ && optopt_ < 256)
		die("unknown option '-%c' (see --help)", optopt_);
	if (optopt_) {
		for (int i = 0; i < NALL; i++)
			if (all_opts[i].val == optopt_ && optopt_ != O_ALIAS)
				die("option '--%s' needs a value: --%s=VALUE (see --help)",
				    all_opts[i].name, all_opts[i].name);
		die("option '%s' needs a value: %s=VALUE (see --help)", arg, arg);
	}
	if (strncmp(arg, "--", 2)) {
		die("unknown option '%s' (see --help)", arg);
	}
	len = strcspn(arg + 2, "=");
	snprintf(name, sizeof name, "%.*s", (int)(len < sizeof name ? len : sizeof name - 1), arg + 2);
	if ((near = nearest_option(name)))
		die("unknown option '--%s': did you mean '--%s'? (see --help)", name, near);
	die("unknown option '--%s' (see --help)", name);
}

/* --list-options[=MODE]: every option, or those MODE takes. */
static void list_options(const char *mode_name)
{
	int mode = mode_name ? cli_mode_by_name(mode_name) : -1;

	if (mode_name && mode < 0) {
		char names[256];

		cli_modes_text(M_ALL, false, names, sizeof names);
		die("--list-options=%s: no such mode (accepted: %s)", mode_name, names);
	}
	options_list(specs, mode);
}

static void set_action(struct opts *o, enum action a, const char *opt)
{
	if (o->action != ACT_RUN && o->action != a)
		die("%s cannot be combined with --estimate, --combine, --profile, --status, --restore, "
		    "--daemon, --attach, --detach or --check-config", opt);
	o->action = a;
}

static void take_option(struct opts *o, int c, int idx, const char *arg)
{
	/* A value given on the command line must say something. */
	if (arg && !*arg)
		die("option '--%s' needs a value, not an empty one (see --help)", all_opts[idx].name);
	switch (c) {
	case 'h': options_usage(stdout); exit(0);
	case 'V': printf("ksm-run %s\n", KSMENABLE_VERSION); exit(0);
	case 'q': o->quiet = true; break;
	case O_MODE: o->mode = arg; break;
	case O_ALLOW: o->allow = arg; break;
	case O_DENY: o->deny = arg; break;
	case O_MIN_SIZE: o->min_size = arg; break;
	case O_RESCAN: o->rescan = arg; break;
	case O_LOG: o->log = arg; break;
	case O_NO_INHERIT: o->no_inherit = true; break;
	case O_PRELOAD: o->preload = arg; break;
	case O_NO_PRELOAD: o->no_preload = true; break;
	case O_SET: set_knob_option(o, arg); break;
	case O_ALIAS: alias_option(o, all_opts[idx].name, arg); break;
	case O_NO_TUNE: o->no_tune = true; break;
	case O_KEEP: o->keep = true; break;
	case O_STRICT: o->strict = true; break;
	case O_REPORT_FILE: o->report_file = arg; break;
	case O_JSON: o->json = true; break;
	case O_REPORT_ALL: o->report_all = true; break;
	case O_END_SURVIVORS: o->end_survivors = true; break;
	case O_INTERVAL: o->interval = seconds_option("interval", arg, 0.1, 3600); break;
	case O_DURATION: o->duration = seconds_option("duration", arg, 0.1, 604800); break;
	case O_ESTIMATE:
		fleet_estimate_option(&o->fp, arg);
		if (!o->estimate)
			o->estimate = arg;
		break;
	case O_FINGERPRINT: fleet_fingerprint_option(&o->fp, arg); break;
	case O_LABEL: fleet_label_option(&o->fp, arg); break;
	case O_SAMPLE: fleet_sample_option(&o->fp, arg); break;
	case O_FP_FORMAT:
		if (strcmp(arg, "binary") && strcmp(arg, "tsv"))
			die("--fingerprint-format=%s: accepted: binary, tsv", arg);
		o->fp.tsv = !strcmp(arg, "tsv");
		o->fp_format_given = true;
		break;
	case O_FP_PER_CGROUP: fleet_per_cgroup_option(&o->fp, arg); break;
	case O_FP_KEY: fleet_key_option(&o->fp, arg); break;
	case O_MATRIX: o->matrix = true; break;
	case O_SETTLE: o->settle = seconds_option("settle", arg, 0.1, 3600); break;
	case O_SCAN_RATE: scan_rate_option(o, arg); break;
	case O_ATTACH: case O_DETACH: o->attach = arg; break;
	case O_CHECK_CONFIG: case O_POLICY: o->policy = arg; break;
	case O_STOP_BUDGET: o->stop_budget = seconds_option("stop-budget", arg, 0.0001, 1); break;
	case O_THRESHOLD:
		if (parse_double(arg, 0, 100, &o->threshold) || o->threshold <= 0)
			die("--threshold=%s: not a percentage in (0, 100]", arg);
		break;
	case O_TAKE_OVER: o->take_over = true; break;
	case O_STEADY: o->steady = seconds_option("steady", arg, 1, 86400); break;
	case O_MAX_CPU:
		if (parse_double(arg, 0, 100, &o->max_cpu))
			die("--max-cpu=%s: not a percentage of one core in 0..100", arg);
		o->max_cpu_given = true;
		break;
	case O_MIN_PROFIT:
		if (parse_size(arg, &o->min_profit))
			die("--min-profit=%s: not a size (e.g. 16M, 0 for never)", arg);
		o->min_profit_given = true;
		break;
	case O_METRICS_FILE: metrics_file_option(o, arg); break;
	case O_WATCH: o->watch = arg ? seconds_option("watch", arg, 0.1, 3600) : WATCH_DEFAULT_S; break;
	case O_LIST_OPTIONS: list_options(arg); exit(0);
	case O_LIST_KNOBS: options_list_knobs(); exit(0);
	}
}

/* The mode the command line chose, as the option table knows it. */
static enum cli_mode cli_mode_of(const struct opts *o)
{
	static const enum cli_mode of_action[] = {
		[ACT_RUN] = CLI_RUN, [ACT_PROFILE] = CLI_PROFILE, [ACT_ESTIMATE] = CLI_ESTIMATE,
		[ACT_COMBINE] = CLI_COMBINE, [ACT_STATUS] = CLI_STATUS, [ACT_RESTORE] = CLI_RESTORE,
		[ACT_DAEMON] = CLI_DAEMON, [ACT_ATTACH] = CLI_ATTACH, [ACT_DETACH] = CLI_DETACH,
		[ACT_CHECK_CONFIG] = CLI_CHECK_CONFIG,
	};

	return o->action == ACT_ATTACH && o->no_wait ? CLI_ATTACH_NO_WAIT : of_action[o->action];
}

/* An option as getopt gave it, kept until the mode is known. */
struct given {
	int c, idx;
	const char *arg;
};

/*
 * The first pass: every option read, the mode chosen (the actions, and
 * --no-wait), no value taken; --help, --version and the lists answer at
 * once.  Returns how many were read into *GIVEN (of *CAP, grown: "-qqq"
 * is three in one word).
 */
static size_t read_options(int argc, char **argv, struct opts *o, struct given **given, size_t *cap)
{
	size_t n = 0;
	int c, idx;

	opterr = 0;
	/* "+": options end at the command, so its own options are left alone. */
	while ((c = getopt_long(argc, argv, "+hVq", all_opts, &idx)) != -1) {
		if (c == '?' || c == ':')
			unknown_option(argv[optind - 1], optopt);
		if (c < 256)
			for (idx = 0; specs[idx].val != c; idx++)
				;
		switch (c) {
		case 'h': case 'V': case O_LIST_OPTIONS: case O_LIST_KNOBS:
			take_option(o, c, idx, optarg);
			break;
		case O_ESTIMATE: set_action(o, ACT_ESTIMATE, "--estimate"); break;
		case O_COMBINE: set_action(o, ACT_COMBINE, "--combine"); break;
		case O_PROFILE: set_action(o, ACT_PROFILE, "--profile"); break;
		case O_STATUS: set_action(o, ACT_STATUS, "--status"); break;
		case O_RESTORE: set_action(o, ACT_RESTORE, "--restore"); break;
		case O_DAEMON: set_action(o, ACT_DAEMON, "--daemon"); break;
		case O_ATTACH: set_action(o, ACT_ATTACH, "--attach"); break;
		case O_DETACH: set_action(o, ACT_DETACH, "--detach"); break;
		case O_CHECK_CONFIG: set_action(o, ACT_CHECK_CONFIG, "--check-config"); break;
		case O_NO_WAIT: o->no_wait = true; break;
		}
		*given = xgrow(*given, cap, n + 1, sizeof **given);
		(*given)[n++] = (struct given){ c, idx, optarg };
	}
	return n;
}

char **options_parse(int argc, char **argv, struct opts *o)
{
	/* Kept for the next call: die() may end a parse (the fuzzer's goes on). */
	static struct given *given;
	static size_t cap;
	enum cli_mode mode;
	char **cmd;
	size_t n;

	memset(o, 0, sizeof *o);
	o->interval = 1.0;
	build_table();
	n = read_options(argc, argv, o, &given, &cap);
	cmd = argv + optind;
	/* Each option is the chosen mode's, or refused before any value is read. */
	mode = cli_mode_of(o);
	for (size_t i = 0; i < n; i++)
		option_check_mode(specs, &specs[given[i].idx], mode);
	for (size_t i = 0; i < n; i++)
		take_option(o, given[i].c, given[i].idx, given[i].arg);
	options_check_rules(o, cmd);
	return cmd;
}
