/* ksmstat.c - /proc/PID/ksm_stat, parsed by field name. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "ksmstat.h"
#include "readfile.h"

int ksm_stat_read(const char *path, char *buf, size_t size)
{
	return read_small_file(path, buf, size) < 0 ? -1 : 0;
}

int ksm_stat_next(char **cursor, const char **name, const char **value)
{
	char *line = *cursor, *nl, *sep;

	while (*line) {
		nl = strchr(line, '\n');
		if (nl)
			*nl = '\0';
		*cursor = nl ? nl + 1 : line + strlen(line);
		sep = line + strcspn(line, ": ");
		if (*sep && sep > line) {
			*sep++ = '\0';
			sep += strspn(sep, ": ");
			*name = line;
			*value = sep;
			return 1;
		}
		line = *cursor;
	}
	return 0;
}

/*
 * A field's value as the kernel writes it: a decimal number, '-' allowed
 * first (ksm_process_profit can be negative), nothing else; -1 otherwise,
 * as for a field the kernel lacks, rather than a number read from a prefix.
 */
static long long stat_number(const char *s)
{
	const char *p = s + (*s == '-');
	long long v = 0;

	if (*p < '0' || *p > '9')
		return -1;
	for (; *p >= '0' && *p <= '9'; p++) {
		if (v > (LLONG_MAX - (*p - '0')) / 10)
			return -1;
		v = v * 10 + (*p - '0');
	}
	return *p ? -1 : *s == '-' ? -v : v;
}

/* "yes" 1, "no" 0, anything else -1. */
static int stat_yes_no(const char *s)
{
	return !strcmp(s, "yes") ? 1 : !strcmp(s, "no") ? 0 : -1;
}

/*
 * Since Linux 5.19 a process's merged pages are in a file of their own,
 * ksm_merging_pages, beside ksm_stat, which came later and gained the
 * line later still (6.1's ksm_stat has ksm_rmap_items only): read there
 * when ksm_stat does not say.  -1 when neither does.
 */
static long long merging_pages_beside(const char *stat_path)
{
	static const char name[] = "ksm_merging_pages";
	const char *slash = strrchr(stat_path, '/');
	size_t dir = slash ? (size_t)(slash - stat_path) + 1 : 0;
	char path[256], text[32];
	ssize_t n;

	if (dir + sizeof name > sizeof path)
		return -1;
	memcpy(path, stat_path, dir);
	memcpy(path + dir, name, sizeof name);
	if ((n = read_small_file(path, text, sizeof text)) <= 0)
		return -1;
	if (text[n - 1] == '\n')
		text[n - 1] = '\0';
	return stat_number(text);
}

void ksm_stat_unknown(struct ksmenable_stat *st)
{
	st->rmap_items = st->merging_pages = st->zero_pages = st->process_profit = -1;
	st->merge_any = st->mergeable = -1;
}

int ksm_stat_parse(const char *path, struct ksmenable_stat *st)
{
	char text[1024], *cursor = text;
	const char *name, *value;
	int merging_line = 0;

	ksm_stat_unknown(st);
	if (ksm_stat_read(path, text, sizeof text)) {
		/* 5.19, 6.0: no ksm_stat yet, the merged pages in a file of their own. */
		st->merging_pages = merging_pages_beside(path);
		return st->merging_pages >= 0 ? 0 : -1;
	}
	while (ksm_stat_next(&cursor, &name, &value)) {
		if (!strcmp(name, "ksm_rmap_items"))
			st->rmap_items = stat_number(value);
		else if (!strcmp(name, "ksm_merging_pages")) {
			st->merging_pages = stat_number(value);
			merging_line = 1;
		}
		else if (!strcmp(name, "ksm_zero_pages"))
			st->zero_pages = stat_number(value);
		else if (!strcmp(name, "ksm_process_profit"))
			st->process_profit = stat_number(value);
		else if (!strcmp(name, "ksm_merge_any"))
			st->merge_any = stat_yes_no(value);
		else if (!strcmp(name, "ksm_mergeable"))
			st->mergeable = stat_yes_no(value);
	}
	/* Only where ksm_stat has no such line: one it has, however odd, is its answer. */
	if (!merging_line)
		st->merging_pages = merging_pages_beside(path);
	return 0;
}
