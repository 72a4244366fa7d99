/*
 * fuzz_json.c - the JSON string writer (json_str, launcher/common/json.c,
 * through json_char of preload/core/utf8.c) against a strict decoder
 * written here, apart from the writer's code: whatever bytes a command
 * name or a cgroup path holds, the output is one JSON string in
 * well-formed UTF-8 (RFC 8259, and the Unicode standard's table 3-7 of
 * well-formed byte sequences), it ends where it should, it holds no raw
 * control character (C0, DEL, C1), and it decodes to the input's
 * characters with each byte that starts no well-formed sequence read as
 * U+FFFD.  Any disagreement is a crash.
 *
 * Input: the bytes of the string (up to the first NUL, as json_str sees it).
 */
#include <stdbool.h>

#include "common/json.h"
#include "fuzz.h"

/*
 * The well-formed sequence at S (N bytes left): its length, and its code
 * point in *CP; 0 when S starts none.  Table 3-7 of the Unicode standard,
 * range by range.
 */
static size_t well_formed(const uint8_t *s, size_t n, uint32_t *cp)
{
	static const struct { uint8_t lead_lo, lead_hi, second_lo, second_hi; size_t len; } rows[] = {
		{ 0xc2, 0xdf, 0x80, 0xbf, 2 },
		{ 0xe0, 0xe0, 0xa0, 0xbf, 3 },
		{ 0xe1, 0xec, 0x80, 0xbf, 3 },
		{ 0xed, 0xed, 0x80, 0x9f, 3 },
		{ 0xee, 0xef, 0x80, 0xbf, 3 },
		{ 0xf0, 0xf0, 0x90, 0xbf, 4 },
		{ 0xf1, 0xf3, 0x80, 0xbf, 4 },
		{ 0xf4, 0xf4, 0x80, 0x8f, 4 },
	};

	if (!n)
		return 0;
	if (s[0] <= 0x7f) {
		*cp = s[0];
		return 1;
	}
	for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++) {
		size_t len = rows[r].len;
		uint32_t v;

		if (s[0] < rows[r].lead_lo || s[0] > rows[r].lead_hi)
			continue;
		if (n < len || s[1] < rows[r].second_lo || s[1] > rows[r].second_hi)
			return 0;
		for (size_t i = 2; i < len; i++)
			if (s[i] < 0x80 || s[i] > 0xbf)
				return 0;
		v = s[0] & (len == 2 ? 0x1f : len == 3 ? 0x0f : 0x07);
		for (size_t i = 1; i < len; i++)
			v = v << 6 | (s[i] & 0x3f);
		*cp = v;
		return len;
	}
	return 0;
}

static int hex_value(uint8_t c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Four hex digits at S (N bytes left) into *V; false when they are not. */
static bool hex4(const uint8_t *s, size_t n, uint32_t *v)
{
	*v = 0;
	if (n < 4)
		return false;
	for (int i = 0; i < 4; i++) {
		int h = hex_value(s[i]);
		if (h < 0)
			return false;
		*v = *v << 4 | (uint32_t)h;
	}
	return true;
}

/*
 * Decodes the JSON text OUT (N bytes): exactly one string and nothing
 * after it.  Its code points go to CPS (room for N); returns how many.
 */
static size_t decode_json_string(const uint8_t *out, size_t n, uint32_t *cps)
{
	size_t i = 1, k = 0;

	FUZZ_CHECK(n >= 2 && out[0] == '"', "not a string: %zu bytes", n);
	for (;;) {
		uint32_t cp, low;
		size_t len;

		FUZZ_CHECK(i < n, "no closing quote");
		if (out[i] == '"') {
			FUZZ_CHECK(i + 1 == n, "%zu bytes after the string", n - i - 1);
			return k;
		}
		FUZZ_CHECK(out[i] >= 0x20, "raw control byte 0x%02x at %zu", out[i], i);
		FUZZ_CHECK(out[i] != 0x7f, "raw DEL at %zu", i);
		if (out[i] != '\\') {
			len = well_formed(out + i, n - i, &cp);
			FUZZ_CHECK(len, "byte 0x%02x at %zu starts no well-formed UTF-8", out[i], i);
			FUZZ_CHECK(cp < 0x80 || cp > 0x9f, "raw C1 control U+%04X at %zu", (unsigned)cp, i);
			cps[k++] = cp;
			i += len;
			continue;
		}
		FUZZ_CHECK(i + 1 < n, "backslash at the end");
		switch (out[i + 1]) {
		case '"': cp = '"'; break;
		case '\\': cp = '\\'; break;
		case '/': cp = '/'; break;
		case 'b': cp = '\b'; break;
		case 'f': cp = '\f'; break;
		case 'n': cp = '\n'; break;
		case 'r': cp = '\r'; break;
		case 't': cp = '\t'; break;
		case 'u':
			FUZZ_CHECK(hex4(out + i + 2, n - i - 2, &cp), "bad \\u escape at %zu", i);
			if (cp >= 0xd800 && cp <= 0xdbff) {
				FUZZ_CHECK(i + 12 <= n && out[i + 6] == '\\' && out[i + 7] == 'u' &&
					   hex4(out + i + 8, n - i - 8, &low) && low >= 0xdc00 && low <= 0xdfff,
					   "a high surrogate alone at %zu", i);
				cps[k++] = 0x10000 + ((cp - 0xd800) << 10) + (low - 0xdc00);
				i += 12;
				continue;
			}
			FUZZ_CHECK(cp < 0xdc00 || cp > 0xdfff, "a low surrogate alone at %zu", i);
			cps[k++] = cp;
			i += 6;
			continue;
		default:
			FUZZ_CHECK(0, "unknown escape \\%c at %zu", out[i + 1], i);
		}
		cps[k++] = cp;
		i += 2;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = fuzz_str(data, size), *out = NULL;
	size_t n = strlen(s), outlen = 0, k = 0, got;
	uint32_t *want = fuzz_alloc((n + 1) * sizeof *want), *cps;
	FILE *f = open_memstream(&out, &outlen);

	if (!f)
		abort();
	json_str(f, s);
	if (fclose(f))
		abort();
	/* What a reader must get: each well-formed character, else one U+FFFD per byte. */
	for (size_t i = 0; i < n;) {
		uint32_t cp;
		size_t len = well_formed((const uint8_t *)s + i, n - i, &cp);

		want[k++] = len ? cp : 0xfffd;
		i += len ? len : 1;
	}
	cps = fuzz_alloc((outlen + 1) * sizeof *cps);
	got = decode_json_string((const uint8_t *)out, outlen, cps);
	FUZZ_CHECK(got == k, "%zu characters read back, %zu written", got, k);
	for (size_t i = 0; i < k; i++)
		FUZZ_CHECK(cps[i] == want[i], "character %zu: U+%04X read back, U+%04X written", i,
			   (unsigned)cps[i], (unsigned)want[i]);
	free(cps);
	free(want);
	free(out);
	free(s);
	return 0;
}
