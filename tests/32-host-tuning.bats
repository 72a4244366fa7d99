#!/usr/bin/env bats
# One tuner per machine, however many ksm-run: who tunes, the take-over
# when the holder ends or is killed, the restore to the state from before
# the first, a new command bringing the boost back.
# ci: lock asan guest

load helpers
load launcher_helpers

LAUNCHER_REQUIRES="root ksm jq"

# A command instance with the default tuning and a command that waits.
start_tuned() { start_workload "$1" -- "$KSM_RUN" -q -- "$PROGS/sigprog" wait; }
# The same with 16 MiB to merge: its boost outlasts a tick even under TCG,
# where sigprog's can end before the state names it.
start_merging() { start_workload "$1" -- "$KSM_RUN" -q -- "$PROGS/dupmem" mmap=16 wait; }

# The rate in force is the tuner's: the boost's 5000 pages every 10 ms, or
# the steady phase once the boost ended on progress (sigprog has next to no
# memory, and a slow machine's ticks can see it end before a check).  The
# state names the new phase a tick after the knobs change: wait_until it.
rate_is_the_tuners() {
	{ [ "$(knob_value pages_to_scan)" = 5000 ] && [ "$(knob_value sleep_millisecs)" = 10 ]; } || phase_is 2
}

@test "two overlapping runs: the first tunes, the second takes over when it ends" {
	local before a b
	before=$(knobs_snapshot)
	start_tuned first
	a=$(wl_pid first)
	wait_until 20 tuner_is "$a"
	start_tuned second
	b=$(wl_pid second)
	wait_until 20 registered "$b"
	[ "$(state_tuner)" = "$a" ]
	# The second wrote no rate knob: the rate is the first's, as before.
	wait_until 20 rate_is_the_tuners
	run -0 "$KSM_RUN" --status
	echo "$output" | grep -Eq "^ +$a +command +yes .* sigprog$"
	echo "$output" | grep -Eq "^ +$b +command +no .* sigprog$"
	stop_workload first
	[ "$(wl_status first)" = 0 ]
	wait_until 20 tuner_is "$b"
	# Not restored: the second still runs, and still tunes.
	[ "$(knob_value run)" = 1 ]
	wait_until 20 rate_is_the_tuners
	stop_workload second
	[ "$(knobs_snapshot)" = "$before" ]
	[ ! -e "$STATE_FILE" ]
}

@test "three staggered runs: the holder killed by KILL is replaced; the last restores" {
	local before a b c
	before=$(knobs_snapshot)
	start_tuned a
	a=$(wl_pid a)
	wait_until 20 tuner_is "$a"
	sleep 1
	start_tuned b
	b=$(wl_pid b)
	sleep 1
	start_tuned c
	c=$(wl_pid c)
	wait_until 20 users_registered 3
	[ "$(state_tuner)" = "$a" ]
	kill -KILL "$a"
	wait_workload a
	[ "$(wl_status a)" = 137 ]
	# The first live candidate in the order they came: b.
	wait_until 20 tuner_is "$b"
	wait_until 20 users_registered 2
	# c ends before b: b keeps the tuning, nothing is restored (b boosts,
	# or its boost already ended on progress: sigprog is tiny, and under
	# TCG a tick can come after it).
	stop_workload c
	[ "$(state_tuner)" = "$b" ]
	[ "$(knob_value run)" = 1 ]
	wait_until 20 rate_is_the_tuners
	stop_workload b
	[ "$(wl_status b)" = 0 ]
	[ "$(knobs_snapshot)" = "$before" ]
	[ ! -e "$STATE_FILE" ]
}

