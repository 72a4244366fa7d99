#!/usr/bin/env zsh
# zsh-complete.zsh FPATH_DIR LINE...: for each LINE, types it and a Tab into
# an interactive zsh (on a pseudo-terminal, with compinit and FPATH_DIR in
# fpath), and prints the matches its completion offered (the words passed to
# compadd that fit, sorted), then "==".  Exit 1 if zsh does not answer within
# 10 s.  For tests/27-completion.bats.
emulate -L zsh
zmodload zsh/zpty || exit 1
typeset -F SECONDS

dir=$1
shift
log=$(mktemp) || exit 1
trap 'rm -f $log' EXIT

# reads the pty until the text $1 appears; 1 after 10 s
read_until() {
	local out= chunk start=$SECONDS
	while [[ $out != *$1* ]]; do
		if zpty -rt z chunk; then
			out+=$chunk
		elif (( SECONDS - start > 10 )); then
			print -u2 "zsh-complete: no answer from zsh (waiting for $1); it wrote: $out"
			return 1
		else
			sleep 0.05
		fi
	done
}

TERM=xterm zpty z zsh -f -i || exit 1
# Every match offered passes through compadd: log what would be added.
zpty -w z "PS1='%% '; fpath=(${(q)dir} \$fpath); autoload -Uz compinit; compinit -u -D"
zpty -w z "compadd() { if (( \${@[(I)-[OAD]*]} )); then builtin compadd \"\$@\"; return; fi;" \
	"local -a m; builtin compadd -O m \"\$@\"; print -rl -- \"\${m[@]}\" >>| ${(q)log}; builtin compadd \"\$@\"; }"
zpty -w z "print RE''ADY"
read_until READY || exit 1

integer i=0
for line in "$@"; do
	i+=1
	: >| $log
	# the line, Tab, then wipe it (Ctrl-U) and ask for a marker
	zpty -wn z "$line"$'\t'
	zpty -wn z $'\x15'
	zpty -w z "print DO''NE-$i"
	read_until "DONE-$i" || exit 1
	sort -u $log
	print -r -- '=='
done
zpty -d z
