#!/usr/bin/env bats
# The host agent's policy, checked as the agent checks it: ksm-run
# --check-config[=FILE] on files of root's in a directory of the test's
# own, with drop-ins; a file or directory another user could have written
# is refused, as sudo refuses a writable sudoers.  Nothing is applied and
# no knob is touched.
# ci: asan

load helpers

# policy_dir: a fresh directory of root's, 0755, holding ksmenable.conf and conf.d/.
policy_dir() {
	P=$BATS_TEST_TMPDIR/etc
	mkdir -p "$P/conf.d"
	chmod 755 "$P" "$P/conf.d"
}

# write_policy FILE TEXT: a policy file as an operator writes one (0644).
write_policy() {
	printf '%s\n' "$2" >"$1"
	chmod 644 "$1"
}

@test "--check-config: a valid policy with drop-ins, in the order of their names" {
	requires root
	policy_dir
	write_policy "$P/ksmenable.conf" '# the base
[rule php]
unit = php8.2-fpm.service
user = www-data
action = prctl'
	write_policy "$P/conf.d/20-jvm.conf" '[rule jvm]
exe = /usr/lib/jvm/*/bin/java
user = www-data
qos = burstable
action = madvise
allow = anon
min-size = 1M'
	write_policy "$P/conf.d/10-keys.conf" '[rule keys]
user = root
action = off'
	# Not drop-ins: another suffix, a hidden file, an editor's leftover.
	write_policy "$P/conf.d/30-x.conf.disabled" 'garbage'
	write_policy "$P/conf.d/.40-y.conf" 'garbage'
	write_policy "$P/conf.d/50-z.conf~" 'garbage'
	run --separate-stderr "$KSM_RUN" --check-config="$P/ksmenable.conf"
	[ "$status" = 0 ] || { echo "$stderr"; return 1; }
	[ -z "$stderr" ]
	[ "${lines[0]}" = "rule php ($P/ksmenable.conf:2): unit php8.2-fpm.service, user www-data -> prctl" ]
	[ "${lines[1]}" = "rule keys ($P/conf.d/10-keys.conf:1): user root -> off" ]
	[ "${lines[2]}" = "rule jvm ($P/conf.d/20-jvm.conf:1): exe /usr/lib/jvm/*/bin/java, user www-data, qos burstable -> madvise (allow=anon, min-size=1M)" ]
	[ "${lines[3]}" = "$P/ksmenable.conf: the policy is valid: 3 rules in 3 files" ]
	[ "${#lines[@]}" = 4 ]
}

@test "--check-config: every error with its file and line, exit 1" {
	requires root
	policy_dir
	write_policy "$P/ksmenable.conf" '[rule php]
unti = php8.2-fpm.service
action = prctl'
	write_policy "$P/conf.d/10-a.conf" '[rule a]
user = 0
action = prctl
allow = anon'
	run --separate-stderr "$KSM_RUN" --check-config="$P/ksmenable.conf"
	[ "$status" = 1 ]
	[ -z "$output" ]
	[[ $stderr == *"ksm-run: $P/ksmenable.conf:2: unknown setting 'unti' (did you mean unit?)"* ]]
	[[ $stderr == *"ksm-run: $P/ksmenable.conf:1: rule php matches nothing"* ]]
	[[ $stderr == *"ksm-run: $P/conf.d/10-a.conf:3: rule a: action=prctl merges all memory, but allow is set"* ]]
	[[ $stderr == *"ksm-run: the policy is not valid: 3 errors"* ]]
}

