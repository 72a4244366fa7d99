/*
 * maps.c - parsing /proc/PID/maps and smaps.
 *
 * A maps line: "START-END PERMS OFFSET DEV INODE   PATH".  In smaps each such
 * header is followed by "Key: value" lines; the region is handed over when
 * the next header (or the end) shows that its fields are complete.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "maps.h"

enum region_class region_classify(const char *path, int shared)
{
	if (shared)
		return REGION_SHARED;
	if (!*path)
		return REGION_ANON;
	if (path[0] == '/')
		return REGION_FILE;
	if (!strcmp(path, "[heap]"))
		return REGION_HEAP;
	if (!strcmp(path, "[stack]"))
		return REGION_STACK;
	if (!strncmp(path, "[anon:", 6))
		return REGION_ANON_NAMED;
	return REGION_SPECIAL;
}

static int parse_hex(const char **p, unsigned long *out)
{
	char *end;

	errno = 0;
	*out = strtoul(*p, &end, 16);
	if (end == *p || errno)
		return -1;
	*p = end;
	return 0;
}

static const char *skip_field(const char *p)
{
	while (*p == ' ')
		p++;
	while (*p && *p != ' ')
		p++;
	return p;
}

/* A header line starts with "hex-hex ".  Returns 0 and fills R, or -1. */
static int parse_header(char *line, struct region *r)
{
	static const char deleted[] = " (deleted)";
	const char *p = line;
	char *path;
	size_t len;
	int shared;

	if (parse_hex(&p, &r->start) || *p++ != '-' || parse_hex(&p, &r->end) || *p != ' ')
		return -1;
	while (*p == ' ')
		p++;
	if (strlen(p) < 4)
		return -1;
	shared = p[3] == 's';
	p = skip_field(p);          /* perms */
	p = skip_field(p);          /* offset */
	p = skip_field(p);          /* device */
	p = skip_field(p);          /* inode */
	while (*p == ' ')
		p++;
	path = (char *)p;
	len = strlen(path);
	r->deleted = 0;
	if (len > sizeof deleted - 1 && !strcmp(path + len - (sizeof deleted - 1), deleted)) {
		len -= sizeof deleted - 1;
		path[len] = '\0';
		r->deleted = 1;
	}
	r->cls = region_classify(path, shared);
	r->name = path;
	r->name_len = len;
	if (r->cls == REGION_ANON_NAMED) {
		r->name = path + 6;
		r->name_len = len > 7 ? len - 7 : 0;   /* "[anon:" ... "]" */
	}
	r->mergeable = -1;
	r->vmflags = -1;
	r->ksm_kb = -1;
	r->anon_kb = -1;
	return 0;
}

/* Applies a smaps "Key: value" line to the region it belongs to. */
static void parse_field(const char *line, struct region *r)
{
	if (!strncmp(line, "VmFlags:", 8)) {
		static const struct { char name[3]; int bit; } known[] = {
			{ "mg", VMF_MG }, { "dd", VMF_DD }, { "lo", VMF_LO }, { "wf", VMF_WF },
		};
		const char *p = line + 8;
		r->vmflags = 0;
		/* Two-letter words separated by spaces. */
		for (; *p; p++) {
			if (p[-1] != ' ' || !p[0] || !p[1] || (p[2] != ' ' && p[2]))
				continue;
			for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
				if (p[0] == known[i].name[0] && p[1] == known[i].name[1])
					r->vmflags |= known[i].bit;
		}
		r->mergeable = (r->vmflags & VMF_MG) != 0;
	} else if (!strncmp(line, "KSM:", 4)) {
		r->ksm_kb = strtol(line + 4, NULL, 10);
	} else if (!strncmp(line, "Anonymous:", 10)) {
		r->anon_kb = strtol(line + 10, NULL, 10);
	}
}

struct parser {
	struct region cur;
	int have_cur;
	region_fn fn;
	void *arg;
};

/*
 * The pending region's name points into the text already consumed, so it
 * is handed over before that text can be overwritten: maps_for_each keeps
 * a whole smaps block in its buffer (see there).
 */
static int flush(struct parser *ps)
{
	if (!ps->have_cur)
		return 0;
	ps->have_cur = 0;
	return ps->fn(&ps->cur, ps->arg);
}

static int parse_line(struct parser *ps, char *line)
{
	struct region r;
	int stop;

	if (parse_header(line, &r) == 0) {
		if ((stop = flush(ps)))
			return stop;
		ps->cur = r;
		ps->have_cur = 1;
	} else if (ps->have_cur) {
		parse_field(line, &ps->cur);
	}
	return 0;
}

int maps_parse_text(char *text, region_fn fn, void *arg)
{
	struct parser ps = { .fn = fn, .arg = arg };
	char *line = text, *nl;
	int stop;

	for (; *line; line = nl + 1) {
		nl = strchr(line, '\n');
		if (nl)
			*nl = '\0';
		if ((stop = parse_line(&ps, line)))
			return stop;
		if (!nl)
			break;
	}
	return flush(&ps);
}

static ssize_t read_full(int fd, char *buf, size_t len)
{
	ssize_t n;

	do
		n = read(fd, buf, len);
	while (n < 0 && errno == EINTR);
	return n;
}

int maps_for_each(const char *path, char *buf, size_t bufsize, region_fn fn, void *arg)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), ret, err;

	if (fd < 0)
		return -1;
	ret = maps_for_each_fd(fd, buf, bufsize, fn, arg);
	err = errno;
	close(fd);
	errno = err;
	return ret;
}

int maps_for_each_fd(int fd, char *buf, size_t bufsize, region_fn fn, void *arg)
{
	struct parser ps = { .fn = fn, .arg = arg };
	size_t have = 0, start = 0;   /* text in buf; where unparsed text begins */
	int stop = 0, skipping = 0;

	/* A seq_file regenerates its text when read again from offset 0. */
	if (lseek(fd, 0, SEEK_SET) < 0)
		return -1;
	for (;;) {
		ssize_t n = read_full(fd, buf + have, bufsize - 1 - have);
		char *line, *nl;
		size_t rest, name_size;

		if (n < 0) {
			stop = -1;
			goto out;
		}
		have += (size_t)n;
		buf[have] = '\0';
		line = buf + start;
		while ((nl = memchr(line, '\n', have - (size_t)(line - buf)))) {
			*nl = '\0';
			if (!skipping && (stop = parse_line(&ps, line)))
				goto out;
			skipping = 0;
			line = nl + 1;
		}
		if (n == 0)
			break;
		/*
		 * The pending region's name points into text already parsed,
		 * which the next read will overwrite: the name alone moves to
		 * the front, followed by the unparsed rest.  Only a region
		 * whose name leaves no room to read is handed over early.
		 */
		rest = have - (size_t)(line - buf);
		name_size = ps.have_cur ? ps.cur.name_len + 1 : 0;
		if (name_size && name_size + rest >= bufsize / 2) {
			if ((stop = flush(&ps)))
				goto out;
			name_size = 0;
		}
		if (name_size) {
			memmove(buf, ps.cur.name, name_size - 1);
			buf[name_size - 1] = '\0';
			ps.cur.name = buf;
		}
		memmove(buf + name_size, line, rest);
		have = name_size + rest;
		start = name_size;
		if (rest == bufsize - 1) {
			/* A line longer than the buffer: drop it. */
			have = 0;
			skipping = 1;
		}
	}
	if (have > start && !skipping)
		stop = parse_line(&ps, buf + start);
	if (!stop)
		stop = flush(&ps);
out:
	return stop;
}
