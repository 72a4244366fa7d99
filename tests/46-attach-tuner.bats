#!/usr/bin/env bats
# ksm-run --attach and the machine's tuning, on the real kernel: an attach
# that leaves nothing running says when nothing will merge, and the memory
# an attach adds reaches the machine's tuner as a new command's does.
# Merging is measured on this test's own processes only (/proc/PID/ksm_stat).
# ci: lock asan guest

load helpers
load launcher_helpers
load attach_helpers

LAUNCHER_REQUIRES="root ksm"

# The attachees end by themselves; a failed test must not wait for them.
# The tuning ksm-run (cmd) gets TERM, and restores what it changed.
teardown_extra() {
	local n
	for n in "${!WL_PIDS[@]}"; do
		case $n in
		cmd) kill -TERM "${WL_PIDS[$n]}" 2>/dev/null ;;
		*) kill -KILL "${WL_PIDS[$n]}" 2>/dev/null ;;
		esac
	done
	return 0
}

@test "--attach --no-wait with KSM stopped and no tuner: it says nothing merges until ksmd runs; --strict refuses" {
	requires prctl
	local before
	start_workload -- "$(attachee)" --dup=8 sleep 30
	knob_is run 0
	[ ! -e "$STATE_FILE" ]
	run -0 --separate-stderr "$KSM_RUN" --attach="$WL_PID" --no-wait
	[[ $output == "$WL_PID (attachee): enabled, process-wide (prctl); stopped "* ]]
	[[ $stderr == *"KSM is stopped (run=0): nothing merges in the targets until ksmd runs; --no-wait does not start it"* ]]
	merge_any_is "$WL_PID" yes
	knob_is run 0
	run -0 "$KSM_RUN" --detach="$WL_PID"
	# --strict: refused before any process is touched, nothing written.
	before=$(knobs_snapshot)
	run -125 --separate-stderr "$KSM_RUN" --attach="$WL_PID" --no-wait --strict
	[ -z "$output" ]
	[[ $stderr == *"--strict: KSM is stopped (run=0)"*"nothing would merge; no target was touched"* ]]
	merge_any_is "$WL_PID" no
	[ "$(knobs_snapshot)" = "$before" ]
	# --detach never takes --strict (it starts nothing).
	run -125 --separate-stderr "$KSM_RUN" --detach="$WL_PID" --strict
	# With ksmd running, neither the note nor a refusal.
	echo 1 >"$KSM/run"
	run -0 --separate-stderr "$KSM_RUN" --attach="$WL_PID" --no-wait --strict
	[[ $output == "$WL_PID (attachee): enabled, process-wide (prctl); "* ]]
	[ -z "$stderr" ]
	merge_any_is "$WL_PID" yes
}

# steady_tuner: a ksm-run tuning an attachee of its own, returned once its
# tuning is in the steady phase.  The sleep from before it is 1000 ms, so
# that the steady rate (100 pages a second here) merges nothing of size in
# the time the test waits: only a boost for new memory can.
steady_tuner() {
	echo 1000 >"$KSM/sleep_millisecs"
	# Its command outlives any test (126 s were seen under emulation): TERM ends it.
	start_workload cmd -- "$KSM_RUN" -- "$(attachee)" --dup=8 sleep 600
	wait_until 10 tuner_is "$(wl_pid cmd)"
	wait_until 45 phase_is 2
	knob_is sleep_millisecs 1000
}

# attached_merges NAME [OPTION...]: a new attachee with 64 MiB of duplicate
# pages, attached with the OPTIONs while the tuner is steady; its own
# merged pages must reach 90% within 10 s.
attached_merges() {
	local name=$1 pid t0
	shift
	# It outlives the test (143 s were seen under emulation): the test ends it.
	start_workload "$name" -- "$(attachee)" --dup=64 sleep 600
	pid=$(wl_pid "$name")
	t0=$SECONDS
	"$KSM_RUN" --attach="$pid" $(attach_form) "$@" >"$BATS_TEST_TMPDIR/$name.out" 2>&1 &
	BG_ATTACH=$!
	wait_until 10 merging_at_least "$pid" $((64 * 1024 * 1024 / $(getconf PAGESIZE) * 9 / 10)) ||
		{ echo "$name: $(merged_pages "$pid") pages merged, $(knob_value pages_to_scan)/$(knob_value sleep_millisecs)" >&2
		  cat "$BATS_TEST_TMPDIR/$name.out" >&2; return 1; }
	echo "$name: merged within $((SECONDS - t0)) s" >&3
}

@test "a tuner in its steady phase: memory an attach adds merges within 10 s, with --no-wait or followed" {
	steady_tuner
	attached_merges nowait --no-wait
	wait_until 5 gone "$BG_ATTACH"
	# The target stays in the state while it lives; the tuner counts it.
	grep -q "^target $(wl_pid nowait) " "$STATE_FILE"
	# The same once the tuner is steady again, attaching and following.
	wait_until 45 phase_is 2
	attached_merges followed --interval=0.5
	kill -INT "$BG_ATTACH"
	wait_until 10 gone "$BG_ATTACH"
	# --detach takes a target out of the state; one that ends leaves it at the tuner's next tick.
	grep -q "^target $(wl_pid followed) " "$STATE_FILE"
	run -0 "$KSM_RUN" --detach="$(wl_pid followed)" $(attach_form)
	! grep -q "^target $(wl_pid followed) " "$STATE_FILE"
	local gone_pid
	gone_pid=$(wl_pid nowait)
	kill -KILL "$gone_pid"
	wait_workload nowait || true
	wait_until 5 eval "! grep -q '^target $gone_pid ' $STATE_FILE"
	# The last ksm-run restores the knobs; the targets do not hold them.
	kill -TERM "$(wl_pid cmd)"
	wait_workload cmd
	[ ! -e "$STATE_FILE" ]
	knob_is sleep_millisecs 1000
}
