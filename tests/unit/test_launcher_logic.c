/*
 * Unit tests of ksm-run's pure logic, without root and without changing
 * anything on the machine: knob validation, the content table and page hash, JSON escaping, --estimate's
 * targets, the class/selector round trip, /proc/PID/stat parsing, ELF
 * headers, and the number parsers.  Run from the top of the tree.
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
#include "eval/contents.h"
#include "eval/regionclass.h"
#include "eval/targets.h"
#include "host/counters.h"
#include "host/knobs.h"
#include "host/hoststate.h"
#include "maps.h"
#include "run/elf.h"
#include "selector.h"
#include "unit.h"

/* ---- knob validation ---- */

static void test_knobs(void)
{
	char why[256];
	struct knob_set s = { 0 };

	CHECK(knob_check_value("pages_to_scan", "0", why, sizeof why) == 0);
	CHECK(knob_check_value("pages_to_scan", "4294967295", why, sizeof why) == 0);
	CHECK(knob_check_value("pages_to_scan", "4294967296", why, sizeof why) != 0);
	CHECK(knob_check_value("pages_to_scan", "-5", why, sizeof why) != 0);
	CHECK(knob_check_value("pages_to_scan", "12x", why, sizeof why) != 0 &&
	      strstr(why, "pages_to_scan: '12x' is not a number in 0..4294967295"));
	CHECK(knob_check_value("pages_to_scan", "", why, sizeof why) != 0);
	CHECK(knob_check_value("pages_to_scan", "-0", why, sizeof why) != 0);
	CHECK(knob_check_value("pages_to_scan", "00000000000000000000000000000000000000000000000000000000000000001",
			       why, sizeof why) != 0 && strstr(why, "too long"));
	CHECK(knob_check_value("pages_to_scan", "000000000000000000000000000000000000000000000000000000000000001",
			       why, sizeof why) == 0);
	CHECK(knob_check_value("run", "2", why, sizeof why) != 0 && strstr(why, "never writes it"));
	CHECK(knob_check_value("run", "1", why, sizeof why) == 0);
	CHECK(knob_check_value("smart_scan", "yes", why, sizeof why) != 0 && strstr(why, "not 0 or 1"));
	CHECK(knob_check_value("advisor_mode", "scan-time", why, sizeof why) == 0);
	CHECK(knob_check_value("advisor_mode", "fast", why, sizeof why) != 0);
	CHECK(knob_check_value("advisor_max_cpu", "101", why, sizeof why) != 0);
	CHECK(knob_check_value("advisor_max_cpu", "100", why, sizeof why) == 0);
	CHECK(knob_check_value("max_page_sharing", "1", why, sizeof why) != 0);
	CHECK(knob_check_value("some_future_knob", "a value", why, sizeof why) != 0);
	CHECK(knob_check_value("some_future_knob", "12", why, sizeof why) == 0);
	CHECK(knob_check_name("pages_to_scan", why, sizeof why) == 0);
	CHECK(knob_check_name("../run", why, sizeof why) != 0);
	CHECK(knob_check_name("..", why, sizeof why) != 0);
	CHECK(knob_check_name("", why, sizeof why) != 0);
	CHECK(knob_check_name("Run", why, sizeof why) != 0);
	/* Write order: advisor limits, its mode, the rate, ..., run last. */
	knob_put(&s, "run", "1");
	knob_put(&s, "pages_to_scan", "5000");
	knob_put(&s, "advisor_mode", "none");
	knob_put(&s, "some_future_knob", "1");
	knob_put(&s, "advisor_max_cpu", "50");
	knob_put(&s, "pages_to_scan", "6000");     /* replaces */
	knob_order(&s);
	CHECK(s.n == 5 && !strcmp(s.k[0].name, "advisor_max_cpu") && !strcmp(s.k[1].name, "advisor_mode") &&
	      !strcmp(s.k[2].name, "pages_to_scan") && !strcmp(s.k[2].value, "6000") &&
	      !strcmp(s.k[3].name, "some_future_knob") && !strcmp(s.k[4].name, "run"));
	CHECK(!strcmp(knob_known_name(0), "advisor_target_scan_time"));
	for (int i = 0; knob_known_name(i); i++)
		CHECK(knob_check_name(knob_known_name(i), why, sizeof why) == 0);
}

/* ---- the knob state file: planted or corrupt text is refused ---- */

