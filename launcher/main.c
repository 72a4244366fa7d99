/*
 * main.c: ksm-run, a launcher that enables KSM in a command, tunes ksmd
 * while it runs and reports what was saved; and the evaluation and status
 * modes.  The options decide which; each mode lives in a room of its own
 * (run/, attach/, eval/, daemon/, status/, restore/, over the machinery of
 * follow/, policy/, host/ and common/; HACKING.md says what each holds).
 */
#include <string.h>

#include "attach/attach.h"
#include "eval/combine.h"
#include "eval/estimate.h"
#include "daemon/daemon.h"
#include "status/status.h"
#include "status/watch.h"
#include "options.h"
#include "options_library.h"
#include "policy/check.h"
#include "restore/restore.h"
#include "run/run.h"

/* The library's settings the options give (seven at most), for a command's run. */
static struct lib_setting settings[16];
static int nsettings;

static void collect_setting(const char *var, const char *value)
{
	if (nsettings < (int)(sizeof settings / sizeof settings[0]))
		settings[nsettings++] = (struct lib_setting){ var, value };
}

int main(int argc, char **argv)
{
	static struct opts o;
	char **cmd;

	/* The exec probe of --status runs us again under this name. */
	if (argc == 1 && !strcmp(argv[0], STATUS_PROBE_NAME))
		return status_probe_exec_inherit();
	cmd = options_parse(argc, argv, &o);
	switch (o.action) {
	case ACT_ESTIMATE: {
		struct estimate_opts eo = {
			.target = o.estimate, .fp = &o.fp, .lib = &o.lib,
			.settle = o.settle, .json = o.json, .output = o.report_file,
			.scan_pages = o.scan_pages, .scan_sleep_ms = o.scan_sleep_ms,
		};
		if (fp_wanted(&o.fp) && fingerprints_key(&o.fp) < 0)
			return 125;     /* said why; nothing was read */
		return estimate_main(&eo);
	}
	case ACT_COMBINE:
		return combine_main(cmd, o.matrix, o.json, o.report_file);
	case ACT_STATUS:
		return o.watch ? status_watch(o.watch, o.json) : status_main(o.json);
	case ACT_RESTORE:
		return restore_main(o.watch);
	case ACT_DAEMON:
		return daemon_main(&(struct daemon_opts){
			.steady = o.steady, .max_cpu = o.max_cpu, .min_profit = o.min_profit,
			.max_cpu_given = o.max_cpu_given, .min_profit_given = o.min_profit_given,
			.take_over = o.take_over, .knobs = &o.knobs, .metrics_file = o.metrics_file,
			.policy = o.policy });
	case ACT_CHECK_CONFIG:
		return check_config_main(o.policy);
	case ACT_ATTACH:
	case ACT_DETACH:
		return attach_main(&(struct attach_opts){
			.detach = o.action == ACT_DETACH, .target = o.attach, .no_wait = o.no_wait,
			.json = o.json, .quiet = o.quiet, .report_all = o.report_all,
			.report_file = o.report_file, .metrics_file = o.metrics_file, .interval = o.interval,
			.stop_budget = o.stop_budget, .lib = &o.lib, .tuning = opts_tuning(&o) });
	case ACT_RUN:
	case ACT_PROFILE:
		break;
	}
	options_library_settings(&o, collect_setting);
	return run_command(&(struct run_opts){
		.profile = o.action == ACT_PROFILE, .threshold = o.threshold, .duration = o.duration,
		.interval = o.interval, .json = o.json, .quiet = o.quiet, .report_all = o.report_all,
		.end_survivors = o.end_survivors, .no_preload = o.no_preload, .preload = o.preload,
		.report_file = o.report_file, .metrics_file = o.metrics_file, .lib = &o.lib,
		.settings = settings, .nsettings = nsettings, .tuning = opts_tuning(&o) }, cmd);
}
