/*
 * child.c: starting the command, forwarding signals to it, reaping it, and
 * ending like it did.
 *
 * The forwarded signals are blocked from the start and taken with
 * sigtimedwait, so ksm-run can never be killed by one of them between
 * changing the knobs and restoring them, and needs no signal handlers.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/files.h"
#include "common/msg.h"
#include "kernel_abi.h"
#include "run/child.h"

static const int forwarded[] = { SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1,
				 SIGUSR2, SIGWINCH, SIGCONT, SIGALRM };
static sigset_t blocked, original;
static struct sigaction original_chld;

int child_prepare_signals(void)
{
	struct sigaction dfl;

	/*
	 * Started with SIGCHLD ignored, the kernel would reap the command
	 * itself and ksm-run would wait forever: ksm-run takes the default,
	 * and the command gets back what ksm-run was given (see child_start).
	 */
	memset(&dfl, 0, sizeof dfl);
	dfl.sa_handler = SIG_DFL;
	sigemptyset(&dfl.sa_mask);
	if (sigaction(SIGCHLD, &dfl, &original_chld))
		return -errno;
	sigemptyset(&blocked);
	for (size_t i = 0; i < sizeof forwarded / sizeof forwarded[0]; i++)
		sigaddset(&blocked, forwarded[i]);
	sigaddset(&blocked, SIGCHLD);
	if (sigprocmask(SIG_BLOCK, &blocked, &original))
		return -errno;
	/*
	 * As a subreaper, descendants whose parent exits are re-parented to
	 * ksm-run, so the sampler still sees them as part of the tree.
	 */
	prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
	return 0;
}

int child_start(struct child *c, char **argv, bool prctl_before_exec)
{
	int pfd[2];

	memset(c, 0, sizeof *c);
	if (pipe2(pfd, O_CLOEXEC))
		return -errno;
	fflush(NULL);
	c->start = now_s();
	c->pid = fork();
	if (c->pid < 0) {
		int err = errno;
		close(pfd[0]);
		close(pfd[1]);
		return -err;
	}
	if (c->pid == 0) {
		close(pfd[0]);
		prctl(PR_SET_PDEATHSIG, 0, 0, 0, 0);
		if (original_chld.sa_handler == SIG_IGN)
			sigaction(SIGCHLD, &original_chld, NULL);
		sigprocmask(SIG_SETMASK, &original, NULL);
		/*
		 * Covers programs the library cannot enter (static, setuid)
		 * on kernels where the flag survives exec (6.7 and later).
		 * EINVAL on older kernels: the library falls back by itself.
		 */
		if (prctl_before_exec)
			prctl(PR_SET_MEMORY_MERGE, 1, 0, 0, 0);
		execvp(argv[0], argv);
		int err = errno;
		if (write(pfd[1], &err, sizeof err) < 0)
			err = errno;
		_exit(err == ENOENT ? EXIT_NOT_FOUND : EXIT_CANNOT_EXEC);
	}
	close(pfd[1]);
	c->errfd = pfd[0];
	return 0;
}

/* A signal the terminal sent to the whole foreground group reached the
 * command already: forwarding it would deliver it twice. */
static bool from_terminal(const siginfo_t *si, pid_t child)
{
	if (si->si_code != SI_KERNEL)
		return false;
	if (si->si_signo != SIGINT && si->si_signo != SIGQUIT && si->si_signo != SIGHUP &&
	    si->si_signo != SIGWINCH)
		return false;
	return getpgid(child) == getpgrp();
}

/*
 * Waits up to timeout_ms for the command to end, forwarding signals
 * meanwhile.  Returns 1 when it ended, 0 on timeout.
 */
int child_wait(struct child *c, int timeout_ms)
{
	double deadline = now_s() + timeout_ms / 1000.0;

	for (;;) {
		double left = deadline - now_s();
		struct timespec ts;
		siginfo_t si;
		int sig, status;
		pid_t p;

		if (left < 0)
			left = 0;
		ts.tv_sec = (time_t)left;
		ts.tv_nsec = (long)((left - (double)ts.tv_sec) * 1e9);
		sig = sigtimedwait(&blocked, &si, &ts);
		if (sig < 0) {
			if (errno == EINTR)
				continue;
			return 0;
		}
		if (sig != SIGCHLD) {
			if (!from_terminal(&si, c->pid))
				kill(c->pid, sig);
			continue;
		}
		/* Reap every child: re-parented orphans end up here too. */
		while ((p = waitpid(-1, &status, WNOHANG)) > 0) {
			if (p != c->pid)
				continue;
			c->end = now_s();
			c->status = status;
			int err;
			if (read(c->errfd, &err, sizeof err) == (ssize_t)sizeof err)
				c->exec_errno = err;
			close(c->errfd);
			return 1;
		}
	}
}

int child_exit_status(const struct child *c)
{
	if (c->exec_errno)
		return c->exec_errno == ENOENT ? EXIT_NOT_FOUND : EXIT_CANNOT_EXEC;
	if (WIFEXITED(c->status))
		return WEXITSTATUS(c->status);
	if (WIFSIGNALED(c->status))
		return 128 + WTERMSIG(c->status);
	return EXIT_OWN;
}

void child_exit_like(const struct child *c)
{
	if (!c->exec_errno && WIFSIGNALED(c->status)) {
		int sig = WTERMSIG(c->status);
		struct rlimit nocore = { 0, 0 };
		sigset_t one;

		/* The command may have dumped core; ksm-run must not add its own. */
		setrlimit(RLIMIT_CORE, &nocore);
		signal(sig, SIG_DFL);
		sigemptyset(&one);
		sigaddset(&one, sig);
		fflush(NULL);
		raise(sig);
		sigprocmask(SIG_UNBLOCK, &one, NULL);
	}
	fflush(NULL);
	exit(child_exit_status(c));
}
