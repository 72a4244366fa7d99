#!/usr/bin/env bats
# Children: forked ones inherit the setting, executed ones load the library
# again (unless KSM_ENABLE_INHERIT=0).
# ci: lock asan guest

load helpers

setup_file() { save_knobs; fast_ksm; }
teardown_file() { restore_knobs; }
teardown() { stop_workloads; }

# The pid of the workload's process that printed READY (a child after fork).
ready_pid() { awk '$1 == "READY" { print $2; exit }' "$WL_OUT"; }

@test "prctl mode: a forked child inherits the flag and merges" {
	requires root ksm prctl
	start_workload LD_PRELOAD="$PRELOAD" -- "$PROGS/dupmem" fork mmap=16 getmerge wait
	child=$(ready_pid)
	[ "$child" != "$WL_PID" ]
	grep -qx "merge_any $child 1" "$WL_OUT"
	wait_until 20 region_merged $child "$(workload_region mmap)"
}

@test "madvise mode: a forked child gets its own rescan thread and covers its heap growth" {
	requires root ksm
	# Its thread starts at its first wrapped call (here the mmap) once it
	# has lived a rescan period, 1 s by default (preload/rescan.c).
	start_workload LD_PRELOAD="$PRELOAD" KSM_ENABLE_ALLOW=heap,anon -- \
		"$PROGS/dupmem" fork sleep=1100 mmap=8 heap=16 wait
	child=$(ready_pid)
	region_mergeable $child "$(workload_region mmap)"
	wait_until 2 region_mergeable $child "$(workload_region heap)"
	grep -qx ksmenable /proc/$child/task/*/comm
	wait_until 20 region_merged $child "$(workload_region heap)"
}

@test "an executed child loads the library again" {
	requires root
	start_workload LD_PRELOAD="$PRELOAD" KSM_ENABLE_MODE=madvise -- "$PROGS/dupmem" exec mmap=8 wait
	region_mergeable $WL_PID "$(workload_region mmap)"
	grep -q libksmenable /proc/$WL_PID/maps
}

@test "KSM_ENABLE_INHERIT=0: an executed child does not load the library" {
	requires root
	start_workload LD_PRELOAD="$PRELOAD" KSM_ENABLE_MODE=madvise KSM_ENABLE_INHERIT=0 -- \
		"$PROGS/dupmem" exec mmap=8 wait
	run ! grep -q libksmenable /proc/$WL_PID/maps
	run ! region_mergeable $WL_PID "$(workload_region mmap)"
	run ! grep -qz libksmenable /proc/$WL_PID/environ
}

@test "KSM_ENABLE_INHERIT=0 keeps the other preloaded libraries" {
	requires root
	# (a sanitizer's runtime, which must come first, is one of the others)
	run env LD_PRELOAD="$(run_preload "libc.so.6 $LIB")" KSM_ENABLE_INHERIT=0 KSM_ENABLE_MODE=off sh -c 'echo "$LD_PRELOAD"'
	[ "$status" = 0 ]
	[ "$output" = "${SANITIZER_RUNTIME:+$SANITIZER_RUNTIME }libc.so.6" ]
}

@test "KSM_ENABLE_INHERIT=0 with an LD_PRELOAD of 4096 bytes or more still drops the library" {
	requires root
	local long=libc.so.6 i
	# The same library named many times over: the loader takes it once.
	for i in $(seq 1 420); do long+=" libc.so.6"; done
	[ ${#long} -ge 4096 ]
	run env LD_PRELOAD="$(run_preload "$long $LIB")" KSM_ENABLE_INHERIT=0 KSM_ENABLE_MODE=off sh -c 'echo "$LD_PRELOAD"'
	[ "$status" = 0 ]
	[ "$output" = "${SANITIZER_RUNTIME:+$SANITIZER_RUNTIME }$long" ]
}

@test "KSM_ENABLE_INHERIT=0 in prctl mode: the kernel still passes the flag through exec (6.7+)" {
	requires root prctl
	start_workload LD_PRELOAD="$PRELOAD" KSM_ENABLE_INHERIT=0 -- "$PROGS/dupmem" exec getmerge wait
	run ! grep -q libksmenable /proc/$WL_PID/maps
	grep -qx "merge_any $WL_PID 1" "$WL_OUT"
}
