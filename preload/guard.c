/*
 * guard.c - the library's rule on the program's own marks: never advise
 * what the program kept out; keep secret-like memory unmerged.
 *
 * Secret-like (marks_secret): wiped on fork, or locked and kept out of
 * core dumps.  In madvise mode such memory is never advised; in prctl mode
 * (where the kernel makes everything mergeable) the library makes it
 * MADV_UNMERGEABLE as soon as the program's last call completes the
 * signature.  A range the program advised MADV_MERGEABLE itself is its own
 * decision and is never unmerged.
 */
#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "advise_stats.h"
#include "guard.h"
#include "layout.h"
#include "log.h"
#include "maps.h"
#include "marks.h"
#include "selection.h"

/* Set by the library when it enables KSM (a mode, or the API). */
static int active, allow_secrets;

void guard_enable(int secrets_allowed)
{
	active = 1;
	allow_secrets = secrets_allowed;
}

int raw_madvise(unsigned long start, unsigned long end, int advice)
{
	return syscall(SYS_madvise, start, end - start, advice) ? errno : 0;
}

int guard_active(void)
{
	return active;
}

static int secrets_allowed(const struct selection *sel)
{
	return sel ? selector_has(sel->allow, SEL_SECRET) : allow_secrets;
}

struct walk {
	const struct selection *sel;
	struct advise_stats *st;
	unsigned long start, end;      /* pieces to advise, not yet advised */
	int error;
};

static void flush(struct walk *w)
{
	int err;

	if (w->start == w->end)
		return;
	err = raw_madvise(w->start, w->end, MADV_MERGEABLE);
	/* ENOMEM: part of the range went away since maps was read. */
	if (!err || err == ENOMEM)
		w->st->calls++;
	else if (!w->error)
		w->error = err;
	w->start = w->end = 0;
}

static void piece(unsigned long start, unsigned long end, unsigned marks, void *arg)
{
	struct walk *w = arg;

	if (marks & MARK_KEPT_OUT) {
		w->st->kept_ranges++;
		w->st->kept_bytes += end - start;
	} else if (marks_secret(marks) && !(marks & MARK_MERGEABLE) && !secrets_allowed(w->sel)) {
		w->st->secret_ranges++;
		w->st->secret_bytes += end - start;
	} else if (!(marks & MARK_MERGEABLE)) {
		if (w->start != w->end && w->end == start) {
			w->end = end;
			return;
		}
		flush(w);
		w->start = start;
		w->end = end;
		return;
	}
	flush(w);
}

int guard_advise(const struct selection *sel, unsigned long start, unsigned long end,
		 unsigned long since, struct advise_stats *st)
{
	struct walk w = { .sel = sel, .st = st };
	int track = layout_tracking();

	if (track && layout_unusable_here()) {
		/* A signal handler's mmap inside this thread's own change: the next pass judges it. */
		st->deferred++;
		return 0;
	}
	/* Lock order everywhere: layout, then marks. */
	if (track && (!layout_lock() || layout_changed_since(since, start, end))) {
		st->deferred++;
	} else {
		marks_lock();
		if (!marks_full()) {
			marks_walk(start, end, piece, &w);
			flush(&w);
		}
		marks_unlock();
	}
	if (track)
		layout_unlock();
	return w.error;
}

static void unmerge_secret(unsigned long start, unsigned long end, unsigned marks, void *arg)
{
	int err;

	(void)arg;
	if (!marks_secret(marks) || (marks & MARK_MERGEABLE))
		return;
	err = raw_madvise(start, end, MADV_UNMERGEABLE);
	if (err && err != ENOMEM)
		log_warn("cannot keep secret-like memory at %#lx-%#lx out of KSM (errno %d)", start, end, err);
	else
		log_debug("secret-like memory at %#lx-%#lx made unmergeable", start, end);
}

/*
 * Once the table has been full, it may lack marks the program made since
 * (a mlock there, a DONTDUMP here): a piece it does not call secret-like
 * may be.  Any mark of a secret's signature then makes the range
 * unmergeable, unless the table says the program made it mergeable
 * itself: a full table may stop the library from advising, never from
 * protecting.
 */
static void unmerge_in_doubt(unsigned long start, unsigned long end, unsigned marks, void *arg)
{
	int err;

	(void)arg;
	if (marks & MARK_MERGEABLE)
		return;
	err = raw_madvise(start, end, MADV_UNMERGEABLE);
	if (err && err != ENOMEM)
		log_warn("cannot keep possibly secret memory at %#lx-%#lx out of KSM (errno %d)", start, end, err);
}

#define SECRET_SIGNS (MARK_DONTDUMP | MARK_LOCKED | MARK_WIPEONFORK)

