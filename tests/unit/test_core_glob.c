/*
 * Unit tests of the selector patterns (preload/core/glob.c): the issue's
 * malformed examples are refused, and on every well-formed pattern of a
 * generated set the matcher agrees with fnmatch(3) without flags in the C
 * locale, the behaviour it promises.
 */
#include <fnmatch.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "glob.h"
#include "unit.h"

static void test_problems(void)
{
	static const struct { const char *p, *why; } bad[] = {
		{ "", "an empty pattern" }, { "x\\", "a trailing backslash" },
		{ "[abc", "an unclosed '['" }, { "*[\\]", "an unclosed '['" },
		{ "[[:alpha:]", "an unclosed '['" }, { "[[:alpha]", "an unclosed '[:'" },
		{ "[[:bogus:]]", "an unknown character class" }, { "[z-a]", "a range whose end" },
		{ "[a-[:digit:]]", "a range that ends in a character class" },
		{ "[[=ab=]]", "not one byte" }, { "[", "an unclosed '['" }, { "[!", "an unclosed '['" },
		{ "[]", "an unclosed '['" },
		/* fuzz_glob found these: fnmatch takes no [=c=] as an end of a range. */
		{ "[a-[=c=]]", "an equivalence class [=c=] at an end" },
		{ "[[=a=]-c]", "an equivalence class [=c=] at an end" },
		{ "*[l/[-[=\243=]]", "an equivalence class [=c=] at an end" },
		/* and fnmatch drops a [.c.] before a closing "-]". */
		{ "[[.a.]-]", "a collating symbol [.c.] before a closing '-]'" },
		{ "*[[[=a=][./.]-]", "a collating symbol [.c.] before a closing '-]'" },
	};
	static const char *const good[] = {
		"*", "?", "a*b", "[]]", "[!]]", "[\\]]", "[a-]", "[]-a]", "[[:alpha:][:digit:]_]",
		"[[=a=]]", "[[.-.]]", "\\[x", "/usr/lib/*.so.[0-9]", "[[=a=]-]", "[[.a.]-[.c.]]",
	};

	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		const char *why = glob_problem(bad[i].p);
		CHECK(why && strstr(why, bad[i].why));
		if (!why || !strstr(why, bad[i].why))
			fprintf(stderr, "  pattern '%s': %s\n", bad[i].p, why ? why : "accepted");
	}
	for (size_t i = 0; i < sizeof good / sizeof good[0]; i++)
		CHECK(glob_problem(good[i]) == NULL);
	/* The deny entry now means what it says. */
	CHECK(glob_match("*[\\]]key*", "/etc/ssl/]key.pem", 17));
	CHECK(glob_match("[[:alpha:]]*", "libc", 4) && !glob_match("[[:alpha:]]*", "9lib", 4));
	/* Not NUL-terminated: only LEN bytes count. */
	CHECK(glob_match("ab", "abc", 2) && !glob_match("abc", "abc", 2));
	/* Bytes beyond ASCII are no letters in the C locale. */
	CHECK(!glob_match("[[:alpha:]]", "\xc3", 1) && glob_match("?", "\xc3", 1));
}

/* Patterns and names from a small alphabet, so that they meet often. */
static const char pattern_atoms[][16] = {
	"a", "b", "/", ".", "*", "?", "\\*", "\\a", "[ab]", "[!a]", "[^b]", "[a-c]", "[]a]", "[a-]",
	"[[:alpha:]]", "[[:digit:]]", "[[:punct:]]", "[\\]]", "[[=a=]]", "1", "**",
};
static const char name_chars[] = "ab/.*1]-\\";

static void random_text(unsigned *seed, char *out, size_t max, int pattern)
{
	size_t n = 0, k = (size_t)(rand_r(seed) % 6);

	out[0] = '\0';
	for (size_t i = 0; i < k; i++) {
		if (pattern) {
			const char *a = pattern_atoms[rand_r(seed) % (sizeof pattern_atoms / sizeof pattern_atoms[0])];
			if (n + strlen(a) + 1 >= max)
				break;
			strcpy(out + n, a);
			n += strlen(a);
		} else if (n + 2 < max) {
			out[n++] = name_chars[rand_r(seed) % (sizeof name_chars - 1)];
			out[n] = '\0';
		}
	}
}

static void test_against_fnmatch(void)
{
	unsigned seed = 12345;
	int disagree = 0, compared = 0;
	char p[64], name[16];

	setlocale(LC_ALL, "C");
	for (int i = 0; i < 200000; i++) {
		random_text(&seed, p, sizeof p, 1);
		random_text(&seed, name, sizeof name, 0);
		if (!*p || glob_problem(p))
			continue;
		compared++;
		if (glob_match(p, name, strlen(name)) != (fnmatch(p, name, 0) == 0)) {
			if (disagree++ < 5)
				fprintf(stderr, "  '%s' on '%s': ours %d, fnmatch %d\n", p, name,
					glob_match(p, name, strlen(name)), fnmatch(p, name, 0) == 0);
		}
	}
	CHECK(compared > 100000);
	CHECK(disagree == 0);
}

UNIT_MAIN(UNIT_TEST(test_problems), UNIT_TEST(test_against_fnmatch))
