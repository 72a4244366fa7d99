#!/usr/bin/env bats
# ksm-run's JSON is UTF-8 whatever bytes come from outside.  A command name
# and a cgroup's name are bytes that their owner chose, not text: a byte
# that is not UTF-8 becomes U+FFFD (common/json.c, preload/core/utf8.c),
# so that a strict decoder reads every --json output.  The JSON string
# writer itself is fuzzed against a decoder of its own (tests/fuzz/fuzz_json.c).
# ci: lock asan

load helpers
load launcher_helpers

LAUNCHER_REQUIRES="root ksm jq"

# The process sleeps, and reads no BYE.
teardown_extra() {
	[ -z "${WL_PIDS[odd]:-}" ] || kill -TERM "${WL_PIDS[odd]}" 2>/dev/null
	return 0
}

ODD_COMM=$'x\xff\xfe"y'
# What a decoder reads for it: each byte that is not UTF-8 is one U+FFFD.
ODD_COMM_READ=$'x\xef\xbf\xbd\xef\xbf\xbd"y'   # U+FFFD as UTF-8 bytes: \u in $'' needs a UTF-8 locale

# strict_json: standard input is one JSON text in strict UTF-8 (python's
# decoder, not ksm-run's), printed back as JSON for jq.
strict_json() {
	python3 -c 'import json, sys; print(json.dumps(json.loads(sys.stdin.buffer.read().decode("utf-8", "strict")), ensure_ascii=False))'
}

# A process named ODD_COMM, holding 16 MiB of duplicate pages, in a cgroup
# whose name holds the byte 0xff: the workload "odd", the cgroup CG_DIR.
start_odd_process() {
	make_cgroup $'odd\xff'
	start_workload odd -- sh -c 'echo $$ >"$1/cgroup.procs" && exec "$2" --name="$3" --dup=16 sleep 60' \
		sh "$CG_DIR" "$PROGS/attachee" "$ODD_COMM"
	[ "$(cat "/proc/$(wl_pid odd)/comm")" = "$ODD_COMM" ]
	ODD_CGROUP=cgroup:${CG_DIR#"$(cgroup_root)"/}
}

@test "--attach --json: a command name and a cgroup that are not UTF-8" {
	start_odd_process
	run -0 --separate-stderr "$KSM_RUN" --attach="$ODD_CGROUP" $(attach_form) --no-wait --json
	local json
	json=$(strict_json <<<"$output")
	echo "$json"
	[ "$(jq -r '.targets[0].comm' <<<"$json")" = "$ODD_COMM_READ" ]
	[ "$(jq -r '.targets[0].result' <<<"$json")" = enabled ]
}

@test "--estimate --json: a command name and a cgroup that are not UTF-8" {
	start_odd_process
	run -0 --separate-stderr "$KSM_RUN" --estimate="$ODD_CGROUP" --json
	local json
	json=$(strict_json <<<"$output")
	echo "$json"
	[ "$(jq -r '.processes[0].comm' <<<"$json")" = "$ODD_COMM_READ" ]
}

@test "--status --json: a merging process and its cgroup, not UTF-8" {
	start_odd_process
	run -0 "$KSM_RUN" --attach="$ODD_CGROUP" $(attach_form) --no-wait
	fast_ksm
	wait_until 20 merging_at_least "$(wl_pid odd)" 1000
	run -0 --separate-stderr "$KSM_RUN" --status --json
	local json
	json=$(strict_json <<<"$output")
	echo "$json"
	[ "$(jq -r --argjson p "$(wl_pid odd)" '.processes[] | select(.pid == $p) | .comm' <<<"$json")" = "$ODD_COMM_READ" ]
	local name=${ODD_CGROUP#cgroup:}
	jq -r '.groups[].cgroup' <<<"$json" | grep -qxF "/${name%$'\xff'}"$'\xef\xbf\xbd'
}

@test "--status --watch's JSON lines: a merging process and its cgroup, not UTF-8" {
	start_odd_process
	run -0 "$KSM_RUN" --attach="$ODD_CGROUP" $(attach_form) --no-wait
	fast_ksm
	wait_until 20 merging_at_least "$(wl_pid odd)" 1000
	local line json
	# Without a terminal, one JSON line per view.
	line=$(timeout 5 "$KSM_RUN" --status --watch=0.2 </dev/null | head -n 1)
	json=$(strict_json <<<"$line")
	[ "$(jq -r --argjson p "$(wl_pid odd)" '.processes[] | select(.pid == $p) | .comm' <<<"$json")" = "$ODD_COMM_READ" ]
	jq -e '.groups | length > 0' <<<"$json" >/dev/null
}

@test "a command's --json report: its arguments and its tree's names and cgroups, not UTF-8" {
	local report=$BATS_TEST_TMPDIR/report.json json
	make_cgroup $'run\xff'
	# The command moves itself into the odd cgroup and takes the odd name.
	run -0 "$KSM_RUN" --json --report-file="$report" --interval=0.2 -- \
		sh -c 'echo $$ >"$1/cgroup.procs" && exec "$2" --name="$3" --dup=8 sleep 2' sh "$CG_DIR" \
		"$PROGS/attachee" "$ODD_COMM"
	json=$(strict_json <"$report")
	[ "$(jq -r '.command[-1]' <<<"$json")" = "$ODD_COMM_READ" ]
	[ "$(jq -r '.pid as $root | .processes[] | select(.pid == $root) | .comm' <<<"$json")" = "$ODD_COMM_READ" ]
	jq -r '.cgroups[].cgroup' <<<"$json" | grep -q $'run\xef\xbf\xbd$'
}

@test "--profile's --json report and --combine --json: strict JSON" {
	local report=$BATS_TEST_TMPDIR/profile.json fp=$BATS_TEST_TMPDIR/fp
	run -0 "$KSM_RUN" --profile --json --report-file="$report" --interval=0.2 -- \
		"$PROGS/attachee" --name="$ODD_COMM" --dup=8 sleep 2
	strict_json <"$report" | jq -e '.profile.classes | length > 0' >/dev/null
	start_odd_process
	mkdir "$fp"
	run -0 --separate-stderr "$KSM_RUN" --estimate="$(wl_pid odd)" --label=odd --fingerprint="$fp/a.kfp" \
		--fingerprint-key="$fp/key"
	run -0 --separate-stderr "$KSM_RUN" --estimate="$(wl_pid odd)" --label=twin --fingerprint="$fp/b.kfp" \
		--fingerprint-key="$fp/key"
	run -0 --separate-stderr "$KSM_RUN" --combine --matrix --json "$fp/a.kfp" "$fp/b.kfp"
	strict_json <<<"$output" | jq -e '.matrix.labels == ["odd", "twin"] and (.pairs | length) == 1' >/dev/null
}
