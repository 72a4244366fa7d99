#!/usr/bin/env bats
# ksm-run: the report, checked against sysfs and /proc read directly, on a
# workload that really merges.

load helpers
load launcher_helpers

LAUNCHER_REQUIRES="root ksm prctl jq"

setup_extra() { REPORT=$BATS_TEST_TMPDIR/report.json; }

sysfs() { cat "$KSM/$1"; }

# within A B PERCENT: |A - B| <= PERCENT% of max(|A|, |B|, 1000).
within() {
	awk -v a="$1" -v b="$2" -v p="$3" 'BEGIN {
		d = a - b; if (d < 0) d = -d
		m = a < 0 ? -a : a; n = b < 0 ? -b : b; if (n > m) m = n; if (m < 1000) m = 1000
		exit !(d <= m * p / 100) }'
}

@test "JSON report: figures match sysfs and /proc on a merging workload" {
	local start_profit start_shared start_scans
	settle_ksm
	start_profit=$(sysfs general_profit)
	start_shared=$(sysfs pages_shared)
	start_scans=$(sysfs full_scans)
	start_workload $NO_LSAN -- "$KSM_RUN" --json --report-file="$REPORT" --interval=0.2 "${FAST_OPTS[@]}" -- \
		"$PROGS/dupmem" mmap=48 wait
	local pid addr direct
	pid=$(awk '$1 == "region" { print $4; exit }' "$WL_OUT")
	addr=$(workload_region mmap)
	wait_until 20 region_merged "$pid" "$addr"
	# Let the scan finish the region, then read the process directly.
	wait_until 20 merging_at_least "$pid" 12000
	direct=$(awk '$1 == "ksm_merging_pages" { print $2 }' /proc/$pid/ksm_stat)
	# Several samples (interval 0.2 s) while ksmd keeps scanning.
	sleep 1
	# Stop ksmd before the command ends, so that it cannot clean up after
	# the exit between ksm-run's last sample and this test's reading.
	echo 0 >$KSM/run
	stop_workload
	[ "$WL_STATUS" = 0 ]

	run -0 jq -e . "$REPORT"
	[ "$(json_of "$REPORT" '.exit.how')" = exited ]
	[ "$(json_of "$REPORT" '.exit.code')" = 0 ]
	[ "$(json_of "$REPORT" '.exit.status')" = 0 ]
	[ "$(json_of "$REPORT" '.command | join(" ")')" = "$PROGS/dupmem mmap=48 wait" ]
	[ "$(json_of "$REPORT" '.pid')" = "$pid" ]

	# Start: exactly what sysfs held before (ksmd was stopped).
	[ "$(json_of "$REPORT" .general_profit.start)" = "$start_profit" ]
	[ "$(json_of "$REPORT" .system.pages_shared.start)" = "$start_shared" ]
	[ "$(json_of "$REPORT" .system.full_scans.start)" = "$start_scans" ]
	# End: what sysfs holds now (ksmd is stopped).
	within "$(json_of "$REPORT" .general_profit.end)" "$(sysfs general_profit)" 1
	within "$(json_of "$REPORT" .system.pages_sharing.end)" "$(sysfs pages_sharing)" 1
	within "$(json_of "$REPORT" .system.full_scans.end)" "$(sysfs full_scans)" 1
	[ "$(json_of "$REPORT" '.general_profit.delta == .general_profit.end - .general_profit.start')" = true ]
	# 48 MiB of duplicates: general_profit grew by most of it.
	[ "$(json_of "$REPORT" '.general_profit.peak >= .general_profit.end')" = true ]
	[ "$(json_of "$REPORT" '.general_profit.peak - .general_profit.start > 40000000')" = true ]
	[ "$(json_of "$REPORT" .full_scans.completed)" -ge 2 ]
	[ "$(json_of "$REPORT" '.full_scans.mean_scan_s > 0')" = true ]
	[ "$(json_of "$REPORT" .system.pages_scanned.delta)" -gt 0 ]
	[ "$(json_of "$REPORT" '.ksmd.cpu_s >= 0')" = true ]

	# The process: its peak is what /proc said, and it is the whole tree.
	local peak
	peak=$(json_of "$REPORT" ".processes[] | select(.pid == $pid) | .peak_ksm_merging_pages")
	[ "$peak" -ge "$direct" ]
	[ "$peak" -le $((12288 + 1024)) ]
	[ "$(json_of "$REPORT" .tree.processes)" = 1 ]
	[ "$(json_of "$REPORT" .tree.peak_ksm_merging_pages)" = "$peak" ]
	[ "$(json_of "$REPORT" .tree.peak_merged_bytes)" = $((peak * $(getconf PAGESIZE))) ]
	[ "$(json_of "$REPORT" ".processes[] | select(.pid == $pid) | .ksm_process_profit > 40000000")" = true ]
	[ "$(json_of "$REPORT" ".processes[] | select(.pid == $pid) | .peak_ksm_process_profit >= .ksm_process_profit")" = true ]
	[ "$(json_of "$REPORT" '.tree.peak_ksm_process_profit >= .tree.ksm_process_profit')" = true ]
	[ "$(json_of "$REPORT" ".processes[] | select(.pid == $pid) | .library")" = true ]
	[ "$(json_of "$REPORT" ".processes[] | select(.pid == $pid) | .exit_line")" = true ]

	# The knobs in force during the run.
	[ "$(json_of "$REPORT" .knobs.pages_to_scan)" = 20000 ]
	[ "$(json_of "$REPORT" .knobs.sleep_millisecs)" = 10 ]
	[ "$(json_of "$REPORT" .knobs.advisor_mode)" = none ]
	[ "$(json_of "$REPORT" .tuning)" = user ]
}

