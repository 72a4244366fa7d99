/*
 * option_modes.c - what option_modes.h says: the modes' names, and the
 * refusal of an option that the chosen mode does not take.
 */
#include <stdio.h>
#include <string.h>

#include "common/msg.h"
#include "option_modes.h"

static const struct {
	const char *name;               /* for --list-options=MODE */
	const char *title;              /* how a message names it */
	const char *what;               /* what it does, so that the refusal says why */
} modes[CLI_MODES] = {
	[CLI_RUN] = { "run", "a command's run", "runs COMMAND with KSM and reports" },
	[CLI_PROFILE] = { "profile", "--profile",
			  "runs COMMAND with all of its memory mergeable to find what merges" },
	[CLI_ESTIMATE] = { "estimate", "--estimate", "reads running processes and changes nothing" },
	[CLI_COMBINE] = { "combine", "--combine", "reads fingerprints only" },
	[CLI_STATUS] = { "status", "--status", "shows KSM's state and changes nothing" },
	[CLI_RESTORE] = { "restore", "--restore", "puts back the knobs a killed ksm-run left" },
	[CLI_DAEMON] = { "daemon", "--daemon", "runs no command: it tunes ksmd for the whole machine" },
	[CLI_ATTACH] = { "attach", "--attach", "acts on processes that already run, from outside" },
	[CLI_DETACH] = { "detach", "--detach", "acts on processes that already run, and changes no knob" },
	[CLI_CHECK_CONFIG] = { "check-config", "--check-config",
			       "checks the host agent's policy and changes nothing" },
	[CLI_ATTACH_NO_WAIT] = { "attach-no-wait", "--attach --no-wait",
				 "only enables: it changes no knob and writes no report" },
};

const char *cli_mode_name(enum cli_mode mode)
{
	return modes[mode].name;
}

int cli_mode_by_name(const char *name)
{
	for (int m = 0; m < CLI_MODES; m++)
		if (!strcmp(name, modes[m].name))
			return m;
	return -1;
}

void cli_modes_text(unsigned set, bool titles, char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = '\0';
	for (int m = 0; m < CLI_MODES && used < len; m++)
		if (set & M(m))
			used += (size_t)snprintf(buf + used, len - used, "%s%s", used ? ", " : "",
						 titles ? modes[m].title : modes[m].name);
}

/* What MODE takes, as "--a, --b, ..." in BUF; the options every mode takes (--help) are left out. */
static void taken_list(const struct option_spec *specs, enum cli_mode mode, char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = '\0';
	for (const struct option_spec *s = specs; s->name && used < len; s++) {
		if (!(s->modes & M(mode)) || s->modes == M_ALL || s->alias)
			continue;
		used += (size_t)snprintf(buf + used, len - used, "%s--%s%s", used ? ", " : "", s->name,
					 strcmp(s->name, "set") ? "" : " and its aliases");
	}
	if (!used)
		snprintf(buf, len, "no other option");
}

void option_check_mode(const struct option_spec *specs, const struct option_spec *spec, enum cli_mode mode)
{
	char taken[2048], owners[256];

	if (spec->modes & M(mode))
		return;
	taken_list(specs, mode, taken, sizeof taken);
	cli_modes_text(spec->modes, true, owners, sizeof owners);
	die("--%s is not an option of %s, which %s (--%s goes with %s); %s takes: %s", spec->name,
	    modes[mode].title, modes[mode].what, spec->name, owners, modes[mode].title, taken);
}
