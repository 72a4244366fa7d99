#!/usr/bin/env bats
# Shell completion for ksm-run: launcher/completion/ksm-run.bash (bash) and
# launcher/completion/_ksm-run (zsh), against the ksm-run under test.
# ci: asan

load helpers

BASH_COMP=$TOP/launcher/completion/ksm-run.bash
ZSH_COMP_DIR=$TOP/launcher/completion
BASH_COMPLETION=/usr/share/bash-completion/bash_completion

setup() {
	# "ksm-run" on the command line is the ksm-run under test.
	mkdir -p "$BATS_TEST_TMPDIR/bin"
	ln -sf "$KSM_RUN" "$BATS_TEST_TMPDIR/bin/ksm-run"
	# a command name that nothing else on PATH starts with
	printf '#!/bin/sh\n' >"$BATS_TEST_TMPDIR/bin/ksmenable-probe-cmd"
	chmod 755 "$BATS_TEST_TMPDIR/bin/ksmenable-probe-cmd"
	export PATH=$BATS_TEST_TMPDIR/bin:$PATH
}

# answer N: the Nth answer in $output (answers end with a "==" line).
answer() { awk -v n="$1" 'BEGIN { b = 1 } /^==$/ { b++; next } b == n && NF' <<<"$output"; }

# bash_comp [--with-bash-completion] LINE...: in a new bash, what the
# completion offers for each LINE with the cursor at its end: the words of
# COMPREPLY sorted, "nospace" when it asked for no space after a unique
# match, "default" when it handed over to readline's filename completion,
# then "==".  COMP_WORDS are split as readline does (at blanks, and at the
# characters of COMP_WORDBREAKS, which form words of their own).
bash_comp() {
	local pre=:
	if [ "$1" = --with-bash-completion ]; then
		pre="source $BASH_COMPLETION"
		shift
	fi
	bash --norc --noprofile -c '
		'"$pre"'
		source "$0"
		compopt() {
			[[ $* == *"-o nospace"* ]] && flags+=" nospace"
			[[ $* == *"-o default"* ]] && flags+=" default"
			return 0
		}
		split_words() {
			local line=$1 cur="" kind="" c i
			COMP_WORDS=()
			for ((i = 0; i < ${#line}; i++)); do
				c=${line:i:1}
				if [[ $c == [[:space:]] ]]; then
					[[ -n $kind ]] && COMP_WORDS+=("$cur")
					cur="" kind=""
				elif [[ $COMP_WORDBREAKS == *"$c"* ]]; then
					[[ $kind == word ]] && { COMP_WORDS+=("$cur"); cur=""; }
					cur+=$c kind=break
				else
					[[ $kind == break ]] && { COMP_WORDS+=("$cur"); cur=""; }
					cur+=$c kind=word
				fi
			done
			COMP_WORDS+=("$cur")
			COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
		}
		for line in "${@:1}"; do
			flags=""
			COMP_LINE=$line COMP_POINT=${#line}
			split_words "$line"
			COMPREPLY=()
			_ksm_run
			[ ${#COMPREPLY[@]} -gt 0 ] && printf "%s\n" "${COMPREPLY[@]}" | sort -u
			for f in $flags; do echo "$f"; done | sort -u
			echo ==
		done
	' "$BASH_COMP" "$@"
}

@test "bash: an option prefix completes to the option, with = and no space when it takes a value" {
	run bash_comp 'ksm-run --mo'
	[ "$status" = 0 ]
	[ "$output" = $'--mode=\nnospace\n==' ]
	run bash_comp 'ksm-run --no-'
	[ "$output" = $'--no-inherit\n--no-preload\n--no-tune\n--no-wait\n==' ]
	run bash_comp 'ksm-run -q --jso'
	[ "$output" = $'--json\n==' ]
	# the hidden options for completion itself are not offered
	run bash_comp 'ksm-run --list'
	[ "$output" = == ]
}

@test "bash: every option of ksm-run --list-options is offered, and no other" {
	run bash_comp 'ksm-run --'
	[ "$status" = 0 ]
	diff <(answer 1 | grep -v -e nospace) \
		<({ ksm-run --list-options | grep -v '^--list-'; echo --; } | sort -u)
}

@test "bash: --mode=, --log=, --advisor= complete their values, also as a separate word" {
	run bash_comp 'ksm-run --mode=' 'ksm-run --mode=ma' 'ksm-run --mode ' 'ksm-run --log=' \
		'ksm-run --advisor=' 'ksm-run --smart-scan='
	[ "$status" = 0 ]
	[ "$output" = "$(printf '%s\n' auto madvise off prctl == madvise == auto madvise off prctl == \
		debug error info quiet warn == none scan-time == 0 1 ==)" ]
}

@test "bash and zsh: --fingerprint-format= completes its values, --fingerprint= files, --fingerprint-per-cgroup= directories, the words after --combine fingerprint files" {
	mkdir "$BATS_TEST_TMPDIR/plan" "$BATS_TEST_TMPDIR/plan/webdir"
	touch "$BATS_TEST_TMPDIR/plan/web.kfp"
	cd "$BATS_TEST_TMPDIR/plan"
	run bash_comp 'ksm-run --fingerprint-format=' 'ksm-run --estimate=1 --fingerprint=web.' \
		'ksm-run --estimate=1 --fingerprint-per-cgroup=we' 'ksm-run --combine web.' \
		'ksm-run --combine --matrix web.kfp web.'
	[ "$status" = 0 ]
	[ "$output" = "$(printf '%s\n' binary tsv == web.kfp == webdir == web.kfp == web.kfp ==)" ]
	command -v zsh >/dev/null || skip_or_fail "no zsh (install zsh; tests/install-deps does)"
	run zsh -f "$TOP/tests/helpers/zsh-complete.zsh" "$ZSH_COMP_DIR" 'ksm-run --combine web.' \
		'ksm-run --fingerprint-format=' 'ksm-run --estimate=1 --fingerprint=web.'
	echo "$output"
	[ "$status" = 0 ]
	[ "$(answer 1)" = web.kfp ]
	[ "$(answer 2)" = "$(printf '%s\n' binary tsv)" ]
	[ "$(answer 3)" = web.kfp ]
}

@test "bash: --set completes the writable knobs in /sys/kernel/mm/ksm as NAME=, then known values" {
	[ -d "$KSM" ] || skip_or_fail "no $KSM (kernel without KSM)"
	run bash_comp 'ksm-run --set '
	[ "$status" = 0 ]
	# the knobs: the files with their owner's write bit, as ksm-run decides
	diff <(answer 1) <({ find "$KSM" -maxdepth 1 -type f -perm -u=w -printf '%f=\n' | sort; echo nospace; })
	run bash_comp 'ksm-run --set pages_to' 'ksm-run --set=sleep' 'ksm-run --set advisor_mode=' \
		'ksm-run --set=advisor_mode=s' 'ksm-run --set run='
	[ "$output" = "$(printf '%s\n' pages_to_scan= nospace == sleep_millisecs= nospace == \
		none scan-time == scan-time == 0 1 ==)" ]
}

@test "bash: after -- (or the first non-option) the command and then its arguments complete" {
	run bash_comp 'ksm-run -- ksmenable-pro' 'ksm-run --mode=prctl ksmenable-pro' \
		'ksm-run --set run=1 --log warn ksmenable-pro' \
		'ksm-run -- ls --al' 'ksm-run ls --al'
	[ "$status" = 0 ]
	# without bash-completion: command names, then readline's own (files)
	local c=ksmenable-probe-cmd
	[ "$output" = "$(printf '%s\n' $c == $c == $c == default == default ==)" ]
}

@test "bash with bash-completion: the command after -- completes with its own completion" {
	[ -f "$BASH_COMPLETION" ] || skip_or_fail "no $BASH_COMPLETION (install bash-completion)"
	run bash_comp --with-bash-completion 'ksm-run -- ksmenable-pro' 'ksm-run -- ls --al' \
		'ksm-run --mode=prctl ls --alm' 'ksm-run --mode='
	[ "$status" = 0 ]
	[ "$output" = "$(printf '%s\n' ksmenable-probe-cmd == --all --almost-all == --almost-all == auto madvise off prctl ==)" ]
}

# bash_tty LINE...: types each LINE and a Tab into an interactive bash on a
# pseudo-terminal, then makes the completed line an echo; prints the lines
# as readline left them (an X marks where the cursor was).
bash_tty() {
	python3 - "$BASH_COMP" "$@" <<'PY'
import os, pty, re, select, sys, time
comp, lines = sys.argv[1], sys.argv[2:]
env = dict(os.environ, TERM="dumb", INPUTRC="/dev/null", HISTFILE="/dev/null")
pid, fd = pty.fork()
if pid == 0:
    os.execvpe("bash", ["bash", "--norc", "--noprofile", "-i"], env)
out = b""
def read_until(pattern, limit=10.0):
    """Reads the terminal until the regular expression appears; its match."""
    global out
    end = time.time() + limit
    while True:
        m = re.search(pattern, out, re.M)
        if m:
            return m
        if time.time() > end:
            sys.exit("bash_tty: no %r from bash; it wrote: %r" % (pattern, out))
        if not select.select([fd], [], [], 0.5)[0]:
            continue
        try:
            out += os.read(fd, 4096)
        except OSError:
            sys.exit("bash_tty: bash ended; it wrote: %r" % out)
os.write(fd, ("PS1='$ '; source '%s'; echo RE''ADY\n" % comp).encode())
read_until(rb"^READY\r?\n")
for i, line in enumerate(lines):
    # Readline runs the completion for the Tab before it reads on, then:
    # Ctrl-A, a marker, Ctrl-E, X, Enter: the completed line is echoed.
    os.write(fd, line.encode() + b"\t")
    os.write(fd, b"\x01echo LI''NE%d: \x05X\n" % i)
    print(read_until(rb"^LINE%d: (.*?)\r?\n" % i).group(1).decode())
os.write(fd, b"exit\n")
os.waitpid(pid, 0)
PY
}

@test "bash on a terminal: Tab completes --mo to --mode= and a knob after --set, with no space" {
	run bash_tty 'ksm-run --mo' 'ksm-run --set pages_to' 'ksm-run --mode=mad' 'ksm-run -- ksmenable-pro'
	echo "$output"
	[ "$status" = 0 ]
	[ "${lines[0]}" = "ksm-run --mode=X" ]
	[ "${lines[1]}" = "ksm-run --set pages_to_scan=X" ]
	[ "${lines[2]}" = "ksm-run --mode=madvise X" ]
	[ "${lines[3]}" = "ksm-run -- ksmenable-probe-cmd X" ]
}

@test "the values both completions offer are those of ksm-run --help" {
	local help opt want
	help=$(ksm-run --help)
	for opt in mode log advisor fingerprint-format; do
		want=$(grep -o -- "--$opt=[a-z|-]*" <<<"$help" | head -n 1 | cut -d= -f2 | tr '|' ' ')
		[ -n "$want" ]
		run bash -c 'source "$0"; _ksm_run_values "$1"' "$BASH_COMP" "--$opt"
		[ "$output" = "$want" ] || { echo "bash --$opt: '$output', --help: '$want'"; return 1; }
		grep -qF -- "'--$opt=[" "$ZSH_COMP_DIR/_ksm-run"
		grep -F -- "'--$opt=[" "$ZSH_COMP_DIR/_ksm-run" | grep -qF -- ":($want)')" ||
			{ echo "zsh --$opt: not ($want)"; return 1; }
	done
	head -n 1 "$ZSH_COMP_DIR/_ksm-run" | grep -qx '#compdef ksm-run'
}

@test "zsh: the completion file parses, and completes options, values, knobs and the command" {
	command -v zsh >/dev/null || skip_or_fail "no zsh (install zsh; tests/install-deps does)"
	zsh -n "$ZSH_COMP_DIR/_ksm-run"
	run zsh -f "$TOP/tests/helpers/zsh-complete.zsh" "$ZSH_COMP_DIR" \
		'ksm-run --mo' 'ksm-run --mode=' 'ksm-run --log ' 'ksm-run --set pages_to' \
		'ksm-run --set advisor_mode=' 'ksm-run --list' 'ksm-run -- ksmenable-pro' 'ksm-run -q ls --al'
	echo "$output"
	[ "$status" = 0 ]
	[ "$(answer 1)" = --mode ]
	[ "$(answer 2)" = "$(printf '%s\n' auto madvise off prctl)" ]
	[ "$(answer 3)" = "$(printf '%s\n' debug error info quiet warn)" ]
	[ "$(answer 4)" = pages_to_scan ]
	[ "$(answer 5)" = "$(printf '%s\n' none scan-time)" ]
	[ -z "$(answer 6)" ]
	# the command after --, and then its own arguments (zsh's _ls)
	[ "$(answer 7)" = ksmenable-probe-cmd ]
	answer 8 | grep -qx -- --almost-all
}

@test "make install puts the completions under DESTDIR/PREFIX, make uninstall removes them" {
	local d=$BATS_TEST_TMPDIR/stage
	# A build directory of the test's own: installing for PREFIX=/usr
	# rebuilds ksm-run for /usr/lib, and the suite's build must stay as it is.
	run make -C "$TOP" -s install DESTDIR="$d" PREFIX=/usr O="$BATS_TEST_TMPDIR/build"
	[ "$status" = 0 ]
	cmp "$BASH_COMP" "$d/usr/share/bash-completion/completions/ksm-run"
	cmp "$ZSH_COMP_DIR/_ksm-run" "$d/usr/share/zsh/site-functions/_ksm-run"
	[ "$(stat -c %a "$d/usr/share/zsh/site-functions/_ksm-run")" = 644 ]
	run make -C "$TOP" -s uninstall DESTDIR="$d" PREFIX=/usr O="$BATS_TEST_TMPDIR/build"
	[ "$status" = 0 ]
	[ -z "$(find "$d" -type f)" ]
}
