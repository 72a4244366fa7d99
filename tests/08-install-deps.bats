#!/usr/bin/env bats
# tests/install-deps, the first step of make check and .ci/run.  A fake
# apt-get records what it is asked and a fake requirement stands for a
# missing package, so no real package is installed or removed.
# ci: -

load helpers

DEPS=$TOP/tests/install-deps
FAKE_REQ='ksmenable-fake-pkg | cmd:ksmenable-fake-cmd | this test'

setup() {
	# Readable by the user nobody too, for the test without root.
	FAKE=$(mktemp -d /tmp/ksmenable-deps.XXXXXX)
	chmod 755 "$FAKE"
	mkdir "$FAKE/bin"
	APT_LOG=$FAKE/apt.log
	# The fake apt-get: logs its arguments and DEBIAN_FRONTEND; "install"
	# puts the fake command on PATH unless FAKE_APT_INSTALLS=0; FAKE_APT_FAIL
	# names a subcommand that fails.
	cat >"$FAKE/apt-get" <<EOF
#!/bin/sh
echo "\$DEBIAN_FRONTEND \$*" >>"$APT_LOG"
[ "\$1" = "\${FAKE_APT_FAIL:-}" ] && exit 100
if [ "\$1" = install ] && [ "\${FAKE_APT_INSTALLS:-1}" = 1 ]; then
	printf '#!/bin/sh\n' >"$FAKE/bin/ksmenable-fake-cmd"
	chmod 755 "$FAKE/bin/ksmenable-fake-cmd"
fi
exit 0
EOF
	chmod 755 "$FAKE/apt-get"
	export KSMENABLE_DEPS_TEST_APT_GET=$FAKE/apt-get
	export PATH=$FAKE/bin:$PATH
}

teardown() { rm -rf "$FAKE"; }

# Fast, too, as make check's first step (about 0.7 s here): a time is not
# asserted, since a loaded machine makes any bound a race; it runs no
# package manager, which is what would make it slow.
@test "install-deps: silent and installing nothing when everything is there" {
	run "$DEPS"
	[ "$status" = 0 ]
	[ -z "$output" ]
	[ ! -e "$APT_LOG" ]
}

@test "install-deps: as root, a missing package: apt-get update, then install of that package only" {
	requires root
	KSMENABLE_DEPS_TEST_EXTRA=$FAKE_REQ run "$DEPS"
	echo "$output"
	[ "$status" = 0 ]
	[[ "$output" == *"command ksmenable-fake-cmd (Debian package ksmenable-fake-pkg)"* ]]
	[[ "$output" == *"installing ksmenable-fake-pkg"* ]]
	run cat "$APT_LOG"
	[ "${lines[0]}" = "noninteractive update -q" ]
	[ "${lines[1]}" = "noninteractive install -y -q --no-install-recommends ksmenable-fake-pkg" ]
	[ "${#lines[@]}" = 2 ]
	# and once it is there, nothing more
	rm "$APT_LOG"
	KSMENABLE_DEPS_TEST_EXTRA=$FAKE_REQ run "$DEPS"
	[ "$status" = 0 ] && [ -z "$output" ] && [ ! -e "$APT_LOG" ]
}

@test "install-deps: a package that installs but does not provide what is needed is an error" {
	requires root
	FAKE_APT_INSTALLS=0 KSMENABLE_DEPS_TEST_EXTRA=$FAKE_REQ run "$DEPS"
	echo "$output"
	[ "$status" = 1 ]
	[[ "$output" == *"still missing after apt-get install:"*"command ksmenable-fake-cmd"* ]]
}

@test "install-deps: a failing apt-get update stops before install, with a message" {
	requires root
	FAKE_APT_FAIL=update KSMENABLE_DEPS_TEST_EXTRA=$FAKE_REQ run "$DEPS"
	echo "$output"
	[ "$status" = 1 ]
	[[ "$output" == *"apt-get update failed"* ]]
	[ "$(cat "$APT_LOG")" = "noninteractive update -q" ]
	FAKE_APT_FAIL=install KSMENABLE_DEPS_TEST_EXTRA=$FAKE_REQ run "$DEPS"
	[ "$status" = 1 ]
	[[ "$output" == *"apt-get install ksmenable-fake-pkg failed"* ]]
}

