/*
 * hostile - hosts that are hard on a preload library, for the test suite.
 * Each case exits 0 when the host saw nothing wrong.
 *
 *   hostile raw-clone   a child made by clone(SIGCHLD) without fork handlers calls exit()
 *   hostile _Fork       the same with _Fork()
 *   hostile vfork       a vfork child calls exit(); the parent's rescan goes on (prints its pid and
 *                       then maps "region later ADDR PID" and waits for a line)
 *   hostile setns       4 threads enter their own network namespace with setns(fd, 0), 50 times each
 *   hostile unshare N   N forked children each enter a new user namespace at once (the rescan
 *                       thread has just started in each)
 *   hostile seccomp     a filter applied to all threads kills on open/openat; rescans go on
 *   hostile tls         a program with 120 KiB of static TLS, while the rescan runs
 *   hostile stderr FILE closes stderr; a data file gets descriptor 2
 *   hostile stress SECONDS  threads map, fill, advise, remap, unmap and fork, checking
 *                       their memory and errno
 */
#include <errno.h>
#include <fcntl.h>
#if __has_include(<linux/seccomp.h>)    /* musl-gcc has no kernel headers */
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#define HAVE_SECCOMP 1
#if defined(__x86_64__)
#define HOSTILE_AUDIT_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define HOSTILE_AUDIT_ARCH AUDIT_ARCH_AARCH64
#endif
#ifndef __NR_open                       /* arm64 and the other asm-generic ABIs: openat only */
#define __NR_open __NR_openat
#endif
#endif
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

static int fail(const char *what)
{
	fprintf(stderr, "hostile: %s: %s\n", what, strerror(errno));
	return 1;
}

/* The child exits through exit(): destructors run in a process without the thread. */
static int wait_child(pid_t pid)
{
	int status;

	if (pid < 0)
		return fail("child");
	if (waitpid(pid, &status, 0) != pid)
		return fail("waitpid");
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
}

static int raw_clone(void)
{
	pid_t pid = (pid_t)syscall(SYS_clone, SIGCHLD, NULL, NULL, NULL, NULL);

	if (pid == 0)
		exit(0);
	return wait_child(pid);
}

static int underscore_fork(void)
{
#if defined(__GLIBC__) && (__GLIBC__ > 2 || __GLIBC_MINOR__ >= 34)
	extern pid_t _Fork(void);
	pid_t pid = _Fork();

	if (pid == 0)
		exit(0);
	return wait_child(pid);
#else
	return raw_clone();
#endif
}

/* vfork, then exit() in the child: wrong, but seen in the wild. */
static int vfork_exit(void)
{
	char line[16];
	char *p;
	pid_t pid = vfork();

	if (pid == 0)
		exit(0);
	if (wait_child(pid))
		return 1;
	/* A small mapping: only a rescan of the parent advises it. */
	p = mmap(NULL, 64 << 10, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return fail("mmap");
	memset(p, 7, 64 << 10);
	printf("region later %lx %d\nREADY %d\n", (unsigned long)p, (int)getpid(), (int)getpid());
	fflush(stdout);
	if (!fgets(line, sizeof line, stdin))
		clearerr(stdin);
	return 0;
}

static void *enter_own_netns(void *unused)
{
	(void)unused;
	for (int i = 0; i < 50; i++) {
		int fd = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
		if (fd < 0 || setns(fd, 0))
			return (void *)1;
		close(fd);
	}
	return NULL;
}

static int concurrent_setns(void)
{
	pthread_t t[4];
	void *r;
	int bad = 0;

	for (int i = 0; i < 4; i++)
		if (pthread_create(&t[i], NULL, enter_own_netns, NULL))
			return fail("pthread_create");
	for (int i = 0; i < 4; i++) {
		pthread_join(t[i], &r);
		bad |= r != NULL;
	}
	return bad;
}

/* A child that enters a user namespace first thing, as unshare(1) and container runtimes do. */
static int unshare_children(int n)
{
	int failed = 0;

	for (int i = 0; i < n; i++) {
		pid_t pid = fork();

		if (pid == 0)
			_exit(unshare(CLONE_NEWUSER) ? 1 : 0);
		failed += wait_child(pid) != 0;
	}
	if (failed)
		fprintf(stderr, "hostile: unshare(CLONE_NEWUSER) failed in %d of %d children\n", failed, n);
	return failed != 0;
}

/* Like a program that sandboxes itself once started: no more open(). */
static int sandboxed(void)
{
#ifndef HAVE_SECCOMP
	fprintf(stderr, "hostile: built without kernel headers: no seccomp case\n");
	return 77;
#else
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, HOSTILE_AUDIT_ARCH, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_openat, 2, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_open, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
	};
	struct sock_fprog prog = { sizeof f / sizeof f[0], f };

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
	    syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC, &prog))
		return fail("seccomp");
	sleep_ms(500);
	return 0;
