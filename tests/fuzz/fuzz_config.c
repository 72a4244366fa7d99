/*
 * fuzz_config.c - the library's settings (preload/core/config.c):
 * config_load with every KSM_ENABLE_* variable taken from the input,
 * through its struct config_source, against the rules of config.h and
 * libksmenable(7) written out below.  A setting accepted that the rules
 * refuse, or refused that they accept, or a value other than the one
 * given, is a crash.  The lists themselves are selector_parse's, fuzzed
 * on their own in fuzz_selector.c: here they count as good or bad as it
 * says.
 *
 * Input: a byte of options (the size of the message buffer, how the
 * settings are named), then NAME=VALUE records separated by NUL bytes; the
 * last record of a name wins, records of other names are ignored.
 */
#include <ctype.h>
#include <limits.h>
#include <unistd.h>

#include "config.h"
#include "fuzz.h"

static const char *const vars[] = {
	"KSM_ENABLE_MODE", "KSM_ENABLE_ALLOW", "KSM_ENABLE_DENY", "KSM_ENABLE_MIN_SIZE",
	"KSM_ENABLE_RESCAN_MS", "KSM_ENABLE_LOG", "KSM_ENABLE_REPORT", "KSM_ENABLE_REPORT_TOKEN",
	"KSM_ENABLE_INHERIT", "KSM_ENABLE_STRICT",
};
enum { V_MODE, V_ALLOW, V_DENY, V_MIN_SIZE, V_RESCAN, V_LOG, V_REPORT, V_TOKEN, V_INHERIT, V_STRICT, NVARS };

struct settings {
	const char *value[NVARS];       /* NULL: not given */
	int as_options;                 /* named as ksm-run names them */
};

static int var_index(const char *var)
{
	for (int i = 0; i < NVARS; i++)
		if (!strcmp(vars[i], var))
			return i;
	return -1;
}

static const char *source_get(void *ctx, const char *var)
{
	struct settings *s = ctx;
	int i = var_index(var);

	FUZZ_CHECK(i >= 0, "config_load asked for '%s', which libksmenable(7) does not know", var);
	return s->value[i];
}

static const char *source_name(void *ctx, const char *var)
{
	static const char *const options[] = {
		"--mode", "--allow", "--deny", "--min-size", "--rescan-ms", "--log", "--report",
		"--report-token", "--no-inherit", "--strict",
	};
	struct settings *s = ctx;
	int i = var_index(var);

	FUZZ_CHECK(i >= 0, "config_load named '%s'", var);
	return s->as_options ? options[i] : var;
}

/* A setting that is empty counts as not given. */
static const char *given(const struct settings *s, int i)
{
	return s->value[i] && *s->value[i] ? s->value[i] : NULL;
}

static int one_of(const char *v, const char *const *words, int n)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(v, words[i]))
			return i;
	return -1;
}

/* Digits only: the value, or -1 when it overflows LIMIT. */
static long long digits_value(const char *v, const char **end, unsigned long long limit)
{
	unsigned long long n = 0;
	int over = 0;

	for (*end = v; isdigit((unsigned char)**end); (*end)++) {
		unsigned d = (unsigned)(**end - '0');
		if (n > (limit - d) / 10)
			over = 1;
		else
			n = n * 10 + d;
	}
	return over ? -1 : (long long)(n > LLONG_MAX ? LLONG_MAX : n);
}

/* KSM_ENABLE_MIN_SIZE: digits, then K, M or G (powers of 1024). */
static int expected_size(const char *v, unsigned long *out)
{
	unsigned long long n = 0;
	const char *p = v;
	unsigned shift = 0;

	if (!isdigit((unsigned char)*p))
		return -1;
	for (; isdigit((unsigned char)*p); p++) {
		if (n > (ULONG_MAX - 9) / 10)
			return -1;                      /* as config.c: a conservative bound */
		n = n * 10 + (unsigned)(*p - '0');
	}
	if (*p && strchr("kK", *p))
		shift = 10, p++;
	else if (*p && strchr("mM", *p))
		shift = 20, p++;
	else if (*p && strchr("gG", *p))
		shift = 30, p++;
	if (*p || n > (ULONG_MAX >> shift))
		return -1;
	*out = (unsigned long)(n << shift);
	return 0;
}

