/*
 * profile.c - ksm-run --profile: which region classes of a command merge.
 *
 * While the command runs with all of its memory mergeable, every sample
 * reads /proc/PID/smaps of each process in its tree and adds up, per
 * region class, the candidate anonymous memory (smaps Anonymous:, what
 * ksmd has to scan) and the memory merged (smaps KSM:, or on kernels
 * without that line, before 6.6, the region's KSM page frames, as root).
 * The peak of each over the run is kept.  At the end the classes that hold the merged
 * memory become a recommended allow list: the fewest classes that keep the
 * threshold share of it, largest first; what they leave out is ksmd's scan
 * work saved.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/human.h"
#include "common/jsonw.h"
#include "common/kfeature.h"
#include "common/msg.h"
#include "common/text.h"
#include "eval/profile.h"
#include "eval/regionclass.h"
#include "maps.h"

/*
 * The class NAME, made if new.  --profile samples while the command runs,
 * when ksm-run must not bail out (msg.h): out of memory, the class is not
 * followed (NULL), and the report says the profile is incomplete.
 */
static struct profile_class *class_for(struct profile *p, const char *name)
{
	struct profile_class *c;
	size_t i;

	for (i = 0; i < p->n; i++)
		if (!strcmp(p->c[i].name, name))
			return &p->c[i];
	if (!(c = realloc(p->c, (p->n + 1) * sizeof *p->c))) {
		p->incomplete = 1;
		return NULL;
	}
	p->c = c;
	if (!(p->c[p->n].name = strdup(name))) {
		p->incomplete = 1;
		return NULL;
	}
	p->c[p->n].cand_kb = p->c[p->n].merged_kb = 0;
	p->c[p->n].tick_cand = p->c[p->n].tick_merged = 0;
	p->c[p->n].procs = p->c[p->n].tick_procs = 0;
	p->c[p->n].tick_pid = 0;
	return &p->c[p->n++];
}

struct visit {
	struct profile *p;
	pid_t pid;
	int pagemap;                    /* its /proc/PID/pagemap, when counting by frame */
};

/* The KiB of R merged: smaps says, or its frames are counted (where it can hold KSM pages). */
static long long merged_kb(struct visit *v, const struct region *r)
{
	if (!v->p->by_frames)
		return r->ksm_kb > 0 ? r->ksm_kb : 0;
	if (v->pagemap < 0 || (r->ksm_kb <= 0 && r->mergeable != 1))
		return 0;
	return kpages_in_range(&v->p->frames, v->pagemap, r->start, r->end) * (sysconf(_SC_PAGESIZE) / 1024);
}

static int visit(const struct region *r, void *arg)
{
	struct visit *v = arg;
	struct profile_class *c;
	char name[4200];

	if (!region_selected(&v->p->sel, r) || r->anon_kb <= 0)
		return 0;
	region_class_name(r, name, sizeof name);
	if (!(c = class_for(v->p, name)))
		return 0;
	c->tick_cand += r->anon_kb;
	c->tick_merged += merged_kb(v, r);
	if (c->tick_pid != v->pid) {
		c->tick_pid = v->pid;
		c->tick_procs++;
	}
	return 0;
}

void profile_init(struct profile *p, double threshold)
{
	char why[256];

	memset(p, 0, sizeof *p);
	p->threshold = threshold;
	selector_parse(&p->all, "all", why, sizeof why);
	p->none.count = 0;
	p->sel.allow = &p->all;
	p->sel.deny = &p->none;
	p->frames.kpageflags = -1;
	p->by_frames = !kfeature_present(KF_SMAPS_KSM) && kpages_open(&p->frames) == 0;
}

void profile_sample(struct profile *p, const pid_t *pids, size_t n)
{
	char path[64], buf[16384];
	struct visit v = { p, 0, -1 };
	size_t i;

	for (i = 0; i < p->n; i++) {
		p->c[i].tick_cand = p->c[i].tick_merged = 0;
		p->c[i].tick_procs = 0;
		p->c[i].tick_pid = 0;
	}
	for (i = 0; i < n; i++) {
		v.pid = pids[i];
		if (p->by_frames) {
			snprintf(path, sizeof path, "/proc/%d/pagemap", (int)pids[i]);
			v.pagemap = open(path, O_RDONLY | O_CLOEXEC);
		}
		snprintf(path, sizeof path, "/proc/%d/smaps", (int)pids[i]);
		maps_for_each(path, buf, sizeof buf, visit, &v);   /* gone: nothing */
		if (v.pagemap >= 0)
			close(v.pagemap);
		v.pagemap = -1;
	}
	for (i = 0; i < p->n; i++) {
		struct profile_class *c = &p->c[i];
		if (c->tick_merged > c->merged_kb)
			c->merged_kb = c->tick_merged;
		if (c->tick_cand > c->cand_kb)
			c->cand_kb = c->tick_cand;
		if (c->tick_procs > c->procs)
			c->procs = c->tick_procs;
	}
	p->samples++;
}

static int by_merged(const void *a, const void *b)
{
	const struct profile_class *x = a, *y = b;

	if (x->merged_kb != y->merged_kb)
		return (y->merged_kb > x->merged_kb) - (y->merged_kb < x->merged_kb);
	return (y->cand_kb > x->cand_kb) - (y->cand_kb < x->cand_kb);
}

