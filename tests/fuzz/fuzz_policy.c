/*
 * fuzz_policy.c - the host agent's policy files (launcher/policy/parse.c):
 * policy_parse on any text, against the grammar of ksmenable.conf(5)
 * and policy.h written out below:
 *  - the errors: a return of 0 is a file that called the error callback
 *    never; any other, the number of calls, each with this file's name, a
 *    line of the text (1 to its number of lines) and a message that is not
 *    empty and safe on a terminal (text.h: no C0 or C1 control, valid
 *    UTF-8: what the file holds is printed escaped); and a file with an
 *    error adds no rule;
 *  - an accepted file: a rule for each line that begins with '[' (any
 *    other section is an error), named as the man page says, unique in the
 *    policy (also against a rule of a file read before), with at least one
 *    match, an action of auto, prctl, madvise or off, a selection only with
 *    madvise or auto, and each match in its documented form (pod and
 *    container in lower case);
 *  - its texts: policy_rule_matches_text and policy_rule_action_text are
 *    what policy.h shows ("unit a.service, user www-data", "madvise
 *    (allow=anon, min-size=1M)"), and into buffers of 1 to 24 bytes and of
 *    odd sizes they write the start of it, terminated, never a byte past;
 *  - a round trip: the rules written out again as "key = value" lines, one
 *    a setting, parse again without an error into the same rules.
 * Any broken promise is a crash.
 *
 * user= looks a name up in the password database, which reads files (and
 * asks systemd's userdb over a socket): the harness is linked with
 * -Wl,--wrap=getpwnam_r and answers from a table of its own (users[]).
 *
 * Input: a byte of options (bit 0: a file with the rule "base" is read
 * before, as a drop-in follows the main file; the other bits size one more
 * buffer for the texts), then the text of the file (up to a NUL: the loader
 * refuses a file that holds one before parsing it).
 */
#include <pwd.h>

#include "common/text.h"
#include "fuzz.h"
#include "policy/policy.h"

#define FILE_NAME "fuzz.conf"
#define TEXT_FULL 8192                  /* more than any rule's texts (values printed at most 511 bytes) */

/* The password database of the harness. */
static const struct { const char *name; uid_t uid; } users[] = {
	{ "root", 0 }, { "daemon", 1 }, { "www-data", 33 }, { "nobody", 65534 }, { "app.user-1", 1000 },
};

int __wrap_getpwnam_r(const char *name, struct passwd *pw, char *buf, size_t len, struct passwd **found);

int __wrap_getpwnam_r(const char *name, struct passwd *pw, char *buf, size_t len, struct passwd **found)
{
	*found = NULL;
	for (size_t i = 0; i < sizeof users / sizeof users[0]; i++)
		if (!strcmp(name, users[i].name)) {
			if (strlen(name) + 1 > len)
				return 34;      /* ERANGE */
			memset(pw, 0, sizeof *pw);
			pw->pw_name = strcpy(buf, name);
			pw->pw_uid = pw->pw_gid = users[i].uid;
			*found = pw;
			return 0;
		}
	return 0;
}

struct said {
	size_t lines;                   /* the text's lines as the parser counts them: '\n' + 1 */
	int calls;
};

/* Is S safe on a terminal: valid UTF-8 (RFC 3629), no C0 or C1 control, no DEL? */
static int escaped(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	while (*p) {
		unsigned cp;
		int n;

		if (*p < 0x80) {
			if (*p < 0x20 || *p == 0x7f)
				return 0;
			p++;
			continue;
		}
		if (*p >= 0xc2 && *p <= 0xdf)
			n = 2, cp = *p & 0x1f;
		else if (*p >= 0xe0 && *p <= 0xef)
			n = 3, cp = *p & 0x0f;
		else if (*p >= 0xf0 && *p <= 0xf4)
			n = 4, cp = *p & 0x07;
		else
			return 0;
		for (int i = 1; i < n; i++) {
			if ((p[i] & 0xc0) != 0x80)
				return 0;
			cp = cp << 6 | (p[i] & 0x3f);
		}
		if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
		    (cp >= 0xd800 && cp <= 0xdfff) || (cp >= 0x80 && cp <= 0x9f))
			return 0;
		p += n;
	}
	return 1;
}

