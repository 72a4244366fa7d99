/*
 * pressure.h - how short of memory the machine is (pressure.c), for the
 * daemon: 0 (plenty) to 1 (stalled).  A machine with under a tenth of its
 * RAM available is under pressure whatever PSI says (1 - the available
 * share: it does not stall yet, but is about to); otherwise PSI's
 * /proc/pressure/memory "some" avg10 (the share of time some task waited
 * for memory) where the kernel has CONFIG_PSI; without PSI, 0.1 when under
 * half of RAM is available, else 0.  Negative when unknown.  *SOURCE names
 * what was used.
 */
#ifndef KSMRUN_PRESSURE_H
#define KSMRUN_PRESSURE_H

double memory_pressure(const char **source);

#endif