/* Sorts the classes and works out the recommendation into P. */
static void recommend(struct profile *p)
{
	long long merged = 0, kept = 0, cand = 0, kept_cand = 0;
	size_t i, at = 0;

	if (p->n > 1)           /* p->c is NULL when no class was seen: qsort must not get it */
		qsort(p->c, p->n, sizeof *p->c, by_merged);
	for (i = 0; i < p->n; i++) {
		merged += p->c[i].merged_kb;
		cand += p->c[i].cand_kb;
	}
	p->recommended[0] = '\0';
	p->nrecommended = 0;
	for (i = 0; i < p->n && merged > 0 && kept * 100.0 < p->threshold * merged; i++) {
		char sel[4300];
		if (class_selector(p->c[i].name, sel, sizeof sel) < 0 ||
		    at + strlen(sel) + 2 > sizeof p->recommended)
			break;
		at += (size_t)snprintf(p->recommended + at, sizeof p->recommended - at, "%s%s",
				       at ? "," : "", sel);
		kept += p->c[i].merged_kb;
		kept_cand += p->c[i].cand_kb;
		p->nrecommended++;
	}
	p->total_merged_kb = merged;
	p->total_cand_kb = cand;
	p->kept_pct = merged ? 100.0 * kept / merged : 0;
	p->dropped_pct = cand ? 100.0 * (cand - kept_cand) / cand : 0;
}

void profile_finish(struct profile *p)
{
	if (p->by_frames)
		kpages_close(&p->frames);
	p->by_frames = false;
	recommend(p);
}

void profile_print(FILE *f, const struct profile *p)
{
	size_t i, never = 0, shown = 0, folded = 0;

	fprintf(f, "\nProfile by region class (peaks over %u samples):\n", p->samples);
	/* The class last and whole: two modules of one package differ only in the middle. */
	fprintf(f, "  %5s %12s %12s %7s  %s\n", "PROCS", "CANDIDATE", "MERGED", "RATIO", "CLASS");
	for (i = 0; i < p->n; i++) {
		const struct profile_class *c = &p->c[i];
		/* Classes that never merged are listed below, whole. */
		if (!c->merged_kb) {
			folded += c->cand_kb != 0;
			continue;
		}
		if (shown++ >= 40)
			continue;
		fprintf(f, "  %5u %12s %12s %6.1f%%  %s\n", c->procs, human_bytes(c->cand_kb * 1024, false),
			human_bytes(c->merged_kb * 1024, false), c->cand_kb ? 100.0 * c->merged_kb / c->cand_kb : 0.0,
			printable(c->name));
	}
	if (shown > 40)
		fprintf(f, "  (%zu more classes; --json lists all)\n", shown - 40);
	if (folded)
		fprintf(f, "  (%zu class%s that never merged: below)\n", folded, folded == 1 ? "" : "es");
	if (p->incomplete)
		fprintf(f, "  (incomplete: ksm-run ran out of memory and left classes out)\n");
	if (!p->nrecommended) {
		fprintf(f, "\nNothing merged while the command ran: no allow list to recommend.\n");
	} else {
		fprintf(f, "\nRecommended allow list: keeps %.1f%% of the merged memory (threshold %g%%) "
			"and drops %.1f%% of the candidate memory ksmd would scan:\n",
			p->kept_pct, p->threshold, p->dropped_pct);
		fprintf(f, "  KSM_ENABLE_ALLOW='%s'\n  ksm-run --allow='%s' -- COMMAND\n",
			printable(p->recommended), printable(p->recommended));
	}
	for (i = 0; i < p->n; i++) {
		const struct profile_class *c = &p->c[i];
		if (c->merged_kb || !c->cand_kb)
			continue;
		if (!never++)
			fprintf(f, "\nScanned but never merged (ksmd's work for nothing):\n");
		fprintf(f, "  %-44s %12s in %u process%s\n", printable(c->name), human_bytes(c->cand_kb * 1024, false),
			c->procs, c->procs == 1 ? "" : "es");
	}
}

void profile_json(struct jsonw *w, const struct profile *p)
{
	jw_object(w, "profile");
	jw_bool(w, "incomplete", p->incomplete);
	jw_ll(w, "samples", p->samples);
	jw_g(w, "threshold_percent", p->threshold);
	jw_ll(w, "candidate_kb", p->total_cand_kb);
	jw_ll(w, "merged_kb", p->total_merged_kb);
	jw_fixed(w, "kept_percent", p->kept_pct, 1, false);
	jw_fixed(w, "dropped_candidate_percent", p->dropped_pct, 1, false);
	jw_array(w, "classes");
	for (size_t i = 0; i < p->n; i++) {
		jw_object(w, NULL);
		jw_string(w, "class", p->c[i].name);
		jw_ll(w, "processes", p->c[i].procs);
		jw_ll(w, "candidate_kb", p->c[i].cand_kb);
		jw_ll(w, "merged_kb", p->c[i].merged_kb);
		jw_bool(w, "recommended", i < p->nrecommended);
		jw_end(w);
	}
	jw_end(w);
	jw_end(w);
	jw_string(w, "recommended_allow", p->recommended);
}
