/*
 * The seccomp judge (launcher/ptrace/seccomp.c) against the kernel itself:
 * random but valid filters, each installed in a child (no root needed:
 * PR_SET_NO_NEW_PRIVS), computing over seccomp_data's nr, arch and
 * arguments and answering ALLOW, ERRNO, TRAP, KILL, TRACE, ...; the child
 * then makes a prctl with random arguments, and its fate (killed by
 * SIGSYS, the filter's errno, ENOSYS, or the call made) must be what the
 * judge's verdict says.  --attach injects only what the judge allows, so
 * every disagreement is a target harmed or a call refused for nothing.
 *
 * KSM_SECCOMP_SEED=N repeats a run (its seed is printed on failure);
 * KSM_SECCOMP_FILTERS=N sets how many: by default 1000, a few seconds in
 * make check; make fuzz runs 10000.
 */
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ptrace/seccomp.h"

#define MAX_LEN 48
#define MAX_FILTERS 3
#define MAX_ERRNO 4095
#define OUR_ERRNO_MIN 0x200      /* above every errno a real prctl returns */

static uint64_t rng;

static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static uint32_t below(uint32_t n)
{
	return (uint32_t)(next() % n);
}

struct filter {
	struct sock_filter insn[MAX_LEN];
	unsigned short len;
};

/* A constant a filter would compare with or compute by. */
static uint32_t some_k(void)
{
	switch (below(6)) {
	case 0: return SYS_prctl;
	case 1: return below(70);
	case 2: return 28 + below(8);               /* shift counts around 32 */
	case 3: return 1U << below(32);
	case 4: return AUDIT_ARCH_X86_64;
	}
	return (uint32_t)next();
}

static uint32_t some_action(void)
{
	static const uint32_t actions[] = {
		SECCOMP_RET_ALLOW, SECCOMP_RET_ALLOW, SECCOMP_RET_LOG, SECCOMP_RET_TRAP,
		SECCOMP_RET_KILL_PROCESS, SECCOMP_RET_KILL_THREAD, SECCOMP_RET_TRACE,
		SECCOMP_RET_USER_NOTIF, SECCOMP_RET_ERRNO, SECCOMP_RET_ERRNO,
	};
	uint32_t a = actions[below(sizeof actions / sizeof actions[0])];

	if (a == SECCOMP_RET_ERRNO)
		a |= OUR_ERRNO_MIN + below(0x10000 - OUR_ERRNO_MIN);  /* above 4095: the kernel clamps */
	else
		a |= below(0x10000);
	return a;
}

/* A field of seccomp_data the child controls: nr, arch, args 0-4 (low and high words). */
static uint32_t some_field(void)
{
	uint32_t w = below(12);

	return w == 0 ? offsetof(struct seccomp_data, nr) : w == 1 ? offsetof(struct seccomp_data, arch) :
	       (uint32_t)offsetof(struct seccomp_data, args) + 4 * (w - 2);
}

static struct sock_filter some_alu(void)
{
	static const uint16_t ops[] = { BPF_ADD, BPF_SUB, BPF_MUL, BPF_DIV, BPF_OR, BPF_AND,
					BPF_LSH, BPF_RSH, BPF_NEG, BPF_XOR };
	uint16_t op = ops[below(sizeof ops / sizeof ops[0])];
	uint32_t k = some_k();

	if (op == BPF_NEG)
		return (struct sock_filter)BPF_STMT(BPF_ALU | BPF_NEG, 0);
	if (below(2))
		return (struct sock_filter)BPF_STMT(BPF_ALU | op | BPF_X, 0);
	if (op == BPF_LSH || op == BPF_RSH)
		k &= 31;                /* the kernel refuses a constant shift >= 32 */
	if (op == BPF_DIV && !k)
		k = 3;
	return (struct sock_filter)BPF_STMT(BPF_ALU | op | BPF_K, k);
}

/* Instruction I of a program of LEN: any kind, jumps forward inside it. */
static struct sock_filter some_insn(unsigned i, unsigned len)
{
	static const uint16_t jumps[] = { BPF_JEQ, BPF_JGT, BPF_JGE, BPF_JSET };
	unsigned room = len - 1 - i - 1;        /* instructions after this one, before the last */

