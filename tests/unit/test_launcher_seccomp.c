/*
 * Unit tests of --attach's seccomp judge (launcher/ptrace/seccomp.c),
 * without root: filters written here with the kernel's own macros run
 * over the calls --attach makes, and programs the kernel would never have
 * accepted (a jump out, a load past the data, no return) are "cannot be
 * judged", never "allowed".
 */
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>

#include "ptrace/seccomp.h"
#include "unit.h"

#define N(f) (sizeof (f) / sizeof (f)[0])

static const struct seccomp_call prctl_on = { SYS_prctl, AUDIT_ARCH_X86_64, 0x401000, { 67, 1, 0, 0, 0, 0 } };
static const struct seccomp_call prctl_off = { SYS_prctl, AUDIT_ARCH_X86_64, 0x401000, { 67, 0, 0, 0, 0, 0 } };
static const struct seccomp_call madv = { SYS_madvise, AUDIT_ARCH_X86_64, 0x401000, { 0x7f0000000000, 4096, 12, 0, 0, 0 } };

static int64_t run(const struct sock_filter *f, size_t n, const struct seccomp_call *c)
{
	_Static_assert(sizeof(struct sock_filter) == sizeof(struct bpf_insn_c), "the same layout");
	return seccomp_run_filter((const struct bpf_insn_c *)(const void *)f, n, c);
}

/* A typical policy: the architecture checked, prctl refused with EPERM, madvise killed. */
static void test_policy(void)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_prctl, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_madvise, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_THREAD),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct seccomp_call other = prctl_on;

	CHECK(run(f, N(f), &prctl_on) == (SECCOMP_RET_ERRNO | EPERM));
	CHECK(run(f, N(f), &madv) == SECCOMP_RET_KILL_THREAD);
	other.nr = SYS_getpid;
	CHECK(run(f, N(f), &other) == SECCOMP_RET_ALLOW);
	other.arch = AUDIT_ARCH_I386;
	CHECK(run(f, N(f), &other) == SECCOMP_RET_KILL_PROCESS);
}

/* Arguments count: a filter that allows prctl only to switch the flag off (64-bit args, low word). */
static void test_arguments(void)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_prctl, 0, 4),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[1])),
		BPF_STMT(BPF_ALU | BPF_AND | BPF_K, 0xff),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRAP),
	};

	CHECK(run(f, N(f), &prctl_off) == SECCOMP_RET_ALLOW);
	CHECK(run(f, N(f), &prctl_on) == SECCOMP_RET_TRAP);
	/* madvise falls through to the TRAP at the end too (jump of 4 lands there). */
	CHECK(run(f, N(f), &madv) == SECCOMP_RET_TRAP);
}

/* Scratch memory, X, TAX/TXA and RET A. */
static void test_registers(void)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_STMT(BPF_ST, 3),
		BPF_STMT(BPF_LDX | BPF_W | BPF_MEM, 3),
		BPF_STMT(BPF_LD | BPF_IMM, SECCOMP_RET_ERRNO),
		BPF_STMT(BPF_ALU | BPF_OR | BPF_X, 0),
		BPF_STMT(BPF_RET | BPF_A, 0),
	};

	CHECK(run(f, N(f), &madv) == (SECCOMP_RET_ERRNO | SYS_madvise));
}

/*
 * Shifts by X use X & 31 and a division by X = 0 ends the program with 0,
 * as the kernel runs them: the audit's `ldx #32; A <<= X; jeq prctl ->
 * KILL_PROCESS` kills for prctl (a judge that made A << 32 zero allowed it).
 */
