/*
 * ksmbench - the measurements behind `make bench` (tests/bench/run).
 *
 *   ksmbench start LIB MAPPINGS REPS   constructor cost: dlopen LIB in a fresh
 *                                      process holding MAPPINGS separate VMAs,
 *                                      in each mode (off, prctl, madvise)
 *   ksmbench spawn LIB PROG REPS [EMPTY_LIB]
 *                                      fork+exec+exit of PROG without the
 *                                      library, preloaded in each mode, and
 *                                      with EMPTY_LIB (does nothing) preloaded
 *   ksmbench mmap LIB PAIRS ROUNDS     64 KiB anonymous mmap+munmap pair,
 *                                      plain and interposed in each mode, at a
 *                                      fenced and at a kernel-chosen address
 *   ksmbench rescan LIB MAPPINGS SECONDS [RESCAN_MS|default]...
 *                                      CPU of the "ksmenable" rescan thread in
 *                                      madvise mode; "default" leaves
 *                                      KSM_ENABLE_RESCAN_MS unset
 *
 * Variants are interleaved round by round so that drift in the machine's
 * speed hits all of them alike; figures are medians.  Lines that start with
 * "TARGET" are the verdicts against the project's performance targets.
 * Nothing here touches the KSM knobs: merging is not what is measured.
 */
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

#define PR_GET_MEMORY_MERGE_ 68
#define PAIR_LEN (64 << 10)

enum preload { NO_PRELOAD, PRELOAD_LIB, PRELOAD_EMPTY };

struct variant {
	const char *name;
	enum preload preload;
	const char *mode; /* KSM_ENABLE_MODE, or NULL to leave it unset */
};

static const char *self_exe = "/proc/self/exe";

static void die(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));

static void die(const char *fmt, ...)
{
	va_list ap;

	fputs("ksmbench: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(2);
}

static long count(const char *what, const char *text, long min, long max)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(text, &end, 10);
	if (end == text || *end || errno || v < min || v > max)
		die("bad %s '%s' (expected %ld to %ld)", what, text, min, max);
	return v;
}

static double now_ns(void)
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
static double quantile(double *v, size_t n, double q)
{
	if (n == 0)
		return 0;
	qsort(v, n, sizeof *v, cmp_double);
	return v[(size_t)(q * (double)(n - 1) + 0.5)];
}

