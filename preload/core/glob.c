/* glob.c - fnmatch-compatible patterns without allocation or locale. */
#include <string.h>

#include "glob.h"

/* The C locale's classes, spelled out: no ctype table, no locale. */
static int is_upper(unsigned char c) { return c >= 'A' && c <= 'Z'; }
static int is_lower(unsigned char c) { return c >= 'a' && c <= 'z'; }
static int is_digit(unsigned char c) { return c >= '0' && c <= '9'; }
static int is_alpha(unsigned char c) { return is_upper(c) || is_lower(c); }
static int is_alnum(unsigned char c) { return is_alpha(c) || is_digit(c); }
static int is_blank(unsigned char c) { return c == ' ' || c == '\t'; }
static int is_space(unsigned char c) { return c == ' ' || (c >= '\t' && c <= '\r'); }
static int is_cntrl(unsigned char c) { return c < 0x20 || c == 0x7f; }
static int is_print(unsigned char c) { return c >= 0x20 && c < 0x7f; }
static int is_graph(unsigned char c) { return c > 0x20 && c < 0x7f; }
static int is_punct(unsigned char c) { return is_graph(c) && !is_alnum(c); }
static int is_xdigit(unsigned char c) { return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }

static const struct {
	const char *name;
	int (*test)(unsigned char c);
} class_table[] = {
	{ "alnum", is_alnum }, { "alpha", is_alpha }, { "blank", is_blank }, { "cntrl", is_cntrl },
	{ "digit", is_digit }, { "graph", is_graph }, { "lower", is_lower }, { "print", is_print },
	{ "punct", is_punct }, { "space", is_space }, { "upper", is_upper }, { "xdigit", is_xdigit },
};

/*
 * One element of a bracket expression at P: a byte (maybe escaped), or a
 * [:class:], [=c=] or [.c.] term.  On return *END is past it; *LO is the
 * byte, or -1 for a class with *CLS set.  Returns NULL or what is wrong.
 */
static const char *element(const char *p, const char **end, int *lo, int (**cls)(unsigned char))
{
	*cls = NULL;
	if (p[0] == '[' && (p[1] == ':' || p[1] == '=' || p[1] == '.')) {
		char kind = p[1];
		const char *q = p + 2, *close = q;

		while (*close && !(close[0] == kind && close[1] == ']'))
			close++;
		if (!*close)
			return kind == ':' ? "an unclosed '[:'" : kind == '=' ? "an unclosed '[='" : "an unclosed '[.'";
		if (kind == ':') {
			for (size_t i = 0; i < sizeof class_table / sizeof class_table[0]; i++)
				if (strlen(class_table[i].name) == (size_t)(close - q) &&
				    !memcmp(class_table[i].name, q, (size_t)(close - q))) {
					*cls = class_table[i].test;
					*lo = -1;
					*end = close + 2;
					return NULL;
				}
			return "an unknown character class";
		}
		/* In the C locale an equivalence class or collating symbol is one byte. */
		if (close - q != 1)
			return "a collating element that is not one byte";
		*lo = (unsigned char)*q;
		*end = close + 2;
		return NULL;
	}
	if (p[0] == '\\') {
		if (!p[1])
			return "a trailing backslash";
		*lo = (unsigned char)p[1];
		*end = p + 2;
		return NULL;
	}
	if (!p[0])
		return "an unclosed '['";
	*lo = (unsigned char)p[0];
	*end = p + 1;
	return NULL;
}

/*
 * The bracket expression at P (just after '['), against byte C (or -1 to
 * only check it).  Returns NULL and sets *END past the ']' and *HIT, or
 * returns what is wrong.
 */
static const char *bracket(const char *p, int c, const char **end, int *hit)
{
	int negate = 0, in = 0, first = 1;

	if (*p == '!' || *p == '^') {
		negate = 1;
		p++;
	}
	for (;;) {
		int (*cls)(unsigned char), lo, hi;
		const char *next, *why, *start;

		if (*p == ']' && !first)
			break;
		first = 0;
		start = p;
		if ((why = element(p, &next, &lo, &cls)))
			return why;
		p = next;
		if (cls) {
			in |= c >= 0 && cls((unsigned char)c);
			continue;
		}
		hi = lo;
		/*
		 * glibc's fnmatch drops a collating symbol that a closing "-]"
		 * follows ([[.a.]-] is only '-'), unlike a byte or [=c=] there:
		 * refused, as below (found by tests/fuzz/fuzz_glob.c).
		 */
		if (start[0] == '[' && start[1] == '.' && p[0] == '-' && p[1] == ']')
			return "a collating symbol [.c.] before a closing '-]'";
		/* A range a-z; a '-' before the closing ']' is a member. */
		if (p[0] == '-' && p[1] && p[1] != ']') {
			/*
			 * POSIX leaves [=c=] at either end of a range unspecified, and
			 * glibc's fnmatch takes it as no range ([[=a=]-c] is a, - or c;
			 * [a-[=c=]] matches nothing): refused, so that what is accepted
			 * matches as fnmatch does (found by tests/fuzz/fuzz_glob.c).
			 */
			if ((start[0] == '[' && start[1] == '=') || (p[1] == '[' && p[2] == '='))
				return "a range with an equivalence class [=c=] at an end";
			if ((why = element(p + 1, &next, &hi, &cls)))
				return why;
			if (cls)
				return "a range that ends in a character class";
			if (hi < lo)
				return "a range whose end comes before its start";
			p = next;
		}
		in |= c >= lo && c <= hi;
	}
	*end = p + 1;
	*hit = in != negate;
	return NULL;
}

const char *glob_problem(const char *pattern)
{
	const char *p = pattern, *end, *why;
	int hit;

	if (!*p)
		return "an empty pattern";
	while (*p) {
		if (*p == '\\') {
			if (!p[1])
				return "a trailing backslash";
			p += 2;
		} else if (*p == '[') {
			if ((why = bracket(p + 1, -1, &end, &hit)))
				return why;
			p = end;
		} else {
			p++;
		}
	}
	return NULL;
}

/*
 * Iterative matching with one backtrack point: as '*' also matches '/',
 * restarting from the latest '*' is enough (no nested backtracking).
 */
int glob_match(const char *pattern, const char *name, size_t len)
{
	const char *p = pattern, *star = NULL, *end;
	size_t n = 0, star_n = 0;
	int hit;

	while (n < len || *p) {
		if (*p == '*') {
			star = ++p;
			star_n = n;
			continue;
		}
		if (n < len && *p) {
			unsigned char c = (unsigned char)name[n];
			if (*p == '?') {
				p++;
				n++;
				continue;
			}
			if (*p == '[') {
				if (bracket(p + 1, c, &end, &hit))
					return 0;        /* malformed: glob_problem refuses it */
				if (hit) {
					p = end;
					n++;
					continue;
				}
			} else if (*p == '\\' && p[1]) {
				if ((unsigned char)p[1] == c) {
					p += 2;
					n++;
					continue;
				}
			} else if ((unsigned char)*p == c) {
				p++;
				n++;
				continue;
			}
		}
		if (!star || star_n >= len)
			return 0;
		p = star;
		n = ++star_n;
	}
	return 1;
}
