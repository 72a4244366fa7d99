/* channel.c - the private channel of the library's exit lines. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/msg.h"
#include "common/parse.h"
#include "host/statefile.h"
#include "run/channel.h"

#define PREFIX "ksm-run."

static const char *base_dir(void)
{
	const char *tmp = getenv("TMPDIR");
	char why[256];

	if (geteuid() == 0 && statedir_check(STATE_DIR, 1, why, sizeof why) == 0)
		return STATE_DIR;
	return tmp && tmp[0] == '/' && strlen(tmp) < 96 ? tmp : "/tmp";
}

static int make_token(char *out)
{
	unsigned char raw[CONFIG_TOKEN_LEN / 2];
	ssize_t n = getrandom(raw, sizeof raw, 0);

	if (n != (ssize_t)sizeof raw)
		return -1;
	for (size_t i = 0; i < sizeof raw; i++)
		snprintf(out + 2 * i, 3, "%02x", raw[i]);
	return 0;
}

/* Empties and removes DIR, one level deep: it holds only our files. */
static void remove_dir(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char path[PATH_MAX];

	if (d) {
		while ((e = readdir(d)))
			if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..") &&
			    (size_t)snprintf(path, sizeof path, "%s/%s", dir, e->d_name) < sizeof path)
				unlink(path);
		closedir(d);
	}
	rmdir(dir);
}

/* Directories of ksm-run instances that are gone: "ksm-run.PID.XXXXXX" of ours. */
static void clean_stale(const char *base)
{
	DIR *d = opendir(base);
	struct dirent *e;
	char path[PATH_MAX], pid_text[16];
	long long pid;
	struct stat st;

	if (!d)
		return;
	while ((e = readdir(d))) {
		const char *p = e->d_name, *dot;
		if (strncmp(p, PREFIX, strlen(PREFIX)) || !(dot = strchr(p + strlen(PREFIX), '.')))
			continue;
		snprintf(pid_text, sizeof pid_text, "%.*s", (int)(dot - p - strlen(PREFIX)), p + strlen(PREFIX));
		if (parse_ll(pid_text, 1, INT_MAX, &pid) || (kill((pid_t)pid, 0) == 0 || errno != ESRCH))
			continue;
		if ((size_t)snprintf(path, sizeof path, "%s/%s", base, p) >= sizeof path ||
		    lstat(path, &st) || !S_ISDIR(st.st_mode) || st.st_uid != geteuid())
			continue;
		remove_dir(path);
	}
	closedir(d);
}

int channel_open(struct channel *ch)
{
	const char *base = base_dir();
	int fd;

	memset(ch, 0, sizeof *ch);
	clean_stale(base);
	if (make_token(ch->token)) {
		msg_errno(errno, "cannot make a report token; the library's exit lines are not read");
		return -1;
	}
	snprintf(ch->dir, sizeof ch->dir, "%s/" PREFIX "%d.XXXXXX", base, (int)getpid());
	if (!mkdtemp(ch->dir)) {
		msg_errno(errno, "cannot make a directory in %s; the library's exit lines are not read", base);
		ch->dir[0] = '\0';
		return -1;
	}
	snprintf(ch->path, sizeof ch->path, "%s/lines.XXXXXX", ch->dir);
	if ((fd = mkostemp(ch->path, O_CLOEXEC)) < 0 || fchmod(fd, 0622) || chmod(ch->dir, 0711)) {
		msg_errno(errno, "cannot make the report file in %s; the library's exit lines are not read",
			  ch->dir);
		if (fd >= 0)
			close(fd);
		channel_close(ch);
		return -1;
	}
	close(fd);
	return 0;
}

void channel_close(struct channel *ch)
{
	if (ch->dir[0])
		remove_dir(ch->dir);
	ch->dir[0] = ch->path[0] = '\0';
}
