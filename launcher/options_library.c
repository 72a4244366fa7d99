/*
 * options_library.c - the library's settings (KSM_ENABLE_*) as ksm-run's
 * options give them and the environment holds them: the one mapping of
 * options to variables, and their check by the library's own parser,
 * naming whichever of the two gave a bad one.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/msg.h"
#include "options_library.h"

/*
 * The library's settings as the library will see them: an option, else the
 * variable already in the environment.  Messages name whichever it was.
 */
static const struct { const char *var, *option; size_t off; } setting_options[] = {
	{ "KSM_ENABLE_MODE", "--mode", offsetof(struct opts, mode) },
	{ "KSM_ENABLE_ALLOW", "--allow", offsetof(struct opts, allow) },
	{ "KSM_ENABLE_DENY", "--deny", offsetof(struct opts, deny) },
	{ "KSM_ENABLE_MIN_SIZE", "--min-size", offsetof(struct opts, min_size) },
	{ "KSM_ENABLE_RESCAN_MS", "--rescan-ms", offsetof(struct opts, rescan) },
	{ "KSM_ENABLE_LOG", "--log", offsetof(struct opts, log) },
};

static const char *option_for(const struct opts *o, const char *var, const char **option)
{
	if (!strcmp(var, "KSM_ENABLE_INHERIT") && o->no_inherit) {
		*option = "--no-inherit";
		return "0";
	}
	for (size_t i = 0; i < sizeof setting_options / sizeof setting_options[0]; i++) {
		const char *v = *(const char *const *)((const char *)o + setting_options[i].off);
		if (!strcmp(var, setting_options[i].var) && v) {
			*option = setting_options[i].option;
			return v;
		}
	}
	return NULL;
}

void options_library_settings(const struct opts *o, void (*fn)(const char *var, const char *value))
{
	for (size_t i = 0; i < sizeof setting_options / sizeof setting_options[0]; i++) {
		const char *v = *(const char *const *)((const char *)o + setting_options[i].off);
		if (v)
			fn(setting_options[i].var, v);
	}
	if (o->no_inherit)
		fn("KSM_ENABLE_INHERIT", "0");
}

static const char *setting_get(void *ctx, const char *var)
{
	const struct opts *o = ctx;
	const char *option, *v = option_for(o, var, &option);

	/* --attach, --detach and --estimate judge other processes: ksm-run's own environment is not theirs. */
	if (o->action == ACT_ATTACH || o->action == ACT_DETACH || o->action == ACT_ESTIMATE)
		return v;
	return v ? v : getenv(var);
}

static const char *setting_name(void *ctx, const char *var)
{
	const char *option;

	return option_for(ctx, var, &option) ? option : var;
}

extern char **environ;

/* A KSM_ENABLE_* name in the environment that the library does not know. */
static void unknown_variable(void *ctx, const char *name, size_t len, const char *nearest)
{
	const char *strict = ctx;
	char near[96] = "";

	if (nearest)
		snprintf(near, sizeof near, " (did you mean %s?)", nearest);
	if (strict)
		die("%s: %.*s in the environment is not a variable of the library%s; nothing was run",
		    strict, (int)len, name, near);
	msg("warning: %.*s in the environment is not a variable of the library%s; "
	    "--strict makes this an error", (int)len, name, near);
}

void check_library_settings(struct opts *o)
{
	struct config_source src = { setting_get, setting_name, o };
	char why[1024];

	if (config_load(&o->lib, &src, why, sizeof why))
		die("%s", why);
	/* The command inherits ksm-run's environment, so a typo there is the command's. */
	if (o->action == ACT_RUN || o->action == ACT_PROFILE)
		config_unknown_variables(environ, unknown_variable,
					 o->strict ? "--strict" : o->lib.strict ? "KSM_ENABLE_STRICT=1" : NULL);
}
