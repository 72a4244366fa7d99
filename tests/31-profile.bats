#!/usr/bin/env bats
# ksm-run --profile: merged memory by region class, and a recommended allow
# list that keeps the savings when applied.

load helpers
load launcher_helpers

LAUNCHER_REQUIRES="root ksm jq"

# A workload whose heap merges and whose anonymous mappings never do.
WORKLOAD="heap=8 unique=16 sleep=5000"
FAST="--advisor=none --pages-to-scan=20000 --sleep-millisecs=10 --interval=0.5"
# glibc's own data (the anonymous tail of libc.so.6, class anon) holds two
# identical pages that KSM merges within seconds at that rate: the unique
# 16 MiB never merging shows as at most a few pages of anon merged.
ANON_NOISE_KB=64
# Under a sanitizer the library brings its runtime into the command, and the
# runtime's own memory (shadow, allocator) merges too: there the command is
# profiled as it is, made mergeable by the prctl before exec alone.
PROFILED=${SANITIZER_RUNTIME:+--no-preload}

@test "profile: recommends the class that merges and names the one that never does" {
	requires root ksm prctl
	run --separate-stderr "$KSM_RUN" --profile --json $FAST $PROFILED -- "$PROGS/dupmem" $WORKLOAD
	[ "$status" = 0 ]
	r=$stderr
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

@test "profile: the text report shows the table, the list ready to paste, and what never merged" {
	requires root ksm prctl
	run --separate-stderr "$KSM_RUN" --profile $FAST $PROFILED -- "$PROGS/dupmem" $WORKLOAD
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
	requires root ksm prctl
	run --separate-stderr "$KSM_RUN" --profile --json $FAST -- "$PROGS/dupmem" $WORKLOAD
	allow=$(jq -r .recommended_allow <<<"$stderr")
	profiled=$(jq -r '.profile.merged_kb' <<<"$stderr")
	run --separate-stderr "$KSM_RUN" --allow="$allow" --json $FAST -- "$PROGS/dupmem" $WORKLOAD
	[ "$status" = 0 ]
	applied=$(jq -r '.tree.peak_merged_bytes / 1024 | floor' <<<"$stderr")
	[ $((applied * 100)) -ge $((profiled * 95)) ] || { echo "kept $applied of $profiled KiB"; return 1; }
}

@test "profile: a command that merges nothing gets no list, and says so" {
	requires root ksm prctl
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
