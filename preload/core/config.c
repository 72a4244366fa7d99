/* config.c - reading and validating the KSM_ENABLE_* variables. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "nearest.h"

static const char *const mode_names[] = {
	[MODE_AUTO] = "auto", [MODE_PRCTL] = "prctl", [MODE_MADVISE] = "madvise", [MODE_OFF] = "off",
};

static const char *const level_names[] = {
	[LOG_QUIET] = "quiet", [LOG_ERROR] = "error", [LOG_WARN] = "warn",
	[LOG_INFO] = "info", [LOG_DEBUG] = "debug",
};

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

/* Every variable that config_load reads. */
static const char *const config_variables[] = {
	"KSM_ENABLE_MODE", "KSM_ENABLE_ALLOW", "KSM_ENABLE_DENY", "KSM_ENABLE_MIN_SIZE",
	"KSM_ENABLE_RESCAN_MS", "KSM_ENABLE_LOG", "KSM_ENABLE_INHERIT", "KSM_ENABLE_REPORT",
	"KSM_ENABLE_REPORT_TOKEN", "KSM_ENABLE_STRICT",
};
#define CONFIG_PREFIX "KSM_ENABLE_"

int config_unknown_variables(char *const *env, config_unknown_fn fn, void *ctx)
{
	size_t prefix_len = sizeof CONFIG_PREFIX - 1;
	int count = 0;

	for (; env && *env; env++) {
		const char *entry = *env, *nearest = NULL;
		size_t len = strcspn(entry, "="), best = (size_t)-1;
		bool known = false;

		if (len < prefix_len || strncmp(entry, CONFIG_PREFIX, prefix_len))
			continue;
		for (size_t i = 0; i < sizeof config_variables / sizeof config_variables[0] && !known; i++) {
			const char *var = config_variables[i];
			size_t d = name_distance(entry, len, var, strlen(var));

			known = d == 0;
			if (d < best) {
				best = d;
				nearest = var;
			}
		}
		if (known)
			continue;
		/* The shared prefix makes every name look near: judge the rest, and
		 * never offer a name that shares less than half of it (FOO is not LOG). */
		if (!name_is_near(best, len - prefix_len) || 2 * best >= len - prefix_len)
			nearest = NULL;
		fn(ctx, entry, len, nearest);
		count++;
	}
	return count;
}

static const char *environment_get(void *ctx, const char *var)
{
	(void)ctx;
	return getenv(var);
}

static const char *environment_name(void *ctx, const char *var)
{
	(void)ctx;
	return var;
}

const struct config_source config_from_environment = { environment_get, environment_name, NULL };

/* A setting that is unset or empty counts as not given. */
static const char *given(const struct config_source *src, const char *var)
{
	const char *v = src->get(src->ctx, var);

	return v && *v ? v : NULL;
}

static const char *name_of(const struct config_source *src, const char *var)
{
	return src->name(src->ctx, var);
}

static int load_list(struct selector_list **list, int *set, const char *var,
		     const struct config_source *src, char *err, size_t errlen)
{
	const char *v = given(src, var);
	char why[512];

	*set = v != NULL;
	if (!v)
		return 0;
	if (!(*list = malloc(sizeof **list))) {
		snprintf(err, errlen, "%s: out of memory", name_of(src, var));
		return -1;
	}
	if (selector_parse(*list, v, why, sizeof why)) {
		snprintf(err, errlen, "%s='%s': %s", name_of(src, var), v, why);
		free(*list);
		*list = NULL;
		return -1;
	}
	return 0;
}

/* A 0|1 variable into *OUT (left as it is when not given); -1 with ERR when malformed. */
static int load_switch(int *out, const char *var, const struct config_source *src, char *err, size_t errlen)
{
	const char *v = given(src, var);

	if (!v)
		return 0;
	if (strcmp(v, "0") && strcmp(v, "1")) {
		snprintf(err, errlen, "%s='%s': not a switch (accepted: 0, 1)", name_of(src, var), v);
		return -1;
	}
	*out = v[0] == '1';
	return 0;
}

void config_free(struct config *c)
{
	free(c->allow);
	free(c->deny);
	free(c->report_path);
	c->allow = c->deny = NULL;
	c->report_path = NULL;
}

/* Relative to the directory at start, not wherever the program ends. */
static int load_report_path(struct config *c, const char *name, const char *v, char *err, size_t errlen)
{
	char cwd[PATH_MAX];
	size_t len;

	if (v[0] != '/' && !getcwd(cwd, sizeof cwd)) {
		snprintf(err, errlen, "%s='%s': relative path, and the "
			 "current directory cannot be read", name, v);
		return -1;
	}
	len = (v[0] == '/' ? 0 : strlen(cwd) + 1) + strlen(v) + 1;
	if (len > PATH_MAX) {
		snprintf(err, errlen, "%s: path longer than %d bytes", name, PATH_MAX - 1);
		return -1;
	}
	if (!(c->report_path = malloc(len))) {
		snprintf(err, errlen, "%s: out of memory", name);
		return -1;
	}
	c->report_path[0] = '\0';
	if (v[0] != '/') {
		strcpy(c->report_path, cwd);
		strcat(c->report_path, "/");
	}
	strcat(c->report_path, v);
	return 0;
}

