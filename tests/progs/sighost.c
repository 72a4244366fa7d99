/*
 * sighost - a program whose signal handler maps memory, forks or spawns
 * while its main loop marks and maps memory, with the handler made to run
 * inside each of the library's locked sections by design, not by chance.
 *
 *   sighost ROUNDS map|fork|_Fork|clone|vfork|spawn
 *   sighost ROUNDS held-_Fork|held-clone
 *
 * How the handler gets inside the library: this program defines the
 * pthread functions that take and release mutexes and read-write locks
 * (lock, trylock, unlock; rdlock, wrlock and their try forms), exported, so that the
 * preloaded library's calls come here first (the executable is first in
 * the lookup order).  On the main thread each raises SIGALRM just before
 * and just after the real call: a poke.  Where the library holds signals,
 * the handler runs when it lets them go; elsewhere it runs there and then,
 * inside the library's call.  An interval timer adds signals at other
 * moments; it is one-shot and the handler re-arms it, so that the main
 * loop runs between two signals whatever a handler costs (a periodic 2 ms
 * timer starved it wherever a fork took longer than that).
 *
 * Every handler maps and unmaps 64 KiB and 1 MiB (the size the library
 * advises at once).  The timer's, and one poke's per round (round R: the
 * (R mod P)th poke, P the pokes of a round, so that over P rounds each
 * poke's turn comes), then make a child, by the second argument:
 *   fork, _Fork, clone  fork(), _Fork() or a raw clone(SIGCHLD); the child
 *          checks that it is its process's only thread (a fork child may
 *          be in a signal handler, where the library may start nothing)
 *          and exits; the parent reaps it
 *   vfork  the child exits at once
 *   spawn  posix_spawn of this program, which exits at once (sighost exit)
 *   map    no child
 * Each round of the main loop: madvise DONTDUMP and DODUMP of 1 MiB, mlock
 * and munlock of 64 KiB (recorded by the library under its marks lock),
 * mmap and munmap of 64 KiB and of 1 MiB, and every 8th round a fork (the
 * library's fork handlers).
 *
 * held-_Fork, held-clone: a child made without fork's handlers while
 * another thread holds one of the library's locks.  A helper thread
 * marks, maps and unmaps memory without pause (and in madvise mode the
 * library's rescan thread passes).  The locks they take are noted as they
 * are taken; round R picks the (R mod L)th of the L seen so far, and when
 * another thread has just taken it, that thread waits there while the
 * main thread makes the child by _Fork() or a raw clone(SIGCHLD).  The
 * child maps and unmaps 64 KiB and 1 MiB, marks and locks memory and forks
 * (the calls that take the library's locks), then exits: it must end,
 * within 10 s.
 *
 * Prints "sighost: R rounds, P pokes, S signals (I inside the library's
 * calls), C children" (held: "sighost: R rounds, L locks, H held at a
 * child, C children") and exits 0; 1 with a line saying what failed.
 */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

enum what { MAP, FORK, UFORK, CLONE, VFORK, SPAWN, HELD_UFORK, HELD_CLONE };
static const char *const what_names[] = { "map", "fork", "_Fork", "clone", "vfork", "spawn", "held-_Fork",
					  "held-clone" };

static enum what what;
static pid_t main_tid;
/* Set at once in every child: the hooks then do nothing there. */
static volatile sig_atomic_t in_child;
static volatile sig_atomic_t failed, in_handler, heavy_next, signals, inside, children;
static char failure[160];
static volatile int lock_depth;         /* the main thread's library lock calls under way */
static long pokes, round_pokes, heavy_poke;

static void fail(const char *msg)
{
	if (!failed) {
		snprintf(failure, sizeof failure, "%s", msg);
		failed = 1;
	}
}

static pid_t gettid_raw(void)
{
	return (pid_t)syscall(SYS_gettid);
}

/* The program's main thread, once main has begun; never in a child. */
static int on_main_thread(void)
{
	return !in_child && main_tid && gettid_raw() == main_tid;
}

static int on_other_thread(void)
{
	return !in_child && main_tid && gettid_raw() != main_tid;
}

/* --- The pokes --------------------------------------------------------- */

static void poke(void)
{
	if (what >= HELD_UFORK || in_handler || !on_main_thread())
		return;
	if (pokes++ - round_pokes == heavy_poke)
		heavy_next = 1;
	syscall(SYS_tgkill, main_tid, main_tid, SIGALRM);
}

/* --- Locks held by another thread (held-*) ---------------------------- */

