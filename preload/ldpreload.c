/*
 * ldpreload.c - finding, and on request removing, this library's entry in
 * LD_PRELOAD.  Entries are separated by spaces or colons; an entry is ours
 * when it ends in the name the loader opened us by.
 */
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#include "ldpreload.h"

static const char *own_basename(void)
{
	Dl_info info;
	const char *slash;

	if (!dladdr((void *)own_basename, &info) || !info.dli_fname)
		return "libksmenable.so";
	slash = strrchr(info.dli_fname, '/');
	return slash ? slash + 1 : info.dli_fname;
}

static int entry_is_us(const char *entry, size_t len, const char *base)
{
	size_t blen = strlen(base);

	return len >= blen && !memcmp(entry + len - blen, base, blen) &&
	       (len == blen || entry[len - blen - 1] == '/');
}

int ldpreload_has_us(void)
{
	const char *p = getenv("LD_PRELOAD"), *base = own_basename();
	size_t len;

	for (; p && *p; p += len) {
		p += strspn(p, " :");
		len = strcspn(p, " :");
		if (len && entry_is_us(p, len, base))
			return 1;
	}
	return 0;
}

int ldpreload_drop_us(void)
{
	const char *p = getenv("LD_PRELOAD"), *base = own_basename();
	size_t len, used = 0;
	char *kept;
	int r;

	if (!p)
		return 0;
	/* Runs in the constructor, not in an interposed call: it may allocate. */
	if (!(kept = malloc(strlen(p) + 1)))
		return -1;
	for (; *p; p += len) {
		p += strspn(p, " :");
		len = strcspn(p, " :");
		if (!len || entry_is_us(p, len, base))
			continue;
		if (used)
			kept[used++] = ' ';
		memcpy(kept + used, p, len);
		used += len;
	}
	kept[used] = '\0';
	r = used ? setenv("LD_PRELOAD", kept, 1) : unsetenv("LD_PRELOAD");
	free(kept);
	return r;
}
