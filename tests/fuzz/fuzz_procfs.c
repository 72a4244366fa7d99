/*
 * fuzz_procfs.c - the two /proc files that another user shapes and
 * ksm-run reads as root: /proc/PID/stat (launcher/common/procfs.c,
 * proc_stat_parse: any process names itself, and its name may hold
 * spaces, parentheses and newlines) and /proc/PID/cgroup
 * (launcher/host/groups.c, cgroup_of_text: cgroup names are chosen by
 * whoever may make a cgroup, a delegated user or a container runtime).
 *
 * The oracles are written from proc(5), not from the parsers:
 *  - stat: "PID (COMM) STATE PPID PGRP SESSION TTY TPGID FLAGS MINFLT
 *    CMINFLT MAJFLT CMAJFLT UTIME STIME CUTIME CSTIME PRIORITY NICE
 *    NUM_THREADS ITREALVALUE STARTTIME ...": a line is built from the
 *    input's fields around a COMM of any bytes but NUL, and what the
 *    parser returns must be those fields (COMM cut to the 31 bytes that
 *    struct proc_stat keeps).  Raw text must be refused or parsed with a
 *    terminated COMM, never read past.
 *  - cgroup: lines "HIERARCHY-ID:CONTROLLER-LIST:PATH"; the group is the
 *    PATH of the last line whose list names the memory controller, else
 *    that of the last cgroup v2 line ("0::PATH"), a PATH being taken
 *    only when it starts with '/'; none, or one that does not fit the
 *    output buffer, is -1.
 * Any disagreement is a crash.
 *
 * Input: a byte that chooses the case (even: stat, odd: cgroup) and, for
 * the stat line built from fields, the fields as NUL-separated records;
 * otherwise the text itself.  A byte after the choice sizes the output
 * buffer of cgroup_of_text.
 */
#include <stdbool.h>

#include "common/procfs.h"
#include "fuzz.h"
#include "host/groups.h"

/* An unsigned number of the input's next record (digits only: anything else, 0). */
static unsigned long long number_of(const uint8_t **data, size_t *size)
{
	char *s = fuzz_record(data, size, '\0');
	unsigned long long v = 0;

	for (const char *p = s; *p >= '0' && *p <= '9' && p - s < 18; p++)
		v = v * 10 + (unsigned long long)(*p - '0');
	free(s);
	return v;
}

/* A stat line of proc(5)'s layout around COMM, parsed back field by field. */
static void stat_round_trip(const uint8_t *data, size_t size)
{
	char *comm = fuzz_record(&data, &size, '\0');
	unsigned state_byte = fuzz_byte(&data, &size);
	char state = "RSDZTtXxKWPI"[state_byte % 12];
	unsigned long long ppid = number_of(&data, &size) % 4194305;
	unsigned long long utime = number_of(&data, &size), stime = number_of(&data, &size);
	unsigned long long start = number_of(&data, &size);
	size_t comm_len = strlen(comm), line_len = comm_len + 512;
	char *line = fuzz_alloc(line_len);
	struct proc_stat st;
	int n;

	n = snprintf(line, line_len,
		     "4242 (%s) %c %llu 4242 4242 0 -1 4194560 12 0 0 0 %llu %llu 0 0 20 0 1 0 %llu "
		     "12345678 321 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0\n",
		     comm, state, ppid, utime, stime, start);
	FUZZ_CHECK(n > 0 && (size_t)n < line_len, "the line fits");
	FUZZ_CHECK(proc_stat_parse(line, &st) == 0, "a well-formed line is refused: %s", line);
	FUZZ_CHECK(st.state == state, "state %c, want %c", st.state, state);
	FUZZ_CHECK((unsigned long long)st.ppid == ppid, "ppid %d, want %llu", (int)st.ppid, ppid);
	FUZZ_CHECK(st.utime == utime && st.stime == stime, "utime/stime");
	FUZZ_CHECK(st.starttime == start, "starttime %llu, want %llu", st.starttime, start);
	FUZZ_CHECK(fuzz_terminated(st.comm, sizeof st.comm), "comm not terminated");
	FUZZ_CHECK(strlen(st.comm) == (comm_len < sizeof st.comm ? comm_len : sizeof st.comm - 1) &&
			   !memcmp(st.comm, comm, strlen(st.comm)),
		   "comm '%s', want the first bytes of '%s'", st.comm, comm);
	free(line);
	free(comm);
}

