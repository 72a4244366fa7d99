#!/usr/bin/env bats
# ksm-run --estimate: predictions on workloads of known duplicate structure,
# checked against real KSM converging on the same workload.

load helpers
load launcher_helpers

LAUNCHER_REQUIRES="root ksm jq"

# Each test starts with ksmd stopped, at the fast rates, and holding nothing
# of earlier tests (in this file or before it).
setup_extra() { settle_ksm; }

scans_reached() { [ "$(cat $KSM/full_scans)" -ge "$1" ]; }

estimate() {
	run --separate-stderr "$KSM_RUN" --estimate="$@" --json
	[ "$status" = 0 ] || { echo "ksm-run: $status $stderr"; return 1; }
	EST=$output
}

est() { jq -r ".$1" <<<"$EST"; }

# within_pct A B PCT: |A - B| <= PCT% of B.
within_pct() {
	local a=$1 b=$2 pct=$3 d
	d=$((a > b ? a - b : b - a))
	[ $((d * 100)) -le $((b * pct)) ] || { echo "$a and $b differ by more than $pct%"; return 1; }
}

# Let KSM merge the targets until pages_sharing stays unchanged over three
# windows of two full scans.
converge() {
	local prev=-1 cur f same=0
	echo 1 >$KSM/run
	for _ in $(seq 60); do
		f=$(cat $KSM/full_scans)
		wait_until 20 scans_reached $((f + 2))
		cur=$(cat $KSM/pages_sharing)
		if [ "$cur" = "$prev" ]; then same=$((same + 1)); else same=0; fi
		[ $same -ge 2 ] && return 0
		prev=$cur
	done
	return 1
}

predict_then_merge() {
	echo 0 >$KSM/run
	base_sharing=$(cat $KSM/pages_sharing)
	base_shared=$(cat $KSM/pages_shared)
	base_zero=$(cat $KSM/ksm_zero_pages)
	estimate "$1"
	converge
	real_sharing=$(( $(cat $KSM/pages_sharing) - base_sharing ))
	real_shared=$(( $(cat $KSM/pages_shared) - base_shared ))
	real_zero=$(( $(cat $KSM/ksm_zero_pages) - base_zero ))
}

@test "estimate: duplicates within one process, within 2% of what KSM reaches" {
	requires root ksm prctl
	echo 0 >$KSM/run
	start_workload a -- "$PROGS/dupmem" merge=1 mmap=8 unique=4 pairs=4 wait verify
	predict_then_merge "$(wl_pid a)"
	# 2048 equal pages (8 stable pages under max_page_sharing 256) and
	# 512 pairs: at least 2040 + 512 sharing, plus the program's own few
	[ "$(est pages_sharing)" -ge 2552 ] && [ "$(est pages_sharing)" -le 2700 ]
	[ "$(est across_process_pages)" = 0 ]
	within_pct "$(est pages_sharing)" "$real_sharing" 2
	within_pct "$(est pages_shared)" "$real_shared" 2
}

@test "estimate: duplicates across processes, within 2%" {
	requires root ksm prctl
	echo 0 >$KSM/run
	start_workload a -- "$PROGS/dupmem" merge=1 seed=7 distinct=8 unique=2 wait verify
	start_workload b -- "$PROGS/dupmem" merge=1 seed=7 distinct=8 unique=2 wait verify
	predict_then_merge "$(wl_pid a),$(wl_pid b)"
	# 2048 pages in each process that equal the other's, and nothing within
	[ "$(est across_process_pages)" -ge 2048 ]
	[ "$(est within_process_pages)" -lt 200 ]
	within_pct "$(est pages_sharing)" "$real_sharing" 2
	[ "$(jq '.processes | length' <<<"$EST")" = 2 ]
}

@test "estimate: zero pages merge as one content with use_zero_pages=0" {
	requires root ksm prctl
	echo 0 >$KSM/use_zero_pages
	start_workload a -- "$PROGS/dupmem" merge=1 zeros=8 mmap=2 wait
	predict_then_merge "$(wl_pid a)"
	[ "$(est zero_pages)" -ge 2048 ] && [ "$(est zero_pages)" -lt 2100 ]
	[ "$(est use_zero_pages)" = 0 ]
	within_pct "$(est pages_sharing)" "$real_sharing" 2
}

