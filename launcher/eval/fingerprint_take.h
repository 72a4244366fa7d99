/*
 * fingerprint_take.h - --estimate --fingerprint: the fingerprints of the
 * targets just read (fingerprint_take.c), one per labelled --estimate, or
 * one per cgroup.
 */
#ifndef KSMRUN_FINGERPRINT_TAKE_H
#define KSMRUN_FINGERPRINT_TAKE_H

#include <stdbool.h>
#include <stddef.h>

#include "eval/fingerprint_key.h"

#define FP_TARGETS_MAX 64

/* One --estimate=TARGET, with the --label and --fingerprint after it. */
struct fp_request {
	const char *target, *label, *file;
};

struct fp_options {
	struct fp_request req[FP_TARGETS_MAX];
	size_t n;                       /* --estimate options given */
	unsigned sample;                /* --sample=N; 1 when not given */
	bool tsv;                       /* --fingerprint-format=tsv */
	const char *per_cgroup;         /* --fingerprint-per-cgroup=DIR */
	const char *key_file;           /* --fingerprint-key=FILE; NULL: beside the first */
	struct fp_key key;              /* fingerprints_key() */
};

/* Whether any fingerprint is asked for. */
bool fp_wanted(const struct fp_options *o);

/*
 * Reads (or makes) the key of the fingerprints into O->key, before
 * anything is read: --fingerprint-key, or FP_KEY_NAME beside the first
 * fingerprint.  0, or -1 with a message (the run exits 125).
 */
int fingerprints_key(struct fp_options *o);

struct scan;
/*
 * Writes the fingerprints O asks for, from the scan S that the prediction
 * has seen (its records' frames marked).  Says on stderr what each file
 * holds and its size per distinct content.  0, or 125 with a message.
 */
int fingerprints_take(const struct scan *s, const struct fp_options *o);

#endif
