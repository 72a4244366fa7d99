#!/usr/bin/env bats
# ksm-run: which mechanism enables KSM in the command, and saying so.  On
# a kernel without PR_SET_MEMORY_MERGE (before 6.4) the library advises
# instead, and getmerge reads -1 (EINVAL) where nothing set the flag.
# ci: lock asan guest

load helpers
load launcher_helpers

LAUNCHER_REQUIRES="root ksm"

# A static binary: the library cannot load in it, only the prctl made
# before exec covers it.
setup_file_extra() { link_static_dupmem; }

@test "a static binary is covered by the prctl before exec, and the report says so" {
	requires prctl
	needs_static
	run -0 "$KSM_RUN" -q -- "$STATIC" getmerge
	[[ $output == "merge_any "*" 1" ]]
	run -0 "$KSM_RUN" --json --report-file="$BATS_TEST_TMPDIR/r.json" -- "$STATIC" sleep=300 getmerge
	[ "$(json_of "$BATS_TEST_TMPDIR/r.json" .coverage.library_loaded)" = false ]
	[ "$(json_of "$BATS_TEST_TMPDIR/r.json" .coverage.covered_by)" = prctl ]
}

@test "a static binary really merges under ksm-run" {
	requires prctl
	needs_static
	start_workload -- "$KSM_RUN" -q "${FAST_OPTS[@]}" -- "$STATIC" mmap=32 wait
	local pid addr
	addr=$(workload_region mmap)
	pid=$(awk '$1 == "region" { print $4; exit }' "$WL_OUT")
	region_mergeable "$pid" "$addr"
	wait_until 20 region_merged "$pid" "$addr"
}

@test "without the prctl (madvise mode), a static binary is not covered, and the text report says so" {
	needs_static
	run -0 --separate-stderr "$KSM_RUN" --mode=madvise --allow=all -- "$STATIC" sleep=300 getmerge
	[[ $output == "merge_any "*" $(merge_any_unset)" ]]
	[[ $stderr == *"NOTHING enabled KSM in the command"* ]]
}

@test "a dynamic program loads the library; the report names its mode" {
	run -0 "$KSM_RUN" --json --report-file="$BATS_TEST_TMPDIR/r.json" -- "$PROGS/dupmem" mmap=1 getmerge mergeable
	[ "$(json_of "$BATS_TEST_TMPDIR/r.json" .coverage.library_loaded)" = true ]
	[ "$(json_of "$BATS_TEST_TMPDIR/r.json" .coverage.covered_by)" = library ]
	if [ "$(merge_any_unset)" = 0 ]; then
		[[ $output == *"merge_any "*" 1"* ]]
		[ "$(json_of "$BATS_TEST_TMPDIR/r.json" '.processes[0].mode')" = prctl ]
	else
		# Before 6.4: the library's fallback advised the regions.
		[[ $output =~ "mergeable "[0-9]+" "[1-9] ]]
		[ "$(json_of "$BATS_TEST_TMPDIR/r.json" '.processes[0].mode')" = madvise ]
	fi
}

@test "selective mode through the library: only the allowed regions are mergeable" {
	start_workload -- "$KSM_RUN" -q --mode=madvise --allow=anon --min-size=1M -- \
		"$PROGS/dupmem" mmap=8 shared=8 getmerge wait
	local pid
	pid=$(awk '$1 == "region" { print $4; exit }' "$WL_OUT")
	grep -qx "merge_any $pid $(merge_any_unset)" "$WL_OUT"
	wait_until 5 region_mergeable "$pid" "$(workload_region mmap)"
	run ! region_mergeable "$pid" "$(workload_region shared)"
}

@test "--no-preload: only the prctl, no library in the command" {
	requires prctl
	run -0 "$KSM_RUN" -q --no-preload -- sh -c 'echo "${LD_PRELOAD:-none}"'
	[ "$output" = none ]
	run -0 "$KSM_RUN" -q --no-preload -- "$PROGS/dupmem" getmerge
	[[ $output == "merge_any "*" 1" ]]
}
