/*
 * hugezero.h - which zero-filled pages that --estimate read lie inside
 * transparent huge pages, and whether this kernel frees them when ksmd
 * splits those (common/thpsplit.h).  Where it does, the prediction
 * (estimate_predict.c) counts them apart: a saving, but one that KSM never
 * counts.
 */
#ifndef KSMRUN_HUGEZERO_H
#define KSMRUN_HUGEZERO_H

#include "eval/estimate_predict.h"

/*
 * Marks in S->huge_zero the zero-filled records held by a transparent
 * huge page (as root, of any size: /proc/kpageflags KPF_THP of their
 * frame; without root, those a PMD maps whole: PAGEMAP_SCAN), and sets the
 * result's huge_zero_pages and split_frees_zero.  Where neither can tell,
 * huge_zero_pages is -1 and S->huge_zero stays NULL.
 */
void huge_zero_find(struct scan *s);

#endif
