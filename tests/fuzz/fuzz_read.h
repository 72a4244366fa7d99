/*
 * fuzz_read.h - read(2) as the input says, for the harnesses of readers of
 * files (maps, ksmstat), linked with -Wl,--wrap=read (see the Makefile):
 * the linker sends every read() call of the linked objects here.  While a
 * plan is active, a read returns at most the plan's next chunk, is
 * interrupted (EINTR) every so often, and can fail (EIO) at a given call,
 * as reads of /proc may on a busy machine; otherwise it is the real read
 * (libFuzzer's own reads, the harness's).  The code under test is built
 * and linked as always elsewhere: no change to it.
 */
#ifndef KSMENABLE_FUZZ_READ_H
#define KSMENABLE_FUZZ_READ_H

#include <errno.h>
#include <sys/types.h>

struct fuzz_read_plan {
	int active;
	size_t chunk[3];                /* cycled through; 0: no limit */
	unsigned eintr_every;           /* every Nth call fails with EINTR; 0: never */
	unsigned eio_at;                /* this call fails with EIO; 0: never */
	unsigned calls;
	int eio_done;
};

static struct fuzz_read_plan fuzz_read_plan;

ssize_t __real_read(int fd, void *buf, size_t n);
ssize_t __wrap_read(int fd, void *buf, size_t n);

ssize_t __wrap_read(int fd, void *buf, size_t n)
{
	struct fuzz_read_plan *p = &fuzz_read_plan;
	size_t limit;

	if (!p->active)
		return __real_read(fd, buf, n);
	p->calls++;
	if (p->eio_at && p->calls == p->eio_at) {
		p->eio_done = 1;
		errno = EIO;
		return -1;
	}
	if (p->eintr_every && p->calls % p->eintr_every == 0) {
		errno = EINTR;
		return -1;
	}
	limit = p->chunk[p->calls % 3];
	return __real_read(fd, buf, limit && limit < n ? limit : n);
}

/*
 * The plan of byte B for a text of SIZE bytes: 0 reads whole; else chunks
 * from 1 byte up (at least SIZE / 128, so that a text takes at most about
 * 128 reads), EINTR every 2nd, 3rd or 5th call or never, and with the two
 * top bits set an EIO at a call early in the text.
 */
static inline void fuzz_read_start(unsigned b, size_t size)
{
	static const unsigned every[] = { 0, 2, 3, 5 };
	struct fuzz_read_plan *p = &fuzz_read_plan;
	size_t c = 1 + (b & 15) * 13, least = size / 128 + 1;

	memset(p, 0, sizeof *p);
	if (!b)
		return;
	p->chunk[0] = c < least ? least : c;
	p->chunk[1] = least;
	p->chunk[2] = 3 * c + 7;
	p->eintr_every = every[(b >> 4) & 3];
	p->eio_at = (b >> 6) == 3 ? 3 + (unsigned)(c % 11) : 0;
	p->active = 1;
}

static inline void fuzz_read_stop(void)
{
	fuzz_read_plan.active = 0;
}

#endif
