#!/usr/bin/env bats
# How the suite runs: each file's "# ci:" line (tests/helpers/ci-files) and
# HACKING.md's table of what runs where, which it keeps true; and
# tests/run-suite, which runs the files that touch the knobs holding the
# lock and the others beside them, and names every failure, with its file
# and output, before the closing line CI reads.  Fixture files of the
# test's own; no knob is touched.
# ci: -

load helpers

CI_FILES=$TOP/tests/helpers/ci-files

# run_suite ARG...: tests/run-suite with the environment of a shell, not
# the bats of this test's (the inner bats would read the outer one's
# variables and functions, and its PATH leads to bats's internal entry),
# and a lock of the test's own.
run_suite() {
	local path
	path=$(tr : '\n' <<<"$PATH" | grep -v bats-core | paste -sd :)
	env -i PATH="$path" HOME="$HOME" KSMENABLE_TESTS_LOCK="$BATS_TEST_TMPDIR/lock" "$TOP/tests/run-suite" "$@"
}

# A holder of the lock left by a failed test is let go.
teardown() { [ -z "${HOLDER:-}" ] || pkill -KILL -P "$HOLDER" 2>/dev/null || true; }

# A test's first word in a fixture, where bats would take "@test" at the
# start of a line of this file for one of its own.
T=@test

# fixture NAME TAGS BODY: a test file NAME in the test's directory, with the
# "# ci:" line TAGS and the bats text BODY after it.
fixture() {
	mkdir -p "$BATS_TEST_TMPDIR/t"
	printf '#!/usr/bin/env bats\n# ci: %s\n\n%s\n' "$2" "$3" >"$BATS_TEST_TMPDIR/t/$1"
}

@test "every file has one valid '# ci:' line, and HACKING.md's table of what runs where is the files' own" {
	run -0 "$CI_FILES" --check
	run -0 "$CI_FILES" --table
	local table=$output
	run -0 sed -n '/^<!-- ci-files table: begin -->$/,/^<!-- ci-files table: end -->$/p' "$TOP/HACKING.md"
	[ "${#lines[@]}" -gt 2 ]
	diff <(printf '%s\n' "$table") <(printf '%s\n' "${lines[@]:1:${#lines[@]}-2}")
	# make check-guest runs the files tagged guest, and all of them are in the suite.
	run -0 make -s -C "$TOP" --no-print-directory -f Makefile print-guest-tests
	[ "$output" = "$("$CI_FILES" guest | tr '\n' ' ' | sed 's/ $//')" ]
}

@test "ci-files refuses a missing line, a second one, an unknown tag and tags out of order, naming the file" {
	fixture 01-none.bats '' "$T \"t\" { true; }"
	sed -i '/^# ci:/d' "$BATS_TEST_TMPDIR/t/01-none.bats"
	CI_FILES_DIR=$BATS_TEST_TMPDIR/t run -1 "$CI_FILES" --check
	[[ $output == *"01-none.bats: not one '# ci:' line"* ]]
	rm "$BATS_TEST_TMPDIR/t/01-none.bats"
	fixture 02-two.bats 'lock' '# ci: asan'
	CI_FILES_DIR=$BATS_TEST_TMPDIR/t run -1 "$CI_FILES" --check
	[[ $output == *"02-two.bats: not one '# ci:' line"* ]]
	rm "$BATS_TEST_TMPDIR/t/02-two.bats"
	fixture 03-odd.bats 'lock kvm' ''
	CI_FILES_DIR=$BATS_TEST_TMPDIR/t run -1 "$CI_FILES" --check
	[[ $output == *"03-odd.bats: '# ci: lock kvm': unknown tag 'kvm'"* ]]
	fixture 03-odd.bats 'guest lock' ''
	CI_FILES_DIR=$BATS_TEST_TMPDIR/t run -1 "$CI_FILES" --check
	[[ $output == *"03-odd.bats: '# ci: guest lock': the tags go in the order lock asan guest"* ]]
	fixture 03-odd.bats 'lock guest' ''
	CI_FILES_DIR=$BATS_TEST_TMPDIR/t run -0 "$CI_FILES" guest
	[ "$output" = "$BATS_TEST_TMPDIR/t/03-odd.bats" ]
	CI_FILES_DIR=$BATS_TEST_TMPDIR/t run -0 "$CI_FILES" '!lock'
	[ -z "$output" ]
}

