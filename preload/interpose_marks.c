/*
 * interpose_marks.c - the libc calls by which a program marks its memory,
 * wrapped so that the library remembers the marks (marks.h) and honours
 * them (guard.h): madvise and posix_madvise with the advice below, the
 * mlock family, and munmap and mremap, which end or move marked memory.
 *
 *   MADV_UNMERGEABLE  kept out: never advised again, in any mode
 *   MADV_MERGEABLE    the program's own choice: never unmerged
 *   MADV_DONTDUMP, MADV_WIPEONFORK, mlock*: the signatures of key material
 *
 * Each wrapper makes the real call first and records only what the kernel
 * accepted; it keeps errno as the real call left it and allocates nothing.
 * Other advice (DONTNEED, FREE: what allocators use) passes straight
 * through.  Programs that make the system calls directly are not seen.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "guard.h"
#include "layout.h"
#include "library.h"
#include "marks.h"
#include "nextsym.h"
#include "rescan.h"

#ifndef MADV_WIPEONFORK
#define MADV_WIPEONFORK 18
#define MADV_KEEPONFORK 19
#endif
#ifndef MREMAP_DONTUNMAP
#define MREMAP_DONTUNMAP 4
#endif
#if !defined(SYS_mlock2) && defined(__x86_64__)
#define SYS_mlock2 325             /* for headers older than the call */
#endif
#ifndef SYS_mlock2
#define SYS_mlock2 -1              /* unknown here: the fallback fails with ENOSYS */
#endif

typedef int (*madvise_fn)(void *, size_t, int);
typedef int (*munmap_fn)(void *, size_t);
typedef void *(*mremap_fn)(void *, size_t, size_t, int, ...);
typedef int (*mlock_fn)(const void *, size_t);
typedef int (*mlock2_fn)(const void *, size_t, unsigned int);
typedef int (*mlockall_fn)(int);
typedef int (*munlockall_fn)(void);

static madvise_fn real_madvise, real_posix_madvise;
static munmap_fn real_munmap;
static mremap_fn real_mremap;
static mlock_fn real_mlock, real_munlock;
static mlock2_fn real_mlock2;
static mlockall_fn real_mlockall;
static munlockall_fn real_munlockall;

void interpose_marks_bind_early(void)
{
	(void)NEXT(real_munmap, "munmap");
	(void)NEXT(real_mremap, "mremap");
	(void)NEXT(real_madvise, "madvise");
}

static unsigned long page_end(const void *addr, size_t len)
{
	unsigned long page = (unsigned long)sysconf(_SC_PAGESIZE);

	return ((unsigned long)addr + len + page - 1) & ~(page - 1);
}

/* The marks an advice sets and clears; 0 when it is not recorded. */
static int recorded(int advice, unsigned *set, unsigned *clear)
{
	switch (advice) {
	case MADV_UNMERGEABLE: *set = MARK_KEPT_OUT; *clear = MARK_MERGEABLE; return 1;
	case MADV_MERGEABLE: *set = MARK_MERGEABLE; *clear = MARK_KEPT_OUT; return 1;
	case MADV_DONTDUMP: *set = MARK_DONTDUMP; *clear = 0; return 1;
	case MADV_DODUMP: *set = 0; *clear = MARK_DONTDUMP; return 1;
	case MADV_WIPEONFORK: *set = MARK_WIPEONFORK; *clear = 0; return 1;
	case MADV_KEEPONFORK: *set = 0; *clear = MARK_WIPEONFORK; return 1;
	}
	return 0;
}

/*
 * Calls CALL (the real function, or the system call) under the marks lock,
 * so that the library's own advise passes see the mark and the kernel's
 * state change together; records on success.  ENOMEM from madvise: the
 * range had gaps, and its mapped parts were advised.
 */
#define MARKED_CALL(ret, call, ok, start, end, set, clear) do { \
	int saved_;                                             \
	rescan_start_if_due();                                  \
	marks_lock();                                           \
	ret = (call);                                           \
	saved_ = errno;                                         \
	if (ok)                                                 \
		guard_program_marked(start, end, set, clear);   \
	marks_unlock();                                         \
	errno = saved_;                                         \
} while (0)

EXPORT int madvise(void *addr, size_t len, int advice)
{
	madvise_fn next = NEXT(real_madvise, "madvise");
	unsigned set, clear;
	int ret;

	if (!recorded(advice, &set, &clear))
		return next ? next(addr, len, advice) : (int)syscall(SYS_madvise, addr, len, advice);
	MARKED_CALL(ret, next ? next(addr, len, advice) : (int)syscall(SYS_madvise, addr, len, advice),
		    ret == 0 || errno == ENOMEM, (unsigned long)addr, page_end(addr, len), set, clear);
	return ret;
}

