/*
 * Unit tests of what the host agent matches processes by: the cgroup line
 * of /proc/PID/cgroup as recorded on v1, hybrid and v2 hosts (and text
 * that no kernel writes), and the rules of a policy against facts made up
 * here.  No root, no process touched.
 */
#include <stdio.h>
#include <string.h>

#include "policy/agent.h"
#include "policy/facts.h"
#include "policy/match.h"
#include "unit.h"

static void test_cgroup_lines(void)
{
	char path[256];

	/* cgroup v2 only (Debian 12, the 6.1 guest). */
	CHECK(proc_cgroup_parse("0::/system.slice/php8.2-fpm.service\n", path, sizeof path) == 0);
	CHECK(!strcmp(path, "/system.slice/php8.2-fpm.service"));
	/* v1, recorded on this project's machine: the memory controller's line. */
	CHECK(proc_cgroup_parse("9:name=systemd:/\n8:pids:/\n4:memory:/process_api/66892b21\n3:cpuset:/\n0::/\n",
				path, sizeof path) == 0);
	CHECK(!strcmp(path, "/process_api/66892b21"));
	/* Hybrid (systemd's default before v2): memory on v1 shared with another controller. */
	CHECK(proc_cgroup_parse("12:cpu,memory:/kubepods/burstable/pod1/abc\n1:name=systemd:/x\n0::/x\n",
				path, sizeof path) == 0);
	CHECK(!strcmp(path, "/kubepods/burstable/pod1/abc"));
	/* A ':' inside a cgroup's name is part of the path. */
	CHECK(proc_cgroup_parse("0::/a:b/c\n", path, sizeof path) == 0 && !strcmp(path, "/a:b/c"));
	/* In doubt, unknown: a hierarchy twice (a forged line), no path, not the kernel's format, too long. */
	CHECK(proc_cgroup_parse("0::/user.slice/x\n0::/system.slice/php.service\n", path, sizeof path) == -1);
	CHECK(proc_cgroup_parse("4:memory:/a\n4:memory:/b\n0::/\n", path, sizeof path) == -1);
	CHECK(proc_cgroup_parse("", path, sizeof path) == -1);
	CHECK(proc_cgroup_parse("garbage\n", path, sizeof path) == -1);
	CHECK(proc_cgroup_parse("x::/a\n", path, sizeof path) == -1);
	CHECK(proc_cgroup_parse("0::relative\n", path, sizeof path) == -1);
	CHECK(proc_cgroup_parse("0::/a-path-longer-than-the-buffer\n", path, 8) == -1);
}

static void print_error(void *ctx, const char *file, int line, const char *message)
{
	(void)ctx;
	fprintf(stderr, "%s:%d: %s\n", file, line, message);
}

static struct policy parse_policy(const char *text)
{
	struct policy p = { 0 };

	CHECK(policy_parse(&p, "t.conf", text, print_error, NULL) == 0);
	return p;
}

/* Made up here, nothing read: root made the first ROOT_MADE bytes of CGROUP's cgroups (-1: all). */
static struct proc_facts facts_made(const char *cgroup, long root_made, const char *exe, long uid)
{
	struct proc_facts f = { .pid = 4242, .read = FACT_ALL };

	if (cgroup) {
		f.cgroup_known = true;
		snprintf(f.cgroup, sizeof f.cgroup, "%s", cgroup);
		f.cgroup_root_made = root_made < 0 ? strlen(cgroup) : (size_t)root_made;
		proc_facts_names(&f);
	}
	if (exe) {
		f.exe_known = true;
		f.exe_trusted = true;
		snprintf(f.exe, sizeof f.exe, "%s", exe);
	}
	if (uid >= 0) {
		f.uid_known = true;
		f.uid = (uid_t)uid;
	}
	return f;
}

static struct proc_facts facts(const char *cgroup, const char *exe, long uid)
{
	return facts_made(cgroup, -1, exe, uid);
}

#define POD "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod3f2a0c1d_5b6e_4a4b_9c9d_0123456789ab.slice/" \
	    "cri-containerd-" "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef.scope"

