#!/usr/bin/env bats
# ksm-run --attach against awkward targets (tests/progs/awkward.c): a
# program that execs a setuid one during the attach, a target in
# uninterruptible sleep, one whose main thread has exited, and targets
# that end while they are attached to.  The rest of --attach: tests/42.
# ci: lock asan guest

load helpers
load launcher_helpers
load attach_helpers

LAUNCHER_REQUIRES="root ksm jq"

awkward() { echo "$PROGS/awkward"; }
state_is() { [ "$(state_of "$1")" = "$2" ]; }

# exec_attempts HOW DELAYS... -- KSM-RUN OPTIONS: for each delay, a program
# of nobody's execs a setuid-root program (a copy of awkward, as passwd
# would be) DELAY ms after ksm-run starts to attach to it; the old image
# passes on its flag as read right before the execve (was=N).  Wherever
# ksm-run judged the old image, nothing of the attach may reach the new
# one but what the kernel carries across an exec since 6.7, the
# process-wide flag as it was when the exec began: a refusal that says
# "left alone" leaves the flag the old image passed on (was), one that
# says the flag was kept finds it on, and "enabled" (the exec came
# after) finds it on unless it was off at the read.  The madvise form
# never sets the flag.  No region is mergeable unless the flag is on.
# CAUGHT counts the refusals.
exec_attempts() {
	local how=$1 d line was now wide=yes delays=() args=()
	shift
	while [ "$1" != -- ]; do delays+=("$1"); shift; done
	shift
	args=("$@")
	[[ " ${args[*]} " != *" --allow="* ]] || wide=
	CAUGHT=0
	for d in "${delays[@]}"; do
		# shellcheck disable=SC2086 # HOW is one option or none
		start_workload -- "${NOBODY[@]}" "$NB_PROGS/awkward" exec --regions=30000 $how "$d" "$NB_DIR/suidprobe" probe
		echo go >&"${WL_FDS[main]}"
		run "$KSM_RUN" --attach="$WL_PID" --no-wait "${args[@]}"
		line=$output
		wait_until 10 grep -q '^PROBE' "$WL_OUT" || { cat "$WL_ERR" >&2; return 1; }
		grep -Eqx 'PROBE merge=[01] euid=0 was=[01]' "$WL_OUT"
		was=$(sed -n 's/^PROBE .* was=//p' "$WL_OUT")
		echo "delay $d: $line; $(grep PROBE "$WL_OUT"); now $(ksm_stat_of "$WL_PID" ksm_merge_any)," \
			"$(mergeable_regions "$WL_PID") mergeable regions" >&3
		if [[ $line != "$WL_PID (suidprobe):"* ]]; then
			[[ $line == "$WL_PID (awkward): enabled"* || $line == "$WL_PID (awkward): refused: it exec'd during the attach"* ]]
			[[ $line != *refused* ]] || { [ "$status" = 1 ] && CAUGHT=$((CAUGHT + 1)); }
			merge_any_is "$WL_PID" yes && now=1 || now=0
			if [ -z "$wide" ]; then
				[ "$was$now" = 00 ]
			elif [[ $line == *"the new program, not judged, has KSM on"* ]]; then
				[ "$now" = 1 ]
			elif [[ $line == *refused* ]]; then
				[ "$now" = "$was" ]
			else
				[ "$was" = 0 ] || [ "$now" = 1 ]
			fi
			[ "$now" = 1 ] || [ "$(mergeable_regions "$WL_PID")" = 0 ]
			[ "$(tracer_of "$WL_PID")" = 0 ]
		fi
		stop_workload
	done
}

stage_suid_probe() {
	stage_for_nobody awkward
	cp "$NB_PROGS/awkward" "$NB_DIR/suidprobe"
	chmod 4755 "$NB_DIR/suidprobe"
}

@test "a target that execs a setuid program during the attach: refused, and the new image is never touched" {
	requires prctl          # the process-wide form, or ksm_stat's ksm_merge_any
	stage_suid_probe
	exec_attempts "" 0 10 20 30 40 50 60 70 80 90 100 120 140 160 200 --
	[ "$CAUGHT" -gt 0 ]
}

@test "another thread execs a setuid program during the attach: refused, in both forms" {
	requires prctl          # the process-wide form, or ksm_stat's ksm_merge_any
	stage_suid_probe
	exec_attempts --thread 0 10 20 30 40 50 60 70 80 100 120 140 160 200 --
	local prctl_caught=$CAUGHT
	exec_attempts --thread 0 50 100 200 300 500 800 -- --allow=anon
	[ "$prctl_caught" -gt 0 ] && [ "$CAUGHT" -gt 0 ]
}

