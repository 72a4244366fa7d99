#!/usr/bin/env bats
# ksm-run --estimate: predictions on workloads of known duplicate structure,
# checked against real KSM converging on the same workload.
# ci: lock asan guest

load helpers
load launcher_helpers
load estimate_helpers

LAUNCHER_REQUIRES="root ksm jq"

# Each test starts with ksmd stopped, at the fast rates, and holding nothing
# of earlier tests (in this file or before it).
setup_extra() { settle_ksm; }

# The estimate of the targets PID[,PID]..., then what KSM really merged in
# them (their own frames: other KSM users on the host do not count).
predict_then_merge() {
	echo 0 >$KSM/run
	estimate "$1"
	converge "$1"
	read -r real_sharing real_shared real_zero <<<"$(own_ksm "$1")"
}

@test "estimate: duplicates within one process, within 2% of what KSM reaches" {
	requires root ksm
	echo 0 >$KSM/run
	start_workload a -- "$PROGS/dupmem" merge=auto mmap=8 unique=4 pairs=4 wait verify
	predict_then_merge "$(wl_pid a)"
	# 2048 equal pages (8 stable pages under max_page_sharing 256) and
	# 512 pairs: at least 2040 + 512 sharing, plus the program's own few
	[ "$(est pages_sharing)" -ge 2552 ] && [ "$(est pages_sharing)" -le 2700 ]
	[ "$(est across_process_pages)" = 0 ]
	within_pct "$(est pages_sharing)" "$real_sharing" 2
	within_pct "$(est pages_shared)" "$real_shared" 2
}

@test "estimate: duplicates across processes, within 2%" {
	requires root ksm
	echo 0 >$KSM/run
	start_workload a -- "$PROGS/dupmem" merge=auto seed=7 distinct=8 unique=2 wait verify
	start_workload b -- "$PROGS/dupmem" merge=auto seed=7 distinct=8 unique=2 wait verify
	predict_then_merge "$(wl_pid a),$(wl_pid b)"
	# 2048 pages in each process that equal the other's, and nothing within
	[ "$(est across_process_pages)" -ge 2048 ]
	[ "$(est within_process_pages)" -lt 200 ]
	within_pct "$(est pages_sharing)" "$real_sharing" 2
	[ "$(jq '.processes | length' <<<"$EST")" = 2 ]
}

@test "estimate: zero pages merge as one content with use_zero_pages=0" {
	requires root ksm
	echo 0 >$KSM/use_zero_pages
	start_workload a -- "$PROGS/dupmem" merge=auto zeros=8 mmap=2 wait
	predict_then_merge "$(wl_pid a)"
	[ "$(est zero_pages)" -ge 2048 ] && [ "$(est zero_pages)" -lt 2100 ]
	[ "$(est use_zero_pages)" = 0 ]
	within_pct "$(est pages_sharing)" "$real_sharing" 2
}

@test "estimate: zero pages are counted apart with use_zero_pages=1" {
	# (what merged into the zero page is counted by ksm_stat's ksm_zero_pages)
	requires root ksm zero_pages
	echo 1 >$KSM/use_zero_pages
	start_workload a -- "$PROGS/dupmem" merge=auto zeros=8 mmap=2 wait
	predict_then_merge "$(wl_pid a)"
	echo 0 >$KSM/use_zero_pages
	[ "$(est use_zero_pages)" = 1 ]
	within_pct "$(est zero_pages)" "$real_zero" 2
	within_pct "$(est pages_sharing)" "$real_sharing" 2
}

@test "estimate: pages already merged are recognised, not promised again" {
	requires root ksm kpageflags_ksm        # which of the frames are KSM's
	start_workload a -- "$PROGS/dupmem" merge=auto mmap=8 pairs=4 wait verify
	predict_then_merge "$(wl_pid a)"
	first=$(est pages_sharing)
	estimate "$(wl_pid a)"
	within_pct "$(est pages_sharing)" "$first" 2
	[ "$(est already_merged_pages)" -ge 2500 ]
	# what is merged already is no new profit
	profit=$(est profit_bytes)
	new=$(est new_profit_bytes)
	[ "${new#-}" -le $((profit / 50)) ]
}

