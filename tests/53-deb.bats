#!/usr/bin/env bats
# make deb (packaging/deb/build-deb): the packages, their files and
# lintian's verdict; then installed with dpkg into a minimal Debian 12
# root, where the default policy parses, the demo runs with the installed
# ksm-run and library, and dpkg --purge leaves nothing behind.
#
# The root: debootstrap --variant=minbase bookworm from this machine's apt
# mirror (tests/helpers/debian-root.bash, as tests/fresh-root makes its
# own), made once for the file in setup_file while make deb builds (about
# 30 s for both), under /var/tmp (a /tmp may be noexec).  Commands run in
# it by chroot, in a mount namespace of their own with the host's /proc,
# /sys and /dev bound: the mounts end with the namespace, none is ever
# under the root on the host.  Its /run is its own directory, so that what
# ksm-run leaves there stays from one command to the next.  The demo sets
# the host's KSM knobs: make check holds the suite's lock around it all.
# ci: lock

load helpers
load launcher_helpers

LAUNCHER_REQUIRES="root ksm jq cmd:dpkg-gencontrol cmd:lintian cmd:debootstrap"

# The packages' names and version, as the Makefile reads them from the header.
VERSION=$(sed -n 's/^#define KSMENABLE_VERSION "\(.*\)"/\1/p' "$TOP/include/ksmenable.h")
LIBPKG=libksmenable${VERSION%%.*}

# The tree's files, build outputs included (git status --ignored): make
# deb may add none.
tree_files() { git -C "$TOP" status --porcelain --ignored --untracked-files=all 2>/dev/null; }

# make_root DIR: a minimal bookworm in DIR, debootstrap's mounts private to
# a namespace of its own.
make_root() {
	# shellcheck disable=SC2034 # prog and suite: for debian-root.bash
	local prog=53-deb suite=bookworm mirror
	# shellcheck source=tests/helpers/debian-root.bash
	. "$TOP/tests/helpers/debian-root.bash"
	mirror=${KSMENABLE_FRESH_MIRROR:-$(apt_mirror)}
	[ -n "$mirror" ] || { echo "no 'deb' source of $suite in this machine's apt sources" >&2; return 1; }
	unshare --mount --propagation private debootstrap --variant=minbase "$suite" "$1" "$mirror"
}

# Under a sanitizer each test says it does not apply (a skip in setup_file
# would fail the file's teardown there): nothing to build for them.
SANITIZED_WHY="the packages are built without sanitizers, the same in both runs"
setup_extra() { not_sanitized "$SANITIZED_WHY"; }

setup_file_extra() {
	local t=$SECONDS
	[ -z "$SANITIZER_RUNTIME" ] || return 0
	tree_files >"$BATS_FILE_TMPDIR/tree.before"
	if [ "$(id -u)" = 0 ] && command -v debootstrap >/dev/null; then
		ROOT_DIR=$(mktemp -d /var/tmp/ksmenable-deb.XXXXXX)
		make_root "$ROOT_DIR/root" >"$ROOT_DIR/debootstrap.log" 2>&1 &
	fi
	make -C "$TOP" -s deb O="$BATS_FILE_TMPDIR/build" >"$BATS_FILE_TMPDIR/deb.log" 2>&1
	echo $? >"$BATS_FILE_TMPDIR/deb.status"
	if [ -n "${ROOT_DIR:-}" ]; then
		wait $!
		echo $? >"$ROOT_DIR/debootstrap.status"
	fi
	echo "setup_file: make deb and the root took $((SECONDS - t)) s" >"$BATS_FILE_TMPDIR/setup.time"
	export ROOT_DIR
}

teardown_file() {
	local rc=0
	clear_launcher_state || rc=1
	restore_knobs || rc=1
	if [ -n "${ROOT_DIR:-}" ] && [ -d "$ROOT_DIR" ]; then
		# Never across a live mount.
		if findmnt -rn -o TARGET | grep -q "^$ROOT_DIR/"; then
			echo "left mounted under $ROOT_DIR: the root is kept" >&2
			rc=1
		else
			rm -rf --one-file-system "$ROOT_DIR"
		fi
	fi
	return $rc
}

DEBS=$BATS_FILE_TMPDIR/build/deb
ROOT=${ROOT_DIR:-/nonexistent}/root

needs_debs() {
	[ "$(cat "$BATS_FILE_TMPDIR/deb.status")" = 0 ] || { cat "$BATS_FILE_TMPDIR/deb.log"; return 1; }
}

needs_root_made() {
	needs_debs
	[ -n "${ROOT_DIR:-}" ] || { echo "no root: setup_file made none" >&2; return 1; }
	[ "$(cat "$ROOT_DIR/debootstrap.status")" = 0 ] || { tail -n 30 "$ROOT_DIR/debootstrap.log"; return 1; }
}

