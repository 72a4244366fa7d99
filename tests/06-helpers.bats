#!/usr/bin/env bats
# The suite's own helpers, which every other file trusts: knobs saved and
# restored whatever the advisor did, several workloads at once, settle_ksm.
# ci: lock asan guest

load helpers
load launcher_helpers

@test "KNOB_ORDER is ksm-run's write order and holds every writable knob of this kernel" {
	[ -n "$KNOB_ORDER" ]
	[ "$KNOB_ORDER" = "$("$KSM_RUN" --list-knobs)" ]
	local k missing=
	for k in $(find "$KSM" -maxdepth 1 -type f -perm -u+w -printf '%f\n'); do
		grep -qx "$k" <<<"$KNOB_ORDER" || missing+=" $k"
	done
	[ -z "$missing" ] || { echo "not saved by save_knobs:$missing"; return 1; }
	# The advisor's mode resets pages_to_scan: it must come before it.
	[ "$(grep -nx advisor_mode <<<"$KNOB_ORDER" | cut -d: -f1)" -lt \
		"$(grep -nx pages_to_scan <<<"$KNOB_ORDER" | cut -d: -f1)" ]
	[ "$(tail -n 1 <<<"$KNOB_ORDER")" = run ]
}

@test "restore_knobs puts pages_to_scan back after a change of advisor mode reset it" {
	requires advisor
	local saved=$BATS_TEST_TMPDIR/knobs before
	echo 1234 >$KSM/pages_to_scan
	echo 33 >$KSM/sleep_millisecs
	before=$(knobs_snapshot)
	save_knobs "$saved"
	echo scan-time >$KSM/advisor_mode
	echo 44 >$KSM/sleep_millisecs
	restore_knobs "$saved"
	[ "$(knobs_snapshot)" = "$before" ]
	[ "$(knob_value pages_to_scan)" = 1234 ]
}

@test "restore_knobs puts the scan-time advisor back, with the limits it had" {
	requires advisor
	local saved=$BATS_TEST_TMPDIR/knobs
	echo 600 >$KSM/advisor_min_pages_to_scan
	echo 50 >$KSM/advisor_max_cpu
	echo scan-time >$KSM/advisor_mode
	save_knobs "$saved"
	echo none >$KSM/advisor_mode
	echo 777 >$KSM/pages_to_scan
	echo 500 >$KSM/advisor_min_pages_to_scan
	echo 70 >$KSM/advisor_max_cpu
	restore_knobs "$saved"
	[ "$(knob_value advisor_mode)" = scan-time ]
	[ "$(knob_value advisor_min_pages_to_scan)" = 600 ]
	[ "$(knob_value advisor_max_cpu)" = 50 ]
	# The advisor owns pages_to_scan again: not the 777 set without it.
	[ "$(knob_value pages_to_scan)" != 777 ]
}

@test "restore_knobs fails, naming the knob, when it cannot put one back" {
	local saved=$BATS_TEST_TMPDIR/knobs
	save_knobs "$saved"
	sed -i 's/^sleep_millisecs .*/sleep_millisecs not-a-number/' "$saved"
	run -1 --separate-stderr restore_knobs "$saved"
	[[ $stderr == *"cannot restore sleep_millisecs=not-a-number"* ]]
}

@test "several named workloads at once, each with its own pid, output and status" {
	start_workload a -- "$PROGS/dupmem" wait exit=3
	start_workload b KSM_TEST_MARK=b -- "$PROGS/dupmem" getmerge wait
	start_workload -- "$PROGS/dupmem" wait
	local a b
	a=$(wl_pid a)
	b=$(wl_pid b)
	[ "$a" != "$b" ] && [ "$a" != "$WL_PID" ] && [ "$b" != "$WL_PID" ]
	[ "$(wl_pid)" = "$WL_PID" ] && [ "$(wl_out)" = "$WL_OUT" ] && [ "$(wl_err)" = "$WL_ERR" ]
	grep -qx "READY $a" "$(wl_out a)"
	grep -qx "merge_any $b $(merge_any_unset)" "$(wl_out b)"
	tr '\0' '\n' <"/proc/$b/environ" | grep -qx KSM_TEST_MARK=b
	stop_workload a
	[ "$(wl_status a)" = 3 ] && [ "$WL_STATUS" = 3 ]
	run -1 wl_pid a
	kill -0 "$b"
	kill -0 "$WL_PID"
	stop_workloads
	[ "$(wl_status b)" = 0 ] && [ "$(wl_status)" = 0 ]
	[ -z "$WL_PID" ]
	gone "$b"
	# The output stays readable after the stop.
	grep -qx "READY $b" "$(wl_out b)"
}

