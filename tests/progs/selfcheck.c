/*
 * selfcheck: a target for killing ksm-run in the middle of an attach
 * (tests/42-attach.bats, tests/bench/attach-kill-soak).  For SECONDS its
 * main thread, the one --attach stops, goes round a cycle of
 *   - a busy loop that holds known values in every general register and
 *     checks them afterwards (and the stack pointer),
 *   - a blocking read of a pipe that another thread writes numbered
 *     records to, 200 us after each is asked for (each must come whole
 *     and in order),
 *   - nanosleep (it must not end early, nor fail),
 *   - epoll_wait on that pipe with a timeout (it must not fail),
 * while a third thread keeps a memory invariant and checks it.  Any
 * inconsistency: a line on stderr and exit 1; a crash kills it by its
 * signal (no handler), which its parent sees.  An EINTR of epoll_wait is
 * counted apart (eintr=N): the kernel's own stop semantics (signal(7)),
 * which ksm-run can only undo once it has the thread's registers.
 * At the end it prints "ok cycles=N eintr=N" and exits 0.
 *
 * Usage: selfcheck SECONDS [STOPFILE]  (prints READY first; it also ends
 * when STOPFILE exists)
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

static int pipefd[2], askfd[2];
static volatile int done;
static volatile uint64_t cells[64];     /* their sum is always 0 */

