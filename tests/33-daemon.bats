#!/usr/bin/env bats
# ksm-run --daemon: the machine's tuner.  Its refusals, its stop by TERM
# and by KILL (then --restore), the commands that run under it, its log,
# and the systemd unit that ships with it.
# ci: lock asan guest

load helpers
load launcher_helpers

LAUNCHER_REQUIRES="root ksm jq"

# A daemon left by a failed test would hold the tuning for the next one.
teardown_extra() {
	local n
	for n in "${!WL_PIDS[@]}"; do
		case $n in daemon*) kill -TERM "${WL_PIDS[$n]}" 2>/dev/null ;; esac
	done
	return 0
}

# A daemon's log line: "YYYY-MM-DD HH:MM:SS ksm-run[PID]: TEXT".
STAMP='^[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2} ksm-run\[[0-9]+\]: '

@test "--daemon: bad combinations are refused with 125 before anything changes" {
	local before
	before=$(knobs_snapshot)
	run -125 "$KSM_RUN" --daemon -- true
	[[ $output == *"--daemon runs no command ('true')"* ]]
	run -125 "$KSM_RUN" --daemon --allow=heap
	[[ $output == *"--allow is not an option of --daemon, which runs no command"* ]]
	run -125 "$KSM_RUN" --daemon --pages-to-scan=5000
	[[ $output == *"--daemon sets the scan rate itself"* ]]
	run -125 "$KSM_RUN" --daemon --no-tune
	[[ $output == *"--no-tune is not an option of --daemon"* ]]
	run -125 "$KSM_RUN" --daemon --status
	[[ $output == *"cannot be combined with"* ]]
	run -125 "$KSM_RUN" --steady=10 -- true
	[[ $output == *"--steady is not an option of a command's run"*"(--steady goes with --daemon)"* ]]
	run -125 "$KSM_RUN" --daemon --steady=0
	[[ $output == *"--steady=0: not a number of seconds in 1..86400"* ]]
	run -125 "$KSM_RUN" --daemon --max-cpu=150
	[[ $output == *"--max-cpu=150: not a percentage of one core in 0..100"* ]]
	run -125 "$KSM_RUN" --daemon --min-profit=lots
	[[ $output == *"--min-profit=lots: not a size"* ]]
	run -125 "$KSM_RUN" --daemn
	[[ $output == *"did you mean '--daemon'"* ]]
	[ "$(knobs_snapshot)" = "$before" ]
	[ ! -e "$STATE_FILE" ]
}

@test "--daemon without root: refused with 125, nothing changed" {
	local before
	before=$(knobs_snapshot)
	stage_for_nobody
	run -125 as_nobody "$NB_KSM_RUN" --daemon
	[[ $output == *"--daemon: cannot write /sys/kernel/mm/ksm/run"* ]]
	[ "$(knobs_snapshot)" = "$before" ]
	[ ! -e "$STATE_FILE" ]
}

@test "--daemon: tunes until TERM, logs each decision with the time, then restores" {
	local before
	before=$(knobs_snapshot)
	start_daemon daemon
	wait_until 20 tuner_is "$(wl_pid daemon)"
	[ "$(knob_value run)" = 1 ]
	[ "$(knob_value pages_to_scan)" = 5000 ]
	[ "$(knob_value sleep_millisecs)" = 10 ]
	run -0 "$KSM_RUN" --status
	[[ $output == *"tuner:    pid $(wl_pid daemon), phase boost"* ]]
	echo "$output" | grep -Eq "^ +$(wl_pid daemon) +daemon +yes .* daemon$"
	stop_daemon daemon
	[ "$WL_STATUS" = 0 ]
	[ "$(knobs_snapshot)" = "$before" ]
	[ ! -e "$STATE_FILE" ]
	cat "$(wl_err daemon)"
	grep -Eq "${STAMP}tuning the machine \(pid [0-9]+\): boost" "$(wl_err daemon)"
	grep -Eq "${STAMP}stopped by SIGTERM; the knobs from before are restored" "$(wl_err daemon)"
	# Every line of its log is stamped.
	! grep -Evq "$STAMP" "$(wl_err daemon)"
}

@test "--daemon: INT stops it too, and HUP logs where it stands and goes on" {
	local before
	before=$(knobs_snapshot)
	start_daemon daemon
	kill -HUP "$(wl_pid daemon)"
	wait_until 20 grep -q "tuning the machine; candidate memory" "$(wl_err daemon)"
	registered "$(wl_pid daemon)"
	stop_daemon daemon INT
	[ "$WL_STATUS" = 0 ]
	grep -q "stopped by SIGINT" "$(wl_err daemon)"
	[ "$(knobs_snapshot)" = "$before" ]
}

@test "--daemon killed by KILL: the knobs stay, --status says so, --restore puts them back" {
	local before
	before=$(knobs_snapshot)
	start_daemon daemon
	wait_until 20 knob_is pages_to_scan 5000
	stop_daemon daemon KILL
	[ "$WL_STATUS" = 137 ]
	[ "$(knob_value pages_to_scan)" = 5000 ]
	run -0 "$KSM_RUN" --status
	[[ $output == *"saved knobs LEFT BEHIND by a killed ksm-run"*"pages_to_scan=100"* ]]
	run -0 --separate-stderr "$KSM_RUN" --restore
	[ "$(knobs_snapshot)" = "$before" ]
	[ ! -e "$STATE_FILE" ]
}

