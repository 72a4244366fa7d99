/*
 * library.c - the library's state in this process, and the two things
 * every part of it does with that state: run an advise pass, and take a
 * kernel refusal in.
 *
 * Nothing here calls strerror: for an errno it does not know, glibc's
 * allocates, and these run inside interposed calls.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "guard.h"
#include "library.h"
#include "log.h"

struct library lib;

/* The symbolic name of ERR, or "errno N" in BUF. */
static const char *errno_name(int err, char *buf, size_t len)
{
	switch (err) {
	case EINVAL: return "EINVAL";
	case EPERM: return "EPERM";
	case EACCES: return "EACCES";
	case EAGAIN: return "EAGAIN";
	case ENOMEM: return "ENOMEM";
	case ENOSYS: return "ENOSYS";
	case EFAULT: return "EFAULT";
	case ENOENT: return "ENOENT";
	case EMFILE: return "EMFILE";
	default: snprintf(buf, len, "errno %d", err); return buf;
	}
}

/*
 * One bit per kind of error, so that each is said once, also when two
 * threads meet it at once: the bit is set and tested in one atomic step
 * (relaxed: it orders nothing else).
 */
static int first_time(int err)
{
	unsigned long bit = 1UL << ((unsigned)err % (8 * sizeof bit));

	return !(__atomic_fetch_or(&lib.reported_errors, bit, __ATOMIC_RELAXED) & bit);
}

/* Does the kernel have KSM at all?  Tells "no KSM" from "not this interface" (errno kept). */
static int ksm_in_kernel(void)
{
	int saved = errno, r = access(KSM_SYSFS_DIR "/run", F_OK) == 0;

	errno = saved;
	return r;
}

void library_kernel_error(int err, const char *what)
{
	int fatal = 0;
	const char *why;
	char num[24];

	switch (err) {
	case EINVAL:
	case ENOSYS:
		why = ksm_in_kernel() ? (!strncmp(what, "prctl", 5) ?
			"this kernel has KSM, but no PR_SET_MEMORY_MERGE (Linux 6.4+): "
			"KSM_ENABLE_MODE=auto or madvise advises the regions instead" :
			"this kernel has KSM, but refused the call") :
			"the kernel has no KSM (no " KSM_SYSFS_DIR ": CONFIG_KSM)";
		fatal = 1;
		break;
	case EPERM:
	case EACCES:
		why = "refused, probably by a seccomp policy";
		fatal = 1;
		break;
	case EAGAIN:
		why = "out of memory or at vm.max_map_count; some regions stay unmergeable";
		break;
	default:
		why = "unexpected";
		break;
	}
	if (fatal) {
		library_set_watching(0);
		lib.applied = APPLIED_NONE;
		lib.error = why;
	}
	if (!first_time(err))
		return;
	log_warn("%s: %s (%s)%s", what, errno_name(err, num, sizeof num), why,
		 fatal ? "; KSM stays off for this process" : "");
}

static void record_pass(const struct advise_stats *st)
{
	lib.last = *st;
	lib.passes++;
	log_debug("pass %lu: %lu regions, %llu bytes, %lu madvise calls",
		  lib.passes, st->regions, st->bytes, st->calls);
	if (st->error)
		library_kernel_error(st->error, "madvise(MADV_MERGEABLE)");
}

void library_pass(void)
{
	struct advise_stats st;
	char num[24];

	if (advise_pass(&lib.sel, &st) < 0) {
		/* errno 0 is no kernel error: its bit marks this warning. */
		if (first_time(0))
			log_warn("cannot read /proc/self/maps (%s): regions stay as they are",
				 errno_name(errno, num, sizeof num));
		return;
	}
	record_pass(&st);
}

void library_pass_fd(int maps_fd)
{
	struct advise_stats st;
	char num[24];

	if (advise_pass_fd(&lib.sel, maps_fd, &st) < 0) {
		if (first_time(0))
			log_warn("cannot read /proc/self/maps (%s): regions stay as they are",
				 errno_name(errno, num, sizeof num));
		return;
	}
	record_pass(&st);
}

int library_process_merge(int on)
{
	if (syscall(SYS_prctl, PR_SET_MEMORY_MERGE, (unsigned long)on, 0UL, 0UL, 0UL))
		return -1;
	/* The kernel just made every compatible VMA mergeable, kept-out ones too. */
	if (on)
		guard_after_process_merge();
	return 0;
}