@test "estimate: the table says what general_profit and the new profit each count" {
	requires root ksm
	# a merged by KSM now, b (not mergeable) only predicted: new profit = b's part.
	start_workload a -- "$PROGS/dupmem" merge=auto mmap=8 wait
	start_workload b -- "$PROGS/dupmem" seed=5 mmap=4 wait
	converge "$(wl_pid a)"
	echo 0 >$KSM/run
	run -0 "$KSM_RUN" --estimate="$(wl_pid a),$(wl_pid b)"
	echo "$output"
	local all line re='^  new profit +([0-9.]+) MiB  what KSM would add: the ([0-9.]+) MiB in all less the ([0-9.]+) MiB saved now$'
	all=$(sed -n 's/^  general_profit *\([0-9.]*\) MiB  in all, what is merged now included (rmap_items overhead .*/\1/p' <<<"$output")
	[ -n "$all" ]
	grep -Eq '^  already merged: [0-9]+ pages by KSM now; [0-9.]+ [KMG]iB shared now, saving [0-9.]+ MiB after ksmd.s rmap_items$' <<<"$output"
	line=$(grep -E "$re" <<<"$output")
	[[ $line =~ $re ]]
	# The same whole on both lines, and new = whole - saved now.
	[ "${BASH_REMATCH[2]}" = "$all" ]
	awk -v n="${BASH_REMATCH[1]}" -v a="$all" -v s="${BASH_REMATCH[3]}" \
		'BEGIN { d = n - (a - s); exit !(d < 0.11 && d > -0.11 && s > 7 && n > 3 && n < 4.2) }'
}

@test "estimate: the targets' memory and behaviour are untouched" {
	requires root
	start_workload a -- "$PROGS/dupmem" seed=3 mmap=4 unique=4 pairs=4 zeros=2 wait verify
	start_workload b -- "$PROGS/dupmem" seed=3 distinct=4 wait verify
	before=$(cat $KSM/run $KSM/pages_to_scan $KSM/sleep_millisecs)
	estimate "$(wl_pid a),$(wl_pid b)"
	run "$KSM_RUN" --estimate="$(wl_pid a),$(wl_pid b)" --settle=0.5
	[ "$status" = 0 ]
	[ "$(cat $KSM/run $KSM/pages_to_scan $KSM/sleep_millisecs)" = "$before" ]
	run ! grep -q "^VmFlags:.*mg" "/proc/$(wl_pid a)/smaps"
	stop_workloads
	[ "$(wl_status a)" = 0 ] && [ "$(wl_status b)" = 0 ]
	grep -qx "verify ok" "$(wl_out a)"
	grep -qx "verify ok" "$(wl_out b)"
}

@test "estimate: --settle counts pages that keep changing as volatile and leaves them out" {
	requires root
	start_workload a -- "$PROGS/dupmem" mmap=4 churn=4 wait
	estimate "$(wl_pid a)"
	[ "$(est volatile_pages)" = 0 ]
	estimate "$(wl_pid a)" --settle=1
	[ "$(est volatile_pages)" -ge 1024 ]
	[ "$(est pages_sharing)" -ge 1016 ]
}

@test "estimate: a second look tells memory that keeps changing, and KSM reaches its low end" {
	requires root ksm
	echo 0 >$KSM/run
	# 1024 pages alike that stay, and 1024 alike at any moment that a
	# thread rewrites every 2 ms: one pass sees up to 2040 pages_sharing,
	# one content fewer for each rewrite that comes in the middle of the
	# pass (a guest's pass of 0.1 s beside another saw 45 contents, 2027
	# pages_sharing): well over the 1016 of the pages that stay.
	start_workload a -- "$PROGS/dupmem" merge=auto mmap=4 sweep=4 wait
	predict_then_merge "$(wl_pid a)"
	[ "$(est pages_sharing)" -ge 1536 ]
	[ "$(est recheck.changed_merging_pages)" -ge 1000 ]
	[ "$(est recheck.changed_merging_pages)" -le 1100 ]
	# KSM merges only the pages that stay: the recheck's low end
	within_pct "$(est recheck.pages_sharing_low)" "$real_sharing" 3
	[ "$(est recheck.profit_bytes_low)" -lt "$(est profit_bytes)" ]
	# the text says so beside the figure
	run "$KSM_RUN" --estimate="$(wl_pid a)"
	[[ $output == *"if such pages keep changing, KSM reaches about pages_sharing"* ]]
}

