#!/usr/bin/env bats
# The fault injector itself: other tests trust it to play old kernels and
# seccomp policies, so it must fail exactly the calls it is told to and
# nothing else.
# ci: asan

load helpers
bats_require_minimum_version 1.5.0

setup() {
	requires faultinject
	PROBE=$PROGS/sysprobe
	[ -x "$PROBE" ] || { echo "missing $PROBE (make progs)" >&2; return 1; }
}

@test "faultinject: --help describes the rule syntax" {
	run "$FAULT" --help
	[ "$status" -eq 0 ]
	[[ $output == *"SYSCALL[,argN=VALUE]...:ERRNO"* ]]
}

@test "faultinject: without rules the command runs untouched" {
	requires prctl
	run "$FAULT" -- "$PROBE" prctl 67 1
	[ "$status" -eq 0 ]
	[ "$output" = ok ]
}

@test "faultinject: prctl(PR_SET_MEMORY_MERGE) fails with EINVAL (pre-6.4 kernel)" {
	run "$FAULT" -f prctl,arg0=67:EINVAL -- "$PROBE" prctl 67 1
	[ "$status" -eq 1 ]
	[ "$output" = EINVAL ]
}

@test "faultinject: prctl(PR_SET_MEMORY_MERGE) fails with EPERM (seccomp policy)" {
	run "$FAULT" -f prctl,arg0=67:EPERM -- "$PROBE" prctl 67 1
	[ "$status" -eq 1 ]
	[ "$output" = EPERM ]
}

@test "faultinject: other prctl options and other calls are unaffected" {
	requires prctl
	run "$FAULT" -f prctl,arg0=67:EINVAL -- "$PROBE" prctl 68
	[ "$status" -eq 0 ]
	[ "$output" = ok ]
	run "$FAULT" -f prctl,arg0=67:EINVAL -- "$PROBE" madvise-mergeable
	[ "$output" = ok ]
	run "$FAULT" -f prctl,arg0=67:EINVAL -- "$PROBE" mmap
	[ "$output" = ok ]
}

@test "faultinject: madvise(MADV_MERGEABLE) fails with EAGAIN, other advice runs" {
	run "$FAULT" -f madvise,arg2=12:EAGAIN -- "$PROBE" madvise-mergeable
	[ "$status" -eq 1 ]
	[ "$output" = EAGAIN ]
	run "$FAULT" -f madvise,arg2=12:EAGAIN -- "$PROBE" madvise 13
	[ "$status" -eq 0 ]
	[ "$output" = ok ]
	run "$FAULT" -f madvise,arg2=12:EAGAIN -- "$PROBE" madvise 4
	[ "$output" = ok ]
}

@test "faultinject: every listed argument must match" {
	requires prctl
	run "$FAULT" -f prctl,arg0=67,arg1=1:EPERM -- "$PROBE" prctl 67 1
	[ "$output" = EPERM ]
	run "$FAULT" -f prctl,arg0=67,arg1=1:EPERM -- "$PROBE" prctl 67 0
	[ "$status" -eq 0 ]
	[ "$output" = ok ]
}

@test "faultinject: hex values, numeric errnos and rules without conditions" {
	run "$FAULT" -f prctl,arg0=0x43:12 -- "$PROBE" prctl 67 1
	[ "$output" = ENOMEM ]
	run "$FAULT" -f uname:EACCES -- "$PROBE" uname
	[ "$output" = EACCES ]
	run "$FAULT" -f madvise:ENOSYS -- "$PROBE" madvise 0
	[ "$output" = ENOSYS ]
	run "$FAULT" -f madvise,arg2=0xc:EFAULT -- "$PROBE" madvise-mergeable
	[ "$output" = EFAULT ]
}

@test "faultinject: several rules apply together" {
	local f="-f prctl,arg0=67:EPERM -f madvise,arg2=12:EAGAIN"
	run "$FAULT" $f -- "$PROBE" prctl 67 1
	[ "$output" = EPERM ]
	run "$FAULT" $f -- "$PROBE" madvise-mergeable
	[ "$output" = EAGAIN ]
}

@test "faultinject: children and executed programs inherit the filter" {
	run "$FAULT" -f prctl,arg0=67:EINVAL -- sh -c '"$1" prctl 67 1; "$1" prctl 67 1' sh "$PROBE"
	[ "${lines[0]}" = EINVAL ]
	[ "${lines[1]}" = EINVAL ]
}

@test "faultinject: a musl-built program sees the same failures" {
	requires musl
	[ -x "$MUSL_BUILD/tests/sysprobe" ] || skip_or_fail "no musl sysprobe (make musl)"
	run "$FAULT" -f prctl,arg0=67:EINVAL -- "$MUSL_BUILD/tests/sysprobe" prctl 67 1
	[ "$output" = EINVAL ]
	run "$FAULT" -f madvise,arg2=12:EAGAIN -- "$MUSL_BUILD/tests/sysprobe" madvise-mergeable
	[ "$output" = EAGAIN ]
}

