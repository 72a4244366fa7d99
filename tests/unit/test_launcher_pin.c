/*
 * Unit tests of the pin (launcher/ptrace/pin.c) on real processes of its
 * own, which needs no root: a child that execs is another program, and a
 * child killed with much memory is "ended" during the whole of its exit.
 *
 * The exit: the kernel lets go of a dying process's memory (exit_mm) long
 * before it is a zombie, and with 512 MiB of small pages to free that
 * takes tens of milliseconds, in which /proc/PID/exe is gone and stat's
 * code and stack addresses read 0.  A pin that compared those with what
 * it had judged took the dying process for one that had exec'd (seen in
 * CI as "refused: it exec'd during the attach" for a target killed then).
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ptrace/pin.h"
#include "common/procfs.h"
#include "unit.h"

#define DYING_MIB 512

/* A child that has filled MIB of small pages and waits; ready once its pipe says so. */
static pid_t child_with_memory(size_t mib)
{
	int fds[2];
	pid_t pid;
	char c;

	if (pipe(fds))
		return -1;
	if ((pid = fork()) == 0) {
		size_t len = mib << 20;
		char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (p == MAP_FAILED)
			_exit(1);
		madvise(p, len, MADV_NOHUGEPAGE);       /* many pages: a long exit */
		for (size_t i = 0; i < len; i += 4096)
			p[i] = (char)i;
		if (write(fds[1], "r", 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	close(fds[1]);
	if (pid < 0 || read(fds[0], &c, 1) != 1) {
		close(fds[0]);
		return -1;
	}
	close(fds[0]);
	return pid;
}

static double now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

/* Has the child let go of its memory but not yet ended?  (Its exe is gone then.) */
static bool in_exit_without_memory(pid_t pid)
{
	char path[64];
	struct stat st;
	siginfo_t si = { 0 };

	snprintf(path, sizeof path, "/proc/%d/exe", (int)pid);
	return stat(path, &st) < 0 && errno == ENOENT &&
	       waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0 && si.si_pid == 0;
}

/* Has PID exited (waitable), without reaping it? */
static bool exited(pid_t pid)
{
	siginfo_t si = { 0 };

	return waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0 && si.si_pid == pid;
}

/* The window's watcher: samples the dying child in a thread of its own. */
struct watch {
	pid_t pid;
	atomic_bool stop, seen;
};

static void *watch_window(void *arg)
{
	struct watch *w = arg;

	while (!atomic_load(&w->stop))
		if (in_exit_without_memory(w->pid))
			atomic_store(&w->seen, true);
	return NULL;
}

/*
 * Killed with much memory: every verdict until its end is "ended", none
 * "exec'd" or "credentials"; and the window in which it had no memory
 * was seen (else this test proved nothing).  The window is watched from
 * another thread: pin_check, once the memory is gone, waits for the end
 * (pin.c's EXIT_WAIT_MS), so samples taken between its calls could miss
 * the whole window (as CI's sanitized run did, 8 children of 8).
 */
static void test_a_dying_process_has_ended(void)
{
	int wrong = 0, window = 0, ended = 0;

	for (int round = 0; round < 3 && !window; round++) {
		pid_t pid = child_with_memory(DYING_MIB);
		struct watch w = { .pid = pid };
		struct pin pin;
		pthread_t t;
		double t0;

		CHECK(pid > 0);
		if (pid <= 0)
			return;
		CHECK(pin_take(&pin, pid) == 0);
		CHECK(pin_check(&pin) == PIN_SAME);
		CHECK(pthread_create(&t, NULL, watch_window, &w) == 0);
		kill(pid, SIGKILL);
		for (t0 = now_ms(); now_ms() - t0 < 10000 && !exited(pid);) {
			enum pin_verdict v = pin_check(&pin);

			if (v == PIN_EXECD || v == PIN_CREDS) {
				if (!wrong++)
					fprintf(stderr, "a dying process: verdict '%s'\n", pin_reason(v));
			}
			ended += v == PIN_ENDED;
		}
		atomic_store(&w.stop, true);
		pthread_join(t, NULL);
		window += atomic_load(&w.seen);
		pin_release(&pin);
		waitpid(pid, NULL, 0);
	}
	CHECK(window > 0);
	CHECK(ended > 0);
	CHECK(wrong == 0);
}

/* The control: a child that execs another program is seen to have exec'd. */
static void test_an_exec_is_seen(void)
{
	int fds[2];
	struct pin pin;
	pid_t pid;
	char c;

	CHECK(pipe(fds) == 0);
	if ((pid = fork()) == 0) {
		close(fds[1]);
		if (read(fds[0], &c, 1) == 1)
			execl("/bin/sleep", "sleep", "10", (char *)NULL);
		_exit(1);
	}
	close(fds[0]);
	CHECK(pid > 0 && pin_take(&pin, pid) == 0);
	CHECK(pin_check(&pin) == PIN_SAME);
	CHECK(write(fds[1], "x", 1) == 1);
	close(fds[1]);
	enum pin_verdict v = PIN_SAME;
	for (double t0 = now_ms(); v == PIN_SAME && now_ms() - t0 < 5000;) {
		usleep(1000);
		v = pin_check(&pin);
	}
	CHECK(v == PIN_EXECD);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	CHECK(pin_check(&pin) == PIN_ENDED);
	pin_release(&pin);
}

/* A kernel thread has no memory either, for good: it is pinned, to be refused for what it is. */
static void test_a_kernel_thread_is_pinned(void)
{
	struct proc_stat st;
	struct pin pin;

	/* kthreadd is PID 2 where this kernel's PID namespace is the first. */
	if (proc_stat_read(2, &st) || !(st.flags & PROC_PF_KTHREAD)) {
		printf("# no kernel thread as PID 2 here (a PID namespace): not looked at\n");
		return;
	}
	CHECK(pin_take(&pin, 2) == 0);
	CHECK(pin_check(&pin) == PIN_SAME);
	pin_release(&pin);
}

UNIT_MAIN(UNIT_TEST(test_a_dying_process_has_ended), UNIT_TEST(test_an_exec_is_seen),
	  UNIT_TEST(test_a_kernel_thread_is_pinned))
