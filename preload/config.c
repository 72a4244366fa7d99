/* config.c - reading and validating the KSM_ENABLE_* variables. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"

static const char *const mode_names[] = {
	[MODE_AUTO] = "auto", [MODE_PRCTL] = "prctl", [MODE_MADVISE] = "madvise", [MODE_OFF] = "off",
};

static const char *const level_names[] = {
	[LOG_QUIET] = "quiet", [LOG_ERROR] = "error", [LOG_WARN] = "warn",
	[LOG_INFO] = "info", [LOG_DEBUG] = "debug",
};

const char *mode_name(enum ksm_mode mode)
{
	return mode_names[mode];
}

static int word_index(const char *text, const char *const *words, int n)
{
	int i;

	for (i = 0; i < n; i++)
		if (!strcmp(text, words[i]))
			return i;
	return -1;
}

/* Decimal digits with an optional K, M or G suffix (powers of 1024). */
int parse_size(const char *text, unsigned long *out)
{
	unsigned long v = 0, shift = 0;
	const char *p = text;

	if (*p < '0' || *p > '9')
		return -1;
	for (; *p >= '0' && *p <= '9'; p++) {
		if (v > (ULONG_MAX - 9) / 10)
			return -1;
		v = v * 10 + (unsigned long)(*p - '0');
	}
	switch (*p) {
	case 'k': case 'K': shift = 10; p++; break;
	case 'm': case 'M': shift = 20; p++; break;
	case 'g': case 'G': shift = 30; p++; break;
	}
	if (*p || v > (ULONG_MAX >> shift))
		return -1;
	*out = v << shift;
	return 0;
}

int parse_long_range(const char *text, long lo, long hi, long *out)
{
	char *end;
	long v;

	if (*text < '0' || *text > '9')     /* no sign, no leading space */
		return -1;
	errno = 0;
	v = strtol(text, &end, 10);
	if (errno || *end || v < lo || v > hi)
		return -1;
	*out = v;
	return 0;
}

/* A variable that is unset or empty counts as not given. */
static const char *given(config_getter get, const char *name)
{
	const char *v = get(name);

	return v && *v ? v : NULL;
}

static int load_lists(struct config *c, config_getter get, char *err, size_t errlen)
{
	static const char *const names[2] = { "KSM_ENABLE_ALLOW", "KSM_ENABLE_DENY" };
	struct selector_list *lists[2] = { &c->allow, &c->deny };
	int *set[2] = { &c->allow_set, &c->deny_set };
	char why[512];
	int i;

	for (i = 0; i < 2; i++) {
		const char *v = given(get, names[i]);
		*set[i] = v != NULL;
		if (v && selector_parse(lists[i], v, why, sizeof why)) {
			snprintf(err, errlen, "%s='%s': %s", names[i], v, why);
			return -1;
		}
	}
	if (!c->allow_set)
		selector_parse(&c->allow, "all", why, sizeof why);
	return 0;
}

int config_load(struct config *c, config_getter get, char *err, size_t errlen)
{
	const char *v;
	long n;
	int i;

	memset(c, 0, sizeof *c);
	c->rescan_ms = RESCAN_MS_DEFAULT;
	c->log = LOG_WARN;
	c->inherit = 1;

	/* The log level first, so that it governs the messages below. */
	if ((v = given(get, "KSM_ENABLE_LOG"))) {
		if ((i = word_index(v, level_names, 5)) < 0) {
			snprintf(err, errlen, "KSM_ENABLE_LOG='%s': unknown level "
				 "(accepted: quiet, error, warn, info, debug)", v);
			return -1;
		}
		c->log = (enum log_level)i;
	}
	/* Then the report, so that even a process whose settings are wrong
	 * tells the launcher that the library was loaded. */
	if ((v = given(get, "KSM_ENABLE_REPORT"))) {
		size_t len = 0;
		/* Relative to the directory at start, not wherever the program ends. */
		if (v[0] != '/' && getcwd(c->report_path, sizeof c->report_path - 1))
			len = strlen(c->report_path), c->report_path[len++] = '/';
		if (v[0] != '/' && !len) {
			snprintf(err, errlen, "KSM_ENABLE_REPORT='%s': relative path, and the "
				 "current directory cannot be read", v);
			return -1;
		}
		if (len + strlen(v) >= sizeof c->report_path) {
			snprintf(err, errlen, "KSM_ENABLE_REPORT: path longer than %d bytes", PATH_MAX - 1);
			return -1;
		}
		strcpy(c->report_path + len, v);
	}

	if ((v = given(get, "KSM_ENABLE_MODE"))) {
		if ((i = word_index(v, mode_names, 4)) < 0) {
			snprintf(err, errlen, "KSM_ENABLE_MODE='%s': unknown mode "
				 "(accepted: auto, prctl, madvise, off)", v);
			return -1;
		}
		c->mode = (enum ksm_mode)i;
		c->mode_set = 1;
	}
	if (load_lists(c, get, err, errlen))
		return -1;
	if ((v = given(get, "KSM_ENABLE_MIN_SIZE"))) {
		if (parse_size(v, &c->min_size)) {
			snprintf(err, errlen, "KSM_ENABLE_MIN_SIZE='%s': not a size "
				 "(accepted: a whole number of bytes, with an optional K, M or G suffix)", v);
			return -1;
		}
		c->min_size_set = 1;
	}
	if ((v = given(get, "KSM_ENABLE_RESCAN_MS"))) {
		if (parse_long_range(v, 0, RESCAN_MS_MAX, &n) || (n > 0 && n < RESCAN_MS_MIN)) {
			snprintf(err, errlen, "KSM_ENABLE_RESCAN_MS='%s': not a rescan period "
				 "(accepted: 0 to turn the rescan off, or %d to %d milliseconds)",
				 v, RESCAN_MS_MIN, RESCAN_MS_MAX);
			return -1;
		}
		c->rescan_ms = n;
	}
	if ((v = given(get, "KSM_ENABLE_INHERIT"))) {
		if (strcmp(v, "0") && strcmp(v, "1")) {
			snprintf(err, errlen, "KSM_ENABLE_INHERIT='%s': not a switch (accepted: 0, 1)", v);
			return -1;
		}
		c->inherit = v[0] == '1';
	}
	/* Selections need madvise: the process-wide prctl cannot honour them. */
	if (c->mode == MODE_PRCTL && (c->allow_set || c->deny_set || c->min_size_set)) {
		snprintf(err, errlen, "KSM_ENABLE_MODE=prctl merges all memory, but %s is set "
			 "(use KSM_ENABLE_MODE=madvise or auto for a selection)",
			 c->allow_set ? "KSM_ENABLE_ALLOW" : c->deny_set ? "KSM_ENABLE_DENY"
			 : "KSM_ENABLE_MIN_SIZE");
		return -1;
	}
	return 0;
}
