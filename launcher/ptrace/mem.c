/*
 * mem.c: the memory of a thread stopped by us (mem.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/ptrace.h>
#include <unistd.h>

#include "ptrace/mem.h"

int mem_open(pid_t tid, int flags)
{
	char path[64];

	snprintf(path, sizeof path, "/proc/%d/mem", (int)tid);
	return open(path, flags | O_CLOEXEC);
}

bool mem_read(pid_t tid, uint64_t addr, void *buf, size_t len)
{
	int fd = mem_open(tid, O_RDONLY);
	ssize_t n;

	if (fd < 0)
		return false;
	n = pread(fd, buf, len, (off_t)addr);
	close(fd);
	return n == (ssize_t)len;
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
 * /proc/PID/mem is mode 0600 and its user's: root opens it for writing
 * only with CAP_DAC_OVERRIDE, which the daemon's unit does not keep; then
 * the words go one by one.
 */
bool mem_write(pid_t tid, uint64_t addr, const void *buf, size_t len)
{
	int fd = mem_open(tid, O_RDWR);
	bool ok;

	if (fd < 0)
		return (errno == EACCES || errno == EPERM) && poke_mem(tid, addr, buf, len);
	ok = pwrite(fd, buf, len, (off_t)addr) == (ssize_t)len;
	close(fd);
	return ok;
}
