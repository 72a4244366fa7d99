#!/usr/bin/env bats
# The musl build of the library, on musl-built test programs.
# ci: lock asan

load helpers

setup_file() { save_knobs; fast_ksm; }
teardown_file() { restore_knobs; }
teardown() { stop_workloads; }

setup() {
	requires musl
	MLIB=$MUSL_BUILD/libksmenable.so
	MPROGS=$MUSL_BUILD/tests
}

@test "musl: the test program really is a musl program" {
	grep -q 'ld-musl' <(readelf -l "$MPROGS/dupmem")
}

@test "musl: prctl mode merges" {
	requires root ksm prctl
	start_workload LD_PRELOAD="$MLIB" -- "$MPROGS/dupmem" mmap=16 getmerge wait
	grep -qx "merge_any $WL_PID 1" "$WL_OUT"
	wait_until 20 region_merged $WL_PID "$(workload_region mmap)"
}

@test "musl: madvise mode, selectors, and regions made later" {
	requires root ksm
	start_workload LD_PRELOAD="$MLIB" KSM_ENABLE_ALLOW=anon,heap -- \
		"$MPROGS/dupmem" mmap=8 sleep=200 sbrk=8 shared=8 getmerge wait
	# No flag: 0, or -1 where the kernel has no PR_GET_MEMORY_MERGE (before 6.4).
	grep -qx "merge_any $WL_PID $(merge_any_unset)" "$WL_OUT"
	region_mergeable $WL_PID "$(workload_region mmap)"
	wait_until 20 region_mergeable $WL_PID "$(workload_region sbrk)"
	run ! region_mergeable $WL_PID "$(workload_region shared)"
	wait_until 20 region_merged $WL_PID "$(workload_region mmap)"
	grep -qx ksmenable /proc/$WL_PID/task/*/comm
}

@test "musl: a forked child is covered" {
	requires root
	start_workload LD_PRELOAD="$MLIB" KSM_ENABLE_ALLOW=anon,heap -- \
		"$MPROGS/dupmem" fork sleep=1100 mmap=8 sbrk=8 wait
	child=$(awk '$1 == "READY" { print $2 }' "$WL_OUT")
	region_mergeable $child "$(workload_region mmap)"
	wait_until 20 region_mergeable $child "$(workload_region sbrk)"
}

@test "musl: a bad setting enables nothing and says so" {
	run env LD_PRELOAD="$MLIB" KSM_ENABLE_ALLOW=heap,bogus "$MPROGS/dupmem" getmerge exit=7
	[ "$status" = 7 ]
	[[ "$output" == *"KSM_ENABLE_ALLOW='heap,bogus': unknown selector 'bogus'"* ]]
	[[ "$output" == *"merge_any "*" $(merge_any_unset)"* ]]
}

@test "musl: errno and results of interposed calls are unchanged" {
	run env LD_PRELOAD="$MLIB" KSM_ENABLE_MODE=madvise "$MPROGS/hostcheck"
	[ "$status" = 0 ]
	[ "$output" = "hostcheck ok" ]
}
