/*
 * rescan.c - the helper thread that covers regions made after start.
 *
 * glibc's malloc grows its heap through an internal brk and maps its arenas
 * with an internal mmap; no interposition sees either, and a heap grown
 * after madvise is a new VMA without the mergeable flag.  So in madvise
 * mode a thread named "ksmenable" repeats the pass every KSM_ENABLE_RESCAN_MS.
 *
 * The thread blocks every signal, so that signals sent to the process
 * reach the program's own threads.  It belongs to the process that started
 * it (owner).  A child made by fork has none at first: it gets its own at
 * its first wrapped call once it has lived a rescan period (see
 * rescan_start_if_due); a child made by a raw clone, _Fork or vfork has
 * none and must not touch the parent's.
 *
 * It keeps /proc/self/maps open from its start and reads it again from
 * offset 0, so that a program that later forbids itself open() (a seccomp
 * sandbox applied to all threads) is not killed for the library's sake.
 *
 * Starting, stopping and pausing go through one control lock: several
 * threads may enter namespaces at once (setns, unshare), and each pauses
 * the thread; it runs again when the last of them is done.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "guard.h"
#include "library.h"
#include "locks.h"
#include "log.h"
#include "rescan.h"

static pthread_mutex_t control = PTHREAD_MUTEX_INITIALIZER;
static pthread_t thread;
static pid_t thread_tid;              /* its kernel id, set by the thread itself: atomic (rescan_before_fork) */
static int running;                   /* a thread was started and not joined */
static pid_t owner;                   /* the process whose thread it is */
static int pauses;                    /* pause_rescan calls not yet resumed */
static int wanted;                    /* madvise mode asked for a thread */
static int pass_at_start;             /* the thread starts late: its first pass at once */
/*
 * 1 while the thread is in its runtime's code rather than ours: from before
 * pthread_create until rescan_main begins, and from rescan_main's end until
 * it is joined.  Set by whoever starts or joins it, cleared at its entry and
 * after its join: atomic (a fork's prepare handler reads it; see
 * rescan_before_fork).
 */
static int in_runtime;
/*
 * A forked child's thread, not started yet: it starts at the first wrapped
 * call from then on (CLOCK_MONOTONIC_COARSE, in ns); 0 when none waits.
 * Set by fork's child handler, read by every wrapped call: atomic, relaxed
 * (a compare-and-swap chooses the one caller that starts it, and CONTROL
 * orders the rest).
 */
static unsigned long long start_due;

/* Between the thread and whoever stops it. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t wake;
/* Written under LOCK; the thread also polls it without LOCK while it reads
 * smaps at its start (guard_import_smaps): atomic, relaxed (a hint to end
 * early, ordering nothing). */
static int stopping;

/* The thread's /proc/self/maps, and which file it was when opened. */
static int maps_fd = -1;
static dev_t maps_dev;
static ino_t maps_ino;
static pid_t maps_owner;
/* Read once, by the first thread of a program image (a forked child has the parent's marks). */
static int smaps_fd = -1, smaps_done;

static void deadline_after(struct timespec *ts, long ms)
{
	clock_gettime(CLOCK_MONOTONIC, ts);
	ts->tv_sec += ms / 1000;
	ts->tv_nsec += (ms % 1000) * 1000000L;
	if (ts->tv_nsec >= 1000000000L) {
		ts->tv_sec++;
		ts->tv_nsec -= 1000000000L;
	}
}

static int maps_still_ours(void);

/* Opened by whoever starts the thread, in the process it runs in. */
static void open_maps(void)
{
	struct stat st;

	if (maps_fd >= 0 && maps_owner == getpid())
		return;
	/* Inherited from the parent, it reads the parent's maps: closed, if still ours. */
	if (maps_fd >= 0 && maps_still_ours())
		close(maps_fd);
	maps_fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
	if (maps_fd >= 0 && fstat(maps_fd, &st) == 0) {
		maps_dev = st.st_dev;
		maps_ino = st.st_ino;
		maps_owner = getpid();
	} else if (maps_fd >= 0) {
		close(maps_fd);
		maps_fd = -1;
	}
}

/* Is the descriptor still our maps file?  The program may have closed it and reused the number. */
static int maps_still_ours(void)
{
	struct stat st;

	return maps_fd >= 0 && fstat(maps_fd, &st) == 0 && st.st_dev == maps_dev && st.st_ino == maps_ino;
}

