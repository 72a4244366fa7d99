#!/usr/bin/env bats
# The build under test is the one the run says: sanitized in make
# check-asan (the library and ksm-run instrumented, the runtime first in
# PRELOAD, reports in files that fail the run), plain in make check.
# ci: lock asan

load helpers

# instrumented FILE: FILE calls the AddressSanitizer runtime.
instrumented() { nm -D --undefined-only "$1" | grep -q '__asan_report_'; }

# with_own_log DIR COMMAND...: COMMAND's sanitizer reports go to DIR, not
# to the run's: these are wanted.
with_own_log() {
	local d=$1
	shift
	ASAN_OPTIONS="${ASAN_OPTIONS:-}:log_path=$d/report" UBSAN_OPTIONS="${UBSAN_OPTIONS:-}:log_path=$d/report" "$@"
}

@test "the library and ksm-run are sanitized exactly in the sanitized run" {
	if [ -z "$SANITIZER_RUNTIME" ]; then
		run ! instrumented "$LIB"
		run ! instrumented "$KSM_RUN"
		return 0
	fi
	instrumented "$LIB"
	instrumented "$KSM_RUN"
	# The runtime first, then the library; it is the runtime the library needs.
	[ "$PRELOAD" = "$SANITIZER_RUNTIME:$LIB" ]
	readelf -d "$LIB" | grep -q "NEEDED.*\[${SANITIZER_RUNTIME##*/}\]"
	# Preloaded so into an uninstrumented program: no complaint.
	run --separate-stderr env LD_PRELOAD="$PRELOAD" "$PROGS/dupmem" getmerge
	[ "$status" = 0 ] && [ -z "$stderr" ]
	# Alone it is refused: the load order is checked, not papered over (said
	# on stderr, before the runtime reads its options).
	run --separate-stderr env LD_PRELOAD="$LIB" "$PROGS/dupmem" getmerge
	[ "$status" != 0 ]
	[[ $stderr == *"runtime does not come first"* ]]
}

@test "an ASan and a UBSan report each land in a file and end the process by SIGABRT" {
	# A plain run has no sanitizer to report.
	[ -n "$SANITIZER_RUNTIME" ] || return 0
	local d=$BATS_TEST_TMPDIR/bug
	mkdir "$d"
	cat >"$d/bug.c" <<-'EOF'
	#include <stdlib.h>
	int main(int argc, char **argv)
	{
		char *p = malloc(4);
		if (argv[1][0] == 'a')
			p[argc + 2] = 1;                /* heap-buffer-overflow */
		else
			p[0] = (char)(argc << (argc + 38)); /* shift exponent 40 */
		return p[0];
	}
	EOF
	# shellcheck disable=SC2086 # a list of flags
	"$SANITIZER_CC" $SANITIZER_CFLAGS -g -o "$d/bug" "$d/bug.c"
	run -134 with_own_log "$d" "$d/bug" a
	grep -q 'ERROR: AddressSanitizer: heap-buffer-overflow' "$d"/report.*
	rm "$d"/report.*
	run -134 with_own_log "$d" "$d/bug" u
	grep -q 'runtime error: shift exponent 40' "$d"/report.*
}
