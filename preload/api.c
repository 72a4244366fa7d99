/* api.c - the public API of include/ksmenable.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "ksmenable.h"
#include "ksmstat.h"
#include "library.h"

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
	return syscall(SYS_prctl, PR_SET_MEMORY_MERGE, (unsigned long)on, 0UL, 0UL, 0UL) ? -1 : 0;
}

static long long read_number_file(const char *path)
{
	char buf[64];
	long long v = -1;
	FILE *f = fopen(path, "re");

	if (f) {
		if (!fgets(buf, sizeof buf, f) || sscanf(buf, "%lld", &v) != 1)
			v = -1;
		fclose(f);
	}
	return v;
}

EXPORT int ksmenable_read_stat(struct ksmenable_stat *st)
{
	char text[1024], *cursor = text;
	const char *name, *value;
	int have_stat;

	st->rmap_items = st->merging_pages = st->zero_pages = st->process_profit = -1;
	st->merge_any = st->mergeable = -1;
	have_stat = ksm_stat_read(text, sizeof text) == 0;
	while (have_stat && ksm_stat_next(&cursor, &name, &value)) {
		long long v = strtoll(value, NULL, 10);
		int yes = !strcmp(value, "yes");
		if (!strcmp(name, "ksm_rmap_items"))
			st->rmap_items = v;
		else if (!strcmp(name, "ksm_merging_pages"))
			st->merging_pages = v;
		else if (!strcmp(name, "ksm_zero_pages"))
			st->zero_pages = v;
		else if (!strcmp(name, "ksm_process_profit"))
			st->process_profit = v;
		else if (!strcmp(name, "ksm_merge_any"))
			st->merge_any = yes;
		else if (!strcmp(name, "ksm_mergeable"))
			st->mergeable = yes;
	}
	/* Kernels 6.0 to 6.1 have only this file. */
	if (st->merging_pages < 0)
		st->merging_pages = read_number_file("/proc/self/ksm_merging_pages");
	if (!have_stat && st->merging_pages < 0) {
		errno = ENOENT;
		return -1;
	}
	return 0;
}

EXPORT const char *ksmenable_version(void)
{
	return KSMENABLE_VERSION;
}
