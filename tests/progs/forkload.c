/*
 * forkload - fork in a busy multi-threaded program: THREADS threads (0 to
 * 64) map, touch, advise and unmap memory without pause while the main
 * thread forks (the child exits at once) for SECONDS.
 *
 *   forkload THREADS SECONDS
 *
 * Each thread, in a loop: a 256 KiB anonymous mmap, one page written,
 * madvise DONTDUMP and DODUMP (recorded by the library), DONTNEED, munmap.
 * Prints "forks N slowest_ms MS mean_ms MS loops L" (loops: the threads'
 * rounds, all together) and exits 0, or 1 when a call failed.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define LEN (256 << 10)

static volatile int stop, failed;
static unsigned long loops;

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void *worker(void *unused)
{
	(void)unused;
	while (!stop) {
		char *p = mmap(NULL, LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED) {
			failed = 1;
			break;
		}
		p[0] = 1;
		if (madvise(p, LEN, MADV_DONTDUMP) || madvise(p, LEN, MADV_DODUMP) ||
		    madvise(p, LEN, MADV_DONTNEED) || munmap(p, LEN)) {
			failed = 1;
			break;
		}
		__atomic_fetch_add(&loops, 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int threads = argc == 3 ? atoi(argv[1]) : 0;
	double seconds = argc == 3 ? atof(argv[2]) : 0, start, slowest = 0, total = 0;
	pthread_t tid[64];
	long forks = 0;

	if (threads < 0 || threads > 64 || seconds <= 0) {
		fprintf(stderr, "usage: forkload THREADS SECONDS\n");
		return 2;
	}
	for (int i = 0; i < threads; i++)
		if ((errno = pthread_create(&tid[i], NULL, worker, NULL)))
			return perror("pthread_create"), 1;
	start = now_s();
	while (now_s() - start < seconds && !failed) {
		double t0 = now_s(), dt;
		pid_t pid = fork();
		if (pid == 0)
			_exit(0);
		if (pid < 0 || waitpid(pid, NULL, 0) != pid) {
			perror("fork");
			failed = 1;
			break;
		}
		dt = now_s() - t0;
		total += dt;
		slowest = dt > slowest ? dt : slowest;
		forks++;
	}
	stop = 1;
	for (int i = 0; i < threads; i++)
		pthread_join(tid[i], NULL);
	if (failed)
		return 1;
	printf("forks %ld slowest_ms %.3f mean_ms %.3f loops %lu\n", forks, slowest * 1e3,
	       forks ? total / (double)forks * 1e3 : 0.0, loops);
	return 0;
}
