/* selector.c - parsing and matching allow/deny selector lists. */
#include <stdio.h>
#include <string.h>

#include "glob.h"
#include "selector.h"

static const struct {
	const char *word;
	enum selector_kind kind;
	int takes_glob;
} selector_words[] = {
	{ "all", SEL_ALL, 0 },
	{ "heap", SEL_HEAP, 0 },
	{ "stack", SEL_STACK, 0 },
	{ "anon", SEL_ANON, 0 },
	{ "secret", SEL_SECRET, 0 },
	{ "anon:", SEL_ANON_NAME, 1 },
	{ "file:", SEL_FILE, 1 },
};

const struct selector_list selector_all = { .count = 1, .items = { { SEL_ALL, NULL } } };

static char *trim(char *s)
{
	char *end;

	while (*s == ' ' || *s == '\t')
		s++;
	end = s + strlen(s);
	while (end > s && (end[-1] == ' ' || end[-1] == '\t'))
		*--end = '\0';
	return s;
}

static int parse_one(struct selector_list *list, char *item, char *err, size_t errlen)
{
	size_t i;

	if (!*item) {
		snprintf(err, errlen, "empty selector (accepted: %s)", SELECTOR_ACCEPTED);
		return -1;
	}
	for (i = 0; i < sizeof selector_words / sizeof selector_words[0]; i++) {
		const char *w = selector_words[i].word;
		size_t n = strlen(w);
		const char *problem;

		if (selector_words[i].takes_glob ? strncmp(item, w, n) : strcmp(item, w))
			continue;
		if (list->count == SELECTOR_MAX) {
			snprintf(err, errlen, "more than %d selectors", SELECTOR_MAX);
			return -1;
		}
		list->items[list->count].kind = selector_words[i].kind;
		list->items[list->count].glob = selector_words[i].takes_glob ? item + n : NULL;
		if (selector_words[i].takes_glob && (problem = glob_problem(item + n))) {
			snprintf(err, errlen, "selector '%s' has %s (GLOB is an fnmatch(3) pattern: "
				 "* ? [set] and \\ to quote)",
				 item, problem);
			return -1;
		}
		list->count++;
		return 0;
	}
	snprintf(err, errlen, "unknown selector '%s' (accepted: %s)", item, SELECTOR_ACCEPTED);
	return -1;
}

int selector_parse(struct selector_list *list, const char *text, char *err, size_t errlen)
{
	char *item, *comma;

	list->count = 0;
	if (strlen(text) >= sizeof list->text) {
		snprintf(err, errlen, "the list is longer than %d bytes", SELECTOR_TEXT_MAX - 1);
		return -1;
	}
	strcpy(list->text, text);
	for (item = list->text;; item = comma + 1) {
		comma = strchr(item, ',');
		if (comma)
			*comma = '\0';
		if (parse_one(list, trim(item), err, errlen))
			return -1;
		if (!comma)
			return 0;
	}
}

static int name_matches(const char *glob, const struct region *r)
{
	return glob_match(glob, r->name, r->name_len);
}

static int selector_chooses(const struct selector *s, const struct region *r)
{
	switch (s->kind) {
	case SEL_ALL:
		return r->cls != REGION_SHARED && r->cls != REGION_SPECIAL;
	case SEL_HEAP:
		return r->cls == REGION_HEAP;
	case SEL_STACK:
		return r->cls == REGION_STACK;
	case SEL_ANON:
		return r->cls == REGION_ANON;
	case SEL_SECRET:
		return region_is_secret(r);
	case SEL_ANON_NAME:
		return r->cls == REGION_ANON_NAMED && name_matches(s->glob, r);
	case SEL_FILE:
		return r->cls == REGION_FILE && name_matches(s->glob, r);
	}
	return 0;
}

int selector_matches(const struct selector_list *list, const struct region *r)
{
	unsigned i;

	for (i = 0; i < list->count; i++)
		if (selector_chooses(&list->items[i], r))
			return 1;
	return 0;
}

int selector_names(const struct selector_list *list, const struct region *r)
{
	unsigned i;

	for (i = 0; i < list->count; i++)
		if ((list->items[i].kind == SEL_ANON_NAME || list->items[i].kind == SEL_FILE) &&
		    selector_chooses(&list->items[i], r))
			return 1;
	return 0;
}

int selector_uses_paths(const struct selector_list *list)
{
	unsigned i;

	for (i = 0; i < list->count; i++)
		if (list->items[i].kind == SEL_FILE)
			return 1;
	return 0;
}

int selector_has(const struct selector_list *list, enum selector_kind kind)
{
	unsigned i;

	for (i = 0; list && i < list->count; i++)
		if (list->items[i].kind == kind)
			return 1;
	return 0;
}

int region_is_secret(const struct region *r)
{
	return r->vmflags > 0 &&
	       ((r->vmflags & VMF_WF) || ((r->vmflags & VMF_DD) && (r->vmflags & VMF_LO)));
}