void guard_program_marked(unsigned long start, unsigned long end, unsigned set, unsigned clear)
{
	static int warned;

	if (marks_change(start, end, set, clear) && !warned) {
		warned = 1;
		log_warn("more than %d ranges marked by the program: the library advises nothing "
			 "new from now on, so as not to forget one", MARKS_MAX);
	}
	if (!guard_active() || secrets_allowed(NULL))
		return;
	/* Even with a full table: unmerging needs no record. */
	if (marks_full() && (set & SECRET_SIGNS))
		marks_walk(start, end, unmerge_in_doubt, NULL);
	else
		marks_walk(start, end, unmerge_secret, NULL);
}

static void reapply(unsigned long start, unsigned long end, unsigned marks, void *arg)
{
	(void)arg;
	if (marks & MARK_KEPT_OUT)
		raw_madvise(start, end, MADV_UNMERGEABLE);
	else
		unmerge_secret(start, end, marks, NULL);
}

/*
 * With a full table the kernel's own flags are the record: the marks made
 * since it filled are in no table.  In doubt, DONTDUMP alone counts too
 * (the lock that would complete the signature may be unrecorded).  What
 * the program made MADV_UNMERGEABLE has no flag and cannot be found here.
 */
static int unmerge_flagged(const struct region *r, void *arg)
{
	(void)arg;
	if (r->vmflags > 0 && (r->vmflags & (VMF_DD | VMF_LO | VMF_WF)) && (r->vmflags & VMF_MG))
		raw_madvise(r->start, r->end, MADV_UNMERGEABLE);
	return 0;
}

static void unmerge_flagged_smaps(void)
{
	char buf[16384];
	int fd = open("/proc/self/smaps", O_RDONLY | O_CLOEXEC);

	if (fd < 0) {
		log_warn("the marks table is full and /proc/self/smaps cannot be read (errno %d): "
			 "memory marked since may be mergeable", errno);
		return;
	}
	maps_for_each_fd(fd, buf, sizeof buf, unmerge_flagged, NULL);
	close(fd);
}

void guard_after_process_merge(void)
{
	int saved_errno = errno;

	if (!marks_any())
		return;
	marks_lock();
	marks_each(secrets_allowed(NULL) ? MARK_KEPT_OUT : MARK_ALL, reapply, NULL);
	if (marks_full() && !secrets_allowed(NULL))
		unmerge_flagged_smaps();
	marks_unlock();
	errno = saved_errno;
}

struct tally {
	unsigned long prog_ranges, secret_ranges;
	unsigned long long prog_bytes, secret_bytes;
};

static void count(unsigned long start, unsigned long end, unsigned marks, void *arg)
{
	struct tally *t = arg;

	if (marks & MARK_KEPT_OUT) {
		t->prog_ranges++;
		t->prog_bytes += end - start;
	} else if (marks_secret(marks) && !(marks & MARK_MERGEABLE)) {
		t->secret_ranges++;
		t->secret_bytes += end - start;
	}
}

void guard_kept_out(unsigned long *prog_ranges, unsigned long long *prog_bytes,
		    unsigned long *secret_ranges, unsigned long long *secret_bytes)
{
	struct tally t = { 0, 0, 0, 0 };

	marks_lock();
	marks_each(MARK_ALL, count, &t);
	marks_unlock();
	*prog_ranges = t.prog_ranges;
	*prog_bytes = t.prog_bytes;
	*secret_ranges = secrets_allowed(NULL) ? 0 : t.secret_ranges;
	*secret_bytes = secrets_allowed(NULL) ? 0 : t.secret_bytes;
}

static int import_region(const struct region *r, void *arg)
{
	const int *stop = arg;
	unsigned marks = 0;

	/* A program that ends at once must not wait for this read. */
	if (stop && __atomic_load_n(stop, __ATOMIC_RELAXED))
		return 1;
	if (r->vmflags <= 0)
		return 0;
	if (r->vmflags & VMF_DD)
		marks |= MARK_DONTDUMP;
	if (r->vmflags & VMF_LO)
		marks |= MARK_LOCKED;
	if (r->vmflags & VMF_WF)
		marks |= MARK_WIPEONFORK;
	if (marks) {
		marks_lock();
		guard_program_marked(r->start, r->end, marks, 0);
		marks_unlock();
	}
	return 0;
}

void guard_import_smaps(int smaps_fd, const int *stop)
{
	char buf[16384];

	/* Failing to read only means nothing is learnt: the marks made from now on count. */
	maps_for_each_fd(smaps_fd, buf, sizeof buf, import_region, (void *)stop);
}
