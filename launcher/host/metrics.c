/*
 * metrics.c - the metrics file: names with one prefix and base units,
 * _total for counters, HELP and TYPE for each family (what
 * `promtool check metrics` asks), written to a new name and renamed, so
 * that node_exporter never reads half a file.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/files.h"
#include "common/msg.h"
#include "common/parse.h"
#include "common/text.h"
#include "host/hoststate.h"
#include "host/hosttune.h"
#include "host/knobs.h"
#include "host/metrics.h"
#include "kernel_abi.h"

/* The read-only files this project knows, as metrics; others go to ksmenable_sysfs_value. */
static const struct {
	const char *file, *metric, *type, *help;
} known[] = {
	{ "general_profit", "general_profit_bytes", "gauge",
	  "KSM's saving system-wide, after its own metadata: (pages_sharing + ksm_zero_pages) * page size - "
	  "rmap_items * 64 (can be negative)" },
	{ "pages_shared", "pages_shared", "gauge", "KSM pages in use (one copy each)" },
	{ "pages_sharing", "pages_sharing", "gauge", "Mappings of KSM pages beyond the first: pages saved" },
	{ "pages_unshared", "pages_unshared", "gauge", "Pages ksmd checks that are unique so far" },
	{ "pages_volatile", "pages_volatile", "gauge", "Pages that change too fast to merge" },
	{ "ksm_zero_pages", "ksm_zero_pages", "gauge", "Empty pages merged with the kernel's zero page (use_zero_pages)" },
	{ "stable_node_chains", "stable_node_chains", "gauge", "KSM pages that hit max_page_sharing and were chained" },
	{ "stable_node_dups", "stable_node_dups", "gauge", "Duplicate KSM pages in those chains" },
	{ "full_scans", "full_scans_total", "counter", "Full scans of the mergeable memory by ksmd" },
	{ "pages_scanned", "pages_scanned_total", "counter", "Pages ksmd has scanned" },
	{ "pages_skipped", "pages_skipped_total", "counter", "Pages smart_scan skipped" },
};
#define NKNOWN (int)(sizeof known / sizeof known[0])

static int cmp_file(const void *a, const void *b)
{
	return strcmp(((const struct ksm_file *)a)->name, ((const struct ksm_file *)b)->name);
}

/* Every file of /sys/kernel/mm/ksm, sorted by name. */
static void ksm_files_read(struct ksm_files *out)
{
	DIR *d = opendir(KSM_SYSFS_DIR);
	struct dirent *e;

	out->n = 0;
	if (!d)
		return;
	while ((e = readdir(d)) && out->n < MAX_KSM_FILES) {
		struct ksm_file *f = &out->f[out->n];
		char path[sizeof KSM_SYSFS_DIR + 300];
		struct stat st;

		if (e->d_name[0] == '.' || strlen(e->d_name) >= sizeof f->name)
			continue;
		snprintf(path, sizeof path, "%s/%s", KSM_SYSFS_DIR, e->d_name);
		/* knob_read keeps the selected word of "[none] scan-time". */
		if (stat(path, &st) || !S_ISREG(st.st_mode) || knob_read(e->d_name, f->value, sizeof f->value))
			continue;
		snprintf(f->name, sizeof f->name, "%s", e->d_name);
		f->writable = (st.st_mode & S_IWUSR) != 0;
		out->n++;
	}
	closedir(d);
	qsort(out->f, (size_t)out->n, sizeof out->f[0], cmp_file);
}

void metrics_label(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	fputc('"', f);
	while (*p) {
		int n = utf8_sequence(p);
		if (*p == '\\' || *p == '"')
			fprintf(f, "\\%c", *p);
		else if (*p == '\n')
			fputs("\\n", f);
		else if (n == 1)
			fputc(*p, f);
		else if (n > 1)
			fwrite(p, 1, (size_t)n, f);
		else
			fputs("\xef\xbf\xbd", f);      /* not UTF-8: U+FFFD, as the format wants UTF-8 */
		p += n > 0 ? n : 1;
	}
	fputc('"', f);
}

