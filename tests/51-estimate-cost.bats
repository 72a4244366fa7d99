#!/usr/bin/env bats
# ksm-run --estimate's cost: ksmd's CPU-seconds and the seconds to the
# savings (the model of launcher/eval/scancost.c), and the host's scan cost
# that real runs measure and keep (launcher/host/scancal.c), refused when
# it was planted or is corrupt.
# ci: lock asan

load helpers
load launcher_helpers
load estimate_helpers

LAUNCHER_REQUIRES="root ksm jq"
CAL_DIR=/var/lib/ksm-run
CAL=$CAL_DIR/scan-cost

# Each test starts with no calibration kept; the host's own is put back.
setup_extra() {
	settle_ksm
	CAL_DIR_WAS=0
	[ -d "$CAL_DIR" ] && CAL_DIR_WAS=1
	if [ -e "$CAL" ] || [ -L "$CAL" ]; then mv "$CAL" "$BATS_TEST_TMPDIR/scan-cost.saved"; fi
}
teardown_extra() {
	rm -f "$CAL"
	[ -d "$CAL_DIR" ] && chown root:root "$CAL_DIR" && chmod 0755 "$CAL_DIR"
	if [ -e "$BATS_TEST_TMPDIR/scan-cost.saved" ] || [ -L "$BATS_TEST_TMPDIR/scan-cost.saved" ]; then
		mv "$BATS_TEST_TMPDIR/scan-cost.saved" "$CAL"
	elif [ "$CAL_DIR_WAS" = 0 ] && [ -d "$CAL_DIR" ]; then
		rmdir "$CAL_DIR"
	fi
}

# The model's time at a rate, by hand: two passes of PAGES/N batches of
# MS + EXTRA ms and PAGES x NS of CPU.
by_hand() {   # PAGES N MS NS EXTRA
	awk -v p="$1" -v n="$2" -v ms="$3" -v ns="$4" -v e="$5" \
		'BEGIN { printf "%.2f %.2f\n", 2 * (p / n * (ms + e) / 1000 + p * ns / 1e9), 2 * p * ns / 1e9 }'
}

# num_eq A B: equal numbers, as jq may print 2500.0 as 2500.
num_eq() { awk -v a="$1" -v b="$2" 'BEGIN { d = a - b; exit !(a != "" && b != "" && d < 0.006 && d > -0.006) }'; }

valid_calibration() {   # a file as a run writes it: 2000 ns a page, 3 ms extra
	printf '# test\nns_per_page 2000\nbatch_extra_ms 3\npages 500000\ncpu_seconds 1\nkernel test\n'
}

@test "estimate cost: --scan-rate takes PAGES/MS, only with --estimate (125 otherwise)" {
	run --separate-stderr "$KSM_RUN" --estimate=$$ --scan-rate=5000
	[ "$status" = 125 ]
	[[ $stderr == *"--scan-rate=5000: not PAGES/MILLISECONDS"* ]]
	run --separate-stderr "$KSM_RUN" --estimate=$$ --scan-rate=0/10
	[ "$status" = 125 ]
	[[ $stderr == *"--scan-rate=0/10: PAGES is 1 to 10000000"* ]]
	run --separate-stderr "$KSM_RUN" --estimate=$$ --scan-rate=5000/10x
	[ "$status" = 125 ]
	run --separate-stderr "$KSM_RUN" --scan-rate=5000/10 -- true
	[ "$status" = 125 ]
	[[ $stderr == *"--scan-rate is not an option of a command's run"* ]]
}

@test "estimate cost: uncalibrated, the default per-page cost, beside the savings in JSON and text" {
	start_workload a -- "$PROGS/dupmem" merge=auto mmap=16 wait
	estimate "$(wl_pid a)" --scan-rate=2000/20
	[ "$(est cost.calibrated)" = false ]
	[ "$(est cost.calibrated_kernel)" = null ]
	num_eq "$(est cost.ns_per_page)" 2500
	num_eq "$(est cost.batch_extra_ms)" 0
	read -r secs cpu <<<"$(by_hand "$(est candidate_pages)" 2000 20 2500 0)"
	num_eq "$(est cost.scan_rate.seconds)" "$secs"
	num_eq "$(est cost.scan_rate.ksmd_cpu_seconds)" "$cpu"
	[ "$(est cost.scan_rate.pages_to_scan)" = 2000 ]
	[ "$(est cost.scan_rate.full_scans)" = 2 ]
	[ "$(est cost.scan_rate.cpu_bound)" = false ]
	read -r secs cpu <<<"$(by_hand "$(est candidate_pages)" 5000 10 2500 0)"
	num_eq "$(est cost.default_tuning.seconds)" "$secs"
	num_eq "$(est cost.default_tuning.ksmd_cpu_seconds)" "$cpu"
	[ "$(est cost.default_tuning.pages_to_scan)" = 5000 ]
	# Still memory's steady rate: a full scan every 120 s, 100 pages a wake-up at least.
	[ "$(est cost.default_tuning.steady_pages_to_scan)" -ge 100 ]
	[ "$(est cost.default_tuning.steady_sleep_millisecs)" -ge 20 ]
	[ "$(est cost.default_tuning.steady_sleep_millisecs)" -le 1000 ]
	[ "$(est cost.cow_faults_per_minute)" = null ]
	run --separate-stderr "$KSM_RUN" --estimate="$(wl_pid a)" --scan-rate=2000/20
	[ "$status" = 0 ]
	[[ $output == *"uncalibrated"* ]]
	[[ $output == *"default tuning (5000/10 ms boost)"* ]]
	[[ $output == *"at 2000 pages every 20 ms"* ]]
}

