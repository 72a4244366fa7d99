#!/usr/bin/env python3
"""The DaemonSet of deploy/kubernetes/, read as the agent depends on it.

  daemonset.py check DAEMONSET CONFIGMAP VERSION
      every field the agent needs is there (problems on stderr, exit 1)
  daemonset.py policy CONFIGMAP
      the policy file that the ConfigMap holds
  daemonset.py podman DAEMONSET [--container NAME] [--map HOST=PATH]...
          [--without CAP]... --policy FILE --image IMAGE
      the arguments of `podman run` that run the DaemonSet's container
      (the daemon's, or NAME) as the kubelet would (one a line): its
      namespaces, capabilities, mounts and arguments; a hostPath mapped
      elsewhere by --map, the policy from FILE, CAP left out of the added
      capabilities.

The pod has two containers: the daemon's (--daemon), and the watch that
puts the knobs back when the daemon dies without a word (--restore
--watch), with no capability and the knobs' and the state's mounts.

For tests/54-image.bats (no cluster: kubectl is not used).
"""
import os
import sys

import yaml


def load(path, kind):
    with open(path) as f:
        docs = [d for d in yaml.safe_load_all(f) if d]
    found = [d for d in docs if d.get("kind") == kind]
    if len(found) != 1:
        sys.exit("%s: %d objects of kind %s, not one" % (path, len(found), kind))
    return found[0]


def pod_of(ds):
    return ds["spec"]["template"]["spec"]


def container(ds, name=None, flag="--daemon"):
    """The container named NAME, else the one whose args hold FLAG."""
    found = [c for c in pod_of(ds)["containers"]
             if (c["name"] == name if name else flag in c.get("args", []))]
    if len(found) != 1:
        sys.exit("the DaemonSet has %d containers %s, not one" % (len(found), name or "with " + flag))
    return found[0]


def the_container(ds):
    return container(ds)


def option(args, name):
    """The value of --NAME=VALUE in ARGS, or None."""
    for a in args:
        if a.startswith("--%s=" % name):
            return a.split("=", 1)[1]
    return None


def mounts(ds, c=None):
    """Each mount of C (the daemon's container) as (mountPath, mount, volume)."""
    volumes = {v["name"]: v for v in pod_of(ds).get("volumes", [])}
    out = []
    for m in (c or the_container(ds)).get("volumeMounts", []):
        if m["name"] not in volumes:
            sys.exit("mount %s: no volume of that name" % m["mountPath"])
        out.append((m["mountPath"], m, volumes[m["name"]]))
    return out


def check(ds_path, cm_path, version):
    ds, cm = load(ds_path, "DaemonSet"), load(cm_path, "ConfigMap")
    bad = []

    def need(ok, what):
        if not ok:
            bad.append(what)

    pod, c = pod_of(ds), the_container(ds)
    sel = ds["spec"]["selector"]["matchLabels"]
    labels = ds["spec"]["template"]["metadata"].get("labels", {})
    need(all(labels.get(k) == v for k, v in sel.items()), "the selector does not match the pod's labels")
    need(pod.get("hostPID") is True, "hostPID: true (the host's processes)")
    args = c.get("args", [])
    need("--daemon" in args, "args: --daemon")
    policy, metrics = option(args, "policy"), option(args, "metrics-file")
    need(policy is not None, "args: --policy=FILE")
    need(metrics is not None and metrics.endswith(".prom"), "args: --metrics-file=DIR/NAME.prom")
    need(c.get("image", "").rsplit(":", 1)[-1] == version, "image: tagged %s (include/ksmenable.h)" % version)

    by_path = {p: (m, v) for p, m, v in mounts(ds)}
    used = {m["name"] for m, _ in by_path.values()}
    need(used == {v["name"] for v in pod.get("volumes", [])}, "a volume that no mount uses")

    def host_mount(path, host, writable, kind, paths=by_path):
        m, v = paths.get(path, (None, None))
        hp = (v or {}).get("hostPath", {})
        need(m is not None and hp.get("path") == host and hp.get("type") == kind and
             bool(m.get("readOnly")) != writable,
             "%s: hostPath %s (%s), %s" % (path, host, kind, "writable" if writable else "read-only"))

    host_mount("/sys/kernel/mm/ksm", "/sys/kernel/mm/ksm", True, "Directory")
    host_mount("/run/ksm-run", "/run/ksm-run", True, "DirectoryOrCreate")
    # The kubelet's names, for rules by namespace, pod-name and container-name.
    host_mount("/var/log/pods", "/var/log/pods", False, "DirectoryOrCreate")
    host_mount("/var/log/containers", "/var/log/containers", False, "DirectoryOrCreate")
    if metrics:
        d = os.path.dirname(metrics)
        host_mount(d, by_path.get(d, ({}, {}))[1].get("hostPath", {}).get("path"), True, "DirectoryOrCreate")
    m, v = by_path.get(policy, (None, None))
    key = (m or {}).get("subPath")
    need(m is not None and m.get("readOnly") is True and
         v.get("configMap", {}).get("name") == cm["metadata"]["name"] and key in cm.get("data", {}),
         "%s: the ConfigMap's key, by subPath, read-only (its directory is 0777)" % policy)

    sc = c.get("securityContext", {})
    caps = sc.get("capabilities", {})
    need(sc.get("privileged") is not True, "not privileged")
    need(sc.get("runAsUser", 0) == 0, "runAsUser: 0 (the knobs are root's)")
    need(caps.get("drop") == ["ALL"], "capabilities: drop ALL")
    need(sorted(caps.get("add", [])) == ["DAC_READ_SEARCH", "SYS_PTRACE"],
         "capabilities: add SYS_PTRACE and DAC_READ_SEARCH, nothing else")
    need(sc.get("readOnlyRootFilesystem") is True, "readOnlyRootFilesystem: true")
    need(sc.get("allowPrivilegeEscalation") is False, "allowPrivilegeEscalation: false")
    need(any(t.get("operator") == "Exists" and "key" not in t and "effect" not in t
             for t in pod.get("tolerations", [])), "a toleration of every taint (operator: Exists alone)")
    req = c.get("resources", {}).get("requests", {})
    need("cpu" in req and "memory" in req, "resources: requests of cpu and memory")

    # The way back when the daemon dies without a word: its own container, no capability.
    w = container(ds, flag="--restore")
    wargs = w.get("args", [])
    need(wargs[:1] == ["--restore"] and option(wargs, "watch") is not None,
         "a container of args --restore --watch=SECONDS (the knobs back when the daemon is killed)")
    need(w.get("image") == c.get("image"), "the watch's image: the daemon's")
    wsc = w.get("securityContext", {})
    need(wsc.get("capabilities", {}).get("drop") == ["ALL"] and not wsc.get("capabilities", {}).get("add"),
         "the watch: capabilities drop ALL, add none")
    need(wsc.get("readOnlyRootFilesystem") is True and wsc.get("allowPrivilegeEscalation") is False and
         wsc.get("privileged") is not True, "the watch: read-only, no privilege")
    w_paths = {p: (m, v) for p, m, v in mounts(ds, w)}
    host_mount("/sys/kernel/mm/ksm", "/sys/kernel/mm/ksm", True, "Directory", w_paths)
    host_mount("/run/ksm-run", "/run/ksm-run", True, "DirectoryOrCreate", w_paths)
    need(set(w_paths) == {"/sys/kernel/mm/ksm", "/run/ksm-run"}, "the watch mounts the knobs and the state alone")
    need("memory" in w.get("resources", {}).get("limits", {}), "the watch: a memory limit")
    # AppArmor: the field (Kubernetes 1.30 and later) and the annotation (before) agree, per container.
    notes = ds["spec"]["template"]["metadata"].get("annotations", {})
    for k in pod["containers"]:
        field = k.get("securityContext", {}).get("appArmorProfile", {}).get("type")
        note = notes.get("container.apparmor.security.beta.kubernetes.io/" + k["name"])
        need(field is not None and note == {"Unconfined": "unconfined", "RuntimeDefault": "runtime/default"}.get(field),
             "container %s: appArmorProfile and the annotation of Kubernetes before 1.30 agree" % k["name"])
    for b in bad:
        print("%s: missing or wrong: %s" % (ds_path, b), file=sys.stderr)
    return 1 if bad else 0