@test "estimate: memory that stays keeps its figure; --settle reads everything twice instead" {
	requires root
	start_workload a -- "$PROGS/dupmem" mmap=4 pairs=2 wait
	estimate "$(wl_pid a)"
	[ "$(est recheck.seconds_after)" = 1 ]
	[ "$(est recheck.sampled_pages)" -ge 1536 ]
	[ "$(est recheck.sampled_merging_pages)" -ge 1530 ]
	[ "$(est recheck.changed_merging_pages)" = 0 ]
	[ "$(est recheck.pages_sharing_low)" = "$(est pages_sharing)" ]
	estimate "$(wl_pid a)" --settle=0.2
	[ "$(est recheck)" = null ]
}

@test "estimate: memory still arriving after the pass is said to be" {
	requires root
	# READY at 4 MiB; told to go on, 64 MiB more after 300 ms
	start_workload a -- "$PROGS/dupmem" mmap=4 wait sleep=300 mmap=64 wait
	echo go >&"${WL_FDS[a]}"
	run --separate-stderr "$KSM_RUN" --estimate="$(wl_pid a)"
	[ "$status" = 0 ]
	# How much of the 64 MiB came after the pass depends on the machine's
	# speed (a TCG guest touches it slowly): some did, and it is said.
	[[ $output == *"growing: their anonymous memory grew by "[0-9]*" MiB"* ]] || { echo "$output"; return 1; }
	estimate "$(wl_pid a)"
	# grown and done: nothing more arrives
	[[ $(est recheck.anon_kb_at_pass) -ge 65536 ]]
	[ "$(est recheck.anon_kb_at_recheck)" = "$(est recheck.anon_kb_at_pass)" ]
}

@test "estimate: pages still shared copy-on-write since a fork are not promised (KSM leaves them)" {
	requires root ksm
	# every page differs, and the child shares them all with its parent
	start_workload a -- "$PROGS/dupmem" merge=auto distinct=4 fork wait
	child=$(awk '$1 == "READY" { print $2 }' "$(wl_out a)")
	predict_then_merge "$(wl_pid a),$child"
	[ "$(est single_frame_pages)" -ge 2048 ]
	[ "$(est pages_sharing)" -lt 100 ]
	[ "$real_sharing" -lt 100 ]
}

# PAGEMAP_SCAN = _IOWR('f', 16, struct pm_scan_arg), a 96-byte struct, in
# the generic ioctl encoding (x86, arm64, riscv): what faultinject fails to
# play a kernel before 6.7, which has no ioctl on pagemap.
PAGEMAP_SCAN_IOCTL=$(( (3 << 30) | (96 << 16) | (0x66 << 8) | 16 ))

