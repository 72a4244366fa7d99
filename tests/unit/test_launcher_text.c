/*
 * Unit tests of what ksm-run reads and writes as text: JSON escaping,
 * /proc/PID/stat, the number parsers and the human sizes, and whether an
 * ELF file is static or dynamic.  No root.
 */
#include <elf.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/human.h"
#include "common/json.h"
#include "common/parse.h"
#include "common/procfs.h"
#include "run/elf.h"
#include "unit.h"

/* ---- JSON ---- */

static void test_json(void)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	json_str(f, "a\"b\\c\n\x1b[31m\x7f" "é");
	fputc(' ', f);
	json_str(f, NULL);
	fputc(' ', f);
	json_ll(f, LLONG_MIN);
	fputc(' ', f);
	json_ll(f, -42);
	fputc(' ', f);
	json_tristate(f, -1);
	json_tristate(f, 1);
	fclose(f);
	CHECK(!strcmp(text, "\"a\\\"b\\\\c\\u000a\\u001b[31m\\u007f" "é\" null null -42 nulltrue"));
	free(text);
}

/* ---- /proc/PID/stat ---- */

static void test_proc_stat(void)
{
	char text[] = "4242 (a) b) (c) S 17 4242 4242 0 -1 4194560 100 0 0 0 "
		      "250 31 0 0 20 0 1 0 987654 1000 100 18446744073709551615";
	char bad[] = "4242 a S 17";
	struct proc_stat st;

	CHECK(proc_stat_parse(text, &st) == 0);
	CHECK(!strcmp(st.comm, "a) b) (c") && st.state == 'S' && st.ppid == 17);
	CHECK(st.utime == 250 && st.stime == 31 && st.starttime == 987654);
	CHECK(st.flags == 4194560 && !(st.flags & PROC_PF_KTHREAD) && st.start_code == 0);
	CHECK(proc_stat_parse(bad, &st) != 0);
	CHECK(proc_stat_read(getpid(), &st) == 0 && st.ppid == getppid() && st.starttime > 0);
}

/* ---- ELF: static or dynamic ---- */

static void write_elf(const char *path, int with_interp)
{
	Elf64_Ehdr eh = { 0 };
	Elf64_Phdr ph[2] = { { 0 }, { 0 } };
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0755);

	memcpy(eh.e_ident, ELFMAG, SELFMAG);
	eh.e_ident[EI_CLASS] = ELFCLASS64;
	eh.e_ident[EI_DATA] = ELFDATA2LSB;
	eh.e_type = ET_EXEC;
	eh.e_phoff = sizeof eh;
	eh.e_phentsize = sizeof ph[0];
	eh.e_phnum = 2;
	ph[0].p_type = PT_LOAD;
	ph[1].p_type = with_interp ? PT_INTERP : PT_NOTE;
	if (write(fd, &eh, sizeof eh) != sizeof eh || write(fd, ph, sizeof ph) != sizeof ph)
		perror(path);
	close(fd);
}

static void test_elf(void)
{
	char dir[] = "/tmp/ksmenable-unit-XXXXXX", path[64];

	CHECK(exec_kind_of_file("/proc/self/exe") == EXEC_DYNAMIC || exec_kind_of_file("/proc/self/exe") == EXEC_STATIC);
	CHECK(mkdtemp(dir) != NULL);
	snprintf(path, sizeof path, "%s/static", dir);
	write_elf(path, 0);
	CHECK(exec_kind_of_file(path) == EXEC_STATIC);
	snprintf(path, sizeof path, "%s/dynamic", dir);
	write_elf(path, 1);
	CHECK(exec_kind_of_file(path) == EXEC_DYNAMIC);
	snprintf(path, sizeof path, "%s/script", dir);
	FILE *f = fopen(path, "w");
	fputs("#!/bin/sh\nexit 0\n", f);
	fclose(f);
	CHECK(exec_kind_of_file(path) == EXEC_UNKNOWN);
	CHECK(exec_kind_of_file("/nonexistent/ksmenable") == EXEC_UNKNOWN);
	/* Found along PATH as execvp would. */
	setenv("PATH", dir, 1);
	CHECK(exec_kind_of("static") == EXEC_STATIC);
	CHECK(exec_kind_of("dynamic") == EXEC_DYNAMIC);
	CHECK(exec_kind_of("nothing-here") == EXEC_UNKNOWN);
	for (const char *n = "static\0dynamic\0script\0"; *n; n += strlen(n) + 1) {
		snprintf(path, sizeof path, "%s/%s", dir, n);
		unlink(path);
	}
	rmdir(dir);
}

/* ---- numbers ---- */

static void test_numbers(void)
{
	long long v;
	double d;

	CHECK(parse_ll("42", 0, 100, &v) == 0 && v == 42);
	CHECK(parse_ll("-3", -5, 5, &v) == 0 && v == -3);
	CHECK(parse_ll("-0", 0, 5, &v) != 0);
	CHECK(parse_ll("-0", -5, 5, &v) == 0 && v == 0);
	CHECK(parse_ll(" 2", 0, 100, &v) != 0);
	CHECK(parse_ll("+2", 0, 100, &v) != 0);
	CHECK(parse_ll("2 ", 0, 100, &v) != 0);
	CHECK(parse_ll("", 0, 100, &v) != 0);
	CHECK(parse_ll("101", 0, 100, &v) != 0);
	CHECK(parse_ll("99999999999999999999", 0, LLONG_MAX, &v) != 0);
	CHECK(parse_double("0.5", 0.1, 10, &d) == 0 && d == 0.5);
	CHECK(parse_double(".5", 0.1, 10, &d) == 0 && d == 0.5);
	CHECK(parse_double(" 2", 0.1, 10, &d) != 0);
	CHECK(parse_double("0x10", 0.1, 100, &d) != 0);
	CHECK(parse_double("inf", 0.1, 1e300, &d) != 0);
	CHECK(parse_double("nan", 0, 10, &d) != 0);
	CHECK(parse_double("1e2", 0, 1000, &d) != 0);
	CHECK(parse_double("0", 0.1, 10, &d) != 0);
	CHECK(!strcmp(human_bytes(0, false), "0 B"));
	CHECK(!strcmp(human_bytes(1536, false), "1.5 KiB"));
	CHECK(!strcmp(human_bytes(5LL << 20, true), "+5.0 MiB"));
	CHECK(!strcmp(human_bytes(-(3LL << 30), true), "-3.0 GiB"));
	CHECK(!strcmp(human_bytes(LLONG_MIN, false), "n/a"));
}

UNIT_MAIN(UNIT_TEST(test_json), UNIT_TEST(test_proc_stat), UNIT_TEST(test_elf),
	  UNIT_TEST(test_numbers))