#endif
}

static __thread char big_tls[120 << 10];

static int large_tls(void)
{
	memset(big_tls, 1, sizeof big_tls);
	sleep_ms(500);
	return big_tls[sizeof big_tls - 1] != 1;
}

static int reused_stderr(const char *file)
{
	int fd;

	close(STDERR_FILENO);
	fd = open(file, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd != STDERR_FILENO)
		return 2;
	if (write(fd, "data\n", 5) != 5)
		return 2;
	return 0;
}

/* ---- stress ---- */

static volatile int stop;
static volatile int errors;

static uint32_t next_rand(uint32_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 17;
	*s ^= *s << 5;
	return *s;
}

static int check_fill(uint64_t *p, size_t len, uint64_t v)
{
	for (size_t i = 0; i < len / 8; i += 512)
		if (p[i] != v)
			return 1;
	return 0;
}

static void fill_words(uint64_t *p, size_t len, uint64_t v)
{
	for (size_t i = 0; i < len / 8; i += 512)
		p[i] = v;
}

static void *stress_thread(void *arg)
{
	uint32_t seed = (uint32_t)(uintptr_t)arg * 2654435761u | 1;
	static const int advice[] = { MADV_UNMERGEABLE, MADV_MERGEABLE, MADV_DONTDUMP, MADV_DODUMP,
				      MADV_WIPEONFORK, MADV_KEEPONFORK };

	while (!stop) {
		size_t len = ((next_rand(&seed) % 64) + 1) * 32768;
		uint64_t v = next_rand(&seed) | 1;
		uint64_t *p;

		errno = E2BIG;
		p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED || errno != E2BIG) {
			errors++;
			continue;
		}
		fill_words(p, len, v);
		errno = EDOM;
		/* The whole mapping: mremap moves a single VMA only. */
		if (madvise(p, len, advice[next_rand(&seed) % 6]) || errno != EDOM)
			errors++;
		if (next_rand(&seed) % 4 == 0) {
			uint64_t *q = mremap(p, len, 2 * len, MREMAP_MAYMOVE);
			if (q == MAP_FAILED) {
				errors++;
			} else {
				p = q;
				if (check_fill(p, len, v))
					errors++;
				fill_words(p, 2 * len, v);
				len *= 2;
			}
		}
		if (check_fill(p, len, v))
			errors++;
		errno = ERANGE;
		if (munmap(p, len) || errno != ERANGE)
			errors++;
	}
	return NULL;
}

static int stress(int seconds)
{
	pthread_t t[8];
	double end;
	struct timespec now;
	int forks = 0;

	for (int i = 0; i < 8; i++)
		if (pthread_create(&t[i], NULL, stress_thread, (void *)(uintptr_t)(i + 1)))
			return fail("pthread_create");
	clock_gettime(CLOCK_MONOTONIC, &now);
	end = now.tv_sec + now.tv_nsec / 1e9 + seconds;
	do {
		pid_t pid = fork();
		if (pid == 0) {
			/* The child maps and checks too, with its own rescan thread. */
			uint64_t *p = mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
			if (p == MAP_FAILED)
				_exit(2);
			fill_words(p, 1 << 20, 42);
			sleep_ms(30);
			exit(check_fill(p, 1 << 20, 42) ? 3 : 0);
		}
		if (wait_child(pid))
			errors++;
		forks++;
		sleep_ms(20);
		clock_gettime(CLOCK_MONOTONIC, &now);
	} while (now.tv_sec + now.tv_nsec / 1e9 < end);
	stop = 1;
	for (int i = 0; i < 8; i++)
		pthread_join(t[i], NULL);
	printf("stress: %d forks, %d errors\n", forks, errors);
	return errors != 0;
}

int main(int argc, char **argv)
{
	const char *c = argc > 1 ? argv[1] : "";

	if (!strcmp(c, "raw-clone"))
		return raw_clone();
	if (!strcmp(c, "_Fork"))
		return underscore_fork();
	if (!strcmp(c, "vfork"))
		return vfork_exit();
	if (!strcmp(c, "setns"))
		return concurrent_setns();
	if (!strcmp(c, "unshare") && argc > 2)
		return unshare_children(atoi(argv[2]));
	if (!strcmp(c, "seccomp"))
		return sandboxed();
	if (!strcmp(c, "tls"))
		return large_tls();
	if (!strcmp(c, "stderr") && argc > 2)
		return reused_stderr(argv[2]);
	if (!strcmp(c, "stress") && argc > 2)
		return stress(atoi(argv[2]));
	fprintf(stderr, "usage: hostile raw-clone|_Fork|vfork|setns|unshare N|seccomp|tls|stderr FILE|stress SECONDS\n");
	return 99;
}
