/*
 * demo_workers - the workload of `make demo`: pre-fork workers that each
 * build the same cache in their own private memory, as server workers do
 * after fork (a parsed configuration, a template cache, a lookup table).
 *
 *   demo_workers [-w WORKERS] [-m MIB] [-t SECONDS]
 *
 * The parent forks WORKERS (default 4) workers.  Each builds MIB (32) MiB
 * of records that are the same in every worker, plus 1 MiB of state of its
 * own that differs between workers, and keeps both.  Every page of the cache
 * differs from the others, so what merges is the copies across workers.
 *
 * The parent watches the workers' /proc/PID/ksm_merging_pages until merging
 * levels off (nearly all of the cache merged, or no change for a few
 * seconds), or for at most SECONDS (20).  It then holds on for LINGER_MS so
 * that ksm-run's sampler (one sample a second) sees the peak, tells the
 * workers to check their cache and exit, and prints a summary on stdout.
 *
 * Exit status: 0; 1 when a worker failed or its cache changed; 2 on a bad
 * option; a fatal signal (INT, TERM, HUP) ends the workers and is re-raised.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_WORKERS 64
#define OWN_MIB 1
#define POLL_MS 200
#define STEADY_S 3.0	/* no change for this long: merging has levelled off */
#define LINGER_MS 2500	/* > 2 samples of ksm-run's default --interval=1 */
#define BUILD_LIMIT_S 120

static volatile sig_atomic_t stop_signal;

static void on_stop(int sig)
{
	stop_signal = sig;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	/* A stop signal cuts the wait short; the caller looks at stop_signal. */
	nanosleep(&ts, NULL);
}

static long parse_opt(char opt, const char *s, long lo, long hi)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < lo || v > hi) {
		fprintf(stderr, "demo_workers: -%c %s: not a whole number in %ld..%ld\n", opt, s, lo, hi);
		exit(2);
	}
	return v;
}

/*
 * One record of the cache: what a worker would compute from its
 * configuration.  Built from the index alone, so equal in every worker.
 */
struct record {
	uint64_t id, hash;
	char name[48];
};

static uint64_t mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	return x ^ (x >> 33);
}

static uint64_t checksum(const void *p, size_t len)
{
	const uint64_t *w = p;
	uint64_t sum = 0;

	for (size_t i = 0; i < len / sizeof *w; i++)
		sum = mix(sum ^ w[i]) + i;
	return sum;
}

static void build_cache(struct record *r, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		r[i].id = i;
		r[i].hash = mix(i + 1);
		snprintf(r[i].name, sizeof r[i].name, "user-%08zu.%016llx", i,
			 (unsigned long long)r[i].hash);
	}
}

/*
 * A worker: build, report 'R' (or 'E') on the ready pipe, wait for the
 * parent to close the command pipe (or die), check the cache, exit.
 */
