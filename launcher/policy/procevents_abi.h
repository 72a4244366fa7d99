/*
 * procevents_abi.h - the kernel ABI of the proc connector, written out:
 * musl (the static ksm-run) has no kernel headers.  From the kernel's
 * include/uapi/linux/{netlink,connector,cn_proc}.h, which
 * tests/unit/test_launcher_procevents.c checks these against.
 */
#ifndef KSMRUN_POLICY_PROCEVENTS_ABI_H
#define KSMRUN_POLICY_PROCEVENTS_ABI_H

#include <stdint.h>

#define PE_NETLINK_CONNECTOR 11
#define PE_NLMSG_DONE 3
#define PE_NLMSG_ALIGN(n) (((n) + 3u) & ~3u)

/* struct nlmsghdr */
struct pe_nlmsghdr {
	uint32_t len;
	uint16_t type, flags;
	uint32_t seq, pid;
};
#define PE_NLMSG_HDRLEN PE_NLMSG_ALIGN(sizeof(struct pe_nlmsghdr))

/* struct sockaddr_nl */
struct pe_sockaddr_nl {
	unsigned short family, pad;
	uint32_t pid;           /* the sender's port: 0 is the kernel */
	uint32_t groups;
};

/* struct cn_msg, before its data */
struct pe_cn_msg {
	uint32_t idx, val, seq, ack;
	uint16_t len, flags;
};
#define PE_CN_IDX_PROC 1
#define PE_CN_VAL_PROC 1

/* enum proc_cn_mcast_op */
#define PE_MCAST_LISTEN 1
#define PE_MCAST_IGNORE 2

/* struct proc_event: what, then the union at an offset, its fields at offsets into it */
#define PE_WHAT_OFFSET 0
#define PE_DATA_OFFSET 16
#define PE_SIZE_MIN (PE_DATA_OFFSET + 8)        /* the union's first two fields */
#define PE_EVENT_NONE 0x00000000u               /* the answer to LISTEN: ack.err at +0 */
#define PE_EVENT_FORK 0x00000001u               /* child_pid at +8, child_tgid at +12 */
#define PE_EVENT_EXEC 0x00000002u               /* process_pid at +0, process_tgid at +4 */
#define PE_EVENT_UID 0x00000004u                /* as exec */
#define PE_EVENT_GID 0x00000040u                /* as exec */
#define PE_EVENT_EXIT 0x80000000u               /* as exec */
#define PE_FORK_CHILD_PID 8
#define PE_FORK_CHILD_TGID 12
#define PE_PROCESS_PID 0
#define PE_PROCESS_TGID 4
#define PE_ACK_ERR 0

#endif
