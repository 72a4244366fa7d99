#!/usr/bin/env bats
# ksm-run: the default tuning policy, boost then a steady low rate.
# ci: lock asan guest

load helpers
load launcher_helpers

LAUNCHER_REQUIRES="root ksm jq"

@test "default tuning: boost while merging, then a steady low rate, then restore" {
	local before
	before=$(knobs_snapshot)
	start_workload -- "$KSM_RUN" --json --report-file="$BATS_TEST_TMPDIR/r.json" --interval=0.5 -- \
		"$PROGS/dupmem" mmap=48 wait
	[ "$(knob_value pages_to_scan)" = 5000 ]
	[ "$(knob_value sleep_millisecs)" = 10 ]
	[ ! -e $KSM/advisor_mode ] || [ "$(knob_value advisor_mode)" = none ]
	local pid
	pid=$(awk '$1 == "region" { print $4; exit }' "$WL_OUT")
	# The boost merges 48 MiB within seconds.
	wait_until 10 region_merged "$pid" "$(workload_region mmap)"
	# Once a full scan merged nothing more: the steady rate.  12,000 pages
	# in 20 s are fewer than 100 a wake-up at 20 ms: 100 pages, longer sleeps.
	wait_until 30 knob_below pages_to_scan 5000
	[ "$(knob_value pages_to_scan)" = 100 ]
	[ "$(knob_value sleep_millisecs)" -gt 20 ]
	stop_workload
	[ "$(knobs_snapshot)" = "$before" ]
	[[ "$(json_of "$BATS_TEST_TMPDIR/r.json" .tuning)" =~ ^boost\ 5000/10ms\ for\ [0-9]+\ s,\ then\ 100\ pages\ every\ [0-9]+\ ms\ \(a\ full\ scan\ about\ every ]]
}
