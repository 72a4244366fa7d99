/*
 * mem.h - reading and writing the memory of a thread stopped by us
 * (mem.c), for the injection's code, its restore data and its checks.
 */
#ifndef KSMRUN_PTRACE_MEM_H
#define KSMRUN_PTRACE_MEM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Opens /proc/TID/mem with FLAGS (O_CLOEXEC added); -1 with errno. */
int mem_open(pid_t tid, int flags);

/* Reads LEN bytes at ADDR of thread TID's memory (ours to read while traced). */
bool mem_read(pid_t tid, uint64_t addr, void *buf, size_t len);

/* Writes LEN bytes at ADDR, read-only pages too (as a debugger does); false with errno. */
bool mem_write(pid_t tid, uint64_t addr, const void *buf, size_t len);

#endif
