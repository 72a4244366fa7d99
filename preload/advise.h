/*
 * advise.h - marking the selected regions of this process mergeable.
 *
 * A selection is an allow list, a deny list and a minimum size.  A pass
 * reads /proc/self/maps and calls madvise(MADV_MERGEABLE) on every region
 * the selection chooses, joining adjacent chosen regions into one call,
 * around what the program kept out (guard.h).
 */
#ifndef KSMENABLE_ADVISE_H
#define KSMENABLE_ADVISE_H

#include <stddef.h>

#include "advise_stats.h"
#include "selection.h"

/* One pass over /proc/self/maps.  Returns 0, or -1 with errno when the maps
 * cannot be read.  Kernel refusals are in st->error. */
int advise_pass(const struct selection *sel, struct advise_stats *st);

/* The same on an open /proc/self/maps (read again from its start). */
int advise_pass_fd(const struct selection *sel, int maps_fd, struct advise_stats *st);

/*
 * A mapping the program just made with mmap(ADDR, LEN, ..., FLAGS, FD):
 * advised at once when the selection chooses it, unless the program changed
 * it again after change number SINCE (layout.h).  Never allocates.
 * Returns 0 (done or not chosen) or the errno madvise gave.
 */
int advise_new_mapping(const struct selection *sel, void *addr, size_t len, int flags, int fd,
		       unsigned long since);

/*
 * The program named [ADDR, ADDR+LEN) (NAME NULL: cleared the name).  A
 * region the selection now chooses is advised; one that the deny list
 * names is made unmergeable again.  Returns 0 or madvise's errno.
 */
int advise_renamed(const struct selection *sel, void *addr, size_t len, const char *name);

#endif