static void on_error(void *ctx, const char *file, int line, const char *message)
{
	struct said *s = ctx;

	s->calls++;
	FUZZ_CHECK(file && !strcmp(file, FILE_NAME), "error in file '%s'", file ? file : "(null)");
	FUZZ_CHECK(line >= 1 && (size_t)line <= s->lines, "line %d of a text of %zu lines: %s", line, s->lines,
		   message);
	FUZZ_CHECK(message && *message, "an empty message at line %d", line);
	FUZZ_CHECK(escaped(message), "a message with raw control bytes or bad UTF-8 at line %d: %s", line,
		   printable(message));
}

static void on_base_error(void *ctx, const char *file, int line, const char *message)
{
	(void)ctx;
	fuzz_fail(__FILE__, __LINE__, "the base file refused: %s:%d: %s", file, line, message);
}

/* The lines that begin a section: after spaces and tabs, a '['. */
static int sections(const char *text)
{
	int n = 0;

	for (const char *l = text; l; l = strchr(l, '\n'), l = l ? l + 1 : NULL) {
		const char *s = l + strspn(l, " \t");

		n += *s == '[';
	}
	return n;
}

/* The line LINE (from 1) of TEXT, after its leading blanks. */
static const char *line_of(const char *text, int line)
{
	const char *l = text;

	for (int i = 1; i < line && l; i++)
		if ((l = strchr(l, '\n')))
			l++;
	FUZZ_CHECK(l, "no line %d", line);
	return l + strspn(l, " \t");
}

static int only(const char *s, const char *set)
{
	return !s[strspn(s, set)];
}

#define HEX_LOWER "0123456789abcdef"
#define NAME_CHARS "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-."
#define UNIT_CHARS "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789:-_.\\@"

static int ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);

	return n > k && !strcmp(s + n - k, suffix);
}

/* A unit of the system manager: systemd's characters, one '@' at most, a kind that holds processes. */
static int system_unit(const char *s)
{
	const char *at = strchr(s, '@');

	return *s && strlen(s) <= 255 && only(s, UNIT_CHARS) && !(at && strchr(at + 1, '@')) &&
	       (ends_with(s, ".service") || ends_with(s, ".scope") || ends_with(s, ".slice"));
}

/* unit=: a system unit, or user@UID.service/NAME. */
static int rule_unit(const char *s)
{
	const char *slash = strchr(s, '/');
	size_t n = slash ? (size_t)(slash - s) : 0;

	if (!slash)
		return system_unit(s);
	return n > 13 && n < 64 && !strncmp(s, "user@", 5) && !strncmp(slash - 8, ".service", 8) &&
	       strspn(s + 5, "0123456789") == n - 13 && system_unit(slash + 1) && !strchr(slash + 1, '/');
}

static int pod_form(const char *s)
{
	size_t n = strlen(s);

	if (n == 32)
		return only(s, HEX_LOWER);
	if (n != 36)
		return 0;
	for (size_t i = 0; i < n; i++)
		if ((i == 8 || i == 13 || i == 18 || i == 23) ? s[i] != '-' : !strchr(HEX_LOWER, s[i]))
			return 0;
	return 1;
}

/* The uid that user= NAME is: a number up to 2^32 - 2, else the table's. */
static int uid_of(const char *name, uid_t *uid)
{
	unsigned long long v = 0;

	if (*name && only(name, "0123456789")) {
		for (const char *p = name; *p; p++)
			if ((v = v * 10 + (unsigned)(*p - '0')) > 4294967294ULL)
				break;
		if (v <= 4294967294ULL) {
			*uid = (uid_t)v;
			return 1;
		}
	}
	for (size_t i = 0; i < sizeof users / sizeof users[0]; i++)
		if (!strcmp(name, users[i].name)) {
			*uid = users[i].uid;
			return 1;
		}
	return 0;
}