/* Raw text: refused, or a terminated COMM that is what stands between the first '(' and the last ')'. */
static void stat_raw(const uint8_t *data, size_t size)
{
	char *text = fuzz_str(data, size);
	const char *open_p = strchr(text, '('), *close_p = strrchr(text, ')');
	struct proc_stat st;

	memset(&st, 0x5a, sizeof st);
	if (proc_stat_parse(text, &st) == 0) {
		size_t want;

		FUZZ_CHECK(open_p && close_p && open_p < close_p, "parsed a line without (COMM)");
		want = (size_t)(close_p - open_p - 1);
		if (want > sizeof st.comm - 1)
			want = sizeof st.comm - 1;
		FUZZ_CHECK(fuzz_terminated(st.comm, sizeof st.comm) && strlen(st.comm) <= want &&
				   !memcmp(st.comm, open_p + 1, strlen(st.comm)),
			   "comm is not the start of the name");
	}
	free(text);
}

/* The group by proc(5)'s cgroup lines; NULL when none. */
static const char *group_by_format(const char *text, size_t text_len)
{
	const char *memory = NULL, *v2 = NULL;
	const char *line = text, *end = text + text_len;

	while (line < end) {
		const char *nl = memchr(line, '\n', (size_t)(end - line));
		const char *line_end = nl ? nl : end;
		const char *first = memchr(line, ':', (size_t)(line_end - line));
		const char *second = first ? memchr(first + 1, ':', (size_t)(line_end - first - 1)) : NULL;

		if (second && second + 1 < line_end && second[1] == '/') {
			const char *list = first + 1, *p = list;
			bool names_memory = false;

			while (p <= second) {
				const char *item_end = memchr(p, ',', (size_t)(second - p));

				if (!item_end)
					item_end = second;
				if (item_end - p == 6 && !memcmp(p, "memory", 6))
					names_memory = true;
				p = item_end + 1;
			}
			if (first == line + 1 && line[0] == '0' && second == first + 1)
				v2 = second + 1;
			else if (names_memory)
				memory = second + 1;
		}
		line = line_end + 1;
	}
	return memory ? memory : v2;
}

static void cgroup_text(const uint8_t *data, size_t size)
{
	size_t out_len = fuzz_byte(&data, &size) % 64 + 1;
	char *text = fuzz_str(data, size), *work = fuzz_str(data, size), *out = fuzz_msgbuf(out_len);
	size_t text_len = strlen(text);       /* the parser reads a C string: up to a NUL */
	const char *want = group_by_format(text, text_len);
	size_t want_len = 0;
	int r = cgroup_of_text(work, out, out_len);

	if (want) {
		const char *nl = memchr(want, '\n', (size_t)(text + text_len - want));

		want_len = nl ? (size_t)(nl - want) : strlen(want);
	}
	if (!want || want_len >= out_len) {
		FUZZ_CHECK(r == -1, "found a group where the format has none (or it cannot fit)");
	} else {
		FUZZ_CHECK(r == 0, "no group where the format has one");
		FUZZ_CHECK(strlen(out) == want_len && !memcmp(out, want, want_len), "group '%s'", out);
	}
	free(text);
	free(work);
	free(out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	unsigned choice = fuzz_byte(&data, &size);

	if (choice & 1)
		cgroup_text(data, size);
	else if (choice & 2)
		stat_round_trip(data, size);
	else
		stat_raw(data, size);
	return 0;
}