/* What config_load must answer for S: 0 or -1, and the values when 0. */
static int expected(const struct settings *s, struct config *want, char *path, size_t pathlen)
{
	static const char *const modes[] = { "auto", "prctl", "madvise", "off" };
	static const char *const levels[] = { "quiet", "error", "warn", "info", "debug" };
	static struct selector_list scratch;
	char why[8];
	const char *v, *end;
	long long n;
	int bad = 0;

	memset(want, 0, sizeof *want);
	want->rescan_ms = RESCAN_MS_DEFAULT;
	want->log = LOG_WARN;
	want->inherit = 1;
	want->strict = 0;
	path[0] = '\0';
	if ((v = given(s, V_LOG)) && (n = one_of(v, levels, 5)) < 0)
		bad = 1;
	else if (v)
		want->log = (enum log_level)n;
	if ((v = given(s, V_REPORT))) {
		char cwd[PATH_MAX];

		if (v[0] != '/' && !getcwd(cwd, sizeof cwd))
			bad = 1;
		else if ((v[0] == '/' ? 0 : strlen(cwd) + 1) + strlen(v) + 1 > PATH_MAX)
			bad = 1;
		else
			snprintf(path, pathlen, "%s%s%s", v[0] == '/' ? "" : cwd, v[0] == '/' ? "" : "/", v);
	}
	if ((v = given(s, V_TOKEN))) {
		if (strlen(v) != CONFIG_TOKEN_LEN || v[strspn(v, "0123456789abcdef")])
			bad = 1;
		else
			memcpy(want->report_token, v, CONFIG_TOKEN_LEN + 1);
	}
	if ((v = given(s, V_MODE)) && (n = one_of(v, modes, 4)) < 0)
		bad = 1;
	else if (v)
		want->mode = (enum ksm_mode)n, want->mode_set = 1;
	if ((v = given(s, V_ALLOW)) && selector_parse(&scratch, v, why, sizeof why))
		bad = 1;
	want->allow_set = v != NULL;
	if ((v = given(s, V_DENY)) && selector_parse(&scratch, v, why, sizeof why))
		bad = 1;
	want->deny_set = v != NULL;
	if ((v = given(s, V_MIN_SIZE)) && expected_size(v, &want->min_size))
		bad = 1;
	want->min_size_set = v != NULL;
	if ((v = given(s, V_RESCAN))) {
		n = digits_value(v, &end, (unsigned long long)LONG_MAX);
		if (n < 0 || *end || end == v || n > RESCAN_MS_MAX || (n > 0 && n < RESCAN_MS_MIN))
			bad = 1;
		else
			want->rescan_ms = (long)n;
	}
	if ((v = given(s, V_INHERIT)) && strcmp(v, "0") && strcmp(v, "1"))
		bad = 1;
	else if (v)
		want->inherit = v[0] == '1';
	if ((v = given(s, V_STRICT)) && strcmp(v, "0") && strcmp(v, "1"))
		bad = 1;
	else if (v)
		want->strict = v[0] == '1';
	if (want->mode == MODE_PRCTL && (want->allow_set || want->deny_set || want->min_size_set))
		bad = 1;
	return bad ? -1 : 0;
}

/* A region of each class, to see that the lists loaded also match. */
static void use_lists(const struct config *c)
{
	static const struct region regions[] = {
		{ 0x1000, 0x2000, REGION_ANON, "", 0, 0, -1, -1, -1, -1 },
		{ 0x2000, 0x3000, REGION_ANON_NAMED, "libc_malloc]", 11, 0, -1, VMF_MG, -1, -1 },
		{ 0x3000, 0x4000, REGION_HEAP, "[heap]", 6, 0, -1, -1, -1, -1 },
		{ 0x4000, 0x5000, REGION_FILE, "/usr/lib/libc.so.6", 18, 0, -1, VMF_DD | VMF_LO, -1, -1 },
		{ 0x5000, 0x6000, REGION_SPECIAL, "[vdso]", 6, 0, -1, -1, -1, -1 },
	};

	for (size_t i = 0; i < sizeof regions / sizeof regions[0]; i++) {
		if (c->allow)
			(void)selector_matches(c->allow, &regions[i]);
		if (c->deny)
			(void)selector_names(c->deny, &regions[i]);
	}
	(void)config_coverage(c);
}

static void count_unknown(void *ctx, const char *name, size_t len, const char *nearest)
{
	FUZZ_CHECK(len >= 11 && !memcmp(name, "KSM_ENABLE_", 11), "named '%.*s', not of ours", (int)len, name);
	FUZZ_CHECK(!nearest || var_index(nearest) >= 0, "offered '%s'", nearest);
	(*(int *)ctx)++;
}

