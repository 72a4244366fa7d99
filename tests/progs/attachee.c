/*
 * attachee: a program that checks its own behaviour while ksm-run
 * attaches to it (tests/42-attach.bats).  Each test blocks or computes for
 * SECONDS and exits 0 only when nothing it saw changed: a sleep that was
 * not cut short, a read that got exactly the bytes written, a condition
 * wait that timed out at its deadline, results that stayed the same, no
 * EINTR anywhere.  At the end it prints what PR_GET_MEMORY_MERGE says in
 * it ("merge=N").
 *
 * Usage: attachee [OPTION]... sleep|read|cond|epoll|compute|threads SECONDS
 *   --dup=MIB        first fill MIB of anonymous memory with duplicate pages
 *   --regions=N      first map N separate one-page regions (many calls for
 *                    the madvise form: many stops)
 *   --name=TEXT      its name (comm), as a hostile program may choose it
 *   --remerge=prctl|madvise  a thread that switches KSM back on without
 *                    end: the process-wide flag, or MADV_MERGEABLE on the
 *                    --dup memory (a detach's call is undone at once)
 *   --seccomp=errno|kill  first install a seccomp filter that answers
 *                    prctl and madvise with EPERM, or kills the process
 *   --seccomp=shift  first install a filter that kills the process for
 *                    prctl, found through a shift by X = 32 (which the
 *                    kernel masks to 0: `A << (32 & 31)` is A)
 *   --itimer=US      a SIGALRM every US microseconds, to a handler with
 *                    SA_RESTART (a call made for ksm-run gets interrupted)
 *   --until-bye      the test again and again, each round SECONDS, until a
 *                    line or EOF comes on stdin (then the round ends as it
 *                    should); at the end its threads and open descriptors
 *                    must be as many as before the first round: what an
 *                    attach left in it would show
 * It prints READY when the test starts (tests/helpers.bash's workloads).
 */
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if __has_include(<linux/seccomp.h>)    /* musl-gcc has no kernel headers */
#define HAVE_SECCOMP_HEADERS 1
#include <linux/filter.h>
#include <linux/seccomp.h>
#endif
#include <stddef.h>
#include <sys/epoll.h>
#include <sys/syscall.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/time.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#ifndef PR_SET_MEMORY_MERGE
#define PR_SET_MEMORY_MERGE 67
#endif
#ifndef PR_GET_MEMORY_MERGE
#define PR_GET_MEMORY_MERGE 68
#endif

static double seconds;
static int failures;
static pthread_mutex_t fail_lock = PTHREAD_MUTEX_INITIALIZER;

static void fail(const char *what, const char *detail)
{
	pthread_mutex_lock(&fail_lock);
	failures++;
	fprintf(stderr, "attachee: %s: %s\n", what, detail);
	pthread_mutex_unlock(&fail_lock);
}