static void test_rules(void)
{
	struct policy p = parse_policy(
		"[rule keys]\nuser = 33\nexe = /usr/sbin/keyd\naction = off\n"
		"[rule web]\nuser = 33\naction = prctl\n"
		"[rule php]\nunit = php8.2-fpm.service\naction = prctl\n"
		"[rule jvm]\npod = 3F2A0C1D-5b6e-4a4b-9c9d-0123456789ab\ncontainer = 01234567\nqos = burstable\n"
		"exe = /usr/lib/jvm/*/bin/java\naction = auto\n"
		"[rule slices]\ncgroup = /machine.slice/*\naction = auto\n");
	struct proc_facts f;

	/* The first rule that matches decides. */
	f = facts("/user.slice", "/usr/sbin/keyd", 33);
	CHECK(policy_match(&p, &f) == &p.rules[0]);
	f = facts("/user.slice", "/usr/bin/python3", 33);
	CHECK(policy_match(&p, &f) == &p.rules[1]);
	/* A unit: its own cgroup and those below it, never a name that only begins so. */
	f = facts("/system.slice/php8.2-fpm.service", "/usr/sbin/php-fpm8.2", 0);
	CHECK(policy_match(&p, &f) == &p.rules[2]);
	f = facts("/system.slice/php8.2-fpm.service/pool-www", "/usr/sbin/php-fpm8.2", 0);
	CHECK(policy_match(&p, &f) == &p.rules[2]);
	f = facts("/system.slice/php8.2-fpm.service.d", "/usr/sbin/php-fpm8.2", 0);
	CHECK(policy_match(&p, &f) == NULL);
	/* A pod, its container by a prefix, its QoS class and the program: all must hold. */
	f = facts(POD, "/usr/lib/jvm/java-17-openjdk-amd64/bin/java", 1000);
	CHECK(policy_match(&p, &f) == &p.rules[3]);
	f = facts(POD, "/usr/bin/node", 1000);
	CHECK(policy_match(&p, &f) == NULL);
	f = facts("/kubepods.slice/kubepods-pod3f2a0c1d_5b6e_4a4b_9c9d_0123456789ab.slice/cri-containerd-"
		  "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef.scope",
		  "/usr/lib/jvm/java-17-openjdk-amd64/bin/java", 1000);
	CHECK(policy_match(&p, &f) == NULL);            /* guaranteed, not burstable */
	/* An unknown fact matches no rule that asks for it. */
	f = facts(NULL, "/usr/sbin/keyd", 33);
	CHECK(policy_match(&p, &f) == &p.rules[0]);
	f = facts(NULL, "/usr/bin/qemu", -1);
	CHECK(policy_match(&p, &f) == NULL);
	f = facts("/machine.slice/machine-qemu.scope", NULL, -1);
	CHECK(policy_match(&p, &f) == &p.rules[4]);
	policy_free(&p);
}

/* Issue 27: what a user made in the subtree it was given names no pod, container or system unit. */
static void test_user_made(void)
{
	struct policy p = parse_policy(
		"[rule pod]\npod = 3f2a0c1d-5b6e-4a4b-9c9d-0123456789ab\naction = auto\ncross-domain = yes\n"
		"[rule php]\nunit = php-fpm.service\naction = prctl\ncross-domain = yes\n"
		"[rule mine]\nunit = user@65534.service/app.service\naction = prctl\ncross-domain = yes\n");
	const char *given = "/delegated", *forged = "/delegated/kubepods/burstable/pod3f2a0c1d-5b6e-4a4b-9c9d-"
		"0123456789ab/0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
	struct proc_facts f;

	/* Below a cgroup given to a user (root made only "/"), kubelet's names are the user's. */
	f = facts_made(forged, 0, "/bin/sh", 65534);
	CHECK(!f.cg.pod_uid[0] && !f.cg.container_id[0] && policy_match(&p, &f) == NULL);
	/* Had root made it all, as kubelet does: the pod. */
	f = facts_made(forged, -1, "/bin/sh", 65534);
	CHECK(policy_match(&p, &f) == &p.rules[0]);
	f = facts_made(forged, (long)strlen(given), "/bin/sh", 65534);
	CHECK(policy_match(&p, &f) == NULL);
	/* A user's own php-fpm.service, in its manager's subtree, is not the system's. */
	f = facts("/user.slice/user-65534.slice/user@65534.service/app.slice/php-fpm.service", "/bin/sh", 65534);
	CHECK(policy_match(&p, &f) == NULL);
	/* Nor one below a delegated cgroup that its user made look like a slice. */
	f = facts_made("/delegated.slice/php-fpm.service", 0, "/bin/sh", 65534);
	CHECK(policy_match(&p, &f) == NULL);
	f = facts_made("/delegated.slice/php-fpm.service", (long)strlen("/delegated.slice"), "/bin/sh", 0);
	CHECK(policy_match(&p, &f) == &p.rules[1]);
	/* A rule may name a user's manager's unit: root must have made what is above the manager. */
	f = facts_made("/user.slice/user-65534.slice/user@65534.service/app.slice/app.service",
		       (long)strlen("/user.slice/user-65534.slice"), "/bin/sh", 65534);
	CHECK(policy_match(&p, &f) == &p.rules[2]);
	f = facts_made("/user.slice/user-65534.slice/user@65534.service/app.slice/app.service",
		       (long)strlen("/user.slice"), "/bin/sh", 65534);
	CHECK(policy_match(&p, &f) == NULL);
	policy_free(&p);
}

