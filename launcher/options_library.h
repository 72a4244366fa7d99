/*
 * options_library.h - the library's settings among ksm-run's options
 * (options_library.c).
 */
#ifndef KSMRUN_OPTIONS_LIBRARY_H
#define KSMRUN_OPTIONS_LIBRARY_H

#include "opts.h"

/*
 * O->lib from the options, else the environment (not for --attach,
 * --detach, --estimate: the targets' environment is not ksm-run's); a bad
 * value exits 125 naming the option or the variable.  For a command, an
 * unknown KSM_ENABLE_* in the environment is warned of (--strict: refused).
 */
void check_library_settings(struct opts *o);

/*
 * The library's settings that the options of O give, each as the variable
 * the library reads (KSM_ENABLE_MODE, "madvise"): FN is called for each.
 * The one mapping of options to variables.
 */
void options_library_settings(const struct opts *o, void (*fn)(const char *var, const char *value));

#endif
