# tests/bench/ksm-converge.bash - for the benchmarks that let KSM merge
# (estimate-accuracy, fleet-bench): save the knobs they set and put them
# back on exit, fast rates, and real KSM run until pages_sharing settles.
# Source it; it sets an EXIT trap that calls bench_cleanup.
#
#   bench_fast_ksm                fast rates, ksmd forgets what is gone, then run=0
#   bench_converge                run=1 until pages_sharing stays the same over
#                                 three windows of two full scans
#   BENCH_POOL_PID                a process to kill at exit (the workload)

K=/sys/kernel/mm/ksm
bench_knobs="advisor_mode pages_to_scan sleep_millisecs use_zero_pages run"
declare -A bench_saved
for k in $bench_knobs; do bench_saved[$k]=$(sed 's/.*\[\(.*\)\].*/\1/' $K/$k); done
BENCH_POOL_PID=
bench_cleanup() {
	[ -n "$BENCH_POOL_PID" ] && kill "$BENCH_POOL_PID" 2>/dev/null && wait "$BENCH_POOL_PID" 2>/dev/null
	for k in $bench_knobs; do
		[ "$k" = pages_to_scan ] && [ "${bench_saved[advisor_mode]}" = scan-time ] && continue
		echo "${bench_saved[$k]}" >$K/$k
	done
	return 0
}
trap bench_cleanup EXIT

# scans_pass N: N full scans, or 3 s without one (ksmd idles when no
# process is mergeable: then nothing is stale either; it may also finish
# one scan, dropping processes that are gone, and then idle).
scans_pass() {
	local f0 f last i=0
	f0=$(cat $K/full_scans)
	last=$f0
	while :; do
		f=$(cat $K/full_scans)
		[ "$f" -ge $((f0 + $1)) ] && return 0
		if [ "$f" != "$last" ]; then last=$f i=0; fi
		sleep 0.2
		i=$((i + 1))
		[ $i -ge 15 ] && return 0
	done
}

bench_fast_ksm() {
	echo none >$K/advisor_mode
	echo 20000 >$K/pages_to_scan
	echo 10 >$K/sleep_millisecs
	echo 1 >$K/run
	scans_pass 2                      # ksmd forgets processes that are gone
	echo 0 >$K/run
}

bench_converge() {
	local prev=-1 same=0 cur
	echo 1 >$K/run
	for _ in $(seq 200); do
		scans_pass 2
		cur=$(cat $K/pages_sharing)
		if [ "$cur" = "$prev" ]; then same=$((same + 1)); else same=0; fi
		[ $same -ge 2 ] && return 0
		prev=$cur
	done
}
