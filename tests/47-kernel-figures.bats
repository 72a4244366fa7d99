#!/usr/bin/env bats
# The figures on the kernel that runs, whichever it is: a process's merged
# pages as the kernel counts them (ksm_stat's line, or the file of its own
# on Linux 6.1) in the report, --status and the metrics; general_profit the
# kernel's, or computed by its formula and said to be; the kernel support
# that --status lists, against the test's own probes.  Written for every
# kernel from 6.1 on: tests/guest-run runs it on Debian 12's.
# ci: lock asan guest

load helpers
load launcher_helpers

PAGE=$(getconf PAGESIZE)

setup_file_extra() { link_static_dupmem; }

# A process a failed test left in its cgroup (group_figures_agree's
# background one) ends before the fixture removes the cgroup.
teardown_extra() {
	local d
	for d in "${CG_MADE[@]}"; do
		[ ! -e "$d/cgroup.procs" ] || xargs -r kill -KILL <"$d/cgroup.procs" 2>/dev/null
	done
	return 0
}

# has FILE: true or false, as JSON writes them.
has() { if [ -e "$1" ]; then echo true; else echo false; fi; }

# The kernel's formula for general_profit, from the counters now.
formula_profit() {
	local zero=0
	[ ! -e $KSM/ksm_zero_pages ] || zero=$(sysfs ksm_zero_pages)
	echo $(( ($(sysfs pages_sharing) + zero) * PAGE - ($(sysfs pages_shared) + $(sysfs pages_sharing) +
		$(sysfs pages_unshared) + $(sysfs pages_volatile)) * 64 ))
}

