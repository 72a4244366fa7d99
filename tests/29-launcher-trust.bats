#!/usr/bin/env bats
# ksm-run runs as root: what it reads from outside (the state under /run,
# the exit lines of the command's tree, the environment, option values) is
# checked before it is used, and a hostile start (SIGCHLD ignored) cannot
# hang it.
# ci: lock asan

load helpers
load launcher_helpers

LAUNCHER_REQUIRES="root ksm jq"

setup_file_extra() { link_static_dupmem; }

STATE_DIR=/run/ksm-run

# plant TEXT: a state file as a killed ksm-run or an attacker might leave it.
plant() {
	mkdir -p "$STATE_DIR"
	printf '%b' "$1" >"$STATE_FILE"
}

@test "a planted knob name that is a path is refused: no file written, the state set aside" {
	local target=$BATS_TEST_TMPDIR/pwned before
	before=$(knobs_snapshot)
	plant "user 1 1\nknob ../../../..$target owned\nknob pages_to_scan 100\n"
	run -0 --separate-stderr "$KSM_RUN" -q --pages-to-scan=777 -- sh -c 'cat /sys/kernel/mm/ksm/pages_to_scan'
	[ "$output" = 777 ]
	[[ $stderr == *"$STATE_FILE is corrupt (line 2: '../../../..$target' is not a knob name)"* ]]
	[ ! -e "$target" ]
	[ -f "$STATE_FILE.corrupt" ]
	[ "$(knobs_snapshot)" = "$before" ]
	# --restore refuses a corrupt file and writes nothing.
	plant "knob ../../../..$target owned\n"
	run -1 --separate-stderr "$KSM_RUN" --restore
	[[ $stderr == *"is corrupt"* ]]
	[ ! -e "$target" ]
	rm -f "$STATE_FILE" "$STATE_FILE.corrupt"
}

@test "users that never die (pid 0, start 0) and 256 users in a file are refused, not written past" {
	local before i text=
	before=$(knobs_snapshot)
	for i in $(seq 1 256); do text+="user 0 0\n"; done
	plant "${text}knob pages_to_scan 100\n"
	run -0 --separate-stderr "$KSM_RUN" -q --pages-to-scan=555 -- true
	[[ $stderr == *"a user needs a pid 1..4194304 and a start time > 0"* ]]
	[ "$(knobs_snapshot)" = "$before" ]
	[ ! -e "$STATE_FILE" ]
	rm -f "$STATE_FILE.corrupt"
}

@test "256 live users: a 257th ksm-run changes no knob, says why, and runs its command" {
	local pids=() i text= start before
	before=$(knobs_snapshot)
	for i in $(seq 1 256); do sleep 300 & pids+=($!); done
	for i in "${pids[@]}"; do
		start=$(awk '{ sub(/.*\) /, ""); print $20 }' /proc/$i/stat)
		text+="user $i $start\n"
	done
	plant "${text}knob pages_to_scan 100\nknob sleep_millisecs 20\n"
	run -0 --separate-stderr "$KSM_RUN" -q --pages-to-scan=4321 -- sh -c 'cat /sys/kernel/mm/ksm/pages_to_scan'
	kill "${pids[@]}" 2>/dev/null || true
	wait "${pids[@]}" 2>/dev/null || true
	[ "$output" != 4321 ]
	[[ $stderr == *"256 ksm-run already share the saved knob state"* ]]
	[ "$(grep -c '^user' "$STATE_FILE")" = 256 ]
	rm -f "$STATE_FILE"
	[ "$(knobs_snapshot)" = "$before" ]
}

@test "the state files are private whatever the umask, and a planted state.tmp link is not followed" {
	local victim=$BATS_TEST_TMPDIR/victim
	echo untouched >"$victim"
	mkdir -p "$STATE_DIR"
	ln -sf "$victim" "$STATE_DIR/state.tmp"
	start_workload -- sh -c "umask 000; exec '$KSM_RUN' -q --pages-to-scan=999 -- '$PROGS/dupmem' wait"
	[ "$(stat -c %a "$STATE_FILE")" = 600 ]
	[ "$(stat -c %a "$STATE_DIR/lock")" = 600 ]
	[ "$(cat "$victim")" = untouched ]
	stop_workload
	[ ! -e "$STATE_FILE" ]
}