@test "estimate: zero pages are counted apart with use_zero_pages=1" {
	requires root ksm prctl
	echo 1 >$KSM/use_zero_pages
	start_workload a -- "$PROGS/dupmem" merge=1 zeros=8 mmap=2 wait
	predict_then_merge "$(wl_pid a)"
	echo 0 >$KSM/use_zero_pages
	[ "$(est use_zero_pages)" = 1 ]
	within_pct "$(est zero_pages)" "$real_zero" 2
	within_pct "$(est pages_sharing)" "$real_sharing" 2
}

@test "estimate: pages already merged are recognised, not promised again" {
	requires root ksm prctl
	start_workload a -- "$PROGS/dupmem" merge=1 mmap=8 pairs=4 wait verify
	predict_then_merge "$(wl_pid a)"
	first=$(est pages_sharing)
	estimate "$(wl_pid a)"
	within_pct "$(est pages_sharing)" "$first" 2
	[ "$(est already_merged_pages)" -ge 2500 ]
	# what is merged already is no new profit
	profit=$(est profit_bytes)
	new=$(est new_profit_bytes)
	[ "${new#-}" -le $((profit / 50)) ]
}

@test "estimate: the targets' memory and behaviour are untouched" {
	requires root
	start_workload a -- "$PROGS/dupmem" seed=3 mmap=4 unique=4 pairs=4 zeros=2 wait verify
	start_workload b -- "$PROGS/dupmem" seed=3 distinct=4 wait verify
	before=$(cat $KSM/run $KSM/pages_to_scan $KSM/sleep_millisecs)
	estimate "$(wl_pid a),$(wl_pid b)"
	run "$KSM_RUN" --estimate="$(wl_pid a),$(wl_pid b)" --settle=0.5
	[ "$status" = 0 ]
	[ "$(cat $KSM/run $KSM/pages_to_scan $KSM/sleep_millisecs)" = "$before" ]
	run ! grep -q "^VmFlags:.*mg" "/proc/$(wl_pid a)/smaps"
	stop_workloads
	[ "$(wl_status a)" = 0 ] && [ "$(wl_status b)" = 0 ]
	grep -qx "verify ok" "$(wl_out a)"
	grep -qx "verify ok" "$(wl_out b)"
}

@test "estimate: --settle counts pages that keep changing as volatile and leaves them out" {
	requires root
	start_workload a -- "$PROGS/dupmem" mmap=4 churn=4 wait
	estimate "$(wl_pid a)"
	[ "$(est volatile_pages)" = 0 ]
	estimate "$(wl_pid a)" --settle=1
	[ "$(est volatile_pages)" -ge 1024 ]
	[ "$(est pages_sharing)" -ge 1016 ]
}

@test "estimate: --allow and --deny choose the regions, as the library would" {
	requires root
	start_workload a -- "$PROGS/dupmem" mmap=8 heap=4 wait
	estimate "$(wl_pid a)" --allow=heap
	[ "$(jq -r '[.regions[].class] | unique | join(",")' <<<"$EST")" = heap ]
	estimate "$(wl_pid a)" --deny=heap
	[ "$(jq -r '[.regions[].class | select(. == "heap")] | length' <<<"$EST")" = 0 ]
	[ "$(est pages_sharing)" -ge 2040 ]
}

@test "estimate: the table on stdout, largest savings first" {
	requires root
	start_workload a -- "$PROGS/dupmem" mmap=8 wait
	start_workload b -- "$PROGS/dupmem" mmap=2 wait
	run --separate-stderr "$KSM_RUN" --estimate="$(wl_pid b),$(wl_pid a)"
	[ "$status" = 0 ]
	[[ "$output" == *"pages_sharing"* ]]
	[[ "$output" == *"general_profit"* ]]
	first=$(awk '$1 ~ /^[0-9]+$/ && $2 == "dupmem" { print $1; exit }' <<<"$output")
	[ "$first" = "$(wl_pid a)" ]
}

@test "estimate: not root, the user's own processes" {
	requires root
	stage_for_nobody dupmem
	start_workload mine -- "${NOBODY[@]}" "$NB_PROGS/dupmem" mmap=8 wait
	[ "$(stat -c %u "/proc/$(wl_pid mine)")" = 65534 ]
	run as_nobody "$NB_KSM_RUN" --estimate="$(wl_pid mine)" --json
	[ "$status" = 0 ]
	[ "$(jq -r .pages_sharing <<<"${lines[-1]}")" -ge 2040 ]
	[ "$(jq -r .scan.pfn_visible <<<"${lines[-1]}")" = false ]
}

