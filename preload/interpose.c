/*
 * interpose.c - the libc functions the library wraps to cover memory made
 * later (the program's marks on its memory: interpose_marks.c).
 *
 * mmap and mmap64: a new private mapping of 1 MiB or more that the
 * selection chooses is advised at once, not at the next rescan; marks of
 * whatever was at that address before are dropped.  prctl: a region named
 * later with PR_SET_VMA_ANON_NAME is judged again under its new name, and
 * after the program's own PR_SET_MEMORY_MERGE what it kept out is kept out
 * again.  unshare and setns: entering a user, mount or time namespace
 * needs a single-threaded process, so the rescan thread is paused around
 * the call.  Every wrapper may start a forked child's deferred rescan
 * thread (rescan_start_if_due).
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
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "guard.h"
#include "layout.h"
#include "library.h"
#include "marks.h"
#include "nextsym.h"
#include "rescan.h"

#undef mmap64

typedef void *(*mmap_fn)(void *, size_t, int, int, int, off_t);
/* glibc's mmap64 takes a 64-bit offset, also where off_t is 32 bits. */
typedef void *(*mmap64_fn)(void *, size_t, int, int, int, int64_t);
typedef pid_t (*fork_fn)(void);
typedef int (*prctl_fn)(int, unsigned long, unsigned long, unsigned long, unsigned long);
typedef int (*unshare_fn)(int);
typedef int (*setns_fn)(int, int);

static mmap_fn real_mmap;
static mmap64_fn real_mmap64;
static fork_fn real_fork;
static prctl_fn real_prctl;
static unshare_fn real_unshare;
static setns_fn real_setns;
void interpose_bind_early(void)
{
	(void)NEXT(real_mmap, "mmap");
	(void)NEXT(real_mmap64, "mmap64");
	interpose_marks_bind_early();
}

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

/* Whatever was mapped at a new mapping's address before, its marks are gone. */
static void forget_marks(void *p, size_t len)
{
	unsigned long page = (unsigned long)sysconf(_SC_PAGESIZE);
	int saved_errno = errno;

	marks_lock();
	marks_change((unsigned long)p, ((unsigned long)p + len + page - 1) & ~(page - 1), 0, MARK_ALL);
	marks_unlock();
	errno = saved_errno;
}

static unsigned long page_end(const void *p, size_t len)
{
	unsigned long page = (unsigned long)sysconf(_SC_PAGESIZE);

	return ((unsigned long)p + len + page - 1) & ~(page - 1);
}

static void after_mmap(void *p, size_t len, int flags, int fd, unsigned long since)
{
	int saved_errno = errno, err;

	if (len < ADVISE_AT_ONCE_MIN && rescan_running())
		return;
	err = advise_new_mapping(&lib.sel, p, len, flags, fd, since);
	if (err && err != ENOMEM)
		library_kernel_error(err, "madvise(MADV_MERGEABLE) after mmap");
	errno = saved_errno;
}

/*
 * Both entry points: the real call, recorded as a change of the layout
 * while passes run (layout.h), then the marks of what was there before
 * dropped, then the new mapping judged.
 */
#define MMAP_BODY(call)                                                         \
	unsigned long since = 0;                                                \
	int track = layout_tracking();                                          \
	void *p;                                                                \
	rescan_start_if_due();                                                  \
	if (track)                                                              \
		layout_change_begin();                                          \
	p = (call);                                                             \
	if (track) {                                                            \
		int saved_ = errno;                                             \
		layout_change_end((unsigned long)p, p == MAP_FAILED ? 0 : page_end(p, len)); \
		since = layout_now();                                           \
		errno = saved_;                                                 \
	}                                                                       \
	if (p != MAP_FAILED && marks_any() && marks_near((unsigned long)p, page_end(p, len))) \
		forget_marks(p, len);                                           \
	if (p != MAP_FAILED && library_watching())                              \
		after_mmap(p, len, flags, fd, since);                           \
	return p

EXPORT void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	mmap_fn next = NEXT(real_mmap, "mmap");

	MMAP_BODY(next ? next(addr, len, prot, flags, fd, off) : raw_mmap(addr, len, prot, flags, fd, off));
}

void *mmap64(void *addr, size_t len, int prot, int flags, int fd, int64_t off);

EXPORT void *mmap64(void *addr, size_t len, int prot, int flags, int fd, int64_t off)
{
	mmap64_fn next = NEXT(real_mmap64, "mmap64");

	MMAP_BODY(next ? next(addr, len, prot, flags, fd, off) : raw_mmap(addr, len, prot, flags, fd, (off_t)off));
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
	rescan_start_if_due();
	ret = next ? next(option, a2, a3, a4, a5) : (int)syscall(SYS_prctl, option, a2, a3, a4, a5);
	if (ret == 0 && option == PR_SET_VMA && a2 == PR_SET_VMA_ANON_NAME && library_watching()) {
		saved_errno = errno;
		err = advise_renamed(&lib.sel, (void *)a3, a4, (const char *)a5);
		if (err && err != ENOMEM)
			library_kernel_error(err, "madvise after PR_SET_VMA_ANON_NAME");
		errno = saved_errno;
	}
	if (ret == 0 && option == PR_SET_MEMORY_MERGE && a2 == 1 && guard_active()) {
		saved_errno = errno;
		guard_after_process_merge();
		errno = saved_errno;
	}
	return ret;
}

#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x00000080
#endif

/* What the kernel refuses to a multi-threaded process. */
#define SINGLE_THREADED_NS (CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWTIME)

static int pause_rescan(int needed)
{
	return needed ? rescan_pause() : 0;
}

static void resume_rescan(int paused)
{
	int saved_errno = errno;

	if (paused)
		rescan_resume();
	errno = saved_errno;
}

EXPORT int unshare(int flags)
{
	int paused = pause_rescan(flags & SINGLE_THREADED_NS), ret;

	unshare_fn next = NEXT(real_unshare, "unshare");
	ret = next ? next(flags) : (int)syscall(SYS_unshare, flags);
	resume_rescan(paused);
	return ret;
}

/* nstype 0 means "any type", which includes a user namespace. */
EXPORT int setns(int fd, int nstype)
{
	int paused = pause_rescan(nstype == 0 || (nstype & SINGLE_THREADED_NS)), ret;

	setns_fn next = NEXT(real_setns, "setns");
	ret = next ? next(fd, nstype) : (int)syscall(SYS_setns, fd, nstype);
	resume_rescan(paused);
	return ret;
}

/*
 * The child's own rescan thread is not started here: see
 * rescan_after_fork_child.  A fork is one of the calls that start this
 * process's deferred one.
 */
EXPORT pid_t fork(void)
{
	fork_fn next = NEXT(real_fork, "fork");

	/* Only a recursive lookup could leave it unknown; nothing forks from dlsym. */
	if (!next) {
		errno = ENOSYS;
		return -1;
	}
	rescan_start_if_due();
	return next();
}
