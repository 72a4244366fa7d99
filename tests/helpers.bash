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
# The sanitized run (make check-asan, tests/check-asan) sets
#   KSMENABLE_SANITIZER_RUNTIME   the runtime that must come first in every
#                                 process that loads the library;
#   KSMENABLE_SANITIZER_CC, _CFLAGS  how a program linking it is built;
#   KSMENABLE_SANITIZER_LOG       where every report goes, named after the
#                                 test (FILE.NUMBER.PROGRAM.PID); any report
#                                 fails the run.
SANITIZER_RUNTIME=${KSMENABLE_SANITIZER_RUNTIME:-}
SANITIZER_CC=${KSMENABLE_SANITIZER_CC:-}
SANITIZER_CFLAGS=${KSMENABLE_SANITIZER_CFLAGS:-}
if [ -n "${KSMENABLE_SANITIZER_LOG:-}" ]; then
	_t=${BATS_TEST_FILENAME##*/}
	_t=$KSMENABLE_SANITIZER_LOG/${_t%.bats}.${BATS_TEST_NUMBER:-file}
	export ASAN_OPTIONS="${ASAN_OPTIONS:-}:log_path=$_t" UBSAN_OPTIONS="${UBSAN_OPTIONS:-}:log_path=$_t"
	unset _t
fi
# Under ASan, LeakSanitizer checks a process at its exit from a tracer task
# that shares the process's memory, and ksm-run's tree counts it, with the
# same merged pages, while it lives: a test that counts a command's
# processes runs it with NO_LSAN in its environment (ksm-run's own leaks are
# checked in the other tests).  Empty outside the sanitized run.
NO_LSAN=${SANITIZER_RUNTIME:+ASAN_OPTIONS=${ASAN_OPTIONS:-}:detect_leaks=0}
# ASan's malloc never grows the brk heap: there dupmem's heap= moves the
# break itself, so that the tests of the [heap] still have one.
[ -z "$SANITIZER_RUNTIME" ] || export DUPMEM_HEAP=brk
# What LD_PRELOAD gets to load the library (KSMENABLE_PRELOAD): the library
# itself, or, in the sanitized run, the runtime first.
PRELOAD=${KSMENABLE_PRELOAD:-${SANITIZER_RUNTIME:+$SANITIZER_RUNTIME:}$LIB}
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

# not_sanitized REASON: a test that cannot mean under a sanitizer what it
# means in a normal build skips in the sanitized run, saying why (also under
# CI: the normal run, where it runs, is where it counts).  Keep them few.
not_sanitized() {
	[ -z "$SANITIZER_RUNTIME" ] || skip "not under a sanitizer: $*"
}

# run_preload LIBRARY: what ksm-run puts in front of LD_PRELOAD to load
# LIBRARY (a sanitized ksm-run puts its runtime first).
run_preload() { echo "${SANITIZER_RUNTIME:+$SANITIZER_RUNTIME:}$1"; }

# kernel_lacks FEATURE: the test needs FEATURE of the kernel, which this
# one lacks (found by probe, never by version).  Not applicable where that
# is allowed, the guest run of another kernel (tests/guest-run sets
# KSMENABLE_KERNEL_NA=1); elsewhere a skip, which under CI=true fails.
kernel_lacks() {
	[ "${KSMENABLE_KERNEL_NA:-}" != 1 ] || skip "not applicable: this kernel has no $*"
	skip_or_fail "this kernel has no $*"
}

requires() {
	local what
	for what in "$@"; do
		case $what in
		root) [ "$(id -u)" = 0 ] || skip_or_fail "needs root" ;;
		ksm) [ -w $KSM/run ] || skip_or_fail "needs a writable $KSM" ;;
		prctl) [ "$(merge_any_unset)" = 0 ] || kernel_lacks "PR_SET_MEMORY_MERGE (Linux 6.4)" ;;
		advisor) [ -e $KSM/advisor_mode ] || kernel_lacks "scan-time advisor (advisor_mode, Linux 6.8)" ;;
		smart_scan) [ -e $KSM/smart_scan ] || kernel_lacks "smart scan (smart_scan, Linux 6.7)" ;;
		general_profit) [ -e $KSM/general_profit ] || kernel_lacks "general_profit (Linux 6.4)" ;;
		smaps_ksm) smaps_has_ksm || kernel_lacks "KSM: line in smaps (Linux 6.6)" ;;
		zero_pages) [ -e $KSM/ksm_zero_pages ] || kernel_lacks "ksm_zero_pages (Linux 6.10)" ;;
		kpageflags_ksm) kpageflags_ksm_sound ||
			kernel_lacks "/proc/kpageflags KSM flag on KSM pages alone (Debian 13's 6.12 flags every anonymous page)" ;;
		musl) [ -x "$MUSL_BUILD/tests/dupmem" ] || skip_or_fail "no musl build (install musl-tools)" ;;
		faultinject) [ -x "$FAULT" ] || skip_or_fail "no fault injector (libseccomp-dev)" ;;
		jq) command -v jq >/dev/null || skip_or_fail "needs jq" ;;
		cmd:*) command -v "${what#cmd:}" >/dev/null || skip_or_fail "needs ${what#cmd:} (tests/install-deps)" ;;
		ksmtuned) [ -x "$KSMTUNED" ] || skip_or_fail "needs $KSMTUNED (tests/install-deps unpacks it)" ;;
		node_exporter) [ -x "$NODE_EXPORTER" ] || skip_or_fail "needs $NODE_EXPORTER (tests/install-deps unpacks it)" ;;
		*) echo "requires: unknown $what" >&2; return 1 ;;
		esac
	done
}

