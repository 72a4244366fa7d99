/*
 * options_help.c - what ksm-run says about its options: --help, and the
 * lists that the shell completion and the tests read (--list-options,
 * --list-options=MODE, --list-knobs).
 */
#include <stdio.h>

#include "host/knobs.h"
#include "options_help.h"

void options_usage(FILE *f)
{
	fprintf(f,
"Usage: ksm-run [OPTION]... [--] COMMAND [ARG]...\n"
"       ksm-run --estimate=TARGET [--settle=SECONDS] [--scan-rate=PAGES/MS] [--allow=LIST] [--deny=LIST] [--json]\n"
"       ksm-run --estimate=TARGET [--label=NAME] --fingerprint=FILE [--estimate=...]...\n"
"               [--sample=N] [--fingerprint-format=binary|tsv] [--fingerprint-per-cgroup=DIR]\n"
"               [--fingerprint-key=FILE]\n"
"       ksm-run --combine [--matrix] [--json] FILE...\n"
"       ksm-run --profile [--duration=SECONDS] [OPTION]... [--] COMMAND [ARG]...\n"
"       ksm-run --attach=TARGET [--no-wait] [--allow=LIST] [--deny=LIST] [--min-size=SIZE]\n"
"       ksm-run --detach=TARGET [--allow=LIST] [--deny=LIST] [--min-size=SIZE]\n"
"       ksm-run --daemon [--take-over] [--steady=S] [--max-cpu=PCT] [--min-profit=SIZE]\n"
"                        [--metrics-file=PATH] [--policy=FILE]\n"
"       ksm-run --check-config[=FILE]\n"
"       ksm-run --status [--json] [--watch[=SECONDS]] | --restore [--watch[=SECONDS]]\n"
"       ksm-run --help | --version\n"
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
"  --duration=SECONDS  end the command after SECONDS as timeout(1) -k 5 does, report\n"
"                  what merged until then, exit 124 (137 after KILL); also --profile\n"
"  --metrics-file=PATH  write the figures for Prometheus (node_exporter's\n"
"                  textfile collector) every interval, atomically\n"
"  --status        KSM state, kernel support, top merging processes, per cgroup\n"
"  --watch[=SECONDS]  with --status: refresh every SECONDS (2) like top(1);\n"
"                  without a terminal, one JSON line each time; with\n"
"                  --restore: look again every SECONDS until TERM or INT\n"
"The machine's tuner (one per machine; ksm-run instances under it do not tune):\n"
"  --daemon        run no command: tune ksmd for the whole machine until\n"
"                  TERM or INT, then restore the knobs\n"
"  --steady=S      in the steady phase, a full scan at least every S seconds (120)\n"
"  --max-cpu=PCT   hold ksmd under PCT%% of one core (50; 0: no ceiling)\n"
"  --min-profit=SIZE  slow to the minimum when less than SIZE is saved per\n"
"                  percent of a core that ksmd uses, for 5 minutes (16M; 0: never)\n"
"Processes that already run (x86_64, aarch64; root, or their user where ptrace is allowed):\n"
"  --attach=TARGET     enable KSM in them from outside, then follow them like a\n"
"                      command until they end or INT/TERM; TARGET: PID[,PID]...\n"
"                      or cgroup:PATH.  Process-wide (the prctl) by default; with\n"
"                      --allow, --deny or --min-size: madvise of the regions chosen now\n"
"  --no-wait           with --attach: enable, print the result and exit; it\n"
"                      writes no knob (ksmd stopped: it says that nothing will\n"
"                      merge, and --strict refuses)\n"
"  --stop-budget=SECONDS  the longest a target should be stopped at once (0.01)\n"
"  --detach=TARGET     the reverse: the prctl off (which unmerges), or\n"
"                      MADV_UNMERGEABLE on the regions chosen; TARGET also\n"
"                      agent: what the host agent enabled, once it stopped\n"
"The host agent's policy (/etc/ksmenable/ksmenable.conf and conf.d/*.conf):\n"
"  --check-config[=FILE]  check the policy, print its rules, exit 1 on an error\n"
"  --policy=FILE   with --daemon: apply this policy (default: the file above,\n"
"                  if it exists) to running and new processes, from outside\n"
"Evaluating a workload:\n"
"  --estimate=TARGET   predict the savings of running processes without KSM;\n"
"                      TARGET: PID[,PID]..., all, or cgroup:PATH\n"
"  --settle=SECONDS    with --estimate: two passes; pages that change are volatile\n"
"  --scan-rate=PAGES/MS  with --estimate: also the cost at pages_to_scan/sleep_millisecs\n"
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
"--check-config: 0 valid, 1 not;\n"
"the command's signal is re-raised.\n");
}

void options_list(const struct option_spec *specs, int mode)
{
	for (const struct option_spec *s = specs; s->name; s++)
		if (mode < 0 || (s->modes & M(mode)))
			printf("--%s%s\n", s->name, s->has_arg ? "=" : "");
}

void options_list_knobs(void)
{
	for (int i = 0; knob_known_name(i); i++)
		printf("%s\n", knob_known_name(i));
}
