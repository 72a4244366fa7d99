/*
 * main.c: ksm-run's options and the order of its work.  Everything that can
 * be refused is checked before any knob is written or the command started.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stddef.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "estimate.h"
#include "ksmrun.h"
#include "profile.h"
#include "selector.h"

#ifndef KSMENABLE_VERSION
#define KSMENABLE_VERSION "0.1.0"
#endif

enum {
	O_MODE = 256, O_ALLOW, O_DENY, O_MIN_SIZE, O_RESCAN, O_LOG, O_NO_INHERIT, O_PRELOAD,
	O_NO_PRELOAD, O_SET, O_NO_TUNE, O_KEEP, O_STRICT, O_REPORT_FILE, O_JSON, O_INTERVAL,
	O_STATUS, O_RESTORE, O_ALIAS, O_ESTIMATE, O_SETTLE, O_PROFILE, O_THRESHOLD,
	O_LIST_OPTIONS, O_LIST_KNOBS,
};

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
	{ "interval", required_argument, NULL, O_INTERVAL },
	{ "status", no_argument, NULL, O_STATUS },
	{ "restore", no_argument, NULL, O_RESTORE },
	{ "estimate", required_argument, NULL, O_ESTIMATE },
	{ "settle", required_argument, NULL, O_SETTLE },
	{ "profile", no_argument, NULL, O_PROFILE },
	{ "threshold", required_argument, NULL, O_THRESHOLD },
	{ "list-options", no_argument, NULL, O_LIST_OPTIONS },
	{ "list-knobs", no_argument, NULL, O_LIST_KNOBS },
};
#define NBASE (int)(sizeof base_opts / sizeof base_opts[0])

static void usage(FILE *f)
{
	fprintf(f,
"Usage: ksm-run [OPTION]... [--] COMMAND [ARG]...\n"
"       ksm-run --estimate=TARGET [--settle=SECONDS] [--allow=LIST] [--deny=LIST] [--json]\n"
"       ksm-run --profile [OPTION]... [--] COMMAND [ARG]...\n"
"       ksm-run --status | --restore | --help | --version\n"
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
"  --strict        a knob that cannot be written is an error (exit 125)\n"
"  --restore       put back knobs left by a ksm-run that was killed\n"
"Report (on stderr when the command ends):\n"
"  --report-file=PATH  --json  -q, --quiet  --interval=SECONDS (default 1)\n"
"  --status        KSM state, kernel support, top merging processes\n"
"Evaluating a workload:\n"
"  --estimate=TARGET   predict the savings of running processes without KSM;\n"
"                      TARGET: PID[,PID]..., all, or cgroup:PATH\n"
"  --settle=SECONDS    with --estimate: two passes; pages that change are volatile\n"
"  --profile           run COMMAND with all memory mergeable and recommend an\n"
"                      allow list from what merged\n"
"  --threshold=PCT     with --profile: keep this share of the merged memory (95)\n"
"Exit status: the command's; 125 ksm-run failed; 126 COMMAND cannot run;\n"
"127 COMMAND not found; the command's signal is re-raised.\n");
}

struct opts {
	const char *mode, *allow, *deny, *min_size, *rescan, *log, *preload, *report_file;
	const char *estimate;
	bool no_inherit, no_preload, no_tune, keep, strict, json, quiet, status, restore, profile;
	double interval, settle, threshold;
	bool user_rate;
	struct knob_set knobs;
};

/* The library's own parsers judge what the library will be given. */
static void check_selectors(const char *opt, const char *list)
{
	struct selector_list l;
	char why[512];

	if (selector_parse(&l, list, why, sizeof why))
		die("--%s=%s: %s", opt, list, why);
}

static void check_size(const char *s)
{
	unsigned long v;

	if (parse_size(s, &v))
		die("--min-size=%s: not a size (a whole number of bytes, with an optional K, M or G suffix)", s);
}

