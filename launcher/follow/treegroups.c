/*
 * treegroups.c - the command's processes per cgroup, for the report: a
 * service's unit or a container, as groups.c names them host-wide.  Each
 * process's group is read when the sampler first sees it (tree.c); its
 * peaks are summed, so the profits count the kept copy, as the table's.
 */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "common/cgtrust.h"
#include "common/human.h"
#include "common/jsonw.h"
#include "common/known.h"
#include "common/text.h"
#include "follow/treegroups.h"

/* Up to MAX distinct groups of the tree into G; returns how many. */
#define REPORT_GROUPS 32
struct tree_group {
	const char *path;
	int procs;
	long long merged, profit;
};

static int tree_groups(const struct sampler *s, struct tree_group *g, int max)
{
	int n = 0, k;

	for (int i = 0; i < s->nprocs; i++) {
		const struct proc_info *p = &s->procs[i];
		const char *path = p->cgroup ? p->cgroup : "(unknown)";

		for (k = 0; k < n && strcmp(g[k].path, path); k++)
			;
		if (k == n) {
			if (n == max)
				continue;
			g[n++] = (struct tree_group){ .path = path, .profit = LLONG_MIN };
		}
		g[k].procs++;
		g[k].merged += p->peak_merging;
		known_add(&g[k].profit, p->peak_profit);
	}
	return n;
}

void tree_groups_text(FILE *f, const struct sampler *s, long long page)
{
	struct tree_group g[REPORT_GROUPS];
	int n = tree_groups(s, g, REPORT_GROUPS);

	if (n < 2 && !(n == 1 && s->nprocs && s->procs[0].cgroup))
		return;
	fputs("  per cgroup (the command's processes; peaks summed):\n", f);
	for (int i = 0; i < n; i++) {
		char names[160];

		fprintf(f, "    %5d %12s %12s  %s\n", g[i].procs, human_bytes(g[i].merged * page, false),
			human_bytes(g[i].profit, false), printable(g[i].path));
		if (*cg_name_summary(g[i].path, names, sizeof names))
			fprintf(f, "          %s\n", names);
	}
}

void tree_groups_json(struct jsonw *w, const struct sampler *s, long long page)
{
	struct tree_group g[REPORT_GROUPS];
	int n = tree_groups(s, g, REPORT_GROUPS);

	jw_array(w, "cgroups");
	for (int i = 0; i < n; i++) {
		jw_object(w, NULL);
		jw_string(w, "cgroup", g[i].path);
		cg_name_json(w, g[i].path);     /* as --status and the metrics name them */
		jw_ll(w, "processes", g[i].procs);
		jw_ll(w, "peak_merged_bytes", g[i].merged * page);
		jw_ll(w, "peak_profit_bytes", g[i].profit);
		jw_end(w);
	}
	jw_end(w);
}

