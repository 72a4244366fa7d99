#!/usr/bin/env bats
# A full /run/ksm-run: the shared state cannot be copied and renamed.
# ksm-run rewrites it in place when it fits the blocks it holds, and
# otherwise says so once and goes on from what it knows: every instance
# registers, the next takes the tuning over when the tuner ends, --status
# names a live tuner, and the last restores the knobs.  The instances run
# in a mount namespace of their own, over a tmpfs of two pages.
# ci: lock asan guest

load helpers
load launcher_helpers

LAUNCHER_REQUIRES="root ksm jq"

# The scenario, in a mount namespace: A and B register, the tmpfs is then
# filled, C registers, A ends (B takes over), C and B end.  Prints
# NAME=VALUE lines; the instances' stderr in $T/{a,b,c}.err.
full_state_scenario() {
	local T=$1
	mkdir -p /run/ksm-run
	unshare --mount --propagation private bash -c '
		T=$1 KSM_RUN=$2
		st=/run/ksm-run/state
		mount -t tmpfs -o size=8k,mode=0755 ksmenable-test /run/ksm-run || exit 1
		has() { grep -q "^user $1 " $st 2>/dev/null; }
		wait_for() { local i; for ((i = 0; i < 50; i++)); do "$@" && return 0; sleep 0.1; done; return 1; }
		"$KSM_RUN" -- sleep 4 2>$T/a.err & A=$!
		wait_for has $A
		"$KSM_RUN" --json --report-file=$T/b.json -- sleep 9 2>$T/b.err & B=$!
		wait_for has $B
		dd if=/dev/zero of=/run/ksm-run/fill bs=4096 count=16 2>/dev/null
		echo "full=$(df --output=avail -B1 /run/ksm-run | tail -n 1 | tr -d " ")"
		"$KSM_RUN" -- sleep 3 2>$T/c.err & C=$!
		sleep 1
		has $C && echo c_registered=yes
		wait $A; echo "a_status=$?"
		sleep 2.5
		echo "tuner_after_a=$(awk "\$1 == \"tuner\" { print \$2 }" $st) b=$B"
		"$KSM_RUN" --status --json >$T/status.json
		wait $C; echo "c_status=$?"
		wait $B; echo "b_status=$?"
		echo "left=$(ls /run/ksm-run | tr "\n" " ")"
	' sh "$T" "$KSM_RUN"
}

@test "a full /run/ksm-run: everyone registers, the next takes over, --status is true, the knobs come back" {
	local before T=$BATS_TEST_TMPDIR b
	before=$(knobs_snapshot)
	run -0 full_state_scenario "$T"
	echo "$output"
	head -n 20 "$T"/*.err
	[[ $output == *"full=0"* ]]
	[[ $output == *"c_registered=yes"* ]]
	[[ $output == *"a_status=0"* ]] && [[ $output == *"b_status=0"* ]] && [[ $output == *"c_status=0"* ]]
	b=$(sed -n 's/^tuner_after_a=.* b=//p' <<<"$output")
	[[ $output == *"tuner_after_a=$b b=$b"* ]]
	[ "$(jq -r .tuning.tuner.pid "$T/status.json")" = "$b" ]
	# The last restored the knobs and removed the state.
	[[ $output == *"left=fill lock "* ]]
	[ "$(knobs_snapshot)" = "$before" ]
	# No misleading failure, and no message repeated every second.
	! grep -q "could not all be restored" "$T"/*.err
	for f in "$T"/a.err "$T"/b.err "$T"/c.err; do
		[ "$(grep -c "cannot write" "$f")" -le 1 ]
	done
}
