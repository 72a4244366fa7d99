/*
 * unit.h - the one harness of the unit tests (tests/unit/test_*.c), after
 * the kernel's kselftest.h: CHECK counts a condition and says where one
 * failed; a test is a named function; UNIT_MAIN runs them in order with
 * a plan ("1..N"), a line per test ("ok 3 test_name", "not ok ..."), and
 * the totals, and exits 1 if anything failed.
 */
#ifndef KSMENABLE_UNIT_H
#define KSMENABLE_UNIT_H

#include <stddef.h>
#include <stdio.h>

static int unit_passed, unit_failed;

#define CHECK(cond) do { \
	if (cond) \
		unit_passed++; \
	else { \
		unit_failed++; \
		fprintf(stderr, "%s:%d: FAILED: %s\n", __FILE__, __LINE__, #cond); \
	} \
} while (0)

struct unit_test {
	const char *name;
	void (*run)(void);
};

#define UNIT_TEST(fn) { #fn, fn }

static inline int unit_run(const struct unit_test *tests, size_t n)
{
	printf("1..%zu\n", n);
	for (size_t i = 0; i < n; i++) {
		int before = unit_failed;

		tests[i].run();
		printf("%s %zu %s\n", unit_failed == before ? "ok" : "not ok", i + 1, tests[i].name);
		fflush(stdout);
	}
	printf("unit: %d passed, %d failed\n", unit_passed, unit_failed);
	return unit_failed != 0;
}

/* main(): the tests named, in order. */
#define UNIT_MAIN(...) \
	int main(void) \
	{ \
		static const struct unit_test tests[] = { __VA_ARGS__ }; \
		return unit_run(tests, sizeof tests / sizeof tests[0]); \
	}

#endif
