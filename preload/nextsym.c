/*
 * nextsym.c - looking up the wrapped libc functions lazily.
 *
 * On first use rather than in the constructor: dlsym costs a few
 * microseconds that a program which never calls these functions should not
 * pay at start.  The exceptions are the calls allocators make
 * (interpose_bind_early, nextsym.h): their first lookup would allocate
 * inside the allocator.  The guard is per thread: a thread that finds another one
 * resolving waits for nothing and looks the symbol up itself (threads
 * racing here store the same value), so only a lookup that comes back into
 * the library on its own thread gets NULL.
 */
#include <dlfcn.h>
#include <string.h>

#include "nextsym.h"

static __thread int resolving __attribute__((tls_model("initial-exec")));

void *next_symbol(void *volatile *slot, const char *name)
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