static void family(FILE *f, const char *name, const char *type, const char *help)
{
	fprintf(f, "# HELP " METRICS_PREFIX "%s %s\n# TYPE " METRICS_PREFIX "%s %s\n", name, help, name, type);
}

/* NAME{KEY="VALUE"} with VALUE escaped; no labels when KEY is NULL. */
static void sample_start(FILE *f, const char *name, const char *key, const char *value)
{
	fprintf(f, METRICS_PREFIX "%s", name);
	if (key) {
		fprintf(f, "{%s=", key);
		metrics_label(f, value);
		fputc('}', f);
	}
	fputc(' ', f);
}

static void sample_ll(FILE *f, const char *name, const char *key, const char *value, long long v)
{
	sample_start(f, name, key, value);
	fprintf(f, "%lld\n", v);
}

/*
 * NAME{cgroup="PATH"} V, with the pod's UID and the container's ID when
 * the path names them (cgtrust.h), so that Prometheus joins them with
 * kube-state-metrics' kube_pod_info (its uid label) and cAdvisor's series.
 * The labels in the order node_exporter sorts them.
 */
static void group_sample(FILE *f, const char *name, const struct cgroup_group *g, long long v)
{
	fprintf(f, METRICS_PREFIX "%s{cgroup=", name);
	metrics_label(f, g->path);
	if (g->names.container_id[0]) {
		fputs(",container_id=", f);
		metrics_label(f, g->names.container_id);
	}
	if (g->names.pod_uid[0]) {
		fputs(",pod_uid=", f);
		metrics_label(f, g->names.pod_uid);
	}
	fprintf(f, "} %lld\n", v);
}

/* The host agent's rules: what each holds now, and the security domains it made mergeable. */
static void agent_metrics(FILE *f, const struct metrics_agent *a, long page)
{
	static const char *const results[] = { "enabled", "disabled", "refused", "left_alone", "waiting" };

	family(f, "rule_processes", "gauge", "Processes a rule of the host agent's policy decided, that run now "
	       "(waiting: found stuck, tried again later)");
	for (int i = 0; i < a->n; i++)
		for (int k = 0; k < 5; k++) {
			const struct metrics_rule *r = &a->rules[i];
			const int counts[] = { r->enabled, r->disabled, r->refused, r->left_alone, r->waiting };

			fputs(METRICS_PREFIX "rule_processes{result=", f);
			metrics_label(f, results[k]);
			fputs(",rule=", f);
			metrics_label(f, r->name);
			fprintf(f, "} %d\n", counts[k]);
		}
	family(f, "rule_merged_bytes", "gauge", "Merged memory of the processes a rule enabled (ksm_merging_pages)");
	for (int i = 0; i < a->n; i++)
		sample_ll(f, "rule_merged_bytes", "rule", a->rules[i].name, a->rules[i].merged_pages * page);
	family(f, "security_domains", "gauge",
	       "Security domains (users, pods, containers) of the machine's mergeable memory, whoever made it "
	       "mergeable; above 1 their merged pages are a side channel between them");
	sample_ll(f, "security_domains", NULL, NULL, a->domains);
	family(f, "security_domains_unaccepted", "gauge",
	       "Of those domains, the ones in which no rule with cross-domain = yes enabled a process; above 1, "
	       "memory merges across domains that the policy did not accept");
	sample_ll(f, "security_domains_unaccepted", NULL, NULL, a->unaccepted_domains);
}

static int known_index(const char *file)
{
	for (int i = 0; i < NKNOWN; i++)
		if (!strcmp(known[i].file, file))
			return i;
	return -1;
}

static bool numeric(const char *s, long long *v)
{
	return !parse_ll(s, LLONG_MIN + 1, LLONG_MAX, v);
}

