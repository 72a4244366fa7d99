#!/usr/bin/env bats
# The monitoring files (monitoring/): the Prometheus rules pass promtool
# check rules and their unit tests (promtool test rules, offline), every
# query of the Grafana dashboard parses, the rules and the dashboard read
# only series that the agent writes, and make install ships them.
#
# The series the agent writes are read from its source, launcher/host/
# metrics.c (tests/helpers/promql-names agent): a real metrics file holds
# some families only on some kernels (general_profit_computed_bytes before
# Linux 6.4) or under the daemon with a policy (ksmenable_rule_*).  A real
# file of a command's ksm-run checks that reading: every name it holds is
# among them.
# ci: lock asan

load helpers

NAMES=$TOP/tests/helpers/promql-names
MON=$TOP/monitoring

setup() {
	requires cmd:promtool cmd:python3
	python3 -c 'import yaml' 2>/dev/null || skip_or_fail "needs python3-yaml (tests/install-deps)"
	KNOBS_SAVED=
}

# The real run's knobs: as they were, and no state left, whatever happened.
teardown() {
	[ -n "$KNOBS_SAVED" ] || return 0
	[ ! -e /run/ksm-run/state ] || "$KSM_RUN" --restore >/dev/null 2>&1 || true
	restore_knobs "$KNOBS_SAVED"
}

# agent_series: the names the agent writes, one a line.
agent_series() { "$NAMES" agent "$TOP/launcher/host/metrics.c"; }

# foreign FILE: the series FILE reads that are neither the agent's, nor
# recorded by the rules, nor node_exporter's node_textfile_mtime_seconds.
foreign() {
	local known=$BATS_TEST_TMPDIR/known
	{ agent_series; "$NAMES" records "$MON/ksmenable.rules.yml"; echo node_textfile_mtime_seconds; } | sort -u >"$known"
	"$NAMES" names "$1" | comm -23 - "$known"
}

@test "the rules: promtool check rules passes, and their unit tests pass offline" {
	run -0 promtool check rules "$MON/ksmenable.rules.yml"
	[[ $output == *"SUCCESS: "*" rules found"* ]]
	# In a network namespace of its own: nothing to reach (a user namespace too, without root).
	local ns=(unshare -n)
	[ "$(id -u)" = 0 ] || ns=(unshare -rn)
	run -0 "${ns[@]}" promtool test rules "$MON/ksmenable.rules.test.yml"
	[[ $output == *SUCCESS* ]]
}

@test "the unit tests cover every alert, each with a case where it fires" {
	local alert
	for alert in $(sed -n 's/^ *- alert: //p' "$MON/ksmenable.rules.yml"); do
		grep -q "alertname: $alert\$" "$MON/ksmenable.rules.test.yml" || { echo "no test of $alert"; return 1; }
		# Some test of it expects an alert, not only none.
		awk -v a="$alert" '$0 ~ "alertname: " a "$" { s = 1; next } s && /exp_alerts: \[\]/ { s = 0 }
			s && /exp_labels/ { ok = 1 } END { exit !ok }' "$MON/ksmenable.rules.test.yml" ||
			{ echo "no test where $alert fires"; return 1; }
	done
	[ "$(grep -c '^ *- alert: ' "$MON/ksmenable.rules.yml")" = 7 ]
}

@test "a broken rule fails the unit tests: they judge the rules, not only run" {
	local d=$BATS_TEST_TMPDIR/mutant
	mkdir "$d"
	cp "$MON"/ksmenable.rules*.yml "$d"
	sed -i 's/ksmenable_security_domains_unaccepted > 1/ksmenable_security_domains_unaccepted > 0/' "$d/ksmenable.rules.yml"
	run -1 promtool test rules "$d/ksmenable.rules.test.yml"
	[[ $output == *KsmenableCrossDomainMerging* ]]
	# The rule before issue 33, which fired for domains that the policy accepted.
	cp "$MON/ksmenable.rules.yml" "$d"
	sed -i 's/ksmenable_security_domains_unaccepted > 1/ksmenable_security_domains > 1/' "$d/ksmenable.rules.yml"
	run -1 promtool test rules "$d/ksmenable.rules.test.yml"
	[[ $output == *KsmenableCrossDomainMerging* ]]
}

@test "every query of the dashboard parses (each one a recording rule for promtool)" {
	local rules=$BATS_TEST_TMPDIR/dashboard.rules.yml n
	"$NAMES" dashboard-rules "$MON/ksmenable-dashboard.json" >"$rules"
	n=$(grep -c 'record: dashboard_query_' "$rules")
	# Every target's expr, and the instance variable's metric.
	[ "$n" = $(($(grep -c '"expr":' "$MON/ksmenable-dashboard.json") + 1)) ]
	run -0 promtool check rules "$rules"
	[[ $output == *"SUCCESS: $n rules found"* ]]
	# A query that does not parse fails the check.
	sed 's/ksmenable_tuner_decisions_total{/ksmenable_tuner_decisions_total{{/' "$MON/ksmenable-dashboard.json" \
		>"$BATS_TEST_TMPDIR/broken.json"
	"$NAMES" dashboard-rules "$BATS_TEST_TMPDIR/broken.json" >"$rules"
	run -1 promtool check rules "$rules"
}