@test "estimate: an unreadable target is reported and skipped; nothing readable is exit 1" {
	requires root
	stage_for_nobody dupmem
	start_workload a -- "$PROGS/dupmem" mmap=2 wait
	run --separate-stderr as_nobody "$NB_KSM_RUN" --estimate="$(wl_pid a)" --json
	[ "$status" = 1 ]
	[[ "$stderr" == *"pid $(wl_pid a) skipped: permission denied"* ]]
	start_workload mine -- "${NOBODY[@]}" "$NB_PROGS/dupmem" mmap=2 wait
	run --separate-stderr as_nobody "$NB_KSM_RUN" --estimate="$(wl_pid mine),$(wl_pid a)" --json
	[ "$status" = 0 ]
	[ "$(jq -r '.skipped[0].pid' <<<"$output")" = "$(wl_pid a)" ]
	[ "$(jq -r '.processes | length' <<<"$output")" = 1 ]
	[ "$(jq -r '.processes[0].pid' <<<"$output")" = "$(wl_pid mine)" ]
}

@test "estimate: a target that vanished is reported and skipped" {
	requires root
	start_workload a -- "$PROGS/dupmem" mmap=2 wait
	"$PROGS/dupmem" exit=0 &
	gone=$!
	wait $gone
	estimate "$(wl_pid a),$gone"
	[ "$(jq -r '.skipped[0].reason' <<<"$EST")" = "no such process" ]
	[ "$(jq -r '.processes | length' <<<"$EST")" = 1 ]
}

@test "estimate: malformed targets and targets matching nothing are refused with 125" {
	for t in "" abc 12a "1,,2" ",1" "cgroup:" "-3" 0 "cgroup:/nonexistent/cg" "cgroup:no-such-group-$$"; do
		run --separate-stderr "$KSM_RUN" --estimate="$t"
		[ "$status" = 125 ] || { echo "'$t': $status"; return 1; }
		[[ "$stderr" == *"--estimate"* ]] || { echo "'$t': $stderr"; return 1; }
		[ -z "$output" ]
	done
	"$PROGS/dupmem" exit=0 &
	gone=$!
	wait $gone
	run --separate-stderr "$KSM_RUN" --estimate="$gone"
	[ "$status" = 125 ]
	[[ "$stderr" == *"matches no process"* ]]
}

@test "estimate: cgroup targets, by relative and absolute path" {
	requires root
	cg=ksmenable-test-$$
	dir=
	for h in /sys/fs/cgroup/pids /sys/fs/cgroup/unified /sys/fs/cgroup; do
		if mkdir "$h/$cg" 2>/dev/null; then dir=$h/$cg; break; fi
	done
	[ -n "$dir" ] || skip_or_fail "cannot make a cgroup"
	start_workload a -- "$PROGS/dupmem" mmap=4 wait
	start_workload b -- "$PROGS/dupmem" mmap=4 wait
	echo "$(wl_pid a)" >"$dir/cgroup.procs"
	estimate "cgroup:$cg"
	[ "$(jq -r '[.processes[].pid] | join(",")' <<<"$EST")" = "$(wl_pid a)" ]
	estimate "cgroup:$dir"
	[ "$(jq -r '[.processes[].pid] | join(",")' <<<"$EST")" = "$(wl_pid a)" ]
	stop_workloads
	rmdir "$dir"
}

@test "estimate: pages still shared copy-on-write since a fork are not promised (KSM leaves them)" {
	requires root ksm prctl
	# every page differs, and the child shares them all with its parent
	start_workload a -- "$PROGS/dupmem" merge=1 distinct=4 fork wait
	child=$(awk '$1 == "READY" { print $2 }' "$(wl_out a)")
	predict_then_merge "$(wl_pid a),$child"
	[ "$(est single_frame_pages)" -ge 2048 ]
	[ "$(est pages_sharing)" -lt 100 ]
	[ "$real_sharing" -lt 100 ]
}

@test "estimate: progress on a terminal once the scan takes more than a second, none otherwise" {
	requires root
	command -v script >/dev/null || skip_or_fail "no script(1)"
	start_workload a -- "$PROGS/dupmem" mmap=8 wait
	# --settle makes the second pass start after more than a second
	run script -qec "'$KSM_RUN' --estimate=$(wl_pid a) --settle=1.2" /dev/null
	[ "$status" = 0 ]
	[[ "$output" == *"ksm-run: estimating: 1 of 1 processes"* ]]
	run --separate-stderr "$KSM_RUN" --estimate="$(wl_pid a)" --settle=1.2
	[ "$status" = 0 ]
	[[ "$stderr" != *estimating* ]]
}