static void sysfs_metrics(FILE *f, const struct ksm_files *kf)
{
	long long v;
	bool first;

	for (int i = 0; i < NKNOWN; i++)
		for (int j = 0; j < kf->n; j++)
			if (!kf->f[j].writable && !strcmp(kf->f[j].name, known[i].file) && numeric(kf->f[j].value, &v)) {
				family(f, known[i].metric, known[i].type, known[i].help);
				sample_ll(f, known[i].metric, NULL, NULL, v);
			}
	first = true;
	for (int j = 0; j < kf->n; j++) {
		if (kf->f[j].writable || known_index(kf->f[j].name) >= 0 || !numeric(kf->f[j].value, &v))
			continue;
		if (first)
			family(f, "sysfs_value", "gauge", "Other read-only files of /sys/kernel/mm/ksm on this kernel, by name");
		first = false;
		sample_ll(f, "sysfs_value", "file", kf->f[j].name, v);
	}
	first = true;
	for (int j = 0; j < kf->n; j++) {
		if (!kf->f[j].writable || !numeric(kf->f[j].value, &v))
			continue;
		if (first)
			family(f, "knob", "gauge", "The numeric knobs of /sys/kernel/mm/ksm now, by name");
		first = false;
		sample_ll(f, "knob", "name", kf->f[j].name, v);
	}
	for (int j = 0; j < kf->n; j++)
		if (!strcmp(kf->f[j].name, "advisor_mode")) {
			family(f, "advisor_mode_info", "gauge", "The advisor_mode now, as a label (none or scan-time)");
			sample_ll(f, "advisor_mode_info", "mode", kf->f[j].value, 1);
		}
	first = true;
	for (int j = 0; j < kf->n; j++) {
		if (!kf->f[j].writable || numeric(kf->f[j].value, &v) || !strcmp(kf->f[j].name, "advisor_mode"))
			continue;
		if (first)
			family(f, "knob_info", "gauge", "The other knobs that are words, by name and value");
		first = false;
		fprintf(f, METRICS_PREFIX "knob_info{name=");
		metrics_label(f, kf->f[j].name);
		fprintf(f, ",value=");
		metrics_label(f, kf->f[j].value);
		fprintf(f, "} 1\n");
	}
}

#define TEXT_(x) #x
#define TEXT(x) TEXT_(x)

static void group_metrics(FILE *f, const struct cgroup_groups *gs, long page)
{
	static const struct { const char *name, *help; } fam[] = {
		{ "cgroup_processes", "Processes of the cgroup whose ksm_stat was read" },
		{ "cgroup_merged_bytes", "Merged memory of the cgroup's processes (ksm_merging_pages)" },
		{ "cgroup_profit_bytes", "Sum of ksm_process_profit of the cgroup's processes; each counts the KSM pages "
					 "it maps, so the sum over cgroups can exceed ksmenable_general_profit_bytes" },
		{ "cgroup_candidate_bytes", "Present anonymous memory of the cgroup's processes that KSM may merge" },
	};

	int listed = groups_listed(gs);
	long long left_candidate = 0;

	for (size_t k = 0; listed && k < sizeof fam / sizeof fam[0]; k++) {
		/* A kernel without ksm_process_profit (before 6.4): no profit series, rather than 0. */
		if (k == 2 && gs->profit_bytes == LLONG_MIN)
			continue;
		family(f, fam[k].name, "gauge", fam[k].help);
		for (int i = 0; i < listed; i++) {
			const struct cgroup_group *g = &gs->g[i];
			long long v = k == 0 ? g->procs : k == 1 ? g->merged_pages * page :
				      k == 2 ? g->profit_bytes : g->candidate_pages * page;
			if (v != LLONG_MIN)
				group_sample(f, fam[k].name, g, v);
		}
	}
	/* The rest, bounded so that 10,000 containers do not make a file of megabytes at every tick. */
	for (int i = listed; i < gs->n; i++)
		left_candidate += gs->g[i].candidate_pages * page;
	family(f, "cgroups_left_out", "gauge", "Cgroups with merged pages or candidate memory that have no "
	       "ksmenable_cgroup_ series: only the " TEXT(GROUPS_LISTED_MAX) " most merged are written");
	sample_ll(f, "cgroups_left_out", NULL, NULL, gs->n - listed);
	family(f, "cgroups_left_out_candidate_bytes", "gauge", "Candidate memory of the cgroups left out, "
	       "which a sum of ksmenable_cgroup_candidate_bytes over cgroups misses");
	sample_ll(f, "cgroups_left_out_candidate_bytes", NULL, NULL, left_candidate);
}