static void *rescan_main(void *unused)
{
	struct timespec deadline;

	(void)unused;
	__atomic_store_n(&thread_tid, (pid_t)syscall(SYS_gettid), __ATOMIC_RELAXED);
	__atomic_store_n(&in_runtime, 0, __ATOMIC_RELEASE);
	signals_always_held();          /* its starter blocked them all */
	/* By itself: pthread_setname_np writes /proc/self/task/TID/comm, an open more per fork. */
	syscall(SYS_prctl, PR_SET_NAME, "ksmenable", 0UL, 0UL, 0UL);
	if (smaps_fd >= 0) {
		guard_import_smaps(smaps_fd, &stopping);
		close(smaps_fd);
		smaps_fd = -1;
	}
	if (pass_at_start && maps_still_ours())
		library_pass_fd(maps_fd);
	pthread_mutex_lock(&lock);
	while (!stopping && library_watching()) {
		deadline_after(&deadline, lib.cfg.rescan_ms);
		while (!stopping && pthread_cond_timedwait(&wake, &lock, &deadline) == 0)
			;
		if (stopping)
			break;
		pthread_mutex_unlock(&lock);
		if (!maps_still_ours()) {
			log_warn("the rescan's /proc/self/maps descriptor was closed by the program; "
				 "regions made from now on are covered only when made through mmap");
			pthread_mutex_lock(&lock);
			break;
		}
		library_pass_fd(maps_fd);
		pthread_mutex_lock(&lock);
	}
	pthread_mutex_unlock(&lock);
	__atomic_store_n(&in_runtime, 1, __ATOMIC_RELEASE);
	return NULL;
}

/*
 * A stack that cannot hold a huge page.  The default one (8 MiB with
 * glibc) holds a whole 2 MiB-aligned range, and kernels before 6.7 with
 * transparent huge pages "always" (Debian 12's 6.1) fault in a 2 MiB huge
 * page at its first touch: 2 MiB of RSS in every process, for a thread
 * whose pass needs about 24 KiB, and 2 MiB of zeros for ksmd to merge in a
 * program profiled or advised whole.  6.7 and later give MAP_STACK
 * mappings no huge pages.  glibc takes the program's static TLS out of the
 * size it is given and refuses (EINVAL) a size that TLS leaves too little
 * of: such a program gets the default stack.
 */
#define RESCAN_STACK_BYTES (1024 * 1024)

static int create_thread(void)
{
	pthread_attr_t attr;
	int err = EINVAL;

	if (pthread_attr_init(&attr) == 0) {
		if (pthread_attr_setstacksize(&attr, RESCAN_STACK_BYTES) == 0)
			err = pthread_create(&thread, &attr, rescan_main, NULL);
		pthread_attr_destroy(&attr);
	}
	if (err == EINVAL)
		err = pthread_create(&thread, NULL, rescan_main, NULL);
	return err;
}

/* With CONTROL held. */
static void start_locked(void)
{
	pthread_condattr_t cattr;
	sigset_t all, old;
	int err;

	if (running || pauses || !wanted || lib.cfg.rescan_ms <= 0 || !library_watching())
		return;
	open_maps();
	if (!smaps_done) {
		smaps_done = 1;
		smaps_fd = open("/proc/self/smaps", O_RDONLY | O_CLOEXEC);
	}
	if (maps_fd < 0) {
		log_warn("cannot open /proc/self/maps: regions made from now on are covered only "
			 "when made through mmap");
		return;
	}
	pthread_condattr_init(&cattr);
	pthread_condattr_setclock(&cattr, CLOCK_MONOTONIC);
	pthread_cond_init(&wake, &cattr);
	pthread_condattr_destroy(&cattr);
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	__atomic_store_n(&stopping, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&thread_tid, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&in_runtime, 1, __ATOMIC_RELEASE);
	owner = getpid();
	err = create_thread();
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err) {
		__atomic_store_n(&in_runtime, 0, __ATOMIC_RELEASE);
		log_warn("cannot start the rescan thread (errno %d): regions made from now on "
			 "are covered only when made through mmap", err);
		if (smaps_fd >= 0) {
			close(smaps_fd);
			smaps_fd = -1;
		}
		return;
	}
	running = 1;
}

/*
 * pthread_join returns when the thread's stack may be reused, which the
 * kernel signals before it takes the thread out of the thread group; until
 * then unshare(CLONE_NEWUSER) and setns into a user namespace still see a
 * second thread and fail with EINVAL (about 1 call in 100, measured).  The
 * thread's id stops naming a task at the moment it leaves the group, so
 * tgkill with signal 0 tells when it has.  Bounded: an id reused at once by
 * a new thread of the program must not hang it.
 */
static void wait_gone(pid_t tid)
{
	const struct timespec tick = { 0, 50000 };
	int saved_errno = errno, i;

	for (i = 0; tid > 0 && i < 20000; i++) {
		if (syscall(SYS_tgkill, getpid(), tid, 0) != 0)
			break;
		nanosleep(&tick, NULL);
	}
	errno = saved_errno;
}

/* With CONTROL held. */
static void stop_locked(void)
{
	if (!running)
		return;
	pthread_mutex_lock(&lock);
	__atomic_store_n(&stopping, 1, __ATOMIC_RELAXED);
	pthread_cond_signal(&wake);
	pthread_mutex_unlock(&lock);
	pthread_join(thread, NULL);
	wait_gone(thread_tid);
	__atomic_store_n(&in_runtime, 0, __ATOMIC_RELEASE);
	running = 0;
}

/* Only the process that started the thread may stop or join it. */
static int ours(void)
{
	return running && owner == getpid();
}

