/* procfs.c - parsing /proc/PID/stat. */
#include <stdio.h>
#include <string.h>

#include "common/files.h"
#include "common/procfs.h"

int proc_stat_parse(char *text, struct proc_stat *st)
{
	char *open_p = strchr(text, '('), *close_p = strrchr(text, ')');
	int ppid;
	size_t n;

	if (!open_p || !close_p || close_p < open_p)
		return -1;
	n = (size_t)(close_p - open_p - 1);
	if (n >= sizeof st->comm)
		n = sizeof st->comm - 1;
	memcpy(st->comm, open_p + 1, n);
	st->comm[n] = '\0';
	/* Fields 3 (state) to 22 (starttime), from after the name. */
	if (sscanf(close_p + 1, " %c %d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu %*d %*d %*d %*d %*d %*d %llu",
		   &st->state, &ppid, &st->utime, &st->stime, &st->starttime) != 5)
		return -1;
	st->ppid = (pid_t)ppid;
	return 0;
}

int proc_stat_read(pid_t pid, struct proc_stat *st)
{
	char path[64], buf[1024];

	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	if (read_text(path, buf, sizeof buf))
		return -1;
	return proc_stat_parse(buf, st);
}
