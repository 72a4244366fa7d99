# Shared helpers for the bats suite.  Load with: load helpers
bats_require_minimum_version 1.5.0
#
# Paths can be overridden so that the same suite runs against an installed
# copy: KSMENABLE_LIB (the library), KSMENABLE_BUILD (the build directory
# holding test programs), KSM_RUN (the launcher).

TOP=$(cd "$BATS_TEST_DIRNAME/.." && pwd)
BUILD=${KSMENABLE_BUILD:-build/cc}
case $BUILD in /*) ;; *) BUILD=$TOP/$BUILD ;; esac
LIB=${KSMENABLE_LIB:-$BUILD/libksmenable.so}
PROGS=$BUILD/tests
MUSL_BUILD=$TOP/build/musl-gcc
FAULT=$TOP/build/host/faultinject
KSM_RUN=${KSM_RUN:-$BUILD/ksm-run}
KSM=/sys/kernel/mm/ksm

# skip with a reason, except under CI where a skip is a failure: a suite must
# not pass by skipping everything.
skip_or_fail() {
	if [ "${CI:-}" = true ]; then
		echo "required for CI but missing: $*" >&2
		return 1
	fi
	skip "$*"
}

requires() {
	local what
	for what in "$@"; do
		case $what in
		root) [ "$(id -u)" = 0 ] || skip_or_fail "needs root" ;;
		ksm) [ -w $KSM/run ] || skip_or_fail "needs a writable $KSM" ;;
		prctl) "$PROGS/dupmem" getmerge | grep -qv -- ' -1$' \
			|| skip_or_fail "kernel has no PR_GET_MEMORY_MERGE" ;;
		musl) [ -x "$MUSL_BUILD/tests/dupmem" ] || skip_or_fail "no musl build (install musl-tools)" ;;
		faultinject) [ -x "$FAULT" ] || skip_or_fail "no fault injector (libseccomp-dev)" ;;
		*) echo "requires: unknown $what" >&2; return 1 ;;
		esac
	done
}

# --- KSM knobs: every test file that touches them saves and restores all. ---

# Writable knobs in an order that restores cleanly: the advisor mode resets
# pages_to_scan, so it goes first; run goes last.
KNOB_ORDER="advisor_mode advisor_target_scan_time advisor_max_cpu advisor_min_pages_to_scan
advisor_max_pages_to_scan pages_to_scan sleep_millisecs smart_scan use_zero_pages
max_page_sharing merge_across_nodes stable_node_chains_prune_millisecs run"

knob_value() {
	local v
	v=$(cat "$KSM/$1") || return 1
	case $1 in advisor_mode) v=${v#*[}; v=${v%%]*} ;; esac
	printf '%s\n' "$v"
}

# Saved per test file: call save_knobs in setup_file, restore_knobs in
# teardown_file.
save_knobs() {
	local k
	: >"$BATS_FILE_TMPDIR/knobs.saved"
	for k in $KNOB_ORDER; do
		[ -e "$KSM/$k" ] && echo "$k $(knob_value $k)" >>"$BATS_FILE_TMPDIR/knobs.saved"
	done
}

restore_knobs() {
	local k v
	[ -f "$BATS_FILE_TMPDIR/knobs.saved" ] || return 0
	while read -r k v; do
		[ "$(knob_value "$k")" = "$v" ] && continue
		# The scan-time advisor owns pages_to_scan while it is active.
		[ "$k" = pages_to_scan ] && [ "$(knob_value advisor_mode)" = scan-time ] && continue
		echo "$v" >"$KSM/$k" 2>/dev/null || echo "restore_knobs: cannot restore $k=$v" >&2
	done <"$BATS_FILE_TMPDIR/knobs.saved"
}

# Rates at which 48 MiB of duplicates merge in a few seconds (KERNEL-NOTES).
fast_ksm() {
	echo none >$KSM/advisor_mode
	echo 20000 >$KSM/pages_to_scan
	echo 10 >$KSM/sleep_millisecs
	echo 1 >$KSM/run
}

# wait_until SECONDS COMMAND...: poll COMMAND every 0.1 s; fail after SECONDS.
wait_until() {
	local limit=$(( $1 * 10 )) i=0
	shift
	until "$@"; do
		i=$((i + 1))
		[ $i -lt $limit ] || { echo "timed out waiting for: $*" >&2; return 1; }
		sleep 0.1
	done
}

# --- Reading a process's regions from smaps. ---

# smaps_field PID ADDR FIELD: a field of the VMA that contains ADDR (hex, no
# 0x), e.g. "KSM" (kB) or "VmFlags".
smaps_field() {
	awk -v addr="$2" -v field="$3:" '
		function num(h) { h = sprintf("%16s", h); gsub(/ /, "0", h); return h }
		/^[0-9a-f]+-[0-9a-f]+ / { split($1, a, "-"); cur = (num(a[1]) <= num(addr) && num(addr) < num(a[2])) }
		cur && $1 == field { $1 = ""; sub(/^ /, ""); print; exit }
	' "/proc/$1/smaps"
}

region_mergeable() { smaps_field "$1" "$2" VmFlags | grep -qw mg; }
region_ksm_kb() { smaps_field "$1" "$2" KSM | awk '{print $1 + 0}'; }
region_merged() { [ "$(region_ksm_kb "$1" "$2")" -gt 0 ]; }

# --- A workload in the background, with a READY/BYE handshake. ---

# start_workload [ENV=VALUE...] -- PROGRAM ARGS...: runs it with its stdin on
# a fifo and its stdout in $WL_OUT; waits for its READY line (10 s).
start_workload() {
	local envs=()
	while [ "$1" != -- ]; do envs+=("$1"); shift; done
	shift
	WL_DIR=$(mktemp -d "$BATS_TEST_TMPDIR/wl.XXXXXX")
	WL_OUT=$WL_DIR/out
	WL_ERR=$WL_DIR/err
	mkfifo "$WL_DIR/in"
	env "${envs[@]}" "$@" <"$WL_DIR/in" >"$WL_OUT" 2>"$WL_ERR" &
	WL_PID=$!
	exec {WL_FD}>"$WL_DIR/in"
	wait_until 10 grep -q '^READY' "$WL_OUT"
}

# workload_region NAME: the start address (hex) of a region the workload
# printed as "region NAME START END".
workload_region() { awk -v n="$1" '$1 == "region" && $2 == n { print $3; exit }' "$WL_OUT"; }

# stop_workload: sends BYE, waits; sets WL_STATUS.
stop_workload() {
	[ -n "${WL_PID:-}" ] || return 0
	# In a subshell: a workload that is gone leaves no reader, and SIGPIPE
	# must not kill the test runner.
	(echo BYE >&"$WL_FD") 2>/dev/null || true
	exec {WL_FD}>&-
	WL_STATUS=0
	wait "$WL_PID" || WL_STATUS=$?
	WL_PID=
}