/* NAME{command="...",file="..."} V: the labels of a command's series, in the order node_exporter sorts them. */
static void command_sample(FILE *f, const char *name, const struct metrics_command *c, long long v)
{
	fprintf(f, METRICS_PREFIX "%s{command=", name);
	metrics_label(f, c->command ? c->command : "");
	fputs(",file=", f);
	metrics_label(f, c->file ? c->file : "");
	fprintf(f, "} %lld\n", v);
}

static void command_metrics(FILE *f, const struct metrics_command *c, long page)
{
	family(f, "command_processes", "gauge", "Live processes of the command's tree (ksm-run's command)");
	command_sample(f, "command_processes", c, c->processes);
	family(f, "command_merged_bytes", "gauge", "Merged memory of the command's tree now (ksm_merging_pages)");
	command_sample(f, "command_merged_bytes", c, c->merged_pages * page);
	if (c->profit_bytes != LLONG_MIN) {
		family(f, "command_profit_bytes", "gauge", "Sum of ksm_process_profit of the command's tree now");
		command_sample(f, "command_profit_bytes", c, c->profit_bytes);
	}
	family(f, "command_peak_merged_bytes", "gauge",
	       "Sum over the command's processes, exited ones included, of each one's peak merged memory");
	command_sample(f, "command_peak_merged_bytes", c, c->peak_merged_pages * page);
	/* Not counted (no root, no /proc/kpageflags): no sample, rather than a 0 that reads as true. */
	if (c->saved_bytes != LLONG_MIN) {
		family(f, "command_saved_bytes", "gauge",
		       "What the command's tree saves by page frame at the last count: the KSM pages it maps less "
		       "the distinct ones, plus its zero pages, less KSM's metadata");
		command_sample(f, "command_saved_bytes", c, c->saved_bytes);
	}
	if (c->peak_saved_bytes != LLONG_MIN) {
		family(f, "command_peak_saved_bytes", "gauge",
		       "The peak of ksmenable_command_saved_bytes: the saved figure of ksm-run's report");
		command_sample(f, "command_peak_saved_bytes", c, c->peak_saved_bytes);
	}
}

/* The series of the whole machine: one writer's (metrics_role_update). */
static void machine_metrics(FILE *f, const struct metrics_source *src)
{
	sysfs_metrics(f, src->files);
	/* A kernel without the file (before 6.4): the same figure by the same formula, said to be computed. */
	if (src->now && src->now->profit_computed) {
		family(f, "general_profit_computed_bytes", "gauge",
		       "general_profit computed by the kernel's formula from pages_sharing and the rmap items "
		       "(pages_shared + pages_sharing + pages_unshared + pages_volatile): this kernel has no such file");
		sample_ll(f, "general_profit_computed_bytes", NULL, NULL, sys_value(src->now, "general_profit"));
	}
	if (src->now && src->now->ksmd_cpu >= 0) {
		family(f, "ksmd_cpu_seconds_total", "counter", "CPU time of the ksmd kernel thread");
		sample_start(f, "ksmd_cpu_seconds_total", NULL, NULL);
		fprintf(f, "%.2f\n", src->now->ksmd_cpu);
	}
	family(f, "tuner_phase", "gauge", "The phase of the machine's tuner: 1 for the current one");
	for (int p = 0; p < HELD_PHASES; p++)
		sample_ll(f, "tuner_phase", "phase", held_phase_key(p), p == src->phase);
	family(f, "tuner_decisions_total", "counter", "Rate changes this instance's tuner made (the daemon logs each)");
	sample_ll(f, "tuner_decisions_total", NULL, NULL, (long long)src->decisions);
	if (src->groups)
		group_metrics(f, src->groups, src->page);
	if (src->agent)
		agent_metrics(f, src->agent, src->page);
	if (src->life) {
		family(f, "agent_running", "gauge", "1 while the host agent (ksm-run --daemon with a policy) runs; "
		       "0 when one stopped without a word (killed) and no process is judged");
		sample_ll(f, "agent_running", NULL, NULL, src->life->running);
		family(f, "agent_last_seen_timestamp_seconds", "gauge",
		       "When the host agent was last seen running: its daemon writes each tick's time, so a value "
		       "that stops moving is an agent that stopped");
		sample_ll(f, "agent_last_seen_timestamp_seconds", NULL, NULL, src->life->last_seen);
	}
}

