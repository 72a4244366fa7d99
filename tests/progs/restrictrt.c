/*
 * restrictrt - runs a command as systemd's RestrictRealtime=yes would
 * (tests/37-unit.bats, which builds the daemon's sandbox without systemd).
 *
 *   restrictrt COMMAND [ARG]...
 *
 * The filter is systemd's (seccomp_restrict_realtime in its
 * src/shared/seccomp-util.c): sched_setscheduler fails with EPERM for any
 * policy but SCHED_OTHER (0), SCHED_BATCH (3) and SCHED_IDLE (5), so for
 * SCHED_FIFO, SCHED_RR, SCHED_DEADLINE and whatever carries
 * SCHED_RESET_ON_FORK; every other call is let through.  Like systemd's,
 * it judges the policy's low 32 bits (an int) and only on the native
 * architecture.  no_new_privs is set first, as a filter without
 * CAP_SYS_ADMIN needs (the unit has NoNewPrivileges=yes anyway).
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>
#if __has_include(<linux/seccomp.h>)    /* musl-gcc has no kernel headers */
#define HAVE_SECCOMP_HEADERS 1
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#endif

#if defined(HAVE_SECCOMP_HEADERS) && defined(__x86_64__)
/* The policy argument's low word, on a little-endian machine. */
#define POLICY_LOW offsetof(struct seccomp_data, args[1])

static int restrict_realtime(void)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_sched_setscheduler, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, POLICY_LOW),
		/* 0, 3 and 5 pass; 1, 2, 4 and anything above 5 do not. */
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 3, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 3, 2, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 5, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { sizeof f / sizeof f[0], f };

	return prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) || syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog);
}
#else
static int restrict_realtime(void)
{
	fprintf(stderr, "restrictrt: built without kernel headers (musl-gcc) or not for x86_64: no filter\n");
	errno = ENOSYS;
	return -1;
}
#endif

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: restrictrt COMMAND [ARG]...\n");
		return 2;
	}
	if (restrict_realtime()) {
		perror("restrictrt: seccomp");
		return 2;
	}
	execvp(argv[1], argv + 1);
	perror(argv[1]);
	return 127;
}
