#!/usr/bin/env bats
# The host agent's container image and DaemonSet: `make image` builds,
# offline with podman, an image of a static ksm-run alone; the manifest
# (deploy/kubernetes/) holds what the agent depends on; and the image, run
# with that manifest's own container spec (hostPID, its two capabilities,
# not privileged, its mounts), enables the processes a policy names, writes
# the metrics file, and restores the knobs when the container stops, or,
# killed, its second container does.
# Podman's storage, state and configuration are this file's, under its
# temporary directory, and its images and containers are removed at the end.
# ci: lock

load helpers
load launcher_helpers
load attach_helpers

LAUNCHER_REQUIRES="root ksm cmd:podman cmd:runc"

DS=$TOP/deploy/kubernetes/ksmenable-daemonset.yaml
CM=$TOP/deploy/kubernetes/ksmenable-policy.yaml
VERSION=$(sed -n 's/^#define KSMENABLE_VERSION "\(.*\)"/\1/p' "$TOP/include/ksmenable.h")
IMAGE=localhost/ksmenable-test:$VERSION
CTR=ksmenable-test-$$

# Debian's python3-yaml is Debian's python3's: another python3 first on
# PATH (pyenv) may lack it.
yaml_python() {
	local py
	for py in python3 /usr/bin/python3; do
		"$py" -c 'import yaml' 2>/dev/null && { echo "$py"; return 0; }
	done
	return 1
}
daemonset() { "$(yaml_python)" "$TOP/tests/helpers/daemonset.py" "$@"; }

# Podman 4.3 as this machine runs it: runc (crun fails on this host's hybrid
# cgroups), no default ulimits (setting RLIMIT_NPROC is refused here).
podman_setup() {
	local d=$BATS_FILE_TMPDIR/podman
	mkdir -p "$d"
	cat >"$d/containers.conf" <<-EOF
		[containers]
		default_ulimits = []
		[engine]
		runtime = "runc"
		cgroup_manager = "cgroupfs"
		events_logger = "file"
	EOF
	export CONTAINERS_CONF=$d/containers.conf
	PODMAN="podman --root $d/root --runroot $d/run --tmpdir $d/tmp --events-backend file --runtime runc"
}
pm() { $PODMAN "$@"; }

setup_file_extra() {
	podman_setup
	command -v podman >/dev/null && command -v musl-gcc >/dev/null || return 0
	make -C "$TOP" -s image O="$BATS_FILE_TMPDIR/build" IMAGE="$IMAGE" PODMAN="$PODMAN" >/dev/null
}

setup_extra() {
	podman_setup
	requires cmd:musl-gcc
	yaml_python >/dev/null || skip_or_fail "needs Debian's python3-yaml (tests/install-deps)"
}

teardown_extra() {
	local n
	pm rm --force --time 0 "$CTR" "$CTR-watch" >/dev/null 2>&1
	for n in "${!WL_PIDS[@]}"; do kill -KILL "${WL_PIDS[$n]}" 2>/dev/null; done
	return 0
}

# Nothing of podman left: no container, no image, no mount of its storage.
teardown_file() {
	local rc=0
	podman_setup
	pm rm --all --force --time 0 >/dev/null 2>&1
	pm rmi --all --force >/dev/null 2>&1
	! grep -qF "$BATS_FILE_TMPDIR/podman" /proc/self/mounts || { echo "podman left a mount" >&2; rc=1; }
	clear_launcher_state || rc=1
	restore_knobs || rc=1
	return $rc
}

# policy TEXT: the test's policy file, root's and 0644 in a 0755 directory; its path in POLICY.
policy() {
	mkdir -p "$BATS_TEST_TMPDIR/etc"
	chmod 755 "$BATS_TEST_TMPDIR/etc"
	POLICY=$BATS_TEST_TMPDIR/etc/ksmenable.conf
	printf '%s\n' "$1" >"$POLICY"
	chmod 644 "$POLICY"
}

