/*
 * msg.h - ksm-run's messages, on stderr only (stdout belongs to the
 * command), one write(2) per line, errno kept; and its one policy for
 * errors and lack of memory.
 *
 * The policy: before the command starts (options, settings, the library,
 * the knobs), an error is fatal: die() says why and exits 125, the status
 * env(1) and timeout(1) use for their own failures.  Once the command runs,
 * nothing may end ksm-run before it: the code on that side (the sampler,
 * the tuner, --profile) warns and goes on without what it could not get.
 * The x*() allocators belong to the first side, or to the read-only
 * evaluation modes, where dying changes nothing on the machine.
 */
#ifndef KSMRUN_MSG_H
#define KSMRUN_MSG_H

#include <stddef.h>

#define FMT(a, b) __attribute__((format(printf, a, b)))

/* Exit statuses as env(1) and timeout(1) have them. */
#define EXIT_OWN 125
#define EXIT_CANNOT_EXEC 126
#define EXIT_NOT_FOUND 127

extern const char *progname;

/* "ksm-run: TEXT" */
void msg(const char *fmt, ...) FMT(1, 2);
/* "ksm-run: TEXT: strerror(ERR)" */
void msg_errno(int err, const char *fmt, ...) FMT(2, 3);

_Noreturn void die(const char *fmt, ...) FMT(1, 2);
_Noreturn void die_errno(int err, const char *fmt, ...) FMT(2, 3);
_Noreturn void die_oom(void);

void *xmalloc(size_t size);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t size);
/* Grow an array of *CAP elements of SIZE bytes to hold at least NEED. */
void *xgrow(void *p, size_t *cap, size_t need, size_t size);
char *xstrdup(const char *s);

#endif