#define MAX_LOCKS 16
static struct seen { const void *lock; int kind; } seen[MAX_LOCKS];
static int nseen;
static pthread_mutex_t seen_mutex = PTHREAD_MUTEX_INITIALIZER;
static int hold_kind = -1;
static volatile int holding, release_holder;
static const void *volatile hold_lock;

static int (*real_mutex_lock)(pthread_mutex_t *);

static void note_lock(const void *lock, int kind)
{
	int i;

	real_mutex_lock(&seen_mutex);
	for (i = 0; i < nseen && (seen[i].lock != lock || seen[i].kind != kind); i++)
		;
	if (i == nseen && nseen < MAX_LOCKS)
		seen[nseen++] = (struct seen){ lock, kind };
	pthread_mutex_unlock(&seen_mutex);
}

/* Another thread has taken LOCK: when it is the one asked for, it waits here (at most 5 s). */
static void held_by_other(const void *lock, int kind)
{
	if (lock == &seen_mutex)
		return;
	note_lock(lock, kind);
	if (hold_lock != lock || !__atomic_compare_exchange_n(&hold_kind, &kind, -1, 0, __ATOMIC_ACQ_REL,
							       __ATOMIC_RELAXED))
		return;
	holding = 1;
	for (int i = 0; i < 5000 && !release_holder; i++)
		usleep(1000);
	release_holder = 0;
	holding = 0;
}

/* --- The hooks: the library's lock calls come here first -------------- */

enum { MUTEX, READ, WRITE };

#define REAL(var, name) \
	(var ? var : (var = (__typeof__(var))dlsym(RTLD_NEXT, name)))

static void before_lock(void)
{
	poke();
}

static void after_lock(const void *lock, int kind)
{
	if (on_other_thread() && what >= HELD_UFORK)
		held_by_other(lock, kind);
	if (on_main_thread()) {
		lock_depth++;
		poke();
	}
}

static void before_unlock(void)
{
	if (on_main_thread()) {
		poke();
		lock_depth--;
	}
}

int pthread_mutex_lock(pthread_mutex_t *m)
{
	int r;

	if (!REAL(real_mutex_lock, "pthread_mutex_lock"))
		return ENOSYS;
	before_lock();
	r = real_mutex_lock(m);
	after_lock(m, MUTEX);
	return r;
}

int pthread_mutex_trylock(pthread_mutex_t *m)
{
	static int (*real)(pthread_mutex_t *);
	int r;

	if (!REAL(real, "pthread_mutex_trylock"))
		return ENOSYS;
	before_lock();
	if ((r = real(m)) == 0)
		after_lock(m, MUTEX);
	return r;
}

int pthread_mutex_unlock(pthread_mutex_t *m)
{
	static int (*real)(pthread_mutex_t *);

	if (!REAL(real, "pthread_mutex_unlock"))
		return ENOSYS;
	if (m != &seen_mutex)
		before_unlock();
	return real(m);
}

int pthread_rwlock_rdlock(pthread_rwlock_t *l)
{
	static int (*real)(pthread_rwlock_t *);
	int r;

	if (!REAL(real, "pthread_rwlock_rdlock"))
		return ENOSYS;
	before_lock();
	r = real(l);
	after_lock(l, READ);
	return r;
}

int pthread_rwlock_wrlock(pthread_rwlock_t *l)
{
	static int (*real)(pthread_rwlock_t *);
	int r;

	if (!REAL(real, "pthread_rwlock_wrlock"))
		return ENOSYS;
	before_lock();
	r = real(l);
	after_lock(l, WRITE);
	return r;
}

int pthread_rwlock_tryrdlock(pthread_rwlock_t *l)
{
	static int (*real)(pthread_rwlock_t *);
	int r;

	if (!REAL(real, "pthread_rwlock_tryrdlock"))
		return ENOSYS;
	before_lock();
	if ((r = real(l)) == 0)
		after_lock(l, READ);
	return r;
}

int pthread_rwlock_trywrlock(pthread_rwlock_t *l)
{
	static int (*real)(pthread_rwlock_t *);
	int r;

	if (!REAL(real, "pthread_rwlock_trywrlock"))
		return ENOSYS;
	before_lock();
	if ((r = real(l)) == 0)
		after_lock(l, WRITE);
	return r;
}

int pthread_rwlock_unlock(pthread_rwlock_t *l)
{
	static int (*real)(pthread_rwlock_t *);

	if (!REAL(real, "pthread_rwlock_unlock"))
		return ENOSYS;
	before_unlock();
	return real(l);
}

/* --- What handlers and children do ------------------------------------ */