static void check_rule(const struct policy *p, int i, const char *text, int base)
{
	static const char *const actions[] = { "auto", "prctl", "madvise", "off" };
	const struct policy_rule *r = &p->rules[i];
	size_t name_len = strnlen(r->name, sizeof r->name);
	uid_t uid;
	int mode = -1;

	FUZZ_CHECK(name_len > 0 && name_len < POLICY_NAME_MAX && only(r->name, NAME_CHARS), "rule %d: name '%s'", i,
		   printable(r->name));
	for (int j = 0; j < i; j++)
		FUZZ_CHECK(strcmp(p->rules[j].name, r->name), "rule %s twice", r->name);
	if (i < base)
		return;
	FUZZ_CHECK(r->file && !strcmp(r->file, FILE_NAME), "rule %s: file '%s'", r->name, r->file ? r->file : "");
	FUZZ_CHECK(r->line >= 1 && *line_of(text, r->line) == '[', "rule %s: line %d is no section", r->name, r->line);
	FUZZ_CHECK(i == base || r->line > p->rules[i - 1].line, "rule %s: line %d after %d", r->name, r->line,
		   p->rules[i - 1].line);
	FUZZ_CHECK(r->cgroup || r->unit || r->exe || r->user_given || r->pod_uid[0] || r->container[0] ||
		   r->qos != CG_QOS_NONE, "rule %s matches nothing", r->name);
	FUZZ_CHECK(!r->cgroup || (r->cgroup[0] == '/' && strlen(r->cgroup) <= 4096), "rule %s: cgroup", r->name);
	FUZZ_CHECK(!r->exe || (r->exe[0] == '/' && strlen(r->exe) <= 4096), "rule %s: exe", r->name);
	FUZZ_CHECK(!r->unit || rule_unit(r->unit), "rule %s: unit '%s'", r->name, printable(r->unit));
	if (r->user_given) {
		FUZZ_CHECK(only(r->user, NAME_CHARS) && uid_of(r->user, &uid) && uid == r->uid,
			   "rule %s: user '%s' is uid %u", r->name, printable(r->user), (unsigned)r->uid);
	} else {
		FUZZ_CHECK(!r->user[0], "rule %s: a user not given", r->name);
	}
	FUZZ_CHECK(!r->pod_uid[0] || pod_form(r->pod_uid), "rule %s: pod '%s'", r->name, printable(r->pod_uid));
	FUZZ_CHECK(!r->container[0] || (strlen(r->container) >= 4 && strlen(r->container) <= 64 &&
					only(r->container, HEX_LOWER)),
		   "rule %s: container '%s'", r->name, printable(r->container));
	FUZZ_CHECK(r->qos >= CG_QOS_NONE && r->qos <= CG_QOS_BESTEFFORT, "rule %s: qos %d", r->name, (int)r->qos);
	for (int m = 0; r->action && m < 4; m++)
		if (!strcmp(r->action, actions[m]))
			mode = m;
	FUZZ_CHECK(mode >= 0 && r->lib.mode == (enum ksm_mode)mode, "rule %s: action '%s', mode %d", r->name,
		   printable(r->action), (int)r->lib.mode);
	FUZZ_CHECK((mode != MODE_OFF && mode != MODE_PRCTL) || !(r->allow || r->deny || r->min_size),
		   "rule %s: action %s with a selection", r->name, r->action);
	FUZZ_CHECK(!!r->allow == !!r->lib.allow_set && !!r->deny == !!r->lib.deny_set &&
		   !!r->min_size == !!r->lib.min_size_set, "rule %s: the selection given and the library's", r->name);
}

/* R's matches as policy.h shows them: "unit php8.2-fpm.service, user www-data". */
static void matches_want(const struct policy_rule *r, char *buf, size_t len)
{
	const char *keys[] = { "cgroup", "unit", "exe", "user", "pod", "container", "qos" };
	const char *values[] = { r->cgroup, r->unit, r->exe, r->user_given ? r->user : NULL,
				 r->pod_uid[0] ? r->pod_uid : NULL, r->container[0] ? r->container : NULL,
				 r->qos != CG_QOS_NONE ? cg_qos_text(r->qos) : NULL };
	size_t n = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < 7; i++)
		if (values[i])
			n += (size_t)snprintf(buf + n, len - n, "%s%s %s", n ? ", " : "", keys[i], printable(values[i]));
}