/* A number of seconds within [LO, HI], for --interval and --settle. */
static double parse_seconds(const char *opt, const char *s, double lo, double hi)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || *end || end == s || !(v >= lo && v <= hi))
		die("--%s=%s: not a number of seconds in %g..%g", opt, s, lo, hi);
	return v;
}

static char *option_value(const char *name);
static const struct opts *parsed;

/*
 * The settings as the library will read them: an option, else the
 * variable already in the environment.  Refused here, they would make the
 * library enable nothing.
 */
static void check_library_settings(const struct opts *o)
{
	struct config c;
	char why[1024];

	parsed = o;
	if (config_load(&c, option_value, why, sizeof why))
		die("the library would refuse its settings: %s", why);
	config_free(&c);
}

static void add_knob(struct opts *o, const char *name, const char *value)
{
	char why[256];

	if (knob_validate(name, value, why, sizeof why))
		die("%s", why);
	if (!strcmp(name, "pages_to_scan") || !strcmp(name, "sleep_millisecs") ||
	    !strncmp(name, "advisor_", 8))
		o->user_rate = true;
	knob_put(&o->knobs, name, value);
}

static char **parse(int argc, char **argv, struct opts *o)
{
	struct option all[NBASE + NALIAS + 1];
	long long n;
	int c, idx;

	memcpy(all, base_opts, sizeof base_opts);
	for (int i = 0; i < NALIAS; i++)
		all[NBASE + i] = (struct option){ aliases[i], required_argument, NULL, O_ALIAS };
	memset(&all[NBASE + NALIAS], 0, sizeof all[0]);
	o->interval = 1.0;
	opterr = 0;
	/* "+": options end at the command, so its own options are left alone. */
	while ((c = getopt_long(argc, argv, "+hVq", all, &idx)) != -1) {
		switch (c) {
		case 'h': usage(stdout); exit(0);
		case 'V': printf("ksm-run %s\n", KSMENABLE_VERSION); exit(0);
		case 'q': o->quiet = true; break;
		case O_MODE:
			if (strcmp(optarg, "auto") && strcmp(optarg, "prctl") && strcmp(optarg, "madvise") &&
			    strcmp(optarg, "off"))
				die("--mode=%s: not auto, prctl, madvise or off", optarg);
			o->mode = optarg;
			break;
		case O_ALLOW: check_selectors("allow", optarg); o->allow = optarg; break;
		case O_DENY: check_selectors("deny", optarg); o->deny = optarg; break;
		case O_MIN_SIZE: check_size(optarg); o->min_size = optarg; break;
		case O_RESCAN:
			if (parse_ll(optarg, 0, RESCAN_MS_MAX, &n) || (n > 0 && n < RESCAN_MS_MIN))
				die("--rescan-ms=%s: not a rescan period (0 for none, or %d to %d milliseconds)",
				    optarg, RESCAN_MS_MIN, RESCAN_MS_MAX);
			o->rescan = optarg;
			break;
		case O_LOG:
			if (strcmp(optarg, "quiet") && strcmp(optarg, "error") && strcmp(optarg, "warn") &&
			    strcmp(optarg, "info") && strcmp(optarg, "debug"))
				die("--log=%s: not quiet, error, warn, info or debug", optarg);
			o->log = optarg;
			break;
		case O_NO_INHERIT: o->no_inherit = true; break;
		case O_PRELOAD: o->preload = optarg; break;
		case O_NO_PRELOAD: o->no_preload = true; break;
		case O_SET: {
			char name[KNOB_NAME_MAX], *eq = strchr(optarg, '=');
			if (!eq || eq == optarg || (size_t)(eq - optarg) >= sizeof name)
				die("--set %s: expected NAME=VALUE", optarg);
			snprintf(name, sizeof name, "%.*s", (int)(eq - optarg), optarg);
			add_knob(o, name, eq + 1);
			break;
		}
		case O_ALIAS: {
			char name[KNOB_NAME_MAX];
			const char *a = all[idx].name;
			snprintf(name, sizeof name, "%s", strcmp(a, "advisor") ? a : "advisor-mode");
			for (char *p = name; *p; p++)
				if (*p == '-')
					*p = '_';
			add_knob(o, name, optarg);
			break;
		}
		case O_NO_TUNE: o->no_tune = true; break;
		case O_KEEP: o->keep = true; break;
		case O_STRICT: o->strict = true; break;
		case O_REPORT_FILE: o->report_file = optarg; break;
		case O_JSON: o->json = true; break;
		case O_INTERVAL: o->interval = parse_seconds("interval", optarg, 0.1, 3600); break;
		case O_ESTIMATE: o->estimate = optarg; break;
		case O_SETTLE: o->settle = parse_seconds("settle", optarg, 0.1, 3600); break;
		case O_PROFILE: o->profile = true; break;
		case O_THRESHOLD: {
			char *end;
			errno = 0;
			o->threshold = strtod(optarg, &end);
			if (errno || *end || end == optarg || !(o->threshold > 0 && o->threshold <= 100))
				die("--threshold=%s: not a percentage in (0, 100]", optarg);
			break;
		}
		case O_STATUS: o->status = true; break;
		case O_RESTORE: o->restore = true; break;
		case O_LIST_OPTIONS:
			/* For shell completion: "--name=" when it takes a value. */
			for (int i = 0; all[i].name; i++)
				printf("--%s%s\n", all[i].name, all[i].has_arg ? "=" : "");
			exit(0);
		case O_LIST_KNOBS:
			/* The knobs ksm-run knows, in the order it writes them. */
			for (int i = 0; knob_known_name(i); i++)
				printf("%s\n", knob_known_name(i));
			exit(0);
		default:
			if (optopt && optopt < 256)
				die("unknown option '-%c' (see --help)", optopt);
			die("unknown or incomplete option '%s' (see --help)", argv[optind - 1]);
		}
	}
	return argv + optind;
}

