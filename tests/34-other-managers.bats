#!/usr/bin/env bats
# Another KSM manager on the machine: a loop that writes run=0, and
# Debian's ksmtuned itself, beside ksm-run and beside the daemon.  ksm-run
# says at once who changed what, names a manager it knows, and does not
# fight (no write war) unless told to take over.
# ci: lock asan guest

load helpers
load launcher_helpers

LAUNCHER_REQUIRES="root ksm jq"

teardown_extra() {
	stop_ksmtuned
	local n
	for n in "${!WL_PIDS[@]}"; do
		case $n in daemon*|writer*|fake*) kill -TERM "${WL_PIDS[$n]}" 2>/dev/null ;; esac
	done
	return 0
}

# start_ksmtuned INTERVAL: Debian's script, checking every INTERVAL
# seconds (its default is 60), in a session of its own.  On this machine
# most of RAM is free, so at each check it writes run=0.
start_ksmtuned() {
	requires ksmtuned
	local pidfile=$BATS_TEST_TMPDIR/ksmtune.pid loop
	KSM_MONITOR_INTERVAL=$1 PIDFILE=$pidfile setsid "$KSMTUNED" </dev/null >/dev/null 2>&1 &
	wait_until 5 test -s "$pidfile"
	loop=$(cat "$pidfile")
	# Its loop (and the sleep it waits for) are one process group, the session setsid made.
	KSMTUNED_PGID=$(ps -o pgid= -p "$loop" | tr -d ' ')
	[ -n "$KSMTUNED_PGID" ] && [ "$KSMTUNED_PGID" != "$(ps -o pgid= -p $$ | tr -d ' ')" ]
	# The loop runs under the script's own name, which is what ksm-run looks for.
	[ "$(cat "/proc/$loop/comm")" = ksmtuned ]
}

group_gone() { ! pgrep -g "$1" >/dev/null; }

stop_ksmtuned() {
	[ -n "${KSMTUNED_PGID:-}" ] || return 0
	kill -TERM -- "-$KSMTUNED_PGID" 2>/dev/null
	wait_until 5 group_gone "$KSMTUNED_PGID" || kill -KILL -- "-$KSMTUNED_PGID" 2>/dev/null
	KSMTUNED_PGID=
	return 0
}

# A writer that sets KNOB to VALUE once, after DELAY seconds, and then waits.
start_writer() {
	start_workload writer -- sh -c 'echo READY; sleep "$3"; echo "$2" >/sys/kernel/mm/ksm/"$1"; exec cat >/dev/null' \
		sh "$1" "$2" "$3"
}

@test "run switched off under ksm-run: said at once, in the report, and not fought" {
	start_workload cmd -- "$KSM_RUN" --json --report-file="$BATS_TEST_TMPDIR/r.json" -- "$PROGS/sigprog" wait
	[ "$(knob_value run)" = 1 ]
	start_writer run 0 1
	wait_until 20 grep -q "run was changed by someone else: 1 -> 0" "$(wl_err cmd)"
	grep -q "this instance does not fight it: it writes no knob from now on" "$(wl_err cmd)"
	# No write war: run stays as the other one left it.
	sleep 3
	[ "$(knob_value run)" = 0 ]
	stop_workload cmd
	local tuning
	tuning=$(json_of "$BATS_TEST_TMPDIR/r.json" .tuning)
	echo "$tuning"
	[[ $tuning =~ "at "[0-9]{2}:[0-9]{2}:[0-9]{2}" someone else set run 1 -> 0" ]]
	[[ $tuning == *"; yielded to it"* ]]
	[ "$(json_of "$BATS_TEST_TMPDIR/r.json" .knobs.run)" = 0 ]
}

@test "the rate changed under the tuning ksm-run: said, with the values, and the tuning stops" {
	start_workload cmd -- "$KSM_RUN" -- "$PROGS/sigprog" wait
	# Its boost, or its steady rate: sigprog merges nothing, and on a slow
	# machine the boost had ended before a wait for 5000 looked (5.10's guest).
	wait_until 20 tuner_has_phase
	start_writer pages_to_scan 64 1
	# From the boost's 5000, or from the steady rate if the boost already ended.
	wait_until 20 grep -Eq "pages_to_scan was changed by someone else: [0-9]+ -> 64" "$(wl_err cmd)"
	wait_until 20 phase_is 4
	run -0 "$KSM_RUN" --status
	[[ $output == *"phase yielded to another manager"* ]]
	sleep 2
	[ "$(knob_value pages_to_scan)" = 64 ]
	stop_workload cmd
}

@test "--take-over: ksm-run puts its value back and says so" {
	start_workload cmd -- "$KSM_RUN" --take-over -- "$PROGS/sigprog" wait
	start_writer run 0 1
	wait_until 20 grep -q "run was changed by someone else: 1 -> 0.*--take-over: this instance keeps writing its values" "$(wl_err cmd)"
	wait_until 20 knob_is run 1
	stop_workload cmd
}