# Debian's ksmtuned, unpacked (not installed) by tests/install-deps.
KSMTUNED=${KSMENABLE_UNPACK_DIR:-/var/lib/ksmenable-tests}/ksmtuned/usr/sbin/ksmtuned
# Debian's node_exporter, unpacked too: installed, its service would start.
NODE_EXPORTER=${KSMENABLE_UNPACK_DIR:-/var/lib/ksmenable-tests}/prometheus-node-exporter/usr/bin/prometheus-node-exporter

# --- KSM knobs: every test file that touches them saves and restores all. ---

# The writable knobs in the order ksm-run writes them, from ksm-run itself
# (the advisor's limits, its mode, which resets pages_to_scan, then the
# rates, run last): restoring in that order puts back what was saved.
KNOB_ORDER=$("$KSM_RUN" --list-knobs 2>/dev/null) || KNOB_ORDER=

knob_value() {
	local v
	v=$(cat "$KSM/$1") || return 1
	case $1 in advisor_mode) v=${v#*[}; v=${v%%]*} ;; esac
	printf '%s\n' "$v"
}

# save_knobs [FILE]: every knob as NAME VALUE lines, by default in the test
# file's directory.  Call save_knobs in setup_file, restore_knobs in
# teardown_file (the launcher fixture does).
save_knobs() {
	local k file=${1:-$BATS_FILE_TMPDIR/knobs.saved}
	[ -n "$KNOB_ORDER" ] || { echo "save_knobs: no knob list from $KSM_RUN --list-knobs" >&2; return 1; }
	: >"$file"
	for k in $KNOB_ORDER; do
		[ -e "$KSM/$k" ] && echo "$k $(knob_value $k)" >>"$file"
	done
	return 0
}

# The scan-time advisor owns pages_to_scan while it is active: it can be
# neither written nor compared then.
advisor_owns() { [ "$1" = pages_to_scan ] && [ -e "$KSM/advisor_mode" ] && [ "$(knob_value advisor_mode)" = scan-time ]; }

