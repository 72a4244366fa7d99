/*
 * elf.c - telling static binaries from dynamic ones by their program
 * headers, in both ELF classes and both byte orders.
 */
#include <elf.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "run/elf.h"

static unsigned long long get(const unsigned char *p, int size, int big)
{
	unsigned long long v = 0;

	for (int i = 0; i < size; i++)
		v |= (unsigned long long)p[big ? size - 1 - i : i] << (8 * i);
	return v;
}

enum exec_kind exec_kind_of_file(const char *path)
{
	unsigned char eh[64], ph[64];
	unsigned long long phoff, phnum, phentsize;
	int fd, wide, big;
	enum exec_kind kind = EXEC_UNKNOWN;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return EXEC_UNKNOWN;
	if (pread(fd, eh, sizeof eh, 0) != (ssize_t)sizeof eh || memcmp(eh, ELFMAG, SELFMAG))
		goto out;
	wide = eh[EI_CLASS] == ELFCLASS64;
	big = eh[EI_DATA] == ELFDATA2MSB;
	/* e_phoff, e_phentsize, e_phnum at their offsets in each class. */
	phoff = wide ? get(eh + 32, 8, big) : get(eh + 28, 4, big);
	phentsize = get(eh + (wide ? 54 : 42), 2, big);
	phnum = get(eh + (wide ? 56 : 44), 2, big);
	if (phentsize < (wide ? 56U : 32U) || phentsize > sizeof ph || phnum > 4096)
		goto out;
	kind = EXEC_STATIC;
	for (unsigned long long i = 0; i < phnum; i++) {
		if (pread(fd, ph, phentsize, (off_t)(phoff + i * phentsize)) != (ssize_t)phentsize) {
			kind = EXEC_UNKNOWN;
			break;
		}
		if (get(ph, 4, big) == PT_INTERP) {
			kind = EXEC_DYNAMIC;
			break;
		}
	}
out:
	close(fd);
	return kind;
}

enum exec_kind exec_kind_of(const char *command)
{
	const char *path = getenv("PATH"), *p, *end;
	char cand[PATH_MAX];

	if (strchr(command, '/'))
		return exec_kind_of_file(command);
	/* execvp's default search path when PATH is unset. */
	for (p = path ? path : "/bin:/usr/bin"; ; p = end + 1) {
		end = strchr(p, ':');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		if ((size_t)snprintf(cand, sizeof cand, "%.*s%s%s", (int)len, p, len ? "/" : "",
				     command) < sizeof cand &&
		    access(cand, X_OK) == 0)
			return exec_kind_of_file(cand);
		if (!end)
			return EXEC_UNKNOWN;
	}
}
