#!/usr/bin/env bats
# ksm-run: signals sent to ksm-run reach the command; ksm-run outlives it.
# ci: lock asan

load helpers
load launcher_helpers

@test "HUP INT QUIT USR1 USR2 WINCH CONT ALRM are forwarded to the command" {
	start_workload -- "$KSM_RUN" -q -- "$PROGS/sigprog" catch
	local name num
	for name in HUP INT QUIT USR1 USR2 WINCH CONT ALRM; do
		num=$(kill -l "$name")
		kill -s "$name" "$WL_PID"
		wait_until 5 grep -qx "got $num" "$WL_OUT"
	done
	# ksm-run is still there, and the command ends normally.
	kill -0 "$WL_PID"
	stop_workload
	[ "$WL_STATUS" -eq 0 ]
}

@test "TERM to ksm-run: the command dies of it, knobs are restored, ksm-run dies of TERM" {
	local before
	before=$(knobs_snapshot)
	start_workload -- "$KSM_RUN" -- "$PROGS/sigprog" catch
	# The default tuning changed the knobs while the command runs.
	[ "$(knob_value pages_to_scan)" != 100 ]
	[ "$(knob_value run)" = 1 ]
	[ -e "$STATE_FILE" ]
	kill -TERM "$WL_PID"
	wait_workload
	[ "$WL_STATUS" -eq 143 ]
	grep -q "killed by SIGTERM" "$WL_ERR"
	[ "$(knobs_snapshot)" = "$before" ]
	[ ! -e "$STATE_FILE" ]
}

@test "INT and HUP to ksm-run also end in a restore" {
	local before sig
	before=$(knobs_snapshot)
	for sig in INT HUP; do
		start_workload -- "$KSM_RUN" -q -- "$PROGS/sigprog" wait
		[ "$(knob_value run)" = 1 ]
		kill -s $sig "$WL_PID"
		wait_workload
		[ "$WL_STATUS" -eq $((128 + $(kill -l $sig))) ]
		[ "$(knobs_snapshot)" = "$before" ]
	done
}

@test "Ctrl-C at a terminal reaches the command, and ksm-run stays to report" {
	run -0 ctrl_c_on_tty "$KSM_RUN" -q -- "$PROGS/sigprog" catch
	[ "$(grep -cx 'got 2' <<<"$output")" = 1 ]
	[ "${lines[-1]}" = "status 0" ]
}
