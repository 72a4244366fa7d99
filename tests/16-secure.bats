#!/usr/bin/env bats
# Secure execution (AT_SECURE: setuid, setgid, file capabilities): the
# environment is not trusted, so the library does nothing.  And without
# root, the prctl still works: it needs no privilege.

load helpers

setup() {
	requires root prctl
	command -v setcap >/dev/null || skip_or_fail "no setcap (libcap2-bin)"
	# A directory that the user nobody can enter.
	SECDIR=$(mktemp -d /tmp/ksmenable-secure.XXXXXX)
	chmod 755 "$SECDIR"
	cp "$PROGS/linked_api" "$SECDIR/plain"
	cp "$PROGS/linked_api" "$SECDIR/capable"
	setcap cap_net_bind_service+ep "$SECDIR/capable"
}

teardown() { rm -rf "$SECDIR"; }

as_nobody() { setpriv --reuid=nobody --regid=nogroup --clear-groups "$@"; }

@test "not root: KSM_ENABLE_MODE=prctl takes effect in a program that links the library" {
	run --separate-stderr as_nobody env KSM_ENABLE_MODE=prctl "$SECDIR/plain" </dev/null
	[ "$status" = 0 ]
	[[ "${lines[0]}" == "merge_any "*" 1" ]]
}

@test "AT_SECURE (file capabilities): the environment is ignored and nothing is enabled" {
	run --separate-stderr as_nobody env KSM_ENABLE_MODE=prctl KSM_ENABLE_LOG=debug "$SECDIR/capable" </dev/null
	[ "$status" = 0 ]
	[[ "${lines[0]}" == "merge_any "*" 0" ]]
	# KSM_ENABLE_LOG=debug was ignored too (the one line is the program's
	# own deliberate API misuse)
	[[ "$stderr" != *"prctl mode"* ]]
	[ "$(echo "$stderr" | grep -c .)" = 1 ]
}

@test "AT_SECURE: a bad setting is not even read" {
	run --separate-stderr as_nobody env KSM_ENABLE_MODE=bogus "$SECDIR/capable" </dev/null
	[ "$status" = 0 ]
	[[ "$stderr" != *KSM_ENABLE_MODE* ]]
}
