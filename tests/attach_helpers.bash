# attach_helpers.bash - for the --attach tests (42, 48): the attachee
# program, the teardown that ends the targets, and readings of a target
# from /proc.  Loaded after helpers and launcher_helpers.

attachee() { echo "$PROGS/attachee"; }

BG_PIDS=()

# The attachees end by themselves; a failed test must not wait for them
# (the fixture then reaps them and removes the cgroups).
teardown_extra() {
	local n
	for n in "${!WL_PIDS[@]}"; do kill -KILL "${WL_PIDS[$n]}" 2>/dev/null; done
	for n in "${BG_PIDS[@]}"; do kill -KILL "$n" 2>/dev/null; done
	return 0
}

# state_of TID [PID]: the scheduler state of a thread (R, S, D, T, t, Z).
state_of() { sed 's/.*) //' "/proc/${2:-$1}/task/$1/stat" | cut -d' ' -f1; }
# asleep PID: its main thread sleeps in the kernel (in the call under test).
asleep() { [ "$(state_of "$1")" = S ]; }
tracer_of() { awk '$1 == "TracerPid:" { print $2 }' "/proc/$1/status"; }
tracer_is() { [ "$(tracer_of "$1")" = "$2" ]; }
# traced_by_run PID KSM: PID is traced by a thread of ksm-run KSM (each target has one of its own).
traced_by_run() { local t; t=$(tracer_of "$1" 2>/dev/null) && [ "${t:-0}" != 0 ] && [ -e "/proc/$2/task/$t" ]; }
# ksm_stat_of PID FIELD: a field of its ksm_stat (some are "name value", some "name: value").
ksm_stat_of() { awk -v k="$2" '{ n = $1; sub(/:$/, "", n) } n == k { print $2 }' "/proc/$1/ksm_stat"; }
# merge_any_is PID yes|no: its process-wide flag, from ksm_stat (6.14), or
# before it from its regions: the flag makes each anonymous region and the
# heap mergeable (VmFlags mg), and cleared, none.
merge_any_is() {
	if grep -q '^ksm_merge_any' "/proc/$1/ksm_stat"; then
		[ "$(ksm_stat_of "$1" ksm_merge_any)" = "$2" ]
	elif [ "$2" = yes ]; then
		[ "$(anon_mergeable_regions "$1")" -gt 0 ]
	else
		[ "$(anon_mergeable_regions "$1")" = 0 ]
	fi
}
# anon_mergeable_regions PID: its unnamed anonymous regions and heap with VmFlags mg.
anon_mergeable_regions() {
	awk '/^[0-9a-f]+-[0-9a-f]+ / { anon = NF == 5 || $6 == "[heap]" } anon && /^VmFlags:.* mg/ { n++ } END { print n + 0 }' \
		"/proc/$1/smaps"
}
# ksm_pages_mapped PID: kB of its memory mapped from KSM pages now (smaps KSM:).
ksm_pages_mapped() { awk '$1 == "KSM:" { s += $2 } END { print s + 0 }' "/proc/$1/smaps"; }
mergeable_regions() { grep -c '^VmFlags:.* mg' "/proc/$1/smaps" || true; }
# readback ANY MERGEABLE: how a line ends, with ksm_stat's ksm_merge_any
# and ksm_mergeable read back, or unknown on kernels without them (6.14).
readback() {
	if grep -q '^ksm_merge_any' /proc/self/ksm_stat 2>/dev/null; then
		echo "ksm_merge_any $1, ksm_mergeable $2"
	else
		echo "ksm_merge_any unknown, ksm_mergeable unknown"
	fi
}
# readback_wide ANY MERGEABLE: the same for the process-wide form, which
# its regions tell on kernels without those lines.
readback_wide() {
	if grep -q '^ksm_merge_any' /proc/self/ksm_stat 2>/dev/null; then
		echo "ksm_merge_any $1, ksm_mergeable $2"
	else
		echo "ksm_merge_any $1, ksm_mergeable $2 (by its regions' VmFlags: this kernel's ksm_stat has neither line)"
	fi
}

# finish_attachee: waits for the default workload's own end; it must say ok.
finish_attachee() {
	wait_workload
	[ "$WL_STATUS" = 0 ] || { cat "$WL_ERR" >&2; return 1; }
	grep -qx ok "$WL_OUT"
}
# bye_attachee: the same for one started with --until-bye: told to end, its
# round finished, its checks passed.
bye_attachee() {
	stop_workload
	[ "$WL_STATUS" = 0 ] || { cat "$WL_ERR" >&2; return 1; }
	grep -qx ok "$WL_OUT"
}
