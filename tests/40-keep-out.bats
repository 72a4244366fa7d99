#!/usr/bin/env bats
# What the program or the user kept out stays out, and secret-like memory
# stays unmerged: judged by smaps VmFlags and by real merging, in madvise
# mode, in prctl mode, through the API and across fork.
# ci: lock asan guest

load helpers

setup_file() { save_knobs; fast_ksm; }
teardown_file() { restore_knobs; }
teardown() { stop_workloads; }

setup() { requires root ksm prctl; }

# Rescans every 10 ms, so that "never again" is tested over many passes.
MADVISE=(LD_PRELOAD="$PRELOAD" KSM_ENABLE_MODE=madvise KSM_ENABLE_RESCAN_MS=10)
PRCTL=(LD_PRELOAD="$PRELOAD" KSM_ENABLE_MODE=prctl)

never_merged() { [ "$(region_ksm_kb "$1" "$2")" = 0 ]; }

# A small mapping made after the marks: only a rescan advises it, so once it
# is mergeable at least one pass has judged everything again.
rescanned() { region_mergeable "$WL_PID" "$(workload_region later)"; }

@test "madvise mode: a region the program made MADV_UNMERGEABLE is never advised again" {
	start_workload "${MADVISE[@]}" -- "$(marks)" map=key:8 unmergeable=key dontdump=key map=twin:8 \
		mapk=later:256 wait
	wait_until 10 rescanned
	sleep 0.3                       # thirty more passes
	not_mergeable "$WL_PID" "$(workload_region key)"
	# The control: the same content elsewhere is advised and merges.
	region_mergeable "$WL_PID" "$(workload_region twin)"
	wait_until 20 region_merged "$WL_PID" "$(workload_region twin)"
	never_merged "$WL_PID" "$(workload_region key)"
}

@test "posix_madvise(MADV_UNMERGEABLE) counts the same" {
	start_workload "${MADVISE[@]}" -- "$(marks)" map=key:4 posix-unmergeable=key mapk=later:256 wait
	wait_until 10 rescanned
	not_mergeable "$WL_PID" "$(workload_region key)"
}

@test "prctl mode: kept out although the flag is on, also after the program's own prctl and the API" {
	start_workload "${PRCTL[@]}" -- "$(marks)" map=key:8 unmergeable=key map=twin:8 merge=1 \
		apply=all getmerge wait
	grep -qx "merge_any $WL_PID 1" "$WL_OUT"
	grep -q "^apply [0-9]* 0$" "$WL_OUT"
	not_mergeable "$WL_PID" "$(workload_region key)"
	region_mergeable "$WL_PID" "$(workload_region twin)"
	wait_until 20 region_merged "$WL_PID" "$(workload_region twin)"
	never_merged "$WL_PID" "$(workload_region key)"
}

@test "across fork: the child keeps the parent's marks, and its own rescan honours them" {
	# Without LSan: the child of this two-threaded program may inherit the
	# loader's lock held (the sanitizer runtime in the other thread), and
	# LSan's check at the child's exit waits on it for ever (seen once in
	# 40 sanitized runs); the marks, not leaks, are tested here.
	start_workload $NO_LSAN "${MADVISE[@]}" -- "$(marks)" map=key:4 unmergeable=key fork mapk=later:256 wait
	local child
	child=$(awk '$1 == "region" && $2 == "later" { print $4 }' "$WL_OUT")
	[ -n "$child" ] && [ "$child" != "$WL_PID" ]
	wait_until 10 region_mergeable "$child" "$(workload_region later)"
	sleep 0.3
	not_mergeable "$child" "$(workload_region key)"
	not_mergeable "$WL_PID" "$(workload_region key)"
}

@test "memory mapped anew where a kept-out region was is new memory: advised" {
	start_workload "${MADVISE[@]}" -- "$(marks)" map=key:4 unmergeable=key renew=key wait
	region_mergeable "$WL_PID" "$(workload_region key)"
}

@test "a kept-out region moved by mremap stays out" {
	start_workload "${MADVISE[@]}" -- "$(marks)" map=key:4 unmergeable=key move=key mapk=later:256 wait
	wait_until 10 rescanned
	not_mergeable "$WL_PID" "$(awk '$1 == "region" && $2 == "key" { a = $3 } END { print a }' "$WL_OUT")"
}

