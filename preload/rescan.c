/*
 * rescan.c - the helper thread that covers regions made after start.
 *
 * glibc's malloc grows its heap through an internal brk and maps its arenas
 * with an internal mmap; no interposition sees either, and a heap grown
 * after madvise is a new VMA without the mergeable flag.  So in madvise
 * mode a thread named "ksmenable" repeats the pass every KSM_ENABLE_RESCAN_MS.
 *
 * The thread blocks every signal, so that signals sent to the process reach
 * the program's own threads, and it is restarted in the child after fork.
 */
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <time.h>

#include "library.h"
#include "log.h"
#include "rescan.h"

static pthread_t thread;
static int running;                   /* a thread was started and not joined */
static int stopping;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t wake;

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

static void *rescan_main(void *unused)
{
	struct timespec deadline;

	(void)unused;
	pthread_mutex_lock(&lock);
	while (!stopping && lib.watching) {
		deadline_after(&deadline, lib.cfg.rescan_ms);
		while (!stopping && pthread_cond_timedwait(&wake, &lock, &deadline) == 0)
			;
		if (stopping)
			break;
		pthread_mutex_unlock(&lock);
		library_pass();
		pthread_mutex_lock(&lock);
	}
	pthread_mutex_unlock(&lock);
	return NULL;
}

void rescan_start(void)
{
	pthread_condattr_t cattr;
	pthread_attr_t attr;
	sigset_t all, old;
	int err;

	if (running || lib.cfg.rescan_ms <= 0 || !lib.watching)
		return;
	pthread_condattr_init(&cattr);
	pthread_condattr_setclock(&cattr, CLOCK_MONOTONIC);
	pthread_cond_init(&wake, &cattr);
	pthread_condattr_destroy(&cattr);
	pthread_attr_init(&attr);
	/* A pass needs ~24 KiB; musl's default thread stack is 128 KiB. */
	pthread_attr_setstacksize(&attr, 128 * 1024);
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	stopping = 0;
	err = pthread_create(&thread, &attr, rescan_main, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&attr);
	if (err) {
		log_warn("cannot start the rescan thread (%s): regions made from now on "
			 "are covered only when made through mmap", strerror(err));
		return;
	}
	pthread_setname_np(thread, "ksmenable");
	running = 1;
}

void rescan_stop(void)
{
	if (!running)
		return;
	pthread_mutex_lock(&lock);
	stopping = 1;
	pthread_cond_signal(&wake);
	pthread_mutex_unlock(&lock);
	pthread_join(thread, NULL);
	running = 0;
}

int rescan_running(void)
{
	return running;
}

/*
 * Only the forking thread exists in the child.  The lock may have been held
 * by the rescan thread at the fork, so it is made anew, then the child gets
 * a thread of its own: its new regions need covering too.
 */
void rescan_after_fork_child(void)
{
	static const pthread_mutex_t unlocked = PTHREAD_MUTEX_INITIALIZER;

	if (!running)
		return;
	lock = unlocked;
	running = 0;
	rescan_start();
}
