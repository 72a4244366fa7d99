#!/usr/bin/env bats
# The build: install and uninstall, and the library's own symbols.
# ci: asan

load helpers

@test "make install puts library, header and man pages under DESTDIR, and uninstall removes them" {
	d=$BATS_TEST_TMPDIR/stage
	# A build directory of the test's own: the suite's build stays as it is.
	run make -C "$TOP" -s install O="$BATS_TEST_TMPDIR/build" DESTDIR="$d" PREFIX=/usr
	[ "$status" = 0 ]
	[ -x "$d/usr/lib/libksmenable.so" ]
	[ -f "$d/usr/include/ksmenable.h" ]
	[ -f "$d/usr/share/man/man7/libksmenable.7" ]
	# the versioned soname, the development link, the pkg-config file
	[ -f "$d/usr/lib/libksmenable.so.0" ] && [ ! -L "$d/usr/lib/libksmenable.so.0" ]
	[ "$(readlink "$d/usr/lib/libksmenable.so")" = libksmenable.so.0 ]
	readelf -d "$d/usr/lib/libksmenable.so.0" | grep -q 'SONAME.*\[libksmenable.so.0\]'
	grep -qx 'libdir=/usr/lib' "$d/usr/lib/pkgconfig/ksmenable.pc"
	# the installed copy works
	run env LD_PRELOAD="$d/usr/lib/libksmenable.so" "$PROGS/dupmem" getmerge
	[ "$status" = 0 ]
	# and the installed ksm-run finds the installed library (../lib), by its soname
	[ -x "$d/usr/bin/ksm-run" ] && [ -f "$d/usr/share/man/man1/ksm-run.1" ]
	[ -f "$d/usr/share/man/man5/ksmenable.conf.5" ] && [ -f "$d/usr/share/man/man8/ksm-run-daemon.8" ]
	run --separate-stderr "$d/usr/bin/ksm-run" --no-tune -q --mode=madvise -- sh -c 'grep -c libksmenable /proc/self/maps'
	[ "$status" = 0 ]
	[ "$output" -ge 1 ]
	grep -q "$d/usr/lib/libksmenable.so" <(env -i "$d/usr/bin/ksm-run" -q --no-tune -- sh -c 'echo "$LD_PRELOAD"')
	[ "$(env -i "$d/usr/bin/ksm-run" -q --no-tune -- sh -c 'echo "$LD_PRELOAD"')" = "$d/usr/lib/libksmenable.so.0" ]
	run make -C "$TOP" -s uninstall O="$BATS_TEST_TMPDIR/build" DESTDIR="$d" PREFIX=/usr
	[ "$status" = 0 ]
	[ -z "$(find "$d" -type f)" ]
	[ -z "$(find "$d" ! -type d)" ]
}

@test "a ksm-run built before for another PREFIX is rebuilt to look in the new one; pkg-config finds the library" {
	local b=$BATS_TEST_TMPDIR/build p=$BATS_TEST_TMPDIR/prefix solo=$BATS_TEST_TMPDIR/solo
	run -0 make -C "$TOP" -s O="$b"
	run -0 make -C "$TOP" -s install O="$b" PREFIX="$p"
	# Alone, with no ../lib: only the libdir compiled in can lead it there.
	mkdir -p "$solo"
	cp "$p/bin/ksm-run" "$solo/ksm-run"
	[ "$(env -i "$solo/ksm-run" -q --no-tune -- sh -c 'echo "$LD_PRELOAD"')" = "$p/lib/libksmenable.so.0" ]
	# A program built with pkg-config's flags links and runs.
	printf '#include <ksmenable.h>\n#include <stdio.h>\nint main(void) { puts(ksmenable_version()); return 0; }\n' \
		>"$BATS_TEST_TMPDIR/v.c"
	local version
	version=$(sed -n 's/^#define KSMENABLE_VERSION "\(.*\)"/\1/p' "$TOP/include/ksmenable.h")
	[ "$(PKG_CONFIG_PATH=$p/lib/pkgconfig pkg-config --modversion ksmenable)" = "$version" ]
	# shellcheck disable=SC2046
	cc -o "$BATS_TEST_TMPDIR/v" "$BATS_TEST_TMPDIR/v.c" \
		$(PKG_CONFIG_PATH=$p/lib/pkgconfig pkg-config --cflags --libs ksmenable) -Wl,-rpath,"$p/lib"
	[ "$("$BATS_TEST_TMPDIR/v")" = "$version" ]
}

@test "the header compiles on its own, as C and as C++" {
	echo '#include <ksmenable.h>
int main(void) { struct ksmenable_stat st; return ksmenable_read_stat(&st) < -1; }' >"$BATS_TEST_TMPDIR/t.c"
	cc -Wall -Wextra -Werror -I"$TOP/include" -c -o /dev/null "$BATS_TEST_TMPDIR/t.c"
	if command -v c++ >/dev/null; then
		c++ -Wall -Wextra -Werror -I"$TOP/include" -x c++ -c -o /dev/null "$BATS_TEST_TMPDIR/t.c"
	fi
}

@test "no circle of includes or calls between the files of the library and ksm-run" {
	run -0 "$TOP/tests/helpers/depcheck" "$BUILD"
	# The checker finds a circle when there is one.
	local t=$BATS_TEST_TMPDIR/circle
	mkdir -p "$t/src/launcher" "$t/build/launcher"
	printf '#include "b.h"\nint b(void);\nint a(void) { return b(); }\n' >"$t/src/launcher/a.c"
	printf '#include "a.h"\nint a(void);\nint b(void) { return a(); }\n' >"$t/src/launcher/b.c"
	: >"$t/src/launcher/a.h"
	: >"$t/src/launcher/b.h"
	cc -c -o "$t/build/launcher/a.o" "$t/src/launcher/a.c" -I"$t/src/launcher"
	cc -c -o "$t/build/launcher/b.o" "$t/src/launcher/b.c" -I"$t/src/launcher"
	run -1 "$TOP/tests/helpers/depcheck" "$t/build" "$t/src"
	[[ $output == *"a circle of includes: launcher/a <-> launcher/b"* ]]
	[[ $output == *"a circle of calls: launcher/a <-> launcher/b"* ]]
}

