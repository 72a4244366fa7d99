/*
 * options_attach.c - the rules of --attach and --detach (options_attach.h),
 * apart from options.c, which holds the table and the other modes' rules.
 */
#include <string.h>

#include "common/msg.h"
#include "options_attach.h"

/*
 * --attach and --detach act on processes that run: no command, no library
 * options, TARGET without "all"; --detach changes no knob.
 */
const char *attach_check(const struct attach_request *q, char **cmd)
{
	const char *opt = q->detach ? "--detach" : "--attach";

	if (*cmd)
		die("%s acts on processes that already run and takes no command ('%s')", opt, cmd[0]);
	/* Each item in place, however long the value: an "all" must not hide past a buffer's end. */
	for (const char *it = q->target;; it++) {
		size_t n = strcspn(it, ",");

		if (n == 3 && !strncmp(it, "all", 3))
			die("%s: 'all' is not accepted as a target (every process of the machine); give PIDs "
			    "or cgroup:PATH", opt);
		if (!it[n])
			break;
		it += n;
	}
	if (q->library_options)
		die("%s cannot take --preload, --no-preload, --no-inherit, --rescan-ms, --log or "
		    "--end-survivors: no library is loaded into the targets", opt);
	if (q->mode && strcmp(q->mode, "prctl") && strcmp(q->mode, "madvise"))
		die("%s --mode=%s: accepted are prctl (the default) and madvise", opt, q->mode);
	if (q->mode && !strcmp(q->mode, "prctl") && q->selection)
		die("%s --mode=prctl is process-wide: it cannot take --allow, --deny or --min-size", opt);
	if (q->detach && (q->knob_options || q->strict || q->quiet))
		die("--detach changes no knob and writes no report: it cannot take knob, tuning or report options "
		    "or --strict");
	if (!q->detach && q->no_wait && q->knob_options)
		die("--attach --no-wait only enables: it cannot take knob, tuning or report options");
	return q->mode || q->selection ? q->mode : "prctl";
}
