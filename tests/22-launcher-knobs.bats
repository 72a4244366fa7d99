#!/usr/bin/env bats
# ksm-run: global knobs set, validated, written in order, and restored.
# ci: lock asan guest

load helpers
load launcher_helpers

show_knobs='for k in run pages_to_scan sleep_millisecs smart_scan advisor_mode advisor_max_cpu; do echo "$k=$(cat /sys/kernel/mm/ksm/$k)"; done'

@test "--set and the aliases apply while the command runs, and are restored" {
	requires advisor smart_scan
	local before
	before=$(knobs_snapshot)
	run -0 "$KSM_RUN" -q --set sleep_millisecs=33 --pages-to-scan=1234 --smart-scan=0 \
		--advisor=none --advisor-max-cpu=50 -- sh -c "$show_knobs"
	[[ $output == *"run=1"* ]]
	[[ $output == *"pages_to_scan=1234"* ]]
	[[ $output == *"sleep_millisecs=33"* ]]
	[[ $output == *"smart_scan=0"* ]]
	[[ $output == *"advisor_mode=[none] scan-time"* ]]
	[[ $output == *"advisor_max_cpu=50"* ]]
	[ "$(knobs_snapshot)" = "$before" ]
	[ ! -e "$STATE_FILE" ]
}

@test "--advisor=none and --smart-scan=0: set where the kernel has them, already so (a note, exit 0) where not" {
	local k value
	for k in advisor_mode:none smart_scan:0; do
		value=${k#*:} k=${k%%:*}
		run -0 --separate-stderr "$KSM_RUN" --no-tune --set "$k=$value" -- \
			sh -c 'cat "$1" 2>/dev/null || echo "no $1"' sh "$KSM/$k"
		if [ -e "$KSM/$k" ]; then
			# This kernel has it (Linux 6.7 and later): written while the command runs.
			[[ $output == *"$value"* ]] || { echo "$k: $output"; return 1; }
		else
			# Before: nothing to write, and said so; before the fix, 125 ("no knob").
			[[ $stderr == *"note: $k=$value: this kernel has no $k, so it is off already"* ]]
		fi
	done
	# Asking for the feature on where the kernel lacks it stays an error.
	if [ ! -e "$KSM/smart_scan" ]; then
		run -125 "$KSM_RUN" --smart-scan=1 -- true
	fi
}

@test "the advisor mode is written before pages_to_scan" {
	requires advisor
	echo scan-time >$KSM/advisor_mode
	run -0 "$KSM_RUN" -q --advisor=none --pages-to-scan=4321 -- cat $KSM/pages_to_scan
	[ "$output" = 4321 ]
	[ "$(knob_value advisor_mode)" = scan-time ]
}

@test "pages_to_scan under the scan-time advisor is refused before anything runs" {
	requires advisor
	echo scan-time >$KSM/advisor_mode
	run -125 --separate-stderr "$KSM_RUN" --pages-to-scan=4321 -- echo RAN
	[[ $stderr == *"scan-time advisor"* ]]
	[ "$output" = "" ]
	echo none >$KSM/advisor_mode
	run -125 --separate-stderr "$KSM_RUN" --advisor=scan-time --pages-to-scan=4321 -- echo RAN
	[[ $stderr == *"scan-time advisor"* ]]
	[ "$output" = "" ]
}

@test "run=1 only while the command runs; --no-tune leaves the rate alone" {
	run -0 "$KSM_RUN" -q --no-tune -- sh -c "$show_knobs"
	[[ $output == *"run=1"* ]]
	[[ $output == *"pages_to_scan=100"* ]]
	[[ $output == *"sleep_millisecs=20"* ]]
	[ "$(knob_value run)" = 0 ]
}

@test "the default tuning boosts the rate while the command runs" {
	# The boost lasts while the command's memory grows (tune.c): here 4 MiB
	# every 100 ms for 4 s, with the knobs read at 2 s.  A command that
	# merges nothing was seen past its boost before its first read (6.1's
	# TCG guest), as it should be: the boost ends once memory settles.
	local grow=() i
	for ((i = 0; i < 40; i++)); do grow+=(unique=4 sleep=100); done
	run -0 "$KSM_RUN" -q -- sh -c '"$@" >/dev/null & sleep 2; '"$show_knobs"'; wait' sh "$PROGS/dupmem" "${grow[@]}"
	[[ $output == *"run=1"* ]]
	[[ $output == *"pages_to_scan=5000"* ]]
	[[ $output == *"sleep_millisecs=10"* ]]
	[ "$(knob_value pages_to_scan)" = 100 ]
}

@test "--keep-knobs leaves the knobs as set" {
	run -0 "$KSM_RUN" -q --keep-knobs --pages-to-scan=777 -- true
	[ "$(knob_value pages_to_scan)" = 777 ]
	[ "$(knob_value run)" = 1 ]
	[ ! -e "$STATE_FILE" ]
}

@test "overlapping runs: the state from before the first is restored when the last ends" {
	local before
	before=$(knobs_snapshot)
	start_workload first -- "$KSM_RUN" -q --pages-to-scan=1111 --advisor=none -- "$PROGS/sigprog" wait
	[ "$(knob_value pages_to_scan)" = 1111 ]
	start_workload second -- "$KSM_RUN" -q --pages-to-scan=2222 --advisor=none -- "$PROGS/sigprog" wait
	wait_until 10 users_registered 2
	# One tuner: the first holds the rate, the second only registers.
	[ "$(knob_value pages_to_scan)" = 1111 ]
	# The first ends: the second takes the tuning over, nothing is restored yet.
	stop_workload first
	[ "$(wl_status first)" = 0 ]
	wait_until 20 knob_is pages_to_scan 2222
	[ "$(knob_value run)" = 1 ]
	# The last ends: everything from before the first comes back.
	stop_workload second
	[ "$(wl_status second)" = 0 ]
	[ "$(knobs_snapshot)" = "$before" ]
	[ ! -e "$STATE_FILE" ]
}

@test "ksm-run killed by KILL: --status says so, --restore puts the knobs back" {
	local before
	before=$(knobs_snapshot)
	start_workload -- "$KSM_RUN" -q --pages-to-scan=3333 --advisor=none -- "$PROGS/sigprog" wait
	kill -KILL "$WL_PID"
	wait_until 10 gone "$WL_PID"
	stop_workload
	[ "$WL_STATUS" = 137 ]
	[ "$(knob_value pages_to_scan)" = 3333 ]
	[ -e "$STATE_FILE" ]
	run -0 "$KSM_RUN" --status
	[[ $output == *"saved knobs LEFT BEHIND by a killed ksm-run"*"pages_to_scan=100"* ]]
	run -0 --separate-stderr "$KSM_RUN" --restore
	[[ $stderr == *"restored"* ]]
	[ "$(knobs_snapshot)" = "$before" ]
	[ ! -e "$STATE_FILE" ]
	run -0 --separate-stderr "$KSM_RUN" --restore
	[[ $stderr == *"nothing to restore"* ]]
}

@test "after a KILL, the next run restores the state from before the killed one" {
	local before
	before=$(knobs_snapshot)
	start_workload -- "$KSM_RUN" -q --pages-to-scan=3333 --advisor=none -- "$PROGS/sigprog" wait
	kill -KILL "$WL_PID"
	wait_until 10 gone "$WL_PID"
	stop_workload
	run -0 --separate-stderr "$KSM_RUN" -q --pages-to-scan=4444 --advisor=none -- cat $KSM/pages_to_scan
	[ "$output" = 4444 ]
	[[ $stderr == *"killed"* ]]
	[ "$(knobs_snapshot)" = "$before" ]
	[ ! -e "$STATE_FILE" ]
}

@test "--restore refuses while a ksm-run still runs" {
	start_workload -- "$KSM_RUN" -q --pages-to-scan=1111 --advisor=none -- "$PROGS/sigprog" wait
	run -1 --separate-stderr "$KSM_RUN" --restore
	[[ $stderr == *"still use"* ]]
	[ "$(knob_value pages_to_scan)" = 1111 ]
}

@test "not root: one warning per knob, and the command runs with KSM" {
	stage_for_nobody dupmem
	run --separate-stderr as_nobody "$NB_KSM_RUN" -q --pages-to-scan=999 --advisor=none -- \
		"$NB_PROGS/dupmem" mmap=1 getmerge mergeable
	[ "$status" -eq 0 ]
	[[ $stderr != *"libksmenable.so not found"* ]]
	[[ $stderr == *"cannot set pages_to_scan=999: Permission denied"* ]]
	[[ $stderr == *"cannot set run=1: Permission denied"* ]]
	# By the prctl, or where the kernel lacks it (before 6.4) by madvise of its mappings.
	if [ "$(merge_any_unset)" = 0 ]; then
		[[ $output == *"merge_any "*" 1"* ]]
	else
		[[ $output =~ "mergeable "[0-9]+" "[1-9] ]]
	fi
	[ "$(knob_value pages_to_scan)" = 100 ]
	[ "$(knob_value run)" = 0 ]
}

@test "not root with --strict: exit 125 before anything runs" {
	stage_for_nobody
	run -125 --separate-stderr as_nobody "$NB_KSM_RUN" --strict -- echo RAN
	[ "$output" = "" ]
	[[ $stderr == *"--strict"* ]]
}

@test "EBUSY from merge_across_nodes is explained, and the command still runs" {
	start_workload -- "$KSM_RUN" -q "${FAST_OPTS[@]}" -- "$PROGS/dupmem" mmap=16 wait
	wait_until 20 merging_at_least "$(awk '$1 == "region" { print $4; exit }' "$WL_OUT")" 1
	local want=$((1 - $(cat $KSM/merge_across_nodes)))
	run -0 --separate-stderr "$KSM_RUN" -q --merge-across-nodes=$want -- echo RAN
	[ "$output" = RAN ]
	[[ $stderr == *"while any pages are merged"* ]]
	stop_workload
}
