#!/usr/bin/env bats
# The systemd unit of the daemon (launcher/systemd/ksmenable.service.in):
# its hardening as systemd-analyze rates it, and the daemon alive inside
# that hardening.  systemd is not PID 1 on the test machines, so the
# sandbox is built here from the unit's own lines (its capabilities, its
# writable paths, a read-only tree, hidepid, RestrictRealtime=) and the
# system call filter is checked against what the daemon calls under strace.
# ci: lock asan

load helpers
load launcher_helpers

LAUNCHER_REQUIRES="root ksm prctl cmd:systemd-analyze"

UNIT_IN=$TOP/launcher/systemd/ksmenable.service.in
TEXTFILES_DIR=/var/lib/prometheus/node-exporter

teardown_extra() {
	local n
	for n in "${!WL_PIDS[@]}"; do
		case $n in daemon*) kill -TERM "${WL_PIDS[$n]}" 2>/dev/null ;; esac
	done
	[ -z "${DAEMON_PID:-}" ] || kill -TERM "$DAEMON_PID" 2>/dev/null
	return 0
}

# The unit as make install writes it, with the ksm-run under test.
make_unit() {
	sed "s|@BINDIR@|$(dirname "$KSM_RUN")|g" "$UNIT_IN" >"$BATS_TEST_TMPDIR/ksmenable.service"
	echo "$BATS_TEST_TMPDIR/ksmenable.service"
}

# unit_values UNIT KEY: the values of every KEY= line, continuation lines
# joined, one per line.
unit_values() {
	awk -v key="$2=" 'index($0, key) == 1 { on = 1; $0 = substr($0, length(key) + 1) }
		on { cont = sub(/\\$/, ""); sub(/^[ \t]+/, ""); printf "%s%s", $0, cont ? " " : "\n"; on = cont }' "$1"
}

# The overall exposure that systemd-analyze security gives UNIT, e.g. 2.3.
exposure() {
	systemd-analyze security --offline=true "$1" 2>/dev/null |
		sed -n 's/.*Overall exposure level for [^:]*: \([0-9.]*\) .*/\1/p'
}

# Below this the unit keeps every option the daemon can live with (it
# measured 1.3; the unit before the hardening measured 6.5; 2.0 since the
# agent listens to the kernel's process events, which need netlink,
# CAP_NET_ADMIN and the host's network namespace: +0.2, +0.1 and +0.5;
# 2.3 since the agent's stops are raised to SCHED_FIFO, which needs
# sched_setscheduler of @resources, RestrictRealtime=no and CAP_SYS_NICE:
# +0.2, +0.1 and a share of CAP_SYS_(NICE|RESOURCE)'s 0.1).
EXPOSURE_MAX=2.4