def policy_text(cm_path):
    data = load(cm_path, "ConfigMap").get("data", {})
    if len(data) != 1:
        sys.exit("%s: %d keys, not one" % (cm_path, len(data)))
    sys.stdout.write(next(iter(data.values())))
    return 0


def memory_bytes(q):
    units = {"Ki": 1 << 10, "Mi": 1 << 20, "Gi": 1 << 30}
    for u, n in units.items():
        if q.endswith(u):
            return int(q[:-2]) * n
    return int(q)


def podman_args(ds_path, rest):
    ds = load(ds_path, "DaemonSet")
    maps, without, policy, image, name = {}, set(), None, None, None
    while rest:
        flag, value, rest = rest[0], rest[1], rest[2:]
        if flag == "--container":
            name = value
        elif flag == "--map":
            host, path = value.split("=", 1)
            maps[host] = path
        elif flag == "--without":
            without.add(value)
        elif flag == "--policy":
            policy = value
        elif flag == "--image":
            image = value
        else:
            sys.exit("podman: unknown %s" % flag)
    if not policy or not image:
        sys.exit("podman: --policy and --image are needed")
    pod, c = pod_of(ds), container(ds, name)
    sc = c.get("securityContext", {})
    caps = sc.get("capabilities", {})
    out = ["--pid=host" if pod.get("hostPID") else "--pid=private",
           "--network=host" if pod.get("hostNetwork") else "--network=none",
           "--user=%d:%d" % (sc.get("runAsUser", 0), sc.get("runAsGroup", 0))]
    if sc.get("privileged"):
        out.append("--privileged")
    if "ALL" in caps.get("drop", []):
        out.append("--cap-drop=all")
    out += ["--cap-add=%s" % cap for cap in caps.get("add", []) if cap not in without]
    if sc.get("readOnlyRootFilesystem"):
        out.append("--read-only")
    if sc.get("allowPrivilegeEscalation") is False:
        out.append("--security-opt=no-new-privileges")
    limit = c.get("resources", {}).get("limits", {}).get("memory")
    if limit:
        out.append("--memory=%d" % memory_bytes(limit))
    for path, m, v in mounts(ds, c):
        ro = ":ro" if m.get("readOnly") else ""
        if "hostPath" in v:
            host = maps.get(v["hostPath"]["path"], v["hostPath"]["path"])
            if v["hostPath"].get("type") == "DirectoryOrCreate":
                os.makedirs(host, mode=0o755, exist_ok=True)     # as the kubelet does
            out.append("--volume=%s:%s%s" % (host, path, ro))
        elif "configMap" in v:
            out.append("--volume=%s:%s:ro" % (policy, path))
        else:
            sys.exit("podman: volume %s: neither hostPath nor configMap" % m["name"])
    out.append(image)
    out += c.get("args", [])
    print("\n".join(out))
    return 0


def main(argv):
    if len(argv) == 5 and argv[1] == "check":
        return check(argv[2], argv[3], argv[4])
    if len(argv) == 3 and argv[1] == "policy":
        return policy_text(argv[2])
    if len(argv) >= 3 and argv[1] == "podman":
        return podman_args(argv[2], argv[3:])
    sys.exit(__doc__)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
