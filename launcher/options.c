/*
 * options.c: ksm-run's options.  Everything that can be refused is refused
 * here, before any knob is written or the command started: values by the
 * same parsers that the library and the knobs use, combinations by the
 * rules of each mode.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/msg.h"
#include "common/parse.h"
#include "host/knobs.h"
#include "host/metrics.h"
#include "ksmenable.h"
#include "nearest.h"
#include "options.h"
#include "options_attach.h"
#include "options_fleet.h"

enum {
	O_MODE = 256, O_ALLOW, O_DENY, O_MIN_SIZE, O_RESCAN, O_LOG, O_NO_INHERIT, O_PRELOAD,
	O_NO_PRELOAD, O_SET, O_NO_TUNE, O_KEEP, O_STRICT, O_REPORT_FILE, O_JSON, O_INTERVAL,
	O_STATUS, O_RESTORE, O_ALIAS, O_ESTIMATE, O_SETTLE, O_PROFILE, O_THRESHOLD,
	O_LIST_OPTIONS, O_LIST_KNOBS, O_DAEMON, O_TAKE_OVER, O_STEADY, O_MAX_CPU, O_MIN_PROFIT,
	O_REPORT_ALL, O_METRICS_FILE, O_WATCH, O_END_SURVIVORS, O_FINGERPRINT, O_LABEL, O_SAMPLE,
	O_FP_FORMAT, O_FP_PER_CGROUP, O_FP_KEY, O_COMBINE, O_MATRIX, O_ATTACH, O_DETACH, O_NO_WAIT,
	O_STOP_BUDGET,
};

/* --watch's interval when it is given without one. */
#define WATCH_DEFAULT_S 2.0

/* Aliases for --set NAME=VALUE: the option name with '-' for '_'. */
static const char *const aliases[] = {
	"pages-to-scan", "sleep-millisecs", "smart-scan", "advisor",
	"advisor-target-scan-time", "advisor-max-cpu", "advisor-min-pages-to-scan",
	"advisor-max-pages-to-scan", "max-page-sharing", "use-zero-pages", "merge-across-nodes",
};
#define NALIAS (int)(sizeof aliases / sizeof aliases[0])

static const struct option base_opts[] = {
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	{ "quiet", no_argument, NULL, 'q' },
	{ "mode", required_argument, NULL, O_MODE },
	{ "allow", required_argument, NULL, O_ALLOW },
	{ "deny", required_argument, NULL, O_DENY },
	{ "min-size", required_argument, NULL, O_MIN_SIZE },
	{ "rescan-ms", required_argument, NULL, O_RESCAN },
	{ "log", required_argument, NULL, O_LOG },
	{ "no-inherit", no_argument, NULL, O_NO_INHERIT },
	{ "preload", required_argument, NULL, O_PRELOAD },
	{ "no-preload", no_argument, NULL, O_NO_PRELOAD },
	{ "set", required_argument, NULL, O_SET },
	{ "no-tune", no_argument, NULL, O_NO_TUNE },
	{ "keep-knobs", no_argument, NULL, O_KEEP },
	{ "strict", no_argument, NULL, O_STRICT },
	{ "report-file", required_argument, NULL, O_REPORT_FILE },
	{ "json", no_argument, NULL, O_JSON },
	{ "report-all", no_argument, NULL, O_REPORT_ALL },
	{ "end-survivors", no_argument, NULL, O_END_SURVIVORS },
	{ "interval", required_argument, NULL, O_INTERVAL },
	{ "status", no_argument, NULL, O_STATUS },
	{ "watch", optional_argument, NULL, O_WATCH },
	{ "restore", no_argument, NULL, O_RESTORE },
	{ "estimate", required_argument, NULL, O_ESTIMATE },
	{ "attach", required_argument, NULL, O_ATTACH },
	{ "detach", required_argument, NULL, O_DETACH },
	{ "no-wait", no_argument, NULL, O_NO_WAIT },
	{ "stop-budget", required_argument, NULL, O_STOP_BUDGET },
	{ "settle", required_argument, NULL, O_SETTLE },
	{ "fingerprint", required_argument, NULL, O_FINGERPRINT },
	{ "label", required_argument, NULL, O_LABEL },
	{ "sample", required_argument, NULL, O_SAMPLE },
	{ "fingerprint-format", required_argument, NULL, O_FP_FORMAT },
	{ "fingerprint-per-cgroup", required_argument, NULL, O_FP_PER_CGROUP },
	{ "fingerprint-key", required_argument, NULL, O_FP_KEY },
	{ "combine", no_argument, NULL, O_COMBINE },
	{ "matrix", no_argument, NULL, O_MATRIX },
	{ "profile", no_argument, NULL, O_PROFILE },
	{ "threshold", required_argument, NULL, O_THRESHOLD },
	{ "daemon", no_argument, NULL, O_DAEMON },
	{ "take-over", no_argument, NULL, O_TAKE_OVER },
	{ "steady", required_argument, NULL, O_STEADY },
	{ "max-cpu", required_argument, NULL, O_MAX_CPU },
	{ "min-profit", required_argument, NULL, O_MIN_PROFIT },
	{ "metrics-file", required_argument, NULL, O_METRICS_FILE },
	{ "list-options", no_argument, NULL, O_LIST_OPTIONS },
	{ "list-knobs", no_argument, NULL, O_LIST_KNOBS },
};
#define NBASE (int)(sizeof base_opts / sizeof base_opts[0])
#define NALL (NBASE + NALIAS)

