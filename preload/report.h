/* report.h - KSM_ENABLE_REPORT: the library's line at exit (report.c). */
#ifndef KSMENABLE_REPORT_H
#define KSMENABLE_REPORT_H

/* Appends this process's JSON line to lib.cfg.report_path. */
void report_write(void);

#endif