@test "depcheck: between rooms, no circle, no arrow from machinery up to a command room, the engine through its entry" {
	# Each of these files alone is in no circle of files.
	local t=$BATS_TEST_TMPDIR/rooms
	mkdir -p "$t/build" "$t/src/launcher/"{x,y,run,host,policy,ptrace}
	src() { printf '%s\n' "${@:2}" >"$t/src/launcher/$1"; }
	src x/a.c '#include "y/b.h"'
	src y/b.h ''
	src y/c.c '#include "x/d.h"'
	src x/d.h ''
	src run/r.h ''
	src host/h.c '#include "run/r.h"'
	src ptrace/inject.h ''
	src ptrace/target.h ''
	src policy/p.c '#include "ptrace/target.h"' '#include "ptrace/inject.h"'
	run -1 "$TOP/tests/helpers/depcheck" "$t/build" "$t/src"
	[[ $output == *"a circle of includes between rooms: launcher/x <-> launcher/y"* ]]
	[[ $output == *"includes: the machinery of launcher/host reaches up into the command room launcher/run (launcher/host/h)"* ]]
	[[ $output == *"includes: launcher/policy/p reaches launcher/ptrace/inject, inside launcher/ptrace, whose entry is launcher/ptrace/target and launcher/ptrace/outcome"* ]]
	# Through the entry alone, and with the arrows downward, all is well.
	src y/c.c ''
	src host/h.c ''
	src policy/p.c '#include "ptrace/target.h"'
	run -0 "$TOP/tests/helpers/depcheck" "$t/build" "$t/src"
}

@test "no file of code is over 600 lines, as HACKING.md says" {
	local f long=
	for f in $(cd "$TOP" && git ls-files '*.c' '*.h'); do
		[ "$(wc -l <"$TOP/$f")" -le 600 ] || long+=" $f"
	done
	[ -z "$long" ] || { echo "too long:$long"; false; }
}

# layout_check HACKING TOP: what is wrong with the map in HACKING's
# "## Layout" against the tree at TOP, one line each; nothing when it is
# right.  Folders are the lines "- `DIR/`: ...", their files the items
# "  - `NAME`: ..." under them.  Every file that git lists under preload,
# launcher and include is named once, under its folder (a .c stands for
# the .h beside it), and every item names a file that is there.
layout_check() {
	local doc=$1 top=$2 named want f
	named=$(awk '
		/^## / { inside = $0 == "## Layout"; next }
		!inside { next }
		match($0, /^- `[^`]+\/`:/) { dir = substr($0, 4, RLENGTH - 6); next }
		match($0, /^  - `[^`]+`:/) { print dir "/" substr($0, 6, RLENGTH - 7) }
	' "$doc")
	want=$(git -C "$top" ls-files preload launcher include | awk '
		{ file[NR] = $0; have[$0] = 1 }
		END {
			for (i = 1; i <= NR; i++)
				if (file[i] !~ /\.h$/ || !((substr(file[i], 1, length(file[i]) - 1) "c") in have))
					print file[i]
		}')
	[ -n "$want" ] || echo "git lists no file under preload, launcher and include in $top"
	comm -23 <(sort <<<"$want") <(sort -u <<<"$named") | sed "s/^/missing from HACKING.md's Layout: /"
	sort <<<"$named" | uniq -c | awk '$1 > 1 { print "named in " $1 " items of HACKING.md'\''s Layout: " $2 }'
	while read -r f; do
		[ -n "$f" ] || continue
		if [ ! -f "$top/$f" ]; then
			echo "in HACKING.md's Layout but not in the tree: $f"
		elif [[ $f == *.h && -f $top/${f%.h}.c ]]; then
			echo "in HACKING.md's Layout as a header: $f (name its .c)"
		fi
	done <<<"$named"
}

@test "HACKING.md's Layout names every file of preload/, include/ and launcher/ once, and only files that are there" {
	local wrong
	wrong=$(layout_check "$TOP/HACKING.md" "$TOP")
	[ -z "$wrong" ] || { echo "$wrong"; false; }
	# The check finds a file left out, one named twice, one that is not
	# there and a header named for its .c.
	awk '
		/^  - `glob\.c`:/ { next }
		{ print }
		/^  - `tune\.c`:/ {
			print "  - `ghost.c`: a file that is not there"
			print "  - `counters.c`: named a second time"
			print "  - `knobs.h`: the header of knobs.c"
		}
	' "$TOP/HACKING.md" >"$BATS_TEST_TMPDIR/HACKING.md"
	run -0 layout_check "$BATS_TEST_TMPDIR/HACKING.md" "$TOP"
	printf '%s\n' "$output"
	[[ $output == *"missing from HACKING.md's Layout: preload/core/glob.c"* ]]
	[[ $output == *"in HACKING.md's Layout but not in the tree: launcher/host/ghost.c"* ]]
	[[ $output == *"named in 2 items of HACKING.md's Layout: launcher/host/counters.c"* ]]
	[[ $output == *"in HACKING.md's Layout as a header: launcher/host/knobs.h (name its .c)"* ]]
	[ "${#lines[@]}" = 4 ]
}
