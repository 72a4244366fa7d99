#!/usr/bin/env bats
# ksm-run runs as root and writes where it is told: reports, metrics,
# fingerprints.  In a sticky world-writable directory, another user may
# have planted the name first (a link to a file of root's, a FIFO, a hard
# link, a file of theirs): ksm-run writes none of them, says why, and exits
# as ksm-run(1) says; whether the host protects links or not
# (fs.protected_symlinks, fs.protected_hardlinks are set to 0 here).
# ci: lock asan

load helpers
load launcher_helpers

LAUNCHER_REQUIRES="root ksm jq"

setup_extra() {
	SAVED_SYMLINKS=$(cat /proc/sys/fs/protected_symlinks)
	SAVED_HARDLINKS=$(cat /proc/sys/fs/protected_hardlinks)
	echo 0 >/proc/sys/fs/protected_symlinks
	echo 0 >/proc/sys/fs/protected_hardlinks
	# the sticky world-writable directory, as /tmp is
	PLANT_DIR=$(mktemp -d /tmp/ksmenable-planted.XXXXXX)
	chmod 1777 "$PLANT_DIR"
	VICTIM=$(mktemp /tmp/ksmenable-victim.XXXXXX)
	echo "root's secret" >"$VICTIM"
	chmod 0600 "$VICTIM"
	VICTIM_SUM=$(sha256sum <"$VICTIM")
}

teardown_extra() {
	echo "$SAVED_SYMLINKS" >/proc/sys/fs/protected_symlinks
	echo "$SAVED_HARDLINKS" >/proc/sys/fs/protected_hardlinks
	rm -rf "$PLANT_DIR" "$VICTIM"
}

# plant KIND NAME: nobody makes NAME in the sticky directory: a link to the
# victim (link), a FIFO (fifo), a hard link to the victim (hard), or a
# file of nobody's (own).
plant() {
	local p=$PLANT_DIR/$2
	case $1 in
	link) as_nobody ln -s "$VICTIM" "$p" ;;
	fifo) as_nobody mkfifo "$p" ;;
	hard) as_nobody ln "$VICTIM" "$p" ;;
	own) as_nobody sh -c 'echo nobody > "$1"' sh "$p" ;;
	esac
}

# victim_intact: the victim holds what it held, mode 0600, root's.
victim_intact() {
	[ "$(sha256sum <"$VICTIM")" = "$VICTIM_SUM" ] || { echo "the victim was written: $(cat "$VICTIM")"; return 1; }
	[ "$(stat -c %a:%u "$VICTIM")" = 600:0 ] || { echo "victim: $(stat -c %a:%u "$VICTIM")"; return 1; }
}

# refused_with STATUS WORDS ARG...: ksm-run ARG... (within 30 s) exits STATUS
# and says WORDS; the victim is intact.
refused_with() {
	local want=$1 words=$2
	shift 2
	run --separate-stderr timeout -k 5 30 "$KSM_RUN" "$@"
	echo "ksm-run $*: status $status; stderr: $stderr"
	[ "$status" = "$want" ]
	[[ $stderr == *"$words"* ]]
	victim_intact
}

# fingerprint FILE: a fingerprint of a small workload, for --combine.
fingerprint() {
	start_workload fpw -- "$PROGS/dupmem" mmap=2 wait
	run -0 --separate-stderr "$KSM_RUN" --estimate="$(wl_pid fpw)" --fingerprint="$1"
}

@test "planted: --report-file of a command is not written through a link, FIFO, hard link or another user's file; nothing runs" {
	local kind
	for kind in link fifo hard own; do
		plant $kind "report-$kind"
		refused_with 125 "--report-file=$PLANT_DIR/report-$kind: refused" \
			--report-file="$PLANT_DIR/report-$kind" -- sh -c "touch $PLANT_DIR/ran"
		[ ! -e "$PLANT_DIR/ran" ]
	done
	[[ $stderr == *"belongs to another user"* ]]
	# a new file, and one of root's, are appended to
	run -0 "$KSM_RUN" --report-file="$PLANT_DIR/new" -- true
	run -0 "$KSM_RUN" --report-file="$PLANT_DIR/new" -- true
	[ "$(grep -c '^ksm-run' "$PLANT_DIR/new")" -ge 2 ] || { cat "$PLANT_DIR/new"; false; }
}

