/*
 * noalloc - does an interposed call allocate?  This program counts the
 * calls of malloc, calloc, realloc and free while it maps a file (which
 * the library judges against file:GLOB selectors) in a UTF-8 locale, and
 * makes the library warn about an errno that strerror does not know.
 * Prints "allocations N" for the mapping; exits 0.
 */
#include <fcntl.h>
#include <stddef.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#ifndef __GLIBC__
int main(void) { puts("allocations unknown (not glibc)"); return 0; }
#else
extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void __libc_free(void *);

static volatile int counting, count;

void *malloc(size_t n) { if (counting) count++; return __libc_malloc(n); }
void *calloc(size_t a, size_t b) { if (counting) count++; return __libc_calloc(a, b); }
void *realloc(void *p, size_t n) { if (counting) count++; return __libc_realloc(p, n); }
void free(void *p) { if (counting) count++; __libc_free(p); }

int main(int argc, char **argv)
{
	int fd;
	void *p;

	if (argc != 2 || !setlocale(LC_ALL, "C.UTF-8"))
		return 2;
	if ((fd = open(argv[1], O_RDWR | O_CREAT | O_TRUNC, 0600)) < 0 || ftruncate(fd, 2 << 20))
		return 2;
	counting = 1;
	p = mmap(NULL, 2 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
	counting = 0;
	if (p == MAP_FAILED)
		return 2;
	printf("allocations %d\n", count);
	return 0;
}
#endif
