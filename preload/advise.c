/* advise.c - madvise(MADV_MERGEABLE) on the regions a selection chooses. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "advise.h"
#include "guard.h"
#include "layout.h"
#include "locks.h"
#include "marks.h"

/* Large enough for any maps line (a path is at most PATH_MAX), small
 * enough for a thread stack of musl's default size. */
#define MAPS_BUFSIZE 16384

struct pass {
	const struct selection *sel;
	struct advise_stats *st;
	unsigned long start, end;     /* chosen regions not yet advised */
	unsigned long since;          /* layout change number before the maps were read */
};

static void flush_pending(struct pass *p)
{
	int err;

	if (p->start == p->end)
		return;
	err = guard_advise(p->sel, p->start, p->end, p->since, p->st);
	if (err && !p->st->error)
		p->st->error = err;
	p->start = p->end = 0;
}

static int visit(const struct region *r, void *arg)
{
	struct pass *p = arg;

	if (!region_selected(p->sel, r)) {
		if (r->cls != REGION_SHARED && r->cls != REGION_SPECIAL) {
			p->st->denied_regions++;
			p->st->denied_bytes += r->end - r->start;
		}
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

int advise_pass_fd(const struct selection *sel, int maps_fd, struct advise_stats *st)
{
	char buf[MAPS_BUFSIZE];
	struct pass p = { .sel = sel, .st = st, .since = layout_now() };
	int ret;

	memset(st, 0, sizeof *st);
	/* Once for the whole pass, not for each range it advises (locks.h). */
	signals_hold();
	ret = maps_for_each_fd(maps_fd, buf, sizeof buf, visit, &p);
	flush_pending(&p);
	signals_release();
	return ret < 0 ? -1 : 0;
}

int advise_pass(const struct selection *sel, struct advise_stats *st)
{
	int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC), ret, err;

	if (fd < 0)
		return -1;
	ret = advise_pass_fd(sel, fd, st);
	err = errno;
	close(fd);
	errno = err;
	return ret;
}

static size_t page_round(size_t len)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);

	return (len + page - 1) & ~(page - 1);
}

int advise_new_mapping(const struct selection *sel, void *addr, size_t len, int flags, int fd,
		       unsigned long since)
{
	struct region r = { .start = (unsigned long)addr, .mergeable = -1, .vmflags = -1, .ksm_kb = -1,
			    .anon_kb = -1 };
	struct advise_stats st = { 0 };
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
	return guard_advise(sel, r.start, r.end, since, &st);
}

/* Makes the pieces of [START, END) unmergeable, but not those the program itself made mergeable. */
static void unmerge_piece(unsigned long start, unsigned long end, unsigned marks, void *arg)
{
	int *err = arg;

	if (!(marks & MARK_MERGEABLE) && !*err)
		*err = raw_madvise(start, end, MADV_UNMERGEABLE);
}

int advise_renamed(const struct selection *sel, void *addr, size_t len, const char *name)
{
	struct region r = { .start = (unsigned long)addr, .mergeable = -1, .vmflags = -1, .ksm_kb = -1,
			    .anon_kb = -1 };
	struct advise_stats st = { 0 };
	int err = 0;

	r.end = r.start + page_round(len);
	r.cls = name && *name ? REGION_ANON_NAMED : REGION_ANON;
	r.name = name;
	r.name_len = name ? strlen(name) : 0;
	if (region_selected(sel, &r))
		return guard_advise(sel, r.start, r.end, layout_now(), &st);
	if (selector_names(sel->deny, &r)) {
		marks_lock();
		marks_walk(r.start, r.end, unmerge_piece, &err);
		marks_unlock();
	}
	return err;
}
