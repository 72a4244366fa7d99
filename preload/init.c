/*
 * init.c - the constructor: read the settings once and apply the mode.
 *
 * Everything here keeps the host program running: no exit, no abort, nothing
 * on stdout, errno as it was.  A configuration error enables nothing.
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "library.h"

struct library lib;
static const struct selector_list no_selectors;


static const char *errno_name(int err)
{
	switch (err) {
	case EINVAL: return "EINVAL";
	case EPERM: return "EPERM";
	case EACCES: return "EACCES";
	case EAGAIN: return "EAGAIN";
	case ENOMEM: return "ENOMEM";
	case ENOSYS: return "ENOSYS";
	default: return "error";
	}
}

void library_kernel_error(int err, const char *what)
{
	int bit = err < 31 ? 1 << err : 1 << 31, fatal = 0;
	const char *why;

	switch (err) {
	case EINVAL:
	case ENOSYS:
		why = "the kernel has no KSM (CONFIG_KSM), or not this interface";
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
		why = strerror(err);
		break;
	}
	if (fatal) {
		lib.watching = 0;
		lib.applied = APPLIED_NONE;
		lib.error = why;
	}
	if (lib.reported_errors & bit)
		return;
	lib.reported_errors |= bit;
	log_warn("%s: %s (%s)%s", what, errno_name(err), why,
		 fatal ? "; KSM stays off for this process" : "");
}

void library_pass(void)
{
	struct advise_stats st;

	if (advise_pass(&lib.sel, &st) < 0) {
		if (!(lib.reported_errors & 1)) {
			lib.reported_errors |= 1;
			log_warn("cannot read /proc/self/maps (%s): regions stay as they are",
				 strerror(errno));
		}
		return;
	}
	lib.last = st;
	lib.passes++;
	log_debug("pass %lu: %lu regions, %llu bytes, %lu madvise calls",
		  lib.passes, st.regions, st.bytes, st.calls);
	if (st.error)
		library_kernel_error(st.error, "madvise(MADV_MERGEABLE)");
}

static long process_merge(int on)
{
	return syscall(SYS_prctl, PR_SET_MEMORY_MERGE, (unsigned long)on, 0UL, 0UL, 0UL);
}

static const char *own_basename(void)
{
	Dl_info info;
	const char *slash;

	if (!dladdr((void *)own_basename, &info) || !info.dli_fname)
		return "libksmenable.so";
	slash = strrchr(info.dli_fname, '/');
	return slash ? slash + 1 : info.dli_fname;
}

/* LD_PRELOAD entries are separated by spaces or colons. */
static int entry_is_us(const char *entry, size_t len, const char *base)
{
	size_t blen = strlen(base);

	return len >= blen && !memcmp(entry + len - blen, base, blen) &&
	       (len == blen || entry[len - blen - 1] == '/');
}

static int preloaded(void)
{
	const char *p = getenv("LD_PRELOAD"), *base = own_basename();
	size_t len;

	for (; p && *p; p += len) {
		p += strspn(p, " :");
		len = strcspn(p, " :");
		if (len && entry_is_us(p, len, base))
			return 1;
	}
	return 0;
}

/* KSM_ENABLE_INHERIT=0: programs this process executes do not load us. */
static void drop_from_ld_preload(void)
{
	char kept[4096];         /* setenv copies it */
	const char *p = getenv("LD_PRELOAD"), *base = own_basename();
	size_t len, used = 0;

	if (!p || strlen(p) >= sizeof kept)
		return;
	for (; *p; p += len) {
		p += strspn(p, " :");
		len = strcspn(p, " :");
		if (!len || entry_is_us(p, len, base))
			continue;
		if (used)
			kept[used++] = ' ';
		memcpy(kept + used, p, len);
		used += len;
	}
	kept[used] = '\0';
	if (used)
		setenv("LD_PRELOAD", kept, 1);
	else
		unsetenv("LD_PRELOAD");
}

static void start_madvise(void)
{
	/* An inherited process-wide flag would merge what the lists exclude. */
	if (syscall(SYS_prctl, PR_GET_MEMORY_MERGE, 0UL, 0UL, 0UL, 0UL) == 1) {
		log_info("clearing the process-wide KSM flag inherited from the parent");
		if (process_merge(0)) {
			/* Everything stays mergeable: the lists cannot be honoured. */
			library_kernel_error(errno, "prctl(PR_SET_MEMORY_MERGE, 0)");
			return;
		}
	}
	lib.sel.allow = lib.cfg.allow ? lib.cfg.allow : &selector_all;
	lib.sel.deny = lib.cfg.deny ? lib.cfg.deny : &no_selectors;
	lib.sel.min_size = lib.cfg.min_size;
	lib.applied = APPLIED_MADVISE;
	lib.watching = 1;
	library_pass();
	if (!lib.watching)
		return;
	log_info("madvise mode: %lu regions, %llu bytes advised; rescan every %ld ms",
		 lib.last.regions, lib.last.bytes, lib.cfg.rescan_ms);
	pthread_atfork(NULL, NULL, rescan_after_fork_child);
	rescan_start();
}

static void apply_mode(void)
{
	int lists = lib.cfg.allow_set || lib.cfg.deny_set || lib.cfg.min_size_set;

	switch (lib.cfg.mode) {
	case MODE_OFF:
		lib.applied = APPLIED_OFF;
		return;
	case MODE_MADVISE:
		start_madvise();
		return;
	case MODE_AUTO:
		if (lists) {
			start_madvise();
			return;
		}
		/* fall through */
	case MODE_PRCTL:
		if (process_merge(1) == 0) {
			lib.applied = APPLIED_PRCTL;
			log_info("prctl mode: all compatible memory of this process is mergeable");
			return;
		}
		if (errno == EINVAL && lib.cfg.mode == MODE_AUTO) {
			log_info("no PR_SET_MEMORY_MERGE (kernel before 6.4): madvise instead");
			start_madvise();
			return;
		}
		library_kernel_error(errno, "prctl(PR_SET_MEMORY_MERGE)");
		return;
	}
}

__attribute__((constructor)) static void ksmenable_init(void)
{
	char err[1024];
	int saved_errno = errno, acting;

	/* setuid, setgid, file capabilities: the environment is not trusted. */
	if (getauxval(AT_SECURE)) {
		lib.error = "secure execution";
		goto out;
	}
	if (config_load(&lib.cfg, getenv, err, sizeof err)) {
		log_threshold = lib.cfg.log;
		log_error("%s; KSM is not enabled", err);
		lib.error = "configuration";
		goto out;
	}
	log_threshold = lib.cfg.log;
	/* A program that links the library chooses through the API. */
	acting = lib.cfg.mode_set || preloaded();
	if (!lib.cfg.inherit)
		drop_from_ld_preload();
	if (acting)
		apply_mode();
	else
		lib.applied = APPLIED_OFF;
out:
	errno = saved_errno;
}

__attribute__((destructor)) static void ksmenable_fini(void)
{
	int saved_errno = errno;

	/* The thread runs the library's code: it must end before an unload. */
	rescan_stop();
	if (lib.cfg.report_path)
		report_write();
	errno = saved_errno;
}