@test "planted: --combine and --estimate with --report-file write through no link and into no FIFO; a hard link is replaced, not written" {
	local kind
	fingerprint "$BATS_TEST_TMPDIR/a.kfp"
	for kind in link fifo; do
		plant $kind "combine-$kind"
		refused_with 125 "--report-file=$PLANT_DIR/combine-$kind: refused" \
			--combine --report-file="$PLANT_DIR/combine-$kind" "$BATS_TEST_TMPDIR/a.kfp"
		plant $kind "estimate-$kind"
		refused_with 125 "--report-file=$PLANT_DIR/estimate-$kind: refused" \
			--estimate="$(wl_pid fpw)" --report-file="$PLANT_DIR/estimate-$kind"
	done
	[[ $stderr == *"not a regular file"* ]]
	# a hard link to the victim: the name gets a new file of root's (rename), the victim is left as it was
	for kind in combine estimate; do
		plant hard "$kind-hard"
	done
	refused_with 0 "" --combine --report-file="$PLANT_DIR/combine-hard" "$BATS_TEST_TMPDIR/a.kfp"
	refused_with 0 "" --estimate="$(wl_pid fpw)" --report-file="$PLANT_DIR/estimate-hard"
	for kind in combine estimate; do
		[ "$(stat -c %u:%h "$PLANT_DIR/$kind-hard")" = 0:1 ]
		grep -q pages_sharing "$PLANT_DIR/$kind-hard" || grep -q sharing "$PLANT_DIR/$kind-hard"
	done
}

@test "planted: --fingerprint is not written through a link or into a FIFO" {
	local kind
	start_workload fpw -- "$PROGS/dupmem" mmap=2 wait
	for kind in link fifo; do
		plant $kind "fp-$kind.kfp"
		refused_with 125 "--fingerprint=$PLANT_DIR/fp-$kind.kfp: refused" \
			--estimate="$(wl_pid fpw)" --fingerprint="$PLANT_DIR/fp-$kind.kfp"
	done
}

@test "planted: --fingerprint-per-cgroup writes through no link; a planted key (a link, nobody's file) is not used" {
	local h cg=ksmenable-test-$$
	h=$(cgroup_root)
	make_cgroup p
	start_workload fpw -- "$PROGS/dupmem" mmap=2 wait
	echo "$(wl_pid fpw)" >"$h/$cg-p/cgroup.procs"
	# the per-cgroup file, planted as a link; the key there made by ksm-run
	plant link "$cg-p.kfp"
	refused_with 125 "--fingerprint=$PLANT_DIR/$cg-p.kfp: refused: it is a symbolic link" \
		--estimate="cgroup:$h/$cg-p" --fingerprint-per-cgroup="$PLANT_DIR"
	[ "$(stat -c %a:%u "$PLANT_DIR/ksm-run-fleet.key")" = 600:0 ]
	# a key planted as a link to root's file, or as nobody's file: refused before anything is read
	mkdir -m 1777 "$PLANT_DIR/k"
	as_nobody ln -s "$VICTIM" "$PLANT_DIR/k/ksm-run-fleet.key"
	refused_with 125 "fingerprint key $PLANT_DIR/k/ksm-run-fleet.key: not a key" \
		--estimate="$(wl_pid fpw)" --fingerprint="$PLANT_DIR/k/fp.kfp"
	[ -z "$output" ] && [ ! -e "$PLANT_DIR/k/fp.kfp" ]
	as_nobody sh -c 'umask 077; echo 000102030405060708090a0b0c0d0e0f >"$1"' sh "$PLANT_DIR/k/nobody.key"
	refused_with 125 "fingerprint key $PLANT_DIR/k/nobody.key: refused: owned by uid 65534" \
		--estimate="$(wl_pid fpw)" --fingerprint="$PLANT_DIR/k/fp.kfp" --fingerprint-key="$PLANT_DIR/k/nobody.key"
	[ ! -e "$PLANT_DIR/k/fp.kfp" ]
}

@test "planted: --metrics-file is not written through a link or into a FIFO; the command runs and its status is kept" {
	local kind
	for kind in link fifo; do
		plant $kind "metrics-$kind.prom"
		refused_with 3 "cannot write the metrics file $PLANT_DIR/metrics-$kind.prom: " \
			--metrics-file="$PLANT_DIR/metrics-$kind.prom" -- sh -c 'sleep 1.5; exit 3'
		[ -L "$PLANT_DIR/metrics-$kind.prom" ] || [ -p "$PLANT_DIR/metrics-$kind.prom" ]
	done
}

@test "planted: --attach leaves a link planted at --metrics-file in place when its targets end" {
	requires prctl          # --attach's default, the process-wide flag
	plant link metrics-attach.prom
	start_workload -- "$PROGS/attachee" sleep 2
	refused_with 0 "cannot write the metrics file $PLANT_DIR/metrics-attach.prom: " \
		--attach="$WL_PID" --metrics-file="$PLANT_DIR/metrics-attach.prom"
	[[ $stderr == *"cannot write the metrics file $PLANT_DIR/metrics-attach.prom: "* ]]
	# Not written, and not removed either: the name is nobody's to take away.
	[ -L "$PLANT_DIR/metrics-attach.prom" ]
	victim_intact
}

@test "planted: a FIFO named by KSM_ENABLE_REPORT does not block the run" {
	as_nobody mkfifo "$PLANT_DIR/lines"
	run --separate-stderr timeout -k 5 30 env KSM_ENABLE_REPORT="$PLANT_DIR/lines" "$KSM_RUN" -- true
	echo "status $status: $stderr"
	[ "$status" = 0 ]
}