@test "the dashboard shows what an operator asks: savings per rule and per pod, ksmd CPU, the tuner, refused enables" {
	local names
	names=$("$NAMES" names "$MON/ksmenable-dashboard.json")
	for s in rule:ksmenable_merged_bytes:sum pod:ksmenable_saved_bytes:sum instance:ksmenable_ksmd_cpu:percent_rate5m \
		ksmenable_tuner_phase ksmenable_tuner_decisions_total ksmenable_rule_processes; do
		grep -qx "$s" <<<"$names" || { echo "the dashboard does not read $s"; return 1; }
	done
	grep -q '"expr": "ksmenable_rule_processes{result=\\"refused\\"' "$MON/ksmenable-dashboard.json"
}

@test "the rules and the dashboard read only the agent's series, their records and node_textfile_mtime_seconds" {
	run -0 agent_series
	# The reading of metrics.c finds the families of each kind: sysfs's table, the cgroups', written out.
	for s in ksmenable_pages_sharing ksmenable_cgroup_candidate_bytes ksmenable_tuner_phase ksmenable_security_domains; do
		grep -qx "$s" <<<"$output"
	done
	run -0 foreign "$MON/ksmenable.rules.yml"
	[ -z "$output" ] || { echo "not written by the agent: $output"; return 1; }
	run -0 foreign "$MON/ksmenable-dashboard.json"
	[ -z "$output" ] || { echo "not written by the agent: $output"; return 1; }
	# A series the agent does not write is found.
	sed 's/ksmenable_tuner_decisions_total/ksmenable_tuner_choices_total/' "$MON/ksmenable-dashboard.json" \
		>"$BATS_TEST_TMPDIR/invented.json"
	run -0 foreign "$BATS_TEST_TMPDIR/invented.json"
	[ "$output" = ksmenable_tuner_choices_total ]
}

@test "a command's real metrics file, with the machine's and the cgroups' series, holds only names read from metrics.c" {
	requires root ksm
	local dir=$BATS_TEST_TMPDIR/textfile real=$BATS_TEST_TMPDIR/real.prom
	mkdir "$dir"
	KNOBS_SAVED=$BATS_TEST_TMPDIR/knobs.saved
	save_knobs "$KNOBS_SAVED"
	# The command copies the file once the machine's series are in it (2 s after the start).
	run -0 "$KSM_RUN" -q --interval=0.2 --metrics-file="$dir/ksmenable.prom" -- sh -c '
		i=0
		until grep -q "^ksmenable_tuner_phase" "$1" 2>/dev/null && grep -q "^ksmenable_cgroup_candidate_bytes" "$1"; do
			i=$((i + 1)); [ $i -lt 100 ] || exit 1; sleep 0.1
		done
		cp "$1" "$2"' sh "$dir/ksmenable.prom" "$real"
	grep -q '^ksmenable_command_processes{' "$real"
	run -0 comm -23 <(grep -v '^#' "$real" | sed 's/[{ ].*//' | sort -u) <(agent_series)
	[ -z "$output" ] || { echo "written but not read from metrics.c: $output"; return 1; }
}

@test "the alert and the panel that ksm-run-daemon(8) and README show are those of the files" {
	local rules=$MON/ksmenable.rules.yml man
	man=$(sed 's/\\-/-/g' "$TOP/man/ksm-run-daemon.8")
	# The alert, its expression and its for: as the rules file has them.
	grep -q '^      - alert: KsmenableKsmdOverCpuBudget$' "$rules"
	grep -A1 'alert: KsmenableKsmdOverCpuBudget$' "$rules" | grep -q 'expr: instance:ksmenable_ksmd_cpu:percent_rate5m > 50$'
	grep -A2 'alert: KsmenableKsmdOverCpuBudget$' "$rules" | grep -q 'for: 10m$'
	grep -A2 '^- alert: KsmenableKsmdOverCpuBudget' <<<"$man" | grep -q '^  expr: instance:ksmenable_ksmd_cpu:percent_rate5m > 50$'
	grep -A2 '^- alert: KsmenableKsmdOverCpuBudget' "$TOP/README.md" | grep -q '^  expr: instance:ksmenable_ksmd_cpu:percent_rate5m > 50$'
	# The panel's query, in the dashboard.
	grep -qxF 'pod:ksmenable_saved_bytes:sum{instance=~"$instance"}' <<<"$man"
	grep -qF '"expr": "pod:ksmenable_saved_bytes:sum{instance=~\"$instance\"}"' "$MON/ksmenable-dashboard.json"
	grep -q '`pod:ksmenable_saved_bytes:sum`' "$TOP/README.md"
	# Where the metrics file goes for Debian's node_exporter, and where the files are installed.
	grep -q '^\.I /var/lib/prometheus/node-exporter$' <<<"$man"
	grep -q 'share/ksmenable' <<<"$man"
	grep -q '`/usr/local/share/ksmenable/`' "$TOP/README.md"
}

@test "make install puts the rules, their tests and the dashboard in share/ksmenable; uninstall removes them" {
	local d=$BATS_TEST_TMPDIR/stage f
	# install-monitoring: what make install adds for them, without the build (tests/09-build.bats).
	run -0 make -C "$TOP" -s install-monitoring DESTDIR="$d" PREFIX=/usr
	for f in ksmenable.rules.yml ksmenable.rules.test.yml ksmenable-dashboard.json; do
		cmp "$MON/$f" "$d/usr/share/ksmenable/$f"
		[ "$(stat -c %a "$d/usr/share/ksmenable/$f")" = 644 ]
	done
	# The installed tests find the installed rules.
	run -0 promtool test rules "$d/usr/share/ksmenable/ksmenable.rules.test.yml"
	run -0 make -C "$TOP" -s uninstall DESTDIR="$d" PREFIX=/usr
	[ -z "$(find "$d" ! -type d)" ]
}
