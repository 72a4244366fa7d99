/*
 * seccomp.h - what a target's seccomp filters would do with a system call
 * that --attach wants it to make (seccomp.c), judged before the call is
 * made: a filter may kill the process, or send it SIGSYS, for a call it
 * never makes itself, and --attach must never harm its target.
 */
#ifndef KSMRUN_SECCOMP_H
#define KSMRUN_SECCOMP_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct bpf_insn_c {                     /* struct sock_filter, spelled out */
	uint16_t code;
	uint8_t jt, jf;
	uint32_t k;
};

/* The data a filter sees: struct seccomp_data. */
struct seccomp_call {
	int32_t nr;
	uint32_t arch;
	uint64_t ip;
	uint64_t args[6];
};

/*
 * Runs the classic BPF program PROG of N instructions over CALL: the
 * filter's 32-bit answer (SECCOMP_RET_*), or -1 for a program that is not
 * a valid seccomp filter (an unknown instruction, a jump out of it, no
 * return): then nothing may be assumed of it.
 */
int64_t seccomp_run_filter(const struct bpf_insn_c *prog, size_t n, const struct seccomp_call *call);

/* Of two answers, the one the kernel acts on (the lower action, signed; A on a tie). */
uint32_t seccomp_stronger(uint32_t a, uint32_t b);

/* A thread's filters, newest first, as read from the kernel. */
struct seccomp_filters {
	int mode;                       /* 0 none, 1 strict, 2 filters */
	int n;
	struct bpf_insn_c *prog[64];
	size_t len[64];
	char error[160];                /* why they could not be read; "" */
};

/* Reads the filters of thread TID (stopped under our ptrace; root for filters). */
void seccomp_load(pid_t tid, struct seccomp_filters *f);
void seccomp_free(struct seccomp_filters *f);

/*
 * Would F let CALL through?  0 when they allow it (or there are none),
 * else -1 with the answer in WHY ("its seccomp filter answers prctl with
 * KILL_PROCESS"): also when they could not be read.  NAME names the call.
 */
int seccomp_allows(const struct seccomp_filters *f, const struct seccomp_call *call, const char *name,
		   char *why, size_t whylen);

#endif