@test "--daemon killed mid-boost: ksm-run --restore --watch puts the knobs back within its interval, each time" {
	# Issue 33: in Kubernetes nothing runs after a container (no ExecStopPost); an OOM kill left ksmd
	# at the boost's rate until the next start.  A second container of the DaemonSet runs this watch.
	local before
	before=$(knobs_snapshot)
	start_workload daemon_watch -- sh -c 'echo READY; exec "$@"' sh "$KSM_RUN" --restore --watch=0.5
	start_daemon daemon
	wait_until 20 knob_is pages_to_scan 5000
	# While the daemon runs, the watch leaves its knobs alone.
	sleep 1.5
	knob_is pages_to_scan 5000
	stop_daemon daemon KILL
	wait_until 3 knobs_are "$before" || { knobs_snapshot; cat "$(wl_err daemon_watch)"; return 1; }
	[ ! -e "$STATE_FILE" ]
	grep -q "restored the KSM knobs saved in /run/ksm-run/state: every ksm-run that used them ended without restoring them (killed)" \
		"$(wl_err daemon_watch)"
	# It goes on watching: the next daemon, killed too, is seen to as well.
	start_daemon daemon2
	wait_until 20 knob_is pages_to_scan 5000
	stop_daemon daemon2 KILL
	wait_until 3 knobs_are "$before"
	[ "$(grep -c 'restored the KSM knobs' "$(wl_err daemon_watch)")" = 2 ]
	stop_daemon daemon_watch
	[ "$WL_STATUS" = 0 ]
}

@test "--daemon killed mid-boost: the next ksm-run puts the knobs back before anything else" {
	# Issue 33: a run that writes fewer knobs (here only run=1) kept the killed daemon's boost.
	local before
	before=$(knobs_snapshot)
	start_daemon daemon
	wait_until 20 knob_is pages_to_scan 5000
	stop_daemon daemon KILL
	run -0 --separate-stderr "$KSM_RUN" -q --no-tune -- sh -c "cat $KSM/pages_to_scan $KSM/sleep_millisecs"
	[ "$output" = "$(knob_value pages_to_scan)"$'\n'"$(knob_value sleep_millisecs)" ]
	[ "$(echo "$before" | sed -n 's/^pages_to_scan=//p')" = "$(knob_value pages_to_scan)" ]
	[[ $stderr == *"found knob state saved by a ksm-run that was killed: put the knobs back first"* ]] ||
		{ echo "$stderr"; return 1; }
	knobs_are "$before"
	[ ! -e "$STATE_FILE" ]
}

@test "--daemon: one per machine; a second is refused with 125 and changes nothing" {
	start_daemon daemon
	run -125 --separate-stderr "$KSM_RUN" --daemon
	[[ $stderr == *"another ksm-run --daemon, pid $(wl_pid daemon), tunes this machine"* ]]
	users_registered 1
	tuner_is "$(wl_pid daemon)"
	stop_daemon daemon
	[ "$WL_STATUS" = 0 ]
}

@test "a ksm-run under the daemon registers its command and leaves the tuning to the daemon" {
	local before d c pid
	before=$(knobs_snapshot)
	start_daemon daemon --steady=5
	d=$(wl_pid daemon)
	start_workload cmd -- "$KSM_RUN" -- "$PROGS/dupmem" mmap=32 wait
	c=$(wl_pid cmd)
	wait_until 20 registered "$c"
	[ "$(state_tuner)" = "$d" ]
	grep -q "the machine's tuner, pid $d (daemon), sets the scan rate" "$(wl_err cmd)"
	# The daemon's tuning merges the command's memory.
	pid=$(awk '$1 == "region" { print $4; exit }' "$(wl_out cmd)")
	wait_until 20 region_merged "$pid" "$(workload_region mmap cmd)"
	stop_workload cmd
	[ "$(wl_status cmd)" = 0 ]
	# The command's report names the tuner; the daemon still tunes.
	grep -q "tuning: *by the machine's tuner" "$(wl_err cmd)"
	registered "$d"
	[ "$(knob_value run)" = 1 ]
	stop_daemon daemon
	[ "$(knobs_snapshot)" = "$before" ]
}

@test "the daemon takes the tuning from a command's instance, and gives it back when it stops" {
	local before d c
	before=$(knobs_snapshot)
	start_workload cmd -- "$KSM_RUN" -q -- "$PROGS/sigprog" wait
	c=$(wl_pid cmd)
	wait_until 20 tuner_is "$c"
	start_daemon daemon
	d=$(wl_pid daemon)
	tuner_is "$d"
	stop_daemon daemon
	[ "$WL_STATUS" = 0 ]
	grep -q "stopped by SIGTERM; ksm-run instances still run" "$(wl_err daemon)"
	# The command's instance takes it back within 2 s; nothing is restored yet.
	wait_until 20 tuner_is "$c"
	[ "$(knob_value run)" = 1 ]
	stop_workload cmd
	[ "$(knobs_snapshot)" = "$before" ]
	[ ! -e "$STATE_FILE" ]
}

@test "--daemon with stderr on the journal: no timestamps (JOURNAL_STREAM matches stderr)" {
	local log=$BATS_TEST_TMPDIR/journal
	: >"$log"
	# The journal's stream, as systemd names it: DEVICE:INODE of stderr.
	JOURNAL_STREAM=$(stat -c '%d:%i' "$log") "$KSM_RUN" --daemon 2>>"$log" &
	local pid=$!
	wait_until 5 registered "$pid"
	kill -TERM "$pid"
	wait "$pid"
	cat "$log"
	grep -q "^tuning the machine (pid $pid)" "$log"
	grep -q "^stopped by SIGTERM" "$log"
	# A JOURNAL_STREAM that is not stderr (stderr redirected since): stamps.
	: >"$log"
	JOURNAL_STREAM=1:2 "$KSM_RUN" --daemon 2>>"$log" &
	pid=$!
	wait_until 5 registered "$pid"
	kill -TERM "$pid"
	wait "$pid"
	grep -Eq "${STAMP}tuning the machine" "$log"
}