@test "an exec in another thread while the flag is being set: the refusal says the new program has KSM on" {
	requires prctl          # the process-wide form, or ksm_stat's ksm_merge_any
	# Since 6.7 the kernel carries the process-wide flag across an exec.
	# ksm-run pauses at its prctl's exit (the flag set), and only then is
	# the other thread told to exec the setuid program: the old image's
	# flag is on (was=1), and so is the new one's, which ksm-run's refusal
	# must say rather than "left alone".
	local ksm
	stage_suid_probe
	start_workload -- "${NOBODY[@]}" "$NB_PROGS/awkward" exec --thread 0 "$NB_DIR/suidprobe" probe
	KSM_RUN_TEST_INJECT_PAUSE_MS=3000 "$KSM_RUN" --attach="$WL_PID" --no-wait \
		>"$BATS_TEST_TMPDIR/out" 2>"$BATS_TEST_TMPDIR/err" &
	ksm=$!
	BG_PIDS+=("$ksm")
	wait_until 30 grep -q "test pause: the call's registers" "$BATS_TEST_TMPDIR/err"
	echo go >&"${WL_FDS[main]}"
	wait_until 10 grep -q '^PROBE' "$WL_OUT" || { cat "$WL_ERR" >&2; return 1; }
	local status=0
	wait "$ksm" || status=$?
	cat "$BATS_TEST_TMPDIR/out" "$BATS_TEST_TMPDIR/err" "$WL_OUT"
	[ "$status" = 1 ]
	grep -Eqx 'PROBE merge=1 euid=0 was=1' "$WL_OUT"
	merge_any_is "$WL_PID" yes
	grep -qx "$WL_PID (awkward): refused: it exec'd during the attach, after the process-wide flag was set: the new program, not judged, has KSM on .*" \
		"$BATS_TEST_TMPDIR/out"
	[ "$(tracer_of "$WL_PID")" = 0 ]
	# What the refusal says turns it off does.
	run -0 "$KSM_RUN" --detach="$WL_PID"
	merge_any_is "$WL_PID" no
	stop_workload
}

@test "a target in uninterruptible sleep is refused within 5 s, the next one is not held up, and TERM ends ksm-run at once" {
	requires prctl          # the process-wide form, or ksm_stat's ksm_merge_any
	local stuck other child ksm t0
	start_workload stuck -- "$(awkward)" vfork
	start_workload other -- "$(attachee)" sleep 60
	stuck=$(wl_pid stuck) other=$(wl_pid other)
	wait_until 5 state_is "$stuck" D
	child=$(cat "/proc/$stuck/task/$stuck/children")
	t0=$SECONDS
	run -1 timeout -k 2 40 "$KSM_RUN" --attach="$stuck,$other" --no-wait
	# The 5 s of the refusal and no wait for the stuck one (the 40 s limit).
	[ $((SECONDS - t0)) -lt 30 ]
	[[ $output == *"$stuck (awkward): refused: it did not stop within 5 s"* ]]
	[[ $output == *"$other (attachee): enabled, process-wide"* ]]
	[ "$(tracer_of "$stuck")" = 0 ]
	merge_any_is "$other" yes
	"$KSM_RUN" --detach="$other" >/dev/null
	# TERM while ksm-run waits for it: the run ends at once, the rest not done.
	"$KSM_RUN" --attach="$stuck,$other" >"$BATS_TEST_TMPDIR/out" 2>"$BATS_TEST_TMPDIR/err" &
	ksm=$!
	BG_PIDS+=("$ksm")
	wait_until 5 traced_by_run "$stuck" "$ksm"
	t0=$SECONDS
	kill -TERM "$ksm"
	wait_until 20 gone "$ksm"
	run -143 wait "$ksm"
	grep -q "^$stuck (awkward): refused: ksm-run got SIGTERM" "$BATS_TEST_TMPDIR/out" || { cat "$BATS_TEST_TMPDIR/out" >&2; return 1; }
	grep -q "^$other (attachee): not done: ksm-run got SIGTERM" "$BATS_TEST_TMPDIR/out"
	[ "$(tracer_of "$stuck")" = 0 ]
	merge_any_is "$other" no
	# Let go untouched: once its child goes on, it does too, never stopped by us.
	kill -CONT "$child"
	wait_until 5 grep -qx VFORKED "$(wl_out stuck)"
	! state_is "$stuck" t
}

@test "a process whose main thread has exited: attached through a thread that lives" {
	requires prctl          # the process-wide form, or ksm_stat's ksm_merge_any
	local tid
	start_workload -- "$(awkward)" leader-exits 3
	wait_until 5 state_is "$WL_PID" Z
	tid=$(ls "/proc/$WL_PID/task" | grep -vx "$WL_PID" | head -1)
	run -0 --separate-stderr "$KSM_RUN" --attach="$WL_PID" --no-wait --json
	jq -e --argjson p "$WL_PID" --argjson t "$tid" '.targets[0].result == "enabled"
		and .targets[0].thread == $t and .targets[0].ksm_merge_any == true and .refused == 0' <<<"$output"
	merge_any_is "$WL_PID/task/$tid" yes
	run -0 "$KSM_RUN" --detach="$WL_PID"
	[[ $output == "$WL_PID (awkward): disabled, process-wide"* ]]
	run -0 "$KSM_RUN" --attach="$WL_PID" --allow=anon --no-wait
	[[ $output == "$WL_PID (awkward): enabled, "*" region"*" advised"* ]]
	# Told to end (it outlived a fixed 3 s in 6.12's starved guest before the third run).
	bye_attachee
	grep -qx merge=0 "$WL_OUT"
}

