/*
 * errnames.h - errno names for the test helpers (faultinject reads them,
 * sysprobe prints them).  A table of our own rather than strerrorname_np,
 * which musl lacks and which glibc has only since 2.32.
 */
#ifndef KSMENABLE_ERRNAMES_H
#define KSMENABLE_ERRNAMES_H

#include <errno.h>
#include <stddef.h>
#include <string.h>

struct errname {
	const char *name;
	int value;
};

#define ERRNAME(e) { #e, e }
/* Where two names share a value, the first one is what errname_of prints. */
static const struct errname errnames[] = {
	ERRNAME(EPERM), ERRNAME(ENOENT), ERRNAME(ESRCH), ERRNAME(EINTR),
	ERRNAME(EIO), ERRNAME(ENXIO), ERRNAME(E2BIG), ERRNAME(ENOEXEC),
	ERRNAME(EBADF), ERRNAME(ECHILD), ERRNAME(EAGAIN), ERRNAME(EWOULDBLOCK),
	ERRNAME(ENOMEM), ERRNAME(EACCES), ERRNAME(EFAULT), ERRNAME(EBUSY),
	ERRNAME(EEXIST), ERRNAME(EXDEV), ERRNAME(ENODEV), ERRNAME(ENOTDIR),
	ERRNAME(EISDIR), ERRNAME(EINVAL), ERRNAME(ENFILE), ERRNAME(EMFILE),
	ERRNAME(ENOTTY), ERRNAME(ETXTBSY), ERRNAME(EFBIG), ERRNAME(ENOSPC),
	ERRNAME(ESPIPE), ERRNAME(EROFS), ERRNAME(EMLINK), ERRNAME(EPIPE),
	ERRNAME(EDOM), ERRNAME(ERANGE), ERRNAME(EDEADLK), ERRNAME(ENAMETOOLONG),
	ERRNAME(ENOLCK), ERRNAME(ENOSYS), ERRNAME(ENOTEMPTY), ERRNAME(ELOOP),
	ERRNAME(ENODATA), ERRNAME(EOVERFLOW), ERRNAME(EOPNOTSUPP), ERRNAME(ENOTSUP),
	ERRNAME(ETIMEDOUT), ERRNAME(ECANCELED), ERRNAME(EHWPOISON),
};
#undef ERRNAME

#define ERRNAMES_COUNT (sizeof errnames / sizeof errnames[0])

/* The value of errno NAME (exact, upper case), or 0 if it is not in the table. */
static inline int errname_value(const char *name)
{
	for (size_t i = 0; i < ERRNAMES_COUNT; i++)
		if (strcmp(errnames[i].name, name) == 0)
			return errnames[i].value;
	return 0;
}

/* The name of errno VALUE, or NULL if it is not in the table. */
static inline const char *errname_of(int value)
{
	for (size_t i = 0; i < ERRNAMES_COUNT; i++)
		if (errnames[i].value == value)
			return errnames[i].name;
	return NULL;
}

#endif /* KSMENABLE_ERRNAMES_H */
