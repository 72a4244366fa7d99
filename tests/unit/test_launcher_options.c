/*
 * Unit tests of ksm-run's option table (launcher/options.c): every option
 * fed to every mode is taken exactly when the table says the mode takes
 * it, and refused otherwise with 125 and "--NAME is not an option of MODE",
 * before any value is read; and the refusals the issue of silent no-ops
 * asked for, written out apart from the table.  Each parse runs in a child,
 * since a refusal ends the process.  No root, nothing changed.
 */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "options.h"
#include "unit.h"

/* Each mode's command line: the words before the option under test, and after. */
static const struct {
	enum cli_mode mode;
	const char *before[3], *after[3];
} lines[] = {
	{ CLI_RUN, { NULL }, { "--", "true", NULL } },
	{ CLI_PROFILE, { "--profile", NULL }, { "--", "true", NULL } },
	{ CLI_ESTIMATE, { "--estimate=1", NULL }, { NULL } },
	{ CLI_COMBINE, { "--combine", NULL }, { "a.kfp", "b.kfp", NULL } },
	{ CLI_STATUS, { "--status", NULL }, { NULL } },
	{ CLI_RESTORE, { "--restore", NULL }, { NULL } },
	{ CLI_DAEMON, { "--daemon", NULL }, { NULL } },
	{ CLI_ATTACH, { "--attach=1", NULL }, { NULL } },
	{ CLI_DETACH, { "--detach=1", NULL }, { NULL } },
	{ CLI_CHECK_CONFIG, { "--check-config=/nonexistent", NULL }, { NULL } },
	{ CLI_ATTACH_NO_WAIT, { "--attach=1", "--no-wait", NULL }, { NULL } },
};

/* Parses ARGV in a child; its exit status (0: parsed), and its stderr in ERR. */
static int parse_in_child(char **argv, char *err, size_t len)
{
	int fds[2], status, argc = 0;
	size_t got = 0;
	ssize_t n;
	pid_t pid;

	while (argv[argc])
		argc++;
	if (pipe(fds))
		return -1;
	fflush(NULL);
	if ((pid = fork()) == 0) {
		static struct opts o;

		close(fds[0]);
		dup2(fds[1], 2);
		if (!freopen("/dev/null", "w", stdout))
			_exit(99);
		options_parse(argc, argv, &o);
		_exit(0);
	}
	close(fds[1]);
	while (got + 1 < len && (n = read(fds[0], err + got, len - got - 1)) > 0)
		got += (size_t)n;
	err[got] = '\0';
	close(fds[0]);
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

/* "--NAME", with a value when it takes one (any value: a refusal comes before values are read). */
static int parse_with(const struct option_spec *s, size_t line, char *err, size_t len)
{
	char opt[64], *argv[10];
	int argc = 0;

	snprintf(opt, sizeof opt, "--%s%s", s->name, s->has_arg == 1 ? "=1" : "");
	argv[argc++] = "ksm-run";
	for (int i = 0; lines[line].before[i]; i++)
		argv[argc++] = (char *)lines[line].before[i];
	argv[argc++] = opt;
	for (int i = 0; lines[line].after[i]; i++)
		argv[argc++] = (char *)lines[line].after[i];
	argv[argc] = NULL;
	return parse_in_child(argv, err, len);
}

/* The options that choose the mode, or answer at once, are not fed to the others. */
static int chooses_mode(const struct option_spec *s)
{
	static const char *const names[] = {
		"help", "version", "list-options", "list-knobs", "estimate", "combine", "profile",
		"status", "restore", "daemon", "attach", "detach", "no-wait", "check-config",
	};

	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		if (!strcmp(s->name, names[i]))
			return 1;
	return 0;
}

static void test_every_option_in_every_mode(void)
{
	char err[4096], want[96];
	int cases = 0;

	for (const struct option_spec *s = options_table(); s->name; s++) {
		if (chooses_mode(s))
			continue;
		for (size_t l = 0; l < sizeof lines / sizeof lines[0]; l++) {
			int status = parse_with(s, l, err, sizeof err);
			int taken = (s->modes & M(lines[l].mode)) != 0;

			snprintf(want, sizeof want, "--%s is not an option of ", s->name);
			cases++;
			if (taken ? strstr(err, "is not an option of") == NULL : status == 125 && strstr(err, want) != NULL)
				CHECK(1);
			else {
				fprintf(stderr, "--%s in mode %s: status %d, taken by the table %d: %s", s->name,
					cli_mode_name(lines[l].mode), status, taken, err);
				CHECK(0);
			}
		}
	}
	CHECK(cases > 400);             /* every option, every mode: the loop really ran */
}

/* Refused, with 125 and the words WANT. */
static void refused(const char *want, char **argv)
{
	char err[4096];
	int status = parse_in_child(argv, err, sizeof err);

	if (status == 125 && strstr(err, want))
		CHECK(1);
	else {
		fprintf(stderr, "%s: status %d: %s", argv[1], status, err);
		CHECK(0);
	}
}

#define ARGV(...) ((char *[]){ "ksm-run", __VA_ARGS__, NULL })

/* The silent no-ops of before: accepted, then ignored. */
static void test_no_silent_no_ops(void)
{
	refused("--pages-to-scan is not an option of --estimate", ARGV("--estimate=1", "--pages-to-scan=9"));
	refused("--no-tune is not an option of --status", ARGV("--status", "--no-tune"));
	refused("--strict is not an option of --estimate", ARGV("--estimate=1", "--strict"));
	refused("--allow is not an option of --status", ARGV("--status", "--allow=heap"));
	refused("--json is not an option of --restore", ARGV("--restore", "--json"));
	refused("--min-size is not an option of --estimate", ARGV("--estimate=1", "--min-size=1M"));
	refused("--interval is not an option of --daemon", ARGV("--daemon", "--interval=5"));
	refused("--strict is not an option of --daemon", ARGV("--daemon", "--strict"));
	/* Refused before the value is read: the mode is named, not the value. */
	refused("--settle is not an option of --combine", ARGV("--settle=bad", "--combine", "a.kfp"));
	/* --estimate's selection is checked with the options, by the library's parser. */
	refused("--allow='hep': unknown selector 'hep'", ARGV("--estimate=1", "--allow=hep"));
}

/* What a mode takes, taken: none of these is refused for its mode. */
static void test_what_modes_take(void)
{
	char err[4096];

	CHECK(parse_in_child(ARGV("--estimate=1", "--allow=heap", "--json"), err, sizeof err) == 0);
	CHECK(parse_in_child(ARGV("--status", "--json", "--watch=1"), err, sizeof err) == 0);
	CHECK(parse_in_child(ARGV("--daemon", "--max-page-sharing=512", "--steady=30"), err, sizeof err) == 0);
	CHECK(parse_in_child(ARGV("--detach=1", "--json", "--stop-budget=0.01"), err, sizeof err) == 0);
}

UNIT_MAIN(UNIT_TEST(test_every_option_in_every_mode), UNIT_TEST(test_no_silent_no_ops),
	  UNIT_TEST(test_what_modes_take))