@test "estimate: terabytes of reserved address space with a few MiB present: right figures, only what is present walked" {
	requires root
	# 20 TiB reserved with MAP_NORESERVE (as an AddressSanitizer build does
	# for its shadow), 16 MiB of one content in 16 pieces spread over it
	start_workload a -- "$PROGS/dupmem" reserve=20480:16 verify wait
	# timeout: a regression to walking every page takes minutes, not a hang
	run --separate-stderr timeout 120 "$KSM_RUN" --estimate="$(wl_pid a)" --json
	[ "$status" = 0 ] || { echo "ksm-run: $status $stderr"; return 1; }
	EST=$output
	if [ "$(est scan.present_ranges)" != pagemap_scan ]; then
		# Before 6.7: left out, and said to be (the test below, on every kernel).
		[ "$(est scan.left_out_regions)" = 1 ]
		kernel_lacks "PAGEMAP_SCAN (Linux 6.7)"
	fi
	page=$(getconf PAGESIZE)
	n=$(( (16 << 20) / page ))
	mps=$(est max_page_sharing)
	stable=$(( (n + mps - 1) / mps ))
	# n pages of one content, plus the program's own few pages
	[ "$(est pages_sharing)" -ge $((n - stable)) ] && [ "$(est pages_sharing)" -le $((n - stable + 64)) ]
	[ "$(est pages_shared)" -ge "$stable" ] && [ "$(est pages_shared)" -le $((stable + 32)) ]
	[ "$(jq -r '[.regions[] | select(.class == "anon")][0].candidate_pages' <<<"$EST")" -ge "$n" ]
	# pagemap was read around the pages the kernel found, not for 20 TiB
	[ "$(est scan.pagemap_entries)" -lt $(( (20480 << 30) / page / 10000 )) ]
	stop_workload a
	[ "$(wl_status a)" = 0 ]
}

@test "estimate: without PAGEMAP_SCAN (before 6.7) a reservation of terabytes is left out, said, and quick" {
	requires root faultinject
	# 20 TiB reserved holding 16 MiB, and 4 MiB of one content elsewhere.
	start_workload a -- "$PROGS/dupmem" reserve=20480:16 mmap=4 wait
	# On a kernel before 6.7 the filter changes nothing.
	local -a before_6_7=("$FAULT" -f "ioctl,arg1=$PAGEMAP_SCAN_IOCTL:ENOTTY" --)
	run --separate-stderr timeout 60 "${before_6_7[@]}" "$KSM_RUN" --estimate="$(wl_pid a)" --json
	[ "$status" = 0 ] || { echo "ksm-run: $status $stderr"; return 1; }
	EST=$output
	[ "$(est scan.present_ranges)" = smaps ]
	[ "$(est scan.left_out_regions)" = 1 ]
	[ "$(est scan.left_out_bytes)" -ge $((16 << 20)) ]
	# What is left is counted: the 4 MiB region's 1024 pages, not the reservation's 4096.
	[ "$(est pages_sharing)" -ge 1000 ] && [ "$(est pages_sharing)" -lt 2048 ]
	[ "$(est scan.pagemap_entries)" -lt $(( (1 << 30) / $(getconf PAGESIZE) )) ]
	run -0 --separate-stderr "${before_6_7[@]}" "$KSM_RUN" --estimate="$(wl_pid a)"
	[[ $output == *"LEFT OUT: 1 region over 64 GiB, "*"this kernel has"*"no PAGEMAP_SCAN (Linux 6.7+)"* ]]
}

@test "estimate: without PAGEMAP_SCAN (before 6.7) regions smaps shows empty are skipped, with the same figures" {
	requires root faultinject
	# an empty 16 TiB reservation, a 64 GiB one holding 8 MiB of one
	# content, and ordinary duplicates
	start_workload a -- "$PROGS/dupmem" reserve=16384:0 reserve=64:8 mmap=4 pairs=4 zeros=1 wait
	estimate "$(wl_pid a)"
	with=$EST
	page=$(getconf PAGESIZE)
	for err in ENOTTY EINVAL; do
		run --separate-stderr timeout 120 "$FAULT" -f "ioctl,arg1=$PAGEMAP_SCAN_IOCTL:$err" -- \
			"$KSM_RUN" --estimate="$(wl_pid a)" --json
		[ "$status" = 0 ] || { echo "$err: ksm-run: $status $stderr"; return 1; }
		EST=$output
		[ "$(est scan.present_ranges)" = smaps ]
		for k in pages_sharing pages_shared pages_unshared zero_pages candidate_pages distinct_contents \
			within_process_pages single_frame_pages; do
			[ "$(est $k)" = "$(jq -r ".$k" <<<"$with")" ] || { echo "$err: $k: $(est $k) vs $(jq -r ".$k" <<<"$with")"; return 1; }
		done
		# the 64 GiB region is walked whole, the empty 16 TiB one not at all
		[ "$(est scan.pagemap_entries)" -ge $(( (64 << 30) / page )) ]
		[ "$(est scan.pagemap_entries)" -lt $(( (128 << 30) / page )) ]
	done
}

