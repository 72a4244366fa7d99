/*
 * Unit tests of the host agent's policy parser (launcher/policy/parse.c):
 * the rules a valid file gives, and for each kind of mistake an operator
 * makes, the error with its line.  The files' owners and modes are the
 * loader's and are tested as root by tests/49-policy.bats.  No root.
 */
#include <stdio.h>
#include <string.h>

#include "policy/policy.h"
#include "unit.h"

struct errors {
	char text[8192];
	int n;
};

static void collect(void *ctx, const char *file, int line, const char *message)
{
	struct errors *e = ctx;
	size_t used = strlen(e->text);

	snprintf(e->text + used, sizeof e->text - used, "%s:%d: %s\n", file, line, message);
	e->n++;
}

/* Parses TEXT as "test.conf" into *P (freed by the caller); the errors in *E. */
static int parse(struct policy *p, struct errors *e, const char *text)
{
	memset(p, 0, sizeof *p);
	memset(e, 0, sizeof *e);
	return policy_parse(p, "test.conf", text, collect, e);
}

static bool said(const struct errors *e, const char *needle)
{
	if (strstr(e->text, needle))
		return true;
	fprintf(stderr, "expected '%s' in:\n%s", needle, e->text);
	return false;
}

static void test_a_valid_policy(void)
{
	struct policy p;
	struct errors e;

	CHECK(parse(&p, &e,
		    "# the operator's comment\n"
		    "; another\n"
		    "\n"
		    "[rule php]\n"
		    "unit = php8.2-fpm.service\n"
		    "action = prctl\n"
		    "\n"
		    "[ rule  jvm ]\r\n"
		    "  pod = 3F2A0C1D-0000-4a4b-9c9d-0123456789AB  \r\n"
		    "exe=/usr/lib/jvm/*/bin/java\n"
		    "qos = burstable\n"
		    "action = madvise\n"
		    "allow = anon\n"
		    "min-size = 1M\n"
		    "[rule root-keys]\n"
		    "user = 0\n"
		    "cgroup = /system.slice/*#1.service\n"
		    "container = ABCDef01\n"
		    "action = off\n"
		    "cross-domain = yes\n") == 0);
	CHECK(e.n == 0 && p.n == 3 && p.nfiles == 1);
	CHECK(!strcmp(p.rules[0].name, "php") && p.rules[0].line == 4 && !strcmp(p.rules[0].file, "test.conf"));
	CHECK(!strcmp(p.rules[0].unit, "php8.2-fpm.service"));
	CHECK(config_coverage(&p.rules[0].lib) == COVER_PROCESS);
	CHECK(!strcmp(p.rules[1].name, "jvm"));
	CHECK(!strcmp(p.rules[1].pod_uid, "3f2a0c1d-0000-4a4b-9c9d-0123456789ab"));
	CHECK(!strcmp(p.rules[1].exe, "/usr/lib/jvm/*/bin/java") && p.rules[1].qos == CG_QOS_BURSTABLE);
	CHECK(config_coverage(&p.rules[1].lib) == COVER_SELECTION && p.rules[1].lib.min_size == 1 << 20);
	CHECK(p.rules[1].lib.allow != NULL);
	/* A '#' inside a value is part of it: there are no comments after a value. */
	CHECK(!strcmp(p.rules[2].cgroup, "/system.slice/*#1.service"));
	CHECK(p.rules[2].user_given && p.rules[2].uid == 0 && !strcmp(p.rules[2].container, "abcdef01"));
	CHECK(config_coverage(&p.rules[2].lib) == COVER_NOTHING && p.rules[2].cross_domain);
	policy_free(&p);
}