/* Issue 27: a program's path from a mount namespace of its own, which is not the host's file, names nothing. */
static void test_exe_not_the_file(void)
{
	struct policy p = parse_policy("[rule sleep]\nexe = /usr/bin/sleep\nuser = nobody\naction = auto\n"
				       "[rule init]\nexe = /sbin/init\naction = auto\ncross-domain = yes\n");
	struct proc_facts f = facts("/user.slice", "/usr/bin/sleep", 65534), init = facts("/init.scope", "/sbin/init", 0);

	CHECK(policy_match(&p, &f) == &p.rules[0]);
	f.exe_trusted = false;
	CHECK(policy_match(&p, &f) == NULL);
	init.exe_trusted = false;
	CHECK(!policy_rule_names_exe(&p.rules[1], &init));
	policy_free(&p);
}

static void test_named_by_itself(void)
{
	struct policy p = parse_policy(
		"[rule a]\ncgroup = /system.slice/ksmenable.service\naction = auto\n"
		"[rule b]\nunit = ksmenable.service\naction = auto\n"
		"[rule c]\ncgroup = /system.slice/*\naction = auto\n"
		"[rule d]\nexe = /sbin/init\naction = auto\n"
		"[rule e]\nexe = /sbin/ini?\naction = auto\n");
	struct proc_facts f = facts("/system.slice/ksmenable.service", "/sbin/init", 0);

	CHECK(policy_rule_names_cgroup(&p.rules[0], &f) && policy_rule_names_cgroup(&p.rules[1], &f));
	CHECK(!policy_rule_names_cgroup(&p.rules[2], &f) && !policy_rule_names_cgroup(&p.rules[3], &f));
	CHECK(policy_rule_names_exe(&p.rules[3], &f) && !policy_rule_names_exe(&p.rules[4], &f));
	CHECK(!policy_rule_names_exe(&p.rules[0], &f));
	policy_free(&p);
}

/* PID 1 and the agent's own cgroup: left alone by a rule that names them by a pattern only. */
static void test_guards(void)
{
	struct policy p = parse_policy(
		"[rule by-pattern]\ncgroup = /*\naction = off\n"
		"[rule by-cgroup]\ncgroup = /init.scope\naction = off\n"
		"[rule by-exe]\nexe = /sbin/init\naction = off\n"
		"[rule by-unit]\nunit = ksmenable.service\naction = off\n");
	const char *own = "/system.slice/ksmenable.service";
	struct proc_facts init = facts("/init.scope", "/sbin/init", 0), mate = facts(own, "/usr/bin/x", 0);
	struct proc_facts other = facts("/init.scope", "/sbin/init", 0);
	const char *why;

	init.pid = 1;
	CHECK((why = policy_rule_guard(&p.rules[0], &init, own)) && strstr(why, "PID 1"));
	CHECK(policy_rule_guard(&p.rules[1], &init, own) == NULL);
	CHECK(policy_rule_guard(&p.rules[2], &init, own) == NULL);
	/* Another PID with the same facts is no guard's. */
	CHECK(policy_rule_guard(&p.rules[0], &other, own) == NULL);
	CHECK((why = policy_rule_guard(&p.rules[0], &mate, own)) && strstr(why, "own cgroup"));
	CHECK((why = policy_rule_guard(&p.rules[2], &mate, own)) && strstr(why, "own cgroup"));
	CHECK(policy_rule_guard(&p.rules[3], &mate, own) == NULL);
	/* Where the agent's cgroup is not known (v1's root), no cgroup is its. */
	CHECK(policy_rule_guard(&p.rules[0], &mate, NULL) == NULL);
	policy_free(&p);
}

