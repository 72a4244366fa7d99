/* managers.c - finding the other programs that write the KSM knobs. */
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "common/files.h"
#include "common/parse.h"
#include "host/managers.h"

/* Does tuned's active profile write the KSM knobs? */
static int tuned_does_ksm(void)
{
	char profile[128], path[256], conf[8192];
	static const char *const dirs[] = { "/etc/tuned", "/usr/lib/tuned" };

	if (read_text("/etc/tuned/active_profile", profile, sizeof profile) || !profile[0])
		return 0;
	for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++) {
		snprintf(path, sizeof path, "%s/%s/tuned.conf", dirs[i], profile);
		if (!read_text(path, conf, sizeof conf))
			return strstr(conf, "kernel/mm/ksm") != NULL || strstr(conf, "[ksm") != NULL;
	}
	return 0;
}

const char *other_manager(char *buf, size_t len)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	long long pid;
	const char *found = NULL;

	if (!d)
		return NULL;
	while (!found && (e = readdir(d))) {
		char path[64], comm[32];

		if (parse_ll(e->d_name, 1, INT_MAX, &pid))
			continue;
		snprintf(path, sizeof path, "/proc/%lld/comm", pid);
		if (read_text(path, comm, sizeof comm))
			continue;
		if (!strcmp(comm, "ksmtuned")) {
			snprintf(buf, len, "ksmtuned (pid %lld)", pid);
			found = buf;
		} else if (!strcmp(comm, "tuned") && tuned_does_ksm()) {
			snprintf(buf, len, "tuned (pid %lld), whose profile sets KSM", pid);
			found = buf;
		}
	}
	closedir(d);
	return found;
}
