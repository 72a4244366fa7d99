/*
 * interpose.c - the libc functions the library wraps.
 *
 * mmap and mmap64: a new private mapping of 1 MiB or more that the
 * selection chooses is advised at once, not at the next rescan.  prctl: a region named later
 * with PR_SET_VMA_ANON_NAME is judged again under its new name.  unshare
 * and setns: entering a user namespace needs a single-threaded process, so
 * the rescan thread is stopped around the call.
 *
 * mremap is not wrapped: a moved or grown mapping keeps its VMA flags, and
 * what else changes is found by the rescan.
 *
 * Each wrapper keeps errno as the real call left it, allocates nothing
 * (allocators call mmap) and calls nothing that could come back here.
 */
#include <dlfcn.h>
#include <errno.h>
#include <sched.h>
#include <stdarg.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "library.h"
#include "rescan.h"

#undef mmap64

typedef void *(*mmap_fn)(void *, size_t, int, int, int, off_t);
typedef int (*prctl_fn)(int, unsigned long, unsigned long, unsigned long, unsigned long);
typedef int (*unshare_fn)(int);
typedef int (*setns_fn)(int, int);

static mmap_fn real_mmap, real_mmap64;
static prctl_fn real_prctl;
static unshare_fn real_unshare;
static setns_fn real_setns;
static volatile int resolving;

/*
 * The next definition of NAME, looked up on first use rather than in the
 * constructor: dlsym costs a few microseconds that a program which never
 * calls these functions should not pay at start.  NULL while a lookup is
 * under way (dlsym may allocate, and allocators call mmap): the caller then
 * makes the system call itself.  Threads racing here store the same value.
 */
static void *next_symbol(void *volatile *slot, const char *name)
{
	void *fn = *slot;

	if (fn || resolving)
		return fn;
	resolving = 1;
	fn = dlsym(RTLD_NEXT, name);
	/* musl has no separate mmap64: its mmap serves */
	if (!fn && !strcmp(name, "mmap64"))
		fn = dlsym(RTLD_NEXT, "mmap");
	*slot = fn;
	resolving = 0;
	return fn;
}

#define NEXT(slot, name) ((__typeof__(slot))next_symbol((void *volatile *)&(slot), name))

/* While the next mmap is not known, the system call serves. */
static void *raw_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
#ifdef SYS_mmap2
	return (void *)syscall(SYS_mmap2, addr, len, prot, flags, fd, off >> 12);
#else
	return (void *)syscall(SYS_mmap, addr, len, prot, flags, fd, off);
#endif
}

/*
 * A mapping of at least this size is advised at once: the madvise call
 * (~0.4 us) is small beside faulting in its pages.  Smaller ones, often
 * short-lived, wait for the next rescan, unless the rescan is off.
 */
#define ADVISE_AT_ONCE_MIN (1UL << 20)

static void after_mmap(void *p, size_t len, int flags, int fd)
{
	int saved_errno = errno, err;

	if (len < ADVISE_AT_ONCE_MIN && rescan_running())
		return;
	err = advise_new_mapping(&lib.sel, p, len, flags, fd);
	if (err && err != ENOMEM)
		library_kernel_error(err, "madvise(MADV_MERGEABLE) after mmap");
	errno = saved_errno;
}

EXPORT void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	mmap_fn next = NEXT(real_mmap, "mmap");
	void *p = next ? next(addr, len, prot, flags, fd, off) : raw_mmap(addr, len, prot, flags, fd, off);

	if (p != MAP_FAILED && lib.watching)
		after_mmap(p, len, flags, fd);
	return p;
}

void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off_t off);

EXPORT void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	mmap_fn next = NEXT(real_mmap64, "mmap64");
	void *p = next ? next(addr, len, prot, flags, fd, off) : raw_mmap(addr, len, prot, flags, fd, off);

	if (p != MAP_FAILED && lib.watching)
		after_mmap(p, len, flags, fd);
	return p;
}

/* prctl is variadic; like libc's own wrapper, read all four arguments. */
EXPORT int prctl(int option, ...)
{
	unsigned long a2, a3, a4, a5;
	va_list ap;
	int ret, saved_errno, err;

	va_start(ap, option);
	a2 = va_arg(ap, unsigned long);
	a3 = va_arg(ap, unsigned long);
	a4 = va_arg(ap, unsigned long);
	a5 = va_arg(ap, unsigned long);
	va_end(ap);
	prctl_fn next = NEXT(real_prctl, "prctl");
	ret = next ? next(option, a2, a3, a4, a5) : (int)syscall(SYS_prctl, option, a2, a3, a4, a5);
	if (ret == 0 && option == PR_SET_VMA && a2 == PR_SET_VMA_ANON_NAME && lib.watching) {
		saved_errno = errno;
		err = advise_renamed(&lib.sel, (void *)a3, a4, (const char *)a5);
		if (err && err != ENOMEM)
			library_kernel_error(err, "madvise after PR_SET_VMA_ANON_NAME");
		errno = saved_errno;
	}
	return ret;
}

/* The kernel refuses a user namespace to a multi-threaded process. */
static int pause_rescan(int user_ns)
{
	if (!user_ns || !rescan_running())
		return 0;
	rescan_stop();
	return 1;
}

static void resume_rescan(int paused)
{
	int saved_errno = errno;

	if (paused)
		rescan_start();
	errno = saved_errno;
}

EXPORT int unshare(int flags)
{
	int paused = pause_rescan(flags & CLONE_NEWUSER), ret;

	unshare_fn next = NEXT(real_unshare, "unshare");
	ret = next ? next(flags) : (int)syscall(SYS_unshare, flags);
	resume_rescan(paused);
	return ret;
}

/* nstype 0 means "any type", which includes a user namespace. */
EXPORT int setns(int fd, int nstype)
{
	int paused = pause_rescan(nstype == 0 || (nstype & CLONE_NEWUSER)), ret;

	setns_fn next = NEXT(real_setns, "setns");
	ret = next ? next(fd, nstype) : (int)syscall(SYS_setns, fd, nstype);
	resume_rescan(paused);
	return ret;
}