static int worker(int ready_fd, int cmd_fd, size_t cache_len, unsigned seed)
{
	size_t own_len = (size_t)OWN_MIB << 20;
	char status = 'E', byte;
	struct record *cache;
	uint64_t *own, sum;

	cache = mmap(NULL, cache_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	own = mmap(NULL, own_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (cache == MAP_FAILED || own == MAP_FAILED) {
		fprintf(stderr, "demo_workers: worker %d: cannot map %zu MiB: %s\n", (int)getpid(),
			(cache_len + own_len) >> 20, strerror(errno));
		/* If even this fails, the parent sees the pipe close. */
		ssize_t r = write(ready_fd, &status, 1);
		(void)r;
		return 1;
	}
	build_cache(cache, cache_len / sizeof *cache);
	for (size_t i = 0; i < own_len / sizeof *own; i++)
		own[i] = mix(((uint64_t)seed << 32) + i);
	sum = checksum(cache, cache_len);
	status = 'R';
	if (write(ready_fd, &status, 1) != 1)
		return 1;
	close(ready_fd);

	while (read(cmd_fd, &byte, 1) < 0 && errno == EINTR)
		;
	if (checksum(cache, cache_len) != sum) {
		fprintf(stderr, "demo_workers: worker %d: the cache changed while it was merged\n", (int)getpid());
		return 1;
	}
	return 0;
}

/* /proc/PID/ksm_merging_pages (Linux 5.19), or -1. */
static long merging_pages(pid_t pid)
{
	char path[64];
	long v = -1;
	FILE *f;

	snprintf(path, sizeof path, "/proc/%d/ksm_merging_pages", (int)pid);
	if (!(f = fopen(path, "re")))
		return -1;
	if (fscanf(f, "%ld", &v) != 1)
		v = -1;
	fclose(f);
	return v;
}

static long merging_total(const pid_t *pids, int n)
{
	long sum = 0;

	for (int i = 0; i < n; i++) {
		long v = merging_pages(pids[i]);
		if (v < 0)
			return -1;
		sum += v;
	}
	return sum;
}

/* Waits for every worker's ready byte; 0 when all built their cache. */
static int wait_ready(int fd, int n)
{
	double limit = now_s() + BUILD_LIMIT_S;
	struct pollfd p = { .fd = fd, .events = POLLIN };
	int ready = 0;
	char c;

	while (ready < n && !stop_signal) {
		int left = (int)((limit - now_s()) * 1000);
		if (left <= 0) {
			fprintf(stderr, "demo_workers: the workers did not build their cache within %d s\n",
				BUILD_LIMIT_S);
			return -1;
		}
		if (poll(&p, 1, left) < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		ssize_t r = read(fd, &c, 1);
		if (r == 0 || (r == 1 && c != 'R')) {
			fprintf(stderr, "demo_workers: a worker failed to build its cache\n");
			return -1;
		}
		if (r == 1)
			ready++;
	}
	return stop_signal ? -1 : 0;
}

struct watch {
	long peak, target;
	double peak_at;		/* seconds after the caches were built */
	bool known;		/* the kernel has ksm_merging_pages */
};

/* Watches merging until it levels off or the time is up. */
static void watch_merging(const pid_t *pids, int n, long target, int max_s, struct watch *w)
{
	double start = now_s(), changed = start, printed = start;
	double page_mib = (double)sysconf(_SC_PAGESIZE) / (1 << 20);
	long last = 0;

	memset(w, 0, sizeof *w);
	w->target = target;
	w->known = merging_total(pids, n) >= 0;
	if (!w->known)
		printf("demo_workers: no /proc/PID/ksm_merging_pages (Linux < 5.19): holding for %d s\n", max_s);
	while (!stop_signal) {
		double t = now_s();
		long m = w->known ? merging_total(pids, n) : -1;

		if (m >= 0 && m != last) {
			last = m;
			changed = t;
		}
		if (m > w->peak) {
			w->peak = m;
			w->peak_at = t - start;
		}
		if (w->known && t - printed >= 1.0) {
			printf("demo_workers: %4.1f s  merged %7.1f of %.1f MiB\n", t - start,
			       (double)m * page_mib, (double)target * page_mib);
			fflush(stdout);
			printed = t;
		}
		if (t - start >= max_s)
			break;
		if (w->known && (m * 100 >= target * 99 || (m > 0 && t - changed >= STEADY_S)))
			break;
		sleep_ms(POLL_MS);
	}
}

/* Closes the command pipe and reaps every worker; nonzero if one failed. */
static int end_workers(int cmd_fd, const pid_t *pids, int n)
{
	int bad = 0, st;

	close(cmd_fd);
	for (int i = 0; i < n; i++) {
		while (waitpid(pids[i], &st, 0) < 0)
			if (errno != EINTR) {
				st = -1;
				break;
			}
		if (!WIFEXITED(st) || WEXITSTATUS(st))
			bad++;
	}
	return bad;
}

int main(int argc, char **argv)
{
	long nworkers = 4, mib = 32, max_s = 20;
	int ready[2], cmd[2], opt, n = 0, rc;
	pid_t pids[MAX_WORKERS];
	struct sigaction sa;
	struct watch w = { 0 };

	while ((opt = getopt(argc, argv, "w:m:t:")) != -1) {
		switch (opt) {
		case 'w': nworkers = parse_opt('w', optarg, 1, MAX_WORKERS); break;
		case 'm': mib = parse_opt('m', optarg, 1, 4096); break;
		case 't': max_s = parse_opt('t', optarg, 1, 3600); break;
		default:
			fprintf(stderr, "usage: demo_workers [-w WORKERS] [-m MIB] [-t SECONDS]\n");
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "demo_workers: unexpected argument '%s'\n", argv[optind]);
		return 2;
	}

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_stop;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	if (pipe(ready) || pipe(cmd)) {
		perror("demo_workers: pipe");
		return 1;
	}

	size_t cache_len = (size_t)mib << 20;
	long page = sysconf(_SC_PAGESIZE);
	printf("demo_workers: %ld workers, each building the same %ld MiB cache in its own memory "
	       "(and %d MiB of its own)\n", nworkers, mib, OWN_MIB);
	fflush(stdout);
	for (; n < nworkers; n++) {
		pid_t pid = fork();
		if (pid < 0) {
			perror("demo_workers: fork");
			break;
		}
		if (pid == 0) {
			signal(SIGINT, SIG_DFL);
			signal(SIGTERM, SIG_DFL);
			signal(SIGHUP, SIG_DFL);
			close(ready[0]);
			close(cmd[1]);
			_exit(worker(ready[1], cmd[0], cache_len, (unsigned)n + 1));
		}
		pids[n] = pid;
	}
	close(ready[1]);
	close(cmd[0]);

	rc = n < nworkers || wait_ready(ready[0], n) ? 1 : 0;
	if (rc == 0) {
		watch_merging(pids, n, (long)(n * (cache_len / (size_t)page)), (int)max_s, &w);
		/* ksm-run samples once a second: let it see the peak before it goes. */
		if (!stop_signal)
			sleep_ms(LINGER_MS);
	}
	if (end_workers(cmd[1], pids, n))
		rc = 1;
	if (stop_signal)
		printf("demo_workers: stopped by signal %d; the workers have exited\n", (int)stop_signal);
	else if (rc == 0 && w.known)
		printf("demo_workers: at the peak (%.1f s) %.1f MiB of the workers' memory was merged "
		       "(their caches: %.1f MiB); their data is intact\n", w.peak_at,
		       (double)w.peak * (double)page / (1 << 20), (double)w.target * (double)page / (1 << 20));
	else if (rc == 0)
		printf("demo_workers: held for %d s (this kernel does not count a process's merged pages: "
		       "ksm-run's report does, by page frame); their data is intact\n", (int)max_s);
	if (!stop_signal && rc == 0 && w.known && w.peak == 0)
		printf("demo_workers: nothing merged: run it under ksm-run (or with KSM enabled)\n");
	fflush(stdout);
	if (stop_signal) {
		signal(stop_signal, SIG_DFL);
		raise(stop_signal);
	}
	return rc;
}
