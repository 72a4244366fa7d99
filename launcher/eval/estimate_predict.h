/*
 * estimate_predict.h - what the --estimate scan (estimate.c) hands to the
 * prediction (estimate_predict.c): one record per present page read.
 */
#ifndef KSMRUN_ESTIMATE_PREDICT_H
#define KSMRUN_ESTIMATE_PREDICT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "eval/contents.h"
#include "eval/estimate_result.h"
#include "kernel_abi.h"
#include "selection.h"
#include "selector.h"

#define BATCH_PAGES 256                 /* read and hashed together (1 MiB of 4 KiB pages) */
#define PAGEMAP_CHUNK 512               /* entries per pagemap read */
#define VOLATILE_HASH 0                 /* a record whose content changed */

struct record {
	uint64_t addr, hash;
	uint64_t pfn;                   /* 0 where pagemap hides PFNs (not root) */
};

struct region_rec {
	unsigned proc, cls;
	size_t first, n;
};

struct scan {
	struct selection sel;
	size_t page;                    /* the page size, sysconf(_SC_PAGESIZE) */
	struct record *recs;
	size_t nrec, rec_cap;
	struct region_rec *regs;
	size_t nregs, reg_cap;
	struct est_result *res;
	unsigned proc;                  /* index of the process being scanned */
	pid_t pid;
	int pagemap_fd, mem_fd;
	const char *fail;               /* why the current process failed */
	int pass;                       /* 0, or 1: the second pass of --settle */
	bool pagemap_scan;              /* the kernel answers PAGEMAP_SCAN (present.c) */
	uint64_t zero_hash, zero_pfn;
	unsigned char *huge_zero;       /* per record: a zero page in a huge page (hugezero.c), or NULL */
	char *buf;
	uint64_t batch_addr[BATCH_PAGES], batch_pfn[BATCH_PAGES];
	int nbatch;
	double start, last_progress;
	int progress;
	size_t *sample;                 /* the recheck's records (estimate_recheck.c), or NULL */
	unsigned char *sample_changed;  /* per sample: changed or gone since the pass */
	size_t nsample;
};

/* A page's content as the records keep it: all-zero pages as one hash,
 * and no page's hash equal to VOLATILE_HASH. */
static inline uint64_t scan_page_hash(const struct scan *s, const void *page)
{
	int zero;
	uint64_t h = page_hash(page, s->page, &zero);

	return zero ? s->zero_hash : h == VOLATILE_HASH ? 1 : h;
}

struct ksm_rule;
/* The kernel's accounting rule of the machine that was read. */
struct ksm_rule est_rule(const struct est_result *r);

/*
 * N mappings of one content whose first and last page frame (sorted) are
 * one frame that is not a KSM page (KPF, /proc/kpageflags): shared since a
 * fork, and never merged, since KSM does not merge a page with itself.
 */
bool frames_never_merge(int kpf, uint64_t n, uint64_t first_pfn, uint64_t last_pfn);

/* Record REC is a zero-filled page of a huge page that the kernel frees
 * when ksmd splits it: never merged, no rmap item for long, counted apart
 * (the estimate) or left out (a fingerprint). */
bool freed_by_split(const struct scan *s, size_t rec);

/* Counts the contents of the scanned records and predicts what KSM would
 * reach into s->res.  Returns 0, or -1 when out of memory. */
int predict(struct scan *s);

#endif