@test "estimate cost: a kept calibration is used; a planted or corrupt one is refused with the reason" {
	start_workload a -- "$PROGS/dupmem" merge=auto mmap=8 wait
	mkdir -p "$CAL_DIR"
	valid_calibration >"$CAL"
	estimate "$(wl_pid a)" --scan-rate=5000/10
	[ "$(est cost.calibrated)" = true ]
	[ "$(est cost.calibrated_kernel)" = test ]
	num_eq "$(est cost.ns_per_page)" 2000
	num_eq "$(est cost.batch_extra_ms)" 3
	read -r secs cpu <<<"$(by_hand "$(est candidate_pages)" 5000 10 2000 3)"
	num_eq "$(est cost.scan_rate.seconds)" "$secs"
	num_eq "$(est cost.scan_rate.ksmd_cpu_seconds)" "$cpu"
	# Each refusal: a message that names the file and why, the default used, exit 0.
	refused() {   # WHAT-THE-MESSAGE-SAYS
		run --separate-stderr "$KSM_RUN" --estimate="$(wl_pid a)" --json
		[ "$status" = 0 ] || return 1
		[[ $stderr == *"the scan cost kept on this host is not used"*"$1"* ]] || { echo "stderr: $stderr"; return 1; }
		[ "$(jq -r .cost.calibrated <<<"$output")" = false ] || return 1
		num_eq "$(jq -r .cost.ns_per_page <<<"$output")" 2500
	}
	valid_calibration >"$BATS_TEST_TMPDIR/elsewhere"
	rm -f "$CAL" && ln -s "$BATS_TEST_TMPDIR/elsewhere" "$CAL"
	refused "$CAL: it is a symbolic link"
	rm -f "$CAL" && valid_calibration >"$CAL" && chmod 0666 "$CAL"
	refused "$CAL: others can write it"
	chmod 0644 "$CAL" && chown nobody "$CAL"
	refused "$CAL: it belongs to another user"
	# (a hard link must be made within one file system: beside it)
	rm -f "$CAL" && valid_calibration >"$CAL.other" && ln "$CAL.other" "$CAL"
	refused "$CAL: it has another name"
	rm -f "$CAL.other"
	rm -f "$CAL" && mkfifo "$CAL"
	refused "$CAL: not a regular file"
	rm -f "$CAL" && printf 'ns_per_page 20\nbatch_extra_ms 0\npages 500000\ncpu_seconds 1\n' >"$CAL"
	refused "$CAL: ns_per_page does not match cpu_seconds over pages"
	printf 'ns_per_page lots\n' >"$CAL"
	refused "$CAL: line 1: 'lots' is not a number"
	valid_calibration >"$CAL" && chmod 0777 "$CAL_DIR"
	refused "$CAL_DIR: others can write it"
}

# ksmd's CPU in clock ticks (utime and stime of its stat).
ksmd_ticks() { awk '{ print $14 + $15 }' "/proc/$(pgrep -x ksmd | head -1)/stat"; }
# scanned_since PAGES TICKS: ksmd has scanned twice what a measure needs
# (scancal.h: 200,000 pages and 0.5 s of CPU) since it had PAGES and TICKS.
scanned_since() {
	[ $(($(cat $KSM/pages_scanned) - $1)) -ge 400000 ] && [ $(($(ksmd_ticks) - $2)) -ge "$(getconf CLK_TCK)" ]
}

@test "estimate cost: a run at a fixed rate measures the host's scan cost and keeps it" {
	[ "$(cat $KSM/pages_scanned 2>/dev/null)" ] || skip "no pages_scanned (Linux 6.6+): nothing to measure"
	[ ! -e "$CAL" ]
	# 64 MiB of duplicates, 16,384 pages a pass, which the command keeps
	# until ksmd has scanned enough at ksm-run's rate: a fixed 6 s was not
	# enough once CI's other suite ran its builds beside it.
	start_workload -- timeout 120 "$KSM_RUN" -q --pages-to-scan=5000 --sleep-millisecs=10 -- \
		"$PROGS/dupmem" merge=auto mmap=32 unique=32 wait
	local pages ticks
	pages=$(cat $KSM/pages_scanned) ticks=$(ksmd_ticks)
	wait_until 100 scanned_since "$pages" "$ticks"
	stop_workload
	[ "$WL_STATUS" = 0 ] || { cat "$WL_ERR"; false; }
	[ -f "$CAL" ]
	[ ! -L "$CAL" ]
	[ "$(stat -c '%U %a' "$CAL")" = "root 644" ]
	[ "$(stat -c '%U' "$CAL_DIR")" = root ]
	ns=$(awk '$1 == "ns_per_page" { print $2 }' "$CAL")
	awk -v n="$ns" 'BEGIN { exit !(n >= 10 && n <= 1000000) }'
	grep -q "^kernel $(uname -r)\$" "$CAL"
	start_workload a -- "$PROGS/dupmem" merge=auto mmap=8 wait
	estimate "$(wl_pid a)"
	[ "$(est cost.calibrated)" = true ]
	[ "$(est cost.calibrated_kernel)" = "$(uname -r)" ]
	awk -v a="$(est cost.ns_per_page)" -v b="$ns" 'BEGIN { exit !(a - b < 0.1 && b - a < 0.1) }'
}

@test "estimate cost: --settle gives the merged pages written again a minute" {
	start_workload a -- "$PROGS/dupmem" merge=auto mmap=8 churn=4 wait
	estimate "$(wl_pid a)" --settle=1
	[ "$(est volatile_pages)" -gt 0 ]
	num_eq "$(est cost.cow_faults_per_minute)" "$(( $(est volatile_pages) * 60 ))"
	run --separate-stderr "$KSM_RUN" --estimate="$(wl_pid a)" --settle=1
	[[ $output == *"merged pages a minute would be copied on write again"* ]]
}
