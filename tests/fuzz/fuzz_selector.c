/*
 * fuzz_selector.c - the allow/deny lists (preload/core/selector.c):
 * selector_parse against the grammar of selector.h, then selector_matches,
 * selector_names, selector_uses_paths and selector_has on regions made
 * from the input, against the rules written out below with fnmatch(3) in
 * the C locale for the globs.  Any disagreement is a crash.
 *
 * Input: the LIST text, a NUL byte, then regions separated by NUL bytes:
 * a byte for the class, a byte for the VmFlags (0xff: not known), the name.
 */
#include <fnmatch.h>
#include <locale.h>

#include "fuzz.h"
#include "glob.h"
#include "selector.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	setlocale(LC_ALL, "C");
	return 0;
}

/* The grammar, written out: what each item of TEXT must parse to. */
struct item {
	enum selector_kind kind;
	char glob[SELECTOR_TEXT_MAX];
};

static const struct { const char *word; enum selector_kind kind; } words[] = {
	{ "all", SEL_ALL }, { "heap", SEL_HEAP }, { "stack", SEL_STACK }, { "anon", SEL_ANON },
	{ "secret", SEL_SECRET },
};

/* The items of TEXT into ITEMS; -1 when the list must be refused. */
static int expected_items(const char *text, struct item *items, unsigned *n)
{
	const char *p = text;

	*n = 0;
	if (strlen(text) >= SELECTOR_TEXT_MAX)
		return -1;
	for (;;) {
		const char *comma = strchr(p, ','), *end = comma ? comma : p + strlen(p);
		const char *b = p, *e = end;
		size_t len, i;

		while (b < e && (*b == ' ' || *b == '\t'))
			b++;
		while (e > b && (e[-1] == ' ' || e[-1] == '\t'))
			e--;
		len = (size_t)(e - b);
		if (*n == SELECTOR_MAX)
			return -1;                      /* one too many, whatever it is */
		for (i = 0; i < sizeof words / sizeof words[0]; i++)
			if (strlen(words[i].word) == len && !memcmp(b, words[i].word, len))
				break;
		if (i < sizeof words / sizeof words[0]) {
			items[*n].kind = words[i].kind;
			items[*n].glob[0] = '\0';
		} else if (len >= 5 && (!memcmp(b, "anon:", 5) || !memcmp(b, "file:", 5))) {
			items[*n].kind = b[0] == 'a' ? SEL_ANON_NAME : SEL_FILE;
			memcpy(items[*n].glob, b + 5, len - 5);
			items[*n].glob[len - 5] = '\0';
			if (glob_problem(items[*n].glob))
				return -1;
		} else {
			return -1;                      /* empty or unknown */
		}
		(*n)++;
		if (!comma)
			return 0;
		p = comma + 1;
	}
}

/* fnmatch is exponential in the number of stars: ask it only when cheap. */
static int cheap(const char *pattern, size_t len)
{
	double cost = 1;

	for (const char *p = pattern; *p; p++)
		if (*p == '*' && p[1] != '*' && (cost *= (double)(len + 1)) > 2e5)
			return 0;
	return 1;
}

/*
 * Does item S choose R, by the rules of SELECTORS in libksmenable(7)?  -1:
 * not asked (too slow).  Written from the man page's words, not from
 * selector.c: secret-like is spelled out from the VmFlags (wf, or dd with
 * lo) rather than asked of region_is_secret, and a glob is fnmatch(3)'s.
 */
static int expected_choice(const struct item *s, const struct region *r, const char *name_z)
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
		return r->vmflags > 0 && ((r->vmflags & VMF_WF) || ((r->vmflags & VMF_DD) && (r->vmflags & VMF_LO)));
	case SEL_ANON_NAME:
	case SEL_FILE:
		if (r->cls != (s->kind == SEL_FILE ? REGION_FILE : REGION_ANON_NAMED))
			return 0;
		if (!cheap(s->glob, r->name_len))
			return -1;
		return fnmatch(s->glob, name_z, 0) == 0;
	}
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct selector_list list;
	static struct item items[SELECTOR_MAX];
	char *text = fuzz_record(&data, &size, '\0');
	size_t errlen = 1 + strlen(text) % 300;
	char *err = fuzz_msgbuf(errlen);
	unsigned n;
	int want = expected_items(text, items, &n), got = selector_parse(&list, text, err, errlen);

	FUZZ_CHECK(got == want, "'%s': selector_parse %d, the grammar %d", text, got, want);
	if (got) {
		FUZZ_CHECK(fuzz_terminated(err, errlen) && (errlen == 1 || *err), "no message for '%s'", text);
		goto out;
	}
	FUZZ_CHECK(list.count == n, "'%s': %u selectors, the grammar %u", text, list.count, n);
	for (unsigned i = 0; i < n; i++) {
		FUZZ_CHECK(list.items[i].kind == items[i].kind, "'%s': item %u of kind %d, not %d",
			   text, i, list.items[i].kind, items[i].kind);
		if (items[i].kind == SEL_ANON_NAME || items[i].kind == SEL_FILE)
			FUZZ_CHECK(list.items[i].glob && !strcmp(list.items[i].glob, items[i].glob),
				   "'%s': item %u glob '%s', not '%s'", text, i, list.items[i].glob, items[i].glob);
	}
	for (int k = SEL_ALL; k <= SEL_FILE; k++) {
		int has = 0;

		for (unsigned i = 0; i < n; i++)
			has |= items[i].kind == (enum selector_kind)k;
		FUZZ_CHECK(selector_has(&list, (enum selector_kind)k) == has, "selector_has %d", k);
		if (k == SEL_FILE)
			FUZZ_CHECK(selector_uses_paths(&list) == has, "selector_uses_paths");
	}
	while (size) {
		unsigned cls = fuzz_byte(&data, &size) % 7, flags = fuzz_byte(&data, &size);
		char *name_z = fuzz_record(&data, &size, '\0');
		size_t len = strlen(name_z);
		/* Names come from inside a buffer, not NUL-terminated: exactly LEN bytes. */
		char *name = fuzz_alloc(len);
		struct region r = {
			.start = 0x1000, .end = 0x2000, .cls = (enum region_class)cls, .name = name,
			.name_len = len, .mergeable = -1, .vmflags = flags == 0xff ? -1 : (int)(flags & 15),
			.ksm_kb = -1, .anon_kb = -1,
		};
		int any = 0, named = 0, unknown = 0;

		memcpy(name, name_z, len);
		for (unsigned i = 0; i < n; i++) {
			int c = expected_choice(&items[i], &r, name_z);

			if (c < 0)
				unknown = 1;
			any |= c > 0;
			named |= c > 0 && (items[i].kind == SEL_ANON_NAME || items[i].kind == SEL_FILE);
		}
		got = selector_matches(&list, &r);
		if (!unknown || any)
			FUZZ_CHECK(got == any, "'%s' on class %u name '%s' flags %d: matches %d, the rules %d",
				   text, cls, name_z, r.vmflags, got, any);
		got = selector_names(&list, &r);
		if (!unknown || named)
			FUZZ_CHECK(got == named, "'%s' on class %u name '%s': names %d, the rules %d",
				   text, cls, name_z, got, named);
		FUZZ_CHECK(region_is_secret(&r) == (r.vmflags > 0 && ((r.vmflags & VMF_WF) ||
			   ((r.vmflags & VMF_DD) && (r.vmflags & VMF_LO)))), "region_is_secret");
		free(name);
		free(name_z);
	}
out:
	free(err);
	free(text);
	return 0;
}
