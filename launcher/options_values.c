/*
 * options_values.c - the values of ksm-run's options that more than a
 * number: the knobs (--set and the aliases, by the knobs' own checks),
 * seconds, --scan-rate, --metrics-file.  A bad one is refused with 125,
 * naming the option, the text and what is accepted.
 */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "common/msg.h"
#include "common/parse.h"
#include "host/knobs.h"
#include "host/metrics.h"
#include "options_values.h"

static void add_knob(struct opts *o, const char *name, const char *value)
{
	char why[256];
	int r = knob_validate(name, value, why, sizeof why);

	if (r < 0)
		die("%s", why);
	/* The user's say on the rate holds on every kernel: no default tuning then. */
	if (knob_is_rate(name))
		o->user_rate = true;
	if (r == 1)
		msg("note: %s", why);   /* --advisor=none without the advisor: already so, nothing to write */
	else
		knob_put(&o->knobs, name, value);
}

void set_knob_option(struct opts *o, const char *arg)
{
	char name[KNOB_NAME_MAX];
	const char *eq = strchr(arg, '=');

	if (!eq || eq == arg || (size_t)(eq - arg) >= sizeof name)
		die("--set %s: expected NAME=VALUE", arg);
	snprintf(name, sizeof name, "%.*s", (int)(eq - arg), arg);
	add_knob(o, name, eq + 1);
}

void alias_option(struct opts *o, const char *alias, const char *value)
{
	char name[KNOB_NAME_MAX];

	snprintf(name, sizeof name, "%s", strcmp(alias, "advisor") ? alias : "advisor-mode");
	for (char *p = name; *p; p++)
		if (*p == '-')
			*p = '_';
	add_knob(o, name, value);
}

double seconds_option(const char *opt, const char *s, double lo, double hi)
{
	double v;

	if (parse_double(s, lo, hi, &v))
		die("--%s=%s: not a number of seconds in %g..%g", opt, s, lo, hi);
	return v;
}

void scan_rate_option(struct opts *o, const char *arg)
{
	const char *slash = strchr(arg, '/');
	char pages[32];
	long long p, ms;

	if (!slash || (size_t)(slash - arg) >= sizeof pages)
		die("--scan-rate=%s: not PAGES/MILLISECONDS (pages_to_scan/sleep_millisecs, e.g. 5000/10)", arg);
	snprintf(pages, sizeof pages, "%.*s", (int)(slash - arg), arg);
	if (parse_ll(pages, 1, 10000000, &p) || parse_ll(slash + 1, 0, 3600000, &ms))
		die("--scan-rate=%s: PAGES is 1 to 10000000 and MILLISECONDS 0 to 3600000 (e.g. 5000/10)", arg);
	o->scan_pages = (long)p;
	o->scan_sleep_ms = (long)ms;
}

void metrics_file_option(struct opts *o, const char *arg)
{
	char why[PATH_MAX + 128];

	if (metrics_check_path(arg, why, sizeof why))
		die("--metrics-file=%s: %s (accepted: a file in an existing directory, such as "
		    "node_exporter's textfile directory)", arg, why);
	metrics_warn_name(arg);
	o->metrics_file = arg;
}
