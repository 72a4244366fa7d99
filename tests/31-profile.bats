#!/usr/bin/env bats
# ksm-run --profile: merged memory by region class, and a recommended allow
# list that keeps the savings when applied.
# ci: lock asan guest

load helpers
load launcher_helpers

LAUNCHER_REQUIRES="root ksm jq"

# A workload whose heap merges and whose anonymous mappings never do.  Once
# ksmd has merged most of its heap (1900 of 2048 pages) it says READY and
# waits until ksm-run has sampled it so (sampled_run): a fixed life after
# the merging (1.5 s, three samples) was too short in a TCG guest.
WORKLOAD="heap=8 unique=16 merged=1900 wait"
METRICS=$BATS_FILE_TMPDIR/run.prom
FAST="--advisor=none --pages-to-scan=20000 --sleep-millisecs=10 --interval=0.5 --metrics-file=$METRICS"
# glibc's own data (the anonymous tail of libc.so.6, class anon) holds two
# identical pages that KSM merges within seconds at that rate: the unique
# 16 MiB never merging shows as at most a few pages of anon merged.
ANON_NOISE_KB=64
# Under a sanitizer the library brings its runtime into the command, and the
# runtime's own memory (shadow, allocator) merges too: there the command is
# profiled as it is, made mergeable by the prctl before exec alone.
PROFILED=${SANITIZER_RUNTIME:+--no-preload}

# sampled_run COMMAND...: COMMAND, a ksm-run with $FAST that runs dupmem
# $WORKLOAD, ended (BYE) once ksm-run has sampled the merged heap: after
# READY the metrics file, written anew at each sample, is replaced twice,
# so that a whole sample (and the profile's, which follows its metrics in
# the same tick) came after the merging.  As run --separate-stderr, with
# no time but the merging's and two samples'.
sampled_run() {
	local seen
	start_workload -- "$@"
	for seen in 1 2; do
		seen=$(stat -c %i "$METRICS" 2>/dev/null) || seen=none
		wait_until 60 replaced "$METRICS" "$seen"
	done
	stop_workload
	status=$WL_STATUS output=$(cat "$WL_OUT") stderr=$(cat "$WL_ERR")
}
replaced() { local now; now=$(stat -c %i "$1" 2>/dev/null) && [ "$now" != "$2" ]; }

