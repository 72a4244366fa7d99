/*
 * check.h - ksm-run --check-config[=FILE] (check.c): the host agent's
 * policy (policy.h) checked without applying it.
 */
#ifndef KSMRUN_POLICY_CHECK_H
#define KSMRUN_POLICY_CHECK_H

/* FILE: NULL for /etc/ksmenable/ksmenable.conf.  0 valid; 1 not (the errors said). */
int check_config_main(const char *file);

#endif