@test "Debian's ksmtuned beside ksm-run: named, and not fought" {
	start_ksmtuned 1
	start_workload cmd -- "$KSM_RUN" --json --report-file="$BATS_TEST_TMPDIR/r.json" -- "$PROGS/sigprog" wait
	wait_until 5 grep -q "run was changed by someone else: 1 -> 0; running: ksmtuned (pid [0-9]*)" "$(wl_err cmd)"
	run -0 "$KSM_RUN" --status
	[[ $output == *"another KSM manager runs: ksmtuned (pid "* ]]
	stop_workload cmd
	[[ "$(json_of "$BATS_TEST_TMPDIR/r.json" .tuning)" == *"yielded to it: ksmtuned (pid "* ]]
	# One message, not one per write of ksmtuned's.
	[ "$(grep -c "was changed by someone else" "$(wl_err cmd)")" = 1 ]
}

@test "--daemon refuses to start while ksmtuned runs, unless --take-over" {
	local before
	# A long interval: ksmtuned only sleeps during this test.
	start_ksmtuned 600
	before=$(knobs_snapshot)
	run -125 --separate-stderr "$KSM_RUN" --daemon
	[[ $stderr == *"--daemon: ksmtuned (pid "*") manages KSM on this machine"* ]]
	[[ $stderr == *"systemctl disable --now ksmtuned"* ]]
	[[ $stderr == *"--take-over"* ]]
	[ "$(knobs_snapshot)" = "$before" ]
	[ ! -e "$STATE_FILE" ]
	start_daemon daemon --take-over
	tuner_is "$(wl_pid daemon)"
	stop_daemon daemon
	[ "$WL_STATUS" = 0 ]
	[ "$(knobs_snapshot)" = "$before" ]
}

@test "--daemon starts beside processes that only call themselves ksmtuned" {
	# Names any user can choose: its comm set by prctl(PR_SET_NAME), its
	# argv[0] by exec -a, a program of its own named ksmtuned; and a root
	# process running a file named ksmtuned that a user could have written.
	local fake
	stage_for_nobody attachee
	fake=$NB_DIR/fake/ksmtuned
	mkdir "$NB_DIR/fake"
	cp /bin/sleep "$fake"
	chown -R 65534:65534 "$NB_DIR/fake"
	start_workload fake_prctl -- "${NOBODY[@]}" "$NB_PROGS/attachee" --name=ksmtuned sleep 60
	[ "$(cat "/proc/$(wl_pid fake_prctl)/comm")" = ksmtuned ]
	start_workload fake_argv0 -- "${NOBODY[@]}" bash -c 'echo READY; exec -a ksmtuned sleep 60'
	start_workload fake_file -- "${NOBODY[@]}" sh -c 'echo READY; exec "$1" 60' sh "$fake"
	start_workload fake_root -- sh -c 'echo READY; exec "$1" 60' sh "$fake"
	[ "$(cat "/proc/$(wl_pid fake_root)/comm")" = ksmtuned ]
	run -0 "$KSM_RUN" --status
	[[ $output != *"another KSM manager runs"* ]]
	start_daemon daemon
	tuner_is "$(wl_pid daemon)"
	stop_daemon daemon
	[ "$WL_STATUS" = 0 ]
}

@test "ksmtuned is still found when it is run by its interpreter, and by a user's --status" {
	stage_for_nobody
	start_ksmtuned 600
	run -0 "$KSM_RUN" --status
	[[ $output == *"another KSM manager runs: ksmtuned (pid "* ]]
	# A user cannot read root's /proc/PID/exe: the command line and the real uid judge.
	run -0 as_nobody "$NB_KSM_RUN" --status
	[[ $output == *"another KSM manager runs: ksmtuned (pid "* ]]
}

@test "run switched off under the daemon: logged, the daemon yields and keeps running" {
	start_daemon daemon
	wait_until 20 knob_is run 1
	start_writer run 0 1
	wait_until 20 grep -q "run was changed by someone else: 1 -> 0; this instance does not fight it" "$(wl_err daemon)"
	wait_until 20 phase_is 4
	sleep 2
	[ "$(knob_value run)" = 0 ]
	registered "$(wl_pid daemon)"
	stop_daemon daemon
	[ "$WL_STATUS" = 0 ]
}

advisor_wrote() { [ "$(cat $KSM/pages_to_scan)" != "$1" ]; }

@test "the kernel's scan-time advisor writing pages_to_scan is not taken for another manager" {
	requires advisor
	local before
	before=$(cat $KSM/pages_to_scan)
	# The advisor sets pages_to_scan at the end of each full scan.
	start_workload -- "$KSM_RUN" --advisor=scan-time --advisor-target-scan-time=1 --interval=0.2 -- \
		"$PROGS/dupmem" mmap=16 wait
	wait_until 30 advisor_wrote "$before"
	sleep 1
	stop_workload
	[ "$WL_STATUS" = 0 ]
	[[ "$(cat "$WL_ERR")" != *"changed by someone else"* ]]
}
