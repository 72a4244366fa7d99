/*
 * survivors.h - processes of the command's tree still running when the
 * command ended (survivors.c): the report names them, and --end-survivors
 * ends them.
 */
#ifndef KSMRUN_SURVIVORS_H
#define KSMRUN_SURVIVORS_H

#include <stdbool.h>
#include <sys/types.h>

#include "follow/tree.h"

/* P was alive at the last sample, is not MAIN, and still runs (not a zombie). */
bool survivor(const struct proc_info *p, pid_t main);

/*
 * --end-survivors: looks at the tree once more, sends TERM to every
 * survivor, reaps what ends (ksm-run is their subreaper), and after 5 s
 * sends KILL to the rest.  Marks each in its ended_by.  Returns how many
 * were signalled.
 */
int survivors_end(struct sampler *s, pid_t main);

#endif