@test "ci-files --shard K/N: the files of the tags dealt into N shares, each file once, the longest apart" {
	local f k
	# Lengths 40, 30, 12, 11, 10 lines: shares of 40+11 and 30+12+10.
	for f in 01:40 02:30 03:12 04:11 05:10; do
		fixture "${f%:*}-x.bats" 'lock guest' ''
		yes '# a line' | head -n $((${f#*:} - 3)) >>"$BATS_TEST_TMPDIR/t/${f%:*}-x.bats"
	done
	fixture 06-host.bats 'lock' ''
	CI_FILES_DIR=$BATS_TEST_TMPDIR/t run -0 "$CI_FILES" --shard 1/2 guest
	[ "$(printf '%s\n' "${lines[@]##*/}" | paste -sd ' ')" = "01-x.bats 04-x.bats" ]
	CI_FILES_DIR=$BATS_TEST_TMPDIR/t run -0 "$CI_FILES" --shard 2/2 guest
	[ "$(printf '%s\n' "${lines[@]##*/}" | paste -sd ' ')" = "02-x.bats 03-x.bats 05-x.bats" ]
	# The whole suite's guest files: every one in exactly one share.
	diff <(for k in 1 2; do "$CI_FILES" --shard $k/2 guest; done | sort) <("$CI_FILES" guest | sort)
	for bad in 0/2 3/2 2 x/y; do
		run -2 "$CI_FILES" --shard "$bad" guest
		[[ $output == *"usage: ci-files --shard K/N"* ]]
	done
}

@test "run-suite names each failure with its file and output, and closes with 'NAME: N passed, N failed'" {
	fixture 10-good.bats 'lock' "$T \"good one\" { true; }
$T \"good two\" { true; }"
	fixture 11-bad.bats '-' "$T \"bad one\" {
	echo 'what the test printed'
	[ 1 = 2 ]
}
$T \"good three\" { true; }"
	run -1 run_suite --name trial --tap "$BATS_TEST_TMPDIR/all.tap" \
		"$BATS_TEST_TMPDIR/t/10-good.bats" "$BATS_TEST_TMPDIR/t/11-bad.bats"
	echo "$output"
	[ "${lines[-1]}" = "trial: 3 passed, 1 failed" ]
	[[ $output == *"== $BATS_TEST_TMPDIR/t/11-bad.bats: 1 ok, 1 not ok, took "*", exit status 1"* ]]
	[[ $output == *"--- $BATS_TEST_TMPDIR/t/11-bad.bats: not ok 1 bad one"* ]]
	# The failure's output follows its name, in the list of failures at the end.
	run -0 sed -n '/^== trial: the failures$/,$p' <<<"$output"
	[[ $output == *"# what the test printed"* ]]
	[[ $output == *"in test file"*"11-bad.bats, line"* ]]
	grep -q '^ok 2 good two' "$BATS_TEST_TMPDIR/all.tap"
}

@test "run-suite: a file whose run ends early with no failed test is named, and fails the run" {
	# The file's bats is killed in its first test: the second never runs.
	fixture 12-broken.bats '-' "$T \"kills its bats\" { kill -KILL \$PPID; }
$T \"never runs\" { true; }"
	run -1 run_suite --name trial "$BATS_TEST_TMPDIR/t/12-broken.bats"
	echo "$output"
	[[ $output == *"--- $BATS_TEST_TMPDIR/t/12-broken.bats: the run of this file ended with status 1 and no failed test"* ]]
	[ "${lines[-1]}" = "trial: 1 passed, 1 failed" ]
}

@test "run-suite runs the files that need no lock while another run holds it, and waits for it with the others" {
	local marks=$BATS_TEST_TMPDIR/marks fifo=$BATS_TEST_TMPDIR/release holder suite
	fixture 20-free.bats '-' "$T \"free\" { echo free >>'$marks'; }"
	fixture 21-locked.bats 'lock' "$T \"locked\" { echo locked >>'$marks'; }"
	# Another run holds the lock until the test lets it go.
	mkfifo "$fifo"
	flock "$BATS_TEST_TMPDIR/lock" sh -c 'echo held; cat "$1" >/dev/null' sh "$fifo" >"$BATS_TEST_TMPDIR/holder" &
	holder=$!
	HOLDER=$holder
	wait_until 10 grep -qx held "$BATS_TEST_TMPDIR/holder"
	run_suite --name trial "$BATS_TEST_TMPDIR/t/20-free.bats" "$BATS_TEST_TMPDIR/t/21-locked.bats" \
		>"$BATS_TEST_TMPDIR/out" 2>&1 &
	suite=$!
	wait_until 30 grep -q '^== .*20-free.bats: 1 ok' "$BATS_TEST_TMPDIR/out"
	grep -q 'waiting for the lock on the KSM knobs' "$BATS_TEST_TMPDIR/out"
	# The locked file has not run while the other holds the lock.
	[ "$(cat "$marks")" = free ]
	echo >"$fifo"
	wait "$holder"
	wait "$suite"
	[ "$(sort "$marks" | tr '\n' ' ')" = "free locked " ]
	[ "$(tail -n 1 "$BATS_TEST_TMPDIR/out")" = "trial: 2 passed, 0 failed" ]
}

@test "run-suite lets go of the lock between its files: another's turn comes after the first, not after the last" {
	local marks=$BATS_TEST_TMPDIR/marks started=$BATS_TEST_TMPDIR/started other
	# The first file, once it runs, starts another holder who waits for the lock.
	fixture 40-first.bats 'lock' "$T \"first\" {
	flock '$BATS_TEST_TMPDIR/lock' sh -c 'echo other >>\"\$1\"' sh '$marks' 3>&- &
	echo \$! >'$started'
	sleep 1
	echo first >>'$marks'
}"
	fixture 41-second.bats 'lock' "$T \"second\" { echo second >>'$marks'; }"
	run -0 run_suite --name trial "$BATS_TEST_TMPDIR/t/40-first.bats" "$BATS_TEST_TMPDIR/t/41-second.bats"
	[ "${lines[-1]}" = "trial: 2 passed, 0 failed" ]
	other=$(cat "$started")
	wait_until 10 gone "$other"
	[ "$(tr '\n' ' ' <"$marks")" = "first other second " ]
}

@test "run-suite: a file without the lock runs where the knobs are read-only (a write fails: EROFS)" {
	requires root
	[ -d /sys/kernel/mm/ksm ] || kernel_lacks "KSM (CONFIG_KSM)"
	# Probed by access(2), which says EROFS on a read-only mount: nothing is written.
	fixture 20-free.bats 'asan' "$T \"knobs\" { if [ -w /sys/kernel/mm/ksm/run ]; then echo writable; false; fi; }"
	run -0 run_suite --name trial "$BATS_TEST_TMPDIR/t/20-free.bats"
	[ "${lines[-1]}" = "trial: 1 passed, 0 failed" ]
}

@test "run-suite --no-lock (a guest's knobs are its own) runs every file in turn, locked or not" {
	local marks=$BATS_TEST_TMPDIR/marks
	fixture 30-locked.bats 'lock' "$T \"locked\" { echo locked >>'$marks'; }"
	fixture 31-also.bats 'lock guest' "$T \"also\" { echo also >>'$marks'; }"
	run -0 run_suite --no-lock --name guest "$BATS_TEST_TMPDIR/t/30-locked.bats" "$BATS_TEST_TMPDIR/t/31-also.bats"
	[ "${lines[-1]}" = "guest: 2 passed, 0 failed" ]
	[ "$(tr '\n' ' ' <"$marks")" = "locked also " ]
	# A run with no TAP at all is a failure too, said so.
	: >"$BATS_TEST_TMPDIR/empty.tap"
	run -1 "$TOP/tests/helpers/tap-summary" guest "$BATS_TEST_TMPDIR/empty.tap"
	[[ $output == *"no test ran"* ]]
	[ "${lines[-1]}" = "guest: 0 passed, 1 failed" ]
}

@test "the guest's QEMU keeps its RAM out of the host's KSM: nothing of it for ksmd or the agent's census" {
	# QEMU marks guest RAM mergeable unless told not to; in CI the host's
	# files run beside the guest, and the agent's found it (another
	# security domain) and refused their pods.
	local lines
	lines=$(grep -c '^[[:space:]]*-accel tcg' "$TOP/tests/guest-run")
	[ "$lines" = 2 ]        # x86_64 and aarch64
	[ "$(grep -c '^[[:space:]]*-accel tcg.* -machine \(virt,\)\?mem-merge=off' "$TOP/tests/guest-run")" = "$lines" ]
}

@test "machine-speed: the work's time against the reference's, as a slowdown never below 1.00" {
	run -0 "$TOP/tests/helpers/machine-speed"
	[[ $output =~ ^[0-9]+\.[0-9]{2}\ ([0-9]+)\.([0-9]{2})$ ]]
	local took=$((10#${BASH_REMATCH[1]}${BASH_REMATCH[2]}))
	echo "the work took $took hundredths of a second"
	# A reference of a hundredth of a second: as many times slower as the
	# work took hundredths, give or take one run's difference.
	run -0 env MACHINE_SPEED_REFERENCE_S=0.01 "$TOP/tests/helpers/machine-speed"
	[[ $output =~ ^([0-9]+)\.[0-9]{2}\  ]]
	[ "${BASH_REMATCH[1]}" -ge $((took / 2)) ]
	# A reference far slower than any machine: 1.00, never less.
	run -0 env MACHINE_SPEED_REFERENCE_S=999.00 "$TOP/tests/helpers/machine-speed"
	[[ $output == "1.00 "* ]]
	run -2 env MACHINE_SPEED_REFERENCE_S=2.3 "$TOP/tests/helpers/machine-speed"
	[[ $output == *"MACHINE_SPEED_REFERENCE_S='2.3': give seconds as S.SS"* ]]
}

@test "guest-run: --kernel names one of its kernels; a vmlinuz's xz or zstd payload is found behind stray magic" {
	run -125 "$TOP/tests/guest-run" --kernel 4.19 --run true
	[[ $output == *"--kernel '4.19': one of 5.10 6.1 6.12 arm64"* ]]
	# guest-run's own extract_vmlinux, on a kernel image made here.
	local prog=guest-run d=$BATS_TEST_TMPDIR unpack
	eval "$(sed -n '/^extract_vmlinux()/,/^}/p' "$TOP/tests/guest-run")"
	printf '\177ELF, a kernel' >"$d/elf"
	for unpack in "xz -c" "zstd -qc"; do
		# Stray magic first, each a lead byte and a newline in grep's
		# output: bash's read in a UTF-8 locale took them for one line.
		{ printf 'boot code \3757zXZ\0(\265/\375'; $unpack <"$d/elf"; printf 'the rest'; } >"$d/vmlinuz"
		(set +e; LANG=C.UTF-8 extract_vmlinux "$d/vmlinuz" "$d/out")  # guest-run has no -e
		cmp "$d/elf" "$d/out"
	done
}

@test "kernel-record: a kernel's row from its guest's TAP, replaced in place, the other rows kept" {
	local md=$BATS_TEST_TMPDIR/K.md tap=$BATS_TEST_TMPDIR/tap
	local kept='| arm64 | 6.1.0-57-arm64 | aarch64 | 9 passed, 0 failed | none | 0123456789ab | 2026-01-01 |'
	# A table of its own: the real one's rows change with every run.
	printf '%s\n' '# kernels' '<!-- kernel-record: begin -->' '| name | kernel | machine | result | not applicable | commit | date |' \
		'|---|---|---|---|---|---|---|' '| 5.10 | old | x86_64 | 1 passed, 0 failed | none | 0123456789ab | 2026-01-01 |' \
		"$kept" '<!-- kernel-record: end -->' 'after' >"$md"
	printf '%s\n' '# uname: 5.10.0-32-amd64 x86_64' '== tests/10-prctl.bats: 3 ok, 1 not ok, took 0:14, exit status 1' \
		'1..4' 'ok 1 a in 5ms # skip not applicable: this kernel has no PR_SET_MEMORY_MERGE (Linux 6.4)' \
		'ok 2 b in 5ms # skip not applicable: this kernel has no PR_SET_MEMORY_MERGE (Linux 6.4)' \
		'ok 3 c in 7ms' 'not ok 4 d in 9ms' 'guest: 3 passed, 1 failed' >"$tap"
	run -0 "$TOP/tests/helpers/kernel-record" "$md" 5.10 "$tap"
	run -0 "$TOP/tests/helpers/kernel-record" "$md" 6.12 "$tap"
	sed -i 's/^not ok 4/ok 4/' "$tap"
	run -0 "$TOP/tests/helpers/kernel-record" "$md" 5.10 "$tap"
	run -0 sed -n '/^<!-- kernel-record: begin -->$/,/^<!-- kernel-record: end -->$/p' "$md"
	[ "${#lines[@]}" = 7 ]
	# Not applicable is not passed: said apart, with what the kernel lacks.
	[[ ${lines[3]} == "| 5.10 | 5.10.0-32-amd64 | x86_64 | 2 passed, 0 failed | 2 without PR_SET_MEMORY_MERGE (Linux 6.4) | "* ]]
	[ "${lines[4]}" = "$kept" ]
	[[ ${lines[5]} == "| 6.12 | 5.10.0-32-amd64 | x86_64 | 1 passed, 1 failed | "* ]]
	[ "$(tail -n 1 "$md")" = after ]
	[[ ${lines[3]} =~ \ \|\ [0-9]{4}-[0-9]{2}-[0-9]{2}\ \|$ ]]
	# The commit the guest ran, where its TAP says it.
	sed -i "1i # commit: 0123456789ab" "$tap"
	run -0 "$TOP/tests/helpers/kernel-record" "$md" 5.10 "$tap"
	[[ $output == *" | 0123456789ab | "* ]]
	# A run that did not finish (no closing line) says so.
	sed -i '/^guest: /d' "$tap"
	run -0 "$TOP/tests/helpers/kernel-record" "$md" 5.10 "$tap"
	[[ $output == *"| 2 passed, 0 failed (did not finish: the files after the last counted did not run) |"* ]]
	run -1 "$TOP/tests/helpers/kernel-record" "$BATS_TEST_TMPDIR/none.md" 5.10 "$tap"
	[[ $output == *"none.md: no such file"* ]]
}

@test "tests/kernels.md has a row for each kernel of make check-kernels, and the README links it" {
	local k
	for k in $(make -s -C "$TOP" --no-print-directory print-matrix-kernels); do
		grep -q "^| $k | " "$TOP/tests/kernels.md" || { echo "no row for $k in tests/kernels.md: run make check-kernels"; return 1; }
	done
	grep -q '(tests/kernels.md)' "$TOP/README.md"
}
