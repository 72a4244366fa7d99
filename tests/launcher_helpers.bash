# Helpers for the ksm-run tests (tests/2*.bats, 30, 31).  Load after helpers:
#   load helpers
#   load launcher_helpers

bats_require_minimum_version 1.5.0

# --- The fixture: loading this file gives a test file these four. ---
#
# setup_file     saves every KSM knob (save_knobs)
# setup          checks what the tests need (requires), leaves no saved
#                launcher state behind, sets the baseline knobs
# teardown       stops every workload, leaves no saved launcher state
#                behind, removes what stage_for_nobody staged
# teardown_file  leaves no saved launcher state behind, then restores every
#                knob as saved and checks that it reads back (restore_knobs)
#
# A file states only what differs, anywhere in the file:
#   LAUNCHER_REQUIRES="root ksm prctl jq"   what setup requires (default:
#                                           root ksm)
#   setup_file_extra() { ...; }             run at the end of setup_file
#   setup_extra() { ...; }                  run at the end of setup
#   teardown_extra() { ...; }               run first in teardown

setup_file() {
	save_knobs
	if declare -F setup_file_extra >/dev/null; then setup_file_extra; fi
}

setup() {
	# shellcheck disable=SC2086 # a list of words
	requires ${LAUNCHER_REQUIRES:-root ksm}
	clear_launcher_state
	baseline_knobs
	if declare -F setup_extra >/dev/null; then setup_extra; fi
}

# Every step runs even if one fails, so that nothing is left behind.
teardown() {
	local rc=0
	# A failed `run -N CMD` shows only the status: what CMD printed names the failure.
	# With --separate-stderr, its standard error is most of the story.
	if [ -z "${BATS_TEST_COMPLETED:-}" ] && [ -n "${output:-}" ]; then
		echo "the last run's output (its last 40 lines):" >&2
		tail -n 40 <<<"$output" >&2
	fi
	if [ -z "${BATS_TEST_COMPLETED:-}" ] && [ -n "${stderr:-}" ]; then
		echo "the last run's standard error (its last 60 lines):" >&2
		tail -n 60 <<<"$stderr" >&2
	fi
	if declare -F teardown_extra >/dev/null; then teardown_extra || rc=1; fi
	stop_workloads || rc=1
	remove_cgroups || rc=1
	clear_launcher_state || rc=1
	unstage || rc=1
	return $rc
}

teardown_file() {
	local rc=0
	clear_launcher_state || rc=1
	restore_knobs || rc=1
	return $rc
}

STATE_FILE=/run/ksm-run/state

# link_static_dupmem: STATIC, a static dupmem for the file's tests (empty
# where libc6-dev's libc.a cannot link one); its tests say so with
# needs_static.  Call from setup_file_extra.
link_static_dupmem() {
	STATIC=$BATS_FILE_TMPDIR/dupmem-static
	${CC:-cc} -D_GNU_SOURCE -static -O1 -o "$STATIC" "$TOP/tests/progs/dupmem.c" 2>/dev/null || STATIC=
	export STATIC
}
needs_static() {
	[ -n "$STATIC" ] || skip_or_fail "cannot link a static program (libc6-dev's libc.a)"
}

# The machine's defaults, a known starting point for tests that compare.
baseline_knobs() {
	advisor_off
	echo 100 >$KSM/pages_to_scan
	echo 20 >$KSM/sleep_millisecs
	echo 0 >$KSM/run
}

# Every writable knob as NAME=VALUE lines, to compare before and after.
knobs_snapshot() {
	local k
	[ -n "$KNOB_ORDER" ] || { echo "knobs_snapshot: no knob list from $KSM_RUN --list-knobs" >&2; return 1; }
	for k in $KNOB_ORDER; do
		[ -e "$KSM/$k" ] && echo "$k=$(knob_value "$k")"
	done
	return 0
}

# Leaves no saved state behind, whatever a test did.
clear_launcher_state() {
	if [ -e "$STATE_FILE" ]; then
		"$KSM_RUN" --restore >/dev/null 2>&1 || true
		rm -f "$STATE_FILE"
	fi
}

