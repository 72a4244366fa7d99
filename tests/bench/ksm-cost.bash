# tests/bench/ksm-cost.bash - what real KSM spends to reach its savings, to
# set beside --estimate's cost prediction (estimate-accuracy).  Source it
# after ksm-converge.bash (it uses $K and scans_pass).
#
#   bench_cost_converge PAGES MS   run=1 at PAGES/MS from run=0 and ksmd idle,
#                                  sampled every 50 ms until pages_sharing
#                                  settles; sets cost_s95, cost_cpu95 (time and
#                                  ksmd CPU to 95% of the final gain), cost_s,
#                                  cost_cpu (to the last gain) and cost_ns (ksmd
#                                  CPU per page scanned over the whole run)
#   bench_cost_follow CMD          the same from CMD (eval'ed in this shell:
#                                  it may start a tuner in the background),
#                                  whatever rate CMD sets
#   BENCH_COST_PIDS                "PID PID ...": the gain is then the sum of
#                                  these processes' ksm_merging_pages (their
#                                  pages mapped from KSM pages), not the host's
#                                  pages_sharing, which other KSM users move
#   BENCH_COST_KEEP                a file: the samples are copied there (time,
#                                  gain, ksmd ticks, pages scanned, full scans)

# Sampled with shell builtins only: a fork per sample would take the CPU
# that ksmd needs on a small machine, and slow what is measured.
ksmd_stat=
ksmd_ticks() {
	local line f
	read -r line <"$ksmd_stat"
	line=${line##*) }               # after the command name
	read -r -a f <<<"$line"
	ticks=$((f[11] + f[12]))        # utime, stime (fields 14 and 15)
}
knob() { read -r v <"$K/$1"; }
# The gain now, into v: pages_sharing, or the targets' ksm_merging_pages.
gain() {
	local p m sum=0
	[ -n "${BENCH_COST_PIDS:-}" ] || { knob pages_sharing; return; }
	for p in $BENCH_COST_PIDS; do
		m=0
		read -r m 2>/dev/null <"/proc/$p/ksm_merging_pages" || true
		sum=$((sum + ${m:-0}))
	done
	v=$sum
}

bench_cost_converge() {
	echo "$1" >$K/pages_to_scan
	echo "$2" >$K/sleep_millisecs
	bench_cost_follow "echo 1 >$K/run"
}

bench_cost_follow() {
	local series t0 base scanned0 ticks0 hz v ticks
	series=$(mktemp)
	ksmd_stat=/proc/$(pgrep -x ksmd | head -1)/stat
	hz=$(getconf CLK_TCK)
	gain; base=$v
	knob pages_scanned; scanned0=$v
	ksmd_ticks; ticks0=$ticks
	t0=$EPOCHREALTIME
	eval "$1"
	# Sampled until four full scans have passed without a gain.
	local last_gain_scans=-1 last_gain_s=$SECONDS start_s=$SECONDS scans0 now_scans sharing prev=-1 scanned
	knob full_scans; scans0=$v
	exec 9>"$series"
	while :; do
		knob full_scans; now_scans=$v
		gain; sharing=$v
		knob pages_scanned; scanned=$v
		ksmd_ticks
		echo "$EPOCHREALTIME $((sharing - base)) $((ticks - ticks0)) $((scanned - scanned0)) $((now_scans - scans0))" >&9
		if [ "$sharing" != "$prev" ]; then last_gain_scans=$now_scans last_gain_s=$SECONDS prev=$sharing; fi
		[ $((now_scans - scans0)) -ge 3 ] && [ $((now_scans - last_gain_scans)) -ge 4 ] && break
		# A tuner's steady phase scans slowly: 15 s without a gain ends it too.
		[ $((now_scans - scans0)) -ge 3 ] && [ $((SECONDS - last_gain_s)) -ge 15 ] && break
		# ksmd that never scans (a tuner that did not start): two minutes at most.
		[ $((now_scans - scans0)) -ge 200 ] || [ $((SECONDS - start_s)) -ge 120 ] && break
		sleep 0.05
	done
	exec 9>&-
	read -r cost_s95 cost_cpu95 cost_s cost_cpu cost_ns < <(awk -v t0="$t0" -v hz="$hz" '
		{ t[NR] = $1 - t0; g[NR] = $2; c[NR] = $3 / hz; p[NR] = $4 }
		END {
			final = g[NR]
			for (i = 1; i <= NR; i++) if (g[i] >= 0.95 * final) { i95 = i; break }
			for (i = 1; i <= NR; i++) if (g[i] == final) { iall = i; break }
			printf "%.2f %.2f %.2f %.2f %.0f\n", t[i95], c[i95], t[iall], c[iall],
				(p[NR] > 0 ? c[NR] * 1e9 / p[NR] : 0)
		}' "$series")
	[ -z "${BENCH_COST_KEEP:-}" ] || cp "$series" "$BENCH_COST_KEEP"
	rm -f "$series"
}