static double mono(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

static struct timespec span(double s)
{
	return (struct timespec){ (time_t)s, (long)((s - (double)(time_t)s) * 1e9) };
}

/* nanosleep for SECONDS in one call: it must return 0, not early. */
static void *test_sleep(void *arg)
{
	struct timespec req = span(seconds), rem;
	double t0 = mono();
	char d[128];

	(void)arg;
	if (nanosleep(&req, &rem)) {
		snprintf(d, sizeof d, "returned -1 (%s) after %.3f s", strerror(errno), mono() - t0);
		fail("nanosleep", d);
	} else if (mono() - t0 < seconds - 0.001) {
		snprintf(d, sizeof d, "cut short: %.3f s of %.3f", mono() - t0, seconds);
		fail("nanosleep", d);
	}
	return NULL;
}

struct pipe_writer {
	int fd;
	double after;
};

static void *write_later(void *arg)
{
	struct pipe_writer *w = arg;
	static const char msg[] = "0123456789abcdef";
	struct timespec t = span(w->after);

	while (nanosleep(&t, &t) && errno == EINTR)
		;
	if (write(w->fd, msg, sizeof msg - 1) != sizeof msg - 1)
		fail("write", strerror(errno));
	close(w->fd);
	return NULL;
}

/* One read on a pipe written to after SECONDS: exactly the 16 bytes, then EOF. */
static void *test_read(void *arg)
{
	int fds[2];
	char buf[64], d[128];
	ssize_t n, m;
	pthread_t t;
	struct pipe_writer w;

	(void)arg;
	if (pipe(fds))
		return fail("pipe", strerror(errno)), NULL;
	w = (struct pipe_writer){ fds[1], seconds };
	pthread_create(&t, NULL, write_later, &w);
	n = read(fds[0], buf, sizeof buf);
	if (n != 16 || memcmp(buf, "0123456789abcdef", 16)) {
		snprintf(d, sizeof d, "got %zd bytes (%s)", n, n < 0 ? strerror(errno) : "other bytes");
		fail("read", d);
	}
	pthread_join(t, NULL);
	m = read(fds[0], buf, sizeof buf);
	if (m != 0)
		fail("read", "no end of file after the bytes");
	close(fds[0]);
	return NULL;
}

/* A condition wait that nobody signals: it times out at its deadline, not before. */
static void *test_cond(void *arg)
{
	pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
	pthread_cond_t c;
	pthread_condattr_t ca;
	struct timespec dl;
	double t0;
	int r;
	char d[128];

	(void)arg;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&c, &ca);
	clock_gettime(CLOCK_MONOTONIC, &dl);
	t0 = dl.tv_sec + dl.tv_nsec / 1e9;
	dl.tv_sec += (time_t)seconds;
	dl.tv_nsec += (long)((seconds - (double)(time_t)seconds) * 1e9);
	if (dl.tv_nsec >= 1000000000L) {
		dl.tv_sec++;
		dl.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&m);
	do
		r = pthread_cond_timedwait(&c, &m, &dl);
	while (r == 0);                 /* a spurious wakeup is allowed; the deadline holds */
	pthread_mutex_unlock(&m);
	if (r != ETIMEDOUT) {
		snprintf(d, sizeof d, "returned %s", strerror(r));
		fail("pthread_cond_timedwait", d);
	} else if (mono() - t0 < seconds - 0.001) {
		snprintf(d, sizeof d, "timed out early: %.3f s of %.3f", mono() - t0, seconds);
		fail("pthread_cond_timedwait", d);
	}
	return NULL;
}

/* epoll_wait on nothing: no event, no EINTR, not before its timeout. */
static void *test_epoll(void *arg)
{
	struct epoll_event ev;
	int ep = epoll_create1(EPOLL_CLOEXEC), r;
	double t0 = mono();
	char d[128];

	(void)arg;
	r = epoll_wait(ep, &ev, 1, (int)(seconds * 1000));
	if (r != 0) {
		snprintf(d, sizeof d, "returned %d (%s) after %.3f s", r, r < 0 ? strerror(errno) : "an event",
			 mono() - t0);
		fail("epoll_wait", d);
	} else if (mono() - t0 < seconds - 0.001) {
		snprintf(d, sizeof d, "timed out early: %.3f s", mono() - t0);
		fail("epoll_wait", d);
	}
	close(ep);
	return NULL;
}

/* The same integer and floating-point work, again and again: every round must agree. */
static void *test_compute(void *arg)
{
	double t0 = mono(), ref_f = 0;
	unsigned long long ref_i = 0, rounds = 0;

	(void)arg;
	while (mono() - t0 < seconds) {
		unsigned long long x = 88172645463325252ULL;
		double f = 0;

		for (int i = 1; i <= 20000; i++) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			f += (double)i * 1.000001 / (double)(x % 1000 + 1);
		}
		if (!rounds) {
			ref_i = x;
			ref_f = f;
		} else if (x != ref_i || f != ref_f) {
			fail("compute", "a round gave another result");
			break;
		}
		rounds++;
	}
	return NULL;
}