/* Each mistake: its text, the line the error names, and what it says. */
static const struct mistake {
	const char *text;
	int line;
	const char *says;
} mistakes[] = {
	{ "unit = a.service\n", 1, "a setting belongs to a rule: begin one with [rule NAME]" },
	{ "[rule a]\nunit = a.service\n", 1, "rule a has no action" },
	{ "[rule a]\naction = prctl\n", 1, "rule a matches nothing" },
	{ "[rule a]\nunit = a.service\naction = sometimes\n", 3, "action='sometimes': unknown mode" },
	{ "[rule a]\nunit = a.service\naction = prctl\nallow = anon\n", 3, "action=prctl merges all memory" },
	{ "[rule a]\nunit = a.service\naction = off\ndeny = heap\n", 4, "action = off keeps KSM out" },
	{ "[rule a]\nunit = a.service\naction = madvise\nallow = bogus\n", 4, "allow" },
	{ "[rule a]\nunit = a.service\naction = madvise\nmin-size = 1Q\n", 4, "min-size='1Q': not a size" },
	{ "[rule a]\nunti = a.service\naction = prctl\n", 2, "unknown setting 'unti' (did you mean unit?)" },
	{ "[rule a]\nfrobnicate = 1\n", 2, "unknown setting 'frobnicate' (accepted: cgroup, unit" },
	{ "[rule a]\nunit = a.service\nunit = b.service\naction = prctl\n", 3, "unit is given twice in rule a (also at line 2)" },
	{ "[rule a]\nunit = a\naction = prctl\n", 2, "with .service, .scope or .slice" },
	{ "[rule a]\nunit = a b.service\naction = prctl\n", 2, "only letters, digits" },
	/* A manager's name shorter than ".service" (fuzz_policy: it was read from before its buffer). */
	{ "[rule a]\nunit = user@1/a.service\naction = prctl\n", 2, "written user@UID.service/NAME (UID a number)" },
	{ "[rule a]\nunit = user@/a.service\naction = prctl\n", 2, "written user@UID.service/NAME (UID a number)" },
	{ "[rule a]\ncgroup = system.slice\naction = prctl\n", 2, "it begins with '/'" },
	{ "[rule a]\nexe = /usr/bin/[a\naction = prctl\n", 2, "exe = /usr/bin/[a:" },
	{ "[rule a]\nuser = no-such-user-here\naction = prctl\n", 2, "no such user" },
	{ "[rule a]\npod = 1234\naction = prctl\n", 2, "not a pod's UID" },
	{ "[rule a]\ncontainer = xyz0\naction = prctl\n", 2, "not a container's ID" },
	{ "[rule a]\ncontainer = abc\naction = prctl\n", 2, "not a container's ID" },
	{ "[rule a]\nqos = gold\naction = prctl\n", 2, "unknown QoS class" },
	{ "[rule a]\nnamespace = Shop\naction = prctl\n", 2, "namespace = Shop: not a Kubernetes name or a glob" },
	{ "[rule a]\npod-name = web_1\naction = prctl\n", 2, "pod-name = web_1: not a Kubernetes name" },
	{ "[rule a]\ncontainer-name = app.v2\naction = prctl\n", 2, "container-name = app.v2: not a Kubernetes" },
	{ "[rule a]\nnamespace = shop\ndomain = tenant\naction = prctl\n", 3, "domain = tenant: accepted: pod" },
	{ "[rule a]\nuser = 0\ndomain = namespace\naction = prctl\n", 3, "rule a: domain = namespace needs" },
	{ "[rule a]\nunit = a.service\naction = prctl\ncross-domain = maybe\n", 4, "accepted: yes or no" },
	{ "[rule a]\nunit =\naction = prctl\n", 2, "unit has no value" },
	{ "[rule a]\njust words\n", 2, "is neither a setting" },
	{ "[rule a\nunit = a.service\naction = prctl\n", 1, "a section header ends with ']'" },
	{ "[global]\nunit = a.service\n", 1, "unknown section [global]" },
	{ "[rule]\n", 1, "unknown section [rule]" },
	{ "[rule a/b]\n", 1, "rule name 'a/b'" },
	{ "[rule a]\nunit = a.service\naction = prctl\n[rule a]\nunit = b.service\naction = prctl\n", 4,
	  "rule a is already defined at test.conf:1" },
	/* Whatever another user wrote into a value is printed escaped, */
	{ "[rule a]\nunit = \033[31m.service\naction = prctl\n", 2, "unit = \\x1b[31m.service" },
	/* also where the library's own code judged it (fuzz_policy: the action's bytes came out raw). */
	{ "[rule a]\nunit = a.service\naction = \033[2J\n", 3, "rule a: action='\\x1b[2J': unknown mode" },
	{ "[rule a]\nunit = a.service\naction = madvise\nallow = \302\233\377\n", 4,
	  "rule a: allow='\\xc2\\x9b\\xff': unknown selector '\\xc2\\x9b\\xff'" },
};