@test "secret-like: locked and DONTDUMP, in either order, never mergeable in madvise mode" {
	start_workload "${MADVISE[@]}" -- "$(marks)" map=heap1:4 $LOCK=heap1 dontdump=heap1 \
		map=heap2:4 dontdump=heap2 $LOCK=heap2 map=rng:4 wipeonfork=rng mapk=later:256 wait
	wait_until 10 rescanned
	sleep 0.3
	for r in heap1 heap2 rng; do
		not_mergeable "$WL_PID" "$(workload_region $r)"
	done
}

@test "secret-like: in prctl mode made unmergeable as soon as the signature is complete" {
	start_workload "${PRCTL[@]}" -- "$(marks)" map=heap1:8 $LOCK=heap1 dontdump=heap1 \
		map=heap2:8 dontdump=heap2 $LOCK=heap2 map=rng:8 wipeonfork=rng map=twin:8 wait
	for r in heap1 heap2 rng; do
		not_mergeable "$WL_PID" "$(workload_region $r)"
	done
	wait_until 20 region_merged "$WL_PID" "$(workload_region twin)"
	for r in heap1 heap2 rng; do
		never_merged "$WL_PID" "$(workload_region $r)"
	done
}

@test "secret-like after mlockall: DONTDUMP memory is locked memory" {
	not_sanitized "the runtime's mlockall locks nothing, and there is no other call that locks all"
	start_workload "${PRCTL[@]}" -- "$(marks)" map=cache:4 dontdump=cache map=later:4 mlockall \
		dontdump=later map=twin:4 wait
	not_mergeable "$WL_PID" "$(workload_region cache)"
	not_mergeable "$WL_PID" "$(workload_region later)"
	# The control: a region that is not DONTDUMP, locked too, is mergeable.
	region_mergeable "$WL_PID" "$(workload_region twin)"
}

@test "not secret: DONTDUMP alone (a cache), and what the program advised MERGEABLE itself (QEMU guest RAM)" {
	start_workload "${PRCTL[@]}" -- "$(marks)" map=cache:8 dontdump=cache map=guest:8 mergeable=guest \
		dontdump=guest $LOCK=guest wait
	region_mergeable "$WL_PID" "$(workload_region cache)"
	region_mergeable "$WL_PID" "$(workload_region guest)"
	wait_until 20 region_merged "$WL_PID" "$(workload_region cache)"
	wait_until 20 region_merged "$WL_PID" "$(workload_region guest)"
	stop_workload
	start_workload "${MADVISE[@]}" -- "$(marks)" map=cache:4 dontdump=cache mapk=later:256 wait
	wait_until 10 rescanned
	region_mergeable "$WL_PID" "$(workload_region cache)"
}

@test "secret-like memory merges only when the allow list names secret" {
	start_workload LD_PRELOAD="$PRELOAD" KSM_ENABLE_ALLOW=all,secret KSM_ENABLE_RESCAN_MS=10 -- \
		"$(marks)" map=heap1:4 $LOCK=heap1 dontdump=heap1 mapk=later:256 wait
	wait_until 10 rescanned
	wait_until 10 region_mergeable "$WL_PID" "$(workload_region heap1)"
}

@test "a full table: one warning, and nothing new is advised rather than a range forgotten" {
	start_workload "${MADVISE[@]}" -- "$(marks)" pieces=1100 mapk=later:256 map=big:4 wait
	sleep 0.5
	[ "$(grep -c 'more than 1024 ranges marked by the program' "$WL_ERR")" = 1 ]
	# Nothing new advised: the later region (there, see not_mergeable) stays out.
	not_mergeable "$WL_PID" "$(workload_region later)"
	not_mergeable "$WL_PID" "$(workload_region big)"
	# The pieces themselves stay out, the first as the last, which the table lacks.
	local base
	base=$(workload_region pieces)
	not_mergeable "$WL_PID" "$base"
	not_mergeable "$WL_PID" "$(printf %x $((0x$base + 2 * 1099 * $(getconf PAGESIZE))))"
}

# The table holds 1,024 ranges; 1,100 DONTDUMP pages fill it with marks
# that are not secret, and later marks cannot be recorded.
FULL=(dontdump-pieces=1100)

@test "a full table still protects: WIPEONFORK on a fresh region after 1,100 DONTDUMP ranges (prctl)" {
	start_workload "${PRCTL[@]}" -- "$(marks)" "${FULL[@]}" map=rng:1 wipeonfork=rng map=twin:1 wait
	grep -q 'more than 1024 ranges marked by the program' "$WL_ERR"
	not_mergeable "$WL_PID" "$(workload_region rng)"
	region_mergeable "$WL_PID" "$(workload_region twin)"
}