@test "--check-config: a file or directory that another user could write is refused" {
	requires root
	local f
	policy_dir
	f=$P/ksmenable.conf
	write_policy "$f" '[rule a]
unit = a.service
user = root
action = prctl'
	run "$KSM_RUN" --check-config="$f"
	[ "$status" = 0 ]
	for mode in 664 646; do
		chmod "$mode" "$f"
		run --separate-stderr "$KSM_RUN" --check-config="$f"
		[ "$status" = 1 ] && [ -z "$output" ]
		[[ $stderr == *"$f: is writable by "*"the agent reads no policy that another user could have written"* ]]
	done
	chmod 644 "$f"
	chown 65534 "$f"
	run --separate-stderr "$KSM_RUN" --check-config="$f"
	[ "$status" = 1 ] && [[ $stderr == *"$f: is not owned by root"* ]]
	chown 0 "$f"
	# A drop-in of nobody's, and a drop-in directory others may write.
	write_policy "$P/conf.d/10-b.conf" '[rule b]
unit = b.service
user = root
action = prctl'
	chown 65534 "$P/conf.d/10-b.conf"
	run --separate-stderr "$KSM_RUN" --check-config="$f"
	[ "$status" = 1 ] && [[ $stderr == *"$P/conf.d/10-b.conf: is not owned by root"* ]]
	chown 0 "$P/conf.d/10-b.conf"
	chmod 777 "$P/conf.d"
	run --separate-stderr "$KSM_RUN" --check-config="$f"
	[ "$status" = 1 ] && [[ $stderr == *"$P/conf.d: the policy's directory is writable by others"* ]]
	chmod 755 "$P/conf.d"
	chmod 775 "$P"
	run --separate-stderr "$KSM_RUN" --check-config="$f"
	[ "$status" = 1 ] && [[ $stderr == *"$P: the policy's directory is writable by its group"* ]]
	chmod 755 "$P"
	# A FIFO planted as a drop-in is refused at once, never waited on.
	mkfifo -m 644 "$P/conf.d/20-fifo.conf"
	run --separate-stderr timeout 10 "$KSM_RUN" --check-config="$f"
	[ "$status" = 1 ] && [[ $stderr == *"$P/conf.d/20-fifo.conf: is not a regular file"* ]]
	rm "$P/conf.d/20-fifo.conf"
	run "$KSM_RUN" --check-config="$f"
	[ "$status" = 0 ]
}

@test "--check-config: no policy file; a NUL byte; bad options are refused with 125" {
	requires root
	policy_dir
	run --separate-stderr "$KSM_RUN" --check-config="$P/none.conf"
	[ "$status" = 1 ] && [[ $stderr == *"$P/none.conf: no such file: there is no policy"* ]]
	printf '[rule a]\nunit = a.service\0\naction = prctl\n' >"$P/ksmenable.conf"
	chmod 644 "$P/ksmenable.conf"
	run --separate-stderr "$KSM_RUN" --check-config="$P/ksmenable.conf"
	[ "$status" = 1 ] && [[ $stderr == *"holds a NUL byte"* ]]
	for args in "--check-config=$P/ksmenable.conf --json" "--check-config --pages-to-scan=9" \
		"--check-config=$P/ksmenable.conf -- true" "--check-config=" "--check-config --daemon"; do
		# shellcheck disable=SC2086 # the words of one case
		run -125 --separate-stderr "$KSM_RUN" $args
		[ -n "$stderr" ] && [ -z "$output" ]
	done
	run -125 --separate-stderr "$KSM_RUN" --check-config --json
	[[ $stderr == *"--json is not an option of --check-config"* ]]
}

@test "the EXAMPLES of ksmenable.conf(5) are valid policies, and say what they do" {
	requires root
	local n=0 block
	policy_dir
	# Each .EX block of the EXAMPLES section, the roff escapes undone: every
	# one a policy (tests/38-man-examples.bats leaves this page's to this test).
	awk '/^\.SH / { on = ($2 == "EXAMPLES"); next }
		on && /^\.EX/ { ex = 1; block = ""; next }
		on && /^\.EE/ { ex = 0; printf "%s%c", block, 0; next }
		ex { block = block $0 "\n" }' "$BATS_TEST_DIRNAME/../man/ksmenable.conf.5" | sed 's/\\-/-/g' >"$BATS_TEST_TMPDIR/blocks"
	while IFS= read -r -d '' block; do
		n=$((n + 1))
		write_policy "$P/ksmenable.conf" "$block"
		run --separate-stderr "$KSM_RUN" --check-config="$P/ksmenable.conf"
		[ "$status" = 0 ] || { echo "example $n: $stderr"; return 1; }
		case $n in
		1) [[ ${lines[0]} == "rule php ("*"): unit php8.2-fpm.service, user www-data -> prctl" ]] ;;
		2) [[ ${lines[0]} == "rule orders-jvm ("*"): exe /usr/lib/jvm/*/bin/java, pod 3f2a0c1d-5b6e-4a4b-9c9d-0123456789ab -> madvise (allow=anon, min-size=1M)" ]] ;;
		3) [[ ${lines[0]} == "rule web-keys ("*"): exe /usr/sbin/keyd, user www-data -> off" ]]
		   [[ ${lines[1]} == "rule web ("*"): user www-data -> prctl" ]] ;;
		esac
	done <"$BATS_TEST_TMPDIR/blocks"
	[ "$n" = 3 ]
}