# advisor_off: the scan-time advisor off where the kernel has one (6.8 and
# later); before, there is nothing to switch off.
advisor_off() { [ ! -e "$KSM/advisor_mode" ] || echo none >"$KSM/advisor_mode"; }

# restore_knobs [FILE]: writes back what differs, in the saved order, then
# checks that every knob reads as saved; fails naming those that do not.
restore_knobs() {
	local k v now bad=0 file=${1:-$BATS_FILE_TMPDIR/knobs.saved}
	[ -f "$file" ] || return 0
	while read -r k v; do
		[ "$(knob_value "$k")" = "$v" ] && continue
		advisor_owns "$k" && continue
		echo "$v" >"$KSM/$k" 2>/dev/null || true
	done <"$file"
	while read -r k v; do
		advisor_owns "$k" && continue
		now=$(knob_value "$k")
		[ "$now" = "$v" ] && continue
		echo "restore_knobs: cannot restore $k=$v (it is $now)" >&2
		bad=1
	done <"$file"
	return $bad
}

# Rates at which 48 MiB of duplicates merge in a few seconds (KERNEL-NOTES).
fast_ksm() {
	advisor_off
	echo 20000 >$KSM/pages_to_scan
	echo 10 >$KSM/sleep_millisecs
	echo 1 >$KSM/run
}

# settle_ksm: has ksmd drop what exited test processes left in its trees
# (their pages stay counted while ksmd is stopped), then stops ksmd (run=0,
# the fast rates left in place): system-wide counters then start from a
# quiet state, holding nothing of earlier tests.  Waits on the kernel's own
# counters, 30 s at most:
#  - two full scans since the call: every registered process visited once,
#    so the slots of exited ones are gone (as the kernel selftests wait);
#  - or ksmd holds nothing (pages_shared, pages_sharing, pages_unshared and
#    pages_volatile all 0) and full_scans has not moved for 1 s: with no
#    process registered ksmd idles and counts no more scans, so waiting for
#    scans alone could wait forever.
settle_ksm() {
	local f0 f last i still=0
	fast_ksm
	f0=$(cat $KSM/full_scans)
	last=$f0
	for ((i = 0; i < 300; i++)); do
		f=$(cat $KSM/full_scans)
		[ "$f" -ge $((f0 + 2)) ] && break
		if [ "$f" = "$last" ]; then still=$((still + 1)); else still=0 last=$f; fi
		[ $still -ge 10 ] && ksm_holds_nothing && break
		sleep 0.1
	done
	echo 0 >$KSM/run
	[ $i -lt 300 ] || { echo "settle_ksm: not settled in 30 s: $(ksm_counters)" >&2; return 1; }
}

ksm_holds_nothing() {
	local c
	for c in pages_shared pages_sharing pages_unshared pages_volatile; do
		[ "$(cat $KSM/$c)" = 0 ] || return 1
	done
}