static void map_and_unmap(size_t len)
{
	char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED) {
		fail("mmap failed");
		return;
	}
	p[0] = 1;
	if (munmap(p, len))
		fail("munmap failed");
}

/* Threads of this process, by system calls only (a child may be in a handler). */
static int thread_count(void)
{
	char buf[4096];
	int fd = open("/proc/self/task", O_RDONLY | O_DIRECTORY | O_CLOEXEC), n = 0;
	long got;

	if (fd < 0)
		return -1;
	while ((got = syscall(SYS_getdents64, fd, buf, sizeof buf)) > 0)
		for (long off = 0; off < got;) {
			struct dirent64 *d = (struct dirent64 *)(buf + off);
			n += d->d_name[0] != '.';
			off += d->d_reclen;
		}
	close(fd);
	return n;
}

/* In a child of fork, _Fork or clone: exit 0 when it is its process's only thread. */
static _Noreturn void child_alone(void)
{
	in_child = 1;
	_exit(thread_count() == 1 ? 0 : 3);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Reaps PID within 10 s; a child still there then is killed and counts as hung. */
static void reap(pid_t pid, const char *how)
{
	const struct timespec tick = { 0, 100000 };
	double deadline = now_s() + 10;
	char msg[160];
	int status = 0;
	pid_t got;

	while ((got = waitpid(pid, &status, WNOHANG)) == 0 && now_s() < deadline)
		nanosleep(&tick, NULL);
	if (got == 0) {
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
		snprintf(msg, sizeof msg, "a child of %s hung (killed after 10 s)", how);
		fail(msg);
	} else if (got != pid) {
		fail("waitpid failed");
	} else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		snprintf(msg, sizeof msg, "a child of %s ended with status 0x%x%s", how, status,
			 WIFEXITED(status) && WEXITSTATUS(status) == 3 ?
			 " (it was not its process's only thread: the library started one)" : "");
		fail(msg);
	} else {
		children++;
	}
}

static pid_t raw_clone(void)
{
	return (pid_t)syscall(SYS_clone, (unsigned long)SIGCHLD, 0UL, 0UL, 0UL, 0UL);
}

static void make_child(void)
{
	char self[] = "sighost", exit_arg[] = "exit";
	char *argv[] = { self, exit_arg, NULL };
	pid_t pid = -1;

	switch (what) {
	case FORK: pid = fork(); break;
	case UFORK: pid = _Fork(); break;
	case CLONE: pid = raw_clone(); break;
	case VFORK:
		pid = vfork();
		if (pid == 0)
			_exit(0);
		break;
	case SPAWN:
		if (posix_spawn(&pid, "/proc/self/exe", NULL, NULL, argv, environ))
			pid = -1;
		break;
	default:
		return;
	}
	if (pid == 0)
		child_alone();
	if (pid < 0)
		fail("the child could not be made");
	else
		reap(pid, what_names[what]);
}

static void on_alarm(int sig, siginfo_t *si, void *uc)
{
	int saved_errno = errno;
	/* The poke whose turn it is: a child too. */
	int heavy = heavy_next;

	(void)sig, (void)si, (void)uc;
	in_handler = 1;
	signals++;
	if (lock_depth > 0)
		inside++;
	map_and_unmap(64 << 10);
	map_and_unmap(1 << 20);
	if (heavy) {
		heavy_next = 0;
		make_child();
	}
	in_handler = 0;
	/* One-shot, re-armed here: the main loop always gets its turn. */
	struct itimerval it = { { 0, 0 }, { 0, 2000 } };
	setitimer(ITIMER_REAL, &it, NULL);
	errno = saved_errno;
}

/* --- The main loop ---------------------------------------------------- */

static void one_round(long r, char *region, char *small)
{
	if (madvise(region, 1 << 20, MADV_DONTDUMP) || madvise(region, 1 << 20, MADV_DODUMP))
		fail("madvise failed");
	if (mlock(small, 64 << 10) || munlock(small, 64 << 10))
		fail("mlock failed");
	map_and_unmap(64 << 10);
	map_and_unmap(1 << 20);
	if (r % 8 == 0) {
		pid_t pid = fork();
		if (pid == 0)
			child_alone();
		if (pid < 0)
			fail("fork failed");
		else
			reap(pid, "fork in the main loop");
	}
}