/* On error: the lists go, the report path stays (see config.h). */
static int fail(struct config *c)
{
	free(c->allow);
	free(c->deny);
	c->allow = c->deny = NULL;
	return -1;
}

int config_load(struct config *c, const struct config_source *src, char *err, size_t errlen)
{
	const char *v;
	long n;
	int i;

	/* Field by field: the caller may hold the struct in fresh memory. */
	c->mode = MODE_AUTO;
	c->mode_set = c->allow_set = c->deny_set = c->min_size_set = 0;
	c->min_size = 0;
	c->rescan_ms = RESCAN_MS_DEFAULT;
	c->log = LOG_WARN;
	c->inherit = 1;
	c->strict = 0;
	c->allow = c->deny = NULL;
	c->report_path = NULL;
	c->report_token[0] = '\0';

	/* The log level first, so that it governs the messages below. */
	if ((v = given(src, "KSM_ENABLE_LOG"))) {
		if ((i = word_index(v, level_names, 5)) < 0) {
			snprintf(err, errlen, "%s='%s': unknown level "
				 "(accepted: quiet, error, warn, info, debug)", name_of(src, "KSM_ENABLE_LOG"), v);
			return -1;
		}
		c->log = (enum log_level)i;
	}
	/* Then the report, so that even a process whose settings are wrong
	 * tells the launcher that the library was loaded. */
	if ((v = given(src, "KSM_ENABLE_REPORT")) &&
	    load_report_path(c, name_of(src, "KSM_ENABLE_REPORT"), v, err, errlen))
		return -1;
	if ((v = given(src, "KSM_ENABLE_REPORT_TOKEN"))) {
		if (strlen(v) != CONFIG_TOKEN_LEN || v[strspn(v, "0123456789abcdef")]) {
			snprintf(err, errlen, "%s: not a token (accepted: %d lower-case hex digits, "
				 "as ksm-run sets it)", name_of(src, "KSM_ENABLE_REPORT_TOKEN"), CONFIG_TOKEN_LEN);
			return -1;
		}
		memcpy(c->report_token, v, CONFIG_TOKEN_LEN + 1);
	}
	if ((v = given(src, "KSM_ENABLE_MODE"))) {
		if ((i = word_index(v, mode_names, 4)) < 0) {
			snprintf(err, errlen, "%s='%s': unknown mode "
				 "(accepted: auto, prctl, madvise, off)", name_of(src, "KSM_ENABLE_MODE"), v);
			return -1;
		}
		c->mode = (enum ksm_mode)i;
		c->mode_set = 1;
	}
	if (load_list(&c->allow, &c->allow_set, "KSM_ENABLE_ALLOW", src, err, errlen) ||
	    load_list(&c->deny, &c->deny_set, "KSM_ENABLE_DENY", src, err, errlen))
		return fail(c);
	if ((v = given(src, "KSM_ENABLE_MIN_SIZE"))) {
		if (parse_size(v, &c->min_size)) {
			snprintf(err, errlen, "%s='%s': not a size (accepted: a whole number of "
				 "bytes, with an optional K, M or G suffix)", name_of(src, "KSM_ENABLE_MIN_SIZE"), v);
			return fail(c);
		}
		c->min_size_set = 1;
	}
	if ((v = given(src, "KSM_ENABLE_RESCAN_MS"))) {
		if (parse_long_range(v, 0, RESCAN_MS_MAX, &n) || (n > 0 && n < RESCAN_MS_MIN)) {
			snprintf(err, errlen, "%s='%s': not a rescan period "
				 "(accepted: 0 to turn the rescan off, or %d to %d milliseconds)",
				 name_of(src, "KSM_ENABLE_RESCAN_MS"), v, RESCAN_MS_MIN, RESCAN_MS_MAX);
			return fail(c);
		}
		c->rescan_ms = n;
	}
	if (load_switch(&c->inherit, "KSM_ENABLE_INHERIT", src, err, errlen) ||
	    load_switch(&c->strict, "KSM_ENABLE_STRICT", src, err, errlen))
		return fail(c);
	/* Selections need madvise: the process-wide prctl cannot honour them. */
	if (c->mode == MODE_PRCTL && (c->allow_set || c->deny_set || c->min_size_set)) {
		snprintf(err, errlen, "%s=prctl merges all memory, but %s is set "
			 "(use %s=madvise or auto for a selection)", name_of(src, "KSM_ENABLE_MODE"),
			 name_of(src, c->allow_set ? "KSM_ENABLE_ALLOW" : c->deny_set ? "KSM_ENABLE_DENY"
				 : "KSM_ENABLE_MIN_SIZE"), name_of(src, "KSM_ENABLE_MODE"));
		return fail(c);
	}
	return 0;
}

enum coverage config_coverage(const struct config *c)
{
	switch (c->mode) {
	case MODE_OFF:
		return COVER_NOTHING;
	case MODE_PRCTL:
		return COVER_PROCESS;
	case MODE_MADVISE:
		return COVER_SELECTION;
	case MODE_AUTO:
		break;
	}
	return c->allow_set || c->deny_set || c->min_size_set ? COVER_SELECTION : COVER_PROCESS;
}
