/*
 * knobs.h - the global KSM knobs in /sys/kernel/mm/ksm: reading, validating
 * every value before anything is written, and writing in an order the
 * kernel accepts.
 */
#ifndef KSMRUN_KNOBS_H
#define KSMRUN_KNOBS_H

#include <stdbool.h>
#include <stdio.h>
#include <stddef.h>

#define MAX_KNOBS 40
#define KNOB_NAME_MAX 64
#define KNOB_VALUE_MAX 64

struct knob_set {
	int n;
	struct knob {
		char name[KNOB_NAME_MAX];
		char value[KNOB_VALUE_MAX];
	} k[MAX_KNOBS];
};

/*
 * The knobs that set ksmd's scan rate (pages_to_scan, sleep_millisecs, the
 * advisor's): only the machine's one tuner writes them (election.h).
 */
bool knob_is_rate(const char *name);

/* The knobs ksm-run knows, in write order: NULL after the last. */
const char *knob_known_name(int i);

/* The value now ("[none] scan-time" reads as "none").  0 or -errno. */
int knob_read(const char *name, char *buf, size_t len);
int knob_write(const char *name, const char *value);
/* Opening for writing changes nothing in sysfs: may this process write? */
bool knob_probe_writable(const char *name, int *err);

/*
 * Validation in three steps, each returning 0, or -1 with a message in WHY:
 * a plausible name (lower case, digits, '_'), a value that suits the knob
 * (known knobs by kind, others as a plain word), and, for knob_validate, a
 * writable file of that name on this kernel.
 */
int knob_check_name(const char *name, char *why, size_t whylen);
int knob_check_value(const char *name, const char *value, char *why, size_t whylen);
/*
 * The same, and 1 with a note in WHY when the kernel lacks the knob of a
 * feature and VALUE asks for that feature off (advisor_mode=none,
 * smart_scan=0 before Linux 6.8 and 6.7): already so, nothing to write.
 */
int knob_validate(const char *name, const char *value, char *why, size_t whylen);

const char *knob_lookup(const struct knob_set *s, const char *name);
void knob_put(struct knob_set *s, const char *name, const char *value);
/* Sorts S into write order. */
void knob_order(struct knob_set *s);

/* Every writable knob of this kernel, in write order.  0 or -errno. */
int knobs_read_all(struct knob_set *s);
/* Writes what differs, in order; warns per failure.  0, or -1 (*FAILED: how many). */
int knobs_apply(const struct knob_set *want, int *failed);
/* Puts saved values back (never run=2; pages_to_scan is left to an active advisor). */
int knobs_restore(const struct knob_set *saved);
/* Why the kernel refused NAME with ERR, as advice (" (...)"), or "". */
const char *knob_write_hint(const char *name, int err);

#endif
