#!/usr/bin/env bats
# ksm-run --status: read-only, works without root.
# ci: lock asan guest

load helpers
load launcher_helpers

@test "--status shows the knobs, the counters and what the kernel supports" {
	# What a kernel without one of these says: tests/47-kernel-figures.bats.
	requires prctl smart_scan advisor general_profit
	run -0 --separate-stderr "$KSM_RUN" --status
	[[ $output == *"KSM knobs:"*"run=0"*"pages_to_scan=100"* ]] || [[ $output == *"pages_to_scan=100"*"run=0"* ]]
	[[ $output == *"KSM counters:"*"general_profit="* ]]
	[[ $output == *"prctl(PR_SET_MEMORY_MERGE): yes"* ]]
	[[ $output == *"merge flag inherited across exec: yes"* ]]
	[[ $output == *"smart_scan, pages_skipped: yes"* ]]
	[[ $output == *"the scan-time advisor (advisor_mode): yes"* ]]
	[[ $output == *"ksm_stat fields: ksm_rmap_items"*"ksm_merging_pages"* ]]
	[[ $output =~ "named anonymous mappings: "(yes|no) ]]
	[[ $output == *"tuning:"*"no ksm-run instance is registered"* ]]
}

@test "--status says the machine, and whether --attach works on it" {
	local m want=false
	m=$(uname -m)
	case $m in x86_64 | aarch64) want=true ;; esac
	run -0 --separate-stderr "$KSM_RUN" --status
	if $want; then
		[[ $output == *"--attach on this machine ($m): yes"* ]]
	else
		[[ $output == *"--attach on this machine ($m): no: ksm-run makes a target call the kernel on x86_64 and aarch64 only"* ]]
	fi
	run -0 --separate-stderr "$KSM_RUN" --status --json
	jq -e --arg m "$m" --argjson w "$want" '.machine == $m and .attach_supported == $w' <<<"$output"
}

@test "--status without root: read-only, nothing changed" {
	local before
	before=$(knobs_snapshot)
	stage_for_nobody
	run -0 as_nobody "$NB_KSM_RUN" --status
	[[ $output == *"knobs writable: no"* ]]
	# no other user's process is readable: the empty list (which once
	# passed NULL to qsort, caught by make check-asan)
	[[ $output == *"processes with the most merged pages:"*"none readable"* ]]
	[[ $output == *"prctl(PR_SET_MEMORY_MERGE): "* ]]
	[ "$(knobs_snapshot)" = "$before" ]
	[ ! -e "$STATE_FILE" ]
}

@test "--status lists a merging process among the top ones" {
	start_workload -- "$KSM_RUN" -q "${FAST_OPTS[@]}" -- "$PROGS/dupmem" mmap=16 wait
	local pid
	pid=$(awk '$1 == "region" { print $4; exit }' "$WL_OUT")
	wait_until 20 region_merged "$pid" "$(workload_region mmap)"
	run -0 "$KSM_RUN" --status
	[[ $output == *"processes with the most merged pages:"* ]]
	echo "$output" | grep -Eq "^ +$pid +dupmem +[0-9]+"
	[[ $output == *"tuning:"*"tuner:    pid $WL_PID, phase the user's rate"* ]]
	echo "$output" | grep -Eq "^ +$WL_PID +command +yes +[0-9-]+ [0-9:]+ +dupmem$"
	[[ $output == *"saved knobs (restored when the last ends):"*"pages_to_scan=100"* ]]
}

# The counters as they are when nothing has been merged since the last
# unmerge: not so while another KSM user on the host (a QEMU guest, a
# service with MemoryKSM=) holds merged pages.
counters_clean() { [ "$(cat $KSM/pages_sharing)" = 0 ] && [ "$(cat $KSM/pages_shared)" = 0 ]; }

@test "counters left over while KSM is stopped are said to be, in --status and in a command's report" {
	local report=$BATS_TEST_TMPDIR/report.json pid
	# The control: what earlier tests left dropped by ksmd, then stopped
	# (not run=2, which under a sanitizer unmerges 20 TiB shadows for minutes).
	settle_ksm
	run -0 "$KSM_RUN" --status --json
	if counters_clean; then
		[ "$(jq -r .counters_left_over <<<"$output")" = false ]
	else
		# Others' pages stay merged while ksmd is stopped: left over too.
		echo "another KSM user holds merged pages: $(ksm_counters)"
		[ "$(jq -r .counters_left_over <<<"$output")" = true ]
	fi
	# Merge, end the command (ksm-run puts run=0 back), and the counters stay.
	start_workload -- "$KSM_RUN" -q "${FAST_OPTS[@]}" -- "$PROGS/dupmem" mmap=16 wait
	pid=$(awk '$1 == "region" { print $4; exit }' "$WL_OUT")
	wait_until 20 region_merged "$pid" "$(workload_region mmap)"
	# ksmd stopped before the process ends: else it may drop its pages
	# between the exit and ksm-run's restore of run=0.
	echo 0 >$KSM/run
	stop_workloads
	knob_is run 0
	[ "$(cat $KSM/pages_sharing)" -gt 0 ]
	run -0 "$KSM_RUN" --status
	[[ $output == *"LEFT OVER: KSM is stopped (run=0)"* ]]
	run -0 "$KSM_RUN" --status --json
	[ "$(jq -r .counters_left_over <<<"$output")" = true ]
	# A command started now: its report says its start figures are left
	# over (run=0 kept for it, so that ksmd does not drop them in between).
	run -0 --separate-stderr "$KSM_RUN" --set run=0 -- true
	[[ $stderr == *"note: left over at the start, not this run's"* ]]
	# Also when ksm-run itself starts ksmd, which then drops them.
	run -0 "$KSM_RUN" --json --report-file="$report" -- true
	[ "$(jq -r .counters_left_over "$report")" = true ]
	# With KSM running, the counters are live.
	echo 1 >$KSM/run
	run -0 "$KSM_RUN" --status --json
	[ "$(jq -r .counters_left_over <<<"$output")" = false ]
	run -0 "$KSM_RUN" --json --report-file="$report" -- true
	[ "$(jq -r .counters_left_over "$report" | tail -1)" = false ]
	# No leftovers for the tests after this one (30 compares counters).
	settle_ksm
}
