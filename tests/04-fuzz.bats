#!/usr/bin/env bats
# The fuzz harnesses (tests/fuzz/, libFuzzer with ASan and UBSan), each run
# for a few seconds on its committed seeds, which hold the inputs of every
# bug a fuzzer found: a crash, a sanitizer's report, a leak, a timeout or a
# broken check of a harness fails the test.  The inputs libFuzzer learns
# and any crash-* file stay in the test's own directory, out of the tree.
# Needs no root and touches no KSM knob (the harnesses read memory files of
# their own, and /sys/kernel/mm/ksm at most).
#
#   KSMENABLE_FUZZ_BUILD    prebuilt harnesses (default: make fuzz-build into build/fuzz)
#   KSMENABLE_FUZZ_SECONDS  seconds per harness (default 3)
# ci: -

load helpers

FUZZ_BUILD=${KSMENABLE_FUZZ_BUILD:-$TOP/build/fuzz}
FUZZ_SECONDS=${KSMENABLE_FUZZ_SECONDS:-3}

setup_file() {
	# Built here rather than in make check's list, so that the fuzzing
	# stays one block of the Makefile; make does nothing when up to date.
	if [ -z "${KSMENABLE_FUZZ_BUILD:-}" ]; then
		make -C "$TOP" -s fuzz-build >"$BATS_FILE_TMPDIR/build.log" 2>&1 ||
			touch "$BATS_FILE_TMPDIR/build.failed"
	fi
}

# fuzz_briefly NAME: the harness on its seeds for FUZZ_SECONDS, one process.
fuzz_briefly() {
	local name=$1 bin=$FUZZ_BUILD/fuzz_$1 artifacts=$BATS_TEST_TMPDIR/artifacts
	if [ -e "$BATS_FILE_TMPDIR/build.failed" ]; then
		cat "$BATS_FILE_TMPDIR/build.log"
		skip_or_fail "make fuzz-build failed (clang with libFuzzer: tests/install-deps)"
		return
	fi
	[ -x "$bin" ] || { echo "no harness $bin"; return 1; }
	mkdir -p "$BATS_TEST_TMPDIR/corpus" "$artifacts"
	# -close_fd_mask=3: the code under test may print (ksm-run's messages).
	run "$bin" -max_total_time="$FUZZ_SECONDS" -timeout=10 -close_fd_mask=3 -print_final_stats=1 \
		-artifact_prefix="$artifacts/" "$BATS_TEST_TMPDIR/corpus" "$TOP/tests/fuzz/corpus/$name"
	echo "$output" | grep -v '^#\|^INFO:\|Uses: \|dictionary' | tail -n 40
	[ "$status" = 0 ]
	[ -z "$(ls -A "$artifacts")" ]
	# It ran: every seed, then inputs of its own.
	local runs
	runs=$(sed -n 's/^stat::number_of_executed_units: *//p' <<<"$output")
	echo "$name: $runs runs in $FUZZ_SECONDS s"
	[ "$runs" -gt "$(find "$TOP/tests/fuzz/corpus/$name" -type f | wc -l)" ]
}

@test "fuzz: every harness has seeds and a test here, every seed folder a harness" {
	local f n
	for f in "$TOP"/tests/fuzz/fuzz_*.c; do
		n=$(basename "$f" .c)
		n=${n#fuzz_}
		[ -n "$(ls -A "$TOP/tests/fuzz/corpus/$n")" ] || { echo "no seeds for $n"; return 1; }
		grep -q "^	fuzz_briefly $n\$" "$BATS_TEST_FILENAME" || { echo "no test of $n"; return 1; }
	done
	for f in "$TOP"/tests/fuzz/corpus/*/; do
		n=$(basename "$f")
		[ -f "$TOP/tests/fuzz/fuzz_$n.c" ] || { echo "seeds without a harness: $n"; return 1; }
	done
}

@test "fuzz: the settings (config_load)" {
	fuzz_briefly config
}

@test "fuzz: selector lists (selector_parse, selector_matches)" {
	fuzz_briefly selector
}

@test "fuzz: globs, differential against fnmatch in the C locale" {
	fuzz_briefly glob
}

@test "fuzz: maps and smaps, whole text against a stream through odd buffers" {
	fuzz_briefly maps
}

@test "fuzz: ksm_stat (ksm_stat_next, ksm_stat_parse)" {
	fuzz_briefly ksmstat
}

@test "fuzz: ksm-run's numbers and knob values (parse_ll, parse_double, knob_check_*)" {
	fuzz_briefly parse
}

@test "fuzz: ksm-run's command line (options_parse)" {
	fuzz_briefly options
}

@test "fuzz: the host state file, and its round trip (hoststate_parse, hoststate_format)" {
	fuzz_briefly hoststate
}

@test "fuzz: --estimate's targets (targets_resolve)" {
	fuzz_briefly targets
}

@test "fuzz: /proc/PID/stat and /proc/PID/cgroup as another user shapes them (proc_stat_parse, cgroup_of_text)" {
	fuzz_briefly procfs
}

@test "fuzz: fingerprints from anywhere, and their round trip (fp_parse, fp_encode, combine_compute)" {
	fuzz_briefly fingerprint
}

@test "fuzz: the JSON string writer against a strict decoder of its own (json_str)" {
	fuzz_briefly json
}

@test "fuzz: the host agent's policy files, and their round trip (policy_parse, policy_rule_*_text)" {
	fuzz_briefly policy
}

@test "fuzz: cgroup paths as users and containers shape them (cg_name_parse, cg_name_text, cg_unit_find)" {
	fuzz_briefly cgname
}

@test "fuzz/README's table of harnesses names each harness of the tree, and no other" {
	# The table is where a reader learns what each harness checks against;
	# the json harness once went without a row.
	local in_tree in_table
	in_tree=$(cd "$TOP/tests/fuzz" && ls fuzz_*.c | sed 's/^fuzz_//; s/\.c$//' | sort)
	in_table=$(awk -F'|' '/^\| harness \| what it feeds/ { t = 1; next }
		t && !/^\|/ { exit } t && $2 ~ /`/ { gsub(/[ `]/, "", $2); print $2 }' \
		"$TOP/tests/fuzz/README.md" | sort)
	[ -n "$in_table" ]
	diff <(echo "$in_tree") <(echo "$in_table")
}
