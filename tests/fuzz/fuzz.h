/*
 * fuzz.h - what the libFuzzer harnesses of tests/fuzz/ share: the entry
 * point, a check that turns a broken promise into a crash (libFuzzer then
 * keeps the input as crash-*), copies of the input whose size is exactly
 * what the code under test may touch (so that AddressSanitizer sees a read
 * or write one byte past it), and a memory file to feed readers of files.
 *
 * Built with clang -fsanitize=fuzzer,address,undefined (make fuzz-build).
 */
#ifndef KSMENABLE_FUZZ_H
#define KSMENABLE_FUZZ_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

/*
 * Where a failed check is told: a copy of stderr taken before main, as
 * make fuzz and tests/04-fuzz.bats run the harnesses with -close_fd_mask=3
 * (the code under test may print: ksm-run's messages), which has
 * libFuzzer send fd 2 to /dev/null after it took its own copy.
 */
static int fuzz_diag_fd = 2;

__attribute__((constructor)) static void fuzz_keep_stderr(void)
{
	int fd = dup(2);

	if (fd >= 0)
		fuzz_diag_fd = fd;
}

__attribute__((format(printf, 3, 4), noreturn))
static inline void fuzz_fail(const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	dprintf(fuzz_diag_fd, "%s:%d: fuzz check failed: ", file, line);
	va_start(ap, fmt);
	vdprintf(fuzz_diag_fd, fmt, ap);
	va_end(ap);
	dprintf(fuzz_diag_fd, "\n");
	abort();
}

/* A promise of the code under test; when it is broken, a crash. */
#define FUZZ_CHECK(cond, ...) \
	do { if (!(cond)) fuzz_fail(__FILE__, __LINE__, "!(" #cond "): " __VA_ARGS__); } while (0)

/* A malloc that the harness cannot do without. */
static inline void *fuzz_alloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (!p)
		abort();
	return p;
}

/* DATA as a C string of its own: N bytes and a NUL (it may hold others). */
static inline char *fuzz_str(const uint8_t *data, size_t n)
{
	char *s = fuzz_alloc(n + 1);

	if (n)
		memcpy(s, data, n);
	s[n] = '\0';
	return s;
}

/*
 * The next record of the input (*DATA, *SIZE), up to SEP (not included) or the end, as
 * a C string of its own; consumes it and the separator.  An input is made
 * of records so that each field of a harness can grow or shrink alone.
 */
static inline char *fuzz_record(const uint8_t **data, size_t *size, char sep)
{
	const uint8_t *end;
	size_t n;
	char *s;

	if (!*size)                     /* the data may be NULL then */
		return fuzz_str(NULL, 0);
	end = memchr(*data, sep, *size);
	n = end ? (size_t)(end - *data) : *size;
	s = fuzz_str(*data, n);

	*data += n + (end != NULL);
	*size -= n + (end != NULL);
	return s;
}

/* One byte of the input, or 0 when it is used up. */
static inline unsigned fuzz_byte(const uint8_t **data, size_t *size)
{
	if (!*size)
		return 0;
	(*size)--;
	return *(*data)++;
}

/* A memory file, created once, holding exactly TEXT: a file without disk. */
static inline int fuzz_memfd(const void *text, size_t n)
{
	static int fd = -1;

	if (fd < 0 && (fd = memfd_create("ksmenable-fuzz", MFD_CLOEXEC)) < 0)
		abort();
	if (ftruncate(fd, 0) || (n && pwrite(fd, text, n, 0) != (ssize_t)n))
		abort();
	return fd;
}

/*
 * A message buffer of exactly LEN bytes (at least 1): code that writes one
 * byte past what it was given is caught by AddressSanitizer.  Filled with a
 * marker so that a message not written at all shows.
 */
static inline char *fuzz_msgbuf(size_t len)
{
	char *b = fuzz_alloc(len ? len : 1);

	memset(b, '#', len ? len : 1);
	return b;
}

/* Is the buffer B of LEN bytes a C string (a NUL within it)? */
static inline int fuzz_terminated(const char *b, size_t len)
{
	return memchr(b, '\0', len) != NULL;
}

#endif
