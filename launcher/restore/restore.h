/* restore.h - ksm-run --restore (restore.c). */
#ifndef KSMRUN_RESTORE_H
#define KSMRUN_RESTORE_H

/*
 * ksm-run --restore: the exit status (0, 1 if something stays, 125).  With
 * WATCH_S > 0 (--watch), again every WATCH_S seconds until INT or TERM.
 */
int restore_main(double watch_s);

#endif
