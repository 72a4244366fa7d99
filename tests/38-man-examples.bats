#!/usr/bin/env bats
# The EXAMPLES of man/ksm-run.1, man/ksm-run-daemon.8 and
# man/libksmenable.7, run as written (a test program for the server, a
# cgroup of the test for the service), each checked against what its
# paragraph says it does; those of man/ksmenable.conf.5, policies, are
# checked by tests/49-policy.bats.  An example this file does not know
# fails the test: a new one gets its check here, and so does a new page.
# ci: lock asan

load helpers
load launcher_helpers

LAUNCHER_REQUIRES="root ksm prctl jq"

IN_CGROUP='echo $$ >"$1/cgroup.procs" && shift && exec "$@"'

teardown_extra() {
	local n
	for n in "${!WL_PIDS[@]}"; do kill -KILL "${WL_PIDS[$n]}" 2>/dev/null; done
	return 0
}

# man_examples PAGE: the commands of its EXAMPLES section, each as
# "PARAGRAPH<TAB>COMMAND" ended by a NUL: PARAGRAPH the text before its
# block, continuation lines and lines inside quotes joined, the roff
# escapes of a shell line undone.
man_examples() {
	awk '/^\.SH / { on = ($2 == "EXAMPLES"); next }
		!on { next }
		/^\.EX/ { ex = 1; next }
		/^\.EE/ { ex = 0; print "\001"; next }
		ex { print; next }
		/^\.(PP|RS|RE)/ { next }
		{ sub(/^\.[A-Z]+ /, ""); print "\002" $0 }' "$1" |
		sed -e 's/\\-/-/g; s/\\(aq/'"'"'/g; s/\\e$/\\/; s/\\e/\\/g' |
		awk '/^\001/ { para = ""; next }
			/^\002/ { para = para " " substr($0, 2); next }
			{ line = line $0 }
			/\\$/ { sub(/\\$/, "", line); next }
			gsub(/\047/, "&", line) % 2 { line = line "\n"; next }
			{ gsub(/  +/, " ", line); printf "%s\t%s%c", para, line, 0; line = "" }'
}

merge_any() { awk '$1 ~ /^ksm_merge_any:?$/ { print $2 }' "/proc/$1/ksm_stat"; }

# start_service SECONDS: the service of the examples, an attachee in a
# cgroup of this test that sleeps SECONDS; SVC its pid.
start_service() {
	start_workload svc -- sh -c "$IN_CGROUP" sh "$CG_DIR" "$PROGS/attachee" sleep "$1"
	SVC=$(wl_pid svc)
}

stop_service() {
	[ -n "${WL_PIDS[svc]:-}" ] || return 0
	kill -KILL "$SVC"
	wait_workload svc || true
}

@test "EXAMPLES of ksm-run(1): each runs as its paragraph says" {
	local before rec para line cmd cg seen=0
	make_cgroup app
	cg=${CG_DIR#"$(cgroup_root)"/}
	cd "$BATS_TEST_TMPDIR"
	before=$(knobs_snapshot)
	while IFS= read -r -d '' rec; do
		para=${rec%%$'\t'*} line=${rec#*$'\t'}
		echo "#${para}"
		echo "#   $line"
		# The service: a cgroup of this test.  The server: a test program.
		cmd=${line//system.slice\/app.service/$cg}
		cmd=${cmd//python3 server.py/\$PROGS/dupmem mmap=4}
		cmd=${cmd//.\/server/\$PROGS/dupmem mmap=4}
		cmd=${cmd/#ksm-run/\"\$KSM_RUN\"}
		case $line in
		systemctl*) continue ;;         # systemd is not PID 1 here
		*"--attach="*"--no-wait"* | *"--estimate="* | *"--detach="*)
			[ -n "${WL_PIDS[svc]:-}" ] || start_service 60
			cmd=${cmd//\$(pgrep*)/$SVC}
			run -0 eval "$cmd"
			;;
		*"--attach="*)
			# It follows the service until the service ends.
			stop_service
			start_service 3
			cmd=${cmd//\$(pgrep*)/$SVC}
			run -0 eval "$cmd"
			[[ $output == *"$SVC (attachee): enabled"* ]]
			wait_workload svc
			;;
		"ksm-run --allow="*"--json --report-file=ksm.json"*)
			run -0 eval "$cmd"
			# The report, as JSON in the file, names the fixed scan rate.
			jq -e '.knobs.pages_to_scan == 2000' ksm.json >/dev/null
			;;
		"ksm-run --profile"* | "ksm-run --allow="* | "ksm-run -- "* | "ksm-run --status" | "ksm-run --restore")
			run -0 eval "$cmd"
			;;
		*)
			echo "an example this test does not know: $line" >&2
			return 1
			;;
		esac
		# What the paragraph promises.
		case $para in
		*Predict*)
			[ "$(merge_any "$SVC")" = no ] || { echo "a prediction enabled KSM: $line" >&2; return 1; }
			[ "$(knobs_snapshot)" = "$before" ]
			;;
		*"only enable it"*)
			case $line in
			*--attach=*) [ "$(merge_any "$SVC")" = yes ] ;;
			*--detach=*) [ "$(merge_any "$SVC")" = no ] ;;
			esac
			;;
		esac
		seen=$((seen + 1))
	done < <(man_examples "$TOP/man/ksm-run.1")
	stop_service
	[ "$seen" -ge 10 ]
	[ "$(knobs_snapshot)" = "$before" ]
}

