/*
 * config.h - the library's settings, read once from KSM_ENABLE_* variables.
 *
 * Parsing is strict: any malformed value is an error, and on an error the
 * library enables nothing at all (a half-understood allow list must not
 * merge memory that the user meant to exclude).
 */
#ifndef KSMENABLE_CONFIG_H
#define KSMENABLE_CONFIG_H

#include <limits.h>
#include <stddef.h>

#include "log.h"
#include "selector.h"

enum ksm_mode { MODE_AUTO, MODE_PRCTL, MODE_MADVISE, MODE_OFF };

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
	/*
	 * Allocated only when given: a process in prctl mode then touches a
	 * single page of the library's data, which keeps its start cheap.
	 */
	struct selector_list *allow;   /* NULL: all */
	struct selector_list *deny;    /* NULL: nothing denied */
	char *report_path;             /* NULL: no report */
};

/* Where the settings come from: getenv in the library, a table in tests. */
typedef char *(*config_getter)(const char *name);

/*
 * Fill C from the variables.  On error returns -1 and writes one message
 * naming the variable, the bad text and what is accepted to ERR.
 */
int config_load(struct config *c, config_getter get, char *err, size_t errlen);

/* Frees what config_load allocated. */
void config_free(struct config *c);

/* Strict number parsers, exposed for the unit tests. */
int parse_size(const char *text, unsigned long *out);
int parse_long_range(const char *text, long lo, long hi, long *out);

const char *mode_name(enum ksm_mode mode);

#endif