@test "a full table still protects: locked and DONTDUMP, in either order (prctl)" {
	start_workload "${PRCTL[@]}" -- "$(marks)" "${FULL[@]}" map=heap1:1 $LOCK=heap1 dontdump=heap1 \
		map=heap2:1 dontdump=heap2 $LOCK=heap2 map=twin:1 wait
	for r in heap1 heap2; do
		not_mergeable "$WL_PID" "$(workload_region $r)"
	done
	region_mergeable "$WL_PID" "$(workload_region twin)"
}

@test "a full table still protects: memory advised before it filled, made secret-like after (madvise)" {
	start_workload "${MADVISE[@]}" -- "$(marks)" map=rng:1 map=heap:1 map=twin:1 "${FULL[@]}" \
		wipeonfork=rng $LOCK=heap dontdump=heap wait
	# Mappings of 1 MiB are advised as they are made, before the table filled.
	region_mergeable "$WL_PID" "$(workload_region twin)"
	not_mergeable "$WL_PID" "$(workload_region rng)"
	not_mergeable "$WL_PID" "$(workload_region heap)"
}

@test "a full table still protects: the program's own PR_SET_MEMORY_MERGE again (prctl)" {
	not_sanitized "ASan's shadow (20 TiB of mappings), made mergeable and unmergeable again by the" \
		"program's merge=0 merge=1, takes the kernel minutes (6.5 here; 24 ms unsanitized)"
	start_workload "${PRCTL[@]}" -- "$(marks)" "${FULL[@]}" map=rng:1 wipeonfork=rng map=heap:1 \
		$LOCK=heap dontdump=heap merge=0 merge=1 map=twin:1 getmerge wait
	grep -qx "merge_any $WL_PID 1" "$WL_OUT"
	region_mergeable "$WL_PID" "$(workload_region twin)"
	not_mergeable "$WL_PID" "$(workload_region rng)"
	not_mergeable "$WL_PID" "$(workload_region heap)"
}

@test "the exit line says what was kept out, and why" {
	local r=$BATS_TEST_TMPDIR/r.json
	run -0 env "${MADVISE[@]}" KSM_ENABLE_DENY=stack KSM_ENABLE_REPORT="$r" "$(marks)" map=key:4 \
		unmergeable=key map=heap1:2 $LOCK=heap1 dontdump=heap1 sleep=100
	[ "$(jq -r '.kept_out.program.bytes' "$r")" = $((4 << 20)) ]
	[ "$(jq -r '.kept_out.secret.bytes' "$r")" = $((2 << 20)) ]
	[ "$(jq -r '.kept_out.user.regions' "$r")" -ge 1 ]
	[ "$(jq -r '.kept_out.marks_full' "$r")" = false ]
}

@test "memory marked secret-like before the library's constructor ran is found at start (madvise mode)" {
	local marker=$BATS_TEST_TMPDIR/libmarker.so
	# Another library's constructor, run before ours, marks memory by system
	# call, as code the library cannot see would.
	cat >"$BATS_TEST_TMPDIR/marker.c" <<'C'
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>
__attribute__((constructor)) static void mark(void)
{
	char *p = mmap(NULL, 4 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	memset(p, 0x42, 4 << 20);
	syscall(SYS_mlock, p, 4 << 20);
	syscall(SYS_madvise, p, 4 << 20, MADV_DONTDUMP);
	printf("region early %lx %d\n", (unsigned long)p, (int)getpid());
	fflush(stdout);
}
C
	cc -shared -fPIC -o "$marker" "$BATS_TEST_TMPDIR/marker.c"
	# Later LD_PRELOAD entries are initialized first: the marker, then the library.
	start_workload LD_PRELOAD="$PRELOAD $marker" KSM_ENABLE_MODE=madvise -- "$(marks)" mapk=later:256 wait
	wait_until 10 not_mergeable "$WL_PID" "$(workload_region early)"
	sleep 0.2
	not_mergeable "$WL_PID" "$(workload_region early)"
}

@test "--status shows what a merging process keeps out, and what is secret-like" {
	start_workload "${PRCTL[@]}" -- "$(marks)" map=twin:8 map=key:4 unmergeable=key map=heap1:2 $LOCK=heap1 \
		dontdump=heap1 wait
	wait_until 20 region_merged "$WL_PID" "$(workload_region twin)"
	run -0 "$KSM_RUN" --status
	local row
	row=$(awk -v p="$WL_PID" '$1 == p && $2 == "marks"' <<<"$output")
	[ -n "$row" ]
	[ "$(awk '{ print $5 }' <<<"$row")" -ge 4096 ]
	[ "$(awk '{ print $6 }' <<<"$row")" -ge 2048 ]
}
