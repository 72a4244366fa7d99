/*
 * elf.h - will the dynamic loader run for a command?  A static binary (no
 * PT_INTERP program header) never loads LD_PRELOAD libraries, so only the
 * prctl made before exec can enable KSM in it.
 */
#ifndef KSMRUN_ELF_H
#define KSMRUN_ELF_H

enum exec_kind {
	EXEC_UNKNOWN,       /* not found, unreadable, a script, not ELF: decided at exec */
	EXEC_DYNAMIC,       /* an ELF program with an interpreter: the library loads */
	EXEC_STATIC,        /* an ELF program without one: the library cannot load */
};

/*
 * What COMMAND is, found along PATH as execvp(3) would find it.  A script
 * is EXEC_UNKNOWN: its interpreter decides.
 */
enum exec_kind exec_kind_of(const char *command);

/* The same for the file PATH (exposed for the unit tests). */
enum exec_kind exec_kind_of_file(const char *path);

#endif
