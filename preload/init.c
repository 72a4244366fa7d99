/*
 * init.c - the constructor: read the settings once and apply what they ask
 * for (config_coverage); the destructor: stop the thread, write the report.
 *
 * Everything here keeps the host program running: no exit, no abort, nothing
 * on stdout, errno as it was.  A configuration error enables nothing.
 */
#include <errno.h>
#include <pthread.h>
#include <sys/auxv.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "guard.h"
#include "layout.h"
#include "ldpreload.h"
#include "library.h"
#include "log.h"
#include "marks.h"
#include "nextsym.h"
#include "owner.h"
#include "report.h"
#include "rescan.h"


extern char **environ;

/* One line for a KSM_ENABLE_* name the library does not know: a typo must not pass unseen. */
static void unknown_variable(void *ctx, const char *name, size_t len, const char *nearest)
{
	enum log_level level = *(const int *)ctx ? LOG_ERROR : LOG_WARN;

	if (nearest)
		log_msg(level, "%.*s is not a variable of the library (did you mean %s?)", (int)len, name, nearest);
	else
		log_msg(level, "%.*s is not a variable of the library (see libksmenable(7))", (int)len, name);
}

static void start_madvise(void)
{
	/* An inherited process-wide flag would merge what the lists exclude. */
	if (syscall(SYS_prctl, PR_GET_MEMORY_MERGE, 0UL, 0UL, 0UL, 0UL) == 1) {
		log_info("clearing the process-wide KSM flag inherited from the parent");
		if (library_process_merge(0)) {
			/* Everything stays mergeable: the lists cannot be honoured. */
			library_kernel_error(errno, "prctl(PR_SET_MEMORY_MERGE, 0)");
			return;
		}
	}
	selection_of_config(&lib.sel, &lib.cfg);
	lib.applied = APPLIED_MADVISE;
	library_set_watching(1);
	layout_track(1);
	guard_enable(selector_has(lib.cfg.allow, SEL_SECRET));
	library_pass();
	if (!library_watching())
		return;
	log_info("madvise mode: %lu regions, %llu bytes advised; rescan every %ld ms",
		 lib.last.regions, lib.last.bytes, lib.cfg.rescan_ms);
	rescan_start();
}

static void apply_mode(void)
{
	switch (config_coverage(&lib.cfg)) {
	case COVER_NOTHING:
		lib.applied = APPLIED_OFF;
		return;
	case COVER_SELECTION:
		start_madvise();
		return;
	case COVER_PROCESS:
		lib.applied = APPLIED_PRCTL;
		guard_enable(selector_has(lib.cfg.allow, SEL_SECRET));
		if (library_process_merge(1) == 0) {
			log_info("prctl mode: all compatible memory of this process is mergeable");
			return;
		}
		lib.applied = APPLIED_NONE;
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

	/* The library's locks are this process's; across fork, in every mode, the child's. */
	owner_is_self();
	pthread_atfork(marks_atfork_prepare, marks_atfork_parent, marks_atfork_child);
	pthread_atfork(layout_atfork_prepare, layout_atfork_parent, layout_atfork_child);
	pthread_atfork(rescan_before_fork, NULL, rescan_after_fork_child);
	interpose_bind_early();
	log_init();
	/* setuid, setgid, file capabilities: the environment is not trusted. */
	if (getauxval(AT_SECURE)) {
		lib.error = "secure execution";
		goto out;
	}
	if (config_load(&lib.cfg, &config_from_environment, err, sizeof err)) {
		log_threshold = lib.cfg.log;
		log_error("%s; KSM is not enabled", err);
		lib.error = "configuration";
		goto out;
	}
	log_threshold = lib.cfg.log;
	if (config_unknown_variables(environ, unknown_variable, &lib.cfg.strict) && lib.cfg.strict) {
		log_error("KSM_ENABLE_STRICT=1: KSM is not enabled");
		lib.error = "configuration";
		goto out;
	}
	/* A program that links the library chooses through the API. */
	acting = lib.cfg.mode_set || ldpreload_has_us();
	if (!lib.cfg.inherit && ldpreload_drop_us())
		log_warn("KSM_ENABLE_INHERIT=0: cannot remove the library from LD_PRELOAD "
			 "(out of memory): the programs this one runs load it too");
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
