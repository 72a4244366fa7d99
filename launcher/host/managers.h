/*
 * managers.h - other KSM managers on this machine (managers.c): ksmtuned
 * (Debian's package enables its service; Proxmox ships it on), tuned with
 * a profile that writes /sys/kernel/mm/ksm.  ksm-run's own instances are in
 * the shared state (hoststate.h), not here.
 */
#ifndef KSMRUN_MANAGERS_H
#define KSMRUN_MANAGERS_H

#include <stddef.h>

/* "ksmtuned (pid 123)" and the like into BUF; returns BUF, or NULL when none runs. */
const char *other_manager(char *buf, size_t len);

#endif