static struct option all_opts[NALL + 1];

static void usage(FILE *f)
{
	fprintf(f,
"Usage: ksm-run [OPTION]... [--] COMMAND [ARG]...\n"
"       ksm-run --estimate=TARGET [--settle=SECONDS] [--allow=LIST] [--deny=LIST] [--json]\n"
"       ksm-run --estimate=TARGET [--label=NAME] --fingerprint=FILE [--estimate=...]...\n"
"               [--sample=N] [--fingerprint-format=binary|tsv] [--fingerprint-per-cgroup=DIR]\n"
"               [--fingerprint-key=FILE]\n"
"       ksm-run --combine [--matrix] [--json] FILE...\n"
"       ksm-run --profile [OPTION]... [--] COMMAND [ARG]...\n"
"       ksm-run --attach=TARGET [--no-wait] [--allow=LIST] [--deny=LIST] [--min-size=SIZE]\n"
"       ksm-run --detach=TARGET [--allow=LIST] [--deny=LIST] [--min-size=SIZE]\n"
"       ksm-run --daemon [--take-over] [--steady=S] [--max-cpu=PCT] [--min-profit=SIZE]\n"
"                        [--metrics-file=PATH]\n"
"       ksm-run --status [--json] [--watch[=SECONDS]] | --restore | --help | --version\n"
"Run COMMAND with kernel samepage merging (KSM) enabled, tune ksmd while it\n"
"runs, restore the knobs afterwards and report the memory saved.\n"
"\n"
"Enabling (passed to libksmenable.so as KSM_ENABLE_*):\n"
"  --mode=auto|prctl|madvise|off   how the library enables KSM (default auto)\n"
"  --allow=LIST, --deny=LIST       selectors: all heap stack anon anon:GLOB file:GLOB\n"
"  --min-size=SIZE                 smallest region to advise (e.g. 64K)\n"
"  --rescan-ms=N                   rescan period for new regions (0: off)\n"
"  --log=quiet|error|warn|info|debug\n"
"  --no-inherit                    programs the command runs do not load the library\n"
"  --preload=PATH                  use this library; --no-preload: prctl only\n"
"Global knobs (root; restored when the command ends):\n"
"  --set NAME=VALUE                any writable file in /sys/kernel/mm/ksm\n"
"  --pages-to-scan=N --sleep-millisecs=N --smart-scan=0|1 --advisor=none|scan-time\n"
"  --advisor-target-scan-time=S --advisor-max-cpu=PCT --advisor-min-pages-to-scan=N\n"
"  --advisor-max-pages-to-scan=N --max-page-sharing=N --use-zero-pages=0|1\n"
"  --merge-across-nodes=0|1\n"
"  --no-tune       no default tuning (only run=1 when KSM is off)\n"
"  --keep-knobs    leave the knobs as set when the command ends\n"
"  --strict        a knob that cannot be written, or an unknown KSM_ENABLE_*\n"
"                  name in the environment, is an error (exit 125)\n"
"  --take-over     keep tuning when another manager (ksmtuned, tuned) writes\n"
"                  the knobs; by default ksm-run says so and stops writing\n"
"  --restore       put back knobs left by a ksm-run that was killed\n"
"Report (when the command ends; on stderr, amid the command's own output):\n"
"  --report-file=PATH  append it there instead: do so with --json, to parse it\n"
"  --json  -q, --quiet  --interval=SECONDS (default 1)\n"
"  --report-all    list every process of the tree, also those that merged under 64 KiB\n"
"  --end-survivors when the command ends, TERM its tree's processes still running\n"
"                  (KILL after 5 s); by default they go on\n"
"  --metrics-file=PATH  write the figures for Prometheus (node_exporter's\n"
"                  textfile collector) every interval, atomically\n"
"  --status        KSM state, kernel support, top merging processes, per cgroup\n"
"  --watch[=SECONDS]  with --status: refresh every SECONDS (2) like top(1);\n"
"                  without a terminal, one JSON line each time\n"
"The machine's tuner (one per machine; ksm-run instances under it do not tune):\n"
"  --daemon        run no command: tune ksmd for the whole machine until\n"
"                  TERM or INT, then restore the knobs\n"
"  --steady=S      in the steady phase, one full scan every S seconds (20)\n"
"  --max-cpu=PCT   hold ksmd under PCT%% of one core (50; 0: no ceiling)\n"
"  --min-profit=SIZE  slow to the minimum when less than SIZE is saved per\n"
"                  percent of a core that ksmd uses, for 5 minutes (16M; 0: never)\n"
"Processes that already run (x86_64; root, or their user where ptrace is allowed):\n"
"  --attach=TARGET     enable KSM in them from outside, then follow them like a\n"
"                      command until they end or INT/TERM; TARGET: PID[,PID]...\n"
"                      or cgroup:PATH.  Process-wide (the prctl) by default; with\n"
"                      --allow, --deny or --min-size: madvise of the regions chosen now\n"
"  --no-wait           with --attach: enable, print the result and exit\n"
"  --stop-budget=SECONDS  the longest a target should be stopped at once (0.01)\n"
"  --detach=TARGET     the reverse: the prctl off (which unmerges), or\n"
"                      MADV_UNMERGEABLE on the regions chosen\n"
"Evaluating a workload:\n"
"  --estimate=TARGET   predict the savings of running processes without KSM;\n"
"                      TARGET: PID[,PID]..., all, or cgroup:PATH\n"
"  --settle=SECONDS    with --estimate: two passes; pages that change are volatile\n"
"  --fingerprint=FILE  with --estimate: also write the content fingerprint of the\n"
"                      TARGET before it (each --estimate is a target apart)\n"
"  --label=NAME        the name of the --estimate before it, in its fingerprint\n"
"  --fingerprint-per-cgroup=DIR  one fingerprint per cgroup of the targets\n"
"  --sample=N          keep the contents whose hash is 0 modulo N (default 1)\n"
"  --fingerprint-format=binary|tsv  binary (default), or text for SQL engines\n"
"  --fingerprint-key=FILE  the fleet's key of the fingerprints (made if missing;\n"
"                      default: ksm-run-fleet.key beside the first fingerprint)\n"
"  --combine FILE...   what KSM would save if the fingerprints' workloads ran\n"
"                      on one host, and the gain of putting them together\n"
"  --matrix            with --combine: the gain of every pair of fingerprints\n"
"  --profile           run COMMAND with all memory mergeable and recommend an\n"
"                      allow list from what merged\n"
"  --threshold=PCT     with --profile: keep this share of the merged memory (95)\n"
"Exit status: the command's; 125 ksm-run failed; 126 COMMAND cannot run;\n"
"127 COMMAND not found; --attach, --detach: 0 all handled, 1 some refused;\n"
"the command's signal is re-raised.\n");
}

