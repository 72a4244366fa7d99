/* groups.c - the KSM figures of the machine's processes, summed per cgroup. */
#include <dirent.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/cgtrust.h"
#include "common/files.h"
#include "common/human.h"
#include "common/jsonw.h"
#include "common/known.h"
#include "common/ksmproc.h"
#include "common/parse.h"
#include "common/text.h"
#include "host/candidate.h"
#include "host/groups.h"

/* Is WORD one of the comma-separated names of LIST? */
static bool in_list(const char *list, size_t len, const char *word)
{
	size_t w = strlen(word);

	for (const char *p = list, *end = list + len; p < end;) {
		const char *comma = memchr(p, ',', (size_t)(end - p));
		size_t n = comma ? (size_t)(comma - p) : (size_t)(end - p);
		if (n == w && !memcmp(p, word, w))
			return true;
		p += n + 1;
	}
	return false;
}

int cgroup_of_text(char *text, char *out, size_t len)
{
	const char *v2 = NULL, *memory = NULL;
	char *save = NULL;

	for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
		if (!c2 || c2[1] != '/')
			continue;
		if (c2 == c1 + 1 && c1 - line == 1 && line[0] == '0')
			v2 = c2 + 1;
		else if (in_list(c1 + 1, (size_t)(c2 - c1 - 1), "memory"))
			memory = c2 + 1;
	}
	if (!memory)
		memory = v2;
	if (!memory || strlen(memory) >= len)
		return -1;
	snprintf(out, len, "%s", memory);
	return 0;
}

/* FNV-1a of the path: the index's hash. */
static size_t path_hash(const char *s)
{
	unsigned long long h = 14695981039346656037ULL;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 1099511628211ULL;
	return (size_t)h;
}

/* Room in the index for one more group, at most half full; false out of memory. */
static bool index_room(struct cgroup_groups *gs)
{
	size_t nslots, mask;
	int *slot;

	if (2 * (gs->n + 1) <= gs->nslots)
		return true;
	nslots = gs->nslots ? 2 * (size_t)gs->nslots : 64;
	if (nslots > INT_MAX || !(slot = calloc(nslots, sizeof *slot)))
		return false;
	mask = nslots - 1;
	for (int i = 0; i < gs->n; i++) {
		size_t h = path_hash(gs->g[i].path) & mask;
		while (slot[h])
			h = (h + 1) & mask;
		slot[h] = i + 1;
	}
	free(gs->slot);
	gs->slot = slot;
	gs->nslots = (int)nslots;
	return true;
}

/*
 * The group named PATH, made if new; NULL out of memory.  By the index,
 * not a search: a machine of 10,000 cgroups made each collect 50 million
 * comparisons of paths (issue 27).
 */
static struct cgroup_group *group_of(struct cgroup_groups *gs, const char *path)
{
	struct cgroup_group *g;
	size_t h, mask;

	if (gs->last < gs->n && !strcmp(gs->g[gs->last].path, path))
		return &gs->g[gs->last];
	if (!index_room(gs))
		return NULL;
	mask = (size_t)gs->nslots - 1;
	for (h = path_hash(path) & mask; gs->slot[h]; h = (h + 1) & mask)
		if (!strcmp(gs->g[gs->slot[h] - 1].path, path))
			return &gs->g[gs->last = gs->slot[h] - 1];
	if (gs->n == gs->cap) {
		int cap = gs->cap ? gs->cap * 2 : 32;
		struct cgroup_group *ng = realloc(gs->g, (size_t)cap * sizeof *ng);
		if (!ng)
			return NULL;
		gs->g = ng;
		gs->cap = cap;
	}
	g = &gs->g[gs->n];
	memset(g, 0, sizeof *g);
	g->profit_bytes = LLONG_MIN;    /* a kernel without ksm_process_profit: unknown */
	if (!(g->path = strdup(path)))
		return NULL;
	gs->slot[h] = gs->n + 1;
	gs->last = gs->n++;
	return g;
}

static int cmp_group(const void *a, const void *b)
{
	const struct cgroup_group *x = a, *y = b;

	if (x->merged_pages != y->merged_pages)
		return (y->merged_pages > x->merged_pages) - (y->merged_pages < x->merged_pages);
	if (x->candidate_pages != y->candidate_pages)
		return (y->candidate_pages > x->candidate_pages) - (y->candidate_pages < x->candidate_pages);
	return strcmp(x->path, y->path);
}

void groups_init(struct cgroup_groups *gs)
{
	memset(gs, 0, sizeof *gs);
	gs->profit_bytes = LLONG_MIN;
}

void groups_add(struct cgroup_groups *gs, const char *path, const struct ksmenable_stat *st,
		long long candidate_pages)
{
	struct cgroup_group *g;

	gs->processes++;
	if (!(g = group_of(gs, path))) {
		gs->dropped++;
		return;
	}
	g->procs++;
	if (st->merging_pages > 0) {
		g->merged_pages += st->merging_pages;
		gs->merged_pages += st->merging_pages;
	}
	known_add(&g->profit_bytes, known_of_stat(st->process_profit));
	known_add(&gs->profit_bytes, known_of_stat(st->process_profit));
	g->candidate_pages += candidate_pages;
}