@test "a state directory that is a link, or not root's, is not used" {
	local elsewhere=$BATS_TEST_TMPDIR/elsewhere before
	before=$(knobs_snapshot)
	mkdir -p "$elsewhere"
	rm -rf "$STATE_DIR"
	ln -s "$elsewhere" "$STATE_DIR"
	run -0 --separate-stderr "$KSM_RUN" -q --pages-to-scan=888 -- true
	[[ $stderr == *"$STATE_DIR is not a directory"* ]]
	[ -z "$(ls -A "$elsewhere")" ]
	rm "$STATE_DIR"
	mkdir -m 0777 "$STATE_DIR"
	run -0 --separate-stderr "$KSM_RUN" -q --pages-to-scan=888 -- true
	[[ $stderr == *"writable by no one else"* ]]
	rmdir "$STATE_DIR"
	[ "$(knobs_snapshot)" = "$before" ]
}

@test "started with SIGCHLD ignored, ksm-run still waits, restores, and gives the command SIGCHLD ignored" {
	local before
	before=$(knobs_snapshot)
	# python3 ignores SIGCHLD, then becomes ksm-run: it starts with SIGCHLD ignored.
	local ignoring='import os, signal, sys
signal.signal(signal.SIGCHLD, signal.SIG_IGN)
os.execv(sys.argv[1], sys.argv[1:])'
	run -7 timeout 30 python3 -c "$ignoring" "$KSM_RUN" -q --pages-to-scan=1111 -- \
		sh -c 'cat /sys/kernel/mm/ksm/pages_to_scan; exit 7'
	[ "$output" = 1111 ]
	[ "$(knobs_snapshot)" = "$before" ]
	# grep leaves its signals alone (a shell would reset SIGCHLD): bit 17 of the mask, 0x10000.
	run -0 timeout 30 python3 -c "$ignoring" "$KSM_RUN" -q -- grep ^SigIgn /proc/self/status
	(( 0x$(awk '{ print $2 }' <<<"$output") & 0x10000 ))
}