static void *(*const tests[])(void *) = { test_sleep, test_read, test_cond, test_epoll, test_compute };
static const char *const names[] = { "sleep", "read", "cond", "epoll", "compute" };
#define NTESTS (int)(sizeof tests / sizeof tests[0])

/* Eight threads at once, each one of the tests; the main thread waits in join. */
static void *test_threads(void *arg)
{
	pthread_t t[8];

	(void)arg;
	for (int i = 0; i < 8; i++)
		pthread_create(&t[i], NULL, tests[i % NTESTS], NULL);
	for (int i = 0; i < 8; i++)
		pthread_join(t[i], NULL);
	return NULL;
}

static unsigned char *dup_mem;
static size_t dup_len;

static void fill_duplicates(long mib)
{
	size_t len = (size_t)mib << 20;
	long page = sysconf(_SC_PAGESIZE);
	unsigned char *p = dup_mem = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED) {
		perror("attachee: mmap");
		exit(2);
	}
	for (size_t off = 0; off < len; off += (size_t)page)
		memset(p + off, 0x5a + (int)(off / (size_t)page % 4), (size_t)page);
	dup_len = len;
}

/* --remerge: KSM switched back on as fast as it can, until the end. */
static void *remerge(void *how)
{
	for (;;) {
		if (!strcmp(how, "prctl"))
			prctl(PR_SET_MEMORY_MERGE, 1, 0, 0, 0);
		else if (dup_mem)
			madvise(dup_mem, dup_len, MADV_MERGEABLE);
	}
	return NULL;
}

/* N one-page regions with a hole after each, so that each is a call of its own. */
static void map_regions(long n)
{
	long page = sysconf(_SC_PAGESIZE);
	char *p = mmap(NULL, (size_t)(2 * n * page), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED) {
		perror("attachee: mmap");
		exit(2);
	}
	for (long i = 0; i < 2 * n; i++)
		if (i % 2)
			munmap(p + i * page, (size_t)page);
		else
			p[i * page] = 1;
}

static void tick(int sig)
{
	(void)sig;
}

/* SIGALRM every US microseconds to a handler that restarts what it interrupts. */
static void start_ticks(long us)
{
	struct sigaction sa = { .sa_handler = tick, .sa_flags = SA_RESTART };
	struct itimerval it = { { us / 1000000, us % 1000000 }, { us / 1000000, us % 1000000 } };

	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGALRM, &sa, NULL) || setitimer(ITIMER_REAL, &it, NULL)) {
		perror("attachee: itimer");
		exit(2);
	}
}

/* prctl and madvise answered with EPERM, or the process killed for them. */
#ifndef HAVE_SECCOMP_HEADERS
static void install_seccomp(const char *how)
{
	fprintf(stderr, "attachee: built without kernel headers: no --seccomp=%s\n", how);
	exit(2);
}
#else
/* ld nr; ldx #32; A <<= X; jeq prctl -> KILL_PROCESS (the audit's filter). */
static const struct sock_filter shift_filter[] = {
	BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
	BPF_STMT(BPF_LDX | BPF_W | BPF_IMM, 32),
	BPF_STMT(BPF_ALU | BPF_LSH | BPF_X, 0),
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_prctl, 0, 1),
	BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
	BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
};

static void install_seccomp(const char *how)
{
	unsigned int action = !strcmp(how, "kill") ? SECCOMP_RET_KILL_PROCESS : SECCOMP_RET_ERRNO | EPERM;
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_prctl, 2, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_madvise, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_RET | BPF_K, action),
	};
	struct sock_fprog prog = { sizeof f / sizeof f[0], f };

	if (!strcmp(how, "shift"))
		prog = (struct sock_fprog){ sizeof shift_filter / sizeof shift_filter[0],
					    (struct sock_filter *)shift_filter };
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) || syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog)) {
		perror("attachee: seccomp");
		exit(2);
	}
}
#endif

/* --until-bye: a thread of its own reads stdin; the rounds stop when it ends. */
static atomic_bool bye;

