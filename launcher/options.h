/*
 * options.h - ksm-run's command line: the option table and the parsing
 * (options.c), each option's value (options_values.c), the rules between
 * values of each mode (options_rules.c), the library's settings
 * (options_library.c), --help (options_help.c): every check that can
 * refuse an option before anything is changed or started (exit 125).
 */
#ifndef KSMRUN_OPTIONS_H
#define KSMRUN_OPTIONS_H

#include "option_modes.h"
#include "opts.h"

/*
 * Parses ARGV into O and returns the command (the arguments after the
 * options, possibly none).  --help, --version and the --list-* options
 * print and exit 0; a bad option exits 125 with a message that names it.
 */
char **options_parse(int argc, char **argv, struct opts *o);

/* The option table (option_modes.h), ended by a NULL name: for --help's lists and the tests. */
const struct option_spec *options_table(void);


#endif
