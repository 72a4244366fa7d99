/* api.c - the public API of include/ksmenable.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "ksmenable.h"
#include "ksmstat.h"
#include "guard.h"
#include "layout.h"
#include "library.h"
#include "log.h"
#include "marks.h"
#include "readfile.h"

EXPORT int ksmenable_apply(const char *allow, const char *deny)
{
	struct selector_list allow_list, deny_list;   /* ~9 KiB of stack */
	struct selection sel = { &allow_list, &deny_list, 0 };
	struct advise_stats st;
	char err[512];

	if (selector_parse(&allow_list, allow && *allow ? allow : "all", err, sizeof err) ||
	    (deny && *deny ? selector_parse(&deny_list, deny, err, sizeof err)
			   : (deny_list.count = 0, 0))) {
		log_error("ksmenable_apply: %s", err);
		errno = EINVAL;
		return -1;
	}
	if (marks_full()) {
		errno = ENOSPC;       /* see marks.h: nothing new is advised */
		return -1;
	}
	guard_enable(selector_has(&allow_list, SEL_SECRET));
	layout_track(1);
	if (advise_pass(&sel, &st) < 0)
		return -1;
	if (st.error) {
		errno = st.error;
		return -1;
	}
	return (int)st.regions;
}

EXPORT int ksmenable_set_process_merge(int on)
{
	if (on != 0 && on != 1) {
		errno = EINVAL;
		return -1;
	}
	if (on && !guard_active())
		guard_enable(0);
	return library_process_merge(on);
}

EXPORT int ksmenable_read_stat(struct ksmenable_stat *st)
{
	/* ksm_stat, or the merged pages beside it on the kernels before it (5.19, 6.0). */
	if (ksm_stat_parse("/proc/self/ksm_stat", st)) {
		errno = ENOENT;
		return -1;
	}
	return 0;
}

EXPORT const char *ksmenable_version(void)
{
	return KSMENABLE_VERSION;
}