void rescan_start(void)
{
	pthread_mutex_lock(&control);
	wanted = 1;
	start_locked();
	pthread_mutex_unlock(&control);
}

void rescan_stop(void)
{
	/* A raw clone or vfork child: the thread (and, for vfork, the memory) is the parent's. */
	if (!ours())
		return;
	pthread_mutex_lock(&control);
	wanted = 0;
	stop_locked();
	pthread_mutex_unlock(&control);
}

int rescan_pause(void)
{
	if (!wanted || owner != getpid())
		return 0;
	pthread_mutex_lock(&control);
	pauses++;
	stop_locked();
	pthread_mutex_unlock(&control);
	return 1;
}

void rescan_resume(void)
{
	pthread_mutex_lock(&control);
	if (pauses > 0 && --pauses == 0)
		start_locked();
	pthread_mutex_unlock(&control);
}

int rescan_running(void)
{
	return running;
}

static unsigned long long coarse_now_ns(void)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &now);
	return (unsigned long long)now.tv_sec * 1000000000ULL + (unsigned long long)now.tv_nsec;
}

/*
 * pthread_atfork prepare handler: a fork waits while the thread is in its
 * runtime's start or end.  A sanitizer runtime (the ASan of clang 14, Debian
 * 12's) allocates there, outside rescan_main, and does not hold its
 * allocator's locks across a fork: a fork at that moment left a lock held
 * for ever in the child, whose next allocation of that size hung (its own
 * rescan thread's start, in tests/13; 12 runs of 100 of a program that
 * forks as it begins).  glibc's and musl's own start and end need nothing
 * a child needs, so there the wait only costs the microseconds of a
 * start.  Async-signal-safe (a handler may fork), and bounded at 1 s: a
 * fork from a handler that interrupted an allocation may hold the lock that
 * the thread's start waits for.  In its end the thread is waited for only
 * while its task lives: a handler may interrupt the thread that joins it.
 */
void rescan_before_fork(void)
{
	const struct timespec tick = { 0, 50000 };
	int saved_errno = errno, i;

	if (owner != getpid())
		return;
	for (i = 0; i < 20000 && __atomic_load_n(&in_runtime, __ATOMIC_ACQUIRE); i++) {
		pid_t tid = __atomic_load_n(&thread_tid, __ATOMIC_RELAXED);

		if (tid > 0 && syscall(SYS_tgkill, getpid(), tid, 0) != 0)
			break;
		nanosleep(&tick, NULL);
	}
	errno = saved_errno;
}

/*
 * pthread_atfork child handler: only the forking thread exists in the
 * child, and the locks may have been held by the parent's threads at the
 * fork; they are made anew.  No thread is started here, nor when fork
 * returns: most children end or execute another program within
 * milliseconds, and a thread started at once was 20 page faults and about
 * 1 ms more per fork on this project's machine, which tripled a fork
 * (0.8 to 2.4 ms) and so starved a program that forks from a 2 ms timer's
 * signal handler.  A child may also be inside a signal handler here,
 * where only async-signal-safe calls belong: this handler makes nothing
 * else (getpid, getppid, clock_gettime).
 */
void rescan_after_fork_child(void)
{
	static const pthread_mutex_t unlocked = PTHREAD_MUTEX_INITIALIZER;
	int had = running || owner == getppid();

	control = unlocked;
	lock = unlocked;
	running = 0;
	__atomic_store_n(&in_runtime, 0, __ATOMIC_RELAXED);
	pauses = 0;
	owner = had ? getpid() : 0;
	pass_at_start = 0;
	__atomic_store_n(&start_due, had ? coarse_now_ns() + (unsigned long long)lib.cfg.rescan_ms * 1000000ULL : 0,
			 __ATOMIC_RELAXED);
}

/*
 * A forked child that has lived a rescan period starts its thread at its
 * next wrapped call (mmap, munmap, mremap, a recorded madvise, mlock,
 * munlock, prctl, fork), from whichever thread makes it, and the
 * thread makes its first pass at once.  The start allocates nothing and
 * takes no lock an allocator holds: glibc's pthread_create takes the stack
 * of the parent's thread from its cache in the child, and musl's maps its
 * own; so an allocator whose mmap is the call (jemalloc, tcmalloc, Python's
 * arenas) is not called back.  Before the period it costs one load and a
 * coarse clock read, after it one load.
 */
void rescan_start_if_due(void)
{
	unsigned long long due = __atomic_load_n(&start_due, __ATOMIC_RELAXED);
	int saved_errno;

	if (!due || coarse_now_ns() < due)
		return;
	saved_errno = errno;
	/* The owner only: a vfork child shares the parent's memory, and must not take its start. */
	if (owner == getpid() && __atomic_compare_exchange_n(&start_due, &due, 0, 0, __ATOMIC_RELAXED,
							     __ATOMIC_RELAXED)) {
		pthread_mutex_lock(&control);
		pass_at_start = 1;
		start_locked();
		pthread_mutex_unlock(&control);
	}
	errno = saved_errno;
}
