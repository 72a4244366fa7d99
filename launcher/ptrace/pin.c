/*
 * pin.c: a target held to what was judged.
 *
 * The process: a pidfd, which says when that process has ended whatever
 * its PID names later, and its start time, read while the pidfd shows it
 * alive, so that /proc/PID is known to be that process.
 *
 * The program: the kernel keeps no exec counter that could be read, so an
 * exec is recognised by what every exec sets anew: the program's file
 * (/proc/PID/exe: device and inode) and where its code and its stack begin
 * (stat fields 26 and 28; ASLR places both at random for each exec, so an
 * exec of the same program is seen too).  The start time does not change
 * at an exec, and the pidfd stays valid across one.  A process can move
 * these addresses itself only with CAP_SYS_RESOURCE (prctl PR_SET_MM, as a
 * checkpoint-restore tool does): it is then refused, which is the safe side.
 *
 * The credentials: the Uid:, Gid: and Groups: lines of the thread's status
 * (real, effective, saved and file-system ids), compared as text.
 *
 * Everything is read through a thread that lives: a process whose main
 * thread has exited is a zombie leader with no memory of its own, while
 * its other threads run on (/proc/PID/task/TID).
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "ptrace/pin.h"
#include "common/files.h"
#include "common/parse.h"
#include "common/procfs.h"

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif

static int read_exec(pid_t pid, pid_t tid, struct pin_exec *x)
{
	char path[64], text[1024];
	struct proc_stat st;
	struct stat exe;

	memset(x, 0, sizeof *x);
	snprintf(path, sizeof path, "/proc/%d/task/%d/stat", (int)pid, (int)tid);
	if (read_text(path, text, sizeof text) || proc_stat_parse(text, &st))
		return -1;
	x->start_code = st.start_code;
	x->start_stack = st.start_stack;
	snprintf(path, sizeof path, "/proc/%d/task/%d/exe", (int)pid, (int)tid);
	if (stat(path, &exe) == 0) {
		x->dev = exe.st_dev;
		x->ino = exe.st_ino;
	} else if (errno == ENOENT && !(st.flags & PROC_PF_KTHREAD)) {
		/*
		 * No memory: a process on its way out (an exec swaps one for the
		 * other at once), whose code and stack read 0.  Compared, it
		 * would look like another program.  A kernel thread never has
		 * any, and is pinned to be refused for what it is.
		 */
		return -1;
	}
	return 0;
}

static int read_creds(pid_t pid, pid_t tid, char *out, size_t len)
{
	static const char *const keys[] = { "\nUid:", "\nGid:", "\nGroups:" };
	char path[64], text[4096];
	size_t used = 0;

	snprintf(path, sizeof path, "/proc/%d/task/%d/status", (int)pid, (int)tid);
	if (read_text(path, text, sizeof text))
		return -1;
	for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
		const char *p = strstr(text, keys[i]);
		size_t n = p ? strcspn(p + 1, "\n") : 0;

		if (p && used + n + 2 < len) {
			memcpy(out + used, p + 1, n);
			used += n;
			out[used++] = '\n';
		}
	}
	out[used] = '\0';
	return 0;
}

static int read_start(pid_t pid, unsigned long long *start)
{
	struct proc_stat st;

	if (proc_stat_read(pid, &st))
		return -1;
	*start = st.starttime;
	return 0;
}

int pin_take(struct pin *p, pid_t pid)
{
	memset(p, 0, sizeof *p);
	p->pid = pid;
	p->pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	/*
	 * A thread's TID is refused by pidfd_open with EINVAL before 6.9 and
	 * ENOENT after (seen on 6.18), and is no error without pidfds: which
	 * one it is, its Tgid says alike on every kernel.
	 */
	if (p->pidfd < 0) {
		int err = errno;
		pid_t tgid = proc_tgid(pid);

		if (tgid > 0 && tgid != pid) {
			errno = EINVAL;
			return -1;
		}
		if (err != ENOSYS) {
			errno = ESRCH;
			return -1;
		}
	}
	if (read_start(pid, &p->start) || !(p->tid = proc_live_thread(pid)) ||
	    read_exec(pid, p->tid, &p->exec) || read_creds(pid, p->tid, p->creds, sizeof p->creds) ||
	    pin_ended(p, 0)) {
		pin_release(p);
		errno = ESRCH;
		return -1;
	}
	return 0;
}

bool pin_ended(const struct pin *p, int wait_ms)
{
	struct timespec t0, t;
	unsigned long long start;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		if (p->pidfd >= 0) {
			struct pollfd pf = { p->pidfd, POLLIN, 0 };

			/* Readable once the process has ended, reaped or not. */
			if (poll(&pf, 1, 0) > 0)
				return true;
		}
		if (read_start(p->pid, &start) || start != p->start || !proc_live_thread(p->pid))
			return true;
		clock_gettime(CLOCK_MONOTONIC, &t);
		if ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 >= wait_ms)
			return false;
		if (p->pidfd >= 0) {
			struct pollfd pf = { p->pidfd, POLLIN, 0 };

			poll(&pf, 1, 10);
		} else {
			usleep(10000);
		}
	}
}

/*
 * What the process is, read through another thread than the pinned one:
 * that thread has ended, or the whole process is on its way out and no
 * thread has its memory any more.  An exit frees the memory first, which
 * for gigabytes takes a while before the process ends: that is waited for
 * (up to EXIT_WAIT_MS), so that a dying process is never "another program".
 */
#define EXIT_WAIT_MS 2000

static enum pin_verdict check_through_another_thread(const struct pin *p)
{
	struct pin_exec x;

	for (int waited = 0;; waited += 10) {
		pid_t other = proc_live_thread(p->pid);

		if (pin_ended(p, 0) || !other)
			return PIN_ENDED;
		if (read_exec(p->pid, other, &x) == 0)
			return memcmp(&x, &p->exec, sizeof x) ? PIN_EXECD : PIN_THREAD_GONE;
		if (waited >= EXIT_WAIT_MS)
			return PIN_THREAD_GONE;
		if (pin_ended(p, 10))
			return PIN_ENDED;
	}
}

enum pin_verdict pin_check(const struct pin *p)
{
	struct pin_exec x;
	char creds[sizeof p->creds];

	if (pin_ended(p, 0))
		return PIN_ENDED;
	if (read_exec(p->pid, p->tid, &x) || read_creds(p->pid, p->tid, creds, sizeof creds))
		return check_through_another_thread(p);
	if (memcmp(&x, &p->exec, sizeof x))
		return PIN_EXECD;
	if (strcmp(creds, p->creds))
		return PIN_CREDS;
	return PIN_SAME;
}

const char *pin_reason(enum pin_verdict v)
{
	switch (v) {
	case PIN_EXECD:
		return "it exec'd during the attach: it runs another program now, which was not judged; left alone";
	case PIN_CREDS:
		return "its credentials changed during the attach: not those judged; left alone";
	case PIN_THREAD_GONE:
		return "the thread it was stopped in ended during the attach; try again";
	case PIN_ENDED:
		return "it ended during the attach";
	case PIN_SAME:
		break;
	}
	return "";
}

void pin_path(char *path, size_t len, const struct pin *p, const char *name)
{
	snprintf(path, len, "/proc/%d/task/%d/%s", (int)p->pid, (int)p->tid, name);
}

void pin_release(struct pin *p)
{
	if (p->pidfd >= 0)
		close(p->pidfd);
	p->pidfd = -1;
}