@test "install-deps: not root: prints the apt-get command for exactly what is missing, installs nothing" {
	requires root
	# The tree may be private (a clone in root's home, mode 0700): nobody runs
	# a copy of the script from the fixture's directory, which it can reach.
	cp "$DEPS" "$FAKE/install-deps"
	chmod 755 "$FAKE/install-deps"
	run as_nobody env KSMENABLE_DEPS_TEST_EXTRA="$FAKE_REQ" "$FAKE/install-deps"
	echo "$output"
	[ "$status" = 1 ]
	[[ "$output" == *"command ksmenable-fake-cmd (Debian package ksmenable-fake-pkg)"* ]]
	[[ "$output" == *"apt-get update && apt-get install -y --no-install-recommends ksmenable-fake-pkg"* ]]
	[ ! -e "$APT_LOG" ]
}

@test "install-deps: not apt-based: names what is missing and the Debian packages" {
	KSMENABLE_DEPS_TEST_APT_GET=none KSMENABLE_DEPS_TEST_EXTRA=$FAKE_REQ run "$DEPS"
	echo "$output"
	[ "$status" = 1 ]
	[[ "$output" == *"command ksmenable-fake-cmd"* ]]
	[[ "$output" == *"not an apt-based system"*"ksmenable-fake-pkg"* ]]
}

@test "install-deps --check: says what is missing and never installs" {
	KSMENABLE_DEPS_TEST_EXTRA=$FAKE_REQ run "$DEPS" --check
	[ "$status" = 1 ]
	[[ "$output" == *"command ksmenable-fake-cmd"* ]]
	[ ! -e "$APT_LOG" ]
	run "$DEPS" --check
	[ "$status" = 0 ] && [ -z "$output" ]
	run "$DEPS" --bogus
	[ "$status" = 2 ]
	[[ "$output" == *"usage:"* ]]
}

@test "install-deps: a missing header, library or Python module counts as missing" {
	KSMENABLE_DEPS_TEST_EXTRA='ksmenable-fake-dev | cc:ksmenable-no-such.h | this test
ksmenable-fake-lib | cc:stdio.h:ksmenable-no-such-lib | this test
ksmenable-fake-py | py:ksmenable_no_such_module | this test
ksmenable-fake-file | file:/nonexistent/ksmenable | this test' run "$DEPS" --check
	echo "$output"
	[ "$status" = 1 ]
	[[ "$output" == *"C header <ksmenable-no-such.h> (with "*"(Debian package ksmenable-fake-dev)"* ]]
	[[ "$output" == *"-lksmenable-no-such-lib"*"(Debian package ksmenable-fake-lib)"* ]]
	[[ "$output" == *"modules ksmenable_no_such_module (Debian package ksmenable-fake-py)"* ]]
	[[ "$output" == *"file /nonexistent/ksmenable (Debian package ksmenable-fake-file)"* ]]
}

@test "install-deps: a bats older than the suite needs is reported, not reinstalled" {
	printf '#!/bin/sh\necho "Bats 1.2.1"\n' >"$FAKE/bin/bats"
	chmod 755 "$FAKE/bin/bats"
	run "$DEPS"
	echo "$output"
	[ "$status" = 1 ]
	[[ "$output" == *"bats 1.2.1 is older than 1.5.0"*"install.sh"* ]]
	[ ! -e "$APT_LOG" ]
}

@test "install-deps: the tables have every package the suite, the guest and .ci/run need, and .ci/run uses them" {
	run "$DEPS" --list
	[ "$status" = 0 ]
	local p
	for p in bats procps time jq libseccomp-dev musl-tools mandoc libcap2-bin util-linux bsdutils gcc \
		libc6-dev clang libclang-rt-dev llvm make python3 binutils zsh bash-completion prometheus; do
		grep -q "^$p " <<<"$output" || { echo "not in the table: $p"; return 1; }
	done
	grep -q 'tests/install-deps && tests/install-deps --guest' "$TOP/.ci/run"
	! grep -q 'apt-get' "$TOP/.ci/run"
	# What the guest of make check-guest needs: .ci/run installs it, make check does not.
	run -0 "$DEPS" --guest --list
	for p in qemu-system-x86 e2fsprogs xz-utils debootstrap git; do
		grep -q "^$p " <<<"$output" || { echo "not in the guest's table: $p"; return 1; }
	done
	run -0 "$DEPS" --list
	! grep -q '^qemu-system-x86 ' <<<"$output"
}
