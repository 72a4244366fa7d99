/*
 * fuzz_targets.c - --estimate's TARGET (launcher/common/targets.c):
 * targets_resolve against the grammar of targets.h written out below
 * (comma-separated items: a PID 1..4194304, "all", "cgroup:PATH"): the
 * PIDs come out sorted, without repeats, exactly those given; a malformed
 * item is refused with a message.  Any disagreement is a crash.
 *
 * Only texts that resolve without the file system are handed over: "all"
 * lists /proc and "cgroup:PATH" reads /proc/self/mounts and the cgroup's
 * directory, which would make the harness slow, and its answers depend on
 * the machine's processes rather than on the input.  So an input with an
 * item that targets_resolve would look up (before finding an error in an
 * earlier item) is skipped, and the items it refuses without looking
 * ("cgroup:" with no PATH, a relative PATH with "..", a malformed line of
 * /proc/PID/cgroup: cgroup_item) are kept.  The
 * parser itself needed no change for this: no seam.
 *
 * Input: the TARGET text (up to a NUL), then a byte for the size of the
 * message buffer.
 */
#include <ctype.h>

#include "common/targets.h"
#include "fuzz.h"

/* A PID as targets.c takes one: digits only, 1..4194304. */
static int pid_of(const char *s, size_t len, long *out)
{
	long v = 0;

	if (!len)
		return -1;
	for (size_t i = 0; i < len; i++) {
		if (!isdigit((unsigned char)s[i]))
			return -1;
		if ((v = v * 10 + (s[i] - '0')) > 4194304)
			return -1;
	}
	if (v < 1)
		return -1;
	*out = v;
	return 0;
}

enum verdict { GOOD, BAD, LOOKS };

static int has_dots(const char *s, size_t len)
{
	for (size_t i = 0; i + 1 < len; i++)
		if (s[i] == '.' && s[i + 1] == '.')
			return 1;
	return 0;
}

/*
 * cgroup:SPEC, by the forms of targets.c: a line of /proc/PID/cgroup
 * (N:CONTROLLER:/PATH, CONTROLLER:/PATH; a ':' before any '/') is refused
 * without a lookup when it is not of that shape (the ':' followed by '/',
 * a CONTROLLER under 256 bytes) or its PATH has "..", else looked up; a
 * relative PATH with ".." is refused; anything else is looked up (an
 * absolute one with ".." too: whether it is a directory decides).
 */
static enum verdict cgroup_item(const char *spec, size_t len)
{
	const char *colon = memchr(spec, ':', len), *slash = memchr(spec, '/', len), *q = spec;

	if (!len)
		return BAD;
	if (colon && (!slash || colon < slash)) {
		while (q < spec + len && isdigit((unsigned char)*q))
			q++;
		if (q > spec && q < spec + len && *q == ':') {
			len -= (size_t)(q + 1 - spec);
			spec = q + 1;
		}
		colon = memchr(spec, ':', len);
		if (!colon || colon + 1 >= spec + len || colon[1] != '/' || colon - spec >= 256)
			return BAD;
		len -= (size_t)(colon + 1 - spec);
		spec = colon + 1;
		return has_dots(spec, len) ? BAD : LOOKS;
	}
	if (spec[0] != '/' && has_dots(spec, len))
		return BAD;
	return LOOKS;
}

/* Walks the items: BAD at the first refused one, LOOKS at the first looked up. */
static enum verdict expected(const char *text, long *pids, size_t *n)
{
	const char *p = text;

	*n = 0;
	for (;;) {
		const char *comma = strchr(p, ','), *end = comma ? comma : p + strlen(p);
		size_t len = (size_t)(end - p);
		long pid;

		if (!len)
			return BAD;
		if (len == 3 && !memcmp(p, "all", 3))
			return LOOKS;
		if (len >= 7 && !memcmp(p, "cgroup:", 7))
			return cgroup_item(p + 7, len - 7);
		if (pid_of(p, len, &pid))
			return BAD;
		pids[(*n)++] = pid;
		if (!comma)
			return GOOD;
		p = comma + 1;
	}
}

static int cmp_long(const void *a, const void *b)
{
	long x = *(const long *)a, y = *(const long *)b;

	return (x > y) - (x < y);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = fuzz_record(&data, &size, '\0');
	size_t whylen = 1 + fuzz_byte(&data, &size) * 2, n, kept = 0;
	long *pids = fuzz_alloc((strlen(text) / 2 + 1) * sizeof *pids);
	char *why = fuzz_msgbuf(whylen);
	struct pid_list l;
	enum verdict v = expected(text, pids, &n);
	int r;

	if (v == LOOKS)
		goto out;
	r = targets_resolve(text, &l, NULL, why, whylen);
	FUZZ_CHECK(r == (v == GOOD ? 0 : -1), "targets_resolve('%s') = %d, the grammar %s", text, r,
		   v == GOOD ? "good" : "bad");
	if (r) {
		FUZZ_CHECK(fuzz_terminated(why, whylen) && (whylen == 1 || *why), "no message for '%s'", text);
		FUZZ_CHECK(!l.pids && !l.n, "a refused target left a list");
		goto out;
	}
	qsort(pids, n, sizeof *pids, cmp_long);
	for (size_t i = 0; i < n; i++)
		if (!kept || pids[kept - 1] != pids[i])
			pids[kept++] = pids[i];
	FUZZ_CHECK(l.n == kept, "'%s': %zu PIDs, not %zu", text, l.n, kept);
	for (size_t i = 0; i < kept; i++)
		FUZZ_CHECK(l.pids[i] == pids[i], "'%s': PID %zu is %d, not %ld", text, i, (int)l.pids[i], pids[i]);
	pid_list_free(&l);
	FUZZ_CHECK(!l.pids && !l.n && !l.cap, "pid_list_free left something");
out:
	free(why);
	free(pids);
	free(text);
	return 0;
}
