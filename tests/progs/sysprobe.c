/*
 * sysprobe - make one system call and say how it went, for the tests of
 * faultinject (and of the library under injected kernel failures).
 *
 *   sysprobe prctl OPTION [ARG2 [ARG3 [ARG4 [ARG5]]]]
 *                               prctl with all five arguments (missing ones 0)
 *   sysprobe madvise ADVICE     madvise(ADVICE) on a fresh 1 MiB anonymous map
 *   sysprobe madvise-mergeable  the same with MADV_MERGEABLE (12)
 *   sysprobe mmap               map and unmap 64 KiB anonymous memory
 *   sysprobe uname              uname(2)
 *
 * Numbers are decimal or 0x hex.  Prints "ok" and exits 0, or prints the
 * errno name (EINVAL, ...) and exits 1; exits 2 on a usage error.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/utsname.h>

#include "../helpers/errnames.h"

#ifndef MADV_MERGEABLE
#define MADV_MERGEABLE 12
#endif

static unsigned long number(const char *text)
{
	char *end;
	unsigned long v;

	errno = 0;
	/* Base 0 would read "012" as octal: only decimal and 0x hex. */
	if (text[0] == '0' && (text[1] == 'x' || text[1] == 'X'))
		v = strtoul(text + 2, &end, 16);
	else
		v = strtoul(text, &end, 10);
	if (text[0] == '-' || text[0] == '+' || end == text || *end || errno) {
		fprintf(stderr, "sysprobe: bad number '%s'\n", text);
		exit(2);
	}
	return v;
}

/* Returns 0 or an errno value. */
static int probe_madvise(int advice)
{
	size_t len = 1 << 20;
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int err = 0;

	if (p == MAP_FAILED) {
		fprintf(stderr, "sysprobe: mmap before madvise: %s\n", strerror(errno));
		exit(2);
	}
	if (madvise(p, len, advice) != 0)
		err = errno;
	munmap(p, len);
	return err;
}

static int probe(int argc, char **argv)
{
	const char *what = argv[1];

	if (strcmp(what, "prctl") == 0 && argc >= 3 && argc <= 7) {
		unsigned long a[5] = { 0, 0, 0, 0, 0 };
		for (int i = 2; i < argc; i++)
			a[i - 2] = number(argv[i]);
		return prctl((int)a[0], a[1], a[2], a[3], a[4]) == -1 ? errno : 0;
	}
	if (strcmp(what, "madvise") == 0 && argc == 3)
		return probe_madvise((int)number(argv[2]));
	if (strcmp(what, "madvise-mergeable") == 0 && argc == 2)
		return probe_madvise(MADV_MERGEABLE);
	if (strcmp(what, "mmap") == 0 && argc == 2) {
		void *p = mmap(NULL, 64 << 10, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED)
			return errno;
		return munmap(p, 64 << 10) == 0 ? 0 : errno;
	}
	if (strcmp(what, "uname") == 0 && argc == 2) {
		struct utsname u;
		return uname(&u) == 0 ? 0 : errno;
	}
	fprintf(stderr, "sysprobe: unknown probe or wrong arguments: '%s'\n"
			"usage: sysprobe prctl OPTION [ARG]... | madvise ADVICE | "
			"madvise-mergeable | mmap | uname\n", what);
	exit(2);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: sysprobe PROBE [ARG]...\n");
		return 2;
	}
	int err = probe(argc, argv);
	const char *name = errname_of(err);

	if (err == 0)
		puts("ok");
	else if (name)
		puts(name);
	else
		printf("errno %d\n", err);
	return err == 0 ? 0 : 1;
}
