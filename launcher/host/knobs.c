/*
 * knobs.c: the global KSM knobs in /sys/kernel/mm/ksm: reading, validating
 * every value before anything is written, and writing in an order the
 * kernel accepts.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/files.h"
#include "common/msg.h"
#include "common/parse.h"
#include "host/knobs.h"
#include "kernel_abi.h"

enum kind { K_BOOL, K_UINT, K_ULONG_POS, K_PERCENT, K_MODE, K_RUN, K_SHARING, K_OTHER };

/*
 * Write order: the advisor's limits, then its mode (switching the mode
 * resets pages_to_scan, using advisor_min_pages_to_scan for scan-time), then
 * pages_to_scan, and run last so that ksmd starts with the final rate.
 */
static const struct {
	const char *name;
	enum kind kind;
} known[] = {
	{ "advisor_target_scan_time", K_ULONG_POS },
	{ "advisor_max_cpu", K_PERCENT },
	{ "advisor_min_pages_to_scan", K_ULONG_POS },
	{ "advisor_max_pages_to_scan", K_ULONG_POS },
	{ "advisor_mode", K_MODE },
	{ "pages_to_scan", K_UINT },
	{ "sleep_millisecs", K_UINT },
	{ "smart_scan", K_BOOL },
	{ "use_zero_pages", K_BOOL },
	{ "max_page_sharing", K_SHARING },
	{ "merge_across_nodes", K_BOOL },
	{ "stable_node_chains_prune_millisecs", K_UINT },
	{ "run", K_RUN },
};
#define NKNOWN (int)(sizeof known / sizeof known[0])

bool knob_is_rate(const char *name)
{
	return !strcmp(name, "pages_to_scan") || !strcmp(name, "sleep_millisecs") || !strncmp(name, "advisor_", 8);
}

const char *knob_known_name(int i)
{
	return i >= 0 && i < NKNOWN ? known[i].name : NULL;
}

static int known_index(const char *name)
{
	for (int i = 0; i < NKNOWN; i++)
		if (!strcmp(known[i].name, name))
			return i;
	return -1;
}

/* Unknown knobs (newer kernels) sort between the known ones and run. */
static int order_of(const char *name)
{
	int i = known_index(name);

	if (i < 0)
		return NKNOWN - 1;
	return i == NKNOWN - 1 ? NKNOWN : i;
}

