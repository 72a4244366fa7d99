/*
 * census.c: the machine's mergeable processes, by security domain (see
 * census.h).
 */
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "common/files.h"
#include "common/ksmproc.h"
#include "common/parse.h"
#include "common/procfs.h"
#include "policy/census.h"

/* May KSM merge PID's memory now, as far as this kernel tells? */
static bool mergeable(pid_t pid)
{
	struct ksmenable_stat st;

	if (ksm_proc_stat(pid, &st))
		return false;           /* gone, or not readable: nothing to count */
	if (st.merge_any == 1 || st.mergeable == 1)
		return true;
	/* Without ksm_mergeable (before 6.14): what ksmd has scanned in it. */
	return st.mergeable < 0 && (st.rmap_items > 0 || st.merging_pages > 0);
}

/* Is PID, started at START, one of KNOWN? */
static bool is_known(const struct census_known *known, pid_t pid, unsigned long long start)
{
	size_t lo = 0, hi = known ? known->n : 0;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (known->p[mid].pid == pid)
			return known->p[mid].start == start;
		if (known->p[mid].pid < pid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return false;
}

/* DOMAIN's entry, made with no process if new; NULL when there is no room (counted in MORE). */
static struct census_domain *entry(struct census *c, const char *domain, pid_t pid)
{
	int i;

	for (i = 0; i < c->n && strcmp(c->d[i].name, domain); i++)
		;
	if (i < c->n)
		return &c->d[i];
	if (c->n == CENSUS_DOMAINS) {
		c->more++;
		return NULL;
	}
	memset(&c->d[i], 0, sizeof c->d[i]);
	snprintf(c->d[i].name, sizeof c->d[i].name, "%s", domain);
	c->d[i].example = pid;
	c->n++;
	return &c->d[i];
}

static void count(struct census *c, const char *domain, pid_t pid)
{
	struct census_domain *d = entry(c, domain, pid);

	c->procs++;
	if (d)
		d->procs++;
}

void census_note(struct census *c, const char *domain, pid_t pid)
{
	int n = c->n;
	struct census_domain *d = entry(c, domain, pid);

	if (d && c->n > n) {
		d->procs = 1;
		c->procs++;
	}
}

int census_take(struct census *c, pid_t skip, const struct census_known *known, const struct policy *p)
{
	struct dirent *e;
	DIR *d = opendir("/proc");

	memset(c, 0, sizeof *c);
	if (!d)
		return -1;
	while ((e = readdir(d))) {
		char domain[DOMAIN_TEXT_MAX];
		struct proc_facts f;
		struct proc_stat st;
		long long pid;

		if (parse_ll(e->d_name, 1, INT_MAX, &pid) || pid == skip)
			continue;
		if (proc_stat_read((pid_t)pid, &st) || (st.flags & PROC_PF_KTHREAD) ||
		    (!is_known(known, (pid_t)pid, st.starttime) && !mergeable((pid_t)pid)))
			continue;
		proc_facts_init((pid_t)pid, &f);
		if (domain_of_process(&f, p, domain, sizeof domain))
			count(c, domain, (pid_t)pid);
		else
			c->unknown++;
	}
	closedir(d);
	c->when = now_s();
	return 0;
}

const struct census_domain *census_other(const struct census *c, const char *domain)
{
	static const struct census_domain beyond = { "domains beyond the census's room", 0, 0 };

	for (int i = 0; i < c->n; i++)
		if (strcmp(c->d[i].name, domain))
			return &c->d[i];
	return c->more ? &beyond : NULL;
}

int census_domains(const struct census *c)
{
	return c->n + (c->more > 0);
}