static void test_kernel_arithmetic(void)
{
	struct sock_filter shift[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_STMT(BPF_LDX | BPF_W | BPF_IMM, 32),
		BPF_STMT(BPF_ALU | BPF_LSH | BPF_X, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_prctl, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_filter rshift_33[] = {
		BPF_STMT(BPF_LD | BPF_IMM, 0x80),
		BPF_STMT(BPF_LDX | BPF_W | BPF_IMM, 33),
		BPF_STMT(BPF_ALU | BPF_RSH | BPF_X, 0),
		BPF_STMT(BPF_ALU | BPF_OR | BPF_K, SECCOMP_RET_ERRNO),
		BPF_STMT(BPF_RET | BPF_A, 0),
	};
	struct sock_filter div_by_x_zero[] = {
		BPF_STMT(BPF_LD | BPF_IMM, 7),
		BPF_STMT(BPF_LDX | BPF_W | BPF_IMM, 0),
		BPF_STMT(BPF_ALU | BPF_DIV | BPF_X, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_filter const_shift_32[] = {
		BPF_STMT(BPF_ALU | BPF_LSH | BPF_K, 32),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};

	CHECK(run(shift, N(shift), &prctl_on) == SECCOMP_RET_KILL_PROCESS);
	CHECK(run(shift, N(shift), &madv) == SECCOMP_RET_ALLOW);
	CHECK(run(rshift_33, N(rshift_33), &madv) == (SECCOMP_RET_ERRNO | 0x40));
	CHECK(run(div_by_x_zero, N(div_by_x_zero), &madv) == SECCOMP_RET_KILL_THREAD);
	CHECK(run(const_shift_32, N(const_shift_32), &madv) < 0);      /* the kernel refuses it */
}

/* What the kernel would not have installed is never taken for "allow". */
static void test_invalid(void)
{
	struct sock_filter jump_out[] = {
		BPF_JUMP(BPF_JMP | BPF_JA, 5, 0, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_filter cond_out[] = {
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 9, 9),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_filter past_data[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 64),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_filter unaligned[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 2),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_filter byte_load[] = {
		BPF_STMT(BPF_LD | BPF_B | BPF_ABS, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_filter no_return[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 0),
	};
	struct sock_filter div_zero[] = {
		BPF_STMT(BPF_ALU | BPF_DIV | BPF_K, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_filter mem_out[] = {
		BPF_STMT(BPF_ST, 16),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};

	CHECK(run(jump_out, N(jump_out), &prctl_on) < 0);
	CHECK(run(cond_out, N(cond_out), &prctl_on) < 0);
	CHECK(run(past_data, N(past_data), &prctl_on) < 0);
	CHECK(run(unaligned, N(unaligned), &prctl_on) < 0);
	CHECK(run(byte_load, N(byte_load), &prctl_on) < 0);
	CHECK(run(no_return, N(no_return), &prctl_on) < 0);
	CHECK(run(div_zero, N(div_zero), &prctl_on) < 0);
	CHECK(run(mem_out, N(mem_out), &prctl_on) < 0);
	CHECK(run(jump_out, 0, &prctl_on) < 0);
}

/* Of several filters the kernel acts on the strongest answer. */
static void test_precedence(void)
{
	CHECK(seccomp_stronger(SECCOMP_RET_ALLOW, SECCOMP_RET_LOG) == SECCOMP_RET_LOG);
	CHECK(seccomp_stronger(SECCOMP_RET_ERRNO | 1, SECCOMP_RET_TRACE) == (SECCOMP_RET_ERRNO | 1));
	CHECK(seccomp_stronger(SECCOMP_RET_KILL_THREAD, SECCOMP_RET_TRAP) == SECCOMP_RET_KILL_THREAD);
	CHECK(seccomp_stronger(SECCOMP_RET_KILL_THREAD, SECCOMP_RET_KILL_PROCESS) == SECCOMP_RET_KILL_PROCESS);
	CHECK(seccomp_stronger(SECCOMP_RET_USER_NOTIF, SECCOMP_RET_ALLOW) == SECCOMP_RET_USER_NOTIF);
}

UNIT_MAIN(UNIT_TEST(test_policy), UNIT_TEST(test_arguments), UNIT_TEST(test_registers),
	  UNIT_TEST(test_kernel_arithmetic), UNIT_TEST(test_invalid), UNIT_TEST(test_precedence))