static int path_of(const char *name, char *buf, size_t len)
{
	int n = snprintf(buf, len, "%s/%s", KSM_SYSFS_DIR, name);

	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

/* advisor_mode reads back as "[none] scan-time": keep the selected word. */
int knob_read(const char *name, char *buf, size_t len)
{
	char path[256], raw[256];
	int r;

	if ((r = path_of(name, path, sizeof path)) || (r = read_text(path, raw, sizeof raw)))
		return r;
	char *sel = strchr(raw, '['), *end;
	if (sel && (end = strchr(sel, ']'))) {
		*end = '\0';
		memmove(raw, sel + 1, strlen(sel + 1) + 1);
	}
	snprintf(buf, len, "%s", raw);
	return 0;
}

int knob_write(const char *name, const char *value)
{
	char path[256];
	int fd, r = path_of(name, path, sizeof path);
	size_t len = strlen(value);

	if (r)
		return r;
	if ((fd = open(path, O_WRONLY | O_CLOEXEC)) < 0)
		return -errno;
	r = write(fd, value, len) == (ssize_t)len ? 0 : -errno;
	if (close(fd) && !r)
		r = -errno;
	return r;
}

/* Opening for writing changes nothing in sysfs: it tells if we may write. */
bool knob_probe_writable(const char *name, int *err)
{
	char path[256];
	int fd;

	if (path_of(name, path, sizeof path) || (fd = open(path, O_WRONLY | O_CLOEXEC)) < 0) {
		*err = errno;
		return false;
	}
	close(fd);
	return true;
}

static bool plain_word(const char *v)
{
	if (!*v || strlen(v) >= KNOB_VALUE_MAX)
		return false;
	for (; *v; v++)
		if (!((*v >= 'a' && *v <= 'z') || (*v >= 'A' && *v <= 'Z') ||
		      (*v >= '0' && *v <= '9') || *v == '_' || *v == '-' || *v == '.'))
			return false;
	return true;
}

int knob_check_value(const char *name, const char *value, char *why, size_t whylen)
{
	long long v;
	int i = known_index(name);

	/* Longer would be cut where the value is kept (and written cut). */
	if (strlen(value) >= KNOB_VALUE_MAX) {
		snprintf(why, whylen, "%s: a value of %zu characters is too long (at most %d)", name,
			 strlen(value), KNOB_VALUE_MAX - 1);
		return -1;
	}
	switch (i < 0 ? K_OTHER : known[i].kind) {
	case K_BOOL:
		if (strcmp(value, "0") && strcmp(value, "1"))
			goto bad_bool;
		return 0;
	case K_RUN:
		if (!strcmp(value, "2")) {
			snprintf(why, whylen, "run=2 unmerges every process on the machine; ksm-run never writes it");
			return -1;
		}
		if (strcmp(value, "0") && strcmp(value, "1"))
			goto bad_bool;
		return 0;
	case K_UINT:
		if (parse_ll(value, 0, UINT_MAX, &v))
			goto bad_num;
		return 0;
	case K_ULONG_POS:
		if (parse_ll(value, 1, LLONG_MAX, &v))
			goto bad_num;
		return 0;
	case K_PERCENT:
		if (parse_ll(value, 1, 100, &v))
			goto bad_num;
		return 0;
	case K_SHARING:
		if (parse_ll(value, 2, INT_MAX, &v))
			goto bad_num;
		return 0;
	case K_MODE:
		if (strcmp(value, "none") && strcmp(value, "scan-time")) {
			snprintf(why, whylen, "%s: '%s' is not none or scan-time", name, value);
			return -1;
		}
		return 0;
	case K_OTHER:
		if (!plain_word(value)) {
			snprintf(why, whylen, "%s: '%s' is not a plain value", name, value);
			return -1;
		}
		return 0;
	}
	return 0;
bad_bool:
	snprintf(why, whylen, "%s: '%s' is not 0 or 1", name, value);
	return -1;
bad_num:
	snprintf(why, whylen, "%s: '%s' is not a number in %s", name, value,
		 known[i].kind == K_UINT ? "0..4294967295" : known[i].kind == K_PERCENT ? "1..100" :
		 known[i].kind == K_SHARING ? "2..2147483647" : "1..9223372036854775807");
	return -1;
}

int knob_check_name(const char *name, char *why, size_t whylen)
{
	if (!*name || strchr(name, '/') || !strcmp(name, ".") || !strcmp(name, "..") ||
	    strlen(name) >= KNOB_NAME_MAX) {
		snprintf(why, whylen, "'%s' is not a knob name", name);
		return -1;
	}
	for (const char *p = name; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '_')) {
			snprintf(why, whylen, "'%s' is not a knob name", name);
			return -1;
		}
	return 0;
}

/* Knobs of features that kernels before them lack, and the value that asks for the feature off. */
static const struct { const char *name, *off; } off_when_absent[] = {
	{ "advisor_mode", "none" },     /* the scan-time advisor */
	{ "smart_scan", "0" },          /* smart scan */
};

int knob_validate(const char *name, const char *value, char *why, size_t whylen)
{
	char path[256];
	struct stat st;

	if (knob_check_name(name, why, whylen))
		return -1;
	if (path_of(name, path, sizeof path) || stat(path, &st) || !S_ISREG(st.st_mode)) {
		for (size_t i = 0; i < sizeof off_when_absent / sizeof off_when_absent[0]; i++)
			if (!strcmp(name, off_when_absent[i].name) && !strcmp(value, off_when_absent[i].off)) {
				snprintf(why, whylen, "%s=%s: this kernel has no %s, so it is off already; "
					 "nothing to set", name, value, name);
				return 1;
			}
		snprintf(why, whylen, "no knob '%s' in %s", name, KSM_SYSFS_DIR);
		return -1;
	}
	if (!(st.st_mode & S_IWUSR)) {
		snprintf(why, whylen, "'%s' is a read-only counter, not a knob", name);
		return -1;
	}
	return knob_check_value(name, value, why, whylen);
}

