/*
 * faultinject - run a command with chosen system calls failing.
 *
 *   faultinject [-f RULE]... [--] COMMAND [ARG]...
 *
 * RULE is SYSCALL[,argN=VALUE]...:ERRNO.  A call to SYSCALL whose listed
 * arguments all equal their VALUE fails with ERRNO instead of running; every
 * other call runs as usual.  The test suite uses it to play kernels and
 * policies it cannot get for real: a kernel before 6.4 (prctl(PR_SET_MEMORY_MERGE)
 * fails with EINVAL), vm.max_map_count reached (madvise fails with EAGAIN),
 * a container's seccomp policy (EPERM).
 *
 * The filter is a seccomp filter (libseccomp), so it holds for the command
 * and everything it forks and executes.  Exit status as env(1): the
 * command's own, or 125 (our error), 126 (cannot execute), 127 (not found).
 */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <seccomp.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "errnames.h"

#define EXIT_OWN_ERROR 125
#define EXIT_CANNOT_EXEC 126
#define EXIT_NOT_FOUND 127

/* seccomp's errno action carries at most MAX_ERRNO (the kernel clamps it). */
#define MAX_ERRNO_VALUE 4095
#define MAX_ARGS 6

struct rule {
	int nr;
	int err;
	unsigned int nargs;
	struct scmp_arg_cmp cmp[MAX_ARGS];
};

static const char usage_text[] =
	"Usage: faultinject [-f RULE]... [--] COMMAND [ARG]...\n"
	"Run COMMAND with the system calls that RULEs select failing.\n"
	"\n"
	"  -f, --fail=RULE  make calls matching RULE fail (repeatable)\n"
	"  -h, --help       show this help and exit\n"
	"\n"
	"RULE is SYSCALL[,argN=VALUE]...:ERRNO\n"
	"  SYSCALL  a system call name (prctl, madvise, ...) or number\n"
	"  argN     argument N (0-5) must equal VALUE, decimal or 0x hex;\n"
	"           a call whose arguments differ runs as usual\n"
	"  ERRNO    a name (EINVAL, EAGAIN, EPERM, ENOMEM, ENOSYS, ...) or 1-4095\n"
	"\n"
	"Examples:\n"
	"  faultinject -f prctl,arg0=67:EINVAL -- prog   # no PR_SET_MEMORY_MERGE\n"
	"  faultinject -f madvise,arg2=12:EAGAIN -- prog # MADV_MERGEABLE fails\n"
	"\n"
	"The filter applies to the native architecture only and is inherited by\n"
	"every child.  Exit status: COMMAND's own, or 125 if faultinject fails,\n"
	"126 if COMMAND cannot be executed, 127 if it is not found.\n";

static void die(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));

