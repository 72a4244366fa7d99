/* start.c - ksmbench start and spawn: what the library costs a program's start. */
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

int cmd_start(int argc, char **argv)
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

int cmd_spawn(int argc, char **argv)
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
	double *ns[NV], med[NV] = { 0 };
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