# run_agent [--without CAP]: the DaemonSet's container, detached, with the
# test's policy and the textfile directory TEXTFILES; its host pid in AGENT.
run_agent() {
	local -a args
	TEXTFILES=$BATS_TEST_TMPDIR/textfile
	mkdir -p "$BATS_TEST_TMPDIR/kubelet"
	mapfile -t args < <(daemonset podman "$DS" --map /var/lib/prometheus/node-exporter="$TEXTFILES" \
		--map /var/log/pods="$BATS_TEST_TMPDIR/kubelet/pods" \
		--map /var/log/containers="$BATS_TEST_TMPDIR/kubelet/containers" \
		--policy "$POLICY" --image "$IMAGE" "$@")
	[ ${#args[@]} -gt 3 ] || return 1
	pm run --detach --name "$CTR" "${args[@]}" >/dev/null || return 1
	AGENT=$(pm inspect --format '{{.State.Pid}}' "$CTR")
	wait_until 5 registered "$AGENT" || { pm logs "$CTR" >&2; return 1; }
}
agent_logged() { pm logs "$CTR" 2>&1 | grep -qF -- "$1"; }

ksm_on() {
	if [ "$(merge_any_unset)" = 0 ]; then merge_any_is "$1" yes; else grep -q '^VmFlags:.* mg' "/proc/$1/smaps"; fi
}
ksm_off() { ! grep -q '^VmFlags:.* mg' "/proc/$1/smaps" && { [ "$(merge_any_unset)" != 0 ] || merge_any_is "$1" no; }; }

@test "make image: a static ksm-run alone, in an image FROM scratch, built offline" {
	run -0 pm image inspect --format '{{.Config.Entrypoint}} {{.Config.Cmd}} {{len .RootFS.Layers}}' "$IMAGE"
	[ "$output" = "[/usr/bin/ksm-run] [--daemon] 1" ]
	local root files
	root=$(pm image mount "$IMAGE")
	files=$(cd "$root" && find . ! -type d)
	readelf -l "$root/usr/bin/ksm-run" >"$BATS_TEST_TMPDIR/elf"
	pm image unmount "$IMAGE" >/dev/null
	[ "$files" = ./usr/bin/ksm-run ]
	run ! grep -q 'INTERP\|DYNAMIC' "$BATS_TEST_TMPDIR/elf"
	run -0 pm run --rm --network=none "$IMAGE" --version
	[ "$output" = "ksm-run $VERSION" ]
	# The image as a file, for a registry.
	tar -tf "$BATS_FILE_TMPDIR/build/image/ksmenable.oci.tar" index.json
}

@test "the manifest: the YAML parses, the DaemonSet has what the agent depends on, its policy is valid in the image" {
	run -0 daemonset check "$DS" "$CM" "$VERSION"
	# The policy as shipped, and with its example rule uncommented, mounted
	# as the DaemonSet mounts it (a file of its own in a directory of root's).
	daemonset policy "$CM" >"$BATS_TEST_TMPDIR/shipped.conf"
	sed -E 's/^# (\[rule |[a-z-]+ = )/\1/' "$BATS_TEST_TMPDIR/shipped.conf" >"$BATS_TEST_TMPDIR/example.conf"
	chmod 644 "$BATS_TEST_TMPDIR"/*.conf
	grep -q '^\[rule ' "$BATS_TEST_TMPDIR/example.conf"
	local f
	for f in shipped example; do
		run -0 pm run --rm --network=none --read-only \
			--volume "$BATS_TEST_TMPDIR/$f.conf:/etc/ksmenable/ksmenable.conf:ro" "$IMAGE" \
			--check-config=/etc/ksmenable/ksmenable.conf
		[[ $output == *"the policy is valid"* ]]
	done
	# Why by subPath: the ConfigMap's own directory, mode 0777, is refused.
	mkdir -m 0777 "$BATS_TEST_TMPDIR/configmap"
	cp "$BATS_TEST_TMPDIR/shipped.conf" "$BATS_TEST_TMPDIR/configmap/ksmenable.conf"
	run -1 pm run --rm --network=none --read-only --volume "$BATS_TEST_TMPDIR/configmap:/etc/ksmenable:ro" \
		"$IMAGE" --check-config=/etc/ksmenable/ksmenable.conf
	[[ $output == *"the policy's directory is writable by others"* ]]
	# The check finds what is missing.
	sed 's/hostPID: true/hostPID: false/; s/\[SYS_PTRACE, DAC_READ_SEARCH\]/[SYS_PTRACE, SYS_ADMIN]/' "$DS" \
		>"$BATS_TEST_TMPDIR/bad.yaml"
	run -1 daemonset check "$BATS_TEST_TMPDIR/bad.yaml" "$CM" "$VERSION"
	[[ $output == *"hostPID: true"* ]]
	[[ $output == *"add SYS_PTRACE and DAC_READ_SEARCH, nothing else"* ]]
	# AppArmor for Kubernetes before 1.30 (the annotation) must say what the field says.
	sed 's|beta.kubernetes.io/restore-watch: unconfined|beta.kubernetes.io/restore-watch: runtime/default|' "$DS" \
		>"$BATS_TEST_TMPDIR/apparmor.yaml"
	run -1 daemonset check "$BATS_TEST_TMPDIR/apparmor.yaml" "$CM" "$VERSION"
	[[ $output == *"container restore-watch: appArmorProfile and the annotation of Kubernetes before 1.30 agree"* ]]
	# No way back when the daemon is killed: refused.
	sed 's/args: \[--restore, --watch=1\]/args: [--version]/' "$DS" >"$BATS_TEST_TMPDIR/nowatch.yaml"
	run -1 daemonset check "$BATS_TEST_TMPDIR/nowatch.yaml" "$CM" "$VERSION"
	[[ $output == *"containers with --restore, not one"* ]]
}

@test "run as the DaemonSet runs it: named processes enabled, metrics written, knobs restored at the stop" {
	local before named other
	start_workload named -- "$(attachee)" sleep 8
	start_workload other -- "$PROGS/dupmem" mmap=4 wait
	named=$(wl_pid named) other=$(wl_pid other)
	before=$(knobs_snapshot)
	policy "[rule test]
exe = $(attachee)
user = root
action = auto"
	run_agent
	wait_until 5 ksm_on "$named" || { pm logs "$CTR"; return 1; }
	wait_until 5 agent_logged "rule test: $named (attachee): enabled"
	ksm_off "$other"
	# The metrics, in the host's directory, and the tuner at work.
	wait_until 5 test -s "$TEXTFILES/ksmenable.prom"
	wait_until 5 grep -q '^ksmenable_rule_processes{result="enabled",rule="test"} 1$' "$TEXTFILES/ksmenable.prom"
	grep -q '^ksmenable_tuner_phase{' "$TEXTFILES/ksmenable.prom"
	# Registered in the host's /run/ksm-run, as the host's ksm-run sees it.
	run -0 "$KSM_RUN" --status
	grep -Eq "^ +$AGENT daemon " <<<"$output"
	# TERM, as the kubelet stops it: exit 0, the knobs as before, no file left.
	run -0 pm stop --time 10 "$CTR"
	run -0 pm inspect --format '{{.State.ExitCode}}' "$CTR"
	[ "$output" = 0 ] || { pm logs "$CTR"; return 1; }
	agent_logged "the knobs from before are restored"
	[ "$(knobs_snapshot)" = "$before" ]
	[ ! -e "$TEXTFILES/ksmenable.prom" ]
	run ! registered "$AGENT"
	pm rm "$CTR" >/dev/null
	# The target never noticed: attachee exits 0 only when nothing it saw changed.
	wait_workload named
	[ "$(wl_status named)" = 0 ]
}

@test "the daemon's container killed mid-boost (as by an OOM kill): the restore-watch container puts the knobs back" {
	# Issue 33: Kubernetes runs nothing after a container; a kill left ksmd at the boost's rate.
	local before args
	before=$(knobs_snapshot)
	policy "[rule test]
exe = /nonexistent/program
user = root
action = auto"
	mapfile -t args < <(daemonset podman "$DS" --container restore-watch --policy "$POLICY" --image "$IMAGE")
	pm run --detach --name "$CTR-watch" "${args[@]}" >/dev/null
	wait_until 5 eval 'pm logs "$CTR-watch" 2>&1 | grep -q "watching /run/ksm-run/state every 1 s"'
	run_agent
	wait_until 20 knob_is pages_to_scan 5000 || { pm logs "$CTR"; return 1; }
	pm kill --signal KILL "$CTR" >/dev/null
	wait_until 5 knobs_are "$before" || { knobs_snapshot; pm logs "$CTR-watch"; return 1; }
	[ ! -e "$STATE_FILE" ]
	pm logs "$CTR-watch" 2>&1 | grep -q "restored the KSM knobs saved in /run/ksm-run/state: every ksm-run that used them ended"
	# The watch stops at TERM, as the kubelet stops it.
	run -0 pm stop --time 10 "$CTR-watch"
	run -0 pm inspect --format '{{.State.ExitCode}}' "$CTR-watch"
	[ "$output" = 0 ]
}

# rules_enabled RULE N: the metrics file says N processes enabled by RULE.
rules_enabled() { grep -q "^ksmenable_rule_processes{result=\"enabled\",rule=\"$1\"} $2\$" "$TEXTFILES/ksmenable.prom"; }

@test "least privilege: without SYS_PTRACE the agent enables nothing (it cannot read a process's exe, nor attach)" {
	start_workload named -- "$(attachee)" sleep 8
	policy "[rule test]
exe = $(attachee)
user = root
action = auto"
	run_agent --without SYS_PTRACE
	wait_until 5 test -s "$TEXTFILES/ksmenable.prom"
	# The agent judges every process at its start; a second later, still nothing.
	sleep 1
	rules_enabled test 0
	ksm_off "$(wl_pid named)"
	run -0 pm stop --time 10 "$CTR"
}

@test "least privilege: without DAC_READ_SEARCH another user's process is refused; with it, enabled" {
	stage_for_nobody attachee
	start_workload mine -- "${NOBODY[@]}" "$NB_PROGS/attachee" sleep 10
	local pid
	pid=$(wl_pid mine)
	policy "[rule nobody]
exe = $NB_PROGS/attachee
user = nobody
action = auto"
	run_agent --without DAC_READ_SEARCH
	wait_until 5 agent_logged "rule nobody: $pid (attachee): refused: " || { pm logs "$CTR"; return 1; }
	ksm_off "$pid"
	run -0 pm stop --time 10 "$CTR"
	pm rm "$CTR" >/dev/null
	run_agent
	wait_until 5 ksm_on "$pid" || { pm logs "$CTR"; return 1; }
	agent_logged "rule nobody: $pid (attachee): enabled"
	run -0 pm stop --time 10 "$CTR"
}
