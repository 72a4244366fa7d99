#!/usr/bin/env bats
# The public API, the host program's view of the interposed calls, what the
# library exports, and the documentation of every setting.
# ci: lock asan guest

load helpers

setup_file() { save_knobs; fast_ksm; }
teardown_file() { restore_knobs; }
teardown() { stop_workloads; }

@test "a linked program: the constructor does nothing unasked, ksmenable_apply advises, the stats are read" {
	requires root ksm prctl
	start_workload -- "$PROGS/linked_api"
	grep -qx "merge_any $WL_PID 0" "$WL_OUT"
	grep -qx "bad-selector -1 EINVAL" "$WL_OUT"
	grep -qx "version 0.1.0" "$WL_OUT"
	n=$(awk '$1 == "apply" { print $2 }' "$WL_OUT")
	[ "$n" -ge 1 ]
	region_mergeable $WL_PID "$(workload_region mmap)"
	wait_until 20 region_merged $WL_PID "$(workload_region mmap)"
	run ! grep -qx ksmenable /proc/$WL_PID/task/*/comm
	stop_workload
	# after merging, ksmenable_read_stat sees the merged pages
	[ "$(awk -F= '/^stat merging_pages=/ { print $2 }' "$WL_OUT")" -ge 1000 ]
}

@test "errno and results of interposed calls are unchanged, in every mode" {
	for mode in prctl madvise off; do
		# (mode prctl on a kernel without it warns on stderr: the program's output is stdout)
		run --separate-stderr env LD_PRELOAD="$PRELOAD" KSM_ENABLE_MODE=$mode "$PROGS/hostcheck"
		[ "$status" = 0 ]
		[ "$output" = "hostcheck ok" ] || { echo "mode $mode: $output"; return 1; }
	done
	run "$PROGS/hostcheck"
	[ "$output" = "hostcheck ok" ]
}

@test "the library exports only the documented API and the interposed functions" {
	run sh -c "nm -D --defined-only '$LIB' | awk '{ print \$3 }' | sort | tr '\n' ' '"
	[ "$output" = "fork ksmenable_apply ksmenable_read_stat ksmenable_set_process_merge ksmenable_version madvise mlock mlock2 mlockall mmap mmap64 mremap munlock munlockall munmap posix_madvise prctl setns unshare " ]
}

@test "interposition survives a program's versioned libc references" {
	# dupmem calls mmap@GLIBC_2.2.5; the region must be advised at once.
	requires root
	start_workload LD_PRELOAD="$PRELOAD" KSM_ENABLE_MODE=madvise KSM_ENABLE_RESCAN_MS=0 -- "$PROGS/dupmem" mmap=2 wait
	region_mergeable $WL_PID "$(workload_region mmap)"
}

@test "every KSM_ENABLE_ variable the code reads is in the man page and README" {
	vars=$(grep -oh 'KSM_ENABLE_[A-Z][A-Z_]*' "$TOP"/preload/core/config.c | sort -u)
	[ -n "$vars" ]
	for v in $vars; do
		grep -q "$v" "$TOP/man/libksmenable.7" || { echo "man page lacks $v"; return 1; }
		grep -q "$v" "$TOP/README.md" || { echo "README lacks $v"; return 1; }
	done
}

@test "the man pages pass mandoc -Tlint" {
	command -v mandoc >/dev/null || skip_or_fail "no mandoc"
	run mandoc -Tlint -Wwarning "$TOP"/man/*.[1-8]
	[ "$status" = 0 ]
	[ -z "$output" ]
}