static int state_refused(const char *text, const char *why_part)
{
	static struct hoststate st;
	char buf[40000], why[256] = "";
	int refused;

	snprintf(buf, sizeof buf, "%s", text);
	refused = hoststate_parse(buf, &st, why, sizeof why) != 0;
	if (refused && !strstr(why, why_part))
		fprintf(stderr, "  refused for '%s', not '%s'\n", why, why_part);
	return refused && strstr(why, why_part);
}

static void test_knobstate(void)
{
	static struct hoststate st, again;
	char text[40000], out[40000], why[256];
	size_t n = 0;

	snprintf(text, sizeof text, "# comment\nuser 4242 98765\nknob pages_to_scan 100\nknob run 0\n\n"
		 "knob advisor_mode none\nuser 77 88 daemon 1700000000 0 ksm-run\ntuner 77 88 2\ngen 9\n");
	CHECK(hoststate_parse(text, &st, why, sizeof why) == 0);
	CHECK(st.nusers == 2 && st.users[0].pid == 4242 && st.users[0].start == 98765);
	CHECK(st.users[0].kind == USER_COMMAND && st.users[0].wants_tuning && !strcmp(st.users[0].name, "-"));
	CHECK(st.users[1].kind == USER_DAEMON && !st.users[1].wants_tuning && !strcmp(st.users[1].name, "ksm-run") &&
	      st.users[1].since == 1700000000);
	CHECK(st.tuner == 77 && st.tuner_start == 88 && st.tuner_phase == 2 && st.gen == 9);
	CHECK(st.saved.n == 3 && !strcmp(st.saved.k[0].name, "advisor_mode") &&
	      !strcmp(st.saved.k[2].name, "run"));
	n = hoststate_format(&st, out, sizeof out);
	CHECK(n < sizeof out && hoststate_parse(out, &again, why, sizeof why) == 0);
	CHECK(again.nusers == 2 && again.saved.n == 3 && !strcmp(knob_lookup(&again.saved, "pages_to_scan"), "100"));
	CHECK(again.tuner == 77 && again.gen == 9 && again.users[1].kind == USER_DAEMON);
	/* The same users again, the one of two fields too (found by fuzz_hoststate). */
	for (int i = 0; i < 2; i++)
		CHECK(again.users[i].pid == st.users[i].pid && again.users[i].kind == st.users[i].kind &&
		      again.users[i].since == st.users[i].since && !strcmp(again.users[i].name, st.users[i].name));
	/* What the audit planted: a path as a knob name, users that never die. */
	CHECK(state_refused("knob ../../../../etc/passwd root::0:0\n", "not a knob name"));
	CHECK(state_refused("user 0 0\n", "a pid 1..4194304"));
	CHECK(state_refused("user -5 100\n", "a pid 1..4194304"));
	CHECK(state_refused("user 12 0\n", "start time > 0"));
	CHECK(state_refused("knob run 2\n", "never writes it"));
	CHECK(state_refused("knob pages_to_scan -0\n", "not a number"));
	CHECK(state_refused("knob pages_to_scan 1 2\n", "a knob line is NAME VALUE"));
	CHECK(state_refused("knob pages_to_scan\n", "a knob line is NAME VALUE"));
	CHECK(state_refused("user 12 34 command 5 1\n", "2 or 6 fields"));
	CHECK(state_refused("user 12 34 root 5 1 x\n", "a command or a daemon"));
	CHECK(state_refused("user 12 34 command 5 2 x\n", "a time, 0 or 1, and a plain name"));
	CHECK(state_refused("tuner 12 34 7\n", "PHASE (0..4)"));
	CHECK(state_refused("tuner 12 34 1\ntuner 13 34 1\n", "once"));
	CHECK(state_refused("gen -1\n", "a gen line is a number"));
	/* The phase a holder left in, kept while nobody holds the tuning. */
	CHECK(state_refused("phase 0\n", "a phase line is a PHASE (1..4)"));
	CHECK(state_refused("phase 2\ntuner 12 34 2\n", "without a phase line"));
	CHECK(state_refused("tuner 12 34 2\nphase 2\n", "without a tuner line"));
	CHECK(state_refused("phase 2\nphase 2\n", "once"));
	snprintf(text, sizeof text, "user 4242 98765\nphase 2\n");
	CHECK(hoststate_parse(text, &st, why, sizeof why) == 0 && !st.tuner && st.tuner_phase == HELD_STEADY);
	n = hoststate_format(&st, out, sizeof out);
	CHECK(n < sizeof out && strstr(out, "\nphase 2\n") && !strstr(out, "tuner "));
	CHECK(hoststate_parse(out, &again, why, sizeof why) == 0 && again.tuner_phase == HELD_STEADY && !again.tuner);
	/* The processes --attach enabled: apart from the instances, kept by a round trip. */
	snprintf(text, sizeof text, "user 4242 98765\ntarget 500 600 gunicorn\ntarget 501 601 -\n");
	CHECK(hoststate_parse(text, &st, why, sizeof why) == 0 && st.nusers == 1 && st.ntargets == 2);
	CHECK(st.targets[0].pid == 500 && st.targets[0].start == 600 && !strcmp(st.targets[0].name, "gunicorn"));
	n = hoststate_format(&st, out, sizeof out);
	CHECK(n < sizeof out && strstr(out, "\ntarget 500 600 gunicorn\ntarget 501 601 -\n"));
	CHECK(hoststate_parse(out, &again, why, sizeof why) == 0 && again.ntargets == 2 &&
	      again.targets[1].pid == 501 && again.targets[1].start == 601 && !strcmp(again.targets[1].name, "-"));
	CHECK(state_refused("target 0 5 x\n", "a target line is PID"));
	CHECK(state_refused("target 5 0 x\n", "a target line is PID"));
	CHECK(state_refused("target 5 6\n", "a target line is PID"));
	CHECK(state_refused("target 5 6 x y\n", "a target line is PID"));
	CHECK(state_refused("target 5 6 \x01\n", "a target line is PID"));
	CHECK(state_refused("rm -rf /\n", "unknown keyword"));
	CHECK(state_refused("knob run 1\nknob run 0\n", "twice"));
	n = 0;
	for (int i = 0; i <= MAX_USERS; i++)
		n += (size_t)snprintf(text + n, sizeof text - n, "user %d 1000\n", i + 1);
	CHECK(state_refused(text, "more than 256 users"));
	n = 0;
	for (int i = 0; i <= MAX_TARGETS; i++)
		n += (size_t)snprintf(text + n, sizeof text - n, "target %d 1000 t\n", i + 1);
	CHECK(state_refused(text, "more than 256 targets"));
}