@test "profile: recommends the class that merges and names the one that never does" {
	requires root ksm
	sampled_run "$KSM_RUN" --profile --json $FAST $PROFILED -- "$PROGS/dupmem" $WORKLOAD
	[ "$status" = 0 ]
	r=${stderr##*$'\n'}     # the JSON report: the last line (a note may come first)
	[ "$(jq -r .recommended_allow <<<"$r")" = heap ]
	[ "$(jq -r '.profile.classes[] | select(.class == "heap") | .merged_kb' <<<"$r")" -ge 7000 ]
	[ "$(jq -r '.profile.classes[] | select(.class == "anon") | .merged_kb' <<<"$r")" -le $ANON_NOISE_KB ]
	[ "$(jq -r '.profile.classes[] | select(.class == "anon") | .candidate_kb' <<<"$r")" -ge 16000 ]
	[ "$(jq -r '.profile.kept_percent >= 95' <<<"$r")" = true ]
	# the anonymous 16 MiB that never merged is most of what ksmd would skip
	[ "$(jq -r '.profile.dropped_candidate_percent > 60' <<<"$r")" = true ]
	# the list is valid for the library
	run env LD_PRELOAD="$PRELOAD" KSM_ENABLE_ALLOW="$(jq -r .recommended_allow <<<"$r")" "$PROGS/dupmem" exit=0
	[ "$status" = 0 ] && [ -z "$output" ]
}

@test "profile on a kernel without the prctl (played): every region advised, the heap still recommended" {
	requires faultinject
	not_sanitized "the profile runs without the library there (--no-preload), and without the prctl nothing advises the regions"
	# What a kernel before 6.4 answers to ksm-run's probe (68) and to the
	# library's call (67); on such a kernel the filter changes nothing.
	sampled_run "$FAULT" -f prctl,arg0=67:EINVAL -f prctl,arg0=68:EINVAL -- \
		"$KSM_RUN" --profile --json $FAST $PROFILED -- "$PROGS/dupmem" $WORKLOAD
	[ "$status" = 0 ]
	r=${stderr##*$'\n'}
	[ "$(jq -r '.processes[0].mode' <<<"$r")" = madvise ]
	[ "$(jq -r .recommended_allow <<<"$r")" = heap ]
	[ "$(jq -r '.profile.classes[] | select(.class == "heap") | .merged_kb' <<<"$r")" -ge 7000 ]
}

@test "profile on a kernel without smaps' KSM: line (played): merged memory counted by page frame, the heap recommended" {
	requires kpageflags_ksm
	sampled_run env KSM_RUN_TEST_KERNEL_LACKS=smaps_ksm "$KSM_RUN" --profile --json $FAST $PROFILED -- \
		"$PROGS/dupmem" $WORKLOAD
	[ "$status" = 0 ]
	r=${stderr##*$'\n'}
	[ "$(jq -r .recommended_allow <<<"$r")" = heap ]
	[ "$(jq -r '.profile.classes[] | select(.class == "heap") | .merged_kb' <<<"$r")" -ge 7000 ]
	[ "$(jq -r '.profile.classes[] | select(.class == "anon") | .merged_kb' <<<"$r")" -le $ANON_NOISE_KB ]
}

@test "profile: the text report shows the table, the list ready to paste, and what never merged" {
	requires root ksm
	sampled_run "$KSM_RUN" --profile $FAST $PROFILED -- "$PROGS/dupmem" $WORKLOAD
	[ "$status" = 0 ]
	[[ "$stderr" == *"Profile by region class"* ]]
	[[ "$stderr" == *"KSM_ENABLE_ALLOW='heap'"* ]]
	[[ "$stderr" == *"ksm-run --allow='heap' -- COMMAND"* ]]
	# anon: 16 MiB scanned, next to nothing merged (see ANON_NOISE_KB)
	# (the class last and whole; anon listed below instead when it merged nothing at all)
	grep -Eq '^ +1 +16\.[0-9] MiB +([0-9]+ B|[0-9.]+ KiB) +0\.[0-9]%  anon$' <<<"$stderr" ||
		grep -A9 "Scanned but never merged" <<<"$stderr" | grep -Eq '^  anon +16\.[0-9] MiB'
	# The class is the last column, whole (a cut path hid which file it was).
	grep -Eq '^  PROCS +CANDIDATE +MERGED +RATIO  CLASS$' <<<"$stderr"
	grep -A3 "Scanned but never merged" <<<"$stderr" | grep -q "libc.so.6"
}

@test "profile: the recommended list, applied with --allow, keeps the savings" {
	requires root ksm
	sampled_run "$KSM_RUN" --profile --json $FAST -- "$PROGS/dupmem" $WORKLOAD
	allow=$(jq -r .recommended_allow <<<"${stderr##*$'\n'}")
	profiled=$(jq -r '.profile.merged_kb' <<<"${stderr##*$'\n'}")
	sampled_run "$KSM_RUN" --allow="$allow" --json $FAST -- "$PROGS/dupmem" $WORKLOAD
	[ "$status" = 0 ]
	applied=$(jq -r '.tree.peak_merged_bytes / 1024 | floor' <<<"${stderr##*$'\n'}")
	[ $((applied * 100)) -ge $((profiled * 95)) ] || { echo "kept $applied of $profiled KiB"; return 1; }
}

@test "profile: a command that merges nothing gets no list, and says so" {
	requires root ksm
	# Two full scans (what KSM needs to merge anything) take over 20 s at
	# this rate: in 2 s nothing can merge, not even libc's identical pages.
	run --separate-stderr "$KSM_RUN" --profile --advisor=none --pages-to-scan=100 --sleep-millisecs=1000 \
		--interval=0.5 $PROFILED -- "$PROGS/dupmem" unique=4 sleep=2000
	[ "$status" = 0 ]
	[[ "$stderr" == *"Nothing merged while the command ran"* ]]
}

@test "profile: options that contradict it are refused with 125 before anything runs" {
	for args in "--mode=madvise" "--allow=heap" "--deny=anon" "--min-size=1M" "--threshold=0" "--threshold=101" "--threshold=x"; do
		run --separate-stderr "$KSM_RUN" --profile $args -- "$PROGS/dupmem" exit=0
		[ "$status" = 125 ] || { echo "$args: $status"; return 1; }
	done
	run --separate-stderr "$KSM_RUN" --threshold=90 -- true
	[ "$status" = 125 ]
	[[ "$stderr" == *"--threshold is not an option of a command's run"*"(--threshold goes with --profile)"* ]]
}

# --duration: a server never ends by itself; it is ended as timeout(1) -k 5
# ends one, and what merged until then is profiled.
SERVER="heap=8 unique=16 sleep=3600000"

@test "profile --duration: a server that never ends is ended after SECONDS and profiled (124)" {
	requires root ksm
	local report=$BATS_TEST_TMPDIR/profile.json
	run --separate-stderr "$KSM_RUN" --profile --duration=6 --json --report-file="$report" $FAST $PROFILED \
		-- "$PROGS/dupmem" $SERVER
	[ "$status" = 124 ]
	# TERM at 6 s ended it: no second KILL, that of the KILL 5 s later
	[[ $stderr == *"--duration=6: the time is up: TERM to the command"* ]]
	[[ $stderr != *"KILL"*"KILL"* ]]
	[ "$(json_of "$report" .recommended_allow)" = heap ]
	[ "$(json_of "$report" '.profile.classes[] | select(.class == "heap") | .merged_kb')" -ge 7000 ]
}

@test "--duration: a plain run too; TERM ignored means KILL 5 s later (137); a command that ends in time keeps its status" {
	requires root ksm
	local start=$SECONDS
	run --separate-stderr "$KSM_RUN" --no-tune --duration=0.5 -- sleep 60
	[ "$status" = 124 ]
	[[ $stderr == *"ended:"*"SIGTERM"* ]]
	# (far from the 60 s the command would take, far above a slow machine's)
	[ $((SECONDS - start)) -lt 30 ]
	# An ignored TERM is inherited across exec: only KILL ends it.
	start=$SECONDS
	run --separate-stderr "$KSM_RUN" --no-tune --duration=1 -- sh -c 'trap "" TERM; exec sleep 60'
	[ "$status" = 137 ]
	[[ $stderr == *"did not end within 5 s of TERM: KILL"* ]]
	[ $((SECONDS - start)) -ge 5 ] && [ $((SECONDS - start)) -lt 40 ]
	# A stopped command gets CONT after TERM, as with timeout(1): TERM ends it, no KILL.
	start=$SECONDS
	run --separate-stderr "$KSM_RUN" --no-tune --duration=0.5 -- sh -c 'kill -STOP $$; exit 0'
	[ "$status" = 124 ]
	[ $((SECONDS - start)) -lt 30 ]
	run --separate-stderr "$KSM_RUN" --no-tune --duration=30 -- sh -c 'exit 3'
	[ "$status" = 3 ]
	[[ $stderr != *"--duration"* ]]
}

@test "--duration: bad values, and modes without a command, are refused with 125" {
	for arg in 0 -1 x 1e3 700000 1s " 5"; do
		run --separate-stderr "$KSM_RUN" --duration="$arg" -- true
		[ "$status" = 125 ] || { echo "--duration=$arg: $status"; return 1; }
		[[ $stderr == *"--duration=$arg: not a number of seconds in 0.1..604800"* ]]
	done
	run --separate-stderr "$KSM_RUN" --duration= -- true
	[ "$status" = 125 ] && [[ $stderr == *"'--duration' needs a value"* ]]
	for mode in --status --daemon --restore "--estimate=$$" "--attach=$$"; do
		run --separate-stderr "$KSM_RUN" $mode --duration=5
		[ "$status" = 125 ] || { echo "$mode: $status"; return 1; }
		[[ $stderr == *"--duration is not an option of ${mode%%=*}"*"(--duration goes with a command's run, --profile)"* ]] ||
			{ echo "$mode: $stderr"; return 1; }
	done
}
