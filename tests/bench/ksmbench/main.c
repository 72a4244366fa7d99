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
 *   ksmbench fork-under-load LIB PROG THREADS SECONDS ROUNDS
 *                                      forks of a program whose THREADS threads
 *                                      map and advise without pause (PROG:
 *                                      tests/progs/forkload), in each mode
 *
 * Variants are interleaved round by round so that drift in the machine's
 * speed hits all of them alike; figures are medians.  Lines that start with
 * "TARGET" are the verdicts against the project's performance targets.
 * Nothing here touches the KSM knobs: merging is not what is measured.
 */
#include <stdio.h>
#include <string.h>

#include "bench.h"

int main(int argc, char **argv)
{
	static const struct {
		const char *name;
		int (*fn)(int, char **);
	} cmds[] = {
		{ "start", cmd_start }, { "spawn", cmd_spawn }, { "mmap", cmd_mmap },
		{ "mmap-loop", cmd_mmap_loop }, { "rescan", cmd_rescan },
		{ "rescan-child", cmd_rescan_child }, { "fork-under-load", cmd_fork_load },
	};

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc >= 2)
		for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++)
			if (strcmp(argv[1], cmds[i].name) == 0)
				return cmds[i].fn(argc, argv);
	die("usage: ksmbench start|spawn|mmap|rescan|fork-under-load ... (see the comment at the top)");
}
