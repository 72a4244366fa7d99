/*
 * cgholder - the load of tests/bench/many-cgroups: one small process in
 * each of many cgroups, each with a little mergeable anonymous memory, so
 * that every cgroup counts in ksm-run's figures (groups.h: a group with
 * neither merged pages nor candidate memory is left out).
 *
 *   cgholder KIB < DIRS
 *       for each cgroup directory of DIRS (one a line), forks a child that
 *       moves itself into it, turns KSM on for itself (PR_SET_MEMORY_MERGE,
 *       else MADV_MERGEABLE), touches KIB KiB of anonymous memory and
 *       sleeps.  Prints "READY STARTED FAILED" once every child has done
 *       so, then waits for SIGTERM or SIGINT, kills the children, reaps
 *       them (their cgroups are then empty) and exits.
 *
 * Children are forks, not programs of their own: 10,000 of them cost a few
 * hundred KiB each.  Each dies with its parent (PR_SET_PDEATHSIG), so a
 * SIGKILL of cgholder leaves none behind.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef PR_SET_MEMORY_MERGE
#define PR_SET_MEMORY_MERGE 67
#endif

/* In DIR, with KSM on and KIB KiB touched; tells READY_FD 'y' (or 'n') and sleeps until killed. */
static void child(const char *dir, long kib, pid_t parent, int ready_fd)
{
	char path[4200], ok = 'n';
	size_t len = (size_t)kib * 1024;
	long page = sysconf(_SC_PAGESIZE);
	unsigned char *m;
	int fd;

	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) || getppid() != parent)
		_exit(1);
	snprintf(path, sizeof path, "%s/cgroup.procs", dir);
	if ((fd = open(path, O_WRONLY | O_CLOEXEC)) < 0 || write(fd, "0\n", 2) != 2)
		goto told;
	close(fd);
	m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		goto told;
	if (prctl(PR_SET_MEMORY_MERGE, 1, 0, 0, 0) && madvise(m, len, MADV_MERGEABLE))
		goto told;
	/* The same content in every child: merged pages too, when ksmd runs. */
	for (size_t off = 0; off < len; off += (size_t)page)
		memset(m + off, (int)(off / (size_t)page) + 1, (size_t)page);
	ok = 'y';
told:
	if (write(ready_fd, &ok, 1) != 1)
		_exit(1);
	close(ready_fd);
	for (;;)
		pause();
}

int main(int argc, char **argv)
{
	char line[4096];
	pid_t *kids = NULL, parent = getpid();
	int n = 0, cap = 0, failed = 0, sig, p[2];
	long kib;
	sigset_t stop;

	if (argc != 2 || (kib = strtol(argv[1], NULL, 10)) < 1 || kib > 1 << 20) {
		fprintf(stderr, "usage: cgholder KIB < DIRS\n");
		return 2;
	}
	/* Blocked before the first fork: a stop that comes early is kept for sigwait. */
	sigemptyset(&stop);
	sigaddset(&stop, SIGTERM);
	sigaddset(&stop, SIGINT);
	sigprocmask(SIG_BLOCK, &stop, NULL);
	if (pipe(p))
		return 1;
	while (fgets(line, sizeof line, stdin)) {
		pid_t pid;

		line[strcspn(line, "\n")] = '\0';
		if (!line[0])
			continue;
		if (n == cap) {
			pid_t *nk = realloc(kids, (size_t)(cap = cap ? 2 * cap : 1024) * sizeof *nk);
			if (!nk)
				break;
			kids = nk;
		}
		if ((pid = fork()) < 0) {
			fprintf(stderr, "cgholder: fork: %s\n", strerror(errno));
			break;
		}
		if (pid == 0) {
			sigprocmask(SIG_UNBLOCK, &stop, NULL);
			close(p[0]);
			child(line, kib, parent, p[1]);
		}
		kids[n++] = pid;
	}
	close(p[1]);
	for (int i = 0; i < n; i++) {
		char ok;
		if (read(p[0], &ok, 1) != 1) {
			failed += n - i;
			break;
		}
		failed += ok != 'y';
	}
	printf("READY %d %d\n", n, failed);
	fflush(stdout);
	sigwait(&stop, &sig);
	for (int i = 0; i < n; i++)
		kill(kids[i], SIGKILL);
	while (wait(NULL) > 0 || errno == EINTR)
		;
	free(kids);
	return 0;
}