/* glibc and musl pass other advice than POSIX_MADV_DONTNEED on to madvise(2). */
EXPORT int posix_madvise(void *addr, size_t len, int advice)
{
	madvise_fn next = NEXT(real_posix_madvise, "posix_madvise");
	unsigned set, clear;
	int ret;

	if (!recorded(advice, &set, &clear))
		return next ? next(addr, len, advice)
			    : (syscall(SYS_madvise, addr, len, advice) ? errno : 0);
	MARKED_CALL(ret, next ? next(addr, len, advice) : (syscall(SYS_madvise, addr, len, advice) ? errno : 0),
		    ret == 0 || ret == ENOMEM, (unsigned long)addr, page_end(addr, len), set, clear);
	return ret;
}

/*
 * With marks near, the call and the clearing of its marks happen under
 * the marks lock: otherwise another thread could map the freed addresses
 * and mark them before this one clears them, and lose its new marks.
 */
EXPORT int munmap(void *addr, size_t len)
{
	munmap_fn next = NEXT(real_munmap, "munmap");
	int track = layout_tracking(), ret, saved;
	/* marks_any first: the hot path of allocators skips even the page size. */
	int marked = marks_any() && marks_near((unsigned long)addr, page_end(addr, len));

	rescan_start_if_due();
	if (track)
		layout_change_begin();
	if (marked)
		marks_lock();
	ret = next ? next(addr, len) : (int)syscall(SYS_munmap, addr, len);
	saved = errno;
	if (marked) {
		/* The hot path of allocators skips all this: nothing is marked. */
		if (ret == 0)
			marks_change((unsigned long)addr, page_end(addr, len), 0, MARK_ALL);
		marks_unlock();
	}
	if (track)
		layout_change_end((unsigned long)addr, ret ? 0 : page_end(addr, len));
	errno = saved;
	return ret;
}

/* mremap is variadic: the new address comes only with MREMAP_FIXED. */
EXPORT void *mremap(void *old, size_t old_len, size_t new_len, int flags, ...)
{
	mremap_fn next = NEXT(real_mremap, "mremap");
	int track = layout_tracking(), marked = marks_any(), saved;
	void *want = NULL, *ret;
	va_list ap;

	va_start(ap, flags);
	if (flags & MREMAP_FIXED)
		want = va_arg(ap, void *);
	va_end(ap);
	rescan_start_if_due();
	if (track)
		layout_change_begin();
	if (marked)
		marks_lock();      /* as in munmap: the move and the marks together */
	ret = next ? next(old, old_len, new_len, flags, want)
		   : (void *)syscall(SYS_mremap, old, old_len, new_len, flags, want);
	saved = errno;
	if (marked) {
		if (ret != MAP_FAILED)
			marks_move((unsigned long)old, page_end(old, old_len) - (unsigned long)old,
				   (unsigned long)ret, page_end(ret, new_len) - (unsigned long)ret,
				   (flags & MREMAP_DONTUNMAP) != 0);
		marks_unlock();
	}
	if (track) {
		if (ret != MAP_FAILED)
			layout_change_note((unsigned long)old, page_end(old, old_len));
		layout_change_end((unsigned long)ret, ret == MAP_FAILED ? 0 : page_end(ret, new_len));
	}
	errno = saved;
	return ret;
}

EXPORT int mlock(const void *addr, size_t len)
{
	mlock_fn next = NEXT(real_mlock, "mlock");
	int ret;

	MARKED_CALL(ret, next ? next(addr, len) : (int)syscall(SYS_mlock, addr, len), ret == 0,
		    (unsigned long)addr, page_end(addr, len), MARK_LOCKED, 0);
	return ret;
}

EXPORT int mlock2(const void *addr, size_t len, unsigned int flags)
{
	mlock2_fn next = NEXT(real_mlock2, "mlock2");
	int ret;

	MARKED_CALL(ret, next ? next(addr, len, flags) : (int)syscall(SYS_mlock2, addr, len, flags), ret == 0,
		    (unsigned long)addr, page_end(addr, len), MARK_LOCKED, 0);
	return ret;
}

EXPORT int munlock(const void *addr, size_t len)
{
	mlock_fn next = NEXT(real_munlock, "munlock");
	int ret;

	MARKED_CALL(ret, next ? next(addr, len) : (int)syscall(SYS_munlock, addr, len), ret == 0,
		    (unsigned long)addr, page_end(addr, len), 0, MARK_LOCKED);
	return ret;
}

/* All memory counts as locked from now on: DONTDUMP ranges become secret-like. */
EXPORT int mlockall(int flags)
{
	mlockall_fn next = NEXT(real_mlockall, "mlockall");
	int ret, saved;

	marks_lock();
	ret = next ? next(flags) : (int)syscall(SYS_mlockall, flags);
	saved = errno;
	if (ret == 0) {
		marks_lock_all(1);
		guard_program_marked(0, ~0UL, 0, 0);
	}
	marks_unlock();
	errno = saved;
	return ret;
}

EXPORT int munlockall(void)
{
	munlockall_fn next = NEXT(real_munlockall, "munlockall");
	int ret = next ? next() : (int)syscall(SYS_munlockall);

	if (ret == 0)
		marks_lock_all(0);
	return ret;
}
