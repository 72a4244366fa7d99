/* topprocs.c - the processes with the most merged pages (topprocs.h). */
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

#include "common/files.h"
#include "common/known.h"
#include "common/ksmproc.h"
#include "common/parse.h"
#include "host/topprocs.h"

static int cmp_top(const void *a, const void *b)
{
	const struct top_process *x = a, *y = b;

	return (y->merging > x->merging) - (y->merging < x->merging);
}

int top_processes_collect(struct top_process **out)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	struct top_process *t = NULL;
	int n = 0, cap = 0;

	*out = NULL;
	if (!d)
		return 0;
	while ((e = readdir(d))) {
		struct ksmenable_stat st;
		char path[64];
		long long pid;

		if (parse_ll(e->d_name, 1, INT_MAX, &pid))
			continue;
		if (ksm_proc_stat((pid_t)pid, &st) || st.merging_pages <= 0)
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 32;
			struct top_process *nt = realloc(t, (size_t)cap * sizeof *t);
			if (!nt)
				break;
			t = nt;
		}
		t[n].pid = (int)pid;
		t[n].merging = st.merging_pages;
		t[n].profit = known_of_stat(st.process_profit);
		snprintf(path, sizeof path, "/proc/%lld/comm", pid);
		if (read_text(path, t[n].comm, sizeof t[n].comm))
			snprintf(t[n].comm, sizeof t[n].comm, "?");
		n++;
	}
	closedir(d);
	/* With no process listed t is NULL, and qsort(NULL, 0, ...) is undefined
	 * (its pointer must be valid even for no elements; UBSan's nonnull check). */
	if (n)
		qsort(t, (size_t)n, sizeof *t, cmp_top);
	*out = t;
	return n;
}
