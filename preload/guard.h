/*
 * guard.h - what the library keeps out of KSM whatever the selection says
 * (guard.c): ranges the program made MADV_UNMERGEABLE, and secret-like
 * memory, from the marks table (marks.h).
 */
#ifndef KSMENABLE_GUARD_H
#define KSMENABLE_GUARD_H

struct advise_stats;               /* advise.h */
struct selection;                  /* selection.h */

/*
 * The library enables KSM here (a mode, or the API): from now on the guard
 * acts (unmerges what becomes secret-like).  SECRETS_ALLOWED: the user's
 * allow list names "secret".
 */
void guard_enable(int secrets_allowed);
/* Has guard_enable been called? */
int guard_active(void);

/* madvise by system call: never through this library's own madvise.  0 or errno. */
int raw_madvise(unsigned long start, unsigned long end, int advice);

/*
 * Advise [START, END), which SEL chose, MERGEABLE, except the pieces the
 * program made unmergeable (or mergeable itself: they are already), and
 * secret-like pieces unless SEL's allow list names "secret".  The check
 * and the calls happen under the marks lock, so that a program thread
 * marking the range meanwhile is never overridden.  Nothing is advised
 * once the marks table has been full, and nothing the program remapped
 * since layout change number SINCE (layout.h: the view is stale there).
 * Counts into ST; returns 0 or the first errno other than ENOMEM.
 */
int guard_advise(const struct selection *sel, unsigned long start, unsigned long end,
		 unsigned long since, struct advise_stats *st);

/*
 * The program changed the marks of [START, END) (already applied by the
 * kernel): record them, and make pieces that are now secret-like
 * unmergeable, unless the program made them mergeable itself, secrets are
 * allowed, or the library enables nothing here.  Caller holds the lock.
 */
void guard_program_marked(unsigned long start, unsigned long end, unsigned set, unsigned clear);

/*
 * The process-wide flag was just set (by the library, the API or the
 * program): the kernel made every compatible VMA mergeable, kept-out ones
 * too, so they are made unmergeable again.  Takes the lock.
 */
void guard_after_process_merge(void);

/*
 * Marks that exist before the library could see them made (another
 * library's constructor ran first): read once from /proc/self/smaps by the
 * rescan thread when it starts in madvise mode, since smaps costs too much
 * for a program's start (about 100 us for a small program, 35 ms with
 * 10,000 mappings).  Secret-like memory found there is unmerged at once.
 * SMAPS_FD is open on /proc/self/smaps (opened by the thread's starter, so
 * that the thread itself opens nothing); the read ends early once *STOP is
 * set (the program is ending).
 */
void guard_import_smaps(int smaps_fd, const int *stop);

/* Bytes and ranges kept out now, for the report: by the program, as secret-like. */
void guard_kept_out(unsigned long *prog_ranges, unsigned long long *prog_bytes,
		    unsigned long *secret_ranges, unsigned long long *secret_bytes);

#endif
