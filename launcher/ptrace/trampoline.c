/*
 * trampoline.c: the code that lets a thread go on correctly by itself if
 * ksm-run dies while the thread runs one of our calls (trampoline.h).
 *
 * The kernel lets a tracee go the moment its tracer dies, with whatever
 * registers are in it.  So the injected call does not run at a borrowed
 * `syscall` instruction with the program's next instructions after it,
 * but at a `syscall` followed by code of ours that puts every register
 * back and jumps to where the thread was:
 *
 *     syscall
 *     pop r15 ... pop rdi      the general registers, from a block that
 *     popfq                    rsp points at (on its own stack, below
 *     pop rsp                  the red zone: the program never reads it)
 *     jmp [rip + slot]         the thread's rip, kept beside this code
 *
 * The rip is not on the stack: between `pop rsp` and the jump a signal
 * frame may be written below the restored rsp, where the block was.
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
#include <sys/ptrace.h>
#include <unistd.h>

#include "ptrace/trampoline.h"
#include "common/procfs.h"

#if defined(__x86_64__)

#define UNIT 48                         /* code (33 bytes), padding, the rip's slot */
#define SLOT_AT 40
#define MAX_UNITS 16
#define VDSO_MAX (64 * 1024)            /* far above any vDSO seen (8 KiB on 6.x) */
#define RED_ZONE 128                    /* the x86-64 ABI's: the program may keep data there */

static const unsigned char code[SLOT_AT] = {
	0x0f, 0x05,                     /* syscall */
	0x41, 0x5f, 0x41, 0x5e,         /* pop r15; pop r14 */
	0x41, 0x5d, 0x41, 0x5c,         /* pop r13; pop r12 */
	0x5d, 0x5b,                     /* pop rbp; pop rbx */
	0x41, 0x5b, 0x41, 0x5a,         /* pop r11; pop r10 */
	0x41, 0x59, 0x41, 0x58,         /* pop r9;  pop r8 */
	0x58, 0x59, 0x5a, 0x5e, 0x5f,   /* pop rax, rcx, rdx, rsi, rdi */
	0x9d,                           /* popfq */
	0x5c,                           /* pop rsp */
	0xff, 0x25, SLOT_AT - 33, 0, 0, 0,  /* jmp [rip + 7]: the slot, after the padding */
	0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc,  /* int3: never reached */
};

/* The block the code pops, in its order. */
struct block {
	uint64_t r15, r14, r13, r12, rbp, rbx, r11, r10, r9, r8, rax, rcx, rdx, rsi, rdi, flags, rsp;
};

static int open_mem(pid_t tid, int flags)
{
	char path[64];

	snprintf(path, sizeof path, "/proc/%d/mem", (int)tid);
	return open(path, flags | O_CLOEXEC);
}

/*
 * LEN bytes at ADDR of the stopped thread TID, word by word with
 * PTRACE_POKEDATA: it writes read-only pages too (FOLL_FORCE), as
 * /proc/PID/mem does, and needs only the tracer's right, not the file's.
 */
static bool poke_mem(pid_t tid, uint64_t addr, const unsigned char *buf, size_t len)
{
	for (size_t done = 0; done < len;) {
		uint64_t at = (addr + done) & ~(uint64_t)7, off = addr + done - at;
		size_t n = len - done < 8 - off ? len - done : 8 - off;
		long word;

		errno = 0;
		word = ptrace(PTRACE_PEEKDATA, tid, (void *)at, NULL);
		if (errno)
			return false;
		memcpy((unsigned char *)&word + off, buf + done, n);
		if (ptrace(PTRACE_POKEDATA, tid, (void *)at, (void *)word))
			return false;
		done += n;
	}
	return true;
}

/*
 * Writes to the stopped thread's memory.  /proc/PID/mem is mode 0600 and
 * its user's: root opens it for writing only with CAP_DAC_OVERRIDE, which
 * the daemon's unit does not keep; then the words go one by one.
 */
static bool put_mem(pid_t tid, uint64_t addr, const void *buf, size_t len)
{
	int fd = open_mem(tid, O_RDWR);
	bool ok;

	if (fd < 0)
		return (errno == EACCES || errno == EPERM) && poke_mem(tid, addr, buf, len);
	ok = pwrite(fd, buf, len, (off_t)addr) == (ssize_t)len;
	close(fd);
	return ok;
}

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
	if ((fd = open_mem(tid, O_RDONLY)) < 0)
		goto unreadable;
	n = pread(fd, img, hi - lo, (off_t)lo);
	close(fd);
	if (n != (ssize_t)(hi - lo))
		goto unreadable;
	if (!(end = image_end(img, hi - lo)))
		goto unreadable;
	end = (end + 63) & ~(size_t)63;
	units = end < hi - lo ? (hi - lo - end) / UNIT : 0;
	if (units > MAX_UNITS)
		units = MAX_UNITS;
	if (!units) {
		snprintf(why, whylen, "its vDSO has no room after its image for the code that restores it "
			 "should ksm-run die during the call");
		return 0;
	}
	at = end + (size_t)tid % units * UNIT;
	/* Ours already (an earlier attach, or its parent's), or zeros never used. */
	if (!memcmp(img + at, code, sizeof code))
		return lo + at;
	for (size_t i = 0; i < UNIT; i++)
		if (img[at + i]) {
			snprintf(why, whylen, "its vDSO holds unknown bytes after its image: not written to");
			return 0;
		}
	if (!put_mem(tid, lo + at, code, sizeof code)) {
		snprintf(why, whylen, "the restore code could not be written to its vDSO: %s", strerror(errno));
		return 0;
	}
	return lo + at;
unreadable:
	snprintf(why, whylen, "its vDSO cannot be read as an ELF image");
	return 0;
}

static uint64_t block_at(uint64_t rsp)
{
	return (rsp - RED_ZONE - sizeof(struct block)) & ~(uint64_t)15;
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
	struct stack_probe p = { block_at(rsp), rsp, false };

	return proc_maps_find(tid, holds_block, &p) && p.ok;
}

uint64_t trampoline_arm(pid_t tid, uint64_t tramp, const struct user_regs_struct *r)
{
	struct block b = {
		r->r15, r->r14, r->r13, r->r12, r->rbp, r->rbx, r->r11, r->r10, r->r9, r->r8,
		r->rax, r->rcx, r->rdx, r->rsi, r->rdi, r->eflags, r->rsp,
	};
	uint64_t at = block_at(r->rsp);
	uint64_t rip = r->rip;

	return put_mem(tid, at, &b, sizeof b) && put_mem(tid, tramp + SLOT_AT, &rip, sizeof rip) ? at : 0;
}

#else

uint64_t trampoline_install(pid_t tid, char *why, size_t whylen)
{
	(void)tid;
	snprintf(why, whylen, "--attach is supported on x86_64 only");
	return 0;
}

#endif
