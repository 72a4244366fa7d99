/* ksmstat.c - /proc/PID/ksm_stat, parsed by field name. */
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

int ksm_stat_parse(const char *path, struct ksmenable_stat *st)
{
	char text[1024], *cursor = text;
	const char *name, *value;

	st->rmap_items = st->merging_pages = st->zero_pages = st->process_profit = -1;
	st->merge_any = st->mergeable = -1;
	if (ksm_stat_read(path, text, sizeof text))
		return -1;
	while (ksm_stat_next(&cursor, &name, &value)) {
		long long v = strtoll(value, NULL, 10);
		int yes = !strcmp(value, "yes");
		if (!strcmp(name, "ksm_rmap_items"))
			st->rmap_items = v;
		else if (!strcmp(name, "ksm_merging_pages"))
			st->merging_pages = v;
		else if (!strcmp(name, "ksm_zero_pages"))
			st->zero_pages = v;
		else if (!strcmp(name, "ksm_process_profit"))
			st->process_profit = v;
		else if (!strcmp(name, "ksm_merge_any"))
			st->merge_any = yes;
		else if (!strcmp(name, "ksm_mergeable"))
			st->mergeable = yes;
	}
	return 0;
}