@test "--check-config: a policy that would merge across security domains is refused unless every rule accepts it" {
	requires root
	policy_dir
	write_policy "$P/ksmenable.conf" '[rule any]
exe = /usr/bin/python3
action = prctl'
	run --separate-stderr "$KSM_RUN" --check-config="$P/ksmenable.conf"
	[ "$status" = 1 ]
	[[ $stderr == *"$P/ksmenable.conf:1: rule any enables KSM in processes of any user: their memory would be merged across security domains, and a merged page is a timing side channel"* ]]
	# By the kubelet's names alone: as many domains as pods.
	write_policy "$P/ksmenable.conf" '[rule shop]
namespace = shop
pod-name = web-*
action = prctl'
	run --separate-stderr "$KSM_RUN" --check-config="$P/ksmenable.conf"
	[ "$status" = 1 ]
	[[ $stderr == *":1: rule shop enables KSM in the pods that namespace, pod-name, container-name or owner name, each pod a security domain of its own"* ]] ||
		{ echo "$stderr"; return 1; }
	printf 'cross-domain = yes\n' >>"$P/ksmenable.conf"
	run -0 "$KSM_RUN" --check-config="$P/ksmenable.conf"
	[[ ${lines[0]} == "rule shop ("*"): namespace shop, pod-name web-* -> prctl; across security domains" ]] ||
		{ echo "$output"; return 1; }
	# A namespace made one domain binds the rule to it; two such rules are two domains.
	write_policy "$P/ksmenable.conf" '[rule shop]
namespace = shop
domain = namespace
action = prctl

[rule data]
namespace = data
domain = namespace
action = prctl'
	run --separate-stderr "$KSM_RUN" --check-config="$P/ksmenable.conf"
	[ "$status" = 1 ]
	[[ $stderr == *":1: rule shop enables KSM in namespace shop, and rule data in namespace data"* ]] ||
		{ echo "$stderr"; return 1; }
	write_policy "$P/ksmenable.conf" '[rule web]
user = www-data
action = prctl

[rule db]
user = nobody
action = auto

[rule keys]
exe = /usr/sbin/keyd
action = off'
	run --separate-stderr "$KSM_RUN" --check-config="$P/ksmenable.conf"
	[ "$status" = 1 ]
	[[ $stderr == *":1: rule web enables KSM in user www-data, and rule db in user nobody"* ]]
	[[ $stderr == *":5: rule db enables KSM in user nobody, and rule web in user www-data"* ]]
	[[ $stderr == *"the policy is not valid: 2 errors"* ]]
	# Accepted by one rule only: the other still refuses.
	write_policy "$P/ksmenable.conf" '[rule web]
user = www-data
action = prctl
cross-domain = yes

[rule db]
user = nobody
action = auto'
	run --separate-stderr "$KSM_RUN" --check-config="$P/ksmenable.conf"
	[ "$status" = 1 ] && [[ $stderr == *":6: rule db enables KSM in user nobody, and rule web in user www-data"* ]]
	printf 'cross-domain = yes\n' >>"$P/ksmenable.conf"
	run -0 "$KSM_RUN" --check-config="$P/ksmenable.conf"
	[[ ${lines[1]} == "rule db ("*"): user nobody -> auto; across security domains" ]]
}