# attach_form: the options with which --attach covers a whole process on
# this kernel: none (the process-wide prctl, Linux 6.4) or, before it,
# every anonymous region by madvise.  Unquoted, it is no word or one.
attach_form() { [ "$(merge_any_unset)" = 0 ] || echo --allow=anon; }

# --- Cgroups of a test, removed by the fixture's teardown (after the workloads). ---

# cgroup_root: the hierarchy ksm-run groups by (groups.h): the memory
# controller's on a v1 or hybrid host, else the v2 one.
cgroup_root() {
	if [ -e /sys/fs/cgroup/memory/cgroup.procs ]; then
		echo /sys/fs/cgroup/memory
	elif [ -e /sys/fs/cgroup/cgroup.controllers ]; then
		echo /sys/fs/cgroup
	else
		echo "no cgroup memory hierarchy found" >&2
		return 1
	fi
}

CG_MADE=()
# make_cgroup NAME: makes ROOT/ksmenable-test-PID-NAME (NAME may hold '/':
# each level is made and removed) and sets CG_DIR to it.  Not in $(...):
# the record of what to remove must stay in this shell.
make_cgroup() {
	local root d part
	root=$(cgroup_root) || return 1
	d=$root/ksmenable-test-$$-${1%%/*}
	local rest=$1/
	rest=${rest#*/}
	while :; do
		if [ ! -d "$d" ]; then mkdir "$d" || return 1; CG_MADE+=("$d"); fi
		[ -n "$rest" ] || break
		part=${rest%%/*} rest=${rest#*/}
		d=$d/$part
	done
	CG_DIR=$d
}

# sh -c "$IN_CGROUP" sh DIR PROGRAM ARGS...: PROGRAM in that cgroup from its first instruction.
IN_CGROUP='echo $$ >"$1/cgroup.procs" && shift && exec "$@"'