/* ---- the content table and the page hash ---- */

static void test_contents(void)
{
	struct contents t;
	size_t page = 4096;
	unsigned char *a = calloc(1, page), *b = calloc(1, page);
	int zero;
	uint64_t h0, ha, hb;

	h0 = page_hash(a, page, &zero);
	CHECK(zero);
	a[page - 1] = 1;
	ha = page_hash(a, page, &zero);
	CHECK(!zero && ha != h0);
	memcpy(b, a, page);
	hb = page_hash(b, page, &zero);
	CHECK(ha == hb);
	b[17] ^= 0x80;
	CHECK(page_hash(b, page, &zero) != ha);
	/* A 16 KiB page hashes all of itself. */
	unsigned char *big = calloc(1, 16384);
	uint64_t hbig = page_hash(big, 16384, &zero);
	big[16383] = 1;
	CHECK(page_hash(big, 16384, &zero) != hbig);
	free(big);

	CHECK(contents_init(&t) == 0);
	/* Content 1 held 3 times by process 0 and twice by process 1; content
	 * 2 once by each; 100,000 unique contents force the table to grow. */
	for (int i = 0; i < 3; i++)
		contents_add(&t, 0x1111111111110000ULL, 0);
	contents_add(&t, 0x2222222222220000ULL, 0);
	int add_failed = 0;
	for (uint64_t i = 0; i < 100000; i++)
		add_failed += contents_add(&t, (i + 7) * 0x9e3779b97f4a7c15ULL << 16, 0) != 0;
	CHECK(add_failed == 0);
	for (int i = 0; i < 2; i++)
		contents_add(&t, 0x1111111111110000ULL, 1);
	contents_add(&t, 0x2222222222220000ULL, 1);
	CHECK(contents_count(&t, 0x1111111111110000ULL) == 5);
	CHECK(contents_count(&t, 0x2222222222220000ULL) == 2);
	CHECK(contents_count(&t, 0x3333333333330000ULL) == 0);
	CHECK(t.used == 100002);
	/* (content, process) pairs: 2 + 2 + 100,000 */
	CHECK(t.process_pairs == 100004);
	CHECK(contents_bytes(&t) >= t.used * 12 && contents_bytes(&t) <= t.used * 24);
	contents_free(&t);
	free(a);
	free(b);
}

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

/* ---- targets ---- */

