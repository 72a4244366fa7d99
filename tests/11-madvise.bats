#!/usr/bin/env bats
# madvise mode: exactly the regions that the allow list selects, minus the
# deny list, become mergeable (smaps VmFlags "mg"), and they really merge.
# ci: lock asan guest

load helpers

setup_file() { save_knobs; fast_ksm; }
teardown_file() { restore_knobs; }
teardown() { stop_workloads; }

# A process with one region of each kind, all full of duplicate pages.
start_all_kinds() {
	start_workload LD_PRELOAD="$PRELOAD" "$@" -- "$PROGS/dupmem" mmap=8 heap=8 \
		file="$BATS_TEST_TMPDIR/data:8" shared=8 stack=1024 getmerge sleep=1500 wait
}

# mergeable_kinds: the kinds whose region carries "mg", e.g. "mmap heap".
mergeable_kinds() {
	local kind out=
	for kind in mmap heap file shared stack; do
		region_mergeable $WL_PID "$(workload_region $kind)" && out+="$kind "
	done
	echo "${out% }"
}

@test "allow=all (the madvise default): every private region, never a shared one" {
	requires root ksm prctl
	start_all_kinds KSM_ENABLE_MODE=madvise
	grep -qx "merge_any $WL_PID 0" "$WL_OUT"
	run mergeable_kinds
	[ "$output" = "mmap heap file stack" ]
	wait_until 20 region_merged $WL_PID "$(workload_region mmap)"
	wait_until 20 region_merged $WL_PID "$(workload_region file)"
	[ "$(region_ksm_kb $WL_PID "$(workload_region shared)")" = 0 ]
}

@test "allow=heap: only the heap, and its pages merge" {
	requires root ksm
	start_all_kinds KSM_ENABLE_ALLOW=heap
	run mergeable_kinds
	[ "$output" = "heap" ]
	wait_until 20 region_merged $WL_PID "$(workload_region heap)"
	[ "$(region_ksm_kb $WL_PID "$(workload_region mmap)")" = 0 ]
}

@test "allow=stack: only the main stack" {
	requires root ksm
	start_all_kinds KSM_ENABLE_ALLOW=stack
	run mergeable_kinds
	[ "$output" = "stack" ]
	wait_until 20 region_merged $WL_PID "$(workload_region stack)"
}

@test "allow=anon: unnamed anonymous mappings, not the heap, stack or files" {
	requires root ksm
	start_all_kinds KSM_ENABLE_ALLOW=anon
	run mergeable_kinds
	[ "$output" = "mmap" ]
	wait_until 20 region_merged $WL_PID "$(workload_region mmap)"
}

@test "allow=file:GLOB: private file mappings whose path matches" {
	requires root ksm
	start_all_kinds KSM_ENABLE_ALLOW="file:*/data"
	run mergeable_kinds
	[ "$output" = "file" ]
	wait_until 20 region_merged $WL_PID "$(workload_region file)"
	stop_workload
	start_all_kinds KSM_ENABLE_ALLOW="file:*/other"
	run mergeable_kinds
	[ "$output" = "" ]
}

@test "allow=anon:GLOB: accepted, and matches nothing on a kernel without named regions" {
	requires root
	grep -q '\[anon:' /proc/self/maps && skip "this kernel names anonymous regions"
	start_all_kinds KSM_ENABLE_ALLOW="anon:*"
	run mergeable_kinds
	[ "$output" = "" ]
	[ ! -s "$WL_ERR" ]
}

@test "deny: removes what the allow list chose" {
	requires root
	start_all_kinds KSM_ENABLE_DENY="anon,file:*"
	run mergeable_kinds
	[ "$output" = "heap stack" ]
	stop_workload
	start_all_kinds KSM_ENABLE_ALLOW="heap,anon" KSM_ENABLE_DENY=heap
	run mergeable_kinds
	[ "$output" = "mmap" ]
}

@test "KSM_ENABLE_MIN_SIZE skips smaller regions" {
	requires root
	start_workload LD_PRELOAD="$PRELOAD" KSM_ENABLE_MIN_SIZE=16M -- "$PROGS/dupmem" mmap=8 remap=16 wait
	run ! region_mergeable $WL_PID "$(workload_region mmap)"
	wait_until 20 region_mergeable $WL_PID "$(workload_region remap)"
}

@test "madvise mode clears a process-wide flag inherited from the parent" {
	requires root prctl
	not_sanitized "ASan's shadow (20 TiB of mappings), made mergeable by the inherited flag," \
		"takes the kernel minutes to unmerge page by page when the flag is cleared"
	start_workload LD_PRELOAD="$PRELOAD" KSM_ENABLE_MODE=madvise KSM_ENABLE_ALLOW=heap -- \
		"$PROGS/dupmem" merge=1 getmerge exec mmap=4 getmerge wait
	grep -qx "merge_any $WL_PID 1" "$WL_OUT"     # set by the program itself
	[ "$(grep -c "^merge_any $WL_PID 0" "$WL_OUT")" = 1 ]  # after exec
	run ! region_mergeable $WL_PID "$(workload_region mmap)"
}

# rescan_thread_sp PID: the rescan thread's stack pointer (hex, no 0x)
# while it waits in a call; task/TID/syscall says "running" otherwise.
rescan_thread_sp() {
	local comm sp
	for comm in /proc/"$1"/task/*/comm; do
		[ "$(cat "$comm" 2>/dev/null)" = ksmenable ] || continue
		sp=$(awk 'NF > 2 { print $(NF - 1) }' "${comm%/comm}/syscall" 2>/dev/null)
		[ -n "$sp" ] && { echo "${sp#0x}"; return 0; }
	done
	return 1
}

@test "the rescan thread's stack can hold no huge page: under 2 MiB, none in it" {
	requires root
	# The default 8 MiB stack got a 2 MiB huge page at its first touch on
	# 6.1 with THP "always": 2 MiB of RSS per process, and of zeros merged.
	start_workload LD_PRELOAD="$PRELOAD" KSM_ENABLE_MODE=madvise -- "$PROGS/dupmem" mmap=4 wait
	wait_until 20 rescan_thread_sp $WL_PID >/dev/null
	sp=$(rescan_thread_sp $WL_PID)
	size=$(smaps_field $WL_PID "$sp" Size | awk '{ print $1 }')
	huge=$(smaps_field $WL_PID "$sp" AnonHugePages | awk '{ print $1 }')
	echo "stack pointer $sp: mapping of $size kB, $huge kB in huge pages"
	[ -n "$size" ] && [ "$size" -lt 2048 ]
	[ "$huge" = 0 ]
}