@test "faultinject: the command's exit status passes through" {
	local code
	for code in 0 1 2 42 255; do
		run "$FAULT" -f prctl,arg0=67:EINVAL -- sh -c "exit $code"
		[ "$status" -eq "$code" ]
	done
	run "$FAULT" -- sh -c 'kill -TERM $$'
	[ "$status" -eq $((128 + 15)) ]
}

@test "faultinject: 127 for a missing command, 126 for one that cannot run" {
	run -127 "$FAULT" -f prctl,arg0=67:EINVAL -- /nonexistent/command
	[[ $output == *"/nonexistent/command"* ]]
	run -127 "$FAULT" -- no-such-command-ksmenable
	echo 'echo RAN' >"$BATS_TEST_TMPDIR/not-executable"
	chmod 644 "$BATS_TEST_TMPDIR/not-executable"
	run "$FAULT" -- "$BATS_TEST_TMPDIR/not-executable"
	[ "$status" -eq 126 ]
	[[ $output == *"not-executable"* ]]
}

# bad_rule RULE TEXT: RULE is refused with 125, the command does not run,
# and the message names the rule and contains TEXT.
bad_rule() {
	run "$FAULT" -f "$1" -- echo RAN
	echo "rule '$1' -> status $status: $output" >&2
	[ "$status" -eq 125 ]
	[[ $output != *RAN* ]]
	[[ $output == *"faultinject: rule '$1'"* ]]
	[[ $output == *"$2"* ]]
}

@test "faultinject: bad rules are refused with 125 and a message naming the text" {
	bad_rule nosuchcall:EINVAL "unknown SYSCALL 'nosuchcall'"
	bad_rule :EINVAL "missing SYSCALL"
	bad_rule prctl,arg0=67 "missing ':ERRNO'"
	bad_rule prctl,arg0=67: "empty ERRNO"
	bad_rule prctl,arg0=67:EWHATEVER "unknown ERRNO 'EWHATEVER'"
	bad_rule prctl,arg0=67:einval "unknown ERRNO 'einval'"
	bad_rule prctl:0 "ERRNO '0' out of range"
	bad_rule prctl:4096 "ERRNO '4096' out of range"
	bad_rule prctl,arg6=1:EINVAL "bad condition 'arg6=1'"
	bad_rule prctl,arg=1:EINVAL "bad condition 'arg=1'"
	bad_rule prctl,arg0:EINVAL "bad condition 'arg0'"
	bad_rule prctl,,arg0=1:EINVAL "empty condition"
	bad_rule prctl,arg0=1,:EINVAL "empty condition"
	bad_rule prctl,arg0=:EINVAL "bad VALUE ''"
	bad_rule prctl,arg0=abc:EINVAL "bad VALUE 'abc'"
	bad_rule prctl,arg0=67x:EINVAL "bad VALUE '67x'"
	bad_rule prctl,arg0=-1:EINVAL "bad VALUE '-1'"
	bad_rule "prctl,arg0= 67:EINVAL" "bad VALUE ' 67'"
	bad_rule prctl,arg0=0x:EINVAL "bad VALUE '0x'"
	bad_rule prctl,arg0=0x0x43:EINVAL "bad VALUE '0x0x43'"
	bad_rule prctl,arg0=067:EINVAL "leading zero"
	bad_rule prctl,arg0=18446744073709551616:EINVAL "out of range"
	bad_rule prctl,arg0=1,arg0=2:EINVAL "arg0 given twice"
	bad_rule socketcall:EPERM "not a system call on this architecture"
}

@test "faultinject: bad usage is refused with 125" {
	run "$FAULT"
	[ "$status" -eq 125 ]
	[[ $output == *"missing COMMAND"* ]]
	run "$FAULT" -f prctl,arg0=67:EINVAL
	[ "$status" -eq 125 ]
	[[ $output == *"missing COMMAND"* ]]
	run "$FAULT" -f
	[ "$status" -eq 125 ]
	[[ $output == *"'-f' needs a RULE"* ]]
	run "$FAULT" -x true
	[ "$status" -eq 125 ]
	[[ $output == *"unknown option '-x'"* ]]
	run "$FAULT" --bogus true
	[ "$status" -eq 125 ]
	[[ $output == *"unknown option '--bogus'"* ]]
	run "$FAULT" -f prctl,arg0=67:EINVAL -f prctl,arg0=67:EPERM -- true
	[ "$status" -eq 125 ]
	[[ $output == *"conflicts with an earlier rule"* ]]
}

@test "faultinject: options after COMMAND belong to COMMAND" {
	run "$FAULT" -f prctl,arg0=67:EINVAL "$PROBE" prctl 67 1 -f
	# sysprobe, not faultinject, rejects the extra argument.
	[ "$status" -eq 2 ]
	[[ $output == *sysprobe* ]]
}