ksm_counters() {
	local c
	for c in full_scans pages_shared pages_sharing pages_unshared pages_volatile; do
		printf '%s=%s ' $c "$(cat $KSM/$c)"
	done
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

# --- Running as the unprivileged user nobody. ---

# nobody: uid and gid 65534, no supplementary groups.
NOBODY=(setpriv --reuid=65534 --regid=65534 --clear-groups)
as_nobody() { "${NOBODY[@]}" "$@"; }

# stage_for_nobody [PROGRAM...]: the tree the suite runs from may be private
# (a clone in root's home, mode 0700), where nobody reaches nothing.  Copies
# ksm-run, the library next to it (where ksm-run looks first) and the named
# test programs into a new directory of mode 0755 under /var/tmp, and sets
# NB_DIR, NB_KSM_RUN, NB_LIB and NB_PROGS (NB_DIR/tests).  Not /tmp: it is
# often a tmpfs mounted nosuid (Debian 13's, the guest's), where a file's
# capabilities and set-user-ID bit do nothing, and the tests of secure
# execution would test nothing (16-secure failed so on 6.12 in the guest).  A program that
# links the library (linked_*) is linked again against the staged copy: its
# run path names the build tree, absolute because the loader ignores
# $ORIGIN under secure execution.  unstage removes it all (the launcher
# fixture's teardown calls it).
stage_for_nobody() {
	local p
	NB_DIR=$(mktemp -d /var/tmp/ksmenable-nobody.XXXXXX) || return 1
	NB_KSM_RUN=$NB_DIR/ksm-run NB_LIB=$NB_DIR/libksmenable.so NB_PROGS=$NB_DIR/tests
	mkdir "$NB_PROGS"
	cp "$KSM_RUN" "$NB_KSM_RUN"
	# The soname (what a linked program needs at run time) and the link to it.
	cp "$LIB" "$NB_DIR/libksmenable.so.0"
	ln -s libksmenable.so.0 "$NB_LIB"
	for p in "$@"; do
		case $p in
		linked_*)
			# shellcheck disable=SC2086 # a list of flags
			${SANITIZER_CC:-${CC:-cc}} -D_GNU_SOURCE -I"$TOP/include" -std=c11 -O1 -pthread $SANITIZER_CFLAGS -o "$NB_PROGS/$p" \
				"$TOP/tests/progs/$p.c" -L"$NB_DIR" -lksmenable -Wl,-rpath,"$NB_DIR" || return 1
			;;
		*) cp "$PROGS/$p" "$NB_PROGS/$p" || return 1 ;;
		esac
	done
	chmod -R u=rwX,go=rX "$NB_DIR"
	as_nobody test -x "$NB_KSM_RUN" -a -r "$NB_LIB" ||
		{ echo "stage_for_nobody: nobody cannot reach $NB_DIR" >&2; return 1; }
}

