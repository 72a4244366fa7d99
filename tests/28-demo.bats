#!/usr/bin/env bats
# make demo: its workload (tests/progs/demo_workers) under ksm-run, and its
# refusals.  The demo itself takes the suite's lock, so it is not run from
# here (make check already holds that lock): its two parts are.
# ci: lock asan guest

load helpers
load launcher_helpers

setup_file() { save_knobs; }
teardown_file() { restore_knobs; }

@test "demo_workers under ksm-run: every worker's cache merges and the report shows the profit" {
	requires root ksm
	settle_ksm
	# shellcheck disable=SC2086 # empty, or one word
	run --separate-stderr env $NO_LSAN "$KSM_RUN" --json -- "$PROGS/demo_workers" -w 3 -m 8
	echo "$output"; echo "$stderr"
	[ "$status" = 0 ]
	[[ "$output" == *"their data is intact"* ]]
	echo "$stderr" >"$BATS_TEST_TMPDIR/report.json"
	demo_merged "$BATS_TEST_TMPDIR/report.json"
}

@test "demo_workers: bad options are refused with the value named" {
	run "$PROGS/demo_workers" -w 0
	[ "$status" = 2 ]
	[[ "$output" == *"-w 0: not a whole number in 1..64"* ]]
	run "$PROGS/demo_workers" -m 12x
	[ "$status" = 2 ]
	[[ "$output" == *"-m 12x"* ]]
	run "$PROGS/demo_workers" stray
	[ "$status" = 2 ]
	[[ "$output" == *"unexpected argument 'stray'"* ]]
}

@test "make demo refuses without root, and without KSM, saying what it needs" {
	requires root
	# The tree may be private (a clone in root's home, mode 0700): nobody runs
	# a copy of the Makefile, with the header it reads, from where it can.
	stage_for_nobody
	mkdir "$NB_DIR/include"
	cp "$TOP/Makefile" "$NB_DIR/Makefile"
	cp "$TOP/include/ksmenable.h" "$NB_DIR/include/ksmenable.h"
	chmod -R go=rX "$NB_DIR"
	run as_nobody make -s -C "$NB_DIR" demo
	echo "$output"
	[ "$status" != 0 ]
	[[ "$output" == *"make demo: needs root"*"sudo make demo"* ]]
	run make -s -C "$TOP" demo O="$BUILD" DEMO_KSM=/nonexistent/ksm
	[ "$status" != 0 ]
	[[ "$output" == *"this kernel has no KSM (/nonexistent/ksm is missing)"*"CONFIG_KSM=y"* ]]
}

workers_started() { [ "$(wc -w <"/proc/$1/task/$1/children")" = "$2" ]; }

@test "demo_workers: SIGTERM ends the workers, and the parent dies of it" {
	"$PROGS/demo_workers" -w 3 -m 4 -t 60 >"$BATS_TEST_TMPDIR/out" &
	local pid=$! kids k st=0
	wait_until 10 workers_started $pid 3
	kids=$(cat "/proc/$pid/task/$pid/children")
	kill -TERM $pid
	wait $pid || st=$?
	[ "$st" = 143 ]
	grep -q 'stopped by signal 15' "$BATS_TEST_TMPDIR/out"
	for k in $kids; do wait_until 10 gone "$k"; done
}
