# bash completion for ksm-run(1).  Installed as
# $(PREFIX)/share/bash-completion/completions/ksm-run; works with or without
# the bash-completion package (with it, the command after -- completes with
# that command's own completion, as after env or sudo).
#
# The options come from the ksm-run being completed (ksm-run --list-options),
# so they cannot drift from its option table; the knob names from the
# writable files in /sys/kernel/mm/ksm (ksm-run --list-knobs where there is
# none).  The values below are those of ksm-run --help (a test compares).

_ksm_run_values() {
	case $1 in
	--mode) echo auto prctl madvise off ;;
	--log) echo quiet error warn info debug ;;
	--advisor) echo none scan-time ;;
	--fingerprint-format) echo binary tsv ;;
	--smart-scan | --use-zero-pages | --merge-across-nodes) echo 0 1 ;;
	esac
}

_ksm_run_knob_values() {
	case $1 in
	advisor_mode) echo none scan-time ;;
	run | smart_scan | use_zero_pages | merge_across_nodes) echo 0 1 ;;
	esac
}

# The program being completed, or ksm-run on PATH.
_ksm_run_prog() {
	local p=$1
	[[ $p == "~"/* ]] && p=$HOME/${p#"~/"}
	type -P -- "$p" 2>/dev/null || type -P ksm-run 2>/dev/null
}

# Its long options, "--name=" when they take a value, cached per program;
# the hidden --list-* options are left out.
_ksm_run_options() {
	local prog
	prog=$(_ksm_run_prog "$1") || return 0
	if [[ ${_ksm_run_opts_for-} != "$prog" ]]; then
		_ksm_run_opts=$("$prog" --list-options 2>/dev/null | grep -v '^--list-')
		_ksm_run_opts_for=$prog
	fi
	printf '%s\n' "$_ksm_run_opts"
}

_ksm_run_knobs() {
	local d=/sys/kernel/mm/ksm f prog
	if [[ -d $d ]]; then
		for f in "$d"/*; do
			# ksm-run's own test: a knob has its owner's write bit.
			[[ -f $f && $(stat -c %A "$f" 2>/dev/null) == ??w* ]] && echo "${f##*/}"
		done
	elif prog=$(_ksm_run_prog "$1"); then
		"$prog" --list-knobs 2>/dev/null
	fi
	return 0
}

# COMP_WORDS is split at each character of COMP_WORDBREAKS ('=' and ':'
# among them).  Put back together what the line has no blank between, so
# that "--mode=pr" is one word, and cut the current word at the cursor.
# Sets _kr_words, _kr_cword and _kr_at (each word's index in COMP_WORDS).
_ksm_run_words() {
	local line=${COMP_LINE:0:COMP_POINT} i w
	_kr_words=() _kr_at=()
	for ((i = 0; i <= COMP_CWORD; i++)); do
		w=${COMP_WORDS[i]}
		if ((i == 0)) || [[ $line =~ ^[[:space:]]+ ]]; then
			line=${line#"${BASH_REMATCH[0]}"}
			_kr_words+=("")
			_kr_at+=("$i")
		fi
		((i == COMP_CWORD)) && w=$line
		_kr_words[${#_kr_words[@]} - 1]+=$w
		line=${line#"$w"}
	done
	_kr_cword=$((${#_kr_words[@]} - 1))
}

# COMPREPLY: the words of the list $2 that start with $1, less the part of
# $1 up to its last break character (readline replaces only what follows).
_ksm_run_reply() {
	local cur=$1 c keep='' m IFS=$' \t\n'
	for ((c = ${#cur} - 1; c >= 0; c--)); do
		if [[ $COMP_WORDBREAKS == *"${cur:c:1}"* ]]; then
			keep=${cur:0:c+1}
			break
		fi
	done
	COMPREPLY=()
	for m in $(compgen -W "$2" -- "$cur"); do
		COMPREPLY+=("${m#"$keep"}")
		# NAME= and cgroup: are not finished words.
		[[ $m == *[=:] ]] && compopt -o nospace 2>/dev/null
	done
	return 0
}

# The value of option $1 in word $2, whose first $3 characters are "--opt=".
_ksm_run_value() {
	local opt=$1 cur=$2 pre=${2:0:$3} v=${2:$3} w list=()
	case $opt in
	--preload | --report-file | --fingerprint | --fingerprint-key)
		compopt -o filenames 2>/dev/null
		mapfile -t COMPREPLY < <(compgen -f -- "$v")
		return 0 ;;
	--fingerprint-per-cgroup)
		compopt -o filenames 2>/dev/null
		mapfile -t COMPREPLY < <(compgen -d -- "$v")
		return 0 ;;
	--set)
		if [[ $v == *=* ]]; then
			for w in $(_ksm_run_knob_values "${v%%=*}"); do list+=("$pre${v%%=*}=$w"); done
		else
			for w in $(_ksm_run_knobs "${_kr_words[0]}"); do list+=("$pre$w="); done
		fi ;;
	--estimate | --attach | --detach)
		# all is --estimate's only: --attach and --detach take PIDs or a cgroup.
		[ "$opt" = --estimate ] && list=("${pre}all")
		list+=("${pre}cgroup:")
		for w in /proc/[0-9]*; do list+=("$pre${w#/proc/}"); done ;;
	*)
		for w in $(_ksm_run_values "$opt"); do list+=("$pre$w"); done ;;
	esac
	_ksm_run_reply "$cur" "${list[*]}"
}

# The command from word $1 on, with its arguments: completed as a command
# line of its own; after --combine, the words are fingerprint files.
_ksm_run_command() {
	local w
	for w in "${_kr_words[@]:1:$1-1}"; do
		if [[ $w == --combine ]]; then
			compopt -o filenames 2>/dev/null
			mapfile -t COMPREPLY < <(compgen -f -- "${_kr_words[_kr_cword]}")
			return 0
		fi
	done
	if declare -F _command_offset >/dev/null; then
		# bash-completion: the command's own completion.
		_command_offset "${_kr_at[$1]}"
	elif (($1 == _kr_cword)); then
		mapfile -t COMPREPLY < <(compgen -c -- "${_kr_words[_kr_cword]}")
	else
		compopt -o default 2>/dev/null
		COMPREPLY=()
	fi
}

_ksm_run() {
	local _kr_words _kr_cword _kr_at i=1 w cur opts
	_ksm_run_words
	cur=${_kr_words[_kr_cword]}
	opts=$(_ksm_run_options "${_kr_words[0]}")

	# Options end at --, or at the first word that is neither an option nor
	# an option's separate value: there the command starts (as with env).
	while ((i < _kr_cword)); do
		w=${_kr_words[i]}
		if [[ $w == -- ]]; then
			_ksm_run_command $((i + 1))
			return 0
		elif [[ $w == --* && $w != *=* ]] && grep -qxF -- "$w=" <<<"$opts"; then
			i=$((i + 2))
		elif [[ $w == -* ]]; then
			i=$((i + 1))
		else
			_ksm_run_command "$i"
			return 0
		fi
	done
	if ((i > _kr_cword)); then
		# the separate value of the option before it
		_ksm_run_value "${_kr_words[_kr_cword - 1]}" "$cur" 0
	elif [[ $cur == --*=* ]]; then
		w=${cur%%=*}
		_ksm_run_value "$w" "$cur" $((${#w} + 1))
	elif [[ $cur == -* ]]; then
		_ksm_run_reply "$cur" "$opts -- -h -V -q"
	else
		_ksm_run_command "$i"
	fi
	return 0
}

complete -F _ksm_run ksm-run