int groups_listed(const struct cgroup_groups *gs)
{
	return gs->n < GROUPS_LISTED_MAX ? gs->n : GROUPS_LISTED_MAX;
}

/* Leaves out the groups with nothing merged and no candidate memory. */
void groups_end(struct cgroup_groups *gs)
{
	int k = 0;

	/* The index holds the places before the groups move. */
	free(gs->slot);
	gs->slot = NULL;
	gs->nslots = 0;
	for (int i = 0; i < gs->n; i++) {
		if (gs->g[i].merged_pages > 0 || gs->g[i].candidate_pages > 0)
			gs->g[k++] = gs->g[i];
		else
			free(gs->g[i].path);
	}
	gs->n = k;
	if (k)
		qsort(gs->g, (size_t)k, sizeof *gs->g, cmp_group);
	/*
	 * What each names, checked against its cgroups' owners once (an lstat
	 * a component), for those that are written only.
	 */
	for (int i = 0; i < groups_listed(gs); i++)
		cg_name_of(gs->g[i].path, &gs->g[i].names);
}

int groups_collect(struct cgroup_groups *gs)
{
	long long page = sysconf(_SC_PAGESIZE), pid;
	DIR *d = opendir("/proc");
	struct dirent *e;

	groups_init(gs);
	if (!d)
		return -1;
	while ((e = readdir(d))) {
		struct ksmenable_stat st;
		char path[64], text[8192], cg[4096];

		if (parse_ll(e->d_name, 1, INT_MAX, &pid))
			continue;
		if (ksm_proc_stat((pid_t)pid, &st)) {
			gs->unreadable++;
			continue;
		}
		snprintf(path, sizeof path, "/proc/%lld/cgroup", pid);
		if (read_text(path, text, sizeof text) || cgroup_of_text(text, cg, sizeof cg)) {
			gs->unreadable++;
			continue;
		}
		groups_add(gs, cg, &st, candidate_process_kb((pid_t)pid, &st) * 1024 / page);
	}
	closedir(d);
	groups_end(gs);
	return 0;
}

void groups_free(struct cgroup_groups *gs)
{
	for (int i = 0; i < gs->n; i++)
		free(gs->g[i].path);
	free(gs->g);
	free(gs->slot);
	memset(gs, 0, sizeof *gs);
}

void groups_text(FILE *f, const struct cgroup_groups *gs, long long general_profit, int max_rows)
{
	long long page = sysconf(_SC_PAGESIZE);

	if (!gs->n) {
		fprintf(f, "  no cgroup with merged pages or candidate memory%s\n",
			geteuid() ? " readable (other users' ksm_stat needs root)" : "");
		return;
	}
	fprintf(f, "  %-44s %6s %12s %12s %12s\n", "CGROUP", "PROCS", "MERGED", "PROFIT", "CANDIDATE");
	for (int i = 0; i < gs->n && i < max_rows; i++) {
		const struct cgroup_group *g = &gs->g[i];
		char names[160];

		fprintf(f, "  %-44s %6d %12s %12s %12s\n", printable(g->path), g->procs,
			human_bytes(g->merged_pages * page, false), human_bytes(g->profit_bytes, false),
			human_bytes(g->candidate_pages * page, false));
		/* A pod's path is long and its names hidden in it: said below the row. */
		if (*cg_name_text(&g->names, names, sizeof names))
			fprintf(f, "    %s\n", names);
	}
	if (gs->n > max_rows)
		fprintf(f, "  (%d more)\n", gs->n - max_rows);
	fprintf(f, "  %-44s %6s %12s %12s\n", "sum", "", human_bytes(gs->merged_pages * page, false),
		human_bytes(gs->profit_bytes, false));
	if (gs->profit_bytes == LLONG_MIN)
		fprintf(f, "  general_profit system-wide: %s (PROFIT n/a: this kernel has no ksm_process_profit, "
			"Linux 6.4+)\n", human_bytes(general_profit, false));
	else
		fprintf(f, "  general_profit system-wide: %s (each process's profit counts the KSM pages it maps,\n"
			"   while the kernel keeps one copy: the sum of the profits can exceed general_profit)\n",
			human_bytes(general_profit, false));
}

void groups_json(struct jsonw *w, const struct cgroup_groups *gs)
{
	long long page = sysconf(_SC_PAGESIZE);

	if (!gs) {
		jw_null(w, "groups");
		jw_null(w, "groups_left_out");
		return;
	}
	jw_array(w, "groups");
	for (int i = 0; i < groups_listed(gs); i++) {
		const struct cgroup_group *g = &gs->g[i];

		jw_object(w, NULL);
		jw_string(w, "cgroup", g->path);
		/* Kubernetes' and the runtimes' names, for joins with kube_pod_info. */
		cg_name_members(w, &g->names);
		jw_ll(w, "processes", g->procs);
		jw_ll(w, "merged_bytes", g->merged_pages * page);
		jw_ll(w, "profit_bytes", g->profit_bytes);
		jw_ll(w, "candidate_bytes", g->candidate_pages * page);
		jw_end(w);
	}
	jw_end(w);
	jw_ll(w, "groups_left_out", gs->n - groups_listed(gs));
}
