/*
 * trampoline.c: where the code goes that lets a thread go on correctly by
 * itself if ksm-run dies while the thread runs one of our calls
 * (trampoline.h).
 *
 * The kernel lets a tracee go the moment its tracer dies, with whatever
 * registers are in it.  So the injected call does not run at a borrowed
 * system call instruction with the program's next instructions after it,
 * but at one followed by code of ours that puts every register back and
 * goes on where the thread was.  The code and the data it restores from
 * are the processor's (arch_x86_64.c, arch_aarch64.c); this file finds
 * their place.
 *
 * Where the code goes: the vDSO's mapping is page-sized, its ELF image
 * ends before the mapping does, and nothing executes (or reads) past the
 * image's end: that tail is zeros.  A tracer's write there (/proc/PID/mem)
 * makes the page a private copy of the target's, which only that process
 * (and children it forks later) sees.  Each thread uses one of a few
 * units chosen by its thread id, so that two ksm-runs attached to two
 * threads of one process do not share a slot.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "ptrace/arch.h"
#include "ptrace/mem.h"
#include "ptrace/trampoline.h"
#include "common/procfs.h"

#if ARCH_INJECTS

#define MAX_UNITS 16
#define VDSO_MAX (64 * 1024)            /* far above any vDSO seen (8 KiB on 6.x) */

struct range_found {
	uint64_t lo, hi;
};

static bool is_vdso(const char *line, void *arg)
{
	struct range_found *r = arg;
	unsigned long long a, b;

	if (!strstr(line, "[vdso]") || sscanf(line, "%llx-%llx", &a, &b) != 2)
		return false;
	r->lo = a;
	r->hi = b;
	return true;
}

/* The [vdso] mapping of TID: false when it has none. */
static bool vdso_range(pid_t tid, uint64_t *lo, uint64_t *hi)
{
	struct range_found r;

	if (!proc_maps_find(tid, is_vdso, &r))
		return false;
	*lo = r.lo;
	*hi = r.hi;
	return true;
}

/* Where the vDSO's ELF image ends (headers, segments, sections), or 0 if it is not one. */
static size_t image_end(const unsigned char *img, size_t len)
{
	const Elf64_Ehdr *eh = (const void *)img;
	size_t end;

	if (len < sizeof *eh || memcmp(eh->e_ident, ELFMAG, SELFMAG) || eh->e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh->e_phentsize != sizeof(Elf64_Phdr) || (eh->e_shnum && eh->e_shentsize != sizeof(Elf64_Shdr)))
		return 0;
	end = eh->e_shoff + (size_t)eh->e_shnum * eh->e_shentsize;
	if (eh->e_phoff + (size_t)eh->e_phnum * sizeof(Elf64_Phdr) > len || end > len)
		return 0;
	if (eh->e_phoff + (size_t)eh->e_phnum * sizeof(Elf64_Phdr) > end)
		end = eh->e_phoff + (size_t)eh->e_phnum * sizeof(Elf64_Phdr);
	for (int i = 0; i < eh->e_phnum; i++) {
		const Elf64_Phdr *ph = (const void *)(img + eh->e_phoff + (size_t)i * sizeof *ph);

		if (ph->p_offset + ph->p_filesz > end)
			end = ph->p_offset + ph->p_filesz;
	}
	for (int i = 0; i < eh->e_shnum; i++) {
		const Elf64_Shdr *sh = (const void *)(img + eh->e_shoff + (size_t)i * sizeof *sh);

		if (sh->sh_type != SHT_NOBITS && sh->sh_offset + sh->sh_size > end)
			end = sh->sh_offset + sh->sh_size;
	}
	return end <= len ? end : 0;
}

uint64_t trampoline_install(pid_t tid, char *why, size_t whylen)
{
	static unsigned char img[VDSO_MAX];
	uint64_t lo, hi;
	size_t end, units, at;
	int fd;
	ssize_t n;

	if (!vdso_range(tid, &lo, &hi) || hi <= lo || hi - lo > VDSO_MAX) {
		snprintf(why, whylen, "it has no vDSO, where ksm-run puts the code that restores it "
			 "should ksm-run die during the call");
		return 0;
	}
	if ((fd = mem_open(tid, O_RDONLY)) < 0)
		goto unreadable;
	n = pread(fd, img, hi - lo, (off_t)lo);
	close(fd);
	if (n != (ssize_t)(hi - lo))
		goto unreadable;
	if (!(end = image_end(img, hi - lo)))
		goto unreadable;
	end = (end + 63) & ~(size_t)63;
	units = end < hi - lo ? (hi - lo - end) / arch_tramp_unit : 0;
	if (units > MAX_UNITS)
		units = MAX_UNITS;
	if (!units) {
		snprintf(why, whylen, "its vDSO has no room after its image for the code that restores it "
			 "should ksm-run die during the call");
		return 0;
	}
	at = end + (size_t)tid % units * arch_tramp_unit;
	/* Ours already (an earlier attach, or its parent's), or zeros never used. */
	if (!memcmp(img + at, arch_tramp_code, arch_tramp_code_len))
		return lo + at;
	for (size_t i = 0; i < arch_tramp_unit; i++)
		if (img[at + i]) {
			snprintf(why, whylen, "its vDSO holds unknown bytes after its image: not written to");
			return 0;
		}
	if (!mem_write(tid, lo + at, arch_tramp_code, arch_tramp_code_len)) {
		snprintf(why, whylen, "the restore code could not be written to its vDSO: %s", strerror(errno));
		return 0;
	}
	return lo + at;
unreadable:
	snprintf(why, whylen, "its vDSO cannot be read as an ELF image");
	return 0;
}

/*
 * Is the block's place, down from RSP, in one readable and writable
 * mapping?  A tracer's write would go through to a PROT_NONE guard page,
 * which the trampoline could not then read.
 */
/* The mapping that holds the block's start (at lo): readable and writable, up to rsp? */
struct stack_probe {
	uint64_t lo, rsp;
	bool ok;
};

static bool holds_block(const char *line, void *arg)
{
	struct stack_probe *p = arg;
	unsigned long long a, b;
	char perms[8];

	if (sscanf(line, "%llx-%llx %7s", &a, &b, perms) != 3 || p->lo < a || p->lo >= b)
		return false;
	p->ok = perms[0] == 'r' && perms[1] == 'w' && p->rsp <= b;
	return true;
}

bool trampoline_stack_ok(pid_t tid, uint64_t rsp)
{
	struct stack_probe p = { arch_tramp_data_at(rsp), rsp, false };

	return proc_maps_find(tid, holds_block, &p) && p.ok;
}

#else

uint64_t trampoline_install(pid_t tid, char *why, size_t whylen)
{
	(void)tid;
	snprintf(why, whylen, "--attach is supported on x86_64 and aarch64 only");
	return 0;
}

#endif