@test "the unit: systemd-analyze security rates it under $EXPOSURE_MAX, every option it lacks says why" {
	local unit level key
	unit=$(make_unit)
	level=$(exposure "$unit")
	echo "exposure $level"
	[ -n "$level" ]
	awk -v l="$level" -v max="$EXPOSURE_MAX" 'BEGIN { exit !(l < max) }'
	# The README gives the figure measured here (issue 33: it said 1.3 while the unit rated 2.0).
	tr '\n' ' ' <"$TOP/README.md" | grep -q "rates it $level OK" ||
		{ echo "README.md does not give the exposure measured, $level" >&2; return 1; }
	# The options it cannot take are named in a comment with the reason.
	for key in 'User=' 'PrivateUsers=' 'ProcSubset=' 'RootDirectory=' 'PrivateNetwork=' 'RestrictRealtime='; do
		grep -q "^#.*Not $key\|^#.*(not $key" "$UNIT_IN" || { echo "no comment on $key" >&2; return 1; }
	done
	# verify checks that Documentation= names a man page that man finds: the
	# daemon's, its policy's and ksm-run's.
	grep -qx 'Documentation=man:ksm-run-daemon(8) man:ksmenable.conf(5) man:ksm-run(1)' "$UNIT_IN"
	local page
	for page in "$TOP"/man/*.[1-8]; do
		mkdir -p "$BATS_TEST_TMPDIR/man/man${page##*.}"
		ln -s "$page" "$BATS_TEST_TMPDIR/man/man${page##*.}/"
	done
	run -0 env MANPATH="$BATS_TEST_TMPDIR/man" systemd-analyze verify "$unit"
	[ -z "$output" ]
}

# (Not in the 6.1 guest, where 33-daemon held it: make install builds
# again for its PREFIX, which took 5:47 under TCG, and nothing of it is
# the kernel's.)
@test "the unit: installed by make install, and systemd-analyze verify passes" {
	requires cmd:systemd-analyze cmd:man
	local d=$BATS_TEST_TMPDIR/inst
	make -C "$TOP" -s install PREFIX="$d/usr" O="$d/build" >/dev/null
	local unit=$d/usr/lib/systemd/system/ksmenable.service
	[ -f "$unit" ]
	grep -q "exec $d/usr/bin/ksm-run --daemon'$" "$unit"
	grep -qx "ExecStopPost=-$d/usr/bin/ksm-run --restore" "$unit"
	grep -qx "RestartPreventExitStatus=125" "$unit"
	# verify also checks that Documentation= names a man page that man finds.
	run -0 env MANPATH="$d/usr/share/man" systemd-analyze verify "$unit"
	[ -z "$output" ]
	make -C "$TOP" -s uninstall PREFIX="$d/usr" O="$d/build" >/dev/null
	[ ! -e "$unit" ]
}

# unit_sandbox: in SANDBOX, the words that run a command as the unit
# would, without systemd: only the capabilities of CapabilityBoundingSet=,
# no new privileges, every mount read-only (ProtectSystem=strict,
# ProtectKernelTunables=) except the unit's ReadWritePaths=,
# RuntimeDirectory= and StateDirectory= (made here as systemd makes them),
# /proc mounted again with ProtectProc='s hidepid, and with
# RestrictRealtime=yes systemd's filter of real-time policies
# (tests/progs/restrictrt.c).
# TEXTFILES, if set, stands for node_exporter's directory; the directories
# in SANDBOX_RW stay writable too (strace's logs).
unit_sandbox() {
	local unit caps rw=() p rt=()
	unit=$(make_unit)
	case $(unit_values "$unit" RestrictRealtime | tail -n 1) in
	yes | true | on | 1) rt=("$PROGS/restrictrt") ;;
	esac
	caps=$(unit_values "$unit" CapabilityBoundingSet | tr 'A-Z ' 'a-z,' | sed 's/cap_/+/g')
	for p in $(unit_values "$unit" RuntimeDirectory); do
		mkdir -p -m 0755 "/run/$p"
		rw+=("/run/$p")
	done
	for p in $(unit_values "$unit" StateDirectory); do
		mkdir -p -m 0755 "/var/lib/$p"
		rw+=("/var/lib/$p")
	done
	for p in $(unit_values "$unit" ReadWritePaths); do
		p=${p#-}
		[ "$p" != "$TEXTFILES_DIR" ] || p=${TEXTFILES:-$p}
		rw+=("$p")
	done
	# shellcheck disable=SC2206 # a list of directories without spaces
	rw+=(${SANDBOX_RW:-})
	# shellcheck disable=SC2016 # expanded by the inner shell
	SANDBOX=(unshare --mount --propagation private sh -ec '
		hidepid=$1 caps=$2
		shift 2
		findmnt -rno TARGET | while read -r m; do
			case $m in /proc*|/dev*|/sys/*) continue ;; esac
			mount -o remount,bind,ro "$m"
		done
		while [ "$1" != -- ]; do
			if [ -d "$1" ]; then
				mount --bind "$1" "$1"
				mount -o remount,bind,rw "$1"
			fi
			shift
		done
		shift
		mount -t proc -o hidepid="$hidepid" proc /proc
		exec setpriv --bounding-set=-all,"$caps" --inh-caps=-all --no-new-privs -- "$@"
	' sh "$(unit_values "$unit" ProtectProc)" "$caps" "${rw[@]}" -- "${rt[@]}")
}

# The unit's ExecStart= as words, for "$@", with TEXTFILES for node_exporter's directory.
unit_exec_start() {
	local line
	line=$(unit_values "$(make_unit)" ExecStart | sed "s|$TEXTFILES_DIR|$TEXTFILES|g; s/\\\$\\\$/\$/g")
	eval "EXEC_START=($line)"
}

# HUP, then the daemon's line of where it stands: candidate memory of at
# least MIB (the first tick may not have counted it yet: asked again, after
# more than a tick, as a HUP starts the second of the daemon's wait anew).
hup_shows_candidate_mib() {
	local mib
	kill -HUP "$DAEMON_PID"
	sleep 1.5
	mib=$(tail -n 1 "$(wl_err daemon)" | sed -n 's/.*; candidate memory \(-\{0,1\}[0-9]*\) MiB.*/\1/p')
	[ -n "$mib" ] && [ "$mib" -ge "$1" ]
}

daemon_pid() { DAEMON_PID=$(state_tuner) && [ -n "$DAEMON_PID" ]; }

# The system calls in strace's log FILE..., one name a line.
syscalls_of() {
	sed -E 's/^[0-9]+ +//; s/^<\.\.\. ([a-z0-9_]+) resumed.*/\1/; s/\(.*//' "$@" | grep -E '^[a-z_0-9]+$' | sort -u
}

