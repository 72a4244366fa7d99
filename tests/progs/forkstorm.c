/*
 * forkstorm - forks from a process whose other threads keep allocating,
 * as a pre-fork server under a sanitizer does: the child must be able to
 * run (and exit) at once.  Prints "forks N" and exits 0.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile int stop;

static void *allocate(void *arg)
{
	(void)arg;
	while (!stop) {
		char *p = malloc(4096);
		if (p)
			memset(p, 1, 4096);
		free(p);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 20, status;
	pthread_t t[16];

	for (int i = 0; i < 16; i++)
		pthread_create(&t[i], NULL, allocate, NULL);
	for (int i = 0; i < n; i++) {
		pid_t pid = fork();
		if (pid == 0) {
			char *p = malloc(1 << 20);
			exit(p ? 0 : 1);
		}
		if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status))
			return 1;
	}
	stop = 1;
	for (int i = 0; i < 16; i++)
		pthread_join(t[i], NULL);
	printf("forks %d\n", n);
	return 0;
}