@test "--status: each kernel interface as the test's own probes find it" {
	local prctl=true smaps=false kpf=false
	[ "$(merge_any_unset)" = 0 ] || prctl=false
	! smaps_has_ksm || smaps=true
	! kpageflags_ksm_sound || kpf=true
	local many=false
	! grep -q '^ksm_merge_any' /proc/self/ksm_stat 2>/dev/null || many=true
	run -0 "$KSM_RUN" --status --json
	jq -e --argjson gp "$(has $KSM/general_profit)" --argjson ss "$(has $KSM/smart_scan)" \
		--argjson adv "$(has $KSM/advisor_mode)" --argjson zero "$(has $KSM/ksm_zero_pages)" \
		--argjson scanned "$(has $KSM/pages_scanned)" --argjson stat "$(has /proc/self/ksm_stat)" \
		--argjson file "$(has /proc/self/ksm_merging_pages)" --argjson prctl $prctl --argjson smaps $smaps \
		--argjson kpf $kpf --argjson many $many \
		'.kernel == { ksm_merging_pages_file: $file, ksm_stat: $stat, general_profit: $gp, prctl: $prctl,
			pages_scanned: $scanned, smaps_ksm: $smaps, smart_scan: $ss, advisor: $adv, ksm_zero_pages: $zero,
			ksm_merge_any: $many, kpageflags_ksm: $kpf }
		 and .general_profit_computed == ($gp | not)' <<<"$output"
	# The text: a line per interface; each one missing with its kernel and what is done instead.
	run -0 "$KSM_RUN" --status
	[[ $output == *"prctl(PR_SET_MEMORY_MERGE): $([ $prctl = true ] && echo yes || echo "no (Linux 6.4+): the library advises")"* ]]
	[[ $output == *"smart_scan, pages_skipped: $([ -e $KSM/smart_scan ] && echo yes || echo "no (Linux 6.7+)")"* ]]
	[[ $output == *"general_profit, ksm_stat's ksm_merging_pages and ksm_process_profit: $([ -e $KSM/general_profit ] &&
		echo yes || echo "no (Linux 6.4+): general_profit is computed")"* ]]
	[[ $output == *"/proc/kpageflags' KSM flag, on KSM pages alone: $([ $kpf = true ] && echo yes ||
		echo "no: this kernel flags every anonymous page KSM")"* ]]
	[[ $output == *"ksm_stat's ksm_merge_any and ksm_mergeable: $([ $many = true ] && echo yes ||
		echo "no (Linux 6.14+): a command's process-wide flag is told by its regions")"* ]]
	[ "$(grep -c '^  .*: \(yes\|no (Linux [0-9.]*+): .\|no: .\)' <<<"$output")" -ge 11 ]
}

@test "a merging process's pages as the kernel counts them, in the report, --status and the metrics" {
	local report=$BATS_TEST_TMPDIR/r.json prom=$BATS_TEST_TMPDIR/m.prom pid direct group labels
	# Without LeakSanitizer (sanitized runs): its check at exit clones a
	# tracer that shares the process's memory, and ksm-run counted that
	# clone's ksm_merging_pages as a second process's (CI, twice).
	start_workload -- env $NO_LSAN "$KSM_RUN" --json --report-file="$report" --metrics-file="$prom" --interval=0.3 \
		"${FAST_OPTS[@]}" -- "$PROGS/dupmem" mmap=32 wait
	pid=$(awk '$1 == "region" { print $4; exit }' "$WL_OUT")
	wait_until 120 merging_at_least "$pid" 8000
	sleep 0.7        # two samples of ksm-run's with the pages merged
	# ksmd stopped: the figures hold still while they are compared.
	echo 0 >$KSM/run
	direct=$(merged_pages "$pid")
	echo "the kernel's count: $direct pages"
	[ "$direct" -ge 8000 ]
	run -0 "$KSM_RUN" --status --json
	[ "$(jq -r ".processes[] | select(.pid == $pid) | .merged_bytes" <<<"$output")" = $((direct * PAGE)) ]
	# Its cgroup's figure holds it (other processes of the cgroup may merge too).
	group=$(jq -r '[.groups[] | .merged_bytes] | max' <<<"$output")
	[ "$group" -ge $((direct * PAGE)) ]
	labels="{command=\"dupmem\",file=\"m.prom\"}"
	wait_until 10 metric_equals "$prom" "ksmenable_command_merged_bytes$labels" $((direct * PAGE))
	stop_workload
	[ "$WL_STATUS" = 0 ]
	# The report's peak is the most the kernel counted: at least what was read, within 1%.
	local peak
	peak=$(json_of "$report" ".processes[] | select(.pid == $pid) | .peak_ksm_merging_pages")
	echo "the report's peak: $peak pages"
	[ "$peak" -ge "$direct" ]
	within_pct "$peak" "$direct" 1
	[ "$(json_of "$report" .tree.peak_merged_bytes)" = $((peak * PAGE)) ]
	[ "$(json_of "$report" '.coverage.covered_by')" != unknown ]
}

@test "general_profit: the kernel's, or computed by its formula and said to be, never a sentinel" {
	local report=$BATS_TEST_TMPDIR/r.json pid
	start_workload -- "$KSM_RUN" --json --report-file="$report" --interval=0.3 "${FAST_OPTS[@]}" -- \
		"$PROGS/dupmem" mmap=16 wait
	pid=$(awk '$1 == "region" { print $4; exit }' "$WL_OUT")
	wait_until 120 merging_at_least "$pid" 4000
	echo 0 >$KSM/run
	sleep 0.7        # two samples with ksmd stopped
	stop_workload
	run ! grep -q 9223372036854775808 "$report"
	if [ -e $KSM/general_profit ]; then
		[ "$(json_of "$report" .general_profit.computed)" = false ]
		[ "$(json_of "$report" .general_profit.end)" = "$(sysfs general_profit)" ]
	else
		[ "$(json_of "$report" .general_profit.computed)" = true ]
		[ "$(json_of "$report" .general_profit.end)" = "$(formula_profit)" ]
		run -0 --separate-stderr "$KSM_RUN" --status
		[[ $output == *"computed from the page counters: this kernel has no general_profit file"* ]]
	fi
	# The formula is the kernel's own: where the kernel has the file, both agree.
	[ ! -e $KSM/general_profit ] || [ "$(sysfs general_profit)" = "$(formula_profit)" ]
}

@test "a kernel without PR_SET_MEMORY_MERGE: a static binary is said to run without KSM, --strict refuses" {
	requires faultinject
	needs_static
	# What a kernel before 6.4 answers, to ksm-run's probe (68) and to the
	# call (67); on such a kernel the filter changes nothing.
	local -a before_6_4=("$FAULT" -f prctl,arg0=67:EINVAL -f prctl,arg0=68:EINVAL --)
	run -0 --separate-stderr "${before_6_4[@]}" "$KSM_RUN" --json --report-file="$BATS_TEST_TMPDIR/r.json" -- \
		"$STATIC" mmap=1 getmerge mergeable
	[[ $stderr == *"is a static binary, which the library cannot load in, and this kernel has no PR_SET_MEMORY_MERGE (Linux 6.4+) to cover it from outside: it runs without KSM"* ]]
	[[ $output =~ "mergeable "[0-9]+" 0" ]]
	[ "$(json_of "$BATS_TEST_TMPDIR/r.json" .coverage.prctl_before_exec)" = false ]
	[ "$(json_of "$BATS_TEST_TMPDIR/r.json" .coverage.covered_by)" = none ]
	run -125 --separate-stderr "${before_6_4[@]}" "$KSM_RUN" --strict -- "$STATIC" exit=0
	[[ $stderr == *"--strict: '$STATIC' is a static binary, and this kernel has no PR_SET_MEMORY_MERGE (Linux 6.4+)"* ]]
	# A dynamic program is enabled all the same, by the library's madvise.
	run -0 --separate-stderr "${before_6_4[@]}" "$KSM_RUN" -q -- "$PROGS/dupmem" mmap=1 mergeable
	[[ $output =~ "mergeable "[0-9]+" "[1-9] ]]
}

# direct_of_group DIR: the merged pages of DIR's processes, as the kernel counts them.
direct_of_group() {
	local pid m=0
	for pid in $(cat "$1/cgroup.procs"); do
		m=$((m + $(merged_pages "$pid")))
	done
	echo "$m"
}

# metric_is_group FILE CG DIR: FILE's merged bytes of cgroup CG are what DIR's processes merged now.
metric_is_group() {
	[ "$(metric "$1" "ksmenable_cgroup_merged_bytes{cgroup=\"$2\"}")" = $(($(direct_of_group "$3") * PAGE)) ]
}

# Conditions for wait_until, which runs its words again at each try: a
# "$(...)" among them is read once, when it is called (a test waited 30 s
# on a count read once, in CI beside another suite).
procs_in() { [ "$(wc -w <"$1/cgroup.procs")" = "$2" ]; }
group_has_at_least() { [ "$(direct_of_group "$1")" -ge "$2" ]; }
metric_equals() { [ "$(metric "$1" "$2")" = "$3" ]; }

# group_figures_agree [VAR=VALUE...]: a command's tree in a cgroup made
# here merges; its processes' and its cgroup's merged memory, in --status,
# the metrics and the report (ksm-run run with the VARs in its
# environment), are what the kernel counts.
group_figures_agree() {
	local report=$BATS_TEST_TMPDIR/r.json prom=$BATS_TEST_TMPDIR/m.prom pid bg direct cg
	make_cgroup a
	cg=/${CG_DIR##*/}
	# Two processes, none forked from one that had merged already: kernels
	# without the fix of 2025 for it (Debian 12's 6.1) start a forked
	# child's ksm_merging_pages at its parent's count (see the man page).
	# Without LeakSanitizer, as in the test above.
	start_workload -- env $NO_LSAN "$@" "$KSM_RUN" --json --report-file="$report" --metrics-file="$prom" --interval=0.3 \
		"${FAST_OPTS[@]}" -- sh -c "$IN_CGROUP" sh "$CG_DIR" \
		sh -c '"$1" mmap=24 sleep=600000 & exec "$1" mmap=8 wait' sh "$PROGS/dupmem"
	wait_until 20 procs_in "$CG_DIR" 2
	pid=$(awk '$1 == "READY" { print $2 }' "$WL_OUT")
	# The other one, from the cgroup: its own lines may not be written yet
	# (CI under AddressSanitizer read none, and killed nothing).
	bg=$(grep -vx "$pid" "$CG_DIR/cgroup.procs")
	[[ $bg =~ ^[0-9]+$ ]]
	wait_until 120 merging_at_least "$pid" 2000
	wait_until 30 group_has_at_least "$CG_DIR" 8000
	# The cgroup's series is the machine writer's: this ksm-run's, while it
	# tunes (it yields when the test stops ksmd below).
	wait_until 10 metric_is_group "$prom" "$cg" "$CG_DIR" ||
		{ echo "the metric: $(metric "$prom" "ksmenable_cgroup_merged_bytes{cgroup=\"$cg\"}");" \
			"the kernel's count: $(direct_of_group "$CG_DIR") pages"; return 1; }
	# A process's profit, where the kernel (or the one played) has none, is
	# unknown: no series and null, never 0.
	local profit=true
	[ -z "${NO_PROFIT:-}" ] && grep -q '^ksm_process_profit' "/proc/$pid/ksm_stat" || profit=false
	if [ $profit = true ]; then
		grep -q '^ksmenable_cgroup_profit_bytes{' "$prom"
		grep -q '^ksmenable_command_profit_bytes{' "$prom"
	else
		run ! grep -q '_profit_bytes{' "$prom"
	fi
	sleep 0.7        # two samples of ksm-run's with the pages merged
	# ksmd stopped: the figures hold still while they are compared.
	echo 0 >$KSM/run
	direct=$(direct_of_group "$CG_DIR")
	echo "the kernel's count in $cg: $direct pages, $(merged_pages "$pid") of them in pid $pid"
	run -0 env "$@" "$KSM_RUN" --status --json
	[ "$(jq -r --arg g "$cg" '.groups[] | select(.cgroup == $g) | .merged_bytes' <<<"$output")" = $((direct * PAGE)) ]
	[ "$(jq -r ".processes[] | select(.pid == $pid) | .merged_bytes" <<<"$output")" = $(($(merged_pages "$pid") * PAGE)) ]
	[ "$(jq -r --arg g "$cg" --argjson p $profit '.groups[] | select(.cgroup == $g) |
		(.profit_bytes | type) == (if $p then "number" else "null" end)' <<<"$output")" = true ]
	[ "$(jq -r --argjson p $profit ".processes[] | select(.pid == $pid) |
		(.profit_bytes | type) == (if \$p then \"number\" else \"null\" end)" <<<"$output")" = true ]
	wait_until 10 metric_equals "$prom" 'ksmenable_command_merged_bytes{command="sh",file="m.prom"}' $((direct * PAGE))
	stop_workload
	kill "$bg"
	[ "$WL_STATUS" = 0 ]
	# The report's peak is the most ksm-run counted: at least what was read, within 1%.
	local peak
	peak=$(jq -r --arg g "$cg" '.cgroups[] | select(.cgroup == $g) | .peak_merged_bytes' "$report")
	echo "the report's peak in $cg: $peak bytes"
	[ "$peak" -ge $((direct * PAGE)) ]
	within_pct "$peak" $((direct * PAGE)) 1
	# (The library's exit lines read the real kernel's ksm_stat: a played kernel leaves them be.)
	[ -n "${NO_PROFIT:-}" ] || [ "$(jq -r --arg g "$cg" --argjson p $profit '.cgroups[] | select(.cgroup == $g) |
		(.peak_profit_bytes | type) == (if $p then "number" else "null" end)' "$report")" = true ]
	within_pct "$(json_of "$report" .tree.peak_merged_bytes)" $((direct * PAGE)) 1
}

@test "per cgroup: a cgroup's merged memory in --status, the metrics and the report is what the kernel counts" {
	group_figures_agree
}

@test "a kernel before 5.19 (played): merged pages counted by page frame, as the kernel counts them" {
	requires kpageflags_ksm
	local lacks=KSM_RUN_TEST_KERNEL_LACKS=ksm_merging_pages_file,ksm_stat
	run -0 env $lacks "$KSM_RUN" --status
	[[ $output == *"/proc/PID/ksm_merging_pages: no (Linux 5.19+): a process's merged pages are counted by page frame"* ]]
	NO_PROFIT=1 group_figures_agree $lacks
}

@test "a kernel whose kpageflags flags every anonymous page KSM (played, as Debian 13's 6.12): no saving by frame, said why" {
	requires prctl
	local lacks=KSM_RUN_TEST_KERNEL_LACKS=kpageflags_ksm report=$BATS_TEST_TMPDIR/r.json
	run -0 env $lacks "$KSM_RUN" --status
	[[ $output == *"/proc/kpageflags' KSM flag, on KSM pages alone: no: this kernel flags every anonymous page KSM"* ]]
	run -0 env $lacks "$KSM_RUN" --status --json
	[ "$(jq .kernel.kpageflags_ksm <<<"$output")" = false ]
	# A command that merges: its saving is not counted by frame, never a 0.
	run -0 --separate-stderr env $lacks "$KSM_RUN" --interval=0.2 "${FAST_OPTS[@]}" -- \
		"$PROGS/dupmem" mmap=8 merged=1500 sleep=700
	[[ $stderr == *"saved:    not counted by page frame (this kernel's /proc/kpageflags flags every anonymous page KSM)"* ]]
	run -0 env $lacks "$KSM_RUN" --json --report-file="$report" --interval=0.2 "${FAST_OPTS[@]}" -- \
		"$PROGS/dupmem" mmap=8 merged=1500 sleep=700
	jq -e '.saved.rule == "none" and .saved.bytes == null and
		.saved.frames_error == "this kernel'"'"'s /proc/kpageflags flags every anonymous page KSM"' "$report"
}

@test "a kernel without ksm_stat's ksm_merge_any (played, as 6.4 to 6.13): the prctl before exec told by the regions" {
	requires prctl
	needs_static
	local lacks=KSM_RUN_TEST_KERNEL_LACKS=ksm_merge_any report=$BATS_TEST_TMPDIR/r.json
	run -0 env $lacks "$KSM_RUN" --status
	[[ $output == *"ksm_stat's ksm_merge_any and ksm_mergeable: no (Linux 6.14+)"* ]]
	# A static binary: the library cannot load; every region of it is mergeable.
	run -0 env $lacks "$KSM_RUN" --json --report-file="$report" -- "$STATIC" sleep=300 getmerge
	[ "$(json_of "$report" .coverage.covered_by)" = prctl ]
	# A dynamic one with the library in madvise mode: the library says so itself.
	run -0 env $lacks "$KSM_RUN" --json --report-file="$report" --mode=madvise -- "$PROGS/dupmem" sleep=300
	[ "$(json_of "$report" .coverage.covered_by)" = library ]
}

@test "--attach and --detach without ksm_stat's ksm_merge_any (played): the process-wide flag read back from the regions" {
	requires prctl
	local lacks=KSM_RUN_TEST_KERNEL_LACKS=ksm_merge_any
	start_workload -- "$PROGS/dupmem" mmap=8 wait
	run -0 --separate-stderr env $lacks "$KSM_RUN" --attach="$WL_PID" --no-wait --json
	jq -e '.targets[0] | .result == "enabled" and .ksm_merge_any == true and .ksm_mergeable == true
		and .flags_read_from == "regions"' <<<"$output"
	run -0 --separate-stderr env $lacks "$KSM_RUN" --detach="$WL_PID"
	[[ $output == *"disabled"*"; ksm_merge_any no, ksm_mergeable no (by its regions' VmFlags: this kernel's ksm_stat has neither line)" ]]
	[ "$(grep -c '^VmFlags:.* mg' "/proc/$WL_PID/smaps")" = 0 ]
	# Where the kernel has the lines, they are read.
	run -0 --separate-stderr "$KSM_RUN" --attach="$WL_PID" --no-wait --json
	jq -e '.targets[0].flags_read_from == (if $has then "ksm_stat" else "regions" end)' \
		--argjson has "$(grep -q '^ksm_merge_any' /proc/self/ksm_stat && echo true || echo false)" <<<"$output"
}
