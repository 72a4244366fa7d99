/* common.c - ksmbench's helpers: running, timing and inspecting variants. */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"

const char *self_exe = "/proc/self/exe";

void die(const char *fmt, ...)
{
	va_list ap;

	fputs("ksmbench: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(2);
}

long count(const char *what, const char *text, long min, long max)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(text, &end, 10);
	if (end == text || *end || errno || v < min || v > max)
		die("bad %s '%s' (expected %ld to %ld)", what, text, min, max);
	return v;
}

double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* The Qth quantile (0..1) of V[0..N); sorts V. */
double quantile(double *v, size_t n, double q)
{
	if (n == 0)
		return 0;
	qsort(v, n, sizeof *v, cmp_double);
	return v[(size_t)(q * (double)(n - 1) + 0.5)];
}

void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

/*
 * The environment for a child: ours without LD_PRELOAD and KSM_ENABLE_*
 * (a user's own settings must not leak into a variant), plus EXTRA (NULL
 * terminated "NAME=VALUE" strings).
 */
char **child_env(const char *const *extra)
{
	size_t n = 0, k = 0;

	while (environ[n])
		n++;
	for (const char *const *e = extra; *e; e++)
		n++;
	char **env = calloc(n + 1, sizeof *env);
	if (!env)
		die("out of memory");
	for (char **e = environ; *e; e++)
		if (strncmp(*e, "LD_PRELOAD=", 11) != 0 && strncmp(*e, "KSM_ENABLE_", 11) != 0)
			env[k++] = *e;
	for (const char *const *e = extra; *e; e++)
		env[k++] = (char *)*e;
	env[k] = NULL;
	return env;
}

/*
 * The environment of variant V: LD_PRELOAD=LIB (or EMPTY, a library that
 * does nothing) and KSM_ENABLE_MODE, plus MORE.  The strings live in static
 * buffers until the next call.
 */
char **variant_env(const struct variant *v, const char *lib, const char *empty,
			  const char *more)
{
	static char preload[4096], mode[64];
	const char *extra[4] = { NULL, NULL, NULL, NULL };
	int k = 0;

	if (v->preload != NO_PRELOAD) {
		snprintf(preload, sizeof preload, "LD_PRELOAD=%s", v->preload == PRELOAD_LIB ? lib : empty);
		extra[k++] = preload;
	}
	if (v->mode) {
		snprintf(mode, sizeof mode, "KSM_ENABLE_MODE=%s", v->mode);
		extra[k++] = mode;
	}
	if (more)
		extra[k++] = more;
	return child_env(extra); /* copies the pointers it needs from extra */
}

int wait_child(pid_t pid)
{
	int status;

	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			die("waitpid: %s", strerror(errno));
	return status;
}

/* Runs ARGV with ENV; its stdout goes to OUT (size LEN, NUL-terminated).  Returns its status. */
int run_capture(char *const argv[], char *const env[], char *out, size_t len)
{
	int fd[2];
	size_t got = 0;
	ssize_t r;

	if (pipe(fd) != 0)
		die("pipe: %s", strerror(errno));
	pid_t pid = fork();
	if (pid < 0)
		die("fork: %s", strerror(errno));
	if (pid == 0) {
		dup2(fd[1], 1);
		close(fd[0]);
		close(fd[1]);
		execve(argv[0], argv, env);
		_exit(127);
	}
	close(fd[1]);
	while (got + 1 < len && ((r = read(fd[0], out + got, len - 1 - got)) > 0 || (r < 0 && errno == EINTR)))
		if (r > 0)
			got += (size_t)r;
	out[got] = '\0';
	close(fd[0]);
	return wait_child(pid);
}

/*
 * MAPPINGS separate VMAs: one private anonymous region whose pages
 * alternate between read-write and read-only, so that no two neighbours
 * can merge.  Every page is written first (a real program's mappings are
 * populated, and that is what a scan of smaps walks), each with its own
 * value so that a running ksmd would find nothing to merge.
 */
char *make_mappings(long mappings)
{
	long page = sysconf(_SC_PAGESIZE);
	char *p = mmap(NULL, (size_t)(mappings * page), PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		die("mmap of %ld pages: %s", mappings, strerror(errno));
	for (long i = 0; i < mappings; i++)
		*(uint64_t *)(p + i * page) = 0x6b736d0000000000ull + (uint64_t)i;
	for (long i = 1; i < mappings; i += 2)
		if (mprotect(p + i * page, (size_t)page, PROT_READ) != 0)
			die("mprotect: %s (vm.max_map_count?)", strerror(errno));
	return p;
}

long count_maps(void)
{
	FILE *f = fopen("/proc/self/maps", "r");
	long lines = 0;
	int c;

	if (!f)
		return -1;
	while ((c = getc(f)) != EOF)
		lines += c == '\n';
	fclose(f);
	return lines;
}

/* How many VMAs overlapping [LO, HI) carry the mergeable flag "mg" (the
 * first bench page may have merged with an older neighbour). */
long count_mergeable(unsigned long lo, unsigned long hi)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	char line[512];
	unsigned long start = 0, end = 0;
	long n = 0;

	if (!f)
		return -1;
	while (fgets(line, sizeof line, f)) {
		unsigned long s, e;
		/* Field lines such as "AnonHugePages:" begin with hex letters too:
		 * only a full "START-END " header moves the current VMA. */
		if (sscanf(line, "%lx-%lx ", &s, &e) == 2 && strchr(line, '-') < strchr(line, ' ')) {
			start = s, end = e;
			continue;
		}
		if (strncmp(line, "VmFlags:", 8) == 0 && start < hi && end > lo && strstr(line, " mg"))
			n++;
	}
	fclose(f);
	return n;
}