# The system calls of a systemd group, its groups expanded.
syscall_group() {
	local s
	systemd-analyze syscall-filter "$1" 2>/dev/null | sed 1d | awk '$1 !~ /^#/ && NF { print $1 }' |
		while read -r s; do
			case $s in @*) syscall_group "$s" ;; *) echo "$s" ;; esac
		done
}

# The system calls of the words W..., groups expanded, sorted.
syscall_words() {
	local w
	for w; do case $w in @*) syscall_group "$w" ;; *) echo "$w" ;; esac; done | sort -u
}

# What the unit's SystemCallFilter= lines let through, one name a line.
# As systemd.exec(5) says: the first line (an allow list here) sets the
# default, then each line in turn adds its calls (an allow line) or takes
# them away (a ~ line), so that a later line can allow again one call of a
# group an earlier one denied.
unit_allowed_syscalls() {
	local line allowed=""
	while read -r line; do
		case $line in
		'~'*) # shellcheck disable=SC2086 # the words of the line
			allowed=$(comm -23 <(echo "$allowed") <(syscall_words ${line#\~})) ;;
		*) # shellcheck disable=SC2086
			allowed=$( (echo "$allowed"; syscall_words $line) | sort -u) ;;
		esac
	done < <(unit_values "$(make_unit)" SystemCallFilter)
	grep . <<<"$allowed"
}

# sched_calls POLICY FILE...: the sched_setscheduler calls to POLICY that
# succeeded, in strace's logs FILE... (a call cut in two by another
# thread's, "<unfinished ...>" then "<... resumed>", counted once).
sched_calls() {
	local policy=$1
	shift
	awk -v pol="$policy" '
		/sched_setscheduler\(/ && index($0, ", " pol ", ") {
			if (/<unfinished \.\.\.>/) { pending[$1] = 1; next }
			if (/\) += 0$/) n++
			next
		}
		/<\.\.\. sched_setscheduler resumed>/ && pending[$1] { delete pending[$1]; if (/\) += 0$/) n++ }
		END { print n + 0 }' "$@"
}

@test "the unit's sandbox: the daemon tunes, sees another user's process, writes the metrics, restores; every call passes the filter" {
	not_sanitized "the daemon runs under strace, and LeakSanitizer's check at its exit must ptrace its threads, which strace holds; the sanitizer runtime's own system calls are not ksm-run's either"
	requires cmd:strace cmd:setpriv cmd:unshare cmd:findmnt
	local before trace=$BATS_TEST_TMPDIR/traces/trace log
	before=$(knobs_snapshot)
	mkdir "$BATS_TEST_TMPDIR/traces"
	SANDBOX_RW=$BATS_TEST_TMPDIR/traces
	TEXTFILES=$BATS_TEST_TMPDIR/textfiles
	mkdir -p "$TEXTFILES"
	stage_for_nobody dupmem
	start_workload other -- "${NOBODY[@]}" "$NB_PROGS/dupmem" merge=1 mmap=32 wait
	unit_exec_start
	unit_sandbox
	start_workload daemon -- sh -c 'echo READY; exec "$@"' sh \
		"${SANDBOX[@]}" strace -f -qq -o "$trace.daemon" "${EXEC_START[@]}"
	log=$(wl_err daemon)
	wait_until 20 daemon_pid || { cat "$log"; return 1; }
	# The shell of ExecStart gave way to ksm-run, with the textfile directory.
	tr '\0' ' ' <"/proc/$DAEMON_PID/cmdline" | grep -q -- "--daemon --metrics-file=$TEXTFILES/ksmenable.prom"
	wait_until 20 test -s "$TEXTFILES/ksmenable.prom"
	grep -q '^ksmenable_' "$TEXTFILES/ksmenable.prom"
	[ "$(stat -c %a "$TEXTFILES/ksmenable.prom")" = 644 ]
	[ "$(knob_value run)" = 1 ]
	# ksm_stat of nobody's process is 0400: read with CAP_DAC_READ_SEARCH.
	wait_until 20 hup_shows_candidate_mib 30 || { cat "$log"; return 1; }
	kill -TERM "$DAEMON_PID"
	wait_workload daemon
	[ "$WL_STATUS" = 0 ]
	DAEMON_PID=
	grep -q 'the knobs from before are restored' "$log"
	[ ! -e "$TEXTFILES/ksmenable.prom" ]
	run ! grep -qi 'cannot\|denied\|read-only' "$log"
	[ "$(knobs_snapshot)" = "$before" ]
	# ExecStopPost=, in the same sandbox.
	"${SANDBOX[@]}" strace -f -qq -o "$trace.restore" "$KSM_RUN" --restore
	# Every system call made is one the filter lets through.
	run -0 comm -23 <(syscalls_of "$trace".*) <(unit_allowed_syscalls)
	[ -z "$output" ]
}