unstage() {
	[ -z "${NB_DIR:-}" ] || rm -rf "$NB_DIR"
	NB_DIR=
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
# not_mergeable PID ADDR: the region is there and not mergeable.  A missing
# one (an empty address, a VMA gone) has no VmFlags line, which must not
# pass for "kept out".
not_mergeable() {
	local flags
	[ -n "$2" ] || { echo "not_mergeable: no address" >&2; return 1; }
	flags=$(smaps_field "$1" "$2" VmFlags)
	[ -n "$flags" ] || { echo "not_mergeable: no VMA at $2 in $1" >&2; return 1; }
	run ! grep -qw mg <<<"$flags"
}
# smaps_has_ksm: does this kernel write smaps' KSM: line (6.6)?  (grep
# stops at the first mapping's, so asking each time costs little.)
smaps_has_ksm() { grep -q '^KSM:' /proc/self/smaps; }

# kpageflags_ksm_sound: does /proc/kpageflags flag KSM pages alone?  Debian
# 13's 6.12 flags every anonymous page KSM.  This shell's stack is
# anonymous and never merged.
kpageflags_ksm_sound() {
	local stack
	stack=$(awk '$NF == "[stack]" { split($1, a, "-"); print a[1]; exit }' /proc/$$/maps)
	[ "$("$PROGS/ksmframes" $$ "$stack")" = 0 ]
}

# region_ksm_kb PID ADDR: the KiB of the region's pages that are KSM pages:
# smaps' KSM: line (6.6), or by frame where the kernel has no such line.
region_ksm_kb() {
	if smaps_has_ksm; then
		smaps_field "$1" "$2" KSM | awk '{print $1 + 0}'
	else
		"$PROGS/ksmframes" "$1" "$2"
	fi
}

# merged_pages PID: the pages PID maps from KSM pages as the kernel counts
# them: ksm_stat's ksm_merging_pages (6.4), else the file of its own (5.19;
# Linux 6.1 has ksm_stat without that line), else by frame, as the file
# would (5.10, 5.15).  Empty when none can be read.
merged_pages() {
	local v
	v=$(awk '$1 == "ksm_merging_pages" { print $2 }' "/proc/$1/ksm_stat" 2>/dev/null)
	[ -n "$v" ] || v=$(cat "/proc/$1/ksm_merging_pages" 2>/dev/null)
	[ -n "$v" ] || [ -e /proc/self/ksm_merging_pages ] || ! v=$("$PROGS/ksmframes" "$1" 2>/dev/null) ||
		v=$((v / ($(getconf PAGESIZE) / 1024)))
	echo "$v"
}

# merge_any_unset: what PR_GET_MEMORY_MERGE reads in a process that nothing
# enabled, read in one: 0, or -1 (EINVAL) on a kernel without the prctl.
merge_any_unset() { "$PROGS/dupmem" getmerge | awk '$1 == "merge_any" { print $3 }'; }

region_merged() { [ "$(region_ksm_kb "$1" "$2")" -gt 0 ]; }
# region_merged_kb PID ADDR KB: KB KiB of the region or more are KSM pages
# (ksmd may be halfway through them when the first one shows).
region_merged_kb() { [ "$(region_ksm_kb "$1" "$2")" -ge "$3" ]; }

# The program that marks its own memory (tests/progs/marks.c), and how it
# locks a range: a sanitizer's runtime answers mlock itself, with 0 and
# nothing locked (compiler-rt: "ignores mlock/mlockall/munlock/munlockall"),
# so in the sanitized run it locks with mlock2, which the runtime leaves to
# the library and the kernel.
marks() { echo "$PROGS/marks"; }
LOCK=mlock${SANITIZER_RUNTIME:+2}

# --- Workloads in the background, with a READY/BYE handshake. ---
#
# start_workload [NAME] [ENV=VALUE...] -- PROGRAM ARGS...
#	runs PROGRAM with its stdin on a fifo and its stdout and stderr in
#	files, and waits (10 s) for its READY line; fails at once if it ends
#	before.  NAME (letters, digits, _) tells several workloads of a test
#	apart; without it the workload is the default one, whose pid, stdout and
#	stderr files are also in $WL_PID, $WL_OUT and $WL_ERR.
# wl_pid [NAME], wl_out [NAME], wl_err [NAME]: its pid and files (the files
#	stay readable after it stopped).
# stop_workload [NAME]: sends BYE and waits (bounded; KILL after 20 s);
#	the exit status in $WL_STATUS and in wl_status [NAME].
# wait_workload [NAME]: waits without BYE, for a workload told to end
#	otherwise (a signal); bounded the same way.
# stop_workloads: stops every workload still running (for teardown).
#
# Associative arrays, global (load runs inside a function), fresh in each
# test's process.
declare -gA WL_PIDS=() WL_FDS=() WL_DIRS=() WL_STATUSES=()
WL_DEFAULT=main

start_workload() {
	local name=$WL_DEFAULT envs=() dir fd pid
	if [ "${1:-}" != -- ] && [[ ${1:-} != *=* ]]; then
		name=$1
		shift
	fi
	[[ $name =~ ^[A-Za-z0-9_]+$ ]] || { echo "start_workload: bad name '$name'" >&2; return 1; }
	[ -z "${WL_PIDS[$name]:-}" ] || { echo "start_workload: $name already runs" >&2; return 1; }
	while [ "$#" -gt 0 ] && [ "$1" != -- ]; do envs+=("$1"); shift; done
	[ "${1:-}" = -- ] || { echo "start_workload: no -- before the command" >&2; return 1; }
	shift
	dir=$(mktemp -d "$BATS_TEST_TMPDIR/wl-$name.XXXXXX")
	mkfifo "$dir/in"
	env "${envs[@]}" "$@" <"$dir/in" >"$dir/out" 2>"$dir/err" &
	pid=$!
	exec {fd}>"$dir/in"
	WL_PIDS[$name]=$pid WL_FDS[$name]=$fd WL_DIRS[$name]=$dir
	unset "WL_STATUSES[$name]"
	if [ "$name" = "$WL_DEFAULT" ]; then
		WL_PID=$pid WL_OUT=$dir/out WL_ERR=$dir/err
	fi
	# READY within 30 s (a sanitized program under TCG is slow to start);
	# a workload that ends before fails at once.
	local i
	for ((i = 0; i < 300; i++)); do
		grep -q '^READY' "$dir/out" && return 0
		if gone "$pid"; then
			# its main thread may end once READY is out (the leader then looks gone)
			grep -q '^READY' "$dir/out" && return 0
			echo "start_workload: $name ended before READY: $(cat "$dir/err")" >&2
			return 1
		fi
		sleep 0.1
	done
	echo "start_workload: no READY from $name within 30 s" >&2
	return 1
}

wl_pid() {
	local n=${1:-$WL_DEFAULT}
	[ -n "${WL_PIDS[$n]:-}" ] || { echo "wl_pid: no running workload $n" >&2; return 1; }
	echo "${WL_PIDS[$n]}"
}
wl_dir() {
	local n=${1:-$WL_DEFAULT}
	[ -n "${WL_DIRS[$n]:-}" ] || { echo "no workload $n in this test" >&2; return 1; }
	echo "${WL_DIRS[$n]}"
}
wl_out() { local d; d=$(wl_dir "$@") && echo "$d/out"; }
wl_err() { local d; d=$(wl_dir "$@") && echo "$d/err"; }
wl_status() {
	local n=${1:-$WL_DEFAULT}
	[ -n "${WL_STATUSES[$n]:-}" ] || { echo "wl_status: workload $n not stopped" >&2; return 1; }
	echo "${WL_STATUSES[$n]}"
}

# workload_region NAME [WORKLOAD]: the start address (hex) of a region the
# workload printed as "region NAME START END".
workload_region() { awk -v n="$1" '$1 == "region" && $2 == n { print $3; exit }' "$(wl_out "${2:-}")"; }

# gone PID: PID has exited (it may be a zombie still to be waited for).
gone() { [ ! -e "/proc/$1" ] || grep -q '^State:[[:space:]]*Z' "/proc/$1/status" 2>/dev/null; }

stop_workload() {
	local name=${1:-$WL_DEFAULT} fd
	[ -n "${WL_PIDS[$name]:-}" ] || return 0
	fd=${WL_FDS[$name]}
	# In a subshell: a workload that is gone leaves no reader, and SIGPIPE
	# must not kill the test runner.
	(echo BYE >&"$fd") 2>/dev/null || true
	wait_workload "$name"
}

# descendants PID: the PIDs of PID's children, their children and so on.
descendants() {
	local child
	for child in $(cat "/proc/$1"/task/*/children 2>/dev/null); do
		echo "$child"
		descendants "$child"
	done
}

wait_workload() {
	local name=${1:-$WL_DEFAULT} pid fd late=
	pid=$(wl_pid "$name") || return 1
	fd=${WL_FDS[$name]}
	# A workload that does not end is killed with all it started: a child
	# left behind (one stopped in vfork, say) would hold the runner's
	# output open, and bats would wait for it for ever.
	wait_until 20 gone "$pid" || {
		late=1
		kill -KILL "$pid" $(descendants "$pid") 2>/dev/null
	}
	WL_STATUS=0
	wait "$pid" || WL_STATUS=$?
	exec {fd}>&-
	WL_STATUSES[$name]=$WL_STATUS
	unset "WL_PIDS[$name]" "WL_FDS[$name]"
	[ "$name" != "$WL_DEFAULT" ] || WL_PID=
	[ -z "$late" ] || { echo "workload $name did not end within 20 s: killed" >&2; return 1; }
}

stop_workloads() {
	local name rc=0
	for name in "${!WL_PIDS[@]}"; do
		stop_workload "$name" || rc=1
	done
	return $rc
}
