/* restore.h - ksm-run --restore (restore.c). */
#ifndef KSMRUN_RESTORE_H
#define KSMRUN_RESTORE_H

/* ksm-run --restore: the exit status (0, 1 if something stays, 125). */
int restore_main(void);

#endif
