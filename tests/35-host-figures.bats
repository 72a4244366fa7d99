#!/usr/bin/env bats
# Host-wide figures: per cgroup in --status (checked against ksm_stat read
# directly, in two cgroups made here), --status --watch, and the metrics
# file (--metrics-file) under a command's ksm-run and under the daemon,
# checked with promtool and against /sys/kernel/mm/ksm read directly.
# ci: lock asan guest

load helpers
load launcher_helpers

LAUNCHER_REQUIRES="root ksm jq cmd:promtool cmd:python3 cmd:script"

PAGE=$(getconf PAGESIZE)

# A --watch in the background: a failed test must not leave it running
# (it would hold the suite's output, and so the lock, for ever).
WATCH_PID=

# cgroup_of_pid PID: its group as ksm-run names it (the memory controller's
# path, or the v2 one).
cgroup_of_pid() {
	awk -F: '$2 ~ /(^|,)memory(,|$)/ { m = $3 } $1 == 0 && $2 == "" { v = $3 }
		END { print (m != "" ? m : v) }' "/proc/$1/cgroup"
}

# The watcher, the daemons and node_exporter end first (the fixture then stops the
# workloads and removes the cgroups).
teardown_extra() {
	local n
	[ -z "$WATCH_PID" ] || kill -KILL "$WATCH_PID" 2>/dev/null
	for n in "${!WL_PIDS[@]}"; do
		case $n in daemon* | node_exporter) kill -TERM "${WL_PIDS[$n]}" 2>/dev/null ;; esac
	done
	return 0
}

# merged_of_cgroup DIR: ksm_merging_pages * page and ksm_process_profit,
# summed over the cgroup's processes, read directly.
direct_of_cgroup() {
	local pid m=0 p=0
	for pid in $(cat "$1/cgroup.procs"); do
		m=$((m + $(awk '$1 == "ksm_merging_pages" { print $2 }' "/proc/$pid/ksm_stat")))
		p=$((p + $(awk '$1 == "ksm_process_profit" { print $2 }' "/proc/$pid/ksm_stat")))
	done
	echo "$((m * PAGE)) $p"
}

# group_agrees DIR PATH: --status --json's figures of group PATH equal the
# ksm_stat of DIR's processes, read just before and just after (the same).
group_agrees() {
	local before after got
	before=$(direct_of_cgroup "$1")
	got=$("$KSM_RUN" --status --json | jq -r --arg g "$2" '.groups[] | select(.cgroup == $g) | "\(.merged_bytes) \(.profit_bytes)"')
	after=$(direct_of_cgroup "$1")
	[ "$before" = "$after" ] && [ "$got" = "$before" ]
}

@test "host figures: bad --watch and --metrics-file are refused with 125 before anything changes" {
	local before
	before=$(knobs_snapshot)
	run -125 "$KSM_RUN" --watch
	[[ $output == *"--watch is not an option of a command's run"*"(--watch goes with --status, --restore)"* ]]
	run -125 "$KSM_RUN" --watch=1 -- true
	[[ $output == *"--watch is not an option of a command's run"* ]]
	run -125 "$KSM_RUN" --status --watch=0
	[[ $output == *"--watch=0: not a number of seconds in 0.1..3600"* ]]
	run -125 "$KSM_RUN" --status --watch=4000
	[[ $output == *"--watch=4000: not a number of seconds in 0.1..3600"* ]]
	run -125 "$KSM_RUN" --status --watch=soon
	[[ $output == *"--watch=soon: not a number of seconds"* ]]
	run -125 "$KSM_RUN" --status --watch=
	[[ $output == *"needs a value, not an empty one"* ]]
	run -125 "$KSM_RUN" --metrics-file=/nonexistent-ksmenable/k.prom -- true
	[[ $output == *"--metrics-file=/nonexistent-ksmenable/k.prom: its directory '/nonexistent-ksmenable' does not exist (accepted: a file in an existing directory"* ]]
	run -125 "$KSM_RUN" --metrics-file="$BATS_TEST_TMPDIR" -- true
	[[ $output == *"is a directory"* ]]
	run -125 "$KSM_RUN" --metrics-file="$BATS_TEST_TMPDIR/k.prom" --status
	[[ $output == *"--metrics-file is not an option of --status"*"(--metrics-file goes with a command's run, --profile, --daemon, --attach)"* ]]
	run -125 "$KSM_RUN" --metrics-file="$BATS_TEST_TMPDIR/k.prom" --estimate=all
	[[ $output == *"--metrics-file is not an option of --estimate"* ]]
	run -125 "$KSM_RUN" --metrics-file="$BATS_TEST_TMPDIR/k.prom"
	[[ $output == *"no command given"* ]]
	run -125 "$KSM_RUN" --metrics-flie="$BATS_TEST_TMPDIR/k.prom" -- true
	[[ $output == *"did you mean '--metrics-file'"* ]]
	[ "$(knobs_snapshot)" = "$before" ]
	[ ! -e "$STATE_FILE" ]
	[ -z "$(ls -A "$BATS_TEST_TMPDIR")" ]
}

