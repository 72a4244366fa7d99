#!/usr/bin/env bats
# ksm-run: running the command, its environment, exit statuses, bad options.
# ci: lock asan

load helpers
load launcher_helpers

@test "exit codes pass through: 0 1 2 42 126 127 255" {
	for code in 0 1 2 42 126 127 255; do
		run -"$code" "$KSM_RUN" -q -- "$PROGS/sigprog" exit "$code"
	done
}

@test "a command killed by TERM INT KILL SEGV kills ksm-run by the same signal" {
	for sig in 15 2 9 11; do
		run how_it_ended "$KSM_RUN" -q -- "$PROGS/sigprog" raise "$sig"
		[ "$output" = "signal $sig" ]
	done
}

@test "the report still comes before ksm-run re-raises the command's signal" {
	run -143 --separate-stderr "$KSM_RUN" -- "$PROGS/sigprog" raise 15
	[[ $stderr == *"killed by SIGTERM"* ]]
}

@test "127 when the command is not found, 126 when it cannot be executed" {
	run -127 --separate-stderr "$KSM_RUN" -q -- /nonexistent/command
	[[ $stderr == *"cannot run '/nonexistent/command'"* ]]
	run -127 "$KSM_RUN" -q -- no-such-command-ksmenable
	printf 'echo hi\n' >"$BATS_TEST_TMPDIR/notexec"
	chmod 644 "$BATS_TEST_TMPDIR/notexec"
	run -126 "$KSM_RUN" -q -- "$BATS_TEST_TMPDIR/notexec"
	run -126 "$KSM_RUN" -q -- "$BATS_TEST_TMPDIR"
}

@test "stdout is the command's alone; stdin reaches it" {
	run --separate-stderr "$KSM_RUN" -- sh -c 'read x; echo "got $x"' <<<"hello"
	[ "$status" -eq 0 ]
	[ "$output" = "got hello" ]
	[[ $stderr == *"ksm-run: report"* ]]
}

@test "LD_PRELOAD gets the library prepended, the user's entries kept" {
	run -0 env LD_PRELOAD=/nonexistent-user-lib.so "$KSM_RUN" -q -- sh -c 'echo "$LD_PRELOAD"' 2>/dev/null
	[ "${lines[-1]}" = "$(run_preload "$(readlink -f "$LIB")"):/nonexistent-user-lib.so" ]
}

@test "options become KSM_ENABLE_* variables" {
	run -0 "$KSM_RUN" -q --mode=madvise --allow=heap,anon --deny=file:/usr/* --min-size=64K \
		--rescan-ms=500 --log=quiet --no-inherit -- env
	[[ $output == *"KSM_ENABLE_MODE=madvise"* ]]
	[[ $output == *"KSM_ENABLE_ALLOW=heap,anon"* ]]
	[[ $output == *"KSM_ENABLE_DENY=file:/usr/*"* ]]
	[[ $output == *"KSM_ENABLE_MIN_SIZE=64K"* ]]
	[[ $output == *"KSM_ENABLE_RESCAN_MS=500"* ]]
	[[ $output == *"KSM_ENABLE_LOG=quiet"* ]]
	[[ $output == *"KSM_ENABLE_INHERIT=0"* ]]
}

@test "options after the command belong to the command" {
	run -0 "$KSM_RUN" -q echo --json -q
	[ "$output" = "--json -q" ]
}

@test "--help and --version write to stdout and exit 0" {
	run -0 "$KSM_RUN" --help
	[[ $output == Usage:* ]]
	run -0 "$KSM_RUN" --version
	[[ $output == "ksm-run "* ]]
}

@test "bad options are refused with 125: nothing runs, no knob changes" {
	local before marker=$BATS_TEST_TMPDIR/ran
	before=$(knobs_snapshot)
	for bad in --no-such-option --mode=fast --allow= --allow=heap,,stack --allow=bogus \
		--deny=anon, --min-size=12Q --rescan-ms=-1 --log=loud --interval=0 --interval=abc \
		"--set=pages_to_scan" "--set=../run=1" "--set=no_such_knob=1" "--set=pages_shared=5" \
		"--set=run=2" --pages-to-scan=-5 --pages-to-scan=12x --sleep-millisecs= \
		--smart-scan=2 --advisor=fast --advisor-max-cpu=101 --max-page-sharing=1 \
		--use-zero-pages=yes --merge-across-nodes=3 --preload=/nonexistent.so; do
		run -125 --separate-stderr "$KSM_RUN" "$bad" -- touch "$marker"
		[[ $stderr == "ksm-run: "* ]] || { echo "no message for $bad: $stderr"; false; }
		[ ! -e "$marker" ] || { echo "$bad ran the command"; false; }
	done
	run -125 "$KSM_RUN"
	[ "$(knobs_snapshot)" = "$before" ]
	[ ! -e "$STATE_FILE" ]
}

@test "messages name the bad value" {
	run -125 --separate-stderr "$KSM_RUN" --set no_such_knob=1 -- true
	[[ $stderr == *"no knob 'no_such_knob'"* ]]
	run -125 --separate-stderr "$KSM_RUN" --set pages_shared=1 -- true
	[[ $stderr == *"read-only"* ]]
	run -125 --separate-stderr "$KSM_RUN" --set run=2 -- true
	[[ $stderr == *"never writes it"* ]]
	run -125 --separate-stderr "$KSM_RUN" --pages-to-scan=abc -- true
	[[ $stderr == *"pages_to_scan: 'abc' is not a number"* ]]
}

@test "the library is found next to ksm-run, or in ../lib (an installed prefix), never in ." {
	local d=$BATS_TEST_TMPDIR/prefix solo=$BATS_TEST_TMPDIR/solo
	mkdir -p "$d/bin" "$d/lib" "$solo/bin" "$d/cwd"
	cp "$KSM_RUN" "$d/bin/ksm-run"
	cp "$LIB" "$d/lib/libksmenable.so"
	run -0 "$d/bin/ksm-run" -q -- sh -c 'echo "$LD_PRELOAD"'
	[ "$output" = "$(run_preload "$d/lib/libksmenable.so")" ]
	# Alone, with a library in the current directory: not taken.
	cp "$KSM_RUN" "$solo/bin/ksm-run"
	cp "$LIB" "$d/cwd/libksmenable.so"
	if [ ! -e /usr/local/lib/libksmenable.so ]; then
		cd "$d/cwd"
		run -0 --separate-stderr "$solo/bin/ksm-run" -q -- sh -c 'echo "${LD_PRELOAD:-none}"'
		[ "$output" = none ]
		[[ $stderr == *"libksmenable.so not found"* ]]
	fi
	run -0 "$solo/bin/ksm-run" -q --preload="$d/cwd/libksmenable.so" -- sh -c 'echo "$LD_PRELOAD"'
	[ "$output" = "$(run_preload "$d/cwd/libksmenable.so")" ]
}
