/*
 * seccomp.c: a target's seccomp filters, read with PTRACE_SECCOMP_GET_FILTER
 * (CAP_SYS_ADMIN) and run here over the call --attach would make, so that
 * a call its policy answers with anything but "allow" is never made.
 *
 * The programs come from the kernel, which checked them when they were
 * installed; they are still run defensively (every jump and load bounded),
 * since a mistake here would decide over another process's life.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>

#include "ptrace/restart.h"
#include "ptrace/seccomp.h"
#include "common/files.h"

#ifndef PTRACE_SECCOMP_GET_FILTER
#define PTRACE_SECCOMP_GET_FILTER 0x420c
#endif

/* The kernel's answers (uapi/linux/seccomp.h). */
#define RET_KILL_PROCESS 0x80000000U
#define RET_KILL_THREAD 0x00000000U
#define RET_TRAP 0x00030000U
#define RET_ERRNO 0x00050000U
#define RET_USER_NOTIF 0x7fc00000U
#define RET_TRACE 0x7ff00000U
#define RET_LOG 0x7ffc0000U
#define RET_ALLOW 0x7fff0000U
#define RET_ACTION_FULL 0xffff0000U
#define RET_DATA 0x0000ffffU

#define MAX_INSNS 4096                  /* BPF_MAXINSNS: the kernel's own bound */

/* Classic BPF, as <linux/filter.h> has it. */
enum { CLS_LD, CLS_LDX, CLS_ST, CLS_STX, CLS_ALU, CLS_JMP, CLS_RET, CLS_MISC };
#define CLASS(c) ((c) & 0x07)
#define SIZE(c) ((c) & 0x18)
#define MODE(c) ((c) & 0xe0)
#define OP(c) ((c) & 0xf0)
#define SRC_X(c) ((c) & 0x08)
#define SZ_W 0x00
#define M_IMM 0x00
#define M_ABS 0x20
#define M_MEM 0x60
#define M_LEN 0x80

static bool load_word(const struct seccomp_call *call, uint32_t off, uint32_t *v)
{
	unsigned char data[64];

	_Static_assert(sizeof *call == sizeof data, "seccomp_data is 64 bytes");
	if (off % 4 || off > sizeof data - 4)
		return false;
	memcpy(data, call, sizeof data);
	memcpy(v, data + off, 4);
	return true;
}

/*
 * What an ALU instruction does, as the kernel runs classic BPF (the
 * program is converted to eBPF, net/core/filter.c, and run 32-bit): a
 * shift by X uses X & 31 (`A << (32 & 31)` is A, not 0); a shift by K >= 32
 * and a division by K = 0 are refused when the filter is installed; a
 * division (or modulo) by X = 0 ends the program with 0 (KILL_THREAD).
 */
enum alu_end { ALU_GO_ON, ALU_RETURNS_ZERO, ALU_INVALID };

static enum alu_end alu(uint16_t code, uint32_t *a, uint32_t operand)
{
	bool by_x = SRC_X(code);

	switch (OP(code)) {
	case 0x00: *a += operand; return ALU_GO_ON;
	case 0x10: *a -= operand; return ALU_GO_ON;
	case 0x20: *a *= operand; return ALU_GO_ON;
	case 0x40: *a |= operand; return ALU_GO_ON;
	case 0x50: *a &= operand; return ALU_GO_ON;
	case 0x80: *a = -*a; return ALU_GO_ON;
	case 0xa0: *a ^= operand; return ALU_GO_ON;
	case 0x30:
	case 0x90:
		if (!operand)
			return by_x ? ALU_RETURNS_ZERO : ALU_INVALID;
		*a = OP(code) == 0x30 ? *a / operand : *a % operand;
		return ALU_GO_ON;
	case 0x60:
	case 0x70:
		if (!by_x && operand >= 32)
			return ALU_INVALID;
		*a = OP(code) == 0x60 ? *a << (operand & 31) : *a >> (operand & 31);
		return ALU_GO_ON;
	}
	return ALU_INVALID;
}

static bool jump_taken(uint16_t code, uint32_t a, uint32_t operand)
{
	switch (OP(code)) {
	case 0x10: return a == operand;
	case 0x20: return a > operand;
	case 0x30: return a >= operand;
	case 0x40: return (a & operand) != 0;
	}
	return false;
}

int64_t seccomp_run_filter(const struct bpf_insn_c *prog, size_t n, const struct seccomp_call *call)
{
	uint32_t a = 0, x = 0, mem[16] = { 0 };

	if (n == 0 || n > MAX_INSNS)
		return -1;
	for (size_t pc = 0; pc < n; pc++) {
		const struct bpf_insn_c *in = &prog[pc];
		uint32_t operand = SRC_X(in->code) ? x : in->k;

		switch (CLASS(in->code)) {
		case CLS_LD:
		case CLS_LDX: {
			uint32_t v;

			if (SIZE(in->code) != SZ_W)
				return -1;
			switch (MODE(in->code)) {
			case M_IMM: v = in->k; break;
			case M_LEN: v = sizeof *call; break;
			case M_MEM: if (in->k >= 16) return -1; v = mem[in->k]; break;
			case M_ABS: if (CLASS(in->code) != CLS_LD || !load_word(call, in->k, &v)) return -1; break;
			default: return -1;
			}
			*(CLASS(in->code) == CLS_LD ? &a : &x) = v;
			break;
		}
		case CLS_ST:
		case CLS_STX:
			if (in->k >= 16)
				return -1;
			mem[in->k] = CLASS(in->code) == CLS_ST ? a : x;
			break;
		case CLS_ALU:
			switch (alu(in->code, &a, operand)) {
			case ALU_GO_ON: break;
			case ALU_RETURNS_ZERO: return 0;
			case ALU_INVALID: return -1;
			}
			break;
		case CLS_JMP:
			if (OP(in->code) == 0x00) {
				if (in->k >= n - pc - 1)
					return -1;
				pc += in->k;
			} else {
				unsigned off = jump_taken(in->code, a, operand) ? in->jt : in->jf;

				if (OP(in->code) > 0x40 || off >= n - pc - 1)
					return -1;
				pc += off;
			}
			break;
		case CLS_RET:
			switch (in->code & 0x18) {
			case 0x00: return in->k;
			case 0x10: return a;
			}
			return -1;
		case CLS_MISC:
			if (in->code & 0xf8 & ~0x80)
				return -1;
			if (in->code & 0x80)
				a = x;
			else
				x = a;
			break;
		}
	}
	return -1;                      /* ran off the end: no answer */
}

