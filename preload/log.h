/* log.h - one-line messages on stderr, prefixed "libksmenable[PID]: ". */
#ifndef KSMENABLE_LOG_H
#define KSMENABLE_LOG_H

#include "config.h"           /* enum log_level */

/* Notes which file descriptor 2 is, at start: the library writes only there. */
void log_init(void);

/* The level in force; LOG_WARN until the configuration says otherwise. */
extern enum log_level log_threshold;

/*
 * Writes one line to stderr with a single write(2), so lines from several
 * processes and threads never interleave.  Keeps errno.  Never allocates.
 */
void log_msg(enum log_level level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#define log_error(...) log_msg(LOG_ERROR, __VA_ARGS__)
#define log_warn(...) log_msg(LOG_WARN, __VA_ARGS__)
#define log_info(...) log_msg(LOG_INFO, __VA_ARGS__)
#define log_debug(...) log_msg(LOG_DEBUG, __VA_ARGS__)

#endif