static void sleep_ms(long ms)
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
static char **child_env(const char *const *extra)
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
static char **variant_env(const struct variant *v, const char *lib, const char *empty,
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

static int wait_child(pid_t pid)
{
	int status;

	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			die("waitpid: %s", strerror(errno));
	return status;
}

/* Runs ARGV with ENV; its stdout goes to OUT (size LEN, NUL-terminated).  Returns its status. */
static int run_capture(char *const argv[], char *const env[], char *out, size_t len)
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
static char *make_mappings(long mappings)
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

static long count_maps(void)
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
static long count_mergeable(unsigned long lo, unsigned long hi)
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

/* ---- start: the constructor's cost, timed around dlopen ---- */

struct start_result {
	double ns;
	long maps;  /* VMAs in the process before dlopen */
	long check; /* prctl: PR_GET_MEMORY_MERGE; madvise: mergeable bench VMAs */
};

static struct start_result start_once(const char *lib, const char *mode, long mappings)
{
	struct start_result res = { 0, 0, -1 };
	int fd[2];

	if (pipe(fd) != 0)
		die("pipe: %s", strerror(errno));
	pid_t pid = fork();
	if (pid < 0)
		die("fork: %s", strerror(errno));
	if (pid == 0) {
		long page = sysconf(_SC_PAGESIZE);
		char *p = make_mappings(mappings);

		close(fd[0]);
		unsetenv("KSM_ENABLE_ALLOW");
		unsetenv("KSM_ENABLE_DENY");
		unsetenv("KSM_ENABLE_RESCAN_MS");
		setenv("KSM_ENABLE_MODE", mode, 1);
		res.maps = count_maps();
		double t0 = now_ns();
		void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
		double t1 = now_ns();
		if (!h) {
			fprintf(stderr, "ksmbench: dlopen %s: %s\n", lib, dlerror());
			_exit(1);
		}
		res.ns = t1 - t0;
		if (strcmp(mode, "prctl") == 0)
			res.check = prctl(PR_GET_MEMORY_MERGE_, 0, 0, 0, 0);
		else if (strcmp(mode, "madvise") == 0)
			res.check = count_mergeable((unsigned long)p,
						    (unsigned long)(p + mappings * page));
		if (write(fd[1], &res, sizeof res) != (ssize_t)sizeof res)
			_exit(1);
		/* The rescan thread may be running: leave without unloading. */
		_exit(0);
	}
	close(fd[1]);
	ssize_t r = read(fd[0], &res, sizeof res);
	close(fd[0]);
	int status = wait_child(pid);
	if (r != (ssize_t)sizeof res || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
		die("start: the child for mode %s failed (status 0x%x)", mode, status);
	return res;
}

static int cmd_start(int argc, char **argv)
{
	static const char *const modes[] = { "off", "prctl", "madvise" };
	enum { NMODES = sizeof modes / sizeof modes[0] };

	if (argc != 5)
		die("usage: ksmbench start LIB MAPPINGS REPS");
	const char *lib = argv[2];
	long mappings = count("MAPPINGS", argv[3], 1, 1000000);
	long reps = count("REPS", argv[4], 1, 100000);
	double *ns[NMODES];
	long maps = 0, check[NMODES];

	for (int m = 0; m < NMODES; m++) {
		ns[m] = calloc((size_t)reps, sizeof(double));
		if (!ns[m])
			die("out of memory");
		check[m] = -1;
	}
	for (long r = 0; r < reps; r++)
		for (int m = 0; m < NMODES; m++) {
			struct start_result res = start_once(lib, modes[m], mappings);
			ns[m][r] = res.ns;
			maps = res.maps;
			if (r == 0)
				check[m] = res.check;
		}
	printf("  %ld bench mappings (%ld VMAs in the process before dlopen), %ld runs per mode\n",
	       mappings, maps, reps);
	/* "over off": the mode's own work, without loading the library. */
	printf("  %-8s %12s %12s %12s %12s\n", "mode", "median us", "p10 us", "p90 us", "over off");
	double off = quantile(ns[0], (size_t)reps, 0.5);
	for (int m = 0; m < NMODES; m++) {
		double med = quantile(ns[m], (size_t)reps, 0.5);
		double p10 = quantile(ns[m], (size_t)reps, 0.1);
		double p90 = quantile(ns[m], (size_t)reps, 0.9);
		printf("  %-8s %12.1f %12.1f %12.1f %12.1f\n", modes[m], med / 1e3, p10 / 1e3,
		       p90 / 1e3, (med - off) / 1e3);
		/* Machine-readable, for the summary in tests/bench/run. */
		printf("RESULT start %ld %s %.0f\n", mappings, modes[m], med);
	}
	printf("  check: prctl mode PR_GET_MEMORY_MERGE=%ld (want 1); madvise mode: "
	       "%ld of %ld bench mappings mergeable\n", check[1], check[2], mappings);
	if (check[1] != 1 || check[2] != mappings)
		printf("  WARNING: the library did not do what the mode asks; the figures "
		       "above do not measure its work\n");
	double madv = quantile(ns[2], (size_t)reps, 0.5);
	if (mappings >= 10000)
		printf("TARGET %s madvise mode with %ld mappings costs under 10 ms at start: "
		       "%.2f ms (dlopen, constructor included)\n",
		       madv < 10e6 && check[2] == mappings ? "PASS" : "MISS", mappings, madv / 1e6);
	for (int m = 0; m < NMODES; m++)
		free(ns[m]);
	return 0;
}

/* ---- spawn: whole-process start of a small program ---- */

static int cmd_spawn(int argc, char **argv)
{
	/* "empty" preloads a library that does nothing: the floor that any
	 * LD_PRELOAD costs, to tell the library's own share from the loader's. */
	static const struct variant all[] = {
		{ "no library", NO_PRELOAD, NULL }, { "empty preload", PRELOAD_EMPTY, NULL },
		{ "off", PRELOAD_LIB, "off" }, { "prctl", PRELOAD_LIB, "prctl" },
		{ "madvise", PRELOAD_LIB, "madvise" },
	};
	enum { NV = sizeof all / sizeof all[0], NONE = 0, EMPTY = 1 };

	if (argc != 5 && argc != 6)
		die("usage: ksmbench spawn LIB PROG REPS [EMPTY_LIB]");
	const char *lib = argv[2], *empty = argc == 6 ? argv[5] : NULL;
	char *prog = argv[3];
	long reps = count("REPS", argv[4], 1, 1000000);
	char *prog_argv[] = { prog, NULL };
	const struct variant *variants[NV] = { NULL };
	char **env[NV];
	double *ns[NV], med[NV];
	int nv = 0, prctl_v = 0;

	for (int v = 0; v < NV; v++)
		if (all[v].preload != PRELOAD_EMPTY || empty) {
			if (all[v].mode && strcmp(all[v].mode, "prctl") == 0)
				prctl_v = nv;
			variants[nv++] = &all[v];
		}
	for (int v = 0; v < nv; v++) {
		env[v] = variant_env(variants[v], lib, empty, NULL);
		/* variant_env's buffers are static: keep a private copy per variant. */
		for (char **e = env[v]; *e; e++)
			if (!(*e = strdup(*e)))
				die("out of memory");
		ns[v] = calloc((size_t)reps, sizeof(double));
		if (!ns[v])
			die("out of memory");
	}
	/* A warm-up round so that page cache and dynamic loader caches are hot. */
	for (int i = 0; i < 20; i++)
		for (int v = 0; v < nv; v++) {
			pid_t pid = fork();
			if (pid == 0) {
				execve(prog, prog_argv, env[v]);
				_exit(127);
			}
			if (wait_child(pid) != 0)
				die("spawn: %s (%s) failed", prog, variants[v]->name);
		}
	for (long r = 0; r < reps; r++)
		for (int v = 0; v < nv; v++) {
			double t0 = now_ns();
			pid_t pid = fork();
			if (pid < 0)
				die("fork: %s", strerror(errno));
			if (pid == 0) {
				execve(prog, prog_argv, env[v]);
				_exit(127);
			}
			int status = wait_child(pid);
			ns[v][r] = now_ns() - t0;
			if (status != 0)
				die("spawn: %s (%s) exited with status 0x%x", prog, variants[v]->name, status);
		}
	printf("  %ld runs per variant, interleaved\n", reps);
	printf("  %-16s %12s %12s %12s %10s\n", "variant", "median us", "p10 us", "p90 us",
	       "vs none");
	for (int v = 0; v < nv; v++) {
		med[v] = quantile(ns[v], (size_t)reps, 0.5);
		printf("  %-16s %12.1f %12.1f %12.1f %+9.1f%%\n", variants[v]->name, med[v] / 1e3,
		       quantile(ns[v], (size_t)reps, 0.1) / 1e3,
		       quantile(ns[v], (size_t)reps, 0.9) / 1e3, (med[v] / med[NONE] - 1) * 100);
		printf("RESULT spawn %s %.0f\n", v == NONE ? "none" : v == EMPTY && empty ? "empty" :
		       variants[v]->mode, med[v]);
	}
	double added = (med[prctl_v] / med[NONE] - 1) * 100;
	if (empty)
		printf("  the library's own share in prctl mode, over an empty preload: %+.1f us "
		       "(%+.1f%% of the start); any preload costs %+.1f us here\n",
		       (med[prctl_v] - med[EMPTY]) / 1e3, (med[prctl_v] - med[EMPTY]) / med[NONE] * 100,
		       (med[EMPTY] - med[NONE]) / 1e3);
	printf("TARGET %s prctl mode adds under 5%% to the start of a small program: %+.1f%% "
	       "(%.1f us over %.1f us)\n", added < 5 ? "PASS" : "MISS", added,
	       (med[prctl_v] - med[NONE]) / 1e3, med[NONE] / 1e3);
	for (int v = 0; v < nv; v++) {
		for (char **e = env[v]; *e; e++)
			free(*e);
		free(env[v]);
		free(ns[v]);
	}
	return 0;
}

/* ---- mmap: the interposed mmap+munmap pair ---- */

/* In the child: BATCHES timed batches of PAIRS pairs; prints ns per pair each. */
/*
 * Where the pair's mapping goes.  FENCED: a hole between two PROT_NONE guard
 * pages, passed as the address hint, so the new mapping can never merge with
 * a neighbour in any variant: the cost of the interposition alone.  FREE: the
 * kernel's choice; there the mapping may merge with a neighbouring anonymous
 * VMA (and munmap must split it again), and the library's advice on that
 * neighbour changes whether it does, so layout effects show up too.
 */
static const char *const layouts[] = { "fenced", "free" };
enum { NLAYOUTS = sizeof layouts / sizeof layouts[0] };

/* In the child: BATCHES timed batches of PAIRS pairs; prints ns per pair each. */
static int cmd_mmap_loop(int argc, char **argv)
{
	if (argc != 5)
		die("usage: ksmbench mmap-loop PAIRS BATCHES fenced|free");
	long pairs = count("PAIRS", argv[2], 1, 100000000);
	long batches = count("BATCHES", argv[3], 1, 10000);
	int fenced = strcmp(argv[4], "fenced") == 0;
	long page = sysconf(_SC_PAGESIZE);
	char *hole = NULL;

	if (!fenced && strcmp(argv[4], "free") != 0)
		die("bad layout '%s' (expected fenced or free)", argv[4]);
	if (fenced) {
		char *r = mmap(NULL, PAIR_LEN + 2 * (size_t)page, PROT_NONE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (r == MAP_FAILED || munmap(r + page, PAIR_LEN) != 0)
			die("fence: %s", strerror(errno));
		hole = r + page;
	}
	for (long b = -1; b < batches; b++) { /* batch -1 warms up, untimed */
		double t0 = now_ns();
		for (long i = 0; i < pairs; i++) {
			char *p = mmap(hole, PAIR_LEN, PROT_READ | PROT_WRITE,
				       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
			if (p == MAP_FAILED || munmap(p, PAIR_LEN) != 0)
				die("mmap/munmap: %s", strerror(errno));
			if (fenced && p != hole)
				die("the kernel did not take the hint %p (got %p)", (void *)hole, (void *)p);
		}
		double t1 = now_ns();
		if (b >= 0)
			printf("%.2f\n", (t1 - t0) / (double)pairs);
	}
	return 0;
}

static int cmd_mmap(int argc, char **argv)
{
	static const struct variant variants[] = {
		{ "no library", NO_PRELOAD, NULL }, { "off", PRELOAD_LIB, "off" },
		{ "prctl", PRELOAD_LIB, "prctl" }, { "madvise", PRELOAD_LIB, "madvise" },
	};
	enum { NV = sizeof variants / sizeof variants[0], BATCHES = 10 };

	if (argc != 5)
		die("usage: ksmbench mmap LIB PAIRS ROUNDS");
	const char *lib = argv[2];
	long rounds = count("ROUNDS", argv[4], 1, 1000);
	char batches[16], out[4096];
	snprintf(batches, sizeof batches, "%d", BATCHES);
	double *ns[NLAYOUTS][NV], med[NLAYOUTS][NV];
	size_t n[NLAYOUTS][NV], cap = (size_t)(rounds * BATCHES);

	count("PAIRS", argv[3], 1, 100000000);
	for (int l = 0; l < NLAYOUTS; l++)
		for (int v = 0; v < NV; v++) {
			if (!(ns[l][v] = calloc(cap, sizeof(double))))
				die("out of memory");
			n[l][v] = 0;
		}
	for (long r = 0; r < rounds; r++)
		for (int l = 0; l < NLAYOUTS; l++)
			for (int v = 0; v < NV; v++) {
				char *child_argv[] = { (char *)self_exe, "mmap-loop", argv[3], batches,
						       (char *)layouts[l], NULL };
				char **env = variant_env(&variants[v], lib, NULL, NULL);
				int status = run_capture(child_argv, env, out, sizeof out);
				free(env);
				if (status != 0)
					die("mmap: the child (%s, %s) failed with status 0x%x",
					    layouts[l], variants[v].name, status);
				for (char *line = strtok(out, "\n"); line; line = strtok(NULL, "\n"))
					if (n[l][v] < cap)
						ns[l][v][n[l][v]++] = strtod(line, NULL);
			}
	printf("  64 KiB anonymous mmap+munmap, %s pairs x %d batches x %ld processes per variant\n"
	       "  fenced: the mapping lands between PROT_NONE guard pages and never merges\n"
	       "          with a neighbour (the interposition's own cost)\n"
	       "  free:   the kernel picks the address; the mapping may merge with a neighbour,\n"
	       "          and the library's advice on that neighbour changes whether it does\n",
	       argv[3], BATCHES, rounds);
	printf("  %-7s %-12s %12s %12s %12s %10s\n", "layout", "variant", "median ns", "p10 ns",
	       "p90 ns", "vs none");
	for (int l = 0; l < NLAYOUTS; l++)
		for (int v = 0; v < NV; v++) {
			med[l][v] = quantile(ns[l][v], n[l][v], 0.5);
			printf("  %-7s %-12s %12.1f %12.1f %12.1f %+9.1f%%\n", layouts[l],
			       variants[v].name, med[l][v], quantile(ns[l][v], n[l][v], 0.1),
			       quantile(ns[l][v], n[l][v], 0.9), (med[l][v] / med[l][0] - 1) * 100);
			printf("RESULT mmap %s %s %.1f\n", layouts[l], v == 0 ? "none" : variants[v].mode,
			       med[l][v]);
		}
	for (int l = 0; l < NLAYOUTS; l++)
		for (int v = 2; v < NV; v++) {
			double slower = (med[l][v] / med[l][0] - 1) * 100;
			printf("TARGET %s interposed mmap+munmap under 10%% slower, %s mode, %s layout: "
			       "%+.1f%% (%.0f ns vs %.0f ns)\n", slower < 10 ? "PASS" : "MISS",
			       variants[v].name, layouts[l], slower, med[l][v], med[l][0]);
		}
	for (int l = 0; l < NLAYOUTS; l++)
		for (int v = 0; v < NV; v++)
			free(ns[l][v]);
	return 0;
}

/* ---- rescan: CPU of the library's thread ---- */

/*
 * The thread of this process named NAME (its comm), or 0 if there is none.
 */
static pid_t find_thread(const char *name)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *de;
	pid_t tid = 0;
	/* d_name is up to 255 bytes (a tid is far shorter, but the compiler
	 * cannot know that). */
	char path[sizeof "/proc/self/task//comm" + 256], buf[64];

	if (!d)
		return 0;
	while (!tid && (de = readdir(d))) {
		FILE *f;
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof path, "/proc/self/task/%s/comm", de->d_name);
		if (!(f = fopen(path, "r")))
			continue;
		if (fgets(buf, sizeof buf, f)) {
			buf[strcspn(buf, "\n")] = '\0';
			if (strcmp(buf, name) == 0)
				tid = (pid_t)atol(de->d_name);
		}
		fclose(f);
	}
	closedir(d);
	return tid;
}

/*
 * CPU time (ns) of thread TID of this process.  The kernel's per-thread
 * CPU clock (the clockid that pthread_getcpuclockid builds: ~tid << 3 | 6)
 * is exact even while the thread runs; /proc's schedstat, updated only at
 * ticks and switches, is the fallback.
 */
static double thread_cpu_ns(pid_t tid)
{
	struct timespec ts;
	unsigned long long run_ns;
	char path[64];
	double ns = -1;
	FILE *f;

	if (clock_gettime((clockid_t)((~(unsigned)tid << 3) | 6), &ts) == 0)
		return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
	snprintf(path, sizeof path, "/proc/self/task/%d/schedstat", (int)tid);
	if ((f = fopen(path, "r"))) {
		if (fscanf(f, "%llu", &run_ns) == 1)
			ns = (double)run_ns;
		fclose(f);
	}
	return ns;
}

static double rusage_ns(int who)
{
	struct rusage ru;

	getrusage(who, &ru);
	return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e9 +
	       (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e3;
}

/* CPU of all threads but the calling one: a cross-check of the thread's figure. */
static double other_threads_ns(void)
{
	return rusage_ns(RUSAGE_SELF) - rusage_ns(RUSAGE_THREAD);
}

/*
 * Waits until thread TID has run (its CPU time grew) and gone back to
 * sleep (it stopped growing), polling every millisecond, at most
 * TIMEOUT_MS.  A window between two such points holds whole passes only,
 * so a long period is not over- or under-counted by one pass.
 */
static int wait_pass_end(pid_t tid, long timeout_ms)
{
	double deadline = now_ns() + (double)timeout_ms * 1e6;
	double before = thread_cpu_ns(tid), c;

	do {
		sleep_ms(1);
		if (now_ns() > deadline)
			return -1;
	} while ((c = thread_cpu_ns(tid)) == before);
	do {
		before = c;
		sleep_ms(2);
	} while ((c = thread_cpu_ns(tid)) != before);
	return 0;
}

/*
 * In the child (the library preloaded): prints
 *   THREAD_NS OTHERS_NS WALL_NS FOUND ALIGNED VMAS MERGEABLE
 */
static int cmd_rescan_child(int argc, char **argv)
{
	if (argc != 4)
		die("usage: ksmbench rescan-child MAPPINGS SECONDS");
	long mappings = count("MAPPINGS", argv[2], 1, 1000000);
	long seconds = count("SECONDS", argv[3], 1, 3600);
	const char *env = getenv("KSM_ENABLE_RESCAN_MS");
	long period = env ? atol(env) : 2000; /* unset: at most the documented 2 s */
	long page = sysconf(_SC_PAGESIZE);
	int aligned = 1;

	char *p = make_mappings(mappings);
	/* Let at least one rescan find the new VMAs, so that what is measured is
	 * the steady state of a program that has stopped changing its maps. */
	sleep_ms(period + 500);
	long mg = count_mergeable((unsigned long)p, (unsigned long)(p + mappings * page));
	long vmas = count_maps();
	pid_t tid = find_thread("ksmenable");

	if (tid)
		aligned = wait_pass_end(tid, 2 * period + 1000) == 0;
	double th0 = tid ? thread_cpu_ns(tid) : -1, ot0 = other_threads_ns(), w0 = now_ns();
	sleep_ms(seconds * 1000);
	if (tid && aligned)
		aligned = wait_pass_end(tid, 2 * period + 1000) == 0;
	double th1 = tid ? thread_cpu_ns(tid) : -1, ot1 = other_threads_ns(), w1 = now_ns();
	printf("%.0f %.0f %.0f %d %d %ld %ld\n", tid ? th1 - th0 : -1, ot1 - ot0, w1 - w0,
	       tid != 0, aligned, vmas, mg);
	return 0;
}

static int cmd_rescan(int argc, char **argv)
{
	if (argc < 5)
		die("usage: ksmbench rescan LIB MAPPINGS SECONDS [RESCAN_MS|default]...");
	const char *lib = argv[2];
	long mappings = count("MAPPINGS", argv[3], 1, 1000000);
	count("SECONDS", argv[4], 1, 3600);
	static const struct variant madvise_mode = { "madvise", PRELOAD_LIB, "madvise" };
	char *child_argv[] = { (char *)self_exe, "rescan-child", argv[3], argv[4], NULL };
	const char *const defaults[] = { "default", "2000", "100" };
	const char *const *periods = argc > 5 ? (const char *const *)argv + 5 : defaults;
	int nperiods = argc > 5 ? argc - 5 : 3;
	char out[256], more[64];

	printf("  madvise mode, %ld bench mappings; after one rescan period, a window of at\n"
	       "  least %s s from the end of one pass to the end of a later one\n", mappings, argv[4]);
	printf("  %-18s %6s %8s %12s %12s %12s %9s %11s\n", "KSM_ENABLE_RESCAN", "VMAs", "window",
	       "thread ms/s", "others ms/s", "% of a core", "ms/pass", "mergeable");
	for (int i = 0; i < nperiods; i++) {
		int dflt = strcmp(periods[i], "default") == 0;
		if (!dflt)
			count("RESCAN_MS", periods[i], 0, 3600000);
		snprintf(more, sizeof more, "KSM_ENABLE_RESCAN_MS=%s", periods[i]);
		char **env = variant_env(&madvise_mode, lib, NULL, dflt ? NULL : more);
		int status = run_capture(child_argv, env, out, sizeof out);
		free(env);
		double th, pr, wall;
		int found, aligned;
		long vmas, mg;
		if (status != 0 || sscanf(out, "%lf %lf %lf %d %d %ld %ld", &th, &pr, &wall, &found,
					  &aligned, &vmas, &mg) != 7)
			die("rescan: the child failed (status 0x%x, output '%s')", status, out);
		/* Without a named thread: every thread but main (which only sleeps). */
		double cpu = found ? th : pr;
		double pct = cpu / wall * 100;
		char label[32];
		snprintf(label, sizeof label, "%s%s", dflt ? "unset" : periods[i], dflt ? "" : " ms");
		/* Per pass only where the period is known (the default is the library's). */
		char per_pass[32] = "-";
		if (!dflt && found && atol(periods[i]) > 0)
			snprintf(per_pass, sizeof per_pass, "%.2f", th / wall * (double)atol(periods[i]));
		printf("  %-18s %6ld %7.2fs %12.3f %12.3f %11.3f%% %9s %5ld/%ld\n", label, vmas,
		       wall / 1e9, found ? th / wall * 1e3 : -1.0, pr / wall * 1e3, pct, per_pass,
		       mg, mappings);
		printf("RESULT rescan %s %.4f\n", dflt ? "default" : periods[i], pct);
		if (!found)
			printf("  note: no thread named \"ksmenable\": all threads but main are counted\n");
		else if (!aligned)
			printf("  note: no rescan pass seen at a window edge; the window is not aligned "
			       "to passes\n");
		if (mg != mappings)
			printf("  WARNING: only %ld of %ld bench mappings are mergeable after a rescan "
			       "period\n", mg, mappings);
		printf("TARGET %s rescan with %ld mappings, period %s, under 1%% of one core: %.3f%%\n",
		       pct < 1 ? "PASS" : "MISS", mappings, label, pct);
	}
	return 0;
}

int main(int argc, char **argv)
{
	static const struct {
		const char *name;
		int (*fn)(int, char **);
	} cmds[] = {
		{ "start", cmd_start }, { "spawn", cmd_spawn }, { "mmap", cmd_mmap },
		{ "mmap-loop", cmd_mmap_loop }, { "rescan", cmd_rescan },
		{ "rescan-child", cmd_rescan_child },
	};

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc >= 2)
		for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++)
			if (strcmp(argv[1], cmds[i].name) == 0)
				return cmds[i].fn(argc, argv);
	die("usage: ksmbench start|spawn|mmap|rescan ... (see the comment at the top)");
}
