# debian-root.bash: what tests/fresh-root and tests/guest-run share to make
# a minimal Debian root from the mirror of this machine's apt sources.
# Sourced; the caller sets prog (its name, for messages) and suite (the
# Debian suite, bookworm) first.
# shellcheck disable=SC2154 # prog and suite: the caller's

# mmss SECONDS: minutes:seconds.
mmss() { printf '%d:%02d' $(($1 / 60)) $(($1 % 60)); }

source_files() {
	local f
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources; do
		[ -f "$f" ] && echo "$f"
	done
}

# apt_mirror: the URI of the first enabled "deb" source of $suite, in
# one-line (deb [options] URI SUITE COMPONENT...) or deb822 form.
apt_mirror() {
	local f
	source_files | while read -r f; do
		case $f in
		*.sources)
			awk -v suite="$suite" '
				BEGIN { RS = "" }
				{
					types = uris = suites = ""; enabled = "yes"
					n = split($0, line, "\n")
					for (i = 1; i <= n; i++) {
						if (line[i] ~ /^#/) continue
						key = tolower(line[i]); sub(/:.*/, "", key)
						val = line[i]; sub(/^[^:]*:[ \t]*/, "", val)
						if (key == "types") types = " " val " "
						else if (key == "uris") uris = val
						else if (key == "suites") suites = " " val " "
						else if (key == "enabled") enabled = tolower(val)
					}
					if (enabled != "no" && types ~ / deb / && suites ~ (" " suite " ")) {
						split(uris, u, /[ \t]+/); print u[1]; exit
					}
				}' "$f" ;;
		*)
			awk -v suite="$suite" '
				{ sub(/#.*/, "") }
				$1 == "deb" {
					i = 2
					if ($i ~ /^\[/) while ($i !~ /\]$/ && i < NF) i++
					if ($i ~ /^\[/ || $i ~ /\]$/) i++
					if ($(i + 1) == suite) { print $i; exit }
				}' "$f" ;;
		esac
	done | head -n 1
}

# copy_apt_config ROOT: the machine's sources replace debootstrap's, with
# the keyrings they name that the root lacks, and resolv.conf (its content:
# on the host it may be a link into /run).
copy_apt_config() {
	local root=$1 f k
	rm -f "$root/etc/apt/sources.list"
	for f in $(source_files); do
		cp "$f" "$root$f" || return 1
		sed -n 's/.*[Ss]igned-[Bb]y[=:][[:space:]]*\([^] \t]*\).*/\1/p' "$f" |
			while read -r k; do
				if [ "${k#/}" != "$k" ] && [ -f "$k" ] && [ ! -e "$root$k" ]; then
					mkdir -p "$root$(dirname "$k")" && cp "$k" "$root$k" || exit 1
				fi
			done || return 1
	done
	for f in /etc/apt/trusted.gpg.d/*; do
		[ -f "$f" ] && [ ! -e "$root$f" ] && { cp "$f" "$root$f" || return 1; }
	done
	rm -f "$root/etc/resolv.conf"
	cat /etc/resolv.conf >"$root/etc/resolv.conf"
}

# need_debootstrap: installed with apt-get when missing (on the host, not
# by tests/install-deps: the root gets only what the suite needs).
need_debootstrap() {
	command -v debootstrap >/dev/null && return 0
	echo "$prog: installing debootstrap" >&2
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends debootstrap >&2 ||
		{ apt-get update -q >&2 &&
			DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends debootstrap >&2; }
}

# add_proxy_env ARRAY: the host's proxy settings appended to the array named
# ARRAY, an environment for the root (apt there reaches the mirror the same
# way).
add_proxy_env() {
	local -n add_to=$1
	local v
	for v in http_proxy https_proxy no_proxy HTTP_PROXY HTTPS_PROXY NO_PROXY; do
		[ -z "${!v:-}" ] || add_to+=("$v=${!v}")
	done
}

# clone_commit TOP COMMIT ROOT: a clone of COMMIT of the tree TOP in
# ROOT/root/ksmenable (not TOP's uncommitted changes), /root of mode 0700:
# where a newcomer clones.
clone_commit() {
	local top=$1 commit=$2 root=$3
	[ "$(stat -c %a "$root/root")" = 700 ] || { echo "$prog: $root/root is not of mode 0700" >&2; return 1; }
	git clone -q --no-checkout "$top" "$root/root/ksmenable" &&
		git -C "$root/root/ksmenable" checkout -q --detach "$commit"
}