@test "the unit's sandbox: the agent attaches to another user's process as its policy says; every call passes the filter" {
	not_sanitized "the daemon runs under strace, and LeakSanitizer's check at its exit must ptrace its threads, which strace holds; the sanitizer runtime's own system calls are not ksm-run's either"
	requires cmd:strace cmd:setpriv cmd:unshare cmd:findmnt
	local trace=$BATS_TEST_TMPDIR/traces/trace log pid policy=$BATS_TEST_TMPDIR/etc/ksmenable.conf
	mkdir "$BATS_TEST_TMPDIR/traces" "$BATS_TEST_TMPDIR/etc"
	chmod 755 "$BATS_TEST_TMPDIR/etc"
	SANDBOX_RW=$BATS_TEST_TMPDIR/traces
	stage_for_nobody attachee
	printf '[rule nobody]\nuser = nobody\nexe = %s\naction = auto\n' "$NB_PROGS/attachee" >"$policy"
	chmod 644 "$policy"
	start_workload target -- "${NOBODY[@]}" "$NB_PROGS/attachee" sleep 20
	pid=$(wl_pid target)
	unit_sandbox
	# In a cgroup of its own, as systemd runs it: the agent leaves its own cgroup alone.
	make_cgroup unit
	start_workload daemon -- sh -c "$IN_CGROUP" sh "$CG_DIR" sh -c 'echo READY; exec "$@"' sh \
		"${SANDBOX[@]}" strace -f -qq -o "$trace.daemon" "$KSM_RUN" --daemon --policy="$policy"
	log=$(wl_err daemon)
	wait_until 20 daemon_pid || { cat "$log"; return 1; }
	wait_until 10 grep -q "rule nobody: $pid (attachee): enabled" "$log" || { cat "$log"; return 1; }
	# The kernel's process events, with the unit's capabilities: their calls pass the filter too.
	grep -q "process events: from the kernel" "$log"
	[ "$(awk '$1 == "ksm_merge_any:" { print $2 }' "/proc/$pid/ksm_stat")" = yes ]
	kill -TERM "$DAEMON_PID"
	wait_workload daemon
	[ "$WL_STATUS" = 0 ]
	DAEMON_PID=
	kill -KILL "$pid"
	run ! grep -qi 'cannot\|denied\|read-only\|refused\|not raised' "$log"
	run -0 comm -23 <(syscalls_of "$trace".*) <(unit_allowed_syscalls)
	[ -z "$output" ]
	# Its stops were raised as --attach's are (stopprio.c: SCHED_FIFO 1 from
	# the seize to the let-go, then put back), which the unit must allow:
	# CAP_SYS_NICE, sched_setscheduler through the filter, RestrictRealtime=no.
	run -0 sched_calls SCHED_FIFO "$trace".*
	echo "raised: $output" >&3
	[ "$output" -ge 1 ]
	[ "$(sched_calls SCHED_OTHER "$trace".*)" = "$output" ]
}

@test "the unit's sandbox: every place ksm-run writes is writable (the knobs, its state in /run, the scan cost)" {
	requires cmd:setpriv cmd:unshare cmd:findmnt
	local scancal_dir
	scancal_dir=$(sed -n 's/^#define SCANCAL_DIR "\(.*\)"$/\1/p' "$TOP/launcher/host/scancal.h")
	[ -n "$scancal_dir" ]
	unit_sandbox
	run -0 "${SANDBOX[@]}" sh -c 'for p; do [ -w "$p" ] || echo "$p: not writable"; done' sh \
		/sys/kernel/mm/ksm/run /run/ksm-run "$scancal_dir"
	[ -z "$output" ]
}

@test "the unit's ExecStart: no textfile directory, no metrics file" {
	requires cmd:setpriv cmd:unshare cmd:findmnt
	TEXTFILES=$BATS_TEST_TMPDIR/absent
	unit_exec_start
	unit_sandbox
	start_workload daemon -- sh -c 'echo READY; exec "$@"' sh "${SANDBOX[@]}" "${EXEC_START[@]}"
	wait_until 10 daemon_pid || { cat "$(wl_err daemon)"; return 1; }
	[ "$(tr '\0' ' ' <"/proc/$DAEMON_PID/cmdline")" = "$KSM_RUN --daemon " ]
	kill -TERM "$DAEMON_PID"
	wait_workload daemon
	DAEMON_PID=
	[ "$WL_STATUS" = 0 ]
	[ ! -e "$TEXTFILES" ]
}
