/*
 * Unit tests of the JSON writer (launcher/common/jsonw.c): commas and keys
 * from the nesting state, unknown values as null, hostile strings as
 * valid UTF-8, and nesting beyond its depth balanced.  No root.
 */
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/jsonw.h"
#include "unit.h"

/* What the writer wrote for the calls in BODY (a block using W). */
#define WRITTEN(out, body) do { \
	char *buf_ = NULL; \
	size_t len_ = 0; \
	FILE *f_ = open_memstream(&buf_, &len_); \
	struct jsonw w; \
	jw_start(&w, f_); \
	body; \
	fclose(f_); \
	snprintf(out, sizeof out, "%s", buf_ ? buf_ : ""); \
	free(buf_); \
} while (0)

static void test_nesting(void)
{
	char out[512];

	WRITTEN(out, {
		jw_object(&w, NULL);
		jw_ll(&w, "a", 1);
		jw_array(&w, "list");
		jw_ll(&w, NULL, 2);
		jw_object(&w, NULL);
		jw_bool(&w, "x", true);
		jw_end(&w);
		jw_ll(&w, NULL, 3);
		jw_end(&w);
		jw_object(&w, "empty");
		jw_end(&w);
		jw_string(&w, "s", "t");
		jw_finish(&w);
	});
	CHECK(!strcmp(out, "{\"a\":1,\"list\":[2,{\"x\":true},3],\"empty\":{},\"s\":\"t\"}\n"));
	/* jw_finish closes whatever is open. */
	WRITTEN(out, {
		jw_object(&w, NULL);
		jw_array(&w, "a");
		jw_object(&w, NULL);
		jw_finish(&w);
	});
	CHECK(!strcmp(out, "{\"a\":[{}]}\n"));
}

static void test_unknowns(void)
{
	char out[512];

	WRITTEN(out, {
		jw_object(&w, NULL);
		jw_ll(&w, "n", LLONG_MIN);
		jw_string(&w, "s", NULL);
		jw_tristate(&w, "t", -1);
		jw_fixed(&w, "cpu", -1, 2, true);
		jw_fixed(&w, "delta", -1.5, 1, false);
		jw_fixed(&w, "nan", NAN, 2, false);
		jw_g(&w, "inf", INFINITY);
		jw_null(&w, "z");
		jw_finish(&w);
	});
	CHECK(!strcmp(out, "{\"n\":null,\"s\":null,\"t\":null,\"cpu\":null,\"delta\":-1.5,\"nan\":null,"
			   "\"inf\":null,\"z\":null}\n"));
}

static void test_knob_values(void)
{
	char out[512];

	WRITTEN(out, {
		jw_object(&w, NULL);
		jw_knob(&w, "run", "1");
		jw_knob(&w, "advisor_mode", "scan-time");
		jw_knob(&w, "odd", "12abc");
		jw_finish(&w);
	});
	CHECK(!strcmp(out, "{\"run\":1,\"advisor_mode\":\"scan-time\",\"odd\":\"12abc\"}\n"));
}

static void test_hostile_strings(void)
{
	char out[512];

	/* A key and a value that are not UTF-8, with quotes and controls: escaped, U+FFFD for the bad byte. */
	WRITTEN(out, {
		jw_object(&w, NULL);
		jw_string(&w, "k\"\n", "a\xff\x01\\");
		jw_finish(&w);
	});
	CHECK(!strcmp(out, "{\"k\\\"\\u000a\":\"a\xef\xbf\xbd\\u0001\\\\\"}\n"));
}

static void test_too_deep(void)
{
	char out[512];

	/* Beyond JSONW_DEPTH the levels are left out, and closing them closes nothing else. */
	WRITTEN(out, {
		for (int i = 0; i < JSONW_DEPTH + 3; i++)
			jw_array(&w, NULL);
		for (int i = 0; i < JSONW_DEPTH + 3; i++)
			jw_end(&w);
		jw_finish(&w);
	});
	CHECK(strlen(out) == 2 * (JSONW_DEPTH - 1) + 1);
	CHECK(out[0] == '[' && out[JSONW_DEPTH - 2] == '[' && out[JSONW_DEPTH - 1] == ']');
}

UNIT_MAIN(UNIT_TEST(test_nesting), UNIT_TEST(test_unknowns), UNIT_TEST(test_knob_values),
	  UNIT_TEST(test_hostile_strings), UNIT_TEST(test_too_deep))
