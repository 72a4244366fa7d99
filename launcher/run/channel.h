/*
 * channel.h - where the library in the command writes its exit lines
 * (channel.c): a file of this run only, that others cannot find or forge.
 *
 * A directory of this run (mode 0711: it can be passed through, not read)
 * under /run/ksm-run for root, $TMPDIR or /tmp otherwise, holding a file of
 * an unguessable name (mode 0622, so that a command that drops its
 * privileges still reports).  Its path and a random token go to the
 * library in the environment, and only lines that carry the token count.
 * A ksm-run killed with SIGKILL leaves its directory; the next one removes
 * directories whose ksm-run is gone.
 */
#ifndef KSMRUN_CHANNEL_H
#define KSMRUN_CHANNEL_H

#include "config.h"

struct channel {
	char dir[192];
	char path[224];                         /* "": none */
	char token[CONFIG_TOKEN_LEN + 1];
};

/* Makes the directory and the file.  0, or -1 after a warning (no channel). */
int channel_open(struct channel *ch);
/* Removes them. */
void channel_close(struct channel *ch);

#endif