const char *knob_lookup(const struct knob_set *s, const char *name)
{
	for (int i = 0; i < s->n; i++)
		if (!strcmp(s->k[i].name, name))
			return s->k[i].value;
	return NULL;
}

void knob_put(struct knob_set *s, const char *name, const char *value)
{
	int i;

	for (i = 0; i < s->n; i++)
		if (!strcmp(s->k[i].name, name))
			break;
	if (i == s->n) {
		if (s->n == MAX_KNOBS)
			return;
		s->n++;
	}
	snprintf(s->k[i].name, sizeof s->k[i].name, "%s", name);
	snprintf(s->k[i].value, sizeof s->k[i].value, "%s", value);
}

static int cmp_knob(const void *a, const void *b)
{
	const struct knob *x = a, *y = b;
	int d = order_of(x->name) - order_of(y->name);

	return d ? d : strcmp(x->name, y->name);
}

void knob_order(struct knob_set *s)
{
	qsort(s->k, (size_t)s->n, sizeof s->k[0], cmp_knob);
}

/* Every writable knob: what the first of overlapping runs saves. */
int knobs_read_all(struct knob_set *s)
{
	char val[KNOB_VALUE_MAX];
	int err;

	s->n = 0;
	for (int i = 0; i < NKNOWN; i++) {
		char path[256];
		struct stat st;

		if (path_of(known[i].name, path, sizeof path) || stat(path, &st) || !(st.st_mode & S_IWUSR))
			continue;
		if ((err = knob_read(known[i].name, val, sizeof val)))
			return err;
		knob_put(s, known[i].name, val);
	}
	knob_order(s);
	return 0;
}

const char *knob_write_hint(const char *name, int err)
{
	if (err == EBUSY && (!strcmp(name, "merge_across_nodes") || !strcmp(name, "max_page_sharing")))
		return " (the kernel refuses to change it while any pages are merged; only run=2, "
		       "which unmerges every process, would allow it, and ksm-run never writes that)";
	if (err == EINVAL && !strcmp(name, "pages_to_scan"))
		return " (the kernel refuses pages_to_scan while the scan-time advisor is active: "
		       "use --advisor=none with it)";
	if (err == EACCES || err == EPERM)
		return " (writing KSM knobs needs root)";
	return "";
}

/* Writes the knobs that differ, in order; returns the number of failures. */
int knobs_apply(const struct knob_set *want, int *failed)
{
	struct knob_set s = *want;
	char cur[KNOB_VALUE_MAX];
	int nfail = 0, r;

	knob_order(&s);
	for (int i = 0; i < s.n; i++) {
		if (!knob_read(s.k[i].name, cur, sizeof cur) && !strcmp(cur, s.k[i].value))
			continue;
		if ((r = knob_write(s.k[i].name, s.k[i].value))) {
			msg("cannot set %s=%s: %s%s", s.k[i].name, s.k[i].value, strerror(-r),
			       knob_write_hint(s.k[i].name, -r));
			nfail++;
		}
	}
	if (failed)
		*failed = nfail;
	return nfail ? -1 : 0;
}

/*
 * Puts saved values back.  When the saved advisor mode is scan-time the
 * advisor owns pages_to_scan (the kernel refuses writes to it), so it is
 * left to the advisor.  run=2 is never written.
 */
int knobs_restore(const struct knob_set *saved)
{
	struct knob_set s = { 0 };
	const char *mode = knob_lookup(saved, "advisor_mode");

	for (int i = 0; i < saved->n; i++) {
		if (!strcmp(saved->k[i].name, "run") && !strcmp(saved->k[i].value, "2"))
			continue;
		if (mode && !strcmp(mode, "scan-time") && !strcmp(saved->k[i].name, "pages_to_scan"))
			continue;
		knob_put(&s, saved->k[i].name, saved->k[i].value);
	}
	return knobs_apply(&s, NULL);
}
