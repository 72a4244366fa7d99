/*
 * fuzz_glob.c - the selector patterns (preload/core/glob.c), differential:
 * glob.h promises that for every pattern glob_problem() accepts,
 * glob_match() answers exactly as fnmatch(pattern, name, 0) in the C
 * locale.  Any disagreement is a crash.
 *
 * Input: PATTERN, a NUL byte, NAME (up to a further NUL).  The name is
 * handed to glob_match in a buffer of exactly its length, without a NUL,
 * as the library hands it names from inside the maps buffer.
 */
#include <fnmatch.h>
#include <locale.h>

#include "fuzz.h"
#include "glob.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	setlocale(LC_ALL, "C");
	return 0;
}

/*
 * glibc's fnmatch tries every split at each '*' recursively: with k stars
 * it can take about len^k steps.  The reference is only asked when that
 * stays small; glob_match itself is run on every input.
 */
static int reference_is_cheap(const char *pattern, size_t len)
{
	double cost = 1;

	for (const char *p = pattern; *p; p++)
		if (*p == '*' && p[1] != '*' && (cost *= (double)(len + 1)) > 2e5)
			return 0;
	return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *pattern = fuzz_record(&data, &size, '\0');
	char *name = fuzz_record(&data, &size, '\0');
	size_t len = strlen(name);
	char *exact = fuzz_alloc(len);
	const char *problem = glob_problem(pattern);

	memcpy(exact, name, len);
	if (!problem) {
		int ours = glob_match(pattern, exact, len);

		FUZZ_CHECK(ours == 0 || ours == 1, "glob_match returned %d", ours);
		if (reference_is_cheap(pattern, len)) {
			int theirs = fnmatch(pattern, name, 0);

			FUZZ_CHECK(theirs == 0 || theirs == FNM_NOMATCH,
				   "fnmatch('%s', '%s') = %d: a pattern glob_problem accepts is an error to fnmatch",
				   pattern, name, theirs);
			FUZZ_CHECK(ours == (theirs == 0), "pattern '%s', name '%s': glob_match %d, fnmatch %s",
				   pattern, name, ours, theirs == 0 ? "match" : "no match");
		}
	} else {
		FUZZ_CHECK(*problem, "an empty problem for '%s'", pattern);
	}
	free(exact);
	free(name);
	free(pattern);
	return 0;
}
