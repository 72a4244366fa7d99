#!/usr/bin/env bats
# prctl mode: the whole process is mergeable and its pages really merge.
# ci: lock asan guest

load helpers

setup_file() { save_knobs; fast_ksm; }
teardown_file() { restore_knobs; }
teardown() { stop_workloads; }

@test "without the library nothing is mergeable (the control)" {
	requires root ksm prctl
	start_workload -- "$PROGS/dupmem" mmap=16 getmerge wait
	grep -qx "merge_any $WL_PID 0" "$WL_OUT"
	sleep 1.5
	run ! region_mergeable $WL_PID "$(workload_region mmap)"
	[ "$(region_ksm_kb $WL_PID "$(workload_region mmap)")" = 0 ]
}

@test "default mode (auto, no lists) is prctl: PR_GET_MEMORY_MERGE reads 1 and pages merge" {
	requires root ksm prctl
	start_workload LD_PRELOAD="$PRELOAD" -- "$PROGS/dupmem" mmap=16 getmerge wait
	grep -qx "merge_any $WL_PID 1" "$WL_OUT"
	# 16 MiB of one repeated page: all but one page become KSM pages (a
	# pass may have reached only some of them when the first one shows).
	wait_until 20 region_merged_kb $WL_PID "$(workload_region mmap)" $((15 * 1024))
	[ ! -s "$WL_ERR" ]
	stop_workload
	[ "$WL_STATUS" = 0 ]
}

@test "KSM_ENABLE_MODE=prctl: heap, stack and file pages merge too" {
	requires root ksm prctl
	start_workload LD_PRELOAD="$PRELOAD" KSM_ENABLE_MODE=prctl -- \
		"$PROGS/dupmem" heap=8 file="$BATS_TEST_TMPDIR/f:8" stack=2048 getmerge wait
	grep -qx "merge_any $WL_PID 1" "$WL_OUT"
	wait_until 20 region_merged $WL_PID "$(workload_region heap)"
	wait_until 20 region_merged $WL_PID "$(workload_region file)"
	wait_until 20 region_merged $WL_PID "$(workload_region stack)"
}

@test "KSM_ENABLE_MODE=off does nothing" {
	requires root prctl
	start_workload LD_PRELOAD="$PRELOAD" KSM_ENABLE_MODE=off -- "$PROGS/dupmem" mmap=4 getmerge wait
	grep -qx "merge_any $WL_PID 0" "$WL_OUT"
	run ! region_mergeable $WL_PID "$(workload_region mmap)"
}
