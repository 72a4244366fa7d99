/*
 * options_fleet.c - the options of fingerprints and --combine, for
 * options.c: every --estimate a target apart, the --label and
 * --fingerprint after it, --sample, --fingerprint-per-cgroup, and the
 * rules that tie them to --estimate and --combine.  All refused with 125
 * before anything is read or written.
 */
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/files.h"
#include "common/msg.h"
#include "common/parse.h"
#include "eval/fingerprint.h"
#include "options_fleet.h"

/* Each --estimate is a target apart; all of them are read in one scan. */
void fleet_estimate_option(struct fp_options *fp, const char *arg)
{
	if (fp->n == FP_TARGETS_MAX)
		die("--estimate=%s: at most %d targets in one run", arg, FP_TARGETS_MAX);
	fp->req[fp->n++] = (struct fp_request){ .target = arg };
}

/* The --estimate that a --fingerprint or --label after it belongs to. */
static struct fp_request *last_target(struct fp_options *fp, const char *opt, const char *arg)
{
	if (!fp->n)
		die("--%s=%s: goes after the --estimate=TARGET it belongs to "
		    "(ksm-run --estimate=TARGET --label=NAME --fingerprint=FILE)", opt, arg);
	return &fp->req[fp->n - 1];
}

void fleet_fingerprint_option(struct fp_options *fp, const char *arg)
{
	struct fp_request *q = last_target(fp, "fingerprint", arg);
	char why[PATH_MAX + 128];

	if (q->file)
		die("--fingerprint=%s: --estimate=%s has a fingerprint already (%s); "
		    "give each --estimate one --fingerprint", arg, q->target, q->file);
	if (file_check_new(arg, why, sizeof why))
		die("--fingerprint=%s: %s (accepted: a file in an existing directory)", arg, why);
	for (size_t i = 0; i + 1 < fp->n; i++)
		if (fp->req[i].file && !strcmp(fp->req[i].file, arg))
			die("--fingerprint=%s: named twice (for --estimate=%s and --estimate=%s)", arg,
			    fp->req[i].target, q->target);
	q->file = arg;
}

void fleet_label_option(struct fp_options *fp, const char *arg)
{
	struct fp_request *q = last_target(fp, "label", arg);

	if (q->label)
		die("--label=%s: --estimate=%s has a label already (%s)", arg, q->target, q->label);
	if (!fp_text_ok(arg))
		die("--label=%s: not a label (accepted: 1 to %d printable characters, no tab or newline)",
		    arg, FP_TEXT_MAX);
	q->label = arg;
}

void fleet_sample_option(struct fp_options *fp, const char *arg)
{
	long long n;

	if (parse_ll(arg, 1, FP_SAMPLE_MAX, &n))
		die("--sample=%s: not a whole number in 1..%d (the contents whose hash is 0 modulo N "
		    "are kept; 1 keeps all)", arg, FP_SAMPLE_MAX);
	fp->sample = (unsigned)n;
}

void fleet_per_cgroup_option(struct fp_options *fp, const char *arg)
{
	struct stat st;

	if (stat(arg, &st) || !S_ISDIR(st.st_mode) || access(arg, W_OK | X_OK))
		die("--fingerprint-per-cgroup=%s: not a directory this user can write in "
		    "(accepted: an existing directory)", arg);
	fp->per_cgroup = arg;
}

void fleet_key_option(struct fp_options *fp, const char *arg)
{
	char why[PATH_MAX + 128];

	if (access(arg, F_OK) && file_check_new(arg, why, sizeof why))
		die("--fingerprint-key=%s: %s (accepted: a key file, or a new one in an existing directory)", arg, why);
	fp->key_file = arg;
}

/* Fingerprints are taken by --estimate and read by --combine. */
void fleet_check(const struct fp_options *fp, const struct fleet_mode *m, char **cmd)
{
	size_t files = 0;

	for (size_t i = 0; i < fp->n; i++)
		if (fp->req[i].label && !fp->req[i].file)
			die("--label=%s names the fingerprint of --estimate=%s: add --fingerprint=FILE after it",
			    fp->req[i].label, fp->req[i].target);
	if (!fp_wanted(fp) && fp->key_file)
		die("--fingerprint-key goes with a fingerprint: ksm-run --estimate=TARGET --fingerprint=FILE "
		    "--fingerprint-key=FILE (--combine needs no key: it compares the files' key ids)");
	if (!fp_wanted(fp) && (fp->sample || m->format_given))
		die("--sample and --fingerprint-format go with a fingerprint: "
		    "ksm-run --estimate=TARGET --fingerprint=FILE --sample=N");
	if (fp->tsv && fp->sample > 1)
		die("--fingerprint-format=tsv with --sample=%u: the TSV is for SQL at full resolution "
		    "(the SQL of ksm-run(1) does not scale a sample); a sampled fingerprint is for --combine, "
		    "which keeps each workload's own figures exact", fp->sample);
	if (!m->combine)
		return;
	while (cmd[files])
		files++;
	if (!files)
		die("--combine needs the fingerprints to combine (ksm-run --combine FILE...)");
	if (m->matrix && files < 2)
		die("--combine --matrix compares pairs: it needs two fingerprints or more, not one ('%s')", cmd[0]);
}
