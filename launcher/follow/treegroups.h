/*
 * treegroups.h - the command's processes per cgroup, in the report
 * (treegroups.c).
 */
#ifndef KSMRUN_TREEGROUPS_H
#define KSMRUN_TREEGROUPS_H

#include <stdio.h>

#include "follow/tree.h"

/* The text lines (none when the whole tree is in one unknown group). */
void tree_groups_text(FILE *f, const struct sampler *s, long long page);
struct jsonw;
/* The member "cgroups": [{cgroup, processes, peak_merged_bytes, peak_profit_bytes}]. */
void tree_groups_json(struct jsonw *w, const struct sampler *s, long long page);

#endif
