#!/usr/bin/env bats
# Kernel refusals, simulated with a seccomp filter: one warning, and the
# program goes on with its exit status unchanged.  The library is preloaded
# inside the filter (faultinject ... env LD_PRELOAD=...), so that the
# injector itself does not load it.
# ci: lock asan guest

load helpers

setup_file() { save_knobs; fast_ksm; }
teardown_file() { restore_knobs; }
teardown() { stop_workloads; }

NO_PRCTL="prctl,arg0=67:EINVAL"        # a kernel before 6.4
setup() { requires faultinject; }

@test "auto falls back to madvise of every region when PR_SET_MEMORY_MERGE is EINVAL" {
	requires root ksm
	start_workload -- "$FAULT" -f "$NO_PRCTL" env LD_PRELOAD="$PRELOAD" "$PROGS/dupmem" mmap=16 heap=8 getmerge wait
	grep -qx "merge_any $WL_PID $(merge_any_unset)" "$WL_OUT"
	region_mergeable $WL_PID "$(workload_region mmap)"
	wait_until 20 region_mergeable $WL_PID "$(workload_region heap)"
	wait_until 20 region_merged $WL_PID "$(workload_region mmap)"
	[ ! -s "$WL_ERR" ]      # a fallback, not a problem
}

@test "the fallback is told at KSM_ENABLE_LOG=info" {
	run --separate-stderr "$FAULT" -f "$NO_PRCTL" env LD_PRELOAD="$PRELOAD" KSM_ENABLE_LOG=info "$PROGS/dupmem" exit=3
	[ "$status" = 3 ]
	[[ "$stderr" == *"no PR_SET_MEMORY_MERGE (kernel before 6.4): madvise instead"* ]]
}

@test "mode prctl on a kernel without it: one warning, nothing enabled, status unchanged" {
	run --separate-stderr "$FAULT" -f "$NO_PRCTL" env LD_PRELOAD="$PRELOAD" KSM_ENABLE_MODE=prctl \
		"$PROGS/dupmem" mmap=1 getmerge exit=42
	[ "$status" = 42 ]
	[ "$(echo "$stderr" | grep -c .)" = 1 ]
	[[ "$stderr" == *"warning: prctl(PR_SET_MEMORY_MERGE): EINVAL (this kernel has KSM, but no PR_SET_MEMORY_MERGE (Linux 6.4+): KSM_ENABLE_MODE=auto or madvise advises the regions instead)"* ]]
	[[ "$output" == *"merge_any "*" $(merge_any_unset)" ]]
}

@test "prctl refused by a seccomp policy (EPERM): one warning, nothing enabled" {
	run --separate-stderr "$FAULT" -f "prctl,arg0=67:EPERM" env LD_PRELOAD="$PRELOAD" "$PROGS/dupmem" mmap=1 getmerge exit=5
	[ "$status" = 5 ]
	[ "$(echo "$stderr" | grep -c .)" = 1 ]
	[[ "$stderr" == *"prctl(PR_SET_MEMORY_MERGE): EPERM (refused, probably by a seccomp policy); KSM stays off"* ]]
}

@test "madvise EAGAIN (vm.max_map_count): one warning however many calls fail, and the program goes on" {
	run --separate-stderr "$FAULT" -f "madvise,arg2=12:EAGAIN" env LD_PRELOAD="$PRELOAD" KSM_ENABLE_MODE=madvise \
		"$PROGS/dupmem" mmap=1 mmap=1 mmap=1 sleep=1500 mmap=1 exit=9
	[ "$status" = 9 ]
	[ "$(echo "$stderr" | grep -c .)" = 1 ]
	[[ "$stderr" == *"madvise(MADV_MERGEABLE)"*"EAGAIN"* ]]
}

@test "madvise EINVAL (no KSM): one warning, then the library stops trying" {
	requires root
	# A kernel without KSM: EINVAL from madvise, and no /sys/kernel/mm/ksm
	# (hidden in a mount namespace of the test's own).
	start_workload -- unshare --mount --propagation private sh -c \
		'mount -t tmpfs -o size=4k ksmenable-test /sys/kernel/mm && exec "$@"' sh \
		"$FAULT" -f "madvise,arg2=12:EINVAL" env LD_PRELOAD="$PRELOAD" KSM_ENABLE_MODE=madvise \
		"$PROGS/dupmem" sleep=1500 mmap=1 wait
	wait_until 10 grep -q . "$WL_ERR"
	[ "$(grep -c . "$WL_ERR")" = 1 ]
	grep -q "madvise(MADV_MERGEABLE): EINVAL (the kernel has no KSM (no /sys/kernel/mm/ksm: CONFIG_KSM))" "$WL_ERR"
	run ! grep -qx ksmenable /proc/$WL_PID/task/*/comm
	stop_workload
	[ "$WL_STATUS" = 0 ]
}

@test "madvise EINVAL where the kernel has KSM: a refusal, not a kernel without KSM" {
	requires root ksm
	run --separate-stderr "$FAULT" -f "madvise,arg2=12:EINVAL" env LD_PRELOAD="$PRELOAD" KSM_ENABLE_MODE=madvise \
		"$PROGS/dupmem" sleep=1500 mmap=1 exit=5
	[ "$status" = 5 ]
	[ "$(echo "$stderr" | grep -c .)" = 1 ]
	[[ "$stderr" == *"madvise(MADV_MERGEABLE): EINVAL (this kernel has KSM, but refused the call)"* ]]
}