@test "the exit lines' file is private to the run; lines without its token are ignored, fast" {
	local r=$BATS_TEST_TMPDIR/r.json child file dir i
	start_workload -- "$KSM_RUN" --json --report-file="$r" -- "$PROGS/dupmem" mmap=4 wait
	child=$(child_of "$WL_PID")
	file=$(tr '\0' '\n' <"/proc/$child/environ" | sed -n 's/^KSM_ENABLE_REPORT=//p')
	dir=${file%/*}
	[ "$(stat -c %a "$dir")" = 711 ]
	[ "$(stat -c %a "$file")" = 622 ]
	run ! as_nobody ls "$dir"
	# A forger who found the file: 100,000 lines with a pid that is not the tree's.
	python3 -c '
import sys
line = "{\"pid\":1,\"ppid\":0,\"comm\":\"\\u001b[31mforged\",\"mode\":\"prctl\",\"ksm_stat\":{\"ksm_merging_pages\":999999}}\n"
with open(sys.argv[1], "a") as f:
    f.write(line * 100000)
' "$file"
	stop_workload
	[ "$(json_of "$r" .foreign_report_lines)" = 100000 ]
	[ "$(json_of "$r" '[.processes[] | select(.pid == 1)] | length')" = 0 ]
	[ ! -e "$dir" ]
}

@test "names from outside are escaped in the text report: no terminal sequence reaches root's terminal" {
	run -0 --separate-stderr "$KSM_RUN" --report-all -- sh -c 'printf "\033[31mred\033]0;x\a" >/proc/self/comm; sleep 1.2'
	[[ $stderr != *$'\033'* ]]
	[[ $stderr != *$'\a'* ]]
	[[ $stderr == *'\x1b[31mred\x1b]0;x\x07'* ]]
}

@test "knob values are strict: zero-padded beyond what is kept, -0, and a leading space are refused" {
	local v65 before
	before=$(knobs_snapshot)
	v65=$(printf '0%.0s' $(seq 1 64))1
	run -125 --separate-stderr "$KSM_RUN" --pages-to-scan="$v65" -- true
	[[ $stderr == *"too long"* ]]
	run -125 --separate-stderr "$KSM_RUN" --pages-to-scan=-0 -- true
	[[ $stderr == *"pages_to_scan: '-0' is not a number"* ]]
	run -125 --separate-stderr "$KSM_RUN" --interval=' 2' -- true
	[[ $stderr == *"--interval= 2: not a number of seconds"* ]]
	[ "$(knobs_snapshot)" = "$before" ]
}

@test "the library's settings in the environment count for the prctl before exec (KSM_ENABLE_MODE=off)" {
	requires prctl
	run -0 env KSM_ENABLE_MODE=off "$KSM_RUN" -q -- "$PROGS/dupmem" getmerge
	[[ $output == "merge_any "*" 0" ]]
	run -0 env KSM_ENABLE_MIN_SIZE=1M "$KSM_RUN" -q -- "$PROGS/dupmem" getmerge
	[[ $output == "merge_any "*" 0" ]]
	# An empty variable is not a setting: auto, the process-wide prctl.
	run -0 env KSM_ENABLE_ALLOW= "$KSM_RUN" -q -- "$PROGS/dupmem" getmerge
	[[ $output == "merge_any "*" 1" ]]
}

@test "a static binary with a selection runs without KSM and says why; --strict refuses it" {
	requires prctl          # (without it, tests/47: no prctl to cover any static binary)
	needs_static
	run -0 --separate-stderr "$KSM_RUN" -q --min-size=1M -- "$STATIC" getmerge
	[[ $output == "merge_any "*" 0" ]]
	[[ $stderr == *"is a static binary"*"cannot be covered selectively"* ]]
	run -0 --separate-stderr "$KSM_RUN" -q --allow=heap -- "$STATIC" getmerge
	[[ $output == "merge_any "*" 0" ]]
	run -125 --separate-stderr "$KSM_RUN" -q --strict --allow=heap -- "$STATIC" getmerge
	[ -z "$output" ]
	# In prctl mode the prctl before exec still covers it.
	run -0 "$KSM_RUN" -q --mode=prctl -- "$STATIC" getmerge
	[[ $output == "merge_any "*" 1" ]]
}

@test "report directories of a ksm-run killed with SIGKILL are removed by the next one" {
	local stale=$STATE_DIR/ksm-run.4194303.AbCdEf
	mkdir -p "$stale"
	: >"$stale/lines.XyZ"
	start_workload -- "$KSM_RUN" -q -- "$PROGS/dupmem" wait
	local dir
	dir=$(tr '\0' '\n' <"/proc/$(child_of "$WL_PID")/environ" | sed -n 's/^KSM_ENABLE_REPORT=//p')
	dir=${dir%/*}
	kill -KILL "$WL_PID"
	wait_workload || true
	[ -d "$dir" ]
	[ ! -e "$stale" ]
	run -0 "$KSM_RUN" -q -- true
	[ ! -e "$dir" ]
	"$KSM_RUN" --restore >/dev/null 2>&1 || true
}

@test "an unknown option suggests the nearest one" {
	run -125 --separate-stderr "$KSM_RUN" --pages-to-scna=10 -- true
	[[ $stderr == *"unknown option '--pages-to-scna': did you mean '--pages-to-scan'?"* ]]
	run -125 --separate-stderr "$KSM_RUN" --estimte=1
	[[ $stderr == *"did you mean '--estimate'?"* ]]
	run -125 --separate-stderr "$KSM_RUN" --zzzzzzzz -- true
	[[ $stderr == *"unknown option '--zzzzzzzz' (see --help)"* ]]
}

@test "a misspelt KSM_ENABLE_* in the environment: a warning, or with --strict exit 125 and nothing run" {
	local ran=$BATS_TEST_TMPDIR/ran
	run -0 --separate-stderr env KSM_ENABLE_ALOW=heap "$KSM_RUN" --no-tune -q -- true
	[[ $stderr == *"ksm-run: warning: KSM_ENABLE_ALOW in the environment is not a variable of the library (did you mean KSM_ENABLE_ALLOW?); --strict makes this an error"* ]]
	run -125 --separate-stderr env KSM_ENABLE_ALOW=heap "$KSM_RUN" --strict -- touch "$ran"
	[[ $stderr == *"ksm-run: --strict: KSM_ENABLE_ALOW in the environment is not a variable of the library (did you mean KSM_ENABLE_ALLOW?); nothing was run"* ]]
	run -125 --separate-stderr env KSM_ENABLE_STRICT=1 KSM_ENABLE_MODEE=prctl "$KSM_RUN" -- touch "$ran"
	[[ $stderr == *"ksm-run: KSM_ENABLE_STRICT=1: KSM_ENABLE_MODEE in the environment"*"did you mean KSM_ENABLE_MODE?"* ]]
	[ ! -e "$ran" ]
	# known names and other prefixes pass in silence
	run -0 --separate-stderr env KSM_ENABLE_MODE=madvise KSM_ENABLEX=1 "$KSM_RUN" --strict --no-tune -q -- touch "$ran"
	[ -e "$ran" ]
	[[ $stderr != *"not a variable"* ]]
}
