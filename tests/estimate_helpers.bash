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

# own_ksm PID[,PID]...: what KSM merged in these processes alone, whatever
# other KSM users on the host merge meanwhile: "SHARING SHARED ZERO" as the
# kernel counts pages_sharing, pages_shared and ksm_zero_pages, from their
# frames (/proc/PID/pagemap and /proc/kpageflags' KPF_KSM, root): SHARED
# the distinct KSM frames they map, SHARING their other mappings of them,
# ZERO the sum of their ksm_stat ksm_zero_pages.  Where kpageflags flags
# every anonymous page KSM (Debian 13's 6.12: kpageflags_ksm_sound), the
# system's counters are theirs alone only when no other process maps a KSM
# page (ksm_merging_pages): then those, else it fails, saying why.
own_ksm() {
	if ! kpageflags_ksm_sound; then
		own_ksm_by_counters "$1"
		return
	fi
	python3 - "$1" <<'PY'
import os, struct, sys
KPF_KSM, page = 21, os.sysconf("SC_PAGE_SIZE")
frames, mapped, zero = set(), 0, 0
with open("/proc/kpageflags", "rb") as kpf:
    for pid in filter(None, sys.argv[1].split(",")):
        try:
            with open(f"/proc/{pid}/maps") as f:
                # Not x86-64's vsyscall page, past the pagemap's end; named,
                # not by address: aarch64's mappings lie above 2^47 too.
                ranges = [[int(x, 16) for x in l.split()[0].split("-")] for l in f
                          if not l.rstrip().endswith("[vsyscall]")]
            with open(f"/proc/{pid}/pagemap", "rb") as pm:
                for a, b in ranges:
                    pm.seek(a // page * 8)
                    for (e,) in struct.iter_unpack("<Q", pm.read((b - a) // page * 8)):
                        if not e >> 63:
                            continue    # not present
                        pfn = e & ((1 << 55) - 1)
                        kpf.seek(pfn * 8)
                        if struct.unpack("<Q", kpf.read(8))[0] >> KPF_KSM & 1:
                            frames.add(pfn)
                            mapped += 1
            with open(f"/proc/{pid}/ksm_stat") as f:
                zero += sum(int(l.split()[1]) for l in f if l.startswith("ksm_zero_pages "))
        except OSError:
            pass                        # ended meanwhile
print(mapped - len(frames), len(frames), zero)
PY
}

# own_ksm_by_counters PID[,PID]...: own_ksm from the system's counters,
# when no other process maps a KSM page.
own_ksm_by_counters() {
	local others zero
	# One awk over every ksm_stat (a process per file was seconds under TCG).
	read -r others zero < <(awk -v own=",$1," '
		FNR == 1 { split(FILENAME, p, "/"); mine = index(own, "," p[3] ",") > 0 }
		$1 == "ksm_merging_pages" && !mine { others += $2 }
		$1 == "ksm_zero_pages" && mine { zero += $2 }
		END { print others + 0, zero + 0 }' /proc/[0-9]*/ksm_stat 2>/dev/null)
	[ "$others" = 0 ] || { echo "own_ksm: kpageflags cannot tell KSM frames here, and other processes map $others KSM pages" >&2; return 1; }
	echo "$(cat $KSM/pages_sharing) $(cat $KSM/pages_shared) $zero"
}

# converge PID[,PID]...: let KSM merge these processes until what they
# merged (own_ksm) stays unchanged over three windows of two full scans.
# Their own figures, not the system's: another KSM user on the host may
# merge and unmerge all the while.
converge() {
	local prev=-1 cur f same=0
	echo 1 >$KSM/run
	for _ in $(seq 60); do
		f=$(cat $KSM/full_scans)
		wait_until 20 scans_reached $((f + 2))
		cur=$(own_ksm "$1")
		if [ "$cur" = "$prev" ]; then same=$((same + 1)); else same=0; fi
		[ $same -ge 2 ] && return 0
		prev=$cur
	done
	return 1
}

# thp_given PID KB: PID holds at least KB of transparent huge pages (smaps
# AnonHugePages); a host that gives none (enabled "never", or none free)
# is one where the test does not apply.
thp_given() {
	local kb
	kb=$(awk '/^AnonHugePages:/ { print $2 }' /proc/$1/smaps_rollup)
	[ "$kb" -ge "$2" ] && return 0
	kernel_lacks "transparent huge page for the test (AnonHugePages ${kb} kB;" \
		"enabled: $(cat /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null))"
}

rss_kb() { awk '/^Rss:/ { print $2 }' /proc/$1/smaps_rollup; }
no_thp_left() { [ "$(awk '/^AnonHugePages:/ { print $2 }' /proc/$1/smaps_rollup)" = 0 ]; }
