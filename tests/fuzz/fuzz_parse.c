/*
 * fuzz_parse.c - ksm-run's numbers and knob values: parse_ll and
 * parse_double (launcher/common/parse.c), knob_check_name and
 * knob_check_value (launcher/host/knobs.c), against their rules written
 * out below.  Any disagreement is a crash.
 *
 * Input: a byte that picks the function; for knob_check_value a byte for
 * the knob (one that ksm-run knows, or else the name given in the input);
 * a byte for the size of the message buffer; the knob's name and a NUL
 * when it is given; the text; for parse_ll and parse_double, a NUL and
 * eight bytes each for the bounds.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>

#include "common/parse.h"
#include "fuzz.h"
#include "host/knobs.h"

static uint64_t bytes8(const uint8_t **data, size_t *size)
{
	uint64_t v = 0;

	for (int i = 0; i < 8; i++)
		v = v << 8 | fuzz_byte(data, size);
	return v;
}

static int is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* parse_ll's rule: [-]DIGITS, no '-' when MIN >= 0, in MIN..MAX. */
static int expected_ll(const char *t, long long min, long long max, long long *out)
{
	const char *p = t + (*t == '-');
	__int128 v = 0;

	if (!is_digit(*p) || (*t == '-' && min >= 0))
		return -1;
	for (; is_digit(*p); p++)
		if ((v = v * 10 + (*p - '0')) > (__int128)LLONG_MAX + 1)
			return -1;
	if (*p)
		return -1;
	if (*t == '-')
		v = -v;
	if (v < LLONG_MIN || v > LLONG_MAX || v < min || v > max)
		return -1;
	*out = (long long)v;
	return 0;
}

static void check_ll(const char *t, const uint8_t **data, size_t *size)
{
	long long min = (long long)bytes8(data, size), max = (long long)bytes8(data, size), got = 0, want = 0;
	int r = parse_ll(t, min, max, &got), e = expected_ll(t, min, max, &want);

	FUZZ_CHECK(r == e, "parse_ll('%s', %lld, %lld) = %d, the rule %d", t, min, max, r, e);
	FUZZ_CHECK(r || got == want, "parse_ll('%s') = %lld, not %lld", t, got, want);
	FUZZ_CHECK(parse_ll(NULL, min, max, &got) == -1, "parse_ll(NULL)");
}

/*
 * parse_double's rule: a decimal number, digits with at most one '.' and
 * a leading '-', no exponent, no hex, no inf or nan, in MIN..MAX, and no
 * underflow or overflow (strtod's ERANGE).
 */
static void check_double(const char *t, const uint8_t **data, size_t *size)
{
	uint64_t a = bytes8(data, size), b = bytes8(data, size);
	double min, max, got = 0;
	const char *p = t + (*t == '-');
	int digits = 0, dots = 0, ok, r;

	memcpy(&min, &a, sizeof min);
	memcpy(&max, &b, sizeof max);
	for (; *p && (is_digit(*p) || *p == '.'); p++)
		*p == '.' ? dots++ : digits++;
	ok = !*p && digits && dots <= 1 && (is_digit(t[0]) || (t[0] == '.' && is_digit(t[1])) ||
					   (t[0] == '-' && is_digit(t[1])));
	r = parse_double(t, min, max, &got);
	if (ok) {
		char *end;
		double v;

		errno = 0;
		v = strtod(t, &end);
		ok = !errno && !*end && v >= min && v <= max;
		FUZZ_CHECK(r || got == v, "parse_double('%s') = %g, not %g", t, got, v);
	}
	FUZZ_CHECK(r == (ok ? 0 : -1), "parse_double('%s', %g, %g) = %d, the rule %d", t, min, max, r, ok);
	FUZZ_CHECK(r || (got >= min && got <= max && !isnan(got)), "out of range");
}

/* A knob name: 1 to 63 of a-z 0-9 _ (so no '/', '.' or '..'). */
static void check_name(const char *t, char *why, size_t whylen)
{
	size_t len = strlen(t);
	int ok = len > 0 && len < KNOB_NAME_MAX && t[strspn(t, "abcdefghijklmnopqrstuvwxyz0123456789_")] == '\0';
	int r = knob_check_name(t, why, whylen);

	FUZZ_CHECK(r == (ok ? 0 : -1), "knob_check_name('%s') = %d, the rule %d", t, r, ok);
}

/* A value by what the knob is; unknown knobs take a plain word. */
static void check_value(const char *name, const char *v, char *why, size_t whylen)
{
	int r = knob_check_value(name, v, why, whylen), known = 0, ok;
	long long n;

	for (int i = 0; knob_known_name(i); i++)
		known |= !strcmp(knob_known_name(i), name);
	if (strlen(v) >= KNOB_VALUE_MAX)
		ok = 0;
	else if (!known)
		ok = *v && v[strspn(v, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.")] == '\0';
	else if (!strcmp(name, "advisor_mode"))
		ok = !strcmp(v, "none") || !strcmp(v, "scan-time");
	else if (!strcmp(name, "run"))
		ok = !strcmp(v, "0") || !strcmp(v, "1");   /* never 2 */
	else
		ok = expected_ll(v, 0, LLONG_MAX, &n) == 0;  /* a number at least; the range is the knob's */
	if (r == 0)
		FUZZ_CHECK(ok, "knob_check_value(%s, '%s') accepts what no rule accepts", name, v);
	else if (!known || !strcmp(name, "advisor_mode") || !strcmp(name, "run"))
		FUZZ_CHECK(!ok, "knob_check_value(%s, '%s') refuses what its rule accepts", name, v);
	FUZZ_CHECK(r == 0 || (whylen == 1 || *why), "no message");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	unsigned which = fuzz_byte(&data, &size) % 4;
	char *t, *name = NULL, *why;
	size_t whylen;

	if (which == 3) {
		unsigned k = fuzz_byte(&data, &size), nknown = 0;
		while (knob_known_name((int)nknown))
			nknown++;
		if (k < 2 * nknown)
			name = fuzz_str((const uint8_t *)knob_known_name((int)(k % nknown)), strlen(knob_known_name((int)(k % nknown))));
	}
	whylen = 1 + fuzz_byte(&data, &size);
	why = fuzz_msgbuf(whylen);
	if (which == 3 && !name)
		name = fuzz_record(&data, &size, '\0');
	t = fuzz_record(&data, &size, '\0');
	switch (which) {
	case 0: check_ll(t, &data, &size); break;
	case 1: check_double(t, &data, &size); break;
	case 2: check_name(t, why, whylen); break;
	case 3:
		if (knob_check_name(name, why, whylen) == 0)
			check_value(name, t, why, whylen);
		break;
	}
	FUZZ_CHECK(fuzz_terminated(why, whylen) || why[0] == '#', "a message not NUL-terminated");
	free(t);
	free(name);
	free(why);
	return 0;
}
