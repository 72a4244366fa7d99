#!/usr/bin/env bats
# ksm-run --estimate: what it is given and what it says, apart from the
# figures that 30-estimate checks against the kernel's merging: regions
# chosen, the table, targets that are not root's, unreadable, vanished,
# malformed or cgroups, progress on a terminal.  Nothing here depends on
# the kernel's version, so the guest does not run it.
# ci: lock asan

load helpers
load launcher_helpers
load estimate_helpers

LAUNCHER_REQUIRES="root ksm jq"

# Each test starts with ksmd stopped, at the fast rates, and holding nothing
# of earlier tests (in this file or before it).
setup_extra() { settle_ksm; }

# between_passes PID: the target sleeps between --settle's two passes.
between_passes() { [[ "$(cat /proc/$1/wchan 2>/dev/null)" == *nanosleep* ]]; }

@test "estimate: --allow and --deny choose the regions, as the library would" {
	requires root
	start_workload a -- "$PROGS/dupmem" mmap=8 heap=4 wait
	estimate "$(wl_pid a)" --allow=heap
	[ "$(jq -r '[.regions[].class] | unique | join(",")' <<<"$EST")" = heap ]
	estimate "$(wl_pid a)" --deny=heap
	[ "$(jq -r '[.regions[].class | select(. == "heap")] | length' <<<"$EST")" = 0 ]
	[ "$(est pages_sharing)" -ge 2040 ]
}

@test "estimate: the table on stdout, largest savings first" {
	requires root
	start_workload a -- "$PROGS/dupmem" mmap=8 wait
	start_workload b -- "$PROGS/dupmem" mmap=2 wait
	run --separate-stderr "$KSM_RUN" --estimate="$(wl_pid b),$(wl_pid a)"
	[ "$status" = 0 ]
	[[ "$output" == *"pages_sharing"* ]]
	[[ "$output" == *"general_profit"* ]]
	first=$(awk '$1 ~ /^[0-9]+$/ && $2 == "dupmem" { print $1; exit }' <<<"$output")
	[ "$first" = "$(wl_pid a)" ]
}

@test "estimate: not root, the user's own processes" {
	requires root
	stage_for_nobody dupmem
	start_workload mine -- "${NOBODY[@]}" "$NB_PROGS/dupmem" mmap=8 wait
	[ "$(stat -c %u "/proc/$(wl_pid mine)")" = 65534 ]
	run as_nobody "$NB_KSM_RUN" --estimate="$(wl_pid mine)" --json
	[ "$status" = 0 ]
	[ "$(jq -r .pages_sharing <<<"${lines[-1]}")" -ge 2040 ]
	[ "$(jq -r .scan.pfn_visible <<<"${lines[-1]}")" = false ]
}

@test "estimate: an unreadable target is reported and skipped; nothing readable is exit 1" {
	requires root
	stage_for_nobody dupmem
	start_workload a -- "$PROGS/dupmem" mmap=2 wait
	run --separate-stderr as_nobody "$NB_KSM_RUN" --estimate="$(wl_pid a)" --json
	[ "$status" = 1 ]
	[[ "$stderr" == *"pid $(wl_pid a) skipped: permission denied"* ]]
	start_workload mine -- "${NOBODY[@]}" "$NB_PROGS/dupmem" mmap=2 wait
	run --separate-stderr as_nobody "$NB_KSM_RUN" --estimate="$(wl_pid mine),$(wl_pid a)" --json
	[ "$status" = 0 ]
	[ "$(jq -r '.skipped[0].pid' <<<"$output")" = "$(wl_pid a)" ]
	[ "$(jq -r '.processes | length' <<<"$output")" = 1 ]
	[ "$(jq -r '.processes[0].pid' <<<"$output")" = "$(wl_pid mine)" ]
}

@test "estimate: a target that vanished is reported and skipped" {
	requires root
	start_workload a -- "$PROGS/dupmem" mmap=2 wait
	"$PROGS/dupmem" exit=0 &
	gone=$!
	wait $gone
	estimate "$(wl_pid a),$gone"
	[ "$(jq -r '.skipped[0].reason' <<<"$EST")" = "no such process" ]
	[ "$(jq -r '.processes | length' <<<"$EST")" = 1 ]
}

@test "estimate: malformed targets and targets matching nothing are refused with 125" {
	for t in "" abc 12a "1,,2" ",1" "cgroup:" "-3" 0 "cgroup:/nonexistent/cg" "cgroup:no-such-group-$$" \
		"cgroup:pids:no-slash" "cgroup:1:pids" "cgroup:a/../b"; do
		run --separate-stderr "$KSM_RUN" --estimate="$t"
		[ "$status" = 125 ] || { echo "'$t': $status"; return 1; }
		[[ "$stderr" == *"--estimate"* ]] || { echo "'$t': $stderr"; return 1; }
		[ -z "$output" ]
	done
	"$PROGS/dupmem" exit=0 &
	gone=$!
	wait $gone
	run --separate-stderr "$KSM_RUN" --estimate="$gone"
	[ "$status" = 125 ]
	[[ "$stderr" == *"matches no process"* ]]
	# a number past any pid_max is a process that cannot exist, not a malformed PID
	run -125 --separate-stderr "$KSM_RUN" --estimate=99999999
	[[ "$stderr" == *"'99999999': no such process (PIDs go up to 4194304 at most)"* ]]
	run -125 --separate-stderr "$KSM_RUN" --estimate=0
	[[ "$stderr" == *"'0': not a PID"* ]]
}

