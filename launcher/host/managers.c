/*
 * managers.c - finding the other programs that write the KSM knobs.
 *
 * A process is judged by what it is, never by the name it gave itself:
 * any user can call itself "ksmtuned" (prctl PR_SET_NAME, exec -a), and a
 * daemon that believed it would refuse to start.  A manager runs as root
 * (its real uid: a setuid program run by a user keeps the user's), and
 * either its executable is the manager's program or it is an interpreter
 * running the manager's script (ksmtuned is a bash script, tuned a Python
 * one: their executable is the interpreter, the script is an argument).
 * That program or script must be a file only root could have put there.
 */
#include <dirent.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/files.h"
#include "common/parse.h"
#include "host/managers.h"
#include "readfile.h"

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

/* Is PID's real uid root?  The first field of Uid: in its status. */
static bool runs_as_root(long long pid)
{
	char path[64], text[4096];
	const char *uid;
	unsigned long long v;

	snprintf(path, sizeof path, "/proc/%lld/status", pid);
	if (read_text(path, text, sizeof text) || !(uid = strstr(text, "\nUid:")))
		return false;
	return sscanf(uid + 5, "%llu", &v) == 1 && v == 0;
}

/* A file that only root could have put there: root's, regular, writable by no one else. */
static bool roots_file(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == 0 &&
	       !(st.st_mode & (S_IWGRP | S_IWOTH));
}

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

/* Is PATH (as PID names it: relative to its working directory) root's NAME? */
static bool is_program(long long pid, const char *path, const char *name)
{
	char where[PATH_MAX + 64];

	if (strcmp(base_name(path), name))
		return false;
	if (path[0] != '/')
		snprintf(where, sizeof where, "/proc/%lld/cwd/%s", pid, path);
	else
		snprintf(where, sizeof where, "%s", path);
	return roots_file(where);
}

/*
 * Does PID, a root process, run root's program NAME: its executable, or
 * the script its interpreter runs (the first argument that is not an
 * option, as the kernel passes it for a "#!" line).  Where /proc/PID/exe
 * cannot be read (ksm-run --status run by a user), the command line's
 * first word stands for it; the real uid was checked first.
 */
static bool runs_program(long long pid, const char *name)
{
	char path[64], exe[PATH_MAX], cmdline[4096];
	ssize_t n, len;
	const char *arg;

	snprintf(path, sizeof path, "/proc/%lld/exe", pid);
	if ((len = readlink(path, exe, sizeof exe - 1)) > 0) {
		exe[len] = '\0';
		if (!strcmp(base_name(exe), name))
			return roots_file(path);        /* the file that runs, not its name */
		if (!roots_file(path))
			return false;                   /* an interpreter of root's, or nothing */
	}
	snprintf(path, sizeof path, "/proc/%lld/cmdline", pid);
	if ((n = read_small_file(path, cmdline, sizeof cmdline)) <= 0)
		return false;
	if (len <= 0 && is_program(pid, cmdline, name))
		return true;
	for (arg = cmdline + strlen(cmdline) + 1; arg < cmdline + n; arg += strlen(arg) + 1)
		if (arg[0] != '-')
			return is_program(pid, arg, name);
	return false;
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
		if (parse_ll(e->d_name, 1, INT_MAX, &pid) || pid == getpid() || !runs_as_root(pid))
			continue;
		if (runs_program(pid, "ksmtuned")) {
			snprintf(buf, len, "ksmtuned (pid %lld)", pid);
			found = buf;
		} else if (runs_program(pid, "tuned") && tuned_does_ksm()) {
			snprintf(buf, len, "tuned (pid %lld), whose profile sets KSM", pid);
			found = buf;
		}
	}
	closedir(d);
	return found;
}