void metrics_format(FILE *f, const struct metrics_source *src)
{
	if (!src->command_only)
		machine_metrics(f, src);
	if (src->command)
		command_metrics(f, src->command, src->page);
}

/* DIR and BASE of PATH, the directory "." for a bare name. */
int metrics_check_path(const char *path, char *why, size_t whylen)
{
	return file_check_new(path, why, whylen);
}

void metrics_warn_name(const char *path)
{
	size_t len = strlen(path);

	if (len < 5 || strcmp(path + len - 5, ".prom"))
		msg("warning: --metrics-file=%s does not end in .prom: node_exporter's textfile collector reads "
		    "only files named *.prom", path);
}

/*
 * Writes SRC to PATH atomically: a new file (O_EXCL, O_NOFOLLOW, mode
 * 0644) in PATH's directory, renamed over PATH.  0, or -errno.
 */
static int metrics_write(const char *path, const struct metrics_source *src)
{
	char *text = NULL;
	size_t len = 0;
	FILE *m;
	int r;

	if (!(m = open_memstream(&text, &len)))
		return -errno;
	metrics_format(m, src);
	if (fclose(m)) {
		free(text);
		return -ENOMEM;
	}
	/* 0644 whatever the umask: node_exporter runs as its own user. */
	r = file_replace(path, text, len, 0644);
	free(text);
	return r;
}

int metrics_write_host(const char *path, const struct host_tuner *h, const struct sys_sample *now,
		       const struct metrics_command *command, const struct metrics_agent *agent,
		       const struct metrics_agent_life *life, bool machine)
{
	static struct ksm_files files;
	struct cgroup_groups gs;
	struct metrics_source src = {
		.files = &files, .now = now, .command = command, .command_only = !machine,
		.agent = agent, .life = life, .page = sysconf(_SC_PAGESIZE),
	};
	int r;

	if (!machine)
		return metrics_write(path, &src);
	src.phase = host_tuner_machine_phase(h);
	src.decisions = h->decisions;
	ksm_files_read(&files);
	if (!groups_collect(&gs))
		src.groups = &gs;
	r = metrics_write(path, &src);
	groups_free(&gs);
	return r;
}

/* Would H write the machine's series (metrics.h: who writes them)? */
static bool machine_writer(const struct host_tuner *h, bool daemon)
{
	static struct hoststate st;
	char why[256];

	if (daemon || (h->m.tuning && !h->alone))
		return true;
	if (hoststate_peek(&st, why, sizeof why))
		return h->alone;        /* no state: nobody is registered */
	if (st.tuner)
		return false;
	if (h->alone)
		return st.nusers == 0;
	for (int i = 0; i < st.nusers; i++)
		if (user_alive(&st.users[i]))
			return st.users[i].pid == getpid();
	return false;
}

bool metrics_role_update(struct metrics_role *r, const struct host_tuner *h, bool daemon, double now)
{
	bool was = r->machine;

	if (!machine_writer(h, daemon))
		r->eligible_since = 0;
	else if (r->eligible_since <= 0)
		r->eligible_since = now;
	r->machine = r->eligible_since > 0 && now - r->eligible_since >= METRICS_HANDOVER_S;
	return r->machine != was;
}