/* "madvise (allow=anon, min-size=1M); across security domains". */
static void action_want(const struct policy_rule *r, char *buf, size_t len)
{
	const char *keys[] = { "allow", "deny", "min-size" };
	const char *values[] = { r->allow, r->deny, r->min_size };
	size_t n = (size_t)snprintf(buf, len, "%s", r->action);
	int any = 0;

	for (size_t i = 0; i < 3; i++)
		if (values[i])
			n += (size_t)snprintf(buf + n, len - n, "%s%s=%s", any++ ? ", " : " (", keys[i],
					      printable(values[i]));
	if (any)
		n += (size_t)snprintf(buf + n, len - n, ")");
	if (r->cross_domain)
		snprintf(buf + n, len - n, "; across security domains");
}

typedef void (*text_fn)(const struct policy_rule *r, char *buf, size_t len);

/* FN of R into a buffer of exactly LEN bytes: the start of FULL, terminated, nothing past. */
static void short_text(text_fn fn, const char *what, const struct policy_rule *r, const char *full, size_t len)
{
	char *b = fuzz_msgbuf(len);
	size_t want = strlen(full) < len ? strlen(full) : len - 1;

	fn(r, b, len);
	FUZZ_CHECK(fuzz_terminated(b, len), "%s of rule %s in %zu bytes: not terminated", what, r->name, len);
	FUZZ_CHECK(strlen(b) == want && !memcmp(b, full, want), "%s of rule %s in %zu bytes: '%s', not the start of '%s'",
		   what, r->name, len, b, full);
	free(b);
}

static void check_texts(const struct policy_rule *r, size_t extra)
{
	static char full[TEXT_FULL], want[TEXT_FULL];
	static const size_t odd[] = { 31, 33, 63, 65, 127, 255, 257, 511, 1023 };
	const text_fn fns[] = { policy_rule_matches_text, policy_rule_action_text };
	const text_fn wants[] = { matches_want, action_want };
	const char *names[] = { "matches", "action" };

	for (int f = 0; f < 2; f++) {
		fns[f](r, full, sizeof full);
		wants[f](r, want, sizeof want);
		FUZZ_CHECK(strlen(full) < sizeof full - 1 && !strcmp(full, want), "%s of rule %s: '%s', want '%s'",
			   names[f], r->name, full, want);
		FUZZ_CHECK(escaped(full), "%s of rule %s: raw control bytes", names[f], r->name);
		for (size_t len = 1; len <= 24; len++)
			short_text(fns[f], names[f], r, full, len);
		for (size_t k = 0; k < sizeof odd / sizeof odd[0]; k++)
			short_text(fns[f], names[f], r, full, odd[k]);
		short_text(fns[f], names[f], r, full, extra);
	}
}

/* The rebuilt text: its bytes, its size, the lines written. */
struct rebuilt {
	char *text;
	size_t len, n;
	int lines;
};

/* A line of the rebuilt text: "[rule NAME]", or "KEY = VALUE" when VALUE is given. */
static void put(struct rebuilt *t, const char *key, const char *value)
{
	int w;

	if (!value)
		return;
	w = snprintf(t->text + t->n, t->len - t->n, *key == '[' ? "%s%s]\n" : "%s = %s\n", key, value);
	FUZZ_CHECK(w > 0 && (size_t)w < t->len - t->n, "the rebuilt text fits");
	t->n += (size_t)w;
	t->lines++;
}

static int same(const char *a, const char *b)
{
	return (!a && !b) || (a && b && !strcmp(a, b));
}