static void die(const char *fmt, ...)
{
	va_list ap;

	fputs("faultinject: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(EXIT_OWN_ERROR);
}

/*
 * Strict number: decimal without a leading zero (it could be meant as
 * octal), or 0x followed by hex digits.  No sign, no spaces, no junk.
 * Returns NULL, or what is wrong with TEXT.
 */
static const char *parse_u64(const char *text, uint64_t *out)
{
	const char *digits = text;
	int base = 10;
	char *end;

	if (text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) {
		digits = text + 2;
		base = 16;
	}
	if (*digits == '\0')
		return "no digits";
	for (const char *p = digits; *p; p++)
		if (base == 16 ? !isxdigit((unsigned char)*p) : !isdigit((unsigned char)*p))
			return "not a decimal or 0x hex number";
	if (base == 10 && digits[0] == '0' && digits[1] != '\0')
		return "leading zero (octal is not accepted: use decimal or 0x hex)";
	errno = 0;
	*out = strtoull(digits, &end, base);
	if (errno == ERANGE)
		return "out of range (more than 64 bits)";
	return NULL;
}

static int parse_errno(const char *rule, const char *text)
{
	uint64_t v;

	if (*text == '\0')
		die("rule '%s': empty ERRNO after ':'", rule);
	if (isdigit((unsigned char)*text)) {
		const char *why = parse_u64(text, &v);
		if (why)
			die("rule '%s': bad ERRNO '%s': %s", rule, text, why);
		if (v < 1 || v > MAX_ERRNO_VALUE)
			die("rule '%s': ERRNO '%s' out of range (1-%d)", rule, text, MAX_ERRNO_VALUE);
		return (int)v;
	}
	int e = errname_value(text);
	if (e == 0)
		die("rule '%s': unknown ERRNO '%s' (use a name such as EINVAL, EAGAIN, "
		    "EPERM, ENOMEM, ENOSYS, EACCES, EFAULT, or a number 1-%d)",
		    rule, text, MAX_ERRNO_VALUE);
	return e;
}

static int parse_syscall(const char *rule, const char *name)
{
	uint64_t v;

	if (*name == '\0')
		die("rule '%s': missing SYSCALL before ',' or ':'", rule);
	if (isdigit((unsigned char)*name)) {
		const char *why = parse_u64(name, &v);
		if (why)
			die("rule '%s': bad SYSCALL number '%s': %s", rule, name, why);
		if (v > INT_MAX)
			die("rule '%s': SYSCALL number '%s' out of range", rule, name);
		return (int)v;
	}
	int nr = seccomp_syscall_resolve_name(name);
	if (nr == __NR_SCMP_ERROR)
		die("rule '%s': unknown SYSCALL '%s'", rule, name);
	/* Negative numbers are libseccomp's pseudo-calls (socketcall on x86_64):
	 * a rule on them would be accepted and never match. */
	if (nr < 0)
		die("rule '%s': '%s' is not a system call on this architecture", rule, name);
	return nr;
}

/* One "argN=VALUE" condition of RULE, appended to R. */
static void parse_condition(const char *rule, char *cond, struct rule *r)
{
	uint64_t value;

	if (*cond == '\0')
		die("rule '%s': empty condition (a stray ',')", rule);
	if (strncmp(cond, "arg", 3) != 0 || cond[3] < '0' || cond[3] > '5' || cond[4] != '=')
		die("rule '%s': bad condition '%s' (expected argN=VALUE with N 0-5)", rule, cond);

	unsigned int arg = (unsigned int)(cond[3] - '0');
	const char *why = parse_u64(cond + 5, &value);
	if (why)
		die("rule '%s': bad VALUE '%s' in '%s': %s", rule, cond + 5, cond, why);
	/* Two equality tests on one argument are either redundant or never true. */
	for (unsigned int i = 0; i < r->nargs; i++)
		if (r->cmp[i].arg == arg)
			die("rule '%s': arg%u given twice", rule, arg);
	r->cmp[r->nargs++] = (struct scmp_arg_cmp){
		.arg = arg, .op = SCMP_CMP_EQ, .datum_a = value, .datum_b = 0,
	};
}

static struct rule parse_rule(const char *rule)
{
	struct rule r = { .nargs = 0 };
	char *copy = strdup(rule);

	if (!copy)
		die("out of memory");
	/* Neither names, numbers nor conditions contain ':', so the last one splits. */
	char *colon = strrchr(copy, ':');
	if (!colon)
		die("rule '%s': missing ':ERRNO' (expected SYSCALL[,argN=VALUE]...:ERRNO)", rule);
	*colon = '\0';
	r.err = parse_errno(rule, colon + 1);

	char *rest = copy, *name = strsep(&rest, ",");
	r.nr = parse_syscall(rule, name);
	while (rest) {
		char *cond = strsep(&rest, ",");
		if (r.nargs == MAX_ARGS)
			die("rule '%s': more than %d conditions", rule, MAX_ARGS);
		parse_condition(rule, cond, &r);
	}
	free(copy);
	return r;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "fail", required_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	scmp_filter_ctx ctx;
	int opt, rc;

	/* Default ALLOW; other architectures (32-bit programs) run unfiltered
	 * rather than being killed by libseccomp's default bad-arch action. */
	ctx = seccomp_init(SCMP_ACT_ALLOW);
	if (!ctx)
		die("seccomp_init failed");
	rc = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_ALLOW);
	if (rc < 0)
		die("seccomp_attr_set(ACT_BADARCH): %s", strerror(-rc));

	/* "+": stop at the command, whose own options are not ours; ":": report
	 * a missing RULE as ":" so that our message can say so. */
	opterr = 0;
	while ((opt = getopt_long(argc, argv, "+:f:h", longopts, NULL)) != -1) {
		switch (opt) {
		case 'f': {
			struct rule r = parse_rule(optarg);
			rc = seccomp_rule_add_array(ctx, SCMP_ACT_ERRNO((uint32_t)r.err), r.nr,
						    r.nargs, r.cmp);
			if (rc == -EEXIST)
				die("rule '%s': conflicts with an earlier rule for the same "
				    "call and arguments", optarg);
			if (rc < 0)
				die("rule '%s': libseccomp refused it: %s", optarg, strerror(-rc));
			break;
		}
		case 'h':
			fputs(usage_text, stdout);
			return fflush(stdout) == 0 ? 0 : EXIT_OWN_ERROR;
		case ':':
			die("option '%s' needs a RULE (try --help)", argv[optind - 1]);
		default:
			if (optopt)
				die("unknown option '-%c' (try --help)", optopt);
			die("unknown option '%s' (try --help)", argv[optind - 1]);
		}
	}
	if (optind >= argc)
		die("missing COMMAND (try --help)");

	/* Required for an unprivileged filter; also keeps setuid programs from
	 * running under a policy they do not expect. */
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
		die("prctl(PR_SET_NO_NEW_PRIVS): %s", strerror(errno));
	rc = seccomp_load(ctx);
	if (rc < 0)
		die("cannot load the seccomp filter: %s", strerror(-rc));
	seccomp_release(ctx);

	/* The filter already applies to execvp itself: a rule on execve makes
	 * the command fail to start, which is reported like any exec failure. */
	execvp(argv[optind], argv + optind);
	int err = errno;
	fprintf(stderr, "faultinject: %s: %s\n", argv[optind], strerror(err));
	return err == ENOENT ? EXIT_NOT_FOUND : EXIT_CANNOT_EXEC;
}