static void test_each_mistake_is_said_with_its_line(void)
{
	for (size_t i = 0; i < sizeof mistakes / sizeof mistakes[0]; i++) {
		const struct mistake *m = &mistakes[i];
		struct policy p;
		struct errors e;
		char where[64];

		snprintf(where, sizeof where, "test.conf:%d: ", m->line);
		CHECK(parse(&p, &e, m->text) > 0);
		CHECK(said(&e, where) && said(&e, m->says));
		/* A file with an error adds no rule: half of a policy is never applied. */
		CHECK(p.n == 0);
		policy_free(&p);
	}
}

/* Every error of a file is said at once, and a refused section's settings add none of their own. */
static void test_every_error_at_once(void)
{
	struct policy p;
	struct errors e;

	CHECK(parse(&p, &e,
		    "[rule ok]\nunit = a.service\naction = prctl\n"
		    "[rule bad one]\nunit = x\nnonsense\n"
		    "[rule b]\nuser = nobody-at-all\naction = never\n") == 3);
	CHECK(said(&e, "test.conf:4: rule name 'bad one'"));
	CHECK(said(&e, "test.conf:8: user = nobody-at-all"));
	CHECK(said(&e, "test.conf:9: rule b: action='never'"));
	CHECK(p.n == 0);
	policy_free(&p);
}

/* Files add to one policy; a rule's name is the policy's, not the file's. */
static void test_files_add_up(void)
{
	struct policy p;
	struct errors e;

	CHECK(parse(&p, &e, "[rule a]\nunit = a.service\naction = prctl\n") == 0);
	CHECK(policy_parse(&p, "conf.d/10-b.conf", "[rule b]\nexe = /usr/bin/b\naction = auto\n", collect, &e) == 0);
	CHECK(policy_parse(&p, "conf.d/20-c.conf", "[rule a]\nexe = /c\naction = prctl\n", collect, &e) == 1);
	CHECK(said(&e, "conf.d/20-c.conf:1: rule a is already defined at test.conf:1"));
	CHECK(p.n == 2 && p.nfiles == 3 && !strcmp(p.rules[1].file, "conf.d/10-b.conf"));
	policy_free(&p);
}

static void test_the_texts(void)
{
	struct policy p;
	struct errors e;
	char buf[512];

	CHECK(parse(&p, &e, "[rule a]\nunit = a.service\nuser = 0\nqos = besteffort\naction = madvise\n"
		   "allow = anon\nmin-size = 64K\ncross-domain = yes\n") == 0);
	policy_rule_matches_text(&p.rules[0], buf, sizeof buf);
	CHECK(!strcmp(buf, "unit a.service, user 0, qos besteffort"));
	policy_rule_action_text(&p.rules[0], buf, sizeof buf);
	CHECK(!strcmp(buf, "madvise (allow=anon, min-size=64K); across security domains"));
	/* A buffer of no bytes is left untouched, as snprintf leaves it. */
	strcpy(buf, "kept");
	policy_rule_matches_text(&p.rules[0], buf, 0);
	policy_rule_action_text(&p.rules[0], buf, 0);
	CHECK(!strcmp(buf, "kept"));
	policy_free(&p);
}

UNIT_MAIN(UNIT_TEST(test_a_valid_policy), UNIT_TEST(test_each_mistake_is_said_with_its_line),
	  UNIT_TEST(test_every_error_at_once), UNIT_TEST(test_files_add_up), UNIT_TEST(test_the_texts))
