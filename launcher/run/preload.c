/*
 * preload.c: finding libksmenable.so and putting it in LD_PRELOAD.
 * Search order: next to our own executable (the build tree), ../lib from it
 * (an installed prefix, so a relocated install works), then the libdir fixed
 * at build time.  Never ".": a library found relative to the current
 * directory would let any directory inject code into the command.
 */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/msg.h"
#include "paths.h"
#include "run/preload.h"

static bool is_file(const char *path)
{
	struct stat st;

	return !stat(path, &st) && S_ISREG(st.st_mode);
}

/*
 * In DIR: the soname (what a runtime package installs), else the
 * development link.  The file name is kept, not resolved, so that the
 * command's LD_PRELOAD names the soname and survives an upgrade.
 */
static int find_in(const char *dir, char *out, size_t len)
{
	static const char *const names[] = { KSMENABLE_SONAME, "libksmenable.so" };
	char cand[PATH_MAX + 64], real[PATH_MAX];

	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
		snprintf(cand, sizeof cand, "%s/%s", dir, names[i]);
		if (!is_file(cand) || !realpath(dir, real))
			continue;
		if ((size_t)snprintf(out, len, "%s/%s", real, names[i]) < len)
			return 0;
	}
	return -1;
}

int preload_find(const char *override, char *out, size_t len)
{
	char exe[PATH_MAX], up[PATH_MAX + 8], *slash;
	ssize_t n;

	if (override) {
		if (!is_file(override) || !realpath(override, exe)) {
			msg("--preload=%s: no such library file", override);
			return -1;
		}
		snprintf(out, len, "%s", exe);
		return 0;
	}
	n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	if (n > 0) {
		exe[n] = '\0';
		if ((slash = strrchr(exe, '/')))
			*slash = '\0';
		if (find_in(exe, out, len) == 0)
			return 0;
		snprintf(up, sizeof up, "%s/../lib", exe);
		if (find_in(up, out, len) == 0)
			return 0;
	}
	return find_in(KSMENABLE_LIBDIR, out, len);
}

/*
 * A sanitized ksm-run (make check-asan) finds a sanitized library, which
 * works only behind its sanitizer runtime: ASan must be first in the
 * command's initial library list, so the runtime goes in front of whatever
 * library is preloaded (also one named by --preload).  The Makefile defines
 * the runtime's path for that build alone; a normal build prepends the
 * library by itself.
 */
#ifdef KSMENABLE_SANITIZER_RUNTIME
#define RUNTIME_FIRST KSMENABLE_SANITIZER_RUNTIME ":"
#else
#define RUNTIME_FIRST ""
#endif

/* Prepends the library to LD_PRELOAD, keeping what the user preloads. */
int preload_setenv(const char *lib)
{
	const char *old = getenv("LD_PRELOAD");
	char *val;
	int r;

	if (strpbrk(lib, ": \t")) {
		msg("library path '%s' contains a separator of LD_PRELOAD", lib);
		return -1;
	}
	if (old && *old) {
		/* Already there (a nested ksm-run): do not load it twice. */
		const char *p = strstr(old, lib);
		size_t l = strlen(lib);
		if (p && (p == old || p[-1] == ':' || p[-1] == ' ') && (!p[l] || p[l] == ':' || p[l] == ' '))
			return 0;
		if (asprintf(&val, "%s%s:%s", RUNTIME_FIRST, lib, old) < 0)
			return -1;
	} else if (asprintf(&val, "%s%s", RUNTIME_FIRST, lib) < 0) {
		return -1;
	}
	r = setenv("LD_PRELOAD", val, 1);
	free(val);
	return r;
}