static double mono(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

static void fail(const char *what)
{
	fprintf(stderr, "selfcheck: %s\n", what);
	exit(1);
}

/* Every general register but rbp and rsp holds a constant while it spins; 0 if all held. */
#if defined(__x86_64__)
static long registers_hold(unsigned long spins)
{
	long bad;
	void *sp_before, *sp_after;

	__asm__ volatile("mov %%rsp, %0" : "=r"(sp_before));
	__asm__ volatile(
		"movabs $0x1111111111111111, %%rax\n\t"
		"movabs $0x2222222222222222, %%rbx\n\t"
		"movabs $0x3333333333333333, %%rdx\n\t"
		"movabs $0x4444444444444444, %%rsi\n\t"
		"movabs $0x5555555555555555, %%rdi\n\t"
		"movabs $0x6666666666666666, %%r8\n\t"
		"movabs $0x7777777777777777, %%r9\n\t"
		"movabs $0x8888888888888888, %%r10\n\t"
		"movabs $0x9999999999999999, %%r11\n\t"
		"movabs $0xaaaaaaaaaaaaaaaa, %%r12\n\t"
		"movabs $0xbbbbbbbbbbbbbbbb, %%r13\n\t"
		"movabs $0xcccccccccccccccc, %%r14\n\t"
		"movabs $0xdddddddddddddddd, %%r15\n\t"
		"1: dec %%rcx\n\t"
		"jnz 1b\n\t"
		"movabs $0x1111111111111111, %%rcx\n\tcmp %%rcx, %%rax\n\tjne 2f\n\t"
		"movabs $0x2222222222222222, %%rcx\n\tcmp %%rcx, %%rbx\n\tjne 2f\n\t"
		"movabs $0x3333333333333333, %%rcx\n\tcmp %%rcx, %%rdx\n\tjne 2f\n\t"
		"movabs $0x4444444444444444, %%rcx\n\tcmp %%rcx, %%rsi\n\tjne 2f\n\t"
		"movabs $0x5555555555555555, %%rcx\n\tcmp %%rcx, %%rdi\n\tjne 2f\n\t"
		"movabs $0x6666666666666666, %%rcx\n\tcmp %%rcx, %%r8\n\tjne 2f\n\t"
		"movabs $0x7777777777777777, %%rcx\n\tcmp %%rcx, %%r9\n\tjne 2f\n\t"
		"movabs $0x8888888888888888, %%rcx\n\tcmp %%rcx, %%r10\n\tjne 2f\n\t"
		"movabs $0x9999999999999999, %%rcx\n\tcmp %%rcx, %%r11\n\tjne 2f\n\t"
		"movabs $0xaaaaaaaaaaaaaaaa, %%rcx\n\tcmp %%rcx, %%r12\n\tjne 2f\n\t"
		"movabs $0xbbbbbbbbbbbbbbbb, %%rcx\n\tcmp %%rcx, %%r13\n\tjne 2f\n\t"
		"movabs $0xcccccccccccccccc, %%rcx\n\tcmp %%rcx, %%r14\n\tjne 2f\n\t"
		"movabs $0xdddddddddddddddd, %%rcx\n\tcmp %%rcx, %%r15\n\tjne 2f\n\t"
		"xor %%eax, %%eax\n\tjmp 3f\n"
		"2: mov $1, %%eax\n"
		"3:\n"
		: "=a"(bad), "+c"(spins)
		:
		: "rbx", "rdx", "rsi", "rdi", "r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15", "cc", "memory");
	__asm__ volatile("mov %%rsp, %0" : "=r"(sp_after));
	return bad || sp_before != sp_after;
}
#elif defined(__aarch64__)
/*
 * x0-x27 (not x18, the platform register) and four SIMD registers, both
 * halves, hold constants while it spins, x28 counting; 0 if all held.  A
 * restore by rt_sigreturn (arch_aarch64.c) that lost one would show here.
 */
static long registers_hold(unsigned long spins)
{
	long bad;
	void *sp_before, *sp_after;

	__asm__ volatile("mov %0, sp" : "=r"(sp_before));
	__asm__ volatile(
		"mov x28, %1\n\t"
		"mov x0, #1000\n\t"
		"mov x1, #1001\n\t"
		"mov x2, #1002\n\t"
		"mov x3, #1003\n\t"
		"mov x4, #1004\n\t"
		"mov x5, #1005\n\t"
		"mov x6, #1006\n\t"
		"mov x7, #1007\n\t"
		"mov x8, #1008\n\t"
		"mov x9, #1009\n\t"
		"mov x10, #1010\n\t"
		"mov x11, #1011\n\t"
		"mov x12, #1012\n\t"
		"mov x13, #1013\n\t"
		"mov x14, #1014\n\t"
		"mov x15, #1015\n\t"
		"mov x16, #1016\n\t"
		"mov x17, #1017\n\t"
		"mov x19, #1019\n\t"
		"mov x20, #1020\n\t"
		"mov x21, #1021\n\t"
		"mov x22, #1022\n\t"
		"mov x23, #1023\n\t"
		"mov x24, #1024\n\t"
		"mov x25, #1025\n\t"
		"mov x26, #1026\n\t"
		"mov x27, #1027\n\t"
		"movi v0.16b, #0x11\n\t"
		"movi v8.16b, #0x22\n\t"
		"movi v16.16b, #0x33\n\t"
		"movi v31.16b, #0x44\n\t"
		"1: subs x28, x28, #1\n\t"
		"b.ne 1b\n\t"
		"cmp x0, #1000\n\tb.ne 2f\n\t"
		"cmp x1, #1001\n\tb.ne 2f\n\t"
		"cmp x2, #1002\n\tb.ne 2f\n\t"
		"cmp x3, #1003\n\tb.ne 2f\n\t"
		"cmp x4, #1004\n\tb.ne 2f\n\t"
		"cmp x5, #1005\n\tb.ne 2f\n\t"
		"cmp x6, #1006\n\tb.ne 2f\n\t"
		"cmp x7, #1007\n\tb.ne 2f\n\t"
		"cmp x8, #1008\n\tb.ne 2f\n\t"
		"cmp x9, #1009\n\tb.ne 2f\n\t"
		"cmp x10, #1010\n\tb.ne 2f\n\t"
		"cmp x11, #1011\n\tb.ne 2f\n\t"
		"cmp x12, #1012\n\tb.ne 2f\n\t"
		"cmp x13, #1013\n\tb.ne 2f\n\t"
		"cmp x14, #1014\n\tb.ne 2f\n\t"
		"cmp x15, #1015\n\tb.ne 2f\n\t"
		"cmp x16, #1016\n\tb.ne 2f\n\t"
		"cmp x17, #1017\n\tb.ne 2f\n\t"
		"cmp x19, #1019\n\tb.ne 2f\n\t"
		"cmp x20, #1020\n\tb.ne 2f\n\t"
		"cmp x21, #1021\n\tb.ne 2f\n\t"
		"cmp x22, #1022\n\tb.ne 2f\n\t"
		"cmp x23, #1023\n\tb.ne 2f\n\t"
		"cmp x24, #1024\n\tb.ne 2f\n\t"
		"cmp x25, #1025\n\tb.ne 2f\n\t"
		"cmp x26, #1026\n\tb.ne 2f\n\t"
		"cmp x27, #1027\n\tb.ne 2f\n\t"
		"mov x2, #0x1111\n\tmovk x2, #0x1111, lsl #16\n\tmovk x2, #0x1111, lsl #32\n\tmovk x2, #0x1111, lsl #48\n\t"
		"umov x1, v0.d[0]\n\tcmp x1, x2\n\tb.ne 2f\n\tumov x1, v0.d[1]\n\tcmp x1, x2\n\tb.ne 2f\n\t"
		"mov x2, #0x2222\n\tmovk x2, #0x2222, lsl #16\n\tmovk x2, #0x2222, lsl #32\n\tmovk x2, #0x2222, lsl #48\n\t"
		"umov x1, v8.d[0]\n\tcmp x1, x2\n\tb.ne 2f\n\tumov x1, v8.d[1]\n\tcmp x1, x2\n\tb.ne 2f\n\t"
		"mov x2, #0x3333\n\tmovk x2, #0x3333, lsl #16\n\tmovk x2, #0x3333, lsl #32\n\tmovk x2, #0x3333, lsl #48\n\t"
		"umov x1, v16.d[0]\n\tcmp x1, x2\n\tb.ne 2f\n\tumov x1, v16.d[1]\n\tcmp x1, x2\n\tb.ne 2f\n\t"
		"mov x2, #0x4444\n\tmovk x2, #0x4444, lsl #16\n\tmovk x2, #0x4444, lsl #32\n\tmovk x2, #0x4444, lsl #48\n\t"
		"umov x1, v31.d[0]\n\tcmp x1, x2\n\tb.ne 2f\n\tumov x1, v31.d[1]\n\tcmp x1, x2\n\tb.ne 2f\n\t"
		"mov %0, #0\n\tb 3f\n"
		"2: mov %0, #1\n"
		"3:\n"
		: "=&r"(bad)
		: "r"(spins)
		: "x0", "x1", "x2", "x3", "x4", "x5", "x6", "x7", "x8", "x9", "x10", "x11", "x12", "x13", "x14", "x15", "x16", "x17", "x19", "x20", "x21", "x22", "x23", "x24", "x25", "x26", "x27", "x28",
		  "v0", "v8", "v16", "v31", "cc", "memory");
	__asm__ volatile("mov %0, sp" : "=r"(sp_after));
	return bad || sp_before != sp_after;
}
#else
static long registers_hold(unsigned long spins)
{
	for (volatile unsigned long i = 0; i < spins; i++)
		;
	return 0;
}
#endif

/* Numbered records into the pipe, each 200 us after it is asked for. */
static void *writer(void *arg)
{
	uint64_t n = 0;
	char ask;

	(void)arg;
	while (read(askfd[0], &ask, 1) == 1 && ask) {
		nanosleep(&(struct timespec){ 0, 200000 }, NULL);
		if (write(pipefd[1], &n, sizeof n) != sizeof n)
			fail("write to the pipe failed");
		n++;
	}
	return NULL;
}

/* Moves amounts between cells: their sum stays 0, checked every round. */
static void *shuffler(void *arg)
{
	uint64_t x = 88172645463325252ULL;

	(void)arg;
	while (!done) {
		uint64_t sum = 0;

		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		cells[x % 64] += x;
		cells[(x >> 8) % 64] -= x;
		for (int i = 0; i < 64; i++)
			sum += cells[i];
		if (sum)
			fail("the memory invariant broke");
	}
	return NULL;
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 10, end;
	uint64_t expect = 0, got;
	unsigned long cycles = 0, eintr = 0;
	struct epoll_event ev = { .events = EPOLLIN }, out;
	pthread_t w, s;
	int ep;

	if (pipe(pipefd) || pipe(askfd) || (ep = epoll_create1(0)) < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, pipefd[0], &ev))
		fail("setup");
	if (pthread_create(&w, NULL, writer, NULL) || pthread_create(&s, NULL, shuffler, NULL))
		fail("threads");
	printf("READY %d\n", (int)getpid());
	fflush(stdout);
	end = mono() + seconds;
	while (mono() < end && !(argc > 2 && access(argv[2], F_OK) == 0)) {
		double t0;
		int n;

		if (registers_hold(20000))
			fail("a register changed under the busy loop");
		if (write(askfd[1], "a", 1) != 1)
			fail("write to the pipe failed");
		if (read(pipefd[0], &got, sizeof got) != sizeof got)
			fail(errno == EINTR ? "read of the pipe: EINTR" : "read of the pipe: short or failed");
		if (got != expect)
			fail("read of the pipe: a record lost or out of order");
		expect++;
		t0 = mono();
		if (nanosleep(&(struct timespec){ 0, 300000 }, NULL))
			fail("nanosleep failed");
		if (mono() - t0 < 300e-6)
			fail("nanosleep ended early");
		n = epoll_wait(ep, &out, 1, 2);
		if (n < 0 && errno == EINTR)
			eintr++;
		else if (n < 0)
			fail("epoll_wait failed");
		cycles++;
	}
	done = 1;
	if (write(askfd[1], "", 1) != 1)
		fail("write to the pipe failed");
	pthread_join(w, NULL);
	pthread_join(s, NULL);
	printf("ok cycles=%lu eintr=%lu\n", cycles, eintr);
	return 0;
}
