/*
 * maps.h - parsing /proc/PID/maps and /proc/PID/smaps into regions.
 *
 * Parsing needs no allocation: text is read into a caller-sized buffer and
 * each region is handed to a callback with pointers into that buffer.
 */
#ifndef KSMENABLE_MAPS_H
#define KSMENABLE_MAPS_H

#include <stddef.h>

enum region_class {
	REGION_ANON,       /* unnamed private anonymous memory */
	REGION_ANON_NAMED, /* [anon:NAME] (CONFIG_ANON_VMA_NAME) */
	REGION_HEAP,       /* [heap] */
	REGION_STACK,      /* [stack], the main thread's stack */
	REGION_FILE,       /* private mapping of a file */
	REGION_SHARED,     /* shared mapping: never KSM-compatible */
	REGION_SPECIAL,    /* [vdso], [vvar], anon_inode:..., ...: never selected */
};

struct region {
	unsigned long start, end;
	enum region_class cls;
	/* ANON_NAMED: the NAME (name_len bytes, not NUL-terminated).
	 * FILE: the path, NUL-terminated, without " (deleted)". */
	const char *name;
	size_t name_len;
	int deleted;       /* FILE whose path ended in " (deleted)" */
	int mergeable;     /* smaps "VmFlags: ... mg": 1/0; -1 when not known (maps) */
	int vmflags;       /* smaps VmFlags that matter here (VMF_*); -1 when not known */
	long ksm_kb;       /* smaps "KSM:" in kB; -1 when not known */
	long anon_kb;      /* smaps "Anonymous:" in kB; -1 when not known */
};

/* The VmFlags of smaps that the library and ksm-run look at. */
#define VMF_MG 1           /* mg: mergeable (MADV_MERGEABLE or the process-wide flag) */
#define VMF_DD 2           /* dd: MADV_DONTDUMP, kept out of core dumps */
#define VMF_LO 4           /* lo: locked in memory (mlock) */
#define VMF_WF 8           /* wf: MADV_WIPEONFORK */

/* Returns nonzero to stop the walk; that value is then returned. */
typedef int (*region_fn)(const struct region *r, void *arg);

/* Classify the path field of a maps line (as the kernel prints it). */
enum region_class region_classify(const char *path, int shared);

/* Parse a NUL-terminated text in maps or smaps format (modified in place). */
int maps_parse_text(char *text, region_fn fn, void *arg);

/*
 * Read PATH (e.g. "/proc/self/maps") with read(2) through BUF and call FN
 * for each region.  Returns FN's nonzero value, 0, or -1 with errno.
 */
int maps_for_each(const char *path, char *buf, size_t bufsize, region_fn fn, void *arg);

/*
 * The same on an open file, read from its start: the library's rescan
 * thread keeps /proc/self/maps open, so that a program that forbids
 * itself open() later (a seccomp sandbox) is not killed for the library's
 * sake.
 */
int maps_for_each_fd(int fd, char *buf, size_t bufsize, region_fn fn, void *arg);

#endif
