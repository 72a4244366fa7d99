/*
 * fingerprint_take.c - from the pages --estimate read to fingerprints.
 *
 * Each fingerprint is built from the records of its own processes, with
 * the full 64-bit hash of each page (the table of contents.c keeps only 48
 * bits, enough within one machine; across a fleet of hosts, 64 bits keep
 * chance collisions out of the union).  Frames are compared within the
 * fingerprint's processes, by the rule the prediction uses, so that its
 * own figures are what --estimate of those processes alone would say.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/files.h"
#include "common/msg.h"
#include "common/procfs.h"
#include "eval/accounting.h"
#include "eval/estimate_predict.h"
#include "eval/fingerprint.h"
#include "eval/fingerprint_key.h"
#include "eval/fingerprint_take.h"
#include "common/targets.h"
#include "host/groups.h"
#include "readfile.h"

bool fp_wanted(const struct fp_options *o)
{
	for (size_t i = 0; i < o->n; i++)
		if (o->req[i].file)
			return true;
	return o->per_cgroup != NULL;
}

struct page_id {
	uint64_t hash, pfn;
};

static int by_hash_pfn(const void *a, const void *b)
{
	const struct page_id *x = a, *y = b;

	if (x->hash != y->hash)
		return x->hash < y->hash ? -1 : 1;
	return (x->pfn > y->pfn) - (x->pfn < y->pfn);
}

/*
 * The contents of the processes marked in IN (by index of s->res->procs),
 * sampled, into *OUT (allocated), with the header's figures in FP.
 */
static size_t build(const struct scan *s, const bool *in, const struct fp_key *key, struct fingerprint *fp,
		    struct fp_content **out)
{
	const struct est_result *r = s->res;
	const struct ksm_rule rule = est_rule(r);
	struct ksm_tally own = { 0 };
	struct page_id *v;
	struct fp_content *c;
	size_t n = 0, kept = 0, i, j;
	int kpf = r->pfn_visible ? kpageflags_open() : -1;

	for (i = 0; i < r->nprocs; i++)
		if (in[i] && !r->procs[i].skipped)
			n += r->procs[i].nrec;
	v = xmalloc((n + 1) * sizeof *v);
	n = 0;
	for (i = 0; i < r->nprocs; i++) {
		const struct est_proc *p = &r->procs[i];
		if (!in[i] || p->skipped)
			continue;
		fp->pages += p->nrec;
		for (j = p->first_rec; j < p->first_rec + p->nrec; j++) {
			const struct record *rec = &s->recs[j];
			if (freed_by_split(s, j))
				fp->pages--;    /* freed by the split, not by KSM: as the estimate */
			else if (rec->hash == VOLATILE_HASH)
				fp->volatile_pages++;
			else if (rec->hash == s->zero_hash)
				fp->zero_pages++;
			else
				v[n++] = (struct page_id){ fp_key_hash(key, rec->hash), rec->pfn };
		}
	}
	if (n > 1)
		qsort(v, n, sizeof *v, by_hash_pfn);
	c = xmalloc((n + 1) * sizeof *c);
	for (i = 0; i < n; i = j) {
		for (j = i + 1; j < n && v[j].hash == v[i].hash; j++)
			;
		bool one_frame = r->pfn_visible && frames_never_merge(kpf, j - i, v[i].pfn, v[j - 1].pfn);
		ksm_tally_content(&rule, &own, j - i, one_frame);
		fp->distinct++;
		if (v[i].hash % fp->sample == 0)
			c[kept++] = (struct fp_content){ v[i].hash, j - i, one_frame };
	}
	ksm_tally_zero(&rule, &own, fp->zero_pages);
	fp->own_sharing = own.pages_sharing;
	fp->own_shared = own.pages_shared;
	if (kpf >= 0)
		close(kpf);
	free(v);
	*out = c;
	return kept;
}

/* Writes one fingerprint of the processes marked in IN to FILE. */
static int take_one(const struct scan *s, const struct fp_options *o, const struct fp_key *key, const bool *in,
		    const char *label, const char *file)
{
	const struct est_result *r = s->res;
	struct fingerprint fp = {
		.page_size = (uint32_t)r->page_size, .sample = o->sample ? o->sample : 1,
		.max_page_sharing = (uint32_t)r->max_page_sharing, .use_zero_pages = r->use_zero_pages != 0,
		.time = (int64_t)time(NULL), .key_id = key->id,
	};
	/* It tells which pages are equal: private, or stricter if the umask is. */
	mode_t mode = file_mode_umask(0600);
	struct fp_content *c;
	unsigned char *bin = NULL;
	char *text = NULL;
	size_t n, len = 0;
	int err;

	if (gethostname(fp.host, sizeof fp.host) || !fp_text_ok(fp.host))
		fp.host[0] = 0;
	fp.host[sizeof fp.host - 1] = 0;
	snprintf(fp.label, sizeof fp.label, "%s", label);
	if (!fp_text_ok(fp.label))
		snprintf(fp.label, sizeof fp.label, "fingerprint");
	n = build(s, in, key, &fp, &c);
	if (o->tsv) {
		FILE *m = open_memstream(&text, &len);
		if (!m)
			die_oom();
		fp_write_tsv(m, &fp, c, n);
		if (fclose(m))
			die_oom();
		err = file_replace(file, text, len, mode);
	} else {
		if (fp_encode(&fp, c, n, &bin, &len) < 0)
			die_oom();
		err = file_replace(file, bin, len, mode);
	}
	free(c);
	free(bin);
	free(text);
	if (err) {
		msg("--fingerprint=%s: refused: %s", file, file_strerror(-err));
		return 125;
	}
	msg("fingerprint %s (label %s): %llu pages, %llu distinct contents, %zu kept (sampling 1/%u), "
	    "%zu bytes: %.2f bytes per content kept", file, fp.label, (unsigned long long)fp.pages,
	    (unsigned long long)fp.distinct, n, fp.sample, len, n ? (double)len / (double)n : 0.0);
	return 0;
}

