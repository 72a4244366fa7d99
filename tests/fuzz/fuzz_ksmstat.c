/*
 * fuzz_ksmstat.c - /proc/PID/ksm_stat (preload/core/ksmstat.c):
 * ksm_stat_next walks the text against the format of ksmstat.h written
 * out below ("NAME VALUE" or "NAME: VALUE" lines; a line without a name is
 * skipped), and ksm_stat_parse reads the same text as a file, through
 * /proc/self/fd of a memory file, as it reads /proc/PID/ksm_stat: its
 * fields must be those of the last line of each name within the first
 * 1023 bytes, whatever pieces the reads come in (short reads and EINTR;
 * an EIO leaves every field -1: fuzz_read.h).  Any disagreement is a crash.
 *
 * Input: a byte for the reads (fuzz_read_start), the text of a ksm_stat file.
 */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>

#include "fuzz.h"
#include "fuzz_read.h"
#include "ksmstat.h"

/*
 * The format's fields, by name, and what each holds: a number (the kernel
 * writes [-]DIGITS) or yes/no.  The reference's own reading of a value,
 * written from that format and not from ksmstat.c: anything else is
 * unknown, -1, as a field the kernel lacks.
 */
static const struct {
	const char *name;
	bool yes_no;
	size_t offset;
} fields[] = {
	{ "ksm_rmap_items", false, offsetof(struct ksmenable_stat, rmap_items) },
	{ "ksm_merging_pages", false, offsetof(struct ksmenable_stat, merging_pages) },
	{ "ksm_zero_pages", false, offsetof(struct ksmenable_stat, zero_pages) },
	{ "ksm_process_profit", false, offsetof(struct ksmenable_stat, process_profit) },
	{ "ksm_merge_any", true, offsetof(struct ksmenable_stat, merge_any) },
	{ "ksm_mergeable", true, offsetof(struct ksmenable_stat, mergeable) },
};

static long long format_number(const char *v)
{
	const char *digits = v + (v[0] == '-');
	long long n;

	if (!*digits || strspn(digits, "0123456789") != strlen(digits))
		return -1;
	errno = 0;
	n = strtoll(v, NULL, 10);
	return errno == ERANGE ? -1 : n;
}

static void note(struct ksmenable_stat *st, const char *name, const char *value)
{
	for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) {
		if (strcmp(name, fields[i].name))
			continue;
		if (fields[i].yes_no)
			*(int *)((char *)st + fields[i].offset) = !strcmp(value, "yes") ? 1 : !strcmp(value, "no") ? 0 : -1;
		else
			*(long long *)((char *)st + fields[i].offset) = format_number(value);
	}
}

/*
 * Walk TEXT (a C string) with ksm_stat_next and line by line by the
 * format, side by side; returns the fields by the format in *WANT.
 */
static void walk(const char *text, struct ksmenable_stat *want)
{
	char *copy = fuzz_str((const uint8_t *)text, strlen(text)), *cursor = copy;
	const char *line = text;
	const char *name, *value;

	*want = (struct ksmenable_stat){ -1, -1, -1, -1, -1, -1 };
	for (;;) {
		const char *sep = NULL;
		size_t len = 0;
		bool have = false;
		int got;

		/* The next line that has a name: text before a ':' or ' ', not empty. */
		while (*line && !have) {
			len = strcspn(line, "\n");
			sep = line + strcspn(line, ": \n");
			have = sep < line + len && sep > line;
			if (!have)
				line += len + (line[len] == '\n');
		}
		got = ksm_stat_next(&cursor, &name, &value);
		FUZZ_CHECK(got == have, "ksm_stat_next %d, the format %d, at '%.*s'", got, have, (int)len, line);
		if (!got)
			break;
		{
			const char *v = sep + strspn(sep, ": ");
			size_t vlen = (size_t)(line + len - v);

			if (v > line + len)
				v = line + len, vlen = 0;
			FUZZ_CHECK(strlen(name) == (size_t)(sep - line) && !memcmp(name, line, (size_t)(sep - line)),
				   "name '%s', not '%.*s'", name, (int)(sep - line), line);
			FUZZ_CHECK(strlen(value) == vlen && !memcmp(value, v, vlen),
				   "value '%s', not '%.*s'", value, (int)vlen, v);
			FUZZ_CHECK(name >= copy && value >= copy && cursor >= value && cursor <= copy + strlen(text),
				   "pointers out of the text");
			note(want, name, value);
		}
		line += len + (line[len] == '\n');
	}
	FUZZ_CHECK(ksm_stat_next(&cursor, &name, &value) == 0, "a walk that goes on after its end");
	free(copy);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	unsigned reads = fuzz_byte(&data, &size);
	char *text = fuzz_str(data, size), path[64];
	struct ksmenable_stat want, got;
	int fd, r;

	/* What ksm_stat_next sees of the text in memory: up to its first NUL. */
	walk(text, &want);
	/* What ksm_stat_parse reads of the file: 1023 bytes, up to a NUL. */
	if (size > 1023)
		text[1023] = '\0';
	walk(text, &want);
	fd = fuzz_memfd(data, size);
	snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
	fuzz_read_start(reads, size);
	r = ksm_stat_parse(path, &got);
	fuzz_read_stop();
	if (fuzz_read_plan.eio_done) {
		FUZZ_CHECK(r == -1 && got.rmap_items == -1 && got.merging_pages == -1 && got.zero_pages == -1 &&
			   got.process_profit == -1 && got.merge_any == -1 && got.mergeable == -1,
			   "a failed read: %d, fields not all -1", r);
		want = got;
	} else {
		FUZZ_CHECK(r == 0, "ksm_stat_parse cannot read %s", path);
	}
	FUZZ_CHECK(got.rmap_items == want.rmap_items && got.merging_pages == want.merging_pages &&
		   got.zero_pages == want.zero_pages && got.process_profit == want.process_profit &&
		   got.merge_any == want.merge_any && got.mergeable == want.mergeable,
		   "ksm_stat_parse: %lld %lld %lld %lld %d %d, not %lld %lld %lld %lld %d %d",
		   got.rmap_items, got.merging_pages, got.zero_pages, got.process_profit, got.merge_any,
		   got.mergeable, want.rmap_items, want.merging_pages, want.zero_pages, want.process_profit,
		   want.merge_any, want.mergeable);
	FUZZ_CHECK(ksm_stat_parse("/nonexistent/ksm_stat", &got) == -1 && got.rmap_items == -1 &&
		   got.mergeable == -1, "a missing file");
	free(text);
	return 0;
}
