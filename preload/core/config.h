/*
 * config.h - the library's settings, the KSM_ENABLE_* variables, and the
 * one rule that says what a configuration asks of a process.
 *
 * Parsing is strict: any malformed value is an error, and on an error the
 * library enables nothing at all (a half-understood allow list must not
 * merge memory that the user meant to exclude).  ksm-run judges its options
 * with the same code, so a setting it accepts is one the library accepts.
 */
#ifndef KSMENABLE_CONFIG_H
#define KSMENABLE_CONFIG_H

#include <limits.h>
#include <stddef.h>

#include "selector.h"

enum ksm_mode { MODE_AUTO, MODE_PRCTL, MODE_MADVISE, MODE_OFF };
enum log_level { LOG_QUIET, LOG_ERROR, LOG_WARN, LOG_INFO, LOG_DEBUG };

#define CONFIG_TOKEN_LEN 32             /* hex digits of KSM_ENABLE_REPORT_TOKEN */

#define RESCAN_MS_DEFAULT 1000
#define RESCAN_MS_MIN 10
#define RESCAN_MS_MAX 3600000

struct config {
	enum ksm_mode mode;
	int mode_set;                  /* KSM_ENABLE_MODE was given */
	int allow_set, deny_set, min_size_set;
	unsigned long min_size;        /* bytes; 0: no minimum */
	long rescan_ms;                /* 0: no rescan */
	enum log_level log;
	int inherit;                   /* 0: remove the library from LD_PRELOAD */
	int strict;                    /* KSM_ENABLE_STRICT=1: an unknown KSM_ENABLE_* name is an error */
	/*
	 * Allocated only when given: a process in prctl mode then touches a
	 * single page of the library's data, which keeps its start cheap.
	 */
	struct selector_list *allow;   /* NULL: all */
	struct selector_list *deny;    /* NULL: nothing denied */
	char *report_path;             /* NULL: no report */
	/* KSM_ENABLE_REPORT_TOKEN: copied into the report line, so that ksm-run
	 * can tell its command's lines from lines others append. */
	char report_token[CONFIG_TOKEN_LEN + 1];
};

/*
 * Where the settings come from.  GET returns the value of VAR (a
 * KSM_ENABLE_* name) or NULL; an empty value counts as not given.  NAME
 * says how a message names VAR: the variable itself for the environment,
 * the option for ksm-run ("--allow").
 */
struct config_source {
	const char *(*get)(void *ctx, const char *var);
	const char *(*name)(void *ctx, const char *var);
	void *ctx;
};

/* The process environment (getenv), as the library reads it. */
extern const struct config_source config_from_environment;

/*
 * Fill C from SRC.  On error returns -1 and writes one message naming the
 * setting, the bad text and what is accepted to ERR; then nothing but
 * report_path is left allocated (a process with bad settings still
 * reports that it loaded the library).
 */
int config_load(struct config *c, const struct config_source *src, char *err, size_t errlen);

/*
 * Calls FN once for every entry of ENV (an environ-style array) whose name
 * starts with KSM_ENABLE_ but is no variable of the library's: a typo such
 * as KSM_ENABLE_ALOW would otherwise leave the whole process mergeable.
 * NEAREST is the known name it is probably meant to be, or NULL.  Returns
 * how many there were.
 */
typedef void (*config_unknown_fn)(void *ctx, const char *name, size_t len, const char *nearest);
int config_unknown_variables(char *const *env, config_unknown_fn fn, void *ctx);

/* Frees what config_load allocated. */
void config_free(struct config *c);

/*
 * What a configuration asks of a process, the one rule that the library
 * and ksm-run both follow: off; the process-wide prctl (mode prctl, or auto
 * without a selection); or madvise of the selected regions (mode madvise,
 * or auto with an allow list, a deny list or a minimum size).
 */
enum coverage { COVER_NOTHING, COVER_PROCESS, COVER_SELECTION };
enum coverage config_coverage(const struct config *c);

/* Strict number parsers, exposed for the unit tests. */
int parse_size(const char *text, unsigned long *out);
int parse_long_range(const char *text, long lo, long hi, long *out);

#endif
