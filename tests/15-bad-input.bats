#!/usr/bin/env bats
# Every bad setting: one clear line naming the variable, the bad text and
# what is accepted; nothing enabled; the program's exit status and stdout
# unchanged.
# ci: lock asan

load helpers

teardown() { stop_workloads; }

# PR_GET_MEMORY_MERGE of a process that nothing enabled: 0, or -1 (EINVAL)
# on a kernel without it.
setup_file() {
	NO_MERGE_ANY=$(merge_any_unset)
	export NO_MERGE_ANY
}

# check_refused VAR=VALUE... -- EXPECTED-MESSAGE
check_refused() {
	local envs=()
	while [ "$1" != -- ]; do envs+=("$1"); shift; done
	shift
	run --separate-stderr env LD_PRELOAD="$PRELOAD" "${envs[@]}" "$PROGS/dupmem" mmap=1 getmerge mergeable exit=42
	[ "$status" = 42 ]
	# stdout is the program's own, and nothing was enabled: not the
	# process-wide flag (-1 where the kernel lacks it), not one mapping
	[ "$(echo "$output" | grep -c .)" = 3 ]
	[[ "$output" =~ "merge_any "[0-9]+" "$NO_MERGE_ANY$'\n' ]]
	[[ "$output" =~ "mergeable "[0-9]+" 0"$ ]]
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
	run --separate-stderr env LD_PRELOAD="$PRELOAD" KSM_ENABLE_LOG=quiet KSM_ENABLE_MODE=bogus \
		"$PROGS/dupmem" mmap=1 getmerge mergeable
	[ "$status" = 0 ]
	[ -z "$stderr" ]
	[[ "$output" =~ "merge_any "[0-9]+" "$NO_MERGE_ANY$'\n' ]]
	[[ "$output" =~ "mergeable "[0-9]+" 0"$ ]]
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

# A misspelt name is not a bad value: without KSM_ENABLE_STRICT the
# program runs as it would have, but the typo is named, with the nearest
# known name, because KSM_ENABLE_ALOW=heap silently meant "everything".
@test "an unknown KSM_ENABLE_* name is named, with the nearest known one" {
	run --separate-stderr env LD_PRELOAD="$PRELOAD" KSM_ENABLE_ALOW=heap "$PROGS/dupmem" exit=42
	[ "$status" = 42 ]
	[ -z "$output" ]
	[ "$(echo "$stderr" | grep -c .)" = 1 ]
	[[ "$stderr" == "libksmenable["*"]: warning: KSM_ENABLE_ALOW is not a variable of the library (did you mean KSM_ENABLE_ALLOW?)" ]]
	# a name near none is not guessed at; known names are never named
	run --separate-stderr env LD_PRELOAD="$PRELOAD" KSM_ENABLE_FOO=1 KSM_ENABLE_MODE=madvise KSM_ENABLE_STRICT=0 /bin/true
	[[ "$stderr" == *"warning: KSM_ENABLE_FOO is not a variable of the library (see libksmenable(7))" ]]
	[ "$(echo "$stderr" | grep -c .)" = 1 ]
	# every unknown name once, and a lookalike prefix is no variable of ours
	run --separate-stderr env LD_PRELOAD="$PRELOAD" KSM_ENABLE_MODEE=prctl KSM_ENABLE_DENNY=heap KSM_ENABLEX=1 /bin/true
	[ "$(echo "$stderr" | grep -c 'is not a variable')" = 2 ]
	[[ "$stderr" == *"KSM_ENABLE_MODEE"*"KSM_ENABLE_MODE?"* ]]
	[[ "$stderr" == *"KSM_ENABLE_DENNY"*"KSM_ENABLE_DENY?"* ]]
}

@test "KSM_ENABLE_STRICT=1 makes an unknown name an error that enables nothing" {
	requires prctl
	# positive control: without the typo the same program is enabled
	run --separate-stderr env LD_PRELOAD="$PRELOAD" KSM_ENABLE_STRICT=1 "$PROGS/dupmem" getmerge
	[ "$status" = 0 ]
	[[ "$output" == *"merge_any "*" 1" ]]
	[ -z "$stderr" ]
	run --separate-stderr env LD_PRELOAD="$PRELOAD" KSM_ENABLE_STRICT=1 KSM_ENABLE_ALOW=heap "$PROGS/dupmem" getmerge exit=42
	[ "$status" = 42 ]
	[[ "$output" == *"merge_any "*" 0" ]]
	[[ "$stderr" == *"error: KSM_ENABLE_ALOW is not a variable of the library (did you mean KSM_ENABLE_ALLOW?)"* ]]
	[[ "$stderr" == *"error: KSM_ENABLE_STRICT=1: KSM is not enabled" ]]
	check_refused KSM_ENABLE_STRICT=yes -- "KSM_ENABLE_STRICT='yes': not a switch (accepted: 0, 1)"
}
