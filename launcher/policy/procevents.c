/*
 * procevents.c: the proc connector (procevents.h).  Its ABI: a netlink
 * socket of NETLINK_CONNECTOR bound to the group CN_IDX_PROC; a message
 * PROC_CN_MCAST_LISTEN to the kernel makes it send events (only while
 * some socket listens, and only to one with CAP_NET_ADMIN in the first
 * user and PID namespaces); each event is a netlink message holding a
 * cn_msg holding a struct proc_event.  The kernel answers the LISTEN with
 * an event of its own (PROC_EVENT_NONE) that carries an errno; kernels
 * before 6.3 do not answer at all from another namespace.
 *
 * Another process can send to this socket too (netlink unicast needs no
 * privilege): only messages from the kernel (port 0) are read.
 */
#include <errno.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "policy/procevents.h"
#include "policy/procevents_abi.h"

/* What it keeps of a burst while the agent is busy attaching: 4 MiB of messages (a few seconds at 500 starts a second). */
#define RECEIVE_BUFFER (4 << 20)

/* A burst the size of the buffer must not lose events before the agent comes back. */
static void enlarge_buffer(int fd)
{
	int size = RECEIVE_BUFFER;

	/* FORCE goes past net.core.rmem_max with CAP_NET_ADMIN, which a listener has. */
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof size))
		(void)setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof size);
}

static int send_op(int fd, uint32_t op, uint32_t seq)
{
	struct pe_cn_msg c = { .idx = PE_CN_IDX_PROC, .val = PE_CN_VAL_PROC, .seq = seq, .len = sizeof op };
	struct pe_nlmsghdr h = { .len = PE_NLMSG_HDRLEN + sizeof c + sizeof op, .type = PE_NLMSG_DONE };
	struct pe_sockaddr_nl kernel = { .family = AF_NETLINK };
	char buf[PE_NLMSG_HDRLEN + sizeof c + sizeof op];

	memcpy(buf, &h, sizeof h);
	memcpy(buf + PE_NLMSG_HDRLEN, &c, sizeof c);
	memcpy(buf + PE_NLMSG_HDRLEN + sizeof c, &op, sizeof op);
	return sendto(fd, buf, h.len, 0, (struct sockaddr *)&kernel, sizeof kernel) < 0 ? -1 : 0;
}

/*
 * One datagram from the kernel into BUF: its length, 0 when none waits
 * (or it came from another sender), -1 with errno.
 */
static ssize_t receive(int fd, char *buf, size_t len)
{
	struct pe_sockaddr_nl from;
	struct iovec iov = { buf, len };
	struct msghdr m = { .msg_name = &from, .msg_namelen = sizeof from, .msg_iov = &iov, .msg_iovlen = 1 };
	ssize_t n = recvmsg(fd, &m, MSG_DONTWAIT);

	if (n < 0)
		return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? 0 : -1;
	if (m.msg_namelen != sizeof from || from.family != AF_NETLINK || from.pid != 0)
		return 0;       /* not the kernel's: nothing of it is read */
	return n;
}

/* A 32-bit field at OFF of the event EV (of LEN bytes), or 0 past its end. */
static uint32_t field(const char *ev, size_t len, size_t off)
{
	uint32_t v = 0;

	if (off + sizeof v <= len)
		memcpy(&v, ev + off, sizeof v);
	return v;
}

/*
 * Calls EACH for every process event in the datagram BUF of N bytes (the
 * event's bytes and length: fields are read with field(), as an event in
 * a message is not aligned for its 64-bit member).  Stops early when
 * EACH returns nonzero: that value.
 */
static int each_event(const char *buf, size_t n, int (*each)(const char *ev, size_t len, void *ctx), void *ctx)
{
	for (size_t at = 0; at + PE_NLMSG_HDRLEN <= n;) {
		struct pe_nlmsghdr h;
		struct pe_cn_msg c;
		const char *body = buf + at + PE_NLMSG_HDRLEN;
		size_t room;
		int r;

		memcpy(&h, buf + at, sizeof h);
		if (h.len < PE_NLMSG_HDRLEN || h.len > n - at)
			break;          /* a truncated or malformed message ends the datagram */
		room = h.len - PE_NLMSG_HDRLEN;
		at += PE_NLMSG_ALIGN(h.len);
		if (h.type != PE_NLMSG_DONE || room < sizeof c)
			continue;
		memcpy(&c, body, sizeof c);
		if (c.idx != PE_CN_IDX_PROC || c.val != PE_CN_VAL_PROC || c.len > room - sizeof c ||
		    c.len < PE_SIZE_MIN)
			continue;
		if ((r = each(body + sizeof c, c.len, ctx)))
			return r;
	}
	return 0;
}