/* By the kubelet's names (kubenames.h), which a rollout keeps: made up here, as the others. */
static void test_kube_names(void)
{
	struct policy p = parse_policy(
		"[rule shop-web]\nnamespace = shop\npod-name = web-*\ncontainer-name = app\naction = auto\n"
		"cross-domain = yes\n"
		"[rule data]\nnamespace = data*\naction = prctl\ncross-domain = yes\n");
	struct proc_facts f = facts(POD, "/usr/bin/python3", 0);

	f.kube_known = true;
	snprintf(f.kube.namespace_, sizeof f.kube.namespace_, "shop");
	snprintf(f.kube.pod, sizeof f.kube.pod, "web-7d9c8b6f5-x2x9q");
	snprintf(f.kube.container, sizeof f.kube.container, "app");
	CHECK(policy_match(&p, &f) == &p.rules[0]);
	/* After a rollout: another pod's name and UID, the same Deployment's prefix. */
	snprintf(f.kube.pod, sizeof f.kube.pod, "web-5f6d8c9b7-k4m2p");
	CHECK(policy_match(&p, &f) == &p.rules[0]);
	/* Its sidecar, and another Deployment of the namespace: not named. */
	snprintf(f.kube.container, sizeof f.kube.container, "log-shipper");
	CHECK(policy_match(&p, &f) == NULL);
	snprintf(f.kube.container, sizeof f.kube.container, "app");
	snprintf(f.kube.pod, sizeof f.kube.pod, "webhook-1");
	CHECK(policy_match(&p, &f) == NULL);
	/* A pod's own cgroup: no container's name, which container-name never matches. */
	snprintf(f.kube.pod, sizeof f.kube.pod, "web-1");
	f.kube.container[0] = '\0';
	CHECK(policy_match(&p, &f) == NULL);
	snprintf(f.kube.namespace_, sizeof f.kube.namespace_, "data-eu");
	CHECK(policy_match(&p, &f) == &p.rules[1]);
	/* By the Deployment that named the pod: its pods after any rollout, not another's of a longer name. */
	struct policy q = parse_policy("[rule web]\nnamespace = shop\nowner = web\naction = auto\ncross-domain = yes\n");

	snprintf(f.kube.namespace_, sizeof f.kube.namespace_, "shop");
	snprintf(f.kube.pod, sizeof f.kube.pod, "web-5f6d8c9b7-k4m2p");
	CHECK(policy_match(&q, &f) == &q.rules[0]);
	snprintf(f.kube.pod, sizeof f.kube.pod, "web-api-5f6d8c9b7-k4m2p");
	CHECK(policy_match(&q, &f) == NULL);
	policy_free(&q);
	/* Names unknown (no kubelet's directory, a nested kubelet): no rule by them matches. */
	f.kube_known = false;
	CHECK(policy_match(&p, &f) == NULL);
	policy_free(&p);
}

/* A move to another cgroup can change a judgement where a rule reads the cgroup, the kubelet's names too. */
static void test_watches_moves(void)
{
	static struct agent a;
	const char *const policies[] = {
		"[rule a]\nexe = /usr/bin/python3\nuser = 0\naction = auto\n",
		"[rule a]\nnamespace = shop\ndomain = namespace\naction = auto\n",
		"[rule a]\npod-name = web-*\nuser = 0\naction = auto\n",
		"[rule a]\nunit = php.service\naction = auto\n",
	};

	for (size_t i = 0; i < sizeof policies / sizeof policies[0]; i++) {
		memset(&a, 0, sizeof a);
		a.active = true;
		a.policy = parse_policy(policies[i]);
		CHECK(agent_watches_moves(&a) == (i > 0));
		/* The agent's own cgroup, when it guards, is always watched. */
		a.own_cgroup_known = true;
		CHECK(agent_watches_moves(&a));
		policy_free(&a.policy);
	}
}

UNIT_MAIN(UNIT_TEST(test_cgroup_lines), UNIT_TEST(test_rules), UNIT_TEST(test_kube_names), UNIT_TEST(test_watches_moves), UNIT_TEST(test_user_made), UNIT_TEST(test_exe_not_the_file),
	  UNIT_TEST(test_named_by_itself),
	  UNIT_TEST(test_guards))
