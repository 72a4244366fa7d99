# Helpers for the tests of the evaluation (tests/30-estimate.bats,
# tests/36-fleet.bats): an estimate's JSON, comparisons, and real KSM run
# to convergence.  Load after helpers and launcher_helpers.

scans_reached() { [ "$(cat $KSM/full_scans)" -ge "$1" ]; }

# estimate TARGET [OPTION]...: --estimate as JSON into $EST; fails unless exit 0.
estimate() {
	run --separate-stderr "$KSM_RUN" --estimate="$@" --json
	[ "$status" = 0 ] || { echo "ksm-run: $status $stderr"; return 1; }
	EST=$output
}

est() { jq -r ".$1" <<<"$EST"; }

# within_pct A B PCT: |A - B| <= PCT% of B.
within_pct() {
	local a=$1 b=$2 pct=$3 d
	d=$((a > b ? a - b : b - a))
	[ $((d * 100)) -le $((b * pct)) ] || { echo "$a and $b differ by more than $pct%"; return 1; }
}

# Let KSM merge the targets until pages_sharing stays unchanged over three
# windows of two full scans.
converge() {
	local prev=-1 cur f same=0
	echo 1 >$KSM/run
	for _ in $(seq 60); do
		f=$(cat $KSM/full_scans)
		wait_until 20 scans_reached $((f + 2))
		cur=$(cat $KSM/pages_sharing)
		if [ "$cur" = "$prev" ]; then same=$((same + 1)); else same=0; fi
		[ $same -ge 2 ] && return 0
		prev=$cur
	done
	return 1
}

