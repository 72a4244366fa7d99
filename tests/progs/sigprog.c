/*
 * sigprog - a command for the launcher's exit-status and signal tests.
 *
 *   sigprog exit N     exit with status N
 *   sigprog raise SIG  die by signal SIG (number), with its default action
 *   sigprog catch      print "READY PID", then print "got N" for each of
 *                      HUP INT QUIT USR1 USR2 WINCH CONT ALRM it receives,
 *                      until a BYE line on stdin (then exit 0) or SIGTERM
 *                      (default action: it dies)
 *   sigprog wait       HUP INT QUIT TERM at their default action (death);
 *                      print "READY PID", wait for a line or EOF on stdin
 *
 * Signals ignored by the caller (a non-interactive shell ignores INT and
 * QUIT in background jobs) are reset, so the tests see what ksm-run sends.
 */
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static volatile sig_atomic_t got[65];

static void on_signal(int sig)
{
	got[sig] = 1;
}

static void reset_default(int sig)
{
	sigset_t one;

	signal(sig, SIG_DFL);
	sigemptyset(&one);
	sigaddset(&one, sig);
	sigprocmask(SIG_UNBLOCK, &one, NULL);
}

int main(int argc, char **argv)
{
	static const int caught[] = { SIGHUP, SIGINT, SIGQUIT, SIGUSR1, SIGUSR2, SIGWINCH, SIGCONT, SIGALRM };
	char line[64];

	if (argc == 3 && !strcmp(argv[1], "exit"))
		return atoi(argv[2]);
	if (argc == 3 && !strcmp(argv[1], "raise")) {
		int sig = atoi(argv[2]);
		reset_default(sig);
		raise(sig);
		return 99;
	}
	if (argc == 2 && !strcmp(argv[1], "wait")) {
		reset_default(SIGHUP);
		reset_default(SIGINT);
		reset_default(SIGQUIT);
		reset_default(SIGTERM);
		printf("READY %d\n", (int)getpid());
		fflush(stdout);
		return read(0, line, sizeof line) < 0;
	}
	if (argc != 2 || strcmp(argv[1], "catch")) {
		fprintf(stderr, "usage: sigprog exit N | raise SIG | catch | wait\n");
		return 99;
	}
	reset_default(SIGTERM);
	sigset_t block, waitmask;
	sigemptyset(&block);
	for (size_t i = 0; i < sizeof caught / sizeof caught[0]; i++) {
		struct sigaction sa;
		memset(&sa, 0, sizeof sa);
		sa.sa_handler = on_signal;
		sigaction(caught[i], &sa, NULL);
		sigaddset(&block, caught[i]);
	}
	/* Blocked except inside ppoll: no signal can slip in unreported. */
	sigprocmask(SIG_SETMASK, &block, NULL);
	sigemptyset(&waitmask);
	printf("READY %d\n", (int)getpid());
	fflush(stdout);
	for (;;) {
		struct pollfd pfd = { .fd = 0, .events = POLLIN };
		int r = ppoll(&pfd, 1, NULL, &waitmask);
		for (int s = 1; s < 65; s++)
			if (got[s]) {
				got[s] = 0;
				printf("got %d\n", s);
				fflush(stdout);
			}
		if (r > 0) {
			ssize_t n = read(0, line, sizeof line - 1);
			if (n <= 0)
				return 0;
			line[n] = '\0';
			if (strstr(line, "BYE"))
				return 0;
		}
	}
}
