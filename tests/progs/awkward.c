/*
 * awkward: processes that are awkward to attach to (tests/42-attach.bats),
 * each a mode:
 *
 *   awkward exec [--regions=N] [--thread] DELAY_MS PROGRAM ARG...
 *       maps N one-page regions (so that reading its smaps takes long),
 *       prints READY, waits for a line on stdin, then after DELAY_MS execs
 *       PROGRAM (from another thread with --thread, which reads the line
 *       too, so that the main thread may be stopped) with one more
 *       argument, PR_GET_MEMORY_MERGE in the old image read just before
 *       the execve.
 *   awkward probe [WAS]
 *       what such an exec runs (a setuid copy, say): prints
 *       "PROBE merge=N euid=N was=WAS" at once, then waits for a line on
 *       stdin.
 *   awkward vfork
 *       prints READY, then vforks a child that stops itself: the parent
 *       sits in uninterruptible sleep until the child is continued; then
 *       prints "VFORKED" and waits for a line on stdin.
 *   awkward leader-exits SECONDS
 *       a thread sleeps SECONDS in one nanosleep (it must not be cut short)
 *       while the main thread calls pthread_exit; prints READY; after the
 *       sleep it waits for a line on stdin, then prints "merge=N" and "ok".
 *   awkward churn MAX_MS
 *       prints READY, then forks children that each live a random 0 to
 *       MAX_MS ms and exit, about 20 at a time, until a line comes on stdin.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

#ifndef PR_GET_MEMORY_MERGE
#define PR_GET_MEMORY_MERGE 68
#endif

static int merge_flag(void)
{
	return (int)syscall(SYS_prctl, PR_GET_MEMORY_MERGE, 0, 0, 0, 0);
}

static void sleep_ms(long ms)
{
	struct timespec t = { ms / 1000, ms % 1000 * 1000000L };

	while (nanosleep(&t, &t) && errno == EINTR)
		;
}

/* Until a line comes on stdin, or its end (tests/helpers.bash's BYE). */
static void wait_stdin_line(void)
{
	char line[64];

	if (!fgets(line, sizeof line, stdin))
		clearerr(stdin);
}

struct exec_plan {
	long delay_ms;
	char **argv;                    /* room for one more argument */
	int argc;
};

/* The flag is read right before the execve: nothing can come in between but a stop. */
static void *do_exec(void *arg)
{
	struct exec_plan *p = arg;
	char was[2] = "?", line[64];

	if (!fgets(line, sizeof line, stdin))
		exit(0);
	sleep_ms(p->delay_ms);
	p->argv[p->argc] = was;
	p->argv[p->argc + 1] = NULL;
	was[0] = (char)('0' + merge_flag());
	syscall(SYS_execve, p->argv[0], p->argv, environ);
	fprintf(stderr, "awkward: exec %s: %s\n", p->argv[0], strerror(errno));
	exit(2);
}

static int mode_exec(int argc, char **argv)
{
	long page = sysconf(_SC_PAGESIZE), regions = 0;
	int thread = 0, i = 0;
	struct exec_plan plan;

	for (; i < argc && !strncmp(argv[i], "--", 2); i++)
		if (!strncmp(argv[i], "--regions=", 10))
			regions = atol(argv[i] + 10);
		else if (!strcmp(argv[i], "--thread"))
			thread = 1;
	if (argc - i < 2)
		return fprintf(stderr, "usage: awkward exec [--regions=N] [--thread] DELAY_MS PROGRAM ARG...\n"), 2;
	plan = (struct exec_plan){ atol(argv[i]), calloc((size_t)(argc - i + 1), sizeof(char *)), argc - i - 1 };
	if (!plan.argv)
		return perror("awkward: calloc"), 2;
	memcpy(plan.argv, argv + i + 1, (size_t)plan.argc * sizeof(char *));
	if (regions) {
		char *p = mmap(NULL, (size_t)(2 * regions * page), PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (p == MAP_FAILED)
			return perror("awkward: mmap"), 2;
		for (long k = 0; k < 2 * regions; k++)
			if (k % 2)
				munmap(p + k * page, (size_t)page);
			else
				p[k * page] = 1;
	}
	if (thread) {
		pthread_t t;

		/* The line is the other thread's to read: the main one may be stopped by then. */
		pthread_create(&t, NULL, do_exec, &plan);
		printf("READY %d\n", (int)getpid());
		fflush(stdout);
		for (;;)
			sleep_ms(1000);
	}
	printf("READY %d\n", (int)getpid());
	fflush(stdout);
	do_exec(&plan);
	return 2;
}

static int mode_probe(const char *was)
{
	printf("PROBE merge=%d euid=%d was=%s\n", merge_flag(), (int)geteuid(), was);
	wait_stdin_line();
	return 0;
}

static int mode_vfork(void)
{
	pid_t child;

	printf("READY %d\n", (int)getpid());
	child = vfork();
	if (child == 0) {
		/* The parent waits in uninterruptible sleep while this one is stopped. */
		syscall(SYS_kill, syscall(SYS_getpid), SIGSTOP);
		_exit(0);
	}
	if (child < 0)
		return perror("awkward: vfork"), 2;
	waitpid(child, NULL, 0);
	printf("VFORKED\n");
	wait_stdin_line();
	return 0;
}

static double seconds;

static void *sleeper(void *arg)
{
	struct timespec req = { (time_t)seconds, (long)((seconds - (double)(time_t)seconds) * 1e9) };
	int r;

	(void)arg;
	r = nanosleep(&req, NULL);
	if (r)
		fprintf(stderr, "awkward: nanosleep: %s\n", strerror(errno));
	wait_stdin_line();              /* lives on until told: a slow machine's attaches come later */
	printf("merge=%d\n", merge_flag());
	if (!r)
		printf("ok\n");
	exit(r ? 1 : 0);
}

static int mode_leader_exits(const char *secs)
{
	pthread_t t;

	if ((seconds = atof(secs)) <= 0)
		return fprintf(stderr, "usage: awkward leader-exits SECONDS\n"), 2;
	printf("READY %d\n", (int)getpid());
	pthread_create(&t, NULL, sleeper, NULL);
	pthread_exit(NULL);
}

static void *watch_stdin(void *arg)
{
	(void)arg;
	wait_stdin_line();
	_exit(0);                       /* not exit(): the main thread may hold stdio's locks in fork */
}

static int mode_churn(const char *max)
{
	pthread_t t;
	int live = 0, max_ms = atoi(max);

	srand((unsigned)getpid());
	printf("READY %d\n", (int)getpid());
	pthread_create(&t, NULL, watch_stdin, NULL);
	for (;;) {
		while (live < 20) {
			long ms = rand() % (max_ms + 1);
			pid_t c = fork();

			if (c == 0) {
				sleep_ms(ms);
				_exit(0);
			}
			live += c > 0;
		}
		if (wait(NULL) > 0)
			live--;
	}
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc >= 2 && !strcmp(argv[1], "exec"))
		return mode_exec(argc - 2, argv + 2);
	if ((argc == 2 || argc == 3) && !strcmp(argv[1], "probe"))
		return mode_probe(argc == 3 ? argv[2] : "?");
	if (argc == 2 && !strcmp(argv[1], "vfork"))
		return mode_vfork();
	if (argc == 3 && !strcmp(argv[1], "leader-exits"))
		return mode_leader_exits(argv[2]);
	if (argc == 3 && !strcmp(argv[1], "churn"))
		return mode_churn(argv[2]);
	fprintf(stderr, "usage: awkward exec|probe|vfork|leader-exits|churn ...\n");
	return 2;
}