/* The rules from FIRST written out as settings, one a line, and parsed again: the same rules. */
static void round_trip(const struct policy *p, int first)
{
	struct rebuilt t = { NULL, 64, 0, 0 };
	struct policy again = { 0 };
	struct said s = { 1, 0 };
	int *header = fuzz_alloc((size_t)(p->n - first) * sizeof *header);

	for (int i = first; i < p->n; i++) {
		const struct policy_rule *r = &p->rules[i];

		t.len += 256 + 3 * 4100 + strlen(r->action) + (r->allow ? strlen(r->allow) : 0) +
			 (r->deny ? strlen(r->deny) : 0) + (r->min_size ? strlen(r->min_size) : 0);
	}
	t.text = fuzz_alloc(t.len);
	t.text[0] = '\0';
	for (int i = first; i < p->n; i++) {
		const struct policy_rule *r = &p->rules[i];

		header[i - first] = t.lines + 1;
		put(&t, "[rule ", r->name);
		put(&t, "cgroup", r->cgroup);
		put(&t, "unit", r->unit);
		put(&t, "exe", r->exe);
		put(&t, "user", r->user_given ? r->user : NULL);
		put(&t, "pod", r->pod_uid[0] ? r->pod_uid : NULL);
		put(&t, "container", r->container[0] ? r->container : NULL);
		put(&t, "qos", r->qos != CG_QOS_NONE ? cg_qos_text(r->qos) : NULL);
		put(&t, "action", r->action);
		put(&t, "allow", r->allow);
		put(&t, "deny", r->deny);
		put(&t, "min-size", r->min_size);
		put(&t, "cross-domain", r->cross_domain ? "yes" : NULL);
	}
	s.lines = (size_t)t.lines + 1;
	FUZZ_CHECK(policy_parse(&again, FILE_NAME, t.text, on_error, &s) == 0 && s.calls == 0,
		   "the rules written out again are refused (%d errors):\n%s", s.calls, t.text);
	FUZZ_CHECK(again.n == p->n - first, "%d rules, written out and parsed again %d", p->n - first, again.n);
	for (int i = 0; i < again.n; i++) {
		const struct policy_rule *a = &p->rules[first + i], *b = &again.rules[i];

		FUZZ_CHECK(!strcmp(a->name, b->name) && b->line == header[i], "round trip: rule %s at %d, then %s at %d",
			   a->name, header[i], b->name, b->line);
		FUZZ_CHECK(same(a->cgroup, b->cgroup) && same(a->unit, b->unit) && same(a->exe, b->exe),
			   "round trip: rule %s's cgroup, unit or exe", a->name);
		FUZZ_CHECK(a->user_given == b->user_given && a->uid == b->uid && !strcmp(a->user, b->user),
			   "round trip: rule %s's user", a->name);
		FUZZ_CHECK(!strcmp(a->pod_uid, b->pod_uid) && !strcmp(a->container, b->container) && a->qos == b->qos,
			   "round trip: rule %s's pod, container or qos", a->name);
		FUZZ_CHECK(same(a->action, b->action) && same(a->allow, b->allow) && same(a->deny, b->deny) &&
			   same(a->min_size, b->min_size) && a->cross_domain == b->cross_domain,
			   "round trip: rule %s's action", a->name);
		FUZZ_CHECK(a->lib.mode == b->lib.mode && a->lib.min_size == b->lib.min_size &&
			   config_coverage(&a->lib) == config_coverage(&b->lib), "round trip: rule %s's settings", a->name);
	}
	policy_free(&again);
	free(header);
	free(t.text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	unsigned options = fuzz_byte(&data, &size);
	int base = options & 1;
	size_t extra = 1 + (options >> 1);
	char *text = fuzz_record(&data, &size, '\0');
	struct policy p = { 0 };
	struct said s = { 1, 0 };
	int errors;

	for (const char *c = text; *c; c++)
		s.lines += *c == '\n';
	if (base)
		FUZZ_CHECK(policy_parse(&p, "base.conf", "[rule base]\nuser = www-data\naction = prctl\n", on_base_error,
					NULL) == 0 && p.n == 1, "the base file");
	errors = policy_parse(&p, FILE_NAME, text, on_error, &s);
	FUZZ_CHECK(errors == s.calls, "%d errors returned, %d said", errors, s.calls);
	FUZZ_CHECK(p.nfiles == base + 1 && !strcmp(p.files[base], FILE_NAME), "%d files", p.nfiles);
	if (errors) {
		FUZZ_CHECK(errors > 0 && p.n == base, "a file with %d errors added %d rules", errors, p.n - base);
		goto out;
	}
	FUZZ_CHECK(p.n == base + sections(text) && p.n <= POLICY_MAX_RULES, "%d rules of a file with %d sections",
		   p.n - base, sections(text));
	for (int i = 0; i < p.n; i++)
		check_rule(&p, i, text, base);
	for (int i = base; i < p.n; i++)
		check_texts(&p.rules[i], extra);
	round_trip(&p, base);
out:
	policy_free(&p);
	FUZZ_CHECK(!p.n && !p.rules && !p.nfiles && !p.files, "policy_free leaves a policy");
	free(text);
	return 0;
}