@test "estimate: a region class longer than its column keeps its end, after an ellipsis" {
	requires root
	local dir=$BATS_TEST_TMPDIR/a-directory-whose-name-is-long-enough
	mkdir -p "$dir"
	cp "$PROGS/dupmem" "$dir/dupmem"
	start_workload a -- "$dir/dupmem" mmap=1 wait
	run -0 --separate-stderr "$KSM_RUN" --estimate="$(wl_pid a)"
	# 40 columns: "..." and the last 37 bytes of the path
	local want="...${dir: -30}/dupmem"
	[ ${#want} = 40 ]
	[[ "$output" == *$'\n'"$want "* ]] || { echo "$output"; return 1; }
}

@test "estimate: cgroup targets, by relative and absolute path" {
	requires root
	cg=ksmenable-test-$$
	dir=
	# Made by hand, in the first hierarchy that takes it (the test is of the
	# controllers' forms); the fixture's teardown removes it on every path.
	for h in /sys/fs/cgroup/pids /sys/fs/cgroup/unified /sys/fs/cgroup; do
		if mkdir "$h/$cg" 2>/dev/null; then dir=$h/$cg CG_MADE+=("$dir"); break; fi
	done
	[ -n "$dir" ] || skip_or_fail "cannot make a cgroup"
	start_workload a -- "$PROGS/dupmem" mmap=4 wait
	start_workload b -- "$PROGS/dupmem" mmap=4 wait
	echo "$(wl_pid a)" >"$dir/cgroup.procs"
	estimate "cgroup:$cg"
	[ "$(jq -r '[.processes[].pid] | join(",")' <<<"$EST")" = "$(wl_pid a)" ]
	estimate "cgroup:$dir"
	[ "$(jq -r '[.processes[].pid] | join(",")' <<<"$EST")" = "$(wl_pid a)" ]
	# The forms users copy from /proc/PID/cgroup: the path with its '/', the
	# whole line, the controller with the path.
	local line form hierarchy=${dir%/*}
	hierarchy=${hierarchy##*/}
	case $hierarchy in
	unified | cgroup) line=$(grep '^0::' /proc/"$(wl_pid a)"/cgroup) ;;
	*) line=$(grep -E "^[0-9]+:([^:]*,)?$hierarchy(,[^:]*)?:" /proc/"$(wl_pid a)"/cgroup) ;;
	esac
	[ "${line##*:}" = "/$cg" ]
	for form in "/$cg" "$line" "${line#*:}"; do
		estimate "cgroup:$form"
		[ "$(jq -r '[.processes[].pid] | join(",")' <<<"$EST")" = "$(wl_pid a)" ] || { echo "form $form"; return 1; }
	done
	if [ "$hierarchy" = pids ]; then
		estimate "cgroup:pids/$cg"
		[ "$(jq -r '[.processes[].pid] | join(",")' <<<"$EST")" = "$(wl_pid a)" ]
		# The controller is the one named: not found in another hierarchy.
		run --separate-stderr "$KSM_RUN" --estimate="cgroup:freezer:/$cg"
		[ "$status" = 125 ]
		[[ "$stderr" == *"not found in any mounted cgroup hierarchy holding freezer"* ]]
	fi
}

@test "estimate: progress on a terminal once the scan takes more than a second, none otherwise" {
	requires root
	command -v script >/dev/null || skip_or_fail "no script(1)"
	start_workload a -- "$PROGS/dupmem" mmap=8 wait
	# --settle makes the second pass start after more than a second
	run script -qec "'$KSM_RUN' --estimate=$(wl_pid a) --settle=1.2" /dev/null
	[ "$status" = 0 ]
	[[ "$output" == *"ksm-run: estimating: 1 of 1 processes"* ]]
	run --separate-stderr "$KSM_RUN" --estimate="$(wl_pid a)" --settle=1.2
	[ "$status" = 0 ]
	[[ "$stderr" != *estimating* ]]
}

@test "estimate: a target that exits during --settle is skipped as vanished; with none left, exit 1" {
	requires root
	start_workload a -- "$PROGS/dupmem" mmap=2 wait
	start_workload b -- "$PROGS/dupmem" mmap=2 wait
	"$KSM_RUN" --estimate="$(wl_pid a),$(wl_pid b)" --settle=3 --json >"$BATS_TEST_TMPDIR/out" 2>"$BATS_TEST_TMPDIR/err" &
	k=$!
	wait_until 10 between_passes $k
	gone=$(wl_pid b)
	stop_workload b
	st=0
	wait $k || st=$?
	cat "$BATS_TEST_TMPDIR/err"
	[ "$st" = 0 ]
	[ "$(jq -r '.skipped[0].pid' "$BATS_TEST_TMPDIR/out")" = "$gone" ]
	[[ "$(jq -r '.skipped[0].reason' "$BATS_TEST_TMPDIR/out")" == vanished* ]]
	[ "$(jq -r '[.processes[].pid] | join(",")' "$BATS_TEST_TMPDIR/out")" = "$(wl_pid a)" ]
	grep -q "pid $gone skipped: vanished" "$BATS_TEST_TMPDIR/err"

	# the only target exits: the TARGET was right, nothing is left
	"$KSM_RUN" --estimate="$(wl_pid a)" --settle=3 --json >"$BATS_TEST_TMPDIR/out" 2>"$BATS_TEST_TMPDIR/err" &
	k=$!
	wait_until 10 between_passes $k
	stop_workload a
	st=0
	wait $k || st=$?
	cat "$BATS_TEST_TMPDIR/err"
	[ "$st" = 1 ]
	grep -q "nothing left to estimate" "$BATS_TEST_TMPDIR/err"
	run -1 grep -q "matches no process" "$BATS_TEST_TMPDIR/err"
	[ ! -s "$BATS_TEST_TMPDIR/out" ]
}