@test "the process tree: a forked child is found and attributed" {
	start_workload $NO_LSAN -- "$KSM_RUN" --json --report-file="$REPORT" --interval=0.2 "${FAST_OPTS[@]}" -- \
		"$PROGS/dupmem" fork mmap=16 wait
	local child parent addr
	child=$(awk '$1 == "region" { print $4; exit }' "$WL_OUT")
	addr=$(workload_region mmap)
	wait_until 20 region_merged "$child" "$addr"
	parent=$(awk '/^PPid:/ { print $2 }' /proc/$child/status)
	sleep 0.5	# one more sample with the child merged
	stop_workload
	[ "$(json_of "$REPORT" .tree.processes)" = 2 ]
	[ "$(json_of "$REPORT" ".processes[] | select(.pid == $child) | .ppid")" = "$parent" ]
	[ "$(json_of "$REPORT" ".processes[] | select(.pid == $child) | .peak_ksm_merging_pages > 3000")" = true ]
	[ "$(json_of "$REPORT" ".processes[] | select(.pid == $parent) | .ppid")" != null ]
}

@test "text report: exit, system-wide figures apart from the tree's, knobs" {
	run -0 --separate-stderr "$KSM_RUN" --interval=0.2 "${FAST_OPTS[@]}" -- "$PROGS/dupmem" mmap=8 sleep=500
	[[ $stderr == *"ksm-run: report"* ]]
	[[ $stderr == *"ended:    exit status 0 after"* ]]
	[[ $stderr == *"system-wide, every process on this machine (not only this command)"* ]]
	[[ $stderr == *"general_profit"* ]]
	[[ $stderr == *"ksmd CPU"* ]]
	[[ $stderr == *"this command's process tree (what this command earned)"* ]]
	[[ $stderr == *"knobs in force:"*"pages_to_scan=20000"* ]]
}

@test "-q: no report at all; --report-file: nothing on stderr" {
	run -0 --separate-stderr "$KSM_RUN" -q -- true
	[ -z "$stderr" ]
	run -0 --separate-stderr "$KSM_RUN" --report-file="$REPORT" -- true
	[ -z "$stderr" ]
	grep -q "ksm-run: report" "$REPORT"
}

@test "the report of a command killed by a signal" {
	run -137 "$KSM_RUN" --json --report-file="$REPORT" -- "$PROGS/sigprog" raise 9
	[ "$(json_of "$REPORT" .exit.how)" = signaled ]
	[ "$(json_of "$REPORT" .exit.signal)" = 9 ]
	[ "$(json_of "$REPORT" .exit.signal_name)" = SIGKILL ]
	[ "$(json_of "$REPORT" .exit.status)" = 137 ]
	[ "$(json_of "$REPORT" .exit.code)" = null ]
}