# in_root COMMAND...: COMMAND in the root, as root, with a clean environment.
in_root() {
	# shellcheck disable=SC2016 # for the namespace's shell
	unshare --mount --propagation private sh -ec '
		r=$1
		shift
		mount --rbind /proc "$r/proc"
		mount --rbind /sys "$r/sys"
		mount --rbind /dev "$r/dev"
		exec chroot "$r" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LC_ALL=C.UTF-8 "$@"
	' in_root "$ROOT" "$@"
}

# Everything in the root but the mounts, /tmp and dpkg's own records, as
# TYPE MODE PATH lines.
root_files() {
	(cd "$ROOT" && find . -xdev \( -path ./proc -o -path ./sys -o -path ./dev -o -path ./tmp \
		-o -path ./var/lib/dpkg -o -path ./var/log \) -prune -o -printf '%y %m %P\n') | LC_ALL=C sort
}

# deb_files PACKAGE: the paths in its .deb, one a line, without the leading ./
deb_files() { dpkg-deb -c "$DEBS/$1_${VERSION}_$(dpkg --print-architecture).deb" | awk '{ sub(/^\.\//, "", $6); print $1, $6 }'; }

@test "make deb: the library, its -dev parts and ksm-run, at the header's version, in \$(O)/deb; lintian finds no error" {
	cat "$BATS_FILE_TMPDIR/setup.time"
	needs_debs
	local arch ma
	arch=$(dpkg --print-architecture)
	ma=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
	[ "$(cd "$DEBS" && echo *.deb)" = "ksm-run_${VERSION}_$arch.deb libksmenable-dev_${VERSION}_$arch.deb ${LIBPKG}_${VERSION}_$arch.deb" ]
	# Nothing written into the source tree.
	run -0 diff "$BATS_FILE_TMPDIR/tree.before" <(tree_files)
	# The soname layout: the library alone; the header, the link and the .pc in -dev.
	run -0 deb_files "$LIBPKG"
	grep -qx -- "-rw-r--r-- usr/lib/$ma/libksmenable.so.${VERSION%%.*}" <<<"$output"
	[ "$(grep -c '^-' <<<"$output")" = 3 ]    # and the copyright and changelog
	run -0 deb_files libksmenable-dev
	grep -qx -- "-rw-r--r-- usr/include/ksmenable.h" <<<"$output"
	grep -qx -- "lrwxrwxrwx usr/lib/$ma/libksmenable.so" <<<"$output"
	grep -qx -- "-rw-r--r-- usr/lib/$ma/pkgconfig/ksmenable.pc" <<<"$output"
	run -0 deb_files ksm-run
	local f
	for f in usr/bin/ksm-run usr/share/man/man1/ksm-run.1.gz usr/share/man/man7/libksmenable.7.gz \
		usr/share/man/man5/ksmenable.conf.5.gz usr/share/man/man8/ksm-run-daemon.8.gz \
		usr/share/bash-completion/completions/ksm-run usr/share/zsh/vendor-completions/_ksm-run \
		lib/systemd/system/ksmenable.service etc/ksmenable/ksmenable.conf; do
		grep -q " $f\$" <<<"$output" || { echo "ksm-run lacks $f"; return 1; }
	done
	# The policy is a conffile; no maintainer script enables or starts the unit.
	[ "$(dpkg-deb -I "$DEBS/ksm-run_${VERSION}_$arch.deb" conffiles)" = /etc/ksmenable/ksmenable.conf ]
	dpkg-deb -e "$DEBS/ksm-run_${VERSION}_$arch.deb" "$BATS_TEST_TMPDIR/ctl"
	run ! grep -E '^[^#]*(deb-systemd-helper +enable|systemctl .*(enable|start)|deb-systemd-invoke +(start|restart))' \
		"$BATS_TEST_TMPDIR/ctl/"*inst "$BATS_TEST_TMPDIR/ctl/"*rm
	# ksm-run preloads the library of its own version.
	grep -qx "Depends: $LIBPKG (= $VERSION), libc6 (>= [0-9.]*)" "$BATS_TEST_TMPDIR/ctl/control"
	# lintian: its whole output shown, no error in it.
	run lintian --pedantic -I "$DEBS"/*.deb
	echo "$output"
	run ! grep -q '^E: ' <<<"$output"
}

@test "installed into a minimal Debian root: the policy parses, the demo runs with /usr/bin/ksm-run and the packaged library" {
	needs_root_made
	local ma before t=$SECONDS
	ma=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
	root_files >"$BATS_FILE_TMPDIR/root.before"
	knobs_snapshot >"$BATS_FILE_TMPDIR/knobs.before"
	mkdir -p "$ROOT/tmp/debs"
	cp "$DEBS"/*.deb "$ROOT/tmp/debs/"
	# The names in the root: a glob would be expanded here, on the host.
	run in_root dpkg -i /tmp/debs/{ksm-run,libksmenable-dev,"$LIBPKG"}_"${VERSION}_$(dpkg --print-architecture).deb"
	echo "$output"
	[ "$status" = 0 ]
	# The unit is installed, not enabled; the policy is the package's, and valid.
	[ -f "$ROOT/lib/systemd/system/ksmenable.service" ]
	[ -z "$(find "$ROOT/etc/systemd" -name ksmenable.service 2>/dev/null)" ]
	run in_root ksm-run --check-config
	echo "$output"
	[ "$status" = 0 ]
	[ "$output" = "/etc/ksmenable/ksmenable.conf: the policy is valid: 0 rules in 1 file" ]
	# Its examples, with their "# " taken off, parse too.
	# shellcheck disable=SC2016 # for the root's shell
	run in_root sh -ec 'mkdir -m 755 /tmp/examples
		sed -n "/^# Examples/,\$p" /etc/ksmenable/ksmenable.conf | grep -E "^# (\[rule |[a-z-]+ = )" |
			sed "s/^# //" >/tmp/examples/ksmenable.conf
		ksm-run --check-config=/tmp/examples/ksmenable.conf'
	echo "$output"
	[ "$status" = 0 ]
	[ "${lines[-1]}" = "/tmp/examples/ksmenable.conf: the policy is valid: 2 rules in 1 file" ]
	# ksm-run preloads the packaged library by its soname.
	[ "$(in_root ksm-run -q --no-tune -- sh -c 'echo "$LD_PRELOAD"')" = "/usr/lib/$ma/libksmenable.so.${VERSION%%.*}" ]
	# The demo, as make demo runs it, with the installed files.
	cp "$PROGS/demo_workers" "$ROOT/tmp/demo_workers"
	settle_ksm
	before=$(knobs_snapshot)
	run --separate-stderr in_root /usr/bin/ksm-run --json -- /tmp/demo_workers -w 3 -m 8
	echo "$output"
	echo "$stderr"
	[ "$status" = 0 ]
	[[ "$output" == *"their data is intact"* ]]
	echo "$stderr" >"$BATS_TEST_TMPDIR/report.json"
	demo_merged "$BATS_TEST_TMPDIR/report.json"
	[ "$(knobs_snapshot)" = "$before" ]
	# The daemon, as the unit starts it, reads the package's policy.
	# shellcheck disable=SC2016 # for the root's shell
	run in_root sh -c '/usr/bin/ksm-run --daemon 2>/tmp/daemon.log & pid=$!
		for i in $(seq 100); do grep -q "policy /etc/ksmenable/ksmenable.conf: 0 rules" /tmp/daemon.log && break; sleep 0.1; done
		kill -TERM $pid; wait $pid; st=$?; cat /tmp/daemon.log; exit $st'
	echo "$output"
	[ "$status" = 0 ]
	[[ "$output" == *"policy /etc/ksmenable/ksmenable.conf: 0 rules"* ]]
	[ "$(knobs_snapshot)" = "$before" ]
	echo "install, policy, demo and daemon: $((SECONDS - t)) s"
}

@test "dpkg --purge leaves nothing behind: no file, no state under /run, the knobs as before" {
	needs_root_made
	[ -x "$ROOT/usr/bin/ksm-run" ] || { echo "not installed (the test before failed)"; return 1; }
	# The tuning's scan cost, which only the purge removes: the demo may have
	# measured too little to keep one.
	if [ -e "$ROOT/var/lib/ksm-run/scan-cost" ]; then
		echo "the demo kept a scan cost"
	else
		echo "the demo kept no scan cost: one made as ksm-run makes it"
		mkdir -p -m 755 "$ROOT/var/lib/ksm-run"
		echo 'ns_per_page 1' >"$ROOT/var/lib/ksm-run/scan-cost"
	fi
	# The state the runs left, and the link an operator's `systemctl enable
	# ksmenable` makes (no systemd in the root: made as it makes it).
	[ -d "$ROOT/run/ksm-run" ]
	ln -s /lib/systemd/system/ksmenable.service "$ROOT/etc/systemd/system/multi-user.target.wants/ksmenable.service"
	run in_root dpkg --purge ksm-run libksmenable-dev "$LIBPKG"
	echo "$output"
	[ "$status" = 0 ]
	run -0 in_root dpkg -l
	run ! grep -E "^[a-z]{2} +(ksm-run|libksmenable)" <<<"$output"
	run -0 diff "$BATS_FILE_TMPDIR/root.before" <(root_files)
	[ ! -e "$ROOT/run/ksm-run" ]
	[ ! -e "$ROOT/var/lib/ksm-run" ]
	run -0 diff "$BATS_FILE_TMPDIR/knobs.before" <(knobs_snapshot)
}