# Processes that end during the attach, as under pgbench -C: 20 children
# at a time, each living a random 0-20 (then 0-100) ms, named by their
# cgroup or by a list of their PIDs.  Every target is enabled, already so,
# or ended: never "a kernel thread" or "not permitted" (the audit's reasons
# for exiting processes), and the run exits 0.  Only a listed child gone
# before ksm-run looked (between the list and its start) is a PID that
# names nothing, "no such process": that alone makes it exit 1, naming it.
# The kernel may also have given such a PID to a thread of another process
# by then (PIDs wrap at pid_max, 32768 here and in the guest): that one is
# refused as a thread, which exits 1 too; a list's PIDs alone can meet it.
# The lists and the outputs go through files, and each run is bounded, so
# that nothing here can wait on a pipe that a churning process holds.
@test "targets that end during the attach are 'ended', not refused, and do not fail the run" {
	local i list=$BATS_TEST_TMPDIR/list out=$BATS_TEST_TMPDIR/out ended=0 gone=0 life json rc absent
	local reused reused_pat=': refused: [0-9]* is a thread of '
	echo 1 >"$KSM/run"      # ksmd runs: the output is the targets' lines alone
	make_cgroup churn
	for life in 20 100; do
		start_workload -- sh -c "$IN_CGROUP" sh "$CG_DIR" "$(awkward)" churn $life
		for ((i = 0; i < 20; i++)); do
			if [ $((i / 2 % 2)) = 0 ]; then
				echo "cgroup:$CG_DIR" >"$list"
			else
				cat "/proc/$WL_PID/task/"*/children 2>/dev/null | tr ' ' '\n' | grep . | paste -sd, >"$list" || true
				[ -s "$list" ] || continue
			fi
			json=
			[ $((i % 2)) = 1 ] || json=--json
			# stderr apart: the line naming the PIDs of no process follows the JSON.
			rc=0
			timeout 60 "$KSM_RUN" --attach="$(cat "$list")" $(attach_form) --no-wait $json >"$out" 2>"$out.err" 3>&- || rc=$?
			# A listed PID reused by a thread: its text line (the JSON has it as a reason).
			reused=0
			if [[ $(cat "$list") != cgroup:* ]]; then
				if [ -n "$json" ]; then
					reused=$(jq '[.targets[] | select(.result == "refused" and
						(.reason | test("is a thread of ")))] | length' "$out") || reused=0
				else
					reused=$(grep -c -- "$reused_pat" "$out" || true)
				fi
			fi
			if grep -v -- "$reused_pat" "$out" "$out.err" | grep -q 'kernel thread\|not permitted\|: refused'; then
				cat "$out" "$out.err" >&2
				return 1
			fi
			if [ -n "$json" ]; then
				jq -e --argjson reused "$reused" '.refused == $reused
					and .handled + .ended + .absent + .refused == (.targets | length)
					and all(.targets[]; .result == "enabled" or .result == "already enabled"
						or (.result == "ended" and .reason == null)
						or (.result == "absent" and .reason == "no such process")
						or (.result == "refused" and $reused > 0))' "$out" >/dev/null ||
					{ cat "$out" >&2; return 1; }
				ended=$((ended + $(jq '.ended' "$out")))
				absent=$(jq -r '[.targets[] | select(.result == "absent") | .pid | tostring] | join(", ")' "$out")
			else
				if grep -v ': enabled, \|: already enabled\|: ended\|^[0-9]*: no such process$' "$out" |
					grep -v -- "$reused_pat"; then
					return 1
				fi
				ended=$((ended + $(grep -c ': ended' "$out" || true)))
				absent=$(sed -n 's/^\([0-9]*\): no such process$/\1/p' "$out" | paste -sd, | sed 's/,/, /g')
			fi
			# 1 exactly when some PID named no process (those are the ones
			# said) or was reused by a thread.
			if [ -n "$absent" ]; then
				gone=$((gone + 1))
				[ "$rc" = 1 ] && grep -q -- "--attach: no such process: $absent (nothing was done to" "$out.err" ||
					{ echo "round $i: exit $rc, absent $absent: $(cat "$out" "$out.err")" >&2; return 1; }
			elif [ "$reused" -gt 0 ]; then
				gone=$((gone + 1))
				[ "$rc" = 1 ] || { echo "round $i: exit $rc, $reused reused: $(cat "$out" "$out.err")" >&2; return 1; }
			else
				[ "$rc" = 0 ] || { echo "round $i: exit $rc: $(cat "$out" "$out.err")" >&2; return 1; }
			fi
		done
		stop_workload
	done
	echo "targets ended during the attach: $ended; runs given a PID gone before ksm-run looked: $gone" >&3
	[ "$ended" -gt 0 ]
}
