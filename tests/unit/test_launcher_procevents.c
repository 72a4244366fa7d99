/*
 * Unit tests of the process events (launcher/policy/procevents.c) on the
 * real kernel: a child's fork, exec and exit come, in that order, and
 * nothing of a thread; a message another socket forges is not read.  As
 * root in the first namespaces (as the suite runs); elsewhere the open
 * must fail with a reason the agent names.
 */
#include <errno.h>
#include <linux/cn_proc.h>
#include <linux/connector.h>
#include <linux/netlink.h>
#include <poll.h>
#include <stddef.h>
#include <pthread.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "policy/procevents.h"
#include "policy/procevents_abi.h"
#include "unit.h"

/* The ABI as procevents_abi.h writes it out, against the kernel's own headers. */
static void test_the_abi_as_written(void)
{
	CHECK(PE_NETLINK_CONNECTOR == NETLINK_CONNECTOR && PE_NLMSG_DONE == NLMSG_DONE);
	CHECK(PE_NLMSG_HDRLEN == NLMSG_HDRLEN && sizeof(struct pe_sockaddr_nl) == sizeof(struct sockaddr_nl));
	CHECK(offsetof(struct pe_sockaddr_nl, pid) == offsetof(struct sockaddr_nl, nl_pid));
	CHECK(offsetof(struct pe_sockaddr_nl, groups) == offsetof(struct sockaddr_nl, nl_groups));
	CHECK(sizeof(struct pe_nlmsghdr) == sizeof(struct nlmsghdr) &&
	      offsetof(struct pe_nlmsghdr, pid) == offsetof(struct nlmsghdr, nlmsg_pid));
	CHECK(sizeof(struct pe_cn_msg) == sizeof(struct cn_msg) &&
	      offsetof(struct pe_cn_msg, len) == offsetof(struct cn_msg, len));
	CHECK(PE_CN_IDX_PROC == CN_IDX_PROC && PE_CN_VAL_PROC == CN_VAL_PROC);
	CHECK(PE_MCAST_LISTEN == PROC_CN_MCAST_LISTEN && PE_MCAST_IGNORE == PROC_CN_MCAST_IGNORE);
	CHECK(PE_WHAT_OFFSET == offsetof(struct proc_event, what) &&
	      PE_DATA_OFFSET == offsetof(struct proc_event, event_data));
	CHECK(PE_EVENT_NONE == PROC_EVENT_NONE && PE_EVENT_FORK == PROC_EVENT_FORK &&
	      PE_EVENT_EXEC == PROC_EVENT_EXEC && PE_EVENT_UID == PROC_EVENT_UID &&
	      PE_EVENT_GID == PROC_EVENT_GID && PE_EVENT_EXIT == PROC_EVENT_EXIT);
	CHECK(PE_DATA_OFFSET + PE_FORK_CHILD_PID == offsetof(struct proc_event, event_data.fork.child_pid));
	CHECK(PE_DATA_OFFSET + PE_FORK_CHILD_TGID == offsetof(struct proc_event, event_data.fork.child_tgid));
	CHECK(PE_DATA_OFFSET + PE_PROCESS_TGID == offsetof(struct proc_event, event_data.exec.process_tgid));
	CHECK(PE_DATA_OFFSET + PE_PROCESS_TGID == offsetof(struct proc_event, event_data.id.process_tgid));
	CHECK(PE_DATA_OFFSET + PE_PROCESS_PID == offsetof(struct proc_event, event_data.exit.process_pid));
	CHECK(PE_DATA_OFFSET + PE_PROCESS_TGID == offsetof(struct proc_event, event_data.exit.process_tgid));
	CHECK(PE_DATA_OFFSET + PE_ACK_ERR == offsetof(struct proc_event, event_data.ack.err));
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* The events of PID (of the kinds asked for) in order, into SEEN, until EXIT or 5 s. */
static int events_of(int fd, pid_t pid, enum procevent_kind *seen, int max, pid_t also, int *also_seen)
{
	struct procevent ev[256];
	int n = 0;

	for (double t0 = now_ms(); now_ms() - t0 < 5000;) {
		struct pollfd p = { fd, POLLIN, 0 };
		int got;

		poll(&p, 1, 100);
		if ((got = procevents_read(fd, ev, 256)) < 0) {
			fprintf(stderr, "  procevents_read: %s\n", strerror(errno));
			return -1;
		}
		for (int i = 0; i < got; i++) {
			*also_seen += also && ev[i].pid == also;
			if (ev[i].pid != pid || n == max)
				continue;
			seen[n++] = ev[i].kind;
			if (ev[i].kind == PROCEVENT_EXIT)
				return n;
		}
	}
	return n;
}

static void *a_thread(void *arg)
{
	*(pid_t *)arg = (pid_t)syscall(SYS_gettid);
	return NULL;
}

static void test_fork_exec_exit(void)
{
	enum procevent_kind seen[8];
	int fd = procevents_open(), go[2], n, thread_seen = 0;
	pid_t pid, tid = 0;
	pthread_t t;

	if (geteuid() != 0) {
		/* Not allowed to listen: refused by the kernel, or (before 6.3, in a namespace) no answer. */
		CHECK(fd < 0 && (errno == EPERM || errno == ETIMEDOUT || errno == EPROTONOSUPPORT));
		return;
	}
	CHECK(fd >= 0);
	if (fd < 0) {
		fprintf(stderr, "  procevents_open: %s\n", strerror(errno));
		return;
	}
	CHECK(pipe(go) == 0);
	if ((pid = fork()) == 0) {
		char c;

		close(go[1]);
		(void)read(go[0], &c, 1);
		execl("/bin/true", "true", (char *)NULL);
		_exit(127);
	}
	/* A thread of ours: a fork of the kernel's kind, but no new process. */
	CHECK(pthread_create(&t, NULL, a_thread, &tid) == 0);
	pthread_join(t, NULL);
	close(go[0]);
	close(go[1]);
	n = events_of(fd, pid, seen, 8, tid, &thread_seen);
	waitpid(pid, NULL, 0);
	CHECK(n == 3);
	CHECK(n >= 1 && seen[0] == PROCEVENT_NEW);
	CHECK(n >= 2 && seen[1] == PROCEVENT_EXEC);
	CHECK(n >= 3 && seen[2] == PROCEVENT_EXIT);
	CHECK(tid > 0 && thread_seen == 0);
	procevents_close(fd);
}

/* A fork event sent by another socket to ours (netlink unicast needs no privilege): not read. */
static void test_a_forged_event_is_not_read(void)
{
	char buf[NLMSG_SPACE(sizeof(struct cn_msg) + sizeof(struct proc_event))] __attribute__((aligned(8)));
	struct sockaddr_nl ours, to = { .nl_family = AF_NETLINK };
	socklen_t len = sizeof ours;
	struct nlmsghdr h = { .nlmsg_len = sizeof buf, .nlmsg_type = NLMSG_DONE };
	struct cn_msg c = { .id = { CN_IDX_PROC, CN_VAL_PROC }, .len = sizeof(struct proc_event) };
	struct proc_event ev = { .what = PROC_EVENT_FORK };
	struct procevent out[16];
	int fd, forger, got;

	if (geteuid() != 0 || (fd = procevents_open()) < 0)
		return;         /* the test above says why */
	ev.event_data.fork.child_pid = ev.event_data.fork.child_tgid = 424242;
	memset(buf, 0, sizeof buf);
	memcpy(buf, &h, sizeof h);
	memcpy(buf + NLMSG_HDRLEN, &c, sizeof c);
	memcpy(buf + NLMSG_HDRLEN + sizeof c, &ev, sizeof ev);
	CHECK(getsockname(fd, (struct sockaddr *)&ours, &len) == 0);
	to.nl_pid = ours.nl_pid;
	forger = socket(AF_NETLINK, SOCK_DGRAM, NETLINK_CONNECTOR);
	CHECK(forger >= 0);
	/* The forgery has arrived: it would be read now if it were. */
	CHECK(sendto(forger, buf, sizeof buf, 0, (struct sockaddr *)&to, sizeof to) == (ssize_t)sizeof buf);
	got = procevents_read(fd, out, 16);
	CHECK(got >= 0);
	for (int i = 0; i < got; i++)
		CHECK(out[i].pid != 424242);
	close(forger);
	procevents_close(fd);
}

int main(void)
{
	static const struct unit_test tests[] = {
		UNIT_TEST(test_the_abi_as_written),
		UNIT_TEST(test_fork_exec_exit),
		UNIT_TEST(test_a_forged_event_is_not_read),
	};

	return unit_run(tests, sizeof tests / sizeof tests[0]);
}
