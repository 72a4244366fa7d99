/*
 * logsink.h - the one way a log line is made and where it goes
 * (logsink.c).  A part that logs (the tuner, the host agent) is given a
 * sink, a function of one line, by its caller; the daemon gives it the
 * journal's stream, a command's run none.  log_to() is the one formatter
 * in front of any sink.
 */
#ifndef KSMRUN_LOGSINK_H
#define KSMRUN_LOGSINK_H

#include <stdarg.h>

#include "common/msg.h"

/* Takes one line, without its newline. */
typedef void log_sink(const char *line);

/* Formats as printf does, and gives the line to SINK (NULL: to none). */
void log_to(log_sink *sink, const char *fmt, ...) FMT(2, 3);
void log_vto(log_sink *sink, const char *fmt, va_list ap) FMT(2, 0);

/*
 * The daemon's sink: stderr, one write(2) per line so that lines never
 * mix, stamped "TIME ksm-run[PID]: " unless stderr is the journal's stream
 * (which stamps its lines itself).  A closed stderr loses the line only.
 */
void log_stderr(const char *line);

#endif