/* The kernel's answer to our LISTEN: its errno plus one, or 0 for another event. */
static int listen_answer(const char *ev, size_t len, void *ctx)
{
	(void)ctx;
	if (field(ev, len, PE_WHAT_OFFSET) != PE_EVENT_NONE)
		return 0;
	return (int)field(ev, len, PE_DATA_OFFSET + PE_ACK_ERR) + 1;
}

int procevents_open(void)
{
	struct pe_sockaddr_nl me = { .family = AF_NETLINK, .groups = PE_CN_IDX_PROC };
	char buf[4096];
	int fd, saved, answer = 0;

	fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, PE_NETLINK_CONNECTOR);
	if (fd < 0)
		return -1;
	if (bind(fd, (struct sockaddr *)&me, sizeof me) || send_op(fd, PE_MCAST_LISTEN, 1))
		goto fail;
	enlarge_buffer(fd);
	/* The answer comes at once, as the LISTEN is taken; events of others may come before it. */
	for (int tries = 0; !answer && tries < 64; tries++) {
		struct pollfd p = { fd, POLLIN, 0 };
		ssize_t n;

		if (poll(&p, 1, 500) <= 0) {
			errno = ETIMEDOUT;      /* no answer: not the first namespaces, on older kernels */
			goto fail;
		}
		if ((n = receive(fd, buf, sizeof buf)) < 0)
			goto fail;
		answer = each_event(buf, (size_t)n, listen_answer, NULL);
	}
	if (answer != 1) {
		errno = answer > 1 ? answer - 1 : ETIMEDOUT;
		goto fail;
	}
	return fd;
fail:
	saved = errno;
	close(fd);
	errno = saved;
	return -1;
}

struct gather {
	struct procevent *out;
	size_t n, max;
};

static int gather_one(const char *ev, size_t len, void *ctx)
{
	struct gather *g = ctx;
	const size_t d = PE_DATA_OFFSET;
	uint32_t pid = field(ev, len, d + PE_PROCESS_PID), tgid = field(ev, len, d + PE_PROCESS_TGID);
	struct procevent e;

	switch (field(ev, len, PE_WHAT_OFFSET)) {
	case PE_EVENT_FORK:
		pid = field(ev, len, d + PE_FORK_CHILD_PID);
		tgid = field(ev, len, d + PE_FORK_CHILD_TGID);
		if (pid != tgid)
			return 0;       /* a new thread of a process */
		e.kind = PROCEVENT_NEW;
		break;
	case PE_EVENT_EXEC:
		e.kind = PROCEVENT_EXEC;
		break;
	case PE_EVENT_UID: case PE_EVENT_GID:
		e.kind = PROCEVENT_IDS;
		break;
	case PE_EVENT_EXIT:
		if (pid != tgid)
			return 0;       /* a thread ended, not the process */
		e.kind = PROCEVENT_EXIT;
		break;
	default:
		return 0;
	}
	if (tgid == 0 || tgid > INT32_MAX)
		return 0;
	e.pid = (pid_t)tgid;
	g->out[g->n++] = e;
	return g->n == g->max;  /* full: the rest of this datagram is dropped (the kernel sends one event in each) */
}

int procevents_read(int fd, struct procevent *out, size_t max)
{
	char buf[8192];
	struct gather g = { out, 0, max };

	/* Bounded by datagrams too: a flood of another sender's messages cannot hold the agent here. */
	for (size_t datagrams = 0; g.n < g.max && datagrams < 2 * max; datagrams++) {
		ssize_t n = receive(fd, buf, sizeof buf);

		if (n < 0)
			return -1;
		if (n == 0) {
			struct pollfd p = { fd, POLLIN, 0 };

			/* Another sender's message was skipped: more may wait behind it. */
			if (poll(&p, 1, 0) == 1 && (p.revents & POLLIN))
				continue;
			break;
		}
		each_event(buf, (size_t)n, gather_one, &g);
	}
	return (int)g.n;
}

void procevents_close(int fd)
{
	if (fd < 0)
		return;
	/* Before 6.6 the kernel counts listeners only by these messages: one LISTEN, one IGNORE. */
	(void)send_op(fd, PE_MCAST_IGNORE, 2);
	close(fd);
}
