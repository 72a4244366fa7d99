/*
 * option_modes.h - which of ksm-run's modes take which option: the one
 * table (option_modes.c) that options.c checks every option against, and
 * that --list-options=MODE prints for the completion and the tests.
 */
#ifndef KSMRUN_OPTION_MODES_H
#define KSMRUN_OPTION_MODES_H

#include <stdbool.h>

/*
 * The modes, as the command line chooses them: the actions of options.h in
 * the same order, and --attach --no-wait apart (it only enables, so it
 * takes no knob, tuning or report option).
 */
enum cli_mode {
	CLI_RUN, CLI_PROFILE, CLI_ESTIMATE, CLI_COMBINE, CLI_STATUS, CLI_RESTORE, CLI_DAEMON,
	CLI_ATTACH, CLI_DETACH, CLI_CHECK_CONFIG, CLI_ATTACH_NO_WAIT, CLI_MODES
};

#define M(mode) (1u << (mode))
#define M_ALL ((1u << CLI_MODES) - 1)

/* An option: its name (without "--"), whether it takes a value, the modes that take it. */
struct option_spec {
	const char *name;
	int has_arg;                    /* getopt's no_argument, required_argument, optional_argument */
	int val;                        /* getopt's value: a letter, or one of options.c's O_* */
	unsigned modes;
	bool alias;                     /* a knob's alias of --set: listed as "--set and its aliases" */
};

/* "run", "estimate", "attach-no-wait", ...: MODE's name for --list-options=MODE. */
const char *cli_mode_name(enum cli_mode mode);
/* The mode of NAME, or -1. */
int cli_mode_by_name(const char *name);
/* The modes of SET as "a, b, c" in BUF: their names, or with TITLES as messages name them. */
void cli_modes_text(unsigned set, bool titles, char *buf, size_t len);

/*
 * Dies with 125 when SPEC (given as --NAME) is not taken by MODE, naming
 * the mode, what it does, and the options it takes (from SPECS, the whole
 * table, ended by a NULL name).
 */
void option_check_mode(const struct option_spec *specs, const struct option_spec *spec, enum cli_mode mode);

#endif