@test "--metrics-file not ending in .prom: a warning that node_exporter will not read it; the run goes on" {
	run -3 --separate-stderr "$KSM_RUN" -q --metrics-file="$BATS_TEST_TMPDIR/ksmenable.txt" -- sh -c 'exit 3'
	[[ $stderr == *"warning: --metrics-file=$BATS_TEST_TMPDIR/ksmenable.txt does not end in .prom: node_exporter's textfile collector reads only files named *.prom"* ]]
	run -3 --separate-stderr "$KSM_RUN" -q --metrics-file="$BATS_TEST_TMPDIR/ksmenable.prom" -- sh -c 'exit 3'
	[[ $stderr != *"warning"* ]]
}

@test "--status per cgroup: merged pages and profit of two cgroups equal their processes' ksm_stat" {
	# (dupmem's merge=1; on kernels without the prctl, tests/47's cgroup test)
	requires prctl general_profit
	local a b ga gb
	make_cgroup a
	a=$CG_DIR
	make_cgroup b
	b=$CG_DIR
	ga=/${a##*/} gb=/${b##*/}
	fast_ksm
	# Two processes with the same 16 MiB in a, one with 8 MiB of its own in b.
	start_workload a1 -- sh -c "$IN_CGROUP" sh "$a" "$PROGS/dupmem" merge=1 seed=11 mmap=16 wait
	start_workload a2 -- sh -c "$IN_CGROUP" sh "$a" "$PROGS/dupmem" merge=1 seed=11 mmap=16 wait
	start_workload b1 -- sh -c "$IN_CGROUP" sh "$b" "$PROGS/dupmem" merge=1 seed=12 mmap=8 wait
	[ "$(wc -w <"$a/cgroup.procs")" = 2 ]
	[ "$(wc -w <"$b/cgroup.procs")" = 1 ]
	wait_until 30 merging_at_least "$(wl_pid a1)" 4096
	wait_until 30 merging_at_least "$(wl_pid a2)" 4096
	wait_until 30 merging_at_least "$(wl_pid b1)" 2048
	wait_until 10 group_agrees "$a" "$ga"
	wait_until 10 group_agrees "$b" "$gb"
	run -0 "$KSM_RUN" --status --json
	# Each group: its processes, all of their memory candidate (the flag is set).
	[ "$(jq --arg g "$ga" '.groups[] | select(.cgroup == $g) | .processes' <<<"$output")" = 2 ]
	[ "$(jq --arg g "$gb" '.groups[] | select(.cgroup == $g) | .processes' <<<"$output")" = 1 ]
	[ "$(jq --arg g "$ga" '.groups[] | select(.cgroup == $g) | .merged_bytes' <<<"$output")" -ge $((32 << 20)) ]
	[ "$(jq --arg g "$ga" '.groups[] | select(.cgroup == $g) | .candidate_bytes' <<<"$output")" -ge $((32 << 20)) ]
	[ "$(jq --arg g "$gb" '.groups[] | select(.cgroup == $g) | .candidate_bytes' <<<"$output")" -ge $((8 << 20)) ]
	# The text: a row per group, the sums, and general_profit beside them with the note.
	run -0 "$KSM_RUN" --status
	[[ $output == *"per cgroup ("*"CGROUP"*"MERGED"*"PROFIT"*"CANDIDATE"* ]]
	echo "$output" | grep -Eq "^  $ga +2 +"
	echo "$output" | grep -Eq "^  $gb +1 +"
	[[ $output == *"general_profit system-wide:"*"the sum of the profits can exceed general_profit"* ]]
	# --watch has the same groups.
	run -0 timeout --preserve-status -s INT 5 sh -c '"$1" --status --watch=0.2 | head -n 1' sh "$KSM_RUN"
	[ "$(jq --arg g "$ga" '.groups[] | select(.cgroup == $g) | .processes' <<<"$output")" = 2 ]
}

# advisor_type: the JSON type of the advisor mode, where the kernel has one (6.8), or null.
advisor_type() { if [ -e $KSM/advisor_mode ]; then echo string; else echo null; fi; }

# lines_at_least FILE N: read afresh at every poll.
lines_at_least() { [ "$(wc -l <"$1")" -ge "$2" ]; }

@test "--status --watch without a terminal: one JSON line per interval; INT and TERM end it with 0" {
	local out=$BATS_TEST_TMPDIR/watch.json
	"$KSM_RUN" --status --watch=0.5 >"$out" &
	local pid=$!
	WATCH_PID=$pid
	wait_until 10 lines_at_least "$out" 3
	kill -INT $pid
	wait $pid
	[ "$(wc -l <"$out")" -ge 3 ]
	# Every line is one JSON object with the figures.
	while read -r line; do
		jq -e --arg adv "$(advisor_type)" '.time > 0 and .interval == 0.5 and (.counters.general_profit | type) == "number"
			and (.knobs.run | type) == "number" and (.knobs.pages_to_scan | type) == "number"
			and (.knobs.sleep_millisecs | type) == "number" and (.knobs.advisor_mode | type) == $adv
			and (.groups | type) == "array" and (.processes | type) == "array"
			and (.tuning.instances | type) == "array"' <<<"$line" >/dev/null
	done <"$out"
	# ksmd's CPU over the interval from the second line on.
	[ "$(head -n 1 "$out" | jq .ksmd_cpu_percent)" = null ]
	[ "$(sed -n 2p "$out" | jq '.ksmd_cpu_percent | type')" = '"number"' ]
	# TERM too; the default interval is 2 s. A new file: the old one is
	# not empty until the child truncates it, and a TERM before the child
	# has blocked it would kill it (143).
	local out2=$BATS_TEST_TMPDIR/watch-term.json
	"$KSM_RUN" --status --watch >"$out2" &
	pid=$!
	WATCH_PID=$pid
	wait_until 10 test -s "$out2"
	kill -TERM $pid
	wait $pid
	[ "$(jq .interval "$out2")" = 2 ]
	# A reader that goes away ends it quietly.
	run -0 --separate-stderr sh -c '"$1" --status --watch=0.1 | head -n 2 >/dev/null' sh "$KSM_RUN"
	[ -z "$stderr" ]
}

# last_frame TEXT: the last view of a --watch on a terminal, without CRs.
last_frame() {
	local f=${1##*$'\e[H\e[2J'}
	printf '%s' "${f//$'\r'/}"
}

# watch_on_tty ROWS COLS: a --watch on a terminal of that size, for 2.5 s; its output in $output.
watch_on_tty() {
	run -0 script -qec "stty rows $1 cols $2; timeout --preserve-status -s INT 2.5 $KSM_RUN --status --watch=0.5" /dev/null
}

@test "--status --watch on a terminal: top processes and the trend, in the terminal's rows and columns" {
	requires prctl          # dupmem's merge=1
	fast_ksm
	start_workload a1 -- "$PROGS/dupmem" merge=1 seed=21 mmap=32 wait
	local pid frame
	pid=$(wl_pid a1)
	wait_until 30 merging_at_least "$pid" 4096
	watch_on_tty 40 100
	frame=$(last_frame "$output")
	echo "$frame"
	# The process that merges, with its figures, as plain --status lists it.
	grep -Eq "^ +$pid dupmem +[0-9.]+ MiB +[0-9.]+ MiB  /" <<<"$frame"
	[[ $frame == *"top processes ("*"with merged pages):"* ]]
	# The trend: a mark per view (five in 2.5 s), saved and ksmd's CPU.
	[[ $frame == *"trend: a mark every 0.5 s"* ]]
	grep -Eq '^  saved  [_.=+*#@-]{3,} +[0-9.]+ [KMG]?i?B, high ' <<<"$frame"
	grep -Eq '^  ksmd   [ _.=+*#@-]{3,} +[0-9.]+% of a core, high ' <<<"$frame"
	[[ $frame == *"per cgroup ("*"CGROUP"* ]]
	# Never more than the screen: ROWS - 1 lines (nothing scrolls), COLS wide.
	[ "$(wc -l <<<"$frame")" -le 39 ]
	[ -z "$(awk 'length > 100' <<<"$frame")" ]
	# A small terminal keeps the top process first, and still nothing scrolls.
	watch_on_tty 12 60
	frame=$(last_frame "$output")
	echo "$frame"
	[ "$(wc -l <<<"$frame")" -le 11 ]
	[ -z "$(awk 'length > 60' <<<"$frame")" ]
	grep -Eq "^ +$pid dupmem " <<<"$frame"
	# Without a size (a terminal nobody sized): LINES and COLUMNS, as curses.
	run -0 env LINES=10 COLUMNS=70 script -qec "stty rows 0 cols 0; timeout --preserve-status -s INT 1.5 $KSM_RUN --status --watch=0.5" /dev/null
	frame=$(last_frame "$output")
	[ "$(wc -l <<<"$frame")" -le 9 ]
	[ -z "$(awk 'length > 70' <<<"$frame")" ]
}

@test "--status --json: knob values are numbers, as the counters, also the saved ones" {
	start_workload r1 -- sh -c 'echo READY; exec "$@"' sh "$KSM_RUN" --pages-to-scan=1000 -- "$PROGS/dupmem" wait
	wait_until 5 registered "$(wl_pid r1)"
	run -0 "$KSM_RUN" --status --json
	jq -e --arg adv "$(advisor_type)" '(.knobs.run | type) == "number" and (.knobs.pages_to_scan | type) == "number"
		and (.knobs.advisor_mode | type) == $adv
		and (.tuning.saved_knobs.pages_to_scan | type) == "number"
		and ([.tuning.saved_knobs | to_entries[] | select(.key != "advisor_mode") | .value | type]
			| length > 0 and all(. == "number"))' <<<"$output"
}

@test "--status --watch on a terminal: the view is redrawn from the top" {
	run -0 script -qec "timeout --preserve-status -s INT 1.5 $KSM_RUN --status --watch=0.5" /dev/null
	[[ $output == *$'\e[H\e[2J'"ksm-run --status --watch, every 0.5 s"* ]]
	[ "$(grep -o $'\e\\[H\e\\[2J' <<<"$output" | wc -l)" -ge 2 ]
	[[ $output == *"saved:   general_profit"*"ksmd:"*"tuner:"*"per cgroup"* ]]
}

# metrics_agree FILE: the metrics file agrees with /sys/kernel/mm/ksm and
# ksmd's CPU time read directly: every file there is in it, each value
# between what was read before the file was written and after.
metrics_agree() {
	python3 - "$1" <<'PY'
import os, re, sys, time
KSM = "/sys/kernel/mm/ksm"
named = {"general_profit": "general_profit_bytes", "full_scans": "full_scans_total",
         "pages_scanned": "pages_scanned_total", "pages_skipped": "pages_skipped_total"}
def ksmd_cpu():
    for p in os.listdir("/proc"):
        if p.isdigit():
            try:
                st = open("/proc/%s/stat" % p).read()
            except OSError:
                continue
            if st.split(" (", 1)[1].startswith("ksmd)"):
                f = st.rsplit(")", 1)[1].split()
                return (int(f[11]) + int(f[12])) / os.sysconf("SC_CLK_TCK")
    return None
def sysfs():
    out = {}
    for name in sorted(os.listdir(KSM)):
        path = os.path.join(KSM, name)
        v = open(path).read().strip()
        if os.stat(path).st_mode & 0o200:
            if name == "advisor_mode":
                out['ksmenable_advisor_mode_info{mode="%s"}' % re.search(r"\[(.*?)\]", v).group(1)] = 1.0
            else:
                out['ksmenable_knob{name="%s"}' % name] = float(v)
        else:
            out["ksmenable_" + named.get(name, name)] = float(v)
    out["ksmenable_ksmd_cpu_seconds_total"] = ksmd_cpu()
    return out
path = sys.argv[1]
def version():
    st = os.stat(path)
    return (st.st_ino, st.st_mtime_ns)
old = version()
before = sysfs()
for _ in range(50):          # the next write: a new file (rename)
    time.sleep(0.1)
    if version() != old:
        break
else:
    sys.exit("the metrics file was not written again within 5 s")
text = open(path).read()
after = sysfs()
got = {}
for line in text.splitlines():
    if line and not line.startswith("#"):
        key, value = line.rsplit(" ", 1)
        got[key] = float(value)
bad = 0
for key in before:
    lo, hi = min(before[key], after[key]), max(before[key], after[key])
    if key not in got:
        print("missing: %s" % key, file=sys.stderr); bad = 1
    elif not (lo - 0.011 <= got[key] <= hi + 0.011):
        print("%s: %s, read directly %s then %s" % (key, got[key], before[key], after[key]), file=sys.stderr); bad = 1
sys.exit(bad)
PY
}

# promtool_ok FILE: promtool check metrics finds nothing to say.
promtool_ok() {
	local out
	out=$(promtool check metrics <"$1" 2>&1) || { echo "promtool: $out" >&2; return 1; }
	[ -z "$out" ] || { echo "promtool: $out" >&2; return 1; }
}

# The labels of a dupmem's series in the metrics file FILE.
dupmem_labels() { echo "{command=\"dupmem\",file=\"${1##*/}\"}"; }

# command_agrees FILE PID: the command's figures equal PID's ksm_stat (the tree's only process);
# a kernel without ksm_process_profit (before 6.4) has no profit series.
command_agrees() {
	local m p l
	l=$(dupmem_labels "$1")
	m=$(merged_pages "$2")
	p=$(awk '$1 == "ksm_process_profit" { print $2 }' "/proc/$2/ksm_stat")
	[ "$(metric "$1" "ksmenable_command_merged_bytes$l")" = $((m * PAGE)) ] &&
		[ "$(metric "$1" "ksmenable_command_profit_bytes$l")" = "$p" ] &&
		[ "$(metric "$1" "ksmenable_command_processes$l")" = 1 ]
}

@test "--metrics-file under a command's ksm-run: promtool passes, the figures are sysfs's and the command's" {
	local dir=$BATS_TEST_TMPDIR/textfile f pid snapshot
	mkdir "$dir"
	f=$dir/ksmenable.prom
	# (A link or FIFO planted at PATH is refused: tests/43-planted-files.bats.)
	umask 077
	start_workload -- "$KSM_RUN" -q "${FAST_OPTS[@]}" --interval=0.3 --metrics-file="$f" -- "$PROGS/dupmem" mmap=16 wait
	pid=$(awk '$1 == "region" { print $4; exit }' "$WL_OUT")
	wait_until 30 merging_at_least "$pid" 4096
	wait_until 10 test -f "$f"
	[ "$(stat -c %a "$f")" = 644 ]
	# One copy for the checks of its form: the file is replaced every
	# 0.3 s, and two reads may see two versions with other families (in
	# the 6.1 guest the counts of HELP and TYPE lines differed so).
	snapshot=$BATS_TEST_TMPDIR/snapshot.prom
	cp "$f" "$snapshot"
	promtool_ok "$snapshot"
	cat "$snapshot"
	# HELP and TYPE for every family, counters named _total.
	[ "$(grep -c '^# HELP ' "$snapshot")" = "$(grep -c '^# TYPE ' "$snapshot")" ]
	[ -z "$(grep '^# TYPE .* counter$' "$snapshot" | grep -v '_total counter$')" ]
	wait_until 10 metrics_agree "$f"
	wait_until 10 command_agrees "$f" "$pid"
	[ "$(metric "$f" "ksmenable_command_peak_merged_bytes$(dupmem_labels "$f")")" -ge $((16 << 20)) ]
	# The user's rate: the tuner is this ksm-run, phase user_rate, the only phase at 1.
	[ "$(metric "$f" 'ksmenable_tuner_phase{phase="user_rate"}')" = 1 ]
	[ "$(grep -c '^ksmenable_tuner_phase{.*} 1$' "$f")" = 1 ]
	grep -q '^ksmenable_tuner_decisions_total [0-9]*$' "$f"
	# Its cgroup is there, with the command's merged memory in it.
	grep -Eq '^ksmenable_cgroup_merged_bytes\{cgroup="/.*"\} [0-9]+$' "$f"
	stop_workload
	[ "$WL_STATUS" = 0 ]
	# The file goes with the command; no temporary file is left.
	[ ! -e "$f" ]
	[ -z "$(ls -A "$dir")" ]
}

# phase_agrees FILE: the phase at 1 in the metrics FILE is the state
# file's (1 boost, 2 steady).
phase_agrees() { [ "$(metric "$1" "ksmenable_tuner_phase{phase=\"$(phase_name)\"}")" = 1 ]; }

@test "--metrics-file under the daemon: promtool passes, the figures are sysfs's, the tuner's phase is the state's" {
	local dir=$BATS_TEST_TMPDIR/textfile f before
	mkdir "$dir"
	f=$dir/ksmenable.prom
	before=$(knobs_snapshot)
	start_daemon daemon --metrics-file="$f"
	wait_until 5 tuner_is "$(wl_pid daemon)"
	wait_until 5 test -e "$f"
	promtool_ok "$f"
	[ "$(stat -c %a "$f")" = 644 ]
	wait_until 10 metrics_agree "$f"
	# The phase: the state's, the only one at 1.  The tuner may go from
	# boost to steady between the reads of the two files: each is read
	# again until they agree.
	wait_until 10 phase_agrees "$f"
	[ "$(grep -c '^ksmenable_tuner_phase{.*} 1$' "$f")" = 1 ]
	# The daemon has no command.
	[ -z "$(grep '^ksmenable_command_' "$f")" ]
	stop_daemon daemon
	[ "$WL_STATUS" = 0 ]
	[ ! -e "$f" ]
	[ -z "$(ls -A "$dir")" ]
	[ "$(knobs_snapshot)" = "$before" ]
}

@test "a command's report groups its processes by the cgroup each was in when it merged" {
	local a report=$BATS_TEST_TMPDIR/report.json here
	make_cgroup report
	a=$CG_DIR
	here=$(cgroup_of_pid $$)
	# One worker moves itself into the cgroup before it maps anything.
	# Each lives until it has merged (not a fixed time: a loaded machine's
	# ksmd may take longer), then three of the report's samples more.
	run -0 "$KSM_RUN" --json --report-file="$report" --interval=0.2 "${FAST_OPTS[@]}" -- sh -c \
		"sh -c '$IN_CGROUP' sh \"$a\" \"$PROGS/dupmem\" mmap=8 merged=2000 sleep=600 &
		 \"$PROGS/dupmem\" mmap=8 merged=2000 sleep=600; wait"
	[ "$(jq '.cgroups | length' "$report")" = 2 ]
	[ "$(jq -r --arg c "/${a##*/}" '.cgroups[] | select(.cgroup == $c) | .processes' "$report")" = 1 ]
	[ "$(jq -r --arg c "/${a##*/}" '.cgroups[] | select(.cgroup == $c) | .peak_merged_bytes >= 8000000' "$report")" = true ]
	[ "$(jq -r --arg c "$here" '.cgroups[] | select(.cgroup == $c) | .peak_merged_bytes >= 8000000' "$report")" = true ]
	# The sums are the table's.
	[ "$(jq '([.cgroups[].peak_merged_bytes] | add) == .tree.peak_merged_bytes' "$report")" = true ]
	# No pod or container in their paths: null, not absent.
	[ "$(jq '[.cgroups[] | has("pod_uid") and has("container_id") and .pod_uid == null] | all' "$report")" = true ]
	run -0 --separate-stderr "$KSM_RUN" --interval=0.2 "${FAST_OPTS[@]}" -- sh -c \
		"sh -c '$IN_CGROUP' sh \"$a\" \"$PROGS/dupmem\" mmap=8 merged=2000 sleep=600"
	[[ $stderr == *"per cgroup (the command's processes; peaks summed):"*"/${a##*/}"* ]]
}

# start_node_exporter DIR: Debian's node_exporter with only the textfile
# collector reading DIR, on 127.0.0.1 at a free port, as the workload
# node_exporter (its log: wl_err node_exporter); NE_URL is its /metrics.
start_node_exporter() {
	local port
	port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	NE_URL=http://127.0.0.1:$port/metrics
	start_workload node_exporter -- sh -c 'echo READY; exec "$@"' sh "$NODE_EXPORTER" \
		--web.listen-address="127.0.0.1:$port" --collector.disable-defaults --collector.textfile \
		--collector.textfile.directory="$1"
	wait_until 10 curl -fsS -o /dev/null "$NE_URL"
}

# has_line FILE LINE: FILE has LINE, whole.
has_line() { grep -qxF -- "$2" "$1"; }

# saved_at_least FILE SAMPLE BYTES: SAMPLE (name and labels, as written) is at least BYTES.
saved_at_least() { local v; v=$(metric "$1" "$2"); [ -n "$v" ] && [ "$v" -ge "$3" ]; }

@test "node_exporter reads the daemon's and two commands' metrics files at once: no collision, each file's series" {
	requires cmd:curl node_exporter
	local dir=$BATS_TEST_TMPDIR/textfile scrape=$BATS_TEST_TMPDIR/scrape prog name label pid got
	mkdir "$dir" "$BATS_TEST_TMPDIR/bin"
	# One program for both commands, named as a hostile user could: a quote,
	# a backslash, a newline and a byte that is not UTF-8.
	name=$'du"p\\m\nem\xff'
	prog=$BATS_TEST_TMPDIR/bin/$name
	cp "$PROGS/dupmem" "$prog"
	start_node_exporter "$dir"
	start_daemon daemon --metrics-file="$dir/ksmenable.prom"
	start_workload one -- "$KSM_RUN" -q --interval=0.3 --metrics-file="$dir/one.prom" -- "$prog" mmap=8 wait
	start_workload two -- "$KSM_RUN" --json --report-file="$BATS_TEST_TMPDIR/two.json" --interval=0.3 \
		--metrics-file="$dir/two.prom" -- "$prog" mmap=8 wait
	pid=$(awk '$1 == "region" { print $4; exit }' "$(wl_dir two)/out")
	wait_until 30 merging_at_least "$pid" 2048
	# The daemon's file has the machine's series, once the handover is past
	# (general_profit as computed where the kernel has no such file, before 6.4).
	local gp=general_profit_bytes
	[ -e $KSM/general_profit ] || gp=general_profit_computed_bytes
	wait_until 10 grep -q "^ksmenable_$gp " "$dir/ksmenable.prom"
	wait_until 10 grep -q '^ksmenable_command_processes' "$dir/one.prom"
	wait_until 10 grep -q '^ksmenable_command_processes' "$dir/two.prom"
	# Two scrapes: the first one's log is out before the second is answered.
	curl -fsS -o /dev/null "$NE_URL"
	curl -fsS -o "$scrape" "$NE_URL"
	grep -a '^ksmenable_\|^node_textfile' "$scrape" | grep -av '_knob\|sysfs_value'
	# Node_exporter gathered it all, and says nothing.
	has_line "$scrape" 'node_textfile_scrape_error 0'
	run ! grep -a 'error\|collected before' "$(wl_err node_exporter)"
	# The machine's series once (the daemon's), each command's series with its file.
	[ "$(grep -c "^ksmenable_$gp " "$scrape")" = 1 ]
	[ "$(grep -c '^ksmenable_tuner_phase{phase="steady"} ' "$scrape")" = 1 ]
	# What node_exporter writes of the name: its escapes, U+FFFD for the bad byte.
	label='command="du\"p\\m\nem'$'\xef\xbf\xbd''"'
	has_line "$scrape" "ksmenable_command_processes{$label,file=\"one.prom\"} 1"
	has_line "$scrape" "ksmenable_command_processes{$label,file=\"two.prom\"} 1"
	# The commands' files hold only their own series.
	run ! grep -v '^#\|^ksmenable_command_' "$dir/one.prom" "$dir/two.prom"
	# The report's frame-accurate saved figure: its last value and its peak;
	# no series at all where the kernel's frames cannot tell KSM pages.
	if kpageflags_ksm_sound; then
		wait_until 10 saved_at_least "$dir/two.prom" "ksmenable_command_peak_saved_bytes{$label,file=\"two.prom\"}" $((4 << 20))
		got=$(metric "$dir/two.prom" "ksmenable_command_peak_saved_bytes{$label,file=\"two.prom\"}")
		[ -n "$(metric "$dir/two.prom" "ksmenable_command_saved_bytes{$label,file=\"two.prom\"}")" ]
	else
		run ! grep -q '^ksmenable_command_.*saved_bytes' "$dir/two.prom"
		got=null
	fi
	stop_workload one
	stop_workload two
	stop_daemon daemon
	kill -TERM "$(wl_pid node_exporter)"
	wait_workload node_exporter
	# The report's peak is at least the file's last one (both null where not counted).
	[ "$(jq --argjson got "$got" '.saved.bytes >= $got' "$BATS_TEST_TMPDIR/two.json")" = true ]
}