@test "the holder ends with no candidate left: the knobs wait for the last, then come back" {
	local before a b
	before=$(knobs_snapshot)
	start_tuned holder
	a=$(wl_pid holder)
	# An instance with --no-tune never tunes, so nobody takes over.
	start_workload passive -- "$KSM_RUN" -q --no-tune -- "$PROGS/sigprog" wait
	b=$(wl_pid passive)
	wait_until 20 registered "$b"
	stop_workload holder
	wait_until 20 users_registered 1
	[ -z "$(state_tuner)" ]
	run -0 "$KSM_RUN" --status
	[[ $output == *"tuner:    none"* ]]
	echo "$output" | grep -Eq "^ +$b +command +never .* sigprog$"
	stop_workload passive
	[ "$(knobs_snapshot)" = "$before" ]
}

@test "a command started in the steady phase brings the boost back; one that ends does not" {
	start_merging a
	start_tuned b
	# Both merged and levelled off: the steady phase (after at least 10 s).
	wait_until 40 knob_below pages_to_scan 5000
	wait_until 15 phase_is 2
	stop_workload b
	# An ending command is not new work: still steady 3 s later.
	sleep 3
	knob_below pages_to_scan 5000
	[ "$(state_phase)" = 2 ]
	start_merging c
	# Within a few ticks; a TCG guest's are slow (the speed is make bench's to measure).
	wait_until 15 knob_is pages_to_scan 5000
	[ "$(knob_value sleep_millisecs)" = 10 ]
	wait_until 15 phase_is 1
	stop_workload c
	stop_workload a
}

# --status --json into $output; it gives the state's phase, which did not
# change while it ran (else 1: read again).
status_phase_is_the_states() {
	local before
	before=$(phase_name)
	output=$("$KSM_RUN" --status --json) || return 1
	[ "$(phase_name)" = "$before" ] && [ "$(jq -r .tuning.tuner.phase <<<"$output")" = "$before" ]
}

@test "--status --json: the tuner, its phase and every registered command" {
	local a b
	start_merging first
	a=$(wl_pid first)
	start_workload second -- "$KSM_RUN" -q --no-tune -- "$PROGS/sigprog" wait
	b=$(wl_pid second)
	wait_until 15 users_registered 2
	# The tuner has a phase: the boost, or already the steady phase on a
	# slow machine (a TCG guest beside a busy host, whose boost ended on
	# progress before the wait began).
	wait_until 15 tuner_has_phase
	# The boost may end while --status runs (a slow machine's): read again
	# until the state's phase stayed the same around the read.
	wait_until 20 status_phase_is_the_states
	echo "$output" | jq -e . >/dev/null
	[ "$(jq -r .tuning.tuner.pid <<<"$output")" = "$a" ]
	[ "$(jq -r '.tuning.instances | length' <<<"$output")" = 2 ]
	[ "$(jq -r ".tuning.instances[] | select(.pid == $a) | .tunes" <<<"$output")" = true ]
	[ "$(jq -r ".tuning.instances[] | select(.pid == $b) | .wants_tuning" <<<"$output")" = false ]
	[ "$(jq -r ".tuning.instances[] | select(.pid == $b) | .command" <<<"$output")" = sigprog ]
	[ "$(jq -r '.tuning.saved_knobs.pages_to_scan' <<<"$output")" = 100 ]
}

@test "the holder ends cleanly in the steady phase: the next one goes on steady, it does not boost again" {
	start_merging a
	start_tuned b
	wait_until 40 knob_below pages_to_scan 5000
	wait_until 20 phase_is 2
	[ "$(state_tuner)" = "$(wl_pid a)" ]
	# The holder's command ends (with another registered, nothing is restored).
	stop_workload a
	wait_until 20 tuner_is "$(wl_pid b)"
	# The state names the new holder with the phase it takes up, from the
	# first write: it once said "off" (the phase of b before it held the
	# tuning) until b's next tick.
	[ "$(state_phase)" = 2 ]
	# Before the phase was kept, the next holder boosted at 5000 pages.
	sleep 2
	knob_below pages_to_scan 5000
	[ "$(state_phase)" = 2 ]
	stop_workload b
}
