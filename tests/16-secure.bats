#!/usr/bin/env bats
# Secure execution (AT_SECURE: setuid, setgid, file capabilities): the
# environment is not trusted, so the library does nothing.  And without
# root, the prctl still works: it needs no privilege.
# ci: lock asan guest

load helpers

setup() {
	requires root prctl
	command -v setcap >/dev/null || skip_or_fail "no setcap (libcap2-bin)"
	# Where nobody can run them, whatever the tree's modes.
	stage_for_nobody linked_api
	cp "$NB_PROGS/linked_api" "$NB_DIR/plain"
	cp "$NB_PROGS/linked_api" "$NB_DIR/capable"
	setcap cap_net_bind_service+ep "$NB_DIR/capable"
	# On a nosuid mount the capability would do nothing: no secure execution to test.
	! findmnt -n -o OPTIONS -T "$NB_DIR" | grep -qw nosuid ||
		{ echo "$NB_DIR is on a nosuid mount: file capabilities do nothing there" >&2; return 1; }
}

teardown() { unstage; }

@test "not root: KSM_ENABLE_MODE=prctl takes effect in a program that links the library" {
	run --separate-stderr as_nobody env KSM_ENABLE_MODE=prctl "$NB_DIR/plain" </dev/null
	[ "$status" = 0 ]
	[[ "${lines[0]}" == "merge_any "*" 1" ]]
}

@test "AT_SECURE (file capabilities): the environment is ignored and nothing is enabled" {
	run --separate-stderr as_nobody env KSM_ENABLE_MODE=prctl KSM_ENABLE_LOG=debug "$NB_DIR/capable" </dev/null
	[ "$status" = 0 ]
	[[ "${lines[0]}" == "merge_any "*" 0" ]]
	# KSM_ENABLE_LOG=debug was ignored too (the one line is the program's
	# own deliberate API misuse)
	[[ "$stderr" != *"prctl mode"* ]]
	[ "$(echo "$stderr" | grep -c .)" = 1 ]
}

@test "AT_SECURE: a bad setting is not even read" {
	run --separate-stderr as_nobody env KSM_ENABLE_MODE=bogus "$NB_DIR/capable" </dev/null
	[ "$status" = 0 ]
	[[ "$stderr" != *KSM_ENABLE_MODE* ]]
}