static int run_pokes(long rounds, char *region, char *small)
{
	struct sigaction sa;
	struct itimerval it = { { 0, 0 }, { 0, 2000 } };
	long per_round = 0;

	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = on_alarm;
	sa.sa_flags = SA_RESTART | SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGALRM, &sa, NULL) || setitimer(ITIMER_REAL, &it, NULL))
		return perror("sighost: timer"), 1;
	for (long r = 0; r < rounds && !failed; r++) {
		round_pokes = pokes;
		heavy_poke = per_round ? r % per_round : 0;
		one_round(r, region, small);
		per_round = pokes - round_pokes;
	}
	memset(&it, 0, sizeof it);
	setitimer(ITIMER_REAL, &it, NULL);
	signal(SIGALRM, SIG_IGN);
	if (failed)
		return fprintf(stderr, "sighost: %s\n", failure), 1;
	printf("sighost: %ld rounds, %ld pokes, %d signals (%d inside the library's calls), %d children\n",
	       rounds, pokes, (int)signals, (int)inside, (int)children);
	return 0;
}

/* --- held-*: the other thread, and the children ------------------------ */

static volatile int helper_stop;

static void *helper(void *arg)
{
	char *region = arg;

	while (!helper_stop) {
		if (madvise(region, 1 << 20, MADV_DONTDUMP) || madvise(region, 1 << 20, MADV_DODUMP))
			fail("madvise failed in the helper");
		map_and_unmap(1 << 20);
	}
	return NULL;
}

/* The child: the calls that take the library's locks, then exit. */
static _Noreturn void held_child(char *region, char *small)
{
	pid_t pid;
	int status;

	in_child = 1;
	map_and_unmap(64 << 10);
	map_and_unmap(1 << 20);
	if (madvise(region, 1 << 20, MADV_DONTDUMP) || madvise(region, 1 << 20, MADV_DODUMP) ||
	    mlock(small, 64 << 10) || munlock(small, 64 << 10))
		_exit(4);
	pid = fork();
	if (pid == 0)
		_exit(0);
	_exit(pid > 0 && waitpid(pid, &status, 0) == pid && status == 0 ? 0 : 5);
}

static int run_held(long rounds, char *region, char *small)
{
	pthread_t t;
	char *helper_region = mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	long held = 0;
	int locks;

	if (helper_region == MAP_FAILED || pthread_create(&t, NULL, helper, helper_region))
		return perror("sighost: helper"), 1;
	for (long r = 0; r < rounds && !failed; r++) {
		int i;
		pid_t pid;
		for (i = 0; i < 2000 && !nseen; i++)
			usleep(1000);
		if (!nseen)
			break;
		hold_lock = seen[r % nseen].lock;
		__atomic_store_n(&hold_kind, seen[r % nseen].kind, __ATOMIC_RELEASE);
		for (i = 0; i < 2000 && !holding; i++)
			usleep(1000);
		if (!holding) {
			__atomic_store_n(&hold_kind, -1, __ATOMIC_RELEASE); /* not taken within 2 s */
			continue;
		}
		held++;
		pid = what == HELD_UFORK ? _Fork() : raw_clone();
		if (pid == 0)
			held_child(region, small);
		release_holder = 1;
		while (holding)
			usleep(100);
		if (pid < 0)
			fail("the child could not be made");
		else
			reap(pid, what == HELD_UFORK ? "_Fork while another thread held a lock" :
				  "clone while another thread held a lock");
	}
	helper_stop = 1;
	pthread_join(t, NULL);
	locks = nseen;
	if (failed)
		return fprintf(stderr, "sighost: %s\n", failure), 1;
	if (!locks)
		return fprintf(stderr, "sighost: no other thread took a lock of the library\n"), 1;
	printf("sighost: %ld rounds, %d locks, %ld held at a child, %d children\n", rounds, locks, held,
	       (int)children);
	return 0;
}

int main(int argc, char **argv)
{
	long rounds;
	char *region, *small;

	if (argc == 2 && !strcmp(argv[1], "exit"))
		return 0;       /* spawned by a handler */
	rounds = argc == 3 ? atol(argv[1]) : 0;
	for (what = MAP; argc == 3 && what <= HELD_CLONE && strcmp(argv[2], what_names[what]); what++)
		;
	if (rounds <= 0 || what > HELD_CLONE) {
		fprintf(stderr, "usage: sighost ROUNDS map|fork|_Fork|clone|vfork|spawn|held-_Fork|held-clone\n");
		return 2;
	}
	region = mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	small = mmap(NULL, 64 << 10, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (region == MAP_FAILED || small == MAP_FAILED)
		return perror("sighost: mmap"), 1;
	REAL(real_mutex_lock, "pthread_mutex_lock");
	main_tid = gettid_raw();
	return what >= HELD_UFORK ? run_held(rounds, region, small) : run_pokes(rounds, region, small);
}
