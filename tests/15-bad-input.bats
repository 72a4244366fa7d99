#!/usr/bin/env bats
# Every bad setting: one clear line naming the variable, the bad text and
# what is accepted; nothing enabled; the program's exit status and stdout
# unchanged.

load helpers

teardown() { stop_workloads; }

# check_refused VAR=VALUE... -- EXPECTED-MESSAGE
check_refused() {
	local envs=()
	while [ "$1" != -- ]; do envs+=("$1"); shift; done
	shift
	run --separate-stderr env LD_PRELOAD="$PRELOAD" "${envs[@]}" "$PROGS/dupmem" mmap=1 getmerge exit=42
	[ "$status" = 42 ]
	# stdout is the program's own, and nothing was enabled
	[ "$(echo "$output" | grep -c .)" = 2 ]
	[[ "$output" == *"merge_any "*" 0" ]]
	# exactly one line on stderr, with the expected text
	[ "$(echo "$stderr" | grep -c .)" = 1 ]
	[[ "$stderr" == "libksmenable["*"]: error: "* ]]
	[[ "$stderr" == *"$1"* ]] || { echo "stderr: $stderr"; return 1; }
	[[ "$stderr" == *"KSM is not enabled" ]]
}

@test "unknown mode" {
	check_refused KSM_ENABLE_MODE=prctrl -- "KSM_ENABLE_MODE='prctrl': unknown mode (accepted: auto, prctl, madvise, off)"
}

@test "unknown selector in the allow list" {
	check_refused KSM_ENABLE_ALLOW=heap,hep -- "KSM_ENABLE_ALLOW='heap,hep': unknown selector 'hep' (accepted: all, heap, stack, anon, secret, anon:GLOB, file:GLOB)"
}

@test "unknown selector in the deny list" {
	check_refused KSM_ENABLE_DENY=stacks -- "KSM_ENABLE_DENY='stacks': unknown selector 'stacks'"
}

@test "empty selector" {
	check_refused KSM_ENABLE_ALLOW=heap,,anon -- "KSM_ENABLE_ALLOW='heap,,anon': empty selector"
}

@test "malformed glob" {
	check_refused "KSM_ENABLE_ALLOW=file:/usr/lib/[abc" -- "selector 'file:/usr/lib/[abc' has an unclosed '['"
	check_refused "KSM_ENABLE_DENY=anon:" -- "selector 'anon:' has an empty pattern"
}

@test "bad numbers" {
	check_refused KSM_ENABLE_MIN_SIZE=64KB -- "KSM_ENABLE_MIN_SIZE='64KB': not a size (accepted: a whole number of bytes, with an optional K, M or G suffix)"
	check_refused KSM_ENABLE_RESCAN_MS=fast -- "KSM_ENABLE_RESCAN_MS='fast': not a rescan period (accepted: 0 to turn the rescan off, or 10 to 3600000 milliseconds)"
	check_refused KSM_ENABLE_RESCAN_MS=-5 -- "KSM_ENABLE_RESCAN_MS='-5'"
	check_refused KSM_ENABLE_RESCAN_MS=99999999999999999999 -- "KSM_ENABLE_RESCAN_MS='99999999999999999999'"
}

@test "bad log level and switch" {
	check_refused KSM_ENABLE_LOG=verbose -- "KSM_ENABLE_LOG='verbose': unknown level (accepted: quiet, error, warn, info, debug)"
	check_refused KSM_ENABLE_INHERIT=yes -- "KSM_ENABLE_INHERIT='yes': not a switch (accepted: 0, 1)"
}

@test "a selection with mode prctl is refused rather than ignored" {
	check_refused KSM_ENABLE_MODE=prctl KSM_ENABLE_DENY=heap -- "KSM_ENABLE_MODE=prctl merges all memory, but KSM_ENABLE_DENY is set"
}

@test "a half-good allow list enables nothing in madvise mode either" {
	requires root
	start_workload LD_PRELOAD="$PRELOAD" KSM_ENABLE_MODE=madvise KSM_ENABLE_ALLOW=anon,bogus -- "$PROGS/dupmem" mmap=4 wait
	run ! region_mergeable $WL_PID "$(workload_region mmap)"
	run ! grep -qx ksmenable /proc/$WL_PID/task/*/comm
	stop_workload
}

@test "KSM_ENABLE_LOG=quiet silences even the configuration error, and still enables nothing" {
	run --separate-stderr env LD_PRELOAD="$PRELOAD" KSM_ENABLE_LOG=quiet KSM_ENABLE_MODE=bogus "$PROGS/dupmem" getmerge
	[ "$status" = 0 ]
	[ -z "$stderr" ]
	[[ "$output" == *" 0" ]]
}

@test "all is well: silent at the default level, stdout untouched" {
	run --separate-stderr env LD_PRELOAD="$PRELOAD" "$PROGS/dupmem" getmerge
	[ "$status" = 0 ]
	[ -z "$stderr" ]
	run --separate-stderr env LD_PRELOAD="$PRELOAD" KSM_ENABLE_MODE=madvise sh -c 'echo hello; exit 3'
	[ "$status" = 3 ]
	[ "$output" = hello ]
	[ -z "$stderr" ]
}
