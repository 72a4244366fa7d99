#!/usr/bin/env bats
# ksm-run: the report, checked against sysfs and /proc read directly, on a
# workload that really merges.
# ci: lock asan guest

load helpers
load launcher_helpers

LAUNCHER_REQUIRES="root ksm jq"

setup_extra() { REPORT=$BATS_TEST_TMPDIR/report.json; }


# within A B PERCENT: |A - B| <= PERCENT% of max(|A|, |B|, 1000).
within() {
	awk -v a="$1" -v b="$2" -v p="$3" 'BEGIN {
		d = a - b; if (d < 0) d = -d
		m = a < 0 ? -a : a; n = b < 0 ? -b : b; if (n > m) m = n; if (m < 1000) m = 1000
		exit !(d <= m * p / 100) }'
}

@test "JSON report: figures match sysfs and /proc on a merging workload" {
	# (kernel-agnostic figures: tests/47-kernel-figures.bats)
	requires prctl general_profit
	local start_profit start_shared start_scans
	settle_ksm
	start_profit=$(sysfs general_profit)
	start_shared=$(sysfs pages_shared)
	start_scans=$(sysfs full_scans)
	start_workload $NO_LSAN -- "$KSM_RUN" --json --report-file="$REPORT" --interval=0.2 "${FAST_OPTS[@]}" -- \
		"$PROGS/dupmem" mmap=48 wait
	local pid addr direct
	pid=$(awk '$1 == "region" { print $4; exit }' "$WL_OUT")
	addr=$(workload_region mmap)
	wait_until 20 region_merged "$pid" "$addr"
	# Let the scan finish the region, then read the process directly.
	wait_until 20 merging_at_least "$pid" 12000
	direct=$(merged_pages "$pid")
	# Several samples (interval 0.2 s) while ksmd keeps scanning.
	sleep 1
	# Stop ksmd before the command ends, so that it cannot clean up after
	# the exit between ksm-run's last sample and this test's reading.
	echo 0 >$KSM/run
	stop_workload
	[ "$WL_STATUS" = 0 ]

	run -0 jq -e . "$REPORT"
	[ "$(json_of "$REPORT" '.exit.how')" = exited ]
	[ "$(json_of "$REPORT" '.exit.code')" = 0 ]
	[ "$(json_of "$REPORT" '.exit.status')" = 0 ]
	[ "$(json_of "$REPORT" '.command | join(" ")')" = "$PROGS/dupmem mmap=48 wait" ]
	[ "$(json_of "$REPORT" '.pid')" = "$pid" ]

	# Start: exactly what sysfs held before (ksmd was stopped).
	[ "$(json_of "$REPORT" .general_profit.start)" = "$start_profit" ]
	[ "$(json_of "$REPORT" .system.pages_shared.start)" = "$start_shared" ]
	[ "$(json_of "$REPORT" .system.full_scans.start)" = "$start_scans" ]
	# End: what sysfs holds now (ksmd is stopped).
	within "$(json_of "$REPORT" .general_profit.end)" "$(sysfs general_profit)" 1
	within "$(json_of "$REPORT" .system.pages_sharing.end)" "$(sysfs pages_sharing)" 1
	within "$(json_of "$REPORT" .system.full_scans.end)" "$(sysfs full_scans)" 1
	# (another KSM user's pages, kept while ksmd is stopped, count as left over: no delta then)
	[ "$(json_of "$REPORT" '.general_profit.delta == .general_profit.end - .general_profit.start or
		(.counters_left_over and .general_profit.delta == null)')" = true ]
	# 48 MiB of duplicates: general_profit grew by most of it.
	[ "$(json_of "$REPORT" '.general_profit.peak >= .general_profit.end')" = true ]
	[ "$(json_of "$REPORT" '.general_profit.peak - .general_profit.start > 40000000')" = true ]
	[ "$(json_of "$REPORT" .full_scans.completed)" -ge 2 ]
	# The mean needs full_scans to have moved at two samples; on a loaded
	# host ksmd may have been seen moving at one only: unknown, not 0.
	[ "$(json_of "$REPORT" '.full_scans.mean_scan_s == null or .full_scans.mean_scan_s > 0')" = true ] ||
		{ json_of "$REPORT" .full_scans; return 1; }
	[ "$(json_of "$REPORT" .system.pages_scanned.delta)" -gt 0 ]
	[ "$(json_of "$REPORT" '.ksmd.cpu_s >= 0')" = true ]

	# The process: its peak is what /proc said, and it is the whole tree.
	local peak
	peak=$(json_of "$REPORT" ".processes[] | select(.pid == $pid) | .peak_ksm_merging_pages")
	[ "$peak" -ge "$direct" ]
	[ "$peak" -le $((12288 + 1024)) ]
	[ "$(json_of "$REPORT" .tree.processes)" = 1 ]
	[ "$(json_of "$REPORT" .tree.peak_ksm_merging_pages)" = "$peak" ]
	[ "$(json_of "$REPORT" .tree.peak_merged_bytes)" = $((peak * $(getconf PAGESIZE))) ]
	[ "$(json_of "$REPORT" ".processes[] | select(.pid == $pid) | .ksm_process_profit > 40000000")" = true ]
	[ "$(json_of "$REPORT" ".processes[] | select(.pid == $pid) | .peak_ksm_process_profit >= .ksm_process_profit")" = true ]
	[ "$(json_of "$REPORT" '.tree.peak_ksm_process_profit >= .tree.ksm_process_profit')" = true ]
	[ "$(json_of "$REPORT" ".processes[] | select(.pid == $pid) | .library")" = true ]
	[ "$(json_of "$REPORT" ".processes[] | select(.pid == $pid) | .exit_line")" = true ]

	# The knobs in force during the run.
	[ "$(json_of "$REPORT" .knobs.pages_to_scan)" = 20000 ]
	[ "$(json_of "$REPORT" .knobs.sleep_millisecs)" = 10 ]
	[ "$(json_of "$REPORT" .knobs.advisor_mode)" = none ]
	# The test's own "echo 0 >run" above may be seen before the end, and then
	# it is said, and yielded to, as any other writer's change is.
	[ "$(json_of "$REPORT" '.tuning | test("^user(; at [0-9:]{8} someone else set run 1 -> 0; yielded to it(: .*)?)?$")')" = true ] ||
		{ json_of "$REPORT" .tuning; return 1; }
}

@test "the process tree: a forked child is found and attributed" {
	start_workload $NO_LSAN -- "$KSM_RUN" --json --report-file="$REPORT" --interval=0.2 "${FAST_OPTS[@]}" -- \
		"$PROGS/dupmem" fork mmap=16 wait
	local child parent addr
	child=$(awk '$1 == "region" { print $4; exit }' "$WL_OUT")
	addr=$(workload_region mmap)
	wait_until 20 region_merged "$child" "$addr"
	parent=$(awk '/^PPid:/ { print $2 }' /proc/$child/status)
	sleep 0.5	# one more sample with the child merged
	stop_workload
	[ "$(json_of "$REPORT" .tree.processes)" = 2 ]
	[ "$(json_of "$REPORT" ".processes[] | select(.pid == $child) | .ppid")" = "$parent" ]
	[ "$(json_of "$REPORT" ".processes[] | select(.pid == $child) | .peak_ksm_merging_pages > 3000")" = true ]
	[ "$(json_of "$REPORT" ".processes[] | select(.pid == $parent) | .ppid")" != null ]
}

@test "text report: exit, system-wide figures apart from the tree's, knobs" {
	run -0 --separate-stderr "$KSM_RUN" --interval=0.2 "${FAST_OPTS[@]}" -- "$PROGS/dupmem" mmap=8 sleep=500
	[[ $stderr == *"ksm-run: report"* ]]
	[[ $stderr == *"ended:    exit status 0 after"* ]]
	[[ $stderr == *"system-wide, every process on this machine (not only this command)"* ]]
	[[ $stderr == *"general_profit"* ]]
	[[ $stderr == *"ksmd CPU"* ]]
	[[ $stderr == *"this command's process tree (what this command earned)"* ]]
	[[ $stderr == *"knobs at the end:"*"pages_to_scan=20000"* ]]
}

@test "-q: no report at all; --report-file: nothing on stderr" {
	run -0 --separate-stderr "$KSM_RUN" -q -- true
	[ -z "$stderr" ]
	run -0 --separate-stderr "$KSM_RUN" --report-file="$REPORT" -- true
	[ -z "$stderr" ]
	grep -q "ksm-run: report" "$REPORT"
}

@test "the report of a command killed by a signal" {
	run -137 "$KSM_RUN" --json --report-file="$REPORT" -- "$PROGS/sigprog" raise 9
	[ "$(json_of "$REPORT" .exit.how)" = signaled ]
	[ "$(json_of "$REPORT" .exit.signal)" = 9 ]
	[ "$(json_of "$REPORT" .exit.signal_name)" = SIGKILL ]
	[ "$(json_of "$REPORT" .exit.status)" = 137 ]
	[ "$(json_of "$REPORT" .exit.code)" = null ]
}

rmap_items() { awk '$1 == "ksm_rmap_items" { print $2 }' "/proc/$1/ksm_stat"; }
ksm_merging() { merged_pages "$1"; }
both_regions() { [ "$(grep -c '^region ' "$WL_OUT")" = 2 ] && grep -q '^READY ' "$WL_OUT"; }

@test "the saved figure counts KSM pages once, by frame: a tree that alone merges saved what pages_sharing says" {
	requires prctl general_profit kpageflags_ksm
	local bg main page expected
	page=$(getconf PAGESIZE)
	# What earlier tests left dropped first.
	settle_ksm
	# Two processes with the same 16 MiB; the first outlives the command.
	start_workload $NO_LSAN -- "$KSM_RUN" --json --report-file="$REPORT" --interval=0.2 "${FAST_OPTS[@]}" -- \
		sh -c "\"$PROGS/dupmem\" mmap=16 sleep=60000 & exec \"$PROGS/dupmem\" mmap=16 wait"
	wait_until 10 both_regions
	main=$(awk '$1 == "READY" { print $2 }' "$WL_OUT")
	bg=$(awk -v p="$main" '$1 == "region" && $4 != p { print $4 }' "$WL_OUT")
	[ -n "$bg" ] && [ -n "$main" ] && [ "$bg" != "$main" ]
	wait_until 30 merging_at_least "$bg" 4096
	wait_until 30 merging_at_least "$main" 4096
	# A frame pass runs 10 s after the last, when the merged pages changed.
	sleep 11
	echo 0 >$KSM/run
	# All 8192 pages hold one content: KSM keeps one page per max_page_sharing
	# mappings, and the kernel counts 64 bytes per rmap item against them.
	local m r sharing
	m=$(($(ksm_merging "$bg") + $(ksm_merging "$main")))
	r=$(($(rmap_items "$bg") + $(rmap_items "$main")))
	sharing=$((m - (m + $(sysfs max_page_sharing) - 1) / $(sysfs max_page_sharing)))
	expected=$((sharing * page - r * 64))
	stop_workload
	[ "$(json_of "$REPORT" .saved.rule)" = frames ]
	echo "saved: $(json_of "$REPORT" .saved) expected $expected (merging $m, rmap items $r)"
	# The peak (the last count may come after the first process ended).
	within "$(json_of "$REPORT" .saved.bytes)" "$expected" 1
	[ "$(json_of "$REPORT" '.saved.bytes >= .saved.last_bytes')" = true ]
	# The sum of the processes' profits counts the copy KSM keeps too.
	[ "$(json_of "$REPORT" '.tree.peak_ksm_process_profit > .saved.bytes')" = true ]
	[ "$(json_of "$REPORT" '.saved.candidate_bytes >= 32 * 1048576')" = true ]
	# The process still running is named, in the report and on stderr.
	[ "$(json_of "$REPORT" '.survivors | join(",")')" = "$bg" ]
	grep -q "1 process of the command's tree is still running after it ended" "$(wl_err)"
	kill "$bg"
}

@test "text report: the saved line first, rows that merged next to nothing folded (--report-all lists them), survivors named" {
	# (the survivor's output away from bats's pipe, which run reads to its end)
	local script="true; sleep 31.25 >/dev/null 2>&1 & \"$PROGS/dupmem\" mmap=8 merged=2000 sleep=600"
	run -0 --separate-stderr "$KSM_RUN" --interval=0.2 "${FAST_OPTS[@]}" -- sh -c "$script"
	[[ $stderr == *"enabled:  "*"saved:    "*"system-wide"* ]]
	echo "$stderr" | grep -Eq '^ +[0-9]+ +[0-9]+ dupmem '
	# Under a sanitizer every process merges pages of the runtime's shadow
	# (more than 64 KiB), so none is folded there.
	if [ -z "$SANITIZER_RUNTIME" ]; then
		[[ $stderr == *"that merged under 64 KiB not listed: --report-all lists them"* ]]
		run ! grep -Eq '^ +[0-9]+ +[0-9]+ sh ' <<<"$stderr"
	fi
	[[ $stderr == *"PPID: the parent when it merged; LIBRARY: the library's mode"* ]]
	[[ $stderr == *"WARNING: 1 process of the command's tree still running"*"(sleep)"* ]]
	kill $(pgrep -fx 'sleep 31.25')
	run -0 --separate-stderr "$KSM_RUN" --report-all --interval=0.2 "${FAST_OPTS[@]}" -- sh -c 'true; sleep 0.5'
	echo "$stderr" | grep -Eq '^ +[0-9]+ +[0-9]+ sh '
	[ -n "$SANITIZER_RUNTIME" ] || [[ $stderr == *"no process of the tree merged 64 KiB or more"* ]]
	[[ $stderr != *"still running"* ]]
}

@test "--end-survivors: the tree's processes still running when the command ends get TERM, then KILL after 5 s" {
	local script='sleep 30.5 >/dev/null 2>&1 & sh -c "trap \"\" TERM; exec sleep 31.5" >/dev/null 2>&1 & sleep 0.5'
	run -0 --separate-stderr "$KSM_RUN" --end-survivors --json --report-file="$REPORT" --interval=0.2 -- sh -c "$script"
	[ "$(json_of "$REPORT" .ended_survivors)" = 2 ]
	[ "$(json_of "$REPORT" .killed_survivors)" = 1 ]
	[ "$(json_of "$REPORT" '.survivors | length')" = 0 ]
	run ! pgrep -fx 'sleep 30.5'
	run ! pgrep -fx 'sleep 31.5'
	run -125 --separate-stderr "$KSM_RUN" --daemon --end-survivors
	[[ $stderr == *"--end-survivors is not an option of --daemon"* ]]
}

# leave_counters_behind: a run that merges and ends with ksmd stopped, as
# ksm-run leaves a machine where KSM was off: the counters keep its pages.
leave_counters_behind() {
	local pid
	start_workload leftover -- "$KSM_RUN" -q "${FAST_OPTS[@]}" -- "$PROGS/dupmem" mmap=32 wait
	pid=$(awk '$1 == "region" { print $4; exit }' "$(wl_out leftover)")
	wait_until 20 merging_at_least "$pid" 6000
	# ksmd stopped before the process ends, so that it cannot drop its pages.
	echo 0 >$KSM/run
	stop_workload leftover
	knob_is run 0
	[ "$(sysfs pages_sharing)" -gt 6000 ]
}

@test "counters left over from an earlier run: the saved line leads, the leftovers are a note, never a change" {
	requires prctl general_profit kpageflags_ksm
	settle_ksm
	leave_counters_behind
	# This run merges less than was left over: a change from the leftovers
	# would read as a loss.
	run -0 --separate-stderr "$KSM_RUN" --interval=0.2 "${FAST_OPTS[@]}" -- "$PROGS/dupmem" mmap=8 sleep=2000
	echo "$stderr"
	[[ $stderr == *"enabled:  "*"saved:    "*"system-wide"*"general_profit"*"note: left over at the start"* ]]
	[[ $stderr != *"LEFT OVER"* ]]
	run ! grep -E '^ +(general_profit|pages_[a-z]+|ksm_zero_pages) .* -> ' <<<"$stderr"
	run ! grep -E '\(-[0-9.]+ [KMGT]?i?B\)' <<<"$stderr"
	grep -Eq '^    general_profit  -?[0-9.]+ [KMGT]?i?B at the end' <<<"$stderr"
	grep -Eq '^    pages_sharing   [0-9]+ pages at the end$' <<<"$stderr"
	# The JSON: no change from the leftovers (null); the start figures kept
	# as read (ksmd may drop some before: ksm-run starts it first).
	settle_ksm
	leave_counters_behind
	run -0 "$KSM_RUN" --json --report-file="$REPORT" --interval=0.2 "${FAST_OPTS[@]}" -- \
		"$PROGS/dupmem" mmap=8 sleep=2000
	[ "$(json_of "$REPORT" .counters_left_over)" = true ]
	[ "$(json_of "$REPORT" '.general_profit.start > 0 and .system.pages_sharing.start > 0')" = true ]
	[ "$(json_of "$REPORT" .general_profit.delta)" = null ]
	[ "$(json_of "$REPORT" '[.system | to_entries[] | select(.value.delta != null) | .key] | sort | join(",")')" = \
		full_scans,pages_scanned,pages_skipped ]
	[ "$(json_of "$REPORT" '.general_profit | has("peak_live")')" = true ]
	# What the command saved comes first.
	[ "$(json_of "$REPORT" '[keys_unsorted[]] | index("saved") < index("system")')" = true ]
	[ "$(json_of "$REPORT" '.saved.bytes > 4 * 1048576')" = true ]
	# No leftovers for the tests after this one.
	settle_ksm
}

@test "the tuning line ends with the rate in force, which the knobs at the end show: a boost again is not hidden" {
	local fd
	start_workload -- "$KSM_RUN" --interval=0.5 -- "$PROGS/dupmem" mmap=32 wait mmap=64 wait
	# The boost hands over to the steady rate once the 32 MiB have merged.
	wait_until 40 phase_is 2
	# 64 MiB more: new memory to merge, boosted again until the end.
	fd=${WL_FDS[main]}
	echo more >&"$fd"
	wait_until 20 phase_is 1
	stop_workload
	cat "$WL_ERR"
	grep -Eq '^  tuning:   boost 5000/10ms for [0-9]+ s, then [0-9]+ pages every [0-9]+ ms .*; then boosted again \([a-z ]+\): 5000 pages every 10 ms$' "$WL_ERR"
	grep -Eq '^  knobs at the end: .*pages_to_scan=5000 sleep_millisecs=10 ' "$WL_ERR"
}

@test "--json on stderr: the report is the whole last line, also after output that ended mid-line; --help points to --report-file" {
	run -0 --separate-stderr "$KSM_RUN" --json -- sh -c 'printf "no newline" >&2'
	[ "$(head -n 1 <<<"$stderr")" = "no newline" ]
	tail -n 1 <<<"$stderr" | jq -e '.command == ["sh", "-c", "printf \"no newline\" >&2"]'
	run -0 "$KSM_RUN" --help
	[[ $output == *"on stderr, amid the command's own output"*"--report-file=PATH  append it there instead: do so with --json, to parse it"* ]]
}

@test "--attach's report: counters left over are a note there too, never a change" {
	requires prctl general_profit
	local attach_pid
	settle_ksm
	leave_counters_behind
	start_workload target -- "$PROGS/dupmem" mmap=8 wait
	"$KSM_RUN" --attach="$(wl_pid target)" --interval=0.2 "${FAST_OPTS[@]}" >/dev/null \
		2>"$BATS_TEST_TMPDIR/attach.err" 3>&- &
	attach_pid=$!
	wait_until 20 merging_at_least "$(wl_pid target)" 1500
	sleep 0.5	# a sample with it merged
	stop_workload target
	wait_until 20 gone "$attach_pid"
	wait "$attach_pid"
	cat "$BATS_TEST_TMPDIR/attach.err"
	grep -q '^  attached: ' "$BATS_TEST_TMPDIR/attach.err"
	grep -q '^    note: left over at the start' "$BATS_TEST_TMPDIR/attach.err"
	run ! grep -E '^ +(general_profit|pages_[a-z]+|ksm_zero_pages) .* -> ' "$BATS_TEST_TMPDIR/attach.err"
	settle_ksm
}