@test "a workload that ends before READY fails start_workload at once, with its stderr" {
	SECONDS=0
	run -1 --separate-stderr start_workload early -- sh -c 'echo gone early >&2; exit 4'
	[ "$SECONDS" -lt 15 ]
	[[ $stderr == *"early ended before READY: gone early"* ]]
	run -1 --separate-stderr start_workload bad-name -- true
	[[ $stderr == *"bad name"* ]]
}

@test "settle_ksm after a process died while ksmd was stopped mid-scan: bounded, ksmd stopped" {
	fast_ksm
	# Made mergeable by the library's madvise, which every kernel has.
	start_workload -- env LD_PRELOAD="$PRELOAD" KSM_ENABLE_MODE=madvise "$PROGS/dupmem" mmap=48 distinct=16 wait
	# Failed once in a fresh root (not since): what ksmd and the process
	# showed, should it fail again.
	wait_until 20 merging_at_least "$WL_PID" 1 || {
		echo "ksmd: $(ksm_counters); knobs: $(grep -H . $KSM/run $KSM/pages_to_scan $KSM/sleep_millisecs)" >&2
		grep -H . "/proc/$WL_PID/ksm_stat" >&2
		return 1
	}
	# ksmd stopped in the middle of its scan, the process killed: its
	# slot stays in ksmd's list until ksmd runs over it once more, and
	# ksmd then idles, counting no further scans.
	echo 0 >$KSM/run
	kill -KILL "$WL_PID"
	wait_workload
	SECONDS=0
	settle_ksm
	[ "$SECONDS" -lt 20 ]
	[ "$(knob_value run)" = 0 ]
	[ "$(knob_value pages_to_scan)" = 20000 ]
}

@test "ksmframes counts a region's KSM pages by frame as smaps' KSM: line does" {
	requires smaps_ksm kpageflags_ksm
	fast_ksm
	start_workload -- env LD_PRELOAD="$PRELOAD" KSM_ENABLE_MODE=madvise "$PROGS/dupmem" mmap=16 wait
	# The same contents, never advised: none of its pages is a KSM page.
	start_workload plain -- "$PROGS/dupmem" mmap=16 wait
	local merged plain
	merged=$(workload_region mmap)
	plain=$(workload_region mmap plain)
	# All but one of its pages, not the first: ksmd may be halfway through.
	wait_until 20 region_merged_kb "$WL_PID" "$merged" $((15 * 1024))
	echo 0 >$KSM/run        # the pages hold still while both count them
	[ "$("$PROGS/ksmframes" "$WL_PID" "$merged")" = "$(smaps_field "$WL_PID" "$merged" KSM | awk '{print $1 + 0}')" ]
	[ "$("$PROGS/ksmframes" "$WL_PID" "$merged")" -ge $((15 * 1024)) ]
	[ "$("$PROGS/ksmframes" "$(wl_pid plain)" "$plain")" = 0 ]
	# Without an address, every mapping: what the kernel counts for the process.
	[ "$("$PROGS/ksmframes" "$WL_PID")" = $(($(merged_pages "$WL_PID") * $(getconf PAGESIZE) / 1024)) ]
	[ "$(smaps_field "$(wl_pid plain)" "$plain" KSM | awk '{print $1 + 0}')" = 0 ]
}