# between_passes PID: ksm-run PID sleeps out --settle, its first pass done.
@test "estimate: zero pages in transparent huge pages are counted apart where a split frees them" {
	# Since 6.12 the split that KSM makes maps zero-filled subpages to the
	# zero page: freed, but never merged nor counted by KSM.
	requires root ksm
	echo 0 >$KSM/use_zero_pages
	start_workload a -- "$PROGS/dupmem" merge=auto hugezeros=32 mmap=2 wait
	thp_given "$(wl_pid a)" 32768
	rss0=$(rss_kb "$(wl_pid a)")
	table=$("$KSM_RUN" --estimate="$(wl_pid a)")
	predict_then_merge "$(wl_pid a)"
	echo "estimate: $(est pages_sharing) sharing, $(est huge_zero_pages) zero in huge pages," \
		"split frees them: $(est split_frees_zero_pages); KSM: $real_sharing sharing"
	[ "$(est huge_zero_pages)" -ge 8192 ]
	case $(est split_frees_zero_pages) in
	yes)
		[ "$(est freed_by_split_pages)" = "$(est huge_zero_pages)" ]
		# the memory is freed all the same, as ksmd reaches each huge
		# page (that changes nothing converge watches): Rss falls by 32 MiB
		echo 1 >$KSM/run
		wait_until 30 no_thp_left "$(wl_pid a)"
		read -r real_sharing _ <<<"$(own_ksm "$(wl_pid a)")"
		echo "Rss $rss0 kB before, $(rss_kb "$(wl_pid a)") kB after"
		[ $((rss0 - $(rss_kb "$(wl_pid a)"))) -ge 30000 ]
		grep -q "freed when huge pages are split 8192 pages (32.0 MiB)" <<<"$table" ;;
	no)
		[ "$(est freed_by_split_pages)" = 0 ] ;;
	*)
		skip_or_fail "whether a split frees zero pages is unknown here" ;;
	esac
	within_pct "$(est pages_sharing)" "$real_sharing" 2
}

@test "estimate: transparent huge pages that hold data merge as predicted" {
	requires root ksm
	echo 0 >$KSM/use_zero_pages
	start_workload a -- "$PROGS/dupmem" merge=auto hugefill=32 wait verify
	thp_given "$(wl_pid a)" 32768
	predict_then_merge "$(wl_pid a)"
	[ "$(est huge_zero_pages)" -lt 100 ] && [ "$(est freed_by_split_pages)" -lt 100 ]
	[ "$(est pages_sharing)" -ge 8000 ]
	within_pct "$(est pages_sharing)" "$real_sharing" 2
}

@test "estimate: not root, zero pages of huge pages are told apart by PAGEMAP_SCAN" {
	requires root
	stage_for_nobody dupmem
	start_workload mine -- "${NOBODY[@]}" "$NB_PROGS/dupmem" hugezeros=8 mmap=2 wait
	thp_given "$(wl_pid mine)" 8192
	run as_nobody "$NB_KSM_RUN" --estimate="$(wl_pid mine)" --json
	[ "$status" = 0 ]
	est=${lines[-1]}
	[ "$(jq -r .scan.pfn_visible <<<"$est")" = false ]
	[ "$(jq -r .scan.present_ranges <<<"$est")" = pagemap_scan ] || kernel_lacks "PAGEMAP_SCAN (Linux 6.7)"
	[ "$(jq -r .huge_zero_pages <<<"$est")" = 2048 ]
	case $(jq -r .split_frees_zero_pages <<<"$est") in
	yes) [ "$(jq -r .freed_by_split_pages <<<"$est")" = 2048 ]
	     [ "$(jq -r .pages_sharing <<<"$est")" -lt 600 ] ;;
	no) [ "$(jq -r .freed_by_split_pages <<<"$est")" = 0 ] ;;
	*) skip_or_fail "whether a split frees zero pages is unknown here" ;;
	esac
}