uint32_t seccomp_stronger(uint32_t a, uint32_t b)
{
	return (int32_t)(a & RET_ACTION_FULL) < (int32_t)(b & RET_ACTION_FULL) ? a : b;
}

static void describe(uint32_t ret, const char *name, char *why, size_t whylen)
{
	const char *what;

	switch (ret & RET_ACTION_FULL) {
	case RET_KILL_PROCESS: what = "KILL_PROCESS (it would be killed)"; break;
	case RET_KILL_THREAD: what = "KILL_THREAD (its thread would be killed)"; break;
	case RET_TRAP: what = "TRAP (it would get SIGSYS)"; break;
	case RET_ERRNO:
		snprintf(why, whylen, "its seccomp filter refuses %s (ERRNO %s)", name,
			 restart_strerror(-(long)(ret & RET_DATA)));
		return;
	case RET_USER_NOTIF: what = "USER_NOTIF (its supervisor would be asked)"; break;
	case RET_TRACE: what = "TRACE (its tracer would be asked)"; break;
	default: what = "an unknown action"; break;
	}
	snprintf(why, whylen, "its seccomp filter answers %s with %s; not made", name, what);
}

/* The "Seccomp:" mode of /proc/TID/status: 0 none, 1 strict, 2 filter; -1 unknown. */
static int seccomp_mode(pid_t tid)
{
	char path[64], text[4096], *p;

	snprintf(path, sizeof path, "/proc/%d/status", (int)tid);
	if (read_text(path, text, sizeof text) || !(p = strstr(text, "\nSeccomp:")))
		return -1;
	return atoi(p + 9);
}

void seccomp_load(pid_t tid, struct seccomp_filters *f)
{
	memset(f, 0, sizeof *f);
	if ((f->mode = seccomp_mode(tid)) != 2)
		return;
	for (long i = 0;; i++) {
		long n = ptrace(PTRACE_SECCOMP_GET_FILTER, tid, (void *)i, NULL);

		if (n < 0 && errno == ENOENT && i > 0)
			return;
		if (n < 0) {
			snprintf(f->error, sizeof f->error, "its seccomp filter cannot be read (%s%s)",
				 strerror(errno), errno == EACCES ? ": that takes CAP_SYS_ADMIN, run as root" : "");
			return;
		}
		if (i >= (long)(sizeof f->prog / sizeof f->prog[0]) || n == 0 || n > MAX_INSNS ||
		    !(f->prog[i] = calloc((size_t)n, sizeof *f->prog[i]))) {
			snprintf(f->error, sizeof f->error, "its seccomp filters cannot all be read (filter %ld)", i);
			return;
		}
		f->n = (int)i + 1;
		if (ptrace(PTRACE_SECCOMP_GET_FILTER, tid, (void *)i, f->prog[i]) != n) {
			snprintf(f->error, sizeof f->error, "its seccomp filter %ld cannot be read", i);
			return;
		}
		f->len[i] = (size_t)n;
	}
}

void seccomp_free(struct seccomp_filters *f)
{
	for (int i = 0; i < f->n; i++)
		free(f->prog[i]);
	f->n = 0;
}

int seccomp_allows(const struct seccomp_filters *f, const struct seccomp_call *call, const char *name,
		   char *why, size_t whylen)
{
	uint32_t verdict = RET_ALLOW;

	switch (f->mode) {
	case 0:
		return 0;
	case 1:
		snprintf(why, whylen, "it runs in strict seccomp mode, which kills it for %s; not made", name);
		return -1;
	case 2:
		break;
	default:
		snprintf(why, whylen, "its seccomp mode cannot be read; %s not made", name);
		return -1;
	}
	if (f->error[0]) {
		snprintf(why, whylen, "%s, so %s might kill it; not made", f->error, name);
		return -1;
	}
	for (int i = 0; i < f->n; i++) {
		int64_t r = seccomp_run_filter(f->prog[i], f->len[i], call);

		if (r < 0) {
			snprintf(why, whylen, "its seccomp filter %d cannot be judged; %s not made", i, name);
			return -1;
		}
		verdict = seccomp_stronger((uint32_t)r, verdict);  /* a tie: the newer's */
	}
	if ((verdict & RET_ACTION_FULL) == RET_ALLOW || (verdict & RET_ACTION_FULL) == RET_LOG)
		return 0;
	describe(verdict, name, why, whylen);
	return -1;
}
