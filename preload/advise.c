/* advise.c - madvise(MADV_MERGEABLE) on the regions a selection chooses. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "advise.h"

/* Large enough for any maps line (a path is at most PATH_MAX), small
 * enough for a thread stack of musl's default size. */
#define MAPS_BUFSIZE 16384

static int advise(unsigned long start, unsigned long end, int advice)
{
	if (madvise((void *)start, end - start, advice) == 0)
		return 0;
	return errno;
}

struct pass {
	const struct selection *sel;
	struct advise_stats *st;
	unsigned long start, end;     /* chosen regions not yet advised */
};

static void flush_pending(struct pass *p)
{
	int err;

	if (p->start == p->end)
		return;
	err = advise(p->start, p->end, MADV_MERGEABLE);
	/* ENOMEM: part of the range went away since maps was read. */
	if (!err || err == ENOMEM)
		p->st->calls++;
	else if (!p->st->error)
		p->st->error = err;
	p->start = p->end = 0;
}

static int visit(const struct region *r, void *arg)
{
	struct pass *p = arg;

	if (!region_selected(p->sel, r)) {
		flush_pending(p);
		return 0;
	}
	p->st->regions++;
	p->st->bytes += r->end - r->start;
	if (p->start != p->end && p->end == r->start) {
		p->end = r->end;
		return 0;
	}
	flush_pending(p);
	p->start = r->start;
	p->end = r->end;
	return 0;
}

int advise_pass(const struct selection *sel, struct advise_stats *st)
{
	char buf[MAPS_BUFSIZE];
	struct pass p = { .sel = sel, .st = st };
	int ret;

	memset(st, 0, sizeof *st);
	ret = maps_for_each("/proc/self/maps", buf, sizeof buf, visit, &p);
	flush_pending(&p);
	return ret < 0 ? -1 : 0;
}

static size_t page_round(size_t len)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);

	return (len + page - 1) & ~(page - 1);
}

int advise_new_mapping(const struct selection *sel, void *addr, size_t len, int flags, int fd)
{
	struct region r = { .start = (unsigned long)addr, .mergeable = -1, .ksm_kb = -1, .anon_kb = -1 };
	char link[32], path[PATH_MAX];
	ssize_t n;

	r.end = r.start + page_round(len);
	if ((flags & MAP_TYPE) != MAP_PRIVATE || (flags & MAP_HUGETLB))
		return 0;
	if (flags & MAP_ANONYMOUS) {
		r.cls = REGION_ANON;
	} else if (!selector_uses_paths(sel->allow) && !selector_uses_paths(sel->deny)) {
		/* No file:GLOB to match: spare the readlink (dlopen maps files). */
		r.cls = REGION_FILE;
		r.name = "";
	} else {
		/* The path, as maps would show it, decides file:GLOB. */
		snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
		n = readlink(link, path, sizeof path - 1);
		if (n <= 0)
			return 0;
		path[n] = '\0';
		if (n > 10 && !strcmp(path + n - 10, " (deleted)"))
			path[n -= 10] = '\0';
		r.cls = region_classify(path, 0);
		r.name = path;
		r.name_len = (size_t)n;
	}
	if (!region_selected(sel, &r))
		return 0;
	return advise(r.start, r.end, MADV_MERGEABLE);
}

int advise_renamed(const struct selection *sel, void *addr, size_t len, const char *name)
{
	struct region r = { .start = (unsigned long)addr, .mergeable = -1, .ksm_kb = -1, .anon_kb = -1 };

	r.end = r.start + page_round(len);
	r.cls = name && *name ? REGION_ANON_NAMED : REGION_ANON;
	r.name = name;
	r.name_len = name ? strlen(name) : 0;
	if (region_selected(sel, &r))
		return advise(r.start, r.end, MADV_MERGEABLE);
	if (selector_names(sel->deny, &r))
		return advise(r.start, r.end, MADV_UNMERGEABLE);
	return 0;
}