/*
 * The records as an environment: every entry whose name (up to the first
 * '=', or all of it) starts with KSM_ENABLE_ and is not one of vars[] is
 * reported once; nothing else is.
 */
static void check_unknown_names(char **records, size_t nrec)
{
	char *env[65];
	int want = 0, calls = 0, got;

	for (size_t i = 0; i < nrec; i++) {
		size_t len = strcspn(records[i], "=");
		int known = 0;

		env[i] = records[i];
		for (int v = 0; v < NVARS; v++)
			known |= strlen(vars[v]) == len && !memcmp(records[i], vars[v], len);
		want += len >= 11 && !memcmp(records[i], "KSM_ENABLE_", 11) && !known;
	}
	env[nrec] = NULL;
	got = config_unknown_variables(env, count_unknown, &calls);
	FUZZ_CHECK(got == want && calls == want, "%d unknown names reported (%d calls), not %d", got, calls, want);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char path[PATH_MAX + 1];
	struct settings s = { { NULL }, 0 };
	struct config_source src = { source_get, source_name, &s };
	struct config c, want;
	char *records[64];
	unsigned opts = fuzz_byte(&data, &size);
	size_t errlen = 1 + (opts & 0x7f) * 8, nrec = 0;
	char *err = fuzz_msgbuf(errlen);
	int got, exp;

	s.as_options = opts >> 7;
	while (size && nrec < sizeof records / sizeof records[0]) {
		char *r = records[nrec++] = fuzz_record(&data, &size, '\0'), *eq = strchr(r, '=');

		for (int i = 0; eq && i < NVARS; i++)
			if (strlen(vars[i]) == (size_t)(eq - r) && !memcmp(r, vars[i], (size_t)(eq - r)))
				s.value[i] = eq + 1;
	}
	exp = expected(&s, &want, path, sizeof path);
	memset(&c, 0xa5, sizeof c);          /* config_load must not need a clean struct */
	got = config_load(&c, &src, err, errlen);
	FUZZ_CHECK(got == exp, "config_load %d, the rules %d (message: %.*s)", got, exp,
		   got ? (int)errlen : 0, err);
	if (got) {
		FUZZ_CHECK(fuzz_terminated(err, errlen), "a message not NUL-terminated");
		FUZZ_CHECK(errlen == 1 || *err, "no message");
		FUZZ_CHECK(!c.allow && !c.deny, "lists left allocated after an error");
		if (errlen > 64)
			FUZZ_CHECK(!strncmp(err, s.as_options ? "--" : "KSM_ENABLE_", s.as_options ? 2 : 11),
				   "a message that names no setting: %s", err);
	} else {
		FUZZ_CHECK(c.mode == want.mode && c.mode_set == want.mode_set, "mode");
		FUZZ_CHECK(c.log == want.log, "log");
		FUZZ_CHECK(c.rescan_ms == want.rescan_ms, "rescan_ms %ld, not %ld", c.rescan_ms, want.rescan_ms);
		FUZZ_CHECK(c.inherit == want.inherit, "inherit");
		FUZZ_CHECK(c.strict == want.strict, "strict");
		FUZZ_CHECK(c.min_size_set == want.min_size_set && c.min_size == want.min_size,
			   "min_size %lu, not %lu", c.min_size, want.min_size);
		FUZZ_CHECK(c.allow_set == want.allow_set && (c.allow != NULL) == c.allow_set, "allow");
		FUZZ_CHECK(c.deny_set == want.deny_set && (c.deny != NULL) == c.deny_set, "deny");
		FUZZ_CHECK(!strcmp(c.report_token, want.report_token), "report_token");
		FUZZ_CHECK(path[0] ? c.report_path && !strcmp(c.report_path, path) : !c.report_path,
			   "report_path '%s', not '%s'", c.report_path ? c.report_path : "(none)", path);
		FUZZ_CHECK(config_coverage(&c) == (c.mode == MODE_OFF ? COVER_NOTHING :
			   c.mode == MODE_PRCTL ? COVER_PROCESS : c.mode == MODE_MADVISE ? COVER_SELECTION :
			   c.allow_set || c.deny_set || c.min_size_set ? COVER_SELECTION : COVER_PROCESS),
			   "config_coverage");
		use_lists(&c);
	}
	config_free(&c);
	check_unknown_names(records, nrec);
	for (size_t i = 0; i < nrec; i++)
		free(records[i]);
	free(err);
	return 0;
}