static void test_targets(void)
{
	struct pid_list l;
	char why[512], text[64];

	snprintf(text, sizeof text, "%d,1,%d", (int)getppid(), (int)getppid());
	CHECK(targets_resolve(text, &l, why, sizeof why) == 0 && l.n == 2 && l.pids[0] == 1 &&
	      l.pids[1] == getppid());
	pid_list_free(&l);
	CHECK(targets_resolve("12x", &l, why, sizeof why) < 0 && strstr(why, "'12x': not a PID"));
	CHECK(targets_resolve("99999999", &l, why, sizeof why) < 0 && strstr(why, "'99999999': no such process"));
	CHECK(targets_resolve("0", &l, why, sizeof why) < 0 && strstr(why, "'0': not a PID"));
	CHECK(targets_resolve("1,,2", &l, why, sizeof why) < 0 && strstr(why, "empty item"));
	CHECK(targets_resolve("0", &l, why, sizeof why) < 0);
	CHECK(targets_resolve("-3", &l, why, sizeof why) < 0);
	CHECK(targets_resolve("cgroup:", &l, why, sizeof why) < 0 && strstr(why, "needs a PATH"));
	CHECK(targets_resolve("cgroup:../x", &l, why, sizeof why) < 0 && strstr(why, "'..'"));
	CHECK(targets_resolve("cgroup:/no/such/cgroup", &l, why, sizeof why) < 0 &&
	      strstr(why, "no such cgroup"));
	CHECK(targets_resolve("cgroup:no-such-ksmenable-group", &l, why, sizeof why) < 0 &&
	      strstr(why, "not found in any mounted cgroup hierarchy"));
	/* The largest PID the kernel allows, surely not running: no process. */
	CHECK(targets_resolve("4194304", &l, why, sizeof why) == 0 && l.n == 1);
	pid_list_free(&l);
	CHECK(targets_resolve("4194305", &l, why, sizeof why) < 0);
	CHECK(targets_resolve("all", &l, why, sizeof why) == 0 && l.n >= 1);
	for (size_t i = 0; i < l.n; i++)
		CHECK(l.pids[i] != getpid() && (i == 0 || l.pids[i - 1] < l.pids[i]));
	pid_list_free(&l);
}

/* ---- a class name, its selector, and the library's parser agree ---- */

static void test_class_selector(void)
{
	static const char *const paths[] = {
		"/usr/lib/x86_64-linux-gnu/libc.so.6", "/opt/app/weird*name?[x].so",
		"/srv/with,comma/lib.so", "/back\\slash", "/a b/c",
	};
	struct selector_list list;
	char name[4200], sel[4400], why[256], other[64];
	struct region r = { .start = 0x1000, .end = 0x2000, .mergeable = -1, .ksm_kb = -1, .anon_kb = -1 };

	for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++) {
		r.cls = REGION_FILE;
		r.name = paths[i];
		r.name_len = strlen(paths[i]);
		region_class_name(&r, name, sizeof name);
		CHECK(!strcmp(name, paths[i]));
		CHECK(class_selector(name, sel, sizeof sel) == 0);
		CHECK(selector_parse(&list, sel, why, sizeof why) == 0);
		CHECK(selector_matches(&list, &r));
		/* ...and not a neighbour with one character changed. */
		snprintf(other, sizeof other, "%sX", paths[i]);
		r.name = other;
		r.name_len = strlen(other);
		CHECK(!selector_matches(&list, &r));
	}
	r.cls = REGION_ANON_NAMED;
	r.name = "cache*1";
	r.name_len = 7;
	region_class_name(&r, name, sizeof name);
	CHECK(!strcmp(name, "anon:cache*1"));
	CHECK(class_selector(name, sel, sizeof sel) == 0 && !strcmp(sel, "anon:cache\\*1"));
	CHECK(selector_parse(&list, sel, why, sizeof why) == 0 && selector_matches(&list, &r));
	r.name = "cacheX1";
	CHECK(!selector_matches(&list, &r));
	r.cls = REGION_HEAP;
	region_class_name(&r, name, sizeof name);
	CHECK(class_selector(name, sel, sizeof sel) == 0 && !strcmp(sel, "heap"));
	CHECK(class_selector("/x", sel, 4) < 0);       /* does not fit */
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

UNIT_MAIN(UNIT_TEST(test_knobs), UNIT_TEST(test_knobstate), UNIT_TEST(test_contents),
	  UNIT_TEST(test_json), UNIT_TEST(test_targets), UNIT_TEST(test_class_selector),
	  UNIT_TEST(test_proc_stat), UNIT_TEST(test_elf), UNIT_TEST(test_numbers))