static void *await_bye(void *arg)
{
	char c;
	ssize_t n;

	(void)arg;
	while ((n = read(0, &c, 1)) == 1 ? c != '\n' : n < 0 && errno == EINTR)
		;
	atomic_store(&bye, true);
	return NULL;
}

/* Entries of a /proc/self directory (its own descriptor counted alike each time). */
static int count_entries(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}

/* The test named NAME, or NULL. */
static void *(*test_named(const char *name))(void *)
{
	if (!strcmp(name, "threads"))
		return test_threads;
	for (int k = 0; k < NTESTS; k++)
		if (!strcmp(names[k], name))
			return tests[k];
	return NULL;
}

int main(int argc, char **argv)
{
	const char *seccomp_how = NULL;
	void *(*test)(void *);
	bool until_bye = false;
	int i = 1, fds = 0, threads = 0;
	pthread_t reader;

	for (; i < argc && !strncmp(argv[i], "--", 2); i++) {
		if (!strncmp(argv[i], "--dup=", 6))
			fill_duplicates(atol(argv[i] + 6));
		else if (!strncmp(argv[i], "--regions=", 10))
			map_regions(atol(argv[i] + 10));
		else if (!strncmp(argv[i], "--name=", 7))
			prctl(PR_SET_NAME, argv[i] + 7, 0, 0, 0);
		else if (!strncmp(argv[i], "--seccomp=", 10))
			seccomp_how = argv[i] + 10;
		else if (!strncmp(argv[i], "--remerge=", 10)) {
			pthread_t t;

			pthread_create(&t, NULL, remerge, argv[i] + 10);
		} else if (!strncmp(argv[i], "--itimer=", 9))
			start_ticks(atol(argv[i] + 9));
		else if (!strcmp(argv[i], "--until-bye"))
			until_bye = true;
	}
	if (argc - i != 2 || (seconds = atof(argv[i + 1])) <= 0) {
		fprintf(stderr, "usage: attachee [--dup=MIB] [--regions=N] [--seccomp=errno|kill|shift] [--remerge=prctl|madvise] [--itimer=US] [--until-bye] sleep|read|cond|epoll|compute|threads SECONDS\n");
		return 2;
	}
	if (!(test = test_named(argv[i]))) {
		fprintf(stderr, "attachee: unknown test '%s'\n", argv[i]);
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (until_bye) {
		fds = count_entries("/proc/self/fd");
		threads = count_entries("/proc/self/task");
		pthread_create(&reader, NULL, await_bye, NULL);
	}
	printf("READY %d\n", (int)getpid());
	/* Last: the filter would refuse what the steps before need (madvise in malloc). */
	if (seccomp_how)
		install_seccomp(seccomp_how);
	do
		test(NULL);
	while (until_bye && !atomic_load(&bye));
	if (until_bye) {
		char d[128];

		pthread_join(reader, NULL);
		/*
		 * A joined thread stays in /proc/self/task until the kernel has
		 * reaped it, a moment after the join returns (its exit clears the
		 * thread id that the join waits on first): seen under TCG.
		 */
		for (int tries = 0; tries < 200 && count_entries("/proc/self/task") > threads; tries++)
			nanosleep(&(struct timespec){ 0, 10 * 1000000L }, NULL);
		if (count_entries("/proc/self/fd") != fds || count_entries("/proc/self/task") != threads) {
			snprintf(d, sizeof d, "descriptors %d, then %d; threads %d, then %d", fds,
				 count_entries("/proc/self/fd"), threads, count_entries("/proc/self/task"));
			fail("what it holds", d);
		}
	}
	if (seccomp_how)                /* its own filter would answer the prctl */
		printf("merge=filtered\n");
	else
		printf("merge=%d\n", (int)syscall(SYS_prctl, PR_GET_MEMORY_MERGE, 0, 0, 0, 0));
	if (failures)
		return 1;
	printf("ok\n");
	return 0;
}