@test "EXAMPLES of ksm-run-daemon(8): the unit it enables is the tree's, and the status runs" {
	local rec para line cmd seen=0
	while IFS= read -r -d '' rec; do
		para=${rec%%$'\t'*} line=${rec#*$'\t'}
		echo "#${para}"
		echo "#   $line"
		cmd=${line/#ksm-run/\"\$KSM_RUN\"}
		case $line in
		"systemctl disable --now ksmtuned") ;;  # another package's unit
		"systemctl enable --now ksmenable")
			# systemd is not PID 1 here: the unit is the one make install installs.
			[ -f "$TOP/launcher/systemd/ksmenable.service.in" ]
			;;
		"ksm-run --status")
			run -0 eval "$cmd"
			;;
		*)
			echo "an example this test does not know: $line" >&2
			return 1
			;;
		esac
		seen=$((seen + 1))
	done < <(man_examples "$TOP/man/ksm-run-daemon.8")
	[ "$seen" = 3 ]
}

@test "EXAMPLES of libksmenable(7): the variables are taken, and the smaps command shows what was advised" {
	local rec line cmd seen=0 report=$BATS_TEST_TMPDIR/ksm.jsonl
	while IFS= read -r -d '' rec; do
		line=${rec#*$'\t'}
		cmd=${line//\/usr\/local\/lib\/libksmenable.so.0/$PRELOAD}
		cmd=${cmd//\/tmp\/ksm.jsonl/$report}
		cmd=${cmd//gunicorn app:app -w 8/\$PROGS/dupmem mmap=4}
		cmd=${cmd//.\/server/\$PROGS/dupmem mmap=4}
		echo "# $line"
		case $line in
		*LD_PRELOAD=*)
			run -0 --separate-stderr eval "$cmd"
			# Every variable known and every value valid: not a word on stderr.
			[ -z "$stderr" ]
			;;
		*'$(pidof server)'*)
			start_workload srv -- env LD_PRELOAD="$PRELOAD" "$PROGS/dupmem" mmap=4 wait
			cmd=${cmd//\$(pidof server)/$(wl_pid srv)}
			run -0 eval "$cmd"
			grep -Eq '^[0-9a-f]+-[0-9a-f]+ KSM: [0-9]+ kB$' <<<"$output"
			stop_workload srv
			;;
		*)
			echo "an example this test does not know: $line" >&2
			return 1
			;;
		esac
		seen=$((seen + 1))
	done < <(man_examples "$TOP/man/libksmenable.7")
	[ "$seen" = 3 ]
	[ "$(jq -r .mode "$report")" = prctl ]
}

@test "every man page's EXAMPLES are checked: here, or ksmenable.conf(5)'s policies in 49-policy" {
	local page
	for page in "$TOP"/man/*.[1-8]; do
		grep -q '^\.SH EXAMPLES$' "$page" || continue
		case ${page##*/} in
		ksm-run.1 | ksm-run-daemon.8 | libksmenable.7)
			grep -qF "man_examples \"\$TOP/man/${page##*/}\"" "$BATS_TEST_FILENAME" ;;
		ksmenable.conf.5)
			grep -qF 'man/ksmenable.conf.5' "$TOP/tests/49-policy.bats" ;;
		*)
			echo "no test runs the EXAMPLES of $page" >&2
			return 1
			;;
		esac
	done
}