/* The option table: the base options, then the knob aliases. */
static void build_table(void)
{
	memcpy(all_opts, base_opts, sizeof base_opts);
	for (int i = 0; i < NALIAS; i++)
		all_opts[NBASE + i] = (struct option){ aliases[i], required_argument, NULL, O_ALIAS };
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

static void add_knob(struct opts *o, const char *name, const char *value)
{
	char why[256];

	if (knob_validate(name, value, why, sizeof why))
		die("%s", why);
	if (knob_is_rate(name))
		o->user_rate = true;
	knob_put(&o->knobs, name, value);
}

static void set_knob_option(struct opts *o, const char *arg)
{
	char name[KNOB_NAME_MAX];
	const char *eq = strchr(arg, '=');

	if (!eq || eq == arg || (size_t)(eq - arg) >= sizeof name)
		die("--set %s: expected NAME=VALUE", arg);
	snprintf(name, sizeof name, "%.*s", (int)(eq - arg), arg);
	add_knob(o, name, eq + 1);
}

static void alias_option(struct opts *o, const char *alias, const char *value)
{
	char name[KNOB_NAME_MAX];

	snprintf(name, sizeof name, "%s", strcmp(alias, "advisor") ? alias : "advisor-mode");
	for (char *p = name; *p; p++)
		if (*p == '-')
			*p = '_';
	add_knob(o, name, value);
}

static double seconds_option(const char *opt, const char *s, double lo, double hi)
{
	double v;

	if (parse_double(s, lo, hi, &v))
		die("--%s=%s: not a number of seconds in %g..%g", opt, s, lo, hi);
	return v;
}

static void metrics_file_option(struct opts *o, const char *arg)
{
	char why[PATH_MAX + 128];

	if (metrics_check_path(arg, why, sizeof why))
		die("--metrics-file=%s: %s (accepted: a file in an existing directory, such as "
		    "node_exporter's textfile directory)", arg, why);
	o->metrics_file = arg;
}

static void list_options(void)
{
	for (int i = 0; all_opts[i].name; i++)
		printf("--%s%s\n", all_opts[i].name, all_opts[i].has_arg ? "=" : "");
}

static void list_knobs(void)
{
	for (int i = 0; knob_known_name(i); i++)
		printf("%s\n", knob_known_name(i));
}

static void set_action(struct opts *o, enum action a, const char *opt)
{
	if (o->action != ACT_RUN && o->action != a)
		die("%s cannot be combined with --estimate, --combine, --profile, --status, --restore, "
		    "--daemon, --attach or --detach", opt);
	o->action = a;
}

static void take_option(struct opts *o, int c, int idx, const char *arg)
{
	/* A value given on the command line must say something. */
	if (arg && !*arg)
		die("option '--%s' needs a value, not an empty one (see --help)", all_opts[idx].name);
	switch (c) {
	case 'h': usage(stdout); exit(0);
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
	case O_ESTIMATE:
		set_action(o, ACT_ESTIMATE, "--estimate");
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
	case O_COMBINE: set_action(o, ACT_COMBINE, "--combine"); break;
	case O_MATRIX: o->matrix = true; break;
	case O_SETTLE: o->settle = seconds_option("settle", arg, 0.1, 3600); break;
	case O_PROFILE: set_action(o, ACT_PROFILE, "--profile"); break;
	case O_ATTACH: set_action(o, ACT_ATTACH, "--attach"); o->attach = arg; break;
	case O_DETACH: set_action(o, ACT_DETACH, "--detach"); o->attach = arg; break;
	case O_NO_WAIT: o->no_wait = true; break;
	case O_STOP_BUDGET: o->stop_budget = seconds_option("stop-budget", arg, 0.0001, 1); break;
	case O_THRESHOLD:
		if (parse_double(arg, 0, 100, &o->threshold) || o->threshold <= 0)
			die("--threshold=%s: not a percentage in (0, 100]", arg);
		break;
	case O_STATUS: set_action(o, ACT_STATUS, "--status"); break;
	case O_RESTORE: set_action(o, ACT_RESTORE, "--restore"); break;
	case O_DAEMON: set_action(o, ACT_DAEMON, "--daemon"); break;
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
	case O_LIST_OPTIONS: list_options(); exit(0);
	case O_LIST_KNOBS: list_knobs(); exit(0);
	}
}

/* The evaluation modes' own rules. */
static void check_evaluation(struct opts *o, char **cmd)
{
	if (o->settle && o->action != ACT_ESTIMATE)
		die("--settle goes with --estimate");
	if (o->threshold && o->action != ACT_PROFILE)
		die("--threshold goes with --profile");
	if (o->action == ACT_ESTIMATE && *cmd)
		die("--estimate reads running processes and takes no command ('%s')", cmd[0]);
	if (o->action == ACT_PROFILE) {
		if (o->mode && strcmp(o->mode, "prctl"))
			die("--profile runs the command with all of its memory mergeable (prctl); "
			    "it cannot take --mode=%s", o->mode);
		if (o->allow || o->deny || o->min_size)
			die("--profile merges all memory to find what merges; --allow, --deny and "
			    "--min-size are for the run that follows its advice");
		o->mode = "prctl";
		if (!o->threshold)
			o->threshold = 95;
	}
}

/*
 * --daemon runs no command and tunes the rate itself: everything for a
 * command, and a rate of the user's, is refused; its own options need it.
 */
static void check_daemon(const struct opts *o, char **cmd)
{
	static const struct { size_t off; const char *name; } command_only[] = {
		{ offsetof(struct opts, mode), "--mode" }, { offsetof(struct opts, allow), "--allow" },
		{ offsetof(struct opts, deny), "--deny" }, { offsetof(struct opts, min_size), "--min-size" },
		{ offsetof(struct opts, rescan), "--rescan-ms" }, { offsetof(struct opts, log), "--log" },
		{ offsetof(struct opts, preload), "--preload" }, { offsetof(struct opts, report_file), "--report-file" },
	};

	if (o->action != ACT_DAEMON) {
		if (o->steady || o->max_cpu_given || o->min_profit_given)
			die("--steady, --max-cpu and --min-profit go with --daemon");
		return;
	}
	if (*cmd)
		die("--daemon runs no command ('%s'): it tunes ksmd for the whole machine; "
		    "run commands with `ksm-run -- COMMAND` beside it", cmd[0]);
	for (size_t i = 0; i < sizeof command_only / sizeof command_only[0]; i++)
		if (*(const char *const *)((const char *)o + command_only[i].off))
			die("%s is for a command's run, not --daemon", command_only[i].name);
	if (o->no_inherit || o->no_preload || o->json || o->quiet || o->report_all || o->end_survivors)
		die("--no-inherit, --no-preload, --json, --quiet, --report-all and --end-survivors are for a "
		    "command's run, not --daemon");
	if (o->no_tune || o->keep)
		die("--daemon tunes and restores the knobs at its end: it cannot take --no-tune or --keep-knobs");
	if (o->user_rate)
		die("--daemon sets the scan rate itself (pages_to_scan, sleep_millisecs, advisor_*): "
		    "use --steady, --max-cpu and --min-profit, or --set for the other knobs");
}

/* --metrics-file is the daemon's or a command's; --watch is --status's. */
static void check_host_figures(const struct opts *o)
{
	if (o->watch && o->action != ACT_STATUS)
		die("--watch goes with --status (ksm-run --status --watch[=SECONDS])");
	if (o->metrics_file && o->action != ACT_DAEMON && o->action != ACT_RUN && o->action != ACT_PROFILE &&
	    o->action != ACT_ATTACH)
		die("--metrics-file goes with --daemon or a command's run (ksm-run --metrics-file=PATH -- COMMAND), "
		    "not --estimate, --status or --restore");
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
 * The library's settings as the library will see them: an option, else the
 * variable already in the environment.  Messages name whichever it was.
 */
static const struct { const char *var, *option; size_t off; } setting_options[] = {
	{ "KSM_ENABLE_MODE", "--mode", offsetof(struct opts, mode) },
	{ "KSM_ENABLE_ALLOW", "--allow", offsetof(struct opts, allow) },
	{ "KSM_ENABLE_DENY", "--deny", offsetof(struct opts, deny) },
	{ "KSM_ENABLE_MIN_SIZE", "--min-size", offsetof(struct opts, min_size) },
	{ "KSM_ENABLE_RESCAN_MS", "--rescan-ms", offsetof(struct opts, rescan) },
	{ "KSM_ENABLE_LOG", "--log", offsetof(struct opts, log) },
};

static const char *option_for(const struct opts *o, const char *var, const char **option)
{
	if (!strcmp(var, "KSM_ENABLE_INHERIT") && o->no_inherit) {
		*option = "--no-inherit";
		return "0";
	}
	for (size_t i = 0; i < sizeof setting_options / sizeof setting_options[0]; i++) {
		const char *v = *(const char *const *)((const char *)o + setting_options[i].off);
		if (!strcmp(var, setting_options[i].var) && v) {
			*option = setting_options[i].option;
			return v;
		}
	}
	return NULL;
}

static const char *setting_get(void *ctx, const char *var)
{
	const struct opts *o = ctx;
	const char *option, *v = option_for(o, var, &option);

	/* --attach and --detach judge other processes: ksm-run's own environment is not theirs. */
	if (o->action == ACT_ATTACH || o->action == ACT_DETACH)
		return v;
	return v ? v : getenv(var);
}

static const char *setting_name(void *ctx, const char *var)
{
	const char *option;

	return option_for(ctx, var, &option) ? option : var;
}

extern char **environ;

/* A KSM_ENABLE_* name in the environment that the library does not know. */
static void unknown_variable(void *ctx, const char *name, size_t len, const char *nearest)
{
	const char *strict = ctx;
	char near[96] = "";

	if (nearest)
		snprintf(near, sizeof near, " (did you mean %s?)", nearest);
	if (strict)
		die("%s: %.*s in the environment is not a variable of the library%s; nothing was run",
		    strict, (int)len, name, near);
	msg("warning: %.*s in the environment is not a variable of the library%s; "
	    "--strict makes this an error", (int)len, name, near);
}

static void check_library_settings(struct opts *o)
{
	struct config_source src = { setting_get, setting_name, o };
	char why[1024];

	if (config_load(&o->lib, &src, why, sizeof why))
		die("%s", why);
	/* The command inherits ksm-run's environment, so a typo there is the command's. */
	if (o->action == ACT_RUN || o->action == ACT_PROFILE)
		config_unknown_variables(environ, unknown_variable,
					 o->strict ? "--strict" : o->lib.strict ? "KSM_ENABLE_STRICT=1" : NULL);
}

char **options_parse(int argc, char **argv, struct opts *o)
{
	char **cmd;
	int c, idx;

	memset(o, 0, sizeof *o);
	o->interval = 1.0;
	build_table();
	opterr = 0;
	/* "+": options end at the command, so its own options are left alone. */
	while ((c = getopt_long(argc, argv, "+hVq", all_opts, &idx)) != -1) {
		if (c == '?' || c == ':')
			unknown_option(argv[optind - 1], optopt);
		if (c < 256)
			idx = 0;
		take_option(o, c, idx, optarg);
	}
	cmd = argv + optind;
	if (o->no_wait && o->action != ACT_ATTACH)
		die("--no-wait goes with --attach (--detach never waits)");
	if (o->stop_budget > 0 && o->action != ACT_ATTACH && o->action != ACT_DETACH)
		die("--stop-budget=%g goes with --attach and --detach", o->stop_budget);
	check_host_figures(o);
	fleet_check(&o->fp, &(struct fleet_mode){
		.estimate = o->action == ACT_ESTIMATE, .combine = o->action == ACT_COMBINE,
		.matrix = o->matrix, .format_given = o->fp_format_given,
		.estimate_options = o->allow || o->deny || o->settle }, cmd);
	check_evaluation(o, cmd);
	check_daemon(o, cmd);
	if (o->action == ACT_RUN || o->action == ACT_PROFILE) {
		if (!*cmd)
			die("no command given (see --help)");
		check_knob_combination(o);
		check_library_settings(o);
	}
	if (o->action == ACT_ATTACH || o->action == ACT_DETACH) {
		o->mode = attach_check(&(struct attach_request){
			.detach = o->action == ACT_DETACH, .target = o->attach, .no_wait = o->no_wait,
			.mode = o->mode, .selection = o->allow || o->deny || o->min_size,
			.library_options = o->preload || o->no_preload || o->no_inherit || o->rescan ||
					   o->log || o->end_survivors,
			.knob_options = o->knobs.n || o->no_tune || o->keep || o->strict || o->take_over ||
					o->report_file || o->report_all || o->metrics_file,
			.quiet = o->quiet }, cmd);
		check_knob_combination(o);
		check_library_settings(o);
	}
	return cmd;
}
