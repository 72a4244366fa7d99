/*
 * bare - a program without a C library, which maps no memory of its own:
 * after its exec it has only what the kernel made for it (its image and
 * its stack), and no anonymous region or heap.  Each line read on stdin is
 * answered on stdout with "merge_any N", PR_GET_MEMORY_MERGE's answer
 * (-errno where the call fails).  Exits at the end of its input.
 *
 * Why: before Linux 6.14 ksm_stat has no ksm_merge_any, and the
 * process-wide flag shows only in the regions a process maps after the
 * flag was set.  Exec'd while the flag is on (the kernel keeps it since
 * 6.7), this program never shows it there; only the call tells.
 */
#include <errno.h>
#include <sys/syscall.h>

#define PR_GET_MEMORY_MERGE 68          /* include/uapi/linux/prctl.h */

static long sys5(long n, long a, long b, long c, long d, long e)
{
#if defined(__x86_64__)
	register long r10 __asm__("r10") = d, r8 __asm__("r8") = e;
	long r;

	__asm__ volatile("syscall" : "=a"(r) : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8)
			 : "rcx", "r11", "memory");
	return r;
#elif defined(__aarch64__)
	register long x8 __asm__("x8") = n, x0 __asm__("x0") = a, x1 __asm__("x1") = b;
	register long x2 __asm__("x2") = c, x3 __asm__("x3") = d, x4 __asm__("x4") = e;

	__asm__ volatile("svc #0" : "+r"(x0) : "r"(x8), "r"(x1), "r"(x2), "r"(x3), "r"(x4) : "memory");
	return x0;
#else
#error "bare: x86_64 and aarch64 only"
#endif
}

static void answer(void)
{
	static const char head[] = "merge_any ";
	char line[32];
	long v = sys5(SYS_prctl, PR_GET_MEMORY_MERGE, 0, 0, 0, 0);
	unsigned long u = v < 0 ? (unsigned long)-v : (unsigned long)v;
	int n = sizeof line;

	line[--n] = '\n';
	do
		line[--n] = (char)('0' + u % 10);
	while ((u /= 10) != 0);
	if (v < 0)
		line[--n] = '-';
	for (int i = sizeof head - 1; i > 0; i--)
		line[--n] = head[i - 1];
	sys5(SYS_write, 1, (long)(line + n), (long)sizeof line - n, 0, 0);
}

void _start(void);

/* The kernel enters here with a 16-byte aligned stack, not a call's. */
#if defined(__x86_64__)
__attribute__((force_align_arg_pointer))
#endif
void _start(void)
{
	char c;
	long got;

	while ((got = sys5(SYS_read, 0, (long)&c, 1, 0, 0)) == 1 || got == -EINTR)
		if (got == 1 && c == '\n')
			answer();
	sys5(SYS_exit_group, 0, 0, 0, 0, 0);
	for (;;)
		;
}
