/*
 * load.c: the policy's files, each read only when no one but root could
 * have written it.  The agent runs as root and enables KSM, which merges
 * memory across whatever is mergeable: a policy another user could write
 * would let them choose whose memory is shared with theirs.  So, as sudo
 * refuses a writable sudoers, a file must be root's and writable by no
 * group or other user, and so must the directories it is in (whoever may
 * write a directory may replace the file).  The checks are made on the
 * file that was opened (fstat), never on a name looked at before.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/msg.h"
#include "policy/domain.h"
#include "policy/policy.h"

#define POLICY_MAX_BYTES (1 << 20)
#define DROPINS_MAX (PATH_MAX + sizeof POLICY_DROPIN_DIR + 1)     /* DIR/conf.d */

/* Why ST may not be trusted (a KIND: "file", "directory"), or NULL. */
static const char *untrusted(const struct stat *st, bool directory)
{
	if (directory ? !S_ISDIR(st->st_mode) : !S_ISREG(st->st_mode))
		return directory ? "not a directory" : "not a regular file";
	if (st->st_uid != 0)
		return "not owned by root";
	if (st->st_mode & (S_IWGRP | S_IWOTH))
		return st->st_mode & S_IWOTH ? "writable by others" : "writable by its group";
	return NULL;
}

static void say(policy_error_fn err, void *ctx, const char *file, const char *fmt, ...) FMT(4, 5);

static void say(policy_error_fn err, void *ctx, const char *file, const char *fmt, ...)
{
	char message[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(message, sizeof message, fmt, ap);
	va_end(ap);
	err(ctx, file, 0, message);
}

/* The directory PATH is in must be trusted too; PATH itself when DIRECTORY. */
static int check_directory(const char *path, policy_error_fn err, void *ctx)
{
	struct stat st;
	const char *why;

	if (stat(path, &st)) {
		say(err, ctx, path, "cannot be read: %s", strerror(errno));
		return 1;
	}
	if ((why = untrusted(&st, true))) {
		say(err, ctx, path, "the policy's directory is %s: the agent reads no policy that another "
		    "user could have written (chown root and chmod go-w it)", why);
		return 1;
	}
	return 0;
}

/*
 * Reads FILE into a NUL-terminated buffer, after the checks: 0 with *TEXT;
 * -ENOENT when it does not exist; else the errors said.
 */
static int read_policy_file(const char *file, char **text, policy_error_fn err, void *ctx)
{
	struct stat st;
	const char *why;
	ssize_t n;
	int fd;

	*text = NULL;
	/* O_NONBLOCK: a FIFO planted there is refused, not waited on. */
	if ((fd = open(file, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY)) < 0) {
		if (errno == ENOENT)
			return -ENOENT;
		say(err, ctx, file, "cannot be opened: %s", strerror(errno));
		return 1;
	}
	if (fstat(fd, &st)) {
		say(err, ctx, file, "cannot be read: %s", strerror(errno));
		close(fd);
		return 1;
	}
	if ((why = untrusted(&st, false))) {
		say(err, ctx, file, "is %s: the agent reads no policy that another user could have written "
		    "(it must be root's, and neither group nor others may write it: chown root, chmod 644)", why);
		close(fd);
		return 1;
	}
	if (st.st_size > POLICY_MAX_BYTES) {
		say(err, ctx, file, "is larger than 1 MiB: not a policy");
		close(fd);
		return 1;
	}
	*text = xmalloc((size_t)st.st_size + 1);
	n = read(fd, *text, (size_t)st.st_size);
	close(fd);
	if (n != st.st_size) {
		say(err, ctx, file, "could not be read whole: %s", n < 0 ? strerror(errno) : "it changed meanwhile");
		free(*text);
		*text = NULL;
		return 1;
	}
	(*text)[n] = '\0';
	if (memchr(*text, '\0', (size_t)n)) {
		say(err, ctx, file, "holds a NUL byte: not a text file");
		free(*text);
		*text = NULL;
		return 1;
	}
	return 0;
}

static int load_one(struct policy *p, const char *file, policy_error_fn err, void *ctx)
{
	char *text;
	int r = read_policy_file(file, &text, err, ctx);

	if (r)
		return r;
	r = policy_parse(p, file, text, err, ctx);
	free(text);
	return r;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The files of DIR named *.conf, in the order of their names; DIR need not exist. */
static int load_dropins(struct policy *p, const char *dir, policy_error_fn err, void *ctx)
{
	char **names = NULL, path[DROPINS_MAX + NAME_MAX + 2];
	size_t n = 0, cap = 0;
	struct dirent *e;
	int errors;
	DIR *d;

	if (!(d = opendir(dir)))
		return errno == ENOENT ? 0 : (say(err, ctx, dir, "cannot be read: %s", strerror(errno)), 1);
	closedir(d);
	if ((errors = check_directory(dir, err, ctx)))
		return errors;
	if (!(d = opendir(dir)))
		return say(err, ctx, dir, "cannot be read: %s", strerror(errno)), 1;
	while ((e = readdir(d))) {
		size_t len = strlen(e->d_name);

		/* Hidden files and an editor's leftovers (x.conf~, .x.conf.swp) are not drop-ins. */
		if (e->d_name[0] == '.' || len <= 5 || strcmp(e->d_name + len - 5, ".conf"))
			continue;
		names = xgrow(names, &cap, n + 1, sizeof *names);
		names[n++] = xstrdup(e->d_name);
	}
	closedir(d);
	if (n)          /* an empty directory: no list at all, which qsort may not be given */
		qsort(names, n, sizeof *names, by_name);
	for (size_t i = 0; i < n; i++) {
		int r;

		snprintf(path, sizeof path, "%s/%s", dir, names[i]);
		/* A drop-in removed between the listing and now is simply gone. */
		if ((r = load_one(p, path, err, ctx)) > 0)
			errors += r;
		free(names[i]);
	}
	free(names);
	return errors;
}

int policy_load(struct policy *p, const char *file, policy_error_fn err, void *ctx)
{
	char copy[PATH_MAX], dir[PATH_MAX], dropins[DROPINS_MAX];
	int errors;

	memset(p, 0, sizeof *p);
	if (!file)
		file = POLICY_DEFAULT_FILE;
	if (strlen(file) >= sizeof copy) {
		say(err, ctx, "policy", "the file's name is longer than %d bytes", PATH_MAX - 1);
		return 1;
	}
	snprintf(copy, sizeof copy, "%s", file);
	snprintf(dir, sizeof dir, "%s", dirname(copy));
	if (access(file, F_OK) && errno == ENOENT)
		return -1;
	if (check_directory(dir, err, ctx))
		return 1;       /* nothing in it can be trusted */
	if ((errors = load_one(p, file, err, ctx)) == -ENOENT)
		return -1;
	snprintf(dropins, sizeof dropins, "%s/%s", dir, POLICY_DROPIN_DIR);
	/* On after an error, so that one run says everything that is wrong. */
	errors += load_dropins(p, dropins, err, ctx);
	/* The rules together: only once each is right (a refused file's rules are not there). */
	if (!errors)
		errors = policy_check_domains(p, err, ctx);
	return errors;
}