	switch (below(12)) {
	case 0:
	case 1: return (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, some_field());
	case 2: return (struct sock_filter)BPF_STMT(BPF_LD | BPF_IMM, some_k());
	case 3: return (struct sock_filter)BPF_STMT(BPF_LDX | BPF_IMM, below(4) ? 28 + below(40) : some_k());
	case 4: return (struct sock_filter)BPF_STMT((below(2) ? BPF_LD : BPF_LDX) | BPF_MEM, below(4));
	case 5: return (struct sock_filter)BPF_STMT(below(2) ? BPF_ST : BPF_STX, below(4));
	case 6: return (struct sock_filter)BPF_STMT(BPF_MISC | (below(2) ? BPF_TAX : BPF_TXA), 0);
	case 7:
	case 8: return some_alu();
	case 9: return (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, some_action());
	case 10: return (struct sock_filter)BPF_STMT(BPF_JMP | BPF_JA, below(room + 1));
	}
	return (struct sock_filter)BPF_JUMP(BPF_JMP | jumps[below(4)] | (below(3) ? BPF_K : BPF_X), some_k(),
					    below(room + 1), below(room + 1));
}

/*
 * A valid program: past a gate for prctl, the scratch words it may load are stored first (the
 * kernel refuses a load of one never stored), then random instructions,
 * then a return: of a constant, or of an errno computed from A.
 */
static void make_filter(struct filter *f)
{
	unsigned n = 0, len;

	/* Only prctl is judged: the child's other calls (seccomp, write, exit) go through. */
	f->insn[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr));
	f->insn[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_prctl, 1, 0);
	f->insn[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	for (unsigned m = 0; m < 4; m++) {
		f->insn[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, some_field());
		f->insn[n++] = (struct sock_filter)BPF_STMT(BPF_ST, m);
	}
	len = n + 6 + below(MAX_LEN - n - 6 + 1);
	while (n < len - 3)
		f->insn[n] = some_insn(n, len), n++;
	if (below(2)) {
		f->insn[n++] = (struct sock_filter)BPF_STMT(BPF_ALU | BPF_AND | BPF_K, 0xfff);
		f->insn[n++] = (struct sock_filter)BPF_STMT(BPF_ALU | BPF_OR | BPF_K, SECCOMP_RET_ERRNO | OUR_ERRNO_MIN);
		f->insn[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_A, 0);
	} else {
		f->insn[n] = some_insn(n, len), n++;
		f->insn[n] = some_insn(n, len), n++;
		f->insn[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, some_action());
	}
	f->len = (unsigned short)n;
}

enum fate { CALL_MADE, GOT_ERRNO, GOT_ENOSYS, KILLED_BY_SIGSYS, OTHER };
static const char *const fate_names[] = { "call made", "errno", "ENOSYS", "killed by SIGSYS", "other" };

/* What the kernel does with the answer RET (kernel/seccomp.c __seccomp_filter). */
static enum fate fate_of(uint32_t ret, int *err)
{
	switch (ret & SECCOMP_RET_ACTION_FULL) {
	case SECCOMP_RET_ALLOW:
	case SECCOMP_RET_LOG:
		return CALL_MADE;
	case SECCOMP_RET_ERRNO:
		*err = (int)(ret & SECCOMP_RET_DATA) > MAX_ERRNO ? MAX_ERRNO : (int)(ret & SECCOMP_RET_DATA);
		return GOT_ERRNO;
	case SECCOMP_RET_TRACE:         /* no tracer */
	case SECCOMP_RET_USER_NOTIF:    /* no listener */
		return GOT_ENOSYS;
	}
	return KILLED_BY_SIGSYS;        /* TRAP, KILL_*, unknown actions */
}

/* In a child: the filters, then the call; its fate from outside. */
static enum fate kernel_fate(const struct filter *fs, int nf, const uint64_t args[5], int *err)
{
	int pipefd[2], st, got[2] = { 0, 0 };
	pid_t pid;

	if (pipe(pipefd) || (pid = fork()) < 0) {
		perror("pipe/fork");
		exit(2);
	}
	if (pid == 0) {
		long r;

		close(pipefd[0]);
		prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);     /* a SIGSYS death dumps no core */
		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
			_exit(3);
		for (int i = 0; i < nf; i++) {
			struct sock_fprog p = { fs[i].len, (struct sock_filter *)fs[i].insn };

			if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &p))
				_exit(4);       /* the kernel refused the program: the generator's bug */
		}
		r = syscall(SYS_prctl, args[0], args[1], args[2], args[3], args[4]);
		got[0] = r == -1, got[1] = errno;
		if (write(pipefd[1], got, sizeof got) != sizeof got)
			_exit(5);
		_exit(0);
	}
	close(pipefd[1]);
	ssize_t n = read(pipefd[0], got, sizeof got);
	close(pipefd[0]);
	waitpid(pid, &st, 0);
	if (WIFSIGNALED(st) && WTERMSIG(st) == SIGSYS)
		return KILLED_BY_SIGSYS;
	if (!WIFEXITED(st) || WEXITSTATUS(st) || n != sizeof got) {
		*err = WIFEXITED(st) ? 1000 + WEXITSTATUS(st) : -WTERMSIG(st);
		return OTHER;
	}
	*err = got[1];
	if (got[0] && got[1] >= OUR_ERRNO_MIN)
		return GOT_ERRNO;
	if (got[0] && got[1] == ENOSYS)
		return GOT_ENOSYS;
	return CALL_MADE;
}

