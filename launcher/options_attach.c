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
void attach_check(struct opts *o, char **cmd)
{
	const char *opt = o->action == ACT_ATTACH ? "--attach" : "--detach";

	if (*cmd)
		die("%s acts on processes that already run and takes no command ('%s')", opt, cmd[0]);
	/* Each item in place, however long the value: an "all" must not hide past a buffer's end. */
	for (const char *it = o->attach;; it++) {
		size_t n = strcspn(it, ",");

		if (n == 3 && !strncmp(it, "all", 3))
			die("%s: 'all' is not accepted as a target (every process of the machine); give PIDs "
			    "or cgroup:PATH", opt);
		if (!it[n])
			break;
		it += n;
	}
	if (o->preload || o->no_preload || o->no_inherit || o->rescan || o->log || o->end_survivors)
		die("%s cannot take --preload, --no-preload, --no-inherit, --rescan-ms, --log or "
		    "--end-survivors: no library is loaded into the targets", opt);
	if (o->mode && strcmp(o->mode, "prctl") && strcmp(o->mode, "madvise"))
		die("%s --mode=%s: accepted are prctl (the default) and madvise", opt, o->mode);
	if (o->mode && !strcmp(o->mode, "prctl") && (o->allow || o->deny || o->min_size))
		die("%s --mode=prctl is process-wide: it cannot take --allow, --deny or --min-size", opt);
	if (o->action == ACT_DETACH && (o->knobs.n || o->no_tune || o->keep || o->strict || o->take_over ||
					o->report_file || o->report_all || o->quiet || o->metrics_file))
		die("--detach changes no knob and writes no report: it cannot take knob, tuning or report options");
	if (o->action == ACT_ATTACH && o->no_wait && (o->knobs.n || o->no_tune || o->keep || o->strict ||
						       o->take_over || o->report_file || o->report_all ||
						       o->metrics_file))
		die("--attach --no-wait only enables: it cannot take knob, tuning or report options");
	if (!o->mode && !o->allow && !o->deny && !o->min_size)
		o->mode = "prctl";
}