static char *option_value(const char *name)
{
	static const struct { const char *var; size_t off; } map[] = {
		{ "KSM_ENABLE_MODE", offsetof(struct opts, mode) },
		{ "KSM_ENABLE_ALLOW", offsetof(struct opts, allow) },
		{ "KSM_ENABLE_DENY", offsetof(struct opts, deny) },
		{ "KSM_ENABLE_MIN_SIZE", offsetof(struct opts, min_size) },
		{ "KSM_ENABLE_RESCAN_MS", offsetof(struct opts, rescan) },
		{ "KSM_ENABLE_LOG", offsetof(struct opts, log) },
	};
	size_t i;

	if (!strcmp(name, "KSM_ENABLE_INHERIT") && parsed->no_inherit)
		return "0";
	for (i = 0; i < sizeof map / sizeof map[0]; i++) {
		const char *v = *(const char *const *)((const char *)parsed + map[i].off);
		if (!strcmp(name, map[i].var) && v)
			return (char *)v;
	}
	return getenv(name);
}

/* The evaluation modes' own rules, before anything runs. */
static void check_evaluation_options(struct opts *o, char **cmd)
{
	if (o->settle && !o->estimate)
		die("--settle goes with --estimate");
	if (o->threshold && !o->profile)
		die("--threshold goes with --profile");
	if (o->estimate && (o->profile || o->status || o->restore))
		die("--estimate cannot be combined with --profile, --status or --restore");
	if (o->estimate && *cmd)
		die("--estimate reads running processes and takes no command ('%s')", cmd[0]);
	if (o->profile) {
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

/* The command's process tree, as the sampler knows it, for --profile. */
static void profile_tree(struct profile *p, const struct sampler *s)
{
	pid_t pids[4096];
	size_t n = 0;

	for (int i = 0; i < s->nprocs && n < sizeof pids / sizeof pids[0]; i++)
		pids[n++] = s->procs[i].pid;
	profile_sample(p, pids, n);
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

static void setenv_opt(const char *name, const char *value)
{
	if (value && setenv(name, value, 1))
		die("cannot set %s", name);
}

int main(int argc, char **argv)
{
	static struct opts o;
	static struct sampler s;
	static struct profile prof;
	struct knob_set want, in_force;
	struct tuner tuner = { 0 };
	struct child c;
	char lib[PATH_MAX], report_tmp[64] = "", val[KNOB_VALUE_MAX];
	const char *report_path = getenv("KSM_ENABLE_REPORT");
	bool have_lib = false, prctl_pre_exec, registered = false;
	int r;

	/* The exec probe of --status runs us again under this name. */
	if (argc == 1 && !strcmp(argv[0], "ksm-run-probe-exec"))
		return status_probe_exec_inherit();
	char **cmd = parse(argc, argv, &o);

	check_evaluation_options(&o, cmd);
	if (o.estimate) {
		struct estimate_opts eo = {
			.target = o.estimate, .allow = o.allow, .deny = o.deny,
			.settle = o.settle, .json = o.json, .output = o.report_file,
		};
		return estimate_main(&eo);
	}
	if (o.status)
		return status_main();
	if (o.restore)
		return state_restore_cmd();
	if (!*cmd)
		die("no command given (see --help)");
	check_knob_combination(&o);
	check_library_settings(&o);
	if (o.report_file) {
		int fd = open(o.report_file, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
		if (fd < 0)
			die("--report-file=%s: %s", o.report_file, strerror(errno));
		close(fd);
	}

	if (!o.no_preload) {
		have_lib = preload_find(o.preload, lib, sizeof lib) == 0;
		if (!have_lib && o.preload)
			exit(EXIT_OWN);
		if (!have_lib && (o.strict || (o.mode && !strcmp(o.mode, "madvise")) || o.allow || o.deny))
			die("libksmenable.so not found next to ksm-run, in ../lib or in %s (use --preload=PATH)",
			    KSMENABLE_LIBDIR);
		if (!have_lib)
			warnx_("libksmenable.so not found; only the prctl before exec enables KSM");
	}
	/* auto without lists means prctl in the library too. */
	prctl_pre_exec = o.mode ? !strcmp(o.mode, "prctl") :
		(!o.allow && !o.deny && !(getenv("KSM_ENABLE_ALLOW") || getenv("KSM_ENABLE_DENY")));

	/* From here on, the forwarded signals wait until the knobs are restored. */
	if ((r = child_prepare_signals()))
		die("cannot block signals: %s", strerror(-r));

	want = o.knobs;
	if (!o.user_rate && !o.no_tune)
		tune_default_knobs(&want, &tuner);
	if (!knob_lookup(&want, "run") && !knob_read("run", val, sizeof val) && strcmp(val, "1"))
		knob_put(&want, "run", "1");
	/* Only what differs is written; only that needs privilege. */
	struct knob_set todo = { 0 };
	for (int i = 0; i < want.n; i++)
		if (knob_read(want.k[i].name, val, sizeof val) || strcmp(val, want.k[i].value))
			knob_put(&todo, want.k[i].name, want.k[i].value);
	if (todo.n) {
		int bad = 0, err = 0;
		for (int i = 0; i < todo.n; i++)
			if (!knob_probe_writable(todo.k[i].name, &err)) {
				warnx_("cannot set %s=%s: %s%s", todo.k[i].name, todo.k[i].value,
				       strerror(err), knob_write_hint(todo.k[i].name, err));
				bad++;
			}
		if (bad && o.strict)
			die("--strict: %d knob%s cannot be written; nothing was run", bad, bad > 1 ? "s" : "");
		if (bad) {
			tuner.phase = 0;
		} else if (o.keep) {
			knobs_apply(&todo, NULL);
		} else {
			r = state_begin(&todo);
			registered = true;
			if (r && o.strict) {
				state_end();
				die("--strict: the knobs could not all be set; nothing was run");
			}
		}
	} else if (!o.keep && access(STATE_DIR "/state", F_OK) == 0 && access(STATE_DIR "/lock", W_OK) == 0) {
		/* A concurrent run set what we want: share its saved state. */
		if (!state_begin(&todo))
			registered = true;
	}

	if (!report_path && have_lib) {
		int fd;
		const char *tmp = getenv("TMPDIR");
		snprintf(report_tmp, sizeof report_tmp, "%s/ksm-run.XXXXXX",
			 tmp && *tmp && strlen(tmp) < 40 ? tmp : "/tmp");
		if ((fd = mkostemp(report_tmp, O_CLOEXEC)) >= 0) {
			/* Write-only for others: commands that drop privileges still report. */
			fchmod(fd, 0622);
			close(fd);
			report_path = report_tmp;
			setenv_opt("KSM_ENABLE_REPORT", report_path);
		} else {
			report_tmp[0] = '\0';
		}
	}
	setenv_opt("KSM_ENABLE_MODE", o.mode);
	setenv_opt("KSM_ENABLE_ALLOW", o.allow);
	setenv_opt("KSM_ENABLE_DENY", o.deny);
	setenv_opt("KSM_ENABLE_MIN_SIZE", o.min_size);
	setenv_opt("KSM_ENABLE_RESCAN_MS", o.rescan);
	setenv_opt("KSM_ENABLE_LOG", o.log);
	setenv_opt("KSM_ENABLE_INHERIT", o.no_inherit ? "0" : NULL);
	if (have_lib && preload_setenv(lib))
		warnx_("cannot set LD_PRELOAD; only the prctl before exec enables KSM");

	sample_init(&s, getpid(), have_lib ? lib : NULL, report_path);
	if ((r = child_start(&c, cmd, prctl_pre_exec))) {
		warn_errno(-r, "cannot start %s", cmd[0]);
		if (registered)
			state_end();
		if (report_tmp[0])
			unlink(report_tmp);
		return EXIT_OWN;
	}
	/* ---- The command runs: from here ksm-run must not bail out. ---- */
	/* A closed stderr must not kill ksm-run before it exits like the command. */
	signal(SIGPIPE, SIG_IGN);
	struct proc_info *mp = sample_proc(&s, c.pid);
	if (mp) {
		const char *base = strrchr(cmd[0], '/');
		mp->ppid = getpid();
		snprintf(mp->comm, sizeof mp->comm, "%.15s", base ? base + 1 : cmd[0]);
	}
	if (o.profile)
		profile_init(&prof, o.threshold);
	int wait_ms = 100;	/* an early first sample catches short commands */
	while (!child_wait(&c, wait_ms)) {
		sample_tick(&s);
		tune_tick(&tuner, &s);
		if (o.profile)
			profile_tree(&prof, &s);
		wait_ms = (int)(o.interval * 1000);
	}
	if (c.exec_errno) {
		warn_errno(c.exec_errno, "cannot run '%s'", cmd[0]);
	} else {
		sample_tick(&s);
	}
	if (o.profile)
		profile_finish(&prof);
	knobs_read_all(&in_force);
	if (registered && state_end())
		warnx_("the knobs could not all be restored: see `ksm-run --status`");
	if (!c.exec_errno && !o.quiet) {
		struct report_opts ro = {
			.json = o.json, .file = o.report_file, .argv = cmd,
			.prctl_pre_exec = prctl_pre_exec, .knobs = &in_force,
			.tuning = o.user_rate ? "user" : o.no_tune ? "off" : tuner.handover[0] ? tuner.handover :
				  tuner.phase == 1 ? "boost 5000/10ms (the command ended before the hand-over)" :
				  "none (the knobs could not be written)",
			.profile = o.profile ? &prof : NULL,
		};
		report_write(&ro, &s, &c);
	}
	if (report_tmp[0])
		unlink(report_tmp);
	child_exit_like(&c);
}