/* The processes of TARGET among those read. */
static void mark_target(const struct est_result *r, const char *target, bool *in)
{
	struct pid_list l;
	char why[256];

	memset(in, 0, r->nprocs * sizeof *in);
	if (targets_resolve(target, &l, NULL, why, sizeof why) < 0)
		return;                 /* gone since: it holds nothing now */
	for (size_t i = 0, k = 0; i < r->nprocs && k < l.n;) {
		if (r->procs[i].pid == l.pids[k])
			in[i++] = true, k++;
		else if (r->procs[i].pid < l.pids[k])
			i++;
		else
			k++;
	}
	pid_list_free(&l);
}

/* A file name for the cgroup PATH: "/a/b.service" -> "a_b.service". */
/*
 * The file of cgroup PATH in DIR: the path with '/' and other characters
 * made '_', so /a/b and /a_b would meet in one name: the Nth group to want
 * a name already taken in this run gets "-N" after it (the label inside
 * says which group it is).  TAKEN holds the names given so far.
 */
static void cgroup_file(const char *dir, const char *path, const char *ext, char (*taken)[NAME_MAX + 1],
			size_t ntaken, char *out, size_t len)
{
	char name[NAME_MAX - 16], file[NAME_MAX + 1];
	size_t k = 0;

	for (const char *p = path + (*path == '/'); *p && k < sizeof name - 1; p++)
		name[k++] = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
			    *p == '.' || *p == '-' || *p == '@' ? *p : '_';
	name[k] = 0;
	snprintf(file, sizeof file, "%s%s", k ? name : "root", ext);
	for (unsigned n = 2; ; n++) {
		size_t i = 0;

		while (i < ntaken && strcmp(taken[i], file))
			i++;
		if (i == ntaken)
			break;
		snprintf(file, sizeof file, "%s-%u%s", k ? name : "root", n, ext);
	}
	snprintf(taken[ntaken], NAME_MAX + 1, "%s", file);
	snprintf(out, len, "%s/%s", dir, file);
}

static int per_cgroup(const struct scan *s, const struct fp_options *o, const struct fp_key *key)
{
	const struct est_result *r = s->res;
	char (*cg)[PATH_MAX] = xcalloc(r->nprocs + 1, sizeof *cg), text[8192], file[PATH_MAX + 64];
	bool *in = xcalloc(r->nprocs + 1, sizeof *in), *done = xcalloc(r->nprocs + 1, sizeof *done);
	char (*taken)[NAME_MAX + 1] = xcalloc(r->nprocs + 1, sizeof *taken);
	size_t ntaken = 0;
	int status = 0;

	for (size_t i = 0; i < r->nprocs; i++) {
		char path[64];
		snprintf(path, sizeof path, "/proc/%d/cgroup", (int)r->procs[i].pid);
		if (r->procs[i].skipped || read_small_file(path, text, sizeof text) < 0 ||
		    cgroup_of_text(text, cg[i], sizeof cg[i]) < 0 || !fp_text_ok(cg[i]))
			done[i] = true;
	}
	for (size_t i = 0; i < r->nprocs && !status; i++) {
		if (done[i])
			continue;
		for (size_t j = i; j < r->nprocs; j++)
			if ((in[j] = !done[j] && !strcmp(cg[i], cg[j])))
				done[j] = true;
		cgroup_file(o->per_cgroup, cg[i], o->tsv ? ".tsv" : ".kfp", taken, ntaken++, file, sizeof file);
		status = take_one(s, o, key, in, cg[i], file);
	}
	free(taken);
	free(cg);
	free(in);
	free(done);
	return status;
}

int fingerprints_key(struct fp_options *o)
{
	struct fp_key *key = &o->key;
	char path[PATH_MAX + 32];

	if (o->key_file)
		return fp_key_load(o->key_file, key);
	for (size_t i = 0; i < o->n; i++)
		if (o->req[i].file) {
			fp_key_beside(o->req[i].file, path, sizeof path);
			return fp_key_load(path, key);
		}
	snprintf(path, sizeof path, "%s/%s", o->per_cgroup, FP_KEY_NAME);
	return fp_key_load(path, key);
}

int fingerprints_take(const struct scan *s, const struct fp_options *o)
{
	bool *in = xcalloc(s->res->nprocs + 1, sizeof *in);
	int status = 0;

	for (size_t i = 0; i < o->n && !status; i++) {
		const struct fp_request *q = &o->req[i];
		if (!q->file)
			continue;
		mark_target(s->res, q->target, in);
		status = take_one(s, o, &o->key, in, q->label ? q->label : q->target, q->file);
	}
	free(in);
	if (!status && o->per_cgroup)
		status = per_cgroup(s, o, &o->key);
	return status;
}
