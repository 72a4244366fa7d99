/* regionclass.c - naming region classes and turning them into selectors. */
#include <stdio.h>
#include <string.h>

#include "eval/regionclass.h"

void region_class_name(const struct region *r, char *buf, size_t len)
{
	switch (r->cls) {
	case REGION_HEAP: snprintf(buf, len, "heap"); break;
	case REGION_STACK: snprintf(buf, len, "stack"); break;
	case REGION_ANON: snprintf(buf, len, "anon"); break;
	case REGION_ANON_NAMED: snprintf(buf, len, "anon:%.*s", (int)r->name_len, r->name); break;
	default: snprintf(buf, len, "%s", r->name); break;
	}
}

/*
 * A name is matched literally: fnmatch's special characters get a
 * backslash.  A comma would end the selector, and the grammar has no
 * escape for it, so it becomes '?', which matches it.
 */
static int append_literal(char *buf, size_t len, size_t *at, const char *s)
{
	for (; *s; s++) {
		if (strchr("*?[\\", *s)) {
			if (*at + 1 >= len)
				return -1;
			buf[(*at)++] = '\\';
		}
		if (*at + 1 >= len)
			return -1;
		buf[(*at)++] = *s == ',' ? '?' : *s;
	}
	buf[*at] = '\0';
	return 0;
}

int class_selector(const char *name, char *buf, size_t len)
{
	size_t at;

	if (!strcmp(name, "heap") || !strcmp(name, "stack") || !strcmp(name, "anon")) {
		if (strlen(name) >= len)
			return -1;
		strcpy(buf, name);
		return 0;
	}
	if (!strncmp(name, "anon:", 5)) {
		at = (size_t)snprintf(buf, len, "anon:");
		return append_literal(buf, len, &at, name + 5);
	}
	at = (size_t)snprintf(buf, len, "file:");
	return append_literal(buf, len, &at, name);
}