# remove_cgroups: every cgroup make_cgroup made, the deepest first; a group
# whose processes are still ending gets 5 s.
remove_cgroups() {
	local i j rc=0
	for ((i = ${#CG_MADE[@]} - 1; i >= 0; i--)); do
		for ((j = 0; j < 50; j++)); do
			rmdir "${CG_MADE[i]}" 2>/dev/null && break
			sleep 0.1
		done
		[ ! -d "${CG_MADE[i]}" ] || { echo "cannot remove ${CG_MADE[i]}" >&2; rc=1; }
	done
	CG_MADE=()
	return $rc
}

# how_it_ended COMMAND...: prints "exit N" or "signal N" (bash alone cannot
# tell a death by signal N from an exit with 128+N).
how_it_ended() {
	python3 -c '
import subprocess, sys
r = subprocess.run(sys.argv[1:], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
print("signal %d" % -r.returncode if r.returncode < 0 else "exit %d" % r.returncode)
' "$@"
}

# json_of FILE FILTER: a jq filter over the last JSON report in FILE.
json_of() { tail -n 1 "$1" | jq -r "$2"; }

# demo_merged REPORT: the JSON report of `ksm-run --json -- demo_workers -w 3
# -m 8` says that each worker (a child of the command) merged at least 95%
# of its cache, and that 3 copies of 8 MiB kept one: over 12 MiB saved at
# the peak (up to 16, less ksmd's own records).
demo_merged() {
	local workers
	workers=$(json_of "$1" '.pid as $p | [.processes[] | select(.ppid == $p and .peak_ksm_merging_pages >= 1946)] | length')
	[ "$workers" = 3 ] || { echo "workers that merged 95% of their cache: $workers of 3"; return 1; }
	[ "$(json_of "$1" .general_profit.peak)" -gt $((12 << 20)) ]
}

# child_of PID: the first child of PID.
child_of() { awk '{print $1; exit}' "/proc/$1/task/$1/children"; }

# --- The machine's tuning (tests/32-34) ---
# state_tuner: the pid that holds the tuning in the shared state, or nothing.
state_tuner() { awk '$1 == "tuner" { print $2 }' "$STATE_FILE" 2>/dev/null; }
state_phase() { awk '$1 == "tuner" { print $4 }' "$STATE_FILE" 2>/dev/null; }
phase_is() { [ "$(state_phase)" = "$1" ]; }
# The state's phase by the name --status, its JSON and the metrics give it.
phase_name() { case $(state_phase) in 1) echo boost ;; 2) echo steady ;; *) echo other ;; esac; }
tuner_is() { [ "$(state_tuner)" = "$1" ]; }
# tuner_has_phase: a tuner holds the machine's tuning, boosting or already
# steady (a slow machine's boost may end before a test's first look).
tuner_has_phase() { [ "$(phase_name)" != other ]; }
registered() { grep -q "^user $1 " "$STATE_FILE" 2>/dev/null; }
users_registered() { [ "$(grep -c '^user ' "$STATE_FILE" 2>/dev/null)" = "$1" ]; }

# start_daemon NAME [OPTION]...: ksm-run --daemon as the workload NAME,
# returned once it is registered; its log is wl_err NAME.
start_daemon() {
	local name=$1 pid
	shift
	start_workload "$name" -- sh -c 'echo READY; exec "$@"' sh "$KSM_RUN" --daemon "$@" || return 1
	pid=$(wl_pid "$name")
	wait_until 5 registered "$pid" || { cat "$(wl_err "$name")" >&2; return 1; }
}

# stop_daemon NAME [SIGNAL]: TERM (or SIGNAL), then its exit status in $WL_STATUS.
stop_daemon() {
	kill "-${2:-TERM}" "$(wl_pid "$1")" && wait_workload "$1"
}

# Rates at which the test workloads merge in seconds (KERNEL-NOTES).
FAST_OPTS=(--advisor=none --pages-to-scan=20000 --sleep-millisecs=10)

# sysfs NAME: the file NAME of the KSM sysfs directory, as it reads now.
sysfs() { cat "$KSM/$1"; }

# within_pct A B PCT: |A - B| <= PCT% of B.
within_pct() {
	local a=$1 b=$2 pct=$3 d
	d=$((a > b ? a - b : b - a))
	[ $((d * 100)) -le $((b * pct)) ] || { echo "$a and $b differ by more than $pct%"; return 1; }
}

# metric FILE NAME: the value of the sample NAME in the metrics file FILE
# (with its labels, as written: through the environment, where awk -v would
# undo their escapes).
metric() { K=$2 awk '$1 == ENVIRON["K"] { print $2 }' "$1"; }

# Conditions for wait_until, read afresh at every poll.
knob_above() { [ "$(knob_value "$1")" -gt "$2" ]; }
knob_below() { [ "$(knob_value "$1")" -lt "$2" ]; }
knob_is() { [ "$(knob_value "$1")" = "$2" ]; }
# knobs_are SNAPSHOT: the knobs read as SNAPSHOT (knobs_snapshot's) now.
knobs_are() { [ "$(knobs_snapshot)" = "$1" ]; }
merging_at_least() { [ "$(merged_pages "$1")" -ge "$2" ]; }

# ctrl_c_on_tty KSM_RUN_ARGS...: runs ksm-run on a new pseudo-terminal as
# the foreground job, types Ctrl-C once the command printed READY, then BYE;
# prints the command's "got N" lines and "status N" (ksm-run's wait status).
ctrl_c_on_tty() {
	python3 - "$@" <<'PY'
import os, pty, sys, time
pid, fd = pty.fork()
if pid == 0:
    os.execv(sys.argv[1], sys.argv[1:])
out = b""
def read_until(token, limit=10.0):
    global out
    end = time.time() + limit
    while token not in out and time.time() < end:
        try:
            out += os.read(fd, 4096)
        except OSError:
            break
read_until(b"READY")
os.write(fd, b"\x03")
read_until(b"got 2")
time.sleep(0.3)
os.write(fd, b"BYE\n")
_, status = os.waitpid(pid, 0)
try:
    while True:
        chunk = os.read(fd, 4096)
        if not chunk:
            break
        out += chunk
except OSError:
    pass
# The terminal echoes ^C in front of the command's line.
import re
for m in re.finditer(r"got [0-9]+", out.decode(errors="replace")):
    print(m.group(0))
print("status %d" % status)
PY
}
