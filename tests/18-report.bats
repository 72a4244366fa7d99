#!/usr/bin/env bats
# KSM_ENABLE_REPORT: one JSON line per process at exit, read here by jq.
# ci: lock asan guest

load helpers

setup_file() { save_knobs; fast_ksm; }
teardown_file() { restore_knobs; }
teardown() { stop_workloads; }

@test "a process appends one valid JSON line with its pid, mode and final ksm_stat" {
	requires root ksm prctl
	r=$BATS_TEST_TMPDIR/report.jsonl
	start_workload LD_PRELOAD="$PRELOAD" KSM_ENABLE_REPORT="$r" -- "$PROGS/dupmem" mmap=16 wait
	wait_until 20 region_merged $WL_PID "$(workload_region mmap)"
	pid=$WL_PID
	merging=$(awk '$1 == "ksm_merging_pages" { print $2 }' /proc/$WL_PID/ksm_stat)
	stop_workload
	[ "$(wc -l <"$r")" = 1 ]
	[ "$(jq -r .pid "$r")" = "$pid" ]
	[ "$(jq -r .comm "$r")" = dupmem ]
	[ "$(jq -r .mode "$r")" = prctl ]
	[ "$(jq -r .error "$r")" = null ]
	# ksm_stat's ksm_merge_any line came in Linux 6.14: without it, null.
	if grep -q '^ksm_merge_any' /proc/self/ksm_stat; then
		[ "$(jq -r .ksm_stat.ksm_merge_any "$r")" = true ]
	else
		[ "$(jq -r .ksm_stat.ksm_merge_any "$r")" = null ]
	fi
	# the final count is at least what was merged while it ran
	[ "$(jq -r .ksm_stat.ksm_merging_pages "$r")" -ge $((merging * 9 / 10)) ]
	[ "$(jq -r '.ksm_stat.ksm_process_profit | type' "$r")" = number ]
}

@test "madvise mode reports the regions and bytes advised" {
	r=$BATS_TEST_TMPDIR/report.jsonl
	# Passes every 100 ms for 1.2 s: two at least, however late the thread runs.
	run env LD_PRELOAD="$PRELOAD" KSM_ENABLE_ALLOW=anon KSM_ENABLE_RESCAN_MS=100 KSM_ENABLE_REPORT="$r" \
		"$PROGS/dupmem" mmap=8 sleep=1200
	[ "$status" = 0 ]
	[ "$(jq -r .mode "$r")" = madvise ]
	[ "$(jq -r .regions_advised "$r")" -ge 1 ]
	[ "$(jq -r .bytes_advised "$r")" -ge $((8 << 20)) ]
	[ "$(jq -r .passes "$r")" -ge 2 ]
}

@test "an executed image and its forked child each add their line (the image before exec does not)" {
	r=$BATS_TEST_TMPDIR/report.jsonl
	run env LD_PRELOAD="$PRELOAD" KSM_ENABLE_REPORT="$r" "$PROGS/dupmem" exec fork exit=0
	[ "$status" = 0 ]
	[ "$(jq -s length "$r")" = 2 ]
	# one line is the other's child
	parent=$(jq -r .pid "$r" | sort -n | head -1)
	child=$(jq -r .pid "$r" | sort -n | tail -1)
	[ "$(jq -r "select(.pid == $child) | .ppid" "$r")" = "$parent" ]
}

@test "many processes ending together never interleave their lines" {
	local r=$BATS_TEST_TMPDIR/report.jsonl i pids=()
	for i in $(seq 40); do
		env LD_PRELOAD="$PRELOAD" KSM_ENABLE_MODE=madvise KSM_ENABLE_REPORT="$r" "$PROGS/dupmem" mmap=1 &
		pids+=($!)
	done
	# These, not every child of the test's shell: bats's timeout timer is one.
	wait "${pids[@]}"
	[ "$(wc -l <"$r")" = 40 ]
	[ "$(jq -s length "$r")" = 40 ]
}

@test "a configuration error is reported too (mode none, with the reason)" {
	r=$BATS_TEST_TMPDIR/report.jsonl
	run env LD_PRELOAD="$PRELOAD" KSM_ENABLE_MODE=bogus KSM_ENABLE_REPORT="$r" "$PROGS/dupmem"
	[ "$(jq -r .mode "$r")" = none ]
	[ "$(jq -r .error "$r")" = configuration ]
}

@test "a report path that cannot be opened: one warning at exit, status unchanged" {
	run --separate-stderr env LD_PRELOAD="$PRELOAD" KSM_ENABLE_REPORT=/nonexistent/dir/r.json "$PROGS/dupmem" exit=4
	[ "$status" = 4 ]
	[[ "$stderr" == *"KSM_ENABLE_REPORT=/nonexistent/dir/r.json: cannot open"* ]]
}