static void dump(const struct filter *fs, int nf, const uint64_t args[5])
{
	fprintf(stderr, "  prctl(%#llx, %#llx, %#llx, %#llx, %#llx)\n", (unsigned long long)args[0],
		(unsigned long long)args[1], (unsigned long long)args[2], (unsigned long long)args[3],
		(unsigned long long)args[4]);
	for (int i = 0; i < nf; i++) {
		fprintf(stderr, "  filter %d (installed %s):\n", i, i ? "after the one above" : "first");
		for (unsigned j = 0; j < fs[i].len; j++)
			fprintf(stderr, "    %2u: code %#06x jt %u jf %u k %#x\n", j, fs[i].insn[j].code,
				fs[i].insn[j].jt, fs[i].insn[j].jf, fs[i].insn[j].k);
	}
}

static uint64_t env_number(const char *name, uint64_t dflt)
{
	const char *v = getenv(name);

	return v && *v ? strtoull(v, NULL, 0) : dflt;
}

int main(void)
{
	uint64_t seed = env_number("KSM_SECCOMP_SEED", (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32));
	unsigned count = (unsigned)env_number("KSM_SECCOMP_FILTERS", 1000);
	unsigned agreed = 0, disagreed = 0, killed = 0, errnos = 0;
	static const uint64_t options[] = { 67, 68, 3, 0x7fff1234 };

	rng = seed ? seed : 1;
	for (unsigned c = 0; c < count; c++) {
		struct filter fs[MAX_FILTERS];
		struct seccomp_filters judged = { .mode = 2 };
		int nf = 1 + (int)below(MAX_FILTERS), want_err = 0, got_err = 0;
		uint64_t args[5];
		uint32_t verdict = SECCOMP_RET_ALLOW;
		char why[256];

		for (int i = 0; i < nf; i++)
			make_filter(&fs[i]);
		args[0] = options[below(4)] | (below(4) ? 0 : next() << 32);
		for (int i = 1; i < 5; i++)
			args[i] = below(3) ? 0 : below(2) ? below(70) : next();
		struct seccomp_call call = { SYS_prctl, AUDIT_ARCH_X86_64, 0, { args[0], args[1], args[2], args[3], args[4], 0 } };

		/* The judge, newest filter first, as PTRACE_SECCOMP_GET_FILTER lists them. */
		bool judgeable = true;

		for (int i = nf - 1; i >= 0; i--) {
			int64_t r = seccomp_run_filter((const struct bpf_insn_c *)(const void *)fs[i].insn, fs[i].len, &call);

			judgeable &= r >= 0;    /* the kernel took every one of them: so must the judge */
			verdict = seccomp_stronger((uint32_t)r, verdict);
			judged.prog[judged.n] = (struct bpf_insn_c *)(void *)fs[i].insn;
			judged.len[judged.n++] = fs[i].len;
		}
		enum fate want = fate_of(verdict, &want_err), got = kernel_fate(fs, nf, args, &got_err);
		bool allowed = seccomp_allows(&judged, &call, "prctl", why, sizeof why) == 0;

		if (!judgeable || got != want || (want == GOT_ERRNO && got_err != want_err) || allowed != (want == CALL_MADE)) {
			if (disagreed++ < 3) {
				fprintf(stderr, "case %u: the judge says %s (%#x, errno %d, allowed %d), the kernel did: "
					"%s (errno %d); seed %llu\n", c, judgeable ? fate_names[want] : "cannot judge",
					verdict, want_err, allowed,
					fate_names[got], got_err, (unsigned long long)seed);
				dump(fs, nf, args);
			}
			continue;
		}
		agreed++;
		killed += got == KILLED_BY_SIGSYS;
		errnos += got == GOT_ERRNO;
	}
	printf("seccomp judge vs kernel: %u filters, %u agreed (%u killed, %u errno), %u disagreed; seed %llu\n",
	       count, agreed, killed, errnos, disagreed, (unsigned long long)seed);
	printf("unit: %u passed, %u failed\n", agreed, disagreed);
	return disagreed != 0;
}
